"""An index that carries a derivative: `np.r_[y, 1.0]`, `np.c_[...]` and a class's own `__getitem__`
looked up at a differentiated value compute with the index, so its derivative flows through it (both
modes, against central differences). Before, the subscript of an inactive object was taken as constant
and the gradient came back zero, silently."""

import numpy as np
import pytest

from contexts import derivative, gradient, jacfwd
from contexts.ad.runtime import UnsupportedFunction
from tests import fd

Y = np.array([1.0, 2.0, -0.5])


class Table:
    """A lookup whose __getitem__ is Python code computing with the key."""

    def __init__(self, k):
        self.k = k

    def __getitem__(self, t):
        return self.k * t * t + 1.0


TABLE = Table(3.0)


def concat(y):
    return (np.r_[y, 1.0, y[:1]] ** 2).sum()


def columns(y):
    return (np.c_[y, 2.0 * y] ** 3).sum()


def lookup(t):
    return TABLE[t] * t


def lookup_tuple(t):
    return np.r_[t, 2.0 * t, 3.0].prod()


@pytest.mark.parametrize("f", [concat, columns])
def test_gradient_through_np_index_tricks(f):
    np.testing.assert_allclose(gradient(f, Y)[0], np.ravel(fd.gradient(f, Y)), rtol=1e-7, atol=1e-9)


def test_jacfwd_through_np_index_tricks():  # (np.c_ is refused in forward mode: its matrix code)
    f = concat
    np.testing.assert_allclose(jacfwd(f, Y), np.ravel(fd.gradient(f, Y)), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("f", [lookup, lookup_tuple])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_a_class_getitem_at_a_differentiated_key(f, mode):
    t = 0.7
    got = gradient(f, t)[0] if mode == "reverse" else derivative(f, t)
    assert got == pytest.approx(fd.derivative(f, t), rel=1e-7)


def test_container_and_key_both_differentiated():
    f = lambda k, t: Table(k)[t]  # noqa: E731  d/dk = t^2, d/dt = 2 k t
    assert gradient(f, 2.0, 3.0) == pytest.approx((9.0, 12.0))


class Bounds:
    def __getitem__(self, s):
        return s.start * 2.0


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_slice_bounds_given_a_derivative_are_refused_in_reverse_mode():
    with pytest.raises(UnsupportedFunction, match="slice bounds"):
        gradient(lambda a: Bounds()[a:3] + 0.0, 1.5)
    assert derivative(lambda a: Bounds()[a:3], 1.5) == pytest.approx(2.0)  # (forward mode: on duals)
