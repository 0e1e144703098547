"""Cases of session 31's sweeps (generated object-heavy programs; packages new to the project), each
distilled to the idiom the code uses and checked against finite differences or a closed form in every mode,
or asserting the refusal that stands for a silent wrong."""

import bisect
import operator

import numpy as np
import pytest

from contexts import ADContext, derivative, gradient, hessian, jacfwd, jvp
from overdub.errors import OverdubError
from tests import fd
from tests.modes import assert_array_gradient, assert_scalar_modes


# -- C functions written as the Python code they run (`Rule.stand_in`) ----------------------------------

def insort_pairs(a):
    lst = []
    for kv in [(a, a * a), (0.9, 1.0), (2.0, a)]:
        bisect.insort(lst, kv)
    return sum((i + 1) * v * k for i, (k, v) in enumerate(lst))


def insort_floats(a):
    lst = [0.1]
    for v in (a, 0.9, 2.0 * a):
        bisect.insort_left(lst, v)
    return lst[1] + 2 * lst[2] * lst[0] + 3 * lst[3] ** 2


def insort_keyed(a):
    class Item:
        def __init__(self, k, v):
            self.k, self.v = k, v
    lst = []
    for k, v in ((a, a * a), (0.9, 1.0), (2.0 * a, 3.0)):
        bisect.insort(lst, Item(k, v), key=operator.attrgetter("k"))
    return sum((i + 1) * it.v + it.k for i, it in enumerate(lst))


def permuted(a):
    rng = np.random.default_rng(3)
    v = rng.permutation(np.array([a, 2.0 * a, 3.0, np.sin(a)]))
    return float(v @ np.array([1.0, 2.0, 3.0, 4.0])) + rng.random()


def permuted_rows(a):
    rng = np.random.default_rng(1)
    m = np.array([[a, 1.0], [2.0, a * a], [3.0 * a, 0.5]])
    p = rng.permutation(m, axis=1)
    q = rng.permutation(m)
    return float(np.sum(p * np.arange(6.0).reshape(3, 2)) + np.sum(q[0] * q[2]))


def shuffled_array(a):
    rng = np.random.default_rng(0)
    c = np.array([a, 2.0 * a, 3.0, a ** 3])
    rng.shuffle(c)
    return float(c @ np.array([1.0, 2.0, 3.0, 4.0]))


def shuffled_list(a):
    rng = np.random.default_rng(5)
    c = [a, 2.0 * a, 3.0, a ** 3]
    rng.shuffle(c)
    return c[0] + 2 * c[1] + 3 * c[2] * c[3]


def chosen(a):
    rng = np.random.default_rng(2)
    pool = np.array([a, a * a, 1.0, np.exp(a)])
    s = rng.choice(pool, size=6)
    t = rng.choice(pool, size=2, replace=False)
    return float(s @ np.arange(1.0, 7.0) + t[0] * t[1]) + rng.random()


def methodcaller_of_values(a):
    class Spring:
        def __init__(self, k):
            self.k = k

        def energy(self, d):
            return 0.5 * self.k * d * d
    return (operator.methodcaller("energy", 2.0)(Spring(a))
            + operator.methodcaller("energy", a)(Spring(2.0 + a)))


def frompyfunc_made_here(a):
    fn = np.frompyfunc(lambda u, v: np.sin(u) * v + u * u, 2, 1)
    return float(fn(np.array([a, 0.5, a * a]), a).astype(float).sum())


def frompyfunc_two_outputs(a):
    fn = np.frompyfunc(lambda u: (u * u, np.cos(u)), 1, 2)
    p, q = fn(np.array([a, 2.0 * a]))
    return float(np.sum(p.astype(float) * q.astype(float)))


@pytest.mark.parametrize("f", [insort_pairs, insort_floats, insort_keyed, permuted, permuted_rows, shuffled_array,
                               shuffled_list, chosen, methodcaller_of_values, frompyfunc_made_here,
                               frompyfunc_two_outputs])
def test_c_functions_differentiated_as_the_code_they_run(f):
    # bisect.insort, Generator.permutation/shuffle/choice, methodcaller of values, np.frompyfunc were refused
    # ("no reverse rule for the C function ...", "no forward rule")
    assert_scalar_modes(f, 0.8)


def test_a_seeded_permutation_keeps_the_generators_stream():
    rng, ref = np.random.default_rng(7), np.random.default_rng(7)

    def f(x):
        return np.sum(rng.permutation(x) * np.arange(5.0)) + rng.random()
    x = np.linspace(0.1, 0.9, 5)
    with ADContext():
        g = gradient(f, x)[0]
    want = np.arange(5.0)[np.argsort(ref.permutation(5))]
    np.testing.assert_allclose(g, want)
    ref.random()
    assert rng.random() == ref.random()  # the same draws, no more


@pytest.mark.parametrize("mode", ["reverse", "forward", "jvp"])
def test_a_permutation_of_an_array_argument(mode):
    def f(x):
        rng = np.random.default_rng(11)
        return np.sum(rng.permutation(x) * np.linspace(1.0, 2.0, x.size) ** 2) + np.sum(rng.choice(x, 3) ** 3)
    with ADContext():
        assert_array_gradient(mode, f, np.array([0.3, -0.2, 0.7, 1.1]))


_HYPOT = np.frompyfunc(lambda u, v: (u * u + v * v) ** 0.5, 2, 1)  # made before any differentiation


def frompyfunc_made_before(a):
    return float(np.sum(_HYPOT(np.array([a, 2.0 * a]), np.array([1.0, a * a])).astype(float)))


def test_a_ufunc_np_frompyfunc_made_before_is_its_function():
    assert_scalar_modes(frompyfunc_made_before, 0.7)


def test_a_ufunc_np_frompyfunc_made_of_a_closure_over_a_differentiated_value():
    def f(a):
        return float(np.sum(made(a)(np.array([1.0, 2.0])).astype(float)))

    def made(a):
        return np.frompyfunc(lambda u: u * a * a, 1, 1)
    want = fd.derivative(f, 0.6)
    assert abs(jacfwd(f, 0.6) - want) < 1e-6 * abs(want)  # (the ufunc's function on each element's duals)
    assert abs(hessian(f, 0.6) - 6.0) < 1e-6
    with ADContext():  # made inside: np.vectorize of the closure, whose cells' cotangents come back
        assert abs(gradient(f, 0.6)[0] - want) < 1e-6 * abs(want)
    try:
        got = derivative(f, 0.6)
    except OverdubError:
        pass  # (the tangent twins give the closure's tangent to no ufunc: refused, at a conversion)
    else:
        assert abs(got - want) < 1e-6 * abs(want)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_a_ufunc_np_frompyfunc_made_before_of_a_closure_over_a_differentiated_value_is_refused():
    box = {}

    def f(a):
        box["a"] = a
        return float(np.sum(_SCALED(np.array([1.0, 2.0])).astype(float))) + a

    _SCALED = np.frompyfunc(lambda u: u * box["a"], 1, 1)
    with ADContext(), pytest.raises(OverdubError):  # (its cells may hold a differentiated value: dropped)
        gradient(f, 0.6)


# -- a global function reading module state the differentiated code changed, given to another callable ------

_BOX = {}


def _scaled_by_box(u):
    return u * _BOX["a"]


_VECTORIZED = np.vectorize(lambda u: u * _BOX["a"])
_PYUFUNC = np.frompyfunc(lambda u: u * _BOX["a"], 1, 1)


def state_through_map(a):
    _BOX["a"] = a * a
    return sum(map(_scaled_by_box, [1.0, 2.0])) + a


def state_through_sorted_key(a):
    _BOX["a"] = a
    return sum(sorted([1.0, 2.0], key=_scaled_by_box)) * a + _scaled_by_box(0.5)


def state_through_vectorize(a):
    _BOX["a"] = a * a
    return float(np.sum(_VECTORIZED(np.array([1.0, 2.0])))) + a


def state_through_frompyfunc(a):
    _BOX["a"] = a * a
    return float(np.sum(_PYUFUNC(np.array([1.0, 2.0])).astype(float))) + a


def state_through_frompyfunc_made_here(a):
    _BOX["a"] = a * a
    return float(np.sum(np.frompyfunc(_scaled_by_box, 1, 1)(np.array([1.0, 2.0])).astype(float))) + a


@pytest.mark.parametrize("f", [state_through_map, state_through_sorted_key, state_through_vectorize,
                               state_through_frompyfunc, state_through_frompyfunc_made_here])
def test_a_function_reading_changed_module_state_given_to_a_callable(f):
    # the call `map(h, [1.0, 2.0])` has constant arguments, but h reads the dict f just stored a*a into:
    # reverse mode took it for a constant (1.0 for 4.0, silently)
    want = fd.derivative(f, 0.6)
    with ADContext():
        assert abs(gradient(f, 0.6)[0] - want) < 1e-6 * abs(want)
    try:
        got = derivative(f, 0.6)
    except OverdubError:
        return  # (forward mode: np.vectorize reading a dual out of module state is refused)
    assert abs(got - want) < 1e-6 * abs(want)


# -- package sweep pkJ (bruges, pybotics, spectrum, niapy) and gen4's refusals ----------------------------

def _rotation_z(angle):
    return np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])


def looked_up_in_globals(a):
    # pybotics' `globals()[f"rotation_matrix_{axis}"](value)`: reverse mode's twin asked the engine's module
    # (KeyError; another module's function of that name would have been called silently)
    m = np.eye(2)
    for axis in "z":
        m = m @ globals()[f"_rotation_{axis}"](a)
    return float(m[0, 0] + 2.0 * m[1, 0]) + len(globals()["__name__"])


def namedtuple_made_inside(a):
    # bruges' `Pair = namedtuple(...)` inside the function: the reverse pass crashed restoring `__qualname__`
    from collections import namedtuple
    Pair = namedtuple("Pair", ["p", "q"])
    r = Pair(a * a, 3.0 * a)
    return r.p + r.q * r.p


def sqrt_at_zero_of_a_constant_entry(b):
    # numpy's kaiser: a constant packed into an array with a differentiated value has a zero tangent, and
    # sqrt's partial is infinite at 0: forward mode gave NaN (0 * inf)
    v = np.array([4.0, b])
    c = np.array([1.0, 2.0, 5.0]) - v[0] / 4.0
    return float(np.sum(np.sqrt(c)) * b + b)


def kaiser_end(beta):
    return float(np.kaiser(8, beta)[0] + np.kaiser(8, beta)[3])


def attrgetter_of_properties(a):
    class Model:
        def __init__(self, k):
            self._k = k

        @property
        def k(self):
            return self._k

        @property
        def derived(self):
            return np.sin(self._k) * self._k
    k, d = operator.attrgetter("k", "derived")(Model(a))
    return k * d + operator.attrgetter("_k")(Model(2.0 * a))


@pytest.mark.parametrize("f", [looked_up_in_globals, namedtuple_made_inside, attrgetter_of_properties])
def test_sweep_31_package_idioms(f):
    assert_scalar_modes(f, 0.7)


@pytest.mark.parametrize("f", [sqrt_at_zero_of_a_constant_entry, kaiser_end])
def test_sqrt_at_zero_of_a_constant_entry_is_right_or_nan(f):
    # (session 31 took a zero tangent times sqrt's infinite slope as 0, right for a constant entry; session 37
    # found the same rule made `np.cbrt(x ** 3)` at 0 a silent 0 for 1 (a zero tangent that moves to a higher
    # order): a zero tangent proves no constant, so the term is NaN again, honest, never a wrong number)
    want = fd.derivative(f, 0.7)
    for got in (gradient(f, 0.7)[0], derivative(f, 0.7)):
        assert got != got or abs(got - want) <= 1e-6 * abs(want) + 1e-12, (got, want)


def test_kaiser_window_end_against_its_closed_form():
    from scipy import special
    beta = 3.0
    want = -special.i1(beta) / special.i0(beta) ** 2  # d/dbeta of i0(0)/i0(beta)
    got = derivative(lambda b: float(np.kaiser(8, b)[0]), beta)
    assert got != got or abs(got - want) < 1e-12  # (NaN: see the test above)


def clip_at_its_bounds(x):
    return float(np.clip(x, -1.0, 1.0) * 3.0 + np.clip(2.0 * x, -2.0, 0.5))


def builtin_max_tie(x):
    return max(x, -1.0) * 2.0 + min(x, -1.0, 3.0) + max([x, -1.0, -1.5])


@pytest.mark.parametrize("f", [clip_at_its_bounds, builtin_max_tie])
def test_a_tie_with_a_bound_splits_the_derivative_as_central_differences_do(f):
    # np.clip and builtin max/min took one side's derivative at a tie (1.0 where central differences give
    # 0.5); np.maximum split it already. niapy clips the user's point in place onto its bounds.
    want = fd.derivative(f, -1.0)
    with ADContext():
        assert abs(gradient(f, -1.0)[0] - want) < 1e-6
    assert abs(derivative(f, -1.0) - want) < 1e-6


def test_clip_array_ties_split_in_every_argument():
    from fractions import Fraction

    def f(x, lo, hi):
        return np.sum(np.clip(x, lo, hi) * np.array([1.0, 2.0, 3.0, 4.0]))
    x, lo, hi = np.array([-1.0, 0.2, 1.0, 3.0]), -1.0, 1.0
    want = fd.gradient(f, x, lo, hi, h=1e-6, order=2)
    with ADContext():
        got = gradient(f, x, lo, hi)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, atol=1e-6)
    with ADContext():  # (exact types stay exact at a tie)
        g = gradient(lambda v: np.clip(v, Fraction(-1), Fraction(1)).sum(), np.array([Fraction(-1), Fraction(0)]))
    assert list(g[0]) == [Fraction(1, 2), Fraction(1)]


def integral_value_only(a):
    import math
    from scipy import integrate
    return integrate.quad(lambda t: math.exp(-0.7 * t * t) + 0.3 * t, 0.0, a + 0.5)[0]


def test_quad_value_without_its_error_estimate_in_every_forward_entry():
    want = fd.derivative(integral_value_only, 0.8)
    assert abs(derivative(integral_value_only, 0.8) - want) < 1e-6  # (derivative and jvp refused before)
    assert abs(jvp(integral_value_only, (0.8,), (1.0,))[1] - want) < 1e-6
    from scipy import integrate

    def with_estimate(a):
        v, e = integrate.quad(lambda t: t * a, 0.0, 1.0)
        return v + e
    with pytest.raises(OverdubError):  # the error estimate's derivative is still refused
        derivative(with_estimate, 0.8)


# -- package sweep pkK (statistics, pingouin, structuralcodes, pyfeng): reverse mode's false refusals -------

class _Geometry:
    def __init__(self, width, material):
        from scipy import special
        self.k = special.stdtrit(width, 0.9)  # (a C function without a rule, of the constant width)
        self.w = width
        self.material = material

    def quantile(self):
        from scipy import special
        return special.stdtrit(self.w, 0.95)  # (of a constant read off an object holding a derivative)


def c_function_of_constants_in_a_constructor(t):
    return _Geometry(12.0, t).k * t


def c_function_of_an_objects_constant_field(t):
    g = _Geometry(12.0, t * t)
    return g.quantile() * g.material


def scipy_stats_quantile_times_value(t):
    from scipy import stats
    return stats.t.ppf(0.975, 18) * t + stats.f.ppf(0.9, 3, 7) * t * t


@pytest.mark.parametrize("f", [c_function_of_constants_in_a_constructor, c_function_of_an_objects_constant_field,
                               scipy_stats_quantile_times_value])
def test_a_c_function_without_a_rule_given_constants_inside_differentiated_code(f):
    # "no reverse rule for the C function numpy.stdtrit, reached with differentiable inputs": its arguments
    # were constants, which reverse mode could not tell apart (a constructor's, an object's field)
    assert_scalar_modes(f, 1.3, second=False)
    with ADContext():
        assert abs(hessian(f, 1.3) - fd.derivative(lambda u: derivative(f, u), 1.3)) < 1e-5


def test_a_c_function_without_a_rule_given_a_differentiated_value_is_refused_where_it_is_called():
    from scipy import special

    class Wave:
        def __init__(self, order):
            self.k = special.struve(order, 0.9)  # (struve's derivative in its order is not known)

    def f(t):
        return Wave(t).k + t

    with ADContext(), pytest.raises(OverdubError, match="struve") as e:
        gradient(f, 1.5)
    assert "test_sweep_31_cases.py" in str(e.value)

    def g(t):
        return _Geometry(t, 1.0).k + t  # (stdtrit in its degrees of freedom: known since session 63)
    with ADContext():
        np.testing.assert_allclose(gradient(g, 12.0)[0], fd.derivative(g, 12.0), rtol=1e-6)
    # (stdtrit has rules since session 37: its probability p differentiated, its degrees of freedom refused)
    with ADContext():
        np.testing.assert_allclose(gradient(lambda t: special.stdtrit(3.0, t) * 2.0, 0.7)[0],
                                   fd.derivative(lambda t: special.stdtrit(3.0, t) * 2.0, 0.7), rtol=1e-6)
    import struct
    with ADContext(), pytest.raises(OverdubError):  # (bytes of a float: no cotangent could follow them)
        gradient(lambda t: struct.unpack("d", struct.pack("d", t))[0] * 2.0, 0.7)


def test_a_dataclass_with_post_init_and_a_field_left_to_its_default():
    from dataclasses import InitVar, dataclass, field

    @dataclass
    class Params:
        sigma: float
        intr: float = 0.0
        divr: float = 0.25

        def __post_init__(self):
            pass

    def f(s):  # pyfeng's models: every one a dataclass like this (refused: "its __post_init__ sets 'divr'")
        p = Params(sigma=0.2 * s, intr=0.05)
        return s * p.sigma + p.intr - p.divr * s
    assert_scalar_modes(f, 1.7)

    @dataclass
    class Derived:  # (pycoare's inputs: fields derived in __post_init__, refused as set natively)
        a: float
        b: float = 0.0
        c: list = field(default_factory=list)

        def __post_init__(self):
            self.b = 2.0 * self.a
            self.k = np.asarray(self.a, dtype=float) * self.b
            self.c.append(self.k)

    @dataclass(frozen=True)
    class Frozen:
        a: float
        scale: InitVar[float] = 3.0

        def __post_init__(self, scale):
            object.__setattr__(self, "b", self.a * scale)

    assert_scalar_modes(lambda s: Derived(s).b + Derived(a=s * s).k + Derived(s).c[0], 1.3)
    assert_scalar_modes(lambda s: Frozen(s).b * Frozen(s, scale=s).b, 1.3)


def kernel_density(data, h):
    n = len(data)

    def pdf(x):  # statistics.kde's closure: a count kept in a nonlocal (refused as a differentiated write)
        nonlocal n
        if len(data) != n:
            n = len(data)
        return sum(np.exp(-0.5 * ((x - xi) / h) ** 2) for xi in data) / (n * h)
    return pdf


def test_a_closure_keeping_a_count_in_a_nonlocal():
    assert_scalar_modes(lambda t: kernel_density([1.3, 2.7, 0.4, 3.9], 0.8)(t), 1.7)
    assert_scalar_modes(lambda h: kernel_density([1.3, 2.7, 0.4, 3.9], h)(1.7), 0.8)


# -- generated programs, gen5: Python idioms reverse mode got silently wrong ---------------------------------

def comprehension_two_fors(t):
    return sum([a * b for a in (t, t * t) for b in (1.0, 2.0, t)])


def comprehension_nested_lists(t):
    col, row = [t, 2.0 * t], [1.0, t]
    m = [[a * b for b in row] for a in col]
    return sum(map(sum, m))


def comprehension_pairwise(t):
    xs = [t, 2.0 * t, 0.5]
    return sum(sum((xi - xj) ** 2 for xj in xs) for xi in xs)


def comprehension_kernel(t):
    import math
    xs = [t, 2.0 * t, 0.5]
    return sum(map(sum, [[math.exp(-(xi - xj) ** 2) for xj in xs] for xi in xs]))


@pytest.mark.parametrize("f", [comprehension_two_fors, comprehension_nested_lists, comprehension_pairwise,
                               comprehension_kernel])
def test_an_outer_comprehension_variable_read_in_an_inner_loop(f):
    # the outer loop variable, read once in the inner loop, took the last inner pass's cotangent alone
    # (`[a * b for a in A for b in B]`: 1 for 3; pairwise sums, kernel matrices)
    assert_scalar_modes(f, 0.7)


def any_witness(t):
    vals = [t, 2.0 * t, 3.0 * t]
    w = None
    any((w := v) > 1.0 for v in vals)
    return w * w


def all_witness(t):
    vals = [t, 2.0 * t, 3.0 * t]
    w = None
    all((w := v) < 1.0 for v in vals)
    return w * w


def any_leaves_the_rest(t):
    g = iter([t, 2.0 * t, 3.0 * t])
    any(w > 1.0 for w in g)
    return sum(g)


def any_of_a_recording_map_over_an_iterator(t):
    w = [None]

    def pred(v):
        w[0] = v
        return v > 1.0
    any(map(pred, iter([t, 2.0 * t, 3.0 * t])))
    return w[0] * w[0]


def list_of_a_recording_map_over_an_iterator(t):
    w = [None]

    def pred(v):
        w[0] = v
        return v > 1.0
    list(map(pred, iter([t, 2.0 * t, 3.0 * t])))  # (the result unused: its draws were skipped, 0)
    return w[0] * w[0]


@pytest.mark.parametrize("f", [any_witness, all_witness, any_leaves_the_rest, any_of_a_recording_map_over_an_iterator,
                               list_of_a_recording_map_over_an_iterator])
def test_any_and_all_stop_at_the_first_decisive_item(f):
    # any()/all() of a generator expression drew every item under reverse mode: another value (the walrus
    # witness 4.41 for 1.96, the rest of a shared iterator spent) and its derivative
    from contexts import value_and_gradient
    with ADContext():
        value, _ = value_and_gradient(f, 0.7)
    assert value == pytest.approx(f(0.7))
    assert_scalar_modes(f, 0.7)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_a_return_in_finally_is_refused_in_reverse_mode():
    def f(t):
        try:
            return t * t  # (discarded by the finally's return: its derivative was added, 4.4 for 3)
        finally:
            return 3.0 * t + 1.0  # noqa: B012
    with ADContext(), pytest.raises(OverdubError, match="finally"):
        gradient(f, 0.7)
    assert derivative(f, 0.7) == pytest.approx(3.0)


class _Calibrated:
    def __init__(self, a, k):
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "k", k)

    def __getattribute__(self, name):
        v = object.__getattribute__(self, name)
        return -v * object.__getattribute__(self, "k") if name == "a" else v


class _Doubled(dict):
    def __getitem__(self, k):
        return super().__getitem__(k) * 2.0


class _Fallback(dict):
    def __missing__(self, k):
        return self["base"] * 3.0


def test_a_class_own_getattribute_getitem_and_missing():
    # reverse mode took the stored value's cotangent: 1.0 for -1.5 (a negating __getattribute__), 1 for 2,
    # 0 for 3; now the class's code, or refused (a super().__getitem__ of a dict subclass)
    assert_scalar_modes(lambda t: _Calibrated(t, 1.5).a * _Calibrated(t * t, 2.0).a, 0.7)
    assert_scalar_modes(lambda t: _Fallback(base=t)["other"] * t, 0.7)
    try:
        with ADContext():
            got = gradient(lambda t: _Doubled(a=t)["a"] * t, 0.7)[0]
    except OverdubError:
        pass
    else:
        assert got == pytest.approx(4 * 0.7)


class _Base:
    def __init__(self, x):
        self._d = x

    @property
    def v(self):
        return self._d * self._d


class _Derived(_Base):
    @property
    def v(self):
        return super().v + 1.0  # (pyfar's `Signal.time` returns `super().time`)

    def twice(self):
        return 2.0 * super(_Derived, self).v


def test_a_base_class_property_read_through_super():
    # reverse mode ran the base property natively through the super() proxy: 0.0 for 1.4, hessian 0
    assert_scalar_modes(lambda a: _Derived(a).v * a, 0.7)
    assert_scalar_modes(lambda a: _Derived(a).twice() + a, 0.7)


# -- package sweeps pkJ, pkK, pkL: false refusals --------------------------------------------------------

class _Filter:
    def __init__(self, w):
        self.w = np.array(w)  # (padasip: the weights from a list, then updated in place)

    def adapt(self, mu, x):
        self.w += mu * x
        return float(self.w @ self.w)


def weights_from_a_list_updated_in_place(mu):
    return _Filter([0.1, -0.2]).adapt(mu, np.array([1.0, 2.0])) * mu


def filled_with_a_value(t):
    # np.full / np.full_like of a differentiated value (scipy.stats.pearsonr, pyfeng): refused in forward mode
    return float(np.sum(np.full(3, t) * np.array([1.0, 2.0, 3.0])) + np.sum(np.full_like(np.zeros((2, 2)), t * t)))


def bessel_order_from_a_rounded_count(x):
    from scipy import special
    nmax = np.round(2 + x)  # PyMieScatt's number of terms: piecewise constant in x
    nu = np.arange(1, nmax + 1) + 0.5
    return float(np.sum(special.yv(nu, x)))


class _Scratch:
    k = 2.0

    def __init__(self, a):
        self._tmp = a * 3.0
        self.a = a + self._tmp
        self.k = a * a
        delattr(self, "_tmp")  # (pyfar's constructors)
        delattr(self, "k")  # (the class's constant shows again)


def deleted_attributes(a):
    o = _Scratch(a)
    return o.a * o.k


def text_of_a_string_beside_a_differentiated_call(a):
    def corr(x, seq):
        return 0.0 * x

    def tm(seq, x, never=False):
        seq = str(seq)  # biopython's Tm_NN: str() of a sequence, then parsed as bytes
        bytes(seq, encoding="ascii")
        if never:
            corr(x, seq)
        return x * len(seq)
    return tm("ACGT", a)


def test_weights_from_a_list_updated_in_place_by_a_method():
    # reverse mode and hessian right; forward mode refuses the update of a plain array made from a list
    # (numpy's np.array of a list stays plain: libraries make their indexes so), never a wrong number
    want = fd.derivative(weights_from_a_list_updated_in_place, 1.3)
    with ADContext():
        assert gradient(weights_from_a_list_updated_in_place, 1.3)[0] == pytest.approx(want, rel=1e-6)
    try:
        got = derivative(weights_from_a_list_updated_in_place, 1.3)
    except OverdubError:
        return
    assert got == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("f", [filled_with_a_value,
                               bessel_order_from_a_rounded_count, deleted_attributes,
                               text_of_a_string_beside_a_differentiated_call])
def test_sweep_31_false_refusals(f):
    assert_scalar_modes(f, 1.3 if f is not bessel_order_from_a_rounded_count else 2.3)


def test_delattr_of_a_differentiated_slot_value_is_refused():
    class Slotted:
        __slots__ = ("v",)

        def __init__(self, v):
            self.v = v

    def f(a, name="v"):
        s = Slotted(a)
        delattr(s, name)  # (a name known only when it runs: refused on an object holding a derivative)
        return a
    with ADContext(), pytest.raises(OverdubError, match="delattr"):
        gradient(f, 1.0)


# -- generated programs, gen6: the lowered form's bookkeeping -------------------------------------------------

def term_function_over_a_range(t):
    def g(i):
        return t * i  # (the int i took a cotangent, refused at iter() of the range)
    acc = 0.0
    for i in range(4):
        acc += g(i)
    return acc + sum(g(i) for i in range(3))


def nonlocal_written_by_a_nested_function(t):
    s = 0.0

    def mid(v):
        def inner(u):
            nonlocal s
            s += u * u
        for k in range(2):
            inner(v * (k + 1))
    for v in (t, 2.0 * t):
        mid(v)
    return s  # (0 for 35 in reverse mode)


def list_cell_written_through_a_helper(t):
    s = [0.0]

    def add(u):
        s[0] += u

    def helper(v):
        add(v)
    helper(t)
    helper(2.0 * t * t)
    return s[0]


@pytest.mark.parametrize("f", [term_function_over_a_range, nonlocal_written_by_a_nested_function,
                               list_cell_written_through_a_helper])
def test_closures_writing_enclosing_variables_through_other_functions(f):
    assert_scalar_modes(f, 0.7)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_silent_wrongs_of_gen6_are_refused_in_reverse_mode():
    import functools

    def through_sibling(t):
        s = 0.0

        def add(u):
            nonlocal s
            s += u

        def helper(v):
            add(v)
        helper(t)
        helper(2.0 * t)
        return s  # (reverse mode: 0 for 3)

    def cached_recursion(t):
        @functools.lru_cache(maxsize=None)
        def F(n):
            return t if n == 0 else 2.0 * F(n - 1)
        return F(2)  # (0 for 4)

    def callable_iterator(t):
        vals = iter([t, 2.0 * t, None])
        return sum(iter(lambda: next(vals), None))  # (0 for 3)

    def late_generator(t):
        c = t
        g = (c * w for w in (1.0, 2.0))
        c = 3.0 * t  # (Python's generator reads c when it runs: 9t; evaluated where it was made, 3t)
        return sum(g)

    def late_zip(t):
        ws = [t, 1.0]
        z = zip(ws, (1.0, 2.0))
        ws[0] = 3.0 * t
        return sum(a * b for a, b in z)

    for f, want in ((through_sibling, 3.0), (cached_recursion, 4.0), (callable_iterator, 3.0),
                    (late_generator, 9.0), (late_zip, 3.0)):
        assert derivative(f, 0.7) == pytest.approx(want)
        with ADContext(), pytest.raises(OverdubError):
            gradient(f, 0.7)


def test_next_inside_a_loop_over_the_same_iterator():
    def pairs(t):
        it = iter([t, 2.0 * t, 3.0 * t, 4.0 * t])
        acc = 0.0
        for k in it:
            v = next(it)  # (reverse mode gave 36 for 46: the draws interleave on one iterator; refused
            acc += k * v  # until session 34, when each item's position is read at its draw)
        return acc

    want = fd.derivative(pairs, 0.7)
    assert derivative(pairs, 0.7) == pytest.approx(want, rel=1e-6)
    with ADContext():
        assert gradient(pairs, 0.7)[0] == pytest.approx(want, rel=1e-6)
    with ADContext():  # (drawn as pairs by zip: followed)
        assert gradient(lambda t: sum(a * b for a, b in zip(*[iter([t, 2 * t, 3 * t, 4 * t])] * 2)), 0.7)[0] == \
            pytest.approx(want, rel=1e-6)


def test_setattr_by_a_constant_name_is_the_store_it_stands_for():
    import types

    class Scaled:
        @property
        def v(self):
            return self._v

        @v.setter
        def v(self, x):
            self._v = x * 3.0

    def f(t):  # (a SimpleNamespace's field by setattr was refused as "a slot or a C descriptor")
        o = types.SimpleNamespace(a=t)
        setattr(o, "a", o.a * 2.0)
        s = Scaled()
        setattr(s, "v", t * t)
        return o.a * t + s.v
    assert_scalar_modes(f, 0.7)
