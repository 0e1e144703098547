"""min and max under a second derivative, every way of nesting, against central differences.

A rule reached with an outer derivative's duals runs under forward mode itself (forward over forward),
so a call it makes is differentiated too: min/max's rules found the element chosen by calling the builtin
and looking for its result among the arguments by identity — under the outer level that call gave a new
dual, found nowhere, and the tangent was dropped (the second derivative of max(x², 0.4 x²) came out 0,
silently; found by the fuzzer in a generated program)."""

import numpy as np
import pytest

from contexts import derivative, hessian, jacfwd
from tests import fd

X = 1.3

FUNCTIONS = {
    "max of two": lambda x: max(x * x, 0.436 * x * x),
    "min of two": lambda x: min(x ** 3, x * x),
    "max of a list": lambda x: max([x * x, np.sin(x), 0.5]),
    "min of a generator": lambda x: min(x ** k for k in (2, 3, 4)),
    "max by key": lambda x: max([x * x, -3.0 * x], key=abs) * x,
    "ties: the first": lambda x: min([x * x, x * x]) + max(x ** 3, x ** 3),
    "default": lambda x: max([], default=x * x) + min([x ** 3], default=0.0),
    "a product of both": lambda x: max(x * x, x ** 3) * min(x, 2.0 * x),
}

NESTINGS = {
    "derivative of derivative": lambda f, x: derivative(lambda z: derivative(f, z), x),
    "jacfwd of jacfwd": lambda f, x: jacfwd(lambda z: jacfwd(f, z), np.float64(x)),
    "hessian forward over reverse": lambda f, x: hessian(f, x, inner="reverse"),
    "hessian forward over forward": lambda f, x: hessian(f, x, inner="forward"),
}


@pytest.mark.parametrize("nesting", sorted(NESTINGS))
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_second_derivative(name, nesting):
    f = FUNCTIONS[name]
    got = float(np.squeeze(NESTINGS[nesting](f, X)))
    assert got == pytest.approx(fd.hessian(f, X), rel=1e-5, abs=1e-6)


def test_the_element_python_returns():
    """Ties go to the first extremal element, as Python's; NaN compares as Python compares it."""
    a, b = 2.0, 2.0
    assert derivative(lambda x: max(x * a, x * b), 1.0) == pytest.approx(2.0)
    assert np.isnan(derivative(lambda x: max(float("nan") * x, x), 1.0))
    assert derivative(lambda x: max(x, float("nan") * x), 1.0) == 1.0
