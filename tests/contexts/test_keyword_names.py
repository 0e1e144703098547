"""A keyword argument of the user's call whose name is also a parameter of the engine's own call helpers
(`mask`, `f`, `fn`, `site`: `np.ma.array(b, mask=m)` in pykrige and pykalman) is the callee's, in every
mode: the engine's helpers take theirs by position only."""

import numpy as np
import pytest

from contexts import derivative, gradient, hessian, jacfwd, jacobian_sparsity
from tests import fd


def _scaled(x, mask=None, f=None, fn=None, site=None, self=None, mode=None):
    return x * (mask + 2.0 * f + 3.0 * fn + 4.0 * site + 5.0 * self + 6.0 * mode)


def user(x):
    return _scaled(x * x, mask=x, f=1.0, fn=x, site=0.5, self=x, mode=2.0)


def masked(x):
    b = np.ma.array(np.array([x, 2.0 * x]), mask=[False, False])
    return float(np.sum(b.data * b.data))


MODES = {"reverse": lambda f, x: gradient(f, x)[0], "forward": derivative,
         "jacfwd": lambda f, x: jacfwd(lambda v: np.array([f(v[0])]), np.array([x]))[0, 0]}


@pytest.mark.parametrize("mode", MODES)
def test_callee_keywords_named_like_the_engines(mode):
    assert MODES[mode](user, 0.7) == pytest.approx(fd.derivative(user, 0.7), rel=1e-7)


@pytest.mark.parametrize("mode", MODES)
def test_masked_array_of_differentiated_values(mode):
    """(a masked array's `mask=` keyword beside the engines' names: numpy.ma's code differentiated by reverse
    mode, `contexts.rules.numpy.masked`; forward mode's duals hold no mask, and its APIs answer by reverse
    mode)"""
    assert MODES[mode](masked, 0.7) == pytest.approx(fd.derivative(masked, 0.7), rel=1e-7)


def test_second_order_and_sparsity():
    assert hessian(user, 0.7) == pytest.approx(fd.derivative(lambda x: fd.derivative(user, x), 0.7), rel=1e-5)
    assert jacobian_sparsity(lambda v: np.array([user(v[0])]), np.array([0.7])).shape == (1, 1)
