"""Gradient descent for least squares on a chunked matrix that never comes to the client.

    python examples/distributed_least_squares.py                  # 20,000 x 20, seconds (the test suite)
    python examples/distributed_least_squares.py --full           # 1,000,000 x 100 (800 MB of float64)
    python examples/distributed_least_squares.py --scheduler tcp://host:8786   # an existing cluster

The loss is plain numpy code, `((A @ x - b) ** 2).sum()`, with A and b dask arrays made on the workers
(`da.random`: the client never holds them). `value_and_gradient` returns the loss and its gradient as lazy
dask arrays, so each step sends one graph - the forward pass and the adjoint together - to the cluster and
gets back 100 numbers. The client's peak memory (its own process: the workers are other processes) is
reported against the matrix's size.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

import numpy as np
import dask.array as da
from distributed import Client, LocalCluster

from contexts import value_and_gradient


def problem(rows: int, cols: int, chunk_rows: int, seed: int = 0):
    """A (rows x cols, scaled so that AᵀA is about the identity), b = A x_true + noise: lazy, chunked."""
    rs = da.random.RandomState(seed)
    A = rs.standard_normal((rows, cols), chunks=(chunk_rows, cols)) / np.sqrt(rows)
    x_true = np.linspace(-1.0, 1.0, cols)
    b = A @ x_true + 1e-3 * rs.standard_normal(rows, chunks=chunk_rows) / np.sqrt(rows)
    return A, b, x_true


def descend(client: Client, A, b, steps: int) -> tuple[np.ndarray, list]:
    rows, cols = A.shape

    def loss(x):
        r = A @ x - b
        return (r * r).sum()

    lr = 0.5 / (1 + np.sqrt(cols / rows)) ** 2  # 1/L for L = 2 * the largest eigenvalue of AᵀA
    x = np.zeros(cols)
    history = []
    for step in range(steps):
        y, (g,) = value_and_gradient(loss, x)  # lazy: nothing computed yet
        y, g = client.compute([y, g], sync=True)  # one graph, forward and adjoint, on the workers
        history.append(float(y))
        if step == 0:  # the gradient against its closed form 2 Aᵀ(Ax - b), computed by dask directly
            closed = client.compute(2 * A.T @ (A @ x - b), sync=True)
            assert np.allclose(g, closed, rtol=1e-10, atol=1e-12), "gradient differs from 2 A^T (A x - b)"
        x = x - lr * g
    return x, history


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--full", action="store_true", help="1,000,000 x 100 instead of 20,000 x 20")
    p.add_argument("--rows", type=int, default=None)
    p.add_argument("--cols", type=int, default=None)
    p.add_argument("--steps", type=int, default=None)
    p.add_argument("--scheduler", default=None, help="address of an existing scheduler (tcp://host:8786)")
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args(argv)
    rows = args.rows or (1_000_000 if args.full else 20_000)
    cols = args.cols or (100 if args.full else 20)
    steps = args.steps or (12 if args.full else 15)
    chunk_rows = max(1, min(rows, 50_000 if args.full else 5_000))

    cluster = None
    if args.scheduler:
        client = Client(args.scheduler)
    else:
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    try:
        A, b, x_true = problem(rows, cols, chunk_rows)
        t0 = time.perf_counter()
        x, history = descend(client, A, b, steps)
        elapsed = time.perf_counter() - t0
    finally:
        client.close()
        if cluster is not None:
            cluster.close()

    matrix_mb = rows * cols * 8 / 2**20
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (2**20 if sys.platform == "darwin" else 2**10)
    error = float(np.max(np.abs(x - x_true)))
    print(f"A: {rows:,} x {cols} float64 in chunks of {chunk_rows:,} rows = {matrix_mb:,.1f} MB on the workers")
    print(f"{steps} gradient steps in {elapsed:.1f} s: loss {history[0]:.4g} -> {history[-1]:.4g}, "
          f"max |x - x_true| = {error:.2e}")
    print(f"client peak memory (max RSS of this process): {peak_mb:,.1f} MB "
          f"({peak_mb / matrix_mb:.2f} x the matrix)")
    assert all(b_ <= a_ * (1 + 1e-12) for a_, b_ in zip(history, history[1:])), "the loss went up"
    assert history[-1] < 1e-2 * history[0], "gradient descent did not converge"
    assert error < 0.05, "x is far from the solution"
    return {"loss": history, "x": x, "peak_mb": peak_mb, "matrix_mb": matrix_mb}


if __name__ == "__main__":
    main()
