"""A dict keyed by a tuple display (`key = (start, order)`), reverse mode's own answer against central
differences: only the items the analysis could not prove constant are asked whether they carry a derivative
(`codegen.key_check`). A constant float beside an index computed from the inputs was taken for differentiated,
and every such cache refused (FLife's spectral moments, keyed by `(start, stop, i)`, session 70's sweep S);
a key holding a differentiated value stays refused."""

import numpy as np
import pytest

from contexts import gradient
from overdub.errors import OverdubError

from tests import fd

X = np.array([0.3, 1.2, 0.5])


def moments_cached(x):
    cache = {}
    start = np.argmax(x)  # (an integer, computed from the inputs: not provably constant)
    for order in (0.5, 1.5):
        key = (start, order)
        if key not in cache:
            cache[key] = np.sum(x ** order)
    return cache[(start, 0.5)] * cache[(start, 1.5)]


def memo_get(x):
    memo = {}
    start = np.argmin(x)
    for order in (2.0, 3.0):
        key = (start, order)
        memo[key] = np.sum(x ** order) + x[start]
    return memo.get((start, 2.0)) + memo.get((start, 3.0))


@pytest.mark.one_mode
@pytest.mark.parametrize("f", [moments_cached, memo_get])
def test_constant_items_beside_computed_ones(f):
    np.testing.assert_allclose(gradient(f, X)[0], fd.gradient(f, X)[0], rtol=1e-7)


def keyed_by_a_value(x):
    cache = {}
    for v in x:
        key = (v, 2.0)
        cache[key] = v * v
    return sum(k[0] for k in cache)


def key_rebound(x):
    cache = {}
    key = (0, 1.0)
    for v in x:
        cache[key] = v
        key = (v, 2.0)  # (bound twice: the whole key is asked)
    return sum(cache.values())


@pytest.mark.one_mode
@pytest.mark.parametrize("f", [keyed_by_a_value, key_rebound])
def test_a_differentiated_item_refused(f):
    with pytest.raises(OverdubError, match="key"):
        gradient(f, X)
