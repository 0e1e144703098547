"""Static activity analysis: which variables of a lowered function can carry a derivative.

Invariant: a variable is active when some assignment to it may depend on an active parameter, a closure
cell, or a mutable active object (flow-insensitive, conservative fixpoint). Operations whose operands are
all inactive (loop counters, shapes, flags) are left as plain Python by the code generator and never
recorded: this is where the speed of the `loop` benchmark comes from.
"""

from __future__ import annotations

import ast
import builtins

__all__ = ["active_names", "NONDIFF_BUILTINS", "free_names", "nonlocal_writes"]

# Builtins whose result never carries a derivative (when not shadowed by a global of the module).
NONDIFF_BUILTINS = frozenset({
    "range", "len", "isinstance", "issubclass", "type", "int", "bool", "str", "repr", "print", "id", "hash",
    "hasattr", "callable", "round", "ord", "chr", "format", "bin", "hex", "oct", "any", "all", "super",
    "object", "Exception", "ValueError", "TypeError", "KeyError", "IndexError", "RuntimeError",
    "ZeroDivisionError", "StopIteration", "NotImplementedError", "AssertionError", "slice",
})


def free_names(node: ast.AST) -> set[str]:
    """Names a nested function or lambda reads from its enclosing scopes (approximate: all loads)."""
    params: set[str] = set()
    args = node.args
    for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
        if a is not None:
            params.add(a.arg)
    loads = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return loads - params


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


def _reads(e: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(e) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


class _Activity:
    def __init__(self, active: set[str], nondiff_globals: frozenset[str], locals_: set[str]):
        self.active = set(active)
        self.locals = locals_
        self.nondiff = nondiff_globals
        self.changed = True

    def mark(self, name: str) -> None:
        if name not in self.active:
            self.active.add(name)
            self.changed = True

    def value_active(self, v: ast.AST) -> bool:
        a = self.active
        if isinstance(v, ast.Name):
            return v.id in a
        if isinstance(v, ast.Constant) or isinstance(v, (ast.Compare, ast.JoinedStr)):
            return False
        if isinstance(v, ast.UnaryOp):
            return not isinstance(v.op, (ast.Not, ast.Invert)) and self.value_active(v.operand)
        if isinstance(v, ast.BinOp):
            return self.value_active(v.left) or self.value_active(v.right)
        if isinstance(v, ast.Call):
            if isinstance(v.func, ast.Name) and v.func.id in self.nondiff and v.func.id not in a:
                return False
            return any(n in a for n in _reads(v))
        if isinstance(v, (ast.Lambda, ast.FunctionDef)):
            return bool(free_names(v) & a)
        if isinstance(v, ast.Attribute):
            return self.value_active(v.value)
        if isinstance(v, ast.Subscript):
            return self.value_active(v.value)
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
                    operands = [a.value if isinstance(a, ast.Starred) else a for a in v.args]
                    operands += [k.value for k in v.keywords]
                    if isinstance(v.func, ast.Attribute):
                        operands.append(v.func.value)
                    for a in operands:
                        if isinstance(a, ast.Name) and a.id in self.locals:  # globals (modules) excluded
                            self.mark(a.id)
                for t in s.targets:
                    if isinstance(t, ast.Name):
                        if act:
                            self.mark(t.id)
                    elif isinstance(t, (ast.Attribute, ast.Subscript)) and act and isinstance(t.value, ast.Name):
                        self.mark(t.value.id)  # storing an active value into an object makes it active
            elif isinstance(s, ast.FunctionDef):
                if free_names(s) & self.active:
                    self.mark(s.name)
                    for n in nonlocal_writes(s):  # state the closure writes back
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


def active_names(fdef: ast.FunctionDef, active_inputs: set[str], globals_: dict,
                 freevars: tuple = ()) -> set[str]:
    """The active variables of a lowered function, given its active parameters and cells (`freevars`: the
    captured variables, which become active when the function stores active values into them)."""
    nondiff = frozenset(n for n in NONDIFF_BUILTINS if n not in globals_ and hasattr(builtins, n))
    locals_ = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    a = fdef.args
    locals_ |= {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if x is not None}
    act = _Activity(active_inputs, nondiff, locals_ | set(active_inputs) | set(freevars))
    while act.changed:
        act.changed = False
        act.visit(fdef.body)
    return act.active
