"""scipy.linalg.lstsq's default driver, LAPACK's `?gelsd`, and what calls it (scipy.signal's savgol_filter
and detrend): every mode against central differences. All were refused ("no rule for dgelsd")."""

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.signal as sg

from contexts import gradient, jvp
from overdub.errors import OverdubError
from tests import fd
from tests.modes import ARRAY_MODES, assert_array_gradient

A = np.array([[1.0, 0.2], [0.3, 2.0], [-0.5, 0.7], [1.1, -0.4]])
B = np.array([1.0, -0.5, 0.25, 2.0])


def tall(p):
    return np.sum(sla.lstsq(p[:8].reshape(4, 2), p[8:])[0] * [1.0, -2.0])


def wide(p):
    return np.sum(sla.lstsq(p[:8].reshape(2, 4), p[8:10])[0] * [1.0, -2.0, 0.5, 3.0])


def residuals(p):
    x, res, rank, s = sla.lstsq(p[:8].reshape(4, 2), p[8:])
    return res * 2.0 + np.sum(x) + np.sum(s ** 2)


P = np.concatenate([A.ravel(), B])


@pytest.mark.parametrize("mode", ARRAY_MODES)
@pytest.mark.parametrize("f", [tall, wide], ids=["tall", "wide (minimum norm)"])
def test_solutions(f, mode):
    assert_array_gradient(mode, f, P if f is tall else P[:10])


@pytest.mark.parametrize("mode", ARRAY_MODES)
def test_residuals(mode):
    # (forward mode: by scipy.linalg.lstsq's own rule; its residues were NaN, from ?gelsd's rows past n,
    # found on pwlf's fits)
    assert_array_gradient(mode, residuals, P)


@pytest.mark.parametrize("driver", ["gelsd", "gelss", "gelsy"])
def test_residuals_of_several_right_hand_sides_forward(driver):
    def f(p):
        a, b = p[:8].reshape(4, 2), p[8:].reshape(4, 1)
        x, res, _, _ = sla.lstsq(a, np.hstack([b, b ** 2]), lapack_driver=driver)
        return np.sum(x * [[1.0, 0.5], [-2.0, 0.25]]) + 3.0 * np.sum(res)
    want = fd.gradient(f, P)[0]
    np.testing.assert_allclose(jvp(f, (P,), (np.eye(P.size)[3],))[1], want[3], rtol=1e-6, atol=1e-9)
    from contexts import jacfwd
    np.testing.assert_allclose(jacfwd(f, P), want, rtol=1e-6, atol=1e-9)


def test_the_residual_rows_have_no_tangent(monkeypatch):
    """Forward mode on ?gelsd itself: the rows past n hold the residual in LAPACK's own basis: NaN, never
    a number. Their sum of squares, the residual's, is the same in any basis: `jvp` fills the NaN from reverse
    mode's gradient (session 72), which is its central difference."""
    from scipy.linalg import lapack

    import contexts.forward.api as forward_api

    def f(p):
        a, b = p[:8].reshape(4, 2), p[8:].reshape(4, 1)
        work, iwork, _ = lapack.dgelsd_lwork(4, 2, 1, -1.0)
        x = lapack.dgelsd(a, b, int(work), iwork)[0]
        return np.sum(x[2:] ** 2)
    v = np.ones_like(P)
    assert jvp(f, (P,), (v,))[1] == pytest.approx(fd.gradient(f, P, h=1e-6, order=2)[0] @ v, rel=1e-6)
    monkeypatch.setattr(forward_api, "NAN_BY_REVERSE", [])  # (forward mode's own answer)
    assert np.isnan(jvp(f, (P,), (v,))[1])


def test_the_residual_rows_read_one_by_one_refused():
    from scipy.linalg import lapack

    def f(p):
        a, b = p[:8].reshape(4, 2), p[8:].reshape(4, 1)
        work, iwork, _ = lapack.dgelsd_lwork(4, 2, 1, -1.0)
        x = lapack.dgelsd(a, b, int(work), iwork)[0]
        return float(x[2, 0] + x[3, 0] * 2.0)
    with pytest.raises(OverdubError):
        gradient(f, P)


SIGNAL = np.linspace(0.0, 2.0, 15) ** 1.5 + 0.1 * np.sin(np.arange(15.0))
W = np.cos(np.arange(15.0) * 0.4)


@pytest.mark.parametrize("mode", ARRAY_MODES)
@pytest.mark.parametrize("f", [lambda a: np.sum(sg.savgol_filter(a, 5, 2) * W),
                               lambda a: np.sum(sg.savgol_filter(a, 7, 3, deriv=1, mode="nearest") * W),
                               lambda a: np.sum(sg.detrend(a) ** 2)], ids=["savgol", "savgol deriv", "detrend"])
def test_signal_functions(f, mode):
    assert_array_gradient(mode, f, SIGNAL)
