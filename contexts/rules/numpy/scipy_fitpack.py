"""Rules for FITPACK's curve fitting kernels (scipy.interpolate's `_dfitpack`): `curfit` (splrep),
`fpcurf0`/`fpcurf1` (UnivariateSpline, InterpolatedUnivariateSpline, `set_smoothing_factor`), `fpcurfm1`
(LSQUnivariateSpline), `regrid_smth` (RectBivariateSpline), `splint` (splint, `.integral`) and `spalde`;
`fpchec` (a check of the knots) is not differentiable. Evaluation (splev, splder, bispev, ...) is in
`scipy_splines`.

A fit's knots are piecewise constant in the data values y, the weights w and the smoothing factor s
(FITPACK places them by comparisons), so they are held fixed; in the data abscissae x (and the interval
[xb, xe], and the knots given to a least-squares fit) they move: refused (`NoClosedForm`). With the knots
fixed, the coefficients are:

- a weighted least-squares spline (`s = 0`, interpolation, ier = -1; the least-squares polynomial, ier = -2;
  given knots, iopt = -1; knots accepted with |fp - s| < 0.001 s; ier = 1): c = (W B)^+ W y, linear in y,
  dc/dw = (W B)^+ diag(2 r) with r = y - B c;
- a smoothing spline (s > 0, FITPACK's part 2): c(p) of the system [W B; D / p] c = [W y; 0] (D: the jumps of
  the k-th derivative at the interior knots, FITPACK's fpdisc), with p found by FITPACK's rational
  iteration on f(p) = fp(p) - s, stopped at |fp - s| < 0.001 s. Its derivative is the derivative of that
  finite iteration (not the implicit function theorem's on fp(p) = s, which the stopped iteration does not
  satisfy): the rule replays FITPACK's iteration (same start, same steps, same tests) carrying tangents in
  y and s, and checks that the replay ends on FITPACK's coefficients (else refused). Weights differentiated
  there are refused.

Each fit is checked: the rule recomputes the coefficients from the knots FITPACK returns and refuses
(`UnsupportedCase`) where they differ from FITPACK's. Second derivatives are not supported (the rules
compute on plain arrays).
"""

from __future__ import annotations

import numpy as np
from scipy.interpolate import BSpline
from scipy.interpolate import _dfitpack as _dfit

from ..registry import NoClosedForm, registry
from ..sparsity_specs import DENSE
from ..generic import is_dual
from ._util import bind, match_primal, unsupported

__all__: list[str] = []

_TOL = 0.001  # FITPACK's relative tolerance on fp - s (curfit, fpcurf0/1: tol = 0.001, maxit = 20)
_MAXIT = 20
_CHECK = 1e-7  # the replayed coefficients against FITPACK's, relative to the largest

_FIX = ("keep the data abscissae x (and bbox, and given knots) constant: the fit is differentiated in the data "
        "values y (and the weights w) with the knots held where FITPACK put them. To differentiate in x, fit "
        "with `scipy.interpolate.CubicSpline(x, y)` (differentiated in x and y)")


def _first_order(name, *values):
    """Refuses duals (a derivative of a derivative: forward over reverse, forward over forward): the rules
    compute on plain arrays."""
    for v in values:
        if is_dual(v) or isinstance(v, (tuple, list)) and any(is_dual(u) for u in v) or (
                type(v) is np.ndarray and v.dtype.kind == "O" and any(is_dual(u) for u in v.flat)):
            raise unsupported(name, "second derivatives (a derivative of a derivative)",
                              "differentiate the fit once; for a Hessian in the data, use finite differences "
                              "of the gradient (contexts.rules.check.numerical_gradient)")


def _refusal(function, argument):
    return NoClosedForm(function, f"{argument} (the knots move with it)", fix=_FIX)


def _is_float(v):
    return v is not None and np.asarray(v).dtype.kind in "fc"


def _nonzero(t):
    if t is None:
        return False
    if type(t) is float or type(t) is np.ndarray and t.dtype.kind in "fc":
        return bool(np.any(np.asarray(t) != 0))
    return True


# -- the fit's derivative -----------------------------------------------------------------------------------

def _design(t, k, x):
    """(m, n - k - 1): the B-splines on knots t at the sites x."""
    t = np.asarray(t, dtype=float)
    return BSpline.design_matrix(np.asarray(x, dtype=float), t, k).toarray()


def _fpdisc(t, k):
    """FITPACK's fpdisc: the (n - 2k - 2, n - k - 1) jumps of the k-th derivative of the B-splines at the
    interior knots t[k+1], ..., t[n-k-2], scaled as FITPACK scales them."""
    n = len(t)
    k1, k2 = k + 1, k + 2
    nk1 = n - k1
    nrint = nk1 - k
    fac = nrint / (t[nk1] - t[k1 - 1])
    D = np.zeros((n - 2 * k - 2, nk1))
    for l in range(k2, nk1 + 1):  # FITPACK's 1-based l
        lmk = l - k1
        h = np.zeros(2 * k1 + 1)
        for j in range(1, k1 + 1):
            h[j] = t[l - 1] - t[l + j - k2 - 1]
            h[j + k1] = t[l - 1] - t[l + j - 1]
        lp = lmk
        for j in range(1, k2 + 1):
            jk = j
            prod = h[j]
            for _ in range(k):
                jk += 1
                prod = prod * h[jk] * fac
            D[lmk - 1, lp - 1] = (t[lp + k1 - 1] - t[lp - 1]) / prod
            lp += 1
    return D


class _D:
    """A number with a tangent vector (the tangents in y and s), for the replayed iteration."""
    __slots__ = ("v", "d")

    def __init__(self, v, d):
        self.v, self.d = float(v), d

    def __add__(self, o):
        return _D(self.v + o.v, self.d + o.d) if type(o) is _D else _D(self.v + o, self.d)

    __radd__ = __add__

    def __sub__(self, o):
        return _D(self.v - o.v, self.d - o.d) if type(o) is _D else _D(self.v - o, self.d)

    def __rsub__(self, o):
        return _D(o - self.v, -self.d)

    def __mul__(self, o):
        return _D(self.v * o.v, self.d * o.v + o.d * self.v) if type(o) is _D else _D(self.v * o, self.d * o)

    __rmul__ = __mul__

    def __truediv__(self, o):
        if type(o) is _D:
            return _D(self.v / o.v, (self.d * o.v - o.d * self.v) / (o.v * o.v))
        return _D(self.v / o, self.d / o)

    def __neg__(self):
        return _D(-self.v, -self.d)


def _fprati(p1, f1, p2, f2, p3, f3):
    """FITPACK's fprati on _D numbers: (p, p1, f1, p3, f3)."""
    if p3.v > 0.0:
        h1 = f1 * (f2 - f3)
        h2 = f2 * (f3 - f1)
        h3 = f3 * (f1 - f2)
        p = -(p1 * p2 * h3 + p2 * p3 * h1 + p3 * p1 * h2) / (p1 * h1 + p2 * h2 + p3 * h3)
    else:
        p = (p1 * (f1 - f3) * f2 - p2 * (f2 - f3) * f1) / ((f1 - f2) * f3)
    if f2.v < 0.0:
        p3, f3 = p2, f2
    else:
        p1, f1 = p2, f2
    return p, p1, f1, p3, f3


class Fit:
    """The derivative of a FITPACK fit's coefficients c (its first nk1 = n - k - 1) and residual sum fp in
    the data values y, the weights w and the smoothing factor s, the knots held fixed: `jc` (nk1, 2m + 1) and
    `jfp` (2m + 1,), columns y | w | s. `w_known` is False where the weights' derivative is refused."""

    def __init__(self, name, x, y, w, t, k, s, c_out, fp0_out, ier, iopt, fp_out=None):
        _first_order(name, x, y, w, t, s, c_out)
        x, y, w = (np.asarray(v, dtype=float) for v in (x, y, w))
        t = np.asarray(t, dtype=float)
        m, n = len(x), len(t)
        nk1 = n - k - 1
        self.name, self.m, self.nk1 = name, m, nk1
        if any(np.iscomplexobj(v) for v in (y, w)):
            raise unsupported(name, "complex data", "split real and imaginary parts")
        B = _design(t, k, x)
        WB = B * w[:, None]
        self.smoothing = False
        V = 2 * m + 1
        pinv = np.linalg.pinv(WB)
        c_inf = pinv @ (w * y)
        r_inf = y - B @ c_inf
        fp_inf = float(np.sum((w * r_inf) ** 2))
        linear = iopt == -1 or ier in (-1, -2, 1) or s == 0.0 or abs(fp_inf - s) < _TOL * s
        if linear:
            c, fp, jc, jfp = c_inf, fp_inf, np.zeros((nk1, V)), np.zeros(V)
            jc[:, :m] = pinv * w[None, :]
            jc[:, m:2 * m] = pinv * (2 * r_inf)[None, :]
            jfp[:m] = 2 * w ** 2 * r_inf
            jfp[m:2 * m] = 2 * w * r_inf ** 2
            self.w_known = True
        elif ier in (0, 2, 3):
            self.smoothing = True
            c, fp, jc, jfp = self._smoothing(x, y, w, t, k, s, B, WB, fp_inf, r_inf, fp0_out)
            self.w_known = False
        else:
            raise unsupported(name, f"a fit FITPACK ended with ier = {ier}", "check the fit's inputs")
        c_fit = np.asarray(c_out, dtype=float)[:nk1]
        if not np.allclose(c, c_fit, rtol=0.0, atol=_CHECK * max(1.0, float(np.max(np.abs(c_fit), initial=0.0)))):
            raise unsupported(name, "this fit: the coefficients recomputed from FITPACK's knots differ from "
                              f"FITPACK's (by {float(np.max(np.abs(c - c_fit))):.3g}; "
                              f"{'smoothing' if self.smoothing else 'least-squares'} spline)",
                              "differentiate a fit with fixed knots (LSQUnivariateSpline, make_lsq_spline) or "
                              "an interpolating one (s=0)")
        # the residual sum too (a replay one step off FITPACK's could end on nearly its coefficients, not
        # on its fp: the steps change fp by up to 0.001 s)
        scale = max(abs(fp_out), 1e-10 * float(np.sum((w * y) ** 2)), 1e-300) if fp_out is not None else 0.0
        if fp_out is not None and not abs(fp - fp_out) <= 1e-8 * scale:
            raise unsupported(name, "this fit: the residual sum recomputed from FITPACK's knots differs from "
                              f"FITPACK's ({fp:.17g} for {fp_out:.17g})",
                              "differentiate a fit with fixed knots (LSQUnivariateSpline, make_lsq_spline) or "
                              "an interpolating one (s=0)")
        self.jc, self.jfp = jc, jfp

    def _smoothing(self, x, y, w, t, k, s, B, WB, fp_inf, r_inf, fp0_out):
        """FITPACK's part 2 (fpcurf), replayed with tangents in y and s (columns 0..m-1 and 2m)."""
        m, nk1 = self.m, self.nk1
        V = 2 * m + 1

        def ey(g):  # a tangent vector in y
            d = np.zeros(V)
            d[:m] = g
            return d
        es = np.zeros(V)
        es[2 * m] = 1.0
        # the least-squares polynomial's fp (FITPACK's fp0, kept in fpint[n-1])
        t0 = np.r_[[t[0]] * (k + 1), [t[-1]] * (k + 1)]
        B0 = _design(t0, k, x)
        c0 = np.linalg.lstsq(B0 * w[:, None], w * y, rcond=None)[0]
        r0 = y - B0 @ c0
        fp0 = float(np.sum((w * r0) ** 2))
        if fp0_out is None or not np.isclose(fp0, fp0_out, rtol=1e-9, atol=0.0):
            raise unsupported(self.name, "a smoothing fit whose starting residual (fp0) is not its data's "
                              "least-squares polynomial's", "refit from the data (s given at construction)")
        D = _fpdisc(t, k)
        DtD = D.T @ D
        W2B = (w ** 2)[:, None] * B
        acc = _TOL * s
        R = np.linalg.qr(WB, mode="r")
        p = _D(nk1 / float(np.sum(np.abs(np.diag(R)))), np.zeros(V))
        p1, f1 = _D(0.0, np.zeros(V)), _D(fp0, ey(2 * w ** 2 * r0)) - _D(s, es)
        p3, f3 = _D(-1.0, np.zeros(V)), _D(fp_inf, ey(2 * w ** 2 * r_inf)) - _D(s, es)
        ich1 = ich3 = 0
        rhs = np.r_[w * y, np.zeros(D.shape[0])]
        for it in range(1, _MAXIT + 1):
            A = np.vstack([WB, D / p.v])
            c = np.linalg.lstsq(A, rhs, rcond=None)[0]
            M = A.T @ A
            # dc = M^-1 (B^T W^2 dy + 2 p^-3 D^T D c dp)
            dc = np.linalg.solve(M, np.hstack([W2B.T, np.zeros((nk1, m + 1))])
                                 + (2.0 / p.v ** 3) * np.outer(DtD @ c, p.d))
            r = y - B @ c
            fp = _D(np.sum((w * r) ** 2), ey(2 * w ** 2 * r) - 2 * ((w ** 2 * r) @ B) @ dc)
            fpms = fp - _D(s, es)
            if abs(fpms.v) < acc or it == _MAXIT:
                break
            p2, f2 = p, fpms
            if ich3 == 0:
                if not f2.v - f3.v > acc:
                    p3, f3 = p2, f2
                    p = p2 * 0.04
                    if p.v <= p1.v:
                        p = p1 * 0.9 + p2 * 0.1
                    continue
                if f2.v < 0.0:
                    ich3 = 1
            if ich1 == 0:
                if not f1.v - f2.v > acc:
                    p1, f1 = p2, f2
                    p = p2 / 0.04
                    if p3.v < 0.0:
                        continue
                    if p.v >= p3.v:
                        p = p2 * 0.1 + p3 * 0.9
                    continue
                if f2.v > 0.0:
                    ich1 = 1
            if f2.v >= f1.v or f2.v <= f3.v:
                break  # (FITPACK's ier = 2)
            p, p1, f1, p3, f3 = _fprati(p1, f1, p2, f2, p3, f3)
        return c, fp.v, dc, fp.d

    # -- applying it ------------------------------------------------------------------------------------

    def check_w(self, tw):
        if not self.w_known and _nonzero(tw):
            raise unsupported(self.name, "a smoothing spline (s > 0, FITPACK's iteration on p) in its weights w",
                              "keep w constant (the derivative in y and s is given)")

    def tangent(self, ty, tw, ts, nc):
        """(dc of length nc, dfp) along tangents of y, w, s (None: zero)."""
        _first_order(self.name, ty, tw, ts)
        m = self.m
        v = np.zeros(2 * m + 1)
        if ty is not None:
            v[:m] = np.broadcast_to(np.asarray(ty, dtype=float), (m,))
        if tw is not None:
            self.check_w(tw)
            if self.w_known:
                v[m:2 * m] = np.broadcast_to(np.asarray(tw, dtype=float), (m,))
        if ts is not None:
            v[2 * m] = float(ts)
        dc = np.zeros(nc)
        dc[:self.nk1] = self.jc @ v
        return dc, float(self.jfp @ v)

    def cotangent(self, dc, dfp):
        """(dy, dw, ds) from cotangents of c and fp (None: zero); dw None where refused (the caller
        refuses it)."""
        g = np.zeros(2 * self.m + 1)
        if dc is not None:
            g += self.jc.T @ np.asarray(dc, dtype=float)[:self.nk1]
        if dfp is not None:
            g += self.jfp * float(dfp)
        m = self.m
        return g[:m], (g[m:2 * m] if self.w_known else None), g[2 * m]


_LAST: list = []  # [(key, Fit)]: forward mode runs a rule once per direction of a chunk on the same fit


def fit_of(name, x, y, w, t, k, s, c_out, fp0_out, ier, iopt, fp_out=None):
    """`Fit(...)`, the last one again where every input is the same (compared by value, bytes and all)."""
    _first_order(name, x, y, w, t, s, c_out)
    arrays = tuple(np.ascontiguousarray(np.asarray(v, dtype=float)) for v in (x, y, w, t, c_out))
    key = (name, int(k), float(s), fp0_out, int(ier), int(iopt), fp_out) + tuple(
        (a.shape, a.tobytes()) for a in arrays)
    if _LAST and _LAST[0][0] == key:
        return _LAST[0][1]
    fit = Fit(name, x, y, w, t, k, s, c_out, fp0_out, ier, iopt, fp_out)
    _LAST[:] = [(key, fit)]
    return fit


def _w_refused(name):
    return NoClosedForm(name, "w (the weights) of a smoothing spline (s > 0)",
                        fix="keep w constant (the derivative in y and s is given), or fit with s=0 or fixed knots")


def _zero_like(v):
    return 0.0 if np.ndim(v) == 0 else np.zeros(np.shape(v))


def _plus(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a + b


# -- curfit(iopt, x, y, w, t, wrk, iwrk, [xb, xe, k, s]) -> (n, c, fp, ier); t, wrk, iwrk written in place ----

_CURFIT = "scipy.interpolate.splrep (FITPACK curfit)"
_CURFIT_X = _refusal(_CURFIT, "x (the data abscissae)")
_CURFIT_B = _refusal(_CURFIT, "xb, xe (the interval)")
_CURFIT_T = _refusal(_CURFIT, "t (the knots given)")
_CURFIT_W = _w_refused(_CURFIT)


def _curfit_call(args, kwargs):
    iopt, x, y, w, t, wrk, iwrk = args[:7]
    xb, xe, k, s = bind(args[7:], kwargs, ("xb", "xe", "k", "s"), (None, None, 3, 0.0))
    return int(iopt), x, y, w, t, wrk, xb, xe, int(k), float(s)


def _curfit_fit(args, kwargs, out):
    iopt, x, y, w, t, wrk, xb, xe, k, s = _curfit_call(args, kwargs)
    n, c, fp, ier = out
    if iopt == 1:
        raise unsupported(_CURFIT, "a continued fit (task=1)", "fit again with task=0")
    return fit_of(_CURFIT, x, y, w, np.array(t[:n]), k, s, c, float(np.asarray(wrk)[n - 1]), int(ier), iopt, float(fp))


@registry.frule(_dfit.curfit)
def curfit_frule(tangents, *args, **kwargs):
    tangents = tuple(tangents) + (None,) * 11
    t_in = np.array(args[4], copy=True)
    out = _dfit.curfit(*args, **kwargs)
    iopt = int(args[0])
    if _CURFIT_X.refuses(tangents[1], args[1]):
        raise _CURFIT_X.error()
    if any(_CURFIT_B.refuses(tangents[i], args[i]) for i in (7, 8) if i < len(args)):
        raise _CURFIT_B.error()
    if iopt == -1 and _CURFIT_T.refuses(tangents[4], t_in):
        raise _CURFIT_T.error()
    ty, tw, ts = tangents[2], tangents[3], tangents[10] if len(args) > 10 else None
    if ty is None and tw is None and ts is None:
        return out, None
    fit = _curfit_fit(args, kwargs, out)
    dc, dfp = fit.tangent(ty, tw, ts, len(out[1]))
    return out, (None, dc, dfp, None)


@registry.rrule(_dfit.curfit)
def curfit_rrule(*args, **kwargs):
    out = _dfit.curfit(*args, **kwargs)
    iopt = int(args[0])
    fit = [None]
    saved = (args, kwargs, out, np.array(args[4][:out[0]]), np.array(args[5][:out[0]]))

    def curfit_pullback(dy):
        args_, kwargs_, out_, knots, fpint = saved
        d = tuple(dy) if dy is not None else (None,) * 4
        names = ("iopt", "x", "y", "w", "t", "wrk", "iwrk", "xb", "xe", "k", "s")
        values = dict(zip(names, args_))
        values.update(kwargs_)
        grads = {}
        if _is_float(values["x"]):
            grads["x"] = _CURFIT_X.cotangent()
        for b in ("xb", "xe"):
            if _is_float(values.get(b)):
                grads[b] = _CURFIT_B.cotangent()
        if iopt == -1 and _is_float(values["t"]):
            grads["t"] = _CURFIT_T.cotangent()
        if d[1] is not None or d[2] is not None:
            if fit[0] is None:
                _, x, y, w, _, _, _, _, k, s = _curfit_call(args_, kwargs_)
                if iopt == 1:
                    raise unsupported(_CURFIT, "a continued fit (task=1)", "fit again with task=0")
                fit[0] = Fit(_CURFIT, x, y, w, knots, k, s, out_[1], float(fpint[-1]), int(out_[3]), iopt,
                             float(out_[2]))
            gy, gw, gs = fit[0].cotangent(d[1], d[2])
            grads["y"] = match_primal(gy, values["y"])
            if gw is not None:
                grads["w"] = match_primal(gw, values["w"])
            elif _is_float(values["w"]):
                grads["w"] = _CURFIT_W.cotangent()
            grads["s"] = gs
        positional = tuple(grads.get(name) for name in names[:len(args_)])
        keywords = {k: grads[k] if k in grads else _zero_like(v) for k, v in kwargs_.items()
                    if k in names and _is_float(v)}
        return positional + ((keywords,) if keywords else ())
    return out, curfit_pullback


registry.sparsity(DENSE, _dfit.curfit)
registry.set(_dfit.curfit, positional=("iopt", "x", "y", "w", "t", "wrk", "iwrk", "xb", "xe", "k", "s"))


# -- fpcurf0(x, y, k, [w, xb, xe, s, nest]), fpcurf1(x, y, w, xb, xe, k, s, n, t, c, fp, fpint, nrdata, ier),
#    fpcurfm1(x, y, k, t, [w, xb, xe]) -> (x, y, w, xb, xe, k, s, n, t, c, fp, fpint, nrdata, ier) ----------

_FPCURF = "scipy.interpolate.UnivariateSpline (FITPACK fpcurf)"
_FP_X = _refusal(_FPCURF, "x (the data abscissae)")
_FP_B = _refusal(_FPCURF, "xb, xe (bbox)")
_FP_T = _refusal("scipy.interpolate.LSQUnivariateSpline (FITPACK fpcurfm1)", "t (the knots given)")
_FP_W = _w_refused(_FPCURF)
_FPINT = NoClosedForm(_FPCURF, "fpint (FITPACK's residual sums of earlier knot sets, an output)",
                      fix="use the spline (its coefficients and get_residual()), not its _data's fpint")

# positions of (x, y, w, xb, xe, k, s, t) in each kernel's positional arguments; names for keywords
_FPCURF_ARGS = {
    _dfit.fpcurf0: (("x", "y", "k", "w", "xb", "xe", "s", "nest"), 0),
    _dfit.fpcurf1: (("x", "y", "w", "xb", "xe", "k", "s", "n", "t", "c", "fp", "fpint", "nrdata", "ier"), 1),
    _dfit.fpcurfm1: (("x", "y", "k", "t", "w", "xb", "xe"), -1),
}


def _fpcurf_fit(fn, values, out):
    names, iopt = _FPCURF_ARGS[fn]
    x, y, w, xb, xe, k, s, n, t, c, fp, fpint, nrdata, ier = out
    return fit_of(_FPCURF, x, y, w, np.array(t[:n]), int(k), float(s), c,
               float(fpint[n - 1]) if fpint is not None else None, int(ier), iopt, float(fp))


def _copies(args):
    """The arguments, arrays copied: fpcurf1 and fpcurfm1 overwrite theirs (f2py's overwrite_t=1, ...), and
    forward mode runs a rule once per direction of a chunk on the same values (the second run started
    from the first's knots: another fit)."""
    return tuple(np.array(a, copy=True) if type(a) is np.ndarray else a for a in args)


def _named(fn, args, kwargs):
    names, _ = _FPCURF_ARGS[fn]
    values = dict(zip(names, args))
    values.update({k: v for k, v in kwargs.items() if k in names})
    return values


def _fpcurf_frule(fn):
    names, iopt = _FPCURF_ARGS[fn]

    def frule(tangents, *args, **kwargs):
        tangents = dict(zip(names, tuple(tangents)))
        t_in = np.array(args[names.index("t")], copy=True) if "t" in names and names.index("t") < len(args) else None
        out = fn(*_copies(args), **kwargs)
        values = _named(fn, args, kwargs)
        if _FP_X.refuses(tangents.get("x"), values["x"]):
            raise _FP_X.error()
        for b in ("xb", "xe"):
            if b in values and _FP_B.refuses(tangents.get(b), values[b]):
                raise _FP_B.error()
        if iopt == -1 and t_in is not None and _FP_T.refuses(tangents.get("t"), t_in):
            raise _FP_T.error()
        ty, tw, ts = tangents.get("y"), tangents.get("w"), tangents.get("s")
        if ty is None and tw is None and ts is None:
            return out, None
        fit = _fpcurf_fit(fn, values, out)
        dc, dfp = fit.tangent(ty, tw, ts, len(out[9]))
        dy = [None] * 14
        dy[1] = None if ty is None else np.broadcast_to(np.asarray(ty, dtype=float), np.shape(out[1])).copy()
        dy[2] = None if tw is None else np.broadcast_to(np.asarray(tw, dtype=float), np.shape(out[2])).copy()
        dy[6] = ts
        dy[9], dy[10] = dc, dfp
        if out[11] is not None:  # (unknown: NaN, never a number; fpcurf1's rule does not read it)
            dy[11] = np.full(np.shape(out[11]), np.nan)
        return out, tuple(dy)
    frule.__name__ = frule.__qualname__ = f"{fn.__name__}_frule"
    return frule


def _fpcurf_rrule(fn):
    names, iopt = _FPCURF_ARGS[fn]

    def rrule(*args, **kwargs):
        out = fn(*_copies(args), **kwargs)
        values = _named(fn, args, kwargs)
        snapshot = tuple(np.array(v, copy=True) if isinstance(v, np.ndarray) else v for v in out)
        fit = [None]

        def pullback(dy):
            d = tuple(dy) if dy is not None else (None,) * 14
            d = d + (None,) * (14 - len(d))
            _first_order(_FPCURF, d[1], d[2], d[6])
            if _nonzero(d[11]) or type(d[11]).__name__ == "Refused":
                raise _FPINT.error()
            grads = {}
            if _is_float(values["x"]):
                grads["x"] = _FP_X.cotangent()
            for b in ("xb", "xe"):
                if b in values and _is_float(values[b]):
                    grads[b] = _FP_B.cotangent()
            if iopt == -1 and _is_float(values.get("t")):
                grads["t"] = _FP_T.cotangent()
            # the data passed through (outputs 0-6: x, y, w, xb, xe, k, s)
            gy, gw, gs = d[1], d[2], d[6]
            if d[9] is not None or d[10] is not None:
                if fit[0] is None:
                    fit[0] = _fpcurf_fit(fn, values, snapshot)
                fy, fw, fs = fit[0].cotangent(d[9], d[10])
                gy = _plus(gy, fy)
                gs = _plus(gs, fs)
                if fw is None:
                    if "w" in values and _is_float(values["w"]):
                        grads["w"] = _FP_W.cotangent()
                    gw = None
                else:
                    gw = _plus(gw, fw)
            if gy is not None:
                grads["y"] = match_primal(np.asarray(gy, dtype=float), values["y"])
            if gw is not None and "w" not in grads and "w" in values and _is_float(values["w"]):
                grads["w"] = match_primal(np.asarray(gw, dtype=float), values["w"])
            if gs is not None and "s" in values:
                grads["s"] = gs
            positional = tuple(grads.get(name) for name in names[:len(args)])
            keywords = {k: grads[k] if k in grads else _zero_like(v) for k, v in kwargs.items()
                        if k in names and _is_float(v)}
            return positional + ((keywords,) if keywords else ())
        pullback.__name__ = pullback.__qualname__ = f"{fn.__name__}_pullback"
        return out, pullback
    rrule.__name__ = rrule.__qualname__ = f"{fn.__name__}_rrule"
    return rrule


for _fn in _FPCURF_ARGS:
    # (UnivariateSpline passes w, xb, xe, s by keyword: forward mode moves them to their positions)
    registry.set(_fn, positional=_FPCURF_ARGS[_fn][0][:7])  # (all given: forward mode moves them then)
    registry.frule(_fn)(_fpcurf_frule(_fn))
    registry.rrule(_fn)(_fpcurf_rrule(_fn))
    registry.sparsity(DENSE, _fn)

registry.nondifferentiable(_dfit.fpchec)


# -- splint(t, c, k, a, b) -> (integral, wrk): the integral over [a, b] (clamped into the base interval
#    [t[k], t[n-k-1]], outside which FITPACK takes the spline to be 0) and wrk, the B-splines' integrals.
#    Linear in c (weights wrk); in b the spline's value at b inside the interval, 0 outside; in a minus it;
#    the knots refused. ------------------------------------------------------------------------------------

_SPLINT = "scipy.interpolate.splint (FITPACK splint)"
_SPLINT_T = NoClosedForm(_SPLINT, "t (the knots)", 0,
                         fix="keep the knots constant (a fit's knots are: fit in y, not in x)")


def _base(t, k):
    t = np.asarray(t, dtype=float)
    return float(t[k]), float(t[len(t) - k - 1])


def _limit_basis(t, k, v):
    """(n - k - 1,) the B-splines at the limit v inside the base interval; 0 outside (the clamp's slope)."""
    lo, hi = _base(t, k)
    v = float(v)
    if not lo < v < hi:
        return np.zeros(len(t) - k - 1)
    return _design(t, k, np.array([v]))[0]


def _splint_parts(t, c, k, a, b):
    nk1 = len(t) - int(k) - 1
    cc = np.zeros(len(t))
    cc[:min(len(c), len(t))] = np.asarray(c, dtype=float)[:len(t)]
    ba, bb = _limit_basis(t, int(k), a), _limit_basis(t, int(k), b)
    return nk1, cc[:nk1], ba, bb


@registry.frule(_dfit.splint)
def splint_frule(tangents, t, c, k, a, b):
    out = _dfit.splint(t, c, k, a, b)
    tt, tc, _, ta, tb = (tuple(tangents) + (None,) * 5)[:5]
    if _SPLINT_T.refuses(tt, t):
        raise _SPLINT_T.error()
    if tc is None and ta is None and tb is None:
        return out, None
    _first_order(_SPLINT, t, c, a, b, tc, ta, tb)
    if np.iscomplexobj(c):
        raise unsupported(_SPLINT, "complex coefficients", "split real and imaginary parts")
    nk1, cc, ba, bb = _splint_parts(t, c, k, a, b)
    wrk = np.asarray(out[1], dtype=float)
    dv = 0.0
    dwrk = np.zeros(wrk.shape)
    if tc is not None:
        dv += float(wrk[:min(nk1, len(tc))] @ np.asarray(tc, dtype=float)[:nk1])
    if tb is not None:
        dv += float(bb @ cc) * float(tb)
        dwrk[:nk1] += bb * float(tb)
    if ta is not None:
        dv -= float(ba @ cc) * float(ta)
        dwrk[:nk1] -= ba * float(ta)
    return out, (dv, dwrk)


@registry.adjoint(_dfit.splint)
def splint_adjoint(dy, y, t, c, k, a, b):
    d = tuple(dy) if dy is not None else (None, None)
    dv, dwrk = d[0], d[1]
    if dv is None and dwrk is None:
        return (None,) * 5
    _first_order(_SPLINT, dv, dwrk, t, c, a, b)
    nk1, cc, ba, bb = _splint_parts(t, c, k, a, b)
    wrk = np.asarray(y[1], dtype=float)
    dv = 0.0 if dv is None else float(dv)
    gc = np.zeros(np.shape(c))
    gc[:min(nk1, len(gc))] = (wrk[:nk1] * dv)[:len(gc)]
    ga = -float(ba @ cc) * dv
    gb = float(bb @ cc) * dv
    if dwrk is not None:
        dwrk = np.asarray(dwrk, dtype=float)
        ga -= float(ba @ dwrk[:nk1])
        gb += float(bb @ dwrk[:nk1])
    gt = _SPLINT_T.cotangent() if _is_float(t) else None
    return (gt, match_primal(gc, c), None, ga, gb)


registry.sparsity(DENSE, _dfit.splint)


# -- spalde(t, c, k1, x) -> (d, ier): the spline's derivatives of orders 0..k at x (t[k] <= x <= t[n-k-1]).
#    Linear in c; in x, d[j]' = d[j+1], and the k-th derivative is piecewise constant (0); knots refused. ----

_SPALDE = "scipy.interpolate.spalde (FITPACK spalde)"
_SPALDE_T = NoClosedForm(_SPALDE, "t (the knots)", 0, fix="keep the knots constant")


def _spalde_basis(t, c, k1, x):
    """(k1, len(c)): the derivatives at x of the unit coefficients' splines."""
    return np.stack([_dfit.spalde(t, unit, k1, x)[0] for unit in np.eye(len(c))], axis=1)


@registry.frule(_dfit.spalde)
def spalde_frule(tangents, t, c, k1, x):
    out = _dfit.spalde(t, c, k1, x)
    tt, tc, _, tx = (tuple(tangents) + (None,) * 4)[:4]
    if _SPALDE_T.refuses(tt, t):
        raise _SPALDE_T.error()
    if tc is None and tx is None:
        return out, None
    _first_order(_SPALDE, t, c, x, tc, tx)
    d = np.asarray(out[0], dtype=float)
    dd = np.zeros(d.shape)
    if tc is not None:
        dd += _spalde_basis(t, c, k1, x) @ np.asarray(tc, dtype=float)
    if tx is not None:
        dd[:-1] += d[1:] * float(tx)
    return out, (dd, None)


@registry.adjoint(_dfit.spalde)
def spalde_adjoint(dy, y, t, c, k1, x):
    g = None if dy is None else dy[0]
    if g is None:
        return (None,) * 4
    _first_order(_SPALDE, g, t, c, x)
    g = np.asarray(g, dtype=float)
    d = np.asarray(y[0], dtype=float)
    gc = _spalde_basis(t, c, k1, x).T @ g
    gx = float(g[:-1] @ d[1:])
    return (_SPALDE_T.cotangent() if _is_float(t) else None, match_primal(gc, c), None, gx)


registry.sparsity(DENSE, _dfit.spalde)


# -- sproot(t, c, [mest]) -> (zero, m, ier): the zeros of a cubic spline. A simple zero r moves by
#    -(sum dc_i B_i(r)) / s'(r); a zero where s' = 0 (a double zero, a zero on a flat piece) is refused; the
#    knots refused. -----------------------------------------------------------------------------------------

_SPROOT = "scipy.interpolate.sproot (FITPACK sproot)"
_SPROOT_T = NoClosedForm(_SPROOT, "t (the knots)", 0, fix="keep the knots constant")


def _sproot_parts(t, c, out, *more):
    _first_order(_SPROOT, t, c, *more)
    z, m = np.asarray(out[0], dtype=float), int(out[1])
    t = np.asarray(t, dtype=float)
    r = z[:m]
    nk1 = len(t) - 4
    cc = np.zeros(len(t))
    cc[:min(len(c), len(t))] = np.asarray(c, dtype=float)[:len(t)]
    B = _design(t, 3, r) if m else np.zeros((0, nk1))
    slope = BSpline(t, cc[:nk1], 3, extrapolate=False)(r, 1) if m else np.zeros(0)
    scale = np.max(np.abs(cc[:nk1]), initial=0.0) / max(float(t[-4] - t[3]), 1e-300)
    if m and not np.all(np.abs(slope) > 1e-8 * max(scale, 1e-300)):
        raise unsupported(_SPROOT, "a zero where the spline's slope is 0 (a double zero or a flat piece): "
                          "it has no derivative there", "differentiate where the zeros are simple")
    return m, nk1, B, slope


@registry.frule(_dfit.sproot)
def sproot_frule(tangents, t, c, *rest):
    out = _dfit.sproot(t, c, *rest)
    tt, tc = (tuple(tangents) + (None,) * 2)[:2]
    if _SPROOT_T.refuses(tt, t):
        raise _SPROOT_T.error()
    if tc is None:
        return out, None
    m, nk1, B, slope = _sproot_parts(t, c, out, tc)
    dz = np.zeros(np.shape(out[0]))
    dz[:m] = -(B @ np.asarray(tc, dtype=float)[:nk1]) / slope
    return out, (dz, None, None)


@registry.adjoint(_dfit.sproot)
def sproot_adjoint(dy, y, t, c, *rest):
    g = None if dy is None else dy[0]
    grads = [None] * (2 + len(rest))
    if _is_float(t):
        grads[0] = _SPROOT_T.cotangent()
    if g is None:
        return tuple(grads)
    m, nk1, B, slope = _sproot_parts(t, c, y, g)
    gc = np.zeros(np.shape(c))
    gc[:nk1] = -B.T @ (np.asarray(g, dtype=float)[:m] / slope)
    grads[1] = match_primal(gc, c)
    return tuple(grads)


registry.sparsity(DENSE, _dfit.sproot)


# -- regrid_smth(x, y, z, [xb, xe, yb, ye, kx, ky, s, maxit]) -> (nx, tx, ny, ty, c, fp, ier): a spline
#    surface fitted to values z on the grid x × y (RectBivariateSpline). Where it is a least-squares surface
#    on its knots (s = 0: interpolation, ier = -1; the polynomial, ier = -2; knots accepted with |fp - s| <
#    0.001 s), C = Bx^+ Z By^+T is linear in z; a smoothing surface (FITPACK's iteration on p) is refused; the
#    sites and the bounds refused (the knots move). ---------------------------------------------------------

_REGRID = "scipy.interpolate.RectBivariateSpline (FITPACK regrid_smth)"
_REGRID_XY = _refusal(_REGRID, "x, y (the grid's sites)")
_REGRID_B = _refusal(_REGRID, "the bounds (bbox)")
_REGRID_NAMES = ("x", "y", "z", "xb", "xe", "yb", "ye", "kx", "ky", "s", "maxit")


class _Grid:
    def __init__(self, values, out):
        _first_order(_REGRID, values.get("z"), values.get("x"), values.get("y"))
        nx, tx, ny, ty, c, fp, ier = out
        kx, ky = int(values.get("kx", 3)), int(values.get("ky", 3))
        s = float(values.get("s", 0.0) or 0.0)
        x, y = np.asarray(values["x"], dtype=float), np.asarray(values["y"], dtype=float)
        Z = np.asarray(values["z"], dtype=float).reshape(len(x), len(y))
        Bx, By = _design(tx[:nx], kx, x), _design(ty[:ny], ky, y)
        self.Px, self.Py = np.linalg.pinv(Bx), np.linalg.pinv(By)
        C = self.Px @ Z @ self.Py.T
        self.R = Z - Bx @ C @ By.T
        fp_inf = float(np.sum(self.R ** 2))
        if not (ier in (-1, -2) or s == 0.0 or (ier == 0 and abs(fp_inf - s) < _TOL * s)):
            raise unsupported(_REGRID, "a smoothing surface (s > 0, FITPACK's iteration on p) in z",
                              "fit with s=0 (interpolation), or with fixed knots (LSQBivariateSpline is refused "
                              "too: evaluate `BSpline.design_matrix` products for a fixed-knot fit)")
        c_fit = np.asarray(c, dtype=float)[:C.size]
        if not np.allclose(C.ravel(), c_fit, rtol=0.0, atol=_CHECK * max(1.0, float(np.max(np.abs(c_fit), initial=0.0)))):
            raise unsupported(_REGRID, "this fit: the coefficients recomputed from FITPACK's knots differ from "
                              "FITPACK's", "fit with s=0")
        self.shape, self.nc, self.zshape = C.shape, len(c), Z.shape


def _regrid_values(args, kwargs):
    values = dict(zip(_REGRID_NAMES, args))
    values.update({k: v for k, v in kwargs.items() if k in _REGRID_NAMES})
    return values


@registry.frule(_dfit.regrid_smth)
def regrid_smth_frule(tangents, *args, **kwargs):
    out = _dfit.regrid_smth(*args, **kwargs)
    values = _regrid_values(args, kwargs)
    tangents = dict(zip(_REGRID_NAMES, tuple(tangents)))
    for name in ("x", "y"):
        if _REGRID_XY.refuses(tangents.get(name), values[name]):
            raise _REGRID_XY.error()
    for name in ("xb", "xe", "yb", "ye"):
        if name in values and _REGRID_B.refuses(tangents.get(name), values[name]):
            raise _REGRID_B.error()
    tz = tangents.get("z")
    if tz is None:
        return out, None
    _first_order(_REGRID, tz)
    g = _Grid(values, out)
    dZ = np.asarray(tz, dtype=float).reshape(g.zshape)
    dc = np.zeros(g.nc)
    dC = g.Px @ dZ @ g.Py.T
    dc[:dC.size] = dC.ravel()
    return out, (None, None, None, None, dc, float(2 * np.sum(g.R * dZ)), None)


@registry.rrule(_dfit.regrid_smth)
def regrid_smth_rrule(*args, **kwargs):
    out = _dfit.regrid_smth(*args, **kwargs)
    values = _regrid_values(args, kwargs)
    snapshot = tuple(np.array(v, copy=True) if isinstance(v, np.ndarray) else v for v in out)

    def regrid_smth_pullback(dy):
        d = tuple(dy) if dy is not None else (None,) * 7
        grads = {}
        for name in ("x", "y"):
            if _is_float(values[name]):
                grads[name] = _REGRID_XY.cotangent()
        for name in ("xb", "xe", "yb", "ye"):
            if name in values and _is_float(values[name]):
                grads[name] = _REGRID_B.cotangent()
        if d[4] is not None or d[5] is not None:
            _first_order(_REGRID, d[4], d[5])
            g = _Grid(values, snapshot)
            gZ = np.zeros(g.zshape)
            if d[4] is not None:
                dC = np.asarray(d[4], dtype=float)[:g.shape[0] * g.shape[1]].reshape(g.shape)
                gZ += g.Px.T @ dC @ g.Py
            if d[5] is not None:
                gZ += 2 * g.R * float(d[5])
            grads["z"] = match_primal(gZ.ravel(), values["z"])
        positional = tuple(grads.get(name) for name in _REGRID_NAMES[:len(args)])
        keywords = {k: grads[k] if k in grads else _zero_like(v) for k, v in kwargs.items()
                    if k in _REGRID_NAMES and _is_float(v)}
        return positional + ((keywords,) if keywords else ())
    return out, regrid_smth_pullback


registry.sparsity(DENSE, _dfit.regrid_smth)
registry.set(_dfit.regrid_smth, positional=_REGRID_NAMES)
