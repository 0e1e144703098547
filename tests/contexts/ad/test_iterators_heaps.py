"""Iterators drawn from in two places, and lists reordered in place by heapq, in reverse mode (and forward
mode), against central differences. Each was silently wrong before (found 2026-11-28 from the fuzzer's
`idiom` templates, `heapq.nsmallest`):

- `zip(range(n), it)` then the rest of `it`: reverse mode's zip drew all of `it` (the rest saw nothing,
  its derivative 0) — heapq.nsmallest's own code does this;
- `heapq.heapreplace(h, x)` or `heappush` then `list(h)` or a comprehension over h: the caller's copy of
  h's cotangent was counted twice, in the order after the change.
"""

import heapq

import numpy as np
import pytest

from tests import fd
from tests.modes import MODES, gradient_in


def zip_then_rest(a, b):
    it = iter([a, b, a * b])
    first = [e for i, e in zip(range(1), it)]
    s = 0.0
    for e in it:
        s += e * 3.0
    return first[0] * 2.0 + s


def zip_then_list(a, b):
    it = iter([a, b, a * b])
    first = list(zip(range(1), it))[0][1]
    rest = list(it)
    return first * 2.0 + rest[0] * 3.0 + rest[1] * 5.0


def replace_then_copy(a, b):
    r = [a, b]
    heapq.heapreplace(r, a * b)
    q = list(r)
    return q[0] * 2.0 + q[1] * 3.0


def push_then_comprehension(a, b):
    r = [a, b]
    heapq.heappush(r, a * b)
    q = [e for e in r]
    return q[0] * 2.0 + q[1] * 3.0 + q[2]


def pairs_in_a_helper(a, b):
    def top(p, q):
        r = [(p, 0), (q, 1)]
        heapq.heapify(r)
        heapq.heapreplace(r, (p * q, 2))
        return [e for (e, o) in r]
    q = top(a, b)
    return q[0] * 2.0 + q[1] * 3.0


def nsmallest(a, b):
    return sum(heapq.nsmallest(2, [a, b, a * b])) + heapq.nsmallest(2, [a, b, 0.9])[-1] * b


def nlargest(a, b):
    return heapq.nlargest(1, [a * a, b])[0] + heapq.nlargest(2, [a, b, a * b, 0.1])[1] * a


CASES = [zip_then_rest, zip_then_list, replace_then_copy, push_then_comprehension, pairs_in_a_helper,
         nsmallest, nlargest]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("point", [(0.7, 1.3), (1.7, 0.3)])
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_right(f, point, mode):
    np.testing.assert_allclose(gradient_in(mode, f, *point), fd.gradient(f, *point), rtol=1e-6, atol=1e-9)


class Items:
    """A Python iterator (its own `__next__`)."""

    def __init__(self, items):
        self.items, self.i = items, 0

    def __iter__(self):
        return self

    def __next__(self):
        if self.i >= len(self.items):
            raise StopIteration
        self.i += 1
        return self.items[self.i - 1]


def loop_left_early_then_rest(a, b):
    it = Items([a, b, a * b])
    for x in it:
        break
    return x * 2.0 + sum(it)


def enumerate_left_early(a, b):
    it = iter([a, b, a * b])
    for i, x in enumerate(it):
        if i == 0:
            break
    return x * 2.0 + sum(it)


def map_left_early(a, b):
    it = iter([a, b, a * b])
    for y in map(lambda v: v * 3.0, it):
        break
    return y + sum(it)


def filter_then_next(a, b):
    it = iter([a, b, a * b, b * b])
    big = filter(lambda v: v > 0.5, it)
    first = next(big)
    return first * 2.0 + next(it) * 5.0 + sum(big)


def enumerate_of_a_python_iterator(a, b):
    return sum(i * x for i, x in enumerate(Items([a, b, a * b]), 1))


EARLY = [loop_left_early_then_rest, enumerate_left_early, map_left_early, filter_then_next,
         enumerate_of_a_python_iterator]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", EARLY, ids=lambda f: f.__name__)
def test_iterators_drawn_as_far_as_read(f, mode):
    """A loop leaving early (or `next`) leaves the rest of the iterator to what reads it next: reverse mode
    drew all of it when the loop started (a Python iterator, and map/filter/enumerate over an iterator),
    and the rest's derivative came out 0."""
    point = (0.7, 1.3)
    np.testing.assert_allclose(gradient_in(mode, f, *point), fd.gradient(f, *point), rtol=1e-6, atol=1e-9)
