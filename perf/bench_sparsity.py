"""Sparsity benchmarks: pattern detection time and sparse versus dense forward Jacobians.

    python perf/bench_sparsity.py -o sparsity.json     # pyperf, on its own
    python perf/run.py --only none                    # with the other suites (perf/run.py calls run())

- detect/brusselator_N32, _N128: `jacobian_sparsity` of the 2-D Brusselator RHS (2,048 and 32,768
  unknowns); about linear scaling expected (16x the unknowns).
- detect/tridiagonal_1e5: a 3-point stencil on 10^5 inputs (aim: under 1 s).
- jacobian/sparse_n1000, _n10000: `sparse_jacobian` (detection, colouring, 3 forward passes) of a
  nonlinear 1-D diffusion RHS; jacobian/dense_n1000, _n10000: `contexts.forward.jacfwd` of the same
  (aim: sparse at least 100x faster at n = 10^4). The dense n = 10^4 case takes seconds per call and is
  left out of quick runs.
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples"))

from contexts.forward import jacfwd  # noqa: E402
from contexts.sparsity import jacobian_sparsity, sparse_jacobian  # noqa: E402

import brusselator  # noqa: E402


def diffusion(u):
    du = np.zeros_like(u)
    du[1:-1] = u[2:] - 2 * u[1:-1] + u[:-2] + np.sin(u[1:-1])
    du[0] = u[0] ** 2
    du[-1] = u[-1] * u[-2]
    return du


def stencil(u):
    return u[2:] - 2 * u[1:-1] + u[:-2]


def _brusselator(N):
    y0 = brusselator.initial_state(N)
    return lambda: jacobian_sparsity(lambda s: brusselator.rhs(0.0, s, N), y0)


def benchmarks(quick: bool = False) -> dict:
    """name -> zero-argument callable."""
    x4, x3 = np.linspace(0, 1, 10_000), np.linspace(0, 1, 1_000)
    x5 = np.zeros(100_000)
    out = {
        "detect/brusselator_N32": _brusselator(32),
        "detect/brusselator_N128": _brusselator(128),
        "detect/tridiagonal_1e5": lambda: jacobian_sparsity(stencil, x5),
        "jacobian/sparse_n1000": lambda: sparse_jacobian(diffusion, x3),
        "jacobian/dense_n1000": lambda: jacfwd(diffusion, x3),
        "jacobian/sparse_n10000": lambda: sparse_jacobian(diffusion, x4),
    }
    if not quick:
        out["jacobian/dense_n10000"] = lambda: jacfwd(diffusion, x4)
    return out


def run(runner) -> None:
    """Register every benchmark with a pyperf.Runner (or perf/run.py's quick stand-in)."""
    quick = bool(getattr(getattr(runner, "args", None), "quick", False))
    for name, fn in benchmarks(quick).items():
        runner.bench_func(f"sparsity/{name}", fn)


if __name__ == "__main__":
    import pyperf

    run(pyperf.Runner())
