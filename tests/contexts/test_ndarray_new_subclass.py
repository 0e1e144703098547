"""ndarray subclasses made over an array's memory by `np.ndarray.__new__(subtype, shape, dtype, buffer)`, with
attributes of their own stored by their constructor (ahrs' Quaternion: `obj = super().__new__(subtype,
q.shape, float, q); obj.A = q; obj.scalar_vector = True`). Reverse mode refused both the constructor (no
rule for the C `__new__`) and the attribute read (`.A`); it differentiates them now, checked against central
differences. An attribute numpy copies in compiled code (`__array_finalize__` on a slice) is refused, never
dropped; forward mode refuses the constructor by name."""

from __future__ import annotations

import numpy as np
import pytest

from contexts import gradient, jacfwd
from overdub.errors import OverdubError
from tests.fd import gradient as fd_gradient


class Quat(np.ndarray):
    """ahrs' Quaternion's constructor, in small."""

    def __new__(subtype, q, versor=True):
        q = np.array(q, dtype=float)
        if versor:
            q /= np.linalg.norm(q)
        obj = super(Quat, subtype).__new__(subtype, q.shape, float, q)
        obj.A = q
        obj.scalar_vector = True
        return obj

    @property
    def w(self):
        return self.A[0]

    @property
    def v(self):
        return self.A[1:]

    @property
    def conj(self):
        return self.A * np.array([1.0, -1.0, -1.0, -1.0])

    def product(self, r):
        qw, qx, qy, qz = self.A
        rw, rx, ry, rz = r
        return np.array([qw * rw - qx * rx - qy * ry - qz * rz, qw * rx + qx * rw + qy * rz - qz * ry,
                         qw * ry - qx * rz + qy * rw + qz * rx, qw * rz + qx * ry - qy * rx + qz * rw])

    def to_DCM(self):
        w, x, y, z = self.A
        return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                         [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                         [2 * (x * z - w * y), 2 * (w * x + y * z), 1 - 2 * (x * x + y * y)]])


X = np.array([0.7, 0.2, -0.3, 0.5])
R = np.array([0.3, 0.1, 0.4, 0.2])

CASES = {
    "dcm": lambda v: Quat(v).to_DCM().sum() + Quat(v).to_DCM()[0, 1] ** 2,
    "product": lambda v: np.sum(Quat(v).product(R) ** 2),
    "parts": lambda v: Quat(v).w * Quat(v).v.sum() + Quat(v).conj[2],
    "values_and_attribute": lambda v: np.sum(Quat(v) * np.arange(4.0)) + Quat(v).A[3] ** 3,
    "not_normalised": lambda v: np.sum(Quat(v, versor=False).product(R)) * Quat(v, versor=False)[1],
    "items": lambda v: Quat(v)[0] * Quat(v)[2] - Quat(v).sum(),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_reverse_mode_against_differences(name):
    f = CASES[name]
    np.testing.assert_allclose(gradient(f, X)[0], fd_gradient(f, X)[0], rtol=1e-7, atol=1e-9)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_forward_mode_refuses_the_constructor_by_name():
    with pytest.raises(OverdubError, match="__new__"):
        jacfwd(CASES["dcm"], X)


class Tagged(np.ndarray):
    def __new__(cls, a, scale):
        obj = np.asarray(a).view(cls)
        obj.scale = scale
        return obj

    def __array_finalize__(self, obj):
        self.scale = getattr(obj, "scale", None)  # (numpy calls it in C for every view: no store recorded)


def test_attribute_stored_in_python_is_differentiated():
    def f(x):
        t = Tagged(x * 1.0, x[0] * 2)
        return t.scale * t.sum()
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(gradient(f, x)[0], fd_gradient(f, x)[0], rtol=1e-7)


def test_attribute_copied_by_array_finalize_is_refused_not_dropped():
    def f(x):
        t = Tagged(x * 1.0, x[0] * 2)
        u = t[1:]  # u.scale was set by __array_finalize__, in numpy's C code: its derivative has no store to go to
        return u.scale * u.sum()
    with pytest.raises(OverdubError, match="scale"):
        gradient(f, np.array([1.0, 2.0, 3.0]))
