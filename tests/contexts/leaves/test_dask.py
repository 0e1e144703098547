"""dask arrays are leaves (`contexts.rules.leaves.ArrayLeaf`): gradients over them are lazy dask arrays,
equal to closed forms and to central differences on numpy copies; nothing is computed before the user
computes (counted by a dask callback)."""

from __future__ import annotations

import subprocess
import sys
import traceback

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
from dask.callbacks import Callback  # noqa: E402

from contexts import derivative, gradient, jvp  # noqa: E402
from tests.fd import gradient as fd_gradient  # noqa: E402
from tests.fd import directional  # noqa: E402


class Computations(Callback):
    """Counts the graphs dask computes while it is active."""

    def __init__(self):
        super().__init__()
        self.n = 0
        self.where = []

    def _start(self, dsk):
        self.n += 1
        self.where.append("".join(traceback.format_stack(limit=14)[:-3]))


RNG = np.random.default_rng(0)
AN = RNG.normal(size=(40, 5))
BN = RNG.normal(size=40)
X0 = RNG.normal(size=5)
AD = da.from_array(AN, chunks=(10, 5))
BD = da.from_array(BN, chunks=10)


def least_squares(A, b):
    def loss(x):
        r = A @ x - b
        return (r * r).sum()
    return loss


def squared_power(A, b):
    def loss(x):
        return ((A @ x - b) ** 2).sum()
    return loss


def methods(A, b):
    def loss(x):
        r = A.dot(x) - b
        return (r.T * r).mean() + 0.5 * (x ** 3).sum() + (A.T @ r).std()
    return loss


def numpy_functions(A, b):
    def loss(x):
        z = np.tanh(A @ x) * np.exp(-b * b)
        return np.sum(np.sin(z) ** 2) + np.log1p(np.sum(z * z)) + np.linalg.norm(z)
    return loss


def reductions_and_shapes(A, b):
    def loss(x):
        M = A * x  # broadcasting (40, 5) * (5,)
        col = M.sum(axis=0)
        row = np.mean(M, axis=1)
        return (col ** 2).sum() + (row.reshape(4, 10).max(axis=1)).sum() + np.sqrt((M ** 2).sum() + 1.0)
    return loss


def indexing(A, b):
    def loss(x):
        r = A[:20] @ x - b[5:25]
        return (r[::2] ** 2).sum() + (A[3] * x).sum() ** 2 + x[1] * x[2]
    return loss


def where_and_maximum(A, b):
    def loss(x):
        r = A @ x - b
        return np.maximum(r, 0.0).sum() + np.where(r > 0, r, 0.1 * r).sum() + np.abs(r).sum()
    return loss


LOSSES = [least_squares, squared_power, methods, numpy_functions, reductions_and_shapes, indexing,
          where_and_maximum]


@pytest.mark.parametrize("make", LOSSES, ids=lambda m: m.__name__)
@pytest.mark.parametrize("x_kind", ["numpy", "dask"])
def test_gradient_is_lazy_and_right(make, x_kind):
    x = X0.copy() if x_kind == "numpy" else da.from_array(X0.copy(), chunks=5)
    with Computations() as seen:
        g = gradient(make(AD, BD), x)[0]
    assert seen.n == 0, "the gradient computed something before .compute():\n" + "\n".join(seen.where)
    assert isinstance(g, da.Array)
    assert g.shape == (5,)
    expected = fd_gradient(make(AN, BN), X0.copy())[0]
    np.testing.assert_allclose(g.compute(), expected, rtol=1e-6, atol=1e-8)


def test_least_squares_closed_form():
    for x in (X0.copy(), da.from_array(X0.copy(), chunks=5)):
        with Computations() as seen:
            g = gradient(least_squares(AD, BD), x)[0]
        assert seen.n == 0
        np.testing.assert_allclose(g.compute(), 2 * AN.T @ (AN @ X0 - BN), rtol=1e-12)


def test_gradient_in_the_matrix():
    """The matrix itself differentiated: its gradient is a lazy dask array of its chunks' shape."""
    def loss(A, x):
        r = A @ x - BD
        return (r * r).sum()
    with Computations() as seen:
        gA, gx = gradient(loss, AD, X0.copy())
    assert seen.n == 0 and isinstance(gA, da.Array) and gA.shape == AN.shape
    np.testing.assert_allclose(gA.compute(), 2 * np.outer(AN @ X0 - BN, X0), rtol=1e-12)
    np.testing.assert_allclose(gx.compute(), 2 * AN.T @ (AN @ X0 - BN), rtol=1e-12)


def test_non_scalar_output_refused():
    from contexts.ad.api import NonScalarError
    with pytest.raises(NonScalarError, match="shape"):
        gradient(lambda x: AD @ x, X0.copy())


def test_import_contexts_does_not_import_dask():
    code = "import sys, contexts, contexts.ad, contexts.forward; assert 'dask' not in sys.modules, 'dask'"
    subprocess.run([sys.executable, "-c", code], check=True)


# -- forward mode -------------------------------------------------------------------------------------

V = np.arange(5.0) - 2.0


@pytest.mark.parametrize("make", LOSSES, ids=lambda m: m.__name__)
@pytest.mark.parametrize("x_kind", ["numpy", "dask"])
def test_jvp_is_lazy_and_right(make, x_kind):
    """jvp along V: lazy dask arrays (the tangent twin computes dask's operations), equal to central
    differences on numpy copies; or a clear refusal, never a wrong number."""
    from contexts.forward.arrays import NoForwardRule
    x = X0.copy() if x_kind == "numpy" else da.from_array(X0.copy(), chunks=5)
    expected = directional(make(AN, BN), (X0.copy(),), (V,))
    with Computations() as seen:
        try:
            y, t = jvp(make(AD, BD), (x,), (V,))
        except NoForwardRule as e:
            assert "dask" in str(e)
            return
    assert seen.n == 0, "jvp computed something:\n" + "\n".join(seen.where)
    assert isinstance(t, da.Array)
    np.testing.assert_allclose(t.compute(), expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(y.compute(), make(AN, BN)(X0.copy()), rtol=1e-12)


@pytest.mark.parametrize("x_kind", ["numpy", "dask"])
def test_derivative_along_a_line(x_kind):
    x = X0.copy() if x_kind == "numpy" else da.from_array(X0.copy(), chunks=5)
    loss = least_squares(AD, BD)
    with Computations() as seen:
        d = derivative(lambda s: loss(x + s * V), 0.3)
    assert seen.n == 0
    r = AN @ (X0 + 0.3 * V) - BN
    np.testing.assert_allclose(np.asarray(d.compute()), 2 * r @ (AN @ V), rtol=1e-12)


def test_nested_forward_right_or_refused():
    """Nested derivatives run the inner one on duals: right (dual arithmetic on dask arrays, lazily), or
    refused by name (a dask array's own code reached with a dual), never a wrong number."""
    from contexts.forward.arrays import NoForwardRule
    loss = least_squares(AD, BD)
    s = 0.5
    try:
        d2 = derivative(lambda s: derivative(lambda u: loss(X0 + s * u * V), 1.0), s)
    except NoForwardRule as e:
        assert "dask" in str(e)
        return
    r, AV = AN @ (X0 + s * V) - BN, AN @ V
    d2 = d2.compute() if isinstance(d2, da.Array) else d2
    np.testing.assert_allclose(d2, 2 * r @ AV + 2 * s * AV @ AV, rtol=1e-10)


def test_dask_method_on_duals_refused():
    """A dask array's method reached with a dual (forward mode on duals: `x.dot(dual)`) is refused by name."""
    from contexts.forward.arrays import NoForwardRule
    with pytest.raises(NoForwardRule, match="dask"):
        derivative(lambda s: derivative(lambda u: AD.dot(X0 * s * u).sum(), 1.0), 0.5)


# -- dask's own functions ------------------------------------------------------------------------------

def dask_functions(A, b):
    mod = da if isinstance(A, da.Array) else np

    def loss(x):
        z = mod.tanh(mod.dot(A, x)) - b
        return mod.sum(mod.exp(-z * z)) + mod.mean(z ** 2) + mod.maximum(z, 0.0).sum()
    return loss


@pytest.mark.parametrize("mode", ["gradient", "jvp"])
def test_dask_functions_take_numpys_rules(mode):
    with Computations() as seen:
        if mode == "gradient":
            got = gradient(dask_functions(AD, BD), X0.copy())[0]
        else:
            got = jvp(dask_functions(AD, BD), (X0.copy(),), (V,))[1]
    assert seen.n == 0, "\n".join(seen.where)
    if mode == "gradient":
        expected = fd_gradient(dask_functions(AN, BN), X0.copy())[0]
    else:
        expected = directional(dask_functions(AN, BN), (X0.copy(),), (V,))
    np.testing.assert_allclose(got.compute(), expected, rtol=1e-6, atol=1e-8)


def test_dask_function_without_rule_refused():
    """dask's own code is never differentiated through: a function of dask's without a rule reached with a
    differentiated value is refused by name."""
    from contexts.rules.registry import NoRuleError
    with pytest.raises(NoRuleError, match="map_blocks"):
        gradient(lambda x: da.map_blocks(np.sin, AD * x).sum(), X0.copy())


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_advanced_index_refused():
    """An integer-array index may read an element twice: its cotangent would need a scatter-add, which
    dask's item assignment does not do; refused, never a wrong number."""
    from contexts.rules.numpy._util import UnsupportedCase
    with pytest.raises(UnsupportedCase, match="dask"):
        gradient(lambda x: ((AD @ x)[np.array([0, 0, 3])] ** 2).sum(), X0.copy())


def test_integer_dask_input_promoted():
    xi = da.from_array(np.arange(5), chunks=5)
    g = gradient(least_squares(AD, BD), xi)[0]
    np.testing.assert_allclose(g.compute(), 2 * AN.T @ (AN @ np.arange(5.0) - BN), rtol=1e-12)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("x_kind", ["numpy", "dask"])
def test_jacobian_is_lazy_and_right(mode, x_kind):
    from contexts import jacobian
    x = X0.copy() if x_kind == "numpy" else da.from_array(X0.copy(), chunks=5)
    with Computations() as seen:
        J = jacobian(lambda x: np.tanh(AD[:8] @ x) * BD[:8], x, mode=mode)
    assert seen.n == 0, "\n".join(seen.where)
    assert isinstance(J, da.Array) and J.shape == (8, 5)
    expected = ((1 - np.tanh(AN[:8] @ X0) ** 2) * BN[:8])[:, None] * AN[:8]
    np.testing.assert_allclose(J.compute(), expected, rtol=1e-12)


# -- sparsity --------------------------------------------------------------------------------------------

def test_jacobian_sparsity_without_computing():
    """Sparsity over dask constants computes nothing: a dask constant's zeros are not looked for, so its
    pattern is a superset of the numpy constant's (sound), and exact where the structure is the code's."""
    from contexts.sparsity import jacobian_sparsity
    Bn = np.kron(np.eye(2), np.ones((2, 2)))  # block diagonal: structural zeros in the data
    Bd = da.from_array(Bn, chunks=2)
    with Computations() as seen:
        P_mat = jacobian_sparsity(lambda x: np.tanh(Bd @ x), np.ones(4))
        P_elem = jacobian_sparsity(lambda x: np.sin(x) * Bd[0] + x[::-1] ** 2, np.ones(4))
    assert seen.n == 0, "\n".join(seen.where)
    exact = jacobian_sparsity(lambda x: np.tanh(Bn @ x), np.ones(4)).toarray()
    assert (P_mat.toarray() >= exact).all() and exact.sum() == 8  # a superset of the data's pattern
    np.testing.assert_array_equal(P_elem.toarray(), np.eye(4, dtype=bool) | np.eye(4, dtype=bool)[::-1])


def test_sparsity_of_dask_functions():
    from contexts.sparsity import jacobian_sparsity
    P = jacobian_sparsity(lambda x: da.sin(x) + da.sum(x[:2]) * da.exp(x), np.ones(4))
    expected = np.eye(4, dtype=bool)
    expected[:, :2] = True
    np.testing.assert_array_equal(P.toarray(), expected)


def more_shapes(A, b):
    def loss(x):
        u = A @ x
        return ((np.concatenate([u, b * x[0]]) ** 2).sum() + (u[:3]).prod()
                + ((A @ x[:, None]).squeeze() ** 2).sum() + (np.stack([u, b]) ** 3).sum())
    return loss


@pytest.mark.parametrize("x_kind", ["numpy", "dask"])
def test_concatenate_prod_newaxis_stack(x_kind):
    """np.split-free concatenate cotangents, prod without a branch on zeros, `x[:, None]` read back, the
    zero tangent of a dask item of a stacked list: lazy and right in both modes."""
    _lazy_and_right(more_shapes, x_kind)


def in_place(A, b):
    def loss(x):
        r = A @ x
        r += b
        r[0] = x[1] * 3.0
        r[2:4] = r[2:4] * x[0]
        r *= 2.0
        return (r ** 2).sum()
    return loss


@pytest.mark.parametrize("x_kind", ["numpy", "dask"])
def test_item_assignment_into_a_dask_array(x_kind):
    """`r[i] = v` into a dask array: its cotangent at i goes to v, lazily (it was a box of items: a
    TypeError, or worse, before)."""
    _lazy_and_right(in_place, x_kind)


def _lazy_and_right(make, x_kind):
    """make(A, b)'s gradient and jvp over dask A, b: nothing computed before .compute(), then equal to
    central differences of make over numpy copies."""
    x = X0.copy() if x_kind == "numpy" else da.from_array(X0.copy(), chunks=5)
    with Computations() as seen:
        g = gradient(make(AD, BD), x)[0]
        t = jvp(make(AD, BD), (x,), (V,))[1]
    assert seen.n == 0, "\n".join(seen.where)
    np.testing.assert_allclose(g.compute(), fd_gradient(make(AN, BN), X0.copy())[0], rtol=1e-6)
    np.testing.assert_allclose(t.compute(), directional(make(AN, BN), (X0.copy(),), (V,)), rtol=1e-6)


@pytest.mark.parametrize("which", ["hessian", "hvp"])
def test_second_order_right(which):
    """Forward over reverse on a loss over dask constants: equal to the closed form 2 AᵀA + diag(12 x²)."""
    from contexts import hessian, hvp

    def loss(x):
        r = AD @ x - BD
        return (r * r).sum() + (x ** 4).sum()
    H = hessian(loss, X0.copy()) if which == "hessian" else hvp(loss, X0.copy(), V)
    H = H.compute() if isinstance(H, da.Array) else np.asarray(H)
    expected = 2 * AN.T @ AN + np.diag(12 * X0 ** 2)
    np.testing.assert_allclose(H, expected if which == "hessian" else expected @ V, rtol=1e-10)


def iterated(A, b):
    def loss(x):
        u = A[:4] @ x
        a, b_, c, d = u
        rows = list(A[4:7] @ x)
        return a * b_ + c ** 2 * d + sum(r * r for r in rows) + sum((row @ x) ** 2 for row in A[7:9])
    return loss


@pytest.mark.parametrize("x_kind", ["numpy", "dask"])
def test_iterating_a_dask_array(x_kind):
    """Unpacking, list() and for over a dask array: its rows read by index (never dask's __iter__), their
    cotangents gathered back lazily (reverse mode refused dask's __iter__ by name before)."""
    _lazy_and_right(iterated, x_kind)
