"""Reverse mode through closures, nested functions, defaults, objects and private names: every gradient
against central finite differences (a closure's cells, defaults and bound objects are differentiated
through, never run as constants)."""

import functools
import operator

import pytest

from contexts.ad import NoRuleError, UnsupportedFunction, gradient, pullback

from tests.fd import assert_grad_fd

X = 0.7


def rec_inner(x):
    def rec(n):
        return x if n == 0 else rec(n - 1) * x
    return rec(3)


def mutual_inner(x):
    def even(n):
        return x if n == 0 else odd(n - 1) * x

    def odd(n):
        return x * x if n == 0 else even(n - 1) + x
    return even(4)


def nonlocal_acc(x):
    acc = 0.0

    def add(v):
        nonlocal acc
        acc = acc + v
    add(x)
    add(x * x)
    return acc


def nonlocal_in_loop(x):
    acc = 1.0

    def mul(v):
        nonlocal acc
        acc = acc * v
    for i in range(3):
        mul(x + i)
    return acc


def default_arg(x):
    g = lambda t, s=x: t * s  # noqa: E731
    return g(2.0)


def default_def(x):
    def g(t, s=x * x, *, k=x):
        return t * s + k
    return g(2.0) + g(1.0, k=3.0)


def default_overridden(x):
    g = lambda t, s=x: t * s  # noqa: E731
    return g(2.0, x * x)


def private_name(x):
    class A:
        def __init__(self, v):
            self.__v = v

        def get(self):
            return self.__v * 2
    return A(x).get()


def nested_def_noclosure(x):
    def g(t):
        return t * t
    return g(x)


def kwargs_spread(x):
    def g(**kw):
        return {**kw}["a"] * 2
    return g(a=x)


def closure_on_obj(x):
    class S:
        def __init__(self, f):
            self.f = f

        def run(self, y):
            return self.f(y)
    k = x
    s = S(lambda y: k * y)
    return s.run(3.0)


def bound_method_on_obj(x):
    class A:
        def __init__(self, v):
            self.v = v

        def m(self, t):
            return self.v * t

    class B:
        def __init__(self, f):
            self.f = f
    return B(A(x).m).f(2.0)


def partial_mul(x):
    return functools.partial(operator.mul, x)(3.0)


def partial_kw(x):
    def g(a, b, c=1.0):
        return a * b + c
    return functools.partial(g, x, c=x * x)(3.0)


def partial_nested(x):
    def g(a, b, c):
        return a * b * c
    return functools.partial(functools.partial(g, x), 2.0)(x)


def partial_nested_kw(x):
    def g(a, b=1.0, c=1.0):
        return a * b + c
    return functools.partial(functools.partial(g, b=x), c=x * x)(3.0)


def lru(x):
    @functools.lru_cache
    def sq(t):
        return t * t
    return sq(2.0) + sq(x)


def lru_method(x):
    class A:
        @functools.lru_cache
        def sq(self, t):
            return t * t
    a = A()
    a.sq(x)  # a plain value cached for x must not be served to a differentiated call
    return a.sq(x)


def closures_in_containers(x):
    fs = [lambda t: t * x, lambda t: t + x * x]
    d = {"a": lambda t: t * x}
    return fs[0](2.0) + fs[1](1.0) + d["a"](3.0)


def static_and_class_methods(x):
    class A:
        k = 2.0

        @staticmethod
        def s(t):
            return t * t

        @classmethod
        def c(cls, t):
            return cls.k * t
    return A.s(x) + A.c(x) + A().s(x) + A().c(x)


def closures_over_loop_variable(x):
    fs = []
    for i in range(3):
        fs.append(lambda t, i=i: t * i * x)
    return sum(f(1.0) for f in fs)


def lambda_returned(x):
    def make(k):
        return lambda t: t * k
    return make(x)(3.0)


def user_decorator(x):
    def deco(f):
        @functools.wraps(f)
        def w(*a):
            return 2 * f(*a)
        return w

    @deco
    def g(t):
        return t * x
    return g(3.0)


def reduce_closure(x):
    return functools.reduce(lambda a, b: a * b + x, [1.0, 2.0, 3.0], x)


def property_and_call(x):
    class A:
        def __init__(self, v):
            self._v = v

        @property
        def sq(self):
            return self._v * self._v

        def __call__(self, t):
            return self._v * t
    a = A(x)
    return a.sq + a(3.0)


def private_method(x):
    class A:
        def __init__(self, v):
            self.__v = v

        def __sq(self):
            return self.__v ** 2

        def get(self):
            return self.__sq()
    return A(x).get()


def default_is_closure(x):
    inner = lambda t: t * x  # noqa: E731

    def g(t, f=inner):
        return f(t)
    return g(3.0)


def rebound_after_direct_call(x):
    k = x
    g = lambda t: t * k  # noqa: E731
    a = g(1.0)
    k = x * x
    return a + g(1.0)


def direct_call_bound_after(x):
    def g(t):
        return t * k
    k = x * x
    return g(2.0)


def direct_call_reading_later_function(x):
    def a(t):
        return b(t) * 2

    def b(t):
        return t * x
    return a(1.0)


def closures_made_and_called_in_loop(x):
    total = 0.0
    for i in range(3):
        k = x * (i + 1)

        def g(t):
            return t * k
        h = lambda t: t * k * k  # noqa: E731
        total += g(1.0) + h(1.0)
    return total


def inner_closure_through_called_closure(x):
    k = 2.0

    def g(t):
        return t * k

    def h():
        return g(1.0) + list(map(g, [2.0]))[0]
    k = x
    return h()


CASES = [inner_closure_through_called_closure, closures_made_and_called_in_loop, direct_call_bound_after, direct_call_reading_later_function, closures_in_containers, static_and_class_methods, closures_over_loop_variable, lambda_returned,
         user_decorator, reduce_closure, property_and_call, private_method, default_is_closure,
         rebound_after_direct_call, closure_on_obj, bound_method_on_obj, partial_mul, partial_kw, partial_nested, partial_nested_kw,
         lru, lru_method, rec_inner, mutual_inner, nonlocal_acc, nonlocal_in_loop, default_arg, default_def,
         default_overridden, private_name, nested_def_noclosure, kwargs_spread]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_gradient_matches_finite_differences(f):
    assert_grad_fd(f, X)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_pullback_matches_gradient(f):
    y, back = pullback(f, X)
    assert y == pytest.approx(f(X))
    assert back(1.0)[0] == pytest.approx(gradient(f, X)[0])


def class_reads_input(x):
    class A:
        def get(self):
            return x * 2
    return A().get()


def method_default_from_input(x):
    class A:
        def m(self, t, s=x):
            return t * s
    return A().m(2.0)


def nonlocal_writer_passed_on(x):
    acc = 0.0

    def add(v):
        nonlocal acc
        acc = acc + v
    list(map(add, [x, x * x]))
    return acc


def nonlocal_writer_stored(x):
    acc = 0.0

    def add(v):
        nonlocal acc
        acc = acc + v
    for f in [add]:
        f(x)
    return acc


def stored_closure_rebound(x):
    k = 2.0
    fs = [lambda t: t * k]
    k = x
    return fs[0](1.0)


def stored_closure_in_loop(x):
    fs = []
    for i in range(3):
        k = x * i
        fs.append(lambda t: t * k)
    return fs[0](1.0)


def decorated_closure_rebound(x):
    def deco(f):
        return lambda *a: 2 * f(*a)
    k = 1.0

    @deco
    def g(t):
        return t * k
    k = x
    return g(3.0)


def lambda_in_comprehension(x):
    gs = [lambda t: t * i * x for i in range(3)]
    return gs[0](1.0)


def stored_closure_bound_after(x):
    g = lambda t: t * k  # noqa: E731
    k = x
    fs = [g]
    return fs[0](2.0)


def passed_closure_reading_later_function(x):
    def a(t):
        return b(t) * 2

    def b(t):
        return t * x
    return list(map(a, [1.0]))[0]


def passed_closure_reading_rebound_through_inner(x):
    k = 2.0

    def g(t):
        return t * k

    def h(t):
        return g(t)
    k = x
    return list(map(h, [1.0]))[0]


REFUSED = [(passed_closure_reading_rebound_through_inner, "closure `h`.*reading `k`"),
           (stored_closure_bound_after, "reading `k`"), (passed_closure_reading_later_function, "reading `b`"),
           (lambda_in_comprehension, "comprehension reading its variable `i`"), (class_reads_input, "class `A`"), (method_default_from_input, "class `A`"),
           (nonlocal_writer_passed_on, "writing the differentiated variable `acc`"),
           (nonlocal_writer_stored, "writing the differentiated variable `acc`"),
           (stored_closure_rebound, "reading `k`"), (stored_closure_in_loop, "reading `k`"),
           (decorated_closure_rebound, "reading `k`")]


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
@pytest.mark.parametrize("f, message", REFUSED, ids=lambda v: getattr(v, "__name__", ""))
def test_refused_where_a_cotangent_cannot_be_routed(f, message):
    """Each of these returned a silent zero or a wrong value: now a clear refusal naming the construct."""
    with pytest.raises(UnsupportedFunction, match=message.replace("`", ".")):
        gradient(f, X)


def generator_reading_changed_state(x):
    state = [x]

    def gen():
        for _ in range(3):
            yield state[0]
    out = 0.0
    for v in gen():
        state[0] = state[0] * 2
        out += v
    return out


def generator_reading_rebound_cell(x):
    k = x

    def gen():
        for _ in range(3):
            yield k
    out = 0.0
    for v in gen():
        k = k * 2
        out += v
    return out


def generator_send(x):
    def g():
        v = yield 1.0
        yield v * x
    it = g()
    next(it)
    return it.send(2.0)


@pytest.mark.parametrize("f, message", [
    (generator_reading_changed_state, "generator gen reading `state`"),
    (generator_reading_rebound_cell, "generator .run eagerly when made., reading `k`"),
    (generator_send, "used as a value")], ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_generators_refused_where_eager_evaluation_would_differ(f, message):
    with pytest.raises(UnsupportedFunction, match=message.replace("`", ".")):
        gradient(f, X)


def generator_with_closure(x):
    def sub():
        yield x
        yield x * x

    def gen():
        yield from sub()
        yield 1.0
    return sum(gen())


def test_generators_that_read_stable_values():
    assert_grad_fd(generator_with_closure, X)


def stops_in_generator(x):
    def gen():
        it = iter([x])
        while True:
            yield next(it) * 2  # PEP 479: a RuntimeError when the generator is resumed after x
    return sum(gen())


def stops(x):
    return next(iter([])) + x


def test_stop_iteration_never_escapes_gradient():
    """A StopIteration leaving gradient would silently end a `map` around it (here: an empty list)."""
    with pytest.raises(RuntimeError, match="generator raised StopIteration"):
        list(map(lambda v: gradient(stops_in_generator, v), [0.5, 0.7]))
    for run in (lambda v: gradient(stops, v), lambda v: pullback(stops, v)):
        with pytest.raises(Exception, match="raised StopIteration") as info:
            list(map(run, [0.5, 0.7]))
        assert not isinstance(info.value, StopIteration)


def closure_bound_by_hand(x):
    import types

    class O:
        v = 1.0
    o = O()
    o.g = types.MethodType(lambda self, t: t * x * self.v, o)
    return o.g(2.0)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_closure_bound_as_method_is_refused():
    # refused where the method is made (no rule for types.MethodType with a differentiable closure), or
    # where it is called
    with pytest.raises((UnsupportedFunction, NoRuleError), match="bound as a method: it is a closure|builtins.method"):
        gradient(closure_bound_by_hand, X)


class _Base:
    def __init__(self, v):
        self.v = v

    def val(self, t):
        return self.v * t


class _Child(_Base):
    def __init__(self, v):
        super().__init__(v * 2)

    def val(self, t):
        return super().val(t) + self.v


def through_super(x):
    return _Child(x).val(3.0)


def test_methods_reached_through_super():
    """`super().m()` on a differentiated object: its cotangent flows back to the object (was dropped)."""
    assert_grad_fd(through_super, X)
