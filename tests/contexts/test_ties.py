"""Ties inside reorderings (sorts, partitions, `sorted`, `list.sort`, heaps) and ties of two values both
taken for differentiated: right where the derivative exists (against central differences or a closed form),
refused where it does not. Before session 52 every one of the refused cases gave one side's derivative,
silently (README: the known silent wrongs of session 51)."""

from __future__ import annotations

import heapq

import numpy as np
import pytest
import scipy.ndimage as nd
import scipy.stats as st

from contexts import ADContext, gradient, jvp
from overdub.errors import OverdubError
from tests.fd import derivative as fd_derivative


def fd_gradient(f, x, h=1e-6):
    x = np.asarray(x, dtype=float)
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        g.flat[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def reverse(f, x):
    with ADContext():
        return np.asarray(gradient(f, x)[0])


def forward(f, x):
    """The gradient of a scalar f by forward mode, one basis direction at a time."""
    return np.array([jvp(f, (x,), (e,))[1] for e in np.eye(x.size)])


MODES = {"reverse": reverse, "forward": forward}


def refused_at_the_tie_right_off_it(mode, f, tie, off):
    """f refused by mode at the point `tie`, and right (against central differences) at the point `off`."""
    with pytest.raises(OverdubError):
        MODES[mode](f, np.array(tie))
    x = np.array(off)
    assert MODES[mode](f, x) == pytest.approx(fd_gradient(f, x), abs=1e-6)


def _weighted_sort(x):
    return np.sort(x) @ np.arange(1.0, x.size + 1.0)


def _inplace_sort(x):
    t = x * 1.0
    t.sort()
    return t @ np.arange(1.0, x.size + 1.0)


def _sorted(x):
    return sum(i * v for i, v in enumerate(sorted([x[0], x[1], x[2]])))


def _list_sort(x):
    items = [x[0], x[1], x[2]]
    items.sort()
    return 3.0 * items[0] + items[1]


def _heap(x):
    h = [x[0], x[1], x[2]]
    heapq.heapify(h)
    return 3.0 * heapq.heappop(h) + h[0]


# (function, point at a tie whose one-sided derivatives differ)
KINKS = {
    "np_sort_weighted": (_weighted_sort, [1.0, 2.0, 2.0, 3.0]),
    "ndarray_sort": (_inplace_sort, [1.0, 1.0, 3.0]),
    "median_odd_tie_at_the_middle": (np.median, [1.0, 2.0, 2.0, 2.0, 3.0]),
    "percentile_at_a_tie": (lambda x: np.percentile(x, 30), [1.0, 2.0, 2.0, 2.0, 3.0]),
    "partition_kth_tied": (lambda x: np.partition(x, 1)[1], [3.0, 1.0, 1.0, 4.0]),
}

# (Python's reorderings compare the numbers by `<`: a tie is an ordering's, judged from the two sides of the
# point since session 59 -- max(x0, x1) inside, whose sides' mean (0.5, 0.5) holds along every direction)
PYTHON_REORDERINGS = {
    "sorted": (_sorted, [1.0, 1.0, 3.0]),
    "list_sort": (_list_sort, [1.0, 1.0, 3.0]),
    "heap": (_heap, [1.0, 1.0, 3.0]),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", PYTHON_REORDERINGS)
def test_a_python_reordering_at_a_tie_is_the_mean_of_its_sides(name, mode):
    f, x = PYTHON_REORDERINGS[name]
    x = np.array(x)
    at_tie = [(f(x + 1e-6 * e) - f(x - 1e-6 * e)) / 2e-6 for e in np.eye(x.size)]
    assert MODES[mode](f, x) == pytest.approx(at_tie, abs=1e-6)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", KINKS)
def test_a_tie_whose_sides_differ_is_refused(name, mode):
    f, x = KINKS[name]
    refused_at_the_tie_right_off_it(mode, f, x, np.array(x) + np.linspace(0.0, 0.01, len(x)))


# (function, point at a tie where the derivative exists: the tied entries are read alike, unread, or copies)
SMOOTH = {
    "median_even_tie_across_the_middle": (np.median, [1.0, 2.0, 2.0, 3.0], ("reverse",)),
    "median_odd_ties_off_the_middle": (np.median, [1.0, 1.0, 5.0, 7.0, 9.0], ("reverse", "forward")),
    "partition_ties_off_kth": (lambda x: np.partition(x, 2)[2], [3.0, 1.0, 1.0, 4.0], ("reverse", "forward")),
    "sum_of_sorted": (lambda x: sum(sorted([x[0], x[1], x[2]])), [1.0, 1.0, 3.0], ("reverse",)),
    "sort_of_copies": (lambda x: np.sort(np.r_[x, x]) @ np.arange(6.0), [1.0, 2.0, 3.0], ("reverse", "forward")),
    "sorted_copies_of_one_value": (lambda x: (lambda a: sum(i * v for i, v in enumerate(sorted([a, a, x[1]]))))(
        x[0] * 1.0), [1.0, 3.0], ("reverse", "forward")),
    # a window padded by copies of the array's ends (mode 'nearest'): ties of an entry with its own copy
    "median_filter_nearest_at_a_plateau": (lambda x: np.sum(nd.median_filter(x, 3, mode="nearest") * np.arange(
        1.0, 6.0)), [1.0, 1.5, 4.0, 3.0, 5.0], ("reverse", "forward")),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", SMOOTH)
def test_a_tie_where_the_derivative_exists_is_right(name, mode):
    f, x, right_in = SMOOTH[name]
    x = np.array(x)
    if mode not in right_in:  # (forward mode cannot see how the tied entries are read after: refused, then
        try:                  # answered by reverse mode where its entry point asks it, session 73's jvp)
            got = MODES[mode](f, x)
        except OverdubError:
            return
        assert got == pytest.approx(fd_gradient(f, x), abs=1e-6)
        return
    assert MODES[mode](f, x) == pytest.approx(fd_gradient(f, x), abs=1e-6)


# -- a tie of two values both taken for differentiated (reverse mode) -------------------------------------

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [lambda x: st.expon.pdf(x[0]), lambda x: st.beta.pdf(x[0], 2, 3)],
                         ids=["expon_pdf", "beta_pdf"])
def test_density_at_the_end_of_its_support_is_refused_or_the_mean_of_its_sides(f, mode):
    # (scipy's support check compares x with a bound read off the distribution object, taken for
    # differentiated: reverse mode gave the inside's slope, -1 and 12. expon's density jumps there: refused;
    # beta(2, 3)'s is continuous with a kink, 0 then 12: judged from its sides since session 59, 6)
    if f(np.array([1e-9])) > 0.5:
        with pytest.raises(OverdubError, match="branch boundary"):
            MODES[mode](f, np.array([0.0]))
    else:
        assert MODES[mode](f, np.array([0.0])) == pytest.approx([6.0], rel=1e-5)
    x = np.array([0.3])
    assert MODES[mode](f, x) == pytest.approx(fd_gradient(f, x), rel=1e-6)


class _Grid:
    def arange(self, a, b):
        return np.arange(a, b)


def _count_below(o):
    g = _Grid().arange(0, 6)  # (a method's result: taken for a value that may carry a derivative)
    return float(np.sum(np.asarray(o < g, dtype=float) * (g - o)))


def test_reverse_mode_judges_a_tie_of_two_values_taken_for_differentiated():
    # (refused from session 52: a kink, judged from its two sides since session 59)
    with ADContext():
        assert gradient(_count_below, 3.0)[0] == pytest.approx(-2.5, rel=1e-6)
    with ADContext():
        got = gradient(_count_below, 3.4)[0]
    assert got == pytest.approx(fd_derivative(_count_below, 3.4), rel=1e-6)


def test_a_tie_forward_mode_cannot_check_keeps_reverse_modes_answer():
    # (np.histogram's edges from the data: the largest entry ties with the last edge, and the two move
    # together; forward mode cannot run np.histogram's counting, so reverse mode's answer stands, as before)
    def f(x):
        counts, edges = np.histogram(x, bins=3)
        return float(np.sum(edges * np.arange(4.0)))
    x = np.array([0.2, 1.0, 0.5, 3.0])
    with ADContext():
        got = gradient(f, x)[0]
    assert got == pytest.approx(fd_gradient(f, x), abs=1e-6)


# -- an argsort's gather at a tie ---------------------------------------------------------------------------

def _gather_by_argsort(x):
    return float(x[np.argsort(x)] @ np.arange(1.0, x.size + 1.0))


def _gather_by_method(x):
    return float(x[x.argsort()] @ np.arange(1.0, x.size + 1.0))


def _gather_of_copies(x):
    y = np.concatenate([x, x])
    return float(y[np.argsort(y)] @ np.arange(1.0, y.size + 1.0))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [_gather_by_argsort, _gather_by_method], ids=["np_argsort", "method"])
def test_an_argsort_at_a_tie_whose_entries_part_is_refused(f, mode):
    # (the permutation jumps there: the stable order's side came out, [1, 2, 3, 4] where central differences
    # give [1, 2.5, 2.5, 4])
    refused_at_the_tie_right_off_it(mode, f, [1.0, 2.0, 2.0, 3.0], [1.0, 2.0, 2.5, 3.0])


@pytest.mark.parametrize("mode", MODES)
def test_an_argsort_of_copies_is_right(mode):
    x = np.array([1.0, 3.0, 2.0])
    assert MODES[mode](_gather_of_copies, x) == pytest.approx(fd_gradient(_gather_of_copies, x), abs=1e-6)


# -- property: at points full of ties, each mode is right or refuses ------------------------------------------

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as hs  # noqa: E402

_WEIGHTS = np.array([0.5, -1.0, 2.0, 0.25, 1.5, -0.75])
REORDERINGS = {
    "weighted_sort": lambda x: float(np.sort(x) @ _WEIGHTS[:x.size]),
    "median": lambda x: float(np.median(x)),
    "percentile_40": lambda x: float(np.percentile(x, 40)),
    "partition_2": lambda x: float(np.partition(x, 2)[2]),
    "weighted_sorted": lambda x: sum(w * v for w, v in zip(_WEIGHTS, sorted(list(x)))),
    "argsort_gather": lambda x: float(x[np.argsort(x)] @ _WEIGHTS[:x.size]),
    "weighted_inplace_sort": lambda x: float((lambda t: (t.sort(), t @ _WEIGHTS[:x.size])[1])(x * 1.0)),
    "lexsort_gather": lambda x: float(x[np.lexsort((x[::-1], x))] @ _WEIGHTS[:x.size]),
}


@settings(max_examples=25, deadline=None)
@given(values=hs.lists(hs.integers(0, 3), min_size=4, max_size=6), name=hs.sampled_from(sorted(REORDERINGS)),
       mode=hs.sampled_from(sorted(MODES)))
def test_right_or_refused_at_points_full_of_ties(values, name, mode):
    f, x = REORDERINGS[name], np.array(values, dtype=float)
    try:
        got = MODES[mode](f, x)
    except OverdubError:
        return
    assert got == pytest.approx(fd_gradient(f, x), abs=1e-6)


# -- an argmax's (argmin's) index at a tie of the extreme -------------------------------------------------------

_W4 = np.array([1.0, 2.0, 3.0, 4.0])
INDEXED = {
    "np_argmax": lambda x: float(x[np.argmax(x)] * 2.0 + x[0]),
    "method_argmin": lambda x: float(_W4[x.argmin()] * x[x.argmin()]),
    "argmax_along_rows": lambda x: float(np.sum(np.take_along_axis(
        x.reshape(2, 2), np.argmax(x.reshape(2, 2), axis=1)[:, None], 1) * np.array([[1.0], [3.0]]))),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", INDEXED)
def test_an_argmax_at_a_tie_of_its_extreme_is_refused(name, mode):
    # (the index jumps there: the first entry's slope came out, where central differences split it)
    f = INDEXED[name]
    tie = {"method_argmin": [1.0, 0.5, 0.5, 3.0], "argmax_along_rows": [3.0, 3.0, 1.0, 0.5]}.get(
        name, [1.0, 3.0, 3.0, 0.5])
    refused_at_the_tie_right_off_it(mode, f, tie, [1.0, 3.0, 2.0, 0.5])


@pytest.mark.parametrize("mode", MODES)
def test_an_argmax_along_rows_ignores_a_tie_across_rows(mode):
    f, x = INDEXED["argmax_along_rows"], np.array([1.0, 3.0, 3.0, 0.5])  # (3.0 in each row: no tie in a row)
    assert MODES[mode](f, x) == pytest.approx(fd_gradient(f, x), abs=1e-6)


# -- a tie at an end a partition was asked for (np.median's -1, there to find a NaN) ----------------------------

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, x", [
    (np.median, [1.0, 7.0, 3.0, 7.0, 2.0]),  # (HydroErr's mde: the largest entries tie; the median reads neither)
    (np.median, [1.0, 7.0, 3.0, 7.0, 2.0, 0.5]),
    (lambda x: np.percentile(x, 30), [7.0, 1.0, 3.0, 7.0, 2.0]),
    (lambda x: np.partition(x, -1)[-1], [1.0, 3.0, 3.0, 0.5]),  # (the top: np.max's tie, split as np.max's rule)
    (lambda x: np.partition(x, 0)[0] * 2.0, [1.0, 0.5, 3.0, 0.5]),
], ids=["median_odd", "median_even", "percentile", "partition_top", "partition_bottom"])
def test_a_tie_at_a_partitions_end_is_split_as_max_splits_it(f, x, mode):
    x = np.array(x)
    assert MODES[mode](f, x) == pytest.approx(fd_gradient(f, x), abs=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_ranks_at_a_tie_are_refused(mode):
    # (sweep G: HydroErr's spearman_r; the ranks jump there, (2.5, 2.5) between (2, 3) and (3, 2): 0 came out)
    w = np.array([0.3, -1.0, 2.0, 0.5])

    def f(x):
        return float(np.sum(st.rankdata(x) * w * x))
    refused_at_the_tie_right_off_it(mode, f, [1.0, 2.0, 2.0, 0.5], [1.0, 2.0, 2.5, 0.5])


@pytest.mark.parametrize("mode", MODES)
def test_rows_chosen_by_an_argmax_along_columns_at_a_tie_are_refused(mode):
    # (sweep G: pymcdm's cilos_weights, `A = m[np.argmax(m, axis=0)]`: rows swap where two tie for a column's
    # largest, and the weights jump; -0.179 came out where there is no derivative)
    def f(x):
        m = x.reshape(3, 2)
        return float(np.sum(m[np.argmax(m, axis=0)] * np.array([[1.0, 2.0], [3.0, 5.0]])))
    refused_at_the_tie_right_off_it(mode, f, [1.0, 4.0, 3.0, 2.0, 3.0, 0.5], [1.0, 4.0, 3.0, 2.0, 2.5, 0.5])


# -- np.lexsort's gather at a tie ------------------------------------------------------------------------------

_KEY = np.array([3.0, 1.0, 2.0, 0.0])
LEXSORTS = {
    # x the primary key: at its tie the constant secondary key orders the entries, but a step in x either way
    # orders them by x (the secondary's side came out, [2, 1, 4, 3] where central differences give the mean)
    "primary": lambda x: float(_W4 @ x[np.lexsort((_KEY, x))]),
    "only_key": lambda x: float(_W4 @ x[np.lexsort((x,))]),
    "as_rows": lambda x: float(_W4 @ x[np.lexsort(np.stack([_KEY, x]))]),
    # x secondary under a constant primary key tied where x ties too
    "secondary": lambda x: float(_W4 @ x[np.lexsort((x, np.array([0.0, 0.0, 1.0, 1.0])))]),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(LEXSORTS))
def test_a_lexsort_at_a_tie_whose_entries_part_is_refused(name, mode):
    refused_at_the_tie_right_off_it(mode, LEXSORTS[name], [0.3, 0.3, 0.7, 0.7], [0.3, 0.1, 0.7, 0.5])


@pytest.mark.parametrize("mode", MODES)
def test_a_lexsort_whose_tie_a_later_key_breaks_is_right(mode):
    """Tied in a constant primary key, apart in x, the secondary: the order does not jump (no refusal)."""
    def f(x):
        return float(_W4 @ x[np.lexsort((x, np.array([0.0, 0.0, 1.0, 1.0])))])
    x = np.array([0.3, 0.1, 0.7, 0.5])
    assert MODES[mode](f, x) == pytest.approx(fd_gradient(f, x), abs=1e-6)


def sorted_beside_infinity(x):
    # (np.sort of a finite entry and an infinite one, read with different weights: `_tied` took a finite value and
    # inf for a tie, `inf <= 2**-40 * inf`, and refused; a k-d tree's misses beyond `distance_upper_bound`)
    y = np.sort(np.array([x[0], np.inf, x[1]]))
    return float(y[0] + 2.0 * y[1] + 0.0 * np.isfinite(y[2]))


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_finite_entry_is_no_tie_with_infinity(mode):
    x = np.array([0.7, 0.2])
    np.testing.assert_allclose(MODES[mode](sorted_beside_infinity, x), fd_gradient(sorted_beside_infinity, x),
                               rtol=1e-6)
