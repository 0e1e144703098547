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

This module is the generator (`tangent_twin`: the twin's code for a function and its active parameters,
every generated statement built as a tree by `lowered.build` and placed at the user's line); the helpers
the generated code calls, and `tangent_jvp` that runs a twin, are `tangent_runtime`'s.
"""

from __future__ import annotations

import ast
import builtins
import copy
import functools
import types

import numpy as np

from overdub.errors import SourceUnavailable
from overdub.passes import OwnedEntries, collector, compile_twin, found_elsewhere, get_source, on_clear

from ..lowered.activity import (active_names, ask_primals, cells_callees_may_change, cells_rebound_by_callees, asked as _asked, float_typed, floats_from, fresh_calls, local_names, name_stores, resolved_calls,
                                stored_base, view_groups, view_of, viewed)
from ..lowered.build import (and_, or_, not_, assign, at, attr, attr_store, binop, call, compare, const, dict_, expr_stmt, if_, if_exp,
                             index_value, is_, is_not, item, list_, load, neg, not_none, raise_, return_, slice_,
                             starred, try_except, tuple_, user)
from ..lowered.bisection import bisection_step, refuse_bisection
from ..lowered.inline import inline
from ..lowered.runtime import equality_guards, exit_tests
from ..lowered.lower import Unsupported, all_nodes, lower
from ..rules.operator import DERIVATIVES

__all__ = ["NotTransformable", "tangent_twin"]

class NotTransformable(BaseException):
    """The function uses something the tangent transform does not cover; use duals instead. Raised also
    while a twin runs (a value whose perturbation the twin cannot follow): a BaseException, so that the
    user's `except Exception:` never takes it for one of its own errors."""


def tangent_name(name: str) -> str:
    """The variable holding the tangent of variable `name` in a twin."""
    return "_od_f_" + name


class _Tangents:
    """Rewrites a lowered function's statements into primal-and-tangent statements."""

    def __init__(self, fdef: ast.FunctionDef, fn: types.FunctionType, active: set[str]):
        self.active = active
        # variables that may name an object from outside the call other than a parameter (a global list,
        # a captured dict): a store of an active value into it would leave its tangent behind
        self.outside = _outside(fdef, fn)
        self.unfollowed = _unfollowed(fdef, active)
        # variables whose arrays may share memory
        fresh = fresh_calls(fdef, fn.__globals__, tuple(fn.__code__.co_freevars))
        self.groups = view_groups(fdef, fresh)
        self.drawn = _container_sources(fdef)
        self.elsewhere = _made_elsewhere(fdef, fn, fresh)
        # the parameters whose tangents this function hands its caller before every return (their arrays
        # may change in place), in parameter order, None where not; none at all: nothing handed
        changed, rebound = _changed_in_place(fdef, self.groups)
        params = [a.arg for a in fdef.args.posonlyargs + fdef.args.args]
        # a parameter the function both changes and rebinds by `=` (`if memo is None: memo = {}`, then
        # `memo[n] = r`): its tangent goes back only while the name still holds the caller's object, and
        # the tangent it had when it was rebound away from it otherwise (`_od_in_<p>`, `_od_in_f_<p>`;
        # handed nothing, a memo hit's tangent was lost: forward 2 for 3, 0.36 for 0.66)
        self.guarded = frozenset(p for p in params if p in active and p in rebound)
        self.handed = tuple(p if p in active and (p in changed or p in self.guarded) else None for p in params)
        # inside a try's or with's body: a statement may raise and the code go on after it (a handler,
        # `contextlib.suppress`), so a tangent is assigned only once its value is (`val = table[k]` missing
        # its key gave val the tangent 0 with its old value)
        self.fragile = 0
        self.loops = 0  # (loop nesting: a `return` inside a loop ends it, `lowered.runtime.exit_tests`)
        # the variables holding a float whenever the parameters they come from entered as floats (name -> the
        # variables its bindings read); an operator's test of such an operand's class is answered by the flag
        # `_od_floats` first, set once on entry (`floats_flag`)
        self.floats = float_typed(fdef)
        self.params = [a.arg for a in fdef.args.posonlyargs + fdef.args.args + fdef.args.kwonlyargs]
        self.float_uses: set[str] = set()

    def tangent_var(self, atom) -> str | None:
        """The variable holding an atom's tangent, or None for a zero tangent."""
        return tangent_name(atom.id) if isinstance(atom, ast.Name) and atom.id in self.active else None

    def tangent(self, atom) -> ast.expr:
        """An atom's tangent as an expression: its tangent variable, or 0."""
        var = self.tangent_var(atom)
        return const(0) if var is None else load(var)

    def hand_back(self) -> list[ast.stmt]:
        """`__fd_moved__.args = (<tangents of the parameters changed in place>)`, or nothing."""
        if not any(self.handed):
            return []
        tangents = tuple_(const(None) if p is None else
                          if_exp(compare(p, ast.Is(), _entered(p)), tangent_name(p), _entered(tangent_name(p)))
                          if p in self.guarded else tangent_name(p) for p in self.handed)
        return [assign(attr_store("__fd_moved__", "args"), tangents)]

    def entered(self) -> list[ast.stmt]:
        """The guarded parameters' objects as the caller passed them, and no tangent saved yet."""
        return [s for p in sorted(self.guarded)
                for s in (assign(_entered(p), p), assign(_entered(tangent_name(p)), const(None)))]

    def block(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for s in equality_guards(stmts, lambda atom: self.tangent_var(atom) is not None, self.tangent,
                                 exits=exit_tests(stmts, self.loops > 0)):
            out.extend(self.stmt(s))
        return out or [ast.copy_location(ast.Pass(), stmts[0] if stmts else ast.Pass())]

    def stmt(self, s) -> list[ast.stmt]:
        if isinstance(s, (ast.If, ast.While, ast.For, ast.Try, ast.With, ast.Match)):
            self.compound(s)
            return [s]
        if isinstance(s, ast.Return):
            return at(self.hand_back() + [return_(tuple_([user(s.value), self.tangent(s.value)]))], s)
        if isinstance(s, ast.Assign):
            target = s.targets[0]
            if isinstance(target, ast.Name) and target.id in self.guarded:
                # (rebinding a guarded parameter: the tangent of the caller's object as it leaves the name)
                p = target.id
                save = if_(compare(p, ast.Is(), _entered(p)), [assign(_entered(tangent_name(p)), tangent_name(p))])
                return at([save], s) + self.assignment(s)
            return self.assignment(s)
        if isinstance(s, ast.FunctionDef) and s.name in self.active:
            raise NotTransformable("a closure over active values")
        if isinstance(s, ast.ClassDef) and (s.name in self.active or self.uses_active(s)):
            # (a class made here that active values are stored into, `C.items.append(x)`: no tangent variable
            # of its own; the duals carry its attributes')
            raise NotTransformable("a class whose body or methods use active values")
        if isinstance(s, ast.ClassDef) and self.uses_active(s):
            raise NotTransformable("a class whose body or methods use active values")
        if isinstance(s, ast.Raise) and self.uses_active(s):
            # an exception carries its arguments to a handler (`except E as e: e.args[0]`) without their
            # tangents: when it is raised, the call reruns on duals (which raise it again, perturbed)
            return at([raise_(call("__fd_giveup__", const("an exception made from active values")))], s)
        if isinstance(s, ast.Delete) and any(isinstance(t, ast.Subscript) and self.tangent_var(t.value)
                                             for t in s.targets):
            raise NotTransformable("deleting from an active container")
        if isinstance(s, ast.Delete) and any(isinstance(t, ast.Subscript) and self.uses_active(t.slice)
                                             for t in s.targets):
            # (a class's own `__delitem__` would see the key without its tangent: the duals run it as code)
            raise NotTransformable("deleting by an active key")
        return [s]

    def uses_active(self, node) -> bool:
        return any(isinstance(n, ast.Name) and n.id in self.active for n in all_nodes(node))

    def compound(self, s) -> None:
        """The blocks of a compound statement rewritten in place (after checking what its head binds)."""
        if isinstance(s, ast.For):
            if self.tangent_var(s.iter) is not None:
                raise NotTransformable("a loop over an active sequence")
            if self.uses_active(s.target):
                # the loop variable is rebound to active values or changed in place: its items' tangents
                # would have to come from the sequence's, item by item
                raise NotTransformable("an active loop variable")
        elif isinstance(s, ast.With):
            if any(i.optional_vars is not None and self.uses_active(i.optional_vars) for i in s.items):
                raise NotTransformable("`with ... as` an active value")  # (its tangent: the __enter__'s)
            for i in s.items:  # (a Python `__exit__` swallows no give-up: `fd_managed`)
                i.context_expr = ast.copy_location(call("__fd_managed__", i.context_expr), i.context_expr)
        elif isinstance(s, ast.Match):
            if (self.tangent_var(s.subject) is not None and not getattr(s, "_od_rebound", False)
                    and any(_binds(c.pattern) for c in s.cases)):
                raise NotTransformable("a match pattern binding parts of an active value")
            for c in s.cases:
                c.body = self.block(c.body)
            return
        if isinstance(s, (ast.Try, ast.With)):
            self.fragile += 1
            s.body = self.block(s.body)
            self.fragile -= 1
        elif isinstance(s, (ast.For, ast.While)):
            self.loops += 1
            s.body = self.block(s.body)
            self.loops -= 1
        else:
            s.body = self.block(s.body)
        # (what the body reads: a name it only binds, `v = {}["k"]`, raises nothing active; verify41 REG2)
        active_body = isinstance(s, ast.Try) and any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                                                     and n.id in self.active for b in s.body for n in all_nodes(b))
        for h in getattr(s, "handlers", ()):
            # (a refusal is not the code's to catch: `overdub.errors.not_swallowed`)
            body = self.block(h.body)
            if active_body and h.name and any(isinstance(n, ast.Name) and n.id == h.name for b in h.body
                                              for n in all_nodes(b)):
                # the exception caught may carry active values without their tangents (`d[x]`'s KeyError(x):
                # `e.args[0]` had the tangent 0, gen21 W6): read, the call reruns on duals
                body = at([raise_(call("__fd_giveup__", const("an exception caught from active values")))], h)
            h.body = at([expr_stmt(call("__od_not_swallowed__"))], h) + body
        if getattr(s, "orelse", None):
            s.orelse = self.block(s.orelse)
        if getattr(s, "finalbody", None):
            s.finalbody = self.block(s.finalbody)

    def assignment(self, s: ast.Assign) -> list[ast.stmt]:
        target, v = s.targets[0], s.value
        if not isinstance(target, ast.Name):
            return self.store_into(s, target, v)
        name = target.id
        if name not in self.active:
            if isinstance(v, ast.Call) and getattr(v, "_od_stairs", False) and (
                    t := self.tangent_of(_asked(v.args[0]))) is not None:
                # `key = round(t, 10)`: refused on a step far finer than t where t moves (`stairs_fd`)
                kw = dict_((const(k.arg) for k in v.keywords if k.arg),
                           (user(copy.deepcopy(k.value)) for k in v.keywords if k.arg))
                # (its value marked where it is: a rounded array or number stands for the values in tests only,
                # `StaircasedArray`)
                s.value = call("__od_stairs_fd__", ast.Name(v.func.id, ast.Load()), tuple_(copy.deepcopy(v.args)), t,
                               kw, v)
                return [s]
            if isinstance(v, ast.BinOp) and getattr(v, "_od_stairs", False):
                fn = attr("__od_operator__", "floordiv" if isinstance(v.op, ast.FloorDiv) else "mod")
                checks = []
                if (t := self.tangent_of(v.left)) is not None:  # (`q = t // 1e-12`)
                    checks.append(call("__od_stairs_fd__", fn, tuple_(copy.deepcopy([user(v.left), user(v.right)])), t))
                if (t := self.tangent_of(v.right)) is not None:  # (`q = 9.0 // b`: its jump where b moves)
                    checks.append(call("__od_divisor_jump__", copy.deepcopy(fn), user(copy.deepcopy(v.left)),
                                       user(copy.deepcopy(v.right)), t))
                if checks:
                    return at([expr_stmt(c) for c in checks], s) + [s]
            return [_in_place(s) if getattr(v, "_od_inplace", False) else s]
        if isinstance(v, ast.Subscript) and self.uses_active(v.slice):
            return self.subscript_with_tangent(s, name, v)
        if getattr(v, "_od_inplace", False) and isinstance(v, ast.BinOp) and isinstance(v.op, ast.FloorDiv):
            # (its tangent is 0 everywhere, which the views' tangents cannot take from a scalar 0 here:
            # `w = z; w //= c` left z's tangent as it was; the duals overwrite both in place)
            raise NotTransformable("an in-place //= of an active value")
        tangent = self.tangent_of(v)
        if tangent is None:  # the statement computes its own tangent (a call)
            return self.call_with_tangent(s, name, v)
        tangent_stmt = at([assign(tangent_name(name), tangent)], s)
        if getattr(v, "_od_inplace", False):
            # `x op= y` is Python's in-place operator (an array changes in place, so its views and the
            # caller see it; a number is rebound), and the variables viewing x follow its tangent. An array
            # drawn from a list, tuple, dict or object (`p = arrs[0]`, `for p in params: p -= lr * g`): the
            # container's tangent holds the array's, which the new one would not reach (gen19 W9): duals
            if name in self.outside:  # (a global's or captured array, `b = cfg.BUF; b += y`: its tangent
                raise NotTransformable(f"an in-place operator on {name}, a global or captured object")  # is lost)
            return self.drawn_check(name, s) + tangent_stmt + [_in_place(s)] + self.sync(name, s)
        if self.fragile:
            if name in {n.id for n in all_nodes(tangent) if isinstance(n, ast.Name)} | _names(v):
                new = "_od_fnew"  # (the tangent reads the old value: computed first, assigned after)
                return at([assign(new, tangent), s, assign(tangent_name(name), load(new))], s)
            return [s] + tangent_stmt
        return tangent_stmt + [s]

    def subscript_with_tangent(self, s, name: str, v: ast.Subscript) -> list[ast.stmt]:
        """`name = obj[idx]` with an active index: `__fd_subscript__` differentiates a class's own
        `__getitem__` in the index too (an array's index only selects)."""
        idx = v.slice
        if isinstance(idx, ast.Name):
            tidx = self.tangent(idx)
        elif isinstance(idx, ast.Tuple) and all(isinstance(e, (ast.Name, ast.Constant)) for e in idx.elts):
            tidx = tuple_(self.tangent(e) for e in idx.elts)
        elif isinstance(idx, ast.Slice) and all(p is None or isinstance(p, (ast.Name, ast.Constant))
                                                for p in (idx.lower, idx.upper, idx.step)):
            # (`wt[1:n]` of an n the analysis takes for active, oceans' `numwt += 1`: a slice's bounds select,
            # as an index does; one carrying a tangent at run time gives the call to the duals)
            tidx = call("__fd_slice_tangent__", *(const(0) if p is None else self.tangent(p)
                                                  for p in (idx.lower, idx.upper, idx.step)))
        else:
            raise NotTransformable("an active value in a slice")
        value = call("__fd_subscript__", user(v.value), index_value(idx), self.tangent(v.value), tidx)
        return at([assign((name, tangent_name(name)), value)], s)

    def store_into(self, s: ast.Assign, target, v) -> list[ast.stmt]:
        """`y[i] = v`: y's tangent gets v's at i (a new tangent: another variable's may be y's); a store
        of an active value into an object's attribute, or into a global or captured object, is refused."""
        # an active key (checked when the store runs: a dict's keys have no tangent; an index has none)
        key = isinstance(target, ast.Subscript) and self.uses_active(target.slice)
        if self.tangent_var(target.value) is None and self.tangent_var(v) is None and not key:
            return [s]
        if isinstance(target.value, ast.Name) and target.value.id in self.outside:
            raise NotTransformable(f"storing into {target.value.id}, a global or captured object")
        if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)):
            raise NotTransformable("storing into an active object")
        y = target.value.id
        if y in self.elsewhere:
            # an array, list or dict some object holds (`a = o.arr(); a[0] = x`): a later read through that
            # object (`reader(o)`, networkx's `to_numpy_array(G)`) sees no tangent here (0 came out); duals
            # carry it with the value
            raise NotTransformable(f"storing into {y}, an object a call or attribute gave")
        new_tangent = call("__fd_setitem__", y, self.tangent(target.value), index_value(target.slice),
                           self.tangent(v), user(v))
        check = self.drawn_check(y, s)  # (an array drawn from a container: as for `p op= v`, gen19 W9a)
        if self.fragile:  # (a store that may raise, `y[k] = v` past the end: the tangent after it, as above)
            return check + at([assign("_od_fnew", new_tangent), s, assign(tangent_name(y), load("_od_fnew"))],
                              s) + self.sync(y, s)
        return check + at([assign(tangent_name(y), new_tangent)], s) + [s] + self.sync(y, s)

    def drawn_check(self, name: str, s) -> list[ast.stmt]:
        """Before an in-place change of name's array: `__fd_drawn_check__` where it may be an item of a
        container (`self.drawn`), whose tangent would not see the change (the twin gives up there)."""
        sources = self.drawn.get(name)
        if not sources:
            return []
        check = expr_stmt(call("__fd_drawn_check__", name, tuple_(sorted(sources))))
        return at([try_except([check], "NameError", [ast.Pass()])], s)

    def sync(self, name: str, s, held: bool = False) -> list[ast.stmt]:
        """After an in-place change of the array in `name`: the variables that may view its memory (their
        static group) get tangents that agree with its new one where they share elements (checked at
        run time; nothing happens for arrays that are not views of each other)."""
        members = sorted(m for m in self.groups.get(name, ()) if m != name and m in self.active)
        if not members:
            return []
        tangents = [tangent_name(m) for m in members]
        # (`held`: x's items may have changed in place too, a callee's `d['x'] *= v`: the members x holds follow)
        extra = [const(True)] if held else []
        in_scope = call("__fd_sync__", name, tangent_name(name), tuple_(members), tuple_(tangents), *extra)
        # (a member not bound yet: the frame's locals give None and 0 for it)
        bound = call("__fd_bound__", call("__od_locals__"), const(tuple(members)), const(tuple(tangents)))
        from_locals = call("__fd_sync__", name, tangent_name(name), starred(bound), *extra)
        return at([try_except([assign(tangents, in_scope)], "NameError", [assign(tangents, from_locals)])], s)

    def tangent_of(self, v) -> ast.expr | None:
        """The tangent of the value v of an assignment, or None for a call (which computes its own)."""
        if isinstance(v, (ast.Name, ast.Constant)):
            return self.tangent(v)
        if isinstance(v, ast.UnaryOp):
            if isinstance(v.op, ast.USub):
                var = self.tangent_var(v.operand)
                return neg(var) if var else const(0)
            return self.tangent(v.operand) if isinstance(v.op, ast.UAdd) else const(0)
        if isinstance(v, ast.BinOp):
            return self.operator_tangent(v)
        if isinstance(v, ast.Call):
            return None
        if isinstance(v, ast.Subscript):
            var = self.tangent_var(v.value)
            return call("__fd_getitem__", var, index_value(v.slice), user(v.value)) if var else const(0)
        if isinstance(v, (ast.Tuple, ast.List)):
            if any(isinstance(e, ast.Starred) for e in v.elts):
                raise NotTransformable("a starred element")
            items = [self.tangent(e) for e in v.elts]
            if items and all(isinstance(t, ast.Constant) and t.value == 0 for t in items) and any(
                    isinstance(e, ast.Name) for e in v.elts):
                # (no item moves: the display's tangent is 0 itself. As a list of its items' zeros it took the
                # shape of its items' count alone: `[[1.0], [2.0]]` gave [0, 0], which `a * [0, 0]` broadcast
                # against a (2, 1) array into (2, 2) -- a sum of it counted each entry twice)
                return const(0)
            return (tuple_ if isinstance(v, ast.Tuple) else list_)(items)
        if isinstance(v, ast.Dict):
            if any(k is None for k in v.keys):
                raise NotTransformable("a dict display unpacking another")
            if any(self.tangent_var(k) is not None for k in v.keys):
                raise NotTransformable("an active value as a key")
            return dict_((user(k) for k in v.keys), (self.tangent(e) for e in v.values))
        if isinstance(v, ast.Attribute):
            return self.attribute_tangent(v)
        if isinstance(v, (ast.Compare, ast.JoinedStr)):
            return const(0)
        raise NotTransformable(f"a {type(v).__name__} on active values")

    def attribute_tangent(self, v: ast.Attribute) -> ast.expr:
        var = self.tangent_var(v.value)
        if var is None:
            return const(0)
        if v.attr in _NONDIFF_ATTRIBUTES:  # (0, unless an object of a class of its own, `a * obj`, made it:
            return call("__fd_attr0__", var)  # its `.size` may be a property of its own: refused)
        if v.attr in ("T", "real", "imag"):
            return call("__fd_attr__", var, const(v.attr))
        raise NotTransformable(f"the attribute .{v.attr} of an active value")

    def number_test(self, v, test: ast.expr) -> ast.expr:
        """`test` of operand v's class, answered by `_od_floats` first where v is float-typed (`float_typed`)."""
        if isinstance(v, ast.Name) and v.id in self.floats:
            self.float_uses.add(v.id)
            return or_(load("_od_floats"), test)
        return test

    def no_sequences(self, a, b) -> ast.expr:
        """Neither operand is a list or tuple (of numbers, numpy's operand as an array; a subclass's too), whose
        tangent the inline product or quotient rule would repeat (`0 * (t,)`) or fail to divide."""
        if all(isinstance(v, ast.Name) and v.id in self.floats for v in (a, b)):  # (one test of the flag)
            self.float_uses.update((a.id, b.id))
            return or_(load("_od_floats"), and_(_no_sequence(a), _no_sequence(b)))
        return and_(self.number_test(a, _no_sequence(a)), self.number_test(b, _no_sequence(b)))

    def floats_flag(self) -> list[ast.stmt]:
        """`_od_floats = type(p) is float and ...` of the parameters the float-typed operands tested come from
        (True when they come from float constants alone); nothing when no test asks it."""
        if not self.float_uses:
            return []
        seen = floats_from(self.floats, self.float_uses)
        tests = [is_(call("__od_type__", p), "__od_float__") for p in self.params if p in seen]
        return [assign("_od_floats", and_(*tests) if tests else const(True))]

    def operator_tangent(self, v: ast.BinOp) -> ast.expr:
        """The tangent of `a op b` (a and b atoms), by the operator's rule."""
        a, b = v.left, v.right
        ta, tb = self.tangent_var(a), self.tangent_var(b)
        op = type(v.op)
        if ta is None and tb is None:
            return const(0)
        if op is ast.Add or op is ast.Sub:
            return self.sum_tangent(a, v.op, b, ta, tb)
        if op is ast.Mult:
            if ta and tb:  # numbers and arrays inline; else `fd_mul`, which drops a zero's term: an int tangent
                # (`np.ones(1)`'s zero) times a tuple repeats it, `0 * (t,)` is (), broadcast as an empty array
                # (0 for 2, silently)
                return if_exp(self.no_sequences(a, b), declared_tangent("mul", a, b, ta, tb),
                              call("__fd_mul__", user(a), user(b), load(ta), load(tb)))
            # one tangent, maybe an int (a zero, or an int seed): `[1] * n` repeats a constant list, and the
            # zero of n's tangent must not repeat it 0 times — `fd_mul` sorts that out; floats and arrays
            # pass inline
            t, other = (ta, b) if ta else (tb, a)
            inline = is_not(attr(t, "__class__"), "__od_int__")
            if not isinstance(other, ast.Constant):  # (a duration, `a * td`, is rounded: fd_mul refuses it)
                inline = and_(inline, self.number_test(other, compare(attr(user(other), "__class__"), ast.In(),
                                                                       "__fd_numbers__")))
            return if_exp(inline, declared_tangent("mul", a, b, ta, tb),
                          call("__fd_mul__", user(a), user(b), ta or const(0), tb or const(0)))
        if op is ast.Div:
            if ta and tb:  # (a tuple's tangent over a tuple, `(ta, tb) / (x, y)`: a TypeError; `fd_div` takes them as
                # numpy's arrays)
                return if_exp(self.no_sequences(a, b), declared_tangent("truediv", a, b, ta, tb),
                              call("__fd_div__", user(a), user(b), load(ta), load(tb)))
            other = b if ta else a
            if other is not None and not isinstance(other, ast.Constant):
                # (an object's own `__truediv__`/`__rtruediv__` need not divide; `td / a`, a duration, is
                # rounded: fd_div refuses both, the numbers pass inline; a divisor that is a tuple of numbers,
                # `a / (x, y)`, has a tangent `-(tb / b)` cannot divide)
                number = self.number_test(other, compare(attr(user(other), "__class__"), ast.In(), "__fd_numbers__"))
                if tb:
                    number = and_(number, self.number_test(b, _no_sequence(b)))
                return if_exp(number, declared_tangent("truediv", a, b, ta, tb),
                              call("__fd_div__", user(a), user(b), ta or const(0), tb or const(0)))
            return declared_tangent("truediv", a, b, ta, tb)
        if op is ast.Pow:
            return call("__fd_pow__", user(a), user(b), self.tangent(a), self.tangent(b))
        if op is ast.MatMult:
            return call("__fd_matmul__", user(a), user(b), self.tangent(a), self.tangent(b))
        if op is ast.FloorDiv:  # (0, unless an operand is an object whose own `__floordiv__` is no floor; a
            # fine step and the jumps checked, of a and of b: `fd_floordiv`; `9.0 // b` jumps where b moves)
            return call("__fd_floordiv__", user(a), user(b), self.tangent(a), self.tangent(b))
        if op is ast.Mod:
            return call("__fd_mod__", user(a), user(b), self.tangent(a), self.tangent(b))
        raise NotTransformable(f"the operator {op.__name__} on active values")

    def sum_tangent(self, a, op: ast.Add | ast.Sub, b, ta: str | None, tb: str | None) -> ast.expr:
        """The tangent of `a + b` or `a - b`; a zero tangent on one side: the other's, in the shape of the
        result. Lists and tuples concatenate: a tangent of 0 (a container made by a call) or an inactive
        operand stands for zeros of that operand's length, which __fd_cat__ writes out."""
        sub = isinstance(op, ast.Sub)
        if ta and tb:
            return if_exp(_same_class(ta, tb), binop(ta, op, tb),
                          call("__fd_sub__" if sub else "__fd_cat__", user(a), user(b), ta, tb))
        if sub:
            return call("__fd_bc__", ta, user(b)) if ta else call("__fd_sub__", user(a), user(b), const(0), tb)
        other, t = (b, ta) if ta else (a, tb)
        if isinstance(other, ast.Constant):
            return load(t)
        not_sequence = and_(is_not(attr(user(other), "__class__"), "__fd_list__"),
                            is_not(attr(user(other), "__class__"), "__fd_tuple__"))
        return if_exp(not_sequence, call("__fd_bc__", t, user(other)),
                      call("__fd_cat__", user(a), user(b), self.tangent(a), self.tangent(b)))

    def call_with_tangent(self, s, name, v: ast.Call) -> list[ast.stmt]:
        """`name, tangent = __fd_call__(f, args, tangents, kw, kw tangents)` (`__fd_mcall__` for a method),
        then the tangents of the arguments the callee changed in place."""
        if any(k.arg is None for k in v.keywords):
            raise NotTransformable("a call with **")
        if (isinstance(v.func, ast.Name) and v.func.id in ("getattr", "vars") and v.args
                and self.tangent_var(v.args[0]) is not None and not (
                    len(v.args) > 1 and isinstance(v.args[1], ast.Constant) and v.args[1].value in _NONDIFF_ATTRIBUTES)):
            # `getattr(o, "d")`, `vars(o)` of an object holding active values, as `o.d` (an attribute's
            # tangent is the duals'; here the dict read back had none: 0 came out, networkx's edge data)
            raise NotTransformable(f"{v.func.id}() of an active value")
        # `f(x, *rest)`: rest, made a tuple once, passes its items' tangents (zeros when inactive)
        stars = {id(a): f"_od_s_{name}_{i}" for i, a in enumerate(v.args) if isinstance(a, ast.Starred)}
        spread = [assign(stars[id(a)], call("__fd_tuple__", user(a.value))) for a in v.args if id(a) in stars]
        args = tuple_(starred(stars[id(a)]) if id(a) in stars else user(a) for a in v.args)
        tangents = tuple_(starred(call("__fd_star__", stars[id(a)], self.tangent(a.value))) if id(a) in stars
                          else self.tangent(a) for a in v.args)
        kw = dict_((const(k.arg) for k in v.keywords), (user(k.value) for k in v.keywords))
        kw_tangents = dict_((const(k.arg) for k in v.keywords), (self.tangent(k.value) for k in v.keywords))
        if isinstance(v.func, ast.Attribute):
            obj = v.func.value
            value = call("__fd_mcall__", user(obj), const(v.func.attr), self.tangent(obj), args, tangents, kw,
                         kw_tangents)
        else:
            value = call("__fd_call__", user(v.func), args, tangents, kw, kw_tangents)
            if self.tangent_var(v.func) is not None:
                # a callee that carries a derivative (`(a * Pot())(0.9)`: an object a differentiated number
                # made, by its __rmul__): the call's tangent would leave out the callee's; the duals carry it
                spread.insert(0, expr_stmt(call("__fd_callee__", self.tangent(v.func))))
        # `m.append(x)` changes m's tangent list in place (`_list_method`); the variables that may name the
        # same list follow (`m, n = h, 1` gives m a tangent list of its own: h's new item had tangent 0)
        grown = (self.sync(v.func.value.id, s) if isinstance(v.func, ast.Attribute) and isinstance(v.func.value, ast.Name)
                 and v.func.attr in LIST_MUTATORS and self.tangent_var(v.func.value) is not None else [])
        return (at(spread + [assign((name, tangent_name(name)), value)], s) + grown + self.taken_back(v, s)
                + self.written_out(v, name, s))

    def written_out(self, v: ast.Call, name: str, s) -> list[ast.stmt]:
        """After `f(..., out=o)`: o's tangent is the result's where f wrote (all of o, or its `where=`),
        and the variables viewing o follow."""
        out = next((k.value for k in v.keywords if k.arg == "out"), None)
        if not isinstance(out, ast.Name) or out.id not in self.active or name not in self.active:
            return []
        where = next((user(k.value) for k in v.keywords if k.arg == "where"), const(True))
        o = out.id
        new_tangent = call("__fd_out__", o, name, tangent_name(name), tangent_name(o), where)
        return at([assign(tangent_name(o), new_tangent)], s) + self.sync(o, s)

    def taken_back(self, v: ast.Call, s) -> list[ast.stmt]:
        """After a call: the tangents of array arguments the callee changed in place (`fill_(z[1:3], x)`),
        handed back by its tangent twin, replace the caller's, and the variables viewing them follow. A
        tangent handed back for an argument the caller does not follow (a global list, a keyword
        argument) raises NotTransformable: the change would be lost."""
        if not any(self.tangent_var(a.value if isinstance(a, ast.Starred) else a)
                   for a in v.args + [k.value for k in v.keywords]):
            return []  # (no active argument: the callee had nothing to hand back)
        # (what a `*spread` passes is not followed: a change the callee hands back for it is refused below,
        # never left for the next call to read as its own)
        before_star = next((i for i, a in enumerate(v.args) if isinstance(a, ast.Starred)), len(v.args))
        followed = [(i, a.id) for i, a in enumerate(v.args[:before_star]) if isinstance(a, ast.Name)
                    and a.id in self.active and a.id not in self.outside and a.id not in self.unfollowed]
        take = assign("_od_mv", call("__fd_args_back__", tuple_(const(i) for i, _ in followed),
                                     tuple_(a for _, a in followed)))
        replace = [if_(not_none(item("_od_mv", k)), [assign(tangent_name(a), item("_od_mv", k))] + self.sync(a, s, held=True))
                   for k, (_, a) in enumerate(followed)]
        return at([if_(not_none(attr("__fd_moved__", "args")), [take] + replace)], s)


LIST_MUTATORS = frozenset({"append", "extend", "insert", "pop"})  # (what tangent_runtime's `_list_method` follows)


def _no_sequence(v) -> ast.expr:
    """`v.__class__ in __fd_numbers__ or not isinstance(v, (list, tuple))` (a number asked first, once)."""
    return or_(compare(attr(user(v), "__class__"), ast.In(), "__fd_numbers__"),
               not_(call("__fd_isinstance__", user(v), "__fd_sequences__")))


def _same_class(ta: str, tb: str) -> ast.expr:
    """`ta.__class__ is tb.__class__`: two tangents of one kind (adding lists concatenates them)."""
    return is_(attr(ta, "__class__"), attr(tb, "__class__"))


def declared_tangent(name: str, a, b, ta: str | None, tb: str | None) -> ast.expr:
    """`da(ta) + db(tb)` of the operator's derivatives declared once (`contexts.rules.operator.DERIVATIVES`),
    inlined without their zero terms (the product rule, the quotient rule); the result y, which the
    quotient's uses, as the expression `a / b` (the tangent is computed before the statement stores it)."""
    da, db = DERIVATIVES[name]
    y = binop(user(a), ast.Div(), user(b)) if name == "truediv" else const(None)
    terms = [inline(d, t=t, a=user(a), b=user(b), y=y) for d, t in ((da, ta), (db, tb)) if t]
    return terms[0] if len(terms) == 1 else binop(terms[0], ast.Add(), terms[1])


def _container_sources(fdef) -> dict[str, set[str]]:
    """The variables a variable's value may be an item of: `p = arrs[0]` (arrs), `for p, g in zip(params,
    grads)` (params, grads), `p = next(it)` (it)."""
    out: dict[str, set[str]] = {}
    for name, value in name_stores(fdef):
        if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name):
            out.setdefault(name, set()).add(value.value.id)
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "next" \
                and value.args and isinstance(value.args[0], ast.Name):
            out.setdefault(name, set()).add(value.args[0].id)
    for n in all_nodes(fdef):
        if isinstance(n, ast.Assign) and any(isinstance(t, (ast.Tuple, ast.List)) for t in n.targets):
            # (`p, q = arrs`: each an item of arrs)
            reads = {r.id for r in all_nodes(n.value) if isinstance(r, ast.Name) and isinstance(r.ctx, ast.Load)}
            for t in n.targets:
                for e in getattr(t, "elts", ()):
                    if isinstance(e, ast.Name) and reads - {e.id}:
                        out.setdefault(e.id, set()).update(reads - {e.id})
        if isinstance(n, ast.For):
            reads = {r.id for r in all_nodes(n.iter) if isinstance(r, ast.Name) and isinstance(r.ctx, ast.Load)}
            targets = [n.target] if isinstance(n.target, ast.Name) else [
                e for e in getattr(n.target, "elts", ()) if isinstance(e, ast.Name)]
            for t in targets:
                if reads - {t.id}:
                    out.setdefault(t.id, set()).update(reads - {t.id})
    aliases = [(name, value.id) for name, value in name_stores(fdef) if isinstance(value, ast.Name)]
    for _ in range(4):  # (and through another name: `_od_t2 = _od_t1[0]; p = _od_t2`)
        for name, other in aliases:
            if other in out and not out[other] - {name} <= out.get(name, set()):
                out.setdefault(name, set()).update(out[other] - {name})
    return out


def _in_place(s: ast.Assign) -> ast.AugAssign:
    """The lowered `x = x op y` marked in place as Python's `x op= y` again: an array changes in place,
    so the variables sharing it (`b = a; b += c` changes a) see it, active or not."""
    return ast.copy_location(ast.AugAssign(target=ast.Name(id=s.targets[0].id, ctx=ast.Store()),
                                           op=s.value.op, value=s.value.right), s)


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


# calls making a new container or array (a store into one stays the function's own)
_CONSTRUCTORS = frozenset({np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like, np.empty_like,
                           np.full_like, np.array, np.copy, np.arange, np.linspace, np.eye, np.identity, np.stack,
                           np.concatenate, np.vstack, np.hstack, np.column_stack, np.tile, np.repeat, list, dict,
                           set, tuple, bytearray, copy.copy, copy.deepcopy})


def _made_elsewhere(fdef, fn, fresh: set) -> set[str]:
    """The local variables some binding of which may be an object from elsewhere that another object holds:
    a call's result (not a constructor's or a fresh one's), an attribute, an item of such a variable."""
    made = set(fresh) | {id(n) for n, callee in resolved_calls(fdef, fn.__globals__, tuple(fn.__code__.co_freevars))
                         if _constructs(callee)}
    bindings: dict[str, list] = {}
    for name, value in name_stores(fdef):
        bindings.setdefault(name, []).append(value)
    out: set[str] = set()

    def elsewhere(value, seen) -> bool:
        if isinstance(value, ast.Call):
            f = value.func
            return id(value) not in made and not (isinstance(f, ast.Attribute) and _fresh_method(f.attr, value))
        if isinstance(value, ast.Attribute):
            return True
        if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name):
            base = value.value.id
            return base not in seen and any(elsewhere(v, seen | {base}) for v in bindings.get(base, ()))
        return False

    for name, values in bindings.items():
        if any(elsewhere(v, {name}) for v in values):
            out.add(name)
    # (and a variable handed to a factory, a function of the module making a closure, whose result is kept: the
    # closure may hold it, `h = make(w); w[0] = x; h(1.0)` read w's value, 0 for 1, verify41 W6)
    # (and a user's class given it, whose object is kept: `h = H(w); w[0] = x; h.val()`, 0 for 1, verify41 W7)
    kept = {id(v) for _, v in name_stores(fdef)}
    for n, callee in resolved_calls(fdef, fn.__globals__, tuple(fn.__code__.co_freevars)):
        if id(n) in kept and (type(callee) is types.FunctionType and any(
                isinstance(c, types.CodeType) for c in callee.__code__.co_consts)
                or isinstance(callee, type) and type(getattr(callee, "__init__", None)) is types.FunctionType):
            out |= {a.id for a in (*n.args, *(k.value for k in n.keywords)) if isinstance(a, ast.Name)}
    return out


def _fresh_method(name: str, call: ast.Call) -> bool:
    """`v.name(...)` returns a new array or list of its own: `.copy()`, `.flatten()`, `.tolist()`, `.astype(t)`
    (a copy unless told `copy=False`: modern_robotics' `Js = np.array(S).copy().astype(float)`, whose columns
    are then written)."""
    if name == "astype":
        return len(call.args) <= 2 and not any(isinstance(a, ast.Starred) for a in call.args) and not any(
            k.arg in ("copy", None) and not (isinstance(k.value, ast.Constant) and k.value.value is True)
            for k in call.keywords)
    return name in ("copy", "flatten", "tolist")


def _constructs(callee) -> bool:
    try:
        return callee in _CONSTRUCTORS
    except TypeError:  # (an unhashable callee)
        return False


def _names(node) -> set[str]:
    return {n.id for n in all_nodes(node) if isinstance(n, ast.Name)}


def _binds(pattern) -> bool:
    """A match pattern binds names (`case [a, b]:`, `case {"k": v}:`, `case P(x=v):`, `case _ as v:`)."""
    return any(isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name is not None
               or isinstance(n, ast.MatchMapping) and n.rest is not None for n in all_nodes(pattern))


@collector.pausing  # (see contexts.ad.runtime._build)
def _build(fn, active):
    fdef, src = _lowered(fn)
    steering: set = set()
    # (values that only steer keep their tangents here: their comparisons' special points are checked by
    # them, for this twin and for reverse mode, which has forward mode tell whether a value moves)
    act = active_names(fdef, set(active), fn.__globals__, steering=steering) | steering
    ask_primals(fdef, act, fn.__globals__, tuple(fn.__code__.co_freevars))
    step = bisection_step(fdef, act | set(active))  # (the inputs: a test may steer a value it does not reach)
    if step is not None:  # (refused, not left to duals: they would differentiate the same bracket)
        raise refuse_bisection(fn, step)
    if cells_rebound_by_callees(fn):
        # (a function it calls rebinds a cell it reads, `nonlocal total`: on duals the cell holds its dual)
        raise NotTransformable("a captured variable a callee rebinds")
    if cells_callees_may_change(src.as_function_def(), fn, fn.__code__.co_freevars, handed=True):
        # a function it calls may store perturbed values into an object it captured (a sibling closure of one
        # factory, `def put(p): st["x"] = p * p`): the twin would read them back without their tangents, and
        # giving up after such a call left duals in the object, read again by the pass on duals (a leaked
        # Dual came out, 5.18 for 4.8); duals carry them
        raise NotTransformable("a captured object a callee may change")
    if any(n in fn.__globals__ for n in act - local_names(fdef)):
        # a module global the module's code changes may hold perturbed values (activity says so): its
        # tangent lives outside this function, where duals carry it
        raise NotTransformable("a changeable module global read")
    tangents = _Tangents(fdef, fn, act)
    body = tangents.block(fdef.body)
    if not (body and isinstance(body[-1], ast.Return)):
        body += at(tangents.hand_back() + [return_(tuple_([const(None), const(0)]))], fdef.body[-1])
    prologue = tangents.floats_flag() + _prologue(fdef.args, act) + tangents.entered()
    fdef.body = at(prologue, fdef) + body if prologue else body
    # (at the def's position, which compile_twin would give it only by compiling twice and walking the tree)
    fdef.args.posonlyargs.insert(0, ast.copy_location(ast.arg(arg="_od_tans"), fdef))
    from .tangent_runtime import HELPER_CELLS  # (the runtime imports this module)
    return compile_twin(src, fdef, extra_freevars=tuple(HELPER_CELLS), opaque=True)


def _lowered(fn):
    """fn's lowered function definition and its source, or NotTransformable."""
    code = fn.__code__
    if str(fn.__globals__.get("__name__", "")).startswith("contexts."):
        # the library's own functions: its derivative calls nest by tags on duals, its rules are primitives
        raise NotTransformable(f"{code.co_qualname} belongs to contexts")
    try:
        try:
            src = get_source(code, fn.__globals__)
        except SourceUnavailable:
            if not found_elsewhere(fn):  # (the text a library made fn of by `exec`: its definition)
                raise
            src = get_source(code, fn.__globals__)
        original = src.as_function_def()
        fdef = lower(original, iterators=True)  # (a generator expression drawn twice: its items once, as in Python)
    except (SourceUnavailable, Unsupported) as e:
        raise NotTransformable(str(e)) from e
    if any(isinstance(n, (ast.Nonlocal, ast.Global)) for n in all_nodes(original)):
        # a value written to a cell or a global (here or by a nested function) leaves this function's
        # variables, and with it its tangent: duals carry their tangents wherever values go
        raise NotTransformable("a nonlocal or global variable written")
    return fdef, src


def _prologue(args: ast.arguments, act: set[str]) -> list[ast.stmt]:
    """The tangents of the active parameters, from the twin's first argument `_od_tans` (the positional
    arguments' tangents; missing ones are zero)."""
    params = [a.arg for a in args.posonlyargs + args.args]
    out = [assign(tangent_name(p), if_exp(compare(call("__od_size__", "_od_tans"), ast.Gt(), const(i)),
                                          item("_od_tans", i), const(0)))
           for i, p in enumerate(params) if p in act]
    star = args.vararg
    if star is not None and star.arg in act:  # `*args`: the tangents of the positional arguments past params
        out.append(assign(tangent_name(star.arg), call("__od_tuple__", item("_od_tans", slice_(const(len(params)))))))
    # keyword arguments reach a twin only unperturbed (fd_call): their tangents start as zero
    return out + [assign(tangent_name(a.arg), const(0)) for a in args.kwonlyargs + [args.kwarg]
                  if a is not None and a.arg in act]


def _outside(fdef, fn) -> frozenset:
    """The variables that may name a mutable object the function did not make nor receive as a parameter:
    globals and captured variables (modules, functions and classes aside), and the locals assigned from
    them (`g = GLOBAL_LIST`, `d = cfg["sub"]`)."""
    local = local_names(fdef)
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    inert = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, np.ufunc, int, float,
             complex, str, bool, type(None), functools.partial)

    def mutable_outside(name: str) -> bool:
        if name in local:
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

    found = {n.id for n in all_nodes(fdef) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
             and mutable_outside(n.id)}
    for name, value in name_stores(fdef):  # (and another module's state, `b = cfg.BUF`: a write through b
        if (isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name)  # into it left its
                and value.value.id not in local  # tangent behind, read as 0 after: np.copyto, `b += y`)
                and type(module := fn.__globals__.get(value.value.id)) is types.ModuleType
                and not isinstance(vars(module).get(value.attr, 0), inert)):
            found.add(name)
    return _spread(fdef, found, lambda v: set() if _fresh_copy(v, fn.__globals__) else viewed(v, strict=True))


def _unfollowed(fdef, act: set[str]) -> frozenset:
    """The variables naming an object that an inactive variable may also reach (`t = cont["k"]` where
    `cont = {"k": loc}` and loc is inactive): a change to it in place by a callee cannot be followed."""
    return _spread(fdef, {name for name, _ in name_stores(fdef)} - act, _held)


def _held(v) -> set[str]:
    """The variables whose objects the value v holds or views (`[a, b]`, `{"k": a}`, `a[1:]`)."""
    if isinstance(v, (ast.List, ast.Tuple)):
        return set().union(*(view_of(e) for e in v.elts))
    if isinstance(v, ast.Dict):
        return set().union(*(view_of(e) for e in v.values))
    return view_of(v)


def _spread(fdef, seeds: set[str], names_of) -> frozenset:
    """seeds, and to a fixpoint every variable assigned a value whose `names_of(value)` meet the set."""
    readers: dict[str, set[str]] = {}  # name -> the variables assigned a value naming it
    for name, value in name_stores(fdef):
        for source in names_of(value):
            readers.setdefault(source, set()).add(name)
    out = set(seeds)
    todo = list(out)
    while todo:  # (a worklist: rounds over every store took time quadratic in a chain's length)
        for name in readers.get(todo.pop(), ()):
            if name not in out:
                out.add(name)
                todo.append(name)
    return frozenset(out)


_COPIES = frozenset({"list", "dict", "tuple", "set", "sorted", "np.array", "numpy.array", "np.copy",
                     "copy.copy", "copy.deepcopy", "deepcopy"})
_COPY_METHODS = frozenset({"copy", "astype", "tolist", "flatten"})


# numpy functions whose result may be (or hold) a view of an argument
_NUMPY_VIEWS = frozenset({"asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "reshape", "ravel",
                          "transpose", "swapaxes", "moveaxis", "rollaxis", "squeeze", "expand_dims", "diagonal",
                          "real", "imag", "broadcast_to", "broadcast_arrays", "atleast_1d", "atleast_2d",
                          "atleast_3d", "split", "array_split", "hsplit", "vsplit", "dsplit", "matrix_transpose",
                          "permute_dims", "flip", "fliplr", "flipud", "rot90", "unstack", "require", "view", "einsum",
                          "sliding_window_view", "as_strided"})


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


def _changed_in_place(fdef, groups: dict[str, set[str]]) -> tuple[set[str], set[str]]:
    """The variables whose arrays the function may change in place and never rebinds: stored into
    (`v[i] = ...`, `v.f = ...`), updated (`v += ...`), or handed to a call that may change them — with the
    variables that may view the same memory; and those it may change and rebinds by `=` only."""
    changed: set[str] = set()
    rebound: set[str] = set()
    other: set[str] = set()  # (rebound otherwise: a loop's target)
    for n in all_nodes(fdef):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name):
                    (changed if getattr(n.value, "_od_inplace", False) else rebound).add(t.id)
                elif stored_base(t) is not None:
                    changed.add(stored_base(t))
        elif isinstance(n, ast.Call):
            changed.update(a.id for a in n.args if isinstance(a, ast.Name))
        elif isinstance(n, (ast.For, ast.AugAssign)) and isinstance(n.target, ast.Name):
            other.add(n.target.id)
    for name in list(changed):
        changed |= groups.get(name, set())
    return changed - rebound - other, (changed & rebound) - other


def _entered(name: str) -> str:
    return f"_od_in_{name}"


_NONDIFF_ATTRIBUTES = frozenset({"shape", "ndim", "size", "dtype", "itemsize", "nbytes", "strides"})
