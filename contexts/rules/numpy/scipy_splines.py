"""Rules for the C kernel under scipy.interpolate's B-splines, `_dierckx.evaluate_spline` (BSpline, and so
the splines make_interp_spline and make_lsq_spline return). Its derivative in the evaluation points is the
spline's derivative (the kernel itself, one order up); in the coefficients it is linear (the weights are
the kernel applied to unit coefficients, so intervals and extrapolation are scipy's own); the knots have no
derivative here and are refused (`registry.NoClosedForm`). Importing it without scipy installed raises
ImportError, which `contexts.rules.numpy` tolerates.

Also here: `_dierckx._coloc` (make_interp_spline's collocation matrix, written in place; sites and knots
refused) and FITPACK's `splev`/`splder` (splev, PPoly.from_spline; linear in c, knots refused), from
scipy 1.17's `_dfitpack` or 1.18's `_fitpack` (whose splder takes nu before x). make_interp_spline(x, y) is
differentiated in y with x constant (the knots' refused cotangent is dropped at the constant sites), and
refused in x. And FITPACK's bivariate kernels (bispev, parder, bispeu, pardeu: bisplev and the
BivariateSplines' `__call__`), in the sites and the coefficients.

Not here: `_ppoly.evaluate` (PPoly, CubicSpline, Akima, PCHIP), in `scipy_ppoly`.
"""

from __future__ import annotations

import numpy as np
from scipy.interpolate import _dierckx

try:  # scipy <= 1.17: f2py's splev(t, c, k, x, e), splder(t, c, k, x, nu, e)
    from scipy.interpolate import _dfitpack as _fitpack
    _SPLDER_NU_FIRST = False
except ImportError:  # scipy 1.18: splev(t, c, k, x, e), splder(t, c, k, nu, x, e)
    from scipy.interpolate import _fitpack
    _SPLDER_NU_FIRST = True

from ..registry import NoClosedForm, registry
from ..sparsity_specs import DENSE
from ._util import bind, match_primal, unsupported

__all__: list[str] = []


def _real(name, *arrays):
    if any(np.iscomplexobj(a) for a in arrays):
        raise unsupported(name, "complex coefficients", "split real and imaginary parts")


# -- _dierckx.evaluate_spline(t, c, k, xp, nu, extrapolate) -> out (s, m) ---------------------------------

# Reverse mode may follow knots the user keeps constant: make_interp_spline builds them from the sites, and
# scipy passes them along with the data (array-API conversions, `(t, c, k)` tuples, splantider)
_SPLINE_FIX = ("keep the knots out of what is differentiated. Reverse mode follows knots computed along with "
               "the data even when they are constant (make_interp_spline builds them from the sites; "
               "BSpline.integrate passes them with the coefficients): for make_interp_spline(x, y) (k=3) use "
               "CubicSpline(x, y), the same not-a-knot cubic, which is differentiated in x and y; for a BSpline "
               "with fixed knots t, evaluate `BSpline.design_matrix(x, t, k).toarray() @ c` (and solve with that matrix "
               "for interpolation)")
_KNOTS = NoClosedForm("scipy.interpolate.BSpline (_dierckx.evaluate_spline)", "t (the knots)", 0, fix=_SPLINE_FIX)


def _bspline_slope(t, c, k, xp, nu, extrapolate):
    if nu + 1 > k:  # a piecewise constant derivative: zero between the knots
        return np.zeros((len(xp), c.shape[1]))
    return _dierckx.evaluate_spline(t, c, k, xp, nu + 1, extrapolate)


def evaluate_spline_adjoint(dy, y, t, c, k, xp, nu, extrapolate, *rest):
    if dy is None:
        return (None,) * (6 + len(rest))
    d = np.asarray(dy, dtype=float)
    _real("scipy.interpolate.BSpline", c, d)
    c_ = np.asarray(c, dtype=float)
    basis = np.nan_to_num(_dierckx.evaluate_spline(t, np.eye(c_.shape[0]), k, xp, nu, extrapolate))  # (s, n)
    d0 = np.where(np.isfinite(d), d, 0.0)
    dc = basis.T @ d0
    dxp = np.sum(d0 * np.nan_to_num(_bspline_slope(t, c_, k, xp, nu, extrapolate)), axis=1)
    dt = _KNOTS.cotangent() if np.asarray(t).dtype.kind in "fc" else None
    return (dt, match_primal(dc, c), None, match_primal(dxp, xp), None, None) + (None,) * len(rest)


def evaluate_spline_frule(tangents, t, c, k, xp, nu, extrapolate, *rest):
    y = _dierckx.evaluate_spline(t, c, k, xp, nu, extrapolate, *rest)
    tt, tc, _, txp = (tuple(tangents) + (None,) * 4)[:4]
    if _KNOTS.refuses(tt, t):
        raise _KNOTS.error()
    if tc is None and txp is None:
        return y, None
    _real("scipy.interpolate.BSpline", c)
    dy = np.zeros(y.shape)
    if tc is not None:
        dy = dy + _dierckx.evaluate_spline(t, np.asarray(tc, dtype=float), k, xp, nu, extrapolate)
    if txp is not None:
        dy = dy + _bspline_slope(t, np.asarray(c, dtype=float), k, xp, nu, extrapolate) * np.asarray(txp)[:, None]
    return y, dy


registry.adjoint(_dierckx.evaluate_spline)(evaluate_spline_adjoint)
registry.frule(_dierckx.evaluate_spline)(evaluate_spline_frule)
registry.sparsity(DENSE, _dierckx.evaluate_spline)


# -- _dierckx._coloc(x, t, k, ab, offset): the collocation matrix B[j, l] = B_l(x[j]) written into ab ------------
# (make_interp_spline, in LAPACK's band storage). It depends on the sites and the knots only: their
# cotangents are refused (`NoClosedForm`: the knots' derivative is not known here, and make_interp_spline
# builds them from the sites by `np.r_`); ab's entries it writes lose the cotangent they held.

_SITES = NoClosedForm("scipy.interpolate.make_interp_spline (_dierckx._coloc)", "x (the data sites)", 0,
                      fix=_SPLINE_FIX)
_COLOC_KNOTS = NoClosedForm("scipy.interpolate.make_interp_spline (_dierckx._coloc)", "t (the knots)", 1,
                            fix=_SPLINE_FIX)


def coloc_inplace(x, t, k, ab, *rest):
    old = ab.copy()
    _dierckx._coloc(x, t, k, ab, *rest)

    def coloc_back(S, dy, dself):
        new = ab.copy()
        ab[...] = old
        S.redo(_setall, ab, new)
        d = S.held(3)
        if d is None:
            return dself, (None,) * (4 + len(rest))
        probe = np.full(ab.shape, np.nan)
        _dierckx._coloc(x, t, k, probe, *rest)
        written = ~np.isnan(probe)
        dx = _SITES.cotangent() if np.asarray(x).dtype.kind in "fc" else None
        dt = _COLOC_KNOTS.cotangent() if np.asarray(t).dtype.kind in "fc" else None
        return dself, (dx, dt, None, -np.where(written, d, 0.0)) + (None,) * len(rest)
    return None, coloc_back


def _setall(a, values):
    a[...] = values


registry.set(_dierckx._coloc, inplace=coloc_inplace, writes=3)


# -- FITPACK's splev(t, c, k, x, e) and splder(t, c, k, x, nu, e) (scipy 1.18: splder(t, c, k, nu, x, e))
#    -> (y, ier): splev(x, tck, der), and so PPoly.from_spline. Linear in c (weights: the kernel on unit coefficients); in x the kernel one order up,
#    zero outside the base interval where the value is held constant there (e = 1: zeros; e = 3: splev's
#    boundary value, while splder extrapolates); the knots refused.

_FITPACK_KNOTS = NoClosedForm("scipy.interpolate.splev (FITPACK splev/splder)", "t (the knots)", 0, fix=_SPLINE_FIX)


def _fitpack_eval(t, c, k, x, nu, e):
    if nu == 0:
        y = _fitpack.splev(t, c, k, x, e)[0]
    else:
        y = (_fitpack.splder(t, c, k, nu, x, e) if _SPLDER_NU_FIRST else _fitpack.splder(t, c, k, x, nu, e))[0]
    return np.asarray(y, dtype=float)


def _fitpack_call(fn, args, kwargs):
    """(t, c, k, x, nu, e, the positions of t, c and x) of a call splev(t, c, k, x, [e]) or splder(t, c,
    k, x, [nu, e]) (scipy 1.18: splder(t, c, k, nu, x, [e]))."""
    if fn is _fitpack.splev:
        t, c, k, x = args[:4]
        return t, c, k, x, 0, int(bind(args[4:], kwargs, ("e",), (0,))[0]), (0, 1, 3)
    if _SPLDER_NU_FIRST:
        t, c, k, nu = args[:4]
        x, e = bind(args[4:], kwargs, ("x", "e"), (None, 0))
        return t, c, k, x, int(nu), int(e), (0, 1, 4)
    t, c, k, x = args[:4]
    nu, e = bind(args[4:], kwargs, ("nu", "e"), (1, 0))
    return t, c, k, x, int(nu), int(e), (0, 1, 3)


def _fitpack_slope(t, c, k, x, nu, e):
    x = np.asarray(x, dtype=float)
    if nu + 1 > k:
        return np.zeros(x.shape)
    slope = _fitpack_eval(t, c, k, x, nu + 1, e)
    if e == 1 or e == 3 and nu == 0:  # (splder extrapolates where e = 3)
        n = len(t) - k - 1
        slope = np.where((x >= t[k]) & (x <= t[n]), slope, 0.0)
    return slope


def _fitpack_adjoint(fn):
    def fitpack_adjoint(dy, y, *args, **kwargs):
        grads = [None] * len(args)
        d = None if dy is None else dy[0]
        if d is None:
            return tuple(grads)
        t, c, k, x, nu, e, (it, ic, ix) = _fitpack_call(fn, args, kwargs)
        d = np.asarray(d, dtype=float)
        c_ = np.asarray(c, dtype=float)
        basis = np.stack([_fitpack_eval(t, unit, k, x, nu, e) for unit in np.eye(len(c_))], axis=1)  # (m, nc)
        grads[ic] = match_primal(basis.T @ d, c)
        grads[ix] = match_primal(d * _fitpack_slope(t, c_, k, x, nu, e), x)
        grads[it] = _FITPACK_KNOTS.cotangent() if np.asarray(t).dtype.kind in "fc" else None
        return tuple(grads)
    return fitpack_adjoint


def _fitpack_frule(fn):
    def fitpack_frule(tangents, *args, **kwargs):
        y = fn(*args, **kwargs)
        t, c, k, x, nu, e, (it, ic, ix) = _fitpack_call(fn, args, kwargs)
        tangents = tuple(tangents) + (None,) * len(args)
        tt, tc, tx = tangents[it], tangents[ic], tangents[ix]
        if _FITPACK_KNOTS.refuses(tt, t):
            raise _FITPACK_KNOTS.error()
        if tc is None and tx is None:
            return y, None
        dy = np.zeros(np.shape(y[0]))
        if tc is not None:
            dy = dy + _fitpack_eval(t, np.asarray(tc, dtype=float), k, x, nu, e)
        if tx is not None:
            dy = dy + _fitpack_slope(t, np.asarray(c, dtype=float), k, x, nu, e) * np.asarray(tx, dtype=float)
        return y, (dy, None)
    return fitpack_frule


for _fn in (_fitpack.splev, _fitpack.splder):
    registry.adjoint(_fn)(_fitpack_adjoint(_fn))
    registry.frule(_fn)(_fitpack_frule(_fn))
    registry.sparsity(DENSE, _fn)


# -- FITPACK's bivariate kernels: bispev(tx, ty, c, kx, ky, x, y) and parder(tx, ty, c, kx, ky, nux, nuy, x,
#    y) on the grid x × y (bisplev, RectBivariateSpline and the other BivariateSplines' __call__), bispeu and
#    pardeu at the points (x[i], y[i]) (`grid=False`) -> (z, ier). The surface is sum C[p, q] Bx_p(x) By_q(y)
#    (C: c as an (nx-kx-1, ny-ky-1) array) with the sites clamped into the base rectangle (FITPACK's fpbisp),
#    so: linear in c (Bx^T dZ By); in x the kernel one order up in x (the basis's derivative: FITPACK's 1-D
#    splder, which also takes the order kx itself, a bilinear table's piecewise-constant slope), zero outside
#    the rectangle where the clamped value is constant; the knots refused.

_BIVARIATE_KNOTS = NoClosedForm("scipy.interpolate.bisplev (FITPACK bispev/parder)", "the knots (tx, ty)", 0,
                                fix=_SPLINE_FIX)


def _bivariate_kernels():
    """{kernel: (grid, has_orders)} of the installed scipy's FITPACK module(s)."""
    found = {}
    for module in {_fitpack, getattr(__import__("scipy.interpolate", fromlist=["_dfitpack"]), "_dfitpack", None)}:
        for name, grid, orders in (("bispev", True, False), ("parder", True, True), ("bispeu", False, False),
                                   ("pardeu", False, True)):
            fn = getattr(module, name, None)
            if fn is not None:
                found[fn] = (grid, orders)
    return found


_BIVARIATE = _bivariate_kernels()


def _bivariate_call(fn, args):
    """(tx, ty, c, kx, ky, nux, nuy, x, y, positions of tx, ty, c, x, y) of a call of a bivariate kernel."""
    _, orders = _BIVARIATE[fn]
    tx, ty, c, kx, ky = args[:5]
    if orders:
        nux, nuy, x, y = args[5:9]
        return tx, ty, c, int(kx), int(ky), int(nux), int(nuy), x, y, (0, 1, 2, 7, 8)
    x, y = args[5:7]
    return tx, ty, c, int(kx), int(ky), 0, 0, x, y, (0, 1, 2, 5, 6)


def _basis(t, k, x, nu):
    """(len(x), n) the n B-splines of degree k on knots t (or their nu-th derivatives) at x clamped into the
    base interval, as FITPACK's bivariate kernels clamp it; zero outside for nu > 0 of the clamp's slope
    (`slope=True`: the derivative of the clamped function is asked)."""
    t = np.asarray(t, dtype=float)
    n = len(t) - k - 1
    x = np.clip(np.asarray(x, dtype=float), t[k], t[n])
    if nu > k:
        return np.zeros((len(x), n))
    return np.stack([_fitpack_eval(t, unit, k, x, nu, 0) for unit in np.eye(len(t))[:n]], axis=1)


def _inside(t, k, x):
    t = np.asarray(t, dtype=float)
    x = np.asarray(x, dtype=float)
    return (x >= t[k]) & (x <= t[len(t) - k - 1])


def _bivariate_parts(fn, args):
    """(C, Bx, By, dBx, dBy, grid, positions): the coefficients as a matrix, the bases at the sites in the
    kernel's orders and one order up (zero outside the rectangle)."""
    tx, ty, c, kx, ky, nux, nuy, x, y, positions = _bivariate_call(fn, args)
    _real("scipy.interpolate.bisplev", c, x, y)
    C = np.asarray(c, dtype=float)[:(len(tx) - kx - 1) * (len(ty) - ky - 1)].reshape(len(tx) - kx - 1, -1)
    bx, by = _basis(tx, kx, x, nux), _basis(ty, ky, y, nuy)
    dbx = _basis(tx, kx, x, nux + 1) * _inside(tx, kx, x)[:, None]
    dby = _basis(ty, ky, y, nuy + 1) * _inside(ty, ky, y)[:, None]
    return C, bx, by, dbx, dby, _BIVARIATE[fn][0], positions


def _bivariate_adjoint(fn):
    def adjoint(dy, y, *args):
        grads = [None] * len(args)
        d = None if dy is None else dy[0]
        if d is None:
            return tuple(grads)
        C, bx, by, dbx, dby, grid, (itx, ity, ic, ix, iy) = _bivariate_parts(fn, args)
        d = np.asarray(d, dtype=float)
        if grid:
            d = d.reshape(bx.shape[0], by.shape[0])
            dc = bx.T @ d @ by
            dxs = np.sum(d * (dbx @ C @ by.T), axis=1)
            dys = np.sum(d * (bx @ C @ dby.T), axis=0)
        else:
            dc = (bx * d[:, None]).T @ by
            dxs = d * np.einsum("ip,pq,iq->i", dbx, C, by)
            dys = d * np.einsum("ip,pq,iq->i", bx, C, dby)
        c = args[ic]
        full = np.zeros(np.shape(c))
        full[:dc.size] = dc.ravel()
        grads[ic] = match_primal(full, c)
        grads[ix] = match_primal(dxs, args[ix])
        grads[iy] = match_primal(dys, args[iy])
        for i in (itx, ity):
            grads[i] = _BIVARIATE_KNOTS.cotangent() if np.asarray(args[i]).dtype.kind in "fc" else None
        return tuple(grads)
    adjoint.__name__ = adjoint.__qualname__ = f"{fn.__name__}_adjoint"
    return adjoint


def _bivariate_frule(fn):
    def frule(tangents, *args):
        y = fn(*args)
        tangents = tuple(tangents) + (None,) * len(args)
        _, _, _, _, _, _, _, _, _, (itx, ity, ic, ix, iy) = _bivariate_call(fn, args)
        for i in (itx, ity):
            if _BIVARIATE_KNOTS.refuses(tangents[i], args[i]):
                raise _BIVARIATE_KNOTS.error()
        tc, tx, ty = tangents[ic], tangents[ix], tangents[iy]
        if tc is None and tx is None and ty is None:
            return y, None
        C, bx, by, dbx, dby, grid, _ = _bivariate_parts(fn, args)
        dz = np.zeros(np.shape(y[0]))
        if grid:
            if tc is not None:
                dz = dz + bx @ np.asarray(tc, dtype=float)[:C.size].reshape(C.shape) @ by.T
            if tx is not None:
                dz = dz + (dbx @ C @ by.T) * np.asarray(tx, dtype=float)[:, None]
            if ty is not None:
                dz = dz + (bx @ C @ dby.T) * np.asarray(ty, dtype=float)[None, :]
        else:
            if tc is not None:
                dz = dz + np.einsum("ip,pq,iq->i", bx, np.asarray(tc, dtype=float)[:C.size].reshape(C.shape), by)
            if tx is not None:
                dz = dz + np.einsum("ip,pq,iq->i", dbx, C, by) * np.asarray(tx, dtype=float)
            if ty is not None:
                dz = dz + np.einsum("ip,pq,iq->i", bx, C, dby) * np.asarray(ty, dtype=float)
        return y, (dz.reshape(np.shape(y[0])), None)
    frule.__name__ = frule.__qualname__ = f"{fn.__name__}_frule"
    return frule


for _fn in _BIVARIATE:
    registry.adjoint(_fn)(_bivariate_adjoint(_fn))
    registry.frule(_fn)(_bivariate_frule(_fn))
    registry.sparsity(DENSE, _fn)
