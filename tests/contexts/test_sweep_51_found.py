"""Silent wrong derivatives found in session 51, each reduced to its pattern and checked against central
differences or for a clear refusal."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import odeint

from contexts import derivative, gradient
from overdub.errors import OverdubError
from tests.fd import derivative as fd_derivative

T = np.linspace(0.0, 2.0, 5)


def _closure_switch(a):
    """odeint's right side compares a numpy number (the state's entry) with a value it closes over, the
    only way the value reaches the solution: forward mode took the comparison for the engines' own (the
    core's operator dispatch frame), so the switch along the solution went unseen and the tangent was 0
    for about 0.5."""
    def f(y, s):
        return [1.0 if y[0] < a else 0.5]
    return odeint(f, [0.0], T)[-1, 0]


def _closure_switch_array(a):
    def f(y, s):
        return np.where(y < a, 1.0, 0.5)
    return odeint(f, [0.0], T)[-1, 0]


@pytest.mark.parametrize("loss", [_closure_switch, _closure_switch_array])
@pytest.mark.parametrize("mode", [derivative, gradient])
def test_odeint_switch_on_a_closed_over_value_is_refused(loss, mode):
    assert 0.3 < fd_derivative(loss, 1.0) < 0.7  # (about 0.5, the value it would have to give: not 0)
    with pytest.raises(OverdubError, match="switches|branch"):
        mode(loss, 1.0)


def _smooth_closure(a):
    def f(y, s):
        return [-a * y[0] if y[0] < 10.0 else 0.0]  # (a branch that never switches along the solution)
    return odeint(f, [1.0], T, rtol=1e-10, atol=1e-12)[-1, 0]


@pytest.mark.parametrize("mode", [derivative, gradient])
def test_odeint_closure_branch_that_never_switches_is_differentiated(mode):
    want = -2.0 * np.exp(-2.0 * 0.7)  # d/da exp(-a t) at t = 2
    got = mode(_smooth_closure, 0.7)
    got = got[0] if isinstance(got, tuple) else got
    assert abs(got - want) < 1e-6 * abs(want)


def _tie(a):
    return a * 2.0 if np.float64(1.0) <= a else a * 3.0


def test_numpy_number_compared_with_a_value_at_its_tie_is_refused():
    with pytest.raises(OverdubError, match="branch boundary"):
        derivative(_tie, 1.0)
    assert derivative(_tie, 1.5) == pytest.approx(fd_derivative(_tie, 1.5), rel=1e-6)


# -- a table lookup of constants beside a differentiated object (chemics' `Gas.viscosity`) ----------------

class _Gas:
    def __init__(self, formula, temperature):
        self.formula = formula
        self.cas_number = None
        self.temperature = temperature


def _row(formula, cas_number):
    pd = pytest.importorskip("pandas")
    table = pd.DataFrame({"Formula": ["N2", "O2", "CH4"], "A": [1.5, 2.5, 3.5], "B": [0.25, 0.5, 0.75]})
    row = table.query(f"Formula == '{formula}'") if not cas_number else table.query(f"CAS == '{cas_number}'")
    return row["A"].iloc[0], row["B"].iloc[0]


def _viscosity(t):
    gas = _Gas("O2", t)
    a, b = _row(gas.formula, gas.cas_number)  # (text and None read off an object holding t)
    return a + b * gas.temperature + 1e-3 * gas.temperature ** 2


@pytest.mark.parametrize("mode", [derivative, gradient])
def test_table_lookup_of_constants_beside_a_differentiated_object(mode):
    # reverse mode took the text and None read off the object for differentiated values and ran pandas' own
    # code under the transform (refused at read_csv's `locals()`); forward mode refused pandas' NumpyBlock of
    # the constant table, made of a fresh zero-tangent array
    got = mode(_viscosity, 500.0)
    got = got[0] if isinstance(got, tuple) else got
    assert got == pytest.approx(fd_derivative(_viscosity, 500.0), rel=1e-7)


def _parse(text):
    return float(text) * 2.0


def _text_of_a_differentiated_number(x):
    return _parse(str(x))


@pytest.mark.parametrize("mode", [derivative, gradient])
def test_text_of_a_differentiated_number_handed_to_a_function_is_still_refused(mode):
    with pytest.raises(OverdubError, match="text"):
        mode(_text_of_a_differentiated_number, 0.7)


# -- forward mode: duals given by keyword, or beside a plain prototype ----------------------------------------

_X3 = np.array([0.3, -1.2, 2.0])


def _keyword_cases():
    from scipy.special import logsumexp
    mask = np.array([True, False, True])
    return {
        "logsumexp_b_by_keyword": lambda v: logsumexp(v, b=np.exp(v) * 0.5),
        "logsumexp_axis_and_b": lambda v: logsumexp(v, axis=0, b=v ** 2),
        "full_fill_by_keyword": lambda v: np.sum(np.full((2, 3), fill_value=v) * np.arange(6.0).reshape(2, 3)),
        "full_like_plain_prototype": lambda v: np.sum(np.full_like(mask, dtype=float, fill_value=v[0]) * v),
        "full_like_plain_prototype_by_position": lambda v: np.sum(np.full_like(mask, v[0], dtype=float) * v),
    }


@pytest.mark.parametrize("name", sorted(_keyword_cases()))
def test_forward_mode_takes_duals_by_keyword(name):
    from contexts import jacfwd
    from tests.fd import gradient as fd_gradient
    f = _keyword_cases()[name]
    want = fd_gradient(f, _X3)[0]
    np.testing.assert_allclose(np.asarray(jacfwd(f, _X3), dtype=float), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.asarray(gradient(f, _X3)[0], dtype=float), want, rtol=1e-6, atol=1e-8)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_pearsonr_in_both_modes():
    # (forward mode: array-api-extra's `apply_where` fills `full_like(cond, fill_value=p)` with a dual; reverse
    # mode refuses pearsonr's result object, a tuple holding differentiated attributes)
    st = pytest.importorskip("scipy.stats")
    from contexts import jacfwd
    from tests.fd import gradient as fd_gradient
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal(20), rng.standard_normal(20)
    f = lambda y: st.pearsonr(y, w)[0]
    np.testing.assert_allclose(np.asarray(jacfwd(f, x), dtype=float), fd_gradient(f, x)[0], rtol=1e-6, atol=1e-8)
    with pytest.raises(OverdubError):
        gradient(f, x)


# -- a differentiated value tied with a grid both engines took for differentiated (sweep F: scoringrules) ------

class _Backend:
    """scoringrules' backend object: `B.arange(...)` builds the count grid its CRPS compares the observation with."""

    def arange(self, a, b):
        return np.arange(a, b)


_B = _Backend()


def _crps_like(obs):
    x = _B.arange(0, 6)  # (a method's result, taken for a value that may carry a derivative)
    return float(np.sum(np.arange(1.0, 7.0) * 0.1 * (np.asarray(obs < x, dtype=float) - 0.5) * (x - obs)))


def _grid_made_here(obs):
    x = _Backend().arange(0, 6)
    return float(np.sum((np.asarray(obs < x, dtype=float) - 0.5) * (x - obs)))


def _ufunc_by_name(o):
    x = np.arange(4.0)  # (handed to np.greater: it was taken for an argument the call may change)
    return float(np.sum(np.greater(o, x) * (o - x)))


def _two_moving(o):
    g = np.arange(6.0) + 0.0 * o  # (a grid carrying a derivative of its own, zero)
    return float(np.sum((np.asarray(o < g, dtype=float) - 0.5) * (g - o)))


@pytest.mark.parametrize("mode", [derivative, gradient])
@pytest.mark.parametrize("f", [_crps_like, _grid_made_here, _ufunc_by_name, _two_moving], ids=lambda f: f.__name__)
def test_tie_of_an_ordering_with_a_grid_taken_for_active_is_the_mean_of_its_sides(f, mode):
    # (at an integer, a kink: one side's slope came out, silently; refused from session 52, judged from the
    # two sides since session 59: the mean of the two slopes; between two, both modes are right)
    at_tie = mode(f, 3.0)
    at_tie = at_tie[0] if isinstance(at_tie, tuple) else at_tie
    assert at_tie == pytest.approx((f(3.0 + 1e-6) - f(3.0 - 1e-6)) / 2e-6, rel=1e-5)
    got = mode(f, 3.4)
    got = got[0] if isinstance(got, tuple) else got
    assert got == pytest.approx(fd_derivative(f, 3.4), rel=1e-6)


def _moving_together(o):
    g = np.full(3, o)  # (tied everywhere, moving with o: no kink)
    return float(np.sum(np.where(o < g, 1.0, 2.0) * o))


@pytest.mark.parametrize("mode", [derivative, gradient])
def test_values_tied_and_moving_together_are_no_kink(mode):
    got = mode(_moving_together, 2.0)
    got = got[0] if isinstance(got, tuple) else got
    assert got == pytest.approx(6.0)
