"""Soundness of sparsity patterns on what a random-program probe (`_probe.py`) crashed on or missed: every
entry finite differences see at a few random points must be in the pattern (extra entries are allowed),
or the detector must refuse with NoSparsityRule / TracedBranchError."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sc

from contexts.sparsity import NoSparsityRule, hessian_sparsity, jacobian_sparsity

from tests import fd

from ._pattern import nonzero

MODES = ("global", "local")


def assert_sound_jacobian(f, x, mode):
    """FD nonzeros at x (local) or at x and two random points (global) all lie in the pattern."""
    P = jacobian_sparsity(f, x, mode=mode).toarray()
    rng = np.random.default_rng(1)
    points = [x] if mode == "local" else [x] + [rng.standard_normal(np.shape(x)) for _ in range(2)]
    for p in points:
        seen = nonzero(fd.jacobian(f, p, matrix=True))
        assert seen.shape == P.shape
        missed = np.argwhere(seen & ~P)
        assert not len(missed), f"missed Jacobian entries {missed.tolist()}"
    return P


def assert_sound_hessian(f, x, mode):
    P = hessian_sparsity(f, x, mode=mode).toarray()
    rng = np.random.default_rng(2)
    w = rng.uniform(0.5, 1.5, np.size(np.asarray(f(x))))  # weights: no cancellation between outputs
    shape = np.shape(x)
    g = lambda z: np.sum(w * np.ravel(f(np.reshape(z, shape))))
    points = [x] if mode == "local" else [x] + [rng.standard_normal(np.shape(x)) for _ in range(2)]
    for p in points:
        seen = nonzero(fd.hessian(g, p, h=1e-4, matrix=True), tol=1e-5)
        missed = np.argwhere(seen & ~P)
        assert not len(missed), f"missed Hessian entries {missed.tolist()}"
    return P


X5 = np.array([0.3, -1.2, 0.8, 2.1, -0.4])
X34 = np.random.default_rng(7).standard_normal((3, 4))


# -- ndarray methods that work in place (the probe: AttributeError) ----------------------------------------

def sort_method(x):
    t = x * 2
    t.sort()
    return t


def sort_method_axis0(x):
    t = x.copy()
    t.sort(axis=0)
    return t * t


def partition_method(x):
    t = x ** 2
    t.partition(1)
    return t


def fill_method(x):
    t = x.copy()
    t.fill(0.0)
    t += x[1] * x[0]
    return t


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, x", [(sort_method, X5), (sort_method, X34), (sort_method_axis0, X34),
                                  (partition_method, X5), (fill_method, X5)], ids=lambda v: getattr(v, "__name__", ""))
def test_inplace_methods(f, x, mode):
    assert_sound_jacobian(f, x, mode)
    assert_sound_hessian(f, x, mode)


def test_missing_ndarray_method_is_a_refusal():
    def f(x):
        return x.byteswap()
    with pytest.raises(NoSparsityRule, match="byteswap") as e:
        jacobian_sparsity(f, X5)
    assert "test_soundness.py" in str(e.value)


# -- indices computed from the inputs: argsort, argmax (global mode: conservative) --------------------------

def argsort_gather(x):
    return x[np.argsort(x)] * x[0]


def argsort_take_along(x):
    return np.take_along_axis(x, np.argsort(x, axis=-1), axis=-1)


def argmax_pick(x):
    return x[np.argmax(x)] * x


def argsort_store(x):
    t = np.zeros(x.shape)
    t[np.argsort(x)] = x ** 2
    return t


def argmax_method(x):
    return np.take(x, x.argmax()) + x[::-1]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, x", [(argsort_gather, X5), (argsort_take_along, X34), (argmax_pick, X5),
                                  (argsort_store, X5), (argmax_method, X5)], ids=lambda v: getattr(v, "__name__", ""))
def test_data_dependent_indices(f, x, mode):
    assert_sound_jacobian(f, x, mode)
    assert_sound_hessian(f, x, mode)


# -- order statistics: median, percentile, quantile (global mode: numpy branched on the values) ------------

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, x", [
    (lambda x: np.median(x) * x, X5),
    (lambda x: np.median(x, axis=0), X34),
    (lambda x: np.percentile(x, 30), X5),
    (lambda x: np.percentile(x, [20, 70], axis=-1), X34),
    (lambda x: np.quantile(x ** 2, 0.4, axis=0, keepdims=True), X34),
    (lambda x: np.nanmedian(x, axis=1), X34),
    (lambda x: np.partition(x, 2, axis=None), X34),
], ids=["median", "median_axis", "percentile", "percentile_q_vector", "quantile_keepdims", "nanmedian",
        "partition_flat"])
def test_order_statistics(f, x, mode):
    assert_sound_jacobian(f, x, mode)
    assert_sound_hessian(f, x, mode)


# -- nan-reductions: numpy's code took its scalar path for a non-ndarray and dropped the tracer ------------

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, x", [
    (lambda x: np.nanstd(x), X5),
    (lambda x: np.nanvar(x, axis=0), X34),
    (lambda x: np.nanprod(x, axis=1), X34),
    (lambda x: np.nancumsum(x * x, axis=1), X34),
], ids=["nanstd", "nanvar", "nanprod", "nancumsum"])
def test_nan_reductions(f, x, mode):
    assert_sound_jacobian(f, x, mode)
    assert_sound_hessian(f, x, mode)


# -- linear algebra: multi-output kernels, the in-place QR kernel, singular stand-ins ----------------------

def _matrix(x):
    x = np.ravel(x)
    return x[:3][:, None] * np.array([1.0, 0.5, 0.0]) + np.eye(3) * 3 + x[-1]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [
    lambda x: np.linalg.qr(_matrix(x))[1],
    lambda x: np.linalg.qr(_matrix(x))[0],
    lambda x: np.linalg.svd(_matrix(x))[1],
    lambda x: np.linalg.svd(_matrix(x), compute_uv=False),
    lambda x: np.linalg.eigh(_matrix(x) + _matrix(x).T)[0],
    lambda x: np.linalg.lstsq(_matrix(x), np.ravel(x)[:3], rcond=None)[0],
    lambda x: np.linalg.slogdet(_matrix(x))[1],
    lambda x: np.linalg.inv(_matrix(x)),
    lambda x: np.linalg.cholesky(_matrix(x) @ _matrix(x).T),
    lambda x: np.linalg.solve(_matrix(x), np.ravel(x)[:3]),
], ids=["qr_r", "qr_q", "svd", "svdvals", "eigh", "lstsq", "slogdet", "inv", "cholesky", "solve"])
def test_linalg(f, mode):
    assert_sound_jacobian(f, X5, mode)


@pytest.mark.parametrize("mode", MODES)
def test_inner_sums_over_last_axes(mode):
    """np.inner(v, M) is M @ v, not v @ M."""
    f = lambda x: np.inner(np.arctan(x[:3]), _matrix(x))
    assert_sound_jacobian(f, X5, mode)
    assert_sound_hessian(f, X5, mode)
    g = lambda x: np.inner(x[:6].reshape(2, 3), x[3:9].reshape(2, 3) ** 2)
    assert_sound_jacobian(g, np.arange(1.0, 10.0), mode)


# -- scalars, shapes and out= ----------------------------------------------------------------------------------

def scalar_inplace_broadcast(x):
    s = x[0] * x[1]
    t = s
    t *= x          # a numpy scalar: t becomes an array, s is unchanged
    return np.concatenate([np.ravel(s), t])


def scalar_ravel_write(x):
    t = np.sum(x ** 2)
    t.ravel()[0] = 0.0   # a numpy scalar's ravel is a copy: t keeps its value
    return t


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, x", [
    (scalar_inplace_broadcast, X5),
    (scalar_ravel_write, X5),
    (lambda x: np.cumsum(np.sum(x), axis=-1), X5),
    (lambda x: np.ptp(np.var(x)) + x, X5),
    (lambda x: sc.softmax(x), X34),
    (lambda x: np.minimum.reduce(sc.softmax(x), axis=-1), X34),
    (lambda x: np.linalg.norm(x, ord=np.inf) * x[0], X5 * [1, 3, 1, 1, 1]),  # the largest |x| is negative
    (lambda x: np.linalg.norm(x, ord=-np.inf), X5 * [1, 1, 1, 1, -0.1]),
    (lambda x: np.cross(x[:3], x[1:4] ** 2), X5),
    (lambda x: np.polyval(x[:3], 0.5), X5),
], ids=["scalar_inplace", "scalar_ravel_write", "cumsum_scalar", "ptp_scalar", "softmax_2d",
        "softmax_reduce", "norm_inf", "norm_minus_inf", "cross", "polyval"])
def test_scalars_shapes_out(f, x, mode):
    assert_sound_jacobian(f, x, mode)
    assert_sound_hessian(f, x, mode)


# -- stores at positions depending on the inputs (global mode: conservative) ------------------------------

def place_traced_mask(x):
    t = x.copy()
    np.place(t, x > 0, x[0] ** 2)
    return t


def putmask_traced_mask(x):
    t = x * 2
    np.putmask(t, x > 0, x[::-1])
    return t


def put_argsort(x):
    t = np.zeros(x.shape)
    np.put(t, np.argsort(x), x * x[0])
    return t


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [place_traced_mask, putmask_traced_mask, put_argsort],
                         ids=lambda v: v.__name__)
def test_stores_at_traced_positions(f, mode):
    assert_sound_jacobian(f, X5, mode)
    assert_sound_hessian(f, X5, mode)


@pytest.mark.parametrize("mode", ["global", "local"])
def test_diff_with_prepend_and_append(mode):
    """np.diff's prepend/append were ignored (a pattern with too few rows, or a crash on 2-D input)."""
    from contexts.sparsity import jacobian_sparsity
    f1 = lambda v: np.diff(v, prepend=0.0, append=[1.0, 2.0])  # noqa: E731
    want = np.array([[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1], [0, 0, 0, 1], [0, 0, 0, 0]], bool)
    assert (jacobian_sparsity(f1, np.ones(4), mode=mode).toarray().astype(bool) == want).all()
    f2 = lambda x: np.diff(x, axis=1, prepend=0.0).ravel()  # noqa: E731
    got = jacobian_sparsity(f2, np.ones((3, 4)), mode=mode).toarray().astype(bool)
    x = np.random.default_rng(0).uniform(0.5, 1.5, (3, 4))
    jac = fd.jacobian(f2, x, matrix=True)
    assert got.shape == (12, 12) and not (np.abs(jac) > 1e-6)[~got].any()

