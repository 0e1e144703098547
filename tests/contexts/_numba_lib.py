"""numba functions for tests/contexts/test_numba_compiled.py, in a plain module as a library's are (defined
in the test module itself, the keyword test passed before the fix it checks: not yet understood why)."""

import math

import numba
import numba.extending


@numba.njit
def objective(x, c):
    return -(x - c) ** 2 + 0.1 * math.sin(x)


@numba.njit
def scaled(func, x, scale, args=()):
    """quantecon's solvers' shape: an @njit taking an @njit objective and its parameters by `args=`."""
    return scale * func(x, *args)


def scaled_objective(c):
    return scaled(objective, 0.3, 3.0, args=(c,))


def _twice_stub(x):  # (its Python is a stub: numba's implementation is the @overload below)
    pass


@numba.extending.overload(_twice_stub)
def _twice_impl(x):
    def impl(x):
        return 2.0 * x
    return impl


@numba.njit
def twice(x):
    return _twice_stub(x) + 0.0 * x


def through_a_stub(x):
    return twice(x) * x
