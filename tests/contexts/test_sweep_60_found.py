"""Silent wrong derivatives found in session 60, each checked against central differences (or refused):

- a module's array written by position by a C kernel or a ufunc (`np.sin(x, G)`, scipy's
  `_ppoly.evaluate(c, x, xp, dx, extrapolate, G)`) was a constant to the activity analysis of both modes: a
  gradient of 0 for the values the function then read back from it;
- `fmt % x` with the format held by a variable (not a literal the activity reads as text): reverse mode did
  not remember x's text, and `float(fmt % x)` had derivative 0;
- a timedelta64 array scaled by a dual where forward mode runs code on duals (not transformed): the
  unrounded slope where the value is a staircase.
"""

import math

import numpy as np
import pytest
from scipy.interpolate import CubicSpline, _ppoly

import contexts.ad.api as ad_api
from contexts import derivative, gradient, jacfwd
from contexts.lowered.runtime import SpecialPoint, TextRoundTrip
from contexts.rules.numpy._util import UnsupportedCase
from tests import fd

X = np.array([0.3, 0.5, -0.2])
G_SIN = np.zeros(3)
G_PAIR = np.zeros(3)

XS = np.linspace(0.0, 3.0, 7)
INSIDE = np.array([0.1, 0.7, 1.9, 2.8])
C = np.ascontiguousarray(CubicSpline(XS, np.sin(XS)).c[:, :, None])
G_SPLINE = np.zeros((4, 1))


def sin_into_a_global(x):
    np.sin(x, G_SIN)  # (the ufunc's output by position: a module array)
    return np.sum(G_SIN * np.arange(1.0, 4.0))


def hypot_into_a_global(x):
    np.hypot(x, 2.0, G_PAIR)
    return np.sum(G_PAIR ** 2)


def spline_into_a_global(xp):
    _ppoly.evaluate(C, XS, xp, 0, True, G_SPLINE)  # (`Rule.writes`: the kernel's out, by position)
    return np.sum(G_SPLINE[:, 0] * np.arange(1.0, 5.0))


@pytest.mark.parametrize("f, x", [(sin_into_a_global, X), (hypot_into_a_global, X),
                                  (spline_into_a_global, INSIDE)], ids=lambda v: getattr(v, "__name__", ""))
def test_a_module_array_written_by_position_carries_the_derivative(f, x):
    want = fd.gradient(f, x)[0]
    assert np.abs(want).max() > 0.1  # (the case: a derivative that is not zero)
    np.testing.assert_allclose(gradient(f, x)[0], want, rtol=1e-7, atol=1e-9)
    if f is not spline_into_a_global:  # (forward mode refuses the spline kernel's out: no tangent to write)
        np.testing.assert_allclose(jacfwd(f, x), want, rtol=1e-7, atol=1e-9)


def formatted_by_a_variable(a):
    fmt = "%.6f"
    return float(fmt % a) * a


def formatted_with_a_tuple(a):
    fmt = "%.4f|%s"
    return float((fmt % (a, "unit")).split("|")[0]) + a


@pytest.mark.parametrize("f", [formatted_by_a_variable, formatted_with_a_tuple], ids=lambda f: f.__name__)
def test_a_format_held_by_a_variable_is_text_in_reverse_mode(f, monkeypatch):
    monkeypatch.setattr(ad_api, "BY_FORWARD", [])  # (reverse mode alone: it gave 0 for the text's part)
    with pytest.raises(TextRoundTrip):
        gradient(f, 1.3)


def test_a_remainder_by_a_variable_is_still_differentiated():
    def remainder(a):
        n = 7.0
        return n % a + a % 0.75
    assert gradient(remainder, 2.0)[0] == pytest.approx(fd.derivative(remainder, 2.0), rel=1e-6)
    assert derivative(remainder, 2.0) == pytest.approx(fd.derivative(remainder, 2.0), rel=1e-6)

    def counted(a):
        fmt = "%.3f|%s"
        return a * len(fmt % (a, "x"))  # (the text's length: no derivative of its own)
    assert gradient(counted, 2.0) == (7.0,)


def test_a_duration_scaled_by_a_dual_is_refused_where_code_runs_on_duals():
    """Forward mode runs some code on its duals as they are (the engine's own helpers, code it does not
    transform): their arithmetic refuses a duration scaled by a differentiated number, as the rules do."""
    from contexts.forward.dual import Dual, Tag
    t = np.array([1, 2, 3], dtype="m8[s]")
    d = Dual(0.613, 1.0, Tag())
    for scaled in (lambda: t * d, lambda: d * t, lambda: t / d):
        with pytest.raises(UnsupportedCase, match="duration"):
            scaled()
    assert (t / np.timedelta64(1, "s") * d).tangent.tolist() == [1.0, 2.0, 3.0]  # (seconds as numbers: fine)


def test_lapack_gbsv_factors_refused_in_forward_mode_too():
    """?gbsv's LU factors move with the band: forward mode gave them a tangent of None (a derivative of 0,
    silently, where reverse mode refuses their cotangent); now refused where used, the solution right."""
    from scipy.linalg import lapack
    ab = np.array([[0.0] * 6, [0.0] + [1.0] * 5, [4.0] * 6, [1.0] * 5 + [0.0]])
    b = np.ones((6, 1))
    with pytest.raises(UnsupportedCase, match="factors"):
        jacfwd(lambda v: np.sum(lapack.dgbsv(1, 1, v, b)[0]), ab)
    solution = lambda v: np.sum(lapack.dgbsv(1, 1, v, b)[2] * np.arange(1.0, 7.0)[:, None])  # noqa: E731
    np.testing.assert_allclose(jacfwd(solution, ab), fd.gradient(solution, ab)[0], rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("f, x, sign", [(np.arcsin, 1.0, 1), (np.arcsin, -1.0, 1), (np.arccos, 1.0, -1),
                                        (np.arccos, -1.0, -1), (lambda t: -np.arcsin(t), 1.0, -1),
                                        (lambda t: 2.0 * np.cos(np.arcsin(t)), 1.0, -1)],
                         ids=["arcsin_1", "arcsin_-1", "arccos_1", "arccos_-1", "minus_arcsin", "cos_arcsin"])
def test_the_sign_of_an_infinite_slope_at_the_ends_of_arcsin_and_arccos(f, x, sign):
    """np.arcsin's partial was 1 / (sqrt(-(x - 1)) sqrt(1 + x)): at x = 1, sqrt(-0.0) is -0.0 and the partial
    -inf, so -arcsin(x) came out +inf where its slope falls to -inf (one-sided differences inside the domain)."""
    h = 1e-9
    inside = x - h if x > 0 else x + h
    with np.errstate(all="ignore"):
        slope = (f(x) - f(inside)) / (x - inside)
        assert np.sign(slope) == sign and abs(slope) > 1e3
        assert gradient(f, x)[0] == sign * np.inf
        assert derivative(f, x) == sign * np.inf


def _skew(w):
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def _exp3(w, norm):
    """modern_robotics' MatrixExp3: the identity where the rotation's angle is below 1e-6."""
    theta = norm(w)
    if abs(theta) < 1e-6:
        return np.eye(3)
    k = _skew(w / theta)
    return np.eye(3) + np.sin(theta) * k + (1 - np.cos(theta)) * k @ k


NORMS = {"np.linalg.norm": np.linalg.norm, "math.hypot": lambda w: math.hypot(*w),
         "np.hypot": lambda w: np.hypot(np.hypot(w[0], w[1]), w[2])}


@pytest.mark.parametrize("norm", NORMS, ids=list(NORMS))
def test_a_tolerance_branch_at_a_cone_tip_is_refused_in_both_modes(norm, monkeypatch):
    """The rotation's derivative at 0 is the skew matrix of the direction; the code returns the identity on a
    ball of radius 1e-6, whose derivative is 0 (reverse mode gave it: the norm's value only steered, so its
    adjoint, which notes the cone's tip, never ran). Forward mode judges the tip from its sides and refuses a
    special case on a region thinner than central differences see; reverse mode now notes the tip when it
    records the norm (and forward mode is not asked to answer for it: a judged special point)."""
    weights = np.array([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0], [0.0, 1.5, -0.7]])
    f = lambda w: np.sum(_exp3(w, NORMS[norm]) * weights)  # noqa: E731
    assert np.abs(fd.gradient(f, np.zeros(3))[0]).max() > 0.1
    for run in (lambda: gradient(f, np.zeros(3)), lambda: jacfwd(f, np.zeros(3))):
        with pytest.raises(SpecialPoint):
            run()
    w = np.array([0.3, -0.2, 0.5])  # (off the tip: right in both)
    np.testing.assert_allclose(gradient(f, w)[0], fd.gradient(f, w)[0], rtol=1e-7)
    np.testing.assert_allclose(jacfwd(f, w), fd.gradient(f, w)[0], rtol=1e-7)


def test_a_compared_value_whose_rate_is_nan_is_judged_in_forward_mode():
    f = lambda w: 1.0 if np.sqrt(np.sum(w * w)) < 1e-6 else w[0]  # noqa: E731
    # (since session 70 np.sqrt of a number at 0 with a rate of 0 is judged from the sides as math.sqrt is: the
    # special case, on a region thinner than central differences see, is refused by that judgement)
    with np.errstate(all="ignore"), pytest.raises(SpecialPoint, match="not a number|singular point"):
        jacfwd(f, np.zeros(2))
    assert jacfwd(f, np.array([0.5, 0.0])).tolist() == [1.0, 0.0]
