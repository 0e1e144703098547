"""Reverse mode through Python's control flow, closures, recursion and higher-order functions."""

import functools
import math

import pytest

from contexts.ad import gradient, pullback_full

from tests.fd import assert_grad_fd


def power_loop(x, n):
    r = 1.0
    i = 0
    while i < n:
        r = r * x
        i += 1
    return r


def branches(x, y):
    if x > 1.0:
        z = x * y
    elif x > 0.0:
        z = x + y * y
    else:
        z = -x
    return z * 2.0 if y > 0 else z - y


def loops(x, xs):
    s = 0.0
    for i in range(4):
        if i == 1:
            continue
        s += x ** i
        if s > 100:
            break
    for v in xs:
        s = s + v * x
    return s


def early_return(x):
    for i in range(10):
        if x * i > 3.0:
            return x * i
    return -x


def _raises(x):
    if x > 0.5:
        raise ValueError("too big")
    return x * 3.0


def try_except(x):
    try:
        y = _raises(x)
    except ValueError:
        y = x * x
    finally:
        x = x + 0.0
    return y + x


def short_circuit(x, y):
    a = (x > 0 and y) or x
    b = x if (y < 0 or x) else y
    return a * b + (x if x > y else y)


@pytest.mark.parametrize("f,args", [
    (power_loop, (1.3, 7)),
    (branches, (1.5, 2.0)), (branches, (0.5, 2.0)), (branches, (-0.5, 2.0)), (branches, (0.5, -2.0)),
    (loops, (1.1, [1.0, 2.0, 3.0])), (loops, (3.0, [1.0])),
    (early_return, (0.7,)), (early_return, (0.1,)),
    (try_except, (0.3,)), (try_except, (0.9,)),
    (short_circuit, (1.5, 2.0)), (short_circuit, (-1.5, 2.0)),
])
def test_control_flow_matches_finite_differences(f, args):
    assert_grad_fd(f, *args)


def test_power_loop_closed_form():
    assert gradient(power_loop, 2.0, 5) == (80.0, 0)


def fib_like(x, n):
    return x if n <= 1 else fib_like(x, n - 1) + x * fib_like(x, n - 2) * 0.5


def is_even(x, n):
    return x if n == 0 else is_odd(x * 1.001, n - 1)


def is_odd(x, n):
    return x * 2.0 if n == 0 else is_even(x, n - 1)


def deep(x, n):
    return x if n == 0 else math.sin(deep(x, n - 1)) * 0.5 + x * 0.01


def test_recursion():
    assert_grad_fd(fib_like, 0.9, 8)
    assert_grad_fd(is_even, 0.9, 500)
    assert_grad_fd(deep, 0.9, 500)


def test_closures_and_nonlocal():
    def make(a):
        def f(x):
            return x * a + a * a
        return f

    def outer(x):
        total = 0.0

        def add(v):
            nonlocal total
            total = total + v * x
        add(2.0)
        add(x)
        return total
    assert_grad_fd(lambda x: make(x)(3.0) + make(2.0)(x), 1.5)
    assert_grad_fd(outer, 1.5)


def test_closure_gradient_is_the_hidden_zeroth_argument():
    f = (lambda a: (lambda x: x * a))(3.0)
    y, back = pullback_full(f, 2.0)
    df, dx = back(1.0)
    assert y == 6.0 and dx == (3.0,) and df["a"] == 2.0


def test_higher_order_functions():
    def f(x):
        ys = list(map(lambda v: v * x, [1.0, 2.0, 3.0]))
        zs = list(filter(lambda v: v > 2.5, ys))
        s = sorted([x * 3.0, x * x, 1.0], key=lambda v: -v)
        r = functools.reduce(lambda a, b: a * b, [x, x + 1.0, 2.0])
        g = sum(v * v for v in ys)
        d = {k: v * x for k, v in zip("ab", [1.0, 2.0])}
        return sum(zs) + s[0] * 2.0 + s[1] + r + g + d["b"] + sum([y * 2 for y in ys if y > 1.5])
    assert_grad_fd(f, 1.3)
    assert_grad_fd(f, 0.7)


def test_nested_and_lambdas():
    def f(x):
        sq = lambda v: v * v
        def cube(v):
            return sq(v) * v
        return cube(x) + sq(x) + (lambda a, b=2.0: a * b)(x)
    assert gradient(f, 2.0) == (3 * 4.0 + 2 * 2.0 + 2.0,)



def test_one_value_used_twice_accumulates_twice():
    assert gradient(lambda x: x + x, 1.5) == (2.0,)
    assert gradient(lambda x: x * x, 1.5) == (3.0,)
    assert gradient(lambda xs: xs[0] + xs[0], [1.5]) == ([2.0],)


def _scaled(xs, k):
    for x in xs:
        if x > 0:
            yield x * k
    yield from (k * k, k)


def _pair(k):
    yield k
    yield k * k


def test_generator_functions():
    def f(k):
        return sum(_scaled([1.0, -2.0, 3.0], k)) + sum(v * v for v in _pair(k)) + max(_pair(k * 0.5))
    assert_grad_fd(f, 2.5)
    assert_grad_fd(f, 0.3)

    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

        def __iter__(self):
            yield self.a
            yield self.b
    assert_grad_fd(lambda x: (lambda a, b: a * b)(*Pair(x, 3.0)) + list(Pair(x, x))[1], 1.5)


def _scaled_sum(*xs, scale=1.0, **extra):
    total = 0.0
    for v in xs:
        total = total + v * scale
    return total + extra.get("bias", 0.0) * scale


def _kwonly(x, *, k=2.0):
    return x ** k


def test_keyword_star_and_double_star_arguments():
    def f(x, y):
        args = (x, y * 2.0)
        opts = {"bias": x * y}
        return (_scaled_sum(*args, scale=y, **opts) + _kwonly(x, k=3.0) + _kwonly(y)
                + _scaled_sum(x, y, scale=x))
    assert_grad_fd(f, 1.3, 0.7)


def _shaped(x, mode):
    match mode:
        case "square":
            y = x * x
        case "cube" | "third":
            y = x * x * x
        case {"scale": k} if k > 0:
            y = x * k
        case _:
            y = -x
    return y * 2.0


_SCALE = {"scale": 5.0}


def _match_on_value(x):
    match x:
        case 1.0:
            return 0.0
        case _:
            return x


def test_match_on_flags_and_string_arguments():
    assert gradient(_shaped, 3.0, "square") == (12.0, None)
    assert gradient(_shaped, 3.0, "third") == (54.0, None)
    assert gradient(lambda x: _shaped(x, _SCALE), 3.0) == (10.0,)
    assert gradient(_shaped, 3.0, "other") == (-2.0, None)
    assert gradient(_match_on_value, 2.0) == (1.0,)  # a match on the value itself: control flow
    assert gradient(_match_on_value, 1.0) == (0.0,)


def test_closures_see_the_binding_current_at_each_call():
    def f(x):
        a = x
        g = lambda v: v * a
        r1 = g(2.0)
        a = x * 3.0  # g reads the new binding from here on (Python's cells are late-bound)
        r2 = g(1.0)

        def h():
            return a * a
        a = a + 1.0
        return r1 + r2 + h()

    def k(x):
        scale = 1.0
        fn = lambda v: v * scale
        total = 0.0
        for _ in range(3):
            scale = scale * x
            total = total + fn(x)
        return total
    assert_grad_fd(f, 1.5)
    assert_grad_fd(k, 1.2)
