"""Hessians and Hessian-vector products: forward mode over a gradient, checked against scipy's
hand-written Rosenbrock Hessian."""

import numpy as np
from scipy.optimize import rosen, rosen_hess

from contexts import hessian, hvp

x = np.linspace(-1.0, 1.5, 10)
h = hessian(rosen, x)
print("Hessian of scipy.optimize.rosen at n = 10 equals rosen_hess:", np.allclose(h, rosen_hess(x)))
print("max |difference|:", np.abs(h - rosen_hess(x)).max())

v = np.ones(10)
print("H @ v by one forward pass over the gradient:", np.allclose(hvp(rosen, x, v), rosen_hess(x) @ v))


def loss(theta, inputs, targets):
    w, b = theta[:3], theta[3]
    prediction = np.tanh(inputs @ w + b)
    return np.mean((prediction - targets) ** 2)


rng = np.random.default_rng(0)
inputs, targets = rng.standard_normal((8, 3)), rng.standard_normal(8)
print("Hessian of a one-layer network's loss (4 parameters):")
print(np.round(hessian(lambda th: loss(th, inputs, targets), np.array([0.1, -0.2, 0.3, 0.0])), 4))
