"""inline: a declared one-expression formula placed into generated code as a tree."""

import ast
import doctest

import pytest

import contexts.lowered.inline
from contexts.lowered.build import binop, load
from contexts.lowered.inline import NotInlinable, inline
from contexts.rules.operator import DERIVATIVES


def test_docstring_example_runs():
    failed, attempted = doctest.testmod(contexts.lowered.inline)
    assert failed == 0 and attempted > 0


@pytest.mark.parametrize("name", sorted(DERIVATIVES))
def test_inlined_formula_computes_what_the_function_does(name):
    for fn in DERIVATIVES[name]:
        expr = inline(fn, t="t", a="a", b=load("b"), y=binop("a", ast.Div(), "b"))
        code = compile(ast.fix_missing_locations(ast.Expression(expr)), "<inline>", "eval")
        t, a, b = 0.37, 1.9, -0.6
        assert eval(code, {"t": t, "a": a, "b": b}) == fn(t, a, b, a / b)


def _two_statements(t):
    u = t * 2
    return u


def _reads_a_global(t):
    return t * DERIVATIVES


def test_refuses_what_it_cannot_inline():
    with pytest.raises(NotInlinable, match="one `return`"):
        inline(_two_statements, t="x")
    with pytest.raises(NotInlinable, match="DERIVATIVES"):
        inline(_reads_a_global, t="x")
    with pytest.raises(TypeError, match=r"no value for \['b'"):
        inline(DERIVATIVES["mul"][0], t="x", a="y", y=None)
