"""Inlining a declared formula: a rule's one-expression function, placed into generated code as a tree.

Derivatives declared once as small functions (`contexts.rules.operator.DERIVATIVES`: `mul_db(t, a, b, y)`
returns `a * t`) are called by rules and duals, and inlined by the code generators, which cannot afford a
call per arithmetic operation in a twin's hot loop:

>>> from contexts.rules.operator import mul_db
>>> ast.unparse(inline(mul_db, t=load("_g"), a=load("x"), b=load("w"), y=const(None)))
'x * _g'

The function is read once (its source, through the core's `get_source`) and must be a single `return`
of one expression of its parameters (names it reads besides them would mean other things where it is
inlined: refused).
"""

from __future__ import annotations

import ast
import functools

from overdub.passes import copy_tree, get_source

from .build import const, load, user

__all__ = ["inline", "formula"]


class NotInlinable(ValueError):
    """A function that is not one `return` of one expression of its parameters."""


@functools.cache
def formula(fn) -> tuple[tuple[str, ...], ast.expr]:
    """(parameter names, the returned expression) of a one-expression function."""
    tree = get_source(fn.__code__, fn.__globals__).tree
    body = [s for s in tree.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        raise NotInlinable(f"{fn.__qualname__} is not one `return` of an expression")
    params = tuple(a.arg for a in tree.args.posonlyargs + tree.args.args)
    expr = body[0].value
    free = {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)} - set(params)
    if free:
        raise NotInlinable(f"{fn.__qualname__} reads {sorted(free)} besides its parameters")
    return params, expr


class _Substitute(ast.NodeTransformer):
    def __init__(self, values: dict[str, ast.expr]):
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return user(self.values[node.id])


def inline(fn, **values: ast.expr | str) -> ast.expr:
    """fn's returned expression with each parameter replaced by a copy of the node given for it (a string
    names a variable, None is the constant None)."""
    params, expr = formula(fn)
    missing = set(params) - values.keys()
    if missing:
        raise TypeError(f"inline({fn.__qualname__}): no value for {sorted(missing)}")
    nodes = {k: const(None) if v is None else load(v) for k, v in values.items()}
    return _Substitute(nodes).visit(copy_tree(expr))
