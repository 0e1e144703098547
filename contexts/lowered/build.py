"""Generated code as trees: the constructors every transformer builds its statements with.

A transformer never writes code as text to parse back: it builds `ast` nodes with these functions and
places them at the user's statement with `at`. Arguments that stand for expressions take a node (used as
given: the caller copies a user node it also keeps elsewhere) or a string, which names a variable:

    at([assign(("y", "pb"), call("__od_call__", 1, attr("math", "sin"), "x"))], stmt)

builds `y, pb = __od_call__(1, math.sin, x)` on the line of `stmt`. Plain Python values other than
strings (`1`, `None`, a tuple of strings meant as a constant) go through `const`.

Why trees and not text: text generation re-parses the user's own expressions (unparsed to be pasted in),
costs a parse per generated statement (most of a long function's build time), and lets a generated name
collide with a pasted expression's text; a tree is checked by construction and costs one allocation per node.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence

from overdub.passes import copy_tree

__all__ = ["Node", "load", "store", "const", "call", "attr", "item", "tuple_", "list_", "assign", "expr_stmt",
           "if_", "is_", "is_not", "is_none", "not_none", "and_", "or_", "not_", "binop", "compare", "at", "index_value",
           "user"]

Node = ast.expr | str
# one context object each, shared by every node as the parser shares its own (a new `ast.Load()` per name
# doubles the objects of a generated tree, and the collector's work with them)
LOAD, STORE = ast.Load(), ast.Store()
# and one object per operator, for the same reason (`binop(a, ast.Add(), b)` keeps the shared one)
_OPERATORS = {cls: cls() for kind in (ast.operator, ast.cmpop, ast.boolop, ast.unaryop)
              for cls in kind.__subclasses__()}


def load(x: Node) -> ast.expr:
    """An expression: a string is the variable of that name, a node is used as given."""
    return ast.Name(id=x, ctx=LOAD) if isinstance(x, str) else x


def store(x: Node | Sequence[Node]) -> ast.expr:
    """An assignment target: a name, a tuple of targets (nested tuples unpack), or a node (an attribute or
    subscript, given with a Store context)."""
    if isinstance(x, str):
        return ast.Name(id=x, ctx=STORE)
    if isinstance(x, (tuple, list)):
        return ast.Tuple(elts=[store(e) for e in x], ctx=STORE)
    return x


def const(v) -> ast.Constant:
    """A constant: numbers, strings, None, booleans, Ellipsis, and tuples of them (one Constant, as the
    compiler folds it)."""
    return ast.Constant(value=v)


def user(node: ast.expr) -> ast.expr:
    """A copy of a user's expression, to be placed in generated code while the original stays where it is
    (an atom, a name or a constant, in the common case: copied without the generic deep copy)."""
    if isinstance(node, ast.Name):
        return ast.Name(id=node.id, ctx=LOAD)
    if isinstance(node, ast.Constant):
        return ast.Constant(value=node.value, kind=node.kind)
    return copy_tree(node)


def call(func: Node, *args: Node, **kwargs: Node) -> ast.Call:
    """`func(*args, **kwargs)`; an argument given as an `ast.Starred` is spread, a keyword named `**` (pass
    it through a dict: `**{"**": x}`) is `**x`."""
    keywords = [ast.keyword(arg=None if k == "**" else k, value=load(v)) for k, v in kwargs.items()]
    return ast.Call(func=load(func), args=[load(a) for a in args], keywords=keywords)


def attr(value: Node, name: str) -> ast.Attribute:
    return ast.Attribute(value=load(value), attr=name, ctx=LOAD)


def item(value: Node, index: Node | int) -> ast.Subscript:
    """`value[index]`; an int index is a constant."""
    index = const(index) if isinstance(index, int) else load(index)
    return ast.Subscript(value=load(value), slice=index, ctx=LOAD)


def tuple_(elts: Iterable[Node]) -> ast.Tuple:
    return ast.Tuple(elts=[load(e) for e in elts], ctx=LOAD)


def list_(elts: Iterable[Node]) -> ast.List:
    return ast.List(elts=[load(e) for e in elts], ctx=LOAD)


def assign(target: Node | Sequence[Node], value: Node) -> ast.Assign:
    """`target = value`; a tuple of targets unpacks (`a, b = value`)."""
    return ast.Assign(targets=[store(target)], value=load(value))


def expr_stmt(value: Node) -> ast.Expr:
    return ast.Expr(value=load(value))


def if_(test: Node, body: list[ast.stmt], orelse: list[ast.stmt] | None = None) -> ast.If:
    return ast.If(test=load(test), body=body or [ast.Pass()], orelse=orelse or [])


def compare(a: Node, op: ast.cmpop, b: Node) -> ast.Compare:
    return ast.Compare(left=load(a), ops=[_OPERATORS.get(type(op), op)], comparators=[load(b)])


def is_(a: Node, b: Node) -> ast.Compare:
    return compare(a, _OPERATORS[ast.Is], b)


def is_not(a: Node, b: Node) -> ast.Compare:
    return compare(a, _OPERATORS[ast.IsNot], b)


def is_none(x: Node) -> ast.Compare:
    return is_(x, const(None))


def not_none(x: Node) -> ast.Compare:
    return is_not(x, const(None))


def and_(*xs: Node) -> ast.expr:
    """`a and b and ...` (one operand: itself)."""
    return load(xs[0]) if len(xs) == 1 else ast.BoolOp(op=_OPERATORS[ast.And], values=[load(x) for x in xs])


def or_(*xs: Node) -> ast.expr:
    return load(xs[0]) if len(xs) == 1 else ast.BoolOp(op=_OPERATORS[ast.Or], values=[load(x) for x in xs])


def not_(x: Node) -> ast.UnaryOp:
    return ast.UnaryOp(op=_OPERATORS[ast.Not], operand=load(x))


def binop(a: Node, op: ast.operator, b: Node) -> ast.BinOp:
    return ast.BinOp(left=load(a), op=_OPERATORS.get(type(op), op), right=load(b))


def at(stmts: list[ast.stmt], like: ast.AST) -> list[ast.stmt]:
    """Give every node of stmts the position of the user's statement `like` (tracebacks through generated
    code point at the user's line), and return stmts."""
    line = getattr(like, "lineno", 1)
    end = getattr(like, "end_lineno", line) or line
    todo = list(stmts)  # (ast.walk's traversal, without its generators, over the fields that hold nodes)
    pop, push, extend = todo.pop, todo.append, todo.extend
    node_fields = _NODE_FIELDS
    while todo:
        n = pop()
        if n._attributes:
            n.lineno, n.end_lineno, n.col_offset, n.end_col_offset = line, end, 0, 0
        fields = node_fields.get(type(n))
        if fields is None:
            fields = _node_fields(type(n))
        for name in fields:
            v = getattr(n, name, None)
            if type(v) is list:
                extend([x for x in v if isinstance(x, ast.AST)])
            elif isinstance(v, ast.AST):
                push(v)
    return stmts


# per node class, the fields that may hold nodes with a position: not names, constants' values, contexts
# and operators (shared objects without one)
_NODE_FIELDS: dict[type, tuple[str, ...]] = {}
_NOT_NODES = frozenset({"ctx", "op", "ops", "id", "attr", "kind", "type_comment"})


def _node_fields(cls: type) -> tuple[str, ...]:
    fields = _NODE_FIELDS[cls] = tuple(f for f in cls._fields if f not in _NOT_NODES
                                       and not (cls is ast.Constant and f == "value"))
    return fields


def index_value(node: ast.expr) -> ast.expr:
    """An index as a value usable as a call argument (`a[1:]`'s index becomes `slice(1, None, None)`), a copy
    of the user's nodes."""
    if isinstance(node, ast.Slice):
        return call("__od_slice__", *(const(None) if p is None else user(p) for p in (node.lower, node.upper, node.step)))
    if isinstance(node, ast.Tuple):
        return tuple_(index_value(e) for e in node.elts)
    return user(node)


# -- added for the transformers' generators ------------------------------------------------------------

__all__ += ["LOAD", "STORE", "neg", "if_exp", "dict_", "starred", "slice_", "attr_store", "return_", "raise_",
            "try_except"]


def neg(x: Node) -> ast.UnaryOp:
    """`-x`."""
    return ast.UnaryOp(op=_OPERATORS[ast.USub], operand=load(x))


def if_exp(test: Node, body: Node, orelse: Node) -> ast.IfExp:
    """`body if test else orelse`."""
    return ast.IfExp(test=load(test), body=load(body), orelse=load(orelse))


def dict_(keys: Iterable[Node], values: Iterable[Node]) -> ast.Dict:
    """`{k: v, ...}`, keys and values in pairs (a key None is a `**` spread)."""
    return ast.Dict(keys=[None if k is None else load(k) for k in keys], values=[load(v) for v in values])


def starred(x: Node) -> ast.Starred:
    """`*x`, spread into a call's arguments or a tuple."""
    return ast.Starred(value=load(x), ctx=LOAD)


def slice_(lower: Node | None = None, upper: Node | None = None, step: Node | None = None) -> ast.Slice:
    """`lower:upper:step`, a subscript's index (`item(x, slice_(const(1)))` is `x[1:]`)."""
    return ast.Slice(lower=None if lower is None else load(lower), upper=None if upper is None else load(upper),
                     step=None if step is None else load(step))


def attr_store(value: Node, name: str) -> ast.Attribute:
    """`value.name` as an assignment target."""
    return ast.Attribute(value=load(value), attr=name, ctx=STORE)


def return_(value: Node | None) -> ast.Return:
    return ast.Return(value=None if value is None else load(value))


def raise_(exc: Node) -> ast.Raise:
    return ast.Raise(exc=load(exc), cause=None)


def try_except(body: list[ast.stmt], exception: Node, handler: list[ast.stmt]) -> ast.Try:
    """`try: body / except exception: handler`."""
    return ast.Try(body=body, handlers=[ast.ExceptHandler(type=load(exception), name=None, body=handler)],
                   orelse=[], finalbody=[])
