"""The constructors of generated code (`contexts.lowered.build`) build what Python's parser makes of the
text they stand for (the tangent twin's additions: neg, if_exp, dict_, starred, slice_, attr_store, return_,
raise_, try_except)."""

import ast

import pytest

from contexts.lowered.build import (assign, attr_store, call, const, dict_, if_exp, item, neg, raise_, return_,
                                    slice_, starred, try_except, tuple_)

CASES = [
    (lambda: assign("y", neg("x")), "y = -x"),
    (lambda: assign("y", if_exp("c", "a", const(0))), "y = a if c else 0"),
    (lambda: assign("y", dict_([const("k"), "key"], ["v", const(0)])), "y = {'k': v, key: 0}"),
    (lambda: assign("y", dict_([], [])), "y = {}"),
    (lambda: assign("y", call("f", "a", starred(call("g", "b")))), "y = f(a, *g(b))"),
    (lambda: assign("y", tuple_(["a", starred("s")])), "y = (a, *s)"),
    (lambda: assign("y", item("t", slice_(const(2)))), "y = t[2:]"),
    (lambda: assign("y", item("t", slice_(None, "n", "k"))), "y = t[:n:k]"),
    (lambda: assign(attr_store("o", "args"), tuple_(["a", const(None)])), "o.args = (a, None)"),
    (lambda: return_(tuple_(["y", const(0)])), "return y, 0"),
    (lambda: return_(None), "return"),
    (lambda: raise_(call("E", const("why"))), "raise E('why')"),
    (lambda: try_except([assign("a", "b")], "NameError", [assign("a", const(0))]),
     "try:\n    a = b\nexcept NameError:\n    a = 0"),
]


@pytest.mark.parametrize("build, text", CASES, ids=[t.split("\n")[0] for _, t in CASES])
def test_a_constructor_builds_what_the_parser_makes(build, text):
    stmt = build()
    parsed = ast.parse(text).body[0]
    assert ast.dump(stmt) == ast.dump(parsed)
    module = ast.parse("def f():\n    pass\n")
    module.body[0].body = [stmt]
    compile(ast.fix_missing_locations(module), "<built>", "exec")  # (a tree the compiler accepts)
