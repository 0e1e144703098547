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

This module is the generator (`tangent_twin`: the twin's code for a function and its active parameters);
the helpers the generated code calls, and `tangent_jvp` that runs a twin, are `tangent_runtime`'s.
"""

from __future__ import annotations

import ast
import builtins
import functools
import types

import numpy as np

from overdub.errors import SourceUnavailable
from overdub.source import compile_twin, get_source
import overdub.cache
from overdub.weak import OwnedEntries

from ..lowered.activity import active_names, ask_primals, fresh_calls, view_groups, view_of, viewed
from ..lowered.emit import index_arg, parse_at
from ..lowered.lower import Unsupported, lower

__all__ = ["NotTransformable", "tangent_twin"]

# the helpers every twin reads as free variables (bound by tangent_runtime._cells)
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


# (id(code), active parameters) -> the twin's code or the NotTransformable; removed when the code dies
_cache = OwnedEntries()
_cache_map = _cache.data
overdub.cache.on_clear(_cache.clear)


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


_NONDIFF_ATTRIBUTES = frozenset({"shape", "ndim", "size", "dtype", "itemsize", "nbytes", "strides"})
