"""scipy.linalg.solve and inv with `assume_a` ('pos', 'sym', 'her', triangular, diagonal, tridiagonal): the
kernel reads some entries of the matrix only (one triangle, mirrored for the symmetric ones), and the derivative
is that of the matrix it solves with, its cotangent on the entries read. The other entries hold garbage here,
so a dense gradient would be wrong and finite differences of the whole matrix tell. Both modes; these were
refused before (a structure code the rule did not take)."""

from __future__ import annotations

import numpy as np
import pytest

from contexts import gradient, hessian, jacfwd
from overdub.errors import OverdubError
from tests.fd import gradient as fd_gradient
from tests.fd import hessian as fd_hessian

sl = pytest.importorskip("scipy.linalg")

rng = np.random.default_rng(3)
_B = rng.standard_normal((4, 4))
_S = _B @ _B.T + 4 * np.eye(4)
UPPER = _S + np.tril(rng.standard_normal((4, 4)), -1) * 5  # (garbage in the triangle not read)
LOWER = _S + np.triu(rng.standard_normal((4, 4)), 1) * 5
TRIANGULAR = np.triu(_S) + np.tril(rng.standard_normal((4, 4)), -1) * 3
GENERAL = _S + 0.3 * _B
b = rng.standard_normal(4)
W = rng.standard_normal((4, 4))

STRUCTURES = [(None, False, GENERAL), ("gen", False, GENERAL), ("pos", False, UPPER), ("pos", True, LOWER),
              ("sym", False, UPPER), ("sym", True, LOWER), ("her", False, UPPER), ("diagonal", False, _S + _B),
              ("upper triangular", False, TRIANGULAR), ("lower triangular", False, TRIANGULAR.T),
              ("tridiagonal", False, _S + _B)]


def _ids(case):
    return f"{case[0]}-lower" if case[1] else str(case[0])


@pytest.mark.parametrize("mode", [gradient, jacfwd])
@pytest.mark.parametrize("case", STRUCTURES, ids=_ids)
def test_solve(case, mode):
    assume_a, lower, a0 = case
    f = lambda a: np.sum(sl.solve(a.reshape(4, 4), b * a[:4], assume_a=assume_a, lower=lower) * np.arange(1, 5.0))
    x = a0.ravel()
    got = np.asarray(mode(f, x), dtype=float).reshape(x.shape)
    np.testing.assert_allclose(got, fd_gradient(f, x)[0], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("mode", [gradient, jacfwd])
@pytest.mark.parametrize("case", [c for c in STRUCTURES if c[0] not in ("gen", "diagonal", "tridiagonal")], ids=_ids)
def test_inv(case, mode):
    assume_a, lower, a0 = case
    f = lambda a: np.sum(sl.inv(a.reshape(4, 4), assume_a=assume_a, lower=lower) * W)
    x = a0.ravel()
    got = np.asarray(mode(f, x), dtype=float).reshape(x.shape)
    np.testing.assert_allclose(got, fd_gradient(f, x)[0], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("mode", [gradient, jacfwd])
def test_stacked_and_transposed(mode):
    f = lambda a: np.sum(sl.solve(np.stack([a.reshape(4, 4), a.reshape(4, 4) + np.eye(4)]), np.ones(4),
                                  assume_a="pos") ** 2)
    g = lambda a: np.sum(sl.solve(a.reshape(4, 4), b, assume_a="sym", transposed=True) * np.arange(4.0))
    for h in (f, g):
        got = np.asarray(mode(h, UPPER.ravel()), dtype=float).reshape(16)
        np.testing.assert_allclose(got, fd_gradient(h, UPPER.ravel())[0], rtol=1e-6, atol=1e-7)


def test_hessian_of_a_positive_definite_solve():
    f = lambda a: np.sum(sl.solve(a.reshape(4, 4), b, assume_a="pos") * np.arange(1, 5.0))
    np.testing.assert_allclose(np.asarray(hessian(f, UPPER.ravel())), fd_hessian(f, UPPER.ravel()),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", [gradient, jacfwd])
def test_inverse_of_the_diagonal_is_refused(mode):
    # (scipy's kernel reads the off-diagonal entries, against its documentation: no derivative is given)
    with pytest.raises(OverdubError, match="diagonal"):
        mode(lambda a: np.sum(sl.inv(a.reshape(4, 4), assume_a="diagonal") * W), (_S + _B).ravel())
