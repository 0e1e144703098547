"""Cases found by the sweeps of session 23 (scipy.stats' generic ppf and compiled integrands, raw memory of
differentiated arrays), each checked against central differences or a closed form."""

import ctypes
import ctypes.util
import math
import warnings

import numpy as np
import pytest

from contexts import derivative, gradient, hessian, jacfwd, jacobian, jvp
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


X4 = np.array([1.53, 0.37, 1.91, 0.67])


def _wrap_angles(y):
    z = y * 5.0
    th = z[::2]
    th %= 2 * np.pi  # (wrapped in place through a view)
    return z ** 2


def _mod_view(y):
    z = y * 3.0
    v = z[::2]
    v %= y[1]
    return z


def _floordiv_alias(x):
    z = x * 3.0
    w = z
    w //= 0.7  # z is floored in place: no longer depends on x
    return z * x[0]


def _floor_into(x):
    z = x * 3.0
    np.floor(z, out=z)
    return z * x[0]


@pytest.mark.parametrize("f", [_wrap_angles, _mod_view, _floordiv_alias, _floor_into])
def test_in_place_mod_and_floordiv_through_views_and_aliases(f):
    # (forward mode: a dual had no __imod__/__ifloordiv__, so `v %= c` rebound v and z kept its values: a
    # wrong value and derivative; the tangent twin's `w //= c` left z's tangent)
    expected = fd.jacobian(f, X4.copy())
    np.testing.assert_allclose(jacfwd(f, X4.copy()), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacobian(f, X4.copy()), expected, rtol=1e-6, atol=1e-8)
    value, tangent = jvp(f, (X4.copy(),), (np.ones(4),))
    np.testing.assert_allclose(value, f(X4.copy()))
    np.testing.assert_allclose(tangent, expected.sum(axis=1), rtol=1e-6, atol=1e-8)


def test_ufunc_out_given_as_a_one_item_tuple():
    # (reverse mode: `out=(o,)`, the tuple numpy documents, was not taken as o written: 0; in place, the
    # tuple's cotangent was added again on every row of a Jacobian)
    def f(x):
        o = np.empty(3)
        np.sin(x, out=(o,))
        return np.sum(o * o)

    def k(x):
        y = x * 1.0
        np.sin(y, out=(y,))
        return y
    x = np.array([0.3, 0.7, 1.45])
    np.testing.assert_allclose(gradient(f, x)[0], fd.gradient(f, x)[0], rtol=1e-7)
    np.testing.assert_allclose(hessian(f, x), fd.hessian(f, x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jacobian(k, x), np.diag(np.cos(x)), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_two_output_ufunc_writing_into_out_arrays_is_refused(mode):
    def g(x):
        frac, whole = np.empty(3), np.empty(3)
        np.modf(x * 2.0, out=(frac, whole))
        return np.sum(frac * frac)
    x = np.array([0.3, 0.7, 1.45])
    with pytest.raises(Exception, match="out"):
        (gradient if mode == "reverse" else jacfwd)(g, x)


def test_sum_with_initial_in_forward_mode():
    # (jacfwd added the initial value to every tangent: [3.6, 4.6, 5.9] for [0.6, 1.6, 2.9])
    x = np.array([0.3, 0.8, 1.45])
    for f in (lambda x: np.sum(x ** 2, initial=3.0) * x[0], lambda x: (x ** 2).sum(initial=3.0),
              lambda x: np.sum(np.sin(x).reshape(3, 1), axis=1, initial=2.0)):
        expected = fd.jacobian(f, x)
        np.testing.assert_allclose(jacfwd(f, x), expected, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(jacobian(f, x), expected, rtol=1e-6, atol=1e-9)


def test_pad_tangents_in_forward_mode():
    # (linear_ramp ran the tangent toward end_values, a constant; maximum/minimum/median padded the tangent
    # with the statistic of the tangents, not the tangent of the element picked)
    x = np.array([0.3, 0.8, 1.45, -0.6])
    for mode, kw in (("linear_ramp", {"end_values": 3.0}), ("linear_ramp", {}), ("mean", {}), ("edge", {}),
                     ("reflect", {"reflect_type": "odd"}), ("constant", {"constant_values": 2.0})):
        def f(x):
            return np.pad(x ** 2, 2, mode=mode, **kw)
        np.testing.assert_allclose(jacfwd(f, x), fd.jacobian(f, x), rtol=1e-6, atol=1e-8, err_msg=mode)
    for mode in ("maximum", "minimum", "median"):
        with pytest.raises(Exception, match=mode):
            jacfwd(lambda x: np.pad(x ** 2, (2, 3), mode=mode), x)


@pytest.mark.parametrize("scale", [100.0, 1000.0])
def test_pinv_of_an_ill_conditioned_full_rank_matrix(scale):
    # (the terms of dP holding I - A P and I - P A are zero at full rank; computed, they were rounding
    # noise times |P|²: at cond 5e5 the derivative was 300% off, found by the fuzzer, numpy seed 905)
    d = np.arange(1.0, 6.0)

    def by_pinv(v):
        return np.linalg.pinv(np.outer(v, v) * 0.2 + np.diag(d)) @ v

    v = np.array([1.7257, 0.71944, 0.84135, 0.43391, 0.18420]) * scale
    u, s = v / d, 1 + 0.2 * v @ (v / d)  # Sherman-Morrison: the function is u / s, its Jacobian:
    exact = np.diag(1 / d) / s - np.outer(u, 0.4 * u) / s ** 2
    tol = 1e-3 * np.abs(exact).max()  # (inv's own error at cond 5e5 is 3e-6 of it: the problem's conditioning)
    np.testing.assert_allclose(jacobian(by_pinv, v.copy()), exact, atol=tol)
    np.testing.assert_allclose(jacfwd(by_pinv, v.copy()), exact, atol=tol)


def test_pinv_of_a_tall_and_a_rank_deficient_matrix():
    # (the terms dropped only where the rank is full: a tall A keeps I - A P, a rank-deficient one both)
    rng = np.random.default_rng(3)
    B = rng.normal(size=(5, 3))

    def tall(x):
        return np.linalg.pinv(B * x[:3]) @ np.arange(5.0)

    def deficient(x):
        A = np.outer(x[:3], x[2:]) + np.outer(x[1:4], x[1:4])  # 3x3 of rank 2
        return (np.linalg.pinv(A) @ np.ones(3)).sum()
    x = np.array([0.7, -1.2, 0.4, 1.5, 0.9])
    for f in (tall, deficient):
        np.testing.assert_allclose(jacobian(f, x), fd.jacobian(f, x), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(jacfwd(f, x), fd.jacobian(f, x), rtol=1e-5, atol=1e-7)


def test_a_cotangent_not_one_per_output_is_refused():
    # (a flat vector, or too few items, for a tuple output was spread over its items by broadcasting)
    from contexts import vjp
    from overdub.errors import OverdubError

    def f(x):
        return x * 2.0, np.sin(x[:2])
    x = np.array([0.3, 0.7, 1.1])
    expected = 2.0 + np.r_[np.cos(x[:2]), 0.0]
    for w in ((np.ones(3), np.ones(2)), [np.ones(3), np.ones(2)]):
        np.testing.assert_allclose(vjp(f, (x,), w)[1][0], expected)
    for w in (np.ones(5), np.ones(3), (np.ones(3),), (np.ones(3), np.ones(3))):
        with pytest.raises(OverdubError, match="cotangent"):
            vjp(f, (x,), w)
    # (an array stacking one cotangent per output, as jacobian seeds, is one per output)
    g = lambda x: (x * 2.0, np.sin(x))  # noqa: E731
    np.testing.assert_allclose(vjp(g, (x,), np.ones((2, 3)))[1][0], 2.0 + np.cos(x))
    np.testing.assert_allclose(jacobian(g, x)[1], np.diag(np.cos(x)))


def _through_a_view(x):
    Z = np.zeros(2)
    v = Z[:]
    v[0] = x  # (written through a view of an array the function made)
    return np.sum(Z ** 2) * x


def _view_taken_before(x):
    Z = np.zeros(2)
    v = Z[:]
    Z[0] = x  # (read back through a view taken before)
    return v[0] ** 2 * x


def _complex_view(x):
    Z = np.zeros(2, complex)
    Z.imag[0] = x
    Z.real[1] = x ** 3
    return np.sum(np.abs(Z) ** 2)


@pytest.mark.parametrize("f", [_through_a_view, _view_taken_before, _complex_view])
def test_second_derivatives_through_views_of_a_fresh_array(f):
    # (a value of the outer derivative call stored into an array the inner one made wrapped the array in a
    # new dual, which its views did not share: the second derivative was 0 in every Hessian mode)
    x = 0.83
    h = 1e-4
    expected = (f(x + h) - 2 * f(x) + f(x - h)) / h ** 2
    assert derivative(lambda s: derivative(f, s), x) == pytest.approx(expected, rel=1e-6)
    assert hessian(f, x) == pytest.approx(expected, rel=1e-6)
    assert hessian(f, x, inner="forward") == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("attr", ["real", "imag", "flat"])
def test_store_into_an_arrays_real_imag_or_flat(attr):
    # (lenstronomy's EPLMajorAxis: `Z = np.empty(n, complex); Z.real = q * x`, written by numpy in C: 0; since
    # session 39 `.real` and `.imag` are differentiated as the store of the whole array, `.flat` is refused)
    def g(x):
        Z = np.zeros(3, complex if attr != "flat" else float)
        if attr == "real":
            Z.real = 0.7 * x
        elif attr == "imag":
            Z.imag = 0.7 * x
        else:
            Z.flat = 0.7 * x
        return np.sum(np.abs(Z) ** 2)
    if attr != "flat":
        assert gradient(g, 0.9)[0] == pytest.approx(6 * 0.49 * 0.9, rel=1e-12)  # (3 (0.7 x)^2)
        return
    with pytest.raises(UnsupportedFunction, match=f"store into an array's .{attr}"):
        gradient(g, 0.9)


class _Scaled:
    """An object a number scales by its reflected operator (galpy's `amp * Potential`), non-linear inside."""

    def __init__(self, k):
        self.k = k

    def __rmul__(self, a):
        return _Scaled(self.k * a)

    def __radd__(self, a):
        return _Scaled(self.k + a)

    def __call__(self, x):
        return self.k * x

    def __getitem__(self, i):
        return self.k ** 3

    def scaled(self, s):
        return self.k * s

    def __float__(self):
        return float(self.k ** 2)

    def __iter__(self):
        yield self.k ** 2
        yield self.k


@pytest.mark.parametrize("f", [
    lambda a: (a * _Scaled(2.0))(0.6), lambda a: (a + _Scaled(2.0))(0.6) * a, lambda a: (a * _Scaled(2.0))[1],
    lambda a: (a * _Scaled(2.0)).k ** 2, lambda a: (a * _Scaled(2.0)).scaled(a),
    lambda a: (a * np.poly1d([1.0, 2.0]))(0.9), lambda a: (np.poly1d([1.0, 2.0]) * a)(0.9),
    lambda a: float(a * _Scaled(2.0)), lambda a: sum(a * _Scaled(2.0)),
], ids=["call", "radd then call", "item", "attribute", "method", "poly1d times a", "a times poly1d", "float",
        "iterated"])
def test_an_object_a_differentiated_number_made_in_forward_mode(f):
    # (the tangent twin computed `da * obj` by obj's own operator and then called, indexed or read the
    # object made from the tangent: 0, or the object's non-linear __getitem__ applied to the tangent)
    expected = fd.derivative(f, 0.7)
    assert derivative(f, 0.7) == pytest.approx(expected, rel=1e-7)
    assert jvp(f, (0.7,), (1.0,))[1] == pytest.approx(expected, rel=1e-7)
    assert gradient(f, 0.7)[0] == pytest.approx(expected, rel=1e-7)


def test_arithmetic_on_a_matrix():
    # (np.matrix's * is a matrix product, which the rules' elementwise cotangent products followed: the
    # gradient of sum((a * B) ∘ W) doubled, np.multiply(X, B)'s Jacobian took B's rows; refused until its
    # products were differentiated as products, `rules.numpy.matrix`. Forward mode's duals still refuse
    # a matrix: jvp by name, jacfwd answers by reverse mode)
    from overdub.errors import OverdubError
    from tests.fd import gradient as fd_gradient, jacobian as fd_jacobian
    B = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    W = np.array([[0.5, 1.0], [2.0, 1.5]])
    for f in (lambda a: np.sum(np.asarray(a * B) * W), lambda a: np.multiply(B, a).sum()):
        g = gradient(f, 0.7)[0]
        assert type(g) is float and g == pytest.approx(fd_gradient(f, 0.7)[0], rel=1e-9)
    g = lambda x: np.asarray(np.multiply(x.reshape(2, 2), B)).ravel()  # noqa: E731
    x = np.array([1.0, 0.5, -0.3, 2.0])
    np.testing.assert_allclose(jacobian(g, x), fd_jacobian(g, x, matrix=True), atol=1e-8)
    np.testing.assert_allclose(jacfwd(g, x), fd_jacobian(g, x), atol=1e-8)
    for h in (lambda x: np.asarray(x[0] * B).ravel(), lambda x: np.asarray(x.reshape(2, 2) * B).ravel()):
        np.testing.assert_allclose(jacfwd(h, x), fd_jacobian(h, x), atol=1e-8)
        # (jvp: forward mode refuses a matrix by name; reverse mode's Jacobian answers after it, session 73)
        np.testing.assert_allclose(jvp(h, (x,), (np.ones(4),))[1], fd_jacobian(h, x) @ np.ones(4), atol=1e-8)


class _Sub(np.ndarray):
    pass


def _write_base_read_subclass_view(x):
    r = x * x
    v = r.view(_Sub)
    r[2] = x[2]
    return np.asarray(v).sum()


def _write_subclass_view_read_base(x):
    r = x * x
    v = r.view(_Sub)
    v[2] = x[2]
    return r.sum()


@pytest.mark.parametrize("f", [_write_base_read_subclass_view, _write_subclass_view_read_base])
def test_in_place_changes_seen_through_a_subclass_view_in_reverse_mode(f):
    # (the views an in-place change reaches were looked for among plain ndarrays only: the change was lost)
    x = np.array([0.61, -0.37, 0.83, 0.24])
    np.testing.assert_allclose(gradient(f, x)[0], fd.gradient(f, x)[0], rtol=1e-7)


def test_out_array_of_a_subclass_is_refused():
    # (written in C, its derivative lost: 0 in both modes)
    from overdub.errors import OverdubError

    def k(x):
        s = np.zeros(4).view(_Sub)
        np.multiply(x, x, out=s)
        return np.asarray(s).sum()
    x = np.array([0.61, -0.37, 0.83, 0.24])
    for mode in (gradient, jacfwd):
        with pytest.raises(OverdubError):
            mode(k, x)


def test_second_derivatives_of_kernels_filtering_in_place():
    # (each direction of a chunk ran the kernel again on the output the last one left when that output was a
    # dual of an outer derivative call: Hessians off by the chunk's size, sobel's by 1e3)
    from scipy import ndimage, signal
    x = np.array([0.5, 1.5])
    f = lambda v: np.sum(signal.upfirdn([1.0], v) ** 3)  # noqa: E731  (sum(v**3))
    np.testing.assert_allclose(hessian(f, x), np.diag(6 * x), rtol=1e-12)
    np.testing.assert_allclose(hessian(f, x, inner="forward"), np.diag(6 * x), rtol=1e-12)
    y = np.array([0.3, -0.7, 1.1, 0.4, -0.2, 0.9])
    g = lambda v: np.sin(np.sum(signal.resample_poly(v, 2, 3)))  # noqa: E731
    np.testing.assert_allclose(hessian(g, y), fd.hessian(g, y), atol=1e-6)
    img = np.linspace(0.1, 1.2, 12).reshape(3, 4) ** 1.5
    s = lambda a: np.sum(ndimage.sobel(a.reshape(3, 4)) ** 3)  # noqa: E731
    np.testing.assert_allclose(hessian(s, img.ravel()), fd.hessian(s, img.ravel()), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("f", [
    lambda a: np.polymul(np.poly1d([a, 0.3 * a, 0.2]), np.poly1d([1.0, 0.5, -0.4, 0.1]))[1],
    lambda a: np.polyval([1.0, 0.2, 0.5], np.poly1d([a, 0.3 * a]))[1],
    lambda a: np.polyder(np.poly1d([a, 0.3 * a, 0.2]) * np.poly1d([a, 0.3 * a, 0.2]))[1],
], ids=["polymul", "polyval of a poly1d", "polyder"])
def test_numpys_poly1d_functions_in_forward_mode(f):
    # (forward mode converted the poly1d to its coefficient array before numpy's function saw it: an array
    # came back, not a poly1d, and p[1] read another coefficient: a wrong value and derivative)
    value, tangent = jvp(f, (0.61,), (1.0,))
    assert value == pytest.approx(f(0.61), rel=1e-12)
    assert tangent == pytest.approx(fd.derivative(f, 0.61), rel=1e-7)
    h = 1e-4
    assert hessian(f, 0.61) == pytest.approx((f(0.61 + h) - 2 * f(0.61) + f(0.61 - h)) / h ** 2, rel=1e-5, abs=1e-7)


@pytest.mark.parametrize("x", [1.22, -1.22, 0.3])
def test_complex_arccos_and_arcsin_on_their_cuts(x):
    # (the rules' sqrt(1 - x * x) at x = 1.22 + 0j went to the other side of sqrt's cut: the imaginary
    # part's derivative came out with the wrong sign, as numpy's emath.arccos gives it)
    for f in (lambda a: np.emath.arccos(a).imag, lambda a: np.arcsin(a + 0j).imag,
              lambda a: np.emath.arcsin(a).real + np.emath.arccos(a).real):
        expected = fd.derivative(f, x)
        assert gradient(f, x)[0] == pytest.approx(expected, rel=1e-7, abs=1e-9)
        assert derivative(f, x) == pytest.approx(expected, rel=1e-7, abs=1e-9)


def test_interp_of_complex_samples_is_refused():
    # (the rules take real samples: the imaginary part's derivative was dropped, 0)
    from contexts.rules.numpy._util import UnsupportedCase

    def f(b):
        return np.interp(0.3, [0.0, 0.5, 1.0], np.array([1.0 + 0.3j, 2.0 + 1j * b, 0.5])).imag
    for mode in (gradient, derivative):
        with pytest.raises(UnsupportedCase, match="complex samples"):
            mode(f, 0.61)
    g = lambda b: np.interp(0.3, [0.0, 0.5, 1.0], np.array([1.0, 2.0 * b, 0.5]))  # noqa: E731
    assert derivative(g, 0.61) == pytest.approx(1.2) and gradient(g, 0.61)[0] == pytest.approx(1.2)


def test_chain_of_an_endless_iterator_is_refused_not_drawn_forever():
    # (reverse mode's itertools.chain drew every item at once: chain([bg], cycle(colors)), skimage's
    # label2rgb, never returned)
    import itertools
    from overdub.errors import OverdubError

    def f(a):
        colors = [np.array((1.0, 0, 0)), np.array((0, 0, 1.0))]
        alpha = a  # noqa: F841  (the shape of function whose chain reverse mode records)
        cyc = itertools.chain([np.zeros(3)], itertools.cycle(colors))
        table = np.stack([c for i, c in zip(range(3), cyc)])
        return a * np.sum(table)
    try:
        value = gradient(f, 0.7)[0]
    except OverdubError as e:
        assert "endless" in str(e)
    else:
        assert value == pytest.approx(2.0)


def _imag_view_then_write(x):
    Z = x[:2] + 1j * x[2:]
    im = Z.imag
    Z[0] = x[3] + 1j * x[0] ** 2
    return im * 1.0


def _real_view_scaled(x):
    Z = x[:2] + 1j * x[2:]
    re = Z.real
    re *= 3.0
    return np.abs(Z)


@pytest.mark.parametrize("f", [_imag_view_then_write, _real_view_scaled])
def test_jvp_through_real_and_imag_views_of_a_complex_array(f):
    # (the tangent twin synced views by element addresses, which a float view of complex memory does not
    # share one for one: jvp kept the old tangent where jacfwd was right)
    x = np.array([0.61, -0.37, 0.83, 0.24])
    v = np.array([1.0, 0.5, -0.3, 0.7])
    expected = fd.jacobian(f, x) @ v
    np.testing.assert_allclose(jvp(f, (x,), (v,))[1], expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(jacfwd(f, x) @ v, expected, rtol=1e-6, atol=1e-9)


def _with_a_number_default(r, n=2.3):
    from scipy.special import gammaincinv
    return gammaincinv(2.0 * n, 0.5) * r


def test_a_module_level_functions_number_default_is_a_constant_in_reverse_mode():
    # (reverse mode took the default n as a differentiated input: gammaincinv has no derivative in it, a
    # refusal; astropy's Sersic profiles, galpy's potentials met it)
    from scipy.special import gammaincinv
    expected = gammaincinv(4.6, 0.5)
    assert gradient(_with_a_number_default, 0.53)[0] == pytest.approx(expected, rel=1e-12)

    def outer(x):  # (a default made inside the differentiated code still carries x's derivative)
        g = lambda r, s=x * x: s * r  # noqa: E731
        return g(3.0)
    assert gradient(outer, 0.7)[0] == pytest.approx(4.2)


def _into_a_larger_out(z):
    b = np.outer(z[:2], z[:2])
    np.add(z[:2], z[2], out=b)  # (z[:2] + z[2] broadcast to b's (2, 2))
    return b.ravel()


def _into_a_fresh_larger_out(z):
    b = np.zeros(1)
    np.multiply(z[0], z[1], out=b)
    return b * z[2] + b


@pytest.mark.parametrize("f", [_into_a_larger_out, _into_a_fresh_larger_out])
def test_ufunc_broadcasting_into_a_larger_out_array_in_forward_mode(f):
    # (the smaller result was handed to the out array's in-place update, which left the array as it was:
    # its old tangent, or 0)
    x = np.array([0.7, 0.2, 0.3])
    expected = fd.jacobian(f, x)
    np.testing.assert_allclose(jacfwd(f, x), expected, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(jvp(f, (x,), (np.array([1.0, 0.5, -0.2]),))[1],
                               expected @ np.array([1.0, 0.5, -0.2]), rtol=1e-7, atol=1e-10)
    g = lambda v: np.sum(f(v) ** 2)  # noqa: E731
    np.testing.assert_allclose(hessian(g, x, inner="forward"), fd.hessian(g, x), rtol=1e-4, atol=1e-6)


def test_nested_derivatives_over_two_directions_write_through_a_view():
    # (the inner derivative call started at a plain value, the outer one's perturbation came through the
    # closure: arrays the inner call made did not carry the outer tag, and a write through their view was
    # lost, 0)
    def inner(s, t):
        b = np.zeros(2)
        u = b[:]
        u[0] = s * t
        u[1] = np.sin(s) * t * t
        return b[0] + b[1]

    def outer(s):
        return derivative(lambda t: inner(s, t), 0.6)
    expected = 1.0 + np.cos(0.8) * 2 * 0.6  # d/ds (s + sin(s) 2t) at t = 0.6
    assert derivative(outer, 0.8) == pytest.approx(expected, rel=1e-10)
    assert jacfwd(lambda v: np.array([outer(v[0])]), np.array([0.8]))[0, 0] == pytest.approx(expected, rel=1e-10)


def test_concatenate_into_an_out_array_in_forward_mode():
    # (crashed: AttributeError on a None tag)
    def f(x):
        o = np.empty(4)
        np.concatenate([x[:2] ** 2, x[2:] * 3], out=o)
        return o
    x = np.array([0.3, 0.8, 1.45, -0.6])
    np.testing.assert_allclose(jacfwd(f, x), fd.jacobian(f, x), rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(jacobian(f, x), fd.jacobian(f, x), rtol=1e-7, atol=1e-10)
