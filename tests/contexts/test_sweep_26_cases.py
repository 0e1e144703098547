"""Cases found by the sweeps of session 26 and left from session 25, each checked against central
differences or a closed form, in every mode that takes them."""

import fractions
import functools
import operator

import numpy as np
import pytest

from contexts import derivative, gradient, hessian, hvp, jacfwd, jacobian, jacobian_sparsity, jvp, stop_gradient, vjp
from contexts.lowered.runtime import OwnComparison, SpecialPoint, TextRoundTrip
from overdub.errors import OverdubError
from tests import fd

X = np.array([0.7, -0.45, 1.1])


# -- `a op= b` by a class's own in-place method -------------------------------------------------

class NewOnIadd:
    """`__iadd__` returning a new object, not self: reverse mode counted the result's reads 3x."""

    def __init__(self, v):
        self.v = v

    def __iadd__(self, o):
        return NewOnIadd(self.v + o)

    def __imul__(self, o):
        return NewOnIadd(self.v * o)


class InPlaceField:
    """`__isub__` changing in place the array a field holds (`self.v -= o`), which the caller shares."""

    def __init__(self, v):
        self.v = v

    def __isub__(self, o):
        self.v -= o
        return self

    def __imul__(self, o):
        self.v *= o
        return self


class Outer:
    """An object holding an object whose in-place method changes a shared array."""

    def __init__(self, inner):
        self.inner = inner

    def __iadd__(self, o):
        self.inner -= o
        return self


def iadd_new(x):
    a = NewOnIadd(x * x)
    a += x * 1.3
    return np.sum(a.v)


def imul_new_twice(x):
    a = NewOnIadd(x)
    a *= x
    a += np.sin(x)
    a *= 2.0
    return np.sum(a.v)


def isub_shared(x):
    t = x * x
    a = InPlaceField(t)
    a -= x * 1.3  # t is now x*x - 1.3x
    return np.sum(t)


def isub_shared_both(x):
    t = x * x
    a = InPlaceField(t)
    a -= x * 1.3
    return np.sum(t * a.v)


def imul_shared_loop(x):
    t = x + 1.0
    a = InPlaceField(t)
    for _ in range(3):
        a *= x
    return np.sum(t) + np.sum(a.v)


def isub_nested(x):
    t = x * x
    o = Outer(InPlaceField(t))
    o += np.cos(x)
    return np.sum(t)


@pytest.mark.parametrize("f", [iadd_new, imul_new_twice, isub_shared, isub_shared_both, imul_shared_loop,
                               isub_nested])
def test_own_inplace_method_reverse(f):
    want = fd.gradient(f, X.copy())[0]
    np.testing.assert_allclose(gradient(f, X.copy())[0], want, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(vjp(f, (X.copy(),), 1.0)[1][0], want, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("f", [iadd_new, imul_new_twice, isub_shared, isub_shared_both, imul_shared_loop,
                               isub_nested])
def test_own_inplace_method_forward(f):
    want = fd.gradient(f, X.copy())[0]
    np.testing.assert_allclose(jacfwd(f, X.copy()), want, rtol=1e-7, atol=1e-9)


def iadd_new_scalar(x):
    a = NewOnIadd(x * x)
    a += x * 1.3
    return a.v


@pytest.mark.parametrize("mode", ["gradient", "derivative", "hessian"])
def test_own_inplace_method_scalar(mode):
    got, want = fd.in_mode(iadd_new_scalar, 0.7, mode)
    assert got == pytest.approx(want, rel=1e-6, abs=1e-8)


# -- a method changing in place an array its object holds a level down ---------------------------

class Holder:
    def __init__(self, inner):
        self.inner = inner

    def sub_field(self, o):
        self.inner.v -= o

    def sub_item(self, o):
        self.inner[0] -= o

    def sub_key(self, o):
        self.inner["k"] *= o


def nested_field(x):
    t = x * x
    Holder(InPlaceField(t)).sub_field(np.cos(x))
    return np.sum(t)


def nested_list(x):
    t = x * x
    h = Holder([t, 1.0])
    h.sub_item(np.cos(x))
    return np.sum(t * x)


def nested_dict(x):
    t = np.sin(x)
    h = Holder({"k": t})
    h.sub_key(x)
    h.sub_key(x)
    return np.sum(t)


@pytest.mark.parametrize("f", [nested_field, nested_list, nested_dict])
def test_method_changes_nested_shared_array(f):
    want = fd.gradient(f, X.copy())[0]
    np.testing.assert_allclose(gradient(f, X.copy())[0], want, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(jacfwd(f, X.copy()), want, rtol=1e-7, atol=1e-9)


# -- arrays a function makes by np.eye/np.identity/np.tri/np.copy, then fills -------------------

def transform(R, p):
    """pytransform3d's `transform_from` shape: a 4x4 identity filled with a rotation and a translation."""
    out = np.eye(4)
    out[:3, :3] = R
    out[:3, 3] = p
    c = np.copy(out)
    c[3, :3] = p * 2.0
    eye3 = np.identity(3)
    eye3[0] = p
    return out @ c + np.tri(4) * p[0] + np.sum(eye3)


def transform_by_keyword(q):
    return transform(R=np.outer(q[:3], q[3:]), p=q[:3])


def transform_from(R, p):
    out = np.eye(4)
    out[:3, :3] = R
    out[:3, 3] = p
    return out


def checked_transform(q):
    """A check on the filled matrix (pytransform3d's `np.allclose(A2B[3], [0, 0, 0, 1])`) before using it."""
    t = transform_from(R=np.outer(q[:3], q[3:]), p=q[:3])
    if not np.allclose(t[3], [0.0, 0.0, 0.0, 1.0]):
        raise ValueError("not a transform")
    return np.sum(t * t)


Q = np.array([0.43, -0.61, 0.29, 1.3, -0.7, 2.1])


def test_filled_identity_forward_and_reverse():
    want = fd.jacobian(transform_by_keyword, Q)
    np.testing.assert_allclose(jacfwd(transform_by_keyword, Q), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacobian(transform_by_keyword, Q), want, rtol=1e-6, atol=1e-8)
    pattern = jacobian_sparsity(transform_by_keyword, Q).toarray() != 0
    assert np.all((np.abs(want.reshape(16, 6)) > 1e-9) <= pattern)


def test_filled_identity_checked_gradient():
    want = fd.gradient(checked_transform, Q)[0]
    np.testing.assert_allclose(gradient(checked_transform, Q)[0], want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacfwd(checked_transform, Q), want, rtol=1e-6, atol=1e-8)


# -- an array an active operation read, changed in place afterwards -----------------------------

def const_factor_cleared(x):
    c = np.array([2.0, 3.0, 0.5])
    y = x * c
    c[:] = 0.0
    return np.sum(y)


def const_factor_scaled_by_index(x):
    c = np.array([2.0, 3.0, 0.5])
    y = np.sin(x * c)
    c[...] *= 0.0
    return np.sum(y)


def const_factor_copyto(x):
    c = np.array([2.0, 3.0, 0.5])
    y = x * c
    np.copyto(c, 0.0)
    return np.sum(y)


def const_factor_out(x):
    c = np.array([3.0, 2.0, 0.5])
    y = x * c
    np.multiply(c, 0.0, out=c)
    return np.sum(y)


def const_factor_view_cleared(x):
    c = np.array([2.0, 3.0, 0.5])
    view = c[:]
    y = x * c
    view[:] = 0
    return np.sum(y)


def mask_cleared(x):
    mask = np.array([True, False, True])
    z = x[mask]
    mask[:] = [False, True, False]
    return np.sum(z * z)


def list_index_changed(x):
    at = [0, 2]
    z = x[at]
    at[0] = 1
    return np.sum(z * 3.0)


def mask_changed_by_itself(x):
    """pyromat's Newton loop: `x[Ids] += dx[Ids]; Ids[Ids] = abs(error[Ids]) > tol`."""
    ids = np.ones(3, dtype=bool)
    z = x[ids]
    ids[ids] = False
    return np.sum(z * z * x)


def index_changed_by_itself(x):
    at = np.array([0, 1])
    z = x[at]
    at[at == 0] = 2
    return np.sum(z * 3.0) + z[0] * x[2]


@pytest.mark.parametrize("f", [const_factor_cleared, const_factor_scaled_by_index, const_factor_copyto,
                               const_factor_out, const_factor_view_cleared, mask_cleared, list_index_changed,
                               mask_changed_by_itself, index_changed_by_itself])
def test_read_array_changed_afterwards(f):
    want = fd.gradient(f, X.copy())[0]
    np.testing.assert_allclose(gradient(f, X.copy())[0], want, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(jacfwd(f, X.copy()), want, rtol=1e-7, atol=1e-9)


# -- stop_gradient in forward mode's Jacobians of arrays ----------------------------------------

def test_stop_gradient_jacfwd_arrays():
    def f(x):
        return np.sum(x ** 2) + stop_gradient(np.sum(x ** 3))

    def g(x):
        return x ** 2 + stop_gradient(x ** 3)

    np.testing.assert_allclose(jacfwd(f, X), 2 * X)  # the closed form: stop_gradient's part is a constant
    np.testing.assert_allclose(jacfwd(g, X), np.diag(2 * X))
    np.testing.assert_allclose(jvp(f, (X,), (np.ones(3),))[1], np.sum(2 * X))


# -- a differentiated number's text parsed back by a callee -------------------------------------

def parse_first(s):
    return float(s.split()[0])


class FromText:
    """geopy's `Point(f"{lat} {lon}")`: its `__new__` parses the text."""

    def __new__(cls, s):
        self = super().__new__(cls)
        self.lat = float(s.split()[0])
        return self


def parsed_by_function(lat):
    return parse_first(f"{lat} 11.575") * 2.0


def parsed_by_class(lat):
    return FromText(f"{lat} 11.575").lat * 2.0


def parsed_from_str(lat):
    return parse_first(str(lat)) * 2.0


@pytest.mark.parametrize("f", [parsed_by_function, parsed_by_class, parsed_from_str])
@pytest.mark.parametrize("mode", [lambda f: gradient(f, 48.137), lambda f: derivative(f, 48.137),
                                  lambda f: jacfwd(f, 48.137)])
def test_text_parsed_by_callee_refused(f, mode):
    with pytest.raises(TextRoundTrip):
        mode(f)


def test_text_made_for_a_message_is_not_refused():
    def f(x):
        message = f"x is {x}"
        assert message.startswith("x is")
        return x * x

    assert gradient(f, 1.5)[0] == pytest.approx(3.0)
    assert derivative(f, 1.5) == pytest.approx(3.0)


# -- a number's operator with an object of a class of its own: what its method is handed --------

class ReflectedCompare:
    """`x < obj` makes Python call `obj.__gt__(x)`; this one returns a value."""

    def __init__(self, v):
        self.v = v

    def __gt__(self, o):
        return self.v - o * 0.5

    def __le__(self, o):
        return self.v * o


def reflected_gt(x):
    return x < ReflectedCompare(x * x)  # x*x - 0.5x


def reflected_le(x):
    return x >= ReflectedCompare(x * 3.0)  # 3x * x


class TakesFloats:
    """numpy hands an object's reflected method a Python float for a numpy scalar on the left."""

    def __init__(self, v):
        self.v = v

    def __radd__(self, o):
        return self.v + (o * 2.0 if type(o) is float else o * 5.0)


def numpy_scalar_left(x):
    s = np.sin(x) + 0.5
    return np.float64(s) + TakesFloats(x)


@pytest.mark.parametrize("f, exact", [(reflected_gt, lambda x: 2 * x - 0.5), (reflected_le, lambda x: 6 * x),
                                      (numpy_scalar_left, lambda x: 2 * np.cos(x) + 1.0)])
def test_number_with_object_forward(f, exact):
    x = 0.613
    assert derivative(f, x) == pytest.approx(exact(x), rel=1e-9)
    assert jvp(f, (x,), (1.0,))[1] == pytest.approx(exact(x), rel=1e-9)


# -- code in an assert's test, an f-string's field, a match guard -------------------------------

class Store:
    def keep(self, x):
        self.y = np.sin(x) * 2.0
        return True


def assert_walrus(x):
    assert (y := x * 2.0) > 0
    return y ** 3  # 8x^3


def assert_method_stores(x):
    b = Store()
    assert b.keep(x), "not kept"
    return b.y ** 3  # 8 sin^3 x


def assert_appends(x):
    seen = []
    assert seen.append(x * x) is None
    return seen[0] * x  # x^3


def fstring_field_appends(x):
    seen = []
    text = f"{seen.append(x * 2.0)}:{x:.3f}"
    assert text.startswith("None")
    return seen[0] ** 3  # 8x^3


@pytest.mark.parametrize("f, exact", [(assert_walrus, lambda x: 24 * x * x),
                                      (assert_method_stores, lambda x: 24 * np.sin(x) ** 2 * np.cos(x)),
                                      (assert_appends, lambda x: 3 * x * x),
                                      (fstring_field_appends, lambda x: 24 * x * x)])
def test_code_in_assert_and_fstring_field(f, exact):
    x = 0.43
    assert gradient(f, x)[0] == pytest.approx(exact(x), rel=1e-9)
    assert derivative(f, x) == pytest.approx(exact(x), rel=1e-9)


def test_assert_of_an_equality_is_no_branch_point():
    def f(x):
        y = x * x
        assert np.allclose(y, x * x), "squares differ"  # (equal everywhere: no special point to refuse)
        return y * 3.0

    assert gradient(f, 0.5)[0] == pytest.approx(3.0)
    assert derivative(f, 0.5) == pytest.approx(3.0)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_match_guard_binding_a_name():
    def f(x):
        match 1:
            case 1 if (y := x * 2.0) > 0:
                return y ** 3
        return 0.0

    with pytest.raises(OverdubError, match="guard"):
        gradient(f, 0.43)
    assert derivative(f, 0.43) == pytest.approx(24 * 0.43 ** 2, rel=1e-9)  # (forward mode's duals follow it)


class ValuedLess:
    def __init__(self, v):
        self.v = v

    def __lt__(self, o):
        return ValuedLess(self.v * 2.0 + o.v)


def valued_less(x):
    return (ValuedLess(x) < ValuedLess(x * x)).v  # 2x + x^2


def test_comparison_returning_a_value():
    with pytest.raises(OwnComparison):
        gradient(valued_less, 0.7)
    assert derivative(valued_less, 0.7) == pytest.approx(2 + 2 * 0.7)
    assert hessian(valued_less, 0.7) == pytest.approx(2.0)  # (forward over forward)
    assert gradient(lambda x: ValuedLess(x).__lt__(ValuedLess(x * x)).v, 0.7)[0] == pytest.approx(3.4)


def test_numpy_scalar_with_object_reverse_and_hessian():
    x = 0.613
    assert gradient(numpy_scalar_left, x)[0] == pytest.approx(1.0 + 2 * np.cos(x), rel=1e-9)
    assert hessian(numpy_scalar_left, x) == pytest.approx(-2 * np.sin(x), rel=1e-9)


# -- forward mode: iter() of an iterator, reduce and operator functions over objects -------------

class CountUp:
    """An iterator whose `__iter__` returns itself."""

    def __init__(self, v):
        self.v, self.i = v, 0

    def __iter__(self):
        return self

    def __next__(self):
        if self.i >= 3:
            raise StopIteration
        self.i += 1
        return self.v * self.i


def iter_of_generator(x):
    g = (e for e in [x, 2 * x, 3 * x])
    first = next(iter(g))
    return first + next(g, 0.0)  # 3x


def iter_of_iterator(x):
    it = CountUp(x)
    first = next(iter(it))
    return first + next(it, 0.0)  # 3x


class Doubles:
    """`__add__` taking its branch by the kind of number it holds."""

    def __init__(self, v):
        self.v = v

    def __add__(self, o):
        return Doubles((self.v + o.v) * (2.0 if isinstance(self.v, float) else 3.0))


def reduce_operator_add(x):
    return functools.reduce(operator.add, [Doubles(x), Doubles(1.0)]).v  # 2(x + 1)


def operator_add_objects(x):
    return operator.add(Doubles(x), Doubles(1.0)).v  # 2(x + 1)


@pytest.mark.parametrize("f, exact", [(iter_of_generator, 3.0), (iter_of_iterator, 3.0),
                                      (reduce_operator_add, 2.0), (operator_add_objects, 2.0)])
def test_forward_iteration_and_operator_functions(f, exact):
    x = 0.44
    assert derivative(f, x) == pytest.approx(exact)
    value, tangent = jvp(f, (x,), (1.0,))
    assert value == pytest.approx(f(x)) and tangent == pytest.approx(exact)
    assert gradient(f, x)[0] == pytest.approx(exact)


# -- an array with an object numpy applies element by element: refused in every mode -------------

class ReflectedSub:
    def __init__(self, v):
        self.v = v

    def __add__(self, o):
        return self.v + getattr(o, "v", o)

    def __radd__(self, o):
        return ReflectedSub(o + self.v)

    def __rsub__(self, o):
        return ReflectedSub((o - self.v) * 2.0)


def sum_reaches_an_array(x):
    s = np.sum(x) * 0.3
    r = sum([ReflectedSub(x), ReflectedSub(s), ReflectedSub(s)])  # V + V is an array; array + V an object array
    return np.sum(r)


def array_minus_object(x):
    r = x - ReflectedSub(x[0] * x[1])
    y = r.v * 0.5 if hasattr(r, "v") else np.array([e.v for e in r])
    return np.sum(np.sin(y))


@pytest.mark.parametrize("f", [sum_reaches_an_array, array_minus_object])
@pytest.mark.parametrize("mode", [lambda f: gradient(f, X), lambda f: jacfwd(f, X), lambda f: hessian(f, X)])
def test_object_array_refused(f, mode):
    with pytest.raises(OverdubError):
        mode(f)


# -- `x == self.attr` in a method: its object is taken as active, the comparison still checked ---

class CachedCube:
    """thermo's `if T == self.T_cached: return self.cached` (a value cached at one point)."""

    t = 1.37

    def cube(self, x):
        if x == self.t:
            return 2.571353  # 1.37 ** 3, cached
        return x ** 3


CACHED = CachedCube()


def through_bound_method(x):
    return CACHED.cube(x) + 2.0 * x


def nan_test_passes(x):
    y = x * x
    if y != y:  # (a NaN test: no branch point)
        return 0.0
    return y


class StaleCube(CachedCube):
    def cube(self, x):
        if x == self.t:
            return 2.5  # (a stale cache: not the formula's value there)
        return x ** 3


def through_stale_cache(x):
    return StaleCube().cube(x) + 2.0 * x


def test_equality_with_a_field_in_a_method_is_checked():
    # (session 57: judged from the two sides of the point; the cached value is the formula's, so the sides'
    # derivative; a stale one is refused)
    want = 3 * 1.37 ** 2 + 2.0
    assert gradient(through_bound_method, 1.37)[0] == pytest.approx(want, rel=1e-6)
    assert float(np.ravel(jacfwd(through_bound_method, 1.37))[0]) == pytest.approx(want, rel=1e-6)
    with pytest.raises(SpecialPoint):
        gradient(through_stale_cache, 1.37)
    with pytest.raises(SpecialPoint):
        jacfwd(through_stale_cache, 1.37)
    x = 1.2
    assert gradient(through_bound_method, x)[0] == pytest.approx(3 * x * x + 2.0)
    assert gradient(nan_test_passes, x)[0] == pytest.approx(2 * x)


# -- dict() of pairs drawn one at a time ----------------------------------------------------------

class Pairs:
    """A class iterating its (key, value) pairs in Python."""

    def __init__(self, v):
        self.v = v

    def __iter__(self):
        yield "a", self.v * self.v
        yield "b", self.v * 3.0


@pytest.mark.parametrize("f, exact", [
    (lambda x: dict(enumerate(iter([x * x, 3.0 * x])))[1], lambda x: 3.0),
    (lambda x: dict(map(lambda e: ("k", e), iter([x * x])))["k"], lambda x: 2 * x),
    (lambda x: x * dict(enumerate(iter([x * x])))[0], lambda x: 3 * x * x),
    (lambda x: dict(Pairs(x))["a"] + dict(Pairs(x))["b"], lambda x: 2 * x + 3.0),
])
def test_dict_of_drawn_pairs(f, exact):
    x = 0.613
    assert gradient(f, x)[0] == pytest.approx(exact(x))
    assert derivative(f, x) == pytest.approx(exact(x))


def _reset(c):
    c[:] = 0.0


class Weights:
    def __init__(self):
        self.w = np.array([2.0, 3.0, 0.5])

    def zero(self):
        self.w[:] = 0.0


def const_factor_scaled_in_place(x):
    c = np.array([2.0, 3.0, 0.5])
    y = np.sin(x * c)
    c *= 0.0
    return np.sum(y)


def const_factor_reset_by_callee(x):
    c = np.array([2.0, 3.0, 0.5])
    y = x * c
    _reset(c)
    return np.sum(y)


def field_zeroed_by_method(x):
    a = Weights()
    y = x * a.w
    a.zero()
    return np.sum(y * y)


def counter_stays_a_number(x):
    k, r = 0, x
    while k < 3:
        r = r * x
        k += 1
    return np.sum(r)


@pytest.mark.parametrize("f", [const_factor_scaled_in_place, const_factor_reset_by_callee, field_zeroed_by_method,
                               counter_stays_a_number])
def test_read_array_changed_by_code_elsewhere(f):
    want = fd.gradient(f, X.copy())[0]
    np.testing.assert_allclose(gradient(f, X.copy())[0], want, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(jacfwd(f, X.copy()), want, rtol=1e-7, atol=1e-9)


# -- crashes: a getter raising AttributeError under getattr's default; a real number in a complex array

class ShapeOfMagnitude:
    def __init__(self, m):
        self._m = m

    @property
    def shape(self):
        return self._m.shape  # (a float has none: AttributeError)


def _shaped(q, x):
    return x * x if not getattr(q, "shape", False) else x


def _wrapped(*args, **kw):
    return _shaped(*args, **kw)


def getattr_default_of_raising_getter(x):
    return _wrapped(ShapeOfMagnitude(945.0), x)  # x^2


def real_into_complex(x):
    a = np.zeros(2, dtype=complex)
    a[0] = x * 2.0
    return abs(a[0] * (1 + 1j)) ** 2  # 8 x^2


@pytest.mark.parametrize("f, exact", [(getattr_default_of_raising_getter, lambda x: 2 * x),
                                      (real_into_complex, lambda x: 16 * x)])
def test_former_crashes(f, exact):
    x = 0.7
    assert gradient(f, x)[0] == pytest.approx(exact(x))
    assert derivative(f, x) == pytest.approx(exact(x))


class OptsOut:
    """numpy's opt-out: an array's operator leaves `x < obj` to `obj.__gt__(x)`."""

    __array_ufunc__ = None

    def __init__(self, v):
        self.v = v

    def __gt__(self, o):
        return self.v * o


def test_sparsity_of_an_operand_opting_out_of_ufuncs():
    def f(x):
        return x < OptsOut(np.sin(x))  # sin(x) * x

    want = np.abs(fd.jacobian(f, X)) > 1e-9
    for mode in ("global", "local"):
        pattern = jacobian_sparsity(f, X, mode=mode).toarray() != 0
        assert np.all(want <= pattern)


class FloatsOnly:
    """`__mul__` taking floats only, and a `__getattr__` answering any name (`.shape` too)."""

    def __init__(self, v):
        self.v = v

    def __mul__(self, o):
        return FloatsOnly(self.v * o) if type(o) is float else NotImplemented

    def __rmul__(self, o):
        return FloatsOnly(o * self.v)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self.v * 0.25


def test_operator_declining_a_dual():
    def f(x):
        return (FloatsOnly(x) * x).v  # x^2

    assert derivative(f, 0.7) == pytest.approx(1.4)
    assert hessian(f, 0.7) == pytest.approx(2.0)
    assert hvp(f, 0.7, 1.0) == pytest.approx(2.0)


def test_keys_of_a_dict_of_differentiated_values_carry_none():
    def f(x):
        d = {"a": x, "b": 2 * x}
        return d["a"] * len(" ".join(d.keys()))  # 3x

    assert gradient(f, 1.5)[0] == pytest.approx(3.0)


def test_hessian_inner_forward_stores_a_row_of_one_more_dimension():
    def f(x):
        out = np.zeros((2, 2))
        v = np.array([[x[0]], [x[1] * x[0]]])
        out[-1, :] = np.transpose(v)  # (1, 2) into a row of shape (2,): tmm's `vw_list[-1, :] = np.transpose(vw)`
        return (out ** 2).sum()  # x0^2 + (x0 x1)^2

    x = np.array([1.3, 0.7])
    want = np.array([[2 + 2 * x[1] ** 2, 4 * x[0] * x[1]], [4 * x[0] * x[1], 2 * x[0] ** 2]])
    np.testing.assert_allclose(hessian(f, x, inner="forward"), want, rtol=1e-12)
    np.testing.assert_allclose(hessian(f, x), want, rtol=1e-12)


# -- more arrays read then changed (a generator of mutation and aliasing programs) ---------------

class Doubler:
    def __init__(self, c):
        self.c = c

    def bump(self):
        self.c *= 2.0


def arithmetic_constant_scaled(x):
    c = np.ones(3) * 0.3
    y = x * c
    c *= 2.0  # after use
    return np.sum(y * y)


def constant_scaled_by_a_new_object(x):
    c = np.array([0.3, -0.2, 0.5])
    y = x * c
    Doubler(c).bump()
    return np.sum(y * y)


def constant_changed_through_a_field(x):
    c = np.array([0.3, -0.2, 0.5])
    o = Doubler(None)
    o.c = c
    o.c -= x * x  # c itself changes
    return np.sum(c * x)


def mask_of_a_store_changed(x):
    c = x * 1.0
    m = np.array([True, False, False])
    c[m] = 2.0
    m[0] = False
    m[1] = True
    return np.sum(c * c)


@pytest.mark.parametrize("f", [arithmetic_constant_scaled, constant_scaled_by_a_new_object,
                               constant_changed_through_a_field, mask_of_a_store_changed])
def test_arrays_changed_after_use_more(f):
    want = fd.gradient(f, X.copy())[0]
    np.testing.assert_allclose(gradient(f, X.copy())[0], want, rtol=1e-7, atol=1e-9)
    right_or_refused(lambda: jacfwd(f, X.copy()), want)  # (forward mode refuses `o.c -= v` into a plain array)
    right_or_refused(lambda: np.diag(hessian(f, X.copy())), np.diag(fd.hessian(f, X.copy())), rtol=1e-4)


def right_or_refused(compute, want, rtol=1e-7):
    """compute() equals want, or is refused (never a wrong number)."""
    try:
        got = compute()
    except OverdubError:
        return
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-5 if rtol > 1e-6 else 1e-9)


def operator_iadd_on_its_own_line(x):
    a = np.array([x, 2.0 * x])
    operator.iadd(a, np.array([x * x, x]))  # a += [x^2, x]
    return np.sum(a)  # x^2 + 4x


def imul_by_name(x):
    a = np.array([x, 2.0 * x])
    a.__imul__(x)
    return np.sum(a)  # 3x^2


@pytest.mark.parametrize("f, d1, d2", [(operator_iadd_on_its_own_line, lambda x: 2 * x + 4, lambda x: 2.0),
                                       (imul_by_name, lambda x: 6 * x, lambda x: 6.0)])
def test_in_place_operator_by_a_call(f, d1, d2):
    x = 0.7
    assert derivative(f, x) == pytest.approx(d1(x))
    assert jvp(f, (x,), (1.0,))[1] == pytest.approx(d1(x))
    right_or_refused(lambda: gradient(f, x)[0], d1(x))
    assert hessian(f, x) == pytest.approx(d2(x))


def test_sparsity_of_a_write_into_a_plain_array_is_refused():
    def f(x):
        c = np.array([0.1, 0.2, 0.3])
        np.sin(x, out=c)
        return np.sum(c)

    with pytest.raises(OverdubError):
        jacobian_sparsity(f, X)


class RejectsTracers:
    def __init__(self, v):
        self.v = v

    def __rsub__(self, o):
        return RejectsTracers(o - self.v)

    def __add__(self, o):
        if not isinstance(o, (int, float, np.ndarray, np.floating)):
            return NotImplemented
        return RejectsTracers(self.v + o)


def test_sparsity_of_objects_with_their_own_arithmetic():
    def f_rsub(x):
        r = np.sin(x[1]) - RejectsTracers(np.sum(x * x))
        return r.v

    def f_add(x):
        return np.sum((RejectsTracers(x * 1.0) + x[2] * 2.0).v)

    want = np.abs(fd.jacobian(f_rsub, X)) > 1e-9
    assert np.all(want <= (jacobian_sparsity(f_rsub, X).toarray().ravel() != 0))
    with pytest.raises(OverdubError):  # (its __add__ declines the tracer: never taken for a constant)
        jacobian_sparsity(f_add, X)


def test_jvp_of_a_constant_filled_by_a_function_then_scaled():
    def f(x):
        c = np.array([0.2, 0.3, 0.4])
        np.copyto(c, x)  # (c's zero tangent was an integer array: the stored tangent was cut to 0)
        c *= 2.0
        return c

    v = np.array([0.3, -0.5, 0.8])
    np.testing.assert_allclose(jvp(f, (X,), (v,))[1], 2 * v)
    np.testing.assert_allclose(jacfwd(f, X), 2 * np.eye(3))


class AddsToItself:
    def __init__(self, v):
        self.v = v

    def __iadd__(self, o):
        self.v += o
        return self

    def sub(self, o):
        self.v -= o
        return self


def iadd_of_what_it_holds(x):
    a = x * 1.0
    o = AddsToItself(a)
    o += a  # a becomes 2x
    return np.sum(a * a)


def changed_through_a_new_object(x):
    c = np.array([1.275, 0.453, -1.462])
    o = AddsToItself(c)
    o.sub(x * 2.0)  # c changes
    return np.sum(c * c)


@pytest.mark.parametrize("f", [iadd_of_what_it_holds, changed_through_a_new_object])
def test_objects_holding_arrays_changed_in_place(f):
    want = fd.gradient(f, X.copy())[0]
    np.testing.assert_allclose(gradient(f, X.copy())[0], want, rtol=1e-7, atol=1e-9)
    right_or_refused(lambda: jacfwd(f, X.copy()), want)


def test_sparsity_of_an_in_place_operator_into_a_plain_array_is_refused():
    def f(x):
        c = np.array([0.5, -1.0, 0.1])
        operator.iadd(c, x)  # (derived without the write: c kept its values, an entry missed)
        return np.sum(np.sin(c))

    with pytest.raises(OverdubError):
        jacobian_sparsity(f, X)


def test_chunked_tangents_through_split_advanced_indices():
    """`A[mask, :3, 3]`: numpy puts the advanced dimensions first, ahead of the directions' axis of a chunked
    tangent (hessian: an IndexError under an all-False mask, pytransform3d's exponential coordinates)."""
    def f(x):
        xs = x.reshape(2, 3)
        a = np.zeros((2, 4, 4))
        a[..., :3, 3] = xs * xs[:, ::-1]
        mask = np.array([True, False])
        a[mask, :3, 3] = xs[mask] ** 2
        a[np.array([False, False]), :3, 2] = xs[np.array([False, False])]
        b = a[mask, 1:, 3] * 2.0 + a[[0, 1], :2, 3].sum()
        return np.sum(a * a) + np.sum(b ** 2)

    x = np.linspace(0.3, 1.4, 6)
    np.testing.assert_allclose(jacfwd(f, x), fd.gradient(f, x)[0], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(hessian(f, x), fd.hessian(f, x), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(hessian(f, x, inner="forward"), fd.hessian(f, x), rtol=1e-5, atol=1e-5)


def test_fraction_of_a_differentiated_float_is_refused_in_forward_mode():
    """A Fraction made of a dual took its exact ratio, a constant (0.62 for 1.24), when the lowering wrapped
    `Fraction(x)` of an active x as a parse: now refused again, and a parse of its text too."""
    def f(x):
        return float(fractions.Fraction(x)) * x

    with pytest.raises(OverdubError):
        derivative(f, 0.62)
