"""A bisection by the sign of a differentiated test on an array iterate (session 73, sweep V: earthkit-meteo's
wet-bulb temperature, `t = xp.full(shape, t0, device=xp.device(ept)); t += xp.sign(g(t)) * dt; dt /= 2`): its
result is a staircase whose derivative is 0, and both modes returned 0 silently (central differences at a
small step agree, so only the physical derivative shows it). The same loop on a float was refused; on an array
its start was taken for data of the inputs (`np.shape(c)`, `xp.device(c)`, the namespace `xp`). Refused now
in both modes."""

from __future__ import annotations

import numpy as np
import pytest

from contexts import derivative, gradient, jacobian
from overdub.errors import OverdubError


def array_namespace(*xs):  # (array-api-compat's name: the module of the arrays, no data)
    return np


def bisect_array(c):
    t = np.full(np.shape(c), 1.0)
    dt = 1.0
    for _ in range(12):
        dt /= 2.0
        t += np.sign(c - t ** 3) * dt
    return t


def bisect_namespaced(c):
    xp = array_namespace(c)
    c = xp.asarray(c)
    t = xp.full(np.broadcast_shapes(c.shape), 1.0, dtype=c.dtype)
    dt = 1.0
    for _ in range(12):
        dt /= 2.0
        t += xp.sign(c - t ** 3) * dt
    return t


@pytest.mark.parametrize("f", [bisect_array, bisect_namespaced], ids=lambda f: f.__name__)
def test_sign_bisection_of_an_array_refused(f):
    c = np.array([2.0, 3.0])
    with pytest.raises(OverdubError, match="bisection"):
        jacobian(f, c, mode="reverse")
    with pytest.raises(OverdubError, match="bisection"):
        jacobian(f, c)
    with pytest.raises(OverdubError, match="bisection"):
        derivative(lambda s: f(np.array([s]))[0], 2.0)


def test_newton_on_an_array_still_differentiated():
    def cbrt(c):
        t = np.full(np.shape(c), 1.0)
        for _ in range(30):
            t = t - (t ** 3 - c) / (3 * t ** 2)
        return t

    g = gradient(lambda c: cbrt(c).sum(), np.array([2.0, 3.0]))[0]
    assert np.allclose(g, 1.0 / (3.0 * np.array([2.0, 3.0]) ** (2.0 / 3.0)), rtol=1e-10)
