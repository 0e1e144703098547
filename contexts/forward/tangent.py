"""Forward mode by source transformation: a tangent twin computes each active value's tangent next to it.

For a function made of arithmetic, calls, subscripts and tuples of numbers and arrays (the numerical core
of most code), the tangent twin runs at a small multiple of the primal: tangents are plain values in their
own variables (`_od_f_<name>`, 0 for zero), never objects wrapping each number as `Dual` does. Calls go to
the callee's frule, or its own tangent twin, or — for code the twin does not cover (objects, mutation,
closures over active values, C functions without an frule) — through `Dual`s under `ForwardContext`,
the general mechanism. A function the transform cannot take at all makes `derivative`/`jvp` use duals.

Why this is not DESIGN §3's overloading alone: a `Dual` multiply costs ~400 ns in Python against ~20 ns for
the float multiply, so a scalar loop differentiated by duals runs ~20x its primal; the same idea reverse
mode uses (code generated once per code object) brings it to a few times.
"""

from __future__ import annotations

import ast
import builtins
import collections
import functools
import inspect
import sys
import threading
import types

import numpy as np

from overdub.errors import OverdubError, SourceUnavailable
from overdub.passes import OwnedEntries, compile_twin, depth as _depth, get_source, on_clear

from ..rules.frames import note_transformed
from .arrays import out_position
from ..lowered.activity import active_names, ask_primals, fresh_calls, view_groups, view_of, viewed
from ..lowered.emit import index_arg, parse_at
from ..lowered.lower import Unsupported, lower
from ..lowered.runtime import HELPERS as LOWERING_HELPERS, addresses
from ..rules.registry import key_of, registry

__all__ = ["NotTransformable", "tangent_jvp"]

HELPERS = ("__fd_cat__", "__fd_list__", "__fd_tuple__", "__fd_call__", "__fd_mcall__", "__fd_getitem__",
           "__fd_attr__", "__fd_pow__", "__fd_matmul__", "__fd_setitem__", "__fd_sync__", "__fd_bound__",
           "__fd_moved__", "__fd_args_back__", "__fd_out__", "__fd_giveup__", "__fd_star__", "__fd_bc__",
           # the lowering's:
           "__od_unpack__", "__od_iter__", "__od_tuple__", "__od_primal__", "__od_int_arg__",
           "__od_locals__")


class NotTransformable(BaseException):
    """The function uses something the tangent transform does not cover; use duals instead. Raised also
    while a twin runs (a value whose perturbation the twin cannot follow): a BaseException, so that the
    user's `except Exception:` never takes it for one of its own errors."""


def T(name: str) -> str:
    return "_od_f_" + name


class _Tangents:
    """Rewrites a lowered function's statements into primal-and-tangent statements."""

    def __init__(self, active: set[str], groups: dict[str, set[str]] | None = None, handed: str = "",
                 outside: frozenset = frozenset()):
        self.active = active
        # variables that may name an object from outside the call other than a parameter (a global list,
        # a captured dict): a store of an active value into it would leave its tangent behind
        self.outside = outside
        self.unfollowed: frozenset = frozenset()  # (set by _build: see _unfollowed)
        self.groups = groups or {}  # variables whose arrays may share memory (activity.view_groups)
        # the statement that hands the caller the tangents of parameters whose arrays this function may
        # change in place, in parameter order (None where not), before every return
        self.handed = handed

    def t(self, atom) -> str | None:
        """The tangent of an atom as source text, or None for a zero tangent."""
        if isinstance(atom, ast.Name) and atom.id in self.active:
            return T(atom.id)
        return None

    def block(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for s in stmts:
            out.extend(self.stmt(s))
        return out or [ast.copy_location(ast.Pass(), stmts[0] if stmts else ast.Pass())]

    def stmt(self, s) -> list[ast.stmt]:
        if isinstance(s, (ast.If, ast.While)):
            s.body = self.block(s.body)
            s.orelse = self.block(s.orelse) if s.orelse else []
            return [s]
        if isinstance(s, ast.For):
            if self.t(s.iter) is not None:
                raise NotTransformable("a loop over an active sequence")
            if any(isinstance(n, ast.Name) and n.id in self.active for n in ast.walk(s.target)):
                # the loop variable is rebound to active values or changed in place: its items' tangents
                # would have to come from the sequence's, item by item
                raise NotTransformable("an active loop variable")
            s.body = self.block(s.body)
            s.orelse = self.block(s.orelse) if s.orelse else []
            return [s]
        if isinstance(s, ast.Try):
            s.body = self.block(s.body)
            for h in s.handlers:
                h.body = self.block(h.body)
            s.orelse = self.block(s.orelse) if s.orelse else []
            s.finalbody = self.block(s.finalbody) if s.finalbody else []
            return [s]
        if isinstance(s, ast.With):
            if any(isinstance(n, ast.Name) and n.id in self.active
                   for i in s.items if i.optional_vars is not None for n in ast.walk(i.optional_vars)):
                raise NotTransformable("`with ... as` an active value")  # (its tangent: the __enter__'s)
            s.body = self.block(s.body)
            return [s]
        if isinstance(s, ast.Match):
            if (self.t(s.subject) is not None and not getattr(s, "_od_rebound", False)
                    and any(_binds(c.pattern) for c in s.cases)):
                raise NotTransformable("a match pattern binding parts of an active value")
            for c in s.cases:
                c.body = self.block(c.body)
            return [s]
        if isinstance(s, ast.Return):
            return parse_at(f"{self.handed}return {ast.unparse(s.value)}, {self.t(s.value) or 0}\n", s)
        if isinstance(s, ast.Assign):
            return self.assign(s)
        if isinstance(s, (ast.FunctionDef, ast.ClassDef)):
            if isinstance(s, ast.FunctionDef) and s.name in self.active:
                raise NotTransformable("a closure over active values")
            if isinstance(s, ast.ClassDef) and any(isinstance(n, ast.Name) and n.id in self.active
                                                   for n in ast.walk(s)):
                raise NotTransformable("a class whose body or methods use active values")
            return [s]
        if isinstance(s, ast.Raise) and any(isinstance(n, ast.Name) and n.id in self.active for n in ast.walk(s)):
            # an exception carries its arguments to a handler (`except E as e: e.args[0]`) without their
            # tangents: when it is raised, the call reruns on duals (which raise it again, perturbed)
            return parse_at("raise __fd_giveup__('an exception made from active values')\n", s)
        if isinstance(s, ast.Delete) and any(isinstance(t, ast.Subscript) and self.t(t.value) for t in s.targets):
            raise NotTransformable("deleting from an active container")
        return [s]

    def assign(self, s: ast.Assign) -> list[ast.stmt]:
        target, v = s.targets[0], s.value
        if not isinstance(target, ast.Name):
            # an active key (checked when the store runs: a dict's keys have no tangent; an index has none)
            key = isinstance(target, ast.Subscript) and any(isinstance(n, ast.Name) and n.id in self.active
                                                            for n in ast.walk(target.slice))
            if self.t(target.value) is None and self.t(v) is None and not key:
                return [s]
            if isinstance(target.value, ast.Name) and target.value.id in self.outside:
                raise NotTransformable(f"storing into {target.value.id}, a global or captured object")
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                # `y[i] = v`: y's tangent gets v's at i (a new tangent: another variable's may be y's)
                y = target.value.id
                return (parse_at(f"{T(y)} = __fd_setitem__({y}, {self.t(target.value) or 0}, "
                               f"{index_arg(target.slice)}, {self.t(v) or 0}, {ast.unparse(v)})\n", s)
                        + [s] + self.sync(y, s))
            raise NotTransformable("storing into an active object")
        name = target.id
        if name not in self.active:
            return [_in_place(s) if getattr(v, "_od_inplace", False) else s]
        tangent = self.tangent_of(name, v, s)
        if tangent is None:  # the statement computes its own tangent (a call)
            return self.call(s, name, v)
        if getattr(v, "_od_inplace", False):
            # `x op= y` is Python's in-place operator (an array changes in place, so its views and the
            # caller see it; a number is rebound), and the variables viewing x follow its tangent
            return parse_at(f"{T(name)} = {tangent}\n", s) + [_in_place(s)] + self.sync(name, s)
        return parse_at(f"{T(name)} = {tangent}\n", s) + [s]

    def sync(self, name: str, s) -> list[ast.stmt]:
        """After an in-place change of the array in `name`: the variables that may view its memory (their
        static group) get tangents that agree with its new one where they share elements (checked at
        run time; nothing happens for arrays that are not views of each other)."""
        members = sorted(m for m in self.groups.get(name, ()) if m != name and m in self.active)
        if not members:
            return []
        values = "(" + "".join(f"{m}, " for m in members) + ")"
        tans = "(" + "".join(f"{T(m)}, " for m in members) + ")"
        return parse_at(f"try:\n    {tans} = __fd_sync__({name}, {T(name)}, {values}, {tans})\n"
                      f"except NameError:\n"
                      f"    {tans} = __fd_sync__({name}, {T(name)}, *__fd_bound__(__od_locals__(), "
                      f"{tuple(members)!r}, {tuple(T(m) for m in members)!r}))\n", s)

    def tangent_of(self, name, v, s) -> str | None:
        t = self.t
        if isinstance(v, (ast.Name, ast.Constant)):
            return t(v) or "0"
        if isinstance(v, ast.UnaryOp):
            if isinstance(v.op, ast.USub):
                return f"-{t(v.operand)}" if t(v.operand) else "0"
            return t(v.operand) or "0" if isinstance(v.op, ast.UAdd) else "0"
        if isinstance(v, ast.BinOp):
            return self.binop(v)
        if isinstance(v, ast.Call):
            return None
        if isinstance(v, ast.Subscript):
            ta = t(v.value)
            return f"__fd_getitem__({ta}, {index_arg(v.slice)})" if ta else "0"
        if isinstance(v, (ast.Tuple, ast.List)):
            if any(isinstance(e, ast.Starred) for e in v.elts):
                raise NotTransformable("a starred element")
            items = "".join(f"{t(e) or 0}, " for e in v.elts)
            return f"({items})" if isinstance(v, ast.Tuple) else f"[{items}]"
        if isinstance(v, ast.Dict):
            if any(k is None for k in v.keys):
                raise NotTransformable("a dict display unpacking another")
            if any(t(k) is not None for k in v.keys):
                raise NotTransformable("an active value as a key")
            return "{" + ", ".join(f"{ast.unparse(k)}: {t(e) or 0}" for k, e in zip(v.keys, v.values)) + "}"
        if isinstance(v, ast.Attribute):
            ta = t(v.value)
            if ta is None:
                return "0"
            if v.attr in ("T", "real", "imag"):
                return f"__fd_attr__({ta}, {v.attr!r})"
            if v.attr in _NONDIFF_ATTRIBUTES:
                return "0"
            raise NotTransformable(f"the attribute .{v.attr} of an active value")
        if isinstance(v, (ast.Compare, ast.JoinedStr)):
            return "0"
        raise NotTransformable(f"a {type(v).__name__} on active values")

    def binop(self, v: ast.BinOp) -> str:
        a, b = ast.unparse(v.left), ast.unparse(v.right)
        ta, tb = self.t(v.left), self.t(v.right)
        op = type(v.op)
        if ta is None and tb is None:
            return "0"
        if op is ast.Add:
            # lists and tuples concatenate: a tangent of 0 (a container made by a call) or an inactive
            # operand stands for zeros of that operand's length, which __fd_cat__ writes out
            if ta and tb:
                return f"({ta} + {tb} if {ta}.__class__ is {tb}.__class__ else __fd_cat__({a}, {b}, {ta}, {tb}))"
            other, t = (v.right, ta) if ta else (v.left, tb)
            if isinstance(other, ast.Constant):
                return t
            o = ast.unparse(other)
            return (f"(__fd_bc__({t}, {o}) if {o}.__class__ is not __fd_list__ and {o}.__class__ is not "
                    f"__fd_tuple__ else __fd_cat__({a}, {b}, {ta or 0}, {tb or 0}))")
        if op is ast.Sub:
            if ta and tb:  # (a zero tangent on one side: the other's, in the shape of the difference)
                return f"({ta} - {tb} if {ta}.__class__ is {tb}.__class__ else __fd_cat__({a}, {b}, {ta}, -{tb}))"
            return f"__fd_bc__({ta}, {b})" if ta else f"-__fd_bc__({tb}, {a})"
        if op is ast.Mult:
            terms = ([f"{ta} * {b}"] if ta else []) + ([f"{a} * {tb}"] if tb else [])
            return " + ".join(terms)
        if op is ast.Div:
            if tb is None:
                return f"{ta} / {b}"
            num = f"{ta} * {b} - {a} * {tb}" if ta else f"-({a} * {tb})"
            return f"({num}) / ({b} * {b})"
        if op is ast.Pow:
            return f"__fd_pow__({a}, {b}, {ta or 0}, {tb or 0})"
        if op is ast.MatMult:
            return f"__fd_matmul__({a}, {b}, {ta or 0}, {tb or 0})"
        if op is ast.FloorDiv:
            return "0"
        raise NotTransformable(f"the operator {op.__name__} on active values")

    def call(self, s, name, v: ast.Call) -> list[ast.stmt]:
        t = self.t
        if any(k.arg is None for k in v.keywords):
            raise NotTransformable("a call with **")
        # `f(x, *rest)`: rest, made a tuple once, passes its items' tangents (zeros when inactive)
        stars = [(f"_od_s_{name}_{i}", a) for i, a in enumerate(v.args) if isinstance(a, ast.Starred)]
        pre = parse_at("".join(f"{n} = __fd_tuple__({ast.unparse(a.value)})\n" for n, a in stars), s)
        starred = dict((id(a), n) for n, a in stars)
        args = "".join(f"*{starred[id(a)]}, " if id(a) in starred else ast.unparse(a) + ", " for a in v.args)
        tans = "".join(f"*__fd_star__({starred[id(a)]}, {t(a.value) or 0}), " if id(a) in starred
                       else f"{t(a) or 0}, " for a in v.args)
        kw = ", ".join(f"{k.arg!r}: {ast.unparse(k.value)}" for k in v.keywords)
        kwt = ", ".join(f"{k.arg!r}: {t(k.value) or 0}" for k in v.keywords)
        if isinstance(v.func, ast.Attribute):
            obj = v.func.value
            text = (f"{name}, {T(name)} = __fd_mcall__({ast.unparse(obj)}, {v.func.attr!r}, {t(obj) or 0}, "
                    f"({args}), ({tans}), {{{kw}}}, {{{kwt}}})\n")
            return pre + parse_at(text, s) + self.taken_back(v, s) + self.written_out(v, name, s)
        else:
            text = (f"{name}, {T(name)} = __fd_call__({ast.unparse(v.func)}, ({args}), ({tans}), "
                    f"{{{kw}}}, {{{kwt}}})\n")
            return pre + parse_at(text, s) + self.taken_back(v, s) + self.written_out(v, name, s)

    def written_out(self, v: ast.Call, name: str, s) -> list[ast.stmt]:
        """After `f(..., out=o)`: o's tangent is the result's where f wrote (all of o, or its `where=`),
        and the variables viewing o follow."""
        out = next((k.value for k in v.keywords if k.arg == "out"), None)
        if not isinstance(out, ast.Name) or out.id not in self.active or name not in self.active:
            return []
        where = next((ast.unparse(k.value) for k in v.keywords if k.arg == "where"), "True")
        o = out.id
        return (parse_at(f"{T(o)} = __fd_out__({o}, {name}, {T(name)}, {T(o)}, {where})\n", s)
                + self.sync(o, s))

    def taken_back(self, v: ast.Call, s) -> list[ast.stmt]:
        """After a call: the tangents of array arguments the callee changed in place (`fill_(z[1:3], x)`),
        handed back by its tangent twin, replace the caller's, and the variables viewing them follow. A
        tangent handed back for an argument the caller does not follow (a global list, a keyword
        argument) raises NotTransformable: the change would be lost."""
        if not any(self.t(a) is not None for a in v.args) and not any(self.t(k.value) for k in v.keywords):
            return []  # (no active argument: the callee had nothing to hand back)
        before_star = next((i for i, a in enumerate(v.args) if isinstance(a, ast.Starred)), len(v.args))
        at = [(i, a.id) for i, a in enumerate(v.args[:before_star]) if isinstance(a, ast.Name)
              and a.id in self.active and a.id not in self.outside and a.id not in self.unfollowed]
        positions, names = tuple(i for i, _ in at), "".join(f"{a}, " for _, a in at)
        text = f"if __fd_moved__.args is not None:\n    _od_mv = __fd_args_back__({positions!r}, ({names}))\n"
        out = parse_at(text, s)
        for k, (_, a) in enumerate(at):
            inner = parse_at(f"if _od_mv[{k}] is not None:\n    {T(a)} = _od_mv[{k}]\n", s)
            inner[0].body += self.sync(a, s)
            out[0].body.append(inner[0])
        return out


def _in_place(s: ast.Assign) -> ast.AugAssign:
    """The lowered `x = x op y` marked in place as Python's `x op= y` again: an array changes in place,
    so the variables sharing it (`b = a; b += c` changes a) see it, active or not."""
    return ast.copy_location(ast.AugAssign(target=ast.Name(id=s.targets[0].id, ctx=ast.Store()),
                                           op=s.value.op, value=s.value.right), s)


_SCALARS = frozenset({int, float, complex, np.float64, np.float32, np.int64, np.int32, np.complex128, np.bool_})

# (id(code), active parameters) -> the twin's code or the NotTransformable; removed when the code dies
_cache = OwnedEntries()
_cache_map = _cache.data
on_clear(_cache.clear)


def tangent_twin(fn: types.FunctionType, active: frozenset):
    """The tangent twin's code of fn for the given active parameters (cached), or NotTransformable."""
    code = fn.__code__
    key = (id(code), active)
    found = _cache_map.get(key)
    if found is None:
        try:
            found = _build(fn, active)
        except NotTransformable as e:
            found = NotTransformable(*e.args)  # without e's traceback: its frames hold fn
        _cache.put(code, key, found)
    if isinstance(found, NotTransformable):
        # a fresh exception each time: re-raising the cached one would grow its traceback by the frames of
        # every call (their locals included), and keep them alive with the cache entry
        raise NotTransformable(*found.args) from None
    return found


def _binds(pattern) -> bool:
    """A match pattern binds names (`case [a, b]:`, `case {"k": v}:`, `case P(x=v):`, `case _ as v:`)."""
    return any(isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name is not None
               or isinstance(n, ast.MatchMapping) and n.rest is not None for n in ast.walk(pattern))


def _build(fn, active):
    code = fn.__code__
    if str(fn.__globals__.get("__name__", "")).startswith("contexts."):
        # the library's own functions: its derivative calls nest by tags on duals, its rules are primitives
        raise NotTransformable(f"{code.co_qualname} belongs to contexts")
    try:
        src = get_source(code, fn.__globals__)
        original = src.as_function_def()
        fdef = lower(original)
    except (SourceUnavailable, Unsupported) as e:
        raise NotTransformable(str(e)) from e
    if any(isinstance(n, (ast.Nonlocal, ast.Global)) for n in ast.walk(original)):
        # a value written to a cell or a global (here or by a nested function) leaves this function's
        # variables, and with it its tangent: duals carry their tangents wherever values go
        raise NotTransformable("a nonlocal or global variable written")
    act = active_names(fdef, set(active), fn.__globals__)
    ask_primals(fdef, act, fn.__globals__, tuple(fn.__code__.co_freevars))
    local = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    local |= {x.arg for x in fdef.args.posonlyargs + fdef.args.args + fdef.args.kwonlyargs}
    if any(n in fn.__globals__ and n not in local for n in act):
        # a module global the module's code changes may hold perturbed values (activity says so): its
        # tangent lives outside this function, where duals carry it
        raise NotTransformable("a changeable module global read")
    groups = view_groups(fdef, fresh_calls(fdef, fn.__globals__, tuple(fn.__code__.co_freevars)))
    params = [a.arg for a in fdef.args.posonlyargs + fdef.args.args]
    changed = _changed_in_place(fdef, groups)
    handed = [p if p in act and p in changed else None for p in params]
    hand = (f"__fd_moved__.args = ({''.join(f'{T(p)}, ' if p else 'None, ' for p in handed)})\n"
            if any(handed) else "")
    tangents = _Tangents(act, groups, hand, _outside(fdef, fn))
    tangents.unfollowed = _unfollowed(fdef, act)
    body = tangents.block(fdef.body)
    prologue = "".join(f"{T(p)} = _od_tans[{i}] if len(_od_tans) > {i} else 0\n" for i, p in enumerate(params)
                       if p in act)
    star = fdef.args.vararg
    if star is not None and star.arg in act:  # `*args`: the tangents of the positional arguments past params
        prologue += f"{T(star.arg)} = tuple(_od_tans[{len(params)}:])\n"
    # keyword arguments reach a twin only unperturbed (fd_call): their tangents start as zero
    for a in fdef.args.kwonlyargs + ([fdef.args.kwarg] if fdef.args.kwarg is not None else []):
        if a.arg in act:
            prologue += f"{T(a.arg)} = 0\n"
    if not (body and isinstance(body[-1], ast.Return)):
        body += parse_at(f"{hand}return None, 0\n", fdef.body[-1])
    fdef.body = parse_at(prologue, fdef) + body if prologue else body
    fdef.args.posonlyargs.insert(0, ast.arg(arg="_od_tans"))
    ast.fix_missing_locations(fdef)
    return compile_twin(src, fdef, extra_freevars=HELPERS, opaque=True)


def _outside(fdef, fn) -> frozenset:
    """The variables that may name a mutable object the function did not make nor receive as a parameter:
    globals and captured variables (modules, functions and classes aside), and the locals assigned from
    them (`g = GLOBAL_LIST`, `d = cfg["sub"]`)."""
    a = fdef.args
    params = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if x is not None}
    stored = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    inert = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, np.ufunc, int, float,
             complex, str, bool, type(None), functools.partial)

    def mutable_outside(name: str) -> bool:
        if name in params or name in stored:
            return False
        if name in cells:
            try:
                value = cells[name].cell_contents
            except ValueError:
                return True
        elif name in fn.__globals__:
            value = fn.__globals__[name]
        else:
            return not hasattr(builtins, name)
        return not isinstance(value, inert)

    found = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
             and mutable_outside(n.id)}
    changed = True
    while changed:
        changed = False
        for n in ast.walk(fdef):
            if (isinstance(n, ast.Assign) and not _fresh_copy(n.value, fn.__globals__)
                    and viewed(n.value, strict=True) & found):
                for t in n.targets:
                    if isinstance(t, ast.Name) and t.id not in found:
                        found.add(t.id)
                        changed = True
    return frozenset(found)


def _unfollowed(fdef, act: set[str]) -> frozenset:
    """The variables naming an object that an inactive variable may also reach (`t = cont["k"]` where
    `cont = {"k": loc}` and loc is inactive): a change to it in place by a callee cannot be followed."""
    held: dict[str, set[str]] = {}
    for n in ast.walk(fdef):
        if isinstance(n, ast.Assign):
            v = n.value
            names = (set().union(*(view_of(e) for e in v.elts)) if isinstance(v, (ast.List, ast.Tuple))
                     else set().union(*(view_of(e) for e in v.values if e is not None))
                     if isinstance(v, ast.Dict) else view_of(v))
            for t in n.targets:
                if isinstance(t, ast.Name):
                    held.setdefault(t.id, set()).update(names - {t.id})
    out = set()
    for name in held:
        todo, seen = [name], {name}
        while todo:
            m = todo.pop()
            if m not in act and m in held:  # an inactive local reaching the object
                out.add(name)
                break
            for k in held.get(m, ()):
                if k not in seen:
                    seen.add(k)
                    todo.append(k)
    return frozenset(out)


_COPIES = frozenset({"list", "dict", "tuple", "set", "sorted", "np.array", "numpy.array", "np.copy",
                     "copy.copy", "copy.deepcopy", "deepcopy"})
_COPY_METHODS = frozenset({"copy", "astype", "tolist", "flatten"})


# numpy functions whose result may be (or hold) a view of an argument
_NUMPY_VIEWS = frozenset({"asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "reshape", "ravel",
                          "transpose", "swapaxes", "moveaxis", "rollaxis", "squeeze", "expand_dims", "diagonal",
                          "real", "imag", "broadcast_to", "broadcast_arrays", "atleast_1d", "atleast_2d",
                          "atleast_3d", "split", "array_split", "hsplit", "vsplit", "dsplit", "matrix_transpose",
                          "permute_dims", "flip", "fliplr", "flipud", "rot90", "unstack", "require", "view"})


def _fresh_copy(e, globals_: dict) -> bool:
    """e makes a new object from its argument (`G.copy()`, `list(G)`, `np.zeros_like(G)`, `np.concatenate`):
    a store into it reaches no one else."""
    if not isinstance(e, ast.Call):
        return False
    f = e.func
    if isinstance(f, ast.Attribute):
        if f.attr in _COPY_METHODS:
            return True
        module = globals_.get(f.value.id) if isinstance(f.value, ast.Name) else None
        if isinstance(module, types.ModuleType) and module.__name__.split(".")[0] == "numpy":
            return f.attr not in _NUMPY_VIEWS
    return ast.unparse(f) in _COPIES


def _changed_in_place(fdef, groups: dict[str, set[str]]) -> set[str]:
    """The variables whose arrays the function may change in place and never rebinds: stored into
    (`v[i] = ...`, `v.f = ...`), updated (`v += ...`), or handed to a call that may change them — with the
    variables that may view the same memory."""
    changed: set[str] = set()
    rebound: set[str] = set()
    for n in ast.walk(fdef):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, (ast.Subscript, ast.Attribute)):
                    base = t.value
                    while isinstance(base, (ast.Subscript, ast.Attribute)):
                        base = base.value
                    if isinstance(base, ast.Name):
                        changed.add(base.id)
                elif isinstance(t, ast.Name):
                    (changed if getattr(n.value, "_od_inplace", False) else rebound).add(t.id)
        elif isinstance(n, ast.Call):
            changed.update(a.id for a in n.args if isinstance(a, ast.Name))
        elif isinstance(n, (ast.For, ast.AugAssign)) and isinstance(n.target, ast.Name):
            rebound.add(n.target.id)
    for name in list(changed):
        changed |= groups.get(name, set())
    return changed - rebound


class _Moved(threading.local):
    """The tangents a tangent twin hands back for its parameters (None: nothing), read by its caller right
    after the call; per thread."""
    args = None


_MOVED = _Moved()


def fd_args_back(positions: tuple, values: tuple) -> tuple:
    """The tangents handed back for the arguments at `positions` (None where there is none, or where the
    value is not an array, list or dict: numbers are never changed in place), taking them."""
    moved, _MOVED.args = _MOVED.args, None
    if any(i not in positions and not _no_change(t) for i, t in enumerate(moved)):
        raise NotTransformable("a call changed an argument the caller does not follow (a global, a keyword)")
    return tuple(moved[i] if i < len(moved) and type(v) in _MUTABLE else None
                 for i, v in zip(positions, values))


def _no_change(t) -> bool:
    """A handed-back tangent that leaves an unfollowed argument as the caller sees it: none, or zeros."""
    return t is None or _all_zero(t) or (type(t) is np.ndarray and not t.any())


_MUTABLE = (np.ndarray, list, dict)  # the values whose tangents follow changes in place


def make_twin(fn, twin_code, cells):
    closure = fn.__closure__
    own = dict(zip(fn.__code__.co_freevars, closure or ()))
    cl = tuple(own[v] if v in own else cells[v] for v in twin_code.co_freevars)
    twin = types.FunctionType(twin_code, fn.__globals__, fn.__name__, fn.__defaults__, cl or None)
    twin.__kwdefaults__ = fn.__kwdefaults__
    return twin


# -- the helpers the tangent twins call ------------------------------------------------------------

def _zero(t) -> bool:
    """The twins' zero tangent: 0, None, or a scalar zero it became by arithmetic (`0 * 0.346` is 0.0),
    which stands for zeros of any shape as 0 does (never a tangent to index or transpose)."""
    return t is None or (type(t) in _SCALARS and t == 0)


def _nz(dy):
    """A rule's tangent with its Nones (the registry's zero) made the twins' zero, 0."""
    if dy is None:
        return 0
    if type(dy) is tuple or type(dy) is list:
        return type(dy)(_nz(t) for t in dy)
    return dy


def _registry_zeros(t, a):
    """A twin's tangent of argument a for an frule: a zero (0) is the registry's None; inside a list or
    tuple (the tangent of `[W, v]` for np.concatenate) a zero of an array item is zeros of its shape."""
    if _zero(t):
        return None
    if (type(t) is list or type(t) is tuple) and (type(a) is list or type(a) is tuple) and len(a) == len(t):
        return type(t)(_zeros_of(e, d) if _zero(d) else _registry_zeros(d, e) for d, e in zip(t, a))
    return t


def _zeros_of(e, d):
    """Zeros shaped like an item e of a list argument (an array, or a nested list of numbers such as the
    `[0.0]` of `np.concatenate([[0.0], v])`); d (the twins' 0) for a scalar or a ragged item."""
    if type(e) is np.ndarray:
        return np.zeros(e.shape, np.result_type(e.dtype, float))
    if type(e) is list or type(e) is tuple:
        try:
            arr = np.asarray(e)
        except ValueError:
            return d
        if arr.dtype != object:
            return np.zeros(arr.shape, np.result_type(arr.dtype, float))
    return d


def fd_bc(t, other):
    """The tangent t of `a + other` (other inactive) broadcast to the result's shape: a scalar or smaller
    array added to a larger constant array has a tangent in every entry of the result."""
    shape = getattr(other, "shape", None)
    if not shape or not isinstance(t, (np.ndarray, np.generic, float, int, complex)):
        return t
    full = np.broadcast_shapes(np.shape(t), shape)
    return t if full == np.shape(t) else np.broadcast_to(t, full).copy()


def fd_star(items: tuple, t) -> tuple:
    """The tangents of the items of `*seq` in a call (items: tuple(seq)); t: the tangent of seq."""
    if _zero(t):
        return (0,) * len(items)
    if type(t) not in (list, tuple, np.ndarray) or len(t) != len(items):
        raise NotTransformable("a starred argument whose items' tangents are not known")
    return tuple(t)


def _by_frule(rule, args, tans, kw):
    """(y, tangent) through a rule's frule (the registry's None zero in, the twins' 0 zero out). An
    `out=` of a function other than a ufunc is written after the fact: such frules compute new values
    (passing it on would write the tangent into it too)."""
    if isinstance(rule.fn, np.ufunc) and len(args) > rule.fn.nin:  # `np.exp(x, buf)`: duals write buf
        raise NotTransformable("an output array passed by position")
    if len(args) > 2 and not isinstance(rule.fn, np.ufunc):  # an output given by position: duals write it
        fn = getattr(np, rule.fn[1], None) if isinstance(rule.fn, tuple) and rule.fn[0] is np.ndarray else rule.fn
        pos = out_position(fn) if type(fn) is type(np.sum) else -1
        if len(args) > pos >= 0 and args[pos] is not None:
            raise NotTransformable("an output array passed by position")
    tangents = tuple(_registry_zeros(t, a) for t, a in zip(tans, args))
    out = kw.get("out")
    if out is not None and not isinstance(rule.fn, np.ufunc):
        y, dy = rule.frule(tangents, *args, **{k: v for k, v in kw.items() if k != "out"})
        (out[0] if isinstance(out, tuple) else out)[...] = y
        return out, _nz(dy)
    y, dy = rule.frule(tangents, *args, **kw)
    return y, _nz(dy)


def fd_call(f, args, tans, kw, kwtans):
    """(f(*args, **kw), its tangent) given the arguments' tangents (0 for zero). The tangents of array
    arguments f changed in place come back through `_MOVED` (`fd_args_back`)."""
    _MOVED.args = None
    plain_kw = all(_zero(t) for t in kwtans.values())
    if plain_kw and all(_zero(t) for t in tans):
        return f(*args, **kw), 0
    if f is getattr and len(args) >= 2 and args[1] in _NONDIFF_ATTRIBUTES:  # getattr(x, "shape", ())
        return f(*args, **kw), 0
    f = uncached(f)
    rule = registry.get(f)
    if rule is not None and isinstance(key_of(f), tuple):  # a C type's bound method: keyed (type, name)
        if rule.kind == "nondiff":
            return f(*args, **kw), 0
        if not isinstance(f.__self__, np.ufunc):  # (ufunc.accumulate: the ufunc is a constant)
            # its object's tangent is not known here (`g = x.sum; g()`): duals carry it
            raise NotTransformable("a bound method of a C type called by name")
        if rule.frule is not None and plain_kw:
            return _by_frule(rule, (f.__self__, *args), (0, *tans), kw)
    if rule is not None and rule.frule is not None and plain_kw:
        return _by_frule(rule, args, tans, kw)
    if rule is not None and rule.kind == "nondiff":
        return f(*args, **kw), 0
    if rule is None and type(f) is types.FunctionType and plain_kw:
        active = _active_params(f.__code__, tans)
        try:
            code = tangent_twin(f, active)
        except NotTransformable:
            pass
        else:
            try:
                return make_twin(f, code, _cells())(tuple(tans), *args, **kw)
            except Exception as e:  # (free when nothing is raised) a library function's error says so
                note_transformed(e, f, "forward mode (its tangent twin)")
                raise
    return _through_duals(f, args, tans, kw, kwtans)


def fd_mcall(obj, name, tobj, args, tans, kw, kwtans):
    """obj.name(*args, **kw) and its tangent; the object's own tangent is `tobj`."""
    try:
        return _fd_mcall(obj, name, tobj, args, tans, kw, kwtans)
    finally:
        if not _zero(tobj):
            _MOVED.args = None  # the method of an active object had it first: not the caller's positions


def _fd_mcall(obj, name, tobj, args, tans, kw, kwtans):
    method = getattr(obj, name)
    if type(obj) is list and name in _LIST_MUTATORS:
        return _list_method(obj, name, tobj, args, tans, kw)
    if _zero(tobj) and (not isinstance(key_of(method), tuple) or isinstance(obj, np.ufunc)
                        or all(_zero(t) for t in tans) and all(_zero(t) for t in kwtans.values())):
        return fd_call(method, args, tans, kw, kwtans)
    if type(method) is types.MethodType and type(method.__func__) is types.FunctionType:
        return fd_call(method.__func__, (obj, *args), (tobj, *tans), kw, kwtans)
    rule = registry.get(method)  # a C type's method: keyed (type, name), the object first
    if rule is not None and (rule.inplace is not None or rule.mutating):
        # it changes the object in place (a.sort(), a.fill(v)): duals carry the tangent with the memory
        raise NotTransformable(f"{type(obj).__name__}.{name} changes an active object in place")
    if rule is not None and rule.frule is not None and all(_zero(t) for t in kwtans.values()):
        return _by_frule(rule, (obj, *args), (tobj, *tans), kw)
    return _through_duals(lambda o, *a, **k: getattr(o, name)(*a, **k), (obj, *args), (tobj, *tans), kw, kwtans)


_LIST_MUTATORS = frozenset({"append", "extend", "insert", "pop"})


def _list_method(obj, name, tobj, args, tans, kw):
    """A list mutated in place: its tangent list (built alongside it) gets the same change."""
    if type(tobj) is not list:
        if all(_zero(t) for t in tans):
            return getattr(obj, name)(*args, **kw), 0
        raise NotTransformable("a list without a tangent list received active values")
    y = getattr(obj, name)(*args, **kw)
    if name == "append":
        tobj.append(tans[0])
    elif name == "insert":
        tobj.insert(args[0], tans[1])
    elif name == "extend":
        t = tans[0]  # (a dict extends by its keys, which have no tangent)
        tobj.extend(list(t) if not _zero(t) and type(args[0]) is not dict else [0] * (len(obj) - len(tobj)))
    else:  # pop
        return y, tobj.pop(*args)
    return y, 0


def _through_duals(f, args, tans, kw, kwtans):
    """The general mechanism: f on duals under ForwardContext (objects, mutation, C functions, ...).

    The twin follows tangents of numbers, arrays and plain lists, tuples and dicts of them only: a call
    that leaves duals anywhere else (in an object it returns, an iterator, a closure, an argument it
    changed in place) raises NotTransformable, and the caller's derivative runs on duals from the start."""
    from .api import _primal_out, _run, _tangent_out
    from .dual import Dual, DualConversionError, Tag
    f = uncached(f)
    # a primitive that writes into an argument (np.copyto, ufunc.at: the duals know how) may write perturbed
    # values into a plain float array: that argument gets a zero tangent to write them into
    rule = registry.get(f)
    writes = rule is not None and (rule.inplace is not None or rule.mutating)
    tag = Tag()
    # the duals get copies of array tangents: the twin's tangents may be shared between variables whose
    # values are not (`y = x + 1` takes x's tangent as it is), so a change in place must not reach them.
    # The tangent of an argument the call changed in place is handed back to the caller instead.
    made: list = []  # (a container of duals made for the call, the items it was given)
    dargs = [_dualize(a, t, tag, made) if not _all_zero(t) else
             Dual(a, np.zeros(a.shape), tag) if writes and type(a) is np.ndarray and a.dtype.kind == "f" else a
             for a, t in zip(args, tans)]
    dkw = {k: (v if _all_zero(kwtans.get(k)) else _dualize(v, kwtans[k], tag, made)) for k, v in kw.items()}
    try:
        y = _run(f, *dargs, **dkw)
    except TypeError as e:  # a DualConversionError, or the callable's own words ("cannot create mpf from Dual")
        import overdub
        if overdub.is_recursable(f) or isinstance(e, OverdubError) and not isinstance(e, DualConversionError):
            raise
        from .arrays import no_rule  # a C callable (or a class) with no frule met a dual
        frame = sys._getframe(1)
        while frame.f_back is not None and frame.f_code.co_filename == __file__:
            frame = frame.f_back
        raise no_rule(f, where=f"{frame.f_code.co_filename}:{frame.f_lineno}") from e
    if any(not _same_items(c, items) for c, items in made):
        raise NotTransformable("a call changed a container holding active values in place")
    if not all(_dual_free(a) for a, t in zip(args, tans) if _all_zero(t)) or not _dual_free(
            getattr(f, "__self__", None)) or not all(_dual_free(v) for k, v in kw.items()
                                                     if _all_zero(kwtans.get(k))):
        raise NotTransformable("a call stored active values into an argument")
    if not _splittable(y):
        raise NotTransformable(f"a call returned a {type(y).__name__} that may hold active values")
    moved = tuple(_changed_tangent(d, t) for d, t in zip(dargs, tans))
    # (a result holding no dual has tangent zero: a module, a function, a shape)
    out = _primal_out(y, tag), (0 if _dual_free(y) else _nz(_tangent_out(y, tag)))
    _MOVED.args = moved if any(m is not None for m in moved) else None
    return out


def uncached(f):
    """f without its functools.lru_cache / cache wrapper: a perturbed call must never be served the value
    cached for its primal (a dual hashes and compares as its primal does)."""
    while True:
        if isinstance(f, functools._lru_cache_wrapper):
            f = f.__wrapped__
        elif type(f) is types.MethodType and isinstance(f.__func__, functools._lru_cache_wrapper):
            f = types.MethodType(f.__func__.__wrapped__, f.__self__)
        else:
            return f


def _dualize(a, t, tag, made: list):
    """a perturbed by tangent t as duals: a plain list, tuple or dict of values becomes a new one of duals
    (remembered in `made`, to check that the call left it alone); any other value one dual."""
    from .dual import Dual
    if type(a) is list or type(a) is tuple:
        if (type(t) is list or type(t) is tuple) and len(t) == len(a):
            items = [_dualize(v, tv, tag, made) if not _all_zero(tv) else v for v, tv in zip(a, t)]
            out = type(a)(items)
            made.append((out, items))
            return out
    elif type(a) is dict:
        if type(t) is dict:
            out = {k: (_dualize(v, t[k], tag, made) if not _all_zero(t.get(k)) else v) for k, v in a.items()}
            made.append((out, list(out.values())))
            return out
    return Dual(a, _fresh(t), tag)


def _same_items(c, items) -> bool:
    return len(c) == len(items) and all(u is v for u, v in zip(c.values() if type(c) is dict else c, items))


_LEAVES = (int, float, complex, bool, str, bytes, bytearray, memoryview, type(None), np.generic,
           types.ModuleType, type, types.BuiltinFunctionType, np.dtype, range, slice, type(Ellipsis),
           type(NotImplemented))
# where the C objects of the standard library that hold Python values but show none of them live
_OPAQUE_MODULES = frozenset({"builtins", "itertools", "_collections", "_operator", "operator", "_functools"})


def _dual_free(v, seen=None, budget=None) -> bool:
    """v certainly holds no dual: walked through containers, objects' fields, closures and partials;
    iterators, generators and the like of the standard library (which may hold anything) are not."""
    if type(v) is float:  # the common answer, before the import below
        return True
    from .dual import Dual
    if isinstance(v, _LEAVES) and type(v) is not Dual:
        return True
    if type(v) is Dual:
        return False
    if seen is None:
        seen, budget = set(), [100000]
    if id(v) in seen:
        return True
    seen.add(id(v))
    budget[0] -= 1
    if budget[0] < 0:
        return False  # too big to tell
    if type(v) is np.ndarray:
        return v.dtype != object or all(_dual_free(e, seen, budget) for e in v.flat)
    parts: list = []
    if isinstance(v, (list, tuple, set, frozenset)):
        parts.extend(v)
    elif isinstance(v, dict):
        parts.extend(v.values())
        parts.extend(v.keys())
    elif type(v) is types.FunctionType:
        parts.extend(c.cell_contents for c in v.__closure__ or () if _has_contents(c))
        parts.extend(v.__defaults__ or ())
        parts.extend((v.__kwdefaults__ or {}).values())
        return all(_dual_free(p, seen, budget) for p in parts)
    elif type(v) is types.MethodType:
        parts += [v.__self__, v.__func__]
    elif isinstance(v, functools.partial):
        parts += [v.func, *v.args, *v.keywords.values()]
    elif isinstance(v, collections.deque):
        parts.extend(v)
    elif isinstance(v, BaseException):
        parts.extend(v.args)
    elif (type(v).__module__ in _OPAQUE_MODULES and type(v) is not object) or isinstance(
            v, (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)):
        return False  # an iterator, a generator, map(...), itemgetter(...): may hold anything
    try:
        d = getattr(v, "__dict__", None)
        if type(d) is dict:
            parts.extend(d.values())
        for cls in type(v).__mro__:
            slots = cls.__dict__.get("__slots__", ())
            for name in (slots,) if isinstance(slots, str) else slots:
                if hasattr(v, name):
                    parts.append(getattr(v, name))
    except Exception:  # an object whose fields cannot be read plainly: it may hold anything
        return False
    return all(_dual_free(p, seen, budget) for p in parts)


def _has_contents(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _splittable(y) -> bool:
    """Output y's duals can all be taken apart into primal and tangent (`api._primal_out`): they sit in
    plain lists, tuples and dicts, nowhere else."""
    from .dual import Dual
    if type(y) is Dual:
        return True
    if type(y) is list or type(y) is tuple:
        return all(_splittable(e) for e in y)
    if type(y) is dict:
        return all(_splittable(e) for e in y.values()) and all(_dual_free(k) for k in y)
    return _dual_free(y)


def _all_zero(t) -> bool:
    """A zero tangent, also a list or tuple of them (a constant `[0, 2]` has one of zeros)."""
    return _zero(t) or (type(t) is list or type(t) is tuple) and all(_all_zero(e) for e in t)


def _fresh(t):
    return t.copy() if type(t) is np.ndarray else t


def _changed_tangent(d, t):
    """The tangent of a dual argument after the call, where the call changed it (None where not)."""
    from .dual import Dual
    if type(d) is not Dual or type(d.tangent) is not np.ndarray:
        return None
    if type(t) is np.ndarray:
        return None if np.array_equal(d.tangent, t) else d.tangent
    return d.tangent if d.tangent.any() else None


def fd_out(out, y, ty, tout, where):
    """The tangent of array `out` after a call wrote its result y (numpy returns out itself) into it:
    y's tangent where written, out's old tangent elsewhere."""
    if y is not out or type(out) is not np.ndarray:
        return tout
    if where is True:
        return ty
    if _zero(ty) and _zero(tout):
        return 0
    kind = np.result_type(out.dtype, float)
    return np.where(where, np.zeros(out.shape, kind) if _zero(ty) else ty,
                    np.zeros(out.shape, kind) if _zero(tout) else tout)


def fd_getitem(t, idx):
    if _zero(t):
        return 0
    return t.get(idx, 0) if type(t) is dict else t[idx]  # a dict's tangent holds its active items only


def fd_attr(t, attr):
    return 0 if _zero(t) else getattr(t, attr)


_NONDIFF_ATTRIBUTES = frozenset({"shape", "ndim", "size", "dtype", "itemsize", "nbytes", "strides"})


def fd_setitem(y, ty, idx, tv, v=None):
    """The tangent of container y after `y[idx] = v`: ty with tv at idx, as a new array, list or dict."""
    if type(y) is not np.ndarray and type(y) is not list and isinstance(idx, (float, complex, np.inexact)):
        raise NotTransformable("a number as a key")  # perturbed maybe: duals carry it in the key
    if _zero(ty) and _zero(tv):
        return 0
    if type(y) is np.ndarray:
        kind = np.result_type(y.dtype, getattr(tv, "dtype", float), float)
        new = np.zeros(y.shape, kind) if _zero(ty) else np.array(np.broadcast_to(ty, y.shape), dtype=kind)
        new[idx] = 0 if _zero(tv) else tv
        return new
    if type(y) is list:
        new = [0] * len(y) if _zero(ty) else list(ty)
        if isinstance(idx, slice):  # (the slice may take more or fewer items than it replaces)
            if not hasattr(v, "__len__"):
                raise NotTransformable("a slice of a list assigned from an iterator")
            tv = [0] * len(v) if _zero(tv) else list(tv)
        new[idx] = tv
        return new
    if type(y) is dict:
        new = {} if _zero(ty) else dict(ty)
        new[idx] = tv
        return new
    raise NotTransformable(f"storing into a {type(y).__name__}")


def fd_sync(x, tx, members, tans):
    """After an in-place change of x (tangent tx): the tangents of `members` (values that may share x's
    memory) made to agree with tx: where a member is x itself or holds it (a list, tuple or dict, also
    nested), and, for an array x, where a member array shares elements with it."""
    if type(x) is not np.ndarray and type(x) is not list and type(x) is not dict:
        return tans
    out = list(tans)
    for j, m in enumerate(members):
        if m is x:
            out[j] = tx
        elif type(m) is list or type(m) is tuple or type(m) is dict:
            out[j] = _sync_container(x, tx, m, out[j], set())
        elif (type(x) is np.ndarray and type(m) is np.ndarray and (x.base is not None or m.base is not None)
              and np.may_share_memory(x, m)):
            addr_x, addr_m = addresses(x), addresses(m)
            shared = np.isin(addr_m, addr_x)
            if not shared.any():
                continue
            kind = np.result_type(m.dtype, float)
            tm = out[j]
            new = np.zeros(m.shape, kind) if _zero(tm) else np.array(np.broadcast_to(tm, m.shape), dtype=kind)
            order = np.argsort(addr_x, axis=None)
            pos = order[np.searchsorted(addr_x.reshape(-1)[order], addr_m[shared])]
            src = np.zeros(x.size, kind) if _zero(tx) else np.broadcast_to(tx, x.shape).reshape(-1)
            new[shared] = src[pos]
            out[j] = new
    return tuple(out)


def _sync_container(x, tx, m, tm, seen: set):
    """The tangent of a list, tuple or dict m after an in-place change of x (tangent tx): its items that
    are x, hold it, or (arrays) share memory with it get tangents that agree with tx (a new container
    where any does)."""
    if id(m) in seen:
        return tm
    seen.add(id(m))
    keys = list(m) if type(m) is dict else range(len(m))
    new = None
    for k in keys:
        item = m[k]
        if type(item) is not np.ndarray and type(item) not in (list, tuple, dict):
            continue
        old = 0 if _zero(tm) else (tm.get(k, 0) if type(tm) is dict else tm[k])
        if item is x:
            t = tx
        elif type(item) is np.ndarray:
            (t,) = fd_sync(x, tx, (item,), (old,))
        else:
            t = _sync_container(x, tx, item, old, seen)
        if t is not old:
            if new is None:
                new = (dict(tm) if type(tm) is dict else list(tm)) if not _zero(tm) else (
                    {} if type(m) is dict else [0] * len(m))
            new[k] = t
    if new is None:
        return tm
    return tuple(new) if type(m) is tuple else new


def fd_bound(scope, names, tangent_names):
    """`fd_sync`'s members and tangents from a frame's locals, None and 0 for those not bound yet."""
    return tuple(scope.get(n) for n in names), tuple(scope.get(t, 0) for t in tangent_names)


def fd_cat(a, b, ta, tb):
    """The tangent of a + b where the tangents' types differ or one is a zero: for lists and tuples (or a
    tuple made into a list's tail) the tangents concatenated, zeros standing for a zero tangent's items."""
    if type(a) in (list, tuple) and type(b) in (list, tuple):
        pa = [0] * len(a) if _all_zero(ta) else list(ta)
        pb = [0] * len(b) if _all_zero(tb) else list(tb)
        return type(a + b)(pa + pb)
    if _zero(ta):  # a + b has b's tangent, in the shape of the sum (a scalar's, over an array a)
        return fd_bc(tb, a)
    if _zero(tb):
        return fd_bc(ta, b)
    return ta + tb


def fd_pow(a, b, ta, tb):
    """The tangent of a ** b."""
    from ..rules.operator import pow_dn, pow_dx
    out = 0
    if not _zero(ta):
        out = ta * pow_dx(a, b)
    if not _zero(tb):
        out = out + tb * pow_dn(a, b, a ** b)
    return out


def fd_matmul(a, b, ta, tb):
    out = 0
    if not _zero(ta):
        out = ta @ b
    if not _zero(tb):
        out = out + a @ tb
    return out


def _lowering_helpers():
    from .dual import primal
    return {**LOWERING_HELPERS, "__od_primal__": primal}


_CELLS: dict | None = None


def _cells() -> dict:
    """The helper cells of every tangent twin (made on first use, then published whole: a thread must
    never see the dict half filled)."""
    global _CELLS
    cells = _CELLS
    if cells is None:
        cells = {name: types.CellType(fn) for name, fn in {
            "__fd_cat__": fd_cat, "__fd_list__": list, "__fd_tuple__": tuple,
            "__fd_call__": fd_call, "__fd_mcall__": fd_mcall, "__fd_getitem__": fd_getitem,
            "__fd_attr__": fd_attr, "__fd_pow__": fd_pow, "__fd_matmul__": fd_matmul,
            "__fd_setitem__": fd_setitem, "__fd_sync__": fd_sync, "__fd_bound__": fd_bound,
            "__fd_moved__": _MOVED, "__fd_args_back__": fd_args_back, "__fd_out__": fd_out,
            "__fd_giveup__": NotTransformable, "__fd_star__": fd_star, "__fd_bc__": fd_bc,
            **_lowering_helpers()}.items()}
        _CELLS = cells
    return cells


def _active_params(code, tans: tuple) -> frozenset:
    """The parameters given a nonzero tangent by position: the positional ones, then `*args` for the rest
    (keyword-only parameters are never filled by position)."""
    n = code.co_argcount
    active = {name for name, t in zip(code.co_varnames[:n], tans) if not _zero(t)}
    if len(tans) > n and code.co_flags & inspect.CO_VARARGS and any(not _zero(t) for t in tans[n:]):
        active.add(code.co_varnames[n + code.co_kwonlyargcount])
    return frozenset(active)


def tangent_jvp(f, primals: tuple, tangents: tuple):
    """(f(*primals), its tangent) by the tangent twin; NotTransformable when f is out of its reach."""
    if type(f) is not types.FunctionType:
        raise NotTransformable("not a plain function")
    tans = tuple(0 if t is None else t for t in tangents)
    active = _active_params(f.__code__, tans)
    code = tangent_twin(f, active)
    twin = make_twin(f, code, _cells())
    _depth.enter()
    try:
        return twin(tans, *primals)
    finally:
        _depth.leave()
