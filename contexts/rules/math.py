"""Rules for every function of `math`: each differentiable one has a reverse and a forward rule, the rest
are marked non-differentiable (a coverage test enumerates `dir(math)`).

Partial derivatives are written with `contexts.rules.generic`, so they are differentiable Python
themselves (higher-order AD goes through them) and keep exact or uncertain types where the primal allows:

>>> import math
>>> from contexts.rules import registry
>>> registry.get(math.sin).adjoint(1.0, math.sin(0.0), 0.0)
(1.0,)

Conventions at kinks and edges: `fabs`/`copysign` have derivative 0 in x at x == 0; `fmod`/`remainder`
differentiate as x - n*y with the integer n held fixed; `nextafter(x, y)` as the identity in x; `frexp`
and `modf` return tuples whose integer parts carry no cotangent. Functions of iterables (`fsum`, `prod`,
`dist`, `sumprod`) use the closure (rrule) form, because the iterable may be a one-shot generator; their
cotangent for an iterable is a list with one entry per element.
"""

from __future__ import annotations

import math
import numbers
import types

import numpy as np

from . import generic as g
from .generic import fit, plain
from .operator import pow_dn, pow_dx
from .registry import registry
from .ties import SINGULAR_AT, at_tip, cone_tip, kink_tie, note_kink, note_tie, singular_still, told
from .sparsity_specs import CONCRETE, DENSE, NONLINEAR, Custom, elementwise_spec

__all__ = ["NONDIFFERENTIABLE", "register_elementwise"]

# the generic functions with each one-argument function replaced by its float form (see `_on_floats`)
_FLOAT_G = types.SimpleNamespace(**{**{k: v for k, v in vars(g).items() if not k.startswith("__")},
                                    **g.FLOAT_FORMS})
_LN2, _LN10, _TWO_BY_SQRT_PI = math.log(2.0), math.log(10.0), 2.0 / math.sqrt(math.pi)


# -- one-argument functions: partial(y, x) = dy/dx -------------------------------------------------

def sin_partial(y, x):
    return g.cos(x)


def cos_partial(y, x):
    return -g.sin(x)


def tan_partial(y, x):
    return 1 + y * y


def asin_partial(y, x):
    return 1 / g.sqrt(1 - x * x)


def acos_partial(y, x):
    return -1 / g.sqrt(1 - x * x)


def atan_partial(y, x):
    return 1 / (1 + x * x)


def sinh_partial(y, x):
    return g.cosh(x)


def cosh_partial(y, x):
    return g.sinh(x)


def tanh_partial(y, x):
    return 1 - y * y


def asinh_partial(y, x):
    return 1 / g.sqrt(x * x + 1)


def acosh_partial(y, x):
    return 1 / (g.sqrt(x - 1) * g.sqrt(x + 1))


def atanh_partial(y, x):
    return 1 / (1 - x * x)


def exp_partial(y, x):
    return y


def expm1_partial(y, x):
    return y + 1


def exp2_partial(y, x):
    return y * _LN2


def log1p_partial(y, x):
    return 1 / (1 + x)


def log2_partial(y, x):
    return 1 / (x * _LN2)


def log10_partial(y, x):
    return 1 / (x * _LN10)


def sqrt_partial(y, x):
    return 0.5 / y


def cbrt_partial(y, x):
    return 1 / (3 * y * y)


def erf_partial(y, x):
    return _TWO_BY_SQRT_PI * g.exp(-x * x)


def erfc_partial(y, x):
    return -_TWO_BY_SQRT_PI * g.exp(-x * x)


def gamma_partial(y, x):
    return y * g.digamma(x)


def lgamma_partial(y, x):
    return g.digamma(x)


def degrees_partial(y, x):
    return 180.0 / math.pi


def radians_partial(y, x):
    return math.pi / 180.0


def fabs_partial(y, x):
    if x == 0:  # (reverse mode's kink at its tie: `ties.note_kink`; forward mode's is `_fabs_told`'s)
        note_kink("math.fabs")
    return g.sign(x)


def nextafter_partial(y, x, towards=None):
    return 1


# -- two-argument functions -----------------------------------------------------------------------

def log_partial_x(y, x, base=None):
    return 1 / x if base is None else 1 / (x * g.log(base))


def log_partial_base(y, x, base=None):
    return -y / (base * g.log(base))


def atan2_partial_y(out, y, x):
    return x / (x * x + y * y)


def atan2_partial_x(out, y, x):
    return -y / (x * x + y * y)


def pow_partial_x(y, x, n):
    return pow_dx(x, n)


def pow_partial_n(y, x, n):
    return pow_dn(x, n, y)


def copysign_partial_x(y, x, s):
    """|x| with the sign of s: dy/dx = y/x = +-1, and 0 at x == 0."""
    return 0 * y if plain(x) == 0 else y / x


def _whole_quotient(r, x, y, rounding):
    """The integer n of r = x - n*y (held fixed when differentiating fmod/remainder)."""
    return rounding(plain((x - r) / y))


def fmod_partial_x(r, x, y):
    return 1


def fmod_partial_y(r, x, y):
    return -_whole_quotient(r, x, y, round)


def ldexp_partial_x(y, x, i):
    return 2.0 ** i


def fma_partial_x(out, x, y, z):
    return y


def fma_partial_y(out, x, y, z):
    return x


def fma_partial_z(out, x, y, z):
    return 1


_ELEMENTWISE = {
    "sin": (sin_partial,), "cos": (cos_partial,), "tan": (tan_partial,),
    "asin": (asin_partial,), "acos": (acos_partial,), "atan": (atan_partial,),
    "sinh": (sinh_partial,), "cosh": (cosh_partial,), "tanh": (tanh_partial,),
    "asinh": (asinh_partial,), "acosh": (acosh_partial,), "atanh": (atanh_partial,),
    "exp": (exp_partial,), "expm1": (expm1_partial,), "exp2": (exp2_partial,),
    "log": (log_partial_x, log_partial_base), "log1p": (log1p_partial,), "log2": (log2_partial,),
    "log10": (log10_partial,), "sqrt": (sqrt_partial,), "cbrt": (cbrt_partial,),
    "erf": (erf_partial,), "erfc": (erfc_partial,), "gamma": (gamma_partial,), "lgamma": (lgamma_partial,),
    "degrees": (degrees_partial,), "radians": (radians_partial,), "fabs": (fabs_partial,),
    "atan2": (atan2_partial_y, atan2_partial_x), "pow": (pow_partial_x, pow_partial_n),
    "copysign": (copysign_partial_x, None), "fmod": (fmod_partial_x, fmod_partial_y),
    "remainder": (fmod_partial_x, fmod_partial_y), "ldexp": (ldexp_partial_x, None),
    "nextafter": (nextafter_partial, None), "fma": (fma_partial_x, fma_partial_y, fma_partial_z),
}
"""name -> partial derivatives, shared with the `uncertainties.umath` rules."""

_PIECEWISE_LINEAR = frozenset({"fabs", "degrees", "radians", "fmod", "copysign"})
"""Sparsity: no second derivative (no Hessian pairs); the other elementwise functions have every pair of
their differentiable arguments (`elementwise_spec`)."""



def _on_floats(partial):
    """A partial of this module with `g`, the type-dispatching functions, bound to their float forms
    (`g.cos` is `math.cos`): the same formula, declared once, for the float fast path, without a
    dispatch per call. Others' partials (a user's `register_elementwise`) are used as they are."""
    if partial is None or getattr(partial, "__module__", None) != __name__:
        return partial
    on_floats = {**globals(), "g": _FLOAT_G}
    return types.FunctionType(partial.__code__, on_floats, partial.__name__, partial.__defaults__,
                              partial.__closure__)


def _singular(d: float, partial, *args) -> float:
    """d times a partial that divides by zero on floats (sqrt's at 0, cbrt's, acos' at 1): 0 where d is 0
    (the argument does not move: as the adjoints' `0 * inf` elsewhere -- fluids' full tank, `acos(1 - 2 h / D)`
    at h = D, its argument -1 whatever D), else d times numpy's inf or nan. (A zero of higher order, `cbrt(x **
    3)` at 0, is taken for no change too: README, Limits.)"""
    if d == 0.0:
        return 0.0
    with np.errstate(divide="ignore", invalid="ignore"):  # (0-d arrays: numpy's arithmetic all the way)
        return float(d * partial(*(np.asarray(a, dtype=float) for a in args)))


def _singular_any(d, partial, *args):
    """`_singular` for the general path: numpy scalars, a dual (forward over reverse: `0.5 / y` at y = 0 on a
    dual raised ZeroDivisionError out of the rule), an object. 0 where d is an exact zero, else d times the
    partial in numpy's arithmetic (its inf or nan, which forward mode may retake)."""
    if _exact_zero(d):
        return 0.0 * d
    with np.errstate(divide="ignore", invalid="ignore"):
        return d * partial(*(_in_numpy(a) for a in args))


def _exact_zero(d) -> bool:
    while type(d).__name__ == "Dual":
        if not _exact_zero(d.tangent):
            return False
        d = d.primal
    try:
        return not np.any(d)
    except Exception:  # (an object numpy cannot test)
        return False


def _in_numpy(a):
    """a in numpy's float arithmetic (its division by zero gives inf): a dual's value too."""
    if type(a).__name__ == "Dual":
        return a * np.ones((), dtype=float)
    if isinstance(a, (float, int, np.floating)):
        return np.asarray(a, dtype=float)
    return a


def register_elementwise(fn, partials, name):
    """`registry.elementwise(fn, *partials)` plus a fast path for float arguments and cotangents
    (real functions of reals: no broadcasting to undo, nothing to conjugate).

    >>> import math
    >>> def softplus(x):
    ...     return math.log1p(math.exp(x))
    >>> def softplus_partial(y, x):
    ...     return 1 / (1 + g.exp(-x))
    >>> register_elementwise(softplus, (softplus_partial,), "softplus")
    >>> registry.get(softplus).adjoint(2.0, softplus(0.0), 0.0)
    (1.0,)
    """
    registry.elementwise(fn, *partials, name=name)
    rule = registry.get(fn)
    generic_adjoint, generic_frule = rule.adjoint, rule.frule
    if len(partials) == 1:
        partial, raw = _on_floats(partials[0]), partials[0]  # (raw: numpy's arithmetic at a singular point)

        def adjoint(dy, y, x):
            if type(dy) is float and type(x) is float:
                try:
                    return (dy * partial(y, x),)
                except ZeroDivisionError:  # (a singular point: sqrt's at 0; forward mode tells whether its
                    note_tie(f"{name} at its singular point", None)  # argument moves there, `singular_still`)
                    return (_singular(dy, raw, y, x),)
            try:
                return generic_adjoint(dy, y, x)
            except ZeroDivisionError:  # (numpy scalars: acos at an argument of exactly 1; a dual cotangent,
                # forward over reverse: numpy's inf or nan, which reaches an input's entry only if the argument
                # moves there -- `hessian` retakes such entries from forward mode -- and is dropped where it
                # is an object's constant field: fluids' TANK at a full tank, sqrt(2 R D - D D) of its D)
                return (_singular_any(dy, raw, y, x),)

        def frule(tangents, x):
            t = tangents[0]
            if type(t) is float and type(x) is float:
                y = fn(x)
                try:
                    return y, t * partial(y, x)
                except ZeroDivisionError:
                    if t == 0.0:  # (a computed 0: the argument may move at second order, `singular_still`)
                        singular_still(name)
                    return y, _singular(t, raw, y, x)
            try:
                return generic_frule(tangents, x)
            except ZeroDivisionError:
                if t is not None and not _exact_zero(t):
                    raise  # (forward mode says where it divides by zero: a SpecialPoint)
                if t is not None:
                    singular_still(name)
                return fn(x), (None if t is None else 0.0 * t)
    elif len(partials) == 2:
        first, second = map(_on_floats, partials)
        raws = dict(zip((first, second), partials))  # (numpy's arithmetic at a singular point)

        def adjoint(dy, y, *args, **kwargs):
            try:
                if type(dy) is float and len(args) == 2 and type(args[0]) is float and type(args[1]) is float:
                    return (None if first is None else dy * first(y, *args, **kwargs),
                            None if second is None else dy * second(y, *args, **kwargs))
                if type(dy) is float and len(args) == 1 and type(args[0]) is float:  # log(x)
                    return (dy * first(y, *args, **kwargs),)
            except ZeroDivisionError:  # (a singular point)
                return tuple(None if p is None else _singular(dy, raws[p], y, *args)
                             for p in (first, second)[:len(args)])
            return generic_adjoint(dy, y, *args, **kwargs)

        def frule(tangents, *args, **kwargs):
            if len(args) == 2 and type(args[0]) is float and type(args[1]) is float \
                    and type(tangents[0]) is float and type(tangents[1]) is float:
                y = fn(*args, **kwargs)
                dy = 0.0
                for partial, t in zip((first, second), tangents):
                    if partial is not None:
                        try:
                            dy = dy + t * partial(y, *args, **kwargs)
                        except ZeroDivisionError:  # (a singular point)
                            dy = dy + _singular(t, raws[partial], y, *args)
                return y, dy
            return generic_frule(tangents, *args, **kwargs)
    else:
        adjoint, frule = generic_adjoint, generic_frule
    adjoint.__name__ = adjoint.__qualname__ = generic_adjoint.__name__
    frule.__name__ = frule.__qualname__ = generic_frule.__name__
    rule.adjoint, rule.frule = adjoint, frule
    if len(partials) == 1 and partial is not None:  # (after the adjoint, whose setting drops it)
        rule.hot_float = partial  # the float partial the adjoint's float case multiplies by (`Rule.hot_float`)


def _through_float(fn):
    """fn as Python code, for arguments that are objects of classes of their own (`Rule.python`): `math`
    converts them with their `__float__` first, which is then differentiated as their code."""
    def through_float(*args):
        return fn(*[a if isinstance(a, numbers.Number) else float(a) for a in args])
    return through_float


for _name, _partials in _ELEMENTWISE.items():
    if hasattr(math, _name):  # exp2, cbrt: 3.11; fma: 3.13
        register_elementwise(getattr(math, _name), _partials, f"math.{_name}")
        registry.sparsity(elementwise_spec(_partials, linear=_name in _PIECEWISE_LINEAR), getattr(math, _name))
        registry.set(getattr(math, _name), python=_through_float(getattr(math, _name)))


# the functions' singular points of their own (sqrt at 0), where forward mode's tangent twin asks whether a
# computed rate of 0 hides a change of second order (`ties.singular_still`), as their rules do
for _name, _singular_at in (("sqrt", lambda v: v == 0.0), ("cbrt", lambda v: v == 0.0),
                            ("acos", lambda v: abs(v) == 1.0), ("asin", lambda v: abs(v) == 1.0),
                            ("acosh", lambda v: v == 1.0)):
    if hasattr(math, _name):  # (cbrt: 3.11)
        SINGULAR_AT[getattr(math, _name)] = (f"math.{_name}", _singular_at)


def _product_error(rule) -> None:
    """`math.fma(x, y, -(x * y))` is the rounding error of the product x * y (TwoProduct, Ogita, Rump and
    Oishi's algorithm 3.5: pygeodesy's exact sums on 3.13): 0 in the exact arithmetic derivatives are
    taken in, so a constant. Its chain-rule tangent is a cancelled 0.0, which an equality's special case
    must judge from the two sides (`if f: yield f`, the error of an exact product: `_still_at`); a
    constant's none passes, as it should. Any other fma keeps the partials."""
    adjoint, frule = rule.adjoint, rule.frule

    def fma_adjoint(dy, out, x, y, z):
        return (None, None, None) if _is_product_error(x, y, z) else adjoint(dy, out, x, y, z)

    def fma_frule(tangents, x, y, z):
        return (math.fma(plain(x), plain(y), plain(z)), None) if _is_product_error(x, y, z) \
            else frule(tangents, x, y, z)

    rule.adjoint, rule.frule = fma_adjoint, fma_frule


def _is_product_error(x, y, z) -> bool:
    x, y, z = plain(x), plain(y), plain(z)
    return type(x) is float and type(y) is float and type(z) is float and -z == x * y


if hasattr(math, "fma"):  # (3.13)
    _product_error(registry.get(math.fma))


def _fabs_told(values, tangents) -> None:
    """math.fabs's kink at 0 told to `ties.kink_tie` where the tangent moves it (`ties.told`)."""
    if values and plain(values[0]) == 0 and tangents and tangents[0] is not None:
        kink_tie("math.fabs", values[0], 0.0, tangents[0], None)


told(registry.get(math.fabs), _fabs_told)


# -- several arguments, tuples out ---------------------------------------------------------------

def hypot_adjoint(dy, y, *xs):
    """d hypot / dx_i = x_i / y (0 when all x are 0)."""
    if dy is None or plain(y) == 0:
        for x in xs:  # (a cone's tip under an outer derivative)
            at_tip(x)
        if dy is not None and len(xs) > 1 and not any(type(x).__name__ == "Dual" for x in xs):
            note_tie("math.hypot at the origin", None)  # (forward mode tells: `cone_tip`, as a norm's)
        return (None,) * len(xs)
    return tuple(fit(dy * x / y, x) for x in xs)


def hypot_recorded(*xs):
    """math.hypot as reverse mode records it: at the origin, noted for forward mode to tell (as the adjoint
    does), also where the value only steers and no cotangent reaches the adjoint (`if hypot(x, y) < eps:`)."""
    y = math.hypot(*xs)
    if y == 0 and len(xs) > 1:
        note_tie("math.hypot at the origin", None)
    return y


def hypot_tangent(tangents, y, xs):
    """sum_i t_i * x_i / y (None when y == 0 or every tangent is zero)."""
    if plain(y) == 0:
        for x in xs:  # (`hypot_adjoint`)
            at_tip(x)
        if len(xs) > 1:  # (a cone's tip, as a norm's: judged from the two sides where it moves off it)
            for t in tangents:
                cone_tip("math.hypot", True, t)
        elif tangents and tangents[0] is not None:  # (hypot(x) is |x|: a kink)
            kink_tie("math.hypot", xs[0], 0.0, tangents[0], None)
        return None
    dy = None
    for x, t in zip(xs, tangents):
        if t is not None:
            dy = g.add(dy, t * x / y)
    return dy


def hypot_frule(tangents, *xs):
    y = math.hypot(*xs)
    return y, hypot_tangent(tangents, y, xs)


def frexp_adjoint(dy, y, x):
    """x = m * 2**e with e held fixed: dx = dm * 2**-e."""
    dm = dy[0] if dy is not None else None
    return (None if dm is None else dm * 2.0 ** -y[1],)


def frexp_frule(tangents, x, *, _primal=math.frexp):
    m, e = y = _primal(x)
    t = tangents[0]
    return y, (None if t is None else t * 2.0 ** -e, None)


def modf_adjoint(dy, y, x):
    """modf(x) = (x - whole, whole): the fractional part carries the derivative."""
    return (None if dy is None else dy[0],)


def modf_frule(tangents, x, *, _primal=math.modf):
    return _primal(x), (tangents[0], None)


registry.adjoint(math.hypot, kind="elementwise")(hypot_adjoint)
registry.frule(math.hypot)(hypot_frule)
registry.sparsity(NONLINEAR, math.hypot)
registry.set(math.hypot, impl=hypot_recorded)
registry.adjoint(math.frexp, kind="elementwise")(frexp_adjoint)
registry.frule(math.frexp)(frexp_frule)
registry.adjoint(math.modf, kind="elementwise")(modf_adjoint)
registry.frule(math.modf)(modf_frule)
registry.sparsity(Custom("rules.py: a pair out, each part elementwise"), math.frexp, math.modf)


# -- functions of iterables (closure form: the iterable may be a generator) --------------------

def _tangent_list(t, n):
    return [None] * n if t is None else list(t)


def _like(gs: list, iterable):
    """The items' cotangents as the iterable's: an array's as an array (`math.fsum(x * 2.0)`: the product's
    adjoint was given a list), else the list."""
    if type(iterable) is np.ndarray and iterable.dtype.kind in "fc":
        return np.asarray(gs, dtype=iterable.dtype).reshape(iterable.shape)
    return gs


def fsum_rrule(iterable, *, _primal=math.fsum):
    xs = list(iterable)

    def fsum_pullback(dy):
        return (_like([dy] * len(xs), iterable),)
    return _primal(xs), fsum_pullback


def fsum_frule(tangents, iterable, *, _primal=math.fsum):
    xs = list(iterable)
    dy = None
    for t in _tangent_list(tangents[0], len(xs)):
        dy = g.add(dy, t)
    return _primal(xs), dy


def _prod_except_each(xs, start):
    """[start * prod(xs without xs[i]) for each i], by prefix and suffix products (exact with zeros)."""
    n = len(xs)
    prefix, suffix = [start] * (n + 1), [1] * (n + 1)
    for i in range(n):
        prefix[i + 1] = prefix[i] * xs[i]
    for i in range(n - 1, -1, -1):
        suffix[i] = xs[i] * suffix[i + 1]
    return [prefix[i] * suffix[i + 1] for i in range(n)]


def prod_rrule(iterable, **kw):
    """math.prod(iterable, start=1): `start=` (keyword-only) gets its cotangent as a keyword argument's (the
    registry's trailing dict), dy times the product of the items."""
    start = kw.get("start", 1)
    xs = list(iterable)

    def prod_pullback(dy):
        items = _like([g.mul(dy, g.conj(p)) for p in _prod_except_each(xs, start)], iterable)
        if "start" not in kw:
            return (items,)
        return (items, {"start": g.mul(dy, g.conj(math.prod(xs)))})
    return math.prod(xs, **kw), prod_pullback


def prod_frule(tangents, iterable, *, start=1):
    xs = list(iterable)
    dy = None
    for p, t in zip(_prod_except_each(xs, start), _tangent_list(tangents[0], len(xs))):
        if t is not None:
            dy = g.add(dy, t * p)
    return math.prod(xs, start=start), dy


def dist_rrule(p, q):
    p, q = list(p), list(q)
    d = math.dist(p, q)

    def dist_pullback(dy):
        if dy is None or d == 0:
            return [None] * len(p), [None] * len(q)
        dp = [dy * (a - b) / d for a, b in zip(p, q)]
        return dp, [-x for x in dp]
    return d, dist_pullback


def dist_frule(tangents, p, q):
    p, q = list(p), list(q)
    d = math.dist(p, q)
    if d == 0:
        return d, None
    dy = None
    for a, b, ta, tb in zip(p, q, _tangent_list(tangents[0], len(p)), _tangent_list(tangents[1], len(q))):
        diff = g.add(ta, None if tb is None else -tb)
        if diff is not None:
            dy = g.add(dy, diff * (a - b) / d)
    return d, dy


def sumprod_rrule(p, q):
    p, q = list(p), list(q)

    def sumprod_pullback(dy):
        return [g.mul(dy, g.conj(b)) for b in q], [g.mul(dy, g.conj(a)) for a in p]
    return math.sumprod(p, q), sumprod_pullback


def sumprod_frule(tangents, p, q):
    p, q = list(p), list(q)
    dy = None
    for a, b, ta, tb in zip(p, q, _tangent_list(tangents[0], len(p)), _tangent_list(tangents[1], len(q))):
        if ta is not None:
            dy = g.add(dy, ta * b)
        if tb is not None:
            dy = g.add(dy, a * tb)
    return math.sumprod(p, q), dy


registry.rrule(math.fsum, kind="reduction")(fsum_rrule)
registry.frule(math.fsum)(fsum_frule)
registry.rrule(math.prod, kind="reduction")(prod_rrule)
registry.frule(math.prod)(prod_frule)
registry.sparsity(Custom("rules.py: a tracer, or an iterable of scalars"), math.fsum, math.prod)
registry.set(math.fsum, math.prod, iterates=True)  # (a class iterating in Python: reverse mode draws its items)
registry.rrule(math.dist, kind="reduction")(dist_rrule)
registry.frule(math.dist)(dist_frule)
if hasattr(math, "sumprod"):  # Python 3.12
    registry.rrule(math.sumprod, kind="reduction")(sumprod_rrule)
    registry.frule(math.sumprod)(sumprod_frule)
    registry.sparsity(DENSE, math.sumprod)
registry.sparsity(DENSE, math.dist)  # conservative: every pair of coordinates


NONDIFFERENTIABLE = ("ceil", "floor", "trunc", "isnan", "isinf", "isfinite", "isclose", "factorial",
                     "comb", "perm", "gcd", "lcm", "isqrt", "ulp")
"""Piecewise constant, integer-valued or boolean functions of `math`."""

registry.nondifferentiable(*(getattr(math, name) for name in NONDIFFERENTIABLE if hasattr(math, name)))
registry.sparsity(CONCRETE, math.ceil, math.floor, math.trunc, math.isnan, math.isinf, math.isfinite)



def _by_special_method(name):
    def form(x):
        return getattr(type(x), name)(x)
    form.__name__ = form.__qualname__ = f"py_{name.strip('_')}"
    form.__doc__ = (f"math.{name.strip('_')} as Python calls it: the class's `{name}` (an object's own: its code "
                    "is differentiated; taken for a staircase, 0)")
    return form


for _name in ("floor", "ceil", "trunc"):
    registry.set(getattr(math, _name), python=_by_special_method(f"__{_name}__"))
