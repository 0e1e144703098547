"""A property or `functools.cached_property` whose getter stores what it computes (a lazy cache:
`if self._c is None: self._c = ...`, as filterpy's `KalmanFilter.log_likelihood` does). Reverse mode used
to run the getter untraced and re-run it in the reverse pass, which then found the cache filled: the
derivative through the cache was silently zero. The getter now runs its twin where the attribute is read.
Every mode against central differences."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from contexts import derivative, gradient, hessian, jacfwd
from tests import fd


class Lazy:
    def __init__(self, x):
        self.x = x
        self._sq = None

    @property
    def sq(self):
        if self._sq is None:
            self._sq = self.x * self.x
        return self._sq

    @functools.cached_property
    def cube(self):
        return self.x ** 3

    @property
    def doubled(self):  # a getter with an effect on the object
        self.x = self.x * 2.0
        return self.x

    def total(self):
        return self.sq + self.cube


def lazy_property(x):
    return Lazy(x).sq


def lazy_property_twice(x):
    k = Lazy(x)
    return k.sq + k.sq * k.x


def cached_property_twice(x):
    k = Lazy(x)
    return k.cube + 2.0 * k.cube


def builtin_getattr(x):
    return getattr(Lazy(x), "sq") + getattr(Lazy(x), "cube", 0.0)


def through_method(x):
    return Lazy(x).total()


def in_loop(x):
    s = 0.0
    for i in range(3):
        k = Lazy(x * (i + 1))
        s = s + k.sq + k.cube
    return s


def getter_with_effect(x):
    k = Lazy(x)
    a = k.doubled
    return a * k.x + k.sq


def array_cache(x):
    k = Lazy(np.array([x, 2.0 * x]))
    return float(np.sum(k.sq * k.cube))


def reader_after_mutation(x):
    k = Lazy(x)
    a = k.sq
    k.x = 5.0
    k._sq = None
    return a + k.sq


FUNCTIONS = [lazy_property, lazy_property_twice, cached_property_twice, builtin_getattr, through_method,
             in_loop, getter_with_effect, array_cache, reader_after_mutation]


@pytest.mark.parametrize("mode", ["gradient", "derivative", "hessian"])
@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_lazy_getters(f, mode):
    x = 0.7
    if mode == "gradient":
        np.testing.assert_allclose(gradient(f, x)[0], fd.gradient(f, x)[0], rtol=1e-7, atol=1e-9)
    elif mode == "derivative":
        np.testing.assert_allclose(derivative(f, x), fd.derivative(f, x), rtol=1e-6, atol=1e-8)
    else:
        g = lambda v: f(v[0])  # noqa: E731
        np.testing.assert_allclose(hessian(g, np.array([x])), fd.hessian(g, np.array([x])), rtol=1e-4, atol=1e-5)


def test_getter_effects_happen_once():
    """The getter runs once, in the forward pass: the object ends as the plain call leaves it."""
    kept = []

    def f(x):
        k = Lazy(x)
        kept.append(k)
        return k.doubled

    assert gradient(f, 0.7) == (2.0,)
    assert kept[0].x == 1.4


def test_jacfwd_of_kalman_like_state():
    def f(v):
        k = Lazy(v)
        return k.sq + k.cube
    v = np.array([0.3, 1.2])
    np.testing.assert_allclose(jacfwd(f, v), fd.jacobian(f, v), rtol=1e-6, atol=1e-8)
