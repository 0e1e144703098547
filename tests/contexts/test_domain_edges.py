"""A point on the edge of a function's domain: a validation raising on one side of an ordering tied there
(wellpathpy's `if not ((0 <= inc) & (inc < 180)).all(): raise ValueError`; real well surveys start at
inc = 0, sweep W). The function has no derivative there but the one from its domain's side, which both modes
answer now (`forward.api.domain_edge`): f must raise on the other side (an exception leaving f), and the point's
own derivative must be the one-sided differences' from the side it answers on. A caller's handler that takes
another formula on that side is a kink, and is refused as before; so is an infinite slope."""

import math

import numpy as np
import pytest

from contexts import derivative, gradient, jacobian, jvp
from contexts.lowered.runtime import SpecialPoint
from overdub.errors import OverdubError


def validated(inc):
    if not ((0 <= inc) & (inc < 180)).all():
        raise ValueError("all inc values must be in range 0 <= inc < 180")
    return np.sum(np.sin(np.radians(inc)) * inc + inc ** 2)


def closed_form(inc):
    r = np.radians(inc)
    return np.cos(r) * np.pi / 180 * inc + np.sin(r) + 2 * inc


X = np.array([0.0, 10.0, 35.0])


def test_reverse_gradient_at_the_edge():
    (g,) = gradient(validated, X)
    np.testing.assert_allclose(g, closed_form(X), rtol=1e-12)


def test_forward_and_jacobians_at_the_edge():
    d = np.array([0.5, -1.0, 2.0])
    _, rate = jvp(validated, (X,), (d,))
    np.testing.assert_allclose(rate, closed_form(X) @ d, rtol=1e-12)
    np.testing.assert_allclose(jacobian(validated, X), closed_form(X), rtol=1e-12)
    np.testing.assert_allclose(jacobian(validated, X, mode="reverse"), closed_form(X), rtol=1e-12)


def scalar_validated(x):
    if x < 0.0:
        raise ValueError("x must be nonnegative")
    return x * x + 3.0 * x


def test_a_scalar_at_its_bound():
    assert derivative(scalar_validated, 0.0) == pytest.approx(3.0, rel=1e-12)
    assert gradient(scalar_validated, 0.0)[0] == pytest.approx(3.0, rel=1e-12)


def caught(x):
    """The validation's exception caught by a caller taking another formula: a kink at 0 (slopes -1 and 3)."""
    try:
        return scalar_validated(x)
    except ValueError:
        return -x


@pytest.mark.parametrize("run", [lambda: derivative(caught, 0.0), lambda: jacobian(caught, 0.0, mode="reverse"),
                                 lambda: gradient(caught, 0.0)[0]])
def test_a_handler_taking_another_formula_is_a_kink_not_an_edge(run):
    """Not the domain's side (3): a kink, answered as kinks are (the two slopes' mean, the central difference)
    or refused."""
    try:
        got = run()
    except OverdubError:
        return
    assert float(np.ravel(got)[0]) == pytest.approx((caught(1e-7) - caught(-1e-7)) / 2e-7, abs=1e-6)


def sqrt_validated(x):
    if x < 0.0:
        raise ValueError("x must be nonnegative")
    return math.sqrt(x) + x


@pytest.mark.one_mode
def test_an_infinite_slope_at_the_edge_is_refused():
    with pytest.raises(OverdubError):
        derivative(sqrt_validated, 0.0)


def raising_both_sides(x):
    if x != 0.0:
        raise ValueError("only 0")
    return 2.0 * x


@pytest.mark.one_mode
def test_a_function_raising_on_both_sides_is_refused():
    with pytest.raises(OverdubError):
        derivative(raising_both_sides, 0.0)


def upper_bound(p):
    if not np.all(p <= 1.0):
        raise ValueError("probabilities above 1")
    return float(np.sum(np.log1p(p)))


def test_an_upper_bound():
    p = np.array([1.0, 0.25])
    np.testing.assert_allclose(gradient(upper_bound, p)[0], 1.0 / (1.0 + p), rtol=1e-12)


def edge_beside_a_kink(v):
    """v[0] at its domain's edge, v[1] at a kink (both sides defined): no derivative in v[1]."""
    if v[0] < 0.0:
        raise ValueError("v[0] must be nonnegative")
    return v[0] * 2.0 + (v[1] if v[1] > 0.0 else -3.0 * v[1])


@pytest.mark.one_mode
def test_an_edge_beside_a_kink_is_not_taken_for_an_edge():
    for run in (lambda: derivative(edge_beside_a_kink, np.array([0.0, 0.0])),
                lambda: jacobian(edge_beside_a_kink, np.array([0.0, 0.0]), mode="reverse")):
        try:
            got = np.ravel(run())
        except OverdubError:
            continue
        assert got[1] == pytest.approx(-1.0, abs=1e-6)  # (the kink's two slopes' mean, never one side's)


def corner(v):
    """Both entries at their domain's edge (a quadrant), and `v0 v1 / (v0 + v1)` there: its axes' one-sided
    slopes are 0, but along the diagonal it is v / 2: no derivative (a cone's apex)."""
    if v[0] < 0.0 or v[1] < 0.0:
        raise ValueError("a quadrant")
    total = v[0] + v[1]
    return 0.0 if total == 0.0 else v[0] * v[1] / total


@pytest.mark.one_mode
def test_a_cone_at_a_corner_is_refused():
    for run in (lambda: derivative(corner, np.array([0.0, 0.0])),
                lambda: jacobian(corner, np.array([0.0, 0.0]), mode="reverse")):
        with pytest.raises(OverdubError):
            run()


def test_the_all_vertical_well_of_wellpathpy():
    mincurve = pytest.importorskip("wellpathpy.mincurve")
    md = np.array([0.0, 100.0, 200.0, 300.0])
    azi = np.array([0.0, 40.0, 45.0, 52.0])
    f = lambda i: np.concatenate(mincurve.minimum_curvature(md, i, azi)[:3])  # noqa: E731
    x = np.zeros(4)
    h, y0 = 1e-6, f(x)
    cols = []
    for j in range(4):  # (one-sided differences from the domain's side, Richardson's)
        e = np.eye(4)[j]
        cols.append(2 * (f(x + h * e) - y0) / h - (f(x + 2 * h * e) - y0) / (2 * h))
    want = np.stack(cols, axis=1)
    np.testing.assert_allclose(jacobian(f, x, mode="reverse"), want, atol=1e-6)
    np.testing.assert_allclose(jacobian(f, x), want, atol=1e-6)
