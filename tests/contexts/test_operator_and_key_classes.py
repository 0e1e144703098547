"""A `typing.NamedTuple` with its own operator (`__add__` calling the class's own `add`, which builds a new
tuple): reverse mode re-runs the operator and refuses one that stores into objects. `self.add(other)` was
taken for a set's `add`, a store, and every py-ballisticcalc trajectory was refused (session 71's sweep T);
the class's own method is now read as its code (`lowered.runtime._scan_stores`). One that does store into
its operand stays refused.

Also a dict keyed by an object hashed and compared by identity in methods of its own (`return self is other`,
elote's competitors): refused as a differentiated key, though nothing of its value is the key
(`helpers._identity_methods`). An object equal by its differentiated value stays refused."""

from typing import NamedTuple

import numpy as np
import pytest

import contexts
from contexts import gradient
from overdub.errors import OverdubError

from tests import fd


class Vector(NamedTuple):
    x: float
    y: float

    def add(self, b):
        return Vector(self.x + b.x, self.y + b.y)

    def __add__(self, other):  # (overrides tuple concatenation)
        return self.add(other)

    def scaled(self, a):
        return Vector(self.x * a, self.y * a)


def flight(v):
    p = Vector(0.0, 1.0)
    vel = Vector(v, 2.0 * v * v)
    for _ in range(3):
        p = p + vel.scaled(0.1)
    return p.x * p.y


@pytest.mark.one_mode
def test_each_mode_against_central_differences():
    expected = fd.derivative(flight, 3.0)
    assert gradient(flight, 3.0)[0] == pytest.approx(expected, rel=1e-7)
    assert contexts.derivative(flight, 3.0) == pytest.approx(expected, rel=1e-7)


class Logged:
    def __init__(self, v, log):
        self.v, self.log = v, log

    def add(self, other):
        self.log.append(other.v)  # (stores its operand's value into an object it did not make)
        return Logged(self.v + other.v, self.log)

    def __add__(self, other):
        return self.add(other)


@pytest.mark.one_mode
def test_an_operator_storing_into_objects_stays_refused():
    def f(v):
        log = []
        s = Logged(1.0, log) + Logged(v, log)
        return s.v + sum(log)
    with pytest.raises(OverdubError):
        gradient(f, 2.0)


class Player:
    """elote's competitors: hashed and compared by identity, in methods of their own."""

    def __init__(self, rating):
        self.rating = rating
        self.opponents = {}

    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return object.__hash__(self)

    def beat(self, other):
        self.opponents[other] = self.opponents.get(other, 0) + 1  # (keyed by the object itself)
        self.rating = self.rating + 0.1 * other.rating


class Rated:
    """Equal by rating: a key whose value as a key is the differentiated number."""

    def __init__(self, rating):
        self.rating = rating

    def __eq__(self, other):
        return self.rating == other.rating

    def __hash__(self):
        return hash(self.rating)


@pytest.mark.one_mode
def test_an_object_keyed_by_identity():
    """A dict keyed by an object that holds a differentiated rating but hashes by identity: nothing of the key's
    value is its rating (refused as a differentiated key before)."""
    def f(r):
        a, b = Player(r), Player(2.0 * r)
        a.beat(b)
        a.beat(b)  # (the entry found by the object: a hit)
        return a.rating * sum(a.opponents.values()) + a.opponents[b]
    assert gradient(f, 1.5)[0] == pytest.approx(fd.derivative(f, 1.5), rel=1e-8)
    assert gradient(f, 1.5)[0] == pytest.approx(2 * (1.0 + 0.4), rel=1e-12)


@pytest.mark.one_mode
def test_an_object_keyed_by_its_value_stays_refused():
    def f(r):
        table = {Rated(r): 1.0}
        return next(iter(table)).rating * 2.0 + r
    with pytest.raises(OverdubError):
        gradient(f, 1.5)


@pytest.mark.one_mode
def test_a_set_of_objects_compared_by_identity():
    """elote's Bradley-Terry: the competitors met, a set of objects hashed by identity in methods of their own."""
    def f(r):
        a, b, c = Player(r), Player(2.0 * r), Player(3.0)
        seen = {a}
        seen.add(b)
        seen.add(c)
        return sum(p.rating for p in seen) * r
    assert gradient(f, 1.5)[0] == pytest.approx(fd.derivative(f, 1.5), rel=1e-8)
