"""Reverse mode's public API: gradient, pullback, jacobian, vjp and the context that hosts them."""

from __future__ import annotations

import math
import numbers
import types
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from overdub import Context
from overdub.passes import context_stack as _stack, depth as _depth
from overdub.errors import OverdubError

from ..lowered.runtime import (SidesTaken, TIES_AT_SIDES as _TIES_AT_SIDES, CHECK_SPECIAL as _CHECK_SPECIAL, SPECIAL_HITS as _SPECIAL_HITS, Hits as _Hits,
                              SpecialPoint, special_case)
from ..lowered.runtime import EagerIterationError, TextRoundTrip
from ..rules.builtins import ObjectArrayMade
from ..rules.containers import DifferentiatedKey
from ..rules.cotangents import ArrayConversionUnseen
from ..rules.frames import entry_error
from ..rules.numpy._util import UnsupportedCase
from ..rules.registry import MissingRule
from ..rules.ties import KINK_MARK as _KINK_MARK
from ..rules.watch import JUMP_WATCH as _JUMP_WATCH
from ..rules import generic as _generic, leaves as _leaf_types
from ..rules.leaves import ArrayLeaf, Scalar, as_array, as_float, container_of, in_kind, kind_of, np_dtype
from .custom import nestlevel as _nestlevel
from .codegen import ARGUMENTS_ONLY, CELLS_CONSTANT, EVERY_ARGUMENT
from .observe import _check as _checking, observed_entry, observer
from . import runtime as _runtime
from .runtime import _NOKW, UnsupportedFunction, _rules, _twin_call, call, override_rules, restore_rules
from .runtime import (_GUARDED, _NEVER_CONSTANT, _WeakRef, _numbers_bound, _recording_failed, _short_map, _twin_back,
                      _twin_back_rest, note_transformed as _note_transformed)
from ..rules.cotangents import SeqBox, Tangent, acc as acc_cotangents, fields_of, has_fields
from .helpers import _THREAD
from ..forward.api import integer_refused, same_numbers
from .structs import ATTRIBUTE_CHANGE, CHANGED_HELD, CHANGES, LAST_CHANGE, RECORDING_START, Session, finalize

_FunctionType = types.FunctionType

__all__ = ["ADContext", "gradient", "pullback", "pullback_full", "value_and_gradient", "jacobian", "vjp",
           "NonScalarError", "Tangent"]


class NonScalarError(OverdubError):
    """`gradient` of a function whose output is not a real scalar."""


class ADContext(Context):
    """Reverse-mode AD as an overdub context, and the scope of its options.

    Inside `with ADContext():` (or without it) `gradient(f, *args)` differentiates f. The context's
    identity separates nested uses: values never carry a tag, the recorded tapes belong to one pullback.

    `check=True`: every rule a derivative uses inside the block (registered rules, binary operators,
    custom adjoints from `contexts.custom_adjoint`/`adjoint`) is checked against central finite differences
    at its actual operands and cotangent the first time the block uses it; a wrong one raises
    `RuleCheckError` naming the rule, the user's line, the rule's and the finite-difference values.

    `rules={fn: rrule}`: inside the block, reverse mode differentiates fn (any callable: a C function, a
    library's or your own Python function, a method's function) by `rrule`, of `custom_adjoint`'s form
    (`rrule(*args, **kwargs) -> (y, pullback)`, `pullback(dy)` one cotangent per argument) — a
    straight-through estimator, clipped or stabilised gradients for one computation, without changing
    the registry for the rest of the program. Forward mode (`jvp`, `derivative`) keeps fn's registered
    rule; `hessian` differentiates the given pullback. Nested blocks add to the outer one's rules.

    Both options hold for the block only (context variables: each thread and asyncio task has its own, and
    a nested `ADContext(check=False)` turns checking off inside); outside such blocks they cost nothing
    (rules: one test per call while a block is open in any thread).

    >>> with ADContext():
    ...     gradient(lambda x: x * x, 3.0)
    (6.0,)
    >>> from contexts import custom_adjoint
    >>> def cube(x): return x ** 3
    >>> @custom_adjoint(cube)
    ... def cube_rrule(x): return cube(x), lambda dy: (dy * 2 * x ** 2,)   # wrong: 3 x^2
    >>> with ADContext(check=True):
    ...     gradient(lambda x: cube(x) + x, 2.0)
    Traceback (most recent call last):
    contexts.forward.check.RuleCheckError: the rule for cube (cube_rrule) disagrees with finite differences ...
    >>> import math
    >>> def straight_through(x): return math.floor(x), lambda dy: (dy,)
    >>> with ADContext(rules={math.floor: straight_through}):
    ...     gradient(lambda x: math.floor(x) * x, 2.5)
    (4.5,)
    >>> gradient(lambda x: math.floor(x) * x, 2.5)   # outside the block: floor's own zero derivative
    (2.0,)
    """

    intercepts = frozenset({"call"})

    def __init__(self, *, check: bool = False, rules: dict | None = None):
        super().__init__()
        self.check = check
        self.rules = _checked_rules(rules)
        self._tokens: list = []

    def __enter__(self) -> "ADContext":
        from .check import RuleCheck
        from .observe import _check
        tokens = (_check.set(RuleCheck() if self.check else None),
                  override_rules(self.rules) if self.rules else None)
        self._tokens.append(tokens)
        try:
            return super().__enter__()
        except BaseException:
            self._reset(self._tokens.pop())
            raise

    def __exit__(self, *exc_info) -> bool:
        try:
            return super().__exit__(*exc_info)
        finally:
            self._reset(self._tokens.pop())

    @staticmethod
    def _reset(tokens) -> None:
        from .observe import _check
        check, rules = tokens
        if rules is not None:
            restore_rules(rules)
        _check.reset(check)

    def gradient(self, f, *args):
        return gradient(f, *args)


def _checked_rules(rules) -> dict:
    if rules is None:
        return {}
    if not isinstance(rules, dict):
        raise TypeError(f"ADContext(rules=...) takes a dict {{function: rrule}}, got {type(rules).__name__}")
    for fn, rrule in rules.items():
        if not callable(fn) or not callable(rrule):
            bad = fn if not callable(fn) else rrule
            raise TypeError(f"ADContext(rules=...): {bad!r} is not callable (each entry maps a function to "
                            f"its rrule, `rrule(*args) -> (y, pullback)`)")
    return dict(rules)


def _where(f) -> str:
    code = getattr(f, "__code__", None)
    name = getattr(f, "__qualname__", repr(f))
    return f"{name} ({code.co_filename}:{code.co_firstlineno})" if code else name


def _check_callable(f) -> None:
    if not callable(f):
        raise OverdubError(f"expected a function to differentiate, got {type(f).__name__} {f!r}",
                           fix="pass the function itself: gradient(f, x), not gradient(f(x), x)")


# Each level of user recursion costs the forward twin three frames and the adjoint two: while
# differentiating, the recursion limit is raised from the user's own (overdub.depth, shared by threads).


def _stopped(f) -> OverdubError:
    """A StopIteration leaving the differentiated code: passed on, it would silently end a loop or `map`
    around the call to `gradient` (as PEP 479 turns it into a RuntimeError leaving a generator)."""
    return OverdubError("the differentiated function raised StopIteration (an exhausted iterator's `next`)"
                        + (f" in {_where(f)}" if f is not None else " in its reverse pass"),
                        fix="give `next` a default (`next(it, None)`) or catch StopIteration inside the function")


def _record(f, args, kwargs, full=True, mask=None):
    """Run f's recording forward pass: (y, pullback); `full` also records f's own gradient (its cells);
    `mask` (a call's mask, `codegen`) chooses the arguments differentiated instead."""
    if mask is None:
        mask = EVERY_ARGUMENT if full else ARGUMENTS_ONLY
    if not callable(f):
        _check_callable(f)
    _depth.enter()
    level = _nestlevel()
    if not level:
        _fresh_recording()
    hits = _SPECIAL_HITS.set(_recording(level + 1))
    try:
        obs = observer()
        if obs is not None:
            out = observed_entry(obs, mask, f, args, kwargs)
        else:
            out = call(mask, f, *args, **kwargs)
    except StopIteration as e:
        raise _stopped(f) from e
    except Exception as e:
        raise entry_error(e)  # (a refusal a library turned into its own error; the user's lines)
    finally:
        found = _SPECIAL_HITS.get()
        _SPECIAL_HITS.reset(hits)
        _depth.leave()
    if found:
        _check_special(f, args, kwargs, found)
    return out


def special_hits(f, args, kwargs) -> list:
    """The equality tests f's recording at args finds equal (its `SPECIAL_HITS`), unchecked, its pullback
    dropped: `contexts.compose.still_equal_nearby`'s runs at points next to a special point, where forward mode
    cannot run. This thread's record of stores is the recording's around it (kept, restored after)."""
    _depth.enter()
    table = _THREAD.__dict__.setdefault("stores", {})
    saved = {k: (o, dict(d), own) for k, (o, d, own) in table.items()}
    token = _SPECIAL_HITS.set(_recording(_nestlevel() + 1))
    try:
        call(ARGUMENTS_ONLY, f, *args, **kwargs)
        return list(_SPECIAL_HITS.get())
    finally:
        _SPECIAL_HITS.reset(token)
        table.clear()
        table.update(saved)
        _depth.leave()


def _recording(level: int) -> _Hits:
    """The state of one recording (or reverse pass), held by the one context variable `SPECIAL_HITS` while it
    runs: the equality tests it finds equal (`lowered.runtime.equality_guard`) and `level`, how many
    recordings run around the code it runs (`nestlevel`)."""
    found = _Hits()
    found.level = level
    return found


def _fresh_recording(_thread=_THREAD, _changes=CHANGES, _start=RECORDING_START, _attributes=ATTRIBUTE_CHANGE) -> None:
    """A top-level recording begins: this thread's record of stores starts empty; the change stamps
    (`structs.changed`) are dropped only when many, as other threads' recordings read them (a stale stamp
    is older than any a recording compares with: harmless; clearing them under another thread's recording
    lost its changes through a callee: a wrong gradient, rarely). Where nothing was changed since the last
    top-level recording began (the counter is where it was), the counter's start and the objects held for it
    are as they are: nothing is stamped or held without the counter moving (`structs.changed`)."""
    try:  # (`helpers.stores().clear()` without its call)
        _thread.stores.clear()
    except AttributeError:  # (this thread's first recording: a getattr with a default raised and caught
        _thread.stores = {}  # one, every call, if none was made)
    if _changes[0] != _start[0] or len(_attributes) > 65536:
        _start[0] = _changes[0]
        CHANGED_HELD.clear()
        if len(LAST_CHANGE) > 65536:
            LAST_CHANGE.clear()
        if len(_attributes) > 65536:
            _attributes.clear()


def _check_special(f, args, kwargs, hits) -> None:
    """Equality tests the recording found equal (`lowered.runtime.equality_guard`): forward mode tells
    whether the compared values move (`CHECK_SPECIAL`, from `contexts.compose`); refused if it cannot.
    Kinks met at their ties (`rules.ties.note_kink`) are forward mode's to tell too, as ties are (kept where
    it cannot run): it counts those its values meet moving and judges two from the two sides of the point
    (a kink inside another's result: `abs(np.minimum(w, 0))` at 0), where reverse mode's pass cannot count
    them (a zero cotangent, abs's at 0, skips the rules below it). Not in the sides' own runs."""
    if _TIES_AT_SIDES.get() and any(h[2][:1] == _KINK_MARK for h in hits):
        hits = [h for h in hits if h[2][:1] != _KINK_MARK]
        if not hits:
            return None
    if not _CHECK_SPECIAL:
        hard = [h for h in hits if h[2][:1] not in ("?", "\u2261", _KINK_MARK)]
        if hard:
            where, other, op = hard[0]
            raise SpecialPoint(special_case(other, op), where=where)
        return None
    return _CHECK_SPECIAL[0](f, args, kwargs, hits)  # (forward mode's directions and derivative along them)


def _reverse(pb, dy, args, y=None, f=None, kwargs=None, checked=None):
    """Run a recorded pullback: (cotangent of f, cotangents of args shaped like args); y is the output, of
    which dy is the cotangent (a registered container's is of its values: see `_output_container`). Given
    f, equality tests met by recordings the reverse pass makes (a Python operator's adjoint records it) are
    checked as the forward pass's are (`_check_special`), once per pullback: `checked` holds the tests (their
    lines and kinds) forward mode passed for it, as the check runs f at args, whatever dy is (a Jacobian's
    pullbacks, one per output, ran it per row: skfuzzy's gbellmf, whose |x - c| meets its kink at a grid
    point, 11 forward passes for 11 rows)."""
    container = _output_container(y)
    if container is not None:
        if dy is not None and not isinstance(dy, dict):
            dy = container.seed(y, dy)
        dfn, dargs = _reverse(pb, _handed(dy), args, None, f, kwargs, checked)
        return dfn, _of_output(container, dargs, y)
    if type(y) in (list, tuple) and type(dy) is np.ndarray and dy.ndim and len(dy) == len(y) and any(
            _output_container(v) is not None for v in y if type(v) is not float):
        dy = list(dy)  # (an array of cotangents for a list of Quantities: one each, as a list would give)
    if type(y) in (list, tuple):
        dy = _one_per_output(y, dy)
    if isinstance(dy, (dict, list, tuple)):
        dy, inside = _seeded_inside(y, dy)
        if inside:  # (a list of Quantities: each one's cotangent of its magnitude, the units of them all)
            dfn, dargs = _reverse(pb, dy, args, None, f, kwargs, checked)
            return dfn, _of_output(inside[0][0], dargs, inside[0][1])
        dy = _handed(dy)
    if pb is None:
        return None, tuple(finalize(None, a) for a in args)
    S = Session()
    _depth.enter()
    hits = _SPECIAL_HITS.set(_recording(_nestlevel())) if f is not None else None
    try:
        try:
            dfn, dargs, _dkw = pb[0](pb, dy, None, S)
            if dargs is not None:
                dargs = _with_boxes(dargs, args, S)
                if S._redo:  # (the arguments as given, see `_value_and_gradient`)
                    dargs = _Finalized(finalize(g, a) for g, a in zip(dargs, args))
        finally:
            S.finish()
            found = _SPECIAL_HITS.get() if hits is not None else None
            if hits is not None:
                _SPECIAL_HITS.reset(hits)
        if found:
            tests = _tests_of(found) if checked is not None else None
            if tests is None or not tests <= checked:
                _check_special(f, args, kwargs or {}, found)
                if tests is not None:
                    checked |= tests
    except StopIteration as e:
        raise _stopped(None) from e
    except Exception as e:
        raise entry_error(e)  # (a refusal a library turned into its own error; the user's lines)
    finally:
        _depth.leave()
    if dargs is None:
        return dfn, tuple(finalize(None, a) for a in args)
    if type(dargs) is _Finalized:
        return dfn, tuple(dargs)
    return dfn, tuple(finalize(g, a) for g, a in zip(dargs, args))


def _pullback(f, args, kwargs, full=True, mask=None):
    args = _promote(args)
    y, pb = _record(f, args, kwargs, full, mask)
    checked: set = set()  # (the reverse passes' tests forward mode passed: `_reverse`)

    def back(dy):
        return _reverse(pb, dy, args, y, f, kwargs, checked)
    return y, back


def _tests_of(hits) -> set | None:
    """The equality tests of hits by their lines and kinds (what `_check_special` judges), or None where one
    is not hashable."""
    try:
        return {(h[0], h[2]) for h in hits}
    except TypeError:
        return None


def _one_per_output(y, dy):
    """dy, the cotangent of a list or tuple output y: one per item (a list or tuple of y's length, or an
    array stacking them, as `jacobian` seeds). Anything else is refused: a flat vector of all the outputs'
    entries, or too few items, was spread over the items by broadcasting, a wrong product."""
    if dy is None:
        return dy
    if type(dy) is np.ndarray and dy.ndim and len(dy) == len(y) and all(
            np.shape(d) == np.shape(v) for d, v in zip(dy, y) if isinstance(v, (np.ndarray, float, int, complex))):
        return type(y)(dy)
    if not isinstance(dy, (list, tuple)) or len(dy) != len(y):
        given = f"a {type(dy).__name__}" + (f" of {len(dy)} items" if isinstance(dy, (list, tuple)) else
                                            f" of shape {np.shape(dy)}" if hasattr(dy, "shape") else "")
        raise OverdubError(f"the cotangent of a {type(y).__name__} of {len(y)} outputs must be a list or tuple "
                           f"of {len(y)} cotangents, one per output; got {given}",
                           fix="give one cotangent per output, each of its output's shape: "
                               "`vjp(f, (x,), (w1, w2))` (None for an output not to be differentiated)")
    for i, (d, v) in enumerate(zip(dy, y)):
        if type(v) is np.ndarray and type(d) is np.ndarray and d.ndim and d.shape != v.shape:
            raise OverdubError(f"the cotangent of output {i} has shape {d.shape}, the output {v.shape}",
                               fix="give each output's cotangent its output's shape")
    return dy


def _handed(dy):
    """A cotangent handed in (by the user, or a container's seed) as plain dicts and lists: a `Tangent`,
    `SeqBox` or `MapBox` is a box the reverse pass owns and merges into in place (`cotangents.acc`), so one
    handed in as it is would collect what belongs to the session's own box of that object, whose share
    would then be lost (a DataArray output seeded with nested Tangents: a zero gradient)."""
    if isinstance(dy, dict):
        return {k: _handed(v) for k, v in dy.items()}
    if type(dy) is SeqBox or type(dy) is list:
        return [_handed(v) for v in dy]
    if type(dy) is tuple:
        return tuple(_handed(v) for v in dy)
    return dy


def _output_container(y):
    """The registered container kind of an output (a DataArray, a pint Quantity), or None."""
    if type(y) is float or type(y) is np.ndarray or not has_fields(y):
        return None
    container = container_of(y)
    if container is not None and container.seed is None:
        raise NonScalarError(f"reverse mode cannot take the cotangent of a {type(y).__name__} returned by the "
                             "function", fix="return its values (`y.values`, `y.to_array()`)")
    return container


def _seeded_inside(y, dy) -> tuple[Any, list]:
    """dy, the cotangent of a list, tuple or dict output y, with that of each element of a registered
    container kind (a pint Quantity) seeded as its kind says, and those elements' (container, value) whose
    kind turns gradients into its units (`of_output`). Their units must agree, and no plain number may
    be differentiated beside them: a gradient has one unit (refused, never a sum of magnitudes of
    different units; seeded as plain numbers, the Quantities' cotangents were lost: a zero)."""
    found, plain = [], []

    def walk(yv, dv):
        if dv is None:
            return None
        if isinstance(yv, (list, tuple)) and isinstance(dv, (list, tuple)) and len(yv) == len(dv):
            items = [walk(a, b) for a, b in zip(yv, dv)]
            return type(dv)(*items) if hasattr(dv, "_fields") else type(dv)(items)  # (a namedtuple's, gen22 C7)
        if type(yv) is np.ndarray and isinstance(dv, (list, tuple)):
            # (a list given as an array output's cotangent, `vjp(lambda x: x * 2.0, (x,), [1.0, 0.0])`: as the array
            # it stands for; a TypeError before, gen22 C5)
            dv = np.asarray(dv, dtype=np.result_type(yv.dtype, float))
            if dv.shape != yv.shape:
                raise ValueError(f"the cotangent has shape {dv.shape}, the output {yv.shape}")
            return dv
        if isinstance(yv, dict) and isinstance(dv, dict):
            return {k: walk(yv[k], v) if k in yv else v for k, v in dv.items()}
        container = _output_container(yv)
        given = not (isinstance(dv, (numbers.Number, np.ndarray)) and not np.any(dv != 0))  # (not a 0)
        if container is None or isinstance(dv, dict):
            if given and isinstance(dv, (numbers.Number, np.ndarray)):
                plain.append(yv)
            return dv
        if container.of_output is not None and given:
            found.append((container, yv))
        return container.seed(yv, dv)

    dy = walk(y, dy)
    if found:
        units = {repr(c.of_output(1.0, v)) for c, v in found}
        if len(units) > 1 or plain:
            raise NonScalarError(
                "the outputs given cotangents hold values of different units "
                f"({', '.join(sorted(units))}{' and plain numbers' if plain else ''}): a gradient has one unit",
                fix="pull back the outputs of one unit at a time (zero cotangents for the others), or "
                    "convert them to one unit before returning them")
    return dy, found


def _of_output(container, grads: tuple, y) -> tuple:
    """The gradients of an output of a registered container kind, as its kind says (pint's units)."""
    if container.of_output is None:
        return grads
    return tuple(container.of_output(g, y) for g in grads)


def pullback(f: Callable, *args: Any) -> tuple[Any, Callable]:
    """`(y, back)` with y = f(*args) and `back(dy)` the cotangents of the arguments (a tuple).

    >>> y, back = pullback(lambda a, b: a * b, 2.0, 5.0)
    >>> y, back(1.0)
    (10.0, (5.0, 2.0))
    """
    y, back = _pullback_checked(f, args, full=False)
    return y, (lambda dy: back(dy)[1])


def _pullback_checked(f: Callable, args: tuple, full: bool = True) -> tuple[Any, Callable]:
    """`_pullback`, where differentiated integers are among args checked as `_ints_checked` does: a second
    pullback with floats in their places, whose cotangent for such an argument stands where the two differ
    (numpy's integers dropped the derivative) and the values agree."""
    y, back = _pullback(f, args, {}, full=full)
    ints = _counted_ints(args, None, None)
    if not ints:
        return y, back
    try:
        y2, back2 = _pullback(f, tuple(_as_floats(a) if i in ints else a for i, a in enumerate(args)), {},
                              full=full)
    except OverdubError as e:  # (refused at the float: the integer run may have lost the derivative)
        if len(ints) == len(args):
            raise integer_refused(ints, args, e) from e
        refusal = e

        def unknown_at_ints(dy):
            df, dargs = back(dy)
            return df, _none_at_ints(dargs, range(len(args)), ints, args, refusal, False)
        return y, unknown_at_ints
    except Exception:  # (a count, an index: the float is no value it takes; the integer run's answers stand)
        return y, back
    if not same_numbers(y, y2):
        return y, back

    def checked(dy):
        df, dargs = back(dy)
        try:
            dargs2 = back2(dy)[1]
        except OverdubError as e:
            return df, _none_at_ints(dargs, range(len(args)), ints, args, e, False)
        except Exception:
            return df, dargs
        return df, tuple(d2 if i in ints and not same_numbers(d, d2) else d
                         for i, (d, d2) in enumerate(zip(dargs, dargs2)))
    return y, checked


def pullback_full(f: Callable, *args: Any) -> tuple[Any, Callable]:
    """Like `pullback`, but `back(dy)` returns `(df, dargs)` — f's own gradient first (closure cells,
    bound `self`, partial arguments), Zygote's `_pullback`.

    >>> f = (lambda a: (lambda x: x * a))(3.0)
    >>> y, back = pullback_full(f, 2.0)
    >>> back(1.0)
    (Tangent(a=2.0), (3.0,))
    """
    return _pullback_checked(f, args)


def pullback_at(f: Callable, t: Any, *args: Any) -> tuple[Any, Callable]:
    """`pullback_full(f, t, *args)` with t held constant: a rule sampling f at points t of its own
    (quad's integrand at its nodes), which wants the gradients of f's cells and of args only."""
    mask = (1 << (len(args) + 1)) - 2  # (every argument but the first)
    if _JUMP_WATCH.get() is None:
        return _pullback(f, (t, *args), {}, mask=mask)
    with _runtime.watching():  # (its piecewise calls noted: `rules.watch`)
        return _pullback(f, (t, *args), {}, mask=mask)


def _seed(y):
    if type(y) is float:
        return 1.0
    if isinstance(y, bool):
        raise NonScalarError(f"the function returned a bool ({y!r}); it has no gradient")
    if type(y).__name__ == "Dual" and np.ndim(y.primal) == 0:  # forward over reverse: the primal's own 1
        return _seed(y.primal)  # (before the number tests: a dual is a Real, and its primal a Fraction)
    if isinstance(y, float):
        return 1.0
    if isinstance(y, int):
        return 1
    if isinstance(y, Fraction):
        return Fraction(1)  # (`gradient(lambda x: x, Fraction(1, 3))` is a Fraction, not the int 1)
    if isinstance(y, Scalar) and not kind_of(y).complex:  # Decimal, mpmath, sympy: the one of its kind
        return kind_of(y).one(y)
    if isinstance(y, complex) or isinstance(y, Scalar):
        raise NonScalarError(f"`gradient` needs a real scalar output, got the complex {y!r}",
                             fix="differentiate abs(f(x))**2 or the real part, or use `pullback` with a "
                                 "complex cotangent")
    if isinstance(y, np.ndarray) and y.ndim == 0 and y.dtype.kind in "fiu":
        return np.ones((), dtype=y.dtype if y.dtype.kind == "f" else float)
    if isinstance(y, np.generic) and np.isrealobj(y):
        return type(y)(1) if y.dtype.kind == "f" else 1.0
    if isinstance(y, numbers.Real) or type(y).__module__.startswith("uncertainties"):
        return 1.0
    if isinstance(y, ArrayLeaf):  # a dask array: a 0-d real one (known without computing it)
        if y.ndim == 0 and np_dtype(y).kind in "fiu":
            return np.ones((), dtype=np_dtype(y) if np_dtype(y).kind == "f" else float)
        shape = y.shape
        raise NonScalarError(
            f"`gradient` needs a real scalar output, got {type(y).__name__} of shape {shape} and dtype {y.dtype}",
            fix="reduce the output to a real scalar (e.g. `.sum()`), or use `jacobian` / `pullback` for vector "
                "outputs")
    fields = has_fields(y)
    container = container_of(y) if fields else None
    if container is not None and container.seed is not None:  # (a DataArray, a pint Quantity: its values')
        held = container.held(y)
        try:
            one = _seed(held)
        except NonScalarError as e:
            raise NonScalarError(f"`gradient` needs a real scalar output, got a {type(y).__name__} holding "
                                 f"{type(held).__name__} of shape {np.shape(held)}", fix=e.fix) from None
        return _handed(container.seed(y, one))
    if type(y).__name__ == "Dual" and np.ndim(y.primal) > 0:
        # forward over reverse of a vector output: seeded with 1.0, the gradient of the outputs' sum came out as
        # if of a scalar f (`hessian(lambda x: x * x, x)`: the Hessian of the sum, gen22 W7)
        raise NonScalarError(
            f"`gradient` needs a real scalar output, got an array of shape {np.shape(y.primal)}",
            fix="reduce the output to a scalar (e.g. `.sum()`), or use `jacobian` / `pullback` for vector outputs; "
                "`hessian(f, x, inner=\"forward\")` gives one Hessian per output")
    if type(y).__name__ == "Dual" or hasattr(y, "__array_ufunc__") and not isinstance(y, np.ndarray) and not fields:
        return 1.0
    if fields:  # its cotangent is its fields': a number seeded there would be dropped, the gradient silently 0
        raise NonScalarError(
            f"`gradient` needs a real scalar output, got an object of type {type(y).__name__}: reverse mode "
            "differentiates it as an object (its fields), and has no one to seed it with",
            fix="return the number it holds (`float(y)`, `y.item()`, `y.magnitude`), or register its type "
                "(`contexts.rules.leaves.register_scalar`, or `register_container` with `seed`)")
    shape = getattr(y, "shape", None)
    raise NonScalarError(
        f"`gradient` needs a real scalar output, got {type(y).__name__}"
        + (f" of shape {shape}" if shape is not None else ""),
        fix="reduce the output to a scalar (e.g. `.sum()`), or use `jacobian` / `pullback` for vector outputs")


def _promote(args: tuple) -> tuple:
    """Integer arrays are differentiated as float arrays (numpy's integer arithmetic has no tangent
    space; Python ints stay exact). One list, dict or object reached twice through the arguments' lists, tuples
    and dicts is refused (see `_distinct`)."""
    nested = False
    for a in args:
        ta = type(a)
        if ta is float or ta is int or ta is np.ndarray and a.dtype is _F8:  # (the common cases: no isinstance
            continue  # of the abstract ArrayLeaf)
        if ta is list or ta is tuple or ta is dict or not (ta is np.ndarray or isinstance(a, (np.generic, ArrayLeaf))):
            nested = True
        if (ta is np.ndarray or isinstance(a, ArrayLeaf)) and np_dtype(a).kind in "iu":
            args = tuple(as_float(a) if (type(a) is np.ndarray or isinstance(a, ArrayLeaf))
                         and np_dtype(a).kind in "iu" else a for a in args)
            break
    return _distinct(args) if nested and len(args) + sum(type(a) in (list, tuple, dict) for a in args) > 1 else args


def _distinct(args: tuple) -> tuple:
    """args with the tuples reached twice through their lists, tuples and dicts made anew (`gradient(f, (1.0, 2.0),
    (1.0, 2.0))`: one constant object); a list, dict or object reached twice refused. Reverse mode gives an
    object's cotangent once, to the object: each place it is reached from was given the sum of all (gen22 W3:
    `gradient(f, L, L)` gave both arguments the cotangents of both)."""
    seen: dict = {}
    repeated_tuple = False

    def walk(v, depth: int) -> None:
        nonlocal repeated_tuple
        t = type(v)
        if t is float or t is int or t is bool or t is str or v is None or t is np.ndarray \
                or isinstance(v, (np.generic, numbers.Number, ArrayLeaf)):
            return
        if id(v) in seen:
            if t is tuple:
                repeated_tuple = True
                return
            raise OverdubError(
                f"the same {t.__name__} is passed twice among the arguments (by identity): reverse mode gives an "
                "object one cotangent, which each place it is passed at would hold whole",
                fix="pass copies (`copy.deepcopy`), or pass it once and read it twice inside the function")
        seen[id(v)] = v
        if depth < 6 and (t is list or t is tuple or t is dict or isinstance(v, (list, tuple, dict))):
            for item in (v.values() if isinstance(v, dict) else v):
                walk(item, depth + 1)
    for a in args:
        walk(a, 0)
    if not repeated_tuple:
        return args

    def anew(v, depth: int):
        if type(v) is tuple and depth < 6:
            return tuple([anew(u, depth + 1) for u in v])
        if type(v) is list and depth < 6 and any(type(u) is tuple for u in v):
            return [anew(u, depth + 1) for u in v]
        return v
    return _distinct(tuple(anew(a, 0) for a in args))


def _wrt_mask(args: tuple, wrt) -> tuple[tuple, int]:
    """The positions `wrt` names (an int or a sequence of ints) and the mask of the arguments to
    differentiate: those, and any other container or object that may hold a differentiated value (it may
    hold a chosen one, or change it), whose gradient is computed and dropped — so each gradient is the one
    `gradient` without `wrt` gives at that position. An array left out sharing memory with a chosen one
    is refused: the memory's cotangent would be split between the two."""
    chosen = (wrt,) if isinstance(wrt, int) and not isinstance(wrt, bool) else tuple(wrt) if isinstance(
        wrt, (tuple, list, range)) else None
    n = len(args)
    if not chosen or any(type(i) is not int or not -n <= i < n for i in chosen):
        raise OverdubError(f"`wrt` names the arguments to differentiate by position, got {wrt!r} for "
                           f"{n} argument{'s' * (n != 1)}",
                           fix="pass an int or a tuple of ints, each from 0 to len(args) - 1: "
                               "`gradient(f, x, n, wrt=0)`")
    chosen = tuple(i % n for i in chosen)
    if len(set(chosen)) < len(chosen):
        raise OverdubError(f"`wrt` names an argument twice: {wrt!r}", fix="name each argument once")
    mask = 0
    for i in chosen:
        mask |= 1 << i
    arrays = [i for i in chosen if type(args[i]) is np.ndarray]
    for j, a in enumerate(args):
        if mask >> j & 1 or isinstance(a, _IMMUTABLE):
            continue
        parts = (a,) if type(a) is np.ndarray else (a.values() if isinstance(a, dict) else a if isinstance(
            a, (list, tuple)) else fields_of(a).values() if has_fields(a) else ())
        shared = next((i for i in arrays for p in parts if type(p) is np.ndarray and np.may_share_memory(p, args[i])),
                      None)
        if shared is not None:
            raise OverdubError(
                f"argument {j}, left out of `wrt`, {'shares memory with' if parts == (a,) else 'holds'} "
                f"argument {shared}: the gradient of that array would be split between the two",
                fix=f"pass a copy (`x.copy()`), or choose both (`wrt=({min(shared, j)}, {max(shared, j)})`)")
        if type(a) is not np.ndarray and _runtime._any_differentiable((a,), _NOKW):
            mask |= 1 << j
    return chosen, mask


_IMMUTABLE = (numbers.Number, str, bytes, type(None), np.generic)


def _reverse_pass(f, pb, seed, args, S):
    """The gradients of a call of f recorded as pb, seeded with `seed`, in the session S: `_twin_back`'s first case
    inline where f's adjoint was made by an earlier call (the entries' common case), the pullback otherwise; the
    boxes' cotangents of the arguments, and the arguments as the reverse pass left them (`finalize`)."""
    rev = None
    if pb[0] is _twin_back and not pb[3] and not pb[5]:  # (an observed entry's pullback is another's)
        info = pb[1]
        rev = info.rev
        if rev is None and (last := info.rev_last) is not None and info.tier is None and last[0] is f.__globals__:
            rev = last[1]
    if rev is not None:
        try:
            dparams, dcells = rev(S, pb[2], seed, None, None, None)
        except Exception as e:
            _note_transformed(e, f, "reverse mode (its reverse pass)")
            raise
        if pb[4] == info.argcount == len(dparams) and not dcells:
            dargs = dparams
        else:
            dargs = _twin_back_rest(pb, info, dparams, dcells, None, False, S)[1]
    else:
        dargs = pb[0](pb, seed, None, S)[1]
    return _passed_back(dargs, args, S) if S.boxes or S._redo else dargs


def _passed_back(dargs, args, S):
    """`_reverse_pass`'s last steps: the boxes' cotangents of the arguments, and the arguments as the reverse
    pass left them."""
    if dargs is not None and S.boxes:
        dargs = _with_boxes(dargs, args, S)
    if S._redo and dargs is not None:
        # the arguments as they were given, before the changes the reverse pass undid are made again: an entry f
        # popped from a dict argument has its gradient (the argument as f left it was mirrored: `d.pop("a")`'s
        # derivative was missing, gen22 W8)
        dargs = _Finalized(finalize(g, a) for g, a in zip(dargs, args))
    return dargs


def _float_gradient(f, args):
    """`_value_and_gradient(f, args)[1]` for a Python function of one float (`args`) whose twin and adjoint an
    earlier call made, as its steps (kept in step with it) without the tests their kinds answer: the
    arguments', `wrt`'s, the pullback's shape (`_twin_call`'s short key and `_twin_back`'s first case, inline
    there). Where the twin is not at hand, before anything runs: `_value_and_gradient`."""
    short = None
    if _rules.get(f) is None and not _runtime._overriding and not _GUARDED and f.__kwdefaults__ is None:
        short = _short_map.get((id(f.__code__), ARGUMENTS_ONLY, 1))
    if short is None or short[1] is not f.__defaults__ or (last := short[0].fwd_last) is None or not (
            last[0] is f or type(last[0]) is _WeakRef and last[0]() is f) or last[2] is not f.__defaults__ or (
            short[0].numbers is not None and not _numbers_bound(short[0].numbers, (), args)):
        return _value_and_gradient(f, args)[1]
    info = short[0]
    _depth.enter()
    try:
        outer = _SPECIAL_HITS.get()  # (`_nestlevel`, inline)
        level = 0 if outer is None else outer.level
        if not level:
            _fresh_recording()
        found = _Hits()  # (`_recording(level + 1)`, inline)
        found.level = level + 1
        hits = _SPECIAL_HITS.set(found)
        try:
            try:
                obs = observer() if _checking.get() is not None or _stack.get() else None  # (the common case)
                if obs is not None:  # a debugging context or ADContext(check=True) sees every operation
                    y, pb = observed_entry(obs, ARGUMENTS_ONLY, f, args, {})
                else:
                    try:
                        y, tape = last[1](args[0])
                    except Exception as e:
                        _recording_failed(e, info, f)
                        raise
                    pb = (_twin_back, info, tape, 0, 1, _NOKW, f, None)
            finally:
                found.level = level  # (the reverse pass runs at the caller's level)
            checked = None
            if found:
                checked = _check_special(f, args, {}, found[:]), found[:]
                found.clear()
            seed = 1.0 if type(y) is float or type(y) is np.float64 else _seed(y)  # (`_seed`'s float case)
            if pb is None:
                dargs = None
            else:
                S = Session()
                try:
                    if obs is None and (rev := info.rev) is not None:
                        # (`_reverse_pass`'s first case, inline: f's own adjoint, made by an earlier call)
                        try:
                            dparams, dcells = rev(S, tape, seed, None, None, None)
                        except Exception as e:
                            _note_transformed(e, f, "reverse mode (its reverse pass)")
                            raise
                        dargs = dparams if info.argcount == 1 == len(dparams) and not dcells else (
                            _twin_back_rest(pb, info, dparams, dcells, None, False, S)[1])
                        if S.boxes or S._redo:
                            dargs = _passed_back(dargs, args, S)
                    else:
                        dargs = _reverse_pass(f, pb, seed, args, S)
                finally:
                    if S._redo:
                        S.finish()
                if found:
                    checked = _check_special(f, args, {}, found[:]), found[:]
                if checked is not None and callable(checked[0]) and dargs is not None \
                        and type(dargs) is not _Finalized:
                    checked[0](dargs, args)
        finally:
            _SPECIAL_HITS.reset(hits)
    except StopIteration as e:
        raise _stopped(f) from e
    except Exception as e:
        raise entry_error(e)
    finally:
        _depth.leave()
    if dargs is not None and type(dargs) is not _Finalized and type(g := dargs[0]) is float and g == g:
        return (g,)  # (finalize's first case: the common answer)
    return _gradients_of(f, args, None, None, y, seed, dargs, pb)[1]


def _value_and_gradient(f, args, wrt=None):
    """Both passes under one raised recursion limit (the hot path of `gradient`)."""
    if not callable(f):
        _check_callable(f)
    if len(args) != 1 or (t0 := type(args[0])) is not float and not (t0 is _NDARRAY and args[0].dtype is _F8):
        args = _promote(args)  # (one float, or one float64 array: nothing to promote, `_promote`'s first case)
    mask, chosen = ARGUMENTS_ONLY, None
    if wrt is not None:
        chosen, mask = _wrt_mask(args, wrt)
    _depth.enter()
    try:
        outer = _SPECIAL_HITS.get()  # (`_nestlevel`, inline)
        level = 0 if outer is None else outer.level
        if not level:
            _fresh_recording()
        # (equality tests found equal by the recording, and by recordings the reverse pass makes, a Python
        # operator's adjoint: does the value move? forward mode says; and the recordings' level, `nestlevel`)
        found = _Hits()  # (`_recording(level + 1)`, inline)
        found.level = level + 1
        hits = _SPECIAL_HITS.set(found)
        try:
            try:
                obs = observer() if _checking.get() is not None or _stack.get() else None  # (the common case)
                info = None  # (f's twin, where its short key found it)
                if obs is None:  # f's own gradient (its cells) is not wanted
                    if type(f) is _FunctionType and _rules.get(f) is None and not _runtime._overriding:
                        # (`call`'s first case, inline; and `_twin_call`'s short key, inline: a twin made by
                        # an earlier call, for arguments of these types, run without the two calls between)
                        short = None
                        if chosen is None and not _GUARDED and f.__kwdefaults__ is None:
                            short = _short_map.get((id(f.__code__), ARGUMENTS_ONLY, len(args)))
                        if short is not None and short[1] is f.__defaults__ and (
                                last := short[0].fwd_last) is not None and (
                                last[0] is f or type(last[0]) is _WeakRef and last[0]() is f) and (
                                last[2] is f.__defaults__) and (type(args[0]) in _NEVER_CONSTANT if len(args) == 1 else _of_types(
                                    args, _NEVER_CONSTANT)) and (
                                short[0].numbers is None or _numbers_bound(short[0].numbers, (), args)):
                            try:
                                y, tape = last[1](*args)
                            except Exception as e:
                                _recording_failed(e, short[0], f)
                                raise
                            info = short[0]
                            pb = (_twin_back, info, tape, 0, len(args), _NOKW, f, None)
                        else:
                            y, pb = _twin_call(mask if chosen is None else mask | CELLS_CONSTANT, f, (), args, _NOKW)
                    else:
                        y, pb = call(mask, f, *args)
                else:  # a debugging context or ADContext(check=True) sees every operation
                    y, pb = observed_entry(obs, mask, f, args, {})
            finally:
                found.level = level  # (the reverse pass runs at the caller's level)
            checked = None
            if found:
                checked = _check_special(f, args, {}, found[:]), found[:]
                found.clear()
            seed = 1.0 if type(y) is float or type(y) is np.float64 else _seed(y)  # (`_seed`'s float case)
            if pb is None:
                dargs = None
            else:
                S = Session()
                try:
                    if info is not None and (rev := info.rev) is not None:
                        # (`_reverse_pass`'s first case, inline: f's own adjoint, made by an earlier call)
                        try:
                            dparams, dcells = rev(S, tape, seed, None, None, None)
                        except Exception as e:
                            _note_transformed(e, f, "reverse mode (its reverse pass)")
                            raise
                        dargs = dparams if len(args) == info.argcount == len(dparams) and not dcells else (
                            _twin_back_rest(pb, info, dparams, dcells, None, False, S)[1])
                        if S.boxes or S._redo:
                            dargs = _passed_back(dargs, args, S)
                    else:
                        dargs = _reverse_pass(f, pb, seed, args, S)
                finally:
                    if S._redo:  # (the common case: nothing to redo, no call)
                        S.finish()
                if found:
                    checked = _check_special(f, args, {}, found[:]), found[:]
                if checked is not None and callable(checked[0]) and dargs is not None \
                        and type(dargs) is not _Finalized:
                    checked[0](dargs, args)  # (reverse mode's own gradient against forward mode's: `compose`)
        finally:
            _SPECIAL_HITS.reset(hits)
    except StopIteration as e:
        raise _stopped(f) from e
    except Exception as e:
        raise entry_error(e)  # (a refusal a library turned into its own error; the user's lines)
    finally:
        _depth.leave()
    return _gradients_of(f, args, wrt, chosen, y, seed, dargs, pb)


def _gradients_of(f, args, wrt, chosen, y, seed, dargs, pb):
    """`_value_and_gradient`'s answer from its passes' cotangents of the arguments, dargs."""
    if dargs is None:
        dargs = (None,) * len(args)
    if type(dargs) is _Finalized:
        grads = tuple(dargs) if chosen is None else tuple([dargs[i] for i in chosen])
    elif chosen is not None:
        grads = tuple([finalize(dargs[i], args[i]) for i in chosen])
    elif len(args) == 1:
        g = dargs[0]
        if type(g) is float and type(args[0]) is float and g == g:  # (finalize's first case, inline)
            return y, (g,)
        if type(args[0]) is _NDARRAY and _finished(g, args[0]) and type(seed) is not dict:
            return y, (g,)  # (an array's: what the steps below give it)
        grads = (finalize(g, args[0]),)
    else:  # (finalize's first two cases, inline: a float's float cotangent, an int's None; a loop, not a
        grads = []  # comprehension, which makes a function per call)
        done = len(dargs) == len(args) and type(seed) is not dict  # (floats and arrays `_finished` only, so far)
        steering = _steering(pb) if done else ()
        i = -1
        for g, a in zip(dargs, args):
            i += 1
            if type(g) is float and type(a) is float:
                grads.append(g)
                done = done and g == g
            elif done and type(a) is _NDARRAY and _finished(g, a):
                grads.append(g)
            elif g is None and type(a) is int and i in steering:
                grads.append(0)  # (a counter the twin takes as steering only: `_counted_ints` passes it)
            else:
                done = False
                grads.append(0 if g is None and type(a) is int else finalize(g, a))
        grads = tuple(grads)
        if done:  # (no NaN, no integer, no container's seed: what the steps below give them)
            return y, grads
    if _nan_where_finite(grads, y):  # (0 * inf on the way back: forward mode may carry it to where it ends)
        grads = _nan_by_forward(f, args, chosen or tuple(range(len(args))), grads)
    if type(seed) is dict:  # (an output of a registered container kind: pint's units)
        grads = _of_output(container_of(y), grads, y)
    if args and (len(args) > 1 or type(args[0]) is not float):  # (one float: no integer among the arguments)
        ints = _counted_ints(args, chosen, pb)
        if ints:
            grads = _ints_checked(lambda moved: _value_and_gradient_at(f, moved, wrt), args, y, grads, ints,
                                  chosen if chosen is not None else range(len(args)), chosen is not None)
    return y, grads


def _finished(g, a) -> bool:
    """g, a float64 array argument a's cotangent, is its final gradient, as `_gradients_of`'s steps would give it:
    of a's shape (`finalize` gives it as is), without NaN (`_nan_where_finite` says no), and a is no integer
    (`_counted_ints` passes it)."""
    if type(g) is not _NDARRAY or type(a) is not _NDARRAY or g.dtype is not _F8 or a.dtype is not _F8 or (
            g.shape != a.shape):
        return False
    n = g.size
    if n and n < 1024 and (ones := _ONES.get(g.shape)) is not None:  # (`_has_nan`'s small case, inline)
        return not _isnan(g.dot(ones))
    return not (n and _has_nan(g))


def _steering(pb) -> frozenset | tuple:
    """The argument positions f's own twin (`pb`'s, no `self`) takes as steering only, which
    `_counted_ints` passes (`_TwinInfo.steering`)."""
    return pb[1].steering if pb is not None and pb[0] is _twin_back and not pb[3] else ()


def _of_types(args: tuple, types_) -> bool:
    """Every argument's type is one of `types_` (a set)."""
    for a in args:
        if type(a) not in types_:
            return False
    return True


def _counted_ints(args: tuple, chosen, pb) -> list:
    """The positions of the differentiated integers among args (a Python int, a numpy integer, or a list or
    tuple holding them) that f's twin does not take as steering only (`n` of `while n > 0: n -= 1`, which
    reaches no value: `pb`'s twin leaves it out of its active names, or binds it to numbers, `info.numbers`)."""
    out = []
    i = -1
    for a in args:
        i += 1
        ta = type(a)
        if ta is float or ta is _NDARRAY or ta is bool:
            continue
        if (ta is int or isinstance(a, _INTEGER) or (ta is list or ta is tuple) and any(
                type(v) is int or isinstance(v, _INTEGER) for v in a)) and (chosen is None or i in chosen):
            out.append(i)
    if out and pb is not None and pb[0] is _twin_back and not pb[3]:  # (f's own twin, no `self`)
        info = pb[1]
        names = info.names
        steering = info.numbers or ()
        kept = []  # (a loop, not a comprehension: the common answer is none, for a counter `n` as here)
        for i in out:
            if i not in steering and (i >= info.argcount or names[i] in info.active):
                kept.append(i)
        out = kept
    return out


def _as_floats(a):
    """An integer (or a list or tuple's integers) as floats of the same values."""
    if type(a) is int:
        return float(a)
    if isinstance(a, np.integer):
        return np.float64(a)
    return type(a)(_as_floats(v) if type(v) is int or isinstance(v, np.integer) else v for v in a)


def _ints_checked(run: Callable, args: tuple, y, answers: tuple, ints: list, positions, chosen: bool = False
                  ) -> tuple:
    """The answers (one per position, of `positions`) of an entry point where differentiated integers are
    among f's arguments (`ints`): numpy takes an integer for a constant (`np.sin(1)`'s rule has no partial in
    an integer argument, `np.asarray(3)` is an integer array, `np.power(1, 2)` an integer): the derivative
    through them was dropped, silently (0 for `np.sin`'s cos(1)). `run(args)` -> (value, answers) runs again
    with those integers given as floats of the same values; where that run's value is y and its answer for
    such an argument differs, the answer is the float run's (the derivative of the code over the reals; what
    an int keeps exact in pure Python, `x * x` at 3, it gives equal, exact). Where f does not take a float
    there (`range(n)`, an index: a count, which has no derivative) or computes another value from it (a
    branch on the type), the integer run's answers stand. Where the float run is refused, the integer run's
    answer for such an argument may be the dropped one (0 for astropy's comoving distance at z = 0): it is
    None beside other arguments the call differentiates (a count `n` of a recursion `fib(x, n)`, whose float
    meets its branch boundary `n <= 1` at 1.0: no derivative there), and refused where it is the only one or
    `chosen` by `wrt` (`integer_refused`). Forward mode's: `forward.api._ints_checked`."""
    try:
        y2, answers2 = run(tuple(_as_floats(a) if i in ints else a for i, a in enumerate(args)))
    except OverdubError as e:  # (refused at the float: the integer run may have lost the derivative)
        return _none_at_ints(answers, positions, ints, args, e, chosen)
    except Exception:  # (a count, an index: the float is no value it takes; the integer run's answers stand)
        return answers
    if not same_numbers(y, y2):
        return answers
    return tuple(a2 if i in ints and not same_numbers(a, a2) else a
                 for i, a, a2 in zip(positions, answers, answers2))


def _none_at_ints(answers: tuple, positions, ints: list, args: tuple, e: OverdubError, chosen: bool) -> tuple:
    """`_ints_checked`'s answers where the float run was refused: None for the integer arguments beside
    others differentiated (no derivative established for them), else the refusal."""
    if chosen or len(ints) == len(args):
        raise integer_refused(ints, args, e) from e
    return tuple(None if i in ints else a for i, a in zip(positions, answers))


def _nan_where_finite(grads: tuple, y) -> bool:
    """A gradient entry is NaN while the output is a finite number (checked once per gradient: one pass over
    each array gradient). A yes may be wrong (a sum of +inf and -inf entries): `_nan_by_forward` looks at the
    entries themselves and changes only NaN ones; a no is never wrong."""
    for g in grads:
        tg = type(g)
        if tg is int:  # (a counter's 0: the common other case, before the tests of numpy's types)
            continue
        if ((tg is float or tg is _FLOAT64 or tg is complex or tg is _COMPLEX128) and g != g) or (
                tg is _NDARRAY and g.dtype.kind == "f" and g.size and _has_nan(g)):
            break
    else:
        return False
    if type(y) is float or type(y) is np.float64:  # (np.isfinite's answer, without a ufunc call)
        return _isfinite(y)
    try:
        return bool(np.isfinite(y))
    except TypeError:  # (not a number numpy knows: no fallback)
        return False


def _has_nan(g: np.ndarray) -> bool:
    """g, a non-empty real array, may hold a NaN: NaN propagates through every sum, so a NaN entry makes g's
    sum NaN (and inf entries of both signs make it NaN too: a false yes). A large contiguous float64 array is
    dotted with itself instead, one BLAS pass (the sum takes three times the instructions: for mlp's 784x300
    weight gradient, a sixth of the whole gradient's): a NaN entry squared is NaN and makes the sum of
    squares NaN, while the squares of the others are >= 0 or +inf, whose sums are never NaN — NaN exactly
    where an entry is. (A square overflowing to inf or underflowing is no NaN: the warning, or the error under
    `np.seterr(all="raise")`, would not be the user's, and is silenced.)"""
    if g.dtype is _F8 and g.size >= 1024 and g.flags.c_contiguous:
        r = g.reshape(-1)  # (a view: contiguous)
        with np.errstate(all="ignore"):
            return _isnan(r.dot(r))
    return _isnan(_sum_f8(g) if g.dtype is _F8 else _add_reduce(g, axis=None))


_F8 = np.dtype(np.float64)
_FLOAT64, _COMPLEX128, _NDARRAY, _INTEGER = np.float64, np.complex128, np.ndarray, np.integer
_add_reduce = np.add.reduce
_sum_f8 = _generic.sum_f8
_ONES = _generic._ONES  # (`sum_f8`'s vectors of ones, by shape)
_isnan = math.isnan  # (of a numpy scalar: it converts to a float; np.float16/32 sums too)
_isfinite = math.isfinite


# forward mode's derivative filling NaN entries (`contexts.compose.nan_by_forward`, above both modes: set
# by `contexts` when it is imported; without it the NaN stays)
NAN_BY_FORWARD: list = []


def _nan_by_forward(f, args, positions, grads):
    return NAN_BY_FORWARD[0](f, args, positions, grads) if NAN_BY_FORWARD else grads


def value_and_gradient(f: Callable, *args: Any, wrt: int | tuple[int, ...] | None = None) -> tuple[Any, tuple]:
    """`(f(*args), gradient(f, *args, wrt=wrt))` in one pass.

    >>> value_and_gradient(lambda x: x ** 3, 2.0)
    (8.0, (12.0,))
    """
    return _answered(f, args, wrt)


BY_FORWARD: list = []
"""[by_forward(f, args, wrt, refusal)]: (f's value, its gradient) by forward mode where reverse mode refused
for a limit of its own, or the refusal raised (set by the package: `contexts.compose.by_forward`)."""

LIMITS = (MissingRule, TextRoundTrip, SpecialPoint, UnsupportedFunction, EagerIterationError,
          ArrayConversionUnseen, UnsupportedCase, ObjectArrayMade, DifferentiatedKey)
"""Refusals of what reverse mode cannot follow (a C function without a rule, a number whose text is parsed
and whose activity it cannot tell, a test of a value at a special point it cannot check), which forward
mode's duals may: `_answered` asks forward mode for small inputs."""


def _answered(f, args, wrt):
    """`_value_and_gradient_at`, or where reverse mode refused for a limit of its own (`LIMITS`), outermost
    and under no context but the modes' own, forward mode's answer (`compose.by_forward`: for inputs of a few numbers); the
    refusal, with a note of forward mode's, where forward mode cannot answer either."""
    try:
        try:
            return _value_and_gradient(f, args, wrt)  # (`_value_and_gradient_at`, inline: one frame less)
        except SidesTaken as e:
            return _sides_taken(f, args, wrt, e)
    except LIMITS as e:
        if not BY_FORWARD or _nestlevel():
            raise
        return BY_FORWARD[0](f, args, wrt, e)


MEAN_OF_SIDES: list = []
"""[mean_of_sides(run, args)]: set by the package (`contexts.compose.mean_of_sides`)."""


def _of_sides(e: SidesTaken, run: Callable, args: tuple, f: Callable | None = None):
    """Where reverse mode's check found a step's jump or a kink the function is continuous through
    (`SidesTaken`): the mean of run's answers at the two sides of the point; else e."""
    out = MEAN_OF_SIDES[0](run, args, f) if MEAN_OF_SIDES else None
    if out is False:  # (the sides' means differ along two directions: `compose.mean_of_sides`)
        raise SpecialPoint(f"{e.what.split(' (judged')[0]}: the mean of the gradients at its two sides differs "
                           "along two directions, so the function has no derivative there (a cone's apex, "
                           "`x*y**2/(x**2+y**2)` at 0)", where=e.where, fix="differentiate at a point off it")
    if out is None:
        raise e from None
    return out


def _value_and_gradient_at(f, args, wrt):
    """`_value_and_gradient`, or at a step's jump or a kink f is continuous through, f's value and the mean
    of its gradients at the two sides of the point (`_of_sides`)."""
    try:
        return _value_and_gradient(f, args, wrt)
    except SidesTaken as e:
        return _sides_taken(f, args, wrt, e)


def _sides_taken(f, args, wrt, e: SidesTaken):
    args = _promote(args)
    grads = _of_sides(e, lambda moved: _value_and_gradient(f, moved, wrt)[1], args, f)
    return f(*args), grads


def gradient(f: Callable, *args: Any, wrt: int | tuple[int, ...] | None = None) -> tuple:
    """One gradient per argument of a real-scalar function (`None` where nothing is differentiable).

    `wrt` (JAX's `argnums`) chooses the arguments by position: the gradients of those only, in that
    order, the others held constant (partial derivatives) — and not differentiated at all, so a counter
    or a size passed in costs nothing. A container or object left out that may hold differentiated values
    is still followed (each gradient is the one `gradient` without `wrt` gives at its position); an array
    left out that shares memory with a chosen one, or a container holding such an array, is refused.

    >>> gradient(lambda x, y: x * y + y, 2.0, 3.0)
    (3.0, 3.0)
    >>> gradient(lambda x, y: x * y + y, 2.0, 3.0, wrt=1)
    (3.0,)
    """
    try:  # (`_answered`, inline: one frame less)
        try:
            if wrt is None and len(args) == 1 and type(args[0]) is float and type(f) is _FunctionType:
                return _float_gradient(f, args)  # (the common call: a function of one float)
            return _value_and_gradient(f, args, wrt)[1]
        except SidesTaken as e:
            return _sides_taken(f, args, wrt, e)[1]
    except LIMITS as e:
        if not BY_FORWARD or _nestlevel():
            raise
        return BY_FORWARD[0](f, args, wrt, e)[1]


def vjp(f: Callable, primals: tuple, cotangents: Any) -> tuple[Any, tuple]:
    """`(f(*primals), cotangents · J)`: the vector-Jacobian product, one entry per primal.

    >>> vjp(lambda x: [x, 2 * x], (3.0,), [1.0, 1.0])
    ([3.0, 6.0], (3.0,))
    """
    y, back = _pullback_checked(f, tuple(primals), full=False)
    return y, back(cotangents)[1]


def _of_objects(a) -> bool:
    """a holds Python numbers as objects (Fractions): its derivatives are kept so, not made floats."""
    return getattr(a, "dtype", None) == object or (
        isinstance(a, (list, tuple)) and np.asarray(a).dtype == object)


def _real_input(a) -> bool:
    """a is a real number or array of them (a complex output's Jacobian is then one complex matrix)."""
    if isinstance(a, (bool, int, float, np.floating, np.integer)):
        return True
    return isinstance(a, np.ndarray) and a.dtype.kind in "fiub"


def _complex_row(re, im):
    if re is None and im is None:
        return None
    re = 0.0 if re is None else re
    im = 0.0 if im is None else im
    return np.asarray(re) + 1j * np.asarray(im) if isinstance(re, np.ndarray) or isinstance(im, np.ndarray) else (
        complex(re) + 1j * complex(im))


class _Finalized(tuple):
    """Gradients already shaped like the arguments (`finalize`), before the arguments' changes were made again."""


def _of_several_shapes(y) -> bool:
    """A list or tuple output whose entries are not all numbers: arrays, or containers (a block each)."""
    return all(type(v) is np.ndarray or isinstance(v, (numbers.Number, np.generic, dict, list, tuple)) for v in y) \
        and any(type(v) is not np.ndarray and not isinstance(v, (numbers.Number, np.generic)) for v in y) or (
            all(type(v) is np.ndarray or isinstance(v, (numbers.Number, np.generic)) for v in y)
            and len({np.shape(v) for v in y}) > 1)


def _entry_of(f: Callable, key) -> Callable:
    def entry(*args):
        return f(*args)[key]
    return entry


def _with_boxes(dargs: tuple, args: tuple, S) -> tuple:
    """The arguments' cotangents with what their boxes hold: a list's, dict's or object's entries given their
    cotangents into its box by a rule that had no variable of it at hand (`sum(d.values())` of a dict argument:
    the items' cotangents went to the dict's box, the argument's own was None, and the gradient came out zero,
    gen22 W6), also for containers inside the arguments (`m.params.values()`)."""
    if not S.boxes:
        return dargs
    seen: set = set()
    return tuple(_boxed(g, a, S, seen, 0) for g, a in zip(dargs, args))


def _boxed(g, a, S, seen: set, depth: int):
    if depth > 4 or id(a) in seen or not (isinstance(a, (list, dict)) or (
            has_fields(a) and not isinstance(a, (tuple, np.ndarray, np.generic, type, types.ModuleType,
                                                 types.FunctionType)))):
        return g
    seen.add(id(a))
    b = S.boxes.get(id(a))
    if b is not None and g is not b:
        g = b if g is None else acc_cotangents(b, g)
    entries = (a.items() if isinstance(a, dict) else enumerate(a) if isinstance(a, list) else fields_of(a).items())
    made = g is None  # (nothing came for a itself: a holder made for what its entries' boxes hold, if any)
    if made:
        g = [None] * len(a) if isinstance(a, list) else {} if isinstance(a, dict) else Tangent()
    found = False
    for k, v in entries:
        if isinstance(v, (list, dict)) or has_fields(v):
            if isinstance(g, dict):  # (a dict's, a MapBox, an object's Tangent)
                inner = g.get(k)
                new = _boxed(inner, v, S, seen, depth + 1)
                if new is not inner:
                    g[k], found = new, True
            elif isinstance(g, list) and k < len(g):  # (a list's, a SeqBox)
                new = _boxed(g[k], v, S, seen, depth + 1)
                if new is not g[k]:
                    g[k], found = new, True
    return None if made and not found else g


def jacobian(f: Callable, *args: Any, mode: str = "auto"):
    """The Jacobian of f at args: for one array/scalar argument an array of shape (outputs, inputs),
    else a tuple with one block per argument. Reverse mode runs one pullback per output element on one
    recorded forward pass; `mode="forward"` hands over to forward mode, one pass per 16 inputs (its chunk);
    `mode="auto"` (the default) is forward mode for up to `FORWARD_FIRST` (3) plain float inputs, then
    reverse mode, or forward mode where f maps fewer plain floats to more (`_forward_cheaper`, known once
    reverse mode's recording has counted the outputs); reverse mode's rows where forward mode refuses.

    >>> jacobian(lambda x: np.array([x[0] * x[1], x[0]]), np.array([2.0, 3.0]))
    array([[3., 2.],
           [1., 0.]])
    """
    if mode == "forward":
        from ..forward import jacfwd
        if len(args) == 1:
            return jacfwd(f, args[0])
        # one block per argument, as reverse mode gives them (the second argument went to jacfwd's `chunk`:
        # f ran with its default there, silently, gen22 W1)
        return tuple(jacfwd(lambda a, i=i: f(*args[:i], a, *args[i + 1:]), args[i]) for i in range(len(args)))
    if mode != "reverse" and mode != "auto":
        raise OverdubError(f"unknown jacobian mode {mode!r}",
                           fix='use mode="auto" (the default), mode="reverse" or mode="forward"')
    if mode == "auto" and 0 < _plain_inputs(args) <= FORWARD_FIRST and not _nestlevel():
        # a few plain floats in: forward mode's one pass first (a Jacobian of them has, almost always, more
        # outputs than inputs; reverse mode's recording, made first to count the outputs, cost as much as
        # forward mode's whole answer: statsmodels' arma_acf 531 ms against 148 ms)
        try:
            J = jacobian(f, *args, mode="forward")
        except Exception:  # (forward mode's refusal, or a library's error on its duals: reverse mode's rows)
            J = None
        if J is not None and all(type(b) is np.ndarray and b.dtype == np.float64
                                 for b in (J if len(args) > 1 else (J,))):
            return J  # (else an output of another kind, a dict, a Quantity: as reverse mode gives it)
    blocks = _jacobian(f, args, mode == "auto")
    if type(blocks) is _Answered:  # (answered by `jacobian` calls of its own, each checked)
        return blocks.value
    ints = _counted_ints(args, None, None)
    if ints:  # (integers among the arguments: numpy may have dropped their derivative, `_ints_checked`)
        blocks = _ints_checked(lambda moved: (f(*moved), _jacobian(f, moved)), args, f(*args), blocks, ints,
                               range(len(args)))
    return blocks[0] if len(args) == 1 else blocks


FORWARD_FIRST = 3
"""`jacobian`'s default mode takes forward mode's Jacobian first for at most this many plain float inputs."""


def _plain_inputs(args: tuple) -> int:
    """The number of entries of args, all plain floats and float64 arrays; 0 for any other argument."""
    n = 0
    for a in args:
        if type(a) is float:
            n += 1
        elif type(a) is np.ndarray and a.dtype == np.float64:
            n += a.size
        else:
            return 0
    return n


def _forward_cheaper(args: tuple, y) -> bool:
    """Forward mode's Jacobian takes fewer passes than reverse mode's one per output: args are plain floats
    and float arrays (nothing forward mode's answer would change the kind of: Fractions, Quantities, ints
    whose derivative `_ints_checked` judges) of fewer entries than y, a float array, has (skfuzzy's membership
    functions of 3 parameters on 11 points, a rotation matrix of 3 angles)."""
    if type(y) is not np.ndarray or y.dtype != np.float64:
        return False
    n = _plain_inputs(args)
    return 0 < n < y.size


class _Answered:
    """`_jacobian`'s whole answer, made of `jacobian`'s own (a dict output's entries, the two sides' mean)."""

    def __init__(self, value):
        self.value = value


def _jacobian(f: Callable, args: tuple, auto: bool = False) -> tuple:
    """Reverse mode's Jacobian of f at args: one block per argument (or `_Answered`); `auto`: forward mode's
    where it is cheaper (`_forward_cheaper`) and answers."""
    try:
        y, back = _pullback(f, args, {}, full=False)
    except SidesTaken as e:  # (a step's jump or a kink f is continuous through: the two sides' mean)
        return _Answered(_of_sides(e, lambda moved: jacobian(f, *moved), args, f))
    if isinstance(y, dict) or type(y) in (list, tuple) and _of_several_shapes(y):
        # a dict, or a tuple of arrays of other shapes: one Jacobian per entry, as forward mode's jacfwd gives
        # them (a dict's came out zeros, silently; a tuple's a ValueError of numpy's: gen22 W4)
        parts = {k: jacobian(_entry_of(f, k), *args) for k in (y if isinstance(y, dict) else range(len(y)))}
        return _Answered(parts if isinstance(y, dict) else type(y)(parts.values()) if type(y) is list else
                         tuple(parts.values()))
    container = _output_container(y)  # (a pint Quantity, a DataArray: seeded by its values)
    if container is None and has_fields(y) and type(y).__name__ != "Dual" and not isinstance(
            y, (np.ndarray, np.generic, numbers.Number, ArrayLeaf, Scalar, list, tuple, dict)) and not (
            hasattr(type(y), "__mul__") or hasattr(type(y), "__float__")):  # (a number of its own kind: a ufloat)
        # an object's fields are its cotangent, not a vector of outputs to seed: its Jacobian came out zeros (gen22 W4)
        raise OverdubError(f"`jacobian` needs outputs of numbers and arrays, got an object of type {type(y).__name__}",
                           fix="return its numbers (a tuple, a dict or an array of them), or use `jacfwd`")
    values = (container.held(y) if container is not None else
              type(y)(_held(v) for v in y) if type(y) in (list, tuple) else y)  # ([q1, q2]: magnitudes)
    lazy = isinstance(values, ArrayLeaf) and not isinstance(values, _leaf_types.HOSTED)  # a dask array: seeded
    # with numpy's one-hots, its rows kept lazy (a torch tensor's rows are its values': `np.asarray`)
    yarr = values if lazy else np.asarray(values)
    if auto and y is yarr and _forward_cheaper(args, yarr):
        try:
            return _Answered(jacobian(f, *args, mode="forward"))
        except Exception:  # (forward mode's refusal, or a library's error on its duals: reverse mode's rows)
            pass
    rows = []
    for i in range(yarr.size):
        seed = (np.zeros(yarr.shape) if lazy else  # (of exact 0 and 1 where y holds objects: Fractions)
                np.zeros(yarr.shape, dtype=yarr.dtype if yarr.dtype.kind in "cOf" else float))
        # (C order: `seed.reshape(-1)` is then a view; zeros_like kept a transposed output's F order, the
        # one-hot went into reshape's copy, and every row of the Jacobian was 0)
        if seed.dtype == object:  # (each entry's own 0 and 1: a Decimal's, as `gradient` seeds it; an
            # int 1 made a float of np.mean's 1 / n, which a Decimal cannot multiply)
            e = yarr.flat[i]
            one = Fraction(1) if isinstance(e, Fraction) else kind_of(e).one(e) if isinstance(e, Scalar) else 1
            seed[...] = 0 * one
            seed.reshape(-1)[i] = one
        else:
            seed.reshape(-1)[i] = 1
        dy = (seed if isinstance(values, (np.ndarray, ArrayLeaf)) else
              seed.item() if yarr.ndim == 0 else list(seed))
        row = back(dy)[1]
        if yarr.dtype.kind == "c" and not lazy and all(_real_input(a) for a in args):
            # a complex output of real inputs: the one-hot's pullback is the row's real part, the pullback of
            # 1j times it its imaginary part (the real part alone was returned: 2 for 2+1j)
            dyi = (1j * seed if isinstance(values, np.ndarray) else (1j * seed).item() if yarr.ndim == 0 else
                   list(1j * seed))
            row = tuple(_complex_row(re, im) for re, im in zip(row, back(dyi)[1]))
        rows.append(row)
    blocks = []
    for j, a in enumerate(args):
        if not yarr.ndim and (container is not None or _held(a) is not a or not isinstance(
                a, (numbers.Number, np.ndarray, np.generic, list, tuple, ArrayLeaf))):  # (a ufloat)
            blocks.append(rows[0][j])  # (a scalar output's gradient, as `gradient` gives it: units, labels)
            continue
        held = _held(a)
        arr = as_array(held) if _keeps_kind(held) else as_array(held, dtype=float)
        entries = [r[j] for r in rows]
        if any(e is not None and _held(e) is not e for e in entries):  # (Quantities: pint's stack keeps units)
            kept = next(e for e in entries if e is not None)
            block = np.stack([np.reshape(e if e is not None else 0 * kept, -1) for e in entries])
        else:
            block = np.stack([as_array(e if e is not None else np.zeros_like(arr)).reshape(-1) for e in entries])
        blocks.append(block.reshape(yarr.shape + arr.shape) if yarr.ndim else block.reshape(arr.shape))
    blocks = _nan_rows_by_forward(f, args, blocks, yarr)
    return tuple(in_kind(b, a) for b, a in zip(blocks, args))  # (a JAX array's: a JAX array)


def _nan_rows_by_forward(f, args, blocks, yarr):
    """NaN entries of a reverse Jacobian where the output is finite (0 * inf on the way back: a sqrt at 0 in
    the branch an np.where leaves out, pvlib's `_dist`) taken from forward mode's Jacobian, as `gradient`'s
    are (`nan_by_forward`); where forward mode is NaN too, refuses or cannot run, the NaN stays."""
    if _lazy_or_objects(yarr) or not any(isinstance(b, np.ndarray) and b.dtype.kind in "fc" and np.isnan(b).any()
                                         for b in blocks):
        return blocks
    try:
        if not np.isfinite(yarr).all():
            return blocks
    except TypeError:
        return blocks
    from ..forward import jacfwd
    out = list(blocks)
    for j, (a, b) in enumerate(zip(args, blocks)):
        if not (isinstance(b, np.ndarray) and np.isnan(b).any()) or not (
                isinstance(a, (float, np.floating)) or isinstance(a, np.ndarray) and a.dtype.kind == "f"):
            continue

        def along(t, j=j):
            return f(*args[:j], t, *args[j + 1:])
        try:
            J = np.asarray(jacfwd(along, a))
        except Exception:  # (forward mode refused or failed: the NaN stays)
            continue
        if J.shape == b.shape:
            out[j] = np.where(np.isnan(b), J, b)
    return out


def _lazy_or_objects(yarr) -> bool:
    return isinstance(yarr, ArrayLeaf) or getattr(yarr, "dtype", np.dtype(float)).kind not in "fc"


def _keeps_kind(v) -> bool:
    """v's derivatives are not float64: complex, objects (Fractions), or numbers numpy cannot make floats
    of (mpmath's mpc, a sympy expression, a ufloat)."""
    if isinstance(v, (np.ndarray, ArrayLeaf)):  # (a dask array: by its dtype, never computed)
        return np_dtype(v).kind in "cO"
    try:
        return bool(np.iscomplexobj(v)) or _of_objects(v) or np.asarray(v).dtype == object
    except TypeError:  # (numpy's iscomplexobj of a ufloat)
        return True


def _held(a):
    """The values of a registered container (a Quantity's magnitude, a DataArray's array), or a itself."""
    if type(a) is float or type(a) is np.ndarray or not has_fields(a):
        return a
    container = container_of(a)
    return container.held(a) if container is not None and container.held is not None else a
