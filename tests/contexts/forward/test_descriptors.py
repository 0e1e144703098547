"""Attributes read through a descriptor's Python code in forward mode on duals: a descriptor class whose
`__get__` is Python (pygeodesy's caching `Property_RO`, which Fsum's sums go through), and a property whose
getter is a method bound to the property. Their code runs under the forward context, as a property's
getter does (contexts/forward/context.py `_class_getter`), so the math functions in it keep the
derivative. Against central differences."""

import math

import numpy as np

from contexts import derivative, jacfwd
from tests import fd


class Cached:
    """A caching descriptor: computes once, keeps the value in the instance's __dict__."""

    def __init__(self, method):
        self.method, self.name = method, method.__name__

    def __get__(self, inst, owner=None):
        if inst is None:
            return self
        try:
            return inst.__dict__[self.name]
        except KeyError:
            inst.__dict__[self.name] = val = self.method(inst)
            return val


class BoundGetter(property):
    """A property whose getter is a method bound to the property itself."""

    def __init__(self, method):
        self.method = method
        property.__init__(self, self._get)

    def _get(self, inst):
        return self.method(inst)


class Sum:
    """Neumaier summation through both kinds of attribute (math.isfinite and math.fabs read the partials,
    as pygeodesy's `_2sum` does)."""

    def __init__(self, *xs):
        self.xs = list(xs)
        self.objects = self  # (a field: obj.__dict__ would win over a non-data descriptor of that name)

    @Cached
    def total(self):
        s, c = 0.0, 0.0
        for x in self.xs:
            t = s + x
            if math.isfinite(t):
                c += (s - t) + x if math.fabs(s) >= math.fabs(x) else (x - t) + s
            s = t
        return s + c

    @BoundGetter
    def scaled(self):
        return math.sin(self.total) * 2.0


def total(v):
    return Sum(*(v * v)).total


def scaled(v):
    return Sum(*(v * v)).scaled


V = np.array([1.0, 2.5, 3.0, 1e-3])


def test_cached_descriptor():
    np.testing.assert_allclose(jacfwd(total, V), fd.gradient(total, V)[0], rtol=1e-7)


def test_property_bound_getter():
    np.testing.assert_allclose(jacfwd(scaled, V), fd.gradient(scaled, V)[0], rtol=1e-7)


def test_scalar():
    f = lambda x: Sum(x, math.exp(x), 1.0).scaled  # noqa: E731
    np.testing.assert_allclose(derivative(f, 0.4), fd.gradient(f, 0.4)[0], rtol=1e-7)
