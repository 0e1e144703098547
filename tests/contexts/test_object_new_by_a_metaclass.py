"""`cls.__new__(cls, *args)` reaching `object.__new__` with differentiated arguments, as a metaclass's `__call__`
makes its objects (levitate's field implementations: `obj = cls.__new__(cls, *cls_args, **cls_kwargs);
obj.__init__(*cls_args, **cls_kwargs)`): a new empty object, the arguments left to `__init__`. Reverse mode
had no rule for object.__new__ and refused (sweep U, 2 of levitate's cases). Against central differences."""

import numpy as np
import pytest

from contexts import gradient, jacfwd
from tests import fd


class _Making(type):
    def __call__(cls, *args, **kw):
        obj = cls.__new__(cls, *args, **kw)
        obj.__init__(*args, **kw)
        return obj


class _Field(metaclass=_Making):
    def __init__(self, a, scale=2.0):
        self.a = a * scale

    def value(self):
        return np.sum(np.sin(self.a) * self.a)


class _Plain:
    pass


def made(x):
    return _Field(x, scale=3.0).value() + _Field(x[::-1]).value()


@pytest.mark.one_mode  # (reverse mode's own answer, tests/conftest.py)
def test_made_by_a_metaclass():
    x = np.array([0.3, 1.1, -0.4])
    want = fd.gradient(made, x)[0]
    np.testing.assert_allclose(gradient(made, x)[0], want, rtol=1e-8)
    np.testing.assert_allclose(jacfwd(made, x), want, rtol=1e-8)


@pytest.mark.one_mode
def test_extra_arguments_of_a_class_without_init_are_refused_as_python_does():
    with pytest.raises(TypeError):
        object.__new__(_Plain, 1.0)
    with pytest.raises(TypeError):
        gradient(lambda x: object.__new__(_Plain, x) and x, 1.0)
