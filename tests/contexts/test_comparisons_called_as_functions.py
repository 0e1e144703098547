"""A comparison called as a function through a variable (`op = operator.ge; op(x, 0.3) * x`), each mode's own
answer: its tie checked as the one written `x >= 0.3` is (both modes gave 1 at 0.3, where the function jumps,
until session 70; found by the pandas helper beside `s.ge(0.3)`); off the tie, right against central
differences."""

import operator

import numpy as np
import pytest

from contexts import derivative, gradient
from overdub.errors import OverdubError

from tests import fd

OPS = [operator.ge, operator.gt, operator.le, operator.lt]


def stepped(op):
    def f(x):
        test = op
        return test(x, 0.3) * x + x * x
    return f


def two_moving(op):
    def f(x):
        test = op
        return test(x * x, 0.75 * x - 0.125) * x  # (x*x and 0.75x - 0.125 tie at 0.5, moving apart)
    return f


@pytest.mark.one_mode
@pytest.mark.parametrize("op", OPS, ids=lambda o: o.__name__)
@pytest.mark.parametrize("api", [gradient, derivative])
def test_at_the_tie_refused(op, api):
    with pytest.raises(OverdubError):
        api(stepped(op), 0.3)
    with pytest.raises(OverdubError):
        api(two_moving(op), 0.5)


@pytest.mark.one_mode
@pytest.mark.parametrize("op", OPS, ids=lambda o: o.__name__)
@pytest.mark.parametrize("api", [gradient, derivative])
def test_off_the_tie(op, api):
    for f in (stepped(op), two_moving(op)):
        got = api(f, 0.7)
        np.testing.assert_allclose(got[0] if isinstance(got, tuple) else got, fd.derivative(f, 0.7), rtol=1e-7)
