"""A two-argument primitive differentiated in one argument only (`Rule.hot_one`: ReLU's `np.maximum(x,
0.0)`, `np.power(x, 3.0)`): reverse mode computes that argument's cotangent alone. Every binary ufunc with
such a fast case, in either argument, against central differences; ties of maximum/minimum against the
central difference at the tie (1/2); and the cases the fast path must hand back to the general adjoint
(broadcasting, a cotangent of another dtype)."""
import numpy as np
import pytest

from contexts import gradient, hessian
from contexts.rules.registry import registry
from overdub.errors import OverdubError

_RNG = np.random.default_rng(7)
X = _RNG.uniform(0.3, 0.8, (4, 5))
W = _RNG.standard_normal((4, 5))  # a weighted sum: each element's cotangent differs
C = 0.55

_FNS = sorted((k for k, r in registry.rules.items() if isinstance(k, np.ufunc) and r.hot_one is not None),
              key=lambda k: k.__name__)


def _central(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def test_the_fast_case_exists_for_the_common_binary_ufuncs():
    names = {f.__name__ for f in _FNS}
    assert {"maximum", "minimum", "fmax", "fmin", "power", "arctan2", "hypot", "multiply", "divide"} <= names


@pytest.mark.parametrize("i", [0, 1])
@pytest.mark.parametrize("fn", _FNS, ids=lambda f: f.__name__)
def test_one_argument_differentiated_matches_central_differences(fn, i):
    if fn is np.ldexp and i == 1:
        pytest.skip("ldexp's exponent is an integer")
    if "dd->d" not in fn.types:
        pytest.skip("no loop for two floats (scipy's eval_hermite takes an integer degree)")
    c = 2 if fn is np.ldexp else C
    if i == 0:
        def loss(x):
            return (fn(x, c) * W).sum()
    else:
        def loss(x):
            return (fn(C, x) * W).sum()
    with np.errstate(all="ignore"):
        expected = _central(loss, X)
    if not np.all(np.isfinite(expected)):
        pytest.skip("not differentiable at this point (central differences not finite)")
    try:
        (g,) = gradient(loss, X)
    except OverdubError:
        return  # refused (a derivative without closed form): loud, never a number
    assert g.dtype == np.float64 and g.shape == X.shape
    np.testing.assert_allclose(g, expected, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("fn, tie", [(np.maximum, 0.5), (np.minimum, 0.5), (np.fmax, 0.5), (np.fmin, 0.5)])
def test_ties_with_the_constant_split_evenly(fn, tie):
    x = np.array([-1.0, 0.0, 2.0, 0.0])
    for i in (0, 1):
        (g,) = gradient(lambda x: fn(x, 0.0).sum() if i == 0 else fn(0.0, x).sum(), x)
        expected = _central(lambda x: fn(x, 0.0).sum(), x)  # (symmetric: the same either way round)
        np.testing.assert_allclose(g, expected, atol=1e-9)
        assert g[1] == tie and g[3] == tie


def test_relu_with_nan_gives_no_cotangent_where_the_value_is_nan_or_the_constant():
    x = np.array([np.nan, -1.0, 3.0])
    (g,) = gradient(lambda x: np.fmax(x, 0.0).sum(), x)  # fmax(nan, 0) is 0: the constant's
    np.testing.assert_array_equal(g, [0.0, 0.0, 1.0])


def test_broadcasting_against_a_constant_array_takes_the_general_adjoint():
    x = np.array([0.5, -1.0, 2.0])
    c = np.array([[0.0], [1.0]])  # y of shape (2, 3): x's cotangent sums over the broadcast rows
    (g,) = gradient(lambda x: (np.maximum(x, c) * np.arange(6.0).reshape(2, 3)).sum(), x)
    expected = _central(lambda x: (np.maximum(x, c) * np.arange(6.0).reshape(2, 3)).sum(), x)
    np.testing.assert_allclose(g, expected, atol=1e-8)


def test_float32_argument_takes_the_general_adjoint():
    x = X.astype(np.float32)
    (g,) = gradient(lambda x: (np.power(x, 3.0) * W).sum(), x)
    np.testing.assert_allclose(g, 3 * X ** 2 * W, rtol=1e-5)


def test_second_order_through_the_one_argument_case():
    # hessian: reverse over forward duals, the fast case must not meet them silently
    w = W.ravel()[:4]
    h = hessian(lambda x: (np.power(x, 3.0) * w).sum(), X.ravel()[:4])
    np.testing.assert_allclose(h, np.diag(6 * X.ravel()[:4] * W.ravel()[:4]), rtol=1e-8, atol=1e-10)


def test_registering_an_adjoint_drops_the_old_fast_cases():
    def f(a, b):
        return np.multiply(a, b)
    registry.adjoint(f)(lambda dy, y, a, b: (dy * b, dy * a))
    registry.set(f, hot_one=lambda dy, y, a, b, i: dy * 0.0)  # a wrong fast case...
    registry.set(f, adjoint=lambda dy, y, a, b: (dy * b, dy * a))  # ...dropped with the adjoint it sped up
    try:
        assert registry.get(f).hot_one is None
    finally:
        del registry.rules[f]
