"""Rules for numpy's elementwise ufuncs and their elementwise cousins (`np.clip`, `np.where`, `np.real`,
`np.imag`, `np.angle`, `np.sinc`), reverse and forward side by side.

Conventions shared by every rule here:
- Cotangents follow their primal (`_util.match_primal`): broadcasting undone, float32 stays float32,
  a real primal gets a real cotangent, a Python float gets a Python float.
- Integer and boolean arguments (Python ints, int/bool arrays) get a `None` cotangent, as in JAX: they
  have no tangent space, and most are constants (`x ** 2`, `2 * x`) whose cotangent would cost a full
  pass over the data. Differentiate at `3.0`, not `3`.
- Complex numbers follow Zygote: a holomorphic f gets `dy * conj(f'(z))`; real-valued functions of a
  complex argument (`abs`, `angle`, `real`, `imag`) return `dl/dx + i dl/dy`.
- The ufunc keyword `where=` masks the cotangents; other ufunc keywords (`dtype=`, `casting=`) only
  change the result's type, which `match_primal` undoes.
- Ties of `maximum`/`minimum`/`fmax`/`fmin` split the cotangent evenly between both arguments
  (the subgradient in the middle, as for `np.max`), so `maximum(x, x)` has gradient 1.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..leaves import ArrayLeaf, as_array  # np.asarray, but a dask array is left as it is
from ..generic import _ONES, dropped_nan_zero
from ..operator import pow_dx
from ..registry import NoClosedForm, registry
from ..ties import SINGULAR_AT, at_tip, cone_tip, kink_tie, note_kink, note_tie, plain, told
from ..sparsity_specs import LINEAR, NONDIFF, STRUCTURAL, Custom, Elementwise
from ._util import match_primal as _match_primal

__all__ = ["ufunc_rule", "inexact", "match_primal"]

_ndarray = np.ndarray
_F8D = np.dtype(np.float64)
_isfinite = math.isfinite
_f8 = np.float64


def match_primal(g: Any, x: Any) -> Any:
    """`_util.match_primal`, exiting at once when g already has x's type, shape and dtype (the usual case)."""
    if type(g) is _ndarray and type(x) is _ndarray and g.shape == x.shape and g.dtype == x.dtype:
        return g
    return _match_primal(g, x)


def conj(v: Any) -> Any:
    """Complex conjugate; v itself (no copy) for real values."""
    dtype = getattr(v, "dtype", None)
    if dtype is not None:
        return v.conjugate() if dtype.kind == "c" else v
    return v.conjugate() if isinstance(v, complex) else v


def inexact(x: Any) -> bool:
    """x can carry a cotangent: a float/complex/object scalar or array, a list of them; not an int or bool."""
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype.kind in "fcO"
    return x is not None and not isinstance(x, int)


def _fit(t: Any, y: Any) -> Any:
    """A tangent broadcast to the shape of the primal output y (partials may be scalars)."""
    shape = np.shape(y)
    if t is None or np.shape(t) == shape:
        return t
    return np.array(np.broadcast_to(t, shape))


def _safe_div(n: Any, d: Any) -> Any:
    """n / d with 0 where d == 0 (the limit used for |x| at 0, hypot at the origin, ...)."""
    zero = d == 0
    if type(n).__name__ == "Dual" and np.any(zero):  # (a cone's tip under an outer derivative)
        at_tip(n)
    return n / np.where(zero, 1, d)


def _masked(g: Any, where: Any) -> Any:
    """Cotangent g with zeros where the ufunc's `where=` mask is False."""
    return g if where is True else np.where(where, g, 0)


def ufunc_rule(fn: Any, *partials: Callable | None, name: str | None = None, nout: int = 1) -> None:
    """Register adjoint and frule of an elementwise fn from its partial derivatives.

    `partials[i](y, *args)` is d y / d args[i] at the primal point (holomorphic for complex), `None`
    where the argument is not differentiable; `OneOver(d)` gives one as a quotient `1 / d(y, *args)`;
    `registry.NoClosedForm(...)` marks an argument with a derivative the rules cannot compute (refused
    where it is differentiated, never a zero). With `nout > 1` (modf, frexp) only the first output is differentiable. The partials are the one
    statement of the derivative: the adjoint, the frule and a unary fn's fast cotangent (`Rule.hot`, for
    a real array and a cotangent of its shape and dtype) are all made from them. Example:

    >>> import numpy as np
    >>> from contexts.rules.registry import registry
    >>> def cube(x):
    ...     return x ** 3
    >>> ufunc_rule(cube, lambda y, x: 3 * x ** 2)
    >>> registry.get(cube).adjoint(np.ones(2), cube(np.array([1.0, 2.0])), np.array([1.0, 2.0]))
    (array([ 3., 12.]),)
    """
    label = name or getattr(fn, "__name__", "fn")
    nin = len(partials)

    first = partials[0] if partials else None
    hot = _hot(first) if nin == 1 and nout == 1 and first is not None else None

    def adjoint(dy, y, *args, **kwargs):
        if nin == 1 and nout == 1 and first is not None and len(args) == 1 and not kwargs:
            a = args[0]  # the hot case: a real array and its cotangent, same shape and dtype
            ta = type(a)
            if ta is np.ndarray:
                if (type(dy) is np.ndarray and a.dtype.kind == "f" and dy.dtype == a.dtype
                        and dy.shape == a.shape and a.ndim):
                    return (hot(dy, y, a),)
            elif (ta is _f8 or ta is float) and (type(dy) is float or type(dy) is _f8):
                g = dropped_nan_zero(dy * first(y, a), dy, y)  # a real scalar: the type of a back
                tg = type(g)
                if tg is ta:
                    return (g,)
                if tg is float or tg is _f8:
                    return (ta(g),)
        if nout > 1:
            dy, y = dy[0] if dy is not None else None, y[0]
        if dy is None:
            return (None,) * len(args)
        mask = kwargs.get("where", True) if kwargs else True
        operands = args[:nin] if len(args) > nin else args
        values = _as_values(operands)
        cts = []
        for p, a in zip(partials, operands):
            if p is None or not inexact(a):
                cts.append(None)
            elif type(p) is NoClosedForm:
                cts.append(p.cotangent())
            else:
                g = dropped_nan_zero(dy * conj(p(y, *values)), dy, y)
                cts.append(match_primal(g if mask is True else np.where(mask, g, 0), a))
        return tuple(cts) + (None,) * (len(args) - len(cts))

    def frule(tangents, *args, **kwargs):
        out = fn(*args, **kwargs)
        y = out[0] if nout > 1 else out
        operands = args[:nin]
        values = _as_values(operands)
        dy = None
        for p, t, a in zip(partials, tangents, operands):
            if t is None or p is None:
                continue
            if type(p) is NoClosedForm:
                if p.refuses(t, a):
                    raise p.error()
                continue
            term = t * p(y, *values)
            dy = term if dy is None else dy + term
        dy = _fit(_masked(dy, kwargs.get("where", True)) if dy is not None else None, y)
        return out, ((dy,) + (None,) * (nout - 1) if nout > 1 else dy)

    adjoint.__name__ = adjoint.__qualname__ = f"{label}_adjoint"
    frule.__name__ = frule.__qualname__ = f"{label}_frule"
    registry.adjoint(fn, kind="elementwise")(adjoint)
    registry.frule(fn, kind="elementwise")(frule)
    registry.set_kind("elementwise", fn, partials=partials)
    if hot is not None:
        registry.set(fn, hot=hot)
    if nin == 2 and nout == 1:
        registry.set(fn, hot_one=_hot_one(partials))


def _as_values(operands: tuple) -> tuple:
    """The operands as the partials take them: a list or tuple of numbers as the array numpy made of it
    (`2 * [x]` repeats a list: `np.square([x])`'s derivative came out half, `1 / [x]` raised)."""
    for a in operands:
        if type(a) is list or type(a) is tuple:
            return tuple(np.asarray(v) if type(v) is list or type(v) is tuple else v for v in operands)
    return operands


def _rules(*keys: Any, kind: str = "elementwise") -> Callable:
    """Class-free pairing: `@_rules(np.f)` on a function returning (adjoint, frule) registers both."""
    def register(make: Callable) -> Callable:
        adjoint, frule = make()
        for key in keys:
            registry.adjoint(key, kind=kind)(adjoint)
            registry.frule(key, kind=kind)(frule)
        return make
    return register


# -- the fast cotangent, from the partial: dy * partial for real arrays, in its one fresh temporary -------

class OneOver:
    """A partial given as a quotient, `1 / denominator(y, *args)` (`log`: `OneOver(lambda y, x: x)`): the
    fast cotangent is then one division, `dy / denominator`, not a reciprocal and a product."""

    __slots__ = ("denominator",)

    def __init__(self, denominator: Callable) -> None:
        self.denominator = denominator

    def __call__(self, y, *args):
        return 1 / self.denominator(y, *args)


def _scratch(d, dy, *inputs) -> bool:
    """d is an array a partial just made for this call (not one of its inputs or a view of one), of dy's
    shape and dtype: the cotangent may be written into it."""
    if type(d) is not _ndarray:
        return False
    for v in inputs:  # (a loop, not a generator: this runs per elementwise operation; `is` first, cheapest)
        if d is v:
            return False
    if d.base is not None:
        return False
    dt = d.dtype
    return (dt is dy.dtype or dt == dy.dtype) and d.shape == dy.shape


def _hot(partial: Callable) -> Callable:
    """`hot(dy, y, x)`: the cotangent `dy * partial(y, x)` of a real array x, for a cotangent dy of its
    shape and dtype (the common case), written into the partial's own array where it made one for the
    call (not y, x or a view of them; its shape and dtype: the tests are inline, this runs per call)."""
    # (`_scratch` and `dropped_nan_zero`'s first case, a finite float64 array, inline: this runs per
    # elementwise pullback, and each call costs as much as the product)
    if type(partial) is OneOver:
        denominator = partial.denominator

        def hot(dy, y, x):
            d = denominator(y, x)
            if type(d) is _ndarray and d is not y and d is not x and d.base is None and (
                    (dt := d.dtype) is dy.dtype or dt == dy.dtype) and d.shape == dy.shape:
                g = np.divide(dy, d, out=d)
            else:
                g = dy / d
            if type(g) is _ndarray and g.dtype is _F8D and (ones := _ONES.get(g.shape)) is not None and _isfinite(
                    g.dot(ones)):
                return g
            return dropped_nan_zero(g, dy, y)
    else:
        def hot(dy, y, x):
            p = partial(y, x)
            if type(p) is _ndarray and p is not y and p is not x and p.base is None and (
                    (dt := p.dtype) is dy.dtype or dt == dy.dtype) and p.shape == dy.shape:
                p *= dy
                g = p
            else:
                g = dy * p
            if type(g) is _ndarray and g.dtype is _F8D and (ones := _ONES.get(g.shape)) is not None and _isfinite(
                    g.dot(ones)):
                return g
            return dropped_nan_zero(g, dy, y)
    return hot


def _hot_one(partials: tuple) -> Callable:
    """`hot_one(dy, y, a, b, i)` (`Rule.hot_one`): the cotangent `dy * partials[i](y, a, b)` of a binary
    fn's argument i alone, a real array of dy's shape and dtype, the other's partial never computed."""
    def hot_one(dy, y, a, b, i):
        p = partials[i]
        if p is None:
            return None
        if type(p) is NoClosedForm:
            return p.cotangent()
        x = b if i else a
        d = p(y, a, b)
        if _scratch(d, dy, y, a, b):
            d *= dy  # the partial's own new array
            return dropped_nan_zero(d, dy, y)
        return match_primal(dropped_nan_zero(dy * conj(d), dy, y), x)  # (d has at most y's shape: dy's)
    return hot_one


def _negated(v):
    """-v, in v's own memory when it is an array a partial just made (`np.sin(x)` for cos)."""
    return np.negative(v, out=v) if type(v) is np.ndarray else -v


# -- linear ufuncs: the cotangent is a transposed map of dy ------------------------------------------

@_rules(np.add, kind="linear")
def _add():
    def add_adjoint(dy, y, a, b, *rest, **kwargs):
        if dy is None:
            return (None, None) + (None,) * len(rest)
        dy = _masked(dy, kwargs.get("where", True))
        return (match_primal(dy, a) if inexact(a) else None,
                match_primal(dy, b) if inexact(b) else None) + (None,) * len(rest)

    def add_frule(tangents, a, b, *rest, **kwargs):
        y = np.add(a, b, *rest, **kwargs)
        ta, tb = tangents[0], tangents[1]
        dy = tb if ta is None else ta if tb is None else ta + tb
        return y, _fit(_masked(dy, kwargs.get("where", True)) if dy is not None else None, y)
    return add_adjoint, add_frule


@_rules(np.subtract, kind="linear")
def _subtract():
    def subtract_adjoint(dy, y, a, b, *rest, **kwargs):
        if dy is None:
            return (None, None) + (None,) * len(rest)
        dy = _masked(dy, kwargs.get("where", True))
        return (match_primal(dy, a) if inexact(a) else None,
                match_primal(-dy, b) if inexact(b) else None) + (None,) * len(rest)

    def subtract_frule(tangents, a, b, *rest, **kwargs):
        y = np.subtract(a, b, *rest, **kwargs)
        ta, tb = tangents[0], tangents[1]
        dy = (None if tb is None else -tb) if ta is None else ta if tb is None else ta - tb
        return y, _fit(_masked(dy, kwargs.get("where", True)) if dy is not None else None, y)
    return subtract_adjoint, subtract_frule


def _unary_linear(fn: Any, forward: Callable, transpose: Callable, label: str, *keys: Any) -> None:
    """Register a unary linear map: the frule applies `forward` to the tangent, the adjoint `transpose`."""
    def adjoint(dy, y, x, *rest, **kwargs):
        if dy is None or not inexact(x):
            return (None,) * (1 + len(rest))
        return (match_primal(_masked(transpose(dy), kwargs.get("where", True)), x),) + (None,) * len(rest)

    def frule(tangents, x, *rest, **kwargs):
        y = fn(x, *rest, **kwargs)
        t = tangents[0] if tangents else None
        return y, (None if t is None else _masked(forward(t), kwargs.get("where", True)))

    adjoint.__name__ = adjoint.__qualname__ = f"{label}_adjoint"
    frule.__name__ = frule.__qualname__ = f"{label}_frule"
    for key in (fn,) + keys:
        registry.adjoint(key, kind="linear")(adjoint)
        registry.frule(key, kind="linear")(frule)


_DEG = 180.0 / math.pi
_unary_linear(np.negative, np.negative, np.negative, "negative", (np.ndarray, "__neg__"))
_unary_linear(np.positive, np.positive, np.positive, "positive", (np.ndarray, "__pos__"))
_unary_linear(np.conjugate, np.conjugate, np.conjugate, "conjugate",
              (np.ndarray, "conj"), (np.ndarray, "conjugate"))
_unary_linear(np.deg2rad, np.deg2rad, np.deg2rad, "deg2rad")
_unary_linear(np.radians, np.radians, np.radians, "radians")
_unary_linear(np.rad2deg, np.rad2deg, np.rad2deg, "rad2deg")
_unary_linear(np.degrees, np.degrees, np.degrees, "degrees")
_unary_linear(np.real, np.real, lambda dy: np.real(dy), "real")

# -- arithmetic ---------------------------------------------------------------------------------------


def _dpower_base(y, x, p):
    """d x**p / dx = p x**(p-1), taken as 0 where p == 0 and x == 0 (so 0**0 has derivative 0, not nan).
    Where p == 0 and x != 0 the formula itself is kept: its value is 0, and its derivative in p, x**-1, is what a
    hessian in x and p reads there (a constant 0 gave 0 for 1/x, gen24 W12)."""
    if np.ndim(p) == 0 and not isinstance(p, np.ndarray):
        if p == 2:
            return 2 * x
        if p - p != 0:  # (an infinite exponent, `(1 + r) ** -inf`: 0 where x**(p-1) is, not inf * 0)
            return pow_dx(x, p)
        if p != 0:
            return p * x ** (p - 1)
        if type(p) in (int, float) and type(y) in (float, np.float64, np.ndarray):
            return np.zeros_like(y)  # (a plain exponent 0: no tangent to keep)
        zero = x == 0
        return np.where(zero, 0.0, p * np.where(zero, 1.0, x) ** (p - 1))
    corner = (p == 0) & (x == 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        d = p * np.where(corner, 1.0, x) ** (p - 1)
    d = np.where(corner, 0.0, d)
    if np.any(np.isinf(p)):
        d = np.where(np.isinf(p) & (x ** np.where(p == 0, 1, p - 1) == 0), 0, d)
    return d


def _dpower_exponent(y, x, p):
    """d x**p / dp = x**p log x, taken as 0 where x == 0 (nan for a negative real base)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return y * np.log(np.where(x == 0, 1, x))


ufunc_rule(np.multiply, lambda y, a, b: b, lambda y, a, b: a, name="multiply")
ufunc_rule(np.divide, lambda y, a, b: 1 / b, lambda y, a, b: -y / b, name="divide")
ufunc_rule(np.power, _dpower_base, _dpower_exponent, name="power")
ufunc_rule(np.float_power, _dpower_base, _dpower_exponent, name="float_power")
ufunc_rule(np.reciprocal, lambda y, x: _negated(np.square(y)), name="reciprocal")
ufunc_rule(np.square, lambda y, x: 2 * x, name="square")
ufunc_rule(np.sqrt, OneOver(lambda y, x: 2 * y), name="sqrt")
ufunc_rule(np.cbrt, OneOver(lambda y, x: 3 * y * y), name="cbrt")
ufunc_rule(np.fmod, lambda y, a, b: 1.0, lambda y, a, b: -np.trunc(a / b), name="fmod")
ufunc_rule(np.remainder, lambda y, a, b: 1.0, lambda y, a, b: -np.floor_divide(a, b), name="remainder")
ufunc_rule(np.ldexp, lambda y, x, e: np.ldexp(np.ones_like(y), e), None, name="ldexp")
ufunc_rule(np.copysign, lambda y, a, b: np.sign(a) * np.sign(y), None, name="copysign")
# heaviside(x, h0) is h0 where x is 0 (its value there: 0 came out, silently, in h0); a step in x
ufunc_rule(np.heaviside, lambda y, x, h0: np.zeros_like(y),
           lambda y, x, h0: np.where(np.asarray(x) == 0, 1.0, 0.0) + np.zeros_like(y), name="heaviside")
# the identity in x, moved one step (as math.nextafter's rule): was non-differentiable, giving 0
ufunc_rule(np.nextafter, lambda y, a, b: 1.0, None, name="nextafter")
ufunc_rule(np.modf, lambda y, x: 1.0, name="modf", nout=2)
ufunc_rule(np.frexp, lambda y, x: np.ldexp(np.ones_like(y), -np.frexp(x)[1]), name="frexp", nout=2)

# -- exponentials and logarithms ----------------------------------------------------------------------
_LN2, _LN10 = math.log(2.0), math.log(10.0)
ufunc_rule(np.exp, lambda y, x: y, name="exp")
ufunc_rule(np.exp2, lambda y, x: _LN2 * y, name="exp2")
ufunc_rule(np.expm1, lambda y, x: y + 1, name="expm1")
ufunc_rule(np.log, OneOver(lambda y, x: x), name="log")
ufunc_rule(np.log2, OneOver(lambda y, x: _LN2 * x), name="log2")
ufunc_rule(np.log10, OneOver(lambda y, x: _LN10 * x), name="log10")
ufunc_rule(np.log1p, OneOver(lambda y, x: 1 + x), name="log1p")
ufunc_rule(np.logaddexp, lambda y, a, b: np.exp(a - y), lambda y, a, b: np.exp(b - y), name="logaddexp")
ufunc_rule(np.logaddexp2, lambda y, a, b: np.exp2(a - y), lambda y, a, b: np.exp2(b - y),
           name="logaddexp2")

# -- trigonometric and hyperbolic -----------------------------------------------------------------------
ufunc_rule(np.sin, lambda y, x: np.cos(x), name="sin")
ufunc_rule(np.cos, lambda y, x: _negated(np.sin(x)), name="cos")
ufunc_rule(np.tan, lambda y, x: 1 + y * y, name="tan")
# (sqrt(-(x - 1)) sqrt(1 + x), the branch numpy's complex arcsin/arccos take on their cuts, as cmath's
# rules: sqrt(1 - x * x) at x = 1.22 + 0j, and 1 - x's +0 imaginary part, went to the other side of sqrt's
# cut: the imaginary part's derivative of the wrong sign)
# (for real x, 1 - x: -(x - 1) is -0.0 at x = 1, whose sqrt is -0.0, and the partial -inf: arcsin's derivative
# at 1 came out -inf and that of -arcsin(x) +inf where the slope falls to -inf)


def _one_minus(x):
    return -(x - 1) if np.iscomplexobj(x) else 1 - x


ufunc_rule(np.arcsin, lambda y, x: 1 / (np.sqrt(_one_minus(x)) * np.sqrt(1 + x)), name="arcsin")
ufunc_rule(np.arccos, lambda y, x: -1 / (np.sqrt(_one_minus(x)) * np.sqrt(1 + x)), name="arccos")
ufunc_rule(np.arctan, OneOver(lambda y, x: 1 + x * x), name="arctan")
ufunc_rule(np.sinh, lambda y, x: np.cosh(x), name="sinh")
ufunc_rule(np.cosh, lambda y, x: np.sinh(x), name="cosh")
def _dtanh(y, x):
    """1 - y**2, in one fresh array (square is numpy's fastest product)."""
    p = np.square(y)
    return np.subtract(1, p, out=p) if type(p) is np.ndarray else 1 - p


ufunc_rule(np.tanh, _dtanh, name="tanh")
ufunc_rule(np.arcsinh, lambda y, x: 1 / np.sqrt(x * x + 1), name="arcsinh")
ufunc_rule(np.arccosh, lambda y, x: 1 / (np.sqrt(x - 1) * np.sqrt(x + 1)), name="arccosh")
ufunc_rule(np.arctanh, OneOver(lambda y, x: 1 - x * x), name="arctanh")
ufunc_rule(np.arctan2, lambda y, a, b: _safe_div(b, a * a + b * b),
           lambda y, a, b: _safe_div(-a, a * a + b * b), name="arctan2")
ufunc_rule(np.hypot, lambda y, a, b: _safe_div(a, y), lambda y, a, b: _safe_div(b, y), name="hypot")



def _dsinc(y, x):
    """d sinc(x)/dx = (cos(pi x) - sinc(x)) / x; near 0 (|x| < 1e-3, where the difference cancels) its series
    -(pi^2 / 3) x + (pi^4 / 30) x^3: 0 at 0, with the slope of the second derivative (a constant 0 gave
    hessian 0 for -pi^2/3, gen10's W5)."""
    near = abs(x) < 1e-3
    if not np.any(near):
        return (np.cos(math.pi * x) - y) / x
    series = x * (-math.pi ** 2 / 3 + (math.pi ** 4 / 30) * (x * x))
    return np.where(near, series, (np.cos(math.pi * x) - y) / np.where(near, 1, x))


ufunc_rule(np.sinc, _dsinc, name="sinc")

# -- maximum, minimum: ties split evenly --------------------------------------------------------------


def _tie_weight(y, mine, other):
    """1 where `mine` alone produced y, 1/2 where both did (a tie), 0 elsewhere; in y's float dtype."""
    hit = mine == y
    w = np.where(hit, np.where(other == y, 0.5, 1.0), 0.0)
    dtype = np.result_type(y)
    return w.astype(dtype, copy=False) if dtype.kind in "fc" else w


def _extremum_adjoint(generic: Callable, name: str) -> Callable:
    """maximum/minimum/fmax/fmin's adjoint: `_tie_weight` for both operands from two comparisons, the
    halves only where some element ties (ReLU's `np.maximum(a, 0.0)` was 40x its primal through the
    partials, two nested `np.where`s each); options (`where=`, `out`) go to the generic adjoint."""
    def adjoint(dy, y, a, b, *rest, **kwargs):
        if rest or kwargs or dy is None:
            return generic(dy, y, a, b, *rest, **kwargs)
        hit_a, hit_b = np.equal(a, y), np.equal(b, y)  # NaN equals nothing: no cotangent where y is NaN
        tie = np.logical_and(hit_a, hit_b)
        if isinstance(tie, ArrayLeaf) or tie.any():  # (a dask array's: no branch on its values)
            if not isinstance(tie, ArrayLeaf):
                note_kink(f"np.{name}")
            half = 0.5 * tie
            hit_a, hit_b = hit_a - half, hit_b - half
        return (match_primal(_weighted(dy, hit_a), a) if inexact(a) else None,
                match_primal(_weighted(dy, hit_b), b) if inexact(b) else None)
    return adjoint


def _tie_told(name: str) -> Callable:
    """maximum/minimum/fmax/fmin's `ties.told`: a tie whose tangents part told to `ties.kink_tie` (a kink inside
    another's result is judged from the two sides)."""
    def tie_told(values, tangents):
        a, b = (tuple(values) + (None, None))[:2]
        ta, tb = (tuple(tangents) + (None, None))[:2]
        if (ta is not None or tb is not None) and not isinstance(a, ArrayLeaf) and not isinstance(b, ArrayLeaf):
            with np.errstate(invalid="ignore"):
                tied = np.equal(plain(a), plain(b))
            if np.any(tied):
                kink_tie(f"np.{name}", a, b, ta, tb)
    return tie_told


def _weighted(dy, w):
    """dy * w, 0 where w is 0 though dy is not finite there: the argument not taken gets nothing (`sqrt(
    maximum(x, 0))` at x = -2: the inf of sqrt at 0 times 0 made x's cotangent NaN)."""
    g = dy * w
    if isinstance(g, ArrayLeaf):  # (a dask array's: no test of its values, which would compute them)
        return np.where(w != 0, g, 0.0)
    try:
        if np.isfinite(np.sum(g)):  # (one reduction, one sum to tell: ReLU's adjoint is on a hot path)
            return g
    except TypeError:  # (Fractions, objects: no inf)
        return g
    return np.where(w != 0, g, np.zeros_like(g))


def _extremum_one(dy, y, a, b, i):
    """maximum/minimum/fmax/fmin's `hot_one`: argument i's weights alone, a tie (the arguments equal, so
    both gave y; never at a NaN) halved as in the adjoint: ReLU's `np.maximum(x, 0.0)`."""
    mine, other = (b, a) if i else (a, b)
    hit = np.equal(mine, y)
    tie = np.equal(mine, other)
    if tie.any():
        note_kink("np.maximum or np.minimum")
        return _weighted(dy, hit - 0.5 * tie)
    return _weighted(dy, hit)


for _fn in (np.maximum, np.minimum, np.fmax, np.fmin):
    ufunc_rule(_fn, lambda y, a, b: _tie_weight(y, a, b), lambda y, a, b: _tie_weight(y, b, a),
               name=_fn.__name__)
    registry.set(_fn, adjoint=_extremum_adjoint(registry.rules[_fn].adjoint, _fn.__name__), hot_one=_extremum_one)
    told(registry.rules[_fn], _tie_told(_fn.__name__))

    registry.rules[_fn].adjoint.__name__ = f"{_fn.__name__}_adjoint"


def _origin_told(rule) -> None:
    """np.hypot's rules with its origin told as a norm's zero vector is (`ties.cone_tip`: judged from the
    two sides where it moves off it; reverse mode notes it for forward mode to tell)."""
    adjoint = rule.adjoint

    def hypot_adjoint(dy, y, a, b, *rest, **kwargs):
        if dy is not None and not isinstance(y, ArrayLeaf) and type(y).__name__ != "Dual" and not np.all(y):
            note_tie("np.hypot at the origin", None)
        return adjoint(dy, y, a, b, *rest, **kwargs)

    def origin_told(values, tangents):
        a, b = (tuple(values) + (None, None))[:2]
        if isinstance(a, ArrayLeaf) or isinstance(b, ArrayLeaf):
            return
        at = (np.asarray(plain(a)) == 0) & (np.asarray(plain(b)) == 0)
        if np.any(at):
            for t in tuple(tangents)[:2]:
                cone_tip("np.hypot", at, t)
    rule.adjoint = hypot_adjoint
    told(rule, origin_told)


def _hypot_recorded(a, b, *rest, **kwargs):
    """np.hypot as reverse mode records it: at the origin, noted for forward mode to tell (as the adjoint
    does), also where the value only steers and no cotangent reaches the adjoint (`if np.hypot(x, y) < eps:`,
    `np.linalg.norm`'s `_norm_recorded`)."""
    y = np.hypot(a, b, *rest, **kwargs)
    if not isinstance(y, ArrayLeaf) and type(y).__name__ != "Dual" and not np.all(y):
        note_tie("np.hypot at the origin", None)
    return y


_origin_told(registry.get(np.hypot))
registry.set(np.hypot, impl=_hypot_recorded)

# -- absolute value and the real-valued functions of a complex argument -------------------------------


@_rules(np.absolute, np.fabs, (np.ndarray, "__abs__"))
def _absolute():
    def absolute_adjoint(dy, y, x, *rest, **kwargs):
        if dy is None or not inexact(x):
            return (None,) * (1 + len(rest))
        if np.iscomplexobj(x):
            g = dy * _safe_div(x, y)
        else:
            if not isinstance(x, ArrayLeaf) and not np.all(x):  # (an entry at abs's kink: `ties.note_kink`)
                note_kink("np.absolute")
            g = dropped_nan_zero(dy * np.sign(x), dy, y)
        # (a NaN padding no later value shows: 0 where its cotangent is 0, as the elementwise rules' — pandas'
        # `shift(1)` under ta's ATR gave NaN, through a view of the array)
        return (match_primal(_masked(g, kwargs.get("where", True)), x),) + (None,) * len(rest)

    def absolute_frule(tangents, x, *rest, **kwargs):
        y = np.absolute(x, *rest, **kwargs)
        t = tangents[0]
        if t is None:
            return y, None
        if np.iscomplexobj(x):
            dy = np.real(np.conj(x) * t) / np.where(y == 0, 1, y)
        else:
            if not isinstance(x, ArrayLeaf) and not np.all(plain(x)):  # (an entry at abs's kink)
                kink_tie("np.absolute", x, 0.0, t, None)
            dy = t * np.sign(x)
        return y, _masked(dy, kwargs.get("where", True))
    return absolute_adjoint, absolute_frule


@_rules(np.imag, kind="linear")
def _imag():
    def imag_adjoint(dy, y, x):
        if dy is None or not np.iscomplexobj(x):
            return (None,)
        return (match_primal(1j * dy, x),)

    def imag_frule(tangents, x):
        t = tangents[0]
        return np.imag(x), (None if t is None else np.imag(t))
    return imag_adjoint, imag_frule


@_rules(np.angle)
def _angle():
    def angle_adjoint(dy, y, z, *rest, **kwargs):
        deg = rest[0] if rest else kwargs.get("deg", False)
        if dy is None or not np.iscomplexobj(z):
            return (None,) * (1 + len(rest))
        g = dy * _safe_div(1j * z, np.real(z * np.conj(z)))
        return (match_primal(g * _DEG if deg else g, z),) + (None,) * len(rest)

    def angle_frule(tangents, z, *rest, **kwargs):
        deg = rest[0] if rest else kwargs.get("deg", False)
        y, t = np.angle(z, deg), tangents[0]
        if t is None or not np.iscomplexobj(z):
            return y, None
        dy = _safe_div(np.imag(np.conj(z) * t), np.real(z * np.conj(z)))
        return y, dy * _DEG if deg else dy
    return angle_adjoint, angle_frule


# -- clip and where: the cotangent is routed, not scaled ----------------------------------------------

def _clip_bounds(args, kwargs):
    """(lo, hi, lo_positional, hi_positional) of an np.clip / ndarray.clip call."""
    lo = args[1] if len(args) > 1 else kwargs.get("a_min", kwargs.get("min"))
    hi = args[2] if len(args) > 2 else kwargs.get("a_max", kwargs.get("max"))
    return lo, hi


def _clip_sides(a, lo, hi):
    """(below, above): where clip = minimum(maximum(a, lo), hi) takes lo, and where it takes hi (also
    where lo > hi, which numpy does not check: the result is hi there)."""
    below = np.less(a, lo) if lo is not None else False
    if hi is None:
        return below, False
    return below, np.greater(a if lo is None else np.maximum(a, lo), hi)


def _clip_masks(a, lo, hi):
    """((all, half) for a, for lo, for hi): where each of them takes clip's derivative whole, and where half
    of it: a tie of a with a bound splits it, as `np.maximum` splits a tie (one side's derivative was taken
    there, 1 where central differences give 0.5: niapy clips the point in place onto its bounds)."""
    below, above = _clip_sides(a, lo, hi)
    inside = ~(below | above)
    tie_lo = np.equal(a, lo) & inside if lo is not None else False
    tie_hi = np.equal(a, hi) & inside if hi is not None else False
    tied = tie_lo | tie_hi
    return ((inside & ~tied, tie_lo ^ tie_hi), (below & ~above, tie_lo), (above, tie_hi))


def _share(d, whole, half):
    """d where `whole`, d / 2 where `half`, 0 elsewhere (of d's type: Fractions stay exact)."""
    out = np.where(whole, d, 0)
    return np.where(half, d / 2, out) if np.any(half) else out


@_rules(np.clip, (np.ndarray, "clip"))
def _clip():
    def clip_adjoint(dy, y, *args, **kwargs):
        n = len(args)
        if dy is None:
            return (None,) * n
        a = args[0]
        lo, hi = _clip_bounds(args, kwargs)
        ma, mlo, mhi = _clip_masks(a, lo, hi)
        if np.any(ma[1]):  # (a tie with a bound: a kink, `ties.note_kink`)
            note_kink("np.clip")
        cts = [match_primal(_share(dy, *ma), a) if inexact(a) else None]
        if n > 1:
            cts.append(match_primal(_share(dy, *mlo), lo) if inexact(lo) else None)
        if n > 2:
            cts.append(match_primal(_share(dy, *mhi), hi) if inexact(hi) else None)
        cts += [None] * (n - len(cts))
        by_name = {}  # (`a.clip(min=lo)`: the bounds' cotangents by keyword, the registry's trailing dict)
        for key, bound, m in (("a_min", lo, mlo), ("min", lo, mlo), ("a_max", hi, mhi), ("max", hi, mhi)):
            if key in kwargs:
                by_name[key] = match_primal(_share(dy, *m), bound) if inexact(bound) else None
        return tuple(cts) + ((by_name,) if by_name else ())

    def clip_frule(tangents, *args, **kwargs):
        a = args[0]
        y = np.clip(*args, **kwargs)
        lo, hi = _clip_bounds(args, kwargs)
        ta = tangents[0] if tangents[0] is not None else 0.0
        tlo = tangents[1] if len(tangents) > 1 and tangents[1] is not None else 0.0
        thi = tangents[2] if len(tangents) > 2 and tangents[2] is not None else 0.0
        ma, mlo, mhi = _clip_masks(a, lo, hi)
        if np.any(mlo[1]):  # (a tie with a bound whose tangents part: `ties.kink_tie`)
            kink_tie("np.clip", np.where(mlo[1], 0.0, 1.0), 0.0, np.where(mlo[1], ta - tlo, 0.0), None)
        if np.any(mhi[1]):
            kink_tie("np.clip", np.where(mhi[1], 0.0, 1.0), 0.0, np.where(mhi[1], ta - thi, 0.0), None)
        dy = _share(ta, *ma) + _share(tlo, *mlo) + _share(thi, *mhi)
        return y, _fit(dy.astype(np.result_type(y), copy=False) if np.result_type(y).kind == "f" else dy, y)
    return clip_adjoint, clip_frule


@_rules(np.where)
def _where():
    def where_adjoint(dy, y, cond, *branches):
        if dy is None or not branches:
            return (None,) * (1 + len(branches))
        x, z = branches
        return (None,
                match_primal(np.where(cond, dy, 0), x) if inexact(x) else None,
                match_primal(np.where(cond, 0, dy), z) if inexact(z) else None)

    def where_frule(tangents, cond, *branches):
        y = np.where(cond, *branches)
        if not branches or (tangents[1] is None and tangents[2] is None):
            return y, None
        tx = 0.0 if tangents[1] is None else tangents[1]
        tz = 0.0 if tangents[2] is None else tangents[2]
        return y, _fit(np.where(cond, tx, tz), y)
    return where_adjoint, where_frule


@_rules(np.nan_to_num)
def _nan_to_num():
    def nan_to_num_adjoint(dy, y, x, *rest, **kwargs):
        if dy is None or not inexact(x):
            return (None,) * (1 + len(rest))
        return (match_primal(np.where(np.isfinite(x), dy, 0), x),) + (None,) * len(rest)

    def nan_to_num_frule(tangents, x, *rest, **kwargs):
        finite, t = np.isfinite(x), tangents[0]  # (before: `copy=False` changes x)
        y = np.nan_to_num(x, *rest, **kwargs)
        if t is None:
            return y, None
        if y is x and np.ndim(x):
            # in place (`copy=False`): the result is x itself, which a new dual is not (a write through it was lost:
            # sp42 W9's forward form, 0 for 1.4)
            from contexts.rules.registry import MissingRule
            raise MissingRule("forward mode does not follow np.nan_to_num(..., copy=False) of a perturbed array (in "
                              "place: the result is the array itself)", fix="use copy=True (the default) and assign "
                                                                           "the result: `a = np.nan_to_num(a)`")
        return y, np.where(finite, t, 0)
    return nan_to_num_adjoint, nan_to_num_frule


def _nan_to_num_checked(x, *rest, **kwargs):
    """np.nan_to_num as reverse mode runs it on a differentiated array: in place (`copy=False`) over NaN or
    infinite entries refused (the adjoint reads x after the call, finite everywhere by then: the replaced
    entries' constants passed their cotangents on, -25.0 for 8.4, silently); a finite array's is no change."""
    copy = rest[0] if rest else kwargs.get("copy", True)
    if not copy and isinstance(x, np.ndarray) and x.dtype.kind in "fc" and not np.isfinite(x).all():
        from contexts.rules.registry import MissingRule
        raise MissingRule("reverse mode does not follow np.nan_to_num(..., copy=False) replacing entries of a "
                          "differentiated array in place", fix="use copy=True (the default) and assign the "
                                                                "result: `a = np.nan_to_num(a)`")
    return np.nan_to_num(x, *rest, **kwargs)


registry.set(np.nan_to_num, impl=_nan_to_num_checked)


# -- zero derivative everywhere they are defined --------------------------------------------------------

@_rules(np.sign)
def _sign():
    """sign(x): piecewise constant for real x (0 almost everywhere); for complex z, numpy's z/|z| (numpy 2),
    smooth away from 0: d(z/r) = (dz - y Re(conj(y) dz)) / r, and its adjoint has the same form."""
    def _project(g, y, r):
        return (g - y * np.real(np.conj(g) * y)) / np.where(r == 0, 1, r)

    def sign_adjoint(dy, y, x, *rest, **kwargs):
        if dy is None or not np.iscomplexobj(x):
            return (None,) * (1 + len(rest))
        g = _project(dy, y, np.absolute(x))
        return (match_primal(_masked(g, kwargs.get("where", True)), x),) + (None,) * len(rest)

    def sign_frule(tangents, x, *rest, **kwargs):
        y = np.sign(x, *rest, **kwargs)
        t = tangents[0]
        if t is None or not np.iscomplexobj(x):
            return y, None
        return y, _masked(_project(t, y, np.absolute(x)), kwargs.get("where", True))
    return sign_adjoint, sign_frule


registry.nondifferentiable(
    np.floor, np.ceil, np.rint, np.trunc, np.fix, np.round, np.around, (np.ndarray, "round"),
    np.floor_divide, np.spacing, np.signbit,
    np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
    np.logical_and, np.logical_or, np.logical_xor, np.logical_not,
    np.isfinite, np.isinf, np.isnan, np.isnat, np.isclose, np.allclose, np.array_equal,
    np.isreal, np.iscomplex, np.isrealobj, np.iscomplexobj, np.isneginf, np.isposinf,
    np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.bitwise_count, np.invert,
    np.left_shift, np.right_shift, np.gcd, np.lcm,
)


@_rules(np.divmod)
def _divmod():
    def divmod_adjoint(dy, y, a, b, *rest, **kwargs):
        dr = dy[1] if dy is not None else None
        if dr is None:
            return (None, None) + (None,) * len(rest)
        return (match_primal(dr, a) if inexact(a) else None,
                match_primal(-dr * y[0], b) if inexact(b) else None) + (None,) * len(rest)

    def divmod_frule(tangents, a, b, *rest, **kwargs):
        q, r = y = np.divmod(a, b, *rest, **kwargs)
        ta, tb = tangents[0], tangents[1]
        dr = _fit(ta if tb is None else (0 if ta is None else ta) - tb * q, r)
        return y, (None, dr)
    return divmod_adjoint, divmod_frule


# -- sparsity (contexts/rules/sparsity_specs.py) ------------------------------------------------------
# A ufunc without a declared spec is elementwise in every argument, with every second-order pair (the
# sparsity package's default for ufuncs); the declarations below say where fewer partials are nonzero.

def _product_select(primals, constant, shape):
    """x * c with a constant c: no dependency where c is exactly zero."""
    masks = [None, None]
    for i, j in ((0, 1), (1, 0)):
        if constant[j] and primals[j] is not None:
            masks[i] = np.broadcast_to(as_array(primals[j]) != 0, shape)
    return None if masks[0] is None and masks[1] is None else masks


def _taken_select(greater: bool):
    """maximum/minimum at a known point: each element depends on the argument it took."""
    def select(primals, constant, shape):
        a, b = primals
        if a is None or b is None:
            return None
        first = np.broadcast_to(as_array(a >= b if greater else a <= b), shape)
        return [first, ~first]
    return select


registry.sparsity(LINEAR, np.add, np.subtract, np.negative, np.positive, np.conjugate, np.deg2rad,
                  np.rad2deg, np.radians, np.degrees)
registry.sparsity(STRUCTURAL, np.real)
registry.sparsity(Custom("rules.py: elementwise; with copy=False in place, the array itself"), np.nan_to_num)
registry.sparsity(LINEAR, np.fabs, np.remainder, np.fmod)  # piecewise linear
# |z| and z/|z| of complex z are smooth, not piecewise linear or constant; the tracers do not know whether
# a value is complex: every dependence, first and second order, is kept (for real x a superset)
registry.sparsity(Elementwise(), np.absolute, np.sign)
registry.sparsity(Elementwise(second=frozenset({(0, 1)}), select=_product_select), np.multiply)
registry.sparsity(Elementwise(second=frozenset({(0, 1), (1, 1)})), np.divide)
registry.sparsity(Elementwise(first=(True, False), second="none"), np.copysign, np.ldexp, np.nextafter)
registry.sparsity(Elementwise(second="none", select=_taken_select(True)), np.maximum, np.fmax)
registry.sparsity(Elementwise(second="none", select=_taken_select(False)), np.minimum, np.fmin)
registry.sparsity(NONDIFF, np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal,
                  np.logical_and, np.logical_or, np.logical_xor, np.logical_not, np.isnan, np.isinf,
                  np.isfinite, np.signbit, np.floor, np.ceil, np.trunc, np.rint, np.floor_divide,
                  np.heaviside, np.spacing, np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert,
                  np.round, np.around)
registry.sparsity(Custom("ops.py: np.where(cond) alone is np.nonzero; the branch taken in local mode"),
                  np.where)
registry.sparsity(Custom("ops.py: bounds given as None; the side taken in local mode"), np.clip)
registry.sparsity(Custom("ops.py: the np.where's it amounts to (numpy's own code asks a traced condition's "
                         "dtype)"), np.select)


# numpy's functions of a number at a singular point of their own, as math's (`rules.math`): a computed rate of 0
# there may hide a change of second order (`np.cbrt(x ** 3)` at 0 gave forward mode's derivative 0 for 1), so the
# tangent twin has it judged from the two sides (`ties.singular_still`)
for _fn, _singular_at in ((np.sqrt, lambda v: v == 0.0), (np.cbrt, lambda v: v == 0.0),
                          (np.arccos, lambda v: abs(v) == 1.0), (np.arcsin, lambda v: abs(v) == 1.0),
                          (np.arccosh, lambda v: v == 1.0)):
    SINGULAR_AT[_fn] = (f"np.{_fn.__name__}", _singular_at)
del _fn, _singular_at
