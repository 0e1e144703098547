"""Array workloads: numpy code where BLAS and ufuncs do the work and AD overhead can be amortised."""

from __future__ import annotations

import numpy as np

from perf.workloads import Workload

SEED = 20190101


def make_logsumexp(xp):
    """log(sum(exp(x))), shifted by max(x) for stability."""

    def logsumexp(x):
        m = xp.max(x)
        return m + xp.log(xp.sum(xp.exp(x - m)))

    return logsumexp


def logsumexp_gradient(x):
    """Hand-written: softmax(x)."""
    e = np.exp(x - x.max())
    e /= e.sum()
    return (e,)


def logsumexp_floor(x):
    """The op-by-op adjoint of `make_logsumexp(np)`: what a zero-overhead reverse mode would run."""
    m = np.max(x)
    t1 = x - m
    t2 = np.exp(t1)
    t3 = np.sum(t2)
    t4 = np.log(t3)
    _ = m + t4
    d_m = d_t4 = 1.0  # y = m + t4
    d_t3 = d_t4 / t3  # t4 = log(t3)
    d_t2 = np.empty(t2.shape)  # t3 = sum(t2)
    d_t2.fill(d_t3)
    d_t1 = d_t2 * t2  # t2 = exp(t1)
    d_x = d_t1  # t1 = x - m
    d_m = d_m - d_t1.sum()
    hit = x == m  # m = max(x): the cotangent shared by the maxima
    d_max = np.zeros(x.shape)
    d_max[hit] = d_m / int(np.count_nonzero(hit))
    return (d_x + d_max,)


def logsumexp_workload(n: int = 100) -> Workload:
    """Table 4's `logsumexp` of a length-n vector."""
    x = np.random.default_rng(SEED).standard_normal(n)
    return Workload(
        name="logsumexp",
        description=f"`m + log(sum(exp(x - m)))`, `m = max(x)`, x of length {n}",
        make=make_logsumexp,
        params=(x,),
        data={},
        hand_gradient=logsumexp_gradient,
        closed_form=lambda x: (np.exp(x) / np.exp(x).sum(),),
        sizes={"n": n},
        floor_gradient=logsumexp_floor,
    )


def make_logistic(xp, x, t):
    """Binary cross-entropy of sigmoid(W x + b) against 0/1 targets t: the paper's `loss(σ.(W*x .+ b))`."""

    def logistic(W, b):
        p = 1 / (1 + xp.exp(-(W @ x + b)))
        return -xp.sum(t * xp.log(p) + (1 - t) * xp.log(1 - p))

    return logistic


def make_logistic_gradient(x, t):
    """Hand-written: dL/dz = p - t; dW is the outer product (dz, x), by broadcasting."""

    def logistic_gradient(W, b):
        z = W @ x
        z += b
        np.negative(z, out=z)
        np.exp(z, out=z)
        z += 1
        dz = np.reciprocal(z, out=z)
        dz -= t
        return dz[:, None] * x, dz

    return logistic_gradient


def make_logistic_floor(x, t):
    """The op-by-op adjoint of `make_logistic(np, x, t)` (x and t are constants)."""

    def logistic_floor(W, b):
        t1 = W @ x
        t2 = t1 + b
        t3 = -t2
        t4 = np.exp(t3)
        t5 = 1 + t4
        p = 1 / t5
        t6 = np.log(p)
        t7 = t * t6
        t8 = 1 - t
        t9 = 1 - p
        t10 = np.log(t9)
        t11 = t8 * t10
        t12 = t7 + t11
        t13 = np.sum(t12)
        _ = -t13
        d_t13 = -1.0
        d_t12 = np.empty(t12.shape)  # t13 = sum(t12)
        d_t12.fill(d_t13)
        d_t7 = d_t11 = d_t12  # t12 = t7 + t11
        d_t10 = d_t11 * t8  # t11 = t8 * t10
        d_t9 = d_t10 / t9  # t10 = log(t9)
        d_p = -d_t9  # t9 = 1 - p
        d_t6 = d_t7 * t  # t7 = t * t6
        d_p = d_p + d_t6 / p  # t6 = log(p)
        d_t5 = -d_p * p / t5  # p = 1 / t5
        d_t4 = d_t5  # t5 = 1 + t4
        d_t3 = d_t4 * t4  # t4 = exp(t3)
        d_t2 = -d_t3  # t3 = -t2
        d_t1 = d_b = d_t2  # t2 = t1 + b
        return d_t1[:, None] * x, d_b  # t1 = W @ x: the outer product by broadcasting

    return logistic_floor


def logistic_regression_workload(n_out: int = 10, n_in: int = 100) -> Workload:
    """Table 4's logistic regression: W n_out x n_in, b n_out, one input x of length n_in."""
    rng = np.random.default_rng(SEED + 1)
    W = rng.standard_normal((n_out, n_in)) / np.sqrt(n_in)
    b = 0.1 * rng.standard_normal(n_out)
    x = rng.standard_normal(n_in)
    t = (rng.random(n_out) < 0.5).astype(float)

    def closed_form(W, b):
        dz = 1 / (1 + np.exp(-(W @ x + b))) - t
        return np.outer(dz, x), dz

    return Workload(
        name="logistic",
        description=f"logistic regression, W {n_out}x{n_in}, b {n_out}, x {n_in}: "
                    "sigmoid + binary cross-entropy against 0/1 targets (the paper's `σ.(W*x .+ b)`)",
        make=make_logistic,
        params=(W, b),
        data={"x": x, "t": t},
        hand_gradient=make_logistic_gradient(x, t),
        closed_form=closed_form,
        sizes={"n_out": n_out, "n_in": n_in},
        floor_gradient=make_logistic_floor(x, t),
    )


def make_mlp(xp, X, Y):
    """2-layer perceptron, tanh hidden layer, mean softmax cross-entropy; one example per column of X."""

    def mlp(W1, b1, W2, b2):
        h = xp.tanh(W1 @ X + b1)
        z = W2 @ h + b2
        m = xp.max(z, axis=0, keepdims=True)
        logp = z - m - xp.log(xp.sum(xp.exp(z - m), axis=0, keepdims=True))
        return -xp.sum(Y * logp) / X.shape[1]

    return mlp


def make_mlp_relu(xp, X, Y):
    """`make_mlp` with a ReLU hidden layer, `maximum(a, 0.0)`, instead of tanh."""

    def mlp_relu(W1, b1, W2, b2):
        h = xp.maximum(W1 @ X + b1, 0.0)
        z = W2 @ h + b2
        m = xp.max(z, axis=0, keepdims=True)
        logp = z - m - xp.log(xp.sum(xp.exp(z - m), axis=0, keepdims=True))
        return -xp.sum(Y * logp) / X.shape[1]

    return mlp_relu


def make_mlp_gradient(X, Y, activation: str = "tanh", n_hidden: int = 0):
    """Hand-written backpropagation of `make_mlp` (tanh) or `make_mlp_relu` (relu, `n_hidden` units);
    at batch 1 the outer products are broadcast multiplies, not GEMMs."""
    batch = X.shape[1]
    outer = (lambda u, v: u * v.T) if batch == 1 else (lambda u, v: u @ v.T)
    colsum = (lambda u: u) if batch == 1 else (lambda u: u.sum(axis=1, keepdims=True))
    relu = activation == "relu"
    # np.maximum against a scalar 0.0 takes numpy's slow path (about 8x slower at 300x64 than against an
    # array of zeros of the same shape), so the hand-written ReLU compares with a preallocated array
    zero = np.zeros((n_hidden, batch)) if relu else None

    def mlp_gradient(W1, b1, W2, b2):
        a = W1 @ X
        a += b1
        if relu:
            mask = a > 0
            h = np.maximum(a, zero, out=a)
        else:
            h = np.tanh(a, out=a)
        z = W2 @ h
        z += b2
        z -= z.max(axis=0, keepdims=True)
        p = np.exp(z, out=z)
        p /= p.sum(axis=0, keepdims=True)
        p -= Y
        dz = p
        dz *= 1 / batch
        dh = W2.T @ dz
        if relu:
            dh *= mask
        else:
            dh *= 1 - h * h
        return outer(dh, X), colsum(dh), outer(dz, h), colsum(dz)

    return mlp_gradient


def make_mlp_floor(X, Y, activation: str = "tanh"):
    """The op-by-op adjoint of `make_mlp(np, X, Y)` (tanh) or `make_mlp_relu(np, X, Y)` (relu) (outer
    products at batch 1 by broadcasting, as the hand-written gradient does them)."""
    batch = X.shape[1]
    outer = (lambda u, v: u * v.T) if batch == 1 else (lambda u, v: u @ v.T)
    relu = activation == "relu"

    def mlp_floor(W1, b1, W2, b2):
        t1 = W1 @ X
        t2 = t1 + b1
        h = np.maximum(t2, 0.0) if relu else np.tanh(t2)
        t3 = W2 @ h
        z = t3 + b2
        m = np.max(z, axis=0, keepdims=True)
        t4 = z - m
        t5 = z - m
        t6 = np.exp(t5)
        t7 = np.sum(t6, axis=0, keepdims=True)
        t8 = np.log(t7)
        logp = t4 - t8
        t9 = Y * logp
        t10 = np.sum(t9)
        t11 = -t10
        _ = t11 / batch
        d_t10 = -(1.0 / batch)  # y = -t10 / batch
        d_t9 = np.empty(t9.shape)  # t10 = sum(t9)
        d_t9.fill(d_t10)
        d_logp = d_t9 * Y  # t9 = Y * logp
        d_t4 = d_logp  # logp = t4 - t8
        d_t8 = -d_logp.sum(axis=0, keepdims=True)
        d_t7 = d_t8 / t7  # t8 = log(t7)
        d_t6 = np.empty(t6.shape)  # t7 = sum(t6, axis=0, keepdims=True)
        d_t6[...] = d_t7
        d_t5 = d_t6 * t6  # t6 = exp(t5)
        d_z = d_t5 + d_t4  # t5 = z - m, t4 = z - m
        d_m = -d_t5.sum(axis=0, keepdims=True) - d_t4.sum(axis=0, keepdims=True)
        hit = z == m  # m = max(z, axis=0): the cotangent shared by each column's maxima
        d_z = d_z + hit * (d_m / hit.sum(axis=0, keepdims=True))
        d_t3 = d_z  # z = t3 + b2
        d_b2 = d_z.sum(axis=1, keepdims=True)
        d_W2 = outer(d_t3, h)  # t3 = W2 @ h
        d_h = W2.T @ d_t3
        if relu:
            # h = maximum(t2, 0.0). Where t2 is exactly 0 numpy's maximum, and each AD its own tie rule,
            # may give 1, 0 or 1/2; irrelevant here: t2 is a sum of products of random floats, never 0
            d_t2 = d_h * (t2 > 0)
        else:
            d_t2 = d_h * (1 - h * h)  # h = tanh(t2)
        d_t1 = d_t2  # t2 = t1 + b1
        d_b1 = d_t2.sum(axis=1, keepdims=True)
        return outer(d_t1, X), d_b1, d_W2, d_b2  # t1 = W1 @ X

    return mlp_floor


def mlp_workload(n_in: int = 784, n_hidden: int = 300, n_out: int = 10, batch: int = 1,
                 activation: str = "tanh") -> Workload:
    """Table 4's 2-layer MNIST MLP (784-300-10) on a batch of `batch` random images; the hidden layer's
    activation is tanh (the paper's) or relu (`maximum(a, 0.0)`, named `mlp{batch}relu`)."""
    if activation not in ("tanh", "relu"):
        raise ValueError(f"activation must be 'tanh' or 'relu', not {activation!r}")
    relu = activation == "relu"
    rng = np.random.default_rng(SEED + 2 + batch)
    W1 = rng.standard_normal((n_hidden, n_in)) / np.sqrt(n_in)
    b1 = 0.1 * rng.standard_normal((n_hidden, 1))
    W2 = rng.standard_normal((n_out, n_hidden)) / np.sqrt(n_hidden)
    b2 = 0.1 * rng.standard_normal((n_out, 1))
    X = rng.random((n_in, batch))
    Y = np.zeros((n_out, batch))
    Y[rng.integers(0, n_out, batch), np.arange(batch)] = 1.0

    def closed_form(W1, b1, W2, b2):
        a = W1 @ X + b1
        h = np.where(a > 0, a, 0.0) if relu else np.tanh(a)
        z = W2 @ h + b2
        p = np.exp(z) / np.exp(z).sum(axis=0)
        dz = (p - Y) / batch
        dh = np.where(a > 0, W2.T @ dz, 0.0) if relu else (W2.T @ dz) * (1 - h ** 2)
        return (np.einsum("ib,jb->ij", dh, X), dh.sum(axis=1, keepdims=True),
                np.einsum("ib,jb->ij", dz, h), dz.sum(axis=1, keepdims=True))

    return Workload(
        name=f"mlp{batch}" + ("relu" if relu else ""),
        description=f"2-layer MLP {n_in}-{n_hidden}-{n_out}, "
                    + ("ReLU (`maximum(a, 0.0)`)" if relu else "tanh")
                    + f", softmax cross-entropy, batch {batch}",
        make=make_mlp_relu if relu else make_mlp,
        params=(W1, b1, W2, b2),
        data={"X": X, "Y": Y},
        hand_gradient=make_mlp_gradient(X, Y, activation, n_hidden),
        closed_form=closed_form,
        sizes={"n_in": n_in, "n_hidden": n_hidden, "n_out": n_out, "batch": batch},
        floor_gradient=make_mlp_floor(X, Y, activation),
    )
