"""Dates, periods and date offsets beside a differentiated column (chainladder's triangles: origin and
development dates in the frame that holds the losses). A Series of periods was taken for a value that may carry
a derivative: the test of activity went round the frame's flags (a weak reference back to the frame) and
through the period array's cache past its depth limit. Flags and date offsets carry none, pandas' kernels of
dates' fields (`dt.year`, `round`) are non-differentiable, and a registered constant found at the depth limit
is one."""

import numpy as np
import pandas as pd
import pytest

from contexts import gradient, jacobian
from tests.fd import gradient as fd_gradient, jacobian as fd_jacobian

YEARS = [2016, 2017, 2018]
X = np.array([1.0, 2.5, 3.0])


def by_period(v):
    frame = pd.DataFrame({"origin": YEARS, "paid": v})
    periods = pd.to_datetime(frame["origin"].astype(str)).dt.to_period("Y")
    years = pd.Series(periods).dt.year.to_numpy()
    return frame["paid"].to_numpy() * (years - 2015)


def by_rounded_dates(v):
    dates = pd.Series(pd.to_datetime(["2016-01-01 10:00", "2017-03-01 13:00", "2018-06-01 00:30"]))
    hours = dates.dt.round("h").dt.hour.to_numpy()
    return float(np.sum(v ** 2 * (hours + 1)))


def by_offsets(v):
    index = pd.date_range("2016-01-31", periods=3, freq=pd.offsets.MonthEnd())
    s = pd.Series(v, index=index)
    return float((s * s.index.month).sum())


@pytest.mark.one_mode
def test_periods_beside_a_differentiated_column():
    np.testing.assert_allclose(jacobian(by_period, X, mode="reverse"), fd_jacobian(by_period, X), rtol=1e-8)
    np.testing.assert_allclose(jacobian(by_period, X, mode="reverse"), np.diag([1.0, 2.0, 3.0]), rtol=1e-12)


@pytest.mark.one_mode
def test_rounded_dates_fields():
    (g,) = gradient(by_rounded_dates, X)
    np.testing.assert_allclose(g, fd_gradient(by_rounded_dates, X)[0], rtol=1e-8)
    np.testing.assert_allclose(g, 2 * X * np.array([11.0, 14.0, 1.0]), rtol=1e-12)


@pytest.mark.one_mode
def test_a_month_end_index():
    (g,) = gradient(by_offsets, X)
    np.testing.assert_allclose(g, fd_gradient(by_offsets, X)[0], rtol=1e-8)
    np.testing.assert_allclose(g, [1.0, 2.0, 3.0], rtol=1e-12)  # (linear: the months)


def test_a_date_made_from_a_differentiated_float_is_refused_or_right():
    from overdub.errors import OverdubError

    def f(t):
        stamp = pd.to_datetime(t * 86400.0, unit="s")
        return float((stamp - pd.Timestamp(0)).total_seconds()) / 86400.0 * 3.0

    try:
        (g,) = gradient(f, 1.25)
    except OverdubError:
        return
    np.testing.assert_allclose(g, 3.0, rtol=1e-9)  # (a date carries its float's derivative, or is refused)
