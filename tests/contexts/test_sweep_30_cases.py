"""Cases of session 30's sweeps (geomdl, PyNite, colossus, lmoments3, properscoring, pylorentz, kinpy, ikpy;
galpy, POT, prysm, stonesoup, copulas, python_speech_features, smt, anastruct; generated object-heavy
programs), each distilled to the idiom the library uses, checked against finite differences or a closed
form, or asserting the refusal that stands for a silent wrong."""

import math

import numpy as np
import pytest
from scipy import special

from contexts import ADContext, gradient
from contexts.rules.registry import NoDerivative
from overdub.errors import OverdubError
from tests import fd
from tests.modes import assert_scalar_modes


# -- a loop variable bound again by a loop over items that carry no derivative --------------------------

def loop_variable_reused(k):
    # lmoments3's `for i in SUMM: ...` then `for i in range(...)`: reverse mode kept the first loop's
    # cotangent of i past the second loop's bindings (2.3 for 2.0; hessian 1.0 for 0)
    i = k
    for i in range(1, 3):
        pass
    return k * i


def loop_variable_reused_in_body(k):
    t = 0.0
    for i in [k, k]:
        pass
    for i in range(2):
        t = t + k * i
    return t


def loop_variable_reused_with_else(k):
    s = 0.0
    i = k
    for i in range(1, 3):
        if i > 5:
            break
        s = s + i
    else:
        s = s + 1.0
    return k * i + s


def loop_variable_tuple_target(k):
    i = k
    for i, j in zip(range(3), range(3)):
        pass
    return k * i * j


@pytest.mark.parametrize("f", [loop_variable_reused, loop_variable_reused_in_body, loop_variable_reused_with_else,
                               loop_variable_tuple_target])
def test_a_loop_over_constant_items_binds_its_variable_afresh(f):
    assert_scalar_modes(f, 0.3)


# -- np.vectorize given a closure -------------------------------------------------------------------------

def vectorized_closure_argument(m):
    # properscoring's `crps_quadrature(x, cdf)`: the closure was wrapped in a 0-d object array, whose
    # cotangent was lost (0.0 for 0.7)
    cdf = lambda y: y * m  # noqa: E731
    return float(np.vectorize(lambda x, c: c(x))(0.7, cdf))


class _Scale:
    def __init__(self, m):
        self.m = m

    def __call__(self, y):
        return y * self.m * self.m


def vectorized_object_argument(m):
    return float(np.sum(np.vectorize(lambda x, c: c(x))(np.array([0.7, 1.1]), _Scale(m))))


@pytest.mark.parametrize("f", [vectorized_closure_argument, vectorized_object_argument])
def test_vectorize_gives_an_argument_it_cannot_broadcast_to_each_call(f):
    want = fd.derivative(f, 0.2)
    with ADContext():
        assert gradient(f, 0.2)[0] == pytest.approx(want, rel=1e-6)


# -- constants computed inside a call -----------------------------------------------------------------------

_CACHE: dict = {}


def _basis(q, n):
    key = (q, n)
    if key not in _CACHE:
        _CACHE[key] = np.exp(-1j * np.arange(n) / q)
    return _CACHE[key]


def memo_keyed_by_a_computed_constant(c):
    # prysm's DFT-matrix cache: a key computed from literals only (no derivative can be in it) was taken
    # for a differentiated one, and the memo's entry refused
    q = 0.55 * 50.0 / 0.125
    return float(np.abs(_basis(q, 3) @ (np.array([1.0, 2.0, 3.0]) * c)) ** 2)


def test_a_memo_key_computed_from_literals_is_a_constant():
    memo_keyed_by_a_computed_constant(0.7)  # (an earlier plain call filled the memo)
    assert_scalar_modes(memo_keyed_by_a_computed_constant, 0.7, second=False)


class _Cutoff:
    # galpy's PowerSphericalPotentialwCutoff: `gammainc(1.0 - self.alpha / 2.0, r ** 2)`, a constant field
    def __init__(self):
        self.alpha = 1.8

    def value(self, r):
        return special.gammainc(1.0 - self.alpha / 2.0, r ** 2.0)


def test_a_parameter_without_a_closed_form_computed_from_a_constant_field():
    # the adjoint's unknown cotangent of `a` went through `1.0 - alpha / 2.0`'s adjoint, which refused at
    # once: now it is unknown through linear steps and dropped at the field, which is not differentiated
    p = _Cutoff()
    want = fd.derivative(p.value, 1.1)
    with ADContext():
        assert gradient(p.value, 1.1)[0] == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("f", [  # (struve's order: gammainc's a has a numerical derivative now)
    lambda a: special.struve(1.0 - a / 2.0, 2.0),
    lambda a: float(np.sum(special.struve(1.0 - np.array([a, 2 * a]) / 2.0, 2.0))),
    lambda a: special.struve(-(a * 3.0) + 2.0, 2.0) * 2.0,
])
def test_a_differentiated_parameter_without_a_closed_form_is_still_refused(f):
    with ADContext(), pytest.raises(NoDerivative):
        gradient(f, 0.5)


class _Holder:
    def __init__(self, a):
        self.a = a


def test_an_object_input_whose_field_has_no_closed_form_is_refused():
    with ADContext(), pytest.raises(OverdubError):
        gradient(lambda o: special.struve(1.0 - o.a / 2.0, 2.0), _Holder(0.5))


# -- generated object-heavy programs (gen3) ----------------------------------------------------------------

class _Converged(Exception):
    pass


class _Solver:
    def run(self, a):
        self.root = a * a
        raise _Converged()


def _fill_and_raise(box, a):
    box["r"] = a * a
    raise _Converged()


def stored_then_raised_on_object(a):
    # a solver's `self.root = t; raise Converged()`, caught by its caller: the callee's recording ended with
    # the raise, and reverse mode gave 0.0 for 3.0
    s = _Solver()
    try:
        s.run(a)
    except _Converged:
        pass
    return s.root


def stored_then_raised_in_dict(a):
    box = {}
    try:
        _fill_and_raise(box, a)
    except _Converged:
        pass
    return box["r"]


@pytest.mark.parametrize("f", [stored_then_raised_on_object, stored_then_raised_in_dict])
def test_a_store_before_a_raise_caught_by_the_caller(f):
    from contexts import derivative
    want = fd.derivative(f, 1.5)
    assert derivative(f, 1.5) == pytest.approx(want, rel=1e-6)  # (forward mode: 0.0 for the dict before)
    with ADContext():
        try:
            got = gradient(f, 1.5)[0]
        except OverdubError:
            return  # refused: the recording of the callee's work ends with the raise
    assert got == pytest.approx(want, rel=1e-6)


def test_a_call_raising_without_storing_is_not_refused():
    def parse(v):
        y = v * 2.0
        raise ValueError(y)

    def f(a):
        try:
            parse(a)
        except ValueError:
            pass
        return a * 3.0
    with ADContext():
        assert gradient(f, 0.5)[0] == pytest.approx(3.0)


class _Meter:
    stats: dict = {}

    def __init__(self, v):
        self.v = v

    def add(self):
        _Meter.stats["sum"] = _Meter.stats.get("sum", 0.0) + self.v


def class_held_accumulator(a):
    # per-class statistics a method adds to, read back through the class: 0.0 (then 1.5) for 2.5
    _Meter.stats = {}
    for v in (a, 1.5 * a):
        _Meter(v).add()
    return _Meter.stats["sum"]


def class_held_accumulator_inline(a):
    _Meter.stats["sum"] = 0.0
    for v in (a, 1.5 * a):
        _Meter.stats["sum"] = _Meter.stats.get("sum", 0.0) + v
    return _Meter.stats["sum"]


@pytest.mark.parametrize("f", [class_held_accumulator, class_held_accumulator_inline])
def test_a_container_a_class_holds(f):
    assert_scalar_modes(f, 0.7)


def multiply_into_its_input(a):
    z = np.array([1.0, 1.0, 1.0])
    np.multiply(z, a * a, out=z)  # (forward mode's tangent read z after the write: 2.058 for 4.2)
    return float(z.sum())


def divide_into_a_view_of_its_input(a):
    z = np.array([1.0, 2.0, 3.0, 4.0])
    np.divide(z[::-1], a, out=z)
    return float(z @ np.arange(4.0))


@pytest.mark.parametrize("f", [multiply_into_its_input, divide_into_a_view_of_its_input])
def test_a_ufunc_writing_into_its_own_input(f):
    from contexts import jacfwd, jvp
    want = fd.derivative(f, 0.7)
    assert_scalar_modes(f, 0.7, second=False)  # (hessian refuses a dual written into a constant array)
    assert jvp(f, (0.7,), (1.0,))[1] == pytest.approx(want, rel=1e-6)
    assert float(jacfwd(f, 0.7)) == pytest.approx(want, rel=1e-6)


class _Wrapped:
    def __init__(self, v):
        self.v = v

    def __array_ufunc__(self, ufunc, method, *inputs, **kw):
        args = [i.v if isinstance(i, _Wrapped) else i for i in inputs]
        return _Wrapped(getattr(ufunc, method)(*args, **kw))


@pytest.mark.parametrize("f", [
    lambda a: float(np.add.reduce(_Wrapped(np.array([a, 2 * a]))).v),
    lambda a: float(np.multiply.reduce(_Wrapped(np.array([a, 2 * a]))).v),
    lambda a: float(np.add.accumulate(_Wrapped(np.array([a, 2 * a]))).v[-1]),
    lambda a: float(np.sin(_Wrapped(np.array([a, 2 * a]))).v.sum()),
], ids=["reduce", "multiply_reduce", "accumulate", "call"])
def test_a_ufunc_method_on_an_object_with_its_own_array_ufunc(f):
    want = fd.derivative(f, 0.7)
    with ADContext():
        assert gradient(f, 0.7)[0] == pytest.approx(want, rel=1e-6)


def _warm_newton(a, t, how):
    for i in range(50):
        r = t ** 3 + a * t - 1.5
        if how == "and" and abs(r) < 1e-10 and i < 100:
            break
        if how == "or" and (i > 100 or abs(r) < 1e-10):
            break
        t = t - r / (3 * t * t + a)
    return t


@pytest.mark.parametrize("how", ["and", "or"])
def test_an_iteration_started_at_its_answer_with_its_test_in_a_boolean_operation(how):
    t0 = 1.0
    for _ in range(40):
        t0 = _warm_newton(0.9, t0, how)  # (the root at a = 0.9: a warm start; no step is taken)
    with ADContext(), pytest.raises(OverdubError):
        gradient(lambda a: _warm_newton(a, t0, how), 0.9)  # (0.0 for -0.2719 before)
    t1 = 1.0  # started away from the root, it iterates: the implicit function's derivative
    want = -t0 / (3 * t0 * t0 + 0.9)
    with ADContext():
        assert gradient(lambda a: _warm_newton(a, t1, how), 0.9)[0] == pytest.approx(want, rel=1e-6)


# -- a staircase far finer than its value: round(t, 12), a memo keyed by a rounded or formatted value ------

def _modes_refuse(f, x):
    from contexts import derivative, hessian
    with ADContext(), pytest.raises(OverdubError):
        gradient(f, x)
    with pytest.raises(OverdubError):
        derivative(f, x)
    with pytest.raises(OverdubError):
        hessian(f, x)


def rounded_to_noise(t):
    # a value cleaned of noise: the staircase's derivative is 0, central differences (and the program's values)
    # give 1 (2.7742 for the sum)
    return round(t, 12) + t * t + 0.5 * t


def truncated_to_nanos(t):
    return int(t * 1e9) * 1e-9 + t * t


@pytest.mark.parametrize("f", [rounded_to_noise, truncated_to_nanos])
def test_a_staircase_far_finer_than_its_value_is_refused(f):
    _modes_refuse(f, 0.95823)


def _memoised(key_of):
    memo = {}

    def f(t):
        key = key_of(t)
        if key in memo:
            return memo[key]
        v = t * t + np.exp(-0.5 * t) * t
        memo[key] = v
        return v
    return f


def _round_key(t):
    return round(t, 10)


def _nano_key(t):
    return int(round(t * 1e9))


def _text_key(t):
    return f"{t:.10g}"


def _tuple_key(t):
    return (3, round(t, 8))


@pytest.mark.parametrize("key_of", [_round_key, _nano_key, _text_key, _tuple_key])
def test_a_memo_keyed_by_a_rounded_or_formatted_value_is_refused(key_of):
    # a property cache keyed by `round(T, 10)` or `f"{T:.10g}"`, filled by an earlier plain call at the same
    # point, served its plain value: 0.0 for 2.0022 in every mode
    f = _memoised(key_of)
    f(0.8)
    _modes_refuse(f, 0.8)


def rounded_for_a_test_only(p):
    # iapws' `getphase`: `P = round(P, 8)` then only compared: the step decides a test, no value
    q = round(p, 8)
    if q > 2.0:
        return p * p
    return 3.0 * p


def coarse_round_times(t):
    return round(t, 2) * t  # (a step of 0.01 beside 0.83: the staircase central differences see)


@pytest.mark.parametrize("f", [rounded_for_a_test_only, coarse_round_times])
def test_a_round_that_only_decides_a_test_or_is_coarse_is_differentiated(f):
    assert_scalar_modes(f, 0.83)


def _fine(stair):
    return lambda t: stair(t) + t * t


@pytest.mark.parametrize("stair", [
    lambda t: t // 1e-12 * 1e-12,
    lambda t: float(np.round(t, 12)),
    lambda t: float(np.floor(t * 1e12) / 1e12),
    lambda t: float(np.rint(t * 1e12) * 1e-12),
    lambda t: t - math.fmod(t, 1e-12),
    lambda t: t - t % 1e-12,
    lambda t: divmod(t, 1e-12)[0] * 1e-12,
    lambda t: hash(t) * 0.0 + t,
], ids=["floordiv", "np_round", "np_floor", "np_rint", "fmod", "mod", "divmod", "hash"])
def test_every_spelling_of_a_fine_staircase_is_refused(stair):
    _modes_refuse(_fine(stair), 0.8123)


def mod_bound_again(x):
    x = x % 2.0  # (a remainder by a coarse step, the variable bound again: reverse mode's check crashed)
    return x * x


def floordiv_bound_again(x):
    k = x // 0.5
    x = x - k * 0.5
    return x * x + k


@pytest.mark.parametrize("f", [mod_bound_again, floordiv_bound_again])
def test_a_coarse_remainder_is_differentiated(f):
    assert_scalar_modes(f, 1.3)


# -- crashes and false refusals of the sweeps -----------------------------------------------------------------

def add_at_list_of_values(a):
    # `np.add.at(self.a, [0, 0, 2], [u, v, 1.0])`: reverse mode crashed merging the list's cotangent
    z = np.zeros(3)
    np.add.at(z, [0, 0, 2], [a, 2 * a, 1.0])
    return float(z @ np.array([1.0, 0.5, 0.25]))


def enumerated_items(a):
    # np.ndenumerate: forward mode's .flat of a dual array had no `coords`; reverse refused numpy's flatiter
    arr = np.array([[a, 2 * a], [a * a, 1.0]])
    acc = 0.0
    for (i, j), v in np.ndenumerate(arr):
        acc += v ** (i + j + 1)
    return acc


def _is_array(v):
    try:
        iter(v)
        return True
    except TypeError:
        return False


def probed_for_an_array(z):
    # colossus' isArray: `iter(z)` of a number raises TypeError, which forward mode made a refusal
    return z * z if not _is_array(z) else sum(z)


def test_np_add_at_given_a_list_of_values():
    want = fd.derivative(add_at_list_of_values, 0.7)
    with ADContext():
        assert gradient(add_at_list_of_values, 0.7)[0] == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("f", [enumerated_items, probed_for_an_array])
def test_ndenumerate_and_the_iter_probe(f):
    assert_scalar_modes(f, 0.7)


@pytest.mark.parametrize("f", [
    lambda x: float(__import__("scipy").stats.t.cdf(x, 6.0)),
    lambda x: float(__import__("scipy").stats.gamma.cdf(x, 2.5)),
], ids=["t", "gamma"])
def test_a_distribution_with_a_constant_shape_parameter(f):
    # scipy.stats' argsreduce broadcasts the literal shape with x: the unknown cotangent of the shape (stdtr,
    # gammainc have none in it) went through np.broadcast_arrays' adjoint, which refused (arch, pycircstat2)
    want = fd.derivative(f, 0.7)
    with ADContext():
        assert gradient(f, 0.7)[0] == pytest.approx(want, rel=1e-6)
    shape = lambda df: float(__import__("scipy").stats.t.cdf(0.7, df))  # noqa: E731
    with ADContext():  # (the shape differentiated: a numerical partial, scipy_special_shape)
        assert gradient(shape, 6.0)[0] == pytest.approx(fd.derivative(shape, 6.0), rel=1e-6)


class _Property:
    # stonesoup's `Property`: a data descriptor of Python code, set by `setattr(self, name, value)`
    def __set_name__(self, owner, name):
        self.slot = "_property_" + name

    def __get__(self, instance, owner):
        return self if instance is None else getattr(instance, self.slot)

    def __set__(self, instance, value):
        setattr(instance, self.slot, value)


class _Base:
    def __init__(self, **kwargs):
        for name in ("ndim", "noise"):
            setattr(self, name, kwargs.pop(name))


class _Model(_Base):
    ndim = _Property()
    noise = _Property()


def built_through_descriptors(r):
    m = _Model(ndim=2, noise=r)
    return float(np.sum(m.noise * np.eye(m.ndim)) * r)


def test_setattr_through_a_python_descriptor():
    assert_scalar_modes(built_through_descriptors, 0.5)
