"""The runtime of forward mode's tangent twins: the helpers their generated code calls (`__fd_call__` is
`fd_call`, ...), and `tangent_jvp`, which builds a twin (`tangent.tangent_twin`) and runs it.

Invariant: a tangent is a plain value (a number, an array, a list, tuple or dict of them) or the twins'
zero, 0; a value the twin cannot follow raises NotTransformable, and the caller's derivative runs on
duals instead (`api.py`).
"""

from __future__ import annotations

import builtins
import decimal
import fractions
import functools
import inspect
import numbers
import struct
import sys
import threading
import types
import weakref

import operator

import numpy as np

from overdub.passes import bound_self

import overdub
from overdub.passes import OwnedEntries, of_a_module, on_clear
from overdub.passes import depth as _depth
from overdub.errors import OverdubError, lost_work, mark_lost, not_swallowed
from overdub.ops import Unswallowing

from ..lowered.runtime import (HELPERS as LOWERING_HELPERS, _INT_CASTS, int_cast_jump, JUMP_FUNCTIONS, ORDER_METHODS, axis_of, jump_guard, jump_operands, asks_a_generator, ORDER_OPS, STAIRS, EagerIterationError, addresses,
                               closing_in, converged, eager, eager_items, endless, own_test_method, parsed, remembered_text,
                               staircase_fd, staircase_text, stair_method, stairs_fd, _STAIR_SLOTS, divisor_jump, text, users_class, _TEXTS, parse_check)
from ..rules.containers import refuse_differentiated_key as key_lookup, subscripts_a_class
from ..rules.numpy.creation import python_ufunc_method
from ..rules.numpy.reductions import UFUNC_METHOD_OUT
from ..rules.numpy.inplace import refuse_overlapping_out
from ..rules.frames import note_transformed, outside_engine
from ..lowered.cuts import power_on_cut
from ..rules.operator import pow_dn, pow_dx, scaled_duration
from ..rules.generic import integral
from ..rules.registry import by_position, key_of, own_method_form, own_operators, registry
from ..rules import leaves as _leaves
from ..rules.leaves import ARRAY_TYPES, ArrayLeaf, leaf_cells
from ..rules.ties import SINGULAR_AT, singular_still
from ..rules.numpy._util import masked_entries
from .arrays import PlainArrayWrite, no_rule, out_position, raise_singular, write_out
from .dual import Dual, DualConversionError, Tag, _own, primal
from .holds import dual_free, splittable
from .tangent import _NONDIFF_ATTRIBUTES, LIST_MUTATORS, NotTransformable, tangent_twin

__all__ = ["tangent_jvp", "fd_call", "fd_mcall", "make_twin", "uncached"]

_FUNCTION = types.FunctionType
_RULES = registry.rules  # (a Python function's key is itself: `key_of`)
_MODULE = types.ModuleType
_SCALARS = frozenset({int, float, complex, np.float64, np.float32, np.int64, np.int32, np.complex128, np.bool_})


class _Moved(threading.local):
    """The tangents a tangent twin hands back for its parameters (None: nothing), read by its caller right
    after the call; per thread. `given`: the call's (arguments, their tangents), to tell a tangent handed
    back unchanged, and an argument whose name the call's own statement rebinds (`x = f(x)`)."""
    args = None
    given = ((), ())


_MOVED = _Moved()


def fd_args_back(positions: tuple, values: tuple) -> tuple:
    """The tangents handed back for the arguments at `positions` (None where there is none, or where the
    value is not an array, list or dict: numbers are never changed in place), taking them."""
    moved, _MOVED.args = _MOVED.args, None
    for i, t in enumerate(moved):
        if i not in positions and not _no_change(t):
            raise NotTransformable("a call changed an argument the caller does not follow (a global, a keyword)")
    args, tans = _MOVED.given
    out = []
    for i, v in zip(positions, values):
        given = args[i] if i < len(args) else v
        t = (moved[i] if i < len(moved) and (type(given) in (np.ndarray, list, dict)
                                             or isinstance(given, (np.ndarray, list, dict))) else None)
        if t is not None and i < len(tans) and t is tans[i]:
            t = None  # handed back as it was given: unchanged (a change makes a new tangent)
        if t is not None and v is not given:
            # `x = f(x)`: the name now holds the result, not the argument f changed; the tangent is the
            # argument's, whose other names this twin does not know: duals follow the memory
            raise NotTransformable("a call changed an argument whose name its statement rebinds")
        out.append(t)
    return tuple(out)


def _no_change(t) -> bool:
    """A handed-back tangent that leaves an unfollowed argument as the caller sees it: none, or zeros."""
    return _all_zero(t) or (isinstance(t, np.ndarray) and not t.any())


def make_twin(fn, twin_code, cells):
    """The function of twin_code for fn: fn's globals, defaults and cells, and the helpers' `cells`."""
    own = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    cl = tuple(own[v] if v in own else cells[v] for v in twin_code.co_freevars)
    twin = types.FunctionType(twin_code, fn.__globals__, fn.__name__, fn.__defaults__, cl or None)
    twin.__kwdefaults__ = fn.__kwdefaults__
    return twin


_TANGENT_KINDS = (numbers.Number, np.ndarray, np.generic, list, tuple, dict, Dual)
_TANGENT_TYPES = frozenset({float, int, complex, np.ndarray, np.float64, list, tuple, dict, Dual})  # (at once)


def _zero(t) -> bool:
    """The twins' zero tangent: 0, None, or a scalar zero it became by arithmetic (`0 * 0.346` is 0.0),
    which stands for zeros of any shape as 0 does (never a tangent to index or transpose)."""
    return t is None or (type(t) in _SCALARS and t == 0)


def _nz(dy):
    """A rule's tangent with its Nones (the registry's zero) made the twins' zero, 0."""
    if dy is None:
        return 0
    if type(dy) is tuple or type(dy) is list:
        return type(dy)(_nz(t) for t in dy)
    return dy


def _rate_zero(dy, tans):
    """`_nz(dy)`, but a float zero where dy is none and some argument's tangent was a float zero: a rate of
    exactly 0 computed from the inputs (`min(w, 0) ** 2` at 0), which `lowered.runtime._still_at` tells from
    a constant's none. Made the int 0 by a rule (`np.maximum` of it and 0), a test of the result took it
    for a constant's: `1.0 if np.maximum(min(w, 0) ** 2, 0) > 0 else 0.0` at 0 gave 0, a jump's side."""
    if dy is None and any(type(t) is not int and t is not None and _zero(t) for t in tans):
        return 0.0
    return _nz(dy)


def _registry_zeros(t, a):
    """A twin's tangent of argument a for an frule: a zero (0) is the registry's None; inside a list or
    tuple (the tangent of `[W, v]` for np.concatenate) a zero of an array item is zeros of its shape."""
    if _zero(t):
        return None
    if (type(t) is list or type(t) is tuple) and (type(a) is list or type(a) is tuple) and len(a) == len(t):
        return type(t)(_zeros_of(e, d) if _zero(d) else _registry_zeros(d, e) for d, e in zip(t, a))
    return t


def fd_callee(t) -> None:
    """A callee's tangent t (it carries a derivative: an object a differentiated value made): the call is
    the duals', which carry the callee's too (the twin's call would drop it: 0)."""
    if not _zero(t):
        raise NotTransformable("a call of a value that carries a derivative")


def _foreign(t) -> bool:
    """t is no tangent the twins follow (numbers, arrays, lists, tuples, dicts of them) but an object of a
    class of its own: `a * obj` made it by obj's `__rmul__` (`da * obj`), where the object's own indexing,
    attributes and methods need not be linear in it (a `__getitem__` of k**3: the tangent came out wrong)."""
    return not isinstance(t, _TANGENT_KINDS) and not (ARRAY_TYPES and isinstance(t, ArrayLeaf)) or bool(
        _leaves.HOSTED and isinstance(t, _leaves.HOSTED))  # (a torch tensor's: the duals refuse it by name)


def _zeros_of(e, d):
    """Zeros shaped like an item e of a list argument (an array, or a nested list of numbers such as the
    `[0.0]` of `np.concatenate([[0.0], v])`); d (the twins' 0) for a scalar or a ragged item."""
    if ARRAY_TYPES and isinstance(e, ArrayLeaf):  # a dask array's: dask's zeros, lazily
        return np.zeros_like(e, dtype=np.result_type(e.dtype, float))
    if type(e) is np.ndarray or type(e) is list or type(e) is tuple:
        try:
            arr = np.asarray(e)
        except ValueError:
            return d
        if arr.dtype != object or type(e) is np.ndarray:
            return np.zeros(arr.shape, np.result_type(arr.dtype, float))
    return d


_NUMBERS = frozenset({float, int, bool, complex, np.float64, np.float32, np.int64, np.complex128})


def _operand(v, masked: bool = False) -> None:
    """v, an operand of an operator on a differentiated value, is a number, a plain array or a sequence (whose
    operators are numpy's and Python's); an object of a class of its own (`C() + x` runs C's `__add__`,
    which need not add: the twin's `t` came out for C's 2x) makes the twin give up: duals run C's code.
    `masked`: `+`, `-`, `*`, which take a numpy.ma masked array with no masked entry too (they mask nothing)."""
    tv = type(v)
    if _leaves.HOSTED and isinstance(v, _leaves.HOSTED):  # (a torch tensor: the duals refuse it by name)
        raise NotTransformable(f"an operator on a {tv.__name__}")
    if tv in _NUMBERS or tv is np.ndarray or tv is list or tv is tuple or tv is Dual or isinstance(v, np.generic) or (
            ARRAY_TYPES and isinstance(v, ArrayLeaf)):
        return
    if masked and tv is _MASKED and not masked_entries(v):
        # (a numpy.ma masked array with no masked entry, pykalman's observations: `+`, `-`, `*` compute the data's,
        # whose tangent the twin's is; its `/`, `**` mask where numpy's would give inf or nan: on duals)
        return
    raise NotTransformable(f"an operator on a {tv.__name__} (its class's own)")


_MASKED = np.ma.MaskedArray


def fd_bc(t, other):
    """The tangent t of `a + other` (other inactive) broadcast to the result's shape: a scalar or smaller
    array added to a larger constant array has a tangent in every entry of the result."""
    if type(other) not in _NUMBERS:
        _operand(other, True)
    shape = getattr(other, "shape", None)
    if not shape or not isinstance(t, (np.ndarray, np.generic, float, int, complex)):
        return t
    full = np.broadcast_shapes(np.shape(t), shape)
    return t if full == np.shape(t) else np.broadcast_to(t, full).copy()


def fd_star(items: tuple, t) -> tuple:
    """The tangents of the items of `*seq` in a call (items: tuple(seq)); t: the tangent of seq."""
    if _zero(t):
        return (0,) * len(items)
    if type(t) not in (list, tuple, np.ndarray) or len(t) != len(items):
        raise NotTransformable("a starred argument whose items' tangents are not known")
    return tuple(t)


def _by_frule(rule, args, tans, kw):
    """(y, tangent) through a rule's frule (the registry's None zero in, the twins' 0 zero out). An
    `out=` of a function other than a ufunc is written after the fact: such frules compute new values
    (passing it on would write the tangent into it too)."""
    if isinstance(rule.fn, np.ufunc) and len(args) > rule.fn.nin:  # `np.exp(x, buf)`: duals write buf
        raise NotTransformable("an output array passed by position")
    if not kw and len(args) <= 2 and rule.writes is None and all(type(a) is float for a in args):
        return _by_frule_on_floats(rule, args, tans, kw)
    if any(type(a) is np.matrix for a in args):  # (its * is a matrix product: the duals refuse it)
        raise NotTransformable("a np.matrix")
    for a in args:  # (an ndarray subclass intercepting numpy by its own code, a unit array scaling what it
        if type(a) is not np.ndarray and isinstance(a, np.ndarray) and (  # holds: the rule's tangent formula
                type(getattr(type(a), "__array_ufunc__", None)) is types.FunctionType  # missed its scaling)
                or type(getattr(type(a), "__array_function__", None)) is types.FunctionType):
            raise NotTransformable(f"a {type(a).__name__} (its own __array_ufunc__)")
    if rule.fn is np.nan_to_num and not (args[1] if len(args) > 1 else kw.get("copy", True)):
        raise NotTransformable("np.nan_to_num in place")  # (the duals write it: `arrays._nan_to_num_in_place`)
    out = kw.get("out") if kw else None
    if out is not None and any(isinstance(o, np.ndarray) and type(o) is not np.ndarray
                               for o in (out if type(out) is tuple else (out,))):
        raise NotTransformable("an out= array of an ndarray subclass")  # (the duals refuse it by name)
    if len(args) > 2 and not isinstance(rule.fn, np.ufunc):  # an output given by position: duals write it
        fn = getattr(np, rule.fn[1], None) if isinstance(rule.fn, tuple) and rule.fn[0] is np.ndarray else rule.fn
        pos = out_position(fn) if type(fn) is type(np.sum) else -1
        if isinstance(rule.fn, tuple) and rule.fn[0] is np.ufunc:  # `np.add.accumulate(a, 0, None, a)`, the
            pos = UFUNC_METHOD_OUT.get(rule.fn[1], -2) + 1            # ufunc first (gen19 W4: its write lost)
        if len(args) > pos >= 0 and args[pos] is not None:
            raise NotTransformable("an output array passed by position")
    tangents = tuple(_registry_zeros(t, a) for t, a in zip(tans, args))
    if isinstance(rule.fn, np.ufunc) and any(type(t) is list or type(t) is tuple for t in tangents):
        # (`np.add([x], [x * x])`: a list's tangent is a list, which the rule's `+` would concatenate: as the
        # array numpy makes of the list, gen18 C4)
        tangents = tuple(_as_array_tangent(t, a) for t, a in zip(tangents, args))
    if rule.writes is not None and rule.inplace is not None:
        # a C kernel writing into an argument: its frule writes the value and returns that argument's
        # tangent after the call, handed back to the caller as a callee's change in place is
        y, dw = rule.frule(tangents, *args, **kw)
        positions = (rule.writes,) + tuple(rule.meta.get("writes_also", ()))
        dws = tuple(dw) if len(positions) > 1 and dw is not None else (dw,) * len(positions)
        moved = [None] * len(args)
        for w, d in zip(positions, dws):
            target = args[w]
            moved[w] = d if d is not None else np.zeros(np.shape(target), np.result_type(
                getattr(target, "dtype", float), float))
        _MOVED.args = tuple(moved)
        return y, _nz(None)
    out = kw.get("out")
    if out is not None and not isinstance(rule.fn, np.ufunc):
        y, dy = rule.frule(tangents, *args, **{k: v for k, v in kw.items() if k != "out"})
        return write_out(rule.fn, y, out), _nz(None if integral(out) else dy)
    if out is not None and _aliased(out, args):
        # `np.multiply(z, a, out=z)`: the ufunc wrote z before the frule's tangent read it (a*dz + z*da with
        # z the product: 2.1 for 3.0). Computed apart, then written, as numpy's buffering makes it
        if type(out) is tuple or "where" in kw:
            raise NotTransformable("an out= array that is also an input, with several outputs or where=")
        y, dy = rule.frule(tangents, *args, **{k: v for k, v in kw.items() if k != "out"})
        out[...] = y
        return out, _nz(None if integral(out) else dy)
    try:
        y, dy = rule.frule(tangents, *args, **kw)
    except ZeroDivisionError:
        raise_singular(rule.fn, args, kw)
    if integral(y):  # (numpy integers out, `np.sum(v, dtype=int)`: they move in steps, no tangent)
        return y, 0
    if type(y) is not np.ndarray and isinstance(y, np.ndarray) and own_operators(type(y)) and not _zero(dy):
        # (`a.view(Vec)`, `np.multiply(v, x)` of a Vec: an ndarray subclass whose own `__add__` need not add;
        # the twin's operators take the tangent of a C array's (`w + x` gave 5 for 8.2, gen13 W3): duals)
        raise NotTransformable(f"an ndarray subclass with operators of its own ({type(y).__name__})")
    return y, _rate_zero(dy, tans)


def _by_frule_on_floats(rule, args, tans, kw):
    """`_by_frule` for one or two floats by position (`math.sin(x)`, `x ** 2.0`): no array, subclass,
    matrix or output to look for, and a float's registry tangent is its own (None for a zero)."""
    tangents = tuple(None if t is None or (type(t) in _SCALARS and t == 0) else t for t in tans)
    if isinstance(rule.fn, np.ufunc) and any(type(t) is list or type(t) is tuple for t in tangents):
        tangents = tuple(_as_array_tangent(t, a) for t, a in zip(tangents, args))
    try:
        y, dy = rule.frule(tangents, *args)
    except ZeroDivisionError:
        raise_singular(rule.fn, args, kw)
    if integral(y):
        return y, 0
    if type(y) is not np.ndarray and isinstance(y, np.ndarray) and own_operators(type(y)) and not _zero(dy):
        raise NotTransformable(f"an ndarray subclass with operators of its own ({type(y).__name__})")
    return y, _rate_zero(dy, tans)


def _as_array_tangent(t, a):
    """A list's or tuple's tangent (a list of numbers' tangents) as the array numpy makes of the list."""
    if type(t) is not list and type(t) is not tuple:
        return t
    try:
        return np.asarray([0.0 if e is None else e for e in t], dtype=np.result_type(np.asarray(a), float))
    except (TypeError, ValueError):
        raise NotTransformable("a list's tangent that is no array") from None


def _number(x) -> bool:
    return isinstance(x, (int, float, complex, np.number)) and not isinstance(x, bool)


def _aliased(out, args) -> bool:
    """An output array (or one of a tuple's) shares memory with an array argument."""
    for o in (out if type(out) is tuple else (out,)):
        if isinstance(o, np.ndarray) and any(isinstance(a, np.ndarray) and np.may_share_memory(o, a) for a in args):
            return True
    return False


def fd_call(f, args, tans, kw, kwtans):
    """(f(*args, **kw), its tangent) given the arguments' tangents (0 for zero). The tangents of array
    arguments f changed in place come back through `_MOVED` (`fd_args_back`)."""
    if f is globals and not args and not kw:  # the calling twin's, which are its function's (these are ours)
        return sys._getframe(1).f_globals, 0
    if _TEXTS:  # (a parse of a differentiated number's text by numpy: refused, `parse_check`)
        parse_check(f, args, kw)
    out = _fd_call(f, args, tans, kw, kwtans)
    if _MOVED.args is not None:
        _MOVED.given = (args, tans)
    return out


_IN_PLACE_OPERATORS = frozenset({operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ifloordiv,
                                  operator.imod, operator.ipow, operator.imatmul, operator.iand, operator.ior,
                                  operator.ixor, operator.ilshift, operator.irshift, operator.iconcat})
_PARSERS = (float, complex, decimal.Decimal, fractions.Fraction)
_HEAPTYPE = overdub.ops.HEAPTYPE  # (a class made by a class statement)
_DISPATCHER = type(np.diff)  # (numpy's array-function dispatchers)
_IN_PLACE_OPERATOR_IDS = frozenset(map(id, _IN_PLACE_OPERATORS))  # (by identity: a callable may be unhashable)
_IN_PLACE_NAMES = frozenset({"__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__",
                             "__ipow__", "__imatmul__", "__iand__", "__ior__", "__ixor__", "__ilshift__",
                             "__irshift__", "__setitem__", "__delitem__"})  # (`a.__setitem__(i, v)`: a store, gen19 W6)


def _fd_call(f, args, tans, kw, kwtans):
    _MOVED.args = None
    if kw and "out" in kw:
        if type(kw["out"]) is tuple:  # `out=(a,)`: the twin follows an `out=` variable, not a tuple's items
            raise NotTransformable("an out= tuple")  # (gen19 W2: the write was lost); duals write into a
        refuse_overlapping_out(f, args, kw)
    if type(f) is _DISPATCHER and own_method_form(f, args) is not None:
        # `np.sum(obj)` calling obj's own `sum` (a subclass of ndarray's, a container's): the rule would take
        # obj for an array (jvp 0.39 for 3.11, gen13 W2); on duals its own method runs, or is refused (run as
        # numpy's Python here, the method's object lost its tangent: 1.56 for 3.11)
        raise NotTransformable(f"np.{f.__name__} of an object with its own {f.__name__} method")
    plain_kw = not kwtans or all(_zero(t) for t in kwtans.values())
    if f is type and len(args) == 3 and not _zero(tans[2]):  # (`type(name, bases, {'k': x})`: the class's
        raise NotTransformable("a class made by type() of differentiated attributes")  # values, on duals)
    if plain_kw:
        for t in tans:
            if not (t is None or (type(t) in _SCALARS and t == 0)):  # (`_zero`, inline)
                break
        else:
            if f in _PARSERS and args and isinstance(args[0], str):  # (the text of an active value)
                parsed(args[0])
            elif remembered_text(args):  # (a callee may parse it back: geopy's `Point(f"{lat} {lon}")`)
                if type(f) is not _FUNCTION and type(g := uncached(f)) is _FUNCTION:
                    f = g  # (an lru_cache keyed by the text served what the plain call cached, 0: sweep P)
                if type(f) is _FUNCTION:
                    return _by_twin(f, args, tans, kw, kwtans)
                if isinstance(f, type) and f.__flags__ & _HEAPTYPE:  # a class of its own: its code, on the duals' path
                    raise NotTransformable("a class given a differentiated number's text")
            for t in tans:  # (a float zero: a rate of exactly 0 computed from the inputs, kept as one: `_rate_zero`)
                if type(t) is not int and t is not None:
                    if (singular := SINGULAR_AT.get(f)) is not None and len(args) == 1 and not kw and \
                            type(args[0]) in _SCALARS and singular[1](args[0]):
                        singular_still(singular[0])  # (sqrt at 0 of `x*x + y*y`: it moves at second order)
                    return f(*args, **kw), 0.0
            return f(*args, **kw), 0
        if type(f) is _FUNCTION and _RULES.get(f) is None:
            # (the common case first: a Python function without a rule is its twin's, as below)
            return _by_twin(f, args, tans, kw, kwtans)
    for t in tans:  # (a builtin or a rule given an object a differentiated number made, `float(a * obj)`:
        if type(t) not in _TANGENT_TYPES and not _zero(t) and _foreign(t):  # its dunder ran on the tangent)
            raise NotTransformable("an object a differentiated value made, given to a builtin or a rule")
    if (op := _COMPARISONS.get(id(f))) is not None and len(args) == 2 and len(tans) == 2 and not kw:
        # `op = operator.ge; op(x, 0.3) * x`: a comparison called as a function, its tie checked as the one
        # written `x >= 0.3` is (run natively, 1 at 0.3 where there is no derivative); two moving operands by
        # their relative rate
        a, b = args
        ta, tb = tans
        if not _zero(ta) and not _zero(tb):
            _equality_guard_fd(a, b, op, ta - tb, None, sys._getframe(1), None)
        elif not _zero(ta):
            _equality_guard_fd(a, b, op, ta, None, sys._getframe(1), None)
        elif not _zero(tb):
            _equality_guard_fd(b, a, _FLIPPED_OPS[op], tb, None, sys._getframe(1), None)
    if f is getattr and len(args) >= 2 and args[1] in _NONDIFF_ATTRIBUTES:  # getattr(x, "shape", ())
        return f(*args, **kw), 0
    if kw and (not plain_kw or not all(_zero(t) for t in tans)) and type(f) is types.BuiltinFunctionType and (
            moved := by_position(f, args, kw)) is not None:  # (and `pow(t, exp=3)`: a rule's exponent by position)
        # (`np.asarray(a=x, dtype=...)`, pyextremes': the rules take it by position)
        args, kw, names = moved
        tans = (*tans, *(kwtans.get(n, 0) for n in names))
        kwtans = {k: t for k, t in kwtans.items() if k not in names}
        plain_kw = not kwtans or all(_zero(t) for t in kwtans.values())
    f = uncached(f)
    if type(f) is types.BuiltinMethodType and (method := python_ufunc_method(f)) is not None:
        return _by_twin(method.__func__, (method.__self__, *args), (0, *tans), kw, kwtans)  # (frompyfunc's reduce)
    rule = registry.get(f)
    if (rule is None or rule.stand_in is not None) and (stand := registry.stand_in_of(f)) is not None:
        pre = stand[1]  # the primitive as Python code (`Rule.stand_in`; asked only where no other rule is)
        return _by_twin(stand[0], (*pre, *args), (*(0,) * len(pre), *tans), kw, kwtans)
    if rule is None and type(f) is types.MethodDescriptorType and args and isinstance(args[0], f.__objclass__):
        # `np.ndarray.sum(a)`, `type(a).__copy__(a)`: the C method unbound, its object first
        rule = registry.get((f.__objclass__, f.__name__))
        if rule is not None and rule.kind == "nondiff":
            return f(*args, **kw), 0
        if rule is not None and rule.frule is not None and plain_kw:
            return _by_frule(rule, args, tans, kw)
        rule = None
    if rule is not None and isinstance(key_of(f), tuple):  # a C type's bound method: keyed (type, name)
        if rule.kind == "nondiff":
            return f(*args, **kw), 0
        if not isinstance(f.__self__, np.ufunc):  # (ufunc.accumulate: the ufunc is a constant)
            # its object's tangent is not known here (`g = x.sum; g()`): duals carry it
            raise NotTransformable("a bound method of a C type called by name")
        if rule.frule is not None and plain_kw:
            return _by_frule(rule, (f.__self__, *args), (0, *tans), kw)
    if rule is not None and tans and f in STAIRS:  # (`round(t, 10)`, `np.mod(t, 1e-12)`: a step far below t)
        if _marks(f, args, tans[0], kw):  # (`np.round(a, 8)`: marked, for tests, `StaircasedArray`)
            return stairs_fd(f, args, tans[0], kw, f(*args, **kw)), 0
        stairs_fd(f, args, tans[0], kw)
        if len(tans) > 1 and not _zero(tans[1]):  # (`divmod(9.0, b)`: its jump where the divisor moves)
            divisor_jump(f, args[0], args[1], tans[1])
    if tans and args and id(f) in _INT_CASTS and not _zero(tans[0]):  # (`np.asarray(x, dtype=np.intp)`)
        int_cast_jump(f, args, kw, tans[0])
    if rule is not None and rule.kind == "nondiff":  # (before its frule: `stop_gradient(a)` of an array)
        if tans and args and (jump := JUMP_FUNCTIONS.get(f)) is not None:
            x, t = jump_operands(f, args, tans)  # (`np.floor(t)` of a moving t exactly on one of its jumps; an
            if x is not None and t is not None and not (type(t) is int and t == 0):  # argsort's at a tie; a search's)
                jump_guard(*jump, x, t, axis_of(jump[0], args, kw))
        return f(*args, **kw), 0
    if id(f) in _IN_PLACE_OPERATOR_IDS and args and isinstance(args[0], (np.ndarray, list)):
        # (`operator.iadd(a, y)`: a changes in place, which the twin's tangents would not follow: the duals do;
        # checked here, past the common cases, not on every call)
        raise NotTransformable("an in-place operator function on an array")
    if rule is not None and rule.frule is not None and plain_kw:
        return _by_frule(rule, args, tans, kw)
    if rule is None and type(f) is types.FunctionType:
        return _by_twin(f, args, tans, kw, kwtans)
    return _through_duals(f, args, tans, kw, kwtans)


def _marks(f, args, tangent, kw) -> bool:
    """f(*args) rounds a moving value by a fine step to digits or to whole numbers (`np.round(a, 8)`,
    `a.round(10)`): its value is marked (`runtime.staircased`), standing for the value in tests only."""
    return STAIRS.get(f) in ("digits", "unit") and f is not builtins.int and not _zero(tangent) \
        and staircase_text(f, args, kw) is not None


def _by_twin(f, args, tans, kw, kwtans):
    """f(*args, **kw) and its tangent by f's tangent twin, or by duals where it has none. A twin takes its
    tangents by position: keyword arguments carrying one are moved to their parameters' positions where f's
    own code names them so (`_to_positions`), else go by duals (a stand-in's, numba's `brent_max(func, a, b,
    args=(c,))`: the twin dropped them, 0 for -0.8, silently)."""
    if kwtans and not all(_zero(t) for t in kwtans.values()):
        moved = _to_positions(f, args, tans, kw, kwtans) if type(f) is _FUNCTION else None
        if moved is None:
            return _through_duals(f, args, tans, kw, kwtans)
        args, tans, kw, kwtans = moved
    try:
        twin = _twin(f, tans)
    except NotTransformable:
        return _through_duals(f, args, tans, kw, kwtans)
    try:
        return twin(tuple(tans), *args, **kw)
    except Exception as e:  # (free when nothing is raised) a library function's error says so
        note_transformed(e, f, "forward mode (its tangent twin)")
        if not isinstance(e, OverdubError) and "__od_lost__" not in getattr(e, "__dict__", ()):
            _note_lost(e, twin, f, args, tans)
        raise


def _to_positions(f, args, tans, kw, kwtans):
    """(args, tans, kw, kwtans) with the keyword arguments carrying a tangent moved to the positions of f's
    parameters of those names (`Nu(Re=x * 1e5, Pr=0.7)` is `Nu(x * 1e5, 0.7)`), the parameters between
    filled by the keywords given or by f's own defaults (the objects a call would bind); None where one
    cannot be: a name that is keyword-only, positional-only, given by position already, or gathered by
    `**kwargs`, or a parameter between with no default (f's own TypeError then comes from the duals' call).
    Read off f's code, not `inspect.signature`: a wrapper's signature is its `__wrapped__`'s, while its own
    code takes `*args, **kwargs` (moving keywords into its `*args` would change what it is given)."""
    code = f.__code__
    names = code.co_varnames[code.co_posonlyargcount:code.co_argcount]
    start = len(args) - code.co_posonlyargcount  # (the first parameter not given by position, among names)
    last = -1
    for k, t in kwtans.items():
        if not _zero(t):
            try:
                i = names.index(k)
            except ValueError:
                return None
            if i < start:
                return None
            last = max(last, i)
    if start < 0 or last < 0:
        return None
    defaults = f.__defaults__ or ()
    first_default = len(names) - len(defaults)
    args, tans, kw, kwtans = list(args), list(tans), dict(kw), dict(kwtans)
    for i in range(start, last + 1):
        name = names[i]
        if name in kw:
            args.append(kw.pop(name))
            tans.append(kwtans.pop(name, 0))
        elif i >= first_default:
            args.append(defaults[i - first_default])
            tans.append(0)
        else:
            return None
    return tuple(args), tuple(tans), kw, kwtans


def _note_lost(e, twin, f, args, tans) -> None:
    """e leaves f's tangent twin: where f had stored into a list, dict or array it was given (its tangent
    there a new one, handed back to the caller only at a return: `fd_args_back`), the tangent of what it
    stored is lost with the raise (`box['r'] = a * a; raise Done()`, caught by the caller, who reads
    `box['r']`: 0.0 for 3.0): marked for a handler of a twin that catches it (`fd_not_swallowed`)."""
    names = f.__code__.co_varnames[:f.__code__.co_argcount]
    mark_lost(e, twin.__code__, f.__code__.co_qualname, lambda local: any(
        isinstance(a, (list, dict, np.ndarray)) and local.get("_od_f_" + name, t) is not t
        for name, a, t in zip(names, args, tans)))


def fd_mcall(obj, name, tobj, args, tans, kw, kwtans):
    """obj.name(*args, **kw) and its tangent; the object's own tangent is `tobj`."""
    if type(obj) is _MODULE and not kw and len(args) == 1 and type(args[0]) is float and type(tans[0]) is float \
            and tans[0] != 0.0 and not _TEXTS:
        # `math.sin(x)` of a float moving at a nonzero float rate: its rule's float partial (`Rule.hot_float`,
        # which its frule's float case multiplies by) without the general path's questions, none of which a
        # function of one float with such a partial raises (a stair has none; a singular point divides by
        # zero: the general path's)
        f = getattr(obj, name)
        rule = _RULES.get(f)
        if rule is not None and rule.hot_float is not None and rule.stand_in is None:
            x = args[0]
            y = f(x)
            if type(y) is float:
                try:
                    dy = tans[0] * rule.hot_float(y, x)
                except ZeroDivisionError:
                    pass
                else:
                    _MOVED.args = None
                    return y, dy
    try:
        out = _fd_mcall(obj, name, tobj, args, tans, kw, kwtans)
    finally:
        if not _zero(tobj):
            _MOVED.args = None  # the method of an active object had it first: not the caller's positions
    if _MOVED.args is not None:
        _MOVED.given = (args, tans)
    return out


def _fd_mcall(obj, name, tobj, args, tans, kw, kwtans):
    if not _zero(tobj) and _foreign(tobj):
        raise NotTransformable("a method of an object a differentiated value made")
    if name in _IN_PLACE_NAMES and isinstance(obj, (np.ndarray, list)):
        # (`a.__imul__(x)` by name: the array changes in place, which the twin's tangents would not follow)
        raise NotTransformable("an in-place operator's method called by name")
    method = getattr(obj, name)
    if (name == "round" or name == "__round__" or name == "astype") and not _zero(tobj) and (
            stair := stair_method(method, args)) is not None:
        if _marks(*stair, tobj, kw):  # (`a.round(10)`: marked, for tests, as np.round(a, 10) is)
            return stairs_fd(*stair, tobj, kw, method(*args, **kw)), 0
        stairs_fd(*stair, tobj, kw)
        if stair[0] is np.trunc:  # (`a.astype(int)` exactly on an integer its tangent moves: a jump)
            jump_guard("trunc", "ndarray.astype(int)", obj, tobj)  # (`a.round(13)`: np.round's, a step far below the value where it moves)
    elif name in _STAIR_SLOTS and (stair := stair_method(method, args)) is not None:
        # (`x.__mod__(y)`, `y.__rmod__(x)` by name: the operator's, a fine step and the jumps of x and of y)
        ta, tb = (tans[0], tobj) if _STAIR_SLOTS[name][1] else (tobj, tans[0])
        if not _zero(ta):
            stairs_fd(*stair, ta, kw)
        if not _zero(tb):
            divisor_jump(stair[0], *stair[1], tb)
    if _TEXTS:  # (`np.float64(s)`, `texts.astype(float)`: a parse of a differentiated number's text, refused)
        parse_check(method, args, kw)
    if name in ORDER_METHODS and type(obj) is np.ndarray and not _zero(tobj):  # (`x.argsort()` at a tie whose
        kind, what = ORDER_METHODS[name]                                       # entries part: refused)
        jump_guard(kind, what, obj, tobj, axis_of(kind, (obj, *args), kw))
    if name == "searchsorted" and type(obj) is np.ndarray and args and not (
            _zero(tobj) and (not tans or _zero(tans[0]))):  # (a value on the grid: `np.histogram`'s at an edge)
        jump_guard("search", "ndarray.searchsorted", (obj, args[0]), (tobj, tans[0] if tans else 0))
    if name in LOOKUPS and isinstance(obj, MAPPINGS) and args and tans and (
            not _all_zero(tans[0]) or isinstance(args[0], str) and remembered_text(args[:1])):
        key_lookup(obj, args[0])  # `memo.get(x)`, `memo.get(f"{x:.10g}")`
    if type(obj) is list and name in LIST_MUTATORS:
        return _list_method(obj, name, tobj, args, tans, kw)
    if (type(method) is not types.MethodType and getattr(method, "__self__", None) is not obj
            and not isinstance(key_of(method), tuple)):
        # a callable the attribute holds, not bound to obj (`t.__class__(t)`, a function or class stored on
        # it): called with the arguments alone (obj given first crashed float's frule, gen10's C1)
        return fd_call(method, args, tans, kw, kwtans)
    if _zero(tobj) and (not isinstance(key_of(method), tuple) or isinstance(obj, np.ufunc)
                        or all(_zero(t) for t in tans) and all(_zero(t) for t in kwtans.values())):
        return fd_call(method, args, tans, kw, kwtans)
    if ARRAY_TYPES and isinstance(obj, ArrayLeaf):  # a dask array's `.sum()`: the ndarray method's frule
        if _leaves.HOSTED and isinstance(obj, _leaves.HOSTED):  # (a torch tensor's method means torch's)
            raise _leaves.hosted_refused(f"{type(obj).__name__}.{name} of a perturbed value")
        rule = registry.get((np.ndarray, name))
        if rule is None or rule.frule is None or rule.inplace is not None or rule.mutating or not all(
                _zero(t) for t in kwtans.values()):
            raise NotTransformable(f"{type(obj).__name__}.{name}: no forward rule on a dask array")
        return _by_frule(rule, (obj, *args), (tobj, *tans), kw)
    if type(method) is types.MethodType and type(method.__func__) is types.FunctionType:
        bound = method.__self__  # (a classmethod's is the class: no tangent)
        return fd_call(method.__func__, (bound, *args), (tobj if bound is obj else 0, *tans), kw, kwtans)
    rule = registry.get(method)  # a C type's method: keyed (type, name), the object first
    if rule is None and isinstance(obj, np.ndarray) and type(method) is types.BuiltinMethodType:
        rule = registry.get((np.ndarray, name))  # (an ndarray subclass's inherited method: `a.view(Sub).fill(v)`)
    if rule is not None and (rule.inplace is not None or rule.mutating):
        # it changes the object in place (a.sort(), a.fill(v)): duals carry the tangent with the memory
        raise NotTransformable(f"{type(obj).__name__}.{name} changes an active object in place")
    if rule is not None and rule.frule is not None and all(_zero(t) for t in kwtans.values()):
        return _by_frule(rule, (obj, *args), (tobj, *tans), kw)
    return _through_duals(lambda o, *a, **k: getattr(o, name)(*a, **k), (obj, *args), (tobj, *tans), kw, kwtans)




def _list_method(obj, name, tobj, args, tans, kw):
    """A list mutated in place: its tangent list (built alongside it) gets the same change."""
    if type(tobj) is not list:
        if all(_zero(t) for t in tans):
            return getattr(obj, name)(*args, **kw), 0
        raise NotTransformable("a list without a tangent list received active values")
    y = getattr(obj, name)(*args, **kw)
    if name == "append":
        tobj.append(tans[0])
    elif name == "insert":
        tobj.insert(args[0], tans[1])
    elif name == "extend":
        t = tans[0]  # (a dict extends by its keys, which have no tangent)
        tobj.extend(list(t) if not _zero(t) and type(args[0]) is not dict else [0] * (len(obj) - len(tobj)))
    else:  # pop
        return y, tobj.pop(*args)
    return y, 0


def _through_duals(f, args, tans, kw, kwtans):
    """The general mechanism: f on duals under ForwardContext (objects, mutation, C functions, ...).

    The twin follows tangents of numbers, arrays and plain lists, tuples and dicts of them only: a call
    that leaves duals anywhere else (in an object it returns, an iterator, a closure, an argument it
    changed in place) raises NotTransformable, and the caller's derivative runs on duals from the start."""
    from .api import _primal_out, _run, _run_form, _tangent_out  # (api imports this module)
    f = uncached(f)
    # a primitive that writes into an argument (np.copyto, ufunc.at: the duals know how) may write perturbed
    # values into a plain float array: that argument gets a zero tangent to write them into
    rule = registry.get(f)
    writes = rule is not None and (rule.inplace is not None or rule.mutating)
    tag = Tag()
    # the duals get copies of array tangents: the twin's tangents may be shared between variables whose
    # values are not (`y = x + 1` takes x's tangent as it is), so a change in place must not reach them.
    # The tangent of an argument the call changed in place is handed back to the caller instead.
    made: list = []  # (a container of duals made for the call, the items it was given)
    # one array passed twice (`correlate1d(b, w, output=b)`) is one dual: its tangent changes with its value
    # through either name (two duals of one array: a write through the keyword's was lost)
    arrays: dict = {}
    memo: dict = {}  # (one list held twice, `[a, a]`, is one list of duals: copy.deepcopy keeps it one, gen18 W8)

    def dual_of(a, t):
        if type(a) is not np.ndarray:
            return _dualize(a, t, tag, made, memo)
        d = arrays.get(id(a))
        if d is None or d[1] is not t:
            d = arrays[id(a)] = (_dualize(a, t, tag, made, memo), t)
        return d[0]
    dargs = [dual_of(a, t) if not _all_zero(t) else
             Dual(a, np.zeros(a.shape), tag) if writes and type(a) is np.ndarray and a.dtype.kind == "f" else a
             for a, t in zip(args, tans)]
    dkw = {k: (v if _all_zero(kwtans.get(k)) else dual_of(v, kwtans[k])) for k, v in kw.items()}
    try:
        # (a Python function with a form on duals — a root finder, a refused search — runs that form)
        y = (_run_form(rule.duals, tuple(dargs), dkw) if rule is not None and rule.duals is not None else
             _run(f, *dargs, **dkw))
    except PlainArrayWrite as e:
        if overdub.is_recursable(f):  # (an array a method updates in place, made plain by the twin's caller)
            raise NotTransformable("a call wrote perturbed values into a plain array") from e
        raise
    except (TypeError, ValueError, struct.error) as e:
        # a DualConversionError, or the callable's own words ("cannot create mpf from Dual", struct.pack's
        # "required argument is not a float")
        if not isinstance(e, TypeError) and (overdub.is_recursable(f) or isinstance(e, OverdubError)):
            raise  # (a Python function's own ValueError)
        if overdub.is_recursable(f) and isinstance(e, DualConversionError):
            # a dual stored into a plain array the twin made outside duals (an object built by a call with
            # no active input: `s = Stages(n)`, its `np.empty` plain): on duals from the start it is a dual
            raise NotTransformable("a call stored a perturbed value into a plain array") from e
        if overdub.is_recursable(f) or isinstance(e, OverdubError) and not isinstance(e, DualConversionError):
            raise
        if f is iter and isinstance(e, TypeError) and len(args) == 1 and _number(args[0]):
            raise TypeError(f"'{type(args[0]).__name__}' object is not iterable") from None  # (as Python's: a
            # number asked whether it is an array, colossus' isArray, takes the code's other way)
        frame = outside_engine(sys._getframe(1))  # a C callable (or a class) with no frule met a dual
        raise no_rule(f, where=f"{frame.f_code.co_filename}:{frame.f_lineno}") from e
    if any(not _same_items(c, items) for c, items, _ in made):
        raise NotTransformable("a call changed a container holding active values in place")
    if any(_changed_tangent(d, t) is not None for _, items, ts in made for d, t in zip(items, ts)):
        # (an array a list or tuple held, changed in place by the call: `for p in params: p -= lr * g`; its
        # new tangent stayed with the call's dual, gen19 W9)
        raise NotTransformable("a call changed in place an array a container argument holds")
    if not all(dual_free(a) for a, t in zip(args, tans) if _all_zero(t)) or not dual_free(
            bound_self(f)) or not all(dual_free(v) for k, v in kw.items()
                                                     if _all_zero(kwtans.get(k))):
        raise NotTransformable("a call stored active values into an argument")
    if type(f) is types.FunctionType and f.__closure__ and not dual_free(f):
        # (a closure storing into what it captured, `def put(v): o['k'] = v * v` of a factory's `o`: the
        # caller's object holds duals its tangents do not show; gen20 W9, jvp 0 for 1.4)
        raise NotTransformable("a call stored active values into what the closure captured")
    if not splittable(y):
        raise NotTransformable(f"a call returned a {type(y).__name__} that may hold active values")
    if (type(y) is list or type(y) is tuple or type(y) is dict) and _holds_twice(y, set(), 0):
        # (`copy.deepcopy([a, a])`: one list held twice, which the twin's split into values and tangents
        # would make two: a store through one was not seen through the other, the value changed, gen18 W8)
        raise NotTransformable("a call returned a container holding one list or dict twice")
    if made and _returns_made(y, {id(c) for c, _, _ in made}, 0):
        # a list, tuple or dict it was given, or one they hold (`d.get('h')`, an unpacking's items): the
        # call gave its copy of duals, taken apart into yet another copy; the caller's changes to that
        # (`m += [x]`) missed the object it names (h's own value was wrong)
        raise NotTransformable("a call returned a container it was given")
    moved = tuple(_changed_tangent(d, t) for d, t in zip(dargs, tans))
    given = {id(d) for d in dargs}
    if any(id(d) not in given and _changed_tangent(d, kwtans[k]) is not None for k, d in dkw.items()):
        # an array passed by keyword only, changed in place: the twin hands back positional ones alone
        raise NotTransformable("a call changed in place an array passed by keyword")
    # (a result holding no dual has tangent zero: a module, a function, a shape)
    # (a result holding no dual is the call's own object: `d.get('h')` is the caller's list h, not a copy the
    # caller's `m += [x]` would change instead)
    out = (y, 0) if dual_free(y) else (_primal_out(y, tag), _nz(_held_tangent(y, tag, _tangent_out)))
    _MOVED.args = moved if any(m is not None for m in moved) else None
    return out


def _held_tangent(y, tag, tangent_out):
    """The tangent of a call's result y on duals, where the items of a list, tuple or dict holding no dual (a
    constant the call was given or made: `dict(cp=-1.0, K=k)`'s cp) have the twins' zero of a constant, 0 (a
    dict's none at all), as a result holding no dual has. `_tangent_out` gave them a float 0.0, which the twins
    take for a rate of exactly 0 computed from the inputs (`_still_at`): each `cp == -1` of the caller was judged
    from the two sides of the point, and refused where a side could not run (calcbsimpvol's put prices)."""
    if type(y) is dict:
        return {k: _held_tangent(v, tag, tangent_out) for k, v in y.items() if not dual_free(v)}
    if type(y) is list or type(y) is tuple:
        return type(y)(0 if dual_free(v) else _held_tangent(v, tag, tangent_out) for v in y)
    return tangent_out(y, tag, unknown=True)


def _holds_twice(y, seen: set, depth: int) -> bool:
    """y (a list, tuple or dict) holds, a few levels down, one list or dict at two places."""
    for v in (y.values() if type(y) is dict else y):
        if type(v) is list or type(v) is dict or type(v) is tuple:
            if type(v) is not tuple:
                if id(v) in seen:
                    return True
                seen.add(id(v))
            if depth < 4 and _holds_twice(v, seen, depth + 1):
                return True
    return False


def _returns_made(y, made: set, depth: int) -> bool:
    """y is, or holds (a few levels down), one of the containers of duals made for a call."""
    if id(y) in made:
        return True
    if depth < 4 and (type(y) is list or type(y) is tuple):
        return any(_returns_made(e, made, depth + 1) for e in y if type(e) in (list, tuple, dict))
    if depth < 4 and type(y) is dict:
        return any(_returns_made(e, made, depth + 1) for e in y.values() if type(e) in (list, tuple, dict))
    return False


def fd_rounded(x):
    """`round(x, ...)`'s argument in a tangent twin: x; an object whose class has its own Python `__round__`
    gives up the twin (its result may carry x's tangent, which the twin takes for a number's rounding's
    none): the duals run the method as code."""
    kind = type(x)
    if users_class(kind) and type(getattr(kind, "__round__", None)) is types.FunctionType:
        raise NotTransformable(f"round() of a {kind.__name__}, whose class has its own __round__")
    return primal(x)


def uncached(f):
    """f without its functools.lru_cache / cache wrapper: a perturbed call must never be served the value
    cached for its primal (a dual hashes and compares as its primal does)."""
    while True:
        if isinstance(f, functools._lru_cache_wrapper):
            f = f.__wrapped__
        elif type(f) is types.MethodType and isinstance(f.__func__, functools._lru_cache_wrapper):
            f = types.MethodType(f.__func__.__wrapped__, f.__self__)
        else:
            return f


def _dualize(a, t, tag, made: list, memo: dict | None = None):
    """a perturbed by tangent t as duals: a plain list, tuple or dict of values becomes a new one of duals
    (remembered in `made`, to check that the call left it alone); any other value one dual. `memo`: the
    containers made so far by id, so that one held twice is made once."""
    if memo is None:
        memo = {}
    if type(a) is list or type(a) is tuple:
        if (type(t) is list or type(t) is tuple) and len(t) == len(a):
            if id(a) in memo:
                return memo[id(a)]
            items = [_dualize(v, tv, tag, made, memo) if not _all_zero(tv) else v for v, tv in zip(a, t)]
            out = memo[id(a)] = type(a)(items)
            made.append((out, items, list(t)))
            return out
    elif type(a) is dict:
        if type(t) is dict:
            if id(a) in memo:
                return memo[id(a)]
            out = memo[id(a)] = {k: (_dualize(v, t[k], tag, made, memo) if not _all_zero(t.get(k)) else v)
                                 for k, v in a.items()}
            made.append((out, list(out.values()), [t.get(k) for k in a]))
            return out
    return Dual(a, _own(t), tag)


def _same_items(c, items) -> bool:
    return len(c) == len(items) and all(u is v for u, v in zip(c.values() if type(c) is dict else c, items))


def _all_zero(t) -> bool:
    """A zero tangent, also a list or tuple of them (a constant `[0, 2]` has one of zeros)."""
    return _zero(t) or (type(t) is list or type(t) is tuple) and all(_all_zero(e) for e in t)


def _changed_tangent(d, t):
    """The tangent of a dual argument after the call, where the call changed it (None where not)."""
    if type(d) is not Dual or not isinstance(d.tangent, np.ndarray):  # (a subclass view's: `a.view(Sub)`)
        return None
    if isinstance(t, np.ndarray):
        return None if np.array_equal(d.tangent, t) else d.tangent
    return d.tangent if d.tangent.any() else None


def fd_out(out, y, ty, tout, where):
    """The tangent of array `out` after a call wrote its result y (numpy returns out itself) into it:
    y's tangent where written, out's old tangent elsewhere."""
    if y is not out or type(out) is not np.ndarray:
        return tout
    if where is True:
        return ty
    if _zero(ty) and _zero(tout):
        return 0
    kind = np.result_type(out.dtype, float)
    return np.where(where, _dense(ty, out.shape, kind), _dense(tout, out.shape, kind))


def _missing_by_code(obj, idx) -> bool:
    """obj[idx] runs a dict subclass's own `__missing__` (Python code, which may compute from the key or the
    object's fields: its result had the missing entry's tangent, 0; gen21 W7)."""
    to = type(obj)
    return (to is not dict and isinstance(obj, dict) and type(getattr(to, "__missing__", None)) is types.FunctionType
            and not dict.__contains__(obj, idx))


def fd_getitem(t, idx, obj=None):
    if obj is not None and _missing_by_code(obj, idx):
        raise NotTransformable(f"an item a {type(obj).__name__}'s own __missing__ computes")
    if _zero(t):
        return 0
    to = type(obj)
    if (to is not np.ndarray and to is not list and to is not tuple and to is not dict and isinstance(obj, np.ndarray)
            and type(to.__getitem__) is types.FunctionType and not to.__module__.startswith("numpy")):
        # (an ndarray subclass's own: its code, on duals)
        raise NotTransformable(f"an item of a {to.__name__} (its class's own __getitem__)")
    if _foreign(t):
        raise NotTransformable("an item of an object a differentiated value made")
    return t.get(idx, 0) if type(t) is dict else t[idx]  # a dict's tangent holds its active items only


def fd_slice_tangent(*tangents):
    """The tangent of a slice `a:b:c` whose bounds may be active: 0 (bounds select, an integer's tangent is
    0); a bound moving with the inputs is given to the duals (NotTransformable)."""
    if all(_all_zero(t) for t in tangents):
        return 0
    raise NotTransformable("a slice bound carrying a tangent")


def fd_subscript(obj, idx, tobj, tidx):
    """`obj[idx]` with an index that may carry a tangent: a class's own `__getitem__` (Python code:
    `np.r_[x, 1.0]`, a user's table looked up at a float) is differentiated as a call with the index's
    tangent; an array's, list's or dict's index has none (it selects), so those are indexed as usual."""
    if not _all_zero(tidx) and subscripts_a_class(obj):
        raise NotTransformable("a class subscripted by a differentiated value")  # (the duals refuse it by name)
    gi = getattr(type(obj), "__getitem__", None)
    if type(gi) is types.FunctionType and not _all_zero(tidx):
        return fd_call(gi, (obj, idx), (tobj, tidx), {}, {})
    if _missing_by_code(obj, idx):
        raise NotTransformable(f"an item a {type(obj).__name__}'s own __missing__ computes")
    if isinstance(obj, MAPPINGS) and not _all_zero(tidx):
        key_lookup(obj, idx)
    return obj[idx], fd_getitem(tobj, idx)


MAPPINGS = (dict, types.MappingProxyType)
LOOKUPS = frozenset({"get", "pop", "setdefault"})


def fd_attr(t, attr):
    if _zero(t):
        return 0
    if _foreign(t):
        raise NotTransformable("an attribute of an object a differentiated value made")
    return getattr(t, attr)


def fd_attr0(t):
    """The tangent of `.shape`, `.size`, `.dtype`... of a value of tangent t: 0."""
    if type(t) in _TANGENT_TYPES or _zero(t) or not _foreign(t):
        return 0
    raise NotTransformable("an attribute of an object a differentiated value made")


def fd_setitem(y, ty, idx, tv, v=None):
    """The tangent of container y after `y[idx] = v`: ty with tv at idx, as a new array, list or dict."""
    if type(y) is not np.ndarray and type(y) is not list and isinstance(idx, (float, complex, np.inexact)):
        raise NotTransformable("a number as a key")  # perturbed maybe: duals carry it in the key
    if _zero(ty) and _zero(tv):
        return 0
    if type(y) is np.ndarray:
        if y.dtype.names is not None:  # (a record's field: the duals refuse it by name)
            raise NotTransformable("a store into a structured array")
        if y.dtype.kind in "biu":  # (an integer array keeps the values cut to steps: no tangent, gen17 W1)
            return 0
        kind = np.result_type(y.dtype, getattr(tv, "dtype", float), float)
        new = _dense(ty, y.shape, kind)
        new[idx] = 0 if _zero(tv) else tv
        return new
    if type(y) is list:
        new = [0] * len(y) if _zero(ty) else list(ty)
        if isinstance(idx, slice):  # (the slice may take more or fewer items than it replaces)
            if not hasattr(v, "__len__"):
                raise NotTransformable("a slice of a list assigned from an iterator")
            tv = [0] * len(v) if _zero(tv) else list(tv)
        new[idx] = tv
        return new
    if type(y) is dict:
        new = {} if _zero(ty) else dict(ty)
        new[idx] = tv
        return new
    raise NotTransformable(f"storing into a {type(y).__name__}")


def fd_sync(x, tx, members, tans, held=False):
    """After an in-place change of x (tangent tx): the tangents of `members` (values that may share x's
    memory) made to agree with tx (`_synced`); with `held` (a callee changed x, perhaps its items in place),
    also those of the members x holds (`_held_by`)."""
    if not isinstance(x, (list, dict, np.ndarray)):
        return tans  # (an ndarray subclass's change is seen through its views too: `r.view(Sub)`)
    return tuple(_synced(x, tx, m, tm, set(), held) for m, tm in zip(members, tans))


def _synced(x, tx, m, tm, seen: set, held: bool = False):
    """The tangent tm of value m after an in-place change of x, made to agree with tx where m is x or holds
    it (a list, tuple or dict, also nested: a new container where any item changes) and, for arrays, where
    m shares elements with x; tm itself where nothing changes."""
    if m is x:
        return tx
    if isinstance(m, (list, tuple, dict)):  # (a subclass's too: SALib's `class ResultDict(dict)`)
        t = _sync_container(x, tx, m, tm, seen)
        if t is not tm:
            return t
    elif (isinstance(x, np.ndarray) and isinstance(m, np.ndarray) and (x.base is not None or m.base is not None)
            and np.may_share_memory(x, m)):
        if x.dtype != m.dtype:  # (Z.imag of a complex Z: half its bytes; the duals keep both in step)
            raise NotTransformable("an in-place change seen through a view of another dtype")
        addr_x, addr_m = addresses(x), addresses(m)
        shared = np.isin(addr_m, addr_x)
        if shared.any():
            kind = np.result_type(m.dtype, float)
            new = _dense(tm, m.shape, kind)
            order = np.argsort(addr_x, axis=None)
            pos = order[np.searchsorted(addr_x.reshape(-1)[order], addr_m[shared])]
            src = np.zeros(x.size, kind) if _zero(tx) else np.broadcast_to(tx, x.shape).reshape(-1)
            new[shared] = src[pos]
            return new
    if held and isinstance(x, (list, tuple, dict)) and isinstance(m, (list, tuple, dict, np.ndarray)):
        return _held_by(x, tx, m, tm, set())  # (x holds m: `d['x'] *= v` in a callee given d changes the caller's x)
    if isinstance(x, np.ndarray) and _opaque_holder(m):
        # an object of a C type made before the change (a deque of its rows, a memoryview, an iterator drawing
        # views of them later): it may hold x's memory, whose tangent it cannot be given here. The duals hold
        # their tangents in the views (0 for 3, silently: `q = deque(a); a[0] = x; q[0]`)
        raise NotTransformable(f"an array changed in place that a {type(m).__name__} may hold views of")
    return tm


_NOT_HOLDERS = (numbers.Number, str, bytes, type(None), np.generic, type, types.FunctionType, types.BuiltinFunctionType,
                types.ModuleType, range, slice, frozenset, set)


def _opaque_holder(m) -> bool:
    """m is an object of a C class that may hold arrays out of the twins' sight (not a number, text, array,
    list, tuple, dict or set, nor a class, function or module)."""
    if isinstance(m, _NOT_HOLDERS) or isinstance(m, (np.ndarray, list, tuple, dict)):
        return False
    # (a C class: none of its MRO's own dicts holds a Python function. Not its HEAPTYPE flag: `deque` is a heap
    # type from Python 3.12 on, and the check let its rows miss a write there, 0 silently)
    return not any(type(v) is types.FunctionType for k in type(m).__mro__[:-1] for v in vars(k).values())


def _held_by(x, tx, m, tm, seen: set):
    """`_synced` where container x holds m (or an array sharing m's memory), a few levels down: m's tangent
    is what x's tangent has at its place."""
    seen.add(id(x))
    for k in (list(x) if isinstance(x, dict) else range(len(x))):
        item = x[k]
        if isinstance(item, np.ndarray) or type(item) in (list, tuple, dict):
            t = 0 if _zero(tx) else (tx.get(k, 0) if type(tx) is dict else tx[k])
            if item is m:
                return t
            if isinstance(item, np.ndarray):
                t = _synced(item, t, m, tm, set()) if isinstance(m, np.ndarray) else tm
            elif id(item) not in seen and len(seen) < 64:
                t = _held_by(item, t, m, tm, seen)
            else:
                continue
            if t is not tm:
                return t
    return tm


def _sync_container(x, tx, m, tm, seen: set):
    """`_synced` for a list, tuple or dict m: its array and container items synced."""
    if id(m) in seen:
        return tm
    seen.add(id(m))
    new = None
    is_dict = isinstance(m, dict)
    for k in (list(m) if is_dict else range(len(m))):
        item = m[k]
        if not isinstance(item, np.ndarray) and type(item) not in (list, tuple, dict):  # (a subclass's too)
            continue
        old = 0 if _zero(tm) else (tm.get(k, 0) if type(tm) is dict else tm[k])
        t = _synced(x, tx, item, old, seen)
        if t is not old:
            if new is None:
                new = (dict(tm) if type(tm) is dict else list(tm)) if not _zero(tm) else (
                    {} if is_dict else [0] * len(m))
            new[k] = t
    if new is None:
        return tm
    return tuple(new) if isinstance(m, tuple) else new


def _dense(t, shape, kind):
    """A new array of the given shape and dtype holding tangent t (zeros for the twins' 0)."""
    return np.zeros(shape, kind) if _zero(t) else np.array(np.broadcast_to(t, shape), dtype=kind)


def fd_bound(scope, names, tangent_names):
    """`fd_sync`'s members and tangents from a frame's locals, None and 0 for those not bound yet."""
    return tuple(scope.get(n) for n in names), tuple(scope.get(t, 0) for t in tangent_names)


def fd_cat(a, b, ta, tb):
    """The tangent of a + b where the tangents' types differ or one is a zero: for lists and tuples (or a
    tuple made into a list's tail) the tangents concatenated, zeros standing for a zero tangent's items."""
    if type(a) in (list, tuple) and type(b) in (list, tuple):
        pa = [0] * len(a) if _all_zero(ta) else list(ta)
        pb = [0] * len(b) if _all_zero(tb) else list(tb)
        return type(a + b)(pa + pb)
    ta, tb = _array_tangents(a, b, ta, tb)
    if _zero(ta):  # a + b has b's tangent, in the shape of the sum (a scalar's, over an array a)
        return fd_bc(tb, a)
    if _zero(tb):
        return fd_bc(ta, b)
    return ta + tb


def fd_sub(a, b, ta, tb):
    """The tangent of a - b where the tangents' types differ (an array minus a list or tuple of numbers:
    `np.ones(2) - (x, y)`, whose tangent a tuple could not negate)."""
    ta, tb = _array_tangents(a, b, ta, tb)
    return fd_cat(a, b, ta, 0 if _zero(tb) else -tb)


def fd_pow(a, b, ta, tb):
    """The tangent of a ** b."""
    _operand(a)
    _operand(b)
    if type(a) is complex or isinstance(a, np.complexfloating) or type(a) is np.ndarray and a.dtype.kind == "c":
        power_on_cut(a, b, 0 if _zero(ta) else ta, None if _zero(tb) else tb)  # (`rules.cuts`)
    out = 0
    if not _zero(ta):
        try:
            out = ta * pow_dx(a, b)
        except ZeroDivisionError:  # (the derivative's: `arrays.raise_singular`)
            raise_singular(pow, (a, b), {})
    if not _zero(tb):
        out = out + tb * pow_dn(a, b, a ** b)
    return out


def fd_matmul(a, b, ta, tb):
    _operand(a)
    _operand(b)
    out = 0
    if not _zero(ta):
        out = ta @ b
    if not _zero(tb):
        out = out + a @ tb
    return out


def _checked(a, b, ta, tb, masked: bool = False) -> tuple[bool, bool]:
    """(ta is the twins' 0, tb is) for `a * b` (`masked`), `a / b`; where either is not, a duration scaled by
    the differentiated number and an operand of a class of its own are refused first."""
    za, zb = type(ta) is int and ta == 0, type(tb) is int and tb == 0
    if not (za and zb):
        scaled_duration(a, b, not za, not zb)
        _operand(a, masked)
        _operand(b, masked)
    return za, zb


def _array_tangents(a, b, ta, tb):
    """(ta, tb) of an operator of an array and a list or tuple of numbers (numpy's operand as an array): the
    sequence's tangent as the array numpy makes of it (`_nested_tangent`), the other's as it is."""
    if (type(tb) is list or type(tb) is tuple) and type(a) is np.ndarray:
        tb = _nested_tangent(tb, b)
    if (type(ta) is list or type(ta) is tuple) and type(b) is np.ndarray:
        ta = _nested_tangent(ta, a)
    return ta, tb


def _nested_tangent(t, p):
    """A (nested) list's tangent, its items' zeros the twins' int 0, as the array numpy makes of the list p
    (`np.ones((2, 2)) * [[a], [1.0]]`: `[[1.0], 0]` was no array, a ValueError, pkJ C1)."""
    def filled(t, p):
        if type(t) is list or type(t) is tuple:
            return [filled(ti, pi) for ti, pi in zip(t, p)]
        if t is None or type(t) is int and t == 0:
            return np.zeros(np.shape(p))
        return t
    try:
        return np.asarray(filled(t, p), dtype=np.result_type(np.asarray(p), float))
    except (TypeError, ValueError):
        raise NotTransformable("a list's tangent that is no array") from None


def fd_mul(a, b, ta, tb):
    """The tangent of `a * b` where a tangent is an int: 0 there is no derivative (an int operand's, or a
    zero), not a number to multiply by (`[1] * n` would repeat the list 0 times)."""
    ta, tb = _array_tangents(a, b, ta, tb)
    za, zb = _checked(a, b, ta, tb, True)
    if za and zb:
        return 0
    if za:
        return a * tb
    if zb:
        return ta * b
    return ta * b + a * tb


def fd_div(a, b, ta, tb):
    """The tangent of `a / b` where one operand is not a plain number."""
    ta, tb = _array_tangents(a, b, ta, tb)
    za, zb = _checked(a, b, ta, tb)
    if za and zb:
        return 0
    y = a / b
    return (0 if za else ta / b) - (0 if zb else y * tb / b)


def fd_floordiv(a, b, ta, tb):
    """The tangent of `a // b`: 0 (a floor), unless an operand is an object of a class of its own; refused
    on a step far finer than a where a moves (`staircase_fd`)."""
    _operand(a)
    _operand(b)
    if not _zero(ta):
        staircase_fd(operator.floordiv, (a, b), None, ta)
    if not _zero(tb):  # (`9 // b` at b = 4.5: a jump the divisor moves across)
        divisor_jump(operator.floordiv, a, b, tb)
    return 0


def fd_not_swallowed() -> None:
    """At the start of an `except` handler of a twin: a refusal, or the twin giving up for dual numbers
    (`NotTransformable`, which a bare `except:` catches), is raised again (`overdub.errors.not_swallowed`)."""
    e = sys.exc_info()[1]
    if isinstance(e, NotTransformable):
        raise e
    frame = sys._getframe(1)
    not_swallowed(frame)
    if (lost := lost_work(frame)) is not None:
        raise NotTransformable(f"the tangent of what {lost} stored into an argument before it raised "
                               f"{type(e).__name__}, caught at {frame.f_code.co_filename}:{frame.f_lineno}")


def fd_mod(a, b, ta, tb):
    """The tangent of `a % b` = a - b * floor(a / b): ta - tb * (a // b) (between the jumps, where it is one
    side's derivative; the jumps are where the value's floor moves); text formatting (`fmt % x`) has none,
    its text remembered (a parse of it back is refused)."""
    if isinstance(a, (str, bytes)):
        text(a % b)
        return 0
    _operand(a)
    _operand(b)
    if not _zero(ta):
        staircase_fd(operator.mod, (a, b), None, ta)  # (`t - t % 1e-12`: a staircase far finer than t; a jump)
    out = 0 if _zero(ta) else ta
    if not _zero(tb):
        divisor_jump(operator.mod, a, b, tb)  # (`9 % b` at b = 4.5: a jump the divisor moves across)
        out = out - tb * (a // b)
    return out


def fd_eager_items(items: list) -> list:
    """A generator expression's items, as the lowering computes them (eagerly: `lowered.runtime.eager_items`);
    where that differs from Python's lazy run (one object yielded twice), the twin gives up and the call
    runs on duals, by Python's own generator."""
    try:
        return eager_items(items)
    except EagerIterationError:
        raise NotTransformable("a generator expression yielding one changeable object twice") from None


@registry.frule(fd_eager_items)
def _eager_items_frule(tangents, items):
    return fd_eager_items(items), tangents[0]


def fd_eager(items: list):
    """A generator expression as the lowering gives it (an iterator over its items, drawn once, as Python's
    generator is: drawn twice, a list gave its items twice, and `next` could not take it); where the eager
    run differs from Python's lazy one (`fd_eager_items`), the call runs on duals instead."""
    try:
        return eager(items)
    except EagerIterationError:
        raise NotTransformable("a generator expression yielding one changeable object twice") from None


def fd_endless(count: int) -> None:
    """An endless generator expression (`x * k for k in itertools.count()`): the call runs on duals, which
    draw its items as the code asks."""
    try:
        endless(count)
    except EagerIterationError:
        raise NotTransformable("a generator expression over an endless iterator") from None


# the operand types no class's own test method can come with: the guards below pass them at once (a wrapper
# taking `*args` cost a loop's comparison 0.3 us: `derivative` of a 30-step loop 15.6 -> 25.5 us)
_NO_OWN_TEST = frozenset({float, int, bool, complex, np.float64, np.ndarray, Dual, type(None), str})


def _declined(a, b, op) -> None:
    """A tangent twin's guard before a test (`x in obj`, `obj == x`, `a < b`) declines where an operand's own
    class has a Python method for it: natively it would see the active value without its tangent (a
    `__contains__` storing its item: 0 came out); the duals run it as code (`ForwardContext.operator_for`)."""
    if (type(a).__flags__ & _HEAPTYPE or type(b).__flags__ & _HEAPTYPE) and own_test_method(a, b, op) is not None:
        raise NotTransformable(f"a class's own method for `{op}`")


_equality_guard_fd = LOWERING_HELPERS["__od_equality_guard_fd__"]
_COMPARISONS = {id(operator.lt): "<", id(operator.le): "<=", id(operator.gt): ">", id(operator.ge): ">=",
                id(operator.eq): "==", id(operator.ne): "!="}
_FLIPPED_OPS = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_equality_guard2_fd = LOWERING_HELPERS["__od_equality_guard2_fd__"]
_order_watch_fd = LOWERING_HELPERS["__od_order_watch_fd__"]


def fd_equality_guard(active, other, op, tangent, close=None, leaves=None):
    if type(active) not in _NO_OWN_TEST or type(other) not in _NO_OWN_TEST:
        _declined(active, other, op)
    _equality_guard_fd(active, other, op, tangent, close, sys._getframe(1), leaves)
    if op in ORDER_OPS:
        closing_in(sys._getframe(1), active, other, op, tangent)


def fd_equality_guard2(a, b, op, ta, tb, close=None):
    if type(a) not in _NO_OWN_TEST or type(b) not in _NO_OWN_TEST:
        _declined(a, b, op)
    _equality_guard2_fd(a, b, op, ta, tb, close)


def fd_order_watch(a, b, op, ta=None, tb=None, leaves=None):
    if type(a) not in _NO_OWN_TEST or type(b) not in _NO_OWN_TEST:
        _declined(a, b, op)
    _order_watch_fd(a, b, op, ta, tb)
    if leaves is not None and _zero(tb):  # (a loop's end against a bound that does not move: `converged`)
        converged(a, b, op, ta, leaves, sys._getframe(1))
    if type(a) is float and type(b) is float and type(ta) is float and type(tb) is float or type(
            ta) is np.ndarray and type(tb) is np.ndarray and ta.shape == tb.shape:
        closing_in(sys._getframe(1), a, b, op, ta - tb)


def _same(x):
    """`__od_inverted__` in forward mode: the operand itself (its class's `__invert__` runs on its duals)."""
    return x


_text = LOWERING_HELPERS["__od_text__"]


def fd_text(s, *shown):
    """`str(x)`, `repr(x)`, `format(x)` of a value the lowering could not prove constant (`__od_text__`):
    remembered as a differentiated number's text unless x, given, holds no dual (a dict's default
    `values.get("w", 1.0)` of a dict holding a dual: its parse was refused)."""
    if shown and all(type(v) in _PLAIN_NUMBERS for v in shown):  # (a perturbed number is a Dual; an object's
        return s                                                  # text may show one it holds: remembered)
    return _text(s, *shown)


_PLAIN_NUMBERS = frozenset({float, int, bool, complex, np.float64, np.float32, np.int64, np.complex128})


def fd_drawn_check(v, sources) -> None:
    """Before `v op= y` in a twin: v, an array, drawn from a list, tuple, dict or object (`p = arrs[0]`, a
    loop over `zip(params, grads)`): the twin rebinds v's tangent, which the container's tangent would not
    see (gen19 W9: the caller's array changed, its tangent not); the duals change it in place."""
    if isinstance(v, np.ndarray):
        for src in sources:
            if not isinstance(src, (np.ndarray, np.generic, int, float, range, str)) and src is not None:
                raise NotTransformable("an array drawn from a container, changed in place")


def fd_instance_of(x, cls):
    """`__od_instance_of__` in a twin: x's value; a generator the twin ran eagerly asked whether it is one
    reruns on duals (gen21 W11)."""
    x = primal(x)
    if type(cls) is not str and asks_a_generator(x, cls):
        raise NotTransformable("isinstance asked of a generator run eagerly")
    return x


def fd_eager_raised(e) -> None:
    """A generator's twin, run eagerly, raised e: its consumer may stop before the item that raises (gen21
    C4); the call reruns on duals, which draw items as the code asks."""
    raise NotTransformable(f"a generator raised {type(e).__name__} while run eagerly") from e


class _Unswallowing(Unswallowing):
    """`with m:` in a twin where m's class has a Python `__exit__` (`__fd_managed__`): the twin's giving up
    (NotTransformable, a BaseException) is not m's to swallow either (a `__exit__` returning True took the
    give-up for the code's error, and stored its message as the result: gen21 W5)."""
    __slots__ = ()

    def stops(self, ev) -> bool:
        return isinstance(ev, NotTransformable) or super().stops(ev)


def fd_managed(m):
    return _Unswallowing(m) if type(getattr(type(m), "__exit__", None)) is types.FunctionType else m


# the helpers every twin reads as free variables, one cell each: `__fd_call__` is fd_call, ...
HELPER_CELLS = {name: types.CellType(fn) for name, fn in {
    **{f"__{fn.__name__}__": fn for fn in (fd_cat, fd_sub, fd_call, fd_mcall, fd_getitem, fd_subscript, fd_slice_tangent, fd_attr, fd_attr0, fd_pow, fd_matmul,
                                           fd_setitem, fd_sync, fd_bound, fd_args_back, fd_out, fd_star, fd_bc, fd_mul, fd_div, fd_floordiv, fd_mod,
                                           fd_callee, fd_drawn_check, fd_managed)},
    "__fd_numbers__": _NUMBERS, "__fd_sequences__": (list, tuple), "__fd_isinstance__": isinstance,
    "__fd_list__": list, "__fd_tuple__": tuple, "__fd_moved__": _MOVED, "__fd_giveup__": NotTransformable,
    **LOWERING_HELPERS, "__od_primal__": primal, "__od_instance_of__": fd_instance_of, "__od_rounded__": fd_rounded, "__od_eager_items__": fd_eager_items,
    "__od_eager__": fd_eager, "__od_endless__": fd_endless, "__od_eager_raised__": fd_eager_raised,
    "__od_equality_guard_fd__": fd_equality_guard, "__od_equality_guard2_fd__": fd_equality_guard2,
    "__od_order_watch_fd__": fd_order_watch, "__od_not_swallowed__": fd_not_swallowed, "__od_text__": fd_text, "__od_inverted__": _same}.items()}


def _twin(f: types.FunctionType, tans: tuple):
    """f's tangent twin for the parameters tans perturbs, or NotTransformable. The twin of a function
    without cells of a module is made once per twin code, globals and defaults (a call made a function
    object, a tenth of a nested call's cost); one whose cells hold leaves (`leaves.leaf_cells`: numbers, a
    module, float arrays) is kept for the last such f by a weak reference to it, dropped when f dies, so
    that the cache keeps the cells alive no longer than f does (made per call, it cost a seventh of
    `derivative` of a loop closed over its count); others are made per call."""
    code = f.__code__
    twin_code = tangent_twin(f, _active_params(code, tans))
    if f.__closure__ is not None:
        key = (id(code), id(twin_code))
        last = _closed_map.get(key)
        if (last is not None and last[0]() is f and last[1] is twin_code and last[2] is f.__globals__
                and last[3] is f.__defaults__ and last[4] is f.__kwdefaults__):
            return last[5]
        twin = make_twin(f, twin_code, HELPER_CELLS)
        if leaf_cells(f.__closure__) and of_a_module(f):
            entry = (_WeakRef(f, functools.partial(_forget_closed, key)), twin_code, f.__globals__, f.__defaults__,
                     f.__kwdefaults__, twin)
            if last is not None:  # (the key is code's already: replaced, not listed again under its owner)
                _closed_map[key] = entry
            else:
                _closed.put(code, key, entry)
        return twin
    key = (id(code), id(twin_code))
    last = _made_map.get(key)
    if (last is not None and last[0] is twin_code and last[1] is f.__globals__ and last[2] is f.__defaults__
            and last[3] is f.__kwdefaults__):
        return last[4]
    twin = make_twin(f, twin_code, HELPER_CELLS)
    if of_a_module(f):
        _made.put(code, key, (twin_code, f.__globals__, f.__defaults__, f.__kwdefaults__, twin))
    return twin


# (id(fn's code), id(its twin's code)) -> (twin code, globals, defaults, kwdefaults, the twin made on them)
_made = OwnedEntries()
_made_map = _made.data
on_clear(_made.clear)
# the same for the last function with cells of each code: -> (weak reference to it, twin code, globals,
# defaults, kwdefaults, the twin made on them)
_closed = OwnedEntries()
_closed_map = _closed.data
on_clear(_closed.clear)
_WeakRef = weakref.ref


def _forget_closed(key, ref) -> None:
    """The function whose twin `_closed` kept by the weak reference ref died: the twin (its cells) goes too."""
    last = _closed_map.get(key)
    if last is not None and last[0] is ref:
        del _closed_map[key]


def _active_params(code, tans: tuple) -> frozenset:
    """The parameters given a nonzero tangent by position: the positional ones, then `*args` for the rest
    (keyword-only parameters are never filled by position)."""
    n = code.co_argcount
    if len(tans) <= n:  # (the common case: one positional parameter perturbed, no set built)
        one = -1
        for i, t in enumerate(tans):
            if not (t is None or (type(t) in _SCALARS and t == 0)):  # (`_zero`, inline)
                if one >= 0:
                    break
                one = i
        else:
            if one >= 0:
                return _named(code.co_varnames[one])
    active = {name for name, t in zip(code.co_varnames[:n], tans) if not _zero(t)}
    if len(tans) > n and code.co_flags & inspect.CO_VARARGS and any(not _zero(t) for t in tans[n:]):
        active.add(code.co_varnames[n + code.co_kwonlyargcount])
    return frozenset(active)


def _named(name: str) -> frozenset:
    found = _ONE.get(name)
    if found is None:
        found = _ONE[name] = frozenset((name,))
    return found


_ONE: dict[str, frozenset] = {}  # a parameter's name -> the set of it alone (names are few: bounded)


def tangent_jvp(f, primals: tuple, tangents: tuple):
    """(f(*primals), its tangent) by the tangent twin; NotTransformable when f is out of its reach."""
    if type(f) is not types.FunctionType:
        raise NotTransformable("not a plain function")
    tans = tangents if len(tangents) == 1 and tangents[0] is not None else tuple(
        0 if t is None else t for t in tangents)
    twin = _twin(f, tans)
    if _depth._runs:  # (inside an entry point's run: the recursion limit is raised already)
        return twin(tans, *primals)
    _depth.enter()
    try:
        return twin(tans, *primals)
    finally:
        _depth.leave()
