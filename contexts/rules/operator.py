"""Rules for the `operator` module: the arithmetic behind `a + b`, `a ** b`, `-a`, `a += b`, ...

Static adjoint form `adjoint(dy, y, a, b) -> (da, db)` throughout; `generic.fit` undoes numpy
broadcasting and keeps the cotangent of a real primal real. Complex numbers follow Zygote's convention
(holomorphic f: `da = dy * conj(df/da)`). All rule arithmetic is generic, so Fractions stay exact and
ufloats keep their uncertainty:

>>> import operator
>>> from fractions import Fraction
>>> from contexts.rules.registry import registry
>>> x = Fraction(1, 3)
>>> registry.get(operator.pow).adjoint(Fraction(1), x ** 3, x, 3)[0]
Fraction(1, 3)

In-place operators (`iadd`, `imul`, ...) have the same maths as the plain ones. For a mutable first
argument (an ndarray) the engine must hand the adjoint that argument's value from before the operation
(`rule.meta["inplace"]`); `iadd`/`isub` only read its shape.
`operator.matmul` and subscripting (`getitem`, ...) live with the numpy rules.
"""

from __future__ import annotations

import datetime
import math
import operator

import numpy as np

from . import generic
from .cotangents import Refused, acc
from .generic import conj, dropped_nan_zero, fit, is_dual, plain, project, sign
from .leaves import ArrayLeaf
from .registry import NoRuleError, dispatches_on_numbers, registry
from .ties import kink_tie, note_kink

__all__ = ["NOT_NUMERIC", "DERIVATIVES", "pow_dx", "pow_dn", "floor_quotient"]

NOT_NUMERIC = frozenset({
    "attrgetter", "itemgetter", "methodcaller", "call", "getitem", "setitem", "delitem",  # structural
    "matmul", "imatmul",  # numpy rules
})
"""Names in `operator` that are not scalar arithmetic: their rules live elsewhere (or nowhere)."""


def _is_seq(x) -> bool:
    return type(x) is list or type(x) is tuple


def _shaped(t, y):
    """The tangent t broadcast to the shape of an ndarray result y (scalar operands give scalar tangents)."""
    if t is None or type(y) is not np.ndarray or np.shape(t) == y.shape:
        return t
    return np.broadcast_to(t, y.shape).copy()


def _numpy_pair(tangents, a, b, inplace: bool = False):
    """(tangents, a, b) of numpy's arithmetic of an array and a list or tuple of numbers (`np.ones(2) - (x, y)`,
    a named tuple's too): the sequence as numpy's array of it, its tangent as the array of its items' (zeros
    for None), so that the tangents compute as the values do (a tuple's could not be negated or divided). In
    place only for an array on the left (`lst += a` extends the list)."""
    ta, tb = tangents
    if type(a) is np.ndarray and generic.sequence_of_items(b):
        return (ta, _items_tangent(tb, b)), a, np.asarray(b)
    if not inplace and type(b) is np.ndarray and generic.sequence_of_items(a):
        return (_items_tangent(ta, a), tb), np.asarray(a), b
    return tangents, a, b


def _items_tangent(t, items):
    """The tangent of a list or tuple of numbers, as the array numpy makes of them (None for none)."""
    if t is None:
        return None

    def filled(t, p):
        if generic.sequence_of_items(t):
            return [filled(ti, pi) for ti, pi in zip(t, p)]
        return np.zeros(np.shape(p)) if t is None else t
    try:
        return np.asarray(filled(t, items), dtype=np.result_type(np.asarray(items), float))
    except (TypeError, ValueError):  # (items' tangents numpy cannot hold as numbers: the sequence's, as given)
        return t


def _zero_seq(n: int) -> list:
    return [None] * n


# -- the derivatives of + - * /, declared once --------------------------------------------------------
# `DERIVATIVES[name] = (da, db)`: the change of `y = a <op> b` for a change t of a (`da(t, a, b, y)`) or
# of b (`db`), a linear map of t that keeps the operands' order (`a * t`: products need not commute).
# Every form of these operators' derivatives is made from the two functions:
# - forward: the tangent `da(ta, ...) + db(tb, ...)` (the frules below, `contexts.forward.dual`'s
#   arithmetic, and the tangent twin, which inlines the functions' expressions);
# - reverse: at real scalars and same-shape real arrays the cotangents are the same maps of the result's
#   cotangent g (the adjoints' float case, `binop_adj`, and the reverse twin's inlined fast path, which
#   inlines them too); complex numbers conjugate the operands, broadcasting is undone (the adjoints).
# Each function is one `return` of one expression of its parameters, so that code generators can inline
# it (`contexts.lowered.build.inline`); a generator without y at hand passes the expression `a / b`.

def add_da(t, a, b, y):
    return t


def add_db(t, a, b, y):
    return t


def sub_db(t, a, b, y):
    return -t


def mul_da(t, a, b, y):
    return t * b


def mul_db(t, a, b, y):
    return a * t


def truediv_da(t, a, b, y):
    return t / b


def truediv_db(t, a, b, y):
    return -(t / b) * y  # -(t * a) / (b * b), without overflowing b * b


DERIVATIVES = {"add": (add_da, add_db), "sub": (add_da, sub_db), "mul": (mul_da, mul_db),
               "truediv": (truediv_da, truediv_db)}


# -- add, sub (and sequence concatenation) --------------------------------------------------------

def add_adjoint(dy, y, a, b):
    if type(dy) is float and type(a) is float and type(b) is float:
        return dy, dy
    if dy is None:
        return None, None
    if _is_seq(a) and _is_seq(b):
        dy = list(dy)
        return dy[:len(a)], dy[len(a):]
    return fit(dy, a), fit(dy, b)


def add_frule(tangents, a, b):
    ta, tb = tangents
    if type(ta) is float and type(tb) is float and type(a) is float and type(b) is float:
        return a + b, ta + tb
    if _is_seq(a) and _is_seq(b):
        return a + b, list(ta or _zero_seq(len(a))) + list(tb or _zero_seq(len(b)))
    (ta, tb), a, b = _numpy_pair(tangents, a, b)
    y = a + b
    return y, _shaped(generic.add(ta, tb), y)


def iadd_frule(tangents, a, b):
    (ta, tb), a, b = _numpy_pair(tangents, a, b, True)
    if _is_seq(a) and _is_seq(b):
        t = list(ta or _zero_seq(len(a))) + list(tb or _zero_seq(len(b)))
    else:
        t = generic.add(ta, tb)  # before the operation: a may be mutated
    y = operator.iadd(a, b)
    return y, _shaped(t, y)


def sub_adjoint(dy, y, a, b):
    if type(dy) is float and type(a) is float and type(b) is float:
        return dy, sub_db(dy, a, b, y)
    if dy is None:
        return None, None
    return fit(dy, a), fit(sub_db(dy, a, b, y), b)


def _sub_tangent(ta, tb):
    if tb is None:
        return ta
    return -tb if ta is None else ta - tb


def sub_frule(tangents, a, b):
    tangents, a, b = _numpy_pair(tangents, a, b)
    t = _sub_tangent(*tangents)
    y = a - b
    return y, _shaped(t, y)


def isub_frule(tangents, a, b):
    tangents, a, b = _numpy_pair(tangents, a, b, True)
    t = _sub_tangent(*tangents)
    y = operator.isub(a, b)
    return y, _shaped(t, y)


# -- mul, truediv (and sequence repetition) -------------------------------------------------------

def _repeat_adjoint(dy, seq, n):
    """Cotangent of `seq * n`: each element collects the cotangents of its n copies (a `Refused` one,
    no known derivative, is each element's: it raises where used)."""
    if type(dy) is Refused:
        return [dy] * len(seq)
    dy, k = list(dy), len(seq)
    total = [None] * k
    for i, g in enumerate(dy):
        # (acc: a tuple's cotangents add elementwise, where `+` concatenated them; one object's box, which
        # every copy's position holds, is taken once)
        total[i % k] = acc(total[i % k], g)
    return total


def _repeats(a, b, y) -> bool:
    """`a * b` repeated a list or tuple (`[0.0] * n`), as Python decided: its result is the sequence. With an
    array (`x * [1.0, 2.0]`, `np.int64(2) * [x, y]`) numpy multiplied elementwise instead."""
    if not (_is_seq(a) or _is_seq(b)):
        return False
    if y is not None:
        return _is_seq(y)
    other = b if _is_seq(a) else a
    return not isinstance(other, (np.ndarray, np.generic)) or (_is_seq(a) and isinstance(other, np.integer))


def mul_adjoint(dy, y, a, b):
    if type(dy) is float and type(a) is float and type(b) is float:
        return mul_da(dy, a, b, y), mul_db(dy, a, b, y)
    if dy is None:
        return None, None
    if _repeats(a, b, y):
        return (_repeat_adjoint(dy, a, b), None) if _is_seq(a) else (None, _repeat_adjoint(dy, b, a))
    ca, cb = conj(a), conj(b)
    # (0 * inf where y overflowed and its cotangent is 0 there: `generic.dropped_nan_zero`)
    return (fit(dropped_nan_zero(mul_da(dy, ca, cb, None), dy, y), a),
            fit(dropped_nan_zero(mul_db(dy, ca, cb, None), dy, y), b))


def _mul_tangent(ta, tb, a, b):
    return generic.add(None if ta is None else mul_da(ta, a, b, None),
                       None if tb is None else mul_db(tb, a, b, None))


def mul_frule(tangents, a, b):
    ta, tb = tangents
    if type(ta) is float and type(tb) is float and type(a) is float and type(b) is float:
        return a * b, mul_da(ta, a, b, None) + mul_db(tb, a, b, None)
    y = a * b
    if _repeats(a, b, y):
        seq, n, t = (a, b, tangents[0]) if _is_seq(a) else (b, a, tangents[1])
        return y, list(t or _zero_seq(len(seq))) * n
    scaled_duration(a, b, _live(ta), _live(tb))
    tangents, a, b = _numpy_pair(tangents, a, b)
    t = _mul_tangent(*tangents, a, b)
    return y, _shaped(t, y)


def imul_frule(tangents, a, b):
    tangents, a, b = _numpy_pair(tangents, a, b, True)
    t = _mul_tangent(*tangents, a, b)
    y = operator.imul(a, b)
    scaled_duration(a, b, _live(tangents[0]), _live(tangents[1]))
    return y, _shaped(t, y)


def _live(t) -> bool:
    """A tangent given (None, or the twins' int 0, is none)."""
    return t is not None and not (type(t) is int and t == 0)


def _timelike(v) -> bool:
    """v is a date, time or duration (numpy's datetime64/timedelta64, scalars or arrays, or datetime's):
    integer counts of a unit, no tangent space."""
    dtype = getattr(v, "dtype", None)
    if isinstance(dtype, np.dtype):
        return dtype.kind in ("m", "M")
    return isinstance(v, (datetime.date, datetime.time, datetime.timedelta))


def scaled_duration(a, b, active_a: bool, active_b: bool) -> None:
    """Refuse `a * td`, `td * a`, `td / a` (a duration scaled by a differentiated number): the result is
    rounded, a datetime.timedelta to whole microseconds, a np.timedelta64 to whole units of its own (hours
    times 0.6 is 0 hours), a step function whose derivative is no use (forward mode gave the unrounded
    3600 s per hour where the value does not move; reverse mode 0 where it moves by 3600 s)."""
    for v, active, other in ((a, active_a, b), (b, active_b, a)):
        if active and _timelike(other) and not _timelike(v) and not isinstance(v, (int, np.integer)) and not (
                isinstance(v, np.ndarray) and v.dtype.kind in "biu"):
            from .numpy._util import unsupported
            raise unsupported(
                "`number * duration`", f"a {'timedelta64 array' if isinstance(other, np.ndarray) else type(other).__name__} scaled by a differentiated number (rounded to whole "
                "microseconds, or to whole units of a np.timedelta64: no derivative)",
                "compute with the duration in seconds: `a * td.total_seconds()`, `td / np.timedelta64(1, 's')`")


def truediv_adjoint(dy, y, a, b):
    if type(dy) is float and type(a) is float and type(b) is float:
        return truediv_da(dy, a, b, y), truediv_db(dy, a, b, y)
    if dy is None or _timelike(a) or _timelike(b):  # (`dt / np.timedelta64(1, "D")`: days, constant)
        return None, None
    ca, cb, cy = conj(a), conj(b), conj(y)
    return (fit(dropped_nan_zero(truediv_da(dy, ca, cb, cy), dy, y), a),
            fit(dropped_nan_zero(truediv_db(dy, ca, cb, cy), dy, y), b))


def _truediv_tangent(ta, tb, a, b, y):
    return generic.add(None if ta is None else truediv_da(ta, a, b, y),
                       None if tb is None else truediv_db(tb, a, b, y))


def truediv_frule(tangents, a, b):
    tangents, a, b = _numpy_pair(tangents, a, b)
    y = a / b
    scaled_duration(a, b, _live(tangents[0]), _live(tangents[1]))
    return y, _shaped(_truediv_tangent(*tangents, a, b, y), y)


def itruediv_frule(tangents, a, b):
    tangents, a, b = _numpy_pair(tangents, a, b, True)
    t = _truediv_tangent(*tangents, a, b, a / b)
    y = operator.itruediv(a, b)
    scaled_duration(a, b, _live(tangents[0]), _live(tangents[1]))
    return y, _shaped(t, y)


# -- mod (floordiv has zero derivative) -----------------------------------------------------------

def floor_quotient(a, b):
    """floor(a / b), held constant when differentiating `a % b` (the derivative of a // b is zero);
    ufloats use their nominal values (their `//` is deprecated).

    >>> floor_quotient(7.5, 2.0), floor_quotient(-7.5, 2.0)
    (3.0, -4.0)
    """
    if isinstance(a, generic._UFloat) or isinstance(b, generic._UFloat):
        return generic.floor(plain(a) / plain(b))
    return a // b


def mod_adjoint(dy, y, a, b):
    if dy is None:
        return None, None
    return fit(dy, a), fit(-dy * floor_quotient(a, b), b)


def _mod_tangent(ta, tb, a, b):
    return _sub_tangent(ta, None if tb is None else tb * floor_quotient(a, b))


def mod_frule(tangents, a, b):
    y = a % b
    return y, _shaped(_mod_tangent(*tangents, a, b), y)


def divmod_slot_adjoint(dy, y, a, b):
    """`float.__divmod__(a, b)` = (a // b, a % b): the remainder's cotangent, as `a % b`'s (the quotient is a
    step: none)."""
    dr = None if dy is None else dy[1]
    return mod_adjoint(dr, y[1], a, b)


def divmod_slot_frule(tangents, a, b):
    y = divmod(a, b)
    return y, (None, _shaped(_mod_tangent(*tangents, a, b), y[1]))


def imod_frule(tangents, a, b):
    t = _mod_tangent(*tangents, a, b)
    y = operator.imod(a, b)
    return y, _shaped(t, y)


# -- pow --------------------------------------------------------------------------------------------

def _is_array(x) -> bool:
    """An array, or an object holding one (a pint Quantity of an array: `x == 0` is not one truth value)."""
    return isinstance(x, (np.ndarray, np.generic, ArrayLeaf)) or (
        type(x) is not float and type(x) is not int and bool(getattr(x, "shape", ())))


def _innermost(x):
    """The number behind x: a dual's value (nested: a derivative of a derivative's), a ufloat's nominal one."""
    while hasattr(type(x), "_od_parts"):
        x = x._od_parts()[0]
    return plain(x)


def pow_dx(x, n):
    """d(x**n)/dx = n * x**(n-1), with ChainRules' values at x == 0 for real n >= 0
    (0 for n == 0 or n > 1, 1 for n == 1, inf for 0 < n < 1): `0**n` never gives 0 * inf.

    >>> pow_dx(0.0, 2), pow_dx(2.0, 3), pow_dx(0.0, 1)
    (0, 12.0, 1)
    """
    if generic.sequence_of_items(n):  # (`x ** (2, 3)`: numpy takes the exponents as an array, a named tuple's too)
        n = np.asarray(n)
    if _is_array(x) or _is_array(n):
        if type(x) is int or type(x) is np.ndarray and x.dtype.kind in "iub":
            x = np.asarray(x, dtype=float)  # (an integer base to integer powers n - 1 < 0: numpy refuses)
        with np.errstate(divide="ignore", invalid="ignore"):
            if _is_array(n):  # (0 only where x == 0 too: elsewhere the formula's value is 0, and its
                corner = (n == 0) & (x == 0)  # derivative in n, x**-1, a hessian's, gen24 W12)
                d = np.where(corner, 0, n * np.where(corner, 1, x) ** (n - 1))
            else:
                d = 0 * x if n == 0 and not is_dual(n) else n * x ** (n - 1)
            if np.any(np.isinf(n)):  # (x ** -inf, 0 off |x| = 1: a constant there, not inf * 0)
                d = np.where(np.isinf(n) & (x ** (n - 1) == 0), 0, d)
            return d
    if n == 0:
        # (a perturbed 0, forward over reverse: the formula, whose derivative in n is x**-1, gen24 W12)
        return 0 * x if not is_dual(n) or x == 0 else n * x ** (n - 1)
    if type(n) is float and math.isinf(n) and generic.is_real(v := _innermost(x)) and v ** (n - 1) == 0:
        return 0 * x  # (`(1 + r) ** -inf`, a perpetuity's discount: 0 near r, its derivative 0, not nan)
    if plain(x) == 0 and generic.is_real(n) and plain(n) > 0:
        if plain(n) > 1 and type(x).__name__ == "Dual":
            # (a dual, under a derivative of a derivative: the 0 lost the slope's own derivative, n (n - 1)
            # x**(n - 2), the hessian of x**2 at 0 came out 0 for 2; n x**(n - 1) carries it)
            return n * x ** (n - 1)
        return 1 if plain(n) == 1 else (0 if plain(n) > 1 else math.inf)
    return n * x ** (n - 1)


def pow_dn(x, n, y):
    """d(x**n)/dn = y * log(x): 0 where x == 0, and with log|x| + i*pi for a negative real x whose
    power is complex (a real result only needs the real part, log|x|).

    >>> pow_dn(2.0, 3, 8.0) == 8 * __import__("math").log(2.0)
    True
    """
    if _is_array(x) or _is_array(n) or _is_array(y):
        safe = np.where(x == 0, 1, x)
        if np.iscomplexobj(x) or np.iscomplexobj(y):
            return y * np.log(safe.astype(complex))
        return y * np.log(abs(safe))
    if plain(x) == 0:
        return 0 * y
    if generic.is_real(x) and plain(x) < 0:
        return y * (generic.log(-x) + 1j * math.pi) if isinstance(y, complex) else y * generic.log(-x)
    return y * generic.log(x)


def _integral(v) -> bool:
    """v is an array of integers (or bools), made by the code (`np.arange(k)`): it carries no derivative, and
    needs no cotangent. (A Python int may be a user's number: `gradient(f, 3)`.)"""
    return type(v) is np.ndarray and v.dtype.kind in "biu"


def pow_adjoint(dy, y, x, n):
    if type(dy) is float and type(x) is float and x > 0 and (type(n) is int or type(n) is float):
        return dy * n * x ** (n - 1), dy * y * math.log(x)
    if dy is None:
        return None, None
    # (an integer base or exponent has no cotangent: `x[:, None] ** np.arange(k)` in scipy's gaussian
    # kernel raised "Integers to negative integer powers" computing the integers' own)
    # (0 * nan where the result was a NaN dropped later, as the elementwise rules do: `operator.pow(a, 2)` in
    # pandas' arithmetic, a Series padded with NaN by `shift`, gave NaN for -60)
    return (None if _integral(x) else fit(generic.dropped_nan_zero(dy * conj(pow_dx(x, n)), dy, y), x),
            None if _integral(n) else fit(generic.dropped_nan_zero(dy * conj(pow_dn(x, n, y)), dy, y), n))


def _pow_tangent(tx, tn, x, n, y):
    return generic.add(None if tx is None else tx * pow_dx(x, n),
                       None if tn is None else tn * pow_dn(x, n, y))


def pow_frule(tangents, x, n):
    y = x ** n
    return y, _shaped(_pow_tangent(*tangents, x, n, y), y)


def ipow_frule(tangents, x, n):
    t = _pow_tangent(*tangents, x, n, x ** n)
    y = operator.ipow(x, n)
    return y, _shaped(t, y)


# -- unary --------------------------------------------------------------------------------------------

def neg_adjoint(dy, y, x):
    return (None if dy is None else -dy,)


def neg_frule(tangents, x):
    t = tangents[0]
    return -x, (None if t is None else -t)


def pos_adjoint(dy, y, x):
    return (dy,)


def pos_frule(tangents, x):
    return +x, tangents[0]


def abs_adjoint(dy, y, x):
    """|x|: dy * sign(x) for real x (0 at 0); real(dy) * z/|z| for complex z (Zygote)."""
    if dy is None:
        return (None,)
    if type(x) is float:
        if x == 0.0:
            note_kink("abs")
        return (dy * ((x > 0) - (x < 0)),)
    if type(x) is np.float64 and x == 0.0:
        note_kink("abs")
    return (fit(project(dy, y) * sign(x), x),)


# The last |x| taken at a kink, x exactly 0 and moving: (the result, |x|'s speed). Its tangent is 0 (the
# convention), but |x| moves up at that speed in every direction: a convergence test `abs(r) > tol` of a
# residual exactly 0 is that close to flipping (`lowered.runtime.converged`).
KINK: list = [None, 0.0, 0.0]  # (the result, its speed; the largest speed of those met since it was read)


def abs_frule(tangents, x):
    """d|z| = Re(conj(z/|z|) dz), which is sign(x) dx for real x."""
    y, t = abs(x), tangents[0]
    if t is None:
        return y, None
    s = sign(x)
    if (type(x) is float or type(x) is np.float64) and x == 0.0:  # (a chunk of directions: the largest)
        speed = abs(t) if type(t) in (float, np.float64) else (
            float(np.max(np.abs(t))) if type(t) is np.ndarray and t.dtype.kind == "f" and t.size else 0.0)
        if speed:
            KINK[0], KINK[1], KINK[2] = y, speed, max(KINK[2], speed)
            kink_tie("abs", x, 0.0, t, None)
    return y, project(conj(s) * t, y) if not generic.is_real(x) else t * s


# -- registration ---------------------------------------------------------------------------------

for _fn, _adj, _frule in [
    (operator.add, add_adjoint, add_frule), (operator.concat, add_adjoint, add_frule),
    (operator.iadd, add_adjoint, iadd_frule), (operator.iconcat, add_adjoint, iadd_frule),
    (operator.sub, sub_adjoint, sub_frule), (operator.isub, sub_adjoint, isub_frule),
    (operator.mul, mul_adjoint, mul_frule), (operator.imul, mul_adjoint, imul_frule),
    (operator.truediv, truediv_adjoint, truediv_frule), (operator.itruediv, truediv_adjoint, itruediv_frule),
    (operator.mod, mod_adjoint, mod_frule), (operator.imod, mod_adjoint, imod_frule),
    (operator.pow, pow_adjoint, pow_frule), (operator.ipow, pow_adjoint, ipow_frule),
]:
    registry.adjoint(_fn, kind="elementwise")(_adj)
    registry.frule(_fn)(_frule)
registry.set_kind("elementwise", operator.iadd, operator.isub, operator.iconcat, inplace=True)
registry.set_kind("elementwise", operator.imul, operator.itruediv, operator.imod, operator.ipow,
                  inplace=True, needs_value_before=True)


def _not_in_place(fn):
    """fn (`operator.iadd`...) as reverse mode records it: refused where it would change an array or a list
    in place (`operator.iadd(a, y)` on a line of its own: the change of `a` was lost, 3.0 for 5.4; `a += y`
    is followed)."""
    def in_place_refused(a, b):
        if isinstance(a, (np.ndarray, list)) or type(a).__name__ == "Dual" and isinstance(a.primal, np.ndarray):
            raise NoRuleError(f"reverse mode does not differentiate operator.{fn.__name__} changing a "
                              f"{type(a).__name__} in place", fix=f"write the augmented assignment itself "
                              f"(`a {_AUGMENTED[fn]} b`)")
        return fn(a, b)
    in_place_refused.__name__ = in_place_refused.__qualname__ = fn.__name__
    return in_place_refused


_AUGMENTED = {operator.iadd: "+=", operator.isub: "-=", operator.iconcat: "+=", operator.imul: "*=",
              operator.itruediv: "/=", operator.imod: "%=", operator.ipow: "**="}
for _fn in _AUGMENTED:
    registry.set(_fn, impl=_not_in_place(_fn))



registry.adjoint(operator.neg, kind="linear")(neg_adjoint)
registry.frule(operator.neg)(neg_frule)
registry.adjoint(operator.pos, kind="linear")(pos_adjoint)
registry.frule(operator.pos)(pos_frule)
registry.adjoint(operator.abs, kind="elementwise")(abs_adjoint)
registry.frule(operator.abs)(abs_frule)

def py_invert(x):
    """`operator.invert(x)` as `~x` (`Rule.python`): an object's own `__invert__` is its class's code."""
    return ~x


registry.nondifferentiable(
    operator.floordiv, operator.ifloordiv,  # piecewise constant
    operator.lt, operator.le, operator.eq, operator.ne, operator.ge, operator.gt,
    operator.not_, operator.truth, operator.is_, operator.is_not, operator.contains,
    operator.countOf, operator.indexOf, operator.index, operator.length_hint,
    operator.and_, operator.or_, operator.xor, operator.invert, operator.inv,
    operator.lshift, operator.rshift, operator.iand, operator.ior, operator.ixor,
    operator.ilshift, operator.irshift,
)
registry.set(operator.invert, operator.inv, python=py_invert)


# -- the same rules for the slot methods of float, int and complex -----------------------------------
# `float.__pow__(a, b)` (as uncertainties' ops call it) is keyed by the slot wrapper, and `(1.0).__pow__`
# by `(float, "__pow__")`; both take (self, other). A reflected method `__rpow__(self, other)` is
# `other ** self`. A slot returning NotImplemented gets no cotangents.

def _slot_adjoint(adjoint, reflected):
    """The adjoint of a binary slot method, from the adjoint of its operator function."""
    def slot_adjoint(dy, y, a, b):
        if y is NotImplemented:
            return None, None
        if reflected:
            db, da = adjoint(dy, y, b, a)
            return da, db
        return adjoint(dy, y, a, b)
    slot_adjoint.__name__ = slot_adjoint.__qualname__ = f"{'r' if reflected else ''}{adjoint.__name__}"
    return slot_adjoint


def _slot_frule(frule, reflected):
    def slot_frule(tangents, a, b):
        if reflected:
            return frule(tangents[::-1], b, a)
        return frule(tangents, a, b)
    slot_frule.__name__ = slot_frule.__qualname__ = f"{'r' if reflected else ''}{frule.__name__}"
    return slot_frule


def conjugate_adjoint(dy, y, x):
    return (None if dy is None else conj(dy),)


def conjugate_frule(tangents, x):
    t = tangents[0]
    return x.conjugate(), (None if t is None else conj(t))


_BINARY_SLOTS = {"add": (add_adjoint, add_frule), "sub": (sub_adjoint, sub_frule),
                 "mul": (mul_adjoint, mul_frule), "truediv": (truediv_adjoint, truediv_frule),
                 "mod": (mod_adjoint, mod_frule), "pow": (pow_adjoint, pow_frule)}
_UNARY_SLOTS = {"neg": (neg_adjoint, neg_frule), "pos": (pos_adjoint, pos_frule),
                "abs": (abs_adjoint, abs_frule), "float": (pos_adjoint, pos_frule),
                "complex": (pos_adjoint, pos_frule)}
_NONDIFF_SLOTS = ("floordiv", "rfloordiv", "int", "index", "trunc", "floor", "ceil",
                  "round", "bool", "eq", "ne", "lt", "le", "gt", "ge", "hash")


def _register_slots(cls):
    def both(name):
        return [getattr(cls, name), (cls, name)]

    # (divmod's remainder moves as `a % b`: registered as a step, `x.__divmod__(y)[1]` had the derivative 0)
    for op, (adjoint, frule) in (*_BINARY_SLOTS.items(), ("divmod", (divmod_slot_adjoint, divmod_slot_frule))):
        for name, reflected in ((f"__{op}__", False), (f"__r{op}__", True)):
            if hasattr(cls, name):
                registry.adjoint(*both(name), kind="elementwise")(_slot_adjoint(adjoint, reflected))
                registry.frule(*both(name))(_slot_frule(frule, reflected))
    for op, (adjoint, frule) in _UNARY_SLOTS.items():
        name = f"__{op}__"
        if hasattr(cls, name):
            registry.adjoint(*both(name), kind="elementwise")(adjoint)
            if op not in ("float", "complex"):
                registry.frule(*both(name))(frule)
    registry.adjoint(*both("conjugate"), kind="linear")(conjugate_adjoint)
    registry.frule(*both("conjugate"))(conjugate_frule)
    registry.nondifferentiable(*[key for op in _NONDIFF_SLOTS if hasattr(cls, f"__{op}__")
                                 for key in both(f"__{op}__")])


for _cls in (float, int, complex):
    _register_slots(_cls)

# an ndarray's own operator slots, called by name: an ndarray subclass's operator passing on to numpy's
# (`def __mul__(self, o): return super().__mul__(o)`, keeping its metadata) is differentiated as its code,
# which reaches them (the elementwise rules; its in-place slots are refused as C code changing it)
for _op, (_adjoint, _frule) in _BINARY_SLOTS.items():
    for _name, _reflected in ((f"__{_op}__", False), (f"__r{_op}__", True)):
        registry.adjoint(getattr(np.ndarray, _name), (np.ndarray, _name), kind="elementwise")(
            _slot_adjoint(_adjoint, _reflected))
        registry.frule(getattr(np.ndarray, _name), (np.ndarray, _name))(_slot_frule(_frule, _reflected))


# -- the operators as Python code, for operands of other classes ---------------------------------------
# `operator.mul(a, b)` on an object of a class with its own `__mul__` means that method, whatever it
# computes: the numeric rules above would be wrong for it (a cotangent of its fields is no number). The
# engines differentiate these forms instead (`Rule.python`), which run the operands' own methods.

def py_add(a, b):
    return a + b


def py_sub(a, b):
    return a - b


def py_mul(a, b):
    return a * b


def py_truediv(a, b):
    return a / b


def py_floordiv(a, b):
    return a // b


def py_mod(a, b):
    return a % b


def py_pow(a, b):
    return a ** b


def py_matmul(a, b):
    return a @ b


def py_iadd(a, b):
    a += b
    return a


def py_isub(a, b):
    a -= b
    return a


def py_imul(a, b):
    a *= b
    return a


def py_itruediv(a, b):
    a /= b
    return a


def py_ipow(a, b):
    a **= b
    return a


def py_neg(a):
    return type(a).__neg__(a)


def py_pos(a):
    return type(a).__pos__(a)


def py_abs(a):
    return type(a).__abs__(a)


for _fn, _form in [
    (operator.add, py_add), (operator.sub, py_sub), (operator.mul, py_mul), (operator.truediv, py_truediv),
    (operator.floordiv, py_floordiv), (operator.mod, py_mod), (operator.pow, py_pow),
    (operator.matmul, py_matmul), (operator.iadd, py_iadd), (operator.isub, py_isub),
    (operator.imul, py_imul), (operator.itruediv, py_itruediv), (operator.ipow, py_ipow),
    (operator.neg, py_neg), (operator.pos, py_pos), (operator.abs, py_abs),
]:
    registry.set(_fn, python=_form)
    dispatches_on_numbers(_fn)


# -- `operator.methodcaller(name, *args)` given values that may carry derivatives ------------------------

class MethodCaller:
    """`operator.methodcaller(name, *args, **kw)` as Python code (`Rule.stand_in`): the arguments it holds
    are an object's fields, whose derivatives every engine follows (held by the C object, they were lost)."""

    def __init__(self, name, args, kw):
        if not isinstance(name, str):
            raise TypeError("method name must be a string")
        self.name, self.args, self.kw = name, args, kw

    def __call__(self, obj):
        return getattr(obj, self.name)(*self.args, **self.kw)

    def __repr__(self) -> str:
        parts = [repr(self.name), *map(repr, self.args), *(f"{k}={v!r}" for k, v in self.kw.items())]
        return f"operator.methodcaller({', '.join(parts)})"


def methodcaller(name, /, *args, **kw):
    return MethodCaller(name, args, kw)


registry.set(operator.methodcaller, stand_in=methodcaller)


# `operator.iadd(a, b)` and kin as the augmented assignment they are (`Rule.stand_in`: differentiated as code
# by reverse mode, which follows `a += b` changing an array or a list in place, and so an in-place change
# made through the function: array-api-extra's `at(x)[i].multiply(-1)`, `x[i] = operator.imul(x[i], y)`,
# under scipy's Rotation.inv, was refused). The forms are `Rule.python`'s above, and `%=`'s.

def py_imod(a, b):
    a %= b
    return a


for _fn, _stand in ((operator.iadd, py_iadd), (operator.iconcat, py_iadd), (operator.isub, py_isub),
                    (operator.imul, py_imul), (operator.itruediv, py_itruediv), (operator.imod, py_imod),
                    (operator.ipow, py_ipow)):
    registry.set(_fn, stand_in=_stand)
