"""Third-party numerical code differentiated unchanged, against closed forms or finite differences.

None of these functions was written for AD: numpy's and scipy's own Python-level code runs under the
reverse-mode context as it is, and rules take over only where it drops into C.

The function picked from a separate PyPI package is `opt_einsum.contract` (opt_einsum 3.x, installed here
as a dependency of jax): it is pure Python, widely used, and exercises exactly what numpy code does in the
wild -- string parsing, path optimisation over Python lists, caches, backend dispatch by module name, and
finally `np.tensordot`/`np.einsum`/`transpose` calls on the operands it pops from a list. Its result is
a plain einsum, so `np.einsum`'s closed-form derivative is the reference.
"""

import numpy as np
import opt_einsum
import pytest
import scipy.optimize
import scipy.special
import scipy.stats
from numpy.polynomial import chebyshev
from uncertainties import ufloat

from contexts import gradient, value_and_gradient

from tests import fd
from tests.fd import assert_grad_fd

rng = np.random.default_rng(11)
X5 = rng.normal(size=5)
M34 = rng.normal(size=(3, 4))


# --- numpy.linalg.norm, every order -----------------------------------------------------------------

@pytest.mark.parametrize("ord", [None, 1, 2, np.inf, -np.inf, 3, 0.5])
def test_linalg_norm_vector_orders(ord):
    assert_grad_fd(lambda x: np.linalg.norm(x, ord=ord), X5)


@pytest.mark.parametrize("ord", [None, "fro", "nuc", 1, -1, 2, -2, np.inf])
def test_linalg_norm_matrix_orders(ord):
    assert_grad_fd(lambda m: np.linalg.norm(m, ord=ord), M34, rtol=1e-4)


def test_linalg_norm_closed_form_and_axis():
    (g,) = gradient(lambda x: np.linalg.norm(x), X5)
    np.testing.assert_allclose(g, X5 / np.sqrt(np.sum(X5 ** 2)))
    assert_grad_fd(lambda m: np.sum(np.linalg.norm(m, axis=1) ** 3), M34)


# --- polynomials, quadrature, interpolation ---------------------------------------------------------

def test_polyval():
    p, t = np.array([1.0, -2.0, 0.5, 3.0]), X5
    gp, gt = gradient(lambda p, t: np.sum(np.polyval(p, t)), p, t)
    np.testing.assert_allclose(gp, [np.sum(t ** 3), np.sum(t ** 2), np.sum(t), 5.0])
    np.testing.assert_allclose(gt, 3 * t ** 2 - 4 * t + 0.5)


def test_trapezoid():
    t = np.cumsum(np.abs(X5) + 0.1)
    assert_grad_fd(lambda y, t: np.trapezoid(y ** 2, t), X5, t)


def test_interp():
    xp = np.linspace(0.0, 1.0, 6)
    fp = np.sin(3 * xp)
    t = np.array([0.13, 0.55, 0.91])
    gt, gfp = gradient(lambda t, fp: np.sum(np.interp(t, xp, fp)), t, fp)
    segment = np.searchsorted(xp, t) - 1
    np.testing.assert_allclose(gt, (np.diff(fp) / 0.2)[segment])  # the slope of the segment holding t
    assert_grad_fd(lambda t, fp: np.sum(np.interp(t, xp, fp) ** 2), t, fp)


def test_power_series_polyval():
    c, t = np.array([1.0, 0.5, -0.3]), np.array([-0.4, 0.1, 0.7])
    gc, gt = gradient(lambda c, t: np.sum(np.polynomial.polynomial.polyval(t, c)), c, t)
    np.testing.assert_allclose(gc, [3.0, np.sum(t), np.sum(t ** 2)])
    np.testing.assert_allclose(gt, 0.5 - 0.6 * t)


def test_chebyshev_series():
    c, t = np.array([1.0, 0.5, -0.3, 0.2]), np.array([-0.4, 0.1, 0.7])
    gc, gt = gradient(lambda c, t: np.sum(chebyshev.chebval(t, c)), c, t)
    np.testing.assert_allclose(gc, [np.sum(chebyshev.chebval(t, np.eye(4)[k])) for k in range(4)])
    np.testing.assert_allclose(gt, chebyshev.chebval(t, chebyshev.chebder(c)))


def test_polynomial_class():
    c, t = np.array([1.0, 0.5, -0.3]), np.array([-0.4, 0.1, 0.7])
    assert_grad_fd(lambda c, t: np.sum(np.polynomial.Polynomial(c)(t) ** 2), c, t)


# --- scipy ------------------------------------------------------------------------------------------

def test_logsumexp_is_softmax():
    (g,) = gradient(scipy.special.logsumexp, X5)
    np.testing.assert_allclose(g, np.exp(X5) / np.sum(np.exp(X5)))
    assert_grad_fd(lambda m: np.sum(scipy.special.logsumexp(m, axis=0) ** 2), M34)
    assert_grad_fd(lambda m: np.sum(scipy.special.logsumexp(m, axis=1, keepdims=True) * m), M34)


def test_logsumexp_weights():
    assert_grad_fd(lambda m, b: np.sum(scipy.special.logsumexp(m, axis=0, b=b)), M34, np.abs(M34) + 0.1)


def test_scipy_special_python_level():
    x = np.array([1.1, 0.9, 1.3, 0.7])
    assert_grad_fd(lambda x: scipy.special.softmax(x)[0] + scipy.special.log_softmax(x)[1], x)
    assert_grad_fd(lambda x: np.sum(scipy.special.expit(x) * scipy.special.xlogy(x, x)), x)


def test_rosen_matches_rosen_der():
    x = np.array([1.1, 0.9, 1.3, 0.7, -0.4])
    value, (g,) = value_and_gradient(scipy.optimize.rosen, x)
    assert value == pytest.approx(scipy.optimize.rosen(x))
    np.testing.assert_allclose(g, scipy.optimize.rosen_der(x), rtol=1e-12)


def test_norm_logpdf():
    x, m, s = X5, 0.3, 1.7
    gx, gm, gs = gradient(lambda x, m, s: np.sum(scipy.stats.norm.logpdf(x, loc=m, scale=s)), x, m, s)
    np.testing.assert_allclose(gx, -(x - m) / s ** 2)
    assert gm == pytest.approx(np.sum(x - m) / s ** 2)
    assert gs == pytest.approx(np.sum((x - m) ** 2) / s ** 3 - len(x) / s)


# --- a Runge-Kutta integrator in plain numpy --------------------------------------------------------

def rk4(f, y0, t0, t1, n, *params):
    """Classic 4th-order Runge-Kutta with n fixed steps from t0 to t1."""
    h = (t1 - t0) / n
    y = y0
    t = t0
    for _ in range(n):
        k1 = f(t, y, *params)
        k2 = f(t + h / 2, y + h / 2 * k1, *params)
        k3 = f(t + h / 2, y + h / 2 * k2, *params)
        k4 = f(t + h, y + h * k3, *params)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t = t + h
    return y


def decay(t, y, k):
    return -k * y


def lotka_volterra(t, y, a, b):
    return np.array([a * y[0] - b * y[0] * y[1], -y[1] + 0.5 * y[0] * y[1]])


def test_rk4_exponential_decay_closed_form():
    # y(1) = y0 exp(-k): d/dk = -y0 exp(-k), d/dy0 = exp(-k); RK4 with 50 steps is accurate to ~1e-9
    (gy0, gk) = gradient(lambda y0, k: rk4(decay, y0, 0.0, 1.0, 50, k)[0], np.array([2.0]), 0.7)
    assert gk == pytest.approx(-2.0 * np.exp(-0.7), rel=1e-7)
    np.testing.assert_allclose(gy0, [np.exp(-0.7)], rtol=1e-7)


def test_rk4_with_tuple_assignment():
    def euler(k, y0):
        y, t = y0, 0.0
        for _ in range(10):
            y, t = y - 0.1 * k * y, t + 0.1
        return y
    gk, gy0 = gradient(euler, 0.7, 2.0)
    assert gy0 == pytest.approx(0.93 ** 10)
    assert gk == pytest.approx(2.0 * 10 * 0.93 ** 9 * -0.1)


def test_rk4_lotka_volterra_vs_finite_differences():
    def loss(y0, a, b):
        return np.sum(rk4(lotka_volterra, y0, 0.0, 1.0, 20, a, b) ** 2)
    assert_grad_fd(loss, np.array([1.0, 0.5]), 1.1, 0.4)


# --- a function from a PyPI package not written for AD ----------------------------------------------

@pytest.mark.parametrize("optimize", [False, "greedy"])
def test_opt_einsum_contract(optimize):
    a, b, c = M34, rng.normal(size=(4, 2)), rng.normal(size=2)
    ga, gb, gc = gradient(lambda a, b, c: opt_einsum.contract("ij,jk,k->", a, b, c, optimize=optimize), a, b, c)
    np.testing.assert_allclose(ga, np.outer(np.ones(3), b @ c))
    np.testing.assert_allclose(gb, np.outer(a.sum(0), c))
    np.testing.assert_allclose(gc, a.sum(0) @ b)


# --- composition: a numpy function on an object array of ufloats ------------------------------------

U = np.array([ufloat(1.0, 0.1), ufloat(2.0, 0.2), ufloat(0.5, 0.05)], dtype=object)
NOMINAL = np.array([u.nominal_value for u in U])
SIGMA = np.array([u.std_dev for u in U])
QUAD = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, -0.3], [0.0, -0.3, 3.0]])


def _assert_ufloat_gradient(f, g):
    """g (object array of ufloats) has nominal values = FD gradient of f at the nominal point, and
    standard deviations = sqrt(sum_j (H_ij sigma_j)^2) with H the FD Hessian."""
    assert g is not None and g.dtype == object and len(g) == 3
    # an element no output depends on may come back as a plain zero: nominal 0, no uncertainty
    nominal = np.array([getattr(v, "nominal_value", v) for v in g], dtype=float)
    std = np.array([getattr(v, "std_dev", 0.0) for v in g])
    np.testing.assert_allclose(nominal, fd.gradient(f, NOMINAL)[0], rtol=1e-6, atol=1e-10)
    hess = np.array([fd.gradient(lambda x, i=i: fd.gradient(f, x)[0][i], NOMINAL)[0]
                     for i in range(3)])
    np.testing.assert_allclose(std, np.sqrt(((hess * SIGMA) ** 2).sum(axis=1)), rtol=1e-4, atol=1e-9)


@pytest.mark.parametrize("f", [
    lambda x: np.dot(x, x),
    lambda x: np.sum(x * x) + (x * x).sum(),
    lambda x: np.sum(np.cumsum(x) * x),
    lambda x: np.sum(np.outer(x, x)),
    lambda x: np.sum(x * x[::-1]),
    lambda x: x[0] * x[2],
    lambda x: x @ QUAD @ x,
    lambda x: np.mean(x) * np.sum(x),
    lambda x: np.sum(3.0 * x * x * x - x / 2.0),
    lambda x: np.sum(x ** 2) + np.prod(x),
], ids=["dot", "sum_of_squares", "cumsum", "outer", "reversed_product", "element_indexing",
        "matmul_with_float_matrix", "mean", "scalar_times_array", "power_prod"])
def test_gradient_on_object_array_of_ufloats(f):
    (g,) = gradient(f, U)
    _assert_ufloat_gradient(f, g)


def test_reverse_jacobian_of_a_ufloat():
    # (numpy's iscomplexobj of a ufloat raised TypeError: jacobian crashed on any ufloat input)
    from contexts import jacobian
    x = ufloat(1.5, 0.1)
    j = jacobian(lambda a: a * a * a, x)
    assert j.nominal_value == pytest.approx(fd.derivative(lambda a: a ** 3, 1.5), rel=1e-6)
    assert j.std_dev == pytest.approx(6 * 1.5 * 0.1, rel=1e-12)  # d(3a²) = 6a da


def test_unumpy_functions_in_forward_mode():
    # (np.vectorize's pyfunc, umath.sin, was recursed into on each element's dual, never given its rule:
    # refused on reading a dual's `.nominal_value`)
    from uncertainties import unumpy
    from contexts import derivative, jacfwd
    xu = unumpy.uarray([1.0, 2.0], [0.1, 0.2])
    j = jacfwd(lambda x: unumpy.sin(x).sum(), xu)
    np.testing.assert_allclose(unumpy.nominal_values(j), np.cos([1.0, 2.0]), rtol=1e-12)
    np.testing.assert_allclose(unumpy.std_devs(j), np.abs(np.sin([1.0, 2.0])) * [0.1, 0.2], rtol=1e-12)
    d = derivative(lambda t: unumpy.sin(xu * t).sum(), 1.0)
    assert d.nominal_value == pytest.approx(fd.derivative(lambda t: np.sin(np.array([1.0, 2.0]) * t).sum(), 1.0),
                                            rel=1e-6)
