"""Cases found in session 49 on packages new to the project (each minimised from the package's code), checked
against finite differences."""

import math

import pytest

from contexts import derivative, gradient
from contexts.lowered.runtime import TextRoundTrip
from tests.modes import assert_scalar_modes


# -- geomdl: a curve whose control points hold the derivative, given a constant knot vector that its setter
# normalises through text (`float("{:.18f}".format(k / last))`), to a precision read from the curve --

def _knots(n):
    return [0.0] * 3 + [float(i) for i in range(1, n - 2)] + [float(n - 2)] * 3


def _check(degree, knots, count):
    if len(knots) != degree + count + 1:
        return False
    prev = knots[0]  # (the knots, aliased by a local name only compared: the list is only read)
    for k in knots:
        if prev > k:
            return False
        prev = k
    return True


def _normalise(knots, decimals=18):
    first, last = float(knots[0]), float(knots[-1])
    return [float(("{:." + str(decimals) + "f}").format((float(k) - first) / (last - first))) for k in knots]


class _Curve:
    def __init__(self):
        self.degree = 2
        self.precision = 18
        self.normalised = True
        self._points = []
        self._knots = [None]

    @property
    def points(self):
        return self._points

    @points.setter
    def points(self, value):
        self._points = value

    @property
    def knots(self):
        return self._knots[0]

    @knots.setter
    def knots(self, value):
        if not _check(self.degree, value, len(self._points)):
            raise ValueError("not a knot vector")
        self._knots[0] = _normalise(value, decimals=self.precision) if self.normalised else value

    def at(self, u):
        k = self._knots[0]  # a quadratic B-spline by de Boor's recursion
        span = next(i for i in range(2, len(k) - 3) if k[i] <= u < k[i + 1])
        d = [list(self._points[j]) for j in range(span - 2, span + 1)]
        for r in range(1, 3):
            for j in range(2, r - 1, -1):
                a = (u - k[j + span - 2]) / (k[j + 1 + span - r] - k[j + span - 2])
                d[j] = [(1.0 - a) * p + a * q for p, q in zip(d[j - 1], d[j])]
        return d[2]


def _curve_point(t):
    c = _Curve()
    c.points = [[0.0, 0.0], [t, 1.0 + t * t], [2.0, math.sin(t)], [3.0, 0.5]]
    c.knots = _knots(4)  # (a constant where it is stored, though the analysis, one set for the whole
    p = c.at(0.4)        # function, takes it for differentiated: the curve holds a derivative)
    return p[0] * p[1]


def test_a_constant_stored_through_a_setter_of_an_object_holding_a_derivative():
    """geomdl's `curve.knotvector = utilities.generate_knot_vector(2, 4)` after `curve.ctrlpts = pts`: the
    setter ran with the knot vector taken for differentiated, and its normalisation through text was refused."""
    assert_scalar_modes(_curve_point, 0.7, second=False)


def _stored_late(t):
    c = _Curve()
    c.points = [[0.0, 0.0], [t, 1.0], [2.0, t * t], [3.0, 0.5]]
    kv = _knots(4)
    kv[4] = kv[4] + 0.0 * t  # (differentiated before it is stored: refused, not taken for a constant)
    c.knots = kv
    return c.at(0.6)[1]


def test_a_knot_vector_holding_a_derivative_is_refused_not_taken_for_a_constant():
    with pytest.raises(TextRoundTrip):
        gradient(_stored_late, 0.7)
    with pytest.raises(TextRoundTrip):
        derivative(_stored_late, 0.7)


# -- statistics.NormalDist.inv_cdf: its C kernel had no rule (refused in every mode) --

def _inverse_cdf(t):
    import statistics
    return statistics.NormalDist(t, 1.5 * t).inv_cdf(0.3) + statistics.NormalDist(0.2, 2.0).inv_cdf(t / 2)


def test_normal_dist_inverse_cdf():
    assert_scalar_modes(_inverse_cdf, 0.7)
