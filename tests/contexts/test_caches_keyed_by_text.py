"""Caches checked against a key made from a differentiated value: its text (`repr(k) != self._key`, an
lru_cache keyed by `repr(k)`) or a tuple of its entries (`tuple(x) != self.key`). After a plain call at the same
point the key compares equal and the stored table of plain numbers came back: 0 in both modes (session 67,
sweep P; colossus' cosmology compares such a text's hash). Now refused where the key is the text, and the
tuple's hit is a special point judged as a number's is (against central differences)."""

import functools

import numpy as np
import pytest

from contexts import derivative, gradient
from overdub.errors import OverdubError
from tests import fd

T = np.linspace(0.0, 1.0, 11)


class TextKeyed:
    def __init__(self):
        self.k, self._key, self._table = 0.5, None, None

    def value(self, t):
        key = repr(self.k)
        if key != self._key:
            self._key, self._table = key, np.exp(-self.k * T)
        return np.interp(t, T, self._table)


MODEL = TextKeyed()


def text_keyed(k):
    MODEL.k = k
    return float(MODEL.value(0.37))


@functools.lru_cache(maxsize=None)
def _table(ktext):
    return np.exp(-float(ktext) * T)


def lru_keyed(k):
    return float(np.interp(0.37, T, _table(repr(k))))


@pytest.mark.parametrize("f", [text_keyed, lru_keyed])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.one_mode
def test_a_cache_keyed_by_a_values_text_is_refused_at_a_hit(f, mode):
    assert abs(fd.derivative(f, 0.3)) > 0.1
    f(0.3)  # (a plain call first: the cache holds the point)
    with pytest.raises(OverdubError):
        gradient(f, 0.3) if mode == "reverse" else derivative(f, 0.3)


class TupleKeyed:
    def __init__(self):
        self.key, self.val = None, None

    def __call__(self, x):
        k = tuple(x)
        if k != self.key:
            self.key, self.val = k, np.sin(x) * np.exp(0.3 * x)
        return self.val


CACHED = TupleKeyed()


def tuple_keyed(x):
    return float(np.sum(CACHED(x)))


def test_a_cache_keyed_by_a_tuple_of_entries_is_right_or_refused():
    x0 = np.array([0.3, 0.7])
    exact = np.cos(x0) * np.exp(0.3 * x0) + 0.3 * np.sin(x0) * np.exp(0.3 * x0)
    tuple_keyed(x0.copy())
    try:
        g = gradient(tuple_keyed, x0.copy())[0]
    except OverdubError:
        return
    np.testing.assert_allclose(g, exact, rtol=1e-6)
