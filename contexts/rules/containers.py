"""Rules for the methods of lists and dicts, including the mutating ones (the paper's box rules).

A mutating rule has the form `adj(S, dself, dy, y, self, *args) -> (dself, cotangents of args)`: it takes
the container's cotangent box from the reverse pass's session `S`, undoes the mutation on the box *and* on
the primal (so earlier adjoints see the container as it was when they ran), and registers the redo that
`S.finish()` applies at the end of the pass. Non-mutating methods use the ordinary static form.
"""

from __future__ import annotations

import bisect
import collections
import copy
import datetime
import heapq
import math
import numbers
import random
import sys
import types
import weakref

import numpy as np

from overdub.errors import OverdubError

from .cotangents import Refused, Tangent, acc, fields_of, has_fields, merge_into, own_dict
from .leaves import Labels, carries_none
from .registry import NoRuleError, function_tree, registry
from .ties import TiedApart, note_tie, parting_items

__all__ = ["own_mapping_refused", "mutating", "SHARED_SAFELY", "DifferentiatedKey", "refuse_differentiated_key",
           "subscripts_a_class", "class_subscript_refused"]


class DifferentiatedKey(OverdubError):
    """A dict looked up by a differentiated value found an entry: its value was stored under a key equal to
    the one looked up, not computed from it here, so it carries no derivative with respect to it (a memo
    table filled by an earlier call served a plain value: the derivative came out without that term)."""


def refuse_differentiated_key(obj, key) -> None:
    """Before `obj[key]` (`get`, `pop`, `setdefault`) with a differentiated key, every mode (reverse
    mode's `key_lookup`, forward mode's lookups of a perturbed key): raise `DifferentiatedKey` where the
    dict holds the key, naming the user's line. A miss is Python's (`if x in memo` is a test; `memo.get(x)`
    then gives the default), and so is an unhashable key (the lookup itself raises)."""
    try:
        if key not in obj:
            return
    except TypeError:
        return
    from .frames import outside_engine  # (frames imports nothing of this module; kept local: rarely run)
    frame = outside_engine(sys._getframe(1))
    raise DifferentiatedKey(
        "a dict looked up by a differentiated value found an entry: its value was stored under an equal key, "
        "not computed from this one, so it carries no derivative with respect to it (a memo table filled by "
        "an earlier call would serve a plain value)",
        where=f"{frame.f_code.co_qualname} ({frame.f_code.co_filename}:{frame.f_lineno})" if frame else None,
        fix="memoise with functools.lru_cache / functools.cache (bypassed while differentiating), key the "
            "dict by something that does not depend on the inputs, or clear the memo before differentiating")


def subscripts_a_class(obj) -> bool:
    """`obj[k]` is a class's `__class_getitem__` (`G[x]`): a class made from k, natively."""
    return isinstance(obj, type) and type(getattr(obj, "__class_getitem__", None)) is types.MethodType


def class_subscript_refused(obj) -> OverdubError:
    """`G[x]` with x differentiated, every mode: the class made from x holds its value as a class attribute,
    a constant to every engine (0 for 3, fuzz F's W1)."""
    from .frames import outside_engine
    frame = outside_engine(sys._getframe(1))
    return OverdubError(
        f"subscripting the class {obj.__qualname__} by a differentiated value (`__class_getitem__`) is not "
        "differentiated: the class it makes holds the value as a class attribute, a constant",
        where=f"{frame.f_code.co_qualname} ({frame.f_code.co_filename}:{frame.f_lineno})" if frame else None,
        fix="pass the value to an instance (`G(x)`) or an ordinary function instead")


def holds(x, test, depth: int = 3) -> bool:
    """test(v) for x or a value x holds in a list, tuple, dict or an object's fields, `depth` levels down
    (a dual or a tracer inside a library's argument)."""
    if test(x):
        return True
    if depth == 0:
        return False
    if isinstance(x, (list, tuple)):
        return any(holds(v, test, depth - 1) for v in x)
    if isinstance(x, dict):
        return any(holds(v, test, depth - 1) for v in x.values())
    fields = own_dict(x)
    return isinstance(fields, dict) and any(holds(v, test, depth - 1) for v in fields.values())


def mutating(*keys):
    """Register a mutating adjoint for each (type, method name) key."""
    def register(adj):
        registry.adjoint(*keys)(adj)
        for k in keys:
            registry.set(k, mutating=True)
        return adj
    return register


def _inplace(*keys):
    """Register `inplace(*args, **kw) -> (y, back)` for each (type, method name) key; `back(S, dy, dself)`
    returns (dself, positional cotangents[, keyword cotangents])."""
    def register(fn):
        for k in keys:
            registry.set(k, inplace=fn)
        return fn
    return register


def _structure_like(gs, x):
    """Cotangents gs (one per element) shaped like the iterable x they came from."""
    if isinstance(x, np.ndarray):
        out = np.zeros_like(x)
        for i, g in enumerate(gs):
            if g is not None:
                out[i] = g
        return out
    if isinstance(x, tuple):
        return tuple(gs)
    return list(gs)


@mutating((list, "append"))
def list_append_adjoint(S, dself, dy, y, self, v):
    box = S.box(self, dself)
    gv = box.pop() if box else None
    self.pop()
    S.redo(list.append, self, v)
    return box, (gv,)


@_inplace((list, "extend"))
def list_extend_inplace(self, items):
    """`l.extend(items)`: the items added are those past l's length before the call, however many the
    iterable gave (an iterator, a generator's, a `map` has no length afterwards: taking none of them
    dropped their cotangents, 0 silently, and left the list's box misaligned for the adjoints before it)."""
    n0 = len(self)
    start = _drawn_already(items)
    self.extend(items)

    def extend_back(S, dy, dself):
        box = S.box(self, dself)
        n = len(self)
        gs = list(box[n0:n]) + [None] * max(0, n - max(n0, len(box)))
        del box[n0:]
        added = self[n0:]
        del self[n0:]
        S.redo(list.extend, self, added)
        if all(g is None for g in gs):
            return box, (None,)
        if start:  # (an iterator of a list or tuple drawn from before: its box is by position in the sequence)
            return box, ([None] * start + gs,)
        return box, (_structure_like(gs, items) if isinstance(items, (np.ndarray, tuple)) else gs,)
    return None, extend_back


# iterators whose position in their sequence is known (`__reduce__` gives it): `next` and loops over a
# partly consumed one put each drawn item's cotangent at its position in the iterator's box (`ad.primitives`)
POSITIONED = frozenset({type(iter([])), type(iter(())), type(iter(np.empty(1)))})


def position(it) -> int:
    """How many items the iterator it (of a POSITIONED type) has given; -1 when exhausted."""
    r = it.__reduce__()
    if len(r) == 3:
        return r[2]
    return -1  # exhausted: drawing from it gives nothing


def _drawn_already(items) -> int:
    """How many items an iterator of a list, tuple or array has given before (its cotangent box is by position
    in the sequence: `vals = [next(it)]; vals.extend(it)`, inspect's `Signature.bind` of `*args`, credited the
    items from position 0, the next item's cotangent to the first: a wrong gradient); 0 for anything else."""
    return max(position(items), 0) if type(items) in POSITIONED else 0


@mutating((list, "insert"))
def list_insert_adjoint(S, dself, dy, y, self, i, v):
    box = S.box(self, dself)
    n = len(self)
    pos = min(max(i + n - 1 if i < 0 else i, 0), n - 1)
    gv = box.pop(pos)
    self.pop(pos)
    S.redo(list.insert, self, i, v)
    return box, (None, gv)


@mutating((list, "pop"))
def list_pop_adjoint(S, dself, dy, y, self, i=-1):
    box = S.box(self, dself)
    n = len(self) + 1  # the length before the pop
    pos = i + n if i < 0 else i
    box.insert(pos, dy)
    self.insert(pos, y)
    S.redo(list.pop, self, pos)
    return box, (None,)


@mutating((list, "reverse"))
def list_reverse_adjoint(S, dself, dy, y, self):
    box = S.box(self, dself)
    box.reverse()
    self.reverse()
    S.redo(list.reverse, self)
    return box, ()


@registry.adjoint(list.copy, dict.copy)
def copy_adjoint(dy, y, self):
    if isinstance(self, dict):
        return (dict(dy) if dy is not None else None,)
    return (list(dy) if dy is not None else None,)


@_inplace((list, "copy"), (dict, "copy"))
def copy_inplace(self):
    """`d.copy()` / `l.copy()`: the copy's cotangent is read from its box (where the items drawn through
    its views or iterated put theirs, not only from the variable holding it) into self's box."""
    y = self.copy()

    def copy_back(S, dy, dself):
        got = S.box(y, dy)
        box = S.box(self, dself)
        if isinstance(self, (dict, types.MappingProxyType)):
            for k in self:
                g = got.get(k)
                if g is not None:
                    box[k] = acc(box.get(k), g)
        else:
            merge_into(box, list(got))
        return box, ()
    return y, copy_back


def py_count(seq, value):
    """`seq.count(value)` as the loop it is (identity first, then `==`): run where an item's class compares
    in Python (its `__eq__` may record what it is handed: the list's C loop handed it a dual's primal)."""
    n = 0
    for x in seq:
        if x is value or x == value:
            n += 1
    return n


def py_index(seq, value, start=0, stop=sys.maxsize):
    """`seq.index(value[, start[, stop]])` as the loop it is (see `py_count`)."""
    start, stop, _ = slice(start, stop).indices(len(seq))
    for i in range(start, stop):
        if seq[i] is value or seq[i] == value:
            return i
    raise ValueError(f"{value!r} is not in {type(seq).__name__}")


SEQUENCE_FORMS = {"count": py_count, "index": py_index}

registry.nondifferentiable((list, "index"), (list, "count"), (tuple, "index"), (tuple, "count"),
                           (dict, "keys"), (dict, "__contains__"), (list, "__contains__"),
                           # a dict's keys drawn one by one (`next(iter(cache))`, re's cache evicting its
                           # oldest entry: a module's dict, differentiated as any changeable global is):
                           # keys carry no derivative, as `dict.keys` above
                           (type(iter({})), "__next__"), (type(iter({}.keys())), "__next__"))


@registry.adjoint((dict, "get"))
def dict_get_adjoint(dy, y, self, key, default=None):
    if key in self:
        return ({key: dy}, None, None)
    return (None, None, dy)


@registry.adjoint((dict, "values"))
def dict_values_adjoint(dy, y, self):
    if dy is None:
        return (None,)
    if isinstance(dy, dict):  # by key already (the items were drawn when the dict had those keys)
        return (dict(dy),)
    gs = list(dy)
    return ({k: g for k, g in zip(self, gs) if g is not None},)


@registry.adjoint((dict, "items"))
def dict_items_adjoint(dy, y, self):
    if dy is None:
        return (None,)
    if isinstance(dy, dict):  # by key already
        return (dict(dy),)
    out = {}
    for k, pair in zip(self, list(dy)):
        if pair is not None and pair[1] is not None:
            out[k] = pair[1]
    return (out,)


_MISSING = object()


@mutating((dict, "pop"))
def dict_pop_adjoint(S, dself, dy, y, self, key, default=_MISSING):
    box = S.box(self, dself)
    if y is default and key not in self and default is not _MISSING:
        return box, (None, dy)
    box[key] = dy
    self[key] = y
    S.redo(dict.pop, self, key)
    return box, (None, None)


def own_mapping_refused(m, g, values=None) -> None:
    """Reverse mode gives a mapping's entries' cotangents back by key (`dict(m)`, `d.update(m)`, `{**m}`): a
    mapping whose class reads its entries in Python code of its own (`__getitem__` of a dict it holds) keeps
    no entries by key, and the cotangent was lost (gen16 W3: 0.7 for 1.4). Refused."""
    if g and not isinstance(m, dict) and type(getattr(type(m), "__getitem__", None)) is types.FunctionType and any(
            gk is not None and not _boxed((values or m)[k]) for k, gk in g.items()):
        # (an object's value, boxed: its cotangent is in its own box by identity, whoever holds it: xarray's
        # Frozen mappings of variables)
        raise NoRuleError(f"reverse mode cannot take the entries of a {type(m).__name__} (a mapping whose own "
                          "__getitem__ reads them) into a dict: their cotangents would go to it by key",
                          fix="read them as code: `{k: m[k] for k in m.keys()}`; forward mode follows it")


def _writes(args, kw):
    """The (key, value, source) writes of `dict(...)` / `d.update(...)` in order: source ("m", key) for a
    mapping's entry, ("p", i) for the i-th pair of an iterable, ("k", name) for a keyword; and the pairs
    materialised (an iterable may be a one-shot generator)."""
    out = []
    other = args[0] if args else ()
    if hasattr(other, "keys"):
        for k in other.keys():
            out.append((k, other[k], ("m", k)))
        items = other
    else:
        items = [tuple(p) for p in other]
        for i, (k, v) in enumerate(items):
            out.append((k, v, ("p", i)))
    for k, v in kw.items():
        out.append((k, v, ("k", k)))
    return out, items


def _route(gs, writes, other, nargs):
    """Cotangents gs (key -> cotangent of the value stored there) of the writes back to their sources:
    (cotangents of the positional argument, of the keywords); the last write of a key wins."""
    last = {}
    for k, _, src in writes:
        last[k] = src
    gm, gp, gk = {}, None, {}
    for k, src in last.items():
        g = gs.get(k) if gs is not None else None
        if g is None:
            continue
        if src[0] == "m":
            gm[src[1]] = g
        elif src[0] == "p":
            if gp is None:
                gp = [None] * len(other)
            gp[src[1]] = (None, g)
        else:
            gk[src[1]] = g
    if hasattr(other, "keys"):
        own_mapping_refused(other, gm, {k: v for k, v, _ in writes})  # (where none, nothing is lost)
    dother = (gm or None) if hasattr(other, "keys") else gp
    return ((dother,) if nargs else ()), gk


def new_dict(cls, args, kw):
    """`cls(mapping or pairs, **kw)` for dict or a subclass that keeps dict's constructor: built empty,
    then filled as `update` does (the pairs are drawn now: an iterator is consumed once)."""
    y = cls()
    _, back = dict_update_inplace(y, *args, **kw)

    def dict_new_back(S, dy, dself):
        _, pos, gk = back(S, None, dy)  # (the new dict's cotangent is update's object's: a callee's `**` one
        return None, pos, gk            # came as a plain dict, and was dropped)
    return y, dict_new_back


registry.set(dict, inplace=lambda *args, **kw: new_dict(dict, args, kw))


def new_ordered_dict(*args, **kw):
    """`OrderedDict(mapping or pairs, **kw)` (inspect's Signature keeps its parameters in one): filled by
    its own `__setitem__` (dict's would bypass its order); each value's cotangent goes to its source."""
    writes, items = _writes(args, kw)
    y = collections.OrderedDict()
    for k, v, _ in writes:
        y[k] = v

    def ordered_dict_new_back(S, dy, dself):
        box = S.box(y, dy)
        gs = {k: box.pop(k, None) for k in y}
        pos, gk = _route(gs, writes, items, len(args))
        return None, pos, gk
    return y, ordered_dict_new_back


registry._rule(collections.OrderedDict).inplace = new_ordered_dict


def _set_order(d, keys) -> None:
    for k in keys:
        d.move_to_end(k)


@_inplace((collections.OrderedDict, "move_to_end"))
def move_to_end_inplace(self, *args, **kw):
    """`od.move_to_end(key)`: the values stay under their keys (the box is by key); the order is restored
    for the adjoints before it (a `list(od.values())` read earlier maps positions to keys by it) and redone
    when the pass ends."""
    before = list(self)
    self.move_to_end(*args, **kw)
    after = list(self)

    def move_to_end_back(S, dy, dself):
        box = S.box(self, dself)
        _set_order(self, before)
        S.redo(_set_order, self, after)
        return box, (None,) * len(args)
    return None, move_to_end_back


def new_namespace(*args, **kw):
    """`types.SimpleNamespace(**kw)`: an object whose fields are the keywords; each one's cotangent is its
    field's in the object's box. (A mapping given positionally, Python 3.13's form: refused.)"""
    if args:
        raise NoRuleError("types.SimpleNamespace(mapping) with differentiated values",
                          fix="pass the fields as keywords (`SimpleNamespace(**mapping)`)")
    y = types.SimpleNamespace(**kw)

    def namespace_back(S, dy, dself):
        box = S.box(y, dy)
        return None, (), {k: box.get(k) for k in kw}
    return y, namespace_back


registry.set(types.SimpleNamespace, inplace=new_namespace)


SHARED_SAFELY: list[type] = []
"""Classes whose objects are never changed in place after they are built (xarray's indexes): one of them
under every key of `dict.fromkeys` is safe (its cotangent box is the same whatever key reached it)."""


_RANDOM_STATES = (np.random.Generator, np.random.BitGenerator, np.random.RandomState, np.random.SeedSequence)


def _carries_derivative(value, depth: int = 0) -> bool:
    """value may carry a derivative (conservative: an object of a type not known here may): a dtype, an
    integer array, an index of integer or string labels (`leaves.carries_none`) or an object all of whose
    fields are such carry none."""
    if value is None or isinstance(value, (bool, int, str, bytes, type, np.dtype, np.integer, np.bool_)):
        return False
    if type(value) is object:  # (a bare `object()`: an identity, pandas' `Index._id` added to a set by `concat`)
        return False
    if isinstance(value, _RANDOM_STATES):  # (a random generator's state: integers; SALib copies one)
        return False
    if carries_none(value):
        return False
    if isinstance(value, np.ndarray):
        return value.dtype.kind not in "biuUSmMV"
    if depth >= 4:
        return True
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(_carries_derivative(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return any(_carries_derivative(v, depth + 1) for v in value.values())
    if has_fields(value):
        return any(_carries_derivative(v, depth + 1) for v in fields_of(value).values())
    return True


@_inplace((type, "fromkeys"))
def fromkeys_inplace(cls, keys, value=None):
    """`dict.fromkeys(keys, v)` (a class method): v is stored under every key; its cotangent is the sum of
    theirs, read from the dict's box (where reads by key and by `.values()`/`.items()` leave them: the
    plain cotangent alone missed the latter, 0 silently). One object under every key (a list, an array,
    a dict) would be changed in place through any of them: refused when it may carry a derivative."""
    if (isinstance(value, (list, dict, set, np.ndarray)) or has_fields(value)) and _carries_derivative(value) \
            and not (SHARED_SAFELY and isinstance(value, tuple(SHARED_SAFELY))):
        raise NoRuleError(f"dict.fromkeys(keys, value) with a differentiated {type(value).__name__} as the value "
                          "(one object under every key)",
                          fix="build the dict with a comprehension (`{k: make() for k in keys}`), one value per key")
    y = cls.fromkeys(keys, value)

    def fromkeys_back(S, dy, dself):
        box = S.box(y, dy)
        g = None
        for k in y:
            g = acc(g, box.pop(k, None))
        return None, (None, g)
    return y, fromkeys_back


_PLAIN_CONSTANTS = (str, bytes, bool, int, type(None), type, types.ModuleType, types.FunctionType,
                    types.BuiltinFunctionType)


def _refuse_module_namespace(d, values) -> None:
    """Reverse mode's stores into a dict: refused where d is a module's namespace and a value stored may carry
    a derivative (`globals().update({'H': x * 5})` then `H` read by name: a constant, 0 for 5, gen21 W10)."""
    name = d.get("__name__") if type(d) is dict else None
    module = sys.modules.get(name) if type(name) is str else None
    if module is None or getattr(module, "__dict__", None) is not d:
        return
    if all(isinstance(v, _PLAIN_CONSTANTS) for v in values):
        return
    raise OverdubError(f"reverse mode cannot store a differentiated value into the namespace of module {name}: "
                       "reads of the global by name would not carry the derivative",
                       fix="keep the value in a dict of your own or pass it as an argument; forward mode "
                           "(`derivative`, `jvp`) follows it")


@_inplace((dict, "update"))
def dict_update_inplace(self, *args, **kw):
    """d.update(mapping or pairs, **kw) in place: the old values are kept so the reverse pass restores
    them; each new value's cotangent goes to its source (the last write of a key wins)."""
    writes, items = _writes(args, kw)
    _refuse_module_namespace(self, [v for _, v, _ in writes])
    old = {k: dict.get(self, k, _MISSING) for k, _, _ in writes}
    for k, v, _ in writes:
        dict.__setitem__(self, k, v)  # as dict.update does: a subclass's own __setitem__ is not called
    new = {k: dict.__getitem__(self, k) for k in old}

    def update_back(S, dy, dself):
        box = S.box(self, dself)
        gs = {k: box.pop(k, None) for k in old}
        for k, o in old.items():
            if o is _MISSING:
                dict.pop(self, k, None)  # (as before the update: absent; a later pop's undo may not have put it back)
            else:
                dict.__setitem__(self, k, o)
        S.redo(dict.update, self, new)
        pos, gk = _route(gs, writes, items, len(args))
        return box, pos, gk
    return None, update_back


registry.set((dict, "__init__"), inplace=dict_update_inplace)  # `super().__init__(**kw)` in a subclass


@_inplace((dict, "__setitem__"))
def dict_setitem_inplace(self, key, value):
    """`dict.__setitem__(self, k, v)` by name (a dict subclass's own `__setitem__` handing the store on to
    dict's: lmfit's Parameters): the store, with the old value kept for the reverse pass."""
    old = dict.get(self, key, _MISSING)
    dict.__setitem__(self, key, value)

    def setitem_back(S, dy, dself):
        box = S.box(self, dself)
        g = box.pop(key, None)
        if old is _MISSING:
            dict.pop(self, key, None)
        else:
            dict.__setitem__(self, key, old)
        S.redo(dict.__setitem__, self, key, value)
        return box, (None, g)
    return None, setitem_back


@_inplace((list, "__init__"))
def list_init_inplace(self, *args):
    """list.__init__(self[, iterable]) (`super().__init__(items)` in a subclass): replaces the contents."""
    old = list(self)
    items = list(args[0]) if args else []
    list.__init__(self, items)

    def init_back(S, dy, dself):
        box = S.box(self, dself)
        gs = list(box[:len(items)]) + [None] * (len(items) - len(box))
        box[:] = [None] * len(old)
        list.__init__(self, old)
        S.redo(list.__init__, self, items)
        return box, ((gs if any(g is not None for g in gs) else None),) if args else ()
    return None, init_back


@_inplace((dict, "setdefault"))
def dict_setdefault_inplace(self, key, default=None):
    """d.setdefault(k, v): the value at k (a new one: v, stored) is also the result."""
    had = key in self
    if not had:
        _refuse_module_namespace(self, [default])
    y = self.setdefault(key, default)

    def setdefault_back(S, dy, dself):
        box = S.box(self, dself)
        if had:
            if dy is not None:
                box[key] = acc(box.get(key), dy)
            return box, (None, None)
        g = acc(box.pop(key, None), dy)
        del self[key]
        S.redo(dict.__setitem__, self, key, y)
        return box, (None, g)
    return y, setdefault_back


@mutating((dict, "popitem"))
def dict_popitem_adjoint(S, dself, dy, y, self, last=True):
    """d.popitem() (an OrderedDict's `popitem(last=False)`: its first item, put back first)."""
    box = S.box(self, dself)
    k, v = y
    self[k] = v
    if not last:
        self.move_to_end(k, last=False)
    if dy is not None and dy[1] is not None:
        box[k] = acc(box.get(k), dy[1])
    S.redo(dict.popitem if last else _pop_first, self)
    return box, ()


def _pop_first(d):
    return d.popitem(last=False)


@_inplace((list, "clear"), (dict, "clear"))
def clear_inplace(self):
    """l.clear() / d.clear(): what was there is kept and restored for the earlier adjoints."""
    old = self.copy()
    self.clear()

    def clear_back(S, dy, dself):
        box = S.box(self, dself)
        if isinstance(self, dict):
            box.clear()
            self.update(old)
        else:
            box[:] = [None] * len(old)
            self[:] = old
        S.redo(type(self).clear, self)
        return box, ()
    return None, clear_back


@_inplace((list, "remove"))
def list_remove_inplace(self, v):
    """l.remove(v): the removed item (found by equality) gets no cotangent from after the call."""
    i = self.index(v)
    item = self[i]
    del self[i]

    def remove_back(S, dy, dself):
        box = S.box(self, dself)
        box.insert(i, None)
        self.insert(i, item)
        S.redo(list.pop, self, i)
        return box, (None,)
    return None, remove_back


# -- copy.copy and copy.deepcopy of containers, arrays, numbers and plain objects -----------------

def _plain(g, deep):
    """A cotangent as plain values (a copy's boxes belong to the copy; deep: all the way down)."""
    if isinstance(g, dict):
        out = {k: (_plain(v, deep) if deep else v) for k, v in g.items()}
        return Tangent(out) if isinstance(g, Tangent) else out
    if isinstance(g, list):
        return [(_plain(v, deep) if deep else v) for v in g]
    if isinstance(g, tuple):
        return tuple((_plain(v, deep) if deep else v) for v in g)
    return g


def _plain_object(x) -> bool:
    """An object copied field by field by `copy` (no `__copy__`, `__deepcopy__`, `__reduce__` or state
    methods of its own)."""
    t = type(x)
    return (own_dict(x) is not None or bool(getattr(t, "__slots__", None))) and not any(
        getattr(t, m, None) is not getattr(object, m, None)
        for m in ("__reduce_ex__", "__reduce__", "__getstate__", "__setstate__")) and not (
        hasattr(t, "__copy__") or hasattr(t, "__deepcopy__"))


# what copy.copy and copy.deepcopy return as they are (`copy._deepcopy_atomic`'s kinds)
_ATOMIC = (type, types.FunctionType, types.BuiltinFunctionType, types.CodeType, range, property, weakref.ref,
           type(Ellipsis), type(NotImplemented), np.ufunc)


def _copy_checked(x, deep, depth=0, seen=None):
    """Refuses a copy of x (deep: and of what it holds) that reverse mode cannot follow. Each object is looked at
    once (`seen`, by identity): an object graph whose parts refer to each other (py_pol's Mueller and its
    `parameters`, each holding the other) was walked once per path, to the depth limit: exponential, a gradient
    that never ended."""
    if isinstance(x, (list, tuple, set, frozenset)) and type(x) in (list, tuple, set, frozenset):
        items = x
    elif type(x) is dict:
        items = x.values()
    elif isinstance(x, (np.ndarray, numbers.Number, str, bytes, type(None), bool)) or type(x) is object:
        return  # (a bare `object()`: a sentinel, an identity)
    elif isinstance(x, _ATOMIC):
        return  # (what `copy` returns as it is: a class held as a field, LightPipes' `_dtype = complex`)
    elif isinstance(x, (datetime.date, datetime.time, datetime.timedelta, datetime.tzinfo)):
        return  # (dates and times: values of no derivative, copied by their own protocol: quantsbin's)
    elif has_fields(x) and _plain_object(x):
        items = fields_of(x).values()
    elif not _carries_derivative(x):  # (a dtype, an index of integer labels: copied as they are)
        return
    elif isinstance(x, Labels):  # (a pandas index: its copy shares its labels, field by field)
        items = fields_of(x).values()
    else:
        raise NoRuleError(f"reverse mode copies lists, tuples, dicts, arrays, numbers and plain objects, "
                          f"not a {type(x).__name__} (it has its own copy protocol)",
                          fix="give the copy a custom adjoint, or build the copy by hand")
    if deep and depth < 50:
        if seen is None:
            seen = set()
        if id(x) in seen:
            return
        seen.add(id(x))
        for v in items:
            _copy_checked(v, deep, depth + 1, seen)


def _copy_rule(deep):
    fn = copy.deepcopy if deep else copy.copy

    def copy_inplace(x, *rest):
        _copy_checked(x, deep)
        # (a deep copy's memo pairs each object inside x with its copy: the cotangents each copy's box
        # gathers go back to its original's box, where the stores into it (`L[0].v = x`, `o.box.v = x`,
        # river's `self.mean.update(x)`) find them)
        memo = (rest[0] if rest and type(rest[0]) is dict else {}) if deep else None
        y = fn(x, memo, *rest[1:]) if deep else fn(x, *rest)

        def copy_back(S, dy, dself):
            if y is x:
                return None, (dy,) + (None,) * len(rest)
            if not _boxed(x):  # (an array, a number: its cotangent is a value)
                return None, (_plain(dy, deep),) + (None,) * len(rest)
            S.box(y, dy)
            pairs = [(x, y)]
            if deep:  # (the originals copy.deepcopy kept alive, and their copies)
                pairs += [(o, memo.get(id(o))) for o in list(memo.get(id(memo), ())) if o is not x]
            for orig, c in pairs:
                if c is not None and c is not orig and _boxed(c):
                    S.box(orig, _leaf_entries(S.box(c), c, deep))
            return None, (S.box(x),) + (None,) * len(rest)
        return y, copy_back
    registry.set(fn, inplace=copy_inplace)


def _boxed(v) -> bool:
    """v's cotangent lives in a box of its own (a list, dict, tuple or object with fields), by identity."""
    return isinstance(v, (list, dict, tuple)) or (has_fields(v) and not isinstance(v, (np.ndarray, numbers.Number)))


def _leaf_entries(box, c, deep):
    """The entries of copy c's box for c's own values (numbers, arrays), as plain values: an entry for a boxed
    value (an object, a list inside c) is that value's, in its own box (a deep copy's pair; a shallow
    copy's shares the original's)."""
    if isinstance(box, list):
        return [None if i < len(c) and _boxed(c[i]) else _plain(g, deep) for i, g in enumerate(box)]
    values = c if isinstance(c, dict) else fields_of(c)
    out = {k: _plain(g, deep) for k, g in box.items() if not _boxed(values.get(k))}
    return Tangent(out) if isinstance(box, Tangent) else out


_copy_rule(False)
_copy_rule(True)


# `bisect.bisect_left/right(a, x)`: a position, piecewise constant in x and in a's items (an ordering test,
# as `x < a[i]` is: a branch); `insort` is that position's `list.insert`, written so for every engine
registry.nondifferentiable(bisect.bisect_left, bisect.bisect_right)


def insort_right(a, x, lo=0, hi=None, *, key=None):
    """`bisect.insort_right` as the Python code it runs."""
    at = bisect.bisect_right(a, x if key is None else key(x), lo, len(a) if hi is None else hi, key=key)
    a.insert(at, x)


def insort_left(a, x, lo=0, hi=None, *, key=None):
    at = bisect.bisect_left(a, x if key is None else key(x), lo, len(a) if hi is None else hi, key=key)
    a.insert(at, x)


registry.set(bisect.insort_right, stand_in=insort_right)
registry.set(bisect.insort_left, stand_in=insort_left)


# -- C functions that reorder a list in place (heapq, list.sort, random.shuffle) ------------------
# They run as they are; the reverse pass maps the list's cotangent box from the order after the call
# back to the order before it by the identity of the elements, restores the old order (redone after the
# pass) and gives an item pushed in (or popped out) its cotangent.

def _cancelled(held, box):
    """What cancels, in the caller's `d += ...`, the cotangent the caller held for a list reordered in
    place by a function (`heapq.heapreplace(h, x)`) when that was not the list's box (`list(h)` or a
    comprehension read it after the call: a plain list of cotangents in the order after the call). It was
    merged into the box, which the pass reorders: left with the caller too, it would count twice, in the
    order after the call (silently wrong before). Numbers and arrays are negated; anything else refused."""
    if held is None or held is box:
        return None
    if type(held) not in (list, tuple):
        raise NoRuleError(f"a list reordered in place (heapq) whose cotangent is a {type(held).__name__}",
                          fix="read the heap by index (`h[0]`), or sort a copy (`sorted(h)`)")
    return [_negated(g) for g in held]


def _negated(g):
    if g is None:
        return None
    if isinstance(g, (numbers.Number, np.ndarray, np.generic)) and not isinstance(g, bool):
        return -g
    if type(g) in (list, tuple):  # (a heap of `(priority, item)` pairs)
        return type(g)(_negated(x) for x in g)
    raise NoRuleError(f"a list reordered in place (heapq) holding {type(g).__name__} cotangents, read as a "
                      "copy after the change (`list(h)`, a comprehension)",
                      fix="read the heap by index (`h[0]`), or sort a copy (`sorted(h)`)")


def _reorder_back(S, heap, before, after, item, dself, is_method, name=None, popped=(), dy=None):
    """The cotangents of the list's items before the reordering (`box`), the pushed item's, and what cancels
    the caller's copy. With a `name` (an order by value, not `random.shuffle`), refused where equal items of
    the list after it (and a popped one) carry different cotangents: a tie the order parts (`ties`)."""
    held = dself if is_method else S.held(0)
    box = S.box(heap, held)
    cancel = None if is_method else _cancelled(held, box)
    after_cots = list(box) + [None] * (len(after) - len(box))
    if name is not None and parting_items(after + list(popped), after_cots + [dy] * len(popped)) and \
            not note_tie(name, None, depth=2):
        refused = Refused(TiedApart(name, depth=2))
        box[:] = [refused] * len(before)
        heap[:] = before
        S.redo(list.__setitem__, heap, slice(None), after)
        return box, (None if item is None else refused), cancel
    by_id: dict[int, list] = {}
    for obj, g in zip(after, after_cots):
        by_id.setdefault(id(obj), []).append(g)
    moved = [by_id[id(obj)].pop() if by_id.get(id(obj)) else None for obj in before]
    ditem = None
    if item is not None and by_id.get(id(item)):
        ditem = by_id[id(item)].pop()  # the pushed item's place after the call
    box[:] = moved
    heap[:] = before
    S.redo(list.__setitem__, heap, slice(None), after)
    return box, ditem, cancel


def _reordering(fn, pushes: bool, pops: bool, is_method: bool = False):
    def inplace(heap, *args, **kwargs):
        before = list(heap)
        y = fn(heap, *args, **kwargs)
        after = list(heap)
        item = args[0] if pushes and args else None

        def reorder_back(S, dy, dself):
            box, ditem, cancel = _reorder_back(S, heap, before, after, item, dself, is_method,
                                               None if fn is random.shuffle else f"{fn.__qualname__}",
                                               (y,) if pops else (), dy)
            if pops and dy is not None:  # the popped item's cotangent goes back to its old place
                for i, obj in enumerate(before):
                    if obj is y and box[i] is None:
                        box[i] = dy
                        break
                else:
                    if item is not None and y is item:
                        # `heappushpop(h, v)` handing v itself back (h empty, or v <= h[0]): v never entered the
                        # heap, its cotangent is the result's (it was lost: 0 for 3, gen12 W1)
                        ditem = acc(ditem, dy)
            rest = (ditem,) + (None,) * (len(args) - 1) if args else ()
            if is_method:
                return box, rest
            return None, (cancel,) + rest  # (not the box: what cancels the caller's own copy)
        return y, reorder_back
    inplace.__name__ = f"{getattr(fn, '__name__', 'reorder')}_inplace"
    return inplace


for _fn, _push, _pop in [(heapq.heappush, True, False), (heapq.heappop, False, True), (heapq.heapify, False, False),
                         (heapq.heapreplace, True, True), (heapq.heappushpop, True, True),
                         (random.shuffle, False, False)]:
    registry.set(_fn, inplace=_reordering(_fn, _push, _pop))
# the max-heap helpers `heapq.nsmallest` and `nlargest` call (private before Python 3.14, public since)
for _name, _push, _pop in [("heapify_max", False, False), ("heappop_max", False, True),
                           ("heapreplace_max", True, True), ("heappush_max", True, False),
                           ("heappushpop_max", True, True)]:
    for _fn in {getattr(heapq, _name, None), getattr(heapq, "_" + _name, None)} - {None}:
        registry.set(_fn, inplace=_reordering(_fn, _push, _pop))
registry.set((list, "sort"), inplace=_reordering(list.sort, False, False, is_method=True))


# -- sets: members without a place for a cotangent ------------------------------------------------------

_CONSTANT_MEMBERS = (str, bytes, int, type(None), type(Ellipsis), np.dtype)


def constant_member(m) -> bool:
    if m is _NAN or m is _NP_NAN:  # (the constants themselves, by identity: a NaN computed is another object;
        return True                # pandas' string dtypes' `na_value`, gathered into a set by `_get_common_dtype`)
    if type(m) is tuple:
        return all(constant_member(e) for e in m)
    if isinstance(m, type):  # (a class, `set(map(type, values))`, trueskill's: unless it holds numbers itself)
        return not any(isinstance(v, (float, complex, np.ndarray, np.inexact)) for v in vars(m).values())
    return isinstance(m, _CONSTANT_MEMBERS) and not isinstance(m, float) or isinstance(m, (np.integer, np.bool_)) \
        or _by_identity(m)


def _by_identity(m) -> bool:
    """An object a set holds by its identity (its class's hash and equality are object's, or methods of its own
    saying only that: `identity_methods`): whatever it holds keeps its cotangents in its own box, which every
    read of it finds, through the set or not (chemthermo's `{getattr(c, 'branch_state', None) for c in
    candidates}`; elote's Bradley-Terry competitors: refused before)."""
    t = type(m)
    return (identity_methods(t) and has_fields(m)
            and not isinstance(m, (numbers.Number, np.ndarray, np.generic)))


def identity_methods(cls) -> bool:
    """cls hashes and compares its objects by identity: object's own `__eq__` and `__hash__`, or methods of its
    own saying only that (`return self is other`, `return object.__hash__(self)`, `return id(self)`: elote's
    competitors, dict keys whose ratings are differentiated)."""
    found = _IDENTITY.get(cls)
    if found is None:
        found = _IDENTITY[cls] = (cls.__eq__ is object.__eq__ or _says_identity(cls.__eq__, "eq")) and (
            cls.__hash__ is object.__hash__ or _says_identity(cls.__hash__, "hash"))
    return found


_IDENTITY = weakref.WeakKeyDictionary()


def _says_identity(fn, kind: str) -> bool:
    """fn's whole body (a docstring aside) is `return self is other` (kind "eq"), or `return object.__hash__(self)`,
    `id(self)` or `hash(id(self))` (kind "hash")."""
    import ast
    tree = function_tree(fn)
    if tree is None or not tree.args.args:
        return False
    body = [s for s in tree.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return False
    v, names = body[0].value, [a.arg for a in tree.args.args]
    if kind == "eq":
        return len(names) == 2 and isinstance(v, ast.Compare) and len(v.ops) == 1 and isinstance(v.ops[0], ast.Is) \
            and {ast.unparse(v.left), ast.unparse(v.comparators[0])} == set(names)
    text = ast.unparse(v).replace(" ", "")
    me = names[0]
    return text in (f"object.__hash__({me})", f"id({me})", f"hash(id({me}))")


_NAN, _NP_NAN = math.nan, np.nan


def set_add_inplace(self, m):
    """`s.add(m)` of a constant member (a key, a name, an object by its identity): no cotangent; others refused
    as `set(...)` refuses them."""
    if not constant_member(m) and _carries_derivative(m):
        raise NoRuleError("a set of values that may carry a derivative (its members have no place to carry it back)",
                          fix="keep the values in a list or tuple; use a set for keys, names or indices only")
    self.add(m)

    def back(S, dy, dself):
        return dself, (None,)
    return None, back


def set_pop_inplace(self):
    """`s.pop()`: a member by its identity keeps its cotangent in its own box (taken there); others refused."""
    y = self.pop()
    if not constant_member(y) and _carries_derivative(y):
        self.add(y)
        raise NoRuleError("a value that may carry a derivative popped from a set (it has no place to carry it back)",
                          fix="keep the values in a list or tuple; use a set for keys, names or indices only")

    def back(S, dy, dself):
        if dy is not None and not isinstance(y, _CONSTANT_MEMBERS):
            S.box(y, dy)
        return dself, ()
    return y, back


def _set_removal(method):
    def removal_inplace(self, m):
        """`s.discard(m)`, `s.remove(m)`: membership, no cotangent (the member keeps its own)."""
        method(self, m)

        def back(S, dy, dself):
            return dself, (None,)
        return None, back
    return removal_inplace


registry.set((set, "add"), inplace=set_add_inplace)
registry.set((set, "pop"), inplace=set_pop_inplace)
registry.set((set, "discard"), inplace=_set_removal(set.discard))
registry.set((set, "remove"), inplace=_set_removal(set.remove))


def set_rrule(iterable=(), /, *, _kind=set):
    """`set(d)` of a dict takes its keys, which carry no cotangent in any mode (nor do strings, ints,
    tuples of them): a constant. A set of other values (floats, arrays) would drop their derivatives,
    having no place to carry them back: refused."""
    if not isinstance(iterable, (dict, type({}.keys()))):
        iterable = list(iterable)
        if not all(constant_member(m) for m in iterable):
            raise NoRuleError(f"a {_kind.__name__} of values that may carry a derivative (its members have no "
                              "place to carry it back)",
                              fix="keep the values in a list or tuple; use a set for keys, names or indices only")
    return _kind(iterable), lambda dy: (None,)


def frozenset_rrule(iterable=(), /):
    return set_rrule(iterable, _kind=frozenset)


registry.rrule(set)(set_rrule)
registry.rrule(frozenset)(frozenset_rrule)


def new_mappingproxy(mapping):
    """`types.MappingProxyType(d)`: a read-only view of d (inspect.Signature keeps its parameters in one);
    what is read through it by key leaves its cotangent in the view's box, which goes to d's."""
    y = types.MappingProxyType(mapping)

    def mappingproxy_back(S, dy, dself):
        box = S.box(y, dy)
        g = {k: v for k, v in box.items() if v is not None} or None
        return None, (g,)
    return y, mappingproxy_back


registry.set(types.MappingProxyType, inplace=new_mappingproxy)


# a read-only view of a dict is read as the dict is (its cotangent a dict by key: `new_mappingproxy`)
_PROXY = types.MappingProxyType
registry.nondifferentiable((_PROXY, "keys"), (_PROXY, "__contains__"), (_PROXY, "__len__"), (_PROXY, "__iter__"))
registry.adjoint((_PROXY, "get"))(dict_get_adjoint)
registry.adjoint((_PROXY, "values"))(dict_values_adjoint)
registry.adjoint((_PROXY, "items"))(dict_items_adjoint)
registry.set((_PROXY, "copy"), inplace=copy_inplace)  # (a dict: plasmapy's `signature.parameters.copy()`)


def subscripted(obj, key):
    """`obj[key]` as code (a dict subclass's bound `__getitem__` called as a method: its `__missing__` runs as
    the subscript runs it)."""
    return obj[key]


def sequence_item(seq, key):
    """`super().__getitem__(key)` in a list or tuple subclass's own `__getitem__` (pandas' FrozenList): the item
    or slice of its plain elements (a plain list or tuple, as the C method gives), as code reverse mode follows
    (refused before: no rule for the C method bound to the subclass's object)."""
    return (list(seq) if isinstance(seq, list) else tuple(seq))[key]


registry.set((list, "__getitem__"), stand_in=sequence_item)
registry.set((tuple, "__getitem__"), stand_in=sequence_item)


def mutable_mapping_clear(self):
    """`MutableMapping.clear` without its loop of `popitem` until KeyError (a raise after a store, caught,
    which reverse mode refuses): a user mapping's entries deleted one by one, as code; a weak dictionary, a
    cache of objects (functools.singledispatch clears its own whenever an ABC is registered: every reverse call
    through it was refused, pkD's stdatm), cleared natively."""
    if isinstance(self, _WEAK_DICTS):
        clear_weak(self)
        return
    for key in list(self.keys()):
        del self[key]


_WEAK_DICTS = (weakref.WeakKeyDictionary, weakref.WeakValueDictionary)


def clear_weak(d) -> None:
    """A weak dictionary emptied, as MutableMapping.clear does it (run natively: no derivative)."""
    while True:
        try:
            d.popitem()
        except KeyError:
            return


registry.nondifferentiable(clear_weak)
registry.set(collections.abc.MutableMapping.clear, stand_in=mutable_mapping_clear)


# `weakref.ref(obj)`: a reference by identity, no value of its own. What is read through it (`r().v`) is obj's
# own, its cotangent in obj's box (reverse mode boxes objects by identity), so the reference carries none.
registry.nondifferentiable(weakref.ref)
