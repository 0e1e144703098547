"""Rules for mpmath: `mpf`/`mpc` are registered numbers (`contexts.rules.leaves`) whose math is mpmath's,
and mpmath's elementary and special functions are primitives with their derivatives in mpmath itself, so
a gradient keeps the working precision (`mp.dps = 50`: 50 digits, never a float's 16).

Loaded when mpmath is first imported (`leaves.DOMAINS`).

>>> import mpmath
>>> from contexts.rules import registry
>>> with mpmath.workdps(30):
...     print(registry.get(mpmath.erf).adjoint(mpmath.mpf(1), mpmath.erf(1), mpmath.mpf(1))[0])
0.415107497420594703801353439178
"""

from __future__ import annotations

import mpmath

from . import math as _math_rules
from .generic import project
from .leaves import register_scalar
from .math import register_elementwise
from .registry import NoClosedForm, registry
from .sparsity_specs import LINEAR, NONLINEAR, elementwise_spec

__all__: list[str] = []

_MATH = {name: getattr(mpmath, name) for name in (
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "exp",
    "expm1", "log1p", "log10", "sqrt", "cbrt", "erf", "erfc", "gamma", "digamma", "sign", "atan2", "floor",
    "fabs")}
_MATH.update(log=mpmath.log, lgamma=mpmath.loggamma, exp2=lambda x: mpmath.power(2, x),
             log2=lambda x: mpmath.log(x, 2))

register_scalar(mpmath.mpf, name="mpmath", math=_MATH, one=lambda x: mpmath.mpf(1), zero=lambda x: mpmath.mpf(0))
register_scalar(mpmath.mpc, name="mpmath", math=_MATH, one=lambda x: mpmath.mpc(1), zero=lambda x: mpmath.mpc(0),
                complex=True)


# partials whose math.py forms carry float constants (2/sqrt(pi), ln 10, pi/180): in mpmath's precision
def erf_partial(y, x):
    return 2 / mpmath.sqrt(mpmath.pi) * mpmath.exp(-x * x)


def erfc_partial(y, x):
    return -2 / mpmath.sqrt(mpmath.pi) * mpmath.exp(-x * x)


def log10_partial(y, x):
    return 1 / (x * mpmath.ln(10))


def degrees_partial(y, x):
    return 180 / mpmath.pi


def radians_partial(y, x):
    return mpmath.pi / 180


def log_partial_x(y, x, b=None):
    return 1 / x if b is None else 1 / (x * mpmath.ln(b))


def log_partial_base(y, x, b=None):
    return -y / (b * mpmath.ln(b))


def loggamma_partial(y, x):
    return mpmath.digamma(x)


def digamma_partial(y, x):
    return mpmath.psi(1, x)


def psi_partial_z(y, m, z):
    return mpmath.psi(m + 1, z)


def sec_partial(y, x):
    return y * mpmath.tan(x)


def csc_partial(y, x):
    return -y * mpmath.cot(x)


def cot_partial(y, x):
    return -(1 + y * y)


def power_partial_x(y, x, n):
    return _math_rules.pow_partial_x(y, x, n)


def power_partial_n(y, x, n):
    return y * mpmath.log(x) if x != 0 else 0 * y  # (0 ** n: the limit along n, 0 for n > 0)


def _register(fn, partials, name):
    """`register_elementwise`, with each cotangent of its argument's kind: a float given to an mpmath
    function gets a float back (`generic.project`); mpmath's own numbers keep theirs."""
    register_elementwise(fn, partials, name)
    adjoint = registry.get(fn).adjoint

    def in_kind(dy, y, *args, **kwargs):
        return tuple(project(g, a) for g, a in zip(adjoint(dy, y, *args, **kwargs), args))

    in_kind.__name__ = in_kind.__qualname__ = adjoint.__name__
    registry.set(fn, adjoint=in_kind)


_OWN = {"erf": (erf_partial,), "erfc": (erfc_partial,), "log10": (log10_partial,),
        "degrees": (degrees_partial,), "radians": (radians_partial,), "loggamma": (loggamma_partial,),
        "digamma": (digamma_partial,), "psi": (NoClosedForm("mpmath.psi", "m", 0), psi_partial_z),
        "sec": (sec_partial,), "csc": (csc_partial,), "cot": (cot_partial,),
        "power": (power_partial_x, power_partial_n), "log": (log_partial_x, log_partial_base),
        "ln": (log_partial_x, log_partial_base)}

for _name, _partials in {**_math_rules._ELEMENTWISE, **_OWN}.items():
    if _name in ("exp2", "log2", "lgamma", "pow", "copysign", "fmod", "remainder", "ldexp", "nextafter", "fma"):
        continue  # not mpmath's names, or no mpmath function of that meaning
    fn = getattr(mpmath, _name, None)
    if fn is not None:
        _register(fn, _OWN.get(_name, _partials), f"mpmath.{_name}")
        registry.sparsity(elementwise_spec(_OWN.get(_name, _partials), linear=_name in ("degrees", "radians", "fabs")),
                          fn)

def besselj_partial_x(y, n, x, *rest, **kwargs):
    return (mpmath.besselj(n - 1, x) - mpmath.besselj(n + 1, x)) / 2


def besseli_partial_x(y, n, x, *rest, **kwargs):
    return (mpmath.besseli(n - 1, x) + mpmath.besseli(n + 1, x)) / 2


_register(mpmath.besselj, (NoClosedForm("mpmath.besselj", "n", 0), besselj_partial_x), "mpmath.besselj")
_register(mpmath.besseli, (NoClosedForm("mpmath.besseli", "n", 0), besseli_partial_x), "mpmath.besseli")
registry.adjoint(mpmath.hypot, kind="elementwise")(_math_rules.hypot_adjoint)
registry.sparsity(NONLINEAR, mpmath.hypot, mpmath.besselj, mpmath.besseli)


def mpmath_hypot_frule(tangents, *xs):
    y = mpmath.hypot(*xs)
    return y, _math_rules.hypot_tangent(tangents, y, xs)


registry.frule(mpmath.hypot)(mpmath_hypot_frule)
registry.nondifferentiable(mpmath.floor, mpmath.ceil, mpmath.nint, mpmath.sign, mpmath.isnan, mpmath.isinf,
                           mpmath.isint, mpmath.nstr)


def convert_adjoint(dy, y, x, *rest, **kwargs):
    """`mpf(x)`, `mpmathify(x)`: the value itself, in mpmath's precision."""
    return (project(dy, x),) + (None,) * len(rest)


def convert_frule(tangents, x, *rest, **kwargs):
    fn = mpmath.mpmathify
    t = tangents[0] if tangents else None
    return fn(x), (None if t is None else fn(t))


for _fn in (mpmath.mpmathify, mpmath.mpf, mpmath.mpc):
    registry.adjoint(_fn, kind="linear")(convert_adjoint)
registry.frule(mpmath.mpmathify)(convert_frule)


def mpf_frule(tangents, x=0, *rest, **kwargs):
    t = tangents[0] if tangents else None
    return mpmath.mpf(x, *rest, **kwargs), (None if t is None else mpmath.mpf(t))


def mpc_frule(tangents, real=0, imag=0, **kwargs):
    tr, ti = (tuple(tangents) + (None, None))[:2]
    y = mpmath.mpc(real, imag)
    if tr is None and ti is None:
        return y, None
    return y, mpmath.mpc(0 if tr is None else tr, 0 if ti is None else ti)


def mpc_adjoint(dy, y, real=0, imag=0, **kwargs):
    """mpc(a, b) = a + i b: the real part's cotangent is Re dy, the imaginary part's Im dy (Zygote's
    convention, as for `complex`)."""
    return project(mpmath.re(dy), real), project(mpmath.im(dy), imag)


registry.sparsity(LINEAR, mpmath.mpmathify, mpmath.mpf, mpmath.mpc)
registry.frule(mpmath.mpf)(mpf_frule)
registry.frule(mpmath.mpc)(mpc_frule)
registry.adjoint(mpmath.mpc, kind="linear")(mpc_adjoint)

