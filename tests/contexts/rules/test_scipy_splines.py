"""B-spline evaluation (`scipy.interpolate._dierckx.evaluate_spline`, under BSpline and the splines
make_interp_spline returns): the rule in the coefficients and the points against central differences,
reverse and forward; the knots refused; through the engines. CubicSpline/PPoly (`_ppoly.evaluate`): see
test_scipy_ppoly.py."""

import numpy as np
import pytest

pytest.importorskip("scipy.interpolate")
from scipy.interpolate import BSpline, _dierckx, make_interp_spline  # noqa: E402

from contexts import gradient, jacfwd  # noqa: E402
from contexts.rules.cotangents import Refused  # noqa: E402
from contexts.rules.registry import NoDerivative, registry  # noqa: E402
from tests import fd  # noqa: E402
from tests.fd import check_rule  # noqa: E402

XS = np.linspace(0.0, 3.0, 7)
POINTS = np.array([0.3, 1.1, 2.4, 3.4])  # off the knots; the last one extrapolated
SPLINE = make_interp_spline(XS, np.sin(XS), k=3)


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("nu", [0, 1])
@pytest.mark.parametrize("extrapolate", [True, False])
def test_evaluate_spline_rule(k, nu, extrapolate):
    spline = make_interp_spline(XS, np.cos(XS), k=k)
    c = np.stack([spline.c, 2 * spline.c], axis=1)  # two splines on the same knots
    points = POINTS if extrapolate else POINTS[:3]
    check_rule(_dierckx.evaluate_spline, spline.t, c, k, points, nu, extrapolate, diff=(1, 3))


def test_knots_refused():
    rule = registry.get(_dierckx.evaluate_spline)
    c = SPLINE.c[:, None]
    y = _dierckx.evaluate_spline(SPLINE.t, c, 3, POINTS, 0, True)
    dt = rule.adjoint(np.ones_like(y), y, SPLINE.t, c, 3, POINTS, 0, True)[0]
    assert type(dt) is Refused
    with pytest.raises(NoDerivative, match="knots"):
        np.asarray(dt * 1.0)  # (unknown through an adjoint's linear steps; refused where used)
    with pytest.raises(NoDerivative, match="knots"):
        rule.frule((np.ones_like(SPLINE.t), None, None, None, None, None), SPLINE.t, c, 3, POINTS, 0, True)
    _, tangent = rule.frule((np.zeros_like(SPLINE.t), None, None, np.ones(4), None, None),
                            SPLINE.t, c, 3, POINTS, 0, True)  # a zero tangent of the knots: not asked
    np.testing.assert_allclose(tangent[:, 0], SPLINE(POINTS, 1), rtol=1e-12)


def _in_points(p):
    return np.sum(SPLINE(p) ** 2) + np.sum(SPLINE.derivative()(p))


def _in_coefficients(c):
    return np.sum(BSpline(SPLINE.t, c, 3)(POINTS) * np.arange(1.0, 5.0))


@pytest.mark.parametrize("f, x", [(_in_points, POINTS), (_in_coefficients, SPLINE.c)], ids=["points", "coefficients"])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_through_the_engines(f, x, mode):
    got = gradient(f, x)[0] if mode == "reverse" else jacfwd(f, x)
    np.testing.assert_allclose(got, fd.gradient(f, x)[0], rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("k", [1, 3, 5])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_make_interp_spline_in_the_data(k, mode):
    """make_interp_spline(x, y) in y with x constant: the coefficients are the banded solve of y (?gbsv),
    the collocation matrix (`_dierckx._coloc`) and the knots constant. Reverse mode follows the knots
    along with the data (the cotangent the knots' rules refuse passes np.r_, tuple repetition, indexing
    and conversions, and is dropped at the constant sites)."""
    def f(y):
        return make_interp_spline(XS, y, k=k)(POINTS) * np.arange(1.0, 5.0)
    y = np.sin(XS)
    got = fd.jacobian(f, y)
    from contexts import jacobian
    np.testing.assert_allclose(jacobian(f, y) if mode == "reverse" else jacfwd(f, y), got, rtol=1e-7, atol=1e-9)


def test_make_interp_spline_refused_in_the_sites():
    """In the sites x the knots move: refused in both modes (reverse names CubicSpline, the same
    not-a-knot cubic, which is differentiated in x), never a number."""
    from overdub.errors import OverdubError

    def in_sites(x):
        return np.sum(make_interp_spline(x, np.sin(XS))(POINTS[:3]))
    with pytest.raises(NoDerivative, match="CubicSpline"):
        gradient(in_sites, XS)
    with pytest.raises(OverdubError):
        jacfwd(in_sites, XS)


def test_coloc_rule_refuses_sites_and_knots():
    rule = registry.get(_dierckx._coloc)
    k, t = 3, SPLINE.t
    ab = np.zeros((3 * k + 1, len(XS)), order="F")
    y, back = rule.inplace(XS, t, k, ab.T, 0)
    written = ab.copy()

    class Session:
        def redo(self, fn, *args):
            fn(*args)

        def held(self, i):
            return np.ones_like(ab.T) if i == 3 else None
    _, cts = back(Session(), None, None)
    assert type(cts[0]) is Refused and type(cts[1]) is Refused
    assert np.all(cts[3][written.T != 0] == -1.0)  # written: the cotangent held leaves
    assert not cts[3][:, :k].any()  # LAPACK's room for the factors: never written
    np.testing.assert_array_equal(ab, written)  # restored, then redone


# -- FITPACK splev / splder (splev(x, tck, der), PPoly.from_spline) ------------------------------------------------

@pytest.mark.parametrize("e", [0, 1, 3])
@pytest.mark.parametrize("nu", [0, 1, 2])
def test_fitpack_splev_rule(nu, e):
    from scipy.interpolate import splrep
    try:  # scipy <= 1.17: splder(t, c, k, x, nu, e)
        from scipy.interpolate import _dfitpack as fitpack
        nu_first = False
    except ImportError:  # scipy 1.18: splder(t, c, k, nu, x, e)
        from scipy.interpolate import _fitpack as fitpack
        nu_first = True
    t, c, k = splrep(XS, np.cos(XS))
    if nu == 0:
        check_rule(fitpack.splev, t, c, k, POINTS, e, diff=(1, 3))
    elif nu_first:
        check_rule(fitpack.splder, t, c, k, nu, POINTS, e, diff=(1, 4))
    else:
        check_rule(fitpack.splder, t, c, k, POINTS, nu, e, diff=(1, 3))


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_from_spline_and_splev_through_the_engines(mode):
    from scipy.interpolate import PPoly, splev, splrep
    t, c, k = splrep(XS, np.cos(XS))

    def from_spline(c):
        return np.sum(PPoly.from_spline((t, c, k))(POINTS[:3], 1) * np.arange(1.0, 4.0))

    def in_points(x):
        return np.sum(splev(x, (t, c, k), 1) ** 2)
    for f, x in ((from_spline, c), (in_points, POINTS)):
        if mode == "forward" and f is from_spline:
            continue  # (forward mode refuses PPoly evaluation: test_scipy_ppoly.py)
        got = gradient(f, x)[0] if mode == "reverse" else jacfwd(f, x)
        np.testing.assert_allclose(got, fd.gradient(f, x)[0], rtol=1e-7, atol=1e-9)
