"""scipy.optimize's bracketing root finders in reverse and forward mode, by the implicit function theorem
(contexts/rules/numpy/scipy_optimize.py): the root's gradient with respect to what f closes over and its
`args`, against central differences; refused where there is none (a root that is not simple, the
RootResults of full_output) and in the mode without a rule (forward over reverse). Forward mode's own
tests (fsolve too): tests/contexts/forward/test_roots.py."""

import numpy as np
import pytest

so = pytest.importorskip("scipy.optimize")

from contexts import gradient, hessian  # noqa: E402
from overdub.errors import OverdubError  # noqa: E402
from tests import fd  # noqa: E402

X = np.array([0.7, 1.3, 0.4])


def by_closure(v):
    return so.brentq(lambda t: t ** 3 - v[1], 0, 3)


def by_args(v):
    return so.brentq(lambda t, c, d: t ** 3 + d * t - c, 0, 3, args=(v[1], v[0]))


def by_one_arg(v):
    return so.brentq(lambda t, c: t ** 3 - c, 0, 3, args=v[1])


def brenth_times(v):
    return so.brenth(lambda t: np.cos(t) - v[2] * t, 0, 2) * v[0]


def ridder_exp(v):
    return so.ridder(lambda t: np.exp(t * v[0]) - 2 - v[1], -1, 3)


def bisect_square(v):
    return so.bisect(lambda t: t * t - v[1], 0, 2, xtol=1e-14)


def toms748_quintic(v):
    return so.toms748(lambda t: t ** 5 + t - v[1] * v[2], -1, 2)


def full_output_root(v):
    root, _ = so.brentq(lambda t: t ** 3 - v[1], 0, 3, full_output=True)
    return root * v[0]


class Curve:
    def __init__(self, a):
        self.a = a

    def __call__(self, t):
        return self.a * t - np.tanh(t) - 0.5


def callable_object(v):
    return so.brentq(Curve(v[1]), 0, 5)


CASES = [by_closure, by_args, by_one_arg, brenth_times, ridder_exp, bisect_square, toms748_quintic,
         full_output_root, callable_object]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_reverse_right(f):
    np.testing.assert_allclose(gradient(f, X)[0], fd.gradient(f, X)[0], rtol=1e-6, atol=1e-9)


def test_closed_form():
    """d/dc of c ** (1/3), the root of t**3 - c."""
    c = 1.7
    (g,) = gradient(lambda c: so.brentq(lambda t: t ** 3 - c, 0, 3, xtol=1e-14), c)
    assert g == pytest.approx(1 / (3 * c ** (2 / 3)), rel=1e-9)


def test_no_derivative_at_a_root_that_is_not_simple():
    with pytest.raises(OverdubError, match="not a simple root|no derivative"):
        gradient(lambda c: so.bisect(lambda t: t ** 3 - c, -1, 1), 0.0)  # (its first midpoint: 0 exactly)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_results_of_full_output_refused():
    def f(v):
        root, info = so.brentq(lambda t: t ** 3 - v[1], 0, 3, full_output=True)
        return root * info.iterations
    with pytest.raises(OverdubError):
        gradient(f, X)


def test_forward_over_reverse_refused():
    with pytest.raises(OverdubError):
        hessian(by_closure, X)


# -- fsolve in reverse mode (session 45): the adjoint of the solution, Jᵀλ = x̄, θ̄ = −(∂F/∂θ)ᵀλ ---------------------

@pytest.mark.parametrize("name, x", [("system", X[:2]), ("system_args", X[:2]), ("scalar_fsolve", 0.7)],
                         ids=["list", "args", "scalar"])
def test_fsolve_in_reverse_mode(name, x):
    from contexts import jacobian
    from tests.contexts.forward import test_roots  # (forward mode's systems; it imports this module's cases)
    f = getattr(test_roots, name)
    if np.ndim(x):
        np.testing.assert_allclose(jacobian(f, x), fd.jacobian(f, x, matrix=True), rtol=1e-6, atol=1e-8)
    else:
        assert gradient(f, x)[0] == pytest.approx(fd.gradient(f, x)[0], rel=1e-6)


def test_fsolve_in_reverse_mode_through_a_closure():
    def f(v):
        a = v[0]

        def G(z):
            return [z[0] ** 3 + a * z[0] - v[1]]
        return so.fsolve(G, 1.0, xtol=1e-14)[0] * v[0]
    np.testing.assert_allclose(gradient(f, X[:2])[0], fd.gradient(f, X[:2])[0], rtol=1e-6)


def test_fsolve_in_reverse_mode_refusals():
    def info(v):
        x, d, ier, msg = so.fsolve(lambda x: [x[0] ** 2 - v[0], x[1] - v[1]], [1.0, 1.0], full_output=True)
        return x[0] + d["fvec"][0]
    with pytest.raises(OverdubError):
        gradient(info, X[:2])
    with pytest.raises(OverdubError):
        gradient(lambda v: so.fsolve(lambda x: [(x[0] - v[0]) ** 2, x[1] - v[1]], [0.5, 0.5]).sum(), X[:2])
    with pytest.raises(OverdubError):
        hessian(lambda v: so.fsolve(lambda x: [x[0] ** 3 - v[0]], [1.0], xtol=1e-13)[0], X[:2])
