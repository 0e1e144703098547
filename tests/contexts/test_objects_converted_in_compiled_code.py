"""Objects of a class that turns itself into a number by its own Python method (`__float__`, `__complex__`,
`__index__`), handed to compiled code that converts them: numpy building an array of them, math's functions,
`"%f" % obj`, an array's `fill`. The method runs from C, out of reverse mode's sight and outside forward
mode's context: each case is right (against central differences) or refused, never a wrong number or a
Python error of the engine's making.

Session 68 found `np.array([[obj]], float)` (a nested list) and `a.fill(obj)` silently 0 in reverse mode
(the check for such objects looked one list deep, and not at the in-place rules), and forward mode's
TypeErrors "V.__float__ returned non-float (type Dual)" from numpy's conversions and `%` formatting."""

import math
import operator
import statistics

import numpy as np
import pytest

from contexts import derivative, gradient
from overdub.errors import OverdubError
from tests import fd


class Number:
    def __init__(self, v):
        self.v = v

    def __float__(self):
        return self.v * 3.0

    def __complex__(self):
        return complex(self.v * 3.0)

    def __abs__(self):
        return self.v * 5.0

    def __round__(self, n=None):
        return self.v * 7.0

    def __neg__(self):
        return Number(-self.v * 2.0)

    def __rpow__(self, o):
        return o ** (self.v * 2.0)

    def exp(self):
        return math.exp(self.v * 2.0)


def _filled(w):
    a = np.zeros(2)
    a.fill(Number(w))
    return float(a[0])


def _stored(w):
    a = np.zeros(2)
    a[0] = Number(w)
    return float(a[0])


CASES = {
    "np.array of a list": lambda w: float(np.sum(np.array([Number(w), Number(2 * w)], dtype=float))),
    "np.array of a nested list": lambda w: float(np.array([[Number(w)]], float)[0, 0]),
    "np.asarray of nested tuples": lambda w: float(np.asarray(((Number(w),),), dtype=float)[0, 0]),
    "np.array of a mixed nested list": lambda w: float(np.array([[w, Number(w)]], dtype=float)[0, 1]),
    "np.full": lambda w: float(np.full(2, Number(w), dtype=float)[0]),
    "fill": _filled,
    "store": _stored,
    "astype": lambda w: float(np.array([Number(w)], dtype=object).astype(float)[0]),
    "np.fromiter": lambda w: float(np.fromiter([Number(w), Number(w)], dtype=float).sum()),
    "np.float64": lambda w: float(np.float64(Number(w))),
    "np.exp of an object array": lambda w: float(np.exp(np.array([Number(w)], dtype=object))[0]),
    "math.sqrt": lambda w: math.sqrt(Number(w)),
    "math.fsum": lambda w: math.fsum([Number(w), Number(w)]),
    "statistics.fmean": lambda w: statistics.fmean([Number(w), Number(w)]),
    "float": lambda w: float(Number(w)),
    "complex": lambda w: complex(Number(w)).real,
    "abs": lambda w: abs(Number(w)),
    "round": lambda w: round(Number(w), 2),
    "power": lambda w: 2.0 ** Number(w),
    "negation": lambda w: operator.neg(Number(w)).v,
    "percent format": lambda w: w * float("%.1f" % 1.0) + 0.0 * len("%f" % Number(w)),
}


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.one_mode
def test_an_object_converted_by_its_own_method_is_right_or_refused(case, mode):
    f = CASES[case]
    want = fd.derivative(f, 0.7)
    try:
        got = gradient(f, 0.7)[0] if mode == "reverse" else derivative(f, 0.7)
    except OverdubError:
        return
    assert abs(got - want) <= 1e-6 * max(1.0, abs(want)), (got, want)
