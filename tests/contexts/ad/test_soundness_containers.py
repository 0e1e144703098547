"""Reverse mode through containers, iterators, module globals and C functions: each gradient is checked
against central finite differences, and what the engine cannot differentiate is refused by name (never run
as a constant)."""

import collections
import copy
import heapq

import numpy as np
import pytest

from contexts.ad import NoRuleError, UnsupportedFunction, gradient

from tests.fd import assert_grad_fd

X = 0.7


# -- dicts ---------------------------------------------------------------------------------------------

def dict_update_keywords(x):
    D = {"a": 1.0}
    D.update(q=x * x)
    return D["q"] + D["a"]


def dict_update_pairs(x):
    D = {"a": 1.0}
    D.update([("k", x * 3), ("a", x)])
    return D["k"] + D["a"]


def dict_update_overwrites(x):
    D = {"a": x * 5}
    D.update({"a": x}, a=x * x)  # the keyword wins
    return D["a"]


def dict_setdefault_new(x):
    D = {}
    v = D.setdefault("k", x * x)
    return v + D["k"]


def dict_setdefault_existing(x):
    D = {"k": x}
    v = D.setdefault("k", 5.0)
    return v * x


def dict_values_loop(x):
    D = {"a": x, "b": x * x}
    s = 0.0
    for v in D.values():
        s = s + v
    return s


def dict_items_loop(x):
    D = {"a": x, "b": x * x}
    s = 0.0
    for k, v in D.items():
        s = s + v * (2.0 if k == "b" else 1.0)
    return s


def dict_keys_loop(x):
    D = {"a": x, "b": x * x}
    s = 0.0
    for k in D:
        s = s + D[k] * 2
    return s


def dict_values_builtins(x):
    D = {"a": x, "b": x * x}
    vals = list(D.values())
    return sum(D.values()) + vals[1] * 3 + max(D.values())


def dict_zip_keys_values(x):
    D = {"a": x, "b": x * x}
    s = 0.0
    for k, v in zip(D.keys(), D.values()):
        s = s + v
    return s


def dict_get_pop_del(x):
    D = {"a": x * x, "b": x, "c": 2 * x}
    v = D.pop("a") + D.get("b") + D.get("z", x)
    del D["c"]
    return v + sum(D.values())


def dict_popitem(x):
    D = {"a": x, "b": x * x}
    k, v = D.popitem()
    return v + D["a"]


def dict_clear(x):
    D = {"a": x}
    s = D["a"] * 2
    D.clear()
    D["a"] = x * x
    return s + D["a"]


def dict_constructor(x):
    D = dict(p=x * x, q=x)
    E = dict([("r", x * 3)], s=x)
    F = dict(D, q=x * 4)
    return D["p"] + D["q"] + E["r"] + E["s"] + F["q"] + F["p"]


def dict_fromkeys(x):
    D = dict.fromkeys(["a", "b"], x * x)
    return D["a"] + D["b"]


def dict_from_zip(x):
    D = dict(zip(["a", "b"], [x, x * x]))
    return D["a"] + D["b"]


def ordered_dict(x):
    D = collections.OrderedDict()
    D["a"] = x * x
    D["b"] = x
    return sum(D.values())


def default_dict(x):
    D = collections.defaultdict(float)
    D["a"] += x * x
    D["b"] += x
    return D["a"] + D["b"]


class Result(dict):
    """As scipy's OptimizeResult: a dict whose keys read as attributes."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class Built(dict):
    def __init__(self, scale, **kw):
        super().__init__(**kw)
        self["scaled"] = kw["v"] * scale


class Computed(dict):
    def __getattr__(self, name):
        if name == "double":
            return self["v"] * 2
        raise AttributeError(name)


def dict_subclass_computed_attribute(x):
    r = Computed(v=x * x)
    return r.double


def dict_views_consumed(x):
    D = {"a": x, "b": x * x}
    (k1, v1), (k2, v2) = D.items()
    E = {k: v * 2 for k, v in D.items()}
    return v1 + 3 * v2 + E["b"] + max(*D.values()) + sorted(D.items(), key=lambda kv: kv[1])[0][1]


def dict_view_after_changes(x):
    D = dict(a=x)
    vs = D.values()
    D["b"] = x * x
    D["a"] = x * 5
    E = {"a": x}
    ws = E.values()
    E["a"] = E["a"] * x
    return sum(vs) + sum(ws) * 3


def dict_subclass(x):
    R = Result(fun=x * x, x=x)
    return R.fun + R["x"]


def dict_subclass_own_init(x):
    B = Built(3.0, v=x * x)
    return B["scaled"] + B["v"]


def nested_containers(x):
    D = {"a": [x, {"b": x * x}]}
    return D["a"][1]["b"] + D["a"][0]


# -- lists and iterators -------------------------------------------------------------------------------

class Seq(list):
    pass


def list_subclass(x):
    a = Seq([x, x * x])
    a.append(x * 3)
    return a[0] + a[1] + a[2]


def list_remove(x):
    a = [1.0, x, x * x]
    a.remove(1.0)
    return a[0] + a[1] * 2


def list_clear(x):
    a = [x, x * x]
    s = a[1]
    a.clear()
    a.append(x * 3)
    return s + a[0]


def next_of_iter(x):
    a = [x * 2, x]
    return next(iter(a))


def iter_dunder_next(x):
    a = [x * 2, x]
    return iter(a).__next__()


def next_twice_then_default(x):
    it = iter([x * 2, x * x])
    first = next(it)
    second = next(it)
    return first + 3 * second + next(it, x)


def next_then_loop(x):
    it = iter([x * 2, x * x, x * 5])
    s = next(it)
    for v in it:
        s = s * 2 + v
    return s


def next_then_list(x):
    it = iter((x * 2, x * x, x * 5))
    first = next(it)
    rest = list(it)
    return first + rest[0] * 3 + rest[1]


def next_of_dict_values(x):
    D = {"a": x * x, "b": x}
    it = iter(D.values())
    return next(it) * 2 + next(it)


def builtin_iteration(x):
    a = [x, x * x, 3 * x]
    s = 0.0
    for i, v in enumerate(a):
        s = s + i * v
    for v in reversed(a):
        s = s * 1.5 + v
    return s + sum(map(lambda t: t * 3, a)) + sorted(a)[0]


def next_of_lazy_builtins(x):
    a, b = next(zip([x, x * x], [1.0, 2.0]))
    m = map(lambda t: t * 3, [x, x * x])
    next(m)
    g = (t * 2 for t in [x, x * x])
    i, v = next(enumerate([x * 2, x]))
    return a * b + next(m) + next(g) + v + sum(t * t for t in [x, 2 * x]) + next(reversed([x, x * x]))


# -- copies --------------------------------------------------------------------------------------------

class Obj:
    pass


def copy_of_containers(x):
    a = [x, x * x]
    b = copy.copy(a)
    D = {"a": x * 3}
    E = copy.copy(D)
    return b[0] + b[1] + E["a"]


def deepcopy_of_containers(x):
    a = [x, [x * x]]
    b = copy.deepcopy(a)
    return b[0] + b[1][0]


def copy_of_object(x):
    o = Obj()
    o.v = x * x
    o.w = [x]
    m = copy.copy(o)
    return m.v + m.w[0]


def deepcopy_of_object(x):
    o = Obj()
    o.v = [x * x]
    m = copy.deepcopy(o)
    return m.v[0] * 2


# -- module globals ------------------------------------------------------------------------------------

GL = []
GD = {}


def global_list(x):
    GL.append(x * x)
    return GL[-1]


def global_dict(x):
    GD["k"] = x * x
    GD.update(j=x * 3)
    return GD["k"] + GD["j"]


def _put(v):
    GL.append(v)


def _last():
    return GL[-1]


def global_list_through_functions(x):
    _put(x * 3)
    return _last() * x


def dict_spread_overwritten(x):
    D = {"q": x * 5, "a": x}
    E = {**D, "q": x}
    F = {"a": x * 7, **D}
    return E["q"] + E["a"] + F["a"] * 2


def dict_duplicate_keys(x):
    k1, k2 = "a", "a"
    D = {k1: x * 5, k2: x * x}
    return D["a"]


def dict_union(x):
    D = {"a": x, "b": x * 9} | {"b": x * x}
    E = D
    D |= {"c": 3 * x}
    return D["a"] + D["b"] + E["c"]


def list_in_place_concat(x):
    a = [x]
    b = a
    a += [x * x]
    c = [x] + [x * 3]
    for i in range(2):
        c += [x * i]
    return b[1] + a[0] * 2 + c[1] + c[3]


class _Slotted:
    __slots__ = ("a",)


class _SlottedChild(_Slotted):
    pass


def slot_assigned_twice(x):
    o = _SlottedChild()
    o.a = x
    o.a = o.a * x
    return o.a


def vectorized(x):
    sq = np.vectorize(lambda t: t * t)
    return float(sq(np.array([x, 2 * x])).sum()) + float(np.vectorize(lambda a, b: a * b)(x, [[1.0], [2.0]]).sum())


def out_into_unused_view(x):
    a = np.empty(2)
    np.multiply(x, 2.0, out=a[:])
    return x * 3


class _History:
    def __init__(self):
        self.hist = []

    def add(self, v):
        self.hist.append(v)


def object_holding_a_list(x):
    h = _History()
    h.add(x * x)
    h.add(x)
    return h.hist[-2] + h.hist[-1] * 2


GD2 = {}
GH = []


def global_pop_del_heap(x):
    GL.append(x * x)
    GD2["a"] = x
    GD2["b"] = x * x
    del GD2["a"]
    GH.clear()
    heapq.heappush(GH, x * x)
    heapq.heappush(GH, x)
    return GL.pop() + GD2["b"] + heapq.heappop(GH) * 3 + GH[0]


def views_through_builtins(x):
    D = {"a": x, "b": x * x}
    E = {"a": 2.0, "b": 3.0}
    s = sum(a * b for a, b in zip(D.values(), E.values())) + sum(map(lambda v: v * 2, D.values()))
    for i, (k, v) in enumerate(D.items()):
        s = s + i * v
    return s + sum(D.values(), x) + tuple(D.values())[1]


CASES = [object_holding_a_list, global_pop_del_heap, views_through_builtins, dict_view_after_changes,
         dict_subclass_computed_attribute, dict_views_consumed, dict_spread_overwritten, dict_duplicate_keys,
         dict_union, list_in_place_concat, slot_assigned_twice, vectorized, out_into_unused_view,
         dict_update_keywords, dict_update_pairs, dict_update_overwrites, dict_setdefault_new,
         dict_setdefault_existing, dict_values_loop, dict_items_loop, dict_keys_loop, dict_values_builtins,
         dict_zip_keys_values, dict_get_pop_del, dict_popitem, dict_clear, dict_constructor, dict_fromkeys,
         dict_from_zip, ordered_dict, default_dict, dict_subclass, dict_subclass_own_init, nested_containers,
         list_subclass, list_remove, list_clear, next_of_iter, iter_dunder_next, next_twice_then_default,
         next_then_loop, next_then_list, next_of_dict_values, builtin_iteration, next_of_lazy_builtins,
         copy_of_containers, deepcopy_of_containers, copy_of_object, deepcopy_of_object, global_list,
         global_dict, global_list_through_functions]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_against_finite_differences(f):
    assert_grad_fd(f, X)


def test_containers_are_left_as_the_function_left_them():
    seen = {}

    def f(x):
        D = {"a": x}
        D.update(a=x * x, b=2.0)
        a = [1.0, x]
        a.remove(1.0)
        seen["D"], seen["a"] = D, a
        return D["a"] + a[0]
    gradient(f, 3.0)
    assert seen["D"] == {"a": 9.0, "b": 2.0}
    assert seen["a"] == [3.0]


# -- refusals: a C function without a rule is never run as a constant ----------------------------------

def test_object_array_through_np_frompyfunc_is_its_functions_calls():
    # (refused once, as a C function reached with an object array: a ufunc of np.frompyfunc is now the
    # vectorized calls of its Python function, `Rule.stand_in`)
    def f(x):
        a = np.array([x, x * x], dtype=object)
        return float(np.frompyfunc(lambda t: t * t, 1, 1)(a).sum())
    assert abs(gradient(f, X)[0] - (2 * X + 4 * X ** 3)) < 1e-9


def test_object_array_reaching_a_c_function_is_refused():
    import struct

    def f(x):
        a = np.array([x, x * x], dtype=object)
        return struct.unpack("2d", struct.pack("2d", *a))[0]
    with pytest.raises(NoRuleError, match="test_soundness_containers.py"):
        gradient(f, X)


class _Scaled(list):
    pass


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_attribute_of_a_list_subclass_is_refused():
    def f(x):
        a = _Scaled([x])
        a.scale = x * 3
        return a.scale * a[0]
    with pytest.raises(UnsupportedFunction, match="attribute .scale"):
        gradient(f, X)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_set_of_differentiated_values_is_refused():
    def f(x):
        return sum({x, x * x})
    with pytest.raises(UnsupportedFunction, match="set of"):
        gradient(f, X)
    assert gradient(lambda x: x * len({"a", "b"}), X) == (2.0,)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_ufloat_made_from_a_differentiated_value_is_refused():
    unumpy = pytest.importorskip("uncertainties.unumpy")

    def f(x):
        a = unumpy.uarray([x, 2 * x], [0.1, 0.1])
        return unumpy.nominal_values(unumpy.sin(a))[0]
    with pytest.raises(NoRuleError, match="Variable"):
        gradient(f, X)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_unknown_iterator_reaching_next_is_refused():
    def f(x):
        it = iter(lambda: x * 2, None)  # a callable iterator: its items cannot be traced back
        return next(it)
    with pytest.raises(NoRuleError, match="callable_iterator"):
        gradient(f, X)
