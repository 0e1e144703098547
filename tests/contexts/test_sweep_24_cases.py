"""Cases found by the sweeps of session 24 and left from session 23 (a flat iterator or an ndarray subclass's
view read after its array changed, durations scaled by a differentiated number, an object's `.size` in
forward mode's tangent twin, a closure a context's run made and passed to `gradient`), each checked against
central differences or a closed form."""

import datetime

import numpy as np
import pytest

from contexts import derivative, gradient, hessian, jacfwd, jacobian, jvp
from overdub.errors import OverdubError
from tests import fd

X = np.array([0.61, -0.37, 0.83, 0.24])


# -- a flat iterator taken before its array changed in place, read after (reverse mode read the old values)

def flat_then_scaled(x):
    A = np.outer(x, x)
    it = A.flat
    A *= 2.0
    return np.array([it[0], it[5]])


def flat_then_row_written(x):
    A = np.outer(x, x)
    it = A.flat
    A[1, 1] = 5 * x[2]
    return it[4:7]


def flat_of_transpose(x):
    A = np.outer(x, x)
    it = A.T.flat
    A[0, 1] = x[3] ** 3
    return np.array([it[1], it[4], it[0]])


def flat_of_a_strided_view(x):
    A = np.outer(x, x)
    it = A[1:, ::2].flat
    A *= x[0]
    return np.array([it[0], it[3]])


def flat_then_view_changed(x):
    A = np.outer(x, x)
    it = A.flat
    v = A[1]
    v += x
    return np.array([it[5], it[0]])


def flat_iterated_after(x):
    A = np.outer(x, x)
    it = A.flat
    A[2] = 1.0
    return np.array([s for s in it][:12:3])


def flat_read_before_and_after(x):
    A = np.outer(x, x)
    it = A.flat
    r = it[3] * 1.0
    A[0, 3] = x[1]
    return np.array([r, it[3]])


@pytest.mark.parametrize("f", [flat_then_scaled, flat_then_row_written, flat_of_transpose, flat_of_a_strided_view,
                               flat_then_view_changed, flat_iterated_after, flat_read_before_and_after])
def test_flat_iterator_read_after_its_array_changed(f):
    np.testing.assert_allclose(jacobian(f, X), fd.jacobian(f, X), rtol=1e-6, atol=1e-8)


# -- an ndarray subclass's view read after its base changed (forward mode's twin read the old tangent)

class Sub(np.ndarray):
    pass


def subclass_view_then_base_written(x):
    r = x * x
    v = r.view(Sub)
    r[2] = x[2]
    return np.asarray(v).sum()


def subclass_base_then_view_of_view(x):
    r = (x * x).view(Sub)
    v = r[1:]
    r[2] = x[2] ** 3
    return float(np.asarray(v).sum())


def test_subclass_view_read_after_its_base_changed():
    f = subclass_view_then_base_written
    expected = fd.jacobian(f, X)
    np.testing.assert_allclose(jacfwd(f, X), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gradient(f, X)[0], expected, rtol=1e-6, atol=1e-8)
    e = np.eye(4)[2]
    assert jvp(f, (X,), (e,))[1] == pytest.approx(expected @ e, rel=1e-6)


def test_subclass_view_of_a_view_read_after_its_base_changed():
    f = subclass_base_then_view_of_view
    expected = fd.jacobian(f, X)
    np.testing.assert_allclose(gradient(f, X)[0], expected, rtol=1e-6, atol=1e-8)
    try:  # (forward mode's duals have no `.view`: refused, never the old tangent)
        got = jacfwd(f, X)
    except OverdubError:
        return
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


# -- a duration scaled by a differentiated number: rounded (to microseconds, or to whole units of a
#    np.timedelta64), no derivative: refused in every mode, where forward mode gave the unrounded value and
#    reverse mode 0

HOUR = datetime.timedelta(hours=1)


def hours_total(a):
    return (a * HOUR).total_seconds()


def hours_divided(a):
    return (HOUR * a) / datetime.timedelta(seconds=1)


def numpy_hours(a):
    return float((np.timedelta64(1, "h") * a) / np.timedelta64(1, "s"))


def numpy_duration_array(a):
    t = np.array([1, 2, 3], dtype="m8[s]")
    return float((t * a / np.timedelta64(1, "s")).sum())


def duration_divided_by(a):
    return (HOUR / a).total_seconds()


@pytest.mark.parametrize("f", [hours_total, hours_divided, numpy_hours, numpy_duration_array, duration_divided_by])
@pytest.mark.parametrize("mode", [gradient, derivative])
def test_a_duration_scaled_by_a_differentiated_number_is_refused(f, mode):
    with pytest.raises(OverdubError, match="duration"):
        mode(f, 0.613)


def constant_durations(a):
    d = HOUR * 2.5
    return a * (d / HOUR)


def whole_hours(a):
    n = 3
    return (n * HOUR).total_seconds() * a


def numpy_constant_hours(a):
    ts = np.arange(4) * np.timedelta64(1, "h")
    return a * float((ts / np.timedelta64(1, "h")).sum())


@pytest.mark.parametrize("f, slope", [(constant_durations, 2.5), (whole_hours, 10800.0), (numpy_constant_hours, 6.0)])
@pytest.mark.parametrize("mode", [gradient, derivative])
def test_constant_durations_stay_differentiable(f, slope, mode):
    assert fd.derivative(f, 0.613) == pytest.approx(slope, rel=1e-6)
    assert float(np.ravel(mode(f, 0.613))[0]) == pytest.approx(slope, rel=1e-12)


# -- forward mode's tangent twin and an object a differentiated number made, `a * obj`: its `.size` may be a
#    property of its own (the twin took it for an array's, constant: 0)

class Scaled:
    def __init__(self, k):
        self.k = k

    def __mul__(self, s):
        return Scaled(self.k * s)

    __rmul__ = __mul__

    @property
    def size(self):
        return self.k ** 2

    @property
    def shape(self):
        return (self.k ** 3,)


def size_of_scaled(a):
    return (a * Scaled(1.0)).size


def shape_of_scaled(a):
    return (a * Scaled(2.0)).shape[0]


@pytest.mark.parametrize("f, slope", [(size_of_scaled, lambda a: 2 * a), (shape_of_scaled, lambda a: 24 * a * a)])
def test_size_property_of_an_object_a_number_made(f, slope):
    a = 0.61
    assert derivative(f, a) == pytest.approx(slope(a), rel=1e-9)
    assert gradient(f, a)[0] == pytest.approx(slope(a), rel=1e-9)


# -- a closure defined in a function forward mode runs, handed to `gradient` (refused as "the file changed
#    since it was imported": the context's twin had made the closure's code)

def _scaled_square(s, t):
    return s * t * t


def gradient_of_an_inner_closure(s):
    def inner(t):
        return _scaled_square(s, t)
    return gradient(inner, 1.3)[0] * s


def test_gradient_of_a_closure_made_under_forward_mode():
    s = 0.7
    assert gradient_of_an_inner_closure(s) == pytest.approx(2 * s * s * 1.3, rel=1e-12)
    assert derivative(gradient_of_an_inner_closure, s) == pytest.approx(4 * s * 1.3, rel=1e-9)


# -- operators of a class of its own with the differentiated value on the other side (forward mode's twin
#    and reverse mode's array fast path took numpy's operator: `C() + x` came out 1 for C's 2)

class Weighted:
    def __add__(self, o): return 2.0 * o
    def __radd__(self, o): return 10.0 * o
    def __sub__(self, o): return 3.0 * o
    def __rsub__(self, o): return 11.0 * o
    def __mul__(self, o): return o * o
    def __truediv__(self, o): return 5.0 * o
    def __rtruediv__(self, o): return 13.0 * o
    def __floordiv__(self, o): return 6.0 * o
    def __rfloordiv__(self, o): return 16.0 * o
    def __pow__(self, o): return 8.0 * o
    def __rpow__(self, o): return 14.0 * o


_OPERATOR_CASES = {
    "C + x": (lambda x: Weighted() + x, 2.0), "x + C": (lambda x: x + Weighted(), 10.0),
    "C - x": (lambda x: Weighted() - x, 3.0), "x - C": (lambda x: x - Weighted(), 11.0),
    "C / x": (lambda x: Weighted() / x, 5.0), "x / C": (lambda x: x / Weighted(), 13.0),
    "C // x": (lambda x: Weighted() // x, 6.0), "x // C": (lambda x: x // Weighted(), 16.0),
    "C ** x": (lambda x: Weighted() ** x, 8.0), "x ** C": (lambda x: x ** Weighted(), 14.0),
}


@pytest.mark.parametrize("case", sorted(_OPERATOR_CASES))
def test_operator_of_an_object_on_the_other_side(case):
    f, k = _OPERATOR_CASES[case]
    assert fd.derivative(f, 0.7) == pytest.approx(k, rel=1e-6)
    assert derivative(f, 0.7) == pytest.approx(k, rel=1e-12)
    assert gradient(f, 0.7)[0] == pytest.approx(k, rel=1e-12)
    xs = np.array([0.3, 0.5])
    g = lambda x: np.sum(f(x))  # noqa: E731
    if case.startswith("x "):
        # (an array on the left: numpy applies C's reflected method to each element, making an object array,
        # which the engines cannot follow (the duals' operator would hand C the whole array): refused)
        for run in (gradient, jacfwd):
            with pytest.raises(OverdubError, match="each element"):
                run(g, xs)
        return
    np.testing.assert_allclose(gradient(g, xs)[0], [k, k], rtol=1e-12)
    np.testing.assert_allclose(jacfwd(g, xs), [k, k], rtol=1e-12)


def test_nonlinear_operator_of_an_object():
    f = lambda x: Weighted() * x  # noqa: E731
    assert derivative(f, 0.7) == pytest.approx(1.4, rel=1e-12)
    assert gradient(f, 0.7)[0] == pytest.approx(1.4, rel=1e-12)


# -- an ndarray subclass's own operators and `__getitem__` (pyrr's Matrix44 `*` a matrix product, `|` a dot
#    product: reverse mode took numpy's elementwise ones)

class VecMat(np.ndarray):
    def __mul__(self, other):  # `*` a vector-matrix product
        return np.dot(np.asarray(other), np.asarray(self))

    def __or__(self, other):  # `|` a dot product
        return float(np.dot(np.asarray(self), np.asarray(other)))

    def __neg__(self):
        return np.asarray(self) * 5.0

    def __getitem__(self, i):
        return np.asarray(self)[i] * 2.0


R3 = np.array([[0.9, 0.1, 0.4], [-0.2, 1.1, 0.3], [0.5, 0.0, 0.8]])
W3 = np.array([0.3, -1.1, 0.7])
X3 = np.array([0.37, -0.71, 1.23])


@pytest.mark.parametrize("f", [
    lambda x: (R3.view(VecMat) * x) @ W3,
    lambda x: np.asarray(x).view(VecMat) | W3,
    lambda x: (-(x * 1.0).view(VecMat)) @ W3,
    lambda x: (x * 1.0).view(VecMat)[1] + 0.0,
], ids=["mul", "or", "neg", "getitem"])
def test_ndarray_subclass_operators(f):
    np.testing.assert_allclose(gradient(f, X3)[0], fd.jacobian(f, X3), rtol=1e-6, atol=1e-9)


class Plain(np.ndarray):
    pass


def _fill(o, v):
    o[0] = v


def _add_into(o, v):
    o += v


def _added_through_a_view(x):
    b = np.ones(3)
    v = b.view(Plain)
    v += x * x
    return b @ W3


@pytest.mark.parametrize("f", [
    lambda x: (lambda a: (_fill(a, x[0]), a[0] * a[0])[1])(np.zeros(3).view(Plain)),
    lambda x: (lambda a: (_add_into(a, x * x), np.asarray(a) @ W3)[1])(np.zeros(3).view(Plain)),
    _added_through_a_view,
], ids=["setitem in a callee", "+= in a callee", "+= seen by the base"])
def test_ndarray_subclass_changed_in_place(f):
    np.testing.assert_allclose(gradient(f, X3)[0], fd.jacobian(f, X3), rtol=1e-6, atol=1e-9)


# -- operator methods that are descriptor objects (multipledispatch's dispatcher, a partial's maker): reverse
#    mode took the result for a number's (0)

class _Dispatcher:
    def __get__(self, instance, owner):
        self.obj = instance
        return self

    def __call__(self, other):
        return self.obj.v * other


class _ClosureMaker:
    def __get__(self, instance, owner):
        return lambda other: instance.v * other * 4.0


class Described:
    def __init__(self, v):
        self.v = v
    __mul__ = _Dispatcher()
    __call__ = _ClosureMaker()


@pytest.mark.parametrize("f, slope", [(lambda x: Described(x) * 3.0, 3.0), (lambda x: Described(x)(2.0), 8.0)],
                         ids=["operator", "call"])
def test_descriptor_dunders(f, slope):
    assert fd.derivative(f, 0.7) == pytest.approx(slope, rel=1e-6)
    assert gradient(f, 0.7)[0] == pytest.approx(slope, rel=1e-12)
    assert derivative(f, 0.7) == pytest.approx(slope, rel=1e-12)


# -- an array's shape set in place (skyfield's propagate: the cotangent was broadcast against the old shape,
#    three times the gradient), and `/=` on a 0-d array (crashed)

POS = np.array([1.0, 0.1, 0.05])


def shape_set(t):
    r = t * POS[:, None]
    r.shape = (3,)
    return r.sum()


def shape_set_matrix(x):
    y = x * 1.0
    y.shape = (2, 2)
    return (y * np.array([[1.0, 2.0], [3.0, 4.0]])).sum()


def zero_d_divided(x):
    d = np.array(x * 2.0)
    d /= 3.0
    return d


def test_shape_set_in_place():
    assert gradient(shape_set, 0.7)[0] == pytest.approx(1.15, rel=1e-12)
    x = np.array([0.1, 0.2, 0.3, 0.4])
    np.testing.assert_allclose(gradient(shape_set_matrix, x)[0], [1.0, 2.0, 3.0, 4.0], rtol=1e-12)
    assert gradient(zero_d_divided, 0.37)[0] == pytest.approx(2 / 3, rel=1e-12)


# -- what an iterator's `__next__` stores into itself, read after a loop that drops the items
#    (particles' Kalman filter and HMM: `for _ in self: pass`, gradient 0)

class Accumulating:
    def __init__(self, a):
        self.a, self.acc, self.n = a, 0.0, 0

    def __iter__(self):
        return self

    def __next__(self):
        if self.n == 3:
            raise StopIteration
        self.n += 1
        self.acc = self.acc + self.a * self.a
        return self.a * self.n


def drained_by_for(a):
    b = Accumulating(a)
    for _ in b:
        pass
    return b.acc


def drained_by_list(a):
    b = Accumulating(a)
    list(b)
    return b.acc


def drained_and_unpacked(a):
    b = Accumulating(a)
    p, q, r = b
    return r + b.acc


@pytest.mark.parametrize("f, slope", [(drained_by_for, lambda a: 6 * a), (drained_by_list, lambda a: 6 * a),
                                      (drained_and_unpacked, lambda a: 3 + 6 * a)])
def test_state_an_iterator_stores(f, slope):
    a = 0.7
    assert fd.derivative(f, a) == pytest.approx(slope(a), rel=1e-6)
    assert gradient(f, a)[0] == pytest.approx(slope(a), rel=1e-12)
    assert derivative(f, a) == pytest.approx(slope(a), rel=1e-12)


# -- aliasing found by a generator of programs that view and change arrays (forward mode's ravel of a
#    non-contiguous array was a view: the value itself changed; an element's tangent in jacfwd was a view of
#    the array's; a method changing an array its object holds, the caller's; a closure changing a captured
#    array through an alias, or a captured view of another array)

X4 = np.array([1.04, 0.61, -1.22, 0.31])


def ravel_copy_written(x):
    a = x * 1.0
    a[::-1].ravel()[...] = 0.0  # (a copy: a keeps its values)
    return np.sum(a)


def ravel_copy_kept(x):
    a = x * 1.0
    w = a[::2].ravel()
    a *= 2.0
    return np.sum(w)


def element_kept(x):
    a = x * 1.0
    s = a[3]
    a *= 2.0
    return s


def element_after_reversal(x):
    a = x * 1.0
    s = float(a[3])
    a[:] = a[::-1]
    return np.sin(s)


class _Holder:
    def __init__(self, a):
        self.a = a

    def add(self, v):
        self.a += v

    def scale_tail(self, k):
        self.a[1:] *= k


def held_and_added(x):
    a = np.array(x)
    _Holder(a).add(x[3])
    return np.sum(a)


def held_view_scaled(x):
    a = np.array(x)
    v = a[1:]
    h = _Holder(a)
    h.scale_tail(x[0])
    return np.sum(v ** 2) + a[0]


def closure_alias_scaled(x):
    a = x.copy()

    def inner():
        b = a
        b *= 0.5
    inner()
    return np.sum(a)


def closure_view_scaled(x):
    a = x.copy()
    v = a[:-1]

    def inner():
        v[...] *= 2.0
    inner()
    return np.sum(a)


def closure_base_scaled(x):
    a = x * 1.0
    v = a[::2]

    def inner():
        a[...] *= 0.5
    inner()
    return np.sum(v)


@pytest.mark.parametrize("f", [ravel_copy_written, ravel_copy_kept, element_kept, element_after_reversal,
                               held_and_added, held_view_scaled, closure_alias_scaled, closure_view_scaled,
                               closure_base_scaled])
def test_aliases_changed_in_place(f):
    expected = fd.jacobian(f, X4)
    assert float(np.asarray(jvp(f, (X4.copy(),), (np.ones(4),))[0])) == pytest.approx(float(f(X4.copy())), rel=1e-12)
    np.testing.assert_allclose(gradient(f, X4.copy())[0], expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacfwd(f, X4.copy()), expected, rtol=1e-6, atol=1e-8)


def loop_over_aliases(x):
    a = x.copy()
    for w in [a, a]:
        w *= 2.0
    return np.sum(a)


def loop_over_parts(x):
    a = x.copy()
    b = x * 2
    for w in [a[:2], a[2:], b, a]:
        w -= 0.1 * w ** 2
    return np.sum(a ** 2) + np.sum(b)


def loop_over_a_tuple_of_views(x):
    a = x.copy()
    for w in (a, a[::2]):
        w[...] = np.sin(w)
    return a @ x


@pytest.mark.parametrize("f", [loop_over_aliases, loop_over_parts, loop_over_a_tuple_of_views])
def test_loop_over_arrays_changed_in_place(f):
    expected = fd.jacobian(f, X4)
    np.testing.assert_allclose(gradient(f, X4.copy())[0], expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacfwd(f, X4.copy()), expected, rtol=1e-6, atol=1e-8)


def test_resize_in_place_is_refused_in_forward_mode():
    def f(x):
        r = x * 1.0
        r.resize(6, refcheck=False)
        return r.sum()
    with pytest.raises(OverdubError, match="resize"):
        jacfwd(f, X4.copy())


def test_item_of_an_array_changed_after():
    def f(x):
        a = x * 1.0
        s = a.item(3)
        a *= 2.0
        return s * s
    np.testing.assert_allclose(jacfwd(f, X4.copy()), [0, 0, 0, 2 * X4[3]], rtol=1e-12)


def test_vectorize_with_a_list_argument_in_forward_mode():
    def f(x):
        return np.vectorize(lambda v, s: v * s)(x, [0.1, 0.2, 0.3]).sum()
    x = np.array([0.5, 0.7, 0.9])
    np.testing.assert_allclose(jacfwd(f, x), [0.1, 0.2, 0.3], rtol=1e-12)
    np.testing.assert_allclose(fd.jacobian(f, x), [0.1, 0.2, 0.3], rtol=1e-6)


class _Tagged(np.ndarray):
    pass


def subclass_view_of_view_scaled(x):
    a = x.copy()
    v = a.view(_Tagged)[:]
    v *= 2.0
    return np.sum(np.sin(a))


def test_subclass_view_of_a_view_changed():
    expected = 2 * np.cos(2 * X4)
    np.testing.assert_allclose(fd.jacobian(subclass_view_of_view_scaled, X4), expected, rtol=1e-6)
    np.testing.assert_allclose(gradient(subclass_view_of_view_scaled, X4.copy())[0], expected, rtol=1e-9)
    np.testing.assert_allclose(jacfwd(subclass_view_of_view_scaled, X4.copy()), expected, rtol=1e-9)


def test_copyto_into_a_subclass_view_keeps_the_value_in_forward_mode():
    def f(x):
        a = x * 1.0
        np.copyto(a.view(_Tagged), 0.1 * a.sum())
        return np.sum(a)
    y, _ = jvp(f, (X4.copy(),), (np.ones(4),))
    assert y == pytest.approx(f(X4.copy()), rel=1e-12)  # (the value: the copy went into the view's memory)
    np.testing.assert_allclose(gradient(f, X4.copy())[0], fd.jacobian(f, X4), rtol=1e-6)


def list_held_view_written(x):
    a = x.copy()
    held = [a[1:]]
    a *= a
    held[0] += 0.25
    return np.sum(a)


def dict_held_view_written(x):
    a = x.copy()
    d = {"w": a[::-1]}
    a *= a
    d["w"] *= 1.1
    return np.sum(a)


@pytest.mark.parametrize("f, k", [(list_held_view_written, 2.0), (dict_held_view_written, 2.2)])
def test_second_derivative_through_a_held_view_written(f, k):
    expected = k * np.eye(4)
    np.testing.assert_allclose(fd.hessian(f, X4), expected, atol=1e-5)
    np.testing.assert_allclose(hessian(f, X4.copy()), expected, atol=1e-9)
    np.testing.assert_allclose(hessian(f, X4.copy(), inner="forward"), expected, atol=1e-9)


class _Millimetres(np.ndarray):
    """Holds millimetres; every ufunc sees metres (a unit array's pattern)."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kw):
        args = [np.asarray(i) * (1e-3 if isinstance(i, _Millimetres) else 1.0) for i in inputs]
        return getattr(ufunc, method)(*args, **kw)


def test_subclass_with_its_own_array_ufunc_in_forward_mode():
    # (forward mode's tangent twin applied sin's rule to the millimetres' tangent: 1000 times the slope)
    w = np.array([0.3, -1.1, 0.7])

    def f(x):
        return np.sin(np.asarray(x * 1000.0).view(_Millimetres)) @ w
    x = np.array([0.37, -0.71, 1.23])
    expected = np.cos(x) * w
    np.testing.assert_allclose(fd.jacobian(f, x), expected, rtol=1e-6)
    try:
        got = jacfwd(f, x)
    except OverdubError:
        return
    np.testing.assert_allclose(got, expected, rtol=1e-9)


class _PassingOn(np.ndarray):
    """Operators of its own that pass on to numpy's (a subclass keeping metadata)."""

    def __mul__(self, o):
        return super().__mul__(o)

    def __add__(self, o):
        return super().__add__(o)

    def __rsub__(self, o):
        return super().__rsub__(o)


def test_subclass_operators_passing_on_to_numpy():
    def f(x):
        s = (x * 1.0).view(_PassingOn)
        return np.asarray(s * s + s) @ W3 + np.asarray(2.0 - s) @ W3
    np.testing.assert_allclose(gradient(f, X3)[0], fd.jacobian(f, X3), rtol=1e-6)
    np.testing.assert_allclose(gradient(f, X3)[0], (2 * X3 + 1 - 1) * W3, rtol=1e-12)


# -- found re-running the aliasing generator on this session's fixes

class _Scaler:
    def __init__(self, a):
        self.a = a

    def scale(self, c):
        self.a *= c


def scaled_by_a_method(x):
    a = x.copy()
    _Scaler(a).scale(1.3)
    return np.sum(a * a)


def test_second_derivative_of_an_array_a_method_changed():
    expected = 3.38 * np.eye(4)
    np.testing.assert_allclose(fd.hessian(scaled_by_a_method, X4), expected, atol=1e-5)
    np.testing.assert_allclose(hessian(scaled_by_a_method, X4.copy()), expected, atol=1e-9)
    np.testing.assert_allclose(hessian(scaled_by_a_method, X4.copy(), inner="forward"), expected, atol=1e-9)


def closure_writes_and_reads_a_view(x):
    a = x * 1.0
    v = a[1:]

    def inner(c):
        a[1:] += c
        return np.sum(v)
    return inner(x[0] * 3.0)


def subclass_subview_in_a_list(x):
    a = x * 1.0
    held = [a.view(_Tagged)[::2]]
    a += x
    return float(np.sum(held[0]))


@pytest.mark.parametrize("f", [closure_writes_and_reads_a_view, subclass_subview_in_a_list])
def test_views_read_after_a_change_elsewhere(f):
    expected = fd.jacobian(f, X4)
    np.testing.assert_allclose(gradient(f, X4.copy())[0], expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacfwd(f, X4.copy()), expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [
    lambda x: list(map(np.sin, (x,)))[0],
    lambda x: np.sin(list(map(np.asarray, (0.3, x)))[1]),
    lambda x: list(zip((x * 2.0,)))[0][0],
], ids=["map over a tuple", "map unpacked", "zip over a tuple"])
def test_map_and_zip_over_a_tuple(f):
    expected = fd.derivative(f, 0.7)
    assert gradient(f, 0.7)[0] == pytest.approx(expected, rel=1e-7)
    assert derivative(f, 0.7) == pytest.approx(expected, rel=1e-7)


def test_upper_cholesky_factor_in_forward_mode():
    # (its tangent was the lower factor's formula: dense, not triangular)
    A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    E = np.array([[0.3, 0.1, -0.2], [0.1, 0.5, 0.4], [-0.2, 0.4, 0.2]])

    def f(t):
        return np.linalg.cholesky(A + t * E, upper=True)
    expected = fd.derivative(f, 0.0)
    np.testing.assert_allclose(jvp(f, (0.0,), (1.0,))[1], expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.tril(expected, -1), 0.0, atol=1e-8)


def copyto_after_a_closure(x):
    a = x.copy()
    derivative(lambda t: np.sum(t * a), 0.3)  # (a closure reading np and a: np was taken for the array)
    np.copyto(a[:], 1.0)
    return np.sum(a)


def put_after_a_closure(x):
    a = x.copy()
    h = lambda t: np.sum(t * a)  # noqa: E731,F841
    np.put(a.reshape(-1), [2], 1.0)
    return np.sum(a * a)


@pytest.mark.parametrize("f", [copyto_after_a_closure, put_after_a_closure])
def test_numpy_writers_after_a_closure_reading_the_array(f):
    expected = fd.jacobian(f, X4)
    np.testing.assert_allclose(gradient(f, X4.copy())[0], expected, rtol=1e-6, atol=1e-8)


# -- a bisection narrowing its bracket elementwise (np.where, masks): a fixed mix of the bracket's ends,
#    derivative 0.25 for the cube root's 1/12 in every mode; refused like the scalar one

def _bracket(t):
    """The cube root's starting bracket [0, t], elementwise."""
    t = np.atleast_1d(t)
    return t, np.zeros_like(t), t * 1.0


def cbrt_by_where(t):
    t, lower, upper = _bracket(t)
    for _ in range(80):
        x = (lower + upper) / 2
        high = x * x * x > t
        upper = np.where(high, x, upper)
        lower = np.where(high, lower, x)
    return ((lower + upper) / 2)[0]


def cbrt_by_masks(t):
    t, lower, upper = _bracket(t)
    for _ in range(80):
        x = (lower + upper) / 2
        high = x * x * x > t
        upper[high] = x[high]
        lower[~high] = x[~high]
    return ((lower + upper) / 2)[0]


@pytest.mark.parametrize("f", [cbrt_by_where, cbrt_by_masks])
@pytest.mark.parametrize("mode", [gradient, derivative])
def test_vectorised_bisection_is_refused(f, mode):
    assert f(8.0) == pytest.approx(2.0, rel=1e-12)
    with pytest.raises(OverdubError, match="bisection"):
        mode(f, 8.0)


def subclass_view_scaled_by_a_method(x):
    a = x.copy()
    _Scaler(a.view(_Tagged)).scale(1.3)
    return np.sum(np.sin(a))


def test_subclass_view_an_object_holds_changed_by_its_method():
    np.testing.assert_allclose(gradient(subclass_view_scaled_by_a_method, X4.copy())[0], 1.3 * np.cos(1.3 * X4),
                               rtol=1e-12)
    np.testing.assert_allclose(fd.jacobian(subclass_view_scaled_by_a_method, X4), 1.3 * np.cos(1.3 * X4), rtol=1e-6)
