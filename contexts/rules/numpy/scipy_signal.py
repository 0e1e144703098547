"""Rules for scipy.signal's IIR filter kernel `_sigtools._linear_filter(b, a, x, axis=-1, zi=None)`, the C
function under `scipy.signal.lfilter` (for len(a) > 1; a pure FIR filter, len(a) == 1, is np.convolve in
Python and needs no rule), in b, a, x and zi, reverse and forward. Real filters and signals only (complex
ones are refused by name).

Along the filtered axis, with N samples, K = max(len(a), len(b)) and a, b padded with zeros to K, the
Direct Form II transposed filter solves the difference equation with the initial state zi (scipy's
normalised state, hence the a0) and gives the final state zf:

    (a * y)[n] = (b * x)[n] + a0 zi[n]                        n = 0 .. N-1
    a0 zf[i]   = (b * x)[N + i] + a0 zi[N + i] - (a * y)[N + i]   i = 0 .. K-2

(`*` the full convolution, zi[n] = 0 past K-2). Stacking t = [y; zf] (length M = N + K - 1), this is one
lower-triangular system A(a) t = b * x + a0 zi, with A the convolution by a in its first N rows and a0 I
for the state. So, as for any linear solve:

- forward: A t_dot = b_dot * x + b * x_dot - a_dot * y + a0_dot zi + a0 zi_dot - a0_dot [0; zf]: the filter
  1/a run on the first N entries of the right side (with the initial state (a0_dot zi + a0 zi_dot) / a0),
  its final state then corrected by the right side's last K - 1 entries;
- reverse: lambda = A^-T t_bar: lambda's last K - 1 entries are zf_bar / a0, the first N the filter 1/a run
  backwards in time (time-reversed, as the transpose of a Toeplitz matrix is its reversal) on
  y_bar - (the state entries' pull on them); then x_bar[m] = sum_k b_k lambda[m + k],
  b_bar[k] = sum_m x[m] lambda[m + k], zi_bar = a0 lambda[:K-1], a_bar[k] = -sum_n lambda[n] y[n - k]
  (- lambda_tail . zf + lambda[:K-1] . zi for k = 0).

The filter runs call `_linear_filter` itself; the short convolutions (K taps) are sums of shifted slices.
`sosfilt` (the Cython `_sosfilt(sos, x, zi)`, writing the signal and the states into its arguments in
place) is the cascade of its sections' lfilters: reverse mode runs their rule backwards, forward mode their
tangents forwards and writes both arguments' tangents (`writes_also`). Its second derivatives are refused.

>>> import numpy as np, scipy.signal
>>> from contexts import gradient
>>> gradient(lambda x: scipy.signal.lfilter([1.0], [1.0, -0.5], x)[-1], np.ones(3))[0]
array([0.25, 0.5 , 1.  ])
"""

from __future__ import annotations

import numpy as np
import scipy.signal as _scipy_signal
from scipy.signal import _sigtools

from ..registry import registry
from ..sparsity_specs import DENSE
from ._util import is_dual, match_primal, unsupported, zeros

__all__ = ["linear_filter_adjoint", "linear_filter_frule"]

_NAME = "scipy.signal.lfilter (_linear_filter)"


def _options(rest, kwargs):
    """(axis, zi) of a call `_linear_filter(b, a, x, *rest, **kwargs)`."""
    axis = rest[0] if len(rest) > 0 else kwargs.get("axis", kwargs.get("Dim", -1))
    zi = rest[1] if len(rest) > 1 else kwargs.get("zi", kwargs.get("Vi"))
    return axis, zi


def _check_real(*values):
    for v in values:
        if v is not None and np.iscomplexobj(v):
            raise unsupported(_NAME, "complex filters or signals",
                              "filter the real and imaginary parts separately (the filter is linear)")


def _padded(c, k):
    """The 1-D coefficients c with zeros appended to length k."""
    c = c if is_dual(c) else np.asarray(c)
    if c.shape[0] == k:
        return c
    out = zeros((k,), np.result_type(c.dtype, float), c)
    out[: c.shape[0]] = c
    return out


def _last(v, axis):
    """v with the filtered axis moved last (a plain array or a dual)."""
    return np.moveaxis(v if is_dual(v) else np.asarray(v), axis, -1)


def _conv(c, u, length):
    """The full convolution of the taps c with u along the last axis, cut to `length` entries."""
    n, k = u.shape[-1], c.shape[0]
    out = zeros(u.shape[:-1] + (length,), np.result_type(u.dtype, c.dtype), u, c)
    for j in range(k):
        stop = min(length, j + n)
        if stop > j:
            out[..., j:stop] = out[..., j:stop] + c[j] * u[..., : stop - j]
    return out


def _corr(c, lam, n):
    """out[m] = sum_k c[k] lam[m + k] for m < n, along the last axis (lam has at least n + len(c) - 1)."""
    out = None
    for j in range(c.shape[0]):
        term = c[j] * lam[..., j:j + n]
        out = term if out is None else out + term
    return out


def _recursion(a_k, r, w):
    """Solve (a * t)[n] = r[n] + a0 w[n] along the last axis: the filter 1/a with initial state w (None:
    zero), returning (t, final state) or t."""
    one = np.ones(1)
    if w is None:
        return _sigtools._linear_filter(one, a_k, r, -1)
    return _sigtools._linear_filter(one, a_k, r, -1, w)


def _full_state(zi, shape, k, dtype):
    """zi broadcast to the state's shape (the C kernel expands singleton dimensions)."""
    return zi + zeros(shape[:-1] + (k - 1,), dtype, zi)


def linear_filter_frule(tangents, b, a, x, *rest, **kwargs):
    axis, zi = _options(rest, kwargs)
    y = _sigtools._linear_filter(b, a, x, *rest, **kwargs)
    tb, ta, tx = (tuple(tangents) + (None,) * 5)[:3]
    tzi = (tuple(tangents) + (None,) * 5)[4] if len(rest) > 1 else None
    if all(t is None for t in (tb, ta, tx, tzi)):
        return y, None
    _check_real(b, a, x, zi, tb, ta, tx, tzi)
    ndim = np.ndim(x)
    ax = axis % ndim
    k = max(len(a), len(b))
    a_k, b_k = _padded(a, k), _padded(b, k)
    x_l = _last(x, ax)
    n, m = x_l.shape[-1], x_l.shape[-1] + k - 1
    y_main, zf = (y if zi is not None else (y, None))
    y_l = _last(y_main, ax)
    dtype = np.result_type(y_l.dtype, float)
    r = zeros(x_l.shape[:-1] + (m,), dtype, x_l, y_l, tb, ta, tx)
    if tb is not None:
        r = r + _conv(_padded(tb, k), x_l, m)
    if tx is not None:
        r = r + _conv(b_k, _last(tx, ax), m)
    if ta is not None:
        r = r - _conv(_padded(ta, k), y_l, m)
    a0 = a_k[0]
    if zi is None:
        ty = _recursion(a_k, r[..., :n], None)
        return y, np.moveaxis(ty, -1, ax)
    zi_l = _full_state(_last(zi, ax), x_l.shape, k, dtype)
    zf_l = _last(zf, ax)
    w = zeros(zi_l.shape, dtype, zi_l)
    ta0 = None if ta is None else _padded(ta, k)[0]
    if ta0 is not None:
        w = w + ta0 * zi_l
    if tzi is not None:
        w = w + a0 * _full_state(_last(tzi, ax), x_l.shape, k, dtype)
    ty, tzf = _recursion(a_k, r[..., :n], w / a0)
    tzf = tzf + r[..., n:] / a0
    if ta0 is not None:
        tzf = tzf - ta0 * zf_l / a0
    return y, (np.moveaxis(ty, -1, ax), np.moveaxis(tzf, -1, ax))


def _lambda(dy_main, dzf, a_k, n, k, shape, dtype):
    """lambda = A^-T [y_bar; zf_bar] along the last axis (length n + k - 1)."""
    a0 = a_k[0]
    lam = zeros(shape[:-1] + (n + k - 1,), dtype, dy_main, dzf)
    rhs = zeros(shape[:-1] + (n,), dtype, dy_main) if dy_main is None else dy_main
    if dzf is not None and k > 1:
        lam[..., n:] = dzf / a0
        rhs = rhs - _corr(a_k, lam, n)
    head = np.flip(_recursion(a_k, np.flip(rhs, -1), None), -1)
    lam[..., :n] = lam[..., :n] + head
    return lam


def _sum_batch(v):
    return v.sum(axis=tuple(range(v.ndim - 1))) if v.ndim > 1 else v


def linear_filter_adjoint(dy, y, b, a, x, *rest, **kwargs):
    nones = (None,) * len(rest)
    axis, zi = _options(rest, kwargs)
    with_state = zi is not None
    dy_main, dzf = (dy if with_state else (dy, None)) if dy is not None else (None, None)
    if dy_main is None and dzf is None:
        return (None, None, None) + nones
    _check_real(b, a, x, zi)
    ndim = np.ndim(x)
    ax = axis % ndim
    k = max(len(a), len(b))
    a_k, b_k = _padded(a, k), _padded(b, k)
    x_l = _last(x, ax)
    n = x_l.shape[-1]
    y_main, zf = (y if with_state else (y, None))
    y_l = _last(y_main, ax)
    dtype = np.result_type(y_l.dtype, float)
    lam = _lambda(None if dy_main is None else _last(dy_main, ax), None if dzf is None else _last(dzf, ax),
                  a_k, n, k, x_l.shape, dtype)
    dx = np.moveaxis(_corr(b_k, lam, n), -1, ax)
    db = _sum_batch(_corr_lags(x_l, lam, k))
    da = -_sum_batch(_corr_lags(y_l, lam, k))
    dzi = None
    if with_state:
        zi_l = _full_state(_last(zi, ax), x_l.shape, k, dtype)
        head = lam[..., :k - 1]
        extra = -(lam[..., n:] * _last(zf, ax)).sum() + (head * zi_l).sum()
        da = da + _unit(k, extra, da)
        dzi = match_primal(np.moveaxis(a_k[0] * head, -1, ax), zi)
    cts = (match_primal(db[: len(b)], b), match_primal(da[: len(a)], a), match_primal(dx, x))
    if len(rest) > 1:
        return cts + (None, dzi) + nones[2:]
    if with_state:  # zi by keyword
        return cts + nones + ({"zi" if "zi" in kwargs else "Vi": dzi},)
    return cts + nones


def _corr_lags(u, lam, k):
    """out[..., j] = sum_m u[..., m] lam[..., m + j] for the lags j < k."""
    n = u.shape[-1]
    return np.stack([(u * lam[..., j:j + n]).sum(axis=-1) for j in range(k)], axis=-1)


def _unit(k, value, like):
    """A length-k vector with value at index 0."""
    e = zeros((k,), np.result_type(like.dtype, float), value, like)
    e[0] = value
    return e


registry.adjoint(_sigtools._linear_filter)(linear_filter_adjoint)
registry.frule(_sigtools._linear_filter)(linear_filter_frule)
registry.sparsity(DENSE, _sigtools._linear_filter)  # conservative: y[n] depends on x[:n + 1] only


# -- sosfilt: second-order sections, the Cython `_sosfilt(sos, x, zi)` filtering x and zi in place ---------
# x (batch, n) and zi (batch, sections, 2) are scipy's own copies. The cascade is section k's
# `_linear_filter(sos[k, :3], sos[k, 3:], y_{k-1}, -1, zi[:, k])`, whose rule it reuses backwards; the
# arguments' old values had no effect past their new ones (their held cotangents leave them).

from scipy.signal._sosfilt import _sosfilt  # noqa: E402


def _sections(sos, x, zi):
    steps, u = [], x
    for k in range(sos.shape[0]):
        b, a, z = sos[k, :3], sos[k, 3:], zi[:, k, :]
        y, zf = _sigtools._linear_filter(b, a, u, -1, z)
        steps.append((b, a, u, z, y, zf))
        u = y
    return steps


def sosfilt_inplace(sos, x, zi):
    if any(is_dual(v) for v in (sos, x, zi)):
        raise unsupported("scipy.signal.sosfilt", "second derivatives (dual arguments)",
                          "differentiate it once, or filter with lfilter per section")
    _check_real(sos, x, zi)
    old_x, old_zi = x.copy(), zi.copy()
    sos_ = np.asarray(sos, dtype=float)
    steps = _sections(sos_, old_x, old_zi)
    _sosfilt(sos, x, zi)

    def back(S, dy, dself):
        from .scipy_ppoly import _restore
        _restore(S, x, old_x)
        _restore(S, zi, old_zi)
        gx, gz = S.held(1), S.held(2)
        if gx is None and gz is None:
            return dself, (None, None, None)
        dsos = np.zeros(sos_.shape)
        dzi = np.zeros(old_zi.shape)
        g = None if gx is None else np.asarray(gx, dtype=float)
        for k in reversed(range(len(steps))):
            b, a, u, z, y, zf = steps[k]
            dzf = None if gz is None else np.asarray(gz, dtype=float)[:, k, :]
            db, da, du, _, dz = linear_filter_adjoint((g, dzf), (y, zf), b, a, u, -1, z)
            dsos[k, :3] += 0.0 if db is None else db
            dsos[k, 3:] += 0.0 if da is None else da
            if dz is not None:
                dzi[:, k, :] = dz
            g = du
        dx = np.zeros(old_x.shape) if g is None else g
        return dself, (match_primal(dsos, sos), dx - (0.0 if gx is None else gx),
                       dzi - (0.0 if gz is None else gz))
    return None, back


registry.set(_sosfilt, inplace=sosfilt_inplace, writes=1)


def sosfilt_frule(tangents, sos, x, zi):
    """Writes x and zi (the filtered signal, the final states); returns (None, (their tangents)): the
    cascade of the sections' lfilter tangents, each section's input tangent the last one's output's."""
    ts, tx, tz = (tuple(tangents) + (None,) * 3)[:3]
    sos_ = np.asarray(sos, dtype=float)
    u, tu = np.array(x, dtype=float), tx
    zf_tangent = None
    if any(t is not None for t in (ts, tx, tz)):
        _check_real(sos, x, zi, ts, tx, tz)
        zf_tangent = np.zeros(np.shape(zi))
        for k in range(sos_.shape[0]):
            tb = None if ts is None else np.asarray(ts)[k, :3]
            ta = None if ts is None else np.asarray(ts)[k, 3:]
            tzk = None if tz is None else np.asarray(tz)[:, k, :]
            (y, _), d = linear_filter_frule((tb, ta, tu, None, tzk), sos_[k, :3], sos_[k, 3:], u, -1,
                                            np.asarray(zi)[:, k, :])
            dy, dzf = d if d is not None else (None, None)
            if dzf is not None:
                zf_tangent[:, k, :] = dzf
            u, tu = y, dy
    # (the kernel's own values; forward mode's copy of scipy's C-ordered one may be a view)
    xc, zc = np.ascontiguousarray(x), np.ascontiguousarray(zi)
    _sosfilt(np.ascontiguousarray(sos), xc, zc)
    if xc is not x:
        x[...] = xc
    if zc is not zi:
        zi[...] = zc
    if tu is None and zf_tangent is None:
        return None, None
    return None, (tu, zf_tangent)


registry.frule(_sosfilt)(sosfilt_frule)
registry.set_kind(registry.get(_sosfilt).kind, _sosfilt, writes_also=(2,))  # (zi: the final states)


def sosfilt_public_frule(tangents, sos, x, axis=-1, zi=None):
    """Forward rule of `scipy.signal.sosfilt` itself. Its Python filters a fresh copy of x in place, an array
    forward mode holds no tangent for (the kernel's rule writing a derivative into it was refused), and checks
    `sos[:, 3] == 1`, a constant 1 whose rate (an exact 0, from the inputs) was judged a special case (obspy's
    lowpass in its cutoff frequency). Here scipy runs on the values and the kernel's rule on its layout: x's
    axis last, one row per signal, zi as (rows, sections, 2)."""
    ts, tx, _, tz = (tuple(tangents) + (None,) * 4)[:4]
    y = _scipy_signal.sosfilt(sos, x, axis=axis, zi=zi)
    if ts is None and tx is None and tz is None:
        return y, None
    sos_ = np.asarray(sos, dtype=float)
    x_ = np.asarray(x, dtype=float)
    ax = axis % x_.ndim
    moved = np.moveaxis(x_, ax, -1)
    rows = int(np.prod(moved.shape[:-1]))

    def signal_layout(v):
        return None if v is None else np.array(np.moveaxis(np.asarray(v, dtype=float), ax, -1).reshape(rows, -1))

    def state_layout(v):  # ((sections, ..., 2 at the axis, ...) -> (rows, sections, 2))
        v = np.moveaxis(np.asarray(v, dtype=float), (0, ax + 1), (-2, -1))
        return np.array(v.reshape(rows, sos_.shape[0], 2))

    states = np.zeros((rows, sos_.shape[0], 2)) if zi is None else state_layout(zi)
    _, out = sosfilt_frule((ts, signal_layout(tx), None if tz is None else state_layout(tz)), sos_,
                           signal_layout(x_), states)
    tu, tzf = out if out is not None else (None, None)
    ty = np.zeros(moved.shape) if tu is None else np.asarray(tu).reshape(moved.shape)
    ty = np.moveaxis(ty, -1, ax)
    if zi is None:
        return y, ty
    zi_moved = np.moveaxis(np.asarray(zi, dtype=float), (0, ax + 1), (-2, -1))
    tzf = np.zeros(zi_moved.shape) if tzf is None else np.asarray(tzf).reshape(zi_moved.shape)
    return y, (ty, np.moveaxis(tzf, (-2, -1), (0, ax + 1)))


registry.frule(_scipy_signal.sosfilt)(sosfilt_public_frule)


# -- upfirdn: the Cython `_upfirdn_apply._apply(x, h_trans_flip, out, up, down, axis, mode, cval)` ------------
# (upfirdn, resample_poly, decimate's FIR path) writes out, linear in x (every extension mode: 'constant',
# 'symmetric', 'reflect', 'edge', 'wrap', 'smooth', 'line', 'antisymmetric', 'antireflect' extend x
# linearly), in the transformed filter and in cval. The map's matrix along the axis is built by the kernel
# itself on blocks of the identity (O(len(x) * len(out))), as scipy.ndimage's line filters' is.

from scipy.signal._upfirdn_apply import _apply as _upfirdn  # noqa: E402

_UPFIRDN_BLOCK = 512
_UPFIRDN_CONSTANT = 0  # (`_upfirdn._check_mode('constant')`: the only mode using cval)


def _upfirdn_run(x, h, up, down, axis, mode, cval, m):
    """The kernel on x (float) into a new array with m samples along axis."""
    x = np.ascontiguousarray(x, dtype=float)
    shape = list(x.shape)
    shape[axis] = m
    out = np.zeros(shape)
    _upfirdn(x, np.ascontiguousarray(h, dtype=float), out, up, down, axis, mode, cval)
    return out


def _upfirdn_transposed(h, up, down, axis, mode, d, n):
    """A^T d along axis, A the (m x n) map of one line (cval 0), built in blocks of identity columns."""
    d = np.moveaxis(np.asarray(d, dtype=float), axis, 0)
    m = d.shape[0]
    flat = d.reshape(m, -1)
    out = np.empty((n, flat.shape[1]))
    eye = np.eye(n)
    for j in range(0, n, _UPFIRDN_BLOCK):
        columns = _upfirdn_run(eye[:, j:j + _UPFIRDN_BLOCK], h, up, down, 0, mode, 0.0, m)  # A[:, j:j+b]
        out[j:j + _UPFIRDN_BLOCK] = columns.T @ flat
    return np.moveaxis(out.reshape((n,) + d.shape[1:]), 0, axis)


def _upfirdn_effects(x, h, up, down, axis, mode, m):
    """d out / d h_k for each k: the kernel with a unit filter (cval 0: cval's part does not move with h)."""
    hs = np.asarray(h, dtype=float)
    for k in range(hs.size):
        unit = np.zeros(hs.shape)
        unit.flat[k] = 1.0
        yield _upfirdn_run(x, unit, up, down, axis, mode, 0.0, m)


def upfirdn_inplace(x, h, out, up, down, axis, mode, cval):
    name = "scipy.signal.upfirdn"
    if any(is_dual(v) for v in (x, h, out, cval)):
        raise unsupported(name, "second derivatives (dual arguments)", "differentiate it once")
    _check_real(x, h, out)
    old = out.copy()
    values = np.array(x, dtype=float)
    _upfirdn(x, h, out, up, down, axis, mode, cval)

    def cotangents(d):
        m, n = d.shape[axis], values.shape[axis]
        dx = _upfirdn_transposed(h, up, down, axis, mode, d, n)
        dh = None
        if np.asarray(h).dtype.kind == "f":
            dh = match_primal(np.array([np.sum(d * e) for e in _upfirdn_effects(values, h, up, down, axis, mode, m)]
                                       ).reshape(np.shape(h)), h)
        dcval = None
        if mode == _UPFIRDN_CONSTANT and isinstance(cval, float):
            dcval = float(np.sum(d * _upfirdn_run(np.zeros(values.shape), h, up, down, axis, mode, 1.0, m)))
        return match_primal(dx, x), dh, -d, None, None, None, None, dcval
    from .scipy_ppoly import written_back
    return None, written_back(out, old, 2, 8, cotangents)


def upfirdn_frule(tangents, x, h, out, up, down, axis, mode, cval):
    """Writes out; returns (None, its tangent)."""
    values = np.array(x, dtype=float)
    written = np.ascontiguousarray(out)  # (forward mode's copies of scipy's C-ordered arrays may be views)
    _upfirdn(np.ascontiguousarray(x), np.ascontiguousarray(h), written, up, down, axis, mode, cval)
    if written is not out:
        out[...] = written
    tx, th, _, _, _, _, _, tc = (tuple(tangents) + (None,) * 8)[:8]
    if tx is None and th is None and tc is None:
        return None, None
    _check_real(x, h, tx, th)
    m = np.shape(out)[axis]
    dy = np.zeros(np.shape(out))
    if tx is not None:
        dy = dy + _upfirdn_run(tx, h, up, down, axis, mode, 0.0, m)
    if th is not None:
        dy = dy + _upfirdn_run(values, th, up, down, axis, mode, 0.0, m)
    if tc is not None and mode == _UPFIRDN_CONSTANT:
        dy = dy + tc * _upfirdn_run(np.zeros(values.shape), h, up, down, axis, mode, 1.0, m)
    return None, dy.astype(np.result_type(out.dtype, float), copy=False)


registry.set(_upfirdn, inplace=upfirdn_inplace, writes=2)
registry.frule(_upfirdn)(upfirdn_frule)


# -- _sigtools._convolve2d(in1, in2, flip, mode, boundary, fillvalue): scipy.signal.convolve2d / correlate2d ---
# Bilinear in the two arrays (real ones; zero fill at the boundary, the default): forward, the kernel on each
# tangent in turn; reverse, through the full convolution, of which 'same' and 'valid' are the centred part:
# a_bar = corr(g_full, b, 'valid'), b_bar = corr(g_full, a, 'valid'). A correlation (flip = 0) is the
# convolution by the flipped second array. Other boundaries and fill values are refused by name.

_convolve2d = getattr(_sigtools, "_convolve2d", None)


def _conv2d_checked(in1, in2, mode, boundary, fillvalue):
    _check_real(in1, in2)
    if boundary != 0 or fillvalue != 0:
        raise unsupported("scipy.signal.convolve2d", "a boundary other than zero fill",
                          "pad the array yourself (np.pad), then convolve with mode='valid'")
    if mode == 0 and any(p < q for p, q in zip(np.shape(in1), np.shape(in2))):
        raise unsupported("scipy.signal.convolve2d", "mode='valid' with the second array the larger",
                          "swap the arguments")


def convolve2d_frule(tangents, in1, in2, flip, mode, boundary=0, fillvalue=0):
    y = _convolve2d(in1, in2, flip, mode, boundary, fillvalue)
    ta, tb = (tuple(tangents) + (None, None))[:2]
    if ta is None and tb is None:
        return y, None
    _conv2d_checked(in1, in2, mode, boundary, fillvalue)
    dy = np.zeros_like(y)
    if ta is not None:
        dy = dy + _convolve2d(np.asarray(ta, dtype=y.dtype), in2, flip, mode, boundary, fillvalue)
    if tb is not None:
        dy = dy + _convolve2d(in1, np.asarray(tb, dtype=y.dtype), flip, mode, boundary, fillvalue)
    return y, dy


def convolve2d_adjoint(dy, y, in1, in2, flip, mode, boundary=0, fillvalue=0):
    if dy is None:
        return (None,) * 6
    _conv2d_checked(in1, in2, mode, boundary, fillvalue)
    a = np.asarray(in1, dtype=float)
    b = np.asarray(in2, dtype=float)
    kernel = b if flip else b[::-1, ::-1]
    full = tuple(p + q - 1 for p, q in zip(a.shape, b.shape))
    g = np.asarray(dy, dtype=float)
    # ('same': centred, the odd cell before for a convolution, after for a correlation, as scipy's C places it)
    start = [0, 0] if mode == 2 else [(f - n + (0 if flip else 1)) // 2 for f, n in zip(full, g.shape)]
    if mode == 0:
        start = [q - 1 for q in b.shape]
    g_full = np.zeros(full)
    g_full[start[0]:start[0] + g.shape[0], start[1]:start[1] + g.shape[1]] = g
    da = _convolve2d(g_full, kernel, 0, 0, 0, 0)  # (correlation, 'valid': a's shape)
    dk = _convolve2d(g_full, a, 0, 0, 0, 0)  # (the kernel's shape)
    db = dk if flip else dk[::-1, ::-1]
    return match_primal(da, in1), match_primal(db, in2), None, None, None, None


if _convolve2d is not None:
    registry.adjoint(_convolve2d)(convolve2d_adjoint)
    registry.frule(_convolve2d)(convolve2d_frule)
    registry.sparsity(DENSE, _convolve2d)  # (conservative)
