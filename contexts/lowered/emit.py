"""Building code from the lowered form: generated statements placed at the user's line, indices as values.

Invariant: every node `parse_at` returns carries the line of the user's statement it stands for, so
tracebacks through generated code (reverse twin, adjoint, tangent twin) point at the user's source.
"""

from __future__ import annotations

import ast

from overdub.passes import AST_LOCK

__all__ = ["parse_at", "index_arg"]


def parse_at(text: str, like: ast.AST) -> list[ast.stmt]:
    """Parse generated statements and give every node the position of the user's statement `like`."""
    with AST_LOCK:
        body = ast.parse(text).body
    line = getattr(like, "lineno", 1)
    end = getattr(like, "end_lineno", line) or line
    for stmt in body:
        for n in ast.walk(stmt):
            if "lineno" in n._attributes:
                n.lineno, n.end_lineno, n.col_offset, n.end_col_offset = line, end, 0, 0
    return body


def index_arg(node) -> str:
    """An index as an expression usable as a call argument (`1:` becomes `slice(1, None, None)`)."""
    if isinstance(node, ast.Slice):
        parts = [("None" if p is None else ast.unparse(p)) for p in (node.lower, node.upper, node.step)]
        return f"slice({', '.join(parts)})"
    if isinstance(node, ast.Tuple):
        return "(" + "".join(index_arg(e) + ", " for e in node.elts) + ")"
    return ast.unparse(node)
