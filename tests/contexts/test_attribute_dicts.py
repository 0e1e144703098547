"""Dict subclasses whose attributes are their items (`__getattr__` reading `self[name]`, `__setattr__ =
dict.__setitem__`): scipy's `OptimizeResult` and the result classes modelled on it. An attribute store into
one was refused in reverse mode ("a dict subclass whose items carry derivatives too"); it is an item's
store. Checked against central differences in reverse and forward mode."""

import pytest
from scipy.optimize import OptimizeResult

from tests.modes import MODES, gradient_in
from tests import fd


class Res(dict):
    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError as e:
            raise AttributeError(name) from e

    __setattr__ = dict.__setitem__
    __delattr__ = dict.__delitem__


def counts(a, b):
    t = Res(x=a * 0.5, fun=b)
    t.nit = 3
    return t.x * t.fun + t['x'] * t.nit


def stored_by_attribute(a, b):
    t = Res(x=a)
    t.y = a * b
    t.y = t.y + t['x'] * 2.0  # stored twice, read by attribute and by key
    return t['y'] * t.x + t.y


def scipy_result(a, b):
    r = OptimizeResult(x=a * a, fun=b)
    r.jac = r.x * b
    r.success = True
    return r.jac + r['fun'] * r.x if r.success else 0.0


def built_in_a_helper(a, b):
    def solve(p):
        out = OptimizeResult()
        out.x = p * 2.0
        out.fun = p * p
        return out
    r = solve(a * b)
    return r.x + r.fun * a


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [counts, stored_by_attribute, scipy_result, built_in_a_helper],
                         ids=lambda f: f.__name__)
def test_right(f, mode):
    args = (0.7, 1.3)
    got = gradient_in(mode, f, *args)
    for g, e in zip(got, fd.gradient(f, *args)):
        assert g == pytest.approx(e, rel=1e-7, abs=1e-9)
