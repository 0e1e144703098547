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
