"""Sparsity detection in five minutes: Jacobian and Hessian patterns of ordinary numpy/scipy code,
global versus local mode, and a sparse Jacobian from a colouring.

    python examples/sparsity_basics.py
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import rosen

from contexts.sparsity import (TracedBranchError, color_columns, hessian_sparsity, jacobian_sparsity,
                               sparse_jacobian)


def show(title, pattern):
    print(f"{title}: {pattern.shape}, {pattern.nnz} nonzeros")
    print("\n".join("  " + "".join("x" if v else "." for v in row) for row in pattern.toarray()))


def heat(u):
    """A 1-D diffusion step with a nonlinear source: a tridiagonal Jacobian."""
    du = np.zeros_like(u)
    du[1:-1] = u[:-2] - 2 * u[1:-1] + u[2:] + np.sin(u[1:-1])
    return du


def clipped(x):
    """Branches on the input: global mode refuses, local mode follows the branch taken."""
    if x[0] > 0:
        return np.array([x[1] * x[2], math.exp(x[3])])
    return np.array([x[0], x[3]])


x = np.linspace(0.5, 1.5, 8)
show("Jacobian of heat", jacobian_sparsity(heat, x))
show("Hessian of scipy.optimize.rosen (unchanged)", hessian_sparsity(rosen, x))

try:
    jacobian_sparsity(clipped, np.ones(4))
except TracedBranchError as e:
    print("global mode raises:", e, sep="\n")
show("local mode at x[0] = 1", jacobian_sparsity(clipped, np.ones(4), mode="local"))

colors = color_columns(jacobian_sparsity(heat, x))
J = sparse_jacobian(heat, x)
print(f"sparse_jacobian of heat: {colors.max() + 1} forward passes instead of {x.size}; J[3, 2:5] =",
      np.round(J.toarray()[3, 2:5], 3))
