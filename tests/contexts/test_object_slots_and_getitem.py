"""Two shapes of library code met on pykalman and python-control, every mode against closed forms:

- object's own slots bound to an object: `obj.__getattribute__(name)` (pykalman's `get_params` reads its
  estimator's parameters so) and `obj.__setattr__(name, v)`; reverse mode refused them ("no rule for the C
  function object.__getattribute__").
- a class's Python `__getitem__` in code forward mode runs on duals (`np.r_[frow, eye]` in scipy's
  `tf2ss`, reached by python-control's `forced_response`): it ran as C code on the duals, which numpy
  could not convert (DualConversionError).
"""

import numpy as np
import pytest

from tests.modes import ARRAY_MODES, MODES, assert_array_gradient, gradient_in


class Params:
    def __init__(self, a):
        self.a = a
        self.scale = 1.5


def get_params(obj, names):
    return {name: obj.__getattribute__(name) for name in names}


def through_slots(x):
    p = Params(x * x)
    p.__setattr__("b", x * 2.0)
    got = get_params(p, ["a", "b", "scale"])
    return got["a"] * got["scale"] + got["b"] ** 2


@pytest.mark.parametrize("mode", MODES)
def test_bound_object_slots(mode):
    x = 0.7
    assert gradient_in(mode, through_slots, x)[0] == pytest.approx(3.0 * x + 8.0 * x)


def stacked(x):
    total = 0.0
    for v in x:  # (an active loop variable: forward mode runs the function on duals)
        total = total + v * v
    frow = -np.array([x[1:]])
    return np.sum(np.r_[frow, np.eye(1, 2)] ** 2 * 3.0) + np.sum(np.r_[x, 2.0, x] * x[0]) + total


@pytest.mark.parametrize("mode", ARRAY_MODES)
def test_a_python_getitem_on_duals(mode):
    assert_array_gradient(mode, stacked, np.array([1.0, 2.0, -0.5]))

