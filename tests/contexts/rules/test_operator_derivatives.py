"""The derivatives of + - * / are declared once (`contexts.rules.operator.DERIVATIVES`); every mode's
form of them comes from there. The declarations against central differences, and the forms made from them
(reverse and forward rules, duals, the generic reverse path) on floats, arrays and Fractions."""

import operator
from fractions import Fraction

import numpy as np
import pytest

from contexts import derivative, gradient
from contexts.rules.operator import DERIVATIVES

OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv}
POINTS = [(0.7, -1.3), (2.5, 0.4), (-3.0, 1e-3)]


@pytest.mark.parametrize("name", sorted(DERIVATIVES))
@pytest.mark.parametrize("a,b", POINTS)
def test_declared_derivative_against_differences(name, a, b):
    op, (da, db) = OPS[name], DERIVATIVES[name]
    y = op(a, b)
    for x, d, bump in ((a, da, lambda h: op(a + h, b)), (b, db, lambda h: op(a, b + h))):
        h = 1e-6 * max(1.0, abs(x))
        fd = (bump(h) - bump(-h)) / (2 * h)
        assert d(1.0, a, b, y) == pytest.approx(fd, rel=1e-6, abs=1e-300)


@pytest.mark.parametrize("name", sorted(DERIVATIVES))
def test_every_form_on_floats_arrays_and_fractions(name):
    op = OPS[name]
    a, b = 0.7, -1.3
    ga, gb = gradient(lambda u, v: op(u, v) * u, a, b)  # the product rule through each form
    da, db = DERIVATIVES[name]
    y = op(a, b)
    assert ga == pytest.approx(da(1.0, a, b, y) * a + y) and gb == pytest.approx(db(1.0, a, b, y) * a)
    assert derivative(lambda u: op(u, b) * u, a) == pytest.approx(ga)
    xa, xb = np.array([0.7, 2.0, -0.5]), np.array([-1.3, 0.25, 4.0])
    g = gradient(lambda u, v: np.sum(op(u, v) ** 2), xa, xb)
    ya = op(xa, xb)
    np.testing.assert_allclose(g[0], 2 * ya * da(1.0, xa, xb, ya))
    np.testing.assert_allclose(g[1], 2 * ya * db(1.0, xa, xb, ya))
    fa, fb = Fraction(7, 10), Fraction(-13, 10)
    exact = gradient(lambda u, v: op(u, v), fa, fb)
    fy = op(fa, fb)
    assert exact == (da(Fraction(1), fa, fb, fy), db(Fraction(1), fa, fb, fy))
    assert all(type(e) is Fraction for e in exact)


def test_quotient_of_large_numbers_keeps_its_derivative():
    """d(a/b)/db = -a/b**2 where b*b overflows: not the 0.0 of `-(a * t) / (b * b)`."""
    a, b = 1e300, 1e160
    assert gradient(lambda u, v: u / v, a, b)[1] == pytest.approx(-a / b / b, rel=1e-12, abs=0)
    assert derivative(lambda v: a / v, b) == pytest.approx(-a / b / b, rel=1e-12, abs=0)

    def kept(u, v):  # the result overwritten in its block: the inlined rule recomputes it
        u = u / v
        return u * 1.0
    assert gradient(kept, a, b)[1] == pytest.approx(-a / b / b, rel=1e-12, abs=0)
