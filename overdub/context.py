"""Contexts: what every intercepted site of a patched function calls, and their activation.

Cassette's vocabulary: a site calls `ctx.overdub(site, fn, *args, **kwargs)`; the default runs
`prehook`, then `recurse` (pure-Python fn: run its patched twin under this context) or `primitive`
(anything else: run fn itself), then `posthook`. Subclasses override what they need and declare the
site kinds they need in `intercepts`; twins are specialised per profile, so a calls-only context pays
only per call.

All methods take their own arguments positionally only (`/`), so the user's keyword arguments can be
called anything; overriding methods should do the same.

Activation: `with ctx:` pushes ctx on a stack held in a `contextvars.ContextVar`, so each thread and
asyncio task has its own; only the innermost active context intercepts. Leaving a context that is not
the innermost raises `ContextStackError` and changes nothing. Entering an instance that is already
active is allowed and re-entrant: it is pushed again and must be left again (`with ctx: ctx.run(f)` works).
While any context is active the recursion limit is at least 5x the limit at import, because every
intercepted call adds up to four frames of machinery to the user's one; leaving the last context restores
the limit the program had.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

from . import depth as _depth
from . import patch as _patch
from .errors import ContextStackError, OverdubError
from .sites import Site, normalize_profile
from .stack import _current, _route, _stack

__all__ = ["Context"]

_HOOKABLE = ("overdub", "prehook", "posthook", "recurse", "primitive")


class Context:
    """Run functions with every intercepted operation routed through `overdub`.

    >>> import math, overdub
    >>> class Calls(overdub.Context):
    ...     def __init__(self): self.seen = []
    ...     def prehook(self, site, fn, /, *args, **kwargs): self.seen.append(site.op)
    >>> def f(x): return math.sqrt(abs(x))
    >>> ctx = Calls()
    >>> ctx.run(f, -4.0), ctx.seen
    (2.0, ['abs', 'math.sqrt'])
    """

    intercepts: frozenset[str] = frozenset({"call"})
    # A context intercepting "getattr" may name a method `read_attribute(obj, name)` here: attribute reads
    # then call it directly (no Site, no prehook/posthook: a read is the commonest operation there is)
    read_attribute: str | None = None
    # A context intercepting operator kinds (binop, augop, unaryop, compare, iter, truth, with) may name a method
    # `operate(fn)` here, returning what such a site calls with its operands instead of `overdub` (no Site,
    # no hooks: for a context that only needs to see which objects meet, as `overdub.ops.dispatch` does)
    operate: str | None = None
    _od_operators: dict | None = None  # fn -> operate(fn), per activation (`patch.OperatorTable`)

    # Derived per class in __init_subclass__ (per instance in __enter__ if an instance sets intercepts):
    _od_key: tuple = _patch.profile_key(intercepts)
    _od_fast: bool = True    # overrides none of overdub/prehook/posthook/recurse/primitive
    _od_hooks: bool = False  # overrides prehook or posthook
    _od_own_recurse: bool = False  # overrides recurse
    # fn -> what a site calls for it, for fast contexts; per instance, made on entering and dropped when
    # the instance leaves the stack, so it keeps no function alive beyond an activation. Within one
    # activation a function is looked up by identity: a `__code__` replaced meanwhile is seen at the
    # next activation.
    _od_fast_table: dict | None = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.intercepts = normalize_profile(cls.intercepts)
        cls._od_key = _patch.profile_key(cls.intercepts)
        overridden = {name for name in _HOOKABLE if getattr(cls, name) is not getattr(Context, name)}
        cls._od_fast = not overridden
        cls._od_hooks = bool(overridden & {"prehook", "posthook"})
        cls._od_own_recurse = "recurse" in overridden

    # -- what sites call ---------------------------------------------------------------------------
    def overdub(self, site: Site, fn: Callable, /, *args, **kwargs) -> Any:
        """What every intercepted site calls: prehook; recurse or primitive; posthook.

        An intercepted `getattr` of a `property` with a pure-Python getter recurses into the getter.
        """
        hooks = self._od_hooks
        if hooks:
            self.prehook(site, fn, *args, **kwargs)
        if fn is getattr and len(args) == 2 and (getter := _patch.property_getter(*args)) is not None:
            result = self.recurse(getter, args[0])  # a pure-Python property: recurse into its getter
        elif (target := _patch.resolve(fn, self._od_key)) is None:
            result = self.primitive(fn, *args, **kwargs)
        elif self._od_own_recurse:
            result = self.recurse(fn, *args, **kwargs)
        else:
            result = target(*args, **kwargs)  # what the default recurse would do, resolved once
        if hooks:
            self.posthook(site, result, fn, *args, **kwargs)
        return result

    def recurse(self, fn: Callable, /, *args, **kwargs) -> Any:
        """Run the patched twin of fn under this context (fn itself via `primitive` if it has none)."""
        target = _patch.resolve(fn, self._od_key)
        if target is None:
            return self.primitive(fn, *args, **kwargs)
        return target(*args, **kwargs)

    def primitive(self, fn: Callable, /, *args, **kwargs) -> Any:
        """Run a primitive; the default calls it."""
        return fn(*args, **kwargs)

    def prehook(self, site: Site, fn: Callable, /, *args, **kwargs) -> None:
        """Observe an operation before it runs (default: nothing)."""

    def posthook(self, site: Site, result: Any, fn: Callable, /, *args, **kwargs) -> None:
        """Observe an operation and its result after it ran (default: nothing)."""

    # -- activation -------------------------------------------------------------------------------------
    def run(self, fn: Callable, /, *args, **kwargs) -> Any:
        """Run `fn(*args, **kwargs)` with this context active; return its result.

        >>> import overdub
        >>> overdub.Context().run(lambda x, y: x * y, 6, y=7)
        42
        """
        if not callable(fn):
            raise OverdubError(f"{type(self).__name__}.run needs a callable, got {type(fn).__name__} "
                               f"{_short(fn)}", fix="pass the function and its arguments: ctx.run(f, x), "
                               "not ctx.run(f(x))")
        with self:
            return self.recurse(fn, *args, **kwargs)

    def __enter__(self) -> "Context":
        if "intercepts" in vars(self):
            self.intercepts = normalize_profile(self.intercepts)
            self._od_key = _patch.profile_key(self.intercepts)
        if self._od_fast and self._od_fast_table is None:
            self._od_fast_table = _patch.FastTable(self)
        if self.operate is not None and self._od_operators is None:
            self._od_operators = _patch.OperatorTable(getattr(self, self.operate))
        _depth.enter()
        _stack.set(_stack.get() + (self,))
        _current.set(self)
        _route.set(self._od_fast_table)
        return self

    def __exit__(self, *exc_info) -> bool:
        stack = _stack.get()
        if not stack or stack[-1] is not self:
            inner = describe_context(stack[-1]) if stack else "no context"
            raise ContextStackError(
                f"leaving {describe_context(self)}, but the innermost active context is {inner}",
                fix="leave contexts in the reverse order of entering them (nest `with` blocks)")
        rest = stack[:-1]
        _stack.set(rest)
        _current.set(rest[-1] if rest else None)
        _route.set(rest[-1]._od_fast_table if rest else None)
        _depth.leave()
        if not any(ctx is self for ctx in rest):
            if self._od_fast:
                self._od_fast_table = None
            if self._od_operators is not None:
                self._od_operators = None
        return False


def describe_context(ctx) -> str:
    """`ClassName at 0x...` for messages."""
    return f"{type(ctx).__name__} at {id(ctx):#x}"


def _short(obj) -> str:
    text = repr(obj)
    return text if len(text) <= 60 else text[:57] + "..."



