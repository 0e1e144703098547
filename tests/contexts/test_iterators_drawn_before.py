"""An iterator of a list or tuple drawn from before it is handed on (`vals = [next(it)]; vals.extend(it)`):
inspect's `Signature.bind` does this for `*args`, and so every wrapper the `decorator` package builds
(pycircstat's `@mod2pi`, sweep W). `list.extend` credited the items' cotangents from the sequence's first
position: the second argument's to the first, a wrong gradient, silently (sin(x + b) for cos(x) sin(b)). Every
form below against central differences."""

import collections
import inspect
import itertools
import math

import numpy as np
import pytest

from contexts import gradient, jvp
from tests.fd import gradient as fd_gradient

B = 0.7


def drawn(x):
    it = iter((x, B, 2.0))
    next(it)
    return it


def drawn_list(x):
    it = iter([x, B, 2.0])
    next(it)
    return it


def extended(x):
    vals = []
    vals.extend(drawn(x))
    return vals[0] * x + vals[1]


def extended_list(x):
    vals = [1.0]
    vals.extend(drawn_list(x))
    return vals[1] * x + vals[0] * vals[2]


def first_then_rest(x):
    it = iter((x, B, x * x))
    vals = [next(it)]
    vals.extend(it)
    return math.sin(vals[0]) * math.sin(vals[1]) + vals[2]


FORMS = {
    "extend": extended,
    "extend of a list's iterator": extended_list,
    "first then the rest": first_then_rest,
    "sum": lambda x: sum(drawn(x)) * x,
    "sorted": lambda x: sorted(drawn(x))[0] * x,
    "zip": lambda x: [p * q for p, q in zip(drawn(x), (1.0, 3.0))][1] * x,
    "deque": lambda x: collections.deque(drawn(x))[0] * x,
    "chain": lambda x: list(itertools.chain(drawn(x), [1.0]))[0] * x,
    "np.fromiter": lambda x: np.fromiter(drawn(x), float)[0] * x,
    "slice store": lambda x: (lambda v: (v.__setitem__(slice(0, 1), drawn(x)), v[0] * x)[1])([5.0]),
    "iadd": lambda x: (lambda v: (v.__iadd__(drawn(x)), v[0] * x)[1])([]),
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_iterator_drawn_before_handed_on(name):
    f = FORMS[name]
    (g,) = gradient(f, 1.3)
    np.testing.assert_allclose(g, fd_gradient(f, 1.3)[0], rtol=1e-7, atol=1e-9)


def test_first_then_rest_closed_form():
    (g,) = gradient(first_then_rest, 1.3)
    np.testing.assert_allclose(g, math.cos(1.3) * math.sin(B) + 2 * 1.3, rtol=1e-12)


def passing_on(*args):
    return args


SIG = inspect.signature(passing_on)


def bound(*args, **kw):
    """The `decorator` package's wrapper: arguments fixed by the wrapped function's signature."""
    ba = SIG.bind(*args, **kw)
    ba.apply_defaults()
    return passing_on(*ba.args, **ba.kwargs)


def test_signature_bind_of_star_args():
    b = np.array([0.3, 2.0, 4.0])
    x = np.array([1.0, 0.5, 2.5])
    f = lambda v: np.sum(np.sin(bound(v, b)[0]) * np.sin(bound(v, b)[1]))  # noqa: E731
    (g,) = gradient(f, x)
    np.testing.assert_allclose(g, np.cos(x) * np.sin(b), rtol=1e-12)
    np.testing.assert_allclose(jvp(f, (x,), (np.ones(3),))[1], np.sum(np.cos(x) * np.sin(b)), rtol=1e-12)
    const = lambda v: np.sum(bound(v, b)[1]) * 1.0  # noqa: E731
    np.testing.assert_allclose(gradient(const, x)[0], 0.0)


def test_decorator_package_wrapper():
    decorator = pytest.importorskip("decorator").decorator
    ident = decorator(lambda fn, *args: fn(*args), lambda *args: args)
    b = np.array([0.3, 2.0, 4.0])
    x = np.array([1.0, 0.5, 2.5])
    f = lambda v: np.sum(np.sin(ident(v, b)[0]) * np.sin(ident(v, b)[1]))  # noqa: E731
    np.testing.assert_allclose(gradient(f, x)[0], np.cos(x) * np.sin(b), rtol=1e-12)
