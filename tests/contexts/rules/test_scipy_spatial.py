"""scipy.spatial.distance rules (`cdist`, `pdist`: euclidean, sqeuclidean, cityblock; `squareform`)
against central differences, and through the engines in the kernel form scikit-learn uses."""

import numpy as np
import pytest

pytest.importorskip("scipy.spatial")
from scipy.spatial.distance import cdist, pdist, squareform  # noqa: E402

from contexts import gradient, jacfwd, jacobian  # noqa: E402
from contexts.rules.numpy._util import UnsupportedCase  # noqa: E402
from tests import fd  # noqa: E402
from tests.fd import check_rule  # noqa: E402

RNG = np.random.default_rng(3)
A = RNG.normal(size=(4, 3))
B = RNG.normal(size=(5, 3))
METRICS = ["euclidean", "sqeuclidean", "cityblock"]


@pytest.mark.parametrize("metric", METRICS)
def test_cdist_rule(metric):
    check_rule(cdist, A, B, metric, diff=(0, 1))
    check_rule(cdist, A, B, metric=metric, diff=(0, 1))


@pytest.mark.parametrize("metric", METRICS)
def test_pdist_rule(metric):
    check_rule(pdist, A, metric, diff=(0,))


def test_squareform_rule():
    check_rule(squareform, pdist(A), diff=(0,))
    check_rule(squareform, squareform(pdist(A)), diff=(0,), checks=False)


def test_other_metric_refused():
    from contexts.rules.registry import registry
    with pytest.raises(UnsupportedCase, match="cosine"):
        registry.get(cdist).adjoint(np.ones((4, 5)), cdist(A, B, "cosine"), A, B, "cosine")


def _rbf(x):
    """scikit-learn's RBF kernel: pdist, squareform, exp."""
    x = x.reshape(4, 3)
    k = np.exp(-0.5 * squareform(pdist(x / 1.3, metric="sqeuclidean")))
    return np.sum(k * np.arange(16.0).reshape(4, 4)) + np.sum(cdist(x, B, "euclidean"))


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_through_the_engines(mode):
    x = A.ravel()
    got = gradient(_rbf, x)[0] if mode == "reverse" else jacfwd(_rbf, x)
    np.testing.assert_allclose(got, fd.gradient(_rbf, x)[0], rtol=1e-6, atol=1e-8)


def test_matrix_output():
    f = lambda x: cdist(x.reshape(2, 3), B, "cityblock")  # noqa: E731
    x = A[:2].ravel()
    np.testing.assert_allclose(jacobian(f, x), fd.jacobian(f, x), rtol=1e-6, atol=1e-8)
