"""Values that travel by exception: `raise ValueError(x)` caught by `except ValueError as e: e.args[0]`,
an exception class holding the value as an attribute, a generator's `return v` (StopIteration.value).

Reverse mode follows no derivative from a raise to its handler: such a handler reading an exception that
holds a value which may carry one is refused by name (it returned x**2's derivative for x**3's, silently);
a generator returning a value is refused when it is transformed (the value was dropped: None).
Forward mode follows the value (its dual travels inside the exception). Exceptions holding text, the
usual case, are read as before. Every number is checked against central differences."""

import numpy as np
import pytest

from contexts import UnsupportedFunction, derivative, gradient, jacobian_sparsity
from tests import fd

X = 0.7


def _raises_value(x):
    try:
        raise ValueError(x)
    except ValueError as e:
        y = e.args[0]
    return y * y * x


def _inner(x):
    raise ValueError("bad", x * 2)


def _callee_raises(x):
    try:
        _inner(x)
    except ValueError as e:
        y = e.args[1]
    return y * x


class _Carrier(Exception):
    def __init__(self, v):
        super().__init__("carrier")
        self.v = v


def _attribute(x):
    try:
        raise _Carrier(x * x)
    except _Carrier as e:
        return e.v * x


def _gen(x):
    yield 1.0
    return x * 2


def _generator_return(x):
    g = _gen(x)
    next(g)
    try:
        next(g)
    except StopIteration as e:
        v = e.value
    return v * x


CARRYING = [_raises_value, _callee_raises, _attribute, _generator_return]


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
@pytest.mark.parametrize("f", CARRYING, ids=lambda f: f.__name__)
def test_reverse_mode_refuses_a_value_carried_by_an_exception(f):
    with pytest.raises(UnsupportedFunction):
        gradient(f, X)


@pytest.mark.parametrize("f", CARRYING, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["derivative", "jvp"])
def test_forward_mode_follows_it(f, mode):
    got, want = fd.in_mode(f, X, mode)
    assert float(got) == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("f", CARRYING, ids=lambda f: f.__name__)
def test_sparsity_sees_the_dependence(f):
    assert jacobian_sparsity(f, [X]).toarray().tolist() == [[1]]


def _text_only(x):
    try:
        if x > 0:
            raise KeyError("positive")
    except KeyError as e:
        msg = str(e)
    return x * x * len(msg)


def _chained(x):
    y = x * 3
    try:
        try:
            raise ValueError("inner")
        except ValueError as e:
            raise KeyError("outer") from e
    except KeyError:
        y = y * x
    return y


@pytest.mark.parametrize("f", [_text_only, _chained], ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["gradient", "derivative", "hessian"])
def test_exceptions_holding_text_are_read_as_before(f, mode):
    got, want = fd.in_mode(f, X, mode)
    assert float(got) == pytest.approx(want, rel=1e-5, abs=1e-6)


# -- a refusal a library wraps in its own error, met again while a special point is judged (desolver) -------

class FailedIntegration(Exception):
    pass


def _step(y):
    err = np.sqrt(np.sum((y - y) ** 2))  # (0, its rate not a number: a singular point's test below)
    if err > 1e-3:
        return y * 0.5
    return y


def wrapping_library(k):
    y = np.array([1.0, 0.0]) * k
    try:
        y = _step(y)
        y.device  # (forward mode refuses reading `.device` of a dual array)
        return float(y.sum())
    except Exception as e:
        new = FailedIntegration("Failed to integrate system")
        new.__cause__ = e
        raise new


@pytest.mark.one_mode
def test_a_wrapped_refusal_met_again_while_judging_a_special_point_is_the_refusal():
    # (session 67: forward mode unwrapped the first refusal, judged the point by running f again, and the second
    # refusal, wrapped the same way, came out as the library's FailedIntegration: sweep O, desolver)
    from overdub.errors import OverdubError
    with pytest.raises(OverdubError):
        derivative(wrapping_library, 2.0)
