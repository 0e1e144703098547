"""Sweep H's (session 53) silent wrongs, each reduced to plain numpy and checked against central differences:
np.interp at a sample position (windpowerlib's power curve at a wind speed on a knot of the curve), and
table lookups by np.searchsorted / np.digitize at a grid point."""

from __future__ import annotations

import math

import numpy as np
import pytest

from contexts import ADContext, gradient, jvp
from overdub.errors import OverdubError
from tests.fd import gradient as fd_gradient

XP = np.array([0.0, 3.0, 5.0, 8.0])
FP = np.array([0.0, 20.0, 200.0, 800.0])


def reverse(f, x):
    with ADContext():
        return np.asarray(gradient(f, x)[0])


def forward(f, x):
    x = np.asarray(x, dtype=float)
    return np.array([jvp(f, (x,), (e,))[1] for e in np.eye(x.size)])


MODES = {"reverse": reverse, "forward": forward}


def _in_x(v):
    return float(np.sum(np.interp(v, XP, FP) * np.array([1.0, 2.0, 3.0])))


def _in_positions(p):
    return float(np.interp(5.0, XP * p[0], FP) + np.interp(3.0, XP + p[1], FP))


def _in_samples(p):
    return float(np.sum(np.interp(np.array([5.0, 8.0, 0.0]), XP, FP * p[0] + p[1]) * np.array([1.0, 2.0, 3.0])))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, x", [
    (_in_x, [5.0, 8.0, 0.0]),      # an inner knot (sides 90 and 200), the last and the first (the end value beyond)
    (_in_x, [3.0, 4.0, 7.9]),
    (_in_positions, [1.0, 0.0]),   # the knots moved under a fixed x
    (_in_samples, [1.0, 0.5]),
], ids=["knots", "off_knots", "positions", "samples"])
def test_interp_at_a_sample_position_is_the_central_slope(f, x, mode):
    """The mean of the two segments' slopes (central differences), as np.max splits a tie: the right
    segment's came out (200 for 145; at the last knot the left one's, 200 for 100)."""
    x = np.array(x)  # (at a kink: the two-point central difference, by a small step)
    np.testing.assert_allclose(MODES[mode](f, x), fd_gradient(f, x, h=1e-6, order=2)[0], rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("mode", MODES)
def test_interp_at_a_jump_is_refused(mode):
    """`left` given at the first sample position, a repeated position: the curve jumps there."""
    def given_left(v):
        return float(np.interp(v[0], XP, FP, left=-30.0))

    def repeated(v):
        return float(np.interp(v[0], np.array([0.0, 3.0, 3.0, 8.0]), FP))
    for f in (given_left, repeated):
        with pytest.raises(OverdubError):
            MODES[mode](f, np.array([0.0 if f is given_left else 3.0]))
    # the samples' derivative is no jump: right
    np.testing.assert_allclose(MODES[mode](lambda p: float(np.interp(0.0, XP, FP * p[0], left=-30.0)),
                                           np.array([1.5])), [0.0], atol=1e-9)


def _lookup(v):
    i = int(np.searchsorted(XP, v[0]))
    i = min(max(i, 1), len(XP) - 1)
    return float(FP[i - 1] + (FP[i] - FP[i - 1]) * (v[0] - XP[i - 1]) / (XP[i] - XP[i - 1]))


def _binned(v):
    coef = np.array([1.0, 2.0, 3.0])
    return float(coef[np.digitize(v[0], np.array([0.0, 1.0, 2.0])) - 1] * v[0])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, at, off", [(_lookup, 5.0, 4.2), (_binned, 1.0, 1.3)], ids=["searchsorted", "digitize"])
def test_a_search_at_a_grid_point_is_judged(f, at, off, mode):
    """The index steps where the value is on the grid: one segment's slope came out (90 where the sides are
    90 and 200; 2.0 across digitize's jump from 1 to 2). Judged from the two sides (session 72), as np.interp's
    knots are: the sides' mean at the interpolant's kink (145), refused across digitize's jump."""
    if f is _lookup:
        x = np.array([at])
        np.testing.assert_allclose(MODES[mode](f, x), fd_gradient(f, x, h=1e-6, order=2)[0], rtol=1e-6)
    else:
        with pytest.raises(OverdubError):
            MODES[mode](f, np.array([at]))
    x = np.array([off])
    np.testing.assert_allclose(MODES[mode](f, x), fd_gradient(f, x)[0], rtol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_a_grid_moving_with_the_value_is_no_jump(mode):
    """Grid and value scaled by one number: the value stays on its grid point, the index does not step."""
    def f(p):
        grid = XP * p[0]
        i = int(np.searchsorted(grid, 5.0 * p[0]))
        return float(FP[i] * p[0] ** 2)
    x = np.array([1.3])
    np.testing.assert_allclose(MODES[mode](f, x), [2 * 200.0 * 1.3], rtol=1e-9)


JUMPS = {  # (sweep I: each gave one side's derivative at the jump, silently, in both modes)
    "floordiv": (lambda v: float((v[0] // 1.0) * v[0]), 2.0, 2.3),
    "mod": (lambda v: float(v[0] % 1.3), 2.6, 2.9),
    "np_mod": (lambda v: float(np.sum(np.mod(v, 2.0))), 2.0, 2.5),
    "np_fmod": (lambda v: float(np.sum(np.fmod(v, 2.0))), 4.0, 4.5),
    "math_fmod": (lambda v: math.fmod(v[0], 2.0) * 3.0, 4.0, 4.5),
    "divmod": (lambda v: float(sum(divmod(v[0], 1.5)) * v[0]), 3.0, 3.2),
    "np_modf": (lambda v: float(np.sum(np.modf(v)[0] * 3.0)), 2.0, 2.3),
    # (session 54: reverse mode noted the jump, but its check by forward mode ran np.fix on duals, whose
    # nondifferentiable rule skipped the jump check: one side's slope, 2 where the value jumps by 3)
    "np_fix": (lambda v: float(np.sum(np.fix(v) * v + np.fix(v))), 2.0, 2.3),
    "np_fix_negative": (lambda v: float(np.sum(np.fix(v) * v)), -2.0, -2.3),
    # (int under another name: reverse mode checked only a call written `int(...)`, 2 silently)
    "int_by_another_name": (lambda v, to_int=int: float(to_int(v[0]) * v[0] + to_int(v[0])), 2.0, 2.3),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(JUMPS))
def test_a_step_at_its_jump_is_refused(name, mode):
    """`//`, `%`, divmod, np.mod, fmod, modf exactly at a jump (a multiple of the divisor, an integer): refused
    as np.floor is; right off it."""
    f, at, off = JUMPS[name]
    with pytest.raises(OverdubError):
        MODES[mode](f, np.array([at]))
    x = np.array([off])
    np.testing.assert_allclose(MODES[mode](f, x), fd_gradient(f, x)[0], rtol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_fmod_at_zero_is_no_jump(mode):
    def f(v):
        return float(np.fmod(v[0], 2.0) * 3.0)
    np.testing.assert_allclose(MODES[mode](f, np.array([0.0])), [3.0])
