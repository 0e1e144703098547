"""`np.roots` and `np.linalg.eigvals`: the zeros of a polynomial and the eigenvalues of a general matrix,
differentiable where they are simple (numpy-financial's `irr`, statsmodels' `arma_acf` go through them).

- eigvals(A) = w with A V = V diag(w): dw_i = (V^-1 dA V)_ii; the cotangent is V^-H diag(dw) V^H.
- roots(p) = r with p(r_i) = 0: dr_i = -dp(r_i) / p'(r_i), dp the polynomial of the coefficients'
  tangents; the cotangent of p_k is the sum over i of conj(-r_i^(n-k) / p'(r_i)) times that of r_i.

A repeated eigenvalue or root has no derivative (it splits at a rate that is not linear): refused.
Complex values follow Zygote's convention, as the other rules (the conjugate Jacobian).

>>> import numpy as np
>>> from contexts import derivative
>>> round(float(derivative(lambda c: np.roots([1.0, -3.0, c]).max(), 2.0)), 12)  # r = (3 + sqrt(9 - 4c)) / 2
-1.0
"""

from __future__ import annotations

import numpy as np

from ..registry import registry
from ._util import match_primal, unsupported

__all__ = ["eig_adjoint", "eig_frule", "eigvals_adjoint", "eigvals_frule", "roots_adjoint", "roots_frule"]


def _simple(w, what: str, fn: str) -> None:
    """Refuse values w that repeat (to a relative 1e-8): their derivative does not exist."""
    w = np.asarray(w).ravel()
    if w.size < 2:
        return
    scale = max(1.0, float(np.max(np.abs(w))))
    gaps = np.abs(w[:, None] - w[None, :]) + np.eye(w.size) * scale
    if np.min(gaps) <= 1e-8 * scale:
        raise unsupported(fn, f"a repeated {what} (its derivative does not exist)",
                          "perturb the input off the repeated case, or differentiate a symmetric function of "
                          "the values (their sum, product: the trace, determinant) instead")


def _eig(a, fn="np.linalg.eigvals"):
    a = np.asarray(a)
    if a.ndim != 2:
        raise unsupported(fn, "a stack of matrices", "call it per matrix")
    w, v = np.linalg.eig(a)
    _simple(w, "eigenvalue", fn)
    return w, v, np.linalg.inv(v)


def eigvals_frule(tangents, a):
    y = np.linalg.eigvals(a)
    t = tangents[0]
    if t is None:
        return y, None
    w, v, u = _eig(a)
    order = _matching(y, w)
    dw = np.einsum("ij,...jk,ki->...i", u, np.asarray(t), v)[..., order]
    return y, (dw if np.iscomplexobj(y) else dw.real)


def eigvals_adjoint(dy, y, a):
    w, v, u = _eig(a)
    order = _matching(y, w)
    g = np.zeros(w.shape, dtype=complex)
    g[order] = dy  # (the cotangent of y, in the order of eig's w)
    return (match_primal(np.conj(u).T @ (g[:, None] * np.conj(v).T), a),)


# -- np.linalg.eig: eigenvalues and eigenvectors of a general matrix ---------------------------------------
# With A V = V diag(w) and U = V^-1, a direction dA moves w by diag(U dA V) and the eigenvectors, before
# LAPACK's normalisation, by V (F * (U dA V)), F_il = 1 / (w_l - w_i) off the diagonal, 0 on it. LAPACK
# (geev) scales each eigenvector to unit norm with its largest component real, so the normalised one moves by
# dv + v (a + i b) with a = -Re(v^H dv) (the norm kept) and b = -Im(dv_m) / v_m (the largest component kept
# real). The reverse rule is the adjoint of that map, taken direction by direction (the matrices eig is used on
# in code are small: matpopmod's population matrices); larger ones are refused.

_EIG_LARGEST = 40


def _eig_parts(a):
    w, v, u = _eig(a, "np.linalg.eig")
    f = w[None, :] - w[:, None]
    np.fill_diagonal(f, 1.0)
    f = 1.0 / f
    np.fill_diagonal(f, 0.0)
    return w, v, u, f


def _eig_tangents(parts, m):
    """(dw, dv) for `m = U dA V` (directions on leading axes)."""
    w, v, u, f = parts
    dw = np.diagonal(m, axis1=-2, axis2=-1)
    dv = v @ (f * m)
    a = -np.real(np.sum(np.conj(v) * dv, axis=-2))  # (per column)
    big = np.argmax(np.abs(v), axis=0)
    cols = np.arange(v.shape[1])
    b = -np.imag(dv[..., big, cols]) / np.real(v[big, cols])
    return dw, dv + v * (a + 1j * b)[..., None, :]


def eig_frule(tangents, a):
    y = np.linalg.eig(a)
    t = tangents[0]
    if t is None:
        return y, None
    parts = _eig_parts(a)
    dw, dv = _eig_tangents(parts, parts[2] @ np.asarray(t) @ parts[1])
    real = not np.iscomplexobj(y[0])  # (numpy gives real arrays where every eigenvalue is real)
    return y, (dw.real if real else dw, dv.real if real else dv)


def eig_adjoint(dy, y, a):
    gw, gv = dy if dy is not None else (None, None)
    n = np.shape(a)[0]
    if n > _EIG_LARGEST:
        raise unsupported("np.linalg.eig", f"a {n}x{n} matrix (its reverse rule takes each of n^2 directions)",
                          "use np.linalg.eigvals for the eigenvalues, or np.linalg.eigh for a symmetric matrix")
    parts = _eig_parts(a)
    w, v, u, _ = parts
    # every direction E_jk at once: U E_jk V = outer(U[:, j], V[k, :])
    m = u.T[:, None, :, None] * v[None, :, None, :]
    dw, dv = _eig_tangents(parts, m)
    g = np.zeros((n, n))
    if gw is not None:
        g = g + np.real(np.einsum("i,jki->jk", np.asarray(gw), np.conj(dw)))
    if gv is not None:
        g = g + np.real(np.einsum("pl,jkpl->jk", np.asarray(gv), np.conj(dv)))
    return (match_primal(g, a),)


def _matching(y, w) -> np.ndarray:
    """The indices of w that give y (eigvals and eig may order their values differently)."""
    y, w = np.asarray(y), np.asarray(w)
    order = np.argmin(np.abs(y[:, None] - w[None, :]), axis=1)
    if len(set(order.tolist())) != len(order):
        raise unsupported("np.linalg.eigvals", "eigenvalues eig does not reproduce", "use np.linalg.eig")
    return order


def _parts(p, y):
    """(powers P[i, k] = r_i^(n-k), 1 / p'(r_i)) for the roots y of p."""
    p = np.asarray(p)
    r = np.asarray(y)
    n = p.size - 1
    _simple(r, "root", "np.roots")
    powers = r[:, None] ** np.arange(n, -1, -1)[None, :] if r.size else np.zeros((0, n + 1))
    slope = np.polyval(np.polyder(p), r) if n > 0 else np.zeros(0)
    return powers, 1.0 / slope


def roots_frule(tangents, p):
    y = np.roots(p)
    t = tangents[0]
    if t is None or y.size == 0:
        return y, (None if t is None else np.zeros_like(y))
    powers, inv = _parts(p, y)
    dy = -(np.asarray(t) @ powers.T) * inv  # (t may hold several directions on leading axes)
    return y, (dy if np.iscomplexobj(y) else dy.real)


def roots_adjoint(dy, y, p):
    if np.size(y) == 0:
        return (None,)
    powers, inv = _parts(p, y)
    c = np.conj(-inv) * np.asarray(dy)
    return (match_primal(np.conj(powers).T @ c, p),)


registry.adjoint(np.linalg.eig)(eig_adjoint)
registry.frule(np.linalg.eig)(eig_frule)
registry.adjoint(np.linalg.eigvals)(eigvals_adjoint)
registry.frule(np.linalg.eigvals)(eigvals_frule)
registry.adjoint(np.roots)(roots_adjoint)
registry.frule(np.roots)(roots_frule)
