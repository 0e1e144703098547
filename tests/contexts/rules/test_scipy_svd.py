"""scipy.linalg's SVD (LAPACK `?gesdd` and `?gesvd`, under `svd`, `svdvals`, `pinv`, `orth`): every mode
against central differences. pykalman's filter calls `scipy.linalg.pinv` on every step; it was refused
("no rule for dgesdd") in both modes. Also the gufuncs under np.linalg.solve that array-api-compat's
`solve` calls itself (scipy.signal.filtfilt was refused: "no rule for numpy.solve1")."""

import numpy as np
import pytest
import scipy.linalg as sla
from scipy.linalg import lapack

from contexts import NoRuleError, gradient, jacfwd
from contexts.rules.registry import NoDerivative
from overdub.errors import OverdubError
from tests import fd
from tests.modes import ARRAY_MODES, assert_array_gradient

A = np.array([[2.0, 0.3, -0.4], [0.1, 1.5, 0.7], [0.6, -0.2, 1.1], [0.3, 0.9, -0.5]])
W = np.linspace(-1.0, 1.3, 12).reshape(4, 3)


def values(a):
    return (sla.svdvals(a.reshape(4, 3)) ** 2 * np.array([1.0, 2.0, 3.0])).sum()


def vectors(a):
    u, s, vt = sla.svd(a.reshape(4, 3), full_matrices=False)
    return np.sum(np.abs(u) * W) + np.sum(np.abs(vt) @ s)  # (|.|: the signs of singular vectors are arbitrary)


def square(a):
    u, s, vt = sla.svd(a.reshape(4, 3)[:3], lapack_driver="gesvd")
    return np.sum(np.abs(u) * W[:3]) + np.sum(np.abs(vt).T * s)


def pseudo_inverse(a):
    return np.sum(sla.pinv(a.reshape(4, 3)) * W.T)


@pytest.mark.parametrize("mode", ARRAY_MODES)
@pytest.mark.parametrize("f", [values, vectors, square, pseudo_inverse])
def test_against_central_differences(f, mode):
    assert_array_gradient(mode, f, A.ravel())


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_the_kernel_called_directly_with_its_options(mode):
    def f(a):
        u, s, vt, info = lapack.dgesdd(a.reshape(4, 3), compute_uv=1, full_matrices=0)
        return np.sum(s ** 3) + np.sum(np.abs(u) * W)
    got = gradient(f, A.ravel())[0] if mode == "reverse" else jacfwd(f, A.ravel())
    np.testing.assert_allclose(got, fd.gradient(f, A.ravel())[0], rtol=1e-6, atol=1e-8)


def test_the_placeholders_of_compute_uv_0_carry_no_gradient():
    def f(a):
        u, s, vt, info = lapack.dgesdd(a.reshape(4, 3), compute_uv=0)
        return np.sum(s) + np.sum(u)  # (u: a 1x1 placeholder)
    with pytest.raises(OverdubError):
        gradient(f, A.ravel())
    with pytest.raises(NoDerivative, match="placeholders"):  # (no tangent known: refused, never a number)
        jacfwd(f, A.ravel())


def test_the_matrix_is_read_before_lapack_overwrites_it():
    """scipy.linalg.svd passes overwrite_a=True for a matrix it copied: the rules read a copy's original."""
    def f(a):
        return np.sum(sla.svd(a.reshape(4, 3), compute_uv=False, overwrite_a=True) ** 2 * [1.0, 2.0, 3.0])
    np.testing.assert_allclose(gradient(f, A.ravel())[0], fd.gradient(f, A.ravel())[0], rtol=1e-6)
    np.testing.assert_allclose(jacfwd(f, A.ravel()), fd.gradient(f, A.ravel())[0], rtol=1e-6)


def test_singular_vectors_at_a_repeated_singular_value_refused():
    with pytest.raises(OverdubError) as e:
        gradient(lambda a: np.sum(np.abs(sla.svd(a)[0]) * W[:3]), np.eye(3))
    assert not isinstance(e.value, NoRuleError)  # (the rule's own refusal: no derivative there)


# -- the gufuncs under np.linalg.solve, called by array-api-compat's `solve` (scipy.signal.filtfilt) ---------

def filtered_twice(a):
    import scipy.signal
    return np.sum(scipy.signal.filtfilt([0.5, 0.5], [1.0, -0.3], a) * np.cos(np.arange(12.0)))


@pytest.mark.parametrize("mode", ARRAY_MODES)
def test_filtfilt(mode):
    assert_array_gradient(mode, filtered_twice, np.linspace(0.0, 1.0, 12) ** 2)


@pytest.mark.parametrize("mode", ARRAY_MODES)
def test_the_solve_gufuncs_batched(mode):
    from numpy.linalg import _umath_linalg
    b = np.array([[1.0, 0.5], [0.2, -0.3]])

    def f(p):
        a = p.reshape(2, 2, 2) + 3.0 * np.eye(2)
        return np.sum(_umath_linalg.solve1(a, b, signature="dd->d") ** 2) + np.sum(
            _umath_linalg.solve(a, b[..., None] * p[:2], signature="dd->d"))
    assert_array_gradient(mode, f, np.linspace(-0.5, 0.7, 8))
