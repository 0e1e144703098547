"""The compiled helpers under `scipy.interpolate.RegularGridInterpolator` (and `interpn`) and `griddata`'s points,
written as the numpy code they compute (`Rule.stand_in`), for every engine.

- `_interpnd._ndim_coords_from_arrays(points, ndim)`: the query points as one array, coordinates last (a
  tuple of coordinate arrays broadcast and stacked);
- `_rgi_cython.find_indices(grid, xi)`: for each coordinate, the cell below each point (clamped to the
  grid's first and last cells: extrapolation continues the end cells' lines) and the point's distance from
  that cell's lower edge in units of the cell's width, `(x - g[i]) / (g[i + 1] - g[i])`, differentiable
  in the points and in the grid;
- `_rgi_cython.evaluate_linear_2d(values, indices, norm_distances, grid, out)`: the bilinear form over the
  four corners, written into `out`.

Every engine refused `RegularGridInterpolator(...)(xi)` with differentiated points or values (no rule for
the compiled helpers); as numpy code they are differentiated in the values, the points and the grid, and
sparsity detection sees which corners each point reads. Checked against scipy's own helpers and finite
differences in tests/contexts/test_scipy_grid.py.
"""

from __future__ import annotations

import numpy as np
from scipy.interpolate import _interpnd, _rgi_cython

from ..registry import registry

__all__ = ["ndim_coords_from_arrays", "find_indices", "evaluate_linear_2d"]


def ndim_coords_from_arrays(points, ndim=None):
    """The points as an array of shape (..., ndim): a tuple of coordinate arrays broadcast and stacked
    last; an array as it is, a 1-D one as a column (or rows of ndim)."""
    if isinstance(points, tuple) and len(points) == 1:
        points = points[0]  # (scipy's: a 1-tuple is its one array)
    if isinstance(points, tuple):
        parts = np.broadcast_arrays(*points)
        for p in parts[1:]:
            if p.shape != parts[0].shape:
                raise ValueError("coordinate arrays do not have the same shape")
        return np.stack([np.asarray(p, dtype=float) for p in parts], axis=-1)
    points = np.asanyarray(points)
    if points.ndim == 1:
        points = points.reshape(-1, 1) if ndim is None else points.reshape(-1, ndim)
    return points


def find_indices(grid, xi):
    """(indices, norm_distances), each of shape (len(grid), n): each point's cell per coordinate and its
    distance from the cell's lower edge in cell widths. A NaN coordinate gets cell -1 and distance NaN, as
    scipy's (the caller writes NaN into its result there)."""
    indices = []
    distances = []
    for g, x in zip(grid, xi):
        i = np.clip(np.searchsorted(g, x, side="right") - 1, 0, g.shape[0] - 2)  # (a point on an inner
        lower = g[i]                                                               # edge: the cell above)
        distances.append(np.where(np.isnan(x), np.nan, (x - lower) / (g[i + 1] - lower)))
        indices.append(np.where(np.isnan(x), -1, i))
    return np.asarray(indices, dtype=np.intp), np.stack(distances) if distances else np.empty((0, 0))


def evaluate_linear_2d(values, indices, norm_distances, grid, out):
    """The bilinear interpolation of a 2-D grid of values at the points (cells and distances from
    `find_indices`), written into out, which is returned."""
    i0, i1 = indices[0], indices[1]
    y0, y1 = norm_distances[0], norm_distances[1]
    # (a NaN point's cell is -1, as scipy's: its corners wrap around; the caller writes NaN there)
    r = (values[i0, i1] * (1 - y0) * (1 - y1) + values[i0, i1 + 1] * (1 - y0) * y1
         + values[i0 + 1, i1] * y0 * (1 - y1) + values[i0 + 1, i1 + 1] * y0 * y1)
    out[...] = r
    return out


registry.set(_interpnd._ndim_coords_from_arrays, stand_in=ndim_coords_from_arrays)
registry.set(_rgi_cython.find_indices, stand_in=find_indices)
registry.set(_rgi_cython.evaluate_linear_2d, stand_in=evaluate_linear_2d)
