"""Count the operations each function performs, third-party code included.

    python examples/debug_count.py
"""

import colorsys

import numpy as np

from contexts.debug import CountContext


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def palette_energy(colors):
    hsv = np.array([colorsys.rgb_to_hsv(*rgb) for rgb in colors])
    return float(np.sum(hsv[:, 2] ** 2))


ctx = CountContext()
print("fib(10) =", ctx.run(fib, 10))
print(ctx.table())

ctx = CountContext()
print("\npalette_energy =", ctx.run(palette_energy, [(0.9, 0.1, 0.1), (0.1, 0.8, 0.2), (0.2, 0.3, 0.9)]))
print(ctx.table())
