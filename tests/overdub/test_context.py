"""Activation, the context stack, threads, errors and tracebacks."""

import math
import os
import threading
import traceback

import pytest

import overdub
from overdub import ContextStackError, OverdubError

from ._helpers import Recorder, calls


def leaf(x):
    return abs(x)


def twice(x):
    return leaf(x) + leaf(-x)


def test_current_and_nesting():
    a, b = Recorder(["call"]), Recorder(["call"])
    assert overdub.current() is None
    with a:
        assert overdub.current() is a
        with b:
            assert overdub.current() is b and overdub.active() == (a, b)
            b.recurse(twice, 1)
        a.recurse(twice, 1)
    assert overdub.current() is None and overdub.active() == ()
    assert calls(b.ops) == calls(a.ops) == ["leaf", "abs", "leaf", "abs"]  # only the innermost intercepts


def test_out_of_order_exit_raises_and_changes_nothing():
    a, b = overdub.Context(), overdub.Context()
    a.__enter__()
    b.__enter__()
    try:
        with pytest.raises(ContextStackError) as err:
            a.__exit__(None, None, None)
        assert "innermost" in str(err.value) and err.value.fix
        assert overdub.active() == (a, b)
    finally:
        b.__exit__(None, None, None)
        a.__exit__(None, None, None)
    assert overdub.active() == ()
    with pytest.raises(ContextStackError):
        a.__exit__(None, None, None)


def test_reentering_an_active_instance_is_reentrant():
    ctx = Recorder(["call"])
    with ctx:
        with ctx:
            assert overdub.active() == (ctx, ctx)
            assert ctx.run(twice, 2) == 4
        assert overdub.current() is ctx
    assert overdub.current() is None
    assert calls(ctx.ops) == ["leaf", "abs", "leaf", "abs"]


def test_run_on_a_non_callable():
    ctx = overdub.Context()
    with pytest.raises(OverdubError) as err:
        ctx.run(twice(3))
    assert "needs a callable" in str(err.value) and "ctx.run(f, x)" in str(err.value)
    assert overdub.active() == ()


def test_run_of_a_primitive():
    ctx = Recorder()
    assert ctx.run(math.hypot, 3, 4) == 5 and ctx.ops == []


def test_unknown_kind_is_rejected():
    with pytest.raises(OverdubError, match="unknown interception kind"):
        class Bad(overdub.Context):
            intercepts = frozenset({"call", "teleport"})


def failing_leaf(x):
    return 1 / x


def failing_root(x):
    return failing_leaf(x) + 1


FAILING_LINE = failing_leaf.__code__.co_firstlineno + 1


@pytest.mark.parametrize("ctx", [overdub.Context(), Recorder(), Recorder(["call"])])
def test_exceptions_propagate_with_user_tracebacks(ctx):
    outer = overdub.Context()
    with outer:
        with pytest.raises(ZeroDivisionError) as err:
            ctx.run(failing_root, 0)
        assert overdub.active() == (outer,)
    # Machinery frames (overdub/context.py running an intercepted operator) may follow the user's frame;
    # the innermost frame outside the package is the user's line.
    package = os.path.dirname(overdub.__file__)
    frames = [f for f in traceback.extract_tb(err.value.__traceback__) if not f.filename.startswith(package)]
    last = frames[-1]
    assert (last.filename, last.lineno, last.name) == (__file__, FAILING_LINE, "failing_leaf")
    assert last.line == "return 1 / x"
    assert [f.name for f in frames if f.filename == __file__][-2:] == ["failing_root", "failing_leaf"]


class Swap(overdub.Context):
    """Replaces math.sin by math.cos: primitives can be changed by a context."""

    def primitive(self, fn, /, *args, **kwargs):
        return (math.cos if fn is math.sin else fn)(*args, **kwargs)


def trig(x):
    return math.sin(x) + leaf(x)


def test_primitive_override_reaches_nested_calls():
    assert Swap().run(trig, 0.0) == 1.0 and trig(0.0) == 0.0


class NoRecursion(overdub.Context):
    """Treats every call as a primitive: nothing below the top level is patched."""

    def __init__(self):
        self.seen = []

    def overdub(self, site, fn, /, *args, **kwargs):
        self.seen.append(site.op)
        return fn(*args, **kwargs)


def test_overdub_override():
    ctx = NoRecursion()
    assert ctx.run(twice, -2) == 4 and ctx.seen == ["leaf", "leaf"]


def slow_sum(n, tag):
    total = 0
    for i in range(n):
        total = total + abs(i) + len(tag)
    return total


def test_two_threads_do_not_see_each_others_context():
    barrier = threading.Barrier(2)
    results = {}

    def worker(name, intercepts):
        ctx = Recorder(intercepts)
        barrier.wait()
        with ctx:
            barrier.wait()  # both contexts are active now
            value = ctx.recurse(slow_sum, 200, name)
            barrier.wait()
            results[name] = (value, ctx.ops, overdub.current() is ctx)

    threads = [threading.Thread(target=worker, args=("a", ["call"])),
               threading.Thread(target=worker, args=("bb", ["binop"]))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results["a"][0] == slow_sum(200, "a") and results["bb"][0] == slow_sum(200, "bb")
    assert set(results["a"][1]) == {("call", "range"), ("call", "abs"), ("call", "len")}
    assert set(results["bb"][1]) == {("binop", "+")} and len(results["bb"][1]) == 400
    assert results["a"][2] and results["bb"][2]
    assert overdub.current() is None


def test_recursion_limit_is_restored_when_the_last_context_is_left():
    import sys
    import overdub
    before = sys.getrecursionlimit()
    with overdub.Context():
        assert sys.getrecursionlimit() >= before
        with overdub.Context():
            pass
        assert sys.getrecursionlimit() >= before
    assert sys.getrecursionlimit() == before
