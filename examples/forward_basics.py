"""Forward-mode AD on ordinary Python: derivatives, exact and uncertain numbers, nested derivatives,
Jacobians a chunk of directions at a time, and a standard-library function never written for AD."""

import colorsys
import math
from fractions import Fraction

import numpy as np
from uncertainties import ufloat

from contexts.forward import derivative, jacfwd, jvp


def power(x, n=5):
    r = 1.0
    while n > 0:          # control flow runs on the primal
        r = r * x
        n -= 1
    return r


print("d/dx x**5 at 2        :", derivative(power, 2.0))
print("d/dx sin(x)*x at 1    :", derivative(lambda x: math.sin(x) * x, 1.0))
print("exact (Fraction)      :", derivative(lambda x: x**2 + 3*x + 1, Fraction(1, 3)))
print("with uncertainty      :", derivative(lambda x: x**2 + 3*x + 1, ufloat(1 / 3, 0.01)))
print("no perturbation mix-up:", derivative(lambda x: x * derivative(lambda y: x + y, 1.0), 1.0))
print("second derivative     :", derivative(lambda x: derivative(lambda z: z**3, x), 2.0))

hue = lambda rgb: np.array(colorsys.rgb_to_hsv(rgb[0], rgb[1], rgb[2]))
print("Jacobian of rgb_to_hsv at (0.2, 0.5, 0.9):")
print(jacfwd(hue, np.array([0.2, 0.5, 0.9])))

t = np.linspace(0.0, 1.0, 5)
curve = lambda p: p[0] * np.sin(t) + p[1] * np.exp(-p[2] * t)
print("Jacobian R^3 -> R^5, chunk of 3 directions in one pass:")
print(jacfwd(curve, np.array([1.0, 2.0, 0.5]), chunk=3))
y, dy = jvp(curve, (np.array([1.0, 2.0, 0.5]),), (np.array([0.0, 0.0, 1.0]),))
print("directional derivative along p[2]:", dy)
