"""np.interp's `left` and `right` (the values outside the samples) differentiated, passed by position or
by keyword: by position their cotangents and tangents were dropped (0, silently, in reverse and forward
mode); by keyword reverse mode refused them. Against central differences."""

import numpy as np
import pytest

from contexts import gradient, jacfwd
from tests import fd

XP = np.array([0.0, 1.0, 2.0])
V = np.array([0.7, 1.3, -0.4, 1.1])


def by_keyword(v):
    x = np.array([-0.5, 0.5, 2.5]) * v[3]
    return np.interp(x, XP, XP ** 2 * v[3], left=v[1], right=v[2]).sum() * v[0]


def by_position(v):
    x = np.array([-0.5, 0.5, 2.5]) * v[3]
    return np.interp(x, XP, XP ** 2 * v[3], v[1], v[2]).sum() * v[0]


@pytest.mark.parametrize("f", [by_keyword, by_position], ids=lambda f: f.__name__)
def test_reverse(f):
    np.testing.assert_allclose(gradient(f, V)[0], fd.gradient(f, V)[0], rtol=1e-6, atol=1e-9)


def test_forward_by_position():
    np.testing.assert_allclose(jacfwd(by_position, V), fd.gradient(by_position, V)[0], rtol=1e-6, atol=1e-9)
