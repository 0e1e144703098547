"""Ties inside a reordering: a sort, a partition, `sorted`, `list.sort`.

A sort is differentiable where its input has no two equal entries. At a tie the entries' order in the result
follows which of them moves up, so the derivative of `L(sort(a))` exists there only if the tied positions
carry the same cotangent (then any order gives the same number: a median of [1, 2, 2, 3], whose two middle
entries are read with weight one half each). Where they differ (the median of [1, 2, 2, 2, 3], which reads only
the middle one) the one-sided derivatives differ, and the rules used to give one of them: the stable order's.
Forward mode is the same with tangents: tied entries whose tangents differ part, and the sorted tangents are
one side's.

So a reordering's rules check their tie groups. Forward mode's rule refuses at once where tied entries'
tangents differ (entries equal because they are copies of one quantity, a padded window's edge, carry the
same tangent and pass). Reverse mode cannot tell copies from two quantities that happen to be equal: its
adjoint notes a tie whose cotangents differ (`note_tie`) for forward mode to tell after the reverse pass,
as it does an equality test's (`contexts.compose.check_special`: refused where forward mode refuses or
cannot run); where nothing checks it, the input's cotangent is refused (`cotangents.Refused`: dropped where
the input is a constant, refused where it reaches a differentiated one). Never one side's derivative.
"""

from __future__ import annotations

import contextvars
import sys

import numpy as np

from .registry import NoDerivative

__all__ = ["SPECIAL_HITS", "TieError", "TiedApart", "even_ends", "kink_tie", "note_kink", "note_tie", "parting",
           "parting_items", "plain", "singular_still", "SINGULAR_AT"]

SPECIAL_HITS: contextvars.ContextVar = contextvars.ContextVar("overdub_special_hits", default=None)
"""Reverse mode's equality tests found equal during a recording pass (`lowered.runtime.equality_guard`),
and ties its reordering adjoints found during a reverse pass (`note_tie`): [(where, other, op)], or None
outside a recording that checks them (`contexts.ad.api`, which has them checked by forward mode afterwards:
`lowered.runtime.CHECK_SPECIAL`)."""


class TieError(NoDerivative):
    """A reordering at a tie of entries that part (forward mode: their tangents differ)."""


_ROUNDING = 1e-8  # two cotangents (tangents) that differ by less, relative to the larger, are taken as equal


class TiedApart:
    """Why a reordering's cotangent is refused: the reason a `cotangents.Refused` carries (`error()`), or,
    in forward mode, raised at once. Names the user's line the reordering was reached from."""

    __slots__ = ("function", "where")

    def __init__(self, function: str, depth: int = 1) -> None:
        from .frames import outside_engine
        self.function = function
        frame = outside_engine(sys._getframe(depth + 1))
        self.where = None if frame is None else \
            f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_qualname}"

    def error(self) -> TieError:
        return TieError(
            f"{self.function} at a tie: equal entries of its input go to places the result is read with different "
            f"weights (the derivative of the place a tied entry moves to depends on whether it moves up or down), "
            f"so the reordering has no derivative at this point",
            where=self.where,
            fix="evaluate at a point without equal entries, or, if the tied entries are one quantity, keep one "
                "copy of it (then it cannot tie with itself)")


def note_tie(name: str, value, depth: int = 1) -> bool:
    """Reverse mode, a reordering's adjoint at a tie whose cotangents differ: noted for forward mode to tell
    whether the tied entries part (then refused) or are one quantity's copies moving together (then the
    cotangent given is right: copies' cotangents add up whatever the order). False where no recording
    checks it (the adjoint then refuses)."""
    hits = SPECIAL_HITS.get()
    if hits is None:
        return False
    where = TiedApart(name, depth + 1).where
    hits.append((where, value, f"tie in {name}"))
    return True


def plain(v):
    """v, or the value inside a dual: forward over reverse runs the adjoints on duals (the outer derivative's
    tangents are forward mode's to check, where the reordering runs on duals)."""
    while type(v).__name__ == "Dual":
        v = v.primal
    return v


MOVING_TIE: list = []
"""[moving_tie(a, b, ta, tb)]: set by `lowered.runtime` (above the rules), which refuses or has the entry
point judge a tie whose two sides part under an outer derivative."""


def at_tip(x) -> None:
    """A rule about to take a limit's value at 0 (`x / |x|` as 0: a norm's gradient at the zero vector,
    hypot's at the origin, a quotient guarded where its denominator is 0) where x is a dual of an outer
    derivative (`hessian`): where x moves off 0 there, the point is a cone's tip, whose gradient jumps
    (`lowered.runtime.moving_tie`; 0 came out for `norm([t - 3, 0]) * t`'s second derivative at 3)."""
    if MOVING_TIE and type(x).__name__ == "Dual":
        MOVING_TIE[0](x.primal, 0.0, x.tangent, None)


STEP_JUMP: list = []
"""[step_jump(name, x, tangent)]: set by `lowered.runtime` (above the rules): its `jump_guard` of a floor's jumps,
refusing where x is an integer its tangent moves (forward mode), noting it for forward mode to tell (reverse
mode, no tangent)."""


def step_jump(name: str, x, t=None) -> None:
    """A rule whose result steps where x (a number computed from its arguments: np.arange's length
    `(stop - start) / step`) is an integer: refused there where x moves, as `np.floor(x)` is."""
    if STEP_JUMP:
        STEP_JUMP[0](name, x, t)


CONE_TIP: list = []
"""[cone_tip(name)]: set by `lowered.runtime` (above the rules), which raises a `SpecialCase` (judged from
the two sides of the point) outside a side's run and the rerun that judges."""


def cone_tip(name: str, at, t) -> None:
    """Forward mode, a norm of a zero vector (`at`: where the reduced slices are zero, broadcast against the
    input) whose tangent `t` moves it off zero: a cone's tip, where the rule's subgradient 0 is no rate (the
    norm moves as |t|): a composite smooth through it (sin(|v|) v / |v|, a rotation by the vector v) took
    0 for its derivative, and a test of the norm (`if n < eps`) could not see it move. Judged from the two
    sides."""
    if not CONE_TIP or t is None:
        return
    try:
        moving = bool(np.any(np.asarray(at) & (np.asarray(plain(t)) != 0)))
    except (TypeError, ValueError):
        moving = True
    if moving:
        CONE_TIP[0](name)


SINGULAR_STILL: list = []
"""[singular_still(name)]: set by `lowered.runtime` (above the rules), which raises a `SpecialCase` (judged from
the two sides of the point) outside a side's run and the rerun that judges."""


SINGULAR_AT: dict = {}
"""{function: (its name, singular(x) -> bool)}: functions with a singular point of their own (sqrt at 0), where
forward mode's tangent twin, given a computed rate of 0 (a float 0.0, not a constant's 0), asks
`singular_still` (`forward.tangent_runtime`); filled by the rules (`rules.math`)."""


def singular_still(name: str) -> None:
    """Forward mode, a function at a singular point of its own (an infinite partial: sqrt or cbrt at 0, acos at
    1) whose argument's rate came out exactly 0: `_singular`'s 0 -- right where the argument does not move
    (fluids' full tank), wrong where it moves at second order (`sqrt(x*x + y*y)` at the origin moves as the
    step's size): `if math.sqrt(x*x + y*y) < 1e-6: return I` took the branch's constant for the derivative
    where the same test of `np.linalg.norm` is judged (`cone_tip`). Judged from the two sides."""
    if SINGULAR_STILL:
        SINGULAR_STILL[0](name)


KINK_TIE: list = []
"""[kink_tie(name, a, b, ta, tb)]: set by `lowered.runtime` (above the rules), which counts the kinks a
forward-mode run meets exactly at their ties and has the entry point judge a run that meets two."""

KINK_MARK = "\u2220"
"""The first character of a reverse-mode note of a kink met at its tie (`note_kink`): forward mode tells
(`contexts.compose.check_special`), kept where it cannot run, as a tie only noted ("?") is."""


def kink_tie(name: str, a, b, ta, tb) -> None:
    """Forward mode, a kink met exactly at its tie (abs at 0, `np.maximum`'s or max's tied arguments, a clip at
    its bound, a tie of np.max's entries; a, b: the two values meeting, ta, tb their tangents, None for a
    constant) where the two sides' tangents part. Each rule's convention there, the mean of its two slopes,
    is the derivative of a function with one kink, or with kinks side by side; not of a kink inside another
    (`abs(np.minimum(w, 0))` at 0 gave 0 where the sides' slopes are -1 and 0; `abs(w - max(w, 0)) -
    max(w, 0)`, which is -w, gave -0.5 for -1). The second such kink of a run is judged from the two sides
    of the point (`lowered.runtime`)."""
    if KINK_TIE and (ta is not None or tb is not None):
        KINK_TIE[0](name, a, b, ta, tb)


def told(rule, tell) -> None:
    """rule's frule calling `tell(values, tangents)` first (a kink or a cone's tip told to `kink_tie` or
    `cone_tip`); forward mode's chunks, which take the rule's partials without its frule, call it as
    `rule.meta["told"]` (`forward.arrays.apply_frule`)."""
    frule = rule.frule

    def told_frule(tangents, *values, **kwargs):
        tell(values, tangents)
        return frule(tangents, *values, **kwargs)
    told_frule.__name__ = told_frule.__qualname__ = frule.__name__
    rule.frule = told_frule
    rule.meta["told"] = tell


def note_kink(name: str, depth: int = 1) -> None:
    """Reverse mode, a kink's adjoint at its tie (`kink_tie`'s): noted for forward mode to count and judge
    (`contexts.compose.check_special`); reverse mode cannot count them itself, a zero cotangent (abs's at 0)
    skipping the rules below it."""
    hits = SPECIAL_HITS.get()
    if hits is not None:
        hits.append((TiedApart(name, depth + 1).where, None, f"{KINK_MARK} {name}"))


def _differ(p, q):
    """Elementwise: p and q differ beyond rounding."""
    return np.abs(p - q) > _ROUNDING * np.maximum(np.abs(p), np.abs(q))


_TIE_ROUNDING = 2.0 ** -40  # two values this close, relative to the larger, are a tie: their order is rounding's


def _tied(p, q):
    """Elementwise: p and q equal, or apart by rounding only — one quantity computed by two formulas (two of
    pymannkendall's pairwise slopes, 0.95 and 0.9500000000000002, at its Sen slope's median: one side's
    derivative came out in both modes, where any step of the input moves either past the other)."""
    with np.errstate(invalid="ignore", over="ignore"):
        try:
            # (an infinite one ties only with its equal: `inf <= 2**-40 * inf` took 0.69 and inf for a tie)
            return (p == q) | (np.abs(p - q) <= _TIE_ROUNDING * np.maximum(np.abs(p), np.abs(q))) \
                & np.isfinite(p) & np.isfinite(q)
        except TypeError:  # (objects numpy cannot subtract: equality only)
            return p == q


def parting(values, d, axis: int = -1, at=None) -> bool:
    """Whether `values`, sorted along axis, has entries that are equal where `d` (their cotangents or
    tangents, in the same order; broadcast against values) differs: tied entries that part. With `at`
    (a partition's kth: positions along axis), only the ties of the entries at those positions count: a
    partition leaves the order on either side unspecified, so ties there are no kink of it."""
    while type(values).__name__ == "Dual":  # (forward over reverse: the values inside)
        values = values.primal
    values = np.asarray(values)
    n = values.shape[axis] if values.ndim else 0
    if n < 2:
        return False
    if at is None:  # neighbours in sorted order: each tie group is a run
        pairs = [(np.take(values, np.arange(n - 1), axis), np.arange(1, n), np.arange(n - 1))]
    else:
        pairs = [(np.take(values, [k], axis), np.arange(n), [k]) for k in np.atleast_1d(at) % n]
    ties = [(_tied(np.take(values, i, axis), v), i, j) for v, i, j in pairs]
    ties = [(tied, i, j) for tied, i, j in ties if tied.any()]
    if not ties:
        return False
    d = plain(d)
    if d is None:
        return False
    d = np.broadcast_to(np.asarray(d), values.shape)
    if d.dtype.kind not in "fciub":
        return True  # (a cotangent numpy cannot compare: not known to be equal)
    return any(np.any(tied & _differ(np.take(d, i, axis), np.take(d, j, axis))) for tied, i, j in ties)


def parting_unsorted(values, directions, axis: int = -1, at=None) -> bool:
    """`parting` of `values` in any order along axis: sorted first (stably), each of `directions` (tangents
    of values' shape, one per direction) taken in the same order. A sort's, a partition's (`at` its kth) and
    an argsort's check of its ties, on duals and in the lowered twin alike."""
    order = np.argsort(values, axis=axis, kind="stable")
    ordered = np.take_along_axis(values, order, axis)
    return any(parting(ordered, np.take_along_axis(d, order, axis), axis, at) for d in directions)


def lex_keys(keys) -> list:
    """np.lexsort's keys (a sequence of arrays, or a 2-D array's rows; duals' values), as arrays of floats."""
    keys = plain(keys)
    return [np.asarray(plain(k), dtype=float) for k in keys]


def lex_tied(keys, axis: int = -1) -> bool:
    """Whether np.lexsort's keys have two entries tied in the primary (last) key along axis: the only places
    its permutation can jump (elsewhere the primary key alone orders them)."""
    keys = lex_keys(keys)
    if not keys or keys[-1].ndim == 0 or keys[-1].shape[axis] < 2:
        return False
    s = np.moveaxis(np.sort(keys[-1], axis=axis), axis, -1)
    return bool(np.any(_tied(s[..., 1:], s[..., :-1])))


def lex_parting(keys, tangents, axis: int = -1) -> bool:
    """Whether np.lexsort's permutation jumps where the keys move along `tangents` (one per key, None for a
    constant key; each may lead with a chunk's directions): two entries tied in the keys' values from the
    primary (last) key down to one whose tangents differ there, so a step either way orders them apart
    (`x[np.lexsort((k, x))]` at a tie of x gave the secondary key's side, where central differences give
    the mean). Tied entries apart in a later key's value stay apart."""
    keys = lex_keys(keys)
    if not keys or keys[0].ndim == 0 or keys[0].shape[axis] < 2:
        return False
    n = keys[0].shape[axis]
    order = np.lexsort(keys, axis=axis)
    first, rest = np.arange(n - 1), np.arange(1, n)
    tied = None
    for k in reversed(range(len(keys))):
        v = np.take_along_axis(keys[k], order, axis)
        eq = _tied(np.take(v, rest, axis), np.take(v, first, axis))
        tied = eq if tied is None else tied & eq
        if not tied.any():
            return False
        t = plain(tangents[k]) if k < len(tangents) else None
        if t is None or type(t) is int and t == 0:
            continue
        t = np.asarray(t)
        if t.dtype.kind not in "fciub":
            return True  # (a tangent numpy cannot compare: not known to be equal)
        for d in (t if t.ndim == v.ndim + 1 else [t]):  # (a chunk's directions, leading)
            d = np.take_along_axis(np.broadcast_to(d, v.shape), order, axis)
            if np.any(tied & _differ(np.take(d, rest, axis), np.take(d, first, axis))):
                return True
    return False


def parting_items(values: list, d: list) -> bool:
    """`parting` for a list of items in any order (a sorted list, a heap) and their cotangents or tangents
    (None for zero): whether equal numbers among them, not all one object (one quantity's copies move
    together), have cotangents that differ. Items that are no real number are not compared."""
    numbers = [(v, k) for k, v in enumerate(values)
               if isinstance(v, (int, float, np.integer, np.floating)) and type(v) is not bool and v == v]
    numbers.sort(key=lambda vk: vk[0])
    start = 0
    for end in range(1, len(numbers) + 1):
        if end < len(numbers) and _tied(numbers[end][0], numbers[start][0]):
            continue
        group = [k for _, k in numbers[start:end]]
        start = end
        if len(group) < 2 or len({id(values[k]) for k in group}) < 2:
            continue
        first = 0.0 if d[group[0]] is None else d[group[0]]
        for k in group[1:]:
            other = 0.0 if d[k] is None else d[k]
            try:
                if np.any(_differ(np.asarray(plain(first)), np.asarray(plain(other)))):
                    return True
            except TypeError:
                return True  # (cotangents numpy cannot compare: not known to be equal)
    return False


def even_ends(values, d, axis: int, kth):
    """A partition's (values: partitioned along axis) tie at an end it was asked for (kth 0 or -1: np.median
    and np.percentile add -1 only to look for a NaN there): the tied entries' cotangents (tangents, d, a chunk's
    leading) made their mean, as `np.max`'s and `np.min`'s rules split a tie of the extreme, where the tie
    holds no other kth (that one's is a kink: `parting`). (d, the kth left to check.) Forward mode refused a
    median of data whose largest entries tie (HydroErr's mde), which the median never reads."""
    n = np.shape(values)[axis]
    ks = [int(k) % n for k in np.atleast_1d(kth)] if n else []
    ends = [k for k in ks if k in (0, n - 1)]
    if not ends or n < 2:
        return d, kth
    left = [k for k in ks if k not in ends]
    d = np.array(d, dtype=float if np.asarray(d).dtype.kind not in "fc" else np.asarray(d).dtype)
    for k in ends:
        tied = _tied(np.asarray(values), np.take(values, [k], axis))
        if any(np.any(np.take(tied, [j], axis)) for j in left):
            left.append(k)  # (an inner kth in the same tie: a kink there, checked)
            continue
        counts = np.sum(tied, axis=axis, keepdims=True)
        mean = np.sum(np.where(tied, d, 0), axis=axis + (d.ndim - tied.ndim) if axis >= 0 else axis,
                      keepdims=True) / counts
        d = np.where(tied, mean, d)
    return d, left
