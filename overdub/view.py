"""The static view of a patched function: its sites in basic blocks, each with operands and destination.

Printed IRTools-style, one line per site in evaluation order, numbered as the twin numbers them:

    block 1: if (line 14)
      %3 = call math.sqrt(@2)  -> y  # file.py:14
      %4 = add(y, 1.0)  -> return  # file.py:15

`@n` is the value of site n; other operands are locals, closure cells (`cell x`), globals (`global x`) or
constants. The destination is another site, a variable, `return`, `branch`, `discard`, ...
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from .sites import CALL, KINDS, OP, Instrumented

__all__ = ["Operand", "StaticView", "view", "show"]


@dataclass(frozen=True)
class Operand:
    """One operand of a site: kind is 'site', 'local', 'closure', 'global', 'const' or 'expr'."""

    kind: str
    text: str

    def __str__(self) -> str:
        prefix = {"closure": "cell ", "global": "global "}.get(self.kind, "")
        return prefix + self.text


@dataclass
class StaticView:
    """Sites grouped in blocks, with their operands and destinations (see the module docstring)."""

    function: str
    filename: str
    profile: frozenset
    source: str
    blocks: tuple
    sites: tuple
    operands: dict[int, tuple[Operand, ...]] = field(default_factory=dict)
    callee: dict[int, Operand] = field(default_factory=dict)
    destination: dict[int, str] = field(default_factory=dict)

    def line(self, sid: int) -> str:
        """`%sid = op(operands)  -> destination  # file:line` for one site."""
        site = self.sites[sid]
        args = ", ".join(map(str, self.operands.get(sid, ())))
        if site.kind == "call":
            head = f"call {self.callee[sid]}({args})"
        else:
            head = f"{getattr(site.fn, '__name__', site.op)}({args})"
        short = site.filename.rsplit("/", 1)[-1]
        return f"%{sid} = {head}  -> {self.destination.get(sid, '?')}  # {short}:{site.lineno}"

    def table(self) -> str:
        kinds = "every kind" if self.profile == KINDS else ", ".join(sorted(self.profile))
        lines = [f"{self.function} ({self.filename}), intercepting {kinds}"]
        by_block: dict[int, list] = {}
        for site in self.sites:
            by_block.setdefault(site.block, []).append(site.id)
        for block in self.blocks:
            where = "" if block.function == self.function else f" in {block.function}"
            lines.append(f"block {block.id}: {block.label} (line {block.lineno}){where}")
            lines.extend("  " + self.line(sid) for sid in by_block.get(block.id, ()))
        return "\n".join(lines)

    def __str__(self) -> str:
        return f"{self.source}\n\n{self.table()}"


def view(fn, intercepts=None) -> StaticView:
    """The static view of fn patched for `intercepts` (default: every kind); cached with the twin.

    >>> import overdub
    >>> def f(x):
    ...     return abs(x) + 1
    >>> print(overdub.view(f, {"call", "binop"}).table().splitlines()[2].split("  #")[0])
      %0 = call global abs(x)  -> @1
    """
    from .patch import instrumented
    inst = instrumented(fn, KINDS if intercepts is None else intercepts)
    if inst.view is None:
        inst.view = _build(inst)
    return inst.view


def show(fn, intercepts=None) -> str:
    """The patched source of fn followed by its block/site table (default: every kind intercepted).

    >>> import overdub
    >>> def f(x):
    ...     return abs(x) + 1
    >>> print(overdub.show(f, {"call"}).splitlines()[1].strip())
    return __od_call__(0, abs)(x) + 1
    """
    return str(view(fn, intercepts))


# -- building the view -----------------------------------------------------------------------------

def _site_of(node) -> int | None:
    """The site id when node is `__od_call__(sid, f)(...)` / `__od_op__(sid, fn)(...)`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Call):
        inner = node.func
        if isinstance(inner.func, ast.Name) and inner.func.id in (CALL, OP) and inner.args:
            first = inner.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, int):
                return first.value
    return None


def _is_temp(name: str) -> bool:
    return name.startswith("__od_t") and name.endswith("__")


def _build(inst: Instrumented) -> StaticView:
    tree = inst.tree
    code = inst.code
    scopes = _Scopes(code)
    scopes.visit(tree)
    parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    temps = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and _is_temp(node.targets[0].id):
            temps[node.targets[0].id] = node.value
        elif isinstance(node, ast.NamedExpr) and _is_temp(node.target.id):
            temps[node.target.id] = node.value
    result = StaticView(code.co_qualname, code.co_filename, inst.profile, ast.unparse(tree), inst.blocks,
                        inst.sites)
    describe = _Describer(scopes, temps)
    for node in ast.walk(tree):
        sid = _site_of(node)
        if sid is None:
            continue
        result.operands[sid] = tuple(describe(a, node) for a in node.args) + tuple(
            Operand(o.kind, f"{k.arg}={o.text}" if k.arg else f"**{o.text}")
            for k in node.keywords for o in [describe(k.value, node)])
        result.callee[sid] = describe(node.func.args[1], node)
        result.destination[sid] = _destination(node, parents)
    return result


class _Describer:
    """Operand descriptions: sites as @n, temporaries as what was stored in them, names by scope."""

    def __init__(self, scopes: "_Scopes", temps: dict):
        self.scopes, self.temps = scopes, temps

    def __call__(self, expr, at) -> Operand:
        sid = _site_of(expr)
        if sid is not None:
            return Operand("site", f"@{sid}")
        if isinstance(expr, ast.NamedExpr):
            return self(expr.value, at)
        if isinstance(expr, ast.Starred):
            inner = self(expr.value, at)
            return Operand(inner.kind, "*" + str(inner))
        if isinstance(expr, ast.Name):
            if expr.id in self.temps:
                return self(self.temps[expr.id], at)
            return Operand(self.scopes.kind_of(expr), expr.id)
        if isinstance(expr, ast.Attribute):
            base = self(expr.value, at)
            if base.kind != "expr":
                return Operand(base.kind, f"{base.text}.{expr.attr}")
        if isinstance(expr, ast.Constant):
            text = repr(expr.value)
            return Operand("const", text if len(text) <= 30 else text[:27] + "...")
        text = ast.unparse(expr)
        return Operand("expr", f"({text if len(text) <= 40 else text[:37] + '...'})")


def _destination(node, parents) -> str:
    child, parent = node, parents.get(node)
    while parent is not None:
        sid = _site_of(parent)
        if sid is not None and child is not parent.func:
            return f"@{sid}"
        if sid is not None:  # node computes the callee of parent
            return f"@{sid} (callee)"
        if isinstance(parent, ast.NamedExpr):
            if not _is_temp(parent.target.id):
                return parent.target.id
        elif isinstance(parent, ast.Assign):
            targets = [t for t in parent.targets]
            if len(targets) == 1 and isinstance(targets[0], ast.Name) and _is_temp(targets[0].id):
                return "temporary"
            return " = ".join(ast.unparse(t) for t in targets)
        elif isinstance(parent, (ast.If, ast.While, ast.IfExp)) and child is parent.test:
            return "branch"
        elif isinstance(parent, ast.Return):
            return "return"
        elif isinstance(parent, ast.Expr):
            return "discard"
        elif isinstance(parent, (ast.For, ast.comprehension)) and child is parent.iter:
            return "loop"
        elif isinstance(parent, (ast.Yield, ast.YieldFrom, ast.Await, ast.Raise, ast.Assert)):
            return type(parent).__name__.lower()
        elif isinstance(parent, ast.stmt):
            return type(parent).__name__.lower()
        child, parent = parent, parents.get(parent)
    return "?"


class _Scopes(ast.NodeVisitor):
    """Which names each function scope binds; `kind_of(name_node)` classifies a use."""

    _SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)

    def __init__(self, code):
        self.code = code
        self.bound: dict[ast.AST, set] = {}
        self.declared: dict[ast.AST, dict] = {}
        self.enclosing: dict[ast.AST, list] = {}  # name node -> scopes from innermost out
        self.stack: list[ast.AST] = []

    def visit(self, node):
        is_scope = isinstance(node, self._SCOPES)
        if is_scope:
            if self.stack and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.bound[self.stack[-1]].add(node.name)
            self.stack.append(node)
            args = node.args
            self.bound[node] = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs
                                + [args.vararg, args.kwarg] if a is not None}
            self.declared[node] = {}
        elif isinstance(node, ast.Name) and self.stack:
            self.enclosing[node] = list(reversed(self.stack))
            if not isinstance(node.ctx, ast.Load):
                self.bound[self.stack[-1]].add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and self.stack:
            for name in node.names:
                self.declared[self.stack[-1]][name] = type(node).__name__.lower()
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and self.stack:
            for alias in node.names:
                self.bound[self.stack[-1]].add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name and self.stack:
            self.bound[self.stack[-1]].add(node.name)
        elif isinstance(node, ast.ClassDef) and self.stack:
            self.bound[self.stack[-1]].add(node.name)
        self.generic_visit(node)
        if is_scope:
            self.stack.pop()

    def kind_of(self, name: ast.Name) -> str:
        scopes = self.enclosing.get(name, [])
        for depth, scope in enumerate(scopes):
            declared = self.declared[scope].get(name.id)
            if declared == "global":
                return "global"
            if declared == "nonlocal":
                return "closure"
            if name.id in self.bound[scope]:
                return "local" if depth == 0 else "closure"
        if name.id in self.code.co_freevars:
            return "closure"
        return "global"
