"""Stepping searches: a loop moving a variable by a constant step until a differentiated test changes.

    while q_trial < q:          # channelflowlib's normal depth (openchannellib.Rectangular.analyze)
        d += 0.00001
        q_trial = flow(d, n, s)

Its result is the first point of a grid past the crossing of flow(d) = q: a staircase in q, n and s whose
derivative every mode gave as zero, silently (and the loop's other values their partials at a fixed d: 0 for
0.43, -6.8 for 9.8). Now (session 46) such a loop is differentiated as the crossing it stops past
(`contexts.lowered.implicit`, the bracket [d - step, d]), where its step is small against its result and its
values are computed afresh each pass; any other is refused in every mode. Every oracle is the same computation
with the crossing found by `scipy.optimize.brentq` to 1e-15, differenced (`tests.fd`), or a closed form: never
overdub.
"""

import math

import numpy as np

import pytest
from scipy.optimize import brentq

from contexts import ADContext, derivative, gradient, hessian, jacfwd, jacobian_sparsity
from overdub.errors import OverdubError
from tests import fd


def manning(d, n, b, s):
    """(flow, velocity) of a rectangular channel at depth d (Manning's formula)."""
    a = d * b
    r = a / (b + 2 * d)
    v = (1 / n) * s ** 0.5 * r ** (2 / 3)
    return a * v, v


def normal_depth(q, n, b=2.0, s=0.001):
    """channelflowlib's loop, as it is written there: the depth and velocity at which the flow reaches q."""
    q_trial = 0.0
    d = 0.0
    v = 0.0
    if q > 0:
        while q_trial < q:
            d += 0.00001
            a = d * b
            p = b + 2 * d
            r = a / p
            v = (1 / n) * s ** 0.5 * r ** (2 / 3)
            q_trial = a * v
    return d + 0.1 * v


def normal_depth_ref(q, n, b=2.0, s=0.001):
    d = brentq(lambda t: manning(t, n, b, s)[0] - q, 1e-9, 100.0, xtol=1e-15)
    return d + 0.1 * manning(d, n, b, s)[1]


def until_break(x, c):
    """`while True:` ending in `if ...: break`, the test on the stepped value itself."""
    t = 0.8
    while True:
        t += 1e-5
        g = t ** 3 + x * t
        if g >= c:
            break
    return t * c


def until_break_ref(x, c):
    return brentq(lambda t: t ** 3 + x * t - c, 0.0, 10.0, xtol=1e-15) * c


def downward(x):
    """Stepping down from above, the test in the `while`, a capped `for` loop's twin below."""
    y = 1.7
    while math.exp(y) > 4.0 + x:
        y -= 1e-5
    return y


def capped(x):
    y = 1.7
    for _ in range(10 ** 6):
        y -= 1e-5
        if math.exp(y) <= 4.0 + x:
            break
    return y ** 2


class Channel:
    """The loop as a method, its inputs read from the object (forward mode meets it on an object holding duals)."""

    def __init__(self, q, n):
        self.q, self.n = q, n

    def analyze(self):
        q, n = self.q, self.n
        q_trial, d = 0.0, 0.0
        while q_trial < q:
            d += 0.00001
            q_trial = (1 / n) * 0.001 ** 0.5 * d * 2.0 * (d * 2.0 / (2.0 + 2 * d)) ** (2 / 3)
        self.depth = d
        return self


def channel(q, n):
    return Channel(q, n).analyze().depth


def channel_ref(q, n):
    return brentq(lambda t: manning(t, n, 2.0, 0.001)[0] - q, 1e-9, 100.0, xtol=1e-15)


def test_normal_depth_is_the_crossing_in_every_mode():
    want = fd.gradient(normal_depth_ref, 0.5, 0.013, h=1e-6)
    with ADContext():
        got = gradient(normal_depth, 0.5, 0.013)
        dq = derivative(lambda q: normal_depth(q, 0.013), 0.5)
    # (the velocity is taken at the loop's grid point, within its step of the crossing: a 1e-5 relative error,
    # the primal's own)
    assert got == pytest.approx(want, rel=3e-5)
    assert dq == pytest.approx(want[0], rel=3e-5)
    assert want[0] > 0.4 and want[1] > 9  # (0 and -6.8 before)


@pytest.mark.parametrize("f, ref, args", [
    (until_break, until_break_ref, (1.3, 2.0)),
    (channel, channel_ref, (0.5, 0.013)),
    ("step_last", "step_last_ref", (1.3, 2.0)),  # (defined below: the step ending the pass, a named step)
    ("break_then_step", "until_break_ref", (1.3, 2.0)),
])
def test_shapes_right_in_both_modes(f, ref, args):
    f, ref = (globals()[g] if isinstance(g, str) else g for g in (f, ref))
    want = fd.gradient(ref, *args, h=1e-6)
    with ADContext():
        got = gradient(f, *args)
        first = derivative(lambda t: f(t, *args[1:]), args[0])
    # (values computed from the grid point after the loop, `t * c`, carry the step: 1e-5 of t)
    assert got == pytest.approx(want, rel=5e-5)
    assert first == pytest.approx(want[0], rel=5e-5)


def test_downward_and_capped_loops():
    want = 1 / 5.0  # y = log(4 + x) at x = 1
    with ADContext():
        assert gradient(downward, 1.0)[0] == pytest.approx(want, rel=1e-6)
        assert derivative(downward, 1.0) == pytest.approx(want, rel=1e-6)
        y = math.log(5.0)
        assert gradient(capped, 1.0)[0] == pytest.approx(2 * y * want, rel=1e-5)
        assert derivative(capped, 1.0) == pytest.approx(2 * y * want, rel=1e-5)


def test_second_derivative_of_the_crossing():
    # t^3 + x t = c: dt/dx = -t / (3t^2 + x), and its derivative again in x
    x, c = 1.3, 2.0
    want = fd.derivative(lambda u: fd.gradient(until_break_ref, u, c)[0], x, h=1e-4)
    with ADContext():
        got = hessian(lambda u: until_break(u, c), x)
    assert float(got) == pytest.approx(want, rel=1e-4)


def coarse(x):
    d = 0.0
    while d * d < x:
        d += 0.01
    return d


def carried(x, t_end):
    """An Euler loop stopped by a differentiated end time: y is carried from pass to pass (not a value of t
    alone), so the loop is not stated as a crossing; the number of steps moves with t_end."""
    t, y = 0.0, 1.0
    while t < t_end:
        y = y + 1e-4 * (-x * y)
        t += 1e-4
    return y


def test_a_coarse_step_is_refused():
    # the grid's step is 1e-2 of the result: its point is not the crossing
    with ADContext():
        with pytest.raises(OverdubError, match="stepping search"):
            gradient(coarse, 2.0)
        with pytest.raises(OverdubError, match="stepping search"):
            derivative(coarse, 2.0)


def test_a_loop_carrying_values_is_refused_where_its_end_is_differentiated():
    with ADContext():
        with pytest.raises(OverdubError, match="stepping search"):
            gradient(carried, 0.5, 0.3)
        with pytest.raises(OverdubError, match="stepping search"):
            derivative(lambda t: carried(0.5, t), 0.3)
        # (the end time given as a number: the loop's length is fixed, the derivative in x that of the code)
        got = derivative(lambda u: carried(u, 0.3), 0.5)
    want = fd.derivative(lambda u: carried(u, 0.3), 0.5)
    assert got == pytest.approx(want, rel=1e-6)


def never_runs(x):
    d = 2.0 * x
    while d * d < x + 1.0:
        d += 1e-6
    return d


def test_a_loop_that_does_not_run_keeps_its_start():
    with ADContext():
        assert gradient(never_runs, 3.0) == (pytest.approx(2.0),)
        assert derivative(never_runs, 3.0) == pytest.approx(2.0)
        # and where it runs, the crossing d = sqrt(x + 1)
        want = 0.5 / math.sqrt(1.25)
        assert gradient(never_runs, 0.25) == (pytest.approx(want, rel=1e-6),)
        assert derivative(never_runs, 0.25) == pytest.approx(want, rel=1e-6)


def count(x):
    """An integer step counts: its result is an integer, whose derivative is zero (not a stepping search)."""
    n = 0
    while n * x < 10.0:
        n += 1
    return n * x


def test_an_integer_counter_is_not_a_stepping_search():
    with ADContext():
        n = math.ceil(10.0 / 0.7)
        assert gradient(count, 0.7) == (pytest.approx(n),)
        assert derivative(count, 0.7) == pytest.approx(n)


def test_sparsity_sees_the_crossing_depend_on_its_inputs():
    import numpy as np

    def f(v):
        return np.array([until_break(v[0], 2.0), v[1] * 2.0])
    with ADContext():
        pattern = jacobian_sparsity(f, np.array([1.3, 0.4]), mode="local")
    assert np.array_equal(np.asarray(pattern.todense() if hasattr(pattern, "todense") else pattern, dtype=bool),
                          [[True, False], [False, True]])


STEP = 2e-5


def step_last(x, c):
    """The step ends the pass: the `while` tests values made before it (one step back)."""
    t = 0.8
    g = 0.0
    while g < c:
        g = t ** 3 + x * t
        t += STEP
    return t * c + g


def step_last_ref(x, c):
    t = brentq(lambda t: t ** 3 + x * t - c, 0.0, 10.0, xtol=1e-15)
    return t * c + c


def break_then_step(x, c):
    """`while True:`, the test, then the step: d is the probe the test passed at."""
    h = 1e-5
    t = 0.8
    while True:
        g = t ** 3 + x * t
        if g >= c:
            break
        t = t + h
    return t * c


def masked_store(q):
    d = np.zeros_like(q)
    qt = np.zeros_like(q)
    while np.any(qt < q):
        m = qt < q
        d[m] += 1e-4
        qt = d ** 2
    return np.sum(d)


def by_where(q):
    d = np.zeros_like(q)
    qt = np.zeros_like(q)
    while np.any(qt < q):
        d = np.where(qt < q, d + 1e-4, d)
        qt = d ** 2
    return np.sum(d)


def by_outcome(q):
    d = np.zeros_like(q)
    qt = np.zeros_like(q)
    while (qt < q).any():
        d += 1e-4 * (qt < q)
        qt = d ** 2
    return np.sum(d)


@pytest.mark.parametrize("f", [masked_store, by_where, by_outcome])
def test_elementwise_stepping_searches_are_refused(f):
    # (each element its own crossing, sqrt(q): every mode gave 0 for 0.71 and 0.46; a vector of crossings is not
    # stated yet)
    q = np.array([0.5, 1.2])
    with ADContext():
        with pytest.raises(OverdubError, match="stepping search"):
            gradient(f, q)
        with pytest.raises(OverdubError, match="stepping search"):
            jacfwd(f, q)


def test_a_rewrite_that_fails_leaves_the_loop_refused_not_a_crash(monkeypatch):
    # (a shape the rewrite mishandles must not break the function: its loop stays as written, which every mode
    # refuses)
    from contexts.lowered import implicit
    from overdub import cache

    def broken(*args):
        raise RuntimeError("a rewrite bug")
    monkeypatch.setattr(implicit, "_state_stepping", broken)
    cache.clear()
    try:
        with ADContext():
            with pytest.raises(OverdubError, match="stepping search"):
                gradient(normal_depth, 0.5, 0.013)
    finally:
        monkeypatch.undo()
        cache.clear()
    with ADContext():
        assert gradient(normal_depth, 0.5, 0.013)[0] == pytest.approx(0.43173, rel=1e-4)


def grid_break(q):
    for d in np.arange(0.0, 10.0, 1e-4):
        if d ** 3 + d >= q:
            break
    return d


def grid_return(q):
    grid = np.linspace(0.0, 10.0, 100001)
    for d in grid:
        if d ** 3 + d >= q:
            return d
    return None


def scaled_counter(q):
    i = 0
    while (i * 1e-4) ** 3 + i * 1e-4 < q:
        i += 1
    return i * 1e-4


SIZES = [0.5, 0.75, 1.0, 1.5, 2.0]


def next_size(x):
    """A table's next entry (a standard size): a step function by design, its derivative the code's."""
    for s in SIZES:
        if s >= x:
            return s * 2.0 + x
    return None


@pytest.mark.parametrize("f", [grid_break, grid_return, scaled_counter])
def test_grid_searches_are_refused(f):
    # (the first grid point past the crossing of d^3 + d = q: every mode gave 0 for 0.24)
    with ADContext():
        with pytest.raises(OverdubError, match="stepping search"):
            gradient(f, 2.1)
        with pytest.raises(OverdubError, match="stepping search"):
            derivative(f, 2.1)


def test_a_table_lookup_is_not_a_search():
    with ADContext():
        assert gradient(next_size, 1.2) == (pytest.approx(1.0),)
        assert derivative(next_size, 1.2) == pytest.approx(1.0)


def terms_needed(x):
    """A count of the terms a series needs (mpmath's Riemann-Siegel `while ... gamma(L * 0.5) ... >= eps: L += 1`):
    a count, not a grid's point; the sum's derivative is the code's."""
    n = 1
    while x ** (n * 0.5) / math.factorial(n) >= 1e-12:
        n += 1
    return sum(x ** k / math.factorial(k) for k in range(n))


def test_a_count_of_terms_is_not_a_grid_search():
    with ADContext():
        assert gradient(terms_needed, 0.7) == (pytest.approx(math.exp(0.7), rel=1e-9),)
        assert derivative(terms_needed, 0.7) == pytest.approx(math.exp(0.7), rel=1e-9)


_HALF_TURN, _TURN = 180.0, 360.0


def wrapped(lon):
    """pygeodesy's `geoids._lonE2lon`: a longitude wrapped by module constants, no search."""
    while lon > _HALF_TURN:
        lon -= _TURN
    return lon * 2.0


def test_a_wrap_by_module_constants_is_not_a_search():
    with ADContext():
        for lon in (200.0, 600.0, 100.0):
            assert gradient(wrapped, lon) == (pytest.approx(2.0),)
            assert derivative(wrapped, lon) == pytest.approx(2.0)
