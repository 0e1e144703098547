"""Piecewise polynomials (`scipy.interpolate._ppoly`: `evaluate`, which writes into its `out` argument,
`integrate`, `fix_continuity`, which changes its coefficients in place) under PPoly, CubicSpline,
PchipInterpolator, Akima1DInterpolator: reverse and forward mode against central differences, in the data,
the evaluation points, the breakpoints, the integration bounds (forward mode: the frules of the kernels
that write into an argument, `Rule.writes`)."""

import numpy as np
import pytest

pytest.importorskip("scipy.interpolate")
from scipy.interpolate import (Akima1DInterpolator, CubicHermiteSpline, CubicSpline, PchipInterpolator,  # noqa: E402
                               PPoly, _ppoly)

from contexts import derivative, gradient, jacfwd  # noqa: E402
from contexts.rules.registry import MissingRule, registry  # noqa: E402
from overdub.errors import OverdubError  # noqa: E402
from tests import fd  # noqa: E402

XS = np.linspace(0.0, 3.0, 7)
INSIDE = np.array([0.3, 1.1, 1.7, 2.4])  # off the breakpoints
OUTSIDE = np.array([-0.4, 0.3, 2.4, 3.3])  # two of them extrapolated
WEIGHTS = np.arange(1.0, 5.0)


def _check(f, x, rtol=1e-7, atol=1e-9, forward=True):
    """Reverse mode (gradient) and forward mode (jacfwd; derivative for a float) against central
    differences."""
    want = fd.gradient(f, x)[0]
    np.testing.assert_allclose(np.asarray(gradient(f, x)[0]), want, rtol=rtol, atol=atol)
    if forward:
        got = derivative(f, x) if isinstance(x, float) else jacfwd(f, x)
        np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("nu", [0, 1, 2, 3])
@pytest.mark.parametrize("extrapolate", [True, False])
def test_cubic_spline_in_the_data(nu, extrapolate):
    points = OUTSIDE if extrapolate else INSIDE

    def f(y):
        return np.sum(CubicSpline(XS, y)(points, nu, extrapolate) * WEIGHTS)
    _check(f, np.sin(XS))


@pytest.mark.parametrize("nu", [0, 1, 2])
@pytest.mark.parametrize("extrapolate", [True, False])
def test_cubic_spline_in_the_points(nu, extrapolate):
    spline = CubicSpline(XS, np.sin(XS))
    points = OUTSIDE if extrapolate else INSIDE

    def f(t):
        return np.sum(spline(t, nu, extrapolate) ** 2)
    _check(f, points)


def test_scalar_point_and_two_dimensional_data():
    spline = CubicSpline(XS, np.sin(XS))
    g = gradient(lambda t: spline(t), 1.3)[0]
    np.testing.assert_allclose(g, spline(1.3, 1), rtol=1e-12)

    def f(y):  # two curves on the same breakpoints: c of shape (4, 6, 2)
        return np.sum(CubicSpline(XS, y.reshape(7, 2))(INSIDE) * np.arange(8.0).reshape(4, 2))
    _check(f, np.sin(np.arange(14.0)))


def test_outside_without_extrapolation_is_nan_not_a_derivative():
    spline = CubicSpline(XS, np.sin(XS))
    g = gradient(lambda t: np.nansum(spline(t, 0, False)), OUTSIDE)[0]
    np.testing.assert_allclose(g, np.where((OUTSIDE >= 0) & (OUTSIDE <= 3), spline(OUTSIDE, 1), 0.0), rtol=1e-12)


@pytest.mark.parametrize("points", [INSIDE, OUTSIDE], ids=["inside", "extrapolated"])
def test_ppoly_in_the_coefficients_and_breakpoints(points):
    c = np.cos(np.arange(18.0)).reshape(3, 6)

    def in_c(c):
        return np.sum(PPoly(c, XS)(points, 1) * WEIGHTS)

    def in_x(x):
        return np.sum(PPoly(c, x)(points) * WEIGHTS)
    _check(in_c, c)
    _check(in_x, XS)


@pytest.mark.parametrize("make", [
    lambda y: CubicSpline(XS, y, bc_type="natural"),
    lambda y: CubicSpline(XS, y, bc_type="clamped"),
    lambda y: CubicSpline(XS, np.concatenate([y[:-1], y[:1]]), bc_type="periodic"),
    lambda y: PchipInterpolator(XS, y),
    lambda y: Akima1DInterpolator(XS, y),
    lambda y: Akima1DInterpolator(XS, y, method="makima"),
    lambda y: CubicHermiteSpline(XS, y, np.cos(y)),
], ids=["natural", "clamped", "periodic", "pchip", "akima", "makima", "hermite"])
def test_interpolators_in_the_data(make):
    def f(y):
        return np.sum(make(y)(INSIDE) * WEIGHTS)
    _check(f, np.sin(XS) + 0.1 * XS)


def test_cubic_spline_in_the_sites():
    def f(x):
        return np.sum(CubicSpline(x, np.sin(XS))(INSIDE) ** 2)
    _check(f, XS, rtol=1e-6)


def test_derivative_and_antiderivative():
    def derived(y):
        return np.sum(CubicSpline(XS, y).derivative(2)(OUTSIDE) * WEIGHTS)

    def integrated(y):
        return np.sum(CubicSpline(XS, y).antiderivative(2)(OUTSIDE) * WEIGHTS)

    def in_x(x):
        return np.sum(PPoly(np.cos(np.arange(18.0)).reshape(3, 6), x).antiderivative()(OUTSIDE) * WEIGHTS)
    _check(derived, np.sin(XS))
    _check(integrated, np.sin(XS))
    _check(in_x, XS, forward=False)
    # forward mode: PPoly's `x` property (`self._asarray(self._x)`) runs outside the interception on
    # scipy 1.17, where it meets the duals: refused, never a number
    try:
        got = jacfwd(in_x, XS)
    except OverdubError:
        return
    np.testing.assert_allclose(got, fd.gradient(in_x, XS)[0], rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("a, b, extrapolate", [(0.4, 2.2, True), (-0.5, 3.5, True), (0.2, 2.9, False),
                                               (2.2, 0.4, True)])
def test_integrate(a, b, extrapolate):
    c = np.cos(np.arange(18.0)).reshape(3, 6)

    def in_c(c):
        return PPoly(c, XS).integrate(a, b, extrapolate)

    def in_x(x):
        return PPoly(c, x).integrate(a, b, extrapolate)

    def in_bounds(ab):
        return PPoly(c, XS).integrate(ab[0], ab[1], extrapolate)
    _check(in_c, c)
    _check(in_x, XS)
    _check(in_bounds, np.array([a, b]))
    _check(lambda y: CubicSpline(XS, y).integrate(a, b, extrapolate), np.sin(XS))


def test_integrate_forward_rule():
    c = np.ascontiguousarray(np.cos(np.arange(18.0)).reshape(3, 6, 1))
    tc, tx = np.sin(np.arange(18.0)).reshape(3, 6, 1), np.linspace(0.1, 0.7, 7)

    def integral(s):
        y = np.empty(1)
        _ppoly.integrate(c + s * tc, XS + s * tx, -0.5 + 0.3 * s, 2.2 - 0.2 * s, True, y)
        return y
    _, dy = registry.get(_ppoly.integrate).frule((tc, tx, 0.3, -0.2, None), c, XS, -0.5, 2.2, True)
    np.testing.assert_allclose(dy, fd.derivative(integral, 0.0), rtol=1e-6)


@pytest.mark.parametrize("kernel", [_ppoly.evaluate, _ppoly.evaluate_bernstein], ids=["power", "bernstein"])
@pytest.mark.parametrize("dx", [0, 1])
@pytest.mark.parametrize("extrapolate", [True, False])
def test_evaluate_forward_rule(kernel, dx, extrapolate):
    """The frule of a kernel writing into `out`: it writes the value and returns out's tangent, in c, the
    breakpoints and the points at once."""
    c = np.ascontiguousarray(np.cos(np.arange(36.0)).reshape(3, 6, 2))
    tc, tx = np.sin(np.arange(36.0)).reshape(3, 6, 2), np.linspace(0.1, -0.2, 7)
    points = OUTSIDE if extrapolate else INSIDE
    tp = np.array([0.3, -0.5, 0.2, 0.7])

    def evaluated(s):
        y = np.empty((4, 2))
        kernel(c + s * tc, XS + s * tx, points + s * tp, dx, extrapolate, y)
        return y
    out = np.full((4, 2), np.nan)
    y, dout = registry.get(kernel).frule((tc, tx, tp, None, None, None), c, XS, points, dx, extrapolate, out)
    assert y is None
    np.testing.assert_allclose(out, evaluated(0.0), rtol=1e-14)  # written
    np.testing.assert_allclose(dout, fd.derivative(evaluated, 0.0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("order", [0, 1])
def test_fix_continuity_forward_rule(order):
    c0 = np.cos(np.arange(24.0)).reshape(4, 6, 1)
    tc, tx = np.sin(np.arange(24.0)).reshape(4, 6, 1), np.linspace(0.1, -0.2, 7)

    def fixed(s):
        c = np.array(c0 + s * tc)
        _ppoly.fix_continuity(c, XS + s * tx, order)
        return c
    c = c0.copy()
    y, dc = registry.get(_ppoly.fix_continuity).frule((tc, tx, None), c, XS, order)
    np.testing.assert_allclose(c, fixed(0.0), rtol=1e-14)  # changed in place
    np.testing.assert_allclose(dc, fd.derivative(fixed, 0.0), rtol=1e-6, atol=1e-8)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_forward_mode_through_the_engines():
    """Forward mode follows the array `_ppoly.evaluate` writes (a scalar point, in the data through scipy's
    array-API conversions `map(xp.asarray, (x, y))`, chunked directions of jacfwd); a perturbed value
    written into a plain array made outside is refused, never dropped."""
    spline = CubicSpline(XS, np.sin(XS))
    assert derivative(lambda t: spline(t), 1.3) == pytest.approx(spline(1.3, 1), rel=1e-12)
    for make in (CubicSpline, PchipInterpolator, Akima1DInterpolator):
        f = (lambda y, make=make: make(XS, y)(INSIDE) * WEIGHTS)
        np.testing.assert_allclose(jacfwd(f, np.sin(XS)), fd.jacobian(f, np.sin(XS)), rtol=1e-7, atol=1e-9)
    with pytest.raises(OverdubError, match="without a tangent"):
        jacfwd(_into_a_global, INSIDE)


_GLOBAL_OUT = np.zeros((4, 1))


def _into_a_global(xp):
    _ppoly.evaluate(_C, XS, xp, 0, True, _GLOBAL_OUT)
    return np.sum(_GLOBAL_OUT)


def test_hessian_refused():
    """Forward over reverse (hessian) runs the in-place rules on duals: refused, never a number."""
    from contexts import hessian
    spline = CubicSpline(XS, np.sin(XS))
    with pytest.raises(OverdubError):
        hessian(lambda t: np.sum(spline(t) ** 3), INSIDE)


@pytest.mark.parametrize("extrapolate", ["periodic"])
def test_periodic_extrapolation(extrapolate):
    spline = CubicSpline(XS, np.sin(XS))
    _check(lambda t: np.sum(spline(t, 0, extrapolate) * WEIGHTS), OUTSIDE)
    _check(lambda y: np.sum(CubicSpline(XS, y)(OUTSIDE, 1, extrapolate) * WEIGHTS), np.sin(XS))


# -- the kernel called directly: the array it writes, declared (`Rule.writes`), seen through views ---------------

_C = np.ascontiguousarray(CubicSpline(XS, np.sin(XS)).c[:, :, None])
_W = np.arange(1.0, 9.0)[:, None]


def _into_a_view(xp):
    buf = np.ones((8, 1))
    out = buf[2:6]  # the kernel writes buf's middle through this view
    _ppoly.evaluate(_C, XS, xp, 0, True, out)
    return np.sum(buf * _W)


def _written_twice(c):
    out = np.zeros((4, 1))
    _ppoly.evaluate(c, XS, INSIDE, 0, True, out)
    s = np.sum(out ** 2)
    _ppoly.evaluate(c, XS, INSIDE + 0.1, 1, True, out)  # the first values' cotangent is not the second's
    return s + np.sum(out * _W[:4])


def _renamed_into_a_view(xp):
    ev = _ppoly.evaluate  # not resolved by name: which argument it writes is not known statically
    buf = np.ones((8, 1))
    out = buf[2:6]
    ev(_C, XS, xp, 0, True, out)
    return np.sum(buf * _W)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_kernel_writing_into_a_view():
    _check(_into_a_view, INSIDE)
    _check(_written_twice, _C)
    with pytest.raises(OverdubError, match="in place"):
        gradient(_renamed_into_a_view, INSIDE)


# -- BPoly: the Bernstein basis (`_ppoly.evaluate_bernstein`, the same in-place form) -----------------------------

@pytest.mark.parametrize("nu", [0, 1, 2])
@pytest.mark.parametrize("extrapolate", [True, False])
def test_bpoly(nu, extrapolate):
    from scipy.interpolate import BPoly
    c = np.cos(np.arange(18.0)).reshape(3, 6)
    points = OUTSIDE if extrapolate else INSIDE

    def in_c(c):
        return np.sum(BPoly(c, XS)(points, nu, extrapolate) * WEIGHTS)

    def in_x(x):
        return np.sum(BPoly(c, x)(points, nu, extrapolate) * WEIGHTS)

    def in_points(t):
        return np.sum(BPoly(c, XS)(t, nu, extrapolate) ** 2)
    _check(in_c, c)
    _check(in_x, XS, rtol=1e-6)
    _check(in_points, points)


def test_bpoly_from_derivatives_in_the_data():
    from scipy.interpolate import BPoly

    def f(y):
        return np.sum(BPoly.from_derivatives(XS, y.reshape(7, 2))(INSIDE) * WEIGHTS)
    _check(f, np.sin(np.arange(14.0)))


def test_module_docstring_example():
    import doctest

    from contexts.rules.numpy import scipy_ppoly
    assert doctest.testmod(scipy_ppoly).failed == 0
