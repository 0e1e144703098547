"""Code generation: from a lowered function to its recording forward twin and its adjoint.

The forward twin is the lowered function itself with three changes: active calls go through
`__od_call__` (which returns the callee's pullback), active stores into objects go through helpers that
keep what the reverse pass needs to undo them, and each basic block that holds an active operation ends by
appending one record `(block id, saved primal values...)` to the call's tape. Inactive statements run as
plain Python and are never recorded.

The adjoint is one function per code object: it walks the tape backwards and, for each record, runs the
adjoint of that block — straight-line code generated once, with the paper's box rules for variables (a
read accumulates into the variable's cotangent, a store takes it and resets it). Cotangent variables are
named `_od_d_<name>`; `None` is the structural zero. Every generated statement carries the line of the
user's statement it mirrors.
"""

from __future__ import annotations

import ast
import builtins
import re
import types
import collections
import copy
from dataclasses import dataclass, field

import numpy as np

from overdub.ops import HEAPTYPE
from overdub.passes import fix_missing_locations

from ..lowered.activity import (INERT_ATTRIBUTES, active_names, float_typed, floats_from, ask_primals, through_calls, asked as _asked, captured_changes_by_kind as _changed_captures, captured_stores, changed_in_place, closure_hazards, free_names, fresh_calls, stateful_calls,
                                local_names, name_stores, nonlocal_writes, own_statements, resolved_calls, steering_numbers,
                                stored_base, view_groups, view_of, private_containers)
from ..lowered.build import (STORE, Node, and_, assign, at, attr, binop, call, compare, const, dict_, expr_stmt, if_,
                             if_exp, index_value, is_, is_none, is_not, item, list_, load, neg, not_none, or_, starred, store,
                             try_except, tuple_, user)
from ..lowered.inline import inline
from ..lowered.runtime import MUTATOR_NAMES, equality_guards, exit_tests
from ..lowered.bisection import bisection_step, refusal_text
from ..lowered.lower import TEMP_PREFIX, Unsupported, all_nodes, is_generator, own_nodes, param_names
from ..rules.operator import DERIVATIVES
from ..rules.registry import registry

__all__ = ["generate", "Generated", "HELPERS"]

# Helper free variables the generated code uses (filled by contexts.ad.runtime).
HELPERS = ("__od_endless__", "__od_call__", "__od_hot_float__", "__od_acc__", "__od_binop_adj__", "__od_getattr_adj__", "__od_getitem_adj__",
           "__od_getitem_index_adj__",
           "__od_display_adj__", "__od_cell_cot__", "__od_setattr__", "__od_setattr_adj__", "__od_setattr_views__",
           "__od_setattr_merge__",
           "__od_setitem__", "__od_setitem_adj__", "__od_delitem__", "__od_delitem_adj__", "__od_delattr__", "__od_delattr_adj__", "__od_unpack__",
           "__od_enumerate__", "__od_enumerate_views__", "__od_slice_cot__", "__od_iop__", "__od_iop_adj__", "__od_iop_views__", "__od_iter__", "__od_eager__", "__od_eager_raised__",
           "__od_eager_guard__", "__od_iter_guard__", "__od_lazy_stamp__", "__od_lazy_guard__", "__od_eager_inplace__", "__od_eager_items__", "__od_equality_guard__", "__od_own_test__", "__od_compared__", "__od_equality_guard_fd__", "__od_equality_guard2__", "__od_equality_guard2_fd__", "__od_order_watch__",
           "__od_order_watch_fd__", "__od_tuple__",
           "__od_ndarray__", "__od_f8__", "__od_views__", "__od_bound__", "__od_plain_cells__", "__od_views_merge__", "__od_changes__",
           "__od_call_views__", "__od_call_merge__", "__od_spread_changed__", "__od_match_guard__", "__od_dict_parts__",
           "__od_enumerate_at__", "__od_primal__", "__od_instance_of__", "__od_rounded__", "__od_getattr__", "__od_module__", "__od_int_arg__",
           "__od_locals__", "__od_binop__", "__od_unary_adj__", "__od_float64__", "__od_object__", "__od_native_items__", "__od_subscript__", "__od_subscript_adj__", "__od_type__", "__od_held_backs__", "__od_dropped__",
           "__od_viewed__", "__od_bare__", "__od_text__", "__od_text_of__", "__od_text_map__", "__od_text_join__", "__od_printed__", "__od_text_mod__", "__od_inverted__", "__od_fmt__", "__od_parsed__", "__od_guard_cells__", "__od_closure_arrays__", "__od_refused_exit__", "__od_closure_made__",
           "__od_unguard__", "__od_caught__", "__od_key_guard__", "__od_key_lookup__", "__od_number_item__", "__od_state_box__", "__od_inert_read__", "__od_dropped_op__", "__od_converted_store__", "__od_plain_values__", "__od_call_viewed__", "__od_kw_tape__", "__od_kw_spread__", "__od_duration__",
           "__od_loop_item_adj__", "__od_loop_box__", "__od_not_swallowed__", "__od_managed__", "__od_watched__", "__od_entered_as__", "__od_stairs__",
           "__od_stairs_fd__", "__od_divisor_jump__", "__od_operator__", "__od_held__", "__od_live__", "__od_more__", "__od_more_keys__", "__od_keys__",
           "__od_size__", "__od_float__", "__od_int__", "__od_slice__", "__od_reversed__", "__od_getattr_of__", "__od_more_back__", "__od_global_store__", "__od_flat_index__", "__od_global_read__", "__od_state_call__",
           "__od_one_backs__", "__od_pull_one__", "__od_float_back__", "__od_zero_division__")

_OPNAMES = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.FloorDiv: "floordiv",
            ast.Mod: "mod", ast.Pow: "pow", ast.MatMult: "matmul", ast.LShift: "lshift", ast.RShift: "rshift",
            ast.BitOr: "or_", ast.BitXor: "xor", ast.BitAnd: "and_"}


_LOOKUPS = frozenset({"get", "pop", "setdefault"})  # a dict's methods reading the value at a key

# methods whose rules mutate an array argument in place and read its cotangent from the session
_MUTATING_METHODS = frozenset({"at", "copyto", "place", "put", "putmask", "fill_diagonal", "fill", "sort",
                               "partition", "heappush",
                               "heappop", "heapify", "heapreplace", "heappushpop", "shuffle",
                               # (the max-heap helpers of heapq.nsmallest/nlargest: private before 3.14)
                               "_heapify_max", "_heappop_max", "_heapreplace_max", "heapify_max",
                               "heappop_max", "heapreplace_max", "heappush_max", "heappushpop_max",
                               "_heapreplace"})  # (heapq.nsmallest/nlargest's local name for heapreplace)

# methods of list and dict that change their object in place: other variables holding the same object (`q = ps`,
# `self.ps`) have their cotangents merged into the object's before the change is undone (`helpers.views`)
_CONTAINER_MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "reverse", "update",
                                 "setdefault", "popitem", "__setitem__", "__delitem__", "__iadd__"})


_BUILTIN_NAMES = frozenset(dir(builtins))

def _leaves_early(body) -> bool:
    """body may leave otherwise than by its end or a raise (`return`, `break`, `continue`, `yield`), not
    counting nested functions and classes, nor a loop's own `break`/`continue` inside it."""
    stack = [(st, False) for st in body]
    while stack:
        node, in_loop = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom, ast.Await)):
            return True
        if isinstance(node, (ast.Break, ast.Continue)) and not in_loop:
            return True
        loop = in_loop or isinstance(node, (ast.For, ast.While, ast.AsyncFor))
        stack.extend((child, loop) for child in ast.iter_child_nodes(node))
    return False


def _reads_caught(h: ast.ExceptHandler) -> bool:
    """The handler reads the exception it binds (`except E as e: v = e.args[0]`), beyond re-raising it or
    chaining to it (`raise`, `raise e`, `raise X from e`)."""
    passed = {id(r.exc) for r in all_nodes(h) if isinstance(r, ast.Raise)} | {
        id(r.cause) for r in all_nodes(h) if isinstance(r, ast.Raise)}
    return any(isinstance(n, ast.Name) and n.id == h.name and isinstance(n.ctx, ast.Load) and id(n) not in passed
               for n in all_nodes(h))


def d(name: str) -> str:
    return "_od_d_" + name


def _accumulate(dn: str, c: str) -> ast.If:
    """`dn += c` for cotangents: `c` itself into an empty `dn`, a sum inline for two floats, two float64
    scalars or two float64 arrays (what `__od_acc__` returns for them: `a + b`), `__od_acc__` otherwise."""
    floats = or_(and_(is_(call("__od_type__", dn), "__od_float__"), is_(call("__od_type__", c), "__od_float__")),
                 _chain(_IS, [call("__od_type__", dn), load("__od_float64__"), call("__od_type__", c)]),
                 and_(_chain(_IS, [call("__od_type__", dn), load("__od_ndarray__"), call("__od_type__", c)]),
                      _chain(_IS, [attr(dn, "dtype"), load("__od_f8__"), attr(c, "dtype")])))
    return if_(is_none(dn), [assign(dn, c)],
               [if_(floats, [assign(dn, binop(dn, ast.Add(), c))], [assign(dn, call("__od_acc__", dn, c))])])


def _also_bound(s: ast.Assign, alias: str) -> ast.Assign:
    """`name = value` as `name = alias = value`: the new value under a name of its own."""
    bound = ast.Assign(targets=[*s.targets, ast.Name(id=alias, ctx=ast.Store())], value=s.value)
    return ast.copy_location(bound, s)


def _given(cotangent: str, body: list[ast.stmt]) -> ast.If:
    """`if cotangent is not None: body`."""
    return if_(not_none(cotangent), body)


def _strings(names) -> ast.Tuple:
    """A tuple of names as string constants, `('a', 'b')`."""
    return tuple_(const(n) for n in names)


def _session(field_name: str) -> ast.Attribute:
    """`_od_S.<field_name>` as an assignment target (the reverse session's slots for in-place calls)."""
    return ast.Attribute(value=load("_od_S"), attr=field_name, ctx=STORE)


def _offset(offset: int | ast.expr) -> ast.expr:
    """A position among a call's or a display's elements (an int, or `n + len(spread) + ...` after a `*spread`),
    as a new node (the offset itself goes on to build the next one)."""
    return const(offset) if isinstance(offset, int) else copy.deepcopy(offset)


def _after(offset: int | ast.expr, spread: ast.expr | None = None) -> int | ast.expr:
    """The offset after one more element, or after `*spread`."""
    if spread is not None:
        return binop(const(offset) if isinstance(offset, int) else offset, ast.Add(), call("__od_size__", user(spread)))
    return offset + 1 if isinstance(offset, int) else binop(offset, ast.Add(), const(1))


ENTRY = "_od_in_"  # prefix of the parameters' entry copies
# A call's mask says which arguments the caller differentiates: bit i for positional argument i, and
KW_ACTIVE = 1 << 60  # some keyword argument is differentiated (all are then taken to be).
CELLS_CONSTANT = 1 << 61  # the function's captured variables are constants (`gradient(f, ..., wrt=)`).
FRESH_SELF = 1 << 59  # the first argument put before the call's own is an object just made (`__init__`'s).
# Two negative masks are whole policies rather than bits:
EVERY_ARGUMENT = -1  # every argument may carry a derivative, and so may the function itself (its cells)
ARGUMENTS_ONLY = -2  # every argument, but no gradient is wanted for the function (`gradient(f, x)`)


def _changed_array(callee: str, v: ast.Call, out_kw, is_active):
    """The argument a call changes in place (`out=`, `np.add.at(a, ...)`, `a.fill(...)`, `a.put(...)`),
    if any: a method's object when it is a differentiated value, else the first argument."""
    if out_kw is not None:
        return out_kw
    method_of = v.func.value if isinstance(v.func, ast.Attribute) and is_active(v.func.value) else None
    if callee in ("copyto", "place", "putmask", "fill_diagonal"):  # numpy's functions (no ndarray method):
        return v.args[0] if v.args else None  # never `np` (made active by a closure reading it: the merge
        # went to the module, and the array's views kept their cotangents: gradient 1 for 0)
    if callee == "put":  # `a.put(ind, v)`, or `np.put(a, ind, v)` (three arguments)
        return method_of if method_of is not None and len(v.args) < 3 else (v.args[0] if v.args else None)
    if callee == "at" and v.args:
        return v.args[0]
    if callee in ("fill", "sort", "partition") or callee in _CONTAINER_MUTATORS:
        return method_of
    return None


def declared_writes(fdef: ast.FunctionDef, globals_: dict, freevars: tuple = ()) -> dict[int, int]:
    """The calls in fdef (`resolved_calls`) whose callee is an in-place primitive that declares the
    positional argument it overwrites (`Rule.writes`, `scipy.interpolate._ppoly.evaluate(..., out)`):
    call id -> that position."""
    out = {}
    for n, fn in resolved_calls(fdef, globals_, freevars):
        if isinstance(fn, np.ufunc):  # `np.exp(K, K)`: its one output array given by position
            if fn.nout == 1 and len(n.args) == fn.nin + 1 and not any(isinstance(a, ast.Starred) for a in n.args):
                out[id(n)] = fn.nin
            continue
        rule = registry.get(fn)
        if rule is not None and rule.writes is not None:
            out[id(n)] = rule.writes
    return out


@dataclass
class Generated:
    forward: ast.FunctionDef
    adjoint: ast.FunctionDef
    active: set
    params: list
    blocks: dict = field(default_factory=dict)  # block id -> list of adjoint statements (for printing)
    entry: dict = field(default_factory=dict)  # positional parameter index -> its entry copy (active)
    numbers: frozenset = frozenset()  # parameters that must be bound to numbers (`steering_numbers`)
    sequences: frozenset = frozenset()  # parameters that must be bound to lists or tuples of numbers
    storing: frozenset = frozenset()  # the blocks storing into an object (a field, an item, a mutating method)


def _targets(s) -> set[str]:
    return {t.id for t in getattr(s, "targets", []) if isinstance(t, ast.Name)}


def _names_in(node) -> list[str]:
    return [n.id for n in all_nodes(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]


def _stairs_checked(s) -> list:
    """s, after a check of `round(t, 10)` (or int) of an active t whose result the activity takes as
    inactive: a step far finer than t is noted for forward mode to tell (`lowered.runtime.staircase_reverse`)."""
    v = getattr(s, "value", None)
    # (the check's operands are copies: the block renames a variable the statement binds again in place,
    # `x = x % 2.0`, and a shared node read the renamed one before it was set)
    if isinstance(s, ast.Assign) and isinstance(v, ast.Call) and getattr(v, "_od_stairs", False):
        args = [_asked(v.args[0]), *v.args[1:]]  # (the value itself: a dual under `hessian`, whose tangent tells)
        kw = dict_((const(k.arg) for k in v.keywords if k.arg), (copy.deepcopy(k.value) for k in v.keywords if k.arg))
        check = call("__od_stairs__", ast.Name(v.func.id, ast.Load()), tuple_(copy.deepcopy(args)), kw)
        return at([expr_stmt(check)], s) + [s]
    if isinstance(s, ast.Assign) and isinstance(v, ast.BinOp) and getattr(v, "_od_stairs", False):
        fn = attr("__od_operator__", "floordiv" if isinstance(v.op, ast.FloorDiv) else "mod")
        return at([expr_stmt(call("__od_stairs__", fn, tuple_(copy.deepcopy([v.left, v.right]))))], s) + [s]
    if isinstance(s, ast.Assign) and isinstance(v, ast.BinOp) and getattr(v, "_od_text_mod", False):
        # (`fmt % x`, the format held by a variable: where it is text, x's text remembered, its parse refused)
        return at([expr_stmt(call("__od_text_mod__", *copy.deepcopy([v.left, v.right])))], s) + [s]
    return [s]


def _stores(s) -> bool:
    """s stores into an object: a field or item assignment or deletion, or a mutating method's call."""
    for n in ast.walk(s):
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = n.targets if isinstance(n, (ast.Assign, ast.Delete)) else [n.target]
            if any(isinstance(t, (ast.Attribute, ast.Subscript)) for t in targets):
                return True
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in MUTATOR_NAMES:
            return True
    return False


class _AssignedAfter:
    """`name in it`: whether a statement after the `index`-th of its block assigns name."""
    __slots__ = ("last", "index")

    def __init__(self, last: dict[str, int], index: int):
        self.last, self.index = last, index

    def __contains__(self, name) -> bool:
        return self.last.get(name, -1) > self.index


class _Gen:
    def __init__(self, fdef: ast.FunctionDef, active: set[str], params: list[str], fresh: set[int] = frozenset(),
                 observed: bool = False, compact: bool = False, stateful: set[int] = frozenset()):
        self.fdef = fdef
        # the names the function reads: a result none reads is dropped (`obj + x` as a statement)
        self.loaded = {n.id for n in all_nodes(fdef) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        self.steering: frozenset = frozenset()  # (variables that only steer, but depend on the inputs)
        self.constant_stores: frozenset = frozenset()  # (attribute stores of a constant there: `_constant_stores`)
        # compact: no inlined fast paths beside the general rules (`generate`'s compact)
        self.compact = compact
        # observed (`contexts.ad.observe`): active binary operations run through `__od_binop__` and their
        # adjoints through `__od_binop_adj__` (no inlined fast path), so an observer sees each with its line
        self.observed = observed
        self.active = active
        self.params = params
        self.nblocks = 0
        self.storing: set[int] = set()  # (blocks storing into objects: `Generated.storing`)
        self.npb = 0
        # the engine's temporaries read by name where they may not be bound yet (`bound_now`, `view_merge`)
        self.maybe_unbound: set[str] = set()
        self.adjoints: dict[int, list[ast.stmt]] = {}
        self.dvars: set[str] = set()
        self.single_use = _single_use_temps(fdef)
        self.tuple_parts = _tuple_bindings(fdef)
        self.displays = _display_temps(fdef, self.single_use, fresh)
        self.sequences: frozenset = frozenset()  # parameters whose items are taken for numbers (`_number_draws`)
        self.entering: dict = {}  # (`_entering`)
        self._live = None
        self.module_containers: frozenset = frozenset()  # (module lists and dicts among the active variables)
        self.depth = 0  # loop nesting while generating, and per block: blocks in loops are tested first
        # inside a try's or with's body: a statement may raise and the code go on after it (a handler,
        # `contextlib.suppress`), so each statement is a block of its own (a block's record is made at its
        # end: the statements before the raise were lost, `r = r * x` inside an `if` in a try: 0.5 for 2.0)
        self.fragile = 0
        self.exits: dict = {}  # the lowered form's test variables that end a loop (`lowered.runtime.exit_tests`)
        self.depth_of: dict[int, int] = {}
        self._later: set[str] | _AssignedAfter = set()
        self._results: list[str] = []
        # names this function declares `global`: a differentiated value stored there leaves the function's
        # variables, and reverse mode cannot route its cotangent back from where the module reads it
        self.globals_declared: set[str] = set()
        makers: list[ast.AST] = []  # nested definitions and `f = lambda ...` assignments, in the tree's order
        nodes = list(all_nodes(fdef))  # (one walk for what follows)
        for n in nodes:
            if isinstance(n, ast.Global):
                self.globals_declared.update(n.names)
            elif (isinstance(n, ast.FunctionDef) and n is not fdef
                  or isinstance(n, ast.Assign) and isinstance(n.value, ast.Lambda)
                  and isinstance(n.targets[0], ast.Name)):
                makers.append(n)
        nested = [n for n in makers if isinstance(n, ast.FunctionDef)]
        self.view_groups = view_groups(fdef, fresh, stateful)
        self.module_arrays: frozenset = frozenset()
        self.state_cells: frozenset = frozenset()  # (the captured variables holding state, `generate`)
        self.held_globals: frozenset = frozenset()  # (module state read as constants: `held_globals`)
        self.held_attributes: dict = {}
        self.globals_: dict | None = None  # (the module's: `state_reader` resolves callees by them)
        self.own_names: set = set()
        self.pure_calls = fresh  # calls known to change none of their arguments (`fresh_calls`)
        # temporaries holding a one-item tuple of a variable (`out=(o,)` lowered to `t1 = (o,)`): the array
        # a ufunc writes is o, whose cotangent the call's pullback takes (the tuple's was None: 0)
        self.one_tuples = {n.targets[0].id: n.value.elts[0] for n in ast.walk(fdef)
                           if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
                           and n.targets[0].id.startswith(TEMP_PREFIX) and isinstance(n.value, ast.Tuple)
                           and len(n.value.elts) == 1 and isinstance(n.value.elts[0], ast.Name)}
        self.writes: dict[int, int] = {}  # call id -> the argument it overwrites (`declared_writes`)
        self.private: frozenset[str] = frozenset()  # containers no other object holds (`private_containers`)
        self.entry: dict[int, str] = {}
        self.bound_before = _bound_before(fdef, params)
        # nested functions that write variables of this one: name -> those variables (rebound with
        # `nonlocal`, or changed in place: `out[i] = v` on a captured array)
        own_writes = {n.name: nonlocal_writes(n) | captured_stores(n) for n in nested}
        self.writers = through_calls(nested, own_writes)
        # (what a closure rebinds, `nonlocal`, only through a sibling closure it calls: refused at its call; a
        # captured object it changes in place there keeps its cotangent box by identity)
        rebound = {n.name: nonlocal_writes(n) for n in nested}
        by_sibling, inside = through_calls(nested, rebound), through_calls(nested, rebound, siblings=False)
        # (name -> the variables it rebinds by `=` and that this function aliases, loops over, holds or
        # changes in place: a list or dict so rebound is refused where the call runs, `plain_cells`; a
        # `nonlocal` only declared, `nonlocal L; L.append(v)`, rebinds nothing, and `out = out + [v]` read
        # only by its name after is followed)
        self.rebinders = through_calls(nested, {n.name: nonlocal_writes(n) & _rebound_names(n) for n in nested},
                                       siblings=False)
        hazards = _container_hazards(fdef, nodes) if self.rebinders else set()
        self.hazardous = {k: w & hazards for k, w in self.rebinders.items()}
        self.through = {k: w - inside.get(k, set()) for k, w in by_sibling.items() if w - inside.get(k, set())}
        self.changers = through_calls(nested, {n.name: captured_stores(n) for n in nested})  # (in place only)
        # a lambda bound once to a name that changes captured objects in place (`cb = lambda v: hist.append(v)`):
        # as a def's (the list's cotangent did not flow into its call: 0 for 3)
        bound = collections.Counter(t.id for n in nodes if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                                    for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                                    if isinstance(t, ast.Name))
        for n in makers:
            if isinstance(n, ast.Assign) and bound[n.targets[0].id] == 1 and n.targets[0].id not in self.writers:
                shim = ast.FunctionDef(name=n.targets[0].id, args=n.value.args, body=[ast.Return(value=n.value.body)],
                                       decorator_list=[], returns=None, type_comment=None, type_params=[])
                if w := captured_stores(shim):
                    self.writers[shim.name] = self.changers[shim.name] = w
                # (and one calling a closure that rebinds `nonlocal` variables, `h = lambda v: add(v * v)`:
                # refused at its call, as a def's call through a sibling is; gen6's via_lambda, 0 for 5.47)
                called = {c.func.id for c in ast.walk(n.value.body) if isinstance(c, ast.Call)
                          and isinstance(c.func, ast.Name)}
                if w := set().union(*(by_sibling.get(c, set()) for c in called)):
                    self.writers[shim.name] = self.writers.get(shim.name, set()) | w
                    self.through[shim.name] = w
        # closures made here, by name -> the variables of this function they read: a direct call routes
        # their cotangents to the variables' bindings at the call (Python's cells are late-bound)
        own = local_names(fdef, nodes) | {n.name for n in nested}
        _, self.escaping = closure_hazards(fdef, params, nodes)  # (what may be bound again: `_bound_after`)
        self.array_cells: list = []  # (id of a def statement, the captured variables it stores items into)
        self.unbound_cells: list = []  # (id of a def statement, the captured variables it changes by a method
        # call, which must be unbound when it is made: `runtime.closure_arrays`)
        self.readers: dict[str, set[str]] = {}
        self.made: dict[str, ast.AST] = {}  # closures made here, by name
        for n in makers:
            if isinstance(n, ast.FunctionDef):
                self.made[n.name] = n
                self.readers[n.name] = (free_names(n, False) & own) - self.writers.get(n.name, set())
            else:
                # (less the cells it writes, as a def's: a lambda changing a captured array in place,
                # `lambda b: (a.__setitem__(0, 0.0), b.sum() + a.sum())[1]`, had the cell's cotangent taken
                # both as written and as read: counted twice, 3.4 for 2.4)
                self.readers[n.targets[0].id] = (free_names(n.value, False) & own) - self.writers.get(
                    n.targets[0].id, set())
                self.made[n.targets[0].id] = n.value
        for name in self.escaping:  # rebound (`g = deco(g)`): a call of `name` may not call the closure
            self.readers.pop(name, None)

    # -- helpers -------------------------------------------------------------------------------
    def is_active(self, node) -> bool:
        return isinstance(node, ast.Name) and node.id in self.active

    def key_check(self, helper: str, obj, key) -> ast.stmt:
        """`helper(obj, key)` (`key_guard`, `key_lookup`), told which items of the key may carry a derivative
        where key is a variable bound only to a tuple display (`key = (start, stop, i)`: FLife's moments cached
        by their order i, a constant float, beside a start index the analysis could not prove constant; the
        float taken for differentiated, every such cache was refused)."""
        parts = self.tuple_parts.get(key.id) if isinstance(key, ast.Name) else None
        if parts is not None:
            active = [i for i, e in enumerate(parts) if self.is_active(e)]
            if active:
                return expr_stmt(call(helper, obj, key, const(tuple(active))))
        return expr_stmt(call(helper, obj, key))

    def acc(self, name: str, expr: Node, fresh: bool = False) -> list[ast.stmt]:
        """Adjoint statements adding cotangent `expr` (a new node, or a variable's name) to name's."""
        self.dvars.add(name)
        dn = d(name)
        if fresh or name in self.single_use:  # its one reader is the only contribution: nothing to add to
            return [assign(dn, expr)]
        if isinstance(expr, str) and expr != dn:  # a variable already: added as it is (no `_od_c` copy)
            return [_accumulate(dn, expr)]
        return [assign("_od_c", expr), _accumulate(dn, "_od_c")]

    def fresh(self, prefix: str) -> str:
        """A new name, `prefix` numbered (the `_od_f` and `_od_w` of a call take its pullback's number)."""
        self.npb += 1
        return f"{prefix}{self.npb}"

    def take(self, name: str) -> list[ast.stmt]:
        """Adjoint statements taking name's cotangent into `_od_g` (a store: the variable's is reset)."""
        self.dvars.add(name)
        return [assign("_od_g", d(name)), assign(d(name), const(None))]

    # -- statements ----------------------------------------------------------------------------
    def body(self, stmts: list[ast.stmt], single: bool = False) -> list[ast.stmt]:
        """Forward statements for a statement list; records blocks of simple statements."""
        self.exits = {**self.exits, **exit_tests(stmts, self.depth > 0)}  # (`if not t: break`: a block of its own)
        out: list[ast.stmt] = []
        run: list[ast.stmt] = []

        def flush(terminator=None):
            if run:
                out.extend(self.block(list(run)))
                run.clear()
            if terminator is not None:
                out.append(terminator)

        for s in stmts:
            if isinstance(s, ast.ClassDef):
                self.check_class(s)
            if isinstance(s, (ast.If, ast.While, ast.For, ast.Try, ast.With, ast.Match)):
                flush()
                out.extend(self.compound(s))
            elif isinstance(s, (ast.Break, ast.Continue, ast.Raise)):
                flush(s)
            else:
                run.append(s)
                if isinstance(s, ast.Return) or single or self.fragile:
                    flush()
                if isinstance(s, ast.Return):
                    break  # anything after a return is dead code
        flush()
        return out or [ast.copy_location(ast.Pass(), stmts[0] if stmts else self.fdef)]

    def compound(self, s) -> list[ast.stmt]:
        if isinstance(s, ast.Match):
            for case in s.cases:
                case.body = self.body(case.body)
            if self.is_active(s.subject) and (not getattr(s, "_od_rebound", False)
                                              or getattr(s, "_od_class_patterns", True)):
                # its pattern bindings would carry derivatives unseen: refused when the subject's value
                # may carry one (a dict of constants read from a module global does not)
                return at([expr_stmt(call("__od_match_guard__", s.subject.id))], s) + [s]
            return [s]
        if isinstance(s, ast.If):
            s.body = self.body(s.body)
            s.orelse = self.body(s.orelse) if s.orelse else []
            return self.guarded([s])  # (`if x:` on a differentiated float: `x != 0`)
        if isinstance(s, ast.While):
            self.depth += 1
            s.body = self.body(s.body)
            self.depth -= 1
            s.orelse = self.body(s.orelse) if s.orelse else []
            return [s]
        if isinstance(s, ast.For):
            return self.for_loop(s)
        if isinstance(s, ast.Try):
            self.fragile += 1
            s.body = self.body(s.body)
            self.fragile -= 1
            for h in s.handlers:
                reads = h.name is not None and _reads_caught(h)
                # (or the handler asks for the exception being handled: `sys.exc_info()[1].args[0]`, gen21 W5)
                asks = not reads and any(isinstance(n, ast.Attribute) and n.attr in ("exc_info", "exception")
                                         for b in h.body for n in all_nodes(b))
                h.body = self.body(h.body)
                if reads:  # no derivative flows from a raise to its handler: refused if the exception holds one
                    h.body = at([expr_stmt(call("__od_caught__", h.name))], h) + h.body
                elif asks:
                    h.body = at([expr_stmt(call("__od_caught__"))], h) + h.body
                # a refusal is not the code's to catch (`overdub.errors.not_swallowed`)
                h.body = at([expr_stmt(call("__od_not_swallowed__"))], h) + h.body
                if (m := getattr(s, "_od_with_manager", None)) is not None:  # (`entered`'s: its manager left
                    h.body = at([expr_stmt(call("__od_refused_exit__", load(m)))], h) + h.body  # first)
            s.orelse = self.body(s.orelse) if s.orelse else []
            s.finalbody = self.body(s.finalbody) if s.finalbody else []
            return [s]
        if isinstance(s, ast.With):
            if (len(s.items) == 1 and isinstance(s.items[0].context_expr, ast.Name)
                    and (self.is_active(s.items[0].context_expr) or s.items[0].optional_vars is not None
                         and self.is_active(s.items[0].optional_vars)) and not _leaves_early(s.body)):
                return self.body(self.entered(s))
            # `with m(...) as v` on a manager the analysis could not prove constant, run natively (the value
            # of its `__enter__` is not differentiated): checked when entered instead (`entered_as`: refused
            # where the manager or what `__enter__` gives holds a number; scipy's `with MapWrapper(map) as mf`)
            as_checked = {id(item) for item in s.items if item.optional_vars is not None
                          and (self.is_active(item.optional_vars) or self.is_active(item.context_expr))}
            self.fragile += 1
            s.body = self.body(s.body)
            self.fragile -= 1
            guards = [expr_stmt(call("__od_managed__", item.context_expr)) for item in s.items
                      if isinstance(item.context_expr, ast.Name) and self.is_active(item.context_expr)]
            for item in s.items:  # (a manager whose `__exit__` swallows what a call raised after it stored:
                item.context_expr = call("__od_entered_as__" if id(item) in as_checked  # `contextlib.suppress`)
                                         else "__od_watched__", item.context_expr)
            return at(guards, s) + [s] if guards else [s]
        raise AssertionError(type(s))

    def entered(self, s: ast.With) -> list[ast.stmt]:
        """`with m as v: body` on a differentiated manager m, as the calls Python makes: `v = m.__enter__()`,
        the body, then `m.__exit__(None, None, None)` (or, where the body raised, `m.__exit__(type, value,
        traceback)`, re-raised unless it answers true), each a recorded method call: what `__enter__` returns
        and what both store (a setting changed and restored) are differentiated (a `with` runs them natively,
        unrecorded: refused before). Only a body that leaves by its end or by raising (`_leaves_early`)."""
        item = s.items[0]
        m = item.context_expr.id
        n = self.fresh("_od_with")
        enter, ex, exc, kind, tb, answer, again = (f"{n}_{part}" for part in ("enter", "exit", "exc", "type", "tb",
                                                                              "answer", "again"))
        self.active.update({m, enter, ex, answer, again})
        target = item.optional_vars.id if item.optional_vars is not None else f"{n}_value"
        self.active.add(target)  # (what it returns may carry a derivative; the call itself is recorded either way)

        def method_call(name, method, args):
            return [assign(name, call(attr(m, method), *args))]
        handler_body = ([assign(kind, call("__od_type__", exc)), assign(tb, attr(exc, "__traceback__"))]
                        + method_call(answer, "__exit__", [kind, exc, tb])
                        + [assign(again, ast.UnaryOp(ast.Not(), load(answer))),
                           if_(load(again), [ast.Raise(exc=None, cause=None)], [])])
        handler = ast.ExceptHandler(type=load("BaseException"), name=exc, body=handler_body)
        node = ast.Try(body=s.body, handlers=[handler], orelse=method_call(ex, "__exit__", [const(None)] * 3),
                       finalbody=[])
        node._od_try = True
        node._od_with_manager = m  # (left as the block's end leaves it where a refusal goes through: `refused_exit`)
        out = method_call(target, "__enter__", []) + [node]
        for st in out:
            ast.copy_location(st, s)
            for sub in ast.walk(st):
                if not hasattr(sub, "lineno") and "lineno" in getattr(sub, "_attributes", ()):
                    ast.copy_location(sub, s)
        return out

    def for_loop(self, s: ast.For) -> list[ast.stmt]:
        writes = _writes_in_place(s.body, {n.id for n in ast.walk(s.target) if isinstance(n, ast.Name)})
        self.depth += 1
        body = self.body(s.body)
        self.depth -= 1
        orelse = self.body(s.orelse) if s.orelse else []
        if not self.is_active(s.iter):
            # (an active iterable whose items go unused, `for _ in self: pass`, still runs recorded: its
            # class's `__next__` may store into it — particles' Kalman filter — and that was lost: 0)
            s.body, s.orelse = body, orelse
            if isinstance(s.iter, ast.Name) and s.iter.id in self.sequences:
                # (items taken for numbers, `_number_draws`: each checked as drawn, the list being changeable)
                s.body = at([expr_stmt(call("__od_number_item__", load(s.target.id)))], s) + s.body
            bound = sorted({n.id for n in ast.walk(s.target) if isinstance(n, ast.Name) and n.id in self.active})
            if bound:
                # each pass binds the target again to an item that carries no derivative: the cotangent its
                # uses gave it stops there (`i = k; for i in range(3): ...; k * i` took k * i's for k: 2.3
                # for 2, lmoments3's reused loop variable), as an assignment's store takes it
                self.depth += 1
                k = self.new_block()
                self.depth -= 1
                self.set_adjoint(k, [], [([st for name in bound for st in self.take(name)], s)], s)
                s.body = at([expr_stmt(call(attr("_od_tape", "append"), tuple_([const(k)])))], s) + s.body
            return [s]
        # for v in it  ->  _od_itJ = iter(it) (a recorded call: user classes' __iter__ is differentiated)
        #                  for _od_iK, v in enumerate(_od_itJ): record (k, _od_itJ, i); adjoint: it[i] read
        j = self.new_block()
        it, v = s.iter.id, s.target.id
        itv, pb = f"_od_it{j}", f"_od_pbit{j}"
        # (the object looped over, under a name of its own: the user's may be bound again after the loop,
        # `xs = [f(v) for v in xs]`, and the records restore what they save by name)
        src = f"_od_src{j}"
        pre = at([assign((itv, pb), call("__od_call__", const(EVERY_ARGUMENT), "__od_iter__", it)), assign(src, it),
                  expr_stmt(call(attr("_od_tape", "append"), tuple_([const(j), pb, src])))], s)
        self.dvars.update((it, itv))
        pullback = assign("_od_r", call(item(pb, 0), pb, "_od_g", const(None), "_od_S"))
        # (the items' cotangents a list or tuple looped over got in its box, `loop_item_adj`: its own now)
        adj0 = (self.take(itv) + [_given(pb, [pullback, *self.acc(it, item(item("_od_r", 1), 0))])]
                + [assign(d(it), call("__od_loop_box__", "_od_S", d(it), src))])
        self.set_adjoint(j, [pb, src], [(adj0, s)], s)
        self.depth += 1
        k = self.new_block()
        self.depth -= 1
        i = f"_od_i{k}"
        # a loop over an iterator already drawn from (`next(it)` first) numbers its items from there
        # (a body changing memory in place: the items an object's own `__iter__` gave, drawn eagerly, may be
        # views whose cotangents no change sees: refused, `enumerate_views`)
        items = if_exp(is_(itv, it), call("__od_enumerate_at__", itv),
                       call("__od_enumerate_views__", itv, src) if writes else call("__od_enumerate__", itv))
        head = ast.For(target=store((i, v)), iter=items,
                       body=[expr_stmt(call(attr("_od_tape", "append"), tuple_([const(k), itv, i, src])))], orelse=[], type_comment=None)
        at([head], s)
        head.body.extend(body)
        head.orelse = orelse
        # the items' cotangents into the box of the list or tuple looped over, at their positions (where the
        # body's changes of it, undone in the reverse pass, find them: `for w in [a, a]: w *= 2`, items appended,
        # sorted or removed while the loop runs, a change by a callee given the list), else into the iterator's
        item_adj = call("__od_loop_item_adj__", "_od_S", d(itv), "_od_g", itv, i, src)
        adj = self.take(v) + [_given("_od_g", [assign(d(itv), item_adj)])]
        self.set_adjoint(k, [itv, i, src], [(adj, s)], s)
        return pre + [head]

    def new_block(self) -> int:
        self.nblocks += 1
        self.depth_of[self.nblocks] = self.depth
        return self.nblocks

    def set_adjoint(self, k: int, saved: list[str], parts: list[tuple[list[ast.stmt], ast.stmt]], like) -> None:
        """parts: (adjoint statements, the user's statement they mirror), in reverse order (each is placed
        on its statement's line)."""
        stmts = at([assign(("_", *saved), "_od_rec")], like) if saved else []
        for part, node in parts:
            stmts.extend(at(part, node))
        self.adjoints[k] = stmts or [ast.copy_location(ast.Pass(), like)]

    def guarded(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        """stmts with a check before each equality, tie or truth test of a differentiated value (also of
        one that only steers, `d = x - c`)."""
        return equality_guards(stmts, lambda a: self.is_active(a) or isinstance(a, ast.Name) and a.id in self.steering,
                               valued=self.is_active, exits=self.exits)

    # -- one basic block -------------------------------------------------------------------------
    def block(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        # (`x == 0` on a differentiated x: SpecialPoint; also of a value that only steers, `d = x - c`)
        stmts = self.guarded(stmts)
        stmts = [c for s in stmts for c in _stairs_checked(s)]
        ops = [(s, self.op_active(s)) for s in stmts]
        if not any(a for _, a in ops):
            return [c for s in stmts for c in self.read_guards(s) + [_augmented(s)] + self.inert_checks(s)]
        k = self.new_block()
        if any(_stores(s) for s, a in ops if a):
            self.storing.add(k)
        fwd: list[ast.stmt] = []
        saved: list[str] = []
        kept: set[str] = set()  # (saved's names, for membership: the list's own test was quadratic)
        adj_parts: list = []
        assigned_later = self._assigned_after(stmts)
        for idx, (s, act) in enumerate(ops):
            if not act:
                fwd.extend(self.read_guards(s))
                fwd.append(_augmented(s))
                fwd.extend(self.inert_checks(s))
                continue
            self._later = assigned_later[idx]
            self._results = []
            f_stmts, need, adj = self.statement(s)
            # a saved variable that this statement or a later one in the block reassigns is snapshotted
            read = set(_names_in(getattr(s, "value", s)))
            later, own = assigned_later[idx], _targets(s) & read
            renames, after = {}, []
            for n in need:
                if n in later or n in own or n in _BUILTIN_NAMES:  # (a builtin read, `D[float]`: saved as a
                    snap = f"_od_s{k}_{idx}_{n}"                 # local named so, it shadowed the adjoint's own)
                    if n in _targets(s) and n not in read:  # the statement's own result: kept after it
                        after.extend(at([assign(snap, n)], s))
                    else:
                        fwd.extend(at([assign(snap, n)], s))
                        f_stmts = [_rename(x, {n: snap}) for x in f_stmts]
                    renames[n] = snap
            if renames:  # the adjoint reads (and restores) the snapshots (never the cotangents, `_od_d_<n>`)
                adj = [_rename(x, renames, loads_only=False) for x in adj]
                need = [renames.get(n, n) for n in need]
            fwd.extend(f_stmts)
            fwd.extend(after)
            for n in need + self._results:
                if n not in kept:
                    kept.add(n)
                    saved.append(n)
            adj_parts.append((adj, s))
        record = at([expr_stmt(call(attr("_od_tape", "append"), tuple_([const(k), *saved])))], stmts[-1])
        if isinstance(fwd[-1], ast.Return):
            ret = fwd.pop()
            fwd.extend(record)
            fwd.append(ret)
        else:
            fwd.extend(record)
        self.set_adjoint(k, saved, list(reversed(adj_parts)), stmts[0])
        return fwd

    def inert_checks(self, s) -> list[ast.stmt]:
        """After a statement left as Python reading an attribute the analysis takes for a constant of any object
        (`activity.INERT_ATTRIBUTES`: `t = x.dtype`) off an active variable: a check that what it read carries
        no derivative (`helpers.inert_read`), refused where it may (an object's own `dtype` holding a number)."""
        if not (type(s) is ast.Assign and len(s.targets) == 1 and isinstance(t := s.targets[0], ast.Name)
                and isinstance(v := s.value, ast.Attribute) and v.attr in INERT_ATTRIBUTES and self.is_active(v.value)):
            return []
        return at([expr_stmt(call("__od_inert_read__", load(t.id), const(v.attr)))], s)

    def read_guards(self, s) -> list[ast.stmt]:
        """Before a statement left as Python: a check of each module global holding state it reads (and of
        each `module.attr` so, and each local bound to one: `held_globals`), that this recording did not change
        it in place (`helpers.global_read`)."""
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return []  # (a scope of its own: its body's reads are checked by its twin)
        out, seen = [], set()
        for n in ast.walk(s):
            if isinstance(n, ast.Call) and (key := self.state_reader(n.func)) is not None and key not in seen:
                # a Python function called plainly (no differentiated argument) that reads module state: what
                # this recording stored there comes back from it without its derivative
                seen.add(key)
                out.append(expr_stmt(call("__od_state_call__", const(key))))
                continue
            if not self.held_globals and not self.held_attributes:
                continue
            if not isinstance(getattr(n, "ctx", None), ast.Load):
                continue
            if isinstance(n, ast.Name) and n.id in self.held_globals:
                where, read = n.id, load(n.id)
            elif (isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                  and n.attr in self.held_attributes.get(n.value.id, ())):
                base = n.value.id
                where = (f"the attribute {n.attr} of a class reached from an object (`type(obj).{n.attr}`)"
                         if self.held_attributes[base] is _ANY_ATTRIBUTE else f"{base}.{n.attr}")
                read = attr(base, n.attr)
            else:
                continue
            if where not in seen:
                seen.add(where)
                out.append(expr_stmt(call("__od_global_read__", read, const(where))))
        return at(out, s) if out else out

    def state_reader(self, f) -> int | None:
        """The key of `STATE_READS`' entry for a callee `name` or `module.name` resolved to a Python function
        of a module that reads module state (`state_reads`), else None."""
        if self.globals_ is None:
            return None
        fn = _global_function(f, self.globals_, self.own_names)
        return None if fn is None else state_reads_key(fn)

    def _assigned_after(self, stmts) -> list["_AssignedAfter"]:
        """Per statement, the names a later statement of the block assigns (as a membership test: the
        sets themselves would take time and memory quadratic in the block's length)."""
        last: dict[str, int] = {}
        for i, s in enumerate(stmts):
            for t in getattr(s, "targets", []):
                if isinstance(t, ast.Name):
                    last[t.id] = i
            if isinstance(s, ast.FunctionDef):
                last[s.name] = i
            v = getattr(s, "value", None)
            if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in self.rebinders:
                # (a closure's call rebinding variables, `nonlocal s; s = 1.0`, assigns them: a value read
                # before it is snapshotted, its adjoint took the new one, 3 for 2.4)
                for n in self.rebinders[v.func.id]:
                    last[n] = i
        return [_AssignedAfter(last, i) for i in range(len(stmts))]

    def op_active(self, s) -> bool:
        a = self.active
        if isinstance(s, ast.Return):
            return self.is_active(s.value)
        if isinstance(s, ast.Assign):
            t = s.targets[0]
            if isinstance(t, ast.Name):
                # (or a call of a closure rebinding differentiated variables, `nonlocal s; s = 1.0`, whose
                # inputs carry no derivative: the adjoint must see s's old value end there: 3 for 1)
                v = s.value
                return t.id in a or isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and bool(
                    self.rebinders.get(v.func.id, set()) & a)
            return self.is_active(t.value) or self.is_active(s.value)
        if isinstance(s, ast.FunctionDef):
            return s.name in a
        if isinstance(s, ast.Delete):  # (an active key too: a class's own `__delitem__` may keep it)
            return any(isinstance(t, (ast.Subscript, ast.Attribute)) and isinstance(t.value, ast.Name)
                       and (self.is_active(t.value) or isinstance(t, ast.Subscript) and any(
                           n in self.active for n in _names_in(t.slice))) for t in s.targets)
        return False

    # -- one active statement: (forward statements, saved names, adjoint statements) -------------------
    def statement(self, s):
        if isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id in self.globals_declared
                                             for t in s.targets):
            # refused where it runs: a store in a branch or loop never taken is no refusal (powerlaw's
            # `global class_instance; class_instance = self` in a loop over its user constraints, mostly none)
            name = next(t.id for t in s.targets if isinstance(t, ast.Name) and t.id in self.globals_declared)
            return at([expr_stmt(call("__od_global_store__", const(name)))], s) + [s], [], []
        if isinstance(s, ast.Return):
            return [self._ret(s)], [], self.acc(s.value.id, "_od_dret")
        if isinstance(s, ast.FunctionDef):
            return self.made_closure(s.name, s, s)
        if isinstance(s, ast.Delete) and isinstance(s.targets[0], ast.Attribute):
            # `del obj.attr`: reads after it see the class's attribute (a constant), not the deleted value
            t = s.targets[0]
            obj = t.value.id
            u = self.fresh("_od_u")
            fwd = at([assign(u, call("__od_delattr__", obj, const(t.attr)))], s)
            self.dvars.add(obj)
            adj = [assign(d(obj), call("__od_delattr_adj__", "_od_S", d(obj), obj, const(t.attr), u))]
            return fwd, [obj, u], adj
        if isinstance(s, ast.Delete):
            t = s.targets[0]
            obj = t.value.id
            u = self.fresh("_od_u")
            flags_fwd, merge, flags = self.view_merge(obj, s)  # (`q = ps; del q[0]`: ps's cotangent too)
            fwd = flags_fwd + at([assign(u, call("__od_delitem__", obj, index_value(t.slice)))], s)
            self.dvars.add(obj)
            adj = merge + [assign(d(obj), call("__od_delitem_adj__", "_od_S", d(obj), obj, index_value(t.slice), u))]
            return fwd, [obj] + _names_in(t.slice) + [u] + flags, adj
        t, v = s.targets[0], s.value
        if isinstance(t, ast.Attribute):
            return self.setattr_(s, t, v)
        if isinstance(t, ast.Subscript):
            return self.setitem_(s, t, v)
        name = t.id
        if isinstance(v, (ast.Name, ast.Constant)):
            adj = self.take(name) + ([_given("_od_g", self.acc(v.id, "_od_g"))] if self.is_active(v) else [])
            return [s], [], adj
        if isinstance(v, ast.Call) and id(s) in self.constant_stores:
            # a call no derivative reaches, whose variable is active for what happens to it later
            # (`activity._constant_calls`): run as it is; the variable's cotangent ends here, as at `v = 1.0`
            return [s], [], self.take(name)
        if isinstance(v, ast.BinOp):
            return self.binop(s, name, v)
        if isinstance(v, ast.UnaryOp):
            adj = self.take(name)
            if self.is_active(v.operand) and isinstance(v.op, (ast.USub, ast.UAdd)):
                x = v.operand.id
                # floats and arrays inline; other values (objects whose class's own __neg__ / __pos__ is
                # differentiated as its code) through the helper
                plain = neg("_od_g") if isinstance(v.op, ast.USub) else load("_od_g")
                fwd, need = [s], [x]
                if name not in self._later:  # (the result, for `held`: as `binop`'s)
                    self._results.append(name)
                    y = load(name)
                    y._od_result = True
                else:  # (rebound later in the block: under a name of its own)
                    y, copy_out = self.result_copy(name, s)
                    fwd, need = fwd + copy_out, need + [y.id]
                adj.append(if_(and_(is_("_od_g", const(None)), attr("_od_S", "boxes")),
                               [assign("_od_g", call("__od_held__", "_od_S", copy.copy(y)))]))
                general = call("__od_unary_adj__", const("neg" if isinstance(v.op, ast.USub) else "pos"), "_od_g", x,
                               "_od_S", y)
                # (an object array's `-g` would negate its elements' cotangents: Tangents, through the helper)
                number = or_(is_(call("__od_type__", x), "__od_float__"), is_(call("__od_type__", x), "__od_float64__"),
                             and_(is_(call("__od_type__", x), "__od_ndarray__"), is_not(attr(x, "dtype"), "__od_object__")))
                if self.compact:
                    adj.append(_given("_od_g", self.acc(x, general)))
                else:
                    adj.append(_given("_od_g", [if_(number, [assign("_od_c", plain)], [assign("_od_c", general)]),
                                             *self.acc(x, "_od_c")]))
                return fwd, need, adj
            return [s], [], adj
        if isinstance(v, ast.Call):
            return self.call(s, name, v)
        if isinstance(v, ast.Attribute) and isinstance(v.value, ast.Constant):
            # a literal's attribute (`"{:.3f}".format` handed to map): a constant's, no cotangent (a crash before)
            return [s], [], self.take(name)
        if isinstance(v, ast.Attribute):
            # a property's getter (a lazy cache: `if self._c is None: self._c = ...`) runs its twin here,
            # so what it reads and writes is recorded now; its pullback is kept for the adjoint
            obj = v.value.id
            self.dvars.add(obj)
            pb = self.fresh("_od_pb")
            fwd = at([assign((name, pb), call("__od_getattr__", obj, const(v.attr)))], s)
            adj = self.take(name) + [if_(or_(not_none("_od_g"), not_none(pb)), [assign(d(obj), call(
                "__od_getattr_adj__", "_od_S", d(obj), "_od_g", obj, const(v.attr), name, pb))])]
            return fwd, [obj, name, pb], adj
        if isinstance(v, ast.Subscript) and isinstance(v.value, ast.Constant):
            # a literal's item (`'ab'[i]`, i from a loop over differentiated values): a constant's, no cotangent
            return [s], [], self.take(name)
        if isinstance(v, ast.Subscript):
            obj = v.value.id
            self.dvars.add(obj)
            if any(n in self.active for n in _names_in(v.slice)):
                # (a dict looked up by a differentiated key: a hit is refused, `helpers.key_lookup`)
                lookup = at([self.key_check("__od_key_lookup__", load(obj), index_value(v.slice))], s)
                return lookup + [s], [obj] + _names_in(v.slice), self.take(name) + [_given("_od_g", self.index_adj(obj, v.slice))]
            # a class's own `__getitem__` (or a dict subclass's `__missing__`) runs its twin here, so what it
            # stores (a lazy cache, `self.cache[i] = ...`) is recorded now; lists, tuples, dicts and arrays
            # are indexed as written
            pb = self.fresh("_od_pb")
            adj = self.take(name)
            need = [obj, pb] + _names_in(v.slice)
            y = name
            if isinstance(v.slice, ast.Slice):  # (a new list: its box's cotangent too)
                y, adj = self._new_list(name, v, adj)
                need.append(y)
            native, made = s, [assign((name, pb), call("__od_subscript__", obj, index_value(v.slice)))]
            if y != name:
                native = _also_bound(s, y)
                made = [assign((y, pb), call("__od_subscript__", obj, index_value(v.slice))), assign(name, y)]
            fwd = at([if_(compare(call("__od_type__", obj), ast.In(), "__od_native_items__"),
                          [native, assign(pb, const(None))], made)], s)
            adj += [if_(not_none(pb), [assign(d(obj), call(
                "__od_subscript_adj__", "_od_S", d(obj), "_od_g", pb))], [_given("_od_g", [assign(d(obj), call(
                    "__od_getitem_adj__", "_od_S", d(obj), "_od_g", obj, index_value(v.slice)))])])]
            return fwd, need, adj
        if isinstance(v, (ast.Tuple, ast.List)):
            return self.build_seq(s, name, v)
        if isinstance(v, ast.Dict):
            return self.build_dict(s, name, v)
        if isinstance(v, (ast.Lambda,)):
            return self.made_closure(name, v, s)
        if isinstance(v, ast.Set) and any(self.is_active(e) for e in v.elts):
            # a set's members carry no cotangent back: refused when they may carry a derivative
            return [s] + at([expr_stmt(call("__od_match_guard__", name, const("a set of")))], s), [], self.take(name)
        return [s], [], self.take(name)  # sets, f-strings...: nothing flows back

    def _new_list(self, name, v, adj):
        """(the name the new value is saved by, adj) for a statement that may make a new list (`w = base[:]`,
        `base * 1`, `base + []`): the adjoint takes, besides the variable's cotangent, what is in the list's
        box — the items written through another name for it (`d = copy.copy({'w': w}); d['w'][1] = x`: the
        copy's pullback leaves a shared list's cotangent in the list's own box, for the adjoint of what made
        it: gen16 W2b, 0.7 for 1.4). Where the statement reads the old value (`acc = acc + [x]`), the new one
        is also bound to a name of its own (`_also_bound`; the block snapshots the old one for the reads)."""
        y = name
        if name in _names_in(v):
            self._n_results = getattr(self, "_n_results", 0) + 1
            y = f"_od_res{self._n_results}_{name}"
        if isinstance(v, ast.BinOp):  # (a cotangent there: `binop_adj` reads the box, off the numbers' fast path;
            # an object's too, `self.r * o.r` of a class's operator, its fields' entries put there by a re-run)
            test = and_(is_("_od_g", const(None)), is_not(call("__od_type__", y), "__od_float__"))
        else:
            test = is_(call("__od_type__", y), "__od_keys__")
        return y, adj + [if_(test, [assign("_od_g", call("__od_loop_box__", "_od_S", "_od_g", y))])]

    def index_adj(self, obj: str, idx: ast.expr) -> list[ast.stmt]:
        """The adjoint of `obj[idx]` with an active index: a class's own `__getitem__` (`np.r_[x, 1.0]`)
        gives the index a cotangent too, added to the index's names (one name, or a tuple's)."""
        if isinstance(idx, ast.Name):
            parts = [(idx.id, None)]
        elif isinstance(idx, ast.Tuple) and all(isinstance(e, (ast.Name, ast.Constant)) for e in idx.elts):
            parts = [(e.id, i) for i, e in enumerate(idx.elts) if self.is_active(e)]
        else:  # slice bounds (`a[:k]`): an index's cotangent, if a class's code gives one, is refused then
            parts = None
        out = [assign((d(obj), "_od_gi"), call("__od_getitem_index_adj__", "_od_S", d(obj), "_od_g", obj,
                                               index_value(idx), const(parts is None), const(obj in self.active)))]
        if parts is None:
            return out
        for x, i in parts:
            part = "_od_gi" if i is None else call("__od_slice_cot__", "_od_S", "_od_gi", const(i), tuple_([x]))
            out += [_given("_od_gi", self.acc(x, part if i is None else item(part, 0)))]
        return out

    def _ret(self, s):
        return at([ast.Return(value=tuple_([s.value.id, "_od_tape"]))], s)[0]

    def inplace(self, s, name, v):
        """`x op= y` on an active x: arrays are updated in place (aliases see it) and the old value is
        kept so the reverse pass can restore it; other values are rebound as usual."""
        a, b = v.left, v.right
        opname = _OPNAMES.get(type(v.op), "?")
        u = self.fresh("_od_u")
        flags_fwd, merge, flags = self.view_merge(name, s)
        fwd = flags_fwd + at([assign((name, u), call("__od_iop__", const(opname), user(a), user(b)))], s)
        need = [x.id for x in (a, b) if isinstance(x, ast.Name)] + [u] + flags
        extra = []
        if name not in self._later:  # (the result, for an object's operator re-run: `binop`'s `held`)
            self._results.append(name)
            y = load(name)
            y._od_result = True
            extra = [y]
        else:  # (rebound later in the block, `v += v; v += v`: under a name of its own)
            y, copy_out = self.result_copy(name, s)
            fwd = fwd + copy_out
            need = need + [y.id]
            extra = [y]
        back = call("__od_iop_adj__", "_od_S", const(opname), "_od_g", user(a), user(b), u, *extra)
        held = self.held_by_object(name, s)
        if held:
            # an object's own `__isub__` may change in place an array one of its fields holds, which other
            # variables share (`a = V(t); a -= y` with `self.v -= o`): as for a method call (`handed`), the
            # forward notes which, and the adjoint moves their cotangents into the object's box first
            c = f"_od_c{u[len('_od_u'):]}"
            taken, others_now = self.bound_now(held, f"_od_o{u[len('_od_u'):]}")
            fwd = (at([assign(c, item("__od_changes__", 0))], s) + fwd
                   + at([if_(compare(item("__od_changes__", 0), ast.NotEq(), c), taken + [assign(u, call(
                       "__od_iop_views__", u, user(a), user(b), others_now, c))])], s))
            self.dvars.update(held)
            douts = [d(m) for m in held]
            back = call("__od_iop_adj__", "_od_S", const(opname), "_od_g", user(a), user(b), u, *extra,
                        douts=tuple_(douts))
            adj = (merge + self.take(name) + [assign(("_od_ga", "_od_gb", tuple(douts)), back)])
        else:
            adj = merge + self.take(name) + [assign(("_od_ga", "_od_gb"), back)]
        adj = (adj
               + (self.acc(a.id, "_od_ga") if self.is_active(a) else [])
               + (self.acc(b.id, "_od_gb") if self.is_active(b) else []))
        return fwd, need, adj

    def result_copy(self, name: str, s) -> tuple[ast.Name, list[ast.stmt]]:
        """(a load of a new temporary, the forward statement binding it to `name` after s): a statement's
        result the block rebinds later while it is also an operand (its name read in the adjoint is the
        operand's snapshot), for an object's operator re-run (`helpers.held`, `carry_boxes`)."""
        tmp = self.fresh(f"{TEMP_PREFIX}y")
        value = load(name)
        value._od_result = True  # (not renamed to the operand's snapshot: the value after s)
        return load(tmp), at([assign(tmp, value)], s)

    def bound_now(self, names, into: str) -> tuple[list[ast.stmt], ast.expr]:
        """(statements, expression): the values of `names` now, None for those not bound yet (a global among
        them from the module). Read as a tuple of the names, the common case; where one is not bound (a
        NameError), by `__od_bound__` from the frame's locals — which copies every local of the frame into a
        dict, most of a library function's call cost where its twin has hundreds of temporaries. (The engine's
        temporaries among them are bound to None on entry, `_preset`: the value `__od_bound__` reads for them
        before they are bound, so only a user's variable bound on another branch takes that path.)"""
        if not names:
            return [], tuple_([])
        self.maybe_unbound.update(n for n in names if _TEMP.fullmatch(n))
        return [try_except([assign(into, tuple_(load(n) for n in names))], "NameError",
                           [assign(into, call("__od_bound__", call("__od_locals__"), _strings(names)))])], load(into)

    def held_by_object(self, name: str, s) -> list[str]:
        """The active variables, bound before statement s, that may share memory with what the value in
        `name` holds (an object's fields): those an object's own in-place operator may change under them."""
        if name in self.private:
            return []
        bound = self.bound_before.get(id(s))
        return sorted(m for m in self.view_groups.get(name, ()) if m in self.active and m != name
                      and (bound is None or m in bound))  # (b too: `o += a` where o holds a, AccSelf's)

    def view_merge(self, name: str, s) -> tuple[list[ast.stmt], list[ast.stmt], list[str]]:
        """For an in-place change of the array in `name`: other variables may hold arrays sharing memory
        with it (`v = y[1:3]`, `y.T`, `y.reshape(...)`, the same array: `alias = y`). The forward notes
        which and where (None, the common case, when none does); the adjoint moves their cotangents for
        the shared elements into name's before the change is undone."""
        if name in self.private:  # (a list made here that nothing else holds: `row = []; row.append(x)`)
            return [], [], []
        bound = self.bound_before.get(id(s))
        others = sorted(n for n in self.view_groups.get(name, ()) if n in self.active and n != name
                        and (bound is None or n in bound))
        if not others:
            return [], [], []
        flag = self.fresh("_od_v")
        self.single_use.discard(name)  # the merge adds to its cotangent: the statement's own must add too
        # (the name itself may be unbound too, a closure's cell assigned on one branch only: `if full_output:
        # ans = {}` read by a nested function fluids' size_control_valve_g calls: no array, nothing to merge)
        bound_now = starred(call("__od_bound__", call("__od_locals__"), _strings([name] + others)))
        self.maybe_unbound.update(n for n in [name] + others if _TEMP.fullmatch(n))
        fwd = at([try_except([assign(flag, call("__od_views__", name, *others, same=const(True)))], "NameError",
                             [assign(flag, call("__od_views__", bound_now, same=const(True)))])], s)
        self.dvars.update(others + [name])
        douts = [d(n) for n in others]
        merge = [_given(flag, [assign((d(name), douts), call("__od_views_merge__", flag, d(name), tuple_(douts),
                                                               "_od_S"))])]
        return fwd, merge, [flag]

    def binop(self, s, name, v):
        if getattr(v, "_od_inplace", False) and isinstance(v.left, ast.Name) and v.left.id == name:
            return self.inplace(s, name, v)
        a, b = v.left, v.right
        act_a, act_b = self.is_active(a), self.is_active(b)
        if name not in self.loaded and (act_a or act_b):
            # a dropped result (`obj + x`): a class's own method that stores, run natively, is refused
            post = [at([expr_stmt(call("__od_dropped_op__", const(_OPNAMES.get(type(v.op), "?")), user(a), user(b)))],
                       s)[0]]
        elif isinstance(v.op, (ast.Mult, ast.Div)) and act_a != act_b and isinstance(b if act_a else a, ast.Name):
            # a duration scaled by a differentiated number, `a * td` (td a constant): rounded, no derivative
            # (its cotangent never comes: 0 came out) — refused; a float result passes at one test
            post = [at([if_(is_not(attr(name, "__class__"), "__od_float__"), [expr_stmt(call(
                "__od_duration__", name, user(a), user(b), const(act_a), const(act_b)))])], s)[0]]
        else:
            post = []
        operands = [x.id for x in (a, b) if isinstance(x, ast.Name)]
        # the result is kept for rules that use it (a / b, a ** b) unless the block overwrites it;
        # then the generic path recomputes it
        keep_y = name not in operands and name not in self._later
        need = operands
        if keep_y:
            self._results.append(name)  # saved as is: it is the value after this statement
        adj = self.take(name)
        if (isinstance(v.op, ast.Add) and not any(isinstance(x, ast.Constant) for x in (a, b))
                or isinstance(v.op, ast.Mult) and not any(isinstance(x, ast.Constant) and type(x.value) is not int
                                                          for x in (a, b))) and (act_a or act_b) and name in self.loaded:
            y, adj = self._new_list(name, v, adj)  # (`base + []`, `base * 1`: a new list)
            need = need + [y]
            if y != name:
                s = _also_bound(s, y)
            keep_y, result = True, y
        else:
            result = name
        y_node = load(result) if keep_y else const(None)
        if not keep_y and name in operands and name not in self._later and (act_a or act_b):
            # `B = B * 2.0`: the record's B (saved at the block's end, not rebound after) is the result, read
            # under its own name (not the operand's snapshot) by the operator's adjoint and `held`
            self._results.append(name)
            y_node = load(name)
            y_node._od_result = True
        elif not keep_y and name not in operands and (act_a or act_b):
            # rebound later in the block (`A = E * 2.0; B = A; A = ...`): the result snapshotted after the
            # statement (`block`'s renames), for the same
            need = need + [name]
            y_node = load(name)
        elif not keep_y and (act_a or act_b):
            # an operand too, and rebound later (`A = A + A; A = A + A`): the result kept under a name of its own
            y_node, copy_out = self.result_copy(name, s)
            post = post + copy_out
            need = need + [y_node.id]
        opname = _OPNAMES.get(type(v.op), "?")
        generic = [assign(("_od_ga", "_od_gb"), call("__od_binop_adj__", const(opname), "_od_g",
                                                     y_node, user(a), user(b),
                                                     const(int(act_a) | 2 * int(act_b)), "_od_S"))]
        # `r = r * x`: r's cotangent was just taken (None), so its contribution is assigned directly
        fresh_a = act_a and a.id == name and not (act_b and b.id == name)
        fresh_b = act_b and b.id == name and not (act_a and a.id == name)
        # each operand's cotangent is added once, after whichever path computed it (the adjoint's size,
        # and so the transform's time, is mostly these additions)
        added = ((self.acc(a.id, "_od_ga", fresh_a) if act_a else [])
                 + (self.acc(b.id, "_od_gb", fresh_b) if act_b else []))
        if not (act_a or act_b):  # (`1.0 / 6`: no operand takes a cotangent; the result's is dropped)
            generic = []
        elif not isinstance(y_node, ast.Constant):
            # a result whose own cotangent is None but whose parts took some by their boxes (an object made by
            # its class's operator, then read by a method through a dict it holds): the adjoint still runs
            held_y = copy.copy(y_node)
            adj.append(if_(and_(is_("_od_g", const(None)), attr("_od_S", "boxes")),
                           [assign("_od_g", call("__od_held__", "_od_S", held_y))]))
        if self.observed:
            fwd = at([ast.Assign(targets=s.targets, value=call("__od_binop__", const(opname), user(a), user(b)))], s)
            return fwd + post, need, adj + ([_given("_od_g", generic + added)] if generic else [])
        if not generic:
            return [s, *post], need, adj
        fast = None if self.compact else _fast_cotangents(v.op, a, b, load(result) if keep_y
                                                          else binop(user(a), ast.Div(), user(b)))
        if fast is not None:
            fa, fb = fast
            inline = ([assign("_od_ga", fa)] if act_a else []) + ([assign("_od_gb", fb)] if act_b else [])
            # sums need a scalar result (nothing to unbroadcast: a float cotangent says so); products and
            # quotients need real scalar operands (nothing to unbroadcast or conjugate)
            test = is_(call("__od_type__", "_od_g"), "__od_float__")
            if isinstance(v.op, (ast.Add, ast.Sub)):
                # and numbers as operands: an object's `__radd__` may return a float (`1.0 + obj`)
                parts = [test] + [or_(is_(call("__od_type__", x.id), "__od_float__"), is_(call("__od_type__", x.id), "__od_int__"))
                                  for x in (a, b) if isinstance(x, ast.Name)]
                test = and_(*parts)
            elif isinstance(v.op, (ast.Mult, ast.Div)):
                parts = []
                for x in (a, b):
                    if isinstance(x, ast.Name):
                        parts.append(is_(call("__od_type__", x.id), "__od_float__"))
                    elif not isinstance(x.value, (int, float)) or isinstance(x.value, bool):
                        parts.append(const(False))
                test = and_(*parts) if parts else const(True)
            float_test = test
            f64 = _float64_test(a, b)
            if f64 is not None:
                test = or_(test, f64)
            path = generic
            arrays = _real_array_test(v.op, a, b, act_a, act_b)
            if arrays is not None:
                array_inline = inline
                if isinstance(v.op, ast.Mult):
                    # 0 * inf where the product overflowed and its cotangent is 0 (a mask dropped it later):
                    # 0 there (`generic.dropped_nan_zero`; one sum tells a finite cotangent). Not for scalars:
                    # their NaN stays (per-operation cost on scalar code; a NaN, never a finite wrong number)
                    array_inline = inline + [assign(g, call("__od_dropped__", g, "_od_g", user(a), user(b)))
                                             for g, act in (("_od_ga", act_a), ("_od_gb", act_b)) if act]
                path = [if_(arrays, array_inline, generic)]
            adj.append(_given("_od_g", [if_(test, inline, path), *added]))
            fused = self._float_fused(v.op, name, (a, act_a, fresh_a, fa), (b, act_b, fresh_b, fb), test=float_test)
            if fused is not None:  # (adj[:2] takes the result's cotangent into `_od_g`: `take`)
                adj = adj[:2] + [if_(fused[0], fused[1], adj[2:])]
                adj[2]._od_float_fused = True  # (`show_adjoint` prints the general adjoint, its `else`)
                adj[2]._od_fused_checks = fused[2]  # (`_carried_floats`)
        else:
            adj.append(_given("_od_g", generic + added))
        return [s, *post], need, adj

    def _float_fused(self, op, name, *operands, test):
        """(test, body) of a binary operator's adjoint for float numbers alone, tried before its general
        adjoint: where the result's cotangent `_od_g`, each variable operand and each cotangent added to is
        a float, the general adjoint skips its box guards (for a None `_od_g` only), takes the inline
        formulas (`test` holds) and adds as floats (`_accumulate`'s float case): the same operations with
        the checks once. None where that can never hold (an operand whose cotangent was just taken, `x =
        x * x`, is None there; a constant that is no real number)."""
        checks = [is_(call("__od_type__", "_od_g"), "__od_float__")]
        if isinstance(op, (ast.Mult, ast.Div)):  # (a sum's test checks `_od_g` itself)
            checks.append(test)
            operand_test = test
        else:
            checks = [test]
            operand_test = None
        if any(isinstance(n, ast.Constant) and n.value is False for n in all_nodes(test)):
            return None
        body, added = [], set()
        for x, act, fresh, expr in operands:
            if not act:
                continue
            dn = d(x.id)
            if fresh or x.id in self.single_use:  # (as `acc`: assigned, not added)
                body.append(assign(dn, copy.deepcopy(expr)))
                continue
            if x.id == name:
                return None
            if x.id not in added:
                added.add(x.id)
                checks.append(is_(call("__od_type__", dn), "__od_float__"))
            body.append(assign(dn, binop(dn, ast.Add(), copy.deepcopy(expr))))
        # (the checks of the cotangents, `_od_g`'s and those added to, apart from the operands': the body
        # leaves each added-to cotangent a float, which `_carried_floats` takes for the next record's)
        carried = None if operand_test is None else ([checks[0]] + checks[2:], operand_test)
        return and_(*checks), body, carried

    def _builtin_callee(self, func: ast.expr) -> bool:
        """func names a C function of a module (`math.sin`, or `sin` taken from math), as the module's globals
        hold it now (the call checks again each time: `runtime.hot_float_call`)."""
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id in self.own_names:
                return False
            owner = self.globals_.get(func.value.id)
            return isinstance(owner, types.ModuleType) and isinstance(
                getattr(owner, func.attr, None), types.BuiltinFunctionType)
        if isinstance(func, ast.Name) and func.id not in self.own_names:
            return isinstance(self.globals_.get(func.id), types.BuiltinFunctionType)
        return False

    def entering_active(self, a) -> bool:
        """Argument a of a call may carry a derivative as the call begins. A temporary the lowering made for a
        display written in the call (`f(p, moments=[0, i, 2 * i])`) and read there alone holds its items: active
        only if one of them is. (Active as a variable: the call, having active inputs, may store them into the
        list, which the analysis, blind to order, counts from its making on. Taken for active on entry, FLife's
        moment orders, constant floats, became a differentiated loop variable keying a cache: refused.)"""
        if not self.is_active(a):
            return False
        live = self._live
        if live is not None and a.id not in live:
            return False
        items = self.displays.get(a.id)
        return items is None or any(e in self.active and (live is None or e in live) for e in items)

    def call(self, s, name, v: ast.Call):
        pb = self.fresh("_od_pb")
        mask = 0
        simple = True
        self._live = self.entering.get(id(v))  # (a call early in the function: what may be active there)
        for i, a in enumerate(v.args):
            if isinstance(a, ast.Starred):
                simple = False
            elif self.entering_active(a):
                mask |= 1 << i
        if any(k.arg is None for k in v.keywords):  # **kwargs: which are differentiated is not known
            simple = False
        elif any(self.entering_active(k.value) for k in v.keywords):
            mask |= KW_ACTIVE  # the positional bits hold; every keyword argument counts as differentiated
        self._live = None
        if not simple:
            mask = EVERY_ARGUMENT
        method_obj = v.func.value.id if isinstance(v.func, ast.Attribute) and self.is_active(v.func.value) else None
        func = user(v.func)
        fetch: list[ast.stmt] = []
        need = [pb]
        dself: Node = const(None)
        if method_obj:
            # `obj.m(...)`: a method bound to obj (its pullback's first cotangent is obj's), or a function,
            # closure, partial or callable object stored on obj (its cotangent is that of obj's attribute).
            # A property giving it runs its twin here (`self.c(v)`, c a lazily built object: re-run in the
            # adjoint, it found its cache filled, and the derivative through the object was lost: findiff's
            # `Diff(0, h)(f)` in h gave 0)
            fn_var, gpb = f"_od_f{self.npb}", f"_od_gp{self.npb}"
            fetch = [assign((fn_var, gpb), call("__od_getattr__", method_obj, const(v.func.attr)))]
            if not v.func.attr.startswith("__"):  # (a private name would be mangled as an attribute)
                # a module's function (`xp.exp(x)`, an array namespace held in a variable) read as Python
                # reads it, without the call and the pair of `__od_getattr__`, whose first test it is
                fetch = [if_(is_(call("__od_type__", method_obj), "__od_module__"),
                             [assign(fn_var, attr(method_obj, v.func.attr)), assign(gpb, const(None))], fetch)]
            fetch = at(fetch, s)
            func = load(fn_var)
            dself = if_exp("_od_own", d(method_obj), const(None))
            self.dvars.add(method_obj)
            need += [fn_var, method_obj, gpb]
        recorded = ast.Call(func=load("__od_call__"), args=[const(mask), func, *(user(a) for a in v.args)],
                            keywords=[ast.keyword(arg=k.arg, value=user(k.value)) for k in v.keywords])
        fwd_call = fetch + at([assign((name, pb), recorded)], s)
        hot_site = False  # (a math function of one float: `pulled_one` asks its pullback's float case)
        if (not self.observed and not fetch and not v.keywords and len(v.args) == 1
                and isinstance(v.args[0], (ast.Name, ast.Constant)) and self._builtin_callee(v.func)):
            # `math.sin(x)`: `call`'s case of a math function of a float tried first, without `call`'s other
            # tests (`runtime.hot_float_call`, None for anything else: then `call` as before). The function
            # is read once, into `_od_fn<n>`; the argument, a name or a constant, is read by both.
            num = pb[len("_od_pb"):]
            fn_var, hot = f"_od_fn{num}", f"_od_hot{num}"
            recorded.args[1] = load(fn_var)
            fwd_call = at([assign(fn_var, func), assign(hot, call("__od_hot_float__", fn_var, user(v.args[0]))),
                           if_(is_none(hot), [assign((name, pb), recorded)], [assign((name, pb), hot)])], s)
            hot_site = True
        elif (method_obj and not self.observed and not v.keywords and len(v.args) == 1
              and isinstance(v.args[0], (ast.Name, ast.Constant))):
            # `xp.sin(x)`, xp a module held in a variable (an array namespace): the same case, tried where
            # the argument is a float (`runtime.hot_float_call` answers None for a method or a non-math
            # function, and the twin then hands the call to `call`; an array is not asked)
            hot = f"_od_hot{pb[len('_od_pb'):]}"
            ask = if_exp(is_(call("__od_type__", user(v.args[0])), "__od_float__"),
                         call("__od_hot_float__", func, user(v.args[0])), const(None))
            fwd_call = fetch + at([assign(hot, ask), if_(is_none(hot), [assign((name, pb), recorded)],
                                                         [assign((name, pb), hot)])], s)
            hot_site = True
        if (isinstance(v.func, ast.Attribute) and v.func.attr in _LOOKUPS and v.args
                and not isinstance(v.args[0], ast.Starred) and self.is_active(v.args[0])):
            # `memo.get(x)`: a dict's hit by a differentiated key is refused (`helpers.key_lookup`)
            fwd_call = at([self.key_check("__od_key_lookup__", user(v.func.value), user(v.args[0]))], s) + fwd_call
        written = sorted(self.writers.get(v.func.id, ())) if isinstance(v.func, ast.Name) else []
        if written and (through := sorted(self.through.get(v.func.id, ()))):
            # it writes them through another closure it calls (`helper` calling `add`, whose `nonlocal s`):
            # their cotangents would come back inside that closure's, not to them (0 for 3)
            raise Unsupported(f"closure `{v.func.id}` writing `{through[0]}` through another closure it calls "
                              f"(call that one directly, or pass `{through[0]}` as an argument)", s)
        pre: list[ast.stmt] = []
        cell_flags: list[ast.stmt] = []
        if written:
            # the cotangents of variables the callee writes (nonlocal) flow into it and come back
            if rebinds := sorted(self.hazardous.get(v.func.id, set()) & set(written)):
                check = call("__od_plain_cells__", call("__od_locals__"), _strings(rebinds), const(v.func.id))
                cell_flags += at([expr_stmt(check)], s)
                fwd_call = fwd_call + at([expr_stmt(copy.deepcopy(check))], s)
            self.dvars.update(written)
            dself = "_od_cin"
            # arrays it changes in place (`v[...] *= 2` on a captured view): the caller's other variables
            # sharing their memory (`v = a[:-1]`) hand it their cotangents for it first, as for an in-place
            # change written here (they were left with them: lost)
            for n in sorted(self.changers.get(v.func.id, set()) & set(written) & self.active):
                flags_fwd, merge, flags = self.view_merge(n, s)
                cell_flags += flags_fwd
                pre += merge
                need += flags
            pre += ([assign("_od_cin", dict_((const(n) for n in written), (d(n) for n in written)))]
                    + [assign(d(n), const(None)) for n in written])
        # calls that may mutate array arguments in place see the cotangents the caller holds for them
        out_kw = next((k.value for k in v.keywords if k.arg == "out"), None)
        if isinstance(out_kw, ast.Name) and out_kw.id in self.one_tuples:
            out_kw = self.one_tuples[out_kw.id]  # (`np.sin(x, out=(o,))`: o is written)
        callee = v.func.attr if isinstance(v.func, ast.Attribute) else v.func.id if isinstance(v.func, ast.Name) else ""
        changed = _changed_array(callee, v, out_kw, self.is_active)
        pos = self.writes.get(id(v))
        if changed is None and pos is not None and pos < len(v.args) and isinstance(v.args[pos], ast.Name) and not any(
                isinstance(a, ast.Starred) for a in v.args[:pos + 1]):
            changed = v.args[pos]  # a primitive that declares the argument it overwrites
        view_fwd: list[ast.stmt] = []
        if changed is not None and self.is_active(changed):
            view_fwd, merge, flags = self.view_merge(changed.id, s)
            pre += merge
            need += flags
        # (by position, to the primitive's pullback itself: a call spreading its arguments, or reaching the
        # primitive through a wrapper, hands none, and a primitive asking is refused)
        handed: list[ast.stmt] = []
        if not any(isinstance(a, ast.Starred) for a in v.args) and all(k.arg for k in v.keywords) and (
                callee in _MUTATING_METHODS or out_kw is not None
                or (id(v) not in self.pure_calls and any(self.is_active(a) for a in v.args))):
            self.dvars.update(a.id for a in v.args if self.is_active(a))
            ins = tuple_(d(a.id) if self.is_active(a) else const(None) for a in v.args)
            if changed is None and callee not in _MUTATING_METHODS:  # (a primitive under another name?)
                bound = self.bound_before.get(id(s))
                own = {a.id for a in v.args if isinstance(a, ast.Name)} | {name}  # (joined by this call)
                viewed = sorted(a.id for a in v.args if self.is_active(a) and any(
                    m in self.active and m not in own and (bound is None or m in bound)
                    for m in self.view_groups.get(a.id, ())))
                if viewed:
                    ins = call("__od_viewed__", _strings([n for n in viewed if not n.startswith("_od_")]
                                                         or ["temporaries"]))
            handed.append(assign(_session("dins"), ins if method_obj or isinstance(ins, ast.Call)
                                 else call("__od_bare__", ins)))
        if out_kw is not None:  # (by name: whatever else the call spreads)
            if self.is_active(out_kw):
                self.dvars.add(out_kw.id)
            handed.append(assign(_session("dout"), tuple_([d(out_kw.id) if self.is_active(out_kw) else const(None)])))
        held_in = [if_(compare(item(pb, 0), ast.In(), "__od_held_backs__"), handed)] if handed else []
        # a Python callee may change array arguments in place: the forward notices a change during the
        # call (a counter) and notes which arguments are arrays and which other variables view them; the
        # adjoint then hands the cotangents it holds for them (with those views') to the callee, whose
        # returned cotangents are then their whole ones
        handed_fwd, viewed = self.handed(s, pb, v, name)
        if method_obj:
            # (a method reached through `super()` is bound to super's object; the name `super` here would
            # give the adjoint a `__class__` cell, and the builtin `type` may be a local of the adjoint: the
            # function read an attribute of `type` itself, which the adjoint restores under that name)
            is_super = compare(attr(attr(method_obj, "__class__"), "__name__"), ast.Eq(), const("super"))
            bound_to = if_exp(is_super, attr(method_obj, "__self__"), method_obj)
            # (a module, `xp.exp(x)`'s common case, first: its `__class__.__name__` is a slow lookup)
            bound_to = if_exp(is_(call("__od_type__", method_obj), "__od_module__"), method_obj, bound_to)
            own_stmt = assign("_od_own", is_(call("__od_getattr_of__", fn_var, const("__self__"), const(None)), bound_to))
            pre.append(own_stmt)
        pullback = assign("_od_r", call(item(pb, 0), pb, "_od_g", dself, "_od_S"))
        if handed_fwd:
            need.append(f"_od_w{self.npb}")
        body: list[ast.stmt] = []  # `_od_r[0]` is the callee's own cotangent (cells, or a method's object)
        if method_obj:
            via_attr = call("__od_getattr_adj__", "_od_S", d(method_obj), item("_od_r", 0), method_obj,
                            const(v.func.attr), fn_var, gpb)
            body.append(if_("_od_own", [assign(d(method_obj), item("_od_r", 0))],
                            [if_(not_none(item("_od_r", 0)), [assign(d(method_obj), via_attr)])]))
        else:
            read = sorted(self.readers.get(v.func.id, set()) & self.active) if isinstance(v.func, ast.Name) else []
            body += [assign(d(n), call("__od_cell_cot__", item("_od_r", 0), const(n))) for n in written]
            seen = {v.func.id} if isinstance(v.func, ast.Name) else set()
            for n in read:
                body += self.route(n, call("__od_cell_cot__", item("_od_r", 0), const(n)), seen)
            handled = tuple(written) + tuple(read)
            if self.is_active(v.func):
                rest = (call("__od_cell_cot__", item("_od_r", 0), const(None), _strings(handled)) if handled
                        else item("_od_r", 0))
                body += self.acc(v.func.id, rest)
        offset: int | ast.expr = 0
        for a in v.args:
            if isinstance(a, ast.Starred):
                inner = a.value
                if self.is_active(inner):
                    need.append(inner.id)
                    body += self.acc(inner.id, call("__od_slice_cot__", "_od_S", item("_od_r", 1), _offset(offset),
                                                    inner.id))
                offset = _after(offset, inner)
                if isinstance(inner, ast.Name) and inner.id not in need:
                    need.append(inner.id)
                continue
            if self.is_active(a):
                body += self.acc(a.id, item(item("_od_r", 1), _offset(offset)))
            offset = _after(offset)
        for k in v.keywords:
            value = out_kw if k.arg == "out" and out_kw is not None else k.value  # (`out=(o,)`: o's)
            if self.is_active(value):
                if k.arg is None:  # (`f(**m)`: refused where m reads its entries by code of its own)
                    body += self.acc(value.id, call("__od_kw_spread__", value.id, item("_od_r", 2)))
                    if value.id not in need:
                        need.append(value.id)
                else:
                    by_name = call(attr(item("_od_r", 2), "get"), const(k.arg))
                    body += self.acc(value.id, if_exp(item("_od_r", 2), by_name, const(None)))
        run = held_in + [pullback]
        if viewed is not None:  # (a Python callee: never one of the held backs)
            w, targets, dargs, douts = viewed
            run = [if_(is_none(w), run, [assign(targets, call("__od_call_viewed__", w, pb, "_od_g", dself, dargs,
                                                                douts, "_od_S"))])]
        if (not self.compact and not self.observed and not written and not v.keywords and len(v.args) == 1
                and self.is_active(v.args[0]) and pre == ([own_stmt] if method_obj else [])
                and not (isinstance(v.func, ast.Name) and self.is_active(v.func))
                and (hot_site or method_obj or self._module_callee(v.func))):
            adj = self.take(name) + [_given(pb, self.pulled_one(pb, v.args[0].id, method_obj, viewed, pre + run, body))]
        else:
            adj = self.take(name) + pre + [_given(pb, run + (body or [ast.Pass()]))]
        if handed_fwd and hot_site:
            # (a math function of a float, `hot_float_call`'s answer, changes nothing in place: the count of
            # changes is read around the general call only, and the other branch notes no change)
            branch = fwd_call[-1]  # `if _od_hotN is None: <the call> else: <its answer>`
            branch.body = handed_fwd[:1] + branch.body + handed_fwd[1:]
            branch.orelse = branch.orelse + at([assign(viewed[0], const(None))], s)
        elif handed_fwd:
            fwd_call = handed_fwd[:1] + fwd_call + handed_fwd[1:]
        spreads = [a.value for a in v.args if isinstance(a, ast.Starred)]
        named = [k.value for k in v.keywords if k.arg is None]
        if spreads or named:  # (what a spread passes cannot be handed: a Python callee changing it is refused)
            sc = f"_od_sc{self.npb}"
            # (and a positional argument after a spread: its position is not known here, `handed` does not hand
            # it; scipy's `dia_matvecs(*self.shape, *self.data.shape, ..., other, res)` filling res gave 0)
            after = [tuple_([user(a)]) for a in v.args[next((i for i, a in enumerate(v.args)
                                                              if isinstance(a, ast.Starred)), len(v.args)):]
                     if not isinstance(a, ast.Starred)]
            check = call("__od_spread_changed__", sc, pb, tuple_([*(user(x) for x in spreads), *after]),
                         tuple_(user(x) for x in named))
            fwd_call = (at([assign(sc, item("__od_changes__", 0))], s) + fwd_call
                        + at([if_(compare(item("__od_changes__", 0), ast.NotEq(), sc), [expr_stmt(check)])], s))
        return cell_flags + view_fwd + fwd_call, need, adj

    def _module_callee(self, func: ast.expr) -> bool:
        """func is a module's attribute (`np.exp`), the module a global: likely a primitive with a built-in
        pullback (`pulled_one`)."""
        return (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id not in self.own_names
                and isinstance(self.globals_.get(func.value.id), types.ModuleType))

    def pulled_one(self, pb: str, arg: str, method_obj: str | None, viewed, run: list[ast.stmt],
                   body: list[ast.stmt]) -> list[ast.stmt]:
        """The adjoint of a call `f(arg)` of a primitive's likely shape (a module's function, a math function of
        a float): where its pullback is a built-in one (`runtime.ONE_BACKS`) whose first case holds, arg's
        cotangent by that case (`runtime.pull_one`), without the pullback's call, its tuples and the method's-
        object test (`_od_own`: those pullbacks give the object no cotangent, so an object that has none yet is
        left as it is); the general statements `run` and `body` otherwise. `body` ends with the argument's
        cotangent `_od_r[1][0]` added: here taken into `_od_c` by either, and added after."""
        n = len(self.acc(arg, item(item("_od_r", 1), 0)))  # (the statements `body` ends with: arg's cotangent added)
        test = ([is_none(viewed[0])] if viewed is not None else []) + ([is_none(d(method_obj))] if method_obj else [])
        # (one statement: the adjoint's size, and so the first call's time, grows by little per site); a math
        # function of a float (`_float_back`, scalar code's every call) by `pull_one`'s first case inline, in a
        # `try` that costs nothing where nothing is raised: its partial at a singular point divides by zero,
        # and None sends the site to the pullback then, as `pull_one` does (whose other cases have no side
        # effects: the pullback computes again what raised)
        general = if_exp(and_(compare(item(pb, 0), ast.In(), "__od_one_backs__"), *test),
                         call("__od_pull_one__", pb, "_od_g"), const(None))
        floats = and_(is_(item(pb, 0), "__od_float_back__"), is_(call("__od_type__", "_od_g"), "__od_float__"),
                      compare("_od_g", ast.NotEq(), const(0.0)), *copy.deepcopy(test))
        partial = binop("_od_g", ast.Mult(), call(item(pb, 1), item(pb, 2), item(pb, 3)))
        fast = try_except([assign("_od_c", if_exp(floats, partial, general))], "__od_zero_division__",
                          [assign("_od_c", const(None))])
        slow = run + body[:-n] + [assign("_od_c", item(item("_od_r", 1), 0))]
        out = [fast, if_(is_none("_od_c"), slow)]
        for node in out:  # (`show_adjoint` prints the general statements: `show._fold`)
            node._od_pulled = node is not out[-1]
        return out + self.acc(arg, "_od_c")

    def handed(self, s, pb: str, v: ast.Call, target: str | None = None) -> tuple[list[ast.stmt], tuple | None]:
        """For a call whose callee may change its array arguments in place: forward statements (the first
        before the call, the rest after it), and for the adjoint (the variable `_od_wK`, the targets
        `__od_call_viewed__`'s results go to, the cotangents handed to it); nothing for calls without
        active positional arguments. `target`: the variable the call's result is assigned to — after
        `y = f(y)` the name holds the result, so the arguments are taken before the call, and a view
        rebound so holds no cotangent of the old memory."""
        f = v.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in self.private:
            return [], None  # (`row.append(x)` on a list made here: a C method, never a Python callee)
        # the positional arguments before any `*spread` (their positions are known), then the named keyword
        # arguments (`output=out`, by name); what a `*spread` or `**spread` passes is not handed
        names: list[str | None] = []
        for a in v.args:
            if isinstance(a, ast.Starred):
                break
            names.append(a.id if self.is_active(a) and a.id not in names else None)
        npos = len(names)
        kwnames = [kw.arg for kw in v.keywords if kw.arg is not None]
        for kw in v.keywords:
            if kw.arg is not None:
                names.append(kw.value.id if self.is_active(kw.value) and kw.value.id not in names else None)
        # a method's object: arrays its fields hold, changed by the method (`self.a += v`), may be the
        # caller's too (`Box(a).add(v)`): their cotangents go into its box before the method's pullback
        holder = f.value.id if (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                                and self.is_active(f.value) and f.value.id not in names) else None
        if not any(names) and holder is None:
            return [], None
        k = self.npb
        c, w = f"_od_c{k}", f"_od_w{k}"
        self.single_use.difference_update(n for n in names if n)  # merged into before the call's own
        bound = self.bound_before.get(id(s))
        args = {n for n in names if n}
        # (a function of its own holds its defaults' objects: `def add(v, store=hist)` appends to hist)
        fn = {f.id} if isinstance(f, ast.Name) and self.is_active(f) else set()
        others = sorted({m for n in args | ({holder} if holder else set()) | fn for m in self.view_groups.get(n, ())
                         if m in self.active and m not in args and m != target and m != holder and m not in fn
                         and (bound is None or m in bound)} | (self.module_arrays - args)
                        | (self.state_cells - args - {holder, target}))
        if not any(names) and not others:
            return [], None
        values = tuple_(n or const(None) for n in names)
        taken, others_now = self.bound_now(others, f"_od_o{k}")
        unchanged = compare(item("__od_changes__", 0), ast.Eq(), c)
        before = assign(c, item("__od_changes__", 0))
        if target in args:  # `y = f(y)`: the argument, taken before the name is rebound to the result
            before = assign((c, f"_od_hv{k}"), tuple_([item("__od_changes__", 0), values]))
            values = load(f"_od_hv{k}")
        views = call("__od_call_views__", pb, values, others_now, const(npos), _strings(kwnames), c,
                     load(holder) if holder else const(None))
        fwd = at([before, assign(w, if_exp(unchanged, const(None), views)) if not taken else
                  if_(unchanged, [assign(w, const(None))], taken + [assign(w, views)])], s)
        self.dvars.update(args | set(others))
        dargs = tuple_(d(n) if n else const(None) for n in names)
        douts = [d(m) for m in others]
        targets = (tuple(d(n) if n else "_" for n in names), douts if others else "_", "_od_r")
        return fwd, (w, targets, dargs, tuple_(douts))

    def _display_result(self, s, name, v):
        """(forward statement, the name the adjoint reads the display's own object by): a display holding
        the variable it is assigned to (`key = (key,)`, numpy's `AxisConcatenator.__getitem__`) also binds
        its object to a name of its own; the block snapshots the old value of `key` for the reads, and the
        adjoint's box must be the new object's, not the old one's."""
        if not any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(v)):
            return s, name
        self._n_results = getattr(self, "_n_results", 0) + 1  # (one per display: a block records each)
        alias = f"_od_res{self._n_results}_{name}"
        bound = ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store()), ast.Name(id=alias, ctx=ast.Store())],
                           value=s.value)
        return ast.copy_location(bound, s), alias

    def build_seq(self, s, name, v):
        inner: list[ast.stmt] = []
        offset: int | ast.expr = 0
        s, obj = self._display_result(s, name, v)
        need = [obj]
        for e in v.elts:
            if isinstance(e, ast.Starred):
                x = e.value
                if self.is_active(x):
                    inner += self.acc(x.id, call("__od_slice_cot__", "_od_S", "_od_gs", _offset(offset), x.id))
                if isinstance(x, ast.Name):
                    need.append(x.id)
                offset = _after(offset, x)
                continue
            if self.is_active(e):
                inner += self.acc(e.id, item("_od_gs", _offset(offset)))
            offset = _after(offset)
        adj = self.take(name) + [assign("_od_gs", call("__od_display_adj__", "_od_S", "_od_g", obj)), _given("_od_gs", inner)]
        return [s], need, adj

    def build_dict(self, s, name, v):
        inner: list[ast.stmt] = []
        s, obj = self._display_result(s, name, v)
        need = [obj]
        consts = [k.value for k in v.keys if isinstance(k, ast.Constant)]
        # a later entry (or `**spread`) may overwrite an earlier key: each value's cotangent is then that of
        # the key's last write, found at run time
        overwrites = None in v.keys or (len(v.keys) > 1 and (len(consts) < len(v.keys)
                                                             or len(set(map(repr, consts))) < len(consts)))
        if overwrites:
            parts = tuple_(tuple_([const(k is None), user(val if k is None else k)])
                           for k, val in zip(v.keys, v.values))
            inner.append(assign("_od_gp", call("__od_dict_parts__", "_od_gd", parts)))
        for i, (k, val) in enumerate(zip(v.keys, v.values)):
            for x in ((val,) if k is None else (k,)):
                if isinstance(x, ast.Name) and (overwrites or k is not None):
                    need.append(x.id)
            if not self.is_active(val):
                continue
            if overwrites:
                inner += self.acc(val.id, item("_od_gp", i))
            elif k is None:
                inner += self.acc(val.id, "_od_gd")
            else:
                inner += self.acc(val.id, call(attr("_od_gd", "get"), user(k)))
        adj = self.take(name) + [assign("_od_gd", call("__od_display_adj__", "_od_S", "_od_g", obj)),
                                 _given("_od_gd", inner)]
        # a key carries no cotangent back (`{x: 1.0}`, then `list(d)[0]`): refused when it may carry one
        guards = [self.key_check("__od_key_guard__", load(obj), k) for k in v.keys if k is not None and self.is_active(k)]
        return [s] + at(guards, s), need, adj

    def route(self, name: str, expr: ast.expr, seen: set[str]) -> list[ast.stmt]:
        """Adjoint statements adding cotangent `expr` to variable `name`, read by a closure called here; when
        `name` is itself a closure made here and called only by name (`def h(): return g(1.0)`), its
        own captured variables get their parts now, at their bindings of this moment, as `g` reads them."""
        inner = sorted(self.readers.get(name, set()) & self.active - seen)
        if name in seen or not inner:
            return self.acc(name, expr)
        seen = seen | {name}
        c = self.fresh("_od_cc")
        out = [assign(c, expr)]
        for m in inner:
            out += self.route(m, call("__od_cell_cot__", c, const(m)), seen)
        return out + self.acc(name, call("__od_cell_cot__", c, const(None), _strings(inner)))

    def reach(self, node) -> set[str]:
        """The variables a closure reads, also through the closures made here that it reads."""
        out, todo = set(), [node]
        while todo:
            n = todo.pop()
            for m in free_names(n, False) - out:
                out.add(m)
                if m in self.made:
                    todo.append(self.made[m])
        return out

    def check_class(self, node: ast.ClassDef) -> None:
        """A class made here whose methods (or body, or defaults) read a differentiated variable: its
        methods' cells are not differentiated through (they are reached through the class), refused."""
        stores = {n.id for n in all_nodes(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        params = {p for n in all_nodes(node) if isinstance(n, ast.arguments) for p in param_names(n)}
        loads = {n.id for n in all_nodes(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        read = sorted((loads - stores - params) & self.active)
        if read:
            raise Unsupported(
                f"class `{node.name}` defined here whose body reads the differentiated variable `{read[0]}` "
                f"(pass it to the constructor instead: `self.{read[0]} = {read[0]}`)", node)

    def made_closure(self, name, node, stmt):
        """(forward, saved, adjoint) of making closure `name`: its cells' cotangents go to the variables'
        bindings of now; the cells of variables that may be assigned again are guarded (`check_closure`)."""
        guarded = self.check_closure(name, node, stmt)
        adj = self.closure(name, node)
        arrays = [names for key, names in self.array_cells if key == id(stmt)]
        unbound = [names for key, names in self.unbound_cells if key == id(stmt)]
        if arrays or unbound:  # (captured arrays it stores items into, lists it appends to: refused,
            # `runtime.closure_arrays`)
            stmt = [stmt] + at([expr_stmt(call("__od_closure_arrays__", name, _strings(arrays[0] if arrays else []),
                                               _strings(unbound[0] if unbound else [])))], stmt)
            if not guarded:
                return stmt, [], adj
        else:
            stmt = [stmt]
        if name in self.escaping:  # (when, and what it reads that is differentiated: `runtime.closure_made`)
            read = sorted(free_names(node, False) & self.active)
            # (by its name in the frame's locals: the statements of a block may be run again where the closure's
            # temporary is not bound, an adjoint recomputing a block: an UnboundLocalError)
            made_now = call(attr(call("__od_locals__"), "get"), const(name))
            stmt = stmt + at([expr_stmt(call("__od_closure_made__", made_now, _strings(read)))], stmt[0])
        if not guarded:
            return stmt, [], adj
        made = self.fresh("_od_gc")  # (the closure as made: `name` may be rebound, `g = deco(g)`)
        guard = at([assign(made, call("__od_guard_cells__", name, _strings(guarded)))], stmt[0])
        return stmt + guard, [made], adj + [expr_stmt(call("__od_unguard__", made))]

    def check_closure(self, name, node, stmt) -> list[str]:
        """A closure's cells are read when it is called, so its cotangent belongs to the variables'
        bindings at the call: direct calls by name route it there (`readers`). A closure that escapes
        (stored, passed, returned, decorated) hands it back where it was made, which is right for the
        variables no assignment can change after it is made. The cells it reads of those that may be
        assigned again are returned: they are guarded at run time (every call of the closure checks that
        they still hold the values they held when it was made: `runtime.guard_cells`). Refused: a
        variable read through another closure or unbound when it is made, and an escaping closure
        writing `nonlocal`s."""
        # a generator runs eagerly here: it reads its cells when made, Python when resumed
        generator = isinstance(node, ast.FunctionDef) and is_generator(node)
        if name not in self.escaping and not generator:
            return []
        kind = "a generator (run eagerly when made)" if generator else "passed on or stored"
        # (active or not: a count or a flag it reads steers what it yields too)
        changed = sorted(free_names(node, False) & changed_in_place(self.fdef)) if generator else []
        if changed:
            raise Unsupported(
                f"generator {name} reading `{changed[0]}`, which this function changes in place: reverse mode "
                f"runs generators eagerly, so it would read the value before the changes "
                f"(build the list of values first, or pass them as arguments)", node)
        written = sorted(nonlocal_writes(node) & self.active) if isinstance(node, ast.FunctionDef) else []
        bound = self.bound_before.get(id(stmt))
        free = self.reach(node) & self.active - set(written) - {name}
        after = _bound_after(self.fdef, stmt)
        late = sorted(n for n in free | (self.reach(node) & set(self.made)) - {name}
                      if n in after or (bound is not None and n not in bound))
        own = free_names(node, False)
        guarded = [] if generator else [n for n in late if n in own and (bound is None or n in bound)]
        late = [n for n in late if n not in guarded]
        name = "lambda" if name.startswith("_od_") else f"`{name}`"
        if written:
            raise Unsupported(
                f"closure {name} that is {kind}, writing the differentiated variable "
                f"`{written[0]}` (`nonlocal`) (call it directly by name, or return the value instead)", node)
        methods, items = _changed_captures(node)
        if not generator and (unbound := sorted(n for n in methods & self.active if n not in after)):
            # (a variable not bound again after the closure is made: unbound then, bound only under a flag
            # (`if return_history: hist = []`), its method call would raise, nothing is changed; checked when
            # made, irt-parameter-estimation's `mle_zlc`; bound, refused there)
            self.unbound_cells.append((id(stmt), unbound))
            methods = methods - set(unbound)
        if not generator and (changed := sorted(methods & self.active)):
            # (its cotangent after the change, the caller's, cannot reach the closure's adjoint: a list
            # appended to in a function given to map or as a key came back 0)
            raise Unsupported(
                f"closure {name} that is {kind}, changing `{changed[0]}` in place by a method call (as "
                f"`{changed[0]}.append(...)`), a variable it captures that may hold a differentiated value where "
                f"it runs (call it directly by name, or pass `{changed[0]}` to it as an argument)", node)
        if not generator and (changed := sorted(items & self.active)):
            self.array_cells.append((id(stmt), changed))  # (an array's item store: refused when made)
        if late:
            raise Unsupported(
                f"closure {name} that is {kind}, reading `{late[0]}`, a differentiated variable "
                f"assigned more than once, in a loop or after it: its cell is read when the closure is called "
                f"(bind it when the closure is made: `lambda t, {late[0]}={late[0]}: ...`)", node)
        return guarded

    def closure(self, name, node):
        inner: list[ast.stmt] = []
        for n in sorted(free_names(node, False) & self.active):
            inner += self.acc(n, call("__od_cell_cot__", "_od_g", const(n)))
        # default values: their cotangents are the made function's `__defaults__` / `__kwdefaults__` ones
        args = node.args
        for i, x in enumerate(args.defaults):
            if self.is_active(x):
                inner += self.acc(x.id, call("__od_cell_cot__", "_od_g", tuple_([const("__defaults__"), const(i)])))
        for a, x in zip(args.kwonlyargs, args.kw_defaults):
            if x is not None and self.is_active(x):
                inner += self.acc(x.id, call("__od_cell_cot__", "_od_g", tuple_([const("__kwdefaults__"), const(a.arg)])))
        return self.take(name) + [_given("_od_g", inner)]

    def setattr_(self, s, t, v):
        obj, field_name = t.value.id, t.attr
        u = self.fresh("_od_u")
        # (a constant where it is stored, though its variable is active: `_constant_stores`)
        carried = self.is_active(v) and id(s) not in self.constant_stores
        fwd = at([assign(u, call("__od_setattr__", obj, const(field_name), user(v), const(carried)))], s)
        self.dvars.add(obj)
        adj = [assign((d(obj), "_od_gv"), call("__od_setattr_adj__", "_od_S", d(obj), obj, const(field_name), u))]
        if self.is_active(v):
            adj += self.acc(v.id, "_od_gv")
        need = [obj, u]
        fwd, adj = self.held_views(s, obj, u, fwd, adj, need)
        return fwd, need, adj

    def setitem_(self, s, t, v):
        obj = t.value.id
        u = self.fresh("_od_u")
        flags_fwd, merge, flags = self.view_merge(obj, s)
        fwd = flags_fwd + at([assign(u, call("__od_setitem__", obj, index_value(t.slice), user(v)))], s)
        if self.is_active(t.slice):  # `d[x] = v`: a dict's key carries no cotangent back
            fwd = at([self.key_check("__od_key_guard__", load(obj), t.slice)], s) + fwd
        if self.is_active(v) and isinstance(v, ast.Name):  # (an object numpy converts unrecorded: refused)
            fwd = at([if_(compare(attr(v.id, "__class__"), ast.NotIn(), "__od_plain_values__"),  # (no `type`: a
                          # function's own variable may be named so, scipy's `detrend(data, type=...)`)
                          [expr_stmt(call("__od_converted_store__", obj, v.id))], [])], s) + fwd
        self.dvars.add(obj)
        adj = merge + [assign((d(obj), "_od_gv"), call("__od_setitem_adj__", "_od_S", d(obj), obj,
                                                        index_value(t.slice), user(v), u))]
        if self.is_active(v):
            adj += self.acc(v.id, "_od_gv")
        need = [obj] + _names_in(t.slice) + ([v.id] if isinstance(v, ast.Name) else []) + [u] + flags
        fwd, adj = self.held_views(s, obj, u, fwd, adj, need)
        return fwd, need, adj

    def held_views(self, s, obj, u, fwd, adj, need):
        """Around a store that Python code of obj's class may make (a property's setter for `obj.a = v`, its
        own `__setitem__` for `obj[k] = v`: `u` a `_SetByCode`), changing in place an array the object holds
        that other variables share (`m.level = t` doing `self.out[:] = ...` on the caller's `out`; `t[:2] = v`
        on `t = z[1:]` of a class keeping a view of z's array, array_api_strict's `Array`): their cotangents
        go into the object's box before the code's pullback, as for a method's (`call_viewed`)."""
        bound = self.bound_before.get(id(s))
        others = sorted(m for m in self.view_groups.get(obj, ()) if m in self.active and m != obj
                        and (bound is None or m in bound))
        if not others:
            return fwd, adj
        c, k = self.fresh("_od_sc"), self.fresh("_od_sk")
        taken, others_now = self.bound_now(others, self.fresh("_od_so"))
        fwd = at([assign(c, item("__od_changes__", 0))], s) + fwd + at([if_(
            compare(item("__od_changes__", 0), ast.Eq(), c), [assign(k, const(None))],
            taken + [assign(k, call("__od_setattr_views__", u, obj, others_now, c))])], s)
        self.dvars.update(others)
        douts = [d(m) for m in others]
        adj = [if_(not_none(k), [assign((d(obj), douts), call("__od_setattr_merge__", "_od_S", k, d(obj),
                                                                tuple_(douts)))], [])] + adj
        need.append(k)
        return fwd, adj

    # -- the adjoint function -------------------------------------------------------------------
    def adjoint_function(self, name: str, cells: list[str], fixed: frozenset = frozenset(),
                         floats: tuple = ({}, frozenset())) -> ast.FunctionDef:
        init = [assign(d(n), const(None)) for n in sorted(self.dvars | set(self.params) | set(cells))]
        if cells:
            init.append(_given("_od_dcells", [assign(d(c), call(attr("_od_dcells", "get"), const(c))) for c in cells]))
        hot = sorted(self.adjoints, key=lambda k: (-self.depth_of.get(k, 0), k))
        if self.params:  # the cotangent of `self` after a method call flows in (mutated objects)
            init.append(_given("_od_dself", [assign(d(self.params[0]), "_od_dself")]))
        if self.entry:  # array arguments changed in place: their cotangents after the call flow in
            init.append(_given("_od_dins", [assign(d(name), item("_od_dins", j))
                                            for j, name in sorted(self.entry.items())]))
            self.dvars.update(self.entry.values())
            init = [assign(d(n), const(None)) for n in sorted(self.entry.values())] + init
        names = ("_od_S", "_od_tape", "_od_dret", "_od_dcells", "_od_dself", "_od_dins")
        args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in names], vararg=None, kwonlyargs=[],
                             kw_defaults=[], kwarg=None, defaults=[const(None) for _ in range(3)])
        few = len(hot) <= 3  # (an if-chain reads the record's block id where it is: no `_od_k`, per record)
        records = ast.For(target=store("_od_rec"), iter=call("__od_reversed__", "_od_tape"),
                          body=[] if few else [assign("_od_k", item("_od_rec", 0))], orelse=[], type_comment=None)
        cellmap = dict_((const(c) for c in cells), (d(c) for c in cells))
        cotangents = tuple_([tuple_(d(p) for p in self.params), cellmap])
        # the cotangents of module lists and dicts read here, left when the records are done: into their boxes,
        # where the adjoints of changes made to them elsewhere find them (`get()` returning a module list a
        # callee appended a differentiated value to, then `sum(get())`: dropped here, 0 for its part)
        # (read by name from the module's globals: a name the records restore is a local of the adjoint, unbound
        # where no record did, scipy_sparse's `_DOK_OWN`)
        left = [assign(d(m), call("__od_state_box__", "_od_S", const(m), d(m), call("globals")))
                for m in sorted(self.module_containers) if m in self.dvars]
        fn = ast.FunctionDef(name=name, args=args, body=init + [records, *left, ast.Return(value=cotangents)],
                             decorator_list=[], returns=None, type_comment=None)
        at([fn], self.fdef)
        # each block's adjoint keeps the lines of the statements it mirrors
        if _carried_floats(self.adjoints, fixed, floats):  # (no fused case has run before the first record)
            fn.body[-2:-2] = at([assign("_od_ran", const(None))], self.fdef)
        records.body += _dispatch(hot if few else sorted(self.adjoints), self.adjoints, self.fdef)
        return fn


class _Scope:
    """Names bound in one straight run of statements (a function's body, a branch, a loop's body), each
    with the time (`_bound_before`'s clock) it was bound at; the enclosing run's bindings count up to
    `since`, the time this one was entered."""

    __slots__ = ("parent", "since", "first")

    def __init__(self, parent: "_Scope | None", since: int, names=()):
        self.parent, self.since = parent, since
        self.first: dict[str, int] = dict.fromkeys(names, -1)


class _BoundAt:
    """The variables that may be bound when one statement runs, as a membership test (copies of the set
    per statement took time and memory quadratic in the function's length)."""

    __slots__ = ("scope", "time")

    def __init__(self, scope: _Scope, time: int):
        self.scope, self.time = scope, time

    def __contains__(self, name) -> bool:
        scope, time = self.scope, self.time
        while scope is not None:
            if scope.first.get(name, time) < time:
                return True
            scope, time = scope.parent, scope.since
        return False


_TRIES = (ast.Try, ast.TryStar) if hasattr(ast, "TryStar") else (ast.Try,)


def _bound_before(fdef, params) -> dict[int, _BoundAt]:
    """For each statement (by id): the variables that may be bound when it runs (assigned before it, or
    anywhere in a loop around it, or parameters and cells), as a membership test."""
    out: dict[int, _BoundAt] = {}
    clock = 0

    def stores(node) -> set[str]:
        return {n.id if isinstance(n, ast.Name) else n.name for n in all_nodes(node)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                or isinstance(n, (ast.FunctionDef, ast.ClassDef))}

    def walk(stmts, scope: _Scope) -> None:
        nonlocal clock
        for st in stmts:
            out[id(st)] = _BoundAt(scope, clock)
            clock += 1
            if isinstance(st, (ast.For, ast.While)):
                inner = _Scope(scope, clock, stores(st))
                walk(st.body, inner)
                walk(st.orelse, inner)
            elif isinstance(st, _TRIES):  # (its else, handlers and finally run after some or all of its body:
                # what the body binds may be bound there; astropy's `try: scale = ...` then `else: return lambda
                # val: scale * val` was refused as reading a cell unbound when the lambda was made)
                walk(st.body, _Scope(scope, clock))
                tried = _Scope(scope, clock, set().union(*(stores(b) for b in st.body)))
                for part in [st.orelse, st.finalbody] + [h.body for h in st.handlers]:
                    walk(part, _Scope(tried, clock))
            elif isinstance(st, (ast.If, ast.With, ast.Try, ast.Match)):  # each branch from what is bound now
                parts = [getattr(st, f, ()) for f in ("body", "orelse", "finalbody")]
                for part in parts + [b.body for b in getattr(st, "handlers", []) + getattr(st, "cases", [])]:
                    walk(part, _Scope(scope, clock))
            for name in stores(st):
                scope.first.setdefault(name, clock)
            clock += 1
    free = {n.id for n in all_nodes(fdef) if isinstance(n, ast.Name)}  # cells and globals: bound throughout
    walk(fdef.body, _Scope(None, 0, set(params) | (free - set().union(*(stores(st) for st in fdef.body)))))
    return out


def _own_stores(node) -> set[str]:
    """The names a statement binds or deletes in its function's scope (a nested function's or class's
    name, not the names bound inside it)."""
    out: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            # what is evaluated when it is made (its body is another scope)
            if not isinstance(n, ast.Lambda):
                out.add(n.name)
            made = n.decorator_list if not isinstance(n, ast.Lambda) else []
            made = made + (n.bases + n.keywords if isinstance(n, ast.ClassDef)
                           else n.args.defaults + [x for x in n.args.kw_defaults if x is not None])
            stack.extend(made)
            continue
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            out.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            out.add(n.rest)
        elif isinstance(n, ast.alias):
            out.add((n.asname or n.name).partition(".")[0])
        stack.extend(ast.iter_child_nodes(n))
    return out


def _bound_after(fdef, stmt) -> set[str]:
    """The variables of fdef that may be bound again once `stmt` has started: by it or a statement after
    it, by any statement of a loop around it, or (`nonlocal`) by a function defined in fdef, whenever that
    runs. A variable outside this set holds, for as long as fdef runs, the value it had when stmt began
    (Python's structured control flow: a statement runs after `stmt` only if it comes later in the
    source or shares a loop with it)."""
    out: set[str] = set()
    found = False

    def walk(stmts) -> bool:
        """Add what the statements bind at or after stmt; True when stmt is among them (or inside)."""
        nonlocal found
        inside = False
        for st in stmts:
            if found:
                out.update(_own_stores(st))
                continue
            if st is stmt:
                found = inside = True
                out.update(_own_stores(st))
                continue
            parts = [getattr(st, f, None) or [] for f in ("body", "orelse", "finalbody")]
            parts += [h.body for h in getattr(st, "handlers", [])] + [c.body for c in getattr(st, "cases", [])]
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                parts = []
            if any([walk(p) for p in parts]):  # (every part: those after stmt's add their bindings)
                inside = True
                if isinstance(st, (ast.For, ast.AsyncFor, ast.While)):  # each statement of the loop reruns
                    out.update(_own_stores(st))
        return inside

    walk(fdef.body)
    if not found:  # (not a statement of fdef: everything may come after it)
        out.update(_own_stores(fdef))
    for n in all_nodes(fdef):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n is not fdef:
            out.update(nonlocal_writes(n))
    return out


def _check_shared_changes(lowered, globals_: dict) -> None:
    """A generator function runs eagerly in reverse mode, all of it when called: refused when it changes in
    place what its caller may see between two items — a parameter's object, a captured or global
    variable's, or any local but one it made itself (`st.v = x * i` before `yield i`, the consumer reading
    `st.v`, would give the last value every time). Made itself: every binding of the local is a display,
    a comprehension, arithmetic, a known constructor (`np.zeros(n)`, `list(v)`, `v.copy()`) or a call of a
    module's class whose instances are made by `object.__new__` (`Point(x, y)`)."""
    params = set(param_names(lowered.args))
    values: dict[str, list] = {}
    for name, value in name_stores(lowered):
        values.setdefault(name, []).append(value)
    assigned = {id(t) for n in all_nodes(lowered) if isinstance(n, ast.Assign) for t in n.targets}
    other = {n.id for n in all_nodes(lowered) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
             and id(n) not in assigned}  # (loop targets, `with ... as`, ...: bound to what something holds)
    bound = params | other | set(values)  # (a local `Point` is not the module's class)
    own = {name for name, vs in values.items()
           if name not in params and name not in other and all(_made_here(v, globals_, bound) for v in vs)}
    # (`n -= 1` on a variable is a number's rebinding or an array's change: told apart at run time)
    hit = sorted(n for n in changed_in_place(lowered, augmented_names=False) if n not in own)
    if hit:
        raise Unsupported(
            f"generator changing `{hit[0]}` in place, which its caller may read between items: reverse mode "
            f"runs a generator to its end when it is called, so the caller would see only the last change "
            f"(yield the values instead, or return a list)", lowered)
    _guard_augmented(lowered, own)


_IN_PLACE_DUNDERS = {ast.Add: "__iadd__", ast.Sub: "__isub__", ast.Mult: "__imul__", ast.Div: "__itruediv__",
                     ast.FloorDiv: "__ifloordiv__", ast.Mod: "__imod__", ast.Pow: "__ipow__",
                     ast.MatMult: "__imatmul__", ast.LShift: "__ilshift__", ast.RShift: "__irshift__",
                     ast.BitOr: "__ior__", ast.BitXor: "__ixor__", ast.BitAnd: "__iand__"}


def _guard_augmented(lowered, own: set) -> None:
    """Before each `v op= ...` of a generator on a variable it did not make itself (a parameter's array,
    `a += g` between yields), `__od_eager_inplace__(v, ...)`: refused at run time where v's value changes
    in place (an array, a list), passed where the operator rebinds (a number: a counter, a running total)."""
    def guarded(body: list) -> list:
        out = []
        for s in body:
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(s, field, None)
                if type(inner) is list and not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    setattr(s, field, guarded(inner))
            for h in getattr(s, "handlers", ()) or ():
                h.body = guarded(h.body)
            for case in getattr(s, "cases", ()) or ():
                case.body = guarded(case.body)
            value = getattr(s, "value", None)
            if (isinstance(s, ast.Assign) and getattr(value, "_od_inplace", False) and len(s.targets) == 1
                    and isinstance(t := s.targets[0], ast.Name) and t.id not in own
                    and isinstance(value.left, ast.Name) and value.left.id == t.id):
                check = ast.Call(func=ast.Name(id="__od_eager_inplace__", ctx=ast.Load()),
                                 args=[ast.Name(id=t.id, ctx=ast.Load()), ast.Constant(t.id),
                                       ast.Constant(_IN_PLACE_DUNDERS[type(value.op)])], keywords=[])
                out.append(ast.copy_location(ast.Expr(value=check), s))
            out.append(s)
        return out
    lowered.body = guarded(lowered.body)


def held_globals(fdef, globals_: dict, own: set, active: set) -> tuple[frozenset, dict]:
    """(the names fdef reads of module globals holding state — a list, dict, set, array or an object — and of
    its own variables bound to one, `d = STORE`; per module global read as `mod.attr`, the attributes holding
    state) that the activity analysis left constant: `_Gen.read_guards` checks them where read."""
    names: set[str] = set()
    attributes: dict[str, set[str]] = {}
    for n in all_nodes(fdef):
        if not isinstance(getattr(n, "ctx", None), ast.Load):
            continue
        if isinstance(n, ast.Name) and n.id not in own and n.id not in active and holds_state(
                globals_.get(n.id, _NOTHING)):
            names.add(n.id)
        elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id not in own and (
                type(module := globals_.get(n.value.id)) is types.ModuleType) and holds_state(
                vars(module).get(n.attr, _NOTHING)):
            attributes.setdefault(n.value.id, set()).add(n.attr)
    names |= _attribute_readers(fdef, globals_, own) - set(active)
    # (a class reached from an object, `t = type(self)`, `t = self.__class__`: its attributes are state its
    # objects share, `type(self).items.append(v)`; checked whatever they hold, found at run time)
    for n in all_nodes(fdef):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(t := n.targets[0], ast.Name) and (
                t.id not in active) and (isinstance(v := n.value, ast.Call) and isinstance(v.func, ast.Name)
                                         and v.func.id == "type" and "type" not in own and "type" not in globals_
                                         and len(v.args) == 1 and not v.keywords
                                         or isinstance(v, ast.Attribute) and v.attr == "__class__"
                                         or isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name)
                                         and v.value.id not in own
                                         and type(module := globals_.get(v.value.id)) is types.ModuleType
                                         and isinstance(k := vars(module).get(v.attr), type)
                                         and k.__flags__ & HEAPTYPE):
            attributes[t.id] = _ANY_ATTRIBUTE  # (and a class of another module, `cfg.Registry.cache`)
        elif isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(t := n.targets[0], ast.Name) and (
                t.id not in active) and _module_reached(n.value, globals_, own):
            names.add(t.id)  # (a module's namespace or a module reached by name: `cfg.__dict__`, `vars(cfg)`,
            # `importlib.import_module("cfg")`, `getattr(cfg, "STORE")`: what is read through it is checked)
        elif isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(t := n.targets[0], ast.Name) and (
                t.id not in active) and isinstance(n.value, ast.Call) and (
                fn := _global_function(n.value.func, globals_, own)) is not None and state_reads_key(fn) is not None:
            names.add(t.id)  # (what a function reading module state returns may be that state: `d = get_store()`)
    if not names and not attributes:
        return frozenset(), {}
    grown = True
    while grown:  # (the variables bound to one or to a part of one: `d = STORE`, the lowering's `_od_t3 =
        grown = False  # cfg.STORE`, `sub = STORE["sub"]`, `m = sys.modules["cfg"]`, `s = m.STORE`)
        for n in all_nodes(fdef):
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(t := n.targets[0], ast.Name) and (
                    t.id not in names and t.id not in active) and (
                    isinstance(v := n.value, ast.Name) and v.id in names
                    or isinstance(v, (ast.Attribute, ast.Subscript)) and isinstance(v.value, ast.Name) and (
                        v.value.id in names or isinstance(v, ast.Attribute) and v.attr in attributes.get(v.value.id, ()))
                    or isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "getattr"
                    and v.args and isinstance(v.args[0], ast.Name) and v.args[0].id in names
                    or isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "get"
                    and isinstance(v.func.value, ast.Name) and v.func.value.id in names):
                names.add(t.id)
                grown = True
    return frozenset(names), {k: v if v is _ANY_ATTRIBUTE else frozenset(v) for k, v in attributes.items()}


def _global_function(f, globals_: dict, own: set):
    """The Python function a callee `name` or `module.name` names in globals_, or None."""
    if isinstance(f, ast.Name) and f.id not in own:
        fn = globals_.get(f.id)
    elif (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id not in own
          and type(module := globals_.get(f.value.id)) is types.ModuleType):
        fn = vars(module).get(f.attr)
    else:
        return None
    return fn if type(fn) is types.FunctionType else None


def _module_reached(v, globals_: dict, own: set) -> bool:
    """v reads a module's namespace or a module by name: `cfg.__dict__`, `vars(cfg)`, `getattr(cfg, name)` of a
    module global, `importlib.import_module(name)`, `__import__(name)`."""
    def module(e) -> bool:
        return isinstance(e, ast.Name) and e.id not in own and type(globals_.get(e.id)) is types.ModuleType
    if isinstance(v, ast.Attribute):
        return v.attr == "__dict__" and module(v.value)
    if not isinstance(v, ast.Call):
        return False
    f = v.func
    if isinstance(f, ast.Name) and f.id not in own and f.id not in globals_:  # (the builtins)
        return f.id == "__import__" or f.id in ("vars", "getattr") and bool(v.args) and module(v.args[0])
    return (isinstance(f, ast.Attribute) and f.attr == "import_module" and module(f.value)
            or isinstance(f, ast.Name) and f.id == "import_module" and globals_.get(f.id) is _import_module)


_import_module = __import__("importlib").import_module


STATE_READS: dict[int, tuple] = {}
"""key -> the places holding state that a Python function called plainly reads, it or the functions it calls
by name or holds (`helpers.state_call` checks them): (a module's namespace, a name), (a cell, None) or (None, an
object a default holds). Kept for the program's life: the functions are a module's, resolved from its globals."""
_STATE_KEYS: dict = {}  # id(code) -> (code, key or None)


def state_reads_key(fn) -> int | None:
    code = fn.__code__
    hit = _STATE_KEYS.get(id(code))
    if hit is not None and hit[0] is code and hit[2] is fn.__globals__:
        return hit[1]
    places = tuple({(id(a), b if type(b) is str else id(b)): (a, b) for a, b in _state_places(fn, 0, set())}.values())
    key = None
    if places:
        key = len(STATE_READS) + 1
        STATE_READS[key] = places
    if len(_STATE_KEYS) > 4096:
        _STATE_KEYS.clear()
    _STATE_KEYS[id(code)] = (code, key, fn.__globals__)
    return key


def _state_places(fn, depth: int, seen: set) -> list:
    """(namespace, name) of the module state fn's code reads: a global holding state (`STORE`), a module's
    attribute holding state (`cfg.STORE`), and those of the global functions it calls, three deep."""
    code, g = fn.__code__, fn.__globals__
    if id(code) in seen:
        return []
    seen.add(id(code))
    codes = [code]
    for c in codes:  # (nested functions' and comprehensions' codes too)
        codes.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    out = []
    # (what it holds itself: its defaults, `def get(d=SHARED)`, and its cells, `get` of a factory's pair
    # `add, get = make_acc()` sharing a list)
    out.extend((None, v) for v in fn.__defaults__ or () if holds_state(v))
    out.extend((None, v) for v in (fn.__kwdefaults__ or {}).values() if holds_state(v))
    for cell in fn.__closure__ or ():
        try:
            v = cell.cell_contents
        except ValueError:  # (empty)
            continue
        if holds_state(v):
            out.append((cell, None))
        elif type(v) is types.FunctionType and depth < 3:
            out.extend(_state_places(v, depth + 1, seen))
    for c in codes:
        names = c.co_names
        for name in names:
            v = g.get(name, _NOTHING)
            if holds_state(v):
                out.append((g, name))
            elif type(v) is types.ModuleType:
                space = vars(v)
                for attr in names:
                    if attr != name and holds_state(space.get(attr, _NOTHING)):
                        out.append((space, attr))
            elif type(v) is types.FunctionType and depth < 3:
                out.extend(_state_places(v, depth + 1, seen))
    return out


class _AnyAttribute:
    """Every attribute (`held_globals`' entry for a class reached from an object)."""

    def __contains__(self, attr) -> bool:
        return not (attr.startswith("__") and attr.endswith("__"))


_ANY_ATTRIBUTE = _AnyAttribute()
_NOTHING = object()


def holds_state(v) -> bool:
    """v may be changed in place: a list, dict, set, array, or an object with attributes (its own `__dict__`
    or slots; not a module, class, function or number)."""
    if isinstance(v, (list, dict, set, np.ndarray, collections.deque)):
        return True
    if v is _NOTHING or isinstance(v, (types.ModuleType, type, str, bytes, tuple, frozenset, int, float, complex,
                                       np.generic)) or callable(v):
        return False
    return hasattr(v, "__dict__") or any(getattr(k, "__slots__", None) for k in type(v).__mro__)


def _attribute_readers(fdef, globals_: dict, own: set) -> set:
    """The variables naming a global Python function whose attributes fdef reads (`compute.last`, and the
    lowering's `_od_t1 = cfg.compute` read as `_od_t1.last`): a function's attributes are state its calls may
    set (`compute.last = v`). The local is checked where its attribute is read, not where it is bound (the
    function's next call, `cfg.compute(x)`, reads none)."""
    bound = {t.id for n in all_nodes(fdef) if isinstance(n, ast.Assign) and len(n.targets) == 1
             and isinstance(t := n.targets[0], ast.Name) and isinstance(n.value, ast.Attribute)
             and _global_function(n.value, globals_, own) is not None}
    return {n.value.id for n in all_nodes(fdef)
            if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and isinstance(n.value, ast.Name)
            and not (n.attr.startswith("__") and n.attr.endswith("__"))
            and (n.value.id in bound or _global_function(n.value, globals_, own) is not None)}


def _augmented(s: ast.stmt) -> ast.stmt:
    """A statement left as Python, with the lowered `x = x op y` marked in place as Python's `x op= y` again:
    an array or list changes in place, so the variables sharing it see it (`b = a; b += 2.0` left `a` as it
    was: a wrong value, and its derivative), and a class with `__iadd__` only is served."""
    if (type(s) is ast.Assign and getattr(s.value, "_od_inplace", False) and len(s.targets) == 1
            and isinstance(t := s.targets[0], ast.Name) and isinstance(s.value.left, ast.Name)
            and s.value.left.id == t.id):
        return ast.copy_location(ast.AugAssign(target=ast.Name(id=t.id, ctx=ast.Store()), op=s.value.op,
                                               value=s.value.right), s)
    return s


_CONSTRUCTORS = frozenset({"zeros", "empty", "ones", "full", "array", "copy", "zeros_like", "empty_like",
                           "ones_like", "full_like", "list", "dict", "set", "bytearray", "deepcopy"})
# the standard library's container classes (C types, not made by `object.__new__`): called, a new container
_NEW_CONTAINERS = (collections.deque, collections.OrderedDict, collections.defaultdict, collections.Counter)


def _made_here(value, globals_: dict, bound: set) -> bool:
    """value is a new object (see `_check_shared_changes`)."""
    if isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp, ast.Constant,
                          ast.BinOp, ast.UnaryOp, ast.JoinedStr)):
        return True
    if isinstance(value, ast.Call):
        f = value.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if name in _CONSTRUCTORS:
            return True
        cls = globals_.get(name) if isinstance(f, ast.Name) and name not in bound else None
        if cls is None and isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id not in bound:
            cls = getattr(globals_.get(f.value.id), f.attr, None)  # (`collections.deque()`)
        if cls in _NEW_CONTAINERS:  # (rainflow's `points = deque()`, changed as the cycles are counted)
            return True
        return isinstance(cls, type) and cls.__new__ is object.__new__
    return False


def _tuple_bindings(fdef) -> dict[str, list]:
    """The variables bound once in the function, by an assignment of a tuple display of names and constants
    (`key = (start, stop, i)`), with its items: what such a variable holds is those names' values."""
    displays: dict[str, list] = {}
    stores: dict[str, int] = {}
    for n in ast.walk(fdef):
        bound: list[str] = []
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            bound = [n.id]
        elif isinstance(n, ast.arg):
            bound = [n.arg]
        elif isinstance(n, ast.ExceptHandler) and n.name:
            bound = [n.name]
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            bound = [(a.asname or a.name).split(".")[0] for a in n.names]
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            bound = list(n.names) * 2  # (shared with other code: never once)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not fdef:
            bound = [n.name]
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            bound = [n.name]
        elif isinstance(n, ast.MatchMapping) and n.rest:
            bound = [n.rest]
        for name in bound:
            stores[name] = stores.get(name, 0) + 1
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                and isinstance(n.value, ast.Tuple) \
                and all(isinstance(e, (ast.Name, ast.Constant)) for e in n.value.elts):
            displays[n.targets[0].id] = n.value.elts
    return {name: items for name, items in displays.items() if stores.get(name) == 1}


def _quiet_calls(fdef: ast.FunctionDef, globals_: dict, freevars: tuple) -> set[int]:
    """The ids of the calls in fdef that store into nothing they are given (`activity.fresh_calls`, and numpy's
    conversions and questions about arrays: `np.asarray(x)`, `np.issubdtype(t, np.inexact)`, `len(v)`)."""
    out = set(fresh_calls(fdef, globals_, freevars))
    for n, fn in resolved_calls(fdef, globals_, freevars):
        try:
            known = fn in _QUIET
        except TypeError:  # (an unhashable callable)
            continue
        known = known or getattr(fn, "__name__", None) == "array_namespace" and (  # (array-API dispatch)
            getattr(fn, "__module__", None) or "").split(".")[0] in ("scipy", "array_api_compat", "sklearn")
        if known and not any(k.arg in (None, "out") for k in n.keywords) \
                and not any(isinstance(a, ast.Starred) for a in n.args):
            out.add(id(n))
    return out


_QUIET = frozenset({np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray, np.atleast_1d, np.atleast_2d,
                    np.atleast_3d, np.issubdtype, np.result_type, np.promote_types, np.shape, np.ndim, np.size,
                    np.iscomplexobj, np.isrealobj, np.isscalar, len, isinstance, issubclass, callable})


class _Entering:
    """For each call in a function: the variables that may carry a derivative as it begins (`_entering`)."""

    def __init__(self, active: set, tracked: set, readers: set, quiet: set, entry: set):
        self.active, self.tracked, self.readers, self.quiet, self.entry = active, tracked, readers, quiet, entry
        self.out: dict[int, frozenset] = {}
        self.every = frozenset(active)  # (after a change the walk cannot follow: what the analysis says)

    def may(self, name: str, live) -> bool:
        return name in live if name in self.tracked else name in self.active

    def run(self, stmts: list, live: frozenset) -> frozenset:
        for s in stmts:
            if live is self.every:
                self.drop(s)
                continue
            live = self.statement(s, live)
        return live

    def drop(self, node) -> None:
        for n in ast.walk(node):  # (the calls after: the analysis's own answer)
            if isinstance(n, ast.Call):
                self.out.pop(id(n), None)

    def statement(self, s, live: frozenset) -> frozenset:
        if isinstance(s, (ast.Pass, ast.Return)):
            return live if getattr(s, "value", None) is None or not _makes_calls(s.value) else self.stop(s)
        if isinstance(s, ast.Raise):  # (nothing runs after it here; what it raises is made of constants)
            return live if not any(self.may(n, live) for n in _names_in(s)) else self.stop(s)
        if isinstance(s, ast.If):
            if _makes_calls(s.test):
                return self.stop(s)
            a = self.run(s.body, live)
            b = self.run(s.orelse, live)
            return self.every if self.every in (a, b) else a | b
        if isinstance(s, (ast.For, ast.While)):
            if isinstance(s, ast.For) and not (isinstance(s.iter, ast.Name) and isinstance(s.target, ast.Name)) \
                    or isinstance(s, ast.While) and _makes_calls(s.test) or _jumps(s.body):
                return self.stop(s)  # (a `break` or `continue` leaves from the body's middle: not followed)
            if isinstance(s, ast.For) and self.may(s.iter.id, live):
                return self.stop(s)  # (a differentiated iterable's `__next__` is code given it)
            start = live
            for _ in range(len(self.active) + 2):  # (grows monotonically: a fixed point within as many passes)
                end = self.run(s.body, start - {s.target.id} if isinstance(s, ast.For) else start)
                if end is self.every:
                    return self.stop(s)
                if end <= start:
                    break
                start = start | end
            else:
                return self.stop(s)
            orelse = self.run(s.orelse, start)
            return self.every if orelse is self.every else start | orelse
        if isinstance(s, ast.Expr):
            if isinstance(s.value, ast.Call):
                return self.call(s.value, None, live)
            return live if not _makes_calls(s.value) else self.stop(s)
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            t, v = s.targets[0].id, s.value
            if isinstance(v, ast.Call):
                return self.call(v, t, live)
            if _makes_calls(v):
                return self.stop(s)
            if getattr(v, "_od_inplace", False) and any(self.may(n, live) for n in _names_in(v)):
                return self.stop(s)  # (`v *= x`: the object changes in place, and whatever shares it)
            if isinstance(v, ast.Attribute) and v.attr in INERT_ATTRIBUTES:  # (`x.dtype`: checked where read,
                return live - {t}                                             # `inert_checks`)
            # (a value computed from others; an attribute or item read, as the analysis takes them: a value)
            return live | {t} if any(self.may(n, live) for n in _names_in(v)) else live - {t}
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], (ast.Attribute, ast.Subscript)):
            # a store into an object: of a differentiated value, the object and whatever shares it hold one
            if _makes_calls(s) or any(self.may(n, live) for n in _names_in(s)):
                return self.stop(s)
            return live
        return self.stop(s)

    def call(self, v: ast.Call, target, live: frozenset) -> frozenset:
        if any(_makes_calls(a) for a in (*v.args, *(k.value for k in v.keywords))) or _makes_calls(v.func):
            return self.stop(v)
        self.out[id(v)] = live
        reads = set(_names_in(v))
        if any(self.may(n, live) for n in reads):
            if id(v) in self.quiet or isinstance(v.func, ast.Name) and v.func.id == "__od_unpack__":
                # (stores into nothing it is given: only its result may hold one)
                return live | {target} if target is not None else live
            return self.every  # (a call with active inputs: it may store them into anything it can reach)
        if reads & self.readers:  # (it may return, or store, what was stored into module state)
            return live | ((reads | self.entry | ({target} if target else set())) & self.every)
        return live - {target} if target is not None else live

    def stop(self, node) -> frozenset:
        self.drop(node)
        return self.every


def _makes_calls(e) -> bool:
    """e calls (or makes a function, a comprehension, a generator's step)."""
    return any(isinstance(n, (ast.Call, ast.Lambda, ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr, ast.ListComp,
                              ast.SetComp, ast.DictComp, ast.GeneratorExp)) for n in ast.walk(e))


def _jumps(body: list) -> bool:
    """A `break` or `continue` of this loop in body (not of a loop nested in it)."""
    todo = list(body)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.Break, ast.Continue)):
            return True
        if not isinstance(n, (ast.For, ast.While, ast.AsyncFor, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                              ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(n))
        else:
            todo.extend(getattr(n, "orelse", ()))
    return False


def _entering(fdef: ast.FunctionDef, active: set[str], initial: set[str], entry: set[str], readers: set,
              quiet: set, referenced: set = frozenset()) -> dict:
    """id of each call in fdef -> the variables that may carry a derivative as it begins, where that is fewer than
    the analysis's (`active`), blind to order, which counts a variable active from its making on when a later
    call with active inputs may store into it (`f(p, moments=[0, i, 2 * i])`: the list; `sosfiltfilt(sos, x)`:
    the filter's coefficients, constants, whose `== 1` was then refused in scipy's `_validate_sos`).

    The function's statements are walked in order. A parameter or cell not among `initial` (those entering
    differentiated) enters constant, and a local holds nothing until bound. What is computed from differentiated
    values is differentiated; a call or an attribute on constants returns a constant (unless it may read what
    was stored into module state: `readers`, taken as the analysis does); a call storing into nothing it is given
    (`quiet`) makes its result differentiated from differentiated inputs. Anything else that may store a
    differentiated value (a call with differentiated inputs, a store into an object, an attribute of a
    differentiated object, a loop over one, a closure made) ends the walk there: after it, each variable is as
    the analysis says. Branches join; loops run to a fixed point."""
    own = local_names(fdef)
    declared = {name for n in all_nodes(fdef) if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
    # (not the arrays the analysis made active for their in-place changes to be recorded, `referenced`: an active
    # operation read them and a call changes them after, `x * c` then `reset(c)`; entering that call constant, the
    # change was not undone in the reverse pass, and x * c's adjoint read the zeros, 0 for 2)
    tracked = (own | entry) - declared - set(referenced)
    walk = _Entering(active, tracked, readers, quiet, entry)
    if any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)) and n is not fdef
           for n in all_nodes(fdef)):
        return {}  # (a closure made here may run anywhere, reading what it captured)
    walk.run(fdef.body, frozenset(n for n in initial if n in tracked) | frozenset(
        n for n in active if n not in tracked))
    untracked = frozenset(n for n in active if n not in tracked)  # (as the analysis says, wherever the call is)
    return {k: v | untracked for k, v in walk.out.items() if not v | untracked >= walk.every}


def _display_temps(fdef, single_use: set[str], fresh: set[int] = frozenset()) -> dict[str, list]:
    """The temporaries in `single_use` bound to a list, tuple or set display of names and constants (`t6 = [0, i,
    t5]`), or a dict display of them, with the names among its items: as its one reader begins, such a
    temporary holds those names' values and nothing else. Also those bound to a call making a new object of
    what it is given (`fresh`, `activity.fresh_calls`: `np.zeros(3)`), with the names the call reads."""
    out: dict[str, list] = {}
    for n in ast.walk(fdef):
        if not (isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
                and n.targets[0].id in single_use):
            continue
        v = n.value
        if isinstance(v, ast.Call) and id(v) in fresh:
            out[n.targets[0].id] = _names_in(v)
            continue
        items = v.elts if isinstance(v, (ast.List, ast.Tuple, ast.Set)) else \
            [*v.keys, *v.values] if isinstance(v, ast.Dict) and None not in v.keys else None
        if items is not None and all(isinstance(e, (ast.Name, ast.Constant)) for e in items):
            out[n.targets[0].id] = [e.id for e in items if isinstance(e, ast.Name)]
    return out


def _single_use_temps(fdef) -> set[str]:
    """Temporaries stored once and read once, where the read runs once per store: their cotangent has a
    single contribution. (A read in a loop the store is not in runs many times per store: the loop variable
    of a comprehension's outer `for`, read in its inner one, `[a * b for a in A for b in B]`, took the last
    pass's cotangent alone: 1 for 3.)"""
    loads: dict[str, int] = {}
    stores: dict[str, int] = {}
    store_loops: dict[str, tuple] = {}
    load_loops: dict[str, tuple] = {}
    stack = [(n, ()) for n in fdef.body]
    while stack:
        n, loops = stack.pop()
        if isinstance(n, ast.Name) and n.id.startswith(TEMP_PREFIX):
            if isinstance(n.ctx, ast.Store):
                stores[n.id] = stores.get(n.id, 0) + 1
                store_loops[n.id] = loops
            else:
                loads[n.id] = loads.get(n.id, 0) + 1
                load_loops[n.id] = loops
        if isinstance(n, (ast.For, ast.AsyncFor)):  # its target is bound at each pass: inside the loop
            inner = loops + (id(n),)
            stack.extend([(n.target, inner), (n.iter, loops)] + [(m, inner) for m in n.body]
                         + [(m, loops) for m in n.orelse])
        elif isinstance(n, ast.While):
            inner = loops + (id(n),)
            stack.extend([(n.test, inner)] + [(m, inner) for m in n.body] + [(m, loops) for m in n.orelse])
        elif not isinstance(n, (ast.FunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend((m, loops) for m in ast.iter_child_nodes(n))
        elif isinstance(n, ast.FunctionDef):  # a nested function reading a temp counts as many reads
            for m in all_nodes(n):
                if isinstance(m, ast.Name):
                    loads[m.id] = loads.get(m.id, 0) + 2
    return {t for t, k in stores.items()
            if k == 1 and loads.get(t, 0) == 1 and load_loops.get(t) == store_loops.get(t)}


def _carried_floats(blocks: dict[int, list[ast.stmt]], fixed: frozenset = frozenset(),
                    floats: tuple = ({}, frozenset())) -> bool:
    """A block whose whole adjoint is one binary operator's, with its float-fused case (`_float_fused`), and
    whose result's cotangent that case sets (`r = r * x` in a loop): a record of the block right after another
    of the same block whose fused case ran finds that cotangent and the ones added to floats, as that case
    left them (nothing else ran between), and tests only the operands (the loop's adjoint tested four types
    per pass, a third of its time) -- those not in `fixed` (`_never_rebound`: every record holds the same
    object, which that case found a float). `_od_ran` holds k where block k's fused case ran last and no block has
    run since: every other block, and that one's general case, sets it to None (it starts None,
    `_Gen.adjoint_function`). The fused case sets the result's cotangent, so the take's `= None` moves into
    the general case (where neither the test nor the fused case reads it). An operand float-typed in the forward
    twin (`floats`: `activity.float_typed` of it, and its parameters), whose parameters all are tested there so,
    is a float whenever they were (`r` of `r = r * x`, x a float: a float in every record), and its test joins
    theirs. Rewrites the blocks in place; whether any block is such."""
    ks = []
    for k, stmts in blocks.items():
        start = 1 if stmts and isinstance(stmts[0], ast.Assign) and isinstance(stmts[0].value, ast.Name) \
            and stmts[0].value.id == "_od_rec" else 0
        if len(stmts) != start + 3:
            continue
        take, clear, fused = stmts[start:]
        carried = getattr(fused, "_od_fused_checks", None)
        if carried is None or not (
                type(take) is ast.Assign and len(take.targets) == 1 and isinstance(take.targets[0], ast.Name)
                and take.targets[0].id == "_od_g" and isinstance(take.value, ast.Name)
                and type(clear) is ast.Assign and len(clear.targets) == 1 and isinstance(clear.targets[0], ast.Name)
                and clear.targets[0].id == take.value.id and isinstance(clear.value, ast.Constant)
                and clear.value.value is None):
            continue
        result = take.value.id
        if not any(type(b) is ast.Assign and len(b.targets) == 1 and isinstance(b.targets[0], ast.Name)
                   and b.targets[0].id == result for b in fused.body):
            continue  # (its result's cotangent is not set by the fused case: `y = a * b`, y not an operand)
        if any(isinstance(n, ast.Name) and n.id == result and isinstance(n.ctx, ast.Load)
               for part in [fused.test, *fused.body] for n in ast.walk(part)):
            continue  # (read there: the take's `= None` stays before)
        cotangents, operands = carried
        # the fused case reads the result's cotangent where it is (no `_od_g` copy: a tenth of a loop's
        # pass), and sets it last, after the others read it; the general case takes it as before
        sets = [b for b in fused.body if type(b) is ast.Assign and isinstance(b.targets[0], ast.Name)
                and b.targets[0].id == result]
        fused.body = [b for b in fused.body if b not in sets] + sets
        parts = operands.values if isinstance(operands, ast.BoolOp) else [operands]
        held = [p for p in parts if _type_test_of(p) in fixed]  # (tested by the record before, on the same object)
        tested = {_type_test_of(p) for p in held}
        typed, params = floats
        held += [p for p in parts if p not in held and (v := _type_test_of(p)) in typed
                 and floats_from(typed, [v]) & params <= tested]  # (a float where those are)
        varying = [p for p in parts if p not in held]
        fused.test = _rename(copy.deepcopy(and_(or_(compare("_od_ran", ast.Eq(), const(k)), and_(*cotangents, *held)),
                                                *varying) if varying else
                                           or_(compare("_od_ran", ast.Eq(), const(k)), and_(*cotangents, *held))),
                             {"_od_g": result})
        fused.body = [_rename(copy.deepcopy(b), {"_od_g": result}) for b in fused.body]
        fused.body = fused.body + at([assign("_od_ran", const(k))], fused)
        fused.orelse = [take] + at([assign("_od_ran", const(None))], fused) + [clear] + fused.orelse
        stmts.remove(clear)
        stmts.remove(take)
        ks.append(k)
    for k, stmts in blocks.items():
        if ks and k not in ks:  # (a block of another kind: no fused case ran last)
            stmts[:0] = at([assign("_od_ran", const(None))], stmts[0] if stmts else None)
    return bool(ks)


def _type_test_of(test: ast.expr) -> str | None:
    """The variable v of a float test `__od_type__(v) is __od_float__` (`_Gen._float_fused`'s), else None."""
    if (type(test) is ast.Compare and type(test.left) is ast.Call and type(test.left.func) is ast.Name
            and test.left.func.id == "__od_type__" and len(test.left.args) == 1 and type(test.left.args[0]) is ast.Name
            and type(test.ops[0]) is ast.Is and type(test.comparators[0]) is ast.Name
            and test.comparators[0].id == "__od_float__"):
        return test.left.args[0].id
    return None


def _never_rebound(fwd: ast.FunctionDef) -> frozenset:
    """The parameters the forward twin never binds again nor deletes, nested scopes included (a `nonlocal`
    store): each holds the argument's object as long as the twin runs, in every record that saves it."""
    touched = {n.id for n in all_nodes(fwd) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    return frozenset(p for p in param_names(fwd.args) if p not in touched)


def _dispatch(ks: list[int], blocks: dict[int, list[ast.stmt]], like, top: bool = True) -> list[ast.stmt]:
    """A binary if-tree over block ids, so dispatch costs O(log blocks); each leaf runs its block's adjoint
    (whose statements keep their own lines; the tree takes like's)."""
    if not ks:
        return at([ast.Pass()], like)
    if len(ks) == 1:  # (at the top of the tree: the record's id read where it is, `adjoint_function`)
        return [_branch(compare(item("_od_rec", 0) if top else "_od_k", ast.Eq(), const(ks[0])), blocks[ks[0]], [],
                        like)]
    if len(ks) <= 3:  # if k1: ... elif k2: ... else: (the last)
        out = list(blocks[ks[-1]])
        for k in reversed(ks[:-1]):
            out = [_branch(compare(item("_od_rec", 0) if top else "_od_k", ast.Eq(), const(k)), blocks[k], out, like)]
        return out
    mid = len(ks) // 2
    return [_branch(compare("_od_k", ast.Lt(), const(ks[mid])), _dispatch(ks[:mid], blocks, like, False),
                    _dispatch(ks[mid:], blocks, like, False), like)]


def _branch(test: ast.expr, body: list[ast.stmt], orelse: list[ast.stmt], like) -> ast.If:
    """`if test: body else: orelse`, the `if` and its test placed at like (not its branches)."""
    node = at([ast.If(test=test, body=[], orelse=[])], like)[0]
    node.body, node.orelse = list(body), orelse
    return node


def _rename(node, renames, loads_only=True):
    """node with its variables renamed (reads only, or every use); in place."""
    for n in all_nodes(node):
        if isinstance(n, ast.Name) and n.id in renames and (not loads_only or isinstance(n.ctx, ast.Load)) and \
                not getattr(n, "_od_result", False):  # (a statement's result read as itself: `binop`)
            n.id = renames[n.id]
    return node


def generate(lowered: ast.FunctionDef, active_params: set[str], cells: list[str], globals_: dict,
             adjoint_name: str, freevars: tuple = (), observed: bool = False, numbers: bool = False,
             compact: bool = False, state_cells: frozenset = frozenset()) -> Generated:
    """Forward twin and adjoint of a lowered function (consumed: its tree is rewritten in place, so give a
    fresh one) for the given active parameters and cells (`state_cells`: those of them holding arrays, lists,
    dicts or objects;
    `observed`: binary operations through helpers an
    observer sees, `contexts.ad.observe`; `numbers`: counters changed in place, `n -= 1`, are taken to hold
    numbers where that makes them steer only — the caller checks `Generated.numbers`, the parameters that
    must then be bound to numbers).

    `compact`: the adjoint's arithmetic goes through the general rules only (`__od_binop_adj__`,
    `__od_unary_adj__`), without the inlined formulas for floats and float64 arrays beside them: the same
    cotangents, an adjoint about half the size, built and compiled in about half the time, run slower.
    The forward twin is the same either way (`runtime._tier_up` swaps one adjoint for the other)."""
    params = param_names(lowered.args)
    # each named parameter's value on entry (positional, then keyword-only: their co_varnames order), kept
    # under a name of its own: when a caller's array
    # argument was changed in place, the cotangent the caller holds for it after the call flows in there
    # (`_od_dins`), and the in-place changes inside see it as an alias of the parameter
    positional = [x.arg for x in lowered.args.posonlyargs + lowered.args.args + lowered.args.kwonlyargs]
    held, assumed = steering_numbers(lowered) if numbers else (frozenset(), frozenset())
    quiet = frozenset(a.arg for a in lowered.args.posonlyargs + lowered.args.args
                      if a.arg not in active_params and a.arg not in ("self", "cls")) if numbers else frozenset()
    # (parameters read only as loops' iterables are no numbers, but may be lists of them: below)
    drawn = _number_draws(lowered, quiet)
    if drawn.keys() & held:
        held, assumed = held - drawn.keys(), assumed - drawn.keys()
    if not _may_change_arrays(lowered, positional, held):
        positional = []
    lowered.body[:0] = at([assign(ENTRY + p, p) for p in positional], lowered)
    fix_missing_locations(lowered)  # (the core's: ast's own, recursive, took a twentieth of a long build)
    steering: set = set()
    constant_stores: set = set()
    readers: set = set()  # (`_entering`: functions that may return what was stored into module state)
    referenced: set = set()  # (`_entering`: arrays active for their in-place changes to be recorded)
    active = active_names(lowered, set(active_params) | set(cells), globals_, freevars, held, steering,
                          constant_stores, readers, referenced)
    if quiet := quiet - held - drawn.keys():
        # parameters entering constant, made active (or the values computed from them) as arguments of a call
        # with active inputs, which may store those into them: a number cannot be changed in place, so where
        # the call binds numbers to them they stay constant (python_speech_features' `fbank(signal, winlen, ...)`
        # handed `winlen * rate` on active to `Decimal(...)`, refused). Taken for numbers where that leaves fewer
        # active; the caller checks (`Generated.numbers`), and a call binding anything else takes the general twin.
        steering_q, stores_q = set(), set()
        fewer = active_names(lowered, set(active_params) | set(cells), globals_, freevars, held | quiet, steering_q,
                             stores_q, readers, referenced)
        if len(fewer) < len(active):
            # (only the parameters that made the difference, so that calls binding others to arrays keep this
            # twin: those in it, or read by a store to one of it; the analysis again, on exactly those)
            needed = _computed_from(lowered, active - fewer, quiet)
            if needed != quiet:
                steering_q, stores_q = set(), set()
                fewer = active_names(lowered, set(active_params) | set(cells), globals_, freevars, held | needed,
                                     steering_q, stores_q, readers, referenced)
            if len(fewer) < len(active):
                active, steering, constant_stores = fewer, steering_q, stores_q
                held, assumed = held | needed, assumed | needed
    sequences: frozenset = frozenset()
    if drawn:
        # parameters entering constant read only as loops' iterables (`for i in moments`), whose loop variables
        # are made active as arguments of calls with active inputs (`self._moment(band, i)`, which may store
        # into i): a number drawn from a list of numbers cannot be changed in place, so where the call binds
        # such a list the loop variables stay constant (FLife's moments cached under `(start, stop, i)`: the
        # constant order i taken for differentiated, every cache was refused). The caller checks.
        targets = frozenset().union(*drawn.values())
        steering_q, stores_q = set(), set()
        fewer = active_names(lowered, set(active_params) | set(cells), globals_, freevars, held | targets,
                             steering_q, stores_q, readers, referenced)
        if len(fewer) < len(active):
            active, steering, constant_stores = fewer, steering_q, stores_q
            held, sequences = held | targets, frozenset(drawn)
    ask_primals(lowered, active, globals_, freevars)
    step = bisection_step(lowered, active | set(active_params) | set(cells))  # (a test may steer what it does not reach)
    if step is not None:
        loop, fix = refusal_text(step)
        raise Unsupported(f"{loop} ({fix})", step)
    if getattr(lowered, "_od_generator", False):
        _check_shared_changes(lowered, globals_)
    gen = _Gen(lowered, active, params, fresh_calls(lowered, globals_, freevars), observed, compact,
               stateful_calls(lowered, globals_, freevars))
    gen.steering = frozenset(steering)
    gen.sequences = sequences
    gen.entering = _entering(lowered, active, set(active_params) | set(cells), set(params) | set(freevars), readers,
                             _quiet_calls(lowered, globals_, freevars), referenced)
    gen.constant_stores = frozenset(constant_stores)
    # the module's arrays among the active variables: a callee may change one in place without being handed
    # it (`BUF[:] += v` in a helper): each call's check of what it changed looks at them (`call_views`)
    own = local_names(lowered) | set(freevars)
    gen.module_arrays = frozenset(m for m in active if m not in own and isinstance(globals_.get(m), np.ndarray))
    gen.module_containers = frozenset(m for m in active if m not in own and type(globals_.get(m)) in (list, dict))
    # (and the arrays, lists, dicts and objects it captured: a sibling closure of one factory may change one,
    # `def put(p): buf[:] += p`, `hist.append(p)`: `call_views` hands the callee the caller's cotangent)
    gen.state_cells = frozenset(state_cells) & active & set(cells)
    gen.held_globals, gen.held_attributes = held_globals(lowered, globals_, own, active)
    gen.globals_, gen.own_names = globals_, own
    gen.writes = declared_writes(lowered, globals_, freevars)
    gen.private = private_containers(lowered, globals_)
    gen.entry = {j: ENTRY + p for j, p in enumerate(positional) if ENTRY + p in active}
    body = gen.body(lowered.body)
    if not (body and isinstance(body[-1], ast.Return)):
        last = lowered.body[-1] if lowered.body else lowered
        body.extend(at([ast.Return(value=tuple_([const(None), "_od_tape"]))], last))
    # a `**kwargs` parameter: the dict Python made for it rides on the tape (`helpers.KwTape`), where the
    # pullback finds the cotangents of the items read through its views (`kw.values()`), in its box
    kwarg = lowered.args.kwarg
    tape = call("__od_kw_tape__", kwarg.arg) if kwarg is not None else list_([])
    # (records appended by `_od_tape.append(...)`, not through a bound method held in a local: Python 3.11+
    # appends to a list in the call's own instruction there, a tenth of a loop iteration's recording)
    prologue = at([assign("_od_tape", tape)], lowered)
    fwd = ast.FunctionDef(name=lowered.name, args=lowered.args, body=prologue + body, decorator_list=[],
                          returns=None, type_comment=None)
    fwd.body[len(prologue):len(prologue)] = _preset(fwd, gen.maybe_unbound, lowered)
    ast.copy_location(fwd, lowered)
    _fix_returns(fwd)
    adjoint = gen.adjoint_function(adjoint_name, cells, _never_rebound(fwd),
                                   (float_typed(fwd), frozenset(param_names(fwd.args))))
    return Generated(forward=fwd, adjoint=adjoint, active=active, params=params, blocks=gen.adjoints,
                     entry=gen.entry, numbers=assumed, sequences=sequences, storing=frozenset(gen.storing))


def _number_draws(fdef: ast.FunctionDef, params: frozenset) -> dict[str, frozenset]:
    """The params read only as the iterables of `for` loops whose targets are names bound by such loops alone,
    with those targets: bound to a list or tuple of numbers, the targets hold numbers only."""
    if not params:
        return {}
    iters: set[int] = set()
    targets: dict[str, set] = {}
    for n in all_nodes(fdef):
        if isinstance(n, ast.For) and isinstance(n.iter, ast.Name) and n.iter.id in params:
            if not isinstance(n.target, ast.Name):
                params = params - {n.iter.id}
                continue
            iters.add(id(n.iter))
            targets.setdefault(n.iter.id, set()).add(n.target.id)
    drawn = {p: t for p, t in targets.items() if p in params}
    if not drawn:
        return {}
    every = set().union(*drawn.values())
    stores = collections.Counter()
    for n in all_nodes(fdef):
        if isinstance(n, ast.Name):
            if isinstance(n.ctx, ast.Load) and n.id in drawn and id(n) not in iters:
                drawn.pop(n.id)  # (read otherwise: handed on, stored, changed)
            elif not isinstance(n.ctx, ast.Load) and n.id in every:
                stores[n.id] += 1
        elif isinstance(n, (ast.Global, ast.Nonlocal)) and every & set(n.names) \
                or isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and n is not fdef \
                and every & free_names(n):  # (a closure may rebind or read one late)
            return {}
    fors = collections.Counter(n.target.id for n in all_nodes(fdef) if isinstance(n, ast.For)
                               and isinstance(n.iter, ast.Name) and n.iter.id in drawn and isinstance(n.target, ast.Name))
    return {p: frozenset(ts) for p, ts in drawn.items() if all(stores[t] == fors[t] for t in ts)}


def _computed_from(fdef: ast.FunctionDef, names: set, params: frozenset) -> frozenset:
    """The params that `names`' values are computed from (themselves among them): through every assignment to
    one of them, and to the variables those read, as far as they go."""
    reads: dict[str, set] = collections.defaultdict(set)
    for s in all_nodes(fdef):
        if isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and s.value is not None:
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            read = {n.id for n in all_nodes(s.value) if isinstance(n, ast.Name)}
            for t in targets:
                for n in all_nodes(t):
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                        reads[n.id] |= read
    seen, todo = set(names), list(names)
    while todo:
        for m in reads.get(todo.pop(), ()):
            if m not in seen:
                seen.add(m)
                todo.append(m)
    return frozenset(seen & params)


# (the lowered form's temporaries, `_od_t12`, and its comprehensions' variables renamed, `_od_t33_x`: none is
# read before it is bound but by these checks, nor by a nested function: a lambda reading one is refused)
_TEMP = re.compile(re.escape(TEMP_PREFIX) + r"[0-9]+(_\w+)?")


def _preset(fwd: ast.FunctionDef, names: set[str], where) -> list[ast.stmt]:
    """`_od_t1 = _od_t7 = ... = None` at the forward twin's entry, for the engine's temporaries that a view or
    alias check reads by name where they may not be bound yet (`_Gen.bound_now`, `_Gen.view_merge`): None is
    what `helpers.bound` gives a local not bound yet, so the tuple read of the names finds the same values
    without the NameError and its copy of every local of the frame (`locals()`: a library function's twin has
    hundreds). Only the twin's own plain locals: not a parameter, a name declared global or nonlocal, or one a
    nested function or class reads or writes (a cell)."""
    if not names:
        return []
    stored, declared, nested = set(), set(), set()
    scopes = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
    for n in own_nodes(fwd):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            stored.add(n.id)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            declared.update(n.names)
        for v in ast.iter_child_nodes(n):
            if isinstance(v, scopes):
                nested.update(x.id for x in all_nodes(v) if isinstance(x, ast.Name))
    for v in fwd.body:  # (own_nodes yields no nested definition at the top of the body)
        if isinstance(v, scopes):
            nested.update(x.id for x in all_nodes(v) if isinstance(x, ast.Name))
    preset = sorted(n for n in names if n in stored and n not in declared and n not in nested
                    and n not in param_names(fwd.args))
    if not preset:
        return []
    stmt = ast.Assign(targets=[ast.Name(id=n, ctx=ast.Store()) for n in preset], value=const(None), lineno=0)
    stmt._od_preset = True  # (`show`'s readable twin leaves it out)
    return at([stmt], where)


def _may_change_arrays(fdef: ast.FunctionDef, params: list[str], numbers: frozenset) -> bool:
    """Whether running fdef may change an argument in place: it has calls (a callee may), or in-place
    statements (`x op= y`, `x[i] = v`, `x.f = v`) on a variable that may share memory with a parameter
    (not one of `numbers`, which hold numbers)."""
    groups = None
    for n in own_nodes(fdef):
        if isinstance(n, ast.Call):
            return True
        target = None
        if isinstance(n, ast.Assign):
            t = n.targets[0]
            if getattr(n.value, "_od_inplace", False) and isinstance(t, ast.Name) and t.id not in numbers:
                target = t.id
            elif isinstance(t, (ast.Subscript, ast.Attribute)):
                target = stored_base(t) or ""
        if target is not None:
            if groups is None:
                groups = view_groups(fdef)
            if target in params or not target or groups.get(target, set()) & set(params):
                return True
    return False


def _fix_returns(fwd: ast.FunctionDef) -> None:
    """Inactive returns (not rewritten by a block) also hand the tape back."""
    for node in own_statements(fwd.body):  # (a return is a statement: the expressions need no walk)
        if isinstance(node, ast.Return):
            v = node.value
            if not (isinstance(v, ast.Tuple) and len(v.elts) == 2 and isinstance(v.elts[1], ast.Name)
                    and v.elts[1].id == "_od_tape"):
                node.value = ast.copy_location(ast.Tuple(elts=[v or ast.Constant(None),
                                                                ast.Name(id="_od_tape", ctx=ast.Load())],
                                                          ctx=ast.Load()), node)
                ast.fix_missing_locations(node)


def _fast_cotangents(op: ast.operator, a: ast.expr, b: ast.expr, y: ast.expr) -> tuple[ast.expr, ast.expr] | None:
    """For `a + b`, `a - b`, `a * b`, `a / b` on real scalars: the cotangents of a and b given the result's
    `_od_g`, the operator's derivatives declared once (`contexts.rules.operator.DERIVATIVES`) inlined; y is
    the result (the expression `a / b` where the block overwrote it). None for other operators."""
    name = _DECLARED.get(type(op))
    if name is None:
        return None
    da, db = DERIVATIVES[name]
    return (inline(da, t="_od_g", a=user(a), b=user(b), y=y), inline(db, t="_od_g", a=user(a), b=user(b), y=y))


_DECLARED = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv"}


_IS = is_("_", "_").ops[0]  # (the one shared `is` operator)


def _chain(op: ast.cmpop, xs: list[Node]) -> ast.Compare:
    """`x0 op x1 op x2 ...`: one comparison chain (fewer nodes to build and compile than `and`s)."""
    return ast.Compare(left=load(xs[0]), ops=[op] * (len(xs) - 1), comparators=[load(x) for x in xs[1:]])


def _float64_test(a: ast.expr, b: ast.expr) -> ast.expr | None:
    """For `a + b`, `a - b`, `a * b`, `a / b`: the test under which the formulas of `_fast_cotangents` give
    what `binop_adj`'s real-scalar case gives for numpy float64 scalars (`p[0]` of a float array): the
    result's cotangent and every variable operand a float64 (`type(_od_g) is float64 is type(a) is type(b)`),
    constants real numbers. Each cotangent then comes out a float64, its operand's type, as binop_adj keeps
    it. None where a constant is not a real number."""
    types = [call("__od_type__", "_od_g"), load("__od_float64__")]
    for x in (a, b):
        if isinstance(x, ast.Name):
            types.append(call("__od_type__", x.id))
        elif not isinstance(x, ast.Constant) or not isinstance(x.value, (int, float)) or isinstance(x.value, bool):
            return None
    return _chain(_IS, types)


def _real_array_test(op: ast.operator, a: ast.expr, b: ast.expr, act_a: bool, act_b: bool) -> ast.expr | None:
    """For `a + b`, `a - b`, `a * b`: the test under which the float formulas of `_fast_cotangents` hold for
    arrays too — a float64 result cotangent, each active operand a float64 array of its shape (no
    broadcasting to undo: `type(_od_g) is ndarray is type(a)`, `_od_g.dtype is f8 is a.dtype`, `_od_g.shape ==
    a.shape`), and the other operand a real number or array. None where it cannot hold."""
    if not isinstance(op, (ast.Add, ast.Sub, ast.Mult)):
        return None
    actives = ["_od_g"]
    others = []
    for x, active in ((a, act_a), (b, act_b)):
        if isinstance(x, ast.Name):
            if active:
                actives.append(x.id)
            else:  # a product's multiplies the other's cotangent: real, of any broadcast shape; and any is a
                # number or a plain array, whose operator is numpy's (`C() + x` runs C's own `__add__`)
                others.append(or_(and_(is_(call("__od_type__", x.id), "__od_ndarray__"), is_(attr(x.id, "dtype"), "__od_f8__")),
                                  is_(call("__od_type__", x.id), "__od_float__"), is_(call("__od_type__", x.id), "__od_int__")))
        elif not isinstance(x, ast.Constant) or not isinstance(x.value, (int, float)) or isinstance(x.value, bool):
            return None
    types = [call("__od_type__", actives[0]), load("__od_ndarray__")] + [call("__od_type__", n) for n in actives[1:]]
    dtypes = [attr(actives[0], "dtype"), load("__od_f8__")] + [attr(n, "dtype") for n in actives[1:]]
    parts = [_chain(_IS, types), _chain(_IS, dtypes)]
    if len(actives) > 1:
        parts.append(_chain(_EQ, [attr(n, "shape") for n in actives]))
    return and_(*parts, *others)


_EQ = compare("_", ast.Eq(), "_").ops[0]


def _rebound_names(fdef) -> set[str]:
    """The names fdef binds in its own body (`x = ...`, `x += ...`, loop targets), nested scopes aside."""
    out: set[str] = set()
    stack = list(fdef.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.add(n.id)
        stack.extend(ast.iter_child_nodes(n))
    return out


def _container_hazards(fdef, nodes) -> set[str]:
    from ..lowered.lower import _READERS  # (the builtins that change no argument, the lowering's)
    """The variables whose object fdef may reach other than by its name at the time: aliased (`M = L`, a
    view), looped over, held by a display or an object (`[L]`, `o.f = L`), passed to a call, or changed in
    place: where a closure rebinds such a variable to a new list or dict, its one cotangent box per name
    no longer follows the objects (gen8's W11)."""
    out = set(changed_in_place(fdef))
    for n in nodes:
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name):  # (an item read, `out[0]`, aliases no list or dict)
                    out |= set() if isinstance(n.value, ast.Subscript) else view_of(n.value) - {t.id}
                else:
                    out |= {e.id for e in ast.walk(n.value) if isinstance(e, ast.Name)}
            if isinstance(n.value, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
                out |= {e.id for e in ast.walk(n.value) if isinstance(e, ast.Name)}
        elif isinstance(n, ast.For):
            out |= {e.id for e in ast.walk(n.iter) if isinstance(e, ast.Name)}
        elif isinstance(n, ast.Call) and not (isinstance(n.func, ast.Name) and n.func.id in _READERS):
            out |= {a.id for a in n.args if isinstance(a, ast.Name)}
    return out



def _writes_in_place(body: list, targets: set) -> bool:
    """Whether a loop body (lowered) may change memory in place: a store into an item or attribute, an
    in-place operator, a mutating method, an `out=` argument, or a call of a function of the user's given the
    loop's target (which may write into it)."""
    for n in (m for st in body for m in ast.walk(st)):
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.Delete)):
            ts = n.targets if isinstance(n, (ast.Assign, ast.Delete)) else [n.target]
            if isinstance(n, ast.AugAssign) or getattr(getattr(n, "value", None), "_od_inplace", False) or any(
                    isinstance(t, (ast.Subscript, ast.Attribute)) for t in ts):
                return True
        elif isinstance(n, ast.Attribute) and n.attr in MUTATOR_NAMES:
            return True
        elif isinstance(n, ast.Call):
            if any(k.arg == "out" for k in n.keywords):
                return True
            if isinstance(n.func, ast.Name) and not hasattr(builtins, n.func.id) and any(
                    isinstance(a, ast.Name) and a.id in targets for a in n.args):
                return True
    return False
