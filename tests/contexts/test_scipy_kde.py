"""scipy.stats.gaussian_kde differentiated in its data, evaluation points, weights and bandwidth: its compiled
kernels run as numpy code (`rules.numpy.scipy_kde`), checked against scipy's own kernels and, in both modes,
against central differences. (Refused before: no rule for `gaussian_kernel_estimate`.)"""

from __future__ import annotations

import numpy as np
import pytest

from contexts import gradient, jacfwd
from tests.fd import gradient as fd_gradient

st = pytest.importorskip("scipy.stats")
_stats = pytest.importorskip("scipy.stats._stats")
kde = pytest.importorskip("contexts.rules.numpy.scipy_kde")

rng = np.random.default_rng(2)
D = rng.standard_normal(20)


@pytest.mark.parametrize("log", [False, True])
def test_stand_ins_compute_scipys_kernels(log):
    points, values, xi = rng.standard_normal((7, 2)), rng.random((7, 3)), rng.standard_normal((4, 2))
    cho = np.linalg.cholesky(np.array([[0.5, 0.1], [0.1, 0.3]]))
    ours = (kde.gaussian_kernel_estimate_log if log else kde.gaussian_kernel_estimate)(points, values, xi, cho,
                                                                                      np.float64)
    fused = _stats.gaussian_kernel_estimate_log if log else _stats.gaussian_kernel_estimate
    np.testing.assert_allclose(ours, fused["double"](points, values, xi, cho, np.float64), rtol=1e-12, atol=1e-15)


CASES = {
    "data": (lambda y: st.gaussian_kde(y)(0.3)[0], D, (gradient, jacfwd)),
    "points": (lambda t: np.sum(st.gaussian_kde(D)(t)), np.array([0.1, 0.5, -0.7]), (gradient, jacfwd)),
    "logpdf": (lambda y: np.sum(st.gaussian_kde(y).logpdf(np.array([0.1, 1.5]))), D, (gradient, jacfwd)),
    "two_dimensional": (lambda y: np.sum(st.gaussian_kde(y.reshape(2, 10))(np.array([[0.1, 0.2], [0.3, -0.1]]))),
                        D, (gradient, jacfwd)),
    # (forward mode refuses gaussian_kde's own weighted covariance, an `out=` into a plain array: loud)
    "weights": (lambda w: st.gaussian_kde(D, weights=np.exp(w))(0.2)[0], D * 0.1, (gradient,)),
    "bandwidth": (lambda b: st.gaussian_kde(D, bw_method=b[0])(0.3)[0], np.array([0.4]), (gradient,)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gaussian_kde(name):
    f, x, modes = CASES[name]
    want = fd_gradient(f, x)[0]
    for mode in modes:
        got = np.asarray(mode(f, x), dtype=float).reshape(x.shape)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
