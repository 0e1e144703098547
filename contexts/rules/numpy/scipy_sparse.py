"""scipy.sparse's matrix-vector kernels (`_sparsetools.csr_matvec` and kin, under `A @ x` and `A.dot(x)` of a
sparse matrix or array) written as the numpy code they compute (`Rule.stand_in`), for every engine.

Each kernel adds `A @ x` into an output array scipy made (`y += A x`, in C); written as a gather of x by the
stored column indices, a product with the stored values and `np.add.at` into y by the row indices, every engine
differentiates it in x, in the stored values (a matrix built from differentiated values) and in y, and sparsity
detection sees the stored structure, a stored zero of a constant matrix included as no dependency. Before, all
three refused `A @ x` (no rule for a C function of scipy.sparse; 21 real cases per mode in sp43). The stand-ins
are checked against scipy's own kernels and finite differences in tests/contexts/test_sweep_44_cases.py.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as _sparse
import scipy.sparse.linalg as _sparse_linalg
from scipy.sparse import _sparsetools

from ..cotangents import Tangent
from ..registry import NoClosedForm, registry
from ..sparsity_specs import Custom

__all__ = ["csr_matvec", "csc_matvec", "coo_matvec", "csr_matvecs", "csc_matvecs", "dia_matvec"]
_KERNELS = tuple(__all__)


def _rows_of(indptr, n: int):
    """The row (CSR) or column (CSC) of each stored entry, from the index pointer of the n rows or columns."""
    return np.repeat(np.arange(n), np.diff(indptr))


def csr_matvec(n_row, n_col, Ap, Aj, Ax, Xx, Yx, /):
    """y += A x for A in CSR form (Ap: row pointer, Aj: column indices, Ax: values)."""
    np.add.at(Yx, _rows_of(Ap, n_row), Ax * Xx[Aj])


def csc_matvec(n_row, n_col, Ap, Ai, Ax, Xx, Yx, /):
    """y += A x for A in CSC form (Ap: column pointer, Ai: row indices, Ax: values)."""
    np.add.at(Yx, Ai, Ax * Xx[_rows_of(Ap, n_col)])


def coo_matvec(nnz, Ai, Aj, Ax, Xx, Yx, /):
    """y += A x for A in COO form (the first nnz entries: rows Ai, columns Aj, values Ax)."""
    np.add.at(Yx, Ai[:nnz], Ax[:nnz] * Xx[Aj[:nnz]])


def csr_matvecs(n_row, n_col, n_vecs, Ap, Aj, Ax, Xx, Yx, /):
    """Y += A X for A in CSR form, X (n_col, n_vecs) and Y (n_row, n_vecs) given flattened (Y's memory)."""
    X = np.reshape(Xx, (n_col, n_vecs))
    np.add.at(np.reshape(Yx, (n_row, n_vecs)), _rows_of(Ap, n_row), Ax[:, None] * X[Aj])


def csc_matvecs(n_row, n_col, n_vecs, Ap, Ai, Ax, Xx, Yx, /):
    """Y += A X for A in CSC form, X and Y given flattened (Y's memory)."""
    X = np.reshape(Xx, (n_col, n_vecs))
    np.add.at(np.reshape(Yx, (n_row, n_vecs)), Ai, Ax[:, None] * X[_rows_of(Ap, n_col)])


def dia_matvec(n_row, n_col, n_diags, L, offsets, diags, Xx, Yx, /):
    """y += A x for A in DIA form: diagonal d, of offset k = offsets[d], holds A[j - k, j] at diags[d, j]."""
    diags = np.reshape(diags, (n_diags, L))
    for d in range(n_diags):
        k = int(offsets[d])
        j_start, j_end = max(0, k), min(n_row + k, n_col, L)
        if j_end > j_start:
            Yx[j_start - k:j_end - k] += diags[d, j_start:j_end] * Xx[j_start:j_end]


for _name in _KERNELS:
    _kernel = getattr(_sparsetools, _name, None)
    if _kernel is not None:  # (scipy's kernels by name: present in every supported version, checked anyway)
        registry.set(_kernel, stand_in=globals()[_name])


# -- scipy.sparse.linalg.spsolve(A, b): x = A^-1 b ---------------------------------------------------------------------
# b's cotangent is l = A^-T g (one more sparse solve), A's -l x^T on the entries A stores: a `Tangent` of its
# `data` for CSR, CSC and COO (each stored entry, a duplicate too, the partial of the sum it is part of), a dense
# array for a dense A. Another format's `data` gets a refused cotangent (dropped where its values are constants,
# refused where they are differentiated). Forward mode: b's tangent solved for; A holding perturbed values refused.

_SPSOLVE_A = NoClosedForm("scipy.sparse.linalg.spsolve", "A (a sparse matrix of this format)", 0,
                          fix="build A in CSR, CSC or COO form, keep it constant, or solve densely with "
                              "np.linalg.solve(A.toarray(), b)")


def _dense_right_side(b) -> None:
    if _sparse.issparse(b):
        raise NoClosedForm("scipy.sparse.linalg.spsolve", "b given as a sparse matrix", 1,
                           fix="pass b as a numpy array").error()


def _stored_positions(A):
    """(rows, columns) of the entries A stores, in the order of `A.data`; None for another format."""
    if A.format in ("csr", "csc"):
        major = _rows_of(A.indptr, len(A.indptr) - 1)
        return (major, A.indices) if A.format == "csr" else (A.indices, major)
    if A.format == "coo":
        return A.row, A.col
    return None


def _spsolve_a_cotangent(A, lam, x):
    if not _sparse.issparse(A):
        return -(np.outer(lam, x) if np.ndim(x) == 1 else lam @ np.transpose(x))
    at = _stored_positions(A)
    if at is None:
        return Tangent(data=_SPSOLVE_A.cotangent())
    rows, cols = at
    products = lam[rows] * x[cols]
    return Tangent(data=-(products if np.ndim(x) == 1 else np.sum(products, axis=-1)))


def _spsolve_adjoint(dy, y, A, b, *args, **kwargs):
    _dense_right_side(b)
    if dy is None:
        return (None, None) + (None,) * len(args)
    At = _sparse.csc_matrix(A).T.tocsc()  # (A^T in CSC: the format spsolve factorises without converting)
    lam = np.reshape(_sparse_linalg.spsolve(At, np.asarray(dy), *args, **kwargs), np.shape(y))
    return (_spsolve_a_cotangent(A, lam, np.asarray(y)), np.reshape(lam, np.shape(b))) + (None,) * len(args)


def _spsolve_frule(tangents, A, b, *args, **kwargs):
    _dense_right_side(b)
    if (tangents and tangents[0] is not None) or type(getattr(A, "data", None)).__name__ == "Dual":
        raise NoClosedForm("scipy.sparse.linalg.spsolve", "A (forward mode)", 0,
                           fix="differentiate in reverse mode, or solve densely with np.linalg.solve(A.toarray(), b)"
                           ).error()
    y = _sparse_linalg.spsolve(A, b, *args, **kwargs)
    tb = tangents[1] if len(tangents) > 1 else None
    if tb is None:
        return y, None
    return y, np.reshape(_sparse_linalg.spsolve(A, np.asarray(tb), *args, **kwargs), np.shape(y))


registry.adjoint(_sparse_linalg.spsolve)(_spsolve_adjoint)
registry.frule(_sparse_linalg.spsolve)(_spsolve_frule)
registry.sparsity(Custom("rules.py: every entry of x on every entry of b; A refused where traced"), _sparse_linalg.spsolve)
