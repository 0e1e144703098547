"""Differentiate numpy code that changes arrays in place: through views, across calls, in loops.

autograd, JAX and Zygote refuse `x[i] = v` and `x += y` on traced arrays. overdub differentiates them as
written. Its cotangents follow memory, not names: a change made through a view (`col = Q[:, j]`) or inside
a helper (`normalize_(col)`) reaches every variable that sees that memory.

Here a QR-like orthonormalisation (modified Gram-Schmidt, written the in-place way) feeds a least-squares
loss. We check the gradient against central finite differences, then take a few gradient steps.
"""

import numpy as np

from contexts import gradient
from contexts.rules.check import numerical_gradient


def normalize_(v):
    """Scale v to unit length, in place."""
    v /= np.sqrt(np.sum(v * v))


def orthonormalize(A):
    """Modified Gram-Schmidt on a copy of A, one column view at a time."""
    Q = A.copy()
    for j in range(Q.shape[1]):
        col = Q[:, j]                  # a view: changing col changes Q
        for i in range(j):
            col -= (Q[:, i] @ col) * Q[:, i]
        normalize_(col)                # changed inside a helper
    return Q


rng = np.random.default_rng(3)
target = rng.standard_normal(6)


def loss(A):
    """How far the target is from its projection onto span(A)."""
    Q = orthonormalize(A)
    residual = target - Q @ (Q.T @ target)
    return np.sum(residual ** 2)


A = rng.standard_normal((6, 2))
(g,) = gradient(loss, A)
(fd,) = numerical_gradient(loss, A)
print("reverse mode:\n", np.round(g, 6))
print("max difference from central differences:", float(np.max(np.abs(g - fd))))
assert np.allclose(g, fd, rtol=1e-5, atol=1e-7)

# the projection depends on span(A) only (A @ M spans the same for any invertible M), so A.T @ g = 0
print("A.T @ gradient:", np.round(A.T @ g, 12).tolist())
assert np.allclose(A.T @ g, 0.0, atol=1e-9)

before = loss(A)
for _ in range(25):
    (g,) = gradient(loss, A)
    A = A - 0.3 * g
print(f"loss {before:.4f} -> {loss(A):.4f} after 25 gradient steps")
assert loss(A) < 0.5 * before
