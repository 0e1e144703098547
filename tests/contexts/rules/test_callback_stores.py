"""A solver's or integrator's callable that stores what it is given (session 73): reverse mode runs `fsolve`,
`brentq`, `quad`, `leastsq` as primitives, so a value the callable stored on an object or appended to a list
carried no derivative, and a caller reading it after the solve got 0 (the last iterate's derivative is the
solution's). Reverse mode notes a field the callable rebinds and refuses its read (an implied volatility's
`m.vol = v` in its objective, never read after, is answered); lists, dicts and arrays changed are refused at
the solve. Forward mode's rules call it again at points of their own: what it left differed from a plain run's
(`quad`: 0.834 for 0.981). Refused now in both modes (`rules.callback_state`); a counter (an integer field) is not
a refusal."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import brentq, fsolve, leastsq

from contexts import gradient
from overdub.errors import OverdubError
from tests.fd import derivative as fd_derivative


class Cube:
    def __init__(self, c):
        self.c, self.calls, self.seen = c, 0, []

    def r(self, p):
        self.p = p
        self.calls += 1
        return p ** 3 - self.c


def stored_by_fsolve(c):
    m = Cube(c)
    fsolve(m.r, np.array([1.0]), xtol=1e-13)
    return float(m.p[0])  # (the last iterate: the root, whose derivative is 1/(3 c^(2/3)))


def appended_by_brentq(c):
    hist = []

    def f(t):
        hist.append(t * 1.0)
        return t ** 3 - c
    brentq(f, 0.1, 3.0, xtol=1e-14)
    return hist[-1]


def stored_by_quad(a):
    box = {}

    def f(t):
        box["last"] = a * t
        return a * t * t
    return quad(f, 0.0, 1.0)[0] + box["last"]


def stored_by_leastsq(c):
    m = Cube(c)
    leastsq(lambda p: m.r(p), np.array([1.0]), xtol=1e-13)
    return float(m.p[0])


def counted_by_fsolve(c):
    m = Cube(c)
    root = fsolve(lambda p: (setattr(m, "calls", m.calls + 1), p ** 3 - c)[1], np.array([1.0]), xtol=1e-13)
    return float(root[0]) + 0.0 * m.calls


STORING = [stored_by_fsolve, appended_by_brentq, stored_by_quad, stored_by_leastsq]


@pytest.mark.one_mode
@pytest.mark.parametrize("f", STORING, ids=lambda f: f.__name__)
def test_reverse_mode_refuses_a_callables_stores(f):
    with pytest.raises(OverdubError, match="changed what it holds|changing `hist` in place|callable stored"):
        gradient(f, 2.0)


@pytest.mark.parametrize("f", STORING, ids=lambda f: f.__name__)
def test_right_or_refused_with_both_modes(f):
    try:
        got = gradient(f, 2.0)[0]
    except OverdubError:
        return
    assert got == pytest.approx(fd_derivative(f, 2.0), rel=1e-5)


class _Option:
    def __init__(self, spot, vol):
        self.spot, self.vol = spot, vol

    def value(self):
        return self.spot * self.vol


def implied(spot):
    m = _Option(spot, 0.25)

    def objective(v):
        m.vol = v  # (stored, never read after the solve: reverse mode answers; a read is refused)
        return m.value() - 25.0
    return brentq(objective, 0.001, 0.999, xtol=1e-14)


@pytest.mark.one_mode
def test_a_field_stored_and_not_read_is_answered():
    assert gradient(implied, 102.0)[0] == pytest.approx(-25.0 / 102.0 ** 2, rel=1e-8)


@pytest.mark.one_mode
def test_a_field_stored_and_read_is_refused():
    def read_after(spot):
        m = _Option(spot, 0.25)

        def objective(v):
            m.vol = v
            return m.value() - 25.0
        brentq(objective, 0.001, 0.999, xtol=1e-14)
        return m.vol * 2.0
    with pytest.raises(OverdubError, match="callable stored"):
        gradient(read_after, 102.0)


def test_a_counter_is_no_refusal():
    got = gradient(counted_by_fsolve, 2.0)[0]
    assert got == pytest.approx(1.0 / (3.0 * 2.0 ** (2.0 / 3.0)), rel=1e-8)
