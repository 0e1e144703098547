"""Forward mode on numpy functions given objects that numpy converts by their class's Python `__array__`
(np.poly1d: `p * q` is np.polymul, which convolves the poly1d objects themselves): the conversion runs on
the duals, then the function (it was refused: no forward rule for numpy.convolve). scipy.interpolate.lagrange
builds its polynomial this way. Against central differences: `jvp`, `jacfwd`, `derivative`."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.interpolate

from contexts import derivative, jacfwd, jvp
from tests import fd

C = np.array([1.0, 0.5, -0.3, 0.2])
T = np.array([0.4, -0.2, 0.9, 0.3])


def product(c):
    p = np.poly1d(c[:2]) * np.poly1d([1.0, -c[2]]) * np.poly1d(c[2:])
    return p(0.7) + p.coeffs


def convolve_objects(c):
    return np.convolve(np.poly1d(c), np.poly1d([2.0, 1.0]))


def lagrange(c):
    return scipy.interpolate.lagrange(np.array([0.0, 0.5, 1.3, 2.0]), c)(0.77)


@pytest.mark.parametrize("f", [product, convolve_objects, lagrange], ids=lambda f: f.__name__)
def test_poly1d_forward(f):
    np.testing.assert_allclose(jvp(f, (C,), (T,))[1], fd.directional(f, (C,), (T,)), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacfwd(f, C), fd.jacobian(f, C), rtol=1e-6, atol=1e-8)
    g = lambda s: np.sum(f(C * s))  # noqa: E731
    np.testing.assert_allclose(derivative(g, 1.2), fd.derivative(g, 1.2), rtol=1e-6, atol=1e-8)
