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

from contexts import (derivative, gradient, hessian, jacfwd, jacobian, jvp, pullback,  # noqa: E402
                      value_and_gradient, vjp)
from overdub.errors import OverdubError  # noqa: E402
from tests.fd import gradient as fd_gradient  # noqa: E402
from tests.fd import hessian as fd_hessian  # noqa: E402
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
    f = CASES[name]
    J = jacfwd(f, torch.tensor(X))
    assert isinstance(J, torch.Tensor)
    np.testing.assert_allclose(J.numpy(), _fd(f, X), rtol=1e-6, atol=1e-8)
