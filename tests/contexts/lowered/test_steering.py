"""Variables that only steer control flow (a loop counter passed as an argument) are not differentiated
(`contexts.lowered.activity.steering_only`), and nothing that reaches a result through a value is taken
for one: every gradient here is checked against central differences."""

import numpy as np
import pytest

from contexts import gradient
from contexts.lowered import show_lowered
from contexts.lowered.activity import steering_only
from contexts.lowered.lower import lower
from overdub.passes import get_source

from tests.fd import assert_grad_fd


def countdown(x, n):
    r = 1.0
    while n > 0.5:
        n = n - 1.0
        r = r * x
    return r


def test_a_counter_that_only_steers_is_not_recorded():
    text = show_lowered(countdown)
    assert "*    " not in next(line for line in text.splitlines() if "n = n - 1" in line)
    gx, gn = gradient(countdown, 1.01, 7.0)
    assert gx == pytest.approx(7 * 1.01 ** 6, rel=1e-12)
    assert gn == 0.0  # piecewise constant in n


def closure(x, n):
    def g():
        return x * n
    return g()


def through_lambda(x, n):
    g = lambda: x * n  # noqa: E731
    return g()


def alias(x, n):
    m = n
    if m > 0:
        m = m + 1.0
    return x * m


def generator(x, n):
    return sum(x * k for k in [n, n])


def appended(x, n):
    out = []
    out.append(n * x)
    return out[0] + x


def conditional_value(x, n):
    t = n if x > 0 else 2.0 * n
    return x * t


def indexed(x, n):
    a = np.array([x, 2 * x])
    return np.sum(a * n)


def compared_then_used(x, n):
    s = 0.0
    while n > 1.5:
        n = n - 1.0
        s = s + x
    return s * n


def by_explicit_namespace(x, n):
    return x * n + len(vars(np)) + eval("1.0", {})


def in_place(x, acc):
    acc += [x * x]
    return x


def caller(x):
    acc = [0.0]
    in_place(x, acc)
    return acc[-1] * 3.0


@pytest.mark.parametrize("f", [closure, through_lambda, alias, generator, appended, conditional_value, indexed,
                               compared_then_used, by_explicit_namespace])
def test_values_read_as_values_stay_differentiated(f):
    assert_grad_fd(f, 0.7, 2.3)


def test_a_list_changed_in_place_by_a_callee_stays_differentiated():
    assert_grad_fd(caller, 0.7)


def _own(x, a):
    a -= 1.0  # the caller's array, changed in place by a constant
    return x


def array_caller(a):
    b = a + 0.0  # (the gradient does not change the caller's own array)
    y = b * b
    _own(0.0, b)
    return np.sum(y * b)


def test_an_array_changed_in_place_by_a_callee_stays_differentiated():
    assert_grad_fd(array_caller, np.array([0.3, -1.2, 2.0]))


@pytest.mark.parametrize("f, steering", [(countdown, {"n"}), (closure, set()), (alias, set()),
                                          (compared_then_used, set()), (in_place, set())])
def test_which_variables_steer(f, steering):
    fdef = lower(get_source(f.__code__, f.__globals__).as_function_def(), iterators=True)
    assert steering_only(fdef) & set(f.__code__.co_varnames) == steering  # (the lowered form's own temporaries
    # that hold a comparison's result steer too)


def by_locals(x, n):
    m = n * 2.0
    return x * locals()["m"]


def by_eval(x, n):
    m = n
    return x * eval("m")


def by_vars(x, n):
    m = n
    return x * vars()["m"]


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
@pytest.mark.parametrize("f", [by_locals, by_eval, by_vars])
def test_reading_variables_by_name_is_refused_in_reverse_and_right_in_forward(f):
    # the transformed frame holds other variables than the user's: reverse mode refuses, naming the call;
    # forward mode runs the function itself on dual numbers
    from contexts import derivative
    from contexts.ad import UnsupportedFunction
    with pytest.raises(UnsupportedFunction, match="reads the function's variables by name"):
        gradient(f, 0.7, 2.3)
    want = (f(0.7, 2.3 + 1e-6) - f(0.7, 2.3 - 1e-6)) / 2e-6
    assert derivative(lambda n: f(0.7, n), 2.3) == pytest.approx(want, rel=1e-6)



# -- counters changed by in-place operators: `n -= 1` -----------------------------------------------------

def loop_pow(x, n):
    r = 1.0
    while n > 0:
        n -= 1
        r = r * x
    return r


def copied_counter(x, n):
    k = n
    while k > 0.5:
        k *= 0.5
        x = x * 1.5
    return x * x


def halving_alias(x, floor):
    n = x  # an array: `n *= 0.5` changes x itself
    while np.all(n > floor):
        n *= 0.5
    return np.sum(x * x)


def halving_argument(x, n):
    while np.all(n > 1.0):
        n *= 0.5
    return np.sum(x * x)


def test_a_counter_passed_a_number_steers_only():
    from contexts import show_adjoint
    text = show_adjoint(loop_pow)
    assert "active variables: r, x (for n passed numbers" in text
    gx, gn = gradient(loop_pow, 1.03, 20)
    assert gx == pytest.approx(20 * 1.03 ** 19, rel=1e-12)
    assert gn == 0
    assert_grad_fd(copied_counter, 0.7, 9.0)
    assert_grad_fd(copied_counter, 0.7, 9)


def test_a_counter_passed_an_array_is_followed():
    # the same code on arrays changes them in place: the general twin records it
    x = np.array([5.0, 3.0])
    # (two halvings: x ends as x / 4; finite differences would perturb the array the function halves)
    np.testing.assert_allclose(gradient(halving_alias, x.copy(), 1.0)[0], 2 * x * 0.25 ** 2)
    gx, gn = gradient(halving_argument, np.array([1.0, 2.0]), x.copy())
    np.testing.assert_allclose(gx, [2.0, 4.0])
    # one array passed as both: the halving changes x through n
    y = np.array([5.0, 3.0])
    gx, gn = gradient(halving_argument, y, y)
    np.testing.assert_allclose(gx + gn, 2 * np.array([5.0, 3.0]) * 0.25 ** 2)
    gx, gn = gradient(loop_pow, 1.03, np.array(4.0))  # (the 0-d array counts down in place)
    assert gx == pytest.approx(4 * 1.03 ** 3, rel=1e-12) and gn == 0.0


def _numbers(src: str):
    import ast
    from contexts.lowered.activity import numbers_if
    return numbers_if(lower(ast.parse(src).body[0]))


@pytest.mark.parametrize("src, names, params", [
    ("def f(x, n):\n    while n > 0:\n        n -= 1\n    return x", {"n"}, {"n"}),
    ("def f(x, n):\n    k = n + 1\n    k -= 1\n    return x", {"k", "n"}, {"n"}),
    ("def f(x, n):\n    for k in range(n):\n        k -= 1\n    return x", set(), set()),
    ("def f(x, n):\n    k = len(x)\n    k -= 1\n    return x", set(), set()),
    ("def f(x, n):\n    global k\n    k = n\n    k -= 1\n    return x", set(), set()),
    ("def f(x, n):\n    k = n\n    def g():\n        nonlocal k\n        k = x\n    g()\n    k -= 1\n    return x",
     set(), set()),
    ("def f(x, n):\n    k = C\n    k -= 1\n    return x", set(), set()),
    ("def f(x, n):\n    k = n\n    match x:\n        case [k, *r]:\n            pass\n    k -= 1\n    return x",
     set(), set()),
])

def test_which_variables_hold_numbers(src, names, params):
    got_names, got_params = _numbers(src)
    assert {n for n in got_names if not n.startswith("_od_")} == names
    assert set(got_params) == params



def test_a_match_capture_is_a_store():
    # (a capture the lowering keeps rebinds the name without an assignment: k may be a dict's rest)
    import ast
    from contexts.lowered.activity import numbers_if
    fdef = lower(ast.parse("def f(x, n):\n    k = n\n    match x:\n        case {**k}:\n            pass\n"
                           "    while k > 1:\n        k -= 1\n    return x").body[0])
    assert numbers_if(fdef) == (frozenset(), frozenset())
    assert "k" not in steering_only(fdef, frozenset({"k", "n"}))
