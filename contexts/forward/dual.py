"""Dual numbers: a primal value with one tangent (or a chunk of k tangents), tagged by the derivative call
that created it.

Invariants:
- `tangent` has the shape of `value` (scalar values: a scalar tangent); with a chunked tag the tangent
  carries a leading axis of k directions: shape `(k,) + shape(value)`.
- Tags are ordered by creation: an inner derivative call has a larger `order`, and its Duals are the
  outermost layer (`Dual(inner, value=Dual(outer, ...), ...)`), so nested forward mode never confuses
  perturbations (ForwardDiff.jl's tag ordering).
- Operations never mutate their operands; `__setitem__` on an array Dual is the only mutation.
"""

from __future__ import annotations

import cmath
import datetime
import itertools
import sys
import types
import weakref
import math
import operator
import decimal
import fractions
import numbers
import os

import numpy as np

from ..lowered.runtime import (HISTORY, ORDER_OPS, divisor_jump, nan_rate_compared, _NO_RATE, _equal_at, apart_rate, moving_tie, tie_moving, UNCHANGEABLE_WHEN, closing_in, equality_guard_fd, near_at, near_guard, zero_rate_near,
                               converged, exit_lines, rounding_residue, staircased, text, JUMP_FUNCTIONS, jump_guard,
                               stair_jump_guard, staircase_fd)
from ..rules.watch import JUMP_WATCH, watch_order
from ..rules.frames import asks_for, is_engine, is_user, outside_engine, tests_none
from ..rules import leaves as _leaves
from ..rules.leaves import UNIT_TYPES, ArrayLeaf, Scalar, taken_per_element
from ..rules.registry import own_operators
from ..lowered.cuts import power_on_cut
from ..rules.cotangents import Refused
from ..rules.generic import integral, sequence_of_items
from ..rules.ties import TiedApart, even_ends, parting_unsorted
from ..rules.numpy._util import masked_entries, masked_refused
from ..rules.numpy.stand_ins import compress_method

from overdub import ops as _overdub_ops
from overdub.errors import OverdubError

__all__ = ["Tag", "Dual", "DualConversionError", "DualInsideError", "top_tag", "split", "primal", "make"]

_orders = itertools.count(1)


_OWN_REFERENCES = 3  # (sys.getrefcount of a tangent only its dual holds, inside `Dual._update`: the slot,
                     # the local name, getrefcount's argument)


def kept_past_its_call() -> OverdubError:
    """A dual of a derivative call that has returned, met again: a module's cache, a global or an object's
    field kept a perturbed value past its call (pygfunction's `thermal_resistances` keeps its last result: a
    later derivative call read it back, 0 for 6, and a plain call raised inside the library)."""
    return OverdubError(
        "a value perturbed by an earlier forward-mode derivative call, which has returned, was kept past it (a "
        "cache in a module, a global, an object's field) and is used again", where=_conversion_site(),
        fix="clear the cache after the derivative call (or before the next), or keep plain values there; "
            "reverse mode (`gradient`) keeps plain values in such caches")


class DualConversionError(OverdubError, TypeError):
    """A Dual was converted to a plain number (float(), a C function, a float array): the derivative
    would be lost silently, so we refuse."""


class DualAttributeError(OverdubError, AttributeError):
    """Code read an attribute a perturbed value does not have as a dual: most often the inside of a number
    (a Fraction's `numerator`, an mpmath mpf's `_mpf_`), which carries no tangent. Still an AttributeError,
    so `hasattr` and `getattr(x, name, default)` answer as before."""

    swallowable = True  # (a probe's answer: code may take its fallback, `overdub.errors.not_swallowed`)


_NUMPY_VALUES = (np.ndarray, np.generic)  # their other attributes are metadata (`.device`, `.flags`), not insides


class DeclinedDual(OverdubError, TypeError):
    """A class's own operator returned NotImplemented for a dual number, where it may take the number."""


class DualInsideError(OverdubError):
    """Code read an attribute that the perturbed value has but its dual does not give (the inside of a
    number: an mpmath mpf's `_mpf_`), which carries no tangent; `hasattr` answered False, and the same
    function then failed (mpmath's `exp` raised NotImplementedError("exp of a mpf")). Raised by the entry
    points in place of that failure (`swallowed`)."""


SWALLOWED: list = []  # [(frame, attribute, type name)]: the last read of a number's inside answered False


_SCALARS = frozenset({float, int, complex})  # (Python's numbers: no `.item()` of their own)
_ITEM_GIVEN = [None]  # (the dual the last `.item()` of a number's dual gave: asked again, a converter's loop)


def _conversion_site() -> str | None:
    """`name (file:line)` of the code converting a dual: the first frame outside the engine and numpy."""
    frame = sys._getframe(2)
    while frame is not None and (is_engine(frame.f_code.co_filename)
                                 or frame.f_code.co_filename.startswith(_NUMPY_DIR)):
        frame = frame.f_back
    if frame is None:
        return None
    code = frame.f_code
    return f"{getattr(code, 'co_qualname', code.co_name)} ({code.co_filename}:{frame.f_lineno})"


_NUMPY_DIR = os.path.dirname(np.__file__) + os.sep


def _package(frame):
    """The top-level package of frame's module (None for a script's own)."""
    name = frame.f_globals.get("__name__") if frame is not None else None
    return None if not name or name == "__main__" else name.split(".")[0]


def swallowed(e: BaseException) -> "DualInsideError | None":
    """A DualInsideError for e when e was raised in the frame whose read of a number's inside was answered
    False (the frame is the one innermost in e's traceback); else None."""
    if not SWALLOWED or isinstance(e, OverdubError):
        return None
    frame, name, kind = SWALLOWED.pop()
    tb = e.__traceback__
    library = _package(frame)
    same = None  # (the innermost frame of e in the reading frame's library: mpmath's `gammainc` raising
    while tb is not None:  # its own ValueError after its conversion found no `_mpf_`)
        if tb.tb_frame is frame or library is not None and _package(tb.tb_frame) == library:
            same = tb
        tb = tb.tb_next
    tb = same
    if tb is None:
        return None
    frame = tb.tb_frame
    where = f"{frame.f_code.co_qualname} ({frame.f_code.co_filename}:{tb.tb_lineno})" if hasattr(
        frame.f_code, "co_qualname") else f"{frame.f_code.co_filename}:{tb.tb_lineno}"
    err = DualInsideError(
        f"forward mode cannot read .{name} of a perturbed {kind}: the value has it, but it is the inside of the "
        f"number and carries no tangent, so the dual answered that it has no .{name} and the function failed "
        f"({type(e).__name__}: {e})", where=where,
        fix="give the function a forward rule (`contexts.rules.registry.frule(fn)`), or compute with the "
            "value's arithmetic and functions that have rules")
    err.__cause__ = e
    return err


class Tag:
    """The identity of one derivative call. `order` grows with creation; `chunk` is k for a Dual that
    carries k tangent directions, None for a single direction."""

    __slots__ = ("order", "chunk", "ended")

    def __init__(self, chunk: int | None = None):
        self.order = next(_orders)
        self.chunk = chunk
        self.ended = False  # (its derivative call has returned: a dual of it met later was kept past the call)

    def __repr__(self) -> str:
        return f"Tag({self.order}{'' if self.chunk is None else f', chunk={self.chunk}'})"


# -- helpers shared by every operation -----------------------------------------------------------

def top_tag(xs) -> Tag | None:
    """The innermost (largest-order) tag among the Duals in xs."""
    tag = None
    for x in xs:
        if type(x) is Dual and (tag is None or x.tag.order > tag.order):
            tag = x.tag
    return tag


_OBJECT = np.dtype(object)


def split(x, tag: Tag):
    """(primal, tangent) of x with respect to tag; a value not perturbed by tag has tangent None."""
    if type(x) is Dual and x.tag is tag:
        return x.primal, x.tangent
    if type(x) is np.ndarray and x.dtype is _OBJECT and x.size:  # (a dtype's identity: the hot path)
        lifted = lift(x, tag)
        if lifted is not x:
            return lifted.primal, lifted.tangent
    return x, None


def _holds_tagged(x, tag: Tag, depth: int = 3) -> bool:
    """A list or tuple (nested, `depth` levels) holds a dual of tag."""
    for e in x:
        if type(e) is Dual and e.tag is tag or depth and (type(e) is list or type(e) is tuple) and _holds_tagged(
                e, tag, depth - 1):
            return True
    return False


def _as_dual_array(items, tag: Tag):
    """A list or tuple compared with a dual, as numpy compares it: an array of it; the dual array of it where it
    holds duals of tag (`best == row`, pymcdm's validator: a list of an array's largest entries against its
    rows; numpy asked each dual for a plain array: refused). Else the items as they are."""
    if not _holds_tagged(items, tag):
        return items
    from .arrays import to_array
    return to_array(items)


def split_operand(x, tag: Tag):
    """`split` of an arithmetic operand: a list or tuple holding duals as numpy's array of it (`s += [a[0]]`,
    `a[:1] + [x]`: taken as a constant, its tangent was lost); a named tuple's too, a sequence to numpy (pycba's
    `ref += load.get_ref(L, eType)` of a `LoadCNL` of duals: numpy's conversion met them, refused)."""
    if sequence_of_items(x) and _holds_tagged(x, tag):  # (nested too: `col + [[x], [y]]`)
        from .arrays import to_array
        lifted = to_array(x)
        if type(lifted) is Dual and lifted.tag is tag:
            return lifted.primal, lifted.tangent
    return split(x, tag)


def lift(x: np.ndarray, tag: Tag):
    """An object array holding duals of tag as elements (`g = np.zeros_like(v); g[0] = d` where v holds
    Fractions: numpy stores any object) as one dual array, of their primals and tangents (a zero where an
    element is constant); x itself when it holds none. Met in arithmetic with a dual array, the elements'
    tangents would otherwise hide in the result's primal and be lost."""
    flat = x.ravel()
    at = [i for i, e in enumerate(flat) if type(e) is Dual and e.tag is tag]
    if not at:
        return x
    primals = np.empty(flat.shape, dtype=object)
    primals[:] = [e.primal if type(e) is Dual and e.tag is tag else e for e in flat]
    k = tag.chunk
    tangents = np.zeros(flat.shape if k is None else (k,) + flat.shape, dtype=object)
    for i in at:
        if k is None:
            tangents[i] = flat[i].tangent
        else:
            tangents[:, i] = flat[i].tangent
    if all(type(e) is float or isinstance(e, np.floating) for e in primals) and all(
            type(e) in (float, int) or isinstance(e, np.floating) for e in tangents.ravel()):
        primals, tangents = primals.astype(float), tangents.astype(float)  # (floats held as objects)
    return Dual(primals.reshape(x.shape), tangents.reshape(tangents.shape[:-1] + x.shape), tag)


def _brief(v) -> str:
    """A value for an error message: an array by shape and dtype (its repr costs more than the error,
    which callers often catch to take another path)."""
    if isinstance(v, np.ndarray) and v.size > 4:
        return f"array of shape {v.shape}, {v.dtype}"
    return repr(v)


def primal(x):
    """The innermost primal value: every perturbation stripped."""
    while type(x) is Dual:
        x = x.primal
    return x


def ndim(v) -> int:
    return getattr(v, "ndim", 0) if not isinstance(v, (list, tuple)) else np.ndim(primal_tree(v))


def shape(v) -> tuple:
    return getattr(v, "shape", ())


def primal_tree(v):
    if isinstance(v, (list, tuple)):
        return type(v)(primal_tree(x) for x in v)
    return primal(v)


def pad(t, v, d_out: int, tag: Tag):
    """A chunked tangent of value v, reshaped so that it broadcasts against a result of ndim d_out."""
    if t is None or tag.chunk is None:
        return t
    d = ndim(v)
    if d >= d_out:
        return t
    s = shape(t)
    return t.reshape(s[:1] + (1,) * (d_out - d) + s[1:])


def _split_advanced(index: tuple):
    """Where an index's advanced parts (arrays, lists, and integers among them) are not side by side, numpy
    puts their dimensions first: the number of those dimensions (where a chunked tangent's directions' axis
    lands), else None."""
    arrays = [i for i, e in enumerate(index) if isinstance(e, (np.ndarray, list)) and not isinstance(e, Dual)]
    if not arrays:
        return None
    advanced = [i for i, e in enumerate(index) if i in arrays or isinstance(e, (int, np.integer))
                and not isinstance(e, bool)]
    if advanced[-1] - advanced[0] + 1 == len(advanced):
        return None  # (side by side: in place)
    shapes = []
    for i in advanced:
        e = np.asarray(index[i])
        shapes.append((int(np.count_nonzero(e)),) if e.dtype == bool else e.shape)
    return len(np.broadcast_shapes(*shapes))


def _drop_leading_ones(t, v, d_out: int):
    """A chunked tangent of value v stored into d_out dimensions: numpy stores a value of more dimensions
    when the extra leading ones have size 1 (`y[i] = a` with a of shape (1, n) into a row of shape (n,));
    the tangent, its directions first, has those unit axes after them: dropped as numpy drops v's."""
    extra = ndim(v) - d_out
    if extra <= 0 or type(t) is not np.ndarray and type(t) is not Dual:  # (a dual tangent: nested derivatives)
        return t
    s = shape(v)
    if any(n != 1 for n in s[:extra]):
        return t
    ts = shape(t)
    return t.reshape(ts[:1] + ts[1 + extra:])


def zero_tangent(v, tag: Tag):
    """A zero tangent for value v under tag (an ndarray, or a Dual of a lower tag when v is one)."""
    p = primal(v)
    if tag.chunk is None and not hasattr(v, "shape"):
        if not isinstance(p, numbers.Number):
            return 0.0
        z = p * 0  # (the value's own kind of zero: a Fraction's, a Decimal's)
        return z if z == z else type(p)(0)  # (an infinite value's: 0, not inf * 0 = nan, gen14)
    dtype = np.result_type(getattr(p, "dtype", np.float64), 0.0)  # (a weak float: float32 stays float32)
    return np.zeros(((tag.chunk,) if tag.chunk else ()) + shape(v), dtype=dtype)


def fit(dy, y, tag: Tag):
    """dy broadcast to the tangent shape of y (a writable copy when broadcasting was needed)."""
    if dy is None:
        return zero_tangent(y, tag)
    ys = getattr(y, "shape", None)
    if ys is None or type(dy) is Refused:  # (a tangent no rule knows: kept whole, refused where it is used)
        return dy
    want = ((tag.chunk,) + ys) if tag.chunk else ys
    if shape(dy) == want:
        return dy
    if type(dy) is Dual:
        return np.broadcast_to(dy, want)
    return np.array(np.broadcast_to(dy, want))


def make(y, dy, tag: Tag):
    """The Dual (y, dy) under tag, its tangent fitted to y's shape; None means a zero tangent. A value of
    numpy integers or booleans is y itself: it moves in steps (`generic.integral`), its derivative 0."""
    t = type(y)
    if t is not float and integral(y):
        return y
    if _leaves.HOSTED and isinstance(y, _leaves.HOSTED):  # (a torch tensor of a perturbed value)
        raise _leaves.hosted_refused(f"a {t.__name__} computed from a perturbed value")
    if t is not float and t is not np.ndarray and t is not np.float64 and isinstance(y, np.ndarray):
        if own_operators(t):
            own_operators_refused(t)
        if masked_entries(y):  # (its sums skip masked entries, its tangent's would not: 3.16 for 1.76)
            raise masked_refused("an operation")
    return Dual(y, fit(dy, y, tag), tag)


class OwnOperators(OverdubError):
    """`own_operators_refused`'s error: a limit of forward mode's (reverse mode runs the class's code, and may
    answer after it)."""


def own_operators_refused(cls):
    """A rule's result of an ndarray subclass with operators of its own (`np.multiply(v, x)` of a `Vec` whose
    `__add__` adds a square): a dual's operators are the C array's, so `w + x` would take the tangent of a
    plain sum (8.0 for 8.2, gen13 W3). Refused."""
    raise OwnOperators(
        f"forward mode met a {cls.__module__}.{cls.__qualname__} (an ndarray subclass with operators or "
        f"indexing of its own) holding a differentiated value: a dual's operators are numpy's, not that "
        f"class's code", where=_conversion_site(),
        fix="compute on plain arrays (np.asarray(v)), or use reverse mode (`gradient`), which runs the class's code")


from ..rules.generic import add as _sum  # noqa: E402  (None is the zero tangent)
from ..rules.ties import kink_tie  # noqa: E402
from ..rules.operator import KINK, mul_da, mul_db, pow_dx, scaled_duration, truediv_da, truediv_db  # noqa: E402  (declared once)


def _log(v):
    """log dispatched on type (exact types go through math; ufloats through umath)."""
    if type(v) is Dual or isinstance(v, (np.ndarray, np.generic)):
        return np.log(v)
    if isinstance(v, complex):
        return cmath.log(v)
    if isinstance(v, numbers.Real):
        return math.log(v)
    from uncertainties import umath
    return umath.log(v)


def _log_base(v):
    """log v for the factor y * log(v) of d(v**n)/dn, with log 1 = 0 where v == 0: the factor is 0 there
    (`0**n` is 0 for every n > 0; pow_dn's convention), never y * log 0 = 0 * -inf = nan."""
    zero = v == 0
    if not np.any(zero):
        return _log(v)
    return _log(v + zero)


def _sign(v):
    if type(v) is Dual:  # (|x|'s kink under an outer derivative, forward over forward: `moving_tie`)
        moving_tie(v.primal, 0.0, v.tangent, None)
        return np.sign(primal(v))
    if isinstance(v, (np.ndarray, np.generic, ArrayLeaf)):
        return np.sign(primal(v))
    return (v > 0) - (v < 0)


# -- arithmetic (shared by Python operators and the matching ufuncs) -----------------------------

def _own(t):
    """A tangent passed on unchanged to a new value: copied when it is an array, so that tangents share
    memory exactly where values do (an in-place change of one value must not reach another's tangent)."""
    if type(t) is np.ndarray:
        return t.copy()
    if type(t) is Dual and type(primal(t)) is np.ndarray:  # (a dual array tangent: forward over forward)
        return t.copy()
    return t


_MATRIX = np.matrix


def matrix_refused():
    from ..rules.numpy._util import matrix_refused as refused  # (the rules' one message, every mode's)
    return refused()


def d_add(a, b):
    if type(a) is _MATRIX or type(b) is _MATRIX:
        raise matrix_refused()
    tag = top_tag((a, b))
    av, at = split_operand(a, tag)
    bv, bt = split_operand(b, tag)
    y = av + bv
    if tag.chunk:
        d = ndim(y)
        at, bt = pad(at, av, d, tag), pad(bt, bv, d, tag)
    return make(y, _sum(at, bt) if at is not None and bt is not None else _own(at if bt is None else bt), tag)


def d_sub(a, b):
    if type(a) is _MATRIX or type(b) is _MATRIX:
        raise matrix_refused()
    tag = top_tag((a, b))
    av, at = split_operand(a, tag)
    bv, bt = split_operand(b, tag)
    y = av - bv
    if tag.chunk:
        d = ndim(y)
        at, bt = pad(at, av, d, tag), pad(bt, bv, d, tag)
    return make(y, _sum(at, -bt) if at is not None and bt is not None else _own(at) if bt is None else -bt, tag)


_EXACT_NUMBERS = (fractions.Fraction, decimal.Decimal)


def _for_tangent(v, t):
    """A constant operand v as the tangent t's product takes it: an exact number (a Fraction, a Decimal)
    beside a tangent array of floats as a float (else an array of objects: np.abs of it complex, jacfwd
    1+0.228j for 1, gen10's W4); anything else as it is."""
    if type(t) is np.ndarray and t.dtype.kind in "fc" and isinstance(v, _EXACT_NUMBERS):
        return float(v)
    return v


def _timed(y) -> bool:
    """y is a duration or a date (numpy's timedelta64/datetime64, scalar or array; datetime's)."""
    dtype = getattr(y, "dtype", None)
    return dtype.kind in "mM" if isinstance(dtype, np.dtype) else isinstance(y, (datetime.timedelta, datetime.date))


def _divisor_jump(fn, a, b) -> None:
    """`a % b`, `a // b` of a dual divisor b that moves, exactly where a is a multiple of it: refused, to be
    judged from the two sides (`lowered.runtime.divisor_jump`)."""
    if type(b) is Dual and not b.tag.ended:
        divisor_jump(fn, primal(a), b.primal, b.tangent)


def d_mul(a, b):
    if type(a) is _MATRIX or type(b) is _MATRIX:
        raise matrix_refused()
    tag = top_tag((a, b))
    av, at = split_operand(a, tag)
    bv, bt = split_operand(b, tag)
    y = av * bv
    if _timed(y):  # (a duration scaled by a differentiated number, where the code ran on duals: refused)
        scaled_duration(av, bv, at is not None, bt is not None)
    if tag.chunk:
        d = ndim(y)
        at, bt = pad(at, av, d, tag), pad(bt, bv, d, tag)
    return make(y, _sum(None if at is None else mul_da(at, av, _for_tangent(bv, at), y),
                        None if bt is None else mul_db(bt, _for_tangent(av, bt), bv, y)), tag)


def d_div(a, b):
    if type(a) is _MATRIX or type(b) is _MATRIX:
        raise matrix_refused()
    tag = top_tag((a, b))
    av, at = split_operand(a, tag)
    bv, bt = split_operand(b, tag)
    y = av / bv
    if _timed(y):
        scaled_duration(av, bv, at is not None, bt is not None)
    if tag.chunk:
        d = ndim(y)
        at, bt = pad(at, av, d, tag), pad(bt, bv, d, tag)
    return make(y, _sum(None if at is None else truediv_da(at, av, _for_tangent(bv, at), y),
                        None if bt is None else truediv_db(bt, _for_tangent(av, bt), bv, y)), tag)


def d_pow(a, b):
    if type(a) is _MATRIX or type(b) is _MATRIX:
        raise matrix_refused()
    tag = top_tag((a, b))
    av, at = split_operand(a, tag)
    bv, bt = split_operand(b, tag)
    if at is not None and bt is None:
        bv = _for_tangent(bv, at)  # (`x ** Fraction(1, 2)` beside a tangent array; the value then a float)
    if type(bv) is tuple or type(bv) is list:  # (`x ** (2, 3)`: numpy takes the exponents as an array)
        bv = np.asarray(bv)
    y = av ** bv
    if (at is not None or bt is not None) and (type(av) is complex or isinstance(av, np.complexfloating) or (
            type(av) is np.ndarray and av.dtype.kind == "c")):
        power_on_cut(av, bv, 0 if at is None else at, bt)  # (a base on the logarithm's cut: `rules.cuts`)
    if tag.chunk:
        d = ndim(y)
        at, bt = pad(at, av, d, tag), pad(bt, bv, d, tag)
    dy = None
    if at is not None:
        if type(bv) is int or type(bv) is float:  # the common constant exponents, cheaply
            if bv == 2:
                dy = at * (2 * av)
            elif bv == 1:
                dy = _own(at)  # (a new value: its tangent its own, as the value is)
            elif bv != 0 and bv - bv == 0:  # (finite: `(1 + r) ** -inf`'s is pow_dx's 0, not -inf * 0)
                try:
                    dy = at * (bv * av ** (bv - 1))
                except ZeroDivisionError:  # (Python's 0.0 ** -0.5: the derivative's, at a singular point)
                    from .arrays import raise_singular
                    raise_singular(pow, (av, bv), {})
        if dy is None and not (isinstance(bv, numbers.Number) and bv == 0):
            # (as `pow_dx`: 0 where the exponent is 0, not 0 * 0**-1 = NaN: findiff's `cd ** arange(n)`
            # stencils, whose base is 0 at the stencil's own point)
            dy = at * pow_dx(av, bv)
    if bt is not None:
        dy = _sum(dy, bt * (y * _log_base(av)))
    return make(y, dy, tag)


def d_floordiv(a, b):
    return primal(a) // primal(b)


def d_mod(a, b):
    """a % b = a - b * floor(a / b): tangent at - bt * floor(a / b)."""
    if type(a) is _MATRIX or type(b) is _MATRIX:
        raise matrix_refused()
    tag = top_tag((a, b))
    av, at = split_operand(a, tag)
    bv, bt = split_operand(b, tag)
    y = av % bv
    if tag.chunk:
        d = ndim(y)
        at, bt = pad(at, av, d, tag), pad(bt, bv, d, tag)
    return make(y, _sum(at, None if bt is None else -(bt * (primal(av) // primal(bv)))), tag)


def d_neg(a):
    return Dual(-a.primal, -a.tangent, a.tag)


def d_abs(a):
    v = a.primal
    while type(v) is Dual:
        v = v.primal
    if isinstance(v, complex) or np.iscomplexobj(v):
        # |z| of complex z moves by Re(conj(z) dz) / |z| (t * sign(z) would be complex: numpy's sign of a
        # complex number is z / |z|)
        y = abs(a.primal)
        yv = primal(y)
        while type(yv) is Dual:
            yv = yv.primal
        den = np.where(y == 0, 1, y) if isinstance(yv, np.ndarray) else (y if yv != 0 else 1.0)
        return Dual(y, np.real(np.conj(a.primal) * a.tangent) / den, a.tag)
    y = Dual(abs(a.primal), a.tangent * _sign(a.primal), a.tag)  # sign broadcasts over a chunk axis
    if (type(a.primal) is float or type(a.primal) is np.float64) and a.primal == 0.0:  # (`rules.operator.KINK`;
        # a chunk of directions: the largest)
        speed = abs(float(a.tangent)) if type(a.tangent) in (float, np.float64) else (
            float(np.max(np.abs(a.tangent))) if type(a.tangent) is np.ndarray and a.tangent.size else 0.0)
        if speed:
            KINK[0], KINK[1], KINK[2] = y, speed, max(KINK[2], speed)
            kink_tie("abs", a.primal, 0.0, a.tangent, None)
    elif type(a.primal) is np.ndarray and a.primal.dtype.kind == "f" and not a.primal.all():  # (an entry at 0)
        kink_tie("np.absolute", a.primal, 0.0, a.tangent, None)
    return y


# -- the Dual ----------------------------------------------------------------------------------

_CONVERSION_FIX = ("keep the value symbolic (use the Dual itself), call the function under a "
                   "ForwardContext (e.g. through contexts.forward.derivative) so `float(x)` keeps the "
                   "derivative, or register a forward rule with `registry.frule(fn)`; build arrays "
                   "that receive Duals with `np.zeros_like(x)`, not `np.zeros(n)`")


def _unit(other):
    """The `quantity(magnitude, unit)` of other's unit class (`leaves.UNIT_TYPES`: pint's), or None: `dual * unit`
    and `dual / unit` make the quantity of the dual (the unit's reflected operator would ask `dual == 1` of a
    perturbed array, a dual being a `numbers.Number`)."""
    for cls, quantity in UNIT_TYPES:
        if isinstance(other, cls):
            return quantity
    return None


def _defers(other, reflected: str) -> bool:
    """A Dual's operator leaves `dual op other` to other's reflected operator when other's class writes it
    in Python (a small vector class's `__rmul__`): that code runs on the dual, as it would on a float."""
    if type(other) in _PLAIN or type(other) is Dual:
        return False
    if isinstance(other, _KNOWN_OPERANDS) and not (isinstance(other, _SEQUENCES) and type(other) not in _SEQUENCES):
        return False  # (a list subclass's own `__rmul__`, trueskill's Matrix: its code, as Python calls it)
    return type(getattr(type(other), reflected, None)) is types.FunctionType


def _reflected(d: "Dual", other, reflected: str):
    """What `d op other` leaves to other's reflected method (`_defers`): NotImplemented, so Python calls it on
    d; but numpy hands it a numpy scalar's value as a Python number (`np.float64(s) + V(c)`: `type(o) is
    float` in the method chooses its branch by it), so the dual of a numpy scalar calls it on the dual of that
    number (forward mode's operator routing hands it that dual already)."""
    if numpy_scalar_dual(d) and taken_per_element(other, Dual):
        return getattr(type(other), reflected)(other, as_python_number(d))
    inner = d.primal
    while type(inner) is Dual:
        inner = inner.primal
    if isinstance(inner, np.ndarray) and inner.ndim and taken_per_element(other, Dual):
        # (`x - V(c)`: numpy makes an object array of V's method applied to each element; handed the whole dual
        # array at once, it computed another value: hessian's forward over reverse, silently)
        raise ObjectArrayOperand(
            f"a perturbed array combined by `{reflected}` with a {type(other).__name__}, an object of a class of "
            "its own: numpy applies its method to each element (an object array), which no mode follows",
            where=_conversion_site(), fix="apply the operator to each element yourself, or to plain values")
    return NotImplemented


class ObjectArrayOperand(OverdubError, TypeError):
    """A dual array met an object numpy would apply element by element (an object array)."""


def _declined(other, name: str):
    """`obj op dual` reached the dual's reflected method: obj's class's own `name` returned NotImplemented for the
    dual, which may well take the number it stands for (`type(o) is float`): refused, never computed on obj as a
    number (its fields read as an array's: a crash or a wrong value)."""
    raise DeclinedDual(
        f"{type(other).__name__}.{name} declined forward mode's dual number (it returned NotImplemented), where "
        "it may take the number the dual stands for", where=_conversion_site(),
        fix="let the method take any number (`isinstance(o, numbers.Number)` rather than `type(o) is float`), "
            "or use reverse mode (gradient)")


def numpy_scalar_dual(d) -> bool:
    """d is a dual (of duals, nested) of a numpy scalar."""
    while type(d) is Dual:
        d = d.primal
    return isinstance(d, np.generic)


def as_python_number(d):
    """A dual of a numpy scalar (nested too) as the dual of its Python number, as numpy hands an object's
    reflected method the scalar (`np.float64(s) + V(c)` calls `V.__radd__(float(s))`)."""
    if type(d) is Dual:
        return Dual(as_python_number(d.primal), d.tangent, d.tag)
    return d.item()


_PLAIN = frozenset({float, int, bool, complex})
# (a dask array: numpy's; a registered number, sympy's expressions among them, whose operators would defer
# back to the dual's by `_op_priority`)
_KNOWN_OPERANDS = (numbers.Number, np.ndarray, np.generic, list, tuple, ArrayLeaf, Scalar)
_SEQUENCES = (list, tuple)


class Dual:
    """A `primal` value perturbed by `tangent` in the direction(s) of `tag`. (Not `.value`: libraries read
    a `.value` to unwrap their own types, astropy's Quantity among them, and would take the primal for
    the number, silently dropping the tangent.)

    >>> from contexts.forward import Dual, Tag
    >>> t = Tag(); x = Dual(3.0, 1.0, t)
    >>> y = x * x + 1
    >>> (y.primal, y.tangent)
    (10.0, 6.0)
    """

    __slots__ = ("primal", "tangent", "tag")
    __array_priority__ = 1000
    # sympy's operators defer to an operand of higher `_op_priority` (its reflected method) instead of
    # sympifying it by `float()`: `Integer(2) * dual` is the dual's product (forward over reverse on symbols)
    _op_priority = 1e9

    def __init__(self, primal, tangent, tag: Tag):
        self.primal = primal
        self.tangent = tangent
        self.tag = tag

    def __repr__(self) -> str:
        return f"Dual({self.primal!r}, {self.tangent!r}, {self.tag!r})"

    def __format__(self, spec: str) -> str:
        """An f-string's field of a perturbed value: its value's text, remembered (parsing it back is
        refused: lowered.runtime.parsed)."""
        return text(format(self.primal, spec))

    def _od_parts(self) -> tuple:
        """The values a Dual holds, for code that inspects values without knowing Duals (`NaNContext`)."""
        return self.primal, self.tangent

    # arithmetic: a fast path for the common scalar case, else the general shared implementation
    def __add__(self, other):
        if type(other) is float and self.tag.chunk is None:
            return Dual(self.primal + other, _own(self.tangent), self.tag)
        if type(other) is Dual and other.tag is self.tag and self.tag.chunk is None:
            return Dual(self.primal + other.primal, self.tangent + other.tangent, self.tag)
        if _defers(other, "__radd__"):
            return _reflected(self, other, "__radd__")
        return d_add(self, other)

    def __radd__(self, other):
        if _defers(other, "__add__"):
            _declined(other, "__add__")
        return d_add(other, self)

    def __sub__(self, other):
        if _defers(other, "__rsub__"):
            return _reflected(self, other, "__rsub__")
        return d_sub(self, other)

    def __rsub__(self, other):
        if _defers(other, "__sub__"):
            _declined(other, "__sub__")
        return d_sub(other, self)

    def __mul__(self, other):
        tag = self.tag
        if type(other) is Dual:
            if other.tag is tag and tag.chunk is None:
                a, b = self.primal, other.primal
                return Dual(a * b, self.tangent * b + a * other.tangent, tag)
        elif type(other) is float or type(other) is int:
            return Dual(self.primal * other, self.tangent * other, tag)
        elif UNIT_TYPES and _unit(other) is not None:
            return _unit(other)(self, other)
        elif _defers(other, "__rmul__"):
            return _reflected(self, other, "__rmul__")
        return d_mul(self, other)

    def __rmul__(self, other):
        if type(other) is float or type(other) is int:
            return Dual(other * self.primal, other * self.tangent, self.tag)
        if _defers(other, "__mul__"):
            _declined(other, "__mul__")
        return d_mul(other, self)

    def __truediv__(self, other):
        if UNIT_TYPES and _unit(other) is not None:
            return _unit(other)(self, 1 / other)
        if _defers(other, "__rtruediv__"):
            return _reflected(self, other, "__rtruediv__")
        return d_div(self, other)

    def __rtruediv__(self, other):
        if _defers(other, "__truediv__"):
            _declined(other, "__truediv__")
        return d_div(other, self)

    def __pow__(self, other):
        if _defers(other, "__rpow__"):
            return _reflected(self, other, "__rpow__")
        return d_pow(self, other)

    def __rpow__(self, other):
        if _defers(other, "__pow__"):
            _declined(other, "__pow__")
        return d_pow(other, self)

    def __floordiv__(self, other):
        if _defers(other, "__rfloordiv__"):
            return _reflected(self, other, "__rfloordiv__")
        _native_jump(operator.floordiv, self, (other,))
        _divisor_jump(operator.floordiv, self, other)
        return self._stairs(operator.floordiv, (other,), d_floordiv(self, other))

    def __rfloordiv__(self, other):
        if _defers(other, "__floordiv__"):
            _declined(other, "__floordiv__")
        _divisor_jump(operator.floordiv, other, self)
        return d_floordiv(other, self)

    def __mod__(self, other):
        if _defers(other, "__rmod__"):
            return _reflected(self, other, "__rmod__")
        self._stairs(operator.mod, (other,), None)  # (a remainder by a step far finer than self: refused)
        _native_jump(operator.mod, self, (other,))
        _divisor_jump(operator.mod, self, other)
        return d_mod(self, other)

    def __rmod__(self, other):
        if _defers(other, "__mod__"):
            _declined(other, "__mod__")
        _divisor_jump(operator.mod, other, self)
        return d_mod(other, self)

    def __divmod__(self, other):
        return self.__floordiv__(other), self.__mod__(other)

    def __rdivmod__(self, other):
        _divisor_jump(operator.mod, other, self)
        return d_floordiv(other, self), d_mod(other, self)

    def __matmul__(self, other):
        if _defers(other, "__rmatmul__"):
            return _reflected(self, other, "__rmatmul__")
        return np.matmul(self, other)

    def __rmatmul__(self, other):
        if _defers(other, "__matmul__"):
            _declined(other, "__matmul__")
        return np.matmul(other, self)

    def __neg__(self):
        return d_neg(self)

    # in place: an array's value and tangent are both overwritten, so every view of it sees the change
    # (tangents share memory exactly where values do); other values are rebound, as Python does
    # (`a += obj`: obj's own `__radd__`, as Python calls it for a number; so for the other operators)
    def __iadd__(self, other):
        if _defers(other, "__radd__"):
            return _reflected(self, other, "__radd__")
        return self._update(self + other)

    def __isub__(self, other):
        if _defers(other, "__rsub__"):
            return _reflected(self, other, "__rsub__")
        return self._update(self - other)

    def __imul__(self, other):
        if _defers(other, "__rmul__"):
            return _reflected(self, other, "__rmul__")
        return self._update(self * other)

    def __itruediv__(self, other):
        if _defers(other, "__rtruediv__"):
            return _reflected(self, other, "__rtruediv__")
        return self._update(self / other)

    def __ipow__(self, other):
        if _defers(other, "__rpow__"):
            return _reflected(self, other, "__rpow__")
        return self._update(self ** other)

    def __imatmul__(self, other):
        if _defers(other, "__rmatmul__"):
            return _reflected(self, other, "__rmatmul__")
        return self._update(self @ other)

    def __ifloordiv__(self, other):  # (without: `v %= c` through a view rebound v, z unchanged: wrong values)
        if _defers(other, "__rfloordiv__"):
            return _reflected(self, other, "__rfloordiv__")
        return self._update(self // other)

    def __imod__(self, other):
        if _defers(other, "__rmod__"):
            return _reflected(self, other, "__rmod__")
        return self._update(self % other)

    def sort(self, axis=-1, kind=None, order=None):
        """In place, as ndarray.sort: each tangent moves with its value; refused where tied values' tangents
        differ (`rules.ties`)."""
        self._permute(np.argsort(self.primal, axis=axis, kind="stable"), axis, "ndarray.sort")

    def partition(self, kth, axis=-1, kind="introselect", order=None):
        """In place, as ndarray.partition (np.partition, median, percentile call it): each tangent moves
        with its value; refused where tied values' tangents differ."""
        self._permute(np.argpartition(self.primal, kth, axis=axis, kind=kind), axis, "ndarray.partition", kth)

    def _permute(self, perm, axis, name, kth=None):
        value = self.primal
        value[...] = np.take_along_axis(value, perm, axis=axis)
        tangent = self.tangent
        if type(tangent) is np.ndarray or type(tangent) is Dual:  # (a dual tangent: nested derivatives)
            chunked = self.tag.chunk is not None
            ax = axis % value.ndim + 1 if chunked else axis
            tangent[...] = np.take_along_axis(tangent, perm[None] if chunked else perm, axis=ax)
        if kth is not None and type(tangent) is np.ndarray and type(value) is np.ndarray and value.ndim:
            # (a tie at an end asked for, np.median's -1: split as np.max's; `rules.ties.even_ends`)
            evened, kth = even_ends(value, tangent, axis, kth)
            tangent[...] = evened
        self._tie_check(axis, name, kth)

    def _tie_check(self, axis, name, kth):
        """Refused where two equal values along axis have different tangents (they part: `rules.ties`)."""
        value, tangent = self.primal, self.tangent
        if type(tangent) is not np.ndarray and type(tangent) is not Dual or not np.ndim(value):
            return
        directions = tangent if self.tag.chunk is not None else [tangent]  # (a chunk's: leading, one each)
        if parting_unsorted(value, directions, axis, kth):
            raise TiedApart(name).error()

    def fill(self, item):
        """In place, as ndarray.fill."""
        v, t = split(item, self.tag)
        self.primal.fill(v)
        if type(self.tangent) is np.ndarray or type(self.tangent) is Dual:
            self.tangent[...] = 0.0 if t is None else (np.reshape(t, (-1,) + (1,) * self.primal.ndim)
                                                        if self.tag.chunk is not None else t)

    def _update(self, result):
        if DETACHED and DETACHED.get(id(self.tangent)) is self.tangent:
            raise detached_write()
        if LENT and type(result) is Dual and lent(self.tangent):
            raise lent_write()
        value = self.primal
        if type(value) is Dual and type(result) is Dual and result.tag is self.tag:
            return self._update_nested(result)
        if type(result) is np.ndarray and isinstance(value, np.ndarray) and result.shape == value.shape:
            # a result without a tangent (`z //= c`): the values written in, the tangent zeroed in place
            result = Dual(result, np.zeros_like(self.tangent) if type(self.tangent) is np.ndarray else 0.0,
                          self.tag)
        if (not isinstance(value, np.ndarray) or type(result) is not Dual or result.tag is not self.tag
                or np.shape(result.primal) != value.shape):  # (an ndarray subclass's view is written in place too)
            return result
        np.copyto(value, result.primal, casting="same_kind")  # numpy's in-place casting rule
        tangent = self.tangent
        if type(tangent) is np.ndarray and tangent.dtype.kind != "c" and value.dtype.kind == "c" \
                and np.iscomplexobj(result.tangent):
            # a complex value whose tangent is real so far (`z = 3 * [0j]; z += x * ones`), now taking a
            # complex one: written in, its imaginary part was dropped (impedance's circuits: 9 for -142.6).
            # The tangent becomes complex where nothing else holds it; a view of it could not follow
            if sys.getrefcount(tangent) > _OWN_REFERENCES:
                raise OverdubError("forward mode cannot change in place a complex array whose derivative was "
                                   "real so far while another array views it (the view's derivative would not "
                                   "follow)", fix="start the array complex (`np.zeros(n, complex)` and a "
                                                  "complex first value), or write `z = z + w`")
            self.tangent = np.array(result.tangent)
            return self
        if type(tangent) is np.ndarray and tangent.flags.writeable and np.shape(result.tangent) == tangent.shape:
            tangent[...] = result.tangent
        else:
            self.tangent = np.array(result.tangent, dtype=tangent.dtype if type(tangent) is np.ndarray else None)
        return self

    def _update_nested(self, result):
        """_update of an array perturbed by an outer derivative too (nested duals: jacfwd(jacfwd(f)),
        hessian(inner="forward")): value and tangent are written through, so views and aliases see it."""
        value = self.primal
        if type(primal(value)) is not np.ndarray or np.shape(result.primal) != value.shape:
            return result
        if primal(value).dtype.kind == "c" and "f" in _kinds(self) and "c" in _kinds(result.tangent) | _kinds(
                result.primal.tangent if type(result.primal) is Dual else None):
            # (a complex value whose derivatives' parts are real so far, `z = np.array([a + 0j])`, taking complex
            # ones in place: numpy dropped their imaginary parts, forward over forward's second derivative 0 for 2)
            raise OverdubError("forward over forward cannot change in place a complex array whose derivatives "
                               "were real so far", fix="start the array complex in its derivatives too, or "
                               "write `z = z + w`; `hessian` with inner='reverse' takes it")
        value[...] = result.primal
        tangent, new = self.tangent, result.tangent
        if type(tangent) is Dual:
            tangent[...] = new
        elif type(tangent) is np.ndarray and tangent.flags.writeable and type(new) is not Dual:
            tangent[...] = new
        elif type(tangent) is np.ndarray and tangent.base is None:
            # nothing views this tangent (views of nested duals take a perturbed tangent): rebinding it
            # is seen by every alias of this Dual
            self.tangent = new.copy() if type(new) is Dual else np.array(new, dtype=float)
        else:
            raise OverdubError(
                "an in-place change of a view perturbed by nested derivative calls could not reach the "
                "array it views",
                fix="compute the new array without changing the view in place (`y = y * s`)")
        return self

    def __pos__(self):
        return self

    def __abs__(self):
        return d_abs(self)

    # comparisons, truth and hashing look at the primal only
    # (`x < obj` of an object whose class compares in Python: its reflected method, `obj.__gt__(x)`, runs on
    # the dual, as Python runs it on a float; compared on the values, it ran natively on the primal: the
    # derivative through x was lost when it returns a value)
    def __lt__(self, other):
        if _defers(other, "__gt__"):
            return _reflected(self, other, "__gt__")
        if sequence_of_items(other):
            other = _as_dual_array(other, self.tag)
        return _ordered(self, other, primal(self) < primal(other), "<")

    def __le__(self, other):
        if _defers(other, "__ge__"):
            return _reflected(self, other, "__ge__")
        if sequence_of_items(other):
            other = _as_dual_array(other, self.tag)
        return _ordered(self, other, primal(self) <= primal(other), "<=")

    def __gt__(self, other):
        if _defers(other, "__lt__"):
            return _reflected(self, other, "__lt__")
        if sequence_of_items(other):
            other = _as_dual_array(other, self.tag)
        return _ordered(self, other, primal(self) > primal(other), ">")

    def __ge__(self, other):
        if _defers(other, "__le__"):
            return _reflected(self, other, "__le__")
        if sequence_of_items(other):
            other = _as_dual_array(other, self.tag)
        return _ordered(self, other, primal(self) >= primal(other), ">=")

    def __eq__(self, other):
        if _defers(other, "__eq__"):
            return _reflected(self, other, "__eq__")
        if sequence_of_items(other):
            other = _as_dual_array(other, self.tag)
        eq = primal(self) == primal(other)
        if eq is not False and type(other) is Dual and other.tag is self.tag:
            _rules_tie(self, other)
        if eq is False or type(other) is Dual and other.tag is self.tag:
            if eq is False and HISTORY.run is not None and type(self.primal) is float:
                _rates_noted(self.tangent)  # (the rates a root finder's exact exit is judged by: `rounding_residue`)
            return eq
        return _equality_checked(self, other, eq, "==")

    def __ne__(self, other):
        if _defers(other, "__ne__"):
            return _reflected(self, other, "__ne__")
        if sequence_of_items(other):
            other = _as_dual_array(other, self.tag)
        ne = primal(self) != primal(other)
        if ne is not True and type(other) is Dual and other.tag is self.tag:
            _rules_tie(self, other)
        if ne is True or type(other) is Dual and other.tag is self.tag:
            if ne is True and HISTORY.run is not None and type(self.primal) is float:
                _rates_noted(self.tangent)
            return ne
        return _equality_checked(self, other, ne, "!=")

    def __hash__(self):
        # by the primal, as numbers hash (a memo table keyed by a perturbed value can then serve a plain
        # value: a known limit, in the README; refusing here broke the engine's own lookups of bound methods
        # of dual arrays, whose hash is their owner's)
        return hash(primal(self))

    def __bool__(self):
        b = bool(primal(self))
        if b:
            return b
        return _equality_checked(self, 0.0, b, "==")  # (`if x:` is `x != 0`: at 0, a special case)

    # conversions: integers have zero derivative; float/complex would drop it silently, so refuse
    def __int__(self):
        from ..rules.builtins import _check_int  # at a jump of int() with a derivative: refused
        if np.any(primal(self.tangent)):
            _check_int(primal(self), known=True)
        return self._stairs(int, (), int(primal(self)))

    def __index__(self):
        return operator.index(primal(self))  # (a float's: TypeError, as the code asking expects; pkD's sympy)

    def __trunc__(self):
        _native_jump(math.trunc, self)
        return self._stairs(math.trunc, (), math.trunc(primal(self)))

    def __floor__(self):
        _native_jump(math.floor, self)
        return self._stairs(math.floor, (), math.floor(primal(self)))

    def __ceil__(self):
        _native_jump(math.ceil, self)
        return self._stairs(math.ceil, (), math.ceil(primal(self)))

    def __round__(self, ndigits=None):
        _native_jump(round, self, () if ndigits is None else (ndigits,))
        return self._stairs(round, () if ndigits is None else (ndigits,), round(primal(self), ndigits))

    def is_integer(self):
        """A float's test of being whole, on the value; where it is whole and moves, a test at a special point
        (refused, as `x == round(x)` is)."""
        value = primal(self)
        whole = value.is_integer()
        if whole:
            equality_guard_fd(self, float(value), "==", self.tangent)
        return whole

    def _stairs(self, fn, rest, value):
        """fn (round, floor, ...) of a moving value by steps far below its size: marked, refused where used
        beyond a test (`lowered.runtime.staircased`)."""
        if np.any(primal(self.tangent)):
            return staircased(fn, (self, *rest), value)
        return value

    def __float__(self):
        if self.tag.ended:
            raise kept_past_its_call()
        raise DualConversionError(
            f"float() of a Dual (primal {_brief(primal(self))}) would drop its derivative",
            where=_conversion_site(), fix=_CONVERSION_FIX)

    def __complex__(self):
        raise DualConversionError(
            f"complex() of a Dual (primal {_brief(primal(self))}) would drop its derivative",
            where=_conversion_site(), fix=_CONVERSION_FIX)

    def __array__(self, dtype=None, copy=None):
        if self.tag.ended:
            raise kept_past_its_call()
        if sys._getframe(1).f_globals.get("__name__") == "numpy.ma.core":
            # (`obs - x` of a masked obs: its operator takes x's values, unperturbed; with masked entries, its
            # sums would skip them and the tangent's not)
            raise OverdubError(
                "forward mode: a numpy.ma masked array's operator or function takes a differentiated array's "
                "values (a masked array cannot hold a tangent)", where=_conversion_site(),
                fix="put the differentiated operand first (`x - obs`, `x * obs`: numpy's operator, masked entries "
                    "refused), or drop the mask first: `obs.filled(0.0)`, `obs.compressed()`")
        if (dtype is None or np.dtype(dtype) == self.dtype) and copy is not True and \
                isinstance(self.primal, np.ndarray) and (site := outside_engine(sys._getframe(1))) is not None and \
                asks_for(site, "__array__"):
            # (Python code's own `a.__array__()`, "for an ndarray this does nothing": statsmodels' models take
            # their data so, pyproj's buffers; the dual array itself, which numpy's functions take by their
            # protocols. numpy's conversions ask from C, and are refused below)
            return self
        raise DualConversionError(
            f"numpy tried to convert a Dual (primal {_brief(primal(self))}) to a plain array",
            where=_conversion_site(), fix=_CONVERSION_FIX)

    # numpy protocols (implemented in contexts.forward.arrays)
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from .arrays import array_ufunc
        return array_ufunc(ufunc, method, inputs, kwargs)

    def __array_wrap__(self, array, context=None, return_scalar=False):
        return array  # numpy's wrappers (linalg's `_makearray`) hand results back as they are

    def __array_function__(self, func, types, args, kwargs):
        from .arrays import array_function
        return array_function(func, args, kwargs)

    @property
    def __array_namespace__(self):
        """A perturbed ndarray's array namespace is numpy's (xarray and array-api-compat ask arrays for it):
        numpy's functions called on duals go to their forward rules by the protocols above. A dual number
        has none (AttributeError: `hasattr` answers False, as for a float)."""
        if not isinstance(self.primal, np.ndarray):
            raise AttributeError("__array_namespace__")
        return _numpy_namespace

    # array-like surface
    @property
    def shape(self):
        return shape(self.primal)

    @shape.setter
    def shape(self, new):
        """`a.shape = (1, -1)` in place (np.meshgrid does it), on the value and its tangent alike: numpy's
        own error where the array cannot take the shape without a copy, and the value unchanged then."""
        p, t = self.primal, self.tangent
        old = getattr(p, "shape", None)
        k = getattr(t, "ndim", 0) - len(old or ())
        if type(p) is not np.ndarray or type(t) is not np.ndarray or k < 0 or t.shape[k:] != old:
            raise AttributeError("forward mode sets the shape of a perturbed array in place only when its value "
                                 "and tangent are arrays of its shape: reshape it instead (`a = a.reshape(...)`)")
        p.shape = new
        try:  # (a batch of tangents, jacfwd's: its leading axes kept)
            t.shape = t.shape[:k] + p.shape
        except AttributeError:
            p.shape = old
            raise

    @property
    def ndim(self):
        return ndim(self.primal)

    @property
    def size(self):
        return getattr(self.primal, "size", 1)

    @property
    def dtype(self):
        return getattr(self.primal, "dtype", np.dtype(type(primal(self.primal))))

    @property
    def itemsize(self):  # (`as_strided(a, strides=(2 * a.itemsize,))`: the primal's, as its strides are)
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.dtype.itemsize * self.size

    @property
    def flags(self):
        """The primal array's flags (numpy's Python code asks for contiguity, e.g. np.kron)."""
        return primal(self).flags

    @property
    def base(self):
        """None where the value owns its memory (`a.base is None` branches as on the plain array: a dual
        answering "a view" always took the other branch, 6 for 3, gen13 W1). Where it views another array,
        code testing only None-ness (scipy's `_datacopied`) gets a value that is not None; the user's code
        reading the base for more (`b.base is a`: a dual is not its value's owner) is refused."""
        owner = self.primal.base if isinstance(self.primal, (np.ndarray, Dual)) else self.primal
        if owner is None:
            return None
        frame = outside_engine(sys._getframe(1))
        if frame is None or not is_user(frame.f_code.co_filename) or tests_none(frame):
            return self.primal
        raise OverdubError(
            "forward mode cannot tell which array owns a perturbed view's memory (`.base`): a dual is not its "
            "value's owner, so `b.base is a` would be False where numpy says True", where=_conversion_site(),
            fix="test `b.base is None`, or np.shares_memory(b, a); or use reverse mode (`gradient`)")

    @property
    def T(self):
        return np.transpose(self)

    def setflags(self, *args, **kwargs):  # (`x.setflags(write=False)`: the value's flags)
        return self.primal.setflags(*args, **kwargs) if isinstance(self.primal, np.ndarray) else None

    @property
    def mT(self):  # (numpy 2's matrix transpose: the last two axes; scipy 1.18's pinv reads it)
        return np.swapaxes(self, -1, -2)

    @property
    def real(self):
        return np.real(self)

    @property
    def imag(self):
        return np.imag(self)

    def __len__(self):
        try:
            return len(self.primal)
        except TypeError:
            # a number's dual: its class has `__len__` (an array's dual uses it), so `hasattr(x, "__len__")`
            # answers True where the number's own answer is False. Code asking that runs natively on duals (the
            # transformed code's `hasattr` asks the value): a function overdub has no source for calls the
            # library (miepython's `if hasattr(m, "__len__"): len(m)`). Python's TypeError came out of the
            # library as if the program had failed
            raise DualConversionError(
                f"len() of a differentiated {type(primal(self)).__name__}: code that tests `hasattr(x, '__len__')` "
                "ran natively on dual numbers, which answer it as an array's dual does",
                where=_conversion_site(),
                fix="define the differentiated function in a file (one typed at `python -c` or made by exec has no "
                    "source to transform, and the library it calls then runs natively on duals), or pass the "
                    "library's function itself") from None

    def __iter__(self):
        if type(self.primal) is dict:  # (a dict's dual, `jvp(f, (d,), (t,))`: its keys, as a dict's iteration)
            return iter(list(self.primal))
        return (self[i] for i in range(len(self.primal)))

    def __getitem__(self, index):
        tag = self.tag
        share_tangent(self)
        if tag.chunk is None:
            return Dual(self.primal[index], self.tangent[index], tag)
        if type(index) is not tuple:
            index = (index,)
        y, t = self.primal[index], self.tangent[(slice(None),) + index]
        if (first := _split_advanced(index)) is not None:  # (numpy put the advanced dimensions first, before the
            t = np.moveaxis(t, first, 0)                      # directions' axis: `A[mask, :3, 3]`)
        if type(t) is np.ndarray or type(t) is Dual:
            value = y
            while type(value) is Dual:  # (forward over forward: the value's value)
                value = value.primal
            if not isinstance(value, np.ndarray):  # (a subclass's view is a view: scikit-spatial's)
                t = _own(t)  # (an element's value is numpy's copy: its directions' tangents were a view of
                # the array's, and a later write into the array changed the element's derivative)
        return Dual(y, t, tag)

    def __setitem__(self, index, item):
        tag = self.tag
        if type(item) is Dual and item.tag.order > tag.order:
            raise OverdubError(
                "a value perturbed by an inner derivative call was stored into an array of an outer one",
                fix="create the array inside the inner function, or return the value instead of storing it")
        if sequence_of_items(item) and _holds_tagged(item, tag):
            # (a list holding duals, `M[:] = [0.0, x]`, `[[x, 1.0], [2.0, x]]`: numpy's array of it; taken whole,
            # numpy asked the dual for a plain array: refused, trimesh's translation_matrix)
            from .arrays import to_array
            item = to_array(item)
        v, t = split(item, tag)
        value = self.primal
        while type(value) is Dual:
            value = value.primal
        if isinstance(value, np.ndarray) and not value.flags.writeable:
            raise ValueError("assignment destination is read-only")  # (numpy's words: a diagonal, a broadcast)
        if DETACHED and DETACHED.get(id(self.tangent)) is self.tangent:
            raise detached_write()
        if LENT and t is not None and lent(self.tangent):
            raise lent_write()
        self.primal = assign(self.primal, index, v)
        tindex = index if tag.chunk is None else (slice(None),) + (index if type(index) is tuple else (index,))
        if t is None:
            t = 0.0
        elif tag.chunk:
            t = _drop_leading_ones(pad(t, v, ndim(self.primal[index]), tag), v, ndim(self.primal[index]))
            if (first := _split_advanced(tindex[1:])) is not None and ndim(t) > first:
                t = np.moveaxis(t, 0, first)  # (the tangent's layout numpy's indexing gives: see __getitem__)
        self.tangent = assign(self.tangent, tindex, t)

    def reshape(self, *shape_, **kwargs):
        return np.reshape(self, shape_[0] if len(shape_) == 1 else shape_, **kwargs)

    def ravel(self, order="C"):
        return np.ravel(self, order=order)

    @property
    def flat(self):  # (`a, b, c = m.flat`, `m.flat[i]`: transforms3d's mat2quat, scipy's linregress)
        value = self.primal
        while type(value) is Dual:  # (a dual of a dual array, a second derivative's: an array's)
            value = value.primal
        if not isinstance(value, np.ndarray):  # (a number's dual has none: sympy's sympify asks)
            raise AttributeError("flat")
        return _Flat(self)

    def flatten(self, order="C"):
        return np.ravel(self, order=order).copy()

    def transpose(self, *axes):
        return np.transpose(self, axes[0] if len(axes) == 1 else (axes or None))

    def squeeze(self, axis=None):
        return np.squeeze(self, axis=axis)

    def sum(self, *args, **kwargs):
        return np.sum(self, *args, **kwargs)

    def mean(self, *args, **kwargs):
        return np.mean(self, *args, **kwargs)

    def prod(self, *args, **kwargs):
        return np.prod(self, *args, **kwargs)

    def cumsum(self, *args, **kwargs):
        return np.cumsum(self, *args, **kwargs)

    def cumprod(self, *args, **kwargs):  # (its primal's, `x.cumprod(out=b)`, refused the dual b: sp42)
        return np.cumprod(self, *args, **kwargs)

    def max(self, *args, **kwargs):
        return np.max(self, *args, **kwargs)

    def min(self, *args, **kwargs):
        return np.min(self, *args, **kwargs)

    def dot(self, other, out=None):
        return np.dot(self, other) if out is None else np.dot(self, other, out=out)

    def conj(self):
        return np.conjugate(self)

    conjugate = conj

    def clip(self, lo=None, hi=None, out=None, **kwargs):
        # (`a.clip(min=c)`: np.clip's forward dispatch takes numpy 2's names for the bounds by position)
        return np.clip(self, lo, hi, out=out, **kwargs) if out is not None else np.clip(self, lo, hi, **kwargs)

    def copy(self, order="C"):
        return Dual(self.primal.copy() if hasattr(self.primal, "copy") else self.primal,
                    self.tangent.copy() if hasattr(self.tangent, "copy") else self.tangent, self.tag)

    def __copy__(self):
        """As `copy.copy` of its value: an array's data copied (writing into the copy of a perturbed array
        wrote into the original: a hessian's reverse pass changed the caller's array), a number as it is."""
        import copy
        return Dual(copy.copy(self.primal), copy.copy(self.tangent), self.tag)

    def __reduce_ex__(self, protocol):
        """Never pickled: the copy would come back under another tag (an identity), a constant to the
        derivative that made it (`pickle.loads(pickle.dumps(x))` gave 0, silently)."""
        raise DualConversionError(
            "a perturbed value is being pickled (pickle, copyreg, multiprocessing, shelve): the copy would "
            "carry no derivative", where=_conversion_site(),
            fix="keep the value in memory while it is differentiated (`copy.deepcopy` keeps it)")

    def __deepcopy__(self, memo):
        """A copy of value and tangent under the same tag (a tag is an identity: never copied)."""
        import copy
        return Dual(copy.deepcopy(self.primal, memo), copy.deepcopy(self.tangent, memo), self.tag)

    def view(self, *args, **kwargs):
        """`a.view(np.ndarray)`: the same values in the same memory, and the tangent's view with them
        (autograd.numpy's `concatenate(...).view(ndarray)`); a view as another dtype or class reinterprets the
        bytes, and a bare `.view()` is taken for an attribute store after (pandas' read-only index values):
        refused."""
        kind = kwargs.pop("type", None)
        dtype = kwargs.pop("dtype", None)
        if args:
            first = args[0]
            if isinstance(first, type) and issubclass(first, np.ndarray):
                kind = first
            else:
                dtype = first
            if len(args) > 1:
                kind = args[1]
        same_dtype = dtype is None or np.dtype(dtype) == getattr(self.primal, "dtype", None)
        if not kwargs and same_dtype and isinstance(kind, type) and kind is not np.ndarray \
                and issubclass(kind, np.ndarray) and isinstance(self.primal, np.ndarray) \
                and kind.__module__.split(".")[0] != "numpy":
            # (`np.asarray(a).view(Vector)`: an ndarray subclass that only re-wraps the values, attributes set
            # by its `__array_finalize__`, scikit-spatial's; one with operators, indexing or value-changing
            # hooks of its own is refused, as are numpy's own, np.matrix's products. The tangent a view of
            # this one's, as a plain array's view is: written in place through either)
            if own_operators(kind):
                own_operators_refused(kind)
            return Dual(self.primal.view(kind), self.tangent.view(np.ndarray), self.tag)
        # (not a bare `.view()`: pandas marks the view read-only, `data._readonly = True`, which a dual has not)
        if kwargs or not same_dtype or kind is not np.ndarray or not isinstance(self.primal, np.ndarray):
            raise DualAttributeError(
                "forward mode cannot view a perturbed array as another dtype or class: the bytes reinterpreted "
                "carry no tangent", fix="convert it (`.astype(...)`, `np.asarray(...)`) instead")
        return Dual(self.primal.view(np.ndarray), self.tangent.view(), self.tag)  # (a subclass's: plain)

    def astype(self, dtype, *args, **kwargs):
        dtype = np.dtype(dtype)
        if dtype.kind == "O" and getattr(self.primal, "dtype", None) == dtype:  # (Fractions already)
            return Dual(self.primal.astype(dtype, *args, **kwargs), self.tangent.astype(dtype, *args, **kwargs),
                        self.tag)
        if dtype.kind == "O":  # numbers as objects would leave the tangent behind
            raise DualConversionError(f"a perturbed array cast with .astype(object) would lose its tangent",
                                      fix="keep the array's float dtype while it is differentiated")
        if dtype.kind in "US":  # (text of the values: parsed back, `.astype(float)`, it gave 0)
            raise DualConversionError("a perturbed array cast to text (.astype(str)) would lose its tangent",
                                      fix="keep the numbers as numbers; format them (`str(v)`, f-strings) where "
                                          "text is only shown")
        if dtype.kind not in "fc":  # ints, bools, strings: piecewise constant
            value = primal(self)
            if dtype.kind in "iu" and getattr(value, "dtype", None) is not None and value.dtype.kind == "f":
                staircase_fd(np.trunc, (value,), None, self.tangent)  # (`a.astype(int)` truncates: its jumps)
                jump_guard("trunc", "ndarray.astype(int)", value, self.tangent)
            return primal(self).astype(dtype, *args, **kwargs)
        return Dual(self.primal.astype(dtype, *args, **kwargs),
                    self.tangent.astype(dtype, *args, **kwargs), self.tag)

    def item(self, *args):
        if not args and type(self.primal) in _SCALARS:
            if self is not _ITEM_GIVEN[0] and (site := outside_engine(sys._getframe(1))) is not None and \
                    asks_for(site, "item"):
                # (Python code's `value.item()` of a 0-d array that became a number's dual: aquasol's
                # `format_output_type` of pynverse's root; the number, as numpy's `.item()` gives, a new dual of
                # it. Asked of that dual again, the code loops converting, as a plain float has no `.item()`:
                # refused below)
                given = _ITEM_GIVEN[0] = Dual(self.primal, self.tangent, self.tag)
                return given
            # (already a number's dual: what `.item()` gives is itself again, and a C converter asking `.item()`
            # until it has a number looped until its stack overflowed, a segmentation fault: casadi's
            # `interpolant` called by aerosandbox, sweep U; refused, as a conversion of a dual is)
            raise DualConversionError(f"{_conversion_site()}: `.item()` of a perturbed number, asked by code that "
                                      "converts it to a plain number (a C function given a dual): its tangent "
                                      "would be lost")
        value = self.primal.item(*args) if hasattr(self.primal, "item") else self.primal
        if type(self.primal) is Dual:
            value = self.primal.item(*args)
        tangent = self.tangent
        if self.tag.chunk:
            flat = tangent.reshape((self.tag.chunk, -1))
            index = args[0] if len(args) == 1 else args  # (`a.item(4)` flat, `a.item((1, 2))`, `a.item(1, 2)`)
            at = 0 if not args else np.ravel_multi_index(index, self.shape) if isinstance(index, tuple) else (
                index % max(1, int(np.prod(self.shape))))
            tangent = flat[:, at].copy()  # (the value is a copy: so is its tangent, not a view of the array's)
        elif hasattr(tangent, "item"):
            tangent = tangent.item(*args) if type(tangent) is not Dual else tangent.item(*args)
        return Dual(value, tangent, self.tag)

    def resize(self, *shape, **kwargs):
        """ndarray.resize changes the array in place (zeros after the values; np.resize, which the other
        methods' mapping would call, returns a new array repeating them): refused."""
        raise OverdubError("forward mode does not differentiate ndarray.resize (it changes the array in place)",
                           where=_conversion_site(),
                           fix="make the new array: `np.concatenate([a.ravel(), np.zeros(n - a.size)])` or np.pad")

    def __getattr__(self, name):
        """Other ndarray methods (`x.std()`, `x.any()`, ...) as the numpy function of the same name."""
        if type(self.primal) is dict and name in ("keys", "values", "items"):
            # a dict's dual (`jvp(f, (d,), (t,))`): its views as lists, each value the dual of its entry (gen22 C2)
            keys = list(self.primal)
            parts = {"keys": lambda: keys, "values": lambda: [self[k] for k in keys],
                     "items": lambda: [(k, self[k]) for k in keys]}
            return parts[name]
        if name in _NDARRAY_METHODS and hasattr(self.primal, name):
            fn = _METHOD_FORMS.get(name) or getattr(np, name)

            def method(this, *args, **kwargs):
                if fn is np.round and np.any(primal(this.tangent)):  # (`a.round(13)`: a fine staircase, marked
                    # as np.round(a, 13) is; pkA's elote)
                    return staircased(np.round, (this, *args), np.round(this.primal, *args, **kwargs), kwargs)
                return fn(this, *args, **kwargs)
            method.__name__ = method.__qualname__ = name
            # a bound method of the Dual (as ndarray's are of the array): reverse mode run on duals
            # differentiates `x.repeat(2)` by the ndarray method's rule, x's cotangent its own
            return types.MethodType(method, self)
        if name in Dual.__slots__:  # read before it was set (a context observing the constructor)
            raise AttributeError(name)
        if type(self.primal) is not np.ndarray and isinstance(self.primal, np.ndarray) \
                and (found := subclass_attribute(self, name)) is not _ABSENT:
            return found
        if not name.startswith("__") and not isinstance(self.primal, _NUMPY_VALUES) and hasattr(self.primal, name):
            # the inside of a number (an mpf's `_mpf_`): `hasattr` answers False, as for a foreign type (mpmath's
            # operators then return NotImplemented and the dual's reflected one computes). Remembered, so that
            # an error the same library frame raises next ("exp of a mpf") is reported as this read
            SWALLOWED[:] = [(outside_engine(sys._getframe(1)), name, type(self.primal).__name__)]
        raise DualAttributeError(
            f"forward mode cannot read .{name} of a perturbed {self.primal.__class__.__name__}: a dual number has "
            f"no such attribute (if it is the inside of a number, it carries no tangent)", where=_conversion_site(),
            fix="give the function reading it a forward rule (`contexts.rules.registry.frule(fn)`), or compute with "
                "the value's arithmetic and functions that have rules")

    def tolist(self):
        if self.ndim == 0:
            return self.item()
        return [x.tolist() for x in self]


_ABSENT = object()


def subclass_attribute(d: Dual, name: str):
    """The attribute `name` of a dual whose value is an instance of an ndarray subclass without operators,
    indexing or value-changing hooks of its own (`own_operators`: scikit-spatial's Vector, which only
    re-wraps): a method written in Python bound to the dual (its code then runs on it, as reverse mode runs
    it on the array), a property's getter run on it, a class's constant, an attribute its
    `__array_finalize__` set on the value; `_ABSENT` for anything else (numpy's own, or none)."""
    cls = type(d.primal)
    if name.startswith("__") or own_operators(cls):
        return _ABSENT
    for k in cls.__mro__:
        if name in vars(k):
            if k is object or k.__module__.split(".")[0] == "numpy":
                return _ABSENT
            found = vars(k)[name]
            if type(found) is types.FunctionType:  # (one calling `super()` needs the array itself: refused)
                return _ABSENT if "__class__" in found.__code__.co_freevars else types.MethodType(found, d)
            if type(found) is property and found.fget is not None:
                return found.fget(d)
            if type(found) in (classmethod, staticmethod):
                return getattr(cls, name)
            return found if not callable(found) and not hasattr(found, "__get__") else _ABSENT
    own = getattr(d.primal, "__dict__", None)
    return own[name] if own and name in own else _ABSENT


class _Flat:
    """A dual array's `.flat`: its items in C order (a view of the flattened dual: `m.flat[i]`, iteration,
    `len`); a store through it (`c.flat[i] = x`) is the dual's store at those items' positions."""
    __slots__ = ("_items", "_shape", "_next", "_dual")

    def __init__(self, d: Dual):
        self._dual = d
        self._items = np.ravel(d)
        self._shape = np.shape(d)
        self._next = 0  # (as numpy's flatiter: `next(a.flat)` and its `coords`, np.ndenumerate's)

    def __iter__(self):
        return iter(self._items)

    def __next__(self):
        if self._next >= len(self._items):
            raise StopIteration
        self._next += 1
        return self._items[self._next - 1]

    @property
    def index(self) -> int:
        return self._next

    @property
    def coords(self) -> tuple:
        if self._next >= len(self._items):
            return tuple(self._shape)
        return tuple(int(i) for i in np.unravel_index(self._next, self._shape))

    def __len__(self):
        return len(self._items)

    def __getitem__(self, index):
        return self._items[index]

    def __setitem__(self, index, value):
        # (the store into the dual at the positions of its items in C order, as numpy's flatiter writes them:
        # roboticstoolbox's `p.flat[k] = pk`; the items read again, a copy where the dual's layout is not C's)
        d = self._dual
        d[np.unravel_index(np.arange(int(np.size(d)))[index], self._shape)] = value
        self._items = np.ravel(d)

    # numpy's flatiter is an array to its comparisons and numpy's functions (`d.flat == 1`, `np.sum(a.flat)`): the
    # items' dual, as they are (without these, `d.flat == 1` was Python's identity test, False: pkI W1, 0 for 2)
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return getattr(ufunc, method)(*(self._items if v is self else v for v in inputs), **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return func(*(self._items if v is self else v for v in args), **kwargs)

    __hash__ = None


def _flat_operator(name: str):
    def op(self, *other):
        return getattr(self._items, name)(*other)
    op.__name__ = name
    return op


for _name in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):  # (numpy's flatiter has no arithmetic)
    setattr(_Flat, _name, _flat_operator(_name))
del _name


def _ordered(d: Dual, other, result, op: str):
    """`d < other` (`<=`, `>`, `>=`): Python's result, checked for a tie as `d == other` is (a branch
    boundary: `_equality_checked`) unless other is perturbed by d's tag too; noted for a rule sampling a
    function (`lowered.runtime.JumpWatch`)."""
    if (w := JUMP_WATCH.get()) is not None:
        watch_order(w, d, other, op, _past_operators(sys._getframe(2)))
    nan_rate_compared(d.tangent, other.tangent if type(other) is Dual and other.tag is d.tag else None, op)
    if type(other) is Dual and other.tag is d.tag:
        ta, tb = _chunks_aligned(d, other)
        rate = _rate(ta, tb)
        if _equal_at(d.primal, other.primal, op) is not None and (apart := apart_rate(
                ta, tb)) is not _NO_RATE and tie_moving(d.primal, other.primal, op, apart):
            # (tied where the two part: a kink, refused as a dual against a constant is, by their difference's rate)
            return _equality_checked(Dual(d.primal, rate, d.tag), other.primal, result, op, frame=3)
        if near_at(d.primal, other.primal, rate) is not None:
            return _equality_checked(d, other, result, "~" + op, frame=3)
        if type(d.primal) is float and HISTORY.run is not None:
            _closing(d.primal, other.primal, op, rate)
        return result
    value = d.primal
    if type(value) is float or type(value) is np.float64:  # (the common case: one comparison more)
        ov = primal(other)
        if type(ov) is np.ndarray:  # (a number against an array, `a < x` of skfuzzy's trimf: elementwise)
            return _equality_checked(d, other, result, op, frame=3)
        if value != ov and near_at(value, ov, d.tangent) is None and not zero_rate_near(value, ov, d.tangent):
            if HISTORY.run is not None:
                _closing(value, ov, op, d.tangent, d)
            return result
    return _equality_checked(d, other, result, op, frame=3)


def _native_jump(fn, x: Dual, rest: tuple = ()) -> None:
    """A step (floor, ceil, trunc, round, `//`, `%`) of a dual exactly on one of its jumps, where the tangent
    moves it across: refused (judged from the two sides: `StairJump`) as the transformed code's call is. Its
    operator method runs where code is run natively on duals (a function made by eval, without a source:
    `math.floor(2 * x) * x` at 0.5 gave 1.0 for a jump of 0.5; sweep of session 55)."""
    if not np.any(primal(x.tangent)):
        return
    jump = JUMP_FUNCTIONS.get(fn)
    if jump is not None:
        jump_guard(*jump, primal(x), x.tangent)
    else:
        stair_jump_guard(fn, (x, *rest), None, x.tangent)


def _rules_tie(a: Dual, b: Dual) -> None:
    """`a == b` (or `!=`) of two duals of one derivative, equal somewhere: `moving_tie` (a step's jump where
    their tangents part, judged from the two sides of the point). In the rules' code (their adjoints run on
    duals under an outer derivative: a max's hit, a tie's split), and in the user's code at a value other
    than 0: a special case taken where two moving values meet (scikit-fuzzy's centroid takes a trapezoid
    for a rectangle where two memberships are equal, `if y1 == y2:`; its derivative came out silently in
    both modes, 0.8887 for 0.8916). Two residuals equal at 0 in the user's code are an iteration's exit
    (`if f1 == f0: break` of a secant at its root), which its machinery judges (`converged`)."""
    if not _any_nonzero(a.primal):
        caller = _past_operators(sys._getframe(2))
        if caller is None or not is_engine(caller.f_code.co_filename):
            return
    moving_tie(a.primal, b.primal, a.tangent, b.tangent)


def _any_nonzero(v) -> bool:
    try:
        return bool(np.any(v != 0))
    except (TypeError, ValueError):
        return True


def _rates_noted(rate) -> None:
    """An equality not tied, in the user's code: its tangent noted for `lowered.runtime.rounding_residue`."""
    caller = _past_operators(sys._getframe(2))
    if not is_engine(caller.f_code.co_filename):
        rounding_residue(caller, False, rate)


def _closing(a, b, op: str, rate, d=None) -> None:
    """`lowered.runtime.closing_in` for an ordering in the user's code (not the rules'), and its rate noted
    for `rounding_residue` (one walk out of the operators for both); where the ordering ends a loop (the
    dual d tested), `converged`."""
    caller = _past_operators(sys._getframe(3))
    if not is_engine(caller.f_code.co_filename):
        closing_in(caller, a, b, op, rate)
        if type(a) is float:
            rounding_residue(caller, False, rate)
        if d is not None and (leaves := exit_lines(caller.f_code, caller.f_globals).get(caller.f_lineno)) is not None:
            converged(d, b, op, rate, leaves, caller)  # (each visit: its first is told apart)


def _chunks_aligned(d: Dual, other: Dual):
    """The tangents of two duals of one tag, each `pad`ded to the other's value axes (`jacfwd`'s k directions: a
    number's tangent (k,), an array's (k, n)). numpy aligns trailing axes: the two did not subtract, and a
    number's tie with an array went unchecked (one side's slope, the peak widths' stand-ins at a plateau), or,
    k equal to n, subtracted direction against element."""
    if d.tag.chunk is None or not isinstance(d.tangent, np.ndarray) or not isinstance(other.tangent, np.ndarray):
        return d.tangent, other.tangent
    most = max(ndim(d.primal), ndim(other.primal))
    return pad(d.tangent, d.primal, most, d.tag), pad(other.tangent, other.primal, most, d.tag)


def _rate(ta, tb):
    """The tangent of a - b (None where it has none)."""
    try:
        return ta - tb
    except Exception:
        return None


def _equality_checked(d: Dual, other, result, op: str, frame: int = 2):
    """`d == other` (or `!=`) in the user's code, other not perturbed by d's tag, where they are equal
    (somewhere, for arrays): refused (`lowered.runtime.SpecialPoint`) where d's tangent moves it there and
    the caller is not the engine's own code (its rules compare duals freely); Python's result otherwise."""
    caller = _past_operators(sys._getframe(frame))
    if caller.f_code.co_name in _DISPATCHING and caller.f_code.co_filename == _CONTEXT_FILE:
        while caller is not None and caller.f_code.co_filename == _CONTEXT_FILE:  # (a C function run as it is:
            caller = caller.f_back                                                 # `all([x, 1.0])`)
        if caller is None:
            return result
    if is_engine(caller.f_code.co_filename):
        if op[:1] != "~":  # (a rule's comparison: its kink, under an outer derivative)
            moving_tie(d.primal, primal(other), d.tangent, other.tangent if type(other) is Dual and
                       other.tag is d.tag else None)
        return result
    if op[:1] == "~":  # (two duals of one tag closing in: refused by `near_guard`)
        near_guard(d.primal, other.primal, op[1:], d.tangent, other.tangent)
        return result
    leaves = exit_lines(caller.f_code, caller.f_globals).get(caller.f_lineno) if op in ORDER_OPS else None
    equality_guard_fd(d.primal, primal(other), op, d.tangent, None, caller, leaves)
    if op in ORDER_OPS and HISTORY.run is not None:  # (a nested derivative's duals: their values')
        closing_in(caller, d.primal, primal(other), op, d.tangent)
    return result



def _past_operators(frame):
    """frame, or the first frame outward of it outside the core's operator dispatch (`overdub.ops`: forward
    mode's context routes the user's operators through it, so a dual's `__eq__` is called from there) and the
    context's own wrappers of it (`OPERATOR_CODES`)."""
    while frame is not None and (frame.f_code.co_filename == _OPS_FILE or frame.f_code in OPERATOR_CODES):
        frame = frame.f_back
    return frame


OPERATOR_CODES: set = set()  # (the code of forward mode's context's wrappers of an operator route)


_OPS_FILE = _overdub_ops.__file__

# forward mode's context running a C function as it is (its frames pass a comparison on to the caller's)
_CONTEXT_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "context.py")
_DISPATCHING = frozenset({"_primitive", "primitive"})


UNCHANGEABLE_WHEN[Dual] = lambda d: not d.shape  # (reverse mode's eager generators: a number's dual)


def _numpy_namespace(*, api_version=None):
    """`x.__array_namespace__()` of a dual array: numpy."""
    return np


_NDARRAY_METHODS = frozenset(name for name in dir(np.ndarray)
                             if not name.startswith("_") and callable(getattr(np, name, None)))
_METHOD_FORMS = {"compress": compress_method}  # (methods whose numpy function takes the array elsewhere)
"""The numpy function an ndarray method is, as a function of the array first, where numpy's function of that
name takes its arguments in another order: `a.compress(c)` is `np.compress(c, a)` (as np.compress(a, c) the
duals returned c, the condition, and the derivative 0, silently)."""

# A Dual is a numeric leaf for code that asks (reverse mode's cotangent structures, `numbers` checks):
# it is never a container to recurse into.
numbers.Number.register(Dual)


def share_tangent(x):
    """Before a view of x is taken: a dual x whose value is perturbed by an outer derivative call while its
    tangent is not gets a zero outer perturbation on its tangent, so that an in-place change through the
    view that perturbs the tangent reaches x's tangent too (tangents share memory where values do)."""
    v = x.primal
    if type(v) is Dual and type(x.tangent) is np.ndarray:
        x.tangent = Dual(x.tangent, zero_tangent(x.tangent, v.tag), v.tag)


def _kinds(x) -> set:
    """The dtype kinds of the arrays inside x, a dual at every level of nesting."""
    if type(x) is Dual:
        return _kinds(x.primal) | _kinds(x.tangent)
    if type(x) is np.ndarray:
        return {x.dtype.kind}
    if type(x) is complex:
        return {"c"}
    return set()


DETACHED: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
"""Tangents (by id) of duals whose value is a view of another dual's but whose tangent had to be a copy (a
reshape of a value laid out unlike its tangent: an F-ordered value, a C-ordered tangent): a write through such
a dual would change the other's value and not its tangent, so it is refused (`detached_write`)."""


# the tangents (their base arrays, by identity) of fresh arrays whose plain values were handed to a C function
# that may keep them (an iterator, an object of its own, a view): a perturbed write into one is refused, as the
# kept values would change without their derivative (`contexts.forward.context._lent`)
LENT: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def lent(tangent) -> bool:
    """tangent (a dual array's) shares memory with one whose plain values a C function may keep."""
    while type(tangent) is np.ndarray and tangent.base is not None:
        tangent = tangent.base
    return LENT.get(id(tangent)) is tangent


def lent_write() -> OverdubError:
    return OverdubError(
        "forward mode cannot write a perturbed value into this array: its values were handed, without their "
        "derivative, to compiled code that may keep them (an iterator over it, an object holding it, a view), and "
        "what that code reads afterwards would change without its derivative", where=_conversion_site(),
        fix="make the array from the input (`np.zeros_like(x)`, `x * 0.0`) so it carries a derivative from the "
            "start, or write before handing it on")


def detached_write() -> OverdubError:
    return OverdubError(
        "forward mode cannot write into this array: it is a view of another array's values (a reshape or ravel "
        "numpy made without copying) whose derivative is laid out differently in memory, so the write would "
        "change the other array's values and not their derivative", where=_conversion_site(),
        fix="write into a copy (`v = a.reshape(...).copy()`), or write into the original array by index")


def assign(container, index, item):
    """container[index] = item, promoting container to a Dual when item is perturbed by a tag it lacks."""
    if type(item) is Dual and not (type(container) is Dual and container.tag.order >= item.tag.order):
        container = Dual(container, zero_tangent(container, item.tag), item.tag)
    if type(container) is np.ndarray and not container.flags.writeable:
        container = container.copy()
    container[index] = item
    return container
