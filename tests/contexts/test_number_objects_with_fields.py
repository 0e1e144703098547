"""Numbers of a class of their own that carry fields (session 69, sweep R: thermochem's units, `class
Pressure(float)` whose `__init__` stores `self.data = float(data)`).

- Reverse mode took a read of such a field for a number's attribute (`.real`) and dropped its cotangent:
  `d = Deg(p); d.data = p * p; d.data += sin(p); d.data * d` gave 2.65 for 6.38, silently.
- Reverse mode refused a float subclass with an `__init__` of its own ("no rule for the C function Pressure").
- Forward mode's store into fields by tuple unpacking (`obj.unit, obj.raw = unit, v` in a `__new__`) ran
  unintercepted on the dual: an AttributeError.

Against central differences; a mode may refuse (complex subclasses, `object.__setattr__`), never answer wrongly."""

import copy
import math

import numpy as np
import pytest

import overdub
from overdub.errors import OverdubError
from tests import fd
from tests.modes import MODES, gradient_in

pytestmark = pytest.mark.one_mode


class Pressure(float):
    def __init__(self, data, scale=2.0):
        self.data = float(data) * scale
        self.squared = self * self

    def doubled(self):
        return self.data * 2.0 + self

    @property
    def bar(self):
        return Pressure(self.data / 1e5)


class Scaled(float):
    def __new__(cls, v, unit="m"):
        obj = super().__new__(cls, v * 10.0)
        obj.unit, obj.raw = unit, v
        return obj


class Deg(float):
    pass


class Tagged(int):
    pass


class Cplx(complex):
    pass


def _fields_read_back(p):
    d = Deg(p)
    d.data = p * p
    d.data += math.sin(p)
    return d.data * d


def _list_of_numbers_with_fields(p):
    ds = [Deg(p * k) for k in range(1, 4)]
    for k, d in enumerate(ds):
        d.w = d * k
    return sum(d.w for d in ds)


def _copied(p):
    d = Deg(p)
    d.w = p
    e = copy.copy(d)
    return e.w * 3.0 + e


def _array_field(p):
    d = Deg(p)
    d.w = np.array([p, 2.0 * p])
    return float(np.sum(d.w ** 2)) + d


class Slotted(float):
    __slots__ = ("data", "w")


class Shadowed(float):
    data = 2.0  # (a class's constant, shadowed by an instance's field)


def _slots(p):
    d = Slotted(1.0)
    d.data = p * 2
    d.data = d.data * p
    d.w = p * d
    return d.data + d.w


def _shadowed(p):
    d = Shadowed(p)
    before = d.data * d  # (the class's 2.0)
    d.data = p ** 3
    return d.data * d + before


CASES = {
    "slots (`data` among them)": _slots,
    "an instance's field shadowing its class's constant": _shadowed,
    "its __init__'s fields": lambda p: Pressure(p).doubled(),
    "by keyword": lambda p: Pressure(p, scale=3.0).squared + Pressure(p).data,
    "a property making another": lambda p: Pressure(p * 1e5).bar * 2.0,
    "fields read back": _fields_read_back,
    "a __new__ of its own storing by unpacking": lambda p: Scaled(p * 2.0).raw * Scaled(p),
    "an int subclass's field": lambda p: Tagged(3).__class__ and _int_field(p),
    "a list of them": _list_of_numbers_with_fields,
    "copied": _copied,
    "an array field": _array_field,
}


def _int_field(p):
    i = Tagged(3)
    i.w = p * 2.0
    return i.w * i


REFUSED_MAY = {("copied", "forward")}  # (a dual copied by pickling's protocol: refused, never a constant)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES)
def test_number_objects_with_fields(case, mode):
    f = CASES[case]
    want = fd.gradient(f, 1.3)[0]
    assert abs(want) > 0.5
    try:
        got = gradient_in(mode, f, 1.3)[0]
    except OverdubError:
        assert (case, mode) in REFUSED_MAY
        return
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_refused_where_not_followed(mode):
    def complex_field(p):
        c = Cplx(p, 1.0)
        c.w = p ** 3
        return (c.w * c).real

    def set_by_object(p):
        d = Deg(2.0)
        object.__setattr__(d, "w", p * 5.0)
        return getattr(d, "w") + vars(d)["w"]

    for f in (complex_field, set_by_object):
        want = fd.gradient(f, 1.3)[0]
        try:
            got = gradient_in(mode, f, 1.3)[0]
        except OverdubError:
            continue
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_unpacking_into_attributes_and_items_under_a_context():
    """The core: every element of a tuple target stored through the context, in Python's order."""
    class Stores(overdub.Context):
        intercepts = overdub.KINDS

        def __init__(self):
            self.seen = []

        def overdub(self, site, fn, /, *args, **kwargs):
            if site.kind in ("setattr", "setitem"):
                self.seen.append((site.kind, args[1]))
            return fn(*args, **kwargs)

    class O:
        pass

    def g():
        o, d, items = O(), {}, [0, 0, 0]
        o.a, (d["k"], *items[1:]) = 1, (2, 3, 4)
        [o.b, d["j"]] = "xy"
        return o.a, o.b, d, items

    ctx = Stores()
    assert ctx.run(g) == g() == (1, "x", {"k": 2, "j": "y"}, [0, 3, 4])
    assert ctx.seen == [("setattr", "a"), ("setitem", "k"), ("setitem", slice(1, None)), ("setattr", "b"),
                        ("setitem", "j")]


class _Pair(__import__("collections").namedtuple("_Pair", "a b")):
    pass


@pytest.mark.parametrize("mode", MODES)
def test_a_named_tuple_s_own_attribute(mode):
    """A named tuple subclass's attribute beside its fields: reverse mode crashed (ValueError: tuple.index),
    refused now; forward mode follows it."""
    def f(p):
        n = _Pair(p, 2.0)
        n.extra = p * 3.0
        return n.extra * n.a
    want = fd.gradient(f, 1.3)[0]
    try:
        got = gradient_in(mode, f, 1.3)[0]
    except OverdubError:
        assert mode == "reverse"
        return
    np.testing.assert_allclose(got, want, rtol=1e-6)
