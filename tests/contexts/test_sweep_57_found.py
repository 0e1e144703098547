"""What session 57 found, each checked in reverse and forward mode against central differences (each failed
before).

- numpy 2.5's `np.linalg.cond(a)` (the 2-norm, -2 and 'nuc') calls the gufunc under the singular values,
  `_umath_linalg.svd(x, signature=...)`, itself (`_cond_svdvals`, which gives nan where svd raises): refused as
  a C function in both modes on numpy 2.5 (quantecon's Riccati solver picks its shift by the condition
  number). The gufunc has the rules of `np.linalg.svd(a, compute_uv=False)`.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.linalg import _umath_linalg

from tests import fd


def _by_2_norms(x):
    a = np.array([[2.0, x[0], 0.3], [x[1], 1.0 + x[0] * x[1], 0.2], [0.1, x[0], 1.5]])
    return float(np.linalg.cond(a) + np.linalg.cond(a, -2) * x[1] + np.linalg.cond(a, "nuc"))


def _singular_values_by_the_gufunc(x):
    a = np.stack([np.outer(x, x[::-1]) + np.eye(3), np.diag(x) + 0.5])  # (a batch of two)
    s = _umath_linalg.svd(a, signature="d->d")
    return float(np.sum(s[:, 0] * s[:, -1]) + s[1, 1] ** 2)


def _jacobian(mode, f, x):
    from contexts import gradient, jacfwd
    return gradient(f, x)[0] if mode == "reverse" else jacfwd(f, x)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("f", [_by_2_norms, _singular_values_by_the_gufunc])
def test_condition_number_by_the_2_norm_and_the_svd_gufunc(mode, f):
    x = np.array([0.3, 0.7, -1.2])
    np.testing.assert_allclose(_jacobian(mode, f, x), fd.gradient(f, x)[0], rtol=1e-7, atol=1e-10)


def test_svd_gufunc_sparsity_is_dense():
    from contexts import jacobian_sparsity

    def f(x):
        return _umath_linalg.svd(np.diag(x) + 0.1, signature="d->d")
    pattern = jacobian_sparsity(f, np.array([0.3, 0.7, 1.2]))
    pattern = np.asarray(pattern.todense()) if hasattr(pattern, "todense") else np.asarray(pattern)
    assert pattern.shape == (3, 3) and pattern.all()
