"""Rules for sympy: its expressions are registered numbers (`contexts.rules.leaves`) whose math is
sympy's, and every expression class (`sin`, `exp`, `Pow`, `Add`, `Abs`, a `Function('f')` ...) is a
primitive differentiated symbolically by sympy itself. So reverse and forward mode run numeric code of
yours on symbols and return the symbolic derivative, equal to `sympy.diff` of the function's result:

>>> import sympy as sp
>>> from contexts import gradient
>>> x = sp.Symbol("x")
>>> gradient(lambda t: t ** 3 / (1 + t * t), x)[0] == sp.diff(x ** 3 / (1 + x * x), x)
True

Methods of expressions are primitives too: those that keep the value (`expand`, `simplify`, `factor`,
...) pass the cotangent through; any other (`subs`, `diff`, reading `.args`) is refused, never
differentiated through sympy's own code (whose insides — argument tuples, caches — carry no derivative).

Loaded when sympy is first imported (`leaves.DOMAINS`).
"""

from __future__ import annotations

import sympy as sp

from .generic import project
from .leaves import register_scalar
from .registry import NoDerivative, Rule, registry
from .sparsity_specs import LINEAR, NONLINEAR

__all__: list[str] = []

_MATH = {name: getattr(sp, name) for name in (
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "exp",
    "log", "sqrt", "cbrt", "erf", "erfc", "gamma", "digamma", "sign", "atan2", "floor")}
_MATH.update(expm1=lambda x: sp.exp(x) - 1, log1p=lambda x: sp.log(1 + x), log10=lambda x: sp.log(x, 10),
             log2=lambda x: sp.log(x, 2), exp2=lambda x: 2 ** x, lgamma=sp.loggamma, fabs=sp.Abs)

register_scalar(sp.Basic, name="sympy", math=_MATH, one=lambda x: sp.Integer(1), zero=lambda x: sp.Integer(0))

# methods that return the same value in another form: the cotangent passes through
SAME_VALUE = ("expand", "simplify", "factor", "cancel", "together", "apart", "trigsimp", "powsimp",
              "radsimp", "ratsimp", "collect", "doit", "rewrite", "nsimplify", "expand_trig", "evalf", "n",
              "as_expr")


def same_value_adjoint(dy, y, self, *args, **kwargs):
    return (dy,) + (None,) * len(args)


for _name in SAME_VALUE:
    _fn = getattr(sp.Expr, _name, None)
    if _fn is not None:
        registry.adjoint(_fn, kind="linear")(same_value_adjoint)
        registry.sparsity(LINEAR, _fn)


def _differentiable(a) -> bool:
    return issubclass(type(a), (sp.Expr, int, float, complex)) and type(a) is not bool


def _perturbed(a) -> bool:
    """A forward-mode dual number (of a derivative of a derivative: hessian's forward over reverse runs
    the reverse pass's rules on duals over expressions)."""
    return not issubclass(type(a), sp.Basic) and all(hasattr(a, n) for n in ("primal", "tangent", "tag"))


def partials(cls, args, kwargs):
    """d cls(*args) / d args[i] for each argument, by sympy: the argument replaced by a fresh symbol,
    differentiated, and put back (None for arguments that are not expressions: names, flags)."""
    if any(_perturbed(a) for a in args):
        return _partials_at_duals(cls, args, kwargs)
    out = []
    for i, a in enumerate(args):
        if not _differentiable(a):
            out.append(None)
            continue
        if issubclass(cls, sp.Rational) and len(args) <= 2:  # Rational(p, q) = p / q, a conversion
            q = sp.Rational(args[1]) if len(args) == 2 else sp.Integer(1)
            out.append(1 / q if i == 0 else -sp.Rational(args[0]) / (q * q))
            continue
        d = sp.Dummy()
        try:
            expr = cls(*args[:i], d, *args[i + 1:], **kwargs)
        except (TypeError, ValueError) as e:  # (`Float(x)` takes no symbol: a conversion, the identity)
            if issubclass(cls, sp.Float) and i == 0:
                out.append(sp.Integer(1))
                continue
            raise NoDerivative(f"sympy's {cls.__name__} cannot be differentiated in its argument {i} "
                               f"({type(e).__name__}: {e})") from None
        out.append(sp.diff(expr, d).subs(d, a))
    return out


def _partials_at_duals(cls, args, kwargs):
    """`partials` where some arguments are dual numbers: each partial a function of all the arguments,
    evaluated at the duals (its own derivative taken by sympy too). Dropping the duals' tangents would
    give a Hessian without the terms of the partials' own derivatives."""
    dummies = [sp.Dummy() if _differentiable(a) or _perturbed(a) else None for a in args]
    expr = cls(*(a if d is None else d for d, a in zip(dummies, args)), **kwargs)
    pairs = [(d, a) for d, a in zip(dummies, args) if d is not None]
    return [None if d is None else _at(sp.diff(expr, d), pairs) for d in dummies]


def _value_at_duals(cls, args, kwargs):
    """cls(*args) where some arguments are dual numbers (forward over forward): a dual, by `_at`."""
    dummies = [sp.Dummy() if _differentiable(a) or _perturbed(a) else None for a in args]
    expr = cls(*(a if d is None else d for d, a in zip(dummies, args)), **kwargs)
    return _at(expr, [(d, a) for d, a in zip(dummies, args) if d is not None])


def _at(expr, pairs):
    """expr, a function of the dummies of `pairs` ((dummy, value) each), at their values, some of them
    dual numbers: a dual whose tangent is the chain rule's, by sympy's derivatives of expr."""
    duals = [a for _, a in pairs if _perturbed(a)]
    if not duals:
        return expr.subs(dict(pairs))
    top = max(duals, key=lambda a: a.tag.order)  # (the innermost derivative's tag, as the duals' own)
    tag = top.tag
    plain = [(d, a.primal if _perturbed(a) and a.tag is tag else a) for d, a in pairs]
    dy = None
    for d, a in pairs:
        if _perturbed(a) and a.tag is tag:
            term = a.tangent * _at(sp.diff(expr, d), plain)
            dy = term if dy is None else dy + term
    return type(top)(_at(expr, plain), dy, tag)


def _make(cls) -> Rule:
    def adjoint(dy, y, *args, **kwargs):
        if dy is None:
            return (None,) * len(args)
        return tuple(None if p is None else project(dy * p, a)
                     for p, a in zip(partials(cls, args, kwargs), args))

    def frule(tangents, *args, **kwargs):
        y = cls(*args, **kwargs) if not any(_perturbed(a) for a in args) else _value_at_duals(cls, args, kwargs)
        dy = None
        for p, t in zip(partials(cls, args, kwargs), tangents):
            if p is not None and t is not None:
                dy = t * p if dy is None else dy + t * p
        return y, (sp.Integer(0) if dy is None else dy)

    adjoint.__name__ = adjoint.__qualname__ = f"{cls.__name__}_adjoint"
    frule.__name__ = frule.__qualname__ = f"{cls.__name__}_frule"
    return Rule(fn=cls, adjoint=adjoint, frule=frule, kind="symbolic", sparsity=NONLINEAR)


def _expression_class(cls) -> bool:
    return issubclass(cls, sp.Basic) and not issubclass(cls, (sp.Symbol, sp.Integer))


registry.family(_expression_class, _make)


def sympify_adjoint(dy, y, a, *args, **kwargs):
    return (project(dy, a),) + (None,) * len(args)


def sympify_frule(tangents, a, *args, **kwargs):
    t = tangents[0] if tangents else None
    return sp.sympify(a, *args, **kwargs), (None if t is None else sp.sympify(t))


for _fn in (sp.sympify, sp.S):
    registry.adjoint(_fn, kind="linear")(sympify_adjoint)
    registry.frule(_fn)(sympify_frule)
    registry.sparsity(LINEAR, _fn)
# names and integers (`Integer(2.7)` is 2: the derivative of a truncation is 0, as `int`'s)
registry.nondifferentiable(sp.Symbol, sp.Dummy, sp.Integer, sp.symbols)
