"""The standard library's numeric idioms, in every mode: the derivative central differences give, or a
clear refusal (an OverdubError) — never another number. Found wrong before: `sum(dict.fromkeys(keys,
v).values())` in reverse mode (0: the value's cotangent was read from the plain cotangent only, not from
the dict's box where `.values()` leaves it) and `operator.methodcaller('__mul__', b)(a)` in forward mode
(the dual reached float's own `__mul__`, which answered NotImplemented: 0 for d/db)."""

import bisect
import cmath
import collections
import functools
import heapq
import inspect
import itertools
import math
import operator
import statistics
import types

import numpy as np
import pytest

from contexts import gradient
from overdub.errors import OverdubError
from tests import fd
from tests.modes import MODES, assert_right_or_refused, gradient_in

X, Y = 0.7, 1.3

IDIOMS = {
    "dict.fromkeys values": lambda a, b: sum(dict.fromkeys(["p", "q"], a * b).values()),
    "dict.fromkeys items": lambda a, b: sum(v * len(k) for k, v in dict.fromkeys(["p", "qq"], a * b).items()),
    "dict.fromkeys loop": lambda a, b: functools.reduce(operator.add, dict.fromkeys("xyz", a).values()) * b,
    "dict.fromkeys subscript": lambda a, b: dict.fromkeys(("p", "q"), a)["q"] * b,
    "methodcaller __mul__": lambda a, b: operator.methodcaller("__mul__", b)(a),
    "methodcaller __rsub__": lambda a, b: operator.methodcaller("__rsub__", a)(b * b),
    "methodcaller of a list": lambda a, b: operator.methodcaller("index", 2.0)([a, 2.0, b]) * a,
    "methodcaller conjugate": lambda a, b: operator.methodcaller("conjugate")(complex(a, b)).imag * a,
    "attrgetter real": lambda a, b: operator.attrgetter("real")(complex(a, b)) * b,
    "itemgetter": lambda a, b: operator.itemgetter(1, 0)([a, b * b])[0] * a,
    "statistics.fmean": lambda a, b: statistics.fmean([a, b, a * b]),
    "statistics.mean": lambda a, b: statistics.mean([a, b, a * b]),
    "statistics.median": lambda a, b: statistics.median([a, b, a * b]),
    "statistics.geometric_mean": lambda a, b: statistics.geometric_mean([a, b]),
    "statistics.correlation": lambda a, b: statistics.correlation([a, b, 1.0], [1.0, 2.0, a]),
    "NormalDist.cdf": lambda a, b: statistics.NormalDist(a, b).cdf(0.5),
    "NormalDist.pdf": lambda a, b: statistics.NormalDist(a, b).pdf(0.5),
    "math.frexp/ldexp": lambda a, b: math.ldexp(*math.frexp(a)) * b,
    "math.modf": lambda a, b: math.modf(a + 2)[0] * b,
    "math.fmod": lambda a, b: math.fmod(a * 5, b),
    "divmod": lambda a, b: divmod(a * 5, b)[1],
    "math.copysign": lambda a, b: math.copysign(a, -b) * b,
    "math.remainder": lambda a, b: math.remainder(a * 5, b),
    "math.fsum": lambda a, b: math.fsum([a, b, a * b]),
    "math.prod": lambda a, b: math.prod([a, b, a * b]),
    "math.hypot": lambda a, b: math.hypot(a, b, 1.0),
    "math.dist": lambda a, b: math.dist((a, b), (0.1, 0.2)),
    "cmath.phase": lambda a, b: cmath.phase(complex(a, b)),
    "cmath.polar": lambda a, b: cmath.polar(complex(a, b))[0] * cmath.polar(complex(a, b))[1],
    "cmath.rect": lambda a, b: cmath.rect(a, b).real,
    "heapq.nsmallest": lambda a, b: sum(heapq.nsmallest(2, [a, b, a * b])),
    "heapq.merge": lambda a, b: sum(heapq.merge([a, b], [a * b])),
    "itertools.accumulate": lambda a, b: list(itertools.accumulate([a, b, a], operator.mul))[-1],
    "itertools.starmap": lambda a, b: sum(itertools.starmap(operator.mul, [(a, b), (b, b)])),
    "functools.reduce": lambda a, b: functools.reduce(lambda u, v: u * v + 1, [a, b, a]),
    "map(pow)": lambda a, b: sum(map(pow, [a, b], [2, 3])),
    "sorted key": lambda a, b: sorted([a, b, 0.5], key=lambda v: -v)[0] * a,
    "max key": lambda a, b: max([a, b], key=abs) * a,
    "mappingproxy by key": lambda a, b: types.MappingProxyType({"p": a * b, "q": b})["p"] * a,
    "mappingproxy values": lambda a, b: sum(types.MappingProxyType({"p": a * b, "q": b}).values()),
    "mappingproxy items": lambda a, b: sum(v * len(k) for k, v in types.MappingProxyType({"pp": a, "q": b}).items()),
    "mappingproxy get": lambda a, b: types.MappingProxyType({"p": a}).get("p", b) * b,
    "inspect.signature bind": lambda a, b: sum(inspect.signature(lambda u, v=1.0: 0).bind(a, v=b * a).arguments.values()),
    "float.as_integer_ratio": lambda a, b: (lambda r: r[0] / r[1])(a.as_integer_ratio()) * b,
    "float.hex": lambda a, b: float.fromhex(a.hex()) * b,
    "text round trip": lambda a, b: float(f"{a:.17g}") * b,
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(IDIOMS))
def test_right_or_refused(name, mode):
    assert_right_or_refused(mode, IDIOMS[name], X, Y)


@pytest.mark.parametrize("mode", MODES)
def test_the_two_found_wrong_are_now_right(mode):
    """Not refused either: both are plain idioms."""
    for name in ("dict.fromkeys values", "methodcaller __mul__" if mode == "forward" else "dict.fromkeys items"):
        f = IDIOMS[name]
        got = gradient_in(mode, f, X, Y)
        np.testing.assert_allclose(got, fd.gradient(f, X, Y), rtol=1e-6)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_fromkeys_of_one_list_under_every_key_is_refused():
    def f(a):
        d = dict.fromkeys(["p", "q"], [a])
        d["p"].append(a * a)  # (the same list under "q": one object)
        return sum(d["q"])
    with pytest.raises(OverdubError, match="fromkeys"):
        gradient(f, X)


def _ordered_move(a, b):
    t = collections.OrderedDict(p=a)
    t["q"] = b
    first = list(t.values())[0] * 2.0  # read in the order before the move: p
    t.move_to_end("p")
    return first + list(t.values())[-1] * t["q"]  # p * q


def _namespace(a, b):
    n = types.SimpleNamespace(p=a, q=b)
    n.p *= 0.5
    return n.p + n.q * n.p + getattr(n, "q")


def _bisected(a, b):
    """bisect's positions are ordering tests: steps, no derivative (reverse mode refused them)."""
    edges = [0.1, 0.5, 0.9, 1.2]
    return a * bisect.bisect_right(edges, a) + b * bisect.bisect_left([a, b, 2 * b], 1.0) + a * b


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [_ordered_move, _namespace, _bisected], ids=lambda f: f.__name__)
def test_refused_before_now_right(f, mode):
    """OrderedDict.move_to_end, types.SimpleNamespace(**kw) and bisect had no reverse rule (refused; the
    fuzzer's idiom templates met them): right in both modes now, the move's order restored for the reads
    before it."""
    np.testing.assert_allclose(gradient_in(mode, f, X, Y), fd.gradient(f, X, Y), rtol=1e-6)
