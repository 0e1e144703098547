"""An astropy Quantity made as a view of a differentiated array (`values * u.dB / u.km`, itur's outputs; session
73): astropy's `__array_finalize__` calls ndarray's own by `super()`, which does nothing; reverse mode refused it
as a C function without a rule. It is non-differentiable now (its value is None). Compared with central
differences (`tests/fd.py`), in reverse mode and in `jvp` (forward mode's refusal of a Quantity, then reverse
mode's answer)."""

from __future__ import annotations

import numpy as np
import pytest

from contexts import gradient, jvp
from tests.fd import gradient as fd_gradient
from tests.fd import jacobian as fd_jacobian

u = pytest.importorskip("astropy.units")


def attenuation(v):
    k = np.exp(-v[0] / 10.0) * v[1] ** 1.2
    q = k * u.dB / u.km
    return float(q.value * 3.0)


def attenuations(v):
    q = (np.sin(v) * 2.0 + v ** 2) * u.dB / u.km
    return np.asarray(q.value * 0.5)


def test_quantity_view_gradient():
    v = np.array([22.5, 7.5])
    assert np.allclose(gradient(attenuation, v)[0], fd_gradient(attenuation, v)[0], rtol=1e-7)


def test_quantity_view_jvp():
    v = np.array([0.3, 1.2, 2.5])
    t = np.array([1.0, -0.5, 2.0])
    y, dy = jvp(attenuations, (v,), (t,))
    assert np.allclose(dy, fd_jacobian(attenuations, v) @ t, rtol=1e-7)
