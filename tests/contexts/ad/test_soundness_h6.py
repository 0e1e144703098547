"""Patterns met in real libraries (issue 14: iapws, python-control), each derivative against central finite
differences in reverse and forward mode.

- A closure passed on (to a solver, `map`) that binds a name of its own which the enclosing function also
  assigns more than once (iapws' `IAPWS97.calculo`: `def funcion(par): Po = _PSat_T(par[0]) ...` beside
  `Po = ...` in other branches): the closure's own local is not a cell, so it is not refused; a closure
  that does read the enclosing variable still is, and `nonlocal`/`global` names and comprehension
  variables are not taken for its own.
"""

import numpy as np
import pytest

from contexts import derivative, gradient
from contexts.ad import UnsupportedFunction

from tests import fd

X = 0.7


def _apply(g, v):
    return g(v)


def own_local_same_name(x):
    if x > 10.0:
        po = x * 2.0
    else:
        po = x * 3.0  # (assigned more than once in the enclosing function)

    def funcion(t):
        po = np.sin(t) * x  # the closure's own variable
        return po * t
    return _apply(funcion, x) + po


def own_local_shadowed_in_loop(x):
    total = 0.0
    for k in range(3):
        y = x * (k + 1)

        def step(t):
            y = t * t
            return y + t
        total = total + _apply(step, y)
    return total


def reads_enclosing_reassigned(x):
    y = x

    def g(t):
        return t * y  # reads the enclosing y, rebound below
    y = x * x
    return _apply(g, 1.0)


def nonlocal_is_not_own(x):
    acc = x

    def bump(t):
        nonlocal acc
        acc = acc * t
        return acc
    acc = acc + x
    return _apply(bump, 2.0)


def comprehension_variable_is_not_own(x):
    y = x * 2.0

    def g(t):
        return sum([y * t for y in (1.0, 2.0)]) + y  # the last y is the enclosing one
    y = y + x
    return _apply(g, x)


@pytest.mark.parametrize("f", [own_local_same_name, own_local_shadowed_in_loop])
def test_a_closures_own_variable_is_not_a_cell(f):
    want = fd.derivative(f, X)
    assert gradient(f, X)[0] == pytest.approx(want, rel=1e-6)
    assert derivative(f, X) == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("f", [reads_enclosing_reassigned, nonlocal_is_not_own, comprehension_variable_is_not_own])
def test_a_closure_reading_a_reassigned_variable_is_right_or_refused(f):
    want = fd.derivative(f, X)
    try:
        got = gradient(f, X)[0]
    except UnsupportedFunction:
        return
    assert got == pytest.approx(want, rel=1e-6)
    assert derivative(f, X) == pytest.approx(want, rel=1e-6)
