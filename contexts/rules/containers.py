"""Rules for the methods of lists and dicts, including the mutating ones (the paper's box rules).

A mutating rule has the form `adj(S, dself, dy, y, self, *args) -> (dself, cotangents of args)`: it takes
the container's cotangent box from the reverse pass's session `S`, undoes the mutation on the box *and* on
the primal (so earlier adjoints see the container as it was when they ran), and registers the redo that
`S.finish()` applies at the end of the pass. Non-mutating methods use the ordinary static form.
"""

from __future__ import annotations

import heapq
import random

import numpy as np

from .registry import registry

__all__ = ["mutating"]


def mutating(*keys):
    """Register a mutating adjoint for each (type, method name) key."""
    def register(adj):
        registry.adjoint(*keys)(adj)
        for k in keys:
            registry.rules[k].mutating = True
        return adj
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
    S.redo.append((list.append, (self, v)))
    return box, (gv,)


@mutating((list, "extend"))
def list_extend_adjoint(S, dself, dy, y, self, items):
    box = S.box(self, dself)
    n = len(items) if hasattr(items, "__len__") else 0
    if n == 0:
        return box, (None,)
    gs = box[-n:]
    del box[-n:]
    added = self[-n:]
    del self[-n:]
    S.redo.append((list.extend, (self, added)))
    return box, (_structure_like(gs, items),)


@mutating((list, "insert"))
def list_insert_adjoint(S, dself, dy, y, self, i, v):
    box = S.box(self, dself)
    n = len(self)
    pos = min(max(i + n - 1 if i < 0 else i, 0), n - 1)
    gv = box.pop(pos)
    self.pop(pos)
    S.redo.append((list.insert, (self, i, v)))
    return box, (None, gv)


@mutating((list, "pop"))
def list_pop_adjoint(S, dself, dy, y, self, i=-1):
    box = S.box(self, dself)
    n = len(self) + 1  # the length before the pop
    pos = i + n if i < 0 else i
    box.insert(pos, dy)
    self.insert(pos, y)
    S.redo.append((list.pop, (self, pos)))
    return box, (None,)


@mutating((list, "reverse"))
def list_reverse_adjoint(S, dself, dy, y, self):
    box = S.box(self, dself)
    box.reverse()
    self.reverse()
    S.redo.append((list.reverse, (self,)))
    return box, ()


@mutating((list, "clear"))
def list_clear_adjoint(S, dself, dy, y, self):
    raise NotImplementedError("list.clear inside differentiated code is not supported; build a new list")


@registry.adjoint((list, "copy"), (dict, "copy"))
def copy_adjoint(dy, y, self):
    if isinstance(self, dict):
        return (dict(dy) if dy is not None else None,)
    return (list(dy) if dy is not None else None,)


registry.nondifferentiable((list, "index"), (list, "count"), (tuple, "index"), (tuple, "count"),
                           (dict, "keys"), (dict, "__contains__"), (list, "__contains__"))


@registry.adjoint((dict, "get"))
def dict_get_adjoint(dy, y, self, key, default=None):
    if key in self:
        return ({key: dy}, None, None)
    return (None, None, dy)


@registry.adjoint((dict, "values"))
def dict_values_adjoint(dy, y, self):
    if dy is None:
        return (None,)
    gs = list(dy)
    return ({k: g for k, g in zip(self, gs) if g is not None},)


@registry.adjoint((dict, "items"))
def dict_items_adjoint(dy, y, self):
    if dy is None:
        return (None,)
    out = {}
    for k, pair in zip(self, list(dy)):
        if pair is not None and pair[1] is not None:
            out[k] = pair[1]
    return (out,)


_MISSING = object()


@mutating((dict, "update"))
def dict_update_adjoint(S, dself, dy, y, self, other=(), **kw):
    box = S.box(self, dself)
    pairs = dict(other, **kw)
    gother = {}
    for k in pairs:
        gother[k] = box.pop(k, None)
    S.redo.append((dict.update, (self, pairs)))
    return box, ((gother if isinstance(other, dict) else None),)


@mutating((dict, "pop"))
def dict_pop_adjoint(S, dself, dy, y, self, key, default=_MISSING):
    box = S.box(self, dself)
    if y is default and key not in self and default is not _MISSING:
        return box, (None, dy)
    box[key] = dy
    self[key] = y
    S.redo.append((dict.pop, (self, key)))
    return box, (None, None)


@mutating((dict, "setdefault"))
def dict_setdefault_adjoint(S, dself, dy, y, self, key, default=None):
    box = S.box(self, dself)
    if dy is not None:
        box[key] = dy if box.get(key) is None else box[key] + dy
    return box, (None, None)


# -- C functions that reorder a list in place (heapq, list.sort, random.shuffle) ------------------
# They run as they are; the reverse pass maps the list's cotangent box from the order after the call
# back to the order before it by the identity of the elements, restores the old order (redone after the
# pass) and gives an item pushed in (or popped out) its cotangent.

def _reorder_back(S, heap, before, after, item, dself, is_method):
    box = S.box(heap, dself if is_method else (S.dins[0] if S.dins else None))
    after_cots = list(box) + [None] * (len(after) - len(box))
    by_id: dict[int, list] = {}
    for obj, g in zip(after, after_cots):
        by_id.setdefault(id(obj), []).append(g)
    moved = [by_id[id(obj)].pop() if by_id.get(id(obj)) else None for obj in before]
    ditem = None
    if item is not None and by_id.get(id(item)):
        ditem = by_id[id(item)].pop()  # the pushed item's place after the call
    box[:] = moved
    heap[:] = before
    S.redo.append((list.__setitem__, (heap, slice(None), after)))
    return box, ditem


def _reordering(fn, pushes: bool, pops: bool, is_method: bool = False):
    def inplace(heap, *args, **kwargs):
        before = list(heap)
        y = fn(heap, *args, **kwargs)
        after = list(heap)
        item = args[0] if pushes and args else None

        def reorder_back(S, dy, dself):
            box, ditem = _reorder_back(S, heap, before, after, item, dself, is_method)
            if pops and dy is not None:  # the popped item's cotangent goes back to its old place
                for i, obj in enumerate(before):
                    if obj is y and box[i] is None:
                        box[i] = dy
                        break
            rest = (ditem,) + (None,) * (len(args) - 1) if args else ()
            if is_method:
                return box, rest
            return None, (None,) + rest
        return y, reorder_back
    inplace.__name__ = f"{getattr(fn, '__name__', 'reorder')}_inplace"
    return inplace


for _fn, _push, _pop in [(heapq.heappush, True, False), (heapq.heappop, False, True), (heapq.heapify, False, False),
                         (heapq.heapreplace, True, True), (heapq.heappushpop, True, True),
                         (random.shuffle, False, False)]:
    registry._rule(_fn).inplace = _reordering(_fn, _push, _pop)
registry._rule((list, "sort")).inplace = _reordering(list.sort, False, False, is_method=True)
