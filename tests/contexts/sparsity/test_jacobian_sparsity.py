"""Jacobian patterns equal the nonzero structure of finite-difference Jacobians at random points."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.special as sc

from contexts.sparsity import TracedBranchError, jacobian_sparsity

from tests import fd

from ._pattern import nonzero

RNG = np.random.default_rng(0)
A35 = RNG.standard_normal((3, 5))
SPARSE_A = np.array([[1.0, 0, 0, 2, 0], [0, 0, 3, 0, 0], [0, 4, 0, 0, 5]])


def laplacian_1d(u):
    """A 1-D finite-difference heat equation RHS with Dirichlet ends, written with a result buffer."""
    du = np.zeros_like(u)
    du[1:-1] = (u[2:] - 2 * u[1:-1] + u[:-2]) / 0.01
    du[0] = u[1] - 2 * u[0]
    du[-1] = u[-2] - 2 * u[-1]
    return du


def loop_pde(u):
    """The same stencil as a Python loop over scalars."""
    n = len(u)
    out = np.zeros(n)
    for i in range(1, n - 1):
        out[i] = u[i - 1] - 2.0 * u[i] + u[i + 1] + math.sin(u[i])
    return out


def inplace(x):
    y = np.zeros(4)
    alias = y
    y += x[::-1]
    y[0] *= x[1]
    alias[3] /= x[1]
    return alias


def branchy(x):
    if x[0] > 1.0:
        return np.array([x[1] * x[2], x[3]])
    return np.array([x[0], x[4] ** 2])


CASES = {
    # elementwise
    "sin_exp": (lambda x: np.sin(x) * np.exp(x[::-1]), 5),
    "ufunc_mix": (lambda x: np.hypot(x, 2.0) + np.arctan2(x, x[::-1]) - np.log1p(x) / np.sqrt(x), 6),
    "pow_abs": (lambda x: np.abs(x) ** 1.5 + x ** 2 - 1 / x, 4),
    "broadcast": (lambda x: (x.reshape(2, 3) * x[:3]).ravel(), 6),
    "scalar_broadcast": (lambda x: x * x[0], 4),
    # matmul and friends
    "matmul_const": (lambda x: A35 @ x, 5),
    "matmul_sparse_const": (lambda x: SPARSE_A @ x, 5),
    "matmul_tracer": (lambda x: (x.reshape(2, 3) @ x.reshape(3, 2)).ravel(), 6),
    "dot_outer": (lambda x: np.concatenate([[np.dot(x, x)], np.outer(x[:2], x[2:]).ravel()]), 4),
    "rmatmul_vec": (lambda x: x[:3] @ A35, 3),
    # reductions
    "sum_axis": (lambda x: x.reshape(3, 4).sum(axis=0), 12),
    "mean_prod": (lambda x: np.concatenate([x.reshape(2, 3).mean(1), np.prod(x.reshape(2, 3), axis=0)]), 6),
    "cumsum": (lambda x: np.cumsum(x), 5),
    "norm_axis": (lambda x: np.linalg.norm(x.reshape(3, 2), axis=1), 6),
    "total": (lambda x: np.sum(x ** 2), 5),
    # indexing and shape ops
    "fancy_index": (lambda x: x[[3, 0, 0, 2]] * x[1], 4),
    "mask_index": (lambda x: x[np.array([True, False, True, False, True])], 5),
    "transpose": (lambda x: x.reshape(2, 3).T.ravel() * np.arange(1, 7), 6),
    "concat_stack": (lambda x: np.stack([np.concatenate([x[:2], [1.0]]), x[1:4]]).ravel(), 5),
    "roll_flip_pad": (lambda x: np.roll(x, 2) + np.flip(x) + np.pad(x, 1)[1:-1], 5),
    "diff": (lambda x: np.diff(x, 2), 6),
    "where_const": (lambda x: np.where(np.arange(5) > 2, x, x ** 2), 5),
    "setitem": (laplacian_1d, 7),
    "hstack_vstack": (lambda x: np.vstack([x[:3], np.hstack([x[3:], x[:1]])]).ravel(), 5),
    "tile_repeat": (lambda x: np.tile(x[:2], 2) * np.repeat(x[2:], 2), 4),
    # calls through the context
    "math_scalars": (lambda x: [math.sin(x[0]) * x[1], math.exp(x[2]), math.hypot(x[0], x[3])], 4),
    "builtins": (lambda x: [abs(x[0]), sum(x[1:3]), float(x[3]) * 2, pow(x[0], 3)], 4),
    "loop_pde": (loop_pde, 6),
    "list_output": (lambda x: [x[0] * x[1], x[2]], 3),
    # library code run unchanged, in-place updates
    "meshgrid": (lambda x: np.meshgrid(x[:2], x[2:])[0].ravel() * np.meshgrid(x[:2], x[2:])[1].ravel(), 5),
    "logsumexp_softmax": (lambda x: np.concatenate([[sc.logsumexp(x[:3])], sc.softmax(x[3:])]), 6),
    "solve_with_eye": (lambda x: np.linalg.solve(np.eye(3) + 0.1, x[:3]) * x[3], 4),
    "inplace_ops": (inplace, 4),
}


def locally_sorted(x):
    return np.sort(x) * np.arange(1.0, 6.0)


GLOBAL_SUPERSET = {
    # global mode over-approximates (the permutation is not known); local mode is exact
    "sort": (locally_sorted, 5),
    "argmax_index": (lambda x: x[np.argmax(x)] * x[0], 4),
    "max_builtin": (lambda x: [max(x[0], x[1]), min(x[2], x[3])], 4),
}


@pytest.mark.parametrize("name", sorted(GLOBAL_SUPERSET))
def test_global_covers_local_equals_finite_differences(name):
    f, n = GLOBAL_SUPERSET[name]
    x = np.random.default_rng(5).uniform(0.5, 1.5, n)
    expected = nonzero(fd.jacobian(f, x, matrix=True))
    np.testing.assert_array_equal(jacobian_sparsity(f, x, mode="local").toarray(), expected)
    try:
        glob = jacobian_sparsity(f, x).toarray()
    except TracedBranchError:
        return  # needs the values (argmax): global mode refuses, which is also sound
    assert (glob >= expected).all()


@pytest.mark.parametrize("name", sorted(CASES))
def test_global_pattern_matches_finite_differences(name):
    f, n = CASES[name]
    x = np.random.default_rng(1).uniform(0.5, 1.5, n)
    P = jacobian_sparsity(f, x)
    assert isinstance(P, sp.csr_array) and P.dtype == bool
    expected = nonzero(fd.jacobian(f, x, matrix=True))
    assert P.shape == expected.shape
    np.testing.assert_array_equal(P.toarray(), expected)


@pytest.mark.parametrize("name", sorted(CASES))
def test_local_pattern_matches_finite_differences(name):
    f, n = CASES[name]
    x = np.random.default_rng(2).uniform(0.5, 1.5, n)
    np.testing.assert_array_equal(jacobian_sparsity(f, x, mode="local").toarray(),
                                  nonzero(fd.jacobian(f, x, matrix=True)))


@pytest.mark.parametrize("x0", [2.0, 0.0])
def test_local_mode_follows_the_branch_taken(x0):
    x = np.array([x0, 1.1, 1.2, 1.3, 1.4])
    np.testing.assert_array_equal(jacobian_sparsity(branchy, x, mode="local").toarray(),
                                  nonzero(fd.jacobian(branchy, x, matrix=True)))


def test_global_mode_branch_error_names_user_line():
    with pytest.raises(TracedBranchError) as info:
        jacobian_sparsity(branchy, np.ones(5))
    message = str(info.value)
    line = branchy.__code__.co_firstlineno + 1
    assert f"test_jacobian_sparsity.py:{line}" in message
    assert "mode='local'" in message


def test_local_maximum_and_clip_take_one_side():
    f = lambda x: np.concatenate([np.maximum(x[:2], x[2:]), np.clip(x, 0.8, 1.2)])
    x = np.array([0.5, 2.0, 1.0, 1.0])
    local = jacobian_sparsity(f, x, mode="local").toarray()
    np.testing.assert_array_equal(local, nonzero(fd.jacobian(f, x, matrix=True)))
    glob = jacobian_sparsity(f, x).toarray()
    assert (glob >= local).all() and glob.sum() > local.sum()


def test_constant_output_and_scalar_input():
    assert jacobian_sparsity(lambda x: np.ones(3), np.ones(2)).nnz == 0
    P = jacobian_sparsity(lambda x: [x * 2, 1.0], 3.0)
    np.testing.assert_array_equal(P.toarray(), [[True], [False]])


def test_unknown_mode_is_an_error():
    from overdub.errors import OverdubError
    with pytest.raises(OverdubError, match="mode"):
        jacobian_sparsity(np.sin, np.ones(2), mode="sideways")


def test_large_tridiagonal_detection_is_exact():
    n = 100_000
    P = jacobian_sparsity(lambda u: u[2:] - 2 * u[1:-1] + u[:-2], np.zeros(n))
    assert P.shape == (n - 2, n) and P.nnz == 3 * (n - 2)
    rows, cols = P.nonzero()
    assert set(np.unique(cols - rows)) == {0, 1, 2}


def test_c_function_without_rule_names_the_line():
    import struct

    from contexts.sparsity import NoSparsityRule

    def f(x):
        return struct.unpack("d", struct.pack("d", x[0]))[0]

    with pytest.raises(NoSparsityRule) as info:
        jacobian_sparsity(f, np.ones(2))
    assert f"test_jacobian_sparsity.py:{f.__code__.co_firstlineno + 1}" in str(info.value)
    assert "srule" in str(info.value)


def test_unknown_ufunc_is_elementwise_and_user_srule_is_used():
    from contexts.rules.registry import registry

    opaque = np.frompyfunc(math.sin, 1, 1)  # a ufunc the detector knows nothing about
    np.testing.assert_array_equal(jacobian_sparsity(lambda x: opaque(x[::-1]), np.ones(3)).toarray(),
                                  np.eye(3)[::-1] > 0)
    f = lambda x: np.linalg.eigvals(x.reshape(2, 2))
    x = np.arange(1.0, 5.0)  # local mode: eigvals checks np.isfinite(a).all() first
    assert jacobian_sparsity(f, x, mode="local").nnz == 8  # no rule: the gufunc inside is dense
    registry.srule(np.linalg.eigvals)(lambda a: np.diagonal(a) * 1.0)  # a (deliberately odd) user rule
    try:
        P = jacobian_sparsity(f, x)
    finally:
        registry.rules[np.linalg.eigvals].srule = None
    np.testing.assert_array_equal(P.toarray(), [[1, 0, 0, 0], [0, 0, 0, 1]])


def test_gufunc_is_not_treated_as_elementwise():
    f = lambda x: np.linalg.det(x.reshape(2, 2)) * np.ones(1)
    P = jacobian_sparsity(f, np.arange(1.0, 5.0))
    assert P.toarray().all()


# -- views, out= and ufunc.at: writes that reach an array through another name ----------------------------

def _fill_(v, x):
    v[:] = x[:2] * 3.0


def _rhs_(t, y, dydt):
    dydt[0] = y[1]
    dydt[1] = -y[0] * y[2]
    dydt[2] = y[2] ** 2


def _view_filled_by_a_callee(x):
    z = np.zeros(4)
    _fill_(z[1:3], x)
    return z * 2.0


def _rows_filled_through_views(x):
    Z = np.zeros((3, 2))
    for k in range(3):
        row = Z[k]
        row[:] = x[k] * x[(k + 1) % 3]
    return Z


def _view_of_a_view_updated_in_place(x):
    z = np.zeros(5)
    w = z[1:]
    v = w[::2]
    v += x[:2]
    return z


def _ode_into_an_output_argument(x):
    d = np.zeros(3)
    _rhs_(0.0, x, d)
    return d


def _ufunc_out(x):
    out = np.zeros(3)
    np.multiply(x, 3.0, out=out)
    return out


def _ufunc_out_where(x):
    out = np.ones(3)
    np.multiply(x, x[::-1], out=out, where=np.array([True, False, True]))
    return out


def _add_at(x):
    acc = np.zeros(3)
    np.add.at(acc, np.array([0, 2, 0]), x)
    return acc


def _transposed_view_stored_into(x):
    A = np.zeros((2, 3))
    A.T[0] = x[:2]
    A.transpose()[2] = x[1:] * 3.0
    return A


def _ravel_and_reshape_views_stored_into(x):
    A = np.outer(x, x) * 1.0
    B = A.reshape(9)[3:6]    # a view of the middle row
    B *= x[0]
    r = A.ravel()            # contiguous: a view
    r[::4] = 0.0             # the diagonal no longer depends on x
    return A


def _copies_stay_copies(x):
    A = np.zeros((3, 3))
    A.T.ravel()[0] = x[0]    # ravel of a transposed view copies: A is not written
    A.flatten()[4] = x[1]    # always a copy
    return A + x[2]


@pytest.mark.parametrize("f", [_view_filled_by_a_callee, _rows_filled_through_views,
                               _view_of_a_view_updated_in_place, _ode_into_an_output_argument, _ufunc_out,
                               _ufunc_out_where, _add_at, _transposed_view_stored_into,
                               _ravel_and_reshape_views_stored_into, _copies_stay_copies],
                         ids=lambda f: f.__name__.strip("_"))
@pytest.mark.parametrize("mode", ["global", "local"])
def test_writes_through_other_names_are_followed(f, mode):
    x = np.random.default_rng(2).uniform(0.5, 1.5, 3)
    P = jacobian_sparsity(f, x, mode=mode)
    np.testing.assert_array_equal(P.toarray(), nonzero(fd.jacobian(f, x, matrix=True)))


def _put_into_an_array(x):
    a = np.zeros(5)
    np.put(a, [0, 2, 7, 2], x[:2] * x[2], mode="wrap")
    b = x * 1.0
    b.put([1, 1], x[[2, 0]] ** 2)      # the last write wins
    return np.concatenate([a, b])


@pytest.mark.parametrize("mode", ["global", "local"])
def test_put_is_followed(mode):
    x = np.random.default_rng(3).uniform(0.5, 1.5, 3)
    P = jacobian_sparsity(_put_into_an_array, x, mode=mode)
    np.testing.assert_array_equal(P.toarray(), nonzero(fd.jacobian(_put_into_an_array, x, matrix=True)))


def _numpy_stores(x):
    a = np.ones(4)
    np.place(a, np.array([True, False, True, True]), x[1:3] ** 2)
    b = np.zeros(4)
    np.putmask(b, np.array([True, False, True, False]), x[::-1] * 2.0)
    A = np.zeros((3, 3))
    np.fill_diagonal(A, x[:2] ** 2)
    c = np.ones(3)
    np.copyto(c, x * x, where=np.array([True, False, True]))
    return np.concatenate([a, b, A.ravel(), c])


@pytest.mark.parametrize("mode", ["global", "local"])
def test_numpy_stores_are_followed(mode):
    x = np.random.default_rng(4).uniform(0.5, 1.5, 3)
    P = jacobian_sparsity(_numpy_stores, x, mode=mode)
    np.testing.assert_array_equal(P.toarray(), nonzero(fd.jacobian(_numpy_stores, x, matrix=True)))
