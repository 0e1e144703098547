"""Rules for the numeric builtins: `abs`, `min`, `max`, `sum`, `sorted`, `pow`, `divmod`, `float`, `complex`, and the
non-differentiable ones (`round`, `int`, `len`, `bool`, ...).

Convention for an iterable argument: its cotangent is a list with one entry per element (`None` for
zero), and so is its tangent in an frule. Functions that consume an iterable (`min`/`max` of one
iterable, `sum`) use the closure (rrule) form, because the iterable may be a one-shot generator.

Ties in `min`/`max` of numbers (without a key): the tied elements share the cotangent equally, as
`np.maximum` and `np.max` share it and central differences see it (the whole of it went to the element
Python returns: `max(x, -1.0)` at x = -1 gave 1 where the differences give 0.5). With a key, the element
Python returns gets it whole (tied keys of different values are a jump, not a kink).

>>> from contexts.rules import registry
>>> y, pullback = registry.get(max).rrule([1.0, 3.0, 3.0])
>>> y, pullback(1.0)
(3.0, ([None, 0.5, 0.5],))
"""

from __future__ import annotations

import builtins
import itertools
import math
import numbers
import types
import os
import re
import sys

import numpy as np

from overdub.errors import OverdubError

from . import generic
from .cotangents import Refused
from .generic import conj, fit, project
from .containers import _carries_derivative
from .operator import floor_quotient, abs_adjoint, abs_frule, pow_adjoint, pow_frule
from .registry import NoRuleError, dispatches_on_numbers, registry
from .sparsity_specs import CONCRETE, LINEAR, NONLINEAR, Custom
from .ties import TiedApart, kink_tie, note_kink, note_tie, parting_items

__all__: list[str] = []


def _one_hot(n: int, i: int | None, dy) -> list:
    return [dy if j == i else None for j in range(n)]


def _pick(select, items: list, kwargs) -> tuple:
    """(y, i): what `select` (min or max) gives for items, and its index (None for the default), found by
    comparing as Python's min/max do — the first extremal element, by `key` if given. Not by calling
    `select` and finding its result among the items: a rule reached with an outer derivative's duals runs
    under forward mode (forward over forward), where that call is itself differentiated and gives a new
    dual, found nowhere (the tangent was then dropped: max(x², 0.4x²)'' gave 0)."""
    if not items:
        return select(items, **kwargs), None
    key = kwargs.get("key")
    is_max = select is builtins.max
    best, kb = 0, key(items[0]) if key is not None else items[0]
    for j in range(1, len(items)):
        kj = key(items[j]) if key is not None else items[j]
        if (kj > kb) if is_max else (kj < kb):
            best, kb = j, kj
    return items[best], best


def _ties(items: list, i, kwargs) -> list:
    """The indices of the items equal to the chosen one, items[i] (by value, without a key: numbers): at such a
    tie the derivative is the mean of the tied items', as for `np.maximum` and `np.max` (one item's, it was
    one side's derivative: `max(x, -1.0)` at x = -1 gave 1 where central differences give 0.5)."""
    if i is None or kwargs.get("key") is not None or len(items) < 2:  # (`key=None` is none: heapq.nsmallest's
        return [i]                                                       # `min(it, default=s, key=key)`, sweep Q)
    chosen = items[i]
    if not isinstance(chosen, numbers.Real):
        return [i]
    return [j for j, v in enumerate(items) if isinstance(v, numbers.Real) and v == chosen]


def _extremum_rrule(select, args, kwargs):
    if len(args) == 1:  # one iterable (perhaps a generator): materialise it once
        items = list(args[0])
    else:
        items = list(args)
    (y, i), n, one_iterable = _pick(select, items, kwargs), len(items), len(args) == 1

    dual = one_iterable and _dual_array(args[0])

    def extremum_pullback(dy):
        if dual and dy is not None:  # forward over reverse: a dual array's cotangent is a dual array
            out = np.zeros_like(args[0])
            if i is not None:
                out[i] = dy
            return (out,)
        tied = _ties(items, i, kwargs)
        if len(tied) > 1 and dy is not None:
            note_kink(select.__name__)
            share = dy / len(tied)
            cotangents = [share if j in tied else None for j in range(n)]
        else:
            cotangents = _one_hot(n, i, dy)
        out = (_gathered(args[0], cotangents),) if one_iterable else tuple(cotangents)
        return out + ({"default": dy if i is None else None},) if "default" in kwargs else out
    extremum_pullback.__name__ = extremum_pullback.__qualname__ = f"{select.__name__}_pullback"
    return y, extremum_pullback


def max_rrule(*args, **kwargs):
    return _extremum_rrule(builtins.max, args, kwargs)


def min_rrule(*args, **kwargs):
    return _extremum_rrule(builtins.min, args, kwargs)


def _extremum_frule(select, tangents, args, kwargs):
    if len(args) == 1:
        items = list(args[0])
        ts = [None] * len(items) if tangents[0] is None else list(tangents[0])
    else:
        items, ts = list(args), list(tangents)
    y, i = _pick(select, items, kwargs)
    tied = _ties(items, i, kwargs)
    if len(tied) > 1:
        known = [ts[j] for j in tied if ts[j] is not None]
        if known and len({id(items[j]) for j in tied}) > 1:  # (one quantity's copies move together)
            for j in tied[1:]:
                kink_tie(select.__name__, items[tied[0]], items[j], ts[tied[0]], ts[j])
        return y, (sum(known) / len(tied) if known else None)
    return y, (None if i is None else ts[i])


def max_frule(tangents, *args, **kwargs):
    return _extremum_frule(builtins.max, tangents, args, kwargs)


def min_frule(tangents, *args, **kwargs):
    return _extremum_frule(builtins.min, tangents, args, kwargs)


def _dual_array(x) -> bool:
    """x is a forward-mode dual array (forward over reverse runs these rules on them)."""
    return type(x).__name__ == "Dual" and type(x).__module__.startswith("contexts.forward") and bool(x.shape)


def _gathered(x, cts):
    """The cotangents of the items drawn from iterable x as x's own: for a numpy array an array of its
    shape, zero where an item has none (a list with Nones in it became NaN: `max(x)` of an array gave
    [1, nan, nan]), else the list."""
    if isinstance(x, np.ndarray) and cts is not None:
        out = np.zeros(x.shape, dtype=np.result_type(x.dtype, float))
        for i, g in enumerate(cts):
            if g is not None:
                out[i] = g
        return out
    return cts


def _is_seq(x) -> bool:
    return type(x) is list or type(x) is tuple


def _split(dy, parts) -> list:
    """Cut the cotangent of a concatenation into one list per concatenated sequence."""
    pieces, pos = [], 0
    for part in parts:
        pieces.append(dy[pos:pos + len(part)])
        pos += len(part)
    return pieces


def sum_rrule(iterable, *start, **kw):
    """sum(iterable[, start]); a sum of lists/tuples (a concatenation) splits the cotangent back. `start=`
    by keyword gets its cotangent as a keyword argument's (the registry's trailing dict)."""
    if kw:
        y, back = sum_rrule(iterable, kw.pop("start"), **kw)

        def sum_start_pullback(dy):
            cts = back(dy)
            return (cts[0], {"start": cts[1]})
        return y, sum_start_pullback
    items = list(iterable)
    y = builtins.sum(items, *start)
    parts = list(start) + items  # the order in which sum adds them

    def sum_pullback(dy):
        if dy is None:
            cts = [None] * len(parts)
        elif _is_seq(y):
            cts = _split(list(dy), parts)
        else:
            cts = [fit(dy, x) for x in parts]
        k = len(start)
        if _dual_array(iterable) and dy is not None:  # forward over reverse: a dual array's is one too
            return (np.stack(cts[k:]),) + tuple(cts[:k])
        return (_gathered(iterable, cts[k:]),) + tuple(cts[:k])
    return y, sum_pullback


def sum_frule(tangents, iterable, *start, **kw):
    if kw:  # `start=` by keyword: forward mode hands keyword arguments without tangents (constants) here
        start, tangents = (kw["start"],), (tuple(tangents) + (None,))[:1] + (None,)
    items = list(iterable)
    y = builtins.sum(items, *start)
    ts = list(tangents[1:1 + len(start)]) + ([None] * len(items) if tangents[0] is None else list(tangents[0]))
    parts = list(start) + items
    if _is_seq(y):
        return y, [e for x, t in zip(parts, ts) for e in ([None] * len(x) if t is None else list(t))]
    dy = None
    for t in ts:
        dy = generic.add(dy, t)
    return y, dy


def sorted_rrule(iterable, *, key=None, reverse=False):
    """sorted() is a permutation: each element's cotangent is the cotangent of its sorted position."""
    items = list(iterable)
    order = builtins.sorted(range(len(items)), key=lambda i: items[i] if key is None else key(items[i]),
                            reverse=reverse)  # stable like sorted(items), so the same permutation

    def sorted_pullback(dy):
        cts = [None] * len(items)
        if dy is not None and parting_items([items[i] for i in order], list(dy)) and not note_tie("sorted", None):
            return (Refused(TiedApart("sorted")),)  # equal items read with different weights (`ties`)
        if dy is not None:
            for position, i in enumerate(order):
                cts[i] = dy[position]
        return (_gathered(iterable, cts),)
    return [items[i] for i in order], sorted_pullback


def sorted_frule(tangents, iterable, *, key=None, reverse=False):
    items = list(iterable)
    ts = [None] * len(items) if tangents[0] is None else list(tangents[0])
    order = builtins.sorted(range(len(items)), key=lambda i: items[i] if key is None else key(items[i]),
                            reverse=reverse)
    if parting_items([items[i] for i in order], [ts[i] for i in order]):
        raise TiedApart("sorted").error()  # equal items moving apart (`ties`)
    return [items[i] for i in order], [ts[i] for i in order]


def builtin_pow_adjoint(dy, y, x, n, *mod):
    """pow(x, n) as x ** n; the three-argument (modular, integer) form has no derivative."""
    if mod:
        return None, None, None
    return pow_adjoint(dy, y, x, n)


def builtin_pow_frule(tangents, x, n, *mod):
    if mod:
        return builtins.pow(x, n, *mod), None
    return pow_frule(tangents[:2], x, n)


def divmod_adjoint(dy, y, a, b):
    """divmod(a, b) = (a // b, a - b * (a // b)): only the remainder carries a derivative."""
    dr = None if dy is None else dy[1]
    if dr is None:
        return None, None
    return fit(dr, a), fit(-dr * floor_quotient(a, b), b)


def divmod_frule(tangents, a, b):
    y = builtins.divmod(a, b)
    ta, tb = tangents
    dr = generic.add(ta, None if tb is None else -tb * floor_quotient(a, b))
    return y, (None, dr)


def _numeric(x) -> bool:
    return not isinstance(x, (str, bytes, bytearray))


def float_adjoint(dy, y, x=0.0):
    """float(x) is the identity on real numbers; a one-element array gets its cotangent back in shape."""
    if dy is None or not _numeric(x):
        return (None,)
    if type(dy) is Refused:  # (no derivative known: still refusing at a differentiated input)
        return (dy,)
    if isinstance(x, np.ndarray):
        return (np.full(x.shape, dy, dtype=np.result_type(x.dtype, float)),)
    return (project(dy, x),)


def float_frule(tangents, x=0.0):
    y = float(x)
    t = tangents[0] if tangents else None
    if t is None or not _numeric(x):
        return y, None
    return y, project(t.item() if isinstance(t, np.ndarray) else t, y)


def complex_adjoint(dy, y, real=0, imag=0):
    """complex(a, b) = a + i b: da = dy, db = dy * conj(i) (each projected onto its argument's type)."""
    if dy is None or not _numeric(real):
        return (None, None)
    return project(dy, real), project(dy * conj(1j), imag)


def complex_frule(tangents, real=0, imag=0):
    y = complex(real, imag) if _numeric(real) else complex(real)
    ta = tangents[0] if tangents else None
    tb = tangents[1] if len(tangents) > 1 else None
    if not _numeric(real):
        return y, None
    return y, generic.add(ta, None if tb is None else 1j * tb)


def _positional_adjoint(adjoint):
    """Trim a rule's cotangents to the number of positional arguments actually passed."""
    def trimmed(dy, y, *args, **kwargs):
        return adjoint(dy, y, *args, **kwargs)[:len(args)]
    trimmed.__name__ = trimmed.__qualname__ = adjoint.__name__
    return trimmed


registry.adjoint(builtins.abs, kind="elementwise")(abs_adjoint)
registry.frule(builtins.abs)(abs_frule)
registry.rrule(builtins.max, kind="reduction")(max_rrule)
registry.frule(builtins.max)(max_frule)
registry.rrule(builtins.min, kind="reduction")(min_rrule)
registry.frule(builtins.min)(min_frule)
registry.rrule(builtins.sorted, kind="permutation")(sorted_rrule)
registry.frule(builtins.sorted)(sorted_frule)
registry.rrule(builtins.sum, kind="reduction")(sum_rrule)
registry.frule(builtins.sum)(sum_frule)
registry.adjoint(builtins.pow, kind="elementwise")(_positional_adjoint(builtin_pow_adjoint))
registry.frule(builtins.pow)(builtin_pow_frule)
registry.adjoint(builtins.divmod, kind="elementwise")(divmod_adjoint)
registry.frule(builtins.divmod)(divmod_frule)
registry.adjoint(builtins.float, kind="linear")(_positional_adjoint(float_adjoint))
registry.frule(builtins.float)(float_frule)
# the conversion called as the method it is (`v.__float__()`, `np.float64(x).__float__()`): float(v)'s rules
for _key in ((float, "__float__"), (np.generic, "__float__"), (np.ndarray, "__float__")):
    registry.adjoint(_key, kind="linear")(float_adjoint)
    registry.frule(_key)(float_frule)
registry.adjoint(builtins.complex, kind="linear")(_positional_adjoint(complex_adjoint))
registry.frule(builtins.complex)(complex_frule)

for _fn in (builtins.sum, builtins.min, builtins.max, builtins.sorted):  # iterate their first argument
    registry.set(_fn, iterates=True)

registry.nondifferentiable(
    builtins.round, builtins.int, builtins.len, builtins.bool, builtins.hash, builtins.id,
    builtins.isinstance, builtins.issubclass, builtins.callable, builtins.ord, builtins.chr,
    builtins.bin, builtins.oct, builtins.hex, builtins.format, builtins.repr, builtins.str,
    builtins.any, builtins.all, builtins.range,
    builtins.dir,  # (the names of an object's attributes: gstools' models list theirs, pkF)
)

# a counter's next number (`next(itertools.count(1))` numbering objects: a count of differentiated numbers is
# refused where it is made, `itertools.count` having no rule)
registry.nondifferentiable((itertools.count, "__next__"))

# regular expressions: text in, text and positions out (a differentiated number's text parsed back, from what a
# match cut out of it too, is refused where float() or int() parse it: `lowered.runtime.parsed`)
registry.nondifferentiable(*((re.Pattern, _n) for _n in ("match", "search", "fullmatch", "findall", "finditer",
                                                        "split", "sub", "subn")),
                           *((re.Match, _n) for _n in ("group", "groups", "groupdict", "start", "end", "span",
                                                      "expand", "__getitem__")),
                           # (the module's functions and its Python compiler: primitives, never code to
                           # differentiate: reverse mode's adjoint of `_optimize_charset` crashed, pkB)
                           re.compile, re.match, re.search, re.fullmatch, re.findall, re.finditer, re.split, re.sub,
                           re.subn, re.escape, re._compile)

# sparsity (contexts/rules/sparsity_specs.py)
registry.sparsity(NONLINEAR, builtins.abs)  # |z| of a complex z is smooth (real x: a superset)
registry.sparsity(NONLINEAR, builtins.pow)
registry.sparsity(CONCRETE, builtins.int, builtins.round, builtins.bool)
registry.sparsity(Custom("rules.py: a tracer, or an iterable of values"), builtins.max, builtins.min,
                  builtins.sum)
registry.sparsity(Custom("rules.py: float(t) keeps the tracer"), builtins.float, builtins.complex)


# int() of a differentiated float that is a nonzero integer: int() jumps there (no derivative), and code
# that takes a float's digits apart (`m, e = math.frexp(x)`, then `int(m * 2**53)`, as mpmath's
# `from_float` does) would otherwise lose the derivative silently: the integer carries the whole value.
# Where the tangent is known (forward mode's duals) every such jump with a derivative is refused; where it
# is not (reverse mode, a statically active argument) only a float of magnitude 2**52 or more, which is
# always an integer, so that int() converts it exactly: a workspace size computed as a float from
# differentiated inputs (LAPACK's `lwork`) is a small integer with no derivative.
_EXACT = 2.0 ** 52


class IntegerJump(OverdubError, ValueError):
    """int() met a differentiated value exactly at one of its jumps."""


def _user_line() -> str | None:
    """`function (file:line)` of the innermost frame outside the engine (the code that called int())."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_ENGINE):
        frame = frame.f_back
    return None if frame is None else f"{frame.f_code.co_qualname} ({frame.f_code.co_filename}:{frame.f_lineno})"


_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_ENGINE = (os.path.join(_ROOT, "contexts") + os.sep, os.path.join(_ROOT, "overdub") + os.sep)


def _check_int(x, known: bool = False):
    """Refuse int(x) of a differentiated x at a jump: any nonzero integer when x is known to carry a
    derivative (`known`), else one of magnitude 2**52 or more."""
    while type(x).__name__ == "Dual":  # (forward over forward: the inner derivative's value, a dual of the outer)
        x = x.primal
    if not isinstance(x, (float, np.floating)) or x == 0 or not float(x).is_integer() or (
            not known and abs(x) < _EXACT):
        return
    raise IntegerJump(
        f"int() of a differentiated float that is exactly an integer ({float(x)!r}): int() jumps there, "
        "so its derivative does not exist, and the integer would carry the value without its derivative "
        "(a float's digits taken apart, as `int(math.frexp(x)[0] * 2**53)`, mpmath's conversion of floats)",
        fix="keep the value a float (`math.floor`/`np.trunc` keep the type), or treat the function as a "
            "primitive with a rule (`@contexts.custom_adjoint`)", where=_user_line())


def _int_impl(x=0, *base):
    _check_int(x)
    return int(x, *base)


def _int_frule(tangents, x=0, *base):
    t = tangents[0] if tangents else None
    if t is not None and np.any(t):
        _check_int(x, known=True)
    return int(x, *base), None


registry.set(builtins.int, impl=_int_impl, frule=_int_frule)


# -- the builtins as Python code, for objects of other classes (see operator.py's `py_add`) --------------

def py_sum(iterable, start=0):
    for item in iterable:
        start = start + item
        if type(start) is np.ndarray and start.dtype == object:
            # (an array's partial sum plus an object: numpy applied its method to each element, in C, unseen:
            # reverse mode's gradient was 0)
            raise ObjectArrayMade(f"sum() added a {type(item).__name__}, an object of a class of its own, to an "
                                  "array: numpy applied its method to each element (an object array), which no "
                                  "mode follows", fix="add the objects before the arrays, or sum the elements yourself")
    return start


class ObjectArrayMade(OverdubError):
    """An operator made an object array of an object's method applied to each element of an array."""


def py_reduce(function, iterable, *initial):
    """functools.reduce written in Python: forward mode runs it as code where the items are objects of classes
    of their own, so `reduce(operator.add, objs)` calls their `__add__` through its context (called from C, it
    ran natively on the duals the objects hold)."""
    it = iter(iterable)
    if initial:
        value = initial[0]
    else:
        try:
            value = next(it)
        except StopIteration:
            raise TypeError("reduce() of empty iterable with no initial value") from None
    for element in it:
        value = function(value, element)
    return value


def py_abs(x):
    return type(x).__abs__(x)


def py_float(x=0.0):
    y = type(x).__float__(x)
    if type(y) is not float and not (isinstance(y, float) or type(y).__name__ == "Dual"):
        raise TypeError(f"{type(x).__name__}.__float__ returned non-float (type {type(y).__name__})")
    return y


def py_complex(real=0, imag=0):
    """complex(obj[, imag]) of an object whose class converts it by its own Python `__complex__` (or
    `__float__`)."""
    method = getattr(type(real), "__complex__", None)
    z = method(real) if method is not None else complex(py_float(real))
    return z if type(imag) is int and imag == 0 else z + imag * 1j


def getitem_iteration(obj):
    """Python's older sequence protocol, `for v in obj` of a class defining `__getitem__` but no
    `__iter__` (`obj[0]`, `obj[1]`, ... until IndexError), written in Python: the engines run it as the
    user's code, so each item's dependence on the object is followed (called from C, `iter(obj)`
    computes the items out of sight: reverse mode took them for constants)."""
    i = 0
    while True:
        try:
            v = obj[i]
        except IndexError:
            return
        yield v
        i += 1


def py_pow(base, exp, mod=None):
    return base ** exp if mod is None else type(base).__pow__(base, exp, mod)


def py_divmod(a, b):
    """divmod as Python calls it: a's `__divmod__`, else b's `__rdivmod__` (a class's own code)."""
    method = getattr(type(a), "__divmod__", None)
    y = NotImplemented if method is None else method(a, b)
    if y is NotImplemented:
        method = getattr(type(b), "__rdivmod__", None)
        y = NotImplemented if method is None else method(b, a)
    if y is NotImplemented:
        raise TypeError(f"unsupported operand type(s) for divmod(): '{type(a).__name__}' and '{type(b).__name__}'")
    return y


def py_round(number, ndigits=None):
    """round as Python calls it: the class's `__round__` (an object's own: forallpeople's `round(force, 2)`
    sets the precision it prints with, its value unchanged; taken for a staircase, 0 for 3)."""
    method = type(number).__round__
    return method(number) if ndigits is None else method(number, ndigits)


for _fn, _form in [(builtins.sum, py_sum), (builtins.abs, py_abs), (builtins.float, py_float),
                   (builtins.pow, py_pow), (builtins.complex, py_complex), (builtins.divmod, py_divmod),
                   (builtins.round, py_round)]:
    registry.set(_fn, python=_form)
dispatches_on_numbers(builtins.abs, builtins.pow)


def slot_of(cls: type, name):
    """The slot (member descriptor) named `name` of class `cls` or of its bases, or None."""
    if type(name) is not str:
        return None
    for klass in cls.__mro__:
        desc = klass.__dict__.get(name)
        if desc is not None:
            return desc if type(desc) is types.MemberDescriptorType else None
    return None


def store_slot(obj, name, value):
    """The plain store of `value` into obj's slot `name` (past the class's own `__setattr__`): a primitive,
    which reverse mode records as the store of a field (`contexts.ad.primitives`)."""
    slot_of(type(obj), name).__set__(obj, value)


def store_constant(obj, name, value):
    """`object.__setattr__(obj, name, value)` of a value that carries no derivative (`containers._carries_derivative`),
    whatever stores it (a data descriptor of C): a non-differentiable primitive."""
    object.__setattr__(obj, name, value)


def py_object_setattr(obj, name, value):
    """`object.__setattr__(obj, name, value)` (a class's own `__setattr__` ending in the plain store) on an
    object with an instance dict: the store into that dict, which reverse mode records as a field; into a
    slot (xarray's classes): `store_slot`, recorded as a field too. Through another data descriptor of
    the class it is refused (the descriptor decides where the value goes)."""
    if slot_of(type(obj), name) is not None:
        store_slot(obj, name, value)
        return
    prop = getattr(type(obj), name, None) if type(name) is str else None
    if (isinstance(prop, property) and type(prop).__set__ is property.__set__
            and type(prop.fset) is types.FunctionType):  # its setter, as Python calls it (a subclass's too)
        prop.fset(obj, value)
        return
    if name in ("__dict__", "__class__"):  # (not a field: the store that replaces them, as Python makes it)
        setattr(obj, name, value)
        return
    if not hasattr(obj, "__dict__") or hasattr(type(getattr(type(obj), name, None)), "__set__"):  # (run as code:
        # its read of the `__dict__` is reverse mode's, `getattr_`)
        if not _carries_derivative(value):  # (labels through a data descriptor: pandas'
            # `out.columns = self.columns` in every DataFrame's arithmetic, `df.columns = [c.lower() for c in
            # df.columns]`, set by the Cython `AxisProperty`; strings and integers carry no derivative to follow)
            store_constant(obj, name, value)
            return
        raise NoRuleError(f"object.__setattr__ of {type(obj).__name__}.{name} (a slot or a data descriptor) "
                          "with a differentiated value",
                          fix="store it with a plain `self.name = value`, or into the instance dict")
    obj.__dict__[name] = value


registry.set(object.__setattr__, python=py_object_setattr)
registry.nondifferentiable(store_constant)


def py_tuple_getitem(t, i):
    """`tuple.__getitem__(t, i)` on a tuple subclass (its `__getattr__` reading a field by position:
    pygeodesy's named tuples): the item read `t[i]`; refused past a `__getitem__` of the subclass's own."""
    if type(t).__getitem__ is not tuple.__getitem__:
        raise NoRuleError(f"tuple.__getitem__ past {type(t).__name__}'s own __getitem__, on a differentiated "
                          "tuple", fix="read the item with `t[i]`, or give the function a rule")
    return t[i]


registry.set(tuple.__getitem__, python=py_tuple_getitem)


def py_object_getattribute(obj, name):
    """`object.__getattribute__(obj, name)`: the instance dict itself, a field in it, or (for a class that
    does not override attribute access) the plain read, each recorded as reverse mode records reads; other
    reads of a differentiated object (past an overriding `__getattribute__`) are refused."""
    if name == "__dict__":
        return obj.__dict__
    d = getattr(obj, "__dict__", None)  # (run as code: the read is reverse mode's)
    descriptor = hasattr(type(getattr(type(obj), name, None)), "__set__")
    if type(d) is dict and name in d and not descriptor:
        return d[name]
    cls = type(obj)
    if cls.__getattribute__ is object.__getattribute__ and getattr(cls, "__getattr__", None) is None:
        return getattr(obj, name)
    if cls.__getattribute__ is object.__getattribute__ and type(name) is str:
        # a class with a `__getattr__` of its own: the plain read where the class or the object has the name
        # (no fallback is asked then), Python's AttributeError where neither has it (pydantic's models reading
        # `object.__getattribute__(self, '__pydantic_extra__')` in their `__getattr__`: pkG's chemthermo)
        if any(name in vars(k) for k in cls.__mro__):
            return getattr(obj, name)
        raise AttributeError(f"'{cls.__name__}' object has no attribute '{name}'")
    if type(name) is str:  # (past a class's own `__getattribute__`, PyDMD's PrePostProcessingDMD: object's
        # lookup, written out -- the class's function, property or plain value, the instance's value above)
        attr = next((vars(k)[name] for k in cls.__mro__ if name in vars(k)), _MISSING)
        kind = type(attr)
        if kind is property:
            if attr.fget is None:
                raise AttributeError(f"property '{name}' of '{cls.__name__}' object has no getter")
            return attr.fget(obj)  # (its getter run as code)
        if kind is types.FunctionType:
            return types.MethodType(attr, obj)
        if kind is staticmethod:
            return attr.__func__
        if kind is classmethod:
            return types.MethodType(attr.__func__, cls)
        if attr is _MISSING:
            raise AttributeError(f"'{cls.__name__}' object has no attribute '{name}'")
        if not hasattr(kind, "__get__"):
            return attr  # (a plain value the class holds)
        if kind in _C_METHODS or kind in _C_FIELDS and name in _METADATA:
            # a C class's method, bound (its calls are calls of C functions: their rules, or refused), or an
            # array's metadata, no value of it (numpy's recarray reading `self.getfield`, `.dtype`: pyGMM's
            # coefficient tables)
            return c_attribute(attr, obj, cls)
    raise NoRuleError(f"object.__getattribute__ of {cls.__name__}.{name}, past the class's own attribute "
                      "access, on a differentiated object", fix="read it with a plain `obj.name`")


_MISSING = object()


def c_attribute(attr, obj, cls):
    """`attr.__get__(obj, cls)` of a C class's method or an array's metadata (`py_object_getattribute`): no
    value of obj's, a primitive without a derivative (the bound method's calls are recorded as calls)."""
    return attr.__get__(obj, cls)


registry.nondifferentiable(c_attribute)
_C_METHODS = (types.MethodDescriptorType, types.WrapperDescriptorType, types.ClassMethodDescriptorType)
_C_FIELDS = (types.GetSetDescriptorType, types.MemberDescriptorType)
_METADATA = frozenset({"dtype", "shape", "ndim", "size", "itemsize", "nbytes", "strides", "flags"})
registry.set(object.__getattribute__, python=py_object_getattribute)


# -- any() and all(): they stop at the first decisive item -------------------------------------------------

def py_any(iterable):
    """`any(it)` as the Python loop it is (`Rule.stand_in`): items drawn only until the first true one (a
    rule drawing them all let a predicate recording its calls through `map`, or an iterator shared with
    the code after, see every item: another value)."""
    for x in iterable:
        if x:
            return True
    return False


def py_all(iterable):
    for x in iterable:
        if not x:
            return False
    return True


def py_is_integer(v):
    """`v.is_integer()` as the test it is (`Rule.stand_in`): an equality, checked as the engines check one
    where the value is whole and moves."""
    return math.isfinite(v) and v == math.floor(v)


registry.set((float, "is_integer"), stand_in=py_is_integer)


def wrapper_get(descriptor, obj, owner=None):
    """`object.__setattr__.__get__(obj)` (a C slot's descriptor bound to an object: attrs' frozen classes keep
    one as their setter), or a Python function's `__get__`, as the bound method it is, whose calls the engines see with the object first
    (`Rule.stand_in`: C's own binding hid the object's cotangent)."""
    if obj is None:
        return descriptor
    return types.MethodType(descriptor, obj)


registry.set((types.WrapperDescriptorType, "__get__"), stand_in=wrapper_get)
# a Python function bound by hand (`self.func.__get__(obj, cls)`: functools.partialmethod's and
# singledispatchmethod's `__get__`): the bound method it is, whose cotangent is the object's
registry.set((types.FunctionType, "__get__"), stand_in=wrapper_get)
registry.set(builtins.any, stand_in=py_any)
registry.set(builtins.all, stand_in=py_all)


# -- context variables: numpy's error state (`np.errstate` as a decorator sets it around numpy.ma's `__setitem__`)
_CAPSULE = type(__import__("datetime").datetime_CAPI)
_HELD_CONSTANT = (type(None), bool, int, str, bytes, _CAPSULE)


def _kept_refused(var, value) -> NoRuleError:
    return NoRuleError(f"the derivative of a value of {type(value).__name__} kept in a context variable "
                       f"({var.name!r}) is not followed: it would not come back with `get()`",
                       fix="pass the value as an argument instead")


def _context_var_set(var, value):
    """`var.set(value)` of a value that carries no derivative (numpy's error state, a C capsule; a flag, a
    name): run as is. A value that may carry one is refused, nothing set: it would come back by `var.get()`
    (or to C code reading the variable) with no derivative."""
    if type(value) not in _HELD_CONSTANT:
        raise _kept_refused(var, value)
    return var.set(value), _context_var_back


def _context_var_set_frule(tangents, var, value):
    """Forward mode's: refused before the value is set where it may carry a tangent (set, a dual was left
    in the variable after the refusal)."""
    if type(value) not in _HELD_CONSTANT:
        raise _kept_refused(var, value)
    return var.set(value), None


def _context_var_back(dy):
    return None, None


def _context_var_reset(var, token):
    return var.reset(token), _context_var_back


registry.rrule((__import__("contextvars").ContextVar, "set"))(_context_var_set)
registry.frule((__import__("contextvars").ContextVar, "set"))(_context_var_set_frule)
registry.rrule((__import__("contextvars").ContextVar, "reset"))(_context_var_reset)
