"""Mixed mode (the Zygote paper's `forwarddiff`): inside reverse-mode code, a function of few inputs is
differentiated by forward mode and the reverse pass applies its transposed Jacobian."""

import numpy as np

from contexts.forward import forwarddiff, jacfwd
from contexts.rules.registry import registry

t = np.linspace(0.0, 2.0, 200)


def trajectory(p):                      # few inputs, many outputs and intermediates: forward mode wins
    return p[0] * np.exp(-p[1] * t) * np.cos(p[2] * t)


def loss(p):
    return np.sum(forwarddiff(trajectory, p) ** 2)


p = np.array([1.0, 0.5, 3.0])
y, pullback = registry.get(forwarddiff).rrule(trajectory, p)
dy = 2 * y                              # d loss / d trajectory
grad_by_rule = pullback(dy)[1]
print("gradient through forwarddiff's pullback:", grad_by_rule)
print("same as J^T dy by jacfwd              :", np.allclose(grad_by_rule, jacfwd(trajectory, p).T @ dy))
try:
    from contexts.ad import gradient
except ImportError:
    print("(contexts.ad is not available: reverse mode not shown)")
else:
    print("reverse mode through forwarddiff      :", gradient(loss, p)[0])
