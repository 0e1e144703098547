"""Branches watched while a rule samples a function at points of its own (quad's integrand at its nodes).

The modes' equality guards (`contexts.lowered.runtime`, forward mode's duals) see every comparison with a
differentiated operand, and their calls every step or kink of a C function (`PIECEWISE`: floor, sign,
abs, max, ...); while a rule has set `JUMP_WATCH`, they note here which branch each took at each point, by
site, and (forward mode) the tangent of the compared values, for the rule to find branches whose boundary
lies between two points and moves with the differentiated values (`scipy_integrate._moving_jump`). Both
modes' hooks cost one context-variable read when no rule watches.
"""

from __future__ import annotations

import contextvars
import math
import operator

import numpy as np

from .frames import is_engine

__all__ = ["JUMP_WATCH", "JumpWatch", "PIECEWISE", "watch_call", "watch_order"]

JUMP_WATCH: contextvars.ContextVar = contextvars.ContextVar("overdub_jump_watch", default=None)
"""The `JumpWatch` of the rule sampling a function now (`contexts.rules.numpy.scipy_integrate`), or None."""

_ORDERED = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
            ">=": lambda a, b: a >= b}


class JumpWatch:
    """The outcomes of the orderings on differentiated values that a function met at each point t where a
    rule ran it (`note`, from the modes' equality guards, which see every comparison with a differentiated
    operand): an ordering whose outcome differs between two points is a branch whose boundary lies
    between them and moves with the differentiated values (the integrand `1.0 if t < a else 0.0`: its
    jump moves with a). By site: (code, instruction) of the comparing frame, the user's or a library's."""

    __slots__ = ("t", "sites", "tied")

    def __init__(self):
        self.t = None  # the point being run (None: not recording)
        self.sites: dict = {}  # (code, lasti) -> (line, {t: outcome}, {t: moves})
        self.tied = False  # (the rule's: a point was run a hair off, at a tie)

    def note(self, a, b, op: str, frame) -> None:
        if frame is None or is_engine(frame.f_code.co_filename):  # (a rule's own comparison)
            return
        try:
            moves = _motion(a - b) if type(a).__name__ == "Dual" or type(b).__name__ == "Dual" else None
        except Exception:
            moves = None
        a, b = _plain(a), _plain(b)
        try:
            with np.errstate(all="ignore"):
                out = np.asarray(_ORDERED[op](a, b))
            outcome = (out.shape, out.tobytes()) if out.dtype == bool else None
        except Exception:  # (an ordering numpy cannot take: the comparison itself tells the user)
            return
        if outcome is None:
            return
        self.record((frame.f_code, frame.f_lasti), frame, outcome, moves)

    def record(self, key, where, outcome, moves=None) -> None:
        """outcome (hashable) of the branch at key, met at the point being run; `where`: a frame or a text;
        `moves`: whether the compared values' difference has a tangent there (duals: forward mode), None
        where that is not known (reverse mode's plain values): (g, the largest |ġ|), `moves`."""
        entry = self.sites.get(key)
        if entry is None:
            line = where if isinstance(where, str) else (
                f"{where.f_code.co_filename}:{where.f_lineno} in {where.f_code.co_qualname}")
            entry = self.sites[key] = (line, {}, {})
        entry[1].setdefault(self.t, outcome)
        entry[2][self.t] = moves

    def moves(self, key, lo, hi) -> bool:
        """Does the boundary of the branch at key, between lo and hi, move? Known not to (forward mode) where
        its compared values' difference g (a step's argument) has a tangent ġ there so small beside g's
        slope in t that the boundary's speed, ġ / (dg/dt), is below 10⁻⁹: `1.0 if a * (t - 0.5) > 0`,
        scipy.stats' support mask `(t - loc) / scale >= 0` in scale."""
        parts = self.sites[key][2]
        at_lo, at_hi = parts.get(lo), parts.get(hi)
        if at_lo is None or at_hi is None:
            return True
        with np.errstate(all="ignore"):
            slope = float(np.max(np.abs(at_hi[0] - at_lo[0]), initial=0.0)) / (hi - lo)
            speed = max(at_lo[1], at_hi[1]) / slope if slope > 0 else np.inf
        return not speed <= 1e-9 * max(1.0, abs(lo))

    def switches(self) -> list:
        """[(site, line, t_lo, t_hi)]: the neighbouring points (in t) between which a site's outcome
        changed (a site met at one of them only is no switch: the control flow changed elsewhere)."""
        found = []
        for key, (line, seen, _) in self.sites.items():
            ts = sorted(seen)
            for lo, hi in zip(ts, ts[1:]):
                if seen[lo] != seen[hi]:
                    found.append((key, line, lo, hi))
        return found


def watch_order(w, a, b, op: str, frame) -> None:
    """Note `a op b` (an ordering) for w, the rule's `JumpWatch` (`JUMP_WATCH.get()`, which the hooks read
    first: one context-variable read where no rule watches)."""
    if w.t is not None and op in _ORDERED:
        w.note(a, b, op, frame)


# -- functions whose value (or whose derivative) jumps where an argument crosses a point -----------------
# For each, the branch it takes at its (innermost primal) arguments: the value of a step (floor, sign,
# heaviside, the quotient of mod), the side of a kink (abs, max, clip): a jump of the value moves with
# the arguments; a kink's jump is its derivative's, which a second derivative meets (`_moving_jump`'s
# leaves by depth).

def _plain(v):
    while type(v).__name__ == "Dual":
        v = v.primal
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def _motion(v) -> tuple:
    """(v's plain values as floats, the largest |tangent| of the dual v at any depth)."""
    g = np.asarray(_plain(v), dtype=float)
    most = 0.0
    while type(v).__name__ == "Dual":
        t = np.abs(np.asarray(_plain(v.tangent), dtype=float))
        most = max(most, float(np.max(t, initial=0.0)))
        v = v.primal
    return g, most


def _arg(args, kwargs, i, name, default=None):
    return args[i] if len(args) > i else kwargs.get(name, default)


def _quotient(args, kwargs):
    a, b = _plain(_arg(args, kwargs, 0, "x1")), _plain(_arg(args, kwargs, 1, "x2"))
    return np.floor(np.divide(a, b))


def _sides(args, kwargs):
    a, b = _plain(_arg(args, kwargs, 0, "x1")), _plain(_arg(args, kwargs, 1, "x2"))
    return np.greater(a, b)


def _sign(args, kwargs):
    a = _plain(_arg(args, kwargs, 0, "x"))
    if np.iscomplexobj(a):  # (|z| and z/|z| of a complex z: smooth but at 0, pkC's `abs(complex(1, x * t))`)
        return np.not_equal(a, 0)
    return np.sign(a)


def _value(fn):
    def value(args, kwargs):
        return fn(*_plain(list(args)), **{k: _plain(v) for k, v in kwargs.items()})
    return value


def _extremum(args, kwargs):
    items = _plain(list(args[0])) if len(args) == 1 and isinstance(args[0], (list, tuple)) else _plain(list(args))
    if len(items) < 2:
        return None
    return np.argmax(items), np.argmin(items)  # (which item each of max and min takes)


def _clipped(args, kwargs):
    a = np.asarray(_plain(_arg(args, kwargs, 0, "a")))
    lo, hi = _plain(_arg(args, kwargs, 1, "a_min", kwargs.get("min"))), _plain(_arg(args, kwargs, 2, "a_max", kwargs.get("max")))
    return (np.less(a, lo) if lo is not None else False, np.greater(a, hi) if hi is not None else False)


PIECEWISE: dict = {}
for _fn in (np.floor, np.ceil, np.trunc, np.rint, np.fix, np.round, np.around, math.floor, math.ceil, math.trunc,
            round, np.argmax, np.argmin, np.argsort, np.searchsorted, np.digitize):
    PIECEWISE[_fn] = _value(_fn)
for _fn in (np.sign, np.heaviside, np.absolute, np.fabs, abs, math.fabs):
    PIECEWISE[_fn] = _sign
for _fn in (np.mod, np.remainder, np.fmod, np.floor_divide, np.divmod, math.fmod, divmod, operator.mod,
            operator.floordiv):
    PIECEWISE[_fn] = _quotient
for _fn in (np.maximum, np.minimum, np.fmax, np.fmin):
    PIECEWISE[_fn] = _sides
PIECEWISE[max] = PIECEWISE[min] = _extremum
PIECEWISE[np.clip] = _clipped


def watch_call(fn, args, kwargs, key, where) -> None:
    """Note which branch fn takes at args for the rule sampling a function now, if fn is `PIECEWISE`
    (key: the call's site; where: its frame or description)."""
    w = JUMP_WATCH.get()
    if w is None or w.t is None:
        return
    try:
        branch = PIECEWISE.get(fn)
    except TypeError:  # (an unhashable callable)
        return
    if branch is None:
        return
    try:
        with np.errstate(all="ignore"):
            out = branch(args, kwargs)
        out = tuple(np.asarray(o).tobytes() for o in (out if isinstance(out, tuple) else (out,)))
    except Exception:  # (arguments the test cannot take: the call itself tells the user)
        return
    try:  # (a step's argument, or a kink's two sides: their tangents say whether its boundary moves)
        moves = (_motion(args[0] - args[1]) if len(args) == 2 and branch is _sides
                 else _motion(args[0]) if len(args) >= 1 and branch in (_sign, _quotient) and
                 type(args[0]).__name__ == "Dual" and (branch is _sign or type(args[1]).__name__ != "Dual") else None)
    except Exception:
        moves = None
    w.record(key, where, out, moves)
