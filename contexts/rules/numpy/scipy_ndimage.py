"""Rules for scipy.ndimage's separable line filters: the C kernels `_nd_image.correlate1d(input, weights,
axis, output, mode, cval, origin)` (correlate1d, convolve1d, gaussian_filter1d and gaussian_filter, sobel,
prewitt, laplace, gaussian_laplace, gaussian_gradient_magnitude, and savgol_filter's default mode) and
`_nd_image.uniform_filter1d(input, size, axis, output, mode, cval, origin)` (uniform_filter1d,
uniform_filter). Each writes its output array, which may be the input itself (gaussian_filter filters its
later axes in place), and is linear in the input, in the weights and in cval.

The input's cotangent is the transpose of the filter along the axis, applied line by line. Its matrix is
built by the kernel itself on blocks of the identity, so every boundary mode ('reflect', 'mirror',
'nearest', 'wrap', 'constant', 'grid-*') is scipy's own rather than a re-derivation: O(n^2) for n points
along the axis, in memory blocks of at most `_BLOCK` columns. The weights' cotangent is the kernel on unit
weights (one call per weight); cval's (mode 'constant') the kernel on zeros with cval 1. The output's old
values had no effect (it is overwritten whole): the cotangent it held leaves it.

The n-dimensional kernel `_nd_image.correlate(input, weights, output, mode, cval, origins)`
(`ndimage.correlate`, `convolve`, and the filters built on them) is a sum over the kernel's offsets k of
w[k] times the input shifted by k along every axis, each coordinate extended by the mode on its own: the
same one-line operators, one per axis and offset (`correlate1d` with a unit weight), so the transpose is
the sum of w[k] times their transposes, applied as sparse matrices along each axis (O(size) per offset).

Not here: the rank and min/max filters, and the interpolation kernels (`zoom_shift`, `geometric_transform`:
`map_coordinates`, `shift`, `zoom`, `rotate`): refused by name.

>>> import numpy as np, scipy.ndimage as ndi
>>> from contexts import gradient
>>> g = gradient(lambda x: ndi.uniform_filter1d(x, 3, mode="constant")[2], np.arange(5.0))[0]
>>> np.round(g * 3, 12)
array([0., 1., 1., 1., 0.])
"""

from __future__ import annotations

import numpy as np
from scipy.ndimage import _nd_image

from ..registry import registry
from ._util import match_primal, unsupported
from .scipy_ppoly import _no_duals, written_back

__all__: list[str] = []

_BLOCK = 512  # identity columns per kernel call when the transpose's matrix is built
_CONSTANT = 4  # scipy.ndimage's code for mode 'constant' (`_ni_support._extend_mode_to_code`)
_GRID_CONSTANT = 6  # ... and for 'grid-constant'


def _real(name, *arrays):
    if any(np.iscomplexobj(a) for a in arrays):
        raise unsupported(name, "complex images", "filter the real and imaginary parts")


def _run(kernel, x, param, axis, mode, cval, origin, dtype=float):
    """The kernel on x into a new array (of dtype)."""
    out = np.zeros(np.shape(x), dtype=dtype)
    kernel(np.ascontiguousarray(x, dtype=dtype), param, axis, out, mode, cval, origin)
    return out


def _transposed(kernel, param, axis, mode, origin, d):
    """A^T d along axis, A the filter of one line (cval 0: its linear part), n x n, built in blocks."""
    d = np.moveaxis(np.asarray(d, dtype=float), axis, 0)
    n = d.shape[0]
    flat = d.reshape(n, -1)
    out = np.empty_like(flat)
    eye = np.eye(n)
    for j in range(0, n, _BLOCK):
        columns = _run(kernel, eye[:, j:j + _BLOCK], param, 0, mode, 0.0, origin)  # A[:, j:j+b]
        out[j:j + _BLOCK] = columns.T @ flat
    return np.moveaxis(out.reshape(d.shape), 0, axis)


def _cval_effect(kernel, x, param, axis, mode, origin):
    """d output / d cval: the kernel on zeros with cval 1 (modes that pad with cval; zero for the others)."""
    if mode not in (_CONSTANT, _GRID_CONSTANT):
        return None
    return _run(kernel, np.zeros(np.shape(x)), param, axis, mode, 1.0, origin)


def _unit_weights(weights):
    w = np.asarray(weights, dtype=float)
    return [np.eye(len(w))[k] for k in range(len(w))]


def _line_filter_rules(kernel, name, linear_in_param):
    """The in-place rule and the writing frule of `kernel(input, param, axis, output, mode, cval, origin)`;
    `linear_in_param`: param is the weights (differentiated), else a window size."""

    def inplace(input, param, axis, output, mode, cval, origin):
        _no_duals(name, input, param, output, cval)
        _real(name, input, output)
        old = output.copy()
        values = np.array(input, dtype=float)  # (before the kernel: output may be input itself)
        kernel(input, param, axis, output, mode, cval, origin)

        def cotangents(d):
            dx = _transposed(kernel, param, axis, mode, origin, d)
            dparam = None
            if linear_in_param and np.asarray(param).dtype.kind == "f":
                dparam = match_primal(np.array([np.sum(d * _run(kernel, values, unit, axis, mode, cval, origin))
                                                for unit in _unit_weights(param)]), param)
            effect = _cval_effect(kernel, values, param, axis, mode, origin)
            dcval = None if effect is None or not isinstance(cval, float) else float(np.sum(d * effect))
            return match_primal(dx, input), dparam, None, -d, None, dcval, None
        return None, written_back(output, old, 3, 7, cotangents)

    def frule(tangents, input, param, axis, output, mode, cval, origin):
        """Writes output; returns (None, its tangent): the filter of the input's tangent (cval 0), the
        filter of the input by the weights' tangent (the output is linear in the weights, padding
        included), and cval's tangent times its effect."""
        _real(name, input)
        values = np.array(input, dtype=float)
        kernel(input, param, axis, output, mode, cval, origin)
        t_in, t_param, _, _, _, t_cval = (tuple(tangents) + (None,) * 6)[:6]
        if t_in is None and t_param is None and t_cval is None:
            return None, None
        dy = np.zeros(np.shape(output))
        if t_in is not None:
            dy = dy + _run(kernel, np.asarray(t_in, dtype=float), param, axis, mode, 0.0, origin)
        if t_param is not None and linear_in_param:
            dy = dy + _run(kernel, values, np.asarray(t_param, dtype=float), axis, mode, cval, origin)
        if t_cval is not None:
            effect = _cval_effect(kernel, values, param, axis, mode, origin)
            if effect is not None:
                dy = dy + effect * t_cval
        return None, dy.astype(output.dtype, copy=False)

    registry.set(kernel, inplace=inplace, writes=3)
    registry.frule(kernel)(frule)


_line_filter_rules(_nd_image.correlate1d, "scipy.ndimage.correlate1d", True)


# -- n-dimensional weights ------------------------------------------------------------------------------

def _run_nd(x, weights, mode, cval, origins):
    """`_nd_image.correlate` on x into a new float array."""
    out = np.zeros(np.shape(x))
    _nd_image.correlate(np.ascontiguousarray(x, dtype=float), np.ascontiguousarray(weights, dtype=float), out,
                        mode, cval, list(origins))
    return out


def _shift_matrix(n, size, k, mode, origin):
    """The one-line operator of offset k among `size` (the weights' extent on that axis), cval 0, as a
    sparse n x n matrix: correlate1d with the unit weight e_k, built by the kernel on the identity."""
    from scipy import sparse

    unit = np.zeros(size)
    unit[k] = 1.0
    return sparse.csr_matrix(_run(_nd_image.correlate1d, np.eye(n), unit, 0, mode, 0.0, origin))


def _correlate_transposed(d, weights, mode, origins):
    """The input's cotangent: sum over offsets k of w[k] times the transposed shifts of d along each axis."""
    w = np.asarray(weights, dtype=float)
    shape = d.shape
    mats = [[None] * w.shape[a] for a in range(d.ndim)]
    out = np.zeros(shape)
    for k in zip(*np.nonzero(w)):
        term = d
        for axis, ka in enumerate(k):
            m = mats[axis][ka]
            if m is None:
                m = mats[axis][ka] = _shift_matrix(shape[axis], w.shape[axis], ka, mode, origins[axis]).T.tocsr()
            moved = np.moveaxis(term, axis, 0)
            term = np.moveaxis((m @ moved.reshape(shape[axis], -1)).reshape(moved.shape), 0, axis)
        out += w[k] * term
    return out


def _correlate_inplace(input, weights, output, mode, cval, origins):
    name = "scipy.ndimage.correlate"
    _no_duals(name, input, weights, output, cval)
    _real(name, input, weights, output)
    old = output.copy()
    values = np.array(input, dtype=float)
    _nd_image.correlate(input, weights, output, mode, cval, origins)

    def cotangents(d):
        dx = _correlate_transposed(d, weights, mode, origins)
        dw = None
        if np.asarray(weights).dtype.kind == "f":
            w = np.asarray(weights, dtype=float)
            dw = np.zeros(w.shape)
            for k in np.ndindex(w.shape):
                unit = np.zeros(w.shape)
                unit[k] = 1.0
                dw[k] = np.sum(d * _run_nd(values, unit, mode, cval, origins))
            dw = match_primal(dw, weights)
        dcval = None
        if mode in (_CONSTANT, _GRID_CONSTANT) and isinstance(cval, float):
            dcval = float(np.sum(d * _run_nd(np.zeros(values.shape), weights, mode, 1.0, origins)))
        return match_primal(dx, input), dw, -d, None, dcval, None
    return None, written_back(output, old, 2, 6, cotangents)


def _correlate_frule(tangents, input, weights, output, mode, cval, origins):
    """Writes output; returns (None, its tangent): the filter of the input's tangent (cval 0), the input
    filtered by the weights' tangent (cval included: the output is linear in the weights), cval's tangent
    times its effect."""
    _real("scipy.ndimage.correlate", input)
    values = np.array(input, dtype=float)
    _nd_image.correlate(input, weights, output, mode, cval, origins)
    t_in, t_w, _, _, t_cval = (tuple(tangents) + (None,) * 5)[:5]
    if t_in is None and t_w is None and t_cval is None:
        return None, None
    dy = np.zeros(np.shape(output))
    if t_in is not None:
        dy = dy + _run_nd(np.asarray(t_in, dtype=float), weights, mode, 0.0, origins)
    if t_w is not None:
        dy = dy + _run_nd(values, np.asarray(t_w, dtype=float), mode, cval, origins)
    if t_cval is not None and mode in (_CONSTANT, _GRID_CONSTANT):
        dy = dy + _run_nd(np.zeros(values.shape), weights, mode, 1.0, origins) * t_cval
    return None, dy.astype(output.dtype, copy=False)


registry.set(_nd_image.correlate, inplace=_correlate_inplace, writes=2)
registry.frule(_nd_image.correlate)(_correlate_frule)
_line_filter_rules(_nd_image.uniform_filter1d, "scipy.ndimage.uniform_filter1d", False)
registry.nondifferentiable(np.may_share_memory, np.shares_memory)
