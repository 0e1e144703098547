"""Mixed mode: forwarddiff's rrule applies a forward-mode Jacobian transposed; forward agrees with
reverse (when contexts.ad is available) and with finite differences."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contexts.compose import hessian, hvp
from contexts.forward import derivative, forwarddiff, jacfwd, jvp
from contexts.rules.registry import registry

from tests import fd

T = np.linspace(0.0, 2.0, 50)


def trajectory(p):
    return p[0] * np.exp(-p[1] * T) * np.cos(p[2] * T)


def reverse_gradient():
    try:
        from contexts.ad import gradient
    except ImportError:
        pytest.skip("contexts.ad (reverse mode) is not available yet")
    return gradient


def test_forwarddiff_is_the_function_itself():
    p = np.array([1.0, 0.5, 3.0])
    np.testing.assert_array_equal(forwarddiff(trajectory, p), trajectory(p))


def test_forwarddiff_rrule_pullback_is_transposed_jacobian():
    p = np.array([1.0, 0.5, 3.0])
    y, pullback = registry.get(forwarddiff).rrule(trajectory, p)
    np.testing.assert_allclose(y, trajectory(p))
    dy = np.cos(np.arange(50.0))
    dfn, dp = pullback(dy)
    assert dfn is None
    np.testing.assert_allclose(dp, fd.jacobian(trajectory, p).T @ dy, rtol=1e-6, atol=1e-8)


def test_forwarddiff_rrule_scalar_input():
    y, pullback = registry.get(forwarddiff).rrule(lambda x: x ** 3 * np.ones(2), 2.0)
    assert pullback(np.array([1.0, 2.0]))[1] == pytest.approx(12.0 * 3)


def test_forwarddiff_inside_reverse_mode():
    gradient = reverse_gradient()
    loss = lambda p: np.sum(forwarddiff(trajectory, p) ** 2)
    p = np.array([1.0, 0.5, 3.0])
    np.testing.assert_allclose(gradient(loss, p)[0], fd.jacobian(loss, p), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [
    lambda x: math.sin(x) * x ** 2,
    lambda x: math.exp(-x) / (1 + x * x),
    lambda x: math.atan(x) ** 3 - math.sqrt(x + 2),
])
def test_forward_agrees_with_reverse_and_fd(f):
    x = 0.7
    d = derivative(f, x)
    assert d == pytest.approx(fd.derivative(f, x), rel=1e-6)
    gradient = reverse_gradient()
    assert d == pytest.approx(gradient(f, x)[0], rel=1e-12)


def test_hessian_forward_over_reverse():
    reverse_gradient()
    f = lambda x: np.sum(np.sin(x) * x ** 2) + x[0] * x[1]
    x = np.array([0.3, -0.5, 0.9])
    np.testing.assert_allclose(hessian(f, x, inner="reverse"), fd.hessian(f, x), rtol=1e-5, atol=1e-6)
    from scipy.optimize import rosen, rosen_hess
    z = np.linspace(-1.0, 1.5, 10)
    np.testing.assert_allclose(hessian(rosen, z), rosen_hess(z), rtol=1e-10, atol=1e-8)
    v = np.arange(10.0)
    np.testing.assert_allclose(hvp(rosen, z, v), rosen_hess(z) @ v, rtol=1e-10, atol=1e-8)


finite = st.floats(-2.0, 2.0, allow_nan=False)


@settings(max_examples=40, deadline=None)
@given(st.lists(finite, min_size=3, max_size=3), st.lists(finite, min_size=3, max_size=3),
       st.floats(-3.0, 3.0))
def test_jvp_is_linear_in_the_tangent(x, v, a):
    f = lambda z: np.tanh(z) * z.sum() + z[0] * z[2]
    x, v = np.array(x), np.array(v)
    _, d1 = jvp(f, (x,), (v,))
    _, d2 = jvp(f, (x,), (a * v,))
    np.testing.assert_allclose(d2, a * d1, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(d1, jacfwd(f, x) @ v, rtol=1e-9, atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-2.0, 2.0), min_size=1, max_size=5), st.floats(-1.5, 1.5))
def test_polynomial_derivatives_match_closed_form(coefficients, x):
    poly = lambda z: sum(c * z ** k for k, c in enumerate(coefficients))
    closed = sum(k * c * x ** (k - 1) for k, c in enumerate(coefficients) if k)
    assert derivative(poly, x) == pytest.approx(closed, rel=1e-9, abs=1e-9)
