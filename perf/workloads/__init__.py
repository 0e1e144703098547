"""The benchmark workloads: the Zygote paper's Table 4 ("Don't Unroll Adjoint"), in Python.

Each workload is written once, against an array namespace `xp` (`math`/`numpy` for the primal and
overdub, `autograd.numpy`, a torch namespace, `jax.numpy` for the peers), so every method
differentiates the same program. Data that is not differentiated (inputs, labels, the loop count) is
closed over, as in the paper's `gradient((W, b) -> loss(σ.(W*x .+ b)), W, b)`, except a workload's
`constants`: arguments after the differentiated ones that the function takes as a user would write it
(`loop_pow(x, n)`), passed to every method and differentiated by none.

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

    `make(xp, **data)` returns the loss as a function of `*params, *constants`;
    `hand_gradient(*params, *constants)` returns one gradient per parameter (numpy/float), written as
    fast as we can write it; `closed_form(*params, *constants)`, where given, is an independent formula
    the tests check both against; `floor_gradient(*params, *constants)`, where given, is the lower bound
    of operation-by-operation reverse mode. `constants` (default none) are trailing arguments that are
    not differentiated: overdub is called as a user would call it, `gradient(f, *params, *constants)`,
    and the params' gradients are taken from the front of its result; the peers differentiate the
    params only (autograd `argnum`, jax `argnums`, torch's `requires_grad`).
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
    constants: tuple = ()  # trailing arguments, after `params`, that no method differentiates

    @property
    def args(self) -> tuple:
        """Everything the function is called with: the params, then the constants."""
        return self.params + self.constants

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
    from perf.workloads.scalar import loop_arg_workload as loop_arg
    from perf.workloads.scalar import loop_workload as loop
    from perf.workloads.scalar import sincos_workload as sincos

    if quick:
        small = {"n_in": 20, "n_hidden": 8, "n_out": 3}
        return [sincos(), loop(n=10), loop_arg(n=10), logsumexp(n=10), logistic_regression(n_out=3, n_in=10),
                mlp(**small, batch=1), mlp(**small, batch=4),
                mlp(**small, batch=1, activation="relu"), mlp(**small, batch=4, activation="relu")]
    paper = {"n_in": 784, "n_hidden": 300, "n_out": 10}
    return [sincos(), loop(n=100), loop_arg(n=100), logsumexp(n=100), logistic_regression(n_out=10, n_in=100),
            mlp(**paper, batch=1), mlp(**paper, batch=64),
            mlp(**paper, batch=1, activation="relu"), mlp(**paper, batch=64, activation="relu")]
