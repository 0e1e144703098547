"""scipy.optimize.elementwise's find_root and find_minimum in both modes, by the implicit function theorem,
against closed forms and central differences. Differentiated as code (before the rules), find_minimum's x
had gradient 0 and its f_x a wrong number, silently: the search's bracketing steps are no derivative."""

import numpy as np
import pytest

from contexts import NoRuleError, derivative, gradient, jacobian
from contexts.forward import jacfwd
from contexts.rules.registry import NoDerivative

elementwise = pytest.importorskip("scipy.optimize.elementwise")
find_root, find_minimum = elementwise.find_root, elementwise.find_minimum


def cube_root(a):  # x³ = a: x = a^(1/3), dx/da = 1 / (3 a^(2/3))
    return find_root(lambda x, a: x ** 3 - a, (0.0, 5.0), args=(a,)).x


def cube_root_closure(a):
    return 2.0 * find_root(lambda x: x ** 3 - a, (0.0, 5.0)).x


def shifted_min(a):  # (x - a)² + a x: x* = a/2, f* = 3a²/4
    res = find_minimum(lambda x, a: (x - a) ** 2 + a * x, (-10.0, 0.1, 10.0), args=(a,))
    return res.x + res.f_x


@pytest.mark.parametrize("mode", [gradient, derivative], ids=["reverse", "forward"])
@pytest.mark.parametrize("f, a, want", [
    (cube_root, 1.7, 1 / (3 * 1.7 ** (2 / 3))),
    (cube_root_closure, 1.7, 2 / (3 * 1.7 ** (2 / 3))),
    (shifted_min, 1.3, 0.5 + 1.5 * 1.3),
], ids=["root-args", "root-closure", "minimum-x-and-value"])
def test_scalar_solutions_against_closed_forms(mode, f, a, want):
    got = mode(f, a)
    got = got[0] if isinstance(got, tuple) else got
    assert got == pytest.approx(want, rel=1e-7)


def roots_of_array(a):  # elementwise: one problem per element of a
    return find_root(lambda x, a, b: x ** 3 + b * x - a, (-5.0, 5.0), args=(a, 0.5)).x


def minima_of_array(a):
    res = find_minimum(lambda x, a: np.cosh(x - a) + 0.3 * x ** 2, (-4.0, 0.0, 4.0), args=(a,))
    return np.concatenate([res.x, res.f_x])


def _jac(jac, f, a):
    J = np.asarray(jac(f, a))
    return J[0] if J.ndim == 3 else J


@pytest.mark.parametrize("jac", [jacobian, jacfwd], ids=["reverse", "forward"])
def test_elementwise_roots_against_central_differences(jac):
    a = np.array([0.4, 1.1, 2.5])
    h = 1e-6
    fd = np.stack([(roots_of_array(a + h * e) - roots_of_array(a - h * e)) / (2 * h) for e in np.eye(3)], axis=1)
    np.testing.assert_allclose(_jac(jac, roots_of_array, a), fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("jac", [jacobian, jacfwd], ids=["reverse", "forward"])
def test_elementwise_minima_against_closed_forms(jac):
    """sinh(x - a) + 0.6 x = 0 at x*: dx*/da = cosh / (cosh + 0.6), df*/da = ∂f/∂a = −sinh(x* − a) (a
    minimum's x is found to √eps only, too coarse for differences of it)."""
    a = np.array([0.4, 1.1, 2.5])
    x = minima_of_array(a)[:3]
    c = np.cosh(x - a)
    want = np.concatenate([np.diag(c / (c + 0.6)), np.diag(-np.sinh(x - a))])
    np.testing.assert_allclose(_jac(jac, minima_of_array, a), want, rtol=1e-6, atol=1e-9)


def test_bracket_has_no_derivative():
    def upper(a):
        return find_root(lambda x: x ** 3 - a, (0.0, 5.0)).bracket[1]
    with pytest.raises(NoDerivative, match="bracket"):
        gradient(upper, 1.7)
    with pytest.raises(NoDerivative, match="bracket"):
        derivative(upper, 1.7)


def test_not_converged_is_refused():
    def early(a):
        return find_root(lambda x: x ** 3 - a, (0.0, 5.0), maxiter=2).x
    for mode in (gradient, derivative):
        with pytest.raises(NoDerivative, match="did not converge"):
            mode(early, 1.7)


def test_other_elementwise_methods_are_refused_by_name():
    """bracket_root (and tanhsinh, nsum, scipy.differentiate) run the same loop: no rule, refused."""
    def bracket(a):
        return elementwise.bracket_root(lambda x: x ** 3 - a, 0.5).bracket[1]
    with pytest.raises(NoRuleError):
        gradient(bracket, 1.7)
    with pytest.raises(Exception) as info:
        derivative(bracket, 1.7)
    assert "Dual" in str(info.value) or "rule" in str(info.value)


def test_constant_inputs_run_plainly():
    assert gradient(lambda b: cube_root(8.0) * b, 2.0)[0] == pytest.approx(2.0)


def test_second_derivative_refused_by_name():
    from contexts import hessian

    def root(a):
        return find_root(lambda x: x ** 3 - a[0], (0.0, 5.0)).x
    with pytest.raises(NoRuleError, match="find_root"):
        hessian(root, np.array([1.7]))
