"""scipy.linalg.eigvals, eig and norm, differentiated as numpy's np.linalg.eigvals, eig and norm (`Rule.stand_in`):
scipy reaches LAPACK's dgeev and BLAS's dnrm2 through f2py, which have no rule, so every transfer function of
harold and peakutils' baseline were refused in both modes (sweep U). Each derivative against central
differences, in both modes; the stand-ins' values against scipy's own."""

import numpy as np
import pytest

sl = pytest.importorskip("scipy.linalg")

from contexts import gradient, jacfwd  # noqa: E402
from overdub.errors import OverdubError  # noqa: E402
from contexts.rules.numpy import scipy_linalg as stand  # noqa: E402
from tests import fd  # noqa: E402

A = np.array([0.5, 1.0, -2.0, -3.0, 0.3, 0.7, 1.1, -0.4, 2.0])  # (a 3x3 matrix with one real, two complex eigenvalues)


def eigenvalues(a):
    w = sl.eigvals(a.reshape(3, 3))
    return np.sum(w.real ** 2 - w.imag * 0.5)


def eigenvectors(a):
    w, v = sl.eig(a.reshape(3, 3))
    return np.sum(np.abs(v[:, 0]) ** 2 * np.arange(1, 4)) + np.sum(np.abs(w))


def eigenvalues_only(a):
    return np.sum(np.abs(sl.eig(a.reshape(3, 3), right=False)))


def norms(a):
    m = a.reshape(3, 3)
    return sl.norm(a) + sl.norm(m, "fro") + sl.norm(m, 1) + sl.norm(a, 3) + np.sum(sl.norm(m, axis=0))


CASES = [eigenvalues, eigenvectors, eigenvalues_only, norms]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_both_modes_against_differences(f):
    want = fd.gradient(f, A)[0]
    np.testing.assert_allclose(gradient(f, A)[0], want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacfwd(f, A), want, rtol=1e-6, atol=1e-8)


def test_values_match_scipy():
    m = A.reshape(3, 3)
    w = sl.eigvals(m)
    np.testing.assert_allclose(np.sort_complex(stand.eigvals(m)), np.sort_complex(w), rtol=1e-12)
    assert stand.eigvals(np.eye(2)).dtype == sl.eigvals(np.eye(2)).dtype == np.complex128
    ws, vs = stand.eig(m)
    np.testing.assert_allclose(m @ vs, vs * ws, atol=1e-12)
    for ord_ in (None, "fro", 1, np.inf, -np.inf, 2):
        assert stand.norm(m, ord_) == pytest.approx(sl.norm(m, ord_), rel=1e-13)


def test_check_finite_and_what_is_refused():
    with pytest.raises(ValueError):
        stand.norm(np.array([1.0, np.inf]))
    with pytest.raises(OverdubError, match="generalised"):
        gradient(lambda a: np.sum(np.abs(sl.eigvals(a.reshape(3, 3), np.eye(3)))), A)
