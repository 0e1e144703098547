"""The root a bracketing loop finds, differentiated as a root (by the implicit function theorem):

    while hi - lo > tol:                     lo = root_of(lo, key, lo, hi, (x, c))
        mid = (lo + hi) / 2            ->    hi = root_of(hi, key, lo, hi, (x, c))
        if g(mid, x) > c: hi = mid           (after the loop; `contexts.lowered.implicit` writes it)
        else: lo = mid

`root_of(end, key, lo, hi, args)` is `end` itself. Its derivative is the root's: with h the loop's test as a
difference, h(m, *args) = g(m, x) - c (`ROOTS[key]`), h(r, θ) = 0 at the root r, so

    dr/dθ = -(∂h/∂θ) / (∂h/∂m)

taken at the point where the line through (lo, h(lo)) and (hi, h(hi)) crosses zero (within the bracket; a
bracket of width w puts it within O(w²) of the root where h is smooth). The bracket's ends and the end itself
have no derivative: the code as written differentiates a fixed mix of the bracket's starting ends.

Refused, never a number (`NoDerivative`), where the bracket does not hold a simple root that h crosses
continuously: h of one sign at both ends (the loop ran to an end of a bracket that held no root), a bracket
wider than a thousandth of its ends (an iteration cap or a loose tolerance: its result is not the root), h
not nearly linear across it (a jump of h: a step function's crossing, whose location moves by a rule of its
own), ∂h/∂m zero or not finite.

Rules sit below the modes: reverse mode hands `root_adjoint` its `pullback_full`, forward mode
`root_duals` its helpers (`contexts.ad.callbacks`, `contexts.forward.callbacks`).
"""

from __future__ import annotations

import numpy as np

from .registry import NoDerivative, registry
from .sparsity_specs import DENSE

__all__ = ["root_of", "bracket_value", "ROOTS", "Root", "root_adjoint", "root_duals", "NAME", "PLAIN"]

NAME = "__overdub_implicit_root__"  # what the rewritten loop calls (a builtin: no user module is touched)
PLAIN = "__overdub_bracket_value__"  # what it reads its inputs through inside the loop


class Root:
    """One loop's h (its test as a difference, the probe first: `h(mid, *args)`), its function's name and
    the test's line."""

    __slots__ = ("h", "where", "line", "qualname", "loop")

    def __init__(self, h, filename: str, line: int, qualname: str, loop: str = "bisection"):
        self.h, self.where, self.line, self.qualname, self.loop = h, f"{filename}:{line}", line, qualname, loop


ROOTS: dict[int, Root] = {}


def root_of(end, key, lo, hi, args, ends=()):
    """`end`, a bracket's end (or its probe) after the loop narrowing it: its derivative is the root's. `ends`:
    the bracket's ends as the loop began, with their derivatives (the loop itself runs on plain values): where
    they carry one and args none, the root does not move, once the checks find it is one."""
    return end


def bracket_value(x):
    """x, without derivative: what the rewritten loop computes with (its derivative is discarded at its end;
    its tests then compare plain numbers, no equality guard taking a bisection's approach to the root for a
    branch boundary). Forward mode's duals are stripped by the rule's frule and `impl`."""
    return x


registry.nondifferentiable(bracket_value)


def _refuse(root: Root, why: str) -> NoDerivative:
    return NoDerivative(
        f"the {root.loop} in {root.qualname} ({root.where}) has no root's derivative here: {why}",
        fix="narrow the bracket to a simple root (a tighter tolerance, more iterations), or give the function "
            "its derivative (`@contexts.custom_adjoint`)")


def _number(v) -> float | None:
    try:
        v = float(np.asarray(v).reshape(()))
    except (TypeError, ValueError):
        return None
    return v if np.isfinite(v) else None


def crossing(root: Root, lo, hi, h_lo, h_hi):
    """Where the line through the bracket's ends' values of h crosses zero (a plain float), after the checks
    that the bracket holds a root h crosses continuously."""
    a, b, fa, fb = _number(lo), _number(hi), _number(h_lo), _number(h_hi)
    if None in (a, b, fa, fb):
        raise _refuse(root, f"the bracket [{lo!r}, {hi!r}] or h there ({h_lo!r}, {h_hi!r}) is not a finite number")
    if fa * fb > 0 and a != b:  # (a bracket narrowed to one number: the sign is checked about it, `check_linear`)
        raise _refuse(root, f"the loop's test has the same sign at both ends of its bracket [{a!r}, {b!r}] (no root "
                            "between them)")
    width = abs(b - a)
    if width > 1e-3 * max(abs(a), abs(b)) and width > 1e-10:
        raise _refuse(root, f"its bracket [{a!r}, {b!r}] is wide (the loop stopped before it narrowed: its result "
                            "is not the root)")
    if fa == fb:
        return a
    return a - fa * (b - a) / (fb - fa)


def _integral(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def indexes(lo, hi, evaluate) -> bool:
    """The bracket is of indices its test reads a table by (`xa[k] > x`: a table's search, its result an index
    that selects entries, no derivative; differentiated after it, as interpolation): integer ends, and the test
    cannot be evaluated between them. An index the test computes with (`g(k * h) < 0`, a grid) is a root's."""
    if not (_integral(lo) and _integral(hi)):
        return False
    try:
        evaluate(lo + 0.5)
    except (TypeError, IndexError):
        return True
    return False


def spread(lo, hi) -> float:
    """The half-width of the interval about the crossing on which h must change as its slope says: the
    bracket's width, at least 1e-7 of its ends (a bracket narrowed to a few ulps would leave only h's rounding
    to compare)."""
    a, b = _number(lo), _number(hi)
    return max(abs(b - a), 1e-7 * max(abs(a), abs(b)), 1e-12)


def check_linear(root: Root, at, d, h_below, h_above, slope) -> None:
    """h changes sign across [at - d, at + d] (which holds the bracket), by what its slope says: a jump of h (a
    step crossing the target) or a kink there (two slopes: no derivative of the root) does not."""
    s = _number(slope)
    if s is None or s == 0:
        raise _refuse(root, f"∂h/∂m at the root is {slope!r} (not a simple root)")
    fa, fb = _number(h_below), _number(h_above)
    if fa is None or fb is None:
        raise _refuse(root, f"h beside the root ({h_below!r}, {h_above!r}) is not a finite number")
    if fa * fb > 0:
        raise _refuse(root, f"the loop's test has the same sign on both sides of its result {at!r} (no root there: "
                            "the loop ran to an end of its bracket)")
    change, linear = fb - fa, 2 * d * s
    if abs(change - linear) > 1e-3 * abs(linear):
        raise _refuse(root, f"h changes by {change!r} about the root where its slope there gives {linear!r} (a jump "
                            "or a kink of the test, not a root it crosses smoothly)")


def locate(root: Root, end, lo, hi, value, slope_at):
    """The point the root's derivative is taken at, after the checks (a plain float): `end` itself where the test's
    value is exactly 0 there (a root hit, `if fm == 0: return mid`, whatever the bracket), else the crossing of the
    bracket; `value(t)` is h's plain value at t, `slope_at(t)` its slope (returned with it). One sequence for both
    modes."""
    if value(end) == 0:
        lo = hi = at = end
    else:
        at = crossing(root, lo, hi, value(lo), value(hi))
    d = spread(lo, hi)
    slope = slope_at(at)
    check_linear(root, at, d, value(at - d), value(at + d), slope)
    return at, slope


def root_adjoint(pullback_full, primal):
    """root_of's adjoint on reverse mode's `pullback_full`: the cotangents of `args` are those of
    h(r*, *args) weighted by −dy/(∂h/∂m)(r*), r* the crossing of the bracket."""
    def adjoint(dout, out, end, key, lo, hi, args, ends=()):
        if dout is None or isinstance(dout, (int, float)) and dout == 0:
            return None, None, None, None, None, None
        root = ROOTS[key]

        def value(t):  # (h's value alone: run natively, no pullback recorded)
            return primal(root.h(t, *args))

        def slope_at(t):
            return primal(pullback_full(root.h, t, *args)[1](1.0)[1][0])
        if indexes(primal(lo), primal(hi), value):
            return None, None, None, None, None, None
        at, _ = locate(root, primal(end), primal(lo), primal(hi), value, slope_at)
        if type(out) is not float and not isinstance(out, (np.floating, int)):  # (forward over reverse: a dual
            at = out + (at - primal(out))  # end: the crossing moves with it)
        _, back = pullback_full(root.h, at, *args)
        _, (slope, *_) = back(1.0)
        _, back = pullback_full(root.h, at, *args)
        _, dargs = back(-dout / slope)
        return None, None, None, None, tuple(dargs[1:]), None
    return adjoint


def root_duals(fw):
    """root_of's form on duals, on forward mode's helpers `fw` (`run_inside`, `dual_free`, `primal`,
    `is_dual`, `slope_at`): the end's primal, its tangent −(∂h/∂θ·θ̇)/(∂h/∂m) at the crossing r*, the first
    the tangent of h(r*, *args) (r* plain), the second h's derivative in m there."""
    def run(end, key, lo, hi, args, ends=()):
        if fw.dual_free(args) and fw.dual_free(ends):
            return fw.primal(end)
        root = ROOTS[key]

        def g(t):
            return fw.run_inside(root.h, (t, *args), {})
        a, b = fw.primal(lo), fw.primal(hi)
        if indexes(a, b, g):
            return fw.primal(end)
        at, slope = locate(root, fw.primal(end), a, b, lambda t: fw.primal(g(t)), lambda t: fw.slope_at(g, t))
        y = g(at)
        if not fw.is_dual(y):
            if fw.dual_free(y):  # h does not depend on the inputs: nor does the root (a bracket moved with them)
                return fw.primal(end)
            raise _refuse(root, f"its test gave a {type(y).__name__} holding perturbed values, not a number")
        if not (fw.dual_free(y.primal) and fw.dual_free(y.tangent)) or np.size(y.primal) != 1:
            raise _refuse(root, "a derivative of a derivative through it in forward mode (differentiate once, or "
                                "take the outer derivative in reverse mode)")
        t = np.asarray(y.tangent, dtype=float)
        tangent = -(float(t) if t.ndim == 0 else t.reshape(t.shape[:1])) / float(np.asarray(slope).reshape(()))
        return type(y)(fw.primal(end), tangent, y.tag)
    run.__name__ = run.__qualname__ = "root_of_duals"
    return run


registry.sparsity(DENSE, root_of)  # (the root depends on what the test reads: a superset, all of the inputs)
