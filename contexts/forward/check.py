"""Forward rules checked in `ADContext(check=True)` blocks: every frule (and operator) forward mode uses
inside the block is compared, the first time, with a central difference of the primitive along the
actual incoming tangents at the actual operands (`contexts.ad.check` does the same for pullbacks).

Only plain real operands are checked (floats, float arrays; a tangent of the operand's own shape): values
of another derivative nested around (duals inside duals), chunks of directions (`jacfwd`), complex or
integer values are run unchecked. Points where the primitive has a kink or is singular are skipped.

Invariant: checking changes no value and re-runs only primitives without side effects on their
arguments; a failed check raises `RuleCheckError` naming the user's line.
"""

from __future__ import annotations

import dataclasses
import math
import operator

import numpy as np

from overdub.errors import OverdubError

from ..rules.check import _inner, trusted_slope
from ..rules.registry import registry

__all__ = ["TangentCheck", "RuleCheckError"]

_STEP, _RTOL, _ATOL = 1e-3, 1e-4, 1e-8


class RuleCheckError(OverdubError):
    """A rule's cotangent or tangent disagrees with finite differences where a checked block used it."""


def _real(x) -> bool:
    if isinstance(x, bool):
        return False
    if isinstance(x, float):
        return math.isfinite(x)
    if isinstance(x, (np.ndarray, np.floating)):
        return x.dtype.kind == "f" and bool(np.isfinite(x).all())
    return False


def _short(value) -> str:
    text = " ".join(repr(value).split())
    return text if len(text) <= 60 else text[:57] + "..."
_OPERATORS = frozenset({operator.add, operator.sub, operator.mul, operator.truediv, operator.pow,
                        operator.matmul, operator.neg})


class TangentCheck:
    """An observer (`contexts.ad.observe`) around another: `inner` sees each operation first, then the
    forward rule it used is checked (once per rule, in the set `check.checked` of the block's
    `RuleCheck`)."""

    def __init__(self, check, inner):
        self.check, self.inner = check, inner

    def observe_derivative(self, op, run):
        result = self.inner.observe_derivative(op, run)
        if op.tangents is None or op.recursed or "out" in op.kwargs or all(t is None for t in op.tangents):
            return result
        rule = None if op.fn in _OPERATORS else registry.get(op.fn)
        if rule is None and op.fn not in _OPERATORS or rule is not None and (
                rule.frule is None or rule.mutating or rule.inplace):
            return result
        key = (op.site.kind, op.site.op) if rule is None else ("frule", id(rule))
        if key in self.check.checked:
            return result
        chunked = _chunked(op)
        if chunked is None:
            return result
        self.check.checked.add(key)
        y, dy = op.split(result)
        if dy is not None:
            if chunked:  # (jacfwd's chunk of directions: the first one is checked)
                op = dataclasses.replace(op, tangents=tuple(None if t is None else t[0] for t in op.tangents))
                dy = np.asarray(dy)[0]
            self._compare(op, rule, np.asarray(y), dy)
        return result

    def _compare(self, op, rule, y, dy) -> None:
        w = self.check.rng.standard_normal(y.shape)
        w = float(w) if y.ndim == 0 else w
        scale = max([1.0] + [float(np.max(np.abs(a))) for a, t in zip(op.args, op.tangents)
                             if t is not None and np.size(a)])
        want = _directional(op, w, _STEP * scale)
        if want is None:
            return
        try:
            got = _inner(w, dy)
        except (TypeError, ValueError):
            return
        if abs(got - want) > _RTOL * max(abs(got), abs(want)) + _ATOL:
            made = None if rule is None else rule.frule
            name = (f"the tangent of `{op.site.op}`" if made is None else
                    f"the forward rule for {op.site.op} ({getattr(made, '__qualname__', None) or made!r})")
            raise RuleCheckError(
                f"{name} disagrees with finite differences at this line: along the incoming tangents "
                f"({', '.join(_short(t) for t in op.tangents)}) it gives <w, dy> = {got:.8g} for a random w, "
                f"finite differences {want:.8g} (operands {', '.join(_short(a) for a in op.args)}, "
                f"its tangent {_short(dy)})",
                where=str(op.site),
                fix="correct the rule's tangent (check it alone with `contexts.rules.check_rule`)")


def _chunked(op) -> bool | None:
    """False: real operands, each perturbed one with a tangent of its own shape; True: the tangents of a
    chunk of directions (shape (k,) + the operand's); None: not checkable."""
    if any(getattr(type(v), "_od_parts", None) is not None for v in (*op.args, *op.kwargs.values())):
        return None
    kinds = set()
    for a, t in zip(op.args, op.tangents):
        if t is None:
            continue
        if not _real(a) or not _real(t):
            return None
        if np.shape(a) == np.shape(t):
            kinds.add(False)
        elif np.shape(t)[1:] == np.shape(a):
            kinds.add(True)
        else:
            return None
    return kinds.pop() if len(kinds) == 1 else None


def _directional(op, w, h):
    """d/ds <w, f(args + s tangents)> at s = 0 by central differences; None where it cannot be trusted."""
    def at(s):
        args = [a if t is None else a + s * t for a, t in zip(op.args, op.tangents)]
        return _inner(w, op.fn(*args, **op.kwargs))

    return trusted_slope(at, h)
