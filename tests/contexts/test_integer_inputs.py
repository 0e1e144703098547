"""Integers given where a derivative is asked (`gradient(f, 1)`, `derivative(f, 3)`, a list of ints): numpy
takes an integer for a constant (`np.sin(1)`'s rule had no partial in an integer argument, `np.asarray(3)`
is an integer array, `np.power(1, 2)` an integer), and the derivative through it was dropped, silently
(0 for cos(1); found by running the third-party suite's functions at rounded points: pint's kinetic energy
at 3, scipy.special.erf at 0). Each entry point checks such arguments by running again with floats of the
same values (`contexts.ad.api._ints_checked`, `contexts.forward.api._ints_checked`). Expected values are
central differences of the function at the float point (tests/fd.py); exact ints stay exact where pure
Python keeps them so."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special

from contexts import (derivative, gradient, hessian, jacfwd, jacobian, jvp, pullback, value_and_gradient,
                      vjp)
from tests import fd

SCALAR = {
    "np_sin": lambda x: np.sin(x),
    "np_exp_times": lambda x: np.exp(x) * 0.5,
    "erf": lambda x: scipy.special.erf(x),
    "expit": lambda x: scipy.special.expit(x),
    "np_sqrt_shifted": lambda x: np.sqrt(x + 1),
    "np_hypot": lambda x: np.hypot(x, 3.0),
    "float64_times_self": lambda x: np.float64(x) * x,
    "array_of_it_summed": lambda x: np.array([x, 2 * x]).sum() * 1.5,
    "asarray_squared": lambda x: float(np.asarray(x) ** 2),
    "np_power": lambda x: np.power(x, 3),
    "int_and_numpy": lambda x: x * x + np.log1p(x),
}
POINTS = (0, 1, 3)


def _fd(f, x):
    return fd.derivative(f, float(x))


@pytest.mark.parametrize("x", POINTS)
@pytest.mark.parametrize("name", sorted(SCALAR))
def test_gradient_at_an_int_is_the_float_points(name, x):
    f = SCALAR[name]
    want = _fd(f, x)
    (g,) = gradient(f, x)
    assert math.isclose(float(g), want, rel_tol=1e-6, abs_tol=1e-8), (g, want)
    value, (g2,) = value_and_gradient(f, x)
    assert math.isclose(float(g2), want, rel_tol=1e-6, abs_tol=1e-8) and value == f(x)


@pytest.mark.parametrize("x", POINTS)
@pytest.mark.parametrize("name", sorted(SCALAR))
def test_forward_at_an_int_is_the_float_points(name, x):
    f = SCALAR[name]
    want = _fd(f, x)
    assert math.isclose(float(derivative(f, x)), want, rel_tol=1e-6, abs_tol=1e-8)
    value, dy = jvp(f, (x,), (1.0,))
    assert math.isclose(float(dy), want, rel_tol=1e-6, abs_tol=1e-8) and value == f(x)


@pytest.mark.parametrize("name", sorted(SCALAR))
def test_pullback_and_vjp_at_an_int(name):
    f = SCALAR[name]
    want = _fd(f, 1)
    _, back = pullback(f, 1)
    assert math.isclose(float(back(1.0)[0]), want, rel_tol=1e-6, abs_tol=1e-8)
    _, (g,) = vjp(f, (1,), 2.0)
    assert math.isclose(float(g), 2 * want, rel_tol=1e-6, abs_tol=1e-8)


def test_numpy_integer_argument():
    want = math.cos(2.0)
    assert math.isclose(float(gradient(np.sin, np.int64(2))[0]), want, rel_tol=1e-12)
    assert math.isclose(float(derivative(lambda x: np.sin(x), np.int64(2))), want, rel_tol=1e-12)


def test_a_list_of_ints():
    f = lambda v: np.sin(v[0]) * v[1] + np.asarray(v[1]) ** 2  # noqa: E731
    want = fd.gradient(lambda a, b: f([a, b]), 1.0, 2.0)
    (g,) = gradient(f, [1, 2])
    np.testing.assert_allclose(np.asarray(g, dtype=float), want, rtol=1e-6)
    np.testing.assert_allclose(jacfwd(f, [1, 2]), want, rtol=1e-6)


def test_jacobians_at_an_int():
    f = lambda x: np.array([np.sin(x), np.power(x, 2) * 1.0])  # noqa: E731
    want = fd.jacobian(f, 2.0)
    np.testing.assert_allclose(np.ravel(jacobian(f, 2)), np.ravel(want), rtol=1e-6)
    np.testing.assert_allclose(np.ravel(jacfwd(f, 2)), np.ravel(want), rtol=1e-6)


def test_wrt_an_int_and_a_float():
    f = lambda x, n: np.sin(n) * x  # noqa: E731
    assert math.isclose(gradient(f, 2.0, 1, wrt=1)[0], 2 * math.cos(1.0), rel_tol=1e-12)
    gx, gn = gradient(f, 2.0, 1)
    assert math.isclose(gx, math.sin(1.0), rel_tol=1e-12) and math.isclose(gn, 2 * math.cos(1.0), rel_tol=1e-12)


def test_second_derivative_at_an_int():
    assert math.isclose(float(hessian(lambda x: np.sin(x), 1)), -math.sin(1.0), rel_tol=1e-9)
    assert math.isclose(float(hessian(lambda x: np.power(x, 3), 2)), 12.0, rel_tol=1e-9)


def test_exact_ints_stay_exact():
    f = lambda x: x ** 2 + 3 * x + 1  # noqa: E731
    (g,) = gradient(f, 3)
    assert g == 9 and type(g) is int
    d = derivative(f, 3)
    assert d == 9 and type(d) is int


_RUNS: list = []


def _loop_pow(x, n):
    _RUNS.append(None)
    r = 1.0
    while n > 0:
        n -= 1
        r = r * x
    return r


def test_counts_keep_their_answer_and_are_not_run_again():
    _RUNS.clear()
    gx, gn = gradient(_loop_pow, 1.5, 4)
    assert math.isclose(gx, 4 * 1.5 ** 3, rel_tol=1e-12) and gn == 0
    assert len(_RUNS) == 1  # (n only steers: `while n > 0: n -= 1` reaches no value, no second run)
    # a count used by range: the float run cannot take it, the integer run's answer stands
    g = gradient(lambda x, n: sum(np.sin(x * k) for k in range(n)), 0.5, 3)
    assert math.isclose(g[0], sum(k * math.cos(0.5 * k) for k in range(3)), rel_tol=1e-12) and g[1] == 0


def _special_at_zero(r):
    # a special case at 0 (numpy_financial's pmt: `np.where(rate == 0, ...)`), its input an array of it
    r = np.asarray(r) * 1.0
    return float(np.where(r == 0, 100.0 / 12, r * 100 / (1 - (1 + r) ** -12)))


def test_refused_at_the_float_is_refused_at_the_int():
    from overdub.errors import OverdubError
    for run in (lambda: gradient(_special_at_zero, 0), lambda: derivative(_special_at_zero, 0),
                lambda: pullback(_special_at_zero, 0)[1](1.0)):
        with pytest.raises(OverdubError):
            run()
    # a size made by int(): the float's int() is on its jump, so no derivative is established for it: None
    # beside the float argument, refused where it is chosen, with the way out named
    sized = lambda x, n: np.sum(np.zeros(int(n)) + x)  # noqa: E731
    assert gradient(sized, 2.0, 3) == (3.0, None)
    assert gradient(sized, 2.0, 3, wrt=0) == (3.0,)
    with pytest.raises(OverdubError, match="wrt="):
        gradient(sized, 2.0, 3, wrt=1)
    assert pullback(sized, 2.0, 3)[1](1.0) == (3.0, None)
