"""scipy.signal's upfirdn kernel (`_upfirdn_apply._apply`: upfirdn, resample_poly, decimate's FIR path),
which writes its output in place: in the signal, the filter and cval, every extension mode, against
central differences in every mode. All were refused by name before ("no rule for _apply")."""

import numpy as np
import pytest

signal = pytest.importorskip("scipy.signal")

from contexts import gradient, hessian  # noqa: E402
from tests.modes import ARRAY_MODES, assert_array_gradient  # noqa: E402

SIG = np.sin(np.arange(23) * 0.3) + 0.05 * np.arange(23)
H = np.array([0.5, 1.0, -0.3, 0.25, 0.1])
MODES = ["constant", "symmetric", "reflect", "edge", "wrap", "smooth", "antisymmetric", "antireflect", "line"]


def _weights(n):
    return np.cos(np.arange(n) * 0.7)


@pytest.mark.parametrize("mode", ARRAY_MODES)
@pytest.mark.parametrize("extension", MODES)
@pytest.mark.parametrize("up,down", [(2, 3), (3, 1), (1, 2)])
def test_upfirdn_in_the_signal(up, down, extension, mode):
    n = len(signal.upfirdn(H, SIG, up, down, mode=extension, cval=0.4))
    assert_array_gradient(mode, lambda v: np.sum(signal.upfirdn(H, v, up, down, mode=extension, cval=0.4)
                                                 * _weights(n)), SIG, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mode", ARRAY_MODES)
def test_upfirdn_in_the_filter_and_cval(mode):
    n = len(signal.upfirdn(H, SIG, 2, 3))
    assert_array_gradient(mode, lambda h: np.sum(signal.upfirdn(h, SIG, 2, 3) ** 2 * _weights(n)), H,
                          rtol=1e-6, atol=1e-8)
    assert_array_gradient(mode, lambda c: np.sum(signal.upfirdn(H, SIG, 2, 3, mode="constant", cval=c[0])
                                                 * _weights(n)), np.array([0.4]), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mode", ARRAY_MODES)
@pytest.mark.parametrize("name,f", [
    ("resample_poly", lambda v: np.sum(signal.resample_poly(v, 3, 2) * _weights(35))),
    ("resample_poly 2-D", lambda v: np.sum(signal.resample_poly(v.reshape(1, 23), 2, 3, axis=1,
                                                                padtype="mean") ** 2)),
    ("decimate fir", lambda v: np.sum(signal.decimate(v, 2, ftype="fir") * _weights(12))),
])
def test_through_scipy(name, f, mode):
    assert_array_gradient(mode, f, SIG, rtol=1e-6, atol=1e-8)


def test_second_derivatives():
    # (refused before: scipy's Python code fills an np.zeros the inner derivative call made, which now carries
    # the outer call's tag too)
    from tests import fd
    f = lambda v: np.sum(signal.upfirdn(H, v, 2, 3) ** 2)  # noqa: E731
    np.testing.assert_allclose(hessian(f, SIG[:8].copy()), fd.hessian(f, SIG[:8].copy()), atol=1e-6)
    assert gradient(f, SIG[:8])[0].shape == (8,)
