"""Derivatives that compose the two modes: forward over reverse (`hessian`, `hvp`) and a Jacobian by
either mode (`jacobian`).

They sit above both `contexts.forward` and `contexts.ad` (neither mode imports the other's entry points:
reverse mode runs on forward mode's `Dual`s, forward mode knows nothing of reverse mode).

>>> import numpy as np
>>> from contexts import hessian
>>> hessian(lambda x: x[0] ** 2 * x[1], np.array([1.0, 2.0]))
array([[4., 2.],
       [2., 0.]])
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from overdub.errors import OverdubError

import overdub
from overdub import depth as _runs

from .ad import ADContext, gradient, pullback
from .ad.api import special_hits
from .forward.context import ForwardContext
from .forward.api import (OWN_STOOD, domain_edge, _plain_input, _value_and_jacfwd, SIDES_TAKEN, _AXES_CHECKED, along_axes, unit_directions, _close as close_derivatives, _moved as moved, _step as side_step, flattened, mean_tree, float_input,
                          is_tree, jacfwd, jvp, of_values, random_direction, rebuilt_tree, reraise_located,
                          restorer, tree_leaves)
from .forward.dual import Dual
from .lowered.runtime import _TEXTS, ORDER_OPS, TIES_AT_SIDES, SidesTaken, SpecialPoint, StairJump, special_case
from .rules.ties import KINK_MARK, TieError
from .rules.leaves import container_of

__all__ = ["hessian", "hvp", "jacobian"]


_NOTED = ("?", "\u2261", KINK_MARK)  # (hits only noted: a tie, arrays compared equal, a kink; kept where unchecked)
_OTHER_MODE = [False]  # (one mode answering after the other's refusal: no third answer inside it)


def check_special(f: Callable, args: tuple, kwargs: dict, hits: list) -> None:
    """Reverse mode found equality tests of values it must take as differentiated equal (`x == 0`; an
    attribute of an object holding differentiated values, an element of a differentiated array): forward
    mode runs f along random directions and refuses (`SpecialPoint`) where a compared value moves. Values
    that do not move (a constant attribute, an element that stays put) pass, and so does the gradient.
    Under an outer derivative (dual arguments), plain values carry no derivative: nothing to check."""
    if any(isinstance(a, Dual) for a in args):
        return
    rng = np.random.default_rng(20261129)
    leaves = [leaf for a in args for leaf in tree_leaves(a)]  # (a list, tuple or dict argument: its items)
    directions = []
    for a in leaves:
        if isinstance(a, (float, np.floating)):
            directions.append(float(rng.normal()))
        elif isinstance(a, np.ndarray) and a.dtype.kind == "f":
            directions.append(rng.normal(size=a.shape).astype(a.dtype))
        elif a is None or isinstance(a, (int, str, bytes, np.integer)) or (
                isinstance(a, np.ndarray) and a.dtype.kind in "biu"):
            directions.append(None)
        else:
            if all(op[:1] in _NOTED for _, _, op in hits):
                return
            raise _unchecked(hits, f"an argument of type {type(a).__name__}")

    def of_leaves(*xs):
        given = iter(xs)
        return f(*(rebuilt_tree(a, given) for a in args), **kwargs)
    taken, stood = SIDES_TAKEN[0], OWN_STOOD[0]
    try:
        _, rate = jvp(of_leaves, tuple(leaves), tuple(directions))
        checks = [(directions, rate)]
        if OWN_STOOD[0] != stood:  # (a special case whose own derivative stood along one direction: along
            checks += _more_checks(of_leaves, leaves, directions, rng)  # others too, as jacfwd's `_one_way`)
    except (SpecialPoint, TieError) as e:  # (a tie inside a sort whose entries part: forward mode's refusal)
        checks = at_domain_edge(of_leaves, leaves, directions, hits, rng) if isinstance(e, SpecialPoint) else None
        if checks is not None:
            return _checked_along(checks, hits)
        if getattr(e, "near", False) and all(op[:1] == "\u2248" for _, _, op in hits):
            return None  # (orderings noted for their closeness alone, moving there: reverse mode's answer, the
            # derivative of the piece the point is on, stands -- a point 1e-12 from a kink. Not arrays compared
            # equal where forward mode found them moving apart: np.gradient's `(dx == dx[0]).all()` at uniform
            # spacing took the uniform formula's derivative, silently; kept where forward mode cannot run)
        if isinstance(e, StairJump) and not hasattr(e, "judged") and all(op[:1] == KINK_MARK for _, _, op in hits):
            # (kinks forward mode would judge from the two sides, inside another derivative's judging, where it
            # does not: reverse mode's entry takes the two sides' mean -- a Hessian's gradient at a tie)
            raise SidesTaken(f"{e.what} (judged from its two sides)", where=e.where, fix=e.fix) from None
        raise
    except Exception as e:
        if all(op[:1] in _NOTED for _, _, op in hits):  # (ties only noted, as before: kept where unchecked)
            return
        if still_equal_nearby(of_leaves, leaves, directions, hits):
            return None  # (no compared value moves: the special case holds around the point, and its
            # derivative is the function's -- linearmodels' `x == 1` of a constant column, in a pandas frame)
        raise _unchecked(hits, f"forward mode: {type(e).__name__}") from e
    if SIDES_TAKEN[0] != taken:  # (a step's jump or a kink forward mode judged from the two sides: continuous)
        where = next((h[0] for h in hits if h[2][:1] != "?"), hits[0][0])
        raise SidesTaken(
            "a step's jump or a kink of the function at this point (judged from its two sides: continuous): "
            "reverse mode's one pass takes the side the step took, where the derivative is the mean of the two "
            "sides'", where=where,
            fix="use `gradient` or `value_and_gradient` (they answer with the two sides' mean), forward mode "
                "(`jacfwd`, `jvp`), or differentiate at a point off the jump")

    return _checked_along(checks, hits)


def _checked_along(checks: list, hits: list):
    """`check_special`'s answer: reverse mode's gradient, once computed, must give forward mode's derivative along
    each of the checks' directions (`same_as_forward`)."""
    def same_along_each(grads, given):
        for checked in checks:
            same_as_forward(checked, grads, given, hits)
    return same_along_each


def at_domain_edge(of_leaves: Callable, leaves: list, directions: list, hits: list, rng) -> list | None:
    """Reverse mode's tests found tied are orderings alone (`0 <= inc`), and f is defined on one side of the point
    only (`forward.api.domain_edge`): [(directions, derivative)] from the side it answers on, for reverse mode's
    gradient to give; else None."""
    hard = [h for h in hits if h[2][:1] not in _NOTED]
    if not hard or not all(h[2] in ORDER_OPS for h in hard):
        return None
    return domain_edge(of_leaves, tuple(leaves), tuple(directions))


_EXACT_TESTS = frozenset({"==", "!=", "in", "not in", "all=="}) | ORDER_OPS
_OF_THE_VALUE = ("jump of ", "tie in ")  # (a step's jump, a sort's tie: the hit holds the value itself, which
# a moving value changes nearby)
_NEARBY_STEPS = (1e-7, 1e-4)  # (relative to the inputs' size: a value moving 1e-10 as fast as they do moves
# past a rounding at the larger one)


def still_equal_nearby(of_leaves: Callable, leaves: list, directions: list, hits: list) -> bool:
    """Where forward mode cannot run (pandas data, whose frames hold no duals): whether each value reverse mode's
    recording found exactly equal to a constant (`x == 1`, a tie of an ordering) stays equal to it, as many
    entries of it as at the point, at points next to it along a random direction (two steps): then the
    special case holds around the point and its derivative is the function's. f is recorded again there
    (`ad.api.special_hits`) and the two recordings' tests compared by their line, kind, the constant's value and
    the count of entries equal. A value moving off the constant leaves the test unmet there: False, and the
    point stays refused. So does a test closing in (`~`, `≈`: a bisection's iterate moves and stays close). A
    step's jump or a sort's tie holds the value itself: one moving nearby differs there, and is refused."""
    hard = [h for h in hits if h[2][:1] not in _NOTED]
    if not hard or not all(h[2] in _EXACT_TESTS or h[2].startswith(_OF_THE_VALUE) for h in hard):
        return False
    wanted: dict = {}
    for h in hard:
        key = _hit_key(h)
        if key is None:
            return False
        wanted[key] = wanted.get(key, 0) + 1
    for step in _NEARBY_STEPS:
        moved = []
        for a, d in zip(leaves, directions):
            if d is None:
                moved.append(a)
                continue
            scale = step * max(1.0, float(np.max(np.abs(a))) if np.size(a) else 1.0)
            moved.append(type(a)(a + scale * d) if isinstance(a, (float, np.floating)) else a + scale * d)
        try:
            found = special_hits(of_leaves, tuple(moved), {})
        except Exception:
            return False
        seen: dict = {}
        for h in found:
            if h[2][:1] not in _NOTED:
                key = _hit_key(h)
                seen[key] = seen.get(key, 0) + 1
        if any(seen.get(key, 0) != n for key, n in wanted.items()):
            return False
    return True


def _hit_key(hit) -> tuple | None:
    """(line, kind, the constant's value, entries equal) of a hit; None where the constant is not a number,
    text or array of them (not compared by value)."""
    where, other, op = hit
    if isinstance(other, np.ndarray):
        if other.dtype.kind not in "biufcUS":
            return None
        digest = (other.dtype.str, other.shape, hash(other.tobytes()))
    elif isinstance(other, (bool, int, float, complex, str, bytes, np.generic)) or other is None:
        digest = (type(other).__name__, repr(other))
    else:
        return None
    return where, op, digest, getattr(hit, "equal_count", None)


def _more_checks(of_leaves, leaves, directions, rng) -> list:
    """[(directions, forward mode's derivative along them)] along a second random direction and, for inputs of
    at most `_AXES_CHECKED` numbers, along each axis: reverse mode's gradient must give each (`same_as_forward`),
    as a Jacobian judged at a special point must (`forward.api._one_way`, `along_axes`)."""
    size = sum(int(np.size(d)) for d in directions if d is not None)
    if size < 2:
        return []
    others = [[(float(rng.normal()) if np.ndim(d) == 0 else rng.normal(size=np.shape(d))) if d is not None
               else None for d in directions]]
    if size <= _AXES_CHECKED:  # (the directions are the float leaves' shapes: their unit vectors, in order)
        others += unit_directions(tuple(np.zeros(np.shape(d)) if np.ndim(d) else 0.0 if d is not None else None
                                        for d in directions))
    out = []
    for other in others:
        _, rate = jvp(of_leaves, tuple(leaves), tuple(other))
        out.append((other, rate))
    return out


def same_as_forward(checked, grads, args, hits) -> None:
    """After `check_special` passed (forward mode's own derivative along its directions stands at the special
    point), reverse mode's own gradient must give it too: at a tie the two modes' rules may split differently
    (skimage's rgb2hsv hue where two channels tie: `arr.max` split the cotangent in two inside a formula
    valid on one side only, half the slope, where forward mode's rules took the side the code took).
    Where they differ, `SidesTaken`: the entry answers with the mean of the two sides' gradients."""
    if checked is None or grads is None:
        return
    directions, rate = checked
    try:
        flat = []
        for a, g in zip(args, grads):
            n = len(tree_leaves(a))
            parts = [None] * n if g is None else tree_leaves(g)
            if len(parts) != n:
                return  # (a gradient of another structure: a container's, not compared)
            flat.extend(parts)
        if len(flat) != len(directions):
            return
        terms = [np.sum(np.asarray(g, dtype=float) * np.asarray(d, dtype=float))
                 for g, d in zip(flat, directions) if g is not None and d is not None]
        own, ahead = float(sum(terms)), float(np.asarray(rate, dtype=float))
        reach = float(sum(abs(t) for t in terms)) + abs(ahead)
    except (TypeError, ValueError):
        return
    if not (np.isfinite(own) and np.isfinite(ahead)):
        return  # (a NaN of a singular slope times a zero: `nan_by_forward`'s, after; sqrt of a self-distance)
    if not close_derivatives(np.array([own]), np.array([ahead]), reach):
        where = next((h[0] for h in hits if h[2][:1] != "?"), hits[0][0])
        raise SidesTaken(
            "a special point where reverse mode's own pass gives another derivative than forward mode's (the "
            "rules' ties split differently): judged from the two sides of the point", where=where,
            fix="use `gradient` or `value_and_gradient` (they answer with the two sides' mean), or forward mode")


def mean_of_sides(run: Callable, args: tuple, f: Callable | None = None):
    """The mean of run(args ± h d) (a tree of floats: gradients, a Jacobian), d random over the float leaves
    of args, for reverse mode's entry points where a step's jump or a kink was judged continuous from its two
    sides (`SidesTaken`): the mean of the two sides' slopes, as forward mode answers there
    (`forward.api._past_stair_jump`); None where args or the answers are not floats; False where the means
    along two random directions differ (no derivative there: a cone's apex, `forward.api._one_way`), or, given
    f (whose gradient or Jacobian run gives), along an axis (`forward.api.along_axes`)."""
    rng = np.random.default_rng(20261206)
    means, size = [], 0
    for _ in range(2):  # (along two directions: the same mean, else none -- a cone's apex, `_one_way`)
        directions = []
        for a in args:
            leaves = tree_leaves(a) if isinstance(a, (float, np.floating, np.ndarray)) or is_tree(a) else [a]
            if all(isinstance(v, (float, np.floating)) or isinstance(v, np.ndarray) and v.dtype.kind == "f"
                   for v in leaves):
                directions.append(random_direction(a, rng))
                size += sum(np.size(v) for v in leaves)
            elif isinstance(a, (float, np.floating, np.ndarray)) or is_tree(a):
                return None  # (a differentiated input of another kind: a Fraction, a complex array)
            else:
                directions.append(None)
        h = side_step(tuple(args), tuple(directions))
        if not h:
            return None
        token = TIES_AT_SIDES.set(True)  # (a tie met at a side is an iteration's exit: `forward.api._sides`)
        try:
            means.append(mean_tree(*(run(moved(tuple(args), tuple(directions), s * h)) for s in (1, -1))))
        finally:
            TIES_AT_SIDES.reset(token)
        if means[0] is None or size < 2:  # (one input: its two sides are the only ones)
            return means[0]
    if not _same_tree(*means):
        return False
    if f is not None and not along_axes(means[0], f, tuple(args)):  # (few inputs: along each axis too)
        return False
    return means[0]


def _same_tree(a, b) -> bool:
    """Two trees of floats (`mean_tree`'s) equal beyond the sides' curve and rounding (`forward.api._close`)."""
    try:
        u = np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in tree_leaves(a) if v is not None])
        w = np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in tree_leaves(b) if v is not None])
    except (TypeError, ValueError):
        return False
    return u.shape == w.shape and close_derivatives(u, w, float(np.max(np.abs(np.concatenate([u, w])), initial=0.0)))


def nan_by_forward(f: Callable, args: tuple, positions: tuple, grads: tuple) -> tuple:
    """Reverse mode's gradient has NaN entries while f's value is finite: a partial derivative infinite at
    a point whose cotangent was an exact zero on the way back (`np.tril(np.sqrt(d ** 2), -1)`: sqrt at 0 on
    a diagonal the result leaves out; 0 * inf). Forward mode carries that singular tangent forward to where
    the same operation leaves it out, so where its derivative along the argument is finite, that is the
    gradient's entry. Where forward mode is NaN too (`np.cbrt(x) ** 3` at 0), refuses or cannot run, the
    NaN stays (never a zero). `positions`: the argument each gradient entry belongs to."""
    if any(isinstance(a, Dual) for a in args) or _OTHER_MODE[0]:
        return grads  # (under an outer derivative; inside the other mode's answer: the NaN stays)
    out = list(grads)
    filled = []  # (the entries forward mode filled: `_filled_by_sides`)
    for k, (i, g) in enumerate(zip(positions, grads)):
        a = args[i]
        if not _has_nan(g) or not (isinstance(a, (float, np.floating)) or isinstance(a, np.ndarray)
                                   and a.dtype.kind == "f" and np.shape(g) == a.shape):
            continue
        _OTHER_MODE[0] = True  # (forward mode's own NaN is not sent back to reverse mode: `nan_by_reverse`)
        try:
            d = partial_by_forward(f, args, i)[1]
        except Exception:  # (forward mode refused or failed: the NaN stays)
            continue
        finally:
            _OTHER_MODE[0] = False
        if isinstance(a, np.ndarray):
            d = np.asarray(d)
            if d.shape == a.shape:
                out[k] = np.where(np.isnan(g), d, g).astype(g.dtype, copy=False)
                filled.append((k, np.isnan(g) & ~np.isnan(d)))
        elif not np.isnan(d):
            out[k] = type(g)(d)
            filled.append((k, None))
    nan = any(_has_nan(g) for g in out)
    if nan or filled:  # (the sides taken once, for both)
        mean = _gradient_sides(f, args, positions, len(out))
        if mean is not None:
            out = _filled_by_sides(_nan_by_sides(out, mean) if nan else out, filled, mean)
    return tuple(out)


def _gradient_sides(f: Callable, args: tuple, positions: tuple, n: int):
    """The mean of reverse mode's gradients at the two sides of the point (`mean_of_sides`: along two random
    directions and, for few inputs, each axis, the same mean), a tuple of n entries, or None where the sides
    cannot be taken or disagree; inside another answer's, None (no sides of sides)."""
    if _OTHER_MODE[0]:
        return None
    from .ad.api import value_and_gradient

    def at_side(moved):
        y, g = value_and_gradient(f, *moved)
        _finite_side(y)
        return tuple(g[i] for i in positions)
    _OTHER_MODE[0] = True  # (the sides' own NaN stays theirs)
    try:
        mean = mean_of_sides(at_side, args, f)
    except Exception:  # (a side refused or failed)
        return None
    finally:
        _OTHER_MODE[0] = False
    return mean if isinstance(mean, tuple) and len(mean) == n else None


def _filled_by_sides(grads: list, filled: list, mean: tuple) -> list:
    """Entries of reverse mode's NaN that forward mode filled: forward mode takes a tangent of exactly 0
    meeting an infinite partial for no change, which is right where the argument stays put (a constant made of
    differentiated values) but not where it moves at a vanishing rate (`np.cbrt(x ** 3)` at 0: x ** 3's tangent
    0, cbrt's slope infinite; the derivative is 1, and forward mode's 0 was taken, silently). The two sides of
    the point (`mean`, `_gradient_sides`) tell: where their mean is a number forward mode's is not, it is the
    entry (the sides' slopes of `np.cbrt(x ** 3)`: 1; a kink's: their mean, as the rules take it at their own);
    where they agree, or cannot be had (NaN there too: the argument stays put), forward mode's number stands."""
    for k, where in filled:
        m, g = mean[k], grads[k]
        if m is None:
            continue
        m = np.asarray(m, dtype=float)
        if m.shape != np.shape(g):
            continue
        scale = float(np.max(np.abs(m), initial=0.0))
        take = np.isfinite(m) & ~np.isclose(m, np.asarray(g, dtype=float), rtol=1e-6, atol=1e-9 * max(scale, 1.0))
        if where is not None:
            take &= where
        if not take.any():
            continue
        grads[k] = type(g)(m) if where is None else np.where(take, m, g).astype(g.dtype, copy=False)
    return grads


def _nan_by_sides(grads: list, mean: tuple) -> list:
    """NaN entries of reverse mode's gradient that forward mode left NaN too (0 * inf in both: `np.cbrt(x) ** 3`
    at 0, boule's `cartesian_to_geodetic` on the equatorial plane, a root of a square entering an even
    function): the sides' mean (`_gradient_sides`), as forward mode's entry answers a kink or a step judged
    continuous. Where the sides cannot be taken or disagree, the NaN stays."""
    for k, (g, m) in enumerate(zip(grads, mean)):
        if not _has_nan(g) or m is None:
            continue
        if isinstance(g, np.ndarray):
            m = np.asarray(m, dtype=float)
            if m.shape == g.shape:
                grads[k] = np.where(np.isnan(g), m, g).astype(g.dtype, copy=False)
        elif np.ndim(m) == 0 and not np.isnan(m):
            grads[k] = type(g)(m)
    return grads


def _has_nan(g) -> bool:
    if type(g) is float or isinstance(g, np.floating):
        return g != g
    return isinstance(g, np.ndarray) and g.dtype.kind == "f" and bool(np.isnan(g).any())


def _unchecked(hits: list, why: str) -> SpecialPoint:
    where, other, op = next((h for h in hits if h[2][:1] != "?"), hits[0])  # (a tie only noted: the last said)
    return SpecialPoint(f"{special_case(other, op)}; whether the value moves could not be checked ({why})",
                        where=where,
                        fix="differentiate at a point off the special value, or give the function a rule")



def jacobian(f: Callable, x: Any, mode: str = "forward", chunk: int | None = None) -> Any:
    """The Jacobian of f at x, shape `shape(f(x)) + shape(x)`; `mode="forward"` (columns, best for
    few inputs) or `"reverse"` (rows through `contexts.ad.pullback`, best for few outputs).

    >>> import numpy as np
    >>> jacobian(lambda x: x ** 2, np.array([1.0, 3.0]))
    array([[2., 0.],
           [0., 6.]])
    """
    if mode == "forward":
        return jacfwd(f, x, chunk=chunk)
    if mode != "reverse":
        raise OverdubError(f"unknown jacobian mode {mode!r}", fix='use mode="forward" or mode="reverse"')
    y, back = pullback(f, x)
    y = np.asarray(y)
    rows = []
    for i in range(y.size):
        e = np.zeros(y.size)
        e[i] = 1.0
        rows.append(np.asarray(back(e.reshape(y.shape) if y.shape else 1.0)[0]))
    return np.stack(rows).reshape(y.shape + np.shape(x))


def _inner_gradient(f: Callable, inner: str) -> Callable:
    """x -> grad f(x), by reverse mode (for forward-over-reverse) or by forward mode."""
    if inner not in ("forward", "reverse"):
        raise OverdubError(f"unknown inner mode {inner!r}",
                           fix='use inner="auto" (the default), inner="forward" or inner="reverse"')
    if inner == "forward":
        def grad_forward(z):
            try:
                return jacfwd(f, z)
            except OverdubError as e:
                reraise_located(e, f)
        grad_forward.derivative_of = f  # (a stair jump's sides judge f too: `forward.api._past_stair_jump`)
        return grad_forward

    def grad_reverse(z):
        try:
            return gradient(f, z)[0]  # (a dual z's zero is of its value's shape: structs.zero_of)
        except OverdubError as e:
            reraise_located(e, f)
    grad_reverse.derivative_of = f
    return grad_reverse


def hessian(f: Callable, x: Any, *, inner: str = "auto", chunk: int | None = None) -> Any:
    """The Hessian of scalar f at x: forward mode over the reverse-mode gradient of `contexts.ad`
    (`inner="reverse"`: forward-over-reverse, one reverse pass per chunk of directions) or over a
    forward-mode gradient (`inner="forward"`: forward-over-forward, one forward pass per input and chunk).
    The default, `"auto"`, is forward-over-reverse, and forward-over-forward where that is refused (dual
    numbers met what reverse mode's pass cannot take: a rule without a forward twin, a plain array
    filled with perturbed values); where both are refused, forward-over-reverse's error is raised.

    Integer inputs: an integer numpy array is differentiated as the float64 array of its values (as by
    `gradient`, `jvp` and `jacfwd`); a Python int stays an exact scalar.

    >>> import numpy as np
    >>> hessian(lambda x: x[0] ** 2 * x[1], np.array([1.0, 2.0]), inner="forward")
    array([[4., 2.],
           [2., 0.]])
    """
    f, x = _of_labelled_values(f, x)
    if is_tree(x):  # (a dict or a list of arrays: a block per pair of leaves, `_tree_blocks`)
        of_flat, flat, layout = flattened(f, x, "hessian")
        return _tree_blocks(x, hessian(of_flat, flat, inner=inner, chunk=chunk), layout)
    x = float_input(x)
    return _either(lambda g: jacfwd(g, x, chunk=chunk), f, inner, x)


def _tree_blocks(x, h: np.ndarray, layout):
    """The Hessian over x's leaves, h over their values laid end to end, as x's structure of x's structure:
    `H[i][j]` (`H["a"]["b"]` for a dict) of shape `shape(x[i]) + shape(x[j])`, `H[i][j][a][b]` the second
    derivative in `x[i][a]` and `x[j][b]`, as JAX's `hessian` gives it (the blocks came out transposed, the
    outer structure the inner gradient's, gen22 W9; a dict crashed, C3)."""
    offsets, sizes, shapes = layout
    h = np.asarray(h)

    def block(i, j):
        b = h[offsets[i]:offsets[i] + sizes[i], offsets[j]:offsets[j] + sizes[j]].reshape(shapes[i] + shapes[j])
        return b if b.ndim else b[()]
    n = len(shapes)
    return rebuilt_tree(x, iter([rebuilt_tree(x, iter([block(i, j) for j in range(n)])) for i in range(n)]))


def _of_labelled_values(f: Callable, x: Any) -> tuple[Callable, Any]:
    """(f of x's values, the values) for a container of labelled arrays (an xarray DataArray: a Hessian
    is a plain array of shape x.shape * 2, with no labels of one axis; the inner gradient is taken with
    respect to its values), else (f, x)."""
    container = container_of(x) if type(x) is not np.ndarray and type(x) is not float else None
    if container is None or container.values is None or container.rebuild is None:
        return f, x
    return of_values(f, x, container), container.values(x)


def hvp(f: Callable, x: Any, v: Any, *, inner: str = "auto") -> Any:
    """The Hessian-vector product H(x) @ v of scalar f in one forward pass over its gradient (an integer
    array x is differentiated as the float64 array of its values, as by `hessian`; `inner` as there).

    >>> import numpy as np
    >>> hvp(lambda x: (x ** 3).sum(), np.array([1.0, 2.0]), np.array([1.0, 0.0]), inner="forward")
    array([6., 0.])
    """
    f, x = _of_labelled_values(f, x)
    if is_tree(x):  # (a dict or a list of arrays: v of x's structure, the product too)
        of_flat, flat, (offsets, sizes, shapes) = flattened(f, x, "hvp")
        _, vflat, _ = flattened(f, v, "hvp")
        if vflat.shape != flat.shape:
            raise ValueError(f"hvp's direction has {vflat.size} values, x has {flat.size}: give it x's structure")
        hv = np.asarray(hvp(of_flat, flat, vflat, inner=inner))
        return rebuilt_tree(x, iter([hv[o:o + n].reshape(sh) if sh else hv[o] for o, n, sh in zip(offsets, sizes, shapes)]))
    x = float_input(x)
    kind = container_of(v) if type(v) is not np.ndarray else None
    v = kind.values(v) if kind is not None and kind.values is not None else v  # (a DataArray direction)
    return _either(lambda g: jvp(g, (x,), (v,))[1], f, inner, x)


def _either(outer: Callable, f: Callable, inner: str, x: Any = None) -> Any:
    """outer(the gradient of f by `inner`); with "auto", by reverse mode and, where that is refused (an
    OverdubError), by forward mode. The refusal's error is raised where both are refused."""
    if inner != "auto":
        return outer(_inner_gradient(f, inner))
    reset = restorer(x) if x is not None else (lambda: None)
    try:
        result = outer(_inner_gradient(f, "reverse"))
        if _has_nan(np.asarray(result)) if isinstance(result, (np.ndarray, float, np.floating)) else False:
            # NaN entries (0 * inf on the reverse pass: a sqrt at 0 in the branch an np.where leaves out):
            # forward over forward's where it has a number, as `gradient`'s NaN entries are taken
            reset()
            try:
                other = outer(_inner_gradient(f, "forward"))
            except Exception:  # (refused or failed: the NaN stays, never a zero)
                return result
            if np.shape(other) == np.shape(result):
                filled = np.where(np.isnan(result), other, result)
                return filled if isinstance(result, np.ndarray) else type(result)(filled)
        return result
    except OverdubError as e:
        if getattr(e, "judged", False):  # (no derivative there, judged from the two sides: `StairJump`)
            raise
        reset()  # (the refused pass may have changed x in place: the second runs from the caller's values)
        try:
            return outer(_inner_gradient(f, "forward"))
        except OverdubError as e2:
            e.add_note(f"forward over forward was tried too and refused: {type(e2).__name__}: "
                       f"{str(e2).splitlines()[0]}")
            raise e from None


_BY_FORWARD_MOST = 64  # (numbers differentiated: forward mode's gradient takes one pass per 16 of them)


def after_refusal(run: Callable, refusal: Exception, other: str):
    """run(), the other mode's derivative, where one mode refused for a limit of its own (what it cannot
    follow, which the other may: forward mode's duals tell exactly which numbers carry a derivative,
    reverse mode's adjoints need no tangent of what the output leaves out); where the other mode cannot
    answer either, the refusal, with a note saying so. Never inside another such answer."""
    stack = overdub.active()  # (the contexts entered by `with`: each counts as a run of its own)
    if _OTHER_MODE[0] or _runs.active() > len(stack) or any(type(c) not in (ADContext, ForwardContext) for c in stack):
        # (inside a run of either mode, one of its checks: the run's refusal is its caller's to judge; a context
        # observing every operation, a sparsity tracer: they see one mode's run only)
        raise refusal
    _OTHER_MODE[0] = True
    _TEXTS.clear()  # (the refused run's texts of numbers: the other mode's run remembers its own)
    try:
        return run()
    except Exception as e:  # (the other mode's refusal or failure: the first mode's refusal stands)
        if e is refusal:  # (the other mode cannot take these inputs or this output)
            raise
        note = f"{other} mode, tried as well, refused too" + ("" if type(e) is type(refusal) else (
            f" ({type(e).__name__}: " + (str(e).strip().splitlines() or [""])[0][:200] + ")"))
    finally:
        _OTHER_MODE[0] = False
    refusal.add_note(note)
    raise refusal


def by_forward(f: Callable, args: tuple, wrt, refusal: Exception) -> tuple:
    """(f(*args), the gradient) by forward mode where reverse mode refused for a limit of its own
    (`ad.api.LIMITS`): a number formatted into text and parsed back whose activity reverse mode could not
    tell (geomdl's knot vector normalised from a count of control points), a C function with a reverse rule
    missing. For float and float-array arguments of at most `_BY_FORWARD_MOST` numbers in all
    (`partial_by_forward` of each); else, or where forward mode refuses too, the refusal."""
    n = len(args)
    chosen = tuple(range(n)) if wrt is None else tuple(i % n for i in ((wrt,) if isinstance(wrt, int) else wrt))
    values = [args[i] for i in chosen]
    if not values or not all(map(_plain_input, values)) or sum(np.size(a) for a in values) > _BY_FORWARD_MOST:
        raise refusal

    def answer():
        y, grads = None, []
        for i in chosen:
            y, d = partial_by_forward(f, args, i)
            if np.shape(d) != np.shape(args[i]) or _has_nan(d):  # (an output not a number; a NaN: no answer)
                raise refusal
            grads.append(d)
        if np.ndim(y) or np.iscomplexobj(y):
            raise refusal
        return y, tuple(grads)
    return after_refusal(answer, refusal, "forward")


def partial_by_forward(f: Callable, args: tuple, i: int) -> tuple:
    """(f(*args), f's derivative along args[i], a float or a float array: d's entries those of the Jacobian
    for an array output) by forward mode: f itself given the directions (jvp's None for a constant argument,
    one jacfwd for f of one array), never a wrapper written here, which forward mode would run as the
    engine's own code on duals, past the transform's checks (a duration scaled by a dual gave its unrounded
    slope)."""
    a = args[i]
    if type(a) is not np.ndarray:
        y, d = jvp(f, args, tuple(type(a)(1.0) if j == i else None for j in range(len(args))))
        return y, type(a)(d) if np.ndim(d) == 0 else d
    if len(args) == 1:
        return _value_and_jacfwd(f, a, None)
    y, columns = None, []
    for e in unit_directions((a,)):  # (one pass per entry: a's Jacobian block beside other arguments)
        y, d = jvp(f, args, tuple(e[0] if j == i else None for j in range(len(args))))
        columns.append(np.asarray(d))
    d = np.stack(columns, axis=-1).reshape(np.shape(y) + a.shape)
    return y, d


def nan_by_reverse(name: str, f: Callable, args: tuple, kwargs: dict, out):
    """Forward mode's derivative (`derivative`'s, or `jacfwd`'s (y, J)) with NaN entries: an infinite partial
    times a tangent of exactly 0 (arcsin(c) at c = 1 along a direction c does not take: thermofeel's mean
    radiant temperature; `x1 * x0 ** 0.5` at x0 = 0 along x1). Reverse mode's Jacobian has no such product
    where the output's cotangent meets the partial only on the argument's own path: its entries fill the NaN
    ones where they are numbers (`nan_by_forward`'s mirror). For a float or float-array input, outermost,
    under the modes' own contexts only; where reverse mode refuses or is NaN too, the NaN stays (never a
    zero)."""
    from .by_reverse import BY_REVERSE
    if name == "jvp":
        return _jvp_nan_by_reverse(f, args, kwargs, out)
    x = args[0] if args else None
    if kwargs or not _plain_input(x):
        return out
    d = np.asarray(out if name == "derivative" else out[1])
    y = None if name == "derivative" else out[0]
    if y is not None and not np.all(np.isfinite(np.asarray(y, dtype=complex))):
        return out  # (a NaN or an infinite value: its NaN derivative is the value's own)
    try:
        other = after_refusal(lambda: BY_REVERSE[name](f, x), _NoAnswer(), "reverse")
        r = np.asarray(other if name == "derivative" else other[1])
    except Exception:  # (reverse mode refused, failed or cannot be asked: the sides may tell, below)
        r = d
    filled = _nan_filled(d, r)
    if filled is None:
        return out
    if np.isnan(filled).any():  # (NaN in both modes: the mean of the two sides' answers, `_nan_by_sides`)
        filled = _forward_nan_by_sides(name, f, x, filled)
    if name == "derivative":
        scalar = out if np.ndim(out) == 0 else None
        return type(scalar)(filled) if scalar is not None else filled
    return out[0], filled


def _jvp_nan_by_reverse(f: Callable, args: tuple, kwargs: dict, out):
    """`jvp`'s (y, dy) with NaN entries in dy (0 * inf: a tangent of exactly 0 meeting an infinite partial, FLife's
    `f ** 0.75` of a frequency column at 0 read from an array built with the differentiated PSD): reverse mode's
    Jacobian times the tangents fills them where it gives numbers (`nan_by_reverse`'s, for derivative and
    jacfwd); where reverse mode refuses or gives NaN too, the NaN stays."""
    from .by_reverse import BY_REVERSE
    if kwargs or len(args) < 2 or type(args[0]) is not tuple or not all(map(_plain_input, args[0])):
        return out
    y, d = out
    if not np.all(np.isfinite(np.asarray(y, dtype=complex))):
        return out
    try:
        other = after_refusal(lambda: BY_REVERSE["jvp"](f, args[0], args[1]), _NoAnswer(), "reverse")
    except Exception:  # (reverse mode refused or failed: the NaN stays)
        return out
    filled = _nan_filled(np.asarray(d), np.asarray(other[1]))
    if filled is None:
        return out
    return y, (type(d)(filled) if np.ndim(d) == 0 and not isinstance(d, np.ndarray) else filled)


def _nan_filled(d: np.ndarray, r: np.ndarray):
    """Forward mode's derivative d with its NaN entries taken from reverse mode's r where r has numbers; None
    where r is no float array of d's shape."""
    if r.shape != d.shape or r.dtype.kind not in "fc":
        return None
    return np.where(np.isnan(d) & ~np.isnan(r), r, d).astype(d.dtype, copy=False)


def _finite_side(y) -> None:
    """A side of the point where f's value is not finite (outside its domain: `np.sqrt(x) * 0` left of 0) gives
    no mean: the NaN stays."""
    try:
        finite = bool(np.all(np.isfinite(np.asarray(y, dtype=complex))))
    except (TypeError, ValueError):
        finite = False
    if not finite:
        raise _NoAnswer()


def _forward_nan_by_sides(name: str, f: Callable, x, d: np.ndarray) -> np.ndarray:
    """Forward mode's `derivative` or `jacfwd` answer d with NaN entries reverse mode left NaN too: the mean of
    its answers at the two sides of x (`mean_of_sides`, as reverse mode's `_nan_by_sides`), where they agree."""
    if _OTHER_MODE[0]:  # (inside another answer's: a side's own NaN stays, no sides of sides)
        return d
    from .forward.api import derivative, jacfwd
    own = derivative if name == "derivative" else jacfwd

    def at_side(moved):
        _finite_side(f(moved[0]))
        return own(f, moved[0])
    _OTHER_MODE[0] = True
    try:
        mean = mean_of_sides(at_side, (x,), f)
    except Exception:  # (a side refused or failed: the NaN stays)
        return d
    finally:
        _OTHER_MODE[0] = False
    if mean is None or mean is False:
        return d
    m = np.asarray(mean)
    if m.shape != d.shape or m.dtype.kind not in "fc":
        return d
    return np.where(np.isnan(d), m, d).astype(d.dtype, copy=False)


class _NoAnswer(Exception):
    """The refusal `after_refusal` raises where reverse mode cannot be asked: the NaN stays."""
