"""Higher-order reverse mode: the rule for `gradient` itself, by forward-over-reverse.

Differentiating x -> gradient(f, x) needs, for a cotangent v of that gradient, the product H v (and, for a
closure f, the mixed derivative with respect to its captured variables, which by symmetry of second
derivatives is the directional derivative of f's full gradient along v). Both come from one reverse pass
of f run on forward-mode duals x + εv: the reverse engine is type-generic, so its rules and generated
adjoints carry the duals through. This keeps the AD machinery itself out of the outer transformation
(Zygote differentiates its own generated code instead; Python's AD runtime is not pure enough for that).
"""

from __future__ import annotations

from .api import _pullback, _seed, _wrt_mask, gradient, value_and_gradient
from ..rules.cotangents import Tangent, acc
from ..rules.registry import registry

__all__ = []


def _tangent_part(x, tag):
    from ..forward.dual import Dual
    if type(x) is Dual:
        return x.tangent if x.tag is tag else None
    if isinstance(x, Tangent):
        out = Tangent({k: _tangent_part(v, tag) for k, v in x.items()})
        return out if any(v is not None for v in out.values()) else None
    if isinstance(x, dict):
        return {k: _tangent_part(v, tag) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_tangent_part(v, tag) for v in x) if not hasattr(x, "_fields") else type(x)(
            *(_tangent_part(v, tag) for v in x))
    return None


def _primal_part(x, tag):
    from ..forward.dual import Dual
    if type(x) is Dual and x.tag is tag:
        return x.primal
    return x


def _second_order_pullback(f, args, v, dy=None):
    """(cotangent of f, cotangents of args) of x -> gradient(f, x) for the cotangent v: one reverse pass
    of f (with output cotangent dy, the seed by default) on duals x + εv."""
    from ..forward.dual import Dual, Tag
    tag = Tag()
    duals = tuple(a if t is None else Dual(a, t, tag) for a, t in zip(args, v))
    y, back = _pullback(f, duals, {})
    dfn, dargs = back(_seed(_primal_part(y, tag)) if dy is None else dy)
    return _tangent_part(dfn, tag), tuple(_like(_tangent_part(g, tag), a) for g, a in zip(dargs, args))


def _like(g, a):
    """A numpy scalar cotangent of a Python float argument is given back as a float."""
    if isinstance(a, float) and hasattr(g, "dtype") and getattr(g, "ndim", 1) == 0:
        return float(g)
    return g


def _spread(parts, args, wrt) -> tuple:
    """One entry per argument from the gradients of those `wrt` chose (None for the others)."""
    if wrt is None:
        return tuple(parts)
    out = [None] * len(args)
    for i, p in zip(_wrt_mask(args, wrt)[0], parts):
        out[i] = p
    return tuple(out)


def gradient_rrule(f, *args, wrt=None):
    g = gradient(f, *args, wrt=wrt)

    def gradient_pullback(dg):
        if dg is None:
            return (None,) * (len(args) + 1)
        dfn, dargs = _second_order_pullback(f, args, _spread(dg, args, wrt))
        return (dfn, *dargs)
    return g, gradient_pullback


def value_and_gradient_rrule(f, *args, wrt=None):
    y, g = value_and_gradient(f, *args, wrt=wrt)

    def value_and_gradient_pullback(dout):
        dy, dg = dout if dout is not None else (None, None)
        dfn, dargs = (None, (None,) * len(args))
        if dg is not None:
            dfn, dargs = _second_order_pullback(f, args, _spread(dg, args, wrt))
        if dy is not None:
            # the value's own cotangent: a reverse pass of f with output cotangent dy, for every argument (wrt's
            # are not all) and for f itself (what a closure captured: the value's part was lost, gen23 W1, 0 for
            # 1.23 when only the value was used)
            _, back = _pullback(f, tuple(args), {})
            dfn_y, dargs_y = back(dy)
            dfn = acc(dfn, dfn_y)
            dargs = tuple(acc(a, _like(b, x)) for a, b, x in zip(dargs, dargs_y, args))
        return (dfn, *dargs)
    return (y, g), value_and_gradient_pullback


def derivative_rrule(f, x):
    """Reverse mode through forward mode's `derivative(f, x)` = f'(x): for an output cotangent v, the
    cotangents are v·f''(x) for x and ∂/∂cells (v·f'(x)) for f — one reverse pass of f on x + ε, with v
    as its output cotangent (mixed partials commute)."""
    from ..forward import derivative
    d = derivative(f, x)

    def derivative_pullback(v):
        if v is None:
            return None, None
        dfn, (dx,) = _second_order_pullback(f, (x,), (1.0 if not isinstance(x, int) else 1,), dy=v)
        return dfn, dx
    return d, derivative_pullback


registry.rrule(gradient)(gradient_rrule)
registry.rrule(value_and_gradient)(value_and_gradient_rrule)


def _register_forward_rules():
    from ..forward import derivative
    registry.rrule(derivative)(derivative_rrule)


_register_forward_rules()
