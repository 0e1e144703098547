"""`np.array(a)` copies (numpy's default `copy=True`): on a dual array the copy must have its own value
and tangent. rowan's `conjugate` (`c = np.array(q); c[..., 1:] *= -1`) changed the caller's q, value and
tangent, through an aliasing copy: jacfwd was silently wrong and the user's input array was changed.
`np.asarray` (and `np.array(a, copy=False)`) still share, as numpy's do. Against central differences."""

import numpy as np
import pytest

from contexts import derivative, gradient, hessian, jacfwd, jacobian
from contexts.forward import Dual, ForwardContext, Tag
from tests import fd

X = np.array([0.9, 0.1, 0.3, 0.2])


def _conjugate(q):
    c = np.array(q)
    c[..., 1:] *= -1
    return c


def _conjugate_dtype(q):
    c = np.array(q, dtype=float)
    c[1:] = -c[1:]
    return c


def _asarray_copy(q):
    c = np.asarray(q, copy=True)
    c[1:] *= 3.0
    return q * c


FUNCTIONS = [lambda q: q * _conjugate(q), lambda q: q * _conjugate_dtype(q), _asarray_copy]


@pytest.mark.parametrize("i", range(len(FUNCTIONS)))
@pytest.mark.parametrize("mode", ["jacfwd", "jacobian"])
def test_copy_is_a_copy(i, mode):
    f = FUNCTIONS[i]
    x = X.copy()
    want = fd.jacobian(f, X.copy())
    got = jacfwd(f, x) if mode == "jacfwd" else jacobian(f, x)
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)
    np.testing.assert_array_equal(x, X)  # the caller's array is left alone


@pytest.mark.parametrize("mode", ["jacfwd", "jacobian"])
def test_asarray_shares(mode):
    def f(q):
        c = np.asarray(q)  # no copy: the change is q's too, in numpy as here
        c *= 2.0
        return q * 1.0
    got = (jacfwd if mode == "jacfwd" else jacobian)(f, X.copy())
    np.testing.assert_allclose(got, 2.0 * np.eye(4))


def test_input_dual_left_alone():
    t = Tag()
    q = Dual(X.copy(), np.eye(4), t)
    y = ForwardContext().run(lambda q: q * _conjugate(q), q)
    np.testing.assert_array_equal(q.primal, X)
    np.testing.assert_array_equal(q.tangent, np.eye(4))
    np.testing.assert_allclose(y.primal, X * _conjugate(X))


def test_scalar_paths():
    def g(s):
        q = np.array([s, 2.0 * s, s * s])
        return float(np.sum(q * _conjugate(q)))
    assert derivative(g, 0.7) == pytest.approx(fd.derivative(g, 0.7), rel=1e-7)
    assert gradient(g, 0.7)[0] == pytest.approx(fd.derivative(g, 0.7), rel=1e-7)
    assert hessian(g, 0.7) == pytest.approx(-6.0 - 12.0 * 0.7 ** 2, rel=1e-6)  # g = -3 s^2 - s^4
