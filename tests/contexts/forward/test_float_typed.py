"""The tangent twin answers an operator's test of its operands' classes by one flag, set on entry, where the
operands are float-typed (`lowered.activity.float_typed`: bound only from float constants and arithmetic of floats,
provided the parameters they come from entered as floats). Each derivative against its closed form, with
floats and with other values (ints, Fractions, lists, arrays), where the flag is False and the tests run."""
from fractions import Fraction

import numpy as np
import pytest

from contexts import derivative, jvp
from contexts.forward.tangent import _lowered
from contexts.lowered.activity import float_typed


def power(x, n):
    r = 1.0
    while n > 0:
        n -= 1
        r = r * x
    return r


def scaled(x, k):
    y = x * 3
    z = y / k - x
    return z * y


def looped(x):
    acc = 0.0
    for r in (x, 2 * x):  # (r bound by a loop: not float-typed)
        acc = acc + r * x
    return acc


def repeated(x, s):
    t = s * 2  # (s a list: repetition, never the product rule)
    return x * len(t)


def test_float_typed_names():
    fdef, _ = _lowered(power)
    found = float_typed(fdef)
    assert set(found) >= {"r", "x"} and found["r"] >= {"r", "x"}
    fdef, _ = _lowered(looped)
    assert "r" not in float_typed(fdef)


@pytest.mark.parametrize("x", [1.01, Fraction(3, 2), 2])
def test_power_of_each_kind(x):
    assert derivative(lambda t: power(t, 7), x) == pytest.approx(7 * float(x) ** 6)
    assert derivative(lambda t: power(t, 7), x) == 7 * x ** 6 or isinstance(x, float)


def test_mixed_operands():
    assert derivative(lambda x: scaled(x, 2.0), 1.5) == pytest.approx(6 * 1.5 * (3 / 2.0 - 1))
    assert derivative(lambda x: scaled(x, 2), 1.5) == pytest.approx(6 * 1.5 * (3 / 2 - 1))
    assert derivative(lambda k: scaled(1.5, k), 2.0) == pytest.approx(-9 * 1.5 ** 2 / 2.0 ** 2)
    assert derivative(looped, 1.5) == pytest.approx(6 * 1.5)
    assert derivative(lambda x: repeated(x, [1.0, 2.0]), 1.5) == pytest.approx(4.0)


def test_arrays_where_floats_were_expected():
    v = np.array([1.0, 2.0, 3.0])
    y, t = jvp(lambda x, w: scaled(x, w).sum(), (1.5, v), (1.0, np.zeros(3)))
    assert t == pytest.approx(np.sum(6 * 1.5 * (3 / v - 1)))
    y, t = jvp(lambda x, w: scaled(x, w).sum(), (1.5, v), (0.0, np.ones(3)))
    assert t == pytest.approx(np.sum(-9 * 1.5 ** 2 / v ** 2))
