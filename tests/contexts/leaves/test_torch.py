"""PyTorch tensors are leaves (`contexts/rules/torch.py`): code written with torch (its functions, the
tensor's methods and operators, torch.nn.functional) is differentiated by numpy's rules through an explicit
map of torch's names and arguments onto numpy's, each derivative checked against central differences of
the same function on the values; derivatives with respect to a tensor are tensors of its dtype. What the
map does not hold, torch's own autograd, in-place changes and keywords it does not translate are refused
by name, never computed."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = pytest.importorskip("torch.nn.functional")

from contexts import (derivative, gradient, hessian, hvp, jacfwd, jacobian, jvp, pullback,  # noqa: E402
                      value_and_gradient, vjp)
from overdub.errors import OverdubError  # noqa: E402
from tests.fd import gradient as fd_gradient  # noqa: E402
from tests.fd import jacobian as fd_jacobian  # noqa: E402

RNG = np.random.default_rng(51)
AN = RNG.normal(size=(4, 3))
A = torch.tensor(AN)
B = torch.tensor(RNG.normal(size=(3, 3)) + 3 * np.eye(3))
X = RNG.uniform(0.5, 1.5, size=3)
W = torch.arange(3.0, dtype=torch.float64)


def loop(x):
    s = torch.zeros((), dtype=x.dtype)
    for i in range(3):
        s = s + x[i] * s + torch.sin(x[i])
    return s


CASES = {
    "elementwise": lambda x: torch.sum(torch.exp(x) * torch.log(x) + torch.tanh(x) / torch.sqrt(x)),
    "elementwise_methods": lambda x: (x.exp() * x.log1p() + x.sigmoid() + x.square().reciprocal()
                                      + x.abs().sqrt() + x.erf() + x.atan() + x.neg().expm1()).sum(),
    "operators": lambda x: ((x * 2.0 - 1.0) / (x + 3.0) ** 1.5).sum() + (1.0 - x).prod() + (2.0 / x).sum()
                           + (-x).sum() + (3 - x * 2).sum() + (x ** x).sum() + (2.0 ** x).sum(),
    "numpy_operands": lambda x: (x * np.array([1.0, 2.0, 3.0])).sum() + (x - np.float64(0.5)).prod()
                                + (x / np.arange(1.0, 4.0)).sum(),
    "matmul": lambda x: torch.sum((A @ x) ** 2) + torch.dot(torch.mv(A, x), A @ x) + torch.matmul(x, B @ x)
                        + (torch.mm(torch.outer(x, x), B)).sum() + torch.inner(x, x),
    "reductions": lambda x: (x.sum() + x.mean() + torch.prod(x) + x.max() + torch.min(x) + torch.amax(x)
                             + torch.logsumexp(x, dim=0)),
    "std_var_defaults": lambda x: torch.std(x) + x.var() + torch.std(x, unbiased=False) ** 2
                                  + torch.var(x, correction=0) + torch.std(torch.outer(x, x), dim=1).sum(),
    "dim_keepdim": lambda x: (torch.sum(torch.outer(x, x), dim=0) ** 2).sum()
                             + (torch.outer(x, x).mean(dim=1, keepdim=True) * A[:3, :]).sum()
                             + torch.amax(torch.outer(x, x ** 2), dim=1).sum() + torch.cumsum(x ** 2, dim=0).sum()
                             + torch.outer(x, x).sum((0, 1)),
    "shapes": lambda x: (torch.reshape(torch.outer(x, x), (9,))[::2].sum() + (torch.outer(x, x ** 2).T @ x).sum()
                         + x.view(3, 1).permute(1, 0).squeeze().dot(x) + x.unsqueeze(0).expand(2, 3).sum()
                         + torch.transpose(torch.outer(x, W), 0, 1)[1].sum() + torch.outer(x, x).flatten()[4]
                         + torch.outer(x, x).t().reshape(-1)[1] + torch.flip(x, dims=(0,))[0]
                         + torch.roll(x, 1)[0] * x[1] + torch.tril(torch.outer(x, x)).sum() + torch.trace(B * x)),
    "index": lambda x: x[0] * x[2] + x[1:].sum() + x[-1] ** 2 + torch.outer(x, x)[1, :2].sum()
                       + torch.outer(x, x)[:, 0].prod(),
    "advanced_index": lambda x: (x[torch.tensor([0, 0, 2])] ** 2).sum() + x[torch.argsort(x)][0]
                                + x[x > 1.0].sum() + x[[1, 2]].prod(),
    "where_clamp_maximum": lambda x: (torch.where(x > 1.0, x ** 2, -x).sum() + torch.maximum(x, W).sum()
                                      + torch.clamp(x, 0.7, 1.2).sum() + torch.clamp(x, min=0.8).sum()
                                      + x.clip(max=1.1).sum() + torch.minimum(x, torch.ones(3, dtype=x.dtype)).sum()),
    "cat_stack": lambda x: ((torch.cat([x, x ** 2]) ** 2).sum() + torch.stack([x, 2 * x]).sum(dim=0).prod()
                            + torch.stack([x, x ** 3], dim=1)[:, 1].sum() + torch.cat((x[:1], x), dim=0)[0]),
    "linalg": lambda x: (torch.sum(torch.linalg.solve(B, x) ** 2) + torch.linalg.det(B * x[0])
                         + torch.sum(torch.linalg.inv(B + torch.diag(x))) + torch.linalg.norm(A @ x)
                         + torch.linalg.vector_norm(x, ord=1) + torch.linalg.norm(torch.outer(x, x))
                         + torch.sum(torch.linalg.cholesky(B @ B.T + torch.diag(x)))),
    "nn_functional": lambda x: ((F.softmax(torch.outer(x, x), dim=1) * W).sum()
                                + (F.log_softmax(torch.outer(x, x), dim=0) * W).sum()
                                + F.relu(x - 1.0).sum() + torch.sigmoid(x).sum() + F.softplus(x).sum()
                                + torch.tanh(x).sum() + torch.softmax(x, 0)[0] + x.log_softmax(dim=0)[1]),
    "einsum": lambda x: torch.einsum("ij,j->i", A, x).sum() ** 2 + torch.einsum("i,i->", x, x),
    "python_loop": loop,
    "conversions": lambda x: float(x[0]) * 2.0 + x[1].item() * x.sum() + sum(v * v for v in x)
                             + sum(x.tolist()) + x.numpy().sum() + torch.as_tensor(x.numpy() * 2.0).sum(),
    "casts": lambda x: (x.double() * x).sum() + x.to(torch.float64).sum() + x.clone().sum() + x.contiguous()[0],
}


def _fd(f, x):
    return fd_gradient(lambda v: float(f(torch.tensor(v))), x)[0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_against_differences(name):
    f = CASES[name]
    g = gradient(f, torch.tensor(X))[0]
    assert isinstance(g, torch.Tensor) and g.dtype == torch.float64
    np.testing.assert_allclose(g.numpy(), _fd(f, X), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(CASES))
def test_jacfwd_against_differences(name):
    """Forward mode's entry points take torch code's derivatives by reverse mode (`forward/by_reverse.py`)."""
    f = CASES[name]
    J = jacfwd(f, torch.tensor(X))
    assert isinstance(J, torch.Tensor) and J.dtype == torch.float64
    np.testing.assert_allclose(J.numpy(), _fd(f, X), rtol=1e-6, atol=1e-8)


def vec(w):
    return torch.stack([torch.sin(w[0]) * w[1], w[2] ** 2, torch.sum(A @ w)])


def test_the_reverse_entry_points():
    x = torch.tensor(X)
    J_fd = fd_jacobian(lambda v: vec(torch.tensor(v)).numpy(), X)
    f = CASES["nn_functional"]
    y, (g,) = value_and_gradient(f, x)
    assert isinstance(y, torch.Tensor) and float(y) == pytest.approx(float(f(x)))
    np.testing.assert_allclose(g.numpy(), _fd(f, X), rtol=1e-6, atol=1e-8)
    J = jacobian(vec, x)
    assert isinstance(J, torch.Tensor) and J.dtype == torch.float64
    np.testing.assert_allclose(J.numpy(), J_fd, rtol=1e-6, atol=1e-8)
    c = np.array([1.0, 2.0, -0.5])
    _, (g,) = vjp(vec, (x,), torch.tensor(c))
    assert isinstance(g, torch.Tensor)
    np.testing.assert_allclose(g.numpy(), c @ J_fd, rtol=1e-6, atol=1e-8)
    _, back = pullback(vec, x)
    np.testing.assert_allclose(back(torch.tensor(c))[0].numpy(), c @ J_fd, rtol=1e-6, atol=1e-8)
    _, back = pullback(vec, x)
    np.testing.assert_allclose(back(c)[0].numpy(), c @ J_fd, rtol=1e-6, atol=1e-8)  # (a numpy cotangent too)


def test_several_tensor_arguments_and_a_float():
    def f(w, b, s):
        return (torch.tanh(A @ w + b) * s).sum() + s ** 2
    w, b, s = torch.tensor(X), torch.tensor(AN[:, 0].copy()), 0.7
    gw, gb, gs = gradient(f, w, b, s)
    assert isinstance(gw, torch.Tensor) and isinstance(gb, torch.Tensor) and isinstance(gs, float)
    np.testing.assert_allclose(gw.numpy(), fd_gradient(lambda v: float(f(torch.tensor(v), b, s)), X)[0], rtol=1e-6)
    np.testing.assert_allclose(gb.numpy(), fd_gradient(lambda v: float(f(w, torch.tensor(v), s)), AN[:, 0])[0],
                               rtol=1e-6)
    assert gs == pytest.approx(fd_gradient(lambda v: float(f(w, b, v[0])), np.array([s]))[0][0], rel=1e-6)


@pytest.mark.parametrize("name", ["elementwise", "nn_functional", "linalg", "std_var_defaults", "matmul"])
def test_single_precision_kept(name):
    f = CASES[name]
    x = torch.tensor(X, dtype=torch.float32)
    g = gradient(lambda v: f(v.double()) if name in ("matmul", "linalg") else f(v), x)[0]
    assert isinstance(g, torch.Tensor) and g.dtype == torch.float32
    np.testing.assert_allclose(g.numpy(), _fd(f, X), rtol=2e-3, atol=2e-4)


def test_float32_all_the_way():
    A32, x = A.float(), torch.tensor(X, dtype=torch.float32)
    f = lambda v: (F.softmax(A32 @ v, dim=0) * torch.arange(4.0)).sum() + v.std()  # noqa: E731
    g = gradient(f, x)[0]
    assert g.dtype == torch.float32
    np.testing.assert_allclose(g.numpy(), fd_gradient(lambda v: float(f(torch.tensor(v, dtype=torch.float64).float())),
                                                      X, )[0], rtol=5e-3, atol=5e-3)


def test_integer_input_differentiated_as_float():
    g = gradient(lambda v: (v * v).sum(), torch.tensor([1, 2, 3]))[0]
    assert isinstance(g, torch.Tensor) and g.tolist() == [2.0, 4.0, 6.0]


def test_input_untouched():
    x = torch.tensor(X)
    before = x.clone()
    gradient(CASES["shapes"], x)
    assert torch.equal(x, before)


# -- a realistic case: a small MLP with softmax cross-entropy --------------------------------------------

def mlp_loss(W1, b1, W2, b2, inputs, labels):
    h = F.relu(inputs @ W1 + b1)
    logits = h @ W2 + b2
    logp = F.log_softmax(logits, dim=1)
    return -logp[torch.arange(len(labels)), labels].mean() + 1e-3 * (W1 ** 2).sum()


def test_mlp_gradient_with_respect_to_weights():
    rng = np.random.default_rng(7)
    inputs = torch.tensor(rng.normal(size=(8, 5)))
    labels = torch.tensor(rng.integers(0, 3, size=8))
    params = [rng.normal(size=(5, 6)) * 0.5, rng.normal(size=6) * 0.1, rng.normal(size=(6, 3)) * 0.5,
              rng.normal(size=3) * 0.1]
    tensors = [torch.tensor(p) for p in params]
    grads = gradient(lambda *ps: mlp_loss(*ps, inputs, labels), *tensors)
    for i, (g, p) in enumerate(zip(grads, params)):
        def at(v, i=i):
            ps = [torch.tensor(q) for q in params]
            ps[i] = torch.tensor(v)
            return float(mlp_loss(*ps, inputs, labels))
        assert isinstance(g, torch.Tensor) and g.shape == p.shape
        np.testing.assert_allclose(g.numpy(), fd_gradient(at, p)[0], rtol=1e-6, atol=1e-8)


def test_mlp_matches_torch_autograd():
    """Not a check of correctness (differences are that), a check that the two agree on a real model."""
    rng = np.random.default_rng(8)
    inputs, labels = torch.tensor(rng.normal(size=(8, 5))), torch.tensor(rng.integers(0, 3, size=8))
    params = [torch.tensor(rng.normal(size=s)) for s in ((5, 6), (6,), (6, 3), (3,))]
    ours = gradient(lambda *ps: mlp_loss(*ps, inputs, labels), *params)
    leaves = [p.clone().requires_grad_(True) for p in params]
    mlp_loss(*leaves, inputs, labels).backward()
    for g, p in zip(ours, leaves):
        np.testing.assert_allclose(g.numpy(), p.grad.numpy(), rtol=1e-10, atol=1e-12)


# -- refused by name, never computed -------------------------------------------------------------------------

def _set(x):
    y = x.clone()
    y[0] = x[1] ** 2
    return y.sum()


def _add_(x):
    y = x * 1.0
    y.add_(1.0)
    return (y * x).sum()


def _iadd(x):
    y = x * 2.0
    y += x
    return y.sum()


REFUSED = {
    "setitem": (_set, "changed in place"),
    "add_": (_add_, "changed in place"),
    "iadd": (_iadd, "changed in place"),
    "out": (lambda x: torch.sin(x, out=torch.empty(3, dtype=x.dtype)).sum(), "out="),
    "max_dim": (lambda x: torch.max(torch.outer(x, x), dim=1).values.sum(), "max"),
    "max_elementwise": (lambda x: torch.max(x, x * 0.5).sum(), "a dim or a second tensor"),
    "max_method_dim": (lambda x: torch.outer(x, x).max(1)[0].sum(), "a dim or a second tensor"),
    "repeat": (lambda x: (x.repeat(2) * torch.arange(6.0, dtype=x.dtype)).sum(), "outside overdub's map"),
    "sort": (lambda x: torch.sort(x).values[0], "sort"),
    "unmapped_keyword": (lambda x: torch.sum(x, dim=0, dtype=torch.float32), "dtype="),
    "add_alpha": (lambda x: torch.add(x, x, alpha=2.0).sum(), "alpha="),
    "softmax_no_dim": (lambda x: F.softmax(torch.outer(x, x))[0, 0], "implicit dim"),
    "softplus_beta": (lambda x: F.softplus(x, beta=2.0).sum(), "beta="),
    "detach": (lambda x: (x.detach() * x).sum(), "autograd"),
    "autograd": (lambda x: torch.autograd.grad((x ** 2).sum(), x)[0].sum(), "grad"),
    "func_grad": (lambda x: torch.func.grad(lambda v: (v ** 2).sum())(x).sum(), "grad"),
    "compile": (lambda x: torch.compile(lambda v: (v ** 2).sum())(x), "compile"),
    "norm_method": (lambda x: x.norm(), "norm"),
    "cholesky_upper": (lambda x: torch.linalg.cholesky(B @ B.T + torch.diag(x), upper=True).sum(), "upper="),
    # constructors and casts whose values may be differentiated ones: never taken for constants
    "data": (lambda x: (x.data * x).sum(), ".data"),
    "type_cast": (lambda x: x.type(torch.float64).sum(), "outside overdub's map"),
    "new_tensor": (lambda x: x.new_tensor(x.numpy() * 2).sum(), "outside overdub's map"),
    "full": (lambda x: torch.full((3,), x[0]).sum(), "full"),
    "linspace": (lambda x: torch.linspace(x[0], x[1], 3).sum(), "linspace"),
    "arange": (lambda x: torch.arange(float(x[0]), float(x[0]) + 3.0).sum(), "arange"),
    "round_decimals": (lambda x: torch.round(x, decimals=12).sum(), "round"),
    "solve_batched_vectors": (lambda x: torch.linalg.solve(torch.stack([B, B]), torch.stack([x, x])).sum(),
                              "batch of vectors"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_in_reverse_mode(name):
    f, words = REFUSED[name]
    with pytest.raises(OverdubError) as e:
        gradient(f, torch.tensor(X))
    assert words in str(e.value)


def test_requires_grad_refused():
    x = torch.tensor(X, requires_grad=True)
    with pytest.raises(OverdubError, match="requires_grad"):
        gradient(lambda v: (v * v).sum(), x)
    with pytest.raises(OverdubError, match="requires_grad"):
        gradient(lambda v: (v * x).sum(), torch.tensor(X))


def test_complex_refused():
    with pytest.raises(OverdubError):
        gradient(lambda v: torch.abs(v * (1 + 1j)).sum(), torch.tensor(X))


# -- forward mode's entry points: the same derivatives by reverse mode; second order refused -----------------

def test_forward_entry_points_by_reverse_mode():
    x = torch.tensor(X)
    J_fd = fd_jacobian(lambda v: vec(torch.tensor(v)).numpy(), X)
    for J in (jacfwd(vec, x), jacobian(vec, x, mode="forward")):
        assert isinstance(J, torch.Tensor)
        np.testing.assert_allclose(J.numpy(), J_fd, rtol=1e-6, atol=1e-8)
    t = np.array([0.3, -1.0, 2.0])
    y, dy = jvp(vec, (x,), (torch.tensor(t),))
    assert isinstance(y, torch.Tensor) and isinstance(dy, torch.Tensor)
    np.testing.assert_allclose(dy.numpy(), J_fd @ t, rtol=1e-6, atol=1e-8)
    d = derivative(lambda s: vec(x * s), 1.5)  # (tensors made inside from a perturbed float)
    assert isinstance(d, torch.Tensor)
    d_fd = fd_jacobian(lambda v: vec(torch.tensor(X) * v[0]).numpy(), np.array([1.5]))[:, 0]
    np.testing.assert_allclose(d.numpy(), d_fd, rtol=1e-6, atol=1e-8)
    d = derivative(lambda s: float((x * s).std()), 1.5)  # (torch's std: ddof=1)
    assert isinstance(d, float) and d == pytest.approx(float(np.std(X, ddof=1)), rel=1e-9)


def test_jacfwd_keeps_single_precision():
    J = jacfwd(CASES["nn_functional"], torch.tensor(X, dtype=torch.float32))
    assert J.dtype == torch.float32
    np.testing.assert_allclose(J.numpy(), _fd(CASES["nn_functional"], X), rtol=2e-3, atol=2e-4)


SECOND_ORDER = {
    "hessian": lambda: hessian(CASES["elementwise"], torch.tensor(X)),
    "hessian_of_a_float": lambda: hessian(lambda s: (torch.tensor(X) * s ** 2).std(), 1.5),
    "hvp": lambda: hvp(CASES["elementwise"], torch.tensor(X), torch.tensor(X)),
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_second_order_refused(name):
    with pytest.raises(OverdubError, match="does not differentiate torch tensors"):
        SECOND_ORDER[name]()


def test_sparsity_refuses_torch():
    """A tracer standing for a tensor would answer with numpy's methods (`t.transpose(0, 1)`): refused."""
    from contexts.sparsity import hessian_sparsity, jacobian_sparsity
    f = lambda w: torch.stack([torch.sin(w[0]) * w[1], w[2] ** 2])  # noqa: E731
    with pytest.raises(OverdubError, match="sparsity detection does not differentiate torch tensors"):
        jacobian_sparsity(f, torch.tensor(X))
    with pytest.raises(OverdubError, match="sparsity detection does not differentiate torch tensors"):
        hessian_sparsity(lambda w: (w ** 3).sum(), torch.tensor(X))
    with pytest.raises(OverdubError, match="sparsity detection does not differentiate torch tensors"):
        jacobian_sparsity(lambda w: torch.as_tensor(w).transpose(0, 0), X)  # (a tensor made of tracers)
    P = jacobian_sparsity(lambda w: w * torch.tensor(X), X)  # (a constant tensor beside a numpy input's tracer)
    assert P.toarray().tolist() == np.eye(3, dtype=bool).tolist()
