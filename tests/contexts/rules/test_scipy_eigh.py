"""scipy.linalg.eigh (the LAPACK drivers ?syevr, ?syevd, ?syev under it) and np.linalg.eigh, against central
finite differences: eigenvalues directly, eigenvectors through functions that do not depend on their signs
(V diag(f(w)) V^T, an eigenvector's outer product), on matrices that are not symmetric (LAPACK reads one
triangle: the gradient is zero on the other). At repeated eigenvalues what has no derivative (an
eigenvector of the repeated eigenvalue, the sorted eigenvalues taken apart) is refused with NoDerivative;
what has one (a symmetric function of the eigenvalues, a simple eigenvector) is right."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import scipy.linalg.lapack as lapack
import scipy.stats

from contexts import gradient, jvp
from contexts.rules.registry import NoDerivative
from tests import fd

A = np.array([[2.0, 0.7, -0.2], [0.4, 3.1, 0.9], [0.3, 1.2, 4.4]])  # not symmetric
G = np.array([[1.0, 0.5, 0.2], [0.9, 0.3, 0.1], [-0.4, 0.7, 0.7]])
T = np.array([[0.6, -0.3, 0.8], [0.2, 1.1, -0.5], [0.9, 0.4, -0.7]])


def _spectral(w, v):
    """A function of eigh's result that does not depend on the eigenvectors' signs."""
    return np.sum(G * (v @ np.diag(np.sin(w)) @ v.T))


def _close(got, want, rtol=1e-6, atol=1e-8):
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# -- scipy.linalg.eigh: reverse mode ------------------------------------------------------------------

@pytest.mark.parametrize("driver", ["evr", "evd", "ev"])
@pytest.mark.parametrize("lower", [True, False])
def test_eigh_vectors_gradient(driver, lower):
    def f(a):
        return _spectral(*scipy.linalg.eigh(a, lower=lower, driver=driver))
    _close(gradient(f, A)[0], fd.gradient(f, A)[0])


@pytest.mark.parametrize("driver", ["evr", "evd", "ev"])
@pytest.mark.parametrize("lower", [True, False])
def test_eigh_values_gradient(driver, lower):
    def f(a):
        return np.sum(np.exp(scipy.linalg.eigh(a, lower=lower, driver=driver, eigvals_only=True)) * [1.0, 2.0, 3.0])
    (g,) = gradient(f, A)
    _close(g, fd.gradient(f, A)[0])
    assert np.all((np.triu(g, 1) if lower else np.tril(g, -1)) == 0)  # the triangle LAPACK never reads


def test_eigvalsh_gradient():
    f = lambda a: np.sum(scipy.linalg.eigvalsh(a) ** 3)  # noqa: E731
    _close(gradient(f, A)[0], fd.gradient(f, A)[0])


def test_subset_is_refused():
    from contexts.rules.numpy._util import UnsupportedCase
    with pytest.raises(UnsupportedCase, match="subset"):
        gradient(lambda a: np.sum(scipy.linalg.eigh(a, subset_by_index=(1, 2), eigvals_only=True)), A)


# -- the LAPACK drivers: forward mode -----------------------------------------------------------------

@pytest.mark.parametrize("fn", [lapack.dsyevr, lapack.dsyevd, lapack.dsyev], ids=lambda f: f.__name__)
@pytest.mark.parametrize("lower", [0, 1])
def test_drivers_forward(fn, lower):
    def vectors(a):
        out = fn(a, lower=lower)
        return _spectral(out[0], out[1])

    def values(a):
        return np.exp(fn(a, compute_v=0, lower=lower)[0])
    for f in (vectors, values):
        _close(jvp(f, (A,), (T,))[1], fd.directional(f, (A,), (T,)))
        _close(gradient(lambda a: np.sum(f(a)), A)[0], fd.gradient(lambda a: np.sum(f(a)), A)[0])


def test_workspace_output_of_values_only_call_has_no_derivative():
    # with compute_v=0 the second output is what LAPACK left in its workspace, not eigenvectors
    with pytest.raises(NoDerivative):
        gradient(lambda a: np.sum(lapack.dsyevd(a, compute_v=0)[1]), A)
    with pytest.raises(NoDerivative, match="compute_v=0"):  # (its tangent: refused on use, never a number)
        jvp(lambda a: lapack.dsyevd(a, compute_v=0)[1], (A,), (T,))


# -- multivariate_normal.logpdf (scipy's _PSD: eigh of the covariance) --------------------------------

X = np.array([0.2, -0.4])
COV = np.array([[1.0, 0.3], [0.3, 0.8]])
MEAN = np.array([0.1, 0.3])


@pytest.mark.parametrize("which", ["mean", "cov", "mean, identity cov"])
def test_multivariate_normal_logpdf(which):
    if which == "cov":
        f, x = (lambda c: scipy.stats.multivariate_normal.logpdf(X, mean=MEAN, cov=c)), COV
    else:
        cov = np.eye(2) if "identity" in which else COV  # identity: repeated eigenvalues, not differentiated
        f, x = (lambda m: scipy.stats.multivariate_normal.logpdf(X, mean=m, cov=cov)), MEAN
    _close(gradient(f, x)[0], fd.gradient(f, x)[0])


def test_multivariate_normal_logpdf_forward_in_the_mean():
    f = lambda m: scipy.stats.multivariate_normal.logpdf(X, mean=m, cov=COV)  # noqa: E731
    _close(jvp(f, (MEAN,), (np.array([0.7, -0.2]),))[1], fd.directional(f, (MEAN,), (np.array([0.7, -0.2]),)))


# -- repeated eigenvalues -----------------------------------------------------------------------------

_Q = np.linalg.qr(np.array([[1.0, 0.2, 0.3], [0.4, 1.0, -0.2], [0.1, 0.5, 1.0]]))[0]
REPEATED = _Q @ np.diag([1.0, 1.0, 3.0]) @ _Q.T  # eigenvalues 1, 1 (to rounding), 3
TOP_REPEATED = _Q @ np.diag([1.0, 3.0, 3.0]) @ _Q.T

EIGH = {"scipy": lambda a: scipy.linalg.eigh(a), "numpy": lambda a: np.linalg.eigh(a)}


@pytest.mark.parametrize("eigh", EIGH.values(), ids=EIGH.keys())
def test_symmetric_function_of_repeated_eigenvalues_is_right(eigh):
    f = lambda a: np.sum(np.exp(eigh(a)[0]))  # noqa: E731  trace(expm(a)): smooth
    _close(gradient(f, REPEATED)[0], fd.gradient(f, REPEATED)[0])


@pytest.mark.parametrize("eigh", EIGH.values(), ids=EIGH.keys())
def test_simple_eigenvector_beside_repeated_ones_is_right(eigh):
    def f(a):
        v = eigh(a)[1][:, 2]  # eigenvalue 3 is simple
        return np.sum(G * np.outer(v, v))
    _close(gradient(f, REPEATED)[0], fd.gradient(f, REPEATED)[0])


@pytest.mark.parametrize("eigh", EIGH.values(), ids=EIGH.keys())
def test_eigenvectors_of_a_repeated_eigenvalue_are_refused(eigh):
    with pytest.raises(NoDerivative, match="repeated eigenvalues"):
        gradient(lambda a: _spectral(*eigh(a)), REPEATED)


@pytest.mark.parametrize("eigh", EIGH.values(), ids=EIGH.keys())
def test_largest_of_repeated_eigenvalues_is_refused(eigh):
    with pytest.raises(NoDerivative, match="repeated eigenvalues"):
        gradient(lambda a: eigh(a)[0][-1], TOP_REPEATED)


def test_forward_at_repeated_eigenvalues():
    values = lambda a: lapack.dsyevr(a, compute_v=0, lower=1)[0]  # noqa: E731
    # along a tangent that keeps them equal (the matrix itself: eigenvalues scale) they have a derivative
    _close(jvp(values, (REPEATED,), (REPEATED,))[1], fd.directional(values, (REPEATED,), (REPEATED,)))
    with pytest.raises(NoDerivative, match="repeated eigenvalues"):  # they split: sorted, not differentiable
        jvp(values, (REPEATED,), (T,))
    with pytest.raises(NoDerivative, match="repeated eigenvalues"):
        jvp(lambda a: np.linalg.eigh(a)[1], (REPEATED,), (T,))


# -- np.linalg.eigh reading the upper triangle --------------------------------------------------------

@pytest.mark.parametrize("f", [lambda a: np.linalg.eigh(a, "U")[0], lambda a: np.linalg.eigvalsh(a, UPLO="U"),
                               lambda a: _spectral(*np.linalg.eigh(a, UPLO="U"))], ids=["eigh", "eigvalsh", "vectors"])
def test_numpy_eigh_upper_forward(f):
    _close(jvp(f, (A,), (T,))[1], fd.directional(f, (A,), (T,)))
