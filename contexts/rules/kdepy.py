"""KDEpy's compiled linear binning (`KDEpy._cutils`, in Cython: FFTKDE bins the data onto its grid through
it) given as what it computes: numpy code every engine differentiates as the code it is (`Rule.stand_in`).
Without this a gradient with respect to the data was refused as a C function (`grid_is_sorted`,
`iterate_data_1D`).

Each data point, scaled to grid units, adds `1 - frac` of its weight to the grid point below it and `frac` to
the one above (`frac` its distance from the one below); in d dimensions the 2**d corners around it get the
products of those factors. A point exactly on a grid point is on floor's jump: the binning is continuous
there, and the engines judge it as they judge any `np.floor` (from its two sides). The stand-ins add into a
copy of the given `result` and return it; KDEpy reads only what they return. An index outside the result
(unchecked in the Cython loops, which write past the array) is refused as KDEpy's own data would never give one.

Integers and flags (`grid_is_sorted`) carry no derivative. Checked against KDEpy and central differences in
tests/contexts/test_kdepy.py. Loaded when KDEpy is first imported (`leaves.DOMAINS`).
"""

from __future__ import annotations

import numpy as np
from KDEpy import _cutils

from .registry import registry

__all__ = ["iterate_data_1D", "iterate_data_1D_weighted", "iterate_data_2D", "iterate_data_2D_weighted",
           "iterate_data_ND", "iterate_data_ND_weighted"]


def _corners(data):
    """(the grid point below each entry, as integers; the entry's distance above it)."""
    below = np.floor(data)
    return below.astype(np.intp), data - below


def _added(result, index, values):
    """A copy of result with values added at index (repeated indices summed)."""
    result = np.asarray(result, dtype=float)
    if index.size and (index.min() < 0 or index.max() >= result.size):
        raise ValueError("KDEpy's binning: a data point outside the grid")
    return result + np.bincount(index, weights=values, minlength=result.size)


def iterate_data_1D_weighted(transformed_data, weights, result):
    """`KDEpy._cutils.iterate_data_1D_weighted`: linear binning of data in grid units, weighted."""
    below, frac = _corners(np.asarray(transformed_data, dtype=float))
    weights = np.asarray(weights, dtype=float)
    result = _added(result, below + 1, frac * weights)
    return _added(result, below, weights - frac * weights)


def iterate_data_1D(transformed_data, result):
    """`KDEpy._cutils.iterate_data_1D`: linear binning of data in grid units."""
    below, frac = _corners(np.asarray(transformed_data, dtype=float))
    result = _added(result, below, 1 - frac)
    return _added(result, below + 1, frac)


def iterate_data_ND_weighted(data, weights, result, grid_num, obs_tot, binary_flgs=None):
    """`KDEpy._cutils.iterate_data_ND_weighted` (and the 2-d one): each point's weight spread over the 2**d
    corners of its grid cell, row-major indices over `grid_num`, taken modulo `obs_tot` as KDEpy's are."""
    data = np.asarray(data, dtype=float)
    below, frac = _corners(data)
    dims = data.shape[1]
    grid_num = np.asarray(grid_num)
    flags = (np.asarray(binary_flgs) if binary_flgs is not None else
             np.array([[(c >> (dims - 1 - j)) & 1 for j in range(dims)] for c in range(2 ** dims)]))
    for corner in flags:  # (flag 1: the grid point below in that dimension, with weight 1 - frac)
        index = below[:, 0] + (1 - corner[0])
        for j in range(1, dims):
            index = index * grid_num[j] + below[:, j] + (1 - corner[j])
        value = np.prod(np.where(corner.astype(bool), 1 - frac, frac), axis=1)
        if weights is not None:
            value = value * weights
        result = _added(result, index % obs_tot, value)
    return result


def iterate_data_ND(data, result, grid_num, obs_tot, binary_flgs=None):
    """`KDEpy._cutils.iterate_data_ND` (and the 2-d one): `iterate_data_ND_weighted` with weights 1."""
    return iterate_data_ND_weighted(data, None, result, grid_num, obs_tot, binary_flgs)


def iterate_data_2D_weighted(data, weights, result, grid_num, obs_tot):
    """`KDEpy._cutils.iterate_data_2D_weighted`."""
    return iterate_data_ND_weighted(data, weights, result, grid_num, obs_tot)


def iterate_data_2D(data, result, grid_num, obs_tot):
    """`KDEpy._cutils.iterate_data_2D`."""
    return iterate_data_ND_weighted(data, None, result, grid_num, obs_tot)


for _name in __all__:
    registry.set(getattr(_cutils, _name), stand_in=globals()[_name])

registry.nondifferentiable(_cutils.grid_is_sorted)
