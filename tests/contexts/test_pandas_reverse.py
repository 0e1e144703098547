"""Reverse mode through a pandas Series or DataFrame built from differentiated arrays (session 70): pandas' blocks,
block managers and indexers registered as containers of their arrays (`contexts/rules/pandas.py`), its
`cache_readonly` getters run as code, its Cython kernels given rules (`contexts/rules/pandas_kernels.py`).

Every gradient is compared with central differences (`tests/fd.py`). The risk battery (NaN padding,
`min_periods`, `adjust=False`, index alignment, reindex, object dtype, ties, writes in place) asserts right or
refused, never wrong; the writes in place and the ties must be refused.
"""

from __future__ import annotations

import numpy as np
import pytest

from contexts import gradient
from overdub.errors import OverdubError
from tests.fd import gradient as fd_gradient

pd = pytest.importorskip("pandas")

X = np.array([0.3, 0.9, 0.4, 1.2, 0.7, 0.2, 1.5])


def _right(f, x=X, rtol=1e-6, atol=1e-8):
    got = gradient(f, x)[0]
    want = fd_gradient(f, x)[0]
    assert np.allclose(got, want, rtol=rtol, atol=atol), (got, want)


# -- what works: each right against central differences ------------------------------------------------

def arith(x):
    s = pd.Series(x)
    return ((s * 2 - s / 3 + s ** 2) * s).sum()


def reductions(x):
    s = pd.Series(x)
    return s.mean() + s.std() * 2 + s.sum() + s.var()


def to_numpy(x):
    s = pd.Series(x) * 3
    return np.sum(s.to_numpy() ** 2) + np.sum(s.values)


def columns(x):
    df = pd.DataFrame({"a": x, "b": x ** 2})
    return (df["a"] * df["b"]).sum() + df.sum().sum() + df.mean().sum()


def df_values(x):
    df = pd.DataFrame({"a": x, "b": x ** 2})
    return (df.values ** 2).sum() + df.to_numpy().sum()


def new_column(x):
    df = pd.DataFrame({"a": x})
    df["b"] = df["a"] * 3
    return (df["b"] ** 2).sum()


def shift(x):
    s = pd.Series(x)
    return (s.shift(1) * s).sum()


def diff(x):
    s = pd.Series(x)
    return (s.diff() ** 2).sum() + (s.diff(-2) ** 2).sum()


def cumsum(x):
    s = pd.Series(x)
    return (s.cumsum() * s).sum()


def rolling_mean(x):
    s = pd.Series(x)
    return (s.rolling(3).mean() ** 2).sum()


def rolling_sum(x):
    s = pd.Series(x)
    return (s.rolling(2).sum() * s).sum()


def rolling_std_var(x):
    s = pd.Series(x)
    return s.rolling(3).std().sum() + s.rolling(4, min_periods=2).var().sum()


def rolling_center(x):
    s = pd.Series(x)
    return (s.rolling(3, center=True).mean() ** 2).sum()


def df_rolling(x):
    df = pd.DataFrame({"a": x, "b": x * 2})
    return df.rolling(3).mean().sum().sum()


def ewm_mean(x):
    s = pd.Series(x)
    return (s.ewm(span=3).mean() ** 2).sum()


def ewm_no_adjust(x):
    s = pd.Series(x)
    return (s.ewm(alpha=0.3, adjust=False).mean() ** 2).sum()


def ewm_differentiated_alpha(x):
    s = pd.Series(x[1:])
    return (s.ewm(alpha=x[0] / 3).mean() ** 2).sum()


def ewm_sum(x):
    s = pd.Series(x)
    return (s.ewm(com=0.5).sum() ** 2).sum()


def loc_iloc_reads(x):
    s = pd.Series(x)
    return s.loc[2] * s.iloc[3] + s.iloc[1:4].sum() + s.iat[2] * s.at[3]


def numpy_ufuncs(x):  # (numpy's ufuncs on a Series: pandas' `__array_ufunc__`, its dispatch to operators)
    s = pd.Series(x)
    return np.log(s).sum() + np.sqrt(s).sum() + np.sum(np.asarray(s) ** 2) + np.add(s, 1.0).sum()


def dates(x):
    s = pd.Series(x, index=pd.date_range("2020-06-01", periods=len(x), freq="D"))
    return float((s * 2.0 + 1.0).sum())


WORKS = [arith, reductions, to_numpy, columns, df_values, new_column, shift, diff, cumsum, rolling_mean, rolling_sum,
         rolling_std_var, rolling_center, df_rolling, ewm_mean, ewm_no_adjust, ewm_differentiated_alpha, ewm_sum,
         loc_iloc_reads, numpy_ufuncs, dates]


@pytest.mark.parametrize("f", WORKS, ids=lambda f: f.__name__)
def test_right_against_central_differences(f):
    _right(f)


# -- the risk battery: right or refused, never wrong --------------------------------------------------

def _with_nan(x):
    y = x.copy()
    y[3] = np.nan
    return y


def nan_padding(x):
    s = pd.Series(x)
    return np.nansum((s.shift(2) * s).to_numpy())


def pct_change(x):  # (a NaN padding squared: `operator.pow`'s 0 * nan, dropped)
    s = pd.Series(x)
    return (s.pct_change() ** 2).sum()


def rolling_min_periods(x):
    s = pd.Series(x)
    return (s.rolling(3, min_periods=1).mean() ** 2).sum()


def rolling_nan(x):
    s = pd.Series(_with_nan(x))
    return (s.rolling(3, min_periods=2).mean() ** 2).sum() + np.nansum(s.rolling(2).sum().values)


def ewm_nan(x):
    s = pd.Series(_with_nan(x))
    return (s.ewm(com=1.5, ignore_na=False, min_periods=2).mean() ** 2).sum()


def ewm_nan_ignored(x):
    s = pd.Series(_with_nan(x))
    return (s.ewm(com=0.5, ignore_na=True, adjust=False).mean() ** 2).sum()


def align_range(x):
    a = pd.Series(x, index=range(len(x)))
    b = pd.Series(x ** 2, index=range(2, len(x) + 2))
    return (a + b).sum()


def align_strings(x):
    a = pd.Series(x[:4], index=["a", "b", "c", "d"])
    b = pd.Series(x[3:], index=["c", "d", "e", "f"])
    return ((a + b) ** 2).sum()


def align_integers(x):
    a = pd.Series(x[:4], index=np.array([1, 3, 5, 7]))
    b = pd.Series(x[3:], index=np.array([3, 5, 8, 9]))
    return ((a * b).fillna(0.0) ** 2).sum() + (a.add(b, fill_value=1.0) ** 2).sum()


def align_frame(x):
    df = pd.DataFrame({"a": x[:4], "b": x[3:]}, index=["p", "q", "r", "s"])
    s = pd.Series(x[:3], index=["q", "r", "t"])
    return (df.mul(s, axis=0) ** 2).sum().sum()


def reindex(x):
    return (pd.Series(x).reindex(range(-1, len(x) + 1)) ** 2).sum()


def reindex_strings(x):
    a = pd.Series(x[:4], index=["a", "b", "c", "d"])
    return (a.reindex(["d", "z", "a"]) ** 2).sum()


def object_dtype(x):
    return (pd.Series(list(x), dtype=object) * 2).sum()


def object_values(x):
    s = pd.Series(x).astype(object)
    return (s * 2.0).astype(float).sum()


def float_index(x):
    s = pd.Series(np.arange(7.0), index=x)
    return (s * s.index.to_numpy()).sum()


def fillna(x):
    s = pd.Series(x).shift(1)
    return (s.fillna(0.5) ** 2).sum()


def where_mask(x):
    s = pd.Series(x)
    return (s.mask(s > 0.8, 0.0) ** 2).sum() + (s.where(s > 0.5) ** 2).sum()


def concat(x):
    return (pd.concat([pd.Series(x[:3]), pd.Series(x[3:])], ignore_index=True) ** 2).sum()


def sort_values(x):
    return (pd.Series(x).sort_values() * np.arange(7.0)).sum()


def cumulative(x):
    s = pd.Series(x)
    return s.cumprod().sum() + s.cummax().sum()


def expanding(x):
    return pd.Series(x).expanding().mean().sum()


def max_min(x):
    s = pd.Series(x)
    return s.max() - s.min()


def abs_(x):
    return (pd.Series(x) - 0.5).abs().sum()


def rolling_max(x):
    s = pd.Series(x)
    return (s.rolling(3).max() * s).sum() + s.rolling(2, min_periods=1).min().sum()


def rolling_max_nan(x):
    s = pd.Series(_with_nan(x))
    return np.nansum((s.rolling(3, min_periods=1).max() ** 2).to_numpy())


def stochastic(x):  # (ta's stochastic oscillator)
    s = pd.Series(x)
    low, high = s.rolling(3).min(), s.rolling(3).max()
    return ((s - low) / (high - low)).sum()


def tie_rolling_max(x):  # (two equal values extreme in one window)
    s = pd.Series(np.concatenate([x[:2], x[1:2], x[2:]]))
    return s.rolling(3).min().sum() + s.rolling(3).max().sum()


def rolling_apply(x):
    return pd.Series(x).rolling(3).apply(lambda w: (w ** 2).sum(), raw=True).sum()


def row_apply(x):
    return pd.Series(x).apply(lambda v: v ** 2).sum()


def rank(x):
    s = pd.Series(x)
    return (s.rank() * s).sum()


def groupby_sum(x):
    df = pd.DataFrame({"k": [0, 1, 0, 1, 0, 1, 0], "v": x})
    return (df.groupby("k")["v"].sum() ** 2).sum()


def write_after_making(x):  # (the array written after the Series was made of it, without a copy)
    y = x * 1.0
    s = pd.Series(y, copy=False)
    y[1] = x[0] * 3
    return (s * 2).sum()


def write_before_making(x):
    y = x * 1.0
    y[1] = x[0] * 3
    return (pd.Series(y, copy=False) * 2).sum()


def setitem(x):
    s = pd.Series(x.copy())
    s[2] = x[0] * 5
    return (s ** 2).sum()


def iloc_setitem(x):
    s = pd.Series(x * 1.0)
    s.iloc[1] = 7.0
    return (s ** 2).sum()


def where_inplace(x):
    s = pd.Series(x * 1.0)
    s.where(s > 0.5, 0.0, inplace=True)
    return (s ** 2).sum()


def clip_inplace(x):
    s = pd.Series(x * 1.0)
    s.clip(0.35, 1.0, inplace=True)
    return (s ** 2).sum()


def fillna_inplace(x):
    s = pd.Series(x).shift(1)
    s.fillna(0.5, inplace=True)
    return (s ** 2).sum()


def frame_iloc_setitem(x):
    df = pd.DataFrame({"a": x * 1.0, "b": x ** 2})
    df.iloc[1, 0] = 3.0
    return df.sum().sum()


def frame_loc_setitem(x):
    df = pd.DataFrame({"a": x * 1.0, "b": x ** 2})
    df.loc[2, "b"] = x[0]
    return (df ** 2).sum().sum()


def column_iadd(x):
    df = pd.DataFrame({"a": x * 1.0})
    df["a"] += x
    return (df["a"] ** 2).sum()


def series_iadd(x):
    s = pd.Series(x * 1.0)
    s += x
    return (s ** 2).sum()


# ties at X[0] = 0.3: a comparison's branches meet there (no derivative): refused
def tie_operator(x):
    s = pd.Series(x)
    return ((s >= 0.3) * s).sum()


def tie_method(x):
    s = pd.Series(x)
    return (s.ge(0.3) * s).sum()


def tie_clip(x):
    return (pd.Series(x).clip(0.3, 1.0) ** 2).sum()


def tie_where(x):
    s = pd.Series(x)
    return (s.where(s > 0.3, 0.3) ** 2).sum()


def tie_frame(x):
    df = pd.DataFrame({"a": x})
    return ((df > 0.3) * df).sum().sum()


def tie_maximum(x):
    return np.maximum(pd.Series(x), 0.3).sum()


def forward_filled(x):  # (pandas' NumpyExtensionArray: kept refused, session 36's hazard 4)
    return (pd.Series(x).shift(2).ffill() ** 2).sum()


def nullable_floats(x):  # (an ExtensionBlock of pandas' own array)
    return (pd.Series(x, dtype="Float64") * 2).sum()


def copy_written(x):
    s = pd.Series(x)
    t = s.copy()
    t.iloc[0] = 0.0
    return (t * s).sum()


BATTERY = [nan_padding, pct_change, rolling_min_periods, rolling_nan, ewm_nan, ewm_nan_ignored, align_range,
           align_strings, align_integers, align_frame, reindex, reindex_strings, object_dtype, object_values,
           float_index, fillna, where_mask, concat, sort_values, cumulative, expanding, max_min, abs_, rolling_max,
           rolling_max_nan, stochastic, tie_rolling_max, rolling_apply, row_apply, rank, groupby_sum,
           write_after_making, write_before_making, setitem,
           iloc_setitem, where_inplace, clip_inplace, fillna_inplace, frame_iloc_setitem, frame_loc_setitem,
           column_iadd, series_iadd, tie_operator, tie_method, tie_clip, tie_where, tie_frame, tie_maximum,
           forward_filled, nullable_floats, copy_written]

# refused, never answered: writes in place into a block's array after it was made, and ties
MUST_REFUSE = {write_after_making, setitem, iloc_setitem, where_inplace, clip_inplace, tie_operator, tie_method,
               tie_clip, tie_where, tie_frame, tie_rolling_max}


@pytest.mark.parametrize("f", BATTERY, ids=lambda f: f.__name__)
def test_risk_battery_right_or_refused(f):
    try:
        got = gradient(f, X)[0]
    except OverdubError:
        return  # refused: never wrong
    assert f not in MUST_REFUSE, f"{f.__name__} must be refused, gave {got}"
    want = fd_gradient(f, X)[0]
    assert np.allclose(got, want, rtol=1e-6, atol=1e-8), (got, want)


@pytest.mark.parametrize("f", sorted(MUST_REFUSE, key=lambda f: f.__name__), ids=lambda f: f.__name__)
def test_writes_in_place_and_ties_are_refused(f):
    with pytest.raises(OverdubError):
        gradient(f, X)


def test_a_write_in_place_is_refused_by_name():
    with pytest.raises(OverdubError, match="write in place into the array a pandas NumpyBlock holds"):
        gradient(write_after_making, X)


def test_a_kernel_without_a_rule_is_refused_by_name():
    with pytest.raises(OverdubError, match="roll_apply"):
        gradient(rolling_apply, X)


# -- the kernels' rules, on their own: against central differences -----------------------------------

def _kernel_cases():
    from pandas._libs.window import aggregations as agg

    n = 8
    start = np.maximum(np.arange(n) - 2, 0).astype(np.int64)
    end = np.arange(1, n + 1, dtype=np.int64)
    yield "roll_sum", lambda v: agg.roll_sum(v, start, end, 2)
    yield "roll_mean", lambda v: agg.roll_mean(v, start, end, 1)
    yield "roll_var", lambda v: agg.roll_var(v, start, end, 2, ddof=1)
    yield "roll_max", lambda v: agg.roll_max(v, start, end, 1)
    yield "roll_min", lambda v: agg.roll_min(v, start, end, 2)
    zero, full = np.array([0], dtype=np.int64), np.array([n], dtype=np.int64)
    for adjust in (True, False):
        for ignore_na in (True, False):
            yield f"ewm adjust={adjust} ignore_na={ignore_na}", (
                lambda v, a=adjust, i=ignore_na: agg.ewm(v, zero, full, 2, 1.5, a, i))


@pytest.mark.parametrize("name,kernel", list(_kernel_cases()), ids=lambda v: v if isinstance(v, str) else "")
@pytest.mark.parametrize("nan", [False, True])
def test_kernel_rules_against_central_differences(name, kernel, nan):
    rng = np.random.default_rng(7)
    v = rng.normal(size=8)
    if nan:
        v[2] = np.nan
    w = rng.normal(size=8)

    def f(u):
        y = kernel(u)
        return float(np.nansum(y * w))

    got = gradient(f, v)[0]
    want = fd_gradient(f, v)[0]
    ok = ~np.isnan(v)
    assert np.allclose(got[ok], want[ok], rtol=1e-6, atol=1e-8), (got, want)


def test_stand_ins_are_pandas_kernels_bit_for_bit():
    from pandas._libs import algos

    from contexts.rules.pandas_kernels import diff_2d, ensure_float64, take_1d, take_2d_axis0, take_2d_axis1

    rng = np.random.default_rng(3)
    v = rng.normal(size=7)
    idx = np.array([3, -1, 0, 6, -1, 2], dtype=np.intp)
    for din, dout in (("float64", "float64"), ("float32", "float32"), ("float32", "float64")):
        a, b = np.empty(6, dout), np.empty(6, dout)
        getattr(algos, f"take_1d_{din}_{dout}")(v.astype(din), idx, a)
        take_1d(v.astype(din), idx, b)
        assert np.array_equal(a, b, equal_nan=True)
    m = rng.normal(size=(4, 5))
    rows = np.array([1, -1, 0], dtype=np.intp)
    for axis, stand_in, shape in ((0, take_2d_axis0, (3, 5)), (1, take_2d_axis1, (4, 3))):
        a, b = np.empty(shape), np.empty(shape)
        getattr(algos, f"take_2d_axis{axis}_float64_float64")(m, rows, a)
        stand_in(m, rows, b)
        assert np.array_equal(a, b, equal_nan=True)
    for periods in (1, 2, -1):
        for axis in (0, 1):
            a, b = np.full(m.shape, np.nan), np.full(m.shape, np.nan)
            algos.diff_2d(m, a, periods, axis)
            diff_2d(m, b, periods, axis)
            assert np.array_equal(a, b, equal_nan=True)
    i = np.arange(3)
    assert ensure_float64(v) is v and np.array_equal(ensure_float64(i), algos.ensure_float64(i))


def test_ufunc_dispatch_stand_in_is_pandas_own():
    from pandas._libs import ops_dispatch

    from contexts.rules.pandas_kernels import maybe_dispatch_ufunc_to_dunder_op

    s = pd.Series([1.0, 2.0, 3.0])
    for ufunc, inputs in ((np.add, (s, 1.0)), (np.add, (1.0, s)), (np.log, (s,)), (np.negative, (s,)),
                          (np.less, (1.5, s)), (np.power, (s, 2)), (np.subtract, (2.0, s)), (np.maximum, (s, 2.0)),
                          (np.absolute, (s,))):
        a = ops_dispatch.maybe_dispatch_ufunc_to_dunder_op(s, ufunc, "__call__", *inputs)
        b = maybe_dispatch_ufunc_to_dunder_op(s, ufunc, "__call__", *inputs)
        assert (a is NotImplemented) == (b is NotImplemented), ufunc
        assert a is NotImplemented or a.equals(b), ufunc
    assert maybe_dispatch_ufunc_to_dunder_op(s, np.add, "reduce", s) is NotImplemented


@pytest.mark.one_mode  # (with both modes, jvp is reverse mode's: tests/contexts/test_pandas_frame_arithmetic.py)
def test_forward_mode_still_refuses_a_series_of_duals():
    from contexts import jvp

    with pytest.raises(OverdubError):
        jvp(arith, (X,), (np.ones_like(X),))


# -- pandas' `cache_readonly`: a Cython descriptor running a Python getter, run as code ----------------------

class _Scaled:
    def __init__(self, v):
        self.v = v

    from pandas.util._decorators import cache_readonly

    @cache_readonly
    def doubled(self):
        return self.v * 2.0

    del cache_readonly


def _cached(x):
    s = _Scaled(x)
    return np.sum(s.doubled ** 2) + np.sum(s.doubled)  # (the second read: the getter again, not its cache)


def test_cache_readonly_getter_is_differentiated():
    # (run natively, its value's cotangent went to a field nothing read back: 0 for 6 and 10)
    x = np.array([0.5, 1.0])
    assert np.allclose(gradient(_cached, x)[0], fd_gradient(_cached, x)[0], rtol=1e-8)
