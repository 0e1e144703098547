"""Hessian patterns equal the nonzero structure of closed-form or finite-difference Hessians."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.optimize as so

from contexts.sparsity import TracedBranchError, hessian_sparsity

from tests import fd

from ._pattern import nonzero


@pytest.mark.parametrize("n", [2, 7, 50])
def test_rosen_unchanged_is_tridiagonal(n):
    x = np.random.default_rng(n).uniform(-1.5, 1.5, n)
    H = hessian_sparsity(so.rosen, x)
    np.testing.assert_array_equal(H.toarray(), nonzero(so.rosen_hess(x)))
    assert H.nnz == 3 * n - 2


CASES = {
    "bilinear": (lambda x: x[0] * x[1] + x[2] * x[3], 4),
    # (np.fabs: real only, piecewise linear; abs and np.abs keep second order, a complex z's |z| has it)
    "linear_parts": (lambda x: np.sum(3 * x) + x[0] ** 2 + np.fabs(x[1]), 3),
    "division": (lambda x: x[0] / x[1] + x[2] / 3.0, 3),
    "quadratic_form": (lambda x: x @ np.array([[2.0, 1, 0], [1, 2, 0], [0, 0, 0]]) @ x + x[2], 3),
    "nonlinear_mix": (lambda x: np.exp(x[0] * x[1]) + np.sin(x[2]) * x[3] + np.prod(x[3:]), 6),
    "math_calls": (lambda x: math.exp(x[0]) * x[1] + math.sqrt(x[2]), 4),
    "matmul_then_square": (lambda x: np.sum((np.array([[1.0, 1, 0, 0], [0, 0, 1, 1]]) @ x) ** 2), 4),
    "max_is_first_order": (lambda x: np.max(x[:2]) + x[2] ** 2, 3),
    "vector_output_union": (lambda x: np.array([x[0] * x[1], x[2] ** 2]), 4),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_hessian_pattern_matches_finite_differences(name):
    f, n = CASES[name]
    x = np.random.default_rng(3).uniform(0.5, 1.5, n)
    expected = nonzero(fd.hessian(lambda z: np.sum(f(z)), x, h=1e-3), tol=1e-4)
    np.testing.assert_array_equal(hessian_sparsity(f, x).toarray(), expected)
    np.testing.assert_array_equal(hessian_sparsity(f, x, mode="local").toarray(), expected)


def test_hessian_global_mode_refuses_branches_local_follows():
    def f(x):
        return x[0] * x[1] if x[2] > 0 else x[2] ** 2

    with pytest.raises(TracedBranchError):
        hessian_sparsity(f, np.ones(3))
    x = np.array([1.0, 2.0, -1.0])
    np.testing.assert_array_equal(hessian_sparsity(f, x, mode="local").toarray(),
                                  nonzero(fd.hessian(lambda z: np.sum(f(z)), x, h=1e-3), tol=1e-4))


def test_large_rosen_hessian():
    n = 20_000
    H = hessian_sparsity(so.rosen, np.zeros(n))
    assert H.nnz == 3 * n - 2
    rows, cols = H.nonzero()
    assert np.abs(rows - cols).max() == 1
