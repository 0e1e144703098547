"""Functions a library makes by `exec` from text it keeps: no file holds their source, so a context runs them
as they are, unless a finder registered with `overdub.passes.add_source_finder` gives their definition, which
the core then adopts for every context (session 69: forward mode ran networkx's compiled wrappers as
primitives while reverse mode had its own lookup)."""

import ast
import math

import overdub
from overdub.passes import add_source_finder, adopted, found_elsewhere

_TEXT = "def made(x):\n    return math.sin(x) * 2.0\n"


class Swap(overdub.Context):
    """Replaces math.sin by math.cos: shows whether a context reached the calls inside a function."""

    def primitive(self, fn, /, *args, **kwargs):
        return (math.cos if fn is math.sin else fn)(*args, **kwargs)


def _made(tag):
    namespace = {"math": math}
    exec(compile(_TEXT, f"<made {tag}>", "exec"), namespace)
    fn = namespace["made"]
    fn.kept_text = _TEXT
    return fn


def _finder(fn, owner):
    text = getattr(fn, "kept_text", None)
    return None if text is None else ast.parse(text).body[0]


def test_without_a_finder_the_function_runs_as_it_is():
    fn = _made("unfound")
    del fn.kept_text
    add_source_finder(_finder)
    assert Swap().run(lambda x: fn(x), 0.0) == 0.0  # sin(0) * 2: not reached
    assert not found_elsewhere(fn) and not adopted(fn.__code__)


def test_a_finder_s_definition_is_adopted_for_every_context():
    fn = _made("found")
    add_source_finder(_finder)
    add_source_finder(_finder)  # (registered once)
    assert Swap().run(lambda x: fn(x), 0.0) == 2.0  # cos(0) * 2: the context ran the text's calls
    assert adopted(fn.__code__)
    assert not found_elsewhere(fn)  # (adopted once: the answer stands)
