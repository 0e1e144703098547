"""Rules met in python-control (issue 14), against central finite differences: np.nditer's reverse rule
(items drawn in memory order, `external_loop` chunks, a loop left early; several operands refused),
np.block (numpy's own code calls np.concatenate's C implementation) and scipy.linalg.expm in both modes
(its Frechet derivative; batches and a 1x1 matrix)."""

import numpy as np
import pytest

from contexts import gradient, jacfwd, jacobian
from contexts.rules.registry import MissingRule
from overdub.errors import OverdubError

from tests import fd

scipy_linalg = pytest.importorskip("scipy.linalg")

X6 = np.array([0.7, 3.0, 0.2, -0.4, 1.1, 0.5])


def nditer_squares(p):
    s = 0.0
    for v in np.nditer(p):
        s = s + v * v * p[0]
    return s


def nditer_transposed_chunks(p):
    s = 0.0
    for k, v in enumerate(np.nditer(p.reshape(3, 2).T, flags=["external_loop"], order="F")):
        s = s + np.sum(v ** 3) * (k + 1)
    return s


def nditer_memory_order_left_early(p):
    s = 0.0
    for v in np.nditer(p.reshape(3, 2).T):  # (order 'K': memory order, not the transpose's C order)
        s = s * 1.5 + np.sin(v)
        if s > 1.2:
            break
    return s


def nditer_two_operands(p):
    s = 0.0
    for a, b in np.nditer([p, p[::-1]]):
        s = s + a * b
    return s


@pytest.mark.parametrize("f", [nditer_squares, nditer_transposed_chunks, nditer_memory_order_left_early])
def test_nditer_reverse(f):
    np.testing.assert_allclose(gradient(f, X6)[0], fd.gradient(f, X6)[0], rtol=1e-8, atol=1e-10)


def test_nditer_several_operands_refused():
    with pytest.raises(OverdubError):
        gradient(nditer_two_operands, X6)


def block_of(p):
    a = p[:4].reshape(2, 2)
    return np.block([[a, p[4:].reshape(2, 1)], [np.ones((1, 2)) * p[0], np.zeros((1, 1))]]).ravel() ** 2


def test_np_block_both_modes():
    want = fd.jacobian(block_of, X6)
    np.testing.assert_allclose(jacobian(block_of, X6), want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(jacfwd(block_of, X6), want, rtol=1e-6, atol=1e-9)


A = np.array([[0.3, 1.2, -0.4], [0.1, -0.8, 0.5], [0.7, 0.2, 0.1]])
W = np.arange(9.0).reshape(3, 3) / 7 - 0.3


def expm_weighted(a):
    return np.sum(W * scipy_linalg.expm(a.reshape(3, 3)))


def expm_batch(a):
    return scipy_linalg.expm(a.reshape(2, 3, 3) * 0.5).ravel()


def expm_one_by_one(s):
    return scipy_linalg.expm(np.array([[s]]))[0, 0] + scipy_linalg.expm(s * 2.0)[0, 0]


def test_expm_gradient_and_jacfwd():
    x = A.ravel()
    want = fd.gradient(expm_weighted, x)[0]
    np.testing.assert_allclose(gradient(expm_weighted, x)[0], want, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(jacfwd(expm_weighted, x), want, rtol=1e-8, atol=1e-10)


def test_expm_batched_both_modes():
    x = np.concatenate([A.ravel(), W.ravel()])
    np.testing.assert_allclose(jacobian(expm_batch, x), fd.jacobian(expm_batch, x, matrix=True), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacfwd(expm_batch, x), fd.jacobian(expm_batch, x), rtol=1e-6, atol=1e-8)


def test_expm_of_one_number():
    want = fd.derivative(expm_one_by_one, 0.3)
    assert gradient(expm_one_by_one, 0.3)[0] == pytest.approx(want, rel=1e-7)
    assert jacfwd(expm_one_by_one, 0.3) == pytest.approx(want, rel=1e-7)
