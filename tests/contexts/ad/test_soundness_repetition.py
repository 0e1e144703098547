"""Sequence repetition (`[t] * n`, `n * [t]`, `(t,) * n`) of containers holding differentiated values: the
copies are one object. Reverse mode added the copies' cotangents with `+`, which concatenates tuples
(`(1.4, 2.0) + (1.0, 1.0)`: the second copy's cotangent dropped, half the gradient) and counted one
object's box once per copy (twice the gradient). An array times a list is no repetition (numpy multiplies
elementwise): reverse mode took it for one and gave the array a zero gradient. Against central
differences, every mode."""

import numpy as np
import pytest

from tests import fd


def tuple_repeated(x):
    pools = [(x, 2.0)] * 2
    return pools[0][0] * pools[1][0]


def list_repeated(x):
    pools = [[x, 2.0]] * 3
    return pools[0][0] * pools[2][0] + pools[1][1] * x


def left_repeated(x):
    pools = 2 * [(x,)]
    return pools[0][0] * pools[1][0]


def tuple_of_tuples(x):
    t = (x, 2.0)
    pools = (t,) * 2
    return pools[0][0] * pools[1][0] * x


def iterated_copies(x):
    p = [tuple(q) for q in [[x, 1.0]]] * 2
    r = 0.0
    for a in p[0]:
        for b in p[1]:
            r += a * b
    return r


def copies_read_apart(x):
    p = [(x, 1.0)] * 2
    r = 0.0
    for a in p[0]:
        r += a * a
    for b in p[1]:
        r += b
    return r


def numbers_repeated(x):
    return sum([x, 0.5] * 3) * x


def array_repeated(x):
    a = np.array([x, 1.0])
    pools = [a] * 2
    return pools[0].sum() * pools[1][0]


def array_times_list(x):  # not repetition: numpy multiplies elementwise (reverse mode gave 0)
    return np.sum(np.exp(np.array([x, 2.0 * x])) * [1.0, 3.0])


def list_times_array(x):
    return np.sum([1.0, 3.0] * np.array([x, x * x]))


def list_times_numpy_integer(x):  # list * np.int64: repetition, a list
    return sum([x, 0.5] * np.int64(2)) * x


CASES = [tuple_repeated, list_repeated, left_repeated, tuple_of_tuples, iterated_copies, copies_read_apart,
         numbers_repeated, array_repeated, array_times_list, list_times_array, list_times_numpy_integer]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["gradient", "hessian", "derivative"])
def test_repetition(f, mode):
    got, want = fd.in_mode(f, 0.7, mode)
    assert float(got) == pytest.approx(want, rel=1e-5, abs=1e-6)
