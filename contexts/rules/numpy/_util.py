"""Helpers shared by the numpy rule modules: undoing broadcasting, matching dtypes, registering
linear functions under both their function and method keys.

Invariant: every cotangent returned by a numpy rule has the shape of its primal and a dtype that
follows the primal's (float32 stays float32, a real primal gets a real cotangent).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np


from overdub.errors import OverdubError

from ..cotangents import Refused
from ..leaves import as_array  # np.asarray, but a dask array is left as it is
from ..generic import is_dual, project, unbroadcast, zeros_like
from ..registry import call_key, registry

_F8 = np.float64

__all__ = ["UnsupportedCase", "unbroadcast", "zeros_like", "sum_to_shape", "add_at", "match_primal", "normalize_axis",
           "register_linear", "tangent_or_zero"]


class UnsupportedCase(OverdubError, NotImplementedError):
    """A numpy rule was reached with arguments it does not differentiate (e.g. eigh with UPLO='U')."""


def unsupported(fn_name: str, case: str, fix: str) -> UnsupportedCase:
    """The error a rule raises for a case it does not cover."""
    return UnsupportedCase(f"the rule for {fn_name} does not differentiate {case}", fix=fix)


def matrix_refused() -> UnsupportedCase:
    """np.matrix met by a rule in any mode: its `*` is a matrix product and its reductions keep two axes,
    where the rules compute elementwise with `*` (a constant B in `a * B` doubled the gradient; np.multiply(X,
    B)'s Jacobian took B's rows)."""
    return unsupported("np.matrix", "arithmetic on a np.matrix of differentiated values (its * is a matrix "
                       "product, which the rules' elementwise products would follow)",
                       "use ndarrays: `np.asarray(m)`, with `@` for the matrix product")


_MASKED = np.ma.MaskedArray
_NOMASK = np.ma.nomask


def masked_entries(v) -> bool:
    """v is a numpy.ma masked array with masked entries."""
    if not isinstance(v, _MASKED):
        return False
    m = v._mask
    return m is not _NOMASK and bool(m.any())


def masked_refused(what: str) -> UnsupportedCase:
    """A masked array with masked entries met by a differentiated computation in any mode: its reductions and
    operators skip those entries, the rules (and forward mode's duals) see every entry — `np.sum(v - obs)` of
    a constant masked `obs` took the masked entry's derivative too (3.16 for 1.76, both modes)."""
    return UnsupportedCase(
        f"{what} on differentiated values meets a numpy.ma masked array with masked entries: the masked array "
        "skips those entries, the derivative would not",
        fix="drop the masked entries first: `obs.filled(0.0)` (or `np.where(obs.mask, 0.0, ...)`) in sums, "
            "`obs.compressed()` or `x[~obs.mask]` to select")


def finalize_refused(cls) -> UnsupportedCase:
    """An ndarray subclass whose `__array_finalize__` or `__array_wrap__` may change the values
    (`registry.changes_values`) holding differentiated values: the rules differentiate the plain operation."""
    return UnsupportedCase(
        f"a {cls.__module__}.{cls.__qualname__} holds differentiated values, and its `__array_finalize__` or "
        "`__array_wrap__` may change the values numpy computes (it is run on every view and result): the "
        "derivative would be the plain operation's",
        fix="compute on plain arrays (`np.asarray(a)`, `a.view(np.ndarray)`), or give the computation a rule "
            "(`@contexts.custom_adjoint`)")


def sum_to_shape(g: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum `g` down to `shape` (the reverse of broadcasting `shape` up to `g.shape`)."""
    g = as_array(g)
    if g.shape == tuple(shape):
        return g
    extra = g.ndim - len(shape)
    if extra > 0:
        g = g.sum(axis=tuple(range(extra)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return as_array(g).reshape(shape)  # a full reduction gives a numpy scalar; keep 0-d arrays arrays




def zeros(shape: tuple, dtype: Any, *written: Any) -> Any:
    """np.zeros(shape, dtype) for a cotangent to be written into; a dual array of zeros when one of the
    values `written` into it is a dual (forward over reverse: a plain array cannot hold it)."""
    for w in written:
        if is_dual(w):
            return np.zeros_like(w, shape=shape)
    return np.zeros(shape, dtype=dtype)


def add_at(shape: tuple, dtype: Any, idx: Any, values: Any) -> np.ndarray:
    """Zeros of `shape` with `values` scattered at `idx`, repeated indices accumulating (np.add.at)."""
    out = np.zeros_like(values, shape=shape) if is_dual(values) else np.zeros(shape, dtype=dtype)
    np.add.at(out, idx, values)
    return out


def may_carry(x: Any) -> bool:
    """x may carry a derivative: a float or complex, or an array or nested list whose dtype is inexact or
    object (Fractions, ufloats, duals: values numpy holds as objects); never ints or bools."""
    if isinstance(x, (float, complex)):
        return True
    return as_array(x).dtype.kind in "fcO"


def match_primal(g: Any, x: Any) -> Any:
    """The cotangent `g` brought to the type of primal `x`: same dtype for arrays (real part for a real
    primal), a Python scalar (sum) for a Python scalar, None stays None."""
    if g is None:
        return None
    tg, tx = type(g), type(x)
    if tg is np.ndarray and tx is np.ndarray:  # (the common case: nothing to change, as the checks below find)
        if g.shape == x.shape and g.dtype == x.dtype and g.dtype.kind == "f":
            return g
    elif tg is float and tx is float:
        return g
    elif tx is _F8 and (tg is _F8 or tg is float):  # (a float64 scalar's, `p[0]`: the general path's
        return _F8(g + 0.0)  # `x.dtype.type(g.sum())` without its arrays; a sum from 0.0 turns -0.0 into 0.0)
    elif tx is float and tg is _F8:  # (the general path's `float(np.sum(g))`)
        return float(g + 0.0)
    if is_dual(g) or is_dual(x):  # forward over reverse: broadcasting undone by the shapes alone
        g = g if np.shape(g) == np.shape(x) else unbroadcast(g, x) if np.ndim(x) else np.sum(g)
        return project(g, x)  # (a real primal: the real part, of the value and the tangent)
    if isinstance(x, np.ndarray):
        g = as_array(g)
        if np.iscomplexobj(g) and not np.iscomplexobj(x):
            g = g.real
        if g.shape != x.shape:
            g = sum_to_shape(g, x.shape)
        if g.dtype != x.dtype and np.issubdtype(x.dtype, np.inexact) and g.dtype.kind != "O":
            g = g.astype(x.dtype, copy=False)  # (object cotangents, e.g. ufloats, stay objects)
        return g
    if isinstance(x, np.generic):
        g = as_array(g)
        if np.iscomplexobj(g) and not np.iscomplexobj(x):
            g = g.real
        return x.dtype.type(g.sum()) if np.issubdtype(x.dtype, np.inexact) else g.sum()[()]
    if isinstance(x, (float, int, complex)) and not isinstance(x, bool):
        if isinstance(g, (np.ndarray, np.generic)):
            # (an ndarray subclass's values as stored: float() of an astropy Quantity would convert its unit)
            total = np.sum(g.view(np.ndarray) if type(g) is not np.ndarray and isinstance(g, np.ndarray) else g)
            if isinstance(x, complex):
                return complex(total)
            return float(total.real if np.iscomplexobj(total) else total)
        return g
    if isinstance(x, (list, tuple)):
        items = (match_primal(gi, xi) for gi, xi in zip(g, x))
        # (a named tuple's class takes its fields one by one: `np.prod(np.linalg.slogdet(a))`'s SlogdetResult)
        return type(x)(*items) if hasattr(type(x), "_fields") else type(x)(items)
    return g


def normalize_axis(axis: Any, ndim: int) -> Any:
    """axis (int, tuple or None) with negative entries made non-negative; None stays None."""
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return tuple(a % ndim if ndim else 0 for a in axis)
    return axis % ndim if ndim else 0


def tangent_or_zero(t: Any, x: Any) -> Any:
    """A tangent where None (structural zero) is replaced by zeros of x's shape."""
    return np.zeros_like(as_array(x)) if t is None else t


def register_linear(keys: Iterable[Any], fn: Callable, transpose: Callable, name: str,
                    n_diff: int = 1) -> None:
    """Register a map linear in its first argument under each key (function or `(type, name)` method key).

    `fn(x, *rest, **kw)` computes it; `transpose(dy, y, x, *rest, **kw)` is the adjoint map, its result
    is brought to x's dtype. Other positional arguments get a None cotangent; the frule applies `fn`
    to the tangent.
    """
    def adjoint(dy, y, x, *rest, **kwargs):
        if type(dy) is Refused:  # (no known derivative: x's is not known either; raises where used)
            return (dy,) + (None,) * len(rest)
        return (match_primal(transpose(dy, y, x, *rest, **kwargs), x),) + (None,) * len(rest)

    def frule(tangents, x, *rest, **kwargs):
        y = fn(x, *rest, **kwargs)
        t = tangents[0] if tangents else None
        return y, (None if t is None else fn(t, *rest, **kwargs))

    adjoint.__name__ = adjoint.__qualname__ = f"{name}_adjoint"
    frule.__name__ = frule.__qualname__ = f"{name}_frule"
    for key in keys:
        registry.adjoint(key, kind="linear")(adjoint)
        registry.frule(key, kind="linear")(frule)


def method_caller(name: str) -> Callable:
    """`f(x, *args, **kw) = x.<name>(*args, **kw)`, for applying a method to a tangent array."""
    def call(x, *args, **kwargs):
        return getattr(as_array(x) if not hasattr(x, name) else x, name)(*args, **kwargs)
    call.__name__ = call.__qualname__ = f"ndarray_{name}"
    return call


_ = call_key  # re-exported for rule modules that apply a key to tangents


def bind(args, kwargs, names, defaults):
    """Values of optional parameters given positionally (args) or by keyword."""
    values = list(defaults)
    for j, v in enumerate(args[: len(names)]):
        values[j] = v
    for j, name in enumerate(names):
        if name in kwargs:
            values[j] = kwargs[name]
    return values
