"""Rules for the C kernel under scipy.interpolate's B-splines, `_dierckx.evaluate_spline` (BSpline, and so
the splines make_interp_spline and make_lsq_spline return). Its derivative in the evaluation points is the
spline's derivative (the kernel itself, one order up); in the coefficients it is linear (the weights are
the kernel applied to unit coefficients, so intervals and extrapolation are scipy's own); the knots have no
derivative here and are refused (`registry.NoClosedForm`). Importing it without scipy installed raises
ImportError, which `contexts.rules.numpy` tolerates.

Not here: `_ppoly.evaluate` (PPoly, CubicSpline, Akima, PCHIP), in `scipy_ppoly`.
"""

from __future__ import annotations

import numpy as np
from scipy.interpolate import _dierckx, _ppoly

from ..registry import NoClosedForm, registry
from ..sparsity_specs import DENSE
from ._util import match_primal, unsupported

__all__: list[str] = []


def _real(name, *arrays):
    if any(np.iscomplexobj(a) for a in arrays):
        raise unsupported(name, "complex coefficients", "split real and imaginary parts")


# -- _dierckx.evaluate_spline(t, c, k, xp, nu, extrapolate) -> out (s, m) ---------------------------------

_KNOTS = NoClosedForm("scipy.interpolate.BSpline (_dierckx.evaluate_spline)", "t (the knots)", 0)


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
