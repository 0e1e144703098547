"""Rules for `uncertainties.umath`: each umath function is a primitive with the derivative of its `math`
namesake (the partials are shared with `contexts.rules.math`), so code calling `umath.sin` on ufloats is
differentiated without recursing into the uncertainties package, and the cotangents are ufloats whose
nominal value and standard deviation are both right.

>>> from uncertainties import ufloat, umath
>>> from contexts.rules import registry
>>> x = ufloat(0.5, 0.01)
>>> g = registry.get(umath.sin).adjoint(1.0, umath.sin(x), x)[0]
>>> round(g.nominal_value, 6), round(g.std_dev, 6)   # cos(0.5), |sin(0.5)| * 0.01
(0.877583, 0.004794)

Type-generic math for ufloats (`generic.sin(x)` -> `umath.sin(x)`) lives in `contexts.rules.generic`.
"""

from __future__ import annotations

from uncertainties import umath

from .math import _ELEMENTWISE, NONDIFFERENTIABLE, frexp_adjoint, frexp_frule, fsum_frule, fsum_rrule
from .math import hypot_adjoint, hypot_tangent, modf_adjoint, modf_frule, register_elementwise
from .registry import registry

__all__: list[str] = []

for _name, _partials in _ELEMENTWISE.items():
    if hasattr(umath, _name):
        register_elementwise(getattr(umath, _name), _partials, f"umath.{_name}")


def umath_hypot_frule(tangents, *xs):
    y = umath.hypot(*xs)
    return y, hypot_tangent(tangents, y, xs)


def umath_fsum_rrule(iterable):
    return fsum_rrule(iterable, _primal=umath.fsum)


def umath_fsum_frule(tangents, iterable):
    return fsum_frule(tangents, iterable, _primal=umath.fsum)


def umath_frexp_frule(tangents, x):
    return frexp_frule(tangents, x, _primal=umath.frexp)


def umath_modf_frule(tangents, x):
    return modf_frule(tangents, x, _primal=umath.modf)


registry.adjoint(umath.hypot, kind="elementwise")(hypot_adjoint)
registry.frule(umath.hypot)(umath_hypot_frule)
registry.rrule(umath.fsum, kind="reduction")(umath_fsum_rrule)
registry.frule(umath.fsum)(umath_fsum_frule)
registry.adjoint(umath.frexp, kind="elementwise")(frexp_adjoint)
registry.frule(umath.frexp)(umath_frexp_frule)
registry.adjoint(umath.modf, kind="elementwise")(modf_adjoint)
registry.frule(umath.modf)(umath_modf_frule)
registry.nondifferentiable(*(getattr(umath, name) for name in NONDIFFERENTIABLE if hasattr(umath, name)))
