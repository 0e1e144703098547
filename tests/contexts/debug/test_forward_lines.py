"""The debugging contexts over forward mode (`derivative`, `jvp`, `jacfwd`, `hvp`, `hessian`, nested) and
sparsity detection see the user's operations, each attributed to the user's file:line (issue "Contexts
compose"): a NaN/Inf made in a tangent is blamed on the primitive that made it, with its primal operands
and incoming tangents; counts list primal and tangent operations per user function; traces show the
user's call tree."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

from contexts import CountContext, NaNContext, TraceContext, derivative, hessian, hvp, jacfwd, jvp
from contexts.debug import NaNError
from contexts.sparsity import hessian_sparsity, jacobian_sparsity

from . import _subjects as s

ENGINE = ("contexts/forward", "contexts/ad", "contexts/sparsity", "contexts/compose", "contexts/rules")


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def _line(fn, mark: str = "MARK") -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, text in enumerate(lines) if mark in text)


X0 = np.array([0.0, 1.0])
Z = np.float64(0.0)  # (a numpy scalar: the subjects call .sum() on their values)
NAN_RUNS = {  # each computes a derivative of sqrt_times_zero at a point where sqrt's derivative is infinite
    "derivative": lambda: derivative(s.calls_sqrt_times_zero, Z),
    "jvp": lambda: jvp(s.calls_sqrt_times_zero, (X0,), (np.array([1.0, 0.0]),)),
    "jacfwd": lambda: jacfwd(s.calls_sqrt_times_zero, X0),
    "nested derivative": lambda: derivative(lambda c: derivative(lambda t: s.calls_sqrt_times_zero(t * c), Z),
                                            2.0),
    "hessian inner forward": lambda: hessian(s.calls_sqrt_times_zero, X0, inner="forward"),
    "hvp inner forward": lambda: hvp(s.calls_sqrt_times_zero, X0, np.array([1.0, 0.0]), inner="forward"),
    "hessian": lambda: hessian(s.calls_sqrt_times_zero, X0),
}


@pytest.mark.parametrize("name", sorted(NAN_RUNS))
def test_a_nan_derivative_is_blamed_at_the_users_line(name):
    got = np.asarray(NAN_RUNS[name](), dtype=float)
    assert not np.isfinite(got).all()  # what the user gets without the context
    with pytest.raises(NaNError) as info:
        NaNContext().run(NAN_RUNS[name])
    e = info.value
    assert e.site.filename == s.__file__ and e.site.lineno == _line(s.sqrt_times_zero), str(e)
    assert e.site.op == "np.sqrt" and e.site.function == "sqrt_times_zero"
    assert not any(part in str(e) for part in ENGINE), str(e)


@pytest.mark.parametrize("entry", ["derivative", "jvp", "jacfwd"])
def test_the_tangent_is_named_with_its_primal_operands_and_incoming_tangents(entry):
    runs = {"derivative": lambda: derivative(s.calls_sqrt_times_zero, Z),
            "jvp": lambda: jvp(s.calls_sqrt_times_zero, (Z,), (2.0,)),
            "jacfwd": lambda: jacfwd(s.calls_sqrt_times_zero, np.array([0.0]))}
    with pytest.raises(NaNError) as info:
        NaNContext().run(runs[entry])
    e = info.value
    assert "the tangent of np.sqrt (forward mode) produced Inf" in str(e)
    np.testing.assert_array_equal(np.ravel(e.args_[0]), [0.0])           # sqrt's primal operand
    np.testing.assert_array_equal(np.ravel(e.tangents[0]), [2.0 if entry == "jvp" else 1.0])
    assert np.isinf(np.ravel(e.result)).all()                           # d sqrt(x) = dx / (2 sqrt(x))


def test_a_nan_in_the_primal_of_a_forward_derivative_is_not_called_a_tangent():
    with pytest.raises(NaNError) as info:
        NaNContext().run(derivative, s.log_shifted, np.float64(1.0))
    e = info.value
    assert e.tangents is None and e.site.lineno == _line(s.log_shifted) and "np.log produced Inf" in str(e)


def test_nan_from_infinities_in_forward_mode():
    """A tangent 0 * inf (operands and tangents without NaN) and a primal inf - inf are first NaNs."""
    assert np.isnan(jvp(s.zero_times_inf, (1.0, np.inf), (0.0, None))[1])
    with pytest.raises(NaNError, match="NaN-free primal operands") as info:
        NaNContext().run(jvp, s.zero_times_inf, (1.0, np.inf), (0.0, None))
    assert info.value.tangents is not None and info.value.site.lineno == _line(s.zero_times_inf)
    with pytest.raises(NaNError, match="NaN-free operands") as info:
        NaNContext().run(jvp, s.inf_minus_inf, (np.inf, np.inf), (1.0, None))
    assert info.value.tangents is None and info.value.site.lineno == _line(s.inf_minus_inf)


@pytest.mark.parametrize("entry", ["derivative", "jacfwd"])
def test_count_lists_primal_and_tangent_operations_per_user_function(entry):
    ctx = CountContext()
    run = {"derivative": lambda: derivative(s.calls_sqrt_times_zero, np.float64(4.0)),
           "jacfwd": lambda: jacfwd(s.calls_sqrt_times_zero, np.array([1.0, 4.0]))}[entry]
    got = ctx.run(run)
    want = 0.0 + 2.0 * (np.ones(2) if entry == "jacfwd" else 1.0)  # d/dx (0 * sqrt(x) + 2x).sum()
    np.testing.assert_allclose(got, want)
    assert ctx.ops["sqrt_times_zero"]["np.sqrt"] == 1 and ctx.ops["sqrt_times_zero"]["*"] == 1
    assert ctx.ops["sqrt_times_zero [tangent]"]["np.sqrt"] == 1 and ctx.ops["sqrt_times_zero [tangent]"]["*"] == 1
    assert ctx.ops["calls_sqrt_times_zero"]["sqrt_times_zero"] == 1
    assert ctx.counts["calls_sqrt_times_zero"]["arithmetic"] == 2  # * and +
    assert ctx.calls["sqrt_times_zero"] == 1
    users = {"sqrt_times_zero", "sqrt_times_zero [tangent]", "calls_sqrt_times_zero",
             "calls_sqrt_times_zero [tangent]", "<run>"}
    assert set(ctx.counts) - users == {"test_count_lists_primal_and_tangent_operations_per_user_function"
                                       ".<locals>.<lambda>"}, ctx.table()  # (run's own lambda)


@pytest.mark.parametrize("entry", ["derivative", "jvp", "jacfwd", "jacobian_sparsity", "hessian_sparsity"])
def test_trace_shows_the_users_call_tree_of_a_forward_derivative(entry):
    x = np.array([1.0, 4.0])
    runs = {"derivative": (derivative, np.float64(4.0)), "jvp": (jvp, (x,), (x,)), "jacfwd": (jacfwd, x),
            "jacobian_sparsity": (jacobian_sparsity, x), "hessian_sparsity": (hessian_sparsity, x)}
    api, *args = runs[entry]
    ctx = TraceContext()
    ctx.run(api, s.calls_sqrt_times_zero, *args)
    names = [(n.depth, n.function) for n in ctx.nodes()]
    assert names == [(0, entry), (1, "calls_sqrt_times_zero"), (2, "sqrt_times_zero")], ctx.tree(times=False)
    inner = ctx.find("sqrt_times_zero")[0]
    assert inner.site == f"{s.__file__}:{_line(s.calls_sqrt_times_zero, 'return sqrt_times_zero')}"
    assert "Dual" not in ctx.tree(times=False)


def test_count_sees_the_users_operations_in_sparsity_detection():
    ctx = CountContext()
    pattern = ctx.run(jacobian_sparsity, lambda v: np.array([s.calls_sqrt_times_zero(v), v[1]]), np.ones(2))
    np.testing.assert_array_equal(pattern.toarray(), [[True, True], [False, True]])
    assert ctx.ops["sqrt_times_zero"]["np.sqrt"] == 1 and ctx.ops["calls_sqrt_times_zero"]["sqrt_times_zero"] == 1


@pytest.mark.parametrize("entry", ["gradient", "derivative", "jacfwd", "hessian", "jacobian_sparsity"])
def test_breakpoint_on_a_user_function_inside_a_derivative(entry, monkeypatch):
    import sys

    from contexts import breakpoint_on, gradient
    x = np.array([1.0, 4.0])
    runs = {"gradient": (gradient, x), "derivative": (derivative, np.float64(4.0)), "jacfwd": (jacfwd, x),
            "hessian": (hessian, x), "jacobian_sparsity": (jacobian_sparsity, x)}
    api, point = runs[entry]
    frames = []
    monkeypatch.setattr(sys, "breakpointhook", lambda: frames.append(sys._getframe(1)))
    got = breakpoint_on(s.sqrt_times_zero).run(api, s.calls_sqrt_times_zero, point)
    want = api(s.calls_sqrt_times_zero, point)
    np.testing.assert_array_equal(np.asarray(got[0] if entry == "gradient" else got.toarray() if
                                             entry == "jacobian_sparsity" else got), np.asarray(
        want[0] if entry == "gradient" else want.toarray() if entry == "jacobian_sparsity" else want))
    assert len(frames) >= 1
    frame = frames[0]
    assert frame.f_code.co_name == "sqrt_times_zero" and frame.f_code.co_filename == s.__file__
    assert set(frame.f_locals) == {"x"}
