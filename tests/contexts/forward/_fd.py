"""Central finite differences for checking forward-mode results (never the code under test)."""

from __future__ import annotations

import numpy as np

__all__ = ["fd_derivative", "fd_jacobian", "fd_hessian"]


def fd_derivative(f, x: float, h: float = 1e-6):
    """(f(x + h) - f(x - h)) / 2h, elementwise for array outputs."""
    return (np.asarray(f(x + h)) - np.asarray(f(x - h))) / (2 * h)


def fd_jacobian(f, x, h: float = 1e-6) -> np.ndarray:
    """The Jacobian of f at x, shape shape(f(x)) + shape(x), by central differences."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(f(x))
    jac = np.zeros(y.shape + (x.size,))
    for j in range(x.size):
        e = np.zeros(x.size)
        e[j] = h
        e = e.reshape(x.shape)
        jac[..., j] = (np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h)
    return jac.reshape(y.shape + x.shape)


def fd_hessian(f, x, h: float = 1e-4) -> np.ndarray:
    """The Hessian of scalar f at x by second-order central differences of f itself."""
    x = np.asarray(x, dtype=float)
    n = x.size
    hess = np.zeros((n, n))
    eye = np.eye(n) * h
    for i in range(n):
        for j in range(i, n):
            ei, ej = eye[i].reshape(x.shape), eye[j].reshape(x.shape)
            hess[i, j] = hess[j, i] = (f(x + ei + ej) - f(x + ei - ej) - f(x - ei + ej)
                                       + f(x - ei - ej)) / (4 * h * h)
    return hess.reshape(x.shape + x.shape)
