"""What code built from the lowered form calls at run time, the same in every mode.

The lowering emits calls of `__od_unpack__`, `__od_iter__`, `__od_tuple__` and `__od_int_arg__` (bound by
`HELPERS`, with `__od_locals__`, the builtin `locals` under a name no parameter shadows) and of
`__od_primal__` (bound by each mode to the primal of its own values). `addresses` is the memory fact the
modes share: which elements of two arrays are one element seen through two views.
"""

from __future__ import annotations

import ast
import binascii
import bisect
import builtins
import collections
import collections.abc
import contextvars
import hashlib
import inspect
import math
import numbers
import operator
import os
import re
import sys
import threading
from decimal import Decimal
from fractions import Fraction
from typing import Any, Callable

import types
import zlib

import numpy as np

import overdub
from overdub import depth
from overdub.passes import AST_LOCK
from overdub.errors import OverdubError

from ..rules.frames import is_engine_class, outside_engine
from ..rules.operator import KINK
from ..rules.leaves import FLOAT_HOLDERS, value_class
from ..rules.watch import JUMP_WATCH, watch_order
from ..rules.registry import registry

__all__ = ["int_cast_jump", "TEXT_TYPES", "texts_through", "HASH_TYPES", "HELPERS", "EagerIterationError", "SpecialPoint", "special_case", "ORDER_OPS", "SPECIAL_HITS", "CHECK_SPECIAL", "equality_guard", "equality_guard_fd", "equality_guards", "UNCHANGEABLE_WHEN", "eager", "eager_inplace", "eager_items", "unpack", "addresses", "TextRoundTrip", "TEXT_IDS", "text_call", "remembered_text", "OwnComparison"]


def unpack(v, n, star):
    """`a, *b, c = v` as a tuple of n items (the starred one a list)."""
    items = tuple([*v])  # always a new object: `tuple(t)` would be t itself, and boxes go by identity
    if star < 0:
        if len(items) != n:
            raise ValueError(f"expected {n} values to unpack, got {len(items)}")
        return items
    after = n - star - 1
    if len(items) < n - 1:
        raise ValueError(f"not enough values to unpack (expected at least {n - 1}, got {len(items)})")
    return items[:star] + (list(items[star:len(items) - after]),) + items[len(items) - after:]


def addresses(a):
    """The byte address of each element of the array a (views of one buffer share addresses)."""
    addr = np.asarray(a.__array_interface__["data"][0], dtype=np.intp)
    for k, (n, stride) in enumerate(zip(a.shape, a.strides)):
        shape = [1] * a.ndim
        shape[k] = n
        addr = addr + (np.arange(n, dtype=np.intp) * stride).reshape(shape)
    return np.broadcast_to(addr, a.shape)


# -- a staircase finer than the value it rounds: round(x, 10), int(x * 1e9) ----------------------------
# round, int, floor, ceil and trunc are steps with derivative 0, but a step far below the value's size (a
# thermodynamic cache keyed by `round(T, 10)`, a value cleaned of noise by `round(p, 12)`, `int(t * 1e9)`)
# stands for the value itself: the code that reads it means x, and 0 is not the derivative the program's
# values show (central differences give 1). Refused where the differentiated value moves (forward mode's
# tangent), noted for forward mode to tell in reverse mode.
_STAIR = 1e-6  # (steps at most this fraction of max(1, |x|): finer than any difference quotient sees)
STAIRS = {builtins.round: "digits", np.round: "digits", np.around: "digits",
          builtins.int: "unit", math.floor: "unit", math.ceil: "unit", math.trunc: "unit", np.floor: "unit",
          np.ceil: "unit", np.trunc: "unit", np.rint: "unit", np.fix: "unit",
          operator.floordiv: "divisor", np.floor_divide: "divisor", builtins.divmod: "divisor", np.divmod: "divisor",
          operator.mod: "modulo", math.fmod: "modulo", np.mod: "modulo", np.fmod: "modulo", builtins.hash: "hash",
          np.modf: "fraction", math.atan2: "cut", np.arctan2: "cut"}
"""The functions that round their first argument by a step: of 10**-digits (round), 1 (int, floor), or their
second argument (`//`, `%`: a remainder jumps by its step as often, `t - t % step` is a staircase); and an
angle's jump on its branch cut ("cut": atan2(y, x) at y = 0 with x < 0, where it jumps by 2 pi: no staircase,
only `stair_jump_text`'s jump)."""
for _cls in (float, np.float64, np.float32):  # (`float.__mod__(x, y)`: the operator's; bound, `stair_method`)
    STAIRS.update({_cls.__mod__: "modulo", _cls.__floordiv__: "divisor", _cls.__divmod__: "divisor"})


def is_stair(fn) -> bool:
    """fn is one of `STAIRS` (False for an unhashable callable)."""
    try:
        return fn in STAIRS
    except TypeError:
        return False


def _size(x) -> float | None:
    """|x|, or the largest |x| of a float array; None for anything else (or not finite)."""
    while type(x).__name__ == "Dual":
        x = x.primal
    if isinstance(x, (float, np.floating)):
        v = abs(float(x))
    elif type(x) is np.ndarray and x.dtype.kind == "f" and x.size:
        v = float(np.max(np.abs(x)))
    else:
        return None
    return v if math.isfinite(v) else None


def stair_method(f, args: tuple):
    """(np.round, its arguments) for a bound `round` or `__round__` method of an array or a numpy scalar
    (`a.round(13)`, `np.float64(x).round(13)`), which round as np.round does; (round, its arguments) for a
    float's `__round__`; else None."""
    owner = getattr(f, "__self__", None)
    name = getattr(f, "__name__", None)
    if (name == "round" or name == "__round__") and isinstance(owner, (np.ndarray, np.generic)):
        return np.round, (owner, *args)
    if name == "__round__" and type(owner) is float:  # (`x.__round__(12)`: round's, gen22 W5: 0 for 3)
        return builtins.round, (owner, *args)
    if name == "astype" and args and _to_integers(owner, args[0]):
        # (`a.astype(int)` truncates as np.trunc does: skyfield's `Splines`, `i = interp(...).astype(int)` at a knot,
        # gave one segment's slope, sweep Q)
        return np.trunc, (owner,)
    if name in _STAIR_SLOTS:  # (`x.__mod__(y)`, `x.__divmod__(y)` by name: the operator's, whose remainder
        if type(owner) in _STAIR_OWNERS and len(args) == 1:  # jumps at a multiple of y; unbound: `STAIRS`)
            fn, reflected = _STAIR_SLOTS[name]
            return fn, ((args[0], owner) if reflected else (owner, args[0]))
    return None


def _to_integers(owner, dtype) -> bool:
    """`owner.astype(dtype)` turns a float array (or numpy float) into integers."""
    if not (isinstance(owner, (np.ndarray, np.floating)) and owner.dtype.kind == "f"):
        return False
    try:
        return np.dtype(dtype).kind in "iu"
    except TypeError:
        return False


_INT_CASTS = frozenset(map(id, (np.asarray, np.array, np.asanyarray, np.ascontiguousarray, np.asfortranarray)))


def int_cast_jump(fn, args, kw, tangent=None) -> None:
    """`np.asarray(x, dtype=np.intp)` (np.array, ...) of a differentiated float x truncates it as `x.astype(int)`
    does: a fine staircase refused, and a value exactly on an integer a jump (`jump_guard`: forward mode refuses
    where its tangent moves it; reverse mode, `tangent` None, has forward mode tell). One side's slope came out
    silently at a table's knot (sweep Q)."""
    if id(fn) not in _INT_CASTS or not args:
        return
    dtype = kw.get("dtype") if kw and "dtype" in kw else args[1] if len(args) > 1 else None
    if dtype is None:
        return
    x = args[0]
    while type(x).__name__ == "Dual":
        x = x.primal
    if isinstance(x, (float, np.floating, np.ndarray)) and np.asarray(x).dtype.kind in "fc" and _to_text(dtype):
        # (`np.array(x, dtype=str)`: the values made text, parsed back by `.astype(float)`: 0 in both modes)
        raise TextRoundTrip(
            f"a differentiated array's values made into text (np.{fn.__name__}(..., dtype={np.dtype(dtype).name})): "
            "text carries no derivative", where=_where(),
            fix="keep the numbers as numbers; format them (`str(v)`, f-strings) where text is only shown")
    if not isinstance(x, (float, np.floating, np.ndarray)) or not _to_integers(np.asarray(x), dtype):
        return
    name = f"np.{fn.__name__}(..., dtype={np.dtype(dtype).name})"
    if tangent is None:
        jump_guard("trunc", name, x, noted=True)
    else:
        staircase_fd(np.trunc, (x,), None, tangent)
        jump_guard("trunc", name, x, tangent)


def _to_text(dtype) -> bool:
    try:
        return np.dtype(dtype).kind in "US"
    except TypeError:
        return False


_STAIR_SLOTS = {"__mod__": (operator.mod, False), "__rmod__": (operator.mod, True),
                "__floordiv__": (operator.floordiv, False), "__rfloordiv__": (operator.floordiv, True),
                "__divmod__": (builtins.divmod, False), "__rdivmod__": (builtins.divmod, True)}
_STAIR_OWNERS = (float, np.float64, np.float32)


_NOT_GIVEN = object()


def _stair_digits(args, kw):
    """The digits of a rounding `fn(x, digits)` (by position, or by keyword: `np.round(x, decimals=13)`,
    `round(x, ndigits=13)`): None where not given, _NOT_GIVEN where not an integer (no staircase known)."""
    digits = args[1] if len(args) > 1 else (kw.get("decimals", kw.get("ndigits")) if kw else None)
    return digits if digits is None or isinstance(digits, (int, np.integer)) else _NOT_GIVEN


def _stair_divisor(args):
    """The divisor of `x // b`, `x % b`, divmod, fmod (`args[1]`, its primal under duals; None where absent)."""
    b = args[1] if len(args) > 1 else None
    while type(b).__name__ == "Dual":
        b = b.primal
    return b


def staircase_text(fn, args, kw=None) -> str | None:
    """The refusal's text where fn(*args, **kw) rounds its first argument by steps finer than _STAIR of its
    size (the digits by position, or by keyword: `np.round(x, decimals=13)`, `round(x, ndigits=13)`)."""
    kind = STAIRS.get(fn)
    size = _size(args[0]) if args and kind is not None and kind != "cut" else None
    if size is None:
        return None
    digits = None
    if kind == "digits":
        digits = _stair_digits(args, kw)
        if digits is _NOT_GIVEN:
            return None
        step = 10.0 ** -int(digits) if digits else 1.0
    elif kind == "unit":
        step = 1.0
    elif kind == "hash":  # (a hash moves with every bit of the value: a memo keyed by `hash(t)`)
        step = 0.0
    else:
        b = _stair_divisor(args)
        if not isinstance(b, (int, float, np.integer, np.floating)) or not b:
            return None
        step = abs(float(b))
    if step > _STAIR * max(1.0, size):
        return None
    name = getattr(fn, "__name__", "round")
    if kind == "hash":
        return (f"hash(x) of a differentiated value {size:.6g}: a key that changes with every bit of the value and "
                f"carries no derivative (a memo keyed by it serves a value not computed from this one)")
    shown = f"{name}(x, {digits})" if digits else f"x {'//' if name == 'floordiv' else '%'} {step:g}" if name in (
        "floordiv", "mod") else f"{name}(x{', ' + format(step, 'g') if kind in ('divisor', 'modulo') else ''})"
    return (f"{shown} of a differentiated value of size {size:.6g} rounds it by steps of {step:g}, far finer than "
            f"the value: a staircase whose derivative is 0 (a remainder's is 1 between jumps that come every "
            f"step), where the value it stands for moves with the inputs (a memo keyed by a rounded value, a "
            f"value cleaned of noise)")


STAIR_FIX = ("round outside the differentiated function (or only for display), key a memo by something not "
             "computed from the inputs, or compute with the value itself")


def stair_jump_text(fn, args, kw=None, tangent=None, of_divisor: bool = False) -> str | None:
    """The refusal's text where fn(*args, **kw) (a rounding to digits, `//`, `%`, divmod, np.mod, fmod: `STAIRS`)
    takes its first argument exactly on one of its jumps: a half-step of the digits (`round(2.5)`, `round(0.25,
    1)`), a multiple of the divisor (`2.6 % 1.3`, `(v // 1.0) * v` at 2; fmod's but 0, where it is continuous).
    The step's value jumps there and one side's derivative came out silently (PyAstronomy's idlMod, sweep I).
    With `tangent` (forward mode), only entries it moves count (`of_divisor`: the divisor's tangent, of `9 % b`
    whose dividend may be an integer: `divisor_jump`). Integer rounding (floor, int) is `jump_guard`'s."""
    kind = STAIRS.get(fn)
    if kind not in ("digits", "divisor", "modulo", "fraction", "cut") or not args or STAIRS_JUDGED.get():
        return None
    x = args[0]
    while type(x).__name__ == "Dual":
        x = x.primal
    try:
        v = np.asarray(x)
        if v.dtype.kind != "f" and not (of_divisor and v.dtype.kind in "iub"):  # (integers carry no derivative:
            return None                                                          # `axis % ndim`)
        v = v.astype(float, copy=False)
    except (TypeError, ValueError):
        return None
    if kind == "digits":
        digits = _stair_digits(args, kw)
        if digits is _NOT_GIVEN:
            return None
        with np.errstate(over="ignore", invalid="ignore"):
            s = v * 10.0 ** int(digits or 0)
            hit = np.isfinite(s) & (s - np.floor(s) == 0.5)
        what = f"a half-step of its digits ({int(digits or 0)})"
    elif kind == "cut":  # (atan2(y, x): y exactly 0 with x < 0, where the angle jumps from pi to -pi)
        try:
            x = np.asarray(_stair_divisor(args), dtype=float)
        except (TypeError, ValueError):
            return None
        with np.errstate(invalid="ignore"):
            hit = (v == 0) & (x < 0)
        what = "its branch cut (y = 0 with x < 0, where the angle jumps by 2 pi)"
    elif kind == "fraction":  # (np.modf: an integer but 0, where the fraction is continuous)
        with np.errstate(invalid="ignore"):
            hit = np.isfinite(v) & (v == np.floor(v)) & (v != 0)
        what = "an integer"
    else:
        try:
            b = np.asarray(_stair_divisor(args), dtype=float)
        except (TypeError, ValueError):
            return None
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            q = v / b
            hit = np.isfinite(q) & (b != 0) & (q == np.floor(q))
            if fn in (math.fmod, np.fmod):  # (continuous through 0)
                hit &= q != 0
        what = "a multiple of its divisor"
    if tangent is not None:
        t = tangent
        while type(t).__name__ == "Dual":
            t = t.primal
        try:
            t = np.asarray(t, dtype=float)
            moving = (t != 0) if t.shape == np.shape(hit) or t.ndim <= np.ndim(hit) else np.any(
                t.reshape((t.shape[0], *np.shape(hit))) != 0, axis=0)  # (a chunk's directions, leading)
            hit = hit & moving
        except (TypeError, ValueError):
            pass
    if not np.any(hit):
        return None
    name = getattr(fn, "__name__", "round")
    shown = {"floordiv": "x // step", "mod": "x % step", "atan2": "atan2(y, x)", "arctan2": "np.arctan2(y, x)"}.get(
        name, f"{name}(x, ...)")
    return (f"{shown} of a differentiated value exactly at {what} ({np.ravel(v[hit] if np.ndim(v) else v)[:3]!s:.60}): "
            "its value jumps there, and the derivative of one side would come out")


TIES_AT_SIDES: contextvars.ContextVar = contextvars.ContextVar("overdub_ties_at_sides", default=False)
"""True while forward mode runs f at the two sides of a point (`forward.api._sides`): a tie met there is an
iteration's exit (a secant's `f1 == f0` at its root, met at every point), not the point's special case;
the sides' agreement across their distances judges what it does (`moving_tie` is off)."""

STAIRS_JUDGED: contextvars.ContextVar = contextvars.ContextVar("overdub_stairs_judged", default=False)
"""True while a function whose stair jumps were judged from the two sides runs again (`StairJump`): its
rounding takes the side of the step the value is on, and that side's derivative is the function's."""


_NO_VALUE = object()


class _Staircased:
    """A number forward mode's duals rounded by a fine step (`staircase_text`): it stands for the value in the
    tests it is made for (`P = round(P, 8); if P > Pc:` in iapws), and refuses the uses that would carry
    its zero derivative on (arithmetic with it, a memo keyed by it: `SpecialPoint`). Its text is kept on
    its instance (`why`)."""

    why = ""

    def _refused(self, *args):
        raise SpecialPoint(self.why, where=_where(), fix=STAIR_FIX)

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _refused
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __rpow__ = __neg__ = __pos__ = _refused
    __hash__ = __abs__ = __float__ = __int__ = __round__ = __trunc__ = __floor__ = __ceil__ = _refused
    # (a numpy scalar's conversions, asked of the number that stands for one: `np.round(t * 1e6).astype(
    # 'datetime64[us]')` in sunposition crashed with an AttributeError)
    astype = item = tolist = view = _refused


class StaircasedFloat(_Staircased, float):
    pass


class StaircasedInt(_Staircased, int):
    pass


_TEST_UFUNCS = frozenset({np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal,
                          np.isnan, np.isfinite, np.isinf, np.signbit})
# numpy's functions that only rearrange an array's entries (or ask its shape): a staircased array's stay marked
_REARRANGING = frozenset({np.transpose, np.reshape, np.ravel, np.squeeze, np.expand_dims, np.swapaxes, np.moveaxis,
                          np.atleast_1d, np.atleast_2d, np.shape, np.ndim, np.size, np.broadcast_to, np.tile,
                          np.repeat, np.flip, np.copy})


class StaircasedArray(_Staircased):
    """An array of forward mode's duals rounded by a fine step (`np.round(tile(a, k), 8)`, mosqito's
    `_get_rns_index`, which rounds a level before finding its band by `<`): it stands for the values in the
    tests it is made for, as `StaircasedFloat` does for a number. Comparisons give plain booleans, its entries
    are `StaircasedFloat`s, rearranging keeps it marked; anything else (arithmetic, a reduction, numpy's
    conversion `np.asarray`, `float`, a store) is refused, `SpecialPoint`: it would carry the staircase's zero
    derivative on. (Not an ndarray subclass: `np.asarray` would take it for its plain values without asking.)"""

    __slots__ = ("value", "why")
    __array_priority__ = 1e6

    def __init__(self, value: np.ndarray, why: str):
        self.value, self.why = value, why

    def _marked(self, v):
        if isinstance(v, np.ndarray) and v.dtype.kind == "f":
            return StaircasedArray(v, self.why)
        if isinstance(v, (float, np.floating)):
            out = StaircasedFloat(v)
            out.why = self.why
            return out
        return v

    shape = property(lambda self: self.value.shape)
    ndim = property(lambda self: self.value.ndim)
    size = property(lambda self: self.value.size)
    dtype = property(lambda self: self.value.dtype)
    T = property(lambda self: StaircasedArray(self.value.T, self.why))

    def __len__(self):
        return len(self.value)

    def __bool__(self):
        return bool(self.value)

    def __iter__(self):
        return (self._marked(v) for v in self.value)

    def __getitem__(self, key):
        return self._marked(self.value[key])

    def __setitem__(self, key, v):
        self._refused()

    def transpose(self, *axes):
        return StaircasedArray(self.value.transpose(*axes), self.why)

    def reshape(self, *shape, **kw):
        return StaircasedArray(self.value.reshape(*shape, **kw), self.why)

    def ravel(self, *args):
        return StaircasedArray(self.value.ravel(*args), self.why)

    def copy(self, *args):
        return StaircasedArray(self.value.copy(*args), self.why)

    def _compared(op):
        def compare(self, other):
            return op(self.value, other.value if type(other) is StaircasedArray else other)
        return compare

    __lt__, __le__, __gt__, __ge__ = (_compared(operator.lt), _compared(operator.le), _compared(operator.gt),
                                      _compared(operator.ge))
    __eq__, __ne__ = _compared(operator.eq), _compared(operator.ne)
    __hash__ = _Staircased._refused
    del _compared

    def __array__(self, *args, **kwargs):
        self._refused()

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if ufunc not in _TEST_UFUNCS or method != "__call__" or "out" in kwargs:
            self._refused()
        return ufunc(*(v.value if type(v) is StaircasedArray else v for v in inputs), **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        if func not in _REARRANGING or any(type(v) is StaircasedArray for v in kwargs.values()) or \
                any(type(v) is StaircasedArray for v in args[1:]):
            self._refused()
        return self._marked(func(args[0].value, *args[1:], **kwargs))

    def __getattr__(self, name):  # (`.sum()`, `.astype`, `.item()`: what is not a test or a rearranging)
        if name.startswith("__"):
            raise AttributeError(name)
        self._refused()


def staircased(fn, args, value, kw=None, tangent=_NO_VALUE):
    """fn(*args)'s value `value` where its first argument is a dual (or, in a tangent twin, a value moving
    by `tangent`): as it is, or marked (`_Staircased`) where the step is far finer than the value."""
    if tangent is _NO_VALUE:
        tangent = getattr(args[0], "tangent", None) if args else None
    jump = stair_jump_text(fn, args, kw, tangent)
    if jump is not None:  # (exactly on a jump that the tangent moves across: refused at once)
        raise _stair_jump()(jump, where=_where(), fix=JUMP_FIX)
    text = staircase_text(fn, args, kw)
    if text is None:
        return value
    if type(value) is np.ndarray and value.dtype.kind == "f" and STAIRS.get(fn) in ("digits", "unit"):
        return StaircasedArray(value, text)  # (an array rounded: marked as a number is)
    if not isinstance(value, (float, int, np.floating, np.integer)) or isinstance(value, bool) or \
            STAIRS.get(fn) == "modulo":
        raise SpecialPoint(text, where=_where(), fix=STAIR_FIX)  # (an array's floor, a remainder: refused at once)
    out = (StaircasedFloat if isinstance(value, (float, np.floating)) else StaircasedInt)(value)
    out.why = text
    return out


def staircase_fd(fn, args, kw=None, tangent=None) -> None:
    """Forward mode, fn (of `STAIRS`) of a value whose tangent is not zero: refused on a fine staircase, and
    exactly on one of its jumps where the tangent moves it (`stair_jump_text`)."""
    text = staircase_text(fn, args, kw)
    if text is not None:
        raise SpecialPoint(text, where=_where(), fix=STAIR_FIX)
    text = stair_jump_text(fn, args, kw, tangent)
    if text is not None:
        raise _stair_jump()(text, where=_where(), fix=JUMP_FIX)


JUMP_FIX = ("differentiate at a point off the jump, or give the function a rule (`contexts.custom_adjoint`) "
            "that knows its derivative there")


def stair_jump_guard(fn, args, kw=None, tangent=None) -> None:
    """Forward mode: refused where fn (of `STAIRS`) takes a value its tangent moves exactly at one of its
    jumps (`stair_jump_text`)."""
    text = stair_jump_text(fn, args, kw, tangent)
    if text is not None:
        raise _stair_jump()(text, where=_where(), fix=JUMP_FIX)


def divisor_jump(fn, a, b, tb=None) -> None:
    """`a % b`, `a // b`, divmod(a, b) (fn of `STAIRS`, kind "divisor" or "modulo") whose divisor b moves, exactly
    where a is a multiple of it: the remainder jumps there by b (`9 % b` at b = 4.5: 0, and 9 just past it) and
    one side's derivative came out (-2 for `9 % (2 t)` at 4.5), as at a moving dividend's jump. Forward mode
    (tb: b's tangent) refuses where tb moves it, to be judged from the two sides; reverse mode (tb None) notes it
    for forward mode to tell, refused where nothing checks it."""
    if STAIRS.get(fn) not in ("divisor", "modulo") or isinstance(a, (str, bytes)):
        return
    if tb is not None:
        while type(tb).__name__ == "Dual":
            tb = tb.primal
        if type(tb) is int and tb == 0 or not np.any(tb):
            return
    text = stair_jump_text(fn, (a, b), None, tb, of_divisor=True)
    if text is None:
        return
    text = text.replace("of a differentiated value exactly at", "whose divisor is differentiated, exactly at", 1)
    if tb is not None:
        raise _stair_jump()(text, where=_where(), fix=JUMP_FIX)
    hits = SPECIAL_HITS.get()
    if hits is None:
        raise SpecialPoint(text, where=_where(), fix=JUMP_FIX)
    hits.append((_where(), a, "=="))


def staircase_reverse(fn, args, kw=None) -> None:
    """Reverse mode, fn (of `STAIRS`) of a value the activity takes as differentiated: a fine staircase is
    noted for forward mode to tell whether the value moves (refused outside a checked recording)."""
    x = args[0] if args else None
    if _TEXTS and fn is hash:  # (`hash(repr(x))` of a differentiated number's text: refused, `text_call`)
        text_call(fn, args, kw or {}, False, None)
    if type(x).__name__ == "Dual":  # (under `hessian`: its tangent tells)
        stairs_fd(fn, args, x.tangent, kw)
        return
    if fn is builtins.int and args:  # (`int` called under another name, `fn(v)`: as `int(v)`, `int_arg`)
        int_arg(x)
    text, fix = staircase_text(fn, args, kw), STAIR_FIX
    if text is None:
        text, fix = stair_jump_text(fn, args, kw), JUMP_FIX  # (exactly on a jump: forward mode tells)
    if text is None:
        return
    hits = SPECIAL_HITS.get()
    if hits is None:
        raise SpecialPoint(text, where=_where(), fix=fix)
    hits.append((_where(), args[0], "=="))


def stairs_fd(fn, args, tangent, kw=None, value=_NO_VALUE):
    """The tangent twin, before `key = round(t, 10)` (or int) whose result carries no tangent: refused on
    a fine staircase where t's tangent is not zero (`staircase_fd`); int() at its jumps too. Given the
    statement's `value`, returned, marked where a rounding's fine staircase would be refused
    (`staircased`: a number or array that stands for t in tests)."""
    while type(tangent).__name__ == "Dual":
        tangent = tangent.primal
    if tangent is None or (type(tangent) is int and tangent == 0) or not np.any(tangent):
        return None if value is _NO_VALUE else value
    if fn is builtins.int and args:
        from ..rules.builtins import _check_int
        _check_int(args[0], known=True)
    if value is not _NO_VALUE and STAIRS.get(fn) in ("digits", "unit") and fn is not builtins.int:
        return staircased(fn, args, value, kw, tangent)
    staircase_fd(fn, args, kw, tangent)
    return None if value is _NO_VALUE else value


def int_arg(x):
    """The argument of `int(a)` for an active `a` (its primal): refused where int() jumps (a float that is
    a nonzero integer), where the integer would carry the value and drop its derivative."""
    from ..rules.builtins import _check_int
    _check_int(x)
    if (type(x) is float or type(x) is np.float64) and SPECIAL_HITS.get() is not None:
        # (reverse mode: a nonzero integer is noted for forward mode to tell whether it moves, as a step's
        # jump is, `jump_guard`; forward mode's own int() knows its tangent)
        jump_guard("trunc", "int()", x)
    return x


# -- a differentiated number's text, parsed back ----------------------------------------------------------
# Text is a constant to every engine, so `float(f"{x:.17g}")` or `float(repr(x))` would be a constant:
# derivative 0, silently. The lowering marks where a differentiated value becomes text (str, repr, format,
# an f-string's field: `__od_text__`, `__od_fmt__`) and every float/int/complex/Decimal/Fraction of a
# value that is not a differentiated number (`__od_parsed__`); a parse of a remembered text (or of a
# number in it) is refused. Remembered across calls, the most recent texts only.

class TextRoundTrip(OverdubError):
    """A differentiated number was formatted into text and that text parsed back into a number."""


_TEXTS: dict[str, None] = {}
TEXTS_MADE = _TEXTS  # (the same dict: a caller's cheap test that any text was remembered)
_TEXTS_KEPT = 1024
depth.on_start(_TEXTS.clear)  # (one outermost derivative call's texts: an earlier call's values are constants now,
                              # and the same number's text made of a constant later was refused: geomdl's knots)
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:inf|nan)\b", re.I)


def _remember(t: str) -> None:
    _TEXTS[t] = None
    if len(_TEXTS) > _TEXTS_KEPT:
        del _TEXTS[next(iter(_TEXTS))]


def _kept(v):
    """v, made by a str method of a differentiated number's text: a text of it again (a str), or a list or
    tuple of such (`t.split(".")`); anything else (a count, a truth, an index) as it is."""
    if type(v) is str:
        return DerivedText(v)
    if type(v) in (list, tuple):
        return type(v)(DerivedText(e) if type(e) is str else e for e in v)
    return v


def _carrying(name):
    method = getattr(str, name)

    def carried(self, *args, **kwargs):
        return _kept(method(self, *args, **kwargs))
    carried.__name__ = carried.__qualname__ = name
    return carried


class DerivedText(str):
    """A differentiated number's text (`text`), and every text a str method or operator makes of it: its
    slices, pieces, edits and concatenations (`f"{x:.9f}".rstrip("0")`, `"9" + t`, `t[3:]`, `t.split(".")`),
    so that a parse of any of them is refused (`parsed`). Remembering the texts made (`_TEXTS`) caught only
    those parsed as they were made: geodepy's `dec2hp`/`hp2dec`, which edit the digits before parsing them,
    gave 0 in both modes, silently (session 70, sweep S). A str in every way but its class."""

    __slots__ = ()

    def __radd__(self, other):  # (`"9" + t`: Python asks a subclass's reflected method first)
        if type(other) is str or isinstance(other, str):
            return DerivedText(str.__add__(other, self))
        return NotImplemented

    def __format__(self, spec):
        return DerivedText(str.__format__(self, spec))

    def __iter__(self):  # (its characters, one by one: `"".join(c for c in t if c.isdigit())`)
        return iter([DerivedText(c) for c in str.__str__(self)])

    def __reduce__(self):  # (pickled, copied: a plain str; its remembered value stays in `_TEXTS`)
        return (str, (str.__str__(self),))


for _name in ("__add__", "__mul__", "__rmul__", "__mod__", "__getitem__", "capitalize", "casefold", "center",
              "expandtabs", "format", "format_map", "join", "ljust", "lower", "lstrip", "partition", "removeprefix",
              "removesuffix", "replace", "rjust", "rpartition", "rsplit", "rstrip", "split", "splitlines", "strip",
              "swapcase", "title", "translate", "upper", "zfill"):
    setattr(DerivedText, _name, _carrying(_name))
del _name


def text_join(obj, items):
    """`obj.join(items)` of items that may be a differentiated number's texts (`DerivedText`): for a str
    separator, the text joined is one of the number's too where the separator or an item is (str.join makes a
    plain str: `"".join(reversed(t))` parsed back gave 0); anything else's `join`, as it is."""
    if type(obj) is not str and type(obj) is not DerivedText:
        return obj.join(items)
    items = items if type(items) in (list, tuple) else list(items)
    y = str.join(obj, items)
    if type(obj) is DerivedText or any(type(e) is DerivedText for e in items):
        return DerivedText(y)
    return y


def text(s, *shown):
    """`str(x)`, `repr(x)`, `format(x, ...)` of a differentiated x: remembered (and the numbers in it), and
    given as a `DerivedText`, whose edits are texts of it too; not where x, given (`shown`), is a string or an
    integer (no number's text: a sequence `str(seq)`)."""
    if shown and all(_exact(v) for v in shown):
        return s
    if isinstance(s, str):
        _remember(s.strip())
        for number in _NUMBER.findall(s):
            _remember(number.lstrip("+"))
        return s if type(s) is DerivedText else DerivedText(s)
    return s


def _savetxt(fname, X, *args, **kwargs):
    """np.savetxt of differentiated values (run on their values by the rules below): the numbers written are
    remembered as their text, and a file's name, so that `np.loadtxt` of them is refused (a round trip gave 0
    in both modes, gen22 W5)."""
    np.savetxt(fname, X, *args, **kwargs)
    if hasattr(fname, "getvalue"):
        written = fname.getvalue()
        text(written.decode(errors="replace") if isinstance(written, bytes) else written)
    elif isinstance(fname, (str, os.PathLike)):
        _remember(os.fspath(fname).strip())


registry.frule(np.savetxt)(lambda tangents, *args, **kwargs: (_savetxt(*args, **kwargs), None))
registry.rrule(np.savetxt)(lambda *args, **kwargs: (_savetxt(*args, **kwargs), lambda dy: (None,) * len(args)))


def texts_mapped(fn, *iterables):
    """`map(str, xs)` of values that may be differentiated (`" ".join(map(str, x))`, parsed back by
    `np.fromstring`: 0 in reverse mode, silently): each text remembered as `str(x)`'s is (`text`), as map makes
    it."""
    return map(lambda *values: text(fn(*values), *values), *iterables)


def printed(primal_of, *values, **options):
    """`print(x, file=buffer)` of values that may be differentiated: their values printed (`primal_of`, the
    engine's `__od_primal__`: a dual's), and their texts remembered, as `str(x)`'s are (`text`: print writes them
    in C, and `np.fromstring(buffer.getvalue(), sep=" ")` gave 0 in reverse mode)."""
    values = [primal_of(v) for v in values]
    for v in values:
        text(str(v), v)
    print(*values, **options)


def text_of(s, *values):
    """`fmt.format(x, ...)` of values some of which may be differentiated: the text remembered (`text`) where
    one of them is a number that is not an integer (`"{}-12-31".format(year - 1)` of a default parameter
    holding an int is a date's text, whose "2013" parsed back by pandas was refused)."""
    if any(not _exact(v) for v in values):
        return text(s)
    return s


def text_mod(left, right) -> None:
    """`left % right` of a differentiated right, where left, a variable, holds a format (`fmt % x`, which the
    activity could not read as text): x's text remembered (`text_of`), so that its parse is refused (0 in
    reverse mode, silently); where left is a number (`n % x`, a remainder), its jump at a multiple of x
    (`divisor_jump`)."""
    if isinstance(left, str):
        values = right if type(right) is tuple else tuple(right.values()) if type(right) is dict else (right,)
        text_of(left % right, *values)
    elif type(left) is not bytes:
        divisor_jump(operator.mod, left, right)


def _exact(v) -> bool:
    return isinstance(v, (numbers.Integral, str, bytes, type)) or v is None or type(v) is tuple and all(map(_exact, v))


def formatted(value, conversion: int, spec: str = ""):
    """An f-string's field `{x!r:spec}` of a differentiated x (its primal), as text, remembered; the text
    of a value that carries no derivative whatever its origin (an integer, a string: `len(x)` in an error
    message) is not (remembered, its parse elsewhere, `float("3")`, was refused)."""
    exact = _exact(value)
    if conversion == ord("s"):
        value = str(value)
    elif conversion == ord("r"):
        value = repr(value)
    elif conversion == ord("a"):
        value = ascii(value)
    return format(value, spec) if exact else text(format(value, spec))


def remembered_text(args) -> bool:
    """One of args is the text of a differentiated number (made since the outermost derivative call began), as
    a str or encoded (bytes: `text.encode()`, a digest of it, `texts_through`)."""
    return bool(_TEXTS) and any(_remembered(a) for a in args)


def _remembered(a, derived: bool = True) -> bool:
    if type(a) is DerivedText:
        if derived:
            return True
        a = str.__str__(a)  # (as made: a piece of it, `c != "."`, is no cache's key)
    if type(a) is not str:
        if type(a) is not bytes and type(a) is not bytearray:
            return False
        a = a.decode("latin-1")  # (every byte a character: the number's digits, a digest's bytes)
    # (and a number's text inside a longer one, `f"{lat} 11.575"`: one with a point or an exponent, `48.1`; digits
    # alone, `1` of `"%d" % x`, are in every other text: scipy's `scheme == "1-sided"` was refused, sweep T)
    return a.strip() in _TEXTS or any(n.lstrip("+") in _TEXTS for n in _NUMBER.findall(a)
                                      if any(c in n for c in ".eEnN"))


TEXT_TYPES = (str, bytes, DerivedText)
"""The types of texts `text_compared` judges (the callers' cheap test: `type(a) in TEXT_TYPES`)."""


def text_compared(a, b, op: str) -> None:
    """Before `a == b` (or `!=`) of two texts: refused where they are equal and one is the text of a
    differentiated value (`repr(k) != self._key`, a cache keyed by it, whose hit reused a table of plain numbers:
    0 in both modes, sweep P), or a digest of such a text (colossus' check of its cosmology, `md5(('%.6f' %
    Om0).encode()).hexdigest() != self._key`: `texts_through`). The text moves with the value, so the test is a
    special point at the value, and its branch's derivative need not be the function's."""
    if op in ("==", "!=") and (type(b) is type(a) or isinstance(a, str) and isinstance(b, str)) and a == b \
            and bool(_TEXTS) and (_remembered(a, False) or _remembered(b, False)):
        raise SpecialPoint(
            f"the text of a differentiated value compared equal to another text ({a!r}, `{op}`): a cache keyed "
            "by the text would be taken for current, its stored values carrying no derivative", where=_where(),
            fix="key the cache by the value itself (`k != self._k`), or clear it before differentiating")


# -- a differentiated number's text, hashed --------------------------------------------------------------
# A digest of the text carries the value as the text does, without its digits: a cache checked against the
# digest of its key's text would be taken for current (colossus' cosmology tables, 0 in forward mode). The
# hash objects fed such text are remembered by id (held, so the ids stay theirs), and so are their digests:
# a digest's equality with another is then judged as the text's is (`text_compared`).

HASH_TYPES = frozenset(type(hashlib.new(name)) for name in hashlib.algorithms_guaranteed)
_HASHED: dict[int, object] = {}
depth.on_start(_HASHED.clear)


def texts_through(fn, args, kwargs, y) -> None:
    """After a C call `fn(*args, **kwargs)` that gave y, while a differentiated number's text was made (both
    modes' calls of C functions on plain values): a hash object made or updated with such text
    (`hashlib.md5(t.encode())`, `h.update(t)`) remembered, and what one such gives (`hexdigest()`, `digest()`,
    `copy()`) too."""
    owner = getattr(fn, "__self__", None)
    if type(y) is str and (type(owner) is str or type(owner) is DerivedText) and getattr(fn, "__name__", "") == "join" \
            and args and type(args[0]) in (list, tuple) and any(type(e) is DerivedText for e in args[0]):
        _remember(y.strip())  # (`"".join(pieces)` of a number's text, run by an interception context: its text;
        return                # the code's own lowered form keeps it a `DerivedText`, `text_join`)
    hashing = type(owner) in HASH_TYPES
    if not hashing and type(y) not in HASH_TYPES:  # (every other C call: no text scanned)
        return
    held = hashing and _HASHED.get(id(owner)) is owner
    if not held and not remembered_text((*args, *kwargs.values())):
        return
    if type(y) in HASH_TYPES:  # (`hashlib.md5(text)`, `hashlib.new("sha1", text)`, `h.copy()`)
        _HASHED[id(y)] = y
        if len(_HASHED) > _TEXTS_KEPT:
            del _HASHED[next(iter(_HASHED))]
    elif hashing and not held:  # `h.update(text)`
        _HASHED[id(owner)] = owner
    elif held and type(y) in TEXT_TYPES:  # `h.hexdigest()`, `h.digest()`
        _remember((y if type(y) is str else y.decode("latin-1")).strip())  # (as `_remembered` looks it up)


def parsed(s):
    """The argument of float/int/complex/Decimal/Fraction and numpy's parsers (`np.float64(s)`,
    `np.fromstring`, `np.loadtxt`, `texts.astype(float)`): refused when it is, or holds (a list, tuple or
    array of texts; a number inside a text, `str(t) + "+1j"`; an `io.StringIO` or a file `np.savetxt` wrote
    them into), a remembered text."""
    if _TEXTS and type(s) is not str and hasattr(s, "getvalue") and callable(s.getvalue):
        text_in = s.getvalue()  # (`np.loadtxt(io.StringIO(f"{x} 1.0"))`: 0 in forward mode, gen22 W5)
        parsed(text_in.decode(errors="replace") if isinstance(text_in, bytes) else text_in)
        return s
    if _TEXTS and isinstance(s, os.PathLike):
        s = os.fspath(s)
    derived = type(s) is DerivedText
    if derived:
        s = str.__str__(s)  # (a text of a differentiated number, edited: refused below)
    if type(s) is not str:
        if (_TEXTS and type(s) in (list, tuple) or type(s) is np.ndarray and s.dtype.kind in "US") and _holds_text(s, 0):
            raise TextRoundTrip(
                "a differentiated number was formatted into text and parsed back into numbers: text carries no "
                "derivative, so the result would be a constant", where=_where(),
                fix="keep the numbers, or treat the function as a primitive with a rule (`@contexts.custom_adjoint`)")
        return s
    if _TEXTS and (derived or remembered_text((s,))) or "Dual(" in s or "Tracer(" in s:
        # (an engine value's repr, `f"{x!r}"` of a dual or tracer: never a number's text)
        raise TextRoundTrip(
            f"a differentiated number was formatted into text ({s.strip()!r}) and parsed back into a number: "
            "text carries no derivative, so the result would be a constant", where=_where(),
            fix="keep the number (round with `round(x, k)` or `np.round` if rounding was meant), or treat the "
                "function as a primitive with a rule (`@contexts.custom_adjoint`)")
    return s


def _holds_text(v, depth: int) -> bool:
    if type(v) is str or type(v) is DerivedText:
        return remembered_text((v,)) or "Dual(" in v or "Tracer(" in v
    if type(v) is np.ndarray:
        return v.dtype.kind in "US" and v.size <= 100_000 and any(_holds_text(str(e), depth) for e in v.flat)
    if depth < 3 and type(v) in (list, tuple):
        return any(_holds_text(e, depth + 1) for e in v)
    return False


# the interception contexts (forward mode's duals, sparsity's tracers) see these as calls
_MAKERS = (str, repr, format)
# numpy's parsers of text into numbers (`np.float64(s)`, `np.loadtxt(lines)`), and its array makers, which
# parse given a dtype (`np.array(texts, dtype=float)`); a str array's `astype` is asked by `parsed_astype`
_NUMPY_PARSERS = (np.float64, np.float32, np.float16, np.longdouble, np.complex128, np.complex64, np.fromstring,
                  np.loadtxt, np.genfromtxt)
_DTYPED = frozenset(id(f) for f in (np.array, np.asarray, np.asanyarray, np.fromiter))
# Python's own parsers of source text: a differentiated number's text run as code (`eval("R(" + str([x]) + ")",
# env)`, impedance's circuits; `ast.literal_eval(str(x))`, `exec("y = " + repr(x), d)`) came back a constant
_SOURCE_PARSERS = (eval, exec, compile, ast.literal_eval, overdub.ops.source_text)
# the C functions making an integer of text (`hash(repr(x))`, `zlib.crc32(t.encode())`): a cache checked
# against it would be taken for current, and an integer is no text `text_compared` judges
_CHECKSUMS = (zlib.crc32, zlib.adler32, binascii.crc32, binascii.crc_hqx)
TEXT_IDS = frozenset(id(f) for f in (*_MAKERS, hash, *_CHECKSUMS, float, int, complex, Decimal, Fraction, *_NUMPY_PARSERS,
                                     *_SOURCE_PARSERS)) | _DTYPED


def text_call(fn, args, kwargs, perturbed: bool, value):
    """An interception context's call of fn (id in TEXT_IDS): the text of a perturbed value (`value` gives
    what to format in its place) made and remembered; else the argument of a parse checked, and None
    returned (the context goes on with the call)."""
    if fn in _MAKERS:
        if not perturbed:
            return None
        return text(fn(*map(value, args), **kwargs))
    if fn is hash or fn in _CHECKSUMS:
        if remembered_text(args):  # (its int is no text the equality tests judge, `text_compared`: refused here)
            raise TextRoundTrip(
                f"the text of a differentiated number was hashed (`{fn.__name__}(...)`): a cache checked against it "
                "would be taken for current at the same point, its stored values carrying no derivative",
                where=_where(), fix="key the cache by the value itself, or clear it before differentiating")
        return None
    if args and (id(fn) not in _DTYPED or kwargs.get("dtype") is not None):
        parsed(args[0])
    return None


def parse_check(fn, args, kwargs) -> None:
    """Where a call runs (reverse mode's `call`, a tangent twin's): a parse of a remembered text by numpy's
    parsers or the builtins (`np.float64(s)`, `np.array(texts, dtype=float)`, `texts.astype(float)`)
    refused. Cheap when no differentiated number's text was made."""
    if _TEXTS:
        if id(fn) in TEXT_IDS and fn not in _MAKERS:
            text_call(fn, args, kwargs, False, None)
        elif type(fn) is _BUILTIN_METHOD:
            parsed_astype(fn, args)


_BUILTIN_METHOD = type([].append)


def parsed_astype(fn, args) -> None:
    """An interception context's call of a str array's bound `astype` (or `ndarray.astype(a, ...)`): the
    texts it parses checked (`parsed`)."""
    if _TEXTS and getattr(fn, "__name__", None) == "astype":
        obj = getattr(fn, "__self__", None)
        if type(obj) is not np.ndarray and args:
            obj = args[0]
        if type(obj) is np.ndarray and obj.dtype.kind in "US":
            parsed(obj)


class EagerIterationError(OverdubError):
    """A generator run eagerly (reverse mode's generators and generator expressions) yielded what only a
    lazy run can give: the same changeable object more than once (changed between the yields)."""


# values no one changes in place (a yielded one may come twice)
_UNCHANGEABLE = frozenset({float, int, complex, bool, str, bytes, type(None), Fraction, Decimal, np.float64,
                           np.float32, np.int64, np.int32, np.bool_, np.complex128, range, type, type(...), slice,
                           frozenset, type(NotImplemented),
                           # functions (multipledispatch's `dispatch_iter` yields one function registered under
                           # several signatures): what a consumer reads of one is its code, not a state
                           types.FunctionType, types.BuiltinFunctionType, types.BuiltinMethodType})
# types whose values are unchangeable when the test says so, added by the modes above: forward mode's Dual
# (a perturbed number yielded twice is one dual; a perturbed array is an array)
UNCHANGEABLE_WHEN: dict[type, Callable[[Any], bool]] = {}


def eager(items: list):
    """The iterator over a generator's items, run eagerly (`__od_eager__`): refused when one changeable
    object (an array, list, dict or object; also inside a yielded tuple) is yielded twice. Python's lazy
    generator hands it over before changing it again (a buffer reused, pygeodesy's `Fsum` reset and
    multiplied per item), so its consumer reads each state; the eager run gives the last state every time."""
    return iter(tuple(eager_items(items)))  # (a tuple's iterator: what `eager_guard` tells from a list's)


def eager_items(items: list) -> list:
    """A generator expression's items, computed eagerly, as a list (`__od_eager_items__`: the lowering's
    generator expressions outside reverse mode, the forward tangent twin's), checked as `eager` checks."""
    seen = None
    for v in items:
        t = type(v)
        if t in _UNCHANGEABLE:
            continue
        now = set()  # (one object twice in one yield, `(zero, zero, one)`: seen at one time, as Python's consumer
        for w in (v if t is tuple else (v,)):  # sees it: optiland's frames, refused before; sweep U)
            tw = type(w)
            if tw in _UNCHANGEABLE or tw is tuple or isinstance(w, np.generic) or (
                    tw in UNCHANGEABLE_WHEN and UNCHANGEABLE_WHEN[tw](w)):
                continue
            if seen is None:
                seen = set()
            elif id(w) in seen:
                raise EagerIterationError(
                    f"a generator yielded one {type(w).__name__} more than once: reverse mode runs generators "
                    f"eagerly, so the consumer would see its last state each time, not the state of each yield",
                    where=_where(),
                    fix="yield a copy or a new object each time (`yield buf.copy()`), or build the list of "
                        "values first")
            now.add(id(w))
        if now:
            seen |= now
    return items


def _where() -> str:
    """`file:line in name` of the innermost frame outside the engine (a twin's: the user's code)."""
    frame = outside_engine(sys._getframe(2))
    if frame is None:
        return "?"
    return f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_qualname}"


_TUPLE_ITERATOR = type(iter(()))


def eager_guard(it, name: str, value=None) -> None:
    """The function draws from `it` (a loop, `next`) while changing in place `name`, which it passed to the
    call that made `it` (`for v in gen(out): out.append(v)`): refused when that call was a generator run
    eagerly (it read `name` before the changes, where Python's generator reads it between items). The
    eager run's iterator is a tuple's (a call returning `iter(a_tuple)` is refused too: rare, loud). A
    number, text or tuple (`value`, what `name` holds) changes in no place: `n += 1` rebinds it."""
    if type(it) is _TUPLE_ITERATOR and not _unchangeable(value):
        raise EagerIterationError(
            f"drawing from a generator while `{name}`, which was passed to it, may change in place (a loop over "
            f"it or `next` changing `{name}`, or a callee given both): reverse mode runs generators eagerly, so the "
            f"generator read `{name}` before the changes",
            where=_where(),
            fix="build the values in the loop itself, or pass the generator a copy")


def lazy_stamp(*held, items=()) -> None:
    """`__od_lazy_stamp__(p, q, items=(d,))` as a lazy iterator over p, q and an item of d is made
    (`lower._lazy_gaps`): nothing here; reverse mode's own (`contexts.ad.helpers.lazy_stamp`) keeps them with the
    counter of changes."""


def lazy_guard(stamp, name: str) -> None:
    """`__od_lazy_guard__` before a lazy iterator's use or after a call it is handed to (`lower._lazy_gaps`): nothing here; reverse mode's
    own (`contexts.ad.helpers.lazy_guard`) refuses where what it holds changed since it was made."""


def iter_guard(obj, name: str) -> None:
    """`for v in obj` whose body changes obj (`__od_iter_guard__`): nothing here; reverse mode's own
    (`contexts.ad.helpers.iter_guard`) refuses an object it would iterate eagerly."""


def _unchangeable(v) -> bool:
    if type(v) is tuple:
        return all(_unchangeable(e) for e in v)
    return type(v) in _UNCHANGEABLE or isinstance(v, np.generic)


class SpecialPoint(OverdubError):
    """A differentiated value compared equal to a value that does not depend on the inputs (`x == 0`,
    `c in (0.0, 1.0)`, scipy.stats' `_lazywhere(c == 0, ...)`): at such a point code takes a special case,
    and the derivative of the special case (often of a formula without x: zero) need not be the
    function's (the gradient of genextreme's or skewnorm's log-density in its shape at 0 came out 0).
    So is a tie of an ordering (`if q <= 0.5` at q == 0.5 exactly, fluids' Crane tee): a branch boundary, where
    the derivative of the branch taken is one-sided (0.18 where central differences give 0.10)."""


class StairJump(SpecialPoint):
    """A step (a rounding to digits, a remainder, a floor division, floor, np.sign: `stair_jump_text`,
    `jump_guard`) taking a moving value exactly on one of its jumps, or a rule comparing duals tied where they
    part (`moving_tie`: a kink, under an outer derivative). What the code computes from it may still be
    continuous there: a range reduction (`q = round(x / 90); r = x - 90 * q`, then the quadrant's sine:
    geographiclib's sincosde at x = 135) is, where round jumps. Forward mode's entry points judge the function
    from the two sides of the point (`contexts.forward.api.sides_disagree`): where it is continuous, the
    point's own answer (rerun with the check off) where its derivative equals the mean of the two sides',
    else at a kink whose sides agree the mean of the two sides' answers; else this refusal stands."""


class SpecialCase(StairJump):
    """A moving value found equal to one that does not move (`if angle == 0: return q`, `x in (0.0, 1.0)`), or
    two values that meet there and part: the code takes a special case at the point, whose derivative need not
    be the function's. Judged from the two sides of the point as a step's jump is (`StairJump`): where the
    function is continuous through it, the special case's own derivative where it is the sides' mean, else
    the sides' mean where the sides agree along two directions; a special value that is not the sides' limit
    (`if x == 0: return 2.0` beside a formula tending to 1) is refused."""


_EQUALITIES = frozenset({"==", "!=", "in", "not in", "all=="})


class SidesTaken(StairJump):
    """Reverse mode's check found a step's jump or a kink (`StairJump`) where forward mode judged the function
    continuous from the two sides of the point: its derivative there is the mean of the two sides' (a kink's
    slopes), which reverse mode's one pass, through the side the step took, need not give. `gradient` and
    `value_and_gradient` answer with the mean of the gradients at the two sides (`contexts.compose`); the
    other reverse-mode entry points refuse."""


from ..rules.ties import CONE_TIP, SINGULAR_STILL, KINK_MARK, KINK_TIE, MOVING_TIE, STEP_JUMP, SPECIAL_HITS, _differ, lex_keys, lex_parting, lex_tied, parting_unsorted, plain  # noqa: E402  (defined below the rules: a sort's adjoint notes its ties)

CHECK_SPECIAL: list = []
"""[check(f, args, kwargs, hits)]: set by `contexts.compose` (above both modes): runs f by forward mode
along random directions, which refuses (`SpecialPoint`) where a compared value moves."""


class OwnTestUnderForward(OverdubError):
    """A class's own Python test methods (`__bool__`, `__eq__`, `__lt__`, `__contains__`) met by reverse mode's
    pass under an outer forward pass (`hessian`'s forward over reverse): the pass runs them natively, on the
    dual numbers the object holds, where `isinstance(self.v, float)` answers for the dual and the method
    can take another branch than on the value. Refused; `hessian` then takes forward over forward, which
    runs them as code."""


_HEAPTYPE = overdub.ops.HEAPTYPE  # (a class made by a class statement)
_TEST_NAMES = {"==": ("__eq__",), "!=": ("__ne__", "__eq__"), "<": ("__lt__", "__gt__"), "<=": ("__le__", "__ge__"),
               ">": ("__gt__", "__lt__"), ">=": ("__ge__", "__le__"), "in": ("__contains__", "__iter__", "__eq__", "__getitem__"),
               "not in": ("__contains__", "__iter__", "__eq__", "__getitem__")}  # (the sequence protocol last)
_TRUTH_NAMES = ("__bool__", "__len__")


def users_class(kind: type) -> bool:
    """kind is a class of the user's or a library's (made by a class statement), not the engines' nor a value
    class the rules know (`rules.leaves`): its Python special methods are its own code."""
    return bool(kind.__flags__ & _HEAPTYPE) and not is_engine_class(kind) and not value_class(kind)


def inverted(x):
    """The operand of `~x` where x may carry a derivative (`__od_inverted__`), refused in reverse mode where
    its class has an `__invert__` of its own: that code runs natively and its result was taken for a
    constant (`~M(t)` gave 0 for -6.25: svgelements' inverse matrix). Forward mode follows it."""
    if users_class(type(x)) and type(getattr(type(x), "__invert__", None)) is types.FunctionType:
        raise OwnMethodStores(
            f"reverse mode does not differentiate `~` of a {type(x).__name__} (its class's own `__invert__`)",
            where=_where(), fix="call the method by name (`obj.__invert__()`: a call, which reverse mode follows), "
                                "or use forward mode")
    return x


def own_test_method(a, b, op: str):
    """(class, method): a Python method of an operand's own class that Python runs for the test `a op b`
    (`__eq__`, `__lt__`, `__contains__`, ...), or None (numbers, arrays, the engines' and value classes)."""
    for obj in (a, b):
        kind = type(obj)
        if not users_class(kind):
            continue
        for name in _TEST_NAMES.get(op, ()):
            method = getattr(kind, name, None)
            if type(method) is types.FunctionType:
                return kind, method
    return None


class OwnMethodStores(OverdubError):
    """Reverse mode met a class's own method that Python runs natively for a test or an operator (`x in obj`,
    `obj == x`, `del obj[x]`, `obj + x` whose result is dropped) handed a differentiated value, and the method
    stores into objects: what it stores would carry no derivative (0 came out)."""


# what a method may change objects by: the opcodes storing into an attribute, an item, a global or a cell,
# and calls of the mutating methods of lists, dicts, sets and arrays, of setattr and delattr
_STORE_OPS = frozenset({"STORE_ATTR", "STORE_SUBSCR", "DELETE_ATTR", "DELETE_SUBSCR", "STORE_GLOBAL",
                        "STORE_DEREF", "STORE_SLICE"})
MUTATOR_NAMES = frozenset({"append", "extend", "insert", "update", "setdefault", "add", "pop", "popitem", "remove",
                           "discard", "clear", "sort", "reverse", "fill", "put", "itemset", "__setitem__",
                           "__setattr__", "__delitem__", "__delattr__", "setattr", "delattr", "appendleft",
                           "extendleft", "copyto", "place", "putmask"})
_MUTATOR_NAMES = MUTATOR_NAMES
_STORES: dict = {}  # (id(code), id(cls), depth) -> (code, cls, whether it may store)


def stores_into_objects(fn, cls=None, depth: int = 1) -> bool:
    """fn (its nested functions, and the Python functions it calls by a global name or as methods of its first
    argument's class, `depth` levels down) stores what it derives from its arguments into an object it did not
    make, by an attribute or item store, a deletion or a mutating method (`_scan_stores`): run natively, such
    a method changes state reverse mode does not record. Cached per code object, class and depth."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return False
    key = (id(code), id(cls), depth)
    found = _STORES.get(key)
    if found is not None and found[0] is code and found[1] is cls:
        return found[2]
    if len(_STORES) > 4096:  # (the entries keep their code objects: bounded)
        _STORES.clear()
    _STORES[key] = (code, cls, False)  # (a recursive method: no store found on the way round)
    result = _scan_stores(code, fn, cls, depth)
    _STORES[key] = (code, cls, result)
    return result


def _scan_stores(code, fn, cls, depth) -> bool:
    """Whether the definition behind code stores into an object it did not make itself: an attribute or item
    store, a deletion, or a mutating method's call on a parameter, a global or a value it was handed (a list
    it made, `objs = []; objs.append(v)`, is its own); `global`/`nonlocal` stores; the same down the Python
    functions it calls by a global name or as its class's methods. Without source: any store at all."""
    from overdub.passes import get_source
    try:
        tree = get_source(code, getattr(fn, "__globals__", None)).tree
    except Exception:  # (no source: its bytecode's stores and mutating calls, on any object)
        import dis
        return any(ins.opname in _STORE_OPS or ins.opname in ("LOAD_ATTR", "LOAD_METHOD", "LOAD_GLOBAL")
                   and ins.argval in _MUTATOR_NAMES for ins in dis.get_instructions(code))
    glob = getattr(fn, "__globals__", {})
    rebound = {m.id for m in ast.walk(tree) if isinstance(m, ast.Name) and isinstance(m.ctx, (ast.Store, ast.Del))}
    values: dict = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                for m in ast.walk(t):
                    if isinstance(m, ast.Name) and isinstance(m.ctx, ast.Store):  # (not `out` of `out[i] = v`)
                        values.setdefault(m.id, []).append(n.value if t is m else None)
        elif isinstance(n, (ast.For, ast.comprehension, ast.NamedExpr, ast.AnnAssign)):
            for m in ast.walk(n.target):
                if isinstance(m, ast.Name):
                    values.setdefault(m.id, []).append(
                        getattr(n, "value", None) if isinstance(n, (ast.NamedExpr, ast.AnnAssign)) else None)
        elif isinstance(n, ast.withitem) and n.optional_vars is not None:
            for m in ast.walk(n.optional_vars):
                if isinstance(m, ast.Name):
                    values.setdefault(m.id, []).append(None)
        elif isinstance(n, ast.arg):
            values.setdefault(n.arg, []).append(None)
    # the names that may hold an object from outside: the parameters, what they hold (`d = self.data`),
    # loop and `with` targets, and names bound to those; a call's result is taken for a new object (xarray's
    # `result = self._replace(...)` filled in), a global for the outside
    aliases = {name for name, vs in values.items() if any(v is None for v in vs)}
    changed = True
    while changed:
        changed = False
        for name, vs in values.items():
            if name not in aliases and any(_base_name(v) in aliases for v in vs if v is not None):
                aliases.add(name)
                changed = True

    def outside(expr) -> bool:  # (the object an attribute or item store changes)
        base = _base_name(expr)
        return base is None or base in aliases or base not in values

    # the names computed from the parameters (what a store must carry to matter: `self.v = o`, not a counter
    # `Table.lookups += 1`)
    params = {a.arg for a in ast.walk(tree.args) if isinstance(a, ast.arg)} if hasattr(tree, "args") else set()
    derived = set(params)
    changed = True
    while changed:
        changed = False
        for name, vs in values.items():
            if name not in derived and any(v is not None and _reads(v) & derived for v in vs):
                derived.add(name)
                changed = True

    def carries(value, target=None) -> bool:
        if value is None:
            return True
        names = _reads(value)
        if target is not None and isinstance(value, ast.BinOp) and ast.dump(value.left) == ast.dump(target):
            names = _reads(value.right)  # (`self.n += 1`: a counter)
        return bool(names & derived)

    first = None
    if isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef)) and tree.args.args:
        first = tree.args.args[0].arg

    def stores(n, fresh) -> bool:
        """n (a statement's own parts) changes an outside object; `fresh`: the names bound to a call's result or a
        literal on the way here (`variable = variable.copy(); variable.attrs = a`: its own copy)."""
        def out(expr):
            base = _base_name(expr)
            return base not in fresh and outside(expr)
        for m in ast.walk(n) if not isinstance(n, ast.stmt) else _own_parts(n):
            if isinstance(m, (ast.Global, ast.Nonlocal)):
                if any(name in rebound for name in m.names):  # (a declaration only read under, `global EPS;
                    return True                                # return EPS`, stores nothing: Geometry3D)
                continue
            if isinstance(m, ast.Delete):
                if any(isinstance(t, (ast.Attribute, ast.Subscript)) and out(t) for t in m.targets):
                    return True
            elif isinstance(m, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = m.targets if isinstance(m, ast.Assign) else [m.target]
                value = m.value if not isinstance(m, ast.AugAssign) else ast.BinOp(left=m.target, op=m.op, right=m.value)
                if any(isinstance(t, (ast.Attribute, ast.Subscript)) and out(t) and carries(value, t) for t in targets):
                    return True
            elif isinstance(m, ast.Call):
                f = m.func
                own = (getattr(cls, f.attr, None) if cls is not None and isinstance(f, ast.Attribute)
                       and isinstance(f.value, ast.Name) and f.value.id == first else None)
                if type(own) is types.FunctionType and f.attr in _MUTATOR_NAMES:
                    # (`self.add(other)` of a class's own `add`, py-ballisticcalc's NamedTuple Vector: its code, as
                    # the helper's below, not a set's `add`)
                    if depth <= 0 or stores_into_objects(own, cls, depth - 1):
                        return True
                elif isinstance(f, ast.Attribute) and f.attr in _MUTATOR_NAMES and out(f.value) and (
                        any(carries(a) for a in m.args) or any(carries(k.value) for k in m.keywords)):
                    return True
                if isinstance(f, ast.Name) and f.id in ("setattr", "delattr"):
                    return True
                if depth > 0:
                    target = glob.get(f.id) if isinstance(f, ast.Name) else (
                        getattr(cls, f.attr, None) if cls is not None and isinstance(f, ast.Attribute)
                        and isinstance(f.value, ast.Name) and f.value.id == first else None)  # (`self.helper(o)`)
                    if type(target) is types.FunctionType and stores_into_objects(target, cls, depth - 1):
                        return True
        return False

    def block(stmts, fresh) -> tuple:
        """(a store found, the names fresh after the block)."""
        fresh = set(fresh)
        for st in stmts:
            if stores(st, fresh):
                return True, fresh
            if isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is not None:
                for t in (st.targets if isinstance(st, ast.Assign) else [st.target]):
                    if isinstance(t, ast.Name):
                        if isinstance(st.value, (ast.Call, ast.List, ast.Dict, ast.Set, ast.ListComp,
                                                 ast.DictComp, ast.SetComp, ast.Constant)):
                            fresh.add(t.id)
                        else:
                            fresh.discard(t.id)
            elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                if stores(st, set()):
                    return True, fresh
            else:
                after = None
                for name in ("body", "orelse", "finalbody", "handlers", "cases"):
                    sub = getattr(st, name, None)
                    if not sub:
                        continue
                    parts = [h.body for h in sub] if name in ("handlers", "cases") else [sub]
                    for part in parts:
                        found, f = block(part, fresh)
                        if found:
                            return True, fresh
                        after = f if after is None else after & f
                if after is not None:
                    fresh &= after
                for t in ast.walk(st):
                    if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store):
                        fresh.discard(t.id)  # (rebound in a loop, a branch: no longer known)
        return False, fresh

    body = tree.body if isinstance(tree.body, list) else [ast.Expr(value=tree.body)]
    return block(body, set())[0]


def _own_parts(st):
    """The nodes of statement st outside its nested blocks (a compound statement's test, iterator, items)."""
    todo = [st]
    while todo:
        n = todo.pop()
        yield n
        for name, v in ast.iter_fields(n):
            if name in ("body", "orelse", "finalbody", "handlers", "cases") and n is st and isinstance(v, list):
                continue
            if isinstance(v, list):
                todo.extend(x for x in v if isinstance(x, ast.AST))
            elif isinstance(v, ast.AST):
                todo.append(v)


def _reads(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _base_name(expr):
    """The variable an expression reads through (`self.data[k]`: self), or None (a call's result, ...)."""
    while isinstance(expr, (ast.Attribute, ast.Subscript, ast.Starred)):
        expr = expr.value
    if isinstance(expr, ast.IfExp):
        return _base_name(expr.body) or _base_name(expr.orelse)
    return expr.id if isinstance(expr, ast.Name) else None


def refuse_storing_method(method, op: str, cls=None) -> None:
    """Reverse mode, where Python runs `method` (of `cls`, an operand's own class) natively on a differentiated
    value: refused if it stores into objects."""
    if stores_into_objects(method, cls):
        raise OwnMethodStores(
            f"reverse mode runs {method.__qualname__} natively for `{op}` with a differentiated value, and it "
            f"stores into objects: what it stores would carry no derivative", where=_where(),
            fix=f"call the method by name (`obj.{method.__name__}(...)`: a call, which reverse mode follows), or "
                "use forward mode (jacfwd, derivative)")


def own_test(a, b, op: str) -> None:
    """Before a test (`a op b`; a truth test is `a != 0.0`) in reverse mode's pass: refused
    (`OwnTestUnderForward`) where an outer context runs operators its own way (`Context.operate`: forward
    mode's duals) and an operand's class has Python methods of its own for the test; and where such a
    method, run natively on the differentiated value, stores into objects (`OwnMethodStores`)."""
    own = own_test_method(a, b, op)
    if own is not None:
        refuse_storing_method(own[1], op, own[0])
    ctx = overdub.current()
    if ctx is None or ctx.operate is None:
        return
    for obj in (a, b):
        kind = type(obj)
        if not users_class(kind):
            continue
        for name in _TEST_NAMES.get(op, ()) + _TRUTH_NAMES:
            method = getattr(kind, name, None)
            if type(method) is types.FunctionType:
                raise OwnTestUnderForward(
                    f"reverse mode under a forward pass meets `{kind.__name__}.{name}`, a test method of the class's "
                    f"own, which it would run on the dual numbers the object holds", where=_where(),
                    fix="hessian(f, x, inner=\"forward\") runs it as code (the default hessian does so by itself)")


class OwnComparison(OverdubError):
    """Reverse mode met a comparison by a class's own method returning a value that is no bool."""


_OWN_COMPARED = frozenset({"==", "!=", "<", "<=", ">", ">="})
_OWN_COMPARISONS = ("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__")


def compared(result, a, b) -> None:
    """Reverse mode, after `a < b` (or another rich comparison) with a differentiated operand: refused where a
    class's own comparison method made a result that is no bool (`V(x) < V(y)` returning a V: reverse mode
    takes a test's result for a constant, and 0 came out); a bool, numpy's booleans pass at once."""
    kind = type(result)
    if kind is bool or kind is np.bool_ or kind is np.ndarray and result.dtype == bool:
        return
    for obj in (a, b):
        cls = type(obj)
        if cls.__flags__ & _HEAPTYPE and not is_engine_class(cls) and not value_class(cls) and any(
                type(getattr(cls, name, None)) is types.FunctionType for name in _OWN_COMPARISONS):
            raise OwnComparison(
                f"reverse mode does not differentiate a comparison by {cls.__name__}'s own method that returns a "
                f"{kind.__name__}, not a bool", where=_where(),
                fix="call the method by name (`a.__lt__(b)`: a call, which reverse mode follows), or use forward "
                    "mode (jacfwd, derivative)")


def equality_guard(active, other, op: str, close=None, leaves=None) -> None:
    """Reverse mode, before `active == other` (op "==" or "!="), where only `active` may carry a derivative
    (the activity analysis's answer, conservative: an attribute of an object holding differentiated
    values, an element of a differentiated array). Where they are equal (anywhere, for arrays): a dual
    (under `hessian`) is refused if its tangent moves it there; a plain value is noted in `SPECIAL_HITS`,
    and the recording's entry point has forward mode tell whether it moves (reverse mode's values carry
    no such information); outside one, refused. An ordering is also noted for a `JumpWatch`."""
    if (w := JUMP_WATCH.get()) is not None:
        watch_order(w, active, other, op, sys._getframe(1))
    if _TEXTS and type(active) in TEXT_TYPES:
        text_compared(active, other, op)
    if type(active).__flags__ & _HEAPTYPE or type(other).__flags__ & _HEAPTYPE:
        own_test(active, other, op)
    mask = _equal_at(active, other, op)
    if mask is None:
        if op in ORDER_OPS:
            _closing_in(active, other, op, getattr(active, "tangent", None) if type(active).__name__ == "Dual"
                        else None)
            if leaves is not None:
                _ended(active, other, op, leaves, sys._getframe(1))
        return
    tangent = getattr(active, "tangent", None) if type(active).__name__ == "Dual" else None
    if tangent is not None:
        if _moving(tangent, mask, close, other):
            if _judged(op):
                return
            raise _special(other, op)
        if close is None:
            # (a tie still to first order under an outer forward pass, hessian's: whether the value moves
            # off it at second order, its rate changing, this pass cannot tell, and the branch's second
            # derivative may not be the function's: squaternion's `if m == 1.0: return q` at |q| = 1, a
            # Hessian 0 for -1. Refused; hessian takes forward over forward, whose nested tangents tell)
            raise SpecialPoint(
                f"{special_case(other, op)}, where its rate is 0: a second derivative by forward over reverse "
                "cannot tell whether it moves off the tie", where=_where(),
                fix='hessian(f, x, inner="forward") (the default hessian takes it by itself)')
        return
    if close is not None and _wide(close, other):  # (no tangent to tell by: an O(1) one's step)
        return
    hits = SPECIAL_HITS.get()
    if hits is None:
        raise _special(other, op)
    hit = CountedHit((_where(), other, op))
    hit.equal_count = int(np.count_nonzero(mask))
    hits.append(hit)


_COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
_TOLERANCE = 1e-2  # (the largest bound taken for an iteration's tolerance)


def converged(active, bound, op: str, tangent, leaves, frame=None, first=None) -> None:
    """Forward mode, before the test `t = active op bound` that ends a loop (`if t: break` for `leaves`
    True, `if not t: break` for False: the lowered form's `while`): where the loop ends here on a
    tolerance-like bound (|active| <= |bound| <= _TOLERANCE), refused if the tested value's derivative is
    far from converged -- its rate above 10 sqrt(|bound|). An iteration that started at (or within its
    tolerance of) its answer stops after no step or one, and the derivative of those steps is not the
    answer's: Newton's from a guess that is the root (0.5 for 0.25), a power iteration from the fixed
    point (networkx's centralities at equal weights), an inverse started at its value. One that iterated
    there has a residual whose rate shrank with it (Newton's lags one step: sqrt of the tolerance)."""
    v, b = active, bound
    while type(v).__name__ == "Dual":
        v = v.primal
    while type(b).__name__ == "Dual":
        b = b.primal
    kinks, KINK[2] = KINK[2], 0.0  # (the kinks met since an ending test was last visited)
    if type(v) not in _FLOATS or type(b) not in (float, int) or op not in _COMPARE:
        return
    rate = tangent
    while type(rate).__name__ == "Dual":  # (under a second derivative: the first's)
        rate = rate.primal
    if type(rate) is np.ndarray and rate.dtype.kind == "f" and rate.size:  # (a chunk of directions)
        rate = float(np.max(np.abs(rate)))
    elif type(rate) not in _FLOATS:
        rate = 0.0
    rate = abs(float(rate))
    if rate == 0.0 and v == 0.0:  # (`abs(r)` of a residual exactly 0, a sum of such: their speed)
        rate = max(KINK[1] if KINK[0] is active else 0.0, kinks)
    top = None  # (the largest rate this test met in this call, before this visit)
    run = current_run() if frame is not None and first is None else None
    if run is not None:  # (the test's visits in this call: a first one ends a loop that never iterated)
        key = ("exit", id(frame), frame.f_code, frame.f_lineno)
        top = run.get(key)
        first = top is None
        run[key] = rate if top is None else max(top, rate)
    if bool(_COMPARE[op](v, b)) is not leaves or not abs(v) <= abs(b) <= _TOLERANCE:
        return
    # (at a first visit, no scale but the tolerance's; later, the rates it met: a residual in pascals has a
    # rate its units make large, which a converged iteration's is not beside the first visit's)
    if rate > 10.0 * math.sqrt(abs(b)) and (first or top is not None and rate > 1e-3 * top) or (
            rate == 0.0 and v == 0.0 and first):
        # (a change or residual exactly 0 at the first test, whose rate `abs` or a sum of them hid: the
        # iteration's start was its answer, `x = {v: 1/n}` of a power iteration on a regular graph)
        raise SpecialPoint(
            f"an iteration ended by its test `{op}` against the tolerance {b!r:.20} where the tested value's "
            f"derivative has not converged (its rate {rate:.3g}): it stopped after a step or none, having "
            "started at or within its tolerance of its answer, and the derivative of those steps is not the "
            "answer's", where=_where(),
            fix="start the iteration away from the answer, iterate a few steps more (a fixed count), or give "
                "the solver its derivative by the implicit function theorem (`@contexts.custom_adjoint`)")


_EXIT_LINES: dict = {}  # code -> {line of a loop's ending comparison: the outcome that ends it}


def _definition(code):
    """The tree of the definition starting at code's first line in its file (a twin's code is compiled from
    the same lines: the interception core's, whose source `get_source` takes for a changed file's), or None."""
    import linecache
    lines = linecache.getlines(code.co_filename)
    if not lines:
        return None
    try:
        with AST_LOCK:
            module = ast.parse("".join(lines))
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(module):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                node.lineno == code.co_firstlineno or node.decorator_list
                and node.decorator_list[0].lineno == code.co_firstlineno):
            return node
    return None


def exit_lines(code, globals_) -> dict:
    """The loop-ending comparisons of a function's source, by line (for the tests forward mode's dual numbers
    meet, which know no statement: `converged`): a `while a op b:` (ended when False) and an `if a op b:
    break` (when True)."""
    found = _EXIT_LINES.get(code)
    if found is None:
        found = {}
        tree = _definition(code)
        in_loop = set()  # (the statements inside a loop of the function's own: a `return` there ends it)
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, (ast.For, ast.While)):
                in_loop.update(id(n) for n in ast.walk(node) if n is not node)
        for node in ast.walk(tree) if tree is not None else ():
            test = getattr(node, "test", None)
            if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
                continue
            if isinstance(node, ast.While):
                found[test.lineno] = False
            elif isinstance(node, ast.If) and not node.orelse and node.body and (
                    isinstance(node.body[-1], ast.Break) or isinstance(node.body[-1], ast.Return) and id(node) in in_loop):
                found[test.lineno] = True
        if len(_EXIT_LINES) > 4096:
            _EXIT_LINES.clear()
        _EXIT_LINES[code] = found
    return found


def _ended(active, other, op: str, leaves, frame) -> None:
    """Reverse mode, before the test that ends a loop (see `converged`): a dual's (under `hessian`) checked
    by its tangent; a plain value's that ends the loop on a tolerance-like bound at the test's first visit
    in the recording (no step taken, or one) is noted for forward mode to tell (`SPECIAL_HITS`)."""
    hits = SPECIAL_HITS.get()
    first = False
    if type(hits) is Hits:
        seen = getattr(hits, "exits", None)
        if seen is None:
            seen = hits.exits = set()
        key = (id(frame), frame.f_code, frame.f_lineno)
        first = key not in seen
        seen.add(key)
    if type(active).__name__ == "Dual":
        converged(active, other, op, active.tangent, leaves, frame, first)
        return
    if (first or active == 0.0) and type(active) in _FLOATS and type(other) in (float, int) and bool(
            _COMPARE[op](active, other)) is leaves and abs(active) <= abs(other) <= _TOLERANCE:
        # (or a change exactly 0 at a later one: a power iteration whose first step reached its fixed point)
        hits.append((_where(), other, "~" + op))


def _closing_in(a, b, op: str, rate) -> None:
    """Reverse mode, before `a < b` with no tie: refused where a step of relative size _FLIP flips it, for
    duals (under `hessian`: `rate` their tangent); plain values whose gap narrowed onto the boundary
    (`narrowing`) are noted for forward mode to tell."""
    if rate is not None:
        a, b = getattr(a, "primal", a), getattr(b, "primal", b)
        if near_at(a, b, rate) is not None:
            raise _near_special(b, op)
        while type(rate).__name__ == "Dual":
            rate = rate.primal
        closing_in(sys._getframe(2), a, b, op, rate)
        return
    hits = SPECIAL_HITS.get()
    if hits is not None:
        if narrowing(a, b, hits, sys._getframe(2)):
            hits.append((_where(), b, "~" + op))
        elif _within_flip(a, b):  # (forward mode tells: a value within a step of relative size _FLIP of its
            # bound whose rate is 0 -- a kink's, `abs(1 - q @ q) < 1e-14` -- is judged from the two sides; one
            # merely that close, moving, keeps reverse mode's answer, the derivative of its piece)
            hits.append((_where(), b, "≈" + op))


def zero_rate_near(value, other, rate) -> bool:
    """A number whose rate is exactly 0.0 (computed from the inputs: a kink's, a second order's) within a step
    of relative size _FLIP of what an ordering compares it with: `_still_at`'s to judge."""
    while type(rate).__name__ == "Dual":
        rate = rate.primal
    if not (type(rate) in _FLOATS and rate == 0.0 or type(rate) is np.ndarray and rate.dtype.kind == "f"
            and not rate.any()):
        return False
    try:
        return abs(float(value) - float(other)) <= _FLIP * _input_scale()
    except (TypeError, ValueError):
        return False


def _within_flip(a, b) -> bool:
    """Plain floats (or float arrays) a exactly 0 somewhere where b is a small bound, not 0, at most _TOLERANCE:
    a tolerance shortcut's test of a value a kink or a singular point leaves at 0 (`abs(1 - q @ q) < 1e-14`,
    `n < eps` of a norm at the zero vector, `(x*x + y*y) ** 0.5 < 1e-6` at the origin, whose rate is
    infinite times 0), whose rate reverse mode cannot see. (Bounds up to _FLIP only, the last: the branch's
    constant came out for `(x*x + y*y) ** 0.5 < 1e-6`'s derivative.)"""
    if not (type(a) in _FLOATS or type(a) is np.ndarray and a.dtype.kind == "f"):
        return False
    try:
        with np.errstate(invalid="ignore"):
            bound = np.abs(np.asarray(b, dtype=float))
            return bool(np.any((np.asarray(a, dtype=float) == 0.0) & (bound > 0.0) & (bound <= _TOLERANCE)))
    except (TypeError, ValueError):
        return False


def order_watch(a, b, op: str, ta=None, tb=None) -> None:
    """Before `a < b` (an ordering) with both operands active: noted for a `JumpWatch`; forward mode's (a
    tangent twin's, passing both tangents after op) refused where a step of relative size _FLIP of the
    inputs flips it (`near_at`)."""
    if (w := JUMP_WATCH.get()) is not None:
        watch_order(w, a, b, op, sys._getframe(1))
    if ta is not None or tb is not None:
        near_guard(a, b, op, ta, tb)


def near_guard(a, b, op: str, ta, tb) -> None:
    """Refused where a step of relative size _FLIP flips `a op b`, the two moving by tangents ta and tb,
    and where they are tied (equal, somewhere for arrays) and move apart: the ordering's branches meet there.
    Two that move together up to rounding (a safeguarded Newton iteration's `lo < y_new`, both converged
    onto the root with their derivatives) do not part: a rate below _FLIP of the tangents is none."""
    rate = apart_rate(ta, tb)
    if rate is _NO_RATE:  # (tangents of different kinds: a sequence's)
        return
    nan_rate_compared(ta, tb, op)
    if tie_moving(a, b, op, rate):
        if _judged(op):  # (the rerun of a point judged from its two sides: the branch's own derivative, checked)
            return
        raise _special(b, op)
    if near_at(a, b, rate) is not None:
        raise _near_special(b, op)


_NO_RATE = object()


def nan_rate_compared(ta, tb, op: str) -> None:
    """Forward mode, an ordering of a value whose rate (ta, or tb of the other side) is no number: a singular
    point's infinite partial times a zero rate (`sqrt(x * x + y * y)` at 0, whose value moves as the step's
    size): `if r < 1e-6: return I` took the branch's constant for the derivative (0 where the rotation's is
    not). A `SpecialCase`, judged from the two sides as a norm's cone tip is; not in the rerun that judges."""
    if (_no_number(ta) or tb is not None and _no_number(tb)) and not _judged(op):
        raise SpecialCase(f"a differentiated value compared by `{op}` whose rate of change is not a number here "
                          "(a singular point: an infinite derivative times a zero rate, sqrt at 0 of a sum of "
                          "squares)", where=_where(), fix=_SPECIAL_FIX)


def _no_number(rate) -> bool:
    """rate (a float, an array, a dual's tangent) holds a NaN."""
    while type(rate).__name__ == "Dual":
        rate = rate.primal
    if type(rate) is float or isinstance(rate, np.floating):
        return rate != rate
    return type(rate) is np.ndarray and rate.dtype.kind in "fc" and bool(np.isnan(rate).any())


def apart_rate(ta, tb):
    """|ta - tb|, the rate at which two values part, rates below _FLIP of the tangents taken for none (two
    that move together up to rounding); `_NO_RATE` for tangents that do not subtract."""
    if tb is None or type(tb) is int and tb == 0:
        return ta
    if ta is None or type(ta) is int and ta == 0:
        return tb
    while type(ta).__name__ == "Dual":
        ta = ta.primal
    while type(tb).__name__ == "Dual":
        tb = tb.primal
    try:
        rate = np.abs(np.asarray(ta, dtype=float) - np.asarray(tb, dtype=float))
        return np.where(rate > _FLIP * np.maximum(np.abs(ta), np.abs(tb)), rate, 0.0)
    except Exception:
        return _NO_RATE


def tie_moving(a, b, op: str, rate) -> bool:
    """`a op b`, an ordering of two values both carrying a derivative, at a tie (equal, somewhere for arrays:
    one element of a grid against a point, `o < grid` of a grid taken for active) where a - b moves (`rate`,
    its tangent): a kink. `near_at` leaves a single element of an array to the data (a grid's point next to a
    breakpoint), so a tie there went unchecked: one side's derivative (scoringrules' CRPS of a count at an
    integer, sweep F)."""
    if op not in ORDER_OPS:
        return False
    while type(a).__name__ == "Dual":
        a = a.primal
    while type(b).__name__ == "Dual":
        b = b.primal
    mask = _equal_at(a, b, op)
    return mask is not None and _moving(rate, mask, None, b)


def order_watch_reverse(a, b, op: str, leaves=None) -> None:
    """Reverse mode's `order_watch`: a class's own ordering method is checked too (`own_test`), and the
    test closing in on its boundary (`_closing_in`)."""
    if type(a).__flags__ & _HEAPTYPE or type(b).__flags__ & _HEAPTYPE:
        own_test(a, b, op)
    if (w := JUMP_WATCH.get()) is not None:
        watch_order(w, a, b, op, sys._getframe(1))
    da, db = type(a).__name__ == "Dual", type(b).__name__ == "Dual"
    if da or db:
        near_guard(a.primal if da else a, b.primal if db else b, op, a.tangent if da else None,
                   b.tangent if db else None)
    else:
        if op in ORDER_OPS and (hits := SPECIAL_HITS.get()) is not None and _equal_at(a, b, op) is not None:
            # tied, both taken for differentiated: a kink unless the two move together; forward mode tells
            # where it can run (`?`: kept where it cannot, as before: histogram edges, knot vectors)
            hits.append((_where(), b, "?" + op))
        _closing_in(a, b, op, None)
    if leaves is not None and not db:  # (a loop's end against a bound that is a number here: `converged`)
        _ended(a, b, op, leaves, sys._getframe(1))


def equality_guard2(a, b, op: str, close=None) -> None:
    """Reverse mode, before `np.array_equal(a, b)` (`_WHOLE_OPS`) with both operands active: where
    they are equal, a dual pair (under `hessian`) is refused if their tangents differ there (the two move
    apart: a memo cache's stale key against the new argument, a kink between two formulas); a plain pair
    is noted for forward mode to tell, as `equality_guard`'s. Two values that move together (`x == x`, a
    NaN test) pass. (`a == b` of two active values only where both are numbers, not arrays: a library's
    alignment checks compare arrays with themselves.)"""
    if _TEXTS and type(a) in TEXT_TYPES:
        text_compared(a, b, op)
    if type(a).__flags__ & _HEAPTYPE or type(b).__flags__ & _HEAPTYPE:
        own_test(a, b, op)
    # (tuples or lists of floats, `tuple(x) != self.key`: a memo cache's key checked as numbers are, its hit
    # noted for forward mode to tell; let pass, a stale cache's plain values came out, 0 silently: sweep P)
    sequences = type(a) in (tuple, list) and type(b) in (tuple, list) and _may_carry(a) and _may_carry(b)
    if op in ("==", "!=") and not (_number(a) and _number(b)) and not sequences and (
            a is b or not _float_arrays(a, b)):
        return  # (an array compared with itself: an alignment check; arrays of floats equal somewhere are
        # noted below: skimage's rgb2hsv `arr[..., 1] == arr.max(-1)` where two channels tie took, in reverse
        # mode, max's even split inside the formula of one side: half the slope)
    mask = _equal_at(a, b, op)
    if mask is None:
        return
    ta = getattr(a, "tangent", None) if type(a).__name__ == "Dual" else None
    tb = getattr(b, "tangent", None) if type(b).__name__ == "Dual" else None
    if ta is not None or tb is not None:
        if _moving_apart(ta, tb, mask, close, b) and not _judged(op):
            raise _special(b, op)
        return
    if close is not None and _wide(close, b):
        return
    hits = SPECIAL_HITS.get()
    arrays = op in ("==", "!=") and not (_number(a) and _number(b)) and not sequences
    if hits is None:
        if arrays:
            return
        raise _special(b, op)
    hits.append((_where(), b, "≡" + op if arrays else op))  # (`==` of arrays: forward mode's answer is asked
    # for; where it refuses, reverse mode's stands, as before they were noted: xarray's alignment checks. Not
    # `np.allclose`/`array_equal`'s, refused with forward mode as before: a stale memo cache's key)


def _float_arrays(a, b) -> bool:
    """a and b are float arrays (or a float array and a number)."""
    return any(type(v) is np.ndarray and v.dtype.kind == "f" for v in (a, b)) and all(
        type(v) is np.ndarray and v.dtype.kind == "f" or _number(v) for v in (a, b))


def equality_guard2_fd(a, b, op: str, ta, tb, close=None) -> None:
    """Forward mode, before `a == b` with both operands perturbed: refused where equal and their tangents
    differ there."""
    if _TEXTS and type(a) in TEXT_TYPES:
        text_compared(a, b, op)
    if op in ("==", "!=") and not (_number(a) and _number(b)):
        return
    mask = _equal_at(a, b, op)
    if mask is not None and _moving_apart(ta, tb, mask, close, b) and not _rounding_apart(ta, tb) \
            and not _judged(op):
        raise _special(b, op)


_ROUNDING = 2.0 ** -40  # (relative: tangents this close were computed from one rate by different roundings)


def _rounding_apart(ta, tb) -> bool:
    """The two tangents of an equality met in the user's code differ by rounding only: a fixed-point
    iteration's exit `if E_new == E: break`, its values equal and their tangents converged with them (1e-15
    relative apart: it was refused at every point, reverse mode answering). Where two values meet and part,
    their tangents differ by their rate (scikit-fuzzy's memberships: judged from the two sides, as before)."""
    if type(ta).__name__ == "Dual" or type(tb).__name__ == "Dual" or ta is None or tb is None:
        return False  # (a nested derivative's: its own rates decide)
    try:
        with np.errstate(invalid="ignore", over="ignore"):
            ta, tb = np.asarray(ta, dtype=float), np.asarray(tb, dtype=float)
            return bool(np.all(np.abs(ta - tb) <= _ROUNDING * np.maximum(np.abs(ta), np.abs(tb))))
    except (TypeError, ValueError):
        return False


_NUMBERS = frozenset({float, int, np.float64, np.float32})


def _number(v) -> bool:
    while type(v).__name__ == "Dual":
        v = v.primal
    return type(v) in _NUMBERS


def _moving_apart(ta, tb, mask, close=None, other=None) -> bool:
    """The tangents differ where mask holds (None, 0: no tangent)."""
    while type(ta).__name__ == "Dual":
        ta = ta.primal
    while type(tb).__name__ == "Dual":
        tb = tb.primal
    if ta is None or (type(ta) is int and ta == 0):
        return _moving(tb, mask, close, other)
    if tb is None or (type(tb) is int and tb == 0):
        return _moving(ta, mask, close, other)
    try:
        return _moving(np.asarray(ta) - np.asarray(tb), mask, close, other)
    except Exception:  # (shapes that do not subtract, sequences: moving unless both are still)
        return _moving(ta, mask, close, other) or _moving(tb, mask, close, other)


def equality_guard_fd(active, other, op: str, tangent, close=None, frame=None, leaves=None) -> None:
    """Forward mode, before `active == other` (or `!=`): refused where they are equal and the tangent
    moves `active` there (a value that does not move is no special point of the derivative). An
    ordering of the user's (a tangent twin's guard) is also noted for a `JumpWatch`. Given the test's
    frame, a number's tangent at a tie that is rounding's residue of the rates the test met is none
    (`rounding_residue`)."""
    if (w := JUMP_WATCH.get()) is not None:
        watch_order(w, active, other, op, sys._getframe(1))
    if _TEXTS and type(active) in TEXT_TYPES:
        text_compared(active, other, op)
    if frame is not None and op in _TIES:
        value, plain = active, other
        while type(value).__name__ == "Dual":  # (a nested derivative's: values)
            value = value.primal
        while type(plain).__name__ == "Dual":
            plain = plain.primal
        if type(value) in _FLOATS and type(plain) is not np.ndarray \
                and rounding_residue(frame, value == plain, tangent):
            return
    mask = _equal_at(active, other, op)
    if mask is not None and not _judged(op) and (_moving(tangent, mask, close, other) or op not in ORDER_OPS and
                                                 _still_at(active, op, tangent, close, leaves, mask)):
        raise _special(other, op)
    if op in ORDER_OPS and _still_at(active, op, tangent, close, leaves, mask, other, frame):
        # (not equal to its bound but within a step of it: said so, not "equal to" the bound -- pykrige's
        # `sigma > eps` at sigma = 0 was "a differentiated value equal to 1e-10")
        raise SpecialCase(special_case(other, op if mask is not None else "≈" + op), where=_where(), fix=_SPECIAL_FIX)
    if op in ORDER_OPS and mask is None and near_at(active, other, tangent) is not None:
        raise _near_special(other, op)
    if leaves is not None:
        converged(active, other, op, tangent, leaves, frame)


# Approximate equality (`np.allclose(p, key, rtol, atol)`, `np.isclose`, `math.isclose`) found holding
# exactly is a special point where the comparison's band (atol + rtol |other|) is so narrow that a step of
# relative size _FLIP moves the value out of it: a memo cache's key (ASE's calculators compare positions at
# 1e-15). A wider band holds on a neighbourhood (the branch is the code's there), and a validation check
# (`np.allclose(norm(q), 1)` of a normalised q) passes: its tangent, rounding noise, stays inside.
_FLIP = 1e-8


def _band(close, other):
    rtol, atol = close
    try:
        return np.abs(atol) + np.abs(rtol) * np.abs(np.asarray(getattr(other, "primal", other), dtype=float))
    except (TypeError, ValueError):
        return None


def _wide(close, other) -> bool:
    """The band holds for any step of relative size _FLIP of an O(1) tangent: no special point (reverse
    mode's plain values, which carry no tangent, are not noted for forward mode to tell)."""
    band = _band(close, other)
    return band is not None and bool(np.all(band > _FLIP))


_CONTAINERS = (tuple, list, set, frozenset, dict, range)


def _equal_at(active, other, op: str = "=="):
    """Where `active == other` holds (a bool array, True for a number; for `in`, True where `active` is
    an item of a builtin container), or None where it holds nowhere or `active` is no float (ints,
    strings, None carry no derivative) or the comparison fails (Python's own raises where it runs). A
    class's own `__contains__` may be a range test (sklearn's `Interval`): not an equality, not checked."""
    if type(active) is int or isinstance(active, str) or active is None or type(active) is bool:
        return None
    value = getattr(active, "primal", active) if type(active).__name__ == "Dual" else active
    if not _may_carry(value):
        return None
    if op in ("in", "not in"):
        if type(other) not in _CONTAINERS:
            return None
        try:
            return np.True_ if value in other else None
        except Exception:
            return None
    try:
        plain = getattr(other, "primal", other) if type(other).__name__ == "Dual" else other
        if op == "all==":  # (np.array_equal: all of it)
            return np.True_ if np.all(np.asarray(value) == np.asarray(plain)) else None
        if op == "each==":  # (a truth test of each item: `all([x, y])`, `np.count_nonzero(d)`)
            value = np.asarray(value)
        eq = value == plain
        if type(eq) is bool or isinstance(eq, np.bool_):
            return np.True_ if eq else None
        eq = np.asarray(eq)
    except Exception:
        return None
    return eq if eq.dtype == bool and eq.any() else None


def _moving(tangent, mask, close=None, other=None) -> bool:
    """The tangent is not zero where mask holds (a chunk of directions first, when it has one more axis). A
    NaN tangent moves too: the value's rate there is unknown (`np.linalg.norm(x - c) == 0`: the norm's
    tangent at 0 is 0/0, yet it moves in every direction; taken as still, the special case's derivative
    came out, 0 silently)."""
    if type(tangent).__name__ == "Dual":  # (a nested derivative's: its value, and its own rate: a tangent 0
        # here whose rate is not moves off the tie at second order, `if m == 1.0` at a minimum of m)
        return _moving(tangent.primal, mask, close, other) or _moving(tangent.tangent, mask, close, other)
    if tangent is None:
        return False
    if type(tangent) is tuple or type(tangent) is list:  # (a sequence's: any item's, where it is all equal)
        return any(_moving(t, np.True_) for t in tangent)
    try:
        t = np.asarray(tangent)
        band = None if close is None else _band(close, other)
        t = t != 0 if band is None else ~(np.abs(t) * _FLIP <= band)  # (NaN moves)
    except Exception:
        return True
    mask = np.asarray(mask)
    if t.ndim == mask.ndim + 1:
        t = t.any(axis=0)
    try:
        return bool((t & mask).any()) if t.shape == mask.shape else bool(t.any())
    except Exception:
        return bool(t.any())


ORDER_OPS = frozenset({"<", "<=", ">", ">="})


# -- orderings closing in on their boundary --
# A tie is one point; an iteration that narrows onto a test's boundary (a bisection's `g(mid, x) < 0`, its
# step in a helper, a method, a recursion or a `reduce`, where the loop-level detector of `bisection` does
# not see it) decides its last tests a hair from the other branch: the value it returns is a fixed mix of
# its brackets, constant on steps far narrower than any finite difference, and the derivative of the branch
# taken (0) is not the function's. Such a test is one that a step of relative size _FLIP of the inputs
# flips: |a - b| < _FLIP * (the inputs' scale: `Run`) * |rate of a - b|. An iteration whose derivative
# follows its values (Newton's, the secant's) passes: its residual's rate shrinks with it. Forward mode has the
# rate (the tangent) at every test; reverse mode, whose values carry none, notes a test whose gap fell
# below _FLIP of the largest the same test met in the recording, for forward mode to tell (`CHECK_SPECIAL`).

class Run(dict):
    """A forward-mode run (its outermost entry's, `HISTORY`): the history of its tests, {key: notes}
    (`closing_in`, `rounding_residue`), and `scale`, its inputs' size per unit of its directions
    (`input_scale`), or the entry's (values, directions) to compute it from when first asked (most runs
    compare nothing)."""
    __slots__ = ("scale",)


def current_run():
    """This thread's forward-mode `Run`, made from the entry's (values, directions) on first use; None
    outside one."""
    run = HISTORY.run
    if type(run) is tuple:
        scale, run = run, Run()
        run.scale = scale
        HISTORY.run = run
    return run


def _input_scale() -> float:
    run = current_run()
    if run is None:
        return 1.0
    s = run.scale
    if type(s) is tuple:
        s = run.scale = input_scale(*s)
    return s


def input_scale(values, directions=None) -> float:
    """The largest multiple s of the directions v (1 each, without) whose step s v changes no input x by more
    than its own size (|x|, or 1 where x is 0): a step of relative size _FLIP is then _FLIP s v. (Inputs of
    unlike sizes, a pressure of 1e6 beside a viscosity of 1e-3: the viscosity's size bounds the step.)"""
    scale = float("inf")
    for k, x in enumerate(values):
        v = 1.0 if directions is None else directions[k]
        while type(x).__name__ == "Dual":
            x = x.primal
        if v is None or not (_in_numpy(x) and _in_numpy(v)):  # (a dask array's size is not computed for it)
            continue
        if type(x) is float and type(v) is float:
            if v != 0.0:
                scale = min(scale, (abs(x) or 1.0) / abs(v))
            continue
        try:
            a, d = np.abs(np.asarray(x, dtype=float)), np.abs(np.asarray(v, dtype=float))
            a = np.where(a == 0.0, 1.0, a)
            moved = np.broadcast_to(d, a.shape) != 0.0 if d.ndim <= a.ndim else None
            if moved is not None and moved.any():
                scale = min(scale, float(np.nanmin(a[moved] / np.broadcast_to(d, a.shape)[moved])))
        except (TypeError, ValueError):
            continue
    return scale if 0.0 < scale < float("inf") else 1.0


def _in_numpy(v) -> bool:
    """v is a Python number or numpy's (an array, a scalar): what the checks of orderings compute on."""
    return type(v) in (float, int, bool) or isinstance(v, (np.ndarray, np.generic))


def near_at(a, b, rate):
    """Where the ordering of a and b flips within a step of relative size _FLIP of the inputs (`rate`: the
    tangent of a - b; with one more axis, a chunk of directions: the largest): True or a bool array; None
    where nowhere, or where the values are not floats (an exact type's tests are exact)."""
    while type(rate).__name__ == "Dual":
        rate = rate.primal
    if rate is None or type(rate) is int and rate == 0:
        return None
    while type(a).__name__ == "Dual":  # (a nested derivative's: values)
        a = a.primal
    while type(b).__name__ == "Dual":
        b = b.primal
    if JUMP_WATCH.get() is not None or not (_in_numpy(a) and _in_numpy(b) and _in_numpy(rate)):
        return None  # (a rule sampling the function notes its branches itself; a dask array is not computed)
    flip = _FLIP * _input_scale() * (1e-2 if TIES_AT_SIDES.get() else 1.0)  # (a side is a step of _FLIP from
    # the point judged: a boundary at the point is no boundary of the side's)
    if type(a) is float and type(rate) is float and (type(b) is float or type(b) is int):
        return True if abs(a - b) < flip * abs(rate) else None
    try:
        gap = np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float))
        r = np.abs(np.asarray(rate, dtype=float))
        if r.ndim == gap.ndim + 1:
            r = r.max(axis=0)
        near = gap < flip * r
    except (TypeError, ValueError):
        return None
    if near.ndim and near.size > 1:  # (an array: its elements closing in together, a vectorised bisection's;
        return near if np.count_nonzero(near) * 2 > near.size else None  # one point of a grid next to a
    return near if near.any() else None                                 # breakpoint is data, as a tie is)


# A loose iteration (a bisection stopped at `hi - lo < 1e-4`, its step in a helper) never comes within a step of
# _FLIP of its test's boundary, but its history shows it: visit after visit of the same test (its code and
# line, in one forward-mode run) the step that would flip it -- its gap over its rate, the tested value's
# sensitivity to the inputs -- falls a thousandfold from the largest it had, and stays there: the iterate
# closing in carries no derivative. An iteration whose derivative follows its values keeps that step
# (Newton's and the secant's residuals lose their rate with their gap), and a convergence test against a
# tolerance ends about the tolerance away. Scalars only (a vectorised bisection's `np.where` steps are the
# loop detector's).

class _Runs(threading.local):
    run = None


HISTORY = _Runs()
"""`HISTORY.run`: this thread's outermost forward-mode entry's `Run`, {(code, line): `_Test`} of its orderings
of floats, or None (a thread's attribute, not a context variable: two of those set and reset per derivative
cost a tenth of a small one)."""

_FLOATS = frozenset({float, np.float64})
_NUMBERS_OR_INT = frozenset({float, np.float64, int})
_RUN, _FELL = 4, 1e-3  # (visits in a row, the fall of the step)
_ORDERS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def closing_in(frame, a, b, op: str, rate) -> None:
    """Forward mode, before `a op b` of floats in frame with rate the tangent of a - b: noted in `HISTORY`,
    which `closed_in` judges when the run ends."""
    hist = current_run()
    if hist is None or JUMP_WATCH.get() is not None:
        return
    while type(a).__name__ == "Dual":  # (a nested derivative's: values)
        a = a.primal
    while type(b).__name__ == "Dual":
        b = b.primal
    while type(rate).__name__ == "Dual":
        rate = rate.primal
    if type(a) not in _FLOATS or type(b) not in _NUMBERS_OR_INT:
        return
    if type(rate) is np.ndarray and rate.dtype.kind == "f" and rate.size:  # (a chunk of directions: the largest)
        rate = np.max(np.abs(rate))
    elif type(rate) not in _FLOATS:
        return
    gap, r = abs(float(a) - float(b)), abs(float(rate))
    key = (frame.f_code, frame.f_lineno)
    t = hist.get(key)
    if t is None:
        t = hist[key] = _Test(op)
    # (a test whose value does not move never flips: a rate of 0, or rounding's residue of the rates the
    # test met -- a safeguarded Newton iteration's `g(tn) > 0` once g(tn) is exactly 0: `rounding_residue`)
    step = math.inf if r == 0.0 or r <= _FLIP * 1e-2 * t.rate else gap / r
    t.rate = max(t.rate, r)
    t.topgap = max(t.topgap, gap)
    if step == math.inf:
        t.run = 0
    elif step > t.top:
        t.top, t.run = step, 0
    elif step < 10 * _FELL * t.top:
        if not t.run:
            t.held = t.failed = 0
        t.run += 1
        if _ORDERS[op](a, b):
            t.held += 1
        else:
            t.failed += 1
    else:
        t.run = 0
    t.step, t.gap, t.b = step, gap, b


class _Test:
    """What a forward-mode run noted of one ordering (`closing_in`): the largest step that would flip it
    (its gap over its rate), the visits since the step fell below 1/100 of it and how many of their tests
    held and failed, the last visit's step, gap and other operand, and the largest rate it met."""
    __slots__ = ("op", "top", "run", "held", "failed", "step", "gap", "b", "rate", "topgap")

    def __init__(self, op: str):
        self.op, self.top, self.run, self.held, self.failed = op, 0.0, 0, 0, 0
        self.step, self.gap, self.b, self.rate, self.topgap = math.inf, math.inf, 0.0, 0.0, 0.0


_TIES = ORDER_OPS | {"==", "!="}


def rounding_residue(frame, tied: bool, rate) -> bool:
    """A root finder's exact exit, `if q == 0.0: return p` (fluids' secant and newton): the residual q of an
    iterate whose derivative follows its values has a tangent that shrinks with it, to rounding's residue of
    the residuals' rates before. Where the test is tied, a tangent below _FLIP * 1e-2 of the largest the same
    test (its code and line, in this forward-mode run) met is that residue: the value does not move. Its
    first visit has no history: a tie there moves where its tangent is not 0 (`x == 0` at 0). First
    derivatives only: under a second, the tie is refused as before."""
    hist = current_run()
    if hist is None or type(rate).__name__ == "Dual":  # (a derivative of a derivative: the iterate's second
        return False  # derivative need not have converged where its first has -- fluids' secant, 0.5% off)
    if type(rate) is np.ndarray and rate.dtype.kind == "f" and rate.size:  # (a chunk of directions: the largest)
        rate = np.max(np.abs(rate))
    elif type(rate) not in _FLOATS:
        return False
    r = abs(float(rate))
    key = (frame.f_code, frame.f_lineno, "==")
    top = hist.get(key, 0.0)
    if r > top:
        hist[key] = r
    return tied and r <= _FLIP * 1e-2 * top and top > 0.0  # (a rate 0 with none before: `_still_at`'s)


def closed_in(hist: dict) -> None:
    """At the end of a forward-mode run: refused where a test's last visits closed in on it (`HISTORY`): the
    last _RUN of them a step below 1/100 of the largest it had, each outcome at least twice among them (a
    bisection narrows its bracket from both ends; a march to a bound -- an ODE solver's `t_new > t_bound` --
    turns once, at its end), the last below _FELL of the largest, and its gap below
    _FELL of b where b is not 0 (a convergence test `norm(u - u2) < 1e-12` ends about its tolerance away).
    (Its end, not its middle: data swept through a threshold in order passes close to it and away again;
    an iteration stays.)"""
    for key, t in hist.items():
        if len(key) != 2:  # (an equality's rates: `rounding_residue`)
            continue
        (code, line), op, b, run = key, t.op, t.b, t.run
        # (and the gap itself fell: a grid scanned for a sign change, `if res[i] < 0.0 < res[i + 1]`, whose
        # residual's rate grew faster than it from near 0, had its step fall while its gap grew: pkG's
        # PC-SAFT density roots)
        if run >= _RUN and t.step < _FELL * t.top and (b == 0 or t.gap < _FELL * abs(b)) and min(
                t.held, t.failed) >= 2 and t.gap < _FELL * t.topgap:
            raise SpecialPoint(
                f"an iteration closing in on the test `{op}` against {b!r:.40}: over its last {run} visits the "
                f"step of the inputs that would flip it fell below {_FELL:g} of the largest it had: the iterate "
                f"narrowing onto the test carries no derivative (a bisection, its step in a helper, a method or a "
                f"recursion), and the derivative of its result is not the root's",
                where=f"{code.co_filename}:{line} in {code.co_qualname}", fix=NEAR_FIX)


class CountedHit(tuple):
    """A hit `(where, other, op)` of `equality_guard` with `equal_count`, how many of the compared entries were
    found equal: the check at nearby points (`contexts.compose.still_equal_nearby`) asks that as many stay equal
    there (an entry moving off the value while another, constant, stays on it would keep the hit)."""
    equal_count = None


class Hits(list):
    """A recording's `SPECIAL_HITS`: the tests found equal (or closing in), and the largest gap each
    ordering (its code and line) has met (`narrowing`); `level`, set by the mode that makes it, counts the
    recordings running around it (reverse mode's `nestlevel`: its one context variable per recording)."""
    __slots__ = ("gaps", "exits", "level")  # (gaps, exits: made by the first ordering noted: most recordings meet none)


_F8 = np.float64


def narrowing(a, b, hits, frame) -> bool:
    """Reverse mode, `a < b` of plain values in frame: whether the gap |a - b| has closed in on the test's
    boundary -- fallen below _FLIP of the largest the same test (its code and line) met in this recording,
    or below _FELL of it visit after visit (_RUN of them in a row) -- and, for a b not 0, below _FELL of b
    (a Newton iteration's `abs(dx) > tol` ends a gap of about tol away). Forward mode then tells, by the
    tested value's rate, whether an iteration closed in (`closing_in`)."""
    if type(hits) is not Hits:
        return False
    gaps = getattr(hits, "gaps", None)
    if gaps is None:
        gaps = hits.gaps = {}
    if JUMP_WATCH.get() is not None or not (_in_numpy(a) and _in_numpy(b)) or type(a) in (int, bool) or (
            isinstance(a, (np.integer, np.bool_)) or type(a) is np.ndarray and a.dtype.kind in "biu"):
        return False  # (an integer carries no derivative: `x.ndim`)
    try:
        ta, tb = type(a), type(b)
        if (ta is float or ta is _F8) and (tb is float or tb is int or tb is _F8):  # (numbers: no median)
            small = large = abs(float(a) - float(b))
            size = abs(float(b))
        else:
            b = np.asarray(b, dtype=float)
            with np.errstate(invalid="ignore", over="ignore"):  # (inf - inf: least_squares' open bounds)
                gap = np.abs(np.asarray(a, dtype=float) - b)
            gap = gap[~np.isnan(gap)]
            if not gap.size:
                return False
            small, large = _median_max(gap)  # (most of it: see `near_at`)
            size = float(np.max(np.abs(b))) if b.size else 0.0
    except (TypeError, ValueError):
        return False
    key = (frame.f_code, frame.f_lineno)
    seen = gaps.get(key)  # ([the largest gap, visits in a row below 1/100 of it])
    if seen is None or large > seen[0]:
        gaps[key] = [large, 0]
        return False
    top = seen[0]
    seen[1] = seen[1] + 1 if small < 10 * _FELL * top else 0
    return (small < _FLIP * top or seen[1] >= _RUN and small < _FELL * top) and (
        size == 0.0 or small < _FELL * size)


def _median_max(gap) -> tuple[float, float]:
    """(np.median(gap), np.max(gap)) of a non-empty float array without NaN, from one partition (np.median's
    own: its middle one or two, their mean as (a + b) / 2, the same float; its last the largest) without
    np.median's layers (20 us a call, most of `narrowing`'s time)."""
    gap = gap.reshape(-1)
    n = gap.size
    h = n // 2
    part = np.partition(gap, (h, n - 1) if n % 2 else (h - 1, h, n - 1))
    mid = part[h] if n % 2 else (part[h - 1] + part[h]) / 2
    return float(mid), float(part[n - 1])


def _near_special(other, op: str) -> "SpecialPoint":
    e = SpecialPoint(special_case(other, "~" + op), where=_where(), fix=NEAR_FIX)
    e.near = True  # (reverse mode's orderings noted only for being that close, `_within_flip`: its own answer)
    return e


NEAR_FIX = ("give the solving function its derivative (`@contexts.custom_adjoint`: by the implicit function "
            "theorem, dy/dx = -(dg/dx)/(dg/dy) at a root), find the root with an iteration that follows the "
            "function's values (Newton's, secant; scipy.optimize.brentq has a rule), or differentiate at a "
            "point off the branch boundary")


def special_case(other, op: str) -> str:
    """What an equality (or a tie of an ordering, or an ordering closing in: op "~<") found: the head of
    `SpecialPoint`'s message."""
    shown = f"an item of a {type(other).__name__}" if op in ("in", "not in") else f"{repr(other):.60}"
    if op.startswith("?jump of "):  # (noted only, `_tie_jump`)
        op = op[1:]
    if op[:1] == "≈":  # (within a step of its bound: `_closing_in`'s)
        op = "~" + op[1:]
    if op[:1] == "≡":  # (arrays compared equal: `equality_guard2`'s)
        op = op[1:]
    if op[:1] == KINK_MARK:  # (`rules.ties.note_kink`)
        return f"{op[2:]} exactly at its kink"
    if op.startswith("tie in "):
        return (f"equal entries inside {op[7:]}, read with different weights after it: the reordering "
                f"has no derivative there unless the tied entries are one quantity's copies")
    if op[:1] == "?":
        return (f"a differentiated value tied with {shown}, both taken for differentiated, compared by `{op[1:]}`: "
                f"a branch boundary unless the two move together")
    if op[:1] == "~":
        return (f"a differentiated value within a step of {_FLIP:g} (relative to the inputs) of {shown}, compared "
                f"by `{op[1:]}`: the test takes its other branch that close (an iteration closing in on it, as a "
                f"bisection's `g(mid) < 0` in a helper, a method or a recursion; a point next to a branch boundary), "
                f"where the derivative of the branch taken is not the function's")
    if op.startswith("jump of "):
        return f"{op[8:]} of a differentiated value exactly on one of its jumps ({shown})"
    if op in ORDER_OPS:
        return (f"a differentiated value equal to {shown}, compared by `{op}`: a branch boundary, where the "
                f"code's branches meet and the derivative of the branch taken need not be the function's (a kink: "
                f"abs, max, a piecewise formula)")
    return (f"a differentiated value compared equal to {shown} (`{op}`): at such a point code takes a special "
            f"case, whose derivative need not be the function's (the special case's formula may not depend on "
            f"the value at all)")


def at_jump(kind: str, x, axis=None) -> bool:
    """x (a number or an array of them, no dual) lies exactly on a jump of floor, ceil, trunc or rint (kind):
    an integer (trunc's: not 0, where it is continuous), or a half-integer for rint; of an argsort ("order"):
    two equal entries along axis; of an argmax or argmin: the extreme along axis taken by two entries; of
    np.lexsort ("lexorder", x its keys): two entries tied in the primary key."""
    if kind == "lexorder":
        try:
            return lex_tied(x, -1 if axis is None else axis)
        except (TypeError, ValueError):
            return False
    if kind == "search":  # (a value exactly on an entry of the grid)
        try:
            return _search_hits(*x) is not None
        except (TypeError, ValueError):
            return False
    try:
        v = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        return False
    if kind == "order":  # (an argsort's jumps: two equal entries along its axis)
        if axis is None:
            v = v.ravel()
            axis = -1
        if v.ndim == 0 or v.shape[axis] < 2:
            return False
        s = np.moveaxis(np.sort(v, axis=axis), axis, -1)
        return bool(np.any(s[..., 1:] == s[..., :-1]))
    if kind in ("argmax", "argmin"):  # (its jumps: the extreme taken by two entries)
        return bool(np.any(np.sum(_extremes(v, kind, axis), axis=axis) > 1))
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(v)
        if kind == "rint":
            hit = finite & (v - np.floor(v) == 0.5)
        elif kind == "sign":
            hit = v == 0
        else:
            hit = finite & (v == np.floor(v))
            if kind == "trunc":
                hit &= v != 0
    return bool(np.any(hit))


JUMP_FUNCTIONS = {np.floor: ("floor", "np.floor"), np.ceil: ("floor", "np.ceil"), np.trunc: ("trunc", "np.trunc"),
                  np.fix: ("trunc", "np.fix"), np.rint: ("rint", "np.rint"), math.floor: ("floor", "math.floor"),
                  math.ceil: ("floor", "math.ceil"), math.trunc: ("trunc", "math.trunc"),
                  np.argsort: ("order", "np.argsort"), np.argmax: ("argmax", "np.argmax"),
                  np.argmin: ("argmin", "np.argmin"), np.lexsort: ("lexorder", "np.lexsort"),
                  np.searchsorted: ("search", "np.searchsorted"), np.digitize: ("search", "np.digitize"),
                  bisect.bisect_left: ("search", "bisect.bisect_left"), bisect.bisect_right: ("search", "bisect.bisect_right")}
"""The steps whose jumps `jump_guard` watches: function -> (the kind of its jumps, its name). An argsort's
are its ties: the permutation jumps where two entries part (`x[np.argsort(x)]` gave the stable order's side);
an argmax's (argmin's) are the extreme's ties; np.lexsort's its keys' (`rules.ties.lex_parting`); a search's
(np.searchsorted, np.digitize: "search") a value exactly on an entry of the grid, where the index steps (a table
lookup `fp[i - 1] + ...` at a grid point gave one segment's slope)."""
JUMP_PAIRS = {np.searchsorted: (0, 1), np.digitize: (1, 0), bisect.bisect_left: (0, 1), bisect.bisect_right: (0, 1)}
"""The searches' positions of (the grid, the values looked up) among their arguments: their jumps are those
of the two together."""


def jump_operands(f, args, tans=None):
    """(x, tangent) a `jump_guard` of f checks: its first argument's, or a search's (grid, values) pair and
    their tangents' (`JUMP_PAIRS`); (None, None) where the pair was not passed by position."""
    pair = JUMP_PAIRS.get(f)
    if pair is None:
        return args[0], (tans[0] if tans else None)
    i, j = pair
    if len(args) <= max(i, j):
        return None, None
    if not tans:
        return (args[i], args[j]), None
    ti, tj = (tans[i] if i < len(tans) else 0), (tans[j] if j < len(tans) else 0)
    still = (lambda t: t is None or type(t) is int and t == 0)
    return (args[i], args[j]), (None if still(ti) and still(tj) else (ti, tj))


def jump_active(f, mask: int) -> bool:
    """Reverse mode: a jump of f's can matter (its first argument, or either of a search's pair, active)."""
    return mask < 0 or bool(mask & (3 if f in JUMP_PAIRS else 1))


def _search_hits(grid, values):
    """(the values' flat positions exactly on an entry of the grid, that entry's flat position), or None."""
    g = np.asarray(plain(grid), dtype=float).ravel()
    v = np.asarray(plain(values), dtype=float).ravel()
    hit = np.flatnonzero(np.isin(v, g))
    if not hit.size:
        return None
    order = np.argsort(g, kind="stable")
    return hit, order[np.searchsorted(g[order], v[hit])]


def _directions(t, shape):
    """A tangent of a value of `shape` as a list of directions (a chunk's leading axis: one each; else the
    tangent broadcast to the shape), or None for none (a zero)."""
    t = plain(t)
    if t is None or type(t) is int and t == 0:
        return None
    t = np.asarray(t, dtype=float)
    return list(t) if t.ndim == len(shape) + 1 and t.shape[1:] == shape else [np.broadcast_to(t, shape)]


def _search_parts(x, tangent) -> bool:
    """A search's values on grid entries moving apart from them (their tangents differ; a chunk's directions
    leading, each checked)."""
    (grid, values), (tg, tv) = x, tangent
    hits = _search_hits(grid, values)
    if hits is None:
        return False
    hit, pos = hits
    shape_v, shape_g = np.shape(plain(values)), np.shape(plain(grid))

    dv, dg = _directions(tv, shape_v), _directions(tg, shape_g)
    n = max(len(dv or ()), len(dg or ()), 1)
    for k in range(n):
        a = 0.0 if dv is None else np.ravel(dv[k % len(dv)])[hit]
        b = 0.0 if dg is None else np.ravel(dg[k % len(dg)])[pos]
        if np.any(_differ(np.asarray(a), np.asarray(b))):
            return True
    return False
ORDER_METHODS = {"argsort": ("order", "ndarray.argsort"), "argmax": ("argmax", "ndarray.argmax"),
                 "argmin": ("argmin", "ndarray.argmin")}
"""`JUMP_FUNCTIONS` of the ndarray methods, by name (`x.argmax()`)."""


def _extremes(v, kind: str, axis=None):
    """The entries equal to the extreme along axis, for an argmax's (argmin's) ties (axis None: of the whole
    array, as numpy's default)."""
    pick = np.max if kind == "argmax" else np.min
    with np.errstate(invalid="ignore"):
        return v == pick(v, axis=axis, keepdims=True)


def axis_of(kind: str, args: tuple, kw: dict):
    """The axis an argsort (argmax, argmin) of `args` and `kw` (its array first) is taken along: its second
    argument or `axis=`, numpy's default else (-1 for argsort, None: the whole array, for the others)."""
    return args[1] if len(args) > 1 else kw.get("axis", -1 if kind in ("order", "lexorder") else None)


def _tie_jump(kind: str, name: str, x, tangent, axis) -> None:
    """`jump_guard` of an argsort (an argmax, argmin, a lexsort) at a tie, of a search at a grid point: forward
    mode refuses tied entries (along the axis; the extreme's; from the primary key down; a value and its grid
    entry) whose tangents differ (they part: `rules.ties`); reverse mode notes it for
    forward mode to tell, kept where forward mode cannot run or nothing checks (`?`: argsorts of data with
    ties are common, and most read the order alike whichever way a tie goes)."""
    if tangent is not None and kind == "search":
        # (a value moving across a grid entry: the index steps as `np.floor`'s does, a `StairJump` judged from the
        # two sides -- a cubic spline is smooth through its knot, rocketpy's `Function(..., "spline")`, refused
        # before; a linear interpolant's kink stays refused, its sides disagreeing)
        try:
            parts = _search_parts(x, tangent)
        except (TypeError, ValueError):
            raise _jump(name, x=x[1]) from None
        if parts:
            raise _jump(name, x=x[1])
        return
    if tangent is not None and kind == "lexorder":
        try:
            if isinstance(tangent, (tuple, list)):  # (a tangent per key)
                tangents = list(tangent)
            else:  # (keys as one 2-D array: its rows', after a chunk's directions where they lead)
                t = np.asarray(plain(tangent))
                tangents = list(t if t.ndim == np.ndim(plain(x)) else np.moveaxis(t, 0, 1))
            parts = lex_parting(x, tangents, -1 if axis is None else axis)
        except (TypeError, ValueError):
            raise _jump(name, tie=True, x=x) from None
        if parts:
            raise _jump(name, tie=True, x=lex_keys(x)[-1])  # (its primary key's values shown)
        return
    if tangent is not None:
        t = tangent
        while type(t).__name__ == "Dual":
            t = t.primal
        v = np.asarray(x, dtype=float)
        try:
            directions = _directions(t, v.shape) or []
        except (TypeError, ValueError):
            raise _jump(name, tie=True, x=x) from None
        if kind != "order":
            hit = _extremes(v, kind, axis)
            tied = np.sum(hit, axis=axis, keepdims=True) > 1
            for d in directions:
                top = np.max(np.where(hit, d, -np.inf), axis=axis, keepdims=True)
                low = np.min(np.where(hit, d, np.inf), axis=axis, keepdims=True)
                if np.any(tied & (top - low > _FLIP * np.maximum(np.abs(top), np.abs(low)))):
                    raise _jump(name, tie=True, x=x)
            return
        if axis is None:
            v, directions, axis = v.ravel(), [np.ravel(d) for d in directions], -1
        if parting_unsorted(v, directions, axis):
            raise _jump(name, tie=True, x=x)
        return
    hits = SPECIAL_HITS.get()
    if hits is not None:
        hits.append((_where(), x, f"?jump of {name}"))


def jump_guard(kind: str, name: str, x, tangent=None, axis=None, noted: bool = False) -> None:
    """Before `floor(x)` (and ceil, trunc, rint) of a differentiated x exactly on one of its jumps: the step
    jumps there and what the code does with it (an index, `t - floor(t)`) has no derivative, but a one-sided
    one came out silently (a resampler's `int(np.floor(n * a))` at n * a == 33.0: 57 where central
    differences give 6). Forward mode (a `tangent`) refuses where the tangent moves x off the jump; reverse
    mode notes it for forward mode to tell (`SPECIAL_HITS`), refused outside a recording that checks."""
    if tangent is None and type(x).__name__ == "Dual":  # (reverse mode under an outer derivative, `hessian`:
        tangent = x.tangent                              # its tangent moves the value across the jump)
    while type(x).__name__ == "Dual":  # (an outer derivative's: the inner value)
        x = x.primal
    if kind in ("order", "argmax", "argmin", "lexorder", "search"):  # (ties: refused where tied entries' tangents differ; reverse mode
        if kind == "search" and STAIRS_JUDGED.get():  # (a search's step judged from the two sides: `StairJump`)
            return
        if at_jump(kind, x, axis):            # has forward mode tell)
            _tie_jump(kind, name, x, tangent, axis)
        return
    if not at_jump(kind, x) or STAIRS_JUDGED.get():  # (judged from the two sides: `StairJump`)
        return
    if tangent is not None:
        t = tangent
        while type(t).__name__ == "Dual":
            t = t.primal
        try:
            v, t = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(t, dtype=float))
        except (TypeError, ValueError):
            raise _jump(name, x) from None
        hit = (v == 0) if kind == "sign" else (v == np.floor(v)) if kind != "rint" else (v - np.floor(v) == 0.5)
        if np.any(hit & (t != 0)):
            raise _jump(name, x)
        return
    hits = SPECIAL_HITS.get()
    if hits is None:
        raise _jump(name, x)
    # (`noted`: a cast to integers, `a.astype(int)`, whose values are often integers by construction, numpy's
    # histogram's bin of its largest sample: forward mode tells where it runs, and where it cannot the answer is
    # kept, as a tie's is)
    hits.append((_where(), x, f"?jump of {name}" if noted else f"jump of {name}"))


MOVING_TIE.append(lambda a, b, ta, tb: moving_tie(a, b, ta, tb))
STEP_JUMP.append(lambda name, x, t: jump_guard("floor", name, x, t))


def _cone_tip(name: str) -> None:
    """`rules.ties.cone_tip`'s: a `SpecialCase` (judged from the two sides of the point), not in a side's run,
    the rerun that judges, or a rule sampling the function."""
    if _judging():
        return
    raise SpecialCase(f"{name} of a zero vector that moves off it (a cone's tip: the norm moves as the size of "
                      "the step, which no derivative gives)", where=_where(), fix=_SPECIAL_FIX)


CONE_TIP.append(_cone_tip)


def _judging() -> bool:
    """Inside a side's run, the rerun that judges a special case, or a rule sampling the function: where a
    special point is not raised again."""
    return bool(STAIRS_JUDGED.get() or TIES_AT_SIDES.get() or JUMP_WATCH.get() is not None)


def _singular_still(name: str) -> None:
    """`rules.ties.singular_still`'s: a `SpecialCase` (judged from the two sides of the point), not in a side's
    run, the rerun that judges, or a rule sampling the function (as `_cone_tip`)."""
    if _judging():
        return
    raise SpecialCase(f"{name} at its singular point, whose argument's rate of change is 0 there (an infinite "
                      "slope times no change, which a change of second order, `sqrt(x*x + y*y)` at the origin, "
                      "makes the size of the step)", where=_where(), fix=_SPECIAL_FIX)


SINGULAR_STILL.append(_singular_still)

_KINKS = "kinks"  # (a `Run`'s key: where its first kink at a tie was met)


def _parting(a, b, ta, tb):
    """Whether a and b (values or duals) are tied somewhere where their tangents ta, tb (None for a constant;
    a chunk's directions lead) part; None where numpy cannot compare them."""
    try:
        with np.errstate(invalid="ignore"):
            tied = np.asarray(plain(a)) == np.asarray(plain(b))
            if not np.any(tied):
                return False
            ta = np.asarray(0.0 if ta is None else plain(ta), dtype=float)
            tb = np.asarray(0.0 if tb is None else plain(tb), dtype=float)
            return bool(np.any(tied & _differ(ta, tb)))
    except (TypeError, ValueError):
        return None


def _kink_tie(name: str, a, b, ta, tb) -> None:
    """`rules.ties.kink_tie`'s: the first kink of a forward-mode run met exactly at its tie where the two
    sides' tangents part is noted; a second is a `SpecialCase`, judged from the two sides of the point
    (whether it sits inside the first's result, which would make the rules' two conventions a wrong product,
    a run cannot see). Not in a side's run, the rerun that judges, or a rule sampling the function."""
    if STAIRS_JUDGED.get() or TIES_AT_SIDES.get() or JUMP_WATCH.get() is not None:
        return
    if _parting(a, b, ta, tb) is False:  # (values or tangents numpy cannot compare: taken as parting)
        return
    run = current_run()
    if run is None:
        return
    first = run.get(_KINKS)
    if first is None:
        run[_KINKS] = f"{name} at {_where()}"
        return
    raise SpecialCase(f"{name} exactly at its kink in a run that met another kink at its tie ({first}): each "
                      "rule's convention there (the mean of its two slopes) is the derivative of one kink, not of "
                      "a kink inside another's result", where=_where(), fix=_SPECIAL_FIX)


KINK_TIE.append(_kink_tie)


def _stair_jump():
    """The class of a refusal at a step's jump: `StairJump`, judged from the two sides by the entry point;
    a plain `SpecialPoint` under a rule sampling a function (`JUMP_WATCH`: scipy's quad bisects to an
    integrand's jump and refuses it itself)."""
    return SpecialPoint if JUMP_WATCH.get() is not None else StairJump


def moving_tie(a, b, ta, tb) -> None:
    """A comparison the rules make of values an outer derivative perturbs (forward over reverse, `hessian`:
    abs's adjoint, np.maximum's tie weights, a max's, run on duals; or two duals of one derivative compared
    equal), exactly at a tie whose two sides move apart (tangents ta, tb; None for a constant): the piecewise
    choice jumps there, and the derivative of the side taken came out (a second derivative at a kink of the
    first: 0, 1 or 2 for `abs(t - 3) * t` or `max(t, 3) * t` at 3, which have none). A `StairJump`: the
    entry point judges the function from the two sides of the point. Not under a rule sampling a function
    (`JUMP_WATCH`: scipy's quad finds an integrand's kinks itself)."""
    if STAIRS_JUDGED.get() or TIES_AT_SIDES.get() or JUMP_WATCH.get() is not None:
        return
    if _parting(a, b, ta, tb):
        raise StairJump(f"a tie of two values moving apart ({np.ravel(plain(a))[:3]!s:.60}): the choice made there "
                        "(a kink's subgradient, a tie's split, a special case taken where two values meet) is one "
                        "side's, and the derivative of that side would come out", where=_where(), fix=JUMP_FIX)


def _jump(name: str, x, tie: bool = False) -> "SpecialPoint":
    """The refusal at a step's jump: a `StairJump`, which forward mode's entry points judge from the two sides
    of the point (`t - np.floor(t)` inside a periodic function is continuous there); a tie's stays."""
    return (SpecialPoint if tie else _stair_jump())(
        f"{name} of a differentiated value exactly on one of its jumps ({np.asarray(x).ravel()[:3]!s:.60}): what "
        "the code computes from it need not have a derivative there, and the derivative of one side would "
        "come out", where=_where(),
        fix="differentiate at a point off the jump, or give the function a rule (`contexts.custom_adjoint`) "
            "that knows its derivative there")


def _still_at(value, op: str, tangent, close, leaves, mask=None, other=None, frame=None) -> bool:
    """A number equal to a constant (`if n == 0:`) whose rate there is an exact 0 computed from the inputs (a
    float tangent, not a constant's none): `n = v @ v` at v = 0 leaves 0 at second order, a norm's rule
    gives its kink's subgradient 0, and the special case's derivative came out silently (a rotation by the
    vector v, `if angle == 0: return t`, at v = 0: 0 for 1.5). A `SpecialCase`, judged from the two sides;
    an iteration's exit (`leaves`) is `converged`'s, a tie at a side's run is no special case there. An
    array's entries too, where `mask` (the entries equal) meets a rate of exactly 0 in every direction: the
    vectorised rotation's `np.where(norm(V, axis=1) == 0, 1.0, n)` at a zero row was 0 silently; a constant
    entry (padding) meeting the test is judged the same way, at the cost of the sides' runs."""
    if op not in _STILL_TESTS or close is not None or leaves is not None or TIES_AT_SIDES.get() \
            or JUMP_WATCH.get() is not None or op in ORDER_OPS and STAIRS_JUDGED.get():
        return False
    while type(value).__name__ == "Dual":
        value = value.primal
    rate = tangent
    while type(rate).__name__ == "Dual":
        rate = rate.primal
    if op in ORDER_OPS:  # (at its bound, or within a step of relative size _FLIP of it: `abs(1 - q @ q) < 1e-14`
        # of a unit quaternion, whose abs at 0 gives the kink's rate 0: pyquaternion's `is_unit`, `n < eps`)
        if type(value) not in _FLOATS and not (type(value) is np.ndarray and value.dtype.kind == "f"):
            return False
        if type(rate) in _FLOATS and rate != 0.0 and type(value) in _FLOATS:
            return False  # (a number that moves, every ordering's common case: the answer below, cheaply first --
            # the distance's arrays and the history cost 2.2x on a loop of comparisons)
        if type(tangent).__name__ == "Dual" or frame is not None and _met_rates(frame):
            return False  # (an iteration's residual whose rate fell to 0 with it, as `rounding_residue`'s: a
            # root tracked by Newton's steps, `if G(y, x) > 0` at the root; under a second derivative, as before)
        while type(other).__name__ == "Dual":
            other = other.primal
        try:
            with np.errstate(invalid="ignore"):
                mask = np.abs(np.asarray(value, dtype=float) - np.asarray(other, dtype=float)) \
                    <= _FLIP * _input_scale()
        except (TypeError, ValueError):
            return False
        if not mask.any():
            return False
        if type(value) in _FLOATS:
            mask = None
    if type(value) is np.ndarray and value.dtype.kind == "f" and mask is not None:
        if type(rate) is not np.ndarray or rate.dtype.kind != "f":
            return False
        still = rate == 0.0
        if still.ndim == np.ndim(mask) + 1:
            still = still.all(axis=0)
        try:
            return bool(np.any(still & mask))
        except ValueError:
            return False
    if type(value) not in _FLOATS:
        return False
    if type(rate) in _FLOATS:
        return rate == 0.0
    return type(rate) is np.ndarray and rate.dtype.kind == "f" and not rate.any()


_STILL_TESTS = frozenset({"==", "!=", "in", "not in", "<", "<=", ">", ">="})
_SPECIAL_FIX = ("differentiate at a point off the special value (`x + 1e-9`), or give the function a rule "
                "(`contexts.custom_adjoint`) that knows its derivative there")


def _met_rates(frame) -> bool:
    """Whether the ordering at frame's line closed in on its bound before in this forward-mode run, moving
    (`closing_in` notes each visit): a nonzero rate met, and the last visit's gap a thousandth of the largest
    or less -- an iteration's residual converging, not a loop over data whose earlier items moved (a list of
    quaternions, one of them a unit one: judged)."""
    hist = current_run()
    t = None if hist is None else hist.get((frame.f_code, frame.f_lineno))
    return t is not None and t.rate > 0.0 and t.gap <= _FELL * t.topgap


def _judged(op: str) -> bool:
    """An equality's special case or an ordering's tie met again where the function was judged continuous
    from the two sides of the point (`SpecialCase`, `STAIRS_JUDGED`): the branch's own derivative is checked
    against the sides'."""
    return (op in _EQUALITIES or op in ORDER_OPS) and STAIRS_JUDGED.get()


def _special(other, op: str) -> "SpecialPoint":
    """The refusal at a special point: at an equality (`==`, `!=`, `in`) or an ordering's tie a `SpecialCase`,
    which forward mode's entry points judge from the two sides of the point (pyquaternion's `if angle == 0:`
    before a formula continuous through it; py_vollib's `if x > 0:` put-call flip at the money, Kepler's
    equation solved by halves at M = pi, a B-spline's basis at a knot: both branches meet there, refused
    before); a plain `SpecialPoint` under a rule sampling a function (`JUMP_WATCH`)."""
    kind = SpecialCase if (op in _EQUALITIES or op in ORDER_OPS) and JUMP_WATCH.get() is None else SpecialPoint
    refusal = kind(
        special_case(other, op), where=_where(),
        fix="differentiate at a point off the special value (`x + 1e-9`), or give the function a rule "
            "(`contexts.custom_adjoint`) that knows its derivative there")
    refusal.op = op  # (an ordering's tie: a validation's, at the edge of f's domain, `forward.api.domain_edge`)
    return refusal


def _may_carry(v) -> bool:
    """v is a number or array of floats (or complex), or holds one: what an equality can single out (a
    tuple or list of them too: `(x,) == (0.3,)`, `x.tolist() == c`)."""
    if isinstance(v, (float, complex, np.floating, np.complexfloating)):
        return True
    if type(v) is tuple or type(v) is list:
        return any(_may_carry(e) for e in v)
    if isinstance(v, np.ndarray):
        return v.dtype.kind in "fc"
    kind = UNCHANGEABLE_WHEN.get(type(v))  # (forward mode's Dual: a number's or an array's)
    if kind is not None:
        return True
    if FLOAT_HOLDERS:  # (a pandas Series of floats: `s >= 0.3`, checked as its array's)
        for cls, holds in FLOAT_HOLDERS.items():
            if isinstance(v, cls):
                return holds(v)
    return isinstance(v, numbers.Number) and not isinstance(v, numbers.Integral)


def eager_inplace(v, name: str, method: str) -> None:
    """A generator run eagerly changes `name` by an in-place operator (`a += v`, reverse mode's generators:
    `__od_eager_inplace__` before it, where `name` may hold what its caller sees — a parameter's object):
    refused where the value changes in place (an array, a list: its type has `method`, `__iadd__`), as
    its caller would read the last state between items; a number's operator rebinds, and passes."""
    t = type(v)
    if t in _UNCHANGEABLE or not hasattr(t, method) or (t in UNCHANGEABLE_WHEN and UNCHANGEABLE_WHEN[t](v)):
        return
    raise EagerIterationError(
        f"generator changing `{name}` ({t.__name__}) in place with an in-place operator, which its caller may "
        f"read between items: reverse mode runs a generator to its end when it is called, so the caller would "
        f"see only the last change", where=_where(),
        fix=f"compute a new value (`{name} = {name} + ...`), yield the values instead, or return a list")


def eager_raised(e) -> None:
    """A generator run eagerly (reverse mode runs one to its end when it is made) raised e: refused, as its
    consumer may have stopped before the item that raises (`__od_eager_raised__`)."""
    raise EagerIterationError(
        f"a generator raised {type(e).__name__} ({str(e)[:80]}) while reverse mode ran it to its end when it was "
        f"made: its consumer may stop before the item that raises", where=_where(),
        fix="bound the generator to the items wanted (a count, a test before the item), or differentiate in "
            "forward mode (`contexts.jacfwd`, `derivative`), which draws items as the code asks") from e


_GENERATOR_KINDS = (types.GeneratorType, collections.abc.Generator)


def asks_a_generator(x, cls) -> bool:
    """`isinstance(x, cls)` asks whether x is a generator, of a generator run eagerly (a tuple's iterator: reverse
    mode's generators, `eager`), which Python's would answer otherwise (`isinstance(g, types.GeneratorType)`,
    a library's `inspect.isgenerator(items)` branch: another value, gen21 W11)."""
    if type(x) is not _TUPLE_ITERATOR:
        return False
    kinds = cls if type(cls) is tuple else (cls,)
    return any(isinstance(k, type) and issubclass(k, _GENERATOR_KINDS) for k in kinds)


def generator_asked(x, cls) -> None:
    if asks_a_generator(x, cls):
        raise EagerIterationError(
            "`isinstance` asks whether a value is a generator, of one reverse mode ran to its end when it was made "
            "(an iterator over its items, no generator): the code would take another branch", where=_where(),
            fix="build the list of values first (`list(gen)`), or differentiate in forward mode (`derivative`, "
                "`jacfwd`)")


def endless(count: int) -> None:
    """Before a generator run eagerly (reverse mode runs one to its end when it is called) keeps its next
    item: refused past `YIELDS_KEPT` items, where an endless one (`while True: yield x`, read by `next`)
    would run until memory ran out."""
    if count >= YIELDS_KEPT:
        raise EagerIterationError(
            f"a generator yielded more than {YIELDS_KEPT:,} items: reverse mode runs a generator to its end "
            f"when it is called, and an endless one never ends", where=_where(),
            fix="give the generator a bound (a count of the items wanted), or differentiate in forward mode "
                "(`contexts.jacfwd`, `derivative`), which draws items as the code asks")


YIELDS_KEPT = 1 << 17  # (about a second of recording; an eager generator longer than that is a slow one too)


def live(kind: str, fns: tuple, *objs) -> bool:
    """`__od_live__`: whether a loop the lowering wrote as an index loop (`Lowerer.live_loop`) runs as one:
    `fns` are the loop's `enumerate`, `zip`, `iter` or `reversed` as the function finds them (the builtins,
    not its own), the objects lists (or list subclasses iterating and indexing as lists), tuples, arrays (not
    0-d, not a subclass, whose iteration may be its own), or for a dict's loop ("items", "values") a plain
    dict."""
    kind = kind.lstrip("?!")  # ("?items": a change the lowering did not see, only may be; "!": through an item)
    for f in fns:
        if f is not enumerate and f is not zip and f is not iter and f is not reversed:
            return False
    if kind == "items" or kind == "values":
        if len(objs) != 1 or not isinstance(objs[0], dict):
            return False
        t = type(objs[0])  # (a dict subclass reading and iterating as a dict: pint's udict, a Counter)
        return t in _PLAIN_DICTS or all(getattr(t, m) is getattr(dict, m)
                                        for m in ("__getitem__", "__iter__", "__len__", "keys", "items", "values"))
    for o in objs:
        while type(o).__name__ == "Dual":  # (an array of forward mode's, under `hessian`: its value's type)
            o = o.primal
        t = type(o)
        if t is list or t is tuple or t is np.ndarray and o.ndim or t is range:
            continue  # (a range beside a list: `zip(rows, range(2))`, indexed as the loop goes)
        if isinstance(o, list) and t.__iter__ is list.__iter__ and t.__getitem__ is list.__getitem__ \
                and t.__len__ is list.__len__:
            continue  # (a list subclass of its own fields, iterated and indexed as a list)
        return False
    return True


def more_back(at: int, seq) -> bool:
    """`__od_more_back__`: another item of `reversed(seq)` at position `at` (counting down; a list that
    shrank below it ends the loop, as its reverse iterator does)."""
    return 0 <= at < len(seq)


_PLAIN_DICTS = (dict, collections.OrderedDict, collections.defaultdict)


def more(k: int, *seqs) -> bool:
    """`__od_more__`: another item of each sequence at position k (as their iterators ask, when drawn)."""
    for s in seqs:
        if k >= len(s):
            return False
    return True


def more_keys(k: int, keys: list, d: dict, size: int) -> bool:
    """`__od_more_keys__`: another key of the keys listed before a loop over a dict's items; a dict whose
    size the loop changed raises as Python's iteration does."""
    if len(d) != size:
        raise RuntimeError("dictionary changed size during iteration")
    # (a key deleted and another added, or one taken out and put back, is appended: the last key tells at
    # once; the whole order is compared once, at the end: each step's full comparison made the loop quadratic)
    if k and (next(reversed(d)) != keys[-1] or k >= len(keys) and list(d) != keys):
        raise EagerIterationError(
            "a loop over a dict whose body takes keys out and puts others (or the same) in: Python's iteration "
            "follows the dict's table, which the differentiated loop does not", where=_where(),
            fix="loop over a copy of the keys (`for k in list(d)`), or collect the changes and apply them after")
    return k < len(keys)


def flat_index(x, *k):
    """`__od_flat_index__`: given no k, whether x's `.flat` is an array's flat iterator (numpy's, of an array class
    that keeps it, or a dual array's); given k, the positions in x's shape of `x.flat[k]` (an int, a slice, an
    integer or boolean array over x's items in C order), for the store `x.flat[k] = v` written as `x[positions] =
    v` (`Lowerer.flat_store`)."""
    if not k:
        if type(x).__name__ == "Dual":
            while type(x).__name__ == "Dual":
                x = x.primal
            return isinstance(x, np.ndarray)
        return isinstance(x, np.ndarray) and getattr(type(x), "flat", None) is np.ndarray.flat
    return np.unravel_index(np.arange(np.size(x))[k[0]], np.shape(x))


HELPERS = {"__od_flat_index__": flat_index, "__od_live__": live, "__od_more__": more, "__od_more_back__": more_back, "__od_more_keys__": more_keys, "__od_keys__": list,
           "__od_size__": len, "__od_endless__": endless, "__od_unpack__": unpack, "__od_iter__": iter, "__od_eager__": eager, "__od_eager_raised__": eager_raised, "__od_eager_guard__": eager_guard, "__od_iter_guard__": iter_guard, "__od_lazy_stamp__": lazy_stamp, "__od_lazy_guard__": lazy_guard,
           "__od_eager_inplace__": eager_inplace, "__od_eager_items__": eager_items, "__od_equality_guard__": equality_guard, "__od_own_test__": own_test, "__od_compared__": compared, "__od_equality_guard_fd__": equality_guard_fd, "__od_equality_guard2__": equality_guard2, "__od_equality_guard2_fd__": equality_guard2_fd, "__od_order_watch__": order_watch_reverse, "__od_order_watch_fd__": order_watch, "__od_tuple__": tuple, "__od_int_arg__": int_arg,
           "__od_stairs__": staircase_reverse, "__od_stairs_fd__": stairs_fd, "__od_operator__": operator, "__od_divisor_jump__": divisor_jump,
           "__od_locals__": locals, "__od_text__": text, "__od_fmt__": formatted, "__od_parsed__": parsed,
           "__od_text_of__": text_of, "__od_text_map__": texts_mapped, "__od_text_join__": text_join, "__od_printed__": printed, "__od_text_mod__": text_mod, "__od_inverted__": inverted,
           # the builtins the generated code calls, by names of their own (a parameter may be called `locals`, a
           # local `type`, `slice` or `reversed`: sweep Q's heartpy, `slice = data[i[0]:i[1]]`, crashed both modes)
           "__od_type__": type, "__od_float__": float, "__od_int__": int, "__od_slice__": slice,
           "__od_reversed__": reversed, "__od_getattr_of__": getattr}


_EQUALITY_OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in",
                 ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}  # (orderings: their ties)
_EQUALITY_CALLS = {"equal": "==", "not_equal": "!=", "eq": "==", "ne": "!=",  # np.equal, operator.eq
                   "less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">=",
                   "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
                   # whole-array equality (a memo cache's `np.array_equal(z, self._last_z)`): special where
                   # all of it is equal. Approximate equality too, where it holds exactly: `np.allclose`
                   # holds on a neighbourhood, where the code's derivative is the cached value's (0), but at a
                   # memo cache's own key (ASE's calculators compare positions by `np.allclose(.., 1e-15)`:
                   # every gradient after a plain call came out 0) it is the code's special case; a
                   # validation check that holds exactly of a value that moves is one too (the branch
                   # not taken would normalise). Where it holds only approximately: not checked.
                   "array_equal": "all==", "array_equiv": "all==", "allclose": "all==", "isclose": "=="}
_SIGN_TESTS = {"sign": 0, "signbit": 0, "heaviside": 0, "copysign": 1}  # (the argument whose sign is taken)
_CLOSE = {"allclose": ("rtol", "atol", 1e-5, 1e-8), "isclose": ("rtol", "atol", 1e-5, 1e-8)}  # (their bands)


_WHOLE_OPS = frozenset({"all=="})  # (checked with two active operands too: a cache's stale key)


def _equality_test(v):
    """(a, b, op, close) of `a == b` (`!=`, `in`, `not in`) or `np.equal(a, b)` (`np.not_equal`, `operator.eq`,
    `operator.ne`, `np.allclose`, ...) in the lowered form, or None; close: for approximate equality, the
    expression of its (rtol, atol), else None."""
    if isinstance(v, ast.Compare) and len(v.ops) == 1 and type(v.ops[0]) in _EQUALITY_OPS:
        return v.left, v.comparators[0], _EQUALITY_OPS[type(v.ops[0])], None
    if isinstance(v, ast.Call) and v.args and not any(isinstance(a, ast.Starred) for a in v.args):
        f = v.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        at = _SIGN_TESTS.get(name)
        if at is not None and len(v.args) > at:  # (a sign is an ordering against 0: `np.sign(g(m)) == -1`
            return v.args[at], ast.Constant(0.0), "<", None  # in a bisection's step, its tie and closing in)
    if isinstance(v, ast.Call) and 2 <= len(v.args) and all(k.arg for k in v.keywords) and not any(
            isinstance(a, ast.Starred) for a in v.args):  # (keywords: `out=mask`, `where=`)
        f = v.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        op = _EQUALITY_CALLS.get(name)
        if op is None or len(v.args) > (4 if name in _CLOSE else 2):
            return None
        close = None
        if name in _CLOSE:
            r, a, r0, a0 = _CLOSE[name]
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "math":
                r, a, r0, a0 = "rel_tol", "abs_tol", 1e-9, 0.0
            given = {k.arg: k.value for k in v.keywords}
            rtol = v.args[2] if len(v.args) > 2 else given.get(r, ast.Constant(r0))
            atol = v.args[3] if len(v.args) > 3 else given.get(a, ast.Constant(a0))
            close = ast.Tuple(elts=[rtol, atol], ctx=ast.Load())
        return v.args[0], v.args[1], op, close
    return None


# tests of a value's being zero (its truth): `if x:`, `not x`, `x.any()`, `np.count_nonzero(d)`, ... on a
# differentiated float are `x != 0` (`sin(x) if x else 0.0`: at 0 the special case's derivative came out, 0
# where it is 1). `any` holds on a neighbourhood unless all of it is zero ("all=="); the rest single out
# each zero.
_ZERO_TESTS = {"any": "all==", "all": "each==", "bool": "==", "count_nonzero": "each==", "nonzero": "each==",
               "flatnonzero": "each==", "argwhere": "each=="}  # ("each==": item by item, of a list too)


def _zero_test(s, is_active):
    """(value, op) of a statement testing an active value's truth, or None: `if t:` / `if not t:` (the
    lowered form's tests, also of `and`, `or`, `a if t else b`, a loop's), `u = not t`, `u = t.any()`,
    `u = np.any(t)` (`all`, `bool`, `count_nonzero`, `nonzero`, `flatnonzero`, `argwhere`)."""
    if isinstance(s, ast.If):
        t = s.test
    elif isinstance(s, ast.Assign):
        t = s.value
        if isinstance(t, ast.Call) and not any(isinstance(a, ast.Starred) for a in t.args):
            f = t.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            op = _ZERO_TESTS.get(name)
            if op is None:
                return None
            if len(t.args) == 1 and not (isinstance(f, ast.Attribute) and is_active(f.value)):
                t = t.args[0]
                if (isinstance(t, ast.Call) and isinstance(t.func, ast.Name) and t.func.id == "__od_primal__"
                        and len(t.args) == 1):  # (`bool(x)` asks its question of the primal: `activity.ask_primals`)
                    t = t.args[0]
            elif not t.args and isinstance(f, ast.Attribute) and name != "bool":
                t = f.value
            else:
                return None
            return (t, op) if isinstance(t, ast.Name) and is_active(t) else None
        if not (isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not)):
            return None
    else:
        return None
    if isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not):
        t = t.operand
    return (t, "==") if isinstance(t, ast.Name) and is_active(t) else None


def equality_guards(stmts: list, is_active, tangent=None, valued=None, exits=None) -> list:
    """stmts with a guard before each `t = a == b` (or `!=`) of the lowered form where exactly one operand
    is active (`is_active(atom)`: the mode's own activity), the active one first: reverse mode's
    `__od_equality_guard__(active, other, op)`, or, given `tangent(atom)` (an expression of its tangent),
    forward mode's `__od_equality_guard_fd__(active, other, op, tangent)`. Two active operands (`x != x`,
    a NaN test; a tie) are not checked; `x in c` is, for an active x and a builtin container c, and so
    are `np.equal(x, c)`, `np.not_equal`, `operator.eq` and `operator.ne`. An ordering (`<`, `<=`, `>`, `>=`,
    `np.less`, `operator.lt`, ...) is checked for a tie the same way: its two branches meet there. Given
    `valued(atom)` (reverse mode's: an operand carrying a derivative, not one that only steers), a rich
    comparison of such an operand is followed by `__od_compared__` on its result."""
    out = []
    exits = exit_tests(stmts) if exits is None else exits  # (the tests ending a loop, `converged`)
    whole = _whole_tests(stmts)
    for s in stmts:
        if getattr(s, "_od_assert", False):  # (an assert's test chooses no value: `lower.stmt_Assert`)
            out.append(s)
            continue
        v = getattr(s, "value", None)
        test = _equality_test(v) if isinstance(s, ast.Assign) else None
        if test is not None:
            a, b, op, close = test
            ia, ib = is_active(a), is_active(b)
            if op in ("==", "!=") and ia != ib and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
                    and whole.get(s.targets[0].id) == op:
                # (`np.all(np.equal(r1, r2))`: one test of all of it, see `_whole_tests`; not of two active arrays,
                # whose `==` is noted softly, as a library's alignment check: numpy's Polynomial domains)
                op = "all=="
            if op in ("in", "not in"):  # (`x in c`: the item, checked in a builtin container)
                if ib and tangent is None:  # (a container of a class's own: its `__contains__`, `own_test`)
                    out.append(_guard(s, "__od_own_test__", (b, a), op, None, None))
                ib = False
            if ia and ib and op in ("==", "!=") and tangent is None:
                out.append(_guard(s, "__od_own_test__", (a, b), op, None, None))
            if ia and ib and (op in _WHOLE_OPS or op in ("==", "!=") and not (
                    isinstance(a, ast.Name) and isinstance(b, ast.Name) and a.id == b.id)):  # (`x != x`: NaN's test)
                # (two active: a memo cache's stale key against the argument; `x == self.t` in a method, its
                # object taken as active: thermo's `if T == self.T_cached`, the cached value's derivative 0)
                out.append(_guard(s, "__od_equality_guard2__", (a, b), op, close, tangent))
            elif ia and ib and op in ORDER_OPS:  # (no tie to check: noted for a rule sampling the function)
                # (a loop's end, its bound perhaps a number at run time: `converged`)
                out.append(_ending(_guard(s, "__od_order_watch__", (a, b), op, None, tangent), s, exits))
            elif ia != ib:
                guard = _guard(s, "__od_equality_guard__", (a, b) if ia else (b, a), op, close, tangent)
                out.append(_ending(guard, s, exits) if ia and op in ORDER_OPS else guard)
            if valued is not None and isinstance(v, ast.Compare) and op in _OWN_COMPARED and (valued(a) or valued(b)):
                # (reverse mode: the result of a class's own comparison, `V(x) < V(y)` making a V, checked)
                out.append(s)
                out.append(ast.copy_location(ast.Expr(value=ast.Call(
                    func=ast.Name(id="__od_compared__", ctx=ast.Load()),
                    args=[ast.Name(id=s.targets[0].id, ctx=ast.Load()), a, b], keywords=[])), s))
                continue
        else:
            zero = _zero_test(s, is_active)
            if zero is not None:  # (a truth test: `t != 0`)
                out.append(_guard(s, "__od_equality_guard__", (zero[0], ast.Constant(0.0)), zero[1], None, tangent))
        out.append(s)
    return out


def _whole_tests(stmts: list) -> dict:
    """name -> "==" for a temporary of the lowered form holding an elementwise `==` read only by `np.all(t)`,
    `t.all()` or `all(t)` (and "!=" for one read only by `any`): the test is of all of the arrays' entries at
    once, special only where all are equal (lamberthub's `np.all(np.equal(r1, r2))` of two positions whose z
    entries are both 0 was refused as a tie of those, though the test holds on a neighbourhood)."""
    reads: dict = {}
    for n in ast.walk(ast.Module(body=list(stmts), type_ignores=[])):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            reads[n.id] = reads.get(n.id, 0) + 1
    out = {}
    for s in stmts:
        if not (isinstance(s, ast.Assign) and isinstance(s.value, ast.Call)) or s.value.keywords:
            continue
        f, args = s.value.func, s.value.args
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if name not in ("all", "any"):
            continue
        if len(args) == 1 and isinstance(args[0], ast.Name) and not isinstance(f, ast.Attribute) or (
                len(args) == 1 and isinstance(args[0], ast.Name) and isinstance(f.value, ast.Name)
                and f.value.id in ("np", "numpy")):
            t = args[0].id
        elif not args and isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            t = f.value.id
        else:
            continue
        if t.startswith("_od_t") and reads.get(t) == 1:
            out[t] = "==" if name == "all" else "!="
    return out


def _ending(guard: ast.Expr, s, exits: dict) -> ast.Expr:
    """guard told, by `leaves=`, the outcome of s's test that ends a loop (`exit_tests`), where it does."""
    name = s.targets[0].id
    if name in exits:
        guard.value.keywords.append(ast.keyword(arg="leaves", value=ast.Constant(exits[name])))
    return guard


def exit_tests(stmts, returns: bool = False) -> dict:
    """name -> the truth of the test variable that ends a loop, among stmts: `if t: break` (True), `if not
    t: break` (False: the lowered form's `while t:`); with `returns` (stmts inside a loop), `if t: return`
    too (networkx's power iterations)."""
    out = {}
    ends = (ast.Break, ast.Return) if returns else ast.Break
    for s in stmts:
        if isinstance(s, ast.If) and not s.orelse and s.body and isinstance(s.body[-1], ends):
            t = s.test
            if isinstance(t, ast.Name):
                out[t.id] = True
            elif isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not) and isinstance(t.operand, ast.Name):
                out[t.operand.id] = False
    if out:  # (`if abs(r) < tol and i < n: break`: the lowered `and`/`or` copies each part's test into the
        copies = []  # one the `if` reads, `t5 = t7`; each part ends the loop as the whole does)
        todo = list(stmts)
        while todo:
            s = todo.pop()
            if isinstance(s, ast.If):
                todo.extend(s.body)
                todo.extend(s.orelse)
            elif isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
                    and isinstance(s.value, ast.Name):
                copies.append((s.targets[0].id, s.value.id))
        grown = True
        while grown:
            grown = False
            for target, source in copies:
                if target in out and source not in out:
                    out[source] = out[target]
                    grown = True
    return out


def _guard(s, name: str, operands: tuple, op: str, close, tangent) -> ast.Expr:
    """`name(a, b, op[, close=...])` before statement s; forward mode's (`tangent` given) `name_fd` with the
    tangents of the operands it checks (the first, or both for a two-active guard or ordering) after op."""
    args = [*operands, ast.Constant(op)]
    if tangent is not None:
        checked = operands if name in ("__od_equality_guard2__", "__od_order_watch__") else operands[:1]
        args += [tangent(x) for x in checked]
        name = name[:-2] + "_fd__"
    keywords = [] if close is None else [ast.keyword(arg="close", value=close)]
    return ast.copy_location(ast.Expr(value=ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=args,
                                                     keywords=keywords)), s)


# -- the rules of the builtins that test truth and parse text, checked as the lowered form's tests are --
# (here, not in `contexts.rules`: the rules know nothing of the engines' special points)

def _truth_frule(fn, op: str):
    """Forward rule of `bool(x)` (`any`, `all`): a test of x's being zero (`x != 0`), refused where x is
    zero and its tangent moves it (`sin(x) if bool(x) else 0.0` at 0)."""
    def truth_frule(tangents, *args, **kwargs):
        y = fn(*args, **kwargs)
        t = tangents[0] if tangents and len(args) == 1 else None
        if t is not None:
            x = args[0]
            if type(x) is list or type(x) is tuple:  # (`all([a, b])`: each item's)
                try:
                    x, t = np.asarray(x, dtype=float), np.asarray([0.0 if u is None else u for u in t], dtype=float)
                except (TypeError, ValueError):
                    return y, None
            equality_guard_fd(x, 0.0, op, t)
        return y, None
    truth_frule.__name__ = truth_frule.__qualname__ = f"{fn.__name__}_frule"
    return truth_frule


def _parsed_first(fn):
    """fn (float's, complex's value or forward rule) checking a text argument first: one made from a
    differentiated number is refused (`parsed`), reached as a differentiated value's parse (reverse mode
    runs the rule's `impl`; the tangent twin calls float on the text)."""
    def parsing(*args, **kwargs):
        text = args[1] if fn.__name__.endswith("frule") else args[0] if args else None
        if isinstance(text, str):
            parsed(text)
        return fn(*args, **kwargs)
    parsing.__name__ = parsing.__qualname__ = fn.__name__
    return parsing


def _checked_builtins() -> None:
    from ..rules.registry import registry
    # the text helpers the lowered form calls (`__od_text__` around a differentiated value's `.format`): their
    # results carry no derivative, and the engines never transform them (a jacobian's second sweep undid
    # their memory's store: radvel's `'{}{}'.format(key, n)`)
    registry.nondifferentiable(text, text_of, formatted, parsed)
    for fn, op in ((builtins.bool, "=="), (builtins.any, "all=="), (builtins.all, "each==")):
        registry.frule(fn)(_truth_frule(fn, op))
    for fn in (builtins.float, builtins.complex):
        rule = registry.get(fn)
        registry.set(fn, impl=_parsed_first(rule.impl or fn))
        if rule.frule is not None:
            rule.frule = _parsed_first(rule.frule)


_checked_builtins()


# -- a dataclass's generated __init__ (it has no source) as Python code the engines transform ----------------

def dataclass_plan(cls, nargs: int, kwnames: tuple) -> tuple:
    """How the generated `__init__` of dataclass cls, given nargs positional arguments and kwnames, sets
    each field: ((name, "arg", i) | (name, "kw", key) | (name, "default", value) | (name, "factory", fn),
    ...), then the InitVar names passed on to `__post_init__`, and whether the class is frozen. (No values:
    the differentiated ones are taken from the arguments by the code that runs the plan.)"""
    import dataclasses
    fields = [f for f in cls.__dataclass_fields__.values() if f._field_type is not dataclasses._FIELD_CLASSVAR]
    positional = [f for f in fields if f.init and not f.kw_only]
    if nargs > len(positional):
        raise TypeError(f"{cls.__name__}.__init__() takes {len(positional) + 1} positional arguments but "
                        f"{nargs + 1} were given")
    plan = []
    for f in fields:
        if f.init and not f.kw_only and positional.index(f) < nargs:
            plan.append((f.name, "arg", positional.index(f)))
        elif f.init and f.name in kwnames:
            plan.append((f.name, "kw", f.name))
        elif f.default is not dataclasses.MISSING:
            plan.append((f.name, "default", f.default))
        elif f.default_factory is not dataclasses.MISSING:
            plan.append((f.name, "factory", f.default_factory))
        elif f.init:
            kind = "keyword-only" if f.kw_only else "positional"  # (Python's own words)
            raise TypeError(f"{cls.__qualname__}.__init__() missing 1 required {kind} argument: {f.name!r}")
    extra = set(kwnames) - {f.name for f in fields if f.init}
    if extra:
        raise TypeError(f"{cls.__name__}.__init__() got an unexpected keyword argument {sorted(extra)[0]!r}")
    initvars = tuple(f.name for f in fields if f._field_type is dataclasses._FIELD_INITVAR)
    return tuple(plan), initvars, cls.__dataclass_params__.frozen


def dataclass_init_is_code(cls, has_source) -> bool:
    """Whether dataclass cls's generated `__init__` must run as code (`dataclass_init`) for its derivative:
    where its `__post_init__` computes from the fields, or where a field's store runs Python of the class's
    own — a `__setattr__` of its own (astral's `Observer` stores `float(value)` through `super()`; one storing
    `sin(value)` gave the argument's cotangent unchanged in reverse mode: 3.0 for 0.80, silently) or a data
    descriptor's Python `__set__` under a field's name. (Natively the fields are taken as the arguments
    passed, true only of a plain store.) Asked at every construction: kept per class and `has_source`."""
    key = (cls, has_source)
    known = _INIT_IS_CODE.get(key)
    if known is None:
        if len(_INIT_IS_CODE) > 4096:
            _INIT_IS_CODE.clear()
        known = _INIT_IS_CODE[key] = _init_is_code(cls, has_source)
    return known


_INIT_IS_CODE: dict = {}  # (class, has_source) -> `dataclass_init_is_code`'s answer
overdub.passes.on_clear(_INIT_IS_CODE.clear)  # (emptied with the engines' caches: `contexts.opaque` marks one)


def _init_is_code(cls, has_source) -> bool:
    post = getattr(cls, "__post_init__", None)
    if type(post) is types.FunctionType and has_source(post):
        return True
    if cls.__setattr__ is not object.__setattr__ and not cls.__dataclass_params__.frozen:
        return True  # (a frozen class's generated code stores through object.__setattr__ itself)
    for name in cls.__dataclass_fields__:
        attr = inspect.getattr_static(cls, name, None)
        if hasattr(type(attr), "__set__") and not isinstance(attr, (types.MemberDescriptorType,
                                                                    types.GetSetDescriptorType)):
            return True
    return False


def dataclass_init(self, *args, **kwargs):
    """What a dataclass's generated `__init__` does (`dataclass_plan`), as code: each field set (through
    `object.__setattr__` for a frozen class), then `__post_init__` with the InitVars. Transformed, what
    `__post_init__` computes from the fields is differentiated (run natively, it was refused: pycoare's
    inputs, pyfeng's models)."""
    dataclass_init_as(type(self), self, *args, **kwargs)


def dataclass_init_as(cls, self, *args, **kwargs):
    """`dataclass_init` of the generated `__init__` of cls, one of self's classes: cls's fields set, as that
    code sets them (a subclass's own `__init__` calling it by `super().__init__(tdb=tdb, rh=rh)`, the subclass
    a dataclass of its own, maybe with fields more: pythermalcomfort's input classes, refused in both modes)."""
    plan, initvars, frozen = dataclass_plan(cls, len(args), tuple(kwargs))
    passed = {}
    for name, how, where in plan:
        if how == "arg":
            value = args[where]
        elif how == "kw":
            value = kwargs[where]
        elif how == "default":
            value = where
        else:
            value = where()
        if name in initvars:
            passed[name] = value
        elif frozen:
            object.__setattr__(self, name, value)
        else:
            setattr(self, name, value)
    if getattr(cls, "__post_init__", None) is not None:  # (the generated code calls it where cls has one)
        self.__post_init__(*[passed[n] for n in initvars])


def generated_init_owner(fn, obj):
    """The dataclass among obj's classes whose generated `__init__` (made by `exec`, without source) fn is,
    else None: to run as `dataclass_init_as(owner, obj, ...)`."""
    if type(fn) is not types.FunctionType or fn.__name__ != "__init__" or not overdub.without_source(fn):
        return None
    import dataclasses
    for c in type(obj).__mro__:
        if c.__dict__.get("__init__") is fn:
            return c if "__dataclass_fields__" in c.__dict__ and dataclasses.is_dataclass(c) else None
    return None


def _register_plan() -> None:
    from ..rules.registry import registry
    registry.nondifferentiable(dataclass_plan)


_register_plan()
