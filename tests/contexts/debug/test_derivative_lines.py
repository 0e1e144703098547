"""The debugging contexts over a gradient see the user's operations, in the forward pass and as adjoints
in the backward pass, each attributed to the user's file:line (issue "Contexts compose"); NaNs made from
infinities are blamed too."""

from __future__ import annotations

import inspect
import statistics
import warnings

import numpy as np
import pytest

from contexts import CountContext, NaNContext, TraceContext, gradient, pullback
from contexts.debug import NaNError, SawNothingWarning

from . import _subjects as s


def _line(fn, mark: str = "MARK") -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, text in enumerate(lines) if mark in text)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


@pytest.mark.parametrize("entry", ["gradient", "pullback"])
def test_a_nan_gradient_is_blamed_on_the_adjoint_at_the_users_line(entry):
    x = np.array([0.0, 1.0])
    assert np.isnan(gradient(s.sqrt_times_zero, x)[0][0])  # what the user sees without the context

    def run():
        if entry == "gradient":
            return gradient(s.calls_sqrt_times_zero, x)
        return pullback(s.calls_sqrt_times_zero, x)[1](1.0)

    with pytest.raises(NaNError) as info:
        NaNContext().run(run)
    e = info.value
    assert e.adjoint and e.site.lineno == _line(s.sqrt_times_zero)
    assert e.site.filename == s.__file__ and e.site.function == "sqrt_times_zero"
    assert e.site.op == "np.sqrt"
    np.testing.assert_array_equal(e.cotangent, [0.0, 0.0])       # the incoming cotangent, finite
    np.testing.assert_array_equal(e.args_[0], [0.0, 1.0])        # the primal operand
    assert "adjoint of np.sqrt" in str(e) and "contexts/ad" not in str(e)


def test_a_nan_of_the_forward_pass_is_blamed_at_its_line():
    def f(x):
        y = x - 1.0
        return np.log(y) * 2.0    # log(0) = -inf: the forward pass
    with pytest.raises(NaNError) as info:
        NaNContext().run(gradient, f, 1.0)
    assert not info.value.adjoint and info.value.site.lineno == _line(f, "log(0)")


def test_a_finite_gradient_runs_unchanged_under_nan_context():
    x = np.array([0.5, 2.0])
    got = NaNContext().run(gradient, s.calls_sqrt_times_zero, x)[0]
    np.testing.assert_allclose(got, [2.0, 2.0])  # d/dx (0 * sqrt(x) + 2x)


@pytest.mark.parametrize("f, a, b", [(s.inf_minus_inf, np.inf, np.inf), (s.zero_times_inf, 0.0, np.inf),
                                     (s.zero_times_inf, np.array([0.0, 1.0]), np.inf)])
def test_nan_from_infinities_is_a_first_nan(f, a, b):
    """inf - inf and 0 * inf turn operands without NaN into NaN: blamed there, as jax_debug_nans does."""
    with pytest.raises(NaNError, match="NaN-free operands") as info:
        NaNContext().run(f, a, b)
    assert info.value.site.lineno == _line(f)


def test_nan_operands_are_still_not_blamed():
    assert np.isnan(NaNContext().run(s.zero_times_inf, np.nan, 1.0))


def test_nan_from_infinities_in_the_backward_pass():
    # cbrt(x) ** 3 is x, but at 0 the power's cotangent 3 cbrt(0)² = 0 meets cbrt's infinite slope: a NaN
    # (the zero may be a coincidence, so none is made up), found at its line by NaNContext; the gradient's
    # entry is then the mean of the gradients at the two sides of the point, 1 (`compose._nan_by_sides`)
    assert gradient(s.cbrt_cubed, np.array([0.0]))[0][0] == pytest.approx(1.0, rel=1e-9)
    with pytest.raises(NaNError) as info:
        NaNContext().run(gradient, s.cbrt_cubed, np.array([0.0]))
    e = info.value
    assert e.adjoint and e.site.lineno == _line(s.cbrt_cubed) and e.site.op == "np.cbrt"
    assert "from the finite cotangent" in e.what


def test_an_overflow_a_minimum_drops_passes_nothing_back():
    # x * inf = inf, np.minimum takes 1.0 there: the product's cotangent is 0, and 0 * inf is not a NaN
    # but nothing (the function is flat there); NaNContext finds no NaN
    assert gradient(s.scaled_by_zero, np.array([1.0]), np.inf)[0][0] == 0.0
    assert NaNContext().run(gradient, s.scaled_by_zero, np.array([1.0]), np.inf)[0][0] == 0.0


def test_count_reports_primal_and_adjoint_operations_per_user_function():
    ctx = CountContext()
    ctx.run(gradient, s.calls_sqrt_times_zero, np.array([1.0, 4.0]))
    # calls_sqrt_times_zero: a call of sqrt_times_zero, x * 2.0, .sum(), + ; sqrt_times_zero: sqrt, *, .sum()
    assert ctx.ops["sqrt_times_zero"]["np.sqrt"] == 1 and ctx.ops["sqrt_times_zero"]["*"] == 1
    assert ctx.ops["sqrt_times_zero [adjoint]"]["np.sqrt"] == 1
    assert ctx.ops["calls_sqrt_times_zero"]["sqrt_times_zero"] == 1
    assert ctx.ops["calls_sqrt_times_zero [adjoint]"]["sqrt_times_zero"] == 1
    assert ctx.counts["calls_sqrt_times_zero"]["arithmetic"] == 2  # * and +
    assert ctx.calls["sqrt_times_zero"] == 1
    engine = {"gradient", "_value_and_gradient", "call", "_twin_call", "_twin_back", "finalize", "Session.__init__"}
    assert not engine & set(ctx.counts), ctx.table()


def test_trace_shows_the_users_call_tree_of_a_gradient():
    ctx = TraceContext()
    ctx.run(gradient, s.calls_sqrt_times_zero, np.array([1.0, 4.0]))
    text = ctx.tree(times=False)
    names = [(n.depth, n.function) for n in ctx.nodes()]
    assert names == [(0, "gradient"), (1, "calls_sqrt_times_zero"), (2, "sqrt_times_zero"),
                     (1, "adjoint of calls_sqrt_times_zero"), (2, "adjoint of sqrt_times_zero")], text
    inner = ctx.find("sqrt_times_zero")[0]
    assert inner.site == f"{s.__file__}:{_line(s.calls_sqrt_times_zero, 'return sqrt_times_zero')}"


@pytest.mark.parametrize("context", [TraceContext, CountContext, NaNContext], ids=lambda c: c.__name__)
def test_a_with_block_that_saw_nothing_warns(context):
    with pytest.warns(SawNothingWarning, match=r"ctx\.run\(f, \*args\)"):
        with context():
            statistics.median([1.0, 3.0, 2.0])


@pytest.mark.parametrize("context", [TraceContext, CountContext, NaNContext], ids=lambda c: c.__name__)
def test_a_with_block_that_saw_something_does_not_warn(context):
    ctx = context()
    median = ctx.wrap(statistics.median)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SawNothingWarning)
        with ctx:
            assert median([1.0, 3.0, 2.0]) == 2.0
        with ctx:
            ctx.run(statistics.median, [1.0, 3.0, 2.0])
        assert ctx.run(statistics.median, [1.0, 3.0, 2.0]) == 2.0
