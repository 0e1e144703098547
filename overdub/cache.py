"""Twins of functions, cached per (code object, key) and per function object, for any pass.

A *pass* is a transformation of a function's source into a new code object; the interception pass of
this package is one (its key is the interception profile), the reverse-AD context's pass is another.
The API a pass uses:

    twin = overdub.cache.twin_for(fn, key, build)

- `build(source: FunctionSource) -> code` or `-> (code, helper_cells)`: the pass, typically
  `compile_twin(source, rewritten_tree, extra_freevars=...)`; `helper_cells` maps the extra free variable
  names to `types.CellType`s. It runs once per (code object, key); a failure in it propagates and
  nothing is cached.
- The function twin is made by `source.make_function` once per function object and key, and cached
  per function object *weakly*: the entry dies with `fn` (the twin itself holds no reference to `fn`;
  its `__wrapped_original__` is dropped for that reason; `original_of(twin)` answers instead). A twin
  runs with fn's globals and cells, which hold fn itself when fn was exec'd into a namespace (code
  generators) or is a closure (a recursive inner function, an object it captured holding it): a cached
  twin would keep fn, and its entry, alive for ever. Such a function's twin is made per call from the
  per-code cache (a function object, ~1 µs); only functions of a module without cells keep theirs.
- A function whose `__code__` was replaced gets a fresh twin (entries remember their code object).
- Code objects nested in a twin (nested defs, lambdas, comprehensions, compiled as part of the parent's
  twin) are recorded as patched for `key` and carry their original qualnames: `twin_for` on a function
  made from one returns the function itself. For another key, it is rebuilt from the original source.
- A function without usable source raises `SourceUnavailable` (remembered per code object).

>>> import overdub.cache, overdub.source
>>> def sq(x): return x * x
>>> build = lambda src: overdub.source.compile_twin(src, src.fresh_tree())
>>> twin = overdub.cache.twin_for(sq, "identity", build)
>>> twin(3), twin.__code__ is overdub.cache.twin_for(sq, "identity", build).__code__, twin.__code__ is sq.__code__
(9, True, False)
"""

from __future__ import annotations

import sys
import types
import weakref
from typing import Any, Callable, Hashable

from . import collector
from .errors import SourceUnavailable
from . import source as _source
from .source import FunctionSource, found_elsewhere, get_source, make_function
from .weak import ByIdentity as _ByIdentity

__all__ = ["twin_for", "twin_of", "lookup", "patched_for", "original_code", "original_of", "clear", "on_clear"]


_MISSING = object()
_CO_ITERABLE_COROUTINE = 0x100
# original code -> {key: (twin code, helper cells)}; dies with the code object.
_codes = _ByIdentity()
# twin code nested in a twin -> (key, original nested code)
_nested = _ByIdentity()
# key -> {id(fn): (fn.__code__, twin or None, recursable, weakref to fn, per-call (code, cells) or None)};
# None = call fn itself.
# An entry is removed by the weakref's callback when fn dies, before its id can be reused.
_tables: dict[Hashable, dict[int, tuple]] = {}
# twin function -> weakref to its original, for original_of
_originals = _ByIdentity()


def table(key: Hashable) -> dict[int, tuple]:
    """The per-function table of `key` (shared with the runtime's fast path; see module docstring)."""
    found = _tables.get(key)
    if found is None:
        found = _tables.setdefault(key, {})
    return found


def lookup(fn: types.FunctionType, key: Hashable):
    """fn's cached entry for key, `(code, twin or None, recursable)`-like tuple, or None if stale/absent."""
    entry = table(key).get(id(fn))
    if entry is not None and entry[0] is fn.__code__:
        return entry
    return None


def twin_for(fn: types.FunctionType, key: Hashable, build: Callable[[FunctionSource], Any]) -> types.FunctionType:
    """fn's twin for the pass `build` under `key` (cached; see the module docstring).

    >>> import overdub.cache, overdub.source
    >>> def inc(x): return x + 1
    >>> overdub.cache.twin_for(inc, "copy", lambda s: overdub.source.compile_twin(s, s.fresh_tree()))(1)
    2
    """
    entry = lookup(fn, key)
    if entry is None:
        entry = _insert(fn, key, build)
    if not entry[2]:
        get_source(fn.__code__)  # re-raises the remembered SourceUnavailable
        raise SourceUnavailable(f"{fn.__qualname__} cannot be patched")  # pragma: no cover
    return twin_of(entry, fn)


def twin_of(entry: tuple, fn: types.FunctionType) -> types.FunctionType:
    """The twin a patchable entry of `table(key)` stands for (see the module docstring)."""
    per_call = entry[4]
    if per_call is None:
        return entry[1] or fn
    return _function(per_call[0], fn, per_call[1])


def _kept(fn: types.FunctionType) -> bool:
    """fn's twin may be cached per function: nothing it runs with refers back to fn but fn's module."""
    if fn.__closure__ is not None:
        return False
    module = sys.modules.get(fn.__module__)
    return module is not None and getattr(module, "__dict__", None) is fn.__globals__


@collector.pausing  # (a long function's trees: full collections during the build made it grow quadratically)
def _insert(fn, key, build) -> tuple:
    code = fn.__code__
    nested = _nested.get(code)
    per_call = None
    try:
        if nested is not None and nested[0] == key:
            twin = None  # made from a twin of this very pass: it is its own twin
        else:
            original = nested[1] if nested is not None else code
            twin_code, cells = _twin_code(original, fn, key, build)
            if _kept(fn):
                twin = _function(twin_code, fn, cells)
            else:
                twin, per_call = None, (twin_code, cells)
        entry_value = (twin, True)
    except SourceUnavailable:
        if found_elsewhere(fn):  # (made by `exec` from text a finder knows: adopted, built again once)
            return _insert(fn, key, build)
        entry_value = (None, False)
    tab = table(key)
    ident = id(fn)

    def forget(ref, tab=tab, ident=ident):
        if tab.get(ident, (None, None, None, None, None))[3] is ref:
            del tab[ident]

    entry = (code, *entry_value, weakref.ref(fn, forget), per_call)
    tab[ident] = entry
    return entry


def _twin_code(original: types.CodeType, fn, key, build) -> tuple[types.CodeType, dict]:
    per_code = _codes.get(original)
    if per_code is None:
        per_code = _codes.setdefault(original, {})
    found = per_code.get(key)
    if found is None:
        source = get_source(original, fn.__globals__)
        built = build(source)
        code, cells = built if isinstance(built, tuple) else (built, {})
        code = _adopt_nested(code, original, key)
        # `types.coroutine` marks generator code as awaitable by a flag the source does not show.
        code = code.replace(co_flags=code.co_flags | (original.co_flags & _CO_ITERABLE_COROUTINE))
        found = per_code[key] = (code, dict(cells))
    return found


def _adopt_nested(twin: types.CodeType, original: types.CodeType, key) -> types.CodeType:
    """twin with its nested code objects renamed to their originals' qualnames and recorded as patched."""
    originals = {(c.co_name, c.co_firstlineno): c for c in original.co_consts if isinstance(c, types.CodeType)}
    consts, changed = list(twin.co_consts), False
    for i, const in enumerate(consts):
        if not isinstance(const, types.CodeType):
            continue
        orig = originals.get((const.co_name, const.co_firstlineno))
        if orig is None:
            continue
        new = _adopt_nested(const, orig, key).replace(co_qualname=orig.co_qualname)
        _nested[new] = (key, orig)
        _source._remember_twin(new)  # (a pass asking for its source, `gradient(inner)` inside a context's
        # run of the outer function, gets the original definition: not "the file changed since import")
        consts[i], changed = new, True
    return twin.replace(co_consts=tuple(consts)) if changed else twin


def _function(twin_code: types.CodeType, fn: types.FunctionType, cells: dict) -> types.FunctionType:
    """make_function, with the pass's helper cells taking precedence over same-named cells of fn (fn may
    itself come from another pass's twin) and without a strong reference back to fn."""
    twin = make_function(twin_code, fn, cells)
    twin.__dict__.pop("__wrapped_original__", None)
    own = fn.__code__.co_freevars
    if any(v in cells for v in own):
        closure = tuple(cells.get(v) or c for v, c in zip(twin_code.co_freevars, twin.__closure__ or ()))
        rebound = types.FunctionType(twin_code, fn.__globals__, fn.__name__, fn.__defaults__, closure or None)
        rebound.__kwdefaults__, rebound.__qualname__ = fn.__kwdefaults__, fn.__qualname__
        rebound.__module__ = fn.__module__
        rebound.__dict__.update(twin.__dict__)
        twin = rebound
    _originals[twin] = weakref.ref(fn)
    return twin


def patched_for(code: types.CodeType):
    """The key a code object nested in a twin was patched for, or None for an original code object."""
    nested = _nested.get(code)
    return None if nested is None else nested[0]


def original_code(code: types.CodeType) -> types.CodeType:
    """The original of a code object nested in a twin (code itself when it is an original)."""
    nested = _nested.get(code)
    return code if nested is None else nested[1]


def original_of(twin: types.FunctionType):
    """The function a twin made by `twin_for` was made from (None if it died or twin is no twin)."""
    ref = _originals.get(twin)
    return ref() if ref is not None else None


_clearers: list[Callable[[], None]] = []


def on_clear(clear_fn: Callable[[], None]) -> Callable[[], None]:
    """Register a pass's own cache to be emptied by `clear()` (returns clear_fn)."""
    if clear_fn not in _clearers:
        _clearers.append(clear_fn)
    return clear_fn


def clear() -> None:
    """Forget every cached twin, of this package and of every pass that registered its caches with
    `on_clear` (the contexts' reverse, tangent and activity caches): for tests, after editing source
    files, or to free the memory at once (entries keyed by code objects also go when their code does)."""
    _codes.clear()
    _nested.clear()
    _originals.clear()
    for tab in _tables.values():
        tab.clear()
    _source.clear()
    for clear_fn in list(_clearers):
        clear_fn()
