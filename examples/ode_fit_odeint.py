"""Fit the parameters of an ODE solved by scipy's odeint (LSODA, Fortran), with reverse mode's gradient.

Logistic growth y' = r y (1 - y / K) observed at 21 times with a little noise; r, K and y(0) are unknown.
odeint runs Fortran, which no tracer sees: overdub's rule for it differentiates by the continuous adjoint
(λ' = -λ·∂f/∂y, μ' = -λ·∂f/∂θ integrated backward, f's vector-Jacobian products by overdub itself), so the
gradient of the loss costs a backward solve whatever the number of parameters.
"""

import numpy as np
from scipy.integrate import odeint
from scipy.optimize import minimize

from contexts import gradient

ts = np.linspace(0.0, 6.0, 21)
r_true, K_true, y0_true = 1.2, 3.0, 0.2
rng = np.random.default_rng(0)
observed = odeint(lambda y, t: r_true * y * (1 - y / K_true), y0_true, ts)[:, 0] + 0.01 * rng.standard_normal(21)


def loss(p):
    r, K, y0 = p[0], p[1], p[2]
    y = odeint(lambda y, t: r * y * (1 - y / K), y0, ts, rtol=1e-10, atol=1e-10)[:, 0]
    return np.sum((y - observed) ** 2)


p = np.array([0.8, 2.0, 0.5])
(g,) = gradient(loss, p)
h = 1e-5
fd = np.array([(loss(p + h * e) - loss(p - h * e)) / (2 * h) for e in np.eye(3)])
print("gradient at the start: reverse mode", np.round(g, 6), " central differences", np.round(fd, 6))
assert np.allclose(g, fd, rtol=1e-5)

fit = minimize(loss, p, jac=lambda p: gradient(loss, p)[0], method="L-BFGS-B",
               bounds=[(0.1, 5.0), (0.5, 10.0), (0.01, 2.0)])  # (K <= 0: no solution to fit)
r, K, y0 = fit.x
print(f"fitted r = {r:.3f} (true {r_true}), K = {K:.3f} ({K_true}), y0 = {y0:.3f} ({y0_true}); "
      f"loss {fit.fun:.2e} after {fit.nit} iterations")
assert abs(r - r_true) < 0.05 and abs(K - K_true) < 0.05 and abs(y0 - y0_true) < 0.05
