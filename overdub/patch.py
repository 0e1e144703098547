"""The interception pass plugged into the cache, the helpers a twin calls, and resolution: what running
a callable's patched code amounts to.

Resolution (`resolve(fn, key)`) decides recursion versus primitive, once per callable shape:
plain functions, lambdas and closures -> their twin; bound methods (including classmethods and
staticmethods reached through attribute access) -> the twin of `__func__` bound to the same `__self__`;
`functools.partial` -> the resolution of `.func` with the partial's arguments; raw `staticmethod`
objects -> their function; classes whose metaclass does not override `__call__`, whose `__new__` is
`object.__new__` and whose `__init__` is pure Python -> `object.__new__` then the twin of `__init__`;
objects whose type has a pure-Python `__call__` -> that method's twin bound to the object; numpy-style
`__array_function__` dispatchers (numpy's public functions) -> their pure-Python `_implementation`
when no argument overrides `__array_function__` (recognised by attributes; numpy is never imported).
`functools.wraps` wrappers are plain functions: the wrapper is patched and calls what it wraps.
Everything else is a primitive (None): builtins, C functions and methods, ufuncs, functions without
source (made by `exec` of a string, generated `__init__`s of dataclasses), overdub's own `ops`.
`async def` functions and generator functions are recursed into: calling the twin returns a coroutine
or generator running patched code, which intercepts whenever it runs under an active context.
"""

from __future__ import annotations

import functools
import sys
import types
from typing import Callable

from . import cache, ops, sites
from .errors import SourceUnavailable
from .source import FunctionSource, compile_twin, found_elsewhere, get_source, is_opaque
from .stack import _current, _route

__all__ = ["patch", "is_recursable", "resolve", "instrumented", "profile_key", "property_getter"]

_FunctionType, _MethodType = types.FunctionType, types.MethodType
_PRIMITIVE_CODES = frozenset(id(f.__code__) for f in ops.PRIMITIVES)
_opaque_types: set[type] = {types.BuiltinFunctionType, types.MethodWrapperType, types.WrapperDescriptorType,
                            types.MethodDescriptorType, types.ClassMethodDescriptorType}
_keys: dict[frozenset, tuple] = {}
_builders: dict[tuple, Callable] = {}
_instrumented = cache._ByIdentity()  # original code -> {key: sites.Instrumented}


def profile_key(intercepts) -> tuple:
    """The cache key of the interception pass for a profile (one object per profile)."""
    profile = sites.normalize_profile(intercepts)
    key = _keys.get(profile)
    if key is None:
        key = _keys.setdefault(profile, ("intercept", profile))
    return key


# -- the helpers a twin calls ----------------------------------------------------------------------

def _make_helper(site_table: tuple):
    """The helper of one twin code object: `helper(sid, fn)` returns what the site must call with its
    operands; `site_table[sid]` is the Site of sid.

    Lean by design: with no context active it returns fn. A context that overrides none of overdub/
    prehook/posthook/recurse/primitive has a per-activation table (`_od_fast_table`, published in the
    `stack._route` ContextVar while it is innermost: fn -> what to call:
    its twin, or fn itself for a primitive); a hit costs one dict lookup and enters no method of the
    context. Any other context gets `partial(ctx.overdub, site, fn)`.
    """
    get, route = _current.get, _route.get
    partial = functools.partial

    def __od_site__(sid, fn, /):
        table = route()
        if table is not None:  # a fast context is innermost: a hit is one C-level subscript
            try:
                return table[fn]  # a miss runs FastTable.__missing__
            except TypeError:  # an unhashable callable
                return _fast_miss(get(), table, fn)
        ctx = get()
        if ctx is None:
            return fn
        site = site_table[sid]
        if site.kind in ctx.intercepts:
            operators = ctx._od_operators
            if operators is not None and site.kind in _OPERATOR_KINDS:
                return operators[fn]
            if fn is getattr and ctx.read_attribute is not None:
                return getattr(ctx, ctx.read_attribute)
            return partial(ctx.overdub, site, fn)
        return fn

    return __od_site__


_FAST_TABLE_LIMIT = 10_000
_OPERATOR_KINDS = frozenset({"binop", "augop", "unaryop", "compare", "iter", "truth", "with"})  # (what `Context.operate` takes)


class OperatorTable(dict):
    """A context's per-activation table for its operator sites (`Context.operate`), fn -> what to call."""

    __slots__ = ("operate",)

    def __init__(self, operate):
        super().__init__()
        self.operate = operate

    def __missing__(self, fn):
        target = self[fn] = self.operate(fn)
        return target


class FastTable(dict):
    """A fast context's per-activation table, fn -> what a site calls for it. A miss resolves fn (a bound
    method through its function's entry, a builtin as itself, else its twin) and remembers what is
    long-lived enough to be a key."""

    __slots__ = ("ctx",)

    def __init__(self, ctx):
        super().__init__()
        self.ctx = ctx

    def __missing__(self, fn):
        kind = type(fn)
        if kind is _MethodType:
            target = self.get(fn.__func__)
            if target is not None:
                return fn if target is fn.__func__ else _MethodType(target, fn.__self__)
        elif kind in _opaque_types:
            owner = getattr(fn, "__self__", None)
            if owner is None or isinstance(owner, types.ModuleType):
                self[fn] = fn  # a module's builtin (max, math.sin): long-lived, so a hit next time
            return fn
        return _fast_miss(self.ctx, self, fn)


def _fast_miss(ctx, table: dict, fn):
    """Resolve fn for a fast context and remember it in the context's table when fn is long-lived
    enough to be a key (functions, classes, builtins not bound to an instance)."""
    target = resolve(fn, ctx._od_key) or fn
    kind = type(fn)
    if kind is _MethodType:
        func = fn.__func__
        if type(func) is _FunctionType:
            _remember(table, func, resolve(func, ctx._od_key) or func)
    elif kind is _FunctionType or isinstance(fn, type) or _array_function_implementation(fn) is not None:
        _remember(table, fn, target)
    elif kind in _opaque_types and isinstance(getattr(fn, "__self__", None) or types, types.ModuleType):
        _remember(table, fn, fn)
    return target


def _remember(table: dict, fn, target) -> None:
    if len(table) >= _FAST_TABLE_LIMIT:
        table.clear()  # bounded: a long activation creating many closures does not keep them all
    try:
        table[fn] = target
    except TypeError:  # unhashable
        pass


def _builder(key: tuple) -> Callable[[FunctionSource], tuple]:
    build = _builders.get(key)
    if build is not None:
        return build
    profile = key[1]

    def build(source: FunctionSource):
        if id(source.code) in _PRIMITIVE_CODES:
            raise SourceUnavailable(f"{source.code.co_qualname} is one of overdub's primitives")
        inst = sites.instrument(source, profile)
        helper = types.CellType(_make_helper(inst.sites))
        cells = {sites.CALL: helper, sites.OP: helper}
        cells.update((name, types.CellType(fn)) for name, fn in inst.operators.items())
        code = compile_twin(source, inst.tree, extra_freevars=inst.freevars)
        _instrumented.setdefault(source.code, {})[key] = inst
        return code, cells

    return _builders.setdefault(key, build)


# -- resolution ------------------------------------------------------------------------------------

def _function_twin(fn: types.FunctionType, key: tuple):
    """fn's twin for key, fn itself when it is already patched code, None when it is opaque."""
    entry = cache.lookup(fn, key)
    if entry is None:
        try:
            return cache.twin_for(fn, key, _builder(key))
        except SourceUnavailable:
            return None
    return cache.twin_of(entry, fn) if entry[2] else None


def resolve(fn, key: tuple):
    """A callable that runs what calling `fn` runs, patched for `key`, or None when fn is a primitive
    (see the module docstring for the cases)."""
    kind = type(fn)
    if kind is _FunctionType:
        return _function_twin(fn, key)
    if kind in _opaque_types:
        return None
    if kind is _MethodType:
        target = resolve(fn.__func__, key)
        return None if target is None else _MethodType(target, fn.__self__)
    if kind is functools.partial:
        target = resolve(fn.func, key)
        return None if target is None else functools.partial(target, *fn.args, **fn.keywords)
    if kind is staticmethod:
        return resolve(fn.__func__, key)
    if isinstance(fn, type):
        return _instantiation(fn, key)
    call = stored_attribute(kind, "__call__")
    if type(call) is _FunctionType:
        target = _function_twin(call, key)
        return None if target is None else _MethodType(target, fn)
    if bound_by_descriptor(call):  # (a descriptor object's `__get__` gives what the call runs: that)
        bound = fn.__call__
        return None if bound is fn else resolve(bound, key)
    call = getattr(kind, "__call__", None)
    implementation = _array_function_implementation(fn)
    if implementation is not None:
        target = _function_twin(implementation, key)
        return None if target is None else functools.partial(_array_function_call, fn, target)
    if call is None or isinstance(call, (types.WrapperDescriptorType, types.MethodDescriptorType)):
        if not hasattr(fn, "_implementation"):
            _opaque_types.add(kind)  # every instance of a type with a C-level __call__ is a primitive
    return None


def _array_function_implementation(fn):
    """The pure-Python implementation behind a numpy `__array_function__` dispatcher (numpy's public
    functions are such C objects, with `_implementation` and `__wrapped__`), or None."""
    implementation = getattr(fn, "_implementation", None)
    if type(implementation) is _FunctionType and getattr(fn, "__wrapped__", None) is implementation:
        return implementation
    return None


def _array_function_call(dispatcher, implementation, /, *args, **kwargs):
    """What calling a numpy dispatcher does: if an argument (or an element of a list/tuple argument)
    overrides `__array_function__`, numpy dispatches (a primitive call); otherwise the patched
    implementation runs. numpy is loaded already (the dispatcher comes from it); the core never
    imports it."""
    default = sys.modules["numpy"].ndarray.__array_function__
    for arg in (*args, *kwargs.values()):
        inner = arg if type(arg) in (list, tuple) else ()
        for value in (arg, *inner):
            if getattr(type(value), "__array_function__", default) is not default:
                return dispatcher(*args, **kwargs)
    return implementation(*args, **kwargs)


def property_getter(obj, name):
    """The pure-Python getter of the `property` that `getattr(obj, name)` would run, or None."""
    if type(name) is not str:
        return None
    for klass in type(obj).__mro__:
        attr = klass.__dict__.get(name, _MISSING)
        if attr is not _MISSING:
            if type(attr) is property and type(attr.fget) is _FunctionType:
                return attr.fget
            return None
    return None


_MISSING = object()


def _instantiation(cls: type, key: tuple):
    if type(cls).__call__ is not type.__call__ or cls.__new__ is not object.__new__:
        return None
    init = cls.__init__
    if type(init) is not _FunctionType:
        return None
    twin = _function_twin(init, key)
    return None if twin is None else functools.partial(_instantiate, cls, twin)


def _instantiate(cls, init, /, *args, **kwargs):
    """What `type.__call__` does for a class with object's `__new__`, with init the patched `__init__`."""
    obj = object.__new__(cls)
    result = init(obj, *args, **kwargs)
    if result is not None:
        raise TypeError(f"__init__() should return None, not '{type(result).__name__}'")
    return obj


def is_recursable(fn) -> bool:
    """True when calling fn runs pure-Python code whose source can be had (a context recurses into it).

    >>> import math, overdub
    >>> overdub.is_recursable(lambda x: x + 1), overdub.is_recursable(math.sin)
    (True, False)
    """
    target = _target_function(fn)
    if target is None or id(target.__code__) in _PRIMITIVE_CODES:
        return False
    code = target.__code__
    if is_opaque(code):  # another pass's twin (reverse mode's recording twin): run as it is
        return False
    if cache.patched_for(code) is not None:
        return True
    try:
        get_source(code, target.__globals__)
    except SourceUnavailable:
        return found_elsewhere(target, bound_self(fn) if target is not fn else None)
    return True


def without_source(fn) -> bool:
    """fn is a Python function whose source cannot be had (made by `exec`, a code generator's), no pass's twin
    and no primitive: a context can run it only as it is."""
    if type(fn) is not _FunctionType or id(fn.__code__) in _PRIMITIVE_CODES or is_opaque(fn.__code__):
        return False
    if cache.patched_for(fn.__code__) is not None:
        return False
    try:
        get_source(fn.__code__, fn.__globals__)
    except SourceUnavailable:
        return not found_elsewhere(fn)
    return False


def _target_function(fn):
    """The pure-Python function calling fn enters first, without patching anything (None if none)."""
    kind = type(fn)
    if kind is _FunctionType:
        return fn
    if kind in (_MethodType, staticmethod):
        return _target_function(fn.__func__)
    if kind is functools.partial:
        return _target_function(fn.func)
    if isinstance(fn, type):
        if type(fn).__call__ is not type.__call__ or fn.__new__ is not object.__new__:
            return None
        init = fn.__init__
        return init if type(init) is _FunctionType else None
    call = stored_attribute(kind, "__call__")
    return call if type(call) is _FunctionType else _array_function_implementation(fn)


_METHOD_TYPES = (types.MethodType, types.BuiltinMethodType, types.MethodWrapperType)


def bound_self(fn):
    """The object a bound method is bound to (`fn.__self__`), None for anything else, asked without running
    any `__getattr__` of an object's class (a callable object's lazy attributes, an attribute dict's
    KeyError: plain Python never asks them when it calls the object)."""
    if isinstance(fn, _METHOD_TYPES):
        return fn.__self__
    try:
        return object.__getattribute__(fn, "__self__")
    except (AttributeError, TypeError):
        return None


def method_function(fn):
    """A bound Python method's function (`fn.__func__`), else fn itself; no `__getattr__` runs."""
    return fn.__func__ if type(fn) is types.MethodType else fn


def stored_attribute(kind, name):
    """kind's attribute `name` as its class dict holds it (a descriptor itself, not what its `__get__`
    gives: a `__call__` descriptor returning a lambda was taken for the method, and called with the
    object too)."""
    for k in kind.__mro__:
        found = k.__dict__.get(name, _NOTHING)
        if found is not _NOTHING:
            return found
    return None


_NOTHING = object()


def bound_by_descriptor(attr) -> bool:
    """attr, a class's attribute as stored, is an object whose `__get__` binds what Python calls for it (not a
    function, a C slot or a property): multipledispatch's dispatcher, a maker of partials."""
    return (attr is not None and type(attr) is not _FunctionType and hasattr(type(attr), "__get__")
            and not isinstance(attr, (types.WrapperDescriptorType, types.MethodDescriptorType,
                                      types.BuiltinFunctionType, property)))


def patch(fn, intercepts=frozenset({"call"})):
    """The patched twin of fn for the interception profile `intercepts` (cached per code object and
    profile). With no context active the twin runs exactly as fn does. (A function of a module gets the
    same twin each time; one exec'd into a namespace, as here, or a closure, a new twin of the same code:
    see overdub.cache.)

    >>> import overdub
    >>> def f(x): return abs(x) + 1
    >>> twin = overdub.patch(f, {"call", "binop"})
    >>> twin(-2), twin.__code__ is f.__code__, twin.__code__ is overdub.patch(f, {"call", "binop"}).__code__
    (3, False, True)
    """
    target = resolve(fn, profile_key(intercepts))
    if target is None:
        from .errors import describe
        raise SourceUnavailable(f"{describe(fn)} cannot be patched: it is not pure Python with source",
                                fix="call it as a primitive; patch only functions defined in .py files")
    return target


def instrumented(fn, intercepts=frozenset({"call"})) -> "sites.Instrumented":
    """The pass's result (rewritten tree, sites, blocks) for fn's code and profile, patching if needed."""
    key = profile_key(intercepts)
    target = _target_function(fn)
    if target is None:
        patch(fn, intercepts)  # raises the explanatory error
    code = cache.original_code(target.__code__)
    found = _instrumented.get(code, {}).get(key)
    if found is None:
        patch(target, intercepts)
        # The pass ran on the FunctionSource of an equal code object if one was seen first.
        found = (_instrumented.get(code, {}).get(key)
                 or _instrumented.get(get_source(code, target.__globals__).code, {}).get(key))
    if found is None:
        raise SourceUnavailable(f"{target.__qualname__} was patched from another function's twin",
                                fix="show the outermost function that defines it")
    return found

