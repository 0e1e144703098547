"""scipy.linalg.solve_banded / solveh_banded (over LAPACK ?gtsv, ?gbsv, ?ptsv, ?pbsv): the rules in
every band (ab) and the right-hand side against central differences, reverse and forward, and through
the engines with the overwrite flags CubicSpline passes."""

import numpy as np
import pytest

sl = pytest.importorskip("scipy.linalg")

from contexts import gradient, jacfwd, jvp  # noqa: E402
from contexts.rules.numpy._util import UnsupportedCase  # noqa: E402
from contexts.rules.registry import registry  # noqa: E402
from tests import fd  # noqa: E402
from tests.fd import check_rule  # noqa: E402

RNG = np.random.default_rng(7)
N = 6


def _band(lower, upper):
    ab = RNG.normal(size=(lower + upper + 1, N))
    ab[upper] = 4.0 + np.abs(ab[upper]) + lower + upper  # diagonally dominant
    return ab


def _sym_band(rows, lower):
    ab = 0.3 * RNG.normal(size=(rows, N))
    ab[0 if lower else rows - 1] = 3.0 + rows
    return ab


@pytest.mark.parametrize("l_and_u", [(1, 1), (2, 1), (0, 2), (1, 0), (2, 2)])
@pytest.mark.parametrize("nrhs", [None, 3])
def test_solve_banded_rule(l_and_u, nrhs):
    ab = _band(*l_and_u)
    b = RNG.normal(size=N if nrhs is None else (N, nrhs))
    check_rule(sl.solve_banded, l_and_u, ab, b, diff=(1, 2))


@pytest.mark.parametrize("rows", [2, 3])
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("nrhs", [None, 2])
def test_solveh_banded_rule(rows, lower, nrhs):
    ab = _sym_band(rows, lower)
    b = RNG.normal(size=N if nrhs is None else (N, nrhs))
    check_rule(sl.solveh_banded, ab, b, diff=(0, 1), lower=lower)


def test_each_band_entry_against_central_differences():
    """Every entry of ab, one at a time: the unread corners of the band get exactly zero."""
    ab, b = _band(1, 1), RNG.normal(size=N)
    w = RNG.normal(size=N)

    def loss(ab_, b_):
        return float(w @ sl.solve_banded((1, 1), ab_, b_))
    got_ab, got_b = gradient(loss, ab, b)
    want_ab, want_b = fd.gradient(loss, ab, b)
    np.testing.assert_allclose(got_ab, want_ab, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(got_b, want_b, rtol=1e-7, atol=1e-10)
    assert got_ab[0, 0] == 0.0 and got_ab[2, -1] == 0.0


def _tridiagonal_system(theta):
    """A function that builds the band from its input and solves in place, as CubicSpline does."""
    ab = np.zeros((3, N))
    ab[0, 1:] = theta[:N - 1] * 0.5
    ab[1] = 4.0 + theta
    ab[2, :-1] = np.sin(theta[1:])
    rhs = np.cos(theta) + theta ** 2
    x = sl.solve_banded((1, 1), ab, rhs.copy(), overwrite_ab=True, overwrite_b=True, check_finite=False)
    ab_h = np.zeros((2, N))
    ab_h[0, 1:] = 0.2 * theta[1:]
    ab_h[1] = 3.0 + theta ** 2
    return x * sl.solveh_banded(ab_h, rhs, overwrite_ab=True)


@pytest.mark.parametrize("mode", ["reverse", "forward", "jvp"])
def test_through_the_engines(mode):
    theta = RNG.uniform(0.1, 0.9, size=N)
    want = fd.jacobian(_tridiagonal_system, theta)
    if mode == "reverse":
        got = np.stack([gradient(lambda t, k=k: _tridiagonal_system(t)[k], theta)[0] for k in range(N)])
    elif mode == "forward":
        got = jacfwd(_tridiagonal_system, theta)
    else:
        t = RNG.normal(size=N)
        _, got = jvp(_tridiagonal_system, (theta,), (t,))
        want = want @ t
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)


def test_batches_and_complex_refused():
    ab, b = _band(1, 1), RNG.normal(size=N)
    rule = registry.get(sl.solve_banded)
    with pytest.raises(UnsupportedCase, match="complex"):
        rule.adjoint(b, b, (1, 1), ab + 0j, b)
    with pytest.raises(UnsupportedCase, match="batches"):
        rule.frule((None, np.stack([ab, ab]), None), (1, 1), np.stack([ab, ab]), np.stack([b, b])[..., None])


# -- LAPACK ?gbsv, called directly (make_interp_spline does) ---------------------------------------------------

def _gbsv_band(n=6, kl=2, ku=1, seed=3):
    rng = np.random.default_rng(seed)
    ab = np.zeros((2 * kl + ku + 1, n))
    ab[kl:] = rng.normal(size=(kl + ku + 1, n))
    ab[kl + ku] += 6.0  # the diagonal: well conditioned
    return ab, kl, ku


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("wrt", ["ab", "b"])
def test_gbsv_against_central_differences(mode, wrt):
    from scipy.linalg import lapack
    ab, kl, ku = _gbsv_band()
    b = np.cos(np.arange(12.0)).reshape(6, 2)
    w = np.arange(12.0).reshape(6, 2)

    def f(v):
        a_, b_ = (v, b) if wrt == "ab" else (ab, v)
        return np.sum(lapack.dgbsv(kl, ku, a_, b_)[2] * w)
    x = ab if wrt == "ab" else b
    want = fd.gradient(f, x)[0]
    if wrt == "ab":
        want[:kl] = 0.0  # LAPACK's room for the factors: never read
    got = gradient(f, x)[0] if mode == "reverse" else jacfwd(f, x)
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)


def test_gbsv_does_not_overwrite_and_refuses_factors():
    from scipy.linalg import lapack
    ab, kl, ku = _gbsv_band()
    b = np.ones((6, 1))
    ab0, b0 = ab.copy(), b.copy()

    def f(v):
        return np.sum(lapack.dgbsv(kl, ku, ab, v, overwrite_ab=True, overwrite_b=True)[2])
    gradient(f, b)
    np.testing.assert_array_equal(ab, ab0)
    np.testing.assert_array_equal(b, b0)
    with pytest.raises(UnsupportedCase, match="factors"):
        gradient(lambda v: np.sum(lapack.dgbsv(kl, ku, v, b)[0]), ab)
