"""Type-generic math in contexts.rules.generic: each type keeps its kind, values match closed forms."""

import cmath
import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st
from uncertainties import ufloat
from uncertainties.core import AffineScalarFunc

from contexts.rules import generic as g

UNARY = ["sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "atanh",
         "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "erf", "erfc", "gamma", "lgamma"]


@pytest.mark.parametrize("name", UNARY + ["exp2", "cbrt"])
def test_float_fraction_array_ufloat_keep_their_kind(name):
    fn, x = getattr(g, name), 0.3
    want = getattr(math, name)(x) if hasattr(math, name) else {"exp2": 2 ** x, "cbrt": x ** (1 / 3)}[name]
    assert type(fn(x)) is float and fn(x) == pytest.approx(want, rel=1e-14)
    assert type(fn(Fraction(3, 10))) is float and fn(Fraction(3, 10)) == pytest.approx(want, rel=1e-14)
    arr = fn(np.array([x, x]))
    assert isinstance(arr, np.ndarray) and arr == pytest.approx([want, want], rel=1e-14)
    assert isinstance(fn(np.float32(x)), np.floating)
    u = fn(ufloat(x, 0.01))
    assert isinstance(u, AffineScalarFunc) and u.nominal_value == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("name", ["sin", "cos", "tan", "exp", "log", "sqrt", "asin", "acos", "atan",
                                  "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "log10"])
def test_complex_goes_to_cmath(name):
    z = 0.4 + 0.9j
    assert getattr(g, name)(z) == getattr(cmath, name)(z)


def test_ufloat_uncertainty_is_propagated():
    u = g.sin(ufloat(0.3, 0.01))
    assert u.std_dev == pytest.approx(math.cos(0.3) * 0.01, rel=1e-12)
    d = g.digamma(ufloat(0.3, 0.01))  # d digamma/dx = trigamma
    assert d.nominal_value == pytest.approx(scipy.special.digamma(0.3), rel=1e-12)
    assert d.std_dev == pytest.approx(scipy.special.polygamma(1, 0.3) * 0.01, rel=1e-9)
    c = g.cbrt(ufloat(-8.0, 0.3))
    assert c.nominal_value == pytest.approx(-2.0) and c.std_dev == pytest.approx(0.3 / 12)


class Dual:
    """A minimal forward-mode dual number that only speaks numpy's ufunc protocol."""

    def __init__(self, value, tangent):
        self.value, self.tangent = value, tangent

    def __array_ufunc__(self, ufunc, method, x, **kwargs):
        derivative = {np.sin: np.cos, np.exp: np.exp,
                      scipy.special.erf: lambda v: 2 / np.sqrt(np.pi) * np.exp(-v * v)}[ufunc]
        return Dual(ufunc(x.value), derivative(x.value) * x.tangent)


def test_unknown_types_go_to_the_ufunc():
    for name in ("sin", "exp", "erf"):
        d = getattr(g, name)(Dual(0.3, 1.0))
        assert isinstance(d, Dual) and d.value == pytest.approx(getattr(math, name)(0.3))
    assert g.sin(Dual(0.3, 2.0)).tangent == pytest.approx(2 * math.cos(0.3))


@settings(max_examples=60, deadline=None)
@given(st.floats(-30, 30).filter(lambda x: abs(x - round(x)) > 1e-3 or x > 0.5))
def test_digamma_matches_scipy(x):
    assert g.digamma(x) == pytest.approx(scipy.special.digamma(x), rel=1e-11, abs=1e-11)


def test_digamma_arrays_and_log_base():
    np.testing.assert_allclose(g.digamma(np.array([0.3, 4.0])), scipy.special.digamma([0.3, 4.0]))
    assert g.log(8.0, 2) == pytest.approx(3.0) and g.log(1.0) == 0.0


def test_sign_floor_keep_exact_types():
    assert g.sign(-2.5) == -1 and type(g.sign(Fraction(1, 3))) is int and g.sign(0.0) == 0
    assert g.sign(3j) == 1j and g.sign(0j) == 0
    assert g.sign(ufloat(-2.0, 1.0)) == -1
    assert g.floor(Fraction(7, 2)) == 3 and type(g.floor(-1.5)) is int
    np.testing.assert_array_equal(g.sign(np.array([-2.0, 0.0, 3.0])), [-1, 0, 1])


def test_project_and_fit():
    assert g.project(2 + 3j, 1.0) == 2.0 and g.project(2 + 3j, 1j) == 2 + 3j
    assert g.project(2 + 3j, Fraction(1)) == 2.0
    np.testing.assert_array_equal(g.fit(np.ones((2, 3)) * (1 + 1j), np.zeros(3)), [2.0, 2.0, 2.0])
    assert g.fit(np.ones(3), 0.5) == 3.0 and g.fit(None, 1.0) is None


def test_atan2_hypot_generic():
    assert g.atan2(1.0, 1.0) == pytest.approx(math.pi / 4)
    assert g.hypot(3.0, 4.0) == 5.0
    h = g.hypot(ufloat(3.0, 0.1), 4.0)
    assert h.nominal_value == pytest.approx(5.0) and h.std_dev == pytest.approx(0.06)
    np.testing.assert_allclose(g.hypot(np.array([3.0]), np.array([4.0])), [5.0])
