"""Float subclasses in forward mode (pygeodesy's Lat, Degrees, Meter): `float.__new__(cls, x)` of a
perturbed x is a dual whose value is the cls object (contexts/forward/context.py `float_object`); its
arithmetic is float's, computed by the dual; its methods, properties, descriptors and attributes are the
object's, run on the dual; attributes stored on it go to the object. A class with arithmetic of its own
is refused (the dual would compute float's). Against central differences."""

import math

import numpy as np
import pytest

from contexts import derivative, jacfwd, jvp
from overdub.errors import OverdubError
from tests import fd


class Angle(float):
    """No __new__ or __init__ of its own."""

    def radians(self):
        return math.radians(self)

    @property
    def sine(self):
        return math.sin(self.radians())


class Named(float):
    """Its own __new__ (through float.__new__), a name stored on the object, a property setter."""

    def __new__(cls, value, name="x"):
        self = float.__new__(cls, value)
        self.name = name
        return self

    @property
    def label(self):
        return self._label

    @label.setter
    def label(self, text):
        self._label = text.upper()

    def scaled(self, k):
        return self * k + math.exp(self / 10.0)


class WithInit(float):
    def __init__(self, value, unit="m"):
        self.unit = unit

    def to_km(self):
        return self / 1e3 if self.unit == "m" else self * 1.0


class Point:
    def __init__(self, lat, lon):
        self.lat, self.lon = Named(lat, "lat"), Named(lon, "lon")

    def distance(self, other):
        dlat = math.radians(other.lat - self.lat)
        dlon = math.radians(other.lon - self.lon)
        a = math.sin(dlat / 2) ** 2 + math.cos(math.radians(self.lat)) * math.cos(math.radians(other.lat)) * \
            math.sin(dlon / 2) ** 2
        return 2 * math.asin(math.sqrt(a)) * 6371.0


def angle(x):
    a = Angle(x * 2.0)
    return a.sine + a * a + a.radians()


def named(x):
    n = Named(x, "n")
    n.label = "abc"
    assert n.name == "n" and n.label == "ABC" and type(n) is Named
    return n.scaled(3.0) + float(n) ** 2


def with_init(x):
    return WithInit(x * 1e3).to_km() * x + WithInit(x, unit="km").to_km()


def points(p):
    return Point(p[0], p[1]).distance(Point(p[2], p[3]))


@pytest.mark.parametrize("f", [angle, named, with_init], ids=lambda f: f.__name__)
def test_scalar(f):
    np.testing.assert_allclose(derivative(f, 0.7), fd.gradient(f, 0.7)[0], rtol=1e-7)


def test_objects_holding_them():
    x = np.array([52.2, 0.12, 48.85, 2.35])
    np.testing.assert_allclose(jacfwd(points, x), fd.gradient(points, x)[0], rtol=1e-7)
    _, dy = jvp(points, (x,), (np.array([0.3, -0.2, 0.1, 0.5]),))
    np.testing.assert_allclose(dy, fd.gradient(points, x)[0] @ np.array([0.3, -0.2, 0.1, 0.5]), rtol=1e-7)


def test_primal_is_the_plain_value():
    y, _ = jvp(named, (0.7,), (1.0,))
    assert y == named(0.7)


class Wrapping(float):
    """Arithmetic of its own: a dual would compute float's."""

    def __add__(self, other):
        return Wrapping((float(self) + float(other)) % 360.0)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_own_arithmetic_refused():
    with pytest.raises(OverdubError, match="arithmetic of its own"):
        derivative(lambda x: Wrapping(x) + 350.0, 20.0)
