"""Printing the lowered form of a function, as IRTools prints its IR: one line per lowered statement.

Each line shows the user's line number, a `*` when the statement stores into an active variable (for the
active parameters given), and the statement indented by its place in the control structure.
"""

from __future__ import annotations

import ast
import copy
from typing import Callable, Iterable

from overdub.passes import get_source, mangle_private

from .activity import active_names
from .lower import lower

__all__ = ["show_lowered"]

_BODIES = ("body", "orelse", "handlers", "finalbody")


def show_lowered(f: Callable, active: Iterable[str] | None = None) -> str:
    """The lowered form of f as text (`active`: the differentiated parameters, by default all).

    >>> import math
    >>> def f(x):
    ...     y = 1.0
    ...     for i in range(3):
    ...         y = y * math.sin(x) + x
    ...     return y
    >>> print(show_lowered(f))  # doctest: +ELLIPSIS
    lowered f (<doctest ...>:1), active arguments: x
         1  def f(x):
    *    2      y = 1.0
         3      _od_t1 = range(3)
         3      for i in _od_t1:
    *    4          _od_t2 = math.sin(x)
    *    4          _od_t3 = y * _od_t2
    *    4          y = _od_t3 + x
         5      return y
    """
    fn = getattr(f, "__func__", f)
    code = fn.__code__
    src = get_source(code, fn.__globals__)
    fdef = lower(mangle_private(src.as_function_def(), src.class_name), iterators=True)
    a = fdef.args
    params = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if p is not None]
    act = set(params if active is None else active)
    hot = active_names(fdef, act, fn.__globals__, code.co_freevars)
    out = [f"lowered {code.co_qualname} ({code.co_filename}:{code.co_firstlineno}), "
           f"active arguments: {', '.join(p for p in params if p in act) or '-'}"]
    out.append(_line(fdef, 0, _head(fdef), False))
    _block(fdef.body, 1, hot, out)
    return "\n".join(out)


def _block(stmts: list, depth: int, hot: set, out: list) -> None:
    """Append the lines of stmts at depth; compound statements as their header, then each body below it."""
    for s in stmts:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or not any(
                getattr(s, b, None) for b in _BODIES):
            text = ast.unparse(s).splitlines()  # a simple statement, or a nested definition as written
            out.append(_line(s, depth, text[0], _stores_active(s, hot)))
            out.extend(_line(s, depth, t, False) for t in text[1:])
            continue
        out.append(_line(s, depth, _head(s), _stores_active(s, hot)))
        _block(s.body, depth + 1, hot, out)
        for h in getattr(s, "handlers", ()):
            out.append(_line(h, depth, _head(h), False))
            _block(h.body, depth + 1, hot, out)
        for name, word in (("orelse", "else:"), ("finalbody", "finally:")):
            if getattr(s, name, None):
                out.append(_line(None, depth, word, False))
                _block(getattr(s, name), depth + 1, hot, out)


def _head(s: ast.AST) -> str:
    """The header line of a compound statement (`for i in _od_t1:`), its bodies left out."""
    shell = copy.copy(s)
    for b in _BODIES:
        if hasattr(shell, b):
            setattr(shell, b, [])
    shell.body = [ast.Pass()]
    return ast.unparse(ast.fix_missing_locations(shell)).splitlines()[0]


def _stores_active(s: ast.AST, hot: set) -> bool:
    targets = (getattr(s, "targets", None) or [getattr(s, "target", None)] if not isinstance(s, ast.With)
               else [i.optional_vars for i in s.items])
    return any(isinstance(n, ast.Name) and n.id in hot for t in targets if t is not None for n in ast.walk(t))


def _line(s: ast.AST, depth: int, text: str, active: bool) -> str:
    return f"{'*' if active else ' '} {getattr(s, 'lineno', ''):>4}  {'    ' * depth}{text}"
