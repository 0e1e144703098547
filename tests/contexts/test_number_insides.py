"""Numbers differentiated as a whole, whose insides are Python: refused in every mode, never a constant.

A Fraction, an mpmath `mpf` or a ufloat is a differentiable value to the engine (its operators go to the
rules), but its fields are integers or plain floats (a Fraction's `numerator`, an mpf's `_mpf_`
mantissa). Code that computes with those fields — `Fraction(x.numerator, x.denominator)`, mpmath's own
`exp` — returned a constant before (`gradient` of `Fraction(t.numerator, t.denominator) * t` gave 1/3
instead of 2/3; of `mpmath.exp(t) * t` gave exp(t) instead of exp(t)(1 + t)). Now each mode refuses with
an error naming the line. Object arrays holding such numbers (uncertainties' `unumpy`) are values that
carry derivatives like float arrays, in the rules that once kept floats only.
"""

from fractions import Fraction

import numpy as np
import pytest
from uncertainties import ufloat, unumpy

from contexts import derivative, gradient, hessian, jacfwd
from overdub.errors import OverdubError
from contexts.forward.dual import DualConversionError
from tests import fd

MODES = {
    "gradient": lambda f, x: gradient(f, x)[0],
    "derivative": derivative,
    "hessian": hessian,
}


def rebuilt(t):
    return Fraction(t.numerator, t.denominator) * t  # = t * t, through the parts


def by_parts(t):
    return t.numerator / t.denominator * t


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [rebuilt, by_parts])
def test_fraction_parts_refused(mode, f):
    with pytest.raises(OverdubError) as e:
        MODES[mode](f, Fraction(1, 3))
    assert "numerator" in str(e.value) or "denominator" in str(e.value)


def test_reverse_refusal_names_the_line():
    with pytest.raises(OverdubError) as e:
        gradient(rebuilt, Fraction(1, 3))
    assert f"{__file__}:" in str(e.value) and "rebuilt" in str(e.value)


def test_fraction_arithmetic_still_exact():
    """The whole number's own arithmetic is differentiated exactly, as before."""
    assert gradient(lambda t: t * t + 3 * t, Fraction(1, 3)) == (Fraction(11, 3),)
    assert derivative(lambda t: t * t + 3 * t, Fraction(1, 3)) == Fraction(11, 3)


def test_real_part_of_a_fraction_is_differentiated():
    assert gradient(lambda t: t.real * t, Fraction(1, 3)) == (Fraction(2, 3),)


@pytest.mark.parametrize("mode", ["gradient", "derivative"])
def test_mpmath_function_refused(mode):
    """An mpmath function without a rule (contexts/rules/mpmath.py has exp, sin, gamma...) is refused."""
    mpmath = pytest.importorskip("mpmath")
    x = mpmath.mpf("0.5")
    with pytest.raises(OverdubError) as e:  # reverse: the read of the mantissa; forward: the dual's
        MODES[mode](lambda t: mpmath.agm(t, 1) * t, x)
    assert "_mpf_" in str(e.value)


# -- object arrays of differentiable numbers --------------------------------------------------------

X = np.array([0.3, 1.2])
U = unumpy.uarray(X, [0.1, 0.2])


def test_unumpy_function_of_an_object_array():
    """`unumpy.sin` is np.vectorize over ufloats: d sum(sin(x)) / dx = cos(x), as ufloats."""
    g = gradient(lambda v: unumpy.sin(v).sum(), U)[0]
    np.testing.assert_allclose(unumpy.nominal_values(g), np.cos(X), rtol=1e-12)


def test_asarray_of_an_object_array():
    g = gradient(lambda v: np.asarray(v)[0] * 2, U)[0]
    np.testing.assert_allclose(unumpy.nominal_values(g), [2.0, 0.0])


def test_float_array_through_object_dtype():
    f = lambda v: float(np.sum(v.astype(object) ** 2))  # noqa: E731
    (g,) = gradient(f, X)
    assert g.dtype == X.dtype
    np.testing.assert_allclose(g, fd.gradient(f, X)[0], rtol=1e-6)
    np.testing.assert_allclose(jacfwd(f, X), fd.gradient(f, X)[0], rtol=1e-6)


def test_hessian_refuses_object_cast_of_a_dual():
    with pytest.raises(DualConversionError):
        hessian(lambda v: float(np.sum(v.astype(object) ** 2)), X)


def test_ufloat_nominal_value_read_is_refused():
    """A ufloat's nominal value is its inside: reading it inside differentiated code is refused."""
    with pytest.raises(OverdubError):
        gradient(lambda t: t.nominal_value * t, ufloat(1.0, 0.1))
