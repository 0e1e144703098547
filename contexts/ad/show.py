"""Printing what reverse mode built for a function, as Zygote's `@code_adjoint` does."""

from __future__ import annotations

import ast
from typing import Callable, Iterable

from .codegen import EVERY_ARGUMENT
from .runtime import _active_params, twin_info

__all__ = ["show_adjoint"]


def show_adjoint(f: Callable, active: Iterable[str] | None = None) -> str:
    """The recording forward twin of f and the adjoint of each of its blocks, as text.

    Each block record is `(block id, saved primal values...)`; the adjoint of block k runs when its record
    is popped in the reverse pass. Lines are the user's.

    >>> def f(x, n):
    ...     r = 1.0
    ...     for _ in range(n):
    ...         r = r * x
    ...     return r
    >>> print(show_adjoint(f, active=["x"]).splitlines()[0])  # doctest: +ELLIPSIS
    adjoint of f (...), active arguments: x
    """
    fn = getattr(f, "__func__", f)
    if isinstance(active, str) or (active is not None and not all(isinstance(a, str) for a in active)):
        raise TypeError("show_adjoint's `active` is the names of the differentiated parameters "
                        f"(e.g. ['x']), not {active!r}")
    code = fn.__code__
    act = frozenset(active) if active is not None else _active_params(code, EVERY_ARGUMENT, 0, 0, ())
    info = twin_info(fn, act)
    gen = info.generated
    out = [f"adjoint of {code.co_qualname} ({code.co_filename}:{code.co_firstlineno}), "
           f"active arguments: {', '.join(sorted(a for a in act if a in gen.params)) or '-'}",
           f"active variables: {', '.join(sorted(v for v in gen.active if not v.startswith('_od_')))}",
           "", "forward twin:", _indent(ast.unparse(gen.forward)), ""]
    for k in sorted(gen.blocks):
        stmts = gen.blocks[k]
        lines = sorted({s.lineno for s in stmts if hasattr(s, "lineno")})
        where = f"line {lines[0]}" if len(lines) == 1 else f"lines {lines[0]}-{lines[-1]}" if lines else ""
        out.append(f"block {k} ({where}):")
        out.append(_indent("\n".join(ast.unparse(s) for s in stmts)))
    return "\n".join(out)


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())
