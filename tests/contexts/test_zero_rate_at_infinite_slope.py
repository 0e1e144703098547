"""A value moving at a rate of exactly 0 through a function whose slope is infinite there (`np.cbrt(x ** 3)` at
0: x ** 3's rate 0, cbrt's slope infinite; the derivative is 1). Reverse mode's 0 * inf is NaN; its entry point
took forward mode's number for it, and forward mode takes such a rate for no change: 0, silently (until session
70). Where forward mode says 0 the two sides of the point are asked now (`compose._zeros_by_sides`); where the
value stays put (a constant made of differentiated values), forward mode's 0 stands. Against central
differences."""

import numpy as np
import pytest

from contexts import derivative, gradient

from tests import fd


def cube_root_of_cube(x):
    return np.cbrt(x ** 3) + 0.5 * x


def cube_roots_of_cubes(v):
    return np.sum(np.cbrt(v ** 3) * np.array([1.0, 2.0, 3.0]))


def root_of_a_constant_zero(x):
    return np.sqrt(np.abs(x - x)) + 2.0 * x  # (x - x stays 0: its root's slope meets no motion)


@pytest.mark.parametrize("f, x", [(cube_root_of_cube, 0.0), (cube_roots_of_cubes, np.array([0.0, 0.7, 0.0])),
                                  (root_of_a_constant_zero, 0.3)])
def test_gradient_at_the_point(f, x):
    want = fd.gradient(f, x)[0]
    np.testing.assert_allclose(gradient(f, x)[0], want, rtol=1e-6, atol=1e-8)


@pytest.mark.one_mode
@pytest.mark.parametrize("f", [cube_root_of_cube, lambda x: np.arcsin(1.0 - x ** 2) + x, lambda x: np.sqrt(x ** 4) - x])
def test_forward_modes_own_derivative(f):
    # (numpy's functions of a number at a singular point of their own, judged from the two sides as math's are:
    # `rules.ties.singular_still`)
    np.testing.assert_allclose(derivative(f, 0.0), fd.derivative(f, 0.0), rtol=1e-6, atol=1e-8)
