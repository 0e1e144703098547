"""A primitive iterating an object whose class iterates in Python: by its own `__iter__` (a generator),
or by Python's older sequence protocol (`__getitem__` until IndexError, no `__iter__`). Called from C,
that code ran out of reverse mode's sight: `for v in seq`, `max(seq)`, `sorted(seq)`, `math.fsum(seq)`,
`min(gen_obj, key=...)`, `math.prod(gen_obj)` took the items for constants and returned wrong gradients
(half of them, typically) silently. Each case against central differences, in every mode."""

import math

import pytest

from contexts import gradient, hessian
from tests import fd


class Seq:
    """The sequence protocol only (no __iter__)."""

    def __init__(self, base, n):
        self.base, self.n = base, n

    def __getitem__(self, i):
        if i >= self.n:
            raise IndexError(i)
        return self.base * (i + 1)

    def __len__(self):
        return self.n


class Gen:
    """A generator __iter__."""

    def __init__(self, base):
        self.base = base

    def __iter__(self):
        yield self.base
        yield self.base * 2.0 + 0.5


def loop(x):
    r = 0.0
    for v in Seq(x, 3):
        r += v * x
    return r


CASES = {
    "for": loop,
    "list": lambda x: sum(list(Seq(x, 3))) * x,
    "unpack": lambda x: (lambda a, b: a * b)(*Seq(x, 2)),
    "max": lambda x: max(Seq(x, 3)) * x,
    "min key": lambda x: min(Seq(x, 3), key=lambda v: -v) * x,
    "sorted": lambda x: sorted(Seq(x, 3))[-1] * x,
    "fsum": lambda x: math.fsum(Seq(x, 3)) * x,
    "prod": lambda x: math.prod(Seq(x, 2)) * x,
    "reversed": lambda x: next(iter(reversed(Seq(x, 3)))) * x,
    "gen max": lambda x: max(Gen(x)) * x,
    "gen min key": lambda x: min(Gen(x), key=lambda v: -v) * x,
    "gen prod": lambda x: math.prod(Gen(x)) * x,
    "gen sorted": lambda x: sorted(Gen(x), reverse=True)[0] * x,
    "gen fsum": lambda x: math.fsum(Gen(x)) * x,
    "gen zip": lambda x: sum(p * q for p, q in zip(Gen(x), [1.0, 2.0])) * x,
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("mode", ["gradient", "hessian", "derivative"])  # (forward: also fsum/prod of them)
def test_python_iteration_is_differentiated(name, mode):
    got, want = fd.in_mode(CASES[name], 0.7, mode)
    assert float(got) == pytest.approx(want, rel=1e-5, abs=1e-6)


def test_max_of_arguments_is_no_iteration():
    """max(a, b) / min(a, b) compare their arguments (under hessian, duals, whose class iterates in
    Python: taken for max's iterable, it crashed)."""
    def f(x):
        return max(x, x * 0.5) + min(x, 2.0 * x) * x

    assert hessian(f, 0.7) == pytest.approx(fd.derivative(lambda s: fd.derivative(f, s, h=1e-4), 0.7, h=1e-4),
                                            rel=1e-5)
    assert gradient(f, 0.7)[0] == pytest.approx(fd.derivative(f, 0.7), rel=1e-6)
