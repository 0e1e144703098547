import colorsys
import json
import statistics

import pytest

from contexts.debug import TraceContext

from . import _subjects as s


def test_fib_makes_fifteen_calls_with_correct_arguments_and_results():
    ctx = TraceContext()
    assert ctx.run(s.fib, 5) == 5
    calls = ctx.find("fib")
    assert len(calls) == 15
    expected = {0: 0, 1: 1, 2: 1, 3: 2, 4: 3, 5: 5}
    for node in calls:
        n = int(node.args[0])
        assert node.result == repr(expected[n])
        assert node.exception is None
        assert node.duration >= 0
        # fib(n) calls fib(n-1) and fib(n-2) in that order, and nothing else when n >= 2
        assert [c.args[0] for c in node.children] == ([str(n - 1), str(n - 2)] if n >= 2 else [])
        assert all(c.depth == node.depth + 1 for c in node.children)
    assert ctx.roots[0].depth == 0 and ctx.roots[0].site is None


def test_tree_text_is_the_call_tree():
    ctx = TraceContext()
    ctx.run(s.fib, 3)
    assert ctx.tree(times=False) == "\n".join([
        "fib(3) -> 2",
        "  fib(2) -> 1",
        "    fib(1) -> 1",
        "    fib(0) -> 0",
        "  fib(1) -> 1",
    ])
    assert str(ctx).splitlines()[0].startswith("fib(3) -> 2  [") and str(ctx).endswith("ms]")


def test_call_sites_point_at_the_caller_line():
    ctx = TraceContext()
    ctx.run(s.fib, 2)
    line = s.line_of(s.fib, "fib(n - 1)")
    for child in ctx.roots[0].children:
        filename, lineno = child.site.rsplit(":", 1)
        assert filename == s.__file__ and int(lineno) == line


def test_exception_is_recorded_and_propagates():
    ctx = TraceContext()
    assert ctx.run(s.calls_fails, 0) == -1.0
    (root,) = ctx.roots
    assert root.result == "-1.0"
    (inner,) = root.children
    assert inner.function == "fails" and inner.result is None
    assert "ZeroDivisionError" in inner.exception
    with pytest.raises(ZeroDivisionError):
        TraceContext().run(s.fails, 0)


def test_methods_keywords_and_defaults():
    acct = s.Account(10)
    ctx = TraceContext()
    assert ctx.run(acct.deposit, 5, fee=1) == 14
    assert ctx.roots[0].function == "Account.deposit"
    assert ctx.roots[0].kwargs == {"fee": "1"}
    assert ctx.roots[0].args == ["Account(10)", "5"]  # the bound object shows as the first argument
    ctx = TraceContext()
    assert ctx.run(s.with_defaults, 1, 2, 3, scale=2, z=0) == 13
    assert ctx.roots[0].call_text() == "with_defaults(1, 2, 3, scale=2, z=0)"


def test_max_depth_filter():
    ctx = TraceContext(max_depth=1)
    ctx.run(s.fib, 5)
    assert len(list(ctx.nodes())) == 3  # fib(5), fib(4), fib(3)
    assert max(n.depth for n in ctx.nodes()) == 1


def test_function_filter_reparents_kept_calls():
    ctx = TraceContext(functions=["square"])
    assert ctx.run(s.norm2, [3.0, 4.0]) == 5.0
    assert [n.call_text() for n in ctx.roots] == ["square(3.0)", "square(4.0)"]
    assert all(n.depth == 1 for n in ctx.roots)
    ctx = TraceContext(functions=[s.square, "norm2"])
    ctx.run(s.norm2, [3.0, 4.0])
    assert [c.function for c in ctx.roots[0].children] == ["square", "square"]


def test_function_filter_matches_closures_made_under_the_context():
    def user():
        return s.make_adder(1)(1) + s.make_adder(2)(2)

    ctx = TraceContext(functions=[s.make_adder(0)])
    assert ctx.run(user) == 6
    assert [n.call_text() for n in ctx.roots] == ["make_adder.<locals>.add(1)", "make_adder.<locals>.add(2)"]


def test_primitives_are_recorded_on_request():
    ctx = TraceContext(primitives=True)
    assert ctx.run(s.norm2, [3.0, 4.0]) == 5.0
    names = [c.function for c in ctx.roots[0].children]
    assert names.count("square") == 2 and "sqrt" in names
    sqrt = next(c for c in ctx.roots[0].children if c.function == "sqrt")
    assert sqrt.args == ["25.0"] and sqrt.result == "5.0" and sqrt.module == "math"
    ctx = TraceContext(primitives=True)
    ctx.run(lambda xs: xs.index(3), [1, 3])
    assert ctx.roots[0].children[0].call_text() == "list.index([1, 3], 3)"
    plain = TraceContext()
    plain.run(s.norm2, [3.0, 4.0])
    assert [c.function for c in plain.roots[0].children] == ["square", "square"]


def test_third_party_code_unchanged_and_module_filter():
    def user(r, g, b):
        return colorsys.rgb_to_hls(r, g, b)[0] + colorsys.rgb_to_hsv(r, g, b)[0]

    expected = user(0.2, 0.5, 0.9)
    ctx = TraceContext(modules=["colorsys"])
    assert ctx.run(user, 0.2, 0.5, 0.9) == expected
    assert [n.function for n in ctx.roots] == ["rgb_to_hls", "rgb_to_hsv"]
    assert all(n.module == "colorsys" for n in ctx.nodes())
    assert ctx.roots[0].result == repr(colorsys.rgb_to_hls(0.2, 0.5, 0.9))


def test_statistics_is_traced_inside():
    data = [1.0, 2.0, 4.0]
    ctx = TraceContext(modules=["statistics"])
    assert ctx.run(statistics.variance, data) == statistics.variance(data)
    (root,) = ctx.roots
    assert root.function == "variance"
    assert len(list(ctx.nodes())) > 1  # variance calls statistics' own helpers


def test_json_export_mirrors_the_tree():
    ctx = TraceContext()
    ctx.run(s.fib, 3)
    (root,) = json.loads(ctx.to_json())
    assert root["function"] == "fib" and root["args"] == ["3"] and root["result"] == "2"
    assert [c["args"] for c in root["children"]] == [["2"], ["1"]]
    assert [c["args"] for c in root["children"][0]["children"]] == [["1"], ["0"]]
    assert root["children"][1]["children"] == []


def test_dot_has_a_node_per_call_and_an_edge_per_nesting(tmp_path):
    ctx = TraceContext()
    ctx.run(s.fib, 5)
    path = tmp_path / "calls.dot"
    text = ctx.to_dot(str(path))
    assert path.read_text() == text
    assert text.startswith("digraph calls {") and text.rstrip().endswith("}")
    assert text.count("[label=") == 15
    assert text.count(" -> n") == 14
    assert 'label="fib(5)\\n-> 5\\n' in text


def test_dot_escapes_quotes_and_marks_exceptions():
    ctx = TraceContext()
    with pytest.raises(ZeroDivisionError):
        ctx.run(s.fails, 0)
    ctx2 = TraceContext()
    ctx2.run(s.echo, 'say "hi" ')
    assert 'color="red"' in ctx.to_dot()
    assert '\\"hi\\"' in ctx2.to_dot()


def test_long_values_are_shortened():
    ctx = TraceContext()
    ctx.run(s.square, 10 ** 200)
    node = ctx.roots[0]
    assert len(node.args[0]) <= 60 and len(node.result) <= 60
