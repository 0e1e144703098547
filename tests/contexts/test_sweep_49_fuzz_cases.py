"""Silent wrong derivatives and a crash found by session 49's generated programs over Python's implicit calls
(tests/fuzz's `implicit` templates), minimised; each checked against finite differences or refused."""

import collections

import numpy as np
import pytest

from contexts import derivative, gradient, hessian
from contexts.forward import jvp
from overdub.errors import OverdubError
from tests import fd
from tests.modes import assert_scalar_modes


# -- W2: C code drawing the items of a class that iterates in Python (0 in reverse mode for 2) --

class _Items:
    def __init__(self, v):
        self.v = v

    def __iter__(self):
        yield self.v * 2.0


class _Pairs:
    def __init__(self, v):
        self.v = v

    def __iter__(self):
        yield ("z", self.v * 2.0)


class _T(tuple):
    pass


class _L(list):
    def __init__(self, it):
        super().__init__(it)


class _D(dict):
    def __init__(self, it):
        super().__init__(it)


_P = collections.namedtuple("_P", "a")


def _ordered_dict(x):
    return collections.OrderedDict(_Pairs(x))["z"] * x


def _namedtuple_make(x):
    return _P._make(_Items(x)).a * x


def _tuple_new(x):
    return tuple.__new__(_T, _Items(x))[0] * x


def _list_init(x):
    lst = [1.0]
    lst.__init__(_Items(x))
    return lst[0] * x


def _dict_init(x):
    d = {"w": 1.0}
    d.__init__(_Pairs(x))
    return d["z"] * x + d["w"]


def _list_subclass(x):
    return _L(_Items(x))[0] * x


def _dict_subclass(x):
    return _D(_Pairs(x))["z"] * x


@pytest.mark.parametrize("f", [_ordered_dict, _namedtuple_make, _tuple_new, _list_init, _dict_init, _list_subclass,
                               _dict_subclass], ids=lambda f: f.__name__)
def test_c_code_drawing_a_python_iteration(f):
    assert_scalar_modes(f, 0.7)


# -- W3: a data descriptor storing into `obj.__dict__` under its own name (1 for 2 in reverse mode) --

class _Twice:
    def __get__(self, obj, owner=None):
        return obj.__dict__["d"] * 2.0

    def __set__(self, obj, v):
        obj.__dict__["d"] = v


class _H:
    d = _Twice()


class _Prop:
    @property
    def d(self):
        return self.__dict__["d"] * 3.0

    @d.setter
    def d(self, v):
        self.__dict__["d"] = v


def _descriptor_over_instance_dict(x):
    o = _H()
    o.d = x * x
    p = _Prop()
    p.d = x
    return o.d + p.d * x


def test_a_data_descriptor_is_asked_before_the_instance_dict():
    assert_scalar_modes(_descriptor_over_instance_dict, 0.7)


# -- W1: `G[x]` through `__class_getitem__` (0 for 3 in both modes): refused --

class _G:
    def __class_getitem__(cls, k):
        return type("GK", (cls,), {"scale": k})

    def f(self):
        return self.scale * 3.0


def _class_subscripted(x):
    return _G[x]().f()


def _class_subscripted_by_a_constant(x):
    return _G[2.0]().f() * x


def test_a_class_subscripted_by_a_derivative_is_refused():
    with pytest.raises(OverdubError, match="__class_getitem__"):
        gradient(_class_subscripted, 0.7)
    with pytest.raises(OverdubError, match="__class_getitem__"):
        derivative(_class_subscripted, 0.7)
    assert gradient(_class_subscripted_by_a_constant, 0.7)[0] == pytest.approx(6.0)
    assert derivative(_class_subscripted_by_a_constant, 0.7) == pytest.approx(6.0)


# -- C1: np.take with an `__index__` object (an IndexError in reverse mode and hessian) --

class _Ix:
    def __init__(self, i):
        self.i = i

    def __index__(self):
        return self.i


def _take_by_index_objects(x):
    return np.take(x, _Ix(1)) * 2.0 + np.sum(np.take(x, [_Ix(0), _Ix(2)])) * x[2]


def test_take_by_index_objects():
    x = np.array([0.5, 0.7, 0.9])
    want = fd.gradient(_take_by_index_objects, x)[0]
    assert np.allclose(gradient(_take_by_index_objects, x)[0], want, rtol=1e-6)
    assert np.allclose(jvp(_take_by_index_objects, (x,), (np.ones(3),))[1], want.sum(), rtol=1e-6)
    assert np.allclose(hessian(_take_by_index_objects, x), fd.hessian(_take_by_index_objects, x), atol=1e-5)
