"""scipy.special's F distribution in its degrees of freedom and the inverses in a shape (`scipy_special_more`,
`scipy_special_dist`): `fdtr`, `fdtrc` (dfn, dfd), `fdtri`, `chdtri`, `gdtrix`, `gdtria`, `stdtrit` (their shape
by the implicit function theorem), the shape-solving inverses `chdtriv`, `gdtrib`, `stdtridf`, `fdtridfd`,
`btdtria`, `btdtrib` (every argument), scipy.stats' `_beta_ppf` (a, b) and `_nbinom_cdf`/`_sf` (n). Each against
mpmath at 40 digits (the inverses at mpmath's own root), against central differences, in reverse and forward mode,
and through scipy.stats; refused where scipy's solution is not a root, and for a second derivative."""


import numpy as np
import pytest

sc = pytest.importorskip("scipy.special")
st = pytest.importorskip("scipy.stats")
mp = pytest.importorskip("mpmath")

from contexts import derivative, gradient, hessian, jvp  # noqa: E402
from contexts.rules.registry import NoDerivative  # noqa: E402
from overdub.errors import OverdubError  # noqa: E402
from tests import fd  # noqa: E402

REL = 1e-10  # against mpmath (at mpmath's root of the given probability)
FD_REL = 1e-6  # against central differences
u = sc._ufuncs

from tests.contexts.test_scipy_stats_kernels import _quiet  # noqa: E402,F401  (numpy's and scipy's warnings off)


def _diff(F, args, i):
    """mpmath's dF/d args[i] at 40 digits (more where the derivative is tiny)."""
    dps = 40
    while True:
        with mp.workdps(dps):
            x = [mp.mpf(a) for a in args]
            r = mp.diff(lambda s: F(*x[:i], s, *x[i + 1:]), x[i])
        need = 60 + int(-mp.log10(abs(r))) if r != 0 and abs(r) < 1 else 40
        if need <= dps or dps >= 400:
            return float(r)
        dps = min(need + 20, 400)


def _f_cdf(n, d, x, upper=False):
    v = n * x / (d + n * x)
    return mp.betainc(n / 2, d / 2, v, 1, regularized=True) if upper else mp.betainc(n / 2, d / 2, 0, v,
                                                                                      regularized=True)


def _chi2(v, x):
    return mp.gammainc(v / 2, 0, x / 2, regularized=True)


def _gamma(a, b, x):  # gdtr(a, b, x) = P(b, a x)
    return mp.gammainc(b, 0, a * x, regularized=True)


def _beta(a, b, x):
    return mp.betainc(a, b, 0, x, regularized=True)


def _t(df, t):
    h = mp.betainc(df / 2, mp.mpf(1) / 2, 0, df / (df + t * t), regularized=True) / 2
    return 1 - h if t > 0 else h


def _implicit(F, args, solved, guess, q=None):
    """The partials of the inverse solving F(*args) = q for args[solved], by mpmath: the root at 40 digits
    from `guess` (scipy's solution; q by default F at it), then -F_i / F_v (1 / F_v in q, which is not among
    args: returned last)."""
    with mp.workdps(40):
        x = [mp.mpf(a) for a in args]
        q = F(*x) if q is None else mp.mpf(q)
        x[solved] = mp.findroot(lambda s: F(*x[:solved], s, *x[solved + 1:]) - q, mp.mpf(guess))
        root = [float(v) for v in x]
    fv = _diff(F, root, solved)
    partials = [-_diff(F, root, i) / fv for i in range(len(args)) if i != solved]
    return partials + [1 / fv], float(q)


def _both(f, args, want, rel=REL):
    """f's gradient in reverse mode and forward mode's directional derivatives, each entry against want."""
    g = gradient(f, *args)
    np.testing.assert_allclose(g, want, rtol=rel, atol=0)
    for i in range(len(args)):
        got = derivative(lambda s: f(*args[:i], s, *args[i + 1:]), args[i])
        assert got == pytest.approx(want[i], rel=rel, abs=0)


# -- the F distribution in its degrees of freedom ---------------------------------------------------------------

F_POINTS = [(0.3, 60.0, 1e-3), (1.0, 1.0, 1.0), (2.0, 7.5, 0.4), (3.0, 7.5, 2.5), (5.0, 0.4, 10.0), (20.0, 3.0, 0.7),
            (150.0, 1.0, 300.0), (2000.0, 3.0, 2.5), (10.0, 1000.0, 1.3), (40.0, 40.0, 1.0)]


@pytest.mark.parametrize("n, d, x", F_POINTS)
def test_fdtr_in_dfn_and_dfd_against_mpmath(n, d, x):
    upper = sc.fdtr(n, d, x) > 0.5  # (mpmath's smaller side)
    sign = -1 if upper else 1
    want = [sign * _diff(lambda a, b: _f_cdf(a, b, mp.mpf(x), upper), (n, d), i) for i in (0, 1)]
    _both(lambda a, b: sc.fdtr(a, b, x), (n, d), want)
    _both(lambda a, b: sc.fdtrc(a, b, x), (n, d), [-w for w in want])


@pytest.mark.parametrize("n, d, x", [(2.0, 7.5, 0.4), (3.0, 7.5, 2.5), (40.0, 40.0, 1.0)])
def test_fdtr_against_central_differences(n, d, x):
    def f(a, b):
        return np.sum(sc.fdtr(a, b, np.array([x, 2 * x])) * np.array([1.0, -3.0]))
    np.testing.assert_allclose(gradient(f, n, d), fd.gradient(f, n, d, h=1e-4), rtol=FD_REL)
    assert jvp(f, (n, d), (1.0, 0.5))[1] == pytest.approx(np.dot(fd.gradient(f, n, d, h=1e-4), [1.0, 0.5]),
                                                          rel=FD_REL)


@pytest.mark.parametrize("n, d, q", [(2.0, 7.5, 0.3), (3.0, 7.5, 0.9), (0.7, 12.0, 0.05), (30.0, 5.0, 0.5)])
def test_fdtri_in_dfn_and_dfd(n, d, q):
    x = sc.fdtri(n, d, q)
    want, _ = _implicit(lambda a, b, s: _f_cdf(a, b, s), (n, d, x), 2, x, q)
    _both(lambda a, b, p: sc.fdtri(a, b, p), (n, d, q), want)


# -- scipy.stats: f, beta, chi2, gamma, t, nbinom -----------------------------------------------------------------

def test_scipy_stats_f_in_dfn_and_dfd():
    x = np.array([0.3, 1.1, 4.0])

    def nll(n, d):
        return -np.sum(st.f.logcdf(x, n, d)) + np.sum(st.f.sf(x, n, d)) + np.sum(st.f.ppf([0.2, 0.9], n, d))
    want = fd.gradient(nll, 3.5, 9.0, h=1e-4)
    np.testing.assert_allclose(gradient(nll, 3.5, 9.0), want, rtol=FD_REL)
    assert derivative(lambda d: nll(3.5, d), 9.0) == pytest.approx(want[1], rel=FD_REL)
    upper = [-_diff(lambda a, b: _f_cdf(a, b, mp.mpf(1.1), True), (3.5, 9.0), i) for i in (0, 1)]
    np.testing.assert_allclose(gradient(lambda n, d: st.f.sf(1.1, n, d), 3.5, 9.0), [-w for w in upper], rtol=REL)


@pytest.mark.parametrize("a, b, q", [(2.5, 1.7, 0.3), (0.4, 3.0, 0.05), (30.0, 5.0, 0.97), (1.0, 1.5, 0.5)])
def test_scipy_stats_beta_ppf_in_a_and_b(a, b, q):
    x = float(st.beta.ppf(q, a, b))
    want, _ = _implicit(_beta, (a, b, x), 2, x, q)
    _both(lambda s, t: st.beta.ppf(q, s, t), (a, b), want[:2])
    _both(lambda s, t: u._beta_ppf(q, s, t), (a, b), want[:2])


@pytest.mark.parametrize("k, q", [(3.0, 0.3), (0.5, 0.9), (40.0, 0.01)])
def test_scipy_stats_chi2_ppf_isf_and_gamma_ppf_in_the_shape(k, q):
    x = float(st.chi2.ppf(q, k))
    want, _ = _implicit(_chi2, (k, x), 1, x, q)
    _both(lambda s: st.chi2.ppf(q, s), (k,), want[:1])
    _both(lambda s: st.gamma.ppf(q, s / 2, scale=2.0), (k,), want[:1])
    xc = float(sc.chdtri(k, 1 - q))  # (chdtri, chi2.isf: x with chdtrc(v, x) = 1 - q, the complement rounded)
    want, _ = _implicit(lambda v, s: 1 - _chi2(v, s), (k, xc), 1, xc, 1 - q)
    _both(lambda s: st.chi2.isf(1 - q, s), (k,), want[:1])
    _both(lambda s: sc.chdtri(s, 1 - q), (k,), want[:1])
    xg = float(sc.gdtrix(1.3, k, q))  # gdtrix(a, b, p): x with P(b, a x) = p
    want, _ = _implicit(lambda b, s: _gamma(mp.mpf(1.3), b, s), (k, xg), 1, xg, q)
    _both(lambda s: sc.gdtrix(1.3, s, q), (k,), want[:1])


@pytest.mark.parametrize("df, q", [(3.0, 0.3), (0.8, 0.9), (25.0, 0.01)])
def test_scipy_stats_t_ppf_in_df(df, q):
    t = float(sc.stdtrit(df, q))
    want, _ = _implicit(_t, (df, t), 1, t, q)
    _both(lambda s: st.t.ppf(q, s), (df,), want[:1])


def test_nbinom_cdf_in_n():
    k, n, p = 3.0, 3.5, 0.4
    want = _diff(lambda s: _beta(s, k + 1, mp.mpf(p)), (n,), 0)
    _both(lambda s: st.nbinom.cdf(k, s, p), (n,), [want])
    _both(lambda s: st.nbinom.sf(k, s, p), (n,), [-want])


# -- the inverses that solve for a shape: every argument ---------------------------------------------------------

SOLVERS = [  # (function, its arguments, mpmath's F(solved, others...) as F(*args in the inverse's order with the
    # solved one in place of q), the position of q)
    ("chdtriv", [(0.3, 2.0), (0.9, 0.5), (0.01, 30.0), (0.6, 300.0)]),
    ("gdtrib", [(1.2, 0.3, 2.0), (0.5, 0.9, 1.0), (3.0, 0.05, 10.0)]),
    ("stdtridf", [(0.3, -0.8), (0.95, 2.5), (0.01, -5.0)]),
    ("fdtridfd", [(3.0, 0.3, 0.8), (10.0, 0.7, 1.5), (0.8, 0.4, 2.0)]),
    ("btdtria", [(0.3, 2.0, 0.4), (0.9, 0.5, 0.2), (0.02, 30.0, 0.1)]),
    ("btdtrib", [(2.0, 0.3, 0.4), (0.5, 0.9, 0.7), (30.0, 0.5, 0.9)]),
]


def _solver_want(name, args):
    """mpmath's partials of the inverse `name` at args, in its argument order."""
    v = float(getattr(sc, name)(*args))
    if name == "chdtriv":
        q, x = args
        partials, _ = _implicit(_chi2, (v, x), 0, v, q)
        return [partials[1], partials[0]]  # (q, x)
    if name == "gdtrib":
        a, q, x = args
        partials, _ = _implicit(lambda a, b, x: _gamma(a, b, x), (a, v, x), 1, v, q)
        return [partials[0], partials[2], partials[1]]  # (a, q, x)
    if name == "stdtridf":
        q, t = args
        partials, _ = _implicit(_t, (v, t), 0, v, q)
        return [partials[1], partials[0]]
    if name == "fdtridfd":
        n, q, x = args
        partials, _ = _implicit(_f_cdf, (n, v, x), 1, v, q)
        return [partials[0], partials[2], partials[1]]
    if name == "btdtria":
        q, b, x = args
        partials, _ = _implicit(_beta, (v, b, x), 0, v, q)
        return [partials[2], partials[0], partials[1]]
    a, q, x = args  # btdtrib
    partials, _ = _implicit(_beta, (a, v, x), 1, v, q)
    return [partials[0], partials[2], partials[1]]


@pytest.mark.parametrize("name, args", [(n, a) for n, points in SOLVERS for a in points])
def test_shape_solving_inverse_against_mpmath(name, args):
    fn = getattr(sc, name)
    _both(lambda *s: fn(*s), args, _solver_want(name, args))


@pytest.mark.parametrize("name, args", [(n, points[0]) for n, points in SOLVERS])
def test_shape_solving_inverse_against_central_differences(name, args):
    fn = getattr(sc, name)
    f = lambda *s: fn(*s) * 1.5  # noqa: E731
    np.testing.assert_allclose(gradient(f, *args), fd.gradient(f, *args, h=1e-5), rtol=FD_REL)


def test_gdtria_in_b():
    p, b, x = 0.3, 2.5, 1.7
    a = float(sc.gdtria(p, b, x))
    want, _ = _implicit(lambda a, b: _gamma(a, b, mp.mpf(x)), (a, b), 0, a, p)
    _both(lambda s: sc.gdtria(p, s, x), (b,), want[:1])


# -- refusals --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", [gradient, derivative])
def test_refused_where_scipys_solution_is_not_a_root(mode):
    # scipy 1.17's fdtridfd(10, 0.02008, 0.1) is 1e100, fdtr there 1.7e-4: no derivative at such a value
    q = float(sc.fdtr(10.0, 0.5, 0.1))
    if abs(sc.fdtr(10.0, sc.fdtridfd(10.0, q, 0.1), 0.1) - q) < 1e-12:
        pytest.skip("this scipy solves it")
    with pytest.raises(NoDerivative, match="not a root"):
        mode(lambda p: sc.fdtridfd(10.0, p, 0.1), q)


@pytest.mark.parametrize("f, s", [(lambda n: sc.fdtr(n, 7.5, 1.3), 3.0), (lambda d: st.f.cdf(1.3, 3.0, d), 7.5),
                                  (lambda a: st.beta.ppf(0.3, a, 1.7), 2.5), (lambda k: st.chi2.ppf(0.3, k), 3.0),
                                  (lambda p: sc.chdtriv(p, 2.0), 0.3), (lambda a: sc.btdtria(0.3, a, 0.4), 2.0)],
                         ids=["fdtr-dfn", "f.cdf-dfd", "beta.ppf-a", "chi2.ppf-df", "chdtriv-p", "btdtria-b"])
def test_second_derivative_refused(f, s):
    # (through scipy.stats' ppf the first refusal met may be its np.place of a tangent; the note names the shape's)
    with pytest.raises(OverdubError, match="second derivative"):
        hessian(f, s)
