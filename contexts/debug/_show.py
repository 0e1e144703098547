"""Short, never-failing descriptions of values and callables for the debugging contexts.

Invariant: nothing here raises, and every string it returns is at most about `limit` characters long.
"""

from __future__ import annotations

import functools
import reprlib
import types

__all__ = ["short_repr", "callable_name", "callable_module", "unbound_function", "is_engine", "restated"]

class _Repr(reprlib.Repr):
    def repr_Dual(self, value, level):  # forward mode's dual numbers inside containers (reprlib's hook)
        return short_repr(value, self.maxother)


_repr = _Repr()
_repr.maxstring = 40
_repr.maxother = 40
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = 6
_repr.maxlevel = 3


_PLAIN = (int, float, bool, type(None), complex)


def short_repr(value, limit: int = 60) -> str:
    """A one-line repr of `value` cut to about `limit` characters; arrays show shape and dtype when big."""
    if type(value) in _PLAIN:  # the common case, fast
        text = repr(value)
        return text if len(text) <= limit else text[: limit - 3] + "..."
    parts = getattr(type(value), "_od_parts", None)  # a dual number of forward mode
    if parts is not None:
        primal, tangent = parts(value)
        return f"{short_repr(primal, limit // 2)} (tangent {short_repr(tangent, limit // 2)})"
    try:
        text = _array_repr(value) or _repr.repr(value)
    except Exception:  # a broken __repr__ must not break the program being debugged
        text = f"<{type(value).__qualname__} object>"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _array_repr(value) -> str | None:
    shape = getattr(value, "shape", None)
    if type(value).__module__ != "numpy" or not isinstance(shape, tuple):
        return None
    if len(shape) == 0:  # numpy scalar or 0-d array
        return repr(value.item()) if hasattr(value, "item") else None
    if value.size <= 6:
        return "array(" + _repr.repr(value.tolist()) + ")"
    return f"array<{'x'.join(map(str, shape))} {value.dtype}>"


def unbound_function(fn):
    """The plain Python function a callable runs (through bound methods and partials), or None."""
    for _ in range(8):  # bounded: a chain of wrappers never loops forever
        if isinstance(fn, types.FunctionType):
            return fn
        if isinstance(fn, types.MethodType):
            fn = fn.__func__
        elif isinstance(fn, functools.partial):
            fn = fn.func
        else:
            return None
    return None


def callable_name(fn) -> str:
    """`qualname` of a function, method or builtin; `partial(name)`; the type's name otherwise."""
    if isinstance(fn, functools.partial):
        return f"partial({callable_name(fn.func)})"
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if isinstance(name, str):
        owner = getattr(fn, "__self__", None)
        if "." not in name and owner is not None and not isinstance(owner, types.ModuleType):
            name = f"{type(owner).__qualname__}.{name}"  # e.g. list.append reached as [].append
        return name
    return type(fn).__qualname__


def callable_module(fn) -> str:
    """The module a callable comes from ('' when unknown); methods of C types report their type's."""
    if isinstance(fn, functools.partial):
        return callable_module(fn.func)
    module = getattr(fn, "__module__", None)
    if not isinstance(module, str):
        owner = getattr(fn, "__self__", None)
        module = getattr(type(owner), "__module__", None) if owner is not None else None
        if isinstance(owner, types.ModuleType):
            module = owner.__name__
    if not isinstance(module, str):
        module = getattr(type(fn), "__module__", "")
    return module or ""


# The packages of the derivative engines: the debugging contexts run their functions as primitives (their
# code is machinery, not the user's); reverse mode reports the user's operations instead
# (`contexts.ad.observe`). Named, not imported: this layer sits on the core alone.
_ENGINES = ("contexts.ad", "contexts.forward", "contexts.compose", "contexts.sparsity", "contexts.lowered",
            "contexts.rules")


def is_engine(fn) -> bool:
    """Is fn a function of a derivative engine (`gradient`, `jvp`, `jacobian_sparsity`, their helpers)?"""
    module = callable_module(fn)
    return module.startswith(_ENGINES) and (module in _ENGINES or module.startswith(
        tuple(e + "." for e in _ENGINES)))


def restated(fn) -> bool:
    """Is fn one of the calls `contexts.lowered.implicit` writes into a bisection loop it restates (the loop's
    values taken plain, its ends stated as the root)? Not the user's: run, never counted or shown."""
    return callable_module(fn) == "contexts.rules.implicit"
