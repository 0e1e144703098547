"""Rules for scipy.special: `logsumexp`, `softmax`, `log_softmax` and the elementwise special functions, each
differentiable in every float argument except those listed as refused. Importing it without scipy installed
raises ImportError, which `contexts.rules.numpy` tolerates.

- In closed form: `expit`, `log_expit`, `logit`, `erf`, `erfc`, `erfinv`, `erfcinv`, `erfcx`, `erfi`, `dawsn`,
  `wofz`, `ndtr`, `log_ndtr`, `ndtri`, `ndtri_exp`, `owens_t` (h, a), `voigt_profile` (x, sigma, gamma), `gamma`,
  `gammaln`, `loggamma`, `rgamma`, `digamma`, `poch` (z, m), `beta`, `betaln`, `binom` (both), `xlogy`, `xlog1py`
  (both), `lambertw`, `wrightomega`, `spence`, the Bessel functions of fixed order (`j0` ... `k1e`), the elliptic
  integrals (`ellipk`, `ellipkm1`, `ellipe`; `ellipkinc`, `ellipeinc` in phi and m) and `ellipj` (u, m), `expi`,
  `exp1`, `sici`, `shichi`, `fresnel`, `expm1`, `cosm1`, `log1p`, `cbrt`, `exp2`, `exp10`, `exprel`, the degree
  trigonometry (`sindg` ...), Box-Cox (`boxcox`, `boxcox1p`, `inv_boxcox`, `inv_boxcox1p`: x and lambda), `entr`,
  `rel_entr`, `kl_div`, `huber`, `pseudo_huber` (both). `gammasgn` is non-differentiable.
- In x (or z, p) in closed form, in the shape or order numerically (`scipy_special_shape`: a series or an integral
  to a relative 1e-10, refused where that is not reached; no second derivative in the shape): `gammainc`,
  `gammaincc`, `gammaincinv`, `gammainccinv` (a), `chdtr`, `chdtrc` (v), `gdtr`, `gdtrc` (b; a in closed form),
  `betainc`, `betaincc`, `betaincinv`, `betainccinv` (a, b), `stdtr` (df) (and the F distribution, the other
  inverses in a shape: `scipy_special_more`); `jv`, `jve`, `yv`, `yve`, `iv`, `ive`,
  `kv`, `kve` in their order v for real x > 0 (refused at x <= 0 and at a complex x).
- In x alone; the parameter refused (`NoClosedForm`, never a zero): `hyp2f1` (a, b, c), `hyp1f1` (a, b), `hyp0f1`
  (v), `hyperu` (a, b), `struve`, `modstruve` (v), `yn`, `expn` (the count n, truncated as scipy does), `zeta` (s;
  in q).

`logsumexp(a, axis, b, keepdims, return_sign)`: every axis form; the scale `b` gets a cotangent when
passed positionally (keyword arguments are never differentiated, see the registry); with
`return_sign=True` only the log-magnitude is differentiable.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special as sc

from ..generic import dropped_nan_zero
from ..cotangents import NEEDED
from ..registry import NoClosedForm, NoDerivative, registry
from ..ties import plain
from ..sparsity_specs import Custom
from .reductions import _expand, reduction_rule
from ._util import unsupported
from .scipy_special_shape import (Numerical, betainc_da, betainc_db, gammainc_da, ive_dv, jv_dv, kve_dv,
                                  stdtr_ddf, yv_dv)
from .ufuncs import OneOver, _as_values, _safe_div, conj, inexact, match_primal, ufunc_rule

__all__: list[str] = []

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)

ufunc_rule(sc.expit, lambda y, x: y * (1 - y), name="expit")
ufunc_rule(sc.log_expit, lambda y, x: sc.expit(-x), name="log_expit")
ufunc_rule(sc.logit, lambda y, x: 1 / (x * (1 - x)), name="logit")
ufunc_rule(sc.erf, lambda y, x: _TWO_OVER_SQRT_PI * np.exp(-x * x), name="erf")
ufunc_rule(sc.erfc, lambda y, x: -_TWO_OVER_SQRT_PI * np.exp(-x * x), name="erfc")
ufunc_rule(sc.erfinv, lambda y, x: np.exp(y * y) / _TWO_OVER_SQRT_PI, name="erfinv")
ufunc_rule(sc.erfcinv, lambda y, x: -np.exp(y * y) / _TWO_OVER_SQRT_PI, name="erfcinv")
ufunc_rule(sc.ndtr, lambda y, x: _INV_SQRT_2PI * np.exp(-0.5 * x * x), name="ndtr")
ufunc_rule(sc.log_ndtr, lambda y, x: _INV_SQRT_2PI * np.exp(-0.5 * x * x - y), name="log_ndtr")
ufunc_rule(sc.gamma, lambda y, x: y * sc.digamma(x), name="gamma")
ufunc_rule(sc.gammaln, lambda y, x: sc.digamma(x), name="gammaln")
ufunc_rule(sc.digamma, lambda y, x: sc.polygamma(1, x), name="digamma")
ufunc_rule(sc.xlogy, lambda y, x, z: np.log(z), lambda y, x, z: _safe_div(x, z), name="xlogy")
ufunc_rule(sc.xlog1py, lambda y, x, z: np.log1p(z), lambda y, x, z: _safe_div(x, 1 + z), name="xlog1py")
ufunc_rule(sc.poch, lambda y, z, m: y * (sc.digamma(z + m) - sc.digamma(z)), lambda y, z, m: y * sc.digamma(z + m),
           name="poch")  # poch(z, m) = gamma(z + m) / gamma(z)


# -- logsumexp ----------------------------------------------------------------------------------------------

def _lse_args(args, kwargs):
    """(a, axis, b, keepdims, return_sign) of a logsumexp call, positional or keyword."""
    names = ("a", "axis", "b", "keepdims", "return_sign")
    p = dict(zip(names, args), **kwargs)
    return (np.asarray(p["a"]), p.get("axis"), p.get("b"), bool(p.get("keepdims", False)),
            bool(p.get("return_sign", False)))


def _lse_weights(y, a, axis, b, keepdims, return_sign):
    """(d lse / da, d lse / db): softmax weights exp(a - lse) (times b, and the sign of the sum)."""
    r, sign = y if return_sign else (y, 1.0)
    e = np.exp(a - _expand(r, a.ndim, axis, keepdims))
    if return_sign:
        e = e * _expand(sign, a.ndim, axis, keepdims)
    return (e if b is None else e * b), e


def _logsumexp_adjoint(dy, y, *args, **kwargs):
    a, axis, b, keepdims, return_sign = _lse_args(args, kwargs)
    if return_sign:
        dy = dy[0] if dy is not None else None
    if dy is None:
        return (None,) * len(args)
    wa, wb = _lse_weights(y, a, axis, b, keepdims, return_sign)
    dye = _expand(dy, a.ndim, axis, keepdims)
    cts = [match_primal(dye * wa, args[0]) if inexact(args[0]) else None, None]
    if len(args) > 2:
        cts.append(match_primal(dye * wb, b) if inexact(b) else None)
    out = tuple(cts[:len(args)]) + (None,) * (len(args) - len(cts))
    if "b" in kwargs and inexact(b):  # the scale passed by keyword: a keyword cotangent (a trailing dict)
        return out + ({"b": match_primal(dye * wb, b)},)
    return out


def _logsumexp_frule(tangents, *args, **kwargs):
    y = sc.logsumexp(*args, **kwargs)
    a, axis, b, keepdims, return_sign = _lse_args(args, kwargs)
    ta = tangents[0]
    tb = tangents[2] if len(tangents) > 2 else None
    if ta is None and tb is None:
        return y, ((None, None) if return_sign else None)
    wa, wb = _lse_weights(y, a, axis, b, keepdims, return_sign)
    total = 0.0
    if ta is not None:
        total = total + ta * wa
    if tb is not None:
        total = total + tb * wb
    dy = np.sum(total, axis=axis, keepdims=keepdims)
    return y, ((dy, None) if return_sign else dy)


registry.adjoint(sc.logsumexp, kind="reduction")(_logsumexp_adjoint)
registry.frule(sc.logsumexp, kind="reduction")(_logsumexp_frule)
registry.sparsity(Custom("rules.py: a reduction of exp(a) * b"), sc.logsumexp)
_logsumexp_adjoint.__name__ = _logsumexp_adjoint.__qualname__ = "logsumexp_adjoint"
_logsumexp_frule.__name__ = _logsumexp_frule.__qualname__ = "logsumexp_frule"

# -- softmax, log_softmax ---------------------------------------------------------------------------------


def _softmax_grad(dy, y, x, axis=None):
    return y * (dy - np.sum(dy * y, axis=axis, keepdims=True))


def _softmax_jvp(t, y, x, axis=None):
    return y * (t - np.sum(t * y, axis=axis, keepdims=True))


def _log_softmax_grad(dy, y, x, axis=None):
    return dy - np.exp(y) * np.sum(dy, axis=axis, keepdims=True)


def _log_softmax_jvp(t, y, x, axis=None):
    return t - np.sum(np.exp(y) * t, axis=axis, keepdims=True)


# kind "reduction": for sparsity, every output may depend on every input (conservative along `axis`)
reduction_rule(sc.softmax, ("axis",), _softmax_grad, _softmax_jvp, kind="reduction")
reduction_rule(sc.log_softmax, ("axis",), _log_softmax_grad, _log_softmax_jvp, kind="reduction")
registry.sparsity(Custom("rules.py: each element from its whole line along axis"), sc.softmax, sc.log_softmax)


# -- lambertw (a Python function around the `_lambertw` ufunc): W'(z) = W / (z (1 + W)), 1 at z = 0 -----

def _lambertw_partial(w, z):
    z = np.asarray(z)
    safe = np.where(z == 0, 1.0, z)
    return np.where(z == 0, 1.0 - 2.0 * z, w / (safe * (1.0 + w)))  # (W' = 1 - 2z + ...: its slope at 0, gen24 W11)


def _lambertw_adjoint(dy, y, z, *rest, **kwargs):
    if dy is None or not inexact(z):
        return (None,) * (1 + len(rest))
    return (match_primal(dy * np.conj(_lambertw_partial(y, z)), z),) + (None,) * len(rest)


def _lambertw_frule(tangents, z, *rest, **kwargs):
    y = sc.lambertw(z, *rest, **kwargs)
    t = tangents[0] if tangents else None
    return y, (None if t is None else _lambertw_partial(y, z) * t)


registry.adjoint(sc.lambertw)(_lambertw_adjoint)
registry.frule(sc.lambertw)(_lambertw_frule)


# -- hypergeometric functions: derivatives in x; their parameters have none in closed form (series in the
# parameters: refused where differentiated, `NoClosedForm`). The incomplete gamma and beta: below ------------

def _no(name: str, *arguments: str, at: int = 0) -> tuple:
    """The refused partials of arguments at positions at, at + 1, ..."""
    return tuple(NoClosedForm(f"scipy.special.{name}", a, at + i) for i, a in enumerate(arguments))


ufunc_rule(sc.hyp2f1, *_no("hyp2f1", "a", "b", "c"),
           lambda y, a, b, c, z: a * b / c * sc.hyp2f1(a + 1, b + 1, c + 1, z), name="hyp2f1")
ufunc_rule(sc.hyp1f1, *_no("hyp1f1", "a", "b"), lambda y, a, b, x: a / b * sc.hyp1f1(a + 1, b + 1, x), name="hyp1f1")
ufunc_rule(sc.hyp0f1, *_no("hyp0f1", "v"), lambda y, v, x: sc.hyp0f1(v + 1, x) / v, name="hyp0f1")
ufunc_rule(sc.hyperu, *_no("hyperu", "a", "b"), lambda y, a, b, x: -a * sc.hyperu(a + 1, b + 1, x), name="hyperu")


def _beta_density(a, b, x):
    """x^(a-1) (1-x)^(b-1) / B(a, b), in logarithms (xlogy: 0 at x = 0 for a = 1)."""
    return np.exp(sc.xlogy(a - 1, x) + sc.xlog1py(b - 1, -x) - sc.betaln(a, b))


def _gamma_density(a, x):
    """x^(a-1) e^-x / Gamma(a), the derivative of the regularized lower incomplete gamma P(a, x)."""
    return np.exp(sc.xlogy(a - 1, x) - x - sc.gammaln(a))


# -- their shape parameters: computed numerically (`scipy_special_shape`), refused where inaccurate ---------

def _unknown(e: NoDerivative):
    """A `Numerical` partial's refusal as reverse mode's unknown cotangent; any other refusal raised again."""
    refusal = getattr(e, "refusal", None)
    if refusal is None:
        raise e
    return refusal.cotangent()


def shape_rule(fn, *partials, name: str) -> None:
    """`ufunc_rule` for partials some of which are `Numerical`. Forward mode asks only for the partials of
    the arguments it differentiates, and a refusal there is an error; reverse mode's adjoint computes the
    partial of every float argument its call may differentiate (`meta["by_need"]`: the calling code's
    constants, `betainc(2.0, 3.0, x)`'s shapes, skipped by `cotangents.NEEDED`, their cost 360 times the
    gradient's at 10,000 entries; where the call cannot tell, as through scipy.stats' `*args`, every one),
    and a refusal becomes the unknown cotangent (`cotangents.Refused`), dropped where the argument is not
    differentiated: `iv(2.0, x)` at x < 0 in x never meets the order's."""
    ufunc_rule(fn, *partials, name=name)
    registry.get(fn).meta["by_need"] = True  # (reverse mode says which arguments its call may differentiate)
    nin = len(partials)

    def adjoint(dy, y, *args, **kwargs):
        if dy is None:
            return (None,) * len(args)
        mask = kwargs.get("where", True) if kwargs else True
        operands = args[:nin]
        values = _as_values(operands)
        needed = NEEDED.mask  # (the arguments the call may differentiate: reverse mode's `_needed_back`)
        cts = []
        for i, (p, a) in enumerate(zip(partials, operands)):
            if p is None or not inexact(a):
                cts.append(None)
            elif type(p) is NoClosedForm:
                cts.append(p.cotangent())
            elif type(p) is Numerical and needed >= 0 and not needed >> i & 1:
                # a constant of the calling code (`betainc(2.0, 3.0, x)` in x): its costly partial not computed,
                # the unknown cotangent in its place (dropped there; refused should it reach an input)
                cts.append(NoClosedForm(p.function, p.argument, p.position).cotangent())
            else:
                try:
                    d = p(y, *values)
                except NoDerivative as e:
                    cts.append(_unknown(e))
                    continue
                g = dropped_nan_zero(dy * conj(d), dy, y)
                cts.append(match_primal(g if mask is True else np.where(mask, g, 0), a))
        return tuple(cts) + (None,) * (len(args) - len(cts))

    hot_one = registry.get(fn).hot_one  # (a binary fn's cotangent of one argument alone)

    def one_or_unknown(dy, y, a, b, i):
        try:
            return hot_one(dy, y, a, b, i)
        except NoDerivative as e:
            return _unknown(e)
    adjoint.__name__ = adjoint.__qualname__ = f"{name}_adjoint"
    one_or_unknown.__name__ = one_or_unknown.__qualname__ = f"{name}_hot_one"
    registry.set(fn, adjoint=adjoint, hot_one=one_or_unknown if hot_one is not None else None)


def _numerical(name: str, argument: str, position: int, compute) -> Numerical:
    return Numerical(f"scipy.special.{name}", argument, position, compute)


def _inverse(name: str, argument: str, position: int, dvalue, density, top: float) -> Numerical:
    """The partial of an inverse x = F^-1(q; theta) in a parameter, by the implicit function theorem: -(dF/dtheta)
    / (dF/dx) at x = y (the same for the complement's inverse: both derivatives change sign); 0 where x is at
    an end of its range (0, or `top`), where it stays for every theta."""
    def compute(p, x, *args):
        edge = (x == 0) | (x == top)
        inner = np.where(edge, 0.5, x)
        return np.where(edge, 0.0, -dvalue(p, inner, *args) / density(inner, *args))
    return _numerical(name, argument, position, compute)


def _beta_inverse_rule(fn, sign: int) -> None:
    """betaincinv (sign 1) and betainccinv (-1): x = I^-1(q) in a, b and q (dx/dq = +-1 / I'(x))."""
    def density(x, a, b, q):
        return _beta_density(a, b, x)
    name = fn.__name__
    shape_rule(fn, _inverse(name, "a", 0, lambda p, x, a, b, q: betainc_da(p, a, b, x), density, 1.0),
               _inverse(name, "b", 1, lambda p, x, a, b, q: betainc_db(p, a, b, x), density, 1.0),
               lambda y, a, b, q: sign / _beta_density(a, b, y), name=name)


def _gamma_inverse_rule(fn, sign: int) -> None:
    """gammaincinv (sign 1) and gammainccinv (-1) in a and q."""
    name = fn.__name__
    shape_rule(fn, _inverse(name, "a", 0, lambda p, x, a, q: gammainc_da(p, a, x),
                            lambda x, a, q: _gamma_density(a, x), np.inf),
               lambda y, a, q: sign / _gamma_density(a, y), name=name)


_P_DA = _numerical("gammainc", "a", 0, lambda p, y, a, x: gammainc_da(p, a, x))
_Q_DA = _numerical("gammaincc", "a", 0, lambda p, y, a, x: -gammainc_da(p, a, x))
_I_DA = _numerical("betainc", "a", 0, lambda p, y, a, b, x: betainc_da(p, a, b, x))
_I_DB = _numerical("betainc", "b", 1, lambda p, y, a, b, x: betainc_db(p, a, b, x))
_IC_DA = _numerical("betaincc", "a", 0, lambda p, y, a, b, x: -betainc_da(p, a, b, x))
_IC_DB = _numerical("betaincc", "b", 1, lambda p, y, a, b, x: -betainc_db(p, a, b, x))

shape_rule(sc.betainc, _I_DA, _I_DB, lambda y, a, b, x: _beta_density(a, b, x), name="betainc")
shape_rule(sc.betaincc, _IC_DA, _IC_DB, lambda y, a, b, x: -_beta_density(a, b, x), name="betaincc")
_beta_inverse_rule(sc.betaincinv, 1)
_beta_inverse_rule(sc.betainccinv, -1)
shape_rule(sc.gammainc, _P_DA, lambda y, a, x: _gamma_density(a, x), name="gammainc")
shape_rule(sc.gammaincc, _Q_DA, lambda y, a, x: -_gamma_density(a, x), name="gammaincc")
_gamma_inverse_rule(sc.gammaincinv, 1)
_gamma_inverse_rule(sc.gammainccinv, -1)
# distributions' CDFs, by the chain rule: chdtr(v, x) = P(v/2, x/2), gdtr(a, b, x) = P(b, a x)
shape_rule(sc.chdtr, _numerical("chdtr", "v", 0, lambda p, y, v, x: 0.5 * gammainc_da(p, v / 2, x / 2)),
           lambda y, v, x: 0.5 * _gamma_density(v / 2, x / 2), name="chdtr")
shape_rule(sc.chdtrc, _numerical("chdtrc", "v", 0, lambda p, y, v, x: -0.5 * gammainc_da(p, v / 2, x / 2)),
           lambda y, v, x: -0.5 * _gamma_density(v / 2, x / 2), name="chdtrc")
shape_rule(sc.gdtr, lambda y, a, b, x: x * _gamma_density(b, a * x),
           _numerical("gdtr", "b", 1, lambda p, y, a, b, x: gammainc_da(p, b, a * x)),
           lambda y, a, b, x: a * _gamma_density(b, a * x), name="gdtr")
shape_rule(sc.gdtrc, lambda y, a, b, x: -x * _gamma_density(b, a * x),
           _numerical("gdtrc", "b", 1, lambda p, y, a, b, x: -gammainc_da(p, b, a * x)),
           lambda y, a, b, x: -a * _gamma_density(b, a * x), name="gdtrc")
shape_rule(sc.stdtr, _numerical("stdtr", "df", 0, lambda p, y, df, t: stdtr_ddf(p, df, t)),
           lambda y, df, t: np.exp(sc.gammaln((df + 1) / 2) - sc.gammaln(df / 2) - 0.5 * np.log(df * math.pi)
                                   - (df + 1) / 2 * np.log1p(t * t / df)), name="stdtr")


# -- error functions, normal distribution -----------------------------------------------------------------

ufunc_rule(sc.erfcx, lambda y, x: 2 * x * y - _TWO_OVER_SQRT_PI, name="erfcx")  # exp(x^2) erfc(x)
ufunc_rule(sc.erfi, lambda y, x: _TWO_OVER_SQRT_PI * np.exp(x * x), name="erfi")
ufunc_rule(sc.dawsn, lambda y, x: 1 - 2 * x * y, name="dawsn")
ufunc_rule(sc.wofz, lambda y, z: -2 * z * y + 1j * _TWO_OVER_SQRT_PI, name="wofz")
ufunc_rule(sc.ndtri, lambda y, p: np.exp(0.5 * y * y) / _INV_SQRT_2PI, name="ndtri")
ufunc_rule(sc.ndtri_exp, lambda y, t: np.exp(t + 0.5 * y * y) / _INV_SQRT_2PI, name="ndtri_exp")  # ndtri(e^t)
ufunc_rule(sc.owens_t, lambda y, h, a: -0.5 * _INV_SQRT_2PI * np.exp(-0.5 * h * h) * sc.erf(a * h / math.sqrt(2)),
           lambda y, h, a: np.exp(-0.5 * h * h * (1 + a * a)) / (2 * math.pi * (1 + a * a)), name="owens_t")


def _voigt_partials():
    """V(x; s, g) = Re w(z) / (s sqrt(2 pi)), z = (x + i g) / (s sqrt 2), with w' = -2 z w + 2i / sqrt(pi)."""
    def wprime(x, s, g):
        z = (x + 1j * g) / (s * math.sqrt(2))
        return z, -2 * z * sc.wofz(z) + 1j * _TWO_OVER_SQRT_PI

    def dx(y, x, s, g):
        return wprime(x, s, g)[1].real / (2 * math.sqrt(math.pi) * s * s)

    def ds(y, x, s, g):
        z, w1 = wprime(x, s, g)
        return -(w1 * z).real / (s * s * math.sqrt(2 * math.pi)) - y / s

    def dg(y, x, s, g):
        return -wprime(x, s, g)[1].imag / (2 * math.sqrt(math.pi) * s * s)
    return dx, ds, dg


ufunc_rule(sc.voigt_profile, *_voigt_partials(), name="voigt_profile")


# -- Bessel functions: in x by their recurrences; in the order numerically, for real x > 0 ------------------

_HALF = 0.5
ufunc_rule(sc.j0, lambda y, x: -sc.j1(x), name="j0")
ufunc_rule(sc.j1, lambda y, x: _HALF * (sc.j0(x) - sc.jv(2, x)), name="j1")
ufunc_rule(sc.y0, lambda y, x: -sc.y1(x), name="y0")
ufunc_rule(sc.y1, lambda y, x: _HALF * (sc.y0(x) - sc.yv(2, x)), name="y1")
ufunc_rule(sc.i0, lambda y, x: sc.i1(x), name="i0")
# (numpy's own i0, Python code over |x|: differentiated as code, the |x| at 0 lost its second derivative,
# 0 for 0.5, gen10's W5; its values stay numpy's)
ufunc_rule(np.i0, lambda y, x: sc.i1(x), name="numpy_i0")
ufunc_rule(sc.i1, lambda y, x: _HALF * (sc.i0(x) + sc.iv(2, x)), name="i1")
ufunc_rule(sc.i0e, lambda y, x: sc.i1e(x) - np.sign(x) * y, name="i0e")  # e^-|x| I0(x)
ufunc_rule(sc.i1e, lambda y, x: _HALF * (sc.i0e(x) + sc.ive(2, x)) - np.sign(x) * y, name="i1e")
ufunc_rule(sc.k0, lambda y, x: -sc.k1(x), name="k0")
ufunc_rule(sc.k1, lambda y, x: -_HALF * (sc.k0(x) + sc.kv(2, x)), name="k1")
ufunc_rule(sc.k0e, lambda y, x: y - sc.k1e(x), name="k0e")  # e^x K0(x)
ufunc_rule(sc.k1e, lambda y, x: y - _HALF * (sc.k0e(x) + sc.kve(2, x)), name="k1e")
# in the order v, numerically for real x > 0 (`scipy_special_shape`); x <= 0 or complex refused
_JV = _numerical("jv", "v", 0, lambda p, y, v, z: jv_dv(p, v, z))
_YV = _numerical("yv", "v", 0, lambda p, y, v, z: yv_dv(p, v, z))
shape_rule(sc.jv, _JV, lambda y, v, z: _HALF * (sc.jv(v - 1, z) - sc.jv(v + 1, z)), name="jv")
shape_rule(sc.yv, _YV, lambda y, v, z: _HALF * (sc.yv(v - 1, z) - sc.yv(v + 1, z)), name="yv")
shape_rule(sc.iv, _numerical("iv", "v", 0, lambda p, y, v, z: ive_dv(p, v, z, unscaled=True)),
           lambda y, v, z: _HALF * (sc.iv(v - 1, z) + sc.iv(v + 1, z)), name="iv")
shape_rule(sc.kv, _numerical("kv", "v", 0, lambda p, y, v, z: kve_dv(p, v, z, unscaled=True)),
           lambda y, v, z: -_HALF * (sc.kv(v - 1, z) + sc.kv(v + 1, z)), name="kv")
shape_rule(sc.kve, _numerical("kve", "v", 0, lambda p, y, v, z: kve_dv(p, v, z)),
           lambda y, v, z: y - _HALF * (sc.kve(v - 1, z) + sc.kve(v + 1, z)), name="kve")  # e^z K_v(z), holomorphic
ufunc_rule(sc.yn, *_no("yn", "n"),  # (n truncated first, as yn does: 0.55 is 0, and 0.55 - 1 would be 0 too)
           lambda y, n, x: _HALF * (sc.yn(np.trunc(n) - 1, x) - sc.yn(np.trunc(n) + 1, x)), name="yn")


def _real_only(name, derivative):
    """A partial of a function that is not holomorphic (|Re z| or |Im z| in it): complex z refused."""
    def partial(y, v, z):
        if np.iscomplexobj(z):
            raise unsupported(f"scipy.special.{name}", "a complex argument (the function is not holomorphic)",
                              "differentiate the real function, or the unscaled one")
        return derivative(y, v, z)
    return partial


shape_rule(sc.ive, _numerical("ive", "v", 0, lambda p, y, v, x: ive_dv(p, v, x)),
           _real_only("ive", lambda y, v, x: _HALF * (sc.ive(v - 1, x) + sc.ive(v + 1, x)) - np.sign(x) * y),
           name="ive")  # e^-|x| I_v(x)
shape_rule(sc.jve, _numerical("jve", "v", 0, lambda p, y, v, x: jv_dv(p, v, x)),  # J_v(x) for real x
           _real_only("jve", lambda y, v, x: _HALF * (sc.jve(v - 1, x) - sc.jve(v + 1, x))), name="jve")
shape_rule(sc.yve, _numerical("yve", "v", 0, lambda p, y, v, x: yv_dv(p, v, x)),
           _real_only("yve", lambda y, v, x: _HALF * (sc.yve(v - 1, x) - sc.yve(v + 1, x))), name="yve")


def _struve_term(v, x):
    """(x/2)^v / (2 sqrt(pi) Gamma(v + 3/2)): what the Struve functions' recurrence adds to Bessel's. For
    x < 0 and an integer v, (x/2)^v is real: |x/2|^v with the sign of (-1)^v (the log of x/2 < 0 was NaN,
    gen24 W3); for another v the functions themselves are NaN there."""
    neg = (x < 0) & (v == np.round(v))
    odd = neg & (np.abs(np.where(neg, v, 0)) % 2 == 1)
    term = np.exp(sc.xlogy(v, np.where(neg, -x, x) / 2) - sc.gammaln(v + 1.5)) / (2 * math.sqrt(math.pi))
    sign = sc.gammasgn(v + 1.5)  # (gammaln is of |Gamma|: negative for -2 < v + 3/2 < -1, ...: 1.94 for 1.19)
    term = term * np.where(np.isnan(sign), 1.0, sign)  # (at a pole of Gamma the term is 0: its sign is nan)
    return np.where(odd, -term, term)


ufunc_rule(sc.struve, *_no("struve", "v"),
           lambda y, v, x: _HALF * (sc.struve(v - 1, x) - sc.struve(v + 1, x)) + _struve_term(v, x), name="struve")
ufunc_rule(sc.modstruve, *_no("modstruve", "v"),
           lambda y, v, x: _HALF * (sc.modstruve(v - 1, x) + sc.modstruve(v + 1, x)) + _struve_term(v, x),
           name="modstruve")


# -- gamma, beta, zeta and relatives ---------------------------------------------------------------------

def _rgamma_partial(y, x):
    """d/dx 1/Gamma(x) = -psi(x) / Gamma(x); at the poles -n of Gamma, (-1)^n n!."""
    x = np.asarray(x)
    pole = (x <= 0) & (x == np.round(x))
    n = np.where(pole, -x, 0.0)
    return np.where(pole, (-1.0) ** n * sc.gamma(n + 1), -y * sc.digamma(np.where(pole, 0.5, x)))


ufunc_rule(sc.rgamma, _rgamma_partial, name="rgamma")
ufunc_rule(sc.loggamma, lambda y, z: sc.digamma(z), name="loggamma")
ufunc_rule(sc.beta, lambda y, a, b: y * (sc.digamma(a) - sc.digamma(a + b)),
           lambda y, a, b: y * (sc.digamma(b) - sc.digamma(a + b)), name="beta")
ufunc_rule(sc.betaln, lambda y, a, b: sc.digamma(a) - sc.digamma(a + b),
           lambda y, a, b: sc.digamma(b) - sc.digamma(a + b), name="betaln")
ufunc_rule(sc.binom, lambda y, n, k: y * (sc.digamma(n + 1) - sc.digamma(n - k + 1)),
           lambda y, n, k: y * (sc.digamma(n - k + 1) - sc.digamma(k + 1)), name="binom")
# Hurwitz zeta(s, q) (and polygamma through it): in q; s refused. The Python `zeta(x, q=None, out=None)`
# gets the rule too: it passes `out` on by position, which reverse mode cannot take apart from a variable
_zeta_s = NoClosedForm("scipy.special.zeta", "x", 0)


def _zeta_dq(y, s, q):
    return -s * sc._ufuncs._zeta(s + 1, q)


ufunc_rule(sc._ufuncs._zeta, _zeta_s, _zeta_dq, name="hurwitz_zeta")


def _zeta_adjoint(dy, y, x, q=None, out=None):
    if dy is None:
        return (None, None, None)[:2 + (out is not None)]
    dx = _zeta_s.cotangent() if inexact(x) else None
    dq = match_primal(dy * np.conj(_zeta_dq(y, x, q)), q) if q is not None and inexact(q) else None
    return (dx, dq, None) if out is not None else (dx, dq)


def _zeta_frule(tangents, x, q=None, out=None):
    if out is not None:
        raise unsupported("scipy.special.zeta", "out=", "assign the result")
    y = sc.zeta(x, q)
    tx, tq = (tuple(tangents) + (None, None))[:2]
    if _zeta_s.refuses(tx, x):
        raise _zeta_s.error()
    return y, (None if tq is None else tq * _zeta_dq(y, x, q))


registry.adjoint(sc.zeta, kind="elementwise")(_zeta_adjoint)
registry.frule(sc.zeta, kind="elementwise")(_zeta_frule)
registry.set_kind("elementwise", sc.zeta, partials=(_zeta_s, _zeta_dq))
ufunc_rule(sc.wrightomega, lambda y, z: y / (1 + y), name="wrightomega")
ufunc_rule(sc.spence, lambda y, z: np.where(z == 1, -1.0, np.log(z) / np.where(z == 1, 2.0, 1 - z)), name="spence")
registry.nondifferentiable(sc.gammasgn)


# -- elliptic integrals ------------------------------------------------------------------------------------

def _ellipk_partial(y, m):
    m = np.asarray(m)
    safe = np.where((m == 0) | (m == 1), 0.5, m)
    return np.where(m == 0, math.pi / 8, (sc.ellipe(safe) - (1 - safe) * y) / (2 * safe * (1 - safe)))


def _ellipe_partial(y, m):
    m = np.asarray(m)
    safe = np.where(m == 0, 0.5, m)
    return np.where(m == 0, -math.pi / 8, (y - sc.ellipk(safe)) / (2 * safe))


def _sin4_integral(phi):
    """The integral of sin(t)**4 from 0 to phi: the m-coefficient of dF/dm and dE/dm at m = 0."""
    return 3 * phi / 8 - np.sin(2 * phi) / 4 + np.sin(4 * phi) / 32


def _ellipkinc_dm(y, phi, m):
    given = m
    m = np.asarray(plain(m))  # (m = 0 is a removable singularity of the formula, the series continuing it:
    # compared as a plain value, no kink under an outer derivative, `lowered.runtime.moving_tie`)
    safe = np.where((m == 0) | (m == 1), 0.5, given)
    s = np.sqrt(1 - safe * np.sin(phi) ** 2)
    general = (sc.ellipeinc(phi, safe) / (2 * safe * (1 - safe)) - y / (2 * safe)
               - np.sin(2 * phi) / (4 * (1 - safe) * s))
    # at m = 0: the series F = phi + m (phi - sin(phi) cos(phi)) / 4 + m**2 (3/8) int sin**4 + ...; its m term kept,
    # 0 in value, for a hessian's derivative of this partial in m (a constant gave 0 for 0.02, gen24 W11)
    at_zero = (phi - np.sin(phi) * np.cos(phi)) / 4 + given * (0.75 * _sin4_integral(phi))
    return np.where(m == 0, at_zero, general)


def _ellipeinc_dm(y, phi, m):
    given = m
    m = np.asarray(plain(m))  # (as ellipkinc's)
    safe = np.where(m == 0, 0.5, given)
    at_zero = -(phi - np.sin(phi) * np.cos(phi)) / 4 - given * (0.25 * _sin4_integral(phi))  # (as ellipkinc's)
    return np.where(m == 0, at_zero, (y - sc.ellipkinc(phi, safe)) / (2 * safe))


ufunc_rule(sc.ellipk, _ellipk_partial, name="ellipk")
ufunc_rule(sc.ellipkm1, lambda y, p: -_ellipk_partial(y, 1 - np.asarray(p)), name="ellipkm1")  # K(1 - p)
ufunc_rule(sc.ellipe, _ellipe_partial, name="ellipe")
ufunc_rule(sc.ellipkinc, lambda y, phi, m: 1 / np.sqrt(1 - m * np.sin(phi) ** 2), _ellipkinc_dm, name="ellipkinc")
ufunc_rule(sc.ellipeinc, lambda y, phi, m: np.sqrt(1 - m * np.sin(phi) ** 2), _ellipeinc_dm, name="ellipeinc")


# -- exponential integrals, sine and cosine integrals, Fresnel integrals ----------------------------------

ufunc_rule(sc.expi, lambda y, x: np.exp(x) / x, name="expi")
ufunc_rule(sc.exp1, lambda y, z: -np.exp(-z) / z, name="exp1")
def _expn_dx(y, n, x):
    """d expn(n, x)/dx = -expn(n - 1, x), and -e^-x/x (-y (1 + 1/x)) at n = 0; n truncated to an integer
    first, as expn does with a float order (0.55 is 0: the recurrence at -0.45 was wrong)."""
    n = np.trunc(n)
    return np.where(n == 0, -y * (1 + 1 / x), -sc.expn(np.maximum(n - 1, 0), x))


ufunc_rule(sc.expn, *_no("expn", "n"), _expn_dx, name="expn")


def _two_integrals(fn, name, d0, d1):
    """Rules of a ufunc of one argument with two differentiable outputs (sici, shichi, fresnel)."""
    def adjoint(dy, y, x, **kwargs):
        if dy is None or not inexact(x):
            return (None,)
        g = 0
        for d, p in zip(dy, (d0, d1)):
            if d is not None:
                g = g + d * np.conj(p(x))
        return (match_primal(g, x),)

    def frule(tangents, x, **kwargs):
        y = fn(x, **kwargs)
        t = tangents[0] if tangents else None
        return y, (None if t is None else (t * d0(x), t * d1(x)))
    adjoint.__name__ = adjoint.__qualname__ = f"{name}_adjoint"
    frule.__name__ = frule.__qualname__ = f"{name}_frule"
    registry.adjoint(fn, kind="elementwise")(adjoint)
    registry.frule(fn, kind="elementwise")(frule)


def _sinc_like(f):
    """f(x) / x, with its limit 1 at 0 (sin, sinh)."""
    def partial(x):
        x = np.asarray(x)
        return np.where(x == 0, 1.0, f(x) / np.where(x == 0, 1.0, x))
    return partial


_two_integrals(sc.sici, "sici", _sinc_like(np.sin), lambda x: np.cos(x) / x)
_two_integrals(sc.shichi, "shichi", _sinc_like(np.sinh), lambda x: np.cosh(x) / x)
_two_integrals(sc.fresnel, "fresnel", lambda z: np.sin(math.pi / 2 * z * z), lambda z: np.cos(math.pi / 2 * z * z))


# -- Jacobi's elliptic functions: sn, cn, dn and the amplitude of (u, m) -------------------------------------

def _ellipj_partials(u, m):
    """((d/du), (d/dm)) of ellipj's four outputs (sn, cn, dn, ph = am(u|m)). In m by the amplitude's: at fixed
    u = F(ph|m), dph/dm = dn (sn cn / dn - (E(ph|m) - (1 - m) u) / m) / (2 (1 - m)) (E the incomplete integral
    of the second kind), with its limit -(u - sin u cos u) / 4 at m = 0; none at m = 1 (NaN)."""
    sn, cn, dn, ph = sc.ellipj(u, m)
    u, m = np.asarray(u, dtype=float), np.asarray(m, dtype=float)
    at_zero = m == 0
    safe = np.where(at_zero, 0.5, m)
    dph = np.where(at_zero, -(u - np.sin(u) * np.cos(u)) / 4,
                   dn * (sn * cn / dn - (sc.ellipeinc(ph, safe) - (1 - safe) * u) / safe) / (2 * (1 - m)))
    by_u = (cn * dn, -sn * dn, -m * sn * cn, dn)
    by_m = (cn * dph, -sn * dph, (-sn * sn - 2 * m * sn * cn * dph) / (2 * dn), dph)
    return by_u, by_m


def ellipj_adjoint(dy, y, u, m, **kwargs):
    if dy is None or all(d is None for d in dy):
        return (None, None)
    by_u, by_m = _ellipj_partials(u, m)
    gu = sum(d * p for d, p in zip(dy, by_u) if d is not None)
    gm = sum(d * p for d, p in zip(dy, by_m) if d is not None)
    return (match_primal(gu, u) if inexact(u) else None, match_primal(gm, m) if inexact(m) else None)


def ellipj_frule(tangents, u, m, **kwargs):
    y = sc.ellipj(u, m, **kwargs)
    tu, tm = (tuple(tangents) + (None, None))[:2]
    if tu is None and tm is None:
        return y, None
    by_u, by_m = _ellipj_partials(u, m)
    return y, tuple((0 if tu is None else tu * pu) + (0 if tm is None else tm * pm) for pu, pm in zip(by_u, by_m))


registry.adjoint(sc.ellipj, kind="elementwise")(ellipj_adjoint)
registry.frule(sc.ellipj, kind="elementwise")(ellipj_frule)


# -- elementary functions in scipy.special's own versions ------------------------------------------------

_DEG = math.pi / 180


def _exprel_partial(y, x):
    """d/dx (e^x - 1) / x = (e^x - y) / x; by its series 1/2 + x/3 + x^2/8 + x^3/30 near 0 (no cancellation)."""
    x = np.asarray(x)
    small = np.abs(x) < 1e-3
    safe = np.where(small, 1.0, x)
    return np.where(small, 0.5 + x / 3 + x * x / 8 + x ** 3 / 30, (np.exp(safe) - y) / safe)


ufunc_rule(sc.expm1, lambda y, x: y + 1, name="expm1")
ufunc_rule(sc.cosm1, lambda y, x: -np.sin(x), name="cosm1")  # cos(x) - 1 (scipy.stats.vonmises' logpdf)
ufunc_rule(sc.log1p, OneOver(lambda y, x: 1 + x), name="log1p")
ufunc_rule(sc.cbrt, OneOver(lambda y, x: 3 * y * y), name="cbrt")
ufunc_rule(sc.exp2, lambda y, x: y * math.log(2), name="exp2")
ufunc_rule(sc.exp10, lambda y, x: y * math.log(10), name="exp10")
ufunc_rule(sc.exprel, _exprel_partial, name="exprel")
ufunc_rule(sc.sindg, lambda y, x: _DEG * sc.cosdg(x), name="sindg")
ufunc_rule(sc.cosdg, lambda y, x: -_DEG * sc.sindg(x), name="cosdg")
ufunc_rule(sc.tandg, lambda y, x: _DEG * (1 + y * y), name="tandg")
ufunc_rule(sc.cotdg, lambda y, x: -_DEG * (1 + y * y), name="cotdg")


# -- Box-Cox transforms: in the data and in lambda (closed forms; lambda = 0 by its limit) ----------------

def _series(coefficients, u):
    """sum_m coefficients[m] u^m by Horner's rule, in generic arithmetic (a dual u carries its tangent)."""
    total = coefficients[-1]
    for c in coefficients[-2::-1]:
        total = total * u + c
    return total


# d/dl (x^l - 1) / l = (log x)^2 sum_m (m + 1) / (m + 2)! (l log x)^m; d/dl log1p(l y) / l = y^2 sum_m
# (-1)^(m+1) (m + 1) / (m + 2) (l y)^m: below these |u| the closed forms cancel (eps / u^2 in the hessian)
_BOXCOX_SERIES = [(m + 1) / math.factorial(m + 2) for m in range(14)]
_INV_BOXCOX_SERIES = [(-1) ** (m + 1) * (m + 1) / (m + 2) for m in range(20)]
_BOXCOX_SMALL, _INV_BOXCOX_SMALL = 0.1, 0.05


def _boxcox_dlmbda(y, x, lmbda):
    """d/dlambda (x^l - 1) / l = (x^l log x - y) / l; near l = 0 (|l log x| small) its series, whose
    l-dependence a dual lambda differentiates: the limit (log x)^2 / 2 as a constant had no tangent in l
    (hessian 0 at l = 0) and the closed form cancelled near it (-93.6 for 0.0222 at 1e-9, gen24 W10)."""
    log_x = np.log(x)
    u = lmbda * log_x
    small = np.abs(u) < _BOXCOX_SMALL
    safe = np.where(small, 1.0, lmbda)
    closed = (np.exp(safe * log_x) * log_x - y) / safe
    return np.where(small, log_x * log_x * _series(_BOXCOX_SERIES, np.where(small, u, 0.0)), closed)


def _inv_boxcox_dlmbda(x, y, lmbda):
    """x = (1 + l y)^(1/l): dx/dl = x (y / (l (1 + l y)) - log(1 + l y) / l^2); near l = 0 (|l y| small)
    x times its series, -x y^2 / 2 at l = 0 (differentiable in l there, as _boxcox_dlmbda's, gen24 W10)."""
    u = lmbda * y
    small = np.abs(u) < _INV_BOXCOX_SMALL
    safe = np.where(small, 1.0, lmbda)
    general = x * (y / (safe * (1 + safe * y)) - np.log1p(safe * y) / (safe * safe))
    return np.where(small, x * y * y * _series(_INV_BOXCOX_SERIES, np.where(small, u, 0.0)), general)


ufunc_rule(sc.boxcox, lambda y, x, lmbda: np.power(x, lmbda - 1), _boxcox_dlmbda, name="boxcox")
ufunc_rule(sc.boxcox1p, lambda y, x, lmbda: np.power(1 + x, lmbda - 1),
           lambda y, x, lmbda: _boxcox_dlmbda(y, 1 + x, lmbda), name="boxcox1p")
ufunc_rule(sc.inv_boxcox, lambda x, y, lmbda: np.power(x, 1 - lmbda), _inv_boxcox_dlmbda, name="inv_boxcox")
ufunc_rule(sc.inv_boxcox1p, lambda x, y, lmbda: np.power(1 + x, 1 - lmbda),
           lambda x, y, lmbda: _inv_boxcox_dlmbda(1 + x, y, lmbda), name="inv_boxcox1p")


# -- information theory and robust losses ------------------------------------------------------------------

ufunc_rule(sc.entr, lambda y, x: -(np.log(x) + 1), name="entr")
ufunc_rule(sc.rel_entr, lambda y, x, z: np.log(x / z) + 1, lambda y, x, z: -x / z, name="rel_entr")
ufunc_rule(sc.kl_div, lambda y, x, z: np.log(x / z), lambda y, x, z: 1 - x / z, name="kl_div")


def _huber_ddelta(y, delta, r):
    return np.where(np.abs(r) <= delta, 0.0, np.abs(r) - delta)


def _huber_dr(y, delta, r):
    return np.where(np.abs(r) <= delta, r, delta * np.sign(r))


def _pseudo_huber_ddelta(y, delta, r):
    s = np.sqrt(1 + (r / delta) ** 2)
    return 2 * y / delta - r * r / (delta * s)


ufunc_rule(sc.huber, _huber_ddelta, _huber_dr, name="huber")
ufunc_rule(sc.pseudo_huber, _pseudo_huber_ddelta, lambda y, delta, r: r / np.sqrt(1 + (r / delta) ** 2),
           name="pseudo_huber")
