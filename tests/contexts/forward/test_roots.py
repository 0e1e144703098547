"""scipy.optimize's root finders in forward mode, by the implicit function theorem
(contexts/rules/numpy/scipy_optimize.py `root_duals`, `fsolve_duals`): the root is found on primal values,
its tangent is −(∂f/∂θ·θ̇)/(∂f/∂x) (fsolve: J ẋ = −F_θ·θ̇), f's derivatives by forward mode on f itself.
Against central differences and closed forms; refused where there is no derivative (a root that is not
simple, a singular Jacobian, fsolve's infodict, a second derivative)."""

import numpy as np
import pytest

so = pytest.importorskip("scipy.optimize")

from contexts import derivative, hessian, jacfwd, jvp  # noqa: E402
from overdub.errors import OverdubError  # noqa: E402
from tests import fd  # noqa: E402
from tests.contexts.rules.test_scipy_roots import CASES, X  # noqa: E402


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_bracketing_roots(f):
    np.testing.assert_allclose(jacfwd(f, X), fd.gradient(f, X)[0], rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("f", CASES[:3], ids=lambda f: f.__name__)
def test_one_direction(f):
    """jvp (one tangent, the tangent twin's path) as jacfwd's chunk of all directions."""
    t = np.array([0.3, -1.1, 0.8])
    _, dy = jvp(f, (X,), (t,))
    np.testing.assert_allclose(dy, fd.gradient(f, X)[0] @ t, rtol=1e-6, atol=1e-9)


def test_closed_form():
    """d/dc of c ** (1/3), the root of t**3 - c."""
    c = 1.7
    d = derivative(lambda c: so.brentq(lambda t: t ** 3 - c, 0, 3, xtol=1e-14), c)
    assert d == pytest.approx(1 / (3 * c ** (2 / 3)), rel=1e-9)


def test_root_results_carry_the_derivative():
    """full_output's RootResults.root is the root: the same dual."""
    def f(c):
        _, info = so.brentq(lambda t: t ** 3 - c, 0, 3, full_output=True, xtol=1e-14)
        return info.root
    assert derivative(f, 1.7) == pytest.approx(1 / (3 * 1.7 ** (2 / 3)), rel=1e-9)


def test_not_simple_refused():
    with pytest.raises(OverdubError, match="not a simple root|no derivative"):
        derivative(lambda c: so.bisect(lambda t: t ** 3 - c, -1, 1), 0.0)


def test_second_derivative_refused():
    with pytest.raises(OverdubError):
        hessian(lambda v: so.brentq(lambda t: t ** 3 - v[1], 0, 3), X)


def system(v):
    return so.fsolve(lambda x: [x[0] ** 2 + x[1] - v[0], x[0] - v[1] * x[1] ** 3], [1.0, 1.0], xtol=1e-13)


def system_args(v):
    def F(x, a, b):
        return np.array([np.exp(x[0]) - a * x[1], x[0] + x[1] ** 2 - b, x[2] - x[0] * x[1]])
    return so.fsolve(F, np.ones(3), args=(v[0] + 2.0, v[1]), xtol=1e-13)


def scalar_fsolve(c):
    return so.fsolve(lambda x: np.cos(x) - c * x, 0.5, xtol=1e-13)[0]


@pytest.mark.parametrize("f, x", [(system, X[:2]), (system_args, X[:2]), (scalar_fsolve, 0.7)],
                         ids=["list", "args", "scalar"])
def test_fsolve(f, x):
    want = fd.jacobian(f, x, matrix=True) if np.ndim(x) else fd.gradient(f, x)[0]
    got = jacfwd(f, x) if np.ndim(x) else derivative(f, x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_fsolve_info_refused():
    def f(v):
        x, info, ier, msg = so.fsolve(lambda x: [x[0] ** 2 - v[0], x[1] - v[1]], [1.0, 1.0], full_output=True)
        return x[0] + info["fvec"][0]
    with pytest.raises(OverdubError):
        jacfwd(f, X[:2])
    def g(v):  # the solution alone is differentiated
        x, info, ier, msg = so.fsolve(lambda x: [x[0] ** 2 - v[0], x[1] - v[1]], [1.0, 1.0], full_output=True,
                                      xtol=1e-13)
        return x
    np.testing.assert_allclose(jacfwd(g, X[:2]), fd.jacobian(g, X[:2], matrix=True), rtol=1e-6, atol=1e-8)


def test_fsolve_singular_refused():
    with pytest.raises(OverdubError):
        jacfwd(lambda v: so.fsolve(lambda x: [(x[0] - v[0]) ** 2, x[1] - v[1]], [0.5, 0.5]), X[:2])
