"""Rules for scipy.special's private distribution kernels (`scipy.special._ufuncs._binom_cdf` and kin: Boost's
distributions, which scipy.stats' `binom`, `nbinom`, `hypergeom`, `beta`, `skewnorm`, `cauchy`, `cosine`, `landau`,
`invgauss`, `ncx2`, `ncf`, `nct`, `kstwo`, `kstwobign` and the truncated distributions' `_log1mexp` call as `scu._...`).

Closed forms, each written with functions that have rules themselves (hessian differentiates the partials again):

- binom (`_binom_pmf`, `_binom_cdf`, `_binom_sf`) and nbinom (`_nbinom_pmf`, `_nbinom_cdf`, `_nbinom_sf`) in p, by Beta
  densities (d/dp binom.cdf(k; n, p) = -Beta(k + 1, n - k) density at p; the pmf's derivative a difference of two
  of them, finite at p in {0, 1} and k in {0, n}); nbinom's pmf also in its real n (digamma), its CDF and SF
  (I_p(n, k + 1)) numerically (`scipy_special_shape.betainc_da`: to 1e-10 or refused, no second derivative). k and
  n as counts (binom's k and n, nbinom's k) are `NoClosedForm`: refused where differentiated, never a zero. The
  kernels do not floor k (Boost's CDF is continuous in k): nor do the rules.
- the discrete quantiles (`_binom_ppf`, `_binom_isf`, `_nbinom_ppf`, `_nbinom_isf`) are step functions: zero in q
  and p, refused (`UnsupportedCase`) on a step (q equal to the CDF, or SF, at the result or one below, to 1e-12).
- hypergeom (`_hypergeom_pmf`, `_cdf`, `_sf`, `_mean`, `_variance`, `_skewness`): counts only, every argument refused.
- nbinom's moments (`_nbinom_mean`, `_variance`, `_skewness`, `_kurtosis_excess`) in n and p.
- beta: `_beta_pdf` in x, a and b (d/da log pdf = log x - psi(a) + psi(a + b)); `_beta_ppf` in q (1 / density)
  and in a and b by the implicit function theorem, -(dI/da) / density with dI/da numerical (as nbinom's n).
- skewnorm `_skewnorm_cdf(x, loc, scale, a)` in all four (dF/da = -exp(-(1 + a^2) z^2 / 2) / (pi (1 + a^2))), its
  `_skewnorm_ppf`/`_isf` in all four (implicitly: -(dF/dtheta) / density).
- `_cauchy_ppf`/`_isf`, `_cosine_cdf`/`_invcdf`, `_invgauss_ppf`/`_isf` (q, mean and shape: dF/dmu and dF/dlambda
  in closed form), `_landau_cdf`/`_sf`/`_ppf`/`_isf` (in x or q, loc and scale; Boost's scale shifts the location by
  2/pi log scale). `_landau_pdf` is refused in every argument (the density's derivative is an integral).
- noncentral: `_ncx2_pdf` in x and nc (f' = f (k/2 - 1) / x - f / 2 + nc / (2x) f(x; k + 2), df/dnc = (f(x; k + 2)
  - f) / 2), `_ncx2_sf`, `_ncx2_isf` in x/q and nc; `_ncf_pdf` in nc (its x refused: not derived), `_ncf_sf`,
  `_ncf_isf` in x/q and nc (dF/dnc = (F(dfn x / (dfn + 2); dfn + 2) - F) / 2); `_nct_pdf` in x and nc, `_nct_sf`,
  `_nct_isf` in x/q and nc (by E[S^m phi(t S - nc)], S = sqrt(V / df), as noncentral t densities of df + m - 1,
  and Stein's identity for m = 0). Their degrees of freedom (ncx2's k, ncf's dfn and dfd, nct's df) and `_ncf_pdf`'s
  x are refused everywhere: no partial of the noncentral functions in them is computed.
- moments: `_ncf_mean`, `_ncf_variance`, `_nct_mean`, `_nct_variance` in all their arguments; the skewness and
  kurtosis of ncf and nct refused.
- `_log1mexp(x)` = log(1 - e^x): -1 / expm1(-x). `_kolmogc`, `_kolmogci`, `_smirnovc`, `_smirnovci` by scipy's
  `_kolmogp`/`_smirnovp` (no rules: hessian refuses there), smirnov's n refused.
- `_gen_harmonic`, `_normalized_gen_harmonic` (zipfian): no closed form in any argument, refused.

Kernels missing from the installed scipy are skipped (`getattr` with a default).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special as sc

from ..registry import NoClosedForm
from ._util import unsupported
from .scipy_special import _beta_density, _inverse, shape_rule
from .scipy_special_shape import Numerical, betainc_da, betainc_db
from .ufuncs import ufunc_rule

__all__: list[str] = []

_u = sc._ufuncs
_PI = math.pi
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


def _k(name: str):
    """The private kernel `name` of the installed scipy, or None."""
    return getattr(_u, name, None)


def _no(name: str, *arguments: str, at: int = 0) -> tuple:
    """The refused partials of arguments at positions at, at + 1, ..."""
    return tuple(NoClosedForm(f"scipy.special._ufuncs.{name}", a, at + i) for i, a in enumerate(arguments))


def _rule(name: str, *partials) -> None:
    fn = _k(name)
    if fn is not None:
        ufunc_rule(fn, *partials, name=name)


def _phi(z):
    return _INV_SQRT_2PI * np.exp(-0.5 * z * z)


def _safe(cond, x, fill=1.0):
    """x where cond, fill elsewhere (arguments kept valid where the result is replaced)."""
    return np.where(cond, x, fill)


# -- binomial: d/dp cdf(k; n, p) = -Beta(k + 1, n - k) density at p; pmf' = Beta(k, n - k + 1) - Beta(k + 1, n - k) --

def _binom_dcdf(k, n, p):
    k = np.asarray(k)
    inside = (k >= 0) & (k < n)
    return np.where(inside, -_beta_density(_safe(inside, k + 1), _safe(inside, n - k), p), 0.0)


def _binom_dpmf(k, n, p):
    k = np.asarray(k)
    up = (k > 0) & (k <= n)          # the Beta(k, n - k + 1) term (0 at k = 0)
    down = (k >= 0) & (k < n)        # the Beta(k + 1, n - k) term (0 at k = n)
    return (np.where(up, _beta_density(_safe(up, k), _safe(up, n - k + 1), p), 0.0)
            - np.where(down, _beta_density(_safe(down, k + 1), _safe(down, n - k), p), 0.0))


_rule("_binom_pmf", *_no("_binom_pmf", "k", "n"), lambda y, k, n, p: _binom_dpmf(k, n, p))
_rule("_binom_cdf", *_no("_binom_cdf", "k", "n"), lambda y, k, n, p: _binom_dcdf(k, n, p))
_rule("_binom_sf", *_no("_binom_sf", "k", "n"), lambda y, k, n, p: -_binom_dcdf(k, n, p))


# -- negative binomial (k failures before the n-th success, n real): cdf = I_p(n, k + 1) ----------------------------

def _nbinom_dcdf(k, n, p):
    k = np.asarray(k)
    inside = k >= 0
    return np.where(inside, _beta_density(n, _safe(inside, k + 1), p), 0.0)


def _nbinom_dpmf(k, n, p):
    k = np.asarray(k)
    up = k > 0
    return _nbinom_dcdf(k, n, p) - np.where(up, _beta_density(n, _safe(up, k), p), 0.0)


def _nbinom_dn_cdf(p, k, n, q):
    """d/dn I_q(n, k + 1); 0 below k = 0 (the cdf is 0 there)."""
    inside = k >= 0
    return np.where(inside, betainc_da(p, n, np.where(inside, k + 1, 1.0), q), 0.0)


def _nbinom_dn(y, k, n, p):
    """d/dn pmf = pmf (psi(n + k) - psi(n) + log p), as Gamma(n + k) / Gamma(n) p^n (1 - p)^k / k!."""
    return y * (sc.digamma(n + k) - sc.digamma(n)) + sc.xlogy(y, p)


_rule("_nbinom_pmf", *_no("_nbinom_pmf", "k"), _nbinom_dn, lambda y, k, n, p: _nbinom_dpmf(k, n, p))
# in the real n: the cdf is I_p(n, k + 1), its n partial numerical (betainc_da); k a count (scipy.stats floors it)
if _k("_nbinom_cdf") is not None:
    shape_rule(_k("_nbinom_cdf"), *_no("_nbinom_cdf", "k"),
               Numerical("scipy.special._ufuncs._nbinom_cdf", "n", 1, lambda p, y, k, n, q: _nbinom_dn_cdf(p, k, n, q)),
               lambda y, k, n, p: _nbinom_dcdf(k, n, p), name="_nbinom_cdf")
if _k("_nbinom_sf") is not None:
    shape_rule(_k("_nbinom_sf"), *_no("_nbinom_sf", "k"),
               Numerical("scipy.special._ufuncs._nbinom_sf", "n", 1, lambda p, y, k, n, q: -_nbinom_dn_cdf(p, k, n, q)),
               lambda y, k, n, p: -_nbinom_dcdf(k, n, p), name="_nbinom_sf")

# moments of nbinom(n, p): mean n (1 - p) / p, variance n (1 - p) / p^2, skewness (2 - p) / sqrt(n (1 - p)),
# excess kurtosis 6 / n + p^2 / (n (1 - p))
_rule("_nbinom_mean", lambda y, n, p: (1 - p) / p, lambda y, n, p: -n / (p * p))
_rule("_nbinom_variance", lambda y, n, p: (1 - p) / (p * p), lambda y, n, p: n * (p - 2) / (p * p * p))
_rule("_nbinom_skewness", lambda y, n, p: -y / (2 * n), lambda y, n, p: p / (2 * (1 - p) * np.sqrt(n * (1 - p))))
_rule("_nbinom_kurtosis_excess", lambda y, n, p: -y / n, lambda y, n, p: p * (2 - p) / (n * (1 - p) * (1 - p)))


# -- the discrete quantiles: step functions of q and p -------------------------------------------------------------

def _steps(name: str, edge):
    """Zero partials in q and p, refused on a step: where `edge(y, n, p)` (the CDF at the result for ppf, the SF for
    isf) equals q, the result jumps when q or p moves; also where edge(y - 1) does, to 1e-12 (rounding)."""
    def partial(y, q, n, p):
        near = np.isclose(edge(y, n, p), q, rtol=1e-12, atol=0.0) | np.isclose(edge(y - 1, n, p), q, rtol=1e-12,
                                                                                atol=0.0)
        on = near & np.isfinite(y)  # (y - 1: q a rounding above the step, the result one past it)
        if np.any(on):
            raise unsupported(f"scipy.special._ufuncs.{name}", "a discrete quantile exactly on one of its steps "
                              "(q equal to the distribution function at the result: it jumps when q or p moves)",
                              "differentiate away from the step; the derivative is 0 between steps")
        return np.zeros(np.broadcast(y, q, n, p).shape)
    return partial


for _name, _edge in (("_binom_ppf", "_binom_cdf"), ("_binom_isf", "_binom_sf"), ("_nbinom_ppf", "_nbinom_cdf"),
                     ("_nbinom_isf", "_nbinom_sf")):
    if _k(_edge) is not None:
        _step = _steps(_name, _k(_edge))
        _rule(_name, _step, *_no(_name, "n", at=1), _step)


# -- hypergeometric: counts only ----------------------------------------------------------------------------------

for _name in ("_hypergeom_pmf", "_hypergeom_cdf", "_hypergeom_sf"):
    _rule(_name, *_no(_name, "k", "n", "N", "M"))
for _name in ("_hypergeom_mean", "_hypergeom_variance", "_hypergeom_skewness"):
    _rule(_name, *_no(_name, "n", "N", "M"))


# -- beta ---------------------------------------------------------------------------------------------------------

def _beta_dx(y, x, a, b):
    """(a - 1) x^(a-2) (1-x)^(b-1) / B(a, b) - (b - 1) x^(a-1) (1-x)^(b-2) / B(a, b): finite at x in {0, 1} where
    the density is smooth (a or b 1 or >= 2); each term 0 where its factor a - 1 (b - 1) is."""
    a, b = np.asarray(a), np.asarray(b)
    lb = sc.betaln(a, b)
    ua, ub = a != 1, b != 1
    left = np.where(ua, (a - 1) * np.exp(sc.xlogy(_safe(ua, a - 2), x) + sc.xlog1py(b - 1, -x) - lb), 0.0)
    right = np.where(ub, (b - 1) * np.exp(sc.xlogy(a - 1, x) + sc.xlog1py(_safe(ub, b - 2), -x) - lb), 0.0)
    return left - right


_rule("_beta_pdf", _beta_dx, lambda y, x, a, b: y * (sc.digamma(a + b) - sc.digamma(a)) + sc.xlogy(y, x),
      lambda y, x, a, b: y * (sc.digamma(a + b) - sc.digamma(b)) + sc.xlog1py(y, -x))
def _beta_ppf_rule() -> None:
    """x = I^-1(q; a, b): 1 / density in q; in a and b by the implicit function theorem, -(dI/da) / density, dI/da
    numerical (`scipy_special_shape.betainc_da`: to 1e-10 or refused, no second derivative)."""
    fn = _k("_beta_ppf")
    if fn is None:
        return

    def density(x, q, a, b):
        return _beta_density(a, b, x)

    def shape(argument, position, partial):
        compute = _inverse("_beta_ppf", argument, position, lambda p, x, q, a, b: partial(p, a, b, x), density, 1.0)
        compute.function = "scipy.special._ufuncs._beta_ppf"
        return compute
    shape_rule(fn, lambda x, q, a, b: 1 / _beta_density(a, b, x), shape("a", 1, betainc_da), shape("b", 2, betainc_db),
               name="_beta_ppf")


_beta_ppf_rule()


# -- skew normal: F = Phi(z) - 2 T(z, a), z = (x - loc) / scale; dT/da = exp(-(1 + a^2) z^2 / 2) / (2 pi (1 + a^2)) --

def _skew_density(x, loc, scale, a):
    z = (x - loc) / scale
    return 2 * _phi(z) * sc.ndtr(a * z) / scale


def _skew_dfda(x, loc, scale, a):
    z = (x - loc) / scale
    s = 1 + a * a
    return -np.exp(-0.5 * s * z * z) / (_PI * s)


_rule("_skewnorm_cdf", lambda y, x, loc, scale, a: _skew_density(x, loc, scale, a),
      lambda y, x, loc, scale, a: -_skew_density(x, loc, scale, a),
      lambda y, x, loc, scale, a: -(x - loc) / scale * _skew_density(x, loc, scale, a),
      lambda y, x, loc, scale, a: _skew_dfda(x, loc, scale, a))


def _skew_inverse(sign):
    """x(q) with F(x) = q (sign 1) or 1 - F(x) = q (sign -1): dx/dq = sign / density, dx/dtheta = -(dF/dtheta) /
    density (the same for both), so dx/dloc = 1 and dx/dscale = z."""
    return (lambda x, q, loc, scale, a: sign / _skew_density(x, loc, scale, a),
            lambda x, q, loc, scale, a: 1.0 + 0 * x,
            lambda x, q, loc, scale, a: (x - loc) / scale,
            lambda x, q, loc, scale, a: -_skew_dfda(x, loc, scale, a) / _skew_density(x, loc, scale, a))


_rule("_skewnorm_ppf", *_skew_inverse(1))
_rule("_skewnorm_isf", *_skew_inverse(-1))


# -- Cauchy: x = loc + scale tan(pi (q - 1/2)) (isf: loc - scale tan(...)) -----------------------------------------

def _cauchy_inverse(sign):
    return (lambda x, q, loc, scale: sign * _PI * (scale + (x - loc) * (x - loc) / scale),
            lambda x, q, loc, scale: 1.0 + 0 * x,
            lambda x, q, loc, scale: (x - loc) / scale)


_rule("_cauchy_ppf", *_cauchy_inverse(1))
_rule("_cauchy_isf", *_cauchy_inverse(-1))


# -- cosine: F = (pi + x + sin x) / (2 pi) on [-pi, pi] ------------------------------------------------------------

def _cosine_density(x):
    return np.where(np.abs(x) < _PI, (1 + np.cos(x)) / (2 * _PI), 0.0)


_rule("_cosine_cdf", lambda y, x: _cosine_density(x))
_rule("_cosine_invcdf", lambda x, p: 1 / _cosine_density(x))


# -- Landau (Boost's location-scale form: z = (x - loc) / scale - 2/pi log(scale), density f(z) / scale) ------------

_landau_pdf = _k("_landau_pdf")
_rule("_landau_pdf", *_no("_landau_pdf", "x", "loc", "scale"))


def _landau_cdf_partials(sign):
    return (lambda y, x, loc, scale: sign * _landau_pdf(x, loc, scale),
            lambda y, x, loc, scale: -sign * _landau_pdf(x, loc, scale),
            lambda y, x, loc, scale: -sign * _landau_pdf(x, loc, scale) * ((x - loc) / scale + 2 / _PI))


def _landau_inverse(sign):
    return (lambda x, q, loc, scale: sign / _landau_pdf(x, loc, scale),
            lambda x, q, loc, scale: 1.0 + 0 * x,
            lambda x, q, loc, scale: (x - loc) / scale + 2 / _PI)


if _landau_pdf is not None:
    _rule("_landau_cdf", *_landau_cdf_partials(1))
    _rule("_landau_sf", *_landau_cdf_partials(-1))
    _rule("_landau_ppf", *_landau_inverse(1))
    _rule("_landau_isf", *_landau_inverse(-1))


# -- inverse Gaussian (mean mu, shape lam): F = Phi(u1) + e^(2 lam / mu) Phi(u2), u1 = r (x / mu - 1),
# u2 = -r (x / mu + 1), r = sqrt(lam / x); dF/dmu = -2 lam / mu^2 e^(2 lam / mu) Phi(u2),
# dF/dlam = -phi(u1) r / lam + 2 / mu e^(2 lam / mu) Phi(u2) ------------------------------------------------------

def _ig_density(x, mu, lam):
    return np.sqrt(lam / (2 * _PI * x * x * x)) * np.exp(-lam * (x - mu) * (x - mu) / (2 * mu * mu * x))


def _ig_tail(x, mu, lam):
    """e^(2 lam / mu) Phi(u2), in logarithms (the exponential alone overflows for a small mu)."""
    r = np.sqrt(lam / x)
    return np.exp(2 * lam / mu + sc.log_ndtr(-r * (x / mu + 1)))


def _ig_dmu(x, mu, lam):
    return -2 * lam / (mu * mu) * _ig_tail(x, mu, lam)


def _ig_dlam(x, mu, lam):
    r = np.sqrt(lam / x)
    return -_phi(r * (x / mu - 1)) * r / lam + 2 / mu * _ig_tail(x, mu, lam)


def _ig_inverse(sign):
    return (lambda x, q, mu, lam: sign / _ig_density(x, mu, lam),
            lambda x, q, mu, lam: -_ig_dmu(x, mu, lam) / _ig_density(x, mu, lam),
            lambda x, q, mu, lam: -_ig_dlam(x, mu, lam) / _ig_density(x, mu, lam))


_rule("_invgauss_ppf", *_ig_inverse(1))
_rule("_invgauss_isf", *_ig_inverse(-1))


# -- noncentral chi-square: a Poisson(nc / 2) mixture of chi-square(k + 2j) --------------------------------------

_ncx2_pdf, _ncx2_sf = _k("_ncx2_pdf"), _k("_ncx2_sf")


def _ncx2_dx(f, x, k, nc):
    """f' = f ((k/2 - 1) / x - 1/2) + nc / (2x) f(x; k + 2, nc) (by I_v' = I_{v+1} + v / r I_v)."""
    return f * ((k / 2 - 1) / x - 0.5) + nc / (2 * x) * _ncx2_pdf(x, k + 2, nc)


if _ncx2_pdf is not None:
    _rule("_ncx2_pdf", lambda y, x, k, nc: _ncx2_dx(y, x, k, nc), *_no("_ncx2_pdf", "k", at=1),
          lambda y, x, k, nc: (_ncx2_pdf(x, k + 2, nc) - y) / 2)
if _ncx2_pdf is not None and _ncx2_sf is not None:
    _rule("_ncx2_sf", lambda y, x, k, nc: -_ncx2_pdf(x, k, nc), *_no("_ncx2_sf", "k", at=1),
          lambda y, x, k, nc: (_ncx2_sf(x, k + 2, nc) - y) / 2)
    _rule("_ncx2_isf", lambda x, q, k, nc: -1 / _ncx2_pdf(x, k, nc), *_no("_ncx2_isf", "k", at=1),
          lambda x, q, k, nc: (_ncx2_sf(x, k + 2, nc) - q) / (2 * _ncx2_pdf(x, k, nc)))


# -- noncentral F: F(x; d1, d2, nc) = sum_j w_j(nc / 2) I_u(d1 / 2 + j, d2 / 2), u = d1 x / (d1 x + d2):
# dF/dnc = (F(d1 x / (d1 + 2); d1 + 2, d2, nc) - F(x; d1, d2, nc)) / 2 --------------------------------------------

_ncf_pdf, _ncf_sf = _k("_ncf_pdf"), _k("_ncf_sf")
if _ncf_pdf is not None:
    _rule("_ncf_pdf", *_no("_ncf_pdf", "x", "dfn", "dfd"),
          lambda y, x, d1, d2, nc: (d1 / (d1 + 2) * _ncf_pdf(d1 * x / (d1 + 2), d1 + 2, d2, nc) - y) / 2)
if _ncf_pdf is not None and _ncf_sf is not None:
    _rule("_ncf_sf", lambda y, x, d1, d2, nc: -_ncf_pdf(x, d1, d2, nc), *_no("_ncf_sf", "dfn", "dfd", at=1),
          lambda y, x, d1, d2, nc: (_ncf_sf(d1 * x / (d1 + 2), d1 + 2, d2, nc) - y) / 2)
    _rule("_ncf_isf", lambda x, q, d1, d2, nc: -1 / _ncf_pdf(x, d1, d2, nc), *_no("_ncf_isf", "dfn", "dfd", at=1),
          lambda x, q, d1, d2, nc: (_ncf_sf(d1 * x / (d1 + 2), d1 + 2, d2, nc) - q) / (2 * _ncf_pdf(x, d1, d2, nc)))


# -- noncentral t: T = (Z + nc) / S, S = sqrt(V / df), V ~ chi-square(df): F(t) = E[Phi(t S - nc)], the density
# E[S phi(t S - nc)]. G_m = E[S^m phi(t S - nc)] is, by V^(m/2) p_df(V) ~ p_(df+m)(V), a noncentral t density of
# df + m - 1 at t sqrt((df + m - 1) / df): f' = -t G_3 + nc G_2, df/dnc = t G_2 - nc G_1, dF/dnc = -G_0 --------------

_nct_pdf = _k("_nct_pdf")


def _nct_g(m, t, df, nc):
    d = df + m - 1
    scale = np.exp((m - 1) / 2 * math.log(2) + sc.gammaln(d / 2) - sc.gammaln(df / 2)) * np.sqrt(d) / df ** (m / 2)
    return scale * _nct_pdf(t * np.sqrt(d / df), d, nc)


def _nct_g0(t, df, nc):
    """G_0, by Stein's identity for V ~ chi-square(df), E[V g'(V)] = E[(V - df) g(V)] / 2 with g = phi(t S - nc):
    G_0 = (1 + t^2 / df) G_2 - t nc / df G_1, for every df > 0 (G_0 itself is a density of df - 1, none below 1)."""
    return (1 + t * t / df) * _nct_g(2, t, df, nc) - t * nc / df * _nct_pdf(t, df, nc)


if _nct_pdf is not None:
    _rule("_nct_pdf", lambda y, t, df, nc: nc * _nct_g(2, t, df, nc) - t * _nct_g(3, t, df, nc),
          *_no("_nct_pdf", "df", at=1), lambda y, t, df, nc: t * _nct_g(2, t, df, nc) - nc * y)
    _rule("_nct_sf", lambda y, t, df, nc: -_nct_pdf(t, df, nc), *_no("_nct_sf", "df", at=1),
          lambda y, t, df, nc: _nct_g0(t, df, nc))
    _rule("_nct_isf", lambda t, q, df, nc: -1 / _nct_pdf(t, df, nc), *_no("_nct_isf", "df", at=1),
          lambda t, q, df, nc: _nct_g0(t, df, nc) / _nct_pdf(t, df, nc))


# -- moments of ncf and nct --------------------------------------------------------------------------------------

def _ncf_var_partials():
    """v = A B / C: A = 2 (d2 / d1)^2, B = (d1 + nc)^2 + (d1 + 2 nc)(d2 - 2), C = (d2 - 2)^2 (d2 - 4)."""
    def parts(d1, d2, nc):
        a = 2 * (d2 / d1) ** 2
        b = (d1 + nc) ** 2 + (d1 + 2 * nc) * (d2 - 2)
        c = (d2 - 2) ** 2 * (d2 - 4)
        return a, b, c

    def dd1(y, d1, d2, nc):
        a, b, c = parts(d1, d2, nc)
        return (-2 * a / d1 * b + a * (2 * (d1 + nc) + d2 - 2)) / c

    def dd2(y, d1, d2, nc):
        a, b, c = parts(d1, d2, nc)
        dc = 2 * (d2 - 2) * (d2 - 4) + (d2 - 2) ** 2
        return (2 * a / d2 * b + a * (d1 + 2 * nc)) / c - a * b / c * dc / c

    def dnc(y, d1, d2, nc):
        a, b, c = parts(d1, d2, nc)
        return a * (2 * (d1 + nc) + 2 * (d2 - 2)) / c
    return dd1, dd2, dnc


# mean d2 (d1 + nc) / (d1 (d2 - 2))
_rule("_ncf_mean", lambda y, d1, d2, nc: -d2 * nc / (d1 * d1 * (d2 - 2)),
      lambda y, d1, d2, nc: -2 * (d1 + nc) / (d1 * (d2 - 2) ** 2), lambda y, d1, d2, nc: d2 / (d1 * (d2 - 2)))
_rule("_ncf_variance", *_ncf_var_partials())
for _name in ("_ncf_skewness", "_ncf_kurtosis_excess"):
    _rule(_name, *_no(_name, "dfn", "dfd", "nc"))


def _nct_m(df):
    """mean / nc = sqrt(df / 2) Gamma((df - 1) / 2) / Gamma(df / 2)."""
    return np.sqrt(df / 2) * np.exp(sc.gammaln((df - 1) / 2) - sc.gammaln(df / 2))


def _nct_dm(df):
    """d/ddf of _nct_m."""
    return _nct_m(df) * (1 / (2 * df) + (sc.digamma((df - 1) / 2) - sc.digamma(df / 2)) / 2)


# mean nc m(df), variance df (1 + nc^2) / (df - 2) - mean^2
_rule("_nct_mean", lambda y, df, nc: nc * _nct_dm(df), lambda y, df, nc: _nct_m(df))
_rule("_nct_variance",
      lambda y, df, nc: -2 * (1 + nc * nc) / (df - 2) ** 2 - 2 * nc * nc * _nct_m(df) * _nct_dm(df),
      lambda y, df, nc: 2 * nc * df / (df - 2) - 2 * nc * _nct_m(df) ** 2)
for _name in ("_nct_skewness", "_nct_kurtosis_excess"):
    _rule(_name, *_no(_name, "df", "nc"))


# -- log(1 - e^x), Kolmogorov-Smirnov complements, zipfian's harmonic numbers -------------------------------------

_rule("_log1mexp", lambda y, x: np.where(np.isnan(y), np.nan, -1 / np.expm1(-x)))  # (NaN above 0, as the value)

_kolmogp, _smirnovp = _k("_kolmogp"), _k("_smirnovp")
if _kolmogp is not None:
    _rule("_kolmogc", lambda y, x: -_kolmogp(x))           # 1 - kolmogorov(x); kolmogorov' = _kolmogp
    _rule("_kolmogci", lambda x, q: -1 / _kolmogp(x))
if _smirnovp is not None:
    _rule("_smirnovc", *_no("_smirnovc", "n"), lambda y, n, d: -_smirnovp(n, d))
    _rule("_smirnovci", *_no("_smirnovci", "n"), lambda d, n, q: -1 / _smirnovp(n, d))

_rule("_gen_harmonic", *_no("_gen_harmonic", "n", "a"))
_rule("_normalized_gen_harmonic", *_no("_normalized_gen_harmonic", "j", "k", "n", "a"))
