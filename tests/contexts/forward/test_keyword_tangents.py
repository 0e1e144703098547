"""Forward mode's tangent twin given differentiated values by keyword: moved to their parameters'
positions where the callee's own code names them so (`tangent_runtime._to_positions`), by duals where not
(keyword-only parameters, `**kwargs`, a wrapper whose signature is its `__wrapped__`'s). Each derivative
against central differences."""

import functools

import pytest

from contexts import derivative
from tests import fd


def g(a, b=2.0, *, c=3.0):
    return a * b + c * a * a


def h(p, /, q, r=1.5):
    return p * q * r


def k3(a, b=2.0, c=1.0):
    return a * b - c * c * a


def gathered(**k):
    return k["a"] * k.get("b", 2.0)


def defaults_object(a, scale=[2.0]):  # noqa: B006 (the default object itself must reach the call)
    scale.append(0.0)
    scale.pop()
    return a * scale[0]


def resetting(fn):
    @functools.wraps(fn)  # its signature is fn's; its own code takes *args and sets a keyword of its own
    def wrapper(*args, **kwargs):
        kwargs.setdefault("b", 1.0)
        return fn(*args, **kwargs)
    return wrapper


g_reset = resetting(g)

CASES = {
    "by name only": lambda x: g(a=x),
    "after a position": lambda x: g(x, b=x),
    "a constant first": lambda x: g(1.0, b=x * x),
    "keyword-only": lambda x: g(x, c=x),
    "positional-only before": lambda x: h(x, q=x),
    "out of order": lambda x: h(x, r=x, q=2.0),
    "names swapped": lambda x: g(b=x, a=x * 3),
    "a default between": lambda x: k3(x, c=x) + k3(a=x, c=3.0 * x),
    "wrapper by name": lambda x: g_reset(a=x),
    "wrapper after a position": lambda x: g_reset(x, b=x),
    "gathered by **kwargs": lambda x: gathered(a=x, b=x),
    "a default object": lambda x: defaults_object(a=x),
}


@pytest.mark.parametrize("name", CASES)
def test_keyword_tangents(name):
    f = CASES[name]
    assert derivative(f, 0.7) == pytest.approx(fd.derivative(f, 0.7), rel=1e-7, abs=1e-9)


def test_missing_argument_is_the_callees_error():
    with pytest.raises(TypeError, match="missing"):
        derivative(lambda x: h(x, r=x), 0.7)
