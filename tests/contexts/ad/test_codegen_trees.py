"""The reverse-mode code generator builds trees: every node of the forward twin and of the adjoint carries
the line of the user's statement it mirrors (tracebacks and `show_adjoint` rely on it), and the gradients
of functions exercising each kind of generated statement match finite differences."""

from __future__ import annotations

import ast
import inspect
import math
import textwrap

import numpy as np
import pytest

from contexts.ad.runtime import twin_info
from tests.fd import assert_grad_fd


class Box:
    def __init__(self, v):
        self.v = v

    def scaled(self, k):
        return self.v * k


def arithmetic(x, y):
    a = x * y - x / (y + 2.0)
    b = -a + 3.0 * x
    return a * b


def loop_and_closure(x, y):
    s = 0.0
    for t in [x, y, x * y]:
        s = s + t * t

    def h(u):
        return u * x + y
    return s + h(2.0) + h(y)


def containers(x, y):
    d = {"a": x, "b": y}
    t = [x, *[y, x]]
    u = (x, y)
    return d["a"] * t[2] + math.sin(u[1]) + max(x, y, key=abs)


def objects(x, y):
    b = Box(x)
    b.v = b.v * y
    return b.scaled(y) + b.v


def arrays(x, y):
    a = np.array([x, y, x * y])
    v = a[1:]
    a[0] = a[0] * y
    a *= x
    np.add.at(a, [0, 1], y)
    return float(np.sum(a[:2] * v))


FUNCTIONS = [arithmetic, loop_and_closure, containers, objects, arrays]


def _statement_lines(fn) -> tuple[int, set[int], set[int]]:
    """fn's def line, the lines of its statements, and those of its returns."""
    lines, first = inspect.getsourcelines(fn)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    stmts = [n for n in ast.walk(tree.body[0]) if isinstance(n, ast.stmt)][1:]
    shift = first - 1
    return (first, {n.lineno + shift for n in stmts},
            {n.lineno + shift for n in stmts if isinstance(n, ast.Return)})


def _simple_statements(stmts):
    """The statements of a body that hold no other statements, in nested bodies too."""
    for st in stmts:
        inner = [getattr(st, f, []) for f in ("body", "orelse", "finalbody")] + [
            h.body for h in getattr(st, "handlers", [])]
        if any(inner):
            yield from _simple_statements([x for body in inner for x in body])
        else:
            yield st


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_every_generated_node_is_on_its_users_statements_line(fn):
    def_line, statement_lines, return_lines = _statement_lines(fn)
    gen = twin_info(fn, frozenset(("x", "y"))).generated
    for tree in (gen.forward, gen.adjoint):
        for stmt in _simple_statements(tree.body):  # one line for all the nodes of a statement
            lines = {n.lineno for n in ast.walk(stmt) if "lineno" in n._attributes}
            assert lines == {stmt.lineno}, (fn.__name__, ast.unparse(stmt))
            assert stmt.lineno in statement_lines | {def_line}, (fn.__name__, ast.unparse(stmt))
    returns = [n for n in ast.walk(gen.forward) if isinstance(n, ast.Return)]
    assert returns and all(r.lineno in return_lines for r in returns)
    for k, stmts in gen.blocks.items():  # a block's adjoint is on the lines of the statements it mirrors
        # (or the def line: the parameters' entry copies)
        assert stmts and all(st.lineno in statement_lines | {def_line} for st in _simple_statements(stmts)), k


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_gradients_match_finite_differences(fn):
    assert_grad_fd(fn, 0.7, 1.3)
