"""Objects built from differentiated values by library classes, as geopy's `Point(lat, lon)` builds them:
a Python `__new__` / `__init__` reading its arguments with `itertools.islice`, `math` functions, `np.array`
of a list. Forward mode ran the class natively, where none of that meets the context (refused: "no
forward rule for Point"); reverse mode had no rule for `itertools.islice`. Against central differences."""

import itertools
import math

import numpy as np
import pytest

from contexts import derivative, gradient, jacfwd
from tests import fd


class _Point:
    """geopy's shape: a Python __new__ taking the coordinates apart, then fields."""

    def __new__(cls, *args):
        self = super().__new__(cls)
        seq = args[0] if len(args) == 1 else args
        lat, lon = itertools.islice(iter(seq), 2)
        self.lat, self.lon = math.radians(float(lat)), math.radians(float(lon))
        return self


class _Vector:
    """A Python __init__ only (object's __new__)."""

    def __init__(self, x, y, scale=1.0):
        self.v = np.array([math.sin(x), math.cos(y)]) * scale


class _Slots:
    __slots__ = ("a",)

    def __init__(self, a):
        self.a = math.exp(a)


def _distance(x):
    p, q = _Point(x, 2.0 * x), _Point([0.3, x * x])
    return math.acos(math.sin(p.lat) * math.sin(q.lat) + math.cos(p.lat) * math.cos(q.lat) * math.cos(p.lon - q.lon))


def _vector(x):
    return float(np.sum(_Vector(x, x * x, scale=x).v ** 2) + _Vector(*[x, 0.5]).v[0])


def _slots(x):
    return _Slots(x).a * _Slots(a=2.0 * x).a


def _islice_steps(x):
    return sum(itertools.islice((x * k for k in range(10)), 1, 8, 3))


MODES = {"reverse": lambda f, x: gradient(f, x)[0], "forward": derivative,
         "jacfwd": lambda f, x: jacfwd(lambda v: np.array([f(v[0])]), np.array([x]))[0, 0]}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [_distance, _vector, _slots, _islice_steps])
def test_constructed_from_differentiated_values(mode, f):
    assert MODES[mode](f, 0.7) == pytest.approx(fd.derivative(f, 0.7), rel=1e-7)


def test_islice_consumes_as_islice_does():
    def f(x):
        it = iter([x, 2.0 * x, 3.0 * x, 4.0 * x])
        head = list(itertools.islice(it, 2))
        return head[0] * head[1] + next(it)  # the third item: islice took two, no more
    for mode in MODES:
        assert MODES[mode](f, 0.7) == pytest.approx(fd.derivative(f, 0.7), rel=1e-7)
