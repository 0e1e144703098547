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


def test_second_order():
    """The kernels write into arrays scipy makes with np.zeros, which carry the outer derivative call's tag
    too (refused before: a second derivative's duals could not be written there)."""
    from tests import fd
    f = lambda a: CASES["gaussian_filter1d"](a, "reflect") ** 2  # noqa: E731
    expected = fd.hessian(f, X)
    np.testing.assert_allclose(hessian(f, X), expected, atol=1e-5)
    np.testing.assert_allclose(hessian(f, X, inner="forward"), expected, atol=1e-5)


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


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_complex_images_refused():
    with pytest.raises(OverdubError):
        gradient(lambda a: np.abs(ndi.gaussian_filter1d(a + 1j * a, 1.0)).sum(), X)


# -- n-dimensional weights (`_nd_image.correlate`: ndimage.correlate, convolve; refused before) -----------

IMG = (np.linspace(0.1, 2.0, 30) ** 1.3 + 0.2 * np.sin(np.arange(30.0))).reshape(5, 6)
WIMG = np.cos(np.arange(30.0) * 0.7).reshape(5, 6)
KERNELS = {
    "3x3": (np.array([[0.2, -1.0, 0.3], [0.5, 1.5, -0.4], [0.1, 0.0, 0.7]]), 0),
    "2x4 shifted": (np.array([[1.0, -0.5, 0.25, 0.3], [0.6, 0.2, -0.8, 0.1]]), (0, -1)),
    "3x1 shifted": (np.array([[0.5], [1.0], [-0.3]]), (1, 0)),
}


@pytest.mark.parametrize("mode", ARRAY_MODES)
@pytest.mark.parametrize("boundary", MODES + ["grid-mirror"])
@pytest.mark.parametrize("kernel", list(KERNELS))
def test_nd_correlate_in_the_image(kernel, boundary, mode):
    w, origin = KERNELS[kernel]
    assert_array_gradient(mode, lambda a: np.sum(
        WIMG * ndi.correlate(a, w, mode=boundary, cval=0.3, origin=origin) ** 2), IMG, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mode", ARRAY_MODES)
@pytest.mark.parametrize("boundary", ["constant", "reflect", "wrap"])
def test_nd_correlate_in_the_weights_and_cval(boundary, mode):
    w, origin = KERNELS["2x4 shifted"]
    assert_array_gradient(mode, lambda k: np.sum(
        WIMG * ndi.convolve(IMG, k, mode=boundary, cval=0.3, origin=origin) ** 2), w, rtol=1e-6, atol=1e-8)
    assert_array_gradient(mode, lambda c: np.sum(
        WIMG * ndi.correlate(IMG, w, mode=boundary, cval=c[0]) ** 2), np.array([0.3]), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mode", ARRAY_MODES)
def test_nd_correlate_three_dimensions_and_into_the_input(mode):
    vol = np.sin(np.arange(60.0) * 0.37).reshape(3, 4, 5)
    k = np.cos(np.arange(12.0)).reshape(2, 3, 2)
    assert_array_gradient(mode, lambda a: np.sum(np.tanh(ndi.correlate(a, k, mode="mirror"))), vol, rtol=1e-6,
                          atol=1e-8)

    def into_itself(a):
        b = a * 1.0
        ndi.correlate(b, KERNELS["3x3"][0], output=b, mode="nearest")  # (scipy filters via a temporary)
        return np.sum(b * WIMG)
    assert_array_gradient(mode, into_itself, IMG, rtol=1e-6, atol=1e-8)


K3 = np.array([[0.2, -1.0, 0.3], [0.5, 1.5, -0.4], [0.1, 0.0, 0.7]])


def _into_itself_1d(a):
    b = a * 1.0
    ndi.correlate1d(b, K3[0], output=b, mode="nearest")
    return np.sum(b * WIMG)


def _into_itself_nd(a):
    b = a * 1.0
    ndi.correlate(b, K3, output=b, mode="nearest")
    return np.sum(b * WIMG)


def _into_a_keyword_output(a):
    b = a * 1.0
    c = a * 0.5
    ndi.correlate1d(b, K3[0], output=c, mode="nearest")
    return np.sum(c * WIMG) + np.sum(b * b)


@pytest.mark.parametrize("mode", ARRAY_MODES)
@pytest.mark.parametrize("f", [_into_itself_1d, _into_itself_nd, _into_a_keyword_output])
def test_output_passed_by_keyword(f, mode):
    # the tangent twin made two duals of one array passed by position and as `output=`: the kernel's write
    # through the keyword's was lost (jvp gave the tangent before the filter, silently)
    assert_array_gradient(mode, f, IMG, rtol=1e-6, atol=1e-8)
