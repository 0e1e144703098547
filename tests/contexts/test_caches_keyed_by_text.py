"""Caches checked against a key made from a differentiated value: its text (`repr(k) != self._key`, an
lru_cache keyed by `repr(k)`) or a tuple of its entries (`tuple(x) != self.key`). After a plain call at the same
point the key compares equal and the stored table of plain numbers came back: 0 in both modes (session 67,
sweep P; colossus' cosmology compares such a text's hash). Now refused where the key is the text, and the
tuple's hit is a special point judged as a number's is (against central differences).

A digest of the text keys such a cache too (colossus: `md5(('%.6f' % Om0).encode()).hexdigest() != self._key`,
0 in forward mode after a plain call, session 68): hashlib's objects fed the text and their digests are
remembered as the text is; `hash(text)` and `zlib.crc32(text)`, integers no text test judges, are refused."""

import functools
import hashlib
import zlib

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


def _md5_hex(k):  # (colossus' cosmology check)
    return hashlib.md5(("%.6f" % k).encode()).hexdigest()


def _sha256_bytes(k):  # (fed by `update`, compared as bytes)
    m = hashlib.sha256()
    m.update(str(k).encode())
    return m.digest()


def _sha1_copied(k):  # (`hashlib.new`, a copy's digest)
    return hashlib.new("sha1", repr(k).encode("ascii")).copy().hexdigest()


def _blake2b(k):
    return hashlib.blake2b(f"{k:.12g}".encode(), digest_size=16).hexdigest()


def _hash(k):
    return hash(repr(k))


def _crc32(k):
    return zlib.crc32(repr(k).encode())


class DigestKeyed:
    def __init__(self, digest):
        self.digest, self._key, self._table = digest, None, None

    def value(self, k, t):
        key = self.digest(k)
        if key != self._key:
            self._key, self._table = key, np.exp(-k * T)
        return np.interp(t, T, self._table)


DIGESTS = [_md5_hex, _sha256_bytes, _sha1_copied, _blake2b, _hash, _crc32]


@pytest.mark.parametrize("digest", DIGESTS, ids=lambda d: d.__name__.strip("_"))
@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.one_mode
def test_a_cache_keyed_by_a_digest_of_a_values_text_is_refused_at_a_hit(digest, mode):
    model = DigestKeyed(digest)

    def f(k):
        return float(model.value(k, 0.37))

    want = fd.derivative(f, 0.3)
    assert abs(want) > 0.1
    model.__init__(digest)
    try:  # (a miss: the table made of the differentiated value; the integer keys are refused at once)
        got = gradient(f, 0.3)[0] if mode == "reverse" else derivative(f, 0.3)
    except OverdubError:
        assert digest in (_hash, _crc32)
    else:
        assert digest not in (_hash, _crc32)
        assert abs(got - want) <= 1e-6 * abs(want)
    model.__init__(digest)
    f(0.3)  # (a plain call first: the cache holds the point)
    with pytest.raises(OverdubError, match="text|hashed"):
        gradient(f, 0.3) if mode == "reverse" else derivative(f, 0.3)


def test_text_that_is_hashed_but_keys_nothing_stays_differentiable():
    """A digest computed and never compared (a log line's id) is no refusal: only an equal test is judged."""
    def f(k):
        tag = hashlib.md5(repr(k).encode()).hexdigest()[:8]
        return k * k if tag else 0.0
    assert abs(gradient(f, 0.3)[0] - 0.6) < 1e-12
    assert abs(derivative(f, 0.3) - 0.6) < 1e-12
