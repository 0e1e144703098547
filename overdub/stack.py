"""The stack of active contexts, one per thread and asyncio task (`contextvars`).

Invariant: `_current` always holds the last element of `_stack` (or None when it is empty), and `_route`
that context's fast table when it is a fast context (else None); all three are set together, only by
`Context.__enter__`/`__exit__`.
"""

from __future__ import annotations

import contextvars

__all__ = ["current", "active"]

_stack: contextvars.ContextVar[tuple] = contextvars.ContextVar("overdub_stack", default=())
_current: contextvars.ContextVar = contextvars.ContextVar("overdub_current", default=None)
_route: contextvars.ContextVar = contextvars.ContextVar("overdub_route", default=None)


def current():
    """The innermost active context, or None.

    >>> import overdub
    >>> overdub.current() is None
    True
    """
    return _current.get()


def active() -> tuple:
    """All active contexts, outermost first."""
    return _stack.get()
