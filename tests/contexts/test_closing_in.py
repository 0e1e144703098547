"""Iterations that close in on the boundary of a differentiated test with their step outside the loop's
own body -- a bisection whose step is a helper, a method, a recursion, a `reduce` -- gave 0 for the root's
derivative in every mode, silently (the loop-level detector of `contexts.lowered.bisection` sees only a
loop's own statements). Every mode refuses them now by the test itself: an ordering that a step of relative
size 1e-8 of the inputs flips (forward mode from its tangents; reverse mode notes a test whose gap narrowed
onto it, and forward mode tells). Iterations whose derivative follows their values (Newton's, the secant,
Illinois, a fixed point, a safeguarded Newton) and ordinary branches are differentiated, checked against
finite differences."""

import functools
import math

import numpy as np
import pytest

from contexts import ADContext, SpecialPoint, UnsupportedFunction, derivative, gradient, hessian, jacfwd, jvp
from contexts.lowered.bisection import BisectionRefused
from tests import fd
from tests.contexts.test_bisection_shapes import newton_in_bracket
from tests.modes import assert_scalar_modes


def G(t, x):
    return t ** 3 + t - x  # the root t(x): dt/dx = 1 / (3 t^2 + 1)


def root_slope(x):
    t = newton(x)
    return 1.0 / (3 * t * t + 1)


def step(lo, hi, x):
    mid = 0.5 * (lo + hi)
    if G(mid, x) < 0:
        return mid, hi
    return lo, mid


def bisected(step_of, x, steps=60):
    lo, hi = 0.0, 4.0
    for _ in range(steps):
        lo, hi = step_of(lo, hi, x)
    return 0.5 * (lo + hi)


def by_helper(x):
    return bisected(step, x)


def _recursive(lo, hi, x, n):
    mid = 0.5 * (lo + hi)
    if n == 0:
        return mid
    if G(mid, x) < 0:
        return _recursive(mid, hi, x, n - 1)
    return _recursive(lo, mid, x, n - 1)


def by_recursion(x):
    return _recursive(0.0, 4.0, x, 60)


class Bracket:
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def mid(self):
        return 0.5 * (self.lo + self.hi)

    def shrink(self, x):
        m = self.mid()
        if G(m, x) < 0:
            self.lo = m
        else:
            self.hi = m


def by_method(x):
    b = Bracket(0.0, 4.0)
    for _ in range(60):
        b.shrink(x)
    return b.mid()


def by_reduce(x):
    def halve(br, _):
        m = 0.5 * (br[0] + br[1])
        return (m, br[1]) if G(m, x) < 0 else (br[0], m)
    return functools.reduce(halve, range(60), (0.0, 4.0))[0]


def _against(t, x):
    return t ** 3 + t < x  # (both sides differentiated: the target is the input)


def by_two_sided_test(x):
    return bisected(_split, x)


def _split(lo, hi, x):
    mid = 0.5 * (lo + hi)
    return (mid, hi) if _against(mid, x) else (lo, mid)


def _vector_step(lo, hi, x):
    mid = 0.5 * (lo + hi)
    below = G(mid, x) < 0
    return np.where(below, mid, lo), np.where(below, hi, mid)


def by_vectorised_helper(x):
    lo, hi = np.zeros_like(x), np.full_like(x, 4.0)
    for _ in range(60):
        lo, hi = _vector_step(lo, hi, x)
    return np.sum(lo * lo)


SCALAR = [by_helper, by_recursion, by_method, by_reduce, by_two_sided_test]


@pytest.mark.parametrize("f", SCALAR)
def test_bisection_spread_over_calls_is_refused_by_every_mode(f):
    x = 1.7
    assert f(x) == pytest.approx(newton(x), abs=1e-12)  # (the primal: the root)
    with pytest.raises(SpecialPoint, match="within a step of 1e-08|closing in"):
        with ADContext():
            gradient(f, x)
    for run in (lambda: derivative(f, x), lambda: jvp(f, (x,), (1.0,)), lambda: jacfwd(f, np.float64(x)),
                lambda: hessian(f, x)):
        with pytest.raises(SpecialPoint, match="within a step of 1e-08|closing in"):
            run()


def test_refusal_names_the_test_and_a_fix():
    with pytest.raises(SpecialPoint) as e:
        derivative(by_helper, 1.7)
    text = str(e.value)
    assert "test_closing_in.py" in text and "in step" in text  # (the helper's line, where the test is)
    assert "implicit function theorem" in text


def test_vectorised_bisection_in_a_helper_is_refused():
    x = np.array([0.5, 1.7, 3.0])
    with pytest.raises(SpecialPoint):
        with ADContext():
            gradient(by_vectorised_helper, x)
    with pytest.raises(SpecialPoint):
        jacfwd(by_vectorised_helper, x)


def newton(x):
    t = 1.0
    while True:
        dt = G(t, x) / (3 * t * t + 1)
        t -= dt
        if abs(dt) < 1e-14:
            return t


def newton_relative(x):
    t = 1.0
    for _ in range(100):
        dt = G(t, x) / (3 * t * t + 1)
        t -= dt
        if abs(dt) <= 1e-13 * abs(t):
            break
    return t


def secant(x):
    a, b = 0.0, 4.0
    fa, fb = G(a, x), G(b, x)
    while abs(fb) > 1e-15:
        a, fa, b = b, fb, b - fb * (b - a) / (fb - fa)
        fb = G(b, x)
    return b


def illinois(x):
    a, b = 0.0, 4.0
    fa, fb = G(a, x), G(b, x)
    side, c = 0, a
    for _ in range(200):
        c = (a * fb - b * fa) / (fb - fa)
        fc = G(c, x)
        if abs(fc) < 1e-15:
            break
        if fc * fb > 0:
            b, fb = c, fc
            if side == -1:
                fa /= 2
            side = -1
        else:
            a, fa = c, fc
            if side == 1:
                fb /= 2
            side = 1
    return c


def fixed_point(x):
    t, err = 0.5, 1.0
    while err > 1e-14:
        new = 0.3 * x * math.cos(t)
        err, t = abs(new - t), new
    return t


def running_max(x):
    values = [math.sin(k * x) for k in range(1, 30)]
    top = values[0]
    for v in values:
        if v > top:
            top = v
    return top


def halved_below(x):
    v = x
    while v > 1e-3:
        v = v * 0.5
    return v * x


@pytest.mark.parametrize("f", [newton, newton_relative, secant, illinois, newton_in_bracket])
def test_iterations_following_their_values_are_differentiated(f):
    x = 1.7
    want = root_slope(x)  # (the implicit function's derivative, a closed form)
    with ADContext():
        assert gradient(f, x)[0] == pytest.approx(want, rel=1e-9)
    assert derivative(f, x) == pytest.approx(want, rel=1e-9)
    t = newton(x)
    assert hessian(f, x) == pytest.approx(-6 * t * want ** 3, rel=1e-6)  # (d/dx of 1 / (3 t^2 + 1))


@pytest.mark.parametrize("f", [fixed_point, running_max, halved_below])
def test_ordinary_loops_with_tests_are_differentiated(f):
    assert_scalar_modes(f, 1.7, second=False)


def piecewise(x):
    if x < 1.0:
        return x * x
    return 3.0 * x - 2.0  # (a kink at 1: slopes 2 and 3)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_a_point_a_hair_from_a_branch_boundary():
    # forward mode, which sees the test's rate, refuses a point a step of 1e-12 from the kink, where finite
    # differences straddle it (2.5); reverse mode, which sees a single test (no iteration closing in),
    # gives the derivative of the piece the point is on, exactly
    near = 1.0 + 1e-12
    assert fd.derivative(piecewise, near) == pytest.approx(2.5, rel=1e-4)
    with pytest.raises(SpecialPoint):
        derivative(piecewise, near)
    with ADContext():
        assert gradient(piecewise, near)[0] == 3.0
    assert derivative(piecewise, 1.0 + 1e-6) == pytest.approx(3.0)
    with ADContext():
        assert gradient(piecewise, 1.0 - 1e-6)[0] == pytest.approx(2.0 - 2e-6)


def test_the_step_is_relative_to_the_inputs():
    # (values of size 1e-12 compared with 0: their scale, not a closing-in iteration)
    def tiny(x):
        return x * x if x > 0.0 else -x
    assert derivative(tiny, 3e-12) == pytest.approx(6e-12)
    with ADContext():
        assert gradient(tiny, 3e-12)[0] == pytest.approx(6e-12)


# -- a loose bisection (stopped at `hi - lo < 1e-4`) never comes within 1e-8 of its test's boundary: its
# history does show it (the gap falls a thousandfold visit after visit while the tested value's rate stays)

def loose_by_helper(x):
    lo, hi = 0.0, 4.0
    while hi - lo > 1e-4:
        lo, hi = step(lo, hi, x)
    return 0.5 * (lo + hi)


class MovingBracket:
    def __init__(self, lo, hi, x):
        self.lo, self.hi, self.x = lo, hi, x

    def shrink(self):
        m = 0.5 * (self.lo + self.hi)
        if G(m, self.x) < 0:
            self.lo = m
        else:
            self.hi = m


def loose_by_method(x):
    b = MovingBracket(x - 1.5, x + 1.5, x)  # (its ends move with x: the mix's derivative is 1, not the root's)
    while b.hi - b.lo > 1e-4:
        b.shrink()
    return 0.5 * (b.lo + b.hi)


def _sign_step(lo, hi, x):
    m = 0.5 * (lo + hi)
    if np.sign(G(m, x)) == -1.0:  # (a sign tested, not the residual: never near its boundary)
        return m, hi
    return lo, m


def by_sign(x):
    return bisected(_sign_step, x)


def by_copysign(x):
    lo, hi = 0.0, 4.0
    for _ in range(60):
        m = 0.5 * (lo + hi)
        lo, hi = _choose(math.copysign(1.0, G(m, x)) < 0, lo, hi, m)
    return lo


def _choose(below, lo, hi, m):
    return (m, hi) if below else (lo, m)


@pytest.mark.parametrize("f", [loose_by_helper, loose_by_method, by_sign, by_copysign])
def test_loose_and_sign_tested_bisections_are_refused_by_every_mode(f):
    x = 1.7
    assert f(x) == pytest.approx(newton(x), abs=1e-4)
    refused = (SpecialPoint, UnsupportedFunction, BisectionRefused)  # (by_copysign's loop: the loop detector's)
    with pytest.raises(refused):
        with ADContext():
            gradient(f, x)
    for run in (lambda: derivative(f, x), lambda: jacfwd(lambda v: f(v[0]), np.array([x])),
                lambda: hessian(f, x)):
        with pytest.raises(refused):
            run()


def data_threshold(w):
    # a test visited many times over data, some of it close to the threshold: no iteration closes in
    xs = np.linspace(-1.0, 1.0, 2001)
    total = 0.0
    for v in xs:
        if w * v > 0.3:
            total += w * v - 0.3
    return total


def test_a_test_over_many_data_points_is_no_iteration():
    w = 1.3
    want = fd.derivative(data_threshold, w)
    with ADContext():
        assert gradient(data_threshold, w)[0] == pytest.approx(want, rel=1e-6)
    assert derivative(data_threshold, w) == pytest.approx(want, rel=1e-6)
