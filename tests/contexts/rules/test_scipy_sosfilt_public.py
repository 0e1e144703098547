"""`scipy.signal.sosfilt` differentiated in the filter's coefficients (a filter designed from a differentiated
cutoff: obspy's lowpass/bandpass in their frequencies, sweep W). Its Python copies the signal into a fresh
array the kernel writes in place, and checks `sos[:, 3] == 1`: forward mode refused both (no tangent for the
copy; a constant 1's exact-zero rate judged a special case), and reverse mode, whose check of that test is
forward mode's, refused too. Forward mode has a rule for sosfilt itself now. Against central differences, on
every axis, with and without initial states."""

import numpy as np
import pytest
from scipy import signal

from contexts import derivative, gradient, jacobian, jvp
from tests.fd import derivative as fd_derivative, directional

X = np.sin(np.arange(60) * 0.3) + 0.1 * np.cos(np.arange(60) * 1.7)


def lowpass(fc):
    return signal.sosfilt(signal.butter(3, fc, output="sos"), X)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_cutoff_frequency(mode):
    want = fd_derivative(lowpass, 0.2)
    got = derivative(lowpass, 0.2) if mode == "forward" else jacobian(lowpass, 0.2, mode="reverse")
    np.testing.assert_allclose(np.ravel(got), np.ravel(want), rtol=1e-6, atol=1e-9)


def test_scalar_gradient_of_a_bandpass():
    f = lambda lo: float(np.sum(signal.sosfilt(signal.butter(2, [lo, 0.4], btype="band", output="sos"), X) ** 2))  # noqa: E731
    (g,) = gradient(f, 0.1)
    np.testing.assert_allclose(g, fd_derivative(f, 0.1), rtol=1e-6)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_every_axis_with_states(axis):
    rng = np.random.default_rng(1)
    sos = signal.butter(2, 0.3, output="sos")
    x = rng.normal(size=(5, 7)) if axis != 0 else rng.normal(size=(9, 4))
    shape = list(x.shape)
    shape[axis] = 2
    zi = rng.normal(size=[sos.shape[0]] + shape)

    def f(s, x, zi):
        y, zf = signal.sosfilt(s, x, axis=axis, zi=zi)
        return np.concatenate([np.ravel(y), np.ravel(zf)])
    ts, tx, tz = rng.normal(size=sos.shape), rng.normal(size=x.shape), rng.normal(size=zi.shape)
    ts[:, 3] = 0.0  # (a0 stays 1: scipy refuses another)
    _, rate = jvp(f, (sos, x, zi), (ts, tx, tz))
    np.testing.assert_allclose(rate, directional(f, (sos, x, zi), (ts, tx, tz)), rtol=1e-6, atol=1e-8)


def test_signal_tangent_alone():
    sos = signal.butter(2, 0.3, output="sos")
    t = np.cos(np.arange(60.0))
    _, rate = jvp(lambda x: signal.sosfilt(sos, x), (X,), (t,))
    np.testing.assert_allclose(rate, signal.sosfilt(sos, t), rtol=1e-10, atol=1e-12)  # (linear in x)
