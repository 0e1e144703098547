"""Rules for every function of `cmath` (a coverage test enumerates `dir(cmath)`).

Zygote's convention: the gradient of a real loss l at z = x + iy is dl/dx + i dl/dy. For holomorphic f
the pullback is dy * conj(f'(z)) and the pushforward f'(z) * dz; `phase`, `polar` and `rect` are not
holomorphic and are derived from their real partials. A real argument gets a real cotangent (the real
part: ChainRules' projection), so `cmath.sqrt(-2.0)` differentiates as a function of a real variable.

>>> import cmath
>>> from contexts.rules import registry
>>> registry.get(cmath.exp).adjoint(1.0, cmath.exp(1j), 1j)[0] == (cmath.exp(1j)).conjugate()
True
"""

from __future__ import annotations

import cmath
import math

from .generic import conj, project
from .math import _ELEMENTWISE as _REAL_PARTIALS
from .registry import registry
from .sparsity_specs import NONLINEAR, Custom

__all__ = ["NONDIFFERENTIABLE"]


def _on_complex(partial):
    """math's partial of the same function (rules/math.py, the one declaration): its `g` functions
    dispatch on type, so at x + 0j they are cmath's (a real x is x + 0j, as cmath takes it)."""
    def derivative(y, z):
        return partial(y, complex(z) if type(z) is float or type(z) is int else z)
    derivative.__name__ = derivative.__qualname__ = partial.__name__
    return derivative


def _sqrt_one_minus_square(z):
    """sqrt(1 - z) * sqrt(1 + z), the branch cmath's asin/acos use (not math's sqrt(1 - z * z), which
    differs across the cuts); -(z - 1) keeps the sign of a zero imaginary part, so a real z on the cut
    |z| > 1 gets the side cmath evaluates."""
    if not isinstance(z, complex):
        z = complex(z)  # a real x is x + 0j, as cmath takes it
    return cmath.sqrt(-(z - 1)) * cmath.sqrt(1 + z)


def _inverse(w):
    """1 / w, an infinity at w == 0 (asin's and acos's at +-1) where Python's complex division raises."""
    try:
        return 1 / w
    except ZeroDivisionError:
        return complex(math.inf, 0.0)


def asin_derivative(y, z):
    return _inverse(_sqrt_one_minus_square(z))


def acos_derivative(y, z):
    return -_inverse(_sqrt_one_minus_square(z))


def _holomorphic(fn, derivative, name):
    """Register the adjoint dy * conj(f'(z)) (projected onto z's type) and the frule f'(z) * dz."""
    def adjoint(dy, y, z):
        if dy is None:
            return (None,)
        try:
            partial = derivative(y, z)
        except ZeroDivisionError:  # (a singular point, sqrt's at 0: infinite, as math's rule gives in reverse;
            if dy == 0:           # forward mode refuses it. Nothing moves where the cotangent is 0)
                return (None,)
            partial = complex(math.inf, 0.0)
        return (project(dy * conj(partial), z),)

    def frule(tangents, z):
        y, t = fn(z), tangents[0]
        return y, (None if t is None else t * derivative(y, z))

    adjoint.__name__ = adjoint.__qualname__ = f"{name}_adjoint"
    frule.__name__ = frule.__qualname__ = f"{name}_frule"
    registry.adjoint(fn, kind="elementwise")(adjoint)
    registry.frule(fn)(frule)


_DERIVATIVES = {name: _on_complex(_REAL_PARTIALS[name][0])
                for name in ("sin", "cos", "tan", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
                             "exp", "log10", "sqrt")}
_DERIVATIVES.update(asin=asin_derivative, acos=acos_derivative)
for _name, _derivative in _DERIVATIVES.items():
    _holomorphic(getattr(cmath, _name), _derivative, f"cmath.{_name}")


# -- log(z[, base]): holomorphic in both arguments ---------------------------------------------------

def log_adjoint(dy, y, z, base=None):
    if dy is None:
        return (None,) * (1 if base is None else 2)
    if base is None:
        return (project(dy * conj(1 / z), z),)
    log_base = cmath.log(base)
    return project(dy * conj(1 / (z * log_base)), z), project(dy * conj(-y / (base * log_base)), base)


def log_frule(tangents, z, base=None):
    y = cmath.log(z) if base is None else cmath.log(z, base)
    tz = tangents[0]
    tb = tangents[1] if len(tangents) > 1 else None
    log_base = 1 if base is None else cmath.log(base)
    dy = None if tz is None else tz / (z * log_base)
    if tb is not None:
        term = -tb * y / (base * log_base)
        dy = term if dy is None else dy + term
    return y, dy


registry.adjoint(cmath.log, kind="elementwise")(log_adjoint)
registry.frule(cmath.log)(log_frule)


# -- not holomorphic: phase, polar, rect ---------------------------------------------------------------
# With z = a + ib: d|z| = (a da + b db)/|z|, dphase = (a db - b da)/|z|^2, so for a real loss
# the cotangents are real(dr) * z/|z| and real(dphase) * i z/|z|^2.

def phase_adjoint(dy, y, z):
    r2 = abs(z) ** 2
    if dy is None or r2 == 0:
        return (None,)
    return (project(dy.real * 1j * z / r2, z),)


def phase_frule(tangents, z):
    y, t, r2 = cmath.phase(z), tangents[0], abs(z) ** 2
    return y, (None if t is None or r2 == 0 else (conj(z) * t).imag / r2)


def polar_adjoint(dy, y, z):
    r = y[0]
    if dy is None or r == 0:
        return (None,)
    dr, dphase = dy
    g = 0
    if dr is not None:
        g = g + dr.real * z / r
    if dphase is not None:
        g = g + dphase.real * 1j * z / (r * r)
    return (project(g, z),)


def polar_frule(tangents, z):
    y, t = cmath.polar(z), tangents[0]
    r = y[0]
    if t is None or r == 0:
        return y, (None, None)
    w = conj(z) * t
    return y, (w.real / r, w.imag / (r * r))


def rect_adjoint(dy, y, r, phi):
    """y = r e^{i phi} with r, phi real: dr = Re(dy conj(e^{i phi})), dphi = Re(dy conj(i y))."""
    if dy is None:
        return None, None
    return project(dy * conj(cmath.rect(1.0, phi)), r), project(dy * conj(1j * y), phi)


def rect_frule(tangents, r, phi):
    y = cmath.rect(r, phi)
    tr, tphi = tangents
    dy = None if tr is None else tr * cmath.rect(1.0, phi)
    if tphi is not None:
        term = tphi * 1j * y
        dy = term if dy is None else dy + term
    return y, dy


registry.adjoint(cmath.phase, kind="elementwise")(phase_adjoint)
registry.frule(cmath.phase)(phase_frule)
registry.adjoint(cmath.polar, kind="elementwise")(polar_adjoint)
registry.frule(cmath.polar)(polar_frule)
registry.adjoint(cmath.rect, kind="elementwise")(rect_adjoint)
registry.frule(cmath.rect)(rect_frule)

NONDIFFERENTIABLE = ("isclose", "isfinite", "isinf", "isnan")
"""Boolean functions of `cmath`."""

registry.nondifferentiable(*(getattr(cmath, name) for name in NONDIFFERENTIABLE))

# sparsity: elementwise in every argument (a tracer stands for a real value); `polar`, a pair, is code
registry.sparsity(NONLINEAR, *(getattr(cmath, name) for name in _DERIVATIVES), cmath.log, cmath.phase,
                  cmath.rect)
registry.sparsity(Custom("rules.py: a pair out, each part elementwise"), cmath.polar)
