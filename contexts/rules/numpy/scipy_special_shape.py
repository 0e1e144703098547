"""Partial derivatives of scipy.special's functions in a shape or order parameter, which have no closed form:
computed numerically, and refused (`NotReached`, a `NoDerivative`) wherever the estimated error exceeds
`TOLERANCE` (1e-10) of the value, or of the envelope of a function oscillating in its order. Refuse, never
lie. `scipy_special` registers them (`shape_rule`); tests/contexts/test_special_shape.py measures them
against mpmath at 30+ digits.

The integrals are taken by a double-exponential rule vectorised over the arguments (`_de`: tanh-sinh on a
finite interval, exp-sinh on a half line, the step halved until two steps agree to TOLERANCE), falling back
to `scipy.integrate.quad` (epsrel 1e-12) for the arguments where it does not settle. Each integrand is made
to be of one sign (no cancellation) and smooth (the variable chosen to absorb endpoint singularities):

- `gammainc_da`: dP/da, P(a, x) the regularized lower incomplete gamma. For ln x <= psi(a + 1), the series
  P = x^a e^-x / Gamma(a + 1) sum_n x^n / (a + 1)_n differentiated term by term (every term of one sign);
  above, -int_x^inf t^(a-1) e^-t (ln t - psi(a)) dt / Gamma(a), positive there (the complement integral: no
  1 - P is ever formed).
- `betainc_da`, `betainc_db`: dI/da, dI/db, I(a, b, x) the regularized incomplete beta: int_0^x or -int_x^1 of
  t^(a-1) (1-t)^(b-1) (ln t - psi(a) + psi(a + b)) / B(a, b) (for b: ln(1 - t) - psi(b) + psi(a + b)),
  whichever side keeps the integrand of one sign; split at the mode, in w = a ln(m / t) below it and
  w = b ln((1 - m) / (1 - t)) above (the factor t^a or (1 - t)^b becomes e^-w).
- `stdtr_ddf`: dF/ddf of Student's t CDF, int_0^|t| f d(log f)/ddf ds or -int_|t|^inf of it (one sign each).
- Bessel functions in the order v, for real x > 0 only (the representations below need it; elsewhere
  refused): `kve_dv` (K_v = int_0^inf e^(-x cosh t) cosh(v t) dt, so int e^(-x cosh t) t sinh(v t) dt);
  `ive_dv` (v > 1/2: the steepest descent path of I_v's Schlaefli integral, where the integrand is
  positive, dI/dv = -(1/pi) int_0^pi e^F (u + theta u') dtheta; 0 < v <= 1/2: DLMF 10.32.4 differentiated;
  v < 0: I_-m = I_m + (2/pi) sin(m pi) K_m; v = 0: -K_0); `jv_dv` (0 < x < v: J_v's steepest descent path,
  as I_v's; otherwise DLMF 10.9.6 differentiated, by quad: its integral oscillates); `yv_dv` (DLMF 10.9.7
  differentiated, by quad).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import scipy.special as sc
from scipy.integrate import quad

from ..registry import NoClosedForm, NoDerivative

__all__ = ["TOLERANCE", "NotReached", "Numerical", "gammainc_da", "betainc_da", "betainc_db", "stdtr_ddf",
           "kve_dv", "ive_dv", "jv_dv", "yv_dv"]

TOLERANCE = 1e-10
"""The largest estimated error, relative to the value (or to the envelope of an oscillating function), that
a numerical partial returns; above it, refused."""

_PI = math.pi
_HALF_PI = math.pi / 2


class NotReached(NoClosedForm):
    """The refusal of a partial computed numerically, where it cannot be computed to `TOLERANCE`: its
    `reason` says why (arguments outside the representation used, a derivative of the derivative, an
    integral that did not converge)."""

    __slots__ = ("reason",)

    def __init__(self, function: str, argument: str, position: int, reason: str) -> None:
        super().__init__(function, argument, position,
                         fix=f"keep {argument} constant where this happens (it is then not differentiated), or "
                             f"differentiate {function} in {argument} with contexts.rules.check.numerical_gradient")
        self.reason = reason

    def error(self) -> NoDerivative:
        e = NoDerivative(f"the derivative of {self.function} in its argument {self.argument} has no closed form, and "
                         f"the rules' numerical one {self.reason}: refused rather than an inaccurate number",
                         fix=self.fix, where=self.where)
        e.refusal = self
        return e

    def cotangent(self):
        """The refusal as reverse mode's unknown cotangent (`NoClosedForm.cotangent`), keeping the reason."""
        placed = super().cotangent()
        reason = NotReached(self.function, self.argument, self.position, self.reason)
        reason.where = placed.why.where
        placed.why = reason
        return placed


class Numerical:
    """A partial `p(y, *args)` (the `ufunc_rule` form) computed by `compute(p, y, *args)` on the broadcast float
    arrays (p, itself, for its refusals; y, the value, for inverse functions), returned as a float or a float
    array. Where it cannot be had it raises `NotReached`'s `NoDerivative`: forward mode's refusal;
    `scipy_special.shape_rule`'s adjoint turns it into an unknown cotangent, which reverse mode drops where
    the argument is not differentiated. Duals (a derivative of this derivative), complex and object values
    are refused: the numerics run on floats."""

    __slots__ = ("function", "argument", "position", "compute")

    def __init__(self, function: str, argument: str, position: int, compute: Callable) -> None:
        self.function, self.argument, self.position, self.compute = function, argument, position, compute

    def refuse(self, reason: str):
        raise NotReached(self.function, self.argument, self.position, reason).error()

    def __call__(self, y, *args):
        floats = []
        for v in (y,) + args:
            if type(v).__name__ == "Dual":
                self.refuse("has no derivative itself (a second derivative in it is not computed)")
            try:
                a = np.asarray(v)
                if a.dtype.kind == "c":
                    self.refuse("is computed for real arguments only, and one is complex")
                floats.append(a.astype(np.float64))
            except (TypeError, ValueError):
                held = type(np.ravel(a)[0]).__name__ if a.dtype.kind == "O" and a.size else type(v).__name__
                self.refuse(f"is computed on floats, and an argument holds a {held}")
        with np.errstate(all="ignore"):
            out = np.asarray(self.compute(self, *np.broadcast_arrays(*floats)), dtype=np.float64)
        return out[()] if out.ndim == 0 else out


def _map(p: Numerical, kernel: Callable, *columns: np.ndarray) -> np.ndarray:
    """kernel(*1-D float arrays) -> (values, accurate) over the broadcast arrays, once per distinct tuple of
    arguments; refused (naming the first such arguments) where one is not accurate."""
    shape = columns[0].shape
    if not columns[0].size:
        return np.empty(shape)
    if columns[0].size == 1:
        rows, inverse = np.array([[c.item() for c in columns]]), np.zeros(1, int)
    else:
        rows, inverse = np.unique(np.stack([c.ravel() for c in columns], axis=1), axis=0, return_inverse=True)
    with np.errstate(all="ignore"):
        values, accurate = kernel(*rows.T)
    if not np.all(accurate):
        at = ", ".join(f"{v!r}" for v in rows[np.flatnonzero(~accurate)[0]].tolist())
        p.refuse(f"did not reach a relative accuracy of {TOLERANCE:g} at the arguments ({at})")
    return values[inverse.reshape(-1)].reshape(shape)


# -- quadrature: a double-exponential rule over all the arguments at once; quad where it does not settle -----

_DE_T = 4.0  # (the rules' range in t: x within e^-85 of a finite end, from e^-43 to e^43 on a half line)
_CHUNK = 2048


def _de_level(t: np.ndarray) -> tuple:
    """The map's factors at steps t, once: (t, pi/2 cosh t, s = (1 + tanh u) / 2, 1 - s, e^u), u = pi/2 sinh t."""
    u = _HALF_PI * np.sinh(t)
    return t, _HALF_PI * np.cosh(t), 1 / (1 + np.exp(-2 * u)), 1 / (1 + np.exp(2 * u)), np.exp(u)


# the first evaluation on the grid of step 1/16 (the sums of steps 1/2 to 1/16 are its strided sums), then the
# new nodes of steps 1/32 to 1/256 (odd multiples)
_DE_FIRST = _de_level(np.arange(-64, 65) / 16)
_DE_FINER = [(2.0 ** -k, _de_level(np.arange(-_DE_T * 2 ** k + 1, _DE_T * 2 ** k, 2) / 2 ** k)) for k in range(5, 9)]


def _de_map(level: tuple, lo: np.ndarray, hi: np.ndarray, scale: np.ndarray) -> tuple:
    """(nodes, weights) of a level on each [lo, hi] (tanh-sinh) or [lo, inf) (exp-sinh, x = lo + scale e^u)."""
    t, du, s, s_comp, eu = level
    infinite = np.isinf(hi)[:, None]
    length = np.where(infinite[:, 0], 0.0, hi - lo)[:, None]
    lo, hi = lo[:, None], hi[:, None]
    finite_x = np.where(t < 0, lo + length * s, hi - length * s_comp)  # (each end without cancellation)
    e = scale[:, None] * eu
    return (np.where(infinite, lo + e, finite_x),
            np.where(infinite, e * du, length * (2 * s * s_comp * du)))


def _de(f: Callable, lo: np.ndarray, hi: np.ndarray, scale: np.ndarray, rows: np.ndarray) -> tuple:
    """(integrals, error bounds, settled) of f(nodes, rows) over [lo, hi] for the given rows, the step halved
    until two steps agree to TOLERANCE, and better than the two before. f takes nodes of shape (len(rows), k)
    and the rows' indices into its parameters."""
    n = len(rows)
    err = np.full(n, np.inf)
    nodes, weights = _de_map(_DE_FIRST, lo, hi, scale)
    values = f(nodes, rows) * weights
    bad = ~np.isfinite(values).all(axis=1)
    values[bad] = 0.0
    sums = [values[:, ::step].sum(axis=1) * step / 16 for step in (4, 2, 1)]  # (steps 1/4, 1/8, 1/16)
    total = sums[2]
    previous_gap, gap = np.abs(sums[1] - sums[0]), np.abs(sums[2] - sums[1])
    settled = ~bad & (((gap <= TOLERANCE * np.abs(total)) & (gap <= previous_gap)) | (total == 0) & (sums[1] == 0))
    err[settled] = gap[settled]
    live = np.flatnonzero(~settled & ~bad)
    for h, level in _DE_FINER:
        if not live.size:
            break
        nodes, weights = _de_map(level, lo[live], hi[live], scale[live])
        values = f(nodes, rows[live]) * weights
        bad = ~np.isfinite(values).all(axis=1)
        new = total[live] / 2 + h * np.where(bad, 0.0, values.sum(axis=1))
        gap = np.abs(new - total[live])
        done = ~bad & (gap <= TOLERANCE * np.abs(new)) & (gap <= previous_gap[live])
        err[live[done]] = gap[done]
        settled[live[done]] = True
        previous_gap[live], total[live] = gap, new
        live = live[~bad & ~done]
    return total, err, settled


def _quad(f: Callable, lo: float, hi: float, limit: int = 400) -> tuple:
    """(integral, error estimate) by quad, epsabs 0; where its subdivisions ran out, the error is the value."""
    result = quad(f, lo, hi, epsabs=0, epsrel=1e-12, limit=limit, full_output=1)
    value, err = result[0], result[1]
    if len(result) > 3 and result[2].get("last", 0) >= limit:
        err = max(err, abs(value))
    return value, err


def _integrate(f: Callable, n: int, lo, hi, scale=1.0) -> tuple:
    """(integrals, absolute error estimates) of f(nodes, rows) over [lo_i, hi_i] (hi_i may be inf) for the
    rows i < n: `_de`, then quad for the rows it leaves, on the same f one node at a time."""
    lo, hi, scale = (np.broadcast_to(np.asarray(v, dtype=float), (n,)) for v in (lo, hi, scale))
    total, err = np.zeros(n), np.full(n, np.inf)
    for start in range(0, n, _CHUNK):
        rows = np.arange(start, min(start + _CHUNK, n))
        v, e, settled = _de(f, lo[rows], hi[rows], scale[rows], rows)
        total[rows], err[rows] = v, e
        for i in rows[~settled]:
            one = np.array([i])
            total[i], err[i] = _quad(lambda w: float(f(np.array([[w]]), one)[0, 0]), float(lo[i]), float(hi[i]))
    return total, err


def _accurate(values: np.ndarray, err: np.ndarray, envelope=0.0) -> np.ndarray:
    """err is within TOLERANCE of the value (or of the envelope); an infinite value is one beyond the doubles
    (`_scaled`'s), as the function's own."""
    return np.isinf(values) | (err <= TOLERANCE * np.maximum(np.abs(values), envelope))


def _scaled(mantissa: np.ndarray, log_scale: np.ndarray) -> np.ndarray:
    """mantissa e^log_scale, infinite (not an overflow warning's NaN) beyond the doubles."""
    with np.errstate(all="ignore"):
        log = np.log(np.abs(mantissa)) + log_scale
        return np.where(mantissa == 0, 0.0, np.copysign(np.exp(np.minimum(log, 710.0)), mantissa))


# -- the regularized incomplete gamma P(a, x) in a ----------------------------------------------------------

_SERIES_TERMS = 5000
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _log_density(a, x):
    """log(x^(a-1) e^-x / Gamma(a)), for a >= 10 by Stirling's series about x = a: the direct sum of terms
    of size a log x loses eps a log x (1e-9 relative at a = 1e6)."""
    a, x = np.asarray(a, dtype=float), np.asarray(x, dtype=float)
    large = a >= 10
    b = np.where(large, a, 10.0)
    near = np.abs(x - b) < 0.5 * b
    log_ratio = np.where(near, np.log1p((x - b) / b), np.log(x / b))  # (log1p only near 1: exact there)
    stirling = ((b - 1) * log_ratio - (x - b) - 0.5 * np.log(b) - _HALF_LOG_2PI
                - (1 / 12 - (1 / 360 - (1 / 1260 - 1 / (1680 * b * b)) / (b * b)) / (b * b)) / b)
    return np.where(large, stirling, (a - 1) * np.log(x) - x - sc.gammaln(a))


def _gamma_series(a: np.ndarray, x: np.ndarray) -> tuple:
    """(dP/da, converged) by the series, where ln x <= psi(a + 1): D (S (ln x - psi(a + 1)) - T), D = x^a e^-x
    / Gamma(a + 1), S = sum c_n, T = sum c_n H_n, c_n = x^n / (a + 1)_n, H_n = sum_k<=n 1 / (a + k). One pair
    of arguments is summed as numpy scalars (an array's overhead per term is the time of a scalar call)."""
    one = a.size == 1
    if one:
        a, x = a[0], x[0]
    f = np.log(x) - sc.digamma(a + 1)  # (<= 0: both parts of one sign)
    c, s, t, h = 1.0 + 0 * a, 1.0 + 0 * a, 0 * a, 0 * a
    done = False
    for n in range(1, _SERIES_TERMS + 1):
        an = a + n
        c = c * (x / an)
        h = h + 1 / an
        s, t = s + c, t + c * h
        if n % 8 == 0:  # (the rest of the sum is below the term over 1 - r, r = x / (a + n + 1) < 1 the ratio)
            done = c * (h + np.abs(f)) <= 1e-17 * (1 - x / (an + 1)) * (s * np.abs(f) + t)
            if np.all(done):
                break
    value = x / a * np.exp(_log_density(a, x)) * (s * f - t)  # (D = x/a x^(a-1) e^-x / Gamma(a))
    return (np.array([value]), np.array([done])) if one else (value, done)


def _gamma_integral(a: np.ndarray, x: np.ndarray, upper: np.ndarray) -> tuple:
    """(dP/da, accurate) by integrals: where upper, -int_x^inf t^(a-1) e^-t (ln t - psi(a)) dt / Gamma(a) (positive
    for ln x > psi(a)) in w = (t - x) / width; elsewhere (the series too long, a beyond 3e5) int_0^x of it in
    u = x - t. x^(a-1) e^-x / Gamma(a) taken out."""
    base, am1 = np.log(x) - sc.digamma(a), a - 1
    width = np.where(upper, 1 / ((1 - am1 / x) + np.sqrt(np.maximum(am1, 0.0)) / x), 1.0)
    sign = np.where(upper, 1.0, -1.0)

    def integrand(w, i):
        l1 = np.log1p(sign[i, None] * width[i, None] * w / x[i, None])
        return np.exp(am1[i, None] * l1 - sign[i, None] * width[i, None] * w) * (base[i, None] + l1)
    value, err = _integrate(integrand, len(a), 0.0, np.where(upper, np.inf, x))
    front = np.exp(_log_density(a, x)) * width
    return -sign * front * value, _accurate(value, err) | (front == 0)


def _gamma_kernel(a: np.ndarray, x: np.ndarray) -> tuple:
    """dP(a, x)/da; NaN outside a > 0, x >= 0, 0 at x = 0 and x = inf."""
    out = np.full(a.shape, np.nan)
    accurate = np.ones(a.shape, bool)
    valid = (a > 0) & np.isfinite(a) & (x >= 0)
    out[valid & ((x == 0) | (x == np.inf))] = 0.0
    inner = valid & (x > 0) & np.isfinite(x)
    lower = inner & (np.log(np.where(inner, x, 1.0)) <= sc.digamma(a + 1))
    if lower.any():
        values, done = _gamma_series(a[lower], x[lower])
        out[lower] = values
        lower[lower] = done  # (those left: by the integral)
    rest = inner & ~lower
    if rest.any():
        upper = np.log(x[rest]) > sc.digamma(a[rest] + 1)
        out[rest], accurate[rest] = _gamma_integral(a[rest], x[rest], upper)
    return out, accurate


def gammainc_da(p: Numerical, a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """dP(a, x)/da elementwise (`_gamma_kernel`)."""
    return _map(p, _gamma_kernel, a, x)


# -- the regularized incomplete beta I(a, b, x) in a and b ---------------------------------------------------

def _beta_kernel(a: np.ndarray, b: np.ndarray, x: np.ndarray, of_a: bool) -> tuple:
    """dI(a, b, x)/da (of_a) or /db; NaN outside a, b > 0, 0 <= x <= 1; 0 at x = 0 and x = 1."""
    out = np.full(a.shape, np.nan)
    accurate = np.ones(a.shape, bool)
    valid = (a > 0) & (b > 0) & np.isfinite(a) & np.isfinite(b) & (x >= 0) & (x <= 1)
    out[valid & ((x == 0) | (x == 1))] = 0.0
    rows = np.flatnonzero(valid & (x > 0) & (x < 1))
    if not rows.size:
        return out, accurate
    a, b, x = a[rows], b[rows], x[rows]
    both = sc.digamma(a + b)
    if of_a:  # ln t + psi(a + b) - psi(a): negative below exp(psi(a) - psi(a + b))
        shift = both - sc.digamma(a)
        below = np.log(x) + shift <= 0
    else:  # ln(1 - t) + psi(a + b) - psi(b): positive below 1 - exp(psi(b) - psi(a + b))
        shift = both - sc.digamma(b)
        below = np.log1p(-x) + shift >= 0
    lo, hi = np.where(below, 0.0, x), np.where(below, x, 1.0)
    lb = sc.betaln(a, b)
    m = np.where((a >= 1) & (b >= 1) & (a + b > 2), (a - 1) / np.maximum(a + b - 2, 1e-300), a / (a + b))
    m = np.clip(m, 1e-300, 1 - 1e-16)
    lm, l1m = np.log(m), np.log1p(-m)
    # below m, w = a ln(m / t): t^a = m^a e^-w; above, w = b ln((1 - m) / (1 - t)). Each piece's factor is
    # largest at its first w (the mode, or the end nearer it): that maximum is taken out (`_scaled`)
    front_below, front_above = a * lm - np.log(a) - lb, b * l1m - np.log(b) - lb

    def below_m(w, i):
        lt = lm[i] - w / a[i]
        l1mt = np.log(-np.expm1(lt))
        return front_below[i] - w + (b[i] - 1) * l1mt, (lt if of_a else l1mt) + shift[i]

    def above_m(w, i):
        l1mt = l1m[i] - w / b[i]
        lt = np.log(-np.expm1(l1mt))
        return front_above[i] - w + (a[i] - 1) * lt, (lt if of_a else l1mt) + shift[i]
    n = len(rows)
    pieces = []
    for piece, part, w0, w1 in (
            (below_m, lo < m, a * (lm - np.log(np.minimum(hi, m))),
             a * (lm - np.log(np.where(lo > 0, lo, 1.0)))),
            (above_m, hi > m, b * (l1m - np.log1p(-np.maximum(lo, m))),
             b * (l1m - np.log1p(-np.where(hi < 1, hi, 0.0))))):
        index = np.flatnonzero(part)
        w0 = np.maximum(w0[index], 0.0)
        w1 = np.where((lo if piece is below_m else 1 - hi)[index] > 0, w1[index], np.inf)
        top = piece(w0, index)[0]

        def integrand(w, i, piece=piece, index=index, top=top):
            log, h = piece(w, index[i, None])
            return np.exp(log - top[i, None]) * h
        v, e = _integrate(integrand, len(index), w0, w1)
        full = np.zeros((3, n))
        full[0, index], full[1, index], full[2] = v, e, -np.inf
        full[2, index] = top
        pieces.append(full)
    largest = np.maximum(pieces[0][2], pieces[1][2])
    total = sum(q[0] * np.exp(q[2] - largest) for q in pieces)
    err = sum(q[1] * np.exp(q[2] - largest) for q in pieces)
    out[rows] = _scaled(np.where(below, total, -total), largest)
    accurate[rows] = _accurate(total, err)
    return out, accurate


def betainc_da(p: Numerical, a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    return _map(p, lambda *c: _beta_kernel(*c, of_a=True), a, b, x)


def betainc_db(p: Numerical, a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    return _map(p, lambda *c: _beta_kernel(*c, of_a=False), a, b, x)


# -- Student's t CDF in its degrees of freedom ----------------------------------------------------------------

def _half_step_digamma(x: np.ndarray) -> np.ndarray:
    """psi(x + 1/2) - psi(x) - 1/(2x); for x >= 25 by its expansion sum_k (2 - 2^(1-k)) B_k / (k x^k), k = 2, 4,
    ... (the difference of the digammas cancels to 1/(8 x^2): 1e-9 lost at x = 500)."""
    y = 1 / (x * x)
    series = y * (1 / 8 - y * (1 / 64 - y * (1 / 128 - y * (17 / 2048 - y * 31 / 2048))))
    return np.where(x < 25, sc.digamma(x + 0.5) - sc.digamma(x) - 0.5 / x, series)


def _stdtr_kernel(df: np.ndarray, t: np.ndarray) -> tuple:
    """dF/ddf of stdtr(df, t) = 1/2 + sign(t) int_0^|t| f: f's log-derivative h(s) = (psi((df + 1)/2) - psi(df/2)
    - 1/df - log1p(s^2/df) + (df + 1) s^2 / (df (df + s^2))) / 2 is positive up to one |s|, negative beyond
    (int_0^inf f h = 0): int_0^|t| f h where h(|t|) >= 0, else -int_|t|^inf f h, in s = |t| e^w; f(|t|) |t|
    taken out of the tail."""
    out = np.full(df.shape, np.nan)
    accurate = np.ones(df.shape, bool)
    valid = (df > 0) & np.isfinite(df) & ~np.isnan(t)
    out[valid & ((t == 0) | np.isinf(t))] = 0.0
    rows = np.flatnonzero(valid & (t != 0) & np.isfinite(t))
    if not rows.size:
        return out, accurate
    df, t = df[rows], t[rows]
    c = _half_step_digamma(df / 2)  # (psi((df + 1)/2) - psi(df/2) - 1/df)
    log_norm = sc.gammaln((df + 1) / 2) - sc.gammaln(df / 2) - 0.5 * np.log(df * _PI)
    log_s0 = np.log(np.abs(t))

    def terms(log_s, i):  # (log(1 + q), 2 h), q = s^2 / df, in logarithms (s reaches e^700 in the tail)
        log_q = 2 * log_s - np.log(df[i])
        lq = np.maximum(log_q, 0.0) + np.log1p(np.exp(-np.abs(log_q)))
        return lq, c[i] - lq + (df[i] + 1) / df[i] * sc.expit(log_q)

    lq0, h0 = terms(log_s0, np.arange(len(rows)))
    tail = h0 < 0
    value, err = np.zeros(len(rows)), np.zeros(len(rows))
    top = np.where(tail, log_norm - (df + 1) / 2 * lq0 + log_s0, 0.0)
    if (~tail).any():
        index = np.flatnonzero(~tail)

        def inner(s, i):  # f(s) h(s) on [0, |t|]
            j = index[i, None]
            lq, h2 = terms(np.log(s), j)
            return np.exp(log_norm[j] - (df[j] + 1) / 2 * lq) * 0.5 * h2
        value[~tail], err[~tail] = _integrate(inner, len(index), 0.0, np.abs(t[~tail]))
    if tail.any():
        index = np.flatnonzero(tail)

        def beyond(w, i):  # -f(s) h(s) s e^-top, s = |t| e^w
            j = index[i, None]
            log_s = log_s0[j] + w
            lq, h2 = terms(log_s, j)
            return -np.exp(log_norm[j] - (df[j] + 1) / 2 * lq + log_s - top[j]) * 0.5 * h2
        value[tail], err[tail] = _integrate(beyond, len(index), 0.0, np.inf)
    out[rows] = np.copysign(_scaled(value, top), t)
    accurate[rows] = _accurate(value, err)
    return out, accurate


def stdtr_ddf(p: Numerical, df: np.ndarray, t: np.ndarray) -> np.ndarray:
    return _map(p, _stdtr_kernel, df, t)


# -- Bessel functions in their order, real x > 0 --------------------------------------------------------------

def _positive_x(p: Numerical, x: np.ndarray) -> None:
    if np.any(x <= 0):
        p.refuse("is computed for x > 0 only (by an integral representation that holds there), and x <= 0 here")


def _kve_parts(v: np.ndarray, x: np.ndarray) -> tuple:
    """d/dv e^x K_v(x) as (mantissa, log scale, absolute error of the mantissa): int_0^inf e^(-x (cosh t - 1))
    t sinh(|v| t) dt (odd in v), its integrand in logarithms about its peak (sinh t = |v| / x), in two
    pieces meeting there."""
    mu = np.abs(v)
    peak = np.arcsinh(mu / x)

    def phi(t, i=slice(None)):
        return -2 * x[i] * np.sinh(t / 2) ** 2 + mu[i] * t
    top = phi(peak)

    def integrand(t, i):
        i2 = i[:, None]
        return np.exp(phi(t, i2) - top[i2]) * t * -np.expm1(-2 * mu[i2] * t) / 2
    width = 1 / np.sqrt(x * np.cosh(peak))
    left, e1 = _integrate(integrand, len(v), 0.0, peak)
    right, e2 = _integrate(integrand, len(v), peak, np.inf, width)
    value = np.where(mu == 0, 0.0, left + right)
    return np.copysign(value, v), top, e1 + e2


def _kve_kernel(v: np.ndarray, x: np.ndarray, unscaled: bool) -> tuple:
    out = np.where(np.isinf(x) & ~np.isnan(v), 0.0, np.nan)
    accurate = np.ones(v.shape, bool)
    rows = np.isfinite(v) & np.isfinite(x)
    if rows.any():
        m, log_scale, err = _kve_parts(v[rows], x[rows])
        out[rows] = _scaled(m, log_scale - (x[rows] if unscaled else 0.0))
        accurate[rows] = _accurate(m, err)
    return out, accurate


def kve_dv(p: Numerical, v: np.ndarray, x: np.ndarray, unscaled: bool = False) -> np.ndarray:
    """d/dv of kve(v, x) (of kv with unscaled=True)."""
    _positive_x(p, x)
    return _map(p, lambda v, x: _kve_kernel(v, x, unscaled), v, x)


def _descent(v: np.ndarray, x: np.ndarray, first_kind: bool) -> tuple:
    """d/dv of I_v(x) (first_kind False, v > 0) or J_v(x) (first_kind True, 0 < x < v) as (mantissa, log
    scale, absolute error of the mantissa): the Schlaefli integral on its steepest descent path w = u(theta) +
    i theta, where sinh u = v theta / (x sin theta) (cosh u for J) and the integrand e^F, F = x cosh u cos
    theta - v u (x sinh u cos theta - v u), is real and positive: d/dv = -(1/pi) int_0^pi e^F (u + theta u')
    dtheta."""
    r = v / x
    if first_kind:
        u0 = np.arccosh(r)
        f0 = np.sqrt((v - x) * (v + x)) - v * u0
    else:
        u0 = np.arcsinh(r)
        f0 = np.hypot(x, v) - v * u0

    def integrand(th, i):
        vi, xi, ri = v[i, None], x[i, None], r[i, None]
        s = np.sin(th)
        small = th < 1e-3
        t2 = th * th
        th_minus_s = np.where(small, th * t2 * (1 / 6 - t2 / 120 + t2 * t2 / 5040), th - s)  # (no cancellation)
        s_minus_th_c = np.where(small, th * t2 * (1 / 3 - t2 / 30 + t2 * t2 / 840), s - th * np.cos(th))
        g_minus_1 = ((vi - xi) * th + xi * th_minus_s) / (xi * s)
        dg = ri * s_minus_th_c / (s * s)
        if first_kind:  # cosh u = g
            sinh_u = np.sqrt(g_minus_1 * (g_minus_1 + 2))
            u = np.log1p(g_minus_1 + sinh_u)
            du = np.where(sinh_u > 0, dg / np.where(sinh_u > 0, sinh_u, 1.0), 1 / math.sqrt(3))  # (v = x, th = 0)
            f = xi * sinh_u * np.cos(th) - vi * u
        else:  # sinh u = g
            g = g_minus_1 + 1
            u = np.arcsinh(g)
            du = dg / np.sqrt(1 + g * g)
            f = xi * np.cosh(u) * np.cos(th) - vi * u
        return np.exp(np.maximum(f - f0[i, None], -745.0)) * np.where(f - f0[i, None] > -745, u + th * du, 0.0)
    value, err = _integrate(integrand, len(v), 0.0, _PI)
    return -value / _PI, f0, err / _PI


def _ive_standard(v: np.ndarray, x: np.ndarray) -> tuple:
    """(d/dv of e^-x I_v(x), absolute error), 0 < v <= 1/2, by DLMF 10.32.4 differentiated: -(1/pi) int_0^pi
    e^(x (cos t - 1)) t sin(v t) dt + int_0^inf e^(-x (cosh t + 1) - v t) (t sin(v pi) / pi - cos(v pi)) dt."""
    a, ea = _integrate(lambda t, i: np.exp(x[i, None] * (np.cos(t) - 1)) * t * np.sin(v[i, None] * t), len(v), 0.0,
                        _PI)
    cv, sv = np.cos(v * _PI), np.sin(v * _PI)

    def second(t, i):
        i2 = i[:, None]
        return np.exp(-x[i2] * (np.cosh(t) + 1) - v[i2] * t) * (t * sv[i2] / _PI - cv[i2])
    b, eb = _integrate(second, len(v), 0.0, np.inf)
    return -a / _PI + b, ea / _PI + eb


def _ive_positive(v: np.ndarray, x: np.ndarray) -> tuple:
    """(d/dv e^-x I_v(x), absolute error) for v > 0."""
    out, err = np.empty(v.shape), np.empty(v.shape)
    big = v > 0.5
    if big.any():
        m, log_scale, e = _descent(v[big], x[big], first_kind=False)
        out[big], err[big] = _scaled(m, log_scale - x[big]), _scaled(e, log_scale - x[big])
    if (~big).any():
        out[~big], err[~big] = _ive_standard(v[~big], x[~big])
    return out, err


def _ive_kernel(v: np.ndarray, x: np.ndarray, unscaled: bool) -> tuple:
    """d/dv of e^-x I_v(x) (of I_v(x): unscaled), x > 0."""
    out = np.where(np.isinf(x) & ~np.isnan(v), np.nan if unscaled else 0.0, np.nan)
    accurate = np.ones(v.shape, bool)
    rows = np.isfinite(v) & np.isfinite(x)
    vr, xr = v[rows], x[rows]
    value, err = np.zeros(vr.shape), np.zeros(vr.shape)
    envelope = np.zeros(vr.shape)
    positive, negative, zero = vr > 0, vr < 0, vr == 0
    if positive.any():
        value[positive], err[positive] = _ive_positive(vr[positive], xr[positive])
    value[zero] = -sc.k0e(xr[zero]) * np.exp(-2 * xr[zero])  # (DLMF 10.38.4: -K_0)
    if negative.any():
        # I_-m = I_m + (2/pi) sin(m pi) K_m, m = -v: d/dv = -(I_m' + 2 cos(m pi) K_m + (2/pi) sin(m pi) K_m')
        mu, xn = -vr[negative], xr[negative]
        di, ei = _ive_positive(mu, xn)
        k = sc.kve(mu, xn) * np.exp(-2 * xn)
        mk, log_k, ek = _kve_parts(mu, xn)
        dk, edk = _scaled(mk, log_k - 2 * xn), _scaled(ek, log_k - 2 * xn)
        terms = (di, 2 * np.cos(mu * _PI) * k, 2 / _PI * np.sin(mu * _PI) * dk)
        value[negative] = -(terms[0] + terms[1] + terms[2])
        err[negative] = ei + 2 / _PI * np.abs(np.sin(mu * _PI)) * edk + 1e-15 * sum(np.abs(t) for t in terms)
        envelope[negative] = sc.ive(mu, xn) + 2 * k  # (dI/dv oscillates in v here, as sin(m pi) K_m)
    if unscaled:
        value, err, envelope = (_scaled(q, xr) for q in (value, err, envelope))
    out[rows] = value
    accurate[rows] = _accurate(value, err, envelope)
    return out, accurate


def ive_dv(p: Numerical, v: np.ndarray, x: np.ndarray, unscaled: bool = False) -> np.ndarray:
    """d/dv of ive(v, x) = e^-|x| I_v(x) (of iv with unscaled=True)."""
    _positive_x(p, x)
    return _map(p, lambda v, x: _ive_kernel(v, x, unscaled), v, x)


def _tail(phi: Callable, t0: float, top: float) -> float:
    """A T > t0 where phi, concave and decreasing beyond t0, has fallen 750 below top (its maximum)."""
    step = 1.0
    while phi(t0 + step) > top - 750:
        step *= 2
    return t0 + step


def _exp_integral(x: float, v: float, weight: Callable, cosh_peak: float) -> tuple:
    """int_0^inf e^(-x sinh t + |v| t) weight(t, e^(-2|v| t)) dt as (mantissa, log scale, error): the
    exponential's peak (cosh t = |v| / x where that exceeds 1) taken out."""
    mu = abs(v)
    peak = math.acosh(cosh_peak) if cosh_peak > 1 else 0.0

    def phi(t):
        return -x * math.sinh(t) + mu * t if t < 700 else -math.inf
    top = phi(peak)

    def integrand(t):
        return math.exp(phi(t) - top) * weight(t, math.exp(-2 * mu * t))
    end = _tail(phi, peak, top)
    if peak:
        v1, e1 = _quad(integrand, 0.0, peak)
        v2, e2 = _quad(integrand, peak, end)
        return v1 + v2, top, e1 + e2
    value, err = _quad(integrand, 0.0, end)
    return value, top, err


def _oscillating(v: float, x: float, first_kind: bool) -> tuple:
    """(1/pi) int_0^pi t sin(x sin t - v t) dt (J's), or -(1/pi) int_0^pi t cos(x sin t - v t) dt (Y's), with its
    error."""
    if first_kind:
        value, err = _quad(lambda t: t * math.sin(x * math.sin(t) - v * t), 0.0, _PI, limit=4000)
    else:
        value, err = _quad(lambda t: -t * math.cos(x * math.sin(t) - v * t), 0.0, _PI, limit=4000)
    return value / _PI, err / _PI


def _jv_standard(v: float, x: float) -> tuple:
    """dJ_v(x)/dv by DLMF 10.9.6 differentiated, x > 0: (1/pi) int_0^pi t sin(x sin t - v t) dt + int_0^inf
    e^(-x sinh t - v t) (t sin(v pi) / pi - cos(v pi)) dt, with its error."""
    a, ea = _oscillating(v, x, first_kind=True)
    cv, sv = math.cos(v * _PI), math.sin(v * _PI)
    if v <= 0:  # e^(-v t) grows: its peak is the integrand's
        m, log_scale, eb = _exp_integral(x, v, lambda t, e: t * sv / _PI - cv, -v / x)
    else:
        m, log_scale, eb = _exp_integral(x, v, lambda t, e: e * (t * sv / _PI - cv), 0.0)
    return a + float(_scaled(np.array(m), log_scale)), ea + float(_scaled(np.array(eb), log_scale))


def _yv_standard(v: float, x: float) -> tuple:
    """dY_v(x)/dv by DLMF 10.9.7 differentiated, x > 0: -(1/pi) int_0^pi t cos(x sin t - v t) dt - (1/pi)
    int_0^inf e^(-x sinh t) (t e^(v t) - t e^(-v t) cos(v pi) - pi e^(-v t) sin(v pi)) dt, with its error."""
    a, ea = _oscillating(v, x, first_kind=False)
    cv, sv = math.cos(v * _PI), math.sin(v * _PI)
    if v >= 0:  # (e^(|v| t) is e^(v t), and e the other's ratio e^(-2 v t))
        def weight(t, e):
            return t - e * (t * cv + _PI * sv)
    else:
        def weight(t, e):
            return t * e - t * cv - _PI * sv
    m, log_scale, eb = _exp_integral(x, v, weight, abs(v) / x)
    return a - float(_scaled(np.array(m), log_scale)) / _PI, ea + float(_scaled(np.array(eb), log_scale)) / _PI


def _oscillating_kernel(v: np.ndarray, x: np.ndarray, first_kind: bool) -> tuple:
    """dJ_v(x)/dv or dY_v(x)/dv, x > 0, accurate to the envelope |H_v(x)| of their oscillation: J by the
    steepest descent integral where 0 < x < v (J is small there, and that integral of one sign)."""
    out = np.where(np.isinf(x) & ~np.isnan(v), 0.0, np.nan)
    accurate = np.ones(v.shape, bool)
    rows = np.isfinite(v) & np.isfinite(x)
    descent = rows & (0 < x) & (x < v) if first_kind else np.zeros(v.shape, bool)
    if descent.any():
        m, log_scale, e = _descent(v[descent], x[descent], first_kind=True)
        out[descent] = _scaled(m, log_scale)
        accurate[descent] = _accurate(m, e)
    for i in np.flatnonzero(rows & ~descent):
        value, err = (_jv_standard if first_kind else _yv_standard)(float(v[i]), float(x[i]))
        out[i] = value
        accurate[i] = _accurate(np.array(value), np.array(err), math.hypot(sc.jv(v[i], x[i]), sc.yv(v[i], x[i])))
    return out, accurate


def jv_dv(p: Numerical, v: np.ndarray, x: np.ndarray) -> np.ndarray:
    _positive_x(p, x)
    return _map(p, lambda v, x: _oscillating_kernel(v, x, True), v, x)


def yv_dv(p: Numerical, v: np.ndarray, x: np.ndarray) -> np.ndarray:
    _positive_x(p, x)
    return _map(p, lambda v, x: _oscillating_kernel(v, x, False), v, x)
