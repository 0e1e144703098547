"""Cases of session 35: false refusals and crashes met on code nobody here wrote (the generated programs of
gen10, the package sweeps), each checked against finite differences in every mode; and the silent wrong
derivatives left open, now right or refused."""

import numpy as np
import pytest

from contexts import ADContext, gradient, hessian, jacfwd, jvp
from tests import fd
from tests.modes import ARRAY_MODES, assert_array_gradient, assert_scalar_modes


# -- np.vectorize with keywords, `excluded` and `signature` (gen10 F1, ~50 programs; bond-pricing 17) -----------
# numpy calls the function from C; every engine now runs numpy's loop as Python (`stand_ins.vectorized`),
# where they were refused before (keywords, excluded, signature) or crashed (a scalar's 0-d result).

def _by_keyword(x):
    v = np.vectorize(lambda a, b=1.0, c=2.0: a * b + c ** 2)
    return v(x, c=x[::-1] * 0.5, b=3.0).sum()


def _excluded_position(x):
    v = np.vectorize(lambda a, p: a ** p[0] + p[1] * a, excluded={1})
    return v(x, [2.0, x[0]]).sum()


def _excluded_name(x):
    v = np.vectorize(lambda a, p=None: a * p["s"], excluded={"p"})
    return v(x, p={"s": x[1]}).sum()


def _signature(x):
    v = np.vectorize(lambda row, w: (row * w).sum(), signature="(n),(n)->()")
    return (v(x.reshape(2, 3), x[:3] ** 2) ** 2).sum()


def _signature_two_outputs(x):
    v = np.vectorize(lambda row: (row * 2, row.sum()), signature="(n)->(n),()")
    a, b = v(x.reshape(2, 3))
    return (a ** 2).sum() + (b ** 3).sum()


def _cached(x):
    v = np.vectorize(lambda a, k: np.sin(a) * k, cache=True, otypes=[float])
    return v(x, k=2.5).sum() + v(x[0], 1.0)


def _scalar_argument(x):
    r = np.vectorize(lambda a: a * a + 1)(x[0])
    return float(r) * r.ndim + float(r) + x[1]


VECTORIZED = [_by_keyword, _excluded_position, _excluded_name, _signature, _signature_two_outputs, _cached,
              _scalar_argument]
X6 = np.array([0.3, 0.7, 1.1, 1.4, 0.2, 0.9])


@pytest.mark.parametrize("mode", ARRAY_MODES)
@pytest.mark.parametrize("f", VECTORIZED)
def test_np_vectorize_keywords_excluded_signature(f, mode):
    with ADContext():
        assert_array_gradient(mode, f, X6)


@pytest.mark.parametrize("f", [_by_keyword, _signature_two_outputs, _excluded_position])
def test_np_vectorize_second_derivatives(f):
    want = fd.jacobian(lambda u: fd.gradient(f, u)[0], X6)
    np.testing.assert_allclose(hessian(f, X6), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("make, args, kwargs", [
    (lambda: np.vectorize(lambda a, b=1.0: a * b), (np.arange(3.0),), {"b": np.array([[1.0], [2.0]])}),
    (lambda: np.vectorize(lambda a, p: a + len(p), excluded={1}), (np.arange(3.0), [1, 2]), {}),
    (lambda: np.vectorize(lambda a: int(a * 3)), (np.array([0.5, 1.7]),), {}),  # int results: an int array
    (lambda: np.vectorize(lambda a: (a, a > 1)), (np.array([0.5, 1.7]),), {}),
    (lambda: np.vectorize(lambda r: r[::-1] * 2, signature="(n)->(n)"), (np.arange(6.0).reshape(2, 3),), {}),
    (lambda: np.vectorize(lambda r, s: r.sum() * s, signature="(n),()->()"), (np.ones((2, 3)), 2.0), {}),
    (lambda: np.vectorize(lambda a: a, otypes=[float]), (np.zeros(0),), {}),
])
def test_vectorized_computes_what_numpy_computes(make, args, kwargs):
    # the stand-in's values, dtypes and shapes are numpy's own (checked against np.vectorize itself)
    from contexts.rules.numpy.stand_ins import vectorized
    want, got = make()(*args, **kwargs), vectorized(make(), *args, **kwargs)
    for w, g in zip(want if type(want) is tuple else (want,), got if type(got) is tuple else (got,)):
        assert type(g) is type(w) and g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_vectorized_calls_the_function_as_often_as_numpy():
    # without otypes numpy calls the function once more on the first elements, for the output types
    def counted(calls):
        def f(a):
            calls.append(a)
            return a * 2
        return f
    from contexts.rules.numpy.stand_ins import vectorized
    ours, numpys = [], []
    vectorized(np.vectorize(counted(ours)), np.arange(3.0))
    np.vectorize(counted(numpys))(np.arange(3.0))
    assert ours == numpys


def test_np_vectorize_of_a_scalar_is_a_0d_array_in_forward_mode():
    # (pkS C2: forward mode returned the float; numpy gives a 0-d array, and `.ndim` was read off it)
    f = lambda t: float(np.vectorize(lambda a: a * a)(t).reshape(1)[0]) * 3.0
    assert_scalar_modes(f, 0.7)


# -- values that carry no derivative, taken for differentiated ones (pkU's false refusals) -------------------

def _int_flags_checked(x):
    # surpyval's fit: integer censoring flags checked by `np.isin`, whose integer path reads
    # `np.iinfo(dtype).max`, a memo keyed by `"%s%d" % (kind, bits)`: that text was remembered as a
    # differentiated number's (DifferentiatedKey)
    c = np.zeros_like(x, dtype=int)
    assert np.isin(c, (0, 1)).all()
    return (x ** 2).sum() + np.iinfo(c.dtype).max * 0.0


_STRUCT_TIME = __import__("time").struct_time((2019, 6, 21, 14, 30, 0, 4, 172, -1))


def _day_of_year(st):
    return st.tm_yday


def _declination(st, lat):
    return lat * np.sin(2 * np.pi * _day_of_year(st) / 365)


def _altitude(st, lat):
    return -_declination(st, lat)


def _struct_time_two_levels_down(x):
    # solarpy: `day_of_the_year(date) = date.timetuple().tm_yday` three calls down (refused: a struct_time is
    # a tuple subclass, and its field was taken to share its items' box)
    return _altitude(_STRUCT_TIME, x[0]) * x[1]


class _Rule:
    def __init__(self, ratio, n):
        self.ratio = ratio
        self.n = n

    def matrix(self):
        i, j = np.ogrid[0:self.n, 0:self.n]  # (numdifftools' `_fd_matrix`)
        return np.sum((1.0 / self.ratio) ** (i * (j + 1)))


def _grid_of_an_objects_count(x):
    # an int a differentiated object holds, in `np.ogrid[...]`: nd_grid's own `__getitem__` (it stores into
    # objects) was refused as if the key were differentiated
    return float(_Rule(x[0], 3).matrix()) * x[1]


@pytest.mark.parametrize("mode", ARRAY_MODES)
@pytest.mark.parametrize("f", [_int_flags_checked, _struct_time_two_levels_down, _grid_of_an_objects_count])
def test_plain_values_inside_differentiated_code_are_not_refused(f, mode):
    with ADContext():
        assert_array_gradient(mode, f, np.array([1.3, 0.8]))


def test_a_number_formatted_with_percent_and_parsed_back_is_still_refused():
    # the guard: `"%s%d" % ...` of integers is no number's text, but of a differentiated float it is
    from contexts.lowered.runtime import TextRoundTrip

    def f(x):
        return float("%s%.6f" % ("", x)) * x
    with ADContext(), pytest.raises(TextRoundTrip):
        gradient(f, 1.3)


# -- numpy's arithmetic on object arrays of the user's objects (gen11's W1 and its kin) ----------------------
# numpy computes with each element's own operators; the rules took them for numbers. With a class whose
# `__add__` is not the arithmetic of its derivatives, reverse mode was silently wrong (4 for 6); an array
# filled by `a[i] = Box(t)` lost the elements' cotangents in a 0-d object array (0 for 6). Reverse mode now
# runs numpy's loops as Python on the objects' methods, or refuses; forward mode was right.

class _Skewed:
    """A value whose `+` multiplies and whose `*` adds: numpy's loops must call these, not a number's."""

    def __init__(self, v):
        self.v = v

    @staticmethod
    def _of(o):
        return o.v if isinstance(o, _Skewed) else o

    def __add__(self, o):
        return _Skewed(self.v * (1.0 + self._of(o)))

    __radd__ = __add__

    def __mul__(self, o):
        return _Skewed(self.v + 2.0 * self._of(o))

    __rmul__ = __mul__

    def __truediv__(self, n):
        return _Skewed(self.v / n)

    def __neg__(self):
        return _Skewed(self.v ** 2)

    def sin(self):
        return _Skewed(np.sin(self.v) * 3)


def _skewed(t):
    return np.array([_Skewed(t), _Skewed(3.0 * t), _Skewed(0.5)], dtype=object)


def _filled(t):
    a = np.empty(3, dtype=object)
    for i in range(3):
        a[i] = _Skewed(t * (i + 1))
    return a


_SKEWED_2D = lambda t: np.array([[_Skewed(t), _Skewed(2 * t)], [_Skewed(3 * t), _Skewed(t * t)]], dtype=object)

OBJECT_ARRAY_CASES = {
    "np_sum": lambda t: np.sum(_skewed(t)).v,
    "sum_method": lambda t: _skewed(t).sum().v,
    "sum_of_filled": lambda t: np.sum(_filled(t)).v,
    "builtin_sum": lambda t: sum(_skewed(t)).v,
    "builtin_sum_of_filled": lambda t: sum(_filled(t)).v,
    "add_reduce": lambda t: np.add.reduce(_filled(t)).v,
    "add_reduce_rows": lambda t: np.add.reduce(_SKEWED_2D(t), axis=0)[1].v,
    "sum_axis1": lambda t: np.sum(_SKEWED_2D(t), axis=1)[0].v,
    "prod": lambda t: np.prod(_skewed(t)).v,
    "mean": lambda t: np.mean(_skewed(t)).v,
    "mean_method": lambda t: _skewed(t).mean().v,
    "ufunc_add": lambda t: np.add(_skewed(t), _skewed(t * t)).sum().v,
    "ufunc_method": lambda t: np.sin(_skewed(t)).sum().v,
    "dot_floats": lambda t: np.dot(_skewed(t), np.array([1.0, 2.0, 3.0])).v,
    "dot_objects": lambda t: np.dot(_skewed(t), _skewed(2 * t)).v,
    "matmul_2d": lambda t: np.matmul(_SKEWED_2D(t), np.array([1.0, 2.0]))[1].v,
    "where_then_index": lambda t: (np.where([True, False, True], _skewed(t), _filled(t))[1] + 1.0).v,
}


@pytest.mark.parametrize("name", sorted(OBJECT_ARRAY_CASES))
def test_numpy_arithmetic_on_object_arrays_of_own_classes(name):
    f = OBJECT_ARRAY_CASES[name]
    want = fd.derivative(f, 0.7)
    with ADContext():
        got = gradient(f, 0.7)[0]
    assert abs(got - want) <= 1e-6 * abs(want), (got, want)
    from contexts import derivative
    assert abs(derivative(f, 0.7) - want) <= 1e-6 * abs(want)


@pytest.mark.parametrize("f", [lambda t: (_skewed(t) + _skewed(t * t)).sum().v, lambda t: (2.0 * _skewed(t)).sum().v,
                               lambda t: (-_skewed(t)).sum().v,
                               lambda t: np.cumsum(_skewed(t))[-1].v])
@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_object_array_arithmetic_without_a_python_form_is_refused_in_reverse(f):
    # numpy applied the operators in C; the refusal names the ufunc to call instead
    from overdub.errors import OverdubError
    with ADContext(), pytest.raises(OverdubError, match="object array"):
        gradient(f, 0.7)


def test_object_arrays_of_numbers_keep_the_rules():
    # Fractions are numbers: their arrays keep the rules (exact, the elements' kind kept)
    from fractions import Fraction
    f = lambda t: np.sum(np.array([t, 3 * t, Fraction(1, 2)], dtype=object) * 2) * t
    with ADContext():
        got = gradient(f, Fraction(1, 3))[0]
    assert got == 16 * Fraction(1, 3) + 1 and type(got) is Fraction


# -- special methods Python runs for an operator or a builtin, storing what they compute (gen11 W2-W7) ---------

class _LazyAttr:
    def __init__(self, a):
        self.a = a

    def __getattr__(self, name):  # computed on first access, then cached as a plain attribute
        v = self.a * self.a
        setattr(self, name, v)
        return v


class _Memo(dict):
    def __init__(self, k):
        self.k = k

    def __missing__(self, key):
        self[key] = v = self.k * key
        return v


class _Table:
    def __init__(self, k):
        self.k = k
        self.cache = {}

    def __getitem__(self, i):
        if i not in self.cache:
            self.cache[i] = self.k * i
        return self.cache[i]


class _Recorder:
    def __init__(self, a):
        self.a = a
        self.acc = 0.0

    def __call__(self, v):
        self.acc = self.acc + self.a * v
        return v


class _Eq:
    def __init__(self, a):
        self.a = a
        self.seen = 0.0

    def __eq__(self, other):
        self.seen = self.seen + self.a * other
        return True

    __hash__ = object.__hash__


class _Shared:
    hist = []

    def __init__(self, k):
        self.k = k

    def push(self, v):
        self.hist.append(self.k * v)


class _A:
    def val(self):
        return self.v * 2


class _B(_A):
    def val(self):
        return self.v * 3


def _lazy_attribute(t):
    o = _LazyAttr(t)
    return o.sq + o.sq * t


def _sorted_by_a_recorder(t):
    c = _Recorder(t)
    sorted([t, 2.0], key=c)
    max([t, 2.0], key=c)
    return c.acc


def _class_list_through_an_instance(t):
    _Shared.hist.clear()
    a, b = _Shared(t), _Shared(2.0)
    a.push(t)
    b.push(t)
    return sum(b.hist) + a.hist[0] * t


def _class_changed(t):
    o = _A()
    o.v = t
    r = o.val()
    o.__class__ = _B
    return r + o.val() * t


@pytest.mark.parametrize("f", [_lazy_attribute, _sorted_by_a_recorder, _class_list_through_an_instance, _class_changed])
def test_code_python_runs_implicitly_is_differentiated(f):
    assert_scalar_modes(f, 0.9, second=False)


def _table_read_twice(t):
    c = _Table(t)
    return c[2] + c[2] * t


class _Sequence:  # Python's old sequence protocol: `__getitem__` until IndexError, recording its reads
    def __init__(self, a):
        self.a = a
        self.reads = []

    def __getitem__(self, i):
        if i >= 3:
            raise IndexError
        self.reads.append(self.a * i)
        return self.a * i


def _sequence_read(t):
    q = _Sequence(t)
    a, b, c = q
    return sum(q) + sum(q.reads) + c * t


@pytest.mark.parametrize("f", [lambda t: _Memo(t)[2] * t, _table_read_twice, _sequence_read])
def test_a_lookup_storing_what_it_computes(f):
    # Python ran `__missing__` / `__getitem__` natively, and reverse mode re-ran them in its reverse pass,
    # where the cache was filled: what they stored was computed unrecorded (0 for 2, 0 for 4, 4 for 6); their
    # twins run in the forward sweep now
    assert_scalar_modes(f, 0.9, second=False)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_a_dict_replaced_wholesale_is_refused_in_reverse():
    def f(t):
        o = _A()
        o.__dict__ = {"v": t * t}
        return o.val()
    from tests.modes import assert_refused_in_reverse
    assert_refused_in_reverse(f, 0.9, match="__dict__")


@pytest.mark.parametrize("method", ["count", "index"])
def test_forward_list_count_and_index_hand_the_items_eq_the_dual(method):
    def f(t):
        o = _Eq(t)
        getattr([o], method)(t)
        return o.seen
    from contexts import derivative
    assert abs(derivative(f, 0.9) - 1.8) < 1e-12
    assert abs(float(hessian(f, 0.9)) - 2.0) < 1e-9


# -- pkV's false refusals on object-heavy packages (svgelements, geometer) ------------------------------------

class _Matrix:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __copy__(self):
        return _Matrix(self.a, self.b)

    def __imul__(self, o):
        self.a, self.b = self.a * o.a, self.b * o.b
        return self

    def __mul__(self, o):
        m = __import__("copy").copy(self)
        m.__imul__(o)
        return m


def _own_copy_protocol(t):
    # svgelements' `Matrix * Matrix`: copy.copy of a class with its own `__copy__` (refused in reverse)
    m = _Matrix(t, 2.0) * _Matrix(3.0, t)
    return m.a + m.b * t


def _generator_drained_by_extend_in_a_loop(t):
    # geometer's `result.extend(offset + x for x in ind)` inside a loop: drained at once, not kept (refused)
    out = []
    for ind, off in zip([[0, 1], [2]], [0, 3]):
        out.extend(off + k * t for k in ind)
    return sum(out) * t


def _text_of_a_dicts_default(t):
    # svgelements' `Length(values.get("stroke_width", 1.0))` parses `str(value)`: the default of a dict that
    # holds a differentiated value is a constant (forward mode refused its parse; reverse mode cannot tell)
    values = {"cx": t}
    width = float(str(values.get("stroke_width", 1.0)))
    return t * width + values["cx"] ** 2


@pytest.mark.parametrize("f", [_own_copy_protocol, _generator_drained_by_extend_in_a_loop])
def test_object_heavy_idioms_in_every_mode(f):
    assert_scalar_modes(f, 0.9, second=False)


def test_forward_mode_takes_a_plain_numbers_text_as_a_constants():
    from contexts import derivative
    from contexts.lowered.runtime import TextRoundTrip
    assert derivative(_text_of_a_dicts_default, 0.9) == pytest.approx(1.0 + 1.8, rel=1e-12)
    with pytest.raises(TextRoundTrip):  # (the guard: a perturbed number's text parsed back stays refused)
        derivative(lambda t: float(str(t * 2.0)) * t, 0.9)


# -- np.frompyfunc's ufunc's reduce and accumulate (gen10's C2: AttributeError in reverse, refused forward) ------

_MADE_BEFORE = np.frompyfunc(lambda u, v: u + v * v, 2, 1)


def _frompyfunc_reduce_made_here(t):
    f = np.frompyfunc(lambda u, v: u * v, 2, 1)
    return float(f.reduce(np.array([t, 2.0, t], dtype=object)))


def _frompyfunc_reduce_rows(t):
    return float(_MADE_BEFORE.reduce(np.array([[t, 2.0], [t, 3.0]], dtype=object), axis=0)[0]) * t


@pytest.mark.parametrize("f", [_frompyfunc_reduce_made_here, _frompyfunc_reduce_rows])
def test_frompyfunc_reduce(f):
    assert_scalar_modes(f, 0.7, second=False)


def test_frompyfunc_accumulate_in_reverse():
    def f(t):
        acc = np.frompyfunc(lambda u, v: u * v + 1.0, 2, 1).accumulate(np.array([t, 2.0, t], dtype=object))
        assert acc.dtype == object  # (numpy's own result kind)
        return float(acc[2])
    with ADContext():
        assert gradient(f, 0.7)[0] == pytest.approx(fd.derivative(f, 0.7), rel=1e-7)


class _Point:
    def __init__(self, x):
        self.x = x


def _interp_of_a_list_in_context_mode(t):
    # (svgelements' Line.point: an object made first sends forward mode down its context path, where numpy's
    # functions given duals inside a list found no rule)
    _Point(t)
    return float(np.interp(0.3, [0, 1], [1.0, t])) + float(np.sum(np.array([t, 2.0]) * t))


def test_numpy_function_of_duals_inside_a_list():
    assert_scalar_modes(_interp_of_a_list_in_context_mode, 1.5, second=False)


# -- a loop over a user's iterator class whose list the body changes (left from session 34: 1 for 3, or a crash) --

from tests.contexts.ad.test_iterators_heaps import Items as _ListIterator  # noqa: E402  (a Python iterator)


def _iterator_over_a_list_the_body_extends(t):
    xs = [t, 2 * t, 3 * t]
    acc = 0.0
    for v in _ListIterator(xs):
        acc += v
        if len(xs) < 5:
            xs.append(v * t)
    return acc


def _iterator_over_a_list_the_body_changes(t):
    xs = [t, 2.0, 3.0]
    acc = 0.0
    for v in _ListIterator(xs):
        acc += v * t
        xs[-1] = v * v
    return acc


def _iterator_the_body_leaves_alone(t):
    xs, out = [t, 2 * t, 3 * t], []
    for v in _ListIterator(xs):
        out.append(v * t)
    return sum(out) + xs[0]


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
@pytest.mark.parametrize("f", [_iterator_over_a_list_the_body_extends, _iterator_over_a_list_the_body_changes])
def test_a_loop_over_an_iterator_whose_list_the_body_changes_is_refused_in_reverse(f):
    from tests.modes import assert_refused_in_reverse
    assert_refused_in_reverse(f, 0.7, match="changes")


def test_a_loop_over_an_iterator_the_body_leaves_alone():
    assert_scalar_modes(_iterator_the_body_leaves_alone, 0.7, second=False)


@pytest.mark.parametrize("uplo", ["U", "L"])
def test_eigh_reading_either_triangle_in_reverse(uplo):
    # (gen10 F9: UPLO='U' was refused in reverse mode; the gradient goes to the triangle read)
    rng = np.random.default_rng(0)
    a, w = rng.normal(size=(4, 4)), rng.normal(size=(4, 4))
    f = lambda m: np.sum(np.linalg.eigh(m, UPLO=uplo)[0] ** 3) + np.linalg.eigvalsh(m + 1j * w, UPLO=uplo)[2]
    with ADContext():
        got = gradient(f, a)[0]
    np.testing.assert_allclose(got, fd.gradient(f, a)[0], rtol=1e-7, atol=1e-9)
    assert not np.any(np.tril(got, -1) if uplo == "U" else np.triu(got, 1))


# -- an object's cotangent handed as a value into a base class's code reached by super() (pkW: quantsbin) ------
# A root finder's rule hands the cotangent of its function's closure as a value (a Tangent of the captured
# object's fields); the method that set the field was a base class's, reached by `super()` (or by name) from
# the subclass's own: it read the object's box, empty, and the implied volatility's derivative was 0.

class _Framework:
    def __init__(self, spot0=None, volatility=None):
        self.spot0 = spot0
        self.volatility = volatility

    def set_spot(self, spot0):
        self.spot0 = spot0

    def value(self):
        return self.spot0 * self.volatility


class _Model(_Framework):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def set_spot(self, spot0):
        super().set_spot(spot0)


def _implied(m, premium):
    from scipy import optimize

    def objective(v):
        m.volatility = v
        return m.value() - premium
    return optimize.brentq(objective, 0.001, 0.999, xtol=1e-14)


def _implied_after_init(s):
    return _implied(_Model(spot0=s, volatility=0.25), 25.0)


def _implied_after_method(s):
    m = _Model(volatility=0.3)
    m.set_spot(s)
    return _implied(m, 25.0)


@pytest.mark.parametrize("f", [_implied_after_init, _implied_after_method])
def test_a_root_through_an_attribute_a_base_class_set(f):
    want = -25.0 / 102.0 ** 2  # the root v* = 25 / s (bisection's steps make finite differences 0)
    with ADContext():
        assert gradient(f, 102.0)[0] == pytest.approx(want, rel=1e-8)
    from contexts import derivative
    assert derivative(f, 102.0) == pytest.approx(want, rel=1e-8)


_BASIS = np.cos(np.add.outer(np.arange(4.0), 0.37 * np.arange(40.0)))
_V = np.sin(np.arange(40.0))


def test_hessian_through_a_slice_of_a_constant_array():
    # (pkW: pyturb's zernike_decompose, `basis[:, mask].T`: forward over reverse refused the cotangent of a
    # constant's slice, a dual it could not hold)
    f = lambda a: float(np.sum(np.dot(_BASIS[:, :30], a * _V[:30]) ** 2))
    want = 2 * np.sum((_BASIS[:, :30] @ _V[:30]) ** 2)
    assert float(hessian(f, 1.3, inner="reverse")) == pytest.approx(want, rel=1e-10)


class _Trade:
    def __init__(self, spot, when):
        self.spot, self.when = spot, when


def _bumped_copy_of_an_object_holding_a_date(t):
    # (pkW: quantsbin's numerical greeks deep-copy the instrument, which holds its expiry date: refused)
    import copy
    import datetime
    base = _Trade(t, datetime.datetime(2026, 12, 1))
    bumped = copy.deepcopy(base)
    bumped.spot = bumped.spot * 1.01
    return (bumped.spot ** 2 - base.spot ** 2) / (bumped.when - base.when + datetime.timedelta(days=1)).days


def test_a_copy_of_an_object_holding_a_date():
    assert_scalar_modes(_bumped_copy_of_an_object_holding_a_date, 1.3, second=False)


# -- `with m as v` on a differentiated manager (gen11's F1, the most common reverse refusal of its programs) ----
# Reverse mode now makes the calls Python makes, each recorded: `v = m.__enter__()`, the body, then
# `m.__exit__(None, None, None)` (or the exception's, re-raised unless it answers true).

class _Settings:
    def __init__(self):
        self.scale = 1.0


class _Override:
    def __init__(self, settings, scale):
        self.settings, self.scale, self.old = settings, scale, None

    def __enter__(self):
        self.old = self.settings.scale
        self.settings.scale = self.scale
        return self.settings

    def __exit__(self, *exc):
        self.settings.scale = self.old
        return False


class _Swallowing:
    def __init__(self, v):
        self.v, self.caught = v, None

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        self.caught = kind
        return kind is ZeroDivisionError


def _override_as(t):
    s = _Settings()
    with _Override(s, scale=t * t) as st:
        r = st.scale * t
    return r + s.scale * t


def _override_without_as(t):
    s = _Settings()
    m = _Override(s, scale=t * t)
    with m:
        r = s.scale * t
    return r + m.old


def _swallowed_inside(t):
    with _Swallowing(t * 3.0) as g:
        r = g.v * t
        r = r / (g.v - g.v)  # ZeroDivisionError, swallowed by `__exit__`
    return r + (g.caught is ZeroDivisionError) * t


@pytest.mark.parametrize("f", [_override_as, _override_without_as, _swallowed_inside])
def test_with_on_a_differentiated_manager(f):
    assert_scalar_modes(f, 0.7, second=False)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_with_leaving_by_return_is_still_refused_in_reverse():
    def f(t):
        s = _Settings()
        with _Override(s, scale=t * t) as st:
            return st.scale * t
    from tests.modes import assert_refused_in_reverse
    assert_refused_in_reverse(f, 0.7, match="with")


# -- the verification helper's regressions of this session, and what they uncovered -------------------------

class _Box:
    def __init__(self, v):
        self.v = v

    def __add__(self, o):
        return _Box(self.v + (o.v if isinstance(o, _Box) else o))

    __radd__ = __add__


def _object_array_read_twice(t):
    # (R2: an object array's items read twice: their boxes summed into new Tangents, counted again at their
    # construction: 18 for 6; `a[0] + a[1]` read twice was 3x before this session too)
    a = np.array([_Box(t), _Box(2 * t)], dtype=object)
    return a.sum().v + (a[0] + a[1]).v + sum(a).v


def _object_array_filled_read_twice(t):
    a = np.empty(2, dtype=object)
    a[0], a[1] = _Box(t), _Box(t * t)
    return np.sum(a).v + np.sum(np.add(a, a)).v + a[0].v


@pytest.mark.parametrize("f", [_object_array_read_twice, _object_array_filled_read_twice])
def test_an_object_array_read_twice(f):
    assert_scalar_modes(f, 0.7, second=False)


class _LazySequence:  # the old sequence protocol only, filling a cache as `in` walks it
    def __init__(self, x, n):
        self.x, self.n, self.cache = x, n, {}

    def __getitem__(self, i):
        if i >= self.n:
            raise IndexError(i)
        if i not in self.cache:
            self.cache[i] = self.x ** (i + 1)
        return self.cache[i]


def test_in_over_a_sequence_protocol_that_stores_is_refused_in_reverse():
    # (R1: Python walks `__getitem__` natively for `in`; the cache it filled was read as a constant: 0 for 1.47)
    def f(t):
        s = _LazySequence(t, 3)
        found = 5.0 in s
        return s[2] + found
    from tests.modes import assert_refused_in_reverse
    assert_refused_in_reverse(f, 0.7, match="__getitem__")


def test_arange_given_a_float_start_by_keyword():
    # (R3: bond-pricing's `np.arange(start=s, step=1/f, stop=e)` crashed the rule; refused in session 35, run by
    # position since session 40: its cotangent goes back by name)
    f = lambda t: float(np.sum(np.arange(start=t, stop=t + 3.0, step=1.0)))
    assert_scalar_modes(f, 0.5, second=False)
    g = lambda t: float(np.sum(np.arange(t, t + 3.0, 1.0)))  # (by position)
    assert_scalar_modes(g, 0.5, second=False)


class _Invertible:
    def __init__(self, a):
        self.a = a

    def __invert__(self):
        return _Invertible(1.0 / self.a)


@pytest.mark.parametrize("f", [lambda t: (~_Invertible(t)).a, lambda t: __import__("operator").invert(_Invertible(t)).a])
def test_invert_of_an_own_class_is_refused_in_reverse(f):
    # (N1: `~obj` by a class's own `__invert__` ran natively and its result was a constant: 0 for -6.25)
    from tests.modes import assert_refused_in_reverse
    assert_refused_in_reverse(f, 0.4, match="__invert__")


def test_invert_of_a_mask_stays_differentiable():
    f = lambda x: float(np.sum(np.where(~(x > 0.5), x ** 2, x)))
    with ADContext():
        assert_array_gradient("reverse", f, np.array([0.2, 0.7, 0.9]))
    assert_array_gradient("forward", f, np.array([0.2, 0.7, 0.9]))
