"""FITPACK's fits and evaluation in both modes against central differences (contexts/rules/numpy/scipy_fitpack.py,
and scipy_splines for splev): splrep + splev, UnivariateSpline (interpolating, least-squares polynomial,
smoothing: FITPACK's p-iteration replayed), LSQUnivariateSpline, set_smoothing_factor, splint/.integral,
derivative()/antiderivative(), roots, spalde, RectBivariateSpline; the refusals (data abscissae, given knots,
bounds, a smoothing fit's weights, a smoothing surface, second derivatives in the data)."""

import warnings

import numpy as np
import pytest

pytest.importorskip("scipy.interpolate")
from scipy import interpolate as si  # noqa: E402

from contexts import gradient, hessian, jacfwd  # noqa: E402
from contexts.rules.registry import MissingRule  # noqa: E402
from contexts.rules.numpy._util import UnsupportedCase  # noqa: E402
pytest.importorskip("scipy.interpolate._dfitpack")  # (scipy 1.18 fits in Python, without these kernels)
from contexts.rules.numpy.scipy_fitpack import Fit  # noqa: E402
from tests.fd import gradient as fd_gradient  # noqa: E402
from tests.fd import hessian as fd_hessian  # noqa: E402

MODES = ["reverse", "forward"]
_RNG = np.random.default_rng(0)
X = np.linspace(0.0, 3.0, 25)
Y = np.sin(2 * X) + 0.1 * _RNG.standard_normal(25)
W = 1.0 + 0.3 * _RNG.random(25)
P = np.array([0.3, 1.1, 2.45, 2.9])  # off the knots, inside
WEIGHTS = np.arange(1.0, 5.0)
Z = np.sin(np.arange(42.0)).reshape(6, 7)
_XS, _YS = 3 * _RNG.random(40), 3 * _RNG.random(40)  # scattered sites


def _run(mode, f, a):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", UserWarning)
        return np.asarray(gradient(f, a)[0] if mode == "reverse" else jacfwd(f, a), dtype=float)


def _reference(f, a, h=1e-3, order=4):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", UserWarning)
        return np.asarray(fd_gradient(f, a, h=h, order=order)[0], dtype=float)


def relative_error(got, ref, floor=1e-12):
    return float(np.max(np.abs(got - ref)) / max(float(np.max(np.abs(ref))), floor))


def _check(mode, f, a, rtol=1e-6, h=1e-3, order=4):
    got, ref = _run(mode, f, a), _reference(f, a, h, order)
    assert relative_error(got, ref) < rtol, (got, ref)
    return got


def _fit_kind(x, y, k, s):
    """'linear' or 'smoothing': the branch FITPACK took for UnivariateSpline(x, y, k=k, s=s)."""
    from scipy.interpolate import _dfitpack
    out = _dfitpack.fpcurf0(x, y, k, s=s)
    n = out[7]
    fit = Fit("test", x, y, np.ones(len(x)), out[8][:n], k, s, out[9], out[11][n - 1], int(out[13]), 0, float(out[10]))
    return ("smoothing" if fit.smoothing else "linear"), int(out[13])


TCK = si.splrep(X, Y, s=0)

# (name, f, argument, finite-difference step, order). Fits with s > 0 are piecewise smooth in y (FITPACK
# places knots by comparisons): their differences take a step that stays inside the piece.
CASES = [
    # 1. evaluation in the points, der 0, 1, 2 (FITPACK splev/splder)
    ("splev_points_der0", lambda p: si.splev(p, TCK) @ WEIGHTS, P, 1e-3, 4),
    ("splev_points_der1", lambda p: si.splev(p, TCK, der=1) @ WEIGHTS, P, 1e-3, 4),
    ("splev_points_der2", lambda p: si.splev(p, TCK, der=2) @ WEIGHTS, P, 1e-3, 4),
    # evaluation in the coefficients
    ("splev_coefficients", lambda c: si.splev(P, (TCK[0], c, 3)) @ WEIGHTS, TCK[1], 1e-3, 4),
    # 2. splrep(s=0) + splev in the data values, k = 1, 3, 5
    ("splrep_s0_k1", lambda y: si.splev(P, si.splrep(X, y, k=1, s=0)) @ WEIGHTS, Y, 1e-3, 4),
    ("splrep_s0_k3", lambda y: si.splev(P, si.splrep(X, y, k=3, s=0)) @ WEIGHTS, Y, 1e-3, 4),
    ("splrep_s0_k5", lambda y: si.splev(P, si.splrep(X, y, k=5, s=0)) @ WEIGHTS, Y, 1e-3, 4),
    ("splrep_s0_weights", lambda w: si.splev(P, si.splrep(X, Y, w=w, s=0.5)) @ WEIGHTS, W, 1e-5, 2),
    # 3. InterpolatedUnivariateSpline in y, and at the evaluation points (value and derivative)
    ("ius_y", lambda y: si.InterpolatedUnivariateSpline(X, y)(P) @ WEIGHTS, Y, 1e-3, 4),
    ("ius_y_k5", lambda y: si.InterpolatedUnivariateSpline(X, y, k=5)(P) @ WEIGHTS, Y, 1e-3, 4),
    ("ius_points", lambda p: np.sum(si.InterpolatedUnivariateSpline(X, Y)(p) ** 2), P, 1e-3, 4),
    ("ius_points_nu1", lambda p: np.sum(si.InterpolatedUnivariateSpline(X, Y)(p, 1) ** 2), P, 1e-3, 4),
    # 4. UnivariateSpline with s > 0: the least-squares polynomial (ier = -2), the smoothing spline
    #    (FITPACK's iteration on p, replayed), the default s = len(x), nest reset (fpcurf1)
    ("us_polynomial", lambda y: si.UnivariateSpline(X, y, s=3.0)(P) @ WEIGHTS, Y, 1e-5, 2),
    ("us_smoothing", lambda y: si.UnivariateSpline(X, y, s=0.2)(P) @ WEIGHTS, Y, 1e-6, 2),
    ("us_smoothing_k1", lambda y: si.UnivariateSpline(X, y, k=1, s=0.3)(P) @ WEIGHTS, Y, 1e-6, 2),
    ("us_default_s", lambda y: si.UnivariateSpline(X, 15 * y)(P) @ WEIGHTS, Y, 1e-6, 2),
    ("us_nest_reset", lambda y: si.UnivariateSpline(X, y, s=0.05)(P) @ WEIGHTS, Y, 1e-6, 2),
    ("us_residual", lambda y: si.UnivariateSpline(X, y, s=0.2).get_residual(), Y, 1e-6, 2),
    ("us_set_smoothing_factor", lambda y: _smoothed(y)(P) @ WEIGHTS, Y, 1e-6, 2),
    ("splrep_smoothing_in_s", lambda s: si.splev(P, si.splrep(X, Y, s=s)) @ WEIGHTS, 0.05, 1e-6, 2),
    ("splrep_smoothing_in_y", lambda y: si.splev(P, si.splrep(X, y, s=0.05)) @ WEIGHTS, Y, 1e-6, 2),
    # 5. LSQUnivariateSpline (given knots) in y
    ("lsq_y", lambda y: si.LSQUnivariateSpline(X, y, [0.8, 1.5, 2.2])(P) @ WEIGHTS, Y, 1e-3, 4),
    ("lsq_y_k5", lambda y: si.LSQUnivariateSpline(X, y, [1.0, 2.0], k=5)(P) @ WEIGHTS, Y, 1e-3, 4),
    # 6. splint / .integral, in y and in the limits
    ("splint_y", lambda y: si.splint(0.2, 2.5, si.splrep(X, y)), Y, 1e-3, 4),
    ("integral_y", lambda y: si.InterpolatedUnivariateSpline(X, y).integral(0.2, 2.5), Y, 1e-3, 4),
    ("splint_limits", lambda ab: si.splint(ab[0], ab[1], TCK) ** 2, np.array([0.2, 2.2]), 1e-3, 4),
    # 7. derivative(), antiderivative(), roots(), spalde
    ("derivative_y", lambda y: si.InterpolatedUnivariateSpline(X, y).derivative(2)(P) @ WEIGHTS, Y, 1e-3, 4),
    ("antiderivative_y", lambda y: si.UnivariateSpline(X, y, s=0.2).antiderivative()(P) @ WEIGHTS, Y, 1e-6, 2),
    ("roots_y", lambda y: np.sum(si.InterpolatedUnivariateSpline(X, y).roots() ** 2), Y, 1e-3, 4),
    ("spalde_y", lambda y: np.asarray(si.spalde(1.3, si.splrep(X, y))) @ WEIGHTS, Y, 1e-3, 4),
    ("spalde_point", lambda a: np.asarray(si.spalde(a, TCK)) @ WEIGHTS, 1.3, 1e-3, 4),
    # 8. RectBivariateSpline (s = 0: interpolation) in z, and bisplev's evaluation
    ("rbs_z", lambda z: np.sum(si.RectBivariateSpline(X[:6], X[:7], z.reshape(6, 7))(P, P) ** 2), Z.ravel(), 1e-3, 4),
    ("rbs_z_k1", lambda z: si.RectBivariateSpline(X[:6], X[:7], z.reshape(6, 7), kx=1, ky=2).ev(P, P) @ WEIGHTS,
     Z.ravel(), 1e-3, 4),
]


def _smoothed(y):
    spline = si.UnivariateSpline(X, y, s=0.5)
    spline.set_smoothing_factor(0.2)
    return spline


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name, f, a, h, order", CASES, ids=[c[0] for c in CASES])
def test_against_central_differences(name, f, a, h, order, mode):
    _check(mode, f, a, h=h, order=order)


def test_the_branches_are_the_ones_named():
    """The cases above exercise what their names say: FITPACK's smoothing iteration, the polynomial, the
    nest reset (ier = 1, then fpcurf1)."""
    assert _fit_kind(X, Y, 3, 0.2) == ("smoothing", 0)
    assert _fit_kind(X, Y, 1, 0.3)[0] == "smoothing"
    assert _fit_kind(X, 15 * Y, 3, 25.0)[0] == "smoothing"
    assert _fit_kind(X, Y, 3, 3.0) == ("linear", -2)
    assert _fit_kind(X, Y, 3, 0.05)[1] == 1
    assert _fit_kind(X, Y, 3, 0.0) == ("linear", -1)


@pytest.mark.parametrize("mode", MODES)
def test_univariate_spline_weights(mode):
    """UnivariateSpline passes w to FITPACK by keyword (moved to its position for forward mode's rule);
    the least-squares polynomial here, linear in y, a rational function of w."""
    def f(w):
        return si.UnivariateSpline(X, Y, w=w, s=40.0)(P) @ WEIGHTS
    _check(mode, f, W, h=1e-5, order=2)


# -- refused: never a number --------------------------------------------------------------------------------

REFUSED = [
    ("splrep_in_x", lambda x: si.splev(P, si.splrep(x, Y)) @ WEIGHTS, X, "x \\(the data abscissae"),
    ("ius_in_x", lambda x: si.InterpolatedUnivariateSpline(x, Y)(P) @ WEIGHTS, X, "x \\(the data abscissae"),
    ("us_in_x", lambda x: si.UnivariateSpline(x, Y, s=0.2)(P) @ WEIGHTS, X, "x \\(the data abscissae"),
    ("lsq_in_x", lambda x: si.LSQUnivariateSpline(x, Y, [1.0, 2.0])(P) @ WEIGHTS, X, "the data abscissae|bbox"),
    ("lsq_in_knots", lambda t: si.LSQUnivariateSpline(X, Y, t)(P) @ WEIGHTS, np.array([1.0, 2.0]), "the knots given"),
    ("smoothing_in_weights", lambda w: si.splev(P, si.splrep(X, Y, w=w, s=0.05)) @ WEIGHTS, W, "weights w|w \\(the weights"),
    ("rbs_smoothing_in_z", lambda z: np.sum(si.RectBivariateSpline(X[:6], X[:7], z.reshape(6, 7), s=0.5)(P, P)),
     Z.ravel(), "smoothing surface"),
    ("rbs_in_x", lambda x: np.sum(si.RectBivariateSpline(x, X[:7], Z)(P, P)), X[:6].copy(), "grid's sites"),
    # no rules (FITPACK's parcur, percur, surfit): refused by the engines
    ("splprep", lambda y: np.sum(si.splev(P / 3, si.splprep([X, y], s=0)[0])[1]), Y, "no (reverse|forward) rule"),
    ("splrep_periodic", lambda y: np.sum(si.splev(P, si.splrep(X, y, per=1))), Y, "no (reverse|forward) rule"),
    ("smooth_bivariate", lambda z: np.sum(si.SmoothBivariateSpline(_XS, _YS, z)(P, P)), np.sin(_XS) * np.cos(_YS),
     "no (reverse|forward) rule"),
    ("splev_in_knots", lambda t: si.splev(P, (t, TCK[1], 3)) @ WEIGHTS, TCK[0], "t \\(the knots\\)"),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name, f, a, match", REFUSED, ids=[c[0] for c in REFUSED])
def test_refused(name, f, a, match, mode):
    with pytest.raises((MissingRule, UnsupportedCase), match=match):
        _run(mode, f, a)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
@pytest.mark.parametrize("mode", MODES)
def test_splrep_with_given_knots(mode):
    """splrep(x, y, t=knots): forward mode differentiates it (a least-squares fit, linear in y); reverse mode
    refuses it (the refused cotangent of splev's knots meets the assignment that put the given knots into
    curfit's array: refused, not dropped)."""
    def f(y):
        return si.splev(P, si.splrep(X, y, t=[0.8, 1.5, 2.2])) @ WEIGHTS
    if mode == "forward":
        _check(mode, f, Y)
    else:
        with pytest.raises(MissingRule):
            _run(mode, f, Y)


def test_second_derivatives():
    """A Hessian in the evaluation points is right (splev's rules); one in the data values is refused (the
    fit's rules compute on plain arrays), never a number."""
    def in_points(p):
        return np.sum(si.InterpolatedUnivariateSpline(X, Y)(p) ** 3)
    got = np.asarray(hessian(in_points, P))
    ref = fd_hessian(in_points, P)
    assert relative_error(got, ref) < 1e-5

    def in_data(y):
        return np.sum(si.InterpolatedUnivariateSpline(X, y)(P) ** 2)
    with pytest.raises((UnsupportedCase, MissingRule)):
        hessian(in_data, Y)


def test_the_replay_is_checked():
    """The rule recomputes a fit from FITPACK's knots and refuses where it does not land on FITPACK's
    coefficients (a corrupted c stands for a fit the replay does not reproduce)."""
    from scipy.interpolate import _dfitpack
    out = _dfitpack.fpcurf0(X, Y, 3, s=0.2)
    n = out[7]
    c = np.array(out[9])
    c[2] += 1e-3
    with pytest.raises(UnsupportedCase, match="differ from FITPACK"):
        Fit("test", X, Y, np.ones(25), out[8][:n], 3, 0.2, c, out[11][n - 1], int(out[13]), 0, float(out[10]))
