"""Findings of session 63's sweep (14 packages new to the project: acoustics, miepython, beyond, pedon,
scikit-gstat, powerlaw, bond-pricing, openap, phasepy, PyEMD, mechkit, visual-kinematics, calcbsimpvol,
hydrostats; 132 cases, both modes, against central differences), reduced to plain code:

- a three-term recurrence (`chi_nm1 = chi_n; chi_n = chi`) in a loop under a test of a differentiated value
  outside it (`if m.real > 0:`), miepython's Mie coefficients: refused by both modes as a bisection (the
  temporary of the loop's `range`, bound once under the test, was taken for a value the test chooses);
- a library testing `hasattr(x, "__len__")` on a differentiated number, reached from a function with no
  source (typed at `python -c`, made by exec), where forward mode runs the library natively on dual numbers:
  Python's TypeError from `len()` came out of the library as if the program had failed (miepython again);
- a dict made by a call on dual numbers (`dict(cp=-1.0, K=k)`): its constant items got a float zero rate in
  forward mode's tangent twin, which takes such a rate for one computed from the inputs, so a test of the
  constant (`if cp == -1:`) was judged from the two sides of the point at every call (calcbsimpvol).
"""

import itertools
import math
from functools import reduce

import numpy as np
import pytest

from contexts import derivative, gradient, jacfwd
from contexts.forward.dual import DualConversionError
from overdub.errors import OverdubError
from tests import fd


# -- a recurrence under a test outside its loop is no bisection ----------------------------------------------

def _coefficients(m, x, n_terms):
    a = np.zeros(n_terms, dtype=np.complex128)
    chi_nm1 = np.cos(x)
    chi_n = np.cos(x) / x + np.sin(x)
    if m.real > 0.0:
        for n in range(1, n_terms + 1):
            a[n - 1] = m * chi_n
            chi = (2 * n + 1) / x * chi_n - chi_nm1
            chi_nm1 = chi_n
            chi_n = chi
    return a


def _mie_like(m):
    return np.real(_coefficients(m - 0.02j, 2.3, 4)).sum()


def _golden_under_test(x):
    a, b = 0.0, 4.0
    if x > 0.5:
        invphi = (math.sqrt(5) - 1) / 2
        for _ in range(60):  # a golden-section search: the test inside the loop chooses the end
            c = b - (b - a) * invphi
            d = a + (b - a) * invphi
            if (c - x) ** 2 < (d - x) ** 2:
                b = d
            else:
                a = c
    return (a + b) / 2


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_recurrence_under_an_outer_test(mode):
    want = fd.derivative(_mie_like, 1.45)
    got = gradient(_mie_like, 1.45)[0] if mode == "reverse" else derivative(_mie_like, 1.45)
    assert got == pytest.approx(want, rel=1e-7)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_bisection_under_an_outer_test_still_refused(mode):
    with pytest.raises(OverdubError, match="bisection"):
        gradient(_golden_under_test, 2.0) if mode == "reverse" else derivative(_golden_under_test, 2.0)


# -- `len()` of a number's dual, natively ------------------------------------------------------------------

def _array_or_number(m):
    n = len(m) if hasattr(m, "__len__") else 0  # (miepython's test of an array argument)
    return m * m + n


def test_len_of_a_number_natively_is_refused_by_name():
    ns = {"lib": _array_or_number}
    exec("f = lambda x: lib(x)", ns)  # (no source: forward mode runs it, and what it calls, on duals)
    with pytest.raises(DualConversionError, match="len\\(\\) of a differentiated float") as e:
        derivative(ns["f"], 1.5)
    assert "define the differentiated function in a file" in str(e.value)
    with pytest.raises(OverdubError):  # (reverse mode refuses the function without source; forward's too)
        gradient(ns["f"], 1.5)


def test_len_through_transformed_code_is_the_numbers():
    f = lambda x: _array_or_number(x)  # noqa: E731  (with source: `hasattr` asks the value, a float)
    assert derivative(f, 1.5) == pytest.approx(3.0)
    assert gradient(f, 1.5)[0] == pytest.approx(3.0)
    v = np.array([1.5, -0.5])
    np.testing.assert_allclose(jacfwd(lambda a: _array_or_number(a), v), fd.jacobian(_array_or_number, v), rtol=1e-7)


# -- the constant items of a dict made on duals ---------------------------------------------------------

def _put_price(d):
    cp = d["cp"]
    k = d["K"]
    if cp == -1:
        return math.exp(-0.02) * k - 94.0
    return 94.0 - k


def _priced(k, cp=-1.0):
    return _put_price(dict(cp=cp, K=k * 1.0, P=np.array([6.0])))


@pytest.mark.parametrize("cp", [-1.0, 1.0])
def test_constant_item_of_a_dict_made_on_duals(cp):
    want = fd.derivative(lambda k: _priced(k, cp), 100.0)
    assert derivative(lambda k: _priced(k, cp), 100.0) == pytest.approx(want, rel=1e-7)
    assert gradient(lambda k: _priced(k, cp), 100.0)[0] == pytest.approx(want, rel=1e-7)


def test_constant_items_tangent_is_a_constants():
    # the twins' tangent of `dict(cp=-1.0, K=k)` holds K's alone (a dict's tangent holds its active items), and a
    # list's constant items have the twins' 0 of a constant
    from contexts.forward.tangent_runtime import fd_call
    y, t = fd_call(dict, (), (), {"cp": -1.0, "K": 2.0}, {"cp": 0, "K": 1.0})
    assert y == {"cp": -1.0, "K": 2.0} and t == {"K": 1.0}
    y, t = fd_call(list, ((1.0, 3.0),), ((0, 1.0),), {}, {})
    assert y == [1.0, 3.0] and type(t[0]) is int and t[0] == 0 and t[1] == 1.0


# -- one object at two differentiated places -----------------------------------------------------------
# `gradient(f, 1.0, 1.0)` binds both parameters to one float object (one constant of the caller's code), and
# `gradient(f, x, x)` to one array. scipy.stats' argument parser (`_parse_args`, made by exec: no source) passes
# its inputs back, and reverse mode routes their cotangents back by identity: the two places' were summed and
# given to the first, the second got 0, silently (found by the shape partials' helper: beta.cdf(0.5, a, b)
# at a = b = 1.0 gave (0, 0) for (-0.35, 0.35); norm.cdf(0.5, loc, scale) (-0.18, 0) for (-0.35, 0.18)).

import scipy.stats as st  # noqa: E402

ONE = 1.0


def _norm_cdf(a, b):
    return st.norm.cdf(0.5, a, b)


def _beta_cdf(a, b):
    return st.beta.cdf(0.5, a, b)


def _gamma_cdf(a, b):
    return st.gamma.cdf(0.5, a, scale=b)


@pytest.mark.parametrize("f", [_norm_cdf, _beta_cdf, _gamma_cdf])
def test_one_float_object_at_two_arguments(f):
    want = fd.gradient(f, 1.0, 1.0)
    got = gradient(f, ONE, ONE)  # (one object)
    np.testing.assert_allclose(got, want, rtol=1e-7)
    np.testing.assert_allclose(gradient(f, np.float64(1.0), np.float64(1.0))[0], want[0], rtol=1e-7)


def test_one_object_in_containers_and_arrays():
    want = fd.gradient(_norm_cdf, 1.0, 1.0)
    np.testing.assert_allclose(gradient(lambda v: _norm_cdf(v[0], v[1]), [ONE, ONE])[0], want, rtol=1e-7)
    got = gradient(lambda d: _norm_cdf(d["a"], d["b"]), {"a": ONE, "b": ONE})[0]
    np.testing.assert_allclose([got["a"], got["b"]], want, rtol=1e-7)
    np.testing.assert_allclose(gradient(lambda t: _norm_cdf(t[0], t[1]), (ONE, ONE))[0], want, rtol=1e-7)
    x = np.array([0.3, 0.7])
    g = lambda a, b: st.norm.cdf(0.5, a, b).sum()  # noqa: E731
    got = gradient(g, x, x)
    want = fd.gradient(g, x, x.copy())
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)


def test_one_variable_passed_twice_sums_both_places():
    # (the caller adds the two places' cotangents: logistic.cdf(0.8, loc=x, scale=x), gen15 W2)
    f = lambda x: st.logistic.cdf(0.8, loc=x, scale=x)  # noqa: E731
    assert gradient(f, 1.3)[0] == pytest.approx(fd.derivative(f, 1.3), rel=1e-7)
    assert derivative(f, 1.3) == pytest.approx(fd.derivative(f, 1.3), rel=1e-7)


# -- a loop whose target rebinds the name of a sequence it zips (sweep K: KDEpy's NaiveKDE.evaluate) --------------
# `for weight, data_point, bw in zip(weights, self.data, bw): ... self.kernel(x, bw=bw)`: in the body `bw` is an
# item, but reverse mode took the call for a change of the array looped over and refused the loop.

GRID = np.linspace(-1.0, 8.0, 4)


def _kernel(x, bw):
    return np.exp(-0.5 * (x / bw) ** 2) / bw


class _KDE:
    def __init__(self, data, bw):
        self.data = data.reshape(-1, 1)
        self.bw = bw
        self.kernel = _kernel

    def evaluate(self):
        out = np.zeros(GRID.shape[0])
        bw = self.bw
        if isinstance(bw, float):
            bw = np.asarray(np.ones(self.data.shape[0]) * bw, dtype=float)
        weights = itertools.repeat(1 / self.data.shape[0])
        for weight, point, bw in zip(weights, self.data, bw):
            x = GRID - point
            out += weight * self.kernel(x, bw=bw)
        return out


def _kde(d):
    return _KDE(d, 0.8).evaluate() + _KDE(d, 0.5 + 0.1 * d).evaluate()


def _items_rebound(a):
    b = a * 2.0
    total = 0.0
    for v, b in zip(a, b):  # (b, an item of a 1-d array: a number; `b += v` rebinds it)
        b += v
        total = total + b * v
    return total


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_loop_target_rebinding_a_zipped_sequence(mode):
    x = np.array([0.3, 1.9, 4.1])
    want = fd.jacobian(_kde, x)
    from contexts import jacobian
    got = jacobian(_kde, x) if mode == "reverse" else jacfwd(_kde, x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
    got = gradient(_items_rebound, x)[0] if mode == "reverse" else jacfwd(_items_rebound, x)
    np.testing.assert_allclose(got, fd.gradient(_items_rebound, x)[0], rtol=1e-7)


def _rows_changed(m):
    m = m * 1.0
    for r, s in zip(m, m[1:]):  # (rows: views; `s += r` changes the array looped over)
        s += r
    return (m ** 2).sum()


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_rows_changed_through_the_loop_target(mode):
    x = np.arange(6.0).reshape(3, 2) * 0.3
    want = fd.gradient(_rows_changed, x)[0]
    got = gradient(_rows_changed, x)[0] if mode == "reverse" else jacfwd(_rows_changed, x)
    np.testing.assert_allclose(got, want, rtol=1e-6)


# -- an elementwise equality read only by `all` is one test of all the entries (sweep K: lamberthub) -----------
# `if np.all(np.equal(r1, r2)): raise ...` of two positions whose z entries are both 0: each tied entry was noted
# as a special point, and forward mode ran to check it (refused where its sides were the solver's noise); the
# test holds on a neighbourhood unless every entry ties.

_R1 = np.array([1.5, 0.0, 0.0])


def _whole_equality(r2):
    if np.all(np.equal(_R1, r2)):
        raise ValueError("equal positions")
    if (r2 == _R1).all():
        return 0.0 * r2[0]
    d = r2 - _R1
    return np.sqrt(d @ d) * (1.0 + r2[2] ** 2)


def _all_tied(r2):
    if (r2 == _R1).all():  # (every entry ties: the special case's derivative is not the function's)
        return 0.0 * r2[0]
    d = r2 - _R1
    return d @ d + d[0]


def test_an_equality_read_only_by_all_is_one_test(monkeypatch):
    import contexts.compose as compose
    x = np.array([0.3, 2.0, 0.0])
    want = fd.gradient(_whole_equality, x)[0]
    checks = []
    original = compose.check_special
    monkeypatch.setattr(compose, "check_special", lambda *a: checks.append(a) or original(*a))
    np.testing.assert_allclose(gradient(_whole_equality, x)[0], want, rtol=1e-7, atol=1e-12)
    assert not checks  # (nothing noted: no forward run to check it)
    np.testing.assert_allclose(jacfwd(_whole_equality, x), want, rtol=1e-7, atol=1e-12)
    # (all of it tied, and moving: still the special point, judged from its two sides, not the special case's 0)
    np.testing.assert_allclose(gradient(_all_tied, _R1.copy())[0], fd.gradient(_all_tied, _R1.copy())[0], atol=1e-7)
    assert abs(fd.gradient(_all_tied, _R1.copy())[0][0] - 1.0) < 1e-6


# -- gsw (sweep K): its decorator's `reduce(np.logical_or, (np.ma.getmask(a) for a in args))` was refused as a
# generator read beside what it reads (numpy's module), and its TEOS-10 ufuncs were named `numpy.rho` ---------

def _masked_support(f):  # (gsw's decorator of its TEOS-10 ufuncs, `masked_array_support`; no `__wrapped__`,
    def wrapper(*args, **kwargs):  # which reverse mode would call in its place, as where its own has a rule)
        if not any(np.ma.isMaskedArray(a) for a in itertools.chain(args, kwargs.values())):
            return f(*args, **kwargs)
        mask = reduce(np.logical_or, (np.ma.getmask(a) for a in itertools.chain(args, kwargs.values())))
        return np.ma.masked_array(f(*args, **kwargs), mask=mask)
    return wrapper


_hypot = _masked_support(np.hypot)


def test_a_generator_passed_beside_a_module():
    x, y = np.array([0.5, 1.5]), np.array([2.0, -1.0])
    f = lambda a, b: np.sum(_hypot(a, b))  # noqa: E731
    got = gradient(f, x, y)
    want = fd.gradient(f, x, y)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-7)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-7)
    from contexts.lowered.show import show_lowered
    assert "reduce" in show_lowered(_hypot)  # (lowered: refused before, answered by forward mode's fallback)


def test_a_library_ufunc_is_named_by_its_module(monkeypatch):
    import sys
    import types
    from contexts.rules.registry import qualified_name
    u = np.frompyfunc(lambda v: v, 1, 1)
    lib = types.ModuleType("somelib._kernels")
    setattr(lib, u.__name__, u)
    monkeypatch.setitem(sys.modules, "somelib._kernels", lib)
    assert qualified_name(u) == f"somelib._kernels.{u.__name__}"
    assert qualified_name(np.add) == "numpy.add"
