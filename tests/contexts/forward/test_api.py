"""The forward-mode API on real code: control flow, closures, objects, math, numpy, third-party
functions (colorsys, numpy.linalg.norm, scipy.optimize.rosen) — all against finite differences or
closed forms."""

import array
import colorsys
import math

import numpy as np
import pytest
import scipy.optimize

from contexts.compose import hessian, hvp, jacobian
from contexts.forward import NoForwardRule, derivative, jacfwd, jvp

from tests import fd


def reverse_engine():
    """contexts.ad's (gradient, pullback), or skip while the reverse engine has not landed."""
    try:
        from contexts.ad import gradient, pullback
    except ImportError:
        pytest.skip("contexts.ad (reverse mode) is not available yet")
    return gradient, pullback


def power_loop(x, n=10):
    r = 1.0
    i = 0
    while i < n:
        r = r * x
        i += 1
    return r


class Polynomial:
    def __init__(self, coefficients):
        self.coefficients = coefficients

    def __call__(self, x):
        total = 0.0
        for c in reversed(self.coefficients):
            total = total * x + c
        return total


def branchy(x):
    if x > 1.0:
        return math.exp(-x) * math.sin(3 * x)
    return math.log1p(x * x) + math.atan2(x, 2.0)


def test_control_flow_loop():
    assert derivative(power_loop, 1.1) == pytest.approx(10 * 1.1 ** 9)


@pytest.mark.parametrize("x", [0.3, 1.7])
def test_branches_and_math_functions(x):
    assert derivative(branchy, x) == pytest.approx(fd.derivative(branchy, x), rel=1e-6)


def test_objects_and_closures():
    p = Polynomial([1.0, -2.0, 0.5, 3.0])
    assert derivative(p, 0.7) == pytest.approx(fd.derivative(p, 0.7), rel=1e-6)

    def make_scaled(a):
        def scaled(x):
            return a * math.cos(x) + sum(x ** k for k in range(3))
        return scaled
    g = make_scaled(2.5)
    assert derivative(g, 0.4) == pytest.approx(fd.derivative(g, 0.4), rel=1e-6)


def test_colorsys_unchanged():
    f = lambda r: np.array(colorsys.rgb_to_hsv(r[0], r[1], r[2]))
    x = np.array([0.2, 0.5, 0.9])
    np.testing.assert_allclose(jacfwd(f, x), fd.jacobian(f, x), rtol=1e-5, atol=1e-8)
    assert derivative(lambda g: colorsys.rgb_to_hsv(0.2, g, 0.9)[0], 0.5) == pytest.approx(
        fd.derivative(lambda g: colorsys.rgb_to_hsv(0.2, g, 0.9)[0], 0.5), rel=1e-6)


def test_numpy_linalg_norm():
    x = np.array([0.3, -1.2, 2.0])
    np.testing.assert_allclose(jacfwd(np.linalg.norm, x), x / np.linalg.norm(x), rtol=1e-12)


def test_rosen_hessian_equals_rosen_hess():
    x = np.linspace(-1.0, 1.5, 10)
    np.testing.assert_allclose(hessian(scipy.optimize.rosen, x, inner="forward"),
                               scipy.optimize.rosen_hess(x), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(jacfwd(scipy.optimize.rosen, x), scipy.optimize.rosen_der(x), rtol=1e-10)


def mlp_loss(theta, inputs, targets):
    w1 = theta[:12].reshape(3, 4)
    b1 = theta[12:16]
    w2 = theta[16:20]
    hidden = np.tanh(inputs @ w1 + b1)
    prediction = hidden @ w2
    return np.mean((prediction - targets) ** 2) + 0.01 * np.sum(theta ** 2)


@pytest.fixture
def mlp_problem():
    rng = np.random.default_rng(0)
    return rng.standard_normal(20) * 0.5, rng.standard_normal((5, 3)), rng.standard_normal(5)


def test_mlp_loss_hessian_matches_finite_differences(mlp_problem):
    theta, inputs, targets = mlp_problem
    f = lambda t: mlp_loss(t, inputs, targets)
    h = hessian(f, theta, inner="forward")
    np.testing.assert_allclose(h, h.T, atol=1e-12)
    np.testing.assert_allclose(h, fd.hessian(f, theta), rtol=1e-4, atol=1e-5)


def test_hvp_is_hessian_times_vector(mlp_problem):
    theta, inputs, targets = mlp_problem
    f = lambda t: mlp_loss(t, inputs, targets)
    v = np.linspace(-1, 1, 20)
    np.testing.assert_allclose(hvp(f, theta, v, inner="forward"), fd.hessian(f, theta) @ v,
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("chunk", [1, 3, 7, None])
def test_jacfwd_chunks_agree_with_finite_differences(chunk):
    f = lambda x: np.concatenate([np.sin(x) * x.sum(), np.cumsum(x ** 2)[::2], [np.prod(x[:3])]])
    x = np.linspace(0.1, 0.9, 7)
    np.testing.assert_allclose(jacfwd(f, x, chunk=chunk), fd.jacobian(f, x), rtol=1e-6, atol=1e-8)


def test_jacfwd_matrix_input_and_output():
    f = lambda a: a.T @ a + np.exp(a[0, 0])
    a = np.arange(6.0).reshape(3, 2) / 5
    jac = jacfwd(f, a, chunk=4)
    assert jac.shape == (2, 2, 3, 2)
    np.testing.assert_allclose(jac, fd.jacobian(f, a), rtol=1e-6, atol=1e-8)


def test_jvp_several_arguments():
    f = lambda a, b, c: (a * np.sin(b) + c, a ** 2)
    (y1, y2), (d1, d2) = jvp(f, (np.array([1.0, 2.0]), 0.3, 4.0), (np.array([1.0, -1.0]), 2.0, None))
    np.testing.assert_allclose(d1, np.array([1.0, -1.0]) * np.sin(0.3) + np.array([1.0, 2.0]) * np.cos(0.3) * 2)
    np.testing.assert_allclose(d2, 2 * np.array([1.0, 2.0]) * np.array([1.0, -1.0]))
    np.testing.assert_allclose(y2, [1.0, 4.0])


def test_derivative_of_constant_and_tuple_outputs():
    assert derivative(lambda x: 3.0, 1.0) == 0.0
    d = derivative(lambda x: (x * 2, math.cos(x)), 0.5)
    assert d[0] == 2.0 and d[1] == pytest.approx(-math.sin(0.5))


def test_float_inside_context_keeps_derivative():
    assert derivative(lambda x: float(x) * 3, 2.0) == 3.0


def c_function_without_rule(x):
    return array.array("d", [x, x])[0] + 1.0


def test_missing_rule_names_function_and_site():
    with pytest.raises(NoForwardRule) as e:
        derivative(c_function_without_rule, 1.0)
    msg = str(e.value)
    assert "array" in msg and "test_api.py:" in msg and "registry.frule" in msg


def test_jacobian_modes():
    f = lambda x: np.array([x[0] * x[1], x[1] ** 3])
    x = np.array([2.0, 3.0])
    np.testing.assert_allclose(jacobian(f, x), [[3.0, 2.0], [0.0, 27.0]])
    reverse_engine()
    np.testing.assert_allclose(jacobian(f, x, mode="reverse"), [[3.0, 2.0], [0.0, 27.0]])


# -- forward over reverse through stores into arrays ---------------------------------------------------

def _stores_into_an_array_made_from_x(x):
    z = np.zeros_like(x, shape=4)          # carries a tangent under forward over reverse
    z[1:3] = x[:2] ** 2
    z[0] = x[2] * x[0]
    return np.sum(z * z) + z[1] * x[1]


def test_hessian_through_stores_into_an_array_made_from_the_input():
    x = np.array([1.3, -0.7, 2.1])
    np.testing.assert_allclose(hessian(_stores_into_an_array_made_from_x, x),
                               fd.hessian(_stores_into_an_array_made_from_x, x), rtol=1e-4, atol=1e-4)


_ZEROS = np.zeros(4)


def test_hessian_storing_into_a_plain_array_says_how_to_fix_it():
    """An array made by np.zeros or np.array of constants in the user's code takes the perturbed values (a dual
    of zero tangent, tests/contexts/forward/test_hessian_fresh_arrays.py); a plain array made otherwise (a copy of
    a module's) is refused."""
    from contexts.ad.runtime import UnsupportedFunction

    def f(x):
        z = _ZEROS.copy()
        z[1:3] = x[:2] ** 2
        return np.sum(z * z)
    with pytest.raises(UnsupportedFunction, match="zeros_like"):
        hessian(f, np.array([1.3, -0.7, 2.1]))
