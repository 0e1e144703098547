"""The reverse-mode runtime: `J` (here `call`) for every callee, and the helpers generated code uses.

`call(mask, f, *args, **kwargs) -> (y, pullback)` is Zygote's J: a primitive with a rule runs and keeps what
its adjoint needs; a pure-Python function runs its recording forward twin and keeps the tape for its adjoint;
a primitive without a rule reached with differentiable inputs is an error naming it and the user's line.
A pullback is a tuple `(back, ...)`; `back(pb, dy, dself, S) -> (dfn, dargs, dkwargs)`, where `dfn` is the
cotangent of the function object (of `self` for a bound method, of the captured cells for a closure) and
`S` the reverse pass's `Session`.
"""

from __future__ import annotations

import ast
import builtins
import collections.abc
import contextlib
import copy
import contextvars
import dataclasses
import datetime
import functools
import inspect
import math
import gc
import numbers
import operator
import os
import re
import sys
import threading
import dis as _dis
import types
import weakref
from decimal import Decimal
from fractions import Fraction

import numpy as np

import overdub
from overdub.errors import MarkedOpaque, OverdubError, SourceUnavailable, mark_lost
from overdub.passes import (OwnedEntries, bound_by_descriptor, collector, compile_twin, found_elsewhere, get_source,
                            mangle_private, marked_opaque, of_a_module, on_clear, original_code, stored_attribute)

from ..rules.generic import integral
from ..rules.watch import JUMP_WATCH, watch_call
from ..rules.numpy.creation import python_ufunc_method, _length_jump as arange_length_jump
from ..rules.numpy.reductions import UFUNC_METHOD_OUT
from ..rules.numpy.inplace import refuse_overlapping_out, write_into
from ..rules.numpy.objects import holds_objects, object_form
from ..rules.numpy.stand_ins import vectorized
from ..rules.builtins import getitem_iteration
from ..rules.operator import scaled_duration
from ..rules.frames import is_engine_class, note_transformed, outside_engine
from ..rules.numpy._util import finalize_refused, masked_entries, masked_refused
from ..rules.numpy.masked import computes_by_its_code, masked_ufunc_pullback, takes_data
from ..rules.registry import C_METHOD as registry_C_METHOD, changes_values, library_hint
from ..rules import leaves as _leaf_types
from ..rules.leaves import HELD_VALUES, LABEL_TYPES, OPAQUE_CONTAINERS, ArrayLeaf, Scalar, carries_none, leaf_cells, np_dtype
from ..rules.registry import (HOT_REDUCE_OPTIONS, PLAIN_OPERANDS, NoDerivative, NoRuleError, array_objects, by_position, key_of,
                              objects_of_classes, own_method_form, own_number_operands, protocol_objects, qualified_name, registry, through_array,
                              through_protocol)
from .codegen import ARGUMENTS_ONLY, CELLS_CONSTANT, EVERY_ARGUMENT, FRESH_SELF, HELPERS, KW_ACTIVE, generate
from ..lowered.activity import NONDIFF_BUILTINS, cells_callees_may_change, cells_rebound_by_callees, state_cells
from ..lowered.lower import Unsupported, lower
from ..lowered.runtime import equality_guard
from ..lowered.runtime import (_INT_CASTS, int_cast_jump, JUMP_FUNCTIONS, ORDER_METHODS, axis_of, jump_active, jump_guard, jump_operands, STAIRS, dataclass_init, dataclass_init_is_code, is_stair as _stairs, parsed, remembered_text, staircase_reverse, stair_method, divisor_jump,
                               dataclass_init_as, generated_init_owner,
                               text_of as _text_of, unpack)
from ..forward.arrays import out_position as _out_position
from ..forward.dual import Dual as _Dual, primal as _primal
from ..rules.cotangents import NEEDED as _NEEDED, Refused, SeqBox, Tangent, acc, fields_of, has_fields, own_dict
from .structs import CHANGES, LAST_CHANGE, UNKNOWN_CHANGE, RECORDING_START, TICKS, Bare, _not_handed, bottom, changed

__all__ = ["call", "UnsupportedFunction", "twin_source"]

_OBSERVED = object()  # in a twin's cache key: an observed twin (contexts.ad.observe)
_NOKW: dict = {}  # never mutated
_NO_CELLS = frozenset({"<no cells>"})  # in an activity key: captured variables are constants


class NoSource(NoRuleError):
    """A Python function whose source cannot be had (made by `exec`, or edited since import)."""


class UnsupportedFunction(OverdubError):
    """A Python function uses a construct the reverse-mode transform does not handle."""


# -- rules ---------------------------------------------------------------------------------------

_rules = registry.rules
_CONSTANT_GENERATORS = registry.constant_generators
_BASE_CONTAINERS = (list, dict, tuple)


_BUILTIN = types.BuiltinMethodType  # also the type of builtin functions such as math.sin
# a C type's method of `METH_METHOD` bound to its object (`builtin_method`, a subclass of the above): an XML
# element's `findtext` on Python 3.12+ ran as a call without rule of constants, its object unchecked (a number
# stored into the element came back without its derivative: 0 for 3)
_C_METHOD = registry_C_METHOD
_NDARRAY = np.ndarray


def _matrix_refused():
    from ..rules.numpy._util import matrix_refused  # (rules below the modes: loaded by now)
    return matrix_refused()
_MASKED = np.ma.MaskedArray
_TYPE_CALL = type.__dict__["__call__"]
_VIEW = np.ndarray.view  # (numpy.ma's own code takes a masked array's values by it: `._data`)
_FLOAT64 = np.float64
_F8 = np.dtype(np.float64)
_WRAPPER = types.MethodWrapperType  # (1.0).__mul__
_CellType = types.CellType
_UFUNC = np.ufunc
_MADE_STAND_INS = registry.made_stand_ins  # (type -> its stand-in maker: numba's dispatchers, `rules.numba`)
_DISPATCHER = type(np.diff)  # numpy's array-function dispatchers wrap a Python implementation
_FunctionType = types.FunctionType
_MethodType = types.MethodType


_TUPLE_NEW = tuple.__new__
_FLOAT_NEW = float.__new__
_NDARRAY_NEW = np.ndarray.__new__
_OBJECT_SLOTS = {name: getattr(object, name) for name in ("__getattribute__", "__setattr__")}
_OBJECT_INIT = object.__init__
_OBJECT_GETATTRIBUTE = object.__getattribute__  # (its Python, `rules.builtins`: also on an array subclass's own
# `__getattribute__`, numpy's recarray, whose arguments are arrays, plain to `objects_of_classes`)
_OBJECT_DTYPE = np.dtype(object)
_PLAIN_TYPES = frozenset({float, int, bool, complex, str, bytes, type(None), np.ndarray, np.float64, np.float32,
                          np.int64, np.complex128, np.bool_})


_CONVERTING = frozenset({"math", "cmath"})  # (modules whose C functions take numbers by `__float__`/`__index__`)


def _numpy_function(f) -> bool:
    """f is numpy's (a ufunc, or a function of numpy's modules): it converts other objects to arrays."""
    return type(f) is _UFUNC or (getattr(f, "__module__", None) or "").startswith("numpy")


def _rule_of(f):
    """(rule, is_method) for f; is_method when the rule is keyed by (type, name) of a bound C method."""
    try:
        rule = _rules.get(f)
    except TypeError:  # unhashable callable
        return None, False
    if rule is not None or (type(f) is not _BUILTIN and type(f) is not _WRAPPER and type(f) is not _C_METHOD):
        return rule, False
    key = key_of(f)
    if type(key) is tuple:
        rule = _rules.get(key)
        if rule is None and issubclass(key[0], np.generic):  # numpy scalars act as 0-d arrays
            rule = _rules.get((np.ndarray, key[1])) or _rules.get((np.generic, key[1]))
        elif rule is None and issubclass(key[0], np.ndarray):
            # a C method an ndarray subclass inherits (astropy's `Quantity.view`): ndarray's rule
            rule = _rules.get((np.ndarray, key[1]))
        elif rule is None and issubclass(key[0], _BASE_CONTAINERS):
            # a C method a subclass inherits (`Result(dict)`, OrderedDict, defaultdict): the base's rule
            for base in key[0].__mro__[1:]:
                rule = _rules.get((base, key[1]))
                if rule is not None:
                    break
        elif rule is None and type(f) is _WRAPPER and f.__objclass__ is not key[0]:
            # a number's C slot its subclass inherits (`super().__float__()` in a float subclass's own
            # `__float__`): the rule of the class defining it, which reads the stored value
            rule = _rules.get((f.__objclass__, key[1]))
        return rule, True
    return None, False


def _unknown_back(dy, args) -> tuple:
    """The arguments' cotangents from an unknown one (`cotangents.Refused`: a rule downstream knows no
    derivative in a value computed here): unknown as well wherever an argument can carry one, so that it is
    dropped at a constant (scipy.stats' `argsreduce` broadcasting a literal shape parameter, which stdtr has
    no derivative in) and refused at a differentiated input; never a zero."""
    return tuple(None if a is None or isinstance(a, (bool, int, str, bytes, np.integer, np.bool_)) or (
        type(a) is _NDARRAY and a.dtype.kind in "biuSUO") else dy for a in args)


def _static_back(pb, dy, dself, S):
    _, adj, y, args, kw, is_method = pb
    if type(y) is list and id(y) in S.boxes:  # (its items' cotangents from where they were written through
        dy = S.box(y, dy)                      # another name for it: `d = copy.copy({'w': w}); d['w'][1] = x`)
    if dy is None or type(y) is not float and _stepped(y, args):
        # no cotangent gives none; nor does a value of integers
        return dself, (None,) * (len(args) - is_method), None
    if type(dy) is float and dy == 0.0:
        grads = _zero_through(adj, y, args, kw)
        return (acc(dself, grads[0]), grads[1:], None) if is_method else (None, grads, None)
    if type(y) is _MATRIX:  # (a rule's result recorded past `call`'s matrix views: `rules.numpy.matrix`)
        raise _matrix_refused()
    if _leaf_types.HOSTED:
        dy, y, args, kw = _on_values(dy, y, args, kw)
    try:
        grads = adj(dy, y, *args, **kw) if kw else adj(dy, y, *args)
    except TypeError:  # forward-over-reverse: the rule met forward-mode duals it cannot convert
        grads = _adjoint_on_duals(adj, dy, y, args, kw)
    except NoDerivative:
        if type(dy) is not Refused:
            raise
        grads = _unknown_back(dy, args)  # (a use of an unknown cotangent: unknown wherever it may go)
    dkw = None
    if kw and len(grads) == len(args) + 1 and type(grads[-1]) is dict:  # keyword cotangents
        grads, dkw = grads[:-1], grads[-1]
    if adj in CALLBACK_ADJOINTS and (closures := _closures_given(args)) is not None:
        grads = _boxed_cells(S, grads, closures)  # (quad's integrand, brentq's function: `_boxed_cells`)
    if is_method:
        return acc(dself, grads[0]), grads[1:], dkw
    return None, grads, dkw


def _on_values(dy, y, args, kw):
    """A rule's adjoint given arrays of a type registered with `host` (torch tensors) gets their values,
    ndarrays, as numpy's rules compute with (`np.sin(t)`, torch's functions mapped onto numpy's rules): numpy
    cannot mix with a tensor (`ndarray * tensor` is a TypeError, `dtype.kind` is no tensor's)."""
    H = _leaf_types.HOSTED
    if not (isinstance(y, H) or isinstance(dy, H) or _leaf_types.holds_hosted(args)
            or kw and _leaf_types.holds_hosted(kw.values())):
        return dy, y, args, kw
    hosted = _leaf_types.hosted
    return (hosted(dy), hosted(y), tuple(hosted(a) for a in args),
            kw and {k: hosted(v) for k, v in kw.items()})


# the adjoints of rules given a Python function they differentiate by reverse mode (quad, brentq: `callbacks`)
CALLBACK_ADJOINTS: set = set()


_ANY_COUNT = 1 << 30
_MATRIX = np.matrix


def _plan(rule, f) -> tuple:
    """Reverse mode's plan for a rule (kept on it: `Rule.plan`), for `call`'s common case — a primitive with
    an adjoint, called on positional arguments of plain types: `(run, adjoint, at most this many
    arguments, hot, hot_reduce, hot_one, hot_float, by_need)`, where run computes f's value (`Rule.impl` or f). Empty where the
    general path decides: rules that iterate, mutate or have no adjoint, and calls passing numpy's `out`
    by position (more arguments than the plan takes)."""
    if rule.adjoint is None or rule.iterates or rule.mutating or rule.kind == "nondiff" or _stairs(f) \
            or rule.stand_in is not None:
        plan = ()  # (a rounding by a step, `np.mod`: checked on the general path, `STAIRS`; a stand-in is code)
    else:
        kind = type(f)
        most = (f.nin if kind is _UFUNC else _out_position(f) % _ANY_COUNT if kind is _DISPATCHER
                else _ANY_COUNT)
        if id(f) in _INT_CASTS:  # (`np.asarray(x, "int64")`, `np.array(x, "U20")`: a dtype given, checked on the
            most = 1             # general path, `int_cast_jump`; taken here by a plain string, it was not)
        elif rule.fn in _RECASTS:  # (`x.view("i8")`, `x.astype("U20")`: `_reinterpreting_view`, likewise)
            most = 0
        plan = (rule.impl or f, rule.adjoint, most, rule.hot, rule.hot_reduce, rule.hot_one, rule.hot_float,
                bool(rule.meta.get("by_need")))
    rule.plan = plan
    return plan



def _stepped(y, args) -> bool:
    """y, a rule's value, is made of integers (`generic.integral`) cut from its arguments' values: no
    cotangent reaches them. Not a view of a float argument's memory in an integer dtype (`x.view(np.int64)`:
    the bits of the floats, whose rule refuses it)."""
    if not integral(y):
        return False
    if type(y) is _NDARRAY and y.base is not None:
        for a in args:
            if isinstance(a, np.ndarray) and a.dtype.kind in "fc" and np.may_share_memory(a, y):
                return False
    return True


def _zero_through(adj, y, args, kw) -> tuple:
    """The cotangents of args for a cotangent of exactly 0.0: none, but NaN for an argument where the rule's
    partial is infinite there (0 * inf: `math.cbrt(x) ** 3` at 0, whose power's cotangent 3 cbrt(0)**2 is 0 --
    its zero taken for no change gave 0 for the slope 1, silently, in both modes). The entry points then take
    such a NaN from forward mode or the two sides of the point (`compose._nan_by_sides`), or leave it NaN
    (`np.sqrt(x) * 0` at 0: no side left of the domain's edge); a zero that meets no infinite partial is none,
    as before. The rule is asked with a cotangent of 1 (not for adjoints that run the user's code)."""
    none = (None,) * len(args)
    if adj in CALLBACK_ADJOINTS or not any(type(a) is float or type(a) is _FLOAT64 for a in args):
        return none
    try:
        with np.errstate(all="ignore"):
            unit = adj(1.0, y, *args, **kw) if kw else adj(1.0, y, *args)
    except (ZeroDivisionError, OverflowError):
        unit = None  # (a Python float's division at the singular point: infinite)
    except Exception:  # (anything else the rule refuses: no cotangent, as before)
        return none
    out = []
    for i, a in enumerate(args):
        if type(a) is not float and type(a) is not _FLOAT64:
            out.append(None)
            continue
        p = None if unit is None else unit[i] if i < len(unit) else None
        if unit is None or type(p) in (float, _FLOAT64, complex) and not math.isfinite(abs(p)):
            out.append(math.nan if type(a) is float else _FLOAT64(math.nan))
        else:
            out.append(None)
    return tuple(out)


def _plain_back(pb, dy, dself, S):
    """`_static_back` for the plan's calls: a function (not a method) of positional arguments."""
    _, adj, y, args = pb
    if type(y) is list and id(y) in S.boxes:  # (as `_static_back`)
        dy = S.box(y, dy)
    if dy is None or type(y) is not float and _stepped(y, args):
        return None, (None,) * len(args), None  # (as `_static_back`; a float is never `integral`: no call)
    if type(dy) is float and dy == 0.0:
        return None, _zero_through(adj, y, args, _NOKW), None
    if _leaf_types.HOSTED:
        dy, y, args, _ = _on_values(dy, y, args, None)
    try:
        return None, adj(dy, y, *args), None
    except TypeError:  # forward-over-reverse: the rule met forward-mode duals it cannot convert
        return None, _adjoint_on_duals(adj, dy, y, args, _NOKW), None
    except NoDerivative:
        if type(dy) is not Refused:
            raise
        return None, _unknown_back(dy, args), None  # (a use of an unknown cotangent: unknown wherever it may go)


def hot_float_call(f, x):
    """`call(mask, f, x)`'s case of a math function of a float with a float partial (`Rule.hot_float`:
    `math.sin(x)`), for a twin's call of a module's C function on one argument (`codegen`), without `call`'s
    other tests; None for anything else, which the twin then hands to `call` (whose tests say the same)."""
    if type(x) is float and type(f) is _BUILTIN and not _TEXTS and not _overriding:
        rule = _rules.get(f)  # (a builtin function or method hashes by identity: no TypeError)
        if rule is not None:
            plan = rule.plan
            if plan and plan[6] is not None:  # (a builtin's plan takes any number of arguments)
                y = plan[0](x)
                if type(y) is float:
                    return y, (_float_back, plan[6], y, x, plan[1])
                return y, (_plain_back, plan[1], y, (x,))
    return None


def _needed_back(pb, dy, dself, S):
    """`_plain_back` for a rule marked `meta["by_need"]`, its adjoint told which arguments the call may
    differentiate (`cotangents.NEEDED`: the others' partials are not computed)."""
    _, adj, y, args, mask = pb
    outer, _NEEDED.mask = _NEEDED.mask, mask
    try:
        return _plain_back((None, adj, y, args), dy, dself, S)
    finally:
        _NEEDED.mask = outer


def pull_one(pb, dy):
    """The cotangent of the one argument of a call whose pullback is a built-in one (`ONE_BACKS`), by that
    pullback's first case, for the adjoint's call sites (`codegen._Gen.pulled_one`): the same value without
    the pullback's call, its tuples and the site's tests of the callee's object. None where that case does
    not hold (the site then calls the pullback, which tests again: the cases below have no side effects
    where they give None)."""
    back = pb[0]
    if back is _float_back:  # (a math function of a float: scalar code's every call, first)
        if type(dy) is float and dy != 0.0:
            try:
                return dy * pb[1](pb[2], pb[3])
            except ZeroDivisionError:  # (a singular point: the pullback's adjoint's)
                pass
    elif back is _hot_back:
        y, x = pb[2], pb[3]
        if type(dy) is _NDARRAY and dy.dtype is _F8 and dy.shape == x.shape and type(y) is _NDARRAY and y.dtype is _F8:
            return pb[1](dy, y, x)
    elif back is _hot_reduce_back:
        if not pb[5] and type(pb[2]) is _FLOAT64 and dy is not None and type(dy) is not Refused:
            return pb[1](dy, pb[2], pb[3])  # (None: not the hot case, `_static_back`'s)
    elif back is _f8_back:
        if (type(dy) is _FLOAT64 or type(dy) is float) and dy != 0.0:
            g = pb[1](dy, pb[2], pb[3])
            if type(g) is _FLOAT64:
                return g
            if type(g) is float:
                return _FLOAT64(g)
    return None


def _float_back(pb, dy, dself, S):
    """`_plain_back` for a one-argument primitive of a float with a float value and a float partial
    (`Rule.hot_float`: `math.sin(x)`): a nonzero float cotangent times the partial, without the rule's adjoint
    (half the cost of the pull back). Anything else -- None, 0.0, a dual cotangent (forward over reverse), a
    partial dividing by zero (sqrt's at 0) -- is the rule's adjoint's, as before."""
    _, partial, y, x, adj = pb
    if type(dy) is float and dy != 0.0:
        try:
            return None, (dy * partial(y, x),), None
        except ZeroDivisionError:  # (a singular point: the adjoint's `_singular`)
            pass
    return _plain_back((None, adj, y, (x,)), dy, dself, S)


def _f8_back(pb, dy, dself, S):
    """`_hot_back` for a numpy float64 scalar (a reduction's value: `np.log(np.sum(e))`): its `hot` cotangent
    for a nonzero real cotangent, as a float64 (the type the rule's adjoint gives; half its cost)."""
    _, hot, y, x, adj = pb
    if (type(dy) is _FLOAT64 or type(dy) is float) and dy != 0.0:
        g = hot(dy, y, x)
        if type(g) is _FLOAT64:
            return None, (g,), None
        if type(g) is float:
            return None, (_FLOAT64(g),), None
    return _plain_back((None, adj, y, (x,)), dy, dself, S)


def _hot_back(pb, dy, dself, S):
    """A one-argument rule's pullback on a float64 array: its `hot` cotangent when dy is the usual one."""
    _, hot, y, x, adj = pb
    if type(dy) is _NDARRAY and dy.dtype is _F8 and dy.shape == x.shape and (
            type(y) is _NDARRAY and y.dtype is _F8 or not _stepped(y, (x,))):  # (a float64 array: not stepped)
        return None, (hot(dy, y, x),), None
    return _static_back((None, adj, y, (x,), None, False), dy, dself, S)


def _one_back(pb, dy, dself, S):
    """A two-argument rule's pullback when the caller differentiates argument i alone, a float64 array: its
    `hot_one` cotangent when dy is the usual one (the other argument's is never computed)."""
    _, hot, y, args, i, adj = pb
    if type(dy) is _NDARRAY and dy.dtype is _F8 and dy.shape == args[i].shape and (
            type(y) is _NDARRAY and y.dtype is _F8 or not _stepped(y, args)):
        return None, ((hot(dy, y, *args, 0), None) if i == 0 else (None, hot(dy, y, *args, 1))), None
    return _plain_back((None, adj, y, args), dy, dself, S)


def _hot_reduce_back(pb, dy, dself, S):
    """A reduction's pullback on a float64 array: its `hot_reduce` cotangent where dy is the usual one."""
    _, hot, y, x, adj, kw = pb
    if dy is not None and type(dy) is not Refused and (type(y) is _FLOAT64 or not _stepped(y, (x,))):
        # (else the rule's, `_static_back`; a sum's float64 is not stepped: no call)
        g = hot(dy, y, x, **kw) if kw else hot(dy, y, x)
        if g is not None:
            return None, (g,), None
    return _static_back((None, adj, y, (x,), kw, False), dy, dself, S)


def _adjoint_on_duals(adj, dy, y, args, kw):
    """Run a rule's adjoint under forward mode: its numpy calls then see the duals through their frules."""
    from ..forward.dual import top_tag
    if top_tag((dy, y) + tuple(args)) is None:
        raise
    from ..forward.context import ForwardContext
    return ForwardContext().run(adj, dy, y, *args, **kw)


def _rrule_on_duals(rrule, args, kw):
    """An rrule and its pullback run under forward mode, whose rules take the duals (`math.fsum` of a
    list of them). Not retried when an argument is an iterator the first try may have drawn from."""
    from ..forward.arrays import has_dual
    from ..forward.context import ForwardContext
    values = tuple(args) + tuple(kw.values())
    if not any(has_dual(a) for a in values) or any(isinstance(a, collections.abc.Iterator) for a in values):
        raise
    y, back = ForwardContext().run(rrule, *args, **kw)
    return y, lambda dy: ForwardContext().run(back, dy)


def _held_for(S, owner) -> None:
    """Before an in-place rule's pullback: refused where it would read the caller's cotangent of the
    array whose method it is but the call was not written `a.method(...)` (`structs.Bare`)."""
    if type(S.dins) is Bare and isinstance(owner, (np.ndarray, _Dual)):
        raise _not_handed("the array whose method it is, called through a variable holding the bound method")


def _inplace_back(pb, dy, dself, S):
    """An in-place rule's pullback (pb: the rule's own back, and the object of a bound method or None)."""
    _held_for(S, pb[2])
    try:
        r = pb[1](S, dy, dself)
    finally:
        S.dins = None  # (handed for this call only)
    if len(pb) > 3 and integral(pb[3]) and r[1]:  # (an integer array written, `t.fill(v)`, `np.put(t, i, v)`:
        # v's values cut to steps, gen17 W2: no cotangent but the written array's own, a function's first)
        kept = () if pb[2] is not None else r[1][:1]
        r = (r[0], kept + (None,) * (len(r[1]) - len(kept))) + tuple(r[2:])
    return r if len(r) == 3 else (r[0], r[1], None)  # (3: keyword cotangents too)


def _mutating_back(pb, dy, dself, S):
    _, adj, y, args, kw, is_method = pb
    _held_for(S, args[0] if is_method else None)
    try:
        dself, grads = adj(S, dself, dy, y, *args, **kw)
    finally:
        S.dins = None
    if is_method and integral(args[0]):  # (`t.fill(v)`, `t.put(i, v)` of an integer array: v's values cut to
        grads = (None,) * len(grads)  # steps, derivative 0; gen17 W2)
    return dself, grads, None


def _rrule_back(pb, dy, dself, S):
    _, back, nargs, is_method, closures = pb
    if dy is None:
        return dself, (None,) * (nargs - is_method), None
    grads = back(dy)
    if closures is not None:
        grads = _boxed_cells(S, grads, closures)
    dkw = None
    if len(grads) == nargs + 1 and type(grads[-1]) is dict:  # keyword cotangents
        grads, dkw = grads[:-1], grads[-1]
    if is_method:
        return acc(dself, grads[0]), tuple(grads[1:]), dkw
    return None, tuple(grads), dkw


def values_refused(what: str, a) -> None:
    """a, an ndarray subclass's instance met by a rule or an operator's adjoint: refused where its values are not
    what the rule's formula sees -- a masked array with masked entries (its reductions and operators skip
    them) or a class whose `__array_finalize__`/`__array_wrap__` change them (`registry.changes_values`)."""
    if isinstance(a, _MASKED):
        if masked_entries(a):
            raise masked_refused(what)
    elif changes_values(type(a)):
        raise finalize_refused(type(a))


def overriding_refused(what: str, *args, dunder: str | None = None) -> None:
    """Refused: an ndarray subclass among args computing what numpy's rule differentiates by code of its own
    that the engine does not run: its `__array_ufunc__` under an operator it has no method for (`a * 3.0` of a
    subclass doubling every ufunc's result: `dunder`), its `__array_function__` under a numpy function
    without a Python `__array_ufunc__` beside it (an astropy Quantity's are run as its code). Its values follow
    that code, numpy's derivatives do not (6 for 12, 2 for 4, pkJ W6)."""
    for a in args:
        t = type(a)
        if t is not _NDARRAY and t is not _Dual and isinstance(a, np.ndarray):
            values_refused(what, a)
        if t is _NDARRAY or not isinstance(a, np.ndarray) or t is _Dual or t.__module__.startswith("numpy"):
            continue
        ufunc = type(getattr(t, "__array_ufunc__", None)) is types.FunctionType
        if dunder is not None:
            refused = ufunc and own_dunder(t, dunder) is None
        else:
            refused = not ufunc and type(getattr(t, "__array_function__", None)) is types.FunctionType
        if refused:
            raise UnsupportedFunction(
                f"reverse mode does not differentiate {what} of a {t.__name__}, an ndarray subclass computing "
                "numpy's functions by its own `__array_ufunc__` or `__array_function__`", where=_user_line(),
                fix="compute on its values (`np.asarray(a)`) and apply what the subclass does by hand, or give "
                    "the computation a rule (`@contexts.custom_adjoint`)")


def _closures_given(args):
    """((position, closure), ...) of the closures (and functions with defaults) among a rule's arguments
    (quad's integrand, brentq's function, derivative's), or None."""
    closures = None
    for i, a in enumerate(args):
        if type(a) is types.FunctionType and (a.__closure__ or a.__defaults__):
            closures = (closures or ()) + ((i, a),)
    return closures


_FUNCTION_KINDS = (types.FunctionType, types.MethodType, types.BuiltinFunctionType, functools.partial, type, np.ndarray)


def _boxed_cells(S, grads, closures):
    """The cotangents a rule gives for closures it was handed (`quad(g, ...)`, `derivative(g, t)`), their parts
    for the lists, dicts and objects the closures' cells hold moved into those objects' boxes now, at the
    call: handed back where the closure was made, they reached the object as it was then (`lst = [x]; g =
    lambda t: lst[0] * t; lst[0] = x * x; quad(g, 0, 1)`: x's derivative, 1.0 for 1.6, gen23 W4). An array
    cell changed in place while recording is refused: its cotangent has no box, and the change may have come
    after the closure was made."""
    grads = list(grads)
    for i, fn in closures:
        g = grads[i] if i < len(grads) else None
        if not isinstance(g, Tangent):
            continue
        rest = Tangent(g)
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            part = rest.get(name)
            if part is None:
                continue
            v = _cell_value(cell)
            if isinstance(v, (list, dict)) or has_fields(v) and not isinstance(v, _FUNCTION_KINDS):
                # (an object of fields, callable too: `RkDenseOutput`, an interpolant captured by solve_ivp's event
                # closure and kept in the solution's list. Left with the closure, its cotangent reached the object
                # both through the closure's cell and through the list's box: the direct part twice, gen of sweep T)
                S.box(v, rest.pop(name))
            elif isinstance(v, np.ndarray) and (made := _MADE_AT.get(id(fn))) is not None and made[0]() is fn \
                    and LAST_CHANGE.get(id(bottom(v)), 0) > made[1]:
                raise UnsupportedFunction(
                    f"reverse mode cannot differentiate {fn.__qualname__}, handed to a rule, through `{name}`, an "
                    "array it captured that was changed in place after the closure was made: its derivative would "
                    "be taken as of when the closure was made", where=_user_line(),
                    fix=f"pass `{name}` to the function as an argument, or make the closure after the change")
        defaults = rest.get("__defaults__")
        if defaults is not None and fn.__defaults__:  # (`def g(t, st=state)`: the default's object, as a cell's)
            kept = list(defaults)
            for j, (part, v) in enumerate(zip(kept, fn.__defaults__)):
                if part is not None and (isinstance(v, (list, dict)) or has_fields(v) and not callable(v)
                                         and not isinstance(v, np.ndarray)):
                    S.box(v, part)
                    kept[j] = None
            rest["__defaults__"] = type(defaults)(kept) if any(k is not None for k in kept) else None
        grads[i] = rest if _any_given(rest) else None
    return tuple(grads)


# -- rules an ADContext block gives: `ADContext(rules={fn: rrule})` ------------------------------------

_overrides: contextvars.ContextVar = contextvars.ContextVar("overdub_ad_rules", default=None)
_overriding = 0  # blocks giving rules, open in any thread: while none is, `call` pays one test
_overriding_lock = threading.Lock()


def override_rules(rules: dict):
    """Give, in the calling context (thread, task) until `restore_rules(token)`, fn the rrule
    `rules[fn]` (a bound method whose function is a key: that rule, its object passed first)."""
    global _overriding
    outer = _overrides.get()
    token = _overrides.set(rules if outer is None else {**outer, **rules})
    with _overriding_lock:
        _overriding += 1
    return token


@contextlib.contextmanager
def watching():
    """`call` notes the branches of `rules.watch.PIECEWISE` functions for the rule sampling a function
    (quad's integrand): it takes the path of blocks giving rules, one test per call, only meanwhile."""
    global _overriding
    with _overriding_lock:
        _overriding += 1
    try:
        yield
    finally:
        with _overriding_lock:
            _overriding -= 1


def restore_rules(token) -> None:
    global _overriding
    _overrides.reset(token)
    with _overriding_lock:
        _overriding -= 1


def given_rule(f, args: tuple):
    """(the rrule the enclosing block gives f, its arguments: a bound method's object first), or None."""
    rules = _overrides.get()
    if rules is None:
        return None
    try:
        rrule = rules.get(f)
    except TypeError:  # an unhashable callable
        return None
    if rrule is not None:
        return rrule, args
    if type(f) is types.MethodType and f.__func__ in rules:
        return rules[f.__func__], (f.__self__,) + args
    return None


def _overridden_call(f, args, kw):
    """(y, pullback) by the rule the enclosing block gives f, or None where it gives none."""
    given = given_rule(f, args)
    if given is None:
        return None
    rrule, full = given
    y, back = rrule(*full, **kw)
    return y, (_rrule_back, back, len(full), full is not args, _closures_given(full))


# -- the call: Zygote's J --------------------------------------------------------------------------

def call(mask, f, /, *args, **kw):
    """Run f(*args, **kw) recording what its reverse pass needs; return (y, pullback or None)."""
    if _TEXTS:  # (a differentiated number's text was made: a parse of it by numpy is refused, `parse_check`)
        parse_check(f, args, kw)
    if _overriding:
        if JUMP_WATCH.get() is not None:  # (a rule sampling a function, quad's: `watching`)
            frame = sys._getframe(1)
            watch_call(f, args, kw, (frame.f_code, frame.f_lasti), frame)
        given = _overridden_call(f, args, kw)
        if given is not None:
            return given
    elif type(f) is _FunctionType:
        # the other common case: a pure-Python function without a rule is its twin's (nothing below
        # applies to a function before the rule lookup: ufunc and dispatcher shapes, numpy's `out=`)
        if f not in _rules:
            return _twin_call(mask, f, (), args, kw)
        if f is unpack and not kw and (drawn := _drawing_call(f, args, kw)) is not None:
            return drawn  # (`a, b = t` of a tuple or list)
    elif type(f) is _MethodType and (not kw or "out" not in kw):  # (numpy's `out=`: below)
        try:
            rule = _rules.get(f)
        except TypeError:  # an unhashable object
            rule = None
        if rule is None:
            return _method_call(mask, f, args, kw)
    elif not kw:  # the common case first: a rule's primitive on positional arguments of plain types
        try:
            rule = _rules.get(f)
        except TypeError:  # unhashable callable
            rule = None
        if rule is None:
            if (type(f) is _BUILTIN and len(args) == 1 and type(f.__self__) is list and f.__name__ == "append"
                    and (appended := _append_call(f, args, kw)) is not None):
                return appended  # (`lst.append(v)`)
        else:
            plan = rule.plan
            if plan is None:
                plan = _plan(rule, f)
            if not plan and f in _DRAWN_ARGS and (drawn := _drawing_call(f, args, kw)) is not None:
                return drawn  # (`tuple(v)`, `list(v)`, `iter(v)` of a tuple or list)
            if plan and len(args) <= plan[2]:
                if plan[6] is not None and len(args) == 1 and type(args[0]) is float:
                    # a math function of a float (`math.sin(x)`): no loop over the arguments, and its float
                    # partial pulls back (`_float_back`)
                    x = args[0]
                    y = plan[0](x)
                    if type(y) is float:
                        return y, (_float_back, plan[6], y, x, plan[1])
                    return y, (_plain_back, plan[1], y, args)
                for a in args:
                    if type(a) not in _PLAIN_TYPES or type(a) is _NDARRAY and a.dtype is _OBJECT_DTYPE:
                        break  # (an object array: its elements may compute in Python, `holds_objects`)
                else:
                    y = plan[0](*args)
                    if len(args) == 1 and type(a) is _NDARRAY and a.dtype is _F8:
                        if plan[3] is not None and a.ndim:
                            return y, (_hot_back, plan[3], y, a, plan[1])
                        if plan[4] is not None:
                            return y, (_hot_reduce_back, plan[4], y, a, plan[1], _NOKW)
                    elif len(args) == 1 and type(a) is _FLOAT64 and plan[3] is not None and type(y) is _FLOAT64:
                        return y, (_f8_back, plan[3], y, a, plan[1])  # (`np.log(np.sum(e))`)
                    elif plan[5] is not None and (mask == 1 or mask == 2) and len(args) == 2:
                        x = args[mask - 1]  # the one differentiated argument (`np.maximum(x, 0.0)`)
                        if type(x) is _NDARRAY and x.dtype is _F8 and x.ndim:
                            return y, (_one_back, plan[5], y, args, mask - 1, plan[1])
                    if plan[7] and mask >= 0:  # (a rule whose partials cost: those of its call's constants skipped)
                        return y, (_needed_back, plan[1], y, args, mask)
                    return y, (_plain_back, plan[1], y, args)
    kind = f.__class__
    if f is globals and not args and not kw:  # the calling twin's, which are its function's (these are the engine's)
        return sys._getframe(1).f_globals, None
    if kw and "key" in kw and (keyed := _keyed(f, kind, args, kw)) is not None:
        return keyed
    if kw and (kind is _DISPATCHER or (kind is _FunctionType or kind is _BUILTIN) and f in _rules) and (
            _kw_may_differ(kw) or kind is _BUILTIN) and not _writing(f):  # (`pow(t, exp=3)`: the rule takes exp by position)
        # (a Python function with a rule too: `scipy.linalg.expm(A=a)`, whose adjoint takes a by position)
        moved = by_position(f, args, kw)
        if moved is not None:  # `np.percentile(a=v, q=30)`: the rules take their arrays by position
            new_args, new_kw, names = moved
            shifted = mask
            if mask >= 0:
                shifted = mask & ~KW_ACTIVE
                if mask & KW_ACTIVE:
                    for i in range(len(args), len(new_args)):
                        shifted |= 1 << i
                    if new_kw:
                        shifted |= KW_ACTIVE
            y, pb = call(shifted, f, *new_args, **new_kw)
            return y, (None if pb is None else (_by_name_back, pb, len(args), names))
    if kind is _UFUNC:
        if len(args) > f.nin:  # `np.exp(K, K)`: the output given by position; `np.exp(K, None)`: none
            if any(o is not None for o in args[f.nin:]):
                return _positional_out_call(f, args, kw)
            y, pb = call(mask, f, *args[:f.nin], **kw)
            return y, (None if pb is None else (_padded_back, pb, f.nin, len(args) - f.nin))
        elif kw and type(kw.get("out")) is tuple and len(kw["out"]) == 1:
            kw = {**kw, "out": kw["out"][0]}  # out=(a,)
        elif kw and type(kw.get("out")) is tuple and any(o is not None for o in kw["out"]):
            # (np.modf(x, out=(frac, whole)): the arrays written in C, unrecorded: their reads gave 0)
            raise UnsupportedFunction(
                f"reverse mode does not differentiate np.{f.__name__} writing its outputs into out= arrays",
                where=_user_line(), fix=f"assign its results instead (`a, b = np.{f.__name__}(...)`), or copy "
                                        f"them in: `a[...], b[...] = np.{f.__name__}(...)`")
    elif kind is _DISPATCHER and len(args) > 2:  # `np.clip(K, 0, 1, K)`, `np.dot(a, b, o)`
        pos = _out_position(f)
        if len(args) > pos >= 0 and args[pos] is not None:
            raise _positional_out(f)
    if kw and kind is not _FunctionType and isinstance(kw.get("out"), np.ndarray) and type(kw["out"]) is not np.ndarray:
        raise UnsupportedFunction(  # (an ndarray subclass's instance as out=: written in C, unrecorded: 0)
            f"reverse mode does not differentiate {getattr(f, '__name__', f)} writing into an out= array of class "
            f"{type(kw['out']).__name__}", where=_user_line(), fix="assign the result instead")
    if (kw and "out" in kw and type(_primal(kw["out"])) is np.ndarray
            and kind is not _FunctionType):
        # numpy's `out=` (a Python function taking one is differentiated as written: it passes it on)
        if kind is _UFUNC and protocol_objects(args):
            # numpy hands the whole call, out= too, to an operand's own `__array_ufunc__` (a Series': ta's
            # KAMA, `np.divide(a, s, out=o, where=...)`), as code; computed into a new array, its result
            # (the class's) could not be written into out (a TypeError)
            return _twin_call(mask, through_protocol(f), (), args, kw)
        return _out_call(f, args, kw)  # (a dual array, forward over reverse, is changed in place too)
    try:
        rule = _rules.get(f)
    except TypeError:  # unhashable callable
        rule = None
    is_method = False
    if rule is None:
        tf = type(f)
        if tf is types.FunctionType:
            return _twin_call(mask, f, (), args, kw)
        if tf is _UFUNC and (stand := registry.stand_in_of(f)) is not None:  # (np.frompyfunc's, made before)
            if _may_differ(stand[1][0], 0):  # its function's cells: held by the ufunc, their cotangents lost
                raise UnsupportedFunction(
                    f"reverse mode cannot differentiate the ufunc {f.__name__} made by np.frompyfunc of a closure "
                    "that holds differentiated values", where=_user_line(),
                    fix="make it inside the differentiated function, or use np.vectorize")
            return _twin_call(mask, stand[0], stand[1], args, kw)
        if tf in _MADE_STAND_INS and (stand := _MADE_STAND_INS[tf](f)) is not None:
            return _twin_call(mask, stand[0], stand[1], args, kw)  # (numba's compiled functions: their Python)
        if f is _TYPE_CALL and args and isinstance(args[0], type) and type(args[0]) is not type:
            # `type.__call__(cls, *a)` in a metaclass's `__call__` (hmf's `Component`s): as `super().__call__`
            y, pb = _construct(args[0], args[1:], kw, meta=False)
            return y, (None if pb is None else (_class_first_back, pb))
        if tf is _BUILTIN or tf is _WRAPPER or tf is _C_METHOD:
            if f is _TUPLE_NEW:  # a namedtuple's constructor (its registry key is every C __new__'s)
                if len(args) == 2 and not kw and iterated_by_python(args[1]):  # (`P._make(obj)`: its items as code)
                    return _twin_call(EVERY_ARGUMENT, drawn_tuple_new, (), args, kw)
                return call(mask, tuple_new, *args, **kw)
            if f is _FLOAT_NEW:  # a float subclass's constructor (the same shared key)
                return call(mask, float_new, *args, **kw)
            if f is _NDARRAY_NEW and (view := _whole_buffer(args, kw)) is not None:
                # an ndarray subclass made over an array's memory (ahrs' Quaternion): the subclass's view of it.
                # Its arguments given by keyword (np.matrix's `buffer=arr`) take their cotangents back by name:
                # by position they were dropped, 0 for `np.matrix([[t, 1.0], [2.0, t]])`
                y, pb = _twin_call(EVERY_ARGUMENT, ndarray_new_view, (), view, {})
                if pb is None or len(args) >= len(view):
                    return y, pb
                return y, (_by_name_back, pb, len(args), _NEW_NAMES[len(args):])
            if tf is _WRAPPER and f.__name__ == "__call__" and type(f.__self__) is not type \
                    and isinstance(f.__self__, type):  # `super().__call__(*a)` in a metaclass's __call__
                return _construct(f.__self__, args, kw, meta=False)
            if tf is _WRAPPER and f.__name__ in _OBJECT_SLOTS and (
                    getattr(type(f.__self__), f.__name__, None) is _OBJECT_SLOTS[f.__name__]
                    or getattr(f, "__objclass__", None) is object):  # (`super().__setattr__(k, v)` in a class's own)
                # `obj.__getattribute__(name)`, `obj.__setattr__(name, v)` (pykalman's `get_params`): object's
                # own slot bound to obj, whose rule is the unbound slot's with obj first
                shifted = mask if mask < 0 else (mask & ~KW_ACTIVE) << 1 | 1 | (mask & KW_ACTIVE)
                y, pb = call(shifted, _OBJECT_SLOTS[f.__name__], f.__self__, *args, **kw)
                return y, (None if pb is None else (_bound_back, pb))
            if tf is _WRAPPER and f.__name__ == "__call__" and type(f.__self__) is _UFUNC:
                return call(mask, f.__self__, *args, **kw)  # (`getattr(ufunc, method)(...)` with "__call__")
            if tf is _BUILTIN and (method := python_ufunc_method(f)) is not None:
                return _twin_call(mask, method.__func__, (method.__self__,), args, kw)  # (frompyfunc's `.reduce`)
            if tf is _WRAPPER and f.__name__ == "__setitem__" and type(f.__self__) is _NDARRAY and not kw:
                # `a.__setitem__(k, v)` called by name (array_api_strict's Array stores into its ndarray so): the
                # store `a[k] = v`, as `operator.setitem` is
                return _twin_call(EVERY_ARGUMENT, REPLACEMENTS[operator.setitem], (f.__self__,), args, kw)
            rule, is_method = _rule_of(f)
            if args and f.__name__ == "__init__" and (base := _drawn_base(getattr(f, "__self__", None))) is not None \
                    and iterated_by_python(args[0]) and not (base is dict and hasattr(args[0], "keys")):
                return _twin_call(EVERY_ARGUMENT, _DRAWN_INIT[base], (f.__self__,), args, kw)
            if is_method and args and (drawn := _DRAWN_BY.get(f.__name__)) is not None and isinstance(
                    f.__self__, list if drawn is drawn_extend else dict) and iterated_by_python(args[0]) and not (
                    drawn is drawn_update and hasattr(args[0], "keys")):
                # a list extended, a dict updated from an object whose class iterates in Python: drawn as code
                # (natively its `__iter__` ran unrecorded: 0 for 0.27, silently)
                return _twin_call(EVERY_ARGUMENT, drawn, (f.__self__,), args, kw)
            if is_method and len(args) > 1 and isinstance(f.__self__, np.ndarray):
                _method_out(f, args)
            elif is_method and len(args) > 3 and type(f.__self__) is _UFUNC:
                _ufunc_method_out(f, args)
            if is_method and type(f.__self__) is _UFUNC and rule is not None and rule.kind != "nondiff" \
                    and protocol_objects(args):  # `np.add.reduce(q)`: numpy hands it to q's __array_ufunc__
                return _twin_call(mask, through_protocol(f.__self__, f.__name__), (), args, kw)
        elif registry.families and isinstance(f, type):  # a family's class (sympy's `sin`): made on first use
            rule = registry.get(f)
    if type(f) is _DISPATCHER and rule is not None and (impl := own_method_form(f, args)) is not None:
        # `np.sum(obj)` of an object whose class has its own `sum` (a container of pandas' kind): numpy's Python
        # calls it (fromnumeric's `_wrapreduction`/`_wrapfunc`); run as that code, the method is differentiated
        # (the rule took the object for an array: 0, gen13 W4; a stand-in's numpy calls came back: recursion)
        return _twin_call(mask, impl, (), args, kw)
    if rule is not None and rule.stand_in is not None:  # the primitive as Python code: differentiated as code
        return _twin_call(mask, rule.stand_in, (f.__self__,) if is_method else (), args, kw)
    if (f is copy.copy or f is copy.deepcopy) and args and not kw and type(own := getattr(
            type(args[0]), "__copy__" if f is copy.copy else "__deepcopy__", None)) is _FunctionType \
            and (not is_engine_class(type(args[0])) or type(args[0]) is Deque):  # (a forward-mode dual's own,
        # under hessian: the rule's; the deque stand-in's is Python to follow)
        # a class's own copy protocol (`def __copy__(self): return M(self.a, self.b)`): its code, as copy runs it
        return _twin_call(mask if f is copy.copy else EVERY_ARGUMENT, own, (),
                          args if f is copy.copy else (args[0], args[1] if len(args) > 1 else {}), kw)
    if rule is not None:
        objects = is_method and type(f.__self__) is _NDARRAY and f.__self__.dtype is _OBJECT_DTYPE
        if not objects:
            for a in args:
                if type(a) is _NDARRAY and a.dtype is _OBJECT_DTYPE:
                    objects = True
                    break
        if objects and rule.kind != "nondiff" and holds_objects((*args, f.__self__) if is_method else args, kw):
            if (form := object_form(f, args, kw)) is not None:
                # numpy's arithmetic on an object array of the user's objects: their own methods, as code
                return _twin_call(EVERY_ARGUMENT, form[0], form[1], args, kw)
            if rule.python is not None and objects_of_classes(args, rule.kind == "reduction"):
                return _twin_call(mask, rule.python, (), args, kw)  # (`sum(a)`: the items' own `__add__`)
        for a in args:  # (the common case: arguments of plain types, one set lookup each)
            if type(a) not in _PLAIN_TYPES:
                if OPAQUE_CONTAINERS and type(f) is types.FunctionType and rule.kind != "nondiff" and isinstance(
                        a, tuple(OPAQUE_CONTAINERS)) and (f.__module__ or "").split(".")[0] in ("numpy", "scipy"):
                    # a container numpy's rules cannot compute with (array_api_strict's Array) given to a numpy or
                    # scipy function of Python with a rule: run as its code (scipy's array-API wrappers of its
                    # special functions, whose rules took the Array for an array: a TypeError)
                    return _twin_call(mask, f, (), args, kw)
                if _numpy_function(f) and rule.kind != "nondiff" and protocol_objects(args, f):
                    # numpy hands it to the class's own code (a question of kind, `np.isscalar`, it answers
                    # itself: cvxpy's expressions take ufuncs only, and would come back here endlessly)
                    return _twin_call(mask, through_protocol(f), (), args, kw)
                if rule.python is not None and (objects_of_classes(args, rule.kind == "reduction")
                                                or own_number_operands(f, args)
                                                or (f in _BY_DUNDER and _own_conversion(args[0]))
                                                or f is _OBJECT_GETATTRIBUTE):
                    # an operand's special methods are its class's own code: they are what the primitive runs
                    # (a float subclass's own `__add__` too, as `operator.add` calls it)
                    return _twin_call(mask, rule.python, (), args, kw)
                if _numpy_function(f) and array_objects(args):  # numpy converts it by its class's __array__
                    return _twin_call(mask, through_array(f), (), args, kw)
                if rule.kind != "nondiff" and (_numpy_function(f) or getattr(f, "__module__", None) in _CONVERTING) \
                        and (cls := _numeric_by_python(args, _numpy_function(f))) is not None:  # (`math.fsum([obj, 1.0])`: 0 came out)
                    raise _converted_by_python(f, cls)
                break
        if f is dict and args and not hasattr(args[0], "keys") and (
                iterate := _python_iteration(type(args[0]))) is not None:
            # `dict(enumerate(it))`, `dict(map(fn, it))` of an iterator drawn one item at a time, or of a class
            # iterating in Python: the pairs drawn as code (consumed in C, their values' cotangents were lost: 0)
            return _iterate_user(f, args, kw, iterate)
        if rule.iterates and args:
            t0 = type(args[0])
            if t0 in POSITIONED and f is not iter:
                return _iterate_positioned(f, args, kw)
            if t0 in VIEWS:
                return _iterate_view(f, args, kw)
            if t0 in _KEYED_TYPES and f is not iter and f is not list and f is not tuple:
                return _iterate_keys(f, args, kw)  # (sorted(d), max(d), sum(s): keys, set members)
            if t0 not in _PLAIN_TYPES and t0 is not _Dual and not (len(args) > 1 and (f is max or f is min)):
                iterate = _python_iteration(t0)  # (max(a, b) compares its arguments: no iteration)
                if iterate is not None:
                    return _iterate_user(f, args, kw, iterate)
        full = (f.__self__,) + args if is_method else args
        if kw and (mask < 0 or mask & KW_ACTIVE) and rule.kind != "nondiff" and _kw_may_differ(kw):
            # a differentiated keyword argument (`min(xs, default=x)`): its cotangent must come back
            y, pb = call(mask & ~KW_ACTIVE if mask >= 0 else _positional_mask(args), f, *args, **kw)
            return y, (None if pb is None else (_kw_checked_back, pb, f, tuple(
                k for k, v in kw.items() if k not in _NOT_VALUES and _may_differ(v, 0))))
        if is_method and (method := stair_method(f, args)) is not None:  # (`a.round(13)`: np.round's, pkA's
            # elote; `x.__mod__(y)` by name: the operator's, its divisor's jump too)
            if method[0] is np.trunc:  # (`a.astype(int)`: exactly on an integer, a jump; forward mode tells)
                jump_guard("trunc", "ndarray.astype(int)", method[1][0], noted=True)
            else:
                staircase_reverse(*method, kw)
            if len(method[1]) == 2:  # (`y.__rmod__(x)`: x % y, whose divisor y may move)
                divisor_jump(method[0], *method[1])
        if is_method and (args or kw) and type(f.__self__) is _NDARRAY and f.__name__ in _RECAST_METHODS:
            _reinterpreting_view(f.__name__, f.__self__, args, kw)
        masked = False
        if rule.kind != "nondiff" and f is not _VIEW:
            for a in full:
                t = type(a)
                if t is not float and t is not _NDARRAY and t is not int and t is not _Dual and isinstance(a, np.ndarray):
                    if isinstance(a, _MASKED):
                        if type(f) is _UFUNC:  # (its rule on the data: `rules.numpy.masked`)
                            masked = True
                            continue
                        if takes_data(f, is_method):  # (the data as values, its items handed on, or no
                            # computation on them; not `sum(a)`, which adds its masked items: masked)
                            continue
                        if rule.iterates or computes_by_its_code(f):  # (numpy.ma's operators, a domain's
                            raise masked_refused(f"`{getattr(f, '__name__', f)}`")  # mask: even none masked yet)
                    values_refused(f"`{getattr(f, '__qualname__', None) or getattr(f, '__name__', f)}`", a)
            if masked and rule.adjoint is None:
                raise masked_refused(f"`np.{f.__name__}`")
        if rule.adjoint is not None:
            impl = rule.impl
            if (type(f) is not types.BuiltinFunctionType and not isinstance(f, np.ufunc)
                    and (getattr(f, "__module__", None) or "").startswith("numpy")):
                for a in full:  # (a numpy function dispatching to a subclass's own code: `overriding_refused`)
                    if type(a) is not _NDARRAY and isinstance(a, np.ndarray) and not (
                            isinstance(a, _MASKED) and takes_data(f, is_method)):
                        overriding_refused(f"np.{f.__name__}", *full)
                        break
            if f in STAIRS and (mask < 0 or mask & 1):  # (`round(t, 10)`, `np.mod(t, 1e-12)`: a fine step)
                staircase_reverse(f, args, kw)
            elif f in STAIRS and mask & 2 and len(args) > 1:  # (`divmod(9.0, b)`: its jump where b moves)
                divisor_jump(f, args[0], args[1])
            if args and (mask < 0 or mask & 1) and id(f) in _INT_CASTS:  # (`np.asarray(x, dtype=np.intp)`: a truncation)
                int_cast_jump(f, args, kw)
            if rule.kind == "nondiff" and args and (jump := JUMP_FUNCTIONS.get(f)) is not None and jump_active(f, mask):
                x, _ = jump_operands(f, args)  # (`np.floor(t)` of a differentiated t exactly on one of its jumps; an
                if x is not None:              # argsort's at a tie; a search's value on the grid)
                    jump_guard(*jump, x, None, axis_of(jump[0], args, kw))
            elif rule.kind == "nondiff" and len(args) == 2 and (
                    test := _HELD_COMPARISONS.get(f)) is not None and mask != 0:
                _held_comparison(test, args, mask)
            elif rule.kind == "nondiff" and is_method and type(f.__self__) is _NDARRAY and (
                    jump := ORDER_METHODS.get(f.__name__)) is not None:
                jump_guard(*jump, f.__self__, None, axis_of(jump[0], (f.__self__, *args), kw))  # (`x.argsort()`)
            elif rule.kind == "nondiff" and is_method and type(f.__self__) is _NDARRAY and f.__name__ == "searchsorted" \
                    and args:  # (`grid.searchsorted(v)`: a value on the grid, numpy's histogram of weights at an edge)
                jump_guard("search", "ndarray.searchsorted", (f.__self__, args[0]))
            if rule.kind == "nondiff" and id(f) in _FRESH_IDS and (y := _fresh_under_outer(f, args, kw)) is not None:
                # forward over reverse (hessian): an array the user's code makes takes perturbed values,
                # as in forward mode (`v = np.zeros(n); v[i] = ...`): a dual of zero tangent
                return y, None
            if rule.kind == "nondiff" and f in _ASK_PRIMAL and _any_dual(args, kw):
                # forward over reverse: a question about a value (isinstance, len, str) is asked of its
                # primal, as the tangent twin asks it, never of the dual that carries it
                return f(*map(_primal, args), **{k: _primal(v) for k, v in kw.items()}), None
            saved = rule.saves(*full, **kw) if rule.saves is not None else None
            try:
                y = f(*args, **kw) if impl is None else impl(*args, **kw)
            except TypeError:
                y = _on_duals(rule, f, args, kw)  # higher order: forward-mode duals through a C function
            if type(y) in DURATIONS and f in _SCALINGS and len(args) == 2:  # `a * td`: rounded, refused
                scaled_duration(args[0], args[1], mask < 0 or bool(mask & 1), mask < 0 or bool(mask & 2))
            if masked:  # (a ufunc given a numpy.ma masked array: its rule on the data views)
                if rule.mutating:
                    raise masked_refused(f"`np.{f.__name__}`")
                adj, yp, plain = masked_ufunc_pullback(f, rule.adjoint, y, full, kw)
                return y, (_static_back, adj, yp, plain, kw, is_method)
            if type(y) is _MATRIX or _MATRIX in map(type, full):  # (np.matrix: its plain views' rule, or refused)
                if rule.mutating:
                    raise _matrix_refused()
                from ..rules.numpy.matrix import matrix_pullback
                adj, yp, plain = matrix_pullback(f, rule.adjoint, y, full, kw, is_method)
                return y, (_static_back, adj, yp, plain, kw, is_method)
            if rule.mutating:
                _stamp(rule, f, full, is_method)
                return y, (_mutating_back, rule.adjoint, y if rule.saves is None else (y, saved), full, kw, is_method)
            if len(args) == 1 and not is_method and type(args[0]) is _NDARRAY and args[0].dtype is _F8:
                if rule.hot is not None and not kw and args[0].ndim:
                    return y, (_hot_back, rule.hot, y, args[0], rule.adjoint)
                if rule.hot_reduce is not None and (not kw or kw.keys() <= HOT_REDUCE_OPTIONS):
                    return y, (_hot_reduce_back, rule.hot_reduce, y, args[0], rule.adjoint, kw)
            return y, (_static_back, rule.adjoint, y, full, kw, is_method)
        if f is collections.OrderedDict and args and iterated_by_python(args[0]) and not hasattr(args[0], "keys"):
            return _twin_call(EVERY_ARGUMENT, drawn_ordered_dict, (), args, kw)  # (its rule drew them natively)
        if rule.inplace is not None:
            if (_numpy_function(f) or is_method and isinstance(getattr(f, "__self__", None), np.ndarray)) and (
                    cls := _numeric_by_python(args, True)) is not None:  # (`a.fill(obj)` by its `__float__`: 0 came out)
                raise _converted_by_python(f, cls)
            _stamp(rule, f, full, is_method)
            y, back = rule.inplace(*full, **kw)
            return y, (_inplace_back, back, f.__self__ if is_method else None, full[0] if full else None)
        if rule.rrule is not None:
            if f is _ARANGE and mask and (mask < 0 or mask & 7):  # (a differentiated start, stop or step: the
                arange_length_jump(args, kw)                          # length's jump, noted for forward mode)
            if rule.kind == "reduction" and full and isinstance(full[0], collections.abc.Iterator):
                full = (list(full[0]),) + full[1:]  # drawn once here (the rule would): a retry sees it all
                if rule.python is not None and objects_of_classes(full, True):
                    return _twin_call(mask, rule.python, (), full, kw)
            try:
                y, back = rule.rrule(*full, **kw)
            except TypeError:  # forward over reverse: the rule's primal call met duals (`math.fsum`)
                y, back = _rrule_on_duals(rule.rrule, full, kw)
            return y, (_rrule_back, back, len(full), is_method, _closures_given(full))
        if rule.kind == "nondiff":
            return f(*args, **kw), None
    if type(f) is types.FunctionType:
        return _twin_call(mask, f, (), args, kw)
    if type(f) is types.MethodType:
        return _method_call(mask, f, args, kw)
    if (type(f) is _METHOD_DESCRIPTOR or type(f) is _SLOT_WRAPPER) and args and type(args[0]) is f.__objclass__ \
            and (repl := REPLACEMENTS.get(f)) is not None:  # (not a subclass's: its own `__getitem__` not asked)
        return _twin_call(EVERY_ARGUMENT, repl, (), args, kw)  # (`list.__getitem__(L, i)`: the subscript)
    if (type(f) is _METHOD_DESCRIPTOR or type(f) is _SLOT_WRAPPER and (f.__objclass__, f.__name__) in _rules) \
            and args and isinstance(args[0], f.__objclass__):  # (a slot's with a rule: `dict.__setitem__(d, k, v)`)
        # `dict.get(d, key, default)` (inspect's static getattr): the C method bound to its object, whose
        # rule is keyed (type, name); the object's cotangent comes back as the first argument's
        shifted = mask if mask < 0 else (mask & ~KW_ACTIVE) >> 1 | (mask & KW_ACTIVE)
        rule = _rules.get((f.__objclass__, f.__name__))
        if rule is not None and (rule.mutating or rule.inplace is not None) and isinstance(args[0], np.ndarray):
            # (an array's method changing it in place, called unbound, `np.ndarray.fill(c, v)`: the caller's
            # cotangent of c after the call does not reach the rule, as it does for `c.fill(v)`: 0 for 6, pkJ W5)
            raise UnsupportedFunction(
                f"reverse mode does not differentiate {f.__objclass__.__name__}.{f.__name__} called unbound, "
                "changing its array in place", where=_user_line(),
                fix=f"call it as the array's method: `a.{f.__name__}(...)`")
        y, pb = call(shifted, f.__get__(args[0]), *args[1:], **kw)
        return y, (None if pb is None else (_unbound_back, pb))
    return _other_call(mask, f, args, kw)


_METHOD_DESCRIPTOR = types.MethodDescriptorType
_SLOT_WRAPPER = types.WrapperDescriptorType  # (`dict.__setitem__`)


_HELD_COMPARISONS = {operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">=", operator.eq: "==",
                     operator.ne: "!="}
_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


def _held_comparison(op: str, args, mask) -> None:
    """`operator.ge(x, 0.3)` called as a function (through a variable, `op = operator.ge; op(x, 0.3) * x`; pandas'
    `op(self, other)`, a Series holding floats, `leaves.FLOAT_HOLDERS`): its tie checked as the comparison
    written `x >= 0.3` is (`lowered.runtime.equality_guard`), the active operand first. Run natively, it was not:
    1 at 0.3, where there is no derivative (`s.ge(0.3) * s` of a Series too). Two active operands: as written, an
    equality's tie is checked."""
    a, b = args
    ia, ib = mask < 0 or bool(mask & 1), mask < 0 or bool(mask & 2)
    if ia and ib:
        if op in ("==", "!=") and a is not b:
            equality_guard(a, b, op)
            equality_guard(b, a, op)
        elif a is not b:  # (an ordering of two values that may both carry derivatives: its tie, one way)
            equality_guard(a, b, op)
    elif ia:
        equality_guard(a, b, op)
    elif ib:
        equality_guard(b, a, _FLIPPED[op])


def _method_call(mask, f, args, kw):
    """`call` of a bound method (types.MethodType) without a rule of its own."""
    func = f.__func__
    if type(f.__self__) is _Dual:  # forward-over-reverse: a dual array's method is numpy's
        return _dual_method_call(f, args, kw)
    if func is _Drawn.__next__ and not args and not kw:
        # `next(iter(obj))` of an iterator of a class's own: the engine's lazy drawer records the draw itself
        # (run as a twin, its code was the engine's own, differentiated: a refusal naming `ast.Module`)
        lazy = f.__self__
        y = lazy.__next__()
        return y, (_drawn_item_back, lazy, len(lazy.nexts) - 1)
    if _hashable(func) and func in _rules:  # a rule given to the method's function
        if (stand := _rules[func].stand_in) is not None:  # (as code, its object first: a Generator's shuffle)
            return _twin_call(mask, stand, (f.__self__,), args, kw)
        y, pb = call(EVERY_ARGUMENT, func, f.__self__, *args, **kw)
        return y, (None if pb is None else (_bound_back, pb))
    if isinstance(f.__self__, Scalar):  # a registered number's method without a rule: its inside is
        raise _no_rule(f)                 # no derivative's (contexts.rules.leaves)
    if isinstance(f.__self__, ArrayLeaf):  # a dask array's `.sum()`: the ndarray method's rule
        return _leaf_method_call(f, args, kw)
    if type(func) is types.FunctionType:
        return _twin_call(mask, func, (f.__self__,), args, kw)
    return _other_call(mask, f, args, kw)


def _inner_back(pb, dy, dself, S, none=()):
    """What the pullback `pb[1]` a wrapper's pullback `pb` holds gives: (dfn, dargs as a tuple, `none`
    where it gives None, dkw). The wrappers below reshuffle it."""
    inner = pb[1]
    dfn, dargs, dkw = inner[0](inner, dy, dself, S)
    return dfn, none if dargs is None else tuple(dargs), dkw


# keyword options of numpy's and scipy's functions that choose a variant, a shape or a stopping rule rather
# than enter the arithmetic (`np.linalg.norm(x, ord=p)` is taken as piecewise constant in p, as every rule
# of the registry does): their values are never differentiated
_NOT_VALUES = frozenset({"out", "dtype", "axis", "axes", "keepdims", "where", "casting", "order", "subok",
                         "key", "reverse", "ord", "ddof", "kind", "mode", "method", "side", "bins", "decimals",
                         "n", "k", "lower", "overwrite_a", "overwrite_b", "check_finite", "full_matrices",
                         "compute_uv", "hermitian", "copy", "rcond", "tol", "rtol", "atol", "maxiter",
                         "xtol", "ftol", "gtol", "epsabs", "epsrel", "limit", "points", "full_output",
                         "size", "shape", "num", "endpoint", "retstep"})


_FRESH_IDS = frozenset(map(id, (np.empty, np.zeros, np.ones)))  # (forward mode's list, np.full aside: no rule)


def _fresh_under_outer(f, args, kw):
    """f's array as forward mode makes it (`contexts.forward.context._fresh`) when this reverse pass runs
    inside a forward-mode derivative and the caller is the user's code (not numpy's or the rules'); else
    None."""
    from ..forward.context import _NOT_FRESH, ForwardContext, _fresh
    ctx = overdub.current()
    tag = getattr(ctx, "tag", None) if isinstance(ctx, ForwardContext) else None
    if tag is None or sys._getframe(2).f_code.co_filename.startswith(_NOT_FRESH):
        return None
    return _fresh(f(*args, **kw), tag, ctx.outer)


def _kw_may_differ(kw) -> bool:
    """Some keyword argument of a rule's call may carry a derivative (the options above never do)."""
    return any(_may_differ(v, 0) for k, v in kw.items() if k not in _NOT_VALUES)


_NUMERIC_DUNDERS = ("__float__", "__complex__", "__int__", "__index__")


_BY_DUNDER = (float, complex)  # (builtins converting any operand by its class's `__float__`/`__complex__`)


def _own_conversion(v) -> bool:
    """v is of a subclass of float or complex whose class converts it by its own Python `__float__` or
    `__complex__` (`float(v)`, `complex(v)` and numpy run that; math's functions read the stored value)."""
    cls = type(v)
    return (cls is not float and cls is not complex and isinstance(v, (float, complex))
            and (type(getattr(cls, "__float__", None)) is _FunctionType
                 or type(getattr(cls, "__complex__", None)) is _FunctionType))


def _numeric_by_python(args, numpy: bool = False):
    """The class of an argument (or of an item of a list or tuple argument) that numpy would turn into a
    number by the class's own Python `__float__`/`__complex__`/...: that code runs out of the engine's
    sight. None if there is none (or it carries no derivative). numpy: f is numpy's, which converts a
    float subclass by its own `__float__` too (`np.sqrt(s)`, `np.float64(s)`: taken for its stored value,
    1 for 5, pkJ W7); math reads the value stored. Nested lists and tuples too (`np.array([[obj]], float)`:
    0 came out, session 68), a few levels deep."""
    return _numeric_in(args, numpy, 4)


def _numeric_in(items, numpy: bool, depth: int):
    for v in items:
        cls = type(v)
        if cls in _PLAIN_TYPES or cls is _Dual:
            continue
        if cls is list or cls is tuple:
            if depth and (found := _numeric_in(v, numpy, depth - 1)) is not None:
                return found
            continue
        if isinstance(v, PLAIN_OPERANDS) and not (numpy and _own_conversion(v)):  # (numbers, ufloats...)
            continue
        if any(type(getattr(cls, m, None)) is _FunctionType for m in _NUMERIC_DUNDERS) and _may_differ(v, 0):
            return cls
    return None


def _converted_by_python(f, cls) -> UnsupportedFunction:
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)
    return UnsupportedFunction(
        f"{name} turns a {cls.__name__} into a number by its class's own Python method (`__float__`, "
        f"`__complex__`, ...), which runs out of reverse mode's sight", where=_user_line(),
        fix=f"convert it first with `float(obj)` (differentiated), or compute with its fields")


def _positional_mask(args) -> int:
    return (1 << len(args)) - 1


def _kw_checked_back(pb, dy, dself, S):
    """A rule called with a differentiated keyword argument: its pullback must give that argument's
    cotangent (a trailing dict, registry's convention); one that gives none would drop it silently."""
    try:
        dfn, dargs, dkw = _inner_back(pb, dy, dself, S)
    finally:
        S.dins = None  # (handed for an in-place rule by keyword, `HELD_BACKS`: for this call only)
    if dkw is None and dy is not None and not (type(dy) is float and dy == 0.0):
        f, names = pb[2], pb[3]
        name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)
        raise NoRuleError(
            f"the reverse rule of {name} gives no cotangent for its keyword argument(s) "
            f"{', '.join(n + '=' for n in names)} passed a differentiated value", where=_user_line(),
            fix="pass the value by position, or give the call a custom adjoint (`@contexts.custom_adjoint`)")
    return dfn, dargs, dkw


def _writing(f) -> bool:
    """f's rule changes an argument in place (its held cotangents are handed to its own pullback only)."""
    rule = _rules.get(f)
    return rule is not None and (rule.inplace is not None or rule.mutating or rule.writes is not None)


def _by_name_back(pb, dy, dself, S):
    """A numpy function called with arguments by keyword that were run by position (`by_position`): their
    cotangents go back under their names."""
    n, names = pb[2], pb[3]
    dfn, dargs, dkw = _inner_back(pb, dy, dself, S, (None,) * (n + len(names)))
    dargs = dargs + (None,) * max(0, n + len(names) - len(dargs))
    named = {k: g for k, g in zip(names, dargs[n:n + len(names)]) if g is not None}
    if named:
        dkw = {**dkw, **named} if dkw else named
    return dfn, dargs[:n], dkw


def _padded_back(pb, dy, dself, S):
    """A call run without its trailing positional arguments (`np.sin(x, None)`: no output array): their
    cotangents are None."""
    dfn, dargs, dkw = _inner_back(pb, dy, dself, S, (None,) * pb[2])
    return dfn, dargs + (None,) * pb[3], dkw


def _unbound_back(pb, dy, dself, S):
    """A C method called through its class (`dict.get(d, k)`): the bound method's cotangent is d's."""
    dobj, dargs, dkw = _inner_back(pb, dy, None, S)
    return dself, (dobj,) + dargs, dkw


# builtins whose answer is a question about a value (not a value like it, as np.zeros_like's), and numpy's
# questions about a value's kind (a dual array is a `numbers.Number`: `np.isscalar` of one said True under
# hessian, and statsmodels' norms took the scalar branch: a wrong Hessian)
_ASK_PRIMAL = frozenset([getattr(builtins, n) for n in NONDIFF_BUILTINS if callable(getattr(builtins, n, None))]
                        + [np.isscalar, np.iscomplexobj, np.isrealobj, np.iterable, np.ndim, np.shape, np.size])


def _any_dual(args, kw) -> bool:
    for a in args:
        if type(a) is _Dual:
            return True
    return any(type(v) is _Dual for v in kw.values()) if kw else False


def _on_duals(rule, f, args, kw):
    """f(*args) when some args are forward-mode duals (forward-over-reverse): forward mode's pushforward."""
    from ..forward.arrays import has_dual
    from ..forward.context import pushforward
    if rule.frule is None or not any(has_dual(a) for a in tuple(args) + tuple(kw.values())):
        raise  # (has_dual: also a list of duals, `np.array([x[0] ** 2, x[1]])`)
    return pushforward(f, *args, **kw)


def _class_first_back(pb, dy, dself, S):
    """`type.__call__(cls, *args)`'s pullback from the construction's: the class takes no cotangent."""
    _, dargs, dkw = _inner_back(pb, dy, dself, S)
    return None, (None,) + tuple(dargs), dkw


def _bound_back(pb, dy, dself, S):
    """A bound method's pullback from its function's: `self`'s cotangent is the method's own."""
    _, dargs, dkw = _inner_back(pb, dy, None, S)
    return acc(dself, dargs[0] if dargs else None), dargs[1:], dkw


def _python_iteration(cls):
    """The Python code iterating an instance of cls runs: its `__iter__`, or Python's sequence protocol
    over its own `__getitem__` (`getitem_iteration`); an array leaf's (dask's) rows read by index
    (`_leaf_rows`, not dask's own __iter__); None when iteration is C code (or not defined)."""
    if issubclass(cls, ArrayLeaf):
        return _leaf_rows
    it = getattr(cls, "__iter__", None)
    if type(it) is types.FunctionType:
        return it
    if it is None and type(getattr(cls, "__getitem__", None)) is types.FunctionType:
        return getitem_iteration
    return None


_DRAWING = frozenset({iter, list, tuple, unpack})  # primitives whose result is the drawn items themselves


def _append_call(f, args, kw):
    """`call`'s common case of `lst.append(v)`, a builtin list's bound method, by position: what the general
    path gives it — the value, the list's change stamped (`_stamp`), and the rule of (list, "append") pulled
    back by `_mutating_back` — without the questions it asks on the way, which a builtin list's `append`
    answers no otherwise; those that depend on v (an object array, whose elements may compute in Python; an
    ndarray subclass's values, `values_refused`) and on the rule's kind are asked here. None where one
    differs: the general path then decides."""
    a = args[0]
    ta = type(a)
    if ta is _NDARRAY and a.dtype is _OBJECT_DTYPE or ta is not _NDARRAY and isinstance(a, np.ndarray):
        return None
    rule = _rules.get(_LIST_APPEND)
    if (rule is None or rule.adjoint is None or not rule.mutating or rule.kind is not None or rule.iterates
            or rule.python is not None or rule.stand_in is not None or rule.saves is not None or rule.impl is not None
            or rule.inplace is not None or f in STAIRS):
        return None
    full = (f.__self__, a)
    try:
        y = f(a)
    except TypeError:
        y = _on_duals(rule, f, args, kw)  # (as the general path)
    _stamp(rule, f, full, True)
    return y, (_mutating_back, rule.adjoint, y, full, kw, True)


_LIST_APPEND = (list, "append")
_DRAWN_ARGS = {iter: 1, list: 1, tuple: 1, unpack: 3}  # (their positional arguments: `_drawing_call`)


def _drawing_call(f, args, kw):
    """`call`'s common case of `tuple(v)`, `list(v)`, `iter(v)` and `a, b = v` (`unpack(v, n, star)`) of a
    builtin list or tuple, by position: what the general path below the fast ones gives them — f's value and
    its rule's adjoint, pulled back by `_static_back` — without the questions it asks on the way, none of which
    a builtin list or tuple and these primitives answer otherwise; the facts they rest on are asked here (a
    rule of that kind: no stand-in, Python form, saved values, own implementation, change in place; no Python
    iteration of the class; not a step). None where one differs: the general path then decides."""
    if len(args) != _DRAWN_ARGS[f]:
        return None
    t0 = type(args[0])
    if t0 is not list and t0 is not tuple:
        return None
    for a in args[1:]:
        if type(a) is not int:
            return None
    rule = _rules.get(f)
    if (rule is None or rule.adjoint is None or rule.kind is not None or not rule.iterates or rule.python is not None
            or rule.stand_in is not None or rule.saves is not None or rule.impl is not None or rule.mutating
            or rule.inplace is not None or f in STAIRS or _python_iteration(t0) is not None):
        return None
    try:
        y = f(*args)
    except TypeError:
        y = _on_duals(rule, f, args, kw)  # (as the general path: higher order, duals through a C function)
    return y, (_static_back, rule.adjoint, y, args, kw, False)


def iterated_by_python(v) -> bool:
    """v is an object whose class iterates in Python (`_python_iteration`): a C function drawing its items
    (`list.extend`, `dict.update`, a list subclass's constructor, a slice store) would run that code
    unrecorded, and the items' derivatives were lost (0, silently)."""
    t = type(v)
    return t not in _PLAIN_TYPES and t is not _Dual and not isinstance(v, np.ndarray) and not is_engine_class(t) \
        and _python_iteration(t) is not None


def drawn_extend(obj, items):
    """`obj.extend(items)` (and `obj += items`) of a list, the items drawn by Python code (`iterated_by_python`)
    first: as code, the drawing is recorded."""
    obj.extend(list(items))
    return obj


def drawn_update(obj, pairs, **kw):
    """`obj.update(pairs, **kw)` of a dict, the pairs drawn by Python code first (as `drawn_extend`)."""
    obj.update(list(pairs), **kw)


def drawn_store(obj, idx, items):
    """`obj[idx] = items` of a list and a slice, the items drawn by Python code first (as `drawn_extend`)."""
    obj[idx] = list(items)


def _drawn_base(obj):
    """list or dict where obj is one (or of a subclass), else None."""
    return list if isinstance(obj, list) else dict if isinstance(obj, dict) else None


def drawn_list_init(obj, items):
    """`list.__init__(obj, items)` (`l.__init__(it)`, a list subclass's `super().__init__(it)`): emptied, then
    the items drawn by Python code (as `drawn_extend`)."""
    obj.clear()
    obj.extend(list(items))


def drawn_ordered_dict(pairs, **kw):
    """`collections.OrderedDict(pairs)` of pairs a class draws in Python: drawn first (as `drawn_update`)."""
    return collections.OrderedDict(list(pairs), **kw)


_NEW_NAMES = ("subtype", "shape", "dtype", "buffer", "order")  # (`ndarray_new_view`'s parameters)


def ndarray_new_view(subtype, shape, dtype, buffer, order="C"):
    """`np.ndarray.__new__(subtype, shape, dtype, buffer, order=order)` over a whole array of that dtype,
    contiguous in that order (an ndarray subclass's constructor over an array's memory: ahrs' Quaternion,
    np.matrix's from a list): the subclass's view of the array, as code reverse mode follows (the view's
    cotangent is the array's)."""
    return buffer.reshape(shape, order=order).view(subtype)


def _whole_buffer(args, kw):
    """(subtype, shape, dtype, buffer, order) where `np.ndarray.__new__(*args, **kw)` is a view of a whole
    ndarray `buffer` of its dtype, contiguous in that order (no offset, no strides); else None."""
    try:
        bound = _NDARRAY_NEW_SIGNATURE.bind(*args, **kw).arguments
    except TypeError:
        return None
    buffer, order = bound.get("buffer"), bound.get("order") or "C"
    if not isinstance(buffer, np.ndarray) or bound.get("offset", 0) != 0 or bound.get("strides") is not None \
            or order not in ("C", "F") or not (buffer.flags.c_contiguous if order == "C" else buffer.flags.f_contiguous):
        return None  # (order "F" over an F-contiguous buffer: np.matrix's for a row, both C and F contiguous)
    try:
        dtype, shape = np.dtype(bound.get("dtype", float)), bound["shape"]
        size = int(np.prod(shape))
    except (TypeError, ValueError):
        return None
    if dtype != buffer.dtype or size != buffer.size:
        return None
    return bound["subtype"], shape, dtype, buffer, order


_NDARRAY_NEW_SIGNATURE = inspect.Signature([
    inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, **({} if name in ("subtype", "shape") else
                                                                        {"default": default}))
    for name, default in (("subtype", None), ("shape", None), ("dtype", float), ("buffer", None), ("offset", 0),
                          ("strides", None), ("order", None))])


def drawn_tuple_new(cls, items):
    """`tuple.__new__(cls, items)` (a namedtuple's `_make`) of items a class draws in Python: drawn first."""
    return tuple.__new__(cls, list(items))


_DRAWN_BY = {"extend": drawn_extend, "__iadd__": drawn_extend, "update": drawn_update}
# (`__init__` of a list or dict, bound: `l.__init__(it)`, `super().__init__(it)` in a subclass's own; dict's
# updates, list's empties first. Natively the object's `__iter__` ran unrecorded: 0 for 2, fuzz F's W2)
_DRAWN_INIT = {list: drawn_list_init, dict: drawn_update}


def _iterate_user(f, args, kw, iterate):
    """A primitive iterating an object whose class iterates in Python (`iterate`: its `__iter__`, or the
    sequence protocol over its `__getitem__`): that code is differentiated like any other, and the drawn
    items' cotangents flow back through it. iter/list/tuple/unpacking are the items; any other such
    primitive (sum, min, max, sorted, math.fsum, ...) is called on them as a list."""
    v = args[0]
    it, pb = _twin_call(EVERY_ARGUMENT, iterate, (v,), (), _NOKW)
    if f is iter and not kw and type(getattr(type(it), "__next__", None)) is types.FunctionType:
        # `for x in obj` / `iter(obj)`: drawn as the loop draws, not all at once (a loop leaving early
        # left the object drained: what read it next found nothing, silently)
        lazy = _Drawn(it)
        return lazy, (_user_iter_back, (_next_back, lazy.nexts, pb), f, lazy, (), v)
    items, nexts = _draw(it)
    if nexts is not None:  # the iterator's own `__next__` made each item: its cotangent goes back through it
        pb = (_next_back, nexts, pb)
    if f in _DRAWING and not kw:
        y = unpack(items, *args[1:]) if f is unpack else f(items)
        return y, (_user_iter_back, pb, f, y, args[1:], v)
    y, inner = call(EVERY_ARGUMENT, f, items, *args[1:], **kw)
    return y, (None if inner is None else (_user_consumer_back, inner, pb))


class _Drawn:
    """An iterator over a Python iterator's items, each drawn when asked for by its `__next__` run as its
    twin (what it computes is recorded): the pullbacks of the draws made, in `nexts`, are those the
    reverse pass follows back (`_next_back`), however far the loop went."""
    __slots__ = ("it", "nxt", "nexts", "tick")
    _od_by_position = True  # (its cotangent box: the drawn items' cotangents by position, `structs._new_box`)

    def __init__(self, it):
        self.it, self.nxt, self.nexts, self.tick = it, type(it).__next__, [], CHANGES[0]

    def __iter__(self):
        return self

    def __next__(self):
        if CHANGES[0] != self.tick:
            self._check_unchanged()
        y, pb = _twin_call(EVERY_ARGUMENT, self.nxt, (self.it,), (), _NOKW)  # (StopIteration ends it)
        self.nexts.append(pb)
        return y

    def _check_unchanged(self):
        """Refused where a list, dict or array the iterator holds changed since it was made: the draws are
        followed back where the iterator was made, after the loop's changes were undone, so a draw reading
        an item the loop changed or added read another (1 for 3, or past the list's end)."""
        it = self.it
        fields = own_dict(it)
        held = [it, *(fields.values() if type(fields) is dict else ())]
        for v in held:
            if isinstance(v, (list, dict, np.ndarray)) and LAST_CHANGE.get(id(bottom(v)), -1) > self.tick:
                raise UnsupportedFunction(
                    f"reverse mode cannot differentiate a loop over a {type(it).__name__} whose own list, dict "
                    "or array the loop changes: it follows the iterator's draws back after undoing the loop's "
                    "changes", where=_user_line(),
                    fix="loop over a copy of the values, or by index over the container itself; forward mode "
                        "follows it")


def _drawn_item_back(pb, dy, dself, S):
    """An item drawn by `next()` from a `_Drawn`: its cotangent goes into the drawer's box at its position,
    where the pullback of the `iter()` that made the drawer finds it."""
    _, lazy, k = pb
    box = S.box(lazy, dself)
    if dy is not None:
        box.extend([None] * (k + 1 - len(box)))
        box[k] = acc(box[k], dy)
    return box, (), None


def _draw(it):
    """(the items of iterator `it`, the pullbacks of the `__next__` calls that made them): a class's own
    `__next__` (Python code) runs as its twin for each item, so what it computes is recorded; (items, None)
    for C iterators (a list's, a generator twin's eager one)."""
    nxt = getattr(type(it), "__next__", None)
    if type(nxt) is not types.FunctionType:
        return list(it), None
    items, nexts = [], []
    while True:
        try:
            y, pb = _twin_call(EVERY_ARGUMENT, nxt, (it,), (), _NOKW)
        except StopIteration:
            return items, nexts
        items.append(y)
        nexts.append(pb)


def _next_back(pb, dy, dself, S):
    """The drawn items' cotangents (dy) back through each `__next__` call, last first, into the iterator's
    own cotangent, then through the `__iter__` that made the iterator."""
    _, nexts, inner = pb
    gs = list(dy) if dy is not None else ()
    dit = None
    for i in reversed(range(len(nexts))):
        p, g = nexts[i], gs[i] if i < len(gs) else None
        if p is not None:  # (an item of no cotangent too: what `__next__` stored into the iterator, read
            dit, _, _ = p[0](p, g, dit, S)  # after, `for _ in self: pass; self.loglik`, goes back through it)
    if inner is None:
        return None, (None,), None
    return inner[0](inner, dit, dself, S)


_KEYED_TYPES = frozenset({dict, set, frozenset, type({}.keys())})


def _iterate_keys(f, args, kw):
    """A primitive iterating a dict's keys or a set's members, run on them as a list: no cotangent goes
    back to them (refused where one would be needed: `_keys_carry_nothing`)."""
    y, pb = call(EVERY_ARGUMENT, f, list(args[0]), *args[1:], **kw)
    return y, (None if pb is None else (_keys_back, pb))


def _keys_back(pb, dy, dself, S):
    dfn, dargs, dkw = _inner_back(pb, dy, dself, S, (None,))
    _keys_carry_nothing(dargs[0])
    return dfn, (None,) + tuple(dargs[1:]), dkw


def _user_consumer_back(pb, dy, dself, S):
    """The consumer's cotangent for its list of items goes back through the iteration that drew them."""
    draw = pb[2]
    dfn, dargs, dkw = _inner_back(pb, dy, dself, S, (None,))
    gs = dargs[0]
    dv = None
    if draw is not None:  # (no cotangent for the items, but maybe one for what `__next__` stored: as above)
        dv, _, _ = draw[0](draw, SeqBox(list(gs) if gs is not None else []), None, S)
    return dfn, (dv,) + dargs[1:], dkw


def _leaf_rows(x):
    """The rows of an array of a registered type (a dask array), as iterating it draws them."""
    return [x[i] for i in range(len(x))]


def _user_iter_back(pb, dy, dself, S):
    _, inner, f, y, rest, v = pb
    if inner is None:
        return None, (None,) * (1 + len(rest)), None
    # (no cotangent for the items nor the object is no reason to skip the draws: what `__next__` stored
    # elsewhere, a map's function into a list it captured, `list(map(pred, it))`, goes back through them:
    # skipped, it was lost, 0 for 12.6)
    # (no cotangent for the items, but one for the object: what its `__iter__` stored into it, read
    # after, `for _ in s: pass; s.c`, goes back through it; skipped, it was lost)
    gs = [] if dy is None else unpacked_cots(dy, y, *rest) if f is unpack else list(dy)
    dv, _, _ = inner[0](inner, SeqBox(gs), None, S)
    return None, (dv,) + (None,) * len(rest), None


def _iterate_positioned(f, args, kw):
    """list/tuple/sum/min/max/unpacking of a list, tuple or array iterator (perhaps partly consumed):
    run on the items left, whose cotangents go to their positions in the iterator's box."""
    it = args[0]
    pos = position(it)
    items = list(it)
    y, pb = call(EVERY_ARGUMENT, f, items, *args[1:], **kw)
    return y, (None if pb is None else (_positioned_back, pb, it, max(pos, 0)))


def _positioned_back(pb, dy, dself, S):
    _, _, it, pos = pb
    dfn, dargs, dkw = _inner_back(pb, dy, dself, S, (None,))
    gs = dargs[0]  # (merged into the box at their positions)
    box = S.box(it, None if gs is None else [None] * pos + list(gs))
    return dfn, (box,) + dargs[1:], dkw


def _iterate_view(f, args, kw):
    """iter/list/sum/min/max/unpacking of a dict's values or items view: run on its items now, whose
    cotangents go to the dict's entries under the keys it has now (a view sees later changes)."""
    view = args[0]
    mapping = next(m for m in gc.get_referents(view) if isinstance(m, dict))  # `.mapping` is a proxy
    keys = list(mapping.keys())
    items = list(view)
    y, pb = call(EVERY_ARGUMENT, f, items, *args[1:], **kw)
    return y, (None if pb is None else (_view_back, pb, mapping, keys, isinstance(view, VIEWS_ITEMS)))


def _view_back(pb, dy, dself, S):
    """The items' cotangents go into the dict's box now, under the keys it had when they were drawn (so
    the reverse of a later change of the dict sees them)."""
    _, _, mapping, keys, pairs = pb
    dfn, dargs, dkw = _inner_back(pb, dy, dself, S, (None,))
    gs = dargs[0]
    if gs is not None:
        box = S.box(mapping)
        for k, g in zip(keys, list(gs)):
            if pairs:
                g = g[1] if g is not None and len(g) > 1 else None
            if g is not None:
                box[k] = acc(box.get(k), g)
    return dfn, (None,) + dargs[1:], dkw


def _method_out(f, args):
    """`a.sum(0, None, o)`, `a.clip(0, 1, a)`: an ndarray method's output given by position, refused (see
    _positional_out); its position is that of numpy's function of the same name, less the array."""
    fn = getattr(np, f.__name__, None)
    if fn is not None and fn.__class__ is _DISPATCHER:
        pos = _out_position(fn) - 1
        if len(args) > pos >= 0 and args[pos] is not None:
            raise _positional_out(f)


def _ufunc_method_out(f, args):
    """`np.add.accumulate(a, 0, None, a)`, `np.add.reduce(x, 0, None, s)`: a ufunc method's output given by
    position, refused as a function's is (gen19 W4, W5: the write was not seen, 0 or the wrong gradient)."""
    pos = UFUNC_METHOD_OUT.get(f.__name__, -1)
    if len(args) > pos >= 0 and args[pos] is not None:
        raise _positional_out(f, f"{f.__self__.__name__}.{f.__name__}")


def _positional_out(f, name=None) -> UnsupportedFunction:
    """The refusal of outputs passed by position (`np.exp(K, K)`). The transform sees the call as one
    reading its arguments, not writing into one, so the array's cotangent before and after the call would
    be one (sklearn's laplacian_kernel gave the gradient of -gamma * d, not of exp(-gamma * d))."""
    name = name or f.__name__
    return UnsupportedFunction(
        f"reverse mode does not differentiate np.{name} writing into an output array passed by position",
        where=_user_line(),
        fix=f"pass it by keyword (`np.{name}(..., out=a)`), or assign the result")


def _out_call(f, args, kw):
    """`f(..., out=a)`: computed into a new array, then written into a (numpy returns a); the reverse
    pass restores a's old values and takes the cotangent a's variable holds as f's output's."""
    refuse_overlapping_out(f, args, kw)
    out = kw["out"]
    changed(_primal(out))
    old = out.copy()
    rest = {k: v for k, v in kw.items() if k != "out"}
    # a ufunc's `where=`: out keeps its values where it is False (a reduction's `where=` is its own)
    where = rest.pop("where", True) if isinstance(f, np.ufunc) else True
    if where is not True:
        where = np.broadcast_to(where, out.shape)
    y, pb = call(EVERY_ARGUMENT, f, *args, **rest)
    np.copyto(out, y, where=where, casting=rest.get("casting", "same_kind"))  # (`casting='unsafe'` into ints)
    return out, (_out_back, pb, out, old, where, len(args))


def _positional_out_call(f, args, kw):
    """`np.exp(K, K)`, `np.multiply(a, b, c)`: a ufunc of one output given its output array by position, as
    `out=` (`_out_call`); the cotangent the caller holds for that argument is handed by position. Several
    outputs, an `out=` besides, or an output that is not an array: refused."""
    nin = f.nin
    if f.nout != 1 or len(args) != nin + 1 or "out" in kw or type(_primal(args[nin])) is not np.ndarray:
        raise _positional_out(f)
    y, pb = _out_call(f, args[:nin], {**kw, "out": args[nin]})
    return y, (_positional_out_back, pb, nin)


def _positional_out_back(pb, dy, dself, S):
    """`_out_back`, the output's cotangent taken from (and given back to) its position among the arguments."""
    _, inner, nin = pb
    S.dout = (S.held(nin),)  # (refused when the adjoint could not hand it)
    dfn, dargs, dkw = _out_back(inner, dy, dself, S)
    dkw = dict(dkw or {})
    dout = dkw.pop("out", None)
    return dfn, tuple(dargs) + (dout,), dkw or None


def _out_back(pb, dy, dself, S):
    _, inner, out, old, where, nargs = pb
    S.dins = None  # (handed with dout, read by neither)
    dout = S.held_out()
    total = acc(dy, dout)
    new = out.copy()
    write_into(out, Ellipsis, old)
    S.redo(write_into, out, Ellipsis, new)
    if where is not True and total is not None:
        total = np.where(where, total, 0.0)  # only the written elements came from f
    if inner is None or total is None or integral(out):  # nothing read the result (or an integer array took it,
        # in steps): no cotangent for the arguments
        dfn, dargs, dkw = None, (None,) * nargs, None
    else:
        dfn, dargs, dkw = inner[0](inner, total, dself, S)
    dkw = dict(dkw or {})
    if where is not True and dy is not None:
        # where not written, out keeps its old values: their cotangent (the result's there, whether the
        # caller holds it as out's or as the result's: `s = np.divide(1, s, where=m, out=s)`) is out's
        dkw["out"] = np.where(where, 0.0 if dout is None else -dout, dy)
    elif dout is not None:  # its values before the call were overwritten (where written)
        dkw["out"] = -dout if where is True else np.where(where, -dout, 0.0)
    return dfn, dargs, dkw


# the pullbacks that read the cotangents the caller holds for the call's arguments (`Session.held`,
# `held_out`): the adjoint hands them to these only, when they are the call's own pullback
ONE_BACKS = frozenset({_float_back, _hot_back, _f8_back, _hot_reduce_back})  # (`pull_one`'s)
HELD_BACKS = frozenset({_inplace_back, _mutating_back, _out_back, _positional_out_back,
                        _kw_checked_back})  # (`np.putmask(a, mask=m, values=v)`: the in-place rule, by keyword)


def _dual_method_call(f, args, kw):
    """x.sum() etc. on a forward-mode dual array: run it, and differentiate it with the ndarray method's
    rule (whose adjoint then runs on duals, under ForwardContext when it must)."""
    _method_out(f, args)  # (`a.sum(0, None, s)` on duals: refused, as on arrays; gen19 W3 gave zeros)
    rule = _rules.get((np.ndarray, f.__name__))
    if rule is not None and rule.adjoint is None and rule.inplace is not None:  # x.sort(), x.fill(v)
        changed(_primal(f.__self__))
        y, back = rule.inplace(f.__self__, *args, **kw)
        return y, (_inplace_back, back, f.__self__)
    y = f(*args, **kw)
    if rule is None or rule.adjoint is None:
        if rule is not None and rule.kind == "nondiff":
            return y, None
        raise _no_rule(f)
    return y, (_static_back, rule.adjoint, y, (f.__self__,) + args, kw, True)


def _leaf_method_call(f, args, kw):
    """x.sum(), x.dot(y), x.astype(t) on an array of a registered type (`leaves.ArrayLeaf`, a dask array):
    the array's own method runs (lazily), differentiated by the rule of the ndarray method of that name;
    one without a rule is refused, never differentiated through the type's Python code."""
    name = f.__name__
    if _leaf_types.HOSTED and isinstance(f.__self__, _leaf_types.HOSTED):
        raise _no_rule(f)  # (a torch tensor's Python method, `t.resize`: torch's meaning, never ndarray's rule)
    rule = _rules.get((np.ndarray, name))
    if rule is None:
        raise _no_rule(f)
    if rule.kind == "nondiff":
        return f(*args, **kw), None
    if rule.adjoint is None:  # in-place and recording rules (`x.sort()`) are numpy's own
        raise _no_rule(f)
    y = f(*args, **kw)
    return y, (_static_back, rule.adjoint, y, (f.__self__,) + args, kw, True)


_OBJECT_NEW = object.__new__
_ARANGE = np.arange


def _other_call(mask, f, args, kw):
    repl = REPLACEMENTS.get(f) if _hashable(f) else None
    if repl is not None:
        return _twin_call(EVERY_ARGUMENT, repl, (), args, kw)
    if type(f) is _DISPATCHER:
        if protocol_objects((*args, *kw.values()), f):
            # (numpy hands it to an argument's own `__array_function__`, pint's: its Python implementation run
            # on the Quantity stripped its units, `np.trapezoid(Q, Q)` a plain number off by Pa/hPa's 100)
            return _twin_call(mask, through_protocol(f), (), args, kw)
        impl = f._implementation
        if type(impl) is types.FunctionType:
            return _twin_call(mask, impl, (), args, kw)
    getter = GETTERS.get(type(f))
    if getter is not None and len(args) == 1 and not kw:
        y, pb = _twin_call(EVERY_ARGUMENT, getter, (), (f.__reduce__()[1],) + args, kw)
        return y, (None if pb is None else (_getter_back, pb))
    if isinstance(f, functools.partial):
        return _partial_call(f, args, kw)
    if f is functools.partial:
        return _make_partial(args, kw)
    if f is super and len(args) == 2:  # super(cls, obj): its cotangent is obj's
        return super(*args), (_super_back,)
    if type(f) is _LRU_CACHE:  # differentiated through the function itself: a cached value has no pullback
        inner = f.__wrapped__
        if type(inner) is types.FunctionType and any(_cell_value(c) is f for c in inner.__closure__ or ()):
            # a recursive closure cached (`@cache def F(n): ... F(n - 1) ...` reading a differentiated cell):
            # its cells' cotangents went round the cache's self-reference and were lost, 0
            raise UnsupportedFunction(
                f"reverse mode cannot differentiate {inner.__qualname__}, a recursive closure under "
                "functools.lru_cache/cache", where=_user_line(),
                fix="drop the cache, or pass the differentiated value as an argument; forward mode follows it")
        if not _may_differ((args, kw), 0):
            # a call of constants answered from the cache: no code ran, and a value holding nothing
            # differentiable has no derivative to record (narwhals' `_discover_entrypoints()`, under sklearn's
            # kernels, re-read every installed package's metadata at each call: 1632 files per gradient)
            try:
                hits = f.cache_info().hits
                cached = f(*args, **kw)
            except Exception:  # (unhashable arguments: the recording raises as Python does)
                hits = None
            if hits is not None and f.cache_info().hits > hits and not _may_differ(cached, 0):
                return cached, None
        y, pb = call(mask, inner, *args, **kw)
        _stale_hit(f, y, args, kw)
        return y, pb
    if isinstance(f, np.vectorize):  # numpy's loop as Python (`rules.numpy.stand_ins.vectorized`)
        y, pb = _twin_call(EVERY_ARGUMENT, vectorized, (), (f,) + args, kw)
        return y, (_vectorize_back, pb)
    if (f is vars and len(args) == 1 or f is object.__getattribute__ and len(args) == 2
            and args[1] == "__dict__") and not kw and not isinstance(args[0], (type, types.ModuleType)):
        # an object's `__dict__` (inspect's static getattr reads it so): the attribute read, whose dict
        # shares the object's cotangent box
        return call(mask if mask < 0 else mask & 1, getattr, args[0], "__dict__")
    if isinstance(f, type) and issubclass(f, BaseException) and not f.__flags__ & _HEAPTYPE and mask != 0 \
            and _may_differ((args, kw), 0):
        # an exception made of a value that may carry a derivative and kept (`e = ValueError(x)`, handed to a
        # generator's `throw`): reverse mode follows none from it to where its values are read (see
        # `helpers.caught`; a generator's handler read it as a constant, gen21 W8b: 0 for 3)
        raise UnsupportedFunction(
            f"reverse mode cannot follow a derivative through a {f.__name__} made of a value that may carry one",
            where=_user_line(), fix="return the value instead of raising it, or give the function a custom adjoint "
                                    "(`@contexts.custom_adjoint`); forward mode (`contexts.derivative`, `jvp`) follows it")
    if f is type and len(args) == 1 and not kw:  # a value's type carries no derivative (a dual's: its
        return type(_primal(args[0])), None        # primal's, as in the tangent twin)
    if isinstance(f, type):
        if f in HASH_TYPES:  # (`hashlib.blake2b(data, digest_size=16)`: a digest of text, `texts_through`)
            y = f(*args, **kw)
            texts_through(f, args, kw, y)
            return y, None
        if mask == 0 and _c_made(f):  # (a C class given constants alone: `operator.methodcaller("twice", 3.0)`)
            return f(*args, **kw), None
        # (the caller's mask says which arguments carry a derivative: `Geo(12.0, t)`'s 12.0 does not, so a C
        # function its __init__ gives it is no differentiated call; the class's code may read differentiated
        # cells whatever the caller knows of its name)
        return _construct(f, args, kw, mask=mask if mask < 0 else mask & ~CELLS_CONSTANT)
    if type(f) is types.MethodType:  # method of a Python class bound to a C callable etc.
        # the object becomes the first argument: the caller's bits move up one, the object's is set
        shifted = mask if mask < 0 else (mask & ~KW_ACTIVE) << 1 | 1 | (mask & KW_ACTIVE)
        y, pb = call(shifted, f.__func__, f.__self__, *args, **kw)
        return y, (None if pb is None else (_bound_back, pb))
    cal = own_dunder(type(f), "__call__")  # (as stored: a descriptor's `__get__` may give a function)
    if cal is not None:
        # the object first, as a method's (`p(0.3)`: the caller's mask says 0.3 is a constant, so a memo keyed
        # by it was no differentiated key; every argument taken as differentiated refused it, gen12)
        y, pb = _twin_call(EVERY_ARGUMENT if mask < 0 else mask & ~(CELLS_CONSTANT | FRESH_SELF), cal, (f,), args, kw)
        return y, pb
    if descriptor_dunder(type(f), "__call__"):
        y, pb = _twin_call(EVERY_ARGUMENT, dunder_call, (f,), ("__call__",) + tuple(args), kw)
        return y, (None if pb is None else (_dunder_call_back, pb))
    # only the arguments the caller differentiates count (mask >= 0 says which): constants such as the
    # 0.0 and 1.0 of `np.linspace(0.0, 1.0, len(x))` do not make a call differentiable
    checked = tuple(a for i, a in enumerate(args) if mask >> i & 1) if mask >= 0 else tuple(args)
    owner = getattr(f, "__self__", None) if type(f) is _BUILTIN or type(f) is _WRAPPER or type(f) is _C_METHOD \
        else None
    if owner is not None and not isinstance(owner, types.ModuleType):
        checked = (owner,) + checked  # a C method of a differentiable object (`y.sort()`) needs a rule too
    if not _any_differentiable(checked, kw if mask < 0 or mask & KW_ACTIVE else _NOKW):
        if _TEXTS:  # (a differentiated number's text was made: a digest of it is remembered, `texts_through`)
            y = f(*args, **kw)
            texts_through(f, args, kw, y)
            return y, None
        return f(*args, **kw), None
    if isinstance(owner, str) and type(f) is _BUILTIN and f.__name__ == "format":
        # `fmt.format(x)` (lmfit's `fwhm_expr`: a class's constant read from an object that holds a derivative
        # later): text carries none; it is remembered, so a parse of it back is refused (`parsed`)
        values = [*map(_primal, args), *(_primal(v) for v in kw.values())]
        y = f(*values[:len(args)], **dict(zip(kw, values[len(args):])))
        if mask >= 0:  # (only the differentiated arguments' text is remembered: a constant's, `.format(0.5)` by
            # a format string made from an integer field of an object holding a derivative, geomdl's knot
            # vector normalised to `obj.precision` decimals, was taken for one and its parse refused)
            values = [v for i, v in enumerate(values[:len(args)]) if mask >> i & 1] + (
                values[len(args):] if mask & KW_ACTIVE else [])
        return _text_of(y, *values), None
    if owner is not None and type(f) is _WRAPPER and getattr(owner, "__objclass__", None) is type:
        # `type.__dict__["__mro__"].__get__(obj)` (inspect's static getattr): a class's metadata, or
        # TypeError for an object that is not a class — never a number
        return f(*args, **kw), None
    if f is setattr and _metadata_store(args, kw):
        return f(*args), None
    if type(f) is _BUILTIN and f.__name__ == "__getitem__" and len(args) == 1 and not kw \
            and isinstance(owner, dict) and type(getattr(type(owner), "__missing__", None)) is _FunctionType:
        # `ns.__getitem__(k)` of a dict subclass with a Python `__missing__` (a bound method handed to map):
        # as `ns[k]`, its `__missing__` run as code (`helpers.subscript`), not called from C unrecorded
        return _twin_call(EVERY_ARGUMENT, subscripted, (owner,), args, kw)
    if f is _OBJECT_INIT or type(f) is _WRAPPER and f.__name__ == "__init__" and getattr(f, "__objclass__", None) is object:
        # object's own __init__ (`super().__init__()` atop a hierarchy, blackscholes' options): stores nothing
        return f(*args, **kw), None
    if f is _OBJECT_NEW and args and isinstance(args[0], type):
        # `cls.__new__(cls, *args)` reaching object's (a metaclass's `__call__` making the object, levitate's
        # fields): a new empty object, the other arguments left to `__init__` (or refused, as Python does)
        return f(*args, **kw), None
    if _numeric_call(f, args, kw):
        y = f(*args, **kw)
        if _inexact_out(y):
            return y, (_no_rule_back, f, args, kw)
    raise _no_rule(f)


def _numeric_call(f, args, kw) -> bool:
    """f, a C function without a rule, is one that computes numbers from numbers alone: a ufunc (scipy.special's
    `stdtrit`) of numbers and numeric arrays, without an output argument, or a module's function of numbers
    (statistics' `_normal_dist_inv_cdf`): it changes none of its arguments and keeps none of them."""
    if marked_opaque(f) or kw and (type(f) is not _UFUNC or not kw.keys() <= _UFUNC_OPTIONS):
        return False
    if type(f) is _UFUNC:
        return len(args) == f.nin and all(_numeric_leaf(a, True) for a in args)
    owner = getattr(f, "__self__", None)
    return type(f) is _BUILTIN and (owner is None or type(owner) is types.ModuleType) and all(
        _numeric_leaf(a, False) for a in args)


_UFUNC_OPTIONS = frozenset({"dtype", "casting", "order", "subok"})
_NUMERIC_LEAVES = frozenset({float, int, bool, complex, str, type(None), np.float64, np.float32, np.int64, np.int32,
                             np.complex128, np.bool_})


def _numeric_leaf(v, arrays: bool) -> bool:
    t = type(v)
    if t in _NUMERIC_LEAVES:
        return True
    if t is _NDARRAY:
        return arrays and v.dtype.kind in "biufc"
    return t is tuple and all(_numeric_leaf(e, arrays) for e in v)


def _inexact_out(y) -> bool:
    """y is inexact numbers or arrays only (tuples of them): what a derivative could flow through. A C function
    returning anything else (bytes of a float: `struct.pack`) may carry its arguments' values where no
    cotangent follows, so it is refused."""
    t = type(y)
    if t is float or t is complex or t is np.float64 or t is np.float32 or t is np.complex128:
        return True
    if t is _NDARRAY:
        return y.dtype.kind in "fc"
    return t is tuple and len(y) > 0 and all(_inexact_out(e) for e in y)


def _no_rule_back(pb, dy, dself, S):
    """The cotangents of a C function without a rule that computes numbers from numbers (`_numeric_call`): not
    known, `Refused` wherever an argument can carry one, so that it is dropped at a constant (the 0.975 and 18 of
    `scipy.stats.t.ppf(0.975, 18)`, read through the distribution's object, which reverse mode cannot tell from
    a differentiated one) and refused at a differentiated input; none for a zero cotangent."""
    _, f, args, kw = pb
    if dy is None or _all_zero_cotangent(dy):
        return None, (None,) * len(args), None
    return None, _unknown_back(Refused(_NoRule(f, _user_line())), args), None


class _NoRule:
    """Why a cotangent is unknown (`Refused.why`): it went back through a C function without a rule."""

    __slots__ = ("f", "where", "function", "argument")

    def __init__(self, f, where) -> None:
        self.f, self.where, self.function, self.argument = f, where, _qualified(f), "its arguments"

    def error(self) -> NoRuleError:
        return _no_rule(self.f, self.where)


def _all_zero_cotangent(dy) -> bool:
    if type(dy) is tuple:
        return all(d is None or _all_zero_cotangent(d) for d in dy)
    if type(dy) is float:
        return dy == 0.0
    return type(dy) is _NDARRAY and dy.dtype.kind in "fc" and not dy.any()


def _qualified(f) -> str:
    return qualified_name(f)


def _c_made(cls) -> bool:
    """cls's objects are made by C code alone: no Python `__new__`, `__init__` or metaclass `__call__`."""
    return (type(type(cls).__call__) is not types.FunctionType and type(cls.__new__) is not types.FunctionType
            and type(cls.__init__) is not types.FunctionType)


def dunder_call(obj, name, *args, **kw):
    """`obj.<name>(*args)` by what its class's attribute binds: differentiated as this call where the
    attribute is an object of its own, not a function (a descriptor: multipledispatch's dispatcher, one
    giving a `functools.partial`), which Python calls for an operator, a subscript or a call."""
    return getattr(obj, name)(*args, **kw)


def descriptor_dunder(cls, name) -> bool:
    """cls's attribute `name` (`__mul__`, `__getitem__`, `__call__`), as stored, is a descriptor object whose
    `__get__` binds what Python runs for the operator (its result's derivative was taken as a number's: 0;
    a lambda its `__get__` returned was called with the object too)."""
    return bound_by_descriptor(stored_attribute(cls, name))


def own_dunder(cls, name):
    """cls's attribute `name` as stored when it is a function (Python code to re-run with the object first),
    else None (a descriptor's is `descriptor_dunder`'s; C's the rules')."""
    m = stored_attribute(cls, name)
    return m if type(m) is types.FunctionType else None


def _metadata_store(args, kw) -> bool:
    """`setattr(obj, "__name__", "g")` as functools.update_wrapper makes it: a constant stored into a
    dunder attribute, which no computation reads as a number (an object's fields are its plain names)."""
    return (not kw and len(args) == 3 and isinstance(args[1], str) and args[1].startswith("__")
            and args[1].endswith("__") and not _any_differentiable(args[2:], _NOKW))


def _dunder_call_back(pb, dy, dself, S):
    dobj, dargs, dkw = _inner_back(pb, dy, None, S)
    return dobj, dargs[1:], dkw  # (the name's dropped: the cotangents of f and then of the call's arguments)


def _getter_back(pb, dy, dself, S):
    _, dargs, _ = _inner_back(pb, dy, None, S, (None, None))
    return None, dargs[1:], None  # (the items' own dropped)


def _vectorize_back(pb, dy, dself, S):
    _, dargs, dkw = _inner_back(pb, dy, None, S)
    return dargs[0] if dargs else None, dargs[1:], dkw  # the vectorize object's, then the arguments'


def _hashable(f) -> bool:
    try:
        hash(f)
        return True
    except TypeError:
        return False


def _any_differentiable(args, kw) -> bool:
    """Whether some value may carry a derivative. Sound: a value is constant only when it is of a type
    known to carry none (ints, strings, flags, types, modules, integer arrays...) or a container or
    object all of whose parts are; anything else (object arrays, foreign array types, iterators, C
    objects the engine does not know) may, so a C function without a rule reached with it is refused."""
    return any(_may_differ(a, 0) for a in args) or any(_may_differ(a, 0) for a in kw.values())


# types whose values never carry a derivative (C objects included: random generators, patterns...)
_CONSTANT_LEAVES = frozenset({bool, int, str, bytes, bytearray, type(None), type(Ellipsis), slice, range,
                              types.ModuleType, np.dtype, np.bool_, types.BuiltinFunctionType,
                              type(NotImplemented), np.random.Generator, np.random.RandomState,
                              type(re.compile("")), type(len.__call__),
                              # dates and times: integer fields (a float made into one was refused there)
                              datetime.datetime, datetime.date, datetime.time, datetime.timedelta,
                              datetime.timezone, np.datetime64, np.timedelta64,
                              # a C library's opaque handle (numpy's error state, set by `np.errstate` as a
                              # decorator: numpy.ma's `__setitem__`; the capsule holds no Python value)
                              type(datetime.datetime_CAPI)})
DURATIONS = frozenset({datetime.timedelta, np.timedelta64})
_SCALINGS = frozenset({operator.mul, operator.truediv, operator.imul, operator.itruediv, np.multiply, np.divide})
_CONSTANT_KINDS = (type, np.integer, np.bool_, np.dtype, np.random.BitGenerator, np.random.Generator,
                   np.random.RandomState, str, bytes, int)
_DIFF_LEAVES = frozenset({float, complex, np.float64, np.float32, np.complex128})
_DICT_VIEWS = (type({}.values()), type({}.items()), type({}.keys()))
_REPEAT = __import__("itertools").repeat
_KEYS_VIEW = type({}.keys())


# iterators whose `__reduce__` gives the items they have left (`next(iter(names))` of a set of strings: no
# derivative reaches it, epipack's constructors)
_REDUCED_ITERATORS = frozenset({type(iter(set())), type(iter({})), type(iter({}.values())), type(iter({}.items())),
                                type(iter("")), type(iter(range(0)))})


from ..lowered.runtime import _TEXTS, HASH_TYPES, parse_check, texts_through  # noqa: E402  (the texts remembered, `text`)
_CONSTANT_LEAVES |= HASH_TYPES  # (hashlib's objects: a digest of text; of a differentiated number's, remembered)


def _may_differ(a, depth) -> bool:
    ta = type(a)
    if ta in _DIFF_LEAVES:
        return True
    if ta in _CONSTANT_LEAVES or isinstance(a, _CONSTANT_KINDS) or ta is object:  # (a bare `object()`: an identity)
        return False
    if isinstance(a, np.ndarray):
        kind = a.dtype.kind
        if kind in "biuUSmMV":
            return False
        if kind == "O" and depth < 4 and a.size <= 64:
            return any(_may_differ(v, depth + 1) for v in a.flat)
        return True
    if isinstance(a, (numbers.Number, np.generic)):  # Fraction, Decimal, numpy floats...
        return not isinstance(a, numbers.Integral)
    if isinstance(a, Scalar):  # a registered number type (a sympy expression)
        return True
    if isinstance(a, ArrayLeaf):  # a registered array type (dask): by its dtype, known without computing
        return np_dtype(a).kind not in "biuUSmMV"
    if depth >= 6:  # too deep to look into: it may hold one, unless its kind holds none (a pandas dtype in
        return not (LABEL_TYPES and carries_none(a))  # a period array's cache, six fields below its Series)
    if isinstance(a, (list, tuple, set, frozenset)):
        return any(_may_differ(v, depth + 1) for v in a) or (
            ta.__flags__ & _HEAPTYPE and has_fields(a) and _fields_may_differ(a, depth))
    if isinstance(a, dict) or ta is types.MappingProxyType:  # (a read-only view: what it shows)
        return any(_may_differ(v, depth + 1) for v in a.values()) or (
            ta.__flags__ & _HEAPTYPE and has_fields(a) and _fields_may_differ(a, depth))
    if ta in POSITIONED or ta in _REDUCED_ITERATORS:  # a list, tuple, array, set or dict iterator: what it
        r = a.__reduce__()                                # iterates (a set's: the items left, as a list)
        return bool(r[1]) and _may_differ(r[1][0], depth + 1)
    if isinstance(a, _DICT_VIEWS):
        if ta is _KEYS_VIEW:  # (`" ".join(d.keys())` of a dict holding differentiated values: its keys only)
            return any(_may_differ(k, depth + 1) for k in a)
        m = getattr(a, "mapping", None)
        return m is None or _may_differ(m, depth + 1)
    if ta is types.GeneratorType and a.gi_code in _CONSTANT_GENERATORS:  # (tokenize's tokens)
        return False
    if ta is _REPEAT:  # (`itertools.repeat(n_cycles)`: what it repeats, seen by the collector, as `__reduce__`
        return any(_may_differ(v, depth + 1) for v in gc.get_referents(a))  # is deprecated: neurodsp's wavelets)
    if isinstance(a, weakref.ref):  # (what it refers to: a WeakKeyDictionary's key, singledispatch's class)
        return _may_differ(a(), depth + 1)
    if ta is types.FunctionType:
        cells = a.__closure__ or ()
        return any(_may_differ(_cell_value(c), depth + 1) for c in cells)
    if ta is types.MethodType or ta is _BUILTIN or ta is _WRAPPER:
        return _may_differ(getattr(a, "__self__", None), depth + 1)
    if isinstance(a, functools.partial):
        return _may_differ((a.func, a.args, a.keywords), depth + 1)
    if LABEL_TYPES and carries_none(a):  # a pandas index of integers, strings or dates (xarray's coordinates)
        return False
    if HELD_VALUES and (held := HELD_VALUES.get(ta)) is not None:  # (an XML element: its texts, and its
        return any(_may_differ(v, depth + 1) for v in held(a))     # children's, `rules.xml_trees`)
    if has_fields(a) and not isinstance(a, BaseException):
        return _computes_in_c(ta) or any(_may_differ(v, depth + 1) for v in fields_of(a).values()) or (
            _c_fields_may_differ(a, depth))
    return True  # a type the engine does not know: it may carry one


_C_FIELDS: dict = {}
_DESCRIPTOR_FIELDS = (types.GetSetDescriptorType, types.MemberDescriptorType)


def _c_fields(cls) -> tuple:
    """Names of the fields a compiled base of cls keeps beside its `__dict__` (Cython's `cdef public`
    attributes, seen as getset or member descriptors of an extension class; not Python's own classes, nor
    the slots `fields_of` reads)."""
    known = _C_FIELDS.get(cls)
    if known is None:
        names = []
        for base in cls.__mro__:
            if base is object or (base.__module__ or "builtins").split(".")[0] in ("builtins", "abc", "typing"):
                continue
            slots = base.__dict__.get("__slots__", ())
            slots = (slots,) if isinstance(slots, str) else slots
            names.extend(name for name, d in base.__dict__.items()
                         if type(d) in _DESCRIPTOR_FIELDS and not name.startswith("__") and name not in slots
                         and name not in names)
        known = _C_FIELDS[cls] = tuple(names)
    return known


def _c_fields_may_differ(a, depth) -> bool:
    """An extension class's own fields (pandas' BlockManager keeps its blocks, a Block its array, in Cython
    attributes): seen through its empty `__dict__` only, `mgr.get_slice(s)` (`df.iloc[1:]`) ran natively and
    a zero gradient came out. A field whose read fails may hold anything: it may carry a derivative. A property
    computed from the fields (a new object at each read, `NDArrayBacked.T`) is what the fields make it: skipped
    (read, it made another of its kind, whose `.T` made another, to the depth limit)."""
    for name in _c_fields(type(a)):
        try:
            v = getattr(a, name)
            if getattr(a, name) is not v and not isinstance(v, (int, float, complex, str, tuple)):
                continue
        except Exception:
            return True
        if _may_differ(v, depth + 1):
            return True
    return False


_HEAPTYPE = overdub.ops.HEAPTYPE  # (a class of Python code)

_IN_C: dict = {}
_VALUE_FREE_BASES = frozenset({object, str, bytes, bytearray, list, tuple, dict, set, frozenset, int, bool})  # (their + and *)
_C_VALUE_METHODS = ("__float__", "__complex__", "__array__", "__add__", "__mul__", "__getitem__", "__iter__")
_C_SLOT = (type(object.__init__), type(str.join), type(object().__str__))  # wrapper, method descriptor, method-wrapper


def _computes_in_c(cls) -> bool:
    """cls holds values of its own in compiled code, beside its fields: a base class of C code (not `object`)
    with arithmetic, a conversion to numbers, or items (a torch Tensor, whose `__dict__` is empty and whose
    values are its C base's; a deque or array.array subclass). Such an object is no constant for having
    constant fields: `float(t * t)`, `h.pop()`, `list(h)`, `a.tolist()` ran natively and an empty Tangent,
    zero, came out."""
    known = _IN_C.get(cls)
    if known is None:
        known = _IN_C[cls] = any(
            base not in _VALUE_FREE_BASES and (base.__module__ or "").split(".")[0] not in ("datetime", "_io", "io")
            and any(type(base.__dict__.get(n)) in _C_SLOT for n in _C_VALUE_METHODS)
            for base in cls.__mro__)
    return known


def _fields_may_differ(a, depth) -> bool:
    """A list, tuple or dict subclass's own fields (`self._params`): its Python methods C code calls
    (a dict subclass's `__missing__` under `eval(expr, g, ns)`, `ns.__getitem__(k)`, `format_map`) may
    read them; seen as the empty dict it is, the C call ran unrecorded (epidemik's parameters: 0 for 2)."""
    return any(_may_differ(v, depth + 1) for v in fields_of(a).values())


def _cell_bound(c) -> bool:
    try:
        c.cell_contents
    except ValueError:  # an empty cell
        return False
    return True


def _cell_value(c):
    try:
        return c.cell_contents
    except ValueError:  # an empty cell
        return None


def _user_line() -> str | None:
    """`function (file:line)` of the innermost frame outside the engine (overdub and contexts, rules
    included): the user's (or a library's) line, or their adjoint's."""
    frame = outside_engine(sys._getframe(1))
    return f"{frame.f_code.co_qualname} ({frame.f_code.co_filename}:{frame.f_lineno})" if frame else None


def _no_rule(f, where=None) -> NoRuleError:
    where = where or _user_line()
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)
    return NoRuleError(
        f"no reverse rule for the C function {_qualified(f)}, reached with differentiable inputs{library_hint(f)}",
        where=where,
        fix=("register one: `@contexts.custom_adjoint(fn)` on a function returning (y, pullback), or "
             f"`contexts.rules.registry.adjoint({name})` with the static form; or wrap the call in "
             "`stop_gradient` if no gradient should flow through it"))


def _partial_call(p, args, kw):
    y, pb = call(EVERY_ARGUMENT, p.func, *p.args, *args, **{**p.keywords, **kw})
    # (the partial's own keywords the call did not override: `partial(model, q=x)(1.0, q=0.27)` gave x the
    # cotangent of the 0.27)
    own = tuple(k for k in p.keywords if k not in kw) if kw else tuple(p.keywords)
    return y, (None if pb is None else (_partial_back, pb, len(p.args), own, p))


_LRU_CACHE = functools._lru_cache_wrapper


def _stale_hit(f, y, args, kw) -> None:
    """After reverse mode differentiated an lru_cache'd call through the function itself: the wrapper called
    as Python calls it (so the cache holds what it would), and a hit whose cached value is not the one just
    computed refused — a value computed before the state the function reads changed (a cell `box[0]`, the
    attribute of a cached method's `self`): Python returns it, the recomputation's derivative is of another
    value (5.85 for 6.03, gradient 11 for 9.4). Values other than numbers and arrays are not compared; under
    an outer forward pass (hessian) their primals are, and the wrapper is called with the arguments' primals:
    a dual key left in the cache outlived the call (a plain call after `hessian` compared its float with the
    dual's, refused as a special case)."""
    from contexts.forward.dual import primal_tree  # (forward mode imports this module)
    from contexts.forward.holds import dual_free
    if not dual_free(args) or kw and not dual_free(kw):
        args, kw = primal_tree(args), {k: primal_tree(v) for k, v in kw.items()} if kw else kw
    try:
        hits = f.cache_info().hits
        cached = f(*args, **kw)
    except Exception:  # (an argument the cache cannot hash: Python would have raised; the recording ran)
        return
    if f.cache_info().hits > hits and not _same_numbers(cached, y):
        raise UnsupportedFunction(
            f"reverse mode recomputes {getattr(f, '__qualname__', f)} under functools.lru_cache, and the cache "
            "answers this call with a value computed before what the function reads changed", where=_user_line(),
            fix="key the cache by everything the function reads (pass it as an argument), or drop the cache")


def _same_numbers(a, b) -> bool:
    """a and b are equal numbers, arrays, or tuples/lists of them (duals: their primals); True for anything
    else (not compared)."""
    from contexts.forward.dual import Dual, primal  # (forward mode imports this module)
    if type(a) is Dual or type(b) is Dual:
        return _same_numbers(primal(a), primal(b))
    if isinstance(a, (tuple, list)) and type(b) is type(a):
        return len(a) == len(b) and all(_same_numbers(u, v) for u, v in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        try:
            return bool(np.array_equal(a, b, equal_nan=True))
        except TypeError:
            return True
    if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        return a == b or a != a and b != b
    return True


def _super_back(pb, dy, dself, S):
    return None, (None, dy), None


def _make_partial(args, kw):
    """`functools.partial(f, *args, **kw)`: its cotangent (`_partial_back`'s Tangent of func, args and
    keywords) flows back to what it was made of (a partial of a partial is flattened by Python)."""
    p = functools.partial(*args, **kw)
    return p, (_make_partial_back, p, args, tuple(kw))


def _make_partial_back(pb, dy, dself, S):
    _, p, args, kwnames = pb
    if dy is None:
        return None, (None,) * len(args), None
    dfunc, dargs, dkws = dy.get("func"), dy.get("args") or (), dy.get("keywords") or {}
    inner = args[0]
    if p.func is not inner:  # partial(partial(f, a), b): the inner partial holds f and a
        n = len(inner.args)
        dinner = Tangent(func=dfunc, args=tuple(dargs[:n]),
                         keywords={k: dkws.get(k) for k in inner.keywords if k not in kwnames})
        dargs = dargs[n:]
    else:
        dinner = dfunc
    dargs = tuple(dargs) + (None,) * (len(args) - 1 - len(dargs))
    return None, (dinner,) + dargs, {k: dkws.get(k) for k in kwnames} or None


def _partial_back(pb, dy, dself, S):
    npre, pkw = pb[2], pb[3]
    dfn, dargs, dkw = _inner_back(pb, dy, None, S)
    own = Tangent(func=dfn, args=tuple(dargs[:npre]),
                  keywords={k: (dkw or {}).get(k) for k in pkw})
    rest_kw = {k: v for k, v in (dkw or {}).items() if k not in pkw} or None
    return own, dargs[npre:], rest_kw


def _number_like(v) -> bool:
    return isinstance(v, (float, complex, np.inexact)) or type(v) is _NDARRAY and v.dtype.kind in "fc"


def _class_of_numbers_refused(namespace) -> None:
    """A class made by `type(name, bases, namespace)` whose namespace holds numbers (or lists, tuples, dicts of
    them): read through the class, its attributes would not carry the derivative (0 before). Not its methods,
    getters and names (namedtuple's)."""
    if isinstance(namespace, dict) and any(
            _number_like(v) or type(v) in (list, tuple, dict) and any(
                _number_like(e) for e in (v.values() if type(v) is dict else v))
            for v in namespace.values()):
        raise UnsupportedFunction(
            "reverse mode cannot make a class by type(name, bases, namespace) holding differentiated values: "
            "its attributes, read through the class, would not carry the derivative (0)", where=_user_line(),
            fix="keep the value on an instance (`self.k = ...`) or pass it as an argument; forward mode "
                "(`contexts.derivative`, `jvp`) follows it")


def _construct(cls, args, kw, meta=True, mask=EVERY_ARGUMENT):
    if cls is super:  # a proxy: the methods reached through it are differentiated with their object
        return cls(*args, **kw), None
    if cls is type and len(args) == 3:  # `type(name, bases, namespace)`: made as it is, refused where the
        _class_of_numbers_refused(args[2])  # namespace holds numbers (gen16 W1); namedtuple's: made
        return type(*args, **kw), None
    if cls is _LRU_CACHE and len(args) == 4 and not kw:  # functools.lru_cache around a function: called, it
        return _LRU_CACHE(*args), (_cached_back,)         # is differentiated through the function itself
    if cls.__module__.startswith("uncertainties") and _any_differentiable(args, kw):
        # ufloats are numbers to reverse mode (rules take them whole); one built from a differentiated
        # value would be taken apart into fields by the code reading it: refused, never half right
        raise _no_rule(cls)
    if cls is types.MethodType and len(args) == 2 and not kw:  # `types.MethodType(fn, obj)`: a method bound
        return cls(*args), (_make_method_back,)                    # by hand, its cotangent is obj's
    if issubclass(cls, _GENERATOR_CM) and len(args) == 3 and not kw:
        return _generator_cm(cls, *args), None
    meta_call = getattr(type(cls), "__call__", None) if meta else None
    if type(meta_call) is types.FunctionType:  # a metaclass's own `__call__` makes the object: its code
        return _twin_call(mask, meta_call, (cls,), args, kw)
    init = cls.__init__
    fresh = mask | FRESH_SELF if mask == 0 else mask  # (no argument differentiated: see `_active_params`)
    if cls.__new__ is object.__new__ and type(init) is types.FunctionType:
        if _has_source(init):
            obj = object.__new__(cls)
            _, pb = _twin_call(fresh, init, (obj,), args, kw)
            return obj, (None if pb is None else (_construct_back, pb))
        if dataclasses.is_dataclass(cls) and dataclass_init_is_code(cls, _has_source):
            # its `__post_init__` computing from the fields, or its stores running Python (a `__setattr__` of
            # its own): the generated `__init__` as code
            # (`lowered.runtime.dataclass_init`), differentiated with it (run natively it was refused)
            obj = object.__new__(cls)
            _, pb = _twin_call(mask, dataclass_init, (obj,), args, kw)
            return obj, (None if pb is None else (_construct_back, pb))
        if dataclasses.is_dataclass(cls):  # generated __init__: fields in, fields out
            names = [f.name for f in dataclasses.fields(cls) if f.init]
            obj = cls(*args, **kw)
            if getattr(cls, "__post_init__", None) is not None and _any_differentiable(args, kw):
                _check_post_init(cls, obj, dict(zip(names, args), **kw))
            return obj, (_fields_back, names, len(args), tuple(kw), obj)
    if issubclass(cls, tuple) and hasattr(cls, "_fields") and _generated_tuple_new(cls):
        # a namedtuple: fields in, fields out (a subclass's own `__new__` or `__init__` runs as code below: one
        # computing `sin(a)` had the field's cotangent taken for the argument's, silently 1.0 for 1.27)
        return cls(*args, **kw), (_fields_back, list(cls._fields), len(args), tuple(kw), None)
    base = dict if issubclass(cls, dict) else list if issubclass(cls, list) else None
    if base is not None and cls.__new__ is base.__new__:
        if init is base.__init__ and args and iterated_by_python(args[0]) and not (
                base is dict and hasattr(args[0], "keys")):
            # `L(obj)` of an object whose class iterates in Python: made empty, then filled as code (natively
            # its `__iter__` ran unrecorded: 0, silently)
            obj = base.__new__(cls)
            _, pb = _twin_call(EVERY_ARGUMENT, drawn_extend if base is list else drawn_update, (obj,), args, kw)
            return obj, (None if pb is None else (_construct_back, pb))
        if init is base.__init__:  # `class Result(dict)`: built as the base is
            if base is dict:
                y, back = new_dict(cls, args, kw)
                return y, (_inplace_back, back, None)
            y = cls(*args, **kw)
            return y, (_static_back, _rules[base].adjoint, y, args, kw, False)
        if type(init) is types.FunctionType and _has_source(init):  # its own __init__, differentiated
            obj = base.__new__(cls)
            _, pb = _twin_call(mask, init, (obj,), args, kw)
            return obj, (None if pb is None else (_construct_back, pb))
    if not _any_differentiable(args, kw):
        if remembered_text((*args, *kw.values())):
            # a differentiated number's text: a class with code of its own runs it (`Point(f"{lat} {lon}")`
            # parses it back there: refused), a C class's parse (`Decimal(str(x))`) is refused here
            for a in (*args, *kw.values()):  # (`Decimal(str(x))`, `Fraction(repr(x))`: the text itself)
                if isinstance(a, str):
                    parsed(a)
            if type(cls.__new__) is not types.FunctionType and type(init) is not types.FunctionType:
                return cls(*args, **kw), None
        else:
            return cls(*args, **kw), None
    if issubclass(cls, float) and cls.__new__ is _FLOAT_NEW and cls.__init__ is object.__init__ and not kw \
            and type(cls).__call__ is type.__call__:
        return call(EVERY_ARGUMENT, float_subclass_call, *args, cls=cls)  # `class Deg(float)`, no own __new__
    if issubclass(cls, float) and cls.__new__ is _FLOAT_NEW and type(init) is types.FunctionType \
            and type(cls).__call__ is type.__call__ and _has_source(init):
        # `class Pressure(float)` with an `__init__` of its own (thermochem's units: `self.data = float(data)`):
        # made by float.__new__ as above, then filled by its `__init__`'s twin, as `type.__call__` does; the
        # object's cotangent flows back through `__init__` (the attributes it stored) into the number made
        obj, pb_new = call(EVERY_ARGUMENT, float_subclass_call, *args, cls=cls)  # (float's ignores keywords
        _, pb_init = _twin_call(mask, init, (obj,), args, kw)                     # given a subclass: `__init__`'s)
        return obj, (None if pb_new is None and pb_init is None else (_new_back, pb_new, pb_init))
    new = cls.__new__
    if type(new) is types.FunctionType and type(cls).__call__ is type.__call__ and _has_source(new):
        return _construct_by_new(cls, new, args, kw, mask)
    raise _no_rule(cls)


_RECAST_METHODS = frozenset({"view", "astype"})
_RECASTS = frozenset((np.ndarray, name) for name in _RECAST_METHODS)


def _reinterpreting_view(method, x, args, kw) -> None:
    """`x.view(dtype)` of a differentiated array in another dtype (`.view(np.int64)`, a structured dtype): its
    bytes reinterpreted have no derivative; `x.astype(str)`: its values made text. Refused where they are made:
    the adjoints refused them too, but ran only where a cotangent reached them, and the reads of an integer,
    text or structured array give none (0, silently)."""
    dtype = kw.get("dtype", args[0] if args else None)
    if method == "astype":
        if dtype is not None and np.dtype(dtype).kind in "US":
            from ..rules.numpy.shapes import text_cast_refused
            text_cast_refused(x, np.empty(0, dtype))
        return
    if dtype is None or isinstance(dtype, type) and issubclass(dtype, np.ndarray):
        return  # (a view as another class: its rule's)
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        return
    if dtype != x.dtype and x.dtype.kind in "fc":
        from ..rules.numpy.shapes import _same_dtype_view  # (the rule's own refusal, made here)
        _same_dtype_view(x, np.empty(0, dtype))


def _generated_tuple_new(cls) -> bool:
    """Whether namedtuple class cls is built by what `collections.namedtuple` made (its `__new__` without
    source, object's `__init__`), not by a subclass's own Python."""
    new, init = cls.__new__, cls.__init__
    return not (type(new) is types.FunctionType and _has_source(new)) and not (
        type(init) is types.FunctionType and _has_source(init))


def _construct_by_new(cls, new, args, kw, mask=EVERY_ARGUMENT):
    """`cls(*args)` for a class with a Python `__new__` (pint's quantities), as `type.__call__` runs it:
    `__new__`'s twin makes the object, then, if it is a cls, `__init__`'s twin (object's: nothing) fills it.
    The object's cotangent flows back through __init__ into __new__; the arguments' add up."""
    obj, pb_new = _twin_call(mask, new, (cls,), args, kw)
    pb_init = None
    if isinstance(obj, cls):
        init = type(obj).__init__
        if type(init) is types.FunctionType and _has_source(init):
            _, pb_init = _twin_call(mask, init, (obj,), args, kw)
        elif init is not object.__init__:
            raise _no_rule(cls)  # a C __init__ taking the differentiated arguments
    if pb_new is None and pb_init is None:
        return obj, None
    return obj, (_new_back, pb_new, pb_init)


def _new_back(pb, dy, dself, S):
    _, pb_new, pb_init = pb
    dobj, dargs, dkw = dy, None, None
    if pb_init is not None:  # (the object's cotangent before __init__ ran, and its arguments')
        dobj, dargs, dkw = pb_init[0](pb_init, None, dy, S)
    if pb_new is not None:
        _, dargs_new, dkw_new = pb_new[0](pb_new, dobj, None, S)
        dargs = dargs_new if dargs is None else tuple(acc(a, b) for a, b in zip(dargs, dargs_new))
        if dkw_new:
            dkw = dkw_new if not dkw else {k: acc(dkw.get(k), dkw_new.get(k)) for k in dkw.keys() | dkw_new.keys()}
    return None, dargs, dkw


def _has_source(fn) -> bool:
    """fn's source can be had (kept per code object: a class's `__init__` is asked at every construction; the
    cache is emptied with overdub's, `overdub.opaque` marking a function included)."""
    code = fn.__code__
    known = _SOURCE_KNOWN.get(id(code))
    if known is not None and known[0] is code:
        return known[1]
    try:
        get_source(code, fn.__globals__)
        found = True
    except SourceUnavailable:
        found = False
    if len(_SOURCE_KNOWN) > 4096:
        _SOURCE_KNOWN.clear()
    _SOURCE_KNOWN[id(code)] = (code, found)
    return found


_SOURCE_KNOWN: dict = {}  # id(code) -> (code, whether its source can be had)
on_clear(_SOURCE_KNOWN.clear)


def _check_post_init(cls, obj, passed):
    """A dataclass's generated `__init__` runs natively, its `__post_init__` too: the cotangents of its
    fields go to the arguments as passed, so a field it computes or changes from them (a frozen class's
    `object.__setattr__(self, "b", 2 * self.a)`) would lose its derivative: refused."""
    declared = getattr(cls, "__dataclass_fields__", {})
    for name, value in fields_of(obj).items():
        if name in passed:
            changed = value is not passed[name] and (_may_differ(value, 0) or _may_differ(passed[name], 0))
        elif name in declared and value is declared[name].default:
            changed = False  # (left to its default, a constant of the class: pyfeng's `divr: float = 0.0`)
        else:
            changed = _may_differ(value, 0)
        if changed:
            post = cls.__post_init__
            code = getattr(post, "__code__", None)
            raise UnsupportedFunction(
                f"reverse mode cannot differentiate {cls.__qualname__}(...): its __post_init__ sets the field "
                f"{name!r} from differentiated values, natively (the generated __init__ has no source)",
                where=f"{code.co_filename}:{code.co_firstlineno}" if code is not None else None,
                fix="compute that field in a property or a method, or give the class a hand-written __init__")


def _fields_back(pb, dy, dself, S):
    """Cotangents of the arguments of a record type's generated constructor: its fields' cotangents — a
    dataclass instance's as its box holds them too (reads through `vars(obj)` and `obj.__dict__`, by
    `.values()` or `.items()`, leave theirs there: 0 before, silently)."""
    _, names, nargs, kwnames, obj = pb
    if obj is not None and S is not None and (dy is not None or id(obj) in S.boxes):
        dy = S.box(obj, dy)
    if dy is None:
        return None, (None,) * nargs, None
    if isinstance(dy, (list, tuple)):
        fields = dict(zip(names, dy))
    elif isinstance(dy, dict):
        fields = dy
    else:
        fields = {n: getattr(dy, n, None) for n in names}
    dargs = tuple(fields.get(n) for n in names[:nargs])
    return None, dargs, {k: fields.get(k) for k in kwnames} or None


def _cached_back(pb, dy, dself, S):
    """The wrapper's cotangent is its function's (what its calls credited to the closure's cells)."""
    return None, (dy, None, None, None), None


_GENERATOR_CM = contextlib._GeneratorContextManagerBase
from .managers import WatchedManager, harmless_code  # noqa: E402


def _generator_cm(cls, func, args, kwds):
    """A `@contextlib.contextmanager` made: `with` calls its `__enter__`/`__exit__` natively, so its
    generator must be a real one, run natively (a twin's generator runs eagerly: the code after `yield`,
    restoring a setting, would run before the body). Its arguments must then carry no derivative: what it
    computes from them, natively, would come out constant."""
    if _any_differentiable((args, kwds), {}) or _may_differ(func, 0):
        if cls is contextlib._GeneratorContextManager and harmless_code(func):
            return WatchedManager(func, args, kwds)  # (it computes and stores nothing: run natively, watched)
        code = getattr(func, "__code__", None)
        raise UnsupportedFunction(
            f"reverse mode does not differentiate through the context manager "
            f"{getattr(func, '__qualname__', func)} called with differentiated arguments (its generator runs "
            f"natively, around the body of the `with`)",
            where=f"{code.co_filename}:{code.co_firstlineno}" if code is not None else None,
            fix="pass it values that are not differentiated, or compute the differentiated part inside the "
                "`with` body")
    return cls(func, args, kwds)


def _make_method_back(pb, dy, dself, S):
    """A bound method's cotangent is its object's (`_bound_back`); its function's cells carry none (a closure
    whose cells do is refused when called bound, in `_twin_back`)."""
    return None, (None, dy), None


def _construct_back(pb, dy, dself, S):
    inner = pb[1]  # the new object's cotangent flows into __init__'s `self` (into its box: `_twin_back`)
    return (None,) + inner[0](inner, None, dy, S)[1:]


# -- pure-Python callees: recording twins ------------------------------------------------------------

class _TwinInfo:
    __slots__ = ("fwd_code", "rev_code", "rev_closure", "rev", "argcount", "varargs", "varkw", "names", "cells",
                 "generated", "helper_closure", "closure_plan", "entry", "numbers", "general", "active",
                 "fwd_last", "rev_last", "tier", "storing", "nkwonly", "steering")


# (id(code), call shape...) -> _TwinInfo, an entry removed when its code object dies. An info holds code
# objects and cells only, nothing of the function's (its globals would keep a generated function, and so
# the entry, alive): the twin and adjoint functions are made per call from fn's globals and cells.
_twins = OwnedEntries()
_twin_map = _twins.data
_short_twins = OwnedEntries()  # (id(code), mask, number of arguments) -> (twin, the defaults): `_twin_call`'s
_short_map = _short_twins.data  # short key for a call of floats and arrays
on_clear(_twins.clear)
on_clear(_short_twins.clear)


def _active_params(code, mask, npre, nargs, kwnames, all_passed=False):
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount
                             + bool(code.co_flags & 4) + bool(code.co_flags & 8)]
    if mask == EVERY_ARGUMENT or mask == ARGUMENTS_ONLY:
        # (the parameters left to their defaults are active as `_defaulted` says: a number a function
        # defined at a module's level took as its default is a constant)
        npassed = npre + nargs
        left = () if all_passed else {n for j, n in enumerate(names[:code.co_argcount + code.co_kwonlyargcount])
                                      if j >= npassed and n not in kwnames}
        every = frozenset(n for n in names if n not in left)
        return every if mask == EVERY_ARGUMENT else every | _NO_CELLS  # (ARGUMENTS_ONLY: not the cells)
    # (an object just made, given to its `__init__` with constants only, holds nothing differentiated: what
    # `__init__` stores into it from the arguments is constant too; a value it stores from elsewhere makes it
    # active as any store does. Taken for active, findiff's stencil weights, computed there from ints, sent
    # their constant cotangent into the ints' dicts: refused)
    act = (set(names[:npre]) if not mask & FRESH_SELF else set()) | (_NO_CELLS if mask & CELLS_CONSTANT else set())
    for i in range(nargs):
        if mask >> i & 1:
            j = npre + i
            if j < code.co_argcount:
                act.add(names[j])
            elif code.co_flags & 4:
                act.add(names[code.co_argcount + code.co_kwonlyargcount])
    if mask & KW_ACTIVE:  # the keyword arguments: their parameters, or the **kwargs one
        positional = names[:code.co_argcount + code.co_kwonlyargcount]
        for k in kwnames:
            if k in positional:
                act.add(k)
            elif code.co_flags & 8:
                act.add(names[-1])
    return frozenset(act)


# Two tiers of adjoints. A long function (more than COMPACT_LINES lines of source) is first given a
# compact adjoint (`codegen.generate`'s compact: the general rules only), which takes half the time to
# build and compile — the first `gradient` of a 500-line function in well under a second (issue 17) —
# and, once its reverse pass has run TIER_UP_AFTER times, the full one with the inlined fast paths (built
# again, swapped in only if the forward twin built with it is the same code: the tapes it records must
# be the ones the new adjoint reads). Short functions get the full adjoint at once.
COMPACT_LINES = 150
TIER_UP_AFTER = 16


@collector.pausing  # (its trees' allocations would trigger full collections: 40% of a long function's build)
def _build(fn, active, keep_generated=False, observed=False, numbers=True, compact=None):
    """fn's twin for the active parameters. With `numbers`, counters changed in place (`n -= 1`) may be
    taken for numbers (not differentiated: `steering_numbers`): `info.numbers` then holds the positions of
    the parameters a call must bind to numbers, and `info.general` the twin for calls that do not.
    `compact`: the first tier's adjoint (None: for functions longer than COMPACT_LINES)."""
    code = fn.__code__
    try:
        src = get_source(code, fn.__globals__)
    except MarkedOpaque as e:
        raise NoSource(
            f"no reverse rule for {code.co_qualname}, marked opaque (`contexts.opaque`), reached with "
            f"differentiable inputs{library_hint(fn)}",
            where=f"{code.co_filename}:{code.co_firstlineno}",
            fix=f"give it a rule (`@contexts.custom_adjoint({code.co_name})` or `contexts.rules.registry"
                f".adjoint`), or stop marking it opaque") from e
    except SourceUnavailable as e:
        raise NoSource(
            f"cannot differentiate {code.co_qualname}: its source is not available ({e.what})",
            where=f"{code.co_filename}:{code.co_firstlineno}",
            fix="register a rule for it (`@contexts.custom_adjoint`) or define it in a file") from e
    freevars = tuple(c for c in code.co_freevars if c != "__class__" and not c.startswith("__od_"))
    requested = active  # (as asked: `_tier_up` builds again for the same, cells' policy included)
    cells = [] if _NO_CELLS <= active else list(freevars)
    constant_cells = _NO_CELLS <= active
    active = active - _NO_CELLS
    if compact is None:
        tree = src.tree
        compact = not observed and (tree.end_lineno or tree.lineno) - tree.lineno > COMPACT_LINES
    try:
        fdef = lower(mangle_private(src.as_function_def(), src.class_name), iterators=True, globals_=fn.__globals__)
        if constant_cells:
            cells = cells_callees_may_change(src.as_function_def(), fn, freevars)
        if rebound := cells_rebound_by_callees(fn):
            name, callee = rebound[0]
            raise UnsupportedFunction(
                f"reverse mode cannot differentiate {code.co_qualname} reading `{name}`, a variable it captured that "
                f"{callee} (a function it calls) rebinds by `nonlocal`: the value read after the call would be "
                "taken for a constant",
                where=f"{code.co_filename}:{code.co_firstlineno}",
                fix=f"keep `{name}` in a list or dict both functions capture (`{name}[0] = ...`), or have "
                    f"{callee.rpartition('.')[2]} return it")
        gen = generate(fdef, set(active), cells, fn.__globals__, f"{code.co_name}__adjoint", freevars, observed,
                       numbers, compact, state_cells(fn))
    except Unsupported as e:
        line = getattr(e.node, "lineno", code.co_firstlineno)
        raise UnsupportedFunction(
            f"reverse mode cannot transform {code.co_qualname}: it uses a {e}",
            where=f"{code.co_filename}:{line}",
            fix="give the function a custom adjoint (`@contexts.custom_adjoint`), or rewrite that part") from e
    fwd_code = compile_twin(src, gen.forward, extra_freevars=HELPERS, opaque=True)
    rev_code = compile_twin(src, gen.adjoint, extra_freevars=HELPERS, opaque=True)
    rev_code = rev_code.replace(co_name=f"{code.co_name}__adjoint",
                                co_qualname=f"{code.co_qualname}.<adjoint>")
    table = _OBSERVED_CELLS if observed else _HELPER_CELLS
    info = _TwinInfo()
    info.fwd_code, info.rev_code = fwd_code, rev_code
    info.rev_closure = tuple(table[v] for v in rev_code.co_freevars) or None
    # An adjoint that reads no global of fn's module (its code reads builtins only) is made once, on
    # builtins alone; one reading fn's globals is made per call (a cached one would keep them alive).
    info.rev = None
    # (a compact adjoint is made per call, by `_tiered`, which counts the reverse passes)
    info.tier = (TIER_UP_AFTER, numbers, requested) if compact else None
    if not compact and not _ADJOINT_BUILTINS & fn.__globals__.keys() and _global_names(rev_code) <= _ADJOINT_BUILTINS:
        info.rev = types.FunctionType(rev_code, _BUILTINS_ONLY, None, (None, None, None), info.rev_closure)
    info.generated = gen if keep_generated else None  # its trees are large: kept for `show_adjoint` only
    info.helper_closure = (tuple(table[v] for v in fwd_code.co_freevars)
                           if not code.co_freevars else None) or None
    info.closure_plan = _closure_plan(code.co_freevars, fwd_code.co_freevars, table)
    info.argcount = code.co_argcount
    info.nkwonly = nkw = code.co_kwonlyargcount
    info.names = gen.params
    info.varargs = code.co_argcount + nkw if code.co_flags & 4 else -1
    info.varkw = code.co_argcount + nkw + bool(code.co_flags & 4) if code.co_flags & 8 else -1
    info.cells = cells
    info.entry = frozenset(gen.entry)
    info.numbers = (tuple(code.co_varnames.index(p) for p in gen.numbers)
                    + tuple(~code.co_varnames.index(p) for p in gen.sequences)) or None
    info.storing = gen.storing
    info.general, info.active = None, active
    info.fwd_last = info.rev_last = None
    if info.numbers is not None and any((j if j >= 0 else ~j) >= code.co_argcount for j in info.numbers):
        info.numbers = (_ANY_COUNT,)  # (a keyword-only parameter: calls take the general twin)
    # the positional parameters taken as steering only (bound to numbers, or not active): an int passed
    # there gets 0 without `api._counted_ints`'s second run
    info.steering = frozenset(j for j in range(code.co_argcount) if j in (info.numbers or ()) or gen.params[j] not in active)
    return info


def _closure_plan(own: tuple, wanted: tuple, table: dict):
    """How the twin's cells are picked per call: `(pick, helpers)`, the twin's closure being
    `pick(fn.__closure__ + helpers)` — fn's own cells by their index, the helpers' after them (one
    C-level itemgetter: the twin function is made per call)."""
    if not wanted:
        return None
    idx, helpers = [], []
    for v in wanted:  # (the helpers first: fn may be a nested def another pass's twin made, whose own
        if v in own and v not in table:  # `__od_call__` cell is that pass's helper)
            idx.append(own.index(v))
        else:
            idx.append(len(own) + len(helpers))
            helpers.append(table[v])
    pick = operator.itemgetter(*idx) if len(idx) > 1 else (lambda cells, i=idx[0]: (cells[i],))
    return pick, tuple(helpers)


_ADJOINT_BUILTINS = frozenset({"reversed", "type", "float", "int", "getattr", "slice", "len"})
_BUILTINS_ONLY = {"__builtins__": builtins}
_GLOBAL_OPS = {_dis.opmap[n]: n for n in ("LOAD_GLOBAL", "STORE_GLOBAL", "DELETE_GLOBAL", "LOAD_NAME")}
_EXTENDED_ARG = _dis.opmap["EXTENDED_ARG"]


def _global_names(code) -> set:
    """The global names code (and the code nested in it) reads or writes (a scan of its bytecode:
    `dis.get_instructions` takes seconds on a long function; here only the global operations are visited,
    found by `bytes.find` among the operation codes)."""
    out = set()
    raw, names = code.co_code, code.co_names
    ops, args = raw[0::2], raw[1::2]
    for op, name in _GLOBAL_OPS.items():
        i = ops.find(op)
        while i >= 0:
            arg, j, shift = args[i], i - 1, 8
            while j >= 0 and ops[j] == _EXTENDED_ARG:  # (the prefixes holding the argument's higher bytes)
                arg |= args[j] << shift
                j, shift = j - 1, shift + 8
            out.add(names[arg >> 1 if name == "LOAD_GLOBAL" else arg])
            i = ops.find(op, i + 1)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= _global_names(c)
    return out


def _leaves(x, depth=0):
    if depth < 3 and isinstance(x, (list, tuple, dict)):
        for v in x.values() if isinstance(x, dict) else x:
            yield from _leaves(v, depth + 1)
    else:
        yield x


def _opaque_call(fn, args, kw, err, npre=0):
    """A function without source (e.g. made by `exec`) runs as a primitive. It is differentiable only
    when it only rearranges its inputs (argument parsers such as scipy.stats' `_parse_args`: `return (a,
    b), loc, scale`) and every differentiable value it returns is one of them, passed through: cotangents
    are then routed back by identity. Anything else is the NoSource error, which names the function: a
    function that stores into an object, changes an array in place or calls anything may move a
    differentiated value where no record follows it (a silent zero), so its bytecode is checked first."""
    if fn.__name__ == "__new__" and fn.__globals__.get("_tuple_new") is tuple.__new__ and args and \
            isinstance(args[0], type) and hasattr(args[0], "_fields"):
        # a namedtuple's generated `__new__`, called by a subclass's own (`super().__new__(cls, sin(a), b)`):
        # the fields are the arguments after the class
        return fn(*args, **kw), (_tuple_new_back, list(args[0]._fields), len(args) - 1, tuple(kw))
    if fn.__code__.co_filename in _FROZEN_FILES and all(
            type(a) in _ATOMS or isinstance(a, (type, types.ModuleType)) or type(a).__module__ in _IMPORT_MACHINERY
            for a in (*args, *kw.values())):
        # the standard library's frozen modules (import machinery, paths, os: `pkgutil.get_data(package, name)`
        # reaches `importlib.util.find_spec`) given names and numbers of no derivative (a class attribute read
        # through an object holding one, ahrs' model file name): run as they are; a float among the
        # arguments, or a value with a derivative in the result, is refused as before
        y = fn(*args, **kw)
        if any(_any_differentiable((leaf,), {}) for leaf in _leaves(y)):
            raise err
        return y, None
    if not _any_differentiable(args, kw) and not _reads_differentiable(fn):
        # nothing it is given or reads carries a derivative (networkx's `argmap_shortest_path_5`, made by
        # `exec`, given a graph of names: colormath's conversion path, refused): a constant's computation
        return fn(*args, **kw), None
    if not _rearranges_only(fn.__code__):
        raise err
    args, kw = _unshared(args, kw, err)
    try:
        y = fn(*args, **kw)
    except OverdubError as e:  # (forward over reverse: a dual met in its native code) refused as it
        raise err from e
    inputs = {id(v) for v in _leaves(tuple(args) + tuple(kw.values()))}
    for leaf in _leaves(y):
        if _any_differentiable((leaf,), {}) and id(leaf) not in inputs:
            raise err
    return y, (_opaque_back, y, args, kw, npre)


def _unshared(args: tuple, kw: dict, err) -> tuple[tuple, dict]:
    """args and kw with each number or array given at a second place a copy of its own (an array: a view), so
    that the cotangents `_opaque_back` routes back by identity find each place. Two of the caller's variables
    may hold one object (`gradient(f, 1.0, 1.0)`: one constant; `gradient(f, x, x)`), each differentiated on
    its own: scipy.stats' `_parse_args(loc, scale)` passed the object back twice, its two cotangents were
    summed and given to the first place, the second 0 (norm.cdf(0.5, a, b): (-0.18, 0) for (-0.35, 0.18)). A
    caller passing one variable twice adds the two places' cotangents itself. A repeated one inside a list or
    dict (which a copy would replace for the caller too) is refused."""
    seen: set = set()
    repeated = False
    for leaf in _leaves(tuple(args) + tuple(kw.values())):
        if type(leaf) in _ATOMS or leaf is None:
            continue
        if id(leaf) in seen:
            repeated = True
            break
        seen.add(id(leaf))
    if not repeated:
        return args, kw
    seen.clear()

    def own(v, depth: int):
        t = type(v)
        if depth < 3 and t is tuple:
            return tuple(own(u, depth + 1) for u in v)
        if depth < 3 and isinstance(v, (list, tuple, dict)):
            if any(id(u) in seen for u in _leaves(v, depth)):
                raise err  # (a list's or dict's: copying it would hand the callee another object)
            seen.update(id(u) for u in _leaves(v, depth) if type(u) not in _ATOMS and u is not None)
            return v
        if t in _ATOMS or v is None:
            return v
        if id(v) not in seen:
            seen.add(id(v))
            return v
        if t is float:
            return v * 1.0  # (a new float of the same value, -0.0 and nan too)
        if t is complex:
            return complex(v.real, v.imag)
        if isinstance(v, np.generic):
            return v.copy()
        if isinstance(v, np.ndarray):
            return v.view()  # (a new array object over the same memory: an in-place change reaches both)
        raise err
    return tuple(own(a, 0) for a in args), {k: own(v, 0) for k, v in kw.items()}


def _reads_differentiable(fn) -> bool:
    """Whether the source-less fn's defaults, closure cells or the module globals its code names may hold a
    differentiated value (the functions among them: their cells, as `_may_differ` looks)."""
    code = fn.__code__
    named = [fn.__globals__[n] for n in code.co_names if n in fn.__globals__]
    cells = [_cell_value(c) for c in fn.__closure__ or ()]
    return _may_differ((fn.__defaults__, fn.__kwdefaults__, cells, named), 0)


# The operations a source-less function may use and still run as a primitive: reading its arguments and
# constants, building tuples, lists and dicts of them, branching on identity, returning. No call, no
# attribute or item access (either may run Python code), no store but into its own locals, no iteration
# (it draws from an iterator), no arithmetic (its result would be a new value without a record).
_REARRANGING = frozenset({
    "RESUME", "NOP", "CACHE", "EXTENDED_ARG", "LOAD_CONST", "LOAD_FAST", "LOAD_FAST_CHECK",
    "LOAD_FAST_LOAD_FAST", "LOAD_FAST_AND_CLEAR", "STORE_FAST", "STORE_FAST_LOAD_FAST",
    "STORE_FAST_STORE_FAST", "LOAD_DEREF", "MAKE_CELL", "COPY_FREE_VARS", "RETURN_VALUE", "RETURN_CONST",
    "BUILD_TUPLE", "BUILD_LIST", "BUILD_MAP", "BUILD_CONST_KEY_MAP", "LIST_EXTEND", "POP_TOP", "COPY",
    "SWAP", "IS_OP", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE",
    "POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_FORWARD_IF_NONE",
    "POP_JUMP_FORWARD_IF_NOT_NONE", "JUMP_FORWARD", "TO_BOOL", "NOT_TAKEN"})
_rearranging_codes: "weakref.WeakKeyDictionary[types.CodeType, bool]" = weakref.WeakKeyDictionary()


_FROZEN_FILES = frozenset(f"<frozen {m}>" for m in (
    "importlib.util", "importlib._bootstrap", "importlib._bootstrap_external", "importlib.machinery", "zipimport",
    "posixpath", "ntpath", "genericpath", "os", "stat", "codecs", "io", "site"))
_ATOMS = frozenset({str, bytes, bool, type(None), int})
_IMPORT_MACHINERY = frozenset({"_frozen_importlib", "_frozen_importlib_external", "zipimport"})  # (loaders, specs)


def _rearranges_only(code: types.CodeType) -> bool:
    """code only passes its inputs on, rearranged (see `_REARRANGING`)."""
    known = _rearranging_codes.get(code)
    if known is None:
        known = all(ins.opname in _REARRANGING for ins in _dis.get_instructions(code))
        _rearranging_codes[code] = known
    return known


def _tuple_new_back(pb, dy, dself, S):
    _, names, nargs, kwnames = pb
    _, dargs, dkw = _fields_back((None, names, nargs, kwnames, None), dy, None, S)
    return None, (None,) + dargs, dkw


def _opaque_back(pb, dy, dself, S):
    _, y, args, kw, npre = pb
    cots: dict[int, object] = {}

    def walk(v, g, depth=0):
        if g is None:
            return
        if depth < 3 and isinstance(v, (list, tuple)) and isinstance(g, (list, tuple)):
            for vi, gi in zip(v, g):
                walk(vi, gi, depth + 1)
        elif depth < 3 and isinstance(v, dict) and isinstance(g, dict):
            for k, vi in v.items():
                walk(vi, g.get(k), depth + 1)
        else:
            cots[id(v)] = acc(cots.get(id(v)), g)

    walk(y, dy)

    def back(v, depth=0):
        if depth < 3 and isinstance(v, (list, tuple)):
            return type(v)(back(x, depth + 1) for x in v) if not hasattr(v, "_fields") else None
        if depth < 3 and isinstance(v, dict):
            return {k: back(x, depth + 1) for k, x in v.items()}
        # (once: an object given twice, `parse(x, x)`, takes its cotangent at its first place; at each, it was
        # counted twice, scipy.stats' `logistic.cdf(0.8, loc=x, scale=x)` twice its derivative, gen15 W2)
        return cots.pop(id(v), None)

    dargs = tuple(back(a) for a in args)
    dkw = {k: back(v) for k, v in kw.items()} if kw else None
    if npre:  # a bound method: its object's cotangent is the method's own
        return acc(dself, dargs[0]), dargs[npre:], dkw
    return None, dargs, dkw


def twin_info(fn, active):
    """fn's twin for the given active parameters, with its generated trees (for printing; not cached)."""
    return _build(fn, active, keep_generated=True)


_CONSTANT_TYPES = (str, bytes, bool, type(None), types.ModuleType, type)
_ARGUMENT_BITS = (1 << 59) - 1  # (a mask's bits of positional arguments: below FRESH_SELF, KW_ACTIVE, CELLS_CONSTANT)


def _constants(args) -> int:
    """Bits of the arguments that can never carry a derivative (strings, flags, None, modules, types)."""
    bits = 0
    for i, a in enumerate(args):
        if type(a) not in _NEVER_CONSTANT and isinstance(a, _CONSTANT_TYPES):
            bits |= 1 << i
    return bits


# exact types none of whose values is an instance of `_CONSTANT_TYPES` (one set lookup, no isinstance)
_NEVER_CONSTANT = frozenset({float, int, complex, _NDARRAY, list, tuple, dict, np.float64})


# closures that escape the function making them while reading variables it may assign again, by id: the
# cells and the values they held when the closure was made (`guard_cells`)
_GUARDED: dict[int, tuple] = {}


def guard_cells(fn, names):
    """Closure fn, just made, hands its cells' cotangents to the variables' bindings of now (codegen's
    `check_closure`): remember what its cells `names` hold, so that a call seeing another value (the
    variable assigned again since) is refused instead of differentiated at the wrong binding."""
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ())) if type(fn) is types.FunctionType else {}
    missing = [n for n in names if n not in cells]
    if missing:  # (not the closure its code made: a decorated one) its cells cannot be checked
        raise UnsupportedFunction(
            f"reverse mode cannot differentiate closure {getattr(fn, '__qualname__', fn)}: it reads `{missing[0]}`,"
            f" a differentiated variable assigned again after it is made", where=_user_line(),
            fix=f"bind the value when the closure is made (`lambda t, {missing[0]}={missing[0]}: ...`)")
    held = tuple((n, cells[n], _cell_value(cells[n])) for n in names)
    key = id(fn)
    _GUARDED[key] = (weakref.ref(fn, lambda _, key=key: _GUARDED.pop(key, None)), held, _user_line())
    return fn


def closure_arrays(fn, names, unbound=()) -> None:
    """Closure fn, just made, passed on or stored, stores items into its captured variables `names`:
    refused where one holds an array (the caller's cotangent for it after the change cannot reach the
    closure's adjoint: `out[i] = x` in a function given to map came back 0). Lists and dicts are boxed by
    the reverse pass, and pass. The variables `unbound` it changes by a method call (`hist.append(v)`) and
    that are not bound again after it is made: refused unless unbound now (bound only under a flag)."""
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ())) if type(fn) is types.FunctionType else {}
    for n in unbound:
        if n not in cells or _cell_bound(cells[n]):
            raise UnsupportedFunction(
                f"reverse mode cannot differentiate closure {getattr(fn, '__qualname__', fn)}, passed on or stored, "
                f"changing `{n}` in place by a method call (as `{n}.append(...)`), a variable it captures that may "
                f"hold a differentiated value where it runs", where=_user_line(),
                fix=f"call it directly by name, or pass `{n}` to it as an argument")
    for n in names:
        v = _cell_value(cells[n]) if n in cells else None
        if isinstance(v, np.ndarray) or isinstance(v, ArrayLeaf) or type(v).__name__ == "Dual":
            raise UnsupportedFunction(
                f"reverse mode cannot differentiate closure {getattr(fn, '__qualname__', fn)}, passed on or stored, "
                f"storing into `{n}`, an array it captures: the cotangent of `{n}` after the change cannot reach it",
                where=_user_line(), fix=f"call it directly by name, or pass `{n}` to it as an argument")


# closures passed on or stored that capture arrays, by id: (a weak reference, the change counter when made)
_MADE_AT: dict[int, tuple] = {}


def closure_made(fn, read=()) -> None:
    """Closure fn, just made, passed on or stored, reading the differentiated variables `read`: when it
    captures an array, the change counter of now and those names, so that a rule given it later refuses a
    captured array changed in place since (its cotangent goes back where fn was made, before the change:
    `_boxed_cells`), and a derivative rule one it differentiates (`active_array_cells`)."""
    if type(fn) is not types.FunctionType or not fn.__closure__:
        return
    if any(isinstance(_cell_value(c), np.ndarray) for c in fn.__closure__):
        key = id(fn)
        _MADE_AT[key] = (weakref.ref(fn, lambda _, key=key: _MADE_AT.pop(key, None)), CHANGES[0], read)


def active_array_cells(fn) -> list[str]:
    """The captured variables of closure fn (made by differentiated code, `closure_made`) that hold arrays of
    numbers and are differentiated there."""
    made = _MADE_AT.get(id(fn)) if type(fn) is types.FunctionType else None
    if made is None or made[0]() is not fn:
        return []
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    found = [n for n in made[2] if n in cells and isinstance(v := _cell_value(cells[n]), np.ndarray)
             and v.dtype.kind in "fc"]
    return [n for n in found if _subscripted(fn.__code__, n)]


def _subscripted(code, name: str) -> bool:
    """code indexes its captured variable `name` (`arr[0]`): the item read whose cotangent the inner pass of a
    derivative rule drops for a plain array (elementwise arithmetic, `t + e`, keeps it)."""
    ins = list(_dis.get_instructions(code))
    for i, op in enumerate(ins):
        if op.opname == "LOAD_DEREF" and op.argval == name:
            for nxt in ins[i + 1:i + 5]:
                if nxt.opname in ("BINARY_SUBSCR", "BINARY_SLICE"):
                    return True
                if nxt.opname.startswith(("CALL", "LOAD_DEREF", "STORE", "RETURN", "BINARY_OP")):
                    break
    return any(_subscripted(c, name) for c in code.co_consts if isinstance(c, types.CodeType))


def unguard(fn) -> None:
    """The reverse pass has handed fn's cells' cotangents back where fn was made: no call of it is left."""
    entry = _GUARDED.get(id(fn))
    if entry is not None and entry[0]() is fn:
        del _GUARDED[id(fn)]


def _check_guard(fn) -> None:
    entry = _GUARDED.get(id(fn))
    if entry is None or entry[0]() is not fn:
        return
    for name, cell, value in entry[1]:
        if _cell_value(cell) is not value:
            raise UnsupportedFunction(
                f"reverse mode cannot differentiate the closure {fn.__qualname__} called after `{name}`, a "
                f"differentiated variable it reads, was assigned again (the closure was made at {entry[2]}): "
                f"its gradient is handed back where it was made, reading `{name}` as it was then",
                where=_user_line(),
                fix=f"bind the value when the closure is made (`lambda t, {name}={name}: ...`), or make the "
                    f"closure after the last assignment")


_WRITES_FIRST = frozenset({"copyto", "place", "put", "putmask", "fill_diagonal", "shuffle", "heappush", "heappop",
                           "heapify", "heapreplace", "heappushpop", "_heapify_max", "_heappop_max",
                           "_heapreplace_max", "heapify_max", "heappop_max", "heapreplace_max", "heappush_max",
                           "heappushpop_max", "put_along_axis"})


def _stamp(rule, f, full, is_method) -> None:
    """Stamp the change a mutating or in-place rule makes: of its object (a method's: `lst.append(x)`,
    `a.sort()`), of the argument it declares it writes, of the first argument of the functions known to write
    it (`heappush(heap, x)`, `np.copyto(dst, src)`); any other (`getattr`, which may fill a lazy cache) only
    moves the counter."""
    if is_method and full:
        # (a ufunc's `at` writes its first argument, not the ufunc: `np.add.at(y, i, v)` into a view a caller
        # handed in went unstamped, the caller's cotangent of the base never reached it: 0 for 3.4)
        target = full[1] if type(full[0]) is _UFUNC and len(full) > 1 else full[0]
    elif rule.writes is not None and rule.writes < len(full):
        target = full[rule.writes]
    elif full and getattr(f, "__name__", None) in _WRITES_FIRST:
        target = full[0]
    else:
        CHANGES[0] = tick = next(TICKS)
        if id(f) not in _MAKES_NEW:
            UNKNOWN_CHANGE[0] = tick  # (a change of what, no one says: `helpers._reach_changed` takes it for any)
        return
    changed(_primal(target))


# the in-place rules' callables that only make a new object, changing none the caller holds (`dict(path_node)`)
_MAKES_NEW = frozenset(map(id, (dict, types.SimpleNamespace, types.MappingProxyType)))


def _twin_call(mask, fn, pre, args, kw, observed=False):
    if not pre and not kw and not _GUARDED and not observed and fn.__kwdefaults__ is None:
        # the common call of a Python function from a twin (positional floats and arrays): the twin found by
        # one short key, which `_twin_call_slow` stores where what it would work out from the arguments
        # (constants among them, defaults left, which twin) follows from their types and number alone
        found = _short_map.get((id(fn.__code__), mask, len(args)))
        if found is not None and found[1] is fn.__defaults__:
            fast = _FAST_ARGS if mask >= 0 else _NEVER_CONSTANT  # (see `_FAST_ARGS`)
            for a in args:
                if type(a) not in fast:
                    break
            else:
                info = found[0]
                last = info.fwd_last
                if last is not None and (last[0] is fn or type(last[0]) is _WeakRef and last[0]() is fn) and (
                        last[2] is fn.__defaults__) and (info.numbers is None or _numbers_bound(info.numbers, (), args)):
                    try:
                        y, tape = last[1](*args)
                    except Exception as e:
                        _recording_failed(e, info, fn)
                        raise
                    return y, (_twin_back, info, tape, 0, len(args), kw, fn, None)
    return _twin_call_slow(mask, fn, pre, args, kw, observed)


_FAST_ARGS = _NEVER_CONSTANT - {int}
"""Argument types `_twin_call_slow` never takes for constants (int aside, which a callee may take as one).
Under a mask of every argument (negative: `gradient(loop_pow, x, n)`'s own call) no argument of a type in
`_NEVER_CONSTANT`, int included, is taken for one: the short key holds there for all of them."""


def _recording_failed(e, info, fn) -> None:
    """e leaves fn's recording pass: a library function's error says it was transformed, and a derivative
    the pass stored before raising is marked lost (`_note_lost`)."""
    note_transformed(e, fn, "reverse mode (its recording pass)")
    if not isinstance(e, OverdubError) and "__od_lost__" not in getattr(e, "__dict__", ()):
        _note_lost(e, info, fn)


_FORWARDS: dict = {}  # id of a code object -> (the code, the index of the cell its function forwards to or None):
# the code kept, so that its id names no other code later


def _forwarded(fn):
    """The Python function fn only hands its arguments to, where fn is a forwarding wrapper: parameters
    `*args, **kwargs` alone, a body of `return target(*args, **kwargs)` (target a cell), after at most a
    docstring and `warnings.warn(...)` calls reading neither (arch's numba fallback `jit`, a deprecation
    decorator); else None. Such a call is the target's call: what the target changes in place of the
    arguments it is handed is then handed on by position (through the spread, refused: `spread_changed`).
    The warnings are not issued."""
    code = fn.__code__
    entry = _FORWARDS.get(id(code))
    if entry is None or entry[0] is not code:
        entry = _FORWARDS[id(code)] = (code, _forwarding_cell(fn))
    at = entry[1]
    if at is None or fn.__closure__ is None:
        return None
    target = _cell_value(fn.__closure__[at])
    return target if type(target) is types.FunctionType and target is not fn else None


def _forwarding_cell(fn) -> int | None:
    code = fn.__code__
    if code.co_argcount or code.co_kwonlyargcount or not code.co_flags & inspect.CO_VARARGS or not code.co_freevars:
        return None
    try:
        tree = get_source(code, fn.__globals__).tree
    except (OverdubError, OSError, SyntaxError):
        return None
    a = tree.args
    spread, named = a.vararg.arg, a.kwarg.arg if a.kwarg is not None else None
    if isinstance(tree, ast.Lambda):  # (`lambda *a, **k: f(*a, **k)`)
        tree = ast.FunctionDef(name="", args=tree.args, body=[ast.Return(value=tree.body)], decorator_list=[])
    body = tree.body[1:] if tree.body and isinstance(tree.body[0], ast.Expr) and isinstance(
        tree.body[0].value, ast.Constant) and isinstance(tree.body[0].value.value, str) else tree.body
    if not body or not isinstance(body[-1], ast.Return) or not isinstance(call := body[-1].value, ast.Call):
        return None
    for st in body[:-1]:
        if not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and ast.unparse(st.value.func) in (
                "warnings.warn", "warn")) or any(isinstance(n, ast.Name) and n.id in (spread, named)
                                                  for n in ast.walk(st)):
            return None
    if not (isinstance(call.func, ast.Name) and call.func.id in code.co_freevars and len(call.args) == 1
            and isinstance(call.args[0], ast.Starred) and isinstance(call.args[0].value, ast.Name)
            and call.args[0].value.id == spread):
        return None
    if named is None and call.keywords or named is not None and not (
            len(call.keywords) == 1 and call.keywords[0].arg is None and isinstance(call.keywords[0].value, ast.Name)
            and call.keywords[0].value.id == named):
        return None
    return code.co_freevars.index(call.func.id)


def _twin_call_slow(mask, fn, pre, args, kw, observed=False):
    if _GUARDED and id(fn) in _GUARDED:
        _check_guard(fn)
    if fn.__closure__ is not None and (target := _forwarded(fn)) is not None:
        return _twin_call(mask, target, pre, args, kw, observed)
    code = fn.__code__
    given = mask
    constant = 0
    if mask < 0:  # `gradient(f, x, "mode")`: "mode" is no input
        for a in args:
            if type(a) not in _NEVER_CONSTANT:  # (the common case: no call)
                constant = _constants(args)
                break
    elif mask & _ARGUMENT_BITS:
        # an argument the activity analysis could not prove constant (an attribute of an object holding a
        # differentiated value, `_get_row(path, self.formula, self.cas_number)`) that is text, a flag, None,
        # a module or a type here carries none: the callee takes it as a constant (as active, chemics'
        # table lookups ran pandas' own code under the transform, refused). Not text while a differentiated
        # number's text was made (`_TEXTS`): its parse is refused where the callee computes with it. A Python
        # int carries none either (forward mode never makes one a dual; a stair's `int(x)` has derivative 0,
        # judged where it was made): geomdl's `generate(3, c.ctrlpts_size)`, a count read from an object
        # holding control points, made knots whose text `normalize` parses, refused. (An int argument of the
        # outermost call, `gradient(f, x, n, wrt=1)`'s, whose mask alone has CELLS_CONSTANT, is differentiated at
        # its float by `_ints_checked`.)
        ints = not mask & CELLS_CONSTANT
        for i, a in enumerate(args):
            if mask >> i & 1 and (ints and type(a) is int or type(a) not in _NEVER_CONSTANT and isinstance(
                    a, _CONSTANT_TYPES) and (not _TEXTS or type(a) is not str)):
                mask &= ~(1 << i)
    defaulted = None
    if (fn.__defaults__ is not None or fn.__kwdefaults__ is not None) and (
            mask == EVERY_ARGUMENT or mask >= 0 and not mask & CELLS_CONSTANT):  # (f's own gradient wanted)
        defaulted = _defaulted(fn, len(pre) + len(args), kw)
    key = (id(code), mask, len(pre), len(args), tuple(kw) if kw else None, constant, defaulted)
    if observed:  # (contexts.ad.observe) observed twins are cached apart
        key = (key, _OBSERVED)
    info = _twin_map.get(key)
    if info is None:
        active = _active_params(code, mask, len(pre), len(args), tuple(kw))
        if constant:
            names = code.co_varnames
            active = active - {names[len(pre) + i] for i in range(len(args))
                               if constant >> i & 1 and len(pre) + i < code.co_argcount}
        if defaulted:  # parameters left to defaults that may hold differentiated values
            active = active | defaulted
        try:
            info = _twin_map.get((id(code), active, observed))
            if info is None:
                info = _build(fn, active, observed=observed)
                _twins.put(code, (id(code), active, observed), info)
            _twins.put(code, key, info)
        except NoSource as e:
            owner = generated_init_owner(fn, pre[0]) if pre else None
            if owner is not None:  # (`super().__init__(x=x)` reaching a dataclass's generated one)
                return _twin_call(mask, dataclass_init_as, (owner, *pre), args, kw, observed)
            if found_elsewhere(fn, pre[0] if pre else None):
                # the text a library made it from by `exec` (scipy.stats' `_parse_args_rvs`, calling
                # `self._argcheck_rvs`: no mere rearranging of its inputs, refused), made its definition
                return _twin_call_slow(mask, fn, pre, args, kw, observed)
            return _opaque_call(fn, pre + tuple(args), kw, e, len(pre))
    if info.numbers is not None and not _numbers_bound(info.numbers, pre, args, kw, fn):
        info = info.general or _general(info, fn, observed)
    if (not pre and not kw and mask == given and not constant and not observed
          and fn.__kwdefaults__ is None and defaulted is None
          and (info.numbers is None or max(j if j >= 0 else ~j for j in info.numbers) < len(args))):  # (the short key checks the numbers)
        # (defaults holding no differentiated values only: the entry keeps them alive while the code lives)
        fast = _FAST_ARGS if mask >= 0 else _NEVER_CONSTANT
        for a in args:
            if type(a) not in fast:
                break
        else:  # (`_twin_call`'s short key: the same twin for every call passing these types so)
            short = (id(code), mask, len(args))
            if short not in _short_map:
                _short_twins.put(code, short, (info, fn.__defaults__))
    last = info.fwd_last
    if last is not None and (last[0] is fn or type(last[0]) is _WeakRef and last[0]() is fn) and (
            last[2] is fn.__defaults__ and last[3] is fn.__kwdefaults__):
        fwd = last[1]
    else:
        fwd = _forward_function(info, fn)
    try:
        y, tape = fwd(*args) if not pre and not kw else fwd(*pre, *args, **kw)
    except Exception as e:  # (free when nothing is raised)
        _recording_failed(e, info, fn)
        raise
    return y, (_twin_back, info, tape, len(pre), len(args), kw, fn, pre[0] if pre else None)


def _note_lost(e, info, fn) -> None:
    """e leaves fn's recording pass: where the pass had recorded a block storing differentiated values into
    an object (its tape, read from its frame), the derivative of what it stored before raising would be
    lost with the tape (a solver's `self.root = t; raise Converged()`, caught by its caller, who then reads
    `self.root`: 0.0 for 3.0): marked for a handler of transformed code that catches it to refuse."""
    storing = info.storing
    if storing:
        mark_lost(e, info.fwd_code, fn.__code__.co_qualname, lambda local: any(
            type(r) is tuple and r and r[0] in storing for r in local.get("_od_tape") or ()))


def _cells_by_name(fn, closure: tuple) -> tuple:
    """fn's cells in the order of its code's free names, for a function whose code is another pass's nested
    twin but whose cells are those of the original code (a lambda made inside `with ADContext():` in a
    function forward mode differentiates: its code names the pass's helpers besides its own cells, which
    alone came). Empty cells stand for the helpers, in whose place the twin takes its own."""
    original = original_code(fn.__code__)
    if len(original.co_freevars) != len(closure):
        raise UnsupportedFunction(
            f"reverse mode cannot call {fn.__qualname__}: its code names {len(fn.__code__.co_freevars)} "
            f"free variables but it holds {len(closure)} cells", where=_user_line(),
            fix="define the function outside the differentiated code")
    own = dict(zip(original.co_freevars, closure))
    return tuple(own.get(v) or _CellType() for v in fn.__code__.co_freevars)


def _forward_function(info, fn):
    """The forward twin as a function of fn (its globals, cells and defaults). The last one made is kept
    on the info, for the next call of fn with the same defaults (`_twin_call`), where fn's globals are a
    module's (alive anyway; not a namespace a code generator exec'd into, which holds fn: the twin would
    keep it alive): for a function without cells by fn itself, for a closure whose cells hold leaf values
    (`leaves.leaf_cells`: a module, numbers, float arrays) by a weak reference to fn, the entry dropped when fn
    dies, so that the cache keeps the cells alive no longer than fn does (made anew per call, the twin cost
    a quarter of `gradient` of `sin(x) + cos(x)` closed over its module). Others are made per call."""
    closure = fn.__closure__
    if len(closure or ()) != len(fn.__code__.co_freevars):
        closure = _cells_by_name(fn, closure or ())
    if closure is None:
        closure = info.helper_closure
    else:
        plan = info.closure_plan
        if plan is not None:
            closure = plan[0](closure + plan[1])
        elif not info.fwd_code.co_freevars:
            # (fn's cells are only another pass's helpers, `__od_mul__`: a lambda made by forward mode's twin,
            # `derivative(lambda x: gradient(lambda t: t * t, x)[0], 1.5)`, whose twin reads none; gen23 C1)
            closure = None
    fwd = _FunctionType(info.fwd_code, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    if fn.__kwdefaults__:
        fwd.__kwdefaults__ = fn.__kwdefaults__
    if fn.__closure__ is None:
        if of_a_module(fn):
            info.fwd_last = (fn, fwd, fn.__defaults__, fn.__kwdefaults__)
    elif leaf_cells(fn.__closure__) and of_a_module(fn):
        info.fwd_last = (_WeakRef(fn, functools.partial(_forget_forward, info)), fwd, fn.__defaults__,
                         fn.__kwdefaults__)
    return fwd


_WeakRef = weakref.ref


def _forget_forward(info, ref) -> None:
    """fn, whose forward twin `info.fwd_last` keeps by the weak reference ref, died: the twin goes too."""
    last = info.fwd_last
    if last is not None and last[0] is ref:
        info.fwd_last = None


def _tiered(info, fn):
    """The adjoint of a twin given a compact one first (`COMPACT_LINES`): its reverse passes are counted,
    and the TIER_UP_AFTER-th builds the full adjoint (`_tier_up`)."""
    with _TIER_LOCK:  # (threads: the adjoint's code and cells are swapped together, `info.tier` last)
        tier = info.tier
        if tier is not None:
            left, numbers, requested = tier
            if left > 1:
                info.tier = (left - 1, numbers, requested)
            else:
                try:
                    _tier_up(info, fn, numbers, requested)
                finally:
                    info.tier = None
        rev = info.rev
        if rev is not None:
            return rev
        last = info.rev_last
        return last[1] if last is not None and last[0] is fn.__globals__ else _adjoint_function(info, fn)


_TIER_LOCK = threading.RLock()


def _tier_up(info, fn, numbers, requested):
    """Build fn's twin again with the full adjoint, and take that adjoint if its forward twin compiled to
    the same code as the one recording the tapes (the same blocks, saving the same values): otherwise the
    compact adjoint stays (slower, never wrong)."""
    try:
        full = _build(fn, requested, numbers=numbers, compact=False)
    except OverdubError:
        return
    if (full.fwd_code != info.fwd_code or full.names != info.names or full.entry != info.entry
            or full.numbers != info.numbers):
        return
    info.rev_code, info.rev_closure, info.rev_last, info.rev = full.rev_code, full.rev_closure, None, full.rev


def _adjoint_function(info, fn):
    """The adjoint as a function of fn's globals (see `_forward_function`: kept for a module's)."""
    rev = _FunctionType(info.rev_code, fn.__globals__, None, (None, None, None), info.rev_closure)
    if of_a_module(fn):
        info.rev_last = (fn.__globals__, rev)
    return rev


NUMBERS = frozenset({int, float, complex, bool, np.float64, np.float32, np.int64, Fraction, Decimal,
                     type(None), str})  # (and None and text: as immutable, what `numbers` are assumed for)
_NUMBERS = NUMBERS


def _numbers_bound(positions, pre, args, kw=None, fn=None) -> bool:
    """The parameters at `positions` are bound to numbers (immutable: `n -= 1` rebinds them): passed by
    position, or (given fn) by keyword or left to a default."""
    n = len(pre)
    for j in positions:
        seq = j < 0  # (`~j`: a list or tuple of numbers, `Generated.sequences`)
        if seq:
            j = ~j
        if j < n + len(args):
            v = pre[j] if j < n else args[j - n]
        elif fn is None or j >= fn.__code__.co_argcount:
            return False
        else:
            name = fn.__code__.co_varnames[j]
            if kw and name in kw:
                v = kw[name]
            else:
                defaults = fn.__defaults__ or ()
                k = j - (fn.__code__.co_argcount - len(defaults))
                if k < 0:
                    return False
                v = defaults[k]
        if type(v) not in _NUMBERS and (not seq or type(v) not in _SEQUENCES or not all(
                type(e) in _NUMBERS for e in v)):
            return False
    return True


_SEQUENCES = (list, tuple)


def _general(info, fn, observed):
    """The twin without the numbers `info` takes for granted, for a call passing something else."""
    info.general = _build(fn, info.active, observed=observed, numbers=False)
    return info.general


_NOT_DIFFERENTIABLE_DEFAULTS = (str, bytes, bool, int, type(None), types.ModuleType, type, _BUILTIN)


def _defaulted(fn, npassed, kw) -> frozenset | None:
    """The parameters of fn a call passing `npassed` positional arguments and `kw` leaves to defaults
    that may hold differentiated values (a lambda's `s=x`, a closure as a default): fn's own gradient
    (the hidden zeroth argument) then holds their cotangents, in its `__defaults__`/`__kwdefaults__`.
    (Run on every call of a function with defaults: one pass over the defaults left, no generators.)"""
    out = None
    d = fn.__defaults__
    # (a function defined outside any function, at a module's or a class's level, evaluated its defaults at
    # its definition, before any recording: a number there, or a tuple of them, is a constant; astropy's
    # Sersic evaluated `gammaincinv(2 * n, ...)` of one and was refused as differentiated in n)
    nested = "<locals>" in fn.__qualname__
    if d:
        code = fn.__code__
        argcount = code.co_argcount
        first = argcount - len(d)
        names = code.co_varnames
        for j in range(npassed if npassed > first else first, argcount):
            v = d[j - first]
            if type(v) not in _CONSTANT_DEFAULTS and not isinstance(v, _NOT_DIFFERENTIABLE_DEFAULTS) and (
                    nested or not _frozen_number(v)):
                name = names[j]
                if name not in kw:
                    if out is None:
                        out = []
                    out.append(name)
    kwd = fn.__kwdefaults__
    if kwd:
        for name, v in kwd.items():
            if type(v) not in _CONSTANT_DEFAULTS and not isinstance(v, _NOT_DIFFERENTIABLE_DEFAULTS) \
                    and name not in kw and (nested or not _frozen_number(v)):
                if out is None:
                    out = []
                out.append(name)
    return None if out is None else frozenset(out)


# the exact types of `_NOT_DIFFERENTIABLE_DEFAULTS` most defaults have (one set lookup, no isinstance)
_CONSTANT_DEFAULTS = frozenset({str, bytes, bool, int, type(None), types.ModuleType, type, _BUILTIN})


def _frozen_number(v, depth: int = 3) -> bool:
    """v is an immutable number (float, complex, a numpy scalar) or a tuple of them: nothing can store a
    derivative into it after it was made."""
    t = type(v)
    if t is float or t is complex or isinstance(v, np.generic):
        return True
    return t is tuple and depth > 0 and all(_frozen_number(e, depth - 1) for e in v)


def _default_cots(info, fn, dparams, npassed, kw, dcells):
    """dcells with the cotangents of the defaults a call used (`__defaults__`, `__kwdefaults__`); dcells
    itself when the defaults got none (the common case: nothing built). The parameters are those of the code
    the twin was made of (info's), not fn's now: a function may replace its own code while it runs (networkx's
    argmap wrappers compile themselves on their first call: an IndexError in the reverse pass)."""
    n, names = info.argcount, info.names
    defaults, kwdefaults = fn.__defaults__, fn.__kwdefaults__
    dd = dk = None
    if defaults:
        first = n - len(defaults)
        for j in range(npassed if npassed > first else first, n):
            if dparams[j] is not None and names[j] not in kw:
                # (positions passed by position or by keyword hold None)
                dd = tuple(None if j < npassed or names[j] in kw else dparams[j] for j in range(first, n))
                break
    if kwdefaults:
        kwonly = names[n:n + info.nkwonly]
        for j, name in enumerate(kwonly, n):
            if dparams[j] is not None and name not in kw and name in kwdefaults:
                dk = {name: dparams[j] for j, name in enumerate(kwonly, n) if name not in kw and name in kwdefaults}
                break
    if dd is None and dk is None:
        return dcells
    out = dict(dcells)
    if dd is not None:
        out["__defaults__"] = dd
    if dk is not None:
        out["__kwdefaults__"] = dk
    return out


def _twin_back(pb, dy, dself, S):
    if not pb[3] and not pb[5] and S.dargs_in is None:
        # the common case (`_twin_call`'s short key's): a function of positional arguments, nothing handed
        # in, its adjoint the one made last for its globals; every parameter passed, no cells' cotangents
        info = pb[1]
        rev = info.rev
        if rev is None:
            last = info.rev_last
            if last is not None and info.tier is None and last[0] is pb[6].__globals__:
                rev = last[1]
        if rev is not None:
            try:
                dparams, dcells = rev(S, pb[2], dy, dself, None, None)
            except Exception as e:
                note_transformed(e, pb[6], "reverse mode (its reverse pass)")
                raise
            if pb[4] == info.argcount == len(dparams) and not dcells:
                return None, dparams, None
            return _twin_back_rest(pb, info, dparams, dcells, dself, False, S)
    _, info, tape, npre, nargs, kw, fn, self_ = pb
    if type(dself) is Tangent and npre and has_fields(self_):
        # (an object's cotangent given as a value, not in its box: a root finder's rule hands its function's
        # closure's so; into the box, where a base class's method reached by `super()` reads it: 0 came out)
        dself = S.box(self_, dself)
    dins, took = None, 0
    handed = S.dargs_in
    if handed is not None and handed[0] is pb:
        # the call changed arrays in place: the cotangents the caller holds for its array arguments after
        # the call flow in (to the parameters' entry values), and come back as their whole cotangents
        S.dargs_in = None
        entry = info.entry
        dins = [None] * len(info.names)
        npos, kwnames = handed[2] if len(handed) > 2 else (len(handed[1]), ())
        for i, g in enumerate(handed[1]):
            if g is None:
                continue
            if i < npos:  # (past the positional parameters: an item of `*args`, which has no entry copy)
                p = npre + i if npre + i < info.argcount else -1
            else:  # a keyword argument (`output=out`): its parameter by name
                key = kwnames[i - npos]
                p = info.names.index(key) if key in info.names else -1
            if p in entry:
                dins[p] = g
                took |= 1 << i
        if not took:
            dins = None
    rev = info.rev
    if rev is None:
        last = info.rev_last
        if info.tier is not None:
            rev = _tiered(info, fn)
        else:
            rev = last[1] if last is not None and last[0] is fn.__globals__ else _adjoint_function(info, fn)
    # a method whose object lands in `*args` (a decorator's `def wrapper(*args, **kwargs)` bound as a method):
    # self is args[0], not a parameter of its own, so its cotangent after the call is added here, not
    # handed in as the cotangent of the whole tuple (whose other items then carried the caller's cotangents
    # of self back in with this call's: each call of the method counted the ones after it again)
    in_args = npre and info.argcount < npre
    try:
        if npre:  # a method: self's cotangent after the call flows in, the total before it comes out
            dparams, dcells = rev(S, tape, dy, None, None if in_args else dself, dins)
        else:
            dparams, dcells = rev(S, tape, dy, dself, None, dins)
    except Exception as e:
        note_transformed(e, fn, "reverse mode (its reverse pass)")
        raise
    if took:
        S.took = took
    return _twin_back_rest(pb, info, dparams, dcells, dself, in_args, S)


def _twin_back_rest(pb, info, dparams, dcells, dself, in_args, S):
    """`_twin_back` once the adjoint has run: the cotangents of the call's arguments (and of the function's
    cells and defaults) from its parameters'."""
    _, _, tape, npre, nargs, kw, fn, _ = pb
    argcount = info.argcount
    if not npre and not kw and nargs == argcount == len(dparams) and not dcells:
        return None, dparams, None  # the common case: every parameter passed by position
    end = npre + nargs
    if end <= argcount:  # no extra positional arguments (no *args to read them from)
        dargs = list(dparams[npre:end])
    else:
        dargs = []
        for i in range(npre, end):
            if i < argcount:
                dargs.append(dparams[i])
            else:
                dv = dparams[info.varargs]
                j = i - argcount
                dargs.append(dv[j] if dv is not None and j < len(dv) else None)
    dkw = None
    if kw:
        dkw = {}
        names = info.names
        dvk = _UNSET
        for k in kw:
            if k in names:
                idx = names.index(k)
                if idx != info.varkw and idx != info.varargs:
                    dkw[k] = dparams[idx]
                    continue
            if dvk is _UNSET:
                dvk = _varkw_cotangent(dparams[info.varkw], getattr(tape, "kw", None), S) if info.varkw >= 0 else None
            dkw[k] = dvk.get(k) if dvk is not None else None
    if (fn.__defaults__ is not None or fn.__kwdefaults__ is not None):
        dcells = _default_cots(info, fn, dparams, end, kw or _NOKW, dcells)
    if npre:
        if dcells and fn.__qualname__.rpartition(".")[0].endswith("<locals>") and _any_given(dcells):
            # a closure bound to an object by hand (`types.MethodType(lambda self, t: t * x, obj)`): the
            # bound method's cotangent is its object's, so its captured variables' would be lost (a
            # method of a class made in a function is checked where the class is made)
            raise UnsupportedFunction(
                f"reverse mode cannot differentiate {fn.__qualname__} bound as a method: it is a closure, "
                f"and its captured variables ({', '.join(k for k, v in dcells.items() if v is not None)}) "
                "carry a gradient",
                where=f"{fn.__code__.co_filename}:{fn.__code__.co_firstlineno}",
                fix="pass those values as arguments, or store them on the object")
        if in_args:
            dv = dparams[info.varargs]
            return acc(dself, dv[0] if dv is not None and len(dv) else None), dargs, dkw
        return dparams[0], dargs, dkw
    if dcells and _any_given(dcells):
        for v in dcells.values():
            if type(v) is Tangent:
                dcells = _shared_cells(fn, dcells)
                break
        return Tangent(dcells), dargs, dkw
    return None, dargs, dkw


_UNSET = object()


def _varkw_cotangent(dvk, own_kw, S):
    """The cotangent of a function's `**kwargs` dict: its variable's, plus what reached the dict's box in
    the session (the items drawn through `kw.values()` / `kw.items()` go there, as for any dict's)."""
    box = None if own_kw is None else S.boxes.get(id(own_kw))
    if box is None or box is dvk:
        return dvk
    return box if dvk is None else acc(dvk, box)


def _any_given(cots: dict) -> bool:
    """Some value of cots is not None (a loop: no generator per call)."""
    for v in cots.values():
        if v is not None:
            return True
    return False


def _shared_cells(fn, dcells):
    """fn's cell cotangents, where a cell holding a closure over fn's own cells (an inner function that
    calls itself, or two that call each other) has that closure's cotangent — a Tangent of its cells,
    some of them the very cells of fn: those parts move to fn's entries (matched by cell identity), so a
    caller reading fn's cotangent by cell name sees every contribution."""
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    own = {id(c): n for n, c in cells.items()}
    out, kept = dict(dcells), {}
    todo = [n for n, v in dcells.items() if type(v) is Tangent]
    while todo:
        n = todo.pop()
        v, g = out.get(n), _cell_function(cells.get(n))
        if type(v) is not Tangent or g is None:
            continue
        out[n] = None
        rest = _split_cells(g, v, own, out, todo, cells)
        if rest is not None:
            kept[n] = acc(kept.get(n), rest)
    for n, r in kept.items():
        out[n] = acc(out.get(n), r)
    return out


def _cell_function(cell):
    try:
        g = cell.cell_contents
    except (AttributeError, ValueError):  # no cell, or an empty one
        return None
    return g if type(g) is types.FunctionType and g.__closure__ else None


def _split_cells(g, t, own, out, todo, cells):
    """Move the parts of g's cotangent t that belong to cells in `own` into `out`; return the rest."""
    rest = {}
    for name, c in zip(g.__code__.co_freevars, g.__closure__):
        v = t.get(name)
        if v is None:
            continue
        k = own.get(id(c))
        if k is not None:
            out[k] = acc(out.get(k), v)
            if type(v) is Tangent:
                todo.append(k)
            continue
        inner = _cell_function(c)
        if inner is not None and type(v) is Tangent:
            v = _split_cells(inner, v, own, out, todo, cells)
        if v is not None:
            rest[name] = v
    return Tangent(rest) if rest else None


def twin_source(fn, active=None) -> tuple[str, str]:
    """The generated forward twin and adjoint of fn, as source text (for `show_adjoint`)."""
    import ast
    code = fn.__code__
    if active is None:
        active = _active_params(code, EVERY_ARGUMENT, 0, 0, (), all_passed=True)
    info = twin_info(fn, frozenset(active))
    return ast.unparse(info.generated.forward), ast.unparse(info.generated.adjoint)


# -- helpers used by the generated code -------------------------------------------------------------


# the functions generated code calls, and the rules the engine itself provides (they need `call`)
from .helpers import HELPER_CELLS as _HELPER_CELLS, OBSERVED_CELLS as _OBSERVED_CELLS, unpacked_cots  # noqa: E402
from .primitives import float_new, float_subclass_call, tuple_new  # noqa: E402
from .replacements import GETTERS, REPLACEMENTS, Deque, ad_list_sort, ad_max, ad_min, ad_sorted  # noqa: E402  (they are differentiated by `call` itself)

KEYED = {min: ad_min, max: ad_max, sorted: ad_sorted}  # builtins taking a key= run as Python code with a Python key


def _keyed(f, kind, args, kw):
    """min, max, sorted or a list's sort with a key= of Python code (a function, a partial, a bound method):
    run as Python code themselves, so the key's calls are recorded (a key storing into an object,
    `key=acc.add`: the rules call it plainly, and what it stored was lost, a zero); None otherwise."""
    key = kw["key"]
    if not (type(key) is _FunctionType or type(key) is functools.partial
            or type(key) is types.MethodType and type(key.__func__) is _FunctionType
            or type(getattr(type(key), "__call__", None)) is _FunctionType):  # (an object's own `__call__`
        return None                                                          # recording into itself: 0)
    if kind is _BUILTIN and f.__name__ == "sort" and type(f.__self__) is list:
        # (the list as the twin's self: its cotangent after the sort flows in and comes out as the method's,
        # where given as an argument it came out among the arguments' and the caller dropped it: `sum(L)` 0)
        return _twin_call(EVERY_ARGUMENT, ad_list_sort, (f.__self__,), args, kw) if not args else None
    try:
        repl = KEYED.get(f)
    except TypeError:  # (an unhashable callable)
        return None
    if repl is None or "default" in kw:
        return None
    return _twin_call(EVERY_ARGUMENT, repl, (), args, kw)
from . import primitives as _primitives  # noqa: E402,F401
from .primitives import POSITIONED, _keys_carry_nothing, position  # noqa: E402
from ..rules.containers import new_dict, subscripted  # noqa: E402

VIEWS_ITEMS = (type({}.items()), type(__import__("collections").OrderedDict().items()))
VIEWS = frozenset((type({}.values()), type(__import__("collections").OrderedDict().values())) + VIEWS_ITEMS)
