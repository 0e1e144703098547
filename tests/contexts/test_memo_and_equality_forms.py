"""Special points reached through forms of equality other than `x == c`, and a memo cache keyed by a
differentiated value (astropy's Voigt1D caches `wofz` by its argument), found wrong on astropy and scipy:

- `d = x - c; if d == 0:` — d only steers, so it was no active variable and its comparison was not
  checked (the special case's derivative, 0, silently); `(x,) == (c,)`, `x.tolist() == c`,
  `np.array_equal(x, c)`: the same;
- forward mode left the duals a memo cache stored on an object behind it: a later plain call returned a
  Dual, a second jacfwd or hessian was wrong. They are now replaced by their values when the outermost
  forward-mode call returns, and the cache's hit (`np.array_equal(z, self._last_z)`) is a special point.
  (A cache keyed by `np.allclose` holds on a neighbourhood of the key, where the code's derivative is the
  cached value's, 0: not refused; README, limits.)
Each is refused (`SpecialPoint`) or right against central differences, in every mode. (Session 57: a special
case continuous through its point is judged from the two sides, `SpecialCase`: right; one whose value is not
the limit there is refused.)
"""

import math

import numpy as np
import pytest

from contexts import derivative, gradient, hessian, jacfwd, jvp
from contexts.lowered.runtime import SpecialPoint
from tests import fd

K = np.array([0.3, 0.7])
V1 = math.exp(0.3)
V2 = float(np.sum(np.exp(K)))


def _steering_difference(x):
    d = x[0] - 0.3
    if d == 0:
        return V1
    return np.exp(x[0])


def _tuple_equal(x):
    return V1 if (x[0],) == (0.3,) else np.exp(x[0])


def _list_equal(x):
    return V2 if x.tolist() == K.tolist() else np.sum(np.exp(x))


def _array_equal(x):
    return V2 if np.array_equal(x, K) else np.sum(np.exp(x))


def _scalar_steering(t):
    d = t - 0.3
    if d == 0.0:
        return V1
    return math.exp(t)


AT_THE_POINT = [(_steering_difference, np.array([0.3])), (_tuple_equal, np.array([0.3])),
                (_list_equal, K), (_array_equal, K)]


@pytest.mark.parametrize("f,x", AT_THE_POINT, ids=[f.__name__ for f, _ in AT_THE_POINT])
def test_special_point_continuous_through_it_right_in_every_mode(f, x):
    # (the special case's value is the formula's there: judged from the two sides, their derivative, exp(x);
    # the special case's own was 0. The Hessian's sides, at 1e-8, are rounding noise: refused, or right)
    want = np.exp(x)
    np.testing.assert_allclose(gradient(f, x.copy())[0], want, rtol=1e-6)
    np.testing.assert_allclose(jacfwd(f, x.copy()), want, rtol=1e-6)
    np.testing.assert_allclose(jvp(f, (x.copy(),), (np.ones(x.size),))[1], np.sum(want), rtol=1e-6)
    try:
        h = hessian(f, x.copy())
    except SpecialPoint:
        return
    np.testing.assert_allclose(h, np.diag(want), rtol=1e-5)


def _off_by_one(f):
    def g(x):  # (the special case's value is not the formula's limit there: no derivative)
        y = f(x)
        return y + 1.0 if np.sum(np.abs(x - K[:x.size])) == 0.0 else y
    return g


@pytest.mark.parametrize("f,x", AT_THE_POINT, ids=[f.__name__ for f, _ in AT_THE_POINT])
def test_special_value_off_the_limit_refused_in_every_mode(f, x):
    g = _off_by_one(f)
    for run in (lambda: gradient(g, x.copy()), lambda: jacfwd(g, x.copy()),
                lambda: jvp(g, (x.copy(),), (np.ones(x.size),)), lambda: hessian(g, x.copy())):
        with pytest.raises(SpecialPoint):
            run()


@pytest.mark.parametrize("f,x", AT_THE_POINT, ids=[f.__name__ for f, _ in AT_THE_POINT])
def test_off_the_point_right(f, x):
    y = x + 0.05
    want = fd.gradient(f, y)[0]
    np.testing.assert_allclose(gradient(f, y)[0], want, rtol=1e-7)
    np.testing.assert_allclose(jacfwd(f, y), want, rtol=1e-7)


def test_scalar_steering_value():
    assert gradient(_scalar_steering, 0.3)[0] == pytest.approx(math.exp(0.3), rel=1e-6)
    assert derivative(_scalar_steering, 0.3) == pytest.approx(math.exp(0.3), rel=1e-6)
    with pytest.raises(SpecialPoint):  # (its special value V1 + 1: no derivative)
        gradient(lambda t: _scalar_steering(t) + (t == 0.3), 0.3)
    with pytest.raises(SpecialPoint):
        derivative(lambda t: _scalar_steering(t) + (t == 0.3), 0.3)
    assert gradient(_scalar_steering, 0.5)[0] == pytest.approx(math.exp(0.5), rel=1e-12)


class _Cached:
    """A model caching exp by its argument, as astropy's Voigt1D caches wofz (it compares by np.allclose)."""

    def __init__(self):
        self._last_z = np.zeros(1)
        self._last_w = np.zeros(1)

    def _exp(self, z):
        if z.shape == self._last_z.shape and np.array_equal(z, self._last_z):
            return self._last_w
        self._last_z = z
        self._last_w = np.exp(z)
        return self._last_w

    def evaluate(self, x, a, b):
        return self._exp(a * x) * b


X = np.array([0.5, 1.5])
P = np.array([0.3, 2.0])


def _model_sum(m, p):
    return np.sum(m.evaluate(X, p[0], p[1]))


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
@pytest.mark.parametrize("mode", ["jacfwd", "hessian", "gradient"])
def test_memo_cache_leaves_no_dual_and_its_hit_is_refused(mode):
    m = _Cached()
    run = {"jacfwd": jacfwd, "hessian": hessian, "gradient": lambda f, p: gradient(f, p)[0]}[mode]
    f = lambda p: _model_sum(m, p)  # noqa: E731
    first = run(f, P)
    want = fd.gradient(lambda p: _model_sum(_Cached(), p), P)[0] if mode != "hessian" else \
        fd.hessian(lambda p: _model_sum(_Cached(), p), P)
    np.testing.assert_allclose(first, want, rtol=1e-5, atol=1e-6)
    plain = f(P)  # the object holds values, not duals: a plain call is a plain number
    assert type(plain) in (float, np.float64) and plain == pytest.approx(_model_sum(_Cached(), P))
    with pytest.raises(SpecialPoint):  # the cache's hit at the same point: the derivative is not the code's
        run(f, P)


_MODULE_CACHE = _Cached()


def _through_a_helper(p):
    return _model_sum(_MODULE_CACHE, p)


def test_no_dual_left_in_a_module_level_object():
    # f reaches the object only through a global helper function: followed too
    jacfwd(_through_a_helper, P)
    assert type(_MODULE_CACHE._last_w) is np.ndarray and type(_MODULE_CACHE._last_z) is np.ndarray
    assert type(_through_a_helper(P)) in (float, np.float64)
