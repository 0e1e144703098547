"""Found in session 55 by running the third-party suite's functions at special points (rounded inputs, halves):
a special case the user's code takes where two moving values meet (`if y1 == y2:` of two duals of one
derivative) gave that case's derivative silently, in reverse mode and in forward mode's check of it
(scikit-fuzzy's centroid takes a rectangle for a trapezoid where two memberships are equal: 0.8887 for
0.8916 at a membership centred between two grid points). Now a tie of two values moving apart is judged
from the two sides of the point (`lowered.runtime.moving_tie`), in the user's code too; an iteration's exit
at 0 (`if f1 == f0: break` of a secant) is the iteration's (tests/contexts/ad/test_closure_rebinding.py).
Expected values are central differences (tests/fd.py)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from contexts import derivative, gradient, hessian, jacfwd
from overdub.errors import OverdubError
from tests import fd


def special_case_where_two_meet(m):
    y1 = np.exp(-(4.0 - m) ** 2)
    y2 = np.exp(-(5.0 - m) ** 2)
    if y1 == y2:  # (the sum's formula for equal terms: right in value, its derivative is y1's alone)
        return y1 * 2
    return y1 + y2


def rectangle_for_equal_heights(m):
    x = np.linspace(0.0, 10.0, 11)
    y = np.exp(-0.5 * ((x - m) / 2.0) ** 2)
    area = 0.0
    for i in range(1, len(x)):
        y1, y2 = y[i - 1], y[i]
        if y1 == y2:  # a rectangle
            area += (x[i] - x[i - 1]) * y1
        else:  # a trapezoid
            area += 0.5 * (x[i] - x[i - 1]) * (y1 + y2)
    return area


CASES = [(special_case_where_two_meet, 4.5), (rectangle_for_equal_heights, 4.5)]


@pytest.mark.parametrize("f, x", CASES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_reverse_mode_answers_from_the_two_sides(f, x):
    want = fd.derivative(f, x)
    assert math.isclose(gradient(f, x)[0], want, rel_tol=1e-6, abs_tol=1e-8)


@pytest.mark.parametrize("f, x", CASES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_forward_mode_is_right_or_refuses(f, x):
    want = fd.derivative(f, x)
    for run in (lambda: derivative(f, x), lambda: jacfwd(lambda v: f(v[0]), np.array([x]))[0]):
        try:
            got = run()
        except OverdubError:
            continue
        assert math.isclose(float(got), want, rel_tol=1e-6, abs_tol=1e-8)


@pytest.mark.parametrize("mode", ["centroid", "bisector"])
def test_scikit_fuzzy_defuzz_at_a_centre_between_grid_points(mode):
    fuzz = pytest.importorskip("skfuzzy")
    x = np.linspace(0.0, 10.0, 11)

    def f(m):
        return fuzz.defuzz(x, fuzz.gaussmf(x, m, 2.0), mode)
    want = fd.derivative(f, 4.5)
    for run in (lambda: gradient(f, 4.5)[0], lambda: derivative(f, 4.5)):
        try:
            got = run()
        except OverdubError:
            continue
        assert math.isclose(float(got), want, rel_tol=1e-6, abs_tol=1e-8), (mode, got, want)
    assert math.isclose(gradient(f, 4.3)[0], fd.derivative(f, 4.3), rel_tol=1e-6)


# -- a helper's sweep of 15 new packages (session 55) -----------------------------------------------------
# A running extremum's tie (np.maximum.accumulate of [1, 1 + a] at a = 0: empyrical's max_drawdown at a
# return of exactly 0) gave one side's slope in every mode; now a kink judged from the two sides.

@pytest.mark.parametrize("scan", [np.maximum.accumulate, np.fmax.accumulate, np.minimum.accumulate,
                                  np.fmin.accumulate], ids=lambda s: s.__self__.__name__)
def test_running_extremum_at_a_tie(scan):
    def f(a):
        return float(scan(np.array([1.0, 1.0 + a, 0.5 + 2 * a, 3.0 - a]))[1:].sum())
    want = fd.derivative(f, 0.0)
    assert math.isclose(gradient(f, 0.0)[0], want, rel_tol=1e-6, abs_tol=1e-8)
    assert math.isclose(derivative(f, 0.0), want, rel_tol=1e-6, abs_tol=1e-8)
    assert math.isclose(float(jacfwd(lambda v: f(v[0]), np.array([0.0]))[0]), want, rel_tol=1e-6, abs_tol=1e-8)
    assert math.isclose(gradient(f, 0.3)[0], fd.derivative(f, 0.3), rel_tol=1e-6)  # (off the tie: as before)


# atan2 exactly on its branch cut (y = 0 with x < 0: the angle jumps from pi to -pi; navpy's ecef2lla
# longitude on the antimeridian) gave the smooth slope in every mode; refused now, and what is continuous
# through the cut (its cosine, its sine) is judged from the two sides.

@pytest.mark.parametrize("f", [lambda y: np.arctan2(y, -1.0), lambda y: math.atan2(y, -1.0),
                               lambda y: math.degrees(math.atan2(y, -3.0)) + y])
def test_angle_on_its_branch_cut_is_refused(f):
    for run in (lambda: gradient(f, 0.0), lambda: derivative(f, 0.0), lambda: hessian(f, 0.0)):
        with pytest.raises(OverdubError, match="branch cut"):
            run()


@pytest.mark.parametrize("f, x", [(lambda y: math.cos(math.atan2(y, -1.0)), 0.0),
                                  (lambda y: float(np.sin(np.arctan2(y, -2.0))) * 3.0, 0.0),
                                  (lambda x: math.atan2(0.0, x), -1.0),
                                  (lambda y: math.atan2(y, -1.0), 0.3)])
def test_angle_near_its_cut_or_continuous_through_it(f, x):
    want = fd.derivative(f, x)
    assert math.isclose(gradient(f, x)[0], want, rel_tol=1e-6, abs_tol=1e-8)
    assert math.isclose(derivative(f, x), want, rel_tol=1e-6, abs_tol=1e-8)


# Code run natively on duals (a function made by eval, without a source) reached floor, ceil, trunc, round,
# // and % through the duals' own operator methods, which skipped the jump check: math.floor(2 * x) * x at
# 0.5 gave 1.0 in forward mode where the value jumps by 0.5.

def _stair(x):
    return math.floor(x * 2) * x


@pytest.mark.parametrize("source", ["lambda x: stair(x)", "lambda x: math.ceil(x * 2) * x",
                                    "lambda x: round(x) * x", "lambda x: (x // 0.25) * x",
                                    "lambda x: (x % 0.25) * x + math.trunc(x * 4) * 0.0"])
def test_steps_of_duals_run_natively(source):
    f = eval(source, {"stair": _stair, "math": math})
    x = 0.5
    assert abs(f(x + 1e-9) - f(x - 1e-9)) > 1e-3  # (a jump at x: central differences grow as 1/h)
    for run in (lambda: derivative(f, x), lambda: jacfwd(lambda v: f(v[0]), np.array([x]))):
        with pytest.raises(OverdubError):
            run()
    assert math.isclose(derivative(f, 0.6), fd.derivative(f, 0.6), rel_tol=1e-6)


# A subclass's own __init__ calling a dataclass's generated one (`super().__init__(x=x, y=y)`: every model of
# pythermalcomfort) was refused in reverse mode ("its source is not available"); it runs as the dataclass's
# construction does now (`lowered.runtime.dataclass_init`).

@dataclasses.dataclass
class _Model:
    x: float = None
    y: float = 1.0

    def __post_init__(self):
        self.z = self.x * self.y  # (computed from the fields: its derivative flows through the construction)


class _Sub(_Model):
    def __init__(self, x, y):
        super().__init__(x=x, y=y)


def _through_super(t):
    m = _Sub(math.sin(t), 2.0 * t)
    return m.z + m.x * _Sub(t, 3.0).y


def test_dataclass_init_reached_by_super():
    want = fd.derivative(_through_super, 0.7)
    assert math.isclose(gradient(_through_super, 0.7)[0], want, rel_tol=1e-6)
    assert math.isclose(derivative(_through_super, 0.7), want, rel_tol=1e-6)
