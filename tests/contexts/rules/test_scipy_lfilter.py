"""scipy.signal.lfilter's kernel `_sigtools._linear_filter`: the rule in b, a, x and zi (adjoint and frule)
against central differences, for random stable filters, len(b) <, = and > len(a), a0 != 1, 1-D and 2-D
signals along either axis, with and without an initial state (then the final state zf too); then lfilter
through the engines in reverse, forward and hessian."""

import numpy as np
import pytest

signal = pytest.importorskip("scipy.signal")
from scipy.signal import _sigtools  # noqa: E402

from contexts import gradient, hessian, jacfwd, jacobian  # noqa: E402
from tests import fd  # noqa: E402
from tests.fd import check_rule  # noqa: E402
from tests.modes import ARRAY_MODES, assert_array_gradient  # noqa: E402

RNG = np.random.default_rng(5)


def _stable(order):
    """a with a0 != 1 and its poles inside the unit circle."""
    poles = 0.8 * RNG.uniform(-1, 1, size=order)
    return 1.7 * np.poly(poles)


FILTERS = [(RNG.normal(size=3), _stable(2)), (RNG.normal(size=2), _stable(3)), (RNG.normal(size=4), _stable(1)),
           (RNG.normal(size=1), _stable(2))]


@pytest.mark.parametrize("b, a", FILTERS)
@pytest.mark.parametrize("n", [1, 2, 9])
def test_rule_without_state(b, a, n):
    x = RNG.normal(size=n)
    check_rule(_sigtools._linear_filter, b, a, x, -1, diff=(0, 1, 2))


@pytest.mark.parametrize("b, a", FILTERS)
@pytest.mark.parametrize("n", [1, 2, 9])
def test_rule_with_state(b, a, n):
    k = max(len(a), len(b))
    x, zi = RNG.normal(size=n), RNG.normal(size=k - 1)
    check_rule(_sigtools._linear_filter, b, a, x, -1, zi, diff=(0, 1, 2, 4))


@pytest.mark.parametrize("b, a", FILTERS[:2])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_rule_2d(b, a, axis):
    k = max(len(a), len(b))
    x = RNG.normal(size=(5, 4))
    shape = list(x.shape)
    shape[axis] = k - 1
    check_rule(_sigtools._linear_filter, b, a, x, axis, diff=(0, 1, 2))
    check_rule(_sigtools._linear_filter, b, a, x, axis, RNG.normal(size=shape), diff=(0, 1, 2, 4))


def test_rule_state_with_a_singleton_dimension():
    """zi of shape (1, k-1) for a (3, n) signal: the kernel expands it, its cotangent sums back."""
    b, a = FILTERS[0]
    check_rule(_sigtools._linear_filter, b, a, RNG.normal(size=(3, 6)), 1, RNG.normal(size=(1, 2)),
               diff=(0, 1, 2, 4))


def test_complex_is_refused():
    from contexts.rules.numpy._util import UnsupportedCase
    b, a = FILTERS[0]
    with pytest.raises(UnsupportedCase, match="complex"):
        jacfwd(lambda x: np.abs(signal.lfilter(b, a, x * (1 + 1j))).sum(), np.ones(3))


# -- through lfilter ----------------------------------------------------------------------------------------

B, A = FILTERS[0]
X = RNG.normal(size=7)
ZI = RNG.normal(size=2)


def _loss(p):
    """Every argument of lfilter depends on p: b, a (a stable perturbation), x and zi."""
    b = B * (1 + 0.1 * p[0])
    a = A + np.array([0.0, 0.05 * p[1], -0.03 * p[1] * p[0]])
    x = X * p[2] + np.sin(p)[:1]
    y, zf = signal.lfilter(b, a, x, zi=ZI * p[3])
    return np.sum(y ** 2) + np.sum(zf * np.array([1.0, -2.0]))


P = np.array([0.3, -0.4, 1.1, 0.7])


def test_lfilter_gradient():
    np.testing.assert_allclose(gradient(_loss, P)[0], fd.gradient(_loss, P)[0], rtol=1e-7, atol=1e-9)


def test_lfilter_forward():
    np.testing.assert_allclose(jacfwd(_loss, P), fd.gradient(_loss, P)[0], rtol=1e-7, atol=1e-9)


def test_lfilter_hessian():
    """Forward over reverse runs the C kernel on dual arrays, which it cannot take (as for scipy's other C
    kernels, e.g. solve_banded's LAPACK): refused, never a wrong value; the default hessian then takes
    forward over forward, right."""
    from overdub.errors import OverdubError
    with pytest.raises(OverdubError):
        hessian(_loss, P, inner="reverse")
    np.testing.assert_allclose(hessian(_loss, P), fd.hessian(_loss, P, matrix=True), rtol=1e-4, atol=1e-5)


def test_lfilter_2d_axis0_jacobian_both_modes():
    def f(x):
        return signal.lfilter(B, A, x.reshape(4, 2), axis=0)
    x = RNG.normal(size=8)
    want = fd.jacobian(f, x)
    np.testing.assert_allclose(jacobian(f, x), want, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(jacfwd(f, x), want, rtol=1e-7, atol=1e-9)


# -- sosfilt: the Cython `_sosfilt(sos, x, zi)` filtering x and zi in place (refused by name before) -----

SOS = signal.butter(4, 0.2, output="sos")
SIG = np.sin(np.arange(20) * 0.3) + 0.1 * np.arange(20)
WSIG = np.cos(np.arange(20) * 0.7)
SOS_ZI = signal.sosfilt_zi(SOS)


def _sos_states(v):
    y, zf = signal.sosfilt(SOS, v, zi=SOS_ZI * v[0])
    return np.sum(y * WSIG) + 1.3 * np.sum(zf)


SOS_CASES = {
    "signal": lambda v: np.sum(signal.sosfilt(SOS, v) * WSIG),
    "along axis 0": lambda v: np.sum(signal.sosfilt(SOS, v.reshape(10, 2), axis=0) ** 2),
    "initial and final states": _sos_states,
    "sosfiltfilt": lambda v: np.sum(signal.sosfiltfilt(SOS, v) * WSIG),
}


@pytest.mark.parametrize("mode", ARRAY_MODES)
@pytest.mark.parametrize("case", list(SOS_CASES))
def test_sosfilt(case, mode):
    assert_array_gradient(mode, SOS_CASES[case], SIG, rtol=1e-6, atol=1e-8)


def test_sosfilt_second_derivatives_right_or_refused_and_coefficients_answered():
    from overdub.errors import OverdubError
    from tests.fd import gradient as fd_gradient, hessian as fd_hessian

    f = lambda v: np.sum(signal.sosfilt(SOS, v) ** 2)  # noqa: E731
    try:  # second derivatives: the kernel's duals (refused), or by forward over forward
        h = hessian(f, SIG[:6])
    except OverdubError:
        h = None
    if h is not None:
        np.testing.assert_allclose(h, fd_hessian(f, SIG[:6]), rtol=1e-5, atol=1e-6)
    free = np.concatenate([SOS[:, :3], SOS[:, 4:]], axis=1).ravel()

    def by_coefficients(s):
        s = s.reshape(2, 5)
        return np.sum(signal.sosfilt(np.concatenate([s[:, :3], np.ones((2, 1)), s[:, 3:]], axis=1), SIG) * WSIG)
    want = fd_gradient(by_coefficients, free)[0]  # (the coefficients: sosfilt's own rule in forward mode, which
    np.testing.assert_allclose(gradient(by_coefficients, free)[0], want, rtol=1e-6, atol=1e-9)  # checks
    np.testing.assert_allclose(jacfwd(by_coefficients, free), want, rtol=1e-6, atol=1e-9)  # reverse mode's test)
