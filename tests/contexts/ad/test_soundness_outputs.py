"""What `gradient` seeds an output with, and what `pullback` takes as an output's cotangent.

Reverse mode takes the cotangent of an object as that of its fields. Before, an output object with numpy's
protocol (`__array_ufunc__`: a library's scalar wrapper, pint's Quantity, xarray's DataArray) was seeded
with the number 1, which its fields' cotangent dropped: the gradient was silently zero. Now such an output
is refused unless its type is registered (a scalar kind, or a container with a `seed`: DataArray and
Quantity, tested with their packages); a cotangent handed to `back` as nested `Tangent`s is read as plain
values (the session's own boxes are never the caller's)."""

import numpy as np
import pytest

from contexts import NonScalarError, derivative, gradient, pullback
from contexts.rules.cotangents import Tangent
from overdub.errors import OverdubError


class Meters:
    """A scalar-like wrapper of a number, as libraries write them (numpy's protocol, its own fields)."""

    __array_ufunc__ = None

    def __init__(self, v):
        self.v = v

    def __mul__(self, o):
        return Meters(self.v * (o.v if isinstance(o, Meters) else o))

    __rmul__ = __mul__

    def __float__(self):
        return float(self.v)


def test_an_object_output_is_refused_not_zero():
    with pytest.raises(NonScalarError, match="Meters") as e:
        gradient(lambda x: Meters(x) * Meters(x), 3.0)
    assert "float(y)" in e.value.fix


def test_its_number_is_differentiated():
    assert gradient(lambda x: float(Meters(x) * Meters(x)), 3.0)[0] == pytest.approx(6.0, rel=1e-12)


def test_forward_mode_refuses_it_too():
    with pytest.raises(OverdubError, match="Meters"):
        derivative(lambda x: Meters(x) * Meters(x), 3.0)


class Box:
    __slots__ = ("inner", "w")

    def __init__(self, inner, w):
        self.inner = inner
        self.w = w


def nested(x):
    b = Box(Box(x * 2.0, x), x ** 2)
    return Box(b.inner, b.w * 3.0)


@pytest.mark.parametrize("kind", [Tangent, dict])
def test_nested_cotangents_of_an_object_output(kind):
    """d/dx of 1·(2x) + 10·x + 100·(3x²) at 1.5 is 2 + 10 + 900."""
    y, back = pullback(nested, 1.5)
    dy = kind(inner=kind(inner=1.0, w=10.0), w=100.0)
    assert back(dy) == (pytest.approx(912.0, rel=1e-12),)
    assert dy == kind(inner=kind(inner=1.0, w=10.0), w=100.0)  # the caller's cotangent is left as it was
