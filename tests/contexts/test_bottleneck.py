"""bottleneck's C functions differentiated through their numpy stand-ins (`contexts.rules.bottleneck`): each
stand-in gives bottleneck's values (random data with NaNs, every window, min_count, axis and ddof, float32 and
integer arrays: bottleneck's dtypes and types), and both modes agree with central differences on functions
using them, data with NaNs in it (refused before: no rule for a C function). The integer, rank and flag
functions carry no derivative; `replace` changes its array in place and the engines follow it."""

from __future__ import annotations

import numpy as np
import pytest

from contexts import gradient, hessian, jacfwd, jvp, value_and_gradient
from contexts.rules.registry import registry
from overdub.errors import OverdubError
from tests import fd

bn = pytest.importorskip("bottleneck")
stand = pytest.importorskip("contexts.rules.bottleneck")

MODES = [gradient, jacfwd]
REDUCTIONS = ["nansum", "nanmean", "nanstd", "nanvar", "nanmin", "nanmax", "median", "nanmedian", "ss"]
MOVING = ["move_sum", "move_mean", "move_std", "move_var", "move_min", "move_max", "move_median"]
DTYPES = [np.float64, np.float32, np.int64, np.int32]
SHAPES = [(1,), (9,), (4, 7), (3, 4, 5)]


def sample(rng, shape, dtype, nans=0.3):
    """Random values of dtype, a share `nans` of them NaN (floats)."""
    if np.dtype(dtype).kind == "i":
        return rng.integers(-9, 10, shape).astype(dtype)
    x = rng.standard_normal(shape)
    x[rng.random(shape) < nans] = np.nan
    return x.astype(dtype)


def arrays():
    """Arrays of bottleneck's four dtypes and several shapes, floats with no, some and mostly NaNs."""
    rng = np.random.default_rng(20261203)
    for dtype in DTYPES:
        for shape in SHAPES:
            for nans in ([0.0, 0.3, 0.8] if np.dtype(dtype).kind == "f" else [0.0]):
                yield sample(rng, shape, dtype, nans)


def assert_as_bottleneck(got, want, rtol, atol=0.0):
    assert type(got) is type(want)
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def tolerance(a):
    return 2e-5 if a.dtype == np.float32 else 1e-11


# -- the stand-ins give bottleneck's values ---------------------------------------------------------------

@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions_give_bottlenecks_values(name):
    ddofs = [0, 1, 2] if name in ("nanstd", "nanvar") else [None]
    for a in arrays():
        for axis in [None, *range(-a.ndim, a.ndim)]:
            for ddof in ddofs:
                kwargs = {} if ddof is None else {"ddof": ddof}
                with np.errstate(all="ignore"):
                    want = getattr(bn, name)(a, axis=axis, **kwargs)
                got = getattr(stand, name)(a, axis=axis, **kwargs)
                assert_as_bottleneck(got, want, tolerance(a), tolerance(a))


@pytest.mark.parametrize("name", MOVING)
def test_moving_windows_give_bottlenecks_values(name):
    ddofs = [0, 1, 2, -1] if name in ("move_std", "move_var") else [None]
    for a in arrays():
        for axis in range(-a.ndim, a.ndim):
            n = a.shape[axis]
            for window in sorted({1, 2, 3, n} & set(range(1, n + 1))):
                for min_count in sorted({None, 1, max(1, window // 2), window}, key=str):
                    for ddof in ddofs:
                        kwargs = {} if ddof is None else {"ddof": ddof}
                        want = getattr(bn, name)(a, window, min_count, axis, **kwargs)
                        got = getattr(stand, name)(a, window, min_count, axis, **kwargs)
                        if ddof is None:
                            assert_as_bottleneck(got, want, tolerance(a), tolerance(a))
                            continue
                        # bottleneck's running sums keep a rounding residue where entries left the window (a
                        # std of 1e-8 for 0); where count <= ddof that residue decides NaN, inf or -0
                        count = bn.move_sum(1.0 * ~np.isnan(np.asarray(a, dtype=float)), window, 1, axis)
                        free = count > ddof
                        residue = (3e-3 if a.dtype == np.float32 else 1e-6) if name == "move_std" else tolerance(a)
                        assert got.dtype == want.dtype and got.shape == want.shape
                        np.testing.assert_allclose(got[free], want[free], rtol=tolerance(a), atol=residue)


def test_moving_windows_on_integers_are_float64():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    for name in MOVING:
        got = getattr(stand, name)(a, 2, axis=0)
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, getattr(bn, name)(a, 2, axis=0), equal_nan=True)


def test_infinities_as_bottlenecks_running_sums():
    # bottleneck's documented limitation: a sum's (mean's) running total is NaN once an infinity has left
    # the window; a variance's is NaN from an infinity's entry until the window empties again
    x = np.array([1.0, np.inf, 2, 3, np.nan, 4, -np.inf, 5, np.nan, np.nan, np.nan, 6, 7, 8])
    for name in MOVING:
        for window, min_count in [(1, None), (2, 1), (3, 1), (3, None), (5, 2)]:
            want = getattr(bn, name)(x, window, min_count)
            got = getattr(stand, name)(x, window, min_count)
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{name} {window} {min_count}")
            np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


def test_push_gives_bottlenecks_values():
    for a in arrays():
        for n in [None, 0, 1, 3]:
            for axis in range(-a.ndim, a.ndim):
                want = bn.push(a, n, axis)
                got = stand.push(a, n, axis)
                assert got.dtype == want.dtype and got is not a
                np.testing.assert_array_equal(got, want)


def test_partition_is_bottlenecks_arrangement():
    rng = np.random.default_rng(4)
    arrays_with_ties = [rng.integers(0, 4, (5, 6)).astype(t) for t in DTYPES]
    for a in [*arrays(), *arrays_with_ties]:
        for axis in [None, *range(-a.ndim, a.ndim)]:
            for kth in range(a.size if axis is None else a.shape[axis]):
                want = bn.partition(a, kth, axis)
                got = stand.partition(a, kth, axis)
                assert got.dtype == want.dtype
                np.testing.assert_array_equal(got, want)  # (the same order, not only the same kth entry)


def test_replace_in_place_as_bottleneck():
    for a in arrays():
        for old, new in [(np.nan, 0.5), (np.nan, 2), (3, -1), (a.flat[0], 7)]:
            want, got = a.copy(), a.copy()
            try:
                expected = bn.replace(want, old, new)
            except ValueError as e:  # (an integer array: old and new must be integers)
                with pytest.raises(ValueError, match="safely cast"):
                    stand.replace(got, old, new)
                assert "safely cast" in str(e)
                continue
            assert stand.replace(got, old, new) is got and expected is want
            np.testing.assert_array_equal(got, want)
    single = np.array([0.1, 0.2], dtype=np.float32)
    stand.replace(single, np.float64(0.1), 9.0)  # (old compared in float32, as bottleneck casts it)
    np.testing.assert_array_equal(single, bn.replace(np.array([0.1, 0.2], dtype=np.float32), np.float64(0.1), 9.0))


@pytest.mark.parametrize("dtype", [np.float16, np.bool_, np.uint8, ">f8"])
def test_other_dtypes_go_to_bottlenecks_slow_code(dtype):
    a = sample(np.random.default_rng(5), (3, 6), np.float64, 0.3)
    a = (a if np.dtype(dtype).kind == "f" else np.nan_to_num(a) * 3).astype(dtype)
    for name in REDUCTIONS:
        with np.errstate(all="ignore"):
            assert_as_bottleneck(getattr(stand, name)(a, axis=1), getattr(bn, name)(a, axis=1), 1e-3)
    for name in MOVING:
        assert_as_bottleneck(getattr(stand, name)(a, 3, 1), getattr(bn, name)(a, 3, 1), 1e-3)
    np.testing.assert_array_equal(stand.push(a), bn.push(a))


ARGUMENT_ERRORS = [
    ("move_mean", (np.arange(5.0), 0), {}), ("move_mean", (np.arange(5.0), 6), {}),
    ("move_mean", (np.arange(5.0), 2.0), {}), ("move_mean", (np.arange(5.0), True), {}),
    ("move_mean", (np.arange(5.0), 2), {"min_count": 3}), ("move_mean", (np.arange(5.0), 2), {"min_count": 0}),
    ("move_mean", (np.arange(5.0), 2), {"min_count": 1.0}), ("move_mean", (np.arange(5.0), 2), {"axis": None}),
    ("move_mean", (np.arange(5.0), 2), {"axis": 1}), ("move_mean", (np.float64(3.0), 1), {}),
    ("move_std", (np.arange(5.0), 2), {"ddof": 1.0}), ("nanstd", (np.arange(5.0),), {"ddof": 0.5}),
    ("nansum", (np.ones((2, 3)),), {"axis": (0, 1)}), ("nansum", (np.ones((2, 3)),), {"axis": 2}),
    ("nanmin", (np.array([]),), {}), ("push", (np.arange(5.0),), {"n": -1}),
    ("push", (np.arange(5.0),), {"n": 1.5}), ("push", (np.arange(5.0),), {"axis": None}),
    ("replace", ([1.0, np.nan], np.nan, 0.0), {}), ("replace", (np.ones(2), "x", 0.0), {}),
]


@pytest.mark.parametrize("name, args, kwargs", ARGUMENT_ERRORS)
def test_arguments_refused_as_bottleneck_refuses_them(name, args, kwargs):
    with pytest.raises((TypeError, ValueError)) as expected:
        getattr(bn, name)(*args, **kwargs)
    with pytest.raises(type(expected.value)):
        getattr(stand, name)(*args, **kwargs)


# -- derivatives: both modes against central differences --------------------------------------------------

rng = np.random.default_rng(20261204)
X = rng.standard_normal(16)
X[[2, 3, 9, 13]] = np.nan
M = rng.standard_normal((6, 5))
M[[0, 2, 5], [1, 4, 0]] = np.nan
M[1:4, 2] = np.nan
R = 0.01 * rng.standard_normal((40, 3)) + 0.001  # (daily returns of three assets)
R[[3, 17, 30], [0, 1, 2]] = np.nan
W = rng.standard_normal(16)
INTS = rng.integers(-5, 6, 16)
DAYS = 252


def sharpe_ratio(returns, risk_free=0.0):
    """empyrical's `sharpe_ratio`: the mean over the standard deviation (ddof=1) of the excess returns, both by
    bottleneck, annualised."""
    excess = returns - risk_free
    return np.multiply(np.divide(bn.nanmean(excess, axis=0), bn.nanstd(excess, ddof=1, axis=0)), np.sqrt(DAYS))


def rolling_sharpe(returns):
    excess = bn.move_mean(returns, 10, min_count=5, axis=0)
    return excess / bn.move_std(returns, 10, min_count=5, axis=0, ddof=1) * np.sqrt(DAYS)


# name -> (f, x, finite-difference step: small where ranks or orders flip near x)
CASES = {
    "nansum": (lambda x: bn.nansum(x * x), X, 1e-3),
    "nanmean": (lambda x: bn.nanmean(x) ** 2, X, 1e-3),
    "nanstd_ddof1": (lambda x: bn.nanstd(x, ddof=1), X, 1e-3),
    "nanvar": (lambda x: bn.nanvar(x) * bn.nanmean(x), X, 1e-3),
    "nanmin_nanmax": (lambda x: bn.nanmin(x) * bn.nanmax(x), X, 1e-3),
    "median": (lambda x: bn.median(x[~np.isnan(x)]), X, 1e-3),
    "median_axis": (lambda m: np.sum(bn.median(m[[1, 3, 4]][:, [0, 1, 3]], axis=0) * np.arange(3.0)), M, 1e-3),
    "nanmedian": (lambda x: bn.nanmedian(x) + bn.nanmedian(x[:7]), X, 1e-3),
    "nanmedian_axis": (lambda m: np.nansum(bn.nanmedian(m, axis=1) * np.arange(6)) + np.sum(bn.nanmedian(m, 0)),
                       M, 1e-3),
    "ss": (lambda x: bn.ss(x[:2]) + bn.ss(x[4:9]), X, 1e-3),
    "nansum_axis": (lambda m: np.sum(bn.nansum(m, axis=1) ** 2), M, 1e-3),
    "nanmean_axis0": (lambda m: np.sum(bn.nanmean(m, axis=0) ** 3), M, 1e-3),
    "nanstd_axis_ddof1": (lambda m: np.nansum(bn.nanstd(m, axis=0, ddof=1) * np.arange(1, 6)), M, 1e-3),
    "nanvar_one_left": (lambda m: np.nansum(bn.nanvar(m[:, 2:4], axis=0, ddof=1)), M, 1e-3),
    "move_sum": (lambda x: np.nansum(bn.move_sum(x, 3, min_count=2) ** 2), X, 1e-3),
    "move_mean": (lambda x: np.nansum(bn.move_mean(x, 3, min_count=2) ** 2), X, 1e-3),
    "move_mean_keywords": (lambda x: np.nansum(bn.move_mean(x, window=4, min_count=1) * W), X, 1e-3),
    "move_mean_full": (lambda x: np.nansum(bn.move_mean(x, 5) * W), X, 1e-3),
    "move_mean_integers": (lambda x: np.nansum(bn.move_mean(INTS, 3, min_count=1) * x), X, 1e-3),
    "move_std": (lambda x: np.nansum(bn.move_std(x, 4, min_count=2) * W), X, 1e-3),
    "move_std_ddof1": (lambda x: np.nansum(bn.move_std(x, 4, min_count=1, ddof=1) * W), X, 1e-3),
    # (windows of one entry only before any has left: bottleneck's std there is 0, not a residue's root)
    "move_std_one_entry": (lambda x: np.nansum(bn.move_std(x[4:], 3, min_count=1) * W[4:]), X, 1e-3),
    "move_var": (lambda x: np.nansum(bn.move_var(x, 5, min_count=3, ddof=1) * W), X, 1e-3),
    "move_var_keywords": (lambda x: np.nansum(bn.move_var(a=x, window=3, min_count=2, ddof=1) * W), X, 1e-3),
    "move_min": (lambda x: np.nansum(bn.move_min(x, 3, min_count=1) * W), X, 1e-3),
    "move_max": (lambda x: np.nansum(bn.move_max(x, 4, min_count=2) * W), X, 1e-3),
    "move_median_even": (lambda x: np.nansum(bn.move_median(x, 4, min_count=1) * W), X, 1e-3),
    "move_median_odd": (lambda x: np.nansum(bn.move_median(x, 3) * W), X, 1e-3),
    "move_mean_axis0": (lambda m: np.nansum(bn.move_mean(m, 2, min_count=1, axis=0) ** 2), M, 1e-3),
    "move_std_axis1": (lambda m: np.nansum(bn.move_std(m, 3, 2, 1, 1) ** 2), M, 1e-3),
    "move_median_axis0": (lambda m: np.nansum(bn.move_median(m, 3, min_count=2, axis=0) ** 2), M, 1e-3),
    "push": (lambda x: np.nansum(bn.push(x) * W), X, 1e-3),
    "push_n": (lambda x: np.nansum(bn.push(x, n=1) ** 2 * W), X, 1e-3),
    "push_axis0": (lambda m: np.nansum(bn.push(m, axis=0) ** 2 * np.arange(5)), M, 1e-3),
    "partition": (lambda x: np.sum(bn.partition(x[~np.isnan(x)], 4) * W[:12]), X, 1e-3),
    "partition_flat": (lambda m: np.nansum(bn.partition(m, 7, axis=None) * np.arange(30)), M, 1e-3),
    "ranks_and_flags": (lambda x: np.nansum(bn.nanrankdata(x) * x) + x[bn.nanargmax(x)] ** 2
                        + np.nansum(bn.move_rank(x, 3, 1) * x) + bn.anynan(x) * bn.nanmean(x), X, 1e-5),
    "argmin_and_ranks": (lambda m: np.sum(bn.rankdata(m[:, 3]) * m[:, 3])
                         + np.nansum(bn.move_argmin(m, 2, 1, axis=0) * m) + m[bn.nanargmin(m[:, 0]), 0], M, 1e-5),
    "argpartition_and_flags": (lambda x: np.sum(x[bn.argpartition(x[:2], 0)] * W[:2]) + bn.allnan(x[2:4]) * x[0]
                               + np.nansum(bn.move_argmax(x, 3, 1) * x), X, 1e-5),
    "sharpe_ratio": (lambda r: np.sum(sharpe_ratio(r, risk_free=0.0002)), R, 1e-5),
    "rolling_sharpe": (lambda r: np.nansum(rolling_sharpe(r)), R, 1e-5),
}


@pytest.mark.one_mode
@pytest.mark.parametrize("mode", MODES, ids=["gradient", "jacfwd"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_derivatives_agree_with_central_differences(name, mode):
    f, x, h = CASES[name]
    want = fd.gradient(f, x, h=h)[0]
    assert np.all(np.isfinite(want)) and np.any(want != 0)
    got = mode(f, x)
    got = np.asarray(got[0] if isinstance(got, tuple) else got, dtype=float).reshape(x.shape)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


# name -> a function of a (6, 5) array: the stand-ins' values met under both engines
OF_ARRAYS = {
    "nansum": lambda a: bn.nansum(a, axis=0), "nanmean": lambda a: bn.nanmean(a, axis=1),
    "nanstd": lambda a: bn.nanstd(a, axis=0, ddof=1), "nanvar": lambda a: bn.nanvar(a, axis=1),
    "nanmin": lambda a: bn.nanmin(a, axis=0), "nanmax": lambda a: bn.nanmax(a, axis=1),
    "median": lambda a: bn.median(a, axis=0), "nanmedian": lambda a: bn.nanmedian(a, axis=1),
    "ss": lambda a: bn.ss(a, axis=1), "move_sum": lambda a: bn.move_sum(a, 3, min_count=2, axis=0),
    "move_mean": lambda a: bn.move_mean(a, 2), "move_std": lambda a: bn.move_std(a, 4, 2, axis=0, ddof=1),
    "move_var": lambda a: bn.move_var(a, 3, 1), "move_min": lambda a: bn.move_min(a, 3, min_count=1, axis=0),
    "move_max": lambda a: bn.move_max(a, 2, 1), "move_median": lambda a: bn.move_median(a, 4, 1, axis=0),
    "push": lambda a: bn.push(a, 1, axis=0), "partition": lambda a: bn.partition(a, 2, axis=1),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("name", sorted(OF_ARRAYS))
def test_values_under_the_engines_are_bottlenecks(name, dtype):
    f = OF_ARRAYS[name]
    a = M.astype(dtype) if np.dtype(dtype).kind == "f" else (np.nan_to_num(M) * 10).astype(dtype)
    want = f(a)
    tangent = np.ones_like(a) if np.dtype(dtype).kind == "f" else None
    y, _ = jvp(f, (a,), (tangent,))
    y = np.asarray(y)
    assert y.dtype == want.dtype and y.shape == want.shape
    np.testing.assert_allclose(y, want, rtol=tolerance(a), atol=tolerance(a), equal_nan=True)
    if tangent is not None:
        value, _ = value_and_gradient(lambda a: np.nansum(f(a) * np.arange(1, want.size + 1).reshape(want.shape)), a)
        np.testing.assert_allclose(value, np.nansum(want * np.arange(1, want.size + 1).reshape(want.shape)),
                                   rtol=tolerance(a))


def std_beside_an_infinity(x):
    x = np.concatenate([x[:6], [np.inf], x[6:]])  # (the windows holding it are NaN: no derivative)
    y = bn.move_std(x, 3, min_count=2)
    return np.nansum(y * np.arange(17.0))


def sum_over_opposite_infinities(x):
    x = np.concatenate([x[:6], [np.inf, -np.inf], x[6:]])  # (inf - inf: NaN, whose square nansum skips)
    y = bn.move_sum(x, 2, min_count=2)
    return np.nansum(np.where(np.isinf(y), 0.0, y) ** 2)


@pytest.mark.one_mode
@pytest.mark.parametrize("mode", MODES, ids=["gradient", "jacfwd"])
@pytest.mark.parametrize("f", [std_beside_an_infinity, sum_over_opposite_infinities], ids=lambda f: f.__name__)
def test_results_made_nan_by_infinities_pass_no_derivative(f, mode):
    want = fd.gradient(f, X)[0]
    got = mode(f, X)
    got = got[0] if isinstance(got, tuple) else got
    assert np.all(np.isfinite(want)) and np.any(want != 0)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_hessian_of_a_moving_mean_and_a_std():
    def f(x):
        return np.nansum(bn.move_mean(x, 3, min_count=1) ** 2) + bn.nanstd(x, ddof=1) ** 2 * bn.nansum(x)
    x = X[:8]
    np.testing.assert_allclose(hessian(f, x), fd.hessian(f, x), rtol=1e-5, atol=1e-6)


def test_integer_outputs_have_no_derivative():
    for fn in (bn.argpartition, bn.rankdata, bn.nanrankdata, bn.nanargmin, bn.nanargmax, bn.anynan, bn.allnan,
               bn.move_argmin, bn.move_argmax, bn.move_rank):
        assert registry.get(fn).nondifferentiable, fn.__name__


# -- replace: a change in place the engines follow ---------------------------------------------------------

def fill_nans(x):
    y = x * 2.0
    bn.replace(y, np.nan, 0.0)
    return np.sum(y ** 2 * W)


def fill_with_a_derivative(x):
    y = np.full(3, np.nan)
    y[1] = 2.0
    bn.replace(y, np.nan, x[0] * x[1])
    return np.sum(y * W[:3])


def replace_kept_apart(x):
    y = np.sin(x)
    before = y * 1.0
    out = bn.replace(y, np.nan, 1.0)
    return np.sum(out * x[0]) + np.nansum(before * W)


def replace_a_moving_value(x):  # (old moves too, equal to no entry here)
    y = np.cos(x)
    bn.replace(y, x[5] + 10.0, 7.0)
    return np.nansum(y ** 2 * W)


@pytest.mark.one_mode
@pytest.mark.parametrize("mode", MODES, ids=["gradient", "jacfwd"])
@pytest.mark.parametrize("f", [fill_nans, fill_with_a_derivative, replace_kept_apart, replace_a_moving_value],
                         ids=lambda f: f.__name__)
def test_replace_differentiated_in_place(f, mode):
    want = fd.gradient(f, X)[0]
    got = mode(f, X)
    got = got[0] if isinstance(got, tuple) else got
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


@pytest.mark.one_mode
@pytest.mark.parametrize("mode", MODES, ids=["gradient", "jacfwd"])
def test_replace_at_a_differentiated_value_equal_to_old_is_refused(mode):
    def f(x):  # (a jump at x[0] == 0.5: the entry becomes 3.0)
        y = x.copy()
        bn.replace(y, 0.5, 3.0)
        return np.nansum(y ** 3)
    with pytest.raises(OverdubError):
        mode(f, np.array([0.5, 1.0, np.nan]))
