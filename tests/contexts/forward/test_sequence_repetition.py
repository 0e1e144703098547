"""`[1] * y.ndim` in forward mode's tangent twin: the int's zero tangent repeated the list 0 times, and the
store `shape[axis] = -1` into that tangent crashed (IndexError, in scipy's cumulative_trapezoid). Checked
against central differences."""

import numpy as np
import pytest

from contexts import derivative, gradient
from tests import fd

T = np.linspace(0.0, 1.0, 20)


def reshaped(a):
    y = np.sin(a * np.ones(4))
    shape = [1] * y.ndim
    shape[-1] = -1
    return y.reshape(tuple(shape)).sum()


def repeated_both_ways(a):
    n = np.ones(3).ndim + 1        # an int computed beside the active values
    xs = [a] * n + n * [a * a]
    return sum(xs)


def cumulative(a):
    scipy_integrate = pytest.importorskip("scipy.integrate")
    return scipy_integrate.cumulative_trapezoid(np.sin(a * T), T).sum()


@pytest.mark.parametrize("f", [reshaped, repeated_both_ways, cumulative])
def test_repetition_by_an_int_beside_active_values(f):
    want = fd.gradient(f, 1.3)[0]
    assert derivative(f, 1.3) == pytest.approx(want, rel=1e-6)
    assert gradient(f, 1.3)[0] == pytest.approx(want, rel=1e-6)
