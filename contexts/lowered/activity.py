"""Static activity analysis: which variables of a lowered function can carry a derivative.

Invariant: a variable is active when some assignment to it may depend on an active parameter, a closure
cell, or a mutable active object (flow-insensitive, conservative fixpoint). Operations whose operands are
all inactive (loop counters, shapes, flags) are left as plain Python by the code generator and never
recorded: this is where the speed of the `loop` benchmark comes from.
"""

from __future__ import annotations

import ast
import builtins
import collections
import copy
import dis
import functools
import os
import sys
import types

import numpy as np

import overdub.ops

from overdub.passes import AST_LOCK, ByIdentity, on_clear

from ..rules.implicit import PLAIN as IMPLICIT_PLAIN
from ..rules.registry import registry
from .lower import all_nodes, own_nodes, param_names

__all__ = ["float_typed", "floats_from", "active_names", "ask_primals", "NONDIFF_BUILTINS", "captured_changes_by_kind", "captured_stores", "closure_hazards", "free_names",
           "fresh_calls", "local_names", "name_stores", "nonlocal_writes", "own_statements", "steering_numbers",
           "stored_base", "view_groups", "viewed", "view_of", "private_containers"]

# Builtins whose result never carries a derivative (when not shadowed by a global of the module).
NONDIFF_BUILTINS = frozenset({
    "range", "len", "isinstance", "issubclass", "type", "int", "bool", "str", "repr", "print", "id", "hash",
    "hasattr", "callable", "round", "ord", "chr", "format", "bin", "hex", "oct", "any", "all",
    "object", "Exception", "ValueError", "TypeError", "KeyError", "IndexError", "RuntimeError",
    "ZeroDivisionError", "StopIteration", "NotImplementedError", "AssertionError", "slice", "open",
    IMPLICIT_PLAIN,  # (a rewritten bisection's own loop: `lowered.implicit`)
})


# the exception classes among them: an exception raised where it is made carries no derivative anyone follows
# (reverse mode refuses a handler catching one that holds a differentiated value); one bound to a name or
# handed to a call holds its arguments, active (`e = ValueError(x)`, `it.throw(ValueError(x))`: its
# handler's `e.args[0]` gave 0 in forward mode and in reverse mode a generator's, gen21 W8b)
_EXCEPTIONS = frozenset({"Exception", "ValueError", "TypeError", "KeyError", "IndexError", "RuntimeError",
                         "ZeroDivisionError", "StopIteration", "NotImplementedError", "AssertionError"})


def _raised_here(fdef) -> set[int]:
    """ids of the exception calls fdef raises where it makes them (`raise ValueError(x)`)."""
    return {id(n.exc) for n in own_nodes(fdef) if isinstance(n, ast.Raise) and isinstance(n.exc, ast.Call)}


def _makes_class(call: ast.Call) -> bool:
    """`type(name, bases, namespace)`: a class made, holding the namespace's values (not a question of kind)."""
    return isinstance(call.func, ast.Name) and call.func.id == "type" and len(call.args) == 3


def ask_primals(fdef: ast.FunctionDef, active: set[str], globals_: dict, freevars: tuple = ()) -> None:
    """`isinstance(a, float)`, `type(a)`, `len(a)`, `str(a)`... of an active value, whose result carries no
    derivative, ask their question of its primal (`__od_primal__`): under a derivative of a derivative the value
    is a forward-mode dual, and the answer must be the one the plain call gets. Both transformers run it."""
    local = local_names(fdef) | set(freevars)
    # (not any/all: they draw from their argument, whose draws may run code that is differentiated, a map's
    # function storing what it is given; they are Python loops, `rules.builtins.py_any`)
    asks = {n for n in NONDIFF_BUILTINS if n not in globals_ and n not in local} - {"any", "all"}
    texts = _TEXT_MAKERS & asks
    parsers = {n for n in _PARSERS if n not in local and (n not in globals_ or globals_[n] is _PARSERS[n])}
    tested = _only_tested(fdef)
    raised = _raised_here(fdef)
    for node in list(own_nodes(fdef)):
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert) and _reads(node.operand) & active:
            # `~x` carries no derivative (of an integer, a mask); an object's own `__invert__` may compute one,
            # which reverse mode would drop (`__od_inverted__` refuses it there; forward mode follows it)
            node.operand = _helper_call("__od_inverted__", [node.operand], node.operand)
        if isinstance(node, ast.JoinedStr):
            if _format_fields(node, active) and len(node.values) > 1:
                _as_joined_text(node)  # (`f"9{x}"`: the whole text is one of x, its parse refused,
                # `runtime.DerivedText`; not where each field formatted is an integer's, `f"f{i}"` of numpy's
                # record field names, whose lookup `fields["f0"]` was refused as a differentiated key)
            continue
        if (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.FloorDiv, ast.Mod)) and not _text_expr(node.left)
                and (_reads(node.left) & active or isinstance(node.op, ast.FloorDiv) and _reads(node.right) & active)
                and id(node) not in tested):
            node._od_stairs = True  # (`t // 1e-12`, `t % 1e-12`: each transformer checks the step, `STAIRS`;
            # `9 // b` its jump where the divisor moves, as `text_mod` does `9 % b`'s: `divisor_jump`)
        elif (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and not _text_expr(node.left)
              and _reads(node.right) & active):
            node._od_text_mod = True  # (`fmt % x` of a format held by a variable: reverse mode remembers x's text)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _text_expr(node.left) and (
                _reads(node.right) & active):  # `"%.17g" % x`: the text of x's primal, remembered
            right = node.right
            items = right.elts if isinstance(right, ast.Tuple) else [right]
            for i, e in enumerate(items):
                if _reads(e) & active:
                    items[i] = _helper_call("__od_primal__", [e], e)
            if not isinstance(right, ast.Tuple):
                node.right = items[0]
            # (remembered where a value formatted is not an integer: numpy's `"%s%d" % (kind, bits)` of an
            # int array's dtype is no number's text, and `iinfo(dtype).max` keyed by it was refused)
            _as_text(node, [e for e in items if isinstance(e, ast.Call) and isinstance(e.func, ast.Name)
                            and e.func.id == "__od_primal__"])
            continue
        if not isinstance(node, ast.Call):
            continue
        if node.args and (_parses(node.func, parsers) or _numpy_parses(node, globals_, local)) and not (
                isinstance(node.args[0], (ast.Constant, ast.Starred))
                or isinstance(node.args[0], ast.Name) and node.args[0].id in active):
            # (an active argument is checked where the call runs: `runtime.parse_check`)
            # (an active value's parse, the text of one, `float(("%.6f %s" % (x, u)).split()[0])`: the rules
            # of float and complex check a str, `rules.builtins._parsed_first`)
            node.args[0] = _helper_call("__od_parsed__", [node.args[0]], node.args[0])
        if (isinstance(node.func, ast.Attribute) and node.func.attr == "astype"
                and not (isinstance(node.func.value, ast.Name) and node.func.value.id in active)):
            # (`np.array([str(t)]).astype(float)`: an array of texts parsed: gen10's W2, 0 for 2)
            node.func.value = _helper_call("__od_parsed__", [node.func.value], node.func.value)
        if (isinstance(node.func, ast.Attribute) and node.func.attr == "format" and _text_expr(node.func.value)
                and any(_reads(a) & active for a in node.args + [k.value for k in node.keywords])):
            # `"{:.18f}".format(x)` (geomdl's linspace rounds so): the text of x's primal, remembered
            node.args = [_helper_call("__od_primal__", [a], a) if _reads(a) & active and not isinstance(a, ast.Starred)
                         else a for a in node.args]
            for k in node.keywords:
                if k.arg is not None and _reads(k.value) & active:
                    k.value = _helper_call("__od_primal__", [k.value], k.value)
            _as_text(node, [a for a in [*node.args, *(k.value for k in node.keywords if k.arg is not None)]
                            if isinstance(a, ast.Call) and isinstance(a.func, ast.Name)
                            and a.func.id == "__od_primal__"])
            continue
        if (isinstance(node.func, ast.Name) and node.func.id == "print" and "print" in asks
                and any(_reads(a) & active for a in node.args)):
            # (the values printed, and their texts remembered: `print(*x, file=buffer)` read back and parsed)
            node.func = ast.copy_location(ast.Name("__od_printed__", ast.Load()), node.func)
            node.args.insert(0, ast.copy_location(ast.Name("__od_primal__", ast.Load()), node.func))
            continue
        if (isinstance(node.func, ast.Name) and node.func.id == "map" and "map" not in globals_ and "map" not in local
                and len(node.args) > 1 and not node.keywords and _text_maker(node.args[0], texts)
                and any(_reads(a) & active for a in node.args[1:])):
            # `map(str, xs)`: the texts of differentiated values, made in C, each remembered (`__od_text_map__`)
            node.func = ast.copy_location(ast.Name("__od_text_map__", ast.Load()), node.func)
        if (isinstance(node.func, ast.Attribute) and node.func.attr == "join" and len(node.args) == 1
                and not node.keywords and not isinstance(node.args[0], ast.Starred)):
            # `"".join(pieces)` of a differentiated number's text (`runtime.DerivedText`): str.join makes a
            # plain str of them; `__od_text_join__` keeps the result one of the number's texts (every join:
            # pieces drawn by a generator need not read an active name here)
            node.args.insert(0, node.func.value)
            node.func = ast.copy_location(ast.Name("__od_text_join__", ast.Load()), node.func)
        if (isinstance(node.func, ast.Name) and node.func.id in _STAIRS and node.func.id not in globals_
                and node.func.id not in local and node.args and _reads(node.args[0]) & active
                and id(node) not in tested):
            node._od_stairs = True  # (each transformer checks a step far finer than the value: `STAIRS`)
        if (isinstance(node.func, ast.Name) and node.func.id in asks
                and any(isinstance(a, ast.Name) and a.id in active for a in node.args)
                and not _makes_class(node)  # (a class made: its namespace's values)
                and (node.func.id not in _EXCEPTIONS or id(node) in raised)):  # (an exception kept: its values)
            node.args = [ast.copy_location(ast.Call(ast.Name("__od_primal__", ast.Load()), [a], []), a)
                         if isinstance(a, ast.Name) and a.id in active else a for a in node.args]
            if node.func.id in ("isinstance", "hasattr") and len(node.args) == 2 and isinstance(node.args[0], ast.Call) \
                    and (_plain_read(node.args[1]) or isinstance(node.args[1], ast.Constant)):
                # (what a generator is or has, asked of reverse mode's eager one: `__od_instance_of__`, gen21 W11)
                node.args[0].func.id = "__od_instance_of__"
                node.args[0].args.append(copy.deepcopy(node.args[1]))
            if node.func.id == "round" and isinstance(node.args[0], ast.Call):
                # (an object's own `__round__` may return an object carrying the derivative: `__od_rounded__`)
                node.args[0].func.id = "__od_rounded__"
            if node.func.id == "int" and node.args:  # refused at a jump of int() (`__od_int_arg__`)
                node.args[0] = ast.copy_location(ast.Call(ast.Name("__od_int_arg__", ast.Load()), [node.args[0]], []),
                                                 node.args[0])
            if node.func.id in texts:  # the text of a differentiated value: remembered (`__od_text__`)
                inner = ast.copy_location(ast.Call(node.func, node.args, node.keywords), node)
                # (with the value itself where it is a variable's: `str(seq)` of a string a differentiated
                # call was also given is no number's text, and its parse, `bytes(seq, "ascii")`, was refused)
                # (the value as it is, not its primal: forward mode tells a constant's text by it, `fd_text`)
                shown = [copy.deepcopy(_unwrapped(inner.args[0]))] if len(inner.args) == 1 and not node.keywords \
                    and _plain_read(inner.args[0]) else []
                node.func, node.args, node.keywords = ast.Name("__od_text__", ast.Load()), [inner] + shown, []
                ast.copy_location(node.func, node)


_STAIRS = frozenset({"round", "int", "hash"})


def _text_maker(f: ast.expr, texts: set) -> bool:
    """f names a function making the text of a value: `str`, `repr`, `format` (unshadowed), a format's
    `.format` (`"{:.3f}".format`)."""
    return (isinstance(f, ast.Name) and f.id in texts
            or isinstance(f, ast.Attribute) and f.attr == "format" and _text_expr(f.value))


def _only_tested(fdef) -> set[int]:
    """ids of the `round(...)`/`int(...)` calls whose result is bound to a variable every read of which is an
    operand of an ordering or an equality (`P = round(P, 8); if P > Pc:`, iapws' phase): a fine step there
    only decides a test, and is not checked (`STAIRS`)."""
    bound: dict[str, list] = {}
    for n in own_nodes(fdef):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            bound.setdefault(n.targets[0].id, []).append(n.value)
    tests: set[int] = set()
    for n in own_nodes(fdef):
        if isinstance(n, ast.Compare) and not any(isinstance(op, (ast.In, ast.NotIn, ast.Is, ast.IsNot)) for op in n.ops):
            tests.update(id(e) for e in (n.left, *n.comparators) if isinstance(e, ast.Name))
    reads: dict[str, bool] = {}
    for n in own_nodes(fdef):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in bound:
            reads[n.id] = reads.get(n.id, True) and id(n) in tests
    return {id(v) for name, values in bound.items() if reads.get(name, False) for v in values
            if isinstance(v, (ast.Call, ast.BinOp))}


def asked(e: ast.expr) -> ast.expr:
    """e without the `__od_primal__(...)`/`__od_int_arg__(...)` `ask_primals` put around it."""
    while isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in (
            "__od_primal__", "__od_int_arg__", "__od_rounded__", "__od_instance_of__") and e.args:
        e = e.args[0]
    return e

# A differentiated number's text parsed back is refused (lowered.runtime: `__od_text__`, `__od_parsed__`).
_TEXT_MAKERS = frozenset({"str", "repr", "format"})
_TEXT_MAKERS_AND_DRAWERS = _TEXT_MAKERS | {"any", "all"}
_PARSERS = {"float": float, "int": int, "complex": complex}


def _helper_call(name: str, args: list, at: ast.AST) -> ast.Call:
    call = ast.Call(ast.Name(name, ast.Load()), args, [])
    ast.copy_location(call.func, at)
    return ast.copy_location(call, at)


def _parses(func: ast.expr, parsers: set) -> bool:
    """func is the builtin float/int/complex, `float.fromhex`, or a Decimal/Fraction class by name."""
    if isinstance(func, ast.Name):
        return func.id in parsers or func.id in ("Decimal", "Fraction")
    return (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
            and (func.value.id, func.attr) in (("float", "fromhex"), ("decimal", "Decimal"), ("fractions", "Fraction")))


# numpy's functions that parse text into numbers (their first argument), and those that do given a dtype
_NUMPY_PARSERS = frozenset({"float64", "float32", "float16", "longdouble", "complex128", "complex64", "fromstring",
                            "loadtxt", "genfromtxt", "double", "single", "cdouble"})
_NUMPY_DTYPED = frozenset({"array", "asarray", "asanyarray", "fromiter"})


def _numpy_parses(node: ast.Call, globals_: dict, local: set) -> bool:
    """node is a call of numpy's that may parse text into numbers: `np.float64(s)`, `np.fromstring(s, sep=
    " ")`, `np.loadtxt(lines)`, `np.array(texts, dtype=float)`."""
    f = node.func
    if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id not in local
            and getattr(globals_.get(f.value.id), "__name__", None) == "numpy"):
        return False
    return f.attr in _NUMPY_PARSERS or f.attr in _NUMPY_DTYPED and any(k.arg == "dtype" for k in node.keywords)


def _text_expr(node) -> bool:
    """node makes a str: a str constant, an f-string, `+` or `%` of one, `str(...)`."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _text_expr(node.left) or _text_expr(node.right)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return _text_expr(node.left)
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("str", "repr")


def _as_joined_text(node: ast.JoinedStr) -> None:
    """An f-string of fields some of which `_format_fields` formats, in place as `__od_text_join__("", [parts])`:
    each part evaluated once, in order; the text one of a differentiated number's where a formatted field is
    (`runtime.formatted` gives an integer's or a string's as plain text)."""
    parts = []
    for v in node.values:
        formatted = isinstance(v, ast.FormattedValue) and isinstance(v.value, ast.Call) and isinstance(
            v.value.func, ast.Name) and v.value.func.id == "__od_fmt__"
        parts.append(v.value if formatted else v if isinstance(v, ast.Constant)
                     else ast.copy_location(ast.JoinedStr(values=[v]), v))
    for f in node._fields:
        delattr(node, f)
    node.__class__ = ast.Call
    node.func = ast.copy_location(ast.Name("__od_text_join__", ast.Load()), node)
    node.args = [ast.copy_location(ast.Constant(""), node), ast.copy_location(ast.List(parts, ast.Load()), node)]
    node.keywords = []


def _as_text(node, values=None) -> None:
    """node (a call or an operator making a str) in place as `__od_text__(node)`: its text remembered; given
    the values formatted, `__od_text_of__(node, *values)`: remembered where one is not an integer."""
    inner = ast.copy_location(type(node)(**{f: getattr(node, f) for f in node._fields}), node)
    for f in node._fields:
        delattr(node, f)
    node.__class__ = ast.Call
    if values:
        node.func, node.args, node.keywords = ast.Name("__od_text_of__", ast.Load()), [inner, *values], []
    else:
        node.func, node.args, node.keywords = ast.Name("__od_text__", ast.Load()), [inner], []
    ast.copy_location(node.func, node)


def _format_fields(node: ast.JoinedStr, active: set) -> bool:
    """An f-string's fields of differentiated values formatted by `__od_fmt__` (the text remembered); whether
    it has one."""
    found = False
    for part in node.values:
        if isinstance(part, ast.FormattedValue) and any(n in active for n in _reads(part.value)):
            spec = part.format_spec if part.format_spec is not None else ast.Constant("")
            primal = _helper_call("__od_primal__", [part.value], part.value)
            part.value = _helper_call("__od_fmt__", [primal, ast.Constant(part.conversion), spec], part.value)
            part.conversion, part.format_spec = -1, None
            found = True
    return found


def local_names(fdef, nodes=None) -> set[str]:
    """fdef's variables: its parameters and the names it (or a function defined in it) stores. (`nodes`:
    `all_nodes(fdef)` as a list, when the caller walks the tree for other things too.)"""
    nodes = all_nodes(fdef) if nodes is None else nodes
    # (and the classes it defines: `class C: items = []` then `C.items.append(x)` changes C's list, read back
    # as `sum(C.items)`: taken for a constant, 0 for 2.4, gen18 W3)
    return ({n.id if isinstance(n, ast.Name) else n.name for n in nodes
             if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) or isinstance(n, ast.ClassDef)}
            | set(param_names(fdef.args)))


def name_stores(fdef, nodes=None):
    """(name, value) of each assignment `name = value` in fdef (or a function defined in it)."""
    for n in all_nodes(fdef) if nodes is None else nodes:
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name):
                    yield t.id, n.value


def stored_base(target: ast.expr) -> str | None:
    """The variable whose object a store into `target` changes (v of `v[i].f = ...`), or None."""
    while isinstance(target, (ast.Subscript, ast.Attribute)):
        target = target.value
    return target.id if isinstance(target, ast.Name) else None


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp,
           ast.DictComp, ast.GeneratorExp)


def own_bindings(node: ast.AST) -> set[str]:
    """Names a function or lambda binds in its own scope (assigned, deleted, looped over, imported, defined,
    caught, matched; not the variables of its comprehensions or nested functions), less those it declares
    `global` or `nonlocal`: Python reads them from that scope only, never from an enclosing one. A binding
    form left out here only keeps a name counted as read from outside (the safe side)."""
    bound, declared = set(), set()
    todo = list(node.body) if isinstance(node.body, list) else [node.body]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            bound.add(n.id)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            declared.update(n.names)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            bound.add(n.name)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            bound.add(n.name)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(n.name)
        if isinstance(n, _SCOPES):
            continue  # (their defaults and decorators are read here, but bind nothing here)
        todo.extend(ast.iter_child_nodes(n))
    return bound - declared


def free_names(node: ast.AST, defaults: bool = True) -> set[str]:
    """Names a nested function or lambda reads from its enclosing scopes: every load in its body, and what
    its own nested functions and comprehensions read from it (`_scope_reads`), but of its parameters and the
    names it binds itself (`own_bindings`); with `defaults` also the names its default values, decorators
    and annotations read when it is made. (A comprehension's variable is its own: `(p * f for f in fs)`
    in a closure reads no `f` of the function around it.)"""
    body = node.body if isinstance(node.body, list) else [node.body]
    free = _scope_reads(body) - set(param_names(node.args)) - own_bindings(node)
    if defaults:
        header = [node.args, *getattr(node, "decorator_list", []), *([node.returns] if getattr(node, "returns", None) else [])]
        free |= {n.id for p in header for n in all_nodes(p) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return free


def _scope_reads(nodes: list) -> set[str]:
    """The names these nodes of one scope load, and those its nested scopes read from it: a nested
    function's free names (its header is evaluated here), a comprehension's loads but of its own variables
    (its first iterable is evaluated here). A class body: every load in it (the safe side: more names read
    only make more values active)."""
    out: set[str] = set()
    todo = list(nodes)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Name):
            if isinstance(n.ctx, ast.Load):
                out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            out |= free_names(n)
        elif isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            gens = n.generators
            parts = [n.key, n.value] if isinstance(n, ast.DictComp) else [n.elt]
            parts += [g.target for g in gens] + [c for g in gens for c in g.ifs] + [g.iter for g in gens[1:]]
            own = {m.id for g in gens for m in all_nodes(g.target) if isinstance(m, ast.Name)
                   and isinstance(m.ctx, ast.Store)}
            out |= _scope_reads([gens[0].iter]) | (_scope_reads(parts) - own)
        elif isinstance(n, ast.ClassDef):
            out |= {m.id for m in all_nodes(n) if isinstance(m, ast.Name) and isinstance(m.ctx, ast.Load)}
        else:
            todo.extend(ast.iter_child_nodes(n))
    return out


def nonlocal_writes(fdef) -> set[str]:
    """Names a nested function declares `nonlocal` (its own body, not deeper definitions)."""
    out: set[str] = set()
    stack = list(fdef.body)
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Nonlocal):
            out.update(n.names)
        elif not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(n))
    return out


# methods that change their object in place: list's and dict's, and an array's
IN_PLACE_METHODS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "reverse", "update",
                              "setdefault", "popitem", "__setitem__", "__delitem__", "__iadd__", "fill", "sort",
                              "put", "partition", "itemset", "resize"})


def changed_in_place(fdef, augmented_names: bool = True) -> set[str]:
    """Variables fdef changes in place: `v[i] = ...`, `v.f = ...`, `v[i] += ...`, `v += ...`, `v.append(...)`
    (a method changing its list, dict or array: `IN_PLACE_METHODS`); `v += ...` only with
    `augmented_names` (an array's or list's change in place, a number's rebinding)."""
    out: set[str] = set()
    for n in all_nodes(fdef):
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in IN_PLACE_METHODS
                and (base := stored_base(n.func))):
            out.add(base)
        if isinstance(n, ast.Delete):  # (`del p[0]`, `del o.f`: gen21 W2b)
            out.update(b for t in n.targets if isinstance(t, (ast.Subscript, ast.Attribute)) and (b := stored_base(t)))
            continue
        if not isinstance(n, (ast.Assign, ast.AugAssign)):
            continue
        inplace = isinstance(n, ast.AugAssign) or getattr(n.value, "_od_inplace", False)
        for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
            if (inplace and augmented_names or not isinstance(t, ast.Name)) and (base := stored_base(t)):
                out.add(base)  # (not a rebinding)
    return out


def captured_stores(fdef) -> set[str]:
    """Variables of the enclosing function a nested function changes in place without rebinding them
    (`out[i] = v`, `buf.f = v`, `out[i] += v`, `acc.append(v)`: a captured array, list or object), in its
    own body."""
    local = local_names(fdef)
    out: set[str] = set()
    # local names that may share memory with a captured variable (`b = a`, `v = a.reshape(2, -1)`): a
    # change through them is one of the captured object (it went unseen: the gradient missed it)
    aliases: dict[str, set[str]] = {}
    nodes = []
    stack = list(fdef.body)
    while stack:
        n = stack.pop()
        nodes.append(n)
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(n))
    for _ in range(3):  # (chains of aliases, `b = a; c = b[1:]`)
        for n in nodes:
            if isinstance(n, ast.Assign):
                seen = set()
                for v in viewed(n.value, strict=True):
                    seen |= aliases.get(v, set()) if v in local else {v}
                for t in n.targets:
                    if isinstance(t, ast.Name) and seen:
                        aliases.setdefault(t.id, set()).update(seen)

    def captured(base):
        return {base} if base not in local else aliases.get(base, set())
    for n in nodes:
        targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AugAssign) else []
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in IN_PLACE_METHODS:
            targets = [n.func]
        for t in targets:
            if isinstance(t, (ast.Subscript, ast.Attribute)) and (base := stored_base(t)):
                out |= captured(base)
            elif isinstance(n, ast.AugAssign) and isinstance(t, ast.Name) and t.id in aliases:
                out |= aliases[t.id]  # (`b *= 0.5` on an array b views)
    return out - nonlocal_writes(fdef)


def _children(node):
    """node's child nodes (`ast.iter_child_nodes`, as a list, without its generators)."""
    out = []
    for name in node._fields:
        v = getattr(node, name, None)
        if type(v) is list:
            out.extend(x for x in v if isinstance(x, ast.AST))
        elif isinstance(v, ast.AST):
            out.append(v)
    return out


def closure_hazards(fdef, params, nodes=None) -> tuple[set[str], set[str]]:
    """(variables of fdef that are bound more than once, or in a loop, or written by nested functions;
    names of closures made in fdef that escape: read in fdef's own body other than as a call's callee, or
    bound otherwise too). (`nodes`: `all_nodes(fdef)` as a list, if the caller has it.)"""
    binds: dict[str, int] = {p: 1 for p in params}
    loops = (ast.For, ast.While, ast.AsyncFor)
    nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
    callees: set[int] = set()
    loads: list[ast.Name] = []

    stack = [(fdef, False)]
    while stack:  # (a stack, not recursion: a long function's walk was a twentieth of its build)
        node, in_loop = stack.pop()
        for c in _children(node):
            if isinstance(c, ast.Name):
                if isinstance(c.ctx, ast.Store):
                    binds[c.id] = binds.get(c.id, 0) + (2 if in_loop else 1)
                else:
                    loads.append(c)
            elif isinstance(c, nested):
                if isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    binds[c.name] = binds.get(c.name, 0) + (2 if in_loop else 1)
                for n in nonlocal_writes(c) if isinstance(c, ast.FunctionDef) else ():
                    binds[n] = binds.get(n, 0) + 2
                # a name read inside a nested function is one of its cells: its cotangent comes back
                # with that function's (routed where that function is called or made)
                if isinstance(c, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)):  # made here
                    made = c.args.defaults + c.args.kw_defaults + getattr(c, "decorator_list", [])
                    loads.extend(n for d in made if d is not None for n in all_nodes(d) if isinstance(n, ast.Name))
            else:
                if isinstance(c, ast.Call) and isinstance(c.func, ast.Name):
                    callees.add(id(c.func))
                stack.append((c, in_loop or isinstance(c, loops)))
    unstable = {n for n, k in binds.items() if k > 1}
    # bound other than by making a closure (`g = deco(g)`, `g = other`): a call of it may call another
    nodes = list(all_nodes(fdef)) if nodes is None else nodes
    made = {id(t) for n in nodes if isinstance(n, ast.Assign) and isinstance(n.value, ast.Lambda)
            for t in n.targets}
    rebound = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
               and id(n) not in made}
    escaping = {n.id for n in loads if id(n) not in callees} | rebound
    return unstable, escaping


def captured_changes_by_kind(fdef) -> tuple[set[str], set[str]]:
    """(the captured variables a nested function changes by an in-place method, `log.append(v)`; those it
    stores items into, `out[i] = v`, `out[i] += v`)."""
    local = local_names(fdef)
    methods: set[str] = set()
    items: set[str] = set()
    for n in all_nodes(fdef):
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in IN_PLACE_METHODS
                and (base := stored_base(n.func)) and base not in local):
            methods.add(base)
        targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AugAssign) else []
        for t in targets:
            if isinstance(t, ast.Subscript) and (base := stored_base(t)) and base not in local:
                items.add(base)
    return methods, items


def _captured_changes(fdef) -> set[str]:
    """Variables of the enclosing function whose objects a nested function may change in place: those it
    stores into (`captured_stores`) and those whose methods it calls with arguments (`acc.add(q)`)."""
    local = local_names(fdef)
    out = captured_stores(fdef) if not isinstance(fdef, ast.Lambda) else set()
    for n in all_nodes(fdef):
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and (n.args or n.keywords)
                and (base := stored_base(n.func)) and base not in local):
            out.add(base)
        elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and (n.args or n.keywords)
              and n.func.id not in local):  # (a captured callable called: a bound method may change its object)
            out.add(n.func.id)
    return out


def differentiable_writes(fdef) -> set[str]:
    """The `nonlocal` variables a nested function sets from something other than themselves and constants
    (`acc = acc + v`, not the counter `n += 1`)."""
    names = nonlocal_writes(fdef)
    out: set[str] = set()
    nodes = list(all_nodes(fdef))
    made: dict[str, list] = {}  # (the lowered form's temporaries: `_od_t3 = len(data); n = _od_t3`)
    for n in nodes:
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            made.setdefault(n.targets[0].id, []).append(n.value)
    for n in nodes:
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name) and t.id in names and _reads(n.value) - {t.id} and not _counted(n.value, made):
                    out.add(t.id)
        elif (isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and n.target.id in names
              and not isinstance(n.value, ast.Constant)):
            out.add(n.target.id)
    return out


def _unwrapped(e: ast.expr) -> ast.expr:
    """e without its `__od_primal__(...)`."""
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "__od_primal__" and len(e.args) == 1:
        return e.args[0]
    return e


def _plain_read(e: ast.expr) -> bool:
    """e reads a variable (also through `__od_primal__`): evaluated twice, it gives the same value."""
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in ("__od_primal__", "__od_rounded__") \
            and len(e.args) == 1:
        e = e.args[0]
    return isinstance(e, ast.Name)


def through_calls(defs, own: dict, siblings: bool = True) -> dict:
    """own (nested function's name -> the enclosing variables it writes) with what each also writes through
    the nested functions it calls by name or defines (`helper(v)` calling `add`, whose `nonlocal s` it
    changes: the cotangent of s did not flow into helper's call, 0 for 3), as far as they are free variables
    of it (not its own locals), transitively."""
    by_name = {d.name: d for d in defs}
    reach, local = {}, {}
    for d in defs:
        inner = {m.name for m in all_nodes(d) if isinstance(m, ast.FunctionDef) and m is not d}
        called = {n.func.id for n in all_nodes(d) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                  and n.func.id in by_name and n.func.id != d.name}
        # (a function defined inside d may write d's own variables: those stay d's)
        reach[d.name] = [(m, m in inner) for m in (called | inner if siblings else inner)]
        local[d.name] = local_names(d) - nonlocal_names(d)
    out = {k: set(v) for k, v in own.items()}
    changed = True
    while changed:
        changed = False
        for name, targets in reach.items():
            mine = out.setdefault(name, set())
            for m, nested in targets:
                extra = out.get(m, set()) - mine - (local[name] if nested else set())
                if extra:
                    mine |= extra
                    changed = True
    return {k: v for k, v in out.items() if v}


def nonlocal_names(fdef) -> set[str]:
    return {n for s in all_nodes(fdef) if isinstance(s, (ast.Nonlocal, ast.Global)) for n in s.names}


def _counted(e: ast.expr, made: dict) -> bool:
    """e is a count or a truth, never a derivative's carrier: `len(data)`, a comparison (statistics.kde's
    `nonlocal n; n = len(data)`), or a temporary made only of one (made: name -> the values assigned it)."""
    if isinstance(e, ast.Name) and e.id.startswith("_od_") and len(made.get(e.id, ())) == 1:
        e = made[e.id][0]
    return isinstance(e, ast.Compare) or isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and (
        e.func.id in ("len", "isinstance", "callable", "id")) and not e.keywords


def _reads(e: ast.AST) -> set[str]:
    return {n.id for n in all_nodes(e) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def viewed(e: ast.AST, strict: bool = False) -> set[str]:
    """The variables whose object the value of e may share memory with: `y` of `y`, `y[i]`, `y.T`,
    `y.reshape(...)`, `np.reshape(y, ...)` (arithmetic makes new objects). A call may return a view of any
    argument; `strict` keeps only its object and first argument (`y.reshape(...)`, `np.asarray(y)`), as
    activity needs: the others of `np.arange(0, n, dtype=t)` would make shapes and dtypes active."""
    if isinstance(e, ast.Name):
        return {e.id}
    if isinstance(e, (ast.Subscript, ast.Attribute)):
        return viewed(e.value, strict)
    if isinstance(e, ast.Call):
        out = set(viewed(e.func.value, strict)) if isinstance(e.func, ast.Attribute) else set()
        for a in e.args[:1] if strict else e.args:
            out |= viewed(a.value if isinstance(a, ast.Starred) else a, strict)
        for k in () if strict else e.keywords:
            out |= viewed(k.value)
        return out
    if isinstance(e, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*(viewed(x.value if isinstance(x, ast.Starred) else x) for x in e.elts))
    if isinstance(e, ast.Dict):
        return set().union(*(viewed(x) for x in e.values))
    if isinstance(e, (ast.Lambda, ast.GeneratorExp)) and not strict:
        # (what a lambda or a generator reads, it may return or yield a view of: `map(lambda i: a[i:i + 2],
        # ...)`, `(a[i:i + 2] for i in ...)`, looped over and written: gen19 W7)
        return _reads(e)
    return set()


# ndarray methods whose result is a view of the object (its elements, not a new array)
_VIEW_METHODS = frozenset({"reshape", "view", "ravel", "transpose", "swapaxes", "squeeze", "diagonal"})


def view_of(e: ast.AST) -> set[str]:
    """The variables the value of e is a view of, for certain: `y`, `y[1:3]`, `y.T`, `y.real`,
    `y.reshape(...)` — not the arguments of calls, which would include shapes (`np.arange(n)`)."""
    if isinstance(e, ast.Name):
        return {e.id}
    if isinstance(e, (ast.Subscript, ast.Attribute)):
        return view_of(e.value)
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in _VIEW_METHODS:
        if e.func.attr in _SAME_ARRAY and e.args and not isinstance(e.args[0], ast.Starred):
            # `np.reshape(res, s)` reads as a method of `np` too: the first argument's view as well (taken
            # for `np`'s alone, a write through it by `np.copyto`, `out=` or `np.add.at` left res a
            # constant: 0 in both modes, scipy.sparse's `y.ravel()` into a kernel)
            return view_of(e.func.value) | view_of(e.args[0])
        return view_of(e.func.value)
    name = e.func.attr if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) else (
        e.func.id if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) else None)
    if name in _SAME_ARRAY and e.args and not isinstance(e.args[0], ast.Starred):
        return view_of(e.args[0])  # (`m = np.asarray(a)` is a itself: `np.sin(m, out=m)` changes a)
    if name in _VIEWS_OF_ALL and e.args:  # (`a, b = np.broadcast_arrays(x, y)`: views of each)
        return set().union(*(view_of(a.value if isinstance(a, ast.Starred) else a) for a in e.args))
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "__od_unpack__" and e.args:
        return view_of(e.args[0])  # (the lowering's unpacking: the value's own items, `i, row = pair`)
    return set()


# numpy's functions returning their array argument itself (or a view of it) when it is already an array
_SAME_ARRAY = frozenset({"asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "atleast_1d",
                         "atleast_2d", "atleast_3d", "require", "squeeze", "ravel", "reshape", "transpose",
                         "swapaxes", "moveaxis", "expand_dims",
                         # and views of it (`a, b = np.split(res, 2)`, `r = np.real(z)`, `np.flip(a)`: a write
                         # through one by `np.copyto` or `out=` left res a constant, 0 for 3.4 in both modes)
                         "split", "array_split", "hsplit", "vsplit", "dsplit", "unstack", "real", "imag",
                         "diagonal", "flip", "fliplr", "flipud", "rot90", "broadcast_to", "as_strided",
                         "sliding_window_view", "asmatrix", "matrix_transpose", "permute_dims", "rollaxis"})
_VIEWS_OF_ALL = frozenset({"broadcast_arrays", "atleast_1d", "atleast_2d", "atleast_3d", "meshgrid", "ix_"})


_FRESH_MODULES = frozenset({"math", "cmath"})
_FRESH_BUILTINS = frozenset({float, int, complex, bool, len})


def resolved_calls(fdef: ast.FunctionDef, globals_: dict, freevars: tuple = ()):
    """(call node, callee) for each call `name(...)` / `module.name(...)` in fdef (no `*args`) whose callee
    the name finds now in globals_ (or builtins). A name bound in the function (or captured) is never
    resolved. Resolving module globals at transform time is what activity does for `ask_primals` too."""
    local = set(freevars)
    for n in all_nodes(fdef):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            local.add(n.id)
        elif isinstance(n, ast.arg):
            local.add(n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            local.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            local.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            local.update(n.names)
    builtins_ = globals_.get("__builtins__", builtins)
    builtins_ = builtins_ if isinstance(builtins_, dict) else vars(builtins_)

    def resolve(e):
        if isinstance(e, ast.Name):
            if e.id in local:
                return None
            return globals_[e.id] if e.id in globals_ else builtins_.get(e.id)
        if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name):
            module = resolve(e.value)
            if isinstance(module, types.ModuleType):
                return vars(module).get(e.attr)  # (no module __getattr__: it may have effects)
        return None

    for n in all_nodes(fdef):
        if isinstance(n, ast.Call) and not any(isinstance(a, ast.Starred) for a in n.args):
            fn = resolve(n.func)
            if fn is not None:
                yield n, fn


def fresh_calls(fdef: ast.FunctionDef, globals_: dict, freevars: tuple = ()) -> set[int]:
    """The ids of the calls in fdef (`resolved_calls`) whose result shares no memory with their
    arguments: a function of `math` or `cmath`, `float`/`int`/`complex`/`bool`/`len`, or a numpy ufunc
    given no output (`out=` or more positional arguments than its inputs)."""
    out = set()
    for n, fn in resolved_calls(fdef, globals_, freevars):
        if type(fn) is types.BuiltinFunctionType and getattr(fn, "__module__", None) in _FRESH_MODULES:
            out.add(id(n))
        elif isinstance(fn, type) and fn in _FRESH_BUILTINS or fn is len:
            out.add(id(n))
        elif (isinstance(fn, np.ufunc) and len(n.args) <= fn.nin
              and all(k.arg is not None and k.arg != "out" for k in n.keywords)):
            out.add(id(n))
        elif (_fresh_array(fn) or fn is np.array and all(k.arg not in ("copy", None) for k in n.keywords)) \
                and not any(k.arg == "out" for k in n.keywords) and not _object_dtype(n):
            out.add(id(n))  # (`y = np.copy(x)`: y's writes do not reach x, a loop over x stays a constant's)
    return out


def _object_dtype(call: ast.Call) -> bool:
    """`dtype=object` (or "O") given: the array holds the objects it was given, not copies (gen20 W9)."""
    return any(k.arg == "dtype" and (isinstance(k.value, ast.Name) and k.value.id == "object"
                                     or isinstance(k.value, ast.Constant) and k.value.value in ("O", "object"))
               for k in call.keywords)


def _fresh_array(fn) -> bool:
    try:
        return fn in _FRESH_ARRAYS
    except TypeError:  # (an unhashable callable: a global object with `__call__` and `__eq__`)
        return False


# numpy's functions returning a new array whatever they are given (np.array without `copy=`, also)
_FRESH_ARRAYS = frozenset({np.copy, np.zeros_like, np.ones_like, np.empty_like, np.full_like, np.zeros, np.ones,
                           np.empty, np.full, np.arange, np.linspace})


def stateful_calls(fdef: ast.FunctionDef, globals_: dict, freevars: tuple = ()) -> set[int]:
    """The ids of the calls in fdef whose results may share objects with each other through state no
    argument shows: a call of a Python function or a class of its own (`Bag()` whose `__init__` sets
    `self.items = SHARED`, `get_cache()` returning a module's list), resolved now or defined in fdef."""
    out = set()
    for n, fn in resolved_calls(fdef, globals_, freevars):
        if type(fn) is types.FunctionType or isinstance(fn, type) and fn.__flags__ & _HEAPTYPE:
            out.add(id(n))
    own = {n.name for n in all_nodes(fdef) if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n is not fdef}
    if own:
        out.update(id(n) for n in all_nodes(fdef)
                   if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in own)
    return out


_STATE = "<state>"  # (no variable's name: the group of results of `stateful_calls`)


def view_groups(fdef: ast.FunctionDef, fresh: set[int] = frozenset(),
                stateful: set[int] = frozenset()) -> dict[str, set[str]]:
    """Each variable's group of variables whose objects may share memory with its own (views of one
    array, containers holding it, results of calls on it): connected by assignments `a = <view of b>`,
    stores `b[i] = a` / `b.f = a`, calls (result and arguments) and loops over b; the parameters form one
    group (a caller may pass views of one array). A name outside every group shares memory with no other
    variable. `fresh`: the ids of calls known to return new objects (`fresh_calls`), whose results join
    no group (without it, every `math.sin(x)` would join x's group, and the code following each call's
    group would grow with the function's length: quadratic). `stateful`: the ids of calls whose results may
    share objects through state (`stateful_calls`): they join one group."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def join(a: str, names: set[str]) -> None:
        for b in names:
            parent[root(b)] = root(a)

    nodes = list(all_nodes(fdef))
    made_here = _callables_made_here(fdef, nodes)
    containers = container_names(fdef, nodes)
    # (variables bound to a bound method, a call's result or a container's item: calling one may return
    # what its object holds, `g = d['g']; b = g()` of `d = {'g': lambda: c}`)
    callables = {name for name, value in name_stores(fdef, nodes)
                 if isinstance(value, (ast.Attribute, ast.Call, ast.Subscript))}
    for n in nodes:
        if isinstance(n, ast.Assign):
            shared = set() if id(n.value) in fresh else viewed(n.value)
            if isinstance(n.value, ast.BinOp) and isinstance(n.value.op, (ast.Add, ast.Mult, ast.BitOr)):
                # a list or dict an operator made holds its operands' objects (`l = [a] * 2`, `L + L`, `D | {}`):
                # a change through it (`l[1] *= 0.5`) is one of a (gen18 W1, W4: 2 for 1). Operands known to be
                # containers only: arithmetic on arrays makes new ones
                shared |= {e.id for e in (n.value.left, n.value.right) if isinstance(e, ast.Name) and e.id in containers}
            if id(n.value) in stateful:
                shared.add(_STATE)
            if made_here and (callee := _callee_made_here(n.value, made_here)) is not None:
                shared |= _captured_here(callee, fdef)  # (`m = get()` of `get = lambda: a`: m may be a)
            if isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Name) and n.value.func.id in callables:
                shared.add(n.value.func.id)  # (`b = g()` of `g = H(c).get`: b may be what g's object holds)
            for t in n.targets:
                if isinstance(t, ast.Name):
                    join(t.id, shared)
                elif isinstance(t, (ast.Subscript, ast.Attribute)) and stored_base(t) is not None:
                    join(stored_base(t), shared)
        elif isinstance(n, ast.With):  # (`with nullcontext(c) as b`: b may be what the manager holds)
            for item in n.items:
                if isinstance(item.optional_vars, ast.Name):
                    join(item.optional_vars.id, viewed(item.context_expr))
        elif isinstance(n, ast.For):  # (also the lowering's `for _od_i4, v in __od_enumerate_at__(...)`)
            shared = viewed(n.iter) if isinstance(n.target, ast.Name) else _reads(n.iter)
            for t in _loop_targets(n):
                join(t, shared)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n is not fdef:
            # a nested function holds its defaults' objects (`def add(v, store=hist)`: calling it changes hist)
            for d in (*n.args.defaults, *n.args.kw_defaults):
                if d is not None:
                    join(n.name, viewed(d))
            # and may return a view of what it captures (`def v(i): return a[i:i + 2]` given to map, its
            # results written: gen19 W7)
            own = local_names(n)
            for r in all_nodes(n):
                if isinstance(r, ast.Return) and r.value is not None:
                    join(n.name, view_of(r.value) - own)
    # the caller may pass one array twice, or an array and a view of it (`f(y, y[1:])`): the parameters may
    # share memory with each other
    a = fdef.args
    params = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
    # a closure's captured variables may share memory with each other and with its parameters too (`a`
    # and its view `v = a[1:]` made outside: a write through one read through the other lost its gradient)
    local = local_names(fdef)
    captured = sorted({n.id for n in all_nodes(fdef) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                       and n.id not in local and n.id in parent})
    params += captured
    if len(params) > 1:
        join(params[0], set(params[1:]))
    if captured and _STATE in parent:  # (results of stateful calls may hold module state the function reads:
        join(_STATE, set(captured))    # `Bag()` whose `self.items = REGISTRY`, then `sum(REGISTRY)`)
    groups: dict[str, set[str]] = {}
    for x in list(parent):
        groups.setdefault(root(x), set()).add(x)
    return {x: members for members in groups.values() if len(members) > 1 for x in members}


_CONTAINER_DISPLAYS = (ast.List, ast.Tuple, ast.Dict, ast.ListComp, ast.DictComp)
_CONTAINER_MAKERS = frozenset({"list", "dict", "tuple"})


def container_names(fdef, nodes=None) -> set[str]:
    """The variables every binding of which makes a list, tuple or dict: a display, a comprehension,
    `list(...)`, `dict(...)`, `tuple(...)`, or `+`, `*`, `|` of such a variable."""
    values: dict[str, list] = {}
    for name, value in name_stores(fdef, nodes):
        values.setdefault(name, []).append(value)

    def makes(v, known) -> bool:
        if isinstance(v, _CONTAINER_DISPLAYS):
            return True
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in _CONTAINER_MAKERS:
            return True
        return isinstance(v, ast.BinOp) and isinstance(v.op, (ast.Add, ast.Mult, ast.BitOr)) and any(
            isinstance(e, ast.Name) and e.id in known for e in (v.left, v.right))
    known: set[str] = set()
    grew = True
    while grew:
        grew = False
        for name, vs in values.items():
            if name not in known and all(makes(v, known | {name}) for v in vs):
                known.add(name)
                grew = True
    return known


def _loop_targets(n: ast.For) -> list[str]:
    """The names a for loop binds (`v`, `i, v`; not the lowering's own index `_od_i4`)."""
    if isinstance(n.target, ast.Name):
        return [n.target.id]
    if isinstance(n.target, ast.Tuple):
        return [e.id for e in n.target.elts if isinstance(e, ast.Name) and not e.id.startswith("_od_i")]
    return []


def _callables_made_here(fdef, nodes) -> dict:
    """The nested functions of fdef by name, and its variables bound once, to a lambda."""
    out = {n.name: n for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n is not fdef}
    lambdas: dict = {}
    for n in nodes:
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            lambdas.setdefault(n.targets[0].id, []).append(n.value)
    out.update((k, v[0]) for k, v in lambdas.items() if len(v) == 1 and isinstance(v[0], ast.Lambda) and k not in out)
    return out


def _captured_here(callee, fdef) -> set[str]:
    """The variables of fdef (its own bindings and parameters) a nested function or lambda reads: what its
    call may return (not a name its comprehension binds with `:=`, its own, though `free_names` counts it)."""
    return free_names(callee) & (own_bindings(fdef) | set(param_names(fdef.args)))


def _callee_made_here(value, made_here: dict):
    """The nested function or lambda a call `value` calls (`get()`, `(lambda: a)()`), or None."""
    if not isinstance(value, ast.Call):
        return None
    f = value.func
    if isinstance(f, ast.Lambda):
        return f
    return made_here.get(f.id) if isinstance(f, ast.Name) else None


# -- containers no other object can hold ---------------------------------------------------------------

# methods of a list, dict or set that keep no reference to it (`row.append(x)`, `d.get(k)`; not `d.keys()`,
# a view holding d), and builtins that read a container without keeping it (`tuple(row)`, `len(row)`)
_OWN_METHODS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "update",
                          "setdefault", "get", "copy", "index", "count", "popitem", "add", "discard"})
_READERS = frozenset({"len", "__od_size__", "tuple", "list", "sorted", "sum", "set", "frozenset", "min", "max",
                      "any", "all", "bool", "str", "repr", "isinstance"})  # (`__od_size__`: the lowering's len)
_DISPLAYS = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)
_INTROSPECTION = frozenset({"locals", "vars", "eval", "exec", "globals"})


def private_containers(fdef: ast.FunctionDef, globals_: dict) -> frozenset[str]:
    """Local variables that only ever hold a list, dict or set made here (`row = []`) which no other object
    can hold: bound only by `v = <display>`, and read only as the receiver of the container's own methods
    (`row.append(x)`), for its items (`row[i]`, `for x in row`, `x in row`), by builtins that keep no
    reference (`tuple(row)`, `len(row)`), in tests, or returned (the function ends). Never aliased, stored,
    passed elsewhere, yielded or captured by a nested scope. An in-place change of one has no other holder
    whose cotangents need merging (reverse mode skips its `views` scan: scanning every variable's object
    graph on each `row.append` made zip over a mapping's keys view in colour cost 40x its primal)."""
    nodes = list(all_nodes(fdef))
    parent: dict[int, ast.AST] = {}
    for n in nodes:
        for c in ast.iter_child_nodes(n):
            parent[id(c)] = n
    nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
    params = set(param_names(fdef.args))
    candidates: set[str] = set()
    for n in nodes:
        if isinstance(n, ast.Assign) and isinstance(n.value, _DISPLAYS) and len(n.targets) == 1 \
                and isinstance(n.targets[0], ast.Name):
            candidates.add(n.targets[0].id)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _INTROSPECTION:
            return frozenset()
    candidates -= params
    if not candidates:
        return frozenset()
    stored = {x.id for x in nodes if isinstance(x, ast.Name) and not isinstance(x.ctx, ast.Load)}
    shadowed = set(globals_) | stored  # (a reader's name bound by the module or here is not the builtin)
    last = _returned_call(fdef)
    out = set(candidates)
    for n in nodes:
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            out.difference_update(n.names)
        elif isinstance(n, nested) and n is not fdef:
            out.difference_update(x.id for x in all_nodes(n) if isinstance(x, ast.Name))
        elif isinstance(n, ast.Name) and n.id in out and not _private_use(n, parent, shadowed, last):
            out.discard(n.id)
    return frozenset(out)


def _returned_call(fdef: ast.FunctionDef) -> ast.Call | None:
    """The call whose result fdef returns as its last statement (`return Transform(nodes, ...)`, lowered as
    `t = Transform(nodes, ...)` then `return t`), at the top of its body (run once, after every other statement
    but the return): a container handed to it is held by nothing else while fdef changes it before (colorspacious'
    `get_transform` appending to the list of nodes it hands to `Transform`). Its own changes there are the
    call's (`call_views`)."""
    body = fdef.body
    if not body or not isinstance(body[-1], ast.Return):
        return None
    r = body[-1].value
    if isinstance(r, ast.Call):
        return r
    if (isinstance(r, ast.Name) and len(body) > 1 and isinstance(s := body[-2], ast.Assign) and len(s.targets) == 1
            and isinstance(s.targets[0], ast.Name) and s.targets[0].id == r.id and isinstance(s.value, ast.Call)):
        return s.value
    return None


def _private_use(n: ast.Name, parent: dict, shadowed: set, last: ast.Call | None = None) -> bool:
    """The read or binding of name n keeps its container private (`private_containers`); `last`: the call whose
    result the function returns (`_returned_call`), to which it may be handed."""
    up = parent.get(id(n))
    if isinstance(n.ctx, ast.Store):
        if isinstance(up, ast.AugAssign):  # (`row += [x]`: the list's own in-place operator)
            return up.target is n
        return isinstance(up, ast.Assign) and isinstance(up.value, _DISPLAYS) and up.targets == [n]
    if isinstance(n.ctx, ast.Del):
        return True
    while (isinstance(up, ast.Call) and isinstance(up.func, ast.Name) and up.func.id == "__od_primal__"
           and len(up.args) == 1 and up.args[0] is n and not up.keywords):
        n, up = up, parent.get(id(up))  # (`len(__od_primal__(row))`, `ask_primals`': its value, no reference kept)
    if up is last and last is not None and (any(a is n for a in up.args) or any(k.value is n for k in up.keywords)):
        return True  # (handed to the call whose result is returned: fdef changes it no more)
    if isinstance(up, ast.Attribute):
        call = parent.get(id(up))
        return up.attr in _OWN_METHODS and isinstance(call, ast.Call) and call.func is up
    if isinstance(up, ast.Subscript):
        return up.value is n
    if isinstance(up, ast.Call):
        f = up.func
        if isinstance(f, ast.Name) and f.id == "__od_eager__":  # (a generator's items, returned: the lowering's)
            return True
        return (n in up.args and isinstance(f, ast.Name) and f.id in _READERS and f.id not in shadowed
                and not any(isinstance(a, ast.Starred) for a in up.args))
    if isinstance(up, (ast.For, ast.comprehension)):
        return up.iter is n
    if isinstance(up, ast.Compare):
        return True
    if isinstance(up, (ast.If, ast.While, ast.IfExp, ast.Assert)):
        return up.test is n
    if isinstance(up, ast.UnaryOp):
        return isinstance(up.op, ast.Not)
    return isinstance(up, ast.Return)


# code object (weakly) -> whether it (or a function it calls by name) reads changed state
_state_readers = ByIdentity()


def _reads_state(fn, depth: int = 0) -> bool:
    """Whether calling the Python function fn may read module state that code may change (a function
    without differentiated arguments may still return derivatives through it: `cache[-1]`)."""
    code = fn.__code__
    hit = _state_readers.get(code)
    if hit is not None:
        return hit
    _state_readers[code] = False  # recursion
    g = fn.__globals__
    changed = _module_changes(g)
    found = False
    codes = [code] + [c for c in code.co_consts if isinstance(c, types.CodeType)]
    for c in codes:
        for name in c.co_names:
            if name not in g:
                continue
            v = g[name]
            if type(v) is types.FunctionType:
                if depth < 3 and _reads_state(v, depth + 1):
                    found = True
            elif (not isinstance(v, _NOT_STATE) and type(v) not in _INERT and not callable(v)
                  and (changed is None or name in changed)
                  and (isinstance(v, _SHARED_CONTAINERS) or changed is not None or hasattr(v, "__dict__"))):
                found = True
            if found:
                break
        if found:
            break
    if len(_state_readers) > 4096:
        _state_readers.clear()
    _state_readers[code] = found
    return found


def _holds_changed_state(cls: type) -> bool:
    """Whether a class (or a base of its own) holds a container or array in its body that its module's
    code stores into or changes by a method (`self.buf[:] = v`, `self.hist.append(v)`)."""
    for k in cls.__mro__[:-1]:
        if not k.__flags__ & _HEAPTYPE:
            continue
        held = [name for name, val in vars(k).items() if isinstance(val, _SHARED_CONTAINERS)]
        if not held:
            continue
        space = getattr(sys.modules.get(k.__module__), "__dict__", None)
        changed = _module_changes(space) if isinstance(space, dict) else None
        if changed is None or any("." + name in changed for name in held):
            return True
    return False


# code object (weakly) -> the positions of its parameters whose objects it only reads (`_kept_params`)
_kept = ByIdentity()
# calls giving a new value that keeps no reference to their argument (a number, a text, a truth)
_SCALAR_CALLS = frozenset({"len", "float", "int", "abs", "str", "repr", "bool", "isinstance", "type", "round", "hash",
                           "id", "format", "callable"})


def _kept_params(fn) -> frozenset:
    """The positions of fn's positional parameters whose objects fn only reads (never changes in place, hands
    on, aliases, returns, or iterates into names used otherwise): an argument there is no object a call of fn
    with differentiated inputs may store them into. Each use of such a parameter is an operand of arithmetic
    or a comparison, an item or attribute read used so, an argument of a call giving a number or text
    (`len(kv)`), or a loop over it whose items are used so (`[float(... k / kv[-1] ...) for k in kv]`: geomdl's
    knot vector normalised to a precision read from an object holding a derivative, whose constant list was
    taken for differentiated and its text's parse refused). Generators, and functions defining functions, keep
    none."""
    code = fn.__code__
    hit = _kept.get(code)
    if hit is not None:
        return hit
    found: frozenset = frozenset()
    if not code.co_flags & (0x20 | 0x80 | 0x200):  # (generator, coroutine, async generator)
        try:
            from overdub.passes import get_source
            tree = get_source(code, fn.__globals__).tree
        except Exception:  # (no source: nothing known)
            tree = None
        if isinstance(tree, ast.FunctionDef) and not any(
                isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Global,
                               ast.Nonlocal)) for n in ast.walk(tree) if n is not tree):
            found = _only_read(tree)
    if len(_kept) > 4096:
        _kept.clear()
    _kept[code] = found
    return found


def _only_read(fdef: ast.FunctionDef) -> frozenset:
    parents = {id(c): n for n in ast.walk(fdef) for c in ast.iter_child_nodes(n)}
    stored = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    loads: dict = {}
    for n in ast.walk(fdef):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            loads.setdefault(n.id, []).append(n)

    def pure(node, seen) -> bool:
        """node's value (a read of the parameter, or of something drawn from it) only flows into new values."""
        up = parents.get(id(node))
        if isinstance(up, (ast.BinOp, ast.UnaryOp, ast.Compare)):  # (not `kv or []`: kv itself)
            return True
        if isinstance(up, (ast.Subscript, ast.Attribute)) and up.value is node:
            return isinstance(up.ctx, ast.Load) and pure(up, seen)
        if isinstance(up, ast.Subscript) and up.slice is node:
            return True
        if isinstance(up, ast.Call) and node in up.args and isinstance(up.func, ast.Name) \
                and up.func.id in _SCALAR_CALLS and up.func.id not in stored:
            return True
        if isinstance(up, (ast.For, ast.comprehension)) and up.iter is node and isinstance(up.target, ast.Name):
            name = up.target.id  # (its items, by a name used only so)
            if name in seen:
                return True
            seen.add(name)
            return all(pure(m, seen) for m in loads.get(name, ()))
        if isinstance(up, ast.Assign) and up.value is node and all(isinstance(t, ast.Name) for t in up.targets):
            # (a local name it is bound to, each use of which is used so: geomdl's `prev_knot = knot_vector[0]`,
            # `prev_knot = knot` in `knotvector.check`, which a knot vector setter calls with `self.degree`)
            for t in up.targets:
                if t.id not in seen:
                    seen.add(t.id)
                    if not all(pure(m, seen) for m in loads.get(t.id, ())):
                        return False
            return True
        return False

    params = [a.arg for a in fdef.args.posonlyargs + fdef.args.args]
    return frozenset(i for i, name in enumerate(params)
                     if name not in stored and all(pure(n, {name}) for n in loads.get(name, ())))


on_clear(_kept.clear)


def _callable_reads_state(v) -> bool:
    """Whether calling v, a global callable, runs Python code that may read changeable module state: a
    function, and the functions a bound method, a partial, `np.vectorize` and `np.frompyfunc`'s ufunc hold."""
    for _ in range(4):
        if type(v) is types.FunctionType:
            return _reads_state(v)
        if type(v) is types.MethodType:
            v = v.__func__
        elif type(v) is functools.partial:
            v = v.func
        elif isinstance(v, np.vectorize):
            v = v.pyfunc
        elif type(v) is np.ufunc and v.__name__.endswith(" (vectorized)"):
            from contexts.rules.registry import registry
            stand = registry.stand_in_of(v)
            if stand is None:
                return False
            v = stand[1][0]
        elif isinstance(v, type) and v.__flags__ & _HEAPTYPE:
            # a class of its own: its methods (`__init__` reading `G[-1]`, a list the caller filled with a
            # differentiated value: the object was taken for a constant, 0 for 6), and the containers and
            # arrays it holds for all its objects that its module's code changes (`buf = np.zeros(2)` in its
            # body, `self.buf[:] = v` in a method: `C(1.0).buf` read after was a constant, 0 for 6)
            return _holds_changed_state(v) or any(
                type(m) is types.FunctionType and _reads_state(m)
                for k in v.__mro__[:-1] if k.__flags__ & _HEAPTYPE for m in vars(k).values())
        else:
            return False
    return False


class _Activity:
    def __init__(self, active: set[str], nondiff_globals: frozenset[str], locals_: set[str],
                 sources: dict[str, set[str]], views: dict[str, set[str]]):
        self.active = set(active)
        self.locals = locals_
        self.nondiff = nondiff_globals
        self.sources = sources
        self.views = views
        self.drawn: dict[str, set[str]] = {}  # name -> the objects its value may have been read out of
        self.items: dict[str, set[str]] = {}  # a display made for an argument -> the variables it holds
        self.closure_stores: dict[str, set[str]] = {}
        self.closure_calls: dict[str, set[str]] = {}  # (the captured objects a nested function calls methods of)
        self.closure_writes: dict[str, set[str]] = {}
        self.state_readers: set[str] = set()
        self.kept_params: dict[str, frozenset] = {}  # global functions called here: the arguments they only read
        self.texts: set[str] = set()  # variables every binding of which is text (`_texts`)
        self.immutable: set[str] = set()
        # the lowering's temporaries of constant displays read once, as a call's argument (`helper([1.0, 2.0],
        # x)`): what the call may store into one no code here reads back, so it enters the call a constant
        # (marked active for it, a C function the callee hands it to was refused: visual-kinematics'
        # `Frame.from_euler_3`, sweep E)
        self.once_constants: frozenset[str] = frozenset()
        self.changed = True

    def mark(self, name: str) -> None:
        if name not in self.active:
            self.active.add(name)
            self.changed = True

    def mark_changed(self, name: str) -> None:
        """name's object receives an active value in place: it, every variable it may be a view of (those
        it was computed from: `v = y[1:3]` shares y's memory), and the objects it holds (`ns.items[0] = y` of
        `ns = SimpleNamespace(items=h)` changes h), become active."""
        todo, seen = [name], {name}
        while todo:
            n = todo.pop()
            self.mark(n)
            for m in (*self.sources.get(n, ()), *self.items.get(n, ())):
                if m not in seen and m not in self.immutable:  # (a number shares no memory: the -0.5 given
                    seen.add(m)  # to `np.random.uniform` whose draw is stored into an active object)
                    todo.append(m)
            # and the objects it may have been read out of, with what they hold (`for m in [a]: pass` then
            # `m[0] = y` changes a; `m = get()` of a `get = lambda: a`)
            for m in self.drawn.get(n, ()):
                if m not in seen and m in self.locals and m not in self.immutable:
                    seen.add(m)
                    self.mark(m)
                    self._mark_held(m, seen)
                    todo.append(m)

    def mark_argument(self, name: str) -> None:
        """name is an argument of a call with active inputs, which may store them into it in place: it, the
        arrays it is certainly a view of (`helper(z[1:3], x)` fills z) and the objects it may have been
        read from (`t = d.get(k); t.append(x)` fills the list d holds) become active."""
        if name in self.immutable:  # (a function: what its defaults hold, `def add(v, store=hist)`, is not)
            self._mark_held(name, {name})
            return
        todo, seen, held = [name], {name}, {name}
        while todo:
            n = todo.pop()
            self.mark(n)
            self._mark_held(n, held)
            # (and what it holds, whose own views and sources the change reaches too: `t = (k, rows[k])`)
            for m in (*self.views.get(n, ()), *self.drawn.get(n, ()), *self.items.get(n, ())):
                if m not in seen and m in self.locals and m not in self.immutable:
                    seen.add(m)
                    todo.append(m)

    def _mark_held(self, name: str, seen: set) -> None:
        """The objects name's object may hold (`items`), and theirs: a change through it may be a change of
        them (`reg['h'].append(y)` of `reg = {'h': hist}`). Not what they were drawn from: an iterator drawn
        for a tuple's item is no object to change."""
        todo = [name]
        while todo:
            for m in self.items.get(todo.pop(), ()):
                if m not in seen and m not in self.immutable:
                    seen.add(m)
                    self.mark(m)
                    todo.append(m)

    def value_active(self, v: ast.AST) -> bool:
        a = self.active
        if isinstance(v, ast.Name):
            return v.id in a
        if isinstance(v, ast.Constant) or isinstance(v, ast.Compare):
            return False
        if isinstance(v, ast.JoinedStr):  # the text of an active value (`f"{x}"`): active, so a callee parsing it
            return any(n in a for n in _reads(v))  # back (`float(s)`) runs transformed and is refused there
        if isinstance(v, ast.UnaryOp):
            return not isinstance(v.op, (ast.Not, ast.Invert)) and self.value_active(v.operand)
        if isinstance(v, ast.BinOp):
            return self.value_active(v.left) or self.value_active(v.right)
        if isinstance(v, ast.Call):
            if isinstance(v.func, ast.Name) and v.func.id in LOOP_HELPERS:  # (the lowering's index loops')
                return False
            if isinstance(v.func, ast.Name) and v.func.id in self.nondiff and v.func.id not in a \
                    and v.func.id not in _EXCEPTIONS:
                # (but `str(x)`, as an f-string: geopy's `Point(f"{lat} {lon}")` parsed by a callee gave 0; and
                # any/all drawing from an active iterator, whose draws run code that may store: recorded; and
                # `type(name, bases, namespace)`, a class holding the namespace's values: gen16 W1, 0)
                return (v.func.id in _TEXT_MAKERS_AND_DRAWERS or _makes_class(v)) and any(n in a for n in _reads(v))
            read = _reads(v)
            if self.state_readers and not self.state_readers.isdisjoint(read):
                # it may return what an earlier call stored into module state (the function called, or given
                # to the callee: `map(h, xs)`, `np.vectorize(h)(xs)` of an h reading a changed global dict)
                return True
            return not a.isdisjoint(read)
        if isinstance(v, (ast.Lambda, ast.FunctionDef)):
            return bool(free_names(v) & a)
        if isinstance(v, ast.Attribute):
            if v.attr == "__class__" and "type" in self.nondiff:  # (`obj.__class__`: as `type(obj)`, a class)
                return False
            return self.value_active(v.value)
        if isinstance(v, ast.Subscript):  # (an active index: a class's own __getitem__ may compute with it)
            return self.value_active(v.value) or any(n in a for n in _reads(v.slice))
        return any(n in a for n in _reads(v))

    def visit(self, stmts: list[ast.stmt]) -> None:
        for s in stmts:
            if isinstance(s, ast.Assign):
                act = self.value_active(s.value)
                v = s.value
                # a method call with active arguments may mutate its object (lst.append(x))
                if isinstance(v, ast.Call) and self.value_active(v):
                    # a call with active inputs may store them into its mutable arguments (np.add.at(acc,
                    # ...), lst.append(x), helper(lst, x), out=...): those become active too
                    kept = range(len(v.args)) if isinstance(v.func, ast.Name) and v.func.id in _STORES_NOTHING else \
                        self.kept_params.get(v.func.id, ()) if isinstance(v.func, ast.Name) else \
                        self.kept_params.get(f"{v.func.value.id}.{v.func.attr}", ()) if isinstance(
                            v.func, ast.Attribute) and isinstance(v.func.value, ast.Name) else ()
                    text = isinstance(v.func, ast.Attribute) and isinstance(v.func.value, ast.Name) \
                        and v.func.value.id in self.texts or isinstance(v.func, ast.Name) and (
                            v.func.id in _SCALAR_CALLS or v.func.id == "complex") and v.func.id not in self.locals \
                        and v.func.id not in self.kept_params  # (a text's method, `fmt.format(v)`; `float(s)`,
                    # `len(s)`, builtins making a number or text: they change nothing they are given)
                    operands = [] if text else [
                        a.value if isinstance(a, ast.Starred) else a for i, a in enumerate(v.args)
                        if i not in kept or any(isinstance(b, ast.Starred) for b in v.args[:i + 1])]
                    operands += [] if text else [k.value for k in v.keywords]
                    if isinstance(v.func, ast.Attribute) and not text:
                        operands.append(v.func.value)
                    elif isinstance(v.func, ast.Name) and (v.func.id in self.drawn or v.func.id in self.locals
                                                           or v.func.id in self.items):  # (a def's defaults)
                        # (`k = acc.add; k(x)`: a bound method changes its object; `acc = make_acc(); acc(x)`:
                        # a closure a factory made changes its cells, `nonlocal total; total += v`)
                        operands.append(v.func)
                    for a in operands:
                        if isinstance(a, ast.Attribute) and isinstance(a.value, ast.Name):
                            a = a.value  # (`key=acc.add`: a bound method, which may change acc)
                        if isinstance(a, ast.Name) and (a.id in self.locals or a.id in self.items) \
                                and a.id not in self.once_constants:  # (not modules)
                            self.mark_argument(a.id)
                    # a closure made here that changes captured arrays in place (`out[i] = v`) changes them
                    if isinstance(v.func, ast.Name):
                        for n in self.closure_stores.get(v.func.id, ()):
                            if n in self.locals:
                                self.mark_changed(n)
                        for n in self.closure_calls.get(v.func.id, ()):  # (`[k(v) for v in xs]`, k = acc.add:
                            if n in self.locals:                          # what k was read from, acc)
                                self.mark_argument(n)
                        for n in self.closure_writes.get(v.func.id, ()):  # `nonlocal acc; acc = acc + v`
                            self.mark(n)
                if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "print" \
                        and "print" in self.nondiff and any(self.value_active(
                            a.value if isinstance(a, ast.Starred) else a) for a in v.args):
                    # `print(*x, file=buffer)`: the texts of the values written into the file object, which is
                    # read back (`buffer.getvalue()`) as what may carry them (their parse is refused there)
                    for k in v.keywords:
                        if k.arg == "file" and isinstance(k.value, ast.Name) and k.value.id in self.locals:
                            self.mark_argument(k.value.id)
                for t in s.targets:
                    if isinstance(t, ast.Name):
                        if act:
                            if getattr(v, "_od_inplace", False):  # `t op= active`, in place for arrays
                                self.mark_changed(t.id)
                            self.mark(t.id)
                    elif isinstance(t, (ast.Attribute, ast.Subscript)) and isinstance(t.value, ast.Name) and (
                            act or isinstance(t, ast.Subscript) and self.value_active(t.slice)):
                        # storing an active value into an object makes it active; so does keying a dict
                        # by one (`d[x] = 1.0`: `list(d)` reads it back)
                        self.mark_changed(t.value.id)
            elif isinstance(s, ast.FunctionDef):
                if free_names(s) & self.active:
                    self.mark(s.name)
                    for n in differentiable_writes(s):  # state the closure writes back (not a count it keeps)
                        self.mark(n)
            elif isinstance(s, ast.For):
                if self.value_active(s.iter) and isinstance(s.target, ast.Name):
                    self.mark(s.target.id)
                self.visit(s.body)
                self.visit(s.orelse)
            elif isinstance(s, (ast.While, ast.If)):
                self.visit(s.body)
                self.visit(s.orelse)
            elif isinstance(s, ast.Match):
                for case in s.cases:
                    self.visit(case.body)
            elif isinstance(s, ast.Try):
                self.visit(s.body)
                for h in s.handlers:
                    self.visit(h.body)
                self.visit(s.orelse)
                self.visit(s.finalbody)
            elif isinstance(s, ast.With):
                for item in s.items:
                    if item.optional_vars is not None and self.value_active(item.context_expr):
                        self.mark(item.optional_vars.id)
                self.visit(s.body)
                for item in s.items:  # (an active context manager's `__exit__` may store into what it holds:
                    ctx = item.context_expr  # `self.out.append(self.value)`, gen20 W3)
                    if isinstance(ctx, ast.Name) and ctx.id in self.active and ctx.id in self.locals:
                        self.mark_argument(ctx.id)


# attributes that describe a value rather than hold one (`x.dtype`): reverse mode's calls take them for constants
# as they begin (`codegen._entering`), each read checked (`codegen`'s `inert_checks`). Taken for differentiated,
# scipy's `decimate` made its filter's coefficients `np.asarray(sos, dtype=x.dtype)` differentiated, and
# `_validate_sos`' `== 1` refused. (Active they stay to the analysis: a local bound to one is then no module
# state read as a constant, array_api_strict's `target_dtype = self.dtype`.)
INERT_ATTRIBUTES = frozenset({"dtype"})


# the lowering's helpers that store nothing into what they are given (`a, b = f(x)`'s `__od_unpack__(t, 2, -1)`
# reads t's items: marked as an argument, t's call's arguments, held by it, became active, python_speech_features'
# `feat, energy = fbank(signal, samplerate, winlen, ...)` made winlen active and refused its Decimal, sweep M)
_STORES_NOTHING = frozenset({"__od_unpack__"})


# the helpers of the lowering's index loops (`Lowerer.live_loop`): a test of types, of a position, the keys
LOOP_HELPERS = frozenset({"__od_live__", "__od_more__", "__od_more_keys__", "__od_keys__", "__od_size__",
                          "__od_more_back__", "__od_flat_index__"})  # (and a `.flat` store's positions)
_SHARED_CONTAINERS = (list, dict, set, collections.deque, np.ndarray)
_NOT_STATE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
              functools.partial)
# values that cannot carry a derivative however they are rebound: a module's mode string, flag or counter
# (`global _DOMAIN_RANGE_SCALE; _DOMAIN_RANGE_SCALE = scale` in colour: every conversion read it, and every
# value it touched counted as differentiated). A rebinding to a differentiated value by `global` is refused
# where it is transformed, so a global holding one of these holds no derivative during a derivative call.
_INERT = (str, bytes, bool, type(None), int, range)
# methods that change their object in place (lists, dicts, sets, deques, arrays)
_MUTATORS = frozenset({"append", "extend", "insert", "pop", "popitem", "remove", "clear", "update",
                       "setdefault", "add", "discard", "sort", "reverse", "appendleft", "extendleft",
                       "rotate", "fill", "put", "itemset", "resize", "partition", "__setitem__",
                       "__delitem__", "__iadd__", "__ior__"})
_module_state: dict = {}  # module file -> (its mtime, the globals its code may change)
on_clear(_state_readers.clear)
on_clear(_module_state.clear)


# functions changing their first argument's array in place (`np.fill_diagonal(R, v)`, `np.copyto(R, A)`)
_INPLACE_FUNCTIONS = frozenset({"copyto", "fill_diagonal", "put", "place", "putmask", "put_along_axis", "shuffle",
                                "at"})
# methods whose result is a view of (or the same object as) the object's array (`v = R.reshape(4)`)
_VIEWING = frozenset({"reshape", "ravel", "view", "transpose", "swapaxes", "squeeze", "diagonal", "T", "real",
                      "imag", "flat"})


def _changed_in(n, base) -> list[str]:
    """The variables whose objects node n changes in place: stores into items or attributes, mutating
    methods, in-place augmented assignments of a name (with `augmented`), `out=`, and the in-place functions
    of numpy given the object first (`np.copyto(R, A)`, `np.add.at(R, i, v)`)."""
    out = []
    if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
        for t in n.targets if isinstance(n, (ast.Assign, ast.Delete)) else [n.target]:
            if isinstance(t, (ast.Subscript, ast.Attribute)) and base(t):
                out.append(base(t))
            elif isinstance(t, (ast.Subscript, ast.Attribute)):
                out.extend(_viewed_through(t))  # (`R.reshape(-1)[[0, 3]] = v`, `np.asarray(R)[0] = v`: pkH W5)
        if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            out.append("+" + n.target.id)  # (`a += v`: a change in place only of an array or a list)
    elif isinstance(n, ast.Call):
        f = n.func
        if isinstance(f, ast.Attribute) and f.attr in _MUTATORS and base(f.value):
            out.append(base(f.value))
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if name in _INPLACE_FUNCTIONS and n.args and not isinstance(n.args[0], ast.Starred) and base(n.args[0]):
            out.append(base(n.args[0]))
        written = _written_by_position(n, name)
        if written is not None and base(written):
            out.append(base(written))
        for k in n.keywords:
            if k.arg == "out" and base(k.value):
                out.append(base(k.value))
    return out


def _written_by_position(n: ast.Call, name: str | None) -> ast.expr | None:
    """The argument a call writes by its position, read by the callee's name (a guess that errs on the side
    of a change): a ufunc's output after its inputs (`np.sin(x, G)`), the argument a C kernel's rule declares
    it writes (`Rule.writes`: `_ppoly.evaluate(c, x, xp, dx, extrapolate, G)`). A module's array written so
    was a constant to both modes: its gradient 0."""
    if name is None or not n.args or any(isinstance(a, ast.Starred) for a in n.args):
        return None
    ufunc = vars(np).get(name)  # (no module __getattr__: its deprecated names warn)
    if isinstance(ufunc, np.ufunc):
        return n.args[ufunc.nin] if len(n.args) > ufunc.nin else None
    position = registry.written_by_name.get(name)
    return n.args[position] if position is not None and position < len(n.args) else None


def _changed_globals(tree: ast.AST) -> set[str] | None:
    """The module-level names a module's code may change: stored into (`G[k] = v`, `G.f = v`, `del G[k]`),
    changed by a mutating method (`G.append(v)`) or an in-place function of numpy (`np.fill_diagonal(G, v)`),
    written as `out=G`, through a view or item bound to a name first (`v = G.reshape(4); v[0] = p`,
    `a = N[0]; a += p`), handed to a function of the module that changes that parameter in place
    (`fill(G, p)`), or rebound after `global G`."""
    out: set[str] = set()
    base = stored_base
    fields: dict[str, set[str]] = {}  # (a field given a name's object, `self.d = SCALE`: field -> names)
    aliases: dict[str, set[str]] = {}  # (a name bound to a part or a view of another's object: name -> those)
    changed_params: dict[str, set[int]] = {}  # (a function of the module -> the positions of the parameters it
    # changes in place)
    calls = []
    nodes = list(all_nodes(tree))
    for n in nodes:
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = n.targets if isinstance(n, (ast.Assign, ast.Delete)) else [n.target]
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name):
                for t in targets:
                    if isinstance(t, ast.Attribute):
                        fields.setdefault(t.attr, set()).add(n.value.id)
            if isinstance(n, ast.Assign) and (src := _part_of(n.value)):
                for t in targets:
                    if isinstance(t, ast.Name):
                        aliases.setdefault(t.id, set()).add(src)
            for t in targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Attribute):
                    out.add("." + t.value.attr)  # (`self.stats[k] = v`: a field's items, maybe a class's)
        elif isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Name) and f.id in ("setattr", "delattr") and n.args and base(n.args[0]):
                out.add(base(n.args[0]))  # (`setattr(CFG, 'gain', x)`: gen20 W4)
            if isinstance(f, ast.Attribute) and f.attr in _MUTATORS and isinstance(f.value, ast.Attribute):
                out.add("." + f.value.attr)  # (`self.log.append(v)`)
            elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Attribute) and base(f.value):
                out.add(base(f.value))  # `G.obj.method(...)`: a method of an object held by G
            if isinstance(f, ast.Name):
                calls.append(n)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            declared = {g for st in all_nodes(n) if isinstance(st, ast.Global) for g in st.names}
            params = [a.arg for a in n.args.posonlyargs + n.args.args]
            own_changes = set()
            for st in all_nodes(n):
                if isinstance(st, ast.Name) and isinstance(st.ctx, ast.Store) and st.id in declared:
                    out.add(st.id)
                own_changes.update(c.lstrip("+") for c in _changed_in(st, base))
            if positions := {i for i, p in enumerate(params) if p in own_changes}:
                changed_params[n.name] = positions
        for c in _changed_in(n, base):  # (`a += v` of a name: a change in place of what an alias reads)
            if not c.startswith("+"):
                out.add(c)
            elif c[1:] in aliases:
                out.add(c[1:])
    for n in calls:  # (a module array handed to a function of the module changing that parameter in place)
        for i in changed_params.get(n.func.id, ()):
            if i < len(n.args) and not isinstance(n.args[i], ast.Starred) and base(n.args[i]):
                out.add(base(n.args[i]))
    # (the module's own namespace reached as an object in a function, `globals()['G']['a'][0] = v`,
    # `sys.modules[__name__].G[0] = v`, `mod = sys.modules[__name__]; mod.G.append(v)`: the global it names is
    # changed, pkH W6f; a key computed at run time, any global may be)
    # (in functions only: the module's own top-level code ran when it was imported, `globals()[name] = ...`
    # in numpy's __init__)
    in_functions = [m for f in nodes if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) for m in all_nodes(f)]
    selves = {t.id for n in in_functions if isinstance(n, ast.Assign) and _own_module_by_name(n.value)
              for t in n.targets if isinstance(t, ast.Name)}
    for n in in_functions:
        chains = []
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.Delete)):
            chains = [t for t in (n.targets if isinstance(n, (ast.Assign, ast.Delete)) else [n.target])
                      if isinstance(t, (ast.Subscript, ast.Attribute))]
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _MUTATORS:
            if _own_module_by_name(n.func.value):
                return None  # (`globals().update(...)`: which names, known only when it runs)
            chains = [n.func.value]
        for x in chains:
            while isinstance(x, (ast.Subscript, ast.Attribute)):
                inner = x.value
                if _own_module_by_name(inner) or isinstance(inner, ast.Name) and inner.id in selves:
                    if isinstance(x, ast.Attribute):
                        out.add(x.attr)
                    elif isinstance(x.slice, ast.Constant) and type(x.slice.value) is str:
                        out.add(x.slice.value)
                    else:
                        return None
                    break
                x = inner
    # (names the module imports are modules and functions, no state of its own: `t = np.real(t)` is no view
    # of np, changed by `t[i] = v`)
    imported = {(a.asname or a.name).split(".")[0] for n in nodes if isinstance(n, (ast.Import, ast.ImportFrom))
                for a in n.names}
    aliases = {k: v - imported for k, v in aliases.items()}
    for _ in range(4):  # (what an alias changed is a change of the objects it was read from: `a = N[0]; a[:] = 0`)
        grown = {src for name in out & set(aliases) for src in aliases[name]} - out
        if not grown:
            break
        out |= grown
    for attr, names in fields.items():  # (a module dict an object holds, stored into through the field:
        if "." + attr in out:           # `self.d = SCALE` then `self.d['v'] = v`; SCALE['v'] read gave 0)
            out |= names
    return out


def _viewed_through(t) -> list[str]:
    """The variables a store into `t`, a part of a call's result (`R.reshape(-1)[0]`, `np.asarray(R)[0]`,
    `np.einsum('ii->i', R)[:]`), may change: the call's object and its arguments (a view of any of them)."""
    while isinstance(t, (ast.Subscript, ast.Attribute)):
        t = t.value
    out = []
    todo = [t]
    while todo:
        e = todo.pop()
        if isinstance(e, ast.Name):
            out.append(e.id)
        elif isinstance(e, (ast.Subscript, ast.Attribute, ast.Starred)):
            todo.append(e.value)
        elif isinstance(e, ast.Call):
            if isinstance(e.func, ast.Attribute) and e.func.attr in _VIEWING:
                todo.append(e.func.value)  # (`R.reshape(-1)`; not `np` of `np.asarray(R)`, a module)
            todo.extend(e.args)
    return out


def _own_module_by_name(n) -> bool:
    """n reaches the module's own namespace as an object: `globals()`, `sys.modules[__name__]`,
    `importlib.import_module(__name__)` (what is stored through it, `globals()['G']['a'][0] = v`, is no store
    into G by name)."""
    if isinstance(n, ast.Call) and not n.args and isinstance(n.func, ast.Name) and n.func.id == "globals":
        return True
    if isinstance(n, ast.Call) and n.args and isinstance(n.args[0], ast.Name) and n.args[0].id == "__name__" and (
            isinstance(n.func, ast.Attribute) and n.func.attr == "import_module"
            or isinstance(n.func, ast.Name) and n.func.id == "import_module"):
        return True
    return (isinstance(n, ast.Subscript) and isinstance(n.value, ast.Attribute) and n.value.attr == "modules"
            and isinstance(n.slice, ast.Name) and n.slice.id == "__name__")


def _part_of(value) -> str | None:
    """The variable whose object value is a part or a view of (`N[0]`, `M['a'][1:3]`, `R.T`, `R.reshape(4)`,
    `O.buf`), or None (a call's result, arithmetic: new objects)."""
    while True:
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _VIEWING:
            value = value.func.value
        elif isinstance(value, (ast.Subscript, ast.Attribute)):
            value = value.value
        else:
            break
    return value.id if isinstance(value, ast.Name) else None


def _module_changes(globals_: dict) -> set[str] | None:
    """The globals of a module that its own code may change (None when its source cannot be read: then
    every mutable global counts as changed)."""
    path = globals_.get("__file__")
    if not isinstance(path, str):
        return None
    try:
        mtime = os.stat(path).st_mtime
    except OSError:
        return None
    hit = _module_state.get(path)
    if hit is not None and hit[0] == mtime:
        return hit[1]
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        with AST_LOCK:
            tree = ast.parse(text)
        changed = _changed_globals(tree)
    except (OSError, SyntaxError, ValueError):
        changed = None
    _module_state[path] = (mtime, changed)
    return changed


def _module_state_read(module, name: str, nodes) -> bool:
    """Some `name.attr` read in nodes (name bound to module) is state of that module its own code may
    change (a dict or object a function of it stores into): as `mutable_globals` for one's own module."""
    attrs = {n.attr for n in nodes if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
             and n.value.id == name}
    space = getattr(module, "__dict__", None)
    if not attrs or not isinstance(space, dict) or not isinstance(space.get("__file__"), str) \
            or not space["__file__"].endswith(".py"):
        return False
    candidates = [a for a in attrs if a in space and not (isinstance(v := space[a], _NOT_STATE) or type(v) in _INERT
                                                           or callable(v))]
    if not candidates:
        return False
    changed = _module_changes(space)
    return any(changed is None or a in changed for a in candidates)


def _class_state_read(cls: type, name: str, nodes, changed) -> bool:
    """Some `name.attr` read in nodes is a container the class holds for all its objects (`stats = {}` in
    its body) that the module's code stores into, as `Cls.stats[k] = v` or `self.stats[k] = v`: a global
    class read so holds state (`Meter.stats['sum']` after its methods added to it: 0.0 for 2.5)."""
    for n in nodes:
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == name:
            held = next((k.__dict__[n.attr] for k in cls.__mro__ if n.attr in k.__dict__), None)
            if isinstance(held, _SHARED_CONTAINERS) and (changed is None or name in changed or "." + n.attr in changed):
                return True
    return False


def mutable_globals(fdef, locals_: set[str], globals_: dict, nodes=None) -> set[str]:
    """The module globals fdef reads that hold state its module's code (this function or another) may
    change with differentiated values: containers, arrays and objects stored into, changed by their
    methods, or rebound by `global`. Values read from them may carry derivatives: they are active."""
    nodes = list(all_nodes(fdef)) if nodes is None else nodes
    names = {n.id for n in nodes
             if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in locals_ and n.id in globals_}
    if not names:
        return set()
    changed = _module_changes(globals_)
    out = set()
    for name in names:
        if type(globals_[name]) is types.ModuleType and _module_state_read(globals_[name], name, nodes):
            out.add(name)  # (`lib.STATE["factor"]`, which lib's own functions set: read through the module)
        v = globals_[name]
        if isinstance(v, type) and v.__flags__ & _HEAPTYPE and _class_state_read(v, name, nodes, changed):
            out.add(name)
            continue
        if type(v) is types.FunctionType and changed is not None and name in changed and v.__dict__:
            out.add(name)  # (a function whose attributes its module's code changes: `m.cache[n] = v`, a memo)
            continue
        if changed is not None and name not in changed or isinstance(v, _NOT_STATE) or type(v) in _INERT \
                or callable(v):
            continue
        if isinstance(v, _SHARED_CONTAINERS) or changed is not None or hasattr(v, "__dict__"):
            out.add(name)
    return out


def _drawn_from(value: ast.expr) -> str | None:
    """The variable whose object a value may be read out of by a call: the object of a method call
    (`d.get(k)`, `d.setdefault(k, [])`, `d.values()`, `lst.pop()`), the first argument of `next(it)`,
    `getattr(o, name)`, `vars(o)`...; None for anything else (a function's result is its own:
    `np.array(lst)` copies)."""
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
        return value.value.id  # (a bound method, `k = acc.add`, whose calls change acc)
    if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name) and value.value.id.startswith("_od_"):
        return value.value.id  # (an item of the lowering's unpacking, `_, b = pair`: gen20 W6)
    if not isinstance(value, ast.Call):
        return None
    f = value.func
    if isinstance(f, ast.Name) and f.id == "__od_unpack__" and value.args and isinstance(value.args[0], ast.Name):
        return value.args[0].id
    name = (f.attr if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
            and f.value.id in ("functools", "weakref") else f.id if isinstance(f, ast.Name) else None)
    if name == "reduce" and len(value.args) >= 2 and isinstance(value.args[1], ast.Name):
        return value.args[1].id  # (`functools.reduce(lambda p, q: q, xs)`: an item of xs, gen20 W6)
    if name in ("ref", "proxy") and value.args and isinstance(value.args[0], ast.Name):
        return value.args[0].id  # (`weakref.ref(a)`: what calling it gives back is a)
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
        return f.value.id
    if isinstance(f, ast.Name) and f.id in _PART_READERS and value.args and isinstance(value.args[0], ast.Name):
        return value.args[0].id
    return None


# builtins whose result is (or iterates) a part of their first argument's object
_PART_READERS = frozenset({"next", "iter", "reversed", "enumerate", "getattr", "vars",
                           # (an item of the first argument: `m = max([h, []], key=len)` then `m.append(x)`)
                           "max", "min", "sorted", "list", "tuple"})


def active_names(fdef: ast.FunctionDef, active_inputs: set[str], globals_: dict,
                 freevars: tuple = (), numbers: frozenset = frozenset(), steering: set | None = None,
                 constant_stores: set | None = None, readers: set | None = None,
                 referenced: set | None = None) -> set[str]:
    """The active variables of a lowered function, given its active parameters and cells (`freevars`: the
    captured variables, which become active when the function stores active values into them; `numbers`:
    variables known to hold numbers, see `numbers_if`). Variables that only steer control flow
    (`steering_only`) are left out; given a set `steering`, those among them that depend on the inputs are
    added to it: their comparisons still single out special points (`d = t - 0.3; if d == 0:` took the
    special case's derivative, 0, silently, while `if t == 0.3:` was refused). Given a set `constant_stores`,
    the attribute stores whose value is a constant where they run, though its variable is active, are added
    to it (`_constant_stores`)."""
    nondiff = frozenset(n for n in NONDIFF_BUILTINS if n not in globals_ and hasattr(builtins, n))
    nodes = list(all_nodes(fdef))  # (one walk for the questions below: each was a walk of its own)
    own = local_names(fdef, nodes)
    locals_ = own | _attribute_holders(fdef, nodes, globals_)
    # (and the functions defined here that capture its variables: held in a container, `table = {'get': get}`,
    # a call through it, `table['get']()[0] = v`, changes the captured c)
    locals_ |= {n.name for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n is not fdef
                and _captured_here(n, fdef) & own}
    a = fdef.args
    active_inputs = set(active_inputs) | mutable_globals(fdef, own, globals_, nodes)
    stores = list(name_stores(fdef, nodes))
    loops = [n for n in nodes if isinstance(n, ast.For) and isinstance(n.target, ast.Name)]
    defs = [n for n in nodes if isinstance(n, ast.FunctionDef) and n is not fdef]
    loop_vars = {n.target.id for n in loops}
    sources: dict[str, set[str]] = {}
    views: dict[str, set[str]] = {}
    # (and the captured variables: `C['a'][0] = v` of a closure's dict C stores into what C holds, read back as
    # `C['a'][0]`: a constant, 0.49 for 1.47, pkH W6; a store into C itself made it active already)
    kept = (locals_ | set(freevars)) - loop_vars  # (once: per store, it made the analysis quadratic in the length)
    fresh = fresh_calls(fdef, globals_, freevars)  # (`y = np.copy(x)`: a store into y is none into x)
    containers = container_names(fdef, nodes)
    made_of: dict[str, set[str]] = {}  # (a list an operator made -> the lists it was made of)
    for name, value in stores:
        if id(value) not in fresh:
            sources.setdefault(name, set()).update(viewed(value, strict=True) & kept)
        views.setdefault(name, set()).update(view_of(value) - {name})
        if ops := _container_operands(value, containers, kept):
            # (a list an operator made of lists holds their items: `b = (O + [])[0]; b[0] = v` changes O's
            # item, gen20 W7: 0 for 1.4; and is drawn from them, below)
            sources[name].update(ops)
            made_of.setdefault(name, set()).update(ops)
    for n in nodes:  # (`o.c = c`: an in-place change through `o.c` is one of c: `o.c -= x * x` made c active)
        if (isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(t := n.targets[0], ast.Attribute)
                and isinstance(t.value, ast.Name) and isinstance(n.value, ast.Name) and n.value.id in kept):
            sources.setdefault(t.value.id, set()).add(n.value.id)
    # the objects a variable's value may have been read out of (`t = d.get(k)`, `t = next(it)`, `for t in
    # ts`): a call changing t in place changes what they hold. (A display's items are not: a call given
    # `(a, b)` rarely changes a or b, and following them made every result appended to a list active.)
    drawn: dict[str, set[str]] = {name: set(ops) for name, ops in made_of.items()}  # (`(O + [])[0].append(v)`)
    bindings: dict[str, list] = {}
    for name, value in stores:
        bindings.setdefault(name, []).append(value)
    for name, value in stores:
        if (src := _drawn_from(value)) is not None and src in locals_:  # (a loop's target too: `for p in ...`)
            drawn.setdefault(name, set()).add(src)
        elif (isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name) and value.value.id in loop_vars):
            drawn.setdefault(name, set()).add(value.value.id)  # (`row = pair[1]` of `for pair in enumerate(rows)`)
        # (a call of a bound method held by a variable, `g = H(c).get; b = g()`: what it returns may be what its
        # object holds, a change of b one of c: gen20 W10, 0 for 1.4)
        if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in kept
                and any(isinstance(v, (ast.Attribute, ast.Call, ast.Subscript))
                        for v in bindings.get(value.func.id, ()))):
            # (and of a callable a call made, `r = weakref.ref(a); b = r()`, or one read out of a container,
            # `d = {'g': lambda: c}; b = d['g']()`)
            drawn.setdefault(name, set()).add(value.func.id)
    for n in loops:
        if isinstance(n.iter, ast.Name):
            drawn.setdefault(n.target.id, set()).add(n.iter.id)
    for n in nodes:  # (`with cm as b`: `__enter__` may return what cm holds, `nullcontext(a)`'s a: gen20 W5)
        if isinstance(n, ast.With):
            for item in n.items:
                if isinstance(item.optional_vars, ast.Name) and isinstance(item.context_expr, ast.Name) \
                        and item.context_expr.id in kept:
                    drawn.setdefault(item.optional_vars.id, set()).add(item.context_expr.id)
    for n in nodes:  # (the lowering's index loops: `for _od_i4, v in __od_enumerate_at__(it) if it is vs else ...`)
        if isinstance(n, ast.For) and isinstance(n.target, ast.Tuple):
            for t in _loop_targets(n):
                if src := (_reads(n.iter) & kept) - {t}:
                    drawn.setdefault(t, set()).update(src)
    # a call of a function or lambda made here may return what it captures (`get = lambda: a; m = get()`,
    # `m = (lambda: a)()`: a change of m in place is one of a)
    made_here = _callables_made_here(fdef, nodes)
    for name, value in stores:
        if (callee := _callee_made_here(value, made_here)) is not None and (held := _captured_here(callee, fdef) & kept):
            drawn.setdefault(name, set()).update(held)
    # the objects a variable's value may hold: a display's items (`reg = {'h': hist}`, `map(fn, [x], [acc])`),
    # the arguments of a class's or a method's call (`o = Holder(c)`, `ns = SimpleNamespace(items=hist)`,
    # `dict(h=hist)`) and a nested function's defaults (`def add(v, store=hist)`): a change through the holder
    # (`reg['h'].append(y)`, `o.sub(y)` doing `self.c -= y`) changes the variable's object, which its later
    # reads see (`sum(hist)` was taken for a constant: 0 for 3). Not numbers (`row = (a, b)`: no change in
    # place reaches them), not the lowering's temporaries drawn for an item (`next(ids)`), not a module
    # function's arguments (`_may_hold_arguments`)
    items: dict[str, set[str]] = {}
    classes = {n.name for n in nodes if isinstance(n, ast.ClassDef)} & kept
    bound: dict[str, list] = {}
    for name, value in stores:
        bound.setdefault(name, []).append(value)
    aliases = {name: values[0] for name, values in bound.items() if len(values) == 1}  # (bound once)
    temps: dict[str, set[str]] = {}  # (a display's items that are the lowering's temporaries)
    for name, value in stores:
        if isinstance(value, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
            held = [e.value if isinstance(e, ast.Starred) else e
                    for e in (value.values if isinstance(value, ast.Dict) else value.elts)]
            temps.setdefault(name, set()).update(e.id for e in held if isinstance(e, ast.Name) and e.id.startswith("_od_"))
            held = [e for e in held if not (isinstance(e, ast.Name) and e.id.startswith("_od_"))]
        elif isinstance(value, ast.Call) and _may_hold_arguments(value.func, globals_, locals_, aliases):
            held = [a.value if isinstance(a, ast.Starred) else a for a in value.args]
            held += [k.value for k in value.keywords]
        else:
            continue
        names = {e.id for e in held if isinstance(e, ast.Name) and e.id in kept and e.id not in numbers}
        if names:
            items.setdefault(name, set()).update(names)
    # a nested function, class or lambda holds what it captures: its calls may return it (`d = {'g': lambda:
    # c}; b = d['g'](); b[0] = v`, `g = H().get` of a class whose method returns c: a change of b is one of c,
    # which was taken for a constant, 0 for 2.6)
    scopes = [(n.name, n) for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
              and n is not fdef] + [(name, v) for name, v in stores if isinstance(v, ast.Lambda)]
    for maker, scope in scopes:
        held = (_scope_reads([scope]) & (own_bindings(fdef) | set(param_names(fdef.args)))
                if isinstance(scope, ast.ClassDef) else _captured_here(scope, fdef))
        if names := {v for v in held if v in kept and v not in numbers and v != maker}:
            items.setdefault(maker, set()).update(names)
    for name, value in stores:  # (an object of a class defined here shares the class's attributes: `c = C()`
        # then `c.items.append(x)` changes the list `C.items` reads back: 0 for 2, gen18 W3b)
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in classes:
            items.setdefault(name, set()).add(value.func.id)
    for n in nodes:  # and a variable stored into it (`o[0] = acc`, `o['c'] = acc`, `o.l = acc`): a change through
        # the holder (`o[0][0] = x`, `o.l.append(x)`) changes acc, read after by its own name (gen18 W7: 0 for 2)
        if (isinstance(n, ast.Assign) and isinstance(n.value, ast.Name) and n.value.id in kept
                and n.value.id not in numbers and (not n.value.id.startswith("_od_") or n.value.id in items)):
            # (a temporary only where it holds objects itself: `o.d = {'c': acc}`)
            for t in n.targets:
                if isinstance(t, (ast.Attribute, ast.Subscript)) and isinstance(t.value, ast.Name):
                    items.setdefault(t.value.id, set()).add(n.value.id)
    for _ in range(3):  # a list or dict an operator made of one that holds objects (`l = [a] * 2`, `L + L`,
        # `D | {}`) holds them too: a change through it (`l[1] *= 0.5`) changes a (gen18 W1, W4: 2 for 1)
        grew = False
        for name, value in stores:
            if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Mult, ast.BitOr)):
                for e in (value.left, value.right):
                    if isinstance(e, ast.Name) and e.id in items and e.id not in items.get(name, ()):
                        items.setdefault(name, set()).add(e.id)
                        grew = True
        if not grew:
            break
    # a nested function's or a lambda's defaults (`def add(v, store=hist)`, `push = lambda v, out=acc: ...`)
    makers = [(n.name, n.args) for n in defs] + [(name, v.args) for name, v in stores if isinstance(v, ast.Lambda)]
    for maker, args in makers:
        defaults = [e for e in (*args.defaults, *args.kw_defaults) if isinstance(e, ast.Name)]
        if names := {e.id for e in defaults if e.id in kept and e.id not in numbers}:
            items.setdefault(maker, set()).update(names)
    for name, names in temps.items():  # (a temporary that holds objects itself: `vs = [Vec(a)]`'s `Vec(a)`)
        if names := {t for t in names if t in items}:
            items.setdefault(name, set()).update(names)
        # (and one read out of a variable's object, `pair = (k, rows[k])` of the lowering's enumerate: the
        # object held is rows' item, which a change through the pair, `row.append(v)`, changes: 0 for 2.8, gen20 W8)
        read = {n for t in temps[name] if isinstance(aliases.get(t), (ast.Subscript, ast.Attribute, ast.Call))
                for n in view_of(aliases[t])}  # (and a view a call made: `d = {'w': res.reshape(6)}`)
        if read := {o for o in read if o in kept and o not in numbers}:
            items.setdefault(name, set()).update(read)
        # (and the object of an attribute a temporary read, a bound method: `ops = {"push": L.append}` holds
        # L, which `ops["push"](v)` changes: it was taken for a constant, 0 for 3)
        objs = {aliases[t].value.id for t in temps[name] if isinstance(aliases.get(t), ast.Attribute)
                and isinstance(aliases[t].value, ast.Name)}
        if objs := {o for o in objs if o in kept and o not in numbers}:
            items.setdefault(name, set()).update(objs)
    act = _Activity(active_inputs, nondiff, locals_ | set(active_inputs) | set(freevars), sources, views)
    act.drawn = drawn
    act.items = items
    act.once_constants = _once_constants(nodes, set(active_inputs))
    act.immutable = _immutable_locals(fdef, globals_, set(param_names(a)) | set(freevars), nodes, stores,
                                      numbers)  # (numbers, as the caller checks: no call changes one in place)
    act.texts = _texts(stores, nodes, set(param_names(a)) | set(freevars), globals_)
    act.closure_stores = through_calls(defs, {n.name: captured_stores(n) for n in defs})
    act.closure_calls = {n.name: _captured_changes(n) - act.closure_stores.get(n.name, set()) for n in defs}
    act.closure_writes = through_calls(defs, {n.name: nonlocal_writes(n) for n in defs})
    # a closure passed on or stored that sets a captured variable from its inputs: that variable may
    # be differentiated (the code generator refuses it: its cotangent cannot be routed back)
    _, escaping = closure_hazards(fdef, [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs], nodes)
    captures = locals_ | set(freevars)  # (what a nested function can capture: not `math` or `len`, globals)
    for n in _own_defs(fdef):
        if n.name in escaping and (written := (differentiable_writes(n) | _captured_changes(n)) & captures):
            # (also the captured objects it changes in place: `acc.total = q * 2` or `acc.add(q)` in a
            # function given to map, filter, reduce, a key: read after, `acc` held no derivative, a zero)
            act.active |= written | {n.name}
    for n in _own_defs(fdef, ast.Lambda):  # (a lambda is given away where it is made: `reduce(lambda a, q: acc.add(q), ...)`)
        act.active |= _captured_changes(n) & captures
    for n in nodes:  # global Python functions read here (called, or given away) that read changeable module state
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in locals_ and n.id in globals_:
            if n.id not in act.state_readers and _callable_reads_state(globals_[n.id]):
                act.state_readers.add(n.id)
            if n.id not in act.kept_params and type(globals_[n.id]) is types.FunctionType:
                act.kept_params[n.id] = _kept_params(globals_[n.id])
        elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id not in locals_ \
                and isinstance(module := globals_.get(n.value.id), types.ModuleType) \
                and type(fn := vars(module).get(n.attr)) is types.FunctionType:
            act.kept_params.setdefault(f"{n.value.id}.{n.attr}", _kept_params(fn))  # (`knotvector.check(...)`)
        elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id not in locals_ \
                and isinstance(module := globals_.get(n.value.id), types.ModuleType) \
                and type(fn := vars(module).get(n.attr)) is np.ufunc:
            # a ufunc changes none of its inputs (only an `out=`, by keyword or past them): `np.greater(o, x)`
            # left x constant, whose tie with o is then checked (taken for a changed argument, both were
            # active and the tie went unchecked: one side's derivative, sweep F)
            act.kept_params.setdefault(f"{n.value.id}.{n.attr}", frozenset(range(fn.nin)))
    mutations = _Mutations(fdef, nodes, globals_, numbers, act.locals)
    captured = set(freevars)
    while act.changed:
        act.changed = False
        act.visit(fdef.body)
        if captured and act.active & captured and not captured <= act.state_readers:
            # a captured object holds a derivative (stored into it here: `box["a"] = a`): a captured function
            # may read it, called with constants or given away (`h(1.0)`, `map(h, xs)` of an `h` reading
            # `box`: taken for constants, 1.0 for 4.0 silently)
            act.state_readers |= captured
            act.changed = True
        # an array an active operation read (a constant factor `y = x * c`, an index `z = x[I]`) and changed
        # in place afterwards (`c[:] = 0`, `I[I] = err > tol`: pyromat's Newton loop; `reset(c)`, `a.zero()`)
        # is kept for the adjoint by reference: it would see the new values (0 for 2.0 and 3.0, a derivative
        # sent to the wrong element). Active, its changes are undone in the reverse pass as an active array's.
        marked, handed = mutations.read_then_changed(act, nodes)
        if referenced is not None:  # (active for their changes to be recorded: `codegen._entering` keeps them so)
            referenced.update(marked, handed)
        for n in marked:
            act.mark_changed(n)
        for n in handed - act.once_constants:  # (read once, by the call it is handed to: no change after)
            act.mark_argument(n)
    steer = steering_only(fdef, numbers)
    if steering is not None:
        steering.update(act.active & steer)
    if constant_stores is not None:
        constant_stores.update(_constant_stores(fdef, act))
        constant_stores.update(_constant_calls(fdef, act, globals_, freevars))
    if readers is not None:  # (the functions read here that may return what was stored into module state)
        readers.update(act.state_readers)
    return act.active - steer


def _once_constants(nodes, inputs: set[str]) -> frozenset[str]:
    """The lowering's temporaries (`_od_t*`) bound once, to a display of constants (numbers, text, None, and
    such temporaries: `[[1.0, 2.0], [3.0]]`), and read once."""
    bound: dict[str, ast.expr | None] = {}
    reads: dict[str, int] = {}
    for n in nodes:
        if isinstance(n, ast.Name):
            if isinstance(n.ctx, ast.Load):
                reads[n.id] = reads.get(n.id, 0) + 1
            elif n.id.startswith("_od_t"):
                bound[n.id] = None if n.id in bound else n  # (a second binding: not one)
    values: dict[str, ast.expr] = {}
    for n in nodes:
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(t := n.targets[0], ast.Name) \
                and bound.get(t.id) is t and isinstance(n.value, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
            values[t.id] = n.value
    found: set[str] = set()

    def constant(e) -> bool:
        if isinstance(e, ast.Constant):
            return True
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
            return constant(e.operand)
        if isinstance(e, ast.Name):
            return e.id in found
        if isinstance(e, (ast.List, ast.Tuple, ast.Set)):
            return all(constant(v) for v in e.elts)
        if isinstance(e, ast.Dict):
            return all(k is not None and constant(k) for k in e.keys) and all(constant(v) for v in e.values)
        return False
    grew = True
    while grew:
        grew = False
        for name, value in values.items():
            if name not in found and name not in inputs and reads.get(name, 0) == 1 and constant(value):
                found.add(name)
                grew = True
    return frozenset(found)


def _constant_calls(fdef: ast.FunctionDef, act: _Activity, globals_: dict, freevars: tuple) -> set[int]:
    """The ids of the assignments `v = f(...)` of an active v by a call of a function marked opaque (no
    transformation recurses into it: `overdub.opaque`, JAX's modules) that is no active expression (its
    arguments carry no derivative and it reads no changed module state: `value_active`). The analysis is one
    set for the whole function: v is active for what happens to its object later (handed to a call with
    active inputs, which may store into it: `np.dot(x, make(1.0, 5.0))`, `jnp.average(x,
    weights=jnp.arange(1.0, 5.0))`), and the call was recorded and refused, the function having no source to
    differentiate. At the call itself v receives a value no derivative reaches: run as it is, v's cotangent
    ends there, as for `v = 1.0`. (Only such functions: a recorded call of other callees may differ from the
    plain one, a container's constructor by its stand-in, a factory's closure by its recorded cells.)"""
    found: set[int] = set()
    callees = {id(n): fn for n, fn in resolved_calls(fdef, globals_, freevars)}
    for n in ast.walk(fdef):
        if not (isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(t := n.targets[0], ast.Name)
                and t.id in act.active and isinstance(v := n.value, ast.Call)):
            continue
        fn = callees.get(id(v))
        if type(fn) is not types.FunctionType or overdub.is_recursable(fn):
            continue
        if not act.value_active(v):
            found.add(id(n))
    return found


def _constant_stores(fdef: ast.FunctionDef, act: _Activity) -> set[int]:
    """The ids of the stores `obj.attr = v` that directly follow `v = <value>` of a value that is no active
    expression. The analysis is one set for the whole function: v is active because of what happens to its
    object later (stored into an object that also holds a derivative, whose code may change what it holds:
    geomdl's `c.ctrlpts = pts; c.knotvector = kv` made kv active, and the knot vector setter, run as code
    with kv differentiated, normalised it through text, refused). At the store itself v holds what its value
    made, a constant: the store hands the object's own code (a property setter, `__setattr__`, a descriptor)
    a constant (`helpers.setattr_`'s `active`). Only the very next statement: anything between could reach
    the object."""
    found: set[int] = set()
    todo = [fdef.body]
    while todo:
        stmts = todo.pop()
        for prev, s in zip([None, *stmts], stmts):
            for field in ("body", "orelse", "finalbody"):
                if isinstance(sub := getattr(s, field, None), list) and not isinstance(s, (ast.FunctionDef,
                                                                                           ast.AsyncFunctionDef,
                                                                                           ast.ClassDef)):
                    todo.append(sub)
            for h in getattr(s, "handlers", ()):
                todo.append(h.body)
            for case in getattr(s, "cases", ()):
                todo.append(case.body)
            if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(t := s.targets[0], ast.Attribute)
                    and isinstance(t.value, ast.Name) and isinstance(v := s.value, ast.Name) and v.id in act.active
                    and v.id != t.value.id):
                continue
            if (isinstance(prev, ast.Assign) and len(prev.targets) == 1 and isinstance(prev.targets[0], ast.Name)
                    and prev.targets[0].id == v.id and v.id not in _reads(prev.value)
                    and not act.value_active(prev.value)):
                found.add(id(s))
    return found


def _container_operands(value, containers: set[str], kept: set[str]) -> set[str]:
    """The lists, tuples or dicts of `O + L`, `O * 2`, `D | E` (containers, or numbers beside one), which the
    container it makes holds the items of; empty for anything else. Not `a * L` of a variable that may be an
    array: numpy's arithmetic makes a new array (the list `[[1.0], [2.0]]` taken as held by `a * [[1.0], [2.0]]`
    got a tangent of the wrong shape)."""
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Mult, ast.BitOr))):
        return set()
    operands = (value.left, value.right)
    if not all(isinstance(e, ast.Name) and e.id in containers or isinstance(e, ast.Constant) for e in operands):
        return set()
    return {e.id for e in operands if isinstance(e, ast.Name) and e.id in kept}


def _attribute_holders(fdef, nodes: list, globals_: dict) -> set[str]:
    """The functions defined in fdef and the globals (not modules) whose attributes fdef sets: objects that
    hold state without being variables of fdef (`g.store = []` of a nested `def g`, `K.l = []` of a module's
    class), so that a change through what they hold (`g.store.append(x)`, then `g.store[0]` read) makes them
    active like any other holder (both were taken for constants: 0 for 2, gen18 W9 and W3b)."""
    defs = {n.name for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n is not fdef}
    out = set()
    for n in nodes:
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                while isinstance(t, ast.Subscript) and isinstance(t.value, (ast.Subscript, ast.Attribute)):
                    t = t.value  # (`m.cache[n] = v`: m's attribute's item)
                if (isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in globals_
                        and isinstance(globals_[t.value.id], (dict, list))):
                    out.add(t.value.id)  # (a module's dict or list f stores into, `REG['k'] = c`: gen20 W11)
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name):
                    name = t.value.id
                    if name in defs or name in globals_ and not isinstance(globals_[name], types.ModuleType):
                        out.add(name)
        elif isinstance(n, ast.Call):
            # a module's object (not a class, function or module) whose method f calls or that f hands to a
            # call (`SIM.reset(x)`, `setattr(CFG, 'gain', x)`): the call may store into it (gen20 W1, W4)
            objs = [n.func.value] if isinstance(n.func, ast.Attribute) else []
            if not _reads_its_argument(n, globals_):
                objs += [a for a in n.args if isinstance(a, ast.Name)]
            for o in objs:
                if isinstance(o, ast.Name) and o.id in globals_ and _module_object(globals_[o.id]):
                    out.add(o.id)
    return out


# builtins that, given one object and nothing else, only read it by its own protocols (`__iter__`, `__len__`,
# `keys`): they store nothing into it — there is nothing else to store (colour's `tuple(CHROMATIC_ADAPTATION_
# TRANSFORMS)`, its table's keys for a check, made the table a holder: every lookup in it was re-run in the
# reverse pass to route a constant matrix's cotangent into it, 2.5x the gradient's time)
_READING_BUILTINS = frozenset({"tuple", "list", "len", "iter", "sorted", "set", "frozenset", "str", "repr",
                               "isinstance", "hasattr", "type", "id", "enumerate", "reversed", "bool"})


def _reads_its_argument(call: ast.Call, globals_: dict) -> bool:
    """call is `tuple(obj)`-like: a builtin of `_READING_BUILTINS` (not shadowed) given one object only."""
    f = call.func
    return (isinstance(f, ast.Name) and f.id in _READING_BUILTINS and f.id not in globals_
            and len(call.args) == 1 and not call.keywords and not isinstance(call.args[0], ast.Starred))


def _module_object(v) -> bool:
    """An object a module holds that may hold state: an instance of a class with fields, not a module, class,
    function, number or text."""
    return (not isinstance(v, (*_NOT_STATE, *_INERT, float, complex)) and not callable(v)
            and hasattr(v, "__dict__") and not isinstance(v, np.ndarray))


def _may_hold_arguments(func: ast.expr, globals_: dict, locals_: set[str], aliases: dict | None = None) -> bool:
    """Whether a call's result may hold its arguments' objects: a class's (`SimpleNamespace(items=h)`,
    `Holder(c)`, `dict(h=hist)`), a method's, a Python function's (a factory, `make_holder(h)`), a callee
    defined here; not a C function's (`next(ids)`), nor numpy's (`np.linalg.solve(A, b)`, found through its
    module's attributes: taken for one, its arguments' arguments became active, findiff's `{0: 1}` too, whose
    keys were then refused). A result that is a view of an argument is `sources`' to follow."""
    path = []
    for _ in range(8):
        while isinstance(func, ast.Attribute):
            path.append(func.attr)
            func = func.value
        if not isinstance(func, ast.Name):
            return True
        if func.id not in locals_:
            break
        # (the lowering's `_od_t1 = np.linalg` before `_od_t1.solve(A, b)`: a module's attribute, read once)
        value = aliases.get(func.id) if aliases else None
        if not isinstance(value, (ast.Attribute, ast.Name)):
            return True  # (a function or class of its own, a local object's method)
        func = value
    else:
        return True
    fn = globals_[func.id] if func.id in globals_ else getattr(builtins, func.id, None)
    for name in reversed(path):
        if not isinstance(fn, types.ModuleType):
            return True  # (a method of a global object: `REGISTRY.make(hist)`)
        fn = vars(fn).get(name)
    if fn is None:
        return True
    if type(fn) is types.FunctionType:  # (a factory, `make_holder(h)`: yes; numpy's: new arrays, or views)
        return not (getattr(fn, "__module__", None) or "").startswith("numpy")
    return isinstance(fn, type) and fn not in _NUMBER_TYPES


_NUMBER_TYPES = frozenset({int, float, complex, bool, str, bytes, range, slice})
_WRITTEN_FIRST = frozenset({"copyto", "place", "putmask", "fill_diagonal", "at"})  # (numpy's: into argument 0)
_HEAPTYPE = overdub.ops.HEAPTYPE  # (a class made by a class statement)
_NUMBER_VALUES = (ast.Constant, ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp)  # (what binds no array)


class _Mutations:
    """What fdef may change in place, found once before the activity's fixed point: the variables it changes
    (a store into an item or field, a changing method, `np.copyto(v, ...)`, `out=v`, `c op= v` on a variable
    bound to what may be an array, not a counter's `k += 1`); those it hands to a Python function (`reset(c)`)
    and the local objects whose methods that are no array's it calls (`a.zero()`)."""

    def __init__(self, fdef, nodes: list, globals_: dict, numbers: frozenset, locals_: set[str]):
        changed = changed_in_place(fdef, augmented_names=False)
        augmented, maybe_arrays = set(), set(param_names(fdef.args))
        defs = {n.name for n in nodes if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        loop_vars = {n.target.id for n in nodes if isinstance(n, ast.For) and isinstance(n.target, ast.Name)}
        args, objects = set(), set()
        # where each variable is handed to a Python function: its call's line, None inside a nested function
        # (called whenever); and the lines of the loops, whose later statements run before their earlier ones
        self.handed_at: dict[str, list] = {}
        inner = {id(m) for d in nodes if d is not fdef and isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                         ast.Lambda, ast.ClassDef))
                 for m in all_nodes(d)}
        self.loops = [(min(lines), max(lines)) for d in nodes if isinstance(d, (ast.For, ast.While, ast.AsyncFor))
                      and (lines := [m.lineno for m in all_nodes(d) if hasattr(m, "lineno")])]
        # the statement a call is the whole value of (`t = f(c)`, `f(c)`): its own reading of its arguments is
        # the callee's to follow (its twin sees a change after its own read), no read before the change here
        whole = {id(d.value): d for d in nodes if isinstance(d, (ast.Assign, ast.Expr)) and isinstance(d.value, ast.Call)
                 and not [m for m in all_nodes(d.value) if isinstance(m, ast.Call) and m is not d.value]}
        arithmetic = []
        for n in nodes:
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(t := n.targets[0], ast.Name):
                if getattr(n.value, "_od_inplace", False):
                    augmented.add(t.id)
                elif isinstance(n.value, (ast.BinOp, ast.UnaryOp)):
                    arithmetic.append((t.id, n.value))
                elif not isinstance(n.value, _NUMBER_VALUES):
                    maybe_arrays.add(t.id)  # (a call's result, an item, an alias: perhaps an array)
            if not isinstance(n, ast.Call):
                continue
            f = n.func
            changed.update(k.value.id for k in n.keywords if k.arg == "out" and isinstance(k.value, ast.Name))
            callee = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            if callee in _WRITTEN_FIRST and n.args and isinstance(n.args[0], ast.Name):
                changed.add(n.args[0].id)
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
                if not hasattr(np.ndarray, f.attr) and f.attr not in _MUTATORS:
                    objects.add(f.value.id)
            elif isinstance(f, ast.Name) and (f.id in defs or type(callee := globals_.get(f.id)) is types.FunctionType
                                              or isinstance(callee, type) and callee.__flags__ & _HEAPTYPE):
                # (a Python function, or a class of its own: `Holder(c).bump()` changes what it was given; not
                # the arguments a global function only reads, `_kept_params`)
                kept = _kept_params(callee) if type(callee) is types.FunctionType and f.id not in defs else ()
                starred = False
                at = None if id(n) in inner else (getattr(n, "lineno", None), id(whole[id(n)]) if id(n) in whole else None)
                for i, a in enumerate(n.args):
                    starred = starred or isinstance(a, ast.Starred)
                    if isinstance(a, ast.Name) and (starred or i not in kept):
                        args.add(a.id)
                        self.handed_at.setdefault(a.id, []).append(at)
                for k in n.keywords:
                    if isinstance(k.value, ast.Name):
                        args.add(k.value.id)
                        self.handed_at.setdefault(k.value.id, []).append(at)
        grown = True  # (arithmetic on what may be an array may be one: `c = np.ones(3) * 0.3`; a counter's not)
        while grown:
            grown = False
            for name, value in arithmetic:
                if name not in maybe_arrays and _reads(value) & maybe_arrays:
                    maybe_arrays.add(name)
                    grown = True
        changed |= (augmented & maybe_arrays) - numbers
        self.changed = changed & locals_  # (`list.append(lst, v)`: `list` is no variable here)
        # (a loop's counter, `comb(q, j)`, a number's name: no array to change)
        self.args = (args & locals_ & maybe_arrays) - numbers - loop_vars
        self.objects = objects & locals_

    def read_then_changed(self, act: _Activity, nodes: list) -> tuple[set[str], set[str]]:
        """(the variables to mark changed, those to mark as arguments): inactive ones an active statement reads,
        itself or through a view (`d = c[:]`: either way), or a field of it (`t = a.w`), and changed after."""
        changed, args, objects = self.changed - act.active, self.args - act.active, self.objects - act.active
        if not (changed or args or objects):
            return set(), set()
        read_at: dict[str, list] = {}
        read = _active_reads(nodes, act, read_at)
        marked = set()
        if changed:
            inverse: dict[str, set[str]] = {}  # (what may be a view of each variable)
            for m, srcs in act.sources.items():
                for n in srcs:
                    inverse.setdefault(n, set()).add(m)
            for name in changed:
                shared = _sharing(name, act.sources, inverse)
                if shared & read:
                    marked |= {name} | (shared & read)
        # (handed to the call after an active statement read it, or both in one loop: not a parameter rebound
        # to a helper's result first, `n = helper(n)` then `sig[:n]`, whose old value the call may change)
        handed = {n for n in args & read if self._read_before_handed(read_at.get(n, [None]), self.handed_at.get(n, [None]))}
        for r in read - act.active:
            handed |= objects & (act.drawn.get(r, set()) | {r})
        return marked, handed


    def _read_before_handed(self, reads: list, hands: list) -> bool:
        """Some read (line, statement) may come before some handing (line, the statement the call is the whole
        of, or None): on an earlier or the same line, or in one loop; not the handing statement's own reading
        of its arguments. Unknown (None) may."""
        for h in hands:
            for r in reads:
                if h is None or r is None or h[0] is None or r[0] is None:
                    return True
                if h[1] is not None and r[1] == h[1]:  # (the call's own statement: `feat = fbank(signal, winlen)`)
                    continue
                if r[0] <= h[0] or any(lo <= r[0] <= hi and lo <= h[0] <= hi for lo, hi in self.loops):
                    return True
        return False


def _active_reads(nodes: list, act: _Activity, lines: dict | None = None) -> set[str]:
    """The names the active statements read (with `lines`: name -> the lines of those statements)."""
    read: set[str] = set()
    for n in nodes:
        names = None
        if isinstance(n, ast.Assign) and (act.value_active(n.value) or any(  # (`c[m] = 2.0` into an active c)
                isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in act.active
                for t in n.targets)):
            names = _reads(n.value)
            for t in n.targets:
                if isinstance(t, ast.Subscript):
                    names |= _reads(t.slice)
        elif isinstance(n, ast.Expr) and act.value_active(n.value):
            names = _reads(n.value)
        if names:
            read |= names
            if lines is not None:
                for name in names:
                    lines.setdefault(name, []).append((getattr(n, "lineno", None), id(n)))
    return read


def _sharing(name: str, sources: dict[str, set[str]], inverse: dict[str, set[str]]) -> set[str]:
    """name and the variables whose arrays may share memory with its: what it may be a view of (`sources`),
    and what may be a view of it (`inverse`), transitively."""
    out, todo = {name}, [name]
    while todo:
        n = todo.pop()
        for m in (*sources.get(n, ()), *inverse.get(n, ())):
            if m not in out:
                out.add(m)
                todo.append(m)
    return out


_NUMBER_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)


def _texts(assigns, nodes, outer: set[str], globals_: dict) -> set[str]:
    """Variables every binding of which is text: a string literal, an f-string, `str(...)`/`repr(...)`/
    `format(...)` of anything, `+` of two texts, `%` of a text by anything (geomdl's `"{:." + str(p) + "f}"`): a
    method of one (`fmt.format(v)`) is str's, which stores into no argument. (Not a text's `+` with another
    value: `"a" + obj` may be obj's own `__radd__`.)"""
    values: dict = {}
    for name, value in assigns:
        values.setdefault(name, []).append(value)
    if not values:
        return set()
    bindings = collections.Counter(n.id for n in nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load))
    found: set = set()

    def text(v) -> bool:
        if isinstance(v, ast.Constant):
            return type(v.value) is str
        if isinstance(v, ast.JoinedStr):
            return True
        if isinstance(v, ast.Name):
            return v.id in found
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in ("str", "repr", "format") \
                and v.func.id not in values and v.func.id not in outer and v.func.id not in globals_:
            return True
        if isinstance(v, ast.BinOp) and isinstance(v.op, ast.Add):
            return text(v.left) and text(v.right)
        if isinstance(v, ast.BinOp) and isinstance(v.op, ast.Mod):
            return text(v.left)
        return False

    grew = True
    while grew:
        grew = False
        for name, vs in values.items():
            if name not in found and name not in outer and bindings[name] == len(vs) and all(
                    v is not None and text(v) for v in vs):
                found.add(name)
                grew = True
    return found


def _immutable_locals(fdef, globals_: dict, outer: set[str], nodes=None, assigns=None,
                      numbers: frozenset = frozenset()) -> set[str]:
    """Variables every binding of which is a constant (a module's number, `np.inf`, too) or a builtin type or
    function (`dtype = float`): no
    call can store a derivative into them (`y.astype(dtype)` does not make dtype active). (`nodes`,
    `assigns`: `all_nodes(fdef)` and `name_stores(fdef)` as lists, if the caller has them.)"""
    stores = collections.Counter(n.id for n in (all_nodes(fdef) if nodes is None else nodes)
                                 if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    plain = collections.Counter()

    def number(v) -> bool:  # (`-100.0`, `np.inf`, `-math.pi`: a literal, or a module's number)
        if isinstance(v, ast.UnaryOp) and isinstance(v.op, (ast.USub, ast.UAdd)):
            v = v.operand
        if isinstance(v, ast.Constant):
            return True
        if isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name) and v.value.id not in stores \
                and v.value.id not in outer and isinstance(globals_.get(v.value.id), types.ModuleType):
            return type(getattr(globals_[v.value.id], v.attr, None)) in (float, int)
        if isinstance(v, ast.Name) and v.id not in stores and v.id not in outer and v.id in globals_:
            return type(globals_[v.id]) in (float, int)  # (`from numpy import inf`, then `neginf=-inf`)
        return False

    pairs = list(name_stores(fdef) if assigns is None else assigns)
    for name, value in pairs:
        if number(value) or (
                isinstance(value, ast.Name) and value.id not in globals_ and value.id not in stores
                and value.id not in outer
                and isinstance(getattr(builtins, value.id, None), (type, types.BuiltinFunctionType))):
            plain[name] += 1
    found = {n for n, k in plain.items() if k == stores[n] and n not in outer} | set(numbers)
    # (and `numbers`, the variables the caller checks hold numbers: arithmetic on them is a number too)

    def made_of(v) -> bool:  # (arithmetic on such numbers, a tuple of them: a number, a tuple of numbers)
        if isinstance(v, ast.UnaryOp) and isinstance(v.op, (ast.USub, ast.UAdd)):
            v = v.operand
        if isinstance(v, ast.Name):
            return v.id in found
        if isinstance(v, ast.BinOp) and isinstance(v.op, _NUMBER_OPS):
            return made_of(v.left) and made_of(v.right)
        if isinstance(v, ast.Tuple):
            return all(made_of(e) for e in v.elts)
        return number(v)

    for _ in range(4):  # (a negation or copy of one: the lowered form's `t = np.inf; u = -t`; `q = 0.55 * 50.0
        more = collections.Counter()  # / 0.125`, whose temporaries come first; `key = (q, 3)`: prysm's memo key)
        for name, value in pairs:
            if made_of(value):
                more[name] += 1
        grown = {n for n, k in more.items() if k == stores[n] and n not in outer} - found
        if not grown:
            break
        found |= grown
    return found


# -- variables that only steer: read by comparisons and branch tests, never as values --------------------

_VALUE = None  # a read whose value may reach a result (the default for every read not shown otherwise)
_STEER = frozenset()  # a read whose value only decides a branch (a comparison's operand, an if's test)
_DYNAMIC_SCOPE = frozenset({"locals", "vars", "eval", "exec", "globals", "dir"})


def steering_only(fdef: ast.FunctionDef, numbers: frozenset = frozenset()) -> set[str]:
    """The variables of fdef whose every read is a comparison's operand, a branch's test, or the value of
    a store to another such variable (`n` of `while n > 0: n = n - 1`): no result depends on them except
    through control flow, so no derivative flows through them and they need not be recorded.

    Conservative: only variables read somewhere (one never read may be held by the engine: reverse mode's
    entry copies of the parameters), and only parameters and variables stored nothing but arithmetic of
    variables and constants — not a call's result (the call may have changed something), not `n -= 1`
    (for an array a change in place) unless n is among `numbers` (known to hold numbers, which an in-place
    operator rebinds: `numbers_if`). A read anywhere else — a call's argument, an index, a return, a
    nested function or comprehension — is a value read; nothing qualifies when fdef may see its variables
    by name (`locals()`, `eval`; reverse mode refuses those). A comparison's result is a bool: a derivative
    stops there, as everywhere in the lowered form."""
    for node in own_nodes(fdef):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _DYNAMIC_SCOPE:
            return set()
    candidates = set(param_names(fdef.args))
    excluded: set[str] = set()
    reads: list[tuple[str, frozenset | None]] = []
    for st in own_statements(fdef.body):
        if isinstance(st, (ast.If, ast.While)):
            _reads_of(st.test, _STEER, reads, numbers)
        elif isinstance(st, ast.Assign) and all(isinstance(t, ast.Name) for t in st.targets):
            targets = frozenset(t.id for t in st.targets)
            (candidates if _arithmetic(st.value, numbers) else excluded).update(targets)
            _reads_of(st.value, targets, reads, numbers)
        elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):  # its reads are cells
            excluded.add(st.name)
            _value_reads(st, reads)
        else:
            if isinstance(st, (ast.Global, ast.Nonlocal)):
                excluded.update(st.names)
            for child in ast.iter_child_nodes(st):
                if not isinstance(child, ast.stmt):  # expressions, arguments, handlers, withitems, keywords
                    _value_reads(child, reads)
                    excluded.update(n for node in all_nodes(child) for n in _binds(node))
    # a variable never read keeps its activity: the engines may hold it for themselves (reverse mode's
    # entry copies of the parameters, the result of a call that changed something)
    steer = (candidates - excluded) & {name for name, _ in reads}
    where: dict[str, list] = {}  # name -> where each of its reads goes
    feeding: dict[str, set[str]] = {}  # name -> the names read into it
    for name, into in reads:
        where.setdefault(name, []).append(into)
        for target in into or ():
            feeding.setdefault(target, set()).add(name)
    todo = list(steer)
    while todo:  # (a worklist: a name leaving makes those read into it look again)
        name = todo.pop()
        if name in steer and any(into is _VALUE or not into <= steer for into in where[name]):
            steer.discard(name)
            todo.extend(feeding.get(name, ()))
    return steer


def _binds(node: ast.AST) -> tuple:
    """The names node itself binds other than by a plain read: a store or `del`, an `except ... as` name,
    a `match` pattern's capture."""
    if isinstance(node, ast.Name):
        return () if isinstance(node.ctx, ast.Load) else (node.id,)
    if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
        return (node.name,) if node.name else ()
    if isinstance(node, ast.MatchMapping):
        return (node.rest,) if node.rest else ()
    return ()


def _arithmetic(e: ast.expr, numbers=None) -> bool:
    """e is arithmetic, comparisons and conditionals of variables and constants (no call, no item, no
    attribute, no in-place operator but on one of `numbers`; with numbers None, any)."""
    return all(isinstance(n, (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.IfExp,
                              ast.operator, ast.unaryop, ast.cmpop, ast.boolop, ast.expr_context))
               and (numbers is None or not _changes_in_place(n, numbers)) for n in all_nodes(e))


def _changes_in_place(e: ast.AST, numbers) -> bool:
    """e is `x op= y` on a variable that may hold an array (not one of `numbers`): x may change in place."""
    return getattr(e, "_od_inplace", False) and not (isinstance(e.left, ast.Name) and e.left.id in numbers)


def numbers_if(fdef: ast.FunctionDef, roots=None) -> tuple[frozenset, frozenset]:
    """`(names, params)`: the variables with an in-place operator (`n -= 1`; among `roots` if given) that
    hold numbers whenever the parameters `params` are bound to numbers on entry — each stored nothing but
    arithmetic of such variables and constants, and so is each variable those stores read. A number is
    immutable, so its in-place operator rebinds (`n -= 1` is `n = n - 1`). Whoever relies on `names`
    checks `params` at run time."""
    params = set(param_names(fdef.args))
    stores: dict[str, list] = {}
    unknown: set[str] = set()  # stored some other way: a loop's target, `with ... as`, a handler's name...
    inplace: set[str] = set()
    plain = set()  # the targets of `name = value`
    for node in own_nodes(fdef):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            plain.add(id(node.targets[0]))
            stores.setdefault(node.targets[0].id, []).append(node.value)
            if getattr(node.value, "_od_inplace", False) and isinstance(node.value.left, ast.Name):
                inplace.add(node.value.left.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            unknown.update(node.names)
    unknown.update(n for node in own_nodes(fdef) if id(node) not in plain for n in _binds(node))
    for n in _own_defs(fdef):  # a nested function rebinding a variable (`nonlocal`) or named like one
        unknown |= nonlocal_writes(n) | {n.name}
    names: set[str] = set()
    assumed: set[str] = set()
    for root in sorted(inplace if roots is None else inplace & set(roots)):
        found = _number_closure(root, params, stores, unknown)
        if found is not None:
            names |= found[0]
            assumed |= found[1]
    return frozenset(names), frozenset(assumed)


def own_statements(body):
    """The statements of a body and of the bodies nested in it (not in nested functions or classes)."""
    for st in body:
        yield st
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from own_statements(getattr(st, field, ()))
        for handler in getattr(st, "handlers", ()):
            yield from own_statements(handler.body)
        for case in getattr(st, "cases", ()):
            yield from own_statements(case.body)


def steering_numbers(fdef: ast.FunctionDef) -> tuple[frozenset, frozenset]:
    """`numbers_if` for the variables whose holding numbers makes them steer only (a counter's `n -= 1`),
    and the parameters that must then be bound to numbers; others changed in place (an array parameter's
    `W -= g`) are left out, so their values need no check."""
    names, _ = numbers_if(fdef)
    gained = steering_only(fdef, names) - steering_only(fdef) if names else set()
    return numbers_if(fdef, gained) if gained else (frozenset(), frozenset())


def _number_closure(root: str, params: set, stores: dict, unknown: set):
    """(the variables root's value is computed from, the parameters among them), when every store of
    each is arithmetic; None when one is stored otherwise, or is a cell or a global."""
    seen, todo = set(), [root]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        if n in unknown or (n not in params and n not in stores):
            return None
        for value in stores.get(n, ()):
            if not _arithmetic(value):
                return None
            todo.extend(m.id for m in all_nodes(value) if isinstance(m, ast.Name))
    return seen, seen & params


def _reads_of(e: ast.expr, into, reads: list, numbers=frozenset()) -> None:
    """Each variable e reads, with where its value goes: `into` (the names it is stored to, or a branch)
    through arithmetic, conditionals and comparisons; a value read (`_VALUE`) under anything else."""
    if isinstance(e, ast.Name):
        reads.append((e.id, into))
    elif isinstance(e, ast.BinOp) and _changes_in_place(e, numbers):  # `x += y` on what may be an array
        _value_reads(e, reads)
    elif isinstance(e, ast.Compare):
        for operand in [e.left, *e.comparators]:
            _reads_of(operand, _STEER, reads, numbers)
    elif isinstance(e, ast.UnaryOp):
        _reads_of(e.operand, _STEER if isinstance(e.op, ast.Not) else into, reads, numbers)
    elif isinstance(e, ast.BinOp):
        _reads_of(e.left, into, reads, numbers)
        _reads_of(e.right, into, reads, numbers)
    elif isinstance(e, ast.BoolOp):
        for v in e.values:
            _reads_of(v, into, reads, numbers)
    elif isinstance(e, ast.IfExp):
        _reads_of(e.test, _STEER, reads, numbers)
        _reads_of(e.body, into, reads, numbers)
        _reads_of(e.orelse, into, reads, numbers)
    elif not isinstance(e, ast.Constant):
        _value_reads(e, reads)


def _value_reads(node: ast.AST, reads: list) -> None:
    """Every variable node names (stores too: conservative), as a value read."""
    reads.extend((n.id, _VALUE) for n in all_nodes(node) if isinstance(n, ast.Name))


def _own_defs(fdef, kind=ast.FunctionDef):
    """The function definitions (or lambdas: kind) in fdef's own body (not inside its nested functions)."""
    nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
    stack = list(fdef.body)
    while stack:
        n = stack.pop()
        if isinstance(n, kind):
            yield n
        elif not isinstance(n, nested):
            stack.extend(ast.iter_child_nodes(n))


_CELL_STORES = frozenset({"STORE_DEREF", "DELETE_DEREF"})


def cells_rebound_by_callees(fn) -> list[tuple[str, str]]:
    """[(cell name, callee)]: the cells of fn (captured from its factory) that a function fn captures (or one
    that function captures) rebinds by `nonlocal` while they hold a number or an array, not an int, a string
    or None: a sibling closure of one factory (`def add(p): nonlocal total; total = total + p * p` beside
    `def f(p): add(p); return total * p`). A twin reads such a cell as a constant after the call (reverse mode
    gave 0.49 for 1.47; forward mode's twin ran add on duals and then gave up, leaving a dual in the cell)."""
    cells = {id(c): name for name, c in zip(fn.__code__.co_freevars, fn.__closure__ or ())}
    if not cells:
        return []
    out: list[tuple[str, str]] = []
    seen: set[int] = set()

    def visit(g, depth):
        if type(g) is not types.FunctionType or id(g) in seen or not g.__closure__:
            return
        seen.add(id(g))
        own = dict(zip(g.__code__.co_freevars, g.__closure__))
        for ins in dis.get_instructions(g.__code__):
            if ins.opname in _CELL_STORES and (c := own.get(ins.argval)) is not None and id(c) in cells:
                try:
                    v = c.cell_contents
                except ValueError:
                    v = None
                if not (v is None or type(v) in (int, bool, str, bytes)):
                    out.append((cells[id(c)], g.__qualname__))
        if depth < 2:
            for c in g.__closure__:
                try:
                    visit(c.cell_contents, depth + 1)
                except ValueError:
                    pass

    for c in fn.__closure__:
        try:
            visit(c.cell_contents, 0)
        except ValueError:
            pass
    return out


def _cell_values(fn) -> dict:
    out = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            out[name] = cell.cell_contents
        except ValueError:  # (an empty cell: assigned later, by the factory)
            out[name] = _EMPTY_CELL
    return out


_EMPTY_CELL = object()


def holds_state(v) -> bool:
    """v is an array, list, dict, set or object with fields (not a function, class or module): state a
    function holding it may change in place."""
    if isinstance(v, (list, dict, set, np.ndarray)):
        return True
    if callable(v) or isinstance(v, (types.ModuleType, type)):
        return False
    return hasattr(v, "__dict__") or bool(getattr(type(v), "__slots__", None))


def state_cells(fn) -> frozenset:
    """The names of fn's cells holding state a callee may change (`holds_state`)."""
    return frozenset(name for name, v in _cell_values(fn).items() if v is not _EMPTY_CELL and holds_state(v))


def cells_callees_may_change(fdef, fn, freevars: tuple, handed: bool = False) -> list[str]:
    """The captured variables of fn naming state (`holds_state`, or an empty cell) that a function fn calls
    may change: fn calls a function it captured, or one read out of what it captured (`ops["put"](p)`,
    `ns.put(p)`; not an array's or a container's own method, `X.sum()`, `cfg.get("k")`), or (`handed`) hands
    a captured list, dict or object to a call. A sibling closure of one factory writes into the state both
    capture (`def put(p): st["x"] = p * p` beside `def f(p): put(p); return st["x"]`): where fn's cells are
    taken for constants (`gradient(f, x)`'s f), the read gave 0 for 2.8 silently. `fdef`: fn's definition."""
    values = _cell_values(fn)
    called = set()
    for n in all_nodes(fdef):
        if not isinstance(n, ast.Call):
            continue
        func = n.func
        if isinstance(func, ast.Name) and func.id in freevars:
            called.add(func.id)
        else:
            inner = func.value if isinstance(func, (ast.Attribute, ast.Subscript)) else None
            while isinstance(inner, (ast.Attribute, ast.Subscript)):
                inner = inner.value
            v = values.get(inner.id) if isinstance(inner, ast.Name) else None
            if isinstance(inner, ast.Name) and inner.id in freevars and not isinstance(v, np.ndarray) and (
                    isinstance(func, ast.Subscript) or func.value is not inner
                    or holds_state(v) and not isinstance(v, (list, dict, set))):
                called.add(inner.id)
        if handed:
            for a in (*n.args, *(k.value for k in n.keywords)):
                while isinstance(a, (ast.Attribute, ast.Subscript, ast.Starred)):
                    a = a.value
                if isinstance(a, ast.Name) and a.id in freevars and holds_state(values.get(a.id)) and not isinstance(
                        values.get(a.id), np.ndarray):
                    called.add(a.id)
    if not called:
        return []
    return [name for name, v in values.items() if name in freevars and (v is _EMPTY_CELL or holds_state(v))]


_FLOAT_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod)  # (float op float is a float; not `**`)


def float_typed(fdef) -> dict[str, set[str]]:
    r"""The variables of fdef that hold a float (exactly) wherever they are bound, provided the parameters among
    them entered as floats: each bound only by `v = e` (`v = w = e` too) or `v op= e` with e a float constant,
    a float-typed variable, `-w`, or `a op b` of `+ - * / // %` where one operand is float-typed and the other
    is too or an int constant; the parameters also by the call. Name -> the variables its bindings read.
    Variables bound any other way (a loop, unpacking, `with`, `except`, `del`, a nested scope's binding or
    `nonlocal`/`global`), read from an enclosing scope, and `*args`/`**kw` are not.

    >>> import ast
    >>> sorted(float_typed(ast.parse("def f(x, n):\n r = 1.0\n for i in range(n):\n  r = r * x\n return r").body[0]))
    ['n', 'r', 'x']
    """
    own = fdef.args.posonlyargs + fdef.args.args + fdef.args.kwonlyargs
    own_args = {id(a) for a in own}
    excluded: set[str] = set()
    bindings: dict[str, list] = {a.arg: [] for a in own}
    accepted: set[int] = set()
    for n in all_nodes(fdef):
        if isinstance(n, ast.Assign) and all(isinstance(t, ast.Name) for t in n.targets):
            for t in n.targets:
                accepted.add(id(t))
                bindings.setdefault(t.id, []).append((None, n.value, None))
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            accepted.add(id(n.target))
            bindings.setdefault(n.target.id, []).append((n.target, n.value, n.op))
        elif isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) and id(n) not in accepted:
            excluded.add(n.id)  # (walked after its statement: an accepted target is known by then)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            excluded.update(n.names)
        elif isinstance(n, ast.alias):
            excluded.add((n.asname or n.name).split(".")[0])
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not fdef:
            excluded.add(n.name)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            excluded.add(n.name)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            excluded.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            excluded.add(n.rest)
        elif isinstance(n, ast.arg) and id(n) not in own_args:
            excluded.add(n.arg)
    floats = {name for name in bindings if name not in excluded}

    def operand(e, cands):
        """A float-typed name (its name) or float constant (True); an int constant (False); else None."""
        if isinstance(e, ast.Name):
            return e.id if e.id in cands else None
        if isinstance(e, ast.Constant):
            return True if type(e.value) is float else False if type(e.value) in (int, bool) else None
        return None

    def makes_float(target, value, op, cands) -> bool:
        if op is not None:  # (`v op= e`: as `v = v op e`)
            value = ast.BinOp(left=target, op=op, right=value)
        if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)):
            value = value.operand
        if not isinstance(value, ast.BinOp):
            o = operand(value, cands)
            return o is True or isinstance(o, str)
        if not isinstance(value.op, _FLOAT_OPS):
            return False
        a, b = operand(value.left, cands), operand(value.right, cands)
        return a is not None and b is not None and (a is True or isinstance(a, str) or b is True or isinstance(b, str))

    changed = True
    while changed:
        changed = False
        for name in list(floats):
            if not all(makes_float(t, v, op, floats) for t, v, op in bindings[name]):
                floats.discard(name)
                changed = True
    return {name: {n.id for _, v, _ in bindings[name] for n in all_nodes(v) if isinstance(n, ast.Name)} | (
                {name} if any(op is not None for _, _, op in bindings[name]) else set())
            for name in floats}


def floats_from(floats: dict[str, set[str]], names) -> set[str]:
    """The variables float_typed's names rest on, theirs too: their parameters must have entered as floats."""
    seen, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(floats.get(name, ()))
    return seen
