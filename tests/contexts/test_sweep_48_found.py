"""Cases found by session 48's sweep of packages new to the project (each minimised from the package's code),
checked against finite differences."""

import numpy as np
import pytest

from contexts import gradient
from contexts.forward import derivative
from tests import fd


class _Holder:
    def __init__(self, v):
        self.v = v


_NS: dict = {}
exec(compile("def name_of(c):\n    return c.__name__\n", "<generated>", "exec"), _NS)
_name_of = _NS["name_of"]  # a function without source (networkx's generated `argmap` decorators, under colormath)


def _class_by_attribute(x):
    a = _Holder(x)
    return a.v * len(_name_of(a.__class__))  # the class of an object holding x: a constant, as type(a) is


def _class_by_type(x):
    a = _Holder(x)
    return a.v * len(_name_of(type(a))) + a.v ** 2


@pytest.mark.parametrize("f", [_class_by_attribute, _class_by_type])
@pytest.mark.parametrize("mode", ["gradient", "derivative"])
def test_the_class_of_an_object_holding_a_derivative(f, mode):
    """colormath's `convert_color` (networkx's generated code handed `obj.__class__`): refused, NoSource."""
    want = fd.derivative(f, 3.0)
    got = gradient(f, 3.0)[0] if mode == "gradient" else derivative(f, 3.0)
    np.testing.assert_allclose(got, want, rtol=1e-7)
