"""Python's `statistics` functions that compute exactly (`statistics._sum`/`_ss` through `as_integer_ratio` and
Fraction: mean, variance, stdev, pvariance, pstdev, harmonic_mean, NormalDist.from_samples) run as their float
forms (`contexts.rules.statistics_forms`, `Rule.stand_in`) on differentiated data, in every mode, against
central differences; exact data (Fractions, Decimals, ints) keep statistics' own exact results and errors.
"""

import math
import statistics as st
from decimal import Decimal
from fractions import Fraction as F

import numpy as np
import pytest

from contexts import ADContext, ForwardContext, derivative, gradient, hessian, jacfwd
from tests import fd
from tests.modes import MODES, assert_right_or_refused, assert_scalar_modes, gradient_in


def _data(a, b, c):
    return [a, 2.0 * b + 0.3, a * c, 1.7, b - c * c]


CASES = {
    "mean": lambda a, b, c: st.mean(_data(a, b, c)),
    "mean(gen)": lambda a, b, c: st.mean(x for x in _data(a, b, c)),
    "mean(np.array)": lambda a, b, c: st.mean(np.array(_data(a, b, c))),
    "variance": lambda a, b, c: st.variance(_data(a, b, c)),
    "variance(tuple, xbar)": lambda a, b, c: st.variance(tuple(_data(a, b, c)), a),
    "variance(xbar=mean)": lambda a, b, c: st.variance(_data(a, b, c), st.mean(_data(a, b, c))),
    "stdev": lambda a, b, c: st.stdev(_data(a, b, c)),
    "stdev(gen, xbar)": lambda a, b, c: st.stdev((x for x in _data(a, b, c)), xbar=1.1),
    "pvariance": lambda a, b, c: st.pvariance(_data(a, b, c)),
    "pvariance(mu)": lambda a, b, c: st.pvariance(_data(a, b, c), mu=b),
    "pstdev": lambda a, b, c: st.pstdev(np.array(_data(a, b, c))),
    "pstdev(mu)": lambda a, b, c: st.pstdev(_data(a, b, c), c),
    "harmonic_mean": lambda a, b, c: st.harmonic_mean(_data(a, b, c)),
    "harmonic_mean(weights)": lambda a, b, c: st.harmonic_mean(_data(a, b, c), weights=[b, 1.0, 2, c, 0.5]),
    "harmonic_mean(one)": lambda a, b, c: st.harmonic_mean([a * b]),
    "mixed ints": lambda a, b, c: st.variance([a, 2, b * c, 3]) + st.mean([1, a, 4]),
    "from_samples": lambda a, b, c: st.NormalDist.from_samples(_data(a, b, c)).stdev * a,
    "from_samples(gen).cdf": lambda a, b, c: st.NormalDist.from_samples(x for x in _data(a, b, c)).cdf(1.2),
    # (these compute in floats already: their own code, differentiated)
    "geometric_mean": lambda a, b, c: st.geometric_mean(_data(a, b, c)),
    "covariance": lambda a, b, c: st.covariance(_data(a, b, c), [1.0, a, 0.5, c, 2.0]),
    "correlation": lambda a, b, c: st.correlation(_data(a, b, c), [1.0, a, 0.5, c, 2.0]),
    "linear_regression": lambda a, b, c: st.linear_regression(_data(a, b, c), [1.0, a, 0.5, c, 2.0]).slope,
}
P = (1.3, 0.7, 0.45)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(CASES))
def test_statistics_gradient(name, mode):
    f = CASES[name]
    with ADContext():
        got = gradient_in(mode, f, *P)
    np.testing.assert_allclose(np.array(got, float), np.array(fd.gradient(f, *P), float), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", list(CASES))
def test_statistics_forward_on_duals(name):
    """The dual-number forward context (taken where the tangent twin cannot go, and under an outer
    ForwardContext): the stand-ins of functions given a list of duals."""
    f = CASES[name]
    with ForwardContext():
        got = derivative(lambda t: f(P[0] + t, P[1], P[2]), 0.0)
    want = fd.derivative(lambda t: f(P[0] + t, P[1], P[2]), 0.0)
    assert abs(got - want) <= 1e-6 * abs(want) + 1e-9, (got, want)


@pytest.mark.parametrize("name", list(CASES))
def test_statistics_scalar_modes_and_hessian(name):
    f = CASES[name]
    assert_scalar_modes(lambda t: f(t, P[1], P[2]), P[0])


@pytest.mark.parametrize("name", ["variance", "stdev(gen, xbar)", "from_samples", "harmonic_mean(weights)"])
def test_statistics_array_input(name):
    f = CASES[name]
    x = np.array(P)
    want = fd.gradient(lambda v: f(*v), x)[0]
    np.testing.assert_allclose(jacfwd(lambda v: f(v[0], v[1], v[2]), x), want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(gradient(lambda v: f(v[0], v[1], v[2]), x)[0], want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(hessian(lambda v: f(v[0], v[1], v[2]), x),
                               fd.jacobian(lambda u: gradient(lambda v: f(v[0], v[1], v[2]), u)[0], x),
                               rtol=1e-5, atol=1e-6)


# -- exact types and errors: what statistics itself gives -------------------------------------------------------

FUNCTIONS = [st.mean, st.variance, st.stdev, st.pvariance, st.pstdev, st.harmonic_mean]
DATA = [[F(1, 3), F(5, 7), F(2, 9)], [Decimal("1.25"), Decimal("0.5"), Decimal("3.125")], [1, 2, 4],
        [1.5, 2.5, 4.0], [1e8 + 1e-3, 1e8 - 2e-3, 1e8 + 5e-4], np.array([1.5, 2.5, 4.0], np.float32),
        [1.5, np.float32(2.5)], [1.5, Decimal("2.5")], [], [2.5], ["a", "b"], [1.0, math.inf], [1.0, math.nan],
        [1e308, 1e308], [2.0, -3.0], [2.0, 0.0], [0.1, 0.1, 0.1]]


def _outcome(run):
    try:
        y = run()
    except Exception as e:
        return type(e), str(e)
    return type(y), y


def _same(a, b):
    (ta, a), (tb, b) = a, b
    if ta is not tb:
        return False
    if isinstance(a, float) and (math.isnan(a) or math.isinf(a) or a == 0):
        return repr(a) == repr(b)
    if isinstance(a, float):
        return abs(a - b) <= 1e-12 * abs(a)
    return a == b


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda fn: fn.__name__)
@pytest.mark.parametrize("data", DATA, ids=range(len(DATA)))
def test_statistics_values_types_and_errors(fn, data):
    """A differentiated call returns statistics' own value (exact for Fractions, Decimals, ints), type and errors:
    the derivative is taken of a function returning it, so the forms' value is what the user gets."""
    from contexts.rules import statistics_forms as forms
    own = getattr(forms, fn.__name__)
    want = _outcome(lambda: fn(list(data)))
    assert _same(want, _outcome(lambda: own(iter(list(data))))), (want,)


def test_statistics_exact_in_exact_out():
    fr = [F(1, 3), F(5, 7), F(2, 9)]
    with ADContext():
        got = gradient(lambda a: float(st.variance(fr)) * a, 2.0)[0]
    assert got == float(st.variance(fr))
    from contexts.rules import statistics_forms as forms
    assert forms.variance(fr) == st.variance(fr) and type(forms.variance(fr)) is F
    assert forms.mean(fr) == st.mean(fr) and forms.pvariance(fr, F(1, 2)) == st.pvariance(fr, F(1, 2))
    assert forms.from_samples(st.NormalDist, fr) == st.NormalDist.from_samples(fr)


@pytest.mark.parametrize("mode", MODES)
def test_statistics_refusals_stay_refusals(mode):
    """Fractions beside a differentiated float are the original's code: refused, as before (no float form)."""
    assert assert_right_or_refused(mode, lambda a: st.mean([a, F(1, 3)]), 1.3)


@pytest.mark.parametrize("fn, args, match", [
    (st.mean, ([],), "at least one"), (st.variance, ([1.0],), "at least two"), (st.stdev, ([1.0],), "at least two"),
    (st.pvariance, ([],), "at least one"), (st.harmonic_mean, ([1.0, -2.0],), "negative"),
    (st.NormalDist.from_samples, ([1.0],), "at least two"),
])
def test_statistics_errors_under_differentiation(fn, args, match):
    with ADContext(), pytest.raises(st.StatisticsError, match=match):
        gradient(lambda a: fn(*[[a * x for x in d] for d in args]), 1.0)


def test_statistics_subclass_from_samples():
    class ND(st.NormalDist):
        pass
    f = lambda a: ND.from_samples([a, 2.0, 3.5]).stdev
    with ADContext():
        assert abs(gradient(f, 1.0)[0] - fd.derivative(f, 1.0)) < 1e-7
