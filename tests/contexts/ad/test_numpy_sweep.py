"""A coverage sweep of commonly used numpy and scipy functions under reverse mode.

Each case wraps one function, applied to fixed random inputs chosen away from kinks and ties, and
reduces its output to a scalar with fixed random weights (so every output element matters); `gradient`
must agree with central finite differences. The functions are numpy's and scipy's own Python code,
differentiated as written, with rules only where they drop into C. A few cases run in float32, whose
gradient must stay float32. The rules the sweep reaches that have a forward rule are also checked
directly (`check_rule`: adjoint and frule against finite differences).
"""

import functools

import numpy as np
import pytest
import scipy.integrate
import scipy.linalg
import scipy.optimize
import scipy.special
import scipy.stats
from numpy._core import multiarray
from numpy.linalg import _umath_linalg
from scipy.linalg import lapack

from contexts.rules.check import check_rule
from contexts.rules.registry import registry

from tests.fd import assert_grad_fd

rng = np.random.default_rng(20240611)

V3, W3 = rng.normal(size=3), rng.normal(size=3)
V5, V6, K3, B4 = rng.normal(size=5), rng.normal(size=6), rng.normal(size=3), rng.normal(size=4)
A34, A43, A45, B22 = (rng.normal(size=s) for s in ((3, 4), (4, 3), (4, 5), (2, 2)))
M3 = rng.normal(size=(3, 3)) + 3 * np.eye(3)  # well conditioned
S3 = M3 @ M3.T + np.eye(3)  # symmetric positive definite
L3 = np.tril(rng.normal(size=(3, 3))) + 3 * np.eye(3)
C43, D43 = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))  # rows of 3-vectors for np.cross
POS5, POS6 = rng.uniform(0.5, 2.5, size=5), rng.uniform(0.5, 2.5, size=6)
UNIT5 = rng.uniform(0.1, 0.9, size=5)
GRID6 = np.sort(rng.uniform(0.0, 3.0, size=6)) + np.arange(6) * 0.3  # increasing, unevenly spaced
XP, FP = np.linspace(0.0, 5.0, 7), rng.normal(size=7)
XQ = np.array([0.3, 1.1, 2.05, 3.7, 4.4])  # strictly inside XP's segments
DATA = rng.normal(size=(3, 6))
POLY = rng.normal(size=4)
# distinct values, well apart: sorting, medians, quantiles and clipping stay on one side of every kink
VALS = np.array([0.31, -1.7, 2.2, 0.94, -0.45, 1.43, 0.06])
VALS_EVEN = VALS[:6].copy()
VALS2D = np.array([[0.3, -1.2, 2.1, 0.7, -0.5], [1.9, 0.2, -0.8, 1.1, 0.45], [-0.6, 0.9, 1.6, -1.4, 0.05]])


@functools.lru_cache(maxsize=None)
def _weights(shape):
    """Fixed random weights for an output of `shape`, made once per shape."""
    return np.random.default_rng(sum(shape) * 31 + len(shape)).uniform(0.5, 1.5, size=shape)


def wsum(y):
    """sum(y * w) with fixed weights w of y's shape: a scalar that sees every element of y."""
    return np.sum(y * _weights(np.shape(y)))


def case(name, f, *args):
    """One sweep case."""
    return pytest.param(f, args, id=name)



def _qr(a, mode="reduced"):
    q, r = np.linalg.qr(a, mode=mode)
    return wsum(q) + wsum(r) * 0.5


def _meshgrid(x, y):
    gx, gy = np.meshgrid(x, y)
    return wsum(np.sin(gx) * gy ** 2 + gx * gy)


def _meshgrid_ij(x, y):
    gx, gy = np.meshgrid(x, y, indexing="ij")
    return wsum(np.exp(-(gx ** 2 + gy ** 2)))


def _argsort_gather(x):
    return wsum(x[np.argsort(x)] * np.arange(1.0, x.size + 1))


def _cho_solve(s, b, lower=False):
    return wsum(scipy.linalg.cho_solve(scipy.linalg.cho_factor(s, lower=lower), b))


def _random_weights_from_shape(x):
    return np.sum(x * np.random.default_rng(0).uniform(0.5, 1.5, size=x.shape))


DIFFERENCES = [
    case("diff", lambda x: wsum(np.diff(x)), V6),
    case("diff_n2", lambda x: wsum(np.diff(x, n=2)), V6),
    case("diff_axis0", lambda x: wsum(np.diff(x, axis=0)), A45),
    case("diff_n2_axis1", lambda x: wsum(np.diff(x, n=2, axis=1)), A45),
    case("diff_prepend_append", lambda x: wsum(np.diff(x, prepend=0.5, append=x[:1])), V6),
    case("gradient", lambda x: wsum(np.gradient(x)), V6),
    case("gradient_spacing_edge2", lambda x: wsum(np.gradient(x, 0.5, edge_order=2)), V6),
    case("gradient_2d", lambda x: wsum(np.stack(np.gradient(x))), A45),
    case("gradient_coordinates", lambda y, x: wsum(np.gradient(y, x)), V6, GRID6),
    case("convolve_full", lambda x, k: wsum(np.convolve(x, k)), V6, K3),
    case("convolve_same", lambda x, k: wsum(np.convolve(x, k, mode="same")), V6, K3),
    case("convolve_valid", lambda x, k: wsum(np.convolve(x, k, mode="valid")), V6, K3),
    case("convolve_short_first", lambda k, x: wsum(np.convolve(k, x, mode="same")), B4, V6),
    case("correlate_valid", lambda x, k: wsum(np.correlate(x, k)), V6, K3),
    case("correlate_full", lambda x, k: wsum(np.correlate(x, k, mode="full")), V6, K3),
    case("correlate_same_short_first", lambda k, x: wsum(np.correlate(k, x, mode="same")), B4, V6),
    case("trapezoid", lambda y: np.trapezoid(y), V6),
    case("trapezoid_x", lambda y, x: np.trapezoid(y, x), V6, GRID6),
    case("trapezoid_axis_dx", lambda y: wsum(np.trapezoid(y, dx=0.3, axis=0)), A45),
    case("cumprod", lambda x: wsum(np.cumprod(x)), V6),
    case("cumprod_axis", lambda x: wsum(np.cumprod(x, axis=1)), A45),
    case("multiply_accumulate", lambda x: wsum(np.multiply.accumulate(x, axis=1)), A45),
    case("add_accumulate", lambda x: wsum(np.add.accumulate(x)), A45),
    case("subtract_accumulate", lambda x: wsum(np.subtract.accumulate(x, 1)), A45),
    case("maximum_accumulate", lambda x: wsum(np.maximum.accumulate(x, axis=1)), VALS2D),
    case("minimum_accumulate", lambda x: wsum(np.minimum.accumulate(x)), VALS),
]

PRODUCTS = [
    case("kron", lambda a, b: wsum(np.kron(a, b)), A34, B22),
    case("kron_vectors", lambda a, b: wsum(np.kron(a, b)), V3, K3),
    case("cross", lambda a, b: wsum(np.cross(a, b)), V3, W3),
    case("cross_rows", lambda a, b: wsum(np.cross(a, b)), C43, D43),
    case("cross_broadcast", lambda a, b: wsum(np.cross(a, b)), C43, W3),
    case("outer", lambda a, b: wsum(np.outer(a, b)), V3, V5),
    case("einsum_diagonal", lambda a: wsum(np.einsum("ii->i", a)), M3),
    case("einsum_trace", lambda a: np.einsum("ii", a), M3),
    case("einsum_same_operand", lambda a: np.einsum("ij,ij->", a, a), A34),
    case("einsum_three_vectors", lambda x: np.einsum("i,i,i->", x, x, x), V5),
    case("einsum_broadcast", lambda a, v: wsum(np.einsum("ij,j->ij", a, v)), A34, B4),
    case("einsum_ellipsis", lambda t, b: wsum(np.einsum("...ij,jk->...ik", t, b)), A34.reshape(1, 3, 4), A45),
    case("einsum_repeated_and_outer", lambda a: wsum(np.einsum("ii,j->ij", a, a[0])), M3),
    case("vander", lambda x: wsum(np.vander(x, 4)), V5),
    case("vander_increasing", lambda x: wsum(np.vander(x, increasing=True)), V5),
    case("meshgrid", _meshgrid, V3, V5),
    case("meshgrid_ij", _meshgrid_ij, V3, V5),
    case("meshgrid_sparse", lambda x, y: wsum(sum(np.meshgrid(x, y, sparse=True))), V3, V5),
]

STATISTICS = [
    case("average", lambda x: wsum(np.average(x, axis=0)), A45),
    case("average_weights", lambda x, w: np.average(x, weights=w), V5, POS5),
    case("average_axis_weights", lambda x, w: wsum(np.average(x, axis=1, weights=w)), A45, POS5),
    case("average_returned", lambda x, w: wsum(np.stack(np.average(x, axis=0, weights=w, returned=True))),
         A45, POS5[:4]),
    case("median_odd", lambda x: np.median(x), VALS),
    case("median_even", lambda x: np.median(x), VALS_EVEN),
    case("median_axis", lambda x: wsum(np.median(x, axis=1)), VALS2D),
    case("partition", lambda x: wsum(np.partition(x, 3)[3:]), VALS),
    case("percentile", lambda x: np.percentile(x, 30.0), VALS),
    case("percentile_axis", lambda x: wsum(np.percentile(x, [20.0, 65.0], axis=1)), VALS2D),
    case("quantile_axis0", lambda x: wsum(np.quantile(x, 0.4, axis=0, method="linear")), VALS2D),
    case("quantile_several", lambda x: wsum(np.quantile(x, [0.1, 0.5, 0.85])), VALS),
    case("cov", lambda x: wsum(np.cov(x)), DATA),
    case("cov_rowvar_ddof", lambda x: wsum(np.cov(x, rowvar=False, ddof=0)), A45),
    case("cov_aweights", lambda x, w: wsum(np.cov(x, aweights=w)), DATA, POS6),
    case("corrcoef", lambda x: wsum(np.corrcoef(x)), DATA),
    case("corrcoef_pair", lambda x, y: wsum(np.corrcoef(x, y)), V6, DATA[0]),
]

POLYNOMIALS = [
    case("polyval", lambda p, x: wsum(np.polyval(p, x)), POLY, V5),
    case("polyfit_y", lambda y: wsum(np.polyfit(GRID6, y, 2)), V6),
    case("polyfit_weighted", lambda y, w: wsum(np.polyfit(GRID6, y, 3, w=w)), V6, POS6),
    case("polyfit_x", lambda x, y: wsum(np.polyfit(x, y, 2)), GRID6, V6),  # via np.vander
    case("interp_x", lambda x: wsum(np.interp(x, XP, FP)), XQ),
    case("interp_x_fp", lambda x, fp: wsum(np.interp(x, XP, fp)), XQ, FP),
]

LINEAR_ALGEBRA = [
    case("pinv", lambda a: wsum(np.linalg.pinv(a)), A34),
    case("pinv_square", lambda a: wsum(np.linalg.pinv(a)), M3),
    case("lstsq", lambda a, b: wsum(np.linalg.lstsq(a, b)[0]), A43, B4),
    case("lstsq_matrix_rhs", lambda a, b: wsum(np.linalg.lstsq(a, b)[0]), A43, A45[:, :2]),
    case("lstsq_underdetermined", lambda a, b: wsum(np.linalg.lstsq(a, b)[0]), A34, V3),
    case("lstsq_residuals_singular_values",
         lambda a, b: wsum(np.linalg.lstsq(a, b)[1]) + wsum(np.linalg.lstsq(a, b)[3]), A43, B4),
    case("matrix_power_3", lambda a: wsum(np.linalg.matrix_power(a, 3)), M3),
    case("matrix_power_neg2", lambda a: wsum(np.linalg.matrix_power(a, -2)), M3),
    case("qr_square", _qr, M3),
    case("qr_tall", _qr, A43),
    case("qr_wide", _qr, A34),
    case("qr_complete_square", lambda a: _qr(a, "complete"), M3),
    case("qr_r_mode", lambda a: wsum(np.linalg.qr(a, mode="r")), A43),
    case("qr_complete_tall_r", lambda a: wsum(np.linalg.qr(a, mode="complete")[1]), A43),
    case("eigvalsh", lambda a: wsum(np.linalg.eigvalsh(a)), S3),
    case("norm_fro", lambda a: np.linalg.norm(a), A34),
    case("norm_nuc", lambda a: np.linalg.norm(a, "nuc"), A34),
    case("norm_1", lambda a: np.linalg.norm(a, 1), A34),
    case("norm_minus1", lambda a: np.linalg.norm(a, -1), A34),
    case("norm_inf", lambda a: np.linalg.norm(a, np.inf), A34),
    case("norm_minus_inf", lambda a: np.linalg.norm(a, -np.inf), A34),
    case("norm_2", lambda a: np.linalg.norm(a, 2), A34),
    case("norm_minus2", lambda a: np.linalg.norm(a, -2), A34),
    case("norm_vector_3", lambda x: np.linalg.norm(x, 3), V5),
    case("norm_axis", lambda a: wsum(np.linalg.norm(a, axis=1)), A34),
    case("matrix_norm", lambda a: np.linalg.matrix_norm(a, ord="nuc"), A34),
    case("vector_norm", lambda a: wsum(np.linalg.vector_norm(a, ord=3, axis=0)), A34),
    case("solve_triangular", lambda l, b: wsum(scipy.linalg.solve_triangular(l, b, lower=True)), L3, V3),
    case("solve_triangular_upper_matrix", lambda u, b: wsum(scipy.linalg.solve_triangular(u, b)),
         L3.T.copy(), A34),
    case("solve_triangular_trans", lambda l, b: wsum(scipy.linalg.solve_triangular(l, b, trans="T", lower=True)),
         L3, V3),
    case("solve_triangular_unit_diagonal",
         lambda l, b: wsum(scipy.linalg.solve_triangular(l, b, lower=True, unit_diagonal=True)), L3, A34),
    case("cholesky_scipy", lambda s: wsum(scipy.linalg.cholesky(s)), S3),
    case("cholesky_scipy_lower", lambda s: wsum(scipy.linalg.cholesky(s, lower=True)), S3),
    case("cho_solve", _cho_solve, S3, V3),
    case("cho_solve_lower", lambda s, b: _cho_solve(s, b, lower=True), S3, A34),
    case("solve_scipy", lambda a, b: wsum(scipy.linalg.solve(a, b)), M3, V3),
    case("solve_scipy_transposed", lambda a, b: wsum(scipy.linalg.solve(a, b, transposed=True)), M3, A34),
    case("inv_scipy", lambda a: wsum(scipy.linalg.inv(a)), M3),
]

SELECTION = [
    case("where_arrays", lambda x, y: wsum(np.where(x > y, x * y, x - y)), V5, V5[::-1] + 0.1),
    case("tril", lambda a: wsum(np.tril(a)), A45),
    case("triu_k", lambda a: wsum(np.triu(a, k=1) + np.tril(a, -1)), A45),
    case("take", lambda x: wsum(np.take(x, [0, 2, 2, 4])), V5),
    case("take_axis", lambda a: wsum(np.take(a, [3, 0, 3], axis=1)), A45),
    case("take_along_axis", lambda a: wsum(np.take_along_axis(a, np.argsort(a, axis=1), axis=1)), VALS2D),
    case("sort", lambda x: wsum(np.sort(x)), VALS),
    case("sort_axis0", lambda x: wsum(np.sort(x, axis=0)), VALS2D),
    case("argsort_gather", _argsort_gather, VALS),
    case("sort_descending", lambda x: wsum(np.sort(x)[::-1] ** 2), VALS),
    case("clip", lambda x: wsum(np.clip(x, -0.5, 0.5)), VALS),
    case("clip_array_bounds", lambda x, lo, hi: wsum(np.clip(x, lo, hi)), VALS, VALS[::-1] - 0.05, VALS * 0 + 1.0),
    case("clip_upper_only", lambda x: wsum(np.clip(x, None, 0.5)), VALS),
    case("hypot", lambda x, y: wsum(np.hypot(x, y)), V5, POS5),
    case("logaddexp", lambda x, y: wsum(np.logaddexp(x, y)), V5, POS5),
    case("float64_of_array", lambda x: wsum(np.float64(x) * x), V5),
]

SCIPY = [
    case("softmax", lambda x: wsum(scipy.special.softmax(x)), V5),
    case("softmax_axis", lambda x: wsum(scipy.special.softmax(x, axis=1)), A34),
    case("log_softmax", lambda x: wsum(scipy.special.log_softmax(x, axis=0)), A34),
    case("logsumexp", lambda x: wsum(scipy.special.logsumexp(x, axis=1)), A34),
    case("expit", lambda x: wsum(scipy.special.expit(x)), V5),
    case("logit", lambda x: wsum(scipy.special.logit(x)), UNIT5),
    case("xlogy", lambda x, y: wsum(scipy.special.xlogy(x, y)), V5, POS5),
    case("gammaln", lambda x: wsum(scipy.special.gammaln(x)), POS5),
    case("erf", lambda x: wsum(scipy.special.erf(x)), V5),
    case("poch", lambda z, m: wsum(scipy.special.poch(z, m)), POS5, UNIT5),
    case("norm_logpdf", lambda x, m, s: wsum(scipy.stats.norm.logpdf(x, m, s)), V5, 0.3, 1.7),
    case("norm_pdf", lambda x: wsum(scipy.stats.norm.pdf(x)), V5),
    case("norm_cdf", lambda x, s: wsum(scipy.stats.norm.cdf(x, scale=s)), V5, 1.3),
    case("t_logpdf", lambda x: wsum(scipy.stats.t.logpdf(x, 4.5)), V5),
    case("t_logpdf_df", lambda x, df: wsum(scipy.stats.t.logpdf(x, df)), V5, 4.5),
    case("scipy_trapezoid", lambda y, x: scipy.integrate.trapezoid(y, x), V6, GRID6),
    case("simpson", lambda y: scipy.integrate.simpson(y, dx=0.25), V5),
    case("simpson_x", lambda y, x: scipy.integrate.simpson(y, x=x), V6, GRID6),
    case("rosen", lambda x: scipy.optimize.rosen(x), V5),
    case("rosen_der", lambda x: wsum(scipy.optimize.rosen_der(x)), V5),
]

CONSTANTS_SHAPED_LIKE_INPUTS = [
    case("linspace_num_from_shape", lambda x: wsum(x * np.linspace(0.0, 1.0, x.shape[0])), V5),
    case("random_weights_from_shape", _random_weights_from_shape, V5),
]

FLOAT32 = [
    case("diff_f32", lambda x: wsum(np.diff(x, n=2)), V6),
    case("convolve_f32", lambda x, k: wsum(np.convolve(x, k, mode="same")), V6, K3),
    case("cumprod_f32", lambda x: wsum(np.cumprod(x)), V6),
    case("median_f32", lambda x: wsum(np.median(x, axis=1)), VALS2D),
    case("softmax_f32", lambda x: wsum(scipy.special.softmax(x, axis=1)), A34),
    case("norm_nuc_f32", lambda a: np.linalg.norm(a, "nuc"), A34),
    case("cross_f32", lambda a, b: wsum(np.cross(a, b)), C43, D43),
    case("qr_f32", _qr, A43),
    case("lstsq_f32", lambda a, b: wsum(np.linalg.lstsq(a, b)[0]), A43, B4),
    case("solve_triangular_f32", lambda l, b: wsum(scipy.linalg.solve_triangular(l, b, lower=True)), L3, V3),
]


def _check(f, args, rtol, atol):
    """Finite differences agree, and each gradient has its argument's shape and (for arrays) dtype."""
    got = assert_grad_fd(f, *args, rtol=rtol, atol=atol)
    for g, a in zip(got, args):
        if g is None:
            continue
        assert np.shape(g) == np.shape(a)
        if isinstance(a, np.ndarray):
            assert isinstance(g, np.ndarray) and g.dtype == a.dtype, (type(g), getattr(g, "dtype", None))


@pytest.mark.parametrize("f, args", DIFFERENCES + PRODUCTS + STATISTICS + POLYNOMIALS + LINEAR_ALGEBRA
                         + SELECTION + SCIPY + CONSTANTS_SHAPED_LIKE_INPUTS)
def test_sweep(f, args):
    _check(f, args, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("f, args", FLOAT32)
def test_sweep_float32(f, args):
    """float32 arrays in, float32 gradients out (finite differences run in float64, hence the tolerance)."""
    args32 = tuple(a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in args)
    _check(f, args32, rtol=2e-3, atol=2e-4)


# -- the rules the sweep reaches, adjoint and frule checked directly -----------------------------------------

def _accumulate(ufunc, x, axis):
    return ufunc.accumulate(x, axis)


def _array_wrap(like, a):
    return like.__array_wrap__(a)


def _qr_pair(a, mode="reduced"):
    return tuple(np.linalg.qr(a, mode=mode))


_LSTSQ = dict(signature="ddd->ddid")
RULES = [
    pytest.param(multiarray.correlate, (V6, K3, "same"), {}, None, id="correlate"),
    pytest.param(multiarray.correlate, (K3, V6 + 1j * V6[::-1], 1), {}, None, id="correlate_complex_swapped"),
    pytest.param(multiarray.correlate2, (B4, V6, "same"), {}, None, id="correlate2_later_window"),
    pytest.param(multiarray.correlate2, (V6 + 1j * V6[::-1], K3 - 1j, "full"), {}, None, id="correlate2_complex"),
    pytest.param(_accumulate, (np.multiply, A45, 1), {}, (np.multiply, "accumulate"), id="multiply_accumulate"),
    pytest.param(_accumulate, (np.maximum, VALS2D, 0), {}, (np.maximum, "accumulate"), id="maximum_accumulate"),
    pytest.param(_accumulate, (np.subtract, A45, 0), {}, (np.subtract, "accumulate"), id="subtract_accumulate"),
    pytest.param(_array_wrap, (A34, A45), {}, (A34, "__array_wrap__"), id="array_wrap"),
    pytest.param(np.float64, (V5,), {}, None, id="float64"),
    pytest.param(np.clip, (VALS, VALS[::-1] - 0.05, VALS * 0 + 1.0), {}, None, id="clip_crossed_bounds"),
    pytest.param(_umath_linalg.lstsq, (A43, A45[:, :2], 1e-12), _LSTSQ, _umath_linalg.lstsq, id="lstsq_gufunc"),
    pytest.param(_qr_pair, (A43,), {}, np.linalg.qr, id="qr_tall"),
    pytest.param(_qr_pair, (A34,), {}, np.linalg.qr, id="qr_wide"),
    pytest.param(np.linalg.qr, (A43, "r"), {}, None, id="qr_r"),
    pytest.param(scipy.special.poch, (POS5, UNIT5), {}, None, id="poch"),
    pytest.param(lapack.dtrtrs, (L3, A34), dict(lower=1, trans=1), None, id="dtrtrs_trans"),
    pytest.param(lapack.dtrtrs, (L3.T.copy(), V3), dict(unitdiag=1), None, id="dtrtrs_unitdiag"),
    pytest.param(lapack.dpotrf, (S3,), dict(lower=1, clean=0), None, id="dpotrf_lower_unclean"),
    pytest.param(lapack.dpotrf, (S3,), {}, None, id="dpotrf_upper"),
    pytest.param(lapack.dpotrs, (np.linalg.cholesky(S3), A34), dict(lower=1), None, id="dpotrs_lower"),
    pytest.param(lapack.dpotrs, (np.linalg.cholesky(S3).T + np.tril(M3, -1), V3), {}, None, id="dpotrs_upper"),
]


@pytest.mark.parametrize("fn, args, kwargs, key", RULES)
def test_rule(fn, args, kwargs, key):
    """Adjoint and frule of each rule against finite differences (`key`: where the rule is registered,
    when fn is a wrapper that calls it; a pair (object, name) stands for that object's method)."""
    if isinstance(key, tuple):
        key = getattr(*key)
    check_rule(fn, *args, rule=registry.get(key if key is not None else fn), rtol=1e-5, atol=1e-7, **kwargs)
