"""tests/fd.py, the oracle of every derivative test, against closed forms: it must match the right
derivative and must not match a wrong one."""

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest

from tests import fd

A = np.array([[3.0, 1.0, -0.5], [1.0, 2.0, 0.25], [-0.5, 0.25, 4.0]])  # symmetric: H of x'Ax/2 is A
X3 = np.array([0.3, -1.1, 0.7])


def quadratic_form(x):
    return 0.5 * x @ A @ x


def assert_wrong(got, wrong, **tol):
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(got, wrong, **tol)


# -- gradient --------------------------------------------------------------------------------

@pytest.mark.parametrize("order, h, rtol", [(4, 1e-3, 1e-9), (2, 1e-6, 1e-6), (2, 1e-5, 1e-6)])
def test_gradient_of_scalar_functions(order, h, rtol):
    x, y = 0.8, -1.7
    got = fd.gradient(lambda a, b: a ** 3 * b + math.sin(a * b), x, y, h=h, order=order)
    want = (3 * x ** 2 * y + y * math.cos(x * y), x ** 3 + x * math.cos(x * y))
    np.testing.assert_allclose(got, want, rtol=rtol)
    assert_wrong(got, (3 * x ** 2 * y, x ** 3), rtol=rtol)  # sin's term left out


def test_gradient_of_an_array_argument_is_its_shape():
    x = np.arange(6.0).reshape(2, 3) / 5
    (g,) = fd.gradient(lambda a: np.sum(np.sin(a) * a), x)
    assert g.shape == x.shape
    np.testing.assert_allclose(g, np.cos(x) * x + np.sin(x), rtol=1e-9, atol=1e-12)
    assert_wrong(g, np.cos(x) * x, rtol=1e-6, atol=1e-9)


def test_gradient_of_a_quadratic_form():
    (g,) = fd.gradient(quadratic_form, X3)
    np.testing.assert_allclose(g, A @ X3, rtol=1e-9)
    assert_wrong(g, A.T @ X3 * 2, rtol=1e-6)


def test_complex_argument_follows_the_real_and_imaginary_parts():
    z = 0.6 - 1.3j
    (g,) = fd.gradient(lambda w: (w * w.conjugate()).real, z)  # |z|^2: d/dRe + i d/dIm = 2z
    assert isinstance(g, complex)
    np.testing.assert_allclose(g, 2 * z, rtol=1e-9)
    assert_wrong(g, 2 * z.conjugate(), rtol=1e-6)
    (g,) = fd.gradient(lambda w: np.sum(np.abs(w) ** 2), np.array([z, 1j]))
    np.testing.assert_allclose(g, [2 * z, 2j], rtol=1e-9)


def test_a_complex_valued_function_is_refused():
    with pytest.raises(ValueError, match="real-valued"):
        fd.gradient(lambda w: w * w, 1.0 + 1.0j)


def test_integers_bools_and_other_values_get_none_lists_get_lists():
    got = fd.gradient(lambda x, n, flag, name, xs: x * n + (xs[0] * xs[1] if flag else 0.0) + len(name),
                      2.0, 3, True, "ab", [1.5, 4.0])
    assert got[1:4] == (None, None, None)
    np.testing.assert_allclose(got[0], 3.0, rtol=1e-9)
    assert isinstance(got[4], list)
    np.testing.assert_allclose(got[4], [4.0, 1.5], rtol=1e-9)


def test_fractions_are_perturbed_as_floats():
    (g,) = fd.gradient(lambda q: float(q) ** 2, Fraction(1, 3))
    np.testing.assert_allclose(g, 2 / 3, rtol=1e-9)


def test_gradient_order_must_be_known():
    with pytest.raises(ValueError, match="order"):
        fd.gradient(math.sin, 1.0, order=3)


def test_second_order_step_is_the_two_point_formula():
    f = lambda x: math.exp(3 * x)  # noqa: E731
    h = 1e-2  # large enough for the formulas to differ visibly
    (g,) = fd.gradient(f, 0.5, h=h, order=2)
    assert g == pytest.approx((f(0.5 + h) - f(0.5 - h)) / (2 * h), rel=1e-14)
    (g4,) = fd.gradient(f, 0.5, h=h, order=4)
    assert abs(g4 - 3 * math.exp(1.5)) < abs(g - 3 * math.exp(1.5)) / 100


# -- derivative, directional derivative, Jacobian ----------------------------------------------

def test_derivative_elementwise():
    x = 0.4
    got = fd.derivative(lambda t: np.array([t ** 4, math.sin(t), 2.0]), x)
    np.testing.assert_allclose(got, [4 * x ** 3, math.cos(x), 0.0], rtol=1e-7, atol=1e-9)
    assert_wrong(got, [4 * x ** 3, -math.cos(x), 0.0], rtol=1e-7, atol=1e-9)


def test_directional_derivative_on_structures():
    def f(a, n, b):  # a tuple out: an array, a float and an integer (ignored)
        return (a * b, float(np.sum(a ** 2)), n)

    a, b = np.array([1.0, -2.0]), 0.5
    ta, tb = np.array([0.3, 0.1]), -1.0
    got = fd.directional(f, (a, 7, b), (ta, None, tb))
    assert isinstance(got, list) and got[2] is None
    np.testing.assert_allclose(got[0], ta * b + a * tb, rtol=1e-7)
    np.testing.assert_allclose(got[1], 2 * a @ ta, rtol=1e-7)
    assert_wrong(got[0], ta * b, rtol=1e-7)


def test_jacobian_shapes_and_values():
    x = np.array([[0.5, 1.0], [1.5, -0.5]])
    f = lambda z: np.sin(z) * z[0, 0]  # noqa: E731
    J = fd.jacobian(f, x)
    assert J.shape == (2, 2, 2, 2)
    want = np.zeros((2, 2, 2, 2))
    for i in np.ndindex(2, 2):
        want[i + i] = np.cos(x[i]) * x[0, 0]
        want[i + (0, 0)] += np.sin(x[i])
    np.testing.assert_allclose(J, want, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(fd.jacobian(f, x, matrix=True), want.reshape(4, 4), rtol=1e-7, atol=1e-9)
    assert_wrong(J, want.transpose(2, 3, 0, 1), rtol=1e-7, atol=1e-9)


def test_jacobian_of_a_ragged_tuple_joins_the_outputs():
    x = np.array([1.0, 2.0])
    J = fd.jacobian(lambda v: (v ** 2, v[0] * v[1]), x, matrix=True)
    np.testing.assert_allclose(J, [[2.0, 0.0], [0.0, 4.0], [2.0, 1.0]], rtol=1e-7)


def test_jacobian_of_a_quadratic_forms_gradient_is_its_matrix():
    np.testing.assert_allclose(fd.jacobian(lambda x: A @ x, X3), A, rtol=1e-8)


# -- Hessian -------------------------------------------------------------------------------------

def test_hessian_of_a_quadratic_form():
    H = fd.hessian(quadratic_form, X3)
    np.testing.assert_allclose(H, A, rtol=1e-6, atol=1e-6)
    assert_wrong(H, 2 * A, rtol=1e-3)
    assert_wrong(H, np.diag(np.diag(A)), atol=1e-3)  # the off-diagonal terms matter


def test_hessian_of_a_nonlinear_function_and_its_shapes():
    x = np.array([[0.4, -0.7]])
    f = lambda z: math.sin(z[0, 0]) * z[0, 1] ** 3  # noqa: E731
    a, b = x[0]
    want = np.array([[-math.sin(a) * b ** 3, 3 * math.cos(a) * b ** 2],
                     [3 * math.cos(a) * b ** 2, 6 * math.sin(a) * b]])
    H = fd.hessian(f, x)
    assert H.shape == (1, 2, 1, 2)
    np.testing.assert_allclose(H.reshape(2, 2), want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(fd.hessian(f, x, matrix=True, h=1e-3), want, rtol=1e-5, atol=1e-6)


def test_hessian_needs_a_scalar_function():
    with pytest.raises(ValueError):
        fd.hessian(lambda z: z * 2, X3)


# -- checks against the library: they pass on a right answer and fail on a wrong one ------------

def test_assert_grad_fd_passes_and_returns_the_gradient():
    got = fd.assert_grad_fd(lambda x, y: x * math.exp(y), 1.5, 0.2)
    np.testing.assert_allclose(got, (math.exp(0.2), 1.5 * math.exp(0.2)), rtol=1e-12)


def test_check_rule_passes_a_right_rule_and_fails_a_wrong_one(monkeypatch):
    import contexts.rules  # noqa: F401  (registers every rule)
    from contexts.rules.registry import registry

    x = np.array([0.3, -0.8, 1.2])
    fd.check_rule(np.sin, x)
    rule = registry.rules[np.sin]
    wrong_adjoint = dataclasses.replace(rule, adjoint=lambda dy, y, x: (dy * np.sin(x),), rrule=None, hot=None)
    wrong_frule = dataclasses.replace(rule, frule=lambda t, x: (np.sin(x), -t[0] * np.cos(x)))
    for wrong, message in ((wrong_adjoint, "adjoint"), (wrong_frule, "frule")):
        monkeypatch.setitem(registry.rules, np.sin, wrong)
        with pytest.raises(AssertionError, match=message):
            fd.check_rule(np.sin, x)
