"""scipy.ndimage's line filters (`_nd_image.correlate1d`, `uniform_filter1d`): every boundary mode, in
the image, the weights and cval, through gaussian_filter (which filters its later axes in place) and the
derivative filters; every mode against central differences. All were refused ("no rule for correlate1d")."""

import numpy as np
import pytest
import scipy.ndimage as ndi

from contexts import gradient, hessian, jacfwd
from overdub.errors import OverdubError
from tests.modes import ARRAY_MODES, assert_array_gradient

X = np.linspace(0.1, 2.0, 12) ** 1.3 + 0.2 * np.sin(np.arange(12.0))
W = np.cos(np.arange(12) * 0.7)
MODES = ["reflect", "constant", "nearest", "mirror", "wrap", "grid-wrap", "grid-constant"]

CASES = {
    "uniform_filter1d": lambda a, m: np.sum(ndi.uniform_filter1d(a, 4, mode=m, cval=0.3, origin=1) * W),
    "convolve1d": lambda a, m: np.sum(ndi.convolve1d(a, [1.0, -2.0, 0.5, 0.25], mode=m, cval=-0.4) * W),
    "gaussian_filter1d": lambda a, m: np.sum(ndi.gaussian_filter1d(a, 1.3, mode=m, cval=0.7) * W),
    "gaussian derivative": lambda a, m: np.sum(ndi.gaussian_filter1d(a, 1.1, order=1, mode=m) * W),
    "gaussian_filter 2-D": lambda a, m: np.sum(ndi.gaussian_filter(a.reshape(3, 4), 0.9, mode=m) * W.reshape(3, 4)),
    "uniform_filter 2-D": lambda a, m: np.sum(ndi.uniform_filter(a.reshape(3, 4), 2, mode=m) ** 2),
    "sobel": lambda a, m: np.sum(ndi.sobel(a.reshape(4, 3), axis=0, mode=m) * W.reshape(4, 3)),
    "gaussian_laplace": lambda a, m: np.sum(ndi.gaussian_laplace(a.reshape(3, 4), 0.8, mode=m) ** 2),
}


@pytest.mark.parametrize("mode", ARRAY_MODES)
@pytest.mark.parametrize("boundary", MODES)
@pytest.mark.parametrize("case", list(CASES))
def test_in_the_image(case, boundary, mode):
    assert_array_gradient(mode, lambda a: CASES[case](a, boundary), X)


def weights_and_cval(p, boundary="constant"):
    return np.sum(ndi.correlate1d(X, p[:3] * p[:3], mode=boundary, cval=p[3]) * W)


@pytest.mark.parametrize("mode", ARRAY_MODES)
@pytest.mark.parametrize("boundary", ["constant", "reflect", "wrap"])
def test_in_the_weights_and_cval(boundary, mode):
    assert_array_gradient(mode, lambda p: weights_and_cval(p, boundary), np.array([0.5, -1.2, 0.8, 0.35]))


def into_a_given_output(a):
    out = np.zeros_like(a)
    ndi.gaussian_filter1d(a, 1.0, output=out)
    ndi.uniform_filter1d(out, 3, output=out)  # (in place: output is the input)
    return np.sum(out * W) + np.sum(a * out)


@pytest.mark.parametrize("mode", ARRAY_MODES)
def test_into_a_given_output_and_in_place(mode):
    assert_array_gradient(mode, into_a_given_output, X)


def test_second_order_refused_loudly():
    """The kernels write into arrays scipy makes with np.zeros: a second derivative's duals cannot be written
    there (refused by name in both orders), never a number."""
    with pytest.raises(OverdubError):
        hessian(lambda a: CASES["gaussian_filter1d"](a, "reflect") ** 2, X)


def test_a_long_axis_in_blocks():
    x = np.linspace(0.0, 3.0, 1100) ** 2
    w = np.sin(np.arange(1100) * 0.01)
    f = lambda a: np.sum(ndi.gaussian_filter1d(a, 3.0, mode="mirror") * w)
    g = gradient(f, x)[0]
    np.testing.assert_allclose(g, jacfwd(f, x), rtol=1e-9, atol=1e-12)
    probe = np.zeros(1100)
    probe[[0, 511, 512, 1099]] = 1.0  # (one column from each block, both ends)
    for j in np.flatnonzero(probe):
        e = np.zeros(1100)
        e[j] = 1e-6
        assert g[j] == pytest.approx((f(x + e) - f(x - e)) / 2e-6, rel=1e-5, abs=1e-9)


def test_complex_images_refused():
    with pytest.raises(OverdubError):
        gradient(lambda a: np.abs(ndi.gaussian_filter1d(a + 1j * a, 1.0)).sum(), X)
