"""`scipy.linalg.lstsq(a, b, lapack_driver="gelsy")` (LAPACK's ?gelsy: a complete orthogonal factorization;
linearmodels' panel estimators call it): differentiated at full rank as numpy's lstsq (the solution is then
pinv(A) b), in both modes; rank-deficient refused. Against central differences and closed forms."""

import numpy as np
import pytest
import scipy.linalg as sla

from contexts import gradient, jacobian, jvp
from overdub.errors import OverdubError
from tests.fd import gradient as fd_gradient, jacobian as fd_jacobian

RNG = np.random.default_rng(3)
A = RNG.normal(size=(7, 3))
B = RNG.normal(size=7)


def solve(a, b):
    return sla.lstsq(a, b, lapack_driver="gelsy")[0]


def test_solution_in_b_is_the_pseudo_inverse():
    got = jacobian(lambda b: solve(A, b), B, mode="reverse")
    np.testing.assert_allclose(got, np.linalg.pinv(A), atol=1e-12)
    np.testing.assert_allclose(jacobian(lambda b: solve(A, b), B), np.linalg.pinv(A), atol=1e-12)


def test_gradient_in_a_and_b_against_differences():
    w = RNG.normal(size=3)
    f = lambda a, b: float(w @ solve(a, b))  # noqa: E731
    ga, gb = gradient(f, A, B)
    fa, fb = fd_gradient(f, A, B)
    np.testing.assert_allclose(ga, fa, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(gb, fb, rtol=1e-6, atol=1e-9)


def test_forward_tangent_in_a():
    ta = RNG.normal(size=A.shape)
    _, rate = jvp(lambda a: solve(a, B), (A,), (ta,))
    want = fd_jacobian(lambda a: solve(a, B), A).reshape(3, -1) @ ta.ravel()
    np.testing.assert_allclose(rate, want, rtol=1e-6, atol=1e-9)


def test_several_right_hand_sides_and_wide_matrices():
    bm = RNG.normal(size=(7, 2))
    f = lambda b: float(np.sum(solve(A, b) ** 2))  # noqa: E731
    np.testing.assert_allclose(gradient(f, bm)[0], fd_gradient(f, bm)[0], rtol=1e-6, atol=1e-9)
    wide = RNG.normal(size=(3, 5))  # (m < n: the minimum-norm solution, b padded by scipy)
    g = lambda a: float(np.sum(np.sin(solve(a, B[:3]))))  # noqa: E731
    np.testing.assert_allclose(gradient(g, wide)[0], fd_gradient(g, wide)[0], rtol=1e-6, atol=1e-9)


def test_rank_deficient_in_b_is_the_pseudo_inverse():
    a = A.copy()
    a[:, 2] = a[:, 0] + a[:, 1]  # (rank 2 by both gelsy's QR and the SVD)
    np.testing.assert_allclose(jacobian(lambda b: solve(a, b), B, mode="reverse"), np.linalg.pinv(a), atol=1e-10)


# (singular values 0.84, 7.6e-3, 4.8e-5: at cond 7.8e-3 the SVD keeps two, gelsy's condition estimate one)
APART = np.array([[-0.10703883848050683, -0.15179079593370493, 0.1879997569066054],
                  [0.2851453227454788, 0.41149408427170137, -0.5054342055284964],
                  [-0.043866812027208234, -0.05220753915088207, 0.07089284372457792],
                  [0.14267118798746328, 0.19775176360581667, -0.2478457238814748]])
COND = 0.00783171504762567


@pytest.mark.one_mode
def test_ranks_found_apart_are_refused():
    s = np.linalg.svd(APART, compute_uv=False)
    assert sla.lstsq(APART, np.ones(4), lapack_driver="gelsy", cond=COND)[2] != np.sum(s > COND * s[0])
    with pytest.raises(OverdubError):  # (gelsy's rank against the SVD's, or the cutoff's own: by scipy's version)
        gradient(lambda a: float(np.sum(sla.lstsq(a, np.ones(4), lapack_driver="gelsy", cond=COND)[0])), APART)
