"""The reverse-mode runtime: `J` (here `call`) for every callee, and the helpers generated code uses.

`call(mask, f, *args, **kwargs) -> (y, pullback)` is Zygote's J: a primitive with a rule runs and keeps what
its adjoint needs; a pure-Python function runs its recording forward twin and keeps the tape for its adjoint;
a primitive without a rule reached with differentiable inputs is an error naming it and the user's line.
A pullback is a tuple `(back, ...)`; `back(pb, dy, dself, S) -> (dfn, dargs, dkwargs)`, where `dfn` is the
cotangent of the function object (of `self` for a bound method, of the captured cells for a closure) and
`S` the reverse pass's `Session`.
"""

from __future__ import annotations

import dataclasses
import functools
import numbers
import operator
import sys
import types
import weakref

import numpy as np

from overdub.errors import OverdubError, SourceUnavailable
from overdub.source import compile_twin, get_source

from ..rules.registry import HOT_REDUCE_OPTIONS, key_of, registry
from .codegen import HELPERS, KW_ACTIVE, generate
from .lower import Unsupported, lower
from ..forward.dual import Dual as _Dual
from .structs import CHANGES, TICKS, SeqBox, Tangent, acc

__all__ = ["call", "NoRuleError", "UnsupportedFunction", "twin_source"]

_MISSING = object()
_NOKW: dict = {}  # never mutated
_NO_CELLS = frozenset({"<no cells>"})  # in an activity key: captured variables are constants


class NoRuleError(OverdubError):
    """A C function was reached with differentiable inputs and has no rule."""


class NoSource(NoRuleError):
    """A Python function whose source cannot be had (made by `exec`, or edited since import)."""


class UnsupportedFunction(OverdubError):
    """A Python function uses a construct the reverse-mode transform does not handle."""


# -- rules ---------------------------------------------------------------------------------------

_rules = registry.rules


_BUILTIN = types.BuiltinMethodType  # also the type of builtin functions such as math.sin
_NDARRAY = np.ndarray
_F8 = np.dtype(np.float64)
_WRAPPER = types.MethodWrapperType  # (1.0).__mul__


def _rule_of(f):
    """(rule, is_method) for f; is_method when the rule is keyed by (type, name) of a bound C method."""
    try:
        rule = _rules.get(f)
    except TypeError:  # unhashable callable
        return None, False
    if rule is not None or (type(f) is not _BUILTIN and type(f) is not _WRAPPER):
        return rule, False
    key = key_of(f)
    if type(key) is tuple:
        rule = _rules.get(key)
        if rule is None and issubclass(key[0], np.generic):  # numpy scalars act as 0-d arrays
            rule = _rules.get((np.ndarray, key[1])) or _rules.get((np.generic, key[1]))
        return rule, True
    return None, False


def _static_back(pb, dy, dself, S):
    _, adj, y, args, kw, is_method = pb
    if dy is None or (type(dy) is float and dy == 0.0):
        # a zero cotangent gives zero cotangents: rules are not evaluated where they may be singular
        # (sqrt at 0 times sin(0) in colour science: 0 * inf would be nan)
        return dself, (None,) * (len(args) - is_method), None
    try:
        grads = adj(dy, y, *args, **kw) if kw else adj(dy, y, *args)
    except TypeError:  # forward-over-reverse: the rule met forward-mode duals it cannot convert
        grads = _adjoint_on_duals(adj, dy, y, args, kw)
    dkw = None
    if kw and len(grads) == len(args) + 1 and type(grads[-1]) is dict:  # keyword cotangents
        grads, dkw = grads[:-1], grads[-1]
    if is_method:
        return acc(dself, grads[0]), grads[1:], dkw
    return None, grads, dkw


def _hot_back(pb, dy, dself, S):
    """A one-argument rule's pullback on a float64 array: its `hot` cotangent when dy is the usual one."""
    _, hot, y, x, adj = pb
    if type(dy) is _NDARRAY and dy.dtype is _F8 and dy.shape == x.shape:
        return None, (hot(dy, y, x),), None
    return _static_back((None, adj, y, (x,), None, False), dy, dself, S)


def _hot_reduce_back(pb, dy, dself, S):
    """A reduction's pullback on a float64 array: its `hot_reduce` cotangent where dy is the usual one."""
    _, hot, y, x, adj, kw = pb
    if dy is not None:
        g = hot(dy, y, x, **kw) if kw else hot(dy, y, x)
        if g is not None:
            return None, (g,), None
    return _static_back((None, adj, y, (x,), kw, False), dy, dself, S)


def _adjoint_on_duals(adj, dy, y, args, kw):
    """Run a rule's adjoint under forward mode: its numpy calls then see the duals through their frules."""
    from ..forward.dual import top_tag
    if top_tag((dy, y) + tuple(args)) is None:
        raise
    from ..forward.context import ForwardContext
    return ForwardContext().run(adj, dy, y, *args, **kw)


def _inplace_back(pb, dy, dself, S):
    _, back, is_method = pb
    dself, deltas = back(S, dy, dself)
    return dself, deltas, None


def _mutating_back(pb, dy, dself, S):
    _, adj, y, args, kw, _ = pb
    dself, grads = adj(S, dself, dy, y, *args, **kw)
    return dself, grads, None


def _rrule_back(pb, dy, dself, S):
    _, back, nargs, is_method = pb
    if dy is None:
        return dself, (None,) * (nargs - is_method), None
    grads = back(dy)
    if is_method:
        return acc(dself, grads[0]), tuple(grads[1:]), None
    return None, tuple(grads), None


# -- the call: Zygote's J --------------------------------------------------------------------------

def call(mask, f, *args, **kw):
    """Run f(*args, **kw) recording what its reverse pass needs; return (y, pullback or None)."""
    if kw and "out" in kw and (type(kw["out"]) is np.ndarray or _dual_array(kw["out"])):
        return _out_call(f, args, kw)  # (a dual array, forward over reverse, is changed in place too)
    try:
        rule = _rules.get(f)
    except TypeError:  # unhashable callable
        rule = None
    is_method = False
    if rule is None:
        tf = type(f)
        if tf is types.FunctionType:
            return _twin_call(mask, f, (), args, kw)
        if tf is _BUILTIN or tf is _WRAPPER:
            rule, is_method = _rule_of(f)
    if rule is not None:
        full = (f.__self__,) + args if is_method else args
        if rule.adjoint is not None:
            if rule.iterates and type(getattr(type(args[0]), "__iter__", None)) is types.FunctionType:
                return _iterate_user(f, args)
            impl = rule.impl
            try:
                y = f(*args, **kw) if impl is None else impl(*args, **kw)
            except TypeError:
                y = _on_duals(rule, f, args, kw)  # higher order: forward-mode duals through a C function
            if rule.mutating:
                CHANGES[0] = next(TICKS)
                return y, (_mutating_back, rule.adjoint, y, full, kw, is_method)
            if len(args) == 1 and not is_method and type(args[0]) is _NDARRAY and args[0].dtype is _F8:
                if rule.hot is not None and not kw and args[0].ndim:
                    return y, (_hot_back, rule.hot, y, args[0], rule.adjoint)
                if rule.hot_reduce is not None and (not kw or kw.keys() <= HOT_REDUCE_OPTIONS):
                    return y, (_hot_reduce_back, rule.hot_reduce, y, args[0], rule.adjoint, kw)
            return y, (_static_back, rule.adjoint, y, full, kw, is_method)
        if rule.inplace is not None:
            CHANGES[0] = next(TICKS)
            y, back = rule.inplace(*full, **kw)
            return y, (_inplace_back, back, is_method)
        if rule.rrule is not None:
            y, back = rule.rrule(*full, **kw)
            return y, (_rrule_back, back, len(full), is_method)
        if rule.kind == "nondiff":
            return f(*args, **kw), None
    if type(f) is types.FunctionType:
        return _twin_call(mask, f, (), args, kw)
    if type(f) is types.MethodType:
        func = f.__func__
        if type(f.__self__) is _Dual:  # forward-over-reverse: a dual array's method is numpy's
            return _dual_method_call(f, args, kw)
        if _hashable(func) and func in _rules:  # a rule given to the method's function
            y, pb = call(-1, func, f.__self__, *args, **kw)
            return y, (None if pb is None else (_bound_back, pb))
        if type(func) is types.FunctionType:
            return _twin_call(mask, func, (f.__self__,), args, kw)
    return _other_call(mask, f, args, kw)


def _dual_array(x) -> bool:
    """x is a forward-mode dual whose innermost value is an ndarray (changed in place as one)."""
    while type(x) is _Dual:
        x = x.value
    return type(x) is np.ndarray


def _on_duals(rule, f, args, kw):
    """f(*args) when some args are forward-mode duals (forward-over-reverse): forward mode's pushforward."""
    from ..forward.arrays import has_dual
    from ..forward.context import pushforward
    if rule.frule is None or not any(has_dual(a) for a in tuple(args) + tuple(kw.values())):
        raise  # (has_dual: also a list of duals, `np.array([x[0] ** 2, x[1]])`)
    return pushforward(f, *args, **kw)


_DISPATCHER = type(np.diff)  # numpy's array-function dispatchers wrap a Python implementation


def _bound_back(pb, dy, dself, S):
    """A bound method's pullback from its function's: `self`'s cotangent is the method's own."""
    inner = pb[1]
    _, dargs, dkw = inner[0](inner, dy, None, S)
    dargs = tuple(dargs) if dargs is not None else ()
    return acc(dself, dargs[0] if dargs else None), dargs[1:], dkw


def _iterate_user(f, args):
    """iter/list/tuple/unpacking of an object whose class defines `__iter__` in Python: that method is
    differentiated like any other, and the drawn items' cotangents flow back through it."""
    v = args[0]
    it, pb = _twin_call(-1, type(v).__iter__, (v,), (), _NOKW)
    items = list(it)
    if f is iter:
        y = iter(items)
    elif f is unpack:
        y = unpack(items, *args[1:])
    else:
        y = f(items)
    return y, (_user_iter_back, pb, f, y, args[1:])


def _user_iter_back(pb, dy, dself, S):
    _, inner, f, y, rest = pb
    if dy is None or inner is None:
        return None, (None,) * (1 + len(rest)), None
    gs = list(dy)
    if f is unpack and rest[1] >= 0:  # flatten the starred part back to one entry per item
        star = rest[1]
        mid = list(gs[star]) if gs[star] is not None else [None] * len(y[star])
        gs = gs[:star] + mid + gs[star + 1:]
    dv, _, _ = inner[0](inner, SeqBox(gs), None, S)
    return None, (dv,) + (None,) * len(rest), None


def _out_call(f, args, kw):
    """`f(..., out=a)`: computed into a new array, then written into a (numpy returns a); the reverse
    pass restores a's old values and takes the cotangent a's variable holds as f's output's."""
    CHANGES[0] = next(TICKS)
    out = kw["out"]
    old = out.copy()
    rest = {k: v for k, v in kw.items() if k != "out"}
    # a ufunc's `where=`: out keeps its values where it is False (a reduction's `where=` is its own)
    where = rest.pop("where", True) if isinstance(f, np.ufunc) else True
    if where is not True:
        where = np.broadcast_to(where, out.shape)
    y, pb = call(-1, f, *args, **rest)
    np.copyto(out, y, where=where)
    return out, (_out_back, pb, out, old, where, len(args))


def _out_back(pb, dy, dself, S):
    _, inner, out, old, where, nargs = pb
    dout, S.dout = S.dout, None
    total = acc(dy, dout)
    new = out.copy()
    out[...] = old
    S.redo.append((operator.setitem, (out, Ellipsis, new)))
    if where is not True and total is not None:
        total = np.where(where, total, 0.0)  # only the written elements came from f
    if inner is None or total is None:  # (nothing flows to f's arguments: one None each)
        dfn, dargs, dkw = None, (None,) * nargs, None
    else:
        dfn, dargs, dkw = inner[0](inner, total, dself, S)
    dkw = dict(dkw or {})
    if where is not True and dy is not None:
        # where not written, out keeps its old values: their cotangent (the result's there, whether the
        # caller holds it as out's or as the result's: `s = np.divide(1, s, where=m, out=s)`) is out's
        dkw["out"] = np.where(where, 0.0 if dout is None else -dout, dy)
    elif dout is not None:  # its values before the call were overwritten (where written)
        dkw["out"] = -dout if where is True else np.where(where, -dout, 0.0)
    return dfn, dargs, dkw


def _dual_method_call(f, args, kw):
    """x.sum() etc. on a forward-mode dual array: run it, and differentiate it with the ndarray method's
    rule (whose adjoint then runs on duals, under ForwardContext when it must)."""
    rule = _rules.get((np.ndarray, f.__name__))
    if rule is not None and rule.adjoint is None and rule.inplace is not None:  # x.sort(), x.fill(v)
        CHANGES[0] = next(TICKS)
        y, back = rule.inplace(f.__self__, *args, **kw)
        return y, (_inplace_back, back, True)
    y = f(*args, **kw)
    if rule is None or rule.adjoint is None:
        if rule is not None and rule.kind == "nondiff":
            return y, None
        raise _no_rule(f)
    return y, (_static_back, rule.adjoint, y, (f.__self__,) + args, kw, True)


def _other_call(mask, f, args, kw):
    repl = REPLACEMENTS.get(f) if _hashable(f) else None
    if repl is not None:
        return _twin_call(-1, repl, (), args, kw)
    if type(f) is _DISPATCHER:
        impl = f._implementation
        if type(impl) is types.FunctionType:
            return _twin_call(mask, impl, (), args, kw)
    if isinstance(f, functools.partial):
        return _partial_call(f, args, kw)
    if isinstance(f, type):
        return _construct(f, args, kw)
    if type(f) is types.MethodType:  # method of a Python class bound to a C callable etc.
        return call(mask, f.__func__, f.__self__, *args, **kw)
    cal = getattr(type(f), "__call__", None)
    if type(cal) is types.FunctionType:
        y, pb = _twin_call(-1, cal, (f,), args, kw)
        return y, pb
    # only the arguments the caller differentiates count (mask >= 0 says which): constants such as the
    # 0.0 and 1.0 of `np.linspace(0.0, 1.0, len(x))` do not make a call differentiable
    checked = tuple(a for i, a in enumerate(args) if mask >> i & 1) if mask >= 0 else tuple(args)
    owner = getattr(f, "__self__", None) if type(f) is _BUILTIN or type(f) is _WRAPPER else None
    if owner is not None and not isinstance(owner, types.ModuleType):
        checked = (owner,) + checked  # a C method of a differentiable object (`y.sort()`) needs a rule too
    if not _any_differentiable(checked, kw if mask < 0 or mask & KW_ACTIVE else _NOKW):
        return f(*args, **kw), None
    raise _no_rule(f)


def _hashable(f) -> bool:
    try:
        hash(f)
        return True
    except TypeError:
        return False


def _any_differentiable(args, kw) -> bool:
    for a in args + tuple(kw.values()):
        if isinstance(a, (float, complex, np.ndarray, np.inexact)) and not isinstance(a, bool):
            if not isinstance(a, np.ndarray) or a.dtype.kind in "fc":
                return True
        elif isinstance(a, numbers.Number) and not isinstance(a, (int, bool)):
            return True
        elif isinstance(a, (list, tuple)) and a and _any_differentiable(tuple(a), {}):
            return True
        elif type(a).__module__.startswith("uncertainties"):
            return True
    return False


def _no_rule(f) -> NoRuleError:
    frame = sys._getframe(1)
    here = __file__.rsplit("/", 1)[0]
    while frame.f_back is not None and frame.f_code.co_filename.startswith(here):
        frame = frame.f_back  # the user's (or library's) line, not the engine's
    where = f"{frame.f_code.co_qualname} ({frame.f_code.co_filename}:{frame.f_lineno})"
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)
    module = getattr(f, "__module__", None) or type(f).__module__
    return NoRuleError(
        f"no reverse rule for the C function {module}.{name}, reached with differentiable inputs",
        where=where,
        fix=("register one: `@contexts.custom_adjoint(fn)` on a function returning (y, pullback), or "
             f"`contexts.rules.registry.adjoint({name})` with the static form; or wrap the call in "
             "`stop_gradient` if no gradient should flow through it"))


def _partial_call(p, args, kw):
    y, pb = call(-1, p.func, *p.args, *args, **{**p.keywords, **kw})
    if pb is None:
        return y, None
    return y, (_partial_back, pb, len(p.args), tuple(p.keywords))


def _partial_back(pb, dy, dself, S):
    _, inner, npre, pkw = pb
    dfn, dargs, dkw = inner[0](inner, dy, None, S)
    dargs = tuple(dargs) if dargs is not None else ()
    own = Tangent(func=dfn, args=tuple(dargs[:npre]),
                  keywords={k: (dkw or {}).get(k) for k in pkw})
    rest_kw = {k: v for k, v in (dkw or {}).items() if k not in pkw} or None
    return own, dargs[npre:], rest_kw


def _construct(cls, args, kw):
    init = cls.__init__
    if cls.__new__ is object.__new__ and type(init) is types.FunctionType:
        if _has_source(init):
            obj = object.__new__(cls)
            _, pb = _twin_call(-1, init, (obj,), args, kw)
            return obj, (None if pb is None else (_construct_back, pb))
        if dataclasses.is_dataclass(cls):  # generated __init__: fields in, fields out
            names = [f.name for f in dataclasses.fields(cls) if f.init]
            return cls(*args, **kw), (_fields_back, names, len(args), tuple(kw))
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):  # namedtuple
        return cls(*args, **kw), (_fields_back, list(cls._fields), len(args), tuple(kw))
    if not _any_differentiable(args, kw):
        return cls(*args, **kw), None
    raise _no_rule(cls)


def _has_source(fn) -> bool:
    try:
        get_source(fn.__code__, fn.__globals__)
        return True
    except SourceUnavailable:
        return False


def _fields_back(pb, dy, dself, S):
    """Cotangents of the arguments of a record type's generated constructor: its fields' cotangents."""
    _, names, nargs, kwnames = pb
    if dy is None:
        return None, (None,) * nargs, None
    if isinstance(dy, (list, tuple)):
        fields = dict(zip(names, dy))
    elif isinstance(dy, dict):
        fields = dy
    else:
        fields = {n: getattr(dy, n, None) for n in names}
    dargs = tuple(fields.get(n) for n in names[:nargs])
    return None, dargs, {k: fields.get(k) for k in kwnames} or None


def _construct_back(pb, dy, dself, S):
    inner = pb[1]
    # the new object's cotangent flows into __init__'s `self`
    dfn, dargs, dkw = inner[0](inner, None, dy, S)
    return None, dargs, dkw


# -- pure-Python callees: recording twins ------------------------------------------------------------

class _TwinInfo:
    __slots__ = ("fwd_code", "rev", "argcount", "varargs", "varkw", "names", "cells", "generated",
                 "helper_closure", "recent", "entry")


_twins: dict = {}


def _active_params(code, mask, npre, nargs, kwnames):
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount
                             + bool(code.co_flags & 4) + bool(code.co_flags & 8)]
    if mask == -1:
        return frozenset(names)
    if mask == -2:  # every argument, but not the closure's cells: the caller wants no gradient for f
        return frozenset(names) | _NO_CELLS
    act = set(names[:npre])
    for i in range(nargs):
        if mask >> i & 1:
            j = npre + i
            if j < code.co_argcount:
                act.add(names[j])
            elif code.co_flags & 4:
                act.add(names[code.co_argcount + code.co_kwonlyargcount])
    if mask & KW_ACTIVE:  # the keyword arguments: their parameters, or the **kwargs one
        positional = names[:code.co_argcount + code.co_kwonlyargcount]
        for k in kwnames:
            if k in positional:
                act.add(k)
            elif code.co_flags & 8:
                act.add(names[-1])
    return frozenset(act)


def _build(fn, active):
    code = fn.__code__
    try:
        src = get_source(code, fn.__globals__)
    except SourceUnavailable as e:
        raise NoSource(
            f"cannot differentiate {code.co_qualname}: its source is not available ({e.what})",
            where=f"{code.co_filename}:{code.co_firstlineno}",
            fix="register a rule for it (`@contexts.custom_adjoint`) or define it in a file") from e
    freevars = tuple(c for c in code.co_freevars if c != "__class__" and not c.startswith("__od_"))
    cells = [] if _NO_CELLS <= active else list(freevars)
    active = active - _NO_CELLS
    try:
        fdef = lower(src.as_function_def())
        gen = generate(fdef, set(active), cells, fn.__globals__, f"{code.co_name}__adjoint", freevars)
    except Unsupported as e:
        line = getattr(e.node, "lineno", code.co_firstlineno)
        raise UnsupportedFunction(
            f"reverse mode cannot transform {code.co_qualname}: it uses a {e}",
            where=f"{code.co_filename}:{line}",
            fix="give the function a custom adjoint (`@contexts.custom_adjoint`), or rewrite that part") from e
    fwd_code = compile_twin(src, gen.forward, extra_freevars=HELPERS)
    rev_code = compile_twin(src, gen.adjoint, extra_freevars=HELPERS)
    rev_code = rev_code.replace(co_name=f"{code.co_name}__adjoint",
                                co_qualname=f"{code.co_qualname}.<adjoint>")
    rev = types.FunctionType(rev_code, fn.__globals__, rev_code.co_name, (None, None, None),
                             tuple(_HELPER_CELLS[v] for v in rev_code.co_freevars) or None)
    info = _TwinInfo()
    info.fwd_code, info.rev, info.generated = fwd_code, rev, gen
    info.recent = {}
    info.helper_closure = (tuple(_HELPER_CELLS[v] for v in fwd_code.co_freevars)
                           if not code.co_freevars else None) or None
    info.argcount = code.co_argcount
    nkw = code.co_kwonlyargcount
    info.names = gen.params
    info.varargs = code.co_argcount + nkw if code.co_flags & 4 else -1
    info.varkw = code.co_argcount + nkw + bool(code.co_flags & 4) if code.co_flags & 8 else -1
    info.cells = cells
    info.entry = frozenset(gen.entry)
    return info


def _leaves(x, depth=0):
    if depth < 3 and isinstance(x, (list, tuple)):
        for v in x:
            yield from _leaves(v, depth + 1)
    elif depth < 3 and isinstance(x, dict):
        for v in x.values():
            yield from _leaves(v, depth + 1)
    else:
        yield x


def _opaque_call(fn, args, kw, err, npre=0):
    """A function without source (e.g. made by `exec`) runs as a primitive. It is differentiable only
    when every differentiable value it returns is one of its inputs, passed through (argument parsers such
    as scipy.stats' `_parse_args`): cotangents are then routed back by identity. Anything else is the
    NoSource error, which names the function."""
    y = fn(*args, **kw)
    inputs = {id(v): i for i, v in enumerate(_leaves(tuple(args) + tuple(kw.values())))}
    for leaf in _leaves(y):
        if _any_differentiable((leaf,), {}) and id(leaf) not in inputs:
            raise err
    return y, (_opaque_back, y, args, kw, npre)


def _opaque_back(pb, dy, dself, S):
    _, y, args, kw, npre = pb
    cots: dict[int, object] = {}

    def walk(v, g, depth=0):
        if g is None:
            return
        if depth < 3 and isinstance(v, (list, tuple)) and isinstance(g, (list, tuple)):
            for vi, gi in zip(v, g):
                walk(vi, gi, depth + 1)
        elif depth < 3 and isinstance(v, dict) and isinstance(g, dict):
            for k, vi in v.items():
                walk(vi, g.get(k), depth + 1)
        else:
            cots[id(v)] = acc(cots.get(id(v)), g)

    walk(y, dy)

    def back(v, depth=0):
        if depth < 3 and isinstance(v, (list, tuple)):
            return type(v)(back(x, depth + 1) for x in v) if not hasattr(v, "_fields") else None
        if depth < 3 and isinstance(v, dict):
            return {k: back(x, depth + 1) for k, x in v.items()}
        return cots.get(id(v))

    dargs = tuple(back(a) for a in args)
    dkw = {k: back(v) for k, v in kw.items()} if kw else None
    if npre:  # a bound method: its object's cotangent is the method's own
        return acc(dself, dargs[0]), dargs[npre:], dkw
    return None, dargs, dkw


def twin_info(fn, active):
    key = (fn.__code__, active)
    info = _twins.get(key)
    if info is None:
        info = _twins[key] = _build(fn, active)
    return info


_CONSTANT_TYPES = (str, bytes, bool, type(None), types.ModuleType, type)


def _constants(args) -> int:
    """Bits of the arguments that can never carry a derivative (strings, flags, None, modules, types)."""
    bits = 0
    i = 0
    for a in args:
        ta = type(a)
        if ta is not float and ta is not _NDARRAY and isinstance(a, _CONSTANT_TYPES):
            bits |= 1 << i
        i += 1
    return bits


def _twin_call(mask, fn, pre, args, kw):
    code = fn.__code__
    constant = _constants(args) if mask < 0 else 0  # `gradient(f, x, "mode")`: "mode" is no input
    key = (code, mask, len(pre), len(args), tuple(kw) if kw else None, constant)
    info = _twins.get(key)
    if info is None:
        active = _active_params(code, mask, len(pre), len(args), tuple(kw))
        if constant:
            names = code.co_varnames
            active = active - {names[len(pre) + i] for i in range(len(args))
                               if constant >> i & 1 and len(pre) + i < code.co_argcount}
        try:
            info = _twins[key] = twin_info(fn, active)
        except NoSource as e:
            return _opaque_call(fn, pre + tuple(args), kw, e, len(pre))
    recent = info.recent.get(id(fn))
    if recent is not None and recent[0]() is fn and recent[1] is fn.__defaults__:
        fwd = recent[2]  # the same function object as a recent call: its twin function is ready
    else:
        fwd = _twin_function(info, fn)
    y, tape = fwd(*pre, *args, **kw)
    return y, (_twin_back, info, tape, len(pre), len(args), kw, fn)


def _twin_function(info, fn):
    """The forward twin as a function object of fn (its globals, cells and defaults), remembered for the
    few function objects last used (bounded: closures made in a loop do not pile up)."""
    fwd_code = info.fwd_code
    closure = fn.__closure__
    if closure is None:
        closure = info.helper_closure  # the same cells for every function object of this code
    elif fwd_code.co_freevars:
        own = dict(zip(fn.__code__.co_freevars, closure))
        closure = tuple(own[v] if v in own else _HELPER_CELLS[v] for v in fwd_code.co_freevars)
    fwd = types.FunctionType(fwd_code, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    if fn.__kwdefaults__:
        fwd.__kwdefaults__ = fn.__kwdefaults__
    if len(info.recent) >= 8:
        info.recent.clear()
    info.recent[id(fn)] = (weakref.ref(fn), fn.__defaults__, fwd)  # weak: no dead function kept alive
    return fwd


def _twin_back(pb, dy, dself, S):
    _, info, tape, npre, nargs, kw, fn = pb
    dins, took = None, 0
    handed = S.dargs_in
    if handed is not None and handed[0] is pb:
        # the call changed arrays in place: the cotangents the caller holds for its array arguments after
        # the call flow in (to the parameters' entry values), and come back as their whole cotangents
        S.dargs_in = None
        entry = info.entry
        dins = [None] * info.argcount
        for i, g in enumerate(handed[1]):
            if g is not None and npre + i in entry:
                dins[npre + i] = g
                took |= 1 << i
        if not took:
            dins = None
    if npre:  # a method: self's cotangent after the call flows in, the total before it comes out
        dparams, dcells = info.rev(S, tape, dy, None, dself, dins)
    else:
        dparams, dcells = info.rev(S, tape, dy, dself, None, dins)
    if took:
        S.took = took
    argcount = info.argcount
    if not npre and not kw and nargs == argcount == len(dparams) and not dcells:
        return None, dparams, None  # the common case: every parameter passed by position
    dargs = []
    for i in range(npre, npre + nargs):
        if i < argcount:
            dargs.append(dparams[i])
        else:
            dv = dparams[info.varargs]
            j = i - argcount
            dargs.append(dv[j] if dv is not None and j < len(dv) else None)
    dkw = None
    if kw:
        dkw = {}
        names = info.names
        for k in kw:
            if k in names[:len(names)]:
                idx = names.index(k)
                if idx != info.varkw and idx != info.varargs:
                    dkw[k] = dparams[idx]
                    continue
            dvk = dparams[info.varkw] if info.varkw >= 0 else None
            dkw[k] = dvk.get(k) if dvk is not None else None
    if npre:
        return dparams[0], dargs, dkw
    if any(v is not None for v in dcells.values()):
        return Tangent(dcells), dargs, dkw
    return None, dargs, dkw


def twin_source(fn, active=None) -> tuple[str, str]:
    """The generated forward twin and adjoint of fn, as source text (for `show_adjoint`)."""
    import ast
    code = fn.__code__
    if active is None:
        active = _active_params(code, -1, 0, 0, ())
    info = twin_info(fn, frozenset(active))
    return ast.unparse(info.generated.forward), ast.unparse(info.generated.adjoint)


# -- helpers used by the generated code -------------------------------------------------------------


# the functions generated code calls, and the rules the engine itself provides (they need `call`)
from .helpers import HELPER_CELLS as _HELPER_CELLS, unpack  # noqa: E402
from .replacements import REPLACEMENTS  # noqa: E402  (they are differentiated by `call` itself)
from . import primitives as _primitives  # noqa: E402,F401
