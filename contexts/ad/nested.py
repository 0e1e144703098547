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
    duals = tuple(_dualized(a, t, tag) for a, t in zip(args, v))
    y, back = _pullback(f, duals, {})
    dfn, dargs = back(_seed(_primal_part(y, tag)) if dy is None else dy)
    return _tangent_part(dfn, tag), tuple(_like(_tangent_part(g, tag), a) for g, a in zip(dargs, args))


def _dualized(a, t, tag):
    """a perturbed along t: a dual, or for a dict, list or tuple argument the same container of duals of its
    items (one dual of the whole container was indexed as a dict: a KeyError, gen23 C2)."""
    from ..forward.dual import Dual
    if t is None:
        return a
    if isinstance(a, dict) and isinstance(t, dict):
        return type(a)((k, _dualized(v, t.get(k), tag)) for k, v in a.items())
    if isinstance(a, (list, tuple)) and isinstance(t, (list, tuple)) and len(a) == len(t):
        items = [_dualized(v, tv, tag) for v, tv in zip(a, t)]
        return type(a)(*items) if hasattr(a, "_fields") else type(a)(items)
    return Dual(a, t, tag)


def _like(g, a):
    """A numpy scalar cotangent of a Python float argument is given back as a float."""
    if isinstance(a, float) and hasattr(g, "dtype") and getattr(g, "ndim", 1) == 0 and type(g).__name__ != "Dual":
        return float(g)  # (not a dual of another derivative's: third order, gen23 C4)
    return g


def _spread(parts, args, wrt) -> tuple:
    """One entry per argument from the gradients of those `wrt` chose (None for the others)."""
    if wrt is None:
        return tuple(parts)
    out = [None] * len(args)
    for i, p in zip(_wrt_mask(args, wrt)[0], parts):
        out[i] = p
    return tuple(out)


def _rules_refused(f, what: str) -> None:
    """Inside a block giving rules (`ADContext(rules={math.floor: straight_through})`), refused: the rules give
    first derivatives only, and the rule's pass took floor's own, 0, for the second (0 for 3, gen23 W3)."""
    from .runtime import UnsupportedFunction, _overrides, _user_line
    if _overrides.get():
        raise UnsupportedFunction(
            f"reverse mode cannot differentiate {what} of {f.__qualname__} inside a block giving rules "
            "(`ADContext(rules=...)`): the rules give first derivatives, not the second ones this needs",
            where=_user_line(), fix="use forward mode (`derivative`) for the outer derivative, or leave the "
                                    "block's rules out of the inner derivative")


def _arrays_refused(f, what: str) -> None:
    """A closure made by the differentiated code reading its arrays (`arr = np.array([x, 1.0]); gradient(
    lambda t: arr[0] * t * t, 0.5)`), whose derivative is wanted: refused. The rule's pass (forward over
    reverse) takes a plain array's items for constants, so the closure's part came back None: 0 for 1, gen23 W4."""
    from .runtime import UnsupportedFunction, active_array_cells
    found = active_array_cells(f)
    if found:
        raise UnsupportedFunction(
            f"reverse mode cannot differentiate {what} of {f.__qualname__}, a closure reading `{found[0]}`, a "
            "differentiated array it captured: the inner pass takes a plain array's items for constants",
            where=f"{f.__code__.co_filename}:{f.__code__.co_firstlineno}",
            fix=f"pass `{found[0]}` to the function as an argument, or use forward mode (`derivative`) for the "
                "outer derivative")


def gradient_rrule(f, *args, wrt=None):
    _rules_refused(f, "gradient")
    g = gradient(f, *args, wrt=wrt)

    def gradient_pullback(dg):
        if dg is None:
            return (None,) * (len(args) + 1)
        _arrays_refused(f, "gradient")
        dfn, dargs = _second_order_pullback(f, args, _spread(dg, args, wrt))
        return (dfn, *dargs)
    return g, gradient_pullback


def value_and_gradient_rrule(f, *args, wrt=None):
    _rules_refused(f, "value_and_gradient")
    y, g = value_and_gradient(f, *args, wrt=wrt)

    def value_and_gradient_pullback(dout):
        dy, dg = dout if dout is not None else (None, None)
        dfn, dargs = (None, (None,) * len(args))
        if dg is not None:
            _arrays_refused(f, "value_and_gradient")
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
    _rules_refused(f, "derivative")
    d = derivative(f, x)

    def derivative_pullback(v):
        if v is None:
            return None, None
        _arrays_refused(f, "derivative")
        dfn, (dx,) = _second_order_pullback(f, (x,), (1.0 if not isinstance(x, int) else 1,), dy=v)
        return dfn, dx
    return d, derivative_pullback


registry.rrule(gradient)(gradient_rrule)
registry.rrule(value_and_gradient)(value_and_gradient_rrule)


def _holds_values(f) -> bool:
    """f carries values of its own a derivative may flow into: a closure's cells, defaults, a bound method's
    object, a partial's arguments (functions, classes and modules aside)."""
    import functools
    import types
    if isinstance(f, functools.partial):
        return bool(f.args or f.keywords) or _holds_values(f.func)
    if isinstance(f, types.MethodType):
        return True
    if type(f) is not types.FunctionType:
        return not isinstance(f, (types.BuiltinFunctionType, type)) and hasattr(f, "__dict__")
    if f.__defaults__ or f.__kwdefaults__:
        return True
    for c in f.__closure__ or ():
        try:
            v = c.cell_contents
        except ValueError:
            continue
        if not isinstance(v, (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type)) or (
                type(v) is types.FunctionType and _holds_values(v)):
            return True
    return False


def forwarddiff_rrule(f, x, chunk=None):
    """Mixed mode's rule: the transposed Jacobian forward mode computes, for a function holding nothing of its
    own; for a closure (a bound method, a partial), what it captured may be differentiated too (`forwarddiff(
    lambda z: z * z * a, x)` in a: the closure's part was dropped, 1.62 for 2.52, gen23 W6): a reverse pass
    of f gives both."""
    from ..forward.mixed import forwarddiff_rrule as by_jacobian
    if not _holds_values(f):
        return by_jacobian(f, x, chunk)
    y, back = _pullback(f, (x,), {})

    def forwarddiff_pullback(dy):
        if dy is None:
            return (None, None)
        dfn, (dx,) = back(dy)
        return dfn, _like(dx, x)
    return y, forwarddiff_pullback


def _register_forward_rules():
    from ..forward import derivative
    from ..forward.mixed import forwarddiff
    registry.rrule(derivative)(derivative_rrule)
    registry.rrule(forwarddiff)(forwarddiff_rrule)


_register_forward_rules()
