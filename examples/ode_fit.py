"""Fit an ODE parameter through a Runge-Kutta integrator written in plain numpy.

Damped oscillator x'' = -k x - c x' with known damping c; the stiffness k is unknown. We observe x(t)
at a few times and recover k by gradient descent on the squared error, differentiating straight
through the RK4 loop (no adjoint ODE, no special solver).
"""

import numpy as np

from contexts import gradient


def oscillator(t, state, k, c):
    x, v = state[0], state[1]
    return np.array([v, -k * x - c * v])


def rk4(f, y0, ts, *params):
    """States at the times ts (ts[0] is the initial time), classic RK4 with 10 steps between samples."""
    out = [y0]
    y = y0
    for t0, t1 in zip(ts[:-1], ts[1:]):
        h = (t1 - t0) / 10
        t = t0
        for _ in range(10):
            k1 = f(t, y, *params)
            k2 = f(t + h / 2, y + h / 2 * k1, *params)
            k3 = f(t + h / 2, y + h / 2 * k2, *params)
            k4 = f(t + h, y + h * k3, *params)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            t = t + h
        out.append(y)
    return np.stack(out)


ts = np.linspace(0.0, 4.0, 9)
y0 = np.array([1.0, 0.0])
k_true, c = 2.5, 0.3
observed = rk4(oscillator, y0, ts, k_true, c)[:, 0]


def loss(k):
    return np.sum((rk4(oscillator, y0, ts, k, c)[:, 0] - observed) ** 2)


k = 1.5
(dk,) = gradient(loss, k)
fd = (loss(k + 1e-6) - loss(k - 1e-6)) / 2e-6
print(f"dloss/dk at k = {k}: reverse mode {dk:.6f}, central difference {fd:.6f}")
assert abs(dk - fd) < 1e-5 * abs(fd)

for step in range(40):
    (dk,) = gradient(loss, k)
    k = k - 0.1 * dk
    if step % 10 == 0:
        print(f"step {step:2d}  k = {k:.4f}  loss = {loss(k):.2e}")

print(f"fitted k = {k:.4f} (true {k_true})")
assert abs(k - k_true) < 1e-3
