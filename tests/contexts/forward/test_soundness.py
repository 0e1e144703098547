"""Forward mode's soundness: values whose perturbation the tangent twin cannot follow (aliased containers,
cells, objects, iterators, caches) go through duals, never give a wrong derivative or leak a Dual.
Every case by `derivative` and `jvp` against central finite differences."""

import collections
import copy
import dataclasses
import functools
import operator

import numpy as np
import pytest

from contexts.forward import Dual, derivative, jacfwd, jvp

from tests import fd

X = 0.7


# -- containers aliased by another name: a store through one is seen through the other ----------------

def alias_write(x):
    a = [0.0, 1.0]
    b = a
    b[0] = x * x
    return a[0]


def alias_dict(x):
    a = {"k": 1.0}
    b = a
    b["k"] = x * x
    return a["k"] * 2


def _set_first(lst, v):
    lst[0] = v


def alias_call(x):
    a = [0.0, 1.0]
    _set_first(a, x * x)
    return a[0] + a[1]


def nested_inner(x):
    a = [[0.0, 1.0], [2.0]]
    b = a[0]
    b[0] = x * x
    return a[0][0] + a[1][0]


def nested_outer(x):
    a = [0.0, 1.0]
    c = [a, 3.0]
    a[0] = x * x
    return c[0][0] * c[1]


def nested_store(x):
    a = [[0.0, 1.0]]
    b = a[0]
    a[0][1] = x * 3
    return b[1]


def object_list(x):
    class Box:
        def __init__(self):
            self.items = [0.0]
    o = Box()
    lst = o.items
    lst[0] = x * x
    return o.items[0]


def copied(x):
    a = [x, 1.0]
    b = copy.copy(a)
    b[1] = x * x
    return a[1] + b[1] + b[0]


def loop_alias(x):
    rows = [[0.0], [1.0]]
    for row in rows:
        row[0] = row[0] + x
    return rows[0][0] * rows[1][0]


def loop_rebound(x):
    s = 0.0
    for v in [1.0, 2.0]:
        v = v * x
        s = s + v
    return s


def repeated_inner(x):
    a = [[0.0, 0.0]] * 2
    a[0][0] = x * x
    return a[1][0]


def dict_of_lists(x):
    d = {"k": [0.0]}
    lst = d["k"]
    lst[0] = x * x
    return d["k"][0]


def deep_copied(x):
    a = [[x, 1.0]]
    b = copy.deepcopy(a)
    b[0][1] = x * x
    return a[0][1] + b[0][1] + b[0][0]


def concatenated(x):
    lst = [x]
    m = [2.0] + lst + [x * x]
    t = (1.0,) + (x,)
    return m[0] + m[1] * 3 + m[2] + t[0] + t[1] * 5


def extended_in_place(x):
    lst = list()
    lst += [x]
    b = lst
    b += [x * x]
    return lst[0] + lst[1]


def _fill(out, v):
    for i in range(len(out)):
        out[i] = v * i


_GLIST = [0.0]


class _Shelf:
    pass


_SHELF = _Shelf()
_SHELF.items = [0.0]


def global_filled_by_callee(x):
    _set_first(_GLIST, x * x)
    return _GLIST[0] * 2


def attribute_filled_by_callee(x):
    _set_first(_SHELF.items, x * 3)
    return _SHELF.items[0] * x


def held_filled_by_callee(x):
    loc = [0.0]
    cont = {"k": loc}
    _set_first(cont["k"], x * x)
    return loc[0]


def filled_by_callee(x):
    o = [0.0] * 3
    _fill(o, x)
    return o[2]


def sorted_in_place(x):
    lst = [3.0, x * x, x]
    lst.sort()
    lst.reverse()
    return lst[0] + lst[2] * 2


def slice_assigned(x):
    lst = [x, 1.0]
    lst[1:] = [2.0, 3.0, 4.0]
    lst[:1] = [x * x, 5.0]
    return lst[0] + lst[4] * 10 + sum(lst)


# -- objects, methods, partials ------------------------------------------------------------------------

def dictsub(x):
    class R(dict):
        pass
    return R(a=x * x)["a"]


def method_self(x):
    class A:
        def __init__(self, a):
            self.a = a

        def m(self, y):
            return self.a * y
    return A(x).m(x)


def partial_mul(x):
    return functools.partial(operator.mul, x)(3.0)


def private_name(x):
    class A:
        def __init__(self, v):
            self.__v = v

        def get(self):
            return self.__v * 2
    return A(x).get()


def prop(x):
    class A:
        def __init__(self, v):
            self._v = v

        @property
        def sq(self):
            return self._v * self._v
    return A(x).sq


@dataclasses.dataclass
class _Point:
    a: float
    b: float = 2.0


def dataclass_(x):
    p = _Point(x)
    p.b = p.b * x
    return p.a * p.b


class _Slotted:
    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v


def slots(x):
    s = _Slotted(x)
    return s.v ** 3


class _Static:
    @staticmethod
    def sq(t):
        return t * t


def static(x):
    return _Static.sq(x) + _Static().sq(x)


def local_class(x):
    y = x * x

    class A:
        k = x * 3

        def m(self):
            return x * 2

        @staticmethod
        def s():
            return y
    return A.k + A().m() + A.s()


def cached_method(x):
    class C:
        @functools.lru_cache
        def f(self, t):
            return t * t

        @functools.cached_property
        def g(self):
            return self.f(x) * 2
    c = C()
    c.f(0.7)
    return c.f(x) + c.g


def namespace(x):
    import types
    ns = types.SimpleNamespace(a=x)
    ns.b = ns.a * 3
    return ns.b


def float_key(x):
    d = {}
    d[x] = 1.0
    e = {x * 2: 1.0}
    return list(d)[0] * 2 + list(e)[0]


def init_default(x):
    class A:
        def __init__(self, a, b=2.0):
            self.a = a
            self.b = b
    o = A(x)
    return o.a * o.b


# -- iterators, generators, closures -----------------------------------------------------------------

def next_iter(x):
    lst = [x * 2, x]
    return next(iter(lst))


def genexpr(x):
    return sum(t * t for t in [x, 2 * x])


def reduce_(x):
    return functools.reduce(lambda a, b: a * b, [x, x, 2.0])


def sorted_key(x):
    return sorted([x, -x * x, 3.0], key=lambda t: -t)[1]


def map_filter(x):
    k = x * 2
    return sum(filter(lambda t: t > 0, map(lambda t: t * k, [1.0, 2.0, -1.0])))


def nonlocal_acc(x):
    acc = 0.0

    def add(v):
        nonlocal acc
        acc = acc + v
    add(x)
    add(x * x)
    return acc


def gen_send(x):
    def g():
        y = yield 1.0
        yield y * y
    it = g()
    next(it)
    return it.send(x)


def gen_yield_from(x):
    def inner():
        yield x * x
        return x * 3

    def outer():
        r = yield from inner()
        yield r
    return sum(outer())


def gen_later(x):
    def g(v):
        yield v
        yield v * v
    it = g(x)
    next(it)
    return next(it)


_G = []


def global_list(x):
    _G.clear()
    _G.append(x * x)
    return _G[0]


_GL = [0.0]
_GD = {}


def global_store(x):
    _GL[0] = x * x
    _GD["k"] = _GL[0] * 3
    return _helper_reads_globals()


def _helper_reads_globals():
    return _GL[0] + _GD["k"]


def alias_of_global(x):
    g = _GL
    g[0] = x * 5
    return _GL[0] * x


def closure_store(x):
    buf = [0.0]

    def put(v):
        buf[0] = v
    put(x * x)
    return buf[0]


def dict_methods(x):
    d = {"a": x, "b": 2.0}
    return sum(d.values()) + d.get("a") * d.pop("a") + len(d)


def kwargs_display(x):
    def f(**kw):
        d = {**kw, "c": 1.0}
        return d["a"] * d["c"]
    return f(a=x * x)


def _spread(**kw):
    return {"z": 1.0, **kw}


def kwargs_returned(x):
    return _spread(a=x)["a"] * x


class _Scaled:
    def __init__(self, v):
        self.v = v

    def __enter__(self):
        return self.v * 2

    def __exit__(self, *exc):
        return False


def with_as(x):
    with _Scaled(x) as y:
        z = y * y
    return z


def swallowing(x):
    # the tangent twin gives up on `out` at run time: the user's handler must not take that for its error
    out = list()
    try:
        out.append(x * x)
        return out[0] * 2
    except Exception:
        return 0.0


def exception_args(x):
    try:
        raise ValueError(x * 2)
    except ValueError as e:
        return e.args[0] * x


def _checked(x):
    if x < 0:
        raise ValueError(f"negative: {x}")
    return x * x


def test_raise_on_a_path_not_taken_keeps_the_tangent_twin():
    from contexts.forward.tangent_runtime import tangent_jvp
    assert tangent_jvp(_checked, (X,), (1.0,))[1] == pytest.approx(2 * X)
    with pytest.raises(ValueError, match="negative"):
        derivative(_checked, -X)


# -- language constructs and caches -------------------------------------------------------------------

def match_class(x):
    match x:
        case float():
            return x * x
    return 0.0


def match_capture(x):
    match [x, 2.0]:
        case [a, b]:
            return a * b
    return 0.0


def vectorize(x):
    return float(np.vectorize(lambda t: t * t)(np.array([x, 2 * x])).sum())


def lru(x):
    @functools.lru_cache
    def sq(t):
        return t * t
    return sq(0.7) + sq(x)


@functools.cache
def _cube(t):
    return t ** 3


def cache_global(x):
    _cube(0.7)
    return _cube(x)


def divmod_(x):
    return divmod(x, 0.3)[1] + divmod(x * 3, 2)[1]


CASES = [alias_write, alias_dict, alias_call, nested_inner, nested_outer, nested_store, object_list, copied,
         loop_alias, loop_rebound, repeated_inner, dict_of_lists, deep_copied, concatenated, extended_in_place,
         filled_by_callee, global_filled_by_callee, attribute_filled_by_callee, held_filled_by_callee,
         sorted_in_place, slice_assigned,
         dictsub, method_self, partial_mul, private_name, local_class, cached_method, namespace, float_key, prop,
         dataclass_, slots, static, init_default,
         next_iter, genexpr, reduce_, sorted_key, map_filter, nonlocal_acc, gen_send, gen_yield_from,
         gen_later, global_list, global_store, alias_of_global, closure_store, dict_methods, kwargs_display,
         kwargs_returned, match_class, match_capture, vectorize, lru,
         cache_global, divmod_, with_as, swallowing, exception_args]


def _plain(v):
    assert type(v) is not Dual, f"a Dual leaked: {v!r}"
    return v


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["derivative", "jvp"])
def test_against_finite_differences(f, mode):
    want = fd.derivative(f, X)
    if mode == "derivative":
        got = derivative(f, X)
    else:
        y, got = jvp(f, (X,), (1.0,))
        assert _plain(y) == pytest.approx(f(X))
    assert _plain(got) == pytest.approx(want, rel=1e-6, abs=1e-8)


# -- array functions, also by jacfwd (chunks of directions) ---------------------------------------------

def slogdet(v):
    a = np.array([[v[0], 1.0], [0.5, v[1]]])
    return np.linalg.slogdet(a)[1]


def divmods(v):
    return np.array([divmod(v[0], 0.3)[1], divmod(v[1] * 2, 1.0)[0] + divmod(v[1], 2)[1]])


def vectorized(v):
    return np.vectorize(lambda t, s: np.sin(t) * s)(v, np.array([[1.0], [2.0]]))


def array_alias(v):
    rows = [np.zeros(2), np.ones(2)]
    r = rows[0]
    r[1] = v[0] * v[1]
    return rows[0] + rows[1] * v


_W = np.array([1.0, 2.0, 3.0])


def global_copied(v):
    # copies of a global array are the function's own: the tangent twin takes them
    out = _W.copy()
    out[0] = v[0] * v[1]
    both = np.concatenate([_W, v])
    both[1] = v[1] ** 2
    stacked = np.stack([np.ones(2), v * v])
    return out[:2] + both[:2] + stacked[1]


@pytest.mark.parametrize("f", [slogdet, divmods, vectorized, array_alias, global_copied],
                         ids=lambda f: f.__name__)
def test_arrays_against_finite_differences(f):
    v = np.array([0.7, 3.1])
    want = fd.jacobian(f, v)
    np.testing.assert_allclose(jacfwd(f, v), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacfwd(f, v, chunk=1), want, rtol=1e-6, atol=1e-8)
    d = np.array([0.3, -1.0])
    y, dy = jvp(f, (v,), (d,))
    np.testing.assert_allclose(dy, (want.reshape(-1, 2) @ d).reshape(np.shape(y)), rtol=1e-6, atol=1e-8)


# -- outputs: structures are mirrored, objects holding perturbed values refused -----------------------

_Pair = collections.namedtuple("_Pair", "a b")


def test_named_tuple_output():
    y, dy = jvp(lambda x: _Pair(x, {"k": [x * x, 1.0]}), (X,), (1.0,))
    assert type(y) is _Pair and type(dy) is _Pair
    assert dy.a == pytest.approx(1.0) and dy.b["k"] == [pytest.approx(2 * X), 0.0]
    assert derivative(lambda x: _Pair(x, 3 * x), X) == (pytest.approx(1.0), pytest.approx(3.0))


class _Holder:
    def __init__(self, v):
        self.v = v


@pytest.mark.parametrize("make", [lambda x: _Holder(x * x), lambda x: _Point(x), lambda x: {x * 2}],
                         ids=["object", "dataclass", "set"])
def test_output_object_holding_perturbed_values_refused(make):
    from overdub.errors import OverdubError
    with pytest.raises(OverdubError, match="holding perturbed values"):
        derivative(make, X)
    with pytest.raises(OverdubError, match="holding perturbed values"):
        jvp(make, (X,), (1.0,))


# -- what forward mode refuses ------------------------------------------------------------------------

def _exhausted(x):
    return next(iter([])) * x


def test_stop_iteration_never_escapes():
    # a StopIteration leaving derivative would end an enclosing map silently (returning [])
    from overdub.errors import OverdubError
    for call in (lambda x: derivative(_exhausted, x), lambda x: jvp(_exhausted, (x,), (1.0,)),
                 lambda x: jacfwd(lambda v: _exhausted(v[0]), np.array([x]))):
        with pytest.raises(OverdubError, match="StopIteration"):
            list(map(call, [X]))


async def _coroutine(x):
    return x * x


def test_async_refused():
    from overdub.errors import OverdubError
    with pytest.raises(OverdubError, match="async"):
        derivative(_coroutine, X)
    with pytest.raises(OverdubError, match="async"):
        jvp(_coroutine, (X,), (1.0,))
    with pytest.raises(OverdubError, match="coroutine"):
        derivative(lambda x: _coroutine(x), X)

