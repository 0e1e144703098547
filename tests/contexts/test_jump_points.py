"""A step (floor, ceil, trunc, rint, int()) of a differentiated value exactly on one of its jumps. Found by
a sweep (scikit-dsp-comm's `farrow_resample` at rate 1.1: `int(np.floor(n * Ts_new / Ts_old))` lands on 11.0,
22.0, ...): linear interpolation at a moving position is continuous with a kink at every integer, and both
modes returned one side's derivative, silently (57 where central differences give 6). Refused now in every
mode where the value moves off the jump; right off the jumps (checked against central differences), and
where the value on a jump does not move."""

from __future__ import annotations

import math

import numpy as np
import pytest

from contexts import derivative, gradient, jacfwd
from overdub.errors import OverdubError
from tests.fd import derivative as fd_derivative

V = np.array([0.3, -1.2, 0.7, 2.0, -0.4, 1.1, 0.5, -0.9] * 6)


def _interp(step):
    def interp(a):
        t = 30 * a  # 33.0 exactly at a = 1.1
        k = int(step(t))
        mu = t - k
        return mu * V[k + 1] + (1 - mu) * V[k]  # continuous in t, a kink at each integer
    return interp


STEPS = {"np.floor": np.floor, "math.floor": math.floor, "int": lambda t: t, "np.trunc": np.trunc,
         "math.trunc": math.trunc}


@pytest.mark.parametrize("name", sorted(STEPS))
@pytest.mark.parametrize("mode", [gradient, derivative])
def test_on_a_jump_refused(name, mode):
    assert 30 * 1.1 == 33.0
    with pytest.raises(OverdubError, match="jump"):
        mode(_interp(STEPS[name]), 1.1)


@pytest.mark.parametrize("name", sorted(STEPS))
def test_off_the_jumps_right(name):
    f = _interp(STEPS[name])
    for a in (1.1037, 0.517):
        expected = fd_derivative(f, a)
        assert gradient(f, a)[0] == pytest.approx(expected, rel=1e-6)
        assert derivative(f, a) == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("fn", [np.ceil, np.rint])
def test_arrays_on_a_jump_refused_in_both_modes(fn):
    at = np.array([0.25, 2.5, 3.0]) if fn is np.rint else np.array([0.25, 2.0, 3.5])  # (rint jumps at halves)

    def f(x):
        k = fn(x)
        return np.sum((x - k) ** 2)
    for mode in (gradient, jacfwd):
        with pytest.raises(OverdubError, match="jump"):
            mode(f, at)


def test_a_value_on_a_jump_that_does_not_move_passes():
    def f(x):
        t = x * 0.0 + 3.0  # on floor's jump, but it does not move with x
        return x * np.floor(t)
    assert gradient(f, 1.5)[0] == pytest.approx(3.0)
    assert derivative(f, 1.5) == pytest.approx(3.0)
