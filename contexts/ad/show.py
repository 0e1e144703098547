"""Printing what reverse mode built for a function, as Zygote's `@code_adjoint` does.

The generated adjoint carries machinery a reader does not need: inlined fast paths for floats and float64
arrays beside each general rule, a six-line accumulation (`d = c if d is None else d + c`, or `acc` for
structures), guards for absent cotangents and the bookkeeping of arrays a callee changed in place.
`show_adjoint` folds it away by default and prints what the code computes, as a person would write it
(`d_x += g * t2`); `raw=True` prints the generated code itself.
"""

from __future__ import annotations

import ast
import copy
import re
from typing import Callable, Iterable

from .codegen import EVERY_ARGUMENT
from .runtime import _active_params, twin_info

__all__ = ["show_adjoint"]


def show_adjoint(f: Callable, active: Iterable[str] | None = None, raw: bool = False) -> str:
    """The recording forward twin of f and the adjoint of each of its blocks, as text.

    Each block record is `(block id, saved primal values...)`; the adjoint of block k runs when its record
    is popped in the reverse pass. Lines are the user's. `d_v` is the cotangent of variable v, `tN` the
    lowered form's temporaries, `v_old` a value saved before it was rebound, `v_new` the value a statement
    reading v bound it to, `pbN` a callee's pullback.

    >>> import math
    >>> def f(x):
    ...     return x * math.sin(x)
    >>> print(show_adjoint(f).split("block 1")[1])  # doctest: +NORMALIZE_WHITESPACE
     (lines 1-2):
        _, pb1, w1, x, t1, t2 = record
        d_t2 = dret
        d_x += d_t2 * t1
        d_t1 = x * d_t2
        _, d_args, _ = pb1(d_t1)
        d_x += d_args[0]
        d_x += d_x_in
    """
    fn = getattr(f, "__func__", f)
    if isinstance(active, str) or (active is not None and not all(isinstance(a, str) for a in active)):
        raise TypeError("show_adjoint's `active` is the names of the differentiated parameters "
                        f"(e.g. ['x']), not {active!r}")
    code = fn.__code__
    act = frozenset(active) if active is not None else _active_params(code, EVERY_ARGUMENT, 0, 0, (), all_passed=True)
    info = twin_info(fn, act)
    gen = info.generated
    tidy = (lambda text: text) if raw else _names
    out = [f"adjoint of {code.co_qualname} ({code.co_filename}:{code.co_firstlineno}), "
           f"active arguments: {', '.join(sorted(a for a in act if a in gen.params)) or '-'}",
           f"active variables: {', '.join(sorted(v for v in gen.active if not v.startswith('_od_')))}"
           + (f" (for {', '.join(sorted(gen.numbers))} passed numbers; other values: the general twin)"
              if gen.numbers else "")
           + (f" (for {', '.join(sorted(gen.sequences))} passed lists or tuples of numbers; other values: the "
              "general twin)" if gen.sequences else ""),
           "", "forward twin:", _indent(ast.unparse(gen.forward) if raw else tidy(_forward(gen.forward))), ""]
    for k in sorted(gen.blocks):
        stmts = gen.blocks[k]
        lines = sorted({s.lineno for s in stmts if hasattr(s, "lineno")})
        where = f"line {lines[0]}" if len(lines) == 1 else f"lines {lines[0]}-{lines[-1]}" if lines else ""
        out.append(f"block {k} ({where}):")
        body = stmts if raw else _fold(copy.deepcopy(stmts))
        out.append(_indent(tidy("\n".join(ast.unparse(s) for s in body) or "pass")))
    return "\n".join(out)


# -- folding the generated adjoint -------------------------------------------------------------------

def _carried_flag(s: ast.stmt) -> bool:
    """`_od_ran = None`: which fused case ran last (`codegen._carried_floats`), machinery."""
    return (type(s) is ast.Assign and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
            and s.targets[0].id == "_od_ran")


def _fold(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """A block's adjoint statements with the machinery folded away (see the module's docstring)."""
    out: list[ast.stmt] = []
    stmts = [t for s in stmts for t in (s.orelse if getattr(s, "_od_float_fused", False) else [s])]
    # (a built-in pullback's first case inline, `codegen._Gen.pulled_one`: its general statements)
    stmts = [t for s in stmts for t in ([] if getattr(s, "_od_pulled", None) else s.body
                                        if getattr(s, "_od_pulled", None) is False else [s])]
    stmts = [s for s in stmts if not _carried_flag(s)]
    stmts = [s for s in stmts if not _new_list_box(s) and not _held(s)]
    i = 0
    while i < len(stmts):
        s = stmts[i]
        nxt = stmts[i + 1] if i + 1 < len(stmts) else None
        taken = _take(s, nxt)
        if taken is not None and i + 2 < len(stmts) and isinstance(stmts[i + 2], ast.If):
            src, guarded = taken, stmts[i + 2]
            body = _fold(guarded.body)
            if _temporary(src):  # a temporary's cotangent is read once here: used by its name
                out.extend(_substitute(body, "_od_g", src))
            else:  # a variable's is taken (its cotangent starts again from zero for what came before)
                out.append(_parse(f"g, {src} = {src}, 0"))
                out.extend(_substitute(body, "_od_g", "g"))
            i += 3
            continue
        if taken is not None:  # taken and never used: a constant's cotangent (`y = 1.0`), dropped
            i += 2
            continue
        acc = _accumulation(s, nxt)
        if acc is not None:
            out.append(acc)
            i += 2
            continue
        acc = _added(s)
        if acc is not None:
            out.append(acc)
            i += 1
            continue
        if isinstance(s, ast.If):
            if _is_fast_path(s):
                inline = _fold(s.body)
                formulas = {t.targets[0].id: t.value for t in inline if isinstance(t, ast.Assign)
                            and isinstance(t.targets[0], ast.Name) and t.targets[0].id in ("_od_ga", "_od_gb")}
                if len(formulas) == len(inline):  # a binary operation's: its cotangents as they are added
                    stmts = stmts[:i + 1] + _replace(stmts[i + 1:], formulas)
                else:
                    out.extend(inline)
            elif re.fullmatch(r"_od_w\d+ is None", ast.unparse(s.test)):
                out.extend(_fold(s.body))  # (a plain call's pullback; the else: a callee's in-place changes)
            elif _is_bookkeeping(s):
                pass
            else:
                s.body, s.orelse = _fold(s.body) or [ast.Pass()], _fold(s.orelse)
                out.append(s)
        elif not _is_bookkeeping(s):
            out.append(_pullback_call(s))
        i += 1
    return out


def _take(s, nxt) -> str | None:
    """`_od_g = D` then `D = None`: the name D whose cotangent a statement's adjoint takes."""
    if (isinstance(s, ast.Assign) and _is_name(s.targets[0], "_od_g") and isinstance(s.value, ast.Name)
            and isinstance(nxt, ast.Assign) and _is_name(nxt.targets[0], s.value.id)
            and isinstance(nxt.value, ast.Constant) and nxt.value.value is None):
        return s.value.id
    return None


def _accumulation(s, nxt) -> ast.stmt | None:
    """`_od_c = E` then `if D is None: D = _od_c ... else: D = __od_acc__(D, _od_c)`: `D += E`."""
    if _added(s) is not None:
        return None  # (the one-statement form: `_fold` asks `_added`)
    if not (isinstance(s, ast.Assign) and _is_name(s.targets[0], "_od_c") and isinstance(nxt, ast.If)):
        return None
    test = nxt.test
    if not (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name)
            and isinstance(test.ops[0], ast.Is)):
        return None
    target = test.left.id
    return ast.AugAssign(target=ast.Name(target, ast.Store()), op=ast.Add(), value=_pullback_expr(s.value))


def _added(s) -> ast.stmt | None:
    """`if D is None: D = X ... else: D = __od_acc__(D, X)`: `D += X`."""
    if not (isinstance(s, ast.If) and isinstance(s.test, ast.Compare) and isinstance(s.test.left, ast.Name)
            and isinstance(s.test.ops[0], ast.Is) and len(s.body) == 1 and isinstance(s.body[0], ast.Assign)
            and len(s.orelse) == 1 and isinstance(s.orelse[0], ast.If)
            and "__od_acc__" in ast.unparse(s.orelse[0])):
        return None
    return ast.AugAssign(target=ast.Name(s.test.left.id, ast.Store()), op=ast.Add(), value=s.body[0].value)


def _replace(stmts: list[ast.stmt], formulas: dict[str, ast.expr]) -> list[ast.stmt]:
    """stmts with the names of formulas replaced by (copies of) their expressions."""
    class Replace(ast.NodeTransformer):
        def visit_Name(self, node):
            return copy.deepcopy(formulas[node.id]) if node.id in formulas else node
    return [Replace().visit(copy.deepcopy(s)) for s in stmts]


_BUILTIN_NAMES = {"__od_type__": "type", "__od_float__": "float", "__od_int__": "int", "__od_keys__": "list"}


def _builtins_named(text: str) -> str:
    """text with the generated code's own names of builtins (`__od_type__`, ...) as the builtins'."""
    return re.sub(r"__od_(?:type|float|int|keys)__", lambda m: _BUILTIN_NAMES[m.group(0)], text)


def _is_fast_path(s: ast.If) -> bool:
    """An inlined fast path: a test of types, the general rule in its `else`."""
    text = _builtins_named(ast.unparse(s.test))
    general = " ".join(ast.unparse(x) for x in s.orelse)
    return "type(" in text and "__od_" in general and "_adj__" in general


def _new_list_box(s) -> bool:
    """`if ... type(y) is list: _od_g = __od_loop_box__(...)` (`is not float` after an operator): a new list's
    or object's box read (`codegen._new_list`)."""
    test = _builtins_named(ast.unparse(s.test)) if isinstance(s, ast.If) else ""
    return (isinstance(s, ast.If) and len(s.body) == 1 and not s.orelse
            and "__od_loop_box__" in ast.unparse(s.body[0]) and (" is list" in test or " is not float" in test))


def _held(s) -> bool:
    """`if _od_g is None and _od_S.boxes: _od_g = __od_held__(...)`: an operator's result whose parts took
    cotangents by their boxes (`helpers.held`)."""
    return isinstance(s, ast.If) and len(s.body) == 1 and "__od_held__" in ast.unparse(s.body[0])


def _is_bookkeeping(s) -> bool:
    """Statements about arrays a callee changed in place (`_od_w`, `_od_S`), none for a plain call."""
    text = ast.unparse(s) if not isinstance(s, ast.If) else ast.unparse(s.test)
    return bool(re.search(r"\b_od_w\d+\b|_od_S\.", text)) and not re.search(r"\b_od_pb\d+\b", text)


def _pullback_call(s):
    if isinstance(s, ast.If) and re.fullmatch(r"_od_pb\d+ is not None", ast.unparse(s.test)):
        return s  # (reached only when the block did not fold: printed as it is)
    if isinstance(s, ast.Assign):
        s.value = _pullback_expr(s.value)
        if _is_name(s.targets[0], "_od_r"):
            s.targets = [_parse("_, d_args, _ = x").targets[0]]
    return s


def _pullback_expr(e):
    """`pb[0](pb, g, None, S)` as `pb(g)`, `_od_r[1][i]` as `d_args[i]`."""
    text = ast.unparse(e)
    text = re.sub(r"\b(_od_pb\d+)\[0\]\(\1, (.+?), None, _od_S\)", r"\1(\2)", text)
    text = re.sub(r"\b_od_r\[1\]\[(\d+)\]", r"d_args[\1]", text)
    return ast.parse(text, mode="eval").body


def _forward(fwd: ast.FunctionDef) -> str:
    """The forward twin without the bookkeeping of in-place changes."""
    fwd = copy.deepcopy(fwd)
    for node in ast.walk(fwd):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                kept = [s for s in block if not _changes_check(s)]
                kept = [t for s in kept for t in (s.orelse if _module_fast_path(s) else [s])]
                setattr(node, field, kept or [ast.Pass()])
    return ast.unparse(fwd)


def _module_fast_path(s) -> bool:
    """`if type(obj) is module: f = obj.m ... else: f, gp = __od_getattr__(obj, 'm')`: the general read
    is what the code does (`codegen`'s method call on a module held in a variable)."""
    return isinstance(s, ast.If) and re.fullmatch(r"__od_type__\(\w+\) is __od_module__", ast.unparse(s.test)) is not None


def _changes_check(s) -> bool:
    """Bookkeeping of in-place changes: `_od_c3 = ...`, `_od_w3 = ...`, and the entry's `_od_t1 = _od_t7 = None`
    (`codegen._preset`: the temporaries a view check reads by name, bound before it)."""
    return (isinstance(s, ast.Assign) and isinstance(s.targets[0], ast.Name)
            and (re.fullmatch(r"_od_(c|w)\d+", s.targets[0].id) is not None or getattr(s, "_od_preset", False)))


def _substitute(stmts, old: str, new: str) -> list[ast.stmt]:
    class Rename(ast.NodeTransformer):
        def visit_Name(self, node):
            return ast.copy_location(ast.Name(new, node.ctx), node) if node.id == old else node
    return [Rename().visit(s) for s in stmts]


def _temporary(name: str) -> bool:
    return name.startswith(("_od_d__od_t", "_od_d__od_in_")) or name == "_od_dret"


def _is_name(node, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _parse(text: str) -> ast.stmt:
    return ast.parse(text).body[0]


def _names(text: str) -> str:
    """The generated names as a reader would write them: `d_x`, `t3`, `y_old`, `pb1`, `record`."""
    text = re.sub(r"\b_od_s\d+_\d+_(\w+)", r"\1_old", text)
    text = re.sub(r"\b_od_res\d+_(\w+)", r"\1_new", text)
    text = re.sub(r"\b_od_d__od_in_(\w+)", r"d_\1_in", text)
    text = re.sub(r"\b_od_d__od_(\w+)", r"d_\1", text)
    text = re.sub(r"\b_od_in_(\w+)", r"\1_in", text)
    text = re.sub(r"\b_od_rec\b", "record", text)
    text = re.sub(r"\b_od_(d_|t|pb|w|dret|tape|ta\b|g[abd]?\b|S\b|r\b|c\b)", r"\1", text)
    text = re.sub(r"= \(([\w, ]+), 0\)$", r"= \1, 0", text, flags=re.M)
    text = re.sub(r"__od_call__\(-?\d+, ", "call(", text)
    return re.sub(r"__od_(\w+?)__", r"\1", _builtins_named(text))


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())
