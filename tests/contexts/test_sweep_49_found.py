"""Cases found in session 49 on packages new to the project (each minimised from the package's code), checked
against finite differences."""

import math

import numpy as np
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


# -- a rule's unknown cotangent (eigh at repeated eigenvalues) for a list display of constants: dropped with
# them (benchmark_functions' PitsAndHoles: scipy's multivariate_normal with an isotropic covariance given as a
# list, refused in reverse mode); a differentiated item among them is still refused --

def _isotropic_pdf(x):
    from scipy.stats import multivariate_normal
    return multivariate_normal.pdf(x, mean=[0, 0], cov=[[10.5, 0], [0, 10.5]])


def _isotropic_in_t(t):
    from scipy.stats import multivariate_normal
    return multivariate_normal.pdf([3.0, -7.0], mean=[0, 0], cov=[[t, 0], [0, t]])


def test_an_unknown_cotangent_for_constants_in_a_list_is_dropped_with_them():
    import numpy as np
    from tests import fd
    x = np.array([3.0, -7.0])
    assert np.allclose(gradient(_isotropic_pdf, x)[0], fd.gradient(_isotropic_pdf, x)[0], rtol=1e-6, atol=1e-12)
    from contexts.rules.registry import NoDerivative
    with pytest.raises(NoDerivative, match="repeated eigenvalues"):
        gradient(_isotropic_in_t, 10.5)


# -- hmf: a metaclass's `__call__` making the object by `type.__call__(cls, ...)` (NoRuleError in reverse mode;
# a first fix handed the argument's cotangent to the class's position: 0 for 6) --

class _Validating(type):
    def __call__(cls, *args, **kwargs):
        obj = type.__call__(cls, *args, **kwargs)
        obj.validate()
        return obj


class _Model(metaclass=_Validating):
    def __init__(self, s, scale=1.0):
        self.s = s * s * scale

    def validate(self):
        self.ok = self.s > 0


def _by_metaclass(s):
    return _Model(s).s * 2.0 + _Model(0.5, scale=s).s


def test_a_metaclass_call_through_type_call():
    assert_scalar_modes(_by_metaclass, 1.5)


# -- ahrs: a package's data file read in a method of an object holding a derivative (its name a class attribute
# read through the object): reverse mode transformed the standard library down to frozen importlib, NoSource --

class _WithData:
    package, name = "json", "__init__.py"

    def field(self, lat):
        import pkgutil
        self.lat = lat
        size = len(pkgutil.get_data(self.package, self.name))
        return self.lat * 2.0 + math.sin(self.lat) + size * 0.0


def _reads_package_data(lat):
    return _WithData().field(lat)


def test_package_data_read_through_an_object_holding_a_derivative():
    assert_scalar_modes(_reads_package_data, 0.7)


# -- reliability: np.nan_to_num(a, copy=False) of a differentiated array. Forward mode refused it (and so reverse
# mode's check of `self.gamma != 0`, which asks forward mode); reverse mode, with a NaN replaced, sent the
# constant's cotangent on to the NaN's inputs (-25.0 for 8.4, silently): refused there now --

def _in_place_finite(x):
    a = np.array([x, 2.0 * x])
    np.nan_to_num(a, copy=False, nan=0.0)
    return float(a.sum())


class _Shifted:
    def __init__(self, alpha, gamma=0):
        self.alpha, self.gamma = float(alpha), float(gamma)
        self.title = "shifted" if self.gamma != 0 else "plain"  # (a constant compared with 0: a label)


def _constant_compared(x):
    d = _Shifted(x)
    a = np.array([d.alpha, 2.0 * d.alpha * d.alpha])
    np.nan_to_num(a, copy=False, nan=0.0)
    return float(a.sum())


def _in_place_nan(x):
    with np.errstate(invalid="ignore"):
        a = np.array([x, 2.0 * x, np.log(x - 1.0), x * x])
    np.nan_to_num(a, copy=False, nan=5.0)
    return float((a * a).sum())


@pytest.mark.parametrize("f", [_in_place_finite, _constant_compared])
def test_nan_to_num_in_place(f):
    assert_scalar_modes(f, 0.3, second=False)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_nan_to_num_in_place_over_a_nan_forward_right_reverse_refused():
    from contexts.rules.registry import MissingRule
    from tests.modes import assert_refused_in_reverse
    assert_refused_in_reverse(_in_place_nan, 0.7, MissingRule, match="copy=False")


# -- oceans' lanc filter: a slice `wt[1:n]` whose bound the analysis takes for active (`n += 1` of a parameter):
# forward mode's twin gave up, and the duals refused the store into a plain array --

def _lanczos_like(haf, n=3):
    n += 1
    wt = np.cos(np.arange(n) * 1.0)
    wt[1:n] = wt[1:n] * np.sin(haf * np.arange(1, n))
    return float(np.sum(wt[: n - 1]) + np.sum(wt[1:n:2]))


def test_a_slice_bound_taken_for_active():
    assert_scalar_modes(_lanczos_like, 0.13, second=False)
