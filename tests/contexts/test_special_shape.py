"""scipy.special's functions differentiated in a shape or order parameter (`contexts/rules/numpy/scipy_special_shape`):
the incomplete gamma and beta functions, their inverses and the distribution functions on them in their shapes, and
the Bessel functions in their order. Reverse mode (`gradient`) and forward mode (`derivative`, `jacfwd`) against
central differences and against mpmath's derivatives at 30+ digits (relative error 1e-8 and better); through
scipy.stats (gamma, beta, chi2, t), a Matern kernel and scikit-learn's; refused, never a wrong number, where the
numerics do not hold (x <= 0 or complex for the Bessel orders, a second derivative in a shape)."""

import math

import numpy as np
import pytest

sc = pytest.importorskip("scipy.special")
st = pytest.importorskip("scipy.stats")

from contexts import derivative, gradient, hessian, jacfwd  # noqa: E402
from contexts.rules.registry import NoDerivative  # noqa: E402
from contexts.sparsity.api import jacobian_sparsity  # noqa: E402
from tests import fd  # noqa: E402

REL = 1e-8  # against mpmath
FD_REL = 1e-6  # against central differences (their own truncation and rounding)


def _mp():
    return pytest.importorskip("mpmath")


def _fd(f, s):
    """d/ds f(s) by the five-point stencil, its step scaled to s (and below s for a shape near 0)."""
    h = 1e-3 * min(max(abs(s), 1e-2), 10.0) if s else 1e-4
    return fd.gradient(f, float(s), h=h)[0]


def _both_modes(f, s):
    """(reverse mode's df/ds, forward mode's) at a float s."""
    return gradient(f, s)[0], derivative(f, s)


def _check(f, s, want, rel=REL):
    for got in _both_modes(f, s):
        assert got == pytest.approx(want, rel=rel, abs=1e-300), (got, want)


def _mp_diff(F, s, scale=None):
    """mpmath's derivative of F at s, with working digits enough for the value (its tiny derivatives: the
    complements' differences lose the leading digits)."""
    mp = _mp()
    dps = 40
    while True:
        with mp.workdps(dps):
            r = mp.diff(F, mp.mpf(s))
        needed = 60 + int(-mp.log10(abs(r))) if r != 0 and abs(r) < 1 else 40
        if needed <= dps or dps >= 800:
            return float(r)
        dps = min(needed + 20, 800)


# -- the incomplete gamma function in a ---------------------------------------------------------------------

GAMMA_POINTS = [(0.01, 1e-8), (0.01, 0.5), (0.01, 20.0), (0.7, 0.3), (2.5, 1.7), (2.5, 40.0), (30.0, 25.0),
                (30.0, 31.0), (300.0, 320.0), (999.0, 1000.0), (1000.0, 1050.0), (500.0, 400.0)]


def _p_da(a, x):
    """mpmath's dP(a, x)/da, by the smaller of P and its complement."""
    mp = _mp()
    lower = sc.gammainc(a, x) < 0.5
    x = mp.mpf(x)
    if lower:
        return _mp_diff(lambda s: mp.gammainc(s, 0, x, regularized=True), a)
    return -_mp_diff(lambda s: mp.gammainc(s, x, mp.inf, regularized=True), a)


@pytest.mark.parametrize("a, x", GAMMA_POINTS)
def test_gammainc_in_a_against_mpmath(a, x):
    want = _p_da(a, x)
    _check(lambda s: sc.gammainc(s, x), a, want)
    _check(lambda s: sc.gammaincc(s, x), a, -want)


@pytest.mark.parametrize("a, x", [(0.01, 0.5), (2.5, 1.7), (2.5, 6.0), (30.0, 31.0)])
def test_gammainc_in_a_against_central_differences(a, x):
    for fn in (sc.gammainc, sc.gammaincc):
        _check(lambda s: fn(s, x) * 3.0, a, _fd(lambda s: fn(s, x) * 3.0, a), FD_REL)


def test_gammainc_arrays_broadcast_and_both_arguments():
    a = np.array([0.3, 2.5, 40.0])
    x = np.array([[0.2], [3.0], [45.0]])

    def f(a, x):
        return np.sum(sc.gammainc(a, x) * np.array([1.0, -2.0, 0.5]))
    ga, gx = gradient(f, a, x)
    want_a, want_x = fd.gradient(f, a, x, h=1e-5)
    np.testing.assert_allclose(ga, want_a, rtol=FD_REL)
    np.testing.assert_allclose(gx, want_x, rtol=FD_REL)
    jac = jacfwd(lambda s: sc.gammaincc(s, 3.0), a)
    np.testing.assert_allclose(np.diag(jac), [-_p_da(v, 3.0) for v in a], rtol=REL)
    assert np.count_nonzero(jac - np.diag(np.diag(jac))) == 0


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (x's own partial at x = inf: inf - inf, dropped)
def test_gammainc_at_the_ends_of_x():
    assert _both_modes(lambda s: sc.gammainc(s, 0.0), 2.0) == (0.0, 0.0)  # (P(a, 0) = 0 for every a)
    assert _both_modes(lambda s: sc.gammaincc(s, np.inf), 2.0) == (0.0, 0.0)


@pytest.mark.parametrize("a, p", [(0.5, 0.1), (2.5, 0.5), (40.0, 0.99)])
def test_gammaincinv_in_a(a, p):
    for fn, keep in ((sc.gammaincinv, sc.gammainc), (sc.gammainccinv, sc.gammaincc)):
        _check(lambda s: fn(s, p), a, _fd(lambda s: fn(s, p), a), FD_REL)
        # the inverse's derivative cancels the function's: P(a, P^-1(a, p)) is p for every a
        assert gradient(lambda s: keep(s, fn(s, p)), a)[0] == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("v, x", [(0.5, 0.01), (3.0, 2.5), (30.0, 40.0)])
def test_chi2_and_gamma_distribution_functions_in_their_shape(v, x):
    want = 0.5 * _p_da(v / 2, x / 2)
    _check(lambda s: sc.chdtr(s, x), v, want)
    _check(lambda s: sc.chdtrc(s, x), v, -want)
    rate = 1.7  # gdtr(rate, b, x) = P(b, rate x)
    _check(lambda s: sc.gdtr(rate, s, x / (2 * rate)), v / 2, 2 * want)
    _check(lambda s: sc.gdtrc(rate, s, x / (2 * rate)), v / 2, -2 * want)


# -- the incomplete beta function in a and b ------------------------------------------------------------------

BETA_POINTS = [(0.01, 0.7, 1e-6), (0.3, 4.0, 0.2), (2.5, 3.5, 0.5), (2.5, 3.5, 0.97), (30.0, 50.0, 0.3),
               (30.0, 50.0, 0.999), (1000.0, 1000.0, 0.5), (1.0, 1000.0, 1e-3), (0.5, 0.5, 0.9), (800.0, 3.0, 0.99)]


def _i_dab(a, b, x):
    """mpmath's (dI/da, dI/db) at (a, b, x), by the smaller of I and its complement."""
    mp = _mp()
    lower = sc.betainc(a, b, x) < 0.5
    x = mp.mpf(x)
    ends = (0, x) if lower else (x, 1)
    sign = 1 if lower else -1
    da = _mp_diff(lambda s: mp.betainc(s, b, *ends, regularized=True), a)
    db = _mp_diff(lambda s: mp.betainc(a, s, *ends, regularized=True), b)
    return sign * da, sign * db


@pytest.mark.parametrize("a, b, x", BETA_POINTS)
def test_betainc_in_a_and_b_against_mpmath(a, b, x):
    want_a, want_b = _i_dab(a, b, x)
    _check(lambda s: sc.betainc(s, b, x), a, want_a)
    _check(lambda s: sc.betainc(a, s, x), b, want_b)
    _check(lambda s: sc.betaincc(s, b, x), a, -want_a)
    _check(lambda s: sc.betaincc(a, s, x), b, -want_b)
    ga, gb = gradient(lambda s, t: sc.betainc(s, t, x), a, b)
    assert (ga, gb) == (pytest.approx(want_a, rel=REL), pytest.approx(want_b, rel=REL))


def test_betainc_arrays_broadcast():
    a = np.array([0.4, 2.0, 9.0])
    b = np.array([[1.5], [30.0]])
    x = 0.35

    def f(a, b):
        return np.sum(np.cos(sc.betainc(a, b, x)))
    ga, gb = gradient(f, a, b)
    want_a, want_b = fd.gradient(f, a, b, h=1e-5)
    np.testing.assert_allclose(ga, want_a, rtol=FD_REL)
    np.testing.assert_allclose(gb, want_b, rtol=FD_REL)
    jac = jacfwd(lambda t: sc.betainc(2.0, t, np.array([0.1, 0.5, 0.9])), np.array([0.5, 3.0, 60.0]))
    np.testing.assert_allclose(np.diag(jac), [_i_dab(2.0, t, xi)[1] for t, xi in ((0.5, 0.1), (3.0, 0.5), (60.0, 0.9))],
                               rtol=REL)


@pytest.mark.parametrize("a, b, p", [(0.5, 2.0, 0.1), (2.5, 3.5, 0.5), (30.0, 5.0, 0.97)])
def test_betaincinv_in_a_and_b(a, b, p):
    for fn, keep in ((sc.betaincinv, sc.betainc), (sc.betainccinv, sc.betaincc)):
        _check(lambda s: fn(s, b, p), a, _fd(lambda s: fn(s, b, p), a), FD_REL)
        _check(lambda s: fn(a, s, p), b, _fd(lambda s: fn(a, s, p), b), FD_REL)
        g = gradient(lambda s, t: keep(s, t, fn(s, t, p)), a, b)
        assert g == (pytest.approx(0.0, abs=1e-9), pytest.approx(0.0, abs=1e-9))


@pytest.mark.parametrize("df, t", [(0.5, -3.0), (1.0, 0.3), (2.5, 1.7), (30.0, -2.41), (1000.0, 0.5), (1000.0, 5.0)])
def test_stdtr_in_df(df, t):
    mp = _mp()
    tt = mp.mpf(t)

    def half(s):  # the smaller tail, I(df/2, 1/2, df / (df + t^2)) / 2
        return mp.betainc(s / 2, mp.mpf(1) / 2, 0, s / (s + tt * tt), regularized=True) / 2
    want = (-1 if t > 0 else 1) * _mp_diff(half, df)
    _check(lambda s: sc.stdtr(s, t), df, want)


# -- Bessel functions in their order ----------------------------------------------------------------------------

def _bessel(kind):
    mp = _mp()
    return {"kv": mp.besselk, "iv": mp.besseli, "jv": mp.besselj, "yv": mp.bessely}[kind]


def _dv(kind, v, x):
    mp = _mp()
    F = _bessel(kind)
    return _mp_diff(lambda s: F(s, mp.mpf(x)), v)


BESSEL_POINTS = {
    "kv": [(0.3, 1e-3), (1.5, 0.7), (2.5, 30.0), (-2.5, 3.0), (10.0, 1.0), (50.0, 100.0), (0.5, 700.0)],
    "iv": [(0.3, 1.0), (0.5, 5.0), (2.5, 0.1), (2.5, 30.0), (40.0, 10.0), (-0.3, 2.0), (-2.5, 3.0), (0.0, 2.0)],
    "jv": [(0.3, 1.0), (2.5, 0.5), (2.5, 30.0), (40.0, 10.0), (40.0, 45.0), (-2.5, 3.0), (-3.0, 2.0), (0.0, 5.0),
           (1.5, 500.0)],
    "yv": [(0.3, 1.0), (2.5, 0.5), (2.5, 30.0), (40.0, 10.0), (-2.5, 3.0), (0.0, 5.0), (1.5, 500.0)],
}


@pytest.mark.parametrize("kind, v, x", [(k, v, x) for k, points in BESSEL_POINTS.items() for v, x in points])
def test_bessel_in_the_order_against_mpmath(kind, v, x):
    want = _dv(kind, v, x)
    fn = getattr(sc, kind)
    _check(lambda s: fn(s, x), v, want)
    if kind in ("jv", "yv"):  # (for real x, jve and yve are jv and yv)
        _check(lambda s: getattr(sc, kind[0] + "ve")(s, x), v, want)


@pytest.mark.parametrize("v, x", [(1.5, 0.7), (2.5, 300.0), (100.0, 1000.0), (-2.5, 3.0), (0.25, 50.0)])
def test_scaled_bessel_in_the_order(v, x):
    mp = _mp()
    for fn, kind, sign in ((sc.kve, "kv", 1), (sc.ive, "iv", -1)):
        with mp.workdps(40):
            want = float(mp.exp(sign * mp.mpf(x)) * mp.diff(lambda s: _bessel(kind)(s, mp.mpf(x)), mp.mpf(v)))
        _check(lambda s: fn(s, x), v, want)


def test_bessel_orders_over_arrays():
    v = np.array([0.2, 1.5, 7.0])
    x = np.array([0.5, 3.0, 12.0])
    for fn in (sc.kv, sc.iv, sc.jv, sc.yv, sc.kve, sc.ive):
        jac = jacfwd(lambda s: fn(s, x), v)
        want = fd.jacobian(lambda s: fn(s, x), v, h=1e-6)
        np.testing.assert_allclose(jac, want, rtol=FD_REL, atol=1e-9)
        # a 3 x 3 table of values of many sizes: each entry's derivative by differences, summed (differences of
        # the sum would drown the small entries in the large ones' rounding)
        gv, gx = gradient(lambda s, t: np.sum(fn(s, t[:, None])), v, x)
        np.testing.assert_allclose(gv, fd.jacobian(lambda s: fn(s, x[:, None]), v).sum(axis=(0, 1)), rtol=FD_REL)
        np.testing.assert_allclose(gx, fd.jacobian(lambda t: fn(v, t[:, None]), x).sum(axis=(0, 1)), rtol=FD_REL)


# -- through libraries ------------------------------------------------------------------------------------------

def test_scipy_stats_gamma_cdf_in_its_shape():
    x = np.array([0.3, 1.7, 4.0, 12.0])
    a = 2.3

    def nll(a):
        return -np.sum(np.log(st.gamma.cdf(x, a) + 0.1))
    want = _fd(nll, a)
    assert gradient(nll, a)[0] == pytest.approx(want, rel=FD_REL)
    assert derivative(nll, a) == pytest.approx(want, rel=FD_REL)
    got = gradient(lambda a: st.gamma.cdf(4.0, a, scale=1.5), a)[0]
    assert got == pytest.approx(_p_da(a, 4.0 / 1.5), rel=REL)
    assert gradient(lambda a: st.gamma.sf(40.0, a), a)[0] == pytest.approx(-_p_da(a, 40.0), rel=REL)


def test_scipy_stats_beta_cdf_in_both_shapes():
    x = np.array([0.05, 0.3, 0.62, 0.97])

    def f(a, b):
        return np.sum(st.beta.cdf(x, a, b) ** 2)
    want = fd.gradient(f, 1.8, 4.5, h=1e-4)
    got = gradient(f, 1.8, 4.5)
    assert got == (pytest.approx(want[0], rel=FD_REL), pytest.approx(want[1], rel=FD_REL))
    assert derivative(lambda b: f(1.8, b), 4.5) == pytest.approx(want[1], rel=FD_REL)
    da, db = _i_dab(1.8, 4.5, 0.3)
    assert gradient(lambda a, b: st.beta.cdf(0.3, a, b), 1.8, 4.5) == (pytest.approx(da, rel=REL),
                                                                      pytest.approx(db, rel=REL))
    assert gradient(lambda a: st.beta.sf(0.97, a, 4.5), 1.8)[0] == pytest.approx(-_i_dab(1.8, 4.5, 0.97)[0], rel=REL)


def test_scipy_stats_chi2_and_t_in_their_degrees_of_freedom():
    want = 0.5 * _p_da(1.5, 1.2)
    assert gradient(lambda k: st.chi2.cdf(2.4, k), 3.0)[0] == pytest.approx(want, rel=REL)
    assert derivative(lambda k: st.chi2.sf(2.4, k), 3.0) == pytest.approx(-want, rel=REL)
    f = lambda df: st.t.cdf(-1.3, df)  # noqa: E731
    assert gradient(f, 4.0)[0] == pytest.approx(_fd(f, 4.0), rel=FD_REL)


def _matern(r, nu, length=1.3):
    """The Matern covariance 2^(1 - nu) / Gamma(nu) (sqrt(2 nu) r / l)^nu K_nu(sqrt(2 nu) r / l)."""
    z = np.sqrt(2 * nu) * r / length
    return 2 ** (1 - nu) / sc.gamma(nu) * z ** nu * sc.kv(nu, z)


@pytest.mark.parametrize("nu", [0.7, 1.5, 4.2])
def test_matern_kernel_in_its_smoothness(nu):
    r = np.array([0.05, 0.4, 1.1, 2.5, 6.0])

    def total(nu):
        return np.sum(_matern(r, nu))
    want = _fd(total, nu)
    assert gradient(total, nu)[0] == pytest.approx(want, rel=FD_REL)
    assert derivative(total, nu) == pytest.approx(want, rel=FD_REL)
    jac = jacfwd(lambda n: _matern(r, n[0]), np.array([nu]))[:, 0]
    np.testing.assert_allclose(jac, fd.jacobian(lambda n: _matern(r, n[0]), np.array([nu]), h=1e-6)[:, 0],
                               rtol=FD_REL, atol=1e-9)


def test_scikit_learn_matern_kernel_in_nu():
    kernels = pytest.importorskip("sklearn.gaussian_process.kernels")
    X = np.array([[0.0, 0.1], [0.4, -0.3], [1.1, 0.7], [2.5, 2.0]])

    def f(nu):  # (nu away from 0.5, 1.5, 2.5 and inf: sklearn's general case, through kv)
        return np.sum(kernels.Matern(length_scale=1.3, nu=nu)(X))
    want = _fd(f, 1.7)
    assert gradient(f, 1.7)[0] == pytest.approx(want, rel=FD_REL)
    assert derivative(f, 1.7) == pytest.approx(want, rel=FD_REL)


# -- what the engines make of the partials: sparsity, second derivatives, refusals -------------------------------

def test_sparsity_of_a_shape_is_elementwise():
    a = np.array([0.5, 2.0, 7.0])
    for f in (lambda s: sc.gammainc(s, 1.5), lambda s: sc.betainc(2.0, s, 0.4), lambda s: sc.kv(s, a)):
        pattern = jacobian_sparsity(f, a).toarray()
        np.testing.assert_array_equal(pattern, np.eye(3, dtype=bool))
    assert gradient(lambda s: sc.kv(s, 2.0), 1.5)[0] == pytest.approx(_dv("kv", 1.5, 2.0), rel=REL)


def test_second_derivative_in_a_shape_is_refused_and_in_x_is_not():
    # the numerical partial has no derivative itself: refused, never a zero; in x (the shape constant) as before
    assert gradient(lambda a: sc.gammainc(a, 1.3), 2.5)[0] == pytest.approx(_p_da(2.5, 1.3), rel=REL)
    with pytest.raises(NoDerivative, match="second derivative"):
        hessian(lambda a: sc.gammainc(a, 1.3), 2.5)
    f = lambda x: sc.gammainc(2.5, x) * x + sc.kv(1.5, x)  # noqa: E731
    assert hessian(f, 1.3) == pytest.approx(fd.derivative(lambda s: fd.derivative(f, s, h=1e-4), 1.3, h=1e-4),
                                            rel=1e-5)


def test_bessel_order_refused_where_x_is_not_positive():
    assert derivative(lambda v: sc.iv(v, 1.5), 2.0) == pytest.approx(_dv("iv", 2.0, 1.5), rel=REL)
    for mode in (gradient, derivative):
        with pytest.raises(NoDerivative, match="x > 0 only"):
            mode(lambda v: sc.iv(v, -1.5), 2.0)
        with pytest.raises(NoDerivative, match="complex"):
            mode(lambda v: sc.kv(v, 1.0 + 1.0j).real, 2.0)
    # the order held constant: x's derivative is had (the order's partial, refused, is dropped)
    assert gradient(lambda x: sc.iv(2.0, x), -1.5)[0] == pytest.approx(fd.derivative(lambda x: sc.iv(2.0, x), -1.5))


def test_refused_where_the_integral_does_not_converge():
    # J_v(x) at x = 1e6 oscillates faster than the quadrature resolves: refused, with the arguments named
    assert derivative(lambda v: sc.jv(v, 50.0), 2.0) == pytest.approx(_dv("jv", 2.0, 50.0), rel=REL)
    with pytest.raises(NoDerivative, match="did not reach a relative accuracy"):
        derivative(lambda v: sc.jv(v, 1e6), 2.0)
    assert gradient(lambda x: sc.jv(2.0, x), 1e6)[0] == pytest.approx((sc.jv(1.0, 1e6) - sc.jv(3.0, 1e6)) / 2)


# -- reverse mode computes a numerical partial only for an argument its call may differentiate ----------------

def _count_numerical(monkeypatch):
    """The number of `Numerical` partials computed, counted."""
    from contexts.rules.numpy import scipy_special_shape as shape
    calls = []
    real = shape.Numerical.__call__

    def counted(self, y, *args):
        calls.append(self.argument)
        return real(self, y, *args)
    monkeypatch.setattr(shape.Numerical, "__call__", counted)
    return calls


def _in_x(x):
    return np.sum(sc.betainc(2.0, 3.0, x)) + sc.gammainc(2.5, float(np.sum(x)))


def _in_a(a):
    b = 3.0
    return np.sum(sc.betainc(a, b, np.array([0.2, 0.7]))) + sc.gammainc(a, 1.5)


def test_a_constant_shapes_partial_is_not_computed(monkeypatch):
    """`betainc(2.0, 3.0, x)` in x (the shapes constants of the calling code, `cotangents.NEEDED`): no
    numerical partial computed (their cost was 360 times the gradient's), the gradient the closed form's;
    a differentiated shape's still computed, against central differences."""
    calls = _count_numerical(monkeypatch)
    x = np.array([0.2, 0.5, 0.9])
    got = gradient(_in_x, x)[0]
    assert calls == []
    s = float(np.sum(x))
    want = 12.0 * x * (1 - x) ** 2 + s ** 1.5 * np.exp(-s) / math.gamma(2.5)
    assert got == pytest.approx(want, rel=1e-12)
    assert gradient(_in_a, 1.7)[0] == pytest.approx(_fd(_in_a, 1.7), rel=FD_REL)
    assert set(calls) == {"a"}
