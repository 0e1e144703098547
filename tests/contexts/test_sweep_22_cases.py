"""Cases found by the sweeps of session 22 (pure-Python PyPI packages: opt_einsum, geographiclib,
statistics; generated programs; scipy's solvers), each checked against central differences or a closed
form."""

import math

import numpy as np
import pytest

from contexts import derivative, gradient, hessian, hvp, jacfwd, jacobian, jvp
from tests import fd

X6 = np.array([0.3, -1.2, 0.7, 2.1, 0.5, -0.4])


@pytest.mark.parametrize("f", [
    lambda x: x.reshape(2, 3).T,
    lambda x: np.sin(x.reshape(2, 3)).T * 2.0,
    lambda x: np.asfortranarray(np.sin(x.reshape(2, 3))),
    lambda x: np.swapaxes(np.outer(x[:2], x[2:]).reshape(2, 2, 2), 0, 2),
    lambda x: np.einsum("ij,jk->ki", x.reshape(2, 3), np.cos(x).reshape(3, 2)),
], ids=["transpose", "elementwise of a transpose", "asfortranarray", "swapaxes", "einsum transposed"])
def test_jacobian_of_an_output_not_in_c_order(f):
    # (the seeds were zeros_like the output, F-ordered, and the one-hot went into reshape's copy: every
    # entry of reverse mode's Jacobian was 0; opt_einsum.contract returns such transposes)
    expected = fd.jacobian(f, X6)
    np.testing.assert_allclose(jacobian(f, X6), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacfwd(f, X6), expected, rtol=1e-6, atol=1e-8)


def test_put_into_a_fortran_ordered_array_of_a_list_holding_a_differentiated_value():
    # (forward mode: the list [d, 3.0] reached np.shape, which refused the dual; reverse mode's cotangent
    # copy of an F-ordered array took its flat writes in a copy)
    def f(x):
        a = np.asfortranarray(np.sin(x.reshape(3, 3)))
        a.put([0, 4], [x[1] * 2.0, 3.0])
        return (a * a * np.arange(9.0).reshape(3, 3)).sum()
    x = np.linspace(0.1, 0.9, 9)
    expected = fd.gradient(f, x)[0]
    np.testing.assert_allclose(gradient(f, x)[0], expected, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(jacfwd(f, x), expected, rtol=1e-7, atol=1e-9)


def test_copysign_of_a_constant_by_a_differentiated_sign_nested():
    # (geographiclib's atan2d: `math.copysign(180, y)`; forward over forward made its zero tangent as
    # type(x)(0) of a dual: TypeError)
    def g(x):
        return math.copysign(1.5, x) * x * x
    assert derivative(lambda x: derivative(g, x), 0.37) == pytest.approx(3.0, rel=1e-12)
    p = np.array([0.37, -0.81])
    f = lambda p: math.copysign(1.5, p[0]) * p[0] * p[1]  # noqa: E731
    expected = np.array([[0.0, 1.5], [1.5, 0.0]])
    np.testing.assert_allclose(hessian(f, p, inner="forward"), expected, atol=1e-12)
    np.testing.assert_allclose(hessian(f, p), expected, atol=1e-12)


def test_hvp_through_sorted_of_an_array():
    # (statistics.median: forward over reverse returned the gradient of the dual array as a list with
    # None entries)
    x = np.array([1.37, 0.42, 2.91, 1.88, 0.73])
    v = np.array([0.3, -0.2, 0.5, 0.1, 0.7])
    f = lambda x: sorted(x)[2] * sorted(x)[1]  # noqa: E731  (= x[0] * x[4])
    expected = fd.hessian(f, x) @ v
    for inner in ("auto", "forward"):
        got = hvp(f, x, v, inner=inner)
        assert isinstance(got, np.ndarray) and got.dtype == np.float64
        np.testing.assert_allclose(got, expected, atol=1e-6)
    h = hessian(lambda x: sorted(x)[2] ** 2, x)
    assert h.dtype == np.float64
    np.testing.assert_allclose(h, fd.hessian(lambda x: sorted(x)[2] ** 2, x), atol=1e-6)


# -- reverse mode and stores it did not record: a class's dunder run by Python, callbacks of builtins ------

class _Lazy:  # the library idiom: a lazily computed attribute, filled by a dunder Python runs
    def __init__(self, w):
        self.w = w
        self._c = None

    def __getitem__(self, i):
        if self._c is None:
            self._c = self.w * 2.0
        return self._c * i

    def __len__(self):
        self.n = self.w * 2.0
        return 3

    def __neg__(self):
        self.n = self.w * 2.0
        return self

    def __iter__(self):
        self.n = self.w * 2.0
        return iter(())

    def __reversed__(self):
        self.n = self.w * 2.0
        return iter(())


def _lazy_item(x):
    return _Lazy(x)[3.0]  # 6x


def _lazy_len(x):
    s = _Lazy(x)
    len(s)
    return s.n  # 2x


def _lazy_neg(x):
    s = _Lazy(x)
    -s
    return s.n


def test_a_store_made_by_a_getitem_is_recorded_in_reverse_mode():
    # (session 35: `s[i]` of a class's own `__getitem__` runs its twin in the forward sweep, so the store
    # into self is recorded; before, it was refused, and earlier still the gradient was 0)
    exact = fd.derivative(_lazy_item, 0.7)
    assert gradient(_lazy_item, 0.7)[0] == pytest.approx(exact, rel=1e-8)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
@pytest.mark.parametrize("f", [_lazy_len, _lazy_neg], ids=["len(s)", "-s"])
def test_a_store_made_by_a_dunder_python_runs_is_refused_in_reverse_mode(f):
    # (reverse mode runs these natively and re-runs them in its reverse pass: the store into self was not
    # recorded, and the gradient was 0)
    from contexts import UnsupportedFunction
    exact = fd.derivative(f, 0.7)
    assert derivative(f, 0.7) == pytest.approx(exact, rel=1e-8)
    with pytest.raises(UnsupportedFunction, match="did not record"):
        gradient(f, 0.7)
    by_name = lambda x: _Lazy(x).__getitem__(3.0)  # noqa: E731  (called by name: recorded)
    assert gradient(by_name, 0.7)[0] == pytest.approx(6.0, rel=1e-12)


def _lazy_loop(x):
    s = _Lazy(x)
    for _ in s:
        pass
    return s.n


def _lazy_reversed(x):
    s = _Lazy(x)
    reversed(s)
    return s.n


@pytest.mark.parametrize("f", [_lazy_loop, _lazy_reversed], ids=["for", "reversed"])
def test_a_store_made_by_iteration_reaches_the_gradient(f):
    # (`for _ in s`: the `__iter__` twin's pullback was skipped, no item having a cotangent; `reversed(s)`
    # ignored the class's `__reversed__`)
    assert gradient(f, 0.7)[0] == pytest.approx(2.0, rel=1e-12)
    assert derivative(f, 0.7) == pytest.approx(2.0, rel=1e-12)


class _Acc:
    def __init__(self):
        self.total = 0.0

    def add(self, v):
        self.total += v
        return self.total


def _map_closure(x):
    acc = _Acc()

    def fn(q):
        acc.total = q * 2.0
        return 0
    list(map(fn, [x]))
    return acc.total


def _reduce_lambda(x):
    import functools
    acc = _Acc()
    functools.reduce(lambda a, q: acc.add(q) * 0.0 + a, [x, x], 0.0)
    return acc.total


def _accumulate_lambda(x):
    import itertools
    acc = _Acc()
    list(itertools.accumulate([x, x, x], lambda a, q: acc.add(q)))
    return acc.total


def _object_in_a_display(x):
    acc = _Acc()

    def fn(q, a):
        a.total = q * 2.0
        return 0
    list(map(fn, [x], [acc]))
    return acc.total


@pytest.mark.parametrize("f", [_map_closure, _reduce_lambda, _accumulate_lambda, _object_in_a_display],
                         ids=["map closure", "reduce lambda", "accumulate lambda", "object in a display"])
def test_a_callback_storing_into_an_object(f):
    # (the activity analysis left `acc` inactive: a function given away that changes a captured object, an
    # object passed inside a display: the gradient was 0)
    exact = fd.derivative(f, 0.7)
    assert gradient(f, 0.7)[0] == pytest.approx(exact, rel=1e-7)
    assert derivative(f, 0.7) == pytest.approx(exact, rel=1e-7)


def _key_appending(x):
    log = []

    def key(q):
        log.append(q * 2.0)
        return q
    sorted([x, 1.5], key=key)
    return sum(log)


def _array_in_a_callback(x):
    out = np.zeros(2)

    def put(i):
        out[i] = x * 2.0
        return i
    list(map(put, [0, 1]))
    return out.sum()


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
@pytest.mark.parametrize("f", [_key_appending, _array_in_a_callback], ids=["list.append", "array item"])
def test_a_callback_changing_a_captured_list_or_array_is_refused(f):
    # (the caller's cotangent for the list or array after the change could not reach the closure: 0)
    from contexts import UnsupportedFunction
    with pytest.raises(UnsupportedFunction, match="captures"):
        gradient(f, 0.7)
    assert derivative(f, 0.7) == pytest.approx(fd.derivative(f, 0.7), rel=1e-7)


def test_cmath_second_derivatives_in_every_inner_mode():
    # (the adjoint's conj(f'(z)) was left unconjugated on a complex dual: f'' had the wrong sign whenever
    # reverse mode was involved)
    import cmath
    f = lambda p: cmath.exp(complex(0.0, p[0])).real + abs(cmath.sqrt(complex(1.0, p[0]))) ** 3  # noqa: E731
    p = np.array([0.5])
    expected = fd.hessian(f, p)
    for inner in ("auto", "reverse", "forward"):
        np.testing.assert_allclose(hessian(f, p, inner=inner), expected, rtol=1e-5)
    g = lambda s: cmath.exp(1j * s).real  # noqa: E731
    assert gradient(lambda q: gradient(g, q)[0], 0.5)[0] == pytest.approx(-math.cos(0.5), rel=1e-12)


def _python_division(x):
    try:
        return x / int(x * 0.0)  # Python floats: ZeroDivisionError; numpy's float64: inf
    except ZeroDivisionError:
        return math.cos(x)


@pytest.mark.parametrize("kind", [list, tuple])
def test_jacfwd_of_a_list_of_python_floats_keeps_python_arithmetic(kind):
    # (the list became a dual array, whose entries are numpy float64: jacfwd was inf, the Hessian raised,
    # `(p - 2.0) ** 0.5` was nan where Python's is complex)
    x = 0.7
    g = lambda p: _python_division(p[0]) * p[1]  # noqa: E731
    k = lambda p: abs((p[0] - 2.0) ** 0.5) + p[1]  # noqa: E731
    p = kind([x, 1.3])
    np.testing.assert_allclose(jacfwd(g, p), [-math.sin(x) * 1.3, math.cos(x)], rtol=1e-12)
    np.testing.assert_allclose(jacfwd(k, p), [-0.5 / math.sqrt(2.0 - x), 1.0], rtol=1e-12)
    np.testing.assert_allclose(hessian(g, p), [[-math.cos(x) * 1.3, -math.sin(x)], [-math.sin(x), 0.0]],
                               rtol=1e-12, atol=1e-15)
    assert jacfwd(lambda p: len(p + kind([1.0])) * p[0], p).tolist() == [3.0, 0.0]  # (a list's +, not an array's)


def test_an_in_place_operator_on_a_constant_shared_array_or_list():
    # (reverse mode left `b += 2.0` of constants as `b = b + 2.0`: a, sharing b's array, kept its old
    # values, a wrong value and derivative; a class with only `__iadd__` raised TypeError)
    def f(x):
        a = np.ones(3)
        b = a
        b += 2.0
        return (a * x).sum()

    def g(x):
        items = [1.0]
        alias = items
        alias += [2.0]
        return sum(items) * x

    class Acc:
        def __init__(self, v):
            self.v = v

        def __iadd__(self, o):
            self.v = self.v * 0.5 + o
            return self

    def h(x):
        acc = Acc(0.64)
        acc += 0.64
        return acc.v * x
    for fn, exact in ((f, 9.0), (g, 3.0), (h, 0.96)):
        assert gradient(fn, 0.5)[0] == pytest.approx(exact, rel=1e-12)
        assert derivative(fn, 0.5) == pytest.approx(exact, rel=1e-12)


def test_a_rule_of_a_python_function_called_by_keyword():
    # (`scipy.linalg.expm(A=a)`: the adjoint got A by name: TypeError)
    linalg = pytest.importorskip("scipy.linalg")
    a = np.array([[0.4, 0.3], [0.1, 0.5]])
    for f in (lambda a: linalg.expm(A=a)[0, 1], lambda a: np.real(linalg.sqrtm(A=a + 2.0 * np.eye(2))).sum()):
        np.testing.assert_allclose(gradient(f, a)[0], fd.gradient(f, a)[0], rtol=1e-6, atol=1e-9)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_a_differentiated_value_stored_into_a_c_field():
    # (reverse mode undid `c.value = ...` by deleting the field: TypeError; forward mode refuses, by name)
    import ctypes

    from contexts.forward.dual import DualConversionError

    def f(x):
        c = ctypes.c_double()
        c.value = x * 2.0
        return c.value * x
    assert gradient(f, 1.5)[0] == pytest.approx(6.0, rel=1e-12)
    with pytest.raises(DualConversionError):
        derivative(f, 1.5)


def test_compiled_code_refusing_a_dual_is_refused_by_name():
    # (f2py's IndexError "can't be converted to double" from BLAS's dscal, and pybind11's TypeError from
    # HiGHS's fields, passed through as they were)
    from contexts import MissingRule
    from contexts.forward.dual import DualConversionError
    blas = pytest.importorskip("scipy.linalg.blas")
    optimize = pytest.importorskip("scipy.optimize")
    with pytest.raises(MissingRule):
        jacfwd(lambda x: blas.dscal(x[0] * x[1], np.ones(3)), np.array([2.0, 3.0]))
    with pytest.raises(DualConversionError, match="compiled code"):
        jacfwd(lambda c: optimize.linprog(c, A_ub=[[1.0, 1.0]], b_ub=[1.0], bounds=[(0, 1)] * 2).fun,
               np.array([-1.0, -2.0]))


def test_a_singular_partial_times_a_zero_tangent_is_no_zero():
    # (a guard: 0 there would be wrong where the zero is first order, `np.cbrt(x ** 3)` at 0 has derivative
    # 1; NaN, a refusal or 1 are honest)
    for got in (jacfwd(lambda x: np.cbrt(x ** 3), np.array([0.0])), gradient(lambda x: np.cbrt(x ** 3).sum(),
                                                                             np.array([0.0]))[0]):
        assert not np.isfinite(got).all() or np.allclose(got, 1.0)


def _sqrt_or_fallback(x):
    try:
        return math.sqrt(x - 1.0) + x
    except ZeroDivisionError:
        return 100.0 * x


def _power_or_fallback(x):
    try:
        return (x - 1.0) ** 0.5 + x
    except ZeroDivisionError:
        return 100.0 * x


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
@pytest.mark.parametrize("f", [_sqrt_or_fallback, _power_or_fallback], ids=["math.sqrt", "** 0.5"])
def test_a_derivative_dividing_by_zero_is_no_exception_of_the_program(f):
    # (at x = 1 the second derivative's rule divided by zero, and the ZeroDivisionError reached the user's
    # `except ZeroDivisionError`: its fallback ran, and the second derivative was 100 x's, 0)
    from contexts import SpecialPoint
    assert f(1.0) == 1.0
    for second in (lambda: hessian(f, 1.0, inner="forward"), lambda: derivative(lambda y: derivative(f, y), 1.0),
                   lambda: hessian(f, 1.0)):
        with pytest.raises(SpecialPoint, match="divides by zero"):
            second()
    assert hessian(f, 1.5) == pytest.approx(-0.25 * 0.5 ** -1.5, rel=1e-9)  # (off the singularity: right)


def _key_storing(x):
    acc = _Acc()
    min([x, 1.5], key=acc.add)
    return acc.total  # x + 1.5


def _bound_method_in_a_comprehension(x):
    acc = _Acc()
    k = acc.add
    [k(v) for v in [x, 1.5]]
    return acc.total


def _max_key_storing(x):
    acc = _Acc()
    max([x, 1.5], key=acc.add)
    return acc.total


def _sorted_key_storing(x):
    acc = _Acc()

    def key(q):
        acc.total = acc.total + q * 2.0
        return q
    sorted([x, 1.5], key=key)
    return acc.total  # 2x + 3


def _list_sort_key_storing(x):
    acc = _Acc()
    items = [x, 1.5]
    items.sort(key=lambda q: acc.add(q))
    return acc.total


@pytest.mark.parametrize("f", [_key_storing, _max_key_storing, _sorted_key_storing, _list_sort_key_storing],
                         ids=["min", "max", "sorted", "list.sort"])
def test_a_store_by_a_key_callback(f):
    # (reverse mode's rules called a key plainly: what it stored into its object was lost, 0; a Python key
    # now runs as recorded Python code, `runtime.KEYED`)
    exact = fd.derivative(f, 0.7)
    assert derivative(f, 0.7) == pytest.approx(exact, rel=1e-7)
    assert gradient(f, 0.7)[0] == pytest.approx(exact, rel=1e-7)


def test_keyed_min_max_sorted_and_sort_of_differentiated_values():
    def f(x):
        xs = [x * 2.0, x * x, 1.3, np.sin(x)]
        ys = sorted(xs, key=lambda v: abs(v - 0.9))
        xs.sort(key=lambda v: -v)
        return (min(xs, key=lambda v: (v - 0.5) ** 2) + max(xs, key=lambda v: -v) * 3.0 + ys[0] * 2.0
                + ys[1] * ys[2] + xs[0] + 10.0 * xs[3])
    assert gradient(f, 0.7)[0] == pytest.approx(fd.derivative(f, 0.7), rel=1e-7)
    assert hessian(f, 0.7) == pytest.approx(fd.hessian(f, np.array(0.7)), rel=1e-4)


def test_a_bound_method_kept_in_a_variable_changes_its_object():
    # (`k = acc.add; [k(v) for v in xs]`: acc was left inactive, read after it gave 0)
    f = _bound_method_in_a_comprehension
    assert derivative(f, 0.7) == pytest.approx(1.0, rel=1e-12)
    assert gradient(f, 0.7)[0] == pytest.approx(1.0, rel=1e-12)


_CACHE: dict = {}


def _remember(k, v):
    _CACHE[k] = v


def test_drawing_a_key_from_a_module_dict():
    # (re's cache evicts its oldest entry by `next(iter(_cache))` once full: a changeable module dict is
    # differentiated as state, and the key iterator's `__next__` had no rule: refused, in whatever recording
    # first filled the cache)
    def f(x):
        _remember("a", 1.0)
        _remember("b", 2.0)
        del _CACHE[next(iter(_CACHE))]
        return x * 2.0 + len(_CACHE)
    assert gradient(f, 0.5)[0] == 2.0
