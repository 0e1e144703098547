"""Fit the parameters of an ODE through scipy's own solver: `scipy.integrate.solve_ivp`, differentiated.

Lotka-Volterra predator-prey dynamics x' = a x - b x y, y' = b x y - c y. We observe both populations at
a few times and recover (a, b) by gradient descent on the squared error. The gradient goes through
solve_ivp's adaptive Runge-Kutta code (RK45) itself: the parameters are passed with `args=`, the step
sizes the solver chooses are constants of the derivative. Checked against finite differences and
against forward mode.
"""

import numpy as np
from scipy.integrate import solve_ivp

from contexts import derivative, value_and_gradient

C = 1.0
Y0 = np.array([1.0, 0.5])
TIMES = np.linspace(0.0, 4.0, 9)


def lotka_volterra(t, state, a, b):
    x, y = state[0], state[1]
    return np.array([a * x - b * x * y, b * x * y - C * y])


def trajectory(a, b):
    sol = solve_ivp(lotka_volterra, (0.0, 4.0), Y0, args=(a, b), t_eval=TIMES, rtol=1e-8, atol=1e-10)
    return sol.y


OBSERVED = trajectory(1.1, 0.8)  # the data: made with the parameters we will try to recover


def loss(a, b):
    return np.sum((trajectory(a, b) - OBSERVED) ** 2)


def main():
    a, b = 0.8, 0.6
    loss0, (ga, gb) = value_and_gradient(loss, a, b)
    h = 1e-5  # the gradient against central finite differences, and against forward mode
    fd_a = (loss(a + h, b) - loss(a - h, b)) / (2 * h)
    fd_b = (loss(a, b + h) - loss(a, b - h)) / (2 * h)
    assert np.isclose(ga, fd_a, rtol=1e-5) and np.isclose(gb, fd_b, rtol=1e-5), (ga, fd_a, gb, fd_b)
    assert np.isclose(derivative(lambda s: loss(s, b), a), ga, rtol=1e-8)
    print(f"gradient at (a, b) = ({a}, {b}): ({ga:.6f}, {gb:.6f}), finite differences ({fd_a:.6f}, {fd_b:.6f})")

    # gradient descent with a backtracking line search (halve the step until the loss decreases)
    value = loss0
    rate = 1e-3
    for step in range(15):
        while True:
            na, nb = a - rate * ga, b - rate * gb
            new = loss(na, nb)
            if new < value:
                break
            rate /= 2
        a, b = na, nb
        value, (ga, gb) = value_and_gradient(loss, a, b)
        rate *= 2
        if step % 5 == 0:
            print(f"step {step:2d}  loss {value:.3e}  a {a:.4f}  b {b:.4f}")
    final = loss(a, b)
    print(f"fitted a = {a:.4f}, b = {b:.4f} (true 1.1, 0.8), loss {loss0:.4f} -> {final:.2e}")
    assert final < loss0 * 1e-3
    assert abs(a - 1.1) < 2e-2 and abs(b - 0.8) < 2e-2


if __name__ == "__main__":
    main()
