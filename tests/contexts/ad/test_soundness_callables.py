"""Callables from the standard library that used to be refused: a `functools.lru_cache`/`cache` around a
closure of differentiated values, `operator.itemgetter`/`attrgetter`, and `math.fsum`/`math.prod` of a
list or generator of perturbed values under duals. Every mode against central differences."""

from __future__ import annotations

import functools
import math
import operator

import numpy as np
import pytest

from contexts import derivative, gradient, hessian, jacfwd, jvp
from tests import fd

X = np.array([0.7, 1.3])


@functools.lru_cache(maxsize=None)
def _square(t):
    return t * t


def cached_closures(x, y):
    @functools.lru_cache(maxsize=4)
    def g(k):
        return x * k + y * y

    @functools.cache
    def h(u):
        return u * x
    return g(2) + g(2) + g(x) + h(y) + h(y) + _square(x) + _square(x)


class _P:
    def __init__(self, a, b):
        self.a, self.b = a, b


def getters(x, y):
    t = [x, y * x, 3.0]
    u, w = operator.itemgetter(0, 1)(t)
    a, bb = operator.attrgetter("a", "b.b")(_P(x * y, _P(y, x)))
    plain = operator.attrgetter("real")(x) * y + operator.itemgetter(1)((y, x)) * x  # numbers, a tuple
    return operator.itemgetter(1)(t) * u + w + operator.itemgetter("q")({"q": x * x}) + a * bb + plain


def _gen(p, n):
    for i in range(n):
        yield p * (i + 1)


def sums_of_iterables(x, y):
    v = sum(_gen(x, 3)) * 0.2 + y  # a generator: forward mode runs the function on duals
    return (math.fsum([v, y * 0.629]) + math.fsum(t * x for t in (v, y))
            + math.prod([v, y]) + math.prod(t + 1.0 for t in (x, v)))


FUNCTIONS = [cached_closures, getters, sums_of_iterables]


@pytest.mark.parametrize("f", FUNCTIONS)
def test_every_mode(f):
    want = np.array(fd.gradient(f, *X, h=1e-6, order=2))
    np.testing.assert_allclose(gradient(f, *X), want, rtol=1e-6)
    np.testing.assert_allclose(jvp(f, tuple(X), (1.0, -0.4))[1], want @ [1.0, -0.4], rtol=1e-6)
    np.testing.assert_allclose(derivative(lambda s: f(X[0] + s, X[1] - 0.4 * s), 0.0), want @ [1.0, -0.4],
                               rtol=1e-6)
    packed = lambda v: f(v[0], v[1])  # noqa: E731
    np.testing.assert_allclose(jacfwd(packed, X), want, rtol=1e-6)
    np.testing.assert_allclose(hessian(packed, X), fd.hessian(lambda v: f(*v), X), rtol=1e-4, atol=1e-5)


def selections_and_sums(x, y):
    return max([x, y * y]) * min([x, y]) + math.fsum([x * y, y]) ** 2


@pytest.mark.parametrize("f", FUNCTIONS + [selections_and_sums])
def test_second_order_by_forward_over_forward(f):
    packed = lambda v: f(v[0], v[1])  # noqa: E731
    want = fd.hessian(lambda v: f(*v), X)
    np.testing.assert_allclose(hessian(packed, X, inner="forward"), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(jacfwd(lambda z: jacfwd(packed, z), X), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(hessian(packed, X), want, rtol=1e-4, atol=1e-5)
