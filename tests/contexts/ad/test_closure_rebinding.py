"""Reverse mode through closures that escape (passed to another function, stored, returned) and read a
variable the function assigned more than once: right when every assignment comes before the closure is
made (the cell then holds one value for as long as the closure can be called), refused when one may come
after. Every derivative against central finite differences, in reverse mode, forward mode and the hessian
(forward over reverse)."""

import math

import numpy as np
import pytest

from contexts.ad import UnsupportedFunction, gradient

from tests.fd import in_mode

X = 0.7


def apply(f, t):
    return f(t) + 1.0


def reassigned_then_passed(x):
    k = x * x
    k = k + x          # assigned twice, both before the closure is made
    g = lambda t: t * k  # noqa: E731
    return apply(g, 2.0)


def parameter_reassigned_then_passed(x):
    x = math.sin(x)    # the parameter itself rebound (sklearn's `X = np.atleast_2d(X)`)

    def g(t):
        return t * x + x * x
    return apply(g, 3.0)


def reassigned_in_loop_before(x):
    k = 1.0
    for i in range(3):
        k = k * x + i  # the loop ends before the closure is made
    return sum(map(lambda t: t * k, [1.0, 2.0]))


def reassigned_in_branch_before(x):
    k = x
    if x > 0:
        k = k * 3.0
    else:
        k = k - 1.0
    return apply(lambda t: math.exp(t * k), 0.5)


def closure_made_in_loop_body_not_rebinding(x):
    k = x * 2.0
    k = k + 1.0
    out = 0.0
    for i in range(3):  # made anew each time round, reading a variable the loop does not assign
        out += apply(lambda t: t * k * i, 1.0)
    return out


def sort_key_after_reassignment(x):
    w = x
    w = w * w
    vals = [0.3, 1.2, -0.4]
    s = sorted(vals, key=lambda v: (v - w) ** 2)
    return s[0] * w


def secant(f, x0, x1, n=30):
    """A root finder in Python, as fluids' `secant` (Colebrook passes it a closure)."""
    for _ in range(n):
        f0, f1 = f(x0), f(x1)
        if f1 == f0:
            break
        x0, x1 = x1, x1 - f1 * (x1 - x0) / (f1 - f0)
    return x1


def root_finder_after_reassignment(x):
    a = x + 1.0
    a = a * a          # root of t**3 - a: a**(1/3)
    return secant(lambda t: t ** 3 - a, 1.0, 2.0)


def nested_closures_after_reassignment(x):
    k = x
    k = k * 2.0

    def inner(t):
        return t * k

    def outer(t):
        return inner(t) + k * t * t
    return apply(outer, 1.5)


def returned_closure_after_reassignment(x):
    def make(x):
        k = x * 3.0
        k = math.cos(k)
        return lambda t: t * k
    return make(x)(2.0)


def stored_in_list_after_reassignment(x):
    k = x
    k = k ** 3
    fs = [lambda t: t + k]
    return fs[0](1.0) * k


def reassigned_only_after_last_use_elsewhere(x):
    # `k` is assigned again after the closure, but the closure reads only `m`, assigned before
    k = x
    m = k * 2.0
    g = lambda t: t * m  # noqa: E731
    k = 5.0
    return apply(g, 1.0) + k


RIGHT = [reassigned_then_passed, parameter_reassigned_then_passed, reassigned_in_loop_before,
         reassigned_in_branch_before, closure_made_in_loop_body_not_rebinding, sort_key_after_reassignment,
         root_finder_after_reassignment, nested_closures_after_reassignment, returned_closure_after_reassignment,
         stored_in_list_after_reassignment, reassigned_only_after_last_use_elsewhere]


@pytest.mark.parametrize("f", RIGHT, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["gradient", "derivative", "hessian"])
def test_escaping_closure_reading_variable_assigned_before_it(f, mode):
    got, want = in_mode(f, X, mode)
    assert got == pytest.approx(want, rel=1e-5, abs=1e-6)


def test_escaping_closure_reading_reassigned_array():
    def f(x):
        y = x * 2.0
        y = np.sin(y)
        g = lambda t: np.sum(y * t)  # noqa: E731
        return apply(g, 3.0)
    x = np.array([0.2, -0.5, 1.1])
    (got,) = gradient(f, x)
    assert np.allclose(got, 6.0 * np.cos(2.0 * x))


# -- assigned again after the closure is made: right while every call sees the value it was made with
#    (each call checks its cells), refused at the first call that sees another ---------------------------

def rebound_after_last_call(x):
    k = x * x
    g = lambda t: t * k  # noqa: E731
    y = apply(g, 2.0)
    k = 3.0            # after the last call: the closure never sees it
    return y + k * x


def made_in_loop_called_in_same_iteration(x):
    out = 0.0
    for i in range(3):
        k = x * (i + 1)
        out += apply(lambda t: t * k, 1.0) * k
    return out


def rebound_to_the_same_object(x):
    k = x * 2.0
    g = lambda t: t * k  # noqa: E731
    k = max(k, -100.0)  # the same float object: the binding's value is the one made with
    return apply(g, 3.0) + k


def assigned_in_branch_not_taken(x):
    # mpmath's quadrature: `_f = f; f = lambda x: _f(-x) + _f(x)` in a loop, for infinite intervals only
    f = lambda t: math.exp(-x * t) - 0.5  # noqa: E731
    total = 0.0
    for a in (0.0, 0.5):
        if a < 0:
            _f = f
            f = lambda t: _f(-t) + _f(t)  # noqa: E731
        total += secant(f, 0.1 + a, 0.2 + a)
    return total


def sort_key_then_rebound(x):
    w = x
    key = lambda v: (v - w) ** 2  # noqa: E731
    s = sorted([0.3, 1.2, -0.4], key=key)
    w = w * 2.0
    return s[0] * w + (s[1] - w) ** 2


GUARDED_RIGHT = [rebound_after_last_call, made_in_loop_called_in_same_iteration, rebound_to_the_same_object,
                 assigned_in_branch_not_taken, sort_key_then_rebound]


@pytest.mark.parametrize("f", GUARDED_RIGHT, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["gradient", "derivative", "hessian"])
def test_escaping_closure_calls_seeing_the_values_it_was_made_with(f, mode):
    got, want = in_mode(f, X, mode)
    assert got == pytest.approx(want, rel=1e-5, abs=1e-6)


def called_after_rebinding(x):
    k = x
    g = lambda t: t * k  # noqa: E731
    k = x * x
    return apply(g, 2.0)


def stored_then_called_after_rebinding(x):
    fs = []
    for i in range(3):
        k = x * i
        fs.append(lambda t: t * k)
    return fs[0](1.0)


@pytest.mark.parametrize("f", [called_after_rebinding, stored_then_called_after_rebinding],
                         ids=lambda f: f.__name__)
@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_call_seeing_a_later_value_is_refused(f):
    with pytest.raises(UnsupportedFunction, match="assigned again"):
        gradient(f, X)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_refusal_leaves_no_guard_behind():
    from contexts.ad import runtime
    gradient(rebound_after_last_call, X)
    with pytest.raises(UnsupportedFunction):
        gradient(called_after_rebinding, X)
    import gc
    gc.collect()
    assert not runtime._GUARDED


# -- still refused: an assignment may come after the closure is made (its cell then changes) ----------

def rebound_after_passed(x):
    k = 1.0
    g = lambda t: t * k  # noqa: E731
    k = x * x
    return apply(g, 2.0)


def rebound_in_loop_around(x):
    out = 0.0
    for i in range(3):
        k = x * i
        out += apply(lambda t: t * k, 1.0)
    return out


def rebound_by_a_nonlocal_writer(x):
    k = x

    def set_k(v):
        nonlocal k
        k = v
    g = lambda t: t * k  # noqa: E731
    set_k(x * x)
    return apply(g, 1.0)


def rebound_in_the_same_statement(x):
    k = x
    k = apply(lambda t: t * k, 1.0)  # (the closure could outlive the call)
    return k


def reads_closure_made_after(x):
    k = x
    k = k * 2.0
    g = lambda t: h(t)  # noqa: E731
    h = lambda t: t * k  # noqa: E731
    return apply(g, 1.0)


REFUSED = [rebound_after_passed, rebound_in_loop_around, rebound_by_a_nonlocal_writer,
           rebound_in_the_same_statement, reads_closure_made_after]


@pytest.mark.parametrize("f", REFUSED, ids=lambda f: f.__name__)
def test_escaping_closure_reading_variable_assigned_after_it_is_refused(f):
    try:
        got = gradient(f, X)[0]
    except UnsupportedFunction as e:
        assert "closure" in str(e)
        return
    _, want = in_mode(f, X, "gradient")  # right is acceptable too, never a wrong number
    assert got == pytest.approx(want, rel=1e-5, abs=1e-6)
