"""The error hierarchy: every failure a user can cause says what, where, why and what to do."""

from __future__ import annotations

__all__ = ["OverdubError", "SourceUnavailable", "ContextStackError"]


class OverdubError(Exception):
    """Base class of every error raised by overdub and its contexts."""

    def __init__(self, what: str, *, where: str | None = None, fix: str | None = None):
        self.what, self.where, self.fix = what, where, fix
        parts = [what]
        if where:
            parts.append(f"  at {where}")
        if fix:
            parts.append(f"  possible fix: {fix}")
        super().__init__("\n".join(parts))


class SourceUnavailable(OverdubError):
    """The source of a function cannot be had (or no longer matches its code); it runs opaque."""


class ContextStackError(OverdubError):
    """A context was left out of order, or used in a way the stack does not allow."""


def describe(fn) -> str:
    """`name (file:line)` for a function-like object, for messages."""
    code = getattr(fn, "__code__", None) or getattr(getattr(fn, "__func__", None), "__code__", None)
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    if code is None:
        module = getattr(fn, "__module__", None)
        return f"{module}.{name}" if module else name
    return f"{name} ({code.co_filename}:{code.co_firstlineno})"
