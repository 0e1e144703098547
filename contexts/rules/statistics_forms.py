"""Python's `statistics` functions that compute exactly (through `float.as_integer_ratio` and `Fraction`:
`statistics._sum`, `_ss`, `_convert`) written as float arithmetic the engines differentiate (`Rule.stand_in`).

An exact ratio of a differentiated float has no derivative, so every engine refused `statistics.mean(xs)`,
`variance`, `stdev`, `pvariance`, `pstdev`, `harmonic_mean` and `NormalDist.from_samples` on differentiated
data. The forms below compute the same values in floating point, to ~1e-15 relative:

- sums by `math.fsum` (correctly rounded, as the exact sum converted once is);
- variances in two passes: the mean first, then the squared deviations, less the correction
  `sum(d)**2 / n` (zero in exact arithmetic; it takes out the rounding of the mean) — the form `_ss` had
  before it was made exact; with `xbar`/`mu` given, the squared deviations from it alone, as `_ss` does;
- the same errors and messages (StatisticsError for too few points or negative values, TypeError for
  types `statistics` cannot coerce), iterators drawn once, non-finite data giving what `statistics` gives.

Exact types stay exact: each call looks at its items, and only where every item (and `xbar`/`mu`, and
harmonic_mean's weights) is an int, a float, a numpy float or a forward-mode dual, and at least one is not
an int, does it take the float form; otherwise (Fractions, Decimals, all ints, anything else) it runs the
original function's own code (a copy of the function: the registered original would call its stand-in).

`geometric_mean`, `covariance`, `correlation`, `linear_regression` and `fmean` are not here: they compute
in floats already (`math.fsum`, `math.sumprod`, `math.log`), and every engine differentiates their code.
"""

from __future__ import annotations

import math
import statistics
import types
from functools import reduce
from math import fsum, isfinite, sqrt

import numpy as np

from .numpy._util import is_dual
from . import generic as _g
from .registry import registry
from .sparsity_specs import elementwise_spec

__all__ = ["mean", "variance", "stdev", "pvariance", "pstdev", "harmonic_mean", "from_samples"]

StatisticsError = statistics.StatisticsError
_coerce = statistics._coerce  # (the module's own type coercion: the same result type, the same TypeError)


def _original(fn):
    """fn's code as another function object: no rule is registered on it, so an engine runs it as code."""
    g = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    g.__kwdefaults__ = fn.__kwdefaults__
    g.__qualname__ = fn.__qualname__
    g.__module__ = fn.__module__
    g.__doc__ = fn.__doc__
    return g


_mean = _original(statistics.mean)
_variance = _original(statistics.variance)
_stdev = _original(statistics.stdev)
_pvariance = _original(statistics.pvariance)
_pstdev = _original(statistics.pstdev)
_harmonic_mean = _original(statistics.harmonic_mean)
_from_samples = _original(statistics.NormalDist.from_samples.__func__)


# -- which form: the items' types ------------------------------------------------------------------------

def _kind(x) -> int:
    """0: an int (exact), 1: a float (the float form), 2: anything else (the original, exact code)."""
    t = type(x)
    if t is float:
        return 1
    if t is int:
        return 0
    if is_dual(x) or isinstance(x, np.floating):
        return 1
    return 2


def _floats(*groups) -> bool:
    """Whether a call on these groups of values takes the float form: every value an int, a float, a numpy
    float or a dual, and one at least not an int."""
    found = False
    for group in groups:
        for x in group:
            k = _kind(x)
            if k == 2:
                return False
            if k == 1:
                found = True
    return found


def _value_type(x) -> type:
    """The type `statistics` sees for x: a dual's is its value's."""
    while is_dual(x):
        x = x.primal
    return type(x)


def _result_type(items) -> type:
    """`statistics._sum`'s T: the items' types coerced (a TypeError where statistics raises one)."""
    return reduce(_coerce, {_value_type(x) for x in items}, int)


def _as(value, T):
    """`statistics._convert` of a float result to T (float, or a numpy float type): by a product with T's
    one, exact, which keeps a dual a dual and a recorded value recorded (`T(value)` would convert them)."""
    if T is float or T is int:
        return value
    return value * T(1)


_NARROW = (np.float16, np.float32)  # (computed in float64, as statistics' exact sums are: `x - c` stayed narrow)


def _widened(data) -> list:
    return [float(x) if type(x) in _NARROW else x for x in data]


def _not_finite(items) -> list:
    return [x for x in items if not isfinite(x)]


def _sum(items, n):
    """The sum of finite floats, correctly rounded; where it overflows although the mean does not
    (`[1e308, 1e308]`), (the sum of items / n, True)."""
    try:
        return fsum(items), False
    except OverflowError:
        return fsum([x / n for x in items]), True


def _ss_type(data, c):
    """`statistics._ss`'s T: the squared deviations' types where c is given, else the data's. (Kept apart from
    the values, never returned beside them: forward mode's tangent twin, running a function through duals,
    crashed on a numpy type among its results: REPORT.md, repro_type_result.py.)"""
    if c is not None:
        return _result_type([(d := x - c) * d for x in data])
    return _result_type(data)


def _ss(data, c, n):
    """(sum of squared deviations, mean) of float data, as `statistics._ss` gives them."""
    if c is not None:  # deviations from the given centre alone, as `_ss(data, c)` does
        squares = _widened([(d := x - c) * d for x in data])
        bad = _not_finite(squares)
        if bad:
            return sum(bad), c
        return fsum(squares), c
    if not n:
        return 0.0, 0.0
    data = _widened(data)
    bad = _not_finite(data)
    if bad:  # (statistics: the sum of the non-finite items is both the mean and the sum of squares)
        s = sum(bad)
        return s, s
    total, divided = _sum(data, n)
    c = total if divided else total / n
    deviations = [x - c for x in data]
    ss = fsum([d * d for d in deviations]) - fsum(deviations) ** 2 / n
    if ss < 0.0:  # (constant data: the two sums may differ by a rounding)
        ss = 0.0
    return ss, c


def _no_numerator():
    # statistics' stdev of non-finite data reads `.numerator` of the float it got: an AttributeError
    return AttributeError("'float' object has no attribute 'numerator'")


# -- the stand-ins ---------------------------------------------------------------------------------------

def mean(data):
    """`statistics.mean` (see the module's docstring)."""
    data = list(data)
    if not _floats(data):
        return _mean(data)
    T = _result_type(data)
    n = len(data)
    bad = _not_finite(data)
    if bad:
        return _as(sum(bad) / n, T)
    total, divided = _sum(data, n)
    return _as(total if divided else total / n, T)


def _spread(name, original, data, centre, ddof: int, root: bool):
    """variance (ddof 1) or pvariance (ddof 0), or their square roots (stdev, pstdev), of data about centre
    (its mean where None), as `statistics` gives them; the original's exact code for other data."""
    data = list(data)
    if not _floats(data, () if centre is None else (centre,)):
        return original(data, centre)
    n = len(data)
    T = _ss_type(data, centre)
    ss, _ = _ss(data, centre, n)
    if n < 1 + ddof:
        raise StatisticsError(f"{name} requires at least {'two data points' if ddof else 'one data point'}")
    if not root:
        return _as(ss / (n - ddof), T)
    if not isfinite(ss):
        raise _no_numerator()
    return sqrt(ss / (n - ddof))  # (a float, as statistics returns for floats)


def variance(data, xbar=None):
    """`statistics.variance` (see the module's docstring)."""
    return _spread("variance", _variance, data, xbar, 1, False)


def pvariance(data, mu=None):
    """`statistics.pvariance` (see the module's docstring)."""
    return _spread("pvariance", _pvariance, data, mu, 0, False)


def stdev(data, xbar=None):
    """`statistics.stdev` (see the module's docstring)."""
    return _spread("stdev", _stdev, data, xbar, 1, True)


def pstdev(data, mu=None):
    """`statistics.pstdev` (see the module's docstring)."""
    return _spread("pstdev", _pstdev, data, mu, 0, True)


def harmonic_mean(data, weights=None):
    """`statistics.harmonic_mean` (see the module's docstring)."""
    if iter(data) is data:
        data = list(data)
    if weights is not None and iter(weights) is weights:
        weights = list(weights)
    if not _floats(data, () if weights is None else weights):
        return _harmonic_mean(data, weights)
    errmsg = 'harmonic mean does not support negative values'
    n = len(data)
    if n < 1:
        raise StatisticsError('harmonic_mean requires at least one data point')
    elif n == 1 and weights is None:
        x = data[0]
        if x < 0:
            raise StatisticsError(errmsg)
        return x
    if weights is None:
        weights = [1] * n
        sum_weights = n
    else:
        if len(weights) != n:
            raise StatisticsError('Number of weights does not match data size')
        for w in weights:
            if w < 0:
                raise StatisticsError(errmsg)
        bad = _not_finite(weights)
        sum_weights = sum(bad) if bad else fsum(weights)
    terms = []
    for w, x in zip(weights, data):
        if x < 0:
            raise StatisticsError(errmsg)
        if w:
            if x == 0:  # (statistics: a ZeroDivisionError, answered 0)
                return 0
            terms.append(w / x)
        else:
            terms.append(0)
    T = _result_type(terms)
    bad = _not_finite(terms)
    total = sum(bad) if bad else fsum(terms)
    if total <= 0:
        raise StatisticsError('Weighted sum must be positive')
    return _as(sum_weights / total, T)


def from_samples(cls, data):
    """`statistics.NormalDist.from_samples` (a classmethod: registered on its function, it gets the class
    first): `cls(mean, stdev)` of the data, as `statistics._mean_stdev` computes them."""
    data = list(data)
    if not _floats(data):
        return _from_samples(cls, data)
    n = len(data)
    _ss_type(data, None)  # (statistics' TypeError for types it cannot coerce)
    ss, xbar = _ss(data, None, n)
    if n < 2:
        raise StatisticsError('stdev requires at least two data points')
    if not isfinite(ss):  # (statistics: the AttributeError of `.numerator`, answered so)
        return cls(xbar, xbar / ss)
    return cls(xbar, sqrt(ss / (n - 1)))


STAND_INS = {
    statistics.mean: mean,
    statistics.variance: variance,
    statistics.stdev: stdev,
    statistics.pvariance: pvariance,
    statistics.pstdev: pstdev,
    statistics.harmonic_mean: harmonic_mean,
    statistics.NormalDist.from_samples.__func__: from_samples,  # (the classmethod's function: cls first)
}


for _fn, _form in STAND_INS.items():
    registry.set(_fn, stand_in=_form)


# -- NormalDist.inv_cdf's C kernel, `_statistics._normal_dist_inv_cdf(p, mu, sigma)` = mu + sigma * z(p) --
# (refused as a C function without a rule: `NormalDist(t, 1.5).inv_cdf(0.3)`)

_SQRT_2PI = math.sqrt(2.0 * math.pi)


def _inv_cdf_dp(y, p, mu, sigma):
    z = (y - mu) / sigma  # (1 / the density at y)
    return sigma * _SQRT_2PI * _g.exp(z * z / 2)


def _inv_cdf_dmu(y, p, mu, sigma):
    return 1.0


def _inv_cdf_dsigma(y, p, mu, sigma):
    return (y - mu) / sigma


try:
    from _statistics import _normal_dist_inv_cdf
except ImportError:  # (a Python without the C module computes it in Python, which the engines follow)
    pass
else:
    registry.elementwise(_normal_dist_inv_cdf, _inv_cdf_dp, _inv_cdf_dmu, _inv_cdf_dsigma,
                         name="_normal_dist_inv_cdf")
    registry.sparsity(elementwise_spec((_inv_cdf_dp, _inv_cdf_dmu, _inv_cdf_dsigma)), _normal_dist_inv_cdf)
