"""Structured cotangents: boxes for containers and objects, `Tangent` for objects and closures.

Invariant: the cotangent of a mutable or structured object (list, tuple, dict, object, closure) lives in one
box per object per reverse pass (`Session.box`), so aliases and mutation see one adjoint — the paper's
"box" rules; numbers and arrays are plain values accumulated by `acc`. `None` is the zero everywhere.
"""

from __future__ import annotations

import itertools
import numbers
import types

import numpy as np

# (forward mode depends on nothing of reverse mode: no cycle)
from ..forward.dual import Dual as _Dual

__all__ = ["Tangent", "SeqBox", "MapBox", "Session", "acc", "finalize", "zero_of"]

_NDARRAY = np.ndarray


class Tangent(dict):
    """The gradient of an object (its fields) or of a closure (its captured variables).

    >>> t = Tangent(w=2.0, b=None)
    >>> (t + Tangent(w=1.0)).w
    3.0
    """

    __slots__ = ()

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __add__(self, other):
        if other is None or (isinstance(other, int) and other == 0):
            return self
        out = Tangent(self)
        for k, v in other.items():
            out[k] = acc(out.get(k), v)
        return out

    __radd__ = __add__

    def __repr__(self):
        return "Tangent(" + ", ".join(f"{k}={v!r}" for k, v in self.items()) + ")"


class SeqBox(list):
    """The cotangent of a list or tuple (or a materialised iterable), one entry per element."""

    __slots__ = ()


class MapBox(dict):
    """The cotangent of a dict, keyed like it."""

    __slots__ = ()


_NUMERIC = (numbers.Number, np.ndarray, np.generic)


def _new_box(obj):
    if isinstance(obj, (list, tuple)):
        return SeqBox([None] * len(obj))
    if isinstance(obj, dict):
        return MapBox()
    if isinstance(obj, (types.FunctionType, types.MethodType)) or has_fields(obj):
        return Tangent()
    return SeqBox()


def has_fields(obj) -> bool:
    """An object with named fields: a `__dict__` or `__slots__` (not a number, array or container)."""
    return hasattr(obj, "__dict__") or bool(getattr(type(obj), "__slots__", None)) and not isinstance(
        obj, (numbers.Number, np.ndarray, np.generic, list, tuple, dict, str, bytes))


def fields_of(obj) -> dict:
    """An object's fields by name: its `__dict__`, and the `__slots__` of its class and bases that are set."""
    out = dict(vars(obj)) if hasattr(obj, "__dict__") else {}
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__") and hasattr(obj, name):
                out[name] = getattr(obj, name)
    return out


def merge_into(box, d):
    """Add cotangent d into box in place (box is owned by the session)."""
    if d is None or d is box:
        return box
    if isinstance(box, list):
        if isinstance(d, dict):
            d = [d.get(i) for i in range(len(box))]
        for i, x in enumerate(d):
            if x is None:
                continue
            if i >= len(box):
                box.extend([None] * (i + 1 - len(box)))
            box[i] = acc(box[i], x)
        return box
    items = d.items() if isinstance(d, dict) else fields_of(d).items() if has_fields(d) else ()
    for k, v in items:
        box[k] = acc(box.get(k), v)
    return box


def acc(a, b):
    """a + b for cotangents: None is zero, boxes merge in place, tuples and dicts elementwise."""
    if a is None:
        return b
    if b is None:
        return a
    ta = type(a)
    if ta is float and type(b) is float or ta is _NDARRAY and type(b) is _NDARRAY:
        return a + b
    if ta is SeqBox or ta is MapBox or ta is Tangent:
        # the same box reached twice is already merged; the same number twice (a rule returning
        # dy for two arguments, x + x) must still be added
        return a if a is b else merge_into(a, b)
    tb = type(b)
    if tb is SeqBox or tb is MapBox or tb is Tangent:
        return merge_into(b, a)
    if isinstance(a, tuple) and isinstance(b, (tuple, list)):
        return tuple(acc(x, y) for x, y in zip(a, b))
    if isinstance(a, list) and isinstance(b, (tuple, list)):
        return [acc(x, y) for x, y in zip(a, b)]
    if isinstance(a, dict) and isinstance(b, dict):
        out = dict(a)
        for k, v in b.items():
            out[k] = acc(out.get(k), v)
        return out
    return a + b


# a stamp of the last in-place change of an array by a forward pass: a caller compares it around a call to
# know whether the callee may have changed its array arguments. Each change stores a new stamp (`next` is
# atomic), so threads racing to store one still leave a value no earlier reader saw.
TICKS = itertools.count(1)
CHANGES = [0]


class Session:
    """State of one reverse pass: the boxes of structured objects and the mutations undone so far."""

    __slots__ = ("boxes", "keep", "redo", "dins", "dout", "dargs_in", "took", "scatter")

    def __init__(self):
        self.boxes: dict[int, object] = {}
        self.keep: list = []   # the objects whose ids key `boxes`, kept alive for the pass
        self.redo: list = []   # (fn, args) re-applying the mutations the reverse pass undid
        # for calls that may mutate array arguments in place (ufunc.at, out=): the cotangents the caller
        # holds for the call's positional arguments and its `out=` array, set just before the pullback
        self.dins: tuple = ()
        self.dout = None
        # for calls of Python functions that changed arrays in place: (pullback, the cotangents the caller
        # holds for the positional arguments after the call), taken by that pullback, which then marks in
        # `took` (bit i: argument i) the ones whose returned cotangent is their whole one
        self.dargs_in = None
        self.took = 0
        # id(array) -> (array, the cotangent array element reads of it accumulate into in place): made by
        # the session, held by one cotangent variable at a time (a read that finds another starts anew)
        self.scatter: dict[int, tuple] = {}

    def box(self, obj, d=None):
        key = id(obj)
        b = self.boxes.get(key)
        if b is None:
            b = self.boxes[key] = _new_box(obj)
            self.keep.append(obj)
        if d is not None and d is not b:
            merge_into(b, d)
        return b

    def finish(self) -> None:
        """Re-apply, in forward order, the mutations the reverse pass undid (primal state as after f)."""
        for fn, args in reversed(self.redo):
            fn(*args)
        self.redo.clear()


def zero_of(x):
    """The zero cotangent of a primal value, or None where nothing is differentiable."""
    if isinstance(x, (bool, str, bytes)) or x is None:
        return None
    if isinstance(x, np.ndarray):
        return np.zeros_like(x) if x.dtype.kind in "fciub" else None
    if isinstance(x, np.generic):
        return type(x)(0)
    if type(x) is _Dual:  # forward over reverse: the zero of the value's shape (a dual array's too)
        v = x
        while type(v) is _Dual:
            v = v.value
        return np.zeros(np.shape(v)) if np.shape(v) else 0.0
    if isinstance(x, numbers.Number):
        return type(x)(0) if isinstance(x, (int, float, complex)) or hasattr(type(x), "denominator") else 0.0
    if type(x).__module__.startswith("uncertainties"):
        return 0.0
    return None


def finalize(d, x):
    """A cotangent shaped like the primal x: containers mirrored, objects as Tangent of their fields."""
    if type(x) is float and (type(d) is float or d is None):
        return 0.0 if d is None else d
    if type(x) is np.ndarray and type(d) is np.ndarray and d.shape == x.shape and d.dtype == x.dtype:
        return d  # the hot case: an array's cotangent, already its shape and dtype
    if isinstance(x, (str, bytes, bool, types.ModuleType, type)) or x is None:
        return None
    if isinstance(x, tuple):
        items = list(d) if isinstance(d, (list, tuple)) else [None] * len(x)
        items += [None] * (len(x) - len(items))
        vals = [finalize(g, v) for g, v in zip(items, x)]
        if hasattr(type(x), "_fields"):  # namedtuple: same type
            return type(x)(*vals)
        return tuple(vals)
    if isinstance(x, list):
        items = list(d) if isinstance(d, (list, tuple)) else [None] * len(x)
        items += [None] * (len(x) - len(items))
        return [finalize(g, v) for g, v in zip(items, x)]
    if isinstance(x, dict):
        dd = d if isinstance(d, dict) else {}
        return {k: finalize(dd.get(k), v) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        if d is None:
            return zero_of(x)
        d = np.asarray(d)
        if d.shape != x.shape:
            d = np.broadcast_to(d, x.shape).copy()
        if x.dtype.kind in "f" and d.dtype != x.dtype and d.dtype.kind == "f":
            d = d.astype(x.dtype)
        return d
    if isinstance(x, (numbers.Number, np.generic)) or type(x).__module__.startswith("uncertainties"):
        if d is None:
            return zero_of(x)
        if isinstance(x, float) and isinstance(d, np.ndarray) and d.ndim == 0:
            return d.item()
        return d
    if isinstance(x, (types.FunctionType, types.MethodType)):
        return d if d else None
    if has_fields(x):
        fields = d if isinstance(d, dict) else {}
        return Tangent({k: finalize(fields.get(k), v) for k, v in fields_of(x).items()})
    return d
