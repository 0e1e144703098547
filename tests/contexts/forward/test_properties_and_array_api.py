"""Forward mode on duals through what library code does around the calls:
- a property's pure-Python getter (filterpy's `KalmanFilter.log_likelihood`, scipy's `Covariance.log_pdet`)
  runs under the forward context, as a call does (it ran as plain Python: `np.asarray` of a dual refused);
- arrays made with np.empty_like/zeros_like/ones_like/full_like of plain arguments take perturbed values
  (scipy's array-API `apply_where` fills `xp.empty_like(cond)` by boolean index), as np.empty's do;
- a C function given its differentiated argument by keyword (`dsyevr(a=a1, ...)` in scipy.linalg.eigh)
  gets its tangent (`Rule.positional`).
Every derivative against central differences: `jvp`, `jacfwd` (chunked tangents) and `derivative`."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import scipy.stats

from contexts import derivative, jacfwd, jvp
from tests import fd

X = np.array([0.4, -0.3, 1.2])
T = np.array([0.7, 0.2, -0.5])


class Gaussian:
    def __init__(self, mean, scale):
        self.mean, self.scale = mean, scale

    @property
    def flat_mean(self):
        return np.asarray(self.mean).flatten()

    @property
    def log_norm(self):
        return float(np.log(np.array(self.scale, dtype=float)[()]))

    def logpdf(self, x):
        return -0.5 * np.sum(((x - self.flat_mean) / self.scale) ** 2) - self.log_norm


def through_property(x):
    return Gaussian(x, 1.0 + x[0] ** 2).logpdf(np.array([0.1, 0.2, 0.3]))


def through_getattr(x):
    g = Gaussian(x * 2.0, 1.5)
    return np.sum(getattr(g, "flat_mean") ** 2) + getattr(g, "missing", 0.0)


def filled_by_mask(x):  # what scipy's apply_where does with the array it makes
    cond = x > 0
    out = np.empty_like(cond, dtype=float)
    out[~cond] = np.exp(x[~cond])
    out[cond] = np.sin(x[cond])
    return out * np.full_like(x, 2.0) + np.zeros_like(cond, dtype=float) + np.ones_like(cond, dtype=float)


def t_logpdf(x):
    return scipy.stats.t.logpdf(x, 4.5)


def eigh_values(x):
    a = np.outer(x, x) + np.diag([1.0, 2.0, 3.0]) + np.tril(np.ones((3, 3)))
    return scipy.linalg.eigh(a, eigvals_only=True)


def eigh_vectors(x):
    a = np.outer(x, x) + np.diag([1.0, 2.0, 3.0]) + np.tril(np.ones((3, 3)))
    w, v = scipy.linalg.eigh(a, lower=False)
    return (v @ np.diag(np.sin(w)) @ v.T).ravel()


def mvn_in_cov(x):
    cov = np.array([[1.0 + x[0] ** 2, 0.3 * x[1]], [0.3 * x[1], 0.8 + x[2] ** 2]])
    return scipy.stats.multivariate_normal.logpdf(np.array([0.2, -0.4]), mean=np.array([0.1, 0.3]), cov=cov)


CASES = [through_property, through_getattr, filled_by_mask, t_logpdf, eigh_values, eigh_vectors, mvn_in_cov]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_forward(f):
    np.testing.assert_allclose(jvp(f, (X,), (T,))[1], fd.directional(f, (X,), (T,)), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacfwd(f, X), fd.jacobian(f, X), rtol=1e-6, atol=1e-8)
    g = lambda s: np.sum(f(X * s))  # noqa: E731
    np.testing.assert_allclose(derivative(g, 0.9), fd.derivative(g, 0.9), rtol=1e-6, atol=1e-8)


def test_property_of_a_constant_object_is_read_as_is():
    g = Gaussian(np.array([0.1, 0.2, 0.3]), 2.0)
    assert jvp(lambda x: np.sum(g.flat_mean * x), (X,), (T,))[1] == pytest.approx(np.sum(g.flat_mean * T))
