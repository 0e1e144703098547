"""scipy.linalg.solve/inv/cholesky asked to overwrite their inputs (overwrite_a, overwrite_b): the
kernels left the LU (or Cholesky) factors in the matrix the rules then read as the matrix. scipy.linalg.solve
passes overwrite_a=True for an F-ordered matrix, which a forward-mode dual claims to be: CubicSpline through
3 points (`solve(A, b, overwrite_a=True, overwrite_b=True)`) came out silently wrong under `jacfwd` (found by
the fuzzer's idiom templates, 2026-11-28). Checked against central differences in every mode."""

import numpy as np
import pytest
import scipy.interpolate
import scipy.linalg

from contexts import gradient, jacfwd, jacobian
from tests import fd

X = np.array([0.844635, 0.890047, 1.245078])


def matrix(x):
    return np.asfortranarray(np.outer(x, x) * 0.2 + np.diag([1.0, 2.0, 3.0]))


def spline3(x):
    return scipy.interpolate.CubicSpline(np.arange(3, dtype=float), x * x)(np.arange(3) + 0.25) * x


def solve_overwriting(x):
    return scipy.linalg.solve(matrix(x), x * x, overwrite_a=True, overwrite_b=True, check_finite=False) * x


def inv_overwriting(x):
    return scipy.linalg.inv(matrix(x), overwrite_a=True, check_finite=False) @ x


def cholesky_overwriting(x):
    return scipy.linalg.cholesky(matrix(x), overwrite_a=True, check_finite=False) @ x


CASES = [spline3, solve_overwriting, inv_overwriting, cholesky_overwriting]


def _fd_jacobian(f, x):
    return np.array([fd.gradient(lambda v, i=i: f(v)[i], x)[0] for i in range(np.size(f(x)))])


@pytest.mark.parametrize("mode", ["jacfwd", "reverse"])
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_right(f, mode):
    got = jacfwd(f, X) if mode == "jacfwd" else jacobian(f, X)
    np.testing.assert_allclose(got, _fd_jacobian(f, X), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_gradient_of_a_sum(f):
    np.testing.assert_allclose(gradient(lambda x: np.sum(f(x)), X)[0], fd.gradient(lambda x: np.sum(f(x)), X)[0],
                               rtol=1e-6, atol=1e-9)
