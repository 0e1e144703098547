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


@pytest.mark.parametrize("name", sorted(set(STEPS) - {"int"}))
@pytest.mark.parametrize("mode", [gradient, derivative])
def test_on_a_jump_the_mean_of_the_two_slopes(name, mode):
    """The step jumps at 33.0, the interpolation does not (a kink): judged from the two sides of the point
    (session 54), the mean of the two segments' slopes, as central differences give it (refused before;
    one segment's slope, 57 for 6, before that)."""
    assert 30 * 1.1 == 33.0
    f = _interp(STEPS[name])
    h = 1e-7
    assert float(mode(f, 1.1) if mode is derivative else mode(f, 1.1)[0]) == pytest.approx(
        (f(1.1 + h) - f(1.1 - h)) / (2 * h), rel=1e-6)


@pytest.mark.parametrize("mode", [gradient, derivative])
def test_int_on_a_jump_refused(mode):
    with pytest.raises(OverdubError, match="jump|integer"):
        mode(_interp(STEPS["int"]), 1.1)


@pytest.mark.parametrize("name", sorted(STEPS))
def test_off_the_jumps_right(name):
    f = _interp(STEPS[name])
    for a in (1.1037, 0.517):
        expected = fd_derivative(f, a)
        assert gradient(f, a)[0] == pytest.approx(expected, rel=1e-6)
        assert derivative(f, a) == pytest.approx(expected, rel=1e-6)


def _square_of_the_remainder(fn):
    def f(x):
        k = fn(x)
        return np.sum((x - k) ** 2)
    return f


def test_arrays_on_a_jump_refused_in_both_modes():
    f = _square_of_the_remainder(np.ceil)  # (0 below 2, 1 above: a jump)
    for mode in (gradient, jacfwd):
        with pytest.raises(OverdubError, match="jump"):
            mode(f, np.array([0.25, 2.0, 3.5]))


def test_arrays_on_a_jump_continuous_there_the_mean_of_the_slopes():
    """(x - rint(x))**2 at 2.5 is 0.25 on both sides, its slopes 1 and -1: the mean, 0, as central
    differences give it (session 54: judged from the two sides; refused before)."""
    f = _square_of_the_remainder(np.rint)
    at = np.array([0.25, 2.5, 3.0])
    expected = np.array([2 * (0.25 - 0.0), 0.0, 0.0])
    np.testing.assert_allclose(gradient(f, at)[0], expected, atol=1e-7)
    np.testing.assert_allclose(jacfwd(f, at), expected, atol=1e-7)


def test_a_value_on_a_jump_that_does_not_move_passes():
    def f(x):
        t = x * 0.0 + 3.0  # on floor's jump, but it does not move with x
        return x * np.floor(t)
    assert gradient(f, 1.5)[0] == pytest.approx(3.0)
    assert derivative(f, 1.5) == pytest.approx(3.0)
