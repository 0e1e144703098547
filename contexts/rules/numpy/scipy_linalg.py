"""Rules for the LAPACK routines under scipy.linalg's triangular and Cholesky solvers and its symmetric
eigensolver (real types): `?trtrs` (`solve_triangular`), `?potrf` (`cholesky`, `cho_factor`), `?potrs`
(`cho_solve`), `?getrf`, `?getrs` (`lu_factor`, `lu_solve`), `?syevr`, `?syevd`, `?syev` (`eigh`, `eigvalsh`), `?gesdd`, `?gesvd` (`svd`, `svdvals`,
`pinv`, `orth`, `null_space`) and `?gelsd` (`lstsq`, and so savgol_coeffs and detrend).
scipy's Python code around them (argument checks, transposing C-ordered input) is differentiated as
written. Importing it without scipy installed raises ImportError, which `contexts.rules.numpy` tolerates.

Each routine reads one triangle of its matrix argument, and its rule is the gradient of exactly that
function: zero on the triangle it never reads, so finite differences in any direction agree.
`potrf(a, clean=0)` (what `cho_factor` asks for) leaves `a`'s own entries in the other triangle of its
result, and passes their cotangent through.

>>> import numpy as np, scipy.linalg
>>> from contexts import gradient
>>> l = np.array([[2.0, 0.0], [1.0, 4.0]])
>>> gradient(lambda b: np.sum(scipy.linalg.solve_triangular(l, b, lower=True)), np.ones(2))[0]
array([0.375, 0.25 ])
"""

from __future__ import annotations

import inspect
import types

import numpy as np
import scipy.linalg as scipy_linalg
import scipy.linalg.lapack as lapack

from ..cotangents import Refused
from ..registry import NoClosedForm, NoDerivative, registry
from ._util import bind as _bind, match_primal, unsupported
from .linalg import (_lower_gradient, cholesky_adjoint, cholesky_frule, det_adjoint, det_frule, eigh_middle, eigh_tangents,
                     hermitian_seen, lstsq_adjoint, lstsq_frule, svd_adjoint, svd_frule)

__all__: list[str] = []


def _outer(u, v):
    """u v^T for vectors (one right-hand side) or matrices (several)."""
    return np.multiply.outer(u, v) if u.ndim == 1 else u @ v.T


def _triangle(a, lower, k=0):
    """The triangle of `a` a routine reads: lower (tril) or upper (triu), `k` off the diagonal."""
    return np.tril(a, -k) if lower else np.triu(a, k)


def _real(name, *arrays):
    if any(np.iscomplexobj(a) for a in arrays):
        raise unsupported(name, "complex matrices", "split real and imaginary parts")


# -- trtrs: op(T) x = b, T triangular ---------------------------------------------------------------------

_TRTRS = ("lower", "trans", "unitdiag")


def _op_triangle(a, lower, trans, unitdiag):
    """op(T) for trtrs: T the triangle read (unit diagonal if asked), transposed for trans = 1 or 2."""
    t = _triangle(np.asarray(a), lower)
    if unitdiag:
        np.fill_diagonal(t, 1)
    return t.T if trans else t


def trtrs_adjoint(dy, y, a, b, *rest, **kwargs):
    """Pullback of `x, info = ?trtrs(a, b, lower, trans, unitdiag)`: bbar = op(T)^-T xbar, and
    -bbar x^T (transposed back for trans) on the triangle read (off the diagonal for unitdiag)."""
    lower, trans, unitdiag = _bind(rest, kwargs, _TRTRS, (0, 0, 0))
    _real("scipy.linalg.solve_triangular", a, b)
    dx = dy[0] if dy is not None else None
    nones = (None,) * len(rest)
    if dx is None:
        return (None, None) + nones
    op = _op_triangle(a, lower, trans, unitdiag)
    db = np.linalg.solve(op.T, np.asarray(dx))
    da_op = -_outer(db, y[0])
    da = _triangle(da_op.T if trans else da_op, lower, 1 if unitdiag else 0)
    return (match_primal(da, a), match_primal(db, b)) + nones


def _trtrs_frule(fn):
    def trtrs_frule(tangents, a, b, *rest, **kwargs):
        y = fn(a, b, *rest, **kwargs)
        ta, tb = (tuple(tangents) + (None, None))[:2]
        if ta is None and tb is None:
            return y, None
        lower, trans, unitdiag = _bind(rest, kwargs, _TRTRS, (0, 0, 0))
        _real("scipy.linalg.solve_triangular", a, b)
        rhs = np.zeros_like(y[0]) if tb is None else np.asarray(tb, dtype=y[0].dtype)
        if ta is not None:
            dt = _triangle(np.asarray(ta), lower, 1 if unitdiag else 0)
            rhs = rhs - (dt.T if trans else dt) @ y[0]
        return y, (np.linalg.solve(_op_triangle(a, lower, trans, unitdiag), rhs), None)
    return trtrs_frule


# -- potrf: the Cholesky factor in one triangle -----------------------------------------------------------

_POTRF = ("lower", "clean")


def potrf_adjoint(dy, y, a, *rest, **kwargs):
    """Pullback of `c, info = ?potrf(a, lower, clean)`: the Cholesky factor's pullback (the lower one of
    a^T for an upper factor), plus, for clean=0, the other triangle's cotangent passed through."""
    lower, clean = _bind(rest, kwargs, _POTRF, (0, 1))
    _real("scipy.linalg.cholesky", a)
    dc = dy[0] if dy is not None else None
    nones = (None,) * len(rest)
    if dc is None:
        return (None,) + nones
    a_, c, dc = np.asarray(a), y[0], np.asarray(dc)
    if lower:
        (da,) = cholesky_adjoint(np.tril(dc), np.tril(c), a_)
    else:
        (da,) = cholesky_adjoint(np.triu(dc).T, np.triu(c).T, a_.T)
        da = da.T
    if not clean:
        da = da + _triangle(dc, not lower, 1)
    return (match_primal(da, a),) + nones


def _potrf_frule(fn):
    def potrf_frule(tangents, a, *rest, **kwargs):
        # (on a copy: with overwrite_a the factor would replace the matrix read below, `_OVERWRITES`)
        rest = rest[:2] + (0,) + rest[3:] if len(rest) > 2 else rest
        y = fn(a, *rest, **{k: (0 if k == "overwrite_a" else v) for k, v in kwargs.items()})
        t = tangents[0] if tangents else None
        if t is None:
            return y, None
        lower, clean = _bind(rest, kwargs, _POTRF, (0, 1))
        _real("scipy.linalg.cholesky", a)
        a_, t = np.asarray(a), np.asarray(t)
        if lower:
            _, dc = cholesky_frule((t,), a_)
        else:
            _, dc = cholesky_frule((t.T,), a_.T)
            dc = dc.T
        if not clean:
            dc = dc + _triangle(t, not lower, 1)
        return y, (dc.astype(y[0].dtype, copy=False), None)
    return potrf_frule


# -- potrs: A x = b with A = L L^T (or U^T U) from potrf's factor ------------------------------------------

def _factor(c, lower):
    """(F, A): the factor potrs reads from c and the matrix it stands for."""
    f = _triangle(np.asarray(c), lower)
    return f, (f @ f.T if lower else f.T @ f)


def potrs_adjoint(dy, y, c, b, *rest, **kwargs):
    """Pullback of `x, info = ?potrs(c, b, lower)`: bbar = A^-1 xbar, Abar = -bbar x^T, and through
    A = L L^T the factor's cotangent tril((Abar + Abar^T) L) (triu(U (Abar + Abar^T)) for A = U^T U)."""
    (lower,) = _bind(rest, kwargs, ("lower",), (0,))
    _real("scipy.linalg.cho_solve", c, b)
    dx = dy[0] if dy is not None else None
    nones = (None,) * len(rest)
    if dx is None:
        return (None, None) + nones
    f, a = _factor(c, lower)
    db = np.linalg.solve(a, np.asarray(dx))
    da = -_outer(db, y[0])
    sym = da + da.T
    dc = np.tril(sym @ f) if lower else np.triu(f @ sym)
    return (match_primal(dc, c), match_primal(db, b)) + nones


def _potrs_frule(fn):
    def potrs_frule(tangents, c, b, *rest, **kwargs):
        y = fn(c, b, *rest, **kwargs)
        tc, tb = (tuple(tangents) + (None, None))[:2]
        if tc is None and tb is None:
            return y, None
        (lower,) = _bind(rest, kwargs, ("lower",), (0,))
        _real("scipy.linalg.cho_solve", c, b)
        f, a = _factor(c, lower)
        rhs = np.zeros_like(y[0]) if tb is None else np.asarray(tb, dtype=y[0].dtype)
        if tc is not None:
            df = _triangle(np.asarray(tc), lower)
            da = df @ f.T + f @ df.T if lower else df.T @ f + f.T @ df
            rhs = rhs - da @ y[0]
        return y, (np.linalg.solve(a, rhs), None)
    return potrs_frule



# -- syevr / syevd / syev: eigenvalues (and eigenvectors) of a symmetric matrix, one triangle read ------
# scipy.linalg.eigh calls them with every argument by keyword (`drv(a=a1, lower=..., compute_v=...)`);
# `lower=0` (LAPACK's default) reads the upper triangle. A subset of the spectrum (range 'I' or 'V') is
# refused; repeated eigenvalues are refused where they leave no derivative (`linalg.eigh_middle`).

_EV_OPTIONS = {"syevr": (("compute_v", "range", "lower"), (1, "A", 0)),
               "syevd": (("compute_v", "lower"), (1, 0)),
               "syev": (("compute_v", "lower"), (1, 0))}


def _ev_call(name, args, kwargs):
    """(a, compute_v, lower) of a call ?<name>(a, ...), `a` given by position or keyword."""
    a, rest = (args[0], args[1:]) if args else (kwargs["a"], ())
    names, defaults = _EV_OPTIONS[name]
    options = dict(zip(names, _bind(rest, kwargs, names, defaults)))
    if options.get("range", "A") not in ("A", "a"):
        raise unsupported("scipy.linalg.eigh", "a subset of the eigenvalues (subset_by_index, subset_by_value)",
                          "compute them all and select: scipy.linalg.eigh(a)[0][lo:hi + 1]")
    return a, bool(options["compute_v"]), bool(options["lower"])


def _ev_vectors(y, a, compute_v, lower):
    """The eigenvectors of the call, computed here when it asked for the eigenvalues only."""
    return y[1] if compute_v else np.linalg.eigh(np.asarray(a), "L" if lower else "U")[1]


def _workspace(name):
    """Why the second output of a compute_v=0 call (what LAPACK left in its workspace: neither eigenvectors nor
    a function the rules know) has no derivative."""
    return NoClosedForm(f"scipy.linalg.lapack.?{name} with compute_v=0", "a",
                        fix="its second output holds no eigenvectors when compute_v=0: call it with compute_v=1")


def _workspace_refused(name, args):
    """The cotangent of `a` when the workspace output of a compute_v=0 call has a cotangent: refused on use."""
    why = _workspace(name)
    return (why.cotangent(),) + (None,) * (len(args) - 1) if args else ({"a": why.cotangent()},)


def _ev_adjoint(name):
    def ev_adjoint(dy, y, *args, **kwargs):
        """Pullback of `w, v, ..., info = ?<name>(a, compute_v, lower)`: V (diag(dw) + F * (V^T dV)) V^T on
        the triangle read (NoDerivative, on use, where repeated eigenvalues leave none)."""
        a, compute_v, lower = _ev_call(name, args, kwargs)
        dw, dv = (tuple(dy) + (None, None))[:2] if dy is not None else (None, None)
        if not compute_v:
            if dv is not None and np.any(np.asarray(dv) != 0):
                return _workspace_refused(name, args)
            dv = None
        da = None
        if dw is not None or dv is not None:
            v = _ev_vectors(y, a, compute_v, lower)
            middle = eigh_middle(y[0], v, dw, dv, "scipy.linalg.eigh")
            if type(middle) is Refused:
                da = middle
            else:
                g = _lower_gradient(v @ middle @ v.T)
                da = match_primal(g if lower else g.T, a)
        if args:
            return (da,) + (None,) * (len(args) - 1)
        return ({"a": da},)
    ev_adjoint.__name__ = ev_adjoint.__qualname__ = f"{name}_adjoint"
    return ev_adjoint


def _ev_frule(fn, name):
    def ev_frule(tangents, *args, **kwargs):
        y = fn(*args, **kwargs)
        t = tangents[0] if tangents else None
        if t is None:
            return y, None
        a, compute_v, lower = _ev_call(name, args, kwargs)
        v = _ev_vectors(y, a, compute_v, lower)
        dw, dv = eigh_tangents(y[0], v, hermitian_seen(t, lower), "scipy.linalg.eigh", vectors=compute_v)
        if not compute_v:  # the second output is LAPACK's workspace: its tangent refuses any use, as its cotangent
            dv = _workspace(name).cotangent()  # (NaN before: a number where reverse mode refused)
        return y, (dw.astype(y[0].dtype, copy=False), dv) + (None,) * (len(y) - 2)
    ev_frule.__name__ = ev_frule.__qualname__ = f"{name}_frule"
    return ev_frule


for _prefix in ("s", "d"):
    for _name in _EV_OPTIONS:
        _fn = getattr(lapack, _prefix + _name)
        registry.adjoint(_fn)(_ev_adjoint(_name))
        registry.frule(_fn)(_ev_frule(_fn, _name))
        registry.set(_fn, positional=("a",))


# -- gesdd, gesvd: the SVD under scipy.linalg.svd, svdvals, pinv, orth, null_space ------------------------
# `u, s, vt, info = ?gesdd(a, compute_uv, full_matrices, lwork, overwrite_a)`: numpy's svd rules (the same
# factorisation, the same sign convention) on the matrix. With compute_uv=0, u and vt are 1x1 placeholders:
# a cotangent on them is refused, and so is any use of their tangent. The kernels run on a copy (overwrite_a,
# the fifth argument, set False: scipy.linalg.svd sets it for a matrix it converted, and the rules read it).

_SVD = ("compute_uv", "full_matrices", "lwork", "overwrite_a")


def _svd_call(args, kwargs):
    """(a, compute_uv, full_matrices) of a call ?gesdd(a, ...), `a` given by position or keyword."""
    a, rest = (args[0], args[1:]) if args else (kwargs["a"], ())
    compute_uv, full, _, _ = _bind(rest, kwargs, _SVD, (1, 1, None, 0))
    return a, bool(compute_uv), bool(full)


def _svd_cotangent(a, full, ds, du=None, dvt=None, factors=None):
    """a's cotangent by numpy's svd rule: from the singular values' alone (`factors` None), or with the
    vectors' (`factors` = (u, s, vt)); None where none is given."""
    if factors is None:
        return None if ds is None else svd_adjoint(ds, None, a, compute_uv=False)[0]
    if du is None and ds is None and dvt is None:
        return None
    return svd_adjoint((du, ds, dvt), factors, a, full_matrices=full)[0]


def _svd_tangents(t, a, full, vectors):
    """(du, ds, dvt) (`vectors`) or ds alone: numpy's svd frule on the matrix."""
    if vectors:
        return svd_frule((np.asarray(t),), np.asarray(a), full_matrices=full)[1]
    return svd_frule((np.asarray(t),), np.asarray(a), compute_uv=False)[1]


_PLACEHOLDERS = NoClosedForm("scipy.linalg.lapack.?gesdd with compute_uv=0", "a",
                             fix="its first and third outputs are placeholders when compute_uv=0: call it "
                                 "with compute_uv=1")


def gesdd_adjoint(dy, y, *args, **kwargs):
    """Pullback of `u, s, vt, info = ?gesdd(a, compute_uv, full_matrices)` (and ?gesvd): numpy's svd's."""
    a, compute_uv, full = _svd_call(args, kwargs)
    _real("scipy.linalg.svd", a)
    du, ds, dvt = (tuple(dy) + (None,) * 3)[:3] if dy is not None else (None,) * 3
    if not compute_uv and any(d is not None and np.any(np.asarray(d) != 0) for d in (du, dvt)):
        da = _PLACEHOLDERS.cotangent()
    else:
        da = _svd_cotangent(a, full, ds, du, dvt, tuple(y[:3]) if compute_uv else None)
    if args:
        return (da,) + (None,) * (len(args) - 1)
    return ({"a": da},)


def _svd_frule(fn):
    run = _copying(fn, (4,))

    def gesdd_frule(tangents, *args, **kwargs):
        y = run(*args, **kwargs)
        t = tangents[0] if tangents else None
        if t is None:
            return y, None
        a, compute_uv, full = _svd_call(args, kwargs)
        _real("scipy.linalg.svd", a)
        if not compute_uv:  # u and vt are placeholders: their tangent refuses any use, as their cotangent
            placeholder = _PLACEHOLDERS.cotangent()
            return y, (placeholder, _svd_tangents(t, a, full, False), placeholder, None)
        return y, _svd_tangents(t, a, full, True) + (None,)
    gesdd_frule.__name__ = gesdd_frule.__qualname__ = f"{fn.__name__}_frule"
    return gesdd_frule


for _prefix in ("s", "d"):
    for _name, _adjoint, _make_frule in (("trtrs", trtrs_adjoint, _trtrs_frule),
                                         ("potrf", potrf_adjoint, _potrf_frule),
                                         ("potrs", potrs_adjoint, _potrs_frule)):
        _fn = getattr(lapack, _prefix + _name)
        registry.adjoint(_fn)(_adjoint)
        registry.frule(_fn)(_make_frule(_fn))


# -- scipy >= 1.18: the batched LAPACK kernels behind cholesky, solve and inv -----------------------------
# `_batched_linalg._cholesky(a, lower, overwrite_a, clean)`, `_solve(a, b, structure, lower, transposed,
# overwrite_a, overwrite_b)` and `_inv(a, structure, overwrite_a, lower)` return `(result, errors)` and loop
# over leading batch axes. Cholesky reads one triangle (potrf's rule, per matrix); solve and inv are
# differentiated for a general matrix (`assume_a=None` or "general": structure -1 or 0, where every entry is
# read); a structure that reads one triangle or the diagonal is refused rather than given a dense gradient.

_GENERAL = (-1, 0)


def _per_matrix(fn, *arrays):
    """fn applied to each matrix of a batch (leading axes), results stacked; 2-D arrays directly."""
    if arrays[0].ndim == 2:
        return fn(*arrays)
    batch = arrays[0].shape[:-2]
    out = [fn(*(a[i] for a in arrays)) for i in np.ndindex(batch)]
    return np.stack(out).reshape(batch + out[0].shape)


def batched_cholesky_adjoint(dy, y, a, lower=False, overwrite_a=False, clean=True):
    dc = dy[0] if dy is not None else None
    if dc is None:
        return (None, None, None, None)
    da = _per_matrix(lambda dc_, c_, a_: potrf_adjoint((dc_, None), (c_, 0), a_, lower, clean)[0],
                     np.asarray(dc), y[0], np.asarray(a))
    return (match_primal(da, a), None, None, None)


def _general(name, structure, a=None):
    """Refuses a structure the rules cannot take: a code they do not know, the Hermitian ones ('pos',
    'her': a triangle mirrored with its conjugate) of a complex matrix, and inv's 'diagonal' (scipy 1.17's
    kernel reads the off-diagonal entries, whatever its documentation says: its inverse of a full matrix is
    not the diagonal's)."""
    if name.endswith(".inv") and structure == 11:
        raise unsupported(name, "assume_a='diagonal' (the kernel's values are not the inverse of the diagonal)",
                          "call it on np.diag(np.diag(a)), or divide by the diagonal")
    if structure in _GENERAL or structure in _READS and not (
            structure in (101, 211) and a is not None and np.iscomplexobj(a)):
        return
    raise unsupported(name, f"assume_a with structure code {structure}" + (
        " of a complex matrix" if structure in _READS else ""), "call it with assume_a=None or 'general'")


# scipy's structure codes (`_basic.solve`, `inv`): the entries of a the kernel reads, and the matrix it solves
# with. A derivative is taken in that matrix (`_structured`), whose cotangent goes to the entries read
# (`_structured_cotangent`: a mirrored triangle's entries take both of theirs): the entries not read get none
# (their gradient was dense before, and refused)
_READS = {11: "diagonal", 21: "upper triangle", 22: "lower triangle", 31: "three diagonals", 101: "triangle",
          201: "triangle", 211: "triangle"}


def _structured(a, structure, lower=False):
    """The matrix a kernel of the given structure code solves with, of the entries of a it reads (a
    triangle of a symmetric matrix mirrored: upper unless `lower`)."""
    if structure in _GENERAL:
        return a
    a = np.asarray(a)
    if structure == 11:
        return a * np.eye(a.shape[-1], dtype=bool)
    if structure == 21:
        return np.triu(a)
    if structure == 22:
        return np.tril(a)
    if structure == 31:
        return np.triu(np.tril(a, 1), -1)
    if lower:
        return np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)
    return np.triu(a) + np.swapaxes(np.triu(a, 1), -1, -2)


def _structured_cotangent(g, structure, lower=False):
    """The cotangent of a for a cotangent g of `_structured(a, structure, lower)` (its adjoint)."""
    if structure in _GENERAL or structure in (11, 21, 22, 31):
        return _structured(g, structure, lower)
    g = np.asarray(g)
    if lower:
        return np.tril(g) + np.swapaxes(np.triu(g, 1), -1, -2)
    return np.triu(g) + np.swapaxes(np.tril(g, -1), -1, -2)


def batched_solve_adjoint(dy, y, a, b, structure=-1, lower=False, transposed=False, *rest):
    _general("scipy.linalg.solve", structure, a)
    dx = dy[0] if dy is not None else None
    if dx is None:
        return (None,) * (4 + len(rest) + 3)
    m = _structured(np.asarray(a), structure, lower)
    op = np.swapaxes(m, -1, -2) if transposed else m
    db = np.linalg.solve(np.swapaxes(op, -1, -2).conj(), np.asarray(dx))
    da = -(db @ np.swapaxes(y[0], -1, -2).conj())
    if transposed:
        da = np.swapaxes(da, -1, -2)
    return (match_primal(_structured_cotangent(da, structure, lower), a), match_primal(db, b)) + (None,) * (5 + len(rest))


def batched_inv_adjoint(dy, y, a, structure=-1, *rest):
    _general("scipy.linalg.inv", structure, a)
    dx = dy[0] if dy is not None else None
    if dx is None:
        return (None,) * (2 + len(rest))
    lower = bool(rest[1]) if len(rest) > 1 else False  # (`_inv(a, structure, overwrite_a, lower)`)
    yh = np.swapaxes(y[0], -1, -2).conj()
    return (match_primal(_structured_cotangent(-(yh @ np.asarray(dx) @ yh), structure, lower), a),) + (None,) * (1 + len(rest))


# The kernels' overwrite flags (positions in their arguments): scipy.linalg.solve passes overwrite_a=True
# for an F-ordered matrix (a forward-mode dual's flags say so; CubicSpline asks it), and the kernel then
# leaves the LU factors in the array the rules read afterwards as the matrix: silently wrong tangents and
# cotangents. The rules run the kernels on copies: the flags are set False.
_OVERWRITES = {"_cholesky": (2,), "_solve": (5, 6), "_inv": (2,), "_svd": (4,), "_lstsq": (4, 5)}


def _copying(fn, positions):
    """fn with its overwrite flags (by position or `overwrite_*` keyword) set False."""
    def run(*args, **kw):
        args = tuple(False if i in positions else v for i, v in enumerate(args))
        kw = {k: (False if k.startswith("overwrite") else v) for k, v in kw.items()}
        return fn(*args, **kw)
    run.__name__ = run.__qualname__ = f"{getattr(fn, '__name__', 'kernel')}_copying"
    return run


for _prefix in ("s", "d"):
    for _name in ("gesdd", "gesvd"):
        _fn = getattr(lapack, _prefix + _name)
        registry.adjoint(_fn)(gesdd_adjoint)
        registry.set(_fn, impl=_copying(_fn, (4,)), positional=("a",))
        registry.frule(_fn)(_svd_frule(_fn))


# -- gelsd: least squares by the SVD (scipy.linalg.lstsq's default driver, savgol_coeffs, detrend) ---------
# `x, s, rank, info = ?gelsd(a, b, lwork, size_iwork, cond, overwrite_a, overwrite_b)`: b has max(m, n) rows
# (scipy pads it with zeros past m); x's first n rows are the minimum-norm solution pinv(A) b[:m], differentiated
# by numpy's lstsq rules at a constant rank. Its rows past n (m > n) hold the residual in LAPACK's own basis:
# only their squared norm (scipy's `resids`) has a derivative, so a cotangent on them of that form (2 x c) is
# taken as the residuals' and any other is refused; their tangent is NaN.

_GELSD = ("lwork", "size_iwork", "cond", "overwrite_a", "overwrite_b")
_RESIDUAL_BASIS = NoClosedForm("scipy.linalg.lapack.?gelsd", "a and b",
                               fix="use the solution rows x[:n] (or the residuals' squared norm), not the rows "
                                   "past n, which hold the residual in LAPACK's own basis")


def _residuals_cotangent(dxf, x, m, n):
    """The residuals' cotangent for a cotangent on the rows of x past n (`x[..., n:m, :]`, m > n): of the form
    2 x c (scipy's `resids = sum(x[n:] ** 2)`), c / 2; any other is refused (`Refused`); None for none."""
    if m <= n:
        return None
    tail, xr = dxf[..., n:m, :], x[..., n:m, :]
    if not np.any(tail):
        return None
    norms = np.sum(xr * xr, axis=-2)
    c = np.sum(tail * xr, axis=-2) / np.where(norms > 0, norms, 1.0)
    if not np.allclose(tail, xr * c[..., None, :], rtol=1e-9, atol=1e-12 * max(1.0, np.abs(tail).max())):
        return _RESIDUAL_BASIS.cotangent()
    return c / 2.0  # (d/dx |x|^2 = 2 x)


def _rcond(cond) -> float:
    """LAPACK's cutoff for a `cond`: machine precision for a negative one (or None)."""
    return float(cond) if cond is not None and cond >= 0 else np.finfo(float).eps


def _lstsq_cotangents(dxf, ds, x, a_, b_, rank, s, rcond):
    """(a's, b's) cotangents for those of x (LAPACK's layout: max(m, n) rows, the residual past n) and of
    the singular values s, by numpy's lstsq rule; (Refused, Refused) for one the residual rows cannot take."""
    m, n = a_.shape[-2:]
    dx = dres = None
    if dxf is not None:
        dxf = np.asarray(dxf, dtype=float).reshape(x.shape)
        dx = dxf[..., :n, :]
        dres = _residuals_cotangent(dxf, x, m, n)
        if type(dres) is Refused:
            return dres, dres
    da, db, _ = lstsq_adjoint((dx, dres, None, ds), (x[..., :n, :], None, rank, s), a_, b_, rcond)
    return da, db


def _lstsq_tangents(ta, tb, a_, b_, rcond, shape):
    """(x's tangent in LAPACK's layout, NaN past row n: the residual in LAPACK's basis; s's)."""
    _, (dx, _, _, ds) = lstsq_frule((ta, tb), a_, b_, rcond)
    full = np.full(shape, np.nan)
    full[..., :a_.shape[-1], :] = dx
    return full, ds


def _gelsd_call(args, kwargs):
    """(a, b, rcond) of a ?gelsd call."""
    a, b = args[:2]
    return a, b, _rcond(_bind(args[2:], kwargs, _GELSD, (None, None, -1.0, 0, 0))[2])


def gelsd_adjoint(dy, y, *args, **kwargs):
    a, b, rcond = _gelsd_call(args, kwargs)
    _real("scipy.linalg.lstsq", a, b)
    nones = (None,) * (len(args) - 2)
    dxf, ds = (tuple(dy) + (None,) * 2)[:2] if dy is not None else (None, None)
    if dxf is None and ds is None:
        return (None, None) + nones
    a_, b_ = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    m = a_.shape[0]
    x = np.asarray(y[0]).reshape(y[0].shape[0], -1)
    da, dbm = _lstsq_cotangents(dxf, ds, x, a_, b_.reshape(b_.shape[0], -1)[:m], int(y[2]), y[1], rcond)
    if type(da) is Refused:
        return (da, dbm) + nones
    db = None
    if dbm is not None:  # (b's rows past m are scipy's padding)
        db = np.zeros(b_.shape[:1] + (x.shape[1],))
        db[:m] = dbm
        db = match_primal(db.reshape(b_.shape), b)
    return (match_primal(da, a), db) + nones


def _gelsd_frule(fn):
    run = _copying(fn, (5, 6))

    def gelsd_frule(tangents, *args, **kwargs):
        y = run(*args, **kwargs)
        ta, tb = (tuple(tangents) + (None, None))[:2]
        if ta is None and tb is None:
            return y, None
        a, b, rcond = _gelsd_call(args, kwargs)
        _real("scipy.linalg.lstsq", a, b)
        a_, b_ = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        m = a_.shape[0]
        b2 = b_.reshape(b_.shape[0], -1)[:m]
        tb2 = None if tb is None else np.asarray(tb, dtype=float).reshape(b_.shape[0], -1)[:m]
        x = y[0]
        full, ds = _lstsq_tangents(ta, tb2, a_, b2, rcond, x.shape[:1] + (b2.shape[1],))
        return y, (full.reshape(x.shape), ds, None, None)
    gelsd_frule.__name__ = gelsd_frule.__qualname__ = f"{fn.__name__}_frule"
    return gelsd_frule


def _lstsq_frule(tangents, a, b, *args, **kwargs):
    """Forward rule of `scipy.linalg.lstsq` itself: its residues are the squares of the rows of ?gelsd's x
    past n, whose tangent `_gelsd_frule` cannot give (NaN: the residual in LAPACK's basis); here they come
    from numpy's rule (2 r . (db - dA x)), with x's and the singular values'."""
    bound = _LSTSQ.bind(a, b, *args, **kwargs)
    options = {k: (False if k.startswith("overwrite") else v) for k, v in bound.arguments.items()}
    y = scipy_linalg.lstsq(**options)
    cond = options.get("cond")
    ta, tb = (tuple(tangents) + (None, None))[:2]
    if ta is None and tb is None:
        return y, None
    _real("scipy.linalg.lstsq", a, b)
    x, resids, _rank, s = y
    a_, b_ = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    m = a_.shape[0]
    b2 = b_.reshape(m, -1)
    tb2 = None if tb is None else np.asarray(tb, dtype=float).reshape(m, -1)
    _, (dx, dres, _, ds) = lstsq_frule((ta, tb2), a_, b2, _rcond(cond))
    dx = np.broadcast_to(dx, (a_.shape[1], b2.shape[1])).reshape(np.shape(x))
    dres = np.zeros_like(resids) if np.size(resids) == 0 else np.asarray(dres).reshape(np.shape(resids))
    return y, (dx, dres, None, None if s is None else ds)


_LSTSQ = inspect.signature(scipy_linalg.lstsq)
registry.frule(scipy_linalg.lstsq)(_lstsq_frule)


# LAPACK's workspace queries (`?gelsd_lwork`, `?syevr_lwork`, ...): sizes, no derivative (their float
# arguments, a cutoff, are options)
registry.nondifferentiable(*(getattr(lapack, _n) for _n in dir(lapack) if _n.endswith("_lwork")
                             and callable(getattr(lapack, _n))))


for _prefix in ("s", "d"):
    _fn = getattr(lapack, _prefix + "gelsd")
    registry.adjoint(_fn)(gelsd_adjoint)
    registry.set(_fn, impl=_copying(_fn, (5, 6)))
    registry.frule(_fn)(_gelsd_frule(_fn))


# -- gelsy: least squares by a complete orthogonal factorization (scipy.linalg.lstsq(lapack_driver="gelsy"),
# linearmodels' panel estimators) ---------------------------------------------------------------------------------
# `v, x, j, rank, info = ?gelsy(a, b, jptv, cond, lwork, overwrite_a, overwrite_b)`: x's first n rows are the
# minimum-norm least-squares solution, pinv(A) b at gelsy's rank, differentiated by numpy's lstsq rules at that
# rank where the SVD's cutoff finds the same (as forward mode's rule of scipy.linalg.lstsq does); refused where
# they differ. v (the factorization) and the rows of x past n (LAPACK's workspace) have no
# derivative here: a cotangent on them is refused, their tangent is NaN.

_GELSY = ("jptv", "cond", "lwork", "overwrite_a", "overwrite_b")
_GELSY_PARTS = NoClosedForm("scipy.linalg.lapack.?gelsy", "a and b",
                            fix="use the solution rows x[:n] (scipy.linalg.lstsq's x), not the factorization v nor "
                                "the rows past n")


def _gelsy_call(args, kwargs, y):
    """(a as floats, b's first m rows as a matrix, cond) of a ?gelsy call; refused where its rank is not the
    SVD's at the same cutoff (the solution then is not pinv(A) b)."""
    a, b = args[:2]
    _real("scipy.linalg.lstsq", a, b)
    cond = _rcond(_bind(args[2:], kwargs, _GELSY, (None, -1.0, None, 0, 0))[1])
    a_ = np.asarray(a, dtype=float)
    m, n = a_.shape
    s = np.linalg.svd(a_, compute_uv=False)
    if int(y[3]) != int(np.sum(s > cond * s[0])) if s.size else 0:
        raise NoDerivative(
            "scipy.linalg.lstsq(lapack_driver='gelsy') of a matrix whose rank its rank-revealing QR finds other than "
            "the SVD's cutoff does: the solution is not the pseudo-inverse's, whose derivative the rules know",
            fix="use lapack_driver='gelsd' (the default), differentiated at a constant rank")
    return a_, np.asarray(b, dtype=float).reshape(np.shape(b)[0], -1)[:m], cond


def gelsy_adjoint(dy, y, *args, **kwargs):
    nones = (None,) * (len(args) - 2)
    dv, dxf = (tuple(dy) + (None,) * 2)[:2] if dy is not None else (None, None)
    if dxf is None and (dv is None or not np.any(dv)):
        return (None, None) + nones
    a, b = args[:2]
    a_, b_, cond = _gelsy_call(args, kwargs, y)
    m, n = a_.shape
    x = np.asarray(y[1]).reshape(y[1].shape[0], -1)
    dxf = np.zeros_like(x) if dxf is None else np.asarray(dxf, dtype=float).reshape(x.shape)
    if (dv is not None and np.any(dv)) or np.any(dxf[n:]):
        refused = _GELSY_PARTS.cotangent()
        return (refused, refused) + nones
    da, dbm, _ = lstsq_adjoint((dxf[:n], None, None, None), (x[:n], None, int(y[3]), None), a_, b_, cond)
    db = None
    if dbm is not None:  # (b's rows past m are scipy's padding)
        db = np.zeros(np.shape(b)[:1] + (x.shape[1],))
        db[:m] = np.asarray(dbm).reshape(m, -1)
        db = match_primal(db.reshape(np.shape(b)), b)
    return (match_primal(da, a), db) + nones


def _gelsy_frule(fn):
    run = _copying(fn, (5, 6))

    def gelsy_frule(tangents, *args, **kwargs):
        y = run(*args, **kwargs)
        ta, tb = (tuple(tangents) + (None, None))[:2]
        if ta is None and tb is None:
            return y, None
        a_, b_, cond = _gelsy_call(args, kwargs, y)
        m, n = a_.shape
        tb2 = None if tb is None else np.asarray(tb, dtype=float).reshape(np.shape(args[1])[0], -1)[:m]
        x = y[1]
        full, _ = _lstsq_tangents(ta, tb2, a_, b_, cond, x.shape[:1] + (b_.shape[1],))
        return y, (np.full(np.shape(y[0]), np.nan), full.reshape(x.shape), None, None, None)
    gelsy_frule.__name__ = gelsy_frule.__qualname__ = f"{fn.__name__}_frule"
    return gelsy_frule


for _prefix in ("s", "d"):
    _fn = getattr(lapack, _prefix + "gelsy")
    registry.adjoint(_fn)(gelsy_adjoint)
    registry.set(_fn, impl=_copying(_fn, (5, 6)))
    registry.frule(_fn)(_gelsy_frule(_fn))


def _batched_frules(fns):
    fns = types.SimpleNamespace(**{n: _copying(getattr(fns, n), p) for n, p in _OVERWRITES.items()
                                   if hasattr(fns, n)})

    def cholesky_frule(tangents, a, lower=False, *rest):
        y = fns._cholesky(a, lower, *rest)
        t = tangents[0] if tangents else None
        if t is None:
            return y, None
        clean = rest[1] if len(rest) > 1 else True

        def one(a_, t_):
            return _potrf_frule(lapack.dpotrf)((t_,), a_, lower, clean)[1][0]
        return y, (_per_matrix(one, np.asarray(a), np.asarray(t)).astype(y[0].dtype, copy=False), None)

    def solve_frule(tangents, a, b, structure=-1, lower=False, transposed=False, *rest):
        _general("scipy.linalg.solve", structure, a)
        y = fns._solve(a, b, structure, lower, transposed, *rest)
        ta, tb = (tuple(tangents) + (None, None))[:2]
        if ta is None and tb is None:
            return y, None
        m = _structured(np.asarray(a), structure, lower)
        op = np.swapaxes(m, -1, -2) if transposed else m
        rhs = np.zeros_like(y[0]) if tb is None else np.asarray(tb)
        if ta is not None:
            tm = _structured(np.asarray(ta), structure, lower)
            rhs = rhs - (np.swapaxes(tm, -1, -2) if transposed else tm) @ y[0]
        return y, (np.linalg.solve(op, rhs), None)

    def batched_svd_frule(tangents, a, lapack_driver="gesdd", compute_uv=True, full_matrices=True, *rest):
        y = fns._svd(a, lapack_driver, compute_uv, full_matrices, *rest)
        t = tangents[0] if tangents else None
        if t is None:
            return y, None
        _real("scipy.linalg.svd", a)
        if not compute_uv:
            return y, (_svd_tangents(t, a, False, False), None)
        return y, _svd_tangents(t, a, bool(full_matrices), True) + (None,)

    def batched_lstsq_frule(tangents, a, b, cond=None, driver="gelsd", *rest):
        y = fns._lstsq(a, b, cond, driver, *rest)
        ta, tb = (tuple(tangents) + (None, None))[:2]
        if ta is None and tb is None:
            return y, None
        _real("scipy.linalg.lstsq", a, b)
        full, ds = _lstsq_tangents(ta, tb, np.asarray(a, dtype=float), np.asarray(b, dtype=float), _rcond(cond),
                                   np.shape(y[0]))
        return y, (full, None, ds, None)

    def inv_frule(tangents, a, structure=-1, *rest):
        _general("scipy.linalg.inv", structure, a)
        y = fns._inv(a, structure, *rest)
        t = tangents[0] if tangents else None
        lower = bool(rest[1]) if len(rest) > 1 else False
        return y, (None if t is None else (-(y[0] @ _structured(np.asarray(t), structure, lower) @ y[0]), None))
    return {"_cholesky": cholesky_frule, "_solve": solve_frule, "_inv": inv_frule, "_svd": batched_svd_frule,
            "_lstsq": batched_lstsq_frule}


def batched_svd_adjoint(dy, y, a, lapack_driver="gesdd", compute_uv=True, full_matrices=True, *rest):
    """Pullback of `_batched_linalg._svd(a, driver, compute_uv, full_matrices, overwrite_a)` (scipy 1.18's
    svd): `(u, s, vh, errors)` or `(s, errors)`, numpy's svd rules on each matrix of the batch."""
    _real("scipy.linalg.svd", a)
    nones = (None,) * (4 + len(rest))
    if dy is None:
        return (None,) + nones
    if compute_uv:
        du, ds, dvh = (tuple(dy) + (None,) * 3)[:3]
        return (_svd_cotangent(a, bool(full_matrices), ds, du, dvh, tuple(y[:3])),) + nones
    return (_svd_cotangent(a, False, dy[0]),) + nones


def batched_lstsq_adjoint(dy, y, a, b, cond=None, driver="gelsd", *rest):
    """Pullback of `_batched_linalg._lstsq(a, b, cond, driver, overwrite_a, overwrite_b)` (scipy 1.18's lstsq):
    `(x, rank, s, errors)`, x with max(m, n) rows as ?gelsd's (`_lstsq_cotangents`)."""
    _real("scipy.linalg.lstsq", a, b)
    nones = (None,) * (2 + len(rest))
    dxf, _, ds = (tuple(dy) + (None,) * 3)[:3] if dy is not None else (None,) * 3
    if dxf is None and ds is None:
        return (None, None) + nones
    da, db = _lstsq_cotangents(dxf, ds, np.asarray(y[0]), np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                               y[1], y[2], _rcond(cond))
    if type(da) is Refused:
        return (da, db) + nones
    return (match_primal(da, a), match_primal(db, b)) + nones


try:
    from scipy.linalg import _batched_linalg
except ImportError:  # scipy < 1.18 calls the LAPACK wrappers above directly
    _batched_linalg = None
if _batched_linalg is not None:
    _frules = _batched_frules(_batched_linalg)
    for _name, _adjoint in (("_cholesky", batched_cholesky_adjoint), ("_solve", batched_solve_adjoint),
                            ("_inv", batched_inv_adjoint), ("_svd", batched_svd_adjoint),
                            ("_lstsq", batched_lstsq_adjoint)):
        _fn = getattr(_batched_linalg, _name, None)
        if _fn is None:  # scipy 1.17 batches some kernels only
            continue
        registry.adjoint(_fn)(_adjoint)
        registry.set(_fn, impl=_copying(_fn, _OVERWRITES[_name]))
        registry.frule(_fn)(_frules[_name])


# -- expm: the matrix exponential -----------------------------------------------------------------------
# Its derivative at A in direction E is the Frechet derivative L(A, E) (scipy.linalg.expm_frechet, the
# block-triangular exponential of Higham's algorithm); the cotangent of a loss at A is L(A^H, G).

def _expm_frechet(a, e):
    """L(a, e) for each matrix of a batch (leading axes); a of size one below 2-D as expm takes it."""
    import scipy.linalg
    a, e = np.asarray(a), np.asarray(e)
    if a.size == 1 and a.ndim < 2:
        return (np.exp(a.reshape(())) * e.reshape(())).reshape(1, 1)
    return _per_matrix(lambda a_, e_: scipy.linalg.expm_frechet(a_, e_, compute_expm=False), a,
                       np.broadcast_to(e, a.shape))


def expm_adjoint(dy, y, a):
    if dy is None:
        return (None,)
    a_ = np.asarray(a)
    if a_.size == 1 and a_.ndim < 2:
        return (match_primal((np.asarray(dy).reshape(()) * np.conj(np.exp(a_.reshape(())))).reshape(a_.shape), a),)
    return (match_primal(_expm_frechet(np.swapaxes(a_, -1, -2).conj(), dy), a),)


def expm_frule(tangents, a):
    import scipy.linalg
    y = scipy.linalg.expm(a)
    t = tangents[0] if tangents else None
    return y, (None if t is None else _expm_frechet(a, t).astype(y.dtype, copy=False))


def _register_expm():
    import scipy.linalg
    registry.adjoint(scipy.linalg.expm)(expm_adjoint)
    registry.frule(scipy.linalg.expm)(expm_frule)


_register_expm()


# -- sqrtm, logm, fractional_matrix_power: matrix functions by the block-triangular identity ----------------
# For a matrix function f (a power series with real coefficients), f([[A, E], [0, A]]) = [[f(A), L], [0,
# f(A)]] with L = L_f(A, E) its Frechet derivative (Higham, Functions of Matrices, thm 3.6): the tangent
# is that block, and the cotangent of a loss at A is L_f(A^H, G). Refused: `disp=False` (its error estimate
# has no derivative).

def _block_frechet(f, a, e):
    """L_f(a, e) for each matrix of a batch (leading axes), from f of the 2n x 2n block matrix."""
    def one(a_, e_):
        n = a_.shape[-1]
        big = np.zeros((2 * n, 2 * n), dtype=np.result_type(a_, e_, float))
        big[:n, :n] = big[n:, n:] = a_
        big[:n, n:] = e_
        return np.asarray(f(big))[:n, n:]
    a = np.asarray(a)
    return _per_matrix(one, a, np.broadcast_to(np.asarray(e), a.shape))


def _matrix_function_rules(fn, label):
    def check(args, kwargs):
        if args or kwargs:
            (disp,) = _bind(args, kwargs, ("disp",), (True,))
            if disp is False:
                raise NoClosedForm(f"scipy.linalg.{label}", "disp=False (its error estimate)",
                                   fix=f"call {label}(A) with disp left out").error()

    def plain(a, *args, **kwargs):
        check(args, kwargs)
        return fn(a, *args, **kwargs)

    def f_of(args, kwargs):
        return lambda m: plain(m, *args, **kwargs)

    def adjoint(dy, y, a, *args, **kwargs):
        if dy is None:
            return (None,) * (1 + len(args))
        check(args, kwargs)
        at = np.swapaxes(np.asarray(a), -1, -2).conj()
        return (match_primal(_block_frechet(f_of(args, kwargs), at, np.asarray(dy)), a),) + (None,) * len(args)

    def frule(tangents, a, *args, **kwargs):
        y = plain(a, *args, **kwargs)
        t = tangents[0] if tangents else None
        if t is None:
            return y, None
        tangent = _block_frechet(f_of(args, kwargs), a, t)
        return y, tangent.astype(np.result_type(y, tangent), copy=False)
    adjoint.__name__, frule.__name__ = f"{label}_adjoint", f"{label}_frule"
    return adjoint, frule


def _register_matrix_functions():
    import scipy.linalg
    from ..sparsity_specs import DENSE
    for name in ("sqrtm", "logm"):
        fn = getattr(scipy.linalg, name, None)
        if fn is None:
            continue
        adjoint, frule = _matrix_function_rules(fn, name)
        registry.adjoint(fn)(adjoint)
        registry.frule(fn)(frule)
        registry.sparsity(DENSE, fn)  # (every entry of f(A) depends on every entry of A, in general)


_register_matrix_functions()


# -- scipy.linalg.det: its kernel (scipy 1.17's Cython `find_det_from_lu(a)`, an LU of a in a's memory then the
# diagonal's product; scipy 1.18's batched `_linalg_det(a, overwrite_a)`) is the determinant: np.linalg.det's
# rules, on a copy (the kernels may scratch their argument) ---------------------------------------------------

import scipy.linalg._basic as _scipy_basic  # noqa: E402

from ..sparsity_specs import DENSE  # noqa: E402


def _det_kernel_rules(kernel, run):
    """Register det's rules under `kernel`, whose value is `run(a, *rest)` (a left as it was)."""
    def adjoint(dy, y, a, *rest):
        return det_adjoint(dy, y, a) + (None,) * len(rest)

    def frule(tangents, a, *rest):
        return run(a, *rest), det_frule(tuple(tangents[:1]), a)[1]
    registry.adjoint(kernel)(adjoint)
    registry.frule(kernel)(frule)
    registry.set(kernel, impl=run)
    registry.sparsity(DENSE, kernel)  # (the determinant depends on every entry)


if (_find_det_from_lu := getattr(_scipy_basic, "find_det_from_lu", None)) is not None:
    _det_kernel_rules(_find_det_from_lu, lambda a: _find_det_from_lu(np.array(a, order="C", copy=True)))
if (_linalg_det := getattr(_scipy_basic, "_linalg_det", None)) is not None:
    _det_kernel_rules(_linalg_det, lambda a, overwrite_a=False: _linalg_det(np.array(a, order="C", copy=True), False))


# -- getrf / getrs: the LU factorisation (`lu_factor`) and the solve from it (`lu_solve`) --------------------
# `lu, piv, info = ?getrf(a)`: a's rows permuted (`a[perm] = L U`, perm from the row swaps piv) factor into L
# (unit lower, below lu's diagonal) and U (upper, on and above it). Square real matrices; the pivots and info
# carry no derivative (the pivoting is locally constant).

def _lu_perm(piv):
    """perm with a[perm] = L U, from LAPACK's row swaps (row i swapped with row piv[i], in turn)."""
    perm = np.arange(len(piv))
    for i, p in enumerate(np.asarray(piv)):
        perm[i], perm[p] = perm[p], perm[i]
    return perm


def _lu_parts(lu, name):
    lu = np.asarray(lu)
    if lu.ndim != 2 or lu.shape[0] != lu.shape[1]:
        raise unsupported(name, f"a factorisation of a {lu.shape} matrix (square ones only)",
                          "differentiate a square system (or use np.linalg.lstsq for a rectangular one)")
    return np.tril(lu, -1) + np.eye(len(lu), dtype=lu.dtype), np.triu(lu)


def _tri_solve(t, b, lower, trans=False):
    return scipy_linalg.solve_triangular(t, b, lower=lower, trans=int(trans), check_finite=False)


def _last_pivot_zero(up, name) -> bool:
    """U's last pivot is exactly 0 (a singular matrix of rank n - 1 whose leading block is not: a Markov
    generator's, choix's `statdist`), where L and U still move smoothly with A but U^-1 does not exist; a zero
    pivot before it is refused (the factors jump there)."""
    pivots = np.diagonal(up)
    if len(pivots) and np.all(pivots[:-1] != 0):
        return pivots[-1] == 0
    raise unsupported(name, "a matrix with a zero pivot before the last (its leading block singular: the factors "
                      "jump there)", "solve the system another way (np.linalg.lstsq), or perturb the matrix")


def _lu_tangent_last_zero(low, up, tp):
    """The packed tangent of lu from A[perm]'s tangent tp, U's last pivot 0: X = L^-1 tp; dL = L tril(X Ũ^-1, -1)
    with Ũ U's leading block (only its columns are needed below the diagonal); dU = triu(X - L^-1 dL U)."""
    m = len(up) - 1
    x = _tri_solve(low, tp, True)
    z = np.zeros_like(x)
    z[:, :m] = _tri_solve(up[:m, :m], x[:, :m].T, False, trans=True).T
    dlp = np.tril(z, -1)
    return low @ dlp + np.triu(x - dlp @ up)


def _lu_adjoint_last_zero(low, up, dlu):
    """The transpose of `_lu_tangent_last_zero`: the cotangent of A[perm] from lu's."""
    m = len(up) - 1
    g_up = np.triu(dlu)
    zbar = np.tril(low.T @ np.tril(dlu, -1) - g_up @ up.T, -1)
    xbar = g_up.copy()
    xbar[:, :m] += _tri_solve(up[:m, :m], zbar[:, :m].T, False).T  # (Zbar Ũ^-T)
    return _tri_solve(low, xbar, True, trans=True)


def getrf_adjoint(dy, y, a, *rest, **kwargs):
    """Pullback of `lu, piv, info = ?getrf(a)`: with Lbar, Ubar the cotangents of lu's two parts,
    a[perm]bar = L^-T (tril(L^T Lbar, -1) + triu(Ubar U^T)) U^-T (U's last pivot 0: `_lu_adjoint_last_zero`)."""
    _real("scipy.linalg.lu_factor", a)
    dlu = dy[0] if dy is not None else None
    nones = (None,) * len(rest)
    if dlu is None:
        return (None,) + nones
    lu, piv = y[0], y[1]
    low, up = _lu_parts(lu, "scipy.linalg.lu_factor")
    dlu = np.asarray(dlu)
    if _last_pivot_zero(up, "scipy.linalg.lu_factor"):
        dap = _lu_adjoint_last_zero(low, up, dlu)
    else:
        middle = np.tril(low.T @ np.tril(dlu, -1), -1) + np.triu(np.triu(dlu) @ up.T)
        dap = _tri_solve(up, _tri_solve(low, middle, True, trans=True).T, False).T  # (X U^-T = (U^-1 X^T)^T)
    da = np.empty_like(dap)
    da[_lu_perm(piv)] = dap
    return (match_primal(da, a),) + nones


def _getrf_frule(fn):
    def getrf_frule(tangents, a, *rest, **kwargs):
        y = fn(a, *rest, **kwargs)
        t = tangents[0] if tangents else None
        if t is None:
            return y, None
        _real("scipy.linalg.lu_factor", a)
        low, up = _lu_parts(y[0], "scipy.linalg.lu_factor")
        tp = np.asarray(t, dtype=y[0].dtype)[_lu_perm(y[1])]
        if _last_pivot_zero(up, "scipy.linalg.lu_factor"):
            return y, (_lu_tangent_last_zero(low, up, tp), None, None)
        f = _tri_solve(up, _tri_solve(low, tp, True).T, False, trans=True).T  # L^-1 dA[perm] U^-1
        dlu = low @ np.tril(f, -1) + np.triu(f) @ up  # (dL strictly lower, dU upper: one packed array)
        return y, (dlu, None, None)
    return getrf_frule


def _lu_cotangent(da, low, up, piv):
    """The cotangent of the packed lu from A's: through A[perm] = L U, tril(Abar' U^T, -1) + triu(L^T Abar')."""
    dap = da[_lu_perm(piv)]
    return np.tril(dap @ up.T, -1) + np.triu(low.T @ dap)


def getrs_adjoint(dy, y, lu, piv, b, *rest, **kwargs):
    """Pullback of `x, info = ?getrs(lu, piv, b, trans)`: op(A) x = b, bbar = op(A)^-T xbar,
    op(A)bar = -bbar x^T, then through A[perm] = L U to lu's two parts."""
    (trans,) = _bind(rest, kwargs, ("trans",), (0,))
    _real("scipy.linalg.lu_solve", lu, b)
    dx = dy[0] if dy is not None else None
    nones = (None,) * len(rest)
    if dx is None:
        return (None, None, None) + nones
    low, up = _lu_parts(lu, "scipy.linalg.lu_solve")
    db = scipy_linalg.lu_solve((lu, piv), np.asarray(dx), trans=0 if trans else 1, check_finite=False)  # (the
    dop = -_outer(db, y[0])  # factors at hand: op(A)^-T xbar without a new factorisation)
    return (match_primal(_lu_cotangent(dop.T if trans else dop, low, up, piv), lu), None,
            match_primal(db, b)) + nones


def _getrs_frule(fn):
    def getrs_frule(tangents, lu, piv, b, *rest, **kwargs):
        y = fn(lu, piv, b, *rest, **kwargs)
        tlu, _, tb = (tuple(tangents) + (None, None, None))[:3]
        if tlu is None and tb is None:
            return y, None
        (trans,) = _bind(rest, kwargs, ("trans",), (0,))
        _real("scipy.linalg.lu_solve", lu, b)
        rhs = np.zeros_like(y[0]) if tb is None else np.asarray(tb, dtype=y[0].dtype)
        if tlu is not None:
            low, up = _lu_parts(lu, "scipy.linalg.lu_solve")
            tlu = np.asarray(tlu)
            da = np.empty_like(low)
            da[_lu_perm(piv)] = np.tril(tlu, -1) @ up + low @ np.triu(tlu)
            rhs = rhs - (da.T if trans else da) @ y[0]
        return y, (fn(lu, piv, rhs, trans=trans)[0], None)  # (op(A)^-1 rhs by the same factors)
    return getrs_frule


for _prefix in ("s", "d"):
    registry.adjoint(getattr(lapack, _prefix + "getrf"))(getrf_adjoint)
    registry.frule(getattr(lapack, _prefix + "getrf"))(_getrf_frule(getattr(lapack, _prefix + "getrf")))
    registry.adjoint(getattr(lapack, _prefix + "getrs"))(getrs_adjoint)
    registry.frule(getattr(lapack, _prefix + "getrs"))(_getrs_frule(getattr(lapack, _prefix + "getrs")))


# -- scipy.linalg.qr: numpy's QR (`Rule.stand_in`): the same LAPACK factorisation (geqrf, then orgqr), whose
# rules numpy's `qr` has in every engine; scipy's own call reaches geqrf through f2py, which has none.
# Pivoting (geqp3: a column order chosen from the values) and mode='raw' (Householder reflectors) are refused.

_QR_MODES = {"full": "complete", "economic": "reduced"}


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """scipy.linalg.qr as numpy's: (q, r) in mode 'full' and 'economic', (r,) in mode 'r'."""
    if pivoting or mode not in ("full", "economic", "r"):
        raise unsupported("scipy.linalg.qr", "pivoting=True" if pivoting else f"mode={mode!r}",
                          "use pivoting=False with mode 'full', 'economic' or 'r'")
    if np.ndim(a) != 2:
        raise unsupported("scipy.linalg.qr", f"a {np.ndim(a)}-dimensional array", "pass a matrix")
    if mode == "r":  # (scipy's R is m x n, its rows past n zero for a tall matrix)
        r = np.linalg.qr(a, mode="r")
        m, n = np.shape(a)
        return (np.concatenate([r, np.zeros((m - n, n), dtype=r.dtype)]) if m > n else r,)
    return np.linalg.qr(a, mode=_QR_MODES[mode])


registry.set(scipy_linalg.qr, stand_in=qr)


# -- scipy.linalg.eigvals, eig and norm: numpy's (`Rule.stand_in`), the same LAPACK routines (geev; nrm2 or
# numpy's sum of squares), whose rules numpy's functions have in every engine; scipy reaches dgeev and dnrm2
# through f2py, which have none (harold's transfer functions, peakutils' baseline, sweep U). scipy's
# eigenvalues are complex whatever they are; a generalised problem (b), left eigenvectors and homogeneous
# coordinates are refused.

def _finite(a, check_finite):
    return np.asarray_chkfinite(a) if check_finite else np.asarray(a)


def eigvals(a, b=None, overwrite_a=False, check_finite=True, homogeneous_eigvals=False):
    """scipy.linalg.eigvals as numpy's, complex."""
    if b is not None or homogeneous_eigvals:
        raise unsupported("scipy.linalg.eigvals", "a generalised problem (b)" if b is not None else
                          "homogeneous_eigvals=True", "solve the standard problem (np.linalg.eigvals)")
    return np.linalg.eigvals(_finite(a, check_finite)).astype(np.result_type(np.asarray(a).dtype, np.complex64))


def eig(a, b=None, left=False, right=True, overwrite_a=False, overwrite_b=False, check_finite=True,
        homogeneous_eigvals=False):
    """scipy.linalg.eig as numpy's: (w, vr), or w alone where right=False; w complex."""
    if b is not None or left or homogeneous_eigvals:
        raise unsupported("scipy.linalg.eig", "a generalised problem (b)" if b is not None else "left eigenvectors"
                          if left else "homogeneous_eigvals=True", "use np.linalg.eig (right eigenvectors)")
    a = _finite(a, check_finite)
    kind = np.result_type(a.dtype, np.complex64)
    if not right:
        return np.linalg.eigvals(a).astype(kind)
    w, v = np.linalg.eig(a)
    return w.astype(kind), v


def norm(a, ord=None, axis=None, keepdims=False, check_finite=True):
    """scipy.linalg.norm as numpy's np.linalg.norm."""
    return np.linalg.norm(_finite(a, check_finite), ord=ord, axis=axis, keepdims=keepdims)


registry.set(scipy_linalg.eigvals, stand_in=eigvals)
registry.set(scipy_linalg.eig, stand_in=eig)
registry.set(scipy_linalg.norm, stand_in=norm)


# -- scipy.linalg.matrix_balance: B = T⁻¹ A T (`Rule.stand_in`), T chosen by LAPACK's ?gebal on A's values
# (`balancing`, without derivative) and B formed by indexing and power-of-two scaling (`balanced`, a primitive):
# bit for bit scipy's. T is a permutation times a diagonal of powers of two, piecewise constant in A, so
# dB = T⁻¹ dA T, and T, the scaling and the permutation carry none.
#
# T's choice is discontinuous where a zero of A that gebal relied on (isolating an eigenvalue by a permutation,
# or a row or column of zero norm it leaves unscaled) becomes nonzero: T changes at once (an upper triangular
# 3x3 matrix: B[0, 2] jumps from 300 to 300/256; B[2, 0] moves at 256 times the fixed-T rate, 1). Along such a
# direction the fixed T's derivative is not B's; it is the derivative of what is invariant under the similarity
# (T f(B) T⁻¹, as harold's discretize computes; B's eigenvalues). Forward mode refuses a direction filling such
# a zero; reverse mode, blind to directions, gives the fixed-T gradient where the balancing relied on no zero or
# the result is invariant (to first order: B̄ᵀB − BB̄ᵀ + T̄ᵀT = 0, its diagonal alone for scaling without
# permuting), and refuses otherwise.

def balancing(a, permute, scale):
    """(scaling, perm, zeros) of scipy.linalg.matrix_balance(a, separate=True), and the entries of B = T⁻¹AT
    whose being zero T's choice relied on (`zeros`, boolean): a primitive without derivative, given plain
    arrays only."""
    while type(a).__name__ == "Dual":  # (reverse mode's rule under an outer forward pass: its values)
        a = a.primal
    b, (scaling, perm) = scipy_linalg.matrix_balance(a, permute=permute, scale=scale, separate=True)
    _, lo, hi, _, _ = scipy_linalg.get_lapack_funcs("gebal", (a,))(a, scale=scale, permute=permute)
    n = len(a)
    rows, cols = np.indices((n, n))
    zeros = ((rows > hi) & (cols < rows)) | ((cols < lo) & (rows > cols))  # (isolated by the permutation)
    if scale:  # (a row or column of the active block of zero norm off the diagonal: left unscaled)
        active = (rows >= lo) & (rows <= hi) & (cols >= lo) & (cols <= hi) & (rows != cols)
        empty_cols = ~np.any(active & (b != 0), axis=0)
        empty_rows = ~np.any(active & (b != 0), axis=1)
        zeros |= active & (empty_cols[None, :] | empty_rows[:, None])
    return scaling, perm, zeros


registry.nondifferentiable(balancing)


def _ratio(scaling, dtype):
    return (scaling[None, :] / scaling[:, None]).astype(dtype)  # (powers of two: exact)


def _transform(scaling, perm):
    """T = P diag(scaling), scipy's: row i of diag(scaling) taken at the inverse permutation."""
    iperm = np.empty_like(perm)
    iperm[perm] = np.arange(len(perm))
    return np.diag(scaling)[iperm, :]


def balanced(a, scaling, perm, zeros, permute, separate):
    """(B, T), or (B, (scaling, perm)) with `separate`: B[k, l] = a[perm[k], perm[l]] scaling[l] / scaling[k]."""
    b = a[perm][:, perm] * _ratio(scaling, a.real.dtype)
    return (b, (scaling, perm)) if separate else (b, _transform(scaling, perm))


def _jumps(why) -> NoDerivative:
    return NoDerivative(f"scipy.linalg.matrix_balance: {why}, so B = T⁻¹AT jumps there (T changes at once) and has "
                        "no derivative along it",
                        fix="differentiate what is invariant under the similarity (T f(B) T⁻¹, eigenvalues), use "
                            "forward mode along directions keeping those zeros, or balance with permute=False, "
                            "scale=False (T = I)")


def _balanced_frule(tangents, a, scaling, perm, zeros, permute, separate):
    y = balanced(a, scaling, perm, zeros, permute, separate)
    t = tangents[0] if tangents else None
    if t is None:
        return y, None
    db = np.asarray(t)[perm][:, perm] * _ratio(scaling, np.asarray(t).real.dtype)
    if np.any(db[zeros] != 0):
        raise _jumps("the direction makes nonzero an entry of A the balancing found zero and chose T by")
    return y, (db, None)


def _balanced_adjoint(dy, y, a, scaling, perm, zeros, permute, separate):
    """Ā = T⁻ᵀ B̄ Tᵀ; refused where the balancing relied on a zero of A and the result differentiated is not
    invariant to first order under B -> S⁻¹BS, T -> TS: M = B̄ᵀB − BB̄ᵀ + T̄ᵀT nonzero (any S where gebal
    permutes, its diagonal for S diagonal; with `separate`, T̄ᵀT's diagonal is scaling̅ * scaling)."""
    db, dt = (tuple(dy) + (None, None))[:2] if dy is not None else (None, None)
    if np.any(zeros) and (any_nonzero(db) or any_nonzero(dt)):
        b, t = y
        m = np.zeros((len(b), len(b))) if db is None else np.asarray(db).T @ b - b @ np.asarray(db).T
        size = np.abs(m).max(initial=0.0) if db is None else np.abs(db).max() * np.abs(b).max()
        if separate:  # (T = P diag(scaling): ds = scaling δ for B -> S⁻¹BS, S = diag(1 + δ))
            ds = dt[0] if dt is not None else None
            if ds is not None:
                m = m + np.diag(np.asarray(ds, dtype=float) * scaling)
                size = max(size, np.abs(np.asarray(ds, dtype=float) * scaling).max(initial=0.0))
        elif dt is not None:
            m = m + np.asarray(dt).T @ t
            size = max(size, np.abs(dt).max() * np.abs(t).max())
        off = m if permute else np.diag(np.diag(m))
        if not np.abs(off).max(initial=0.0) <= 1e-8 * size:
            raise _jumps("the balancing relied on a zero of A (an isolated eigenvalue or a row of zero norm), "
                         "whose every move changes T, and the result differentiated depends on T's choice")
    da = None
    if db is not None:
        da = np.zeros(np.shape(a), dtype=np.result_type(np.asarray(db).dtype, a.dtype))
        da[np.ix_(perm, perm)] = np.asarray(db) * _ratio(scaling, da.real.dtype)
    return (da,) + (None,) * 5


def any_nonzero(v) -> bool:
    """v (a cotangent, or a tuple of them) is given and not all zero."""
    if v is None:
        return False
    if isinstance(v, (tuple, list)):
        return any(any_nonzero(x) for x in v)
    try:
        return bool(np.any(np.asarray(v) != 0))
    except (TypeError, ValueError):
        return True


registry.set(balanced, adjoint=_balanced_adjoint, frule=_balanced_frule)


def matrix_balance(A, permute=True, scale=True, separate=False, overwrite_a=False):
    """scipy.linalg.matrix_balance: (B, T), or (B, (scaling, perm)) with separate=True."""
    a = np.atleast_2d(_finite(A, True))
    if a.ndim != 2 or a.shape[0] != a.shape[1] or a.size == 0:
        return _balance_plain(a, permute, scale, separate)
    if a.dtype.kind not in "fc":
        a = a.astype(float)
    scaling, perm, zeros = balancing(a, permute, scale)
    return balanced(a, scaling, perm, zeros, bool(permute), bool(separate))


def _balance_plain(a, permute, scale, separate):
    """scipy's own answer (and errors) where there is nothing to differentiate: an empty or non-square a."""
    return scipy_linalg.matrix_balance(a, permute=permute, scale=scale, separate=separate)


registry.nondifferentiable(_balance_plain)
registry.set(scipy_linalg.matrix_balance, stand_in=matrix_balance)
