"""A generator's items computed eagerly (reverse mode) are refused where one changeable object is yielded
twice: the consumer would see its last state each time. One object twice inside ONE yielded tuple (optiland's
coordinate frames, `(origin, (zero, zero, one))`, drawn by `tuple(frames[k][1] for k in ...)`) is seen at one
time, as Python's consumer sees it: it was refused (sweep U: 3 of optiland's paraxial cases in reverse mode).
The same object in two different yields is still refused."""

import numpy as np
import pytest

from contexts import gradient, jacobian
from contexts.lowered.runtime import EagerIterationError
from tests import fd


def _frame(x):
    zero = np.atleast_1d(np.array(0.0))
    one = np.atleast_1d(np.array(1.0))
    return (np.atleast_1d(x),), (zero, zero, one)


def frames(x):
    fs = [_frame(x), _frame(2.0 * x)]
    axes = tuple(fs[k][1] for k in range(2))
    origins = tuple(fs[k][0] for k in range(2))
    return float(origins[0][0][0] * origins[1][0][0] + axes[0][2][0] + axes[1][0][0])


def shared_buffer(x):
    buf = np.zeros(2)
    items = tuple((buf, x * k) for k in range(3))
    return sum(b.sum() + v for b, v in items)


@pytest.mark.one_mode  # (reverse mode's own answer, tests/conftest.py)
def test_one_object_twice_in_one_yield_is_right():
    want = fd.derivative(frames, 0.7)
    assert gradient(frames, 0.7)[0] == pytest.approx(want, rel=1e-7)
    np.testing.assert_allclose(jacobian(lambda x: np.array([frames(x), x]), 0.7, mode="reverse").ravel(),
                               [want, 1.0], rtol=1e-7)


@pytest.mark.one_mode
def test_one_object_in_two_yields_is_refused():
    with pytest.raises(EagerIterationError, match="yielded one ndarray more than once"):
        gradient(shared_buffer, 0.7)
