"""scipy.interpolate.RegularGridInterpolator and interpn (linear and nearest) with differentiated points, values
and grids, in both modes, against finite differences; the stand-ins for scipy's compiled helpers against the
helpers themselves (`contexts.rules.numpy.scipy_grid`). Refused in every mode before (no rule for the compiled
`_ndim_coords_from_arrays`, `find_indices`, `evaluate_linear_2d`)."""

import numpy as np
import pytest

interpolate = pytest.importorskip("scipy.interpolate")
from scipy.interpolate import _interpnd, _rgi_cython  # noqa: E402

from contexts import gradient  # noqa: E402
from contexts.forward import jvp  # noqa: E402
from contexts.rules.numpy import scipy_grid  # noqa: E402
from tests import fd  # noqa: E402

GX, GY = np.array([0.0, 1.0, 2.5]), np.array([0.0, 0.5, 1.0, 3.0])
V = np.random.default_rng(0).normal(size=(3, 4))


def test_the_stand_ins_compute_what_scipy_computes():
    rng = np.random.default_rng(1)
    xi = np.stack([rng.uniform(-0.5, 3, 30), rng.uniform(-0.5, 3.5, 30)])
    xi[0, 3], xi[1, 4], xi[0, 5], xi[0, 6], xi[1, 7] = 1.0, 3.0, np.nan, 2.5, 0.0  # (edges, a NaN)
    want, got = _rgi_cython.find_indices((GX, GY), xi), scipy_grid.find_indices((GX, GY), xi)
    assert np.array_equal(want[0], got[0])
    assert np.allclose(want[1], got[1], equal_nan=True)
    kept = ~np.isnan(xi).any(axis=0)
    a = _rgi_cython.evaluate_linear_2d(V, want[0], want[1], (GX, GY), np.empty(30))
    b = scipy_grid.evaluate_linear_2d(V, got[0], got[1], (GX, GY), np.empty(30))
    assert np.allclose(a[kept], b[kept])
    for points, ndim in [((np.arange(3.0), np.ones(3)), None), (np.ones((4, 2)), 2), (np.arange(4.0), 2),
                         ((np.arange(6.0).reshape(2, 3), 1.0), None), ((np.arange(3.0),), None)]:
        want = _interpnd._ndim_coords_from_arrays(points, ndim=ndim)
        got = scipy_grid.ndim_coords_from_arrays(points, ndim=ndim)
        assert want.shape == got.shape and np.allclose(want, got)


def _points(p):
    return interpolate.RegularGridInterpolator((GX, GY), V)(p.reshape(-1, 2)).sum() * 1.0


def _values(v):
    return interpolate.RegularGridInterpolator((GX, GY), v.reshape(3, 4) ** 2)([[0.3, 0.4], [1.3, 2.0]]).sum()


def _extrapolated(p):
    rgi = interpolate.RegularGridInterpolator((GX, GY), V, bounds_error=False, fill_value=None)
    return rgi(p.reshape(-1, 2)).sum() * 1.0


def _filled(p):
    rgi = interpolate.RegularGridInterpolator((GX, GY), V, bounds_error=False, fill_value=0.5)
    return rgi(p.reshape(-1, 2)).sum() * 1.0


def _three_d(p):
    values = np.stack([V, V ** 2]).transpose(1, 2, 0)
    return interpolate.RegularGridInterpolator((GX, GY, np.array([0.0, 1.0])), values)(p.reshape(-1, 3)).sum() * 1.0


def _interpn_grid(g):
    return interpolate.interpn((np.cumsum(g[:3]) - g[0], GY), V, np.array([[0.4 * g[1], 0.3]]))[0] * 1.0


def _tuple_points(p):
    return interpolate.RegularGridInterpolator((GX, GY), V)((p[:2], p[2:])).sum() * 1.0


CASES = [(_points, np.array([0.7, 0.28, 1.3, 0.49])), (_values, V.ravel() + 0.1),
         (_extrapolated, np.array([3.0, 0.7, 0.7, -0.2])), (_filled, np.array([3.0, 0.7, 0.7, 0.2])),
         (_three_d, np.array([0.2, 0.7, 0.5, 1.9, 2.2, 0.1])), (_interpn_grid, np.array([0.1, 1.1, 1.6])),
         (_tuple_points, np.array([0.7, 0.2, 0.3, 0.7]))]


@pytest.mark.parametrize("f, x", CASES, ids=[f.__name__ for f, _ in CASES])
def test_regular_grid_interpolation_in_both_modes(f, x):
    want = fd.gradient(f, x)[0]
    assert np.allclose(gradient(f, x)[0], want, rtol=1e-6, atol=1e-8)
    d = np.random.default_rng(2).normal(size=x.shape)
    _, t = jvp(f, (x,), (d,))
    assert abs(float(t) - want @ d) <= 1e-6 * max(1.0, abs(want @ d))
