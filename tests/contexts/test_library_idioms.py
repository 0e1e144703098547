"""Idioms of real library code met by the third-party probes, in every mode, against central differences:
a C method read by name and called later (einops' `getattr(x, operation)(axis=axes)`: refused by reverse
mode), and `tuple()` with no argument (colormath's `retval = tuple()`: reverse mode crashed with an
IndexError of its own)."""

import numpy as np
import pytest

from contexts import derivative, gradient, jacfwd
from tests import fd


def _reduce(x, operation, axes):
    return getattr(x, operation)(axis=axes)


def _by_name(x):
    a = np.array([x, 2.0 * x, x * x, 1.0, x ** 3, 0.5]).reshape(2, 3)
    total = getattr(a, "sum")  # read once, called twice
    return float(_reduce(a * a, "sum", (0,)).sum() + total() * total() + _reduce(a, "max", 1).sum()
                 + getattr(a, "prod")())


def _empty_tuple(x):
    values = tuple()
    for v in (x, 2.0 * x):
        values += (v * v,)
    return values[0] + values[1] * x


MODES = {"reverse": lambda f, x: gradient(f, x)[0], "forward": derivative,
         "jacfwd": lambda f, x: jacfwd(lambda v: np.array([f(v[0])]), np.array([x]))[0, 0]}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [_by_name, _empty_tuple])
def test_idiom(mode, f):
    assert MODES[mode](f, 0.7) == pytest.approx(fd.derivative(f, 0.7), rel=1e-7)
