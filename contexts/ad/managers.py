"""`@contextlib.contextmanager` generators given values that may carry a derivative, run natively and watched.

Reverse mode runs a generator context manager's code natively (a twin's generator runs eagerly: the code after
`yield`, restoring a setting, would run before the body), so what it computes from its arguments comes out
constant, and a manager given differentiated arguments is refused (`runtime._generator_cm`). That refused
every scikit-learn fit in reverse mode: `fit` runs inside `callback_management_context(estimator)`, and an
estimator holds floats (`Ridge(alpha=0.5)`), though the manager only tears callbacks down and deletes two
attributes.

Such a manager is let run where it provably takes nothing from a differentiated value into the program:
- its generator's code (`harmless_code`) computes nothing (no arithmetic, no formatting), stores nothing
  outside its locals (attributes, items, globals, cells) and compares nothing but a `len(...)` with a
  constant (`len(errors) == 1`): its only effects are reads, `del` of attributes, raising and yielding;
- what it yields carries no derivative (`_may_differ`);
- while it runs (`__enter__`, `__exit__`), a profile function sees every call it makes: none but its own
  code and the builtins that compute nothing (`_QUIET`) -- a callback's `teardown`, a Python `__getattr__`
  or `__delattr__` reached on the way, anything else is refused once the call returns.
Where a profiler is already installed (cProfile), the manager cannot be watched: refused as before.
"""

from __future__ import annotations

import builtins
import contextlib
import dis
import sys
import types

__all__ = ["WatchedManager", "harmless_code"]

_GENERATOR_CM = contextlib._GeneratorContextManager
_OWN_CODES = frozenset({_GENERATOR_CM.__enter__.__code__, _GENERATOR_CM.__exit__.__code__})

# what the generator's own code may not do: compute (arithmetic, formatting a number into text, which the
# engines remember), store outside its locals, or test membership (a tie of a differentiated value)
_FORBIDDEN = frozenset({
    "BINARY_OP", "UNARY_NEGATIVE", "UNARY_POSITIVE", "UNARY_INVERT", "UNARY_NOT",
    "STORE_ATTR", "STORE_SUBSCR", "STORE_SLICE", "STORE_GLOBAL", "STORE_DEREF", "STORE_NAME",
    "DELETE_SUBSCR", "DELETE_GLOBAL", "DELETE_DEREF", "DELETE_NAME",
    "FORMAT_VALUE", "FORMAT_SIMPLE", "FORMAT_WITH_SPEC", "CONVERT_VALUE", "BUILD_STRING",
    "CONTAINS_OP", "IMPORT_STAR", "YIELD_FROM", "SEND", "GET_AWAITABLE",
    "BINARY_ADD", "BINARY_SUBTRACT", "BINARY_MULTIPLY", "BINARY_TRUE_DIVIDE", "BINARY_POWER",
})
_SKIPPED = frozenset({"CACHE", "EXTENDED_ARG", "PRECALL", "KW_NAMES", "NOP", "PUSH_NULL", "TO_BOOL"})
# the builtins a watched manager may call (the generator's `next`, `throw` and `close` by contextlib): each
# reads or tests, and none makes a value from a number
_QUIET = frozenset(map(id, (builtins.hasattr, builtins.getattr, builtins.isinstance, builtins.issubclass,
                            builtins.len, builtins.callable, builtins.id, builtins.type, builtins.iter,
                            builtins.next, builtins.delattr, sys.setprofile)))
_GENERATOR_METHODS = frozenset({"throw", "close"})  # (contextlib's own calls of the generator)

_CHECKED: dict = {}  # code -> whether it is harmless (`harmless_code`)


def harmless_code(fn) -> bool:
    """fn's generator code (and the code objects inside it) computes, stores and compares nothing (above)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return False
    known = _CHECKED.get(code)
    if known is None:
        known = _CHECKED[code] = _harmless(code, getattr(fn, "__globals__", {}))
    return known


def _harmless(code, globals_) -> bool:
    ops = [i for i in dis.get_instructions(code) if i.opname not in _SKIPPED]
    for k, ins in enumerate(ops):
        if ins.opname in _FORBIDDEN:
            return False
        if ins.opname == "COMPARE_OP" and not _len_against_constant(ops, k, globals_):
            return False
    return all(_harmless(c, globals_) for c in code.co_consts if isinstance(c, types.CodeType))


def _len_against_constant(ops, k, globals_) -> bool:
    """ops[k], a comparison, is `len(<one load>) <op> <constant>`: the length of something against a number."""
    if k < 4 or ops[k - 1].opname != "LOAD_CONST" or ops[k - 2].opname != "CALL":
        return False
    load, fn = ops[k - 3], ops[k - 4]
    return (load.opname.startswith("LOAD_") and load.opname != "LOAD_GLOBAL" and fn.opname == "LOAD_GLOBAL"
            and fn.argval == "len" and globals_.get("len", builtins.len) is builtins.len)


class WatchedManager(_GENERATOR_CM):
    """A generator context manager of harmless code given values that may carry a derivative: run natively,
    watched (the module's docstring)."""

    def __enter__(self):
        if sys.getprofile() is not None:  # (a profiler of the user's: not replaced, and then not watched)
            raise _refused(self, "a profiler is installed, so its calls cannot be watched")
        v, seen = _watched(self, _GENERATOR_CM.__enter__, self)
        from .runtime import _may_differ
        if seen or _may_differ(v, 0):
            _GENERATOR_CM.__exit__(self, None, None, None)  # (entered: left again before the refusal)
            raise _refused(self, f"it called {seen[0]}" if seen else "it yields a value that may carry a derivative")
        return v

    def __exit__(self, typ, value, traceback):
        out, seen = _watched(self, _GENERATOR_CM.__exit__, self, typ, value, traceback)
        if seen:
            raise _refused(self, f"it called {seen[0]}")
        return out


def _codes_in(code) -> frozenset:
    """code and the code objects inside it (a comprehension's, in Python 3.11)."""
    found = {code}
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            found |= _codes_in(c)
    return frozenset(found)


def _watched(m, method, *args):
    """method(*args) run with a profile function noting every call but those of m's own code and the quiet
    builtins: (its result, what it called)."""
    own = _codes_in(m.gen.gi_code) | _OWN_CODES
    seen: list = []

    def profile(frame, event, arg):
        if event == "call":
            code = frame.f_code
            if code not in own:
                seen.append(code.co_qualname if hasattr(code, "co_qualname") else code.co_name)
        elif event == "c_call" and id(arg) not in _QUIET and not (
                getattr(arg, "__name__", None) in _GENERATOR_METHODS and
                type(getattr(arg, "__self__", None)) in (types.GeneratorType, type(m.gen))):
            seen.append(getattr(arg, "__qualname__", repr(arg)))

    sys.setprofile(profile)
    try:
        out = method(*args)
    finally:
        sys.setprofile(None)
    return out, seen


def _refused(m, why: str):
    from .runtime import UnsupportedFunction
    code = m.gen.gi_code
    return UnsupportedFunction(
        f"reverse mode does not differentiate through the context manager {code.co_name} called with "
        f"differentiated arguments (its generator runs natively, around the body of the `with`): {why}",
        where=f"{code.co_filename}:{code.co_firstlineno}",
        fix="pass it values that are not differentiated, or compute the differentiated part inside the `with` "
            "body; forward mode (`contexts.derivative`, `jvp`) follows it as it is")


def _register() -> None:
    """The watched manager's own methods run as they are, natively (their code is the engine's, the watch)."""
    from ..rules.registry import registry
    registry.nondifferentiable(WatchedManager.__enter__, WatchedManager.__exit__)


_register()
