"""A twin's call of a module's C function on one argument tries `call`'s math-of-a-float case first
(`runtime.hot_float_call`), and hands anything else to `call`: the same gradients either way, whatever the
argument (a float, an int, a numpy float64, an array), and whatever the name holds when the call runs."""

from __future__ import annotations

import math
import types
from math import cos, exp

import numpy as np
import pytest

from contexts import gradient
from contexts.ad import ADContext
from contexts.ad.runtime import hot_float_call


def sincos(x):
    return math.sin(x) + math.cos(x)


def imported(x):
    return cos(x) * exp(x)


def of_a_constant(x):
    return x * math.sqrt(2.0)


def test_floats():
    x = 0.3
    assert gradient(sincos, x)[0] == math.cos(x) - math.sin(x)
    assert gradient(imported, x)[0] == pytest.approx(-math.sin(x) * math.exp(x) + math.cos(x) * math.exp(x),
                                                      rel=1e-15)
    assert gradient(of_a_constant, x)[0] == math.sqrt(2.0)


def test_other_arguments_take_the_general_path():
    assert gradient(sincos, np.float64(0.3))[0] == pytest.approx(math.cos(0.3) - math.sin(0.3), rel=1e-15)
    assert gradient(sincos, 1)[0] == pytest.approx(math.cos(1) - math.sin(1), rel=1e-15)
    assert hot_float_call(math.sin, 1) is None and hot_float_call(math.sin, np.float64(1.0)) is None
    assert hot_float_call(len, 1.0) is None and hot_float_call(lambda v: v, 1.0) is None
    y, pb = hot_float_call(math.sin, 0.5)
    assert y == math.sin(0.5) and pb is not None


def calls_namespace(x):
    return NS.f(x)


NS = types.ModuleType("ns")  # (a module: its C function's call is made the hot way, `codegen._builtin_callee`)
NS.f = math.sin


def test_a_name_rebound_between_calls():
    from contexts import show_adjoint
    assert "__od_hot_float__" in show_adjoint(calls_namespace, raw=True)
    assert gradient(calls_namespace, 0.4)[0] == math.cos(0.4)
    NS.f = math.exp  # (another C function)
    assert gradient(calls_namespace, 0.4)[0] == math.exp(0.4)
    NS.f = lambda v: v * v  # (a Python function: its twin, through `call`)
    assert gradient(calls_namespace, 0.4)[0] == 0.8
    NS.f = math.sin


def test_under_a_checking_context():
    with ADContext(check=True) as ctx:
        assert ctx.gradient(sincos, 0.3)[0] == pytest.approx(math.cos(0.3) - math.sin(0.3), rel=1e-15)
