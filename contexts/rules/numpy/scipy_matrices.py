"""scipy.linalg's structured matrices, `toeplitz`, `circulant` and `hankel`, written as the numpy indexing they
compute (`Rule.stand_in`), for every engine; and the sparsity of scipy.linalg's dense factorizations (below).

scipy builds them with `np.lib.stride_tricks.as_strided` over a joined vector of the values, read backwards from
its middle: memory outside the view it is given, which reverse mode refuses and forward mode cannot view on a dual
(`.strides`), and which sparsity detection cannot trace. As gathers from that vector every engine differentiates
them, each entry the value it reads. 1-D arguments (`np.atleast_1d` of a number too); a batch of vectors (scipy
1.17 takes one) is refused by name. Checked against scipy's own results and finite differences in
tests/contexts/test_sweep_44_cases.py.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as _linalg

from ..registry import registry
from ._util import unsupported

__all__ = ["toeplitz", "circulant", "hankel"]


def _vector(name, v):
    v = np.atleast_1d(v)
    if np.ndim(v) != 1:
        raise unsupported(f"scipy.linalg.{name}", "a batch of vectors (an argument of more than one dimension)",
                          fix=f"call {name} on each 1-D vector, or ravel the argument first")
    return v


def toeplitz(c, r=None):
    """A[i, j] = c[i - j] for i >= j, r[j - i] for j > i (r defaults to c's conjugate; r[0] is ignored)."""
    c = _vector("toeplitz", c)
    r = np.conjugate(c) if r is None else _vector("toeplitz", r)
    values = np.concatenate((c[::-1], r[1:]))
    m, n = c.shape[0], r.shape[0]
    return values[(m - 1) - np.arange(m)[:, None] + np.arange(n)[None, :]]


def circulant(c):
    """A[i, j] = c[(i - j) mod n]: each column c rolled down by its index."""
    c = _vector("circulant", c)
    n = c.shape[0]
    return c[(np.arange(n)[:, None] - np.arange(n)[None, :]) % n]


def hankel(c, r=None):
    """A[i, j] = c[i + j] for i + j < len(c), r[i + j - len(c) + 1] after (r defaults to zeros; r[0] ignored)."""
    c = np.asarray(c)  # (not atleast_1d: a number fails as in scipy)
    r = np.zeros_like(c) if r is None else np.asarray(r)
    if c.ndim > 1 or r.ndim > 1:
        _vector("hankel", c if c.ndim > 1 else r)
    values = np.concatenate((c, r[1:]))
    return values[np.arange(c.shape[0])[:, None] + np.arange(r.shape[0])[None, :]]


for _name in __all__:
    _fn = getattr(_linalg, _name, None)
    if _fn is not None:
        registry.set(_fn, stand_in=globals()[_name])


# -- the sparsity of scipy.linalg's dense factorizations and solvers -----------------------------------------------------
# Their LAPACK routines are f2py objects, never given tracers: each function's every output on every entry of every
# traced argument (DENSE, a superset; a triangular factor's zeros included). Reverse and forward mode still go into
# them (the rules sit on the LAPACK routines, scipy_linalg.py); a function with rules of its own is left alone.

def _dense_sparsity():
    from ..sparsity_specs import DENSE
    names = ("svd", "svdvals", "eigh", "eigvalsh", "eig", "eigvals", "cholesky", "cho_factor", "cho_solve", "lu",
             "lu_factor", "lu_solve", "qr", "rq", "schur", "inv", "solve", "solve_triangular", "pinv", "pinvh",
             "polar", "hessenberg", "det", "null_space", "orth")
    for name in names:
        fn = getattr(_linalg, name, None)
        if fn is not None and registry.get(fn) is None:
            registry.sparsity(DENSE, fn)


_dense_sparsity()
