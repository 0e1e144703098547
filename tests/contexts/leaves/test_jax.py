"""JAX's arrays are leaves (`contexts/rules/jax.py`): code written on them (jax.numpy, the array API's
`array_namespace(x)`, the array's methods and operators) is differentiated by numpy's rules in every mode,
each derivative checked against central differences of the same function on the values; derivatives with
respect to a JAX array, or of one, are JAX arrays of its dtype. JAX's own transformations and functions
whose arguments mean other things than numpy's are refused by name, never computed."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax.config.update("jax_enable_x64", True)  # (float64 values, so that differences check to 1e-7)

from array_api_compat import array_namespace  # noqa: E402

from contexts import (derivative, gradient, hessian, jacfwd, jacobian, jvp, pullback,  # noqa: E402
                      value_and_gradient, vjp)
from overdub.errors import OverdubError  # noqa: E402
from tests.fd import gradient as fd_gradient  # noqa: E402
from tests.fd import hessian as fd_hessian  # noqa: E402
from tests.fd import jacobian as fd_jacobian  # noqa: E402

RNG = np.random.default_rng(50)
AN = RNG.normal(size=(4, 3))
A = jnp.asarray(AN)
B = jnp.asarray(RNG.normal(size=(3, 3)) + 3 * np.eye(3))
X = RNG.uniform(0.5, 1.5, size=3)


def xp_loss(x):
    """Array-API code: what a library written against the standard runs on any array."""
    xp = array_namespace(x)
    z = xp.matmul(A, x)
    return xp.sum(xp.log(1.0 + xp.exp(-z))) + 0.1 * xp.sum(x * x)


def loop(x):
    s = jnp.zeros(())
    for i in range(3):
        s = s + x[i] * s + jnp.sin(x[i])
    return s


CASES = {
    "elementwise": lambda x: jnp.sum(jnp.exp(x) * jnp.log(x) + jnp.tanh(x) / jnp.sqrt(x)),
    "array_api": xp_loss,
    "operators": lambda x: ((x * 2.0 - 1.0) / (x + 3.0) ** 1.5).sum() + (1.0 - x).prod() + (2.0 / x).sum(),
    "matmul": lambda x: jnp.sum((A @ x) ** 2) + jnp.dot(A, x).dot(A @ x),
    "methods": lambda x: (x * x).mean() + x.max() + x.min() + x.std() + x.reshape(3, 1).T.sum() ** 2,
    "shapes": lambda x: jnp.reshape(jnp.outer(x, x), (9,))[::2].sum() + (jnp.outer(x, x ** 2).T @ x).sum(),
    "index": lambda x: x[0] * x[2] + x[1:].sum() + x[-1] ** 2,
    "advanced_index": lambda x: (x[jnp.array([0, 0, 2])] ** 2).sum() + x[jnp.argsort(x)][0],
    "where_maximum_clip": lambda x: (jnp.where(x > 1.0, x ** 2, -x).sum() + jnp.maximum(x, 1.0).sum()
                                     + jnp.clip(x, 0.7, 1.2).sum() + jnp.clip(x, min=0.8).sum()),
    "concatenate_stack": lambda x: ((jnp.concatenate([x, x ** 2]) ** 2).sum()
                                    + jnp.stack([x, 2 * x]).sum(axis=0).prod()),
    "axis": lambda x: jnp.sum(jnp.sum(jnp.outer(x, x), axis=0) ** 2) + jnp.cumsum(x ** 2).sum(),
    "linalg": lambda x: (jnp.sum(jnp.linalg.solve(B, x) ** 2) + jnp.linalg.det(B * x[0])
                         + jnp.sum(jnp.linalg.inv(B + jnp.diag(x))) + jnp.linalg.norm(A @ x)),
    "reductions": lambda x: jnp.std(x) + jnp.var(x ** 2) + jax.nn.logsumexp(x),
    "sort_einsum": lambda x: (jnp.sort(x) * jnp.arange(3.0)).sum() + jnp.einsum("ij,j->i", A, x).sum() ** 2,
    "numpy_operands": lambda x: (AN @ x).sum() + (x * AN[0]).sum() + jnp.sum(np.multiply(AN[0], x) * x),
    "python_loop": loop,
    "conversions": lambda x: float(x[0]) * 2.0 + x[1].item() * x.sum() + sum(v * v for v in x),
    "special": lambda x: jax.scipy.special.erf(x).sum() + jax.nn.sigmoid(x).sum() + jnp.power(x, x).sum(),
    "decompositions": lambda x: (jnp.sum(jnp.linalg.eigvalsh(B @ B.T + jnp.diag(x)))
                                 + jnp.linalg.slogdet(B @ B.T + jnp.diag(x))[1]
                                 + jnp.sum(jnp.linalg.cholesky(B @ B.T + jnp.diag(x)))
                                 + jnp.sum(jnp.linalg.qr(B + jnp.diag(x))[1] ** 2)),
    "fft": lambda x: jnp.sum(jnp.abs(jnp.fft.fft(x)) ** 2) + jnp.sum(jnp.abs(jnp.fft.rfft(x * x))),
    "rearrangements": lambda x: (jnp.sum(jnp.tile(x, 2) * jnp.arange(6.0)) + jnp.sum(jnp.roll(x, 1) * x)
                                 + jnp.sum(jnp.flip(x) * jnp.arange(1.0, 4.0)) + jnp.sum(jnp.vstack([x, x ** 2]) ** 2)
                                 + jnp.sum(jnp.broadcast_to(x, (2, 3)) * jnp.arange(6.0).reshape(2, 3))
                                 + jnp.sum(jnp.split(jnp.repeat(x, 2), 2)[0] ** 2)),
    "nan_reductions": lambda x: jnp.nansum(x ** 2) + jnp.nanmean(x) + jnp.nanmax(x) + jnp.cumprod(x).sum(),
}


def _fd(f, x):
    return fd_gradient(lambda v: float(f(jnp.asarray(v))), x)[0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_against_differences(name):
    f = CASES[name]
    g = gradient(f, jnp.asarray(X))[0]
    assert isinstance(g, jax.Array) and g.dtype == jnp.float64
    np.testing.assert_allclose(np.asarray(g), _fd(f, X), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(CASES))
def test_jacfwd_against_differences(name):
    f = CASES[name]
    J = jacfwd(f, jnp.asarray(X))
    assert isinstance(J, jax.Array)
    np.testing.assert_allclose(np.asarray(J), _fd(f, X), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", ["elementwise", "array_api", "matmul", "linalg", "python_loop"])
def test_hessian_against_differences(name):
    f = CASES[name]
    H = hessian(f, jnp.asarray(X))
    assert isinstance(H, jax.Array)
    np.testing.assert_allclose(np.asarray(H), fd_hessian(lambda v: float(f(jnp.asarray(v))), X), rtol=1e-4,
                               atol=1e-5)


def vec(w):
    return jnp.stack([jnp.sin(w[0]) * w[1], w[2] ** 2, jnp.sum(A @ w)])


def test_the_other_entry_points():
    x = jnp.asarray(X)
    J_fd = fd_jacobian(lambda v: np.asarray(vec(jnp.asarray(v))), X)
    y, (g,) = value_and_gradient(xp_loss, x)
    assert isinstance(y, jax.Array) and float(y) == pytest.approx(float(xp_loss(x)))
    np.testing.assert_allclose(np.asarray(g), _fd(xp_loss, X), rtol=1e-6, atol=1e-8)
    for J in (jacobian(vec, x), jacfwd(vec, x)):
        assert isinstance(J, jax.Array)
        np.testing.assert_allclose(np.asarray(J), J_fd, rtol=1e-6, atol=1e-8)
    t = np.array([0.3, -1.0, 2.0])
    y, dy = jvp(vec, (x,), (jnp.asarray(t),))
    assert isinstance(dy, jax.Array)
    np.testing.assert_allclose(np.asarray(dy), J_fd @ t, rtol=1e-6, atol=1e-8)
    c = np.array([1.0, 2.0, -0.5])
    _, (g,) = vjp(vec, (x,), jnp.asarray(c))
    assert isinstance(g, jax.Array)
    np.testing.assert_allclose(np.asarray(g), c @ J_fd, rtol=1e-6, atol=1e-8)
    _, back = pullback(vec, x)
    np.testing.assert_allclose(np.asarray(back(jnp.asarray(c))[0]), c @ J_fd, rtol=1e-6, atol=1e-8)
    d = derivative(lambda s: vec(x * s), 1.5)
    assert isinstance(d, jax.Array)
    np.testing.assert_allclose(np.asarray(d), J_fd_at(1.5) @ X, rtol=1e-6, atol=1e-8)


def J_fd_at(s):
    return fd_jacobian(lambda v: np.asarray(vec(jnp.asarray(v))), X * s)


def test_single_precision_kept():
    x = jnp.asarray(X, dtype=jnp.float32)
    g = gradient(xp_loss, x)[0]
    assert g.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(g), _fd(xp_loss, X), rtol=1e-4, atol=1e-5)


def test_sparsity_of_jax_code():
    from contexts.sparsity import jacobian_sparsity
    P = jacobian_sparsity(lambda w: jnp.stack([jnp.sin(w[0]) * w[1], w[2] ** 2]), jnp.asarray(X)).toarray()
    assert P.tolist() == [[True, True, False], [False, False, True]]


def test_input_untouched():
    x = jnp.asarray(X)
    before = np.asarray(x).copy()
    gradient(CASES["methods"], x)
    jacfwd(CASES["methods"], x)
    np.testing.assert_array_equal(np.asarray(x), before)


# -- refused by name, never computed --------------------------------------------------------------------

@jax.jit
def _jitted(x):
    return jnp.sum(jnp.sin(x) * x)


REFUSED = {
    "jit": lambda x: _jitted(x) + x.sum(),
    "vmap": lambda x: jax.vmap(lambda v: v * jnp.sin(v))(x).sum(),
    "fori_loop": lambda x: jax.lax.fori_loop(0, 3, lambda i, s: s * x[0] + 1.0, 0.0) + x.sum(),
    "scan": lambda x: jax.lax.scan(lambda c, v: (c * v, c), 1.0, x)[0],
    "jax_grad": lambda x: jax.grad(lambda v: jnp.sum(v ** 3))(x).sum(),
    "at_set": lambda x: x.at[0].set(x[1] ** 2).sum(),
    # arguments meaning what numpy's rule would not: softmax's axis=-1 (scipy's is None), JAX's keywords
    "softmax_axis": lambda x: (jax.nn.softmax(jnp.outer(x, x)) * jnp.arange(3.0)).sum(),
    "log_softmax_axis": lambda x: (jax.nn.log_softmax(jnp.outer(x, x)) * jnp.arange(3.0)).sum(),
    "promote_integers": lambda x: jnp.sum(x, promote_integers=False),
    "eigh_symmetrizes": lambda x: jnp.linalg.eigh(jnp.outer(x, x ** 2))[0].sum(),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
@pytest.mark.parametrize("mode", ["gradient", "jacfwd"])
def test_refused(name, mode):
    f = REFUSED[name]
    with pytest.raises(OverdubError):
        (gradient if mode == "gradient" else jacfwd)(f, jnp.asarray(X))


def test_a_keyword_of_jax_own_refused_or_right():
    """`jnp.sort(x, descending=True)`: refused where numpy's sort has no such keyword (its rule would sort
    the other way), right where it has (numpy's rule then takes it)."""
    f = lambda x: (jnp.sort(x, descending=True) * jnp.arange(3.0)).sum()  # noqa: E731
    try:
        g = gradient(f, jnp.asarray(X))[0]
    except OverdubError:
        return
    np.testing.assert_allclose(np.asarray(g), _fd(f, X), rtol=1e-6, atol=1e-8)
