"""scipy.spatial.transform's Rotation and RigidTransform with differentiated angles, quaternions, rotation
vectors, matrices and points (`rules.numpy.scipy_rotation`: their Cython kernels run as scipy's array-API
twins), in both modes against central differences; and `operator.imul(x, y)` and kin changing an array in
place (array-api-extra's `at(x)[i].multiply(...)`, under `Rotation.inv`), which reverse mode refused."""

from __future__ import annotations

import operator

import numpy as np
import pytest

from contexts import gradient, jacfwd
from tests.fd import gradient as fd_gradient

transform = pytest.importorskip("scipy.spatial.transform")
R = transform.Rotation

W = np.arange(9.0).reshape(3, 3) / 7
P = np.array([[0.3, -1.2, 2.0], [1.0, 0.5, -0.4]])
E = np.array([0.3, -0.2, 0.5])
Q = np.array([0.1, 0.2, -0.3, 0.9])
C = np.array([1.0, 2.0, 3.0])

CASES = {
    "euler_to_matrix": (lambda e: np.sum(R.from_euler("ZYX", e).as_matrix() * W), E),
    "euler_degrees_to_quat": (lambda e: np.sum(R.from_euler("xyz", e, degrees=True).as_quat() * np.arange(4.0)),
                              np.array([30.0, -20.0, 50.0])),
    "quat_to_matrix": (lambda q: np.sum(R.from_quat(q).as_matrix() * W), Q),
    "quat_scalar_first": (lambda q: np.sum(R.from_quat(q, scalar_first=True).as_rotvec() * C), Q[::-1]),
    "rotvec_apply": (lambda v: np.sum(R.from_rotvec(v).apply(P) * P[::-1]), E),
    "apply_to_points": (lambda p: np.sum(R.from_euler("z", 0.4).apply(p.reshape(2, 3)) ** 2 * P), P.ravel()),
    "apply_inverse": (lambda v: np.sum(R.from_rotvec(v).apply(P, inverse=True) * P), E),
    "compose": (lambda e: np.sum((R.from_euler("xyz", e) * R.from_rotvec(e[::-1])).as_rotvec() * C), E),
    "inverse_magnitude": (lambda e: R.from_euler("xyz", e).inv().magnitude() + R.from_rotvec(e).inv().as_rotvec()[0],
                          E),
    "quat_to_euler": (lambda q: np.sum(R.from_quat(q).as_euler("zyx") * C), Q),
    "matrix_round_trip": (lambda e: np.sum(R.from_matrix(R.from_euler("xyz", e).as_matrix()).as_quat()
                                           * np.arange(4.0)), E),
    "mrp": (lambda m: np.sum(R.from_mrp(m).as_mrp() ** 3), np.array([0.1, 0.2, -0.3])),
    "power": (lambda e: np.sum((R.from_rotvec(e) ** 0.3).as_rotvec() * C), E),
    "stacked": (lambda e: np.sum(R.from_euler("xyz", e.reshape(2, 3)).as_matrix() * W), np.r_[E, E[::-1] * 2]),
    "visual_kinematics_frame": (lambda e: float(np.sum(R.from_euler("ZYX", e, degrees=False).as_matrix() ** 2 * W)),
                                E),
}


@pytest.mark.parametrize("mode", [gradient, jacfwd])
@pytest.mark.parametrize("name", sorted(CASES))
def test_rotation(name, mode):
    f, x = CASES[name]
    want = fd_gradient(f, x)[0]
    got = np.asarray(mode(f, x), dtype=float).reshape(x.shape)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_mean_of_rotations_in_reverse_mode():
    f = lambda e: np.sum(R.from_rotvec(e.reshape(2, 3)).mean().as_rotvec() * C)
    x = np.r_[E, 0.1, 0.2, 0.3]
    np.testing.assert_allclose(gradient(f, x)[0], fd_gradient(f, x)[0], rtol=1e-6, atol=1e-8)


RigidTransform = getattr(transform, "RigidTransform", None)


@pytest.mark.skipif(RigidTransform is None, reason="scipy without RigidTransform")
@pytest.mark.parametrize("mode", [gradient, jacfwd])
def test_rigid_transform(mode):
    def f(x):
        tf = RigidTransform.from_components(x[:3], R.from_rotvec(x[3:]))
        moved = (tf * tf).inv().apply(P)
        return np.sum(moved * P[::-1]) + np.sum(tf.as_matrix() * np.arange(16.0).reshape(4, 4))
    x = np.r_[0.5, -1.0, 2.0, E]
    np.testing.assert_allclose(np.asarray(mode(f, x), dtype=float).reshape(6), fd_gradient(f, x)[0],
                               rtol=1e-6, atol=1e-8)


# -- operator's in-place functions on arrays and lists ---------------------------------------------------

X = np.array([1.3, -0.6, 2.2])


def _iadd(x):
    a = x * 2.0
    operator.iadd(a, x ** 2)
    return np.sum(a * a)


def _imul_slice(x):
    a = x.copy()
    a[1:] = operator.imul(a[1:], x[:2])
    return np.sum(a ** 3)


def _itruediv_view(x):
    a = x.copy()
    operator.itruediv(a[::2], x[1])  # (through a view: a changes)
    return np.sum(a * C)


def _iconcat_list(x):
    items = [x[0]]
    operator.iadd(items, [x[1] * 2.0])
    return items[0] * items[1]


def _numbers(x):
    s = operator.imul(x[0], x[1])
    s = operator.ipow(operator.itruediv(s, x[2]), 2.0)
    return operator.imod(operator.isub(s, x[0]), 5.0)


@pytest.mark.parametrize("mode", [gradient, jacfwd])
@pytest.mark.parametrize("f", [_iadd, _imul_slice, _itruediv_view, _iconcat_list, _numbers])
def test_operator_in_place_functions(f, mode):
    got = np.asarray(mode(f, X), dtype=float).reshape(3)
    np.testing.assert_allclose(got, fd_gradient(f, X)[0], rtol=1e-6, atol=1e-8)


def test_rotation_sparsity_and_hessian():
    from contexts import hessian, jacobian_sparsity
    from tests.fd import hessian as fd_hessian
    pattern = jacobian_sparsity(lambda p: R.from_euler("z", 0.3).apply(p.reshape(2, 3)).ravel(), np.arange(6.0))
    block = np.array([[1, 1, 0], [1, 1, 0], [0, 0, 1]], dtype=bool)  # (about z: x and y mix, z stays)
    np.testing.assert_array_equal(np.asarray(pattern.todense()), np.kron(np.eye(2, dtype=bool), block))
    f = lambda e: np.sum(R.from_euler("ZYX", e).as_matrix() * W)
    np.testing.assert_allclose(np.asarray(hessian(f, E)), fd_hessian(f, E), rtol=1e-5, atol=1e-5)


VALUES = {
    "matrices": lambda e: R.from_euler("ZYX", e.reshape(-1, 3)).as_matrix(),
    "quaternions": lambda e: R.from_rotvec(e.reshape(-1, 3)).as_quat(canonical=True),
    "euler": lambda e: R.from_quat(np.r_[e, 1.0]).as_euler("xyz"),
    "applied": lambda e: R.from_mrp(e * 0.3).apply(P),
    "inverse_composed": lambda e: (R.from_euler("xyz", e) * R.from_rotvec(e[::-1]).inv()).as_mrp(),
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_twins_give_scipys_values(name):
    # (the values the engines compute through the array-API twins are the Cython kernels')
    from contexts import pullback
    f = VALUES[name]
    y, _ = pullback(f, E)
    np.testing.assert_allclose(y, f(E), rtol=1e-12, atol=1e-14)
