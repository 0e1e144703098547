"""Property: a context that changes nothing changes no result (random expressions, random inputs)."""

import itertools
import linecache

from hypothesis import given, settings
from hypothesis import strategies as st

import overdub

from ._helpers import Recorder

_counter = itertools.count()
# Entering a context raises the recursion limit once (see overdub.context); do it before hypothesis
# records the limit it restores.
overdub.Context().run(abs, 0)

leaves = st.sampled_from(["x", "y", "1", "2.5", "-3", "k"])


def _combine(children):
    binary = st.tuples(st.sampled_from(["+", "-", "*", "/", "//", "%", "<", "<=", "==", "!="]),
                       children, children).map(lambda t: f"({t[1]} {t[0]} {t[2]})")
    calls = st.tuples(st.sampled_from(["abs", "neg", "max", "min", "first", "chain", "pick", "comp"]),
                      children, children).map(_call)
    return binary | calls


def _call(t):
    name, a, b = t
    return {"abs": f"abs({a})", "neg": f"(-{a})", "max": f"max({a}, {b})", "min": f"min({a}, {b})",
            "first": f"({a}, {b})[0]", "chain": f"(0 < {a} <= {b})", "pick": f"({a} if {a} < {b} else {b})",
            "comp": f"sum([{a} * i for i in range(2)])"}[name]


expressions = st.recursive(leaves, _combine, max_leaves=12)


def compile_function(expr: str):
    """A function `f(x, y)` whose source linecache knows, so overdub can patch it."""
    filename = f"<overdub-property-{next(_counter)}>"
    source = f"def f(x, y):\n    k = helper(x)\n    return {expr}\n"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"helper": lambda v: v * 2}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["f"]


def outcome(fn, *args):
    try:
        return "ok", repr(fn(*args))
    except Exception as e:  # the same exception type must come out of both runs
        return "raised", type(e).__name__


class Identity(overdub.Context):
    """Intercepts everything, runs everything as the default would, through an overridden overdub."""

    intercepts = overdub.KINDS

    def overdub(self, site, fn, /, *args, **kwargs):
        return super().overdub(site, fn, *args, **kwargs)


numbers = st.integers(-5, 5) | st.floats(-4, 4, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(expressions, numbers, numbers)
def test_identity_contexts_change_no_result(expr, x, y):
    fn = compile_function(expr)
    expected = outcome(fn, x, y)
    assert overdub.is_recursable(fn)
    for ctx in (Identity(), Recorder(), overdub.Context()):
        assert outcome(lambda a, b: ctx.run(fn, a, b), x, y) == expected, (expr, type(ctx).__name__)
    assert overdub.active() == ()
