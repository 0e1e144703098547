"""Cases of session 36: crashes, false refusals and silent wrong derivatives met on code nobody here wrote
(package sweeps, generated programs), each checked against finite differences in every mode."""

import math

import numpy as np
import pytest

from contexts import ForwardContext, derivative
from tests import fd
from tests.modes import assert_scalar_modes


# -- np.array of an np.vectorize's outputs, numbers beside None (bond-pricing's bond_coupon_periods) -------------
# numpy keeps the 0-d arrays the vectorized function returns as the items of an object array; forward mode
# stacked them into scalars, and `res[1][()]` crashed on the float tangent ('float' object is not subscriptable).

def _periods(mat, freq=2):
    n = math.ceil(mat * freq)
    accrual = n - freq * mat
    return n, 1 - accrual, accrual, None, None


def _coupon_fractions(m):
    res = np.array(np.vectorize(_periods)(mat=m, freq=2))
    return res[1][()] * 3 + res[2][()] ** 2 + res[0][()]


def _object_items_plain(m):
    res = np.array((m * 2, np.array(m) ** 2, "label", None))
    return res[0] * res[1][()] + float(res[1])


@pytest.mark.parametrize("f", [_coupon_fractions, _object_items_plain])
def test_object_array_of_vectorized_outputs(f):
    assert_scalar_modes(f, 5.3, second=False)
    with ForwardContext():  # (inside the user's `with`, numpy's builders are intercepted: the crash was there)
        np.testing.assert_allclose(derivative(f, 5.3), fd.derivative(f, 5.3), rtol=1e-6)


# -- np.max / np.min / ndarray.tolist of an object array of the user's objects (left from session 35) -----------
# reverse mode crashed: max's rule multiplied a Tangent by a mask, tolist's made floats of Tangents. Now numpy's
# loops as Python: maximum by `a >= b` (numpy's npy_ObjectMax), tolist the objects themselves.

class _Level:
    def __init__(self, v):
        self.v = v

    def __ge__(self, other):
        return self.v >= other.v

    def __le__(self, other):
        return self.v <= other.v

    def __add__(self, other):
        return _Level(self.v + (other.v if isinstance(other, _Level) else other))

    __radd__ = __add__


def _levels(x):
    a = np.empty(4, dtype=object)
    a[0], a[1], a[2], a[3] = _Level(x), _Level(x * x), _Level(2.0), _Level(3.0 - x)
    return a


def _object_max(x):
    return np.max(_levels(x)).v * 3 + _levels(x).min().v


def _object_max_rows(x):
    a = _levels(x).reshape(2, 2)
    return sum(e.v for e in np.max(a, axis=0)) + np.amin(a, axis=1)[1].v ** 2


def _object_maximum(x):
    a, b = _levels(x), _levels(2 * x)[::-1]
    return np.maximum(a, b)[0].v + np.minimum(a, b)[1].v


def _object_tolist(x):
    return sum(_levels(x).tolist(), _Level(0.0)).v + _levels(x).reshape(2, 2).tolist()[1][0].v ** 2


@pytest.mark.parametrize("x", [1.6, 0.7])
@pytest.mark.parametrize("f", [_object_max, _object_max_rows, _object_maximum, _object_tolist])
def test_object_array_extrema_and_tolist(f, x):
    assert_scalar_modes(f, x, second=False)
