"""Dates, times and durations in differentiated code (pyorbital's astronomy: a datetime turned into
numpy datetime64, days since an epoch as `delta / np.timedelta64(1, "D")`): they carry no derivative
(integer counts of a unit), so a C function given them is no refusal, and the division of two durations
sends no cotangent back to them. Both modes, against central differences."""

import datetime

import numpy as np
import pytest

from contexts import derivative, gradient
from tests import fd

T = datetime.datetime(2024, 6, 1, 10, 30)


def days_since(t):
    return (np.datetime64(t) - np.datetime64("2000-01-01T12:00")) / np.timedelta64(1, "D")


def _hour_angle(t, lon):  # (the time passed along with the differentiated value, as pyorbital's are)
    d = days_since(t)
    return np.sin(np.deg2rad(lon) + 0.985647 * d) * lon


def hour_angle(lon):
    return _hour_angle(T, lon)


def _shifted(x, t, dt):
    return x * (dt / datetime.timedelta(hours=1)) + np.cos(x * days_since(t + dt) / 1e4)


def with_timedelta(x):
    return _shifted(x, T, datetime.timedelta(hours=3))


@pytest.mark.parametrize("f", [hour_angle, with_timedelta], ids=lambda f: f.__name__)
def test_reverse(f):
    np.testing.assert_allclose(gradient(f, 0.7)[0], fd.gradient(f, 0.7)[0], rtol=1e-6)


@pytest.mark.parametrize("f", [hour_angle, with_timedelta], ids=lambda f: f.__name__)
def test_forward(f):
    np.testing.assert_allclose(derivative(f, 0.7), fd.gradient(f, 0.7)[0], rtol=1e-6)
