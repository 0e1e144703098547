"""A module's list or dict that a callee stores differentiated values into, handed back by a function that
returns it (`def get(): return STATE`), then read whole (`sum(get())`).

Reverse mode gave a silently wrong gradient (0.0 for 12.6, half the slope elsewhere): the cotangent the read
gave the returned list reached the getter's adjoint as that of its module global, and was dropped there, so
the adjoint of the `append` that had stored the value found none. A read by item (`get()[-1]`) was right: its
cotangent went into the list's box. Now a module list's or dict's cotangent left at the end of an adjoint
goes into its box as well (`helpers.state_box`).

Also here: the calls at the start of a function, before any call with differentiated inputs, see the values
as they are then (`codegen._entering_prefix`): a captured dict, made differentiated only by a later call,
entered the first call constant (EoN's `get_PGF(pk)(x)`, whose key lookups were refused).

Each mode's own answer against central differences."""

import numpy as np
import pytest

import contexts
from contexts import gradient

from tests import fd
from tests.contexts.test_arguments_as_they_enter import Located

STATE = []
TABLE = {}


def put(v):
    STATE.append(v)


def get():
    return STATE


def table_put(k, v):
    TABLE[k] = v


def table():
    return TABLE


def read_whole(x):
    STATE.clear()
    put(x * 3)
    return sum(get()) * x


def read_twice(x):
    STATE.clear()
    put(x * 3)
    s, t = get(), get()
    return sum(s) * sum(t)


def read_directly_and_returned(x):
    STATE.clear()
    put(x * 3)
    put(x * x)
    return sum(STATE) + sum(get()) * x


def appended_between_reads(x):
    STATE.clear()
    put(x * 3)
    v = sum(get())
    put(x)
    return v * sum(get())


def appended_through_the_alias(x):
    STATE.clear()
    put(x)
    get().append(x * x)
    return sum(get()) * x


def arrays_held(x):
    STATE.clear()
    put(np.array([x, 2 * x]))
    return float(np.sum(get()[0] ** 2)) + float(np.sum(sum(get())))


def dict_values(x):
    TABLE.clear()
    table_put("a", x * 2)
    table_put("b", x ** 3)
    return table()["a"] * table()["b"] + sum(table().values())


def degree_pgf(pk):
    """EoN.analytic.get_PGF's body: a polynomial built by looking its coefficients up by key."""
    maxk = max(pk.keys())
    ks = np.linspace(0, maxk, maxk + 1)
    coefficients = np.array([pk.get(k, 0) for k in ks])
    return lambda x: coefficients.dot(x ** ks)


def captured_degrees():
    pk = {1: 0.2, 2: 0.3, 3: 0.5}
    return lambda x: degree_pgf(pk)(x)


@pytest.mark.one_mode
@pytest.mark.parametrize("f", [read_whole, read_twice, read_directly_and_returned, appended_between_reads,
                               appended_through_the_alias, arrays_held, dict_values, captured_degrees()],
                         ids=lambda f: f.__qualname__.split(".")[0])
def test_each_mode_against_central_differences(f):
    expected = fd.derivative(f, 0.7)
    assert abs(expected) > 0.1
    np.testing.assert_allclose(gradient(f, 0.7)[0], expected, rtol=1e-6)
    np.testing.assert_allclose(contexts.derivative(f, 0.7), expected, rtol=1e-6)


@pytest.mark.one_mode
def test_captured_degrees_closed_form():
    f = captured_degrees()
    np.testing.assert_allclose(gradient(f, 0.7)[0], 0.2 + 2 * 0.3 * 0.7 + 3 * 0.5 * 0.7 ** 2, rtol=1e-12)


@pytest.mark.one_mode
def test_a_new_constant_array_enters_a_constructor_constant():
    """`Located(np.zeros(3)).potential(x)`: the array, made here of constants, was taken for differentiated
    (the later call with x may store into the object holding it), and the setter's `> 0` at its 0 refused."""
    x = np.array([1.0, 2.0, -2.0])
    f = lambda x: Located(np.zeros(3)).potential(x)
    np.testing.assert_allclose(gradient(f, x)[0], -x / np.linalg.norm(x) ** 3, rtol=1e-12)


@pytest.mark.one_mode
def test_a_new_array_of_differentiated_values_enters_differentiated():
    """The same made of the inputs: it carries their derivative into the call."""
    x = np.array([1.0, 2.0, -2.0])
    f = lambda x: Located(np.array([x[0], 0.5, -1.0])).potential(x * 2.0)
    np.testing.assert_allclose(gradient(f, x)[0], fd.gradient(f, x)[0], rtol=1e-7)
