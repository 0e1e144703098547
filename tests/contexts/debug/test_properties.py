"""Properties every debugging context must have: it observes and changes no result."""

import colorsys
import statistics
import sys
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contexts.debug import CountContext, NaNContext, TraceContext, breakpoint_on

from . import _subjects as s

unit = st.floats(0.0, 1.0)
small = st.floats(-1e6, 1e6, allow_nan=False)


def observers():
    return [TraceContext(primitives=True), CountContext(), NaNContext(), breakpoint_on(s.fails),
            breakpoint_on(s.square)]


@pytest.fixture(autouse=True)
def breaks_do_nothing():
    with mock.patch.object(sys, "breakpointhook", lambda *a, **k: None):
        yield


def palette(r, g, b):
    h, l, s_ = colorsys.rgb_to_hls(r, g, b)
    return colorsys.hls_to_rgb(h, l, s_), colorsys.rgb_to_yiq(r, g, b)


@settings(max_examples=25, deadline=None)
@given(unit, unit, unit)
def test_stdlib_colour_conversions_are_unchanged(r, g, b):
    expected = palette(r, g, b)
    for ctx in observers():
        assert ctx.run(palette, r, g, b) == expected


@settings(max_examples=25, deadline=None)
@given(st.lists(small, min_size=1, max_size=8))
def test_statistics_is_unchanged(xs):
    for fn in (statistics.median, statistics.mean, s.norm2):
        expected = fn(xs)
        for ctx in observers():
            assert ctx.run(fn, xs) == expected


@settings(max_examples=25, deadline=None)
@given(st.integers(-1000, 1000))
def test_exceptions_are_unchanged(x):
    expected = s.calls_fails(x)
    for ctx in observers():
        assert ctx.run(s.calls_fails, x) == expected


@pytest.mark.parametrize("n", range(11))
def test_fib_call_counts_match_the_closed_form(n):
    fibs = [0, 1]
    while len(fibs) < n + 3:
        fibs.append(fibs[-1] + fibs[-2])
    calls = 2 * fibs[n + 1] - 1  # the number of calls fib(n) makes, itself included
    trace, count = TraceContext(), CountContext()
    assert trace.run(s.fib, n) == fibs[n] == count.run(s.fib, n)
    assert len(trace.find("fib")) == calls == count.calls["fib"]
    assert count.ops["fib"]["+"] == fibs[n + 1] - 1  # one addition per call with n >= 2
