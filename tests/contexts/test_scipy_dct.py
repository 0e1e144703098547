"""scipy's discrete cosine and sine transforms (`contexts.rules.numpy.scipy_dct`): scipy.fft's and
scipy.fftpack's dct, idct, dst and idst, every type, norm, n= and axis, in both modes against central
differences. Refused before in both modes as C functions without rules (sweep M: python_speech_features'
mfcc, `dct(log energies, type=2, norm="ortho")`)."""

import itertools

import numpy as np
import pytest

from contexts import gradient, hessian, jacfwd
from tests.fd import gradient as fd_gradient

scipy_fft = pytest.importorskip("scipy.fft")
fftpack = pytest.importorskip("scipy.fftpack")

X = np.random.default_rng(0).normal(size=(3, 7))
W = np.random.default_rng(1).normal(size=(9, 9))

CASES = [(m, name, kind, norm, n, axis)
         for m, name in itertools.product(("fft", "fftpack"), ("dct", "idct", "dst", "idst"))
         for kind, norm, n, axis in itertools.product((1, 2, 3, 4), (None, "ortho", "forward"), (None, 5, 9), (-1, 0))
         if not (m == "fftpack" and norm == "forward") and (n is None or (kind + (axis == 0)) % 2 == 0)]


def _f(m, name, kind, norm, n, axis):
    fn = getattr(scipy_fft if m == "fft" else fftpack, name)

    def f(x):
        y = fn(x, type=kind, n=n, axis=axis, norm=norm)
        return np.sum(np.sin(y) * W[:y.shape[0], :y.shape[1]])
    return f


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_transform_against_differences(case, mode):
    f = _f(*case)
    try:
        f(X)
    except ValueError:  # (a length the type does not take: DCT-I of one point)
        pytest.skip("scipy refuses the transform itself")
    got = gradient(f, X)[0] if mode == "reverse" else jacfwd(f, X)
    np.testing.assert_allclose(np.reshape(got, X.shape), np.reshape(fd_gradient(f, X), X.shape), rtol=1e-6, atol=1e-8)


def mfcc_like(signal):
    """python_speech_features' mfcc in outline: frames, power spectrum, mel-like filter bank, log, DCT."""
    frames = signal.reshape(4, 8)
    power = np.abs(np.fft.rfft(frames, n=16)) ** 2 / 16.0
    bank = np.abs(np.sin(np.outer(np.arange(1.0, 7.0), np.arange(9.0)) * 0.3)) + 0.05
    energies = np.log(power @ bank.T + 1e-3)
    return np.sum(fftpack.dct(energies, type=2, axis=1, norm="ortho")[:, 1:4] * W[:4, :3])


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_mfcc_like_pipeline(mode):
    x = np.random.default_rng(3).normal(size=32)
    got = gradient(mfcc_like, x)[0] if mode == "reverse" else jacfwd(mfcc_like, x)
    np.testing.assert_allclose(got, np.ravel(fd_gradient(mfcc_like, x)), rtol=1e-6, atol=1e-8)


def test_second_derivative():
    def f(x):
        return np.sum(scipy_fft.dct(x, norm="ortho") ** 3)
    x = np.array([0.3, -0.7, 1.1, 0.4])
    H = hessian(f, x)
    want = np.array([fd_gradient(lambda v: gradient(f, v)[0][i], x) for i in range(4)]).reshape(4, 4)
    np.testing.assert_allclose(H, want, rtol=1e-5, atol=1e-7)
