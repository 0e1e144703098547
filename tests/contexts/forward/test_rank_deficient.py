"""np.linalg.pinv of a matrix whose rank stays below full in a neighbourhood (an outer product, a sum of
a tiled row and a repeated column): differentiable there, where numpy's own pinv divides by singular
values that are zero. Every mode against central differences."""

from __future__ import annotations

import numpy as np
import pytest

from contexts import gradient, hessian, jacfwd, jvp

from tests import fd


def tiled(x):  # rank 2, 3 x 4
    v = np.tile(x[:1], (3, 1)) + np.repeat(x[:, :1], 4, axis=1)
    w = v * np.sum(np.linalg.pinv(v)) * 0.1 + v
    return np.sum(w * 0.535) + 0.3 * np.sum(np.sin(w))


def outer(x):  # rank 1, 3 x 3
    p = np.linalg.pinv(np.outer(x[0], x[1]))
    return np.sum(p * p) + np.sum(np.cos(p))


def hermitian(x):  # rank 1, symmetric
    a = np.outer(x[0], x[0])
    return np.sum(np.linalg.pinv(a, hermitian=True) ** 2)


CASES = [(tiled, np.array([[0.68, 1.48, 1.45, 1.17], [0.37, 1.07, 0.83, 1.15], [1.49, 0.91, 1.07, 0.63]])),
         (outer, np.array([[0.9, -1.2, 0.5], [1.1, 0.4, -0.7]])),
         (hermitian, np.array([[0.9, -1.2, 0.5]]))]


@pytest.mark.parametrize("f, x", CASES, ids=[c[0].__name__ for c in CASES])
def test_first_order(f, x):
    want = fd.jacobian(f, x)
    np.testing.assert_allclose(gradient(f, x)[0], want, rtol=1e-5, atol=1e-7)
    d = np.linspace(-1.0, 1.0, x.size).reshape(x.shape)
    np.testing.assert_allclose(jvp(f, (x,), (d,))[1], np.sum(want * d), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(jacfwd(f, x), want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("inner", ["reverse", "forward"])
@pytest.mark.parametrize("f, x", CASES, ids=[c[0].__name__ for c in CASES])
def test_hessian(f, x, inner):
    want = fd.hessian(f, x)
    got = hessian(f, x, inner=inner)
    np.testing.assert_allclose(np.reshape(got, want.shape), want, rtol=2e-3, atol=2e-3 * np.abs(want).max())
