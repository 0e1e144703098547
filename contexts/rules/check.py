"""Check rules against finite differences: `numerical_gradient` and `check_rule` (a gradcheck for rules).

>>> import math
>>> import contexts.rules  # registers every rule
>>> numerical_gradient(lambda x, y: x * y, 3.0, 2.0)
(2.0, 3.0)
>>> check_rule(math.sin, 0.3)      # passes silently, raises AssertionError on a wrong rule

The adjoint is checked on a random cotangent dy: its cotangents must be the gradient of the real loss
<dy, f(x)> (so <adjoint(dy), dx> == <dy, J dx> for every dx); the frule on a random tangent dx against
the directional derivative. Complex arguments follow Zygote's convention (gradient dl/dx + i dl/dy).
With Fraction arguments the cotangents must also be exact Fractions; with ufloat arguments both the
nominal values and the standard deviations of the cotangents are checked (the latter against the
finite-difference Hessian: std(g_i) = sqrt(sum_j (H_ij sigma_j)^2)).
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import Any, Callable

import numpy as np
from uncertainties.core import AffineScalarFunc as _UFloat

from .registry import Rule, registry

__all__ = ["numerical_gradient", "check_rule", "pullback_of"]

# Central stencils (offset, weight): f'(x) ~ sum(weight * f(x + offset * h)) / h
_STENCILS = {
    2: ((-1, -1 / 2), (1, 1 / 2)),
    4: ((-2, 1 / 12), (-1, -8 / 12), (1, 8 / 12), (2, -1 / 12)),
}


def trusted_slope(at: Callable[[float], float], h: float):
    """d/dt at(t) at t = 0 by the 4-point central stencil, or None where it cannot be trusted: an error,
    a value not finite, or one-sided differences that disagree (a kink, abs at 0 or max at a tie, or
    strong curvature). The check modes compare rules with it at the operands a program actually used."""
    try:
        with np.errstate(all="ignore"):
            values = {k: at(k * h) for k in (-2, -1, 0, 1, 2)}
    except Exception:
        return None
    if not all(math.isfinite(v) for v in values.values()):
        return None
    right, left = (values[1] - values[0]) / h, (values[0] - values[-1]) / h
    if abs(right - left) > 1e-2 * (abs(right) + abs(left)) + 1e-6:
        return None
    return sum(c * values[k] for k, c in _STENCILS[4]) / h


def _differentiable(x) -> bool:
    """Whether finite differences apply to x (floats, Fractions, complex, inexact arrays, sequences)."""
    if isinstance(x, (bool, np.bool_)) or isinstance(x, (int, np.integer)):
        return False
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "fc"
    if isinstance(x, (list, tuple)):
        return any(_differentiable(e) for e in x)
    return isinstance(x, numbers.Complex)  # floats, Fractions, complex and numpy scalars


def _slope(evaluate: Callable[[Any], float], x, step, order: int):
    """d/dt evaluate(x + t * step / |step|) at 0 by the central stencil of that order."""
    if order == 2:
        return (evaluate(x + step) - evaluate(x - step)) / (2 * abs(step))
    return sum(w * evaluate(x + k * step) for k, w in _STENCILS[order]) / abs(step)


def _fd(x, evaluate, eps, order=4):
    """Gradient of the real function `evaluate` at x, shaped like x (None where not differentiable)."""
    if isinstance(x, (list, tuple)):
        def at(i):
            return lambda v: evaluate(type(x)(v if j == i else e for j, e in enumerate(x)))
        return [_fd(e, at(i), eps, order) for i, e in enumerate(x)]
    if not _differentiable(x):
        return None
    if isinstance(x, np.ndarray):
        out = np.zeros(x.shape, dtype=np.result_type(x.dtype, float))
        for idx in np.ndindex(x.shape):
            def at_idx(v, idx=idx):
                z = x.astype(out.dtype)
                z[idx] = v
                return evaluate(z)
            out[idx] = _fd(x[idx].item(), at_idx, eps, order)
        return out
    if isinstance(x, (complex, np.complexfloating)):  # Zygote's convention: dl/dRe + i dl/dIm
        z = complex(x)
        return _slope(evaluate, z, eps, order) + 1j * _slope(evaluate, z, 1j * eps, order)
    return _slope(evaluate, float(x), eps, order)


def numerical_gradient(f: Callable, *args, eps: float = 1e-3, order: int = 4, exact_digits: bool = False,
                       **kwargs) -> tuple:
    """Central-difference gradient of a real scalar function, one entry per argument.

    Floats and Fractions are perturbed as floats, complex numbers along 1 and 1j (Zygote's
    dl/dx + i dl/dy), arrays and lists/tuples element by element; ints, bools and other values
    get None. Keyword arguments are passed through and not differentiated. order=4: the five-point
    stencil with step eps (accurate to ~1e-10 on smooth functions); order=2: (f(x + eps) - f(x - eps)) /
    2 eps. Scalar results are rounded to 12 significant digits (finite-difference noise) unless
    `exact_digits`.

    >>> numerical_gradient(lambda z: abs(z) ** 2, 3 + 4j)
    ((6+8j),)
    >>> tuple(round(g, 9) for g in numerical_gradient(pow, 2.0, 3.0))
    (12.0, 5.545177444)
    """
    if order not in _STENCILS:
        raise ValueError(f"order must be one of {sorted(_STENCILS)}, not {order!r}")

    def at(i):
        return lambda v: _real(f(*args[:i], v, *args[i + 1:], **kwargs))
    grads = (_fd(a, at(i), eps, order) for i, a in enumerate(args))
    return tuple(grads) if exact_digits else tuple(map(_round_tiny, grads))


def _round_tiny(g):
    """Round finite-difference noise so doctests and messages read well (1e-13 relative)."""
    if isinstance(g, float):
        return float(f"{g:.12g}")
    if isinstance(g, complex):
        return complex(float(f"{g.real:.12g}"), float(f"{g.imag:.12g}"))
    return g


def _real(v) -> float:
    v = complex(v) if not isinstance(v, (float, int)) else v
    if isinstance(v, complex):
        if abs(v.imag) > 1e-12 * max(1.0, abs(v.real)):
            raise ValueError(f"a gradient needs a real-valued function, got {v}")
        return v.real
    return float(v)


# -- structured helpers ------------------------------------------------------------------------

def _random_like(x, rng):
    """A random tangent/cotangent shaped like x; None for non-differentiable parts."""
    if isinstance(x, (list, tuple)):
        return type(x)(_random_like(e, rng) for e in x)
    if not _differentiable(x):
        return None
    if isinstance(x, np.ndarray):
        r = rng.normal(size=x.shape)
        return r + 1j * rng.normal(size=x.shape) if x.dtype.kind == "c" else r
    if isinstance(x, complex):
        return complex(rng.normal(), rng.normal())
    return float(rng.normal())


def _inner(a, b) -> float:
    """Real inner product Re sum(conj(a) * b) of two like-structured values; None is zero."""
    if a is None or b is None:
        return 0.0
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return sum(_inner(x, y) for x, y in zip(a, b))
    return float(np.real(np.sum(np.conj(a) * b)))


def _axpy(x, h, t):
    """x + h * t on like-structured values (t None: x unchanged)."""
    if t is None:
        return x
    if isinstance(x, (list, tuple)):
        return type(x)(_axpy(e, h, d) for e, d in zip(x, t))
    if isinstance(x, Fraction):
        x = float(x)
    return x + h * t


def _close(got, want, rtol, atol) -> bool:
    if want is None:
        return True
    if isinstance(want, list):
        got = [None] * len(want) if got is None else list(got)
        return len(got) == len(want) and all(_close(g, w, rtol, atol) for g, w in zip(got, want))
    got = 0.0 if got is None else got
    try:
        return bool(np.allclose(np.asarray(got, dtype=complex), np.asarray(want, dtype=complex),
                                rtol=rtol, atol=atol))
    except (TypeError, ValueError):
        return False


def _same_primal(a, b) -> bool:
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same_primal(x, y) for x, y in zip(a, b))
    try:
        return bool(np.allclose(np.asarray(a, dtype=complex), np.asarray(b, dtype=complex),
                                rtol=1e-12, atol=0, equal_nan=True))
    except (TypeError, ValueError):
        return a == b


def pullback_of(rule: Rule, fn, dy, args, kwargs, y=None) -> tuple:
    """The cotangents a rule gives for dy, whichever reverse form (adjoint or rrule) it has.

    >>> import contexts.rules
    >>> pullback_of(registry.get(max), max, 1.0, ([1.0, 5.0],), {})
    ([None, 1.0],)
    """
    if rule.adjoint is not None:
        return tuple(rule.adjoint(dy, fn(*args, **kwargs) if y is None else y, *args, **kwargs))
    if rule.rrule is not None:
        _, pullback = rule.rrule(*args, **kwargs)
        return tuple(pullback(dy))
    raise AssertionError(f"rule for {_name(fn)} has neither an adjoint nor an rrule")


def _name(fn) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


def _fail(fn, args, kwargs, what, got, want):
    raise AssertionError(f"rule for {_name(fn)}{args}{' ' + str(kwargs) if kwargs else ''}: {what}\n"
                         f"  rule gives:   {got!r}\n  expected:     {want!r}")


# -- the checks ----------------------------------------------------------------------------------

def check_rule(fn: Callable, *args, rtol: float = 1e-6, atol: float = 1e-8, seed: int = 0,
               rule: Rule | None = None, **kwargs) -> None:
    """Check the registered rule of fn at args against finite differences; AssertionError if wrong.

    `rule` checks a Rule object that is not (yet) registered; by default, fn's registered rule.
    Float/complex/array arguments: adjoint (or rrule) and frule with a random (co)tangent.
    Fraction arguments: additionally, Fraction cotangents and tangents must stay Fractions.
    ufloat arguments: the cotangents' nominal values and standard deviations.

    >>> import operator
    >>> import contexts.rules
    >>> from fractions import Fraction
    >>> check_rule(operator.truediv, Fraction(1, 3), Fraction(2, 5))
    """
    rule = rule or registry.get(fn)
    if rule is None:
        raise AssertionError(f"no rule registered for {_name(fn)}")
    if rule.nondifferentiable:
        got = pullback_of(rule, fn, 1.0, args, kwargs)
        if any(g is not None for g in got):
            _fail(fn, args, kwargs, "non-differentiable rule returned a cotangent", got, (None,) * len(args))
        return
    if any(isinstance(a, _UFloat) for a in _leaves(args)):
        return _check_uncertain(rule, fn, args, kwargs, rtol=max(rtol, 1e-5), atol=max(atol, 1e-7))
    rng = np.random.default_rng(seed)
    _check_reverse(rule, fn, args, kwargs, rng, rtol, atol)
    if rule.frule is not None:
        _check_forward(rule, fn, args, kwargs, rng, rtol, atol)
    if any(isinstance(a, Fraction) for a in _leaves(args)):
        _check_exact(rule, fn, args, kwargs)


def _leaves(args):
    for a in args:
        if isinstance(a, (list, tuple)):
            yield from _leaves(a)
        else:
            yield a


def _check_reverse(rule, fn, args, kwargs, rng, rtol, atol):
    y = fn(*args, **kwargs)
    dy = _random_like(y, rng)
    if rule.rrule is not None:
        y2, _ = rule.rrule(*args, **kwargs)
        if not _same_primal(y2, y):
            _fail(fn, args, kwargs, "rrule's primal differs from the function's", y2, y)
    got = pullback_of(rule, fn, dy, args, kwargs, y)
    by_name = {}
    if kwargs and len(got) == len(args) + 1 and isinstance(got[-1], dict):  # (keyword arguments' cotangents)
        got, by_name = got[:-1], got[-1]
    if len(got) != len(args):
        _fail(fn, args, kwargs, "wrong number of cotangents", len(got), len(args))
    want = numerical_gradient(lambda *a: _inner(dy, fn(*a, **kwargs)), *args)
    for i, (g, w) in enumerate(zip(got, want)):
        if not _close(g, w, rtol, atol):
            _fail(fn, args, kwargs, f"cotangent of argument {i} (dy = {dy!r})", g, w)
    for name, g in by_name.items():
        if g is None:
            continue
        (w,) = numerical_gradient(lambda v: _inner(dy, fn(*args, **{**kwargs, name: v})), kwargs[name])
        if not _close(g, w, rtol, atol):
            _fail(fn, args, kwargs, f"cotangent of keyword argument {name} (dy = {dy!r})", g, w)


def _check_forward(rule, fn, args, kwargs, rng, rtol, atol):
    y = fn(*args, **kwargs)
    tangents = tuple(_random_like(a, rng) for a in args)
    y2, dy = rule.frule(tangents, *args, **kwargs)
    if not _same_primal(y2, y):
        _fail(fn, args, kwargs, "frule's primal differs from the function's", y2, y)
    probe = _random_like(y, rng)  # compare <probe, J t> with the frule's <probe, dy>
    want = _slope(lambda h: _inner(probe, fn(*(_axpy(a, h, t) for a, t in zip(args, tangents)), **kwargs)),
                  0.0, 1e-3, 4)
    got = _inner(probe, dy)
    if not _close(got, want, rtol, atol):
        _fail(fn, args, kwargs, f"frule tangent along {tangents!r} (projected on {probe!r})", dy, want)


def _check_exact(rule, fn, args, kwargs):
    """Rational rules on Fractions: cotangents and tangents of Fraction arguments are Fractions."""
    y = fn(*args, **kwargs)
    if not isinstance(y, Fraction):
        return
    got = pullback_of(rule, fn, Fraction(2, 7), args, kwargs, y)
    for i, (a, g) in enumerate(zip(args, got)):
        if not _exact_like(g, a):
            _fail(fn, args, kwargs, f"cotangent of Fraction argument {i} is not exact", g, "Fractions")
    if rule.frule is not None:
        _, dy = rule.frule(tuple(_fraction_tangent(a) for a in args), *args, **kwargs)
        if not isinstance(dy, (Fraction, int)):
            _fail(fn, args, kwargs, "tangent of a Fraction computation is not exact", dy, "a Fraction")


def _fraction_tangent(a):
    if isinstance(a, (list, tuple)):
        return type(a)(_fraction_tangent(e) for e in a)
    return Fraction(1, 3) if isinstance(a, Fraction) else None


def _exact_like(g, a) -> bool:
    """Every cotangent of a Fraction (leaf of a) is a Fraction, an int or None (zero)."""
    if isinstance(a, (list, tuple)):
        return g is None or all(_exact_like(x, y) for x, y in zip(g, a))
    return not isinstance(a, Fraction) or g is None or isinstance(g, (Fraction, int))


def _nominal(x):
    return x.nominal_value if isinstance(x, _UFloat) else x


def _std(x) -> float:
    return x.std_dev if isinstance(x, _UFloat) else 0.0


def _check_uncertain(rule, fn, args, kwargs, rtol, atol):
    """ufloat arguments: g_i = df/dx_i (nominal) with std sqrt(sum_j (H_ij sigma_j)^2)."""
    nominal = tuple(_nominal(a) for a in args)
    sigma = [_std(a) for a in args]
    active = [i for i, a in enumerate(args) if isinstance(a, _UFloat)]
    got = pullback_of(rule, fn, 1.0, args, kwargs)

    def grad(i):
        return lambda *a: numerical_gradient(fn, *a, **kwargs)[i]

    for i in active:
        want_nominal = numerical_gradient(fn, *nominal, **kwargs)[i]
        row = numerical_gradient(grad(i), *nominal, eps=1e-2)
        want_std = float(np.sqrt(sum((row[j] * sigma[j]) ** 2 for j in active)))
        if not _close(_nominal(got[i]), want_nominal, rtol, atol):
            _fail(fn, args, kwargs, f"nominal value of the cotangent of argument {i}", got[i], want_nominal)
        if not _close(_std(got[i]), want_std, 1e-4, 1e-7):
            _fail(fn, args, kwargs, f"standard deviation of the cotangent of argument {i}", got[i], want_std)
