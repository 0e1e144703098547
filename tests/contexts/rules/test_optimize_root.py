"""scipy.optimize.root in reverse and forward mode, by the implicit function theorem
(contexts/rules/numpy/scipy_root.py on fsolve's core): the solution's derivative with respect to what F
closes over and its `args`, every method alike, against closed forms and central differences; `fun` (F at
the root) has derivative 0; refused where there is none (a singular Jacobian, an x that is no root, the
solver's state, a second derivative). Each test runs one mode alone (`one_mode`: no other mode answering)."""

import numpy as np
import pytest

so = pytest.importorskip("scipy.optimize")

from contexts import derivative, gradient, hessian, jacfwd, jacobian  # noqa: E402
from overdub.errors import OverdubError  # noqa: E402
from tests import fd  # noqa: E402

pytestmark = [pytest.mark.one_mode, pytest.mark.filterwarnings("ignore::RuntimeWarning")]

METHODS = ["hybr", "lm", "broyden1", "krylov", "df-sane"]
TOL = {"hybr": 1e-13, "lm": 1e-13, "broyden1": 1e-12, "krylov": 1e-12, "df-sane": 1e-13}
P = np.array([1.5, 0.7])


def d_reverse(f, x):
    return gradient(f, x)[0]


MODES = {"reverse": d_reverse, "forward": derivative}
JACOBIANS = {"reverse": lambda f, x: jacobian(f, x, mode="reverse"), "forward": jacfwd}


def cubic(r, method="hybr"):
    """The repro: x³ + x = r, dx/dr = 1/(3x² + 1)."""
    def JL(p):
        return np.array([p[0] ** 3 + p[0] - r])
    return so.root(JL, [1.0], method=method, tol=TOL[method]).x[0]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("method", METHODS)
def test_cubic_closed_form(mode, method):
    r = 3.0
    x = cubic(r, method)
    assert MODES[mode](lambda r: cubic(r, method), r) == pytest.approx(1 / (3 * x ** 2 + 1), rel=1e-7)


def system_args(v, method="hybr"):
    def F(x, a, b):
        return np.array([x[0] ** 2 + x[1] - a, x[0] - b * x[1] ** 3])
    return so.root(F, [1.0, 1.0], args=(v[0], v[1]), method=method, tol=TOL[method]).x


def system_closure(v, method="hybr"):
    a, b = v[0] * 2.0, v[1]

    def F(x):
        return [np.exp(x[0]) - a * x[1], x[0] + x[1] ** 2 - b - 1.0]
    return so.root(F, np.array([0.5, 1.0]), method=method, tol=TOL[method]).x


def system_one_arg(v, method="hybr"):
    return so.root(lambda x, c: np.array([x[0] ** 3 + x[1] - c[0], x[0] - c[1] * x[1]]), [1.0, 1.0], args=v,
                   method=method, tol=TOL[method]).x


def system_jac_true(v, method="hybr"):
    def F(x):
        f = np.array([x[0] ** 2 + x[1] - v[0], x[0] - v[1] * x[1] ** 3])
        J = np.array([[2 * x[0], 1.0], [1.0, -3 * v[1] * x[1] ** 2]])
        return f, J
    return so.root(F, [1.0, 1.0], jac=True, method=method, tol=TOL[method]).x


def system_jac_callable(v, method="hybr"):
    def F(x):
        return np.array([x[0] ** 2 + x[1] - v[0], x[0] - v[1] * x[1] ** 3])

    def J(x):
        return np.array([[2 * x[0], 1.0], [1.0, -3 * v[1] * x[1] ** 2]])
    return so.root(F, [1.0, 1.0], jac=J, method=method, tol=TOL[method]).x


SYSTEMS = [system_args, system_closure, system_one_arg]


@pytest.mark.parametrize("mode", JACOBIANS)
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("f", SYSTEMS, ids=lambda f: f.__name__)
def test_systems_against_differences(f, method, mode):
    def g(v):
        return f(v, method)
    np.testing.assert_allclose(JACOBIANS[mode](g, P), fd.jacobian(g, P, matrix=True), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mode", JACOBIANS)
@pytest.mark.parametrize("method", ["hybr", "lm"])
@pytest.mark.parametrize("f", [system_jac_true, system_jac_callable], ids=["jac_true", "jac_callable"])
def test_jac_given(f, method, mode):
    def g(v):
        return f(v, method)
    np.testing.assert_allclose(JACOBIANS[mode](g, P), fd.jacobian(g, P, matrix=True), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mode", JACOBIANS)
def test_closed_form_system(mode):
    """x₀ = a, x₁ = b − x₀²: dx/d(a, b) = [[1, 0], [−2a, 1]]."""
    def g(v):
        return so.root(lambda x: [x[0] - v[0], x[1] + x[0] ** 2 - v[1]], [0.0, 0.0], method="lm", tol=1e-14).x
    np.testing.assert_allclose(JACOBIANS[mode](g, P), [[1, 0], [-2 * P[0], 1]], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_fun_has_derivative_zero(mode):
    """res.fun is F at the root: 0 for every θ, so the total's derivative is x's alone."""
    def f(r):
        res = so.root(lambda p: np.array([p[0] ** 3 + p[0] - r]), [1.0], tol=1e-13)
        return res.x[0] + 5.0 * res.fun[0]
    x = cubic(3.0)
    assert MODES[mode](f, 3.0) == pytest.approx(1 / (3 * x ** 2 + 1), rel=1e-9)


@pytest.mark.parametrize("mode", MODES)
def test_counts_have_no_derivative(mode):
    def f(r):
        res = so.root(lambda p: np.array([p[0] ** 3 + p[0] - r]), [1.0], tol=1e-13)
        return res.x[0] * (res.nfev > 0) * res.success
    x = cubic(3.0)
    assert MODES[mode](f, 3.0) == pytest.approx(1 / (3 * x ** 2 + 1), rel=1e-9)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("key, method", [("fjac", "hybr"), ("qtf", "hybr"), ("r", "hybr"), ("cov_x", "lm")])
def test_solver_state_refused(key, method, mode):
    def f(r):
        res = so.root(lambda p: np.array([p[0] ** 3 + p[0] - r]), [1.0], method=method)
        return res.x[0] + np.sum(res[key])
    with pytest.raises(OverdubError, match=key):
        MODES[mode](f, 3.0)


@pytest.mark.parametrize("mode", JACOBIANS)
@pytest.mark.parametrize("method", ["hybr", "lm"])
def test_singular_jacobian_refused(method, mode):
    """A line of roots (x₀ + x₁ = a twice over): no isolated solution, no derivative."""
    def g(v):
        return so.root(lambda x: [x[0] + x[1] - v[0], 2 * x[0] + 2 * x[1] - 2 * v[0]], [0.5, 0.5], method=method).x
    with pytest.raises(OverdubError, match="singular"):
        JACOBIANS[mode](g, P)
    if method == "hybr":  # a double root, J's cond about 1e16 there
        def h(v):
            return so.root(lambda x: [(x[0] - v[0]) ** 2, x[1] - v[1]], [0.5, 0.5], method=method).x
        with pytest.raises(OverdubError, match="singular|not a root"):
            JACOBIANS[mode](h, P)


@pytest.mark.parametrize("mode", MODES)
def test_not_a_root_refused(mode):
    """'lm' minimises |F|²: x² + 1 = r with r < 1 has no root, its minimum (x = 0, F = 1 − r) no derivative."""
    def f(r):
        return so.root(lambda p: np.array([p[0] ** 2 + 1.0 - r]), [0.3], method="lm").x[0]
    with pytest.raises(OverdubError, match="not a root|singular"):
        MODES[mode](f, 0.5)

    def unconverged(r):  # too few iterations: x is no root
        return so.root(lambda p: np.array([p[0] ** 3 + p[0] - r]), [1.0], method="hybr",
                       options={"maxfev": 2}).x[0]
    with pytest.raises(OverdubError, match="not a root"):
        MODES[mode](unconverged, 30.0)


def test_second_derivative_refused():
    with pytest.raises(OverdubError, match="second derivative"):
        hessian(lambda v: cubic(v[0]) * v[1], P)


@pytest.mark.parametrize("mode", JACOBIANS)
def test_matrix_unknown(mode):
    """x0 of shape (2, 2) (the quasi-Newton methods keep its shape): J over the flattened unknowns. (Central
    differences of broyden1's x are noisy at 1e-6: against the closed form.)"""
    A = np.array([[1.0, 2.0], [3.0, 4.0]])

    def g(v):
        return so.root(lambda X: X + 0.1 * X ** 3 - v[0] * A - v[1], np.zeros((2, 2)), method="broyden1",
                       tol=1e-12).x
    s = 1 / (1 + 0.3 * g(P) ** 2)  # (elementwise: X + 0.1 X³ = v₀ A + v₁)
    np.testing.assert_allclose(JACOBIANS[mode](g, P), np.stack([A * s, s], axis=-1), rtol=1e-9)


@pytest.mark.parametrize("mode", JACOBIANS)
def test_fun_of_a_vector_root(mode):
    def g(v):
        return so.root(lambda p: p ** 3 + p - v, np.ones(2), tol=1e-13).fun
    np.testing.assert_allclose(JACOBIANS[mode](g, P), np.zeros((2, 2)), atol=1e-12)


def test_repro_prints_the_exact_derivative():
    r = 3.0
    x = cubic(r)
    (g,) = gradient(cubic, r)
    assert g == pytest.approx(1 / (3 * x ** 2 + 1), rel=1e-12)
    assert derivative(cubic, r) == pytest.approx(1 / (3 * x ** 2 + 1), rel=1e-12)
