"""Objects in every shape the standard library makes them (dataclasses, slots, descriptors, named tuples,
enums, context managers, namespaces), read in every way (attributes, `vars()`, `__dict__`, `.values()`),
in reverse and forward mode: the derivative central differences give, or a clear refusal. Found wrong:
a dataclass instance's fields read through `vars(p).values()` or `p.__dict__.values()` (reverse mode: 0 —
the generated constructor's pullback read the fields' cotangents from the plain cotangent only, not from
the object's box where such reads leave them)."""

import collections
import copy
import dataclasses
import enum
import functools
import math
import types
import typing

import numpy as np
import pytest

from contexts import gradient
from tests import fd
from tests.modes import MODES, assert_right_or_refused

X, Y = 0.7, 1.3


@dataclasses.dataclass
class P:
    a: float
    b: float = 2.0

    def norm(self):
        return math.hypot(self.a, self.b)


@dataclasses.dataclass(frozen=True)
class Frozen:
    a: float
    b: float


@dataclasses.dataclass
class WithPost:
    a: float
    c: float = dataclasses.field(init=False)

    def __post_init__(self):
        self.c = self.a * self.a


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a, self.b = a, b


class Plain:
    def __init__(self, a, b):
        self.a, self.b = a, b


class Cached:
    def __init__(self, a):
        self.a = a

    @functools.cached_property
    def sq(self):
        return self.a * self.a


class Doubled:
    def __set_name__(self, owner, name):
        self.name = "_" + name

    def __get__(self, obj, owner=None):
        return getattr(obj, self.name) * 2

    def __set__(self, obj, v):
        setattr(obj, self.name, v)


class UsesDescriptor:
    v = Doubled()

    def __init__(self, v):
        self.v = v


Pair = collections.namedtuple("Pair", "a b")


class Typed(typing.NamedTuple):
    a: float
    b: float = 1.0

    def s(self):
        return self.a * self.b


class Color(enum.Enum):
    R = 1.5
    G = 2.5


class Acc:
    def __init__(self):
        self.total = 0.0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.total *= 2
        return False

    def add(self, v):
        self.total += v


def vars_values(a, b):
    p = P(a, b)
    return sum(vars(p).values())


def dict_values_of_a_temporary(a, b):
    return sum(P(a, b).__dict__.values())


def mixed_reads(a, b):
    p = P(a, b)
    return p.a * 2 + sum(vars(p).values()) + p.b * p.a


def chained(a, b):
    p = P(a * b, b)
    q = P(p.a, p.b * a)
    return sum(v * v for v in vars(q).values()) + sum(vars(p).values())


def in_a_list(a, b):
    ps = [P(a, b), P(b, a)]
    return sum(sum(vars(p).values()) * i for i, p in enumerate(ps, 1))


def items_of_plain(a, b):
    q = Plain(a, b * b)
    return sum(v * len(k) for k, v in vars(q).items())


def with_block(a, b):
    with Acc() as acc:
        acc.add(a * b)
        acc.add(a)
    return acc.total


CASES = {
    "vars(p).values()": vars_values,
    "temporary.__dict__.values()": dict_values_of_a_temporary,
    "attributes and vars": mixed_reads,
    "chained dataclasses": chained,
    "dataclasses in a list": in_a_list,
    "vars(plain).items()": items_of_plain,
    "dataclass method": lambda a, b: P(a, b).norm(),
    "dataclass default": lambda a, b: P(a).norm() * b,
    "dataclasses.replace": lambda a, b: dataclasses.replace(P(a, 1.0), b=b).norm(),
    "dataclasses.astuple": lambda a, b: sum(dataclasses.astuple(P(a, b * b))),
    "dataclasses.asdict": lambda a, b: sum(dataclasses.asdict(P(a, b * a)).values()),
    "frozen dataclass": lambda a, b: Frozen(a, b).a * Frozen(b, a).a,
    "__post_init__": lambda a, b: WithPost(a).c * b,
    "slots": lambda a, b: (lambda s: s.a * s.b)(Slotted(a, b)),
    "cached_property": lambda a, b: (lambda c: c.sq + c.sq * b)(Cached(a)),
    "descriptor": lambda a, b: UsesDescriptor(a).v * b,
    "namedtuple": lambda a, b: Pair(a, b).a * Pair(b, a)[1],
    "namedtuple _replace": lambda a, b: sum(Pair(a, b)._replace(a=b * b)),
    "namedtuple _asdict": lambda a, b: Pair(a, b)._asdict()["b"] * a,
    "NamedTuple method": lambda a, b: Typed(a, b).s() + Typed(a).s(),
    "enum values": lambda a, b: Color.R.value * a + Color["G"].value * b,
    "with block": with_block,
    "copy.copy": lambda a, b: copy.copy(P(a, b)).norm(),
    "copy.deepcopy": lambda a, b: copy.deepcopy([P(a, b)])[0].norm(),
    "SimpleNamespace": lambda a, b: (lambda n: n.a * n.b)(types.SimpleNamespace(a=a, b=b)),
    "getattr default": lambda a, b: getattr(P(a, b), "c", a) * b,
    "__dict__.update": lambda a, b: (lambda p: (p.__dict__.update(a=b * 3), p.norm())[1])(P(a, b)),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(CASES))
def test_right_or_refused(name, mode):
    assert_right_or_refused(mode, CASES[name], X, Y)


@pytest.mark.parametrize("f", [vars_values, dict_values_of_a_temporary, mixed_reads, chained, in_a_list],
                         ids=lambda f: f.__name__)
def test_fields_read_through_vars_are_differentiated(f):
    """Right, not refused, in reverse mode."""
    np.testing.assert_allclose(gradient(f, X, Y), fd.gradient(f, X, Y), rtol=1e-6)
