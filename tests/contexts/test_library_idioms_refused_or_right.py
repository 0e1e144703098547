"""Idioms of real libraries found silently wrong or crashing by sweeps on code nobody here wrote (ASE,
geomdl, pwlf, cvxpy through PyPortfolioOpt, pykalman, tsfresh), reduced to their few lines. Each is
right against central differences or closed forms, or refused with an OverdubError, in every mode.

- text: `float("{:.18f}".format(x))` (geomdl's linspace and knot normalisation), `"%.17g" % x`: the text
  carries no derivative (0 came out in forward mode, and in reverse mode for `%`);
- a memo cache keyed by `np.allclose(p, key, rtol=1e-15, atol=1e-15)` (every ASE calculator's
  `check_state`): at the cached point, 0 in both modes;
- `__getitem__`/`__setitem__` given by a property (ASE's `arraylike`, `Cell`): 0 in reverse mode, or a crash;
- crashes: numpy's `np.isscalar` of an object taking ufuncs only (cvxpy's expressions: endless recursion);
  `x.__class__` of a perturbed array in forward mode (cvxpy's type table); `np.unique(ints, axis=0)` in a
  differentiated function (tsfresh's permutation entropy); a masked array of a perturbed one (pykalman).
"""

import functools
import math

import numpy as np
import pytest

from contexts import derivative, gradient, hessian, jacfwd, jvp
from contexts.lowered.runtime import SpecialPoint, TextRoundTrip
from overdub.errors import OverdubError
from tests import fd

X = np.array([0.3, 0.7, 1.1])


# -- text ---------------------------------------------------------------------------------------

FMT = "{:.12f}"


def _format_constant(k):
    return float("{:.18f}".format(k)) * 2.0


def _format_global(k):
    return float(FMT.format(k)) * 2.0


def _format_built(k):
    digits = 6
    return float(("{:." + str(digits) + "f}").format(k / 3.0)) * 2.0


def _percent(k):
    return float("%.17g" % k) * 2.0


def _percent_tuple_split(k):
    return float(("%.12f %s" % (k, "m")).split()[0]) * 2.0


def _method_format(k):
    return float(k.__format__(".12f")) * 2.0


TEXTS = [_format_constant, _format_global, _format_built, _percent, _percent_tuple_split, _method_format]


@pytest.mark.parametrize("f", TEXTS, ids=lambda f: f.__name__)
def test_a_number_through_text_is_refused_in_every_mode(f):
    for run in (lambda: derivative(f, 0.27), lambda: gradient(f, 0.27), lambda: jacfwd(f, 0.27)):
        with pytest.raises(OverdubError):  # (TextRoundTrip, or no rule for str.format in reverse mode)
            run()


def test_text_for_a_message_only_is_fine():
    def f(k):
        msg = "value {:.3f}".format(k) + " and %.2f" % k
        return k * k if msg else 0.0
    assert derivative(f, 0.4) == pytest.approx(0.8, rel=1e-12)
    assert gradient(f, 0.4)[0] == pytest.approx(0.8, rel=1e-12)


def test_percent_text_is_refused_by_name():
    with pytest.raises(TextRoundTrip):
        gradient(_percent, 0.27)
    with pytest.raises(TextRoundTrip):
        derivative(_format_constant, 0.27)


# -- a memo cache keyed by np.allclose --------------------------------------------------------------

class _Calculator:
    """ASE's Calculator, reduced: results cached by positions compared with np.allclose at 1e-15."""

    def __init__(self):
        self.key = None
        self.energy = None

    def get_energy(self, p):
        if self.key is not None and np.allclose(p, self.key, rtol=1e-15, atol=1e-15):
            return self.energy
        self.key = np.array(p, copy=True)
        self.energy = np.sum(np.sin(p) * p)
        return self.energy


@pytest.mark.parametrize("mode", ["gradient", "jacfwd", "hessian"])
def test_a_cache_hit_at_the_cached_point_is_right_or_refused(mode):
    # (session 57: the hit is a special case judged from the two sides of the point; the cached value is
    # the formula's there, so the sides' derivative comes out; a Hessian's sides may be noise: refused)
    calc = _Calculator()
    calc.get_energy(X.copy())  # a plain call first, as `atoms.get_potential_energy()`
    run = {"gradient": lambda f, x: gradient(f, x)[0], "jacfwd": jacfwd, "hessian": hessian}[mode]
    want = np.sin(X) + X * np.cos(X)
    if mode == "hessian":
        want = np.diag(2 * np.cos(X) - X * np.sin(X))
    try:
        got = run(calc.get_energy, X.copy())
    except SpecialPoint:
        assert mode == "hessian"
        return
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_a_stale_cache_hit_is_refused():
    for run in (gradient, jacfwd):
        calc = _Calculator()
        calc.get_energy(X.copy())
        calc.energy = calc.energy + 1e-3  # (not the formula's value at its key)
        with pytest.raises(SpecialPoint, match="not the limit"):
            run(calc.get_energy, X.copy())


def test_off_the_cached_point_right():
    calc = _Calculator()
    calc.get_energy(X.copy())
    y = X + 0.01
    want = np.sin(y) + y * np.cos(y)
    np.testing.assert_allclose(gradient(calc.get_energy, y)[0], want, rtol=1e-12)
    np.testing.assert_allclose(jacfwd(calc.get_energy, y + 0.01), np.sin(y + 0.01) + (y + 0.01) * np.cos(y + 0.01),
                               rtol=1e-12)


def test_an_approximate_check_that_holds_only_approximately_passes():
    # np.allclose of a value near, not at, a constant: the branch holds on a neighbourhood (not refused)
    def f(x):
        n = np.sum(x * x)
        if np.allclose(n, 1.0, atol=1e-3):
            return np.sum(np.sin(x))
        return np.sum(np.cos(x))
    x = np.array([0.6, 0.8 + 1e-5])
    np.testing.assert_allclose(gradient(f, x)[0], np.cos(x), rtol=1e-12)
    np.testing.assert_allclose(jacfwd(f, x), np.cos(x), rtol=1e-12)


# -- __getitem__ / __setitem__ given by a property ----------------------------------------------------

class _ArrayLike:
    """ASE's `arraylike` wrapper, reduced: the array's own methods handed out by properties."""

    def __init__(self, a):
        self.array = a

    def __array__(self, dtype=None, copy=None):
        return self.array

    @property
    def __getitem__(self):
        return self.array.__getitem__

    @property
    def __setitem__(self):
        return np.asarray(self).__setitem__


def _read_one(x):
    return _ArrayLike(x)[1] ** 2 * 3.0


def _read_two(x):
    w = _ArrayLike(x)
    return w[0] * w[2] + w[1]


def _write_then_read(x):
    w = _ArrayLike(np.zeros(3))
    w[:] = np.ones(3)  # (constant data stored through the property)
    w[1] = x[0] * x[1]
    return np.sum(w.array * np.arange(1.0, 4.0)) + x[2] ** 2


@pytest.mark.parametrize("f", [_read_one, _read_two, _write_then_read], ids=lambda f: f.__name__)
def test_items_through_a_property(f):
    want = fd.gradient(f, X)[0]
    np.testing.assert_allclose(gradient(f, X.copy())[0], want, rtol=1e-8, atol=1e-10)
    if f is not _write_then_read:  # (forward mode: Python runs the property's numpy call itself, on the
        # dual np.zeros makes there: numpy's ValueError, README's limits)
        np.testing.assert_allclose(jacfwd(f, X.copy()), want, rtol=1e-8, atol=1e-10)


# -- crashes made refusals or right -----------------------------------------------------------------

class _UfuncsOnly:
    """cvxpy's Expression, reduced: numpy's ufuncs by `__array_ufunc__`, nothing else."""

    def __init__(self, v):
        self.v = v

    def __array_ufunc__(self, ufunc, method, *args, **kw):
        return NotImplemented


def _kind_question(x):
    e = _UfuncsOnly(x * 2.0)
    return np.sum(e.v) + (0.0 if np.isscalar(e) else 1.0)


def test_a_question_of_kind_of_an_object_taking_ufuncs_only():
    np.testing.assert_allclose(gradient(_kind_question, X)[0], [2.0, 2.0, 2.0])
    np.testing.assert_allclose(jacfwd(_kind_question, X), [2.0, 2.0, 2.0])


_INTERFACES = {np.ndarray: lambda a: a.shape}


def _class_table(x):
    if x.__class__ not in _INTERFACES:
        raise TypeError(f"{type(x)} is not a valid type")
    return np.sum(x ** 2) * len(_INTERFACES[x.__class__](x))  # (the shape's length, 1)


def test_the_class_of_a_perturbed_array_is_the_arrays():
    np.testing.assert_allclose(jacfwd(_class_table, X), 2.0 * X, rtol=1e-12)
    np.testing.assert_allclose(gradient(_class_table, X)[0], 2.0 * X, rtol=1e-12)


def _permutation_entropy(x):
    """tsfresh's permutation_entropy (order 3, delay 1), plus x's sum."""
    idx = np.arange(3)[None, :] + np.arange(len(x) - 2)[:, None]
    ranks = np.argsort(np.argsort(x[idx]))
    _, counts = np.unique(ranks, axis=0, return_counts=True)
    p = counts / len(ranks)
    return -np.sum(p * np.log(p)) + np.sum(x * x)


def test_unique_rows_of_integers_need_no_derivative():
    x = np.array([0.3, 1.2, -0.4, 0.8, 0.1, 0.9, 0.35, -0.2])
    np.testing.assert_allclose(gradient(_permutation_entropy, x)[0], 2 * x, rtol=1e-12)
    np.testing.assert_allclose(jacfwd(_permutation_entropy, x), 2 * x, rtol=1e-12)


def test_unique_rows_of_a_differentiated_array_right_or_refused():
    # (rules since session 58: copies of one row moving together are one row, sum(x); rows that tie and part
    # make the result jump: refused)
    def f(x):
        return np.sum(np.unique(np.stack([x, x]), axis=0))

    np.testing.assert_allclose(gradient(f, X)[0], np.ones_like(X), rtol=1e-14)
    np.testing.assert_allclose(jacfwd(f, X), np.ones_like(X), rtol=1e-14)

    def parting(x):
        return np.sum(np.unique(np.stack([x, 2.0 * x - X]), axis=0))  # (the same row at X, apart beside it)

    for run in (lambda: gradient(parting, X), lambda: jacfwd(parting, X)):
        with pytest.raises(OverdubError, match="np.unique at a tie"):
            run()


def test_a_masked_array_of_a_perturbed_one():
    # (reverse mode: numpy.ma's code differentiated, `contexts.rules.numpy.masked`; forward mode's duals hold
    # no masked array's fields: jacfwd and, since session 73, jvp answer by reverse mode)
    def f(y):
        return (np.ma.asarray(y) * 2.0).sum()
    np.testing.assert_allclose(gradient(f, X)[0], 2.0 * np.ones_like(X), rtol=1e-14)
    np.testing.assert_allclose(jacfwd(f, X), 2.0 * np.ones_like(X), rtol=1e-14)
    assert jvp(f, (X,), (np.ones_like(X),))[1] == pytest.approx(2.0 * X.size, rel=1e-14)
    assert math.isclose(f(X), 2.0 * X.sum())


def test_an_earlier_calls_text_is_no_refusal_later():
    # the texts remembered are one outermost call's: a constant formatted and parsed in a later call is a
    # constant (geomdl's knots: after one knot of 0.27 was differentiated, every curve with a constant knot
    # 0.27 was refused for the rest of the process)
    def constant_through_text(x):
        return float("{:.18f}".format(0.27)) * x

    with pytest.raises(TextRoundTrip):
        derivative(_format_constant, 0.27)
    assert derivative(constant_through_text, 1.5) == pytest.approx(0.27, rel=1e-15)
    assert gradient(constant_through_text, 1.5)[0] == pytest.approx(0.27, rel=1e-15)


# -- found by a generator of object-heavy programs -------------------------------------------------------

def _number_into_slice(x):
    v = np.zeros(3)
    v[:] = x[0]  # (a differentiated number broadcast into a slice)
    w = np.zeros(2)
    w[:] = np.sum(x)
    return np.sum(v * v) + np.sum(w ** 3)


def _add_at_after_max(x):
    w = x * 1.0
    m = w.max()  # (its adjoint reads w as it was: add.at is undone exactly, not by subtracting again)
    np.add.at(w, [0, 0, 2], x[1] ** 2)
    np.subtract.at(w, [1], 0.3 * x[0])
    return np.sum(w ** 3) + m * x[2]


def _view_in_a_list(x):
    w = x * 1.0
    held = [w, w[1:]]
    held[1][1] = 0.0  # (w[2], written through the view the list holds)
    return held[0][2] * 5.0 + np.sum(held[0] ** 2)


class _Shadowed:
    w = 2.0


def _deleted_attribute(x):
    k = _Shadowed()
    k.w = x[0]
    del k.w  # (k.w is the class's 2.0 again)
    return k.w * x[1] + x[0]


@pytest.mark.parametrize("f", [_number_into_slice, _add_at_after_max, _view_in_a_list, _deleted_attribute],
                         ids=lambda f: f.__name__)
def test_generated_program_idioms(f):
    x = np.array([0.4, 0.9, 0.2])
    want = fd.gradient(f, x)[0]
    np.testing.assert_allclose(gradient(f, x.copy())[0], want, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(jacfwd(f, x.copy()), want, rtol=1e-8, atol=1e-9)
    try:
        h = hessian(f, x.copy())
    except OverdubError:
        return
    np.testing.assert_allclose(h, fd.hessian(f, x), rtol=1e-4, atol=1e-5)


_HISTORY = [1.0]


def _store(z):
    previous = _HISTORY[-1]  # (the previous call's input: a constant to this one)
    _HISTORY.append(z)
    return z * 2.0 + previous


def _core(x):
    return _store(x)


def _via(d):
    return _core(d["p"][1])


def _through_three_helpers(x):
    return _via({"p": (0.5, x)})


def test_no_dual_left_in_a_global_three_helpers_deep():
    assert jacfwd(_through_three_helpers, 0.3) == pytest.approx(2.0)
    assert type(_HISTORY[-1]) is float
    assert type(_through_three_helpers(0.3)) is float  # (a plain call after it: a number, not a dual)
    assert derivative(_through_three_helpers, 0.3) == pytest.approx(2.0)


def _keyword_cached(x, *, cache={}):  # noqa: B006 - a memo in a keyword-only default, on purpose
    cache["v"] = np.sin(x) * 2.0
    return cache["v"]


@pytest.mark.parametrize("x", [0.7, np.array([0.7, -1.3])], ids=["float", "array"])
def test_no_dual_left_in_a_keyword_only_default(x):
    """A dual stored into a dict held by a keyword-only default outlived the call (the scrub read
    `__defaults__` only): the next plain call's cache held a Dual."""
    want = 2.0 * np.cos(x)
    got = jacfwd(_keyword_cached, x)
    assert np.allclose(np.diag(got) if np.ndim(got) == 2 else got, want)
    left = _keyword_cached.__kwdefaults__["cache"]["v"]
    assert type(left) in (float, np.float64, np.ndarray), type(left)
    assert derivative(_keyword_cached, 0.7) == pytest.approx(2.0 * np.cos(0.7))
    assert type(_keyword_cached.__kwdefaults__["cache"]["v"]) in (float, np.float64)


@functools.lru_cache(maxsize=None)
def _cached_square(x):
    return x * x


def _through_cached_square(x):
    return _cached_square(x) * x + 1.0


def test_no_dual_left_in_an_lru_cache_after_hessian():
    """hessian (forward over reverse) called the lru_cache wrapper with duals to keep the cache as Python
    keeps it: a dual key stayed there, and a plain call after it compared its float with the dual's (a
    special case refused, outside any differentiation)."""
    _cached_square.cache_clear()
    assert hessian(_through_cached_square, 0.7) == pytest.approx(6.0 * 0.7)
    assert _through_cached_square(0.7) == pytest.approx(0.7 ** 3 + 1.0)  # (a plain call: no dual met)
    assert _cached_square.cache_info().currsize == 1
    assert hessian(_through_cached_square, 0.7) == pytest.approx(6.0 * 0.7)
    assert gradient(_through_cached_square, 0.7)[0] == pytest.approx(3.0 * 0.7 ** 2)


def _scalar_defaults(x, n=3, scale=2.0, name="x", flag=True, nothing=None):
    return scale * x ** n if flag and nothing is None and name else x


def test_scalar_defaults_need_no_scrub_and_stay():
    """The scrub's fast path takes a function whose defaults are numbers, text, flags and None."""
    assert derivative(_scalar_defaults, 1.5) == pytest.approx(6.0 * 1.5 ** 2)
    assert _scalar_defaults.__defaults__ == (3, 2.0, "x", True, None)


# -- found on numpy.polynomial and scipy.signal / scipy.spatial --------------------------------------------

_DATA = np.array([0.3, -1.2, 0.7, 2.1])


def _shape_list(a):
    return [n for n in a.shape]  # (a comprehension: the callee changes a list of its own in place)


def _loss(x, d):
    _shape_list(d)
    return np.dot(x, d) + np.sum(x ** 2)


def _loss_through_alias(x):
    k = _DATA
    _shape_list(x)
    return np.dot(x, k)


@pytest.mark.parametrize("f", [lambda x: _loss(x, _DATA), _loss_through_alias], ids=["data argument", "alias"])
def test_evaluated_at_the_data_itself(f):
    # `gradient(lambda x: loss(x, data), data)`: x is data's own object (scipy.signal.csd at x = sig gave 0,
    # correlate 2x): an argument the callee did not change keeps its cotangent
    want = fd.gradient(f, _DATA.copy())[0]
    np.testing.assert_allclose(gradient(f, _DATA)[0], want, rtol=1e-8)
    np.testing.assert_allclose(jacfwd(f, _DATA), want, rtol=1e-8)


def test_the_order_of_a_norm_refused():
    # (scipy.spatial.distance.minkowski in p: 0 came out in both modes)
    v = np.array([0.93, -1.54, 0.83])
    for f in (lambda p: np.linalg.norm(v, p), lambda p: np.linalg.norm(v, ord=p)):
        for run in (gradient, derivative):
            with pytest.raises(OverdubError):
                run(f, 2.7)
    g = lambda u: np.linalg.norm(u, ord=2.7)  # noqa: E731  (in x: right)
    np.testing.assert_allclose(gradient(g, v)[0], fd.gradient(g, v)[0], rtol=1e-7)


def test_heaviside_in_its_value_at_zero():
    x = np.array([0.0, 1.0, -2.0, 0.0])
    f = lambda h: np.sum(np.heaviside(x, h) * np.arange(1.0, 5.0))  # noqa: E731  (h0 where x is 0: 1 + 4)
    assert gradient(f, 0.3)[0] == pytest.approx(5.0) and derivative(f, 0.3) == pytest.approx(5.0)


def test_transpose_of_one_axis_by_an_int():
    # (`x.transpose(0)` of a 1-d x, scipy.signal's czt: a crash in both modes)
    f = lambda x: np.sum(x.transpose(0) * np.arange(1.0, 4.0))  # noqa: E731
    np.testing.assert_allclose(gradient(f, X)[0], [1.0, 2.0, 3.0])
    np.testing.assert_allclose(jacfwd(f, X), [1.0, 2.0, 3.0])


def _endless(z):
    while True:
        z = z * 0.8 + 0.1
        yield z


def _first_of_endless(x):
    return next(_endless(x)) * 2.0


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_an_endless_generator_is_refused_not_a_hang(monkeypatch):
    # reverse mode runs a generator to its end when it is called: an endless one ran until memory ran out
    from contexts.lowered import runtime
    from contexts.lowered.runtime import EagerIterationError
    monkeypatch.setattr(runtime, "YIELDS_KEPT", 1000)  # (the bound, made small for the test's speed)
    with pytest.raises(EagerIterationError):
        gradient(_first_of_endless, 0.3)
    assert jacfwd(_first_of_endless, 0.3) == pytest.approx(1.6)  # (forward mode's duals draw what is asked)


@pytest.mark.parametrize("f", [lambda x: np.sum(np.square([x[0]])), lambda x: np.sum(np.log([x[0], 2.0 * x[1]])),
                               lambda x: np.sum(np.power([x[0], x[1]], 2)), lambda x: np.sum(np.square([x]))],
                         ids=["square of [x]", "log of a list", "power of a list", "square of [array]"])
def test_ufuncs_of_lists(f):
    # (the partials ran on the list itself: `2 * [x]` repeated it, np.square([x])'s derivative came out half;
    # nolds' `np.log([rs(n) for n in ns])` raised)
    want = fd.gradient(f, X)[0]
    np.testing.assert_allclose(gradient(f, X.copy())[0], want, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(jacfwd(f, X.copy()), want, rtol=1e-8, atol=1e-10)


# -- found on networkx's edge data (forward mode's tangent twin kept a store's tangent to itself) ---------

class _Holder:
    def __init__(self):
        self.d = {"w": 1.0}
        self.a = np.zeros(2)

    def table(self):
        return self.d

    def array(self):
        return self.a


def _read_array(o):
    return o.a[0] * 2.0


def _stored_through_a_method_read_by_getattr(x):
    o = _Holder()
    o.table()["w"] = x
    return getattr(o, "d")["w"] * 3.0 + vars(o)["d"]["w"]


def _stored_into_a_held_array_read_by_a_callee(x):
    o = _Holder()
    a = o.array()
    a[0] = x
    return _read_array(o)


def _two_yields(a, b):
    yield a
    yield b


def _sum_of_yields(x):
    s = 0.0
    for v in _two_yields(x, x * x):
        s = s + v
    return s


@pytest.mark.parametrize("f,want", [(_stored_through_a_method_read_by_getattr, 4.0),
                                    (_stored_into_a_held_array_read_by_a_callee, 2.0),
                                    (_sum_of_yields, 1.0 + 2 * 0.7)],
                         ids=["getattr/vars of a dict stored into", "a held array read by a callee", "yields"])
def test_stores_into_what_others_hold(f, want):
    assert derivative(f, 0.7) == pytest.approx(want)
    assert gradient(f, 0.7)[0] == pytest.approx(want)


# -- a lazily built object given by a property, called as a method (findiff's `Diff(0, h)(f)` in h: 0) ---------

class _Quotient:
    def __init__(self, s):
        self.s = s

    def __call__(self, v):
        return v / self.s


class _LazyOperator:
    def __init__(self, s):
        self.s = s
        self._q = None

    @property
    def q(self):
        if self._q is None:  # (built on first use, kept)
            self._q = _Quotient(self.s)
        return self._q

    def __call__(self, v):
        return self.q(v)


class _LazyByGetattr:
    def __init__(self, s):
        self.s = s

    @property
    def q(self):
        if getattr(self, "_q", None) is None:
            self._q = _Quotient(self.s)
        return self._q


@pytest.mark.parametrize("f", [lambda h: _LazyOperator(h)(3.0), lambda h: _LazyOperator(h).q(3.0),
                               lambda h: _LazyByGetattr(h).q(3.0)], ids=["called", "property called", "getattr"])
def test_a_lazy_property_called_as_a_method(f):
    h = 0.5  # (3 / h: -3 / h^2)
    assert gradient(f, h)[0] == pytest.approx(-12.0) and derivative(f, h) == pytest.approx(-12.0)


# -- functools.wraps copying a function's annotations onto a wrapper (pylops' solvers' callbacks) -----------

def wrapped_and_called(x):
    def inner(v: x * 2.0) -> float:  # (an annotation evaluated from a differentiated value: the dict holds it)
        return v * 2.0

    @functools.wraps(inner)
    def wrapper(v):
        return inner(v) + x
    return wrapper(x * x)


@pytest.mark.one_mode
def test_annotations_copied_onto_a_wrapper_are_metadata():
    # (session 67: functools.wraps's `setattr(wrapper, '__annotations__', d)` of a dict taken for differentiated
    # was refused in reverse mode, 8 of pylops' solver cases)
    assert gradient(wrapped_and_called, 1.3)[0] == pytest.approx(fd.derivative(wrapped_and_called, 1.3), rel=1e-7)
