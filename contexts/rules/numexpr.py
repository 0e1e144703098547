"""numexpr's `evaluate`: an expression string compiled to numexpr's virtual machine (C), given as what it
computes — the expression run on numpy's operators and functions (`evaluate_in_numpy`), which every engine
differentiates as the Python code it is (`Rule.stand_in`). catsim's item information, pandas' `eval` with the
numexpr engine and many simulation codes compute through it; without this it was refused as a C function.

numexpr's language is numpy's on these operations: arithmetic, `**`, comparisons, `&`, `|`, `~` on booleans,
`where`, and its functions (`sin`, `exp`, `arctan2`, `abs`, `sqrt`, ...), `sum` and `prod` with an axis. A
name not in `local_dict`/`global_dict` was numexpr's read of its caller's frame: refused, with the fix.

Loaded when numexpr is first imported (`leaves.DOMAINS`).
"""

from __future__ import annotations

import ast
import operator

import numexpr
import numpy as np

from .registry import NoRuleError, registry

__all__ = ["evaluate_in_numpy"]

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.Pow: operator.pow, ast.Mod: operator.mod, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
           ast.LShift: operator.lshift, ast.RShift: operator.rshift}
_COMPARE = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
            ast.Eq: operator.eq, ast.NotEq: operator.ne}
# numexpr's functions, by the numpy function computing the same
_FUNCTIONS = {name: getattr(np, name) for name in (
    "where", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh", "arcsinh",
    "arccosh", "arctanh", "log", "log10", "log1p", "log2", "exp", "expm1", "sqrt", "abs", "conj", "real", "imag",
    "floor", "ceil", "round", "sign", "fmod", "isnan", "isinf", "isfinite", "sum", "prod", "maximum", "minimum")}
_FUNCTIONS["complex"] = lambda re, im: re + 1j * im
_FUNCTIONS["contains"] = np.char.find  # (strings: no derivative)
_CONSTANTS = {"True": True, "False": False}


def evaluate_in_numpy(ex, local_dict=None, global_dict=None, out=None, order="K", casting="safe",
                      _frame_depth=3, sanitize=None, **kwargs):
    """`numexpr.evaluate(ex, local_dict, global_dict, out=...)` computed by numpy, as Python code."""
    names = {}
    if global_dict is not None:
        names.update(global_dict)
    if local_dict is not None:
        names.update(local_dict)
    tree = ast.parse(ex.strip(), mode="eval")
    y = _run(tree.body, names, ex)
    if out is not None:
        out[...] = y
        return out
    return y


def _run(node, names, ex):
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)](_run(node.left, names, ex), _run(node.right, names, ex))
    if isinstance(node, ast.UnaryOp):
        v = _run(node.operand, names, ex)
        if isinstance(node.op, ast.USub):
            return -v
        if isinstance(node.op, ast.UAdd):
            return v
        return np.logical_not(v)  # (`~`: numexpr's not, on booleans)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        return _COMPARE[type(node.ops[0])](_run(node.left, names, ex), _run(node.comparators[0], names, ex))
    if isinstance(node, ast.Name):
        if node.id in names:
            return names[node.id]
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        raise NoRuleError(f"numexpr.evaluate({ex!r}) reads {node.id} from its caller's frame, which the engines do "
                          "not hand it", fix="pass the variables it reads: `numexpr.evaluate(ex, local_dict={...})`")
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS:
        args = [_run(a, names, ex) for a in node.args]
        kw = {k.arg: _run(k.value, names, ex) for k in node.keywords}
        return _FUNCTIONS[node.func.id](*args, **kw)
    raise NoRuleError(f"numexpr.evaluate({ex!r}): no numpy form for {ast.unparse(node)}",
                      fix="compute the expression with numpy's operators and functions")


registry.set(numexpr.evaluate, stand_in=evaluate_in_numpy)
