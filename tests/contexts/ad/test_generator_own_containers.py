"""A generator changing in place a deque (an OrderedDict, a defaultdict, a Counter) it made itself: no caller
can read it between items, so reverse mode's eager run of the generator is what the caller sees (rainflow's
`extract_cycles`, whose `points = deque()` holds the reversals being paired, was refused). A deque passed in
stays refused. Jacobians against central differences."""

import collections
from collections import deque

import numpy as np
import pytest

from contexts import UnsupportedFunction, jacobian
from tests import fd


def cycles(series):
    points = deque()
    for i, x in enumerate(series):
        points.append((i, x))
        while len(points) >= 3:
            x1, x2, x3 = points[-3][1], points[-2][1], points[-1][1]
            if abs(x3 - x2) < abs(x2 - x1):
                break
            yield abs(x1 - x2), 0.5 * (x1 + x2)
            last = points.pop()
            points.pop()
            points.append(last)
    while len(points) > 1:
        yield abs(points[0][1] - points[1][1]), 0.5 * (points[0][1] + points[1][1])
        points.popleft()


def counted(series):
    seen = collections.OrderedDict()
    for i, x in enumerate(series):
        seen[i] = x
        yield x * len(seen)


def into(points, series):
    for x in series:
        points.append(x)
        yield x * len(points)


X = np.array([0.0, 3.1, -1.2, 4.4, 0.3, 5.9, 0.3, 2.1, -3.0, 4.5])


@pytest.mark.one_mode
@pytest.mark.parametrize("f", [
    lambda s: np.array([c for pair in cycles(s) for c in pair]),
    lambda s: np.array(list(counted(s))),
], ids=["deque", "OrderedDict"])
def test_containers_made_by_the_generator(f):
    np.testing.assert_allclose(jacobian(f, X), fd.jacobian(f, X), rtol=1e-7, atol=1e-9)


@pytest.mark.one_mode
def test_a_deque_passed_in_is_refused():
    with pytest.raises(UnsupportedFunction, match="in place"):
        jacobian(lambda s: np.array(list(into(deque(), s))), X)
