"""A DataFrame's parts that carry no derivative, beside a differentiated column (session 73, sweep V): reverse
mode took them for values that may carry one and refused the frame.

- `pd.concat` adds each index's `_id` (a bare `object()`) to a set (linearmodels);
- `df.columns = [c.lower() for c in df.columns]` stores strings through the Cython `AxisProperty` (stockstats);
- a column of integers or strings: its hash table (`unique`, `factorize`) and its `StringDtype`, whose NA value is
  a NaN float (chainladder);
- a scalar string broadcast into a column (`ensure_string_array(["M"])`, pyfao56).

Each gradient is compared with central differences (`tests/fd.py`)."""

from __future__ import annotations

import numpy as np
import pytest

from contexts import gradient
from tests.fd import gradient as fd_gradient

pd = pytest.importorskip("pandas")

X = np.array([1.0, 2.0, 4.0])


def concat(x):
    df = pd.DataFrame({"y": x})
    both = pd.concat([df["y"], 2.0 * df["y"] ** 2], axis=1)
    return float(np.asarray(both).sum())


def renamed(x):
    df = pd.DataFrame({"A": x, "B": x * 3.0})
    df.columns = [c.lower() for c in df.columns]
    return float((df["a"] * df["b"]).sum())


def integer_keys(x):
    df = pd.DataFrame({"origin": [2016, 2016, 2017], "paid": x})
    keys = df["origin"].unique()
    return float(df["paid"].sum() * len(keys) + df["paid"].iloc[-1])


def string_keys(x):
    df = pd.DataFrame({"origin": ["a", "a", "b"], "paid": x})
    keys = df["origin"].unique()
    return float(df["paid"].sum() * len(keys))


def scalar_string_column(x):
    df = pd.DataFrame({"a": x, "s": "M"}, index=["2023-100", "2023-101", "2023-102"])
    return float((df["a"] ** 2).to_numpy().sum())


@pytest.mark.parametrize("f", [concat, renamed, integer_keys, string_keys, scalar_string_column],
                         ids=lambda f: f.__name__)
def test_right(f):
    got = gradient(f, X)[0]
    want = fd_gradient(f, X)[0]
    assert np.allclose(got, want, rtol=1e-7, atol=1e-9), (got, want)


def test_float_keys_still_values():
    """A hash table of floats stays a value that may carry a derivative: unique floats are values."""
    def f(x):
        return float(np.sum(pd.Series(x).unique() ** 2))

    try:
        got = gradient(f, X)[0]
    except Exception as e:  # (refused: a clear error, never a number)
        from overdub.errors import OverdubError
        assert isinstance(e, OverdubError), e
        return
    assert np.allclose(got, fd_gradient(f, X)[0], rtol=1e-7)


def series_of_scalars(x):
    """`pd.Series([x0, nan, x2])`: pandas' `maybe_convert_objects` of an object array of floats (pyfao56,
    hrv-analysis): its float64 array built as the engines follow it."""
    s = pd.Series([x[0] * 2.0, np.nan, x[2], 3])
    return float(s.interpolate().sum() + s.fillna(0.0).to_numpy() @ np.array([1.0, 2.0, 3.0, 4.0]))


def test_series_of_scalars_right_in_both_modes():
    from contexts import jvp
    want = fd_gradient(series_of_scalars, X)[0]
    assert np.allclose(gradient(series_of_scalars, X)[0], want, rtol=1e-7)
    t = np.array([1.0, -2.0, 0.5])
    assert jvp(series_of_scalars, (X,), (t,))[1] == pytest.approx(float(want @ t), rel=1e-7)


def test_convert_objects_stand_in_is_pandas_own():
    from pandas._libs import lib

    from contexts.rules.pandas import maybe_convert_objects
    for values in ([1.5, np.nan, 2.0], [1, 2.5, 3], [np.float64(1.0), 2.0], ["a", "b"], [1, 2], [None, "a"],
                   [True, False]):
        objects = np.empty(len(values), dtype=object)
        objects[:] = values
        want, got = lib.maybe_convert_objects(objects), maybe_convert_objects(objects)
        assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=got.dtype.kind == "f"), values
