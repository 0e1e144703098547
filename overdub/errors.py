"""The error hierarchy: every failure a user can cause says what, where, why and what to do."""

from __future__ import annotations

import os
import sys

__all__ = ["OverdubError", "SourceUnavailable", "MarkedOpaque", "ContextStackError", "hidden", "not_swallowed", "mark_lost", "lost_work",
           "ENGINE_DIRS"]

# the directories of the engines' own code (the core's; a package of contexts adds its own), whose handlers
# catch the contexts' errors on purpose (a fallback from one way of differentiating to another)
ENGINE_DIRS: list[str] = [os.path.dirname(os.path.abspath(__file__)) + os.sep]


class OverdubError(Exception):
    """Base class of every error raised by overdub and its contexts. The code a context runs cannot catch
    one (`not_swallowed`), except the few that stand for a plain Python condition its code may test
    (`swallowable`: a value that cannot be hashed)."""

    swallowable = False

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


class MarkedOpaque(SourceUnavailable):
    """The function (or its module) was marked `overdub.opaque` by the user: it runs as a primitive."""


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


def refused(e: "BaseException | None") -> bool:
    """e is a context's refusal no code's handler may swallow: a non-swallowable OverdubError, or an error
    library code raised from one (numpy's "setting an array element with a sequence" raised from a refused
    dual: a `__exit__` returning True took it, and the hessian went on without the store, 0 for 2).
    Only the cause is asked: an error raised while an engine's handler ran has that handler's error for
    its context."""
    if isinstance(e, OverdubError):
        return not e.swallowable
    c = getattr(e, "__cause__", None)
    return isinstance(c, OverdubError) and not c.swallowable


def hidden(e: BaseException) -> "OverdubError | None":
    """The OverdubError that library code caught and turned into an error of its own (pandas'
    `except TypeError: raise DataError("No numeric types to aggregate") from err`), found in e's chain of
    causes and contexts, with a note on what the library raised; None if e is ours or holds none. For the
    entry points, on their exception path: the user reads the refusal that says what to do."""
    if isinstance(e, OverdubError):
        return None
    seen, inner = {id(e)}, e.__cause__ or e.__context__
    while inner is not None and id(inner) not in seen:
        if isinstance(inner, OverdubError):
            tb = e.__traceback__
            while tb is not None and tb.tb_next is not None:
                tb = tb.tb_next
            at = f" (at {tb.tb_frame.f_code.co_filename}:{tb.tb_lineno})" if tb is not None else ""
            inner.add_note(f"library code caught this error and raised {type(e).__module__}."
                           f"{type(e).__qualname__}: {e}{at} instead")
            return inner
        seen.add(id(inner))
        inner = inner.__cause__ or inner.__context__
    return None


def not_swallowed(frame=None) -> None:
    """At the start of each `except` handler of the code a context runs (the core's pass and the
    transformers' twins put the call there): an OverdubError being handled is raised again. A library's
    `try: ... except Exception: return default` would otherwise take a context's refusal for a failure of
    its own and go on with its fallback: a result without the refused part, silently (pynverse's
    `except: resultsmask[j] = False`, a bisection returning a default)."""
    frame = frame or sys._getframe(1)  # (the handler's: a helper calling this gives it)
    if frame.f_code.co_filename.startswith(tuple(ENGINE_DIRS)):
        return
    e = sys.exc_info()[1]
    if e is not None and isinstance(e.__cause__, OverdubError):
        # (numpy's "setting an array element with a sequence" raised from a refused dual; its context is
        # not asked: an error raised while an engine's handler ran has that handler's error for context)
        e = hidden(e) or e
    if isinstance(e, OverdubError) and not e.swallowable:
        note = (f"the code at {frame.f_code.co_filename}:{frame.f_lineno} ({frame.f_code.co_qualname}) caught this "
                "error; it is raised again rather than letting that code go on without the refused part")
        if note not in getattr(e, "__notes__", ()):
            e.add_note(note)
        raise e


def mark_lost(e: BaseException, code, name: str, lost) -> None:
    """e leaves a transformer's twin whose code object is `code`: where `lost(frame_locals)` says the work
    recorded there before the raise is lost with it (a call that stored into an object, then raised), e is
    marked with `name`, for a handler of transformed code that catches it (`lost_work`)."""
    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_code is not code:
        tb = tb.tb_next
    if tb is not None and lost(tb.tb_frame.f_locals):
        try:
            e.__od_lost__ = name
        except (AttributeError, TypeError):  # pragma: no cover - an exception class without a __dict__
            pass


def lost_work(frame) -> str | None:
    """The name `mark_lost` put on the exception being handled in frame, where frame is not the engines'."""
    lost = getattr(sys.exc_info()[1], "__dict__", {}).get("__od_lost__")
    if lost is None or frame.f_code.co_filename.startswith(tuple(ENGINE_DIRS)):
        return None
    return lost

