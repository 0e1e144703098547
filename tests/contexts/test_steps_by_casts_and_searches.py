"""Steps taken by casts and searches exactly on one of their jumps (sweep Q, session 68): `a.astype(int)`,
`np.asarray(x, dtype=np.intp)`, `bisect.bisect_right(grid, x)`, `grid.searchsorted(x)` (numpy's histogram of
weights with a sample on a bin edge), and `min(..., key=None)` at a tie (heapq.nsmallest's `min(it,
default=s, key=key)`). Each gave one side's derivative silently, where `np.floor` and `int()` are judged: at
a kink of the function (continuous) the derivative is the mean of the sides, as central differences give; at
a jump it is refused.

Reduced from skyfield's `curvelib.Splines` (`i = interp(x, lower, n).astype(int)` at a knot: -0.2 where
central differences give 0.15).
"""

import bisect
import heapq

import numpy as np
import pytest

from contexts import derivative, gradient
from overdub.errors import OverdubError
from tests import fd

LOWER = np.array([0.0, 1.0, 2.0, 3.0])
A = np.array([2.0, 2.5, 2.2, 1.9])      # a piecewise-linear table continuous at the knots (a kink at x = 1)
B = np.array([0.5, -0.2, 0.1, 0.3])
A_JUMP = np.array([2.0, 2.7, 2.2, 1.9])  # one with a jump at x = 1 (2.5 from the left, 2.7 from the right)

INDEXERS = {
    "astype(int)": lambda x: np.interp(x, LOWER, np.arange(4.0)).astype(int),
    "astype(np.int64) of an array": lambda x: np.interp(np.array([x]), LOWER, np.arange(4.0)).astype(np.int64)[0],
    "np.asarray(..., dtype=np.intp)": lambda x: int(np.asarray(x, dtype=np.intp)),
    "np.array(..., dtype=int) of an array": lambda x: np.array(np.array([x]), dtype=int)[0],
    "clip(...).astype(int)": lambda x: np.clip(np.array([x]), 0, 3).astype(int)[0],
}


def _table(values, index):
    def f(x):
        i = index(x)
        return float(values[i] + B[i] * (x - LOWER[i]))
    return f


def _mode(f, x, mode):
    return gradient(f, x)[0] if mode == "reverse" else derivative(f, x)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("index", INDEXERS)
@pytest.mark.one_mode
def test_a_cast_to_integers_at_a_knot_is_the_mean_of_the_sides(index, mode):
    f = _table(A, INDEXERS[index])
    for x in (0.4, 1.0, 2.7):
        want = fd.derivative(f, x)
        got = _mode(f, x, mode)
        assert abs(got - want) <= 1e-6, (x, got, want)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("index", INDEXERS)
@pytest.mark.one_mode
def test_a_cast_to_integers_at_a_jump_is_refused(index, mode):
    f = _table(A_JUMP, INDEXERS[index])
    assert abs(_mode(f, 0.4, mode) - fd.derivative(f, 0.4)) <= 1e-6
    with pytest.raises(OverdubError):
        _mode(f, 1.0, mode)


GRID = [0.0, 1.0, 2.0, 3.0]


def by_bisect(x):
    i = bisect.bisect_right(GRID, x) - 1
    return float(A[i] + B[i] * (x - LOWER[i]))


def by_searchsorted_method(x):
    i = int(np.asarray(GRID).searchsorted(x, side="right")) - 1
    return float(A[i] + B[i] * (x - LOWER[i]))


def weighted_histogram(x):
    return float(np.histogram([x, 0.5], bins=[0.0, 1.0, 2.0], weights=[x, 1.0])[0][1])


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("f", [by_bisect, by_searchsorted_method, weighted_histogram], ids=lambda f: f.__name__)
@pytest.mark.one_mode
def test_a_search_with_a_value_on_the_grid_is_right_off_it_and_refused_on_it(f, mode):
    x = 1.4
    try:  # (forward mode refuses numpy's histogram of weights anywhere: a write into a plain array)
        assert abs(_mode(f, x, mode) - fd.derivative(f, x)) <= 1e-6
    except OverdubError:
        assert f is weighted_histogram and mode == "forward"
    with pytest.raises(OverdubError):
        _mode(f, 1.0, mode)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("f", [
    lambda x: heapq.nsmallest(1, [x, 2 - x])[0],
    lambda x: heapq.nlargest(1, [x, 2 - x])[0],
    lambda x: min([x, 2 - x], key=None),
    lambda x: max(iter([x, 2 - x]), default=None, key=None),
], ids=["nsmallest", "nlargest", "min key=None", "max default key=None"])
@pytest.mark.one_mode
def test_min_and_max_with_key_none_at_a_tie_are_the_mean_of_the_sides(f, mode):
    for x in (0.7, 1.0):
        want = fd.derivative(f, x)
        assert abs(_mode(f, x, mode) - want) <= 1e-6, (x, want)
