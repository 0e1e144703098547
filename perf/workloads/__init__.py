"""The benchmark workloads: the Zygote paper's Table 4 ("Don't Unroll Adjoint"), in Python.

Each workload is written once, against an array namespace `xp` (`math`/`numpy` for the primal and
overdub, `autograd.numpy`, a torch namespace, `jax.numpy` for the peers), so every method
differentiates the same program. Data that is not differentiated (inputs, labels, the loop count) is
closed over, as in the paper's `gradient((W, b) -> loss(σ.(W*x .+ b)), W, b)`.

>>> from perf.workloads import make_workloads
>>> sincos = make_workloads(quick=True)[0]
>>> sincos.name, sincos.hand_gradient(*sincos.params)[0] == sincos.closed_form(*sincos.params)[0]
('sincos', True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["Workload", "make_workloads"]


@dataclass
class Workload:
    """One differentiable program, its inputs and its hand-written gradient.

    `make(xp, **data)` returns the loss as a function of `params` only; `hand_gradient(*params)`
    returns one gradient per parameter (numpy/float), written as fast as we can write it;
    `closed_form`, where given, is an independent formula the tests check both against;
    `floor_gradient`, where given, is the lower bound of operation-by-operation reverse mode.
    """

    name: str
    description: str
    make: Callable[..., Callable]
    params: tuple
    data: dict[str, Any]
    hand_gradient: Callable[..., tuple]
    closed_form: Callable[..., tuple] | None = None
    sizes: dict[str, int] = field(default_factory=dict)
    scalar: bool = False  # written against `math` (floats) rather than numpy
    # the adjoint program a perfect operation-by-operation reverse mode would run, written out by hand:
    # the primal's own calls, then one adjoint statement per primal operation, no algebra across them
    # and no overhead. No tape-based or source-to-source AD that does not fuse operations can be faster.
    floor_gradient: Callable[..., tuple] | None = None

    def primal(self, xp: Any = None) -> Callable:
        """The loss in namespace `xp` (default: `math` or `numpy`), closed over this workload's data."""
        if xp is None:
            import math

            import numpy

            xp = math if self.scalar else numpy
        return self.make(xp, **self.data)


def make_workloads(quick: bool = False) -> list[Workload]:
    """All workloads, at the paper's sizes, or small ones for a smoke run (`quick`)."""
    from perf.workloads.arrays import logistic_regression_workload as logistic_regression
    from perf.workloads.arrays import logsumexp_workload as logsumexp
    from perf.workloads.arrays import mlp_workload as mlp
    from perf.workloads.scalar import loop_workload as loop
    from perf.workloads.scalar import sincos_workload as sincos

    if quick:
        return [sincos(), loop(n=10), logsumexp(n=10), logistic_regression(n_out=3, n_in=10),
                mlp(n_in=20, n_hidden=8, n_out=3, batch=1), mlp(n_in=20, n_hidden=8, n_out=3, batch=4)]
    return [sincos(), loop(n=100), logsumexp(n=100), logistic_regression(n_out=10, n_in=100),
            mlp(n_in=784, n_hidden=300, n_out=10, batch=1), mlp(n_in=784, n_hidden=300, n_out=10, batch=64)]
