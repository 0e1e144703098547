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
from scipy.sparse import _sparsetools

from ..registry import registry

__all__ = ["csr_matvec", "csc_matvec", "coo_matvec", "csr_matvecs", "csc_matvecs", "dia_matvec"]


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


for _name in __all__:
    _kernel = getattr(_sparsetools, _name, None)
    if _kernel is not None:  # (scipy's kernels by name: present in every supported version, checked anyway)
        registry.set(_kernel, stand_in=globals()[_name])
