"""`jvp`'s NaN entries where the value is finite (0 * inf: a tangent of exactly 0 meeting an infinite partial,
FLife's `f ** 0.75` of a frequency column at 0 read from an array built with the differentiated PSD) are filled
from reverse mode's Jacobian times the tangents, as `derivative`'s and `jacfwd`'s were already (FLife's
`alpha075` jvp was NaN where jacfwd and gradient were right). Where reverse mode gives NaN too, it stays."""

import numpy as np
import pytest

from contexts import jvp
from tests import fd


def padded_power(x):
    a = np.concatenate([[0.0], x])
    return np.sum(a ** 0.75 * np.arange(1.0, 4.0))


def singular_in_both(x):
    return x[1] * x[0] ** 0.5


def test_nan_filled_by_reverse_mode():
    x, v = np.array([0.6, 1.3]), np.array([1.0, -0.5])
    y, dy = jvp(padded_power, (x,), (v,))
    assert y == pytest.approx(padded_power(x))
    assert dy == pytest.approx(fd.gradient(padded_power, x)[0] @ v, rel=1e-7)


def test_nan_in_both_modes_stays():
    _, dy = jvp(singular_in_both, (np.array([0.0, 2.0]),), (np.array([1.0, 0.0]),))
    assert np.isnan(dy) or np.isinf(dy)  # (x0 ** 0.5 at 0 along x0: no finite derivative; never a made-up 0)
