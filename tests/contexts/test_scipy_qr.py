"""scipy.linalg.qr as numpy's QR (the same LAPACK factorisation; scipy's own call reached geqrf through f2py
and was refused): both modes against central differences, for square, tall and wide matrices in each mode;
the tall 'full' Q (its extra columns are not unique) and pivoting refused."""

from __future__ import annotations

import numpy as np
import pytest

from contexts import gradient, jacfwd
from overdub.errors import OverdubError
from tests.fd import gradient as fd_gradient

sl = pytest.importorskip("scipy.linalg")
rng = np.random.default_rng(1)
W = rng.standard_normal((5, 5))


def _loss(shape, mode):
    def f(a):
        out = sl.qr(a.reshape(shape), mode=mode)
        return sum(np.sum(o * W[:o.shape[0], :o.shape[1]]) for o in out)
    return f


@pytest.mark.parametrize("qr_mode", ["full", "economic", "r"])
@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (3, 5)])
def test_stand_in_gives_scipys_factors(shape, qr_mode):
    from contexts.rules.numpy.scipy_linalg import qr
    a = rng.standard_normal(shape)
    want, got = sl.qr(a, mode=qr_mode), qr(a, mode=qr_mode)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", [gradient, jacfwd])
@pytest.mark.parametrize("qr_mode", ["full", "economic", "r"])
@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (3, 5)])
def test_qr(shape, qr_mode, mode):
    f, x = _loss(shape, qr_mode), rng.standard_normal(shape).ravel()
    if shape == (5, 3) and qr_mode == "full":
        with pytest.raises(OverdubError, match="complete"):
            mode(f, x)
        return
    got = np.asarray(mode(f, x), dtype=float).ravel()
    np.testing.assert_allclose(got, fd_gradient(f, x)[0], rtol=1e-6, atol=1e-7)


def test_pivoting_is_refused():
    with pytest.raises(OverdubError, match="pivoting"):
        gradient(lambda a: np.sum(sl.qr(a.reshape(3, 3), pivoting=True)[1]), np.arange(9.0))
