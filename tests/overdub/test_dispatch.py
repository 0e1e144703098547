"""`overdub.ops.dispatch`: Python's operator dispatch written out must give what CPython gives, on classes
of every kind of special-method arrangement (reflected methods, subclasses overriding them, NotImplemented,
in-place methods, equality's fallback to identity, truth by `__len__`, containment by iteration), and the
errors CPython raises; `own_methods_route` runs only a class's own Python methods by its `recurse`."""

import itertools
import operator

import pytest

from overdub import ops


class Plain:
    def __init__(self, v):
        self.v = v


class Arith:
    def __init__(self, v):
        self.v = v

    def __add__(self, o):
        return ("Arith.add", self.v, getattr(o, "v", o))

    def __radd__(self, o):
        return ("Arith.radd", self.v, getattr(o, "v", o))

    def __mul__(self, o):
        return NotImplemented if isinstance(o, str) else ("Arith.mul", self.v)

    def __lt__(self, o):
        return ("Arith.lt", self.v)

    def __eq__(self, o):
        return NotImplemented

    def __neg__(self):
        return ("Arith.neg", self.v)

    __hash__ = object.__hash__


class Sub(Arith):
    def __radd__(self, o):
        return ("Sub.radd", self.v, getattr(o, "v", o))

    def __gt__(self, o):
        return ("Sub.gt", self.v)


class InPlace(Arith):
    def __iadd__(self, o):
        return ("InPlace.iadd", self.v)

    def __imul__(self, o):
        return NotImplemented


class Sized:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __iter__(self):
        return iter(range(self.n))


class Holder:
    def __contains__(self, item):
        return item == 3

    def __bool__(self):
        return False

    def __enter__(self):
        return "entered"

    def __exit__(self, *exc):
        return False


VALUES = [Plain(1), Arith(2), Sub(3), InPlace(4), 1.5, 2, "s", None]
BINARY = [operator.add, operator.mul, operator.sub, operator.lt, operator.gt, operator.eq, operator.ne,
          operator.iadd, operator.imul]


def _native(fn, *args):
    try:
        return ("ok", fn(*args))
    except TypeError as e:
        return ("TypeError", str(e))


def _call(method, *operands):
    return method(*operands)


@pytest.mark.parametrize("fn", BINARY, ids=lambda f: f.__name__)
def test_binary_dispatch_matches_cpython(fn):
    for a, b in itertools.product(VALUES, repeat=2):
        assert _native(lambda x, y: ops.dispatch(fn, (x, y), _call), a, b) == _native(fn, a, b), (fn, a, b)


@pytest.mark.parametrize("fn", [operator.neg, operator.not_, bool, iter], ids=lambda f: f.__name__)
def test_one_operand_dispatch_matches_cpython(fn):
    for a in VALUES + [Sized(0), Sized(2), Holder(), [1], ()]:
        got = _native(lambda x: ops.dispatch(fn, (x,), _call), a)
        want = _native(fn, a)
        if fn is iter and got[0] == "ok":
            got, want = ("ok", list(got[1])), ("ok", list(want[1]))
        assert got == want, (fn, a)


def test_containment_and_with():
    assert ops.dispatch(ops.in_, (3, Holder()), _call) is True
    assert ops.dispatch(ops.not_in, (4, Holder()), _call) is True
    assert ops.dispatch(ops.in_, (1, Sized(3)), _call) is True  # (by iteration)
    assert ops.dispatch(ops.in_, (5, Sized(3)), _call) is False
    with ops.dispatch(ops.managed, (Holder(),), _call) as v:
        assert v == "entered"


def test_route_runs_only_own_python_methods_through_recurse():
    ran = []

    def recurse(method, *operands):
        ran.append(method.__qualname__)
        return method(*operands)

    add = ops.own_methods_route(operator.add, recurse, lambda m: False)
    assert add(1.0, 2.0) == 3.0 and ran == []  # plain operands: the operator itself
    assert add(Arith(1), 2) == ("Arith.add", 1, 2) and ran == ["Arith.__add__"]
    assert add(Arith(1), Sub(2)) == ("Sub.radd", 2, 1)  # a subclass's reflected method first
    ran.clear()
    engine = ops.own_methods_route(operator.add, recurse, lambda m: m.__qualname__.startswith("Arith"))
    assert engine(Arith(1), 2) == ("Arith.add", 1, 2) and ran == []  # the machinery's methods are called
    with pytest.raises(TypeError, match="unsupported operand"):
        add(Plain(1), Plain(2))
