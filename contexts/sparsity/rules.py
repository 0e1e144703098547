"""The sparsity rules that are code on tracers (`srule`s in the shared registry).

Most primitives' sparsity is data, declared beside their derivatives in the domain files of
`contexts/rules` (`registry.sparsity(LINEAR, np.add)`, interpreted by `interpret.py`). The ones here take
apart their arguments in ways a spec cannot say: Python iterables of tracers (`sum`, `max`), several
arrays joined (`np.concatenate`), a selection taken at the point in local mode (`np.sort`), a reduction
of a derived array (`np.trace`, `logsumexp`), answers about shapes and types (`np.shape`). Each domain
file declares them `Custom("rules.py: ...")`, so that a reader of `contexts/rules` sees where they are;
`tests/contexts/sparsity/test_specs.py` checks the two agree. Functions with neither fall back on what
their `kind` implies (see `ops.derive`).
"""

from __future__ import annotations

import builtins
import cmath
import functools
import inspect
import math

import numpy as np

import overdub
from contexts.rules.registry import registry
from contexts.rules.numpy.inplace import refuse_read_only_at

from contexts.rules.sparsity_specs import LINEAR, NONDIFF, NONLINEAR, Elementwise

from . import ops
from .moves import _H, _P, as_tracer, elementwise, reduce, restructure
from .pattern import Pattern
from .tracer import NoSparsityRule, Tracer, _index_map, _shape, user_site

__all__ = ["ufunc_at"]

# -- builtins and math: a tracer, or Python values holding tracers ---------------------------------------


def _converted(x, kind):
    """kind(t) of a tracer: its dependencies, its primal (where known) the Python number kind makes of it (`type(s)
    is float` of `s = float(x.sum())` was a numpy scalar's answer, False, in local mode: sp42 W10)."""
    if x.primal is None or x.size != 1:
        return x
    return Tracer((), x.P, x.H, kind(np.asarray(x.primal).reshape(-1)[0]), x.order)


@registry.srule(builtins.float)
def float_srule(x=0.0):
    """float(t) keeps the tracer's dependencies (a conversion does not change them)."""
    return _converted(x, float) if isinstance(x, Tracer) else float(x)


@registry.srule(builtins.complex)
def complex_srule(x=0.0, *rest):
    """complex(t) as float(t); complex(a, b) is a + b * 1j (its imaginary part is b's)."""
    if rest:
        return x + rest[0] * 1j
    return _converted(x, complex) if isinstance(x, Tracer) else complex(x)


def _fold(select_fn, reduce_kind):
    def srule(*args, key=None, **kwargs):
        if key is not None:  # compares the keys (on tracers: local mode has their values, global refuses)
            return getattr(builtins, reduce_kind)(*args, key=_in_context(key), **kwargs)  # the item itself
        if len(args) == 1:
            (items,) = args
            if isinstance(items, Tracer):
                return reduce(items, 0, False, reduce_kind, getattr(np, reduce_kind))
            items = list(items)
        else:
            items = list(args)
        if not items and "default" in kwargs:  # `min([], default=x)`
            return kwargs["default"]
        return functools.reduce(select_fn, items)
    srule.__name__ = srule.__qualname__ = f"{reduce_kind}_srule"
    return srule


def _in_context(fn):
    """fn (a user's function called by a rule) run under the active sparsity context, as if the user's
    code had called it: its own calls get their rules."""
    ctx = ops._active_context()
    if ctx is None or not overdub.is_recursable(fn):
        return fn
    return functools.partial(ctx.recurse, fn)


registry.srule(builtins.max)(_fold(np.maximum, "max"))
registry.srule(builtins.min)(_fold(np.minimum, "min"))


def _pair(parts, specs, name: str):
    """The sparsity rule of a one-argument function returning a pair (`frexp`, `modf`, `polar`): each part
    elementwise in the argument by its spec (`parts(v)` computes both on known values, arrays too)."""
    def srule(x):
        return tuple(elementwise(lambda v, i=i: parts(v)[i], spec, (x,)) for i, spec in enumerate(specs))
    srule.__name__ = srule.__qualname__ = f"{name}_srule"
    return srule


registry.srule(math.frexp)(_pair(np.frexp, (NONLINEAR, NONDIFF), "frexp"))    # (x / 2**e, e)
registry.srule(math.modf)(_pair(np.modf, (LINEAR, NONDIFF), "modf"))          # (x - whole, whole)
registry.srule(cmath.polar)(_pair(lambda v: (np.abs(v), np.angle(v)), (NONLINEAR, NONLINEAR), "polar"))


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


@registry.srule(np.linalg.norm)
def norm_srule(x, ord=None, axis=None, keepdims=False):
    x = as_tracer(x)
    if axis is None and x.ndim == 2 and ord not in (None, "fro"):
        return ops.dense(np.linalg.norm, (x,), {"ord": ord})
    if isinstance(axis, tuple) and len(axis) == 2 and ord not in (None, "fro"):
        # a matrix norm over two axes (inf: the largest row sum, 1: column sum, 2: singular values): every entry
        # of each matrix (the vector inf-norm's choice below kept one entry of the row, gen24 W4)
        return reduce(x, axis, keepdims, False, lambda p, axis, keepdims: np.linalg.norm(p, ord, axis, keepdims))
    if ord in (np.inf, -np.inf):  # the largest (smallest) |x|: local mode picks it by |x|, not x
        return reduce(np.abs(x), axis, keepdims, "max" if ord == np.inf else "min",
                      lambda p, axis, keepdims: np.max(p, axis, keepdims=keepdims) if ord == np.inf
                      else np.min(p, axis, keepdims=keepdims))
    return reduce(x, axis, keepdims, False,
                  lambda p, axis, keepdims: np.linalg.norm(p, ord, axis, keepdims))


@registry.srule(np.trace)
def trace_srule(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return reduce(as_tracer(a).diagonal(offset, axis1, axis2), -1, False, True, np.sum)


# -- shapes and indexing ------------------------------------------------------------------------------------


@registry.srule(np.take)
def take_srule(a, indices, axis=None, out=None, mode="raise"):
    return as_tracer(a).take(indices, axis, mode=mode)


def _triangle(fn):
    def srule(m, k=0):
        return restructure([m], lambda i: np.where(fn(np.ones(i.shape, bool), k), i, -1),
                           lambda p: fn(p, k))
    srule.__name__ = srule.__qualname__ = f"{fn.__name__}_srule"
    registry.srule(fn)(srule)


_triangle(np.triu)
_triangle(np.tril)


@registry.srule(np.concatenate, getattr(np.concatenate, "__wrapped__", np.concatenate))  # (its C implementation: np.block)
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
registry.srule(np.select)(ops.select)
registry.srule(np.clip)(ops.clip)
registry.srule(np.diff)(ops.diff)
registry.srule(np.pad)(ops.pad)


@registry.srule(np.dot)
def dot_srule(a, b, out=None):
    if len(_shape(a)) > 2 or len(_shape(b)) > 2:  # (np.dot's sum over a's last and b's second-to-last axes)
        return ops.dense(np.dot, (a, b), {})
    return ops.matmul(a, b)


@registry.srule(np.matmul)
def matmul_srule(a, b, out=None, **kwargs):
    """Stacked matrices too (`ops.matmul` broadcasts the leading axes, as np.matmul does; np.dot's rule gave
    np.dot's shape for them: 12 rows for 6 outputs, gen24 W1)."""
    if kwargs:  # (axes=, dtype=: conservative)
        return ops.dense(np.matmul, (a, b), kwargs)
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


@registry.srule(np.iscomplexobj)
def iscomplexobj_srule(x):
    return False if isinstance(x, Tracer) else np.iscomplexobj(x)


@registry.srule(np.isrealobj)
def isrealobj_srule(x):
    return True if isinstance(x, Tracer) else np.isrealobj(x)


@registry.srule(np.isscalar)
def isscalar_srule(x):
    return False if isinstance(x, Tracer) else np.isscalar(x)


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


@registry.srule(np.broadcast_arrays)
def broadcast_arrays_srule(*args, subok=False):
    shape = np.broadcast_shapes(*(_shape(a) for a in args))
    # (views, as numpy's: a later write into an argument shows through them; copies lost it, sp42 W4)
    return tuple(a._view_by(lambda i: np.broadcast_to(i, shape), writeable=True) if isinstance(a, Tracer)
                 else restructure([a], lambda i: np.broadcast_to(i, shape)) for a in args)


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


@registry.srule(np.nan_to_num)
def nan_to_num_srule(x, copy=True, nan=0.0, posinf=None, neginf=None):
    y = elementwise(np.nan_to_num, Elementwise(first=(True,), second="none"), (x,),
                    {"nan": nan, "posinf": posinf, "neginf": neginf})
    if not copy and isinstance(x, Tracer):  # (numpy's changes x in place and returns it: a copy lost a later
        x[...] = y                          # write through the result, sp42 W9)
        return x
    return y


@registry.srule(np.asarray, np.asanyarray)
def asarray_srule(a, dtype=None, *args, **kw):
    if isinstance(a, Tracer):
        order = args[0] if args else kw.get("order")
        if dtype is not None and np.dtype(dtype) != a.dtype:
            return a.astype(dtype)  # (another dtype: numpy's copy, a write into it must not reach a: sp42 W8)
        if order is not None:  # (a view or a copy, as numpy decides for the index map: `order="F"` of a C array)
            return a._view_by(lambda i: np.asarray(i, order=order))
    return ops.array(a, dtype, copy=False)



for _fn, _fill in ((np.zeros_like, np.zeros), (np.ones_like, np.ones), (np.empty_like, np.zeros)):
    registry.srule(_fn)(ops._like(_fill))
registry.srule(np.full_like)(ops.full_like)


# -- ufunc.at: unbuffered in-place updates (np.add.at(acc, idx, vals)) ------------------------------------

def ufunc_at(ufunc: np.ufunc, a: Any, indices: Any, b: Any = None) -> None:
    """`ufunc.at(a, indices, b)` on a tracer a: each indexed element of a (repeated indices each time)
    depends on what it did and on the b elements updating it. Second order: linear ufuncs only."""
    traced_b = isinstance(b, Tracer) and not b.is_constant
    refuse_read_only_at(ufunc, a)
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



@registry.srule(np.apply_along_axis)
def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """`np.apply_along_axis` on tracers: func1d on each 1-d slice, in Python (numpy's own code wraps the
    result by a C converter, `_array_converter`, that tracers cannot pass). A result of two or more
    dimensions per slice is refused."""
    arr = as_tracer(arr) if not isinstance(arr, Tracer) else arr
    moved = np.moveaxis(arr, axis, -1)
    outer = _shape(moved)[:-1]
    results = [func1d(moved[idx], *args, **kwargs) for idx in np.ndindex(*outer)]
    if any(len(_shape(r)) > 1 for r in results):
        raise NoSparsityRule("np.apply_along_axis of a function returning arrays of two or more dimensions",
                             where=user_site(3), fix="loop over the slices in Python")
    stacked = np.stack([as_tracer(r) if not isinstance(r, Tracer) else r for r in results])
    per = _shape(results[0]) if results else ()
    out = np.reshape(stacked, tuple(outer) + tuple(per))
    return np.moveaxis(out, -1, axis % len(_shape(arr))) if per else out


# -- scipy.sparse.linalg.spsolve(A, b): A^-1 is dense in general --------------------------------------------------

try:
    import scipy.sparse.linalg as _sparse_linalg
except ImportError:  # pragma: no cover
    _sparse_linalg = None

if _sparse_linalg is not None:
    @registry.srule(_sparse_linalg.spsolve)
    def spsolve_srule(A, b, *args, **kwargs):
        """Every entry of x on every entry of b (conservative); a matrix holding traced values is refused."""
        if isinstance(getattr(A, "data", None), Tracer) or isinstance(A, Tracer):
            raise NoSparsityRule("scipy.sparse.linalg.spsolve of a sparse matrix built from traced values",
                                 where=user_site(), fix="solve densely: np.linalg.solve(A.toarray(), b)")
        return ops.dense(_sparse_linalg.spsolve, (A, b) + args, kwargs, linear=True)
