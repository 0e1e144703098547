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


def closure_on_obj(x):
    class S:
        def __init__(self, f):
            self.f = f

        def run(self, y):
            return self.f(y)
    k = x
    s = S(lambda y: k * y)
    return s.run(3.0)


def bound_method_on_obj(x):
    class A:
        def __init__(self, v):
            self.v = v

        def m(self, t):
            return self.v * t

    class B:
        def __init__(self, f):
            self.f = f
    return B(A(x).m).f(2.0)


def partial_mul(x):
    return functools.partial(operator.mul, x)(3.0)


def partial_kw(x):
    def g(a, b, c=1.0):
        return a * b + c
    return functools.partial(g, x, c=x * x)(3.0)


def partial_nested(x):
    def g(a, b, c):
        return a * b * c
    return functools.partial(functools.partial(g, x), 2.0)(x)


def partial_nested_kw(x):
    def g(a, b=1.0, c=1.0):
        return a * b + c
    return functools.partial(functools.partial(g, b=x), c=x * x)(3.0)


def lru(x):
    @functools.lru_cache
    def sq(t):
        return t * t
    return sq(2.0) + sq(x)


def lru_method(x):
    class A:
        @functools.lru_cache
        def sq(self, t):
            return t * t
    a = A()
    a.sq(x)  # a plain value cached for x must not be served to a differentiated call
    return a.sq(x)


CASES = [closure_on_obj, bound_method_on_obj, partial_mul, partial_kw, partial_nested, partial_nested_kw,
         lru, lru_method, rec_inner, mutual_inner, nonlocal_acc, nonlocal_in_loop, default_arg, default_def,
         default_overridden, private_name, nested_def_noclosure, kwargs_spread]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_gradient_matches_finite_differences(f):
    assert_grad_fd(f, X)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_pullback_matches_gradient(f):
    y, back = pullback(f, X)
    assert y == pytest.approx(f(X))
    assert back(1.0)[0] == pytest.approx(gradient(f, X)[0])
