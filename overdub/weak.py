"""Weak maps by object identity, for caches keyed by code objects: an entry dies with its object.

- `ByIdentity`: a map from objects (held weakly) to values.
- `of_a_module(fn)`: whether a function made on fn's globals may be cached without keeping anything alive
  that fn's module does not.
- `OwnedEntries`: a plain dict (`.data`, for the hot path: a lookup is the dict's own `get`) whose entries
  each belong to an owner object held weakly; keys name the owner by `id(owner)`, and all of an owner's
  entries are removed when it dies (before its id can be reused).

A value must not refer to its key or owner (nor to something holding it, such as a function's globals),
or the entry keeps itself alive.
"""

from __future__ import annotations

import sys
import weakref

__all__ = ["ByIdentity", "OwnedEntries", "of_a_module"]


def of_a_module(fn) -> bool:
    """fn's globals are the namespace of an imported module (not a namespace a code generator exec'd
    into, which a cached function made on them would keep alive)."""
    module = sys.modules.get(fn.__module__)
    return module is not None and getattr(module, "__dict__", None) is fn.__globals__


class ByIdentity:
    """A weak-keyed map by object identity (code objects compare by value, so WeakKeyDictionary would
    let two equal code objects of different files share an entry); an entry dies with its key."""

    def __init__(self) -> None:
        self._data: dict[int, tuple] = {}

    def get(self, obj, default=None):
        entry = self._data.get(id(obj))
        return entry[1] if entry is not None and entry[0]() is obj else default

    def __setitem__(self, obj, value) -> None:
        data, ident = self._data, id(obj)

        def forget(ref):
            if data.get(ident, (None,))[0] is ref:
                del data[ident]

        data[ident] = (weakref.ref(obj, forget), value)

    def setdefault(self, obj, value):
        found = self.get(obj, _MISSING)
        if found is _MISSING:
            self[obj] = found = value
        return found

    def pop(self, obj, default=None):
        entry = self._data.get(id(obj))
        if entry is None or entry[0]() is not obj:
            return default
        del self._data[id(obj)]
        return entry[1]

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        self._data.clear()


class OwnedEntries:
    """A plain dict `data` whose entries belong to owners held weakly: `put(owner, key, value)` stores
    `data[key] = value` and removes it when `owner` dies; `key` should contain `id(owner)`.

    >>> import types
    >>> code = compile("1", "<doc>", "eval")
    >>> table = OwnedEntries()
    >>> table.put(code, (id(code), "x"), 42)
    >>> table.data.get((id(code), "x"))
    42
    >>> del code
    >>> table.data
    {}
    """

    def __init__(self) -> None:
        self.data: dict = {}
        self._owners: dict[int, tuple] = {}  # id(owner) -> (weakref to it, its keys)

    def put(self, owner, key, value) -> None:
        owners, data, ident = self._owners, self.data, id(owner)
        found = owners.get(ident)
        if found is None or found[0]() is not owner:
            if found is not None:  # a dead owner of the same id whose callback has not run yet
                for k in found[1]:
                    data.pop(k, None)

            def forget(ref):
                entry = owners.get(ident)
                if entry is not None and entry[0] is ref:
                    del owners[ident]
                    for k in entry[1]:
                        data.pop(k, None)

            found = owners[ident] = (weakref.ref(owner, forget), [])
        found[1].append(key)
        data[key] = value

    def __len__(self) -> int:
        return len(self.data)

    def clear(self) -> None:
        """Drop every entry (in place: `data` stays the same dict)."""
        self.data.clear()
        self._owners.clear()


_MISSING = object()
