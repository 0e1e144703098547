"""Rules for the C kernels under scipy.interpolate's piecewise polynomials in the power basis (PPoly, and so
CubicSpline, PchipInterpolator, Akima1DInterpolator, PPoly.from_spline) and in the Bernstein basis (BPoly):
`_ppoly.evaluate` and `evaluate_bernstein` (their `__call__`), `_ppoly.integrate` (`.integrate(a, b)`) and
`_ppoly.fix_continuity` (`.antiderivative()`).
Importing it without scipy installed raises ImportError, which `contexts.rules.numpy` tolerates.

`evaluate(c, x, xp, dx, extrapolate, out)` writes into `out` (shape (len(xp), n)): an in-place rule that
declares the argument it writes (`Rule.writes`), so reverse mode's generated code merges the cotangents of
variables viewing it. The reverse pass restores out's old values and hands the cotangent the caller holds
for out (all of it overwritten: its old values get none) to c, xp and x. In the coefficients c the kernel
is linear: the weights are the kernel on unit coefficients, so intervals, extrapolation and the NaNs
outside are scipy's own. In the points xp the derivative is the kernel one order up (`dx + 1`). The value
at a point of interval i is a polynomial in xp - x[i]: breakpoint x[i] moves it as -xp does (the interval
a point falls in is piecewise constant). `evaluate_bernstein` is the same, but for the breakpoints: its
polynomials are in s = (xp - x[i]) / (x[i+1] - x[i]), moved by both ends of the interval.

`integrate(c, x, a, b, extrapolate, out)` is linear in c (weights: the kernel on unit coefficients); in a
bound its derivative is the integrand there; a breakpoint both shifts its interval's local variable and
bounds the intervals beside it. `fix_continuity(c, x, order)` (`.antiderivative()`) changes c in place:
for each interval from the left it sets the low coefficients from the previous interval's polynomial at
h = x[i] - x[i-1], a recurrence linear in c whose pullback runs from the right.

Forward mode: the frules of the two kernels that write into an array they are given run the kernel and
return that array's tangent after the call (the same math as the reverse rules: the kernel on c's tangent,
one order up for the points, the breakpoints' shift); forward mode writes it into the dual's tangent or
hands it back to the caller (`Rule.writes`). Forward over reverse (hessian) is refused: the in-place
rules do not run on duals. Complex coefficients are refused (split real and imaginary parts).

>>> import numpy as np
>>> from scipy.interpolate import CubicSpline
>>> from contexts import gradient
>>> xs = np.linspace(0.0, 3.0, 7)
>>> round(float(gradient(lambda t: CubicSpline(xs, np.sin(xs))(t), 1.3)[0]), 3)
0.268
"""

from __future__ import annotations

import math
import operator

import numpy as np
from scipy.interpolate import _ppoly

from ..registry import MissingRule, registry
from ..sparsity_specs import DENSE
from ._util import is_dual, match_primal, unsupported

__all__: list[str] = []



def _real(name, *arrays):
    if any(np.iscomplexobj(a) for a in arrays):
        raise unsupported(name, "complex coefficients", "split real and imaginary parts")


def _unit_orders(c):
    """Coefficients of c's shape (k, m, k): column q has coefficient q of every interval 1, the others 0.
    The kernel on them gives, at each point, the weight of coefficient q of the point's own interval (the
    kernels are linear in c, and a point reads its interval only)."""
    k, m = c.shape[:2]
    return np.ascontiguousarray(np.broadcast_to(np.eye(k)[:, None, :], (k, m, k)))


def _restore(S, arr, old):
    """arr's values before the call, for the adjoints before it; its new ones back after the pass."""
    new = arr.copy()
    arr[...] = old
    S.redo(operator.setitem, arr, Ellipsis, new)


def written_back(out, old, position, nargs, cotangents):
    """The back of an in-place rule whose kernel overwrote its output argument (at `position` among
    `nargs`): the output's old values restored for the adjoints before it (its new ones back after the
    pass), then `cotangents(d)`, the arguments' cotangents for the cotangent d held for the output after
    the call (a float array); None each when none is held."""
    def back(S, dy, dself):
        _restore(S, out, old)
        d = S.held(position)
        if d is None:
            return dself, (None,) * nargs
        return dself, cotangents(np.asarray(d, dtype=float))
    return back


# -- _ppoly.evaluate(c, x, xp, dx, extrapolate, out): writes out (len(xp), n) ----------------------------------

def _evaluated(c, x, xp, dx, extrapolate, kernel=_ppoly.evaluate):
    out = np.empty((len(xp), c.shape[2]), dtype=c.dtype)
    kernel(c, x, xp, dx, extrapolate, out)
    return out


def _intervals(x, xp, extrapolate):
    """The interval of each point, as the kernels find it (-1 outside, where they give NaN)."""
    index = np.arange(len(x) - 1, dtype=float).reshape(1, -1, 1)
    found = _evaluated(np.ascontiguousarray(index), x, xp, 0, extrapolate)[:, 0]
    return np.where(np.isfinite(found), found, -1).astype(np.intp)


def _power_breakpoints(g, v, x, xp, dx, extrapolate):
    """The breakpoints' cotangent in the power basis, for the points' cotangents g (the value's slope
    times dy) and v (the value times dy): the value at a point of interval i is a polynomial in xp - x[i],
    so x[i] moves it as -xp does (the interval a point falls in is piecewise constant)."""
    i = _intervals(x, xp, extrapolate)
    inside = i >= 0
    return np.bincount(i[inside], weights=-g[inside], minlength=len(x)).astype(float)


def _bernstein_breakpoints(g, v, x, xp, dx, extrapolate):
    """The same in the Bernstein basis: the value is B(s) / h**dx with s = (xp - x[i]) / h, h = x[i+1] -
    x[i], so x[i] moves it by -(1 - s) slope + dx value / h and x[i+1] by -s slope - dx value / h."""
    i = _intervals(x, xp, extrapolate)
    inside = i >= 0
    i, g, v, xp = i[inside], g[inside], v[inside], np.asarray(xp, dtype=float)[inside]
    h = x[i + 1] - x[i]
    s = (xp - x[i]) / h
    out = np.zeros(len(x))
    np.add.at(out, i, -(1 - s) * g + dx * v / h)
    np.add.at(out, i + 1, -s * g - dx * v / h)
    return out


def _forward_refusal(name: str) -> MissingRule:
    """Forward mode's answer for a kernel writing into an array it is given: a tangent has nowhere to go
    (the twin hands back no tangent of an argument a rule writes, and the array scipy made with np.empty
    cannot hold duals); refused, never a zero."""
    return MissingRule(
        f"forward mode cannot differentiate {name}: it writes its result into an array it is given "
        "(PPoly, CubicSpline, PchipInterpolator, Akima1DInterpolator, BPoly), whose tangent forward mode "
        "cannot follow", fix="use reverse mode (`contexts.gradient`, `vjp`, `jacobian(..., mode='reverse')`)")


def _no_duals(name, *args):
    if any(is_dual(a) for a in args):  # (forward over reverse: the rules' own values perturbed)
        raise _forward_refusal(name)


def _power_breakpoints_tangent(slope, values, tx, x, xp, dx, extrapolate):
    """The value's tangent (len(xp), n) for the breakpoints' tangent tx (see `_power_breakpoints`)."""
    i = _intervals(x, xp, extrapolate)
    return -slope * np.where(i >= 0, tx[np.maximum(i, 0)], 0.0)[:, None]


def _bernstein_breakpoints_tangent(slope, values, tx, x, xp, dx, extrapolate):
    """The same in the Bernstein basis (see `_bernstein_breakpoints`)."""
    i = _intervals(x, xp, extrapolate)
    inside = i >= 0
    j = np.where(inside, i, 0)
    h = x[j + 1] - x[j]
    s = (np.asarray(xp, dtype=float) - x[j]) / h
    lo = (-(1 - s) * tx[j])[:, None] * slope + (dx * tx[j] / h)[:, None] * values
    hi = (-s * tx[j + 1])[:, None] * slope - (dx * tx[j + 1] / h)[:, None] * values
    return np.where(inside[:, None], lo + hi, 0.0)


def _evaluate_rules(kernel, name, breakpoints, breakpoints_tangent):
    """The in-place rule of `kernel(c, x, xp, dx, extrapolate, out)`, linear in c."""
    def evaluate_inplace(c, x, xp, dx, extrapolate, out):
        _no_duals(name, c, x, xp, out)
        old = out.copy()
        kernel(c, x, xp, dx, extrapolate, out)

        def evaluate_back(S, dy, dself):
            _restore(S, out, old)
            d = S.held(5)
            if d is None:
                return dself, (None,) * 6
            _real(name, c, d)
            d = np.asarray(d, dtype=float)
            d0 = np.where(np.isfinite(d), d, 0.0)
            c_, x_ = np.asarray(c, dtype=float), np.asarray(x, dtype=float)
            # (len(xp), k): NaN outside without extrapolation, whatever c is: no derivative there
            weights = np.nan_to_num(_evaluated(_unit_orders(c_), x_, xp, dx, extrapolate, kernel))
            i = _intervals(x_, xp, extrapolate)
            inside = i >= 0
            dc = np.zeros((c_.shape[1], c_.shape[0], c_.shape[2]))  # (m, k, n), by interval
            np.add.at(dc, i[inside], weights[inside][:, :, None] * d0[inside][:, None, :])
            dc = dc.transpose(1, 0, 2)
            dxp = np.sum(d0 * np.nan_to_num(_evaluated(c_, x_, xp, dx + 1, extrapolate, kernel)), axis=1)
            dbreak = None
            if np.asarray(x).dtype.kind == "f":
                values = np.sum(d0 * np.nan_to_num(_evaluated(c_, x_, xp, dx, extrapolate, kernel)), axis=1)
                dbreak = breakpoints(dxp, values, x_, xp, dx, extrapolate)
            # out was overwritten whole: the cotangent it held leaves it (its old values had no effect)
            return dself, (match_primal(dc, c), dbreak, match_primal(dxp, xp), None, None, -d)
        return None, evaluate_back

    def evaluate_frule(tangents, c, x, xp, dx, extrapolate, out):
        """Writes out; returns (None, out's tangent): the kernel on c's tangent, its slope times the
        points' tangent, and the breakpoints' part (`breakpoints_tangent`)."""
        kernel(c, x, xp, dx, extrapolate, out)
        tc, tx, txp = (tuple(tangents) + (None,) * 3)[:3]
        if np.asarray(x).dtype.kind != "f":
            tx = None
        if tc is None and tx is None and txp is None:
            return None, None
        _real(name, c)
        c_, x_ = np.asarray(c, dtype=float), np.asarray(x, dtype=float)
        dy = np.zeros(out.shape)
        if tc is not None:
            dy = dy + np.nan_to_num(_evaluated(np.ascontiguousarray(tc, dtype=float), x_, xp, dx, extrapolate,
                                               kernel))
        if tx is not None or txp is not None:
            slope = np.nan_to_num(_evaluated(c_, x_, xp, dx + 1, extrapolate, kernel))
            if txp is not None:
                dy = dy + slope * np.asarray(txp, dtype=float)[:, None]
            if tx is not None:
                values = np.nan_to_num(_evaluated(c_, x_, xp, dx, extrapolate, kernel))
                dy = dy + breakpoints_tangent(slope, values, np.asarray(tx, dtype=float), x_, xp, dx, extrapolate)
        return None, np.where(np.isfinite(out), dy, 0.0)
    registry.set(kernel, inplace=evaluate_inplace, writes=5)
    registry.frule(kernel)(evaluate_frule)


_evaluate_rules(_ppoly.evaluate, "scipy.interpolate._ppoly.evaluate", _power_breakpoints, _power_breakpoints_tangent)
_evaluate_rules(_ppoly.evaluate_bernstein, "scipy.interpolate._ppoly.evaluate_bernstein", _bernstein_breakpoints,
                _bernstein_breakpoints_tangent)


# -- _ppoly.integrate(c, x, a, b, extrapolate, out): out (n,) = the integral from a to b ------------------------
# (PPoly.integrate passes `out=`: reverse mode computes it into a new array, `impl`, and copies it there)

_INTEGRATE = "scipy.interpolate.PPoly.integrate (_ppoly.integrate)"


def _integrated(c, x, a, b, extrapolate, out=None):
    """_ppoly.integrate into a new array (the kernel requires its output). Run as code under an outer
    derivative (forward over forward: c a dual of the outer one), the call is that derivative's rule, which
    returns the dual result it could not write into the plain array: taken (read from the array, the outer
    tangent was dropped: a hessian of 0 for 2, gen15 W3)."""
    y = np.empty(c.shape[2], dtype=c.dtype)
    made = _ppoly.integrate(c, x, a, b, extrapolate, y)
    return y if made is None else made


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


def _integral_weights(c, x, a, b, extrapolate):
    """(k, m): the integral's weight of each coefficient, that of (t - x[j])**p over interval j's part of
    [a, b] (see `_bounds_partials`)."""
    k, m = c.shape[:2]
    powers = np.arange(k - 1, -1, -1, dtype=float)[:, None] + 1.0  # p + 1, by row
    lo = np.r_[-np.inf if extrapolate else x[0], x[1:m]]
    hi = np.r_[x[1:m], np.inf if extrapolate else x[m]]
    left, right = np.maximum(a, lo), np.minimum(b, hi)
    nonempty = left < right
    left, right = np.where(nonempty, left, x[:m]), np.where(nonempty, right, x[:m])
    return ((right - x[:m]) ** powers - (left - x[:m]) ** powers) / powers * nonempty


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
    dc = np.multiply.outer(_integral_weights(c_, x_, float(a), float(b), extrapolate), d)
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


# -- _ppoly.fix_continuity(c, x, order): changes c in place -----------------------------------------------------
# For each interval i >= 1, from the left, and dx = order, ..., 0: c[k-1-dx, i] is the dx-th derivative
# (over dx!) of interval i-1's polynomial, already fixed, at h = x[i] - x[i-1]. A linear recurrence in c
# with coefficients polynomial in h, pulled back interval by interval from the right.

def _shift_matrix(k, order, h, slope=False):
    """T (order+1, k): row r (for dx = order - r) maps a column of coefficients to the dx-th derivative
    over dx! at h (`slope`: its derivative in h)."""
    t = np.zeros((order + 1, k))
    for r in range(order + 1):
        dx = order - r
        for q in range(k):
            p = k - 1 - q  # the power of coefficient q
            if p >= dx:
                e = p - dx
                coef = float(math.comb(p, dx))
                t[r, q] = coef * e * h ** (e - 1) if slope and e else (0.0 if slope else coef * h ** e)
    return t


def fix_continuity_frule(tangents, c, x, order):
    """Changes c in place; returns (None, c's tangent after): the recurrence on c's tangent, interval by
    interval from the left, plus the shift's slope times h's tangent."""
    tc, tx = (tuple(tangents) + (None,) * 2)[:2]
    _ppoly.fix_continuity(c, x, order)
    x_ = np.asarray(x, dtype=float)
    if x_.dtype.kind != "f" or np.asarray(x).dtype.kind != "f":
        tx = None
    if tc is None and tx is None:
        return None, None
    _real("scipy.interpolate.PPoly.antiderivative (_ppoly.fix_continuity)", c)
    g = np.zeros(c.shape) if tc is None else np.array(tc, dtype=float)
    k, rows = c.shape[0], slice(c.shape[0] - 1 - order, c.shape[0])
    for i in range(1, c.shape[1]):
        h = x_[i] - x_[i - 1]
        g[rows, i, :] = _shift_matrix(k, order, h) @ g[:, i - 1, :]
        if tx is not None:
            dh = float(tx[i]) - float(tx[i - 1])
            g[rows, i, :] += dh * (_shift_matrix(k, order, h, slope=True) @ c[:, i - 1, :])
    return None, g


def fix_continuity_inplace(c, x, order):
    _no_duals("scipy.interpolate._ppoly.fix_continuity", c, x)
    old = c.copy()
    _ppoly.fix_continuity(c, x, order)

    def fix_continuity_back(S, dy, dself):
        new = c.copy()
        _restore(S, c, old)
        g = S.held(0)
        if g is None:
            return dself, (None, None, None)
        _real("scipy.interpolate.PPoly.antiderivative (_ppoly.fix_continuity)", c, g)
        g = np.array(g, dtype=float)  # (k, m, n), consumed interval by interval from the right
        x_ = np.asarray(x, dtype=float)
        k, rows = c.shape[0], slice(c.shape[0] - 1 - order, c.shape[0])
        dbreak = np.zeros(len(x_))
        for i in range(c.shape[1] - 1, 0, -1):
            h = x_[i] - x_[i - 1]
            fixed = g[rows, i, :]  # (order+1, n): the cotangents of the entries the kernel wrote
            g[:, i - 1, :] += _shift_matrix(k, order, h).T @ fixed
            dh = np.sum(fixed * (_shift_matrix(k, order, h, slope=True) @ new[:, i - 1, :]))
            dbreak[i] += dh
            dbreak[i - 1] -= dh
            g[rows, i, :] = 0.0  # their old values were overwritten
        # returned as deltas to the cotangent c held: g - held
        delta = g - np.asarray(S.held(0), dtype=float)
        return dself, (match_primal(delta, c), dbreak if x_.dtype.kind == "f" else None, None)
    return None, fix_continuity_back


registry.set(_ppoly.fix_continuity, inplace=fix_continuity_inplace, writes=0)
registry.frule(_ppoly.fix_continuity)(fix_continuity_frule)
