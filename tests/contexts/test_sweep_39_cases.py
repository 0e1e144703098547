"""Cases of session 39: crashes, false refusals and silent wrong derivatives met on code nobody here wrote
(package sweeps, generated programs), each checked against finite differences or closed forms in every mode."""

import copy

import pytest

from tests.modes import assert_scalar_modes

# -- a new list made by a slice or an operator, written through a shallow copy's alias (gen16 W2b) ---------------
# A shallow copy's pullback leaves the cotangent of a list it shares in the list's own box, for the adjoint of
# what made the list; a slice (`w[:]`), `base * 1` and `base + []` never read it: 0.7 for 1.4, and 0 for
# `acc = acc + [x]` (the statement reads the old list: the new one is saved under a name of its own).


class _Layer:
    def __init__(self, w):
        self.w = w[:]


def _sliced_in_an_object(x):
    p = _Layer([x, 1.0])
    q = copy.copy(p)
    q.w[1] = x
    return p.w[0] * p.w[1]


def _sliced_in_a_dict(x):
    w = [x, 1.0][:]
    d = copy.copy({"w": w})
    d["w"][1] = x * x
    return w[0] * w[1] + sum(w)


def _sliced_from_itself(x):
    w = [x, 2.0, 3.0]
    w = w[1:]
    d = copy.copy({"w": w})
    d["w"][0] = x * x
    return w[0] * w[1] + x


def _times_one(x):
    base = [x, 1.0]
    w = 2 * base
    d = copy.copy({"w": w})
    d["w"][3] = x
    return w[0] * w[3] + w[2]


def _plus_empty(x):
    base = [x, 1.0]
    w = base + []
    d = copy.copy([w])
    d[0][1] = x ** 2
    return w[0] * w[1]


def _grown_in_a_loop(x):
    acc = [x]
    for i in range(3):
        acc = acc + [x * i]
        d = copy.copy([acc])
        d[0][0] = d[0][0] * 2.0
    return sum(acc) * x


def _rows_copied(x):
    m = [[x, 1.0], [2.0, x]]
    n = [row[:] for row in m]
    c = copy.copy(n)
    c[0][1] = x * 3.0
    return n[0][0] * n[0][1] + m[0][1]


@pytest.mark.parametrize("f", [_sliced_in_an_object, _sliced_in_a_dict, _sliced_from_itself, _times_one, _plus_empty,
                               _grown_in_a_loop, _rows_copied])
def test_new_list_written_through_a_shallow_copy(f):
    assert_scalar_modes(f, 0.7)


import numpy as np  # noqa: E402

from contexts import derivative, hessian, jvp  # noqa: E402
from tests import fd  # noqa: E402


# -- itertools.tee, combinations, permutations in reverse mode (pkC: compas' `pairwise` refused) ------------------
# Reverse mode draws an itertools iterator's items in Python (`replacements`); these four had no stand-in: refused.

import itertools  # noqa: E402
import math  # noqa: E402


def _pairwise(iterable):
    a, b = itertools.tee(iterable)
    next(b, None)
    return zip(a, b)


def _polyline_length(x):
    pts = [(0.0, 0.0), (x, 1.0), (2.0 * x, x * x), (3.0, x)]
    return sum(math.hypot(q[0] - p[0], q[1] - p[1]) for p, q in _pairwise(pts))


def _pair_energy(x):
    pts = [x, 2.0 * x, 3.5, x * x]
    return sum((a - b) ** 2 / (1.0 + a * b) for a, b in itertools.combinations(pts, 2))


def _permuted(x):
    v = [x, 1.5, x * 2.0]
    return (sum(p[0] * p[1] - p[2] for p in itertools.permutations(v))
            + sum(a * b for a, b in itertools.permutations(v, 2)))


def _with_replacement(x):
    return sum(a * b * c for a, b, c in itertools.combinations_with_replacement([x, 0.5, x + 1.0], 3))


def _three_copies(x):
    a, b, c = itertools.tee(iter([x, x * x, 3.0]), 3)
    return sum(a) * max(b) + next(c)


@pytest.mark.parametrize("f", [_polyline_length, _pair_energy, _permuted, _with_replacement, _three_copies])
def test_itertools_combinatorics_in_every_mode(f):
    assert_scalar_modes(f, 0.7)


def test_tee_of_an_endless_iterator_refused():
    from contexts import gradient
    from overdub.errors import OverdubError

    def f(x):
        a, b = itertools.tee(itertools.repeat(x))
        return next(a) * next(b)
    with pytest.raises(OverdubError, match="without end"):
        gradient(f, 0.7)


# -- small false refusals of ordinary code: `v.__float__()`, weakref.ref, partialmethod, singledispatchmethod ------

import functools  # noqa: E402
import weakref  # noqa: E402


def _float_method(x):
    v = np.float64(x) * 2.0
    return v.__float__() * x + (x * 3.0).__float__()


class _Node:
    def __init__(self, parent, w):
        self._parent = weakref.ref(parent) if parent is not None else None
        self.w = w

    def total(self):
        p = self._parent() if self._parent else None
        return self.w + (p.total() if p is not None else 0.0)


def _weakly_linked(x):
    a = _Node(None, x)
    b = _Node(a, x * x)
    c = _Node(b, 3.0 * x)
    b._parent().w = a.w * 2.0  # (written through the reference)
    return c.total() * x


class _Scaled:
    def __init__(self, a):
        self.a = a

    def scale(self, k, x):
        return self.a * k * x

    double = functools.partialmethod(scale, 2.0)

    @functools.singledispatchmethod
    def apply(self, v):
        return self.a * v

    @apply.register
    def _(self, v: int):
        return self.a * 0.0


def _partial_method(x):
    return _Scaled(x).double(x * x)


def _dispatched_method(x):
    s = _Scaled(x * 1.5)
    return s.apply(x) + s.apply(3)


@pytest.mark.parametrize("f", [_float_method, _weakly_linked, _partial_method, _dispatched_method])
def test_small_false_refusals(f, monkeypatch):
    import sys
    if f is _dispatched_method and sys.version_info >= (3, 13):
        # (Python 3.13's singledispatchmethod caches its bound methods in a WeakKeyDictionary keyed by the
        # object: reverse mode alone refuses keying a dict by an object holding differentiated values; its
        # gradient is forward mode's, asked after that refusal: `contexts.compose.by_forward`)
        from contexts import gradient
        import contexts.ad.api as ad_api
        assert gradient(f, 0.7)[0] == pytest.approx(fd.derivative(f, 0.7), rel=1e-7)
        assert derivative(f, 0.7) == pytest.approx(fd.derivative(f, 0.7), rel=1e-7)
        monkeypatch.setattr(ad_api, "BY_FORWARD", [])
        with pytest.raises(OverdubError, match="key a dict"):
            gradient(f, 0.7)
        return
    assert_scalar_modes(f, 0.7)


# -- a container changed through another container holding it (gen18 W1, W4-W7) ----------------------------------
# The activity analysis did not know that `o[0] = acc`, `o.l = acc`, a lambda's default `out=acc`, or a list an
# operator made (`[a] * 2`, `L + L`, `D | {}`) holds acc: a change through the holder, read back through acc, was
# taken for a constant (0 for 2, in both modes), and the view analysis missed the operator's result (2 for 1).


class _Holder:
    pass


def _stored_by_item_then_written(x):
    acc = [1.0]
    o = [None]
    o[0] = acc
    o[0][0] = x * x
    return acc[0] * 2.0


def _stored_by_key_then_array_changed(x):
    acc = np.ones(2)
    o = {}
    o["c"] = acc
    o["c"] += x
    return float(acc[0]) * 2.0


def _stored_by_attribute_then_appended(x):
    o = _Holder()
    acc = []
    o.l = acc
    o.l.append(x)
    o.d = {"c": acc}
    o.d["c"].insert(0, x * x)
    return acc[0] * 2.0 + acc[1]


def _stats(x):
    stats = {}
    vals = []
    stats["vals"] = vals
    for k in (1.0, 2.0):
        stats["vals"].append(x * k)
    return sum(vals)


def _lambda_default(x):
    acc = []
    push = lambda v, out=acc: out.append(v)  # noqa: E731
    push(x)
    push(x * x)
    return acc[0] * 2.0 + acc[1]


def _repeated_array(x):
    a = np.array([x, 2.0 * x])
    l = [a] * 2
    l[1] *= x
    return float(a[1])


def _concatenated_array(x):
    a = np.array([x, 1.0])
    L = [a]
    l = L + L
    l[1] *= x
    return float(a[0])


def _repeated_list(x):
    a = [x]
    m = [a] * 2
    m[1] += [x * x]
    m[0][0] = m[0][0] * 3.0
    return sum(a)


def _dict_union(x):
    a = np.array([x, 2.0 * x])
    D = {"k": a}
    l = D | {}
    l["k"] *= x
    return float(a[1])


def _class_attribute_list(x):
    class C:
        items = [0.5]
    C.items.append(x)
    C.items[0] = x * x
    return sum(C.items)


@pytest.mark.parametrize("f", [_class_attribute_list, _stored_by_item_then_written, _stored_by_key_then_array_changed,
                               _stored_by_attribute_then_appended, _stats, _lambda_default, _repeated_array,
                               _concatenated_array, _repeated_list, _dict_union])
def test_changed_through_a_holder(f):
    assert_scalar_modes(f, 0.7)


# -- numpy writes the engines did not follow (gen19 W1-W5) ---------------------------------------------------------
# np.place reads its values as it writes (overlap: refused); `out=(a,)` in forward mode's twin lost the write; an
# output passed by position to a ufunc method (`np.add.accumulate(a, 0, None, a)`) or, under hessian, to a dual
# array's method (`a.sum(0, None, s)`) was not seen (0, or the gradient of the unchanged array).

from contexts import gradient  # noqa: E402
from overdub.errors import OverdubError  # noqa: E402

_X = np.array([0.3, 0.5, 0.7, 0.9])
_T = np.array([0.4, -0.3, 0.2, 0.7])


def _out_tuple(x):
    a = x * 1.0
    np.multiply(a, 2.0, out=(a,))
    np.add(a, x[0] * a, out=(a,))
    return float(np.sum(a ** 2))


def _method_out(x):
    a = x * 1.0
    s = np.zeros(())
    a.sum(0, None, s)
    b = x * 2.0
    b.cumsum(0, None, b)
    return float(s ** 2) + float(b @ b)


def _accumulated(x):
    a = x * 1.0
    np.add.accumulate(a, 0, None, a)
    return float(np.sum(a ** 2))


def _reduced(x):
    s = np.zeros(())
    np.add.reduce(x * 1.0, 0, None, s)
    return float(s ** 2)


@pytest.mark.parametrize("f", [_out_tuple, _method_out, _accumulated, _reduced])
def test_outputs_written_by_numpy(f):
    want = fd.gradient(f, _X)[0]
    np.testing.assert_allclose(jvp(f, (_X,), (_T,))[1], want @ _T, rtol=1e-7)
    np.testing.assert_allclose(hessian(f, _X), fd.hessian(f, _X), rtol=1e-5, atol=1e-5)
    try:
        got = gradient(f, _X)[0]
    except OverdubError as e:
        assert "passed by position" in str(e) and f is not _out_tuple
    else:
        np.testing.assert_allclose(got, want, rtol=1e-7)


def test_place_of_overlapping_values_refused():
    def f(x):
        a = x * 1.0
        np.place(a, np.array([False, True, True, True]), a)
        return float(a @ np.array([1.0, 2.0, 3.0, 4.0]))
    for run in (lambda: gradient(f, _X), lambda: jvp(f, (_X,), (_T,)), lambda: hessian(f, _X)):
        with pytest.raises(OverdubError, match="share memory"):
            run()


# -- `super().c` of a base class's cached_property (pkF: krigeo's Ki): 0 in reverse mode, now refused ---------------

from contexts.ad.runtime import UnsupportedFunction  # noqa: E402


class _Base:
    def __init__(self, s):
        self.s = s

    @functools.cached_property
    def c(self):
        return 2.0 * self.s


class _Derived(_Base):
    @property
    def c(self):
        return super().c


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_super_cached_property():
    f = lambda x: _Derived(x).c ** 2  # noqa: E731
    assert derivative(f, 0.7) == pytest.approx(fd.derivative(f, 0.7), rel=1e-7)
    assert hessian(f, 0.7) == pytest.approx(8.0, rel=1e-7)
    with pytest.raises(UnsupportedFunction, match="cached_property"):
        gradient(f, 0.7)


# -- `super().__setattr__(k, v)` in a class's own __setattr__ (pkE: c4dynamics' state objects), reverse mode ----------


class _Watched:
    def __init__(self):
        self._X = np.zeros(2)

    def __setattr__(self, k, v):
        super().__setattr__(k, v)

    @property
    def X(self):
        return self._X

    @X.setter
    def X(self, v):
        self._X[:] = v


def _set_through_super(x):
    s = _Watched()
    s.a = x * 2.0
    s.X = np.array([x, 2.0 * x])
    return s.a ** 2 + float(s.X @ s.X)


def test_setattr_through_super():
    assert gradient(_set_through_super, 0.7)[0] == pytest.approx(fd.derivative(_set_through_super, 0.7), rel=1e-7)


# -- numexpr.evaluate, run as numpy (pkE: catsim's item information was refused as a C function) -----------------


def _numexpr_information(x):
    numexpr = pytest.importorskip("numexpr")
    a = np.array([x, 2.0 * x, 0.3])
    p = 1.0 / (1.0 + np.exp(-a))
    y = numexpr.evaluate("(a ** 2 * (p - 0.1) ** 2) / (p * (1 - p))", local_dict={"a": a, "p": p})
    z = numexpr.evaluate("where(a > 0.5, sin(a) ** 2, exp(-a)) + arctan2(a, 2.0) * 3", global_dict={"a": a})
    return float(y.sum() + z.sum() + numexpr.evaluate("sum(a * a)", local_dict={"a": a}))


def test_numexpr_evaluate_in_every_mode():
    assert_scalar_modes(_numexpr_information, 0.4)


def test_numexpr_reading_its_callers_frame_refused():
    numexpr = pytest.importorskip("numexpr")

    def f(x):
        a = np.array([x, 2.0])
        return float(numexpr.evaluate("sum(a * a)"))
    with pytest.raises(OverdubError, match="reads the function's variables by name"):
        gradient(f, 0.4)
    with pytest.raises(OverdubError):
        derivative(f, 0.4)


# -- arrays a helper changes in place through a tuple, a list, `*args` or `**kwargs` (gen19 W9) --------------------
# An optimiser step `def sgd(params, grads, lr): for p, g in zip(params, grads): p -= lr * g`: reverse mode lost
# the writes through a tuple, forward mode's twin through any container; `*args`/`**kwargs` are refused in reverse.


def _first_scaled(arrs, s):
    p = arrs[0]
    p *= s


def _sgd(params, grads, lr):
    for p, g in zip(params, grads):
        p -= lr * g


def _scale_all(arrs, s):
    for v in arrs:
        v *= s


def _through_a_tuple(x):
    p = x[:2] * 1.0
    _first_scaled((p,), x[2])
    return float(np.sum(p))


def _sgd_step_tuple(x):
    W = np.outer(x[:2], x[2:])
    b = x[:2] * 1.0
    _sgd((W, b), (W ** 2, b * x[3]), 0.1)
    return float(np.sum(W) + np.sum(b ** 2))


def _sgd_step_list(x):
    W = np.outer(x[:2], x[2:])
    b = x[:2] * 1.0
    _sgd([W, b], [W ** 2, b * x[3]], 0.1)
    return float(np.sum(W) + np.sum(b ** 2))


def _view_in_a_list(x):
    a = x * 1.0
    _scale_all([a[1:2]], x[0])
    return float(a[1] * x[1] + np.sum(a))


@pytest.mark.parametrize("f", [_through_a_tuple, _sgd_step_tuple, _sgd_step_list, _view_in_a_list])
def test_arrays_changed_by_a_helper_through_a_container(f):
    want = fd.gradient(f, _X)[0]
    np.testing.assert_allclose(gradient(f, _X)[0], want, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(jvp(f, (_X,), (_T,))[1], want @ _T, rtol=1e-7)
    np.testing.assert_allclose(hessian(f, _X), fd.hessian(f, _X), rtol=1e-5, atol=1e-5)


def _star_scaled(s, *arrs):
    for v in arrs:
        v *= s


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_arrays_changed_through_star_args_refused_in_reverse():
    def f(x):
        p = x[:2] * 1.0
        q = x[2:] * 1.0
        _star_scaled(x[0], p, q)
        return float(np.sum(p) + np.sum(q))
    with pytest.raises(UnsupportedFunction, match=r"\*args"):
        gradient(f, _X)
    want = fd.gradient(f, _X)[0]
    np.testing.assert_allclose(jvp(f, (_X,), (_T,))[1], want @ _T, rtol=1e-7)


def test_concatenate_into_an_overlapping_out_refused():
    def rolled(x):
        a = x * 1.0
        np.concatenate((a[1:], a[:1]), out=a)  # numpy: [x1, x2, x3, x1], copied piece by piece
        return float(a @ np.arange(1.0, 5.0))

    def apart(x):
        a = x * 1.0
        b = np.empty(4)
        np.concatenate((a[1:], a[:1]), out=b)
        return float(b @ np.arange(1.0, 5.0))
    for run in (lambda: gradient(rolled, _X), lambda: jvp(rolled, (_X,), (_T,)), lambda: hessian(rolled, _X)):
        with pytest.raises(OverdubError, match="overlaps"):
            run()
    np.testing.assert_allclose(gradient(apart, _X)[0], fd.gradient(apart, _X)[0], rtol=1e-7)
    np.testing.assert_allclose(jvp(apart, (_X,), (_T,))[1], fd.gradient(apart, _X)[0] @ _T, rtol=1e-7)


# -- an object's own __setattr__ reading its __dict__, then a property setter changing an array (pkE W1: 2x);
# a class attribute that is None read through an object with __getattr__ (pkE C2: AttributeError) -----------------


class _DictReadingSetter(_Watched):
    _gain = None

    def __getattr__(self, name):
        raise AttributeError(name)

    def __setattr__(self, var, val):
        d = self.__dict__  # noqa: F841
        super().__setattr__(var, val)


def _dict_reading_setter(a):
    s = _DictReadingSetter()
    s.X = np.array([a, a * a])
    k = 2.0 if s._gain is None else s._gain
    return float(s.X @ s.X) * k


def test_own_setattr_reading_its_dict():
    assert gradient(_dict_reading_setter, 0.7)[0] == pytest.approx(fd.derivative(_dict_reading_setter, 0.7), rel=1e-7)
    assert derivative(_dict_reading_setter, 0.7) == pytest.approx(fd.derivative(_dict_reading_setter, 0.7), rel=1e-7)


# -- forward mode: a deep copy holding one list twice (gen18 W8: the value changed, 0.7 for 0.49); a ufunc of two
# lists (gen18 C4: their tangents were concatenated) ------------------------------------------------------------


def _deep_copy_shared(x):
    a = [x, 1.0]
    b = copy.deepcopy([a, a])
    b[0][0] = x * x
    return b[1][0] + b[0][1] * x


def _ufunc_of_lists(x):
    return float(np.sum(np.add([x, 1.0], [x * x, 2.0]) * np.array([1.0, 3.0]))
                 + np.sum(np.subtract([x, 1.0], [x * x, 2.0])))


@pytest.mark.parametrize("f", [_deep_copy_shared, _ufunc_of_lists])
def test_forward_containers(f):
    assert jvp(f, (0.7,), (1.0,))[0] == pytest.approx(f(0.7), rel=1e-15)
    assert_scalar_modes(f, 0.7)


def _unpacked_and_scaled(arrs, s):
    p, q = arrs
    p *= s


def _unpacked_and_stored(t):
    a, b = t
    a[0] = b[1] * 2.0


def _unpacked_in_a_helper(x):
    p = x[:2] * 1.0
    q = x[2:] * 1.0
    _unpacked_and_scaled((p, q), x[0])
    m = x * 1.0
    _unpacked_and_stored((m[:2], m[2:]))
    return float(np.sum(p) + np.sum(q) + np.sum(m * x))


def _setitem_by_name(x):
    a = x * 1.0
    a.__setitem__(slice(1, 3), a[2:4] * a[0])
    return float(np.sum(a ** 2))


@pytest.mark.parametrize("f", [_unpacked_in_a_helper, _setitem_by_name])
def test_forward_follows_writes_through_items_and_by_name(f):
    np.testing.assert_allclose(jvp(f, (_X,), (_T,))[1], fd.gradient(f, _X)[0] @ _T, rtol=1e-7)
    # (reverse mode refused ndarray.__setitem__ called by name until session 47: now the store `a[k] = v`)
    np.testing.assert_allclose(gradient(f, _X)[0], fd.gradient(f, _X)[0], rtol=1e-7, atol=1e-10)


def _compressed_into(x):
    r = np.zeros(2)
    np.compress(np.array([True, False, True, False]), x * x, out=r)
    return float(np.sum(r * r))


def _copied_where_by_position(x):
    b = np.zeros(4)
    np.copyto(b, x * x, "same_kind", x > 0.4)
    return float(b @ x)


@pytest.mark.parametrize("f", [_compressed_into, _copied_where_by_position])
def test_numpy_writes_crashed(f):  # (gen19 C2: RecursionError in forward mode; C1: IndexError in reverse)
    want = fd.gradient(f, _X)[0]
    np.testing.assert_allclose(gradient(f, _X)[0], want, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(jvp(f, (_X,), (_T,))[1], want @ _T, rtol=1e-7)


class _Named:
    def __init__(self, a):
        self.a = a
        self.b = 2.0 * a


def _attributes_listed(x):
    m = _Named(x)
    names = [n for n in dir(m) if not n.startswith("_")]
    return sum(getattr(m, n) for n in names) * x


def test_dir_of_an_object_holding_numbers():  # (pkF: gstools' models, refused: no rule for dir)
    assert_scalar_modes(_attributes_listed, 0.7)


# -- np.linalg.eig of a general matrix (pkE: matpopmod's eigen-analysis refused, no rule) -------------------------

_A0 = np.random.default_rng(1).normal(size=(4, 4))
_W = np.random.default_rng(2).normal(size=(4, 4))


def _leslie_growth(x):  # (the dominant eigenvalue and the stable stage distribution of a population matrix)
    L = np.array([[0.0, 1.5 * x, 2.0], [0.5, 0.0, 0.0], [0.0, 0.8 * x, 0.0]])
    w, v = np.linalg.eig(L)
    k = np.argmax(np.abs(w))
    s = np.real(v[:, k]) / np.real(v[:, k]).sum()
    return float(np.real(w[k]) + s @ np.array([1.0, 2.0, 3.0]))


def _complex_pairs(x):  # (eigenvalues and eigenvectors in complex pairs, LAPACK's normalisation)
    w, v = np.linalg.eig(_A0 + x * _W)
    return float(np.abs(w).sum() + np.sum(np.abs(v[:, 0]) * np.arange(4.0)) + np.sum(v.real * _W)
                 + np.sum(v.imag * _A0))


@pytest.mark.parametrize("f", [_leslie_growth, _complex_pairs])
def test_eig_in_every_mode(f):
    assert_scalar_modes(f, 0.3, rtol=1e-7)


def test_eig_gradient_in_the_matrix():
    def f(A):
        w, v = np.linalg.eig(A)
        return float(np.sum(np.abs(w) * np.arange(4.0)) + np.sum(np.real(v * np.conj(v[:, :1]))))
    want = fd.gradient(f, _A0)[0]
    np.testing.assert_allclose(gradient(f, _A0)[0], want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(jvp(f, (_A0,), (_W,))[1], np.sum(want * _W), rtol=1e-6)


# -- stores into an array's .real and .imag (pkE: matpopmod's `vals.real = np.where(...)`, refused in both modes) --


def _parts_stored(x):
    z = np.zeros(3, dtype=complex)
    z.real = [x, 2.0 * x, 1.0]
    z.imag = np.array([x * x, 0.5, x])
    w = np.exp(1j * x) * np.array([1.0, 2.0, 3.0])
    w.real = np.where(np.abs(w.real) < 0.1, 0.0, w.real * x)
    r = np.array([x, 1.0])
    r.real = r * x
    return float(np.abs(z).sum() + np.abs(w).sum() + r.sum())


def test_real_and_imag_stores():
    assert_scalar_modes(_parts_stored, 0.7)
