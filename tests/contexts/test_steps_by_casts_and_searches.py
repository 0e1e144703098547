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


def by_bisect(x, values=A):
    i = bisect.bisect_right(GRID, x) - 1
    return float(values[i] + B[i] * (x - LOWER[i]))


def by_searchsorted_method(x, values=A):
    i = int(np.asarray(GRID).searchsorted(x, side="right")) - 1
    return float(values[i] + B[i] * (x - LOWER[i]))


def weighted_histogram(x):
    return float(np.histogram([x, 0.5], bins=[0.0, 1.0, 2.0], weights=[x, 1.0])[0][1])


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("f", [by_bisect, by_searchsorted_method, weighted_histogram], ids=lambda f: f.__name__)
@pytest.mark.one_mode
def test_a_search_with_a_value_on_the_grid_is_right_off_it_and_judged_on_it(f, mode):
    # (on the grid, a search's step is judged from the two sides as a cast's is (session 72): at a kink of the
    # continuous table its derivative is the mean of the sides, at a jump it is refused)
    x = 1.4
    try:  # (forward mode refuses numpy's histogram of weights anywhere: a write into a plain array)
        assert abs(_mode(f, x, mode) - fd.derivative(f, x)) <= 1e-6
    except OverdubError:
        assert f is weighted_histogram and mode == "forward"
    if f is weighted_histogram:  # (its bin's weight jumps from 0 to x there)
        with pytest.raises(OverdubError):
            _mode(f, 1.0, mode)
        return
    assert abs(_mode(f, 1.0, mode) - fd.derivative(f, 1.0)) <= 1e-6
    with pytest.raises(OverdubError):
        _mode(lambda x: f(x, A_JUMP), 1.0, mode)


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


_KNOTS = np.linspace(0.0, 5.0, 11)
_SPLINE = None


def _cubic_piece(x):
    """A cubic spline evaluated as rocketpy's `Function(..., interpolation="spline")` does: the piece found by
    bisect, its polynomial in x - knot. Smooth through its knots: the derivative there is the spline's."""
    global _SPLINE
    if _SPLINE is None:
        _SPLINE = pytest.importorskip("scipy.interpolate").CubicSpline(_KNOTS, np.sin(_KNOTS) + 0.1 * _KNOTS)
    c = _SPLINE.c
    i = max(bisect.bisect_left(list(_KNOTS), x) - 1, 0)
    t = x - _KNOTS[i]
    return c[0, i] * t ** 3 + c[1, i] * t ** 2 + c[2, i] * t + c[3, i]


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.one_mode
def test_a_spline_found_by_bisect_at_its_knot_is_its_slope(mode):
    got = _mode(_cubic_piece, 2.0, mode)
    assert got == pytest.approx(float(_SPLINE(2.0, 1)), rel=1e-9)  # (refused before: sweep U, rocketpy)
