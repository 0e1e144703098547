"""Float subclasses made by `float.__new__(cls, v)` (pygeodesy's Lat, Degrees, Meter): reverse mode
differentiates them (the object is a float of v's value; its attributes and its class's own operators
are the engine's as for any object); forward mode too when the class leaves arithmetic to float (its
value is a dual of the object: tests/contexts/forward/test_float_subclass.py), and refuses a class with
arithmetic of its own. And two reverse-mode paths these libraries take, which lost cotangents silently: the items of
a function's `**kwargs` read through `kw.values()` / `kw.items()`, and those of `d.copy()` /
`l.copy()` read through views or iteration. Every value against central differences."""

import math
import operator

import numpy as np
import pytest

from contexts import derivative, gradient
from overdub.errors import OverdubError
from tests import fd


class Deg(float):
    """pygeodesy's pattern: clip, make with float.__new__, name the instance."""

    def __new__(cls, v, clip=90.0, name=""):
        v = min(max(v, -clip), clip)
        self = float.__new__(cls, v)
        self.name = name
        return self

    def toRadians(self):
        return math.radians(self)


class Named(Deg):
    def __new__(cls, v, name="n"):
        return super().__new__(cls, v * 2.0, name=name)


class Own(float):
    """Its own arithmetic: the operators run its code, not float's."""

    def __new__(cls, v):
        return float.__new__(cls, v)

    def __add__(self, other):
        return float(self) * 2 + other

    def __mul__(self, other):
        return float(self) * other * 3


class Plain(float):
    """No __new__ of its own (float.__new__ runs as type.__call__ makes it), its own abs and pow."""

    def __abs__(self):
        return float(self) * 3

    def __pow__(self, e):
        return float(self) * e * 5


def _check(f, p):
    np.testing.assert_allclose(gradient(f, p)[0], fd.gradient(f, p)[0], rtol=1e-7, atol=1e-9)


P = np.array([0.7, -0.4])


def test_named_float_subclass():
    def f(p):
        d = Deg(p[0] * 30, name="lat")
        pair = [Deg(p[1]), d]
        return math.sin(d.toRadians()) * sum(pair) + float(np.array([d, pair[0]]).sum()) + np.sin(d)
    _check(f, P)


def test_super_new_and_isinstance():
    def f(p):
        n = Named(p[0], name="x")
        return n * p[1] + (n.toRadians() if isinstance(n, Deg) else 0.0) + len(n.name)
    _check(f, P)


def test_clipped_value_has_zero_derivative():
    def f(p):
        return Deg(p[0] * 200.0) * 2.0 + Deg(p[1])  # clipped at 90: no derivative in p[0]
    got = gradient(f, P)[0]
    np.testing.assert_allclose(got, fd.gradient(f, P)[0], atol=1e-9)
    assert got[0] == 0.0


def test_own_operators_run_as_code():
    def f(p):
        o = Own(p[0])
        return (o + p[1]) * p[1] + o * 2.0 + operator.add(Own(p[1]), 1.0) + operator.mul(2.0, Own(p[0]))
    _check(f, P)


def test_class_without_new_of_its_own():
    def f(p):
        return abs(Plain(p[0])) + pow(Plain(p[1]), 2.0) + Plain(p[0]) ** 2.0 + Plain(p[0]) * p[1]
    _check(f, P)


def test_more_operations():
    def f(p):
        d, o = Deg(p[0]), Own(p[1])
        return (-d) * 2 + d ** 2 + abs(d) + max(d, 0.1) + (d > 0.2) + o ** 2 - (-o) + abs(o) \
            + math.hypot(d, o) + float(o) * 2 + np.float64(d) * 2 + np.asarray([d, d]).sum() + d.real
    _check(f, P)


def test_string_argument_carries_nothing():
    def f(p):
        return float.__new__(Plain, "3") * p[1] + Deg(p[0])
    _check(f, P)


def _forward_cases():
    def named(p):
        d = Deg(p[0] * 30, name="lat")
        pair = [Deg(p[1]), d]
        return math.sin(d.toRadians()) * sum(pair) + float(np.array([d, pair[0]]).sum()) + np.sin(d)

    def super_new(p):
        n = Named(p[0], name="x")
        return n * p[1] + (n.toRadians() if isinstance(n, Deg) else 0.0) + len(n.name)

    def clipped(p):
        return Deg(p[0] * 200.0) * 2.0 + Deg(p[1])
    return [named, super_new, clipped]


@pytest.mark.parametrize("i", range(3), ids=["named", "super_new", "clipped"])
def test_forward_mode(i):
    from contexts import jacfwd
    f = _forward_cases()[i]
    np.testing.assert_allclose(jacfwd(f, P), fd.gradient(f, P)[0], rtol=1e-7, atol=1e-9)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
@pytest.mark.parametrize("cls", [Own, Plain])
def test_forward_mode_refuses_own_arithmetic(cls):
    with pytest.raises(OverdubError, match="arithmetic of its own"):
        derivative(lambda t: cls(t) * 2.0, 0.3)


# -- **kwargs and copies read through views ------------------------------------------------------------------

def _by_values(**kw):
    return list(kw.values())[0]


def _by_items(**kw):
    for name, value in kw.items():
        break
    return value


def _copy_and_view(**kw):
    d = kw.copy()
    return sum(d.values()) + list(kw.values())[0] + kw.get("a") * 2


def _unpacked_copy(**kw):
    d = {**kw}
    return sum(v * v for v in d.values())


def _popped(**kw):
    v = kw.pop("a")
    return v * 3 + sum(kw.values())


@pytest.mark.parametrize("fn", [_by_values, _by_items, _copy_and_view, _unpacked_copy, _popped])
def test_kwargs_read_through_views(fn):
    def f(p):
        return fn(a=p[0], b=p[1]) * 2.0
    _check(f, P)


def test_kwargs_beside_named_parameters():
    def g(x, **kw):
        return x * sum(v * v for v in kw.values())

    def f(p):
        return g(p[0], a=p[1], b=p[0])
    _check(f, P)


def test_copies_read_through_views_and_iteration():
    def f(p):
        d = {"a": p[0]}
        e = d.copy()
        e["b"] = p[1]
        lst = [p[0], p[1]]
        m = lst.copy()
        m.append(p[0])
        return sum(v * 3 for v in e.values()) + e["a"] + sum(m) + sum(v * v for v in m) + m[0]
    _check(f, P)


def test_copy_summed_through_its_view():
    def f(p):
        kw = {"a": p[0], "b": p[1]}
        d = kw.copy()
        lst = [p[0] * p[1]]
        return sum(d.values()) + sum(lst.copy())
    _check(f, P)
