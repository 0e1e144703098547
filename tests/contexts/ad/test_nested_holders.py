"""An array changed in place while a container holds it inside another container (no variable holds the
inner one): `copy.deepcopy` keeps aliasing, so `t['w']` and `t['v'][0]` of `copy.deepcopy({'w': x, 'v':
[x]})` are one array, and `t['w'] *= k` changes what `t['v'][0]` reads. Reverse mode found the holders one
level deep only: the nested read's cotangent went back as if the array had not changed (found by the
fuzzer's `idiom` templates, 2026-11-28; each case below was silently wrong). Checked against central
differences in reverse mode, and in forward mode and `hessian` (right or refused)."""

import copy

import numpy as np
import pytest

from contexts import gradient, hessian, jacfwd
from overdub.errors import OverdubError
from tests import fd

X = np.array([0.3, 0.7, 1.1])


class Holder:
    def __init__(self, ps):
        self.ps = ps


def dict_of_list(x):
    t = copy.deepcopy({'w': x, 'v': [x]})
    t['w'] *= 0.5
    return np.sum(t['w'] + t['v'][0] * x)


def object_in_list(x):
    h = copy.deepcopy([Holder([x]), x])
    h[1] *= 0.5
    return np.sum(h[1] + h[0].ps[0] * x)


def tuple_in_dict_in_tuple(x):
    t = copy.deepcopy(({'a': (x,)}, x))
    t[1][...] = t[1] * 3.0
    return np.sum(t[0]['a'][0] * x)


def three_deep(x):
    d = copy.deepcopy({'p': {'q': {'r': [x]}}, 's': x})
    d['s'] += x
    return np.sum(d['p']['q']['r'][0] ** 2)


def read_before_and_after(x):
    t = copy.deepcopy({'w': x * 1.0, 'v': [[x * 1.0]]})
    t['v'][0][0] = t['w']  # the same array at both places from here
    before = np.sum(t['v'][0][0] * x)
    t['w'] *= 2.0
    return before + np.sum(np.sin(t['v'][0][0]))


CASES = [dict_of_list, object_in_list, tuple_in_dict_in_tuple, three_deep, read_before_and_after]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_reverse(f):
    np.testing.assert_allclose(gradient(f, X)[0], fd.gradient(f, X)[0], rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_forward(f):
    np.testing.assert_allclose(jacfwd(f, X), fd.gradient(f, X)[0], rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_hessian_right_or_refused(f):
    try:
        h = hessian(f, X)
    except OverdubError:
        return
    h = h[0][0] if type(h) is tuple else h
    np.testing.assert_allclose(h, fd.hessian(f, X, matrix=True), rtol=1e-4, atol=1e-5)  # (f's own differences)
