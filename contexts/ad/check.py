"""`ADContext(check=True)`: every rule checked against finite differences the first time a block uses it.

The check is an observer of reverse mode (`contexts.ad.observe`): at the adjoint of each primitive
operation (a registered rule, a custom adjoint, a binary operator) it compares the rule's cotangents with
a central difference of <dy, f(args)> at the actual operands and cotangent, along a random direction per
argument (one difference per argument, whatever its size). Points where the operation has a kink (its
one-sided differences disagree) or is singular (a difference is not finite) are skipped: they cannot be
verified there.

Invariant: checking changes no value and runs only primitives that have no side effects on their
arguments (rules that change arrays in place are not re-run); a failed check raises `RuleCheckError`.
"""

from __future__ import annotations

import numpy as np

from overdub.errors import OverdubError

from ..rules.check import _inner, trusted_slope

__all__ = ["RuleCheck", "RuleCheckError"]

_STEP = 1e-3
_RTOL, _ATOL = 1e-4, 1e-8


from ..forward.check import RuleCheckError, _real  # noqa: E402  (one error for the pullbacks and tangents checked)


class RuleCheck:
    """The observer of one `ADContext(check=True)` block: which rules it has checked already."""

    def __init__(self) -> None:
        self.checked: set = set()
        self.rng = np.random.default_rng(0)

    def observe_derivative(self, op, run):
        result = run()
        if op.adjoint and not op.recursed and op.fn is not None and op.cotangent is not None:
            from .runtime import _rule_of
            rule, _ = _rule_of(op.fn)
            key = (op.site.kind, op.site.op) if rule is None else id(rule)  # (registered rules live on)
            if key not in self.checked and not (rule is not None and (rule.mutating or rule.inplace)) \
                    and "out" not in op.kwargs:
                self.checked.add(key)
                self._check(op, rule, result)
        return result

    def _check(self, op, rule, cotangents) -> None:
        for i, (x, g) in enumerate(zip(op.args, cotangents)):
            if g is None or not _real(x):
                continue
            v = self.rng.standard_normal(np.shape(x))
            v = float(v) if np.ndim(x) == 0 else v
            scale = max(1.0, float(np.max(np.abs(x))) if np.size(x) else 1.0)
            want = _directional(op, i, x, v, _STEP * scale)
            if want is None:
                continue
            try:
                got = _inner(g, v)
            except (TypeError, ValueError):
                continue
            if abs(got - want) > _RTOL * max(abs(got), abs(want)) + _ATOL:
                name = _rule_name(op, rule)
                if np.ndim(x) == 0:
                    values = f"the rule gives {got / v:.8g}, finite differences {want / v:.8g}"
                else:
                    values = (f"along a random direction v the rule's cotangent gives <g, v> = {got:.8g}, "
                              f"finite differences {want:.8g} (rule's cotangent {_short(g)})")
                raise RuleCheckError(
                    f"{name} disagrees with finite differences at this line: for argument {i}, {values} "
                    f"(operands {', '.join(_short(a) for a in op.args)}, cotangent dy = {_short(op.cotangent)})",
                    where=str(op.site),
                    fix="correct the rule's pullback (check it alone with `contexts.rules.check_rule`)")


def _directional(op, i, x, v, h):
    """d/dt <dy, f(..., x + t v, ...)> at t = 0 by central differences; None where it cannot be trusted
    (a kink: one-sided differences disagree; a singularity; an error)."""
    def at(t):
        args = list(op.args)
        args[i] = x + t * v
        return _inner(op.cotangent, op.fn(*args, **op.kwargs))

    return trusted_slope(at, h)


def _rule_name(op, rule) -> str:
    if rule is None:
        return f"the adjoint of `{op.site.op}`"
    made = rule.rrule or rule.adjoint
    name = getattr(made, "__qualname__", None) or repr(made)
    return f"the rule for {op.site.op} ({name})"


def _short(value) -> str:
    text = " ".join(repr(value).split())
    return text if len(text) <= 60 else text[:57] + "..."
