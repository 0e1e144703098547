"""The sparsity specs the domain files declare beside each primitive's derivatives
(`contexts/rules/sparsity_specs.py`), carried out with the tracer moves.

`sparsity_rule(rule, fn)` is what the context and the numpy protocols call: the rule's `srule` (code on
tracers, `contexts/sparsity/rules.py`, or a user's) if it has one, else its spec's interpretation.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from contexts.rules.sparsity_specs import (Concrete, Constructor, Cumulative, Dense, Elementwise, Indices,
                                           Reduction, Structural)

from . import ops
from .moves import constant_tracer, elementwise, reduce, restructure
from .tracer import IndexTracer, Tracer

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


def _reduction(spec: Reduction, fn: Callable, /, a, axis=None, *args, keepdims=False, **kwargs):
    if not isinstance(a, Tracer):
        a = ops.array(a)
        if not isinstance(a, Tracer):
            return fn(a, axis, *args, keepdims=keepdims, **kwargs)
    return reduce(a, axis, keepdims, spec.linear,
                  lambda p, axis, keepdims: fn(p, axis=axis, keepdims=keepdims, **kwargs))


def _cumulative(spec: Cumulative, fn: Callable, /, a, axis=None, dtype=None, out=None):
    return ops.cumulative(a, axis, spec.linear, fn)


def _structural(spec: Structural, fn: Callable, /, a, *args, **kwargs):
    return restructure([a], lambda i: fn(i, *args, **kwargs))


def _dense(spec: Dense, fn: Callable, /, *args, **kwargs):
    return ops.dense(fn, args, kwargs, linear=spec.linear)


def _concrete(spec: Concrete, fn: Callable, /, *args, **kwargs):
    name = getattr(fn, "__name__", "fn")
    return fn(*(a._concrete(f"{name}()") if isinstance(a, Tracer) else a for a in args), **kwargs)


def _indices(spec: Indices, fn: Callable, /, *args, **kwargs):
    primals = ops._known_primals(args)
    if primals is not None:
        return fn(*primals, **{k: v.primal if isinstance(v, Tracer) else v for k, v in kwargs.items()})
    return IndexTracer(ops.probe_shape(fn, args, kwargs), None)


def _constructor(spec: Constructor, fn: Callable, /, *args, **kwargs):
    return constant_tracer(fn(*args, **kwargs))


_APPLY = {Elementwise: _elementwise, Reduction: _reduction, Cumulative: _cumulative, Structural: _structural,
          Dense: _dense, Concrete: _concrete, Indices: _indices, Constructor: _constructor}
