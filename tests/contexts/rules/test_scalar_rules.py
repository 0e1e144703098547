"""Spec-driven checks of the scalar rules (operator, math, cmath, builtins, umath) against finite
differences: one line per rule, run through `contexts.rules.check.check_rule`."""

import builtins
import cmath
import math
import operator
from fractions import Fraction as F

import numpy as np
import pytest
from uncertainties import ufloat, umath

import contexts.rules  # noqa: F401  (registers the rules)
from contexts.rules.check import check_rule

A = np.array([0.3, -1.2, 2.0])
B = np.array([[0.7], [1.5]])
Z, W = 0.4 + 0.9j, -1.1 + 0.3j

# (function, positional arguments[, keyword arguments])
SPECS = [
    # operator: real, complex, broadcasting arrays
    (operator.add, (0.3, 1.7)), (operator.add, (Z, 0.5)), (operator.add, (A, B)),
    (operator.sub, (0.3, 1.7)), (operator.sub, (Z, W)), (operator.sub, (2.0, A)),
    (operator.mul, (0.3, 1.7)), (operator.mul, (Z, W)), (operator.mul, (A, B)), (operator.mul, (0.5, Z)),
    (operator.truediv, (0.3, 1.7)), (operator.truediv, (Z, W)), (operator.truediv, (A, B)),
    (operator.mod, (5.3, 1.7)), (operator.mod, (-5.3, 1.7)), (operator.mod, (A + 3, B)),
    (operator.pow, (1.3, 2.7)), (operator.pow, (1.3, 3)), (operator.pow, (-1.3, 3)), (operator.pow, (1.3, -2)),
    (operator.pow, (Z, 2.5)), (operator.pow, (1.3, W)), (operator.pow, (-1.3, 0.5)),
    (operator.pow, (np.abs(A) + 0.1, B)), (operator.pow, (A, 3)),
    (operator.neg, (0.3,)), (operator.neg, (Z,)), (operator.pos, (A,)),
    (operator.abs, (-0.3,)), (operator.abs, (Z,)), (operator.abs, (A,)),
    (operator.iadd, (0.3, 1.7)), (operator.isub, (0.3, 1.7)), (operator.imul, (0.3, Z)),
    (operator.itruediv, (0.3, 1.7)), (operator.ipow, (1.3, 2.7)), (operator.imod, (5.3, 1.7)),
    (operator.add, ([0.3, 1.0], [2.0])), (operator.mul, ([0.3, 1.0], 3)), (operator.concat, ([0.3], [1.0])),
    # math
    (math.sin, (0.3,)), (math.cos, (0.3,)), (math.tan, (0.3,)),
    (math.asin, (0.3,)), (math.acos, (0.3,)), (math.atan, (0.3,)),
    (math.sinh, (0.3,)), (math.cosh, (0.3,)), (math.tanh, (0.3,)),
    (math.asinh, (0.3,)), (math.acosh, (1.3,)), (math.atanh, (0.3,)),
    (math.exp, (0.3,)), (math.expm1, (0.3,)), (math.exp2, (0.3,)),
    (math.log, (0.3,)), (math.log, (0.3, 2.5)), (math.log1p, (0.3,)), (math.log2, (0.3,)), (math.log10, (0.3,)),
    (math.sqrt, (0.3,)), (math.cbrt, (0.3,)), (math.cbrt, (-2.3,)),
    (math.erf, (0.3,)), (math.erfc, (0.3,)), (math.gamma, (0.3,)), (math.gamma, (-1.7,)),
    (math.lgamma, (0.3,)), (math.lgamma, (7.5,)), (math.lgamma, (-1.7,)),
    (math.degrees, (0.3,)), (math.radians, (0.3,)), (math.fabs, (-0.3,)),
    (math.copysign, (0.3, -2.0)), (math.copysign, (-0.3, 2.0)),
    (math.fmod, (5.3, 1.7)), (math.fmod, (-5.3, 1.7)), (math.remainder, (5.3, 1.7)),
    (math.ldexp, (0.3, 3)), (math.nextafter, (0.3, 1.0)),
    (math.atan2, (0.3, -1.7)), (math.hypot, (0.3, -1.7, 2.0)), (math.hypot, (0.3,)),
    (math.pow, (1.3, 2.7)), (math.pow, (-1.3, 3)), (math.pow, (0.3, 3)),
    (math.fsum, ([0.3, 1.7, -2.0],)), (math.prod, ([0.3, 1.7, -2.0],)), (math.prod, ([0.3, 0.0, 2.0],)),
    (math.prod, ([0.3, 1.7],), {"start": 2.5}), (math.dist, ([0.3, 1.7], [1.0, -2.0])),
    (math.frexp, (0.3,)), (math.modf, (-2.3,)),
    # cmath: complex points, and real points (real cotangents)
    *[(getattr(cmath, name), (Z,)) for name in
      ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
       "exp", "log", "log10", "sqrt", "phase", "polar")],
    (cmath.log, (Z, W)), (cmath.log, (Z, 2.5)), (cmath.sqrt, (-2.0,)), (cmath.acos, (1.7,)), (cmath.asin, (1.7,)), (cmath.acos, (-1.7,)), (cmath.asin, (-1.7,)),
    (cmath.acosh, (0.3,)), (cmath.atanh, (1.7,)), (cmath.asinh, (0.3,)),
    (cmath.phase, (-0.3,)), (cmath.polar, (-0.3,)), (cmath.rect, (1.3, 0.4)), (cmath.exp, (0.3,)),
    # builtins
    (builtins.abs, (-0.3,)), (builtins.abs, (W,)),
    (builtins.max, (0.3, 1.7, -2.0)), (builtins.max, ([0.3, 1.7, -2.0],)),
    (builtins.min, (0.3, 1.7, -2.0)), (builtins.min, ([0.3, 1.7, -2.0],), {"key": abs}),
    (builtins.sum, ([0.3, 1.7, Z],)), (builtins.sum, ([0.3, 1.7], 2.0)), (builtins.sum, ([A, B],)),
    (builtins.sorted, ([0.3, -1.7, 2.0],)), (builtins.sorted, ([0.3, -1.7, 2.0],), {"key": abs}),
    (builtins.pow, (1.3, 2.7)), (builtins.divmod, (5.3, 1.7)), (builtins.divmod, (-5.3, 1.7)),
    (builtins.float, (0.3,)), (builtins.float, (np.array(0.3),)),
    (builtins.complex, (0.3,)), (builtins.complex, (0.3, 1.7)), (builtins.complex, (Z, W)),
    # slot methods of float/int/complex (as called by Python-level numeric code such as uncertainties)
    (float.__pow__, (1.3, 2.7)), (float.__rpow__, (1.3, 2.7)), (float.__rsub__, (1.3, 2.7)),
    (float.__rtruediv__, (1.3, 2.7)), (float.__mul__, (1.3, 2.7)), (complex.__rtruediv__, (Z, 2.7)),
    (complex.__add__, (Z, W)), (float.__neg__, (1.3,)), (float.__abs__, (-2.0,)), (complex.conjugate, (Z,)),
    (float.__mod__, (5.3, 1.7)), (float.__rmod__, (1.7, 5.3)),
    # uncertainties.umath on floats
    (umath.sin, (0.3,)), (umath.log, (0.3, 2.5)), (umath.hypot, (0.3, 1.7)), (umath.fsum, ([0.3, 1.7],)),
    (umath.atan2, (0.3, -1.7)), (umath.pow, (1.3, 2.7)),
]

EXACT = [  # rational rules on Fractions: cotangents and tangents must stay Fractions
    (operator.add, (F(1, 3), F(2, 5))), (operator.sub, (F(1, 3), F(2, 5))), (operator.mul, (F(1, 3), F(2, 5))),
    (operator.truediv, (F(1, 3), F(2, 5))), (operator.pow, (F(1, 3), 3)), (operator.pow, (F(1, 3), -2)),
    (operator.neg, (F(1, 3),)), (operator.abs, (F(-1, 3),)), (operator.mod, (F(7, 3), F(2, 5))),
    (operator.iadd, (F(1, 3), F(2, 5))), (operator.imul, (F(1, 3), F(2, 5))), (operator.ipow, (F(1, 3), 2)),
    (builtins.pow, (F(2, 3), 4)), (builtins.sum, ([F(1, 3), F(2, 5)],)), (builtins.max, (F(1, 3), F(2, 5))),
    (math.prod, ([F(1, 3), F(2, 5), F(3, 7)],)),
]

UNCERTAIN = [  # ufloat arguments: nominal value and standard deviation of the cotangents
    (operator.add, (ufloat(0.3, 0.01), ufloat(1.7, 0.02))), (operator.mul, (ufloat(0.3, 0.01), ufloat(1.7, 0.02))),
    (operator.truediv, (ufloat(0.3, 0.01), ufloat(1.7, 0.02))), (operator.pow, (ufloat(1.3, 0.01), 3)),
    (operator.pow, (ufloat(1.3, 0.01), ufloat(2.7, 0.05))), (operator.pow, (1.3, ufloat(2.7, 0.05))),
    (operator.sub, (ufloat(0.3, 0.01), 2.0)), (operator.neg, (ufloat(0.3, 0.01),)),
    (umath.sin, (ufloat(0.3, 0.01),)), (umath.exp, (ufloat(0.3, 0.01),)), (umath.log, (ufloat(0.3, 0.01),)),
    (umath.sqrt, (ufloat(0.3, 0.01),)), (umath.tanh, (ufloat(0.3, 0.01),)), (umath.erf, (ufloat(0.3, 0.01),)),
    (umath.gamma, (ufloat(0.3, 0.01),)), (umath.lgamma, (ufloat(2.3, 0.01),)), (umath.acosh, (ufloat(1.3, 0.01),)),
    (umath.atan2, (ufloat(0.3, 0.01), ufloat(-1.7, 0.02))), (umath.hypot, (ufloat(0.3, 0.01), ufloat(-1.7, 0.02))),
    (umath.log, (ufloat(0.3, 0.01), ufloat(2.5, 0.02))), (umath.pow, (ufloat(1.3, 0.01), ufloat(2.7, 0.02))),
]


def _id(spec):
    fn, args = spec[0], spec[1]
    name = f"{getattr(fn, '__module__', '') or ''}.{getattr(fn, '__name__', fn)}"
    return f"{name}{tuple(type(a).__name__ for a in args)}"


def _run(spec):
    fn, args, kwargs = spec[0], spec[1], (spec[2] if len(spec) > 2 else {})
    check_rule(fn, *args, **kwargs)


@pytest.mark.parametrize("spec", SPECS, ids=[_id(s) for s in SPECS])
def test_rule_matches_finite_differences(spec):
    _run(spec)


@pytest.mark.parametrize("spec", EXACT, ids=[_id(s) for s in EXACT])
def test_rule_is_exact_on_fractions(spec):
    _run(spec)


@pytest.mark.parametrize("spec", UNCERTAIN, ids=[_id(s) for s in UNCERTAIN])
def test_rule_propagates_uncertainty(spec):
    _run(spec)
