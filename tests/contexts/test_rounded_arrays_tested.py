"""An array rounded by a step far finer than its values (`np.round(a, 8)`) stands for the values in the
tests it is made for, as a rounded number does (`StaircasedFloat`, iapws' `P = round(P, 8); if P > Pc:`):
comparisons, its entries' tests, rearranging. mosqito's loudness finds each level's band by
`(np.round(np.tile(levels, [k, 1]), 8) < np.round(bounds, 8)).sum(axis=0)` (`_get_rns_index`); an array
rounded was refused at once in both modes (reverse mode asks forward mode's), so every loudness was refused.
Used beyond a test (arithmetic, a reduction, numpy's conversion, a store, returned) it is still refused: the
staircase's derivative 0 is not that of the value it stands for. Each answer against central differences."""

import numpy as np
import pytest

from contexts import gradient, jacfwd, jvp
from contexts.lowered.runtime import SpecialPoint
from tests import fd

BOUNDS = np.array([0.1, 0.5, 1.0, 2.0])


def _band(levels, bounds):
    """mosqito's `_get_rns_index` shape: each level's band by rounded comparisons."""
    aux = np.round(np.tile(levels, [len(bounds), 1]), 8)
    ref = np.round(np.ones([len(levels), len(bounds)]) * bounds, 8).T
    return (aux < ref).sum(axis=0)


def banded(x):
    i = _band(x, BOUNDS)
    return (x * BOUNDS[i - 1]).sum() + (x ** 2).sum()


def entries_tested(x):
    total = 0.0
    for v, w in zip(np.round(x * 2.0, 9), x):
        total = total + (w * w if v < 1.5 else 3.0 * w)
    return total


def by_method_and_transpose(x):
    r = (x.reshape(1, -1) * 1.0).round(10).T
    return np.where(r[:, 0] > 0.6, x ** 3, np.sin(x)).sum()


def masked_by_isfinite(x):
    r = np.round(np.log(x), 8)
    return np.where(np.isfinite(r) & (r > -1.0), x * 2.0, x ** 2).sum()


RIGHT = [banded, entries_tested, by_method_and_transpose, masked_by_isfinite]
X = np.array([0.3, 0.7, 1.5])


@pytest.mark.parametrize("f", RIGHT, ids=lambda f: f.__name__)
def test_tests_of_a_rounded_array_are_right_in_both_modes(f):
    want = fd.gradient(f, X)[0]
    np.testing.assert_allclose(gradient(f, X)[0], want, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(jacfwd(f, X), want, rtol=1e-7, atol=1e-9)
    direction = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(jvp(f, (X,), (direction,))[1], want @ direction, rtol=1e-7, atol=1e-9)


def used_in_arithmetic(x):
    return (np.round(x, 8) * x).sum()


def reduced(x):
    return np.round(x, 8).sum() + x[0]


def converted(x):
    return np.asarray(np.round(x, 8)).sum() + x[0]


def an_entry_used(x):
    return np.round(x, 8)[1] * 2.0 + x[0]


def stored(x):
    out = np.zeros(3)
    out[:] = np.round(x, 8)
    return out.sum() + x[0]


def returned(x):
    return np.round(x, 8)


def through_numpy(x):
    return np.cumsum(np.round(x, 8))[-1] + x[0]


REFUSED = [used_in_arithmetic, reduced, converted, an_entry_used, stored, through_numpy]


@pytest.mark.one_mode  # (each mode's own refusal: tests/conftest.py)
@pytest.mark.parametrize("f", REFUSED, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_a_rounded_array_used_beyond_a_test_is_refused(f, mode):
    with pytest.raises(SpecialPoint, match="far finer than"):
        gradient(f, X) if mode == "reverse" else jacfwd(f, X)


@pytest.mark.one_mode
def test_a_rounded_array_returned_is_refused_in_forward_mode():
    with pytest.raises(SpecialPoint, match="far finer than"):
        jacfwd(returned, X)


def test_coarse_rounding_is_not_marked():
    # (a step as large as the values: a staircase whose derivative 0 is the function's, as before)
    f = lambda x: (np.round(x * 0.01, 1) + x).sum()
    np.testing.assert_allclose(jacfwd(f, X), [1.0, 1.0, 1.0])
    np.testing.assert_allclose(gradient(f, X)[0], [1.0, 1.0, 1.0])
