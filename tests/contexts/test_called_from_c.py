"""Functions that C code calls for the user: `map(f, xs)` and `filter(f, xs)` call f from C, where no
context intercepts it. Library code such as `rate, pv = map(np.asarray, (rate, pv))` (numpy-financial,
seawater) then handed numpy a dual to convert. Each call of f is made as the user's code would make it,
in every mode; compared with central differences."""

import math

import numpy as np
import pytest

from contexts import derivative, gradient, jacfwd
from tests import fd


def _as_arrays(r, p):
    r, p = map(np.asarray, (r, p))  # the library idiom
    return r * np.log1p(p)


def _as_any_arrays(x):
    s, t = list(map(np.asanyarray, (x, 2.0 * x)))
    return float(s * t + np.sin(t))


def _map_math(x):
    return sum(map(math.sin, [x, 2.0 * x, x * x]))


def _map_two(x):
    return sum(map(lambda a, b: a * math.exp(b), [x, 1.0], [0.5, x]))


def _filter_math(x):
    return sum(filter(lambda v: math.cos(v) > -2.0, [x, 3.0 * x]))


def _lazy(x):
    it = map(math.sqrt, [x, x + 1.0, x + 2.0])
    first = next(it)
    return first * sum(it)


CASES = [lambda x: float(_as_arrays(x, 0.3)), lambda x: float(_as_arrays(0.3, x)), _as_any_arrays, _map_math,
         _map_two, _filter_math, _lazy]
MODES = {"reverse": lambda f, x: gradient(f, x)[0], "forward": derivative,
         "jacfwd": lambda f, x: jacfwd(lambda v: np.array([f(v[0])]), np.array([x]))[0, 0]}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("i", range(len(CASES)))
def test_function_called_by_map(mode, i):
    f = CASES[i]
    assert MODES[mode](f, 0.7) == pytest.approx(fd.derivative(f, 0.7), rel=1e-7)


def test_map_stays_lazy_forward():
    """(reverse mode's stand-in for map is eager: an endless iterable there does not end)"""
    def f(x):
        it = map(lambda k: x * k, __import__("itertools").count())  # infinite: must not be drained
        return next(it) + next(it)
    assert derivative(f, 0.7) == pytest.approx(1.0)


# -- a C type's method unbound, its object first: `copy.copy(a)` calls `type(a).__copy__(a)` ---------

def _copies(x):
    import copy
    a = np.array([x, 2.0 * x])
    b = copy.copy(a)
    c = copy.deepcopy(a)
    b[0] = 3.0
    return float(np.sum(b * c) + a[0])


def _unbound_sum(x):
    return float(np.ndarray.sum(np.array([x, x * x])) * np.ndarray.__copy__(np.array([x]))[0])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [_copies, _unbound_sum])
def test_unbound_c_method(mode, f):
    assert MODES[mode](f, 0.7) == pytest.approx(fd.derivative(f, 0.7), rel=1e-7)
