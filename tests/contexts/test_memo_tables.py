"""A dict looked up by a differentiated key, in every mode.

A hand-written memo table (`if t in memo: return memo[t]`) filled by an earlier call serves the value it
stored under an equal key: a plain number, not computed from the key being differentiated. Before, every
mode returned the derivative without that term, silently (1.0 for 2.4 below; hessian 0.0). Now a hit of a
lookup by a differentiated key (`d[k]`, `d.get(k)`, `d.pop(k)`, `d.setdefault(k)`) is refused in every
mode (`DifferentiatedKey`; `k in d` finding it first, `SpecialPoint`); a miss and `functools.lru_cache`
(bypassed while differentiating) are as before, checked against central differences."""

import functools

import numpy as np
import pytest

from contexts import derivative, gradient, hessian, jacfwd
from contexts import SpecialPoint
from contexts.rules.containers import DifferentiatedKey
from overdub.errors import OverdubError
from tests import fd

X = 0.7
MODES = {
    "gradient": lambda f, x: gradient(f, x)[0],
    "derivative": derivative,
    "jacfwd": lambda f, x: jacfwd(f, np.float64(x)),
    "hessian": hessian,
}

memo: dict = {}


def squared(t):
    if t in memo:
        return memo[t]
    r = t * t
    memo[t] = r  # (reverse mode refuses this store: a dict keyed by a differentiated value)
    return r


def memoised(x):
    return squared(x) + np.sin(x)


def by_get(x):
    r = memo.get(x)
    return (x * x if r is None else r) + x


def by_pop(x):
    return memo.pop(x, x * x) * 2.0 + x


def by_setdefault(x):
    return memo.setdefault(x, x * x) + x


def table(x):
    return {0.5: 1.0, X: 2.0}[x] * x


LOOKUPS = [memoised, by_get, by_pop, by_setdefault]


@pytest.fixture(autouse=True)
def _warm():
    memo.clear()
    memo[X] = X * X  # an earlier plain call's entry
    yield
    memo.clear()


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("f", LOOKUPS + [table], ids=lambda f: f.__name__)
def test_a_hit_is_refused(f, mode):
    # (`if t in memo` finds the key first: a differentiated value equal to a dict's key, `SpecialPoint`)
    if f is by_pop and mode != "gradient":  # (session 57: judged from the two sides; pop took the entry, whose
        got = MODES[mode](f, X)             # value is the formula's: the derivative of 2 x**2 + x)
        assert float(np.ravel(got)[0]) == pytest.approx(4.0 if mode == "hessian" else 4 * X + 1, rel=1e-6)
        return
    with pytest.raises((DifferentiatedKey, SpecialPoint)) as e:
        MODES[mode](f, X)
    assert "test_memo_tables.py" in str(e.value)  # the user's line
    assert "lru_cache" in e.value.fix or isinstance(e.value, SpecialPoint)


@pytest.mark.parametrize("mode", ["derivative", "jacfwd"])
@pytest.mark.parametrize("f", LOOKUPS, ids=lambda f: f.__name__)
def test_a_miss_is_pythons(f, mode):
    memo.clear()
    expected = fd.derivative(lambda x: (memo.clear(), f(x))[1], X)
    memo.clear()
    assert float(MODES[mode](f, X)) == pytest.approx(expected, rel=1e-6)


def test_a_miss_in_reverse_mode():
    memo.clear()
    assert gradient(by_get, X)[0] == pytest.approx(2 * X + 1, rel=1e-12)


def test_membership_of_an_equal_value_is_refused_and_steers_elsewhere():
    s = {X}
    for name, mode in MODES.items():
        with pytest.raises(OverdubError):
            mode(lambda x: x * 3.0 if x in s else x, X)
        assert float(mode(lambda x: x * 3.0 if x in s else x, X + 0.1)) == pytest.approx(
            1.0 if name != "hessian" else 0.0)


@functools.lru_cache
def cached(t):
    return t * t


def test_lru_cache_is_bypassed():
    cached(X)  # warm
    for name, mode in MODES.items():
        expected = 2.0 if name == "hessian" else 2 * X + 1
        assert float(mode(lambda x: cached(x) + x, X)) == pytest.approx(expected, rel=1e-9)


def test_keys_that_do_not_depend_on_the_input():
    weights = {"a": 2.0, 0.5: 3.0}

    def f(x):
        return weights["a"] * x + weights[0.5] * x * x

    for name, mode in MODES.items():
        expected = 2.0 * 3.0 if name == "hessian" else 2.0 + 6.0 * X
        assert float(mode(f, X)) == pytest.approx(expected, rel=1e-9)
