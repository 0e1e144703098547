"""Dense derivatives by central finite differences, for checking sparsity patterns (never the code under test)."""

from __future__ import annotations

import numpy as np


def _flat(y):
    if isinstance(y, (list, tuple)):
        return np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in y]) if y else np.zeros(0)
    return np.ravel(np.asarray(y, dtype=float))


def fd_jacobian(f, x, h=1e-6):
    """J[i, j] = d f_i / d x_j by central differences; shape (outputs, inputs)."""
    x = np.asarray(x, dtype=float)
    cols = []
    for j in range(x.size):
        e = np.zeros(x.size)
        e[j] = h
        cols.append((_flat(f(x + e.reshape(x.shape))) - _flat(f(x - e.reshape(x.shape)))) / (2 * h))
    return np.stack(cols, axis=1)


def fd_hessian(f, x, h=1e-3):
    """H[i, j] of scalar f (sum of outputs) by central second differences."""
    x = np.asarray(x, dtype=float).ravel()
    n = x.size
    g = lambda z: float(np.sum(_flat(f(z))))
    H = np.zeros((n, n))
    E = np.eye(n) * h
    for i in range(n):
        for j in range(i, n):
            H[i, j] = H[j, i] = (g(x + E[i] + E[j]) - g(x + E[i] - E[j]) - g(x - E[i] + E[j])
                                 + g(x - E[i] - E[j])) / (4 * h * h)
    return H


def nonzero(M, tol=1e-6):
    """Entries that are numerically nonzero relative to the matrix scale."""
    M = np.asarray(M)
    scale = max(1.0, float(np.abs(M).max()) if M.size else 1.0)
    return np.abs(M) > tol * scale
