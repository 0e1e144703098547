"""Cases of session 48. A dataclass whose fields are stored through Python of the class's own — a `__setattr__`
(astral's `Observer` stores `float(value)` through `super()`), one inherited from a base dataclass, a data
descriptor under a field's name — had its generated `__init__` (no source) run natively and the fields taken
as the arguments passed: reverse mode was silently wrong wherever the store changes the value (3.0 for 0.80,
0.0 for 15.2, 3.6 for 0.59) and forward mode refused `float(value)` of a dual. The generated `__init__` now
runs as code (`lowered.runtime.dataclass_init`) in both modes. Likewise a namedtuple subclass's own `__new__`.
Each case against finite differences."""

import collections
import dataclasses
import math
import typing

import numpy as np
import pytest

from contexts import gradient
from contexts.forward import derivative
from tests import fd
from tests.modes import assert_scalar_modes


@dataclasses.dataclass
class _Observer:
    """astral's `Observer`."""

    latitude: float = 1.0

    def __setattr__(self, name, value):
        super().__setattr__(name, float(value))


@dataclasses.dataclass
class _Sine:
    a: float = 1.0

    def __setattr__(self, name, value):
        super().__setattr__(name, math.sin(value))


@dataclasses.dataclass
class _Square:
    a: float = 1.0

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value * value)


class _Cubed:
    """A data descriptor keeping the cube of what is stored."""

    def __set_name__(self, owner, name):
        self.name = "_" + name

    def __get__(self, obj, kind=None):
        return 1.0 if obj is None else getattr(obj, self.name)

    def __set__(self, obj, value):
        setattr(obj, self.name, value ** 3)


@dataclasses.dataclass
class _Described:
    a: _Cubed = _Cubed()


@dataclasses.dataclass
class _Base:
    a: float

    def __setattr__(self, name, value):
        object.__setattr__(self, name, np.tanh(value))


@dataclasses.dataclass
class _Derived(_Base):
    b: float = 0.5


@dataclasses.dataclass(slots=True)
class _Slotted:
    a: float
    b: float = 2.0


@dataclasses.dataclass(frozen=True)
class _Frozen:
    a: float
    b: float = 2.0


def _julian(n):
    return int(365.25 * (n + 4716))


def _inner(o, n):
    return _julian(n) * 1e-9 + o.latitude


def astral_two_calls_down(a):
    return _inner(_Observer(a), 2024) * a


CASES = {
    "astral's Observer, a constant int() two calls down": astral_two_calls_down,
    "__setattr__ storing sin(value) through super()": lambda x: _Sine(x).a * 3.0,
    "__setattr__ storing value * value": lambda x: _Square(x).a * 3.0,
    "a descriptor under a field's name": lambda x: _Described(x).a * 3.0,
    "a base dataclass's __setattr__": lambda x: _Derived(x, x * x).b + _Derived(x).a,
    "dataclasses.replace through it": lambda x: dataclasses.replace(_Derived(1.0), a=x).a,
    "a slotted dataclass": lambda x: _Slotted(x).a * _Slotted(x, x).b,
    "a frozen dataclass": lambda x: _Frozen(x, x * x).b * _Frozen(x).a,
}


@pytest.mark.parametrize("name", list(CASES))
def test_dataclass_stores_through_its_own_code(name):
    assert_scalar_modes(CASES[name], 1.3, second=False)


def test_dataclass_objects_built_as_before():
    """The generated `__init__` as code keeps what Python's does: defaults, keywords, errors."""
    def f(x):
        return _Derived(a=x, b=x).b * _Derived(x).b  # tanh(x) * tanh(0.5): each field through the base's store
    np.testing.assert_allclose(gradient(f, 0.7)[0], (1 - np.tanh(0.7) ** 2) * np.tanh(0.5), rtol=1e-12)
    with pytest.raises(TypeError, match=r"_Derived.__init__\(\) missing 1 required positional argument: 'a'"):
        gradient(lambda x: _Derived().a * x, 0.7)


# -- a namedtuple subclass with a `__new__` of its own was built natively, its fields taken for the arguments
# (silently 1.0 for 1.27, 1.3 for 5.07 in reverse mode); its `__new__` now runs as code, the generated one it
# calls through `super()` taking the fields from its arguments --

class _Point(collections.namedtuple("_Point", "a b")):
    def __new__(cls, a, b=1.0):
        return super().__new__(cls, math.sin(a), b * a)


class _Pair(typing.NamedTuple):
    a: float
    b: float = 2.0

    def scaled(self):
        return self.a * self.b


class _Squared(_Pair):
    def __new__(cls, a):
        return super().__new__(cls, a * a, b=a)


TUPLES = {
    "a namedtuple subclass's own __new__": lambda x: _Point(x, 2.0).a + _Point(x).b,
    "a NamedTuple subclass's own __new__, a keyword to super's": lambda x: _Squared(x).a * _Squared(x).b,
    "a NamedTuple's method and default": lambda x: _Pair(x).scaled() + _Pair(x, x).b,
    "_replace and _make": lambda x: _Pair(1.0)._replace(a=x).scaled() * _Pair._make([x, x]).b,
}


@pytest.mark.parametrize("name", list(TUPLES))
def test_namedtuple_built_by_its_own_code(name):
    assert_scalar_modes(TUPLES[name], 1.3, second=False)


# -- C code drawing the items of an object whose class iterates in Python (its own `__iter__`, or `__getitem__`
# alone): reverse mode ran that code natively, unrecorded, and lost the items' derivatives (0, silently) for a list
# extended or `+=`, a slice store, a dict updated from pairs, a list subclass built from it; forward mode refused
# most (the code met the duals natively). Both now draw the items as code. --

class _Items:
    def __init__(self, a):
        self.a = a

    def __iter__(self):
        return iter([math.sin(self.a), self.a ** 2])


class _Sequence:
    """Iterated by the sequence protocol: `__getitem__` until IndexError."""

    def __init__(self, a):
        self.a = a

    def __len__(self):
        return 2

    def __getitem__(self, i):
        if i >= 2:
            raise IndexError(i)
        return (math.sin(self.a), self.a ** 2)[i]


class _Pairs:
    def __init__(self, a):
        self.a = a

    def __iter__(self):
        yield "u", math.sin(self.a)
        yield "v", self.a ** 3


class _List(list):
    pass


def _extended(x):
    out = [1.0]
    out.extend(_Items(x))
    return out[1] * out[2]


def _added_in_place(x):
    out = [1.0]
    out += _Sequence(x)
    return out[1] + out[2]


def _slice_stored(x):
    out = [1.0, 2.0, 3.0]
    out[1:2] = _Items(x)
    return out[1] * out[2] * out[3]


def _stride_stored(x):
    out = [0.5, 2.0, 0.25]
    out[::2] = _Sequence(x)
    return out[0] * out[1] + out[2]


def _updated(x):
    d = {"w": 2.0}
    d.update(_Pairs(x))
    return d["u"] * d["w"] + d["v"]


def _ordered_updated(x):
    d = collections.OrderedDict()
    d.update(_Pairs(x))
    return d["v"] - d["u"]


def _subclass_built(x):
    return _List(_Items(x))[0] + _List(_Sequence(x))[1]


def _subclass_extended(x):
    out = _List()
    out.extend(_Sequence(x))
    return out[0] * out[1]


def _deque_extended(x):
    d = collections.deque([1.0])
    d.extendleft(_Items(x))
    return d[0] * d[1] + d[2]


def _consumed_lazily(x):
    pairs = zip(_Items(x), _Sequence(x))
    return sum(a * b for a, b in pairs) + sum(map(math.exp, _Sequence(x))) + list(enumerate(_Items(x)))[1][1]


def _reduced(x):
    import itertools
    return sum(_Sequence(x)) + max(_Items(x)) + list(itertools.chain(_Items(x), _Sequence(x)))[3] \
        + (0.5 if 0.25 in _Sequence(x) else x)


DRAWN = {
    "list.extend": _extended,
    "a list's +=": _added_in_place,
    "a slice store": _slice_stored,
    "an extended slice store": _stride_stored,
    "dict.update from pairs": _updated,
    "OrderedDict.update": _ordered_updated,
    "a list subclass built from it": _subclass_built,
    "a list subclass extended": _subclass_extended,
    "deque.extendleft": _deque_extended,
    "zip, map, enumerate": _consumed_lazily,
    "sum, max, chain, in": _reduced,
}
FORWARD_REFUSED = {"a list's +="}  # (forward mode: `+=` runs C's list.__iadd__, the protocol met the duals)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
@pytest.mark.parametrize("name", list(DRAWN))
def test_items_drawn_by_python_code(name):
    f = DRAWN[name]
    if name in FORWARD_REFUSED:
        from contexts.forward.dual import DualConversionError
        np.testing.assert_allclose(gradient(f, 1.3)[0], fd.derivative(f, 1.3), rtol=1e-6)
        with pytest.raises(DualConversionError):
            derivative(f, 1.3)
        return
    assert_scalar_modes(f, 1.3, second=False)
