"""A weak-keyed map by object identity, for caches keyed by code objects."""

from __future__ import annotations

import weakref

__all__ = ["ByIdentity"]


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

    def clear(self) -> None:
        self._data.clear()


_MISSING = object()
