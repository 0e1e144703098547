"""Symbolic derivatives of numeric code never written for them.

`rk4_decay` below is ordinary numeric code: four classical Runge-Kutta steps for y' = -k y. Run on sympy
symbols, overdub's reverse mode returns the exact symbolic sensitivity d y(T) / d k (sympy's expressions
are numbers to overdub: their operators and functions go to rules that sympy differentiates itself),
equal to what `sympy.diff` gives of the expression the code builds. The same code on floats gives the
number, and on mpmath numbers the number to 40 digits.

    python examples/symbolic_derivative.py
"""

import mpmath
import sympy as sp

from contexts import gradient


def rk4_decay(k, y0, t_end=1.0, steps=4):
    """y(t_end) for y' = -k y, y(0) = y0, by `steps` classical RK4 steps (plain arithmetic)."""
    h = t_end / steps
    y = y0
    for _ in range(steps):
        k1 = -k * y
        k2 = -k * (y + h / 2 * k1)
        k3 = -k * (y + h / 2 * k2)
        k4 = -k * (y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


def damped_energy(m, c, x):
    """A damped oscillator's energy after a kick, with a sympy function in it."""
    v = c * sp.exp(-x / m)
    return m * v ** 2 / 2 + sp.log(1 + x ** 2)


def main():
    k, y0 = sp.symbols("k y0", positive=True)
    exact_step = lambda k, y0: rk4_decay(k, y0, t_end=sp.Integer(1), steps=2)  # noqa: E731  (h = 1/2 exactly)
    dk, dy0 = gradient(exact_step, k, y0)
    y_end = exact_step(k, y0)
    assert sp.expand(dk - sp.diff(y_end, k)) == 0 and sp.expand(dy0 - sp.diff(y_end, y0)) == 0
    print("d y(1)/dk  =", sp.factor(dk))
    print("d y(1)/dy0 =", sp.factor(dy0))

    m, c, x = sp.symbols("m c x", positive=True)
    grads = gradient(damped_energy, m, c, x)
    for g, s in zip(grads, (m, c, x)):
        assert sp.simplify(g - sp.diff(damped_energy(m, c, x), s)) == 0
    print("d E/dx     =", sp.simplify(grads[2]))

    # the same code on numbers: the symbolic derivative evaluated agrees with the numeric gradient
    at = {k: sp.Rational(7, 10), y0: 2}
    exact = dk.subs(at)
    numeric = gradient(lambda k, y0: rk4_decay(k, y0, steps=2), 0.7, 2.0)[0]
    assert abs(float(exact) - numeric) < 1e-14
    with mpmath.workdps(40):
        precise = gradient(lambda k, y0: rk4_decay(k, y0, mpmath.mpf(1), 2), mpmath.mpf("0.7"), mpmath.mpf(2))[0]
        assert abs(precise - mpmath.mpf(sp.N(exact, 45))) < mpmath.mpf("1e-38")
        print("at k = 0.7, y0 = 2:", float(exact), "(float)", mpmath.nstr(precise, 30), "(mpmath, 40 digits)")


if __name__ == "__main__":
    main()
