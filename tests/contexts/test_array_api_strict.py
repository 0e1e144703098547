"""array_api_strict's `Array` (the array API standard's reference array) in both modes, against finite
differences: code written against the standard (`xp.sum(xp.sin(x) * x)`) differentiated unchanged, the
gradient an `Array` (`contexts.rules.array_api_strict`)."""

import numpy as np
import pytest

from contexts import derivative, gradient, hessian, jacfwd, jacobian, jvp, pullback, value_and_gradient, vjp
from tests import fd

xp = pytest.importorskip("array_api_strict")
Array = type(xp.asarray(0.0))

RNG = np.random.default_rng(7)
A = xp.asarray(RNG.standard_normal((4, 3)))
X0 = np.array([0.3, -0.5, 0.9])


def _stored(x):
    y = xp.zeros((3,), dtype=xp.float64)
    y[1] = x[0] * 2.0
    y[2:] = x[1:2] ** 2
    return xp.sum(y * x)


def _into_view(x):
    """A store into an Array indexed from another (its ndarray a view of the other's)."""
    z = xp.ones((4,), dtype=xp.float64)
    tail = z[1:]
    tail[:2] = x[:2] * x[2]
    return xp.sum(z[:3] * x) + z[3]


def _updated(x):
    y = x * 1.0
    y[1] = y[0] * 3.0
    y[0] = y[1] + x[2]
    return xp.sum(y ** 2)


SCALAR = {
    "elementwise": lambda x: xp.sum(xp.sin(x) * x),
    "matmul": lambda x: xp.sum((A @ x) ** 2),
    "mean exp": lambda x: xp.mean(xp.exp(x / 2.0)),
    "max": lambda x: xp.max(x * x),
    "where, negation": lambda x: xp.sum(xp.where(x > 0.0, x ** 2, -x)),
    "reshape, transpose": lambda x: xp.sum(xp.reshape(xp.concat([x, x * 2.0]), (2, 3)).T @ xp.asarray([1.0, 3.0])),
    "indexing": lambda x: x[0] * x[2] + xp.sum(x[1:] ** 3),
    "stack, log, abs": lambda x: xp.sum(xp.log(xp.stack([x * x + 1.0, xp.abs(x) + 2.0]))),
    "linalg.vector_norm": lambda x: xp.linalg.vector_norm(x * 3.0),
    "cumulative_sum, prod": lambda x: xp.prod(xp.cumulative_sum(x) + 3.0),
    "maximum": lambda x: xp.sum(xp.maximum(x, 0.1) * x),
    "vecdot, sqrt": lambda x: xp.sqrt(xp.vecdot(x, x)),
    "tensordot": lambda x: xp.sum(xp.tensordot(A, x, axes=1) * 2.0),
    "expand_dims, broadcast": lambda x: xp.sum(xp.expand_dims(x, axis=0) * xp.ones((2, 3))),
    "std": lambda x: xp.std(x),
    "softmax, tanh": lambda x: xp.sum(xp.exp(x) / xp.sum(xp.exp(x)) * xp.tanh(x)),
    "unary plus, division": lambda x: xp.sum(+x / (x * x + 1.0)),
    "stores": _stored,
    "a store through a view": _into_view,
    "stores reading stores": _updated,
    "float() of the result": lambda x: float(xp.sum(x ** 3)),
}


def _want(f):
    return fd.gradient(lambda a: float(f(xp.asarray(a))), X0.copy())[0]


@pytest.mark.parametrize("name", sorted(SCALAR))
def test_gradient_is_an_array_of_the_right_values(name):
    f = SCALAR[name]
    g = gradient(f, xp.asarray(X0))[0]
    assert type(g) is Array and g.dtype == xp.float64 and g.shape == (3,)
    np.testing.assert_allclose(np.asarray(g), _want(f), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(SCALAR))
def test_forward_mode(name):
    f = SCALAR[name]
    want = _want(f)
    J = jacfwd(f, xp.asarray(X0))
    np.testing.assert_allclose(np.asarray(J), want, rtol=1e-6, atol=1e-8)
    t = np.array([0.7, -0.2, 0.4])
    y, dy = jvp(f, (xp.asarray(X0),), (xp.asarray(t),))
    np.testing.assert_allclose(float(dy), want @ t, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(float(y), float(f(xp.asarray(X0))), rtol=1e-14)


def test_the_input_is_left_as_it_was():
    x = xp.asarray(X0)
    gradient(_updated, x)
    jacfwd(_updated, x)
    np.testing.assert_array_equal(np.asarray(x), X0)


def test_value_and_gradient_of_a_0d_array_output():
    y, (g,) = value_and_gradient(SCALAR["matmul"], xp.asarray(X0))
    assert type(y) is Array and y.shape == ()
    np.testing.assert_allclose(float(y), float(SCALAR["matmul"](xp.asarray(X0))))
    np.testing.assert_allclose(np.asarray(g), _want(SCALAR["matmul"]), rtol=1e-6)


def _vector(x):
    return xp.stack([xp.sum(x * x), x[0] * xp.sin(x[1]), xp.exp(x[2]) * x[0]])


def test_jacobians_of_a_vector_output_both_modes():
    want = fd.jacobian(lambda a: np.asarray(_vector(xp.asarray(a))), X0.copy())
    np.testing.assert_allclose(np.asarray(jacobian(_vector, xp.asarray(X0))), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.asarray(jacfwd(_vector, xp.asarray(X0))), want, rtol=1e-6, atol=1e-8)


def test_pullback_and_vjp_take_an_array_cotangent():
    want = fd.jacobian(lambda a: np.asarray(_vector(xp.asarray(a))), X0.copy())
    dy = np.array([1.0, -2.0, 0.5])
    y, back = pullback(_vector, xp.asarray(X0))
    (g,) = back(xp.asarray(dy))
    assert type(g) is Array
    np.testing.assert_allclose(np.asarray(g), dy @ want, rtol=1e-6, atol=1e-8)
    _, (g2,) = vjp(_vector, (xp.asarray(X0),), xp.asarray(dy))
    np.testing.assert_allclose(np.asarray(g2), dy @ want, rtol=1e-6, atol=1e-8)


def test_derivative_of_an_array_valued_function_of_a_float():
    f = lambda t: xp.sin(A * t) @ xp.asarray([1.0, 2.0, 3.0])  # noqa: E731
    d = derivative(f, 0.4)
    assert type(d) is Array
    want = fd.derivative(lambda t: np.asarray(f(t)), 0.4)
    np.testing.assert_allclose(np.asarray(d), want, rtol=1e-6, atol=1e-8)


def test_hessian():
    f = lambda x: xp.sum(xp.exp(x) * x[0]) + x[1] ** 3  # noqa: E731
    want = fd.hessian(lambda a: float(f(xp.asarray(a))), X0.copy())
    np.testing.assert_allclose(np.asarray(hessian(f, xp.asarray(X0))), want, rtol=1e-5, atol=1e-6)


def test_sparsity_patterns():
    from contexts import hessian_sparsity, jacobian_sparsity

    def f(x):
        return xp.concat([x[1:] * x[:-1], xp.sin(x[:1])])
    P = jacobian_sparsity(f, xp.asarray(np.arange(1.0, 5.0))).toarray()
    want = np.zeros((4, 4), bool)
    for i in range(3):
        want[i, i] = want[i, i + 1] = True
    want[3, 0] = True
    np.testing.assert_array_equal(P, want)
    H = hessian_sparsity(lambda x: xp.sum(x[1:] * x[:-1]) + x[0] ** 3, xp.asarray(np.ones(4)), mode="local")
    want = np.eye(4, k=1, dtype=bool) | np.eye(4, k=-1, dtype=bool)
    want[0, 0] = True
    np.testing.assert_array_equal(H.toarray(), want)


def test_code_asking_for_its_namespace():
    """`xp = array_namespace(x)` (array-api-compat), as libraries written against the standard do: on an
    Array and on a numpy array."""
    compat = pytest.importorskip("array_api_compat")

    def loss(x):
        ns = compat.array_namespace(x)
        m = ns.max(x)
        return m + ns.log(ns.sum(ns.exp(x - m))) + ns.linalg.vector_norm(x) ** 2
    want = _want(loss)
    for x in (xp.asarray(X0), X0.copy()):
        np.testing.assert_allclose(np.asarray(gradient(loss, x)[0]), want, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(np.asarray(jacfwd(loss, x)), want, rtol=1e-6, atol=1e-8)
