"""B-spline evaluation (`scipy.interpolate._dierckx.evaluate_spline`, under BSpline and the splines
make_interp_spline returns): the rule in the coefficients and the points against central differences,
reverse and forward; the knots refused; through the engines. CubicSpline/PPoly (`_ppoly.evaluate`, which
writes into an output argument) stay refused, never a zero."""

import numpy as np
import pytest

from overdub.errors import OverdubError

pytest.importorskip("scipy.interpolate")
from scipy.interpolate import BSpline, CubicSpline, _dierckx, make_interp_spline  # noqa: E402

from contexts import gradient, jacfwd  # noqa: E402
from contexts.rules.cotangents import Refused  # noqa: E402
from contexts.rules.registry import MissingRule, NoDerivative, registry  # noqa: E402
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
        dt * 1.0
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


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_cubic_spline_refused_not_zero(mode):
    """`_ppoly.evaluate` writes into `out`; without the engine handing a primitive the cotangent of an
    array it writes (see contexts/rules/numpy/scipy_splines.py) it has no rule: a refusal."""
    def f(t):
        return np.sum(CubicSpline(XS, np.sin(XS))(t))
    # (forward mode: CubicSpline's own np.empty arrays are duals of zero tangent, which array-API
    # compatibility's np.array(copy=...) then refuses to convert before evaluate is reached)
    with pytest.raises(MissingRule if mode == "reverse" else OverdubError):
        gradient(f, POINTS) if mode == "reverse" else jacfwd(f, POINTS)
