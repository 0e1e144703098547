"""np.percentile/np.quantile in forward mode: numpy's `_lerp` writes with `out=...` into a 0-d result and
then into that result again under `where=` (a dual of a numpy scalar): refused before, now against central
differences in both modes."""

import numpy as np
import pytest

from contexts import derivative, gradient, jacobian
from contexts.forward import jacfwd
from tests import fd

X = np.random.default_rng(0).normal(size=20)


def one_percentile(a):
    return np.percentile(X * a + X ** 2, 37)


def two_quantiles(a):
    return np.quantile(np.sin(X * a), [0.2, 0.7]).sum()


def median_of_rows(a):
    return np.median(np.outer(X[:6], np.cos(a * X[:5])), axis=1).sum()


@pytest.mark.parametrize("f", [one_percentile, two_quantiles, median_of_rows])
def test_scalar_input_both_modes(f):
    want = fd.gradient(f, 1.3)[0]
    assert derivative(f, 1.3) == pytest.approx(want, rel=1e-6)
    assert gradient(f, 1.3)[0] == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("method", ["linear", "midpoint", "weibull", "hazen"])
def test_quantiles_of_an_array_input(method):
    def f(x):
        return np.quantile(x ** 3, [0.1, 0.5, 0.83], method=method)
    x = X[:9].copy()
    want = fd.jacobian(f, x)
    np.testing.assert_allclose(jacfwd(f, x), want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(jacobian(f, x), want, rtol=1e-6, atol=1e-9)
