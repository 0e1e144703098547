"""Questions about a differentiated value's type or text (`isinstance(v, float)`, `type(v) is float`,
`len(str(v))`) get the answer the plain call gets, in every mode: under hessian and a derivative of a
derivative the value is a forward-mode dual, under sparsity detection a tracer, and a branch on the
answer must follow the primal's. Checked against central differences and closed forms."""

from __future__ import annotations

import numpy as np
import pytest

from contexts import derivative, gradient, hessian, jacfwd, jvp
from contexts.sparsity import jacobian_sparsity
from contexts.sparsity.tracer import TracedBranchError

from tests import fd


def by_isinstance(x):
    a = x[0] * x[1]
    return isinstance(a, float) * a + a * a


def by_type(x):
    a = x[0] * x[1]
    b = x[1] * x[1]
    return (type(a) is np.float64) * a * b + (type(b).__name__ == "float64") * b * x[0]


def by_text(x):
    a = x[0] * x[0]
    return a * len(str(a)[:3]) + hash(type(a)) % 1 * a + isinstance(a, (int, float)) * a * x[1]


def scalar_types(t):
    a = t * t
    return isinstance(a, float) * a + (type(a) is float) * a * t


X = np.array([1.5, 2.0])
FUNCTIONS = [by_isinstance, by_type, by_text]


@pytest.mark.parametrize("f", FUNCTIONS)
def test_first_order(f):
    want = fd.jacobian(f, X)
    np.testing.assert_allclose(gradient(f, X)[0], want, rtol=1e-6)
    np.testing.assert_allclose(jvp(f, (X,), (np.array([1.0, -0.3]),))[1], want @ [1.0, -0.3], rtol=1e-6)
    np.testing.assert_allclose(jacfwd(f, X), want, rtol=1e-6)


@pytest.mark.parametrize("inner", ["reverse", "forward"])
@pytest.mark.parametrize("f", FUNCTIONS)
def test_hessian(f, inner):
    np.testing.assert_allclose(hessian(f, X, inner=inner), fd.hessian(f, X), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("f", FUNCTIONS)
def test_jacfwd_of_jacfwd(f):
    np.testing.assert_allclose(jacfwd(lambda z: jacfwd(f, z), X), fd.hessian(f, X), rtol=1e-4, atol=1e-5)


def test_python_float_scalar_in_every_second_order_mode():
    # d2/dt2 (t^2 + t^3) = 2 + 6t: both branches are taken by the plain call on a float
    want = 2.0 + 6.0 * 1.5
    assert np.isclose(derivative(scalar_types, 1.5), fd.derivative(scalar_types, 1.5), rtol=1e-6)
    assert np.isclose(hessian(scalar_types, 1.5), want)
    assert np.isclose(hessian(scalar_types, 1.5, inner="forward"), want)
    assert np.isclose(derivative(lambda t: derivative(scalar_types, t), 1.5), want)


def _pattern_input(x):
    a = x[0] * x[1]
    return np.array([isinstance(a, float) * a + x[2] * 2.0, x[2]])


def test_sparsity_local_follows_the_primal_type():
    x = np.array([1.5, 2.0, 3.0])
    got = jacobian_sparsity(_pattern_input, x, mode="local").toarray()
    assert (got == (np.abs(fd.jacobian(_pattern_input, x)) > 0)).all()


def test_sparsity_global_refuses_a_type_it_cannot_know():
    with pytest.raises(TracedBranchError, match=r"(?s)isinstance.*mode='local'"):
        jacobian_sparsity(_pattern_input, np.array([1.5, 2.0, 3.0]))


def test_sparsity_global_answers_what_every_scalar_type_agrees_on():
    def f(x):
        a = x[0] * x[1]
        return np.array([isinstance(a, (list, str)) * 5.0 + a, x[2] * isinstance(x, np.ndarray)])
    x = np.array([1.5, 2.0, 3.0])
    got = jacobian_sparsity(f, x).toarray()
    # (the user's `isinstance(x, np.ndarray)` of a traced array is the array's answer, True: x[2] * True
    # depends on x[2], as differences show; numpy's own code keeps the tracer's answer)
    assert got.tolist() == (np.abs(fd.jacobian(f, x)) > 0).tolist() == [[True, True, False], [False, False, True]]
