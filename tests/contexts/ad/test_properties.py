"""Properties of reverse mode over random programs (hypothesis): it agrees with finite differences and with
forward mode, and its pullbacks are linear. The programs are random expression trees run by a small
interpreter, so the engine differentiates recursion, tuples, branches and math calls each time."""

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from contexts import gradient, pullback
from contexts.forward import derivative
from tests import fd

UNARY = ("sin", "tanh", "exp_small", "square")
BINARY = ("add", "sub", "mul", "div_safe")


def evaluate(node, x, y):
    """The value of an expression tree at (x, y): ('x',), ('y',), ('c', k), (unary, a), (binary, a, b)."""
    kind = node[0]
    if kind == "x":
        return x
    if kind == "y":
        return y
    if kind == "c":
        return node[1]
    if len(node) == 2:
        a = evaluate(node[1], x, y)
        if kind == "sin":
            return math.sin(a)
        if kind == "tanh":
            return math.tanh(a)
        if kind == "exp_small":
            return math.exp(math.tanh(a))
        return a * a
    a, b = evaluate(node[1], x, y), evaluate(node[2], x, y)
    if kind == "add":
        return a + b
    if kind == "sub":
        return a - b
    if kind == "mul":
        return a * b
    return a / (1.0 + b * b)


leaves = st.one_of(st.just(("x",)), st.just(("y",)), st.tuples(st.just("c"), st.floats(-2, 2)))
trees = st.recursive(
    leaves,
    lambda sub: st.one_of(st.tuples(st.sampled_from(UNARY), sub), st.tuples(st.sampled_from(BINARY), sub, sub)),
    max_leaves=12)
points = st.floats(-1.5, 1.5, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(trees, points, points)
def test_gradient_matches_finite_differences(tree, x, y):
    f = lambda x, y: evaluate(tree, x, y)
    got = gradient(f, x, y)
    want = fd.gradient(f, x, y)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@settings(max_examples=40, deadline=None)
@given(trees, points, points)
def test_forward_and_reverse_agree(tree, x, y):
    gx, gy = gradient(lambda x, y: evaluate(tree, x, y), x, y)
    assert math.isclose(gx, derivative(lambda x: evaluate(tree, x, y), x), rel_tol=1e-9, abs_tol=1e-12)
    assert math.isclose(gy, derivative(lambda y: evaluate(tree, x, y), y), rel_tol=1e-9, abs_tol=1e-12)


@settings(max_examples=40, deadline=None)
@given(trees, trees, points, points, st.floats(-3, 3), st.floats(-3, 3))
def test_pullbacks_are_linear(t1, t2, x, y, a, b):
    f = lambda x, y: (evaluate(t1, x, y), evaluate(t2, x, y))
    _, back = pullback(f, x, y)
    g1, g2, g12 = back((1.0, 0.0)), back((0.0, 1.0)), back((a, b))
    np.testing.assert_allclose(g12, [a * u + b * v for u, v in zip(g1, g2)], rtol=1e-9, atol=1e-9)
