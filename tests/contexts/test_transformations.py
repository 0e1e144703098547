"""`transformations`' C functions given as the package's own Python ones (`contexts.rules.transformations`):
the pairs compute the same values, and transforms built through the C names are differentiated in both
modes, against central differences (refused as C functions before: kinpy's forward kinematics, sweep L)."""

import numpy as np
import pytest

tr = pytest.importorskip("transformations")
import transformations.transformations as T  # noqa: E402

from contexts import gradient, jacfwd  # noqa: E402
from contexts.rules.transformations import _SAME  # noqa: E402
from tests.fd import gradient as fd_gradient  # noqa: E402

RNG = np.random.default_rng(11)
Q = RNG.normal(size=4) / 2
W4 = RNG.normal(size=(4, 4))


@pytest.mark.skipif(T.quaternion_matrix is T.quaternion_matrix_py, reason="without the C extension")
def test_the_pairs_compute_the_same():
    q = Q / np.linalg.norm(Q)
    M = T.quaternion_matrix_py(q)
    M[:3, 3] = [0.3, -1.0, 2.0]
    v, p = np.array([1.0, -2.0, 0.5]), np.array([0.2, 0.1, -0.4])
    args = {"euler_matrix": (0.3, -0.4, 1.2, "rzyx"), "euler_from_matrix": (M, "sxyz"),
            "quaternion_about_axis": (0.7, v), "quaternion_conjugate": (q,), "quaternion_from_euler": (0.3, -0.4, 1.2),
            "quaternion_from_matrix": (M,), "quaternion_inverse": (q,), "quaternion_matrix": (q,),
            "quaternion_multiply": (q, Q), "quaternion_slerp": (q, np.roll(q, 1), 0.3), "reflection_matrix": (p, v),
            "rotation_matrix": (0.7, v, p), "shear_matrix": (0.3, v / np.linalg.norm(v), p, np.cross(v, [1, 0, 0])),
            "translation_matrix": (v,), "unit_vector": (v,), "vector_norm": (v,), "inverse_matrix": (M,),
            "projection_matrix": (p, v), "clip_matrix": (-1.0, 1.0, -1.0, 1.0, 1.0, 3.0),
            "orthogonalization_matrix": ([10.0, 11.0, 12.0], [80.0, 85.0, 95.0]),
            "arcball_map_to_sphere": ([0.3, 0.2], [0.0, 0.0], 1.0),
            "arcball_constrain_to_axis": (v / np.linalg.norm(v), np.array([0.0, 0.0, 1.0])),
            "superimposition_matrix": (RNG.normal(size=(3, 5)), RNG.normal(size=(3, 5))), "identity_matrix": ()}
    assert set(args) == set(_SAME)
    for name, a in args.items():
        np.testing.assert_allclose(np.asarray(getattr(T, name)(*a)), np.asarray(getattr(T, name + "_py")(*a)),
                                   atol=1e-12, err_msg=name)


def quaternion_to_matrix(q):
    return np.sum(W4 * tr.quaternion_matrix(q))


def euler_round_trip(a):
    m = tr.euler_matrix(a[0], a[1], a[2], "rzxy") @ tr.translation_matrix(a)
    return np.sum(np.array(tr.euler_from_matrix(m, "sxyz")) * [0.3, -1.1, 0.7]) + np.sum(W4 * m)


def slerp_and_multiply(q):
    q1 = tr.quaternion_about_axis(q[0], q[1:])
    return np.sum(tr.quaternion_multiply(tr.quaternion_slerp(q1, tr.quaternion_conjugate(q1), 0.3), q1) * Q)


def matrix_to_quaternion(a):
    return np.sum(tr.quaternion_from_matrix(tr.euler_matrix(*a)) * Q)


CASES = [(quaternion_to_matrix, Q), (euler_round_trip, np.array([0.3, -0.4, 1.2])),
         (slerp_and_multiply, np.array([0.7, 1.0, -0.5, 0.3])), (matrix_to_quaternion, np.array([0.3, -0.4, 1.2]))]


@pytest.mark.parametrize("f, x", CASES, ids=[f.__name__ for f, _ in CASES])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_differentiated_through_the_c_names(f, x, mode):
    got = gradient(f, x)[0] if mode == "reverse" else jacfwd(f, x)
    np.testing.assert_allclose(got, fd_gradient(f, x)[0], rtol=1e-6, atol=1e-9)
