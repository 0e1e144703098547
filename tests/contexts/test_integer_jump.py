"""int() of a differentiated float that is exactly a nonzero integer: int() jumps there, and code that
takes a float's digits apart (`m, e = math.frexp(x)`, `int(m * 2**53)`: mpmath's conversion of floats)
carried the value in the integer and returned a derivative of 0 silently, in every mode. Refused now with
`IntegerJump`, naming the line; int() away from its jumps keeps its zero derivative."""

from __future__ import annotations

import math

import pytest

from contexts import derivative, gradient, hessian
from contexts.rules.builtins import IntegerJump
from tests import fd

MODES = {"gradient": lambda f, x: gradient(f, x)[0], "derivative": derivative,
         "hessian": lambda f, x: hessian(lambda v: f(v[0]), __import__("numpy").array([x]))[0, 0]}


def digits(x):
    m, e = math.frexp(x)
    n = int(m * (1 << 53))
    return n * 2.0 ** (e - 53)


def _from_digits(m, e):
    return int(m * (1 << 53)) * 2.0 ** (e - 53)


def digits_in_callee(x):
    return _from_digits(*math.frexp(x)) + x


def truncation(x):  # int() away from its jumps: zero derivative, right
    return float(int(x * 4.0)) / 4.0 + x * x


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("f", [digits, digits_in_callee], ids=lambda f: f.__name__)
def test_digits_refused(f, mode):
    assert fd.derivative(f, 0.7) != 0.0
    with pytest.raises(IntegerJump, match=r"int\(\) of a differentiated float.*\n  at .*test_integer_jump.py"):
        MODES[mode](f, 0.7)


@pytest.mark.parametrize("mode", list(MODES))
def test_truncation_right(mode):
    want = fd.derivative(truncation, 0.7) if mode != "hessian" else 2.0
    assert abs(MODES[mode](truncation, 0.7) - want) < 1e-6
