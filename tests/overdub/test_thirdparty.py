"""Third-party code runs unchanged under a context, with identical results, and the context sees inside."""

import colorsys
import statistics

import numpy as np
import pytest

import overdub

from ._helpers import Recorder, calls


@pytest.mark.parametrize("intercepts", [("call",), overdub.KINDS])
def test_colorsys_rgb_to_hsv(intercepts):
    rec = Recorder(intercepts)
    pixels = [(0.2, 0.5, 0.9), (0.9, 0.1, 0.1), (0.3, 0.3, 0.3), (0.0, 1.0, 0.5)]
    assert [rec.run(colorsys.rgb_to_hsv, *p) for p in pixels] == [colorsys.rgb_to_hsv(*p) for p in pixels]
    assert calls(rec.ops)[:2] == ["max", "min"]  # the calls inside rgb_to_hsv
    assert all(s.filename == colorsys.__file__ for s in rec.sites)


def test_statistics_median():
    rec = Recorder(["call"])
    data = [5, 1, 4, 2, 3, 9]
    assert rec.run(statistics.median, data) == statistics.median(data) == 3.5
    assert "sorted" in calls(rec.ops) and "len" in calls(rec.ops)
    assert {s.function for s in rec.sites} >= {"median"}


def test_numpy_linalg_norm():
    rec = Recorder(["call"])
    x = np.array([[3.0, -4.0], [1.0, 2.0]])
    for args in [(x,), (x, 1), (x[0],), (x, "fro")]:
        assert np.array_equal(rec.run(np.linalg.norm, *args), np.linalg.norm(*args))
    assert "asarray" in calls(rec.ops)
    assert any(s.function == "norm" for s in rec.sites)


def test_numpy_polyval():
    rec = Recorder(["call", "binop"])
    p, x = [3.0, 0.0, 1.0], np.linspace(-1, 1, 5)
    assert np.array_equal(rec.run(np.polyval, p, x), np.polyval(p, x))
    assert ("binop", "*") in rec.ops and ("binop", "+") in rec.ops
    assert any(s.function == "polyval" for s in rec.sites)
