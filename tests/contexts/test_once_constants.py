"""A display of constants handed to a call beside a differentiated value (`helper([1.0, 2.0], x)`) enters
the call a constant: the callee's C function of it without a rule ran natively instead of being refused
(visual-kinematics' `Frame.from_euler_3`, sweep E). What the callee stores into it is still followed: each
case checked in both modes against central differences."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

from contexts import derivative, gradient
from tests.fd import derivative as fd_derivative


def _no_rule(c, x):
    return np.sum(sp.mathieu_a(2, c) * x)  # (a C function without a rule, of the constant argument only)


def constant_list(x):
    return _no_rule([1.0, 2.0], x)


def constant_tuple(x):
    return _no_rule((1.0, -2.0), x)


def _append(c, x):
    c.append(x * 2.0)
    return sum(c)


def appended_into(x):
    return _append([1.0, 2.0], x)


def _store(c, x):
    c[0] = x
    return c


def stored_into(x):
    return _store([1.0, 2.0], x)[0] * 3.0


def _kept(c, x, acc):
    c.append(x)
    acc.append(c)


def kept_by_another_argument(x):
    acc = []
    _kept([1.0], x, acc)
    return acc[0][1] ** 2


class _Holder:
    def set(self, c, x):
        self.items = c
        c.append(x)


def kept_by_an_object(x):
    o = _Holder()
    o.set([1.0, 2.0], x)
    return o.items[-1] * 5.0 + o.items[0]


def _into_dict(d, x):
    d["b"] = x * x
    return d


def dict_stored_into(x):
    return _into_dict({"a": 1.0}, x)["b"]


def _closure(c, x):
    c.append(x)
    return lambda: c[-1] * 7.0


def captured_by_a_closure(x):
    return _closure([1.0], x)()


def in_a_loop(x):
    total = 0.0
    for i in range(3):
        total = total + _append([1.0, float(i)], x)
    return total


def _nested(rows, x):
    rows[0][0] = x
    return rows


def nested_stored_into(x):
    return _nested([[1.0, 2.0], [3.0]], x)[0][0] * 4.0


def _extend(c, x):
    c += [x]
    return c


def extended_in_place(x):
    return _extend([1.0], x)[1] * 6.0


CASES = [constant_list, constant_tuple, appended_into, stored_into, kept_by_another_argument, kept_by_an_object,
         dict_stored_into, captured_by_a_closure, in_a_loop, nested_stored_into, extended_in_place]


@pytest.mark.parametrize("mode", [gradient, derivative])
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_constant_display_handed_to_a_call(f, mode):
    got = mode(f, 0.7)
    got = got[0] if isinstance(got, tuple) else got
    assert got == pytest.approx(fd_derivative(f, 0.7), rel=1e-6, abs=1e-8)
