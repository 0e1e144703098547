"""Singular vectors have no derivative at a zero (rectangular matrix) or repeated singular value: the
formulas divide by them. Where a program needs them there (a hessian through the singular values of a
rank-deficient matrix, a gradient through its singular vectors), the rule refuses; it never returns a
number built from rounding noise. Away from those points the rules hold (checked against finite
differences in tests/contexts/rules/test_numpy_linalg.py)."""

from __future__ import annotations

import numpy as np
import pytest

from contexts import gradient, hessian
from contexts.rules.numpy._util import UnsupportedCase

X = np.array([[1.28, 0.30, 1.08, 1.23], [0.49, 0.34, 0.63, 0.87], [1.06, 0.33, 1.38, 0.30]])


def rank_two(x):  # a 3 x 4 matrix of rank 2 at every x: its third singular value is 0
    return np.hstack([x, x])[:, 2:6] + np.vstack([x, x])[3:]


def through_values(x):
    v = rank_two(x)
    return np.sum(v * np.linalg.svd(v, compute_uv=False)[:, None])


def through_vectors(x):
    u, s, vh = np.linalg.svd(rank_two(x), full_matrices=False)
    return np.sum(u * 2.0) + np.sum(vh)


def test_hessian_at_a_zero_singular_value_is_refused():
    with pytest.raises(UnsupportedCase, match="zero or repeated singular value"):
        hessian(through_values, X)


def test_gradient_through_singular_vectors_at_a_zero_singular_value_is_refused():
    with pytest.raises(UnsupportedCase, match="zero or repeated singular value"):
        gradient(through_vectors, X)


def test_full_rank_still_differentiates():
    x = X[:, :3] + np.eye(3)
    f = lambda a: np.sum(np.linalg.svd(a, compute_uv=False) ** 3)  # noqa: E731
    (g,) = gradient(f, x)
    u, s, vh = np.linalg.svd(x)
    np.testing.assert_allclose(g, u @ np.diag(3 * s ** 2) @ vh, rtol=1e-8)  # d sum(s^3) = U diag(3s^2) V^T
