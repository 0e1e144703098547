"""Cases found by the sweeps of session 27 (packages nobody here wrote: SALib, trimesh, blackscholes,
plasmapy, ...; generated programs), each checked against central differences or a closed form, in every
mode that takes them, or asserting a refusal."""

import collections

import numpy as np
import pytest

from contexts import derivative, gradient, hessian, jacfwd, jacobian, jvp
from tests import fd


# -- arrays held by subclasses of dict and list, changed in place ----------------------------------
# (SALib's `dgsm.analyze`: `S = ResultDict(...)`, then `S["vi"][j] = ...`: reverse mode gave 0, the search
# for the containers holding a changed array took only dict, list and tuple themselves)

class ResultDict(dict):
    pass


class Rows(list):
    pass


def dict_subclass_filled(y):
    S = ResultDict(v=np.zeros(2))
    S["v"][0] = y * y
    return S["v"].sum()


def ordered_dict_filled(y):
    S = collections.OrderedDict(v=np.zeros(2))
    S["v"][1] = np.sin(y)
    return S["v"].sum() * y


def default_dict_through_alias(y):
    S = collections.defaultdict(lambda: np.zeros(2))
    a = S["v"]
    a[0] = np.sin(y)
    return S["v"].sum() + y


def list_subclass_filled(y):
    S = Rows([np.zeros(2), 1.0])
    S[0][1] = y * y
    return S[0].sum() * 3.0


def nested_dict_subclasses(y):
    S = ResultDict(inner=ResultDict(v=np.zeros(2)))
    S["inner"]["v"][0] = y ** 3
    return S["inner"]["v"][0] * 2


def dict_subclass_field(y):
    a = np.zeros(2)
    S = ResultDict()
    S.arr = a
    a[0] = y * y
    return S.arr.sum()


def _fill(S, y):
    S["v"][0] = y * y


def dict_subclass_filled_by_helper(y):
    S = ResultDict(v=np.zeros(2))
    _fill(S, y)
    return S["v"].sum()


HELD_BY_SUBCLASSES = [dict_subclass_filled, ordered_dict_filled, default_dict_through_alias, list_subclass_filled,
                      nested_dict_subclasses, dict_subclass_field, dict_subclass_filled_by_helper]


@pytest.mark.parametrize("f", HELD_BY_SUBCLASSES)
def test_array_held_by_container_subclass(f):
    y = 0.7
    want = fd.derivative(f, y)
    assert gradient(f, y)[0] == pytest.approx(want, rel=1e-6)
    assert derivative(f, y) == pytest.approx(want, rel=1e-6)
    assert hessian(f, y) == pytest.approx(fd.hessian(f, np.array(y)), rel=1e-4, abs=1e-6)


# -- `super().__init__()` reaching object's own __init__ (blackscholes' option classes) ---------------

class _Base:
    pass


class _Option(_Base):
    def __init__(self, s):
        self.s = s
        super().__init__()

    def price(self):
        return self.s ** 2 * np.exp(-self.s)


class _Explicit:
    def __init__(self, s):
        object.__init__(self)
        self.s = s


def option_price(s):
    return _Option(s).price()


def explicit_object_init(s):
    return _Explicit(s).s * 3.0


@pytest.mark.parametrize("f", [option_price, explicit_object_init])
def test_object_init_reached_by_super(f):
    s = 1.3
    want = fd.derivative(f, s)
    assert gradient(f, s)[0] == pytest.approx(want, rel=1e-6)
    assert derivative(f, s) == pytest.approx(want, rel=1e-6)


# -- a list's slice divided in place by a number (trimesh's `decompose_matrix`: `shear[1:] /= scale[2]`) --

def list_slice_divided(x):
    scale = np.zeros(3)
    scale[2] = np.cos(x)
    shear = [0.0, np.sin(x), x * x]
    shear[1:] /= scale[2]
    return scale[2] + shear[1] * shear[2]


def list_slice_divided_constant(x):
    items = [x, 2.0 * x]
    items[0:] /= np.float64(3.0)
    return items[0] * items[1]


@pytest.mark.parametrize("f", [list_slice_divided, list_slice_divided_constant])
def test_list_slice_in_place_division(f):
    x = 0.7
    want = fd.derivative(f, x)
    assert gradient(f, x)[0] == pytest.approx(want, rel=1e-6)
    assert derivative(f, x) == pytest.approx(want, rel=1e-6)
