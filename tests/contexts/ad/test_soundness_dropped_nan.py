"""Reverse mode through a NaN the result drops (np.where's untaken branch, a comparison): nothing flows back
through it, where the pullback made 0 * nan (pvlib's tracker backtracking, `np.where(t < 1, np.arccos(t), 0)`
with t > 1, was NaN where the derivative is finite). A zero cotangent meeting an infinite slope at a number
(`np.cbrt(x) ** 3` at 0, `np.sqrt` at 0) stays NaN: that zero may be a coincidence, and a 0 there would be
silently wrong. Each gradient is checked against central differences (and forward mode, which was right)."""

import numpy as np
import pytest

from contexts import gradient, jacfwd, jacobian

from tests import fd


def masked_arccos(v):
    t = np.abs(v * 3.0)
    return np.where(t < 1, np.arccos(t), 0.0) + v


def masked_arccos_product(v):
    t = np.abs(v * 3.0)
    with np.errstate(invalid="ignore"):
        c = np.degrees(-np.sign(v) * np.arccos(t))
    return v + np.where(t < 1, c, 0.0)


def masked_power(v):
    with np.errstate(invalid="ignore"):
        return np.where(v > 0, v ** 0.5, v * v)


def masked_log_ratio(v):
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.log(v) / v
    return np.where(v > 0, r, 2.0 * v)


def tracker(z):
    # pvlib.tracking.singleaxis: omega + np.where(temp < 1, degrees(-sign(omega) * arccos(temp)), 0)
    omega = np.degrees(np.arctan(np.tan(np.radians(z))))
    temp = np.abs(1 / 0.4 * np.cos(np.radians(omega)))
    with np.errstate(invalid="ignore"):
        correction = np.degrees(-np.sign(omega) * np.arccos(temp))
    return omega + np.where(temp < 1, correction, 0)


def masked_overflow(x):
    # pvlib's single-diode model: `argW = c * np.exp(u)` overflows to inf where it takes another formula
    # instead; 0 * inf in exp's and the product's pullbacks made the whole gradient NaN
    with np.errstate(over="ignore"):
        arg = (x + 1.0) * np.exp(np.array([1.0, 800.0, 2.0]) * x)
    out = np.zeros_like(arg)
    finite = ~np.isinf(arg)
    out[finite] = arg[finite]
    out[~finite] = 800.0 * x[~finite] + np.log(x[~finite] + 1.0)
    return out


CASES = [(masked_overflow, np.array([0.7, 1.1, 0.4])), (masked_arccos, np.array([0.2, 0.5, -0.1])), (masked_arccos_product, np.array([0.2, 0.5, -0.1])),
         (masked_power, np.array([0.3, -0.5, 1.2])), (masked_log_ratio, np.array([0.3, -0.5, 1.2])),
         (tracker, np.array([40.0, 80.0]))]


@pytest.mark.parametrize("f,x", CASES, ids=[f.__name__ for f, _ in CASES])
def test_a_dropped_nan_passes_nothing_back(f, x):
    want = fd.jacobian(f, x)
    np.testing.assert_allclose(jacobian(f, x), want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(jacfwd(f, x), want, rtol=1e-5, atol=1e-7)
    w = np.arange(1.0, x.size + 1.0)
    (g,) = gradient(lambda v: np.sum(f(v) * w), x)
    np.testing.assert_allclose(g, fd.gradient(lambda v: np.sum(f(v) * w), x)[0], rtol=1e-5, atol=1e-7)


def test_scalar_dropped_nan():
    (g,) = gradient(lambda s: float(np.where(abs(s * 3) < 1, np.arccos(abs(s * 3)), 0.0)) + s, 0.5)
    assert g == pytest.approx(1.0)


def test_a_coincidental_zero_at_an_infinite_slope_is_no_zero():
    # cbrt(x) ** 3 is x (slope 1), but its pullback meets 3 * cbrt(0) ** 2 = 0 times cbrt's infinite slope:
    # not a dropped NaN (cbrt(0) is a number), so no zero is made up there; NaN in both modes, the entry is the
    # mean of the gradients at the two sides of the point (`compose._nan_by_sides`): the slope, 1
    with np.errstate(all="ignore"):
        (g,) = gradient(lambda v: np.sum(np.cbrt(v) ** 3), np.array([0.0, 1.0]))
    np.testing.assert_allclose(g, [1.0, 1.0], rtol=1e-9)
