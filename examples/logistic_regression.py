"""Binary logistic regression in plain numpy, fitted by gradient descent with reverse-mode gradients.

The loss is the usual numerically stable form (np.logaddexp); its gradient has the closed form
X.T @ (sigmoid(X @ w + b) - y) / n, which the script checks before training.
"""

import numpy as np

from contexts import gradient


def nll(w, b, X, y):
    """Mean negative log-likelihood of labels y in {0, 1} under p = sigmoid(X @ w + b)."""
    z = X @ w + b
    return np.mean(np.logaddexp(0.0, z) - y * z)


def accuracy(w, b, X, y):
    return np.mean((X @ w + b > 0) == (y == 1))


rng = np.random.default_rng(1)
n, d = 200, 3
X = rng.normal(size=(n, d))
w_true, b_true = np.array([2.0, -1.0, 0.5]), 0.3
y = (rng.uniform(size=n) < 1 / (1 + np.exp(-(X @ w_true + b_true)))).astype(float)

w, b = np.zeros(d), 0.0
gw, gb, _, _ = gradient(nll, w, b, X, y)
residual = 1 / (1 + np.exp(-(X @ w + b))) - y
assert np.allclose(gw, X.T @ residual / n) and np.isclose(gb, residual.mean())
print("gradient at w = 0 matches the closed form X.T @ (p - y) / n")

first = nll(w, b, X, y)
for step in range(201):
    gw, gb, _, _ = gradient(nll, w, b, X, y)
    w, b = w - 0.5 * gw, b - 0.5 * gb
    if step % 50 == 0:
        print(f"step {step:3d}  nll {nll(w, b, X, y):.4f}  accuracy {accuracy(w, b, X, y):.2f}")

gw, gb, _, _ = gradient(nll, w, b, X, y)
residual = 1 / (1 + np.exp(-(X @ w + b))) - y
assert np.allclose(gw, X.T @ residual / n) and np.isclose(gb, residual.mean())
print("fitted w =", np.round(w, 2), " b =", round(float(b), 2), "  (true:", w_true, b_true, ")")
assert nll(w, b, X, y) < 0.75 * first and accuracy(w, b, X, y) > 0.75
