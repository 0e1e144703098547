"""numba functions for tests/contexts/test_numba_compiled.py, in a module pytest does not rewrite (its
assertion rewriting recompiles test modules, whose functions forward mode then runs by duals, not by the
tangent twin the users' code gets)."""

import math

import numba


@numba.njit
def objective(x, c):
    return -(x - c) ** 2 + 0.1 * math.sin(x)


@numba.njit
def scaled(func, x, scale, args=()):
    """quantecon's solvers' shape: an @njit taking an @njit objective and its parameters by `args=`."""
    return scale * func(x, *args)


def scaled_objective(c):
    return scaled(objective, 0.3, 3.0, args=(c,))
