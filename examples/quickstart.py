"""overdub in one page: gradients of ordinary Python code, exact types kept, a stdlib function unchanged."""

import colorsys
import math
from fractions import Fraction

from uncertainties import ufloat

from contexts import ADContext, gradient, pullback_full


def hue(r, g, b):
    return colorsys.rgb_to_hsv(r, g, b)[0]  # never written for AD


def power(x, n):
    r = 1.0
    while n > 0:
        r = r * x
        n -= 1
    return r


with ADContext():
    print("d hue / d(r, g, b) =", gradient(hue, 0.2, 0.5, 0.9))
    print("d x**5 / dx at 2   =", gradient(power, 2.0, 5)[0])
    print("exact              =", gradient(lambda x: x ** 2 + 3 * x + 1, Fraction(1, 3))[0])
    print("with uncertainty   =", gradient(lambda x: x ** 2 + 3 * x + 1, ufloat(1 / 3, 0.01))[0])
    print("structured         =", gradient(lambda p: p["w"] * math.sin(p["b"]), {"w": 2.0, "b": 0.5}))
    f = (lambda a: (lambda x: x * a))(3.0)
    y, back = pullback_full(f, 2.0)
    print("closure gradient   =", back(1.0))
