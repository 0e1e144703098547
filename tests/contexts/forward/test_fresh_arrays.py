"""Forward mode on duals: a float array the function makes with np.empty/zeros/ones/full takes perturbed
values (it is a dual of zero tangent), wherever it is kept: a local, an object's field (scipy's
Runge-Kutta solvers keep `self.K = np.empty(...)` and fill it in `rk_step`), a view of it. Every
derivative against central finite differences; `derivative` and `jacfwd` (chunked tangents)."""

import numpy as np
import pytest

from contexts import derivative, jacfwd

from tests import fd

X = np.array([0.3, -0.7, 1.2])


class Stages:
    def __init__(self, n):
        self.K = np.empty((3, n))

    def step(self, y):
        self.K[0] = np.sin(y)
        self.K[1] = self.K[0] * y
        self.K[2] = 2.0
        return self.K.T.dot(np.array([1.0, 0.5, 0.25]))


def kept_on_an_object(x):
    s = Stages(x.size)
    y = s.step(x)
    return s.step(y * x)


def filled_through_a_view(x):
    k = np.zeros((3, x.size))
    row = k[1]
    row[:] = x * x
    k[2, :2] = x[1:]
    return k.sum(0) * x


def ones_full_in_place(x):
    a = np.ones(x.size)
    a *= x
    b = np.full((2, x.size), 0.5)
    b[0] += a
    return np.concatenate([a, b.ravel()]) ** 2


def integer_arrays_stay_plain(x):
    idx = np.zeros(2, dtype=int)
    idx[1] = 2
    return x[idx] * np.sum(x)


CASES = [kept_on_an_object, filled_through_a_view, ones_full_in_place, integer_arrays_stay_plain]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_jacfwd(f):
    np.testing.assert_allclose(jacfwd(f, X), fd.jacobian(f, X), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_derivative_along_a_line(f):
    g = lambda s: f(X + s * np.array([1.0, -2.0, 0.5]))  # noqa: E731
    np.testing.assert_allclose(derivative(g, 0.1), fd.derivative(g, 0.1), rtol=1e-6, atol=1e-8)


class Sigmas:
    def __init__(self, n):
        self.points = np.zeros((2, n))


def list_of_rows_to_atleast_2d(x):
    s = Sigmas(x.size)  # (an object: the function runs on duals)
    s.points[0] = x
    s.points[1] = x * x
    rows = [np.sin(p) for p in s.points]  # a list of duals, as filterpy's sigma points
    return np.atleast_2d(rows).sum(0) * np.atleast_1d(x[0])


def test_atleast_2d_of_a_list_of_duals():
    f = list_of_rows_to_atleast_2d
    np.testing.assert_allclose(jacfwd(f, X), fd.jacobian(f, X), rtol=1e-6, atol=1e-8)


C = np.array([0.9, 1.1, 0.3])


def _written_from_constants(x, c):
    """A fresh array written by ufuncs whose inputs are all constants (`out=` the only dual): the value
    is written, without a tangent (this crashed: the ufunc was asked for a rule with no dual input)."""
    t = np.zeros(3)
    np.sin(c[1:], out=t[1:])
    u = np.ones(3)
    np.add(c, c, out=u)
    np.tanh(u, out=u)
    return t * x + u * x ** 2 + t


@pytest.mark.parametrize("wrt", ["x", "c"])
def test_a_fresh_array_written_from_constants(wrt):
    f = (lambda x: _written_from_constants(x, C)) if wrt == "x" else (lambda c: _written_from_constants(X, c))
    at = X if wrt == "x" else C
    np.testing.assert_allclose(jacfwd(f, at), fd.jacobian(f, at), rtol=1e-6, atol=1e-8)
