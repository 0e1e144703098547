"""Rules the reverse-mode engine provides itself: unpacking, list/tuple/iter (a user class's Python
`__iter__` is differentiated), the builtin getattr, ufunc.at, and the replacements' helper."""

from __future__ import annotations

import numpy as np

from ..rules import generic
from ..rules.containers import constant_member
from ..rules.registry import registry
from ..lowered.runtime import eager, eager_guard, eager_inplace, iter_guard, unpack
from .helpers import _MISSING, _scalar_cot, getattr_, getattr_adj, mutable, setattr_adj, unpack_adjoint
from ..rules.cotangents import acc, number_part
from ..rules.registry import NoRuleError
from ..rules.numpy.inplace import at_rounds, refuse_read_only_at
from ..rules.builtins import float_adjoint, slot_of, store_slot

registry.adjoint(unpack)(unpack_adjoint)
registry.set(unpack, iterates=True)
from .replacements import (_order, attribute_setter, carries_derivative, delete_attribute, plain_attribute,
                           store_attribute)

registry.nondifferentiable(_order, attribute_setter, plain_attribute, carries_derivative, store_attribute,
                           delete_attribute)


def tuple_new(cls, iterable=()):
    """`tuple.__new__(cls, iterable)`, a namedtuple's constructor, as a primitive of its own (the runtime
    calls it for tuple.__new__, whose registry key every C `__new__` shares)."""
    return tuple.__new__(cls, iterable)


def _tuple_new_adjoint(dy, y, cls, iterable=()):
    """The items' cotangents, mapped back onto the iterable as `tuple(iterable)`'s are."""
    if dy is None:
        return None, None
    return None, _sequence_adjoint(dy, y, iterable)[0]


registry.adjoint(tuple_new)(_tuple_new_adjoint)


def float_new(cls, x=0.0):
    """`float.__new__(cls, x)`, the constructor of a float subclass (pygeodesy's Lat, Degrees, Meter), as a
    primitive of its own (the runtime calls it for float.__new__, whose registry key every C `__new__`
    shares). The object is a float of x's value, so its cotangent is x's, as for `float(x)`; what the
    subclass adds (attributes, methods) is the engine's as for any object."""
    return float.__new__(cls, x)


def _float_new_adjoint(dy, y, cls, x=0.0):
    """The object's cotangent as a number (its box's NUMBER_VALUE when attributes of it were read), x's
    as for float(x). The box's attributes were set after the object was made: their cotangents went to
    the values stored (the attribute stores' adjoints ran before this one)."""
    dy = number_part(dy)
    if dy is None:
        return None, None
    return (None,) + float_adjoint(dy, y, x)


registry.adjoint(float_new)(_float_new_adjoint)


def float_subclass_call(*args, cls):
    """`cls(*args)` for a float subclass without a `__new__` or `__init__` of its own: float.__new__(cls, ...),
    the class a keyword so that the cotangents are the arguments' alone."""
    return float.__new__(cls, *args)


def _float_subclass_call_adjoint(dy, y, *args, cls):
    return _float_new_adjoint(dy, y, cls, *args)[1:]


registry.adjoint(float_subclass_call)(_float_subclass_call_adjoint)



def _sequence_adjoint(dy, y, x=()):
    """list(x) / tuple(x): the cotangent of the copy, mapped back onto x's structure."""
    if y is x:  # tuple(t) is t: one object, one cotangent box
        return (dy,)
    if isinstance(x, _KEYED):
        return (_keys_carry_nothing(dy, x),)
    return unpack_adjoint(dy, y, x, len(y), -1)[:1]


# what iterating gives the keys of (a dict, its keys view) or the members of (a set): no cotangent goes
# back to them (a dict's cotangent is kept by key; a set's members have no position)
_KEYED = (dict, type({}.keys()), set, frozenset)


def _keys_carry_nothing(dy, keys=()):
    """None, or refused when the keys (set members) drawn were given a cotangent: it would be dropped. Not
    where every key is a constant (ints, strings, tuples of them: `sum(d[k] * k for k in d)` gives the int
    keys a cotangent, which they have no place to carry)."""
    if dy is not None and any(g is not None and not (type(g) is float and g == 0.0) for g in dy) and not (
            keys and all(constant_member(k) for k in keys)):
        raise NoRuleError("the keys of a dict (or members of a set) were read as differentiated values: no "
                          "cotangent goes back to them",
                          fix="keep the differentiated values among the dict's values (`d.values()`, "
                              "`d.items()`), keyed by something that does not depend on the inputs")
    return None


registry.adjoint(list, tuple)(_sequence_adjoint)
registry.set(list, tuple, iterates=True)


# dict views (their consumers go through runtime._iterate_view, which draws their items as a list)
DICT_VIEWS = (type({}.values()), type({}.items()))


def _iter_adjoint(dy, y, x, *sentinel):
    """iter(x): the iterator's cotangent (one entry per element drawn, by its position in x) mapped onto x."""
    if sentinel and dy is not None and any(g is not None for g in dy):
        # `iter(read, None)`: read() called from C at each draw, unrecorded (its items' cotangents were
        # dropped: 0)
        raise NoRuleError("the items drawn from iter(callable, sentinel) carry a derivative: the callable "
                          "runs from C, where reverse mode cannot follow it",
                          fix="call it in a loop: `while (v := read()) is not None: ...`")
    if dy is None or sentinel:
        return (None,) * (1 + len(sentinel))
    if y is x:  # iter() of an iterator is the iterator itself: one object, one cotangent box
        return (dy,)
    if isinstance(x, (list, tuple, np.ndarray)) or isinstance(x, DICT_VIEWS) or mutable(x):
        n = len(x)  # (a dual array, forward over reverse: its rows' dual cotangents, gathered into one)
        gs = list(dy)[:n] + [None] * max(0, n - len(dy))
        if isinstance(x, DICT_VIEWS):
            return (gs,)  # the view's rule maps positions to keys
        return unpack_adjoint(gs, tuple(x), x, n, -1)[:1]
    if isinstance(x, _KEYED):
        return (_keys_carry_nothing(list(dy), x),)
    if type(x) is range:  # its items are integers: a cotangent a use gave them (`t * i`) carries nothing
        return (None,)
    if any(g is not None for g in dy):  # (dropped, the gradient would be silently 0: a dual array's was)
        raise NoRuleError(f"the items drawn from iter() of a {type(x).__name__} carry a derivative, which "
                          "reverse mode cannot map back onto it",
                          fix="iterate a list, tuple or numpy array of the values (`for v in list(x)`)")
    return (None,)


registry.adjoint(iter, eager)(_iter_adjoint)  # (eager: a generator's items, checked, then iter's)
registry.set(iter, eager, iterates=True)
registry.nondifferentiable(eager_guard, iter_guard)  # (checks: return None)
registry.nondifferentiable(eager_inplace)

from ..rules.containers import POSITIONED, position  # noqa: E402  (one definition, the rules')


def _next_inplace(it):
    """`it.__next__()` of a list, tuple or array iterator: the item's cotangent goes to its position."""
    pos = position(it)
    y = it.__next__()

    def next_back(S, dy, dself):
        box = S.box(it, dself)
        if dy is not None:
            if pos >= len(box):
                box.extend([None] * (pos + 1 - len(box)))
            box[pos] = acc(box[pos], dy)
        return box, ()
    return y, next_back


for _t in POSITIONED:
    registry.set((_t, "__next__"), inplace=_next_inplace)


def _getattr_inplace(obj, name, *default):
    """The builtin getattr(obj, name): as the attribute read `obj.name` (a property's getter runs its
    twin now; the cotangent goes into the pass's boxes)."""
    try:
        y, pb = getattr_(obj, name)
    except AttributeError:
        if not default:
            raise
        y, pb = default[0], None
        return y, lambda S, dy, dself: (dself, (None, None, dy))

    def getattr_back(S, dy, dself):
        dobj = None if dy is None and pb is None else getattr_adj(S, None, dy, obj, name, y, pb)
        return dself, (dobj, None) + (None,) * len(default)
    return y, getattr_back


registry.set(getattr, inplace=_getattr_inplace, mutating=True)


def _store_slot_inplace(obj, name, value):
    """`store_slot(obj, name, value)` (`object.__setattr__` into a slot, past the class's own `__setattr__`)
    as the store of a field: what reads of the slot after it left in obj's box is value's cotangent, and the
    reverse pass puts the old value back."""
    try:
        old = slot_of(type(obj), name).__get__(obj, type(obj))
    except AttributeError:
        old = _MISSING
    store_slot(obj, name, value)

    def store_slot_back(S, dy, dself):
        dobj, gv = setattr_adj(S, None, obj, name, old)
        return dself, (dobj, None, gv)
    return None, store_slot_back


registry.set(store_slot, inplace=_store_slot_inplace, mutating=True)


def _ufunc_at_saves(ufunc, x, idx, v=None):
    """The elements `ufunc.at(x, idx, v)` changes, as they were (a copy); for a ufunc other than add and
    subtract, which needs the value before each write, the whole array."""
    if ufunc not in (np.add, np.subtract):
        rule = registry.get(ufunc)
        if rule is None or rule.adjoint is None or ufunc.nin != (1 if v is None else 2) or ufunc.nout != 1 or (
                not isinstance(x, np.ndarray)):
            raise NoRuleError(f"no reverse rule for {ufunc.__name__}.at", fix="use np.add.at or an explicit loop")
        refuse_read_only_at(ufunc, x)
        return x.copy()
    refuse_read_only_at(ufunc, x.primal if type(x).__name__ == "Dual" else x)
    return x[np.asarray(idx) if type(idx) is list else idx].copy()


def _ufunc_at_general(S, dself, y_saved, ufunc, x, idx, v):
    """`ufunc.at(x, idx, v)` for a ufunc whose adjoint is registered (multiply, maximum, divide, ...): numpy's
    writes one after another, replayed from the array as it was, a round of distinct positions at a time
    (`at_rounds`); then, the rounds last to first, each write's cotangents by the ufunc's own adjoint, the
    position's cotangent passed on to the value it held before."""
    old = y_saved[1]
    dx = S.held(0)
    x[...] = old
    S.redo(ufunc.at, x, idx, *(() if v is None else (v,)))
    if dx is None:
        return dself, (None, None, None)
    positions, values, rounds = at_rounds(x.shape, idx, v)
    adjoint = registry.get(ufunc).adjoint
    current = np.array(old, dtype=np.result_type(old, float)).reshape(-1)
    before = []
    for r in rounds:
        at = positions[r]
        a = current[at].copy()
        before.append(a)
        current[at] = ufunc(a) if values is None else ufunc(a, values[r])
    g = np.array(np.asarray(dx), dtype=np.result_type(dx, float)).reshape(-1)
    dvalues = None if values is None else np.zeros(values.shape, np.result_type(g, values, float))
    for r, a in zip(reversed(rounds), reversed(before)):
        at = positions[r]
        if values is None:
            da = adjoint(g[at], ufunc(a), a)[0]
        else:
            da, dv = adjoint(g[at], ufunc(a, values[r]), a, values[r])
            if dv is not None:
                dvalues[r] = dv
        g[at] = 0 if da is None else da
    held = np.asarray(dx)
    if not np.all(np.isfinite(held.reshape(-1)[positions])):  # (the change is added: inf - inf would be NaN)
        raise NoRuleError(f"no reverse rule for {ufunc.__name__}.at where the array's cotangent is infinite",
                          fix="use an explicit loop")
    moved = g.reshape(x.shape) - held  # (the caller's cotangent of x changes by this: a delta, added to it)
    dv = None
    if dvalues is not None and v is not None:
        shaped = dvalues.reshape(np.shape(np.arange(x.size).reshape(x.shape)[np.asarray(idx) if type(idx) is list
                                                                              else idx]))
        if isinstance(v, np.ndarray):
            dv = generic.unbroadcast(shaped, v)
        elif type(v) in (list, tuple) and np.ndim(v):  # (a list of values: each its own, gen21 C1: TypeError)
            dv = generic.unbroadcast(shaped, np.zeros(np.shape(v)))
            dv = dv.tolist() if type(dv) is np.ndarray else list(dv)
        else:
            dv = _scalar_cot(np.sum(shaped), v)
    return dself, (moved, None, dv)


def _ufunc_at_adjoint(S, dself, dy, y_saved, ufunc, x, idx, v=None):
    """`ufunc.at(x, idx, v)` in place: x's cotangent passes through (add/subtract), v's is gathered from
    it at idx (each repeated index once more); the primal update is undone for earlier adjoints, by the
    elements saved before it (subtracting again rounds: `w.max()`'s adjoint then found no maximum)."""
    if ufunc is not np.add and ufunc is not np.subtract:
        return _ufunc_at_general(S, dself, y_saved, ufunc, x, idx, v)
    dx = S.held(0)
    sign = 1.0 if ufunc is np.add else -1.0
    x[np.asarray(idx) if type(idx) is list else idx] = y_saved[1]
    S.redo(ufunc.at, x, idx, v)
    dv = None
    if dx is not None and v is not None:
        dual = type(dx).__name__ == "Dual" or type(v).__name__ == "Dual"  # forward over reverse
        g = (dx if dual else np.asarray(dx))[np.asarray(idx) if type(idx) is list else idx] * sign
        dv = generic.unbroadcast(g, v) if isinstance(v, np.ndarray) or dual and np.ndim(v) or (
            type(v) in (list, tuple) and np.ndim(g)) else (  # (a list of values: each its own, `[a, 2 * a]`)
            np.sum(g) if dual else _scalar_cot(g, v))
    return dself, (None, None, dv)


registry.adjoint((np.ufunc, "at"))(_ufunc_at_adjoint)
registry.set((np.ufunc, "at"), mutating=True, saves=_ufunc_at_saves)

@registry.frule(unpack)
def unpack_frule(tangents, v, n, star):
    """The tangent of an unpacking is the same unpacking of the tangent (forward mode's tangent twins)."""
    t = tangents[0] if tangents else None
    return unpack(v, n, star), (None if t is None else unpack(t, n, star))
