"""Sparsity rules (`srule`) in the shared registry: numpy ufuncs and functions, `math`, builtins.

A rule receives the call's arguments (some of them tracers) and returns a tracer. Most are one line on
top of the three moves in `tracer.py`: elementwise functions name which partials can be nonzero (`Spec`),
shape functions apply themselves to index arrays (`restructure`), reductions name their axis (`reduce`).
Functions without a rule fall back on what their `kind` implies (see `ops.derive`).
"""

from __future__ import annotations

import builtins
import functools
import inspect
import math

import numpy as np

from contexts.rules.registry import registry

from . import ops
from .moves import LINEAR, NONDIFF, Spec, _H, _P, as_tracer, constant_tracer, elementwise, reduce, restructure
from .pattern import Pattern
from .tracer import IndexTracer, NoSparsityRule, Tracer, _index_map, _shape, user_site

__all__ = ["SPECS", "CONSTRUCTORS", "ALWAYS", "ufunc_at"]

# -- elementwise specs -------------------------------------------------------------------------------------


def _mul_select(args, primals, shape):
    """x * c with a constant c: no dependency where c is exactly zero."""
    masks = [None, None]
    for i, j in ((0, 1), (1, 0)):
        other = args[j]
        if (not isinstance(other, Tracer) or other.is_constant) and primals[j] is not None:
            masks[i] = np.broadcast_to(np.asarray(primals[j]) != 0, shape)
    return None if masks[0] is None and masks[1] is None else masks


def _minmax_select(greater: bool):
    def select(args, primals, shape):
        a, b = primals
        if a is None or b is None:
            return None
        first = np.broadcast_to(np.asarray(a >= b if greater else a <= b), shape)
        return [first, ~first]
    return select


NONLINEAR = Spec()
SPECS: dict = {
    np.add: LINEAR, np.subtract: LINEAR, np.negative: LINEAR, np.positive: LINEAR,
    np.conjugate: LINEAR, np.deg2rad: LINEAR, np.rad2deg: LINEAR, np.radians: LINEAR, np.degrees: LINEAR,
    np.absolute: LINEAR, np.fabs: LINEAR,                      # second derivative zero almost everywhere
    np.multiply: Spec(second=frozenset({(0, 1)}), select=_mul_select),
    np.true_divide: Spec(second=frozenset({(0, 1), (1, 1)})),
    np.remainder: LINEAR, np.fmod: LINEAR,
    np.copysign: Spec(first=(True, False), second="none"),
    np.ldexp: Spec(first=(True, False), second="none"),
    np.maximum: Spec(second="none", select=_minmax_select(True)),
    np.fmax: Spec(second="none", select=_minmax_select(True)),
    np.minimum: Spec(second="none", select=_minmax_select(False)),
    np.fmin: Spec(second="none", select=_minmax_select(False)),
}
_NONDIFF_UFUNCS = (
    np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal, np.logical_and,
    np.logical_or, np.logical_xor, np.logical_not, np.isnan, np.isinf, np.isfinite, np.signbit, np.sign,
    np.floor, np.ceil, np.trunc, np.rint, np.floor_divide, np.heaviside, np.spacing, np.bitwise_and,
    np.bitwise_or, np.bitwise_xor, np.invert)
SPECS.update({u: NONDIFF for u in _NONDIFF_UFUNCS})


def _register_elementwise(fn, spec: Spec) -> None:
    def srule(*args, **kwargs):
        return elementwise(fn, spec, args, kwargs)
    srule.__name__ = srule.__qualname__ = f"{getattr(fn, '__name__', 'fn')}_srule"
    registry.srule(fn)(srule)
    registry.get(fn).meta["sparsity_spec"] = spec


for _ufunc, _spec in SPECS.items():
    _register_elementwise(_ufunc, _spec)

# -- math / builtins scalars -------------------------------------------------------------------------------

_MATH_NONLINEAR = ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
                   "atanh", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "cbrt",
                   "erf", "erfc", "gamma", "lgamma", "pow", "atan2", "hypot")
for _name in _MATH_NONLINEAR:
    if hasattr(math, _name):
        _register_elementwise(getattr(math, _name), NONLINEAR)
for _fn in (math.fabs, math.degrees, math.radians, math.fmod, builtins.abs):
    _register_elementwise(_fn, LINEAR)
_register_elementwise(math.copysign, SPECS[np.copysign])
_register_elementwise(builtins.pow, NONLINEAR)


def _concrete_call(fn):
    """A piecewise-constant function of a traced value: its value is needed, its derivative is zero."""
    def srule(*args, **kwargs):
        return fn(*(as_tracer(a)._concrete(f"{fn.__name__}()") if isinstance(a, Tracer) else a
                    for a in args), **kwargs)
    srule.__name__ = srule.__qualname__ = f"{fn.__name__}_srule"
    registry.srule(fn)(srule)


for _fn in (math.floor, math.ceil, math.trunc, math.isnan, math.isinf, math.isfinite, builtins.int,
            builtins.round, builtins.bool):
    _concrete_call(_fn)


@registry.srule(builtins.float, builtins.complex)
def float_srule(x=0.0, *rest):
    """float(t) keeps the tracer (a conversion does not change dependencies)."""
    return x if isinstance(x, Tracer) else float(x)


def _fold(select_fn, reduce_kind):
    def srule(*args, key=None, **kwargs):
        if key is not None:  # compares by key: needs the values
            return getattr(builtins, reduce_kind)(*(_concrete_all(a) for a in args), key=key, **kwargs)
        if len(args) == 1:
            (items,) = args
            if isinstance(items, Tracer):
                return reduce(items, 0, False, reduce_kind, getattr(np, reduce_kind))
            items = list(items)
        else:
            items = list(args)
        return functools.reduce(select_fn, items)
    srule.__name__ = srule.__qualname__ = f"{reduce_kind}_srule"
    return srule


def _concrete_all(x):
    return as_tracer(x)._concrete("max/min with key=") if isinstance(x, Tracer) else x


registry.srule(builtins.max)(_fold(np.maximum, "max"))
registry.srule(builtins.min)(_fold(np.minimum, "min"))


@registry.srule(builtins.sum, math.fsum)
def sum_srule(items, start=0):
    if isinstance(items, Tracer):
        return reduce(items, 0, False, True, np.sum) + start
    total = start
    for item in items:
        total = total + item
    return total


@registry.srule(math.prod)
def prod_srule(items, *, start=1):
    total = start
    for item in items:
        total = total * item
    return total


# -- numpy reductions ---------------------------------------------------------------------------------------


def _reduction(fn, linear):
    def srule(a, axis=None, *args, keepdims=False, **kwargs):
        if not isinstance(a, Tracer):
            a = ops.array(a)
            if not isinstance(a, Tracer):
                return fn(a, axis, *args, keepdims=keepdims, **kwargs)
        return reduce(a, axis, keepdims, linear,
                      lambda p, axis, keepdims: fn(p, axis=axis, keepdims=keepdims, **kwargs))
    srule.__name__ = srule.__qualname__ = f"{fn.__name__}_srule"
    registry.srule(fn)(srule)


for _fn, _linear in ((np.sum, True), (np.mean, True), (np.nansum, True), (np.nanmean, True),
                     (np.prod, "prod"), (np.max, "max"), (np.min, "min"), (np.amax, "max"),
                     (np.amin, "min"), (np.nanmax, "max"), (np.nanmin, "min"), (np.std, False),
                     (np.var, False)):
    _reduction(_fn, _linear)


def _nan_reduction(fn, linear):
    """nan-skipping reductions: numpy's own code takes the scalar path for a non-ndarray (it would drop
    the tracer), so they get rules; skipping NaNs only removes dependencies, so the plain pattern is sound."""
    def srule(a, axis=None, *args, keepdims=False, **kwargs):
        a = as_tracer(a)
        return reduce(a, axis, keepdims, linear,
                      lambda p, axis, keepdims: fn(p, axis=axis, keepdims=keepdims, **kwargs))
    srule.__name__ = srule.__qualname__ = f"{fn.__name__}_srule"
    registry.srule(fn)(srule)


for _fn, _linear in ((np.nanstd, False), (np.nanvar, False), (np.nanprod, "prod")):
    _nan_reduction(_fn, _linear)


def _order_statistic(fn):
    """median, percentile, quantile (and nan-): conservative along the axis (which elements are picked
    depends on the values; numpy's code branches on them); piecewise linear, so no second-order pairs.
    Several q give a leading axis."""
    signature = inspect.signature(fn)

    def srule(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        a = as_tracer(bound.arguments["a"])
        axis, keepdims = bound.arguments.get("axis"), bool(bound.arguments.get("keepdims", False))
        if bound.arguments.get("out") is not None or "weights" in bound.arguments:
            return ops.dense(fn, args, kwargs, linear=True)
        red = reduce(a, axis, keepdims, True, lambda p, axis, keepdims: p)
        q = bound.arguments.get("q")
        lead = np.shape(q.primal if isinstance(q, Tracer) else q) if q is not None else ()
        out = restructure([red], lambda i: np.broadcast_to(i, lead + i.shape))
        primals = ops._known_primals(args) if all(not isinstance(v, Tracer) or v.primal is not None
                                                  for v in kwargs.values()) else None
        out.primal = None if primals is None else fn(*primals, **{k: v.primal if isinstance(v, Tracer) else v
                                                                   for k, v in kwargs.items()})
        return out
    srule.__name__ = srule.__qualname__ = f"{fn.__name__}_srule"
    registry.srule(fn)(srule)


for _fn in (np.median, np.percentile, np.quantile, np.nanmedian, np.nanpercentile, np.nanquantile):
    _order_statistic(_fn)


@registry.srule(np.nancumsum)
def nancumsum_srule(a, axis=None, dtype=None, out=None):
    return ops.cumulative(a, axis, True, np.nancumsum)


@registry.srule(np.nancumprod)
def nancumprod_srule(a, axis=None, dtype=None, out=None):
    return ops.cumulative(a, axis, False, np.nancumprod)


@registry.srule(np.linalg.norm)
def norm_srule(x, ord=None, axis=None, keepdims=False):
    x = as_tracer(x)
    if axis is None and x.ndim == 2 and ord not in (None, "fro"):
        return ops.dense(np.linalg.norm, (x,), {"ord": ord})
    if ord in (np.inf, -np.inf):  # the largest (smallest) |x|: local mode picks it by |x|, not x
        return reduce(np.abs(x), axis, keepdims, "max" if ord == np.inf else "min",
                      lambda p, axis, keepdims: np.max(p, axis, keepdims=keepdims) if ord == np.inf
                      else np.min(p, axis, keepdims=keepdims))
    return reduce(x, axis, keepdims, False,
                  lambda p, axis, keepdims: np.linalg.norm(p, ord, axis, keepdims))


@registry.srule(np.cumsum)
def cumsum_srule(a, axis=None, dtype=None, out=None):
    return ops.cumulative(a, axis, True, np.cumsum)


@registry.srule(np.cumprod)
def cumprod_srule(a, axis=None, dtype=None, out=None):
    return ops.cumulative(a, axis, False, np.cumprod)


@registry.srule(np.trace)
def trace_srule(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return reduce(as_tracer(a).diagonal(offset, axis1, axis2), -1, False, True, np.sum)


# -- shapes and indexing ------------------------------------------------------------------------------------


def _structural(fn, name=None):
    """fn(a, *args, **kwargs) only moves elements of a: apply it to index arrays."""
    def srule(a, *args, **kwargs):
        return restructure([a], lambda i: fn(i, *args, **kwargs))
    srule.__name__ = srule.__qualname__ = f"{name or fn.__name__}_srule"
    registry.srule(fn)(srule)


for _fn in (np.reshape, np.ravel, np.transpose, np.swapaxes, np.moveaxis, np.squeeze, np.expand_dims,
            np.broadcast_to, np.flip, np.fliplr, np.flipud, np.roll, np.rot90, np.atleast_1d,
            np.atleast_2d, np.atleast_3d, np.diag, np.diagonal, np.tile, np.repeat,
            np.real, np.copy, np.ascontiguousarray, np.asfortranarray, np.matrix_transpose
            if hasattr(np, "matrix_transpose") else np.transpose):
    _structural(_fn)


@registry.srule(np.take)
def take_srule(a, indices, axis=None, **kw):
    return as_tracer(a).take(indices, axis)


def _triangle(fn):
    def srule(m, k=0):
        return restructure([m], lambda i: np.where(fn(np.ones(i.shape, bool), k), i, -1),
                           lambda p: fn(p, k))
    srule.__name__ = srule.__qualname__ = f"{fn.__name__}_srule"
    registry.srule(fn)(srule)


_triangle(np.triu)
_triangle(np.tril)


@registry.srule(np.concatenate)
def concatenate_srule(arrays, axis=0, out=None, **kw):
    return ops.concatenate(arrays, axis)


@registry.srule(np.stack)
def stack_srule(arrays, axis=0, out=None, **kw):
    return ops.stack(arrays, axis)


@registry.srule(np.hstack)
def hstack_srule(tup, **kw):
    arrays = [np.atleast_1d(a) for a in tup]
    return ops.concatenate(arrays, 0 if _shape(arrays[0]) and len(_shape(arrays[0])) == 1 else 1)


@registry.srule(np.vstack, np.row_stack if hasattr(np, "row_stack") else np.vstack)
def vstack_srule(tup, **kw):
    return ops.concatenate([np.atleast_2d(a) for a in tup], 0)


@registry.srule(np.column_stack)
def column_stack_srule(tup):
    arrays = [a if len(_shape(a)) >= 2 else np.reshape(a, (-1, 1)) for a in tup]
    return ops.concatenate(arrays, 1)


@registry.srule(np.append)
def append_srule(arr, values, axis=None):
    return ops.concatenate([arr, values], axis)


registry.srule(np.where)(ops.where)
registry.srule(np.clip)(ops.clip)
registry.srule(np.diff)(ops.diff)
registry.srule(np.pad)(ops.pad)


@registry.srule(np.dot, np.matmul)
def dot_srule(a, b, out=None):
    if len(_shape(a)) > 2 or len(_shape(b)) > 2:
        return ops.dense(np.dot, (a, b), {})
    return ops.matmul(a, b)


@registry.srule(np.inner)
def inner_srule(a, b):
    """Sum over the last axes of both: a @ b.T for matrices (not a @ b)."""
    if len(_shape(a)) > 2 or len(_shape(b)) > 2:
        return ops.dense(np.inner, (a, b), {})
    if len(_shape(b)) == 2:
        b = as_tracer(b).T
    return ops.matmul(a, b)


@registry.srule(np.outer)
def outer_srule(a, b, out=None):
    return np.multiply(np.ravel(a)[:, None] if not isinstance(a, Tracer) else a.ravel()[:, None],
                       np.ravel(b)[None, :] if not isinstance(b, Tracer) else b.ravel()[None, :])


@registry.srule(np.vdot)
def vdot_srule(a, b):
    return ops.matmul(np.ravel(a) if not isinstance(a, Tracer) else a.ravel(),
                      np.ravel(b) if not isinstance(b, Tracer) else b.ravel())


for _fn in (np.linalg.solve, np.linalg.inv, np.linalg.det, np.linalg.pinv, np.linalg.eigvalsh,
            np.linalg.cholesky, np.linalg.svd, np.linalg.eigh, np.linalg.eig, np.linalg.eigvals,
            np.linalg.qr, np.linalg.slogdet, np.linalg.lstsq):  # (tuples: every output dense)
    registry.srule(_fn)(functools.partial(lambda fn, *a, **k: ops.dense(fn, a, k), _fn))


@registry.srule(np.shape)
def shape_srule(a):
    return _shape(a)


@registry.srule(np.ndim)
def ndim_srule(a):
    return len(_shape(a))


@registry.srule(np.size)
def size_srule(a, axis=None):
    return as_tracer(a).size if axis is None else _shape(a)[axis]


@registry.srule(np.result_type)
def result_type_srule(*args):
    return np.result_type(*(a.dtype if isinstance(a, Tracer) else a for a in args))


registry.srule(np.iscomplexobj)(lambda x: False if isinstance(x, Tracer) else np.iscomplexobj(x))
registry.srule(np.isrealobj)(lambda x: True if isinstance(x, Tracer) else np.isrealobj(x))
registry.srule(np.isscalar)(lambda x: False if isinstance(x, Tracer) else np.isscalar(x))

def _indices(fn):
    """Integer results computed from traced values (argsort, argmax): no dependencies; in global mode
    of unknown value (an `IndexTracer`: indexing with it is conservative)."""
    def srule(*args, **kwargs):
        primals = ops._known_primals(args)
        if primals is not None:
            return fn(*primals, **{k: v.primal if isinstance(v, Tracer) else v for k, v in kwargs.items()})
        return IndexTracer(ops.probe_shape(fn, args, kwargs), None)
    srule.__name__ = srule.__qualname__ = f"{fn.__name__}_srule"
    registry.srule(fn)(srule)


for _fn in (np.argsort, np.argmax, np.argmin, np.argpartition, np.nanargmax, np.nanargmin, np.searchsorted,
            np.digitize):
    _indices(_fn)


@registry.srule(np.take_along_axis)
def take_along_axis_srule(arr, indices, axis=-1):
    if isinstance(indices, Tracer) and indices.primal is None:
        # unknown positions along axis: an element may be any element of its line
        line = reduce(as_tracer(arr), axis, True, True, lambda p, axis, keepdims: p)
        return restructure([line], lambda i: np.broadcast_to(i, _shape(indices)) if axis is not None
                           else np.broadcast_to(i.reshape(()), _shape(indices)))
    if isinstance(indices, Tracer):
        indices = indices.primal
    return restructure([arr], lambda i: np.take_along_axis(i, indices, axis))


@registry.srule(np.partition)
def partition_srule(a, kth, axis=-1, kind="introselect", order=None):
    """Conservative along axis in both modes: the order of the elements around kth is numpy's choice."""
    a = as_tracer(a)
    if axis is None:
        a, axis = a.ravel(), 0
    primal = None if a.primal is None else np.partition(a.primal, kth, axis=axis)
    return ops.along_axis(a, axis, True, primal)


@registry.srule(np.sort)
def sort_srule(a, axis=-1, kind=None, order=None, **kw):
    a = as_tracer(a)
    if axis is None:
        a, axis = a.ravel(), 0
    if a.primal is not None:  # local: the permutation taken here
        return ops.take_along(a, np.argsort(a.primal, axis=axis, kind=kind), axis)
    return ops.along_axis(a, axis, True)


registry.srule(np.round, np.around)(
    lambda a, decimals=0, out=None: elementwise(np.round, NONDIFF, (a,), {"decimals": decimals}))
registry.srule(np.nan_to_num)(
    lambda x, copy=True, nan=0.0, posinf=None, neginf=None: elementwise(np.nan_to_num, LINEAR, (x,)))


@registry.srule(np.broadcast_arrays)
def broadcast_arrays_srule(*args, subok=False):
    shape = np.broadcast_shapes(*(_shape(a) for a in args))
    return tuple(restructure([a], lambda i: np.broadcast_to(i, shape)) for a in args)


for _fn in (np.einsum, np.interp, np.convolve, np.correlate, np.kron, np.tensordot):
    registry.srule(_fn)(functools.partial(lambda fn, *a, **k: ops.dense(fn, a, k), _fn))

try:
    import scipy.special as _sc
except ImportError:  # pragma: no cover
    _sc = None
if _sc is not None:
    @registry.srule(_sc.logsumexp)
    def logsumexp_srule(a, axis=None, b=None, keepdims=False, return_sign=False):
        t = as_tracer(a) if b is None else np.exp(a) * b
        primals = ops._known_primals((a, b)) if b is not None else ops._known_primals((a,))
        y = None if primals is None else _sc.logsumexp(*primals[:1], axis=axis, b=b if b is None else
                                                        primals[1], keepdims=keepdims)
        out = reduce(t, axis, keepdims, False, lambda p, axis, keepdims: np.sum(p, axis, keepdims=keepdims))
        out.primal = y
        return (out, np.sign(y) if y is not None else 1.0) if return_sign else out

    def _softmax_like(fn):
        def srule(x, axis=None):
            x = as_tracer(x)
            return ops.along_axis(x, axis, False, None if x.primal is None else fn(x.primal, axis=axis))
        srule.__name__ = srule.__qualname__ = f"{fn.__name__}_srule"
        registry.srule(fn)(srule)

    _softmax_like(_sc.softmax)
    _softmax_like(_sc.log_softmax)

# -- construction: arrays built inside the function become tracers, so they can take traced values -----

registry.srule(np.array)(ops.array)
registry.srule(np.asarray, np.asanyarray)(lambda a, dtype=None, *args, **kw: ops.array(a, dtype, copy=False))

for _fn, _fill in ((np.zeros_like, np.zeros), (np.ones_like, np.ones), (np.empty_like, np.zeros),
                   (np.full_like, np.full)):
    registry.srule(_fn)(ops._like(_fill))


def _constructor(fn):
    def srule(*args, **kwargs):
        return constant_tracer(fn(*args, **kwargs))
    srule.__name__ = srule.__qualname__ = f"{fn.__name__}_srule"
    registry.srule(fn)(srule)


for _fn in (np.zeros, np.ones, np.empty, np.full):
    _constructor(_fn)

CONSTRUCTORS = frozenset({np.zeros, np.ones, np.empty, np.full})
"""Rules the context applies even when no argument is a tracer."""
ALWAYS = CONSTRUCTORS


# -- ufunc.at: unbuffered in-place updates (np.add.at(acc, idx, vals)) ------------------------------------

def ufunc_at(ufunc: np.ufunc, a: Any, indices: Any, b: Any = None) -> None:
    """`ufunc.at(a, indices, b)` on a tracer a: each indexed element of a (repeated indices each time)
    depends on what it did and on the b elements updating it. Second order: linear ufuncs only."""
    traced_b = isinstance(b, Tracer) and not b.is_constant
    if not isinstance(a, Tracer):
        if traced_b:
            raise NoSparsityRule(f"{ufunc.__name__}.at writes traced values into a plain array",
                                 where=user_site(3),
                                 fix="allocate it with np.zeros/np.empty inside the traced function")
        ufunc.at(a, indices, *(() if b is None else (b.primal if isinstance(b, Tracer) else b,)))
        return None
    positions = np.asarray(_index_map(a.shape)[indices]).ravel()
    n = next((t.P.ncols for t in (a, b) if isinstance(t, Tracer) and t.P is not None), None)
    if n is not None and b is not None:
        pos_shape = np.asarray(_index_map(a.shape)[indices]).shape
        src = np.broadcast_to(_index_map(_shape(b)), pos_shape).ravel()
        rows = np.arange(a.size, dtype=np.int64)
        out_rows = np.concatenate([rows, positions])
        src_rows = np.concatenate([rows, a.size + np.arange(positions.size, dtype=np.int64)])
        order = max(a.order, b.order if isinstance(b, Tracer) else 0)
        a.P = Pattern.vstack([_P(a, n), _P(b, n).gather(src)]).combine(out_rows, src_rows, a.size)
        if order == 2:
            if ufunc not in (np.add, np.subtract):
                raise NoSparsityRule(f"no second-order sparsity rule for {ufunc.__name__}.at",
                                     where=user_site(3), fix="use a linear update (np.add.at) or dense")
            a.H = Pattern.vstack([_H(a, n), _H(b, n).gather(src)]).combine(out_rows, src_rows, a.size)
        a.order = order
    bp = None if b is None else (b.primal if isinstance(b, Tracer) else b)
    if a.primal is not None and (b is None or bp is not None):
        new = np.array(a.primal, copy=True)
        ufunc.at(new, indices, *(() if b is None else (bp,)))
        a.primal = new
    else:
        a.primal = None
    return None

