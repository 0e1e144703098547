"""Forward over reverse (`hessian`, `hvp`): arrays the user's code makes with np.zeros/np.empty/np.ones and
then fills with differentiated values (`v = np.zeros(n); v[i] = ...`, `np.add(a, b, out=v)`) take the
perturbed values, as forward mode's own arrays do (they were refused: "stores a perturbed value into an
array that has no tangent"). Checked against central differences of the gradient."""

import numpy as np
import pytest

from contexts import hessian, hvp
from tests import fd

X = np.array([0.9, 1.1, 1.3, 0.5])


def filled(x):
    v = np.zeros((4,))
    for i in range(4):
        v[i] = x[i] * x[3 - i] + 0.5
    return np.sum(v * np.sin(x))


def written_out(x):
    v = np.empty(4)
    np.multiply(x, x[::-1], out=v)
    w = np.ones((2, 2))
    w[0, :] = x[:2] ** 3
    return np.sum(v ** 2) + np.sum(w * x[2:])


@pytest.mark.parametrize("f", [filled, written_out], ids=lambda f: f.__name__)
def test_hessian_of_arrays_made_and_filled(f):
    want = fd.hessian(f, X)
    np.testing.assert_allclose(hessian(f, X), want, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("f", [filled, written_out], ids=lambda f: f.__name__)
def test_hvp_of_arrays_made_and_filled(f):
    v = np.array([0.3, -0.2, 0.5, 1.0])
    want = np.asarray(fd.hessian(f, X)).reshape(4, 4) @ v
    np.testing.assert_allclose(hvp(f, X, v), want, rtol=1e-4, atol=1e-6)
