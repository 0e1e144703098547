"""numpy on Duals: `__array_ufunc__` and `__array_function__`, and applying a registry frule to Duals.

Invariant: every function here returns either a plain value (the derivative is zero) or a Dual whose
tangent has the shape `(k,)*chunked + shape(value)`; operands are never mutated.

What is handled here rather than by the registry: arithmetic ufuncs (they share the Python operators'
code), the structural maps that define how an array Dual is laid out (reshaping, joining, reductions by
sum, `zeros_like`), which must know about the chunk axis. Everything else goes to the registry's frules:
directly for one direction; for a chunk of k directions elementwise rules are vectorised from their
partials and other rules are applied once per direction.
"""

from __future__ import annotations

import math
import operator
import os
import sys

import types

import numpy as np

import overdub

from overdub.errors import OverdubError

from ..rules.numpy.shapes import memory_order, reading_order
from ..rules.numpy._util import masked_entries, masked_refused
from ..rules.registry import MissingRule, by_position, library_hint, own_operators, qualified_name, registry
from ..rules.numpy.inplace import at_rounds, refuse_read_only_at
from ..lowered.runtime import (int_cast_jump, JUMP_FUNCTIONS, axis_of, jump_guard, moving_tie, jump_operands, _EQUALITY_CALLS, _WHOLE_OPS, _ZERO_TESTS, ORDER_OPS, SpecialPoint, equality_guard2_fd,
                               equality_guard_fd, near_guard)
from ..rules.watch import JUMP_WATCH, watch_order
from ..rules.frames import is_engine
from ..rules.ties import SINGULAR_AT, singular_still
from .dual import (DETACHED, Dual, DualConversionError, Tag, _conversion_site, own_operators_refused, subclass_attribute, d_abs, d_add, d_div, d_mul, d_neg, d_pow,
                   d_sub, fit, make, matrix_refused, ndim, pad, primal, primal_tree, shape, share_tangent, split, top_tag,
                   zero_tangent)

__all__ = ["array_ufunc", "array_function", "apply_frule", "NoForwardRule", "to_array"]


class NoForwardRule(MissingRule, TypeError):
    """A primitive was reached with Duals and nothing knows its derivative."""


def _ensure_rules_loaded() -> None:
    try:
        import contexts.rules.numpy  # noqa: F401  (registers the numpy rules)
    except ImportError:  # pragma: no cover - written in parallel
        pass


def no_rule(fn, where: str | None = None) -> NoForwardRule:
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    module = getattr(fn, "__module__", None)
    full = qualified_name(fn) if module and module != "builtins" or isinstance(fn, np.ufunc) else name
    return NoForwardRule(
        f"no forward rule for {full}, reached with dual (perturbed) arguments{library_hint(fn)}",
        where=where,
        fix=(f"register one: `from contexts.rules.registry import registry` then "
             f"`@registry.frule({name})` on `def {name.split('.')[-1]}_frule(tangents, *args): return y, dy`"
             " (or `registry.elementwise(fn, partial, ...)`), or make the function pure Python"))


# -- applying rules ------------------------------------------------------------------------------

def per_direction(g, t, tag: Tag):
    """g applied to the tangent t: directly for one direction, stacked over a chunk of k directions."""
    if t is None:
        return None
    if tag.chunk is None:
        return g(t)
    return np.stack([g(t[i]) for i in range(tag.chunk)])


def apply_frule(rule, fn, args: tuple, kwargs: dict, tag: Tag, call=None):
    """fn(*args, **kwargs) on Duals through rule.frule; `call(frule, tangents, *values)` runs the rule
    (the context passes one that recurses into it when values are Duals of outer tags). With a chunk of
    directions, a result whose value is a view of an argument's gets a tangent viewing that argument's
    (`_viewing_tangents`)."""
    y = _apply_frule(rule, fn, args, kwargs, tag, call)
    if tag.chunk is not None and (type(y) is Dual or type(y) in (list, tuple)):
        return _viewing_tangents(y, fn, args, kwargs, tag)
    return y


def _viewing_tangents(y, fn, args: tuple, kwargs: dict, tag: Tag):
    """y (fn's result on duals of a chunk of directions), where its value is a view of argument j's, with
    a tangent that views j's tangent: the rule stacks one tangent per direction, a copy, and a write
    through the view (`np.einsum('ii->i', A)[...] += v`, `np.split(A, 3)[0] *= s`, `np.matrix_transpose`,
    `A.reshape(s, order='F')`) would not reach A's tangent."""
    parts = list(y) if type(y) in (list, tuple) else [y]
    if not any(type(p) is Dual and type(primal(p)) is np.ndarray for p in parts):
        return y
    for j, a in enumerate(args):
        if type(a) is not Dual or a.tag is not tag or type(primal(a)) is not np.ndarray:
            continue
        values = [split(b, tag)[0] for b in args]
        fixed = []
        for i, p in enumerate(parts):
            # (innermost arrays compared: forward over forward's values and tangents are duals themselves)
            # (a copy never overlaps its source: `may_share_memory`'s bounds tell a view from a copy, cheaply)
            if (type(p) is Dual and p.tag is tag and type(primal(p)) is np.ndarray and primal(p).base is not None
                    and np.may_share_memory(primal(p), primal(a)) and type(primal(a.tangent)) is np.ndarray
                    and not np.may_share_memory(primal(p.tangent), primal(a.tangent))):
                def g(t, i=i):
                    out = fn(*values[:j], t, *values[j + 1:], **kwargs)
                    return out[i] if type(y) in (list, tuple) else out
                t = _chunk_view(g, a.tangent)
                p = p if t is None else Dual(p.primal, t, tag)
            fixed.append(p)
        parts = fixed
    return type(y)(parts) if type(y) in (list, tuple) else parts[0]


def keyword_duals_by_position(fn, args: tuple, kwargs: dict, tag: Tag):
    """(args, kwargs) with every keyword argument holding a dual of tag moved to its position in fn's
    signature, the positions between filled by the keywords given or the defaults (`registry.by_position`);
    None where one cannot be."""
    moved = by_position(fn, args, kwargs, tuple(k for k, v in kwargs.items() if holds_dual_of(v, tag)))
    return None if moved is None else moved[:2]


def _apply_frule(rule, fn, args: tuple, kwargs: dict, tag: Tag, call=None):
    if fn in SIGNS and len(args) > SIGNS[fn] and type(d := args[SIGNS[fn]]) is Dual and d.tag is tag \
            and not _called_by_engine():
        # (a sign is an ordering against 0: `np.sign(g(m)) == -1` in a bisection's step, checked for its tie
        # and for closing in, as `g(m) < 0` is; the lowered form guards it the same way)
        equality_guard_fd(d.primal, 0.0, "<", d.tangent)
    for name, v in kwargs.items():
        if holds_dual_of(v, tag):  # (its tangent would be dropped: the rules' tangents are positional)
            moved = keyword_duals_by_position(fn, args, kwargs, tag)  # (`logsumexp(a, b=w)`: the rule's
            if moved is not None:                                            # positions, by fn's signature)
                args, kwargs = moved
                break
            raise NoForwardRule(f"{getattr(fn, '__qualname__', fn)} called with a differentiated value by keyword "
                                f"({name}=) in forward mode", fix="pass it by position")
    values, tangents, sequences = [], [], False
    for a in args:
        v, t = split(a, tag)
        if t is None and type(a) in (list, tuple) and any(type(x) is Dual and x.tag is tag for x in a):
            if _takes_arrays(fn) and all(np.ndim(x) == 0 for x in a):
                # (`np.interp([x0, 0.7], ...)`: numpy's array of numbers, zero tangents for the
                # constants; a sequence's None tangents became NaN in the rule's float array. Not a list
                # of arrays: np.block's pieces)
                v, t = split(to_array(a), tag)
            else:
                # a sequence of duals (`math.fsum([u, v])`): its values and a sequence of their tangents, as
                # the tangent twin hands a sequence's tangent to the rule
                parts = [split(x, tag) for x in a]
                v, t = type(a)(p[0] for p in parts), _Seq(p[1] for p in parts)
                sequences = True
        values.append(v)
        tangents.append(t)
    run = call or _call
    if tag.chunk is None:
        try:
            y, dy = run(rule.frule, tangents, values, kwargs)
        except ZeroDivisionError:
            raise_singular(fn, values, kwargs)
        if dy is not None and isinstance(y, (tuple, list)) and isinstance(dy, (tuple, list)):
            return _outputs(y, [make(yj, dj, tag) if dj is not None else yj for yj, dj in zip(y, dy)])
        return y if dy is None else make(y, dy, tag)
    partials = rule.meta.get("partials")
    if (partials is not None and not kwargs and not sequences and getattr(fn, "nout", 1) == 1
            and not any(type(v) is Dual for v in values)):  # (modf, frexp: a tuple, each its own tangents)
        # (values perturbed by an outer derivative call: the frule runs under the context, below)
        told = rule.meta.get("told")  # (a kink or a cone's tip the frule tells: `rules.ties.told`)
        if told is not None:
            told(values, tangents)
        if (singular := SINGULAR_AT.get(fn)) is not None and len(values) == 1 and tangents[0] is not None \
                and type(values[0]) in (float, np.float64) and singular[1](values[0]) and not np.any(tangents[0]):
            # (`acos(1 + 0 * x)`: a rate of 0 at its singular point, judged from the two sides as the twin's;
            # in the sides' runs and the rerun that judges, no change, as the float rule's `_singular`)
            singular_still(singular[0])
            return make(fn(*values), None, tag)
        y = fn(*values)
        d = ndim(y)
        dy = None
        for p, v, t in zip(partials, values, tangents):
            if p is not None and t is not None:
                try:
                    term = pad(t, v, d, tag) * p(y, *values)
                except ZeroDivisionError:
                    raise_singular(fn, values, {})
                dy = term if dy is None else dy + term
        return make(y, dy, tag)
    # one direction at a time: the frule knows nothing about chunks
    y, dys = None, []
    for i in range(tag.chunk):
        y, dy = run(rule.frule, [None if t is None else _direction(t, i) for t in tangents], values, kwargs)
        dys.append(dy)
    return _chunked(y, dys, tag)


def raise_singular(fn, values, kwargs):
    """Raise, for a ZeroDivisionError met running fn's forward rule: Python's own where fn of the plain
    values raises it (the program's, which its `except ZeroDivisionError` may take), else a `SpecialPoint`:
    the derivative divides by zero at a singular point (sqrt's at 0 under a derivative of a derivative).
    Raised as ZeroDivisionError, the user's `except` took it for the program's own and ran its fallback:
    the derivative was the fallback's, silently."""
    try:
        fn(*primal_tree(values), **primal_tree(kwargs))
    except ZeroDivisionError:
        raise
    except Exception:  # (the plain call fails otherwise: the refusal below says more)
        pass
    raise SpecialPoint(f"the derivative of {getattr(fn, '__qualname__', fn)} divides by zero here: a singular "
                       "point, where it is infinite or has none", where=_conversion_site(),
                       fix="differentiate at a point off the singularity") from None


def apply_writing_frule(rule, fn, args: tuple, kwargs: dict, tag: Tag, call=None):
    """fn(*args, **kwargs) on Duals for a primitive writing into its argument `rule.writes` (a C kernel
    filling the output array it is given: `_ppoly.evaluate(c, x, xp, dx, extrapolate, out)`). Its frule
    writes the primal into that argument's value and returns `(y, the argument's tangent after the call)`,
    written here into the dual's tangent. A plain array cannot take a tangent: refused when it gets one."""
    also = rule.meta.get("writes_also", ())  # (more arguments written: the frule returns a tangent each)
    positions = (rule.writes,) + tuple(also)
    values, tangents = [], []
    for a in args:
        v, t = split(a, tag)
        values.append(v)
        tangents.append(t)
    run = call or _call
    directions = [None] if tag.chunk is None else range(tag.chunk)
    written = []
    y = None
    # each direction's run writes the values again: from the same state (a kernel filtering its argument in
    # place, scipy.ndimage's later axes, would otherwise be applied once per direction)
    # (under an outer derivative call too: its dual, value and tangent, restored; left as the last direction
    # wrote it, the next filtered it again: a Hessian off by the chunk's size)
    before = {w: np.copy(values[w]) for w in positions if tag.chunk is not None and (
        type(values[w]) is np.ndarray or type(values[w]) is Dual and type(primal(values[w])) is np.ndarray)}
    for i in directions:
        ts = tangents if i is None else [None if t is None else t[i] for t in tangents]
        if i:
            for w, old in before.items():
                values[w][...] = old
        y, dw = run(rule.frule, ts, values, kwargs)
        written.append(tuple(dw) if also and dw is not None else (dw,) * len(positions) if dw is None else (dw,))
    for k, w in enumerate(positions):
        target = args[w]
        if type(target) is Dual and target.tag is tag:
            for i, dws in zip(directions, written):
                part = target.tangent if i is None else target.tangent[i]
                part[...] = 0 if dws[k] is None else dws[k]
        elif any(dws[k] is not None and np.any(dws[k]) for dws in written):
            raise DualConversionError(
                f"{getattr(fn, '__qualname__', fn)} writes values that carry a derivative into an array without "
                f"a tangent (its argument {w})",
                fix="make that array with np.empty_like / np.zeros_like of a differentiated value, inside the "
                    "differentiated function")
    return y


class _Seq(list):
    """The tangents of a sequence argument's elements (None where unperturbed), one per element."""


def _direction(t, i):
    """Direction i of a chunked tangent (of each element's, for a sequence argument's)."""
    if type(t) is _Seq:
        return [None if e is None else e[i] for e in t]
    return t[i]


def _chunked(y, dys: list, tag: Tag):
    """y with the tangents of each of the chunk's directions: several outputs (a tuple, or a named tuple
    such as slogdet's or eigh's result) each stack their own directions."""
    if all(dy is None for dy in dys):
        return y
    if isinstance(y, (tuple, list)) and any(isinstance(dy, (tuple, list)) for dy in dys):
        return _outputs(y, [_chunked(yj, [None if dy is None else dy[j] for dy in dys], tag)
                            for j, yj in enumerate(y)])
    return _stacked(y, dys, tag)


def _stacked(y, dys, tag):
    """The Dual of y whose chunk of tangents are the directions dys (None: zero)."""
    if all(dy is None for dy in dys):
        return y
    zero = zero_tangent(y, _ONE)
    return make(y, np.stack([zero if dy is None else fit(dy, y, _ONE) for dy in dys]), tag)


def _outputs(y, items):
    """items as the sequence type of y (a named tuple such as EighResult keeps its fields)."""
    return type(y)(*items) if hasattr(y, "_fields") else type(y)(items)


_ONE = Tag()


def _call(frule, tangents, values, kwargs):
    """A rule reached with Duals of an outer derivative call (nested forward mode: the values are Duals
    themselves) runs under the forward context, so the numpy functions inside the rule (`np.asarray`,
    math) take and differentiate those Duals too (as ForwardContext._run_rule does for intercepted calls)."""
    if any(type(v) is Dual for v in values):
        import overdub
        if overdub.is_recursable(frule):
            from .context import run_inside
            return run_inside(frule, (tangents, *values), kwargs)
    return frule(tangents, *values, **kwargs)


# -- ufuncs --------------------------------------------------------------------------------------

_OWN_UFUNCS = {
    np.add: d_add, np.subtract: d_sub, np.multiply: d_mul, np.true_divide: d_div, np.power: d_pow,
    np.float_power: d_pow, np.negative: d_neg, np.absolute: d_abs, np.positive: lambda a: a,
}


_NUMPY_SCALARS = {float: np.float64, complex: np.complex128}


def _numpy_scalar(v):
    """v with a Python float or complex value as numpy's (a dual's innermost value too): numpy's arithmetic
    ufuncs compute on numpy scalars (`np.abs(t - s) ** -0.5` at t = s is inf, where the float's `**`
    raised ZeroDivisionError in the user's code)."""
    kind = type(v)
    if kind is Dual:
        inner = _numpy_scalar(v.primal)
        return v if inner is v.primal else Dual(inner, v.tangent, v.tag)
    to = _NUMPY_SCALARS.get(kind)
    return v if to is None else to(v)


_SCANS = {np.add: np.cumsum, np.multiply: np.cumprod}
EQUALS = {np.equal: "==", np.not_equal: "!=", operator.eq: "==", operator.ne: "!=",  # (`checked_equality`)
          np.less: "<", np.less_equal: "<=", np.greater: ">", np.greater_equal: ">=",   # (orderings: their ties)
          operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">="}


SIGNS = {np.sign: 0, np.signbit: 0, np.heaviside: 0, np.copysign: 1, math.copysign: 1}  # (whose sign is taken)


# whole-array and approximate equality of a dual and a value (`lowered.runtime._EQUALITY_CALLS`'s "all==",
# "allclose", "isclose"): a memo cache's `np.allclose(z, self._last_z)` singles out a point as `==` does
WHOLE_EQUALS = {getattr(np, name): op for name, op in _EQUALITY_CALLS.items() if op in _WHOLE_OPS or name == "isclose"}


# tests of a dual's being zero (`np.any(d)`, `np.count_nonzero(d)`: `d != 0`), as `lowered.runtime._ZERO_TESTS`
ZERO_TESTS = {getattr(np, name): op for name, op in _ZERO_TESTS.items() if callable(getattr(np, name, None))}
CHECKED_TESTS = {**WHOLE_EQUALS, **ZERO_TESTS}


def checked_test(func, args, kwargs=None) -> None:
    """A whole-array equality (`checked_whole_equality`) or a test of being zero (`np.any(d)`) of a dual
    in the user's code: refused where it holds and d's tangent moves it there."""
    if func in ZERO_TESTS:
        if args and type(args[0]) is Dual:
            equality_guard_fd(args[0].primal, 0.0, ZERO_TESTS[func], args[0].tangent)
        return
    checked_whole_equality(func, args, kwargs)


def checked_whole_equality(func, args, kwargs=None) -> None:
    """`np.allclose(d, other)` (array_equal, array_equiv, isclose) with one dual d: refused where it holds
    and d's tangent moves it there (for approximate equality, out of its band: `lowered.runtime._FLIP`)."""
    if len(args) < 2 or (type(args[0]) is not Dual and type(args[1]) is not Dual):
        return
    close = None
    if func in _CLOSE_FUNCTIONS:
        kwargs = kwargs or {}
        close = (primal(args[2]) if len(args) > 2 else kwargs.get("rtol", 1e-5),
                 primal(args[3]) if len(args) > 3 else kwargs.get("atol", 1e-8))
    if type(args[0]) is Dual and type(args[1]) is Dual and args[0].tag is args[1].tag:
        equality_guard2_fd(args[0].primal, args[1].primal, WHOLE_EQUALS[func], args[0].tangent, args[1].tangent,
                           close)
        return
    d, other = args[:2] if type(args[0]) is Dual else args[1::-1]
    equality_guard_fd(d.primal, primal(other), WHOLE_EQUALS[func], d.tangent, close)


_CLOSE_FUNCTIONS = frozenset({np.allclose, np.isclose})


def _called_by_engine() -> bool:
    """The call being dispatched (a ufunc, a numpy function) comes from the engines' own code (a rule: abs's
    adjoint takes a sign), past forward mode's dispatch, the core's interception and numpy's Python code."""
    frame = _outward(sys._getframe(2), _PASSING_THROUGH)
    return frame is not None and is_engine(frame.f_code.co_filename)


def _users_caller():
    """The frame calling the ufunc being dispatched (for `_on_values`: past `array_ufunc` and
    Dual.__array_ufunc__), outward of forward mode's dispatch, the core's operators and interception and
    numpy's Python code; None where that is the engines' own code (a rule's comparison)."""
    frame = _outward(sys._getframe(2), _PASSING_THROUGH[1], _DISPATCH_FILES)
    return None if frame is None or is_engine(frame.f_code.co_filename) else frame


def _outward(frame, directories, files=frozenset()):
    """frame, or the first frame outward of it not in `directories` (a prefix or a tuple of them), `files`
    or numpy's Python code."""
    while frame is not None and (frame.f_code.co_filename in files or frame.f_code.co_filename.startswith(
            directories) or os.sep + "numpy" + os.sep in frame.f_code.co_filename):
        frame = frame.f_back
    return frame


# forward mode's dispatch of an operator or a call to a dual (its other files' comparisons are the engine's own)
_DISPATCH_FILES = frozenset(os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
                            for name in ("arrays.py", "dual.py", "context.py"))


_PASSING_THROUGH = (os.path.dirname(os.path.abspath(__file__)) + os.sep,
                    os.path.dirname(os.path.abspath(overdub.__file__)) + os.sep)


def checked_equality(ufunc, inputs) -> None:
    """`np.equal(x, other)` (`np.not_equal`, an ordering: `np.less`, `operator.gt`, ...) with one dual x:
    refused where they are equal and x's tangent moves it there (`lowered.runtime.SpecialPoint`), as
    `x == other`."""
    if (type(inputs[0]) is Dual) == (type(inputs[1]) is Dual):
        if type(inputs[0]) is Dual and inputs[0].tag is inputs[1].tag and EQUALS[ufunc] in ORDER_OPS:
            near_guard(inputs[0].primal, inputs[1].primal, EQUALS[ufunc], inputs[0].tangent, inputs[1].tangent)
        return
    d, other = inputs if type(inputs[0]) is Dual else inputs[::-1]
    equality_guard_fd(d.primal, primal(other), EQUALS[ufunc], d.tangent)


def _nondiff(ufunc) -> bool:
    _ensure_rules_loaded()
    rule = registry.get(ufunc)
    return rule is not None and rule.kind == "nondiff"


def _on_values(ufunc, inputs, kwargs):
    """A nondifferentiable ufunc (a comparison, a test) on duals: run on their values (a bool result, also
    into a plain `out=` array), an equality or ordering in the user's code checked for a tie first (`np.equal(x,
    0)` run natively under `hessian`: as `x == 0`). Called by `array_ufunc`, itself by Dual.__array_ufunc__."""
    if ufunc in EQUALS and len(inputs) == 2 and (caller := _users_caller()) is not None:
        # (the user's frame past the operator's dispatch: `y[0] < a` of a numpy number and a dual reaches
        # here through the core's operators, whose frame was taken for the engines': a branch on a moving
        # value unwatched, odeint's solution switching at a moving time silently 0 for 0.5)
        if (w := JUMP_WATCH.get()) is not None:
            watch_order(w, inputs[0], inputs[1], EQUALS[ufunc], caller)
        checked_equality(ufunc, inputs)
    elif ufunc in EQUALS and len(inputs) == 2:  # (a rule's comparison under an outer derivative: its kink)
        a, b = inputs
        moving_tie(a, b, a.tangent if type(a) is Dual else None, b.tangent if type(b) is Dual else None)
    elif ufunc in SIGNS and len(inputs) > SIGNS[ufunc] and type(d := inputs[SIGNS[ufunc]]) is Dual \
            and not _called_by_engine():
        equality_guard_fd(d.primal, 0.0, "<", d.tangent)  # (np.signbit: `_apply_frule`'s check of a sign)
    return ufunc(*map(primal, inputs), **kwargs)


def _holds_matrix(values) -> bool:
    """A np.matrix among values, or a dual of one (refused: `rules.numpy._util.matrix_refused`); a masked
    array with masked entries, or a dual of one, is refused here (`masked_refused`)."""
    for v in values:
        t = type(v)
        if t is _MATRIX or t is Dual and type(v.primal) is _MATRIX:
            return True
        if t is not np.ndarray and (masked_entries(v) or t is Dual and masked_entries(v.primal)):
            raise masked_refused("a numpy function")
    return False


_MATRIX = np.matrix


def array_ufunc(ufunc, method, inputs, kwargs):
    """Dual.__array_ufunc__: arithmetic ourselves, other ufuncs by their registry rule."""
    if _holds_matrix(inputs):
        raise matrix_refused()
    if method == "reduce" and len(inputs) == 1:  # np.add.reduce: np.sum's rule, axis 0 by default
        from ..rules.numpy.reductions import reduce_options
        fn, options = reduce_options(ufunc, (), kwargs)
        return array_function(fn, inputs, options)
    if method == "outer" and len(inputs) == 2 and not kwargs:  # ufunc(a[..., None...], b)
        from ..rules.numpy.reductions import outer_left
        return ufunc(outer_left(*inputs), inputs[1])
    if method == "accumulate" and ufunc in _SCANS and len(inputs) == 1 and kwargs.get("out") is None:
        options = dict(kwargs, axis=kwargs.get("axis", 0))  # (ufunc.accumulate's axis is 0, np.cumsum's None)
        options.pop("out", None)
        return array_function(_SCANS[ufunc], inputs, options)
    out = kwargs.get("out")
    if method == "__call__" and out is not None:
        kinds = [type(o).__name__ for o in (out if isinstance(out, tuple) else (out,))
                 if isinstance(o, np.ndarray) and type(o) is not np.ndarray]
        if kinds:  # (an ndarray subclass's instance: written in C, its tangent lost: 0)
            raise OverdubError(f"np.{ufunc.__name__}(..., out=...) into an array of class {kinds[0]} on dual "
                               "arguments (it cannot hold a tangent)", fix="assign the result instead")
    if method == "__call__" and out is not None:
        if _nondiff(ufunc) and not any(type(o) is Dual for o in (out if isinstance(out, tuple) else (out,))):
            return _on_values(ufunc, inputs, kwargs)  # (`np.greater_equal(a, b, out=mask)`: pvlib's iam.ashrae)
        return _into_out(ufunc, inputs, kwargs, out)
    if method == "at" and ufunc in (np.add, np.subtract) and type(inputs[0]) is Dual:
        return _add_at(ufunc, *inputs)
    if method == "at" and type(inputs[0]) is Dual and ufunc.nout == 1 and len(inputs) == ufunc.nin + 1:
        return _ufunc_at(ufunc, *inputs)
    if method != "__call__":
        raise OverdubError(
            f"np.{ufunc.__name__}.{method}(...) is not supported on dual arrays (only reduce, outer, "
            "add/multiply.accumulate, and add.at and subtract.at into a dual array)",
            fix="call the ufunc plainly on dual arrays, or accumulate into a dual array")
    own = _OWN_UFUNCS.get(ufunc)
    if own is not None and not kwargs:
        for a in inputs:  # (the duals' arithmetic is Python's operators: `np.multiply(v, x)` ran a Vec's
            p = a.primal if type(a) is Dual else a  # own `__mul__`, which doubles: 8.0 for 8.2, gen13 W3)
            if type(p) is not np.ndarray and isinstance(p, np.ndarray) and own_operators(type(p)):
                own_operators_refused(type(p))
        return own(*map(_numpy_scalar, inputs))
    if ufunc is np.matmul and not kwargs:
        return multilinear(np.matmul, inputs, {})
    if (jump := JUMP_FUNCTIONS.get(ufunc)) is not None and inputs and type(inputs[0]) is Dual:
        jump_guard(*jump, inputs[0].primal, inputs[0].tangent)  # (a moving value exactly on a jump)
    elif ufunc is np.sign and inputs and type(inputs[0]) is Dual and not np.iscomplexobj(primal_tree(inputs[0])):
        jump_guard("sign", "np.sign", inputs[0].primal, inputs[0].tangent)  # (at 0: |x|'s kink, under `hessian`)
    if _nondiff(ufunc):
        return _on_values(ufunc, inputs, kwargs)
    rule = registry.get(ufunc)
    tag = top_tag(inputs)
    if rule is None or rule.frule is None:
        raise no_rule(ufunc)
    return apply_frule(rule, ufunc, inputs, kwargs, tag)


def _into_out(ufunc, inputs, kwargs, out):
    """`ufunc(..., out=o)` with o a dual array: computed plainly, then written into o's value and tangent
    (where `where=` allows), so o's views see it. A plain o cannot hold a tangent: refused."""
    o = out[0] if isinstance(out, tuple) and len(out) == 1 else out
    if o is Ellipsis:  # numpy 2's `out=...`: an array result even for 0-d inputs (np.percentile's _lerp)
        rest = {k: v for k, v in kwargs.items() if k != "out"}
        result = array_ufunc(ufunc, "__call__", inputs, rest)
        if type(result) is Dual and type(result.primal) is not np.ndarray:
            result = Dual(np.asarray(result.primal), np.asarray(result.tangent), result.tag)
        return result
    scalar = type(o) is Dual and type(o.primal) is not Dual and isinstance(o.primal, np.generic)
    if (type(o) is not Dual or type(primal(o)) is not np.ndarray) and not scalar:
        raise PlainArrayWrite(
            f"np.{ufunc.__name__}(..., out=...) into an array without a tangent, on dual arguments",
            fix="assign the result (`y = np.f(...)`) instead of writing into `out=`")
    rest = {k: v for k, v in kwargs.items() if k not in ("out", "where")}
    if top_tag(inputs) is None:  # a dual `out=` only (`np.sin(c, out=d)`): what is written has no tangent
        result = ufunc(*inputs, **rest)
        result = Dual(result, zero_tangent(np.asarray(result), o.tag), o.tag)
    else:
        result = array_ufunc(ufunc, "__call__", inputs, rest)
    if type(result) is Dual and result.tag is o.tag and np.shape(result.primal) != np.shape(o.primal):
        result = _broadcast_into(result, np.shape(o.primal))  # (inputs broadcast to out's shape, as numpy does)
    where = kwargs.get("where", True)
    if where is True:
        merged = result
    else:
        mask = np.broadcast_to(where, np.shape(o.primal))
        merged = Dual(np.where(mask, result.primal, o.primal), np.where(mask, result.tangent, o.tangent)
                      if o.tag.chunk is None else np.where(mask[None], result.tangent, o.tangent), o.tag)
    if scalar:
        # a dual of a numpy scalar (numpy's `out=...` made a 0-d result, as np.percentile's _lerp does, and
        # writes into it): the dual object itself takes the new value, so the caller's name sees it
        if type(merged) is not Dual or merged.tag is not o.tag:
            raise OverdubError(f"np.{ufunc.__name__}(..., out=...) into a dual scalar of another derivative call",
                               fix="assign the result (`y = np.f(...)`) instead of writing into `out=`")
        o.primal = type(o.primal)(np.asarray(merged.primal).reshape(()))
        o.tangent = merged.tangent
        return o
    return o._update(merged)


def _broadcast_into(d, shape: tuple):
    """The dual d broadcast to shape, its tangent with it (a chunk's directions leading): a ufunc's result
    written into a larger `out=` (written as it was, the smaller result left out unchanged: its old tangent,
    or 0)."""
    p = np.broadcast_to(d.primal, shape)
    p = p.copy() if type(p) is np.ndarray else p
    t = d.tangent
    lead = () if d.tag.chunk is None else np.shape(t)[:1]
    if lead:  # (the directions' axis first: the value's own axes aligned on the right of it)
        small = np.shape(t)[1:]
        t = np.reshape(t, lead + (1,) * (len(shape) - len(small)) + small)
    t = np.broadcast_to(t, lead + shape)
    return Dual(p, t.copy() if type(t) is np.ndarray else t, d.tag)


def _add_at(ufunc, a, idx, b=None):
    """`np.add.at(a, idx, b)` / `np.subtract.at` on a dual array: the same unbuffered update on the value
    and on the tangent (one more leading axis with chunks)."""
    tag = a.tag
    if isinstance(b, (list, tuple)) and has_dual(b):
        b = to_array(b)  # (a list of values, some perturbed: `[x[2], 2.0]`)
    if type(b) is Dual and b.tag.order > tag.order:
        raise OverdubError(
            f"np.{ufunc.__name__}.at of a value perturbed by an inner derivative call into an array of an outer one",
            fix="create the array inside the inner function, or return the value instead of storing it")
    bv, bt = split(b, tag) if type(b) is Dual else (b, None)
    if type(bv) is Dual and type(a.primal) is not Dual:
        raise OverdubError(f"np.{ufunc.__name__}.at of values perturbed by an outer derivative call into an "
                           "array that only an inner one perturbs", fix="make the array from the input (`x * 0.0`)")
    value = a.primal
    while type(value) is Dual:
        value = value.primal
    refuse_read_only_at(ufunc, value)
    ufunc.at(a.primal, idx, bv)  # (nested derivatives: the value's own update, at every level)
    if type(bt) is Dual and type(a.tangent) is np.ndarray:
        share_tangent(a)  # the tangent takes an outer perturbation before it receives one
        if type(a.tangent) is not Dual:
            raise OverdubError(f"np.{ufunc.__name__}.at: the tangent of the array cannot take the update",
                               fix="accumulate into a new array (`a = a + np.bincount(...)`)")
    if bt is not None:
        if tag.chunk is None:
            ufunc.at(a.tangent, idx, bt)
        else:
            tidx = (slice(None),) + (idx if type(idx) is tuple else (idx,))
            target = np.ndim(a.tangent[tidx])  # (the chunk axis first: b's tangent's lines up behind it)
            if np.ndim(bt) < target:
                bt = np.reshape(bt, np.shape(bt)[:1] + (1,) * (target - np.ndim(bt)) + np.shape(bt)[1:])
            ufunc.at(a.tangent, tidx, bt)
    return None


def _ufunc_at(ufunc, a, idx, b=None):
    """`ufunc.at(a, idx, b)` on a dual array for a ufunc other than add and subtract (multiply, maximum,
    divide, negative...): numpy's writes one after another, a round of distinct positions at a time
    (`at_rounds`), each by the ufunc's frule on the values and tangents the positions hold then."""
    tag = a.tag
    if isinstance(b, (list, tuple)) and has_dual(b):
        b = to_array(b)  # (a list of values, some perturbed: `[x[2], 2.0]`, gen21 C1)
    rule = registry.get(ufunc)
    bv, bt = split(b, tag) if type(b) is Dual else (b, None)
    if (rule is None or rule.frule is None or type(a.primal) is not np.ndarray or type(a.tangent) is not np.ndarray
            or type(bv) is Dual or type(bt) is Dual or isinstance(b, (list, tuple)) and has_dual(b)):
        raise OverdubError(f"np.{ufunc.__name__}.at(...) on dual arrays of a derivative of a derivative, or "
                           "without a forward rule for the ufunc", fix="write the update as a loop over the indices")
    refuse_read_only_at(ufunc, a.primal)
    shape = a.primal.shape
    positions, values, rounds = at_rounds(shape, idx, bv)
    value = np.array(a.primal, dtype=np.result_type(a.primal, float)).reshape(-1)
    lead = (tag.chunk,) if tag.chunk else ()
    tangent = np.array(a.tangent).reshape(lead + (-1,))
    written = np.shape(np.arange(value.size).reshape(shape)[np.asarray(idx) if type(idx) is list else idx])
    tb = None if bt is None else np.broadcast_to(bt, lead + written).reshape(lead + (-1,))
    for r in rounds:
        at = positions[r]
        av = value[at]
        directions = [(tangent[i] if lead else tangent, None if tb is None else (tb[i] if lead else tb))
                      for i in range(tag.chunk or 1)]
        y = None
        for i, (ta, tbi) in enumerate(directions):
            if values is None:
                y, dy = rule.frule((ta[at],), av)
            else:
                y, dy = rule.frule((ta[at], None if tbi is None else tbi[r]), av, values[r])
            (tangent[i] if lead else tangent)[at] = 0 if dy is None else dy
        value[at] = y
    a.primal[...] = value.reshape(shape)
    a.tangent[...] = tangent.reshape(a.tangent.shape)
    return None


# -- array functions -----------------------------------------------------------------------------

def linear(fn):
    """A map linear in its first argument: applied to the tangent as to the primal."""
    def impl(x, *rest, **kwargs):
        tag = top_tag((x,))
        if type(x) is Dual:
            share_tangent(x)
        xv, xt = split(x, tag)
        y = fn(xv, *rest, **kwargs)
        if tag is not None and tag.chunk is not None and xt is not None and _is_view_of(y, xv):
            t = _chunk_view(lambda t: fn(t, *rest, **kwargs), xt)
            if t is not None:
                return Dual(y, t, tag)
        return make(y, per_direction(lambda t: fn(t, *rest, **kwargs), xt, tag), tag)
    impl.__name__ = f"{getattr(fn, '__name__', 'fn')}_pushforward"
    return impl


def _is_view_of(y, x) -> bool:
    y, x = primal(y), primal(x)
    return type(y) is np.ndarray and type(x) is np.ndarray and np.shares_memory(y, x)


def _chunk_view(g, t):
    """g (a map whose result is a view of its argument) applied to each direction of the chunked tangent
    t, as one view of t: the directions are equally strided slices of t, so their views differ only by
    t's leading stride. None when g's result is not a view of its argument. Without this the tangent
    would be a stacked copy, and an in-place change through the view would not reach t. A dual t (nested
    derivatives) gets views of its value and of its tangent (both directions axes, with a chunk)."""
    if type(t) is Dual:
        value = _chunk_view(g, t.primal)
        if value is None or t.tangent is None:
            return None
        if t.tag.chunk is None:
            tangent = _chunk_view(g, t.tangent)
        else:
            tangent = _chunk_view(lambda u: _chunk_view(g, u), t.tangent)
        return None if tangent is None else Dual(value, tangent, t.tag)
    if type(t) is not np.ndarray:
        return None
    r0 = g(t[0])
    if type(r0) is not np.ndarray or not np.shares_memory(r0, t):
        return None
    # the directions' views, one stride of t's leading axis apart, from r0's first element (r0's dtype:
    # np.real / np.imag of a complex t are float views of it); t's own memory order does not matter
    view = np.lib.stride_tricks.as_strided(r0, (t.shape[0],) + r0.shape, (t.strides[0],) + r0.strides)
    if t.shape[0] > 1 and not (np.shares_memory(view[-1], t[-1]) and np.array_equal(view[-1], g(t[-1]))):
        return None
    return view


def multilinear(fn, args, kwargs):
    """A map linear in each argument separately (products, dot, matmul, einsum): one term per Dual."""
    tag = top_tag(args)
    if any(type(a) in (list, tuple) for a in args):  # (`np.dot(m, [t[0], t[1]])` of duals: numpy's array of
        args = [to_array(a) if type(a) in (list, tuple) and holds_dual_of(a, tag) else a for a in args]  # them)
    values = [split(a, tag)[0] for a in args]
    y = fn(*values, **kwargs)
    dy = None
    for j, a in enumerate(args):
        t = split(a, tag)[1]
        if t is None:
            continue
        def term(tj, j=j):
            return fn(*values[:j], tj, *values[j + 1:], **kwargs)
        dy = per_direction(term, t, tag) if dy is None else dy + per_direction(term, t, tag)
    return make(y, dy, tag)


def join(fn):
    """A map linear in a sequence of arrays (concatenate, stack, ...)."""
    def impl(arrays, *rest, **kwargs):
        if kwargs.get("out") is not None:  # (`np.concatenate(parts, out=o)`: computed, then written into o)
            out = kwargs.pop("out")
            return write_out(fn, impl(arrays, *rest, **kwargs), out)
        arrays = [a if type(a) is Dual else to_array(a) if has_dual(a) else np.asarray(a) for a in arrays]
        tag = top_tag(arrays)
        if tag is None:
            return fn(arrays, *rest, **kwargs)
        values = [split(a, tag)[0] for a in arrays]
        y = fn(values, *rest, **kwargs)
        tangents = [split(a, tag)[1] for a in arrays]
        tangents = [zero_tangent(v, tag) if t is None else t for v, t in zip(values, tangents)]
        if tag.chunk is None:
            return make(y, fn(tangents, *rest, **kwargs), tag)
        dy = np.stack([fn([t[i] for t in tangents], *rest, **kwargs) for i in range(tag.chunk)])
        return make(y, dy, tag)
    impl.__name__ = f"{getattr(fn, '__name__', 'fn')}_pushforward"
    return impl


class PlainArrayWrite(OverdubError):
    """Perturbed values written into an array without a tangent (`out=`, `np.copyto`, `np.put`): refused; a
    tangent twin's call meeting it has its caller run on duals from the start, where such an array a plain
    call made (`np.zeros`) is a dual."""


def _insert(arr, obj, values, axis=None):
    """np.insert: linear in the array and the values inserted (spectrum's `np.insert(a, 0, 1)`)."""
    arr = arr if type(arr) is Dual else to_array(arr) if has_dual(arr) else np.asarray(arr)
    values = values if type(values) is Dual else to_array(values) if has_dual(values) else np.asarray(values)
    tag = top_tag((arr, values))
    (av, at), (vv, vt) = split(arr, tag), split(values, tag)
    y = np.insert(av, obj, vv, axis=axis)
    if tag is None or np.asarray(y).dtype.kind not in "fc":
        return y
    at = zero_tangent(av, tag) if at is None else at
    vt = zero_tangent(vv, tag) if vt is None else vt
    if tag.chunk is None:
        return make(y, np.insert(at, obj, vt, axis=axis), tag)
    return make(y, np.stack([np.insert(at[i], obj, vt[i], axis=axis) for i in range(tag.chunk)]), tag)


def _reshape(x, newshape=None, order="C", **kwargs):
    newshape = kwargs.pop("shape", newshape)
    if order == "A":  # (by the value's layout: the tangent's may differ)
        order = reading_order(primal(x.primal), (), {"order": order}, 0)
    share_tangent(x)
    tag = x.tag
    o = {} if order == "C" else {"order": order}  # (C order unnamed: dask's reshape takes no `order`)
    y = np.reshape(x.primal, newshape, **o)
    py, px = primal(y), primal(x.primal)  # (innermost arrays: forward over forward's values are duals)
    viewing = type(py) is np.ndarray and type(px) is np.ndarray and np.may_share_memory(py, px)
    if tag.chunk is None:
        t = np.reshape(x.tangent, newshape, **o)
    elif order != "C":
        g = lambda t: np.reshape(t, newshape, order=order)  # noqa: E731
        view = _chunk_view(g, x.tangent) if viewing else None  # (a view in F order too)
        t = view if view is not None else per_direction(g, x.tangent, tag)
    else:
        t = np.reshape(x.tangent, (tag.chunk,) + y.shape)
    if not viewing and type(t) is np.ndarray and type(x.tangent) is np.ndarray and np.may_share_memory(t, x.tangent):
        t = t.copy()  # (numpy copied the value, an F-ordered one's reshape: the tangent must not be a view)
    elif viewing and type(t) is np.ndarray and type(x.tangent) is np.ndarray and not np.may_share_memory(t, x.tangent):
        DETACHED[id(t)] = t  # (a view of the value, a copy of the tangent laid out otherwise: a write refused)
    return Dual(y, t, tag) if type(t) is np.ndarray else make(y, t, tag)


def _ravel(x, order="C"):
    if order in ("A", "K"):  # (read as the value is laid out; 'K' of an array neither C nor F contiguous: a copy)
        order = reading_order(primal(x.primal), (), {"order": order}, 0)
        if order == "K":
            return _reshape(x, -1)[memory_order(primal(x.primal))]
    out = _reshape(x, -1, order=order)
    px = primal(x.primal)
    if type(px) is np.ndarray and order in ("C", "F") and not np.may_share_memory(np.ravel(px, order=order), px):
        # (numpy's ravel copies a non-contiguous array where a reshape may view it, `a[::2].ravel()`: taken
        # for a view, a write into the copy changed the array, value and tangent)
        return out.copy()
    return out


def _transpose(x, axes=None):
    share_tangent(x)
    tag = x.tag
    y = np.transpose(x.primal, axes)
    if tag.chunk is None:
        return Dual(y, np.transpose(x.tangent, axes), tag)
    n = ndim(x.primal)
    if isinstance(axes, (int, np.integer)):  # (`x.transpose(0)` of a 1-d x)
        axes = (axes,)
    axes = range(n - 1, -1, -1) if axes is None else [a % n for a in axes]
    return Dual(y, np.transpose(x.tangent, (0,) + tuple(a + 1 for a in axes)), tag)


def _sum(x, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    if out is not None:
        raise OverdubError("np.sum(..., out=...) is not supported on Duals", fix="drop `out=`")
    tag = top_tag((x,))
    if tag is None or type(x) is not Dual:
        if "initial" in kwargs and has_dual(x):  # (`linear` would add it to the tangent too)
            return np.sum(x, axis=axis, dtype=dtype, keepdims=keepdims, **{k: v for k, v in kwargs.items()
                                                                        if k != "initial"}) + kwargs["initial"]
        return linear(np.sum)(x, axis=axis, dtype=dtype, keepdims=keepdims, **kwargs)
    if keepdims:  # (passed only when asked: an ndarray subclass's `sum` may not take it, quantities' Quantity)
        kwargs["keepdims"] = True
    y = np.sum(x.primal, axis=axis, dtype=dtype, **kwargs)
    kwargs.pop("initial", None)  # (a constant added to the sum: none to its tangent)
    if tag.chunk is None:
        return make(y, np.sum(x.tangent, axis=axis, dtype=dtype, **kwargs), tag)
    n = ndim(x.primal)
    if axis is None:
        axis = tuple(range(n))
    shifted = tuple(a % n + 1 for a in axis) if isinstance(axis, tuple) else axis % n + 1
    return make(y, np.sum(x.tangent, axis=shifted, dtype=dtype, **kwargs), tag)


def _shifted(axes, n):
    """Axes of a value of ndim n as axes of its chunked tangent (one leading axis of directions)."""
    if isinstance(axes, (tuple, list)):
        return type(axes)(a % n + 1 for a in axes)
    return axes % n + 1


def _axes_map(fn, *names):
    """fn (moveaxis, swapaxes, squeeze, expand_dims, flip) on a dual array: with a chunk of tangents,
    the same call on the tangents with the axes shifted past the directions axis, so that the result's
    tangent is a view where its value is one (an in-place change through it reaches the original's
    tangent; stacking per direction would copy)."""
    plain = linear(fn)

    def impl(x, *args, **kwargs):
        if type(x) is not Dual or x.tag.chunk is None or len(args) + len(kwargs) != len(names):
            return plain(x, *args, **kwargs)
        share_tangent(x)
        bound = dict(zip(names, args), **kwargs)
        y = fn(x.primal, **bound)
        n = ndim(y) if fn is np.expand_dims else ndim(x.primal)
        t = fn(x.tangent, **{k: (tuple(range(1, n + 1)) if v is None else _shifted(v, n))
                             for k, v in bound.items()})
        return Dual(y, t, x.tag)
    impl.__name__ = f"{fn.__name__}_pushforward"
    return impl


_SEVERAL = type(np.atleast_1d(0.0, 0.0))  # (numpy 2 returns a tuple for several arguments, numpy 1 a list)


def _each(fn):
    """np.atleast_1d and kin: each argument on its own (a tuple of results for several, as numpy 2's: a list made
    numpy's own `if not isinstance(arrs, tuple): arrs = (arrs,)` in np.dstack stack the list, gen24 W17)."""
    one = linear(fn)

    def impl(*arys):
        outs = [one(a) if type(a) is Dual else fn(a) for a in arys]
        return outs[0] if len(outs) == 1 else _SEVERAL(outs)
    impl.__name__ = f"{fn.__name__}_pushforward"
    return impl


def _broadcast_to(x, shape_, subok=False):
    tag = x.tag
    y = np.broadcast_to(x.primal, shape_)
    t = pad(x.tangent, x.primal, len(y.shape), tag)
    return Dual(y, np.broadcast_to(t, ((tag.chunk,) if tag.chunk else ()) + y.shape), tag)


def _full_like_dual(a, fill_value, dtype=None, order="K", subok=True, shape=None):
    """np.full_like of a dual array or a dual fill value: zeros like a (a dual of zero tangent) plus the
    value, whose tangent fills it (the value was written as a constant: numpy's copyto refused a dual one)."""
    if type(fill_value) is not Dual:  # (a constant fill: the array like a, of zero tangent where it is a dual's)
        return _zeros_like_dual(np.full_like)(a, fill_value, dtype=dtype, order=order, subok=subok, shape=shape)
    out = np.zeros_like(a, dtype=dtype, order=order, subok=subok, shape=shape)
    if np.dtype(primal(out).dtype).kind not in "fc":
        return np.full_like(primal(a), primal(fill_value), dtype=dtype, order=order, subok=subok, shape=shape)
    if type(out) is not Dual:  # (a plain prototype, the value by keyword: scipy's `xp.full_like(cond, fill_value=p)`;
        # the zeros were a plain array, into which the dual was written: refused)
        if np.broadcast_shapes(out.shape, np.shape(primal(fill_value))) != out.shape:
            return np.full_like(primal(a), primal(fill_value), dtype=dtype, order=order, subok=subok, shape=shape)
        y = out + fill_value  # (numpy's error above for a value that does not broadcast to the shape)
        return y if primal(y).dtype == out.dtype else y.astype(out.dtype)
    out[...] = fill_value
    return out


def _zeros_like_dual(fill):
    def like(x, *args, **kwargs):
        tag = x.tag
        inner = x.primal
        value = like(inner, *args, **kwargs) if type(inner) is Dual else fill(inner, *args, **kwargs)
        if type(value) is not Dual and np.asarray(value).dtype.kind not in "fc":
            return value  # (`np.zeros_like(x, dtype=bool)`: flags and counts carry no tangent)
        return Dual(value, zero_tangent(value, tag), tag)
    return like


def to_array(obj, dtype=None):
    """np.array for (nested lists of) Duals: an array Dual, not an object array."""
    if type(obj) is Dual:
        out = Dual(to_array(obj.primal), to_array(obj.tangent), obj.tag)
        return out.astype(dtype) if dtype is not None else out
    if isinstance(obj, (list, tuple)):
        if not any(type(x) is Dual or isinstance(x, (list, tuple)) for x in obj):
            return np.asarray(obj, dtype=dtype)
        if (mixed := _object_items(obj, dtype)) is not None:
            return mixed
        return np.stack([to_array(x, dtype) for x in obj]) if obj else np.asarray(obj, dtype=dtype)
    return np.asarray(obj, dtype=dtype)


def _object_items(obj, dtype):
    """A flat list of duals beside items numpy keeps as objects (`np.array((n, df, af, None, None))` of an
    `np.vectorize`'s outputs, 0-d arrays among them): numpy's object array of the values, each item as numpy
    keeps it (a 0-d array stays one), and the tangents item by item in the same form — np.stack made the
    items scalars, and `res[1][()]` then failed on a float tangent. None where it is not such a list."""
    if dtype is not None and np.dtype(dtype) != object:
        return None
    duals = [x for x in obj if type(x) is Dual]
    if not duals:
        return None
    tag = duals[0].tag
    if tag.chunk is not None or any(x.tag is not tag for x in duals) or any(type(x) in (list, tuple) for x in obj):
        return None
    value = np.array([primal(x) for x in obj], dtype=dtype)
    if value.dtype != object or value.shape != (len(obj),):
        return None
    tangent = np.empty(len(obj), dtype=object)
    for i, x in enumerate(obj):
        if type(x) is Dual:
            t = x.tangent
        else:
            t = np.zeros(np.shape(x)) if isinstance(x, np.ndarray) else 0.0
        tangent[i] = np.asarray(t) if isinstance(value[i], np.ndarray) else t
    return Dual(value, tangent, tag)


def build_array(args: tuple, kwargs: dict, fn=None):
    """`np.array(obj, dtype=..., ndmin=...)` / `np.asarray` of duals (fn, the builder called): `to_array`,
    with ndmin's leading axes (np.r_ builds its pieces with ndmin=1). A copy where numpy copies (`np.array`
    by default, `copy=True`): value and tangent of its own, so a change in place (`c = np.array(q);
    c[1:] *= -1`) leaves the source alone, as in numpy."""
    dtype = kwargs.get("dtype", args[1] if len(args) > 1 else None)
    if dtype is not None and np.dtype(dtype).names is not None:
        raise OverdubError("forward mode does not differentiate a structured array (a dtype with fields, records) "
                           "built from perturbed values", fix="keep the fields as separate arrays (or a dict of arrays)")
    src = args[0]
    if type(src) is Dual and fn is not None and kwargs.get("copy", fn is np.array) is not True:
        inside = primal(src)
        if type(inside) is np.ndarray and fn(inside, *primal_tree(args[1:]), **kwargs) is inside:
            return src  # (`np.asarray(b) is b` in numpy: the dual itself, whatever later writes replace in it)
    if (type(src) is Dual and type(src.primal) is np.ndarray and fn is not None and "ndmin" not in kwargs
            and not has_dual(args[1:]) and not has_dual(list(kwargs.values()))):
        # numpy's own result on the value (its copy or view, its memory order), the tangent following it
        value = fn(src.primal, *args[1:], **kwargs)
        if type(value) is np.ndarray:
            if value.dtype.kind not in "fcO":
                int_cast_jump(fn, args, kwargs, src.tangent)  # (cast to integers: a truncation's jumps checked)
                return value  # (piecewise constant)
            if np.may_share_memory(value, src.primal):
                if value.shape == src.primal.shape and value.strides == src.primal.strides:
                    return Dual(value, src.tangent, src.tag)
            else:
                return Dual(value, layout_copy(src.tangent, value, src.tag), src.tag)
    out = to_array(args[0], dtype)
    copy = kwargs.get("copy", True if fn is np.array else None)
    if copy is True and out is not args[0]:
        out = _own_copy(out, args[0])
    elif copy is None and type(args[0]) is Dual and fn is not None and _copies(fn, args, kwargs):
        # (`np.asarray(A, order="F")`, `np.ascontiguousarray(A.T)`: numpy copies where the layout differs;
        # taken for views, a write into the copy changed A, value and tangent)
        out = _own_copy(out if out is not args[0] else Dual(out.primal, out.tangent, out.tag), args[0])
    missing = kwargs.get("ndmin", 0) - np.ndim(out)
    return out.reshape((1,) * missing + np.shape(out)) if missing > 0 else out


def layout_copy(t, like: np.ndarray, tag: Tag):
    """A copy of tangent t in `like`'s dtype and memory order (each direction's, for a chunk): so that a
    reshape or ravel of the tangent is a view exactly where numpy makes one of the value (an F-ordered
    value's `ravel(order="F")` a view, its `reshape(-1)` a copy)."""
    if type(t) is not np.ndarray:
        return t.copy() if type(t) is Dual else t
    dtype = like.dtype if like.dtype.kind in "fc" else t.dtype
    fortran = like.ndim >= 2 and like.flags.f_contiguous and not like.flags.c_contiguous
    if tag.chunk is None:
        return np.array(t, dtype=dtype, order="F" if fortran else "C")
    if not fortran:
        return np.array(t, dtype=dtype, order="C")
    base = np.empty((t.shape[0],) + like.shape[::-1], dtype=dtype)
    out = base.transpose((0,) + tuple(range(like.ndim, 0, -1)))  # (each direction F-contiguous)
    out[...] = t
    return out


def _copies(fn, args: tuple, kwargs: dict) -> bool:
    """numpy's builder fn makes a new array of the value inside the dual args[0] (not a view of it)."""
    inside = primal(args[0])
    if type(inside) is not np.ndarray:
        return False
    made = fn(inside, *primal_tree(args[1:]), **kwargs)
    return not np.may_share_memory(made, inside)


def _own_copy(out, source):
    """out (built from source) with no array shared with source: a dual's value and tangent, at every
    level of nesting (duals of duals), copied where they are source's."""
    if type(out) is not Dual:
        return out.copy() if type(out) is np.ndarray and out is source else out
    if type(source) is not Dual:
        return out  # made from a list: np.stack made it new
    return Dual(_own_copy(out.primal, source.primal), _own_copy(out.tangent, source.tangent), out.tag)


def _takes_arrays(fn) -> bool:
    """fn is numpy's or scipy's: it takes a list as the array numpy makes of it."""
    return isinstance(fn, np.ufunc) or (getattr(fn, "__module__", None) or "").split(".")[0] in ("numpy", "scipy")


def holds_dual_of(obj, tag: Tag) -> bool:
    """obj is a dual of tag or a (nested) list, tuple or dict holding one."""
    if type(obj) is Dual:
        return obj.tag is tag
    if type(obj) in (list, tuple):
        return any(holds_dual_of(v, tag) for v in obj)
    if type(obj) is dict:
        return any(holds_dual_of(v, tag) for v in obj.values())
    return False


def has_dual(obj) -> bool:
    """obj is a Dual or a (nested) list/tuple holding one."""
    if type(obj) is Dual:
        return True
    if isinstance(obj, (list, tuple)):
        return any(has_dual(x) for x in obj)
    return False


def _on_primal(fn):
    def impl(*args, **kwargs):
        return fn(*primal_tree(args), **{k: primal_tree(v) for k, v in kwargs.items()})
    return impl


def _ordering_index(fn, kind: str):
    """np.argsort (np.argmax, np.argmin; `a.argsort()` too) of a dual: of its values, refused where entries
    tied along the axis asked (the extreme's, for argmax) have tangents that differ (`lowered.runtime.jump_guard`):
    the index jumps there, and what the code does with it (`x[np.argsort(x)]`, ranks) takes one side's
    derivative."""
    def impl(a, *args, **kwargs):
        if type(a) is Dual and kwargs.get("order") is None:  # (a chunk's tangents, leading: each direction's)
            jump_guard(kind, f"np.{fn.__name__}", a.primal, a.tangent, axis_of(kind, (a, *args), kwargs))
        return fn(primal_tree(a), *primal_tree(args), **{k: primal_tree(v) for k, v in kwargs.items()})
    return impl


def _search(fn):
    """np.searchsorted (np.digitize) with duals among its grid and values: of their values, refused where a
    value sits exactly on an entry of the grid and the two move apart (`lowered.runtime.jump_guard`): the
    index steps there, and a table lookup by it takes one segment's slope."""
    kind, name = JUMP_FUNCTIONS[fn]

    def impl(*args, **kwargs):
        tans = [a.tangent if type(a) is Dual else None for a in args]
        x, t = jump_operands(fn, args, tans)
        if x is not None and t is not None:
            jump_guard(kind, name, primal_tree(x), t)
        return fn(*primal_tree(args), **{k: primal_tree(v) for k, v in kwargs.items()})
    return impl


def _lexsort(keys, axis=-1):
    """np.lexsort of keys some of which are duals: of their values, refused where entries tied from the
    primary key down have tangents that differ (`rules.ties.lex_parting`): the permutation jumps there."""
    if type(keys) is Dual:
        tangents = keys.tangent
    else:
        tangents = [k.tangent if type(k) is Dual else None for k in keys]
    jump_guard("lexorder", "np.lexsort", primal_tree(keys), tangents, axis)
    return np.lexsort(primal_tree(keys), axis=axis)


def _bilinear(fn):
    def impl(*args, **kwargs):
        y = multilinear(fn, args, kwargs)
        tag = y.tag if type(y) is Dual else None
        if tag is not None and tag.chunk is not None:  # (`np.einsum('ii->i', A)`: a view of A's diagonal)
            return _viewing_tangents(y, fn, args, kwargs, tag)
        return y
    return impl


def _where(cond, *ab):
    if not ab:
        return np.where(primal(cond))
    a, b = ab
    tag = top_tag((a, b))
    av, at = split(a, tag)
    bv, bt = split(b, tag)
    cond = primal(cond)
    y = np.where(cond, av, bv)
    d = ndim(y)
    at = pad(zero_tangent(av, tag) if at is None else at, av, d, tag)
    bt = pad(zero_tangent(bv, tag) if bt is None else bt, bv, d, tag)
    return make(y, np.where(cond, at, bt), tag)


def _select(condlist, choicelist, default=0):
    """np.select on duals: each element the choice of the first true condition (else default), value and
    tangent, as the np.where of the choices taken last to first. numpy's own code fills a plain array it
    makes with np.copyto, which cannot take a tangent."""
    choices = [to_array(c, None) if type(c) in (list, tuple) else c for c in choicelist]
    conds = [primal_tree(c) for c in condlist]
    y = np.select(conds, [primal_tree(c) for c in choices], primal_tree(default))  # numpy's checks and value
    if top_tag((*choices, default)) is None:
        return y
    result = default
    for cond, choice in zip(conds[::-1], choices[::-1]):
        result = _where(cond, choice, result)
    return result


def _copyto(dst, src, casting="same_kind", where=True):
    """np.copyto into a dual array: its value and tangent, so its views see the change."""
    if type(dst) is not Dual:
        raise PlainArrayWrite("np.copyto of dual values into an array without a tangent", where=_conversion_site(),
                           fix="make the array from the input (`np.zeros_like(x)`), or assign instead "
                               "(`dst = np.where(mask, src, dst)`)")
    tag = dst.tag
    if type(src) in (list, tuple):  # (a list of values, some perturbed: as an array of them; gen18 C3)
        src = to_array(src, None)
    if type(src) is Dual and src.tag.order > tag.order:
        raise OverdubError(
            "a value perturbed by an inner derivative call was copied into an array of an outer one",
            fix="create the array inside the inner function, or return the value instead of storing it")
    if type(dst.primal) is Dual:  # nested derivatives: the merged values, written through both levels
        dst._update(np.where(where, src, dst))
        return
    sv, st = split(src, tag)
    if type(sv) is Dual:
        raise OverdubError("np.copyto of values perturbed by an outer derivative call into an array that "
                           "only an inner one perturbs", fix="make the array from the input (`x * 0.0`)")
    value = dst.primal.copy()
    np.copyto(value, primal(sv), casting=casting, where=where)
    tangent = np.array(dst.tangent, dtype=float, copy=True)
    t = 0.0 if st is None else st
    if tag.chunk is None:
        np.copyto(tangent, t, where=where)
    else:
        np.copyto(tangent, pad(t, sv, ndim(value), tag) if st is not None else 0.0,
                  where=np.broadcast_to(where, value.shape)[None])
    dst._update(Dual(value, tangent, tag))


def _store(fn):
    """np.put, np.place, np.putmask, np.fill_diagonal on dual arrays: the store they amount to
    (`rules.numpy.inplace.as_store`), into the dual target's value and tangent."""
    from ..rules.numpy.inplace import as_store

    def store(*args, **kwargs):
        target, index, values = as_store(fn, args, kwargs)
        if type(target) is not Dual:
            if has_dual(values):
                raise PlainArrayWrite(f"np.{fn.__name__} of dual values into an array without a tangent",
                                   where=_conversion_site(), fix="make the array from the input (`np.zeros_like(x)`), or assign")
            return fn(*primal_tree(args), **{k: primal_tree(v) for k, v in kwargs.items()})
        target[index] = values
        return None
    store.__name__ = fn.__name__
    return store


def _apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """np.apply_along_axis on a dual array (numpy's converts it in C, which a dual cannot enter): func1d
    on each 1-d slice, run under forward mode, the results stacked where numpy puts them (their own
    dimensions at `axis`)."""
    from .context import run_inside
    from ..rules.numpy._util import normalize_axis

    arr = arr if type(arr) is Dual else to_array(arr)
    axis = normalize_axis(axis, ndim(arr))
    moved = np.moveaxis(arr, axis, -1)
    outer = np.shape(moved)[:-1]
    if 0 in outer:
        raise OverdubError("np.apply_along_axis of an empty dual array", fix="call the function on the array itself")
    results = [run_inside(func1d, (moved[index],) + args, kwargs) for index in np.ndindex(*outer)]
    stacked = np.stack([r if type(r) is Dual else np.asarray(r) for r in results])
    stacked = np.reshape(stacked, outer + np.shape(stacked)[1:])
    extra = ndim(stacked) - len(outer)
    if extra == 0:
        return stacked
    return np.moveaxis(stacked, list(range(len(outer), len(outer) + extra)), list(range(axis, axis + extra)))


def _diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    """np.diff on duals: prepend/append joined to a first, as numpy does (each broadcast along the axis),
    then differenced. (As a linear map of its first argument, a constant prepend entered the tangent.)"""
    if prepend is not np._NoValue or append is not np._NoValue:
        nd = max(np.ndim(a), 1)
        ax = axis % nd
        pieces = []
        for extra in (prepend, None, append):
            if extra is None:
                pieces.append(a)
            elif extra is not np._NoValue:
                if np.ndim(extra) == 0:
                    extra = np.broadcast_to(extra, np.shape(a)[:ax] + (1,) + np.shape(a)[ax + 1:])
                pieces.append(extra)
        a = np.concatenate(pieces, axis=ax)
    return _linear_diff(a, n, axis)


_linear_diff = linear(np.diff)


# the functions joining a sequence of arrays (duals inside lists numpy's dispatch does not look into:
# `np.concatenate(([0.0], [k, 2 * k]))`)
JOINS = frozenset({np.concatenate, np.stack, np.hstack, np.vstack, np.column_stack, np.dstack})

OWN_FUNCTIONS = {
    np.diff: _diff,
    np.copyto: _copyto, np.apply_along_axis: _apply_along_axis, **{fn: _store(fn) for fn in (np.put, np.place, np.putmask, np.fill_diagonal)},
    np.reshape: _reshape, np.ravel: _ravel, np.insert: _insert, np.transpose: _transpose, np.sum: _sum,
    np.broadcast_to: _broadcast_to, np.where: _where, np.select: _select,
    **{fn: _each(fn) for fn in (np.atleast_1d, np.atleast_2d, np.atleast_3d)},
    np.moveaxis: _axes_map(np.moveaxis, "source", "destination"),
    np.swapaxes: _axes_map(np.swapaxes, "axis1", "axis2"),
    np.flip: _axes_map(np.flip, "axis"), np.expand_dims: _axes_map(np.expand_dims, "axis"),
    np.zeros_like: _zeros_like_dual(np.zeros_like), np.empty_like: _zeros_like_dual(np.zeros_like),
    np.ones_like: _zeros_like_dual(np.ones_like), np.full_like: _full_like_dual,
    **{fn: linear(fn) for fn in (
        np.squeeze, np.mean, np.cumsum,
        np.fliplr, np.flipud, np.roll, np.trace, np.diagonal, np.diag, np.triu, np.tril, np.tile,
        np.repeat, np.take, np.real, np.imag, np.copy, np.rot90,
        np.take_along_axis)},
    **{fn: join(fn) for fn in JOINS},
    **{fn: _bilinear(fn) for fn in (
        np.dot, np.inner, np.outer, np.tensordot, np.kron, np.cross, np.vdot, np.einsum)},
    **{fn: _ordering_index(fn, kind) for fn, kind in ((np.argsort, "order"), (np.argmax, "argmax"),
                                                      (np.argmin, "argmin"))},
    np.lexsort: _lexsort, np.searchsorted: _search(np.searchsorted), np.digitize: _search(np.digitize),
    **{fn: _on_primal(fn) for fn in (
        np.shape, np.ndim, np.size, np.result_type, np.iscomplexobj, np.isrealobj, np.argpartition, np.nonzero,
        np.count_nonzero, np.isclose, np.allclose, np.array_equal, np.may_share_memory,
        np.shares_memory, np.argwhere, np.flatnonzero)},
}


def _nan_to_num_in_place(x, nan=0.0, posinf=None, neginf=None):
    """`np.nan_to_num(x, copy=False)` of a dual array (reliability's distributions): its NaN and infinite
    entries replaced in place by constants, their tangents 0 (a store into the dual: `Dual.__setitem__`); x."""
    value = primal(x)
    if not isinstance(value, np.ndarray) or not value.ndim:
        raise MissingRule("forward mode does not follow np.nan_to_num(..., copy=False) of a perturbed number",
                          fix="assign the result: `a = np.nan_to_num(a)`")
    bad = ~np.isfinite(value)
    if bad.any():
        x[bad] = np.nan_to_num(value, copy=True, nan=nan, posinf=posinf, neginf=neginf)[bad]
    return x


def write_out(fn, y, out):
    """`fn(..., out=o)` computed as y without it: y written into o, value and tangent; o returned. A plain
    o cannot take a perturbed y (refused, as a plain array refuses duals)."""
    target = out[0] if isinstance(out, tuple) else out
    if type(target) is not Dual and has_dual(y):
        raise DualConversionError(
            f"{getattr(fn, '__qualname__', fn)}(..., out=...) writes dual values into an array without a tangent",
            fix="assign the result (`y = f(...)`) instead of writing into `out=`")
    target[...] = y
    return out


_OUT_POSITIONS: dict = {}


def out_position(f) -> int:
    """The position of a numpy function's `out` parameter (-1 if it has none), from its signature."""
    pos = _OUT_POSITIONS.get(f)
    if pos is None:
        import inspect
        pos = -1
        for target in (getattr(f, "_implementation", f), f):  # (a C implementation: the dispatcher's text)
            try:
                params = list(inspect.signature(target).parameters.values())
            except (TypeError, ValueError):
                continue
            pos = next((i for i, p in enumerate(params) if p.name == "out"
                        and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)), -1)
            break
        _OUT_POSITIONS[f] = pos
    return pos


_METHOD_OF = {"amax": "max", "amin": "min", "around": "round", "round_": "round", "product": "prod",
              "cumproduct": "cumprod", "sometrue": "any", "alltrue": "all"}
"""numpy's function -> the method it calls on an ndarray subclass's instance, where the names differ."""


def array_function(func, args, kwargs):
    """Dual.__array_function__: our structural maps, else the registry's frule, else recursion into the
    function's pure-Python implementation under the forward context, else a clear error. An `out=` is
    written after the fact (the rules compute new values)."""
    if _holds_matrix(args):
        raise matrix_refused()
    if args and type(args[0]) is Dual and type(args[0].primal) is not np.ndarray \
            and isinstance(args[0].primal, np.ndarray) and type(own := subclass_attribute(
                args[0], _METHOD_OF.get(func.__name__, func.__name__))) is types.MethodType:
        # (numpy calls an ndarray subclass's own method of the name for its instances, `np.sum(v)` a
        # `v.sum()` written in Python: a rule for the array would compute another thing, gen13 W2's doubled sum)
        from .context import run_inside
        return run_inside(own, args[1:], kwargs)
    if len(args) > 2 and "out" not in kwargs:  # `np.clip(K, 0, 1, K)`: the output given by position
        pos = out_position(func)
        if len(args) > pos >= 0 and args[pos] is not None:
            kwargs = {**kwargs, "out": args[pos]}
            args = args[:pos] + args[pos + 1:]
    if kwargs.get("out") is not None:
        return write_out(func, array_function(func, args, {k: v for k, v in kwargs.items() if k != "out"}),
                         kwargs["out"])
    if kwargs:  # `np.cumsum(a=v)`: the arrays the rules take by position
        moved = by_position(func, args, kwargs)
        if moved is not None:
            args, kwargs = moved[0], moved[1]
        if func is np.clip and ("min" in kwargs or "max" in kwargs):  # (numpy 2's names of the bounds)
            kwargs = dict(kwargs)
            args = (args[0], kwargs.pop("min", args[1] if len(args) > 1 else None),
                    kwargs.pop("max", args[2] if len(args) > 2 else None)) + args[3:]
    if func in CHECKED_TESTS and not _called_by_engine():  # (`np.array_equal(z, self._last_z)`, `np.any(d)`: special points)
        checked_test(func, args, kwargs)
    if func is np.nan_to_num and args and type(args[0]) is Dual and not (
            args[1] if len(args) > 1 else kwargs.get("copy", True)):
        return _nan_to_num_in_place(args[0], *args[2:], **{k: v for k, v in kwargs.items() if k != "copy"})
    own = OWN_FUNCTIONS.get(func)
    if own is not None:
        return own(*args, **kwargs)
    _ensure_rules_loaded()
    rule = registry.get(func)
    if rule is not None and rule.kind == "nondiff":
        if (jump := JUMP_FUNCTIONS.get(func)) is not None and args and type(args[0]) is Dual:
            # (np.fix, a Python function calling np.trunc: a moving value exactly on a jump; it gave one
            # side's derivative under reverse mode's check, which runs the Dual path)
            jump_guard(*jump, args[0].primal, args[0].tangent)
        return func(*primal_tree(args), **{k: primal_tree(v) for k, v in kwargs.items()})
    tag = top_tag(args)
    if rule is not None and rule.frule is not None and tag is not None:
        return apply_frule(rule, func, args, kwargs, tag)
    impl = getattr(func, "_implementation", None)
    if impl is not None:
        from .context import run_inside
        return run_inside(impl, args, kwargs)
    raise no_rule(func)
