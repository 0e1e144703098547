"""Cotangent values of structured objects, as rules build and the engines add them.

Invariant: `None` is the zero of every cotangent; a `Tangent` (an object's fields, a closure's captured
variables), a `SeqBox` (a list or tuple) or a `MapBox` (a dict) is a box that `acc` merges into in place, so
the reverse pass (`contexts.ad.structs.Session`) keeps one box per object and aliases see one adjoint;
numbers and arrays are plain values added by `acc`.
"""

from __future__ import annotations

import numbers
import threading
import types
from typing import Any, Callable, Protocol, runtime_checkable

import numpy as np

from overdub.errors import OverdubError

from .leaves import ArrayLeaf

__all__ = ["Tangent", "SeqBox", "MapBox", "Refused", "Overwritten", "acc", "merge_into", "has_fields", "fields_of", "UndoSession",
           "NUMBER_VALUE", "number_part"]

# The key under which an object's box keeps the cotangent of the number the object is (a float subclass's
# instance, pygeodesy's Lat: its attributes' cotangents are the box's other keys). Not an identifier, so
# no attribute has this name.
NUMBER_VALUE = "<number value>"


@runtime_checkable
class UndoSession(Protocol):
    """What a rule that changes an object in place may ask of the reverse pass it runs in (its first
    argument, `S`): the whole of its contract with the engine.

    A mutating rule's adjoint runs after everything the function did later has been undone: it undoes its
    own change (so earlier adjoints see the values they saw forward), registers the change again with
    `redo` (the primal state after the pass is as the function left it), and adds into `box(obj)` the
    cotangents of the object's parts. `list.append`'s adjoint, in full:

        box = S.box(self, dself)             # the list's cotangent, one box per object for the pass
        dv = box.pop() if box else None      # the appended element's cotangent leaves with it
        self.pop()                           # undone for the adjoints before
        S.redo(list.append, self, v)         # and done again after the pass
        return box, (dv,)
    """

    def box(self, obj: Any, d: Any = None) -> Any:
        """obj's cotangent box for this pass (a `SeqBox`, `MapBox` or `Tangent`), with d merged in."""

    def redo(self, fn: Callable, *args: Any) -> None:
        """Re-apply a change this rule has undone, `fn(*args)`, when the pass ends."""

    def held(self, i: int) -> Any:
        """The cotangent the caller holds for the call's positional argument i (an array changed in
        place), or None."""

    def held_out(self) -> Any:
        """The cotangent the caller holds for the call's `out=` array (taken: once per call), or None."""

_NDARRAY = np.ndarray


class Overwritten:
    """The cotangent an in-place primitive (`np.fill_diagonal`, `np.copyto(where=)`, `np.put`) returns for
    the array it overwrote where `mask`: added to the array's, it makes those entries zero and leaves the
    others (never a delta `-d`, which makes `inf - inf = NaN` where d is infinite: sklearn's distances,
    `sqrt` at an overwritten 0)."""

    __slots__ = ("mask",)

    def __init__(self, mask):
        self.mask = mask


_LINEAR_UFUNCS = frozenset({np.add, np.subtract, np.multiply, np.negative, np.positive, np.conjugate})


_WRITERS = frozenset({np.copyto, np.place, np.putmask, np.put, np.put_along_axis, np.fill_diagonal})


class _Needed(threading.local):
    """`NEEDED.mask`: while reverse mode runs the adjoint of a rule marked `meta["by_need"]`, the arguments
    of its call that may be differentiated (bit i: positional argument i; -1: every one, the default), as
    the activity analysis of the calling code tells them. Such a rule may skip a costly partial of an
    argument outside the mask (a numerically computed one, `scipy_special.shape_rule`), giving the unknown
    cotangent `Refused` in its place: dropped there, as the argument is not differentiated, and refused
    should it reach a differentiated input after all."""

    mask = -1


NEEDED = _Needed()


class Refused:
    """The cotangent of an argument a rule knows no derivative in (`registry.NoClosedForm`): dropped, as
    any cotangent, where the argument is not differentiated; `acc` keeps it (a sum with it is as unknown),
    and so do the linear steps of an adjoint's arithmetic (a cotangent times a partial, a sum, a negation:
    `gammainc(1.0 - self.alpha / 2.0, r)` of a constant field sends it on to the field, where it is
    dropped; refused at once, galpy's potentials were refused in r). Every other use (a conversion to a
    number or an array, numpy's functions, a truth test, iteration) and its arrival at a differentiated
    input (`structs.finalize`, a closure's cell) raise the rule's `NoDerivative`. Never a zero."""

    __slots__ = ("why",)

    def __init__(self, why) -> None:
        self.why = why

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """An adjoint's linear steps on arrays keep it unknown (a product with a partial, a sum); any other
        ufunc is a use of the value: refused."""
        if method == "__call__" and (ufunc in _LINEAR_UFUNCS or ufunc is np.true_divide and inputs[0] is self):
            return self
        return self.refuse()

    def __array_function__(self, func, types, args, kwargs):
        """numpy's functions on it (the structural steps of adjoints: a sum over broadcast axes, a reshape, a
        scatter by an index) keep it unknown; a test of it (`np.any(g != 0)`) then refuses at its truth. One
        writing it into another array (`np.copyto(a, g)`, as `np.full(shape, g)` does) is a use: refused (the
        array kept its uninitialised memory, a number that was no derivative: gen15's W1)."""
        if func in _WRITERS:
            return self.refuse()
        return self

    def refuse(self, *args, **kwargs):
        raise self.why.error()

    def unknown(self, *args):
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = unknown
    __matmul__ = __rmatmul__ = __neg__ = __pos__ = unknown
    __rtruediv__ = __pow__ = __rpow__ = __abs__ = refuse  # (no linear step of an adjoint: a use of the value)
    __float__ = __complex__ = __int__ = __index__ = __bool__ = __array__ = refuse
    __iter__ = __len__ = __getitem__ = refuse
    imag = property(refuse)
    real = property(unknown)

    def conjugate(self):
        return self

    def __repr__(self) -> str:
        return f"Refused({self.why.function} in {self.why.argument})"


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


def has_fields(obj) -> bool:
    """An object with named fields: a `__dict__` or `__slots__` (not a number, array or container) — the
    slots of any class of its MRO (a subclass declaring `__slots__ = ()`, as collections.abc's views do)."""
    return (own_dict(obj) is not None or _slotted(type(obj)) and not isinstance(
        obj, (numbers.Number, np.ndarray, np.generic, list, tuple, dict, str, bytes))) and not _array_leaf(obj)


def _array_leaf(obj) -> bool:
    try:
        return isinstance(obj, ArrayLeaf)
    except AttributeError:  # (an object answering no attribute, not even `__class__`: numpy's `BagObj` of a
        return issubclass(type(obj), ArrayLeaf)  # kept `np.load(...npz)`, pyatmos' coesa76; sweep of session 57)


_SLOTTED: dict = {}


def _slotted(t) -> bool:
    known = _SLOTTED.get(t)
    if known is None:
        known = False
        for cls in t.__mro__:
            slots = cls.__dict__.get("__slots__", ())
            if slots:
                known = True
                break
        if len(_SLOTTED) < 4096:
            _SLOTTED[t] = known
    return known


def own_dict(obj):
    """obj's `__dict__`, or None: read past the class's `__getattr__` (a `__slots__` class whose
    `__getattr__` reads its own slots, euclid3's swizzles, recursed without end when asked for `__dict__`)."""
    t = type(obj)
    if t in _DICTLESS:  # (tuples, lists, arrays: no exception raised twice per object)
        return None
    if t is types.MethodType:
        # a bound method: object's lookup of `__dict__` always fails (no `__dict__` slot; the lookup below
        # forwards to its function's), raising an AttributeError per ask: 2.5 us, asked of each method an
        # object's fields hold at each search of what a callee changed (scipy's distributions hold dozens)
        return getattr(obj, "__dict__", None)
    if not t.__dictoffset__ and t.__flags__ & _HEAPTYPE and _dictless(t):
        return None  # (a namedtuple's or a `__slots__` class's: asked afresh each time, as a class may change)
    try:
        return object.__getattribute__(obj, "__dict__")
    except (AttributeError, TypeError):
        pass
    if type(getattr(t, "__getattr__", None)) is types.FunctionType:
        return None
    d = getattr(obj, "__dict__", None)  # (a C class's own lookup: a `threading.local`'s per-thread dict)
    if d is None and t.__flags__ & _IMMUTABLE_TYPE and len(_DICTLESS) < 4096 and _dictless(t):
        _DICTLESS.add(t)
    return d


# Immutable (C) classes whose instances never have a `__dict__` (`_dictless`): fixed for good, so remembered
_DICTLESS: set = set()
_GENERIC_LOOKUP = frozenset({tuple, list, dict, set, frozenset, str, bytes, int, float, complex, range, slice,
                             type(iter([])), type(iter(())), type(iter(range(1))), type(iter("")), type(len)})
_IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE (a class statement's)


def _dictless(t) -> bool:
    """No instance of class t has a `__dict__` now: no `__dict__` slot nor anywhere in its MRO, and object's
    attribute lookup (inherited, or the builtins' own generic one): a bound method's or a weakref proxy's
    lookup forwards `__dict__`, a class's own `__getattr__` may answer it."""
    if t.__dictoffset__:
        return False
    for cls in t.__mro__:
        if "__dict__" in cls.__dict__:
            return False
        if cls is not object and cls not in _GENERIC_LOOKUP and (
                "__getattribute__" in cls.__dict__ or "__getattr__" in cls.__dict__):
            return False
    return True


def fields_of(obj) -> dict:
    """An object's fields by name: its `__dict__`, and the `__slots__` of its class and bases that are set
    (read by their slots themselves: an unset one is not passed to the class's `__getattr__`, which may
    read it again, as a half-built xarray object's does, endlessly)."""
    own = own_dict(obj)
    out = dict(own) if own is not None else {}
    t = type(obj)
    for name, slot in _slots_of(t):
        if type(slot) is not types.MemberDescriptorType:  # (a mangled `__x`: as before, if found)
            if hasattr(obj, name):
                out[name] = getattr(obj, name)
            continue
        try:
            out[name] = slot.__get__(obj, t)
        except AttributeError:  # (not set)
            pass
    return out


_SLOTS_OF: dict = {}


def _slots_of(t) -> tuple:
    """(name, descriptor) of the `__slots__` of class t and its bases, in MRO order (a class's slots are made
    with it: remembered per class, not walked up the MRO for every object, as `fields_of` is asked of each
    object the views' searches pass)."""
    found = _SLOTS_OF.get(t)
    if found is None:
        found = []
        for cls in t.__mro__:
            slots = cls.__dict__.get("__slots__", ())
            for name in (slots,) if isinstance(slots, str) else slots:
                if name not in ("__dict__", "__weakref__"):
                    found.append((name, cls.__dict__.get(name)))
        found = tuple(found)
        if len(_SLOTS_OF) < 4096:
            _SLOTS_OF[t] = found
    return found


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
    if type(box) is Tangent and isinstance(d, (float, np.floating)) and not isinstance(d, bool):
        box[NUMBER_VALUE] = acc(box.get(NUMBER_VALUE), d)  # (the number a float subclass's object is)
        return box
    if type(box) is Tangent and type(d) is np.ndarray and d.dtype.kind in "fc" and d.any():
        # an array's cotangent for an object of fields: numpy took the object for an array, by its class's
        # `__array__`, in C (`np.ones(3) + cell`, `base[:] = cell`: ase's Cell), which no recording saw; the
        # cotangent had no field to go to (0 came out)
        raise ArrayConversionUnseen(
            "reverse mode met an object numpy converted to an array by its class's `__array__` inside compiled "
            "code (an operator with an array, a store into one, a list of them): the conversion was not recorded",
            fix="convert it yourself first (`np.asarray(obj)`, a call reverse mode follows), or use forward mode")
    items = d.items() if isinstance(d, dict) else fields_of(d).items() if has_fields(d) else ()
    for k, v in items:
        box[k] = acc(box.get(k), v)
    return box


class ArrayConversionUnseen(OverdubError):
    """Reverse mode: a cotangent array reached an object numpy had converted to an array natively."""


def number_part(dy):
    """The cotangent of the number an object is (a float subclass's instance): dy itself, or what its box
    keeps under NUMBER_VALUE (None: zero)."""
    return dy.get(NUMBER_VALUE) if type(dy) is Tangent else dy


def _items_sum(a, b):
    """a + b for the cotangents of an array of objects, one an object array of its items' cotangents, the
    other their stack (a float array, the items' axes after the array's): added item by item (numpy's `+`
    broadcast the items into each other's entries)."""
    items, stack = (a, b) if a.dtype.kind == "O" else (b, a)
    if stack.shape[:items.ndim] != items.shape or stack.ndim == items.ndim:
        return a + b
    out = np.empty(items.shape, dtype=object)
    for idx in np.ndindex(items.shape):
        out[idx] = acc(items[idx], stack[idx])
    return out


def _objects_sum(a, b):
    """a + b for two object arrays of cotangents, item by item by `acc`: an item that is an object's box (the
    same box read through the array twice) stays that box (numpy's `+` made a new Tangent of the box added to
    itself, and the object's construction took it into its box again: 18 for 6)."""
    out = np.empty(a.shape, dtype=object)
    for idx in np.ndindex(a.shape):
        out[idx] = acc(a[idx], b[idx])
    return out


def acc(a, b):
    """a + b for cotangents: None is zero, boxes merge in place, tuples and dicts elementwise; a sum with
    a `Refused` cotangent is that (it refuses where it is used)."""
    if a is None:
        return b if type(b) is not Overwritten else None
    if b is None:
        return a
    ta = type(a)
    if ta is float and type(b) is float:
        return a + b
    if ta is _NDARRAY and type(b) is _NDARRAY:
        if a.dtype.kind == "O" and b.dtype.kind == "O" and a.shape == b.shape:
            return _objects_sum(a, b)
        if (a.dtype.kind == "O") is (b.dtype.kind == "O"):
            return a + b
        return _items_sum(a, b)
    if type(b) is Overwritten:
        return np.where(b.mask, np.zeros_like(a) if ta is _NDARRAY else 0.0, a)  # (not 0 * a: inf there)
    if ta is Refused:
        return a
    if type(b) is Refused:
        return b
    if ta is SeqBox or ta is MapBox or ta is Tangent:
        # the same box reached twice is already merged; the same number twice (a rule returning
        # dy for two arguments, x + x) must still be added
        return a if a is b else merge_into(a, b)
    tb = type(b)
    if tb is SeqBox or tb is MapBox or tb is Tangent:
        return merge_into(b, a)
    if ta is int and a == 0 and type(b) in (tuple, list, dict):  # (an object array's zero entry taking an
        return type(b)(b)                                        # object's parts: a tuple it held whole)
    if type(b) is int and b == 0 and ta in (tuple, list, dict):
        return ta(a)
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
