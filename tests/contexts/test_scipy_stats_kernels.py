"""scipy.special's private distribution kernels (`scipy.special._ufuncs._binom_cdf` and kin, rules in
`contexts.rules.numpy.scipy_special_dist`), through scipy.stats' public API (`st.binom.logpmf(k, n, p)`,
`st.beta.pdf`, ...) in reverse and forward mode with arrays of parameters, and directly (each rule against central
differences, `hessian` for a few); the arguments without a closed form (counts, shapes, degrees of freedom) refused in
both modes, never a zero; the discrete quantiles zero between steps and refused on one. Kernels the installed scipy
lacks are skipped."""

import importlib
import warnings

import numpy as np
import pytest

sc = pytest.importorskip("scipy.special")
st = pytest.importorskip("scipy.stats")

from contexts import derivative, gradient, hessian, jacfwd  # noqa: E402
from contexts.rules.cotangents import Refused  # noqa: E402
from contexts.rules.registry import NoDerivative, registry  # noqa: E402
from overdub.errors import OverdubError  # noqa: E402
from tests import fd  # noqa: E402
from tests.fd import check_rule  # noqa: E402

importlib.import_module("contexts.rules.numpy.scipy_special_dist")  # (registered by contexts.rules.numpy too)

u = sc._ufuncs


@pytest.fixture(autouse=True)
def _quiet():
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _kernel(name):
    fn = getattr(u, name, None)
    if fn is None:
        pytest.skip(f"scipy {__import__('scipy').__version__} has no {name}")
    return fn


X = np.array([0.2, 0.45, 0.8])        # probabilities
T = np.array([-1.0, 0.5, 3.0])        # points on the line
POS = np.array([0.5, 2.0, 6.0])       # points on the half-line
K = np.array([0.0, 3.0, 10.0])        # counts, with both ends of binom(10, p)

# (kernel, arguments, differentiable positions, refused positions)
SPECS = [
    ("_binom_pmf", (K, 10.0, X), (2,), (0, 1)), ("_binom_pmf", (3.5, 10.0, X), (2,), (0, 1)),
    ("_binom_pmf", (3, 10, X), (2,), ()),
    ("_binom_cdf", (np.array([0.0, 3.0, 9.0]), 10.0, X), (2,), (0, 1)), ("_binom_cdf", (3.5, 10.0, X), (2,), (0,)),
    ("_binom_sf", (np.array([0.0, 3.0, 9.0]), 10.0, X), (2,), (0, 1)),
    ("_nbinom_pmf", (np.array([0.0, 3.0, 7.0]), 3.5, X), (1, 2), (0,)), ("_nbinom_pmf", (2.5, 3.5, X), (1, 2), (0,)),
    ("_nbinom_cdf", (np.array([0.0, 3.0, 7.0]), 3.5, X), (1, 2), (0,)),
    ("_nbinom_sf", (np.array([0.0, 3.0, 7.0]), 3.5, X), (1, 2), (0,)),
    ("_nbinom_mean", (np.array([0.7, 3.5, 9.0]), X), (0, 1), ()),
    ("_nbinom_variance", (np.array([0.7, 3.5, 9.0]), X), (0, 1), ()),
    ("_nbinom_skewness", (np.array([0.7, 3.5, 9.0]), X), (0, 1), ()),
    ("_nbinom_kurtosis_excess", (np.array([0.7, 3.5, 9.0]), X), (0, 1), ()),
    ("_hypergeom_pmf", (np.array([1.0, 2.0, 3.0]), 7.0, 5.0, 20.0), (), (0, 1, 2, 3)),
    ("_hypergeom_cdf", (np.array([1.0, 2.0, 3.0]), 7.0, 5.0, 20.0), (), (0, 1, 2, 3)),
    ("_hypergeom_sf", (np.array([1.0, 2.0, 3.0]), 7.0, 5.0, 20.0), (), (0, 1, 2, 3)),
    ("_hypergeom_mean", (7.0, 5.0, 20.0), (), (0, 1, 2)),
    ("_beta_pdf", (X, 2.5, 1.7), (0, 1, 2), ()), ("_beta_pdf", (X, 0.6, 3.0), (0, 1, 2), ()),
    ("_beta_pdf", (X, np.array([1.0, 2.0, 4.5]), np.array([3.0, 1.0, 0.8])), (0, 1, 2), ()),
    ("_beta_ppf", (X, 2.5, 1.7), (0, 1, 2), ()),
    ("_skewnorm_cdf", (np.array([-0.5, 0.3, 1.2]), 0.2, 1.3, 2.1), (0, 1, 2, 3), ()),
    ("_skewnorm_cdf", (0.4, 0.2, 1.3, np.array([-3.0, 0.0, 2.1])), (0, 1, 2, 3), ()),
    ("_skewnorm_ppf", (X, 0.2, 1.3, 2.1), (0, 1, 2, 3), ()), ("_skewnorm_isf", (X, 0.2, 1.3, -1.1), (0, 1, 2, 3), ()),
    ("_cauchy_ppf", (X, 0.3, 1.7), (0, 1, 2), ()), ("_cauchy_isf", (X, 0.3, 1.7), (0, 1, 2), ()),
    ("_cosine_cdf", (np.array([-2.0, 0.3, 2.5]),), (0,), ()), ("_cosine_invcdf", (X,), (0,), ()),
    ("_landau_pdf", (T, 0.3, 1.7), (), (0, 1, 2)),
    ("_landau_cdf", (T, 0.3, 1.7), (0, 1, 2), ()), ("_landau_sf", (T, 0.3, 1.7), (0, 1, 2), ()),
    ("_landau_ppf", (X, 0.3, 1.7), (0, 1, 2), ()), ("_landau_isf", (X, 0.3, 1.7), (0, 1, 2), ()),
    ("_invgauss_ppf", (X, 0.7, 1.3), (0, 1, 2), ()), ("_invgauss_isf", (X, 0.7, 1.3), (0, 1, 2), ()),
    ("_invgauss_ppf", (X, 0.05, 1.0), (0, 1, 2), ()),
    ("_ncx2_pdf", (POS, 3.0, 1.4), (0, 2), (1,)), ("_ncx2_pdf", (POS, 1.2, 1.4), (0, 2), (1,)),
    ("_ncx2_sf", (POS, 3.0, 1.4), (0, 2), (1,)), ("_ncx2_isf", (X, 3.0, 1.4), (0, 2), (1,)),
    ("_ncf_pdf", (POS, 3.0, 7.5, 1.4), (3,), (0, 1, 2)), ("_ncf_sf", (POS, 3.0, 7.5, 1.4), (0, 3), (1, 2)),
    ("_ncf_isf", (X, 3.0, 7.5, 1.4), (0, 3), (1, 2)),
    ("_nct_pdf", (T, 4.5, 0.8), (0, 2), (1,)), ("_nct_pdf", (T, 0.7, -0.8), (0, 2), (1,)),
    ("_nct_sf", (T, 4.5, 0.8), (0, 2), (1,)), ("_nct_sf", (T, 1.5, -0.8), (0, 2), (1,)),
    ("_nct_isf", (X, 4.5, 0.8), (0, 2), (1,)), ("_nct_sf", (T, 0.6, 0.8), (0, 2), (1,)),
    ("_nct_isf", (X, 0.8, -0.4), (0, 2), (1,)), ("_nct_sf", (np.array([0.0, 2.0, 9.0]), 1.0, 2.5), (0, 2), (1,)),
    ("_ncf_mean", (3.0, 7.5, np.array([0.3, 1.4, 5.0])), (0, 1, 2), ()),
    ("_ncf_variance", (3.0, 7.5, np.array([0.3, 1.4, 5.0])), (0, 1, 2), ()),
    ("_ncf_skewness", (3.0, 7.5, 1.4), (), (0, 1, 2)),
    ("_nct_mean", (np.array([1.5, 4.5, 30.0]), 0.8), (0, 1), ()),
    ("_nct_variance", (np.array([2.5, 4.5, 30.0]), 0.8), (0, 1), ()), ("_nct_skewness", (4.5, 0.8), (), (0, 1)),
    ("_log1mexp", (np.array([-3.0, -0.5, -0.01]),), (0,), ()),
    ("_kolmogc", (np.array([0.5, 1.0, 1.7]),), (0,), ()), ("_kolmogci", (X,), (0,), ()),
    ("_smirnovc", (5, np.array([0.13, 0.47, 0.71])), (1,), ()), ("_smirnovci", (5, X), (1,), ()),
    ("_smirnovc", (5.0, np.array([0.13, 0.47, 0.71])), (1,), (0,)),
    ("_gen_harmonic", (5.0, 1.5), (), (0, 1)), ("_normalized_gen_harmonic", (1.0, 2.0, 5.0, 1.5), (), (0, 1, 2, 3)),
]


def _id(spec):
    return spec[0] + "".join(f"-{np.ndim(a) and 'v' or a}" for a in spec[1])


@pytest.mark.parametrize("spec", [s for s in SPECS if s[2]], ids=_id)
def test_rule_against_central_differences(spec):
    name, args, diff, _ = spec
    check_rule(_kernel(name), *args, diff=diff, rtol=2e-5, atol=1e-6)


def _ones_like(y):
    return np.ones_like(y)


@pytest.mark.parametrize("spec", [s for s in SPECS if s[3]], ids=_id)
def test_arguments_without_a_closed_form_are_refused(spec):
    name, args, diff, refused = spec
    fn = _kernel(name)
    rule = registry.get(fn)
    y = fn(*args)
    cts = rule.adjoint(_ones_like(y), y, *args)
    for i in refused:
        assert type(cts[i]) is Refused  # a placeholder, never a zero
        with pytest.raises(NoDerivative, match="no closed form"):
            float(np.sum(cts[i] * 2.0))
        tangents = [None] * len(args)
        tangents[i] = np.ones_like(np.asarray(args[i], dtype=float)) if np.ndim(args[i]) else 1.0
        with pytest.raises(NoDerivative, match="no closed form"):
            rule.frule(tuple(tangents), *args)
    for i in diff:
        assert cts[i] is not None and np.all(np.isfinite(cts[i]))


def test_every_kernel_scipy_stats_calls_has_a_rule():
    # the `scu._...` names of scipy.stats' distributions (scipy 1.17/1.18): each has a rule now (the ones without a
    # closed form refuse by argument, not as a function without a rule)
    for name in ("_beta_pdf", "_beta_ppf", "_binom_cdf", "_binom_isf", "_binom_pmf", "_binom_ppf", "_binom_sf",
                 "_cauchy_isf", "_cauchy_ppf", "_cosine_cdf", "_cosine_invcdf", "_gen_harmonic", "_hypergeom_cdf",
                 "_hypergeom_mean", "_hypergeom_pmf", "_hypergeom_sf", "_hypergeom_skewness", "_hypergeom_variance",
                 "_invgauss_isf", "_invgauss_ppf", "_kolmogc", "_kolmogci", "_landau_cdf", "_landau_isf",
                 "_landau_pdf", "_landau_ppf", "_landau_sf", "_log1mexp", "_nbinom_cdf", "_nbinom_isf",
                 "_nbinom_kurtosis_excess", "_nbinom_mean", "_nbinom_pmf", "_nbinom_ppf", "_nbinom_sf",
                 "_nbinom_skewness", "_nbinom_variance", "_ncf_isf", "_ncf_kurtosis_excess", "_ncf_mean", "_ncf_pdf",
                 "_ncf_sf", "_ncf_skewness", "_ncf_variance", "_nct_isf", "_nct_kurtosis_excess", "_nct_mean",
                 "_nct_pdf", "_nct_sf", "_nct_skewness", "_nct_variance", "_ncx2_isf", "_ncx2_pdf", "_ncx2_sf",
                 "_normalized_gen_harmonic", "_skewnorm_cdf", "_skewnorm_isf", "_skewnorm_ppf", "_smirnovc",
                 "_smirnovci"):
        fn = getattr(u, name, None)
        if fn is not None:
            assert registry.get(fn) is not None and registry.get(fn).frule is not None, name


# -- through scipy.stats' public API, arrays of parameters broadcast against the variable ------------------------

P3 = np.array([0.2, 0.45, 0.8])

PUBLIC = [
    ("binom.pmf", lambda p: st.binom.pmf(np.array([0, 3, 10]), 10, p), P3),
    ("binom.logpmf", lambda p: st.binom.logpmf(np.array([1, 3, 7]), 10, p), P3),
    ("binom.cdf", lambda p: st.binom.cdf(3, 10, p), P3),
    ("binom.cdf-k", lambda p: st.binom.cdf(np.array([[0], [3], [9]]), 10, p), P3),
    ("binom.sf", lambda p: st.binom.sf(3, 10, p), P3),
    ("binom.logcdf", lambda p: st.binom.logcdf(4, 10, p), P3),
    ("nbinom.pmf", lambda p: st.nbinom.pmf(np.array([0, 3, 7]), 3.5, p), P3),
    ("nbinom.pmf-n", lambda n: st.nbinom.pmf(np.array([0, 3, 7]), n, 0.4), np.array([0.7, 3.5, 9.0])),
    ("nbinom.cdf", lambda p: st.nbinom.cdf(3, 3.5, p), P3),
    ("nbinom.sf", lambda p: st.nbinom.sf(3, 3.5, p), P3),
    ("nbinom.mean", lambda p: st.nbinom.mean(3.5, p), P3),
    ("nbinom.var-n", lambda n: st.nbinom.var(n, 0.3), np.array([0.7, 3.5, 9.0])),
    ("beta.pdf-x", lambda x: st.beta.pdf(x, 2.5, 1.7), P3),
    ("beta.pdf-a", lambda a: st.beta.pdf(0.3, a, 1.7), np.array([0.6, 1.0, 2.5])),
    ("beta.pdf-b", lambda b: st.beta.pdf(0.3, 2.5, b), np.array([0.6, 1.0, 2.5])),
    ("beta.logpdf-x", lambda x: st.beta.logpdf(x, 2.5, 1.7), P3),
    ("beta.ppf", lambda q: st.beta.ppf(q, 2.5, 1.7), P3),
    ("skewnorm.cdf-x", lambda x: st.skewnorm.cdf(x, 2.1), np.array([-0.5, 0.3, 1.2])),
    ("skewnorm.cdf-a", lambda a: st.skewnorm.cdf(0.3, a), np.array([-3.0, 0.5, 2.1])),
    ("skewnorm.ppf-q", lambda q: st.skewnorm.ppf(q, 2.1), P3),
    ("skewnorm.ppf-a", lambda a: st.skewnorm.ppf(0.3, a), np.array([-3.0, 0.5, 2.1])),
    ("skewnorm.isf-loc-scale", lambda s: st.skewnorm.isf(0.3, 1.5, loc=s, scale=s * 2), np.array([0.5, 1.0, 2.0])),
    ("cauchy.ppf", lambda q: st.cauchy.ppf(q, loc=0.3, scale=1.7), P3),
    ("cauchy.isf", lambda q: st.cauchy.isf(q), P3),
    ("cosine.cdf", lambda x: st.cosine.cdf(x), np.array([-2.0, 0.3, 2.5])),
    ("cosine.sf", lambda x: st.cosine.sf(x), np.array([-2.0, 0.3, 2.5])),
    ("cosine.ppf", lambda q: st.cosine.ppf(q), P3),
    ("cosine.isf", lambda q: st.cosine.isf(q), P3),
    ("invgauss.ppf-q", lambda q: st.invgauss.ppf(q, 0.7), P3),
    ("invgauss.ppf-mu", lambda mu: st.invgauss.ppf(0.3, mu), np.array([0.2, 0.7, 2.0])),
    ("invgauss.isf-mu", lambda mu: st.invgauss.isf(np.array([0.2, 0.45, 0.8]), mu), np.array([0.2, 0.7, 2.0])),
    ("ncx2.pdf-x", lambda x: st.ncx2.pdf(x, 3.0, 1.4), np.array([0.5, 2.0, 6.0])),
    ("ncx2.pdf-nc", lambda nc: st.ncx2.pdf(2.0, 3.0, nc), np.array([0.4, 1.4, 5.0])),
    ("ncx2.sf-nc", lambda nc: st.ncx2.sf(2.0, 3.0, nc), np.array([0.4, 1.4, 5.0])),
    ("ncx2.isf", lambda q: st.ncx2.isf(q, 3.0, 1.4), P3),
    ("ncf.sf-x", lambda x: st.ncf.sf(x, 3.0, 7.5, 1.4), np.array([0.5, 2.0, 6.0])),
    ("ncf.pdf-nc", lambda nc: st.ncf.pdf(2.0, 3.0, 7.5, nc), np.array([0.4, 1.4, 5.0])),
    ("ncf.isf-nc", lambda nc: st.ncf.isf(0.3, 3.0, 7.5, nc), np.array([0.4, 1.4, 5.0])),
    ("nct.pdf-x", lambda x: st.nct.pdf(x, 4.5, 0.8), np.array([-1.0, 0.5, 3.0])),
    ("nct.pdf-nc", lambda nc: st.nct.pdf(0.5, 4.5, nc), np.array([-0.8, 0.4, 2.0])),
    ("nct.sf-nc", lambda nc: st.nct.sf(0.5, 4.5, nc), np.array([-0.8, 0.4, 2.0])),
    ("nct.isf-nc", lambda nc: st.nct.isf(0.3, 4.5, nc), np.array([-0.8, 0.4, 2.0])),
    ("nct.sf-nc-df<1", lambda nc: st.nct.sf(0.5, 0.8, nc), np.array([-0.8, 0.4, 2.0])),
    ("nct.mean-nc", lambda nc: st.nct.mean(4.5, nc), np.array([-0.8, 0.4, 2.0])),
    ("landau.cdf", lambda x: st.landau.cdf(x), np.array([-1.0, 0.3, 4.0])),
    ("landau.sf-scale", lambda s: st.landau.sf(1.0, loc=0.3, scale=s), np.array([0.5, 1.0, 2.0])),
    ("landau.ppf", lambda q: st.landau.ppf(q), P3),
    ("landau.isf-loc", lambda m: st.landau.isf(0.3, loc=m, scale=1.5), np.array([-1.0, 0.3, 2.0])),
    ("kstwobign.cdf", lambda x: st.kstwobign.cdf(x), np.array([0.5, 1.0, 1.7])),
    ("kstwobign.ppf", lambda q: st.kstwobign.ppf(q), P3),
    ("truncnorm.logsf", lambda x: st.truncnorm.logsf(x, -1.0, 2.0), np.array([-0.5, 0.3, 1.5])),
]


def _skip_missing(f, x):
    try:
        f(x)
    except AttributeError as e:  # (a distribution this scipy lacks)
        pytest.skip(str(e))


@pytest.mark.parametrize("name, f, x", PUBLIC, ids=[c[0] for c in PUBLIC])
def test_public_api_reverse(name, f, x):
    _skip_missing(f, x)
    y = np.asarray(f(x))
    w = np.linspace(0.7, -1.3, y.size).reshape(y.shape)
    (g,) = gradient(lambda v: np.sum(w * f(v)), x)
    want = np.tensordot(w, fd.jacobian(f, x), axes=y.ndim)
    np.testing.assert_allclose(g, want, rtol=2e-6, atol=1e-8)


@pytest.mark.parametrize("name, f, x", PUBLIC, ids=[c[0] for c in PUBLIC])
def test_public_api_forward(name, f, x):
    _skip_missing(f, x)
    np.testing.assert_allclose(jacfwd(f, x), fd.jacobian(f, x), rtol=2e-6, atol=1e-8)


def test_binom_cdf_gradient_at_an_integer_k():
    # k = 3 is taken as active once broadcast with p: reverse mode asks forward mode whether floor(k) moves on its
    # jump, which needed _binom_cdf's frule (a SpecialPoint before): d/dp = -n pmf(k; n - 1, p)
    p = 0.3
    (g,) = gradient(lambda q: st.binom.cdf(3, 10, q), p)
    assert g == pytest.approx(-10 * st.binom.pmf(3, 9, p), rel=1e-12)
    assert derivative(lambda q: st.binom.cdf(3, 10, q), p) == pytest.approx(g, rel=1e-12)


def test_pmf_derivative_finite_at_the_ends():
    # p at 0 and 1, k at 0 and n: the polynomial's derivative (e.g. d/dp (1 - p)^10 = -10 at p = 0), no 0 * inf
    # (the kernels: scipy.stats' argument checks compare p with 0 and 1, a branch boundary the engines refuse)
    for k, p, want in [(0, 0.0, -10.0), (1, 0.0, 10.0), (10, 1.0, 10.0), (9, 1.0, -10.0), (5, 0.0, 0.0)]:
        (g,) = gradient(lambda q: u._binom_pmf(k, 10, q), p)
        assert g == pytest.approx(want, abs=1e-12), (k, p)
        assert derivative(lambda q: u._binom_pmf(k, 10, q), p) == pytest.approx(want, abs=1e-12), (k, p)
    for k, p, want in [(0, 0.0, -10.0), (9, 1.0, -10.0), (0, 1.0, 0.0), (10, 0.5, 0.0)]:  # 1 - p^10 at k = 9
        (g,) = gradient(lambda q: u._binom_cdf(k, 10, q), p)
        assert g == pytest.approx(want, abs=1e-12), (k, p)
    (g,) = gradient(lambda p: u._nbinom_pmf(0, 3.0, p), 1.0)   # p^3: 3 at 1
    assert g == pytest.approx(3.0)
    (g,) = gradient(lambda p: u._nbinom_pmf(1, 3.0, p), 1.0)   # 3 p^3 (1 - p): -3 at 1
    assert g == pytest.approx(-3.0)
    for a, b, want in [(2.0, 3.0, 12.0), (1.0, 3.0, -6.0), (3.0, 3.0, 0.0)]:   # 12 x (1 - x)^2: 12 at 0
        (g,) = gradient(lambda x: u._beta_pdf(x, a, b), 0.0)
        assert g == pytest.approx(want), (a, b)


@pytest.mark.parametrize("f, x", [
    (lambda p: st.binom.pmf(3, 10, p), 0.3), (lambda p: st.binom.logpmf(3, 10, p), 0.3),
    (lambda p: st.nbinom.cdf(3, 3.5, p), 0.4), (lambda x: st.beta.pdf(x, 2.5, 1.7), 0.35),
    (lambda a: st.beta.pdf(0.35, a, 1.7), 2.5), (lambda a: st.skewnorm.cdf(0.3, a), 1.2),
    (lambda q: st.cauchy.ppf(q), 0.3), (lambda x: st.ncx2.pdf(x, 3.0, 1.4), 2.0),
    (lambda nc: st.ncx2.sf(2.0, 3.0, nc), 1.4), (lambda nc: st.nct.sf(0.5, 4.5, nc), 0.8),
    (lambda q: st.invgauss.ppf(q, 0.7), 0.4), (lambda x: np.log(-sc._ufuncs._log1mexp(x)), -0.7),
], ids=["binom.pmf", "binom.logpmf", "nbinom.cdf", "beta.pdf-x", "beta.pdf-a", "skewnorm.cdf-a", "cauchy.ppf",
        "ncx2.pdf-x", "ncx2.sf-nc", "nct.sf-nc", "invgauss.ppf", "log1mexp"])
def test_hessian(f, x):
    got = hessian(f, x)
    want = fd.derivative(lambda s: fd.derivative(f, s, h=1e-4), x, h=1e-4)
    assert got == pytest.approx(want, rel=1e-5, abs=1e-6)


# -- refusals through the public API -------------------------------------------------------------------------------

@pytest.mark.parametrize("f, x", [
    (lambda n: st.binom.pmf(3, n, 0.3), 10.0), (lambda k: st.binom.pmf(k, 10, 0.3), 3.0),
    (lambda df: st.ncx2.sf(2.0, df, 1.4), 3.0), (lambda M: st.hypergeom.pmf(2, M, 7, 5), 20.0),
    (lambda df: st.nct.sf(0.5, df, 0.8), 4.5), (lambda df: st.nct.pdf(0.5, df, 0.8), 4.5),
    (lambda df: st.ncx2.pdf(2.0, df, 1.4), 3.0), (lambda x: st.ncf.pdf(x, 3.0, 7.5, 1.4), 2.0),
    (lambda x: st.landau.pdf(x), 0.3), (lambda df: st.ncf.sf(2.0, df, 7.5, 1.4), 3.0),
], ids=["binom-n", "binom-k", "ncx2.sf-df", "hypergeom-M", "nct.sf-df", "nct-df", "ncx2-df", "ncf.pdf-x",
        "landau.pdf-x", "ncf-dfn"])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_refused_through_scipy_stats(f, x, mode):
    with pytest.raises(OverdubError):
        if mode == "reverse":
            gradient(f, x)
        else:
            derivative(f, x)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_discrete_quantile_zero_between_steps_refused_on_one(mode):
    run = gradient if mode == "reverse" else derivative

    def ppf(q):
        return st.binom.ppf(q, 10, 0.3)
    g = run(ppf, 0.5)
    assert (g[0] if mode == "reverse" else g) == 0.0
    g = run(lambda p: st.nbinom.isf(0.4, 3.5, p), 0.35)
    assert (g[0] if mode == "reverse" else g) == 0.0
    on_step = float(st.binom.cdf(3, 10, 0.3))  # ppf jumps from 3 to 4 just above
    with pytest.raises(OverdubError, match="step"):
        run(ppf, on_step)
    with pytest.raises(OverdubError, match="step"):  # a rounding above it: the result one past the step
        run(lambda q: u._binom_ppf(q, 10.0, 0.3), on_step * (1 + 4e-16))
    with pytest.raises(OverdubError, match="step"):
        run(lambda p: u._nbinom_isf(float(st.nbinom.sf(2, 3.5, 0.35)), 3.5, p), 0.35)


def test_sparsity_elementwise():
    from contexts import jacobian_sparsity
    # the kernels in global mode (no values); scipy.stats' methods branch on theirs: local mode
    pattern = jacobian_sparsity(lambda p: u._binom_cdf(3.0, 10.0, p), np.full(4, 0.3)).toarray()
    np.testing.assert_array_equal(pattern != 0, np.eye(4, dtype=bool))
    pattern = jacobian_sparsity(lambda a: u._skewnorm_cdf(0.3, 0.0, 1.0, a[::-1]), np.full(3, 0.3)).toarray()
    np.testing.assert_array_equal(pattern != 0, np.eye(3, dtype=bool)[::-1])
    pattern = jacobian_sparsity(lambda p: st.binom.cdf(3, 10, p), np.full(4, 0.3), mode="local").toarray()
    np.testing.assert_array_equal(pattern != 0, np.eye(4, dtype=bool))
    pattern = jacobian_sparsity(lambda x: st.beta.pdf(x, 2.5, 1.7), np.full(3, 0.3), mode="local").toarray()
    np.testing.assert_array_equal(pattern != 0, np.eye(3, dtype=bool))
