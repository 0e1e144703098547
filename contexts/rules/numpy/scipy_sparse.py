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

import types

import numpy as np
import overdub
import scipy.sparse as _sparse
import scipy.sparse.linalg as _sparse_linalg
from scipy.sparse import _sputils
from scipy.sparse import _sparsetools

from ..cotangents import Tangent
from ..registry import NoClosedForm, registry
from ..sparsity_specs import Custom

__all__ = ["csr_matvec", "csc_matvec", "coo_matvec", "csr_matvecs", "csc_matvecs", "dia_matvec", "dia_matvecs",
           "coo_matmat_dense", "bsr_matvec", "bsr_matvecs", "bsr_transpose", "coo_todense", "coo_todense_nd",
           "csr_todense", "coo_tocsr", "csr_tocsc", "csr_sort_indices", "csr_sum_duplicates", "csr_matmat",
           "dia_tocsr", "lil_flatten_to_array", "csr_plus_csr", "csr_minus_csr", "csr_elmul_csr", "csr_maximum_csr",
           "csr_minimum_csr", "csc_plus_csc", "csc_minus_csc", "csc_elmul_csc", "csc_maximum_csc", "csc_minimum_csc",
           "get_csr_submatrix", "csr_row_index", "csr_row_slice", "csr_column_index2", "csr_sample_values",
           "csr_diagonal", "csr_hstack"]
_KERNELS = tuple(__all__)


def _rows_of(indptr, n: int):
    """The row (CSR) or column (CSC) of each stored entry, from the index pointer of the n rows or columns."""
    return np.repeat(np.arange(n), np.diff(indptr[:n + 1]))


def _flat(a):
    """The C kernels' view of an array: its memory, one dimension (scipy hands `(n, 1)` outputs too)."""
    return np.reshape(a, -1)


def _pointer(counts):
    """An index pointer from the number of entries of each row."""
    return np.concatenate(([0], np.cumsum(counts)))


def _nonzero_values(values):
    """values[values != 0]: what scipy's `dia_tocsr` and `csr_matmat` keep of the values they compute (they drop an
    entry that comes out exactly 0). A rule of its own: the derivative through a dropped entry need not be 0, so
    where one is dropped reverse mode's cotangent for the values is refused (dropped where they are constants,
    an error where they are differentiated), and forward mode refuses a dropped entry with a tangent."""
    return values[values != 0]


_DROPPED = NoClosedForm("scipy.sparse's DIA-to-CSR conversion or sparse product (it drops an entry that comes out "
                        "exactly 0 here)", "the matrix's values",
                        fix="evaluate at a point where no stored value or product entry is exactly 0, or work with "
                            "dense arrays there (`A.toarray()`)")


def _nonzero_values_adjoint(dy, y, values):
    if not np.all(values != 0):
        return (_DROPPED.cotangent(),)
    return (dy,)


def _nonzero_values_frule(tangents, values):
    keep = values != 0
    t = tangents[0] if tangents else None
    if t is not None and not keep.all() and np.any(np.asarray(t)[..., ~keep] != 0):
        raise _DROPPED.error()
    return values[keep], (None if t is None else np.asarray(t)[..., keep])


registry.adjoint(_nonzero_values)(_nonzero_values_adjoint)
registry.frule(_nonzero_values)(_nonzero_values_frule)


def csr_matvec(n_row, n_col, Ap, Aj, Ax, Xx, Yx, /):
    """y += A x for A in CSR form (Ap: row pointer, Aj: column indices, Ax: values)."""
    nnz = Ap[n_row]
    np.add.at(_flat(Yx), _rows_of(Ap, n_row), Ax[:nnz] * _flat(Xx)[Aj[:nnz]])


def csc_matvec(n_row, n_col, Ap, Ai, Ax, Xx, Yx, /):
    """y += A x for A in CSC form (Ap: column pointer, Ai: row indices, Ax: values)."""
    nnz = Ap[n_col]
    np.add.at(_flat(Yx), Ai[:nnz], Ax[:nnz] * _flat(Xx)[_rows_of(Ap, n_col)])


def coo_matvec(nnz, Ai, Aj, Ax, Xx, Yx, /):
    """y += A x for A in COO form (the first nnz entries: rows Ai, columns Aj, values Ax)."""
    np.add.at(_flat(Yx), Ai[:nnz], Ax[:nnz] * _flat(Xx)[Aj[:nnz]])


def csr_matvecs(n_row, n_col, n_vecs, Ap, Aj, Ax, Xx, Yx, /):
    """Y += A X for A in CSR form, X (n_col, n_vecs) and Y (n_row, n_vecs) given flattened (Y's memory)."""
    nnz = Ap[n_row]
    X = np.reshape(Xx, (n_col, n_vecs))
    np.add.at(np.reshape(Yx, (n_row, n_vecs)), _rows_of(Ap, n_row), Ax[:nnz, None] * X[Aj[:nnz]])


def csc_matvecs(n_row, n_col, n_vecs, Ap, Ai, Ax, Xx, Yx, /):
    """Y += A X for A in CSC form, X and Y given flattened (Y's memory)."""
    nnz = Ap[n_col]
    X = np.reshape(Xx, (n_col, n_vecs))
    np.add.at(np.reshape(Yx, (n_row, n_vecs)), Ai[:nnz], Ax[:nnz, None] * X[_rows_of(Ap, n_col)])


def dia_matvec(n_row, n_col, n_diags, L, offsets, diags, Xx, Yx, /):
    """y += A x for A in DIA form: diagonal d, of offset k = offsets[d], holds A[j - k, j] at diags[d, j]
    (y may come as an `(n_row, 1)` array: `A.sum()`)."""
    diags, x, y = np.reshape(diags, (n_diags, L)), _flat(Xx), _flat(Yx)
    for d in range(n_diags):
        k = int(offsets[d])
        j_start, j_end = max(0, k), min(n_row + k, n_col, L)
        if j_end > j_start:
            y[j_start - k:j_end - k] += diags[d, j_start:j_end] * x[j_start:j_end]


def dia_matvecs(n_row, n_col, n_diags, L, offsets, diags, n_vecs, Xx, Yx, /):
    """Y += A X for A in DIA form, X (n_col, n_vecs), Y (n_row, n_vecs) (Y's memory)."""
    diags, X, Y = np.reshape(diags, (n_diags, L)), np.reshape(Xx, (n_col, n_vecs)), np.reshape(Yx, (n_row, n_vecs))
    for d in range(n_diags):
        k = int(offsets[d])
        i_start, i_end = max(0, -k), min(n_row, min(n_col, L) - k)
        if i_end > i_start:
            np.add.at(Y, np.arange(i_start, i_end), diags[d, i_start + k:i_end + k, None] * X[i_start + k:i_end + k])


def coo_matmat_dense(nnz, n_vecs, Ai, Aj, Ax, Bx, Cx, /):
    """C += A B for A in COO form, B (n_col, n_vecs) given flattened, C (n_row, n_vecs) (C's memory)."""
    C = np.reshape(Cx, (-1, n_vecs))
    np.add.at(C, Ai[:nnz], Ax[:nnz, None] * np.reshape(Bx, (-1, n_vecs))[Aj[:nnz]])


def _blocks(Ax, R, C, nnzb):
    return np.reshape(Ax, (-1, R, C))[:nnzb]


def bsr_matvec(n_brow, n_bcol, R, C, Ap, Aj, Ax, Xx, Yx, /):
    """y += A x for A in BSR form: block n, at block row i and block column Aj[n], is Ax's n-th R x C block."""
    nnzb = Ap[n_brow]
    X = np.reshape(Xx, (n_bcol, C))
    products = np.sum(_blocks(Ax, R, C, nnzb) * X[Aj[:nnzb]][:, None, :], axis=-1)
    np.add.at(np.reshape(Yx, (n_brow, R)), _rows_of(Ap, n_brow), products)


def bsr_matvecs(n_brow, n_bcol, n_vecs, R, C, Ap, Aj, Ax, Xx, Yx, /):
    """Y += A X for A in BSR form, X (n_bcol C, n_vecs) and Y (n_brow R, n_vecs) given flattened (Y's memory)."""
    nnzb = Ap[n_brow]
    X = np.reshape(Xx, (n_bcol, C, n_vecs))
    products = np.sum(_blocks(Ax, R, C, nnzb)[:, :, :, None] * X[Aj[:nnzb]][:, None, :, :], axis=2)
    np.add.at(np.reshape(Yx, (n_brow, R, n_vecs)), _rows_of(Ap, n_brow), products)


def _transposed_order(n_row, n_col, Ap, Aj, Bp, Bi):
    """Write the structure of A^T (CSC of a CSR, block structure of BSR) into Bp, Bi; return the position in A
    of each entry of A^T, in A^T's order (scipy's: column by column, rows in A's order)."""
    nnz = Ap[n_row]
    order = np.argsort(Aj[:nnz], kind="stable")
    Bp[:n_col + 1] = _pointer(np.bincount(Aj[:nnz], minlength=n_col))
    Bi[:nnz] = _rows_of(Ap, n_row)[order]
    return order


def bsr_transpose(n_brow, n_bcol, R, C, Ap, Aj, Ax, Bp, Bj, Bx, /):
    """B = A^T for A in BSR form with R x C blocks, B in BSR form with C x R blocks (Bx's memory)."""
    order = _transposed_order(n_brow, n_bcol, Ap, Aj, Bp, Bj)
    nnzb = len(order)
    np.reshape(Bx, (-1, C, R))[:nnzb] = np.swapaxes(_blocks(Ax, R, C, nnzb)[order], 1, 2)


def csr_tocsc(n_row, n_col, Ap, Aj, Ax, Bp, Bi, Bx, /):
    """B = A for A in CSR form, B in CSC form (duplicates kept)."""
    order = _transposed_order(n_row, n_col, Ap, Aj, Bp, Bi)
    Bx[:len(order)] = Ax[order]


def coo_tocsr(n_row, n_col, nnz, Ai, Aj, Ax, Bp, Bj, Bx, /):
    """B = A for A in COO form, B in CSR form: entries by row, in A's order within a row (duplicates kept)."""
    rows = Ai[:nnz]
    order = np.argsort(rows, kind="stable")
    Bp[:n_row + 1] = _pointer(np.bincount(rows, minlength=n_row))
    Bj[:nnz] = Aj[:nnz][order]
    Bx[:nnz] = Ax[:nnz][order]


def coo_todense(n_row, n_col, nnz, Ai, Aj, Ax, Bx, fortran=0, /):
    """B += A for A in COO form, B dense (n_row, n_col) given flattened, in C or (fortran) F order."""
    rows, cols = Ai[:nnz].astype(np.intp), Aj[:nnz].astype(np.intp)
    np.add.at(_flat(Bx), rows + n_row * cols if fortran else n_col * rows + cols, Ax[:nnz])


def coo_todense_nd(strides, nnz, ndim, coords, Ax, Bx, fortran=0, /):
    """B += A for A in COO form of ndim dimensions (coords: ndim rows of nnz indices, one after another), B dense
    given flattened, the entry at coords c at sum(c * strides)."""
    at = np.reshape(coords[:ndim * nnz], (ndim, nnz)).astype(np.intp)
    np.add.at(_flat(Bx), np.sum(at * np.reshape(strides[:ndim], (ndim, 1)).astype(np.intp), axis=0), Ax[:nnz])


def csr_todense(n_row, n_col, Ap, Aj, Ax, Bx, /):
    """B += A for A in CSR form, B dense (n_row, n_col) (B's memory)."""
    nnz = Ap[n_row]
    at = n_col * _rows_of(Ap, n_row) + Aj[:nnz].astype(np.intp)
    np.add.at(_flat(Bx), at, Ax[:nnz])


def csr_sort_indices(n_row, Ap, Aj, Ax, /):
    """Sort each row's entries by column, in place (the values move with their indices)."""
    nnz = Ap[n_row]
    order = np.lexsort((Aj[:nnz], _rows_of(Ap, n_row)))
    Aj[:nnz] = Aj[:nnz][order]
    Ax[:nnz] = Ax[:nnz][order]


def csr_sum_duplicates(n_row, n_col, Ap, Aj, Ax, /):
    """Add up each row's runs of entries of one column into one entry, in place (zeros are kept: `prune` and
    `eliminate_zeros` are scipy's Python)."""
    nnz = int(Ap[n_row])
    if nnz == 0:
        return
    rows, cols = _rows_of(Ap, n_row), Aj[:nnz].copy()
    starts = np.ones(nnz, dtype=bool)
    starts[1:] = (cols[1:] != cols[:-1]) | (rows[1:] != rows[:-1])
    run = np.cumsum(starts) - 1
    n = int(run[-1]) + 1
    sums = Ax[:nnz][starts]  # (each run's first entry, then the others added to it, as the kernel does)
    later = ~starts
    np.add.at(sums, run[later], Ax[:nnz][later])
    Aj[:n] = cols[starts]
    Ax[:n] = sums
    Ap[1:n_row + 1] = np.cumsum(np.bincount(rows[starts], minlength=n_row))


def csr_matmat(n_row, n_col, Ap, Aj, Ax, Bp, Bj, Bx, Cp, Cj, Cx, /):
    """C = A B for A, B and C in CSR form (C's arrays sized by `csr_matmat_maxnnz`), each row's columns in
    scipy's order (the reverse of their first appearance), a sum that comes out exactly 0 dropped as the kernel
    drops it (`_nonzero_values`)."""
    nnz = Ap[n_row]
    major = _rows_of(Ap, n_row)
    lo, hi = Bp[Aj[:nnz]], Bp[Aj[:nnz] + 1]
    counts = (hi - lo).astype(np.intp)
    which = np.repeat(np.arange(nnz), counts)  # the entry of A of each product, in the kernel's order
    kk = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts) + np.repeat(lo, counts)
    keys = major[which].astype(np.int64) * n_col + Bj[kk]
    found, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    row_of = found // n_col
    order = np.lexsort((-first, row_of))
    position = np.empty_like(order)
    position[order] = np.arange(len(order))
    n = len(found)
    Cp[:n_row + 1] = _pointer(np.bincount(row_of, minlength=n_row))
    Cj[:n] = (found % n_col)[order]
    Cx[:n] = 0
    np.add.at(Cx, position[np.reshape(inverse, -1)], Ax[which] * Bx[kk])
    keep = Cx[:n] != 0  # (a sum that comes out 0 is dropped, as the kernel does: `_nonzero_values`)
    if not np.all(keep):
        Cx[:int(keep.sum())] = _nonzero_values(Cx[:n].copy())
        Cj[:int(keep.sum())] = Cj[:n][keep]
        Cp[:n_row + 1] = _pointer(np.bincount(row_of[order][keep], minlength=n_row))


# -- extracting: slices, rows and columns picked, samples and diagonals -------------------------------------------
# (each a gather of the stored values by positions found from the index arrays alone; a sum where the kernel adds
# duplicates, from 0 in the kernel's order by `np.add.at`)


def _ranges(starts, counts):
    """The positions start, start + 1, ... of each run, one run after another (counts entries each)."""
    counts = np.asarray(counts, dtype=np.intp)
    total = int(counts.sum())
    return np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts) + np.repeat(starts, counts)


def get_csr_submatrix(n_row, n_col, Ap, Aj, Ax, ir0, ir1, ic0, ic1, /):
    """(Bp, Bj, Bx) of A[ir0:ir1, ic0:ic1] for A in CSR form: each row's entries in A's order, duplicates kept."""
    start, end = int(Ap[ir0]), int(Ap[ir1])
    rows = _rows_of(Ap[ir0:ir1 + 1] - start, ir1 - ir0)
    cols = np.asarray(Aj[start:end])
    keep = (cols >= ic0) & (cols < ic1)
    Bp = _pointer(np.bincount(rows[keep], minlength=ir1 - ir0)).astype(Ap.dtype)
    return Bp, (cols[keep] - ic0).astype(Aj.dtype), Ax[start:end][keep]


def csr_row_index(n_row_idx, rows, Ap, Aj, Ax, Bj, Bx, /):
    """The entries of A's rows `rows[:n_row_idx]`, one row after another, into Bj, Bx."""
    picked = np.asarray(rows[:n_row_idx], dtype=np.intp)
    at = _ranges(Ap[picked], Ap[picked + 1] - Ap[picked])
    Bj[:len(at)] = Aj[at]
    Bx[:len(at)] = Ax[at]


def csr_row_slice(start, stop, step, Ap, Aj, Ax, Bj, Bx, /):
    """The entries of A's rows `range(start, stop, step)`, into Bj, Bx."""
    picked = np.arange(start, stop, step, dtype=np.intp)
    at = _ranges(Ap[picked], Ap[picked + 1] - Ap[picked])
    Bj[:len(at)] = Aj[at]
    Bx[:len(at)] = Ax[at]


def csr_column_index2(col_order, col_offsets, nnz, Aj, Ax, Bj, Bx, /):
    """The second pass of picking columns: each entry of A repeated once per time its column is picked, in A's
    order, into Bj (the picked columns' new positions, `col_order`) and Bx."""
    cols = np.asarray(Aj[:nnz], dtype=np.intp)
    ends = np.asarray(col_offsets, dtype=np.intp)
    begins = np.concatenate(([0], ends[:-1]))
    counts = ends[cols] - begins[cols]
    which = np.repeat(np.arange(nnz), counts)
    at = _ranges(begins[cols], counts)
    Bj[:len(at)] = col_order[at]
    Bx[:len(at)] = Ax[which]


def _summed_at(n, targets, values, dtype):
    """out[t] = 0 + the values with target t, in order (the kernels' `x = 0; x += Ax[jj]`)."""
    out = np.zeros_like(values, shape=n, dtype=dtype)  # (like the values: forward mode's duals are added into it)
    np.add.at(out, targets, values)
    return out


def csr_sample_values(n_row, n_col, Ap, Aj, Ax, n_samples, Bi, Bj, Bx, /):
    """Bx[k] = A[Bi[k], Bj[k]] (negative indices from the end), the sum of the entries stored there, 0 where none."""
    nnz = int(Ap[n_row])
    rows = _rows_of(Ap, n_row).astype(np.int64)
    keys = rows * n_col + np.asarray(Aj[:nnz], dtype=np.int64)
    bi, bj = (np.asarray(v[:n_samples], dtype=np.int64) for v in (Bi, Bj))
    wanted = np.where(bi < 0, bi + n_row, bi) * n_col + np.where(bj < 0, bj + n_col, bj)
    found, inverse = np.unique(wanted, return_inverse=True)
    if not len(found):
        return
    slot = np.searchsorted(found, keys)
    hit = (slot < len(found)) & (found[np.minimum(slot, len(found) - 1)] == keys)
    sums = _summed_at(len(found), slot[hit], Ax[:nnz][hit], Bx.dtype)
    Bx[:n_samples] = sums[np.reshape(inverse, -1)]


def csr_diagonal(k, n_row, n_col, Ap, Aj, Ax, Yx, /):
    """Yx = the k-th diagonal of A in CSR form (the entries stored there summed, 0 where none)."""
    first_row, first_col = (0, k) if k >= 0 else (-k, 0)
    n = min(n_row - first_row, n_col - first_col)
    nnz = int(Ap[n_row])
    rows = _rows_of(Ap, n_row)
    on = (np.asarray(Aj[:nnz]) - rows == first_col - first_row) & (rows >= first_row) & (rows < first_row + n)
    Yx[:n] = _summed_at(n, rows[on] - first_row, Ax[:nnz][on], Yx.dtype)


def csr_hstack(n_blocks, n_row, n_col_cat, Ap_cat, Aj_cat, Ax_cat, Bp, Bj, Bx, /):
    """B = [A_1 A_2 ...] for blocks in CSR form of n_row rows each, their index arrays concatenated: each row's
    entries block by block, a block's columns shifted by the widths of the blocks before it."""
    pointers = np.reshape(np.asarray(Ap_cat[:n_blocks * (n_row + 1)], dtype=np.intp), (n_blocks, n_row + 1))
    sizes = pointers[:, n_row]
    first = np.concatenate(([0], np.cumsum(sizes)[:-1]))  # (each block's first entry in the concatenation)
    shift = np.concatenate(([0], np.cumsum(np.asarray(n_col_cat[:n_blocks], dtype=np.intp))[:-1]))
    starts = (pointers[:, :n_row] + first[:, None]).T.reshape(-1)  # (row by row, block by block)
    counts = np.diff(pointers, axis=1).T.reshape(-1)
    at = _ranges(starts, counts)
    block = np.repeat(np.tile(np.arange(n_blocks), n_row), counts)
    Bp[:n_row + 1] = _pointer(counts.reshape(n_row, n_blocks).sum(axis=1))
    Bj[:len(at)] = Aj_cat[at] + shift[block]
    Bx[:len(at)] = Ax_cat[at]


def _canonical(n_row, Ap, Aj) -> bool:
    """Each row's columns strictly increasing (sorted, no duplicates): the kernels' `csr_has_canonical_format`."""
    nnz = int(Ap[n_row])
    if np.any(np.diff(Ap[:n_row + 1]) < 0):
        return False
    rows = _rows_of(Ap, n_row)
    cols = np.asarray(Aj[:nnz])
    return bool(np.all((cols[1:] > cols[:-1]) | (rows[1:] != rows[:-1])))


def _binop(op, zero_kept_zero):
    """`csr_<op>_csr(n_row, n_col, Ap, Aj, Ax, Bp, Bj, Bx, Cp, Cj, Cx)` (CSC's the same on columns): C = A op B
    entry by entry, A's and B's duplicates summed first, over the columns either stores in a row; an entry that
    comes out exactly 0 dropped as the kernel drops it. Each row's columns ascending where A and B are
    canonical, else in the kernel's order: the reverse of their first appearance, A's entries then B's.

    A dropped entry whose derivative is 0 (`zero_kept_zero(a, b, in_a, in_b)`: `A.multiply(B)` where one of them
    stores nothing, the other's constant 0; `A.maximum(B)` of a negative entry against nothing) is dropped freely;
    any other that comes out 0 (a cancellation, `A - B` of equal entries) is `_nonzero_values`' to judge."""
    def kernel(n_row, n_col, Ap, Aj, Ax, Bp, Bj, Bx, Cp, Cj, Cx, /):
        na, nb = int(Ap[n_row]), int(Bp[n_row])
        rows = np.concatenate((_rows_of(Ap, n_row), _rows_of(Bp, n_row))).astype(np.int64)
        cols = np.concatenate((np.asarray(Aj[:na]), np.asarray(Bj[:nb]))).astype(np.int64)
        keys = rows * n_col + cols
        found, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        inverse = np.reshape(inverse, -1)
        row_of = found // n_col
        if _canonical(n_row, Ap, Aj) and _canonical(n_row, Bp, Bj):
            order = np.arange(len(found))  # (np.unique's: ascending columns within each row)
        else:  # first appearance in the row's sequence: A's entries of the row, then B's
            source = np.concatenate((np.zeros(na, np.int64), np.ones(nb, np.int64)))
            sequence = np.lexsort((np.arange(na + nb), source, rows))
            rank = np.empty(na + nb, np.int64)
            rank[sequence] = np.arange(na + nb)
            earliest = np.full(len(found), na + nb, np.int64)
            np.minimum.at(earliest, inverse, rank)
            order = np.lexsort((-earliest, row_of))
        position = np.empty(len(found), np.intp)
        position[order] = np.arange(len(found))
        # (zeros like the values: a dual array under forward mode, which adds a dual's entries into a dual only)
        a = np.zeros_like(Ax, shape=len(found), dtype=np.result_type(Ax, float))
        b = np.zeros_like(Bx, shape=len(found), dtype=np.result_type(Bx, float))
        np.add.at(a, position[inverse[:na]], Ax[:na])
        np.add.at(b, position[inverse[na:]], Bx[:nb])
        values = op(a, b)
        in_a = np.zeros(len(found), bool)
        in_b = np.zeros(len(found), bool)
        in_a[position[inverse[:na]]] = True
        in_b[position[inverse[na:]]] = True
        free = (values == 0) & zero_kept_zero(a, b, in_a, in_b)
        keep = values != 0
        n = int(keep.sum())
        Cp[:n_row + 1] = _pointer(np.bincount(row_of[order][keep], minlength=n_row))
        Cj[:n] = (found % n_col)[order][keep]
        Cx[:n] = _nonzero_values(values[~free])
    return kernel


def _never(a, b, in_a, in_b):
    """A sum or difference that comes out 0 has the derivative of its terms: never dropped freely."""
    return np.zeros(len(a), bool)


def _one_side(a, b, in_a, in_b):
    """A product with an entry the other matrix does not store: that factor is a constant 0."""
    return ~(in_a & in_b)


def _against_nothing(a, b, in_a, in_b):
    """max or min of a nonzero entry against one the other matrix does not store (a constant 0), giving that 0."""
    return (in_a ^ in_b) & ((a + b) != 0)


for _name, _op, _free in (("plus", np.add, _never), ("minus", np.subtract, _never), ("elmul", np.multiply, _one_side),
                          ("maximum", np.maximum, _against_nothing), ("minimum", np.minimum, _against_nothing)):
    for _form in ("csr", "csc"):  # (CSC's kernels are CSR's on the transpose: columns for rows)
        _kernel = _binop(_op, _free)
        _kernel.__name__ = _kernel.__qualname__ = f"{_form}_{_name}_{_form}"
        globals()[_kernel.__name__] = _kernel


def _dia_entries(n_row, n_col, n_diags, L, offsets, order):
    """(row, diagonal, column) of each entry the diagonals hold inside the matrix, row by row, each row's by the
    diagonals in `order` (ascending offset)."""
    rows = np.repeat(np.arange(n_row), n_diags)
    d = np.tile(np.asarray(order[:n_diags], dtype=np.intp), n_row)
    cols = rows + np.asarray(offsets, dtype=np.intp)[d]
    inside = (cols >= 0) & (cols < min(n_col, L))
    return rows[inside], d[inside], cols[inside]


def dia_tocsr(n_row, n_col, n_diags, L, offsets, diags, order, Bx, Bj, Bp, /):
    """B = A for A in DIA form, B in CSR form: each row's entries by ascending offset (`order`), a stored 0
    dropped as the kernel drops it (`_nonzero_values`); returns B's nnz."""
    rows, d, cols = _dia_entries(n_row, n_col, n_diags, L, offsets, order)
    values = np.reshape(diags, (n_diags, L))[d, cols]
    keep = values != 0
    n = int(keep.sum())
    Bp[:n_row + 1] = _pointer(np.bincount(rows[keep], minlength=n_row))
    Bj[:n] = cols[keep]
    Bx[:n] = _nonzero_values(values)
    return n


def lil_flatten_to_array(x, y, /):
    """y = the items of the lists in x, one after another (a LIL matrix's rows or values into CSR's arrays)."""
    k = 0
    for row in x:
        for v in row:
            y[k] = v
            k += 1


# -- scipy's Python methods that call a kernel filling an array after a `*spread` of sizes ----------------------------
# (`dia_matvecs(*self.shape, *self.data.shape, ..., other, res)`: reverse mode cannot hand a callee an array passed by
# position after a spread, and refuses the call where the callee fills it): the same code, the sizes by position.

def dia_matmul_multivector(self, other):
    """`_dia_base._matmul_multivector`: A @ X for A in DIA form, X a dense matrix (a sum of shifted rows of X,
    one diagonal after another, as `dia_matvecs` adds them)."""
    (n_row, n_col), (n_diags, L), n_vecs = self.shape, self.data.shape, other.shape[1]
    res = np.zeros((n_row, n_vecs), dtype=np.result_type(self.data, other))
    for d in range(n_diags):
        k = int(self.offsets[d])
        i_start, i_end = max(0, -k), min(n_row, min(n_col, L) - k)
        if i_end > i_start:
            part = self.data[d, i_start + k:i_end + k, None] * other[i_start + k:i_end + k]
            res = res + np.concatenate([np.zeros((i_start, n_vecs)), part, np.zeros((n_row - i_end, n_vecs))])
    return res


def dia_to_csr(self, copy=False):
    """`_dia_base.tocsr`: A in CSR form, rows by ascending offset, stored zeros dropped (as `dia_tocsr`)."""
    if 0 in self.shape or len(self.offsets) == 0:
        return self._csr_container(self.shape, dtype=self.dtype)
    (n_rows, n_cols), (n_diags, L) = self.shape, self.data.shape
    rows, d, cols = _dia_entries(n_rows, n_cols, n_diags, L, self.offsets, np.argsort(self.offsets, kind="stable"))
    values = self.data[d, cols]
    keep = values != 0
    idx_dtype = self._get_index_dtype(maxval=max(len(cols), n_rows, n_cols))
    indptr = _pointer(np.bincount(rows[keep], minlength=n_rows)).astype(idx_dtype)
    out = self._csr_container((_nonzero_values(values), cols[keep].astype(idx_dtype), indptr), shape=self.shape,
                              dtype=self.dtype)
    out.has_canonical_format = True
    return out


_dia_base = getattr(getattr(_sparse, "_dia", None), "_dia_base", None)
for _name, _method in (("_matmul_multivector", dia_matmul_multivector), ("tocsr", dia_to_csr)):
    if _dia_base is not None and callable(getattr(_dia_base, _name, None)):
        registry.set(getattr(_dia_base, _name), stand_in=_method)


# -- DOK's methods reading its entries through its own `items()`, `keys()`, `values()` ----------------------------------
# The same code reading `self._dict`: reverse mode lost the derivative through a DOK matrix an operator made
# (`B = A * 2.0`, run natively, re-run in the adjoint) whose entries a method then read through `self.items()` (its
# cotangent was left in the box of the dict the forward pass made, which the re-run does not take: `(A * 2.0) @ x`
# gave 0; an engine matter, seen without scipy in tests/contexts/test_scipy_sparse_kernels.py). Reverse mode only
# (no overdub context, plain values); forward mode and sparsity run scipy's own code as before.

_PLAIN = (float, int, complex, bool, np.float64, np.float32, np.complex128, np.int64, np.int32)


def _dok_plain(self, *others) -> bool:
    """Reverse mode (no overdub context runs the code) on plain numbers and arrays."""
    return overdub.current() is None and all(type(v) in _PLAIN for v in self._dict.values()) and all(
        type(o) in _PLAIN or o is None or (type(o) is np.ndarray and o.dtype.kind in "biufc") for o in others)


def dok_matmul_vector(self, other):
    """`_dok_base._matmul_vector`: A @ x."""
    if not _dok_plain(self, other):
        return _DOK_OWN["_matmul_vector"](self, other)
    res_dtype = _sputils.upcast(self.dtype, other.dtype)
    if self.ndim == 1:
        return res_dtype(sum(other[k] * v for k, v in self._dict.items()))
    result = np.zeros(self.shape[0], dtype=res_dtype)
    for (i, j), v in self._dict.items():
        result[i] += v * other[j]
    return result


def dok_matmul_multivector(self, other):
    """`_dok_base._matmul_multivector`: A @ X."""
    if not _dok_plain(self, other):
        return _DOK_OWN["_matmul_multivector"](self, other)
    result_dtype = _sputils.upcast(self.dtype, other.dtype)
    if self.ndim == 1:
        return sum(v * other[j] for j, v in self._dict.items())
    result = np.zeros((self.shape[0],) if other.ndim == 1 else (self.shape[0], other.shape[1]), dtype=result_dtype)
    for (i, j), v in self._dict.items():
        result[i] += v * other[j]
    return result


def dok_tocoo(self, copy=False):
    """`_dok_base.tocoo`."""
    if not _dok_plain(self):
        return _DOK_OWN["tocoo"](self, copy)
    nnz = len(self._dict)
    if nnz == 0:
        return self._coo_container(self.shape, dtype=self.dtype)
    idx_dtype = self._get_index_dtype(maxval=max(self.shape))
    data = np.fromiter(self._dict.values(), dtype=self.dtype, count=nnz)
    inds = zip(*self._dict.keys()) if self.ndim > 1 else (self._dict.keys(),)
    coords = tuple(np.fromiter(ix, dtype=idx_dtype, count=nnz) for ix in inds)
    A = self._coo_container((data, coords), shape=self.shape, dtype=self.dtype)
    A.has_canonical_format = True
    return A


def dok_transpose(self, axes=None, copy=False):
    """`_dok_base.transpose`."""
    if self.ndim == 1 or not _dok_plain(self) or (axes is not None and axes != (1, 0)):
        return _DOK_OWN["transpose"](self, axes, copy)
    M, N = self.shape
    new = self._dok_container((N, M), dtype=self.dtype, copy=copy)
    new._dict.update((((right, left), val) for (left, right), val in self._dict.items()))
    return new


def dok_mul_scalar(self, other):
    """`_dok_base._mul_scalar`: A * c."""
    if not _dok_plain(self, other):
        return _DOK_OWN["_mul_scalar"](self, other)
    new = self._dok_container(self.shape, dtype=_sputils.upcast_scalar(self.dtype, other))
    new._dict.update(((k, v * other) for k, v in self._dict.items()))
    return new


def dok_neg(self):
    """`_dok_base.__neg__`: -A."""
    if self.dtype.kind == "b" or not _dok_plain(self):
        return _DOK_OWN["__neg__"](self)
    new = self._dok_container(self.shape, dtype=self.dtype)
    new._dict.update((k, -v) for k, v in self._dict.items())
    return new


def dok_truediv(self, other):
    """`_dok_base.__truediv__`: A / c."""
    if not (_sputils.isscalarlike(other) and _dok_plain(self, other)):
        return _DOK_OWN["__truediv__"](self, other)
    new = self._dok_container(self.shape, dtype=_sputils.upcast_scalar(self.dtype, other))
    new._dict.update(((k, v / other) for k, v in self._dict.items()))
    return new


_dok_base = getattr(getattr(_sparse, "_dok", None), "_dok_base", None)
_DOK_OWN: dict = {}
if _dok_base is not None and all(callable(getattr(_sputils, f, None)) for f in ("upcast", "upcast_scalar",
                                                                                "isscalarlike")):
    for _name, _method in (("_matmul_vector", dok_matmul_vector), ("_matmul_multivector", dok_matmul_multivector),
                           ("tocoo", dok_tocoo), ("transpose", dok_transpose), ("_mul_scalar", dok_mul_scalar),
                           ("__neg__", dok_neg), ("__truediv__", dok_truediv)):
        _own = getattr(_dok_base, _name, None)
        if type(_own) is types.FunctionType:
            # (scipy's code as a function of its own: the registered one would be replaced by its stand-in again)
            _DOK_OWN[_name] = types.FunctionType(_own.__code__, _own.__globals__, _own.__name__, _own.__defaults__,
                                                 _own.__closure__)
            _DOK_OWN[_name].__kwdefaults__, _DOK_OWN[_name].__qualname__ = _own.__kwdefaults__, _own.__qualname__
            registry.set(_own, stand_in=_method)


try:
    from scipy.sparse import _csparsetools
except ImportError:  # (a scipy without LIL's Cython helpers)
    _csparsetools = None
for _name in _KERNELS:
    _kernel = getattr(_csparsetools if _name.startswith("lil_") else _sparsetools, _name, None)
    if _kernel is not None:  # (scipy's kernels by name: what this scipy has is registered)
        registry.set(_kernel, stand_in=globals()[_name])


# -- sums of a matrix or array: its stored values added up, without np.matrix on the way -----------------------------
# scipy's `sum` wraps the values as a np.matrix first (`self._ascontainer(_todata(self))`), and sums along an axis
# into a matrix by products with a matrix of ones: forward mode cannot view a dual as a matrix (refused), and
# reverse mode refused the store into the matrix `out`. The stand-in adds the stored values (duplicates too) in
# scipy's order into plain arrays, a matrix made only of the result (`A.sum(axis=0)` of a spmatrix is one);
# `out=`, n-d arrays and other axes run scipy's own code.


def _sum_axes(axis):
    """axis as a tuple of axes of a 2-d array ((0,), (1,)), None for all of them, or False where it is none."""
    if axis is None:
        return None
    axes = axis if type(axis) is tuple else (axis,)
    if not all(type(a) is int or isinstance(a, np.integer) for a in axes) or not all(-2 <= a < 2 for a in axes):
        return False
    axes = tuple(sorted({int(a) % 2 for a in axes}))
    return None if axes == (0, 1) else axes


def _sparse_sum(own):
    def sparse_sum(self, axis=None, dtype=None, out=None):
        axes = _sum_axes(axis)
        if out is not None or self.ndim != 2 or axes is False or not hasattr(self, "tocoo") or (
                dtype is not None and np.dtype(dtype) != _sputils.get_sum_dtype(self.dtype)):
            # (a conversion asked for: scipy's own way, which changed between versions: 1.18 sums its duplicates
            # in place and converts first, summing float32 values in float32; `mean`'s own type is no conversion)
            return own(self, axis=axis, dtype=dtype, out=out)
        if axes is None:  # (a number: the matrix scipy made of the values summed to the same)
            if self.nnz == 0:
                return np.sum(np.zeros(1, dtype=_sputils.get_sum_dtype(self.dtype)))
            return np.sum(_sputils._todata(self))
        coo = self.tocoo()
        at, n = (coo.col, self.shape[1]) if axes == (0,) else (coo.row, self.shape[0])
        sums = _summed_at(n, np.asarray(at, dtype=np.intp), coo.data, _sputils.get_sum_dtype(self.dtype))
        if isinstance(self, _sparse.sparray):
            return sums
        return self._ascontainer(np.reshape(sums, (1, n) if axes == (0,) else (n, 1)))
    return sparse_sum


_SUMS = []
if all(callable(getattr(_sputils, f, None)) for f in ("get_sum_dtype", "_todata")):
    for _owner in (_sparse._base._spbase, getattr(getattr(_sparse, "_compressed", None), "_cs_matrix", None)):
        _own = getattr(_owner, "sum", None) if _owner is not None else None
        if type(_own) is types.FunctionType and "sum" in _owner.__dict__:
            _copy = types.FunctionType(_own.__code__, _own.__globals__, _own.__name__, _own.__defaults__,
                                       _own.__closure__)
            _copy.__qualname__ = _own.__qualname__
            _SUMS.append(_copy)
            registry.set(_own, stand_in=_sparse_sum(_copy))


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
