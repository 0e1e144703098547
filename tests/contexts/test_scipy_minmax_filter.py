"""scipy.ndimage's 1-D minimum/maximum filter kernel (maximum_filter1d, minimum_filter1d, and
maximum_filter/minimum_filter with a size, one 1-D pass per axis) differentiated in every engine through its
numpy stand-in (`rules.numpy.scipy_minmax`): the stand-in gives scipy's kernel's values for every mode,
origin and axis, and both modes agree with central differences (refused before: no rule for
`_nd_image.min_or_max_filter1d`)."""

from __future__ import annotations

import numpy as np
import pytest

from contexts import gradient, jacfwd
from overdub.errors import OverdubError
from tests.fd import gradient as fd_gradient

nd = pytest.importorskip("scipy.ndimage")
support = pytest.importorskip("scipy.ndimage._ni_support")
stand = pytest.importorskip("contexts.rules.numpy.scipy_minmax")

rng = np.random.default_rng(3)
X = rng.standard_normal(11)
M = rng.standard_normal((4, 6))
W = rng.standard_normal(11)
WM = rng.standard_normal((4, 6))
MODES = ["nearest", "wrap", "reflect", "mirror", "constant", "grid-wrap", "grid-constant", "grid-mirror"]


@pytest.mark.parametrize("minimum", [0, 1])
@pytest.mark.parametrize("mode", MODES)
def test_stand_in_gives_the_kernels_values(mode, minimum):
    scipy_filter = nd.minimum_filter1d if minimum else nd.maximum_filter1d
    for x, axis in ((X, 0), (M, 0), (M, 1)):
        for size in range(1, min(x.shape[axis], 6) + 1):
            for origin in range(-(size // 2), size - size // 2):
                want = scipy_filter(x, size, axis=axis, mode=mode, cval=0.3, origin=origin)
                got = np.empty_like(x)
                stand.min_or_max_filter1d(x, size, axis, got, support._extend_mode_to_code(mode), 0.3, origin,
                                          minimum)
                np.testing.assert_array_equal(got, want)


CASES = {
    "maximum_filter1d": lambda x: np.sum(nd.maximum_filter1d(x, 3) * W),
    "minimum_filter1d_wrap_origin": lambda x: np.sum(nd.minimum_filter1d(x, 4, mode="wrap", origin=1) * W),
    "maximum_filter1d_constant": lambda x: np.sum(nd.maximum_filter1d(x, 5, mode="constant", cval=-0.5) * W),
    "maximum_filter_nearest": lambda x: np.sum(nd.maximum_filter(x, size=3, mode="nearest") ** 2),
    "grey_dilation": lambda x: np.sum(nd.grey_dilation(x, size=3) * W),
}
CASES_2D = {
    "maximum_filter_2d": lambda m: np.sum(nd.maximum_filter(m, size=(2, 3)) * WM),
    "minimum_filter_2d_mirror": lambda m: np.sum(nd.minimum_filter(m, size=3, mode="mirror") * WM),
}


@pytest.mark.parametrize("mode", [gradient, jacfwd])
@pytest.mark.parametrize("name", sorted(CASES) + sorted(CASES_2D))
def test_min_max_filters(name, mode):
    f, x = (CASES[name], X) if name in CASES else (CASES_2D[name], M)
    got = np.asarray(mode(f, x), dtype=float).reshape(x.shape)
    np.testing.assert_allclose(got, fd_gradient(f, x)[0], rtol=1e-7, atol=1e-9)


def test_window_longer_than_the_line_is_refused():
    with pytest.raises(OverdubError, match="window"):
        stand.min_or_max_filter1d(X[:3], 5, 0, np.empty(3), 2, 0.0, 0, 0)
