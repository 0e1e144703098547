"""Builtins and operator edge cases: iterables and generators, ties, defaults, 0**n, sequences, in-place."""

import builtins
import doctest
import math
import operator
from fractions import Fraction

import numpy as np
import pytest
from uncertainties import ufloat

import contexts.rules
from contexts.rules import builtins as builtin_rules
from contexts.rules import check, cmath as cmath_rules, cotangents, generic
from contexts.rules import math as math_rules, operator as operator_rules, uncertainties as umath_rules
from contexts.rules.registry import registry


def adjoint(fn, dy, *args):
    rule = registry.get(fn)
    return rule.adjoint(dy, fn(*args), *args)


def pullback(fn, dy, *args, **kwargs):
    y, back = registry.get(fn).rrule(*args, **kwargs)
    return y, back(dy)


# -- min / max -------------------------------------------------------------------------------------

def test_max_of_a_generator_and_of_several_arguments():
    assert pullback(max, 1.0, (x * x for x in [1.0, -3.0, 2.0])) == (9.0, ([None, 1.0, None],))
    assert pullback(min, 2.0, 0.5, -1.5, 3.0) == (-1.5, (None, 2.0, None))


def test_max_ties_share_the_cotangent_as_central_differences_do():
    a, b = 2.0, float("2.0")
    y, (ct,) = pullback(max, 1.0, [1.0, a, b])
    assert y is a and ct == [None, 0.5, 0.5]
    y, cts = pullback(min, 1.0, Fraction(1, 2), Fraction(1, 2))
    assert cts == (0.5, 0.5)
    # with a key, tied keys of different values: the element Python returns takes it whole
    assert pullback(max, 1.0, [-2.0, 2.0], key=abs) == (-2.0, ([1.0, None],))
    from contexts import ADContext, gradient
    f = lambda x: max(x, 1.0) + min([x, 1.0, 3.0])  # noqa: E731
    h = 1e-6
    with ADContext():
        assert abs(gradient(f, 1.0)[0] - (f(1.0 + h) - f(1.0 - h)) / (2 * h)) < 1e-6


def test_max_key_and_default():
    assert pullback(max, 1.0, [1.0, -3.0, 2.0], key=abs) == (-3.0, ([None, 1.0, None],))
    # the default is what max returned: the cotangent is its (a trailing dict of keyword cotangents)
    assert pullback(max, 1.0, [], default=0.0) == (0.0, ([], {"default": 1.0}))
    assert pullback(max, 1.0, [2.0], default=0.0) == (2.0, ([1.0], {"default": None}))
    assert registry.get(max).frule(([0.1, 0.2, 0.3],), [1.0, 5.0, 2.0]) == (5.0, 0.2)


# -- sum, pow, divmod, float, complex ------------------------------------------------------------

def test_sum_generator_start_and_concatenation():
    y, (cts, dstart) = pullback(sum, 2.0, (x for x in [1.0, 2.0]), 10.0)
    assert y == 13.0 and cts == [2.0, 2.0] and dstart == 2.0
    y, (cts, dstart) = pullback(sum, ["a", "b", "c"], [[1.0], [2.0, 3.0]], [0.0])
    assert y == [0.0, 1.0, 2.0, 3.0] and cts == [["b"], ["c"]] and dstart == ["a"]
    y, (cts,) = pullback(sum, np.ones(3), [np.zeros(3), 1.0])
    assert cts[0].shape == (3,) and cts[1] == 3.0


def test_sorted_is_a_permutation():
    y, (cts,) = pullback(sorted, [10.0, 20.0, 30.0], (x for x in [2.0, -1.0, 2.0]))
    assert y == [-1.0, 2.0, 2.0] and cts == [20.0, 10.0, 30.0]  # stable: the first 2.0 stays first
    y, (cts,) = pullback(sorted, [10.0, 20.0, 30.0], [2.0, -3.0, 1.0], key=abs, reverse=True)
    assert y == [-3.0, 2.0, 1.0] and cts == [20.0, 10.0, 30.0]


def test_pow_three_arguments_is_not_differentiable():
    assert adjoint(pow, 1.0, 3, 4, 5) == (None, None, None)
    assert adjoint(pow, 1.0, 3.0, 2) == (6.0, pytest.approx(9 * math.log(3)))


def test_divmod_and_float_complex():
    assert adjoint(divmod, (None, 1.0), 7.5, 2.0) == (1.0, -3)
    assert adjoint(float, 1.0, Fraction(1, 3)) == (1.0,)
    assert adjoint(float, 1.0, "1.5") == (None,)
    assert adjoint(complex, 2 + 3j, 1.0, 2.0) == (2.0, 3.0)
    assert adjoint(complex, 2 + 3j, 1.0) == (2.0,)


def test_nondifferentiable_builtins():
    for fn, args in [(round, (2.5,)), (int, (2.5,)), (len, ([1.0],)), (bool, (1.0,))]:
        assert registry.get(fn).nondifferentiable
        assert adjoint(fn, 1.0, *args) == (None,) * len(args)


# -- operator edge cases ------------------------------------------------------------------------------

@pytest.mark.parametrize("n, want", [(0, 0), (0.5, math.inf), (1, 1), (2, 0), (2.5, 0)])
def test_pow_at_zero_follows_chainrules(n, want):
    dx, dn = adjoint(operator.pow, 1.0, 0.0, n)
    assert dx == want and dn == 0


def test_pow_fraction_is_exact_and_int_exponent_gets_a_float():
    dx, dn = adjoint(operator.pow, Fraction(1), Fraction(2, 3), 3)
    assert dx == Fraction(4, 3) and type(dx) is Fraction
    assert dn == pytest.approx(float(Fraction(8, 27)) * math.log(2 / 3))
    assert adjoint(operator.pow, 1.0, -2.0, 3) == (12.0, pytest.approx(-8 * math.log(2)))


def test_complex_power_of_a_negative_real():
    x, n = -2.0, 0.5
    _, dn = adjoint(operator.pow, 1.0, x, n)  # y = i sqrt(2), dy/dn = y (log 2 + i pi)
    assert dn == pytest.approx(((-2.0) ** 0.5 * complex(math.log(2), math.pi)).conjugate().real)


def test_abs_at_zero_and_of_complex():
    assert adjoint(abs, 1.0, 0.0) == (0,)
    assert adjoint(abs, 2.0, 3 + 4j) == (pytest.approx(2 * (3 + 4j) / 5),)
    np.testing.assert_array_equal(adjoint(operator.abs, np.ones(3), np.array([-1.0, 0.0, 2.0]))[0], [-1, 0, 1])


def test_scalar_cotangent_of_an_array_is_spread():
    np.testing.assert_array_equal(generic.unbroadcast(2.0, np.zeros((2, 2))), np.full((2, 2), 2.0))


def test_sequences():
    assert adjoint(operator.add, [1, 2, 3], [0.0, 1.0], [2.0]) == ([1, 2], [3])
    assert adjoint(operator.mul, [1.0, 2.0, 3.0, 4.0], [0.5, 1.0], 2) == ([4.0, 6.0], None)
    assert registry.get(operator.add).frule(([1.0], None), [0.0], [2.0]) == ([0.0, 2.0], [1.0, None])


def test_inplace_rules_on_arrays_use_the_value_before():
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    before = a.copy()
    y, t = registry.get(operator.imul).frule((np.ones(2), None), a, b)
    assert y is a and np.array_equal(a, before * b) and np.array_equal(t, b)
    assert registry.get(operator.imul).meta["needs_value_before"]
    da, db = registry.get(operator.imul).adjoint(np.ones(2), y, before, b)
    np.testing.assert_array_equal(da, b)
    np.testing.assert_array_equal(db, before)


def test_mod_with_ufloat_does_not_use_deprecated_floordiv():
    import warnings
    x = ufloat(5.3, 0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = x % 1.7  # the primal itself is deprecated in uncertainties 3.2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        da, db = registry.get(operator.mod).adjoint(1.0, y, x, 1.7)
    assert da == 1.0 and db == -3


def test_design_example_by_hand():
    """d/dx (x**2 + 3x + 1) = 2x + 3, chained by hand through the rules: exact and uncertain."""
    for x, want in [(Fraction(1, 3), Fraction(11, 3)), (ufloat(1 / 3, 0.01), None)]:
        d_square = adjoint(operator.pow, 1, x, 2)[0]
        d_linear = adjoint(operator.mul, 1, 3, x)[1]
        grad = generic.add(d_square, d_linear)
        if want is not None:
            assert grad == want and type(grad) is Fraction
        else:
            assert grad.nominal_value == pytest.approx(11 / 3) and grad.std_dev == pytest.approx(0.02)


# -- doctests of the rule modules ----------------------------------------------------------------

@pytest.mark.parametrize("module", [contexts.rules, generic, operator_rules, math_rules, cmath_rules,
                                    builtin_rules, umath_rules, check, cotangents])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_slot_methods_bound_and_unbound():
    assert registry.get((1.5).__mul__).adjoint(1.0, 3.0, 1.5, 2.0) == (2.0, 1.5)
    assert registry.get(float.__add__).adjoint(1.0, NotImplemented, 1.5, "x") == (None, None)
    assert registry.get(float.__rsub__).adjoint(1.0, 0.5, 1.5, 2.0) == (-1.0, 1.0)  # 2.0 - 1.5
    assert registry.get(float.__floor__).nondifferentiable
