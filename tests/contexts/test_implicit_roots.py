"""Bisections stated as the root they find (`contexts.lowered.implicit`, session 45): until now every mode
refused a loop narrowing a bracket by a differentiated test (its derivative as code is a fixed mix of the
bracket's starting ends). Each loop of the form handled is now differentiated as its root, by the implicit
function theorem, in reverse mode, forward mode, hessian and local sparsity; where the bracket does not hold a
root the test crosses smoothly (a loop stopped early, no sign change, a jump or a kink of the test) and where
the loop leaves other values behind (a temporary read after it, a value stored, a return from inside), it is
refused. Every derivative is checked against finite differences of the function itself (its bisection runs to
1e-13, far below the differences' step) or a closed form.
"""

import math

import numpy as np
import pytest

from contexts import ADContext, derivative, gradient, hessian, jacfwd, value_and_gradient
from overdub.errors import OverdubError
from tests import fd


class Model:
    def __init__(self, k, c):
        self.k = k
        self.__c = c

    def g(self, m):
        return m ** 3 + self.k * m

    def solve(self, target):
        lo, hi = 0.0, 4.0
        while hi - lo > 1e-13:
            mid = 0.5 * (lo + hi)
            if self.g(mid) + self.__c > target:
                hi = mid
            else:
                lo = mid
        return mid

def obj(x):
    return Model(x, 0.5).solve(3.0)          # r^3 + x r + 0.5 = 3

def obj_target(x):
    return Model(1.2, 0.5).solve(x * 2.0)    # r^3 + 1.2 r + 0.5 = 2x

def with_dict(x):
    p = {"k": x, "c": 0.5}
    lo, hi = 0.0, 4.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        v = mid ** 3 + p["k"] * mid + p["c"]
        if v < 3.0:
            lo = mid
        else:
            hi = mid
    return lo * p["k"]

def nested(x):
    k = x * 1.0
    def solve(t):
        lo, hi = 0.0, 4.0
        while hi - lo > 1e-13:
            mid = 0.5 * (lo + hi)
            if mid ** 3 + k * mid > t:
                hi = mid
            else:
                lo = mid
        return lo
    return solve(2.5) + solve(x)

def in_outer_loop(x):
    total = 0.0
    for t in (1.0, 2.0, 3.0):
        lo, hi = 0.0, 4.0
        while hi - lo > 1e-13:
            mid = 0.5 * (lo + hi)
            if mid ** 3 + x * mid > t:
                hi = mid
            else:
                lo = mid
        total = total + lo * t
    return total

def decreasing(x):
    lo, hi = 0.0, 3.0
    while abs(hi - lo) > 1e-13:
        mid = (lo + hi) / 2
        if math.exp(-mid) * x - 0.1 > 0:
            lo = mid
        else:
            hi = mid
    return hi          # exp(-r) x = 0.1 -> r = log(10 x), dr/dx = 1/x

def root_then_more(x):
    lo, hi = 0.0, 3.0
    while hi - lo > 1e-13:
        mid = (lo + hi) / 2
        if mid * mid >= x:
            hi = mid
        else:
            lo = mid
    r = (lo + hi) / 2
    return math.sin(r) * x + r ** 2

def temp_read_after(x):
    lo, hi = 0.0, 3.0
    while hi - lo > 1e-13:
        mid = (lo + hi) / 2
        v = mid * mid
        if v >= x:
            hi = mid
        else:
            lo = mid
    return lo + v   # v: the loop's temporary, read after it: not stated (refused)

def stored_in_loop(x):
    hist = []
    lo, hi = 0.0, 3.0
    while hi - lo > 1e-13:
        mid = (lo + hi) / 2
        hist.append(mid)
        if mid * mid >= x:
            hi = mid
        else:
            lo = mid
    return lo + 0.0 * hist[-1]

def returns_inside(x):
    lo, hi = 0.0, 3.0
    while True:
        mid = (lo + hi) / 2
        if hi - lo < 1e-13:
            return mid
        if mid * mid >= x:
            hi = mid
        else:
            lo = mid

def step_function(x):
    lo, hi = 0.0, 3.0
    while hi - lo > 1e-13:
        mid = (lo + hi) / 2
        if (1.0 if mid > x else 0.0) + 0.01 * mid > 0.5:
            hi = mid
        else:
            lo = mid
    return lo

def kink(x):
    lo, hi = -3.0, 3.0
    while hi - lo > 1e-13:
        mid = (lo + hi) / 2
        if abs(mid - x) + (mid - x) > 0:
            hi = mid
        else:
            lo = mid
    return lo


def loose(x):
    lo, hi = 0.0, 3.0
    for _ in range(5):  # (stopped early: its bracket is 3/32 wide)
        mid = (lo + hi) / 2
        if mid * mid >= x:
            hi = mid
        else:
            lo = mid
    return lo


def no_root_in_bracket(x):
    lo, hi = 0.0, 1.0  # (sqrt(x) > 1: the loop runs to the bracket's end)
    while hi - lo > 1e-13:
        mid = (lo + hi) / 2
        if mid * mid >= x:
            hi = mid
        else:
            lo = mid
    return lo


def crude_search(x):
    lo, hi = 0.0, x
    for _ in range(3):  # (3 steps on a constant threshold: a staircase of x, not a root; refused, not 0)
        mid = (lo + hi) / 2
        if mid * mid > 2.0:
            hi = mid
        else:
            lo = mid
    return lo


def bracket_moves_root_does_not(x):
    lo, hi = x - 3.0, x + 3.0  # (the root, 2^(1/3), does not move with x: 0, where the code as written gave 1)
    while hi - lo > 1e-13:
        mid = (lo + hi) / 2
        if mid * mid * mid > 2.0:
            hi = mid
        else:
            lo = mid
    return lo * 1.0


def _is_positive(v):
    return v > 0


def signs_as_psypy_compares_them(x):
    lo, hi = 0.0, 3.0  # (psypy's `__is_positive(y) == __is_positive(ya)`, ya the value at an end)
    m = (lo + hi) / 2
    while hi - lo > 1e-13:
        ya = lo ** 3 + x * lo - 2.0
        y = m ** 3 + x * m - 2.0
        if _is_positive(y) == _is_positive(ya):
            lo = m
        else:
            hi = m
        m = (lo + hi) / 2
    return m


def sign_of_a_product(x):
    a, b = 0.0, 3.0
    fa = a ** 3 + x * a - 2.0
    for _ in range(80):
        m = (a + b) / 2
        fm = m ** 3 + x * m - 2.0
        if fm * fa > 0:  # (fa carried from the end it belongs to)
            a = m
            fa = fm
        else:
            b = m
    return a


def cubic_root_slope(x):
    r = next(v.real for v in np.roots([1.0, 0.0, x, -2.0]) if abs(v.imag) < 1e-9)
    return -r / (3 * r * r + x)  # (r^3 + x r = 2)


XA = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
YA = [0.0, 0.8, 0.9, 0.1, -0.7, -1.0]


def table_search(x, n=6):
    klo, khi = 0, n - 1  # (fluids' splint: indices of a table; the interpolation after it carries the derivative)
    while khi - klo > 1:
        k = int((khi + klo) / 2)
        if XA[k] > x:
            khi = k
        else:
            klo = k
    t = (x - XA[klo]) / (XA[khi] - XA[klo])
    return YA[klo] * (1 - t) + YA[khi] * t * t


class Step:
    def __init__(self, k):
        self.k = k

    def value(self, t):
        return t ** 3 + self.k * t

    def solve_time(self, target, iterations=60):  # (py_ballisticcalc's TrajectoryStep.solve_time)
        lo, hi = 0.0, 4.0
        flo = self.value(lo) - target
        fhi = self.value(hi) - target
        if flo == 0.0:
            return lo
        if flo * fhi > 0.0:
            raise ValueError("not bracketed")
        for _ in range(iterations):
            mid = (lo + hi) * 0.5
            fmid = self.value(mid) - target
            if fmid == 0.0:
                return mid
            if flo * fmid <= 0.0:
                hi = mid
                fhi = fmid
            else:
                lo = mid
                flo = fmid
        return (lo + hi) * 0.5


def carried_values_and_an_exit(x):
    return Step(x).solve_time(2.0 + x)


def halved_bisect(f, a, b, args=(), xtol=1e-12, rtol=2.220446049250313e-16, maxiter=100):
    """scipy's C bisect as fluids ports it (`fluids.numerics.bisect`): one end moved by a half-width."""
    fa = f(a, *args)
    fb = f(b, *args)
    if fa * fb > 0.0:
        raise ValueError("f(a) and f(b) must have different signs")
    dm = b - a
    for i in range(maxiter):
        dm *= 0.5
        xm = a + dm
        fm = f(xm, *args)
        if fm * fa >= 0.0:
            a = xm
        abs_dm = abs(dm)
        if fm == 0.0:
            return xm
        elif abs_dm < xtol + rtol * abs_dm:
            return xm
    raise ValueError("no convergence")


def _cubic(m, k, c):
    return m ** 3 + k * m - c


def halving(x):
    return halved_bisect(_cubic, 0.0, 4.0, args=(x, 2.0)) * x


def halving_loosely(x):
    return halved_bisect(_cubic, 0.0, 4.0, args=(x, 2.0), xtol=1e-2)


def decreasing_closed_form(x):
    return 1.0 / x  # (exp(-r) x = 0.1: r = log(10 x))


RIGHT = [obj, obj_target, with_dict, nested, in_outer_loop, decreasing, root_then_more, bracket_moves_root_does_not,
         signs_as_psypy_compares_them, sign_of_a_product, table_search, returns_inside, carried_values_and_an_exit, halving]
REFUSED = [kink, step_function, stored_in_loop, halving_loosely, temp_read_after, loose, no_root_in_bracket,
           crude_search]


def _first(f, x):
    return fd.gradient(f, x)[0]  # (five points, step 1e-3: the bisection's 1e-13 is far below it)


@pytest.mark.parametrize("f", RIGHT, ids=lambda f: f.__name__)
def test_right_in_every_mode(f):
    x = 1.3
    want = _first(f, x)
    if f is bracket_moves_root_does_not:
        assert abs(want) < 1e-8
        want = 0.0  # (the closed form; differences of the root found to 1e-13 leave rounding's 1e-11)
    value, (g,) = value_and_gradient(f, x)
    assert value == f(x)  # (the primal as the code computes it: the rewrite changes no value)
    assert g == pytest.approx(want, rel=1e-8, abs=1e-12)
    assert derivative(f, x) == pytest.approx(want, rel=1e-8, abs=1e-12)
    assert jacfwd(f, np.array(x)) == pytest.approx(want, rel=1e-8, abs=1e-12)
    second = _first(lambda u: derivative(f, u), x)
    assert hessian(f, x) == pytest.approx(second, rel=1e-6, abs=1e-9)


def test_a_closed_form():
    for f in (signs_as_psypy_compares_them, sign_of_a_product):
        assert gradient(f, 1.3)[0] == pytest.approx(cubic_root_slope(1.3), rel=1e-9)
        assert derivative(f, 1.3) == pytest.approx(cubic_root_slope(1.3), rel=1e-9)
    assert gradient(decreasing, 1.3)[0] == pytest.approx(decreasing_closed_form(1.3), rel=1e-10)
    assert derivative(decreasing, 1.3) == pytest.approx(decreasing_closed_form(1.3), rel=1e-10)
    assert hessian(decreasing, 1.3) == pytest.approx(-1 / 1.3 ** 2, rel=1e-7)


@pytest.mark.parametrize("f", REFUSED, ids=lambda f: f.__name__)
def test_refused_where_the_root_has_no_derivative_or_the_loop_leaves_others(f):
    for mode in (gradient, derivative, hessian):
        with pytest.raises(OverdubError):
            mode(f, 1.3)


def test_the_refusals_say_why():
    with pytest.raises(OverdubError, match="wide"):
        gradient(loose, 1.3)
    with pytest.raises(OverdubError, match="same sign"):
        derivative(no_root_in_bracket, 1.3)
    with pytest.raises(OverdubError, match="not a simple root|kink"):
        gradient(kink, 1.3)


def test_plain_calls_and_inactive_loops_are_untouched():
    assert obj(1.3) == Model(1.3, 0.5).solve(3.0)
    with ADContext():  # (x reaches nothing the loop reads: no derivative asked of the root)
        assert gradient(lambda x: x * Model(1.2, 0.5).solve(3.0), 1.3)[0] == Model(1.2, 0.5).solve(3.0)


def test_sparsity_of_roots():
    from contexts.sparsity import jacobian_sparsity

    def f(v):
        return np.array([obj_target(v[0]), nested(v[1] * v[2]), v[2]])
    pattern = np.asarray(jacobian_sparsity(f, np.array([1.3, 0.7, 1.1]), mode="local").todense())
    assert pattern.tolist() == [[True, False, False], [False, True, True], [False, False, True]]


def test_the_debug_contexts_see_the_loop_as_written():
    from contexts.debug import CountContext, TraceContext
    counter = CountContext()
    assert counter.run(nested, 1.3) == nested(1.3)
    assert not any("implicit" in name or "bracket" in name for name in counter.calls)
    assert sum(c.get("other calls", 0) for c in counter.counts.values()) == 0  # (the restated loop's calls hidden)
    tracer = TraceContext()
    assert tracer.run(obj, 1.3) == obj(1.3)


def test_a_root_hit_exactly_returned_from_inside_the_loop():
    # t^3 + t = 10 at t = 2, the first halving's midpoint: `if fmid == 0.0: return mid` with the bracket [0, 4]
    assert Step(1.0).solve_time(10.0) == 2.0
    assert gradient(lambda c: Step(1.0).solve_time(c), 10.0)[0] == pytest.approx(1 / 13, rel=1e-12)
    assert derivative(lambda c: Step(1.0).solve_time(c), 10.0) == pytest.approx(1 / 13, rel=1e-12)
