"""scipy.ndimage's 1-D rank filter (median_filter, rank_filter, percentile_filter, scipy.signal.medfilt)
differentiated in every engine through its kernel's numpy stand-in (`rules.numpy.scipy_rank`): the stand-in
gives scipy's kernel's values for every mode, origin and rank, and both modes agree with central differences
(refused before: no rule for `_rank_filter_1d.rank_filter`)."""

from __future__ import annotations

import numpy as np
import pytest

from contexts import gradient, jacfwd
from overdub.errors import OverdubError
from tests.fd import gradient as fd_gradient

nd = pytest.importorskip("scipy.ndimage")
signal = pytest.importorskip("scipy.signal")
kernel = pytest.importorskip("scipy.ndimage._rank_filter_1d")
stand = pytest.importorskip("contexts.rules.numpy.scipy_rank")

rng = np.random.default_rng(0)
X = rng.standard_normal(13)
W = rng.standard_normal(13)


@pytest.mark.parametrize("mode", range(5))
@pytest.mark.parametrize("win", [3, 4, 5, 7])
def test_stand_in_gives_the_kernels_values(win, mode):
    for origin in range(-(win // 2), (win - 1) // 2 + 1):
        for rank in range(1, win - 1):
            want, got = np.empty_like(X), np.empty_like(X)
            kernel.rank_filter(X, rank, win, want, mode, 0.5, origin)
            stand.rank_filter(X, rank, win, got, mode, 0.5, origin)
            np.testing.assert_array_equal(got, want)


CASES = {
    "median": lambda x: np.sum(nd.median_filter(x, 5) * W),
    "median_nearest": lambda x: np.sum(nd.median_filter(x, 3, mode="nearest") * W),
    "median_constant_origin": lambda x: np.sum(nd.median_filter(x, 4, mode="constant", cval=0.25, origin=1) * W),
    "rank_wrap": lambda x: np.sum(nd.rank_filter(x, 2, size=5, mode="wrap") * W),
    "percentile_mirror": lambda x: np.sum(nd.percentile_filter(x, 30, size=7, mode="mirror") * W),
    "medfilt": lambda x: np.sum(signal.medfilt(x, 5) ** 2),
}


@pytest.mark.parametrize("mode", [gradient, jacfwd])
@pytest.mark.parametrize("name", sorted(CASES))
def test_rank_filters(name, mode):
    f = CASES[name]
    got = np.asarray(mode(f, X), dtype=float).reshape(X.shape)
    np.testing.assert_allclose(got, fd_gradient(f, X)[0], rtol=1e-7, atol=1e-9)


def test_window_longer_than_the_array_is_refused():
    with pytest.raises(OverdubError, match="window"):
        stand.rank_filter(X[:3], 2, 5, np.empty(3), 2, 0.0, 0)
