"""Forward mode tells numpy's copies from its views as numpy does: a write into a copy leaves the source
alone (value and tangent), a write into a view changes it. Each function is checked in every mode against
central differences of the plain function."""

import copy

import numpy as np
import pytest

from contexts import gradient, hessian, jacfwd, jvp
from tests import fd

X = np.array([0.7, -0.4, 1.3])


def _copy_then_write(make):
    def f(x):
        a = np.outer(x, x)
        b = make(a)
        b[0, 1] = 100.0 * x[1] ** 2  # a copy: a unchanged; a view: a changed
        return np.sum(a * a) + np.sum(b)
    return f


MAKERS = {
    "asarray F": lambda a: np.asarray(a, order="F"),
    "asanyarray F": lambda a: np.asanyarray(a, order="F"),
    "array copy=None F": lambda a: np.array(a, copy=None, order="F"),
    "ascontiguousarray of .T": lambda a: np.ascontiguousarray(a.T),
    "asfortranarray": lambda a: np.asfortranarray(a),
    "require F": lambda a: np.require(a, requirements="F"),
    "reshape order F": lambda a: a.reshape(a.shape, order="F"),
    "reshape order A": lambda a: a.reshape((3, 3), order="A"),
    "copy.copy": copy.copy,
    "asarray (a view)": np.asarray,
    "ravel reshaped (a view)": lambda a: a.ravel().reshape(3, 3),
}


@pytest.mark.parametrize("name", MAKERS)
def test_a_write_into_a_copy_or_a_view(name):
    f = _copy_then_write(MAKERS[name])
    expected = fd.gradient(f, X)[0]
    np.testing.assert_allclose(jacfwd(f, X), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gradient(f, X)[0], expected, rtol=1e-6, atol=1e-8)
    t = np.array([0.3, -1.0, 0.5])
    y, dy = jvp(f, (X,), (t,))
    assert y == pytest.approx(f(X.copy()), rel=1e-12) and dy == pytest.approx(expected @ t, rel=1e-6)
    x = X.copy()
    np.testing.assert_allclose(hessian(f, x), fd.hessian(f, X, matrix=True), rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(x, X)  # (the caller's array left as it was)


def _write_through(view_of):
    def f(x):
        a = np.outer(x, x) + np.arange(9.0).reshape(3, 3)
        v = view_of(a)
        v += x[: v.shape[-1]] ** 3 if v.ndim == 1 else x[1] ** 2  # numpy: a changes through its view
        return np.sum(a * np.arange(1.0, 10.0).reshape(3, 3))
    return f


VIEWS = {
    "einsum ii->i": lambda a: np.einsum("ii->i", a),
    "einsum ij->ji": lambda a: np.einsum("ij->ji", a),
    "split piece": lambda a: np.split(a, 3)[0],
    "array_split piece": lambda a: np.array_split(a, 3, axis=1)[2],
    "matrix_transpose": np.matrix_transpose,
    "reshape order F": lambda a: a.reshape((3, 3), order="F"),
    "diagonal of a copy written": lambda a: np.diagonal(a).copy(),  # (a copy: a unchanged)
}


@pytest.mark.parametrize("name", VIEWS)
def test_a_write_through_a_view_reaches_the_array(name):
    # (with a chunk of directions the rules stacked one tangent per direction, a copy: the write did not
    # reach a's tangent, jacfwd and hessian silently wrong)
    f = _write_through(VIEWS[name])
    expected = fd.gradient(f, X)[0]
    np.testing.assert_allclose(jacfwd(f, X), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacfwd(f, X, chunk=1), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gradient(f, X)[0], expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(hessian(f, X), fd.hessian(f, X, matrix=True), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("g", [
    lambda x: np.sum(np.broadcast_arrays(x[:, None], np.zeros(3))[0] ** 3),
    lambda x: np.sum(np.broadcast_arrays(x, 3.0)[0] ** 3),
    lambda x: np.sum(np.broadcast_arrays(x)[0] ** 3),
    lambda x: np.einsum("ii", np.outer(x, x)) ** 2,
    lambda x: np.sum(np.einsum("ii->i", np.outer(x, x ** 2)) ** 2),
], ids=["broadcast with zeros", "broadcast with a number", "broadcast alone", "trace", "diagonal"])
def test_hessians_through_broadcast_arrays_and_einsums_diagonal(g):
    # (broadcast_arrays' adjoint summed a dual array argument to a number: a Hessian of the wrong shape,
    # hvp spread over every entry)
    x = np.array([0.7, -0.4, 1.3])
    h = hessian(g, x)
    assert h.shape == (3, 3)
    np.testing.assert_allclose(h, fd.hessian(g, x, matrix=True), rtol=1e-4, atol=1e-5)
    from contexts import hvp
    v = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(hvp(g, x, v), h @ v, rtol=1e-8, atol=1e-10)


W = np.array([[0.3, -0.4, 0.5], [0.9, -0.7, 0.2], [-0.5, -0.8, 0.9]])


def _fortran_then(make_b, take_v, scale=2.0):
    def f(x):
        a = (x.reshape(3, 3) @ W).T  # (an F-ordered value)
        b = make_b(a)
        v = take_v(b)  # numpy decides view or copy by b's memory order
        b *= scale
        return np.sum(a * a) + np.sum(v * v) + v[0]
    return f


FORTRAN = {
    "array of a transpose, reshape(-1) (a copy)": (np.array, lambda b: b.reshape(-1)),
    "asfortranarray, reshape(-1) (a copy)": (np.asfortranarray, lambda b: b.reshape(-1)),
    "asfortranarray, ravel F (a view)": (np.asfortranarray, lambda b: b.ravel(order="F")),
    "astype, einsum diagonal (a view)": (lambda a: a.astype(float), lambda b: np.einsum("ii->i", b)),
    "np.copy, ravel (a copy)": (np.copy, np.ravel),
    "array of a transpose, reshape F (a view)": (np.array, lambda b: b.reshape(9, order="F")),
}


@pytest.mark.parametrize("name", FORTRAN)
def test_fortran_ordered_values_view_or_copy_as_numpy_does(name):
    # (the tangent kept C order where the value was F-ordered: a reshape copied one and viewed the other,
    # and a write through b reached v's tangent but not its value, or the reverse: jacfwd wrong by 100%)
    f = _fortran_then(*FORTRAN[name])
    x = np.array([0.57, -0.51, 1.18, -1.57, -0.97, 0.95, 1.29, -0.55, 1.41])
    expected = fd.gradient(f, x)[0]
    np.testing.assert_allclose(jacfwd(f, x), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacfwd(f, x, chunk=1), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gradient(f, x)[0], expected, rtol=1e-6, atol=1e-8)
    t = np.linspace(-1.0, 1.0, 9)
    assert jvp(f, (x,), (t,))[1] == pytest.approx(expected @ t, rel=1e-6)
