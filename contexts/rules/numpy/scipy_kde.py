"""scipy.stats.gaussian_kde's compiled kernels (`_stats.gaussian_kernel_estimate` and `_log`, Cython fused
functions, one specialisation per dtype) written as the numpy code they compute (`Rule.stand_in`), so every
engine differentiates a kernel density estimate in its data, weights, evaluation points and bandwidth.

For data points p_i (n x d), values v_i (n x p), points x_j (m x d) and the lower Cholesky factor L of the
kernel covariance, the estimate is  sum_i v_i exp(-|L^-1 (p_i - x_j)|^2 / 2) / ((2 pi)^(d/2) prod diag L),  and
the log one its logarithm (a log-sum-exp over i). Checked against scipy's own kernels and finite differences in
tests/contexts/test_scipy_kde.py.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import solve_triangular
from scipy.special import logsumexp
from scipy.stats import _stats

from ..registry import registry

__all__ = ["gaussian_kernel_estimate", "gaussian_kernel_estimate_log"]


def _half_squared_distances(points, xi, cho_cov):
    """|L^-1 (p_i - x_j)|^2 / 2 for every data point i and evaluation point j, (n, m); and log of the norm."""
    points_ = solve_triangular(cho_cov, np.transpose(points), lower=True)  # (d, n)
    xi_ = solve_triangular(cho_cov, np.transpose(xi), lower=True)  # (d, m)
    diff = points_[:, :, None] - xi_[:, None, :]
    d = np.shape(cho_cov)[0]
    log_norm = -0.5 * d * math.log(2 * math.pi) - np.sum(np.log(np.diagonal(cho_cov)))
    return np.sum(diff * diff, axis=0) / 2.0, log_norm


def gaussian_kernel_estimate(points, values, xi, cho_cov, dtype, _=0):
    """The multivariate Gaussian kernel estimate at xi, (m, p), in dtype."""
    arg, log_norm = _half_squared_distances(points, xi, cho_cov)
    estimate = np.transpose(np.exp(-arg) * np.exp(log_norm)) @ values
    return np.asarray(estimate).astype(dtype, copy=False)


def gaussian_kernel_estimate_log(points, values, xi, cho_cov, dtype, _=0):
    """The log of the estimate at xi, (m, p), in dtype."""
    arg, log_norm = _half_squared_distances(points, xi, cho_cov)
    out = logsumexp(-arg[:, :, None], 0, np.asarray(values)[:, None, :]) + log_norm  # (b by position: forward mode's rule)
    return np.asarray(out).astype(dtype, copy=False)


for _fused, _stand in ((getattr(_stats, "gaussian_kernel_estimate", None), gaussian_kernel_estimate),
                       (getattr(_stats, "gaussian_kernel_estimate_log", None), gaussian_kernel_estimate_log)):
    for _spec in getattr(_fused, "__signatures__", {}) or {}:
        if _spec != "long double":  # (numpy's longdouble: no rules of their own)
            registry.set(_fused[_spec], stand_in=_stand)
