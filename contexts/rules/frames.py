"""Frames for messages: the engine's own frames (overdub's core and the contexts) are skipped, library
frames (site-packages, the standard library) told from the user's.

>>> import sys
>>> from contexts.rules.frames import is_engine
>>> is_engine(__file__), is_engine(sys.__file__ if hasattr(sys, "__file__") else "x.py")
(True, False)
"""

from __future__ import annotations

import bisect
import dis
import os
import sys
import sysconfig

import overdub
import overdub.errors

__all__ = ["is_engine", "is_engine_class", "is_user", "outside_engine", "user_chain", "note_transformed", "name_user_lines",
           "entry_error"]

_ENGINE = (os.path.dirname(os.path.abspath(overdub.__file__)) + os.sep,  # overdub/ and contexts/
           os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep)
_LIBRARY = tuple({os.path.abspath(p) + os.sep for key in ("stdlib", "platstdlib", "purelib", "platlib")
                  if (p := sysconfig.get_paths().get(key))})


overdub.errors.ENGINE_DIRS.extend(d for d in _ENGINE if d not in overdub.errors.ENGINE_DIRS)


def is_engine(filename: str) -> bool:
    return filename.startswith(_ENGINE)


def is_engine_class(cls) -> bool:
    """cls is the engine's own (a dual's, a tracer's, a cotangent's class): its methods handle the engines'
    values themselves, never run under a context."""
    return (cls.__module__ or "").startswith(("contexts.", "overdub."))


def is_user(filename: str) -> bool:
    """A file of the user's: not the engine's, not installed (site-packages, dist-packages, the standard
    library), not generated (`<string>`, `<lambda>` sources)."""
    return (not filename.startswith(_ENGINE) and not filename.startswith(_LIBRARY)
            and "site-packages" not in filename and "dist-packages" not in filename
            and not filename.startswith("<"))


def outside_engine(frame):
    """frame, or the first frame outward of it that is not the engine's (None if there is none)."""
    while frame is not None and frame.f_code.co_filename.startswith(_ENGINE):
        frame = frame.f_back
    return frame


def tests_none(frame) -> bool:
    """The instruction frame is at (reading an attribute, calling getattr) is followed by a test of its
    result against None (`a.base is None`, `if x.base is not None:`), the result used for nothing else:
    an answer of None or not-None is all that code reads from it. Also in the core's form of the code, where
    the test is a call of the `is`/`is not` operator's site (`__od_op__(k, __od_is__)(a.base, None)`)."""
    offsets, seq = _ops_of(frame.f_code)
    n = bisect.bisect_right(offsets, frame.f_lasti) - 1  # (f_lasti may point into the instruction's caches)
    if n < 0 or n + 1 >= len(seq):
        return False
    op, arg = seq[n + 1][1:]
    if op in _JUMP_IF_NONE:
        return True
    if op != "LOAD_CONST" or arg is not None or n + 2 >= len(seq):
        return False
    then = seq[n + 2][1]
    if then == "IS_OP":
        return True
    if then == "PRECALL" and n + 3 < len(seq):
        then = seq[n + 3][1]
    if then != "CALL" or seq[n + 2][2] != 2:
        return False
    for k in range(n - 1, -1, -1):  # the site's function, loaded before its left operand (this value)
        op, arg = seq[k][1:]
        if op in _STATEMENT_ENDS:
            return False
        if arg in ("__od_is__", "__od_is_not__"):
            return True
    return False


def asks_for(frame, name: str) -> bool:
    """The instruction frame is at is a call of a method `name` the frame read itself (`value.item()`; in the
    core's form of the code too, the method read and handed to a site's helper): Python code asking for it,
    not a C function the frame called, which asks on its own."""
    offsets, seq = _ops_of(frame.f_code)
    n = bisect.bisect_right(offsets, frame.f_lasti) - 1
    if n < 0 or seq[n][1] != "CALL":
        return False
    for k in range(n - 1, max(-1, n - 8), -1):
        op, arg = seq[k][1:]
        if op in _STATEMENT_ENDS:
            return False
        if op in ("LOAD_ATTR", "LOAD_METHOD") and arg == name or op == "LOAD_CONST" and arg == name:
            return True  # (LOAD_CONST: the name given to the core's attribute site, `getattr(a, "item")`)
    return False


_OPS: dict = {}  # code -> ([offsets], [(offset, opname, argval)]), caches left out


def _ops_of(code) -> tuple:
    """code's instructions as (offsets, [(offset, opname, argval)]), made once per code (`_OPS`)."""
    ops = _OPS.get(code)
    if ops is None:
        seq = [(i.offset, i.opname, i.argval) for i in dis.get_instructions(code)]
        ops = _OPS[code] = ([o for o, _, _ in seq], seq)
    return ops
_JUMP_IF_NONE = frozenset({"POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE", "POP_JUMP_FORWARD_IF_NONE",
                           "POP_JUMP_FORWARD_IF_NOT_NONE", "POP_JUMP_BACKWARD_IF_NONE",
                           "POP_JUMP_BACKWARD_IF_NOT_NONE"})
_STATEMENT_ENDS = frozenset({"STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF", "STORE_ATTR",
                             "STORE_SUBSCR", "POP_TOP", "RETURN_VALUE", "RETURN_CONST", "JUMP_FORWARD",
                             "JUMP_BACKWARD", "RESUME"})


def user_chain(frames, limit: int = 3) -> list[str]:
    """`file:line in name` of the user's frames among `frames` (innermost first), at most `limit`."""
    out = []
    for frame, line in frames:
        code = frame.f_code
        if is_user(code.co_filename):
            name = getattr(code, "co_qualname", code.co_name)
            out.append(f"{code.co_filename}:{line} in {name}")
            if len(out) == limit:
                break
    return out


# -- messages about exceptions that leave library code ------------------------------------------------

_CONTROL_FLOW = (StopIteration, StopAsyncIteration, GeneratorExit)


def note_transformed(e: BaseException, fn, mode: str) -> None:
    """Called where an exception leaves a twin (the first twin it leaves decides, once per exception):
    when that twin is a library function's and e is not one of the engine's errors, add a note that overdub
    was transforming it, in which mode, the user's lines that led there, and how to run it as a primitive."""
    try:
        if e.__dict__.get("_overdub_noted"):
            return
        e._overdub_noted = True
    except AttributeError:  # an exception type without a __dict__
        return
    code = _code_of(fn)
    if code is None or isinstance(e, (overdub.OverdubError, *_CONTROL_FLOW)) or is_user(code.co_filename):
        return
    name = getattr(code, "co_qualname", code.co_name)
    module = getattr(fn, "__module__", None) or ""
    if "<" in name:  # a nested function or lambda: reachable through its module only
        how = f"`contexts.opaque({module!r})`" if module else "`contexts.opaque(fn)`"
    else:
        how = (f"`contexts.opaque({module + '.' if module else ''}{name})`"
               + (f" (or `contexts.opaque({module!r})`)" if module else ""))
    note = (f"overdub was differentiating {name} ({code.co_filename}:{code.co_firstlineno}) in {mode} when "
            f"this was raised. If it comes from the transform (a differentiated value where the library "
            f"expects a plain number or array), run the function as a primitive with {how} and give it a "
            f"rule (`contexts.custom_adjoint`, `contexts.rules.registry.frule`), or do not differentiate its "
            f"inputs")
    chain = user_chain(_stack(sys._getframe(1)))
    if chain:
        note += "\n  reached from " + " <- ".join(chain)
    e.add_note(note)


def _code_of(fn):
    """The code object calling fn runs first (a method's function, a class's __init__, a callable
    object's __call__), or None."""
    for _ in range(4):
        code = getattr(fn, "__code__", None)
        if code is not None:
            return code
        if isinstance(fn, type):
            fn = fn.__dict__.get("__init__") or getattr(fn, "__new__", None)
        else:
            fn = getattr(fn, "__func__", None) or getattr(fn, "func", None) or getattr(type(fn), "__call__", None)
        if fn is None:
            return None
    return None


def _stack(frame):
    while frame is not None:
        yield frame, frame.f_lineno
        frame = frame.f_back


def _traceback(tb):
    """(frame, line) of a traceback, innermost first."""
    out = []
    while tb is not None:
        out.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    return out[::-1]


def name_user_lines(e: BaseException, *more) -> None:
    """An engine error met inside library code (its message names the library's line) also names the
    user's lines that led there, innermost first, from e's traceback (and those of `more`, the
    exceptions it travelled with). Once per error; nothing when the message names the user's line."""
    if not isinstance(e, overdub.OverdubError) or getattr(e, "_overdub_reached", False):
        return
    try:
        e._overdub_reached = True
    except AttributeError:
        return
    frames, seen = [], set()
    # (and the exceptions it was raised from or while handling: a refusal judged again from a point's two
    # sides is raised anew, its first one's traceback the one through the user's lines: mosqito's filter bank)
    causes, x = [], e
    while len(causes) < 4 and (x := x.__cause__ or x.__context__ or getattr(x, "judged_from", None)) is not None:
        causes.append(x)
    for x in (e, *more, *causes):
        for frame, line in _traceback(x.__traceback__):
            if id(frame) not in seen:
                seen.add(id(frame))
                frames.append((frame, line))
    chain = list(dict.fromkeys(user_chain(frames)))  # (the same line once: a rerun's frames repeat the first run's)
    if not chain:
        return
    text = str(e)
    first = chain[0].rsplit(" in ", 1)[0]  # file:line
    if first in text:
        return
    e.args = (text + "\n  reached from " + " <- ".join(chain),) + e.args[1:]


def entry_error(e: BaseException) -> BaseException:
    """What an entry point raises for e leaving it: the engine's refusal a library caught and turned into
    its own error (`overdub.errors.hidden`), or e; an engine error names the user's lines that led there."""
    inner = overdub.errors.hidden(e)
    if inner is not None:
        name_user_lines(inner, e)
        return inner
    name_user_lines(e)
    return e
