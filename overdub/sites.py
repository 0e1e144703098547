"""Sites, and the pass that routes every intercepted operation of a function through a helper.

`instrument(source, profile)` rewrites a private copy of a function's tree so that each operation whose kind
is in `profile` asks a helper free variable, with a static site id, what to call instead:

    f(a, *b, k=c)   ->  __od_call__(7, f)(a, *b, k=c)
    a + b           ->  __od_op__(8, __od_add__)(a, b)          (__od_add__ is a cell holding operator.add)
    a.x             ->  __od_op__(9, __od_getattr__)(a, 'x')    (private names mangled by hand)
    a[i] = v        ->  __od_op__(10, __od_setitem__)(a, i, v)
    a < b < c       ->  __od_op__(11, __od_lt__)(a, (__od_t0__ := b)) and __od_op__(12, __od_lt__)(__od_t0__, c)
    if u: / while u: / a if u else b / [.. if u]  ->  if __od_op__(13, __od_bool__)(u):     (kind "truth")
    with m as v:    ->  with __od_op__(14, __od_managed__)(m) as v:                     (kind "with")

Why `helper(sid, fn)(args)` and not `helper(sid, fn, args)`: the call itself stays an ordinary call, so
CPython inlines Python-to-Python calls (no C recursion, no argument tuple/dict per call) and the helper
frame is gone before the callee runs; this keeps a calls-only context within ~3x of a plain run on
call-heavy code and keeps tracebacks and recursion depth as in the original. The price: the active
context is looked up when the operation starts, before its operands are evaluated.

Sites are numbered in evaluation order (operands before the operation). Every new node takes the position
of the node it replaces, so tracebacks point at the user's file:line.

Left alone, by design: short-circuit `and`/`or` (operands are still rewritten; the truth of a test is asked
of its whole value), `assert`, `async with`; match
patterns; annotations; `yield from`/`await`; and calls that inspect the caller's frame, decided by name at
the call site: `locals()`, `globals()`, `vars()`, `dir()`, `eval`/`exec` without namespaces, `breakpoint()`,
`sys._getframe()`, `inspect.currentframe()` (the results of `locals()`, `vars()` and `dir()` are filtered
of the pass's own `__od_*__` names). Zero-argument `super()` becomes `super(__class__, <first
argument>)` and is then an ordinary call. Chained comparisons and augmented assignment to subscripts use
temporaries `__od_tN__`; where a temporary cannot live (class bodies, comprehension iterables) those
operations are left as they are. Only a single top-level tuple/list target of `=` counts as an unpack;
loop targets, nested targets and targets of comprehensions are plain.
"""

from __future__ import annotations

import ast
import copy
import linecache
import operator
import weakref
from dataclasses import dataclass, field
from typing import Any

from . import ops
from .errors import OverdubError, not_swallowed
from .source import _LEAVES, FunctionSource, copy_tree

__all__ = ["Site", "Block", "Instrumented", "instrument", "copy_tree", "KINDS", "normalize_profile"]

KINDS = frozenset({"call", "binop", "unaryop", "compare", "getitem", "setitem", "delitem", "getattr",
                   "setattr", "delattr", "iter", "unpack", "build", "augop", "truth", "with"})

FRAME_NAMES = frozenset({"locals", "globals", "vars", "dir", "eval", "exec", "breakpoint"})
FRAME_ATTRS = frozenset({"_getframe", "currentframe", "_getframemodulename"})

CALL, OP = "__od_call__", "__od_op__"


def normalize_profile(intercepts) -> frozenset:
    """The profile as a frozenset of known kinds; unknown kinds are an OverdubError naming them."""
    profile = frozenset(intercepts)
    unknown = profile - KINDS
    if unknown:
        raise OverdubError(f"unknown interception kind(s) {sorted(unknown)}",
                           fix=f"use a subset of {sorted(KINDS)}")
    return profile


@dataclass(frozen=True, slots=True)
class Site:
    """One intercepted operation of a patched function; `id` is stable within its function's twin."""

    id: int
    kind: str
    op: str
    filename: str
    lineno: int
    col: int
    function: str
    block: int
    end_lineno: int = 0
    end_col: int = 0
    fn: Any = field(default=None, compare=False)  # the operator function of a non-call site

    @property
    def snippet(self) -> str:
        """The source text of the operation (first line only, shortened)."""
        lines = linecache.getlines(self.filename)
        if not 0 < self.lineno <= len(lines):
            return self.op
        raw = lines[self.lineno - 1].encode()  # ast columns are UTF-8 byte offsets
        end = self.end_col if self.end_lineno == self.lineno else len(raw)
        text = raw[self.col:end].decode(errors="replace").strip()
        return text if len(text) <= 60 else text[:57] + "..."

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno} in {self.function}: {self.snippet}"


@dataclass(frozen=True, slots=True)
class Block:
    """A basic block: a run of statements of one function, split at compound statements."""

    id: int
    function: str
    lineno: int
    label: str


@dataclass
class Instrumented:
    """The result of the pass: the rewritten tree, its sites and blocks, the helper cells it needs. It is
    cached per code object and holds that code object weakly (`code`), or the cache entry would keep it,
    and a function exec'd with it, alive for ever."""

    code_ref: Any  # weakref.ref to the original code object
    profile: frozenset
    tree: ast.AST
    sites: tuple[Site, ...]
    blocks: tuple[Block, ...]
    operators: dict[str, Any]  # helper free variable name -> operator function
    view: Any = None  # the StaticView, built on first request (overdub.view)

    @property
    def freevars(self) -> tuple[str, ...]:
        return (CALL, OP, *self.operators)

    @property
    def code(self):
        return self.code_ref()


def instrument(source: FunctionSource, profile: frozenset) -> Instrumented:
    """Rewrite a fresh copy of `source.tree` for `profile` (see the module docstring)."""
    rewriter = _Rewriter(source, profile)
    tree = rewriter.rewrite_root(copy_tree(source.tree))
    return Instrumented(weakref.ref(source.code), profile, tree, tuple(rewriter.sites), tuple(rewriter.blocks),
                        rewriter.operators)


def _loc(new, old):
    """`new` placed at `old`'s position (nodes made here get positions one by one; `compile_twin`
    fills any left over)."""
    return ast.copy_location(new, old)


def _name(id_: str, old, ctx=None):
    return ast.copy_location(ast.Name(id=id_, ctx=ctx or ast.Load()), old)


def _const(value, old):
    return ast.copy_location(ast.Constant(value=value), old)


def _mangle(name: str, cls: str | None) -> str:
    if cls is None or not name.startswith("__") or name.endswith("__"):
        return name
    stripped = cls.lstrip("_")
    return f"_{stripped}{name}" if stripped else name


def _is_simple(node) -> bool:
    """Evaluating node has no side effects worth ordering (a name or a constant)."""
    return isinstance(node, (ast.Name, ast.Constant))


class _Rewriter(ast.NodeTransformer):
    """The pass; statements are visited through `_body` so that blocks follow the statement structure."""

    def __init__(self, source: FunctionSource, profile: frozenset):
        self.source, self.profile = source, profile
        self.filename = source.filename
        self.lines: list = list(linecache.getlines(source.filename))
        self.sites: list[Site] = []
        self.blocks: list[Block] = []
        self.operators: dict[str, Any] = {}
        self.functions: list[str] = []  # qualnames of the enclosing scopes
        self.prefixes: list[str] = []  # what a definition in each of those scopes prefixes its name with
        self.classes: list[str | None] = [source.class_name]
        self.first_args: list[ast.expr | None] = []
        self.temps_ok = [True]
        self.block = -1
        self.ntemps = 0

    # -- traversal (ast.NodeTransformer's, without its per-node overheads) ---------------------------
    _dispatch: dict = {}

    def visit(self, node):
        cls = type(node)
        method = self._dispatch.get(cls)
        if method is None:
            method = self._dispatch[cls] = getattr(type(self), "visit_" + cls.__name__, None) or \
                type(self).generic_visit
        return method(self, node)

    def generic_visit(self, node):
        for name in node._fields:
            old = getattr(node, name, None)
            if type(old) is list:
                new = []
                for item in old:
                    if isinstance(item, ast.AST) and not isinstance(item, _LEAVES):
                        item = self.visit(item)
                        if type(item) is list:
                            new.extend(item)
                            continue
                    new.append(item)
                old[:] = new
            elif isinstance(old, ast.AST) and not isinstance(old, _LEAVES):
                setattr(node, name, self.visit(old))
        return node

    def visit_Name(self, node):
        return node

    visit_Constant = visit_Name

    # -- bookkeeping -------------------------------------------------------------------------------
    def new_block(self, node, label: str) -> None:
        self.block = len(self.blocks)
        self.blocks.append(Block(self.block, self.functions[-1], getattr(node, "lineno", 0), label))

    def new_site(self, node, kind: str, op: str, fn=None) -> int:
        sid = len(self.sites)
        self.sites.append(Site(sid, kind, op, self.filename, node.lineno, node.col_offset,
                               self.functions[-1], self.block, node.end_lineno or node.lineno,
                               node.end_col_offset or 0, fn))
        return sid

    def text_of(self, node) -> str:
        """The source text of a one-line node (ast.unparse otherwise)."""
        if node.lineno == node.end_lineno and 0 < node.lineno <= len(self.lines):
            raw = self.lines[node.lineno - 1]
            if isinstance(raw, str):
                raw = self.lines[node.lineno - 1] = raw.encode()  # columns are UTF-8 byte offsets
            return raw[node.col_offset:node.end_col_offset].decode(errors="replace")
        return ast.unparse(node)

    def operator_name(self, fn) -> str:
        name = f"__od_{fn.__name__}__"
        self.operators[name] = fn
        return name

    def temp(self, old, ctx=None):
        name = f"__od_t{self.ntemps}__"
        self.ntemps += 1
        return _name(name, old, ctx)

    def op_call(self, node, kind: str, op: str, fn, args: list) -> ast.Call:
        """`__od_op__(sid, fn)(*args)` at node's position."""
        sid = self.new_site(node, kind, op, fn)
        target = ast.Call(func=_name(OP, node), args=[_const(sid, node), _name(self.operator_name(fn), node)],
                          keywords=[])
        return _loc(ast.Call(func=_loc(target, node), args=args, keywords=[]), node)

    # -- scopes and blocks ---------------------------------------------------------------------------
    def rewrite_root(self, tree):
        self.functions.append(self.source.code.co_qualname)
        self.prefixes.append(self.source.code.co_qualname + ".<locals>.")
        self.first_args.append(self._first_arg(tree))
        self.new_block(tree, "entry")
        if isinstance(tree, ast.Lambda):
            tree.body = self.visit(tree.body)
        else:
            tree.body = self._body(tree.body, None)
        return tree

    @staticmethod
    def _first_arg(fdef) -> ast.expr | None:
        if isinstance(fdef, ast.Lambda):
            return None
        positional = fdef.args.posonlyargs + fdef.args.args
        if positional:
            return ast.Name(id=positional[0].arg, ctx=ast.Load())
        if fdef.args.vararg:
            return ast.Subscript(value=ast.Name(id=fdef.args.vararg.arg, ctx=ast.Load()),
                                 slice=ast.Constant(0), ctx=ast.Load())
        return None

    def _body(self, stmts: list, label: str | None, node=None) -> list:
        """Visit a statement list: a new block at its start (unless label is None) and after each
        compound statement."""
        if label is not None and stmts:
            self.new_block(node or stmts[0], label)
        out: list = []
        for i, stmt in enumerate(stmts):
            new = self.visit(stmt)
            out.extend(new if isinstance(new, list) else [new])
            compound = isinstance(stmt, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith,
                                         ast.Try, ast.TryStar, ast.Match, ast.FunctionDef,
                                         ast.AsyncFunctionDef, ast.ClassDef))
            if compound and i + 1 < len(stmts):
                self.new_block(stmts[i + 1], "after")
        return out

    def _function_scope(self, node, name: str):
        qualname = self.prefixes[-1] + name
        self.functions.append(qualname)
        self.prefixes.append(qualname + ".<locals>.")
        self.first_args.append(self._first_arg(node))
        self.temps_ok.append(True)

    def _leave_scope(self):
        self.functions.pop()
        self.prefixes.pop()
        self.first_args.pop()
        self.temps_ok.pop()

    def _visit_function(self, node):
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        self._visit_defaults(node.args)
        outer = self.block
        self._function_scope(node, node.name)
        node.body = self._body(node.body, "entry", node)
        self._leave_scope()
        self.block = outer
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = _visit_function

    def _visit_defaults(self, args: ast.arguments) -> None:
        args.defaults = [self.visit(d) for d in args.defaults]
        args.kw_defaults = [None if d is None else self.visit(d) for d in args.kw_defaults]

    def visit_Lambda(self, node):
        self._visit_defaults(node.args)
        self._function_scope(node, "<lambda>")
        node.body = self.visit(node.body)
        self._leave_scope()
        return node

    def visit_ClassDef(self, node):
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.bases = [self.visit(b) for b in node.bases]
        node.keywords = [self.visit(k) for k in node.keywords]
        outer = self.block
        self.classes.append(node.name)
        self.first_args.append(None)
        self.temps_ok.append(False)
        qualname = self.prefixes[-1] + node.name
        self.functions.append(qualname)
        self.prefixes.append(qualname + ".")
        node.body = self._body(node.body, "class body", node)
        self.functions.pop()
        self.prefixes.pop()
        self.temps_ok.pop()
        self.first_args.pop()
        self.classes.pop()
        self.block = outer
        return node

    # -- compound statements -------------------------------------------------------------------------
    def truth(self, test):
        """A test as `bool(test)` at its position when "truth" is intercepted (`if u:` asks u's class)."""
        if "truth" not in self.profile or isinstance(test, (ast.Constant, ast.Compare)) or (
                isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
            return test  # (a comparison's value is a bool, but for a class's own comparisons returning objects)
        return self.op_call(test, "truth", "bool", bool, [test])

    def visit_IfExp(self, node):
        self.generic_visit(node)
        node.test = self.truth(node.test)
        return node

    def visit_If(self, node):
        node.test = self.truth(self.visit(node.test))
        node.body = self._body(node.body, "if")
        node.orelse = self._body(node.orelse, "else")
        return node

    def visit_While(self, node):
        self.new_block(node, "while test")
        node.test = self.truth(self.visit(node.test))
        node.body = self._body(node.body, "while body")
        node.orelse = self._body(node.orelse, "while else")
        return node

    def visit_For(self, node):
        node.iter = self.visit(node.iter)
        if "iter" in self.profile and isinstance(node, ast.For):
            node.iter = self.op_call(node.iter, "iter", "iter", iter, [node.iter])
        node.target = self.visit(node.target)
        node.body = self._body(node.body, "for body")
        node.orelse = self._body(node.orelse, "for else")
        return node

    visit_AsyncFor = visit_For

    def visit_With(self, node):
        node.items = [self.visit(item) for item in node.items]
        if "with" in self.profile and isinstance(node, ast.With):
            for item in node.items:
                item.context_expr = self.op_call(item.context_expr, "with", "with", ops.managed,
                                                 [item.context_expr])
        node.body = self._body(node.body, "with body")
        return node

    visit_AsyncWith = visit_With

    def visit_Try(self, node):
        node.body = self._body(node.body, "try")
        for handler in node.handlers:
            self.new_block(handler, "except")
            if handler.type is not None:
                handler.type = self.visit(handler.type)
            # (a context's error is not the code's to catch: `errors.not_swallowed`)
            check = ast.Call(func=_name(self.operator_name(not_swallowed), handler), args=[], keywords=[])
            handler.body = [_loc(ast.Expr(_loc(check, handler)), handler)] + self._body(handler.body, None)
        node.orelse = self._body(node.orelse, "try else")
        node.finalbody = self._body(node.finalbody, "finally")
        return node

    visit_TryStar = visit_Try

    def visit_Match(self, node):
        node.subject = self.visit(node.subject)
        if "call" in self.profile and any(isinstance(n, ast.MatchClass)
                                          for case in node.cases for n in ast.walk(case.pattern)):
            node.subject = self.op_call(node.subject, "call", "match", ops.class_match, [node.subject])
        for case in node.cases:  # patterns are not expressions: left alone
            self.new_block(case.pattern, "case")
            if case.guard is not None:
                case.guard = self.visit(case.guard)
            case.body = self._body(case.body, None)
        return node

    # -- simple statements with targets --------------------------------------------------------------
    def visit_Assign(self, node):
        node.value = self.visit(node.value)
        if len(node.targets) == 1 and isinstance(node.targets[0], (ast.Tuple, ast.List)) and self.temps_ok[-1]:
            # `obj.a, d[k] = u, v`: each attribute or item an element stores into is bound to a temporary by the
            # unpacking, then stored through the context, in Python's order (run as they were, forward mode's
            # store of an attribute on a float subclass's dual failed: an AttributeError)
            later: list = []
            node.targets = [self._stores_in(node.targets[0], later)]
            if later:
                out = self._assign(node)
                return (out if isinstance(out, list) else [out]) + [
                    _loc(ast.Expr(value=self._store(target, _name(tmp.id, target))), target) for tmp, target in later]
        return self._assign(node)

    def _stores_in(self, target, later: list):
        """target with each element whose store the context intercepts replaced by a temporary, depth first (the
        pairs of temporary and element appended to later)."""
        if isinstance(target, (ast.Tuple, ast.List)):
            target.elts = [self._stores_in(e, later) for e in target.elts]
            return target
        if isinstance(target, ast.Starred):
            target.value = self._stores_in(target.value, later)
            return target
        if self._intercepts_store(target):
            tmp = self.temp(target)
            later.append((tmp, target))
            return self.temp_store(tmp)
        return target

    def _assign(self, node):
        targets = node.targets
        if len(targets) == 1 and isinstance(targets[0], (ast.Tuple, ast.List)) and "unpack" in self.profile:
            return self._unpack(node)
        stored = [t for t in targets if self._intercepts_store(t)]
        if not stored:
            node.targets = [self.visit(t) for t in targets]
            return node
        needs_temp = len(targets) > 1 or not (_is_simple(node.value) or all(
            _is_simple(p) for p in self._target_parts(targets[0])))
        if needs_temp and not self.temps_ok[-1]:
            node.targets = [self.visit(t) for t in targets]
            return node
        out, value = [], node.value
        if needs_temp:
            tmp = self.temp(node)
            out.append(_loc(ast.Assign(targets=[self.temp_store(tmp)], value=value), node))
            value = tmp
        for target in targets:
            if self._intercepts_store(target):
                out.append(_loc(ast.Expr(value=self._store(target, value)), target))
            else:
                out.append(_loc(ast.Assign(targets=[self.visit(target)], value=value), node))
        return out

    @staticmethod
    def temp_store(tmp):
        return ast.copy_location(ast.Name(id=tmp.id, ctx=ast.Store()), tmp)

    def _intercepts_store(self, target) -> bool:
        return ((isinstance(target, ast.Subscript) and "setitem" in self.profile)
                or (isinstance(target, ast.Attribute) and "setattr" in self.profile))

    @staticmethod
    def _target_parts(target) -> list:
        if isinstance(target, ast.Subscript):
            return [target.value, target.slice]
        if isinstance(target, ast.Attribute):
            return [target.value]
        return []

    def _store(self, target, value):
        """`setitem(obj, index, value)` / `setattr(obj, 'name', value)` for a store target."""
        obj = self.visit(target.value)
        if isinstance(target, ast.Subscript):
            index = self._index(target.slice)
            return self.op_call(target, "setitem", "[]=", operator.setitem, [obj, index, value])
        attr = _mangle(target.attr, self.classes[-1])
        return self.op_call(target, "setattr", f"setattr .{target.attr}", setattr,
                            [obj, _const(attr, target), value])

    def _unpack(self, node):
        target = node.targets[0]
        stars = [i for i, e in enumerate(target.elts) if isinstance(e, ast.Starred)]
        if len(stars) > 1:
            node.targets = [self.visit(target)]
            return node
        n = len(target.elts)
        if stars:
            counts = [_const(stars[0], node), _const(n - stars[0] - 1, node)]
            target.elts[stars[0]] = target.elts[stars[0]].value
            op = f"unpack {stars[0]}+*+{n - stars[0] - 1}"
        else:
            counts, op = [_const(n, node)], f"unpack {n}"
        node.targets = [self.visit(target)]
        node.value = self.op_call(node.value, "unpack", op, ops.unpack, [node.value, *counts])
        return node

    def visit_AugAssign(self, node):
        target = node.target
        if "augop" not in self.profile:
            return self.generic_visit(node)
        symbol, fn = ops.AUGOPS[type(node.op)]
        value = self.visit(node.value)
        if isinstance(target, ast.Name):
            load = _name(target.id, target)
            new = self.op_call(node, "augop", symbol, fn, [load, value])
            return _loc(ast.Assign(targets=[target], value=new), node)
        if not self.temps_ok[-1]:
            node.value = value
            node.target = self.visit(target)
            return node
        # The target's parts are evaluated once, into temporaries, as CPython does.
        obj = self.visit(target.value)
        out, tobj = [], self.temp(target)
        out.append(_loc(ast.Assign(targets=[self.temp_store(tobj)], value=obj), node))
        if isinstance(target, ast.Subscript):
            tidx = self.temp(target)
            out.append(_loc(ast.Assign(targets=[self.temp_store(tidx)], value=self._index(target.slice)), node))
            load = self._getitem(target, _name(tobj.id, target), _name(tidx.id, target))
            new = self.op_call(node, "augop", symbol, fn, [load, value])
            store = ast.Subscript(value=_name(tobj.id, target), slice=_name(tidx.id, target), ctx=ast.Store())
        else:
            attr = _mangle(target.attr, self.classes[-1])
            load = self._getattr(target, _name(tobj.id, target), target.attr)
            new = self.op_call(node, "augop", symbol, fn, [load, value])
            store = ast.Attribute(value=_name(tobj.id, target), attr=target.attr, ctx=ast.Store())
        if self._intercepts_store(target):
            store.ctx = ast.Load()
            out.append(_loc(ast.Expr(value=self._store(_loc(store, target), new)), node))
        else:
            out.append(_loc(ast.Assign(targets=[_loc(store, target)], value=new), node))
        return out

    def visit_Delete(self, node):
        out = []
        for target in node.targets:
            if isinstance(target, ast.Subscript) and "delitem" in self.profile:
                call = self.op_call(target, "delitem", "del []", operator.delitem,
                                    [self.visit(target.value), self._index(target.slice)])
                out.append(_loc(ast.Expr(value=call), target))
            elif isinstance(target, ast.Attribute) and "delattr" in self.profile:
                attr = _mangle(target.attr, self.classes[-1])
                call = self.op_call(target, "delattr", f"delattr .{target.attr}", delattr,
                                    [self.visit(target.value), _const(attr, target)])
                out.append(_loc(ast.Expr(value=call), target))
            else:
                out.append(_loc(ast.Delete(targets=[self.visit(target)]), node))
        return out

    def visit_AnnAssign(self, node):  # the annotation is left as written
        if node.value is not None:
            node.value = self.visit(node.value)
        if not isinstance(node.target, ast.Name):
            node.target = self.generic_visit(node.target)
        return node

    def visit_arg(self, node):  # annotations are left as written
        return node

    # -- expressions -------------------------------------------------------------------------------------
    def visit_Call(self, node):
        func = node.func
        if self._inspects_frame(node):
            node.args = [self.visit(a) for a in node.args]
            node.keywords = [self.visit(k) for k in node.keywords]
            if isinstance(func, ast.Name) and func.id in ("locals", "vars", "dir"):
                hide = _name(self.operator_name(ops.hide_helpers), node)
                return _loc(ast.Call(func=hide, args=[node], keywords=[]), node)
            if isinstance(func, ast.Name) and func.id in ("eval", "exec") and node.args and "call" in self.profile:
                # the text it runs, a call of `ops.source_text` the context sees (`eval(repr(x))`)
                text = node.args[0]
                sid = self.new_site(text, "call", "source_text")
                callee = ast.Call(func=_name(CALL, text), args=[_const(sid, text),
                                                                _name(self.operator_name(ops.source_text), text)],
                                  keywords=[])
                node.args[0] = _loc(ast.Call(func=_loc(callee, text), args=[text], keywords=[]), text)
            return node
        if isinstance(func, ast.Name) and func.id == "super" and not node.args and not node.keywords:
            node.args = [_name("__class__", node), _loc(copy.deepcopy(self.first_args[-1]), node)]
        op = self.text_of(func) if "call" in self.profile else ""
        node.func = self.visit(func)
        node.args = [self.visit(a) for a in node.args]
        node.keywords = [self.visit(k) for k in node.keywords]
        if "call" not in self.profile:
            return node
        sid = self.new_site(node, "call", op)
        node.func = _loc(ast.Call(func=_name(CALL, node), args=[_const(sid, node), node.func], keywords=[]), node)
        return node

    def _inspects_frame(self, node) -> bool:
        func, nargs = node.func, len(node.args) + len(node.keywords)
        if isinstance(func, ast.Name):
            name = func.id
            if name in ("locals", "globals", "breakpoint"):
                return True
            if name in ("vars", "dir"):
                return nargs == 0
            if name in ("eval", "exec"):
                return nargs < 2
            if name == "super":  # zero-argument super() without a first argument to pass: left alone
                return nargs == 0 and self.first_args[-1] is None
            return False
        return isinstance(func, ast.Attribute) and func.attr in FRAME_ATTRS

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if "binop" not in self.profile:
            return node
        symbol, fn = ops.BINOPS[type(node.op)]
        return self.op_call(node, "binop", symbol, fn, [node.left, node.right])

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if "unaryop" not in self.profile or isinstance(node.operand, ast.Constant):
            return node  # `-1` is a literal
        symbol, fn = ops.UNARYOPS[type(node.op)]
        return self.op_call(node, "unaryop", symbol, fn, [node.operand])

    def visit_Compare(self, node):
        self.generic_visit(node)
        if "compare" not in self.profile:
            return node
        if len(node.ops) == 1:
            symbol, fn = ops.CMPOPS[type(node.ops[0])]
            return self.op_call(node, "compare", symbol, fn, [node.left, node.comparators[0]])
        if not self.temps_ok[-1]:
            return node
        # a < b < c: each operand once, short-circuit kept: lt(a, (t := b)) and lt(t, c)
        calls, left = [], node.left
        for i, (cmp, right) in enumerate(zip(node.ops, node.comparators)):
            if i + 1 < len(node.ops):
                tmp = self.temp(right)
                operand = _loc(ast.NamedExpr(target=self.temp_store(tmp), value=right), right)
            else:
                tmp, operand = None, right
            symbol, fn = ops.CMPOPS[type(cmp)]
            calls.append(self.op_call(node, "compare", symbol, fn, [left, operand]))
            left = tmp
        return _loc(ast.BoolOp(op=ast.And(), values=calls), node)

    def visit_Subscript(self, node):
        if not isinstance(node.ctx, ast.Load) or "getitem" not in self.profile:
            return self.generic_visit(node)
        return self._getitem(node, self.visit(node.value), self._index(node.slice))

    def _getitem(self, node, obj, index):
        if "getitem" not in self.profile:
            return _loc(ast.Subscript(value=obj, slice=index, ctx=ast.Load()), node)
        return self.op_call(node, "getitem", "[]", operator.getitem, [obj, index])

    def _index(self, index):
        """The index expression of a subscript as a value (slices become `slice(...)` calls)."""
        if isinstance(index, ast.Slice):
            parts = [self.visit(p) if p is not None else _const(None, index)
                     for p in (index.lower, index.upper, index.step)]
            call = ast.Call(func=_name(self.operator_name(slice), index), args=parts, keywords=[])
            return _loc(call, index)
        if isinstance(index, ast.Tuple) and any(isinstance(e, ast.Slice) for e in index.elts):
            index.elts = [self._index(e) for e in index.elts]
            return index
        if isinstance(index, ast.Tuple):  # `a[i, j]`: index syntax, not a container display
            index.elts = [self.visit(e) for e in index.elts]
            return index
        return self.visit(index)

    def visit_Attribute(self, node):
        if node.attr == "__closure__" and isinstance(node.ctx, ast.Load):  # (the source's cells, not the twin's)
            call = ast.Call(func=_name(self.operator_name(ops.source_closure), node), args=[self.visit(node.value)],
                            keywords=[])
            return _loc(call, node)
        if not isinstance(node.ctx, ast.Load) or "getattr" not in self.profile:
            return self.generic_visit(node)
        return self._getattr(node, self.visit(node.value), node.attr)

    def _getattr(self, node, obj, attr: str):
        if "getattr" not in self.profile:
            return _loc(ast.Attribute(value=obj, attr=attr, ctx=ast.Load()), node)
        mangled = _mangle(attr, self.classes[-1])
        return self.op_call(node, "getattr", f"getattr .{attr}", getattr, [obj, _const(mangled, node)])

    def _visit_display(self, node):
        self.generic_visit(node)
        if "build" not in self.profile or not isinstance(getattr(node, "ctx", ast.Load()), ast.Load):
            return node
        op, fn = ops.BUILDERS[type(node)]
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):  # `{**m}`: left as written
                return node
            args = [x for kv in zip(node.keys, node.values) for x in kv]
        else:
            args = node.elts
        return self.op_call(node, "build", op, fn, args)

    visit_List = visit_Tuple = visit_Set = visit_Dict = _visit_display

    def _visit_comprehension(self, node):
        for i, gen in enumerate(node.generators):
            self.temps_ok.append(False)  # no walrus in a comprehension's iterable
            gen.iter = self.visit(gen.iter)
            self.temps_ok.pop()
            if "iter" in self.profile and not gen.is_async:
                gen.iter = self.op_call(gen.iter, "iter", "iter", iter, [gen.iter])
            gen.ifs = [self.truth(self.visit(c)) for c in gen.ifs]
        for name in ("elt", "key", "value"):
            if hasattr(node, name):
                setattr(node, name, self.visit(getattr(node, name)))
        return node

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _visit_comprehension
