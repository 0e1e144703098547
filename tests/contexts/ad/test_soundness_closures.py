"""Reverse mode through closures, nested functions, defaults, objects and private names: every gradient
against central finite differences (a closure's cells, defaults and bound objects are differentiated
through, never run as constants)."""

import functools
import operator

import pytest

from contexts.ad import gradient, pullback

from ._helpers import assert_grad_fd

X = 0.7


def rec_inner(x):
    def rec(n):
        return x if n == 0 else rec(n - 1) * x
    return rec(3)


def mutual_inner(x):
    def even(n):
        return x if n == 0 else odd(n - 1) * x

    def odd(n):
        return x * x if n == 0 else even(n - 1) + x
    return even(4)


def nonlocal_acc(x):
    acc = 0.0

    def add(v):
        nonlocal acc
        acc = acc + v
    add(x)
    add(x * x)
    return acc


def nonlocal_in_loop(x):
    acc = 1.0

    def mul(v):
        nonlocal acc
        acc = acc * v
    for i in range(3):
        mul(x + i)
    return acc


def default_arg(x):
    g = lambda t, s=x: t * s  # noqa: E731
    return g(2.0)


def default_def(x):
    def g(t, s=x * x, *, k=x):
        return t * s + k
    return g(2.0) + g(1.0, k=3.0)


def default_overridden(x):
    g = lambda t, s=x: t * s  # noqa: E731
    return g(2.0, x * x)


def private_name(x):
    class A:
        def __init__(self, v):
            self.__v = v

        def get(self):
            return self.__v * 2
    return A(x).get()


def nested_def_noclosure(x):
    def g(t):
        return t * t
    return g(x)


def kwargs_spread(x):
    def g(**kw):
        return {**kw}["a"] * 2
    return g(a=x)


CASES = [rec_inner, mutual_inner, nonlocal_acc, nonlocal_in_loop, default_arg, default_def,
         default_overridden, private_name, nested_def_noclosure, kwargs_spread]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_gradient_matches_finite_differences(f):
    assert_grad_fd(f, X)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_pullback_matches_gradient(f):
    y, back = pullback(f, X)
    assert y == pytest.approx(f(X))
    assert back(1.0)[0] == pytest.approx(gradient(f, X)[0])
