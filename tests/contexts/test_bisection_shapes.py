"""Bisections written in every shape the generator of session 27 found missed (each gave 0 for the root's
derivative in every mode, silently): each is refused by every mode now, with the bisection named, or (the
shapes `lowered.implicit` states as roots) differentiated as the root it finds; loops that
only look alike (a counter under a test, an argmax's index, a step halved when a test fails, Newton's iterate
kept in a bracket) are differentiated."""

import numpy as np
import pytest

from contexts import ADContext, derivative, gradient, hessian, jacfwd
from contexts.lowered.bisection import BisectionRefused
from overdub.errors import OverdubError
from tests import fd


def G(y, x):
    return y ** 3 + y - x  # the root y(x): dy/dx = 1 / (3 y^2 + 1)


class Bracket:
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi


def by_tuples(x):
    lo, hi = 0.0, 2.0
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        if G(mid, x) > 0:
            lo, hi = lo, mid
        else:
            lo, hi = mid, hi
    return lo


def by_conditional_expressions(x):
    lo, hi = 0.0, 2.0
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        hi = mid if G(mid, x) > 0 else hi
        lo = lo if G(mid, x) > 0 else mid
    return lo


def by_tuple_of_conditionals(x):
    lo, hi = 0.0, 2.0
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if G(mid, x) > 0 else (mid, hi)
    return lo


def by_elif(x):
    lo, hi = 0.0, 2.0
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        g = G(mid, x)
        if g > 0:
            hi = mid
        elif g < 0:
            lo = mid
        else:
            break
    return lo


def by_continue(x):
    lo, hi = 0.0, 2.0
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        if G(mid, x) > 0:
            hi = mid
            continue
        lo = mid
    return lo


def by_two_ifs(x):
    lo, hi = 0.0, 2.0
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        g = G(mid, x)
        if g > 0:
            hi = mid
        if g <= 0:
            lo = mid
    return lo


def by_augmented(x):
    lo, hi = 0.0, 2.0
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        if G(mid, x) > 0:
            hi -= hi - mid
        else:
            lo += mid - lo
    return lo


def by_min_max(x):
    lo, hi = 0.0, 2.0
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        if G(mid, x) > 0:
            hi = min(hi, mid)
        else:
            lo = max(lo, mid)
    return lo


def by_blend(x):
    lo, hi = 0.0, 2.0
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        c = float(G(mid, x) > 0)
        hi = c * mid + (1 - c) * hi
        lo = c * lo + (1 - c) * mid
    return lo


def by_width(x):
    lo, hi = 0.0, 2.0
    for _ in range(50):
        w = (hi - lo) / 2
        mid = lo + w
        if G(mid, x) > 0:
            hi = mid
        else:
            lo = mid
    return lo


def by_local_constant(x):
    half = 0.5
    lo, hi = 0.0, 2.0
    for _ in range(50):
        mid = lo + (hi - lo) * half
        if G(mid, x) > 0:
            hi = mid
        else:
            lo = mid
    return lo


def golden_section(x):
    invphi = 0.6180339887498949
    a, b = 0.0, 2.0
    for _ in range(75):
        c = b - (b - a) * invphi
        d = a + (b - a) * invphi
        if abs(G(c, x)) < abs(G(d, x)):
            b = d
        else:
            a = c
    return 0.5 * (a + b)


def by_wrapped_values(x):
    lo, hi = 0.0, 2.0
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        if G(mid, x) > 0:
            hi = float(mid)
        else:
            lo = mid + 0.0
    return lo


def in_a_list(x):
    br = [0.0, 2.0]
    for _ in range(50):
        mid = 0.5 * (br[0] + br[1])
        if G(mid, x) > 0:
            br[1] = mid
        else:
            br[0] = mid
    return br[0]


def in_a_list_by_index(x):
    br = [0.0, 2.0]
    for _ in range(50):
        mid = 0.5 * (br[0] + br[1])
        br[int(G(mid, x) > 0)] = mid
    return br[0]


def in_a_dict(x):
    b = {"lo": 0.0, "hi": 2.0}
    for _ in range(50):
        mid = 0.5 * (b["lo"] + b["hi"])
        if G(mid, x) > 0:
            b["hi"] = mid
        else:
            b["lo"] = mid
    return b["lo"]


def in_an_object(x):
    b = Bracket(0.0, 2.0)
    for _ in range(50):
        mid = 0.5 * (b.lo + b.hi)
        if G(mid, x) > 0:
            b.hi = mid
        else:
            b.lo = mid
    return b.lo


def with_its_signs(x):
    lo, hi = 0.0, 2.0
    flo = G(lo, x)
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        fm = G(mid, x)
        if (fm > 0) == (flo > 0):
            lo, flo = mid, fm
        else:
            hi = mid
    return lo


SCALAR = [by_tuples, by_conditional_expressions, by_tuple_of_conditionals, by_elif, by_continue, by_two_ifs,
          by_augmented, by_min_max, by_blend, by_width, by_local_constant, golden_section, by_wrapped_values,
          in_a_list, in_a_list_by_index, in_a_dict, in_an_object, with_its_signs]


def arrays_by_select(x):
    lo, hi = np.zeros(3), np.full(3, 2.0)
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        pos = G(mid, x) > 0
        hi = np.select([pos], [mid], hi)
        lo = np.select([~pos], [mid], lo)
    return np.sum(lo)


def arrays_by_putmask(x):
    lo, hi = np.zeros(3), np.full(3, 2.0)
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        pos = G(mid, x) > 0
        np.putmask(hi, pos, mid)
        np.putmask(lo, ~pos, mid)
    return np.sum(lo)


def arrays_by_place(x):
    lo, hi = np.zeros(3), np.full(3, 2.0)
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        pos = G(mid, x) > 0
        np.place(hi, pos, mid[pos])
        np.place(lo, ~pos, mid[~pos])
    return np.sum(lo)


def arrays_into_slices(x):
    lo, hi = np.zeros(3), np.full(3, 2.0)
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        pos = G(mid, x) > 0
        hi[:] = np.where(pos, mid, hi)
        lo[:] = np.where(pos, lo, mid)
    return np.sum(lo)


def arrays_wrapped(x):
    lo, hi = np.zeros(3), np.full(3, 2.0)
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        pos = G(mid, x) > 0
        hi = np.where(pos, mid, hi) + 0.0
        lo = np.asarray(np.where(pos, lo, mid))
    return np.sum(lo)


def arrays_blended(x):
    lo, hi = np.zeros(3), np.full(3, 2.0)
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        pos = (G(mid, x) > 0).astype(float)
        hi = hi + (mid - hi) * pos
        lo = lo + (mid - lo) * (1.0 - pos)
    return np.sum(lo)


ARRAYS = [arrays_by_select, arrays_by_putmask, arrays_by_place, arrays_into_slices, arrays_wrapped, arrays_blended]


# the shapes `lowered.implicit` states as the root they find (the `if` assigning the probe to the two ends,
# its test on the probe and on what the loop does not change): right in every mode; the others refused
STATED = {by_tuples, by_elif, by_width, by_local_constant, with_its_signs}


@pytest.mark.parametrize("f", SCALAR)
def test_scalar_bisection_right_or_refused(f):
    x = 1.3
    first, second = _root_derivatives(f(x))
    assert abs(fd.derivative(f, x) - first) < 1e-5  # (what 0 was not)
    for mode, want in ((gradient, first), (derivative, first), (hessian, second)):
        if f in STATED:
            got = mode(f, x)
            assert np.ravel(got)[0] == pytest.approx(want, rel=1e-8), mode.__name__
            continue
        with pytest.raises(BisectionRefused if mode is derivative else OverdubError, match="bisection"):
            mode(f, x)


@pytest.mark.parametrize("f", ARRAYS)
def test_array_bisection_refused(f):
    x = np.array([0.7, 1.3, 1.9])
    with pytest.raises(OverdubError, match="bisection"):
        gradient(f, x)
    with pytest.raises(BisectionRefused, match="bisection"):
        jacfwd(f, x)


# -- loops that only look alike -----------------------------------------------------------------

def counted_under_a_test(x):
    k, s = 0, 0.0
    for i in range(20):
        if np.sin(x * i) > 0:
            k += 1
            s = s + x * i
    return s * k


def argmax_index(x):
    v = np.array([np.sin(x), np.cos(x), x * 0.3])
    best = 0
    for i in range(3):
        if v[i] > v[best]:
            best = i
    return v[best] * 2.0


def step_halved(x):
    y, h = 1.0, 0.5
    for _ in range(12):
        trial = y + h * np.cos(x * y)
        if abs(trial - y) > 0.2:
            h = h * 0.5
        y = trial
    return y


def newton_in_bracket(x):
    lo, hi, y = 0.0, 2.0, 1.0
    for _ in range(30):
        y_new = y - G(y, x) / (3 * y * y + 1)
        if not lo < y_new < hi:
            y_new = 0.5 * (lo + hi)
        if G(y_new, x) > 0:
            hi = y_new
        else:
            lo = y_new
        y = y_new
    return y


@pytest.mark.parametrize("f", [counted_under_a_test, argmax_index, step_halved, newton_in_bracket])
def test_lookalikes_differentiated(f):
    x = 1.3
    want = fd.derivative(f, x)
    assert gradient(f, x)[0] == pytest.approx(want, rel=1e-5, abs=1e-8)
    assert derivative(f, x) == pytest.approx(want, rel=1e-5, abs=1e-8)


# -- the test reading the input through a closure, a bracket shaped like the input ---------------------

def bisection_closure_test(x):
    def g(y):
        return y ** 3 + y - x

    lo, hi = 0.0, 2.0
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if g(mid) > 0 else (mid, hi)
    return lo


def bisection_lambda_test(x):
    g = lambda y: y ** 3 + y - x  # noqa: E731
    half = 0.5
    lo, hi = 0.0, 2.0
    for _ in range(50):
        mid = lo + (hi - lo) * half
        if g(mid) > 0:
            hi = mid
        else:
            lo = mid
    return lo


def arrays_shaped_like_the_input(x):
    lo, w = np.zeros_like(x), np.full(x.shape, 2.0)
    for _ in range(50):
        w = w / 2
        lo = np.where(G(lo + w, x) <= 0, lo + w, lo)
    return np.sum(lo)


def _root_derivatives(y):
    return 1 / (3 * y ** 2 + 1), -6 * y / (3 * y ** 2 + 1) ** 3  # (y^3 + y = x)


def test_bisection_through_a_closure_refused():
    f, x = bisection_closure_test, 1.3  # (tuples assigning the bracket: not stated as a root)
    assert abs(fd.derivative(f, x) - 1 / (3 * f(x) ** 2 + 1)) < 1e-5
    for mode in (gradient, derivative, hessian, lambda f, x: jacfwd(f, np.array(x))):
        with pytest.raises(OverdubError, match="bisection"):
            mode(f, x)


def test_bisection_through_a_lambda_differentiated_as_its_root():
    # the test calls a lambda capturing x: handed to the root's h, its cotangent reaches x through the capture
    f, x = bisection_lambda_test, 1.3
    first, second = _root_derivatives(f(x))
    assert abs(fd.derivative(f, x) - first) < 1e-5
    assert gradient(f, x)[0] == pytest.approx(first, rel=1e-9)
    assert derivative(f, x) == pytest.approx(first, rel=1e-9)
    assert jacfwd(f, np.array(x)) == pytest.approx(first, rel=1e-9)
    assert hessian(f, x) == pytest.approx(second, rel=1e-7)


def test_bisection_of_arrays_shaped_like_the_input_refused():
    x = np.array([0.45, 1.1, 1.6])
    for mode in (gradient, jacfwd):
        with pytest.raises(OverdubError, match="bisection"):
            mode(arrays_shaped_like_the_input, x)


def with_a_name_bound_before(x):
    mid = x * 1.0  # (the loop binds mid afresh before reading it: what it held before does not count)
    lo, hi = 0.0, 2.0
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        if G(mid, x) > 0:
            hi = mid
        else:
            lo = mid
    return lo + 0.0 * mid


def test_bisection_with_a_name_bound_before_differentiated_as_its_root():
    f, x = with_a_name_bound_before, 0.9
    first, second = _root_derivatives(f(x))
    assert gradient(f, x)[0] == pytest.approx(first, rel=1e-9)
    assert derivative(f, x) == pytest.approx(first, rel=1e-9)
    assert hessian(f, x) == pytest.approx(second, rel=1e-7)


LAYERS = {1: {"base": 0.0, "top": 1.0}, 2: {"base": 1.0, "top": 2.5}, 3: {"base": 2.5, "top": 9.0}}


class Layers:
    """ambiance's layer numbers: each height's layer counted into an index by masks (no bracket: a test's outcome
    times a constant, added up), then a formula per layer. Forward mode refused it as a bisection (session 46)."""
    SLOPES = np.array([0.0, -0.5, 0.0, 0.3])

    def __init__(self, h):
        self.h = np.asarray(h, dtype=float)
        if (self.h < -1.0).any():
            raise ValueError("below the lowest layer")
        self.H = self.h * 1.0
        self.nums = self._layer_nums()

    def _layer_nums(self):
        layers = LAYERS
        nums = np.zeros_like(self.H)
        for i in layers.keys():
            inside = (self.H >= layers[i]["base"]) & (self.H < layers[i]["top"])
            nums += inside.astype(int) * i
        inside = (self.H >= 9.0).astype(int)  # (the special case above the last layer)
        nums += inside * 3
        return nums.astype(int)

    def value(self):
        k = self.nums
        return np.exp(self.SLOPES[k] * self.H) + self.H ** 2


def by_layers(h):
    return np.sum(Layers(h).value())


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_layers_counted_by_masks_are_no_bisection(mode):
    h = np.array([0.5, 1.7, 4.0])
    slopes = Layers.SLOPES[[1, 2, 3]]
    want = slopes * np.exp(slopes * h) + 2 * h  # (a formula per layer: its derivative)
    with ADContext():
        got = gradient(by_layers, h)[0] if mode == "reverse" else jacfwd(by_layers, h)
    assert np.allclose(got, want, rtol=1e-12)
