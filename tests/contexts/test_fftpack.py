"""scipy.fftpack's complex transforms (fft, ifft, fft2, ifft2, fftn, ifftn) in both modes, against central
differences (session 67, sweep O: pycwt's wavelet transforms call them; they reach scipy's compiled pocketfft
directly, where no rule sits, and were refused). And scipy.fft's N-D transforms given one length as an int
(`fftn(x, s=6, axes=(1,))`: the rule crashed on it)."""

import numpy as np
import pytest
import scipy.fft as sfft
import scipy.fftpack as fftpack

from contexts import gradient, jacfwd
from tests import fd

pytestmark = pytest.mark.one_mode

X = np.linspace(-1.0, 1.3, 8) ** 2 + 0.1


def padded_fft(x):
    return float(np.sum(np.abs(fftpack.fft(x, 12)) ** 2 * np.arange(12.0)) + np.real(fftpack.ifft(x * x)).sum())


def fft_along_rows(x):
    return float(np.sum(np.real(fftpack.fft(np.outer(x, x[:3]), axis=0) * (1.0 - 0.5j)) ** 2))


def fftn_shaped(x):
    return float(np.sum(np.abs(fftpack.fftn(x.reshape(2, 4), shape=(3, 5))) ** 2))


def ifft2_imaginary(x):
    return float(np.sum(np.imag(fftpack.ifft2(x.reshape(2, 4) * (1 + 0.5j))) * np.arange(8.0).reshape(2, 4)))


def scipy_fftn_one_length(x):
    return float(np.sum(np.abs(sfft.fftn(x.reshape(2, 4), s=6, axes=(1,))) ** 2 * np.arange(12.0).reshape(2, 6)))


@pytest.mark.parametrize("f", [padded_fft, fft_along_rows, fftn_shaped, ifft2_imaginary, scipy_fftn_one_length])
def test_transforms_in_both_modes(f):
    want = fd.gradient(f, X)[0]
    assert np.abs(want).max() > 0.1
    np.testing.assert_allclose(gradient(f, X)[0], want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacfwd(f, X), want, rtol=1e-6, atol=1e-8)
