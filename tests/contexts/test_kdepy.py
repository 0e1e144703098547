"""KDEpy's compiled linear binning (`contexts.rules.kdepy`): the stand-ins compute what KDEpy's Cython
loops compute, and FFTKDE's density is differentiated with respect to its data, weights and bandwidth in
both modes, against central differences. FFTKDE's binning is piecewise linear in the data (a kink where a
point crosses a grid point), so the differences are taken 1e-5 apart, inside one piece (1e-3 crossed one:
off by 2e-4)."""

import numpy as np
import pytest

KDEpy = pytest.importorskip("KDEpy")
from KDEpy import FFTKDE, _cutils  # noqa: E402
from KDEpy.utils import cartesian  # noqa: E402

from contexts import gradient, jvp  # noqa: E402
from contexts.rules import kdepy as stand_ins  # noqa: E402
from tests.fd import gradient as fd_gradient  # noqa: E402

RNG = np.random.default_rng(7)
DATA = RNG.normal(size=30)
WEIGHTS = RNG.random(30) + 0.5
GRID = np.linspace(-6.0, 6.0, 64)
W = RNG.random(64)


def test_stand_ins_are_kdepys_loops():
    d, w = RNG.random(25) * 9, RNG.random(25)
    np.testing.assert_allclose(stand_ins.iterate_data_1D(d, np.zeros(11)),
                               np.asarray(_cutils.iterate_data_1D(d.copy(), np.zeros(11))), atol=1e-14)
    np.testing.assert_allclose(stand_ins.iterate_data_1D_weighted(d, w, np.zeros(11)),
                               np.asarray(_cutils.iterate_data_1D_weighted(d.copy(), w, np.zeros(11))), atol=1e-14)
    for dims in (2, 3):
        D = RNG.random((25, dims)) * 4
        num, total = np.full(dims, 6, dtype="long"), 6 ** dims
        flags = cartesian(([0, 1],) * dims).astype("long")
        if dims == 2:
            pairs = [(stand_ins.iterate_data_2D(D, np.zeros(total), num, total),
                      _cutils.iterate_data_2D(D, np.zeros(total), num, total)),
                     (stand_ins.iterate_data_2D_weighted(D, w, np.zeros(total), num, total),
                      _cutils.iterate_data_2D_weighted(D, w, np.zeros(total), num, total))]
        else:
            pairs = [(stand_ins.iterate_data_ND(D, np.zeros(total), num, total, flags),
                      _cutils.iterate_data_ND(D, np.zeros(total), num, total, flags)),
                     (stand_ins.iterate_data_ND_weighted(D, w, np.zeros(total), num, total, flags),
                      _cutils.iterate_data_ND_weighted(D, w, np.zeros(total), num, total, flags))]
        for ours, theirs in pairs:
            np.testing.assert_allclose(ours, np.asarray(theirs), atol=1e-14)


def test_a_point_off_the_grid_is_refused():
    with pytest.raises(ValueError, match="outside the grid"):
        stand_ins.iterate_data_1D(np.array([1.5, 11.2]), np.zeros(11))


def density_at_grid(d):
    return np.sum(W * FFTKDE(bw=0.7).fit(d).evaluate(GRID))


def density_weighted(w):
    return np.sum(W * FFTKDE(bw=0.5).fit(DATA, weights=w).evaluate(GRID))


def density_autogrid(d):  # (the grid itself follows the data's extent)
    x, y = FFTKDE(kernel="epa", bw=0.9).fit(d).evaluate(64)
    return np.sum(W * y)


GRID_2D = cartesian([np.linspace(-5.0, 5.0, 16), np.linspace(-5.0, 5.0, 16)])


def density_2d(flat):
    # (on a grid of its own: on a grid following the data, the kernel's centre, a grid point at 0 moving
    # with the grid's spacing, is a Euclidean norm of 0 whose sqrt has an infinite partial times a zero
    # tangent -- NaN in both modes, no number)
    y = FFTKDE(bw=0.8).fit(flat.reshape(-1, 2)).evaluate(GRID_2D)
    return np.sum(np.linspace(0.1, 1.0, y.size) * y)


CASES = [(density_at_grid, DATA), (density_weighted, WEIGHTS), (density_autogrid, DATA),
         (density_2d, RNG.normal(size=24))]


@pytest.mark.parametrize("f, x", CASES, ids=["data", "weights", "autogrid", "2d"])
def test_reverse_mode(f, x):
    want = fd_gradient(f, x, h=1e-5, order=2)[0]
    np.testing.assert_allclose(gradient(f, x)[0], want, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("f, x", CASES[:2], ids=["data", "weights"])
def test_forward_mode(f, x):
    want = fd_gradient(f, x, h=1e-5, order=2)[0]
    directions = np.eye(x.size)[:6]
    got = [jvp(f, (x,), (e,))[1] for e in directions]
    np.testing.assert_allclose(got, directions @ want, rtol=1e-5, atol=1e-8)


def test_bandwidth():
    def f(bw):
        return np.sum(W * FFTKDE(bw=bw).fit(DATA).evaluate(GRID))
    want = fd_gradient(f, 0.7, h=1e-5, order=2)[0]
    np.testing.assert_allclose(gradient(f, 0.7)[0], want, rtol=1e-6)
    np.testing.assert_allclose(jvp(f, (0.7,), (1.0,))[1], want, rtol=1e-6)
