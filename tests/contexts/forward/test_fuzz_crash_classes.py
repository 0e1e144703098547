"""Crash classes the program fuzzer found in forward mode (derivative, jvp, jacfwd, hessian), each
reduced to a few lines and checked against central finite differences."""

import math

import numpy as np
import pytest

from contexts.compose import hessian
from contexts.forward import derivative, jacfwd, jvp

from tests import fd

X = np.array([0.4, 0.5, 0.7])
D = np.array([1.0, -2.0, 0.5])


def check_all_modes(f, fv, x=X, d=D):
    """f (vector -> float) through jvp, derivative and hessian, fv (vector -> vector) through jacfwd."""
    expected = float(fd.derivative(lambda s: f(x + s * d), 0.0))
    y, dy = jvp(f, (x,), (d,))
    assert np.isclose(y, f(x)) and np.isclose(dy, expected, rtol=1e-6, atol=1e-8)
    assert np.isclose(derivative(lambda s: f(x + s * d), 0.0), expected, rtol=1e-6, atol=1e-8)
    assert np.allclose(jacfwd(fv, x), fd.jacobian(fv, x), rtol=1e-6, atol=1e-8)
    assert np.allclose(hessian(f, x), fd.hessian(f, x), rtol=1e-4, atol=1e-5)


# -- 1. np.concatenate of a Python list holding a plain list beside a perturbed array ---------------

def concat_f(x):
    return np.sum(np.sin(np.concatenate([[0.0], x])) * np.arange(4.0))


def concat_fv(x):
    return np.diff(np.concatenate([[0.0], x * x, (1.0, 2.0)]))


def stack_f(x):
    return np.sum(np.vstack([[0.5, 1.0, 2.0], x]) ** 2 * np.hstack([[1.0], x, [2.0]])[:3])


def test_concatenate_with_a_list_item():
    check_all_modes(concat_f, concat_fv)
    check_all_modes(stack_f, concat_fv)


# -- 2. a perturbed value stored into a plain np.zeros array ------------------------------------------

def fill_zeros(x, *rest):
    t = np.zeros((3,))
    t[1] = x[1]
    t[0] = x[0] * x[2]
    return np.sum(np.sin(t + x)) + sum(rest)


def test_store_into_plain_zeros_through_a_starred_call():
    """The tangent twin takes `f(x, *rest)` (rest inactive or active), so the store works."""
    rest = (0.25,)
    g = lambda s: fill_zeros(X + s * D, *rest)
    assert np.isclose(derivative(g, 0.0), fd.derivative(g, 0.0), rtol=1e-6)
    h = lambda s: fill_zeros(*(X + s * D, s * s, 3.0 * s))
    assert np.isclose(derivative(h, 0.5), fd.derivative(h, 0.5), rtol=1e-6)
    k = lambda a: np.array([fill_zeros(a, *rest), fill_zeros(*[a * a])])
    assert np.allclose(jacfwd(k, X), fd.jacobian(k, X), rtol=1e-6, atol=1e-8)


def test_store_into_zeros_on_duals():
    """Where only dual numbers can run the function (here a `**` call), the array np.zeros made is a
    dual of zero tangent, which holds the stored values' tangents."""
    kw = {}
    g = lambda s: fill_zeros(X + s * D, **kw)
    assert np.isclose(derivative(g, 0.0), fd.derivative(g, 0.0), rtol=1e-6)


def fill_arange(x, *rest):
    t = np.arange(3.0)
    t[1] = x[1]
    return np.sum(np.sin(t + x)) + sum(rest)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_store_into_a_plain_array_on_duals_is_refused_by_line():
    """An array made otherwise (np.arange) is plain: numpy's 'setting an array element with a sequence'
    becomes a DualConversionError naming the line and the fix."""
    from contexts.forward import DualConversionError
    kw = {}
    with pytest.raises(DualConversionError, match=r"(?s)plain float array.*test_fuzz_crash_classes.py:\d+.*zeros_like"):
        derivative(lambda s: fill_arange(X + s * D, **kw), 0.0)


# -- 3. a bound method of a C type with a rule keyed (type, name): list.index, list.count, ndarray.sum --

def methods_f(a, b):
    t = [b, a * b]
    i = t.index(t[1])
    g = t.count
    return t[i] * 2.0 + g(t[0]) * b + math.sin((a, b).index(b) * a)


def sum_by_name(x):
    g = x.sum
    return g() * x[0]


def test_c_type_bound_methods():
    v = np.array([0.8, 0.55])
    f = lambda w: methods_f(w[0], w[1])
    expected = fd.jacobian(f, v)
    y, dy = jvp(methods_f, (0.8, 0.55), (1.0, 2.0))
    assert np.isclose(dy, expected @ [1.0, 2.0], rtol=1e-6)
    assert np.isclose(derivative(lambda s: methods_f(0.8 + s, 0.55 + 2 * s), 0.0), expected @ [1.0, 2.0])
    assert np.allclose(jacfwd(f, v), expected, rtol=1e-6)
    assert np.allclose(hessian(f, v), fd.hessian(f, v), rtol=1e-4, atol=1e-5)
    check_all_modes(sum_by_name, lambda x: sum_by_name(x) * x)


# -- 4. hessian (forward over reverse) through a class's Python operators with a dual operand ---------

class _V2:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, o):
        return _V2(self.x + o.x, self.y + o.y)

    def __mul__(self, k):
        return _V2(self.x * k, self.y * k)

    def __rmul__(self, k):
        return _V2(k * self.x, self.y * k * k)

    def __truediv__(self, k):
        return _V2(self.x / k, self.y / (k + 1.0))


def vector_class_f(v):
    a, b = v[0], v[1]
    t = _V2(a, b * a) + _V2(b, 0.5) * a
    u = b * t + t / (a * b)
    return t.x * t.y + u.x * u.y


@pytest.mark.parametrize("mode", ["hessian", "jacfwd", "jvp"])
def test_class_operators_with_a_dual_operand(mode):
    v = np.array([0.54, 0.8])
    if mode == "hessian":
        assert np.allclose(hessian(vector_class_f, v), fd.hessian(vector_class_f, v), rtol=1e-4, atol=1e-5)
    elif mode == "jacfwd":
        assert np.allclose(jacfwd(vector_class_f, v), fd.jacobian(vector_class_f, v), rtol=1e-6)
    else:
        _, dy = jvp(vector_class_f, (v,), (np.array([1.0, -0.5]),))
        assert np.isclose(dy, fd.jacobian(vector_class_f, v) @ [1.0, -0.5], rtol=1e-6)


# -- the tangent twin: an active scalar or small array plus an inactive larger array -----------------
# (silently wrong before: the tangent kept the small shape, so a sum over the result counted it once)

def add_inactive_wider(x, w):
    v = x @ x * 0.1 + w
    u = (x[0] - w) * 2.0
    return np.sum(v) + np.sum(u * u)


def test_active_plus_wider_inactive_array():
    w = np.array([1.0, 0.5, 2.0, 0.25])
    x = np.array([0.4, 0.5])
    g = lambda a: add_inactive_wider(a, w)
    expected = fd.jacobian(g, x)
    _, dy = jvp(add_inactive_wider, (x, w), (np.array([1.0, -2.0]), None))
    assert np.isclose(dy, expected @ [1.0, -2.0], rtol=1e-6)
    assert np.isclose(derivative(lambda s: add_inactive_wider(x + s * np.array([1.0, -2.0]), w), 0.0),
                      expected @ [1.0, -2.0], rtol=1e-6)
