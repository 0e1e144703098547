"""Data structures as inputs, outputs and intermediates; mutation (box rules); exact and uncertain types."""

import colorsys
import math
import statistics
from collections import namedtuple
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pytest
from uncertainties import ufloat, umath

from contexts.ad import ADContext, Tangent, gradient, pullback, vjp

from tests import fd
from tests.fd import assert_grad_fd

Point = namedtuple("Point", "x y")


@dataclass
class Params:
    w: float
    b: float
    name: str = "p"


class Model:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def __call__(self, x):
        return self.w * x + self.b

    @property
    def norm2(self):
        return self.w * self.w + self.b * self.b


def test_dict_gradient_mirrors_structure():
    assert gradient(lambda p: p["w"] * 2.0, {"w": 3.0, "n": "x"}) == ({"w": 2.0, "n": None},)


def test_tuple_list_namedtuple():
    g = gradient(lambda t: t[0] * t[1] + t[1], (2.0, 3.0))
    assert g == ((3.0, 3.0),)
    g = gradient(lambda xs: sum(v * v for v in xs), [1.0, 2.0, 3.0])
    assert g == ([2.0, 4.0, 6.0],)
    g = gradient(lambda p: p.x * p.y, Point(2.0, 5.0))
    assert g == (Point(5.0, 2.0),)


def test_objects_dataclasses_and_tangent_addition():
    (g,) = gradient(lambda p: p.w * 3.0 + p.b * p.w, Params(2.0, 4.0))
    assert isinstance(g, Tangent) and g.w == 3.0 + 4.0 and g.b == 2.0 and g.name is None
    (h,) = gradient(lambda m: m(2.0) + m.norm2, Model(1.5, -0.5))
    assert h.w == pytest.approx(2.0 + 3.0) and h.b == pytest.approx(1.0 - 1.0)
    s = g + Tangent(w=1.0)
    assert s.w == 8.0 and s.b == 2.0


def test_outputs_and_intermediates_structured():
    def f(x):
        d = {"a": x, "b": [x * 2.0, (x, x * x)]}
        t = d["b"][1]
        return t[1] + d["a"] * d["b"][0]
    assert_grad_fd(f, 1.7)
    y, (g,) = vjp(lambda x: {"u": x * 2.0, "v": [x, x * x]}, (3.0,), {"u": 1.0, "v": [0.5, 2.0]})
    assert y == {"u": 6.0, "v": [3.0, 9.0]} and g == 2.0 + 0.5 + 2.0 * 2 * 3.0


def test_list_mutation():
    def f(x):
        xs = []
        xs.append(x)
        xs.append(x * x)
        xs.insert(0, 3.0 * x)
        xs.extend([x, 2.0])
        last = xs.pop()
        first = xs.pop(0)
        xs[1] = xs[1] * x
        return sum(xs) * first + last * x
    assert_grad_fd(f, 1.3)


def test_dict_and_object_mutation():
    def f(x):
        d = {"a": x}
        d["b"] = d["a"] * x
        d.update({"c": x * 3.0})
        d["a"] = 1.0
        m = Model(x, 0.0)
        m.b = m.w * 2.0
        m.w = 5.0
        return d["a"] + d["b"] * d["c"] + m(x) + d.get("c") + d.pop("b")
    assert_grad_fd(f, 0.8)


def test_mutation_keeps_user_visible_state():
    xs = [1.0, 2.0]

    def f(x):
        xs.append(x)
        return sum(xs) * x
    g = gradient(f, 3.0)
    assert g == (1.0 + 2.0 + 3.0 + 3.0,)
    assert xs == [1.0, 2.0, 3.0]  # the mutation stays done, as it would without AD


def test_fraction_exact():
    g = gradient(lambda x: x ** 2 + 3 * x + 1, Fraction(1, 3))
    assert g == (Fraction(11, 3),) and type(g[0]) is Fraction
    assert gradient(lambda x: x ** 3 - 2 * x, 2) == (10,)
    assert type(gradient(lambda x: x * x, 3)[0]) is int


def test_ufloat():
    (g,) = gradient(lambda x: x ** 2 + 3 * x + 1, ufloat(1 / 3, 0.01))
    assert g.nominal_value == pytest.approx(11 / 3) and g.std_dev == pytest.approx(0.02)
    (h,) = gradient(lambda x: umath.sin(x) * x, ufloat(0.5, 0.1))
    assert h.nominal_value == pytest.approx(math.cos(0.5) * 0.5 + math.sin(0.5))


def test_complex_zygote_convention():
    assert gradient(lambda z: abs(z) ** 2, 1 + 2j) == (2 + 4j,)
    assert_grad_fd(lambda z: (z * z).real + abs(z * (1 - 1j)), 0.3 + 0.7j)


@pytest.mark.parametrize("fn", [colorsys.rgb_to_hsv, colorsys.rgb_to_hls, colorsys.hls_to_rgb])
@pytest.mark.parametrize("component", [0, 1, 2])
def test_colorsys_unchanged(fn, component):
    assert_grad_fd(lambda r, g, b: fn(r, g, b)[component], 0.2, 0.45, 0.7)
    assert_grad_fd(lambda r, g, b: fn(r, g, b)[component], 0.6, 0.3, 0.25)


def test_statistics_and_math_dist():
    assert_grad_fd(lambda a, b, c: statistics.fmean([a, b * 2.0, c]), 1.0, 2.0, 4.0)
    assert_grad_fd(lambda a, b: math.dist((a, b, 1.0), (0.5, a * b, 2.0)), 1.2, 0.4)


def test_string_argument_gets_none():
    assert gradient(lambda x, s: x * len(s), 2.0, "abc") == (3.0, None)


def test_context_manager_form():
    with ADContext():
        assert gradient(lambda x: math.sin(x) * x, 1.0) == pytest.approx(
            (math.cos(1.0) + math.sin(1.0),))


def test_constructing_records_inside_differentiated_code():
    def f(x):
        p = Params(x * 2.0, b=x * x)
        q = Point(p.w, p.b + 1.0)
        m = Model(q.x, q.y)
        return m(3.0) + p.b
    assert_grad_fd(f, 0.7)


def _append_scaled(lst, v, k):
    lst.append(v * k)


def test_helper_that_mutates_a_list_argument():
    def f(x):
        out = []
        _append_scaled(out, x, 3.0)
        _append_scaled(out, x * x, 2.0)
        return out[0] + out[1]
    assert_grad_fd(f, 1.3)


def test_lists_reordered_by_c_functions():
    import heapq
    import random

    def f(x, y):
        h = []
        heapq.heappush(h, (3, x))
        heapq.heappush(h, (1, y * 2.0))
        heapq.heappush(h, (2, x * y))
        first = heapq.heappop(h)
        lst = [x * 3.0, y, x * x]
        lst.sort()
        r = [x, 2.0 * y, x + y]
        random.Random(4).shuffle(r)
        return first[1] * h[0][1] + h[1][1] + lst[0] * 2.0 + lst[2] + r[0] * r[1] - r[2]
    assert_grad_fd(f, 1.3, 0.7)


class _Base:
    def __init__(self, w):
        self.w = w

    def f(self, x):
        return self.w * x


class _Child(_Base):
    def __init__(self, w):
        super().__init__(w * 2.0)

    def f(self, x):
        return super().f(x) + x * x


def test_zero_argument_super():
    assert gradient(lambda x, w: _Child(w).f(x), 1.5, 0.5) == (4.0, 3.0)


def test_a_variable_named_like_an_attribute_it_reads():
    class Box:
        def __init__(self, x):
            self.x = x

    def f(x):
        o = Box(x)
        x = o.x * x          # x is reassigned in the statement that reads the attribute 'x'
        return x + o.x
    assert_grad_fd(f, 3.0)


class _Slotted:
    __slots__ = ("w", "b")

    def __init__(self, w, b):
        self.w = w
        self.b = b

    def __call__(self, x):
        return self.w * x + self.b


def test_objects_with_slots():
    import numpy as np
    from contexts import gradient
    (g,) = gradient(lambda x: np.sum(_Slotted(x * 3.0, 1.0)(x)), np.array([1.0, 2.0]))
    np.testing.assert_allclose(g, [6.0, 12.0])          # d/dx of 3x * x + 1
    (t,) = gradient(lambda m: m(2.0) ** 2, _Slotted(1.5, 0.5))
    assert t.w == pytest.approx(2 * 3.5 * 2.0) and t.b == pytest.approx(2 * 3.5)
