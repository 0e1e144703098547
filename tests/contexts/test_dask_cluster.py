"""Gradients of losses over chunked dask arrays on a `dask.distributed` cluster: the gradient is a lazy dask
array (the scheduler sees no graph before `.compute()`), its forward and adjoint graphs run together on
the cluster's workers as one graph, through the client (no local scheduler runs), and it equals the closed
form. In-process workers for speed; one run with worker processes."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
from dask.callbacks import Callback  # noqa: E402
from distributed.diagnostics.plugin import SchedulerPlugin  # noqa: E402

from contexts import gradient, jvp  # noqa: E402


class Graphs(SchedulerPlugin):
    """Counts the graphs the scheduler is given."""

    def __init__(self):
        self.n = 0

    def update_graph(self, scheduler, **kwargs):
        self.n += 1


class LocalComputations(Callback):
    def __init__(self):
        super().__init__()
        self.n = 0

    def _start(self, dsk):
        self.n += 1


def _data(rows=400, cols=8, chunk=100):
    rng = np.random.default_rng(3)
    An, bn, x0 = rng.normal(size=(rows, cols)), rng.normal(size=rows), rng.normal(size=cols)
    return An, bn, x0, da.from_array(An, chunks=(chunk, cols)), da.from_array(bn, chunks=chunk)


def _check_on(cluster):
    An, bn, x0, A, b = _data()
    graphs = Graphs()
    cluster.scheduler.add_plugin(graphs)
    with distributed.Client(cluster) as client, LocalComputations() as local:
        def loss(x):
            r = A @ x - b
            return (r * r).sum()

        g = gradient(loss, x0.copy())[0]
        t = jvp(loss, (x0.copy(),), (np.ones_like(x0),))[1]
        assert graphs.n == 0, "a graph reached the scheduler before .compute()"
        assert isinstance(g, da.Array) and isinstance(t, da.Array)
        got_g, got_t = client.compute([g, t], sync=True)  # both, one graph, on the workers
        assert graphs.n == 1
        assert local.n == 0, "a local scheduler computed instead of the cluster"
        expected = 2 * An.T @ (An @ x0 - bn)
        np.testing.assert_allclose(got_g, expected, rtol=1e-12)
        np.testing.assert_allclose(got_t, expected.sum(), rtol=1e-12)
        # the gradient in the matrix itself stays chunked like it, on the cluster
        gA = gradient(lambda A_: ((A_ @ x0 - b) ** 2).sum(), A)[0]
        assert graphs.n == 1 and gA.chunks == A.chunks
        np.testing.assert_allclose(gA.compute(), 2 * np.outer(An @ x0 - bn, x0), rtol=1e-12)
        assert local.n == 0


def test_in_process_cluster():
    with distributed.LocalCluster(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None) as c:
        _check_on(c)


def test_worker_processes():
    with distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1, dashboard_address=None) as c:
        _check_on(c)
