"""A 2-layer MLP written as plain numpy classes, trained with the structured gradient of the model object.

No AD-specific layers or parameter registries: `gradient(loss, model, X, Y)[0]` mirrors the model --
a Tangent with `.layers`, a list whose entries have `.W` and `.b` -- and gradient descent walks both.
"""

import numpy as np

from contexts import gradient


class Dense:
    def __init__(self, n_in, n_out, rng, activation=None):
        self.W = rng.normal(scale=1 / np.sqrt(n_in), size=(n_in, n_out))
        self.b = np.zeros(n_out)
        self.activation = activation

    def __call__(self, x):
        z = x @ self.W + self.b
        return self.activation(z) if self.activation else z


class Chain:
    def __init__(self, *layers):
        self.layers = list(layers)

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def loss(model, X, Y):
    return np.mean((model(X) - Y) ** 2)


def sgd_step(model, grad, lr):
    for layer, g in zip(model.layers, grad.layers):
        layer.W -= lr * g.W
        layer.b -= lr * g.b


rng = np.random.default_rng(0)
X = rng.uniform(-2, 2, size=(128, 2))
Y = (np.sin(X[:, :1]) * np.cos(X[:, 1:])).reshape(-1, 1)   # a smooth target to regress

model = Chain(Dense(2, 16, rng, np.tanh), Dense(16, 1, rng))
# spot-check one weight of the untrained model against a central difference
(g, _, _) = gradient(loss, model, X, Y)
W, h = model.layers[0].W, 1e-6
W[1, 3] += h
up = loss(model, X, Y)
W[1, 3] -= 2 * h
down = loss(model, X, Y)
W[1, 3] += h
fd = (up - down) / (2 * h)
print(f"dL/dW1[1,3]: reverse mode {g.layers[0].W[1, 3]:.8f}, central difference {fd:.8f}")
assert abs(g.layers[0].W[1, 3] - fd) < 1e-5 * abs(fd)

losses = []
for step in range(301):
    (g, _, _) = gradient(loss, model, X, Y)
    losses.append(loss(model, X, Y))
    sgd_step(model, g, lr=0.1)
    if step % 50 == 0:
        print(f"step {step:3d}  loss {losses[-1]:.5f}")

print("gradient of the model object:", type(g).__name__, "with fields", sorted(g), "and", sorted(g.layers[0]))
assert losses[-1] < 0.5 * losses[0], "training did not reduce the loss"
