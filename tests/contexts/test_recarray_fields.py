"""A constant record array read by field name (`c.c0`, numpy's recarray: its own `__getattribute__` calls
`object.__getattribute__(self, attr)`, then `self.getfield(...)`), through an object that holds the
differentiated value: pyGMM's ground-motion models read their coefficient tables so (`c = self.COEFF`). Reverse
mode refused `object.__getattribute__` on the array (no rule for the C function); now the lookup runs as
object's, a C method bound and an array's metadata read as no value of it."""

import numpy as np
import pytest

from contexts import derivative, gradient, jacobian, jvp
from tests.fd import derivative as fd_derivative

TABLE = np.rec.fromarrays([np.array([1.0, 2.0]), np.array([3.0, 5.0])], names="c0,c1")


class Model:
    COEFF = TABLE

    def __init__(self, m):
        self.m = m

    def response(self):
        c = self.COEFF  # (read through self, which holds m: taken as differentiated)
        return c.c0 * self.m + c.c1 * self.m ** 2 + c.shape[0] + c.dtype.itemsize


def response(m):
    return Model(m).response()


@pytest.mark.one_mode
def test_reverse_jacobian_of_a_table_read_by_field_names():
    np.testing.assert_allclose(jacobian(response, 1.5, mode="reverse"), fd_derivative(response, 1.5), rtol=1e-8)


@pytest.mark.one_mode
def test_forward_derivative_and_jvp():
    np.testing.assert_allclose(derivative(response, 1.5), fd_derivative(response, 1.5), rtol=1e-8)
    np.testing.assert_allclose(jvp(response, (1.5,), (2.0,))[1], 2.0 * fd_derivative(response, 1.5), rtol=1e-8)


class Scaled(np.ndarray):
    """An array subclass with a `__getattribute__` of its own, as recarray's: object's lookup first, a
    default after."""

    def __getattribute__(self, attr):
        try:
            return object.__getattribute__(self, attr)
        except AttributeError:
            pass
        return 7.0


class Holder:
    T = np.array([[1.0, 2.0], [3.0, 4.0]]).view(Scaled)

    def __init__(self, x):
        self.x = x

    def value(self):
        c = self.T
        return c.sum() * self.x + c.shape[0] * self.x + c.missing * self.x ** 2


@pytest.mark.one_mode
def test_object_getattribute_on_an_array_subclass():
    f = lambda x: Holder(x).value()  # noqa: E731
    (g,) = gradient(f, 2.0)
    np.testing.assert_allclose(g, 10.0 + 2.0 + 2 * 7.0 * 2.0, rtol=1e-12)  # (closed form: 12 + 14 x)
    np.testing.assert_allclose(g, fd_derivative(f, 2.0), rtol=1e-8)


class Live(np.ndarray):
    """The same lookup on a differentiated array: a view of the values (`.T`) past the class's own
    `__getattribute__` is not metadata; refused, or right."""

    def __getattribute__(self, attr):
        return object.__getattribute__(self, attr)


def test_a_view_read_past_the_own_getattribute_is_right_or_refused():
    from overdub.errors import OverdubError

    def f(x):
        a = (x * np.array([[1.0, 2.0], [3.0, 4.0]])).view(Live)
        return float(np.asarray(a.T)[0, 1] * 5.0)
    try:
        (g,) = gradient(f, 1.5)
    except OverdubError:
        return
    np.testing.assert_allclose(g, 15.0, rtol=1e-12)
