"""Exact types stay exact in every mode: Fraction and Decimal in, Fraction and Decimal out, for gradient,
derivative, jacfwd, hessian and hvp (closed forms, compared exactly); what a mode cannot do in the type's
arithmetic (a Decimal method without a rule) is refused by name."""

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from contexts import derivative, gradient, hessian, jacfwd, jacobian
from contexts.rules.registry import NoRuleError
from overdub.errors import OverdubError


def f(x):
    return x ** 3 / (x + 1) - 2 * x


def f1(x):  # (2x^3 + 3x^2) / (x + 1)^2 - 2
    return (2 * x ** 3 + 3 * x ** 2) / (x + 1) ** 2 - 2


def f2(x):  # 2x (x^2 + 3x + 3) / (x + 1)^3
    return 2 * x * (x ** 2 + 3 * x + 3) / (x + 1) ** 3


@pytest.mark.parametrize("x", [Fraction(1, 3), Fraction(-7, 2), Decimal("0.5"), Decimal("2.25")],
                         ids=["F(1,3)", "F(-7,2)", "D(0.5)", "D(2.25)"])
def test_every_mode_in_the_argument_arithmetic(x):
    kind = type(x)
    results = {"gradient": gradient(f, x)[0], "derivative": derivative(f, x), "jacfwd": jacfwd(f, x),
               "hessian": hessian(f, x), "hessian_forward": hessian(f, x, inner="forward")}
    for mode, got in results.items():
        assert type(got) is kind, (mode, got)
    for mode in ("gradient", "derivative", "jacfwd"):
        assert results[mode] == f1(x) if kind is Fraction else abs(results[mode] - f1(x)) < Decimal("1e-24")
    for mode in ("hessian", "hessian_forward"):
        assert results[mode] == f2(x) if kind is Fraction else abs(results[mode] - f2(x)) < Decimal("1e-24")


def test_two_fractions():
    x, y = Fraction(1, 3), Fraction(1, 2)
    assert gradient(lambda a, b: a * b / (a + b), x, y) == (y * y / (x + y) ** 2, x * x / (x + y) ** 2)


def test_a_decimal_method_without_a_rule_is_refused_by_name():
    with pytest.raises(NoRuleError, match="Decimal.cbrt|Decimal.fma"):
        gradient(lambda x: x.fma(x, 1) * x, Decimal(2))
    with pytest.raises(OverdubError, match="fma"):
        derivative(lambda x: x.fma(x, 1) * x, Decimal(2))


def g(v):  # a vector function of object arrays of Fractions
    return np.array([v[0] * v[0] * v[1], v[1] ** 3 / (v[0] + 1)], dtype=object)


def g_jacobian(v):
    a, b = v
    return [[2 * a * b, a * a], [-b ** 3 / (a + 1) ** 2, 3 * b * b / (a + 1)]]


@pytest.mark.parametrize("mode", ["jacfwd", "jacobian"])
def test_an_object_array_of_fractions_has_an_exact_jacobian(mode):
    # (seeded with float64 ones, every entry came back a float)
    v = np.array([Fraction(1, 3), Fraction(-5, 2)], dtype=object)
    got = jacfwd(g, v) if mode == "jacfwd" else jacobian(g, v)
    assert got.shape == (2, 2)
    assert all(type(e) is Fraction for e in got.ravel()), got
    assert got.tolist() == g_jacobian(v)


def test_an_object_array_of_fractions_has_an_exact_hessian():
    v = np.array([[Fraction(1, 3), Fraction(2)], [Fraction(-1, 4), Fraction(5, 2)]], dtype=object)
    h = hessian(lambda m: (m ** 3).sum() + m[0, 0] * m[1, 1], v)
    assert h.shape == (2, 2, 2, 2)
    assert all(type(e) is Fraction for e in h.ravel())
    expected = np.zeros((4, 4), dtype=object)
    for i, e in enumerate(v.ravel()):
        expected[i, i] = 6 * e
    expected[0, 3] = expected[3, 0] = 1
    assert h.reshape(4, 4).tolist() == expected.tolist()
    d = np.array([Decimal("0.5"), Decimal("1.25")], dtype=object)
    hd = hessian(lambda u: (u ** 3).sum(), d)
    assert all(type(e) is Decimal for e in hd.ravel()) and hd.tolist() == [[3, 0], [0, Decimal("7.5")]]


def test_a_constant_derivative_of_a_fraction_is_a_fraction():
    # (seeded with the int 1: `hessian(lambda x: x * x, Fraction(7, 5))` was the int 2)
    x = Fraction(7, 5)
    for got in (hessian(lambda v: v * v, x), hessian(lambda v: v * v, x, inner="forward"),
                gradient(lambda v: v, x)[0], derivative(lambda v: 3 * v, x)):
        assert type(got) is Fraction
    assert hessian(lambda v: v * v, x) == 2 and derivative(lambda v: 3 * v, x) == 3


def test_reverse_jacobian_keeps_the_kind():
    # (a Decimal output seeded with the int 1: np.mean's 1 / n made a float a Decimal cannot multiply; an
    # mpc or a sympy expression was made a float: crashed)
    d = np.array([Decimal("1.37"), Decimal("0.6"), Decimal("2.1")], dtype=object)
    j = jacobian(lambda v: np.mean(v * v), d)
    assert all(type(e) is Decimal for e in j)
    assert all(abs(a - 2 * e / 3) < Decimal("1e-25") for a, e in zip(j, d))
    mpmath = pytest.importorskip("mpmath")
    z = mpmath.mpc(1.3, 0.7)
    assert jacobian(lambda w: w * w, z) == 2 * z
    sp = pytest.importorskip("sympy")
    s = sp.Symbol("s")
    js = jacobian(lambda w: [w * w, w ** 3], s)
    assert [sp.simplify(a - b) for a, b in zip(js, [2 * s, 3 * s ** 2])] == [0, 0]


def test_a_kink_in_forward_over_forward_of_a_decimal():
    # (generic.sign of a dual over a Decimal asked the Decimal kind for a `sign` it does not register)
    x = Decimal("1.37")
    for inner in ("auto", "forward"):
        assert hessian(lambda v: abs(v - 3) * v, x, inner=inner) == -2  # (2 sign(v - 3) for v < 3)


@pytest.mark.parametrize("build", [np.array, lambda v: np.asarray(v, dtype=object), np.copy],
                         ids=["array", "asarray object", "copy"])
def test_an_object_array_copied_keeps_its_derivative(build):
    v = np.array([Fraction(1, 3), Fraction(2)], dtype=object)
    j = jacfwd(lambda x: build(x) * x, v)
    assert j.tolist() == [[Fraction(2, 3), 0], [0, Fraction(4)]]
