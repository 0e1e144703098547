"""Rules for scipy.special: `logsumexp`, `softmax`, `log_softmax` and the elementwise special functions
(`expit`, `log_expit`, `logit`, `erf`, `erfc`, `erfinv`, `erfcinv`, `ndtr`, `log_ndtr`, `gamma`, `lambertw`,
`gammaln`, `digamma`, `poch`, `xlogy`, `xlog1py`). Importing it without scipy installed raises ImportError,
which `contexts.rules.numpy` tolerates.

`logsumexp(a, axis, b, keepdims, return_sign)`: every axis form; the scale `b` gets a cotangent when
passed positionally (keyword arguments are never differentiated, see the registry); with
`return_sign=True` only the log-magnitude is differentiable.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special as sc

from ..registry import registry
from ..sparsity_specs import Custom
from .reductions import _expand, reduction_rule
from .ufuncs import _safe_div, inexact, match_primal, ufunc_rule

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
    return np.where(z == 0, 1.0 + 0.0 * w, w / (safe * (1.0 + w)))


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
