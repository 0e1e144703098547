"""Cases found by the sweeps of session 23 (scipy.stats' generic ppf and compiled integrands, raw memory of
differentiated arrays), each checked against central differences or a closed form."""

import ctypes
import ctypes.util
import math
import warnings

import numpy as np
import pytest

from contexts import derivative, gradient, jacfwd
from contexts.ad.runtime import UnsupportedFunction
from tests import fd

scipy = pytest.importorskip("scipy")
from scipy import LowLevelCallable, integrate, stats  # noqa: E402


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("name, c", [("foldcauchy", 1.2), ("foldnorm", 1.1), ("exponnorm", 1.5),
                                     ("recipinvgauss", 0.7)])
@pytest.mark.parametrize("wrt", ["shape", "q"])
def test_generic_ppf_in_forward_mode(name, c, wrt):
    # (the ppf's root's slope runs cdf on an inner derivative call's dual, and cdf fills np.zeros by
    # np.place: the array carried the outer call's tag and the store was refused; forward mode only)
    dist = getattr(stats, name)
    f, x = ((lambda s: dist.ppf(0.3, s)), c) if wrt == "shape" else ((lambda q: dist.ppf(q, c)), 0.4)
    expected = fd.derivative(f, x)
    assert derivative(f, x) == pytest.approx(expected, rel=1e-6)
    assert gradient(f, x)[0] == pytest.approx(expected, rel=1e-6)


def _libm_sin():
    name = ctypes.util.find_library("m")
    if name is None:
        pytest.skip("no C math library to load")
    sin = ctypes.CDLL(name).sin
    sin.restype, sin.argtypes = ctypes.c_double, [ctypes.c_double]
    return sin


def test_quad_of_a_low_level_callable_with_moving_limits():
    # (forward mode called the LowLevelCallable from Python: TypeError; reverse mode's rule too)
    llc = LowLevelCallable(_libm_sin())

    def upper(b):
        return integrate.quad(llc, 0.2, b)[0]

    def lower(a):
        return integrate.quad(llc, a, 2.0)[0] * a
    b = 1.3
    assert derivative(upper, b) == pytest.approx(math.sin(b), rel=1e-9)
    assert gradient(upper, b)[0] == pytest.approx(math.sin(b), rel=1e-9)
    exact = -math.sin(b) * b + (math.cos(b) - math.cos(2.0))
    assert derivative(lower, b) == pytest.approx(exact, rel=1e-8)
    assert gradient(lower, b)[0] == pytest.approx(exact, rel=1e-8)


def test_quad_of_a_cython_low_level_callable_with_user_data():
    # scipy.stats.geninvgauss' cdf integrates its pdf as a LowLevelCallable of (x, void *user_data)
    def f(x):
        return stats.geninvgauss.cdf(x, 2.3, 1.5)
    assert derivative(f, 1.1) == pytest.approx(stats.geninvgauss.pdf(1.1, 2.3, 1.5), rel=1e-9)


def test_parameters_in_a_compiled_integrands_user_data_are_refused():
    # its user data is the raw memory of an array holding p: forward mode's dual has no .ctypes; reverse
    # mode let `.ctypes` of a differentiated array through, and C code read p without its derivative
    def f(p):
        return stats.geninvgauss.cdf(1.1, p, 1.5)
    with pytest.raises(Exception, match="ctypes"):
        derivative(f, 2.3)
    with pytest.raises(UnsupportedFunction, match="raw memory"):
        gradient(f, 2.3)


def test_raw_memory_of_a_differentiated_array_is_refused_in_reverse_mode():
    def f(p):
        a = np.array([p, 2.0], float)
        ptr = a.ctypes.data_as(ctypes.c_void_p)
        return p * 2.0 + float(ptr.value is not None)  # (what C code reads there has no derivative)
    with pytest.raises(UnsupportedFunction, match=r"raw memory \(\.ctypes\)"):
        gradient(f, 1.5)

    def g(x):
        return (x * x).sum() + float(x.shape[0])  # (shape, size, dtype: no derivative, read as before)
    x = np.array([0.3, 0.4])
    np.testing.assert_allclose(gradient(g, x)[0], 2 * x)
    np.testing.assert_allclose(jacfwd(g, x), 2 * x)
