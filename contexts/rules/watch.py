"""Orderings watched while a rule samples a function at points of its own (quad's integrand at its nodes).

The modes' equality guards (`contexts.lowered.runtime`, forward mode's duals) see every comparison with a
differentiated operand; while a rule has set `JUMP_WATCH`, they note each ordering's outcome here, by site,
for the rule to find branches whose boundary moves with the differentiated values.
"""

from __future__ import annotations

import contextvars

import numpy as np

from .frames import _ENGINE as _ENGINE_FILES

__all__ = ["JUMP_WATCH", "JumpWatch", "watch_order"]

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
        self.sites: dict = {}  # (code, lasti) -> (line, {t: outcome})
        self.tied = False  # (the rule's: a point was run a hair off, at a tie)

    def note(self, a, b, op: str, frame) -> None:
        if frame is None or frame.f_code.co_filename.startswith(_ENGINE_FILES):  # (a rule's own comparison)
            return
        while type(a).__name__ == "Dual":
            a = a.primal
        while type(b).__name__ == "Dual":
            b = b.primal
        try:
            with np.errstate(all="ignore"):
                out = np.asarray(_ORDERED[op](a, b))
            outcome = (out.shape, out.tobytes()) if out.dtype == bool else None
        except Exception:  # (an ordering numpy cannot take: the comparison itself tells the user)
            return
        if outcome is None:
            return
        key = (frame.f_code, frame.f_lasti)
        entry = self.sites.get(key)
        if entry is None:
            entry = self.sites[key] = (f"{frame.f_code.co_filename}:{frame.f_lineno} in "
                                       f"{frame.f_code.co_qualname}", {})
        entry[1].setdefault(self.t, outcome)

    def switches(self) -> list:
        """[(site, line, t_lo, t_hi)]: the neighbouring points (in t) between which a site's outcome
        changed (a site met at one of them only is no switch: the control flow changed elsewhere)."""
        found = []
        for key, (line, seen) in self.sites.items():
            ts = sorted(seen)
            for lo, hi in zip(ts, ts[1:]):
                if seen[lo] != seen[hi]:
                    found.append((key, line, lo, hi))
        return found


def watch_order(a, b, op: str, frame) -> None:
    """Note `a op b` (an ordering) for the rule sampling a function now, if any (`JumpWatch`)."""
    w = JUMP_WATCH.get()
    if w is not None and w.t is not None and op in _ORDERED:
        w.note(a, b, op, frame)
