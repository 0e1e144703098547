"""The checker itself: finite differences are right, and a wrong rule is caught (the checks can fail)."""

import math
import operator
from fractions import Fraction

import numpy as np
import pytest
from uncertainties import ufloat, umath

import contexts.rules  # noqa: F401
from contexts.rules.check import check_rule, numerical_gradient
from contexts.rules.registry import Rule, registry


def test_numerical_gradient_closed_forms():
    assert numerical_gradient(lambda x, y: x * y, 3.0, 2.0) == (2.0, 3.0)
    (gz,) = numerical_gradient(lambda z: abs(z) ** 2, 3 + 4j)  # d/dx + i d/dy of x^2 + y^2
    assert gz == pytest.approx(6 + 8j)
    (ga,) = numerical_gradient(lambda a: float(np.sum(a ** 2)), np.array([1.0, -2.0]))
    np.testing.assert_allclose(ga, [2.0, -4.0])
    (gl, gn) = numerical_gradient(lambda xs, n: xs[0] * xs[1] ** n, [2.0, 3.0], 2)
    assert gl == pytest.approx([9.0, 12.0]) and gn is None
    assert numerical_gradient(lambda x: x * x, Fraction(1, 2))[0] == pytest.approx(1.0)


def _wrong(fn, **fields):
    good = registry.get(fn)
    return Rule(fn=fn, adjoint=good.adjoint, rrule=good.rrule, frule=good.frule, kind=good.kind) if not fields \
        else Rule(fn=fn, **{"adjoint": good.adjoint, "rrule": good.rrule, "frule": good.frule, "kind": good.kind,
                            **fields})


def wrong_sin_adjoint(dy, y, x):
    return (dy * math.sin(x),)


def wrong_sin_frule(tangents, x):
    return math.sin(x), tangents[0] * -math.cos(x)


def conj_missing_mul_adjoint(dy, y, a, b):
    return dy * b, dy * a  # forgets conj: wrong for complex arguments only


def float_mul_adjoint(dy, y, a, b):
    return float(dy * b), float(dy * a)  # loses exactness


def no_uncertainty_sin_adjoint(dy, y, x):
    return (dy * math.cos(x.nominal_value),)  # right nominal value, no standard deviation


def test_wrong_adjoint_is_caught():
    with pytest.raises(AssertionError, match="cotangent of argument 0"):
        check_rule(math.sin, 0.3, rule=_wrong(math.sin, adjoint=wrong_sin_adjoint))


def test_wrong_frule_is_caught():
    with pytest.raises(AssertionError, match="frule"):
        check_rule(math.sin, 0.3, rule=_wrong(math.sin, frule=wrong_sin_frule))


def test_missing_conjugate_is_caught_for_complex_only():
    rule = _wrong(operator.mul, adjoint=conj_missing_mul_adjoint)
    check_rule(operator.mul, 0.3, 1.7, rule=rule)
    with pytest.raises(AssertionError, match="cotangent"):
        check_rule(operator.mul, 0.3 + 1j, 1.7 - 2j, rule=rule)


def test_inexact_cotangent_is_caught():
    with pytest.raises(AssertionError, match="not exact"):
        check_rule(operator.mul, Fraction(1, 3), Fraction(2, 5), rule=_wrong(operator.mul, adjoint=float_mul_adjoint))


def test_lost_uncertainty_is_caught():
    with pytest.raises(AssertionError, match="standard deviation"):
        check_rule(umath.sin, ufloat(0.3, 0.01), rule=_wrong(umath.sin, adjoint=no_uncertainty_sin_adjoint))


def test_missing_rule_and_nondifferentiable():
    with pytest.raises(AssertionError, match="no rule"):
        check_rule(lambda x: x, 1.0)
    check_rule(math.floor, 1.5)
