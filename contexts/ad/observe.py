"""Reverse mode under an observer: every operation of the user's code, in the forward pass and as its
adjoint in the backward pass, reported with the user's file:line.

An *observer* is any object with a method `observe_derivative(op, run)`: `op` is a `DerivativeOp` (the
user's `site`, the primitive `fn`, its primal operands `args`/`kwargs`, whether this is the adjoint and the
incoming `cotangent`, and `recursed` when fn is a Python function whose own operations are reported one
by one); `run()` performs the operation and returns its value (forward: the primal result; adjoint: the
operands' cotangents, a tuple). The observer must return what `run()` returned, or raise. Observers are
the debugging contexts (`contexts.debug`, found on overdub's stack of active contexts) and the rule check
of `ADContext(check=True)` (a context variable, so it holds for one `with` block, thread and task).

How: when an observer is active, `gradient`/`pullback`/`vjp` enter through `observed_entry`, which runs
the *observed twins* (generated with `observed=True`: binary operations through `__od_binop__`, their
adjoints through `__od_binop_adj__`, no inlined fast paths), whose helpers report each operation; a
call's pullback is wrapped so its adjoint is reported too. Without an observer nothing here runs: the
twins, caches and hot paths of reverse mode are the plain ones.

Forward mode and sparsity detection are observed the same way, by the same observers: when an observer
is active their entry points run the user's code under an *observed* engine context (`Observed` before
`ForwardContext` or `SparsityContext` in the bases), whose patched twins intercept arithmetic too; each
call and operator of the user's code is reported as a `DerivativeOp` at its own site (forward mode: with
`tangents`, the operands' incoming tangents, and `split`, which takes a result apart into primal and
tangent). Operations inside the engines' own code (a rule run on duals) are run, not reported.

Invariant: observing changes no value; each reported operation runs exactly once, when it would run
unobserved.
"""

from __future__ import annotations

import contextvars
import dataclasses
import operator
import os
import sys
import types
from dataclasses import dataclass, field
from typing import Any

from overdub import Site

from ..forward.observe import _ENGINE_DIR, DerivativeOp, Observed, _check, _name_of, observer  # noqa: F401

__all__ = ["DerivativeOp", "Observed", "observer", "observed_entry"]

# the observer of the run in progress (the observer of ADContext(check=True) blocks: forward.observe._check)
_active: contextvars.ContextVar = contextvars.ContextVar("overdub_ad_observer", default=None)

_OPERATORS = {"add": (operator.add, "+"), "sub": (operator.sub, "-"), "mul": (operator.mul, "*"),
              "truediv": (operator.truediv, "/"), "floordiv": (operator.floordiv, "//"),
              "mod": (operator.mod, "%"), "pow": (operator.pow, "**"), "matmul": (operator.matmul, "@"),
              "lshift": (operator.lshift, "<<"), "rshift": (operator.rshift, ">>"),
              "or_": (operator.or_, "|"), "xor": (operator.xor, "^"), "and_": (operator.and_, "&")}


def observed_entry(obs, mask, f, args, kw):
    """`runtime.call(mask, f, *args, **kw)` with every operation reported to obs."""
    code = getattr(f, "__code__", None)
    site = Site(0, "call", _name_of(f), getattr(code, "co_filename", "<unknown>"),
                getattr(code, "co_firstlineno", 0), 0, "<run>", 0)  # (called by the engine, not the user)
    token = _active.set(obs)
    try:
        return _observed(obs, site, mask, f, args, kw)
    finally:
        _active.reset(token)


def _site(kind: str, op: str, depth: int = 2) -> Site:
    """The site of the generated code's statement running `depth` frames up: the user's file and line."""
    frame = sys._getframe(depth)
    code = frame.f_code
    function = code.co_qualname.removesuffix(".<adjoint>")
    return Site(0, kind, op, code.co_filename, frame.f_lineno, 0, function, 0)


def _observed(obs, site, mask, f, args, kw):
    from . import runtime
    from .runtime import _rule_of, _twin_call, call
    kind = type(f)
    twin = None  # (function, its object): a Python function whose operations are reported one by one
    if "out" not in kw and not (runtime._overriding and runtime.given_rule(f, args) is not None):
        if kind is types.FunctionType and _rule_of(f)[0] is None:
            twin = f, ()
        elif (kind is types.MethodType and type(f.__func__) is types.FunctionType
              and _rule_of(f.__func__)[0] is None and _rule_of(f)[0] is None):
            twin = f.__func__, (f.__self__,)
        if twin is not None and twin[0].__code__.co_filename.startswith(_ENGINE_DIR):
            twin = None  # the engines' own code (a method of a dual, forward over reverse): a primitive
    recursed = twin is not None
    out = []

    def run():
        y, pb = _twin_call(mask, *twin, args, kw, True) if recursed else call(mask, f, *args, **kw)
        out.append(pb)
        return y

    y = obs.observe_derivative(DerivativeOp(site, f, args, kw, recursed=recursed), run)
    pb = out[0] if out else None
    if pb is None:
        return y, None
    return y, (_observed_back, pb, DerivativeOp(site, f, args, kw, True, None, recursed), obs)


def observed_call(mask, f, /, *args, **kw):
    """`__od_call__` of an observed twin."""
    obs = _active.get()
    if obs is None:
        from .runtime import call
        return call(mask, f, *args, **kw)
    return _observed(obs, _site("call", _name_of(f)), mask, f, args, kw)


def _observed_back(pb, dy, dself, S):
    """The pullback of an observed call: its adjoint reported as an operation of the user's line."""
    _, inner, op, obs = pb
    handed = S.dargs_in
    if handed is not None and handed[0] is pb:  # (the callee's in-place changes: see runtime._twin_back)
        S.dargs_in = (inner,) + handed[1:]
    op = DerivativeOp(op.site, op.fn, op.args, op.kwargs, True, dy, op.recursed)
    out = []

    def run():
        r = inner[0](inner, dy, dself, S)
        out.append(r)
        return tuple(r[1]) if r[1] is not None else ()

    token = _active.set(obs)
    try:
        obs.observe_derivative(op, run)
    finally:
        _active.reset(token)
    return out[0]


def observed_binop(opname, a, b):
    """`a <op> b` of an observed forward twin."""
    fn, symbol = _OPERATORS[opname]
    obs = _active.get()
    if obs is None:
        return fn(a, b)
    return obs.observe_derivative(DerivativeOp(_site("binop", symbol), fn, (a, b)), lambda: fn(a, b))


def observed_binop_adj(opname, g, y, a, b, need=3, S=None):
    """The adjoint of `a <op> b` in an observed adjoint."""
    from .helpers import binop_adj
    obs = _active.get()
    if obs is None:
        return binop_adj(opname, g, y, a, b, need, S)
    fn, symbol = _OPERATORS.get(opname, (None, opname))
    op = DerivativeOp(_site("binop", symbol), fn, (a, b), {}, True, g)
    return obs.observe_derivative(op, lambda: binop_adj(opname, g, y, a, b, need, S))


def plain_binop(opname, a, b):
    """`__od_binop__` outside observed twins (never called: only observed twins use the name)."""
    return _OPERATORS[opname][0](a, b)
