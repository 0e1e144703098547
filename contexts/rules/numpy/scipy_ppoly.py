"""Rules for the C kernels under scipy.interpolate's piecewise polynomials in the power basis (PPoly, and so
CubicSpline, PchipInterpolator, Akima1DInterpolator, PPoly.from_spline): `_ppoly.evaluate` (their
`__call__`), `_ppoly.integrate` (`.integrate(a, b)`) and `_ppoly.fix_continuity` (`.antiderivative()`).
Importing it without scipy installed raises ImportError, which `contexts.rules.numpy` tolerates.

`evaluate(c, x, xp, dx, extrapolate, out)` writes into `out` (shape (len(xp), n)). Its rules are in place
ones: the reverse pass restores out's old values, takes the cotangent the caller holds for out (all of out
was overwritten: its old values get none) and hands it to c and xp. In the coefficients c the kernel is
linear: the weights are the kernel applied to unit coefficients, so intervals, extrapolation and the NaNs
outside are scipy's own. In the points xp the derivative is the kernel one order up (`dx + 1`). The
breakpoints x have no derivative here and are refused (`registry.NoClosedForm`), as BSpline's knots.

`integrate(c, x, a, b, extrapolate, out)` is linear in c (weights: the kernel on unit coefficients); in
the bounds its derivative is the integrand there (`evaluate` at b, minus at a). `fix_continuity(c, x,
order)` changes c in place, linearly: its transpose is the kernel applied to unit coefficients, transposed.

>>> import numpy as np
>>> from scipy.interpolate import CubicSpline
>>> from contexts import gradient
>>> xs = np.linspace(0.0, 3.0, 7)
>>> round(float(gradient(lambda t: CubicSpline(xs, np.sin(xs))(t), 1.3)[0]), 3)
0.267
"""

from __future__ import annotations

import operator

import numpy as np
from scipy.interpolate import _ppoly

from ..registry import NoClosedForm, registry
from ..sparsity_specs import DENSE
from ._util import match_primal, unsupported

__all__: list[str] = []

_NAME = "scipy.interpolate.PPoly (_ppoly.evaluate)"
_BREAKPOINTS = NoClosedForm(_NAME, "x (the breakpoints)", 1)


def _real(name, *arrays):
    if any(np.iscomplexobj(a) for a in arrays):
        raise unsupported(name, "complex coefficients", "split real and imaginary parts")


def _unit_coefficients(c):
    """Coefficients of c's shape (k, m, ·) with one column per coefficient (k * m of them), each a unit one:
    the kernel on them gives the weight of every coefficient (the kernel is linear in c)."""
    k, m = c.shape[:2]
    return np.ascontiguousarray(np.eye(k * m).reshape(k, m, k * m))


def _restore(S, arr, old):
    """arr's values before the call, for the adjoints before it; its new ones back after the pass."""
    new = arr.copy()
    arr[...] = old
    S.redo(operator.setitem, arr, Ellipsis, new)


def _breakpoints_cotangent(x):
    return _BREAKPOINTS.cotangent() if np.asarray(x).dtype.kind in "fc" else None


# -- _ppoly.evaluate(c, x, xp, dx, extrapolate, out): writes out (len(xp), n) ----------------------------------

def _evaluated(c, x, xp, dx, extrapolate):
    out = np.empty((len(xp), c.shape[2]), dtype=c.dtype)
    _ppoly.evaluate(c, x, xp, dx, extrapolate, out)
    return out


def _weights(c, x, xp, dx, extrapolate):
    """(len(xp), k * m): the weight of each coefficient in the value at each point (zero outside, where
    the kernel gives NaN whatever c is)."""
    return np.nan_to_num(_evaluated(_unit_coefficients(c), x, xp, dx, extrapolate))


def _slope(c, x, xp, dx, extrapolate):
    """The values' derivative in the points: the kernel one order up (zero outside, where it is NaN)."""
    return np.nan_to_num(_evaluated(c, x, xp, dx + 1, extrapolate))


def _intervals(x, xp, extrapolate):
    """The interval of each point, as the kernel finds it (-1 outside, where it gives NaN)."""
    index = np.arange(len(x) - 1, dtype=float).reshape(1, -1, 1)
    found = _evaluated(np.ascontiguousarray(index), x, xp, 0, extrapolate)[:, 0]
    return np.where(np.isfinite(found), found, -1).astype(np.intp)


def _per_interval(g, x, xp, extrapolate):
    """The breakpoints' cotangent for g per point: each point's g goes to the left breakpoint of its
    interval."""
    i = _intervals(x, xp, extrapolate)
    inside = i >= 0
    return np.bincount(i[inside], weights=g[inside], minlength=len(x)).astype(float)


def evaluate_inplace(c, x, xp, dx, extrapolate, out):
    old = out.copy()
    _ppoly.evaluate(c, x, xp, dx, extrapolate, out)

    def evaluate_back(S, dy, dself):
        _restore(S, out, old)
        d = S.held(5)
        if d is None:
            return dself, (None,) * 6
        _real(_NAME, c, d)
        d = np.asarray(d, dtype=float)
        d0 = np.where(np.isfinite(d), d, 0.0)
        c_ = np.asarray(c, dtype=float)
        dc = (_weights(c_, x, xp, dx, extrapolate).T @ d0).reshape(c_.shape)
        dxp = np.sum(d0 * _slope(c_, x, xp, dx, extrapolate), axis=1)
        # the value at a point of interval i is its polynomial in xp - x[i]: x[i] moves it as -xp does
        dbreak = _per_interval(-dxp, x, xp, extrapolate) if np.asarray(x).dtype.kind == "f" else None
        # out was overwritten whole: the cotangent it held leaves it (its old values had no effect)
        return dself, (match_primal(dc, c), dbreak, match_primal(dxp, xp), None, None, -d)
    return None, evaluate_back


registry.set(_ppoly.evaluate, inplace=evaluate_inplace, writes=5)


# -- _ppoly.integrate(c, x, a, b, extrapolate, out): out (n,) = the integral from a to b ------------------------
# (PPoly.integrate passes `out=`: reverse mode computes it into a new array, `impl`, and copies it there)

_INTEGRATE = "scipy.interpolate.PPoly.integrate (_ppoly.integrate)"


def _integrated(c, x, a, b, extrapolate, out=None):
    """_ppoly.integrate into a new array (the kernel requires its output)."""
    y = np.empty(c.shape[2], dtype=c.dtype)
    _ppoly.integrate(c, x, a, b, extrapolate, y)
    return y


def _piece_at(c, x, j, t):
    """(n,): the polynomials of interval j at the point t (in the local variable t - x[j])."""
    powers = (t - x[j]) ** np.arange(c.shape[0] - 1, -1, -1, dtype=float)
    return powers @ c[:, j, :]


def _bounds_partials(c, x, a, b, extrapolate):
    """The integral's partial derivatives (each (n,)) in a, b and every breakpoint. Interval j covers
    [L, R] = [max(a, lo), min(b, hi)], its integral Q(R - x[j]) - Q(L - x[j]); lo, hi are its breakpoints
    (unbounded at the ends when extrapolating): moving x[j] shifts the local variable and, where it is
    the bound, the interval's end."""
    m = c.shape[1]
    da, db = np.zeros(c.shape[2]), np.zeros(c.shape[2])
    dx = np.zeros((len(x), c.shape[2]))
    for j in range(m):
        lo = -np.inf if extrapolate and j == 0 else x[j]
        hi = np.inf if extrapolate and j == m - 1 else x[j + 1]
        left, right = max(a, lo), min(b, hi)
        if not left < right:
            continue
        at_left, at_right = _piece_at(c, x, j, left), _piece_at(c, x, j, right)
        dx[j] += at_left - at_right  # the shift of the local variable
        if a >= lo:
            da -= at_left
        else:
            dx[j] -= at_left
        if b <= hi:
            db += at_right
        else:
            dx[j + 1] += at_right
    return da, db, dx


def _check_integrate(c, x, a, b):
    _real(_INTEGRATE, c)
    if len(x) > 1 and x[-1] < x[0]:
        raise unsupported(_INTEGRATE, "decreasing breakpoints", "give the breakpoints in increasing order")


def integrate_adjoint(dy, y, c, x, a, b, extrapolate, *rest):
    if dy is None:
        return (None,) * (5 + len(rest))
    c_, x_ = np.asarray(c, dtype=float), np.asarray(x, dtype=float)
    _check_integrate(c, x_, a, b)
    d = np.asarray(dy, dtype=float)
    if not np.all(np.isfinite(y)):  # outside the breakpoints without extrapolation: NaN whatever the inputs
        d = np.zeros_like(d)
    weights = np.nan_to_num(_integrated(_unit_coefficients(c_), x_, a, b, extrapolate))  # (k * m,)
    dc = np.multiply.outer(weights, d).reshape(c_.shape)
    da, db, dbreak = _bounds_partials(c_, x_, float(a), float(b), extrapolate)
    dbreak = dbreak @ d if np.asarray(x).dtype.kind == "f" else None
    return (match_primal(dc, c), dbreak, float(da @ d), float(db @ d), None) + (None,) * len(rest)


def integrate_frule(tangents, c, x, a, b, extrapolate, *rest):
    y = _integrated(c, x, a, b, extrapolate)
    tc, tx, ta, tb = (tuple(tangents) + (None,) * 4)[:4]
    if all(t is None for t in (tc, tx, ta, tb)):
        return y, None
    c_, x_ = np.asarray(c, dtype=float), np.asarray(x, dtype=float)
    _check_integrate(c, x_, a, b)
    dy = np.zeros(y.shape)
    if tc is not None:
        dy = dy + _integrated(np.ascontiguousarray(tc, dtype=float), x_, a, b, extrapolate)
    if tx is not None or ta is not None or tb is not None:
        da, db, dbreak = _bounds_partials(c_, x_, float(a), float(b), extrapolate)
        dy = dy + (0 if ta is None else da * ta) + (0 if tb is None else db * tb)
        dy = dy + (0 if tx is None else np.asarray(tx, dtype=float) @ dbreak)
    return y, np.where(np.isfinite(y), dy, 0.0)


registry.adjoint(_ppoly.integrate)(integrate_adjoint)
registry.frule(_ppoly.integrate)(integrate_frule)
registry.set(_ppoly.integrate, impl=_integrated)
registry.sparsity(DENSE, _ppoly.integrate)
