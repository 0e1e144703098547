"""numpy functions taking one array_like, given a tuple or list of duals (`np.ravel((x, y, z))`, as
pyorbital's callers do with its tuples of coordinates): numpy converts the sequence by np.asarray, so
forward mode does too (contexts/forward/context.py `_array_like_first`). Functions taking a sequence of
arrays (`np.stack`, `np.block`) are not converted. The values come through an object, so that forward
mode runs on duals (the tangent twin follows numbers and arrays only). Against central differences."""

import numpy as np
import pytest

from contexts import jacfwd
from tests import fd

X = np.array([0.4, 1.3, -0.7])


class Point:
    def __init__(self, p):
        self.x, self.y, self.z = np.sin(p[0]) * p[1], p[2] ** 2, p[0] * p[2]


def ravel_tuple(p):
    pt = Point(p)
    return np.ravel((pt.x, pt.y, pt.z))


def cumsum_list(p):
    pt = Point(p)
    return np.cumsum([pt.x * pt.y, np.exp(pt.z), pt.y])


def diff_nested(p):
    pt = Point(p)
    return np.diff([[pt.x, pt.y ** 2], [pt.z, pt.x * pt.y]], axis=0).ravel()


def stack_list(p):
    pt = Point(p)
    return np.stack([pt.x * np.ones(2), pt.y * np.arange(2.0)], axis=1).ravel()


@pytest.mark.parametrize("f", [ravel_tuple, cumsum_list, diff_nested, stack_list], ids=lambda f: f.__name__)
def test_sequence_of_duals(f):
    np.testing.assert_allclose(jacfwd(f, X), fd.jacobian(f, X, matrix=True), rtol=1e-7, atol=1e-9)
