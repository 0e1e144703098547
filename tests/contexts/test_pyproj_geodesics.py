"""pyproj's geodesics differentiated through geographiclib's Python (`contexts.rules.pyproj`): `Geod.fwd`,
`Geod.inv` and `Geod.line_length` on numbers, arrays, lists and tuples, in degrees and radians, in both modes,
against fourth-order central differences of pyproj's own C; the methods not covered stay refused."""

import numpy as np
import pytest

pytest.importorskip("geographiclib")
pyproj = pytest.importorskip("pyproj")

from contexts import jacfwd, jacobian  # noqa: E402
from contexts.rules.registry import MissingRule  # noqa: E402

G = pyproj.Geod(ellps="WGS84")


def richardson(f, x, h=1e-2):
    cols = []
    for j in range(x.size):
        def d(step):
            e = np.zeros_like(x)
            e[j] = step
            return (np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * step)
        cols.append((4 * d(h / 2) - d(h)) / 3)
    return np.stack(cols, -1)


CASES = {
    "fwd of numbers": (lambda x: np.array(G.fwd(x[0], x[1], x[2], x[3] * 1e5)), [10.0, 40.0, 35.0, 2.0]),
    "fwd, forward azimuth": (lambda x: np.array(G.fwd(x[0], x[1], x[2], 3e5, return_back_azimuth=False)),
                             [-70.0, -33.0, 200.0]),
    "fwd in radians": (lambda x: np.array(G.fwd(x[0], x[1], x[2], x[3] * 1e5, radians=True)), [0.2, 0.7, 0.5, 2.0]),
    "inv of numbers": (lambda x: np.array(G.inv(x[0], x[1], x[2], x[3])), [10.0, 40.0, 12.0, 44.0]),
    "fwd of arrays": (lambda x: np.concatenate(G.fwd(x[:2], x[2:4], np.array([30.0, 75.0]),
                                                     np.array([1e5, 3e5]) * x[4])), [10.0, 11.0, 40.0, 41.0, 1.3]),
    "inv of lists": (lambda x: np.concatenate(G.inv(list(x[:2]), list(x[2:4]), [5.0, 6.0], [45.0, 46.0])),
                     [10.0, 11.0, 40.0, 41.0]),
    "inv of tuples": (lambda x: np.concatenate(G.inv(tuple(x[:2]), (50.0, 52.0), tuple(x[2:4]), (60.0, 61.0))),
                      [10.0, 11.0, 40.0, 41.0]),
    "line_length": (lambda x: np.array([G.line_length(x[:3], x[3:])]), [10.0, 11.0, 12.5, 40.0, 41.0, 40.5]),
    "an ellipsoid of numbers (pygc's)": (lambda x: np.array(pyproj.Geod(a=6378137.0, b=6356752.3142).fwd(
        x[0], x[1], 30.0, x[2] * 1e5)), [10.0, 40.0, 1.5]),
    "differentiated in the axes": (lambda x: np.array(pyproj.Geod(a=x[0] * 6378137.0, b=x[1] * 6356752.3142).inv(
        10.0, 40.0, 12.0, 44.0)), [1.0, 1.0]),
    "differentiated in the flattening": (lambda x: np.array(pyproj.Geod(a=6378137.0, f=x[0] / 298.257).inv(
        10.0, 40.0, 12.0, 44.0)), [1.0]),
}


@pytest.mark.one_mode
@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("name", CASES)
def test_geodesics_against_differences(name, mode):
    f, x = CASES[name]
    x = np.array(x)
    J = (jacobian if mode == "reverse" else jacfwd)(f, x)
    R = richardson(f, x)
    assert np.asarray(J).shape == R.shape
    assert np.abs(np.asarray(J) - R).max() <= 1e-8 * np.abs(R).max()


def test_values_are_pyprojs():
    """The stand-ins compute what PROJ's C does (geographiclib's Python, to rounding)."""
    from contexts import value_and_gradient
    y, _ = value_and_gradient(lambda lat: G.inv(10.0, lat, 12.0, 44.0)[2], 40.0)
    assert y == pytest.approx(G.inv(10.0, 40.0, 12.0, 44.0)[2], rel=1e-12)


@pytest.mark.one_mode
def test_methods_not_covered_are_refused():
    with pytest.raises(MissingRule):
        jacobian(lambda x: np.array(G.npts(x[0], x[1], 12.0, 44.0, 3)).ravel(), np.array([10.0, 40.0]))
