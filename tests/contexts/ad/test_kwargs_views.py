"""A function's `**kwargs` read through the dict's views (`kw.values()`, `kw.items()`, iteration): the
items' cotangents reach the dict's box, which the pullback reads through the dict riding on the tape
(`helpers.KwTape`) — also under a profiler (the dict was first seen by a profile hook of the engine's own,
which refused under cProfile), and when the dict is passed on (`inner(**kw)`)."""

import cProfile

import numpy as np

from contexts import gradient
from tests import fd


def by_values(**kw):
    return sum(v * v for v in kw.values())


def by_items(**kw):
    return sum(v * len(k) for k, v in kw.items())


def passed_on(**kw):
    return by_values(**kw) + list(kw.values())[0]


def mixed(a, *, scale=1.0, **kw):
    return a * scale + sum(kw.values()) * a


def f(x, y):
    return by_values(p=x, q=y * x) + by_items(ab=x) + passed_on(u=y, v=x) + mixed(x, scale=y, w=x * y)


def test_right():
    np.testing.assert_allclose(gradient(f, 0.7, 1.3), fd.gradient(f, 0.7, 1.3), rtol=1e-7)


def test_right_under_a_profiler():
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        got = gradient(f, 0.7, 1.3)
    finally:
        profiler.disable()
    np.testing.assert_allclose(got, fd.gradient(f, 0.7, 1.3), rtol=1e-7)
