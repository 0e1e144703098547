"""Twins are cached per code object and profile, originals are untouched, dead functions are not kept."""

import gc
import types
import weakref

import overdub
from overdub import cache, source

from ._helpers import Recorder, calls


def target(x):
    return abs(x) + 1


def other(x):
    return max(x, 0) - 1


def make_adder(k):
    def add(x):
        return abs(x) + k
    return add


def test_originals_are_untouched_and_twins_cached():
    code = target.__code__
    for ctx in (overdub.Context(), Recorder(), Recorder(["call"])):
        assert ctx.run(target, -1) == 2
    assert target.__code__ is code
    twin = overdub.patch(target, {"call"})
    assert twin is overdub.patch(target, {"call"})
    assert twin is not overdub.patch(target, {"call", "binop"})
    assert twin.__code__ is not code and twin.__name__ == "target" and twin.__qualname__ == "target"
    assert twin.__code__.co_filename == code.co_filename and twin.__code__.co_firstlineno == code.co_firstlineno


def test_closures_share_the_twin_code_but_not_cells():
    a, b = make_adder(1), make_adder(10)
    ta, tb = overdub.patch(a), overdub.patch(b)
    assert ta.__code__ is tb.__code__
    assert (ta(-1), tb(-1)) == (2, 11)


def test_replaced_code_gets_a_fresh_twin():
    def f(x):
        return abs(x)
    rec, fast = Recorder(["call"]), overdub.Context()
    assert rec.run(f, -2) == 2 and fast.run(lambda: f(-2)) == 2
    f.__code__ = other.__code__
    assert rec.run(f, -2) == -1 and fast.run(lambda: f(-2)) == -1
    assert calls(rec.ops) == ["abs", "max"]


def test_cache_does_not_keep_dead_functions_alive():
    fn = make_adder(3)
    rec = Recorder(["call"])
    assert rec.run(lambda: fn(-1) + make_adder(1)(2)) == 7
    assert overdub.Context().run(lambda: fn(-1) + make_adder(1)(2)) == 7
    overdub.patch(fn)
    ref = weakref.ref(fn)
    del fn
    gc.collect()
    assert ref() is None


def test_generic_twin_for_api():
    built = []

    def build(src: source.FunctionSource):
        built.append(src.code)
        tree = src.fresh_tree()
        tree.body[0].value.op = __import__("ast").Sub()  # abs(x) + 1  ->  abs(x) - 1
        return source.compile_twin(src, tree)

    twin = cache.twin_for(target, "minus", build)
    assert twin(-5) == 4 and target(-5) == 6
    assert cache.twin_for(target, "minus", build) is twin and built == [target.__code__]
    assert cache.original_of(twin) is target
    fresh = types.FunctionType(target.__code__, target.__globals__, "target")
    assert cache.twin_for(fresh, "minus", build) is not twin and len(built) == 1  # code-level cache hit


def outer(n):
    def inner(x):
        return abs(x) * n
    return inner


def test_functions_defined_in_a_twin_are_patched_already():
    inner = overdub.patch(outer, {"call"})(3)
    assert inner.__qualname__ == "outer.<locals>.inner" and inner.__code__.co_qualname == inner.__qualname__
    assert overdub.patch(inner, {"call"}) is inner
    assert cache.patched_for(inner.__code__) == ("intercept", frozenset({"call"}))
    # Under another profile it is rebuilt from the original source, with its own cells.
    rec = Recorder(["call", "binop"])
    assert rec.run(inner, -2) == 6
    assert rec.ops == [("call", "abs"), ("binop", "*")]
