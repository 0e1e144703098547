"""Lazy iterators made over a list that is then changed before they are drawn. Python draws them when used,
seeing the change; reverse mode draws `zip`, `map`, `enumerate`, generator expressions and itertools' where
they are made, and maps a list iterator's items back onto the list where `iter()` was called. Found in session
48: changes the static check could not see (through an alias, `q = p; q.append(v)`, a callee, `grow(p, v)`, an
object holding the list) gave silently wrong derivatives (1.0 for 3.6, 3.0 for 10.8). Now reverse mode refuses a
lazy iterator used after what it was made over changed (`__od_lazy_guard__`, placed by the lowering before each
use that follows a statement which may change something); forward mode follows them. A name rebound after the
iterator was made no longer counts as a change (skyfield's `components = iter(value); value =
next(components)` was refused). Each case against finite differences."""

import itertools
from math import copysign

import numpy as np
import pytest

from contexts import gradient
from contexts.lowered.runtime import EagerIterationError
from tests import fd
from tests.modes import assert_refused_in_reverse, assert_scalar_modes


def _grow(items, v):
    items.append(v)


class _Box:
    def __init__(self, p):
        self.p = p


def through_an_alias(x):
    p = [x, 2.0]
    it = iter(p)
    q = p
    q.append(x * x)
    return sum(it)


def by_a_callee(x):
    p = [x, 2.0]
    it = iter(p)
    _grow(p, x * x)
    return sum(it)


def by_a_holder(x):
    p = [x, 2.0]
    box = _Box(p)
    it = iter(p)
    box.p.append(x * x)
    return sum(it)


def next_then_a_callee(x):
    p = [x, 2.0]
    it = iter(p)
    first = next(it)
    _grow(p, x ** 3)
    return first + sum(it)


def rebound_after(x):
    p = [x, 2.0]
    it = iter(p)
    p = [5.0]
    p.append(x)
    return sum(it) + p[1]


def unsexagesimalize(value):
    """skyfield.units._unsexagesimalize, verbatim."""
    if isinstance(value, tuple):
        components = iter(value)
        value = next(components)
        factor = 1.0
        for component in components:
            factor *= 60.0
            value += copysign(component, value) / factor
    return value


RIGHT = {
    "the name rebound after iter": rebound_after,
    "skyfield's sexagesimal tuple": lambda x: unsexagesimalize((x, 30.0 * x, 0.0)),
    "skyfield's sexagesimal of a float": lambda x: unsexagesimalize(x) * 2.0,
}


@pytest.mark.parametrize("name", list(RIGHT))
def test_right(name):
    assert_scalar_modes(RIGHT[name], 1.3, second=False)


def zip_then_callees(x):
    p = [x, 2.0]
    q = [1.0, x]
    it = zip(p, q)
    _grow(p, x * x)
    _grow(q, 3.0)
    return sum(a * b for a, b in it)


def enumerate_then_alias(x):
    p = [x, 2.0]
    it = enumerate(p)
    r = p
    r.append(x * x)
    return sum(i * v for i, v in it)


def map_then_callee(x):
    p = [x, 2.0]
    it = map(lambda v: v * 2, p)
    _grow(p, x ** 3)
    return sum(it)


def generator_then_callee(x):
    p = [x, 2.0]
    g = (v * 2 for v in p)
    _grow(p, x ** 3)
    return sum(g)


def looped_after_callee(x):
    p = [x, 2.0]
    it = iter(p)
    _grow(p, x ** 3)
    total = 0.0
    for v in it:
        total += v
    return total


def chain_then_callee(x):
    p = [x, 2.0]
    it = itertools.chain(p, [1.0])
    _grow(p, x ** 3)
    return sum(it)


REFUSED = {f.__name__: f for f in (through_an_alias, by_a_callee, by_a_holder, next_then_a_callee, zip_then_callees, enumerate_then_alias, map_then_callee, generator_then_callee,
                                   looped_after_callee, chain_then_callee)}


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
@pytest.mark.parametrize("name", list(REFUSED))
def test_refused_in_reverse_mode_right_in_forward_mode(name):
    assert_refused_in_reverse(REFUSED[name], 1.3, EagerIterationError,
                              match="is used after a list it draws from changed in place")


def test_no_change_in_between_is_not_refused():
    def f(x):
        p = [x, 2.0]
        it = zip(p, p)
        n = len(p)
        total = x * n
        return total + sum(a * b for a, b in it)
    np.testing.assert_allclose(gradient(f, 1.3)[0], fd.derivative(f, 1.3), rtol=1e-6)


# -- a lazy iterator handed to a function that changes the list it draws from before drawing it: reverse mode drew
# it where it was made (1.0 for 4.0, 2.6 for 26, silently); now refused after the call where the list changed
# during it (before or after the draws: the engine cannot tell which) --

def _appends_then_sums(it, p):
    p.append(p[0] * 3)
    return sum(it)


def _appends_then_zips(it, p):
    p.append(p[0] * 3)
    return sum(a * b for a, b in it)


def _sums_only(it, p):
    return sum(it) * p[0]


def handed_iter(x):
    p = [x, 2.0]
    return _appends_then_sums(iter(p), p)


def handed_zip(x):
    p = [x, 2.0]
    return _appends_then_zips(zip(p, p), p)


def handed_by_name(x):
    p = [x, 2.0]
    it = zip(p, p)
    total = _appends_then_zips(it, p)
    return total


def handed_unchanged(x):
    p = [x, 2.0]
    return _sums_only(iter(p), p) + _sums_only(map(abs, p), p)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
@pytest.mark.parametrize("f", [handed_iter, handed_zip, handed_by_name])
def test_handed_to_a_callee_changing_its_list(f):
    assert_refused_in_reverse(f, 1.3, EagerIterationError, match="is used after a list it draws from changed in place")


def test_handed_to_a_callee_only_drawing_it():
    np.testing.assert_allclose(gradient(handed_unchanged, 1.3)[0], fd.derivative(handed_unchanged, 1.3), rtol=1e-6)
