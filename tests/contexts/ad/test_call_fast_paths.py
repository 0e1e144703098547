"""Reverse mode's per-call fast paths give what the general paths give (perf/README.md, "How the overhead
is kept down"): a function's twin kept for the next call sees its defaults as they are at each call; an
instance's own attribute read takes its field's cotangent while properties and class attributes keep
theirs; numpy float64 scalars take the adjoint's inline + - * / with float64 cotangents. Every gradient is
compared with central differences (tests/fd.py)."""

from __future__ import annotations

import numpy as np
import pytest

from contexts import gradient
from tests import fd


def scaled(x, k=2.0):
    return x * k


def call_scaled(x):
    return scaled(x) + scaled(x, 3.0)


def keyword_scaled(x, *, k=2.0):
    return x * k


def call_keyword_scaled(x):
    return keyword_scaled(x) * x


def test_defaults_replaced_between_calls_are_seen():
    """The forward twin of a module's function is kept between calls: a replaced `__defaults__` or a
    changed `__kwdefaults__` must be the one the next call runs with."""
    x = 1.7
    assert gradient(call_scaled, x)[0] == pytest.approx(fd.gradient(call_scaled, x)[0], rel=1e-9)
    assert gradient(call_keyword_scaled, x)[0] == pytest.approx(fd.gradient(call_keyword_scaled, x)[0], rel=1e-9)
    old, old_kw = scaled.__defaults__, dict(keyword_scaled.__kwdefaults__)
    try:
        scaled.__defaults__ = (5.0,)
        keyword_scaled.__kwdefaults__["k"] = -4.0
        g = gradient(call_scaled, x)[0]
        assert g == pytest.approx(fd.gradient(call_scaled, x)[0], rel=1e-9)
        assert g == pytest.approx(8.0)  # 5 + 3
        g = gradient(call_keyword_scaled, x)[0]
        assert g == pytest.approx(fd.gradient(call_keyword_scaled, x)[0], rel=1e-9)
        assert g == pytest.approx(-8.0 * x)
    finally:
        scaled.__defaults__ = old
        keyword_scaled.__kwdefaults__.clear()
        keyword_scaled.__kwdefaults__.update(old_kw)


def test_default_holding_a_differentiated_value():
    """A default that holds the differentiated value (`lambda t, s=x: ...`) is differentiated through."""
    def f(x):
        g = lambda t, s=x * x: t * s  # noqa: E731
        return g(x) + g(2.0)
    x = 0.8
    assert gradient(f, x)[0] == pytest.approx(fd.gradient(f, x)[0], rel=1e-8)


class Box:
    scale = 3.0  # a class attribute: a constant

    def __init__(self, k):
        self.k = k

    @property
    def twice(self):
        return 2.0 * self.k

    def value(self, a):
        return a * self.k + a * self.scale + self.twice * a


def through_fields(x):
    b = Box(x)
    return b.value(x) + b.k * b.k


def through_stored_method(x):
    b = Box(x)
    b.m = b.value  # a bound method of b stored on b itself: its cotangent is b's
    return b.m(x)


def test_instance_fields_properties_and_class_attributes():
    for f in (through_fields, through_stored_method):
        x = 1.3
        assert gradient(f, x)[0] == pytest.approx(fd.gradient(f, x)[0], rel=1e-8)


def test_float64_scalars_inline():
    """`p[0]` of a float array is a numpy float64: + - * / on them give float64 cotangents, as the
    general case does, with the values of central differences."""
    def f(p):
        a, b = p[0], p[1]
        return (a * b - a / b + (a + 2.0) * (3 - b)) / (a - b * 0.5)
    p = np.array([1.2, 0.7])
    g = gradient(f, p)[0]
    np.testing.assert_allclose(g, fd.gradient(f, p)[0], rtol=1e-8)

    def scalars(a, b):
        return a * b - a / b + (a + 2.0) * (3 - b)
    a, b = np.float64(1.2), np.float64(0.7)
    ga, gb = gradient(scalars, a, b)
    assert type(ga) is np.float64 and type(gb) is np.float64
    want = fd.gradient(scalars, a, b)
    assert ga == pytest.approx(want[0], rel=1e-8) and gb == pytest.approx(want[1], rel=1e-8)
