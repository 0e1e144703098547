"""What a callback changes while a solver or integrator calls it natively (reverse mode runs `quad`, `odeint`,
`fsolve`, `root`, `leastsq`, `least_squares` and the bracketing root finders as primitives: their rules
differentiate the result, never the calls in between).

A callback that stores what it is given on an object, into a list, a dict or an array it holds
(`def r(self, p): self.p = p; ...`, `hist.append(x)`), leaves values the caller may read after the solve; run
natively, those stores carry no derivative, and reading them back gave 0 where the last iterate's derivative
is the solution's (session 73). `stores_checked(run)` wraps a primitive's native run: the state reachable from
its callable and its `args` (a bound method's object, a partial's arguments, closure cells, defaults; two levels
down) is noted before and compared after; a change that may carry a derivative is refused (`NoRuleError`).
Counters and flags (integers, strings, None stored or appended) are not: they carry none.
"""

from __future__ import annotations

import functools
import types

import numpy as np

from overdub import depth as _runs

from .containers import _carries_derivative
from .registry import NoRuleError

__all__ = ["stores_checked", "STORED", "stored_read_refused", "callback_primitives"]

_DEPTH = 2
_LARGEST = 1_000_000  # (arrays copied to compare: up to this many entries; a larger one is compared by identity)
_NONE = (type(None), bool, int, str, bytes, complex, float, type, types.ModuleType, types.BuiltinFunctionType)


def _roots(fn, args) -> list:
    out = list(args)
    todo = [fn]
    while todo:
        f = todo.pop()
        if isinstance(f, types.MethodType):
            out.append(f.__self__)
            todo.append(f.__func__)
        elif isinstance(f, functools.partial):
            out.extend(f.args)
            out.extend(f.keywords.values())
            todo.append(f.func)
        elif isinstance(f, types.FunctionType):
            out.extend(c.cell_contents for c in (f.__closure__ or ()) if _bound(c))
            out.extend(f.__defaults__ or ())
        elif hasattr(f, "__dict__") and not isinstance(f, (type, types.ModuleType)):
            out.append(f)  # (a callable object: its fields)
    return out


def _bound(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _note(obj, depth: int, seen: dict) -> None:
    """seen[id] = (obj, state) for obj and what it holds, `depth` levels down."""
    if isinstance(obj, _NONE) or id(obj) in seen or callable(obj) and not hasattr(obj, "__dict__") or isinstance(
            obj, (types.FunctionType, types.MethodType, functools.partial)):  # (a function's own attributes: scipy's
        return  # memoizer in curve_fit keeps `last_params` there; its closure and defaults are roots of their own)
    if (type(obj).__module__ or "").split(".")[0] in ("scipy", "numpy"):  # (the library's own bookkeeping: nquad's
        return  # `_NQuad` keeps its error estimate, whose derivative the rules refuse on use)
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "fcO":
            seen[id(obj)] = (obj, obj.copy() if obj.size <= _LARGEST else None)
        return
    if isinstance(obj, (list, tuple)):
        seen[id(obj)] = (obj, [id(e) for e in obj])
        values = list(obj)
    else:
        fields = obj if isinstance(obj, dict) else getattr(obj, "__dict__", None)
        if not isinstance(fields, dict):
            return
        seen[id(obj)] = (obj, [(k, id(v)) for k, v in fields.items()])
        values = list(fields.values())
    if depth > 0:
        for v in values:
            _note(v, depth - 1, seen)


STORED: dict = {}
"""(id(obj), field) -> (obj, value, name): a field a callable stored while a primitive called it natively, under
`stores_checked(..., fields_noted=True)` (reverse mode's): reverse mode refuses a read of it that finds the value
still there (`contexts.ad.helpers.getattr_`), rather than the solve (an implied volatility's `m.vol = v` in its
objective, never read after, is answered). Emptied as each outermost derivative call starts."""


def _changes(before: dict) -> list:
    """(description, obj or None, field, value) of each change that may carry a derivative: obj and field for a
    field of an object rebound, None for a list, dict or array changed."""
    out = []
    for obj, state in before.values():
        if isinstance(obj, np.ndarray):
            if state is not None and not np.array_equal(obj, state, equal_nan=obj.dtype.kind != "O"):
                out.append((f"an array of {obj.dtype} it holds was written in place", None, None, None))
            continue
        if isinstance(obj, (list, tuple)):
            now = [id(e) for e in obj]
            if now != state:
                new = [e for e in obj if id(e) not in set(state)]
                if any(_carries_derivative(e) for e in new) or len(now) < len(state):
                    out.append((f"a {type(obj).__name__} it holds was changed", None, None, None))
            continue
        items = obj.items() if isinstance(obj, dict) else (getattr(obj, "__dict__", None) or {}).items()
        was = dict(state)
        for k, v in list(items):
            if was.get(k) != id(v) and _carries_derivative(v):
                if isinstance(obj, dict):
                    out.append((f"a dict it holds was given the key {k!r}", None, None, None))
                else:
                    out.append((f"its {type(obj).__name__} was given `{k}`", obj, k, v))
    return out


def stores_checked(run, name: str, fields_noted: bool = False):
    """`run` (a primitive's native run, its callable first) refusing a callback's stores (see above); with
    `fields_noted`, an object's field rebound is noted in `STORED` instead (its later read refused)."""
    def checked(*pos, **kw):
        fn = pos[0] if pos else next(iter(kw.values()), None)
        before: dict = {}
        for root in _roots(fn, (*pos[1:], *kw.values())):  # (its `args`, and what else the call is given)
            _note(root, _DEPTH, before)
        out = run(*pos, **kw)
        what = None
        for text, obj, field, value in (_changes(before) if before else ()):
            if fields_noted and obj is not None and type(field) is str:
                if len(STORED) < 4096:
                    STORED[(id(obj), field)] = (obj, value, name)
                    continue
            what = text
            break
        if what is not None:
            raise NoRuleError(
                f"{name}'s callable changed what it holds while {name} called it ({what}): the rules "
                f"differentiate {name}'s result, not its calls in between, so what the callable stores would carry "
                "no derivative (reverse mode) or another point's (forward mode, whose rule calls it again)",
                fix="return the values instead of storing them, or use forward mode (derivative, jacfwd, jvp)")
        return out
    checked.__name__ = checked.__qualname__ = getattr(run, "__name__", "run") + "_checked"
    checked.__wrapped__ = run
    return checked


def callback_primitives() -> tuple:
    """The primitives that call a callable natively (as C code or a rule's own evaluation): the engines wrap their
    runs with `stores_checked` (forward mode's duals form, reverse mode's native run). Empty without scipy."""
    try:
        from .numpy import scipy_integrate, scipy_leastsq, scipy_odeint, scipy_optimize, scipy_root
    except ImportError:  # (scipy is optional)
        return ()
    return (scipy_integrate.quad, scipy_integrate.quad_vec, scipy_odeint.integrate.odeint,
            *scipy_optimize.ROOT_FINDERS, scipy_optimize.optimize.fsolve, scipy_root.optimize.root,
            scipy_leastsq.optimize.leastsq, scipy_leastsq.optimize.least_squares)


def stored_read_refused(obj, field: str, name: str):
    """The refusal of a read of a field a primitive's callable stored (`STORED`)."""
    return NoRuleError(
        f"`{type(obj).__name__}.{field}` holds a value {name}'s callable stored while {name} called it: reverse mode "
        f"ran {name} as a primitive, so that value carries no derivative",
        fix="return the value from the function instead of storing it, or use forward mode (derivative, jacfwd)")


_runs.on_start(STORED.clear)
