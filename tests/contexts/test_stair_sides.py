"""A rounding to digits, a remainder or a floor division exactly on one of its jumps, judged from the two
sides of the point (session 54): refused where the function jumps or kinks there, right where it is
differentiable through it (a range reduction). Before, a rounding at a half-step of its digits gave one
side's derivative silently in every mode (`round(2.5) * v`), and a range reduction by a remainder at a
multiple of its divisor (`sin(fmod(x, 360))` at 360) was refused though continuous."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special as sp

from contexts import derivative, gradient, hessian, jacobian
from overdub.errors import OverdubError
from tests.fd import gradient as fd_gradient, hessian as fd_hessian

MODES = {
    "reverse": lambda f, x: float(gradient(f, x)[0]),
    "forward": lambda f, x: float(derivative(f, x)),
    "jacobian": lambda f, x: float(np.ravel(jacobian(lambda a: f(a[0]), np.array([x])))[0]),
    "jacobian_reverse": lambda f, x: float(np.ravel(jacobian(lambda a: f(a[0]), np.array([x]), mode="reverse"))[0]),
}


def sincosde(x):
    """geographiclib's sine and cosine in degrees, reduced to a quadrant by `round(x / 90)`: round jumps at
    135 but the reduced angle's sine and cosine of its quadrant do not."""
    q = round(x / 90)
    r = math.radians(x - 90 * q)
    s, c = math.sin(r), math.cos(r)
    q = q % 4
    if q == 1:
        s, c = c, -s
    elif q == 2:
        s, c = -s, -c
    elif q == 3:
        s, c = -c, s
    return s + 2 * c


JUMPING = {  # the function jumps (or kinks) where the step does: refused
    "round_half": (lambda v: round(v) * v + round(v), 2.5),
    "round_digits_half": (lambda v: float(np.round(v, 1) * v), 0.25),
    "np_around_half": (lambda v: float(np.around(v * 3.0)), 0.5),
    "mod": (lambda v: v % 1.3, 2.6),
    "floor": (lambda v: math.floor(v) * v, 3.0),
}

_SQUARES = [0.0, 1.0, 4.0, 9.0, 16.0]


def _table(v):
    """Linear interpolation in a table of squares, the segment found by floor: continuous at a knot, its
    slope 3 on the left of 2 and 5 on the right."""
    i = int(np.floor(v))
    return _SQUARES[i] + (_SQUARES[i + 1] - _SQUARES[i]) * (v - i)

THROUGH = {  # the step jumps, the function does not: its derivative, as central differences give it
    "sincosde": (sincosde, 135.0),
    "sincosde_negative": (sincosde, -45.0),
    "fmod_range": (lambda v: math.sin(math.radians(math.fmod(v, 360.0))), 360.0),
    "floordiv_parts": (lambda v: (v // 1.0) * 2.0 + (v - v // 1.0) * 2.0, 2.0),
    "np_mod_phase": (lambda v: float(np.cos(2 * np.pi * np.mod(v, 1.0))), 3.0),
    "floor_phase": (lambda v: math.sin(2 * math.pi * (v - math.floor(v))) + v, 3.0),
    # (a kink: the mean of the two slopes, as at every kink, central differences; reverse mode's one pass
    # gave the right segment's, 5 for 4)
    "table_knot": (_table, 2.0),
    "mod_kink": (lambda v: abs(v % 2.0 - 1.0) + v, 2.0),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(JUMPING))
def test_a_function_jumping_with_its_step_is_refused(name, mode):
    f, at = JUMPING[name]
    with pytest.raises(OverdubError, match="two sides"):
        MODES[mode](f, at)
    off = at + 0.03  # (off the jump: right)
    assert MODES[mode](f, off) == pytest.approx(float(fd_gradient(f, off)[0]), rel=1e-6)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(THROUGH))
def test_a_function_continuous_through_its_step_is_differentiated(name, mode):
    f, at = THROUGH[name]
    assert MODES[mode](f, at) == pytest.approx(float(fd_gradient(f, at, h=1e-4)[0]), rel=1e-7, abs=1e-10)


KINKS = ("table_knot", "mod_kink")


@pytest.mark.parametrize("name", sorted(set(THROUGH) - set(KINKS)))
def test_its_hessian_too(name):
    f, at = THROUGH[name]
    assert float(hessian(f, at)) == pytest.approx(float(fd_hessian(f, at, h=1e-3)), rel=1e-4, abs=1e-7)


@pytest.mark.parametrize("name", ["mod", "round_half", *KINKS])
def test_the_hessian_of_a_jumping_function_is_refused(name):
    """`v % 1.3`'s gradient is 1 on both sides of 2.6: the Hessian's sides judge the function as well; a
    kink's gradient jumps."""
    f, at = JUMPING[name] if name in JUMPING else THROUGH[name]
    with pytest.raises(OverdubError):
        hessian(f, at)


def test_an_array_entry_at_a_half_step_is_refused_and_its_neighbours_alone_are_not():
    def f(a):
        return float(np.sum(np.round(a, 1) * a))
    with pytest.raises(OverdubError, match="two sides"):
        gradient(f, np.array([0.25, 0.31]))
    x = np.array([0.27, 0.31])
    np.testing.assert_allclose(gradient(f, x)[0], fd_gradient(f, x, h=1e-5)[0], rtol=1e-6)


# -- second derivatives at a kink of the first (session 54) --------------------------------------------------
# Forward over reverse runs the adjoints on duals: abs's `sign(x)`, np.maximum's tie weights, a max's hit, at
# the kink, gave the side taken's derivative of the gradient (0, 1, 1.5 or 2) where the gradient jumps and the
# second derivative has no value (second differences grow as 1/h). Refused now in both inner modes; a function
# whose gradient is smooth through the tie is right.

KINKED = {
    "abs": lambda t: abs(t - 3.0) * t,
    "np_abs": lambda t: float(np.abs(t - 3.0)) * t,
    "max": lambda t: max(t, 3.0) * t,
    "min_of_list": lambda t: min([t, 3.0]) * t,
    "np_maximum": lambda t: float(np.maximum(t, 3.0)) * t,
    "relu": lambda t: float(np.sum(np.maximum(np.array([t, 1.0]) - 3.0, 0.0))) * t,
    "np_clip": lambda t: float(np.clip(t, 0.0, 3.0)) * t,
    "np_fmax": lambda t: float(np.fmax(t, 3.0)) * t,
    "np_max_of_array": lambda t: float(np.max(np.array([t, 3.0]))) * t,
    "hypot": lambda t: math.hypot(t - 3.0, 0.0) * t,
    "np_hypot": lambda t: float(np.hypot(t - 3.0, 0.0)) * t,
    "norm_of_the_zero_vector": lambda t: float(np.linalg.norm(np.array([t - 3.0, 0.0]))) * t,
    "floor": lambda t: math.floor(t) * t,
    "np_floor": lambda t: float(np.floor(t)) * t * t,
}

SMOOTH_THROUGH = {  # the gradient does not jump at the tie: judged from the two sides, then differentiated;
    # (f, f'' at 3 in closed form: second differences of |t - 3|**3 are off by 2h)
    "abs_cubed": (lambda t: abs(t - 3.0) ** 3 + t * t, 2.0),
    # (the rules' tie splits, run again at the point, gave 4: each took the moving side)
    "max_plus_min": (lambda t: (max(t, 3.0) + min(t, 3.0)) * t, 2.0),
    "np_maximum_of_itself": (lambda t: float(np.maximum(t, t)) * t * t, 18.0),
    "cube_at_zero": (lambda t: (t - 3.0) ** 3.0 + t, 0.0),  # (pow's rule compares its base with 0)
    "square_at_zero": (lambda t: (t - 3.0) ** 2, 2.0),
    # (the gradient kinks, continuous: the mean of its slopes, 1 and 0)
    "huber_at_its_bend": (lambda t: float(sp.huber(1.0, t - 2.0)), 0.5),
}


@pytest.mark.parametrize("inner", ["auto", "reverse", "forward"])
@pytest.mark.parametrize("name", sorted(KINKED))
def test_a_second_derivative_at_a_kink_is_refused(name, inner):
    f = KINKED[name]
    h = 1e-4
    assert abs(f(3.0 + h) - 2 * f(3.0) + f(3.0 - h)) / h ** 2 > 1e3  # (no second derivative: differences blow up)
    with pytest.raises(OverdubError):
        hessian(f, 3.0, inner=inner)
    assert float(hessian(f, 3.4, inner=inner)) == pytest.approx(float(fd_hessian(f, 3.4, h=1e-3)), rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("inner", ["auto", "reverse", "forward"])
@pytest.mark.parametrize("name", sorted(SMOOTH_THROUGH))
def test_a_second_derivative_smooth_through_a_tie_is_right(name, inner):
    f, expected = SMOOTH_THROUGH[name]
    assert float(hessian(f, 3.0, inner=inner)) == pytest.approx(expected, rel=1e-7, abs=1e-7)


@pytest.mark.parametrize("name", ["abs", "max", "np_maximum", "hypot"])
def test_first_derivatives_at_the_kink_keep_the_convention(name):
    """The gradient at a kink stays the mean of the two slopes, as central differences give it."""
    f = KINKED[name]
    expected = (f(3.0 + 1e-6) - f(3.0 - 1e-6)) / 2e-6
    assert float(gradient(f, 3.0)[0]) == pytest.approx(expected, rel=1e-5, abs=1e-5)
    assert float(derivative(f, 3.0)) == pytest.approx(expected, rel=1e-5, abs=1e-5)
