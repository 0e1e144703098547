"""A forwarding wrapper (`def wrapper(*args, **kwargs): return func(*args, **kwargs)`, arch's numba fallback
`jit`, deprecation and logging decorators) around a function that fills an array it is handed: reverse mode
refused every call (sweep U: 4 of arch's 10 cases, its GARCH recursions run as Python; the array, changed through the wrapper's `*args` spread, has a cotangent after the call
that the spread cannot hand back: `helpers.spread_changed`). A call of such a wrapper is now its target's
call, the arguments handed on by position and name. A wrapper doing anything else with its arguments is not
taken for one. Gradients against central differences, reverse mode alone."""

import functools
import warnings

import numpy as np
import pytest

from contexts import gradient
from contexts.ad.runtime import UnsupportedFunction
from tests import fd


def _jit(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        """Run without compiling."""
        warnings.warn("not compiled", UserWarning, stacklevel=2)
        return func(*args, **kwargs)
    return wrapper


def _positional_only(func):
    def wrapper(*args):
        return func(*args)
    return wrapper


def _scaling(func):
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs) * 1.0  # (not a bare forward)
    return wrapper


def _recursion(params, resids, sigma2, nobs, backcast=0.5):
    sigma2[0] = params[0] + backcast
    for t in range(1, nobs):
        sigma2[t] = params[0] + params[1] * resids[t - 1] ** 2 + params[2] * sigma2[t - 1]
    return sigma2


RESIDS = np.array([0.1, -0.3, 0.2, 0.5, -0.1])
P0 = np.array([0.1, 0.1, 0.8])


def _garch(wrap, by_name=False):
    rec = wrap(_recursion)

    def f(p):
        s2 = np.zeros(5)
        if by_name:
            rec(p, RESIDS, sigma2=s2, nobs=5, backcast=p[0])
        else:
            rec(p, RESIDS, s2, 5)
        return s2[-3:].sum() + s2[-1] ** 2
    return f


class _Model:
    @_jit
    def fill(self, p, out):
        out[:] = p * p * self.scale
        return out

    scale = 3.0


def method_wrapped(p):
    out = np.zeros(3)
    _Model().fill(p, out)
    return out.sum() + out[0] * p[1]


@pytest.mark.one_mode  # (reverse mode's own answer, tests/conftest.py)
@pytest.mark.parametrize("f", [_garch(_jit), _garch(_jit, by_name=True), _garch(_positional_only), method_wrapped],
                         ids=["jit", "jit by name", "positional only", "a method"])
def test_a_forwarding_wrapper_is_its_target(f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(gradient(f, P0)[0], fd.gradient(f, P0)[0], rtol=1e-8, atol=1e-10)


@pytest.mark.one_mode
def test_a_wrapper_doing_more_is_still_refused():
    with pytest.raises(UnsupportedFunction, match="through `\\*args` or `\\*\\*kwargs`"):
        gradient(_garch(_scaling), P0)
