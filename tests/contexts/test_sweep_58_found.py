"""What session 58 found, each checked against closed forms (each failed before).

- Python's exact sums of partials (Shewchuk's msum, the `math.fsum` recipe; pygeodesy's `Fsum`) keep a
  partial only where the two-sum residual `lo` is not 0: `if lo:`. At a point where a residual is exactly
  0 with a rate of exactly 0 the test is a special case (`SpecialCase`), judged from the two sides; but
  beside the point the residuals' rates are rounding noise, and the sides' runs refused that: 135 of 300
  points of a polynomial summed by msum were refused in both modes (pygeodesy's `fpolynomial` on 3.13).
  Where the sides cannot be differentiated, the special case's own derivative now stands if it is the
  central difference of f's plain values (which refuse nothing) along the differentiated direction and a
  random second one, with f smooth there (the difference at 2H agrees) and its value the sides' mean;
  else the refusal stays (a special case whose own formula misses a term).
- `math.fma(x, y, -(x * y))` (TwoProduct, 3.13) is the product's rounding error: a constant, not a value
  whose chain-rule rate cancels to 0.0.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from contexts import SpecialPoint, derivative, gradient, jacfwd, jvp


def _msum(xs):
    partials = []
    for x in xs:
        i = 0
        for y in partials:
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo:
                partials[i] = lo
                i += 1
            x = hi
        partials[i:] = [x]
    return sum(partials, 0.0)


def _polynomial(x):
    return _msum([x, 3.0 * x * x, -0.5 * x ** 3, 1.0, 0.1 * x])


def _slope(x):
    return 1.1 + 6.0 * x - 1.5 * x * x


POINTS = np.linspace(0.1, 3.0, 40)


@pytest.mark.parametrize("mode", [derivative, gradient], ids=["forward", "reverse"])
def test_exact_sum_of_partials_at_zero_residuals(mode):
    wrong = [(x, d) for x in map(float, POINTS)
             if abs(d := np.ravel(mode(_polynomial, x))[0] - _slope(x)) > 1e-9 * abs(_slope(x))]
    assert not wrong


def test_exact_sum_of_partials_jacobian():
    def f(v):
        return np.array([_msum([v[0], 3.0 * v[0] * v[1], -0.5 * v[1] ** 3, 1.0]), v[0] * v[1]])

    v = np.array([0.11939799331103679, 0.7])
    expected = np.array([[1.0 + 3.0 * v[1], 3.0 * v[0] - 1.5 * v[1] ** 2], [v[1], v[0]]])
    np.testing.assert_allclose(jacfwd(f, v), expected, rtol=1e-12)


@pytest.mark.parametrize("mode", [derivative, gradient], ids=["forward", "reverse"])
def test_special_case_missing_a_term_stays_refused_where_the_sides_refuse(mode):
    x0 = 0.11939799331103679  # (a point whose sides' residuals are rounding noise: the sides refuse)

    def g(x):
        n = (x - x0) * (x - x0)
        if n == 0:  # (the special case misses the 3 (x - x0) the formula has: its derivative 3 less)
            return _polynomial(x)
        return _polynomial(x) + 3.0 * (x - x0)

    with pytest.raises(SpecialPoint, match="not its plain values' central difference"):
        mode(g, x0)


@pytest.mark.skipif(not hasattr(math, "fma"), reason="math.fma: Python 3.13")
def test_product_error_is_a_constant():
    calls = []

    def f(x):
        calls.append(x)
        p = x * 2.0
        e = math.fma(x, 2.0, -p)  # (0 for every x: a product by 2 is exact)
        return p + e if e else p * x

    _, t = jvp(f, (0.7,), (1.0,))
    assert t == pytest.approx(2.8, rel=1e-15)
    assert len(calls) == 1  # (no special case to judge from the sides: 8 runs before)
    assert gradient(lambda x: math.fma(x, 3.0, 1.0) * x, 0.7)[0] == pytest.approx(3.0 * 1.4 + 1.0, rel=1e-15)
