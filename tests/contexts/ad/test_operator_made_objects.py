"""Objects made by their class's own operator (run natively in the forward pass, re-run in the adjoint) and
read afterwards through the dicts they hold: the reads put their cotangents in the boxes of the forward
pass's dicts, the result's variable took none, and the operator's adjoint was skipped or re-made other
dicts: 0 or a part of the derivative, silently (session 52's known wrong, `B = E * 2.0; B.dot(x)`).
Checked against central differences in both modes."""

from __future__ import annotations

import numpy as np
import pytest

from contexts import ADContext, gradient, jacfwd
from tests.fd import gradient as fd_gradient


class Entries:
    """A sparse vector as a dict of index -> value (as scipy's DOK keeps its entries)."""

    def __init__(self, d=None):
        self._d = dict(d) if d is not None else {}

    def items(self):
        return self._d.items()

    def __mul__(self, s):
        n = Entries()
        for k, v in self._d.items():
            n._d[k] = v * s
        return n

    __rmul__ = __mul__

    def __truediv__(self, s):
        return Entries({k: v / s for k, v in self._d.items()})

    def __add__(self, o):
        n = Entries(self._d)
        for k, v in o._d.items():
            n._d[k] = n._d.get(k, 0.0) + v
        return n

    def __radd__(self, o):
        return Entries(self._d) if o == 0 else NotImplemented

    def __neg__(self):
        return Entries({k: -v for k, v in self._d.items()})

    def total(self):
        return sum(self._d.values())

    def sq(self):
        return sum(v * v for v in self._d.values())

    def weighted(self):
        return sum(k * v for k, v in self.items())


def _e(p):
    return Entries({1: p[0], 2: -p[1]})


def _rebound(p):
    a = _e(p)
    a = a * 2.0
    return a.weighted() ** 2


def _rebound_later(p):
    a = _e(p) / 0.5
    b = a
    a = _e(p) * p[1]
    return a.weighted() + b.weighted()


def _chain(p):
    a = _e(p) * p[0]
    c = (a * p[1]) * 3.0
    return c.weighted() ** 2 + a.weighted()


def _in_place(p):
    a = _e(p) / 0.5
    b = a
    a += _e(p)
    return a.weighted() + b.weighted()


def _loop(p):
    a = _e(p)
    for _ in range(3):
        a = a * p[0] + _e(p)
    return a.weighted()


def _held_by_attribute(p):
    class Holder:
        pass
    h = Holder()
    h.e = _e(p) * 2.0
    return h.e.total() ** 2


def _in_place_twice(p):
    # (generated, reduced: the first `a += a`'s result rebound in the block, half the derivative came out)
    a = _e(p)
    a += a
    a += a
    return a.total() * p[0]


def _aliases_of_rebound_results(p):
    # (generated, reduced: 0 in the first and third entries where central differences give 12 and 24)
    a = _e(p)
    a += a
    b = a + a
    c = a
    d = b + a
    a += d
    return d.total() * 0.5 + c.total() * 0.5 + a.total()


def _operand_rebound(p):
    a = _e(p)
    a = a + a
    a = a * p[0]
    return a.weighted()


class Wrapped:
    """An object holding a vector: its operators make new wrappers around new vectors."""

    def __init__(self, v, w=1.0):
        self.v = v
        self.w = w

    def __add__(self, o):
        return Wrapped(self.v + o.v, self.w)

    def __neg__(self):
        return Wrapped(-self.v, self.w)

    def total(self):
        return self.w * self.v.total()


def _negated_then_doubled_in_place(p):
    # (generated, reduced: the negation's result rebound by `b += b`; [1.7, 0, 0] for [1.7, -1.4, -0.7])
    a = Wrapped(_e(p), p[0])
    b = -a
    b += b
    return b.total() + a.total()


CASES = {
    "negated then doubled in place": _negated_then_doubled_in_place,
    "in place twice": _in_place_twice,
    "aliases of rebound results": _aliases_of_rebound_results,
    "operand rebound": _operand_rebound,
    "product": lambda p: (_e(p) * 2.0).total() ** 2,
    "reflected": lambda p: (3.0 * _e(p)).weighted() ** 2,
    "negation": lambda p: (-_e(p)).weighted() ** 3,
    "negated product": lambda p: (-(_e(p) * 2.0)).total() * p[0],
    "quotient": lambda p: (_e(p) / p[1]).weighted(),
    "builtin sum": lambda p: sum([_e(p), _e(p) / 0.5]).weighted() ** 2,
    "rebound": _rebound,
    "rebound later": _rebound_later,
    "chain": _chain,
    "in place": _in_place,
    "loop": _loop,
    "attribute": _held_by_attribute,
}


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_operator_made_object_read_through_a_dict(name, mode):
    f = CASES[name]
    p = np.array([1.3, 0.7])
    if mode == "reverse":
        with ADContext():
            got = gradient(f, p)[0]
    else:
        got = jacfwd(f, p)
    np.testing.assert_allclose(got, fd_gradient(f, p)[0], rtol=1e-7, atol=1e-9)


class Renamed:
    """An operator whose result holds its dict under a key the re-run does not make again: refused."""
    made = 0

    def __init__(self, d):
        self._d = d

    def __mul__(self, s):
        Renamed.made += 1
        return Renamed({f"k{Renamed.made}": v * s for v in self._d.values()})

    def total(self):
        return sum(self._d.values())


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_a_re_run_that_makes_other_parts_is_refused():
    """`carry_boxes` finds no part at the place the forward pass's result had one: refused, not 0."""
    from overdub.errors import OverdubError

    def f(p):
        return (Renamed({"a": p[0]}) * 2.0).total() ** 2
    with pytest.raises(OverdubError, match="re-run"), ADContext():
        gradient(f, np.array([1.5]))
