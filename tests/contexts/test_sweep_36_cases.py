"""Cases of session 36: crashes, false refusals and silent wrong derivatives met on code nobody here wrote
(package sweeps, generated programs), each checked against finite differences in every mode."""

import heapq
import math

import numpy as np
import pytest

from contexts import ADContext, ForwardContext, derivative, gradient, hessian, jacfwd
from tests import fd
from tests.modes import ARRAY_MODES, assert_array_gradient, assert_scalar_modes


# -- np.array of an np.vectorize's outputs, numbers beside None (bond-pricing's bond_coupon_periods) -------------
# numpy keeps the 0-d arrays the vectorized function returns as the items of an object array; forward mode
# stacked them into scalars, and `res[1][()]` crashed on the float tangent ('float' object is not subscriptable).

def _periods(mat, freq=2):
    n = math.ceil(mat * freq)
    accrual = n - freq * mat
    return n, 1 - accrual, accrual, None, None


def _coupon_fractions(m):
    res = np.array(np.vectorize(_periods)(mat=m, freq=2))
    return res[1][()] * 3 + res[2][()] ** 2 + res[0][()]


def _object_items_plain(m):
    res = np.array((m * 2, np.array(m) ** 2, "label", None))
    return res[0] * res[1][()] + float(res[1])


@pytest.mark.parametrize("f", [_coupon_fractions, _object_items_plain])
def test_object_array_of_vectorized_outputs(f):
    assert_scalar_modes(f, 5.3, second=False)
    with ForwardContext():  # (inside the user's `with`, numpy's builders are intercepted: the crash was there)
        np.testing.assert_allclose(derivative(f, 5.3), fd.derivative(f, 5.3), rtol=1e-6)


# -- np.max / np.min / ndarray.tolist of an object array of the user's objects (left from session 35) -----------
# reverse mode crashed: max's rule multiplied a Tangent by a mask, tolist's made floats of Tangents. Now numpy's
# loops as Python: maximum by `a >= b` (numpy's npy_ObjectMax), tolist the objects themselves.

class _Level:
    def __init__(self, v):
        self.v = v

    def __ge__(self, other):
        return self.v >= other.v

    def __le__(self, other):
        return self.v <= other.v

    def __add__(self, other):
        return _Level(self.v + (other.v if isinstance(other, _Level) else other))

    __radd__ = __add__


def _levels(x):
    a = np.empty(4, dtype=object)
    a[0], a[1], a[2], a[3] = _Level(x), _Level(x * x), _Level(2.0), _Level(3.0 - x)
    return a


def _object_max(x):
    return np.max(_levels(x)).v * 3 + _levels(x).min().v


def _object_max_rows(x):
    a = _levels(x).reshape(2, 2)
    return sum(e.v for e in np.max(a, axis=0)) + np.amin(a, axis=1)[1].v ** 2


def _object_maximum(x):
    a, b = _levels(x), _levels(2 * x)[::-1]
    return np.maximum(a, b)[0].v + np.minimum(a, b)[1].v


def _object_tolist(x):
    return sum(_levels(x).tolist(), _Level(0.0)).v + _levels(x).reshape(2, 2).tolist()[1][0].v ** 2


@pytest.mark.parametrize("x", [1.6, 0.7])
@pytest.mark.parametrize("f", [_object_max, _object_max_rows, _object_maximum, _object_tolist])
def test_object_array_extrema_and_tolist(f, x):
    assert_scalar_modes(f, x, second=False)


# -- np.asarray of an object converting itself by `__array__`, with numpy's protocols of its own (geometer) -----
# numpy's builders call `__array__` whatever else the class defines; forward mode ran it natively, where it
# returned the dual it holds ("object __array__ method not producing an array"). Now it runs as code.

class _Held:
    def __init__(self, *xs):
        self.array = np.array(xs)

    def __array__(self, dtype=None, copy=None):
        return self.array if dtype is None else self.array.astype(dtype)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return NotImplemented

    def __array_function__(self, func, types, args, kwargs):
        return NotImplemented


def _held_as_array(t):
    p = _Held(t, 2.0 * t, 1.0)
    a = np.asarray(p)
    return float(a[0] * a[1]) + float(np.array(p, dtype=float)[1] ** 2)


def test_as_array_by_own_array_method_beside_protocols():
    assert_scalar_modes(_held_as_array, 0.7, second=False)
    with ForwardContext():
        np.testing.assert_allclose(derivative(_held_as_array, 0.7), fd.derivative(_held_as_array, 0.7), rtol=1e-6)


# -- np.einsum's interleaved form (geometer's `join`): refused by reverse mode, now spelled as subscripts ---------

def _einsum_interleaved(x):
    a, b = x[:6].reshape(2, 3), np.cos(x[3:9]).reshape(3, 2)
    c = np.einsum(a, [0, 1], b, [1, 2], [0, 2])
    d = np.einsum(a, [0, 1], a, [0, 1])
    e = np.einsum(b, [27, 1], a, [0, 27])  # (implicit output: numpy orders 27 after 0 and 1)
    f = np.einsum(a, [Ellipsis, 1], x[:3], [1], [Ellipsis])
    return (c ** 2).sum() + d + (e * np.arange(e.size).reshape(e.shape)).sum() + (f ** 3).sum()


@pytest.mark.parametrize("mode", ARRAY_MODES)
def test_einsum_interleaved_form(mode):
    assert_array_gradient(mode, _einsum_interleaved, np.linspace(0.2, 1.4, 9))


# -- solve_ivp's step sizes are constants of the derivative (pkX: yoshika's infusion and effect-site models) -----
# Its step-size control was differentiated: with a right-hand side switching in t, the gradient was that of
# where each step happened to end (0.8548 for 0.8555), the steps' times had derivatives (-9.8e-5 for 0), and
# a branch on the error estimate was refused. Now `contexts.rules.numpy.scipy_ivp` holds the control fixed.

def _infusion(r, method="RK45"):
    from scipy.integrate import solve_ivp

    def ode(t, y):
        d = [-0.1 * y[0]]
        if t <= 10.0:
            d[0] += r
        return d
    sol = solve_ivp(ode, (0.0, 30.0), [0.0], t_eval=np.arange(0.0, 31.0), method=method, max_step=1.0,
                    rtol=1e-8, atol=1e-10)
    return sol.y[0][-1]


_SCHEDULE_T = np.linspace(0.0, 30.0, 31)
_SCHEDULE = 2.0 * np.exp(-0.1 * _SCHEDULE_T) + 0.5


def _effect_site(ke0, rtol=1e-8, atol=1e-10):
    from scipy.integrate import solve_ivp

    def ode(t, y):
        return [ke0 * (float(np.interp(t, _SCHEDULE_T, _SCHEDULE)) - y[0])]
    return solve_ivp(ode, (0.0, 30.0), [0.0], t_eval=_SCHEDULE_T, max_step=1.0, rtol=rtol, atol=atol).y[0][-1]


def _step_time(r):
    from scipy.integrate import solve_ivp
    return solve_ivp(lambda t, y: -0.1 * y + r, (0.0, 30.0), np.array([0.0]), rtol=1e-6, atol=1e-9).t[6]


@pytest.mark.parametrize("method", ["RK45", "RK23", "DOP853"])
def test_solve_ivp_switching_rhs_linear_in_rate(method):
    # y(30) is linear in r on the solver's steps (y0 = 0), so its derivative is y(r) / r
    want = _infusion(5.0, method) / 5.0
    with ADContext():
        np.testing.assert_allclose(gradient(lambda r: _infusion(r, method), 5.0)[0], want, rtol=1e-9)
    with ForwardContext():
        np.testing.assert_allclose(derivative(lambda r: _infusion(r, method), 5.0), want, rtol=1e-9)


def test_solve_ivp_interpolated_schedule_against_a_tight_solve():
    # the derivative of the ODE's solution, by differences of solves 1000x tighter (at the call's own
    # tolerances, finite differences jump with the steps: -0.603, -0.995 for steps 1e-5, 1e-6)
    want = (_effect_site(0.2 + 1e-4, 1e-11, 1e-13) - _effect_site(0.2 - 1e-4, 1e-11, 1e-13)) / 2e-4
    with ADContext():
        np.testing.assert_allclose(gradient(_effect_site, 0.2)[0], want, rtol=1e-5)
    with ForwardContext():
        np.testing.assert_allclose(derivative(_effect_site, 0.2), want, rtol=1e-5)


def test_solve_ivp_step_times_are_constants():
    with ADContext():
        assert gradient(_step_time, 5.0)[0] == 0.0
    with ForwardContext():
        assert derivative(_step_time, 5.0) == 0.0


# -- `lst += array`: numpy's addition, not the list's extension (pkY: impedance's series circuits) ---------------
# CPython tries the right operand's numeric `+` before a list's concatenation, so `z = 2 * [0.0]; z += a` makes
# an array; reverse mode took it for an extension, and the array's cotangent was lost (0 for 3; hessian 3 for 6).

def _list_plus_array(x):
    a = np.array([x, 2 * x])
    z = 2 * [0.0]
    z += a
    z += a
    return float(np.sum(z)) * x


def _impedance_series(r):
    w = 2 * np.pi * np.array([1.0, 10.0, 100.0])
    z = 3 * [0j]
    for elem in (r * np.ones(3), 1 / (1j * w * 0.01 * r)):
        z += elem
    return float(np.sum(np.abs(z) ** 2))


def _list_plus_scalar(x):
    z = [1.0, 2.0]
    z += np.float64(x) * 3
    return float(np.sum(z ** 2))


@pytest.mark.parametrize("f", [_list_plus_array, _impedance_series, _list_plus_scalar])
def test_list_plus_equals_array(f):
    assert_scalar_modes(f, 1.5)


def _complex_after_real(r):
    z = 3 * [0j]
    z += r * np.ones(3)  # (complex values, a real derivative so far)
    z += 1j * r ** 2 * np.arange(3.0)
    return float(np.sum(np.abs(z) ** 2))


def _complex_after_real_viewed(r):
    z = 3 * [0j]
    z += r * np.ones(3)
    v = z[:2]
    z += 1j * r ** 2 * np.arange(3.0)
    return float(np.sum(np.abs(v) ** 2))


def test_complex_tangent_written_into_a_real_one():
    # forward mode dropped the imaginary part of the tangent written in place (impedance: 9 for -142.6)
    assert_scalar_modes(_complex_after_real, 1.5)
    with ForwardContext():
        np.testing.assert_allclose(derivative(_complex_after_real, 1.5), fd.derivative(_complex_after_real, 1.5),
                                   rtol=1e-6)
    from overdub.errors import OverdubError
    with ForwardContext(), pytest.raises(OverdubError, match="views it"):
        derivative(_complex_after_real_viewed, 1.5)
    with ADContext():
        np.testing.assert_allclose(gradient(_complex_after_real_viewed, 1.5)[0],
                                   fd.derivative(_complex_after_real_viewed, 1.5), rtol=1e-6)


# -- sum(<iterator>, start) with a differentiated start, forward mode (gen12 W2) -----------------------------------
# the rule was handed the iterator, which it cannot look into: only start's tangent came back (3.0 for 4.4),
# and jacfwd's columns mixed; hessian through a singledispatch function after it was wrong too.

def _sum_generator_start(x):
    return sum((v * v for v in [x, 0.5]), 3.0 * x)


def _sum_map_start(x):
    return sum(map(lambda v: v * v, [x, 0.5]), 3.0 * x) + sum(filter(None, [x, 0.0, 2 * x]), x * x)


def _sum_iter_start(x):
    s = 3.0 * x
    return sum(iter([x * x, 0.25]), s) * sum(reversed([x, 1.0]), s)


@pytest.mark.parametrize("f", [_sum_generator_start, _sum_map_start, _sum_iter_start])
def test_sum_of_an_iterator_with_a_differentiated_start(f):
    assert_scalar_modes(f, 0.7)
    with ForwardContext():
        np.testing.assert_allclose(derivative(f, 0.7), fd.derivative(f, 0.7), rtol=1e-6)


def test_sum_of_an_iterator_jacfwd_columns():
    def two(v):
        return sum((u * u for u in [v[1], 0.3]), 0.5 * v[1]) * v[0]
    x = np.array([0.3, 0.7])
    np.testing.assert_allclose(jacfwd(two, x), fd.gradient(two, x)[0], rtol=1e-6)


# -- pandas' helpers and numpy's corners met by differentiating through pandas (pdx) -----------------------------

def test_pandas_item_from_zerodim_is_the_identity():
    # registered as a test of values (non-differentiable), it dropped every derivative through it: 0 for 5
    lib = pytest.importorskip("pandas._libs.lib")

    def f(x):
        return lib.item_from_zerodim(np.array(x * 3.0)) + lib.item_from_zerodim(x * 2.0)
    assert_scalar_modes(f, 1.5)


def test_absolute_of_a_nan_padding_no_result_shows():
    # 0 * sign(nan) made NaN where the padding's cotangent was 0 (pandas' shift(1) under ta's ATR)
    c = np.array([np.nan, 1, 1, 1, 1.0])

    def viewed(x):
        return np.abs(x.view() * c)[1:].sum()
    x = np.array([1.0, -3.0, 2.0, 5.0, 4.0])
    with ADContext():
        np.testing.assert_array_equal(gradient(viewed, x)[0], [0.0, -1.0, 1.0, 1.0, 1.0])


class _OwnUfuncs:
    def __init__(self, v):
        self.v = v

    def __array_ufunc__(self, ufunc, method, *inputs, **kw):
        args = [i.v if isinstance(i, _OwnUfuncs) else i for i in inputs]
        if kw.get("out") is not None:
            kw["out"] = tuple(o.v if isinstance(o, _OwnUfuncs) else o for o in kw["out"])
        return _OwnUfuncs(getattr(ufunc, method)(*args, **kw))


def test_ufunc_out_handed_to_an_operands_array_ufunc_is_refused_not_a_crash():
    from overdub.errors import OverdubError

    def f(x):
        r = np.divide(x, _OwnUfuncs(x + 1.0), out=np.zeros_like(x), where=x != 0)
        return r.v.sum()
    with ADContext(), pytest.raises(OverdubError):
        gradient(f, np.array([1.0, 2.0, 3.0]))


# -- heapq.heappushpop handing the pushed item itself back (gen12 W1: reverse 0 for 3, hessian 0 for 2) ---------

def _pushpop_small(x):
    h = [1.0, 2.0]
    return heapq.heappushpop(h, 3.0 * x) + h[0] * x      # 3x < 1: 3x itself comes back


def _pushpop_empty(x):
    return heapq.heappushpop([], x * x)


def _pushpop_large(x):
    h = [0.5 * x, 2.0]
    heapq.heapify(h)
    top = heapq.heappushpop(h, 3.0 * x)                  # 3x > 0.5x: the top comes back, 3x enters
    return top * 2.0 + sum(v * v for v in h)


@pytest.mark.parametrize("f, x", [(_pushpop_small, 0.1), (_pushpop_empty, 0.7), (_pushpop_large, 0.9)])
def test_heappushpop_returning_the_item(f, x):
    assert_scalar_modes(f, x)


# -- a differentiated number's text run as code: eval / exec / compile / ast.literal_eval (pkY: impedance) -------
# float(str(x)) was refused (TextRoundTrip); these came back constants: 0 for 2 in one mode or both.

def _circuit_element(p, f):
    return np.array(len(f) * [p[0]])


_ENV = {"R": _circuit_element, "sum": sum}
_ROUND_TRIPS = {
    "eval(text, env)": lambda x: float(np.sum(eval("R(" + str([x]) + "," + str([1.0, 2.0]) + ")", _ENV))),
    "ast.literal_eval": lambda x: __import__("ast").literal_eval(str(x)) * 2.0,
    "exec(text, d)": lambda x: (lambda d: (exec("y = " + repr(x) + " * 2", d), d["y"])[1])({}),
    "eval(compile(text))": lambda x: eval(compile(repr(x) + "*2", "<s>", "eval"), {}),
}


def _eval_in_frame(x):
    return eval(repr(x)) * 2.0 + eval("{}*2".format(x))


@pytest.mark.parametrize("name", list(_ROUND_TRIPS))
def test_text_run_as_code_is_refused(name):
    from contexts.lowered.runtime import TextRoundTrip
    f = _ROUND_TRIPS[name]
    with ADContext(), pytest.raises(TextRoundTrip):
        gradient(f, 0.7)
    with ForwardContext(), pytest.raises(TextRoundTrip):
        derivative(f, 0.7)


def test_eval_without_namespaces_is_refused_in_forward_mode():
    from overdub.errors import OverdubError
    from contexts.lowered.runtime import TextRoundTrip
    with ForwardContext(), pytest.raises(TextRoundTrip):
        derivative(_eval_in_frame, 0.7)
    with ADContext(), pytest.raises(OverdubError):  # (reverse mode refuses eval reading its caller's frame)
        gradient(_eval_in_frame, 0.7)
    with ForwardContext():  # (text that is no differentiated number's runs as before)
        assert derivative(lambda x: eval("3 * 2") * x, 0.7) == 6.0


# -- generator expressions in forward mode's tangent twin (gen12 C2 and kin) and reverse mode's endless ones -----
# The tangent twin (derivative without a `with ForwardContext()`) made a generator expression a list: drawn twice,
# its items came twice (33 for 3), and `next(gen)` crashed ('list' object is not an iterator). Reverse mode ran
# one over an endless iterator until memory ran out; it is refused now, as an endless generator function is.

def _drawn_twice(x):
    g = (v * x for v in [1.0, 2.0])
    a = sum(g)
    b = sum(g)  # (empty: Python's generator is spent)
    return a + 10 * b


def _next_then_rest(x):
    g = (v * x for v in [1.0, 2.0, 4.0])
    first = next(g)
    return first + sum(g) * 3 + next(v for v in [1.0, 2.0]) * 0.1


@pytest.mark.parametrize("f", [_drawn_twice, _next_then_rest])
def test_generator_expression_drawn_as_python_draws_it(f):
    assert_scalar_modes(f, 0.9)
    with ForwardContext():
        np.testing.assert_allclose(derivative(f, 0.9), fd.derivative(f, 0.9), rtol=1e-6)
    np.testing.assert_allclose(jacfwd(lambda v: f(v[0]), np.array([0.9])), [fd.derivative(f, 0.9)], rtol=1e-6)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_endless_generator_expression_refused_in_reverse_mode():
    import itertools

    from contexts.lowered.runtime import EagerIterationError

    def f(x):
        return sum(itertools.islice((x * k for k in itertools.count()), 3))
    with ADContext(), pytest.raises(EagerIterationError, match="endless"):
        gradient(f, 0.7)
    with ForwardContext():  # (forward mode's duals draw items as the code asks)
        assert derivative(f, 0.7) == pytest.approx(3.0)
    assert derivative(f, 0.7) == pytest.approx(3.0)  # (the tangent twin gives it to them)


# -- a generator expression made in a loop, reading the loop's variable only in its outermost iterable (pkX:
# trueskill's rate, 17 refusals): Python evaluates that iterable where the generator is made (PEP 289) ----------

def _kept_generators(x):
    gens = []
    for w in ([x, 2.0], [3.0, x * x]):
        gens.append(max(0.5, v) for v in w)
    return sum(sum(g) for g in gens)


def _kept_generators_late(x):
    gens = []
    for w in (x, 2.0 * x):
        gens.append(v * w for v in (1.0, 2.0))  # (w read when it runs: every generator sees the last w)
    return sum(sum(g) for g in gens)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_generator_kept_past_its_iteration_reading_the_loop_variable_first():
    assert_scalar_modes(_kept_generators, 1.5)
    from overdub.errors import OverdubError
    with ADContext(), pytest.raises(OverdubError, match="kept past its iteration"):
        gradient(_kept_generators_late, 1.5)
    with ForwardContext():
        np.testing.assert_allclose(derivative(_kept_generators_late, 1.5), fd.derivative(_kept_generators_late, 1.5))


# -- a number times a list subclass with its own `__rmul__` (pkX: trueskill's Matrix.inverse) --------------------
# reverse mode's rule took it for a sequence and called `__rmul__` on a cotangent; forward mode's dual took the
# list itself, where Python calls the class's reflected method.

class _Matrix(list):
    def __init__(self, src):
        if isinstance(src, dict):
            src = [[src[0, 0], src[0, 1]]]
        elif not isinstance(src, list):
            raise TypeError("src must be a list or dict")
        super().__init__(src)

    def __rmul__(self, other):
        from numbers import Number
        if not isinstance(other, Number):
            raise TypeError("The operand should be a number")
        return type(self)({(0, c): other * self[0][c] for c in range(2)})


def _matrix_scaled(v):
    m = _Matrix([[v[1], 1.0]])
    return (2.0 * m)[0][0] + (v[0] * m)[0][0] * (v[0] * m)[0][1]


@pytest.mark.parametrize("mode", ARRAY_MODES)
def test_number_times_list_subclass_with_own_rmul(mode):
    assert_array_gradient(mode, _matrix_scaled, np.array([2.0, 5.0]))


# -- a perturbed value kept past its forward-mode derivative call (pkY: pygfunction's result cache) -------------
# The module's cache kept the first call's duals: the next derivative call at the same point read them back as
# constants (0 for 6), and a plain call raised inside the library. A dual of an ended call is refused now.

def _through_cache(k):
    from tests.contexts import _tolerance_cache_lib as lib
    return float(np.sum(lib.resistances(k)))


def test_duals_kept_past_their_call_are_refused():
    from overdub.errors import OverdubError
    from tests.contexts import _tolerance_cache_lib as lib
    lib.CACHE.update(k=None, R=None)
    try:
        with ForwardContext():
            assert derivative(_through_cache, 2.0) == pytest.approx(6.0)
            with pytest.raises(OverdubError, match="kept past it"):
                derivative(_through_cache, 2.0)
        with pytest.raises(OverdubError, match="kept past it"):
            _through_cache(2.0)
        lib.CACHE.update(k=None, R=None)
        with pytest.raises(OverdubError, match="kept past it"):  # (jacfwd's second pass of directions)
            jacfwd(lambda v: _through_cache(v[0]) * v[1], np.array([2.0, 3.0]), chunk=1)
        lib.CACHE.update(k=None, R=None)
        with ADContext():  # (reverse mode keeps plain values there)
            assert gradient(_through_cache, 2.0)[0] == pytest.approx(6.0)
            assert gradient(_through_cache, 2.0)[0] == 0.0  # (the cache's value, a constant: as the code says)
    finally:
        lib.CACHE.update(k=None, R=None)


# -- a singular matrix's LinAlgError caught by the library (pkY: nashpy's support enumeration) -------------------
# forward mode took numpy's LinAlgError on duals for a missing rule, and the library's `except` never ran.

def _solve_or_fallback(x):
    m = np.array([[x, 2 * x], [1.0, 2.0]])  # (singular for every x)
    try:
        return float(np.linalg.solve(m, np.array([1.0, 1.0])).sum())
    except np.linalg.LinAlgError:
        return x * x + np.linalg.solve(np.array([[x, 1.0], [0.0, 2.0]]), np.array([1.0, x]))[0]


def test_singular_matrix_error_caught_by_the_code():
    assert_scalar_modes(_solve_or_fallback, 1.3)
    with ForwardContext():
        np.testing.assert_allclose(derivative(_solve_or_fallback, 1.3), fd.derivative(_solve_or_fallback, 1.3),
                                   rtol=1e-6)


def test_a_scipy_ufunc_without_a_rule_is_named_by_its_module():
    # (scipy.special's ufuncs say `numpy` as their module: the refusal named `numpy.ellipj`, pkX; ellipj has
    # rules since session 37: the test takes another ufunc without one)
    sc = pytest.importorskip("scipy.special")
    from contexts.rules.registry import registry
    from overdub.errors import OverdubError
    name = next(n for n in ("zetac", "mathieu_a", "bdtrik", "stdtridf") if registry.get(getattr(sc, n)) is None)

    def f(u):
        return getattr(sc, name)(u, *(0.5,) * (getattr(sc, name).nin - 1)) * 1.0
    with ADContext(), pytest.raises(OverdubError, match=rf"scipy\.special\.{name}"):
        gradient(f, 0.7)
    with ForwardContext(), pytest.raises(OverdubError, match=rf"scipy\.special\.{name}"):
        derivative(f, 0.7)


def _prod_with_start(x):
    return math.prod([x, 2.0, x * x], start=x + 1.0) + math.prod((v for v in [x, 3.0]), start=2.0)


def test_math_prod_with_a_differentiated_start():
    # (reverse mode: "the reverse rule of prod gives no cotangent for its keyword argument(s) start=", gen12)
    assert_scalar_modes(_prod_with_start, 0.7)


# -- an object's own `__call__` given a constant: its memo keyed by it (gen12 F6: refused in reverse mode) --------

class _Interpolant:
    def __init__(self, a):
        self.a, self._cache = a, {}

    def __call__(self, x):
        if x in self._cache:
            return self._cache[x]
        s = self.a * x * x
        self._cache[x] = s
        return s


def _memo_by_constant(a):
    p = _Interpolant(a)
    return p(0.3) + p(0.3) + p(1.5) * a


def test_own_call_memo_keyed_by_a_constant():
    assert_scalar_modes(_memo_by_constant, 0.7)
    from overdub.errors import OverdubError

    def keyed_by_x(a):
        p = _Interpolant(1.5)
        return p(a) + p(a)
    with ADContext(), pytest.raises(OverdubError, match="key"):  # (a differentiated key: still refused)
        gradient(keyed_by_x, 0.7)


def test_forward_over_forward_complex_written_into_real_derivatives():
    # (verify36: `z = np.array([a + 0j]); z += c * 1j` dropped the imaginary part of the inner derivative in
    # place: forward over forward's hessian [[2, 0], [0, 0]] for [[2, 0], [0, 2]]; refused now, and the auto
    # hessian, forward over reverse, is right)
    from overdub.errors import OverdubError

    def f(v):
        z = np.array([v[0] + 0j])
        z += v[1] * 1j
        return float(np.sum(np.abs(z) ** 2))
    x = np.array([0.5, 2.0])
    with pytest.raises(OverdubError, match="complex"):
        hessian(f, x, inner="forward")
    np.testing.assert_allclose(hessian(f, x), [[2.0, 0.0], [0.0, 2.0]], atol=1e-9)


def _class_beside_a_value(xs):
    return type(xs[0]), sum([x * x for x in xs])


def _returns_a_class(a):
    kind, s = _class_beside_a_value(np.array([a, 2.0 * a]))
    return s * (2.0 if kind is np.float64 else 1.0)


def test_a_class_returned_beside_a_value():
    # (the tangent twin's call on duals took a zero tangent of np.float64, the class: a TypeError, stat helper)
    assert_scalar_modes(_returns_a_class, 1.3)


# -- a loop unpacking a vector by the kinds of its parts, taken for a bisection (pkY's harness, impedance) --------
# `i += 1` in one branch and `a = np.asarray(a)` in the other stepped two variables each from itself: no bracket.

def _unpack(v, args):
    out, i = [], 0
    for a in args:
        if isinstance(a, float):
            out.append(v[i])
            i += 1
        else:
            a = np.asarray(a)
            out.append(v[i:i + a.size].reshape(a.shape))
            i += a.size
    return out


def _unpacked_sum(v):
    args = [0.5, np.zeros(2), 0.3]
    p, q, r = _unpack(v, args)
    return p * np.sum(q ** 2) + r ** 3


@pytest.mark.parametrize("mode", ARRAY_MODES)
def test_a_loop_unpacking_a_vector_is_no_bisection(mode):
    assert_array_gradient(mode, _unpacked_sum, np.array([0.5, 1.0, 2.0, 0.3]))


# -- a dict subclass's `__missing__` reached from C (pkZ: epidemik's parameter namespace) ----------------------
# `ns.__getitem__(k)`, `dict.__getitem__(ns, k)`, `map(ns.__getitem__, keys)` ran `__missing__` from C,
# unrecorded: 0 for 2; eval/exec/format_map with such a mapping ran natively, its fields unseen (0.15 for 0.3).

class _Namespace(dict):
    def __init__(self, params):
        super().__init__()
        self._params = params

    def __missing__(self, key):
        return self._params[key]


def _missing_by_method(b):
    ns = _Namespace({"beta": b})
    return ns.__getitem__("beta") * 2.0 + dict.__getitem__(ns, "beta") + sum(map(ns.__getitem__, ["beta"]))


def _missing_by_eval(b):
    return eval("beta / 2", {"__builtins__": {}}, _Namespace({"beta": b})) * b


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_dict_subclass_missing_reached_from_c():
    assert_scalar_modes(_missing_by_method, 0.3)
    from overdub.errors import OverdubError
    with ADContext(), pytest.raises(OverdubError):
        gradient(_missing_by_eval, 0.3)
    with ForwardContext():
        np.testing.assert_allclose(derivative(_missing_by_eval, 0.3), fd.derivative(_missing_by_eval, 0.3), rtol=1e-6)


# -- numpy's functions handing an object to its own method of their name (gen13 W4, C2) --------------------------
# `np.sum(obj)` calls `obj.sum(...)` (fromnumeric's `_wrapreduction`): reverse mode's rule took the object for an
# array (0), or its stand-in came back to numpy (a RecursionError for np.compress).

class _Column:
    def __init__(self, v):
        self.v = v

    def sum(self, axis=None, dtype=None, out=None, **kw):
        return np.sum(self.v) * 2.0

    def mean(self, axis=None, dtype=None, out=None, **kw):
        return np.sum(self.v) * 3.0

    def max(self, axis=None, out=None, **kw):
        return np.max(self.v)

    def round(self, decimals=0, out=None):
        return self.v * 2.0

    def compress(self, condition, axis=None, out=None):
        return self.v[:2] * 2.0


def _numpy_on_own_methods(x):
    c = _Column(x * x)
    return (float(np.sum(c)) + float(np.mean(c)) + float(np.max(c)) + float(np.sum(np.round(c)))
            + float(np.sum(np.compress([True, False, True, False], c))))


@pytest.mark.parametrize("mode", ARRAY_MODES)
def test_numpy_functions_calling_an_objects_own_method(mode):
    assert_array_gradient(mode, _numpy_on_own_methods, np.array([1.0, 2.0, 3.0, 0.2]))


# -- ravel / flatten / reshape with order 'K' or 'A' of a Fortran-ordered or permuted array (gen13 W6) -----------
# numpy reads such an array in memory order; reverse mode put the cotangent back in C order: permuted.

_WEIGHTS = np.arange(1.0, 7.0)


def _memory_order_reads(x):
    m = np.outer(x[:2], np.array([1.0, 10.0, 100.0]))        # (2, 3); m.T is Fortran-ordered
    p = np.outer(x[:3], x[2:4]).T                             # (2, 3), Fortran-ordered
    q = np.stack([np.outer(x[:2], x[1:4])] * 2).transpose(1, 0, 2)[:, ::-1]  # permuted, neither order
    return float(m.T.ravel(order="K") @ _WEIGHTS + m.T.flatten("A") @ _WEIGHTS ** 2
                 + m.T.reshape(6, order="A") @ np.sqrt(_WEIGHTS) + p.ravel(order="K") @ _WEIGHTS
                 + q.ravel(order="K") @ np.arange(12.0) + q.ravel(order="A") @ np.arange(12.0) ** 2)


def test_ravel_in_memory_order_reverse():
    x = np.array([0.4, 1.3, -0.7, 2.1])
    with ADContext():
        np.testing.assert_allclose(gradient(_memory_order_reads, x)[0], fd.gradient(_memory_order_reads, x)[0],
                                   rtol=1e-6)


class _Doubled(np.ndarray):
    def sum(self, axis=None, dtype=None, out=None, **kw):
        return np.asarray(self).sum() * 2.0

    def mean(self, axis=None, dtype=None, out=None, **kw):
        return np.asarray(self).sum() * 3.0


def _subclass_reductions(x):
    v = np.asarray(x * x).view(_Doubled)
    return float(np.sum(v)) + float(np.mean(v))


def test_ndarray_subclass_with_its_own_reductions():
    # (numpy's np.sum calls a subclass's own sum: the rules took it for an array, 0.39 for 3.11 in every
    # mode, gen13 W2; reverse mode runs it, forward mode too since session 58: numpy's functions call the
    # class's own methods on a dual of it)
    x = np.array([0.55, 0.9, 1.15, 1.3])
    with ADContext():
        np.testing.assert_allclose(gradient(_subclass_reductions, x)[0], fd.gradient(_subclass_reductions, x)[0],
                                   rtol=1e-6)
    np.testing.assert_allclose(jacfwd(_subclass_reductions, x), fd.gradient(_subclass_reductions, x)[0], rtol=1e-6)
