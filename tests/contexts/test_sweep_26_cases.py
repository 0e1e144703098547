"""Cases found by the sweeps of session 26 and left from session 25, each checked against central
differences or a closed form, in every mode that takes them."""

import numpy as np
import pytest

from contexts import gradient, jacfwd, jacobian, jacobian_sparsity, vjp
from tests import fd

X = np.array([0.7, -0.45, 1.1])


# -- `a op= b` by a class's own in-place method -------------------------------------------------

class NewOnIadd:
    """`__iadd__` returning a new object, not self: reverse mode counted the result's reads 3x."""

    def __init__(self, v):
        self.v = v

    def __iadd__(self, o):
        return NewOnIadd(self.v + o)

    def __imul__(self, o):
        return NewOnIadd(self.v * o)


class InPlaceField:
    """`__isub__` changing in place the array a field holds (`self.v -= o`), which the caller shares."""

    def __init__(self, v):
        self.v = v

    def __isub__(self, o):
        self.v -= o
        return self

    def __imul__(self, o):
        self.v *= o
        return self


class Outer:
    """An object holding an object whose in-place method changes a shared array."""

    def __init__(self, inner):
        self.inner = inner

    def __iadd__(self, o):
        self.inner -= o
        return self


def iadd_new(x):
    a = NewOnIadd(x * x)
    a += x * 1.3
    return np.sum(a.v)


def imul_new_twice(x):
    a = NewOnIadd(x)
    a *= x
    a += np.sin(x)
    a *= 2.0
    return np.sum(a.v)


def isub_shared(x):
    t = x * x
    a = InPlaceField(t)
    a -= x * 1.3  # t is now x*x - 1.3x
    return np.sum(t)


def isub_shared_both(x):
    t = x * x
    a = InPlaceField(t)
    a -= x * 1.3
    return np.sum(t * a.v)


def imul_shared_loop(x):
    t = x + 1.0
    a = InPlaceField(t)
    for _ in range(3):
        a *= x
    return np.sum(t) + np.sum(a.v)


def isub_nested(x):
    t = x * x
    o = Outer(InPlaceField(t))
    o += np.cos(x)
    return np.sum(t)


@pytest.mark.parametrize("f", [iadd_new, imul_new_twice, isub_shared, isub_shared_both, imul_shared_loop,
                               isub_nested])
def test_own_inplace_method_reverse(f):
    want = fd.gradient(f, X.copy())[0]
    np.testing.assert_allclose(gradient(f, X.copy())[0], want, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(vjp(f, (X.copy(),), 1.0)[1][0], want, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("f", [iadd_new, imul_new_twice, isub_shared, isub_shared_both, imul_shared_loop,
                               isub_nested])
def test_own_inplace_method_forward(f):
    want = fd.gradient(f, X.copy())[0]
    np.testing.assert_allclose(jacfwd(f, X.copy()), want, rtol=1e-7, atol=1e-9)


def iadd_new_scalar(x):
    a = NewOnIadd(x * x)
    a += x * 1.3
    return a.v


@pytest.mark.parametrize("mode", ["gradient", "derivative", "hessian"])
def test_own_inplace_method_scalar(mode):
    got, want = fd.in_mode(iadd_new_scalar, 0.7, mode)
    assert got == pytest.approx(want, rel=1e-6, abs=1e-8)


# -- a method changing in place an array its object holds a level down ---------------------------

class Holder:
    def __init__(self, inner):
        self.inner = inner

    def sub_field(self, o):
        self.inner.v -= o

    def sub_item(self, o):
        self.inner[0] -= o

    def sub_key(self, o):
        self.inner["k"] *= o


def nested_field(x):
    t = x * x
    Holder(InPlaceField(t)).sub_field(np.cos(x))
    return np.sum(t)


def nested_list(x):
    t = x * x
    h = Holder([t, 1.0])
    h.sub_item(np.cos(x))
    return np.sum(t * x)


def nested_dict(x):
    t = np.sin(x)
    h = Holder({"k": t})
    h.sub_key(x)
    h.sub_key(x)
    return np.sum(t)


@pytest.mark.parametrize("f", [nested_field, nested_list, nested_dict])
def test_method_changes_nested_shared_array(f):
    want = fd.gradient(f, X.copy())[0]
    np.testing.assert_allclose(gradient(f, X.copy())[0], want, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(jacfwd(f, X.copy()), want, rtol=1e-7, atol=1e-9)


# -- arrays a function makes by np.eye/np.identity/np.tri/np.copy, then fills -------------------

def transform(R, p):
    """pytransform3d's `transform_from` shape: a 4x4 identity filled with a rotation and a translation."""
    out = np.eye(4)
    out[:3, :3] = R
    out[:3, 3] = p
    c = np.copy(out)
    c[3, :3] = p * 2.0
    eye3 = np.identity(3)
    eye3[0] = p
    return out @ c + np.tri(4) * p[0] + np.sum(eye3)


def transform_by_keyword(q):
    return transform(R=np.outer(q[:3], q[3:]), p=q[:3])


def transform_from(R, p):
    out = np.eye(4)
    out[:3, :3] = R
    out[:3, 3] = p
    return out


def checked_transform(q):
    """A check on the filled matrix (pytransform3d's `np.allclose(A2B[3], [0, 0, 0, 1])`) before using it."""
    t = transform_from(R=np.outer(q[:3], q[3:]), p=q[:3])
    if not np.allclose(t[3], [0.0, 0.0, 0.0, 1.0]):
        raise ValueError("not a transform")
    return np.sum(t * t)


Q = np.array([0.43, -0.61, 0.29, 1.3, -0.7, 2.1])


def test_filled_identity_forward_and_reverse():
    want = fd.jacobian(transform_by_keyword, Q)
    np.testing.assert_allclose(jacfwd(transform_by_keyword, Q), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacobian(transform_by_keyword, Q), want, rtol=1e-6, atol=1e-8)
    pattern = jacobian_sparsity(transform_by_keyword, Q).toarray() != 0
    assert np.all((np.abs(want.reshape(16, 6)) > 1e-9) <= pattern)


def test_filled_identity_checked_gradient():
    want = fd.gradient(checked_transform, Q)[0]
    np.testing.assert_allclose(gradient(checked_transform, Q)[0], want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacfwd(checked_transform, Q), want, rtol=1e-6, atol=1e-8)
