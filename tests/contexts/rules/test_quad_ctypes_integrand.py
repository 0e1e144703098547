"""scipy.integrate.quad over a ctypes integrand (numba's `@cfunc(...).ctypes`, as pyRVT's peak factors pass;
session 73, sweep V): forward mode called it with its duals and ctypes raised ArgumentError, a crash. Now it is
C code as a LowLevelCallable is: a differentiated limit is the Leibniz rule's edge term (the integrand at the
limit, called with numbers), differentiated `args` are refused in both modes."""

from __future__ import annotations

import ctypes
import math

import numpy as np
import pytest
from scipy.integrate import quad

from contexts import derivative, gradient, jvp
from overdub.errors import OverdubError
from tests.fd import derivative as fd_derivative

_PROTO = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_int, ctypes.POINTER(ctypes.c_double))


@_PROTO
def _integrand(n, xx):
    return math.exp(-xx[1] * xx[0])  # exp(-a t); xx = (t, a)


_integrand.argtypes = (ctypes.c_int, ctypes.c_double)  # (quad's legacy ctypes signature, as pyRVT sets it)


def by_limit(b):
    return quad(_integrand, 0.0, b, args=(2.0,))[0]


def by_args(a):
    return quad(_integrand, 0.0, 1.0, args=(a,))[0]


def test_differentiated_limit_right_in_both_modes():
    want = fd_derivative(by_limit, 0.7)
    assert math.isclose(want, math.exp(-1.4), rel_tol=1e-6)
    assert gradient(by_limit, 0.7)[0] == pytest.approx(want, rel=1e-8)
    assert derivative(by_limit, 0.7) == pytest.approx(want, rel=1e-8)


@pytest.mark.parametrize("mode", ["reverse", "forward", "jvp"])
def test_differentiated_args_refused(mode):
    run = {"reverse": lambda: gradient(by_args, 2.0), "forward": lambda: derivative(by_args, 2.0),
           "jvp": lambda: jvp(by_args, (2.0,), (1.0,))}[mode]
    with pytest.raises(OverdubError):
        run()
    assert np.isfinite(by_args(2.0))
