"""`NaNContext`: stop at the first operation that turns finite inputs into NaN or Inf, or inputs without
NaN into NaN (`inf - inf`, `0 * inf`), in plain code and in both passes of a derivative.

Invariant: an operation is blamed only when its result holds a NaN/Inf and none of its inputs (arguments,
and the object a bound method belongs to) held one, or its result holds a NaN and none of its inputs did; operations that only move values (attribute and item
reads, iteration, unpacking, building containers) and comparisons are never blamed, nor are calls of
Python functions the context recursed into (their own operations were checked one by one, so a NaN they
return came from a deliberate constant such as `float("nan")`).
"""

from __future__ import annotations

import cmath
import decimal
import math
import numbers
import types

import numpy as np

import overdub
from overdub.errors import OverdubError

from ._blind import Observing
from ._show import callable_name, is_engine, short_repr

__all__ = ["NaNContext", "NaNError"]

_COMPUTING = frozenset({"call", "binop", "unaryop", "augop"})
_MUTABLE = (np.ndarray, list, dict)
_MAX_ITEMS = 64
# allocations whose contents are whatever memory held (a NaN there is not computed): never blamed
_GARBAGE = frozenset(map(id, (np.empty, np.empty_like)))  # containers longer than this are checked on their first items only


class NaNError(OverdubError):
    """An operation produced NaN or Inf from finite inputs (or NaN from inputs without NaN). `site`, `fn`,
    `args`, `result` say which; for the adjoint of an operation in a derivative's backward pass, `adjoint`
    is True and `cotangent` holds the incoming cotangent (`args` the operation's primal operands); for the
    tangent of an operation in forward mode, `tangents` holds the operands' incoming tangents (None for a
    constant operand) and `result` the tangent made."""

    def __init__(self, site, fn, args: tuple, kwargs: dict, result, *, adjoint: bool = False,
                 cotangent=None, tangents: tuple | None = None, finite_inputs: bool = True):
        self.site, self.fn, self.args_, self.kwargs, self.result = site, fn, args, kwargs, result
        self.adjoint, self.cotangent, self.tangents = adjoint, cotangent, tangents
        operands = ", ".join([short_repr(a) for a in args]
                             + [f"{k}={short_repr(v)}" for k, v in kwargs.items()])
        op = site.op if site is not None else callable_name(fn)
        bad = "NaN" if _has(result, _is_nan) else "Inf"
        source = "finite" if finite_inputs else "NaN-free"
        if adjoint:
            shown = result[0] if isinstance(result, tuple) and len(result) == 1 else result
            what = (f"the adjoint of {op!s} (backward pass) produced {bad} ({short_repr(shown)}) from the "
                    f"{source} cotangent {short_repr(cotangent)}; primal operands ({operands})")
            fix = ("the derivative of this operation is singular at these operands (sqrt or log at 0, "
                   "a division by zero, inf * 0?); keep its inputs away from the singularity, or give it "
                   "a custom adjoint (`contexts.custom_adjoint`)")
        elif tangents is not None:
            shown = ", ".join("0" if t is None else short_repr(t) for t in tangents)
            what = (f"the tangent of {op!s} (forward mode) produced {bad} ({short_repr(result)}) from the "
                    f"{source} primal operands ({operands}) and incoming tangents ({shown})")
            fix = ("the derivative of this operation is singular at these operands (sqrt or log at 0, "
                   "a division by zero, inf * 0?); keep its inputs away from the singularity, or give the "
                   "function around it a forward rule (`registry.frule`)")
        else:
            what = f"{op!s} produced {bad} ({short_repr(result)}) from {source} operands ({operands})"
            fix = ("check the operands at this line (a division by zero, log or sqrt of a non-positive number, "
                   "an overflow, inf - inf, 0 * inf?); guard the operation or clamp its inputs")
        super().__init__(what, where=str(site) if site is not None else callable_name(fn), fix=fix)


class NaNContext(Observing, overdub.Context):
    """Raise `NaNError` at the first operation (call, arithmetic, ...) whose result holds a NaN or Inf
    (float, complex, Decimal, numpy scalar or array, or a tuple/list of these) although its inputs were
    all finite. The error names the operation, its operands and the user's file:line.

    >>> def log_range(xs):
    ...     return np.log(xs.max() - xs.min())
    >>> try:
    ...     with np.errstate(divide="ignore"):
    ...         NaNContext().run(log_range, np.array([2.0, 2.0]))
    ... except NaNError as e:
    ...     print(e.what)
    np.log produced Inf (-inf) from finite operands (0.0)
    """

    intercepts = overdub.KINDS

    def __init__(self) -> None:
        super().__init__()
        self.error: NaNError | None = None  # the first NaNError raised, even if user code caught it

    def overdub(self, site, fn, /, *args, **kwargs):
        self.seen += 1
        kind = site.kind if site is not None else "call"
        if kind == "call" and overdub.is_recursable(fn) and not is_engine(fn):  # (other kinds stand for
            return self.recurse(fn, *args, **kwargs)                            # operator functions)
        inputs = _inputs(fn, args, kwargs)
        # An in-place operation (`a *= 1e300`, `np.exp(a, out=a)`) changes its inputs: judge mutable
        # inputs before it runs. Immutable ones can wait until a non-finite result makes it matter.
        state = _state(inputs) if any(isinstance(v, _MUTABLE) for v in inputs) else None
        result = self.primitive(fn, *args, **kwargs)
        if kind in _COMPUTING and id(fn) not in _GARBAGE and _has(result, _not_finite):
            self._judge(site, fn, args, kwargs, result, _state(inputs) if state is None else state)
        return result

    def observe_derivative(self, op, run):
        """An operation of a derivative's forward or backward pass (`contexts.ad.observe`): its result, or
        NaNError when it made the first NaN/Inf (an adjoint: from finite cotangent and operands)."""
        self.seen += 1
        if op.tangents is not None:
            return self._forward(op, run)
        inputs = [*op.args, *op.kwargs.values()] + ([op.cotangent] if op.adjoint else [])
        state = _state(inputs) if any(isinstance(v, _MUTABLE) for v in inputs) else None
        result = run()
        if not op.recursed and _has(result, _not_finite):
            self._judge(op.site, op.fn, op.args, op.kwargs, result, _state(inputs) if state is None else state,
                        adjoint=op.adjoint, cotangent=op.cotangent)
        return result

    def _forward(self, op, run):
        """An operation of forward mode: NaNError when its primal result is the first NaN/Inf (from primal
        operands), or its tangent is (from finite or NaN-free primal operands and incoming tangents)."""
        inputs = _inputs(op.fn, op.args, op.kwargs)
        tangents = [t for t in op.tangents if t is not None]
        mutable = any(isinstance(v, _MUTABLE) for v in inputs + tangents)
        state = (_state(inputs), _state(inputs + tangents)) if mutable else None
        result = run()
        if op.recursed:
            return result
        y, dy = op.split(result)
        if _has(y, _not_finite):
            self._judge(op.site, op.fn, op.args, op.kwargs, y, state[0] if state else _state(inputs))
        if dy is not None and _has(dy, _not_finite):  # (a primal Inf from Inf operands: its tangent may be first)
            self._judge(op.site, op.fn, op.args, op.kwargs, dy, state[1] if state else _state(inputs + tangents),
                        tangents=op.tangents)
        return result

    def _judge(self, site, fn, args, kwargs, result, state, **adjoint) -> None:
        """Raise NaNError if `result` (not finite) is a first: Inf or NaN from finite inputs, or NaN from
        inputs holding none (`inf - inf`, `0 * inf`), as jax_debug_nans reports them."""
        finite, nan_free = state
        if finite or (nan_free and _has(result, _is_nan)):
            error = NaNError(site, fn, args, kwargs, result, finite_inputs=finite, **adjoint)
            if self.error is None:
                self.error = error
            raise error

    def run(self, fn, /, *args, **kwargs):
        """Run `fn(*args, **kwargs)` under this context; raises `NaNError` at the first NaN/Inf made,
        also when the code run caught it (`except Exception:`) and went on."""
        self.error = None
        with self:
            try:
                result = self.overdub(None, fn, *args, **kwargs)
            except NaNError:
                raise
            except BaseException as e:
                if self.error is not None:
                    raise self.error from e
                raise
        if self.error is not None:
            raise self.error
        return result


def _inputs(fn, args: tuple, kwargs: dict) -> list:
    """What an operation reads: its arguments and, for a bound method, the object (`x.mean()` reads x)."""
    inputs = [*args, *kwargs.values()]
    owner = getattr(fn, "__self__", None)
    if owner is not None and not isinstance(owner, (type, types.ModuleType)):
        inputs.append(owner)
    return inputs


def _state(inputs: list) -> tuple[bool, bool]:
    """(all finite, none NaN) of the inputs, each requiring at least one number among them (so
    `float('nan')` is a deliberate constant, not a fault)."""
    if not any(_has(v, _is_number) for v in inputs):
        return False, False
    if any(_has(v, _is_nan) for v in inputs):
        return False, False
    return not any(_has(v, _not_finite) for v in inputs), True


def _has(value, test, depth: int = 0) -> bool:
    """Does `value`, or an item of a (shallowly nested) list/tuple/dict in it, pass `test`?"""
    if test(value):
        return True
    if depth < 2 and isinstance(value, (list, tuple)):
        return any(_has(v, test, depth + 1) for v in value[:_MAX_ITEMS])
    if depth < 2 and isinstance(value, dict):
        return any(_has(v, test, depth + 1) for v in list(value.values())[:_MAX_ITEMS])
    parts = getattr(type(value), "_od_parts", None)  # a dual number of forward mode: primal and tangent
    if parts is not None:
        return any(_has(v, test, depth) for v in parts(value))
    return False


def _is_number(value) -> bool:
    return isinstance(value, (numbers.Number, np.ndarray, np.generic, decimal.Decimal)) \
        and not isinstance(value, bool)


def _not_finite(value) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, complex):
        return not cmath.isfinite(value)
    if isinstance(value, decimal.Decimal):
        return not value.is_finite()
    if isinstance(value, (np.ndarray, np.generic)):
        return _numpy_not_finite(value)
    nominal = getattr(value, "nominal_value", None)  # uncertainties' ufloat
    if isinstance(nominal, float):
        return not math.isfinite(nominal)
    return False


def _is_nan(value) -> bool:
    if isinstance(value, (float, complex)):
        return cmath.isnan(value)
    if isinstance(value, decimal.Decimal):
        return value.is_nan()
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "fc":
        return bool(np.isnan(value).any())
    nominal = getattr(value, "nominal_value", None)
    return isinstance(nominal, float) and math.isnan(nominal)


def _numpy_not_finite(value) -> bool:
    if value.dtype.kind not in "fc":  # ints, bools, strings, objects: nothing to check
        return False
    return not bool(np.isfinite(value).all())
