"""Dual numbers: operators, exact and uncertain types, tags, conversions — checked against closed forms
and finite differences."""

import math
from fractions import Fraction

import numpy as np
import pytest

from contexts import SpecialPoint
from uncertainties import ufloat

from contexts.forward import Dual, DualConversionError, Tag, derivative, jacfwd
from overdub.errors import OverdubError

from tests import fd

SCALAR_CASES = [
    ("poly", lambda x: 3 * x ** 3 - 2 * x + 1),
    ("div", lambda x: (x + 1) / (x * x + 2)),
    ("rdiv", lambda x: 2.0 / x - x / 3),
    ("pow_real", lambda x: x ** 2.5 + 2.0 ** x),
    ("pow_dual", lambda x: x ** x),
    ("neg_abs", lambda x: -abs(x - 1.0) + (+x)),
    ("mod", lambda x: (x * 3.0) % 1.0),
    ("sub", lambda x: 1 - x - (x - 2)),
    ("mixed", lambda x: (1 + x) * (x - 3) / (2 - x) ** 2),
]


@pytest.mark.parametrize("name,f", SCALAR_CASES, ids=[c[0] for c in SCALAR_CASES])
@pytest.mark.parametrize("x", [0.7, 1.3])
def test_scalar_operators_match_finite_differences(name, f, x):
    assert derivative(f, x) == pytest.approx(fd.derivative(f, x), rel=1e-6, abs=1e-8)


def test_perturbation_confusion():
    # naive duals give 2.0 here
    assert derivative(lambda x: x * derivative(lambda y: x + y, 1.0), 1.0) == 1.0


def test_forward_over_forward_second_derivatives():
    assert derivative(lambda x: derivative(lambda z: z ** 3, x), 2.0) == pytest.approx(12.0)
    # d/dx d/dy (x y^3) = 3 y^2 at y = 2
    assert derivative(lambda x: derivative(lambda y: x * y ** 3, 2.0), 1.0) == pytest.approx(12.0)
    third = derivative(lambda a: derivative(lambda b: derivative(lambda c: c ** 4, b), a), 1.5)
    assert third == pytest.approx(24 * 1.5)


def test_fraction_stays_exact():
    assert derivative(lambda x: x ** 2 + 3 * x + 1, Fraction(1, 3)) == Fraction(11, 3)
    d = derivative(lambda x: (x + 1) / (x * x), Fraction(1, 2))
    assert d == Fraction(-20, 1) and isinstance(d, Fraction)  # -(x + 2) / x^3 at 1/2


def test_ufloat_keeps_uncertainty():
    d = derivative(lambda x: x ** 2 + 3 * x + 1, ufloat(1 / 3, 0.01))
    assert d.nominal_value == pytest.approx(11 / 3)
    assert d.std_dev == pytest.approx(0.02)


def test_comparisons_bool_hash_use_the_primal():
    t = Tag()
    a, b = Dual(1.0, 5.0, t), Dual(2.0, -1.0, t)
    assert a < b and b > 1.5 and a <= 1.2 and a != 1.5 and a != b
    with pytest.raises(SpecialPoint):  # (a rate 0 computed from the inputs may leave the value at second order,
        assert Dual(1.0, 0.0, t) == 1.0  # `|v|**2` at 0: a special case the entry points judge from the sides)
    with pytest.raises(SpecialPoint):  # (a rate 0 at an ordering's tie, too: judged from the sides, session 58)
        assert Dual(1.0, 0.0, t) <= 1.0
    assert a <= Dual(1.0, 5.0, t)  # (two moving together)
    with pytest.raises(SpecialPoint):  # (two duals tied that part: a kink, as `max(a, b)` written with a test)
        assert a <= Dual(1.0, 2.0, t)
    with pytest.raises(SpecialPoint):  # (equal to a plain number where it moves: `lowered.runtime`)
        assert a == 1.0
    with pytest.raises(SpecialPoint):  # (a tie of an ordering there: a branch boundary)
        assert a <= 1.0
    with pytest.raises(SpecialPoint):  # (a rate 0 at 0: judged by the entry points from the two sides)
        bool(Dual(0.0, 0.0, t))
    assert bool(Dual(0.5, 1.0, t)) is True
    with pytest.raises(SpecialPoint):  # (truth is `!= 0`: zero, where it moves, is a special point)
        bool(Dual(0.0, 1.0, t))
    assert hash(a) == hash(1.0)
    assert int(Dual(2.7, 1.0, t)) == 2 and math.floor(Dual(2.7, 1.0, t)) == 2


def test_float_refuses_with_a_fix():
    with pytest.raises(DualConversionError) as e:
        float(Dual(1.0, 1.0, Tag()))
    assert "possible fix" in str(e.value)
    assert isinstance(e.value, TypeError) and isinstance(e.value, OverdubError)


def test_plain_float_arrays_refuse_duals():
    out = np.zeros(2)
    with pytest.raises((DualConversionError, ValueError)) as e:  # numpy chains ours under a ValueError
        out[0] = Dual(1.0, 1.0, Tag())
    assert isinstance(e.value, DualConversionError) or isinstance(e.value.__cause__, DualConversionError)


def test_array_dual_is_vectorised_not_object_array():
    t = Tag()
    x = Dual(np.arange(3.0), np.ones(3), t)
    y = np.sin(x) * x
    assert type(y) is Dual and y.primal.dtype == float and y.tangent.dtype == float
    np.testing.assert_allclose(y.tangent, np.cos(x.primal) * x.primal + np.sin(x.primal))


def test_chunked_dual_broadcasting_matches_columns():
    f = lambda x: np.exp(x[0]) * np.arange(1.0, 4.0) + x[1] * x / (1 + x[2] ** 2)
    x = np.array([0.2, -0.4, 0.9])
    for chunk in (1, 2, 3):
        np.testing.assert_allclose(jacfwd(f, x, chunk=chunk), fd.jacobian(f, x), rtol=1e-6, atol=1e-8)


def test_setitem_into_zeros_like():
    def f(x):
        out = np.zeros_like(x)
        for i in range(len(x)):
            out[i] = x[i] ** 2 * x[0]
        return out
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(jacfwd(f, x, chunk=2), fd.jacobian(f, x), rtol=1e-6, atol=1e-8)


def test_pushforward_outside_a_context():
    from contexts.forward import pushforward
    t = Tag()
    y = pushforward(math.exp, Dual(0.5, 2.0, t))
    assert y.primal == pytest.approx(math.exp(0.5)) and y.tangent == pytest.approx(2 * math.exp(0.5))
    inner = Tag()
    nested = pushforward(math.sin, Dual(Dual(0.3, 1.0, t), 1.0, inner))  # d2/dx2 sin via the rule's own code
    assert nested.tangent.tangent == pytest.approx(-math.sin(0.3))
    assert pushforward(len, [1, 2]) == 2


class _Unwrapping:
    """Unwraps its operands by `.value`, as astropy's Quantity does in `__array_ufunc__`."""

    def __init__(self, value):
        self.value = value

    def __mul__(self, other):
        return _Unwrapping(self.value * getattr(other, "value", other))

    __rmul__ = __mul__


def test_a_library_unwrapping_value_keeps_the_tangent():
    # a dual's primal is not its `.value`: such code met the primal and returned a derivative of 0
    from contexts.forward import derivative
    f = lambda x: (_Unwrapping(3.0) * x).value * x  # noqa: E731
    assert derivative(f, 0.5) == pytest.approx(6.0 * 0.5, rel=1e-12)
    assert derivative(f, 0.5) == pytest.approx((f(0.5 + 1e-6) - f(0.5 - 1e-6)) / 2e-6, rel=1e-7)


# -- a ** b where the base is exactly 0 and the exponent carries a tangent --------------------------------

_BELL_X = np.linspace(0.0, 10.0, 11)


def _bell(p):
    """scikit-fuzzy's gbellmf: the base |x - c| / a is 0 at x == c, where the value is 1 for every b."""
    return 1.0 / (1.0 + np.abs((_BELL_X - p[2]) / p[0]) ** (2 * p[1]))


POW_ZERO_BASE_CASES = [
    ("array base (gbellmf)", _bell, np.array([2.0, 3.0, 5.0])),
    ("scalar dual base", lambda p: (p[1] - 1.0) ** p[0] + p[1], np.array([3.0, 1.0])),
    ("np.power", lambda p: np.power(np.abs(np.array([0.0, 1.0, 3.0]) - p[1]), 2 * p[0]), np.array([3.0, 1.0])),
]


@pytest.mark.parametrize("name,f,x", POW_ZERO_BASE_CASES, ids=[c[0] for c in POW_ZERO_BASE_CASES])
def test_pow_of_zero_base_with_active_exponent_matches_finite_differences(name, f, x):
    # d(0**b)/db is 0 (0**b is 0 for every b > 0): the Dual's b-tangent y * log(0) gave 0 * -inf = nan
    np.testing.assert_allclose(jacfwd(f, x), fd.jacobian(f, x), rtol=1e-6, atol=1e-8)


def test_pow_of_zero_base_second_derivative_in_the_exponent():
    # forward over forward: d2/db2 of |x - c| ** (2b) at x == c is 0 too
    f = lambda b: np.sum(np.abs(_BELL_X - 5.0) ** (2 * b))
    got = derivative(lambda b: derivative(f, b), 1.5)
    assert np.isfinite(got)
    assert got == pytest.approx(fd.derivative(lambda b: fd.derivative(f, b, h=1e-4), 1.5, h=1e-4), rel=1e-4)


def _rows_from_column_products(x):
    # statsmodels' cffilter: `y[i] = Bj[0] * x[i] + ...` stores a (1, 1) value into a row of shape (1,)
    col = x[:, None]
    y = np.zeros((x.size, 1))
    for i in range(x.size):
        y[i] = col[i] * col[(i + 1) % x.size] + np.sin(col[i])[None, :]
    return y.squeeze()


def test_store_of_a_value_with_extra_unit_axes_matches_finite_differences():
    # numpy drops a stored value's leading unit axes; chunked tangents (directions first) did not: crash
    x = np.array([0.3, -0.7, 1.1, 0.5])
    np.testing.assert_allclose(jacfwd(_rows_from_column_products, x), fd.jacobian(_rows_from_column_products, x),
                               rtol=1e-6, atol=1e-8)
