"""Rules for scipy.spatial.distance: `cdist` and `pdist` with the euclidean, squared euclidean and
cityblock metrics (the distances behind scikit-learn's RBF and Matern kernels), and `squareform` (a linear
rearrangement). Their C kernels (`pdist_sqeuclidean`, ...) cannot be differentiated; these rules take the
Python functions' place. Other metrics, weights (`w=`), and `out=` are refused (UnsupportedCase).

For D_ij = |a_i - b_j| the cotangent of A is `rowsum(W) A - W B` with W = G / D (0 where D is 0: the
subgradient 0 of the norm at the origin, as `abs` has) and G the cotangent of D; for the squared distance
W = 2 G; for the cityblock distance sum_k |a_ik - b_jk| the cotangent of a_i is sum_j G_ij sign(a_i - b_j)
(sign 0 at 0, as `abs` has). `pdist` is `cdist(X, X)` read on the upper triangle.
"""

from __future__ import annotations

import numpy as np
import scipy.spatial.distance as _distance

from ..registry import registry
from ._util import unsupported

__all__: list[str] = []

_METRICS = ("euclidean", "sqeuclidean", "cityblock")


def _metric(name: str, args: tuple, kwargs: dict) -> str:
    metric = args[0] if args else kwargs.get("metric", "euclidean")
    extra = {k for k, v in kwargs.items() if k != "metric" and v is not None}
    if not isinstance(metric, str) or metric not in _METRICS or extra:
        raise unsupported(name, f"metric={metric!r}" + (f" with {sorted(extra)}" if extra else ""),
                          fix="use metric='euclidean' or 'sqeuclidean' without w= or out=, or compute the "
                              "distances with numpy (np.sum((a[:, None] - b[None]) ** 2, axis=-1))")
    return metric


def _weights(g, d, metric):
    """W of the module docstring: the cotangent of each distance as a weight on a_i - b_j."""
    if metric == "sqeuclidean":
        return 2.0 * g
    safe = np.where(d > 0, d, 1.0)
    return np.where(d > 0, g / safe, 0.0)


def _pair_cotangents(w, a, b):
    """(dA, dB) for weights w on the differences a_i - b_j."""
    da = w.sum(axis=1)[:, None] * a - w @ b
    db = w.sum(axis=0)[:, None] * b - w.T @ a
    return da, db


def _pair_tangent(a, b, ta, tb, d, metric):
    """The tangent of D for tangents ta, tb of A, B (None: constant)."""
    ta = np.zeros_like(a) if ta is None else np.asarray(ta, dtype=float)
    tb = np.zeros_like(b) if tb is None else np.asarray(tb, dtype=float)
    # d/dt |a_i - b_j|^2 = 2 (a_i - b_j) . (ta_i - tb_j)
    sq = 2.0 * (np.sum(a * ta, axis=1)[:, None] - a @ tb.T - ta @ b.T + np.sum(b * tb, axis=1)[None, :])
    if metric == "sqeuclidean":
        return sq
    safe = np.where(d > 0, d, 1.0)
    return np.where(d > 0, sq / (2.0 * safe), 0.0)


def _cityblock_cotangents(g, a, b):
    s = np.sign(a[:, None, :] - b[None, :, :]) * g[:, :, None]
    return s.sum(axis=1), -s.sum(axis=0)


def _cityblock_tangent(a, b, ta, tb):
    ta = np.zeros_like(a) if ta is None else np.asarray(ta, dtype=float)
    tb = np.zeros_like(b) if tb is None else np.asarray(tb, dtype=float)
    return np.sum(np.sign(a[:, None, :] - b[None, :, :]) * (ta[:, None, :] - tb[None, :, :]), axis=-1)


def _cdist_adjoint(dy, y, xa, xb, *args, **kwargs):
    metric = _metric("scipy.spatial.distance.cdist", args, kwargs)
    if dy is None:
        return (None, None) + (None,) * len(args)
    a, b = np.asarray(xa, dtype=float), np.asarray(xb, dtype=float)
    if metric == "cityblock":
        da, db = _cityblock_cotangents(np.asarray(dy, dtype=float), a, b)
        return (da.reshape(np.shape(xa)), db.reshape(np.shape(xb))) + (None,) * len(args)
    da, db = _pair_cotangents(_weights(np.asarray(dy), np.asarray(y), metric), a, b)
    return (da.reshape(np.shape(xa)), db.reshape(np.shape(xb))) + (None,) * len(args)


def _cdist_frule(tangents, xa, xb, *args, **kwargs):
    metric = _metric("scipy.spatial.distance.cdist", args, kwargs)
    y = _distance.cdist(xa, xb, *args, **kwargs)
    ta = tangents[0] if tangents else None
    tb = tangents[1] if len(tangents) > 1 else None
    if ta is None and tb is None:
        return y, None
    a, b = np.asarray(xa, dtype=float), np.asarray(xb, dtype=float)
    if metric == "cityblock":
        return y, _cityblock_tangent(a, b, ta, tb)
    return y, _pair_tangent(a, b, ta, tb, y, metric)


def _pdist_adjoint(dy, y, x, *args, **kwargs):
    metric = _metric("scipy.spatial.distance.pdist", args, kwargs)
    if dy is None:
        return (None,) * (1 + len(args))
    a = np.asarray(x, dtype=float)
    g = _distance.squareform(np.asarray(dy, dtype=float), checks=False)  # each pair's weight at (i, j), (j, i)
    if metric == "cityblock":  # (G is symmetric: row i holds every pair x_i is in)
        return (_cityblock_cotangents(g, a, a)[0].reshape(np.shape(x)),) + (None,) * len(args)
    d = _distance.squareform(np.asarray(y, dtype=float), checks=False)
    w = _weights(g, d, metric)
    dx = w.sum(axis=1)[:, None] * a - w @ a
    return (dx.reshape(np.shape(x)),) + (None,) * len(args)


def _pdist_frule(tangents, x, *args, **kwargs):
    metric = _metric("scipy.spatial.distance.pdist", args, kwargs)
    y = _distance.pdist(x, *args, **kwargs)
    t = tangents[0] if tangents else None
    if t is None:
        return y, None
    a = np.asarray(x, dtype=float)
    full = (_cityblock_tangent(a, a, t, t) if metric == "cityblock"
            else _pair_tangent(a, a, t, t, _distance.squareform(y, checks=False), metric))
    i, j = np.triu_indices(len(a), k=1)
    return y, full[i, j]


def _squareform_adjoint(dy, y, x, *args, **kwargs):
    if dy is None:
        return (None,) * (1 + len(args))
    g = np.asarray(dy)
    if np.ndim(x) == 1:  # vector -> symmetric matrix: each entry was written at (i, j) and (j, i)
        i, j = np.triu_indices(g.shape[0], k=1)
        return (g[i, j] + g[j, i],) + (None,) * len(args)
    n = np.shape(x)[0]  # matrix -> vector: the upper triangle read
    out = np.zeros((n, n), dtype=g.dtype)
    i, j = np.triu_indices(n, k=1)
    out[i, j] = g
    return (out,) + (None,) * len(args)


def _squareform_frule(tangents, x, *args, **kwargs):
    y = _distance.squareform(x, *args, **kwargs)
    t = tangents[0] if tangents else None
    if t is None:
        return y, None
    return y, _distance.squareform(np.asarray(t, dtype=float), *args, **{**kwargs, "checks": False})


registry.adjoint(_distance.cdist)(_cdist_adjoint)
registry.frule(_distance.cdist)(_cdist_frule)
registry.adjoint(_distance.pdist)(_pdist_adjoint)
registry.frule(_distance.pdist)(_pdist_frule)
registry.adjoint(_distance.squareform, kind="linear")(_squareform_adjoint)
registry.frule(_distance.squareform, kind="linear")(_squareform_frule)
