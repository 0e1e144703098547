"""The reverse pass's state: one cotangent box per structured object (`Session`), zeros and final shapes.

Invariant: the cotangent of a mutable or structured object (list, tuple, dict, object, closure) lives in one
box per object per reverse pass (`Session.box`), so aliases and mutation see one adjoint — the paper's
"box" rules; the boxes and `acc` themselves are the rules' cotangent values (`contexts.rules.cotangents`).
`None` is the zero everywhere.
"""

from __future__ import annotations

import collections
import functools
import itertools
import weakref
import numbers
import types
from fractions import Fraction

import numpy as np

from overdub.errors import OverdubError
from overdub.ops import HEAPTYPE

# (forward mode depends on nothing of reverse mode: no cycle)
from ..forward.dual import Dual as _Dual, primal
from ..rules.cotangents import MapBox, Refused, SeqBox, Tangent, acc, fields_of, has_fields, merge_into
from ..rules import leaves as _leaves
from ..rules.leaves import ArrayLeaf, Scalar, container_of, in_kind, kind_of, np_dtype

__all__ = ["Session", "finalize", "zero_of", "TICKS", "CHANGES"]


# the instance dicts read as `obj.__dict__` by a recording (`self.__dict__.update(kw)`), by the dict's
# id: the object (weakly) whose fields they are. The reverse pass gives such a dict the object's box, so a
# value stored or read through the dict and read or stored as an attribute has one cotangent
INSTANCE_DICTS: dict = {}


# the keys of INSTANCE_DICTS whose objects cannot be referred to weakly (a SimpleNamespace, a class with
# `__slots__` holding "__dict__" but not "__weakref__"), oldest first: held strongly, a bounded number
_STRONG_KEYS: collections.deque = collections.deque()
_STRONG_LIMIT = 4096


def remember_instance_dict(obj, d) -> bool:
    """Remember d as obj's `__dict__`. An object that cannot be referred to weakly is held strongly, the
    last `_STRONG_LIMIT` of them (`setattr(ns, k, v)` of a SimpleNamespace was refused, gen20 R13); its
    dict, held by it, keeps its id meanwhile."""
    key = id(d)
    known = INSTANCE_DICTS.get(key)
    if known is not None and known() is obj:
        return True
    try:
        INSTANCE_DICTS[key] = weakref.ref(obj, lambda _, key=key: INSTANCE_DICTS.pop(key, None))
    except TypeError:
        if isinstance(obj, (list, tuple, dict)):  # (a tuple subclass's fields: its box is its items', by position)
            return False
        INSTANCE_DICTS[key] = functools.partial(_itself, obj)
        _STRONG_KEYS.append(key)
        while len(_STRONG_KEYS) > _STRONG_LIMIT:
            old = _STRONG_KEYS.popleft()
            if type(INSTANCE_DICTS.get(old)) is functools.partial:
                del INSTANCE_DICTS[old]
    return True


def _itself(obj):
    return obj


def instance_dict_owner(d):
    """The object whose `__dict__` d is (as remembered by a recording), or None."""
    known = INSTANCE_DICTS.get(id(d)) if type(d) is dict else None
    owner = known() if known is not None else None
    return owner if owner is not None and getattr(owner, "__dict__", None) is d else None


def _new_box(obj):
    if isinstance(obj, (list, tuple)):
        return SeqBox([None] * len(obj))
    if isinstance(obj, (dict, types.MappingProxyType)):  # (a read-only view of a dict: read by key too)
        return MapBox()
    if getattr(type(obj), "_od_by_position", False):  # (runtime._Drawn: its items' cotangents by position)
        return SeqBox()
    if isinstance(obj, (types.FunctionType, types.MethodType, slice)) or has_fields(obj) or (
            isinstance(obj, (float, complex, int)) and type(obj).__flags__ & HEAPTYPE):
        # (a slice: its start, stop and step by name; a number of a class of its own, its fields beside the
        # number's cotangent, NUMBER_VALUE: one of `__slots__` alone has no `__dict__`, and took a SeqBox)
        return Tangent()
    return SeqBox()


# a stamp of the last in-place change of an array by a forward pass: a caller compares it around a call to
# know whether the callee may have changed its array arguments. Each change stores a new stamp (`next` is
# atomic), so threads racing to store one still leave a value no earlier reader saw.
TICKS = itertools.count(1)
CHANGES = [0]
# each changed object's last stamp, by the identity of the array at the bottom of its views (a list's own):
# a call spreading `*args` or `**kwargs` tells by it which of the values it passed its callee changed
# (`spread_changed`). Cleared when a top-level recording starts.
LAST_CHANGE: dict[int, int] = {}
# the objects stamped in LAST_CHANGE since the current top-level recording began, held so that none of their
# identities goes to a new object while it runs (a dict made afresh by a callee, array_api_strict's
# `get_default_dtypes()`, took a freed dict's identity and with it that dict's change: refused as shared state
# changed in place, depending on what ran before). Dropped when a top-level recording starts; at most 4096
# (past them, such a refusal is the worst an identity reused can cause).
CHANGED_HELD: dict[int, object] = {}
# the counter when the current top-level recording began: a stamp above it is a change of this recording's
RECORDING_START = [0]
# each object's last recorded store of an attribute (`helpers.setattr_`), by identity: a module's object read
# as a constant after it (`helpers.global_read`) is refused. Cleared with LAST_CHANGE.
ATTRIBUTE_CHANGE: dict[int, int] = {}
ATTRIBUTE_CHANGED = [0]  # the latest of those stamps (not the counter: `CHANGES` tells calls' in-place changes)


def bottom(obj):
    """The array at the bottom of obj's views (obj itself for an array owning its memory, or any other); a
    dual array's (forward over reverse) is its value's, so a change stamped through either is seen by both."""
    if type(obj) is _Dual:
        obj = primal(obj)
    while isinstance(obj, np.ndarray) and isinstance(obj.base, np.ndarray):  # (a subclass's view too)
        obj = obj.base
    return obj


def change_stamp(obj=None) -> int:
    """`leaves.CHANGE_STAMP`: the latest change's stamp, or that of obj's memory's last in-place change (0)."""
    if obj is None:
        return CHANGES[0]
    return LAST_CHANGE.get(id(bottom(obj)), 0)


def changed(obj) -> None:
    """Stamp an in-place change of obj (an array, list or dict): the counter, and obj's own stamp; and the
    latest change of a list or dict (`CONTAINER_CHANGE`) or of anything else, an array's memory
    (`MEMORY_CHANGE`), so that a search for what changed since a stamp (a callee's changes, through the
    objects the caller holds) is skipped where nothing of its kind did."""
    b = bottom(obj)
    LAST_CHANGE[id(b)] = CHANGES[0] = tick = next(TICKS)
    if len(CHANGED_HELD) < 4096:
        CHANGED_HELD[id(b)] = b
    if isinstance(b, (list, dict)):
        CONTAINER_CHANGE[0] = tick
    else:
        MEMORY_CHANGE[0] = tick


CONTAINER_CHANGE = [0]  # the stamp of the latest change of a list or dict (an instance of a subclass too)
MEMORY_CHANGE = [0]  # of anything else changed in place: an array's memory, a set, a deque
UNKNOWN_CHANGE = [0]  # of a change whose object a rule does not name (`runtime._stamp`: the counter only)


class Bare(tuple):
    """The cotangents handed by a call not written `obj.method(...)`: a bound method's object's is not
    among them (`runtime._held_for` refuses an array's in-place method called so)."""


class Viewed(tuple):
    """Handed instead of the cotangents when an in-place primitive may be reached under another name
    while other variables view its array arguments (their names): `held` refuses."""


def _not_handed(what: str, viewed=None):
    from .runtime import UnsupportedFunction, _user_line
    why = (f"an in-place primitive called under another name while other variables view its array arguments "
           f"({', '.join(viewed)}): which one it changes, and so which views' cotangents to move, is not known"
           if viewed else "the call reaches an in-place primitive in a way the adjoint cannot follow")
    return UnsupportedFunction(
        f"reverse mode does not see the cotangent the caller holds for {what}: {why}", where=_user_line(),
        fix="call it by its own name with its arguments written out (`np.copyto(a, b)`, `a.put(...)`, "
            "`f(x, out=a)`), copy views that must not change (`v = a[1:].copy()`), or compute a new array")


class Session:
    """State of one reverse pass: the boxes of structured objects and the mutations undone so far.

    Rules that change an object in place (`list.append`, `np.add.at`, `np.copyto`) take the session as
    their first argument and use only its public part, `contexts.rules.cotangents.UndoSession`:
    `box(obj, d)` (the one cotangent box of obj this pass), `redo(fn, *args)` (the rule has undone a
    change for earlier adjoints; `fn(*args)` re-applies it when the pass ends), `held(i)` and
    `held_out()` (the cotangents the caller holds for the call's positional argument i and its `out=`
    array). The rest is the engine's: generated adjoints set `dins`, `dout`, `dargs_in` and read `took`.
    """

    __slots__ = ("boxes", "keep", "_redo", "dins", "dout", "dargs_in", "took", "scatter")

    def __init__(self):
        self.boxes: dict[int, object] = {}
        # (`keep`, `_redo` and `scatter` are made by their first use, `kept`, `redo` and the element reads': most
        # passes use none, and three containers made per pass were a tenth of a small function's gradient)
        self.keep: list | None = None   # the objects whose ids key `boxes`, kept alive for the pass
        self._redo: list | None = None  # (fn, args) re-applying the mutations the reverse pass undid
        # for calls that may mutate array arguments in place (ufunc.at, out=): the cotangents the caller
        # holds for the call's positional arguments and its `out=` array, set just before the pullback
        self.dins = None  # a tuple, set by the adjoint around the pullback; None: not handed
        self.dout = None  # (the cotangent,) likewise
        # for calls of Python functions that changed arrays in place: (pullback, the cotangents the caller
        # holds for the positional arguments after the call), taken by that pullback, which then marks in
        # `took` (bit i: argument i) the ones whose returned cotangent is their whole one
        self.dargs_in = None
        self.took = 0
        # id(array) -> (array, the cotangent array element reads of it accumulate into in place): made by
        # the session, held by one cotangent variable at a time (a read that finds another starts anew)
        self.scatter: dict[int, tuple] | None = None

    def kept(self, obj) -> None:
        """Keep obj alive for the pass (its id keys `boxes`)."""
        if self.keep is None:
            self.keep = [obj]
        else:
            self.keep.append(obj)

    def redo(self, fn, *args) -> None:
        """A change the reverse pass has undone (for the adjoints before it): `fn(*args)` re-applies it
        when the pass ends, so the primal state is as the function left it."""
        if self._redo is None:
            self._redo = [(fn, args)]
        else:
            self._redo.append((fn, args))

    def held(self, i: int):
        """The cotangent the caller holds for positional argument i of the call being pulled back (an
        array the call changed in place), or None. Refused where the adjoint could not hand them (the call
        spreads its arguments, or reaches the primitive through a wrapper): never taken for zero."""
        if self.dins is None or type(self.dins) is Viewed:
            raise _not_handed("the array it changes in place", self.dins)
        return self.dins[i] if len(self.dins) > i else None

    def held_out(self):
        """The cotangent the caller holds for the call's `out=` array, taken: a second read is refused."""
        given, self.dout = self.dout, None
        if given is None:
            raise _not_handed("its `out=` array (passed through **kwargs?)")
        return given[0]

    def box(self, obj, d=None):
        key = id(obj)
        b = self.boxes.get(key)
        if b is None:
            owner = instance_dict_owner(obj) if INSTANCE_DICTS else None
            if owner is not None:  # an object's `__dict__`: one box with the object's fields
                b = self.boxes[key] = self.box(owner)
            else:
                b = self.boxes[key] = _new_box(obj)
            self.kept(obj)
        if d is not None and d is not b:
            if type(d) is Refused and type(b) is SeqBox and isinstance(obj, (list, tuple)):
                # (a rule's unknown cotangent for a whole list, `eigh` of a covariance given as a list display of
                # constants: each item's, refused where one is differentiated; iterated, it refused at once)
                b.extend([None] * (len(obj) - len(b)))
                for i in range(len(b)):
                    b[i] = acc(b[i], d)
                return b
            merge_into(b, d)
        return b

    def finish(self) -> None:
        """Re-apply, in forward order, the mutations the reverse pass undid (primal state as after f); then
        refuse attribute cotangents of ndarray subclasses' instances that no store took (`attributes_left`)."""
        if not self._redo:
            return
        left = []
        for fn, args in reversed(self._redo):
            if fn is attributes_left:
                left.append(args[0])
                continue
            fn(*args)
        self._redo.clear()
        for obj in left:
            box = self.boxes.get(id(obj))
            names = [k for k, g in box.items() if g is not None and not _integral(getattr(obj, k, None))] \
                if isinstance(box, dict) else ()  # (an integer's, `self.dimension = self.size`, is none)
            if names:
                raise OverdubError(
                    f"reverse mode does not differentiate through the attribute .{names[0]} of a "
                    f"{type(obj).__name__} (an ndarray subclass) together with its values: its derivative went "
                    f"to no store reverse mode recorded (one made in compiled code: `__array_finalize__` run "
                    f"by numpy), and would be lost",
                    fix="keep that value in a variable or a plain object of its own")


def _integral(v) -> bool:
    """v is an integer or a bool, or an array of them: a derivative has nowhere to go in it."""
    return isinstance(v, (int, np.integer, np.bool_)) or isinstance(v, np.ndarray) and v.dtype.kind in "biu"


def attributes_left(obj) -> None:
    """A marker in a session's redo list (`Session.finish`): obj, an ndarray subclass's instance, held
    cotangents of other attributes when the reverse pass undid a store of one; each must have been taken by
    its own store's adjoint by the end of the pass."""


def zero_of(x):
    """The zero cotangent of a primal value, or None where nothing is differentiable."""
    if isinstance(x, (bool, str, bytes)) or x is None:
        return None
    if isinstance(x, np.ndarray):
        return np.zeros_like(x) if x.dtype.kind in "fciub" else None
    if isinstance(x, np.generic):
        return type(x)(0)
    if type(x) is _Dual:  # forward over reverse: the zero of the value's shape (a dual array's too)
        v = primal(x)
        return np.zeros(np.shape(v)) if np.shape(v) else 0.0
    if isinstance(x, Scalar):  # Decimal, mpmath, sympy: the zero of its kind
        return kind_of(x).zero(x)
    if isinstance(x, ArrayLeaf):  # a dask array: its type's zeros (lazy), by numpy's protocol
        return np.zeros_like(x) if x.dtype.kind in "fciub" else None
    if isinstance(x, numbers.Number):
        return type(x)(0) if isinstance(x, (int, float, complex)) or hasattr(type(x), "denominator") else 0.0
    if type(x).__module__.startswith("uncertainties"):
        return 0.0
    return None


def finalize(d, x):
    """A cotangent shaped like the primal x: containers mirrored, objects as Tangent of their fields."""
    if type(x) is float and (type(d) is float or d is None):
        return 0.0 if d is None else d
    if type(x) is int and d is None:  # (a counter or size passed in: zero_of's exact 0, inline)
        return 0
    if type(x) is np.ndarray and type(d) is np.ndarray and d.shape == x.shape and (
            d.dtype is x.dtype or d.dtype == x.dtype):  # (`is`: the common case, without dtype's `==`)
        return d  # the hot case: an array's cotangent, already its shape and dtype
    if isinstance(x, (str, bytes, bool, types.ModuleType, type)) or x is None:
        return None
    if type(d) is Refused:  # a derivative a rule does not know, asked for: refused, never a number
        d.refuse()
    if isinstance(x, (tuple, list)):
        items = list(d) if isinstance(d, (list, tuple)) else [None] * len(x)
        items += [None] * (len(x) - len(items))
        vals = [finalize(g, v) for g, v in zip(items, x)]
        if isinstance(x, list):
            return vals
        return type(x)(*vals) if hasattr(type(x), "_fields") else tuple(vals)  # a namedtuple: its type
    if isinstance(x, dict):
        dd = d if isinstance(d, dict) else {}
        return {k: finalize(dd.get(k), v) for k, v in x.items()}
    if isinstance(d, ArrayLeaf) or isinstance(x, ArrayLeaf):  # (before numpy's: never computed here)
        return _leaf_cotangent(d, x)
    if isinstance(x, np.ndarray):
        if d is None:
            return zero_of(x)
        if type(d).__name__ == "Dual":  # (a plain array's cotangent under an outer forward pass, a data array
            return d                    # argument of an inner gradient: its perturbed value, gen23 C4)
        d = np.asarray(d)
        if d.shape != x.shape:
            d = np.broadcast_to(d, x.shape).copy()
        if x.dtype.kind in "f" and d.dtype != x.dtype and d.dtype.kind in "fO":
            try:  # (an object cotangent: the array went through `astype(object)`; plain floats by now)
                d = d.astype(x.dtype)
            except (TypeError, ValueError):
                pass
        return d
    if isinstance(d, (list, tuple)) and type(x).__name__ == "Dual" and type(x.primal) is np.ndarray and x.ndim:
        # (a dual array's cotangent gathered item by item, `sorted(x)` under `hvp`: an array, as a plain one's)
        items = [zero_of(x.primal.dtype.type(0)) if g is None else g for g in d]
        duals = any(type(g).__name__ == "Dual" for g in items)
        d = np.stack(items) if duals else np.asarray(items, dtype=np.result_type(x.primal.dtype, float))
        return d if d.shape == x.shape else np.broadcast_to(d, x.shape).copy()
    if isinstance(x, (numbers.Number, np.generic, Scalar)) or type(x).__module__.startswith("uncertainties"):
        if d is None:
            return zero_of(x)
        if isinstance(x, float) and isinstance(d, np.ndarray) and d.ndim == 0:
            return d.item()
        if type(d) is int and isinstance(x, Fraction):  # `x + y`'s exact 1: Fraction in, Fraction out
            return Fraction(d)
        return d
    if isinstance(x, (types.FunctionType, types.MethodType)):
        return d if d else None
    if has_fields(x):
        container = container_of(x)
        if container is not None:  # (an xarray DataArray: its gradient is a DataArray)
            return container.cotangent(d if isinstance(d, dict) or isinstance(d, np.ndarray) else None, x, finalize)
        if d is not None and not isinstance(d, dict) and not _zero_valued(d):
            _lost_through_compiled_code(x, d)
        fields = d if isinstance(d, dict) else {}
        return Tangent({k: finalize(fields.get(k), v) for k, v in fields_of(x).items()})
    return d


def _zero_valued(d) -> bool:
    try:
        return not np.any(np.asarray(d, dtype=complex))
    except (TypeError, ValueError):
        return False


def _lost_through_compiled_code(x, d):
    """An object's cotangent came as a value, not as its fields': the object computed as a number or an
    array in compiled code of its own class (a torch Tensor: `float(t)`, `t * t`, `t.numpy()`), which
    reverse mode cannot take apart. Dropping it gave a zero gradient (an empty Tangent), silently."""
    name = type(x).__name__
    raise OverdubError(
        f"reverse mode cannot differentiate with respect to a {type(x).__module__}.{name}: its derivative came "
        f"through the class's compiled arithmetic or conversions (a {type(d).__name__}), which reverse mode "
        f"cannot hand back to the object's fields, and would have been lost",
        fix=f"pass its values instead (a numpy array or float: `np.asarray(...)`, `.numpy()`, `float(...)`), or "
            f"register {name} as a value type (`contexts.rules.leaves.register_array` for arrays, "
            f"`register_scalar` for numbers)")


def _leaf_cotangent(d, x):
    """The cotangent d of an array x shaped and typed like x, where d or x is an array of a registered type
    (a dask array): kept in its type, lazily (a dask gradient of a numpy input stays a dask array: the
    user computes it, on the client or the cluster)."""
    if d is None:
        return in_kind(zero_of(x), x)
    if not isinstance(x, (np.ndarray, ArrayLeaf)):  # a number's: as a number's cotangent
        return d
    if np.shape(d) != x.shape:
        d = np.broadcast_to(d, x.shape)
    xd, dd = np_dtype(x), np_dtype(d)
    if xd.kind == "f" and dd != xd and dd.kind == "f":
        d = d.astype(xd) if hasattr(d, "astype") else np.asarray(d, dtype=xd)  # (a torch tensor: numpy's cast, `in_kind` after)
    return in_kind(d, x)  # (a JAX array's gradient: a JAX array, where numpy's rules gave an ndarray)


_leaves.CHANGE_STAMP[0] = change_stamp
