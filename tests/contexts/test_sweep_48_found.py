"""Cases found by session 48's sweep of packages new to the project (each minimised from the package's code),
checked against finite differences."""

import numpy as np
import pytest

from contexts import gradient
from tests.modes import assert_scalar_modes


class _Holder:
    def __init__(self, v):
        self.v = v


_NS: dict = {}
exec(compile("def name_of(c):\n    return c.__name__\n", "<generated>", "exec"), _NS)
_name_of = _NS["name_of"]  # a function without source (networkx's generated `argmap` decorators, under colormath)


def _class_by_attribute(x):
    a = _Holder(x)
    return a.v * len(_name_of(a.__class__))  # the class of an object holding x: a constant, as type(a) is


def _class_by_type(x):
    a = _Holder(x)
    return a.v * len(_name_of(type(a))) + a.v ** 2


@pytest.mark.parametrize("f", [_class_by_attribute, _class_by_type])
def test_the_class_of_an_object_holding_a_derivative(f):
    """colormath's `convert_color` (networkx's generated code handed `obj.__class__`): refused, NoSource."""
    assert_scalar_modes(f, 3.0, second=False)


# -- a generator yielding one function more than once (multipledispatch's `dispatch_iter`, under pyrr's object API):
# refused as a changeable object yielded twice; a function's state is its code --

def _double(v):
    return 2 * v


_SIGNATURES = {(int,): _double, (float,): _double, (object,): _double}


def _candidates(t):
    for sig, fn in _SIGNATURES.items():
        if issubclass(t, sig[0]):
            yield fn


def _dispatched(x):
    fn = next(_candidates(type(x)))
    return fn(x) * x


def test_a_generator_yielding_one_function_twice():
    assert_scalar_modes(_dispatched, 3.0, second=False)


# -- a global function that only reads a list it is given (`_kept_params`): the caller's constant list is no
# object it may store a derivative into (taken for one, every value read from it was differentiated) --

def _weighted(kv, s):
    return sum(k * s for k in kv) + len(kv) * kv[0]


def _appends_to_items(rows, v):
    for row in rows:
        row.append(v)


def _appends_through_or(kv, v):
    items = kv or []
    items.append(v)


def _only_read(x):
    p = [1.0, 2.0]
    return _weighted(p, x) + p[0] * p[1]


def _items_changed(x):
    rows = [[1.0], [2.0]]
    _appends_to_items(rows, x * x)
    return rows[1][-1] * x


def _changed_through_an_alias(x):
    p = [1.0]
    _appends_through_or(p, x * 2)
    return p[-1] * x


@pytest.mark.parametrize("f", [_only_read, _items_changed, _changed_through_an_alias])
def test_arguments_a_callee_only_reads(f):
    assert_scalar_modes(f, 1.3, second=False)


def test_which_parameters_a_function_only_reads():
    from contexts.lowered.activity import _kept_params
    assert _kept_params(_weighted) == frozenset({0, 1})
    assert _kept_params(_appends_to_items) == frozenset()  # (v is stored: held by rows, no longer only read)
    assert _kept_params(_appends_through_or) == frozenset()


# -- a value formatted by a format string made of text (geomdl's knot vector normalised to `obj.precision`
# decimals, read from an object holding a derivative): neither the text's method nor `float()` of its result
# stores into what it is given, so a constant handed to them stays a constant (it was taken for differentiated
# and its text's parse refused, TextRoundTrip) --

class _Curve:
    def __init__(self, v):
        self.v = v
        self.precision = 18


def _normalised(kv, decimals):
    return float(("{:." + str(decimals) + "f}").format(kv[0] / kv[-1]))


def _normalised_list(kv, decimals):
    return [float(("{:." + str(decimals) + "f}").format(k / kv[-1])) for k in kv]


def _precision_from_an_object(x):
    c = _Curve(x)
    return c.v * _normalised([1.0, 2.0], c.precision) + c.v * _normalised_list([1.0, 4.0], decimals=c.precision)[0]


def _text_of_the_input_parsed(x):
    c = _Curve(x)
    return _normalised([c.v, 2.0], c.precision)


def test_a_constant_formatted_by_a_format_string_read_from_an_object():
    assert_scalar_modes(_precision_from_an_object, 3.0, second=False)


def test_the_input_formatted_and_parsed_back_is_still_refused():
    from contexts.lowered.runtime import TextRoundTrip
    with pytest.raises(TextRoundTrip):
        gradient(_text_of_the_input_parsed, 3.0)


# -- a constant stored through a property's setter of an object holding a derivative (geomdl's `curve.knotvector
# = [...]`, normalised through text by the setter): the setter's twin took the value for differentiated --

class _Spline:
    def __init__(self, c):
        self.c = c
        self._knots = None

    @property
    def knots(self):
        return self._knots

    @knots.setter
    def knots(self, value):
        self._knots = [float("{:.12f}".format(v / value[-1])) for v in value]

    def at(self, t):
        return self.c * sum(k * t for k in self._knots)


def _knots_set_to_a_constant(x):
    s = _Spline(x)
    s.knots = [0.0, 1.0, 4.0]
    return s.at(2.0)


def _knots_set_to_the_input(x):
    s = _Spline(1.0)
    s.knots = [0.0, x, 4.0]
    return s.at(2.0)


def test_a_constant_stored_through_a_property_setter():
    assert_scalar_modes(_knots_set_to_a_constant, 3.0, second=False)


def test_the_input_stored_through_a_property_setter_and_parsed_is_still_refused():
    from contexts.lowered.runtime import TextRoundTrip
    with pytest.raises(TextRoundTrip):
        gradient(_knots_set_to_the_input, 3.0)


# -- a class's own `__len__` returning a numpy integer (lifelines' `_BTree`, `return self._counts[0]`) on an
# object holding the input: forward mode asked for an exact int (a TypeError, which also made reverse mode's
# check of a special point fail, refusing lifelines' concordance_index) --

class _Counted:
    def __init__(self, values):
        self.values = values
        self._counts = np.array([3, 1, 1])

    def __len__(self):
        return self._counts[0]


def _times_length(x):
    return x * len(_Counted(np.array([x, 2.0, 3.0])))


def test_a_length_given_as_a_numpy_integer():
    assert_scalar_modes(_times_length, 0.8, second=False)


# -- a list holding perturbed values stored into a slice of an array the function made (trimesh's
# `translation_matrix`: `M = np.eye(4); M[:3, 3] = direction[:3]` after a loop over direction): forward mode took
# the list whole and numpy asked the dual for a plain array (refused) --

def _translation(direction):
    if any("sympy" in str(type(v)) for v in direction):
        raise NotImplementedError
    M = np.eye(len(direction) + 1)
    M[:len(direction), len(direction)] = direction
    return M


def _translated(x):
    return float((_translation([0.0, x, x * x]) @ np.array([1.0, 2.0, 3.0, 1.0])).sum())


def _nested_rows(x):
    rows = [[x, 1.0], [2.0, x * x]]
    for _ in rows:
        pass
    M = np.zeros((2, 2))
    M[:] = rows
    return float(np.linalg.det(M + np.eye(2)))


@pytest.mark.parametrize("f", [_translated, _nested_rows])
def test_a_list_of_perturbed_values_stored_into_a_slice(f):
    assert_scalar_modes(f, 1.3)
