"""numpy's arithmetic of an array with a list or tuple of differentiated numbers, a named tuple's or a list
subclass's too: numpy converts the sequence item by item, so each item's derivative must reach the result.

Found in pycba (session 68): `ref += load.get_ref(L, eType)` adds a `LoadCNL` named tuple of a load's end
forces to an array. Reverse mode summed the array's cotangent into one number for the named tuple, as for a
scalar operand (0 for 3.27, silently); forward mode refused it. And forward mode's tangent twin multiplied
`np.ones(1) * (2 * w,)` with the int zero standing for `np.ones`' tangent, `0 * (t,)`, which repeats the tuple
0 times: an empty tangent, 0 for 2, silently. A `collections.deque` or a class numpy converts by the sequence
protocol, in C, gave 0 in reverse mode: refused now. Every case is checked against central differences."""

import collections
import operator
from collections import namedtuple
from typing import NamedTuple

import numpy as np
import pytest

from contexts import derivative, gradient
from overdub.errors import OverdubError
from tests import fd


class EndForces(NamedTuple):
    Va: float
    Ma: float


Pair = namedtuple("Pair", "a b")


class Row(list):
    pass


KINDS = {
    "tuple": lambda w: (w * 2.0, w * w),
    "list": lambda w: [w * 2.0, w * w],
    "NamedTuple": lambda w: EndForces(w * 2.0, w * w),
    "namedtuple": lambda w: Pair(w * 2.0, w * w),
    "list subclass": lambda w: Row([w * 2.0, w * w]),
}
WEIGHTS = np.array([1.0, 3.0])


def _by_syntax(op, ref, t, side):
    """`ref <op> t` (side 0) or `t <op> ref` as the operator's own syntax (a tangent twin's binary operation)."""
    if op == "+":
        return ref + t if side == 0 else t + ref
    if op == "-":
        return ref - t if side == 0 else t - ref
    if op == "*":
        return ref * t if side == 0 else t * ref
    if op == "/":
        return ref / t if side == 0 else t / ref
    return ref ** t if side == 0 else t ** ref


def _check(f, mode, x=0.7):
    want = fd.derivative(f, x)
    got = gradient(f, x)[0] if mode == "reverse" else derivative(f, x)
    assert abs(got - want) <= 1e-6 * max(1.0, abs(want)), (got, want)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("side", [0, 1])
@pytest.mark.parametrize("op", ["+", "-", "*", "/", "**"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.one_mode
def test_an_operator_of_an_array_and_a_sequence_of_numbers(kind, op, side, mode):
    make = KINDS[kind]

    def active(w):  # (the array computed from w too)
        ref = np.ones(2) * w + 0.5
        return float(_by_syntax(op, ref, make(w), side) @ WEIGHTS)

    def fresh(w):  # (a fresh array: its tangent the twins' int zero)
        ref = np.ones(2) + 0.5
        return float(_by_syntax(op, ref, make(w), side) @ WEIGHTS)

    _check(active, mode)
    _check(fresh, mode)


FUNCTIONS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "**": operator.pow}


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("op", FUNCTIONS)
@pytest.mark.parametrize("kind", ["tuple", "NamedTuple", "list subclass"])
@pytest.mark.one_mode
def test_the_operator_functions_of_an_array_and_a_sequence(kind, op, mode):
    make, fn = KINDS[kind], FUNCTIONS[op]

    def f(w):
        ref = np.ones(2) + 0.5
        return float((fn(ref, make(w)) + fn(make(w), ref)) @ WEIGHTS)
    _check(f, mode)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("op", ["+=", "-=", "*=", "/="])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.one_mode
def test_in_place_operators_and_stores_of_a_sequence_into_an_array(kind, op, mode):
    make = KINDS[kind]

    def f(w):
        ref = np.ones(2) + 0.5
        t = make(w)
        if op == "+=":
            ref += t
        elif op == "-=":
            ref -= t
        elif op == "*=":
            ref *= t
        else:
            ref /= t
        return float(ref @ WEIGHTS)

    def stored(w):
        ref = np.zeros(3)
        ref[1:] = make(w)
        return float(ref[1:] @ WEIGHTS)
    _check(f, mode)
    _check(stored, mode)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_a_one_item_tuple_times_a_fresh_array(mode):
    """`np.ones(1) * (2 * w,)`: forward mode's twin gave 0 (an empty tangent) where the derivative is 2."""
    def f(w):
        return float((np.ones(1) * (w * 2.0,)).sum())
    _check(f, mode)


class _Load:
    """pycba's shape: a load's released end forces as a named tuple, summed into an array per span."""

    def __init__(self, w):
        self.w = w

    def get_ref(self, L):
        cnl = EndForces(self.w * L / 2, self.w * L * L / 12)
        ref = np.zeros(2)
        ref[0] = 6 / (4 * L) * cnl.Ma
        ref[1] = 0.5 * cnl.Ma
        return EndForces(cnl.Va - ref[0], cnl.Ma - ref[1])


def beam_end_forces(w):
    ref = np.zeros(2)
    for load in (_Load(w), _Load(2.0 * w)):
        ref += load.get_ref(7.5)
    return float(ref @ WEIGHTS)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.one_mode
def test_named_tuples_of_end_forces_summed_into_an_array(mode):
    _check(beam_end_forces, mode, 20.0)


class Items:
    """A sequence by protocol alone (`__len__`, `__getitem__`): numpy converts it item by item, in C."""

    def __init__(self, *values):
        self.values = list(values)

    def __len__(self):
        return len(self.values)

    def __getitem__(self, i):
        return self.values[i]


SEQUENCES_BY_PROTOCOL = {"deque": lambda w: collections.deque([w * 2.0, w * w]),
                         "by protocol": lambda w: Items(w * 2.0, w * w)}


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("op", ["+", "*", "-", "+=", "store"])
@pytest.mark.parametrize("kind", SEQUENCES_BY_PROTOCOL)
@pytest.mark.one_mode
def test_a_sequence_numpy_converts_by_protocol_is_right_or_refused(kind, op, mode):
    """Reverse mode gave 0 for `np.ones(2) + deque([x, y])` (numpy drew the items in C, unrecorded): now
    refused, as `np.asarray(deque)` was."""
    make = SEQUENCES_BY_PROTOCOL[kind]

    def f(w):
        ref = np.ones(2) + 0.5
        t = make(w)
        if op == "+":
            ref = ref + t
        elif op == "*":
            ref = t * ref
        elif op == "-":
            ref = ref - t
        elif op == "+=":
            ref += t
        else:
            ref[:] = t
        return float(ref @ WEIGHTS)
    try:
        _check(f, mode)
    except OverdubError:
        pass


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("op", ["+", "np.add", "+="])
@pytest.mark.one_mode
def test_a_nested_list_of_numbers_with_a_column(op, mode):
    def f(w):
        col = np.ones((2, 1)) + 0.5
        t = [[w * 2.0], [w * w]]
        if op == "+":
            col = col + t
        elif op == "np.add":
            col = np.add(col, t)
        else:
            col += t
        return float(col[:, 0] @ WEIGHTS)
    _check(f, mode)
