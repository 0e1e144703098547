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


def test_jvp_through_an_f2py_function_refusing_a_dual_names_it():
    # (jacfwd said so; jvp's tangent twin called BLAS's dscal on the dual: f2py's raw IndexError)
    from scipy.linalg import blas
    from contexts import jvp
    from contexts.forward import NoForwardRule

    def f(x):
        return blas.dscal(x[0] * x[1], np.ones(3))
    x = np.array([2.0, 3.0])
    with pytest.raises(NoForwardRule, match="dscal"):
        jvp(f, (x,), (np.ones(2),))


def test_arithmetic_on_an_object_array_of_polynomials_is_refused_in_reverse_mode():
    # numpy's Polynomial composition maps the inner polynomial's domain by `off + scl * np.asanyarray(p)`:
    # the product of a 0-d object array, whose cotangent crashed the adjoint (Tangent * Polynomial)
    from numpy.polynomial import Polynomial

    def f(a):
        return Polynomial([1.0, a, 0.5])(Polynomial([0.2, 1.3])).coef[1]
    with pytest.raises(UnsupportedFunction, match="object array holding Polynomial"):
        gradient(f, 0.7)

    def g(a):  # (a polynomial's own arithmetic and evaluation: differentiated)
        p = Polynomial([1.0, a, 0.5])
        return p(0.3) + (p * p).coef[2] + p.deriv()(0.4)
    assert gradient(g, 0.7)[0] == pytest.approx(fd.derivative(g, 0.7), rel=1e-7)


def test_quad_with_an_integrable_singularity_at_a_fixed_limit():
    # d/ds ∫_0.3^1 1/sqrt(s (t - 0.3)) dt = -sqrt(0.7) s^-1.5: quad_vec's nodes reached the limit (inf), the
    # derivative was NaN; QUADPACK's quad, entry by entry, converges
    def f(s, **kw):
        return integrate.quad(lambda t: 1 / np.sqrt(s * (t - 0.3)), 0.3, 1.0, **kw)[0]
    exact = -math.sqrt(0.7) * 1.3 ** -1.5
    for kw in ({}, {"epsabs": 1e-12, "epsrel": 1e-12}):
        assert derivative(lambda s: f(s, **kw), 1.3) == pytest.approx(exact, rel=1e-8)
        assert gradient(lambda s: f(s, **kw), 1.3)[0] == pytest.approx(exact, rel=1e-8)
    g = lambda s: integrate.quad(lambda t: t ** (s - 1.0), 0.0, 1.0)[0]  # 1/s  # noqa: E731
    assert derivative(g, 0.37) == pytest.approx(-1 / 0.37 ** 2, rel=1e-7)
    assert gradient(g, 0.37)[0] == pytest.approx(-1 / 0.37 ** 2, rel=1e-7)


@pytest.mark.parametrize("points", [False, True])
def test_quad_whose_derivative_is_not_integrable_is_refused(points):
    # ∫_0^1 |t - s|^-0.5 dt: the derivative of the integrand is |t - s|^-1.5, not integrable (the Leibniz
    # rule fails); a number here would be wrong
    from contexts.rules.registry import NoDerivative

    def f(s):
        kw = {"points": [s]} if points else {}
        return integrate.quad(lambda t: np.abs(t - s) ** -0.5, 0.0, 1.0, **kw)[0]
    for mode in (derivative, gradient):
        with pytest.raises(NoDerivative, match="does not converge"):
            mode(f, 0.37)


def test_points_given_a_differentiated_value():
    def f(s):
        return integrate.quad(lambda t: np.abs(t - s) * s, 0.0, 1.0, points=[s])[0]  # s (s²/2 + (1-s)²/2)
    s = 0.37
    exact = (s * s + (1 - s) ** 2) / 2 + s * (s - (1 - s))
    assert derivative(f, s) == pytest.approx(exact, rel=1e-8)
    assert gradient(f, s)[0] == pytest.approx(exact, rel=1e-8)


def test_numpy_arithmetic_on_a_scalar_dual_computes_on_numpy_scalars():
    # (np.abs of a dual of a Python float gave a Python float value: `** -0.5` at 0 raised ZeroDivisionError
    # where the user's numpy code gives inf)
    def f(s):
        u = np.abs(s - 0.5) ** -0.5
        return 7.0 * s if not np.isfinite(u) else u
    with np.errstate(divide="ignore"):
        assert derivative(f, 0.5) == 7.0
        assert gradient(f, 0.5)[0] == 7.0
