"""numpy.ma's masked arrays in reverse mode: their own Python code, and ufuncs' rules on the data.

A masked array is an ndarray subclass of Python code: its data (the array's own memory, every entry, masked
or not) and a mask beside it. numpy.ma computes on the data with plain numpy (`np.ma.multiply` is
`np.multiply(getdata(a), getdata(b))`, the masked entries' data then reset to the first operand's by
`np.copyto(..., where=mask)`), and its reductions skip the masked entries by filling them first
(`a.sum()` is `a.filled(0).sum()`). The engine differentiates that code as any code: the class's
constructor, its methods, its operators (re-run as code in the reverse pass, `helpers.binop_adj`) and
numpy's Python functions that hand a masked array to its own method (`np.sum(a)` is `a.sum()`,
`registry.own_method_form`). Every primitive they call is given the plain data view, where the rules hold.

Two primitives meet the masked array itself:
- a ufunc called on one (`np.exp(a)`, or `np.log(a)` whose `__array_wrap__` replaces the data outside the
  domain with a constant fill, and masks them): its rule on the plain views, with no cotangent through the
  entries `__array_wrap__` replaced (`masked_ufunc_pullback`; the data it kept is the ufunc's own);
- `ndarray.view(x, MaskedArray)` (numpy.ma's wrapping of a result): the same memory, the cotangent passed
  through as a plain array.

numpy's conversions (`np.asarray(a)`: its data) and the builtins that only hold or ask about it (`getattr`,
`list.append`) take it as it is (`takes_data`). A C function that runs its Python operators (the operator
module's, `pow`, `abs`: `computes_by_its_code`) or iterates it (`sum(a)`: masked items) is refused, masked
entries or not; any other primitive given one with masked entries is refused as before
(`_util.masked_refused`): a C function handed one computes on all its data, or calls its Python methods
unrecorded (the rule would take `np.sum(a)`'s skipped entries for summed ones). `var` runs as numpy.ma's
code with its in-place square written as a product (`masked_var`); in-place operators are refused. Invariant: no rule's
adjoint sees a masked array, and no cotangent is one (its arithmetic would skip the masked entries).
Forward mode's duals hold no mask: it refuses (`forward.dual`), and `derivative`/`jacfwd` answer by reverse
mode where it refused.
"""

from __future__ import annotations

import numpy as np

from ..registry import registry
from ._util import masked_refused

__all__ = ["masked_ufunc_pullback", "plain_data"]

_MASKED = np.ma.MaskedArray
_VIEW = np.ndarray.view
_NDARRAY = np.ndarray


def plain_data(v):
    """A masked array's data as a plain ndarray view (the same memory); anything else as it is."""
    return _VIEW(v, _NDARRAY) if isinstance(v, _MASKED) else v


def masked_ufunc_pullback(ufunc, adjoint, y, full, kw):
    """(adjoint, plain y, plain arguments) for a ufunc called with a masked array among its arguments:
    the ufunc's plain rule on the data views, with the cotangent of every entry whose data the masked
    array's `__array_wrap__` replaced (`np.log(a)` at a data entry <= 0: a constant fill) taken as zero.
    Refused for a ufunc writing into `out=` (the data it wrote is the masked array's, the fill too)."""
    if kw.get("out") is not None:
        raise masked_refused(f"`np.{ufunc.__name__}(..., out=...)`")
    plain = tuple(plain_data(a) for a in full)
    plain_kw = {k: plain_data(v) for k, v in kw.items()}
    with np.errstate(all="ignore"):
        yp = ufunc(*plain, **plain_kw)
    if type(yp) is tuple or type(y) is tuple:  # (a ufunc of two results, np.modf, np.frexp)
        raise masked_refused(f"`np.{ufunc.__name__}`")
    yd = plain_data(y)
    if np.shape(yd) != np.shape(yp):
        raise masked_refused(f"`np.{ufunc.__name__}`")
    # the entries `__array_wrap__` kept: the ufunc's own values (NaN where both are NaN)
    with np.errstate(invalid="ignore"):
        kept = (yd == yp) | ((yd != yd) & (yp != yp))
    replaced = None if np.all(kept) else ~np.asarray(kept)

    def masked_adjoint(dy, y_, *args, **kwargs):
        dy = plain_data(dy)
        return adjoint(dy if replaced is None else np.where(replaced, 0, dy), yp, *args, **kwargs)
    return masked_adjoint, yp, plain


# numpy's functions that take a masked array's data as plain values (its every entry, the mask dropped), or
# ask of its kind: their rules hold on it
_DATA_FUNCTIONS = frozenset(map(id, (np.asarray, np.array, np.asanyarray, np.ascontiguousarray, np.copy,
                                     np.shape, np.ndim, np.size, np.result_type, np.may_share_memory,
                                     np.shares_memory, np.iscomplexobj, np.isrealobj, np.isscalar,
                                     np.iterable,
                                     # (layout only: the data's entries move as the mask's do, `asanyarray`
                                     # keeping the class; the cotangent moves back as the data's)
                                     np.atleast_1d, np.atleast_2d, np.atleast_3d, np.expand_dims, np.moveaxis)))
# an ndarray's own methods numpy.ma calls on a masked array (`ndarray.view(self, ...)`): the same data
_DATA_METHODS = frozenset({"view", "__array__", "__array_finalize__", "astype"})
# Python's builtins that hold or ask about an object without computing with its values
_HOLDING = frozenset(map(id, (getattr, setattr, hasattr, isinstance, issubclass, type, id, len, repr, str,
                              hash, callable)))
_CONTAINERS = (list, dict, tuple, set)
# Python's builtins that hand its items on one by one (by its `__getitem__`: a masked item is numpy.ma's
# `masked`, whose arithmetic is numpy.ma's code), computing nothing with them (not `sum(a)`: refused)
_YIELDING = frozenset(map(id, (iter, list, tuple, zip, enumerate, reversed)))


def takes_data(f, is_method: bool) -> bool:
    """A primitive given a masked array (with masked entries or not) whose rule holds on it: numpy's
    conversions (`np.asarray(a)` is its data, every entry), ndarray's view, and the builtins that hold it
    or ask about it without computing with its values (`getattr`, `isinstance`, `list.append`). Not
    `operator.mul(a, x)` or `pow(a, 0.5)`, which run its Python operators (masking a domain's entries) where
    the rule would take the plain product (1.4 for 1), nor `sum(a)`, iterating it by its `__getitem__`
    (masked items). The caller refuses those, and numpy's other functions of C given one with masked
    entries (they compute on all its data, or call its Python methods unrecorded)."""
    if id(f) in _YIELDING:
        return True
    if is_method:
        own = getattr(f, "__self__", None)
        if isinstance(own, np.ndarray):
            return f.__name__ in _DATA_METHODS
        return type(own) in _CONTAINERS
    return id(f) in _DATA_FUNCTIONS or id(f) in _HOLDING


def computes_by_its_code(f) -> bool:
    """f, a C function with a rule, hands a masked array to its Python methods (the operator module's
    functions, `pow`, `abs`, `round`, `divmod`: numpy.ma's operators, its domains' masks), whose values the
    rule's plain formula does not follow even with no entry masked yet (`operator.truediv(a, 0.0)` masks)."""
    module = getattr(f, "__module__", None) or ""
    return module in ("operator", "_operator") or id(f) in _BY_DUNDER


_BY_DUNDER = frozenset(map(id, (pow, abs, round, divmod)))


def masked_var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=np._NoValue, mean=np._NoValue):
    """`MaskedArray.var` as numpy.ma computes it, its in-place square (`danom *= danom`, refused: the
    data changed through `_data`'s view) written as a product; `out=` refused."""
    if out is not None:
        raise masked_refused("`MaskedArray.var(..., out=...)`")
    kwargs = {}
    if keepdims is not np._NoValue:
        kwargs["keepdims"] = keepdims
    if self._mask is np.ma.nomask:
        if mean is not np._NoValue:
            kwargs["mean"] = mean
        return np.var(np.ndarray.view(self, np.ndarray), axis=axis, dtype=dtype, ddof=ddof, **kwargs)
    cnt = self.count(axis=axis, **kwargs) - ddof
    if mean is not np._NoValue:
        danom = self - mean
    else:
        danom = self - self.mean(axis, dtype, keepdims=True)
    if np.iscomplexobj(self):
        danom = np.ma.absolute(danom) ** 2
    else:
        danom = danom * danom
    dvar = np.ma.divide(danom.sum(axis, **kwargs), cnt).view(type(self))
    if dvar.ndim:
        dvar._mask = np.ma.mask_or(self._mask.all(axis, **kwargs), (cnt <= 0))
        dvar._update_from(self)
    elif np.ma.getmask(dvar):
        dvar = np.ma.masked
    return dvar


def _inplace_refused(self, other):
    """A masked array's in-place operator: refused (numpy.ma changes the data through a view of it,
    `self._data.__imul__(...)`, which reverse mode does not follow)."""
    raise masked_refused("an in-place operator (`a *= b`, `a += b`)")


registry.set(_MASKED.var, stand_in=masked_var)
for _name in ("__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__ipow__"):
    registry.set(getattr(_MASKED, _name), stand_in=_inplace_refused)
