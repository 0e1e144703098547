"""Idioms of library code that reverse mode refused by name (C functions reached with differentiated
values): `setattr` of a plain instance attribute, `operator.methodcaller`, namedtuple construction
(`tuple.__new__`: `_make`, `_replace`). Each against central differences, in reverse mode, under hessian and
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


def namedtuple_fields(x):
    t = P(x * x, y=2.0 * x)
    a, b = t
    return a * b + t._asdict()["y"] * t.x


CASES = [new_attribute, by_names, in_a_loop, overwritten, twice_set, method_caller, namedtuple_replace,
         namedtuple_make, namedtuple_fields]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["gradient", "hessian", "derivative"])
def test_idiom(f, mode):
    got, want = fd.in_mode(f, 0.7, mode)
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
def test_setattr_through_class_code_is_differentiated_as_that_code(f):
    # (the property's setter or the class's `__setattr__`, run as the code it is: refused before)
    want = fd.derivative(f, 0.7)
    assert gradient(f, 0.7)[0] == pytest.approx(want, rel=1e-6)
    assert derivative(f, 0.7) == pytest.approx(want, rel=1e-6)
    assert hessian(f, 0.7) == pytest.approx(fd.derivative(lambda t: derivative(f, t), 0.7), rel=1e-5, abs=1e-6)


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



class MyFloat(float):
    pass


def float_subclass(x):
    return float.__new__(MyFloat, x * x) * 1.0


def test_another_c_new_is_not_taken_for_tuples():
    """tuple.__new__'s rule is its own: `float.__new__(MyFloat, x)` is refused or right, never 0."""
    try:
        got = gradient(float_subclass, 0.7)[0]
    except OverdubError:
        return
    assert got == pytest.approx(1.4, rel=1e-9)


def namespace_dict_store(x):
    import types
    ns = types.SimpleNamespace()
    ns.__dict__["p"] = x  # (a C type's instance dict, which reverse mode cannot remember weakly: held strongly)
    return ns.p * 2.0


def namespace_vars_store(x):
    import types
    ns = types.SimpleNamespace()
    vars(ns)["p"] = x
    return ns.p * 2.0


@pytest.mark.parametrize("f", [namespace_dict_store, namespace_vars_store], ids=lambda f: f.__name__)
def test_a_store_through_a_c_instance_dict_is_its_objects_field(f):
    """The dict of an object that cannot be referred to weakly, read before it holds differentiated values:
    a store through it was apart from the object's fields (gradient 0, silently), then refused; the object is
    now held strongly while its dict is known (session 41), the store one of its fields."""
    assert gradient(f, 0.7)[0] == pytest.approx(2.0, rel=1e-12)
    assert derivative(f, 0.7) == pytest.approx(2.0, rel=1e-12)


class _NamedProperty(property):
    """A property subclass (pygeodesy's `_NamedProperty`): object.__setattr__ runs its Python setter."""


class _Scaled:
    def _get(self):
        return self._v

    def _set(self, v):
        self._v = 3.0 * v

    v = _NamedProperty(_get, _set)

    def __init__(self, v):
        object.__setattr__(self, "v", v)  # (a class's own __setattr__ ending in the plain store)


def test_object_setattr_through_a_property_subclass_runs_its_setter():
    def f(x):
        s = _Scaled(x * x)
        return s.v * x

    assert gradient(f, 1.5)[0] == pytest.approx(fd.derivative(f, 1.5), rel=1e-7)
    assert derivative(f, 1.5) == pytest.approx(fd.derivative(f, 1.5), rel=1e-7)


class _Named2(tuple):
    """pygeodesy's named tuples: fields read by `tuple.__getitem__` in `__getattr__`."""
    _Names_ = ("a", "b")

    def __new__(cls, a, b):
        return tuple.__new__(cls, (a, b))

    def __getattr__(self, name):
        try:
            return tuple.__getitem__(self, self._Names_.index(name))
        except ValueError:
            raise AttributeError(name) from None


class _Masked(tuple):
    def __new__(cls, a, b):
        return tuple.__new__(cls, (a, b))

    def __getitem__(self, i):  # (tuple.__getitem__ reads past it)
        return 0.0


def test_tuple_getitem_called_on_a_tuple_subclass():
    def f(x):
        t = _Named2(x * 2.0, x * x)
        return t.a + t.b * 3.0 + tuple.__getitem__(t, 1)

    assert gradient(f, 1.5)[0] == pytest.approx(fd.derivative(f, 1.5), rel=1e-7)
    assert derivative(f, 1.5) == pytest.approx(fd.derivative(f, 1.5), rel=1e-7)


def test_tuple_getitem_past_a_subclass_getitem_is_refused():
    def f(x):
        m = _Masked(x, x ** 3)
        return tuple.__getitem__(m, 1) + m[0]

    assert f(1.5) == pytest.approx(1.5 ** 3)
    for mode in (gradient, derivative):
        with pytest.raises(OverdubError, match="own __getitem__"):
            mode(f, 1.5)
