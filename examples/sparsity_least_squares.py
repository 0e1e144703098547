"""A sparse nonlinear least-squares problem: the detected pattern goes straight into
scipy.optimize.least_squares(jac_sparsity=...), and so does a sparse Jacobian from forward mode.

    python examples/sparsity_least_squares.py [n]

The residuals are the Broyden tridiagonal function (the scipy cookbook's example of jac_sparsity),
written as plain numpy with a result buffer.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from scipy.optimize import least_squares

from contexts.sparsity import color_columns, jacobian_sparsity, sparse_jacobian


def broyden(x: np.ndarray) -> np.ndarray:
    f = (3 - x) * x + 1
    f[1:] -= x[:-1]
    f[:-1] -= 2 * x[1:]
    return f


def main(n: int = 2000) -> dict:
    x0 = -np.ones(n)
    P = jacobian_sparsity(broyden, x0)
    print(f"n = {n}: pattern {P.shape}, {P.nnz} nonzeros, {color_columns(P).max() + 1} colours")

    runs = {}
    for label, kwargs in (("dense finite differences", {}),
                          ("jac_sparsity=pattern", {"jac_sparsity": P}),
                          ("jac=sparse_jacobian", {"jac": lambda x: sparse_jacobian(broyden, x, P)})):
        if label.startswith("dense") and n > 300:  # a dense trust region on n x n: minutes at n = 2000
            print(f"{label:26s} skipped at n > 300 (run with n = 300 to compare)")
            continue
        start = time.perf_counter()
        res = least_squares(broyden, x0, method="trf", **kwargs)
        runs[label] = res
        print(f"{label:26s} cost {res.cost:.2e}  nfev {res.nfev:5d}  {time.perf_counter() - start:6.2f} s")
    return {"pattern": P, "runs": runs}


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
