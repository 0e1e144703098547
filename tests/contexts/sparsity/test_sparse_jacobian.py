"""sparse_jacobian against dense forward-mode and finite-difference Jacobians; colouring; plotting."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from contexts.forward import jacfwd
from contexts.sparsity import color_columns, jacobian_sparsity, plot_sparsity, sparse_jacobian

from tests import fd

from ._pattern import nonzero


def heat(u):
    du = np.zeros_like(u)
    du[1:-1] = u[2:] - 2 * u[1:-1] + u[:-2] + np.sin(u[1:-1])
    du[0] = u[0] ** 2
    du[-1] = u[-1] * u[-2]
    return du


@pytest.mark.parametrize("n", [5, 40])
def test_sparse_jacobian_equals_dense(n):
    x = np.random.default_rng(n).uniform(0.5, 1.5, n)
    J, info = sparse_jacobian(heat, x, full_output=True)
    assert isinstance(J, sp.csr_array) and info["ncolors"] == 3
    np.testing.assert_allclose(J.toarray(), jacfwd(heat, x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(J.toarray(), fd.jacobian(heat, x, matrix=True), atol=1e-6)


def test_sparse_jacobian_of_2d_output_with_given_pattern():
    A = np.array([[1.0, 0, 2], [0, 3, 0]])
    f = lambda x: np.tanh(A @ x) * x[:2]
    x = np.array([0.3, -0.2, 0.7])
    P = jacobian_sparsity(f, x)
    np.testing.assert_allclose(sparse_jacobian(f, x, P).toarray(), jacfwd(f, x), atol=1e-12)


def test_coloring_is_valid_and_small():
    rng = np.random.default_rng(4)
    P = sp.random_array((30, 40), density=0.08, rng=rng, format="csr") != 0
    colors = color_columns(P)
    dense = P.toarray()
    for row in dense:
        used = colors[row]
        assert len(used) == len(set(used.tolist()))  # no two columns of one row share a colour
    assert colors.max() + 1 <= dense.sum(axis=0).max() * dense.sum(axis=1).max() + 1


def test_pattern_size_mismatch_is_an_error():
    from overdub.errors import OverdubError
    with pytest.raises(OverdubError, match="columns"):
        sparse_jacobian(heat, np.ones(4), sp.eye_array(5, dtype=bool))


def test_plot_sparsity_writes_png(tmp_path):
    path = plot_sparsity(jacobian_sparsity(heat, np.ones(20)), tmp_path / "p.png")
    assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


UNARY = [np.sin, np.exp, np.tanh, np.square, np.abs, np.cos]


@st.composite
def programs(draw):
    n = draw(st.integers(2, 6))
    m = draw(st.integers(1, 5))
    mask = np.array(draw(st.lists(st.booleans(), min_size=m * n, max_size=m * n))).reshape(m, n)
    weights = np.where(mask, 1.0 + np.arange(m * n).reshape(m, n) / 7.0, 0.0)
    u = draw(st.sampled_from(range(len(UNARY))))
    perm = np.array(draw(st.permutations(range(n))))
    k = draw(st.integers(0, n - 1))
    return n, weights, UNARY[u], perm, k


@settings(max_examples=40, deadline=None)
@given(programs(), st.integers(0, 2**31 - 1))
def test_pattern_covers_every_nonzero(program, seed):
    n, W, g, perm, k = program

    def f(x):
        y = g(W @ x) + x[perm][: W.shape[0]] * x[k] if W.shape[0] <= n else g(W @ x)
        return np.concatenate([y, np.cumsum(x[:2]) * x[-1]])

    x = np.random.default_rng(seed).uniform(-2, 2, n)
    P = jacobian_sparsity(f, x).toarray()
    J = fd.jacobian(f, x, matrix=True)
    assert not (nonzero(J, 1e-6) & ~P).any()
    assert (jacobian_sparsity(f, x, mode="local").toarray() <= P).all()
