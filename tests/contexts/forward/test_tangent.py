"""Tangent twins: forward mode by generated tangent code, and its fallback to duals."""

import math
from fractions import Fraction

import numpy as np
import pytest

from contexts.forward import derivative, jvp
from contexts.forward.tangent import NotTransformable
from contexts.forward.tangent_runtime import tangent_jvp

from tests import fd


def power(x, n):
    r = 1.0
    while n > 0:
        r = r * x
        n -= 1
    return r


def mixed(x):
    a, b = divmod(x * 7.0, 2.0)
    parts = [math.sin(x), x ** 3, a + b]
    total = 0.0
    for k in range(3):
        total = total + parts[k] * (k + 1)
    return total / (1.0 + x * x) + helper(x, 2.0)


def helper(x, k):
    return math.exp(-k * x) if x > 0 else x ** 2


def arrays(x):
    w = np.array([[1.0, 2.0], [0.5, -1.0]])
    v = np.tanh(w @ np.array([x, x * x]))
    return float(np.sum(v ** 2) + v[0] * v[1])


class Scaled:
    def __init__(self, k):
        self.k = k


def with_object(x):
    s = Scaled(x * 2.0)
    s.k = s.k + x
    return s.k * x


def with_closure(x):
    g = lambda y: x * y
    return g(3.0) + x


@pytest.mark.parametrize("f, x", [(lambda x: power(x, 7), 1.1), (mixed, 0.4), (mixed, 1.3), (arrays, 0.3)])
def test_tangent_twin_matches_finite_differences(f, x):
    y, dy = tangent_jvp(f, (x,), (1.0,))
    assert y == pytest.approx(f(x)) and dy == pytest.approx(fd.derivative(f, x), rel=1e-6)
    assert derivative(f, x) == pytest.approx(dy, rel=1e-12)


@pytest.mark.parametrize("f", [with_object, with_closure])
def test_what_the_twin_does_not_cover_falls_back_to_duals(f):
    with pytest.raises(NotTransformable):
        tangent_jvp(f, (0.7,), (1.0,))
    assert derivative(f, 0.7) == pytest.approx(fd.derivative(f, 0.7), rel=1e-6)


def test_exact_types_and_structured_outputs():
    assert derivative(lambda x: x ** 2 + 3 * x + 1, Fraction(1, 3)) == Fraction(11, 3)
    y, dy = jvp(lambda x, y: (x * y, [x, 2.0]), (2.0, 3.0), (1.0, 0.0))
    assert y == (6.0, [2.0, 2.0]) and dy == (3.0, [1.0, 0.0])


def test_calls_into_objects_go_through_duals():
    def f(x):
        return with_object(x) * 2.0  # f is covered; its callee is not: the call runs on duals
    y, dy = tangent_jvp(f, (0.7,), (1.0,))
    assert dy == pytest.approx(fd.derivative(f, 0.7), rel=1e-6)


def with_lines(x, y):
    a = x * y
    b = math.sin(a) / x
    c = [a, b]
    c[0] = b - a
    return c[0] + x ** 2


def failing_at_line_3(x):
    d = x - x
    return x / d


def test_the_twin_keeps_the_user_lines():
    from contexts.forward.tangent import tangent_twin
    first = with_lines.__code__.co_firstlineno
    lines = {line for _, _, line in tangent_twin(with_lines, frozenset({"x"})).co_lines() if line is not None}
    assert lines <= set(range(first, first + 6)) and set(range(first + 1, first + 6)) <= lines
    assert derivative(lambda x: with_lines(x, 0.4), 0.7) == pytest.approx(
        fd.derivative(lambda x: with_lines(x, 0.4), 0.7), rel=1e-6)


def test_an_error_in_the_twin_points_at_the_user_line():
    with pytest.raises(ZeroDivisionError) as e:
        derivative(failing_at_line_3, 0.5)
    frames = [f for f in e.traceback if f.name == "failing_at_line_3"]
    assert frames and frames[-1].lineno + 1 == failing_at_line_3.__code__.co_firstlineno + 2


rest = [10.0]  # a module global with the name of a `*rest` parameter below


def scaled_rest(a, *rest):
    return a * rest[0] + math.sin(rest[1])


def test_vararg_named_like_a_global_is_a_local():
    """`*rest` is the function's own variable, not the global `rest`: the twin takes it (and is right)."""
    y, dy = tangent_jvp(scaled_rest, (2.0, 3.0, 0.5), (1.0, 0.5, 2.0))
    want = fd.derivative(lambda s: scaled_rest(2.0 + s, 3.0 + 0.5 * s, 0.5 + 2.0 * s), 0.0)
    assert y == scaled_rest(2.0, 3.0, 0.5)
    assert dy == pytest.approx(want, rel=1e-7)
