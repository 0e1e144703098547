"""In-place primitives overwrite entries of an array: the overwritten entries' cotangent is dropped, never
cancelled by subtracting it (`d - d` is NaN where d is infinite: `sqrt` at an overwritten 0, as
sklearn's `euclidean_distances` fills its diagonal with zeros before the square root). And `a.item`'s
index forms. Checked against central differences."""

import warnings

import numpy as np
import pytest

from contexts import gradient, hessian, jacfwd
from tests import fd

X = np.array([0.3, 0.7, 1.9])
DIAGONAL = np.eye(3, dtype=bool)


def zero_diagonal(d, how):
    if how == "fill_diagonal":
        np.fill_diagonal(d, 0.0)
    elif how == "put":
        np.put(d, [0, 4, 8], 0.0)
    elif how == "place":
        np.place(d, DIAGONAL, 0.0)
    elif how == "putmask":
        np.putmask(d, DIAGONAL, 0.0)
    elif how == "copyto":
        np.copyto(d, 0.0, where=DIAGONAL)
    elif how == "setitem":
        d[[0, 1, 2], [0, 1, 2]] = 0.0
    return d


@pytest.mark.parametrize("how", ["fill_diagonal", "put", "place", "putmask", "copyto", "setitem"])
def test_an_infinite_cotangent_of_an_overwritten_entry_is_dropped(how):
    def f(x):
        d = zero_diagonal(np.outer(x, x) + 0.01, how)
        return np.sum(np.sqrt(d))  # (sqrt's derivative at the overwritten 0 is infinite)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        g = gradient(f, X)[0]
        h = hessian(f, X)
    np.testing.assert_allclose(g, fd.gradient(f, X)[0], rtol=1e-6)
    np.testing.assert_allclose(h, fd.hessian(f, X, matrix=True), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("index", [(5,), ((1, 2),), (1, 2)], ids=["flat", "tuple", "two"])
def test_item_index_forms(index):
    # (`a.item((1, 2))` sent the cotangent to flat positions 1 and 2; its hessian crashed, as `a.item(5)`'s)
    A = np.array([[1.2, 0.3, -0.4], [0.35, 0.8, 0.1], [0.2, -0.6, 1.5]])
    f = lambda a: a.item(*index) ** 3  # noqa: E731
    expected = fd.gradient(f, A)[0]
    np.testing.assert_allclose(gradient(f, A)[0], expected, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(jacfwd(f, A), expected, rtol=1e-6, atol=1e-12)
    h = hessian(f, A)
    assert h.dtype == np.float64
    np.testing.assert_allclose(h.reshape(9, 9), fd.hessian(f, A, matrix=True), rtol=1e-4, atol=1e-6)
