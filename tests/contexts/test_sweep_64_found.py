"""Found in session 64 (KDEpy's 2-d binning, and probing what reverse mode's eager generators read): checked
against central differences or closed forms."""

import random

import numpy as np
import pytest

from contexts import derivative, gradient, pullback
from tests.fd import gradient as fd_gradient


def columns_unique_squares(x):
    # (KDEpy's linbin_Ndim: `grid_num = (g[:, i] for i in range(d))`, then numpy's functions called in a
    # generator over it -- numpy's module changes in no place: not refused as a generator read while it changes)
    counts = (x[:, i] for i in range(x.shape[1]))
    counts = np.array(list(len(np.unique(c)) for c in counts))
    return np.sum(x ** 2) * np.sum(counts)


def test_a_loop_calling_numpy_over_a_generator():
    x = np.array([[1.0, 2.0], [3.0, 4.5]])
    want = fd_gradient(columns_unique_squares, x)[0]
    np.testing.assert_allclose(gradient(columns_unique_squares, x)[0], want, rtol=1e-8)
    y, back = pullback(columns_unique_squares, x)  # (reverse mode's own: `gradient` had forward mode's answer)
    np.testing.assert_allclose(back(1.0)[0], want, rtol=1e-8)


# A generator expression drawing from a random state the loop over it draws from or seeds too: Python draws
# the items one at a time between the loop's draws; reverse mode's generators run eagerly, all items first
# (silently other numbers: 3.14 for 5.01). Each is x times a sum of draws, whose derivative is the sum: f at 1.

def numpy_seeded(x):
    t = 0.0
    for v in (np.random.normal() * x for _ in range(3)):
        np.random.seed(1)
        t = t + v
    return t


def python_seeded(x):
    gen = (random.random() * x for _ in range(3))
    t = 0.0
    for v in gen:
        random.seed(1)
        t = t + v
    return t


def numpy_interleaved(x):
    t = 0.0
    for v in (np.random.normal() * x for _ in range(3)):
        t = t + v * np.random.normal()
    return t


def generator_interleaved(x):
    rng = np.random.default_rng(0)
    t = 0.0
    for v in (rng.normal() * x for _ in range(3)):
        t = t + v * rng.normal()
    return t


def _seeded(f):
    if f is python_seeded:
        random.seed(0)
    else:
        np.random.seed(0)


@pytest.mark.parametrize("f", [numpy_seeded, python_seeded, numpy_interleaved, generator_interleaved])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_generator_drawing_from_the_loops_random_state(f, mode):
    _seeded(f)
    want = f(1.0)
    _seeded(f)
    got = gradient(f, 1.0)[0] if mode == "reverse" else derivative(f, 1.0)
    assert got == pytest.approx(want, rel=1e-12)
