"""The derivatives of + - * / are declared once (`contexts.rules.operator.DERIVATIVES`); every mode's
form of them comes from there. The declarations against central differences, and the forms made from them
(reverse and forward rules, duals, the generic reverse path) on floats, arrays and Fractions."""

import operator
from fractions import Fraction

import numpy as np
import pytest

from contexts import derivative, gradient
from contexts.rules.operator import DERIVATIVES
from tests import fd

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
    """Each mode's form (reverse fast path and rule, tangent twin, duals) against central differences;
    Fractions against the exact derivative of the operator, written out."""
    op = OPS[name]
    f = lambda u, v: op(u, v) * u  # noqa: E731  (the product rule through each form)
    a, b = 0.7, -1.3
    want = fd.gradient(f, a, b)
    assert gradient(f, a, b) == pytest.approx(want, rel=1e-8)
    assert derivative(lambda u: f(u, b), a) == pytest.approx(want[0], rel=1e-8)
    xa, xb = np.array([0.7, 2.0, -0.5]), np.array([-1.3, 0.25, 4.0])
    g = lambda u, v: np.sum(op(u, v) ** 2)  # noqa: E731
    for got, exp in zip(gradient(g, xa, xb), fd.gradient(g, xa, xb)):
        np.testing.assert_allclose(got, exp, rtol=1e-8)
    fa, fb = Fraction(7, 10), Fraction(-13, 10)
    exact = {"add": (1, 1), "sub": (1, -1), "mul": (fb, fa), "truediv": (1 / fb, -fa / fb ** 2)}[name]
    got = gradient(lambda u, v: op(u, v), fa, fb)
    assert got == exact and all(type(e) is Fraction for e in got)


def test_quotient_of_large_numbers_keeps_its_derivative():
    """d(a/b)/db = -a/b**2 where b*b overflows: not the 0.0 of `-(a * t) / (b * b)`."""
    a, b = 1e300, 1e160
    assert gradient(lambda u, v: u / v, a, b)[1] == pytest.approx(-a / b / b, rel=1e-12, abs=0)
    assert derivative(lambda v: a / v, b) == pytest.approx(-a / b / b, rel=1e-12, abs=0)

    def kept(u, v):  # the result overwritten in its block: the inlined rule recomputes it
        u = u / v
        return u * 1.0
    assert gradient(kept, a, b)[1] == pytest.approx(-a / b / b, rel=1e-12, abs=0)
