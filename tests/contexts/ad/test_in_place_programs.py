"""Whole programs written the way numpy code is written — preallocated outputs, `+=` in loops, columns
changed through views — differentiated unchanged and checked against central finite differences."""

import numpy as np
import pytest

from tests.fd import assert_grad_fd


def leapfrog(k):
    """A harmonic oscillator integrated by leapfrog, updating position and velocity arrays in place."""
    x = np.array([1.0, 0.0])
    v = np.array([0.0, 1.0])
    dt = 0.05
    for _ in range(40):
        a = -k * x
        v += 0.5 * dt * a
        x += dt * v
        a = -k * x
        v += 0.5 * dt * a
    return x[0] ** 2 + v[1]


def convolution_by_slices(w):
    """A 3x3 'valid' convolution accumulated into a preallocated output, one shifted slice at a time."""
    img = np.arange(36.0).reshape(6, 6) / 10
    out = np.zeros((4, 4))
    for i in range(3):
        for j in range(3):
            out += w[i, j] * img[i:i + 4, j:j + 4]
    return np.sum(np.tanh(out))


def euler_into_preallocated_rows(p):
    """Lotka-Volterra by explicit Euler, each state written into a row of a preallocated array."""
    n = 30
    ys = np.empty((n, 2))
    ys[0] = [1.0, 0.5]
    for i in range(1, n):
        y = ys[i - 1]
        ys[i] = y + 0.1 * np.array([p[0] * y[0] - p[1] * y[0] * y[1], -y[1] + p[1] * y[0] * y[1]])
    return np.sum(ys[:, 0] ** 2)


def welford_variance(x):
    """Welford's running mean and variance, updated in place row by row."""
    mean = np.zeros(3)
    m2 = np.zeros(3)
    for k in range(x.shape[0]):
        delta = x[k] - mean
        mean += delta / (k + 1)
        m2 += delta * (x[k] - mean)
    return np.sum(m2 / (x.shape[0] - 1))


def normalize_columns(A):
    """Each column centred and scaled through a view of it."""
    B = A.copy()
    for j in range(B.shape[1]):
        col = B[:, j]
        col -= col.mean()
        col /= np.linalg.norm(col)
    return np.sum(B * np.arange(B.size).reshape(B.shape))


def orthonormal_columns(A):
    """Classical Gram-Schmidt, orthonormalising the columns of a copy in place."""
    Q = A.copy()
    for j in range(Q.shape[1]):
        for i in range(j):
            Q[:, j] -= (Q[:, i] @ Q[:, j]) * Q[:, i]
        Q[:, j] /= np.linalg.norm(Q[:, j])
    return Q


def gram_schmidt(A):
    Q = orthonormal_columns(A)
    return np.sum(Q * np.arange(Q.size).reshape(Q.shape))


_RNG = np.random.default_rng(0)


@pytest.mark.parametrize("f, x", [
    (leapfrog, 1.3),
    (convolution_by_slices, _RNG.standard_normal((3, 3))),
    (euler_into_preallocated_rows, np.array([0.8, 0.4])),
    (welford_variance, _RNG.standard_normal((6, 3))),
    (normalize_columns, _RNG.standard_normal((5, 3))),
    (gram_schmidt, _RNG.standard_normal((4, 3))),
], ids=lambda v: getattr(v, "__name__", ""))
def test_in_place_program(f, x):
    assert_grad_fd(f, x)


def test_gram_schmidt_against_its_closed_form_property():
    # Q from Gram-Schmidt is orthonormal whatever A is: the gradient of ||Q^T Q - I||^2 vanishes
    def loss(A):
        Q = orthonormal_columns(A)
        return np.sum((Q.T @ Q - np.eye(Q.shape[1])) ** 2)
    from contexts import gradient
    (g,) = gradient(loss, _RNG.standard_normal((5, 3)))
    np.testing.assert_allclose(g, 0.0, atol=1e-10)
