"""The observation protocol every derivative engine shares (`contexts.ad.observe` describes it): the
operation an observer is shown (`DerivativeOp`), the observer of a derivative started now (`observer`),
and `Observed`, the mixin that makes an engine's context (forward mode's, sparsity's) report each
operation of the user's code. It lives in the lowest engine layer so that every engine can use it.

Invariant: observing changes no value; each reported operation runs exactly once, when it would run
unobserved.
"""

from __future__ import annotations

import contextvars
import dataclasses
import os
import types
from dataclasses import dataclass, field
from typing import Any

from overdub import Site
from overdub.passes import bound_self
from overdub.passes import context_stack as _stack

__all__ = ["DerivativeOp", "Observed", "observer"]

# the observer of ADContext(check=True) blocks (contexts.ad.check)
_check: contextvars.ContextVar = contextvars.ContextVar("overdub_ad_check", default=None)


@dataclass(slots=True)
class DerivativeOp:
    """One operation of the user's code seen during a derivative (see the module docstring)."""

    site: Site
    fn: Any
    args: tuple
    kwargs: dict = field(default_factory=dict)
    adjoint: bool = False
    cotangent: Any = None
    recursed: bool = False
    tangents: tuple | None = None  # forward mode: the operands' incoming tangents (None for a constant)
    split: Any = None              # forward mode: result -> (primal, tangent); tangent None if constant

    @property
    def name(self) -> str:
        return self.site.op


def observer():
    """The observer of a derivative started now, or None (the common case: two context-variable reads)."""
    check = _check.get()
    stack = _stack.get()
    if not stack:
        return check
    for ctx in reversed(stack):
        if getattr(ctx, "observe_derivative", None) is not None:
            return ctx if check is None else _Both(check, ctx)
    return check


class _Both:
    """The rule check first, then a debugging context."""

    def __init__(self, check, inner):
        self.check, self.inner = check, inner

    def observe_derivative(self, op, run):
        return self.check.observe_derivative(op, lambda: self.inner.observe_derivative(op, run))


def _name_of(f) -> str:
    owner = bound_self(f)
    if getattr(type(owner), "_od_parts", None) is not None:  # a method of a dual: the method of its value
        while getattr(type(owner), "_od_parts", None) is not None:
            owner = owner._od_parts()[0]
        return f"{type(owner).__name__}.{getattr(f, '__name__', '?')}"
    if isinstance(f, types.MethodType):
        return f"{type(f.__self__).__name__}.{f.__func__.__name__}"
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or type(f).__name__
    owner = bound_self(f)
    if owner is not None and not isinstance(owner, types.ModuleType) and "." not in name:
        name = f"{type(owner).__name__}.{name}"
    module = getattr(f, "__module__", None)
    if module == "numpy" or type(f).__module__ == "numpy" and owner is None:
        name = "np." + name
    elif module in ("math", "cmath", "operator"):
        name = f"{module}.{name}"
    return name


_ENGINE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # contexts/
_REPORTED = frozenset({"call", "binop", "unaryop", "augop"})


class Observed:
    """Mixin before an engine's context class (see the module docstring): every call and operator of the
    user's code run under it is reported to `self.obs`. A subclass says which calls the engine recurses
    into (`recurses`) and how an operation's values read (`operation`)."""

    intercepts = _REPORTED
    operate = None  # (every operator through `overdub`, reported; the engine's `operator_for` runs it)

    def __init__(self, obs, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.obs = obs

    def overdub(self, site, fn, /, *args, **kwargs):
        engine = site.filename.startswith(_ENGINE_DIR)  # the engine's own code (a rule run on duals)
        if site.kind != "call":
            op = fn if kwargs else self._operators(fn)
            if engine or site.kind not in _REPORTED:
                return op(*args, **kwargs)
            return self.obs.observe_derivative(self.operation(site, fn, args, kwargs, False),
                                               lambda: op(*args, **kwargs))
        run = super().overdub
        if engine:
            return run(site, fn, *args, **kwargs)
        site = dataclasses.replace(site, op=_name_of(fn))
        op = self.operation(site, fn, args, kwargs, self.recurses(fn, args, kwargs))
        return self.obs.observe_derivative(op, lambda: run(site, fn, *args, **kwargs))

    def _operators(self, fn):
        """What the engine's operator sites call for fn (`operator_for`), remembered per context."""
        route = getattr(self, "operator_for", None)
        if route is None:
            return fn
        table = self.__dict__.get("_observed_operators")
        if table is None:
            table = self._observed_operators = {}
        found = table.get(fn)
        if found is None:
            found = table[fn] = route(fn)
        return found

    def run(self, fn, /, *args, **kwargs):
        """`run` of the engine's context, the root call reported as a call of the user's function."""
        code = getattr(fn, "__code__", None)
        site = Site(0, "call", _name_of(fn), getattr(code, "co_filename", "<unknown>"),
                    getattr(code, "co_firstlineno", 0), 0, "<run>", 0)  # (called by the engine)
        run = super().run
        if code is not None and code.co_filename.startswith(_ENGINE_DIR):
            return run(fn, *args, **kwargs)
        op = self.operation(site, fn, args, kwargs, self.recurses(fn, args, kwargs))
        return self.obs.observe_derivative(op, lambda: run(fn, *args, **kwargs))

    def recurses(self, fn, args: tuple, kwargs: dict) -> bool:
        """Does the engine run fn's own code (its operations reported one by one)?"""
        raise NotImplementedError

    def operation(self, site, fn, args: tuple, kwargs: dict, recursed: bool) -> DerivativeOp:
        """The reported operation (the values as the engine has them)."""
        return DerivativeOp(site, fn, args, kwargs, recursed=recursed)
