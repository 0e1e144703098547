"""FITPACK's bivariate kernels (bispev, parder on a grid; bispeu, pardeu at points) under
scipy.interpolate.bisplev and RectBivariateSpline: differentiated in the sites and the coefficients, every
mode against central differences; the knots refused. fluids' loss-coefficient tables (bilinear splines,
kx = ky = 1: a piecewise-constant slope) were refused as "no rule for bispev" in both modes."""

import numpy as np
import pytest
import scipy.interpolate as si

from contexts import gradient, jacfwd
from overdub.errors import OverdubError
from tests.modes import ARRAY_MODES, assert_array_gradient

XS, YS = np.linspace(0.0, 3.0, 7), np.linspace(-1.0, 2.0, 6)
Z = np.sin(XS)[:, None] * np.cos(YS)[None, :] + 0.3 * XS[:, None] + 0.2 * YS[None, :] ** 2
P = np.array([0.77, 0.43])


def tck(kx, ky):
    t = si.RectBivariateSpline(XS, YS, Z, kx=kx, ky=ky).tck
    return (t[0], t[1], t[2], kx, ky)


def cases(kx, ky):
    spl = si.RectBivariateSpline(XS, YS, Z, kx=kx, ky=ky)
    k = tck(kx, ky)
    return {
        "grid": lambda p: np.sum(si.bisplev(np.array([p[0], 1.1, 2.3]), np.array([p[1], 1.7]), k)
                                 * [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),
        "scalar": lambda p: float(si.bisplev(p[0], p[1], k)) * p[1],
        "slope": lambda p: float(si.bisplev(p[0], p[1], k, dx=kx - 1, dy=ky - 1)),
        "points": lambda p: np.sum(spl(np.array([p[0], 2.0]), np.array([p[1], 0.5 * p[0]]), grid=False) * [1.0, 3.0]),
        "points slope": lambda p: np.sum(spl(np.array([p[0], 2.0]), np.array([p[1], 0.5 * p[0]]), dx=kx - 1,
                                             grid=False)),
        "outside": lambda p: float(si.bisplev(p[0] + 3.5, p[1], k)) + float(si.bisplev(p[0], p[1] - 2.0, k)),
        "coefficients": lambda p: float(si.bisplev(1.3, 0.4, (k[0], k[1], k[2] * p[0] + p[1], kx, ky))),
    }


@pytest.mark.parametrize("mode", ARRAY_MODES)
@pytest.mark.parametrize("case", list(cases(3, 3)))
@pytest.mark.parametrize("kx, ky", [(3, 3), (1, 1), (2, 1)], ids=["cubic", "bilinear", "mixed"])
def test_against_central_differences(kx, ky, case, mode):
    assert_array_gradient(mode, cases(kx, ky)[case], P)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_the_knots_refused(mode):
    def f(s):
        k = tck(3, 3)
        return float(si.bisplev(1.3, 0.4, (k[0] * s[0], k[1], k[2], 3, 3)))
    with pytest.raises(OverdubError):
        gradient(f, np.array([1.0])) if mode == "reverse" else jacfwd(f, np.array([1.0]))
