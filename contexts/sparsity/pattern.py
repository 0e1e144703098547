"""Vectorised dependency sets: one sorted set of column indices per row, stored CSR-style.

A `Pattern` is the boolean structure of a sparse matrix without scipy's per-call overhead: row r of an
array tracer lists the inputs (or, for second order, the input pairs) that element r depends on. Every
tracer operation reduces to three moves on patterns — `gather` (row r copies a source row), `combine`
(row r is the union of several source rows) and `cross` (row r gets the pairs of two rows' sets) — each a
handful of numpy calls whatever the number of rows, so detection scales to 10^5 inputs and beyond.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["Pattern"]

_INT = np.int64


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """concatenate(arange(s, s + l) for s, l in zip(starts, lengths)) without a Python loop."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, _INT)
    before = np.cumsum(lengths) - lengths
    return np.arange(total, dtype=_INT) + np.repeat(starts - before, lengths)


class Pattern:
    """Rows of sorted, unique column indices in `[0, ncols)`; row r is indices[indptr[r]:indptr[r+1]]."""

    __slots__ = ("indptr", "indices", "ncols")

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, ncols: int):
        self.indptr, self.indices, self.ncols = indptr, indices, int(ncols)

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def identity(cls, n: int) -> Pattern:
        """Input i depends on itself only."""
        return cls(np.arange(n + 1, dtype=_INT), np.arange(n, dtype=_INT), n)

    @classmethod
    def empty(cls, nrows: int, ncols: int) -> Pattern:
        return cls(np.zeros(nrows + 1, _INT), np.zeros(0, _INT), ncols)

    @classmethod
    def from_pairs(cls, rows: np.ndarray, cols: np.ndarray, nrows: int, ncols: int) -> Pattern:
        """The pattern holding every (row, col) pair given (duplicates merged)."""
        if len(rows) == 0:
            return cls.empty(nrows, ncols)
        rows = np.asarray(rows, _INT)
        cols = np.asarray(cols, _INT)
        if nrows * ncols < 2**62:
            # timsort merges the already-sorted runs that unions concatenate; np.unique is far slower
            keys = np.sort(rows * ncols + cols, kind="stable")
            keep = np.empty(len(keys), bool)
            keep[0] = True
            np.not_equal(keys[1:], keys[:-1], out=keep[1:])
            rows, cols = np.divmod(keys[keep], ncols)
        else:  # keys would overflow int64: sort the pairs instead
            order = np.lexsort((cols, rows))
            rows, cols = rows[order], cols[order]
            keep = np.ones(len(rows), bool)
            keep[1:] = (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])
            rows, cols = rows[keep], cols[keep]
        indptr = np.zeros(nrows + 1, _INT)
        np.cumsum(np.bincount(rows, minlength=nrows), out=indptr[1:])
        return cls(indptr, cols, ncols)

    @classmethod
    def vstack(cls, patterns: list[Pattern]) -> Pattern:
        """Rows of each pattern in turn (all with the same ncols)."""
        if len(patterns) == 1:
            return patterns[0]
        offsets = np.cumsum([0] + [p.indptr[-1] for p in patterns[:-1]])
        indptr = np.concatenate([[0]] + [p.indptr[1:] + o for p, o in zip(patterns, offsets)])
        return cls(indptr.astype(_INT), np.concatenate([p.indices for p in patterns]),
                   patterns[0].ncols)

    # -- queries ---------------------------------------------------------------------------------
    @property
    def nrows(self) -> int:
        return len(self.indptr) - 1

    @property
    def nnz(self) -> int:
        return int(self.indptr[-1])

    def row_lengths(self) -> np.ndarray:
        return np.diff(self.indptr)

    def row_ids(self) -> np.ndarray:
        """The row of each stored index."""
        return np.repeat(np.arange(self.nrows, dtype=_INT), self.row_lengths())

    def to_csr(self) -> sp.csr_array:
        data = np.ones(self.nnz, dtype=bool)
        return sp.csr_array((data, self.indices.copy(), self.indptr.copy()),
                            shape=(self.nrows, self.ncols))

    def __repr__(self) -> str:
        return f"Pattern({self.nrows} rows x {self.ncols} cols, nnz={self.nnz})"

    # -- the three moves ---------------------------------------------------------------------------
    def gather(self, rows: np.ndarray) -> Pattern:
        """Row k of the result is row rows[k] of self; rows[k] == -1 gives an empty row."""
        rows = np.asarray(rows, _INT).ravel()
        if len(rows) == self.nrows and np.array_equal(rows, np.arange(self.nrows)):
            return self
        valid = rows >= 0
        safe = np.where(valid, rows, 0)
        starts = self.indptr[safe]
        lengths = np.where(valid, self.indptr[safe + 1] - starts, 0)
        indptr = np.zeros(len(rows) + 1, _INT)
        np.cumsum(lengths, out=indptr[1:])
        return Pattern(indptr, self.indices[_ranges(starts, lengths)], self.ncols)

    def combine(self, out_rows: np.ndarray, src_rows: np.ndarray, nrows: int) -> Pattern:
        """Row r of the result is the union of rows src_rows[k] for every k with out_rows[k] == r."""
        out_rows = np.asarray(out_rows, _INT).ravel()
        src_rows = np.asarray(src_rows, _INT).ravel()
        starts = self.indptr[src_rows]
        lengths = self.indptr[src_rows + 1] - starts
        return Pattern.from_pairs(np.repeat(out_rows, lengths),
                                  self.indices[_ranges(starts, lengths)], nrows, self.ncols)

    def union(self, *others: Pattern) -> Pattern:
        """Row-wise union with patterns of the same number of rows."""
        parts = [p for p in (self, *others) if p.nnz]
        if not parts:
            return self
        if len(parts) == 1:
            return parts[0]
        rows = np.concatenate([p.row_ids() for p in parts])
        cols = np.concatenate([p.indices for p in parts])
        return Pattern.from_pairs(rows, cols, self.nrows, self.ncols)

    def cross(self, other: Pattern) -> Pattern:
        """Second-order pairs: row r holds key min(i, j) * n + max(i, j) for i in self[r], j in other[r]."""
        n = self.ncols
        la, lb = self.row_lengths(), other.row_lengths()
        counts = la * lb
        total = int(counts.sum())
        if total == 0:
            return Pattern.empty(self.nrows, n * n)
        row = np.repeat(np.arange(self.nrows, dtype=_INT), counts)
        k = np.arange(total, dtype=_INT) - np.repeat(np.cumsum(counts) - counts, counts)
        lb_row = lb[row]
        i = self.indices[self.indptr[row] + k // lb_row]
        j = other.indices[other.indptr[row] + k % lb_row]
        return Pattern.from_pairs(row, np.minimum(i, j) * n + np.maximum(i, j), self.nrows, n * n)

    def any_rows(self) -> Pattern:
        """One row: the union of all rows."""
        return Pattern.from_pairs(np.zeros(self.nnz, _INT), self.indices, 1, self.ncols)
