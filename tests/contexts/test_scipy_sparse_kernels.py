"""scipy.sparse with differentiated values (session 51): the kernels' stand-ins against scipy's own kernels, every
format's products, conversions and reductions in reverse and forward mode against central differences (in the
stored values and in the dense operand), sparsity patterns against the stored structure, and the engine cases met
on the way (each with a scipy-free reproduction).

The oracles are scipy's compiled kernels (run natively, outside any context) and tests/fd.py; a mode may refuse
(an OverdubError), never answer wrongly.
"""

from __future__ import annotations

import numpy as np
import pytest

from contexts import gradient, jacfwd
from overdub.errors import OverdubError
from tests import fd

sparse = pytest.importorskip("scipy.sparse")
_sparsetools = pytest.importorskip("scipy.sparse._sparsetools")

from contexts.rules.numpy import scipy_sparse as ours  # noqa: E402  (after scipy is known to be there)

# -- the stand-ins compute what scipy's kernels compute (duplicates, explicit zeros, cancellations) ----------------


def _both(name, *args, module=_sparsetools):
    """scipy's kernel and ours on copies of the same arguments: (their result, ours, their args, our args)."""
    theirs = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    mine = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    return getattr(module, name)(*theirs), getattr(ours, name)(*mine), theirs, mine


def _same(a, b, what):
    np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12, err_msg=what)


def _coo_with_duplicates(rng, m, n, nnz):
    rows = rng.integers(0, m, nnz).astype(np.int32)
    cols = rng.integers(0, n, nnz).astype(np.int32)
    values = rng.normal(size=nnz)
    values[::5] = 0.0  # explicit zeros
    return rows, cols, values


@pytest.mark.parametrize("seed", range(12))
def test_conversion_kernels_match_scipy(seed):
    rng = np.random.default_rng(seed)
    m, n = (int(v) for v in rng.integers(1, 7, 2))
    r, c, v = _coo_with_duplicates(rng, m, n, int(rng.integers(0, 15)))
    nnz = len(v)
    _, _, a, b = _both("coo_tocsr", m, n, nnz, r, c, v, np.empty(m + 1, np.int32), np.empty(nnz, np.int32),
                       np.empty(nnz))
    for i in (6, 7, 8):
        _same(a[i], b[i], "coo_tocsr")
    Ap, Aj, Ax = a[6], a[7], a[8]
    _, _, a, b = _both("csr_tocsc", m, n, Ap, Aj, Ax, np.empty(n + 1, np.int32), np.empty(nnz, np.int32),
                       np.empty(nnz))
    for i in (5, 6, 7):
        _same(a[i], b[i], "csr_tocsc")
    for fortran in (0, 1):
        dense = np.ones((m, n), order="F" if fortran else "C")
        _, _, a, b = _both("coo_todense", m, n, nnz, r, c, v, dense.ravel("A"), fortran)
        _same(a[6], b[6], "coo_todense")
    _, _, a, b = _both("csr_todense", m, n, Ap, Aj, Ax, np.ones((m, n)))
    _same(a[5], b[5], "csr_todense")
    _, _, a, b = _both("csr_sort_indices", m, Ap, Aj, Ax)
    _same(a[1], b[1], "csr_sort_indices indptr")
    _same(a[2], b[2], "csr_sort_indices indices")
    rows = np.repeat(np.arange(m), np.diff(Ap))  # (scipy's sort is not stable: values of one (row, column) in any order)
    _same(a[3][np.lexsort((a[3], a[2], rows))], b[3][np.lexsort((b[3], b[2], rows))], "csr_sort_indices data")
    _, _, a, b = _both("csr_sum_duplicates", m, n, a[1], a[2], a[3])
    k = a[2][m]
    _same(a[2], b[2], "csr_sum_duplicates indptr")
    _same(a[3][:k], b[3][:k], "csr_sum_duplicates indices")
    _same(a[4][:k], b[4][:k], "csr_sum_duplicates data")


@pytest.mark.parametrize("seed", range(12))
def test_product_kernels_match_scipy(seed):
    rng = np.random.default_rng(100 + seed)
    m, n = (int(v) for v in rng.integers(1, 7, 2))
    A = sparse.random(m, n, density=0.5, random_state=seed, format="csr")
    A.data[::4] = 0.0
    x, X = rng.normal(size=n), rng.normal(size=(n, 3))
    args = (m, n, A.indptr, A.indices, A.data)
    _, _, a, b = _both("csr_matvec", *args, x, np.ones(m))
    _same(a[6], b[6], "csr_matvec")
    _, _, a, b = _both("csr_matvecs", m, n, 3, A.indptr, A.indices, A.data, X.ravel(), np.ones(3 * m))
    _same(a[7], b[7], "csr_matvecs")
    C = A.tocoo()
    _, _, a, b = _both("coo_matmat_dense", C.nnz, 3, C.row, C.col, C.data, X.ravel(), np.ones((m, 3)))
    _same(a[6], b[6], "coo_matmat_dense")
    # sparse @ sparse, with products that cancel exactly (the kernel drops them; so do we)
    B = sparse.csr_matrix(np.where(rng.random((n, 4)) < 0.5, 1.0, 0.0))
    S = sparse.csr_matrix((np.where(rng.random(A.nnz) < 0.5, 1.0, -1.0), A.indices, A.indptr), shape=A.shape)
    for left in (A, S):
        size = _sparsetools.csr_matmat_maxnnz(m, 4, left.indptr, left.indices, B.indptr, B.indices)
        _, _, a, b = _both("csr_matmat", m, 4, left.indptr, left.indices, left.data, B.indptr, B.indices, B.data,
                           np.empty(m + 1, np.int32), np.empty(size, np.int32), np.empty(size))
        k = a[8][-1]
        _same(a[8], b[8], "csr_matmat indptr")
        _same(a[9][:k], b[9][:k], "csr_matmat indices")
        _same(a[10][:k], b[10][:k], "csr_matmat data")
    # BSR
    R, Cb = (int(v) for v in rng.integers(1, 4, 2))
    Bs = sparse.random(m * R, n * Cb, density=0.4, random_state=seed).tobsr(blocksize=(R, Cb))
    M, N = Bs.shape
    nb = len(Bs.indices)
    xb, Xb = rng.normal(size=N), rng.normal(size=(N, 2))
    _, _, a, b = _both("bsr_matvec", M // R, N // Cb, R, Cb, Bs.indptr, Bs.indices, Bs.data.ravel(), xb, np.ones(M))
    _same(a[8], b[8], "bsr_matvec")
    _, _, a, b = _both("bsr_matvecs", M // R, N // Cb, 2, R, Cb, Bs.indptr, Bs.indices, Bs.data.ravel(), Xb.ravel(),
                       np.ones(2 * M))
    _same(a[9], b[9], "bsr_matvecs")
    _, _, a, b = _both("bsr_transpose", M // R, N // Cb, R, Cb, Bs.indptr, Bs.indices, Bs.data.ravel(),
                       np.empty(N // Cb + 1, Bs.indptr.dtype), np.empty(nb, Bs.indices.dtype), np.empty(nb * R * Cb))
    for i in (7, 8, 9):
        _same(a[i], b[i], "bsr_transpose")


@pytest.mark.parametrize("seed", range(12))
def test_dia_kernels_match_scipy(seed):
    rng = np.random.default_rng(200 + seed)
    m, n = (int(v) for v in rng.integers(1, 7, 2))
    offsets = rng.choice(np.arange(-m + 1, n), size=min(3, m + n - 1), replace=False).astype(np.int32)
    L = int(rng.integers(1, n + 2))
    data = rng.normal(size=(len(offsets), L))
    data[0, ::2] = 0.0  # stored zeros, which dia_tocsr drops
    x, X = rng.normal(size=n), rng.normal(size=(n, 3))
    _, _, a, b = _both("dia_matvec", m, n, len(offsets), L, offsets, data, x, np.ones(m))
    _same(a[7], b[7], "dia_matvec")
    _, _, a, b = _both("dia_matvec", m, n, len(offsets), L, offsets, data, x, np.ones((m, 1)))  # (`A.sum()`'s)
    _same(a[7], b[7], "dia_matvec into (m, 1)")
    _, _, a, b = _both("dia_matvecs", m, n, len(offsets), L, offsets, data, 3, X, np.ones((m, 3)))
    _same(a[8], b[8], "dia_matvecs")
    size = sparse.dia_matrix((data, offsets), shape=(m, n)).nnz
    order = np.argsort(offsets).astype(np.int32)
    nnz_theirs, nnz_ours, a, b = _both("dia_tocsr", m, n, len(offsets), L, offsets, data, order, np.empty(size),
                                       np.empty(size, np.int32), np.empty(m + 1, np.int32))
    assert nnz_ours == nnz_theirs
    _same(a[7][:nnz_theirs], b[7][:nnz_ours], "dia_tocsr data")
    _same(a[8][:nnz_theirs], b[8][:nnz_ours], "dia_tocsr indices")
    _same(a[9], b[9], "dia_tocsr indptr")


def test_lil_and_nd_kernels_match_scipy():
    from scipy.sparse import _csparsetools
    A = sparse.random(5, 6, density=0.4, random_state=4, format="lil")
    for field in ("rows", "data"):
        _, _, a, b = _both("lil_flatten_to_array", getattr(A, field), np.zeros(A.nnz), module=_csparsetools)
        _same(a[1], b[1], f"lil_flatten_to_array {field}")
    T = sparse.random_array((3, 4, 5), density=0.4, random_state=1, format="coo")
    for order in "CF":
        got = np.zeros(T.shape, order=order)
        strides = (np.append(1, np.cumprod(T.shape[:-1])) if order == "F"
                   else np.append(np.cumprod(T.shape[1:][::-1])[::-1], 1))
        ours.coo_todense_nd(strides, T.nnz, 3, np.concatenate(T.coords), T.data, got.ravel("A"), int(order == "F"))
        np.testing.assert_allclose(got, T.toarray(order=order), rtol=0, atol=0)


# -- every format's products and reductions, both modes, against central differences ------------------------------

_M, _N = 4, 6
_ROWS = np.array([0, 0, 1, 2, 2, 3, 3, 1])  # (1, 1) stored twice
_COLS = np.array([0, 3, 1, 2, 5, 0, 4, 1])
_RNG = np.random.default_rng(1)
_P0 = _RNG.normal(size=len(_ROWS))
_X0 = _RNG.normal(size=_N)
_B = sparse.random(_N, 3, density=0.5, random_state=3, format="csr")
_FORMATS = ("csr", "csc", "coo", "lil", "dok", "bsr", "dia")


def _build(fmt, kind, values):
    A = (sparse.coo_array if kind == "array" else sparse.coo_matrix)((values, (_ROWS, _COLS)), shape=(_M, _N))
    return A.tobsr(blocksize=(2, 2)) if fmt == "bsr" else A.asformat(fmt)


_OPS = {
    "A@x": lambda A, x: A @ x,
    "A@X": lambda A, x: A @ np.outer(x, [1.0, -0.5]),
    "A.dot(x)": lambda A, x: A.dot(x),
    "A.T@y": lambda A, x: A.T @ x[:_M],
    "y@A": lambda A, x: x[:_M] @ A,
    "multiply": lambda A, x: A.multiply(x).toarray(),
    "sum": lambda A, x: A.sum() * x,
    "sum0": lambda A, x: np.asarray(A.sum(axis=0)).ravel() * x,
    "sum1": lambda A, x: np.asarray(A.sum(axis=1)).ravel() * x[:_M],
    "toarray": lambda A, x: A.toarray() @ x,
    "A@B": lambda A, x: (A @ _B).toarray() @ x[:3],
    "A*2": lambda A, x: (A * 2.0) @ x,
}

# What is refused, and why (each refusal is an OverdubError; everything else must be right):
# - BSR built from differentiated values, and BSR @ sparse in reverse mode: `csr_tobsr` has no stand-in (yet);
# - LIL * c in reverse mode: `lil_get_row_ranges` (LIL's copy) has no stand-in;
# - a DIA matrix built from differentiated values by `todia()` stores exact zeros where the diagonals pass empty
#   positions, which `tocsr()` drops: reverse mode refuses the values' cotangent (`_nonzero_values`);
# - sums over np.matrix results (spmatrix `.sum()`): the engines refuse arithmetic on a differentiated np.matrix.
_MUST_WORK = [(kind, fmt, op, wrt) for kind in ("array",) for fmt in ("csr", "csc", "coo", "dok")
              for op in _OPS for wrt in ("values", "dense")] + [
    (kind, fmt, op, "dense") for kind in ("array", "matrix") for fmt in ("csr", "csc", "coo", "bsr", "dia", "lil", "dok")
    for op in ("A@x", "A@X", "A.dot(x)", "A.T@y", "y@A", "A@B") if (fmt, op) != ("bsr", "A@B")] + [
    ("matrix", fmt, op, "values") for fmt in ("csr", "csc", "coo", "lil", "dok")
    for op in ("A@x", "A@X", "A.dot(x)", "A.T@y", "y@A", "multiply", "toarray", "A@B")]


def _case(kind, fmt, op, wrt):
    g = _OPS[op]
    if wrt == "values":
        return (lambda p: np.sum(np.asarray(g(_build(fmt, kind, p), _X0)) ** 2)), _P0
    A = _build(fmt, kind, _P0)
    return (lambda x: np.sum(np.asarray(g(A, x)) ** 2)), _X0


def _right_or_refused(f, z, mode):
    want = fd.gradient(f, z)[0]
    try:
        got = gradient(f, z)[0] if mode == "reverse" else jacfwd(f, z)
    except OverdubError:
        return False
    np.testing.assert_allclose(np.asarray(got, dtype=float).reshape(z.shape), want, rtol=1e-6, atol=1e-8)
    return True


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("fmt", _FORMATS)
@pytest.mark.parametrize("kind", ["array", "matrix"])
def test_every_format_right_or_refused(kind, fmt, mode):
    """Each product and reduction, in the stored values and in the dense operand: right, or an overdub refusal;
    the cases listed in _MUST_WORK must be right."""
    failures = []
    for op in _OPS:
        for wrt in ("values", "dense"):
            if kind == "matrix" and fmt == "bsr" and op == "sum":
                continue  # (scipy itself: np.matrix of a 0-d sum)
            f, z = _case(kind, fmt, op, wrt)
            answered = _right_or_refused(f, z, mode)
            if not answered and (kind, fmt, op, wrt) in _MUST_WORK and not (
                    mode == "reverse" and fmt == "lil" and op == "A*2"):
                failures.append((op, wrt))
    assert not failures, f"refused where it must work: {failures}"


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_matrix_built_from_differentiated_values(mode):
    """The probe's `csr_matrix((v, (i, j)))` (coo_tocsr) and `diags(v)` with the dense product; spsolve of a CSC
    built from values (coo_tocsr, then csr_tocsc)."""
    x0 = np.array([0.3, -1.2, 0.7])

    def built(v):
        return np.sum((sparse.csr_matrix((v, ([0, 1, 2], [0, 1, 2])), shape=(3, 3)) @ x0) ** 2)

    def diagonal(v):
        return np.sum((sparse.diags(v).tocsr() @ x0) ** 2)

    def solved(v):
        from scipy.sparse.linalg import spsolve
        A = sparse.csc_matrix((np.append(v + 2.0, 0.1), ([0, 1, 2, 0], [0, 1, 2, 2])), shape=(3, 3))
        return np.sum(spsolve(A, x0) ** 2)
    for f in (built, diagonal, solved):
        if mode == "reverse" and f is solved:
            got = gradient(f, x0 + 1.0)[0]
        elif f is solved:
            continue  # (spsolve in A: reverse mode only)
        else:
            got = gradient(f, x0 + 1.0)[0] if mode == "reverse" else jacfwd(f, x0 + 1.0)
        np.testing.assert_allclose(got, fd.gradient(f, x0 + 1.0)[0], rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_a_value_exactly_zero_that_scipy_drops_is_refused_not_zero(mode):
    """diags(v).tocsr() at v with an exact 0: scipy drops the entry, whose derivative is not 0 (d/dv1 of
    (v1 x1)^2 is 0 only because v1 = 0 here, but d/dv1 of sum((A @ x)^2 + A @ x) is x1): refused."""
    x0 = np.array([0.3, -1.2, 0.7])

    def f(v):
        y = sparse.diags(v).tocsr() @ x0
        return np.sum(y ** 2 + y)
    v = np.array([1.0, 0.0, 2.0])
    with pytest.raises(OverdubError):
        gradient(f, v) if mode == "reverse" else jacfwd(f, v)


def test_sparse_product_cancelling_to_zero_is_refused_in_the_values():
    """(A @ B) with an entry that cancels exactly: csr_matmat drops it; its derivative in A's values is not 0."""
    B = sparse.csr_matrix(np.array([[1.0, 0.0], [1.0, 1.0]]))

    def f(v):
        A = sparse.csr_matrix((v, ([0, 0], [0, 1])), shape=(1, 2))
        return np.sum((A @ B).toarray() @ np.array([1.0, 2.0]))
    with pytest.raises(OverdubError):
        gradient(f, np.array([1.0, -1.0]))  # (1 - 1 = 0 in the first column)
    np.testing.assert_allclose(gradient(f, np.array([1.0, 2.0]))[0], fd.gradient(f, np.array([1.0, 2.0]))[0],
                               rtol=1e-7)


# -- sparsity: the stored structure -------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "bsr", "dia", "lil", "dok"])
def test_sparsity_is_the_stored_structure(fmt):
    from contexts.sparsity import jacobian_sparsity
    A = _build(fmt, "array", _P0)
    A_dense = A.toarray()
    try:
        pattern = jacobian_sparsity(lambda x: A @ x, _X0).toarray()
    except OverdubError:
        assert fmt == "lil"  # (LIL's `lil_get_lengths` has no sparsity rule: refused)
        return
    assert (pattern == (A_dense != 0)).all() if fmt != "bsr" else (pattern >= (A_dense != 0)).all()


def test_sparsity_in_the_stored_values():
    """Output row i of (matrix built from v) @ x depends on the values v_k stored in row i."""
    from contexts.sparsity import jacobian_sparsity

    want = np.zeros((_M, len(_P0)), dtype=bool)
    want[_ROWS, np.arange(len(_P0))] = True
    for build in (sparse.coo_array, sparse.csr_array):
        def r(v):
            return build((v, (_ROWS, _COLS)), shape=(_M, _N)) @ _X0
        try:
            pattern = jacobian_sparsity(r, _P0).toarray()
        except OverdubError:
            assert build is sparse.csr_array  # (its duplicates summed on tracers: refused, not followed yet)
            continue
        assert (pattern == want).all()


# -- the probe's two crashes --------------------------------------------------------------------------------------

def test_vector_times_transposed_dok_in_reverse_mode():
    """`x @ dok.T`: reverse mode's walks asked the dok_matrix (a dict subclass) its own `values()` and
    `__contains__` before `__init__` made its `_dict` (AttributeError)."""
    D = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0], [4.0, 0.0, 5.0], [0.0, 6.0, 0.0]])
    A = sparse.dok_matrix(D)

    def f(x):
        return np.sum((x @ A.T) ** 2)
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(gradient(f, x)[0], 2 * D.T @ (D @ x), rtol=1e-12)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_dia_sum_of_a_scaled_diagonal(mode):
    """`(diags(v) * 2.0).sum()`: dia's sum adds into an (n, 1) array (`dia_matvec`'s stand-in broadcast it: a
    ValueError); as a sparse array the sum is 2 sum(v), as a matrix the np.matrix result is refused."""
    v = np.array([0.5, -1.0, 2.0])
    f_array = lambda v: (sparse.diags_array(v) * 2.0).sum()  # noqa: E731
    got = gradient(f_array, v)[0] if mode == "reverse" else jacfwd(f_array, v)
    np.testing.assert_allclose(got, [2.0, 2.0, 2.0])
    f_matrix = lambda v: (sparse.diags(v) * 2.0).sum()  # noqa: E731
    try:
        got = gradient(f_matrix, v)[0] if mode == "reverse" else jacfwd(f_matrix, v)
    except OverdubError:
        return
    np.testing.assert_allclose(got, [2.0, 2.0, 2.0])


# -- engine cases met on the way, without scipy ---------------------------------------------------------------------

def _fill(a, b, x, y):
    y += x * a


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_an_array_filled_by_a_callee_after_a_spread_is_refused_not_zero():
    """`k(*sizes, x, y)` where k fills y: reverse mode hands y's cotangent to k only by a known position (scipy's
    `dia_matvecs(*self.shape, *self.data.shape, ..., other, res)`): it gave 0; refused now."""
    def f(x):
        y = np.zeros(3)
        _fill(*(2.0, 1), x, y)
        return np.sum(y ** 2)
    with pytest.raises(OverdubError):
        gradient(f, np.arange(1.0, 4.0))

    def g(x):
        y = np.zeros(3)
        _fill(2.0, 1, x, y)
        return np.sum(y ** 2)
    np.testing.assert_allclose(gradient(g, np.arange(1.0, 4.0))[0], [8.0, 16.0, 24.0])


def _through_fortran_view(x):
    out = np.zeros((2, 3), order="F")
    np.add.at(np.reshape(out.T, -1), [0, 3], x[:2])
    return out


def test_a_write_through_a_reshape_of_a_fortran_array_in_forward_mode():
    """Forward mode: np.zeros(order='F') made a C-ordered zero tangent, so `out.T.reshape(-1)` viewed the value
    but copied the tangent, and writes through it were lost (scipy's csc `toarray()`: 0)."""
    want = fd.jacobian(_through_fortran_view, np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(jacfwd(_through_fortran_view, np.array([1.0, 2.0, 3.0])), want, atol=1e-8)


def _object_rows(p):
    data = np.empty(2, dtype=object)
    data[0] = [p[0], p[1]]
    data[1] = [p[2]]
    return data


def test_lists_an_object_array_holds_in_reverse_mode():
    """A list an object array holds (LIL's rows): its cotangent went into both its box and the array's
    (gradients doubled), and a 2-D read crashed."""
    p = np.array([1.0, 2.0, 3.0])
    looped = lambda p: sum(v * v for row in _object_rows(p) for v in row)  # noqa: E731
    read = lambda p: _object_rows(p)[0][1] ** 2 + _object_rows(p)[1][0] ** 3  # noqa: E731
    for f in (looped, read):
        np.testing.assert_allclose(gradient(f, p)[0], fd.gradient(f, p)[0], rtol=1e-8, atol=1e-9)

    def two_d(p):
        data = np.empty((2, 1), dtype=object)
        data[0, 0], data[1, 0] = [p[0]], [p[1]]
        return data[0, 0][0] ** 2 + data[1, 0][0] ** 3
    np.testing.assert_allclose(gradient(two_d, p)[0], fd.gradient(two_d, p)[0], rtol=1e-8, atol=1e-9)


class _Entries:
    def __init__(self, d=None):
        self._d = d if d is not None else {}

    def items(self):
        return self._d.items()

    def __mul__(self, s):
        n = _Entries()
        n._d.update((k, v * s) for k, v in self._d.items())
        return n

    def dot(self, x):
        return sum(v * x[k] for k, v in self.items())


def test_an_operator_made_object_read_through_its_own_method():
    """`B = E * 2.0` (run natively, re-run in the adjoint), then `B.dot(x)` reading `self.items()` (= `self._d.
    items()`): the cotangent was left in the box of the dict the forward pass made (B's own none, the operator's
    adjoint skipped: 0); the re-run makes another (`helpers.held`, `carry_boxes`)."""
    x0 = np.array([1.0, 3.0])

    def f(p):
        return (_Entries({0: p[0], 1: p[1]}) * 2.0).dot(x0) ** 2
    np.testing.assert_allclose(gradient(f, np.array([1.0, 2.0]))[0], [56.0, 168.0])


def test_dok_scaled_by_an_operator_then_multiplied():
    """scipy's DOK on that path: `(A * 2.0) @ x` gave 0 in the stored values; its methods read `self._dict`."""
    def f(p):
        return np.sum(((_build("dok", "array", p) * 2.0) @ _X0) ** 2)
    np.testing.assert_allclose(gradient(f, _P0)[0], fd.gradient(f, _P0)[0], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(jacfwd(f, _P0), fd.gradient(f, _P0)[0], rtol=1e-7, atol=1e-9)


# -- elementwise binary operators of two sparse matrices (`A + B`, `A - B`, `A.multiply(B)`, `A.maximum(B)`):
# scipy's `csr_<op>_csr` kernels (session 68: refused before, networkx's `laplacian_matrix` is `D - A`) ---------

_BINOPS = ("plus", "minus", "elmul", "maximum", "minimum")


def _binop_run(module, name, A, B):
    """The kernel's output arrays (sized as scipy's `_binopt` sizes them), cut to the entries it wrote."""
    n_row, n_col = A.shape
    size = len(A.data) + len(B.data)
    Cp, Cj, Cx = np.empty(n_row + 1, np.int32), np.empty(size, np.int32), np.empty(size)
    getattr(module, name)(n_row, n_col, A.indptr, A.indices, A.data, B.indptr, B.indices, B.data, Cp, Cj, Cx)
    return Cp, Cj[:Cp[-1]], Cx[:Cp[-1]]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("op", _BINOPS)
def test_binary_operator_kernels_match_scipy(op, seed):
    """Bit for bit, with entries cancelling to 0 (dropped), and rows of duplicates and unsorted columns (scipy's
    general path: each row's columns in the reverse of their first appearance)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((5, 6)) * (rng.random((5, 6)) < 0.5)
    b = rng.standard_normal((5, 6)) * (rng.random((5, 6)) < 0.5)
    b[0] = -a[0]
    b[1] = a[1]
    general = sparse.csr_matrix((np.array([1.0, 2.0, 3.0, 4.0, -2.0]), np.array([3, 1, 3, 0, 5], np.int32),
                                 np.array([0, 3, 5], np.int32)), shape=(2, 6))
    other = sparse.csr_matrix((np.array([5.0, -4.0, 7.0]), np.array([1, 3, 2], np.int32),
                               np.array([0, 2, 3], np.int32)), shape=(2, 6))
    for A, B in ((sparse.csr_matrix(a), sparse.csr_matrix(b)), (general, other), (other, general)):
        theirs = _binop_run(_sparsetools, f"csr_{op}_csr", A, B)
        mine = _binop_run(ours, f"csr_{op}_csr", A, B)
        for t, m, what in zip(theirs, mine, ("indptr", "indices", "data")):
            np.testing.assert_array_equal(m, t, err_msg=f"{op} {what}")


_DENSE_A = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0], [4.0, 0.0, 5.0]])
_DENSE_B = np.array([[0.0, 1.0, 2.0], [0.0, 0.0, 6.0], [7.0, 0.0, 0.0]])


def _sparse_pair(w, fmt):
    make = getattr(sparse, f"{fmt}_array")
    return make(_DENSE_A * w[0]), make(_DENSE_B * w[1] + 0.5 * _DENSE_A)


_SPARSE_BINARY = {
    "A + B": lambda A, B: A + B,
    "A - B": lambda A, B: A - B,
    "A.multiply(B)": lambda A, B: A.multiply(B),
    "A.maximum(B)": lambda A, B: A.maximum(B),
    "A.minimum(B)": lambda A, B: A.minimum(B),
    "(A - B) @ (A + B)": lambda A, B: (A - B) @ (A + B),
}


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("expr", _SPARSE_BINARY)
@pytest.mark.one_mode
def test_binary_operators_of_sparse_matrices(expr, fmt, mode):
    weights = np.arange(1.0, 10.0).reshape(3, 3)

    def f(w):
        C = _SPARSE_BINARY[expr](*_sparse_pair(w, fmt))
        return float(np.sum(C.toarray() * weights))
    w = np.array([0.7, 1.3])
    got = gradient(f, w.copy())[0] if mode == "reverse" else jacfwd(f, w.copy())
    np.testing.assert_allclose(got, fd.gradient(f, w)[0], rtol=1e-6, atol=1e-8)


# -- extracting (slices, rows and columns picked, samples, diagonals, stacks) and sums (session 69) ---------------


def _random_csr(rng, m, n, nnz, duplicates):
    """(indptr, indices, data) of a CSR matrix: duplicates and unsorted columns kept unless told otherwise."""
    A = sparse.coo_matrix((rng.normal(size=nnz), (rng.integers(0, m, nnz), rng.integers(0, n, nnz))),
                          shape=(m, n)).tocsr()
    if not duplicates:
        A.sum_duplicates()
    return A.indptr.astype(np.int32), A.indices.astype(np.int32), A.data.copy()


def _outputs(*sizes_and_dtypes):
    return [np.zeros(size, dtype) for size, dtype in sizes_and_dtypes]


@pytest.mark.parametrize("seed", range(40))
def test_extraction_kernels_match_scipy(seed):
    """Bit for bit against scipy's kernels, on matrices with duplicates and unsorted columns (and canonical ones:
    `csr_sample_values` searches those), negative samples and slices with negative steps."""
    rng = np.random.default_rng(seed)
    m, n = (int(v) for v in rng.integers(1, 8, 2))
    Ap, Aj, Ax = _random_csr(rng, m, n, int(rng.integers(0, 25)), bool(seed % 2))
    ir0 = int(rng.integers(0, m))
    ir1, ic0 = int(rng.integers(ir0, m + 1)), int(rng.integers(0, n))
    ic1 = int(rng.integers(ic0, n + 1))
    theirs = _sparsetools.get_csr_submatrix(m, n, Ap, Aj, Ax, ir0, ir1, ic0, ic1)
    mine = ours.get_csr_submatrix(m, n, Ap, Aj, Ax, ir0, ir1, ic0, ic1)
    for t, o in zip(theirs, mine):
        np.testing.assert_array_equal(o, t)
        assert o.dtype == t.dtype
    rows = rng.integers(0, m, int(rng.integers(0, 6))).astype(np.int32)
    total = int((Ap[rows + 1] - Ap[rows]).sum())
    a, b = _outputs((total, np.int32), (total, float)), _outputs((total, np.int32), (total, float))
    _sparsetools.csr_row_index(len(rows), rows, Ap, Aj, Ax, *a)
    ours.csr_row_index(len(rows), rows, Ap, Aj, Ax, *b)
    for t, o in zip(a, b):
        np.testing.assert_array_equal(o, t)
    start, stop, step = slice(int(rng.integers(-m, m)), int(rng.integers(-m, m)),
                              int(rng.choice([-2, -1, 1, 2, 3]))).indices(m)
    picked = np.arange(start, stop, step)
    total = int((Ap[picked + 1] - Ap[picked]).sum())
    a, b = _outputs((total, np.int32), (total, float)), _outputs((total, np.int32), (total, float))
    _sparsetools.csr_row_slice(start, stop, step, Ap, Aj, Ax, *a)
    ours.csr_row_slice(start, stop, step, Ap, Aj, Ax, *b)
    for t, o in zip(a, b):
        np.testing.assert_array_equal(o, t)
    columns = rng.integers(0, n, int(rng.integers(1, 6))).astype(np.int32)
    offsets, Bp = np.zeros(n, np.int32), np.empty(m + 1, np.int32)
    _sparsetools.csr_column_index1(len(columns), columns, m, n, Ap, Aj, offsets, Bp)
    order = np.argsort(columns).astype(np.int32)
    total = int(Bp[-1])
    a, b = _outputs((total, np.int32), (total, float)), _outputs((total, np.int32), (total, float))
    _sparsetools.csr_column_index2(order, offsets, len(Aj), Aj, Ax, *a)
    ours.csr_column_index2(order, offsets, len(Aj), Aj, Ax, *b)
    for t, o in zip(a, b):
        np.testing.assert_array_equal(o, t)
    count = int(rng.integers(0, 30))
    Bi, Bj = rng.integers(-m, m, count).astype(np.int32), rng.integers(-n, n, count).astype(np.int32)
    a, b = np.zeros(count), np.zeros(count)
    _sparsetools.csr_sample_values(m, n, Ap, Aj, Ax, count, Bi, Bj, a)
    ours.csr_sample_values(m, n, Ap, Aj, Ax, count, Bi, Bj, b)
    np.testing.assert_array_equal(b, a)
    for k in range(-m + 1, n):
        size = min(m + min(k, 0), n - max(k, 0))
        a, b = np.empty(size), np.empty(size)
        _sparsetools.csr_diagonal(k, m, n, Ap, Aj, Ax, a)
        ours.csr_diagonal(k, m, n, Ap, Aj, Ax, b)
        np.testing.assert_array_equal(b, a)
    widths = rng.integers(1, 5, int(rng.integers(1, 4)))
    blocks = [_random_csr(rng, m, int(w), int(rng.integers(0, 10)), bool(seed % 2)) for w in widths]
    cat = [np.concatenate([blk[i] for blk in blocks]) for i in range(3)]
    total = len(cat[2])
    a = _outputs((m + 1, np.int32), (total, np.int32), (total, float))
    b = _outputs((m + 1, np.int32), (total, np.int32), (total, float))
    _sparsetools.csr_hstack(len(blocks), m, widths.astype(np.int32), *cat, *a)
    ours.csr_hstack(len(blocks), m, widths.astype(np.int32), *cat, *b)
    for t, o in zip(a, b):
        np.testing.assert_array_equal(o, t)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("fmt", ["csr_matrix", "csc_matrix", "coo_matrix", "csr_array", "csc_array", "coo_array"])
def test_sums_match_scipy(fmt, seed):
    """The stand-in of `sum` gives scipy's own result: the same class (np.matrix for a spmatrix along an axis),
    shape, dtype and values (duplicates included, an empty matrix too)."""
    rng = np.random.default_rng(seed)
    m, n = (int(v) for v in rng.integers(1, 6, 2))
    nnz = int(rng.integers(0, 12)) if seed else 0
    data = rng.normal(size=nnz) if seed % 3 else rng.integers(-3, 4, nnz)
    A = getattr(sparse, fmt)((data, (rng.integers(0, m, nnz), rng.integers(0, n, nnz))), shape=(m, n))
    own = {type(A).sum.__qualname__: f for f in ours._SUMS for _ in [0] if f.__qualname__ == type(A).sum.__qualname__}
    assert len(own) == 1, "the stand-in is registered for scipy's sum"
    stand_in = ours._sparse_sum(next(iter(own.values())))
    for axis in (None, 0, 1, -1, -2, (0,), (1,), (0, 1)):
        for dtype in (None, np.float32):
            want, got = A.sum(axis=axis, dtype=dtype), stand_in(A, axis=axis, dtype=dtype)
            assert type(got) is type(want) and np.shape(got) == np.shape(want), (axis, dtype)
            assert np.asarray(got).dtype == np.asarray(want).dtype, (axis, dtype)
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-15, atol=0)


_PICK_ROWS, _PICK_COLS = np.array([0, 0, 1, 2, 2, 3, 2]), np.array([0, 2, 1, 0, 3, 3, 3])  # (a duplicate at (2, 3))


def _stored(w, kind="csr_matrix"):
    return getattr(sparse, kind)((w[:7], (_PICK_ROWS, _PICK_COLS)), shape=(4, 4))


_PICKS = {
    "A[1:3]": lambda w: np.sum(_stored(w)[1:3].toarray() ** 2),
    "A[::-2]": lambda w: np.sum(_stored(w)[::-2].toarray() ** 2),
    "A[[0, 2, 2]]": lambda w: np.sum(_stored(w, "csr_array")[[0, 2, 2]].toarray() ** 2),
    "A[:, [3, 0, 0]]": lambda w: np.sum(_stored(w)[:, [3, 0, 0]].toarray() ** 2),
    "A[1:4, 0:3]": lambda w: np.sum(_stored(w)[1:4, 0:3].toarray() ** 3),
    "A[2, 3] * A[0, 2]": lambda w: _stored(w)[2, 3] * _stored(w)[0, 2],
    "A[[0, 2], [2, 3]]": lambda w: np.sum(np.asarray(_stored(w, "csr_array")[[0, 2], [2, 3]]) ** 2),
    "A.getrow(2)": lambda w: np.sum(_stored(w).getrow(2).toarray() ** 2),
    "csc A[:, 1:3]": lambda w: np.sum(_stored(w, "csc_matrix")[:, 1:3].toarray() ** 3),
    "A.diagonal(k)": lambda w: np.sum(_stored(w).diagonal(1) ** 2) + np.sum(_stored(w).diagonal(-2)),
    "hstack, vstack": lambda w: np.sum(sparse.vstack([sparse.hstack([_stored(w), 2 * _stored(w)], format="csr"),
                                                      sparse.hstack([_stored(w, "csr_array"), _stored(w)])],
                                                     format="csr").toarray() ** 2),
    "A.sum()": lambda w: _stored(w).power(2).sum() + _stored(w, "csc_matrix").mean(),
    "array A.sum(axis)": lambda w: np.asarray(_stored(w, "csr_array").sum(axis=0)) @ np.arange(1.0, 5.0),
}


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("expr", _PICKS)
@pytest.mark.one_mode
def test_picking_entries_and_summing(expr, mode):
    """Right in both modes against central differences (refused before: no rule for get_csr_submatrix,
    csr_row_index, csr_diagonal; forward mode's view of the values as a np.matrix in `sum`)."""
    def f(w):
        return float(_PICKS[expr](w))
    w = np.linspace(0.5, 2.0, 8)
    want = fd.gradient(f, w)[0]
    assert np.abs(want).max() > 0.1
    got = gradient(f, w.copy())[0] if mode == "reverse" else jacfwd(f, w.copy())
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("fmt", ["csr_matrix", "csc_matrix"])
def test_a_spmatrix_summed_along_an_axis(fmt, axis):
    """Reverse mode: right (the matrix made only of the sums). Forward mode: refused, never wrong (a dual cannot
    be a np.matrix, whose `*` is a product of matrices)."""
    def f(w):
        return float(np.asarray(_stored(w, fmt).sum(axis=axis)).ravel() @ np.arange(1.0, 5.0))
    w = np.linspace(0.5, 2.0, 8)
    want = fd.gradient(f, w)[0]
    np.testing.assert_allclose(gradient(f, w.copy())[0], want, rtol=1e-6, atol=1e-8)
    try:
        got = jacfwd(f, w.copy())
    except OverdubError:
        return
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
