"""Reverse mode through a ufunc given its output array by position (`np.exp(K, K)`, as sklearn's
laplacian_kernel writes it; `np.multiply(a, b, c)`): differentiated as `out=` is, right against central
finite differences in reverse mode, forward mode and the hessian; what cannot be followed (several outputs,
a view the call may change under another name) is refused, never a silent wrong number."""

import numpy as np
import pytest

from contexts.ad import gradient
from overdub.errors import OverdubError
from contexts import derivative, hessian

from tests.fd import gradient as fd_gradient, hessian as fd_hessian, jacobian as fd_jacobian

X = np.array([0.3, -0.2, 0.5])


def exp_in_place(x):
    K = x * 2.0
    np.exp(K, K)
    return np.sum(K * K)


def result_and_output_both_read(x):
    K = np.sin(x)
    y = np.exp(K, K)  # y is K
    return np.sum(y * x) + np.sum(K)


def binary_into_new_array(x):
    a = np.sin(x)
    c = np.empty_like(x)
    np.multiply(a, x, c)
    return np.sum(c * a)


def binary_overwriting_a_differentiated_array(x):
    c = x * x          # its values are overwritten: their cotangent is zero after the call
    np.add(np.cos(x), x, c)
    return np.sum(c * c) + np.sum(x)


def output_is_an_input_of_two(x):
    a = x + 1.0
    np.multiply(a, x, a)  # a = a * x
    return np.sum(a ** 2)


def laplacian_like(x):
    K = -0.5 * np.abs(x[:, None] - x[None, :])
    np.exp(K, K)
    return np.sum(K)


def in_a_loop(x):
    K = x.copy()
    for _ in range(3):
        np.sin(K, K)
    return np.sum(K)


def with_where(x):
    K = x * 3.0
    np.exp(K, K, where=x > 0)
    return np.sum(K * x)


def none_output(x):
    return np.sum(np.exp(x, None))


def helper_writes(K, out):
    return np.tanh(K, out)


def through_a_helper(x):
    out = np.zeros_like(x)
    helper_writes(x * 2.0, out)
    return np.sum(out * x)


RIGHT = [exp_in_place, result_and_output_both_read, binary_into_new_array,
         binary_overwriting_a_differentiated_array, output_is_an_input_of_two, laplacian_like, in_a_loop,
         with_where, none_output, through_a_helper]


@pytest.mark.parametrize("f", RIGHT, ids=lambda f: f.__name__)
def test_gradient(f):
    (got,) = gradient(f, X)
    (want,) = fd_gradient(f, X)
    assert np.allclose(got, want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", RIGHT, ids=lambda f: f.__name__)
def test_forward_agrees(f):
    t = np.array([0.4, -1.0, 0.7])
    got = derivative(lambda s: f(X + s * t), 0.0)
    (want,) = fd_gradient(f, X)
    assert got == pytest.approx(float(want @ t), rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("f", [exp_in_place, output_is_an_input_of_two, laplacian_like, in_a_loop],
                         ids=lambda f: f.__name__)
def test_hessian(f):
    got = hessian(f, X)
    want = fd_hessian(f, X)
    assert np.allclose(got, want, rtol=1e-4, atol=1e-5)


def test_sklearn_laplacian_kernel():
    pairwise = pytest.importorskip("sklearn.metrics.pairwise")
    data = np.array([[0.1, 0.4], [0.9, -0.3], [0.5, 0.5]])
    f = lambda x: pairwise.laplacian_kernel(x.reshape(1, 2), data, gamma=0.5).ravel()  # noqa: E731
    x = np.array([0.3, 0.2])
    want = fd_jacobian(f, x)
    got = np.array([gradient(lambda x, i=i: f(x)[i], x)[0] for i in range(3)])
    assert np.allclose(got, want, rtol=1e-6, atol=1e-8)


# -- refused, or right: never a silent wrong number ---------------------------------------------------

def two_outputs_by_position(x):
    frac, whole = np.empty_like(x), np.empty_like(x)
    np.modf(x * 3.0, frac, whole)
    return np.sum(frac * x)


def view_changed_through_its_base(x):
    K = x * 2.0
    V = K[1:]
    np.exp(K, K)
    return np.sum(V * x[1:]) + np.sum(K)


def output_named_twice(x):
    K = x * 2.0
    np.exp(K, K, out=K)
    return np.sum(K)


@pytest.mark.parametrize("f", [two_outputs_by_position, view_changed_through_its_base, output_named_twice],
                         ids=lambda f: f.__name__)
def test_refused_or_right(f):
    try:
        (got,) = gradient(f, X)
    except (OverdubError, TypeError) as e:  # (numpy itself refuses an output given twice: TypeError)
        assert not isinstance(e, TypeError) or "out" in str(e)
        return
    (want,) = fd_gradient(f, X)
    assert np.allclose(got, want, rtol=1e-6, atol=1e-8)
