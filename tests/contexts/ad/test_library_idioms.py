"""Idioms of library code that reverse mode refused by name (C functions reached with differentiated
values): `setattr` of a plain instance attribute, `operator.methodcaller`; namedtuple construction
(`tuple.__new__`: `_make`, `_replace`: still refused, by name). Each against central differences, in reverse mode, under hessian and
forward; what stays refused (a property or `__setattr__` reached by setattr) is refused, never wrong."""

import collections
import operator

import pytest

from overdub.errors import OverdubError

from contexts import derivative, gradient, hessian
from tests import fd


class Box:
    scale = 1.0

    def __init__(self, p):
        self.p = p

    def twice(self, k=2.0):
        return k * self.p


class Prop:
    def __init__(self):
        self._v = 0.0

    @property
    def v(self):
        return self._v

    @v.setter
    def v(self, val):
        self._v = val


class Doubling:
    def __setattr__(self, k, v):
        object.__setattr__(self, k, v * 2.0)


P = collections.namedtuple("P", "x y")


def new_attribute(x):
    b = Box(1.0)
    setattr(b, "q", x * x)
    return b.q + b.p


def by_names(x):
    b = Box(x)
    for name in ("p", "scale"):  # (scale: a class attribute, shadowed on the instance)
        setattr(b, name, getattr(b, name) * x)
    return b.p + b.scale


def in_a_loop(x):
    bs = [Box(x), Box(2.0 * x)]
    for b in bs:
        setattr(b, "p", b.p * b.p)
    return bs[0].p + bs[1].p


def overwritten(x):
    b = Box(x)
    setattr(b, "p", 3.0)
    return b.p * x


def twice_set(x):
    b = Box(x)
    setattr(b, "p", b.p * 2.0)
    setattr(b, "p", b.p * x)
    return b.p


def method_caller(x):
    return operator.methodcaller("twice")(Box(x * x)) + operator.methodcaller("twice", 3.0)(Box(x))


def namedtuple_replace(x):
    t = P(x, x * x)._replace(y=3.0 * x)
    return t.x * t.y + sum(t) + t[0]


def namedtuple_make(x):
    t = P._make([x, 2.0])
    return t.x * t.y * x


CASES = [new_attribute, by_names, in_a_loop, overwritten, twice_set, method_caller]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["gradient", "hessian", "derivative"])
def test_idiom(f, mode):
    x = 0.7
    if mode == "gradient":
        got, want = gradient(f, x)[0], fd.derivative(f, x)
    elif mode == "hessian":
        got, want = hessian(f, x), fd.derivative(lambda s: fd.derivative(f, s, h=1e-4), x, h=1e-4)
    else:
        got, want = derivative(f, x), fd.derivative(f, x)
    assert float(got) == pytest.approx(want, rel=1e-5, abs=1e-6)


def through_property(x):
    p = Prop()
    setattr(p, "v", x * x)
    return p.v


def through_setattr_method(x):
    c = Doubling()
    setattr(c, "a", x)
    return c.a


@pytest.mark.parametrize("f", [through_property, through_setattr_method], ids=lambda f: f.__name__)
def test_setattr_through_class_code_is_refused_in_reverse_and_right_forward(f):
    with pytest.raises(OverdubError, match="setattr"):
        gradient(f, 0.7)
    assert derivative(f, 0.7) == pytest.approx(fd.derivative(f, 0.7), rel=1e-6)


class Slotted:
    __slots__ = ("p",)

    def __init__(self, p):
        self.p = p


def slot_overwritten_by_a_constant(x):
    s = Slotted(x)
    setattr(s, "p", 3.0)  # the old value's derivative must not receive the new one's reads
    return s.p * x


def test_a_slot_overwritten_by_setattr_is_refused_or_right():
    try:
        got = gradient(slot_overwritten_by_a_constant, 0.7)[0]
    except OverdubError:
        return
    assert got == pytest.approx(fd.derivative(slot_overwritten_by_a_constant, 0.7), rel=1e-6)


@pytest.mark.parametrize("f", [namedtuple_replace, namedtuple_make], ids=lambda f: f.__name__)
def test_namedtuple_construction_is_refused_in_reverse_and_right_forward(f):
    """(`tuple.__new__` shares its registry key with every C `__new__`: a rule there would answer for
    `float.__new__(MyFloat, x)` too. Refused by name until it has one of its own.)"""
    with pytest.raises(OverdubError, match="__new__"):
        gradient(f, 0.7)
    assert derivative(f, 0.7) == pytest.approx(fd.derivative(f, 0.7), rel=1e-6)
