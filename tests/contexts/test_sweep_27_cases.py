"""Cases found by the sweeps of session 27 (packages nobody here wrote: SALib, trimesh, blackscholes,
plasmapy, ...; generated programs), each checked against central differences or a closed form, in every
mode that takes them, or asserting a refusal."""

import collections

import numpy as np
import pytest

from contexts import derivative, gradient, hessian, jacfwd, jacobian, jvp
from tests import fd


# -- arrays held by subclasses of dict and list, changed in place ----------------------------------
# (SALib's `dgsm.analyze`: `S = ResultDict(...)`, then `S["vi"][j] = ...`: reverse mode gave 0, the search
# for the containers holding a changed array took only dict, list and tuple themselves)

class ResultDict(dict):
    pass


class Rows(list):
    pass


def dict_subclass_filled(y):
    S = ResultDict(v=np.zeros(2))
    S["v"][0] = y * y
    return S["v"].sum()


def ordered_dict_filled(y):
    S = collections.OrderedDict(v=np.zeros(2))
    S["v"][1] = np.sin(y)
    return S["v"].sum() * y


def default_dict_through_alias(y):
    S = collections.defaultdict(lambda: np.zeros(2))
    a = S["v"]
    a[0] = np.sin(y)
    return S["v"].sum() + y


def list_subclass_filled(y):
    S = Rows([np.zeros(2), 1.0])
    S[0][1] = y * y
    return S[0].sum() * 3.0


def nested_dict_subclasses(y):
    S = ResultDict(inner=ResultDict(v=np.zeros(2)))
    S["inner"]["v"][0] = y ** 3
    return S["inner"]["v"][0] * 2


def dict_subclass_field(y):
    a = np.zeros(2)
    S = ResultDict()
    S.arr = a
    a[0] = y * y
    return S.arr.sum()


def _fill(S, y):
    S["v"][0] = y * y


def dict_subclass_filled_by_helper(y):
    S = ResultDict(v=np.zeros(2))
    _fill(S, y)
    return S["v"].sum()


HELD_BY_SUBCLASSES = [dict_subclass_filled, ordered_dict_filled, default_dict_through_alias, list_subclass_filled,
                      nested_dict_subclasses, dict_subclass_field, dict_subclass_filled_by_helper]


@pytest.mark.parametrize("f", HELD_BY_SUBCLASSES)
def test_array_held_by_container_subclass(f):
    y = 0.7
    want = fd.derivative(f, y)
    assert gradient(f, y)[0] == pytest.approx(want, rel=1e-6)
    assert derivative(f, y) == pytest.approx(want, rel=1e-6)
    assert hessian(f, y) == pytest.approx(fd.hessian(f, np.array(y)), rel=1e-4, abs=1e-6)


# -- `super().__init__()` reaching object's own __init__ (blackscholes' option classes) ---------------

class _Base:
    pass


class _Option(_Base):
    def __init__(self, s):
        self.s = s
        super().__init__()

    def price(self):
        return self.s ** 2 * np.exp(-self.s)


class _Explicit:
    def __init__(self, s):
        object.__init__(self)
        self.s = s


def option_price(s):
    return _Option(s).price()


def explicit_object_init(s):
    return _Explicit(s).s * 3.0


@pytest.mark.parametrize("f", [option_price, explicit_object_init])
def test_object_init_reached_by_super(f):
    s = 1.3
    want = fd.derivative(f, s)
    assert gradient(f, s)[0] == pytest.approx(want, rel=1e-6)
    assert derivative(f, s) == pytest.approx(want, rel=1e-6)


# -- a list's slice divided in place by a number (trimesh's `decompose_matrix`: `shear[1:] /= scale[2]`) --

def list_slice_divided(x):
    scale = np.zeros(3)
    scale[2] = np.cos(x)
    shear = [0.0, np.sin(x), x * x]
    shear[1:] /= scale[2]
    return scale[2] + shear[1] * shear[2]


def list_slice_divided_constant(x):
    items = [x, 2.0 * x]
    items[0:] /= np.float64(3.0)
    return items[0] * items[1]


@pytest.mark.parametrize("f", [list_slice_divided, list_slice_divided_constant])
def test_list_slice_in_place_division(f):
    x = 0.7
    want = fd.derivative(f, x)
    assert gradient(f, x)[0] == pytest.approx(want, rel=1e-6)
    assert derivative(f, x) == pytest.approx(want, rel=1e-6)


# -- a class's own methods Python runs natively for an operator, a test, a store or a deletion -------
# (trimesh's `DataStore.__setitem__` asked `isinstance(data, np.ndarray)` of forward mode's dual: another
# branch; a `__contains__`, `__eq__`, `__lt__`, `__delitem__` or a dropped `__add__` storing the
# differentiated operand: 0 in both modes)

class Keeper:
    def __init__(self):
        self.v = 0.0

    def __contains__(self, o):
        self.v = o
        return True

    def __eq__(self, o):
        self.v = o
        return True

    def __lt__(self, o):
        self.v = o
        return True

    def __delitem__(self, k):
        self.v = k

    def __add__(self, o):
        self.last = o
        return o * 2.0

    def __getitem__(self, k):
        self.v = k
        return 1.0

    __hash__ = object.__hash__


class LogList(list):
    def __contains__(self, o):
        self.append(o)
        return True


class Typed:
    """Stores by its own `__setitem__`/`__setattr__`, testing the value's type (natively, a dual's)."""

    def __init__(self):
        self.vals = {}

    def __setitem__(self, k, o):
        self.vals[k] = o if isinstance(o, float) else 1.0

    def __setattr__(self, n, o):
        object.__setattr__(self, n, o if isinstance(o, (float, dict)) else 1.0)


def kept_by_in(x):
    b = Keeper()
    (x * x) in b  # noqa: B015
    return b.v


def kept_by_eq(x):
    b = Keeper()
    b == x * x  # noqa: B015
    return b.v


def kept_by_lt(x):
    b = Keeper()
    b < x * x  # noqa: B015
    return b.v


def kept_by_del(x):
    b = Keeper()
    del b[x * x]
    return b.v


def kept_by_list_in(x):
    log = LogList()
    (x * x) in log  # noqa: B015
    return log[0]


def kept_by_dropped_add(x):
    b = Keeper()
    b + x * x  # noqa: B018
    return b.last


def kept_by_used_add(x):
    b = Keeper()
    y = b + x * x
    return y + b.last


def kept_by_getitem(x):
    b = Keeper()
    b[x * x]  # noqa: B018
    return b.v


def typed_setitem(x):
    t = Typed()
    t["a"] = x * x
    return t.vals["a"] * 3.0


def typed_setattr(x):
    t = Typed()
    t.w = x * x
    return t.w * 3.0


STORING = [kept_by_in, kept_by_eq, kept_by_lt, kept_by_del, kept_by_list_in, kept_by_dropped_add, kept_by_used_add,
           kept_by_getitem]


@pytest.mark.parametrize("f", STORING + [typed_setitem, typed_setattr])
def test_own_method_run_natively_forward(f):
    x = 0.7
    want = fd.derivative(f, x)
    assert derivative(f, x) == pytest.approx(want, rel=1e-6)
    assert jvp(f, (x,), (1.0,))[1] == pytest.approx(want, rel=1e-6)
    assert jacfwd(f, np.array(x)) == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("f", STORING)
def test_own_method_storing_refused_in_reverse(f):
    from contexts.lowered.runtime import OwnMethodStores
    with pytest.raises(OwnMethodStores, match="stores into objects"):
        gradient(f, 0.7)


@pytest.mark.parametrize("f", [typed_setitem, typed_setattr])
def test_own_store_method_reverse(f):
    assert gradient(f, 0.7)[0] == pytest.approx(fd.derivative(f, 0.7), rel=1e-6)


class Interval:
    """A pure range test and ordering of its own (sklearn's `Interval` kind): no refusal."""

    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def __contains__(self, v):
        return self.lo < v < self.hi

    def __lt__(self, v):
        return self.hi < v

    def __add__(self, o):
        return Interval(self.lo + o, self.hi + o)


def pure_own_tests(x):
    s = 0.0
    box = Interval(0.0, 10.0)
    if x in box:
        s = s + x * x
    if not (box < x):
        s = s + np.sin(x)
    box + x  # noqa: B018
    return s


def test_pure_own_tests_not_refused():
    want = fd.derivative(pure_own_tests, 0.7)
    assert gradient(pure_own_tests, 0.7)[0] == pytest.approx(want, rel=1e-6)
    assert derivative(pure_own_tests, 0.7) == pytest.approx(want, rel=1e-6)


# -- refusals of values that carry no derivative -------------------------------------------------

def _scaled(a, b=2.0):
    return a * b


def signature_parameters_copied(x):
    import inspect
    bound = inspect.signature(_scaled).bind(x, b=3.0)
    params = bound.signature.parameters.copy()  # (plasmapy's unit checks: "no rule for mappingproxy.copy")
    return _scaled(*bound.args, **bound.kwargs) + len(params)


def generator_copied(x):
    import copy
    rng = copy.copy(np.random.default_rng(3))  # (SALib: "reverse mode copies ... not a Generator")
    return x * x * rng.uniform()


@pytest.mark.parametrize("f", [signature_parameters_copied, generator_copied])
def test_values_without_derivatives_not_refused(f):
    want = fd.derivative(f, 1.3)
    assert gradient(f, 1.3)[0] == pytest.approx(want, rel=1e-6)
    assert derivative(f, 1.3) == pytest.approx(want, rel=1e-6)


def sobol_scaled(t):
    from scipy.stats import qmc
    # (scipy's Cython `_draw(..., sample=np.empty(...))` by keyword: forward mode's zero-tangent work array
    # reached the C code, TypeError)
    s = qmc.Sobol(d=2, scramble=False).random(4)
    return (s * t).sum() + t * t


def test_work_array_by_keyword_to_compiled_code_forward():
    want = fd.derivative(sobol_scaled, 0.3)
    assert derivative(sobol_scaled, 0.3) == pytest.approx(want, rel=1e-6)
    assert jacfwd(sobol_scaled, np.array(0.3)) == pytest.approx(want, rel=1e-6)


# -- objects numpy converts by their own `__array__` inside compiled code (ase's Cell) ----------------
# (`np.ones(3) + cell`, `base[:] = cell`, `np.concatenate([cell])`, `np.ones(3) @ cell`; an operator given by
# a property, ase's `arraylike`: reverse mode gave 0; forward mode refuses them)

class CellLike:
    def __init__(self, a):
        self.a = np.asarray(a, dtype=float)

    def __array__(self, dtype=None, copy=None):
        return np.array(self.a, dtype=dtype, copy=copy)


class ArrayLike(CellLike):
    __mul__ = property(lambda self: np.asarray(self).__mul__)


class ClosingOperator:
    def __init__(self, a):
        self.a = np.asarray(a, dtype=float)

    __mul__ = property(lambda self: lambda o: self.a * o)


def array_plus_cell(s):
    return (np.ones(3) + CellLike(np.ones(3) * s)).sum()


def array_matmul_cell(s):
    return (np.ones(3) @ CellLike(np.eye(3) * s)).sum()


def cell_stored_into_array(s):
    base = np.zeros(3)
    base[:] = CellLike(np.ones(3) * s)
    return base.sum()


def cells_concatenated(s):
    return np.concatenate([CellLike(np.ones(3) * s)]).sum()


def property_operator(s):
    return (ArrayLike(np.ones(3) * s) * 2.0).sum()


def closing_property_operator(s):
    return (ClosingOperator(np.ones(3) * s) * 2.0).sum()


@pytest.mark.parametrize("f", [array_plus_cell, array_matmul_cell, cells_concatenated,
                               property_operator, closing_property_operator])
@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_unrecorded_conversions_refused_in_reverse(f):
    from overdub.errors import OverdubError
    assert fd.derivative(f, 1.03) != 0.0
    with pytest.raises(OverdubError, match="__array__|property"):
        gradient(f, 1.03)


def test_cell_stored_into_array_converted_as_code():
    # (session 67: `base[:] = cell` converts the cell by its `__array__` as recorded code first, in both modes;
    # it was refused, ase's `Atoms.set_cell` in every Atoms made)
    want = fd.derivative(cell_stored_into_array, 1.03)
    assert gradient(cell_stored_into_array, 1.03)[0] == pytest.approx(want, rel=1e-6)
    assert derivative(cell_stored_into_array, 1.03) == pytest.approx(want, rel=1e-6)


class MatrixLike(CellLike):  # (ase's `arraylike`: the array's operators, given by properties)
    __rmatmul__ = property(lambda self: np.asarray(self).__rmatmul__)
    __setitem__ = property(lambda self: np.asarray(self).__setitem__)


def rmatmul_of_held_duals(s):
    return float((np.array([1.0, 2.0, 3.0]) @ MatrixLike(np.eye(3) * s)).sum())


def rmatmul_of_dual_array(s):
    return float((np.array([1.0, 2.0, 3.0]) * s @ MatrixLike(np.eye(3) * 2.0)).sum())


def setitem_through_property(s):
    m = MatrixLike(np.eye(3))
    m[0] = np.ones(3) * s
    return float(np.asarray(m).sum() * s)


@pytest.mark.parametrize("f", [rmatmul_of_held_duals, rmatmul_of_dual_array, setitem_through_property,
                               property_operator, closing_property_operator])
@pytest.mark.one_mode
def test_operators_given_by_properties_forward(f):
    # (session 67: the property's getter and the method it gives run under the context, an object numpy converts
    # by its `__array__` converted as code; natively the conversion met the duals the object holds: refused)
    assert derivative(f, 1.03) == pytest.approx(fd.derivative(f, 1.03), rel=1e-6)


def converted_by_hand(s):
    return np.sum(CellLike(np.ones(3) * s)) + (np.ones(3) + np.asarray(CellLike(np.ones(3) * s))).sum()


def test_conversion_by_hand_differentiated():
    assert gradient(converted_by_hand, 1.03)[0] == pytest.approx(fd.derivative(converted_by_hand, 1.03), rel=1e-6)


# -- np.broadcast of differentiated values: its shape, not its items (astroML's GaussianMixture1D) -----

def broadcast_items(x):
    return sum(a * b for a, b in np.broadcast(x, 2.0))


def broadcast_items_listed(x):
    return sum(a * b for a, b in list(np.broadcast(x, np.array([1.0, 2.0]))))


def broadcast_shape(x):
    return np.broadcast(x, np.ones(3)).shape[0] * x + np.broadcast(x, np.ones((2, 3))).size


@pytest.mark.parametrize("f", [broadcast_items, broadcast_items_listed])
def test_broadcast_items_refused(f):
    from overdub.errors import OverdubError
    for mode in (lambda: gradient(f, 1.3), lambda: derivative(f, 1.3), lambda: jacfwd(f, np.array(1.3))):
        with pytest.raises(OverdubError, match="np.broadcast"):
            mode()


def test_broadcast_shape_differentiated():
    assert gradient(broadcast_shape, 1.3)[0] == pytest.approx(3.0)
    assert derivative(broadcast_shape, 1.3) == pytest.approx(3.0)


class _HoldsCell:
    """ase's `Atoms.set_cell`: `self.cell[:] = Cell(...)`, here of constants."""

    def __init__(self, pos):
        self.pos = pos
        self.cell = np.zeros(3)
        self.cell[:] = CellLike(np.ones(3))


def constant_cell_stored(x):
    h = _HoldsCell(x * 2.0)
    return (h.pos ** 2).sum() + h.cell.sum() + (x @ ArrayLike(np.eye(3))).sum()


def test_constant_objects_converted_by_numpy_pass():
    x = np.array([0.3, -0.7, 1.1])
    np.testing.assert_allclose(gradient(constant_cell_stored, x)[0], fd.gradient(constant_cell_stored, x)[0],
                               rtol=1e-6)


def _detrended(data, type="linear"):  # noqa: A002 - a parameter named as the builtin (scipy's detrend)
    out = data.copy()
    out[:] = out - out.mean() if type == "linear" else out
    return out


def shadowed_builtin_store(x):
    return np.sum(_detrended(x * x) ** 2)


def test_store_in_a_function_with_a_variable_named_type():
    x = np.array([0.3, 1.2, 0.7])
    np.testing.assert_allclose(gradient(shadowed_builtin_store, x)[0], fd.gradient(shadowed_builtin_store, x)[0],
                               rtol=1e-6)


# -- an integer a C object answers (geomag's `(t - date(...)).days`), kept on an object ---------------

class _Epoch:
    def at(self, x, when=None):
        import datetime
        when = when or datetime.date(2017, 7, 2)
        years = (when - datetime.date(2017, 1, 1)).days / 365.0
        self.years = years
        return x * years + x * x


def days_of_a_date_difference(x):
    return _Epoch().at(x)


def test_days_of_a_timedelta_carry_no_derivative():
    want = fd.derivative(days_of_a_date_difference, 0.7)
    assert gradient(days_of_a_date_difference, 0.7)[0] == pytest.approx(want, rel=1e-6)
    assert derivative(days_of_a_date_difference, 0.7) == pytest.approx(want, rel=1e-6)


class _SumWithoutKeepdims(np.ndarray):
    """An ndarray subclass whose `sum` takes no `keepdims` (quantities' Quantity)."""

    def sum(self, axis=None, dtype=None, out=None):
        return np.asarray(self).sum(axis, dtype, out)


def summed_subclass(x):
    return float(np.sum((x * 2.0).view(_SumWithoutKeepdims)))


def test_forward_sum_of_a_subclass_without_keepdims():
    # numpy's np.sum calls the subclass's own `sum`: reverse mode runs it as code; forward mode too, since
    # session 58 (session 36: taken for an array, a subclass's own sum that computes another thing was
    # silently wrong, gen13 W2; refused until session 58)
    x = np.array([1.37, 2.41, 0.53])
    np.testing.assert_allclose(gradient(summed_subclass, x)[0], [2.0, 2.0, 2.0])
    np.testing.assert_allclose(jacfwd(summed_subclass, x), [2.0, 2.0, 2.0])


def db_with_constant_limits(x):
    # (scikit-rf's `mathFunctions.magnitude_2_db`: the keywords' constants were taken as differentiated in
    # reverse mode, the call refused)
    floor = -np.inf
    return np.sum(np.nan_to_num(20 * np.log10(x), nan=-100.0, neginf=floor, posinf=np.inf))


def test_constant_keyword_arguments_not_refused():
    x = np.array([0.5, 1.5, 2.5])
    np.testing.assert_allclose(gradient(db_with_constant_limits, x)[0], fd.gradient(db_with_constant_limits, x)[0],
                               rtol=1e-6)


class _Network:
    """scikit-rf's Network: keyword arguments stored by `self.__setattr__(k, v)`, one through a property setter."""

    def __init__(self, **kw):
        for k in kw:
            self.__setattr__(k, kw[k])

    @property
    def s(self):
        return self._s

    @s.setter
    def s(self, v):
        self._s = np.array(v, dtype=complex)


class _Guarded:
    """A class's own `__setattr__` storing through object's (`object.__setattr__(self, ...)`), a property too."""

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value * 1.0)

    @property
    def scaled(self):
        return self._scaled

    @scaled.setter
    def scaled(self, v):
        object.__setattr__(self, "_scaled", v * 2.0)


def network_magnitude(x):
    return np.abs(_Network(s=np.array([x, 2 * x])).s).sum()


def guarded_stores(x):
    g = _Guarded()
    g.scaled = x * x
    g.plain = np.sin(x)
    return g.scaled + g.plain


@pytest.mark.parametrize("f", [network_magnitude, guarded_stores])
def test_object_setattr_by_name(f):
    want = fd.derivative(f, 1.3)
    assert derivative(f, 1.3) == pytest.approx(want, rel=1e-6)
    assert gradient(f, 1.3)[0] == pytest.approx(want, rel=1e-6)
    assert jacfwd(f, np.array(1.3)) == pytest.approx(want, rel=1e-6)
