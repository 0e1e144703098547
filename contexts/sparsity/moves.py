"""The three moves every tracer operation is made of, and the helpers they share.

- `elementwise(fn, spec, args)`: broadcasting; `spec` (an `Elementwise` of contexts/rules/sparsity_specs.py)
  says which arguments have nonzero first partials and which pairs nonzero second partials;
- `restructure(tracers, index_fn)`: moves elements (indexing, reshape, transpose, concatenate, ...),
  computed by applying the same numpy function to arrays of element indices;
- `reduce(t, axis, linear)`: each output element depends on a group of input elements.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from contexts.rules.sparsity_specs import LINEAR, NONDIFF, Elementwise
from contexts.rules.leaves import ARRAY_TYPES, ArrayLeaf

from .pattern import Pattern
from .tracer import Tracer, _index_map, _primal, _shape

__all__ = ["Elementwise", "LINEAR", "NONDIFF", "elementwise", "restructure", "reduce", "lift", "as_tracer",
           "constant_tracer", "spread"]


# -- helpers on patterns -------------------------------------------------------------------------------


def _P(t: Any, n: int) -> Pattern:
    """t's first-order pattern, an empty one of n columns when it has none."""
    P = t.P if isinstance(t, Tracer) else None
    return P if P is not None else Pattern.empty(math.prod(_shape(t)), n)


def _H(t: Any, n: int) -> Pattern:
    H = t.H if isinstance(t, Tracer) else None
    return H if H is not None else Pattern.empty(math.prod(_shape(t)), n * n)


def _ncols(tracers) -> int | None:
    for t in tracers:
        if isinstance(t, Tracer) and t.P is not None:
            return t.P.ncols
    return None


def constant_tracer(value: Any) -> Tracer:
    """A tracer for a constant array: no dependencies, primal known (so it can take traced values)."""
    value = np.array(value)
    return Tracer(value.shape, None, None, value, 0)


def _has_tracer(x) -> bool:
    return isinstance(x, Tracer) or (isinstance(x, (list, tuple)) and any(_has_tracer(v) for v in x))


def lift(x: Any) -> Any:
    """A (nested) list or tuple holding tracers becomes one stacked tracer; anything else is kept."""
    if isinstance(x, (list, tuple)) and _has_tracer(x):
        return restructure([lift(v) for v in x], lambda *xs: np.stack(xs))
    return x


def _known_primals(args) -> list | None:
    primals = [_primal(a) for a in args]
    return None if any(p is None for p in primals) else primals


# -- the three moves -------------------------------------------------------------------------------------


def elementwise(fn: Callable, spec: Elementwise, args: tuple, kwargs: dict | None = None) -> Tracer:
    """fn applied elementwise (with broadcasting) to args, some of them tracers."""
    kwargs = kwargs or {}
    args = tuple(lift(a) for a in args)
    primals = _known_primals(args)
    if primals is not None:
        y = fn(*primals, **kwargs)
        shape = np.shape(y)
    else:
        y, shape = None, np.broadcast_shapes(*(_shape(a) for a in args))
    order = max((a.order for a in args if isinstance(a, Tracer)), default=0)
    active = [i for i, a in enumerate(args)
              if isinstance(a, Tracer) and a.P is not None and a.P.nnz and spec.active(i)]
    if not active:
        return Tracer(shape, None, None, y, 0 if order == 0 else order)
    masks = None
    if spec.select is not None:
        constant = [not isinstance(a, Tracer) or a.is_constant for a in args]
        masks = spec.select([_primal(a) for a in args], constant, shape)
        if ARRAY_TYPES and masks is not None:  # a dask constant's zeros are not looked for (that computes it):
            masks = [None if isinstance(m, ArrayLeaf) else m for m in masks]  # dense, a superset
    if not shape and order < 2 and masks is None:  # scalars: one row each, merged directly
        if len(active) == 1:
            return Tracer(shape, args[active[0]].P, None, y, order)
        cols = np.unique(np.concatenate([args[i].P.indices for i in active]))
        return Tracer(shape, Pattern(np.array([0, len(cols)]), cols, args[active[0]].P.ncols), None, y,
                      order)
    size = math.prod(shape)
    rows = {}
    for i in active:
        r = np.broadcast_to(_index_map(args[i].shape), shape).ravel()
        if masks is not None and masks[i] is not None:
            r = np.where(np.broadcast_to(masks[i], shape).ravel(), r, -1)
        rows[i] = r
    gathered = {i: args[i].P.gather(rows[i]) for i in active}
    P = gathered[active[0]].union(*(gathered[i] for i in active[1:]))
    H = None
    if order == 2:
        n = P.ncols
        parts = [_H(args[i], n).gather(rows[i]) for i in active]
        parts += [gathered[a].cross(gathered[b]) for a, b in spec.pairs(active)]
        H = parts[0].union(*parts[1:]) if parts else Pattern.empty(size, n * n)
    return Tracer(shape, P, H, y, order)


def restructure(args: list, index_fn: Callable, primal_fn: Callable | None = None) -> Tracer:
    """Move elements: `index_fn(*index_arrays)` does to element indices what the op does to values.

    Constants among args take index -1 (no dependencies). `primal_fn(*primals)` (default index_fn) gives
    the value when every primal is known.
    """
    args = [lift(a) for a in args]
    n = _ncols(args)
    offsets, maps, patterns, hpatterns = 0, [], [], []
    order = max((a.order for a in args if isinstance(a, Tracer)), default=0)
    for a in args:
        shape = _shape(a)
        if n is not None and isinstance(a, Tracer) and a.P is not None:
            maps.append(_index_map(shape) + offsets)
            offsets += math.prod(shape)
            patterns.append(a.P)
            if order == 2:
                hpatterns.append(_H(a, n))
        else:
            maps.append(np.full(shape, -1, dtype=np.int64))
    idx = np.asarray(index_fn(*maps))
    primals = _known_primals(args)
    y = None if primals is None else (primal_fn or index_fn)(*primals)
    if n is None:
        return Tracer(idx.shape, None, None, y, order)
    rows = idx.ravel()
    P = Pattern.vstack(patterns).gather(rows)
    H = Pattern.vstack(hpatterns).gather(rows) if order == 2 else None
    return Tracer(idx.shape, P, H, y, order)


def _axes(axis, ndim: int) -> tuple:
    if axis is None or ndim == 0:
        return tuple(range(ndim))
    axis = axis if isinstance(axis, (tuple, list)) else (axis,)
    return tuple(int(a) % ndim for a in axis)


def reduce(t: Tracer, axis, keepdims: bool, linear, primal_fn: Callable | None, where: Any = True) -> Tracer:
    """Each output element depends on the group of elements reduced into it.

    linear: True (sum, mean), False (second derivatives between all group members), "prod" (between
    distinct members), or "max"/"min" (first order only; in local mode only the selected elements count).
    primal_fn: the value from t's (None: unknown, as a where= mask whose value is unknown makes it);
    where: the reduction's mask (its value), which elements a max/min may select.
    """
    t = as_tracer(t)
    axes = _axes(axis, t.ndim)
    y = None if t.primal is None or primal_fn is None else \
        np.asarray(primal_fn(t.primal, axis=axis, keepdims=keepdims))
    kept = [d for d in range(t.ndim) if d not in axes]
    out_core = tuple(t.shape[d] for d in kept)
    shape = tuple(1 if d in axes else t.shape[d] for d in range(t.ndim)) if keepdims else out_core
    if y is not None and y.ndim == 0:
        y = y[()]
    if t.P is None:
        return Tracer(shape, None, None, y, t.order)
    groups = np.transpose(_index_map(t.shape), kept + list(axes)).reshape(math.prod(out_core), -1)
    if linear in ("max", "min") and y is not None and groups.shape[1] > 0:
        out_rows, src = _selected(t, groups, y, where)
        P = t.P.combine(out_rows, src, len(groups))
        H = None if t.order < 2 else _H(t, t.P.ncols).combine(out_rows, src, len(groups))
        return Tracer(shape, P, H, y, t.order)
    out_rows = np.repeat(np.arange(len(groups)), groups.shape[1])
    P = t.P.combine(out_rows, groups.ravel(), len(groups))
    H = None
    if t.order == 2:
        H = _H(t, t.P.ncols).combine(out_rows, groups.ravel(), len(groups))
        if linear == "prod":  # multilinear: pairs of distinct elements only
            a, b = np.triu_indices(groups.shape[1], 1)
            pair_rows = np.repeat(np.arange(len(groups)), len(a))
            cross = t.P.gather(groups[:, a].ravel()).cross(t.P.gather(groups[:, b].ravel()))
            H = H.union(cross.combine(pair_rows, np.arange(len(pair_rows)), len(groups)))
        elif linear is False:
            H = H.union(P.cross(P))
    return Tracer(shape, P, H, y, t.order)


def _selected(t: Tracer, groups: np.ndarray, y: Any, where: Any) -> tuple[np.ndarray, np.ndarray]:
    """(output row, element) of the elements a max/min selected at the point: those its where= allows
    that equal its value (every one where that is NaN; none where it is `initial=`, a constant). Equality,
    not argmax: NaNs (nanmax, fmax.reduce), masks and ties are then as numpy had them; a tie keeps all."""
    values = np.asarray(t.primal).ravel()[groups]
    target = np.asarray(y).reshape(-1)[:, None]
    hit = (values == target) | np.isnan(target)
    if where is not True:
        hit &= np.broadcast_to(np.asarray(where, bool), t.shape).ravel()[groups]
    out_rows, k = np.nonzero(hit)
    return out_rows, groups[out_rows, k]


def spread(tracers: list, shape: tuple) -> Tracer:
    """Every element of a result of `shape` may be any element of the tracers (a selection whose
    positions are unknown): the union of all their rows, first and second order (a selection is linear)."""
    tracers = [t for t in tracers if isinstance(t, Tracer)]
    n = _ncols(tracers)
    order = max((t.order for t in tracers), default=0)
    if n is None:
        return Tracer(shape, None, None, None, order)
    size = math.prod(shape)
    zeros = np.zeros(size, np.int64)
    P = Pattern.vstack([_P(t, n) for t in tracers]).any_rows().gather(zeros)
    H = Pattern.vstack([_H(t, n) for t in tracers]).any_rows().gather(zeros) if order == 2 else None
    return Tracer(shape, P, H, None, order)


def _nondiff_reduce(t: Tracer, axis, keepdims, fn) -> Tracer:
    y = None if t.primal is None else fn(t.primal, axis=axis, keepdims=keepdims)
    shape = np.shape(fn(np.zeros(t.shape), axis=axis, keepdims=keepdims))
    return Tracer(shape, None, None, y, t.order)


def as_tracer(x: Any) -> Tracer:
    return x if isinstance(x, Tracer) else constant_tracer(x)

