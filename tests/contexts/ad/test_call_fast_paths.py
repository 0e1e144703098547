"""Reverse mode's per-call fast paths give what the general paths give (perf/README.md, "How the overhead
is kept down"): a function's twin kept for the next call sees its defaults as they are at each call; an
instance's own attribute read takes its field's cotangent while properties and class attributes keep
theirs; numpy float64 scalars take the adjoint's inline + - * / with float64 cotangents. Every gradient is
compared with central differences (tests/fd.py)."""

from __future__ import annotations

import math
import types

import numpy as np
import pytest

from contexts import gradient
from tests import fd


def scaled(x, k=2.0):
    return x * k


def call_scaled(x):
    return scaled(x) + scaled(x, 3.0)


def keyword_scaled(x, *, k=2.0):
    return x * k


def call_keyword_scaled(x):
    return keyword_scaled(x) * x


def test_defaults_replaced_between_calls_are_seen():
    """The forward twin of a module's function is kept between calls: a replaced `__defaults__` or a
    changed `__kwdefaults__` must be the one the next call runs with."""
    x = 1.7
    assert gradient(call_scaled, x)[0] == pytest.approx(fd.gradient(call_scaled, x)[0], rel=1e-9)
    assert gradient(call_keyword_scaled, x)[0] == pytest.approx(fd.gradient(call_keyword_scaled, x)[0], rel=1e-9)
    old, old_kw = scaled.__defaults__, dict(keyword_scaled.__kwdefaults__)
    try:
        scaled.__defaults__ = (5.0,)
        keyword_scaled.__kwdefaults__["k"] = -4.0
        g = gradient(call_scaled, x)[0]
        assert g == pytest.approx(fd.gradient(call_scaled, x)[0], rel=1e-9)
        assert g == pytest.approx(8.0)  # 5 + 3
        g = gradient(call_keyword_scaled, x)[0]
        assert g == pytest.approx(fd.gradient(call_keyword_scaled, x)[0], rel=1e-9)
        assert g == pytest.approx(-8.0 * x)
    finally:
        scaled.__defaults__ = old
        keyword_scaled.__kwdefaults__.clear()
        keyword_scaled.__kwdefaults__.update(old_kw)


def test_default_holding_a_differentiated_value():
    """A default that holds the differentiated value (`lambda t, s=x: ...`) is differentiated through."""
    def f(x):
        g = lambda t, s=x * x: t * s  # noqa: E731
        return g(x) + g(2.0)
    x = 0.8
    assert gradient(f, x)[0] == pytest.approx(fd.gradient(f, x)[0], rel=1e-8)


class Box:
    scale = 3.0  # a class attribute: a constant

    def __init__(self, k):
        self.k = k

    @property
    def twice(self):
        return 2.0 * self.k

    def value(self, a):
        return a * self.k + a * self.scale + self.twice * a


def through_fields(x):
    b = Box(x)
    return b.value(x) + b.k * b.k


def through_stored_method(x):
    b = Box(x)
    b.m = b.value  # a bound method of b stored on b itself: its cotangent is b's
    return b.m(x)


def test_instance_fields_properties_and_class_attributes():
    for f in (through_fields, through_stored_method):
        x = 1.3
        assert gradient(f, x)[0] == pytest.approx(fd.gradient(f, x)[0], rel=1e-8)


def test_float64_scalars_inline():
    """`p[0]` of a float array is a numpy float64: + - * / on them give float64 cotangents, as the
    general case does, with the values of central differences."""
    def f(p):
        a, b = p[0], p[1]
        return (a * b - a / b + (a + 2.0) * (3 - b)) / (a - b * 0.5)
    p = np.array([1.2, 0.7])
    g = gradient(f, p)[0]
    np.testing.assert_allclose(g, fd.gradient(f, p)[0], rtol=1e-8)

    def scalars(a, b):
        return a * b - a / b + (a + 2.0) * (3 - b)
    a, b = np.float64(1.2), np.float64(0.7)
    ga, gb = gradient(scalars, a, b)
    assert type(ga) is np.float64 and type(gb) is np.float64
    want = fd.gradient(scalars, a, b)
    assert ga == pytest.approx(want[0], rel=1e-8) and gb == pytest.approx(want[1], rel=1e-8)


def _make_closure(k):
    held = np.full(3, k)  # (a float array in a cell: a leaf value, kept with the twin while the closure lives)

    def scaled_sin(x):
        return math.sin(x) * held[0]
    return scaled_sin, held


def test_a_closures_kept_twin_follows_the_closure():
    """The forward twin of a closure whose cells hold leaf values is kept for the next call by a weak
    reference to the closure (perf session 49: made anew per call, it was a quarter of `gradient` of
    `sin(x) + cos(x)` over its module): another closure of the same code gets its own cells, replaced
    defaults are seen, and the cells die with the closure."""
    import gc
    import weakref

    from contexts.ad import runtime
    f2, held2 = _make_closure(2.0)
    f3, held3 = _make_closure(3.0)
    x = 0.4
    for f, k in ((f2, 2.0), (f2, 2.0), (f3, 3.0), (f2, 2.0), (f3, 3.0)):
        assert gradient(f, x)[0] == pytest.approx(k * math.cos(x), rel=1e-12)
    del f
    assert any(type(info.fwd_last[0]) is weakref.ref and info.fwd_last[0]() is f3
               for info in list(runtime._twin_map.values()) if info.fwd_last is not None)  # (kept: the path tested)

    def with_default(x, k=2.0):
        return x * k
    assert gradient(with_default, x)[0] == 2.0
    with_default.__defaults__ = (7.0,)
    assert gradient(with_default, x)[0] == 7.0
    ref = weakref.ref(held3)
    del f3, held3
    gc.collect()
    assert ref() is None
    assert gradient(f2, x)[0] == pytest.approx(2.0 * math.cos(x), rel=1e-12)


class _Namespace:
    """Not a module: its `sin` is its own method, differentiated through the object."""

    def __init__(self, k):
        self.k = k

    def sin(self, x):
        return self.k * math.sin(x)

    def __getattr__(self, name):  # (never reached for `sin`)
        raise AttributeError(name)


def test_a_function_of_a_module_held_in_a_variable():
    """`xp.sin(x)` with xp a module read in place (`codegen`'s method call: a module's function without
    `__od_getattr__`), and with xp an object in the same code: its method's own derivative."""
    def make(xp):
        def f(x):
            return xp.sin(x) * xp.cos(x) if hasattr(xp, "cos") else xp.sin(x) * x
        return f
    x = 0.9
    f = make(math)
    assert gradient(f, x)[0] == pytest.approx(fd.gradient(f, x)[0], rel=1e-8)
    g = make(np)
    assert gradient(g, x)[0] == pytest.approx(fd.gradient(g, x)[0], rel=1e-8)
    h = make(_Namespace(3.0))
    assert gradient(h, x)[0] == pytest.approx(fd.gradient(h, x)[0], rel=1e-8)


@pytest.mark.parametrize("fn", [math.sin, math.cos, math.exp, math.log, math.sqrt, math.tanh, math.atan,
                                math.erf, math.log1p, math.asin])
def test_math_functions_of_floats_pull_back_by_their_partial(fn):
    """A math function of a float pulls back by its float partial (`Rule.hot_float`, `_float_back`): the
    values of central differences, also through a second call and under forward over reverse."""
    def f(x):
        return fn(x) * fn(x * 0.5)
    x = 0.3
    assert gradient(f, x)[0] == pytest.approx(fd.gradient(f, x)[0], rel=1e-8)

    def inner(t):
        return gradient(lambda x: fn(x) * t, x)[0]
    from contexts import derivative
    assert derivative(inner, 1.5) == pytest.approx(fd.gradient(lambda x: fn(x), x)[0], rel=1e-8)


def test_a_singular_point_and_a_zero_cotangent_by_the_rule():
    """Where the float partial divides by zero (sqrt's at 0) the rule's adjoint decides: inf where the value
    moves. A cotangent of 0 there is 0 * inf (`runtime._zero_through`: it was taken for no change, and
    `math.cbrt(x) ** 3` at 0 gave 0 for 1), answered by the two sides of the point where both are in the
    domain, NaN at its edge (left of 0, sqrt has no value)."""
    assert gradient(lambda x: math.sqrt(x), 0.0)[0] == math.inf
    assert math.isnan(gradient(lambda x: math.sqrt(x) * 0.0, 0.0)[0])
    assert gradient(lambda x: math.cbrt(x) ** 3, 0.0)[0] == pytest.approx(1.0, rel=1e-9)
    assert gradient(lambda x: math.sqrt(x) * 0.0, 1.0)[0] == 0.0  # (no infinite partial: nothing flows back)


def test_a_new_adjoint_drops_the_float_partial():
    """A rule's float partial goes with any new adjoint (set through the registry or as an attribute): a
    stale one beside it would be a wrong derivative."""
    from contexts.rules.registry import Rule

    def partial(y, x):
        return 2.0

    def adjoint(dy, y, x):
        return (dy * 3.0,)
    rule = Rule(fn=abs)
    rule.hot_float = partial
    rule.adjoint = adjoint
    assert rule.hot_float is None and rule.plan is None


# -- a Python callee's twin found by its short key (code, mask, number of arguments) ---------------------

def _power(x, n):
    return x ** n


def _weighted(x, w=np.array([1.0, 2.0])):
    return x * w.sum()


def _total(v):
    return sum(v) * v[0]


def _maker(k):
    def inner(x):
        return k * x * x
    return inner


def _mixed_callees(x):
    a = _power(x, 2.0) + _power(x, 3) + _power(x, x)  # a float, an int (a constant), a differentiated power
    b = _weighted(x) + _weighted(x, np.array([x, 1.0]))  # a default left, then a differentiated array passed
    c = _total([x, 2.0 * x]) + _total(np.array([x, 3.0]))  # a list, then an array, to the same callee
    d = _maker(2.0)(x) + _maker(x)(x)  # two closures of one code, their cells differing (one differentiated)
    return a + b + c + d


@pytest.mark.parametrize("x", [0.7, 1.3])
def test_one_callee_called_with_different_argument_types(x):
    """The same callees reached with floats, ints, lists, arrays, defaults and closures of one code, in one
    gradient and again (the short key's entries made by the first): each call's own twin."""
    want = fd.gradient(_mixed_callees, x)[0]
    for _ in range(3):
        assert gradient(_mixed_callees, x)[0] == pytest.approx(want, rel=1e-8)
    # parts by their closed forms
    assert gradient(lambda t: _power(t, 3), x)[0] == pytest.approx(3 * x ** 2, rel=1e-12)
    assert gradient(lambda t: _power(t, 3.0), x)[0] == pytest.approx(3 * x ** 2, rel=1e-12)
    assert gradient(lambda t: _weighted(t, np.array([t, 1.0])), x)[0] == pytest.approx(2 * x + 1.0, rel=1e-12)
    assert gradient(lambda t: _maker(t)(t), x)[0] == pytest.approx(3 * x ** 2, rel=1e-12)


def test_a_replaced_default_of_a_callee_reached_by_the_short_key():
    """A callee's `__defaults__` replaced after its twin was found by the short key: the new default is
    the one differentiated with (an array default holding the differentiated value, then a constant)."""
    def outer(x):
        return _weighted(x) * x
    x = 1.1
    assert gradient(outer, x)[0] == pytest.approx(2 * x * 3.0, rel=1e-12)
    old = _weighted.__defaults__
    try:
        _weighted.__defaults__ = (np.array([4.0, 5.0]),)
        assert gradient(outer, x)[0] == pytest.approx(2 * x * 9.0, rel=1e-12)
    finally:
        _weighted.__defaults__ = old
    assert gradient(outer, x)[0] == pytest.approx(2 * x * 3.0, rel=1e-12)


# -- forward mode: a module's function of a float by its float partial -----------------------------------

def _by_module_functions(x):
    return math.sin(x) * math.exp(x) + math.log(x) / math.atan(x) + math.sqrt(x) * math.tanh(x) + math.asin(x / 2)


@pytest.mark.parametrize("x", [0.3, 1.1])
def test_forward_math_functions_of_floats_by_their_partial(x):
    """`math.sin(x)` in forward mode's tangent twin, x a float moving at a nonzero rate, by the rule's
    float partial (`tangent_runtime.fd_mcall`): the closed form and central differences."""
    from contexts import derivative
    closed = (math.cos(x) * math.exp(x) + math.sin(x) * math.exp(x)
              + (math.atan(x) / x - math.log(x) / (1 + x * x)) / math.atan(x) ** 2
              + math.tanh(x) / (2 * math.sqrt(x)) + math.sqrt(x) * (1 - math.tanh(x) ** 2)
              + 0.5 / math.sqrt(1 - x * x / 4))
    assert derivative(_by_module_functions, x) == pytest.approx(closed, rel=1e-12)
    assert derivative(_by_module_functions, x) == pytest.approx(fd.derivative(_by_module_functions, x), rel=1e-6)


_MOD = types.ModuleType("fast_path_module")


def _soft(x):
    return math.log1p(math.exp(x))


def _through_module(x):
    return _MOD.soft(x) * 2.0


def test_forward_a_new_frule_drops_the_float_partial():
    """A function of a module registered with a float partial, then given a new frule: forward mode's
    fast path must not keep multiplying by the old partial (a stale partial: a wrong derivative)."""
    from contexts import derivative
    from contexts.rules.math import register_elementwise
    from contexts.rules.registry import registry

    def fn(x):  # (a function of its own, so that its rule is this test's alone)
        return _soft(x)
    _MOD.soft = fn
    register_elementwise(fn, (lambda y, x: 1 / (1 + math.exp(-x)),), "soft")
    try:
        x = 0.4
        assert derivative(_through_module, x) == pytest.approx(2 / (1 + math.exp(-x)), rel=1e-12)
        rule = registry.get(fn)
        assert rule.hot_float is not None  # (the path tested above)
        rule.frule = lambda tangents, x: (fn(x), None if tangents[0] is None else tangents[0] * 7.0)
        assert rule.hot_float is None
        assert derivative(_through_module, x) == pytest.approx(14.0, rel=1e-12)
    finally:
        registry.rules.pop(fn, None)


def _of_reductions(x):
    s = np.sum(np.exp(x))
    return (np.log(s) * np.sqrt(np.sum(x * x)) + np.tanh(np.max(x)) + np.arcsinh(np.sum(x))
            + np.float32(2.0) * np.sin(np.float32(np.min(x))) + 0.0 * np.log(s))


@pytest.mark.parametrize("x", [np.array([0.3, 1.2, -0.4]), np.array([-2.0, 0.5, 0.25, 3.0])])
def test_ufuncs_of_float64_scalars_by_their_hot_cotangent(x):
    """A one-argument ufunc of a numpy float64 scalar (a reduction's value) pulls back by its rule's hot
    cotangent (`runtime._f8_back`); a float32 scalar and a zero cotangent by the rule's adjoint: central
    differences and the closed form."""
    got = gradient(_of_reductions, x)[0]
    assert got == pytest.approx(fd.gradient(_of_reductions, x)[0], rel=1e-4, abs=1e-6)
    s, n, j = np.exp(x).sum(), np.sqrt((x * x).sum()), int(np.argmax(x))
    closed = np.exp(x) / s * n + np.log(s) * x / n + 1 / np.sqrt(1 + x.sum() ** 2)
    closed[j] += 1 - np.tanh(x[j]) ** 2
    k = int(np.argmin(x))
    closed[k] += 2.0 * np.cos(np.float32(x[k]))
    assert got == pytest.approx(closed, rel=1e-6)
