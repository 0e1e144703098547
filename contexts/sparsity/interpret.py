"""The sparsity specs the domain files declare beside each primitive's derivatives
(`contexts/rules/sparsity_specs.py`), carried out with the tracer moves.

`sparsity_rule(rule, fn)` is what the context and the numpy protocols call: the rule's `srule` (code on
tracers, `contexts/sparsity/rules.py`, or a user's) if it has one, else its spec's interpretation.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np
from numpy.lib.stride_tricks import as_strided, sliding_window_view

from contexts.rules.sparsity_specs import (Concrete, Constructor, Cumulative, Dense, Elementwise, Indices,
                                           Reduction, Structural)

from . import ops
from .moves import constant_tracer, elementwise, reduce, restructure
from .tracer import IndexTracer, TracedBranchError, Tracer, user_site

__all__ = ["sparsity_rule", "always"]


def sparsity_rule(rule: Any, fn: Callable) -> Callable | None:
    """What to call for fn on tracers: `rule.srule`, or the interpretation of `rule.sparsity`; None
    when the rule has neither (or only names custom code that is not registered)."""
    if rule is None:
        return None
    if rule.srule is not None:
        return rule.srule
    apply = _APPLY.get(type(rule.sparsity))
    return None if apply is None else functools.partial(apply, rule.sparsity, fn)


def always(rule: Any) -> bool:
    """Whether the rule applies even when no argument is a tracer (constructors: np.zeros)."""
    return rule is not None and isinstance(rule.sparsity, Constructor)


def _elementwise(spec: Elementwise, fn: Callable, /, *args, **kwargs):
    return elementwise(fn, spec, args, kwargs)


def _reduction(spec: Reduction, fn: Callable, /, a, axis=None, *args, **kwargs):
    """A reduction, its arguments after axis (dtype, keepdims, initial, where, ddof) by name: its primal
    is computed with all of them (a sum without its where= is another number, and a branch on it
    wrong), the value of where= deciding which elements a max/min may select."""
    kwargs = {**ops.by_name(fn, args, 2), **kwargs}
    keepdims = kwargs.pop("keepdims", False)
    keepdims = False if keepdims is np._NoValue else keepdims
    if any(isinstance(v, Tracer) and not v.is_constant for v in kwargs.values()):
        # another traced argument (np.std(x, mean=m)): the result depends on it too
        return ops.dense(fn, (a, axis), {**kwargs, "keepdims": keepdims}, linear=spec.linear is True)
    if not isinstance(a, Tracer):
        a = ops.array(a)
        if not isinstance(a, Tracer):
            return fn(a, axis, keepdims=keepdims, **kwargs)
    known = all(not isinstance(v, Tracer) or v.primal is not None for v in kwargs.values())
    kwargs = {k: v.primal if isinstance(v, Tracer) else v for k, v in kwargs.items()}
    where = kwargs.get("where", True)
    return reduce(a, axis, keepdims, spec.linear,
                  (lambda p, axis, keepdims: fn(p, axis=axis, keepdims=keepdims, **kwargs)) if known else None,
                  where=True if where is np._NoValue else where)


def _cumulative(spec: Cumulative, fn: Callable, /, a, axis=None, dtype=None, out=None):
    return ops.cumulative(a, axis, spec.linear, fn)


def _structural(spec: Structural, fn: Callable, /, a, *args, **kwargs):
    """fn moves a's elements; where numpy's fn returns a view of a tracer (np.reshape, np.transpose,
    np.flip, ...), so does the rule, so that a write through it reaches a (`Tracer._view_by`)."""
    if fn in _SEVERAL and args:  # np.atleast_1d(a, b): each argument on its own, as numpy does
        return type(fn(0, 0))(_structural(spec, fn, v) for v in (a, *args))  # (a list before numpy 2)
    if fn is np.real and isinstance(a, Tracer):
        return a.real  # part of each element: a write through it keeps the imaginary part's dependencies
    if (inner := ops._tracers_in((args, kwargs))):
        # a position, count or shape computed from the inputs (`np.delete(u, u > 1)`, `np.tile(a, reps)`): its
        # value where it is known (local mode), else refused (the move was run again on the tracer: a
        # RecursionError, sp43 C4)
        if any(t.primal is None for t in inner):
            raise TracedBranchError(
                f"np.{getattr(fn, '__name__', 'function')} given positions or sizes computed from the inputs: "
                "what it moves where depends on their values, which global sparsity detection does not have",
                where=user_site(3), fix="use mode='local' (the pattern at one point)")
        args = ops._substitute(args, None)
        kwargs = {k: ops._substitute(v, None) for k, v in kwargs.items()}
    if isinstance(a, Tracer):
        return a._view_by(lambda i: fn(i, *args, **kwargs))
    return restructure([a], lambda i: fn(i, *args, **kwargs))


# the structural functions of several arrays (each moved on its own)
_SEVERAL = frozenset({np.atleast_1d, np.atleast_2d, np.atleast_3d})
# declared DENSE (contexts/rules/numpy/shapes.py), but a view of the first argument: followed as one, so
# that a write through it (`writeable=True`) reaches the array
_VIEWS = frozenset({sliding_window_view})
# declared DENSE, but the number of outputs depends on the values: no pattern without them
_SHAPED_BY_VALUES = frozenset({np.unique})


def _dense(spec: Dense, fn: Callable, /, *args, **kwargs):
    if fn in _VIEWS and args and isinstance(args[0], Tracer):
        return _structural(spec, fn, *args, **kwargs)
    if fn is as_strided and args and isinstance(args[0], Tracer) and args[0].dtype.itemsize == 8:
        # a view too (sp42 W6: a write through it was lost), its strides in bytes the same over the index map
        # (an array of int64); of another item size, a copy: dense, read only
        return _structural(spec, fn, *args, **kwargs)
    if fn is np.einsum and len(args) == 2 and isinstance(args[0], str) and isinstance(args[1], Tracer) \
            and _einsum_view(args[0], args[1].shape, kwargs):
        # one operand, nothing summed (`np.einsum('ii->i', M)`, `'ij->ji'`): numpy returns a writeable view,
        # through which a write reaches M (a copy lost it: missed nonzeros, sp42 W3)
        return args[1]._view_by(lambda i: np.einsum(args[0], i, **kwargs))
    if fn in _SHAPED_BY_VALUES and any(isinstance(a, Tracer) and a.primal is None for a in args):
        # (also a value without dependencies whose values global mode does not have, `np.unique(np.round(u))`:
        # run on stand-in values, one element came out, and the pattern had one row for four, sp43 W4)
        raise TracedBranchError(
            f"np.{fn.__name__} of a value computed from the inputs: how many elements it returns depends "
            "on the values, which global sparsity detection does not have", where=user_site(3),
            fix="use mode='local' (the pattern at one point)")
    return ops.dense(fn, args, kwargs, linear=spec.linear)


def _concrete(spec: Concrete, fn: Callable, /, *args, **kwargs):
    name = getattr(fn, "__name__", "fn")
    return fn(*(a._concrete(f"{name}()") if isinstance(a, Tracer) else a for a in args), **kwargs)


def _indices(spec: Indices, fn: Callable, /, *args, **kwargs):
    if all(t.primal is not None for t in ops._tracers_in((args, kwargs))):  # (np.lexsort's keys: a tuple)
        return fn(*ops._substitute(args, None), **{k: ops._substitute(v, None) for k, v in kwargs.items()})
    return IndexTracer(ops.probe_shape(fn, args, kwargs), None)


def _constructor(spec: Constructor, fn: Callable, /, *args, **kwargs):
    return constant_tracer(fn(*args, **kwargs))


_APPLY = {Elementwise: _elementwise, Reduction: _reduction, Cumulative: _cumulative, Structural: _structural,
          Dense: _dense, Concrete: _concrete, Indices: _indices, Constructor: _constructor}


def _einsum_view(subscripts: str, shape: tuple, kwargs: dict) -> bool:
    """numpy's einsum of one operand of this shape returns a view of it (asked of an index map)."""
    index = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    try:
        return np.may_share_memory(np.einsum(subscripts, index, **kwargs), index)
    except (ValueError, TypeError):
        return False
