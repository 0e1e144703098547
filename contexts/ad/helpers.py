"""The functions the generated forward twins and adjoints call (`__od_xxx__` cells).

Invariant: each takes primal values saved on the tape and the cotangents the generated code holds, and
returns the updated cotangents; structured cotangents go through the reverse pass's `Session` boxes, and
every mutation undone here for earlier adjoints is registered for redo with `S.redo(fn, *args)`.
"""

from __future__ import annotations

import collections
import functools
import math
import numbers
import operator
import sys
import threading
import types
import weakref

import numpy as np

import overdub

from ..forward.dual import Dual as _Dual, as_python_number, numpy_scalar_dual, primal
from ..forward.holds import dual_free
from ..rules import generic, leaves
from ..rules.callback_state import STORED as _CALLBACK_STORED, stored_read_refused
from ..rules.containers import (class_subscript_refused, identity_methods as _identity_methods, constant_member as _constant_member, own_mapping_refused,
                                refuse_differentiated_key, subscripts_a_class)
from ..rules.generic import dropped_nan_zero
from ..rules.operator import scaled_duration
from ..rules.operator import DERIVATIVES, pow_dn, pow_dx
from ..rules.registry import C_METHOD, function_tree, own_operators, registry
from overdub.errors import OverdubError, lost_work, not_swallowed as _not_swallowed
from overdub.ops import Unswallowing, refused
from overdub.ops import HEAPTYPE

from . import observe, runtime
from .managers import WatchedManager
from .codegen import EVERY_ARGUMENT, HELPERS, holds_state
from ..lowered.runtime import (_TUPLE_ITERATOR, EagerIterationError, OwnTestUnderForward, generator_asked, refuse_storing_method,
                               remembered_text, users_class)  # (`_TUPLE_ITERATOR`: what reverse mode's generators are, `eager`)
from ..lowered.runtime import HELPERS as LOWERING_HELPERS, addresses, live as _live
from ..lowered.cuts import power_on_cut
from ..rules.frames import is_engine_class
from ..rules.numpy._util import masked_refused, matrix_refused
from ..rules.numpy.indexing import is_basic_index, last_write_mask
from ..rules.numpy.inplace import write_into
from ..rules.cotangents import MapBox, Refused, SeqBox, Tangent, acc, fields_of, has_fields, merge_into, own_dict
from ..rules.leaves import carries_none, taken_per_element, value_class
from ..rules.numpy.objects import computes_in_python, holds_objects
from ..rules.numpy.stand_ins import store_part
from ..rules.registry import PLAIN_OPERANDS, NoClosedForm, NoRuleError, number_with_own_methods
from ..rules.leaves import ArrayLeaf
from .structs import ATTRIBUTE_CHANGE, ATTRIBUTE_CHANGED, CHANGES, CONTAINER_CHANGE, LAST_CHANGE, MEMORY_CHANGE, UNKNOWN_CHANGE, RECORDING_START, TICKS, Bare, Session, Viewed, attributes_left, bottom, changed, instance_dict_owner, remember_instance_dict

__all__ = ["HELPER_CELLS", "binop_adj", "getattr_adj", "getitem_adj", "unpack_adjoint"]

_MISSING = object()
_NOKW: dict = {}  # never mutated
_rules = registry.rules
_NDARRAY = np.ndarray
_F8 = np.float64
_REAL_SCALARS = frozenset({float, int, _F8})
_FAST_BINOPS = frozenset({"add", "sub", "mul", "truediv"})
_add_reduce = np.add.reduce


_SUMMED_AXES: dict = {}  # (result shape, operand shape) -> the axes a broadcast operand's cotangent sums


def _to_operand(g, x, fits):
    """A result-shaped cotangent g brought to operand x: summed down to a broadcast array's shape
    (`fits` None), or to one number of x's type for a real scalar (a Python float's is a float)."""
    if fits is None:
        key = (g.shape, x.shape)
        axes = _SUMMED_AXES.get(key)
        if axes is None:
            if g.ndim != x.ndim:
                return generic.unbroadcast(g, x)
            if len(_SUMMED_AXES) > 4096:
                _SUMMED_AXES.clear()
            axes = _SUMMED_AXES[key] = tuple(i for i, n in enumerate(x.shape) if n == 1 and g.shape[i] != 1)
        return _add_reduce(g, axes, None, None, True) if axes else g
    g = _add_reduce(g, None)
    tx = type(x)
    return g if tx is type(g) or tx is int else tx(g)


_MATRIX = np.matrix
_MASKED = np.ma.MaskedArray


def binop_adj(opname, g, y, a, b, need=3, S=None):
    """Cotangents of `a <op> b` for the generic (non-float) path; `need` says which operands are active
    (1: a, 2: b), so arrays are only computed for those. S: the reverse pass's session (a class's own
    operator re-run here writes its operands' cotangents into their boxes there)."""
    if leaves.HOSTED and (isinstance(a, leaves.HOSTED) or isinstance(b, leaves.HOSTED) or isinstance(g, leaves.HOSTED)):
        # (a torch tensor: numpy cannot mix with it, `ndarray * tensor`; computed on its values, ndarrays)
        return binop_adj(opname, leaves.hosted(g), leaves.hosted(y), leaves.hosted(a), leaves.hosted(b), need, S)
    tg = type(g)
    if tg is _NDARRAY and g.dtype.kind == "f" and opname in _FAST_BINOPS:
        # real arrays of the result's shape and real scalars: no broadcasting to undo but a scalar's sum,
        # nothing to conjugate — the common numpy case, without the generic rule's checks
        # each operand: an array of g's dtype (sa: of its shape, else broadcast, its cotangent summed
        # down), or a real scalar (its cotangent the sum); a wanted int's cotangent takes the rule
        ta, tb = type(a), type(b)
        sa = ta is _NDARRAY and a.dtype == g.dtype
        sb = tb is _NDARRAY and b.dtype == g.dtype
        if ((sa or ta in _REAL_SCALARS and (ta is not int or not need & 1))
                and (sb or tb in _REAL_SCALARS and (tb is not int or not need & 2))):
            if sa and a.shape != g.shape:
                sa = None
            if sb and b.shape != g.shape:
                sb = None
            # the declared maps (linear, elementwise: for a broadcast operand, `sub`'s negation is applied
            # after g is summed down to it, on the smaller array)
            if opname == "add" or opname == "sub":  # (their maps, `add_da`, `add_db`, `sub_db`, inline)
                ga = g if need & 1 else None
                gb = None
                if need & 2:
                    if opname == "add":
                        gb = g
                    elif sb:
                        gb = -g
                    else:  # (`sub`'s negation after g is summed down to b)
                        gb, sb = -_to_operand(g, b, sb), True
                return ((ga if sa else _to_operand(ga, a, sa)) if need & 1 else None,
                        (gb if sb else _to_operand(gb, b, sb)) if need & 2 else None)
            da, db = DERIVATIVES[opname]
            if y is None and opname == "truediv" and need & 2:
                y = a / b
            ga = da(g, a, b, y) if need & 1 else None
            gb = None
            if need & 2:
                if opname == "sub" and not sb:
                    gb, sb = db(_to_operand(g, b, sb), a, b, y), True
                elif opname == "truediv":  # db's -(t / b) * y, on the quotient g / b, negated in place
                    gb = (ga if need & 1 else g / b) * y
                    if type(gb) is _NDARRAY:
                        np.negative(gb, out=gb)
                    else:  # (0-d operands: numpy's scalar)
                        gb = -gb
                else:
                    gb = db(g, a, b, y)
            if opname in ("mul", "truediv"):  # (0 * nan where the result was a NaN dropped later)
                result = (lambda: getattr(operator, opname)(a, b)) if y is None else y
                # (an operand not needed has None, which `dropped_nan_zero` gives back)
                if ga is not None:
                    ga = dropped_nan_zero(ga, g, result)
                if gb is not None:
                    gb = dropped_nan_zero(gb, g, result)
            return ((ga if sa else _to_operand(ga, a, sa)) if need & 1 else None,
                    (gb if sb else _to_operand(gb, b, sb)) if need & 2 else None)
    if (opname == "matmul" and type(a) is _NDARRAY and type(b) is _NDARRAY and a.dtype is b.dtype
            and a.dtype.kind == "f" and a.dtype is getattr(g, "dtype", None) and a.ndim <= 2 and b.ndim <= 2):
        # (before the tests below: plain arrays pass them all)
        # real matrix and vector products: only the active operands' products, and outer products
        # (an inner dimension of 1, a vector's cotangent against a vector) as broadcast multiplies,
        # which BLAS does slowly
        ga = gb = None
        if a.ndim == 2 and b.ndim == 2 and type(g) is _NDARRAY:
            if need & 1:
                ga = g * b.T if g.shape[1] == 1 else g @ b.T
            if need & 2:
                gb = a.T * g if a.shape[0] == 1 else a.T @ g
            return ga, gb
        if a.ndim == 2 and type(g) is _NDARRAY:  # matrix @ vector
            if need & 1:
                ga = g[:, None] * b
            if need & 2:
                gb = g @ a
            return ga, gb
        if b.ndim == 2 and type(g) is _NDARRAY:  # vector @ matrix
            if need & 1:
                ga = b @ g
            if need & 2:
                gb = a[:, None] * g
            return ga, gb
        if a.ndim == 1 and b.ndim == 1 and (type(g) is float or type(g) is np.float64):  # inner product
            return (g * b if need & 1 else None), (g * a if need & 2 else None)
    if type(a) is _MATRIX or type(b) is _MATRIX:  # (np.matrix: `*` a matrix product, `**` a matrix power)
        from ..rules.numpy.matrix import matrix_binop_adjoint
        return matrix_binop_adjoint(opname, g, y, a, b, need)
    if (opname == "pow" or opname == "ipow") and (type(a) is complex or isinstance(a, np.complexfloating) or (
            type(a) is _NDARRAY and a.dtype.kind == "c")):
        power_on_cut(a, b)  # (a complex base on the logarithm's cut: noted for forward mode, `rules.cuts`)
    tg = type(g)
    if opname == "pow" and not need & 2 and type(b) is int and b >= 1 and (
            tg is _NDARRAY and g.dtype.kind == "f" or tg is float or tg is _F8):
        # `x ** n`, a real array or number to a constant positive int power (`x ** 2`): the rule's
        # `pow_dx` inlined, n * x ** (n - 1), which can neither divide by zero nor be invalid (pow_dx's
        # errstate silences nothing here), with its value at 0 for a Python float; then as the general path
        ta = type(a)
        if ta is _NDARRAY and a.dtype.kind == "f" or ta is _F8:
            return generic.fit(dropped_nan_zero(g * (b * a ** (b - 1)), g, lambda: a ** b), a), None
        if ta is float:
            d = (1 if b == 1 else 0) if a == 0 else b * a ** (b - 1)
            return generic.fit(dropped_nan_zero(g * d, g, lambda: a ** b), a), None
    if (tg is float or tg is _F8) and opname in _FAST_BINOPS:
        ta, tb = type(a), type(b)
        if ((ta is float or ta is _F8 or ta is int and not need & 1)
                and (tb is float or tb is _F8 or tb is int and not need & 2)):
            # real scalars, Python's or numpy's (a reduction's result): each cotangent of its operand's type
            da, db = DERIVATIVES[opname]
            if y is None and opname == "truediv" and need & 2:
                y = a / b
            ga = gb = None
            if need & 1:
                ga = da(g, a, b, y)
                ga = ga if type(ga) is ta else ta(ga)
            if need & 2:
                gb = db(g, a, b, y)
                gb = gb if type(gb) is tb else tb(gb)
            return ga, gb
    if isinstance(a, _MASKED) or isinstance(b, _MASKED):
        # numpy.ma's operators are its Python code (`np.ma.multiply` on the data, the masked entries' data
        # kept from an operand, a domain's entries masked): differentiated as that code (`rules.numpy.masked`;
        # the rule took every entry for the plain product's, the kept and masked ones too). An in-place one
        # is refused: re-run here, it would start from the array it changed (`a *= a`: 1 for 2a)
        if opname[0] == "i" and opname not in ("invert", "is_", "is_not") and isinstance(a, _MASKED):
            raise masked_refused(f"`{opname[1:]}=` (in place)")
        return _python_binop_adj(opname, g, a, b, S, y, _same_masked_result)
    if type(a) is not _NDARRAY and isinstance(a, np.ndarray) or type(b) is not _NDARRAY and isinstance(b, np.ndarray):
        runtime.overriding_refused(f"`{opname}`", a, b, dunder=f"__{opname.rstrip('_')}__")
    if (type(a) is _NDARRAY and a.dtype == object or type(b) is _NDARRAY and b.dtype == object) \
            and holds_objects((a, b), {}):
        _objects_refused(opname, a, b)
    if not (_known(a) and _known(b)):
        name = opname.rstrip("_")
        for v, n, bit in ((a, name, 1), (b, "r" + name, 2)):
            if need & bit and type(v).__flags__ & HEAPTYPE and type(v) is not _Dual:
                _property_dunder(type(v), f"__{n}__")
    if not (_known(a) and _known(b)) and _user_operand(opname, a, b):
        # an operator in Python code (a class's `__pow__`): differentiated as that code, before any
        # shortcut that assumes numbers
        if type(y) is _NDARRAY and y.dtype == object and (type(a) is _NDARRAY or type(b) is _NDARRAY):
            # (`x - V(c)`: numpy called V's `__rsub__` on each element in C, unrecorded: the re-run would hand it
            # the whole array; the gradient was 0)
            raise runtime.UnsupportedFunction(
                f"reverse mode cannot differentiate `{opname}` of an array and a {type(b if type(a) is _NDARRAY else a).__name__} "
                "(numpy applies its class's method to each element in C, where the recording cannot see it)",
                where=runtime._user_line(), fix="apply the operator to each element yourself")
        return _python_binop_adj(opname, g, a, b, S, y)
    if (type(a) is _NDARRAY or type(b) is _NDARRAY) and (
            need & 1 and converted_by_numpy(a) or need & 2 and converted_by_numpy(b)):  # (a constant one passes)
        raise_unseen_conversion(a if need & 1 and converted_by_numpy(a) else b, f"`{opname}` of an array")
    if type(y) is list and S is not None and id(y) in S.boxes:  # (a new list's box: `codegen._new_list`)
        g = S.box(y, g)
    if type(a) is _Dual or type(b) is _Dual or type(g) is _Dual:
        return _dual_binop_adj(opname, g, y, a, b, need)
    if opname == "pow" and not need & 2:  # x ** n with a constant exponent: d/dx only
        return generic.fit(dropped_nan_zero(g * generic.conj(pow_dx(a, b)), g, lambda: a ** b), a), None
    if S is not None and type(y) is tuple and (y is a or y is b) and g is S.boxes.get(id(y)):
        # the result is an operand itself (CPython hands a tuple back from `t + ()`, `() + t`, `t * 1`): its
        # cotangent is that operand's box already; split by the rule and merged back, it was counted twice
        return (g if y is a and need & 1 else None), (g if y is b and need & 2 else None)
    if opname == "or_" and isinstance(a, dict) and isinstance(b, dict):  # a | b: b's entries win
        gd = g if isinstance(g, dict) else {}
        ga = {k: gd[k] for k in a if k not in b and gd.get(k) is not None} or None
        gb = {k: gd[k] for k in b if gd.get(k) is not None} or None
        return (ga if need & 1 else None), (gb if need & 2 else None)
    op = getattr(operator, opname)
    if type(a) is np.matrix or type(b) is np.matrix or type(g) is np.matrix:
        raise matrix_refused()
    if y is None:
        y = op(a, b)  # the block overwrote the result: recompute it for the rule
    rule = _rules.get(op)
    if rule is None or rule.adjoint is None:
        raise NoRuleError(f"no reverse rule for operator.{opname} on {type(a).__name__}, {type(b).__name__}",
                          fix=f"register one with `registry.adjoint(operator.{opname})`")
    try:
        ga, gb = rule.adjoint(g, y, a, b)
    except TypeError as e:
        objects = [v for v in (a, b) if type(v) is _NDARRAY and v.dtype == object]
        if not objects:
            raise
        # (numpy's Polynomial maps its domain by `off + scl * np.asanyarray(p)`: a 0-d array holding the
        # Polynomial, whose own `__rmul__` numpy's loop calls in C, unrecorded; its cotangent's product failed)
        kinds = sorted({type(e).__name__ for v in objects for e in v.flat})
        raise runtime.UnsupportedFunction(
            f"reverse mode cannot differentiate `{opname}` on an object array holding {', '.join(kinds)} "
            "objects (numpy calls their operators in C, where the recording cannot see them)",
            where=runtime._user_line(), fix="compute on the objects themselves, not an array of them, or "
                                            "on arrays of numbers") from e
    return ga, gb


def _objects_refused(opname, *operands):
    """An operator on an object array holding objects of a class that computes in Python: numpy applied
    their methods to each element in C, unrecorded, and the rule would take them for numbers (`a + b` of
    objects whose `__add__` multiplies: 39.1 for 56.4)."""
    kinds = sorted({type(e).__name__ for v in operands if type(v) is _NDARRAY and v.dtype == object
                    for e in v.flat if computes_in_python(e)})
    raise runtime.UnsupportedFunction(
        f"reverse mode cannot differentiate `{opname}` on an object array holding {', '.join(kinds)} objects "
        "(numpy calls their operators in C, where the recording cannot see them)", where=runtime._user_line(),
        fix=f"call the ufunc (`np.{_UFUNC_NAMES.get(opname, opname)}(a, b)`: reverse mode runs it on the objects' "
            "own methods), compute on the objects themselves, or use forward mode")


_UFUNC_NAMES = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide", "pow": "power",
                "neg": "negative", "pos": "positive", "floordiv": "floor_divide", "mod": "remainder"}


# numbers (Fraction's operators are Python code, but mathematically plain) and arrays use the rules
_KNOWN = PLAIN_OPERANDS + (list, tuple)
_KNOWN_EXACTLY = frozenset({float, int, bool, complex, _F8, _NDARRAY, list, tuple})
_KNOWN_NUMBERS = tuple(t for t in PLAIN_OPERANDS if t not in (np.ndarray, np.generic, str, bytes, type(None), ArrayLeaf))


def _known(v) -> bool:
    """v's operators are the rules' (a number, array, list or tuple), not its class's Python code: a float
    subclass defining its own (`class Own(float): def __add__`) is not known, nor a list or tuple subclass
    defining one (trueskill's `Matrix(list)` and its `__rmul__`: the rule's adjoint called it on a cotangent)."""
    if type(v) in _KNOWN_EXACTLY:  # (the common operands, by their exact class: no abstract class asked)
        return True
    if not isinstance(v, _KNOWN):
        return False
    t = type(v)
    if t is not list and t is not tuple and isinstance(v, (list, tuple)):
        return not own_operators(t)
    return not number_with_own_methods(v)


def _property_dunder(cls, name) -> None:
    """An operator method given by a property (ase's `arraylike`: `__mul__ = property(lambda self:
    np.asarray(self).__mul__)`): the function it returns closes over the object, whose cotangent the re-run
    lost (0 came out): refused."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            if isinstance(klass.__dict__[name], property):
                raise runtime.UnsupportedFunction(
                    f"reverse mode cannot differentiate {cls.__name__}.{name}, an operator given by a property (the "
                    f"function it returns closes over the object)", where=runtime._user_line(),
                    fix="define the operator as a method (`def __mul__(self, o): ...`), or use forward mode")
            return


def converted_by_numpy(v) -> bool:
    """v is an object numpy converts to an array inside its compiled code, where no recording sees the
    conversion: by its class's Python `__array__` (ase's Cell), or item by item by the sequence protocol (a
    `collections.deque`, a class with `__len__` and `__getitem__`: `np.ones(2) + deque([x, y])` gave 0,
    silently, session 68). Lists and tuples (their subclasses too) are not: the rules take their items'."""
    kind = type(v)
    if kind in _NOT_CONVERTED:
        return False
    # (a class taking numpy's functions and ufuncs itself, dask's arrays, is no such conversion; nor is a
    # registered array type's, JAX's: its values are the array, converted whole, their cotangent its own)
    if getattr(kind, "__array_ufunc__", None) is not None or getattr(kind, "__array_function__", None) is not None \
            or isinstance(v, (np.ndarray, np.generic, _Dual, ArrayLeaf)):
        return False
    array = getattr(kind, "__array__", None)
    if array is not None:
        return bool(kind.__flags__ & HEAPTYPE) and type(array) is types.FunctionType
    return (hasattr(kind, "__len__") and hasattr(kind, "__getitem__") and not generic.sequence_of_items(v)
            and not isinstance(v, _NOT_SEQUENCES))


_NOT_CONVERTED = frozenset({float, int, bool, complex, np.float64, np.ndarray, list, tuple, str, bytes, dict,
                            type(None)})
_NOT_SEQUENCES = (str, bytes, bytearray, memoryview, dict, range, collections.abc.Mapping)  # (a mapping: numpy's
# conversion takes it for an object, as it does a dict)


def converted_store(obj, v) -> None:
    """Before `obj[i] = v` of a differentiated v that is no number or array (the generated code asks only
    then): refused where obj is an array of a class with a `__setitem__` of its own and numpy converts v by
    its class's `__array__` (an ndarray's store converts v first, as code: `setitem`)."""
    if isinstance(obj, np.ndarray) and converted_by_numpy(v) and not _is_array(obj):
        raise_unseen_conversion(v, "a store into an array")


def _converted_then_stored(obj, idx, v):
    """`obj[idx] = v` of an array obj and an object v numpy converts by its class's Python `__array__` (ase's
    `Atoms.set_cell`: `self.cell[:] = cell`, a Cell): the conversion run as the code it is, recorded, then the
    store (numpy converted it in C, unrecorded: 0 came out, and then it was refused)."""
    obj[idx] = np.asarray(v)


def raise_unseen_conversion(v, where: str):
    raise runtime.UnsupportedFunction(
        f"reverse mode cannot differentiate {where} taking a {type(v).__name__}, which numpy converts (by its class's "
        f"`__array__`, or item by item as a sequence) inside compiled code, unrecorded (its derivative would be "
        f"lost)", where=runtime._user_line(),
        fix="convert it yourself first (`np.asarray(obj)`: a call reverse mode follows), or use forward mode")


def _user_operand(opname, a, b) -> bool:
    """a or b (not a forward-mode dual) has the operator as Python code (a class's `__mul__`): its twin
    differentiates it, also when the other operand is a dual."""
    name = opname.rstrip("_")
    return any(type(v) is not _Dual and not _known(v)
               and (runtime.own_dunder(type(v), f"__{n}__") is not None
                    or runtime.descriptor_dunder(type(v), f"__{n}__"))
               for v, n in ((a, name), (b, "r" + name)))


def _dual_binop_adj(opname, g, y, a, b, need):
    """Elementwise and matrix-product adjoints on forward-mode duals (forward-over-reverse Hessians):
    plain formulas, which the duals carry through; complex operands conjugated (Zygote's convention) and
    the cotangent of a real operand its real part, as in the rules (a complex constant times a real x
    gave a complex, conjugate-less second derivative)."""
    fit = generic.unbroadcast_by_shape
    ca, cb = _conj(a), _conj(b)
    if opname == "matmul":
        da, db = np.ndim(a), np.ndim(b)
        if da == 1 and db == 1:  # inner product
            ga, gb = g * cb, g * ca
        elif db == 1:  # matrix @ vector
            ga = fit(np.expand_dims(g, -1) * cb, a)
            gb = fit(np.swapaxes(ca, -1, -2) @ np.expand_dims(g, -1), b[..., None])[..., 0]
        elif da == 1:  # vector @ matrix
            ga = fit(cb @ np.expand_dims(g, -1), a[..., None])[..., 0]
            gb = fit(np.expand_dims(ca, -1) * np.expand_dims(g, -2), b)
        else:
            ga, gb = fit(g @ np.swapaxes(cb, -1, -2), a), fit(np.swapaxes(ca, -1, -2) @ g, b)
        return (_real_for(ga, a) if need & 1 else None), (_real_for(gb, b) if need & 2 else None)
    if opname == "pow":  # (the rules' partials: `0 ** 0.0`, a constant, raised ZeroDivisionError)
        ga = g * _conj(pow_dx(a, b)) if need & 1 else None
        gb = g * _conj(pow_dn(a, b, a ** b)) if need & 2 else None
        # (0 * nan where the result was a NaN dropped later, as for `*` and `/` below: pandas' `s ** 2` of a
        # Series padded with NaN by `shift`, whose exponent is numpy's int, gave NaN for -60)
        result = (lambda: a ** b) if y is None else y
        ga = dropped_nan_zero(ga, g, result) if ga is not None else None
        gb = dropped_nan_zero(gb, g, result) if gb is not None else None
    elif opname in DERIVATIVES:
        da, db = DERIVATIVES[opname]
        cy = _conj(a / b if y is None and opname == "truediv" else y)
        ga, gb = da(g, ca, cb, cy), db(g, ca, cb, cy)
        if opname in ("mul", "truediv"):  # (0 * nan where the result was a NaN dropped later, as for arrays)
            result = (lambda: getattr(operator, opname)(a, b)) if y is None else y
            ga, gb = dropped_nan_zero(ga, g, result), dropped_nan_zero(gb, g, result)
    elif opname == "mod":  # a % b = a - b * floor(a / b): 1 and -floor(a / b), between the jumps
        ga = g if need & 1 else None
        gb = -g * (primal(a) // primal(b)) if need & 2 else None
    elif opname == "floordiv":
        ga = gb = None
    else:
        raise NoRuleError(f"no reverse rule for operator.{opname} on forward-mode duals")
    return (_real_for(fit(ga, a), a) if need & 1 and ga is not None else None), (
        _real_for(fit(gb, b), b) if need & 2 and gb is not None else None)


def _conj(v):
    """The complex conjugate of a number, array or dual (a real one as it is)."""
    if v is None:
        return None
    if type(v) is _Dual:
        return np.conj(v) if np.iscomplexobj(primal(v)) else v
    return generic.conj(v)


def _real_for(g, x):
    """g, the real part where the primal x is real (a dual cotangent's tangent too: `generic.project`)."""
    return generic.project(g, x)


def _twin(fn, self_, *args):
    """Run the twin of Python function `fn(self_, *args)`: (result, pullback or None)."""
    return runtime._twin_call(EVERY_ARGUMENT, fn, (self_,), args, _NOKW)


def _pull(S, pb, g, dself=None):
    """g pulled back through a twin's pullback: the cotangents (of its self, of its other arguments);
    (dself, (None, ...)) where the call carried no derivative (pb None)."""
    if pb is None:
        return dself, _NONES
    dself, dargs, _ = pb[0](pb, g, dself, S)
    return dself, dargs


def _rerun_back(S, fn, self_, args, g, dself=None, boxed=False, y0=None):
    """Re-run `fn(self_, *args)` (Python code of a class) under AD and pull g back through it; `boxed`: g is
    the cotangent of a new object the code makes (an operator's result), given as that object's box; y0: the
    result the forward pass made."""
    y, pb = _twin(fn, self_, *args)
    return _pull(S, pb, _result_box(S, y, g, (self_, *args), y0) if boxed else g, dself)


def _result_box(S, y, g, operands, y0=None):
    """`_as_box_of` for an operator's re-run result y, but where y is an operand itself (`__radd__` returning
    self, for `sum(objs)`): the reads of the result were the operand's, their cotangents in its box already,
    which g would count twice (2.8 for 1.4). y0: the forward pass's result, whose parts' boxes go to y's
    (`carry_boxes`)."""
    if any(y is v for v in operands) and id(y) in S.boxes and _object_field(y):
        return S.box(y)
    carry_boxes(S, y0, y)
    return _as_box_of(S, y, g)


def held(S, y):
    """A cotangent for y, an operator's result whose own cotangent is None, where the objects y holds took
    cotangents by their boxes (`B = E * 2.0; B.dot(x)`, `dot` reading `self._d.items()`: the dict's box held
    them, B's variable none, and the operator's adjoint, skipped, gave 0): an empty Tangent, so the adjoint
    re-runs the operator and `carry_boxes` hands those boxes to the objects the re-run makes; else None."""
    if type(y) in _FIELDLESS or not _object_field(y):
        return None
    return Tangent() if _boxed_parts(S, y) else None


def _parts(y, limit=10_000):
    """(path, part) of the objects, dicts, lists and tuples y holds, y first, each once, at most `limit`."""
    seen, out, todo, later = set(), [], [((), y)], []
    while (todo or later) and len(out) < limit:
        if not todo:  # (a descriptor's cache last: its parts found by their own paths first, `_same_shape`)
            todo, later = later, []
        path, v = todo.pop()
        if id(v) in seen or type(v) in _LEAF_TYPES:
            continue
        seen.add(id(v))
        if isinstance(v, dict):
            items = v.items()
        elif isinstance(v, (list, tuple)):
            items = enumerate(v)
        elif _object_field(v):
            items = fields_of(v).items()
            if leaves.CACHE_FIELDS and not leaves.CACHE_FIELDS.isdisjoint(fields_of(v)):
                later.extend((path + (k,), w) for k, w in items if k in leaves.CACHE_FIELDS)
                items = [(k, w) for k, w in items if k not in leaves.CACHE_FIELDS]
        else:
            continue
        out.append((path, v))
        todo.extend((path + (k,), w) for k, w in items if type(w) not in _LEAF_TYPES)  # (numbers: no parts)
    return out


_LEAF_TYPES = frozenset({float, int, bool, complex, str, bytes, type(None), _F8, _NDARRAY})


def _boxed_parts(S, y) -> bool:
    boxes = S.boxes
    return any(_carries(boxes.get(id(v))) for _, v in _parts(y))


def _carries(box, depth: int = 4) -> bool:
    """A box holds a cotangent: an entry that is not None (a box of boxes: one of theirs). A box made for an
    object only touched (an xarray Variable's empty `_encoding`) holds none."""
    if box is None:
        return False
    if not isinstance(box, (dict, list)):
        return True
    return any(v is not None and (depth == 0 or not isinstance(v, (dict, list)) or _carries(v, depth - 1))
               for v in (box.values() if isinstance(box, dict) else box))


def carry_boxes(S, y0, y1):
    """The boxes of the objects y0, an operator's result in the forward pass, holds, moved to the objects at
    the same places in y1, the result of the operator's re-run: the reads after the operator put their
    cotangents in the boxes of y0's dicts, lists and objects (by identity), where the re-run's adjoints,
    reading y1's, found none (0 for `B = E * 2.0; B.dot(x)`). Parts shared with the operands (the same object
    in both) stay."""
    if y0 is None or y0 is y1 or type(y0) is not type(y1) or type(y0) in _FIELDLESS and not isinstance(y0, (
            dict, list, tuple)):
        return
    boxes = S.boxes
    for path, v0 in _parts(y0):
        if not path or not _carries(boxes.get(id(v0))):
            continue  # (y0's own box is the cotangent g the adjoint was given; an empty box carries nothing)
        v1 = y1
        for k in path:
            try:
                v1 = v1[k] if isinstance(v1, (dict, list, tuple)) else fields_of(v1)[k]
            except (KeyError, IndexError, TypeError):
                v1 = _MISSING
                break
        if v1 is v0:
            continue
        if v1 is _MISSING or type(v1) is not type(v0) or not _same_shape(v0, v1):
            raise runtime.UnsupportedFunction(
                f"reverse mode cannot differentiate an operator of a {type(y0).__name__} whose result holds, at "
                f"{'.'.join(map(str, path))}, a value its re-run in the reverse pass does not make again (the "
                "derivatives read through it would be lost)", where=runtime._user_line(),
                fix="give the operator a rule (`@contexts.custom_adjoint`), or call a method instead of the operator")
        box = boxes.pop(id(v0))
        if id(v1) in boxes:
            S.box(v1, box)
        else:  # (the box itself: an owner's field entry may be this very box, read as one, not twice)
            boxes[id(v1)] = box
            S.kept(v1)


def _same_shape(v0, v1) -> bool:
    """v0 and v1 (of one class) hold their parts under the same keys, indices or field names."""
    if isinstance(v0, dict):
        return v0.keys() == v1.keys()
    if isinstance(v0, (list, tuple)):
        return len(v0) == len(v1)
    if leaves.CACHE_FIELDS:  # (a descriptor's cache, filled by reads natively: a part in it is still found by path)
        return fields_of(v0).keys() - leaves.CACHE_FIELDS == fields_of(v1).keys() - leaves.CACHE_FIELDS
    return fields_of(v0).keys() == fields_of(v1).keys()


def _as_box_of(S, y, g):
    """g, the cotangent the outer pass holds for an operator's result, as the box of y, the object the re-run
    made: the re-run's adjoints find a structured object's cotangent in its box (S.box(y)), which in
    the outer pass g is (a dict subclass's `__add__` returning a new one: its entries' cotangents were
    lost)."""
    if isinstance(g, (MapBox, SeqBox, Tangent)) and (
            isinstance(y, (dict, list, tuple))
            or has_fields(y) and not isinstance(y, (types.FunctionType, types.MethodType))):
        if isinstance(g, Tangent) and has_fields(y) and not isinstance(y, (dict, list, tuple)):
            # the entries for objects y holds (`r.m` of `r = a - b`, read after: `r.m.n`) go to those objects'
            # own boxes, where the re-run's adjoints look for them (in y's box, beside them, they counted
            # the object's cotangents twice where the re-run stores into it: `r.m -= b.m`)
            fields = fields_of(y)
            inner = {k: v for k, v in g.items() if _object_field(fields.get(k)) and isinstance(v, Tangent)
                     and not value_class(type(fields[k]))}  # (a registered container's: its own rules')
            for k, v in inner.items():
                S.box(fields[k], v)
            if inner:
                g = Tangent({k: v for k, v in g.items() if k not in inner})
        return S.box(y, g)
    return g


_FIELDLESS = frozenset({float, int, bool, complex, str, bytes, type(None), _F8, _NDARRAY, list, tuple, dict})


def _object_field(v) -> bool:
    if type(v) in _FIELDLESS:  # (numbers, arrays, containers by their exact class: never objects of fields)
        return False
    return has_fields(v) and not isinstance(v, (dict, list, tuple, np.ndarray, numbers.Number, types.FunctionType,
                                                 types.MethodType))


_NONES = (None, None, None)



def iter_guard(obj, name: str) -> None:
    """Before `for v in obj` whose body changes obj (`s.k = ...`, `s.bump(t)`, `reset(s)`): refused where obj's
    class iterates by Python code, an `__iter__` (a generator's runs eagerly when the loop starts: its items
    read obj before the changes, 5.4 for 4.7; `iter(self.items)` of a list the body changes is drawn as it
    was) or a `__next__` of its own (its reads of obj are not followed)."""
    kind = type(obj)
    if not users_class(kind):
        return
    it, nxt = getattr(kind, "__iter__", None), getattr(kind, "__next__", None)
    if type(it) is types.FunctionType or type(nxt) is types.FunctionType:  # (an `__iter__` returning a generator
        # method's, or `iter(self.items)` of a list the body changes: the same)
        raise EagerIterationError(
            f"a loop over a {kind.__name__} whose body changes `{name}`: reverse mode computes the items of the "
            f"class's own iteration (`{'__next__' if type(nxt) is types.FunctionType else '__iter__'}`) without "
            f"seeing those changes", where=runtime._user_line(),
            fix=f"draw the items first (`for v in list({name}):`) if they should not see the changes, or compute "
                "each item in the loop; forward mode (jacfwd, derivative) follows the loop as it is")


def lazy_stamp(*held, items=()) -> tuple:
    """The objects a lazy iterator is made over, with the counter of in-place changes (`lower._lazy_gaps`).
    `items`: objects it holds an item or a slice of (`zip(names, widths(d["p"]))`): of a list or dict that is a
    separate object or a copy, which a change of the container leaves alone (scipy's `find_peaks(x, width=w)`
    updates its dict with such a zip, refused before); of an array, a view, whose changes count."""
    if items:
        held += tuple(v for v in items if isinstance(v, np.ndarray))
    return CHANGES[0], held


def lazy_guard(stamp: tuple, name: str) -> None:
    """Before a use of lazy iterator `name` that follows statements which may change something, or after a call
    it was handed to: refused where a list, dict or array it was made over changed in place since it was made
    (reverse mode drew it there; Python draws it when used, seeing the change)."""
    stamp, held = stamp
    for v in held:
        if isinstance(v, (list, dict, np.ndarray)) and LAST_CHANGE.get(id(bottom(v)), -1) > stamp:
            raise EagerIterationError(
                f"the lazy iterator `{name}` is used after a {type(v).__name__} it draws from changed in place (by "
                f"a call, or through another name): reverse mode draws it where it is made, so it would not see "
                f"the change", where=runtime._user_line(),
                fix=f"make `{name}` where it is used, or draw it into a list first (`list(...)`); forward mode "
                    "(jacfwd, derivative) follows it")


def asked_primal(x):
    """`__od_primal__` of reverse mode's twins (the value `len(x)`, `type(x)`, `str(x)`... ask of): the primal of
    a dual; an object whose class has its own Python `__len__` under an outer forward pass (hessian's forward
    over reverse) is refused, `OwnTestUnderForward`: `len(q)` runs it natively on the duals q holds, where
    `isinstance(self.value, np.ndarray)` is False (physipy's Quantity: a length of 1 for 3, a Hessian 3x)."""
    kind = type(x)
    if kind is _Dual:
        return primal(x)
    if users_class(kind) and type(getattr(kind, "__len__", None)) is types.FunctionType:
        ctx = overdub.current()
        if ctx is not None and getattr(ctx, "operate", None) is not None or not dual_free(x):
            raise OwnTestUnderForward(
                f"reverse mode under a forward pass meets `{kind.__name__}.__len__`, a method of the class's own "
                "that Python runs natively, on the dual numbers the object holds", where=runtime._user_line(),
                fix='hessian(f, x, inner="forward") runs it as code (the default hessian does so by itself)')
    return x


def instance_of(x, cls):
    """`__od_instance_of__`: `isinstance(x, cls)`'s x as `asked_primal` gives it; refused where cls asks for a
    generator and x is one reverse mode ran eagerly (`runtime.generator_asked`)."""
    x = asked_primal(x)
    if type(x) is _TUPLE_ITERATOR:
        if type(cls) is str and cls in GENERATOR_ONLY:  # (`hasattr(g, "send")`: asks whether g is a generator)
            generator_asked(x, types.GeneratorType)
        elif type(cls) is not str:
            generator_asked(x, cls)
    return x


def rounded(x):
    """`round(x, ...)`'s argument (`__od_rounded__`): its primal; an object whose class has its own Python
    `__round__` refused — round's result is taken for a number's, which carries no derivative, and the
    method may return an object carrying x's (forallpeople's `round(force, 2)` sets the digits it prints:
    0 for 3)."""
    kind = type(x)
    if users_class(kind) and type(getattr(kind, "__round__", None)) is types.FunctionType:
        raise runtime.UnsupportedFunction(
            f"reverse mode takes round() of a `{kind.__name__}`, whose class has its own __round__, for a number's "
            "rounding (no derivative)", where=runtime._user_line(),
            fix="call the method by name (`x.__round__(n)`: a call, which reverse mode follows), or use forward mode")
    return asked_primal(x)


def outer_forward(a, b, name: str) -> None:
    """Refuse a class's own operator method met by reverse mode's pass under an outer forward pass (hessian's
    forward over reverse): the recording ran it natively on the duals the object holds, where `type(self.v)
    is float` answers for the dual and the method may take another branch than on the value; `hessian`
    then takes forward over forward, which runs it as code."""
    ctx = overdub.current()
    if (ctx is None or getattr(ctx, "operate", None) is None) and type(a) is not _Dual and type(b) is not _Dual:
        return  # (an operand a dual: an outer pass by tangent twins, which run no context)
    kind = type(a) if runtime.own_dunder(type(a), name) is not None else type(b)
    raise OwnTestUnderForward(
        f"reverse mode under a forward pass meets `{kind.__name__}`'s own operator method (`{name}`), which its "
        "recording ran on the dual numbers the object holds", where=runtime._user_line(),
        fix='hessian(f, x, inner="forward") runs it as code (the default hessian does so by itself)')


def unary_adj(opname, g, x, S=None, y0=None):
    """The cotangent of x for `-x` / `+x` (opname 'neg' / 'pos') beyond floats: an object whose class's
    `__neg__` / `__pos__` is Python code has it re-run under AD (it may compute anything); numbers, arrays
    and duals: -g / g. y0: the forward pass's result (`carry_boxes`)."""
    if leaves.HOSTED and (isinstance(x, leaves.HOSTED) or isinstance(g, leaves.HOSTED)):
        g, x = leaves.hosted(g), leaves.hosted(x)  # (a torch tensor's: on its values)
    if type(x) is not _NDARRAY and isinstance(x, np.ndarray):
        runtime.overriding_refused(f"`{opname}`", x, dunder=f"__{opname}__")
    if type(x) is _NDARRAY and x.dtype == object and holds_objects((x,), {}):
        _objects_refused(opname, x)
    method = runtime.own_dunder(type(x), f"__{opname}__")
    if method is not None and not _known(x) and type(x) is not _Dual:
        outer_forward(x, None, f"__{opname}__")
        return _rerun_back(Session() if S is None else S, method, x, (), g, boxed=True, y0=y0)[0]
    if not _known(x) and type(x) is not _Dual and runtime.descriptor_dunder(type(x), f"__{opname}__"):
        return _rerun_back(Session() if S is None else S, runtime.dunder_call, x, (f"__{opname}__",), g,
                           boxed=True, y0=y0)[0]
    return -g if opname == "neg" else g


def _stored_elsewhere(method, obj, y, opname, other=None) -> None:
    """A class's own operator method re-run for its result's cotangent: refused where it stores into objects
    and its result is not its own object (what it stored, read later through the object, would take no
    cotangent from the re-run: `__add__` keeping its operand in `self.last`); and where its result keeps a
    function capturing an operand (`_closure_kept`)."""
    if y is not obj:
        refuse_storing_method(method, opname, type(obj))
    _closure_kept(method, y, (obj, other), opname)


def _closure_kept(method, y, operands, opname) -> None:
    """Refused: the operator's result y keeps, in a field, a function capturing one of its operands
    (micrograd's `out._backward`, whose `other.grad += self.data * out.grad` a later call runs). The method ran
    natively in the recording, so the operand it captured was taken for a constant where the code did not
    differentiate it (its field read after the call gave 0), and the function's captured values took
    cotangents both from its call and from the operator's re-run (9 for 6)."""
    fields = own_dict(y) if type(y).__flags__ & HEAPTYPE else None
    if not fields:
        return
    for v in fields.values():
        if type(v) is types.FunctionType and v.__closure__:
            for cell in v.__closure__:
                try:
                    held = cell.cell_contents
                except ValueError:  # (an empty cell)
                    continue
                if any(held is o for o in operands if o is not None):
                    raise runtime.UnsupportedFunction(
                        f"reverse mode cannot differentiate `{opname}` by {method.__qualname__}: its result keeps a "
                        f"function ({v.__qualname__}) capturing an operand, which a later call changes or reads "
                        "where reverse mode cannot follow the operator it came from", where=runtime._user_line(),
                        fix=f"call the method by name (`a.{method.__name__}(b)`: a call, which reverse mode "
                            "follows), or use forward mode (jacfwd, derivative)")


def dropped_op(opname, a, b) -> None:
    """After `a <op> b` whose result nothing reads (`obj + x` as a statement): a class's own method for it,
    run natively, refused where it stores into objects (its stores' derivatives would be lost: 0)."""
    name = opname.rstrip("_")
    for v, n in ((a, name), (b, "r" + name)):
        if type(v).__flags__ & HEAPTYPE and type(v) is not _Dual and not _known(v) and not is_engine_class(type(v)):
            method = runtime.own_dunder(type(v), f"__{n}__")
            if method is not None:
                refuse_storing_method(method, opname, type(v))


def _same_masked_result(y, y0) -> None:
    """A numpy.ma operator re-run in the reverse pass (`binop_adj`) computes what the forward pass's did:
    the same data and mask. Refused where not: an operand's mask or data changed in place after the
    operator (`b = a * x; a.mask = m2`: the re-run masked b's entries anew, 1 for 2.02 in both modes), or
    the forward pass's result is gone (rebound: nothing to compare with)."""
    if not isinstance(y, _MASKED) and not isinstance(y0, _MASKED):
        return
    same = y0 is not None and type(y) is type(y0) and np.shape(y) == np.shape(y0)
    if same:
        d, d0 = np.ma.getdata(y), np.ma.getdata(y0)
        with np.errstate(invalid="ignore"):
            same = bool(np.all((d == d0) | ((d != d) & (d0 != d0)))) and bool(
                np.array_equal(np.ma.getmaskarray(y), np.ma.getmaskarray(y0)))
    if not same:
        raise masked_refused("an operator whose operands (or result) changed in place after it (a mask set anew, "
                             "an entry written)")


def _python_binop_adj(opname, g, a, b, S=None, y0=None, check=None):
    """A user class's operator (`__add__` in Python) is re-run under AD in the reverse pass (its operands
    are the recorded ones), so its own code is differentiated — recomputation instead of recording. Its
    adjoints run in the pass's session S: cotangents of structured operands live in their boxes there."""
    name = opname.rstrip("_")
    S = Session() if S is None else S
    outer_forward(a, b, f"__{name}__")
    fa = runtime.own_dunder(type(a), f"__{name}__")  # (as stored: a descriptor's __get__ may give a function)
    ta, tb = type(a), type(b)
    fb = runtime.own_dunder(tb, f"__r{name}__") if tb is not ta and issubclass(tb, ta) else None
    if fb is not None and fb is not runtime.own_dunder(ta, f"__r{name}__"):
        # (a subclass's reflected method first, as CPython calls it: `V(x) * W(x)` with W(V) defining
        # `__rmul__` ran W's; the adjoint differentiated V's `__mul__`)
        y, pb = _twin(fb, b, a)
        if y is not NotImplemented:
            if check is not None:
                check(y, y0)
            _stored_elsewhere(fb, b, y, opname, a)
            db, dargs = _pull(S, pb, _result_box(S, y, g, (a, b), y0))
            return dargs[0], db
    if fa is not None:
        y, pb = _twin(fa, a, b)
        if y is not NotImplemented:
            if check is not None:
                check(y, y0)
            _stored_elsewhere(fa, a, y, opname, b)
            da, dargs = _pull(S, pb, _result_box(S, y, g, (a, b), y0))
            return da, dargs[0]
    elif type(a) is not _Dual and not _known(a) and runtime.descriptor_dunder(type(a), f"__{name}__"):
        # (a descriptor's method, multipledispatch's: pyrr's `Matrix44 * Matrix44`)
        y, pb = _twin(runtime.dunder_call, a, f"__{name}__", b)
        if y is not NotImplemented:
            carry_boxes(S, y0, y)
            da, dargs = _pull(S, pb, _as_box_of(S, y, g))
            return da, dargs[1]
    fb = runtime.own_dunder(type(b), f"__r{name}__")
    if isinstance(a, np.generic) and taken_per_element(b):
        a = a.item()  # (`np.float64(s) + V(c)`: numpy hands V's reflected method a Python number)
    elif type(a) is _Dual and numpy_scalar_dual(a) and taken_per_element(b, _Dual):
        a = as_python_number(a)  # (the same under hessian's outer forward pass)
    if fb is None:
        db, dargs = _rerun_back(S, runtime.dunder_call, b, (f"__r{name}__", a), g, boxed=True, y0=y0)
        return dargs[1], db
    # (refused, as `__add__` is, where it stores into objects and returns another: `acc = acc + h` whose
    # `__radd__` appends to a list the loop visits: 1 for 7)
    y, pb = _twin(fb, b, a)
    if check is not None:
        check(y, y0)
    _stored_elsewhere(fb, b, y, opname, a)
    db, dargs = _pull(S, pb, _result_box(S, y, g, (a, b), y0))
    return dargs[0], db


# The stores the recording made into objects' attributes, by object: id -> (object, {attr: value}), for
# one top-level recording (cleared with `structs.LAST_CHANGE`) and kept as the reverse pass undoes and
# redoes them. A read of an attribute the recording stored into, finding there a value it did not store, was
# given it by code Python ran unrecorded: a class's dunder run by an operator or builtin (`s[i]`, `-s`,
# `len(s)`, `for v in s`) that stores into self (a lazy cache filled in `__getitem__`). Its derivative
# would be lost (the gradient was 0): refused, `_unrecorded_store`. Per thread: `stores()`.
_THREAD = threading.local()  # (its `stores`: one thread's recordings do not clear another's)


def stores() -> dict:
    """This thread's STORES (the dict described above)."""
    d = getattr(_THREAD, "stores", None)
    if d is None:
        d = _THREAD.stores = {}
    return d


def _stored(obj, attr, v) -> None:
    """(before the store) obj.attr = v was recorded; the first store into obj also notes the attributes
    it had then (set before the recording reached it)."""
    table = stores()
    entry = table.get(id(obj))
    if entry is None or entry[0] is not obj:
        own = own_dict(obj)
        table[id(obj)] = (obj, {attr: v}, frozenset(own) if type(own) is dict else frozenset())
    else:
        entry[1][attr] = v


def _setattr_stored(obj, attr, v) -> None:
    _set_again(obj, attr, v)
    _stored(obj, attr, v)


def _set_again(obj, attr, v) -> None:
    """obj.attr = v, as the store being undone or redone made it: a frozen dataclass's fields are set by
    `object.__setattr__` in its `__init__`, which its own `__setattr__` refuses (bsm-pricer's frozen, slotted
    market data: the redo crashed with FrozenInstanceError)."""
    try:
        setattr(obj, attr, v)
    except AttributeError:  # (dataclasses.FrozenInstanceError is one)
        if type(obj).__setattr__ is object.__setattr__:
            raise
        object.__setattr__(obj, attr, v)


def _delete_again(obj, attr) -> None:
    try:
        delattr(obj, attr)
    except AttributeError:
        if type(obj).__delattr__ is object.__delattr__ or not hasattr(obj, attr):
            raise
        object.__delattr__(obj, attr)  # (a frozen dataclass's field, set in its `__init__`)


_CONSTANT_TYPES = (type(None), bool, int, str, bytes, type, types.FunctionType, types.BuiltinFunctionType)


_IMPLICIT = frozenset(f"__{n}__" for n in (
    "getitem setitem delitem len iter next reversed contains bool neg pos abs invert eq ne lt le gt ge hash "
    "int float complex index round trunc floor ceil format str repr enter exit aenter aexit "
    "add radd iadd sub rsub isub mul rmul imul truediv rtruediv itruediv floordiv rfloordiv ifloordiv mod rmod "
    "imod pow rpow ipow matmul rmatmul imatmul and rand iand or ror ior xor rxor ixor lshift rlshift ilshift "
    "rshift rrshift irshift divmod rdivmod").split())


_IMPLICITLY: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _runs_implicitly(cls) -> bool:
    """Does cls define, in Python, a method Python runs for an operator or a builtin (`__getitem__`,
    `__len__`, `__neg__`, ...)? Only such classes' stores can escape the recording (a store made by a
    Python function a C function calls back, scipy's `_NQuad.integrate` under quad, is no derivative's)."""
    known = _IMPLICITLY.get(cls)
    if known is None:
        known = _IMPLICITLY[cls] = any(type(k.__dict__.get(name)) is types.FunctionType
                                       for k in cls.__mro__[:-1] for name in _IMPLICIT)
    return known


def _unrecorded_store(obj, attr, v, table) -> None:
    entry = table.get(id(obj))
    if entry is None or entry[0] is not obj or not _runs_implicitly(type(obj)):
        return
    kept = entry[1].get(attr, _MISSING)
    if kept is v or kept is _MISSING and attr in entry[2] or isinstance(v, _CONSTANT_TYPES) or carries_none(v):
        return  # (as recorded; or there before the recording stored into obj; a value of a constant type: a
        # pint Quantity's `_dimensionality` cache, its units' dimensions, filled by `-`'s unrecorded run)
    if instance_dict_owner(own_dict(obj)) is obj:  # (stores through `obj.__dict__`,
        return                                                       # `setattr(obj, name, v)`: recorded)
    raise runtime.UnsupportedFunction(
        f"reverse mode read {type(obj).__name__}.{attr}, which code it did not record stored into the object "
        "after the store it recorded: a method of the class that Python ran for an operator or a builtin "
        "(`obj[i]`, `-obj`, `len(obj)`, `for v in obj`, `obj == v`) and that stores into its object (a lazy "
        "cache). Its derivative would be lost", where=runtime._user_line(),
        fix=f"call the method by name where it stores (`obj.__getitem__(i)`), fill the cache in `__init__`, "
            "or use forward mode (`contexts.derivative`, `jacfwd`), which follows it")


_GENERATOR_METHODS = frozenset({"close", "send", "throw"})
# what a generator has and its eager stand-in has not (`g.gi_frame`, `inspect.getgeneratorstate(g)`: an
# AttributeError of the engine's making, gen21 C3)
GENERATOR_ONLY = frozenset({"gi_frame", "gi_running", "gi_code", "gi_yieldfrom", "gi_suspended", "__name__",
                            "__qualname__"}) | _GENERATOR_METHODS


def _closed():
    return None


def getattr_(obj, attr):
    """`obj.attr` in the forward sweep, as (value, pullback or None). A property or
    `functools.cached_property` whose getter is a Python function runs its twin now: what the getter
    reads and writes (a lazy cache `if self._c is None: self._c = ...`) is recorded at this point, where
    re-running it in the reverse pass would find the cache filled and lose the derivative."""
    t = type(obj)
    if t is _MODULE:  # (`xp.sin`, `np.exp`: the hot case first; a module's own attribute, or its `__getattr__`'s,
        return getattr(obj, attr), None  # as the tests below end for it, without the five before)
    if t is _TUPLE_ITERATOR and attr in GENERATOR_ONLY:  # a generator reverse mode ran when it was made
        if attr == "close":  # (`g.close()` after the first items: it ran to its end already; nothing to stop)
            return _closed, None
        raise runtime.UnsupportedFunction(
            f"reverse mode cannot `{attr}` of a generator: it runs a generator to its end when it is made (an "
            "iterator over its items stands for it)",
            where=runtime._user_line(), fix="use forward mode (jacfwd, derivative), or pass the values to the "
                                            "generator's function as arguments")
    if t in _C_LEVEL:  # attributes in C (an array's .T, a dual's own): nothing to run as a twin
        if attr in _RAW_MEMORY and t is np.ndarray and obj.dtype.kind in "fc":
            raise runtime.UnsupportedFunction(
                f"reverse mode cannot follow a differentiated array's values through its raw memory (.{attr}): "
                "C code reading them there (a ctypes or LowLevelCallable argument, a cache keyed by its "
                "bytes) gives results without their derivative", where=runtime._user_line(),
                fix="pass the values to C code that has a rule, or mark the inputs it depends on with "
                    "`contexts.stop_gradient` if they are not to be differentiated")
        return getattr(obj, attr), None
    if type(getattr(t, "__getattribute__", None)) is types.FunctionType and attr != "__dict__" and attr != "__class__":
        # the class's own `__getattribute__` (a value scaled on every read): its code, recorded (the stored
        # attribute's cotangent was taken: 1.0 for 1.5, +2 for -2 of a negating one); its own reads through
        # `object.__getattribute__` read the instance dict (`py_object_getattribute`)
        return _twin(t.__getattribute__, obj, attr)
    own = own_dict(obj)
    if type(own) is dict and attr in own and attr not in _data_descriptor_names(t):
        # the instance's own value (a property stores elsewhere; a data descriptor of the class, which Python
        # asks before the instance's dict, below: one storing into `obj.__dict__` under its own name and
        # doubling on the read was taken for the stored value, 1 for 2, fuzz F's W3)
        v = getattr(obj, attr)
        table = getattr(_THREAD, "stores", None)
        if table:
            _unrecorded_store(obj, attr, v, table)
        if _CALLBACK_STORED and (hit := _CALLBACK_STORED.get((id(obj), attr))) is not None and hit[0] is obj \
                and hit[1] is v:
            raise stored_read_refused(obj, attr, hit[2])
        return v, None
    if _whole_number(t) and attr not in _NUMBER_PARTS:
        _representation_read(obj, attr, getattr(obj, attr))
    if t is _MODULE or isinstance(obj, (types.ModuleType, type)):  # (`np.exp`: the hot case)
        return getattr(obj, attr), None
    if t is super and (held := _past(obj, attr)) is not None and isinstance(held, property) and (
            type(held.fget) is types.FunctionType):
        # `super().v`, a base class's property: its getter's twin on the object (run natively it gave 0:
        # pyfar's `Signal.time` returning `super().time`); its cotangent is the object's, as super()'s is
        return _twin(held.fget, obj.__self__)
    if t is super and type(held := _past(obj, attr)) is functools.cached_property and (
            type(held.func) is types.FunctionType):
        # `super().c` of a base class's cached_property, overridden in the subclass (krigeo's `Ki`): Python
        # runs its getter natively from C, its value unrecorded (0 for 5.6); its cache is a store past the
        # subclass's own descriptor, which the reverse pass cannot undo there
        raise runtime.UnsupportedFunction(
            f"reverse mode does not differentiate `super().{attr}`, a base class's functools.cached_property",
            where=runtime._user_line(), fix=f"call its getter itself (`{held.func.__qualname__}.func(self)`), or "
                                            "use forward mode (derivative, jvp)")
    if isinstance(obj, ArrayLeaf):  # a dask array's `.T`, `.shape`: read as an ndarray's (never its code)
        return getattr(obj, attr), None
    if attr == "__dict__":  # (also of a C type's instance, SimpleNamespace's: its dict is its fields)
        d = getattr(obj, attr)
        if type(d) is dict and not remember_instance_dict(obj, d):
            _instance_dict_read(obj)  # (also when it holds none yet: a store through d may bring them)
        return d, None
    if attr in _ARRAY_FORM and isinstance(obj, np.ndarray):  # (an ndarray subclass's own property for it,
        return getattr(obj, attr), None  # numpy.ma's `shape` returning `super().shape`: no derivative in it)
    prop = _class_attribute(t, attr)
    if prop is None:
        ga = getattr(t, "__getattr__", None)
        if type(ga) is types.FunctionType and type(own) is dict and not is_engine_class(t) and not any(
                attr in k.__dict__ for k in t.__mro__):  # (a class attribute that is None, `_Kinf = None`: found)
            # not the object's own: found by the class's `__getattr__`, its twin run now, so what it stores
            # (a lazy attribute, `setattr(self, name, v)`) is recorded (run natively and re-run in the
            # reverse pass, the stored value was a constant: 0 for 1.8)
            return _twin(ga, obj, attr)
        return getattr(obj, attr), None
    if leaves.GETTER_DESCRIPTORS and (getter := leaves.GETTER_DESCRIPTORS.get(type(prop))) is not None and type(
            fget := getter(prop)) is types.FunctionType:
        # a C descriptor running a Python getter (pandas' `cache_readonly`): its twin at every read, its cache
        # neither read nor filled (natively its result's cotangent went to a field nothing read back: 0)
        return _twin(fget, obj)
    if isinstance(prop, property):
        if prop.fget is None:
            return getattr(obj, attr), None  # (Python raises: unreadable)
        if type(prop.fget) is not types.FunctionType:
            # another callable as the getter (a method bound to the property itself, pygeodesy's caching
            # `Property`; operator.attrgetter): called as any call is, its result's derivative kept or refused
            y, pb = runtime.call(EVERY_ARGUMENT, prop.fget, obj)
            return y, (None if pb is None else (_DESCRIBED, pb))
        try:
            return _twin(prop.fget, obj)
        except AttributeError:  # Python's own fallback: the class's __getattr__ (re-run in the adjoint)
            if getattr(type(obj), "__getattr__", None) is None:
                raise
            return getattr(obj, attr), None
    if (type(prop) is functools.cached_property and type(prop.func) is types.FunctionType
            and attr == prop.attrname and attr not in (own_dict(obj) or (attr,))):
        y, pb = _twin(prop.func, obj)
        old = setattr_(obj, attr, y)  # the cache, stored as cached_property does: undone in the reverse pass
        return y, (_CACHED, pb, old)
    get = getattr(type(prop), "__get__", None)
    if type(get) is types.FunctionType and not isinstance(prop, types.FunctionType):
        # a descriptor of the class's own code (`__get__` reading where its `__set__` stored): its twin runs
        y, pb = _twin(get, prop, obj, t)
        return y, (None if pb is None else (_DESCRIBED, pb))
    if type(prop) is _GETSET:
        return _c_property(prop, obj, attr)
    return getattr(obj, attr), None


_GETSET = types.GetSetDescriptorType


def _c_property(prop, obj, attr):
    """`obj.attr` through a getset descriptor of a compiled class: a registered computed property's code, as a
    twin (`leaves.C_PROPERTIES`); a field (the same object at each read: Cython's `cdef public`), read as a
    field; a new object at each read, which may carry a derivative and which the object's fields may hold
    one for, refused (`NDArrayBacked.T`: its cotangent went to a field nothing reads back, a zero)."""
    if (getter := leaves.C_PROPERTIES.get(prop)) is not None:
        return _twin(getter, obj)
    y = getattr(obj, attr)
    if (prop.__objclass__.__module__ or "builtins").split(".")[0] in ("builtins", "numpy"):
        return y, None
    if type(y) in (float, int, complex, bool) or isinstance(y, np.generic):
        return y, None  # (a C number field, read anew each time: ctypes' `c_double.value`, stored and read as a field)
    if getattr(obj, attr) is not y and runtime._may_differ(y, 0) and runtime._may_differ(obj, 0):
        raise runtime.NoRuleError(
            f"reverse mode cannot follow `{type(obj).__name__}.{attr}`, a property computed by compiled code "
            "(a new value at each read) of an object holding differentiated values", where=runtime._user_line(),
            fix="compute on numpy arrays, or register its code: `contexts.rules.leaves.register_c_property("
                f"{prop.__objclass__.__name__}.__dict__[{attr!r}], getter)`")
    return y, None


_MODULE = types.ModuleType
_ARRAY_FORM = frozenset({"shape", "ndim", "size", "dtype", "itemsize", "nbytes", "strides"})


def _past(proxy, attr):
    """The class attribute a `super()` proxy finds for attr (in the object's MRO after the proxy's class), or
    None."""
    self_ = proxy.__self__
    mro = (self_ if isinstance(self_, type) else type(self_)).__mro__
    start = proxy.__thisclass__
    if start not in mro:
        return None
    for klass in mro[mro.index(start) + 1:]:
        if attr in klass.__dict__:
            return klass.__dict__[attr]
    return None


def _data_descriptor_names(cls) -> frozenset:
    """The names under which cls (or a base) holds a data descriptor (a `__set__` or `__delete__`: a property,
    a slot, a descriptor class's instance), which Python reads before an instance's dict. Kept per class."""
    names = _DATA_DESCRIPTORS.get(cls)
    if names is None:
        names = frozenset(name for k in cls.__mro__ for name, v in vars(k).items()
                          if (hasattr(type(v), "__set__") or hasattr(type(v), "__delete__"))
                          and not (type(v) is property and _reads_own_entry(v.fget, name)))
        if len(_DATA_DESCRIPTORS) > 4096:
            _DATA_DESCRIPTORS.clear()
        _DATA_DESCRIPTORS[cls] = names
    return names


_DATA_DESCRIPTORS: dict = {}


def _reads_own_entry(fget, name: str) -> bool:
    """fget is `def _get(self, name=name): return self.__dict__[name]` (scipy's tuple bunches' extra fields): the
    instance dict's entry under the property's own name, as it is."""
    import ast
    fdef = function_tree(fget)
    if fdef is None or not fdef.args.args:
        return False
    body = [st for st in fdef.body if not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return):
        return False
    v = body[0].value
    if not (isinstance(v, ast.Subscript) and isinstance(v.value, ast.Attribute) and v.value.attr == "__dict__"
            and isinstance(v.value.value, ast.Name) and v.value.value.id == fdef.args.args[0].arg):
        return False
    key = v.slice
    if isinstance(key, ast.Constant):
        return key.value == name
    params = [a.arg for a in fdef.args.args]
    defaults = dict(zip(params[len(params) - len(fget.__defaults__ or ()):], fget.__defaults__ or ()))
    return isinstance(key, ast.Name) and key.id in defaults and defaults[key.id] == name


def _class_attribute(cls, attr):
    """cls's attribute `attr` as stored (a descriptor itself, not what its `__get__` gives), or None."""
    for klass in cls.__mro__:
        found = klass.__dict__.get(attr, _MISSING)
        if found is not _MISSING:
            return found
    return getattr(cls, attr, None)  # (a metaclass's)


# objects whose attributes `getattr_adj` treats apart from an instance's fields
_NOT_PLAIN = (types.ModuleType, type, np.ndarray, np.generic, complex, float, int, list, tuple, dict)


_NUMBER_ATTRIBUTES = frozenset({"real", "imag", "numerator", "denominator", "__class__", "__dict__"})


def _number_field(obj, attr) -> bool:
    """attr is a field of obj (a number of a class of its own): a slot, or an entry of its instance dict that no
    data descriptor of its class (a property) shadows."""
    found = _class_attribute(type(obj), attr)
    if type(found) is types.MemberDescriptorType:
        return True
    kind = type(found)
    if found is not None and (hasattr(kind, "__set__") or hasattr(kind, "__delete__")):
        return False
    own = own_dict(obj)
    return type(own) is dict and attr in own


def _number_object(obj) -> bool:
    """obj is a number of a Python class of its own (a float, complex or int subclass's instance): its fields are
    an object's."""
    cls = type(obj)
    return bool(cls.__flags__ & HEAPTYPE) and isinstance(obj, (float, complex, int)) and not isinstance(obj, bool)
_C_LEVEL = frozenset({np.ndarray, _Dual, float, complex, int, bool, np.float64, np.float32, np.complex128,
                      np.int64, np.bool_})
_CACHED = object()  # a pullback's mark: a cached_property's first read, which also stored the value
_DESCRIBED = object()  # a pullback's mark: a read through a descriptor's Python `__get__`


def subscript(obj, idx):
    """`obj[idx]` in the forward sweep where obj is no list, tuple, dict or array, as (value, pullback or
    None): a class's own `__getitem__`, or a dict subclass's `__missing__` for a missing key, runs its twin
    now, so what it stores (a lazy cache filled on the first read) is recorded (run natively, a later
    read found the cached value a constant: 0 for 4)."""
    kind = type(obj)
    if kind.__flags__ & HEAPTYPE and not is_engine_class(kind) and (not value_class(kind) or leaves.CODE_INDEXED and (
            issubclass(kind, tuple(leaves.CODE_INDEXED)))):
        # (not numpy's, dask's, xarray's values: their indexing has rules of its own; pandas' is code)
        gi = getattr(kind, "__getitem__", None)
        if type(gi) is types.FunctionType:
            return _twin(gi, obj, idx)
        missing = getattr(kind, "__missing__", None)
        if isinstance(obj, dict) and type(missing) is types.FunctionType and type(gi) is not types.FunctionType:
            if dict.__contains__(obj, idx):  # (found: the dict's own; an unhashable key raises as Python does)
                return dict.__getitem__(obj, idx), None
            return _twin(missing, obj, idx)
    return obj[idx], None


def subscript_adj(S, dobj, g, pb):
    """The adjoint of `subscript` where the class's code ran: the object's cotangent through its twin."""
    return _pull(S, pb, g, dobj)[0]


def _class_array_changed(obj, attr, result) -> None:
    """A class's array read (through the class or an instance) after this recording changed it in place:
    refused. Its reads are the class's constants to reverse mode (no variable holds its cotangent), so what
    was written into it was lost (`buf = np.zeros(2)` in the class body, `self.buf[:] = v; return self.buf`:
    0 for 3)."""
    if _changed_since(result, RECORDING_START[0]):
        owner = obj.__name__ if isinstance(obj, type) else type(obj).__name__
        raise runtime.UnsupportedFunction(
            f"reverse mode cannot differentiate an array a class holds ({owner}.{attr}) changed in place and "
            "read again: its reads are taken for the class's constant",
            fix="keep the array on the object (`self.buf = np.zeros(2)` in `__init__`), or return a copy")


def getattr_adj(S, dobj, g, obj, attr, result, pb=False):
    if pb is None and (type(result) is int or type(result) is bool) and (
            not (obj.__class__.__flags__ & HEAPTYPE) or isinstance(obj, (list, tuple, dict))):
        # an integer a C object answers (a timedelta's `.days`, geomag's `(t - date(...)).days`), or a list,
        # tuple or dict subclass (a `time.struct_time`'s `.tm_yday`: solarpy's, refused as a field sharing
        # its items' box): no derivative (its cotangent, a float from `days / 365`, went into the object's
        # box: a crash in the date's sum)
        return dobj
    if pb is None:  # (the common case first: an instance's own attribute, `self.k`)
        own = own_dict(obj)
        if (type(own) is dict and attr in own and getattr(type(obj), attr, _MISSING) is _MISSING
                and type(result) is not types.MethodType and type(result) is not types.BuiltinMethodType
                and type(result) is not C_METHOD
                and (not isinstance(obj, _NOT_PLAIN) or _number_object(obj)) and not isinstance(obj, ArrayLeaf)):
            # no class attribute of that name (no property, descriptor or __getattr__ at work), no bound
            # method of obj, not an array, container, module or class: the field's box entry, where the
            # general path below ends for it. A number of a class of its own with fields (`class Pressure(float)`
            # storing `self.data`) too: its box holds the number's cotangent beside its fields' (NUMBER_VALUE);
            # taken for a number's `.real`, the field's cotangent was dropped (0 for 6, session 69)
            box = S.box(obj, dobj)
            box[attr] = acc(box.get(attr), g)
            return box
    if type(pb) is tuple and pb[0] is _DESCRIBED:  # obj was the __get__'s argument
        if isinstance(obj, np.ndarray):  # (an ndarray subclass's descriptor, pyrr's `v.x`: an array's)
            return acc(dobj, _pull(S, pb[1], g)[1][0])
        box = S.box(obj, dobj)
        _, dargs = _pull(S, pb[1], g)
        return S.box(obj, dargs[0]) if dargs[0] is not None else box
    if type(pb) is tuple and pb[0] is _CACHED:  # later reads' cotangents of the cached value join g
        _, pb, old = pb
        dobj, gv = setattr_adj(S, dobj, obj, attr, old)
        if pb is None:
            return dobj
        g = acc(g, gv)
    if pb:  # a property's getter run in the forward sweep (None: read as it was; False: not known)
        return _pull(S, pb, g, dobj)[0]
    if (type(result) is types.MethodType or type(result) is types.BuiltinMethodType
            or type(result) is C_METHOD) and result.__self__ is obj:
        # the cotangent of a bound method is that of its object (`getattr(x, "sum")(axis=0)`: the C
        # method's call hands its object's cotangent to the method)
        return acc(dobj, g)
    if g is not None and (type(result) is _NDARRAY or type(result) is _Dual) and (isinstance(obj, type) or _class_attribute(
            type(obj), attr) is result and attr not in (own_dict(obj) or ())):
        _class_array_changed(obj, attr, result)
    if isinstance(obj, (types.ModuleType, type)):
        if g is not None and type(result) in (dict, list):
            # a container a module or class holds (`Meter.stats`, `lib.STATE`), read again later by the same
            # path: its items' cotangents go to its box, where a store into it finds them (they were
            # dropped: a class's accumulator dict gave 1.5 for 2.5)
            S.box(result, g)
        return dobj
    if type(result) in (dict, list) and _class_attribute(type(obj), attr) is result and attr not in (
            own_dict(obj) or ()) and not isinstance(obj, (list, tuple, dict)):
        # a container the class holds, read through an instance (`self.hist.append(v)` of a class attribute):
        # its items' cotangents go to its own box, as read through the class (the object's box took them, and
        # a store into the container found none: 0 for 1.8)
        if g is not None:
            S.box(result, g)
        return dobj
    if not has_fields(obj) and not isinstance(obj, (list, tuple, dict)) and \
            _class_attribute(type(obj), attr) is result:
        return dobj  # its class's attribute (the object has no fields): a constant, as a class's own reads are
    if type(obj) is not _NDARRAY and isinstance(obj, np.ndarray) and attr in (own_dict(obj) or ()) and \
            getattr(type(obj), attr, _MISSING) is _MISSING:
        # an ndarray subclass's own attribute (ahrs' Quaternion's `.A`, stored by its `__new__`): its cotangent
        # by name in the object's box, where the store's adjoint takes it (`_array_setattr_adj`); the array's
        # own cotangent, dobj, passes through
        if g is not None:
            box = S.boxes.get(id(obj))
            if box is None:
                box = S.boxes[id(obj)] = Tangent()
                S.kept(obj)
            if not isinstance(box, dict):
                raise runtime.UnsupportedFunction(
                    f"reverse mode does not differentiate through the attribute .{attr} of a {type(obj).__name__} "
                    "(an ndarray subclass) read beside its items", where=runtime._user_line(),
                    fix="keep that value in a variable or a plain object of its own")
            box[attr] = acc(box.get(attr), g)
            S.redo(attributes_left, obj)  # (taken by the store's adjoint, or refused when the pass ends: one
        return dobj                       # `__array_finalize__` made in C, `getattr(obj, "scale")`, is no store)
    if _number_object(obj) and attr not in _NUMBER_ATTRIBUTES and _number_field(obj, attr):
        # a field of a number of a class of its own: one its instance dict holds, shadowing a class's constant
        # (`data = 2.0` in the class body, `d.data = p ** 3`), or a slot (`__slots__ = ("data",)`): the object's
        # box by name, as the fast path above (taken for a number's `.data`, both gave the class's or 0, silently)
        box = S.box(obj, dobj)
        box[attr] = acc(box.get(attr), g)
        return box
    if isinstance(obj, (np.ndarray, np.generic, complex, float, int, ArrayLeaf)):
        if attr == "__dict__" and not _carries(g):
            # (an ndarray subclass's fields, numpy.ma's mask and fill value read by its `_update_from`: no
            # cotangent reached them; one stored there and read back is refused, `attributes_left`)
            return dobj
        return acc(dobj, _array_attr_adj(g, obj, attr))
    if attr == "__dict__" and type(result) is dict:  # the object's own fields: one box (structs.Session.box)
        box = S.box(obj, dobj)
        if g is not None and g is not box:
            merge_into(box, g)
        return box
    if type(obj) is _Dual:  # forward over reverse: a dual's `.shape`, `.T` as an array's (never its code)
        return acc(dobj, _array_attr_adj(g, obj, attr))
    prop = getattr(type(obj), attr, None)
    if isinstance(prop, property) and type(prop.fget) is types.FunctionType:
        return _rerun_back(S, prop.fget, obj, (), g, dobj)[0]
    if isinstance(obj, tuple) and hasattr(type(obj), "_fields"):
        if attr not in type(obj)._fields:  # (a subclass's own attribute beside the fields: a ValueError before)
            _check_container_field(obj, attr)
        box = S.box(obj, dobj)
        i = type(obj)._fields.index(attr)
        box[i] = acc(box[i], g)
        return box
    ga = getattr(type(obj), "__getattr__", None)
    if prop is None and type(ga) is types.FunctionType and attr not in fields_of(obj):
        # found by the class's own __getattr__ (scipy's OptimizeResult reads its keys): differentiated
        return _rerun_back(S, ga, obj, (attr,), g, dobj)[0]
    if isinstance(obj, (np.ndarray, np.generic)) and attr in _ARRAY_LAYOUT:
        return dobj  # (`a.flags.c_contiguous`, `a.itemsize`: the layout carries no derivative)
    _check_container_field(obj, attr)
    box = S.box(obj, dobj)
    if not isinstance(box, dict):  # (an object of a C class without fields: numpy's flags)
        v = getattr(obj, attr, None)
        if isinstance(v, (bool, int, str, bytes, type(None))) or type(v) is tuple and all(
                isinstance(e, (bool, int, str, bytes, type(None))) for e in v):
            return box  # (a flag, a count, a name, a shape: no derivative; `super().shape`, numpy.ma's `.shape`)
        raise NoRuleError(f"reverse mode cannot take a derivative through .{attr} of a {type(obj).__name__} "
                          "(a C object without fields)", fix="give the function reading it a rule")
    box[attr] = acc(box.get(attr), g)
    return box


_ARRAY_LAYOUT = frozenset({"flags", "itemsize", "nbytes", "strides", "dtype", "ndim", "size", "shape", "base",
                           "ctypes", "data", "__array_interface__", "__array_priority__"})


# Numbers the engine differentiates as a whole (their operators go to the rules) but whose inside is
# Python: a Fraction's `_numerator`, an mpmath mpf's `_mpf_` mantissa, a ufloat's `_nominal_value`.
# Their parts are integers or plain floats that carry no derivative, so code computing with the parts
# (mpmath's own functions, `Fraction(x.numerator, x.denominator)`) would return a constant: refused.
_NUMBER_PARTS = frozenset({"real", "imag", "conjugate", "__class__"})


def _whole_number(t) -> bool:
    """(Not cached: a cache keyed by type would keep classes made at run time alive; the attribute reads
    that reach here, of slots and class attributes, are the rare ones.)"""
    return (issubclass(t, _KNOWN_NUMBERS)  # (a dual never reaches here: getattr_ reads its attributes at once)
            and not issubclass(t, (float, complex, int, np.generic, numbers.Integral)))


def _representation_read(obj, attr, result):
    """Refuse reading the inside of a differentiated number (see _NUMBER_PARTS) where the forward sweep
    reads `obj.attr` (a bound method is not its inside: its call goes to the rules)."""
    if (type(result) is types.MethodType or type(result) is types.BuiltinMethodType
            or type(result) is C_METHOD) and result.__self__ is obj:
        return  # (`d.sqrt()` of a Decimal: a C method bound to it)
    raise runtime.UnsupportedFunction(
        f"reverse mode cannot differentiate through .{attr} of a {type(obj).__name__}: it reads the inside "
        f"of a differentiated number (integers or plain floats that carry no derivative), so what is "
        f"computed from it would come out constant", where=runtime._user_line(),
        fix=f"give the function that computes with it a rule (`contexts.custom_adjoint`), or pass floats")


def _instance_dict_read(obj):
    """Refuse `obj.__dict__` of an object holding differentiated values that cannot be remembered weakly
    (see structs.INSTANCE_DICTS): the dict's cotangent would be apart from the object's fields."""
    raise runtime.UnsupportedFunction(
        f"reverse mode does not differentiate through the __dict__ of a {type(obj).__name__} (it may hold "
        f"or receive differentiated values, and cannot be remembered weakly)", where=runtime._user_line(),
        fix="read and write its attributes by name (`getattr(obj, name)`, `setattr`), or give the function "
            "a rule (`contexts.custom_adjoint`)")


def _check_container_field(obj, attr):
    """A list or dict subclass's own attribute shares the cotangent box of its items: refused where the
    two cannot be told apart (a list's box is indexed by position; a dict's by key, here also `attr`). The dict's
    items as stored are asked: a subclass's own `__contains__` may read a field not made yet or already undone
    (dok_matrix's `_dict`, in the reverse pass of its `__init__`)."""
    if isinstance(obj, (list, tuple)) or (isinstance(obj, dict) and dict.__contains__(obj, attr)
                                          and own_dict(obj) is not obj):  # (a Bunch: its attributes are its items)
        kind = "dict" if isinstance(obj, dict) else "tuple" if isinstance(obj, tuple) else "list"
        raise runtime.UnsupportedFunction(
            f"reverse mode does not differentiate through the attribute .{attr} of a {type(obj).__name__} "
            f"(a {kind} subclass whose items carry derivatives too)",
            where=runtime._user_line(),  # (the adjoint of the user's function, at the user's line)
            fix="keep that value in a variable or a plain object of its own")


def _array_attr_adj(g, obj, attr):
    if attr == "T":
        return np.transpose(g)
    if attr == "mT":
        return np.swapaxes(g, -1, -2)
    if attr == "flat":  # a flat array in C order, as the iterator walks
        return np.reshape(g, np.shape(obj))
    if attr == "real":
        return g
    if attr == "imag":
        return 1j * g if np.iscomplexobj(obj) or isinstance(obj, complex) else None
    if attr == "data" and leaves.HOSTED and isinstance(obj, leaves.HOSTED):  # (torch's detached alias: as detach)
        raise runtime.UnsupportedFunction(
            f"reverse mode does not differentiate through .data of a {type(obj).__name__} (torch's autograd's "
            "detached alias of its values)", where=runtime._user_line(),
            fix="use the tensor itself, or `contexts.stop_gradient` where no derivative should flow")
    if attr in _CONSTANT_ATTRS or attr in _LEAF_METADATA and isinstance(obj, ArrayLeaf):
        return None
    raise runtime.UnsupportedFunction(
        f"reverse mode does not differentiate through the attribute .{attr} of a {type(obj).__name__}",
        fix="compute it with a numpy function instead, or give it a rule")


# attributes of arrays and numbers that carry no derivative
_INERT_KEYS = frozenset({str, bytes, int, bool, type(None)})  # (keys that carry no derivative)
_CONSTANT_ATTRS = frozenset({"shape", "ndim", "size", "dtype", "strides", "itemsize", "nbytes", "flags",
                             "ctypes", "data", "numerator", "denominator", "device", "__class__"})


# attributes of an array that expose its memory to code the recording cannot see: read of a differentiated
# array, refused (forward mode's duals have none of them: refused there too)
_RAW_MEMORY = frozenset({"ctypes", "data", "__array_interface__", "__array_struct__"})

# attributes of a registered array type (a dask array's chunking) that carry no derivative
_LEAF_METADATA = frozenset({"chunks", "chunksize", "numblocks", "npartitions", "name"})


def getitem_index_adj(S, dobj, g, obj, idx, bounds=False, obj_active=True):
    """`obj[idx]` with an index that may carry a derivative: (obj's cotangent, idx's). A class's own
    `__getitem__` (Python code: `np.r_[x, 1.0]`, a table looked up at a float) is re-run under AD and
    pulled back in both; an array's, list's or dict's index only selects (no cotangent). `bounds`: the
    index is made of slices whose bounds the adjoint cannot hand a cotangent to: one given is refused.
    An object that carries no derivative looked up by a key that carries none (a string: colour's table
    of chromatic adaptation transforms by name) needs neither, and is not re-run."""
    gi = getattr(type(obj), "__getitem__", None)
    if not obj_active and type(idx) in _INERT_KEYS:
        return dobj, None
    if isinstance(gi, property) and type(obj) is not _Dual and has_fields(obj):  # (giving the callable: `getitem_adj`)
        dself, dargs = _rerun_back(S, _subscript_of_field, obj, (idx, _item_field(obj)), g, dobj, boxed=True)
        return dself, dargs[0]
    if type(gi) is types.FunctionType and type(obj) is not _Dual and not isinstance(obj, ArrayLeaf):
        # (a JAX array's Python `__getitem__` is its library's: indexed as an ndarray is, by the rule)
        outer_forward(obj, g, "__getitem__")  # (see getitem_adj)
        dself, dargs = _rerun_back(S, gi, obj, (idx,), g, dobj, boxed=True)
        if bounds and not _no_cotangent(dargs[0]):
            raise runtime.UnsupportedFunction(
                f"reverse mode cannot hand a cotangent to the slice bounds of {type(obj).__name__}[...]: its "
                f"__getitem__ differentiates them", where=runtime._user_line(),
                fix="index with a plain value (`obj[k]`, k a variable), or give __getitem__ a rule")
        return dself, dargs[0]
    return getitem_adj(S, dobj, g, obj, idx), None


def _one_position(idx, ndim: int) -> bool:
    """idx picks one element of an array of ndim dimensions (`a[2]`, `a[1, 0]`)."""
    if type(idx) is not tuple:
        idx = (idx,)
    return len(idx) == ndim and all(isinstance(i, (int, np.integer)) and type(i) is not bool for i in idx)


def _no_cotangent(g) -> bool:
    if g is None:
        return True
    if isinstance(g, (list, tuple)):
        return all(_no_cotangent(v) for v in g)
    return isinstance(g, Tangent) and all(_no_cotangent(v) for v in g.values())


def getitem_adj(S, dobj, g, obj, idx):
    if type(obj) is np.flatiter:  # `x.flat[i]`: the flat iterator's cotangent is a flat array of x's size
        base = obj.base
        out = np.zeros(base.size, dtype=np.result_type(base.dtype, np.asarray(g).dtype, float))
        np.add.at(out, np.arange(base.size)[idx], g)
        return acc(dobj, out)
    if type(g) is _Dual and type(obj) is _NDARRAY and obj.dtype.kind in "fciub":
        # forward over reverse: a plain array of numbers' item (`B[:, :30]` of a constant) carries no derivative
        # of either pass (what derives from the inputs is a dual, and a dual stored into a plain array of
        # numbers is refused; an object array may hold duals): its cotangent is not wanted (as a plain array,
        # it could not hold the dual's: refused before)
        return dobj
    if type(obj) is _Dual:  # forward-over-reverse: scatter into a dual array of zeros
        out = np.zeros_like(obj)
        if is_basic_index(idx):
            out[idx] = out[idx] + g
        else:  # unbuffered: a position read twice (`x[[0, 0]]`) gets both cotangents
            np.add.at(out, np.asarray(idx) if type(idx) is list else idx, g)
        return acc(dobj, out)
    if (type(obj) is _NDARRAY and type(idx) is int and (type(g) is float or type(g) is _F8)
            and obj.dtype.kind == "f"):
        # an element read (`x[i]` in a loop): its cotangent is added in place to an array the session
        # made for x and nobody else holds, instead of a new array per read (which is quadratic)
        scatter = S.scatter
        own = scatter.get(id(obj)) if scatter is not None else None
        if own is not None and own[1] is dobj:
            dobj[idx] += g
            return dobj
        if dobj is None:
            acc_ = np.zeros(obj.shape, obj.dtype)
        elif type(dobj) is _NDARRAY and dobj.shape == obj.shape and dobj.dtype == obj.dtype:
            acc_ = dobj.copy()
        else:
            acc_ = None
        if acc_ is not None:
            acc_[idx] += g
            if scatter is None:
                scatter = S.scatter = {}
            scatter[id(obj)] = (obj, acc_)
            return acc_
    if type(obj) is not _NDARRAY and isinstance(obj, np.ndarray) and type(
            gi := getattr(type(obj), "__getitem__", None)) is types.FunctionType and not type(
            obj).__module__.startswith("numpy"):  # (np.matrix's and np.ma's: refused where met)
        # an ndarray subclass's own `__getitem__` (pyrr's `v[1]` of a Vector3 through its properties, a
        # subclass scaling what it reads): its code, re-run under AD (numpy's indexing's adjoint was taken)
        return _rerun_back(S, gi, obj, (idx,), g, dobj, boxed=True)[0]
    if type(obj) is _NDARRAY and obj.dtype == object and _one_position(idx, obj.ndim) and type(
            child := obj[idx]) in (list, dict):
        # an object array's list or dict (a LIL matrix's rows): its cotangent is its own box, where the adjoints
        # of its display and of its changes take it, and the array's cotangent holds that box (`_into_child`);
        # a copy of it beside the box counted twice
        cb = S.box(child, g)
        if dobj is None:
            dobj = np.full(obj.shape, None, dtype=object)
        elif not (type(dobj) is _NDARRAY and dobj.dtype == object and dobj.shape == obj.shape):
            return dobj  # (a cotangent of another kind: the child's in its box only)
        old = dobj[idx]
        if old is not None and old is not cb:
            S.box(child, old)
        dobj[idx] = cb
        return dobj
    if isinstance(obj, (np.ndarray, np.number, ArrayLeaf)):  # a numpy scalar too: `y[np.newaxis]`, `y[()]`
        if leaves.HOSTED and isinstance(obj, leaves.HOSTED):  # (a torch tensor, its index tensors: their values)
            obj, idx, g = leaves.hosted(obj), leaves.hosted(idx), leaves.hosted(g)
        rule = _rules.get((np.ndarray, "__getitem__"))
        if rule is not None and rule.adjoint is not None:
            return acc(dobj, rule.adjoint(g, None, obj, idx)[0])
        out = np.zeros(obj.shape, dtype=np.result_type(obj.dtype, np.asarray(g).dtype))
        np.add.at(out, idx, g)
        return acc(dobj, out)
    kind = type(obj)
    if kind is not list and kind is not tuple and kind is not dict and isinstance(obj, (list, tuple, dict)):
        # a subclass's own `__getitem__` (a dict of values in units converted on read), or `__missing__` (a
        # default computed from another entry): its code, re-run under AD (the item's was taken: 1 for 2, 0)
        gi = getattr(kind, "__getitem__", None)
        if type(gi) is types.FunctionType:
            refuse_storing_method(gi, "[]", kind)  # (run natively, what it stored carried no derivative)
            return _rerun_back(S, gi, obj, (idx,), g, dobj, boxed=True)[0]
        missing = getattr(kind, "__missing__", None)
        if isinstance(obj, dict) and type(missing) is types.FunctionType and not dict.__contains__(obj, idx):
            if runtime._may_differ(idx, 0):  # (the key's cotangent has nowhere to go: `Table()[x]`, gen21 W7)
                raise runtime.UnsupportedFunction(
                    f"reverse mode does not differentiate a {kind.__name__}'s __missing__ with respect to a "
                    "differentiated key", where=runtime._user_line(),
                    fix=f"call it by name (`obj.__missing__(key)`), or use forward mode (derivative, jvp)")
            return _rerun_back(S, missing, obj, (idx,), g, dobj, boxed=True)[0]
        if isinstance(obj, dict) and type(missing) is types.FunctionType:
            # found: maybe stored by `__missing__` itself (`self[key] = v`, a memo) when Python ran it natively
            # for this read, its value computed from the object's fields unrecorded (0 for 2)
            refuse_storing_method(missing, "[]", kind)
    if isinstance(obj, (list, tuple)):
        box = S.box(obj, dobj)
        if isinstance(idx, slice):
            if g is box:  # (`t[:]`, `t[0:len(t)]` of a tuple is the tuple: its cotangent is there already)
                return box
            for j, gj in zip(range(*idx.indices(len(obj))), g):
                if gj is not None:
                    box[j] = acc(box[j], gj)
        elif not _into_child(S, box, obj[idx], idx, g):
            box[idx] = acc(box[idx], g)
        return box
    if isinstance(obj, dict):
        box = S.box(obj, dobj)
        if not dict.__contains__(obj, idx):
            # (an entry deleted after the read by a way the reverse pass does not undo: `del f.l` of a function's
            # `__dict__`, gen18 C1: a KeyError here, and 0 had it been let through)
            raise runtime.UnsupportedFunction(
                f"reverse mode cannot differentiate an entry {idx!r} read from a dict (an object's or a "
                "function's `__dict__`) and deleted afterwards by `del` of the attribute",
                fix="leave the attribute in place, or keep the values in a dict of your own")
        if not _into_child(S, box, obj[idx], idx, g):
            box[idx] = acc(box.get(idx), g)
        return box
    gi = getattr(type(obj), "__getitem__", None)
    if type(gi) is types.FunctionType:  # (g, a new object's box, as the re-run's new object's: xarray's `da[1:]`)
        # (under an outer forward pass the recording ran it natively on duals, where `isinstance(r,
        # np.ndarray)` is False: gen7's Y2, a Hessian of zeros)
        outer_forward(obj, g, "__getitem__")
        # (Python ran it natively: a lazy cache it filled, `self.cache[i] = ...`, holds a value computed
        # unrecorded, which a later read took for a constant: 0 for 4)
        refuse_storing_method(gi, "[]", type(obj))
        return _rerun_back(S, gi, obj, (idx,), g, dobj, boxed=True)[0]
    if isinstance(gi, property) and has_fields(obj):
        # a property returning the callable (ASE's `arraylike`: `__getitem__ = property(lambda s: s.array.__getitem__)`)
        return _rerun_back(S, _subscript_of_field, obj, (idx, _item_field(obj)), g, dobj, boxed=True)[0]
    if gi is not None and runtime.descriptor_dunder(type(obj), "__getitem__"):  # (multipledispatch's)
        return _rerun_back(S, runtime.dunder_call, obj, ("__getitem__", idx), g, dobj, boxed=True)[0]
    box = S.box(obj, dobj)
    if type(box) is MapBox:  # a read-only view of a dict (`types.MappingProxyType`): by key
        box[idx] = acc(box.get(idx), g)
    elif isinstance(box, list) and isinstance(idx, int):
        if idx >= len(box):
            box.extend([None] * (idx + 1 - len(box)))
        box[idx] = acc(box[idx], g)
    elif g is not None:  # a C container the box cannot hold by this index: refused where it is used
        return NoClosedForm(f"{type(obj).__name__}.__getitem__", "the container read",
                            fix="read the values from a list, tuple, dict or array").cotangent()
    return box


def _subscript_of_field(obj, idx, field):
    """`obj[idx]` where type(obj).__getitem__ is a property giving a field's own `__getitem__` (ASE's
    `arraylike`): re-run as `obj.<field>[idx]`."""
    return getattr(obj, field)[idx]


def _assign_to_field(obj, idx, v, field):
    """`obj[idx] = v` where type(obj).__setitem__ is a property giving a field's own: `obj.<field>[idx] = v`."""
    getattr(obj, field)[idx] = v


def _item_field(obj, method: str = "__getitem__") -> str:
    """The field of obj whose own `method` (`__getitem__`, `__setitem__`) obj's gives (type(obj)'s is a
    property, not a function: ASE's `arraylike` wraps an array so), or refused."""
    owner = getattr(getattr(obj, method, None), "__self__", None)
    for name, value in fields_of(obj).items():
        if value is owner and owner is not None and type(name) is str:
            return name
    raise runtime.UnsupportedFunction(
        f"reverse mode cannot differentiate {type(obj).__name__}'s {method}: it is a "
        f"{type(getattr(type(obj), method)).__name__}, not a function, and gives no field's own",
        where=runtime._user_line(), fix=f"index the array it holds (`obj.array[i]`), or define {method} as a method")


def _into_child(S, box, child, idx, g) -> bool:
    """A list or dict read out of a container (`t['a']`, `rows[0]`) keeps its cotangent in its own box,
    where the adjoints of its own changes (`t['a'].append(v)`) look for it; the parent's entry is that
    box. False for any other element."""
    if type(child) is not list and type(child) is not dict:
        return False
    cb = S.box(child, g)
    old = box.get(idx) if hasattr(box, "get") else box[idx]
    if old is not None and old is not cb:
        S.box(child, old)
    box[idx] = cb
    return True


def loop_item_adj(S, dit, g, itv, i, it):
    """A `for` loop item's cotangent: into the box of the list or tuple looped over, at its position, where
    an in-place change of a later item sharing its memory finds it (`for w in [a, a]: w *= 2`: the second
    change's cotangent, parked in the loop's iterator, was lost to the first, 2 for 4); the iterator's
    box (`getitem_adj`) for anything else."""
    if (type(it) is list or type(it) is tuple) and itv is not it:
        box = S.box(it)
        if not _into_child(S, box, it[i], i, g):
            box[i] = acc(box[i], g)
        return dit
    if type(it) is _NDARRAY and it.dtype == object and it.ndim == 1 and type(it[i]) in (list, dict):
        # (an object array's list: its cotangent its box, held by the array's as `getitem_adj` holds it)
        return getitem_adj(S, dit if dit is not None else np.full(it.shape, None, dtype=object), g, it, i)
    return getitem_adj(S, dit, g, itv, i)


def loop_box(S, dit, it):
    """After a `for` loop's adjoint: the cotangent of the list or tuple looped over is its box, which holds
    its items' (`loop_item_adj`), with dit merged in. Also a new list's, made by a slice or an operator
    (`w = base[:]`, `base * 1`, `base + []`): what was written through another name for it (a shallow
    copy's entry, `d = copy.copy({'w': w}); d['w'][1] = x`) is in its box, not with the variable (gen16
    W2b: 0.7 for 1.4)."""
    if (type(it) is list or type(it) is tuple) and id(it) in S.boxes:
        return S.box(it, dit)
    if dit is None:  # (an object an operator made: `D(self.r * o.r)` of a dataclass, pkH W2, W3: 0 for 2)
        return object_box(S, it)
    return dit


def object_box(S, v):
    """The box of v, an object of fields, where the pass holds one, or None: an outer operator's re-run puts
    its result's fields' cotangents into the boxes of the objects they are (`_as_box_of`), where no variable
    carries them; the store or the operator that made such an object reads them there."""
    return S.boxes.get(id(v)) if _object_field(v) else None


def display_adj(S, g, t):
    """A list, tuple or dict display's cotangent: its box (which may hold cotangents no variable carries)."""
    return S.boxes.get(id(t)) if g is None else S.box(t, g)


def kw_spread(m, g):
    """The cotangent of m, spread as keyword arguments (`f(**m)`): g, by key; refused where m is a mapping
    whose own __getitem__ reads its entries (gen16 W3: lost, 0.7 for 1.4)."""
    own_mapping_refused(m, g)
    return g


def dict_parts(gd, parts):
    """The cotangents of a dict display's entries `{k: v, **m, ...}` (parts: (is_spread, key or mapping)
    in order) from the dict's cotangent gd: a key's cotangent goes to its last write only."""
    out = [None] * len(parts)
    seen = set()
    for i in range(len(parts) - 1, -1, -1):
        spread, p = parts[i]
        if spread:
            keys = list(p.keys())
            out[i] = {k: gd[k] for k in keys if k not in seen and gd.get(k) is not None} or None
            own_mapping_refused(p, out[i])  # (its entries read by its own code: no cotangent by key)
            seen.update(keys)
        else:
            if p not in seen:
                out[i] = gd.get(p)
            seen.add(p)
    return out


def cell_cot(g, name, strip=()):
    """The cotangent of captured variable `name` in a closure's cotangent g; with name None, g without
    the variables in `strip` (those already handed back to the caller). A closure's `Refused` cotangent
    refuses here: the variable read is differentiated."""
    if type(g) is Refused and name is not None:
        g.refuse()
    if name is None:
        if not isinstance(g, dict):
            return g
        rest = Tangent({k: v for k, v in g.items() if k not in strip})
        return rest if any(v is not None for v in rest.values()) else None
    if type(name) is tuple:  # ('__defaults__', i) or ('__kwdefaults__', name): a default value's
        part = cell_cot(g, name[0])
        if part is None:
            return None
        return part.get(name[1]) if isinstance(part, dict) else part[name[1]]
    return g.get(name) if isinstance(g, dict) else getattr(g, name, None)


def slice_cot(S, gs, offset, x):
    n = len(x)
    part = list(gs[offset:offset + n]) if gs is not None else [None] * n
    part += [None] * (n - len(part))
    return tuple(part) if isinstance(x, tuple) else SeqBox(part) if isinstance(x, list) else part


class _SetByCode:
    """What `obj.attr = v` left when Python code of obj's class did the store (a property's setter, a
    descriptor's `__set__`, a class's `__setattr__`): that code's pullback, and where obj's and v's
    cotangents come back (obj at None: it was the code's `self`)."""
    __slots__ = ("pb", "obj_at", "v_at")

    def __init__(self, pb, obj_at, v_at: int):
        self.pb, self.obj_at, self.v_at = pb, obj_at, v_at


def _store_code(obj, attr, v):
    """(function, self, arguments, obj's index among them or None, v's index) of the Python code that runs
    `obj.attr = v`, or None where Python stores it itself (an instance dict, a slot)."""
    cls = type(obj)
    if type(getattr(cls, "__setattr__", None)) is types.FunctionType:
        return cls.__setattr__, obj, (attr, v), None, 1
    for klass in cls.__mro__:
        desc = klass.__dict__.get(attr, _MISSING)
        if desc is _MISSING:
            continue
        if isinstance(desc, property):
            return (desc.fset, obj, (v,), None, 0) if type(desc.fset) is types.FunctionType else None
        desc_set = getattr(type(desc), "__set__", None)
        if type(desc_set) is types.FunctionType:
            return desc_set, desc, (obj, v), 0, 1
        return None
    return None


def setattr_(obj, attr, v, active=True):
    if active and isinstance(obj, (type, types.ModuleType)) and runtime._may_differ(v, 0):
        # read back through the class (or its instances) or the module, the value is a constant to reverse
        # mode (a class's attributes are its code's constants): the derivative would be lost
        what = "class" if isinstance(obj, type) else "module"
        raise runtime.UnsupportedFunction(
            f"reverse mode cannot store a differentiated value into the {what} attribute "
            f"{getattr(obj, '__name__', what)}.{attr}: reads of it would not carry the derivative",
            where=runtime._user_line(),
            fix="keep the value on an instance (`self.x = ...`) or pass it as an argument; forward mode "
                "(`contexts.derivative`, `jvp`) follows it")
    if active:  # (a read of obj as a module's constant after this is refused: `global_read`)
        ATTRIBUTE_CHANGE[id(obj)] = ATTRIBUTE_CHANGED[0] = next(TICKS)
    if attr == "__dict__" and v is obj and isinstance(obj, dict) and not own_dict(obj):
        # (a dict whose instance dict becomes itself, `self.__dict__ = self`: statsmodels' and sklearn's
        # Bunch. Its attributes are its items from then on, one box for both: the store as Python makes it;
        # undone by setting the empty dict it had back)
        old = own_dict(obj)
        setattr(obj, attr, v)
        return old
    if attr == "__dict__" and own_dict(obj) is not None and not isinstance(obj, (type, types.ModuleType)):
        # (its fields' cotangents are the object's box, by attribute: a new dict's values were constants, 0)
        raise runtime.UnsupportedFunction(
            f"reverse mode does not differentiate replacing a {type(obj).__name__}'s __dict__ wholesale",
            where=runtime._user_line(), fix="update it instead (`obj.__dict__.update(d)`, `vars(obj).update(d)`), "
                                            "or set the attributes one by one; forward mode follows it")
    if attr == "__class__" and not isinstance(obj, (type, types.ModuleType)):
        old = type(obj)  # (the class is no field: undone by setting it back, not by deleting it)
        setattr(obj, attr, v)
        return old
    if attr in ("real", "imag") and (type(obj) is np.ndarray and obj.dtype.kind in "fc" or type(obj) is _Dual):
        # the store of the whole array it is, as code (`stand_ins.store_part`): recorded
        _, pb = _twin(store_part, obj, attr, v)
        return _SetByCode(pb, None, 1)
    if attr in _VALUE_SETTERS and (isinstance(obj, np.ndarray) and obj.dtype.kind in "fc" or type(obj) is _Dual):
        # (numpy writes the values in C: `Z.real = q * x` in lenstronomy's EPL was a store of no derivative, 0)
        fix = ("assign the values: `a[...] = x` (`np.resize(x, a.shape)` for a shorter x)" if attr == "flat" else
               "build the complex array from its parts: `Z = re + 1j * im`")
        raise runtime.UnsupportedFunction(
            f"reverse mode does not differentiate a store into an array's .{attr}", where=runtime._user_line(),
            fix=fix)
    if isinstance(obj, dict) and _class_attribute(type(obj), "__setattr__") is _DICT_SETITEM:
        # `__setattr__ = dict.__setitem__` (scipy's OptimizeResult, attribute dicts): an item's store
        return _ItemStore(setitem(obj, attr, v))
    code = _store_code(obj, attr, v) if type(obj) not in _C_LEVEL else None
    if code is not None:  # the class's own code stores it: its twin runs, so what it writes is recorded
        fn, self_, args, obj_at, v_at = code
        if active:
            _, pb = _twin(fn, self_, *args)
        else:  # (a constant stored: the setter's twin with its value a constant, geomdl's `curve.knotvector =
            # [...]` normalised by text; taken for differentiated, its parse was refused)
            _, pb = runtime._twin_call(sum(1 << i for i in range(len(args)) if i != v_at), fn, (self_,), args, _NOKW)
        return _SetByCode(pb, obj_at, v_at)
    held = getattr(type(obj), attr, None)
    if own_dict(obj) is not None and type(held) is not types.MemberDescriptorType and not (
            held is not None and hasattr(type(held), "__set__") and not isinstance(held, property)):
        old = obj.__dict__.get(attr, _MISSING)
        _stored(obj, attr, v)
    elif type(held) is types.MemberDescriptorType:  # a slot (perhaps of a base class of a class with a __dict__),
        try:                                         # read by the slot itself: an unset one is not asked of the
            old = held.__get__(obj, type(obj))       # class's `__getattr__`, which may read it again (euclid3)
        except AttributeError:
            old = _MISSING
    else:  # a C type's field (`c_double().value`)
        old = getattr(obj, attr, _MISSING)
    setattr(obj, attr, v)
    return old


_VALUE_SETTERS = frozenset({"real", "imag", "flat", "dtype", "strides"})  # an array's attributes whose store
# writes its values or reads its bytes anew


def global_store(name):
    """Before `name = v` of a differentiated v into a module global (`global name`), where it runs: refused
    (the global is read elsewhere, by code no recording follows)."""
    raise runtime.UnsupportedFunction(
        f"reverse mode does not differentiate a differentiated value stored into the module global {name} "
        "(`global` statement)", where=runtime._user_line(), fix="pass it as an argument or return it instead")


def global_read(v, where: str) -> None:
    """Before a read the activity analysis took for a constant of a module global that holds state (a list,
    dict, set, array or object: `STORE`, `cfg.STORE`, or a local bound to one): refused where this recording
    changed it (or a container or object it holds directly) in place. Its module's code does not change
    it, so the analysis cannot see the change, made by another module's code (`helper.put(x)` storing into
    `cfg.STORE`, then `cfg.STORE["w"]` read here): what was stored is read back without its derivative (0)."""
    start = RECORDING_START[0]
    if _nothing_changed(start) or not _may_hold_state(v):  # (the common case; a number, a module read through)
        return
    if not _changed_since(v, start):
        held = v.values() if type(v) is dict else v if type(v) is list else getattr(v, "__dict__", None)
        if type(held) is dict:
            held = held.values()
        if held is None or type(v) is np.ndarray or len(held) > 64 or not any(
                _changed_since(u, start) for u in held if _may_hold_state(u)):
            return
    raise runtime.UnsupportedFunction(
        f"reverse mode cannot differentiate {where}: shared state (a module's, a class's, or one a function "
        "holds) changed in place while differentiating, by code other than its own module's, and read here, "
        "where the analysis takes it for a constant: what was stored would come back without its derivative",
        where=runtime._user_line(),
        fix="pass the value as an argument or return it instead of keeping it in shared state; forward mode "
            "(`contexts.derivative`, `jvp`) follows it")


def state_call(key: int) -> None:
    """Before a call left as Python of a function reading module state (`codegen.STATE_READS[key]`): refused
    where this recording changed that state in place (`global_read`'s test), read back by the callee
    without its derivative (`helper.put(x)`, then `get()` returning `cfg.STORE["w"]`: 0)."""
    if _nothing_changed(RECORDING_START[0]):
        return
    from .codegen import STATE_READS
    for holder, name in STATE_READS.get(key, ()):
        if holder is None:  # (an object a default holds)
            v, where = name, "a call reading state its function's default holds"
        elif type(holder) is dict:
            v, where = holder.get(name), f"a call reading the module state {name}"
        else:  # (a cell)
            try:
                v = holder.cell_contents
            except ValueError:
                continue
            where = "a call reading state its function's closure holds"
        if v is not None:
            global_read(v, where)


def _nothing_changed(start: int) -> bool:
    """Nothing was changed in place, nor an attribute stored, since the stamp start."""
    return CHANGES[0] <= start and ATTRIBUTE_CHANGED[0] <= start


def _may_hold_state(v) -> bool:
    """v has state of its own a change stamps (`codegen.holds_state`), or is a function (its attributes)."""
    return type(v) is types.FunctionType or holds_state(v)


def _changed_since(v, start: int) -> bool:
    return (LAST_CHANGE.get(id(bottom(v) if isinstance(v, np.ndarray) else v), 0) > start
            or ATTRIBUTE_CHANGE.get(id(v), 0) > start)


def delattr_(obj, attr):
    """`del obj.attr` of an object holding differentiated values: (the value deleted). A class's own
    `__delattr__` or a property's deleter (code that may do anything) is refused."""
    cls = type(obj)
    descriptor = type(getattr(cls, attr, None))
    if type(getattr(cls, "__delattr__", None)) is types.FunctionType or (
            hasattr(descriptor, "__delete__") and descriptor is not types.MemberDescriptorType):
        raise runtime.UnsupportedFunction(
            f"reverse mode does not differentiate `del {cls.__name__}.{attr}` run by the class's own code (its "
            f"`__delattr__`, a property's deleter)", where=runtime._user_line(),
            fix="set the attribute to a new value instead of deleting it")
    old = own_dict(obj)[attr] if attr in (own_dict(obj) or ()) else getattr(obj, attr)
    delattr(obj, attr)
    return old


def delattr_adj(S, dobj, obj, attr, old):
    """The cotangent of obj before `del obj.attr`: what reads after it held for that name was the class
    attribute's it uncovered (a constant to reverse mode), dropped; the deleted value is put back."""
    box = S.box(obj, dobj)
    if isinstance(box, dict):
        box.pop(attr, None)
    setattr(obj, attr, old)
    S.redo(delattr, obj, attr)
    return box


def _restore_attr(obj, attr, old):
    if old is _MISSING:
        try:
            _delete_again(obj, attr)
        except AttributeError:
            pass
        except TypeError:  # a class's own slot (`cls.__qualname__ = ...` in namedtuple): kept, as it is metadata
            if not _class_metadata(obj, attr):
                raise
        entry = stores().get(id(obj))
        if entry is not None and entry[0] is obj:
            entry[1].pop(attr, None)
    else:
        try:
            _set_again(obj, attr, old)
        except TypeError:
            if not _class_metadata(obj, attr):
                raise
        entry = stores().get(id(obj))
        if entry is not None and entry[0] is obj and attr in entry[1]:
            entry[1][attr] = old


def _class_metadata(obj, attr) -> bool:
    """`cls.__qualname__`, `fn.__qualname__` and the like: a class's or function's own slot, which takes
    only its kind of value (not the record's old one: deleting it is refused) and carries no derivative."""
    return isinstance(obj, (type, types.FunctionType)) and attr.startswith("__") and attr.endswith("__")


class _ItemStore(tuple):
    """`setattr_`'s record of a store that is an item's (a dict subclass whose `__setattr__` is
    `dict.__setitem__`): `(setitem's record,)`."""

    def __new__(cls, old):
        return tuple.__new__(cls, (old,))


_DICT_SETITEM = dict.__setitem__


def setattr_views(u, obj, others, since):
    """After `obj.attr = v` that changed arrays in place: where the class's code did the store (a property's
    setter: `u` a `_SetByCode`), the arrays obj holds that it changed and `others` share (`_held_changed`)."""
    if type(u) is not _SetByCode or u.obj_at is not None:
        return None
    return _held_changed(obj, others, since)


def setattr_merge(S, kept, dobj, douts):
    """Before such a store's adjoint: the views' cotangents of the arrays obj holds in obj's box (`call_viewed`)."""
    holder, entries = kept
    return S.box(holder, dobj), _held_into_boxes(S, entries, douts)


def _held_into_boxes(S, entries, douts):
    """The views' cotangents of the arrays `_held_changed` found (owner, field or key, views' entries) moved
    into their owners' boxes; returns the views' cotangents left."""
    for owner, key, found in entries:
        box = S.box(owner)
        if isinstance(box, list):  # (a list's box, a SeqBox: its items' cotangents by position)
            box.extend([None] * (key + 1 - len(box)))
            box[key], douts = views_merge(found, box[key], douts, S)
        else:
            box[key], douts = views_merge(found, box.get(key), douts, S)
    return douts


def setattr_adj(S, dobj, obj, attr, old):
    if type(old) is _ItemStore:
        return setitem_adj(S, dobj, obj, attr, None, old[0])
    if type(old) is _SetByCode:
        if old.pb is None:
            return dobj, None
        if old.obj_at is None:  # obj was the code's self: its cotangent after the store flows in
            dobj, dargs = _pull(S, old.pb, None, dobj)
        else:  # (a descriptor's __set__: obj is an argument; its cotangent after the store is held by S)
            box = S.box(obj, dobj)
            dobj = acc(box, (dargs := _pull(S, old.pb, None)[1])[old.obj_at])
        return dobj, dargs[old.v_at]
    _check_container_field(obj, attr)
    if isinstance(obj, np.ndarray) and not isinstance(dobj, dict):
        return _array_setattr_adj(S, dobj, obj, attr, old)
    box = S.box(obj, dobj)
    gv = box.pop(attr, None) if isinstance(box, dict) else None
    # (the value stored, read past a `__getattribute__` of the class's own: its code ran again here, on an
    # object the reverse pass has half restored, and its side effects with it: gen16 C2)
    again = _setattr_stored
    try:
        new = (object.__getattribute__(obj, attr) if type(getattr(type(obj), "__getattribute__", None))
               is types.FunctionType else getattr(obj, attr))
    except AttributeError:  # deleted after the store by a way the reverse pass does not undo: natively (a
        # `@contextmanager`'s generator, run natively around a `with` body: sklearn's fit deletes
        # `_skl_callbacks_to_teardown` there). Where the value stored, the one the recording noted last
        # (`_stored`), carries no derivative (an empty list), only the state matters: the attribute is deleted
        # again when the pass ends. Refused where none was noted, or where it may carry one (`del f.cache` of a
        # function's attribute holding `[x]`, gen18 C2: its cotangent was lost, 0 for 2)
        entry = stores().get(id(obj))
        if entry is None or entry[0] is not obj or attr not in entry[1] or runtime._may_differ(entry[1][attr], 0):
            raise runtime.UnsupportedFunction(
                f"reverse mode cannot differentiate the attribute {attr!r} stored on a {type(obj).__name__} and "
                "deleted afterwards by `del`",
                fix="leave the attribute in place, or keep the values in a dict of your own") from None
        new, again = entry[1][attr], _deleted_again
    if gv is None:  # (the stored object's cotangent in its own box: `W(self.r * o.r)`, pkH W1: 0 for 2)
        gv = object_box(S, new)
    _restore_attr(obj, attr, old)
    S.redo(again, obj, attr, new)
    return box, gv


def _deleted_again(obj, attr, v) -> None:
    """The redo of a store whose attribute was deleted natively after it (`setattr_adj`): deleted again."""
    _stored(obj, attr, v)
    try:
        _delete_again(obj, attr)
    except AttributeError:
        pass


def _array_setattr_adj(S, dobj, obj, attr, old):
    """`obj.attr = v` on an ndarray subclass's instance (python-control's NamedSignal labels): the cotangent
    of its values, dobj, an array, passes through; v's is what reads of .attr after the store left in obj's
    box by name. Cotangents of its other attributes still in the box could not travel with the array's:
    refused (they would be dropped)."""
    box = S.boxes.get(id(obj))
    gv = box.pop(attr, None) if isinstance(box, dict) else None
    if isinstance(box, dict) and any(g is not None for g in box.values()):
        # (another attribute's cotangent: its own store's adjoint takes it, earlier in the object's life, as
        # ahrs' Quaternion stores `.A` then `.scalar_vector`; one no store takes is refused when the pass ends)
        S.redo(attributes_left, obj)
    new = getattr(obj, attr)
    _restore_attr(obj, attr, old)
    S.redo(_setattr_stored, obj, attr, new)
    if attr == "shape" and dobj is not None and not isinstance(dobj, dict):
        # `r.shape = (3,)`, a reshape in place (skyfield's propagate): the cotangent in the old shape (it
        # was broadcast against it: three times the gradient of an (3, 1) array)
        dobj = np.reshape(dobj, old)
    return dobj, gv


def _is_array(obj) -> bool:
    """An ndarray, or (forward over reverse) a dual array, or a dask array: stored into element by element."""
    return (isinstance(obj, np.ndarray) or type(obj) is _Dual and bool(obj.shape)
            or isinstance(obj, ArrayLeaf))


def _copy(x):
    """A copy of an array (or a dual array's value and tangent; a dask array's, lazily), never a view."""
    if type(x) is _NDARRAY:
        return np.array(x, copy=True)
    if type(x) is _Dual:
        return np.copy(x)
    return x.copy() if isinstance(x, ArrayLeaf) else np.array(x, copy=True)


def module_namespace(d) -> bool:
    """d is a module's `__dict__` (`globals()`, `vars(sys.modules[__name__])`, `f.__globals__`)."""
    module = sys.modules.get(d.get("__name__")) if type(d.get("__name__")) is str else None
    return module is not None and getattr(module, "__dict__", None) is d


def setitem(obj, idx, v):
    changed(obj)  # (a caller's `__od_call_views__` sees the change of its argument)
    if type(obj) is np.flatiter:
        raise runtime.UnsupportedFunction(
            "reverse mode does not differentiate assignments through `x.flat`",
            fix="assign through an index of x (`x[np.unravel_index(i, x.shape)] = v`), or through "
                "`x.reshape(-1)` of a contiguous x")
    if leaves.HOSTED and isinstance(obj, leaves.HOSTED):
        raise runtime.UnsupportedFunction(
            f"reverse mode does not differentiate a {type(obj).__name__} changed in place (`t[i] = v`)",
            where=runtime._user_line(),
            fix="build a new tensor instead (torch.where(mask, v, t), torch.cat), or compute on numpy arrays")
    if (type(obj) is not np.ndarray and isinstance(obj, np.ndarray) and type(obj) is not _Dual
            and type(setter := getattr(type(obj), "__setitem__", None)) is types.FunctionType):
        # an ndarray subclass's own `__setitem__` (diffpy's Cartesian coordinates writing through to their atom,
        # a subclass scaling what it stores): its code, recorded (taken for ndarray's: 0 for 1, pkJ W1)
        _, pb = _twin(setter, obj, idx, v)
        return _SetByCode(pb, None, 1)
    if _is_array(obj) and converted_by_numpy(v) and obj.dtype.kind != "O":
        _, pb = _twin(_converted_then_stored, obj, idx, v)
        return _SetByCode(pb, None, 1)
    if _is_array(obj):
        if getattr(obj.dtype, "names", None) is not None and runtime._may_differ(v, 0):
            raise runtime.UnsupportedFunction(
                "reverse mode does not differentiate values stored into a structured array (a dtype with "
                "fields, records: np.rec.fromarrays)", where=runtime._user_line(),
                fix="keep the fields as separate arrays (or a dict of arrays)")
        old = _copy(obj[idx])
        if type(obj) is not _Dual and type(v) is _Dual and obj.dtype.kind != "O":  # (an object array holds it)
            raise runtime.UnsupportedFunction(
                "forward over reverse (hessian, hvp) stores a perturbed value into an array that has no "
                "tangent",
                fix="make the array from the input so it carries one: `np.zeros_like(x, shape=...)`, "
                    "`x * 0.0`, `x.copy()`")
        if _indexes_itself(obj, idx):  # `I[I] = False` (pyromat's Newton loop): the store changes its own
            old = _OwnIndex((old, _index_copy(idx)))  # index, which the adjoint needs as it was
    elif type(setter := getattr(type(obj), "__setitem__", None)) is types.FunctionType:
        # the class's own `__setitem__` (UserDict, a mapping keeping its values elsewhere, a dict subclass
        # checking the key and keeping a table of the values beside: lmfit's Parameters, whose table's
        # derivative was lost where it ran natively): its twin runs, so what it stores, and how, is recorded
        _, pb = _twin(setter, obj, idx, v)
        return _SetByCode(pb, None, 1)
    elif isinstance(obj, dict):
        if type(obj) is dict and "__name__" in obj and runtime._may_differ(v, 0) and module_namespace(obj):
            # (`globals()['G'] = x * x` then `G` read by name: a constant, 0 for 2.8, gen21 W10)
            raise runtime.UnsupportedFunction(
                f"reverse mode cannot store a differentiated value into a module's namespace ({idx!r}): reads of "
                "the global by name would not carry the derivative", where=runtime._user_line(),
                fix="keep the value in a dict of your own or pass it as an argument; forward mode (`derivative`, "
                    "`jvp`) follows it")
        old = obj.get(idx, _MISSING)
    elif type(idx) is slice and isinstance(obj, list) and runtime.iterated_by_python(v):
        # `l[i:j] = obj` of an object whose class iterates in Python: its items drawn as code first (natively
        # its `__iter__` ran unrecorded: 0 for 2.96, silently)
        _, pb = _twin(runtime.drawn_store, obj, idx, v)
        return _SetByCode(pb, None, 1)
    elif type(idx) is slice and isinstance(obj, list) and idx.step in (None, 1):
        return _set_list_slice(obj, idx, v)
    elif isinstance(setter, property) and has_fields(obj):
        # a property giving a field's own `__setitem__` (ASE's `arraylike`): recorded as the store into it
        _, pb = _twin(_assign_to_field, obj, idx, v, _item_field(obj, "__setitem__"))
        return _SetByCode(pb, None, 1)
    else:
        old = obj[idx]
    obj[idx] = v
    return old


class _ListSlice(tuple):
    """What `obj[a:b] = v` on a list replaced: (the old items, start, the number of new items) — the new
    items may be more or fewer than the old (`ps[i:] = ()`, `ps[1:1] = [x, y]`)."""


def _set_list_slice(obj, idx, v):
    n_before = len(obj)
    start, stop, _ = idx.indices(n_before)
    old = obj[idx]
    obj[idx] = v
    return _ListSlice((old, start, len(obj) - n_before + len(old)))


def _list_slice_adj(S, dobj, obj, idx, done, v):
    """The adjoint of `obj[a:b] = v` on a list: v's cotangent is that of the new items, which the old
    ones (and their empty cotangents) then replace again."""
    old, start, n_new = done
    box = S.box(obj, dobj)
    box.extend([None] * (len(obj) - len(box)))
    where = slice(start, start + n_new)
    gv = list(box[where])
    box[where] = [None] * len(old)
    new = obj[where]
    obj[where] = old
    S.redo(operator.setitem, obj, idx, new)
    return box, _items_cot(gv, v)


def _items_cot(gv: list, v):
    """The cotangent of v, whose items a list's slice store took (gv: theirs): an array's (`l[1:] /= s`,
    trimesh's `shear[1:] /= scale[2]`, makes one) is an array, zeros for the items that got none."""
    if not _is_array(v) or len(v) != len(gv):
        return gv
    if all(c is None for c in gv):
        return None
    return np.stack([np.zeros(np.shape(v[i])) if c is None else np.asarray(c) for i, c in enumerate(gv)])


def _restore_item(obj, idx, old):
    if old is _MISSING:
        del obj[idx]
    else:
        obj[idx] = old


class _OwnIndex(tuple):
    """What `a[idx] = v` replaced where idx is (or holds) an array sharing a's memory: (a[idx] before, idx
    before)."""


def _indexes_itself(obj, idx) -> bool:
    if type(idx) is tuple:
        return any(_indexes_itself(obj, i) for i in idx)
    return isinstance(idx, np.ndarray) and type(obj) is not _Dual and np.may_share_memory(obj, idx)


def _index_copy(idx):
    """idx with its arrays copied."""
    if type(idx) is tuple:
        return tuple(_copy(i) if isinstance(i, np.ndarray) else i for i in idx)
    return _copy(idx)


def setitem_adj(S, dobj, obj, idx, v, old):
    if type(old) is _OwnIndex:
        old, idx = old
    if type(old) is _SetByCode:
        if old.pb is None:
            return dobj, None
        dobj, dargs = _pull(S, old.pb, None, dobj)
        if dargs[0] is not None:
            raise runtime.UnsupportedFunction(
                f"{type(obj).__name__}.__setitem__ computed with its differentiated key: reverse mode does "
                f"not hand a key's cotangent back", where=runtime._user_line(),
                fix="compute with the key outside the store (`obj[k] = f(k)`)")
        return dobj, dargs[1]
    if _is_array(obj):
        gv = None
        if dobj is not None:
            dobj = _copy(dobj)
            part = _copy(dobj[idx])  # not a view: dobj[idx] is zeroed next
            if not is_basic_index(idx) and not (type(idx) is np.ndarray and idx.dtype == bool):
                # an advanced index repeating a position: the last write wins, the others pass nothing
                part = part * last_write_mask(dobj.shape, np.asarray(idx) if type(idx) is list else idx)
            if obj.dtype.kind in "biu":  # (an array of integers keeps v's values cut to steps: derivative 0,
                gv = None                 # gen17 W1)
            elif (obj.dtype == object and (type(v) is list or type(v) is dict) and _one_position(idx, obj.ndim)
                  and dobj[idx] is S.boxes.get(id(v))):
                gv = None  # (an object array's list: its cotangent is its box, which the list's display takes)
            elif _is_array(v):
                gv = generic.unbroadcast(part, v)
            elif generic.sequence_of_items(v):  # (`A[[0, 1]] = [a, b]`: each item's, as a list; a named tuple's)
                gv = _as_items(generic.unbroadcast(part, np.asarray(v)), v)
            else:
                gv = _scalar_cot(part, v)
            dobj[idx] = 0
        new = _copy(obj[idx])
        if not isinstance(obj, np.ndarray) or obj.flags.writeable:  # (a dask array, a dual: no flags)
            obj[idx] = old
            S.redo(operator.setitem, obj, idx, new)
        else:  # (made read-only after the store)
            write_into(obj, idx, old)
            S.redo(write_into, obj, idx, new)
        return dobj, gv
    if type(old) is _ListSlice:
        return _list_slice_adj(S, dobj, obj, idx, old, v)
    box = S.box(obj, dobj)
    if isinstance(obj, dict):
        gv = box.pop(idx, None)
    elif isinstance(idx, slice):
        js = list(range(*idx.indices(len(obj))))
        gv = [box[j] for j in js]
        for j in js:
            box[j] = None
        gv = _items_cot(gv, v)
    else:
        gv = box[idx]
        box[idx] = None
    if isinstance(obj, dict) and idx not in obj:  # (removed since, by code the recording did not see: a
        return box, gv                             # `logging` cache cleared when pyswarms configures logging)
    new = obj[idx]
    _restore_item(obj, idx, old)
    S.redo(operator.setitem, obj, idx, new)
    return box, gv


def _as_items(g, v):
    """The cotangent g (an array of v's shape) of a list or tuple v, as a list of its items' (nested)."""
    if generic.sequence_of_items(v):
        return [_as_items(g[i], item) for i, item in enumerate(v)]
    return _scalar_cot(g, v) if not _is_array(v) else g


def _scalar_cot(g, v):
    if (isinstance(g, np.ndarray) or type(g) is _Dual) and g.ndim > 0:  # (a dual's too: under hessian, a
        g = g.sum()                                                    # number stored into a slice)
    if type(g) is _NDARRAY and g.dtype == object and g.ndim == 0:
        # an object array's element: its cotangent itself (a Tangent of the fields of an object stored in
        # it, `a[i] = Box(t)`; in a 0-d array the constructor's pullback found no fields: 0 for 6)
        g = g[()]
    if isinstance(v, (float, np.floating)) and isinstance(g, (complex, np.complexfloating, np.ndarray)) and \
            np.iscomplexobj(g):  # (a real number stored into a complex array: its cotangent the real part)
        g = g.real
    if isinstance(v, float) and isinstance(g, (np.floating, np.ndarray)):
        return float(g)
    return g


def delitem(obj, idx):
    if type(deleter := getattr(type(obj), "__delitem__", None)) is types.FunctionType:
        if runtime._may_differ(idx, 0):  # (its pullback has no way back for a key it stored: refused first)
            refuse_storing_method(deleter, "del", type(obj))
        _, pb = _twin(deleter, obj, idx)  # the class's own code (UserDict's): recorded, so undone in reverse
        return _SetByCode(pb, None, 0)
    changed(obj)
    old = obj[idx]
    del obj[idx]
    return old


def delitem_adj(S, dobj, obj, idx, old):
    if type(old) is _SetByCode:
        if old.pb is None:
            return dobj
        dobj, dargs = _pull(S, old.pb, None, dobj)
        if dargs and dargs[0] is not None:  # (`del obj[x]` whose method stored x: its cotangent has no way back)
            raise runtime.UnsupportedFunction(
                f"{type(obj).__name__}.__delitem__ computed with its differentiated key: reverse mode does not "
                f"hand a key's cotangent back", where=runtime._user_line(),
                fix="compute with the key outside the deletion, or use forward mode (jacfwd, derivative)")
        return dobj
    box = S.box(obj, dobj)
    if isinstance(obj, list) and isinstance(idx, int):
        box.insert(idx if idx >= 0 else len(box) + idx + 1, None)
        obj.insert(idx if idx >= 0 else len(obj) + idx + 1, old)
        S.redo(operator.delitem, obj, idx)
    elif isinstance(obj, list) and isinstance(idx, slice):
        # the deleted items back at their places (in increasing order, each insert puts the next in place)
        box.extend([None] * (len(obj) - len(box)))
        for j, item in sorted(zip(range(*idx.indices(len(obj) + len(old))), old), key=lambda p: p[0]):
            box.insert(j, None)
            obj.insert(j, item)
        S.redo(operator.delitem, obj, idx)
    elif isinstance(obj, dict):
        obj[idx] = old
        S.redo(operator.delitem, obj, idx)
    return box


def unpacked_cots(dy, y, n, star) -> list:
    """The cotangents of the items an unpacking `y = unpack(v, n, star)` drew, one per item: dy's, the
    starred part's flattened back (Nones where a cotangent is None or short)."""
    gs = list(dy) if dy is not None else [None] * n
    gs += [None] * (n - len(gs))
    if star >= 0:
        mid = gs[star]
        mid = list(mid) if mid is not None else [None] * len(y[star])
        mid += [None] * (len(y[star]) - len(mid))
        gs = gs[:star] + mid + gs[star + 1:]
    return gs


def unpack_adjoint(dy, y, v, n, star):
    gs = unpacked_cots(dy, y, n, star)
    if isinstance(v, np.ndarray) or mutable(v):  # (a dual array: forward over reverse)
        duals = [g for g in gs if type(g) is _Dual]
        # forward over reverse: the items' cotangents are duals, gathered into a dual array
        out = np.zeros_like(duals[0], shape=v.shape) if duals else np.zeros_like(v)
        for i, g in enumerate(gs):
            if g is not None:
                out[i] = g
        return (out, None, None)
    if type(v) is np.flatiter:  # `a, b = x.flat`: a flat array of x's size, as `x.flat[i]`'s cotangent is
        base = v.base
        out = np.zeros(base.size, dtype=np.result_type(base.dtype, float))
        for i, g in enumerate(gs):
            if g is not None:
                out[i] = g
        return (out, None, None)
    # (gs: new; a tuple subclass's made by tuple's own `__new__`, not its class's, which may take the items
    # one by one: pygeodesy's named tuples)
    return (tuple.__new__(type(v), gs) if isinstance(v, tuple) and not hasattr(v, "_fields") else gs, None, None)


class _Snapshot(tuple):
    """What `a op= b` on a list or dict changed in place: (a's contents before)."""


def mutable(x) -> bool:
    """An array changed in place by `x op= y`: an ndarray, or (forward over reverse) a dual array, whose
    value and tangent are both overwritten in place (so its aliases and views see the change)."""
    return (type(x) is np.ndarray or (type(x) is _Dual and type(primal(x)) is np.ndarray)
            or isinstance(x, np.ndarray))  # (an ndarray subclass's too: a callee's `o[0] = v` into one was lost)


def _numeric_right(b) -> bool:
    """`lst += b` where Python takes b's numeric addition before the list's concatenation (a list has no
    numeric `+=`, and CPython tries the right operand's number slot first): numpy's arrays and scalars,
    and duals (forward over reverse), make `lst + b` an array, rebinding (impedance's `z = n * [0j];
    z += elem`: taken for an extension, the array's cotangent was lost, 0 for 3)."""
    return isinstance(b, (np.ndarray, np.generic)) or type(b) is _Dual


_AUG = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**",
        "matmul": "@", "and_": "&", "or_": "|", "xor": "^", "lshift": "<<", "rshift": ">>"}


def iop(opname, a, b):
    """`a op= b`: in place for arrays, lists (`+=`) and dicts (`|=`) (returning what the reverse pass
    needs to undo it), else rebinding."""
    if leaves.HOSTED and isinstance(a, leaves.HOSTED):  # (torch's `t += x` changes t and its views in place)
        raise runtime.UnsupportedFunction(
            f"reverse mode does not differentiate a {type(a).__name__} changed in place (`t {_AUG.get(opname, opname)}= x`)",
            where=runtime._user_line(), fix="write `t = t op x` (a new tensor) instead")
    if type(a) is np.ndarray or type(a) is _Dual and type(primal(a)) is np.ndarray:  # (mutable, inline)
        changed(a if type(a) is np.ndarray else primal(a))
        old = a.copy()  # (a dual array's value and tangent both)
        if getattr(operator, "i" + opname.rstrip("_"))(a, b) is a:  # (an ndarray's always is)
            return a, old
        raise runtime.UnsupportedFunction(
            f"forward over reverse (hessian, hvp): an in-place `{opname}` on an array could not be done in "
            "place on its dual (perturbed) value",
            fix="write `x = x op y` instead of `x op= y`, or compute the array without changing it in place")
    if isinstance(a, np.ndarray) and type(a) is not _Dual:  # an ndarray subclass: in place too (its aliases
        inplace = getattr(type(a), f"__i{opname.rstrip('_')}__", None)  # see it), by its own code if any
        if type(inplace) is types.FunctionType:  # (pyrr's `v += w`)
            y, pb = _twin(inplace, a, b)
            if y is not NotImplemented:
                return y, _SetByCode(pb, None, 0)
        changed(a)
        old = a.copy()
        if getattr(operator, "i" + opname.rstrip("_"))(a, b) is a:
            return a, old
        raise runtime.UnsupportedFunction(
            f"reverse mode does not differentiate an in-place `{opname}` on a {type(a).__name__} that rebinds",
            fix="write `x = x op y` instead of `x op= y`")
    if type(a) is not list and type(a) is not dict and isinstance(a, (list, dict)):
        # a list's or dict's subclass with its own in-place operator (`__iadd__` doubling what it adds, an
        # OrderedDict's `__ior__`): its code, recorded (taken for list's or dict's: 1 for 2, pkJ W2)
        inplace = getattr(type(a), f"__i{opname.rstrip('_')}__", None)
        if type(inplace) is types.FunctionType:
            y, pb = _twin(inplace, a, b)
            if y is not NotImplemented:
                return y, _SetByCode(pb, None, 0)
    if opname == "add" and isinstance(a, list) and _numeric_right(b):
        return operator.add(a, b), None  # (numpy's addition, a new array: a rebinds)
    if opname == "add" and isinstance(a, list) and runtime.iterated_by_python(b):
        # `l += obj` of an object whose class iterates in Python: drawn as code (`runtime.drawn_extend`)
        y, pb = _twin(runtime.drawn_extend, a, b)
        return y, _SetByCode(pb, None, 0)
    if (opname == "add" and isinstance(a, list)) or (opname == "or_" and isinstance(a, dict)):
        changed(a)
        old = _Snapshot((a.copy(),))
        return getattr(operator, "i" + opname.rstrip("_"))(a, b), old
    if opname == "mul" and isinstance(a, list) and isinstance(b, int):
        changed(a)  # (`q *= 2` repeats the list in place: every alias sees it)
        old = _Repeated((a.copy(),))
        return operator.imul(a, b), old
    if type(a) is _Dual or isinstance(a, PLAIN_OPERANDS):  # numbers (duals, ufloats...) are rebound
        return getattr(operator, opname)(a, b), None
    inplace = getattr(type(a), f"__i{opname.rstrip('_')}__", None)
    if type(inplace) is types.FunctionType:  # the class's own `__iadd__` (Counter's): its code, recorded
        y, pb = _twin(inplace, a, b)
        if y is not NotImplemented:
            return y, _SetByCode(pb, None, 0)
    elif inplace is not None and not isinstance(a, (numbers.Number, tuple, str, bytes, frozenset)):
        # a C type changing in place (a deque's `+=`, a set's `|=`): Python's semantics, no derivative
        if runtime._may_differ(b, 0):
            raise runtime.UnsupportedFunction(
                f"reverse mode does not differentiate `{type(a).__name__} {opname.rstrip('_')}=` in place",
                where=runtime._user_line(), fix="build a new object (`a = a + b`), or use a list")
        return getattr(operator, "i" + opname.rstrip("_"))(a, b), None
    return getattr(operator, opname)(a, b), None


class _Repeated(tuple):
    """What `a *= n` on a list changed in place: (a's contents before)."""


def _repeated_adj(S, g, a, before):
    """The adjoint of `a *= n` on a list: each item's cotangent is the sum of its copies'."""
    n = len(before)
    box = S.box(a, g)
    box.extend([None] * (len(a) - len(box)))
    summed = [None] * n
    for j, gj in enumerate(box[:len(a)]):
        summed[j % n] = acc(summed[j % n], gj)
    new = a[:]
    a[:] = before
    box[:] = summed
    S.redo(operator.setitem, a, slice(None), new)
    return box, None


class _OwnIopViewed:
    """What `a op= b` by a's class's own Python method left where it changed arrays in place that other
    variables share (a field's array, `self.v -= o`): its pullback and `call_views`' note of them."""
    __slots__ = ("pb", "w")

    def __init__(self, pb, w):
        self.pb, self.w = pb, w


def iop_views(old, a, b, others, since):
    """After `a op= b` that changed arrays in place: for a's class's own method, which of them `others`
    share (as for a method call, `call_views` with a as the method's object)."""
    if type(old) is not _SetByCode or old.pb is None:
        return old
    w = call_views(old.pb, (b,), others, 1, (), since, holder=a)
    return old if w is None else _OwnIopViewed(old.pb, w)


def iop_adj(S, opname, g, a, b, old, y0=None, douts=None):
    """The adjoint of `a op= b`: (a's cotangent, b's), and with `douts` (the cotangents of the variables
    that may share what a holds) those too, after them. y0: the statement's result, where the block keeps it
    (an object's operator re-run: `binop_adj`'s y)."""
    if douts is not None:
        if type(old) is _OwnIopViewed:
            dargs, douts, r = call_viewed(old.w, old.pb, g, None, (None,), douts, S)
            return r[0], acc(dargs[0], r[1][0]), douts
        return (*iop_adj(S, opname, g, a, b, old, y0), douts)
    if type(old) is _SetByCode:  # a class's own in-place operator: back through its code (its result's
        if old.pb is None:  # cotangent g as a call's: `__iadd__` may return a new object)
            return None, None
        da, dargs = _pull(S, old.pb, g)
        return da, dargs[0]
    if type(old) is _Repeated:
        return _repeated_adj(S, g, a, old[0])
    if type(old) is _Snapshot:  # a list extended or a dict updated in place: undone, then redone
        before = old[0]
        box = S.box(a, g)
        if isinstance(a, list):
            n = len(before)
            items = list(box[n:len(a)]) + [None] * max(0, len(a) - max(n, len(box)))
            del box[n:]
            added = a[n:]
            del a[n:]
            S.redo(list.extend, a, added)
            gb = items if any(x is not None for x in items) else None
            if gb is not None and isinstance(b, tuple):
                gb = tuple(gb)
        else:
            new = dict(a)
            gb = {k: box.pop(k) for k in b if box.get(k) is not None} or None
            a.clear()
            a.update(before)
            S.redo(dict.update, a, new)
        return box, gb
    if old is not None:  # undo the in-place update so earlier adjoints see the values they captured
        new = a.copy()  # (a dual array's value and tangent both)
        a[...] = old
        S.redo(operator.setitem, a, Ellipsis, new)
        a = old
    user_object = old is None and y0 is not None and type(y0).__flags__ & HEAPTYPE and not _known(y0)
    if g is None and user_object and S.boxes:  # (`A += B` by A's `__add__`, then read through a dict it holds)
        g = held(S, y0)
    if g is None:
        return None, None
    y = y0 if user_object else None
    if type(a) is tuple and (type(b) is tuple or type(b) is int):  # (`t += ()`, `t *= 1`: t itself)
        y = getattr(operator, opname)(a, b)
    return binop_adj(opname, g, y, a, b, 3, S)


# -- arrays sharing memory: an in-place change seen through every view -----------------------------

def _duration(y, a, b, act_a, act_b):
    """After `y = a * b` or `a / b` (one operand differentiated) of a result not a float: a duration scaled
    by the differentiated number is refused (`operator.scaled_duration`)."""
    if type(y) in runtime.DURATIONS or type(y) is np.ndarray and y.dtype.kind == "m":
        scaled_duration(a, b, act_a, act_b)


def views(a, *others, same=False):
    """For an in-place change of the array a: the positions among `others` of arrays sharing elements
    with it, each with both arrays' element addresses; None when there are none (the common case, cheap:
    arrays that are not views are told apart by identity of their memory at once). With `same`, a itself
    among others counts too (addresses None: all of it)."""
    if type(a) is not np.ndarray and not isinstance(a, np.ndarray):  # (a subclass's view too: np.ma's)
        if type(a) in _MUTABLE_CONTAINERS or isinstance(a, _MUTABLE_CONTAINERS):
            return _container_views(a, others, same)
        if type(a) is not _Dual or type(primal(a)) is not np.ndarray:
            return None
        # forward over reverse: a dual array's tangents share memory exactly where its values do
        return _dual_views(a, others, same)
    found = seen = None
    abase = a.base
    for j, n in enumerate(others):
        tn = type(n)
        if tn in _PLAIN:  # numbers, strings, None: they hold no array
            continue
        if tn is _BOUND_C or tn is C_METHOD or tn is types.MethodType:
            # a method bound to a (or to a view of it) taken before the change (`s = a.sum; a[0] = v; s()`):
            # its cotangent is its object's (`getattr_adj`), to be merged as that object's (verify41 W4: 0)
            n = n.__self__
            if type(n) is _Dual:  # (forward over reverse: a dual array's method, bound to the dual)
                n = primal(n)
            tn = type(n)
            if n is a:
                found = (found or []) + [(j, None, None)]
                continue
        if n is a:
            if same:
                found = (found or []) + [(j, None, None)]
            continue
        if tn is _Dual:
            n = primal(n)
            tn = type(n)
        if tn is np.flatiter:  # `it = a.flat` taken before the change: its reads see it, as a flat view's
            arr = n.base  # (its cotangent is a flat array of its array's size, in C order)
            if arr is a or np.may_share_memory(a, arr):
                if arr.itemsize != a.itemsize:
                    raise runtime.UnsupportedFunction(
                        "reverse mode cannot differentiate an in-place change of an array seen through a "
                        f"flat iterator of another dtype ({a.dtype} and {arr.dtype} share memory)",
                        fix="take `.flat` after the change")
                addr_a, addr_n = addresses(a), addresses(arr).reshape(-1)
                if np.isin(addr_n, addr_a).any():
                    found = (found or []) + [(j, addr_a, addr_n)]
            continue
        if tn is _LIST_ITER or tn is _TUPLE_ITER:
            # a list's or tuple's iterator (a generator's, map's or itertools.pairwise's items, drawn eagerly)
            # holds its items' cotangents in its box by position (`getitem_adj`): those of items sharing
            # memory with a, parked there by later passes of a loop over it, are a's before this change is
            # undone (`for w in (a[i:i + 2] for i in range(2)): w[1] += w[0]`: 0 for 1, gen19 W7)
            r = n.__reduce__()
            if len(r) == 3 and type(r[1][0]) in (list, tuple):
                seq = r[1][0]
                for v in seq:  # (a tuple of views per item, itertools.pairwise's rows: not followed)
                    if type(v) is tuple and any(isinstance(u := primal(w) if type(w) is _Dual else w, np.ndarray)
                                                and np.may_share_memory(u, a) for w in v):
                        _view_refused(v, n)
                found = _holding(found, j, n, seq, a)
            continue
        if tn is not np.ndarray and not isinstance(n, np.ndarray):
            if tn in _CONTAINERS or isinstance(n, _CONTAINERS) or (has_fields(n) and (
                    not isinstance(n, _NOT_HOLDERS) or tn is types.FunctionType)):
                if tn is dict and (owner := instance_dict_owner(n)) is not None and any(o is owner for o in others):
                    # an object's `__dict__` beside the object (`d = self.__dict__` in its `__setattr__`): one
                    # box, the object's; counted for both, the change's cotangent was moved twice (pkE W1: 2x)
                    continue
                if seen is None:
                    seen = {}
                found = _holding(found, j, n, n, a, seen)
            continue
        if (abase is not None or n.base is not None) and np.may_share_memory(a, n):
            if n.itemsize != a.itemsize:
                raise runtime.UnsupportedFunction(
                    "reverse mode cannot differentiate an in-place change of an array seen through a view "
                    f"of another dtype ({a.dtype} and {n.dtype} share memory)",
                    fix="copy the view (`.copy()`) before changing it, or change the array itself")
            addr_a, addr_n = addresses(a), addresses(n)
            if np.isin(addr_n, addr_a).any():
                found = (found or []) + [(j, addr_a, addr_n)]
    return found


_HELD_VIEW = object()  # (views' record of arrays a container or object holds that share elements with a)


def _holding(found, j, box_of, n, a, seen=None):
    """`views`' entries for other j, a container or object n holding a itself (`_HELD`) or arrays sharing
    elements with it (`_HELD_VIEW`), whose cotangents are in the box of `box_of` (n's own, or the iterator's
    over the list or tuple n: by position only)."""
    keys = _keys_holding(n, a, 0, seen)
    if box_of is not n:
        keys = [k for k in keys if type(k) is int]
    if keys:
        found = (found or []) + [(j, _HELD, (box_of, keys))]
    held = _held_views(n, a)
    if held:
        found = (found or []) + [(j, _HELD_VIEW, (box_of, held))]
    return found


def _entries(n):
    """(key, value) of a dict's items, a list's or tuple's (by index) or an object's fields."""
    if type(n) is dict:
        return n.items()
    if type(n) in (list, tuple):
        return enumerate(n)
    if isinstance(n, (dict, list, tuple)):
        # a subclass's: its items (SALib's `class ResultDict(dict)` holding arrays filled later, an
        # OrderedDict's), then its fields (`r.arr = a`), both as its cotangent box holds them
        items = list(n.items() if isinstance(n, dict) else enumerate(n))
        return items + list(fields_of(n).items()) if has_fields(n) else items
    return fields_of(n).items()


def _held_views(n, a) -> list:
    """(key, a's addresses, the held array's) of each array container or object n holds (one level) that
    shares elements with a without being a (`la = [w, w[1:]]`, `o.view = w[1:]`: a write through one is a
    change of the other, whose cotangent the container's box holds)."""
    out = []
    for k, v in _entries(n):
        if type(v) is _Dual and type(primal(v)) is _NDARRAY:  # (forward over reverse: a dual array held, whose
            v = primal(v)  # tangent shares memory where its value does: hessian of a list's view written)
        if isinstance(v, np.ndarray) and v is not a and (a.base is not None or v.base is not None) \
                and (v.dtype.kind in "fc" and a.dtype.kind in "fc" or v.dtype.kind == a.dtype.kind == "O") \
                and v.itemsize == a.itemsize \
                and np.may_share_memory(a, v):  # (numbers': an object array's rows hold arrays of their own)
            addr_a, addr_v = addresses(a), addresses(v)
            if np.isin(addr_v, addr_a).any():
                out.append((k, addr_a, addr_v))
    return out


def _container_views(a, others, same, holders=True):
    """`views` for a list or dict a changed in place: the other variables holding the same object (`q = ps`;
    their cotangents are a's, to be merged before the change is undone) and the containers and objects
    holding it (`self.ps`; not with `holders` False: the aliases only, see `_reach_changed`)."""
    found = None
    seen = {}  # (shared by the scans of every variable: a library's singletons reached from many)
    for j, n in enumerate(others):
        if (type(n) is _BOUND_C or type(n) is C_METHOD or type(n) is types.MethodType) and n.__self__ is a:
            found = (found or []) + [(j, None, None)]  # (`get = d.get; d['a'] = v; get('a')`: see `views`)
        elif n is a:
            if same:
                found = (found or []) + [(j, None, None)]
        elif not holders:
            continue
        elif type(n) in _CONTAINERS or isinstance(n, _CONTAINERS) or (
                type(n) not in _PLAIN and has_fields(n) and (not isinstance(n, _NOT_HOLDERS)
                                                             or type(n) is types.FunctionType)):
            keys = _keys_holding(n, a, 0, seen)
            if keys:
                found = (found or []) + [(j, _HELD, (n, keys))]
    return found


_REACH_BUDGET = 512  # (entries `_reach_changed` reads before it answers "perhaps")
_INERT_HELD = (np.generic, numbers.Number, str, bytes, type, types.ModuleType, types.BuiltinFunctionType)


def _reach_changed(a, since) -> bool:
    """Whether the call that began at stamp `since` may have changed in place something a list or dict
    argument `a` reaches: a itself, or a list, dict or array it holds (items, fields, down any depth), stamped
    after `since`. True too where the walk cannot tell: a function, an object array or an object of C without
    fields among them, or more than `_REACH_BUDGET` entries.

    False lets `call_views` leave out the search of the caller's other variables for containers and objects
    holding a (`_keys_holding`, through all they hold: colorspacious' transform graph, searched for each node
    dict handed to each helper of `get_transform`, was 97% of its gradient's time). Their cotangents for a
    are moved into a's box before the callee's pullback so that the adjoints of the callee's in-place changes
    of a, or of what a holds (whose cotangents are a's box's entries, `_into_child`), see all of it; a callee
    that changed nothing a reaches only reads it, and a read's adjoint adds into the box whatever is in it:
    left in the holders' boxes, those cotangents reach a's origin the way they came (the sum is the same)."""
    if UNKNOWN_CHANGE[0] > since:
        return True  # (a change of an object no rule named: anything)
    if CONTAINER_CHANGE[0] <= since and MEMORY_CHANGE[0] <= since:
        return False  # (nothing stamped since the call began)
    stack, seen, budget = [a], {id(a)}, _REACH_BUDGET
    while stack:
        n = stack.pop()
        tn = type(n)
        if tn is _Dual:
            n = primal(n)
            tn = type(n)
        if tn is _NDARRAY or isinstance(n, np.ndarray):
            if n.dtype.kind == "O" or LAST_CHANGE.get(id(bottom(n)), 0) > since:
                return True
            continue
        if tn in _PLAIN or isinstance(n, _INERT_HELD):
            continue
        if tn in _MUTABLE_CONTAINERS or isinstance(n, _MUTABLE_CONTAINERS):
            if LAST_CHANGE.get(id(n), 0) > since:
                return True
        elif not (tn is tuple or isinstance(n, tuple) or has_fields(n)) or isinstance(n, _NOT_HOLDERS):
            return True
        entries = _entries(n)
        budget -= len(n) if type(entries) is enumerate else len(entries)
        if budget < 0:
            return True
        for _, v in entries:
            if type(v) not in _PLAIN and id(v) not in seen:
                seen.add(id(v))
                stack.append(v)
    return False


def _dual_views(a, others, same):
    """`views` for a dual array a: the arrays at the bottom of a and of the dual others compared."""
    base = primal(a)
    bottoms = [base if n is a else (primal(n) if type(n) is _Dual else n) for n in others]
    return views(base, *[n if type(n) is not _Dual else None for n in bottoms], same=same)


def bound(scope, names):
    """The values of `names` in a frame's locals, None for those not bound yet; a module global among
    them (a list the caller's objects hold, `self.items = REGISTRY`) from the frame's globals (read as None,
    the cotangent the caller held for it stayed behind when a method appended to it: 0 for 1.4)."""
    out = tuple(scope.get(n, _UNBOUND) for n in names)
    if not any(v is _UNBOUND for v in out):
        return out
    frame = sys._getframe(1)
    code = frame.f_code
    own = _OWN_NAMES.get(code)
    if own is None:  # (the twin's own names, once per code object: a set of hundreds of names per call)
        own = frozenset(code.co_varnames) | frozenset(code.co_cellvars) | frozenset(code.co_freevars)
        if len(_OWN_NAMES) >= 4096:
            _OWN_NAMES.clear()
        _OWN_NAMES[code] = own
    return tuple(frame.f_globals.get(n) if v is _UNBOUND and n not in own else None if v is _UNBOUND else v
                 for n, v in zip(names, out))


_UNBOUND = object()
_OWN_NAMES: dict = {}  # (a twin's code object -> its local, cell and free variable names: `bound`)


def plain_cells(scope, names, callee) -> None:
    """Before and after a call of a closure that rebinds the caller's variables (`nonlocal L; L = [0.0]`):
    refused where one holds a list, dict, tuple or object, whose cotangent is a box of that object (the
    caller's adjoint kept one box for the name across the rebinding: a value read through an alias `M = L`
    made before it came out 6.2 for 5.2, a loop over it 57.4 for 19.6, an item read after it an IndexError).
    Numbers and arrays are followed."""
    for n in names:
        v = scope.get(n)
        if v is None or type(v) in _PLAIN or isinstance(v, (np.ndarray, np.generic, numbers.Number)):
            continue
        raise runtime.UnsupportedFunction(
            f"reverse mode does not follow `{n}`, a {type(v).__name__}, rebound (`nonlocal`) by the closure "
            f"`{callee}` it calls", where=runtime._user_line(),
            fix=f"return the new value from `{callee}` and assign it (`{n} = {callee}(...)`), or change the "
                f"{type(v).__name__} in place instead of rebinding `{n}`")


_CONTAINERS = (list, tuple, dict)
_MUTABLE_CONTAINERS = (list, dict)
_BOUND_C = types.BuiltinMethodType  # (a C method bound to its object: `d.get`, `a.sum`)
_PLAIN = frozenset({int, float, complex, bool, str, bytes, type(None), np.float64, np.float32, np.int64,
                    np.intp, np.bool_, slice, range, types.ModuleType})
# (a function is one where it is a variable of the caller's: `g.calls = []` then `g.calls.append(v)`, the list
# read back as `sum(g.calls)`: gen20 W1, 0 for 1.4; not inside other objects, whose functions are code)
_NOT_HOLDERS = (types.ModuleType, type, types.FunctionType, types.MethodType, types.BuiltinFunctionType)
_HELD = object()  # in a `views` entry: a container or object holding the array itself


class _Path(tuple):
    """In `_keys_holding`'s answer: the keys from a holder down to the nested container or object holding
    the array (`t['v'][0]` of `t = copy.deepcopy({'w': x, 'v': [x]})`: ('v', 0)), none of which a
    variable holds."""


_NESTED = 4  # how deep `_keys_holding` looks into containers held by containers


def _keys_holding(n, a, depth=0, seen=None):
    """The indices, keys or field names under which container or object n holds the object a itself (or,
    forward over reverse, a dual array whose innermost array is a); a `_Path` where it holds it inside
    a container or object it holds (a read of it after a change in place sees the change: its cotangent
    is the changed array's).

    `seen` (id -> depth) remembers the containers and objects already searched without finding a, at the
    shallowest depth searched: a search from as deep or deeper finds nothing either (the heap does not
    change during one search), so shared parts of a graph (mpmath's context, reached from each of its
    constants; colorspacious' transform graph) are searched once, not once per path to them."""
    out = []
    for k, v in _entries(n):
        tv = type(v)
        if v is a or tv is _Dual and primal(v) is a:
            out.append(k)
        elif tv in _PLAIN or tv is _NDARRAY or tv is _Dual or depth >= _NESTED:
            continue
        elif tv in _CONTAINERS or isinstance(v, _CONTAINERS) or not isinstance(v, _NOT_HOLDERS) and has_fields(v):
            if seen is not None:
                known = seen.get(id(v))
                if known is not None and known <= depth + 1:
                    continue
            sub = _keys_holding(v, a, depth + 1, seen)
            if sub:
                out.extend(_Path((k,) + (s if type(s) is _Path else (s,))) for s in sub)
            elif seen is not None:
                seen[id(v)] = depth + 1
    return out


def _entry(n, k):
    """The value `_entries(n)` gives for key k: an item, or a field (a dict subclass's: `pars._asteval`)."""
    if isinstance(n, dict):
        return dict.__getitem__(n, k) if dict.__contains__(n, k) else fields_of(n)[k]
    if isinstance(n, (list, tuple)) and type(k) is int:
        return n[k]
    return fields_of(n)[k]


def _take_nested(S, obj, box, path):
    """The cotangent held for `obj[path[0]][path[1]]...` (a `_Path`), taken out of the boxes (None: none).
    On the way each container's entry becomes its child's box, as `_into_child` keeps them."""
    for k in path[:-1]:
        entry = box.get(k) if hasattr(box, "get") else _box_entry(box, k, obj)
        if entry is None:
            return None
        child = _entry(obj, k)
        cb = S.box(child, entry)
        box[k] = cb
        obj, box = child, cb
    k = path[-1]
    g = box.get(k) if hasattr(box, "get") else _box_entry(box, k, obj)
    if g is not None:
        box[k] = None
    return g


def _box_entry(box, key, holder):
    """The cotangent a container's box holds for key (an item's, or a field's), or None. A list's or tuple's
    box holds its items only: a field of a list subclass holding an array the change reaches (kinetics'
    `Model(list)`) has no place in it, refused (a crash before: the field's name compared with the box's length)."""
    if isinstance(box, dict):
        return box.get(key)
    if type(key) is int:
        return box[key] if key < len(box) else None
    raise runtime.UnsupportedFunction(
        f"reverse mode does not differentiate an in-place change of an array that the attribute .{key} of a "
        f"{type(holder).__name__} (a list or tuple subclass) also holds", where=runtime._user_line(),
        fix="keep the array on a plain object, or compute a new array instead of changing it in place; forward "
            "mode (`contexts.jacfwd`, `jvp`) follows it")


def views_merge(found, da, douts, S=None):
    """Before undoing an in-place change of array a: the cotangents other variables hold for elements
    they share with a move into a's (the memory's cotangent is then all in a's; each view's own adjoint
    routes what stays with it), and so do those of containers' and objects' entries holding a."""
    douts = list(douts)
    for j, addr_a, addr_n in found:
        dn = douts[j]
        if addr_a is _HELD_VIEW:  # (arrays an entry holds sharing elements with a: their shared part)
            if S is None:
                continue
            holder, held = addr_n
            box = douts[j] = S.box(holder, dn)
            for key, addr_a_, addr_v in held:
                g = _box_entry(box, key, holder)
                if g is not None:
                    da, box[key] = _merge_shared(da, g, addr_a_, addr_v)
            continue
        if addr_a is _HELD:
            if S is None:
                continue
            holder, keys = addr_n
            box = douts[j] = S.box(holder, dn)
            for key in keys:
                if type(key) is _Path:  # (taken out of the nested box)
                    da = acc(da, _take_nested(S, holder, box, key))
                    continue
                g = _box_entry(box, key, holder)
                if g is not None:
                    da = acc(da, g)
                    box[key] = None
            continue
        if dn is None:
            continue
        if addr_a is None:  # the same array
            da, douts[j] = acc(da, dn), None
            continue
        da, douts[j] = _merge_shared(da, dn, addr_a, addr_n)
    return da, tuple(douts)


def _merge_shared(da, dn, addr_a, addr_n):
    """(a's cotangent with the elements array n shares with a added from dn, n's cotangent without them)."""
    dual = type(dn) is _Dual or type(da) is _Dual
    if type(dn) is _NDARRAY and dn.ndim > addr_n.ndim:  # (an object array's items' cotangents stacked)
        return _merge_shared_items(da, dn, addr_a, addr_n)
    dn = np.broadcast_to(dn if type(dn) is _Dual else np.asarray(dn), addr_n.shape)
    shared = np.isin(addr_n, addr_a)
    order = np.argsort(addr_a, axis=None)
    sorted_a = addr_a.reshape(-1)[order]
    pos = np.searchsorted(sorted_a, addr_n[shared])  # where each shared element of n sits in a
    if dual:  # forward over reverse: the cotangents are dual arrays, gathered into a dual array
        flat = np.zeros_like(dn if type(dn) is _Dual else da, shape=(addr_a.size,))
    else:
        flat = np.zeros(addr_a.size, dtype=np.result_type(dn, np.float64 if dn.dtype.kind in "biu" else dn))
    np.add.at(flat, order[pos], dn[shared])
    return acc(da, flat.reshape(addr_a.shape)), np.where(shared, 0, dn)


def _merge_shared_items(da, dn, addr_a, addr_n):
    """`_merge_shared` for an object array (a row of one viewed: python-control's polynomial tables) whose
    cotangent dn holds its items' cotangents stacked (a float array, the items' axes after the array's):
    both cotangents come back as object arrays of the items' cotangents (0.0 for none), the form an object
    array's getitem adjoint gives them (added to a stacked one, numpy broadcast the items into each
    other's entries: -10.08 for 5.6)."""
    items = np.empty(addr_n.size, dtype=object)
    for j, sub in enumerate(dn.reshape((addr_n.size,) + dn.shape[addr_n.ndim:])):
        items[j] = sub.copy()
    moved = np.empty(addr_a.size, dtype=object)
    moved[:] = 0.0
    where = {int(addr): i for i, addr in enumerate(addr_a.reshape(-1))}
    for j, addr in enumerate(addr_n.reshape(-1)):
        i = where.get(int(addr))
        if i is not None:
            moved[i] = moved[i] + items[j]
            items[j] = 0.0
    moved = moved.reshape(addr_a.shape)
    if da is not None:
        for idx in np.ndindex(moved.shape):
            moved[idx] = acc(da[idx], moved[idx])
    return moved, items.reshape(addr_n.shape)


def spread_changed(c, pb, spreads, named):
    """After a call spreading `*args` or `**kwargs` into a Python function (`pb` its twin's pullback) during
    which something changed in place (stamps after `c`): an array, list or dict the spreads passed that the
    callee changed is refused. Its cotangent after the call cannot be handed to the callee through the
    spread (`call_views` hands those passed by position or by name): a forwarding wrapper's
    `fill(*args, **kw)` writing into a caller's array gave the caller's later uses no derivative."""
    if pb is not None and pb[0] is observe._observed_back:
        pb = pb[1]
    if pb is None or pb[0] is not runtime._twin_back:
        return
    values = [v for s in spreads for v in (s if isinstance(s, (tuple, list)) else ())]
    values += [v for d in named for v in (d.values() if isinstance(d, dict) else ())]
    for v in values:
        root = bottom(v)
        if type(root) in (np.ndarray, list, dict) and LAST_CHANGE.get(id(root), 0) > c:
            raise runtime.UnsupportedFunction(
                f"reverse mode cannot differentiate {pb[6].__qualname__} changing in place a {type(v).__name__} "
                "it was passed through `*args` or `**kwargs`, or by position after a `*spread`: the caller's "
                "cotangent for it after the call cannot reach the change", where=runtime._user_line(),
                fix="pass the array by position or by name (`f(x, out)`, `f(x, out=out)`), or return a new "
                    "array instead of filling one")


def call_views(pb, args, others, npos=None, kwnames=(), since=None, holder=None):
    """After a call that changed arrays in place: for a C function's rule, None unless the rule changed a
    list, dict or array of the caller's it was not handed by name (a method reached as a value: then what
    `call_viewed` moves into that object's box, or hands the rule as its object's cotangent); else which
    arguments are arrays and, for each changed by the call (stamped after `since`), the `others` sharing
    memory with it (as `views` gives them). `args`: the first `npos`
    positional arguments (those before any `*spread`: their positions are the call's), then the keyword
    arguments `kwnames` (by name). (An array the call did not change keeps its views' cotangents where
    they are: merged into an argument that is the caller's constant, `loss(x, data)` at x = data, the
    whole gradient went with it, 0, after the callee appended to a list of its own.)"""
    if pb is not None and pb[0] is observe._observed_back:
        pb = pb[1]
    if pb is None:
        return None
    if pb[0] is not runtime._twin_back:
        # a C method's rule changing its object in place, the method reached as a value (`append = L.append`,
        # `getattr(L, "append")`, `ops["push"]`, `list.append(L, v)`): the caller's cotangent for the object
        # into its box, where the rule's adjoint takes it (left in the caller's variable: 0 for 3)
        stamp = -1 if since is None else since
        boxed = _changed_containers(others, stamp) if others else None
        # (and an argument so changed: `list.append(L, v)`, the method unbound)
        kept = [(i, a, []) for i, a in enumerate(args) if (type(a) in _MUTABLE_CONTAINERS or isinstance(
            a, _MUTABLE_CONTAINERS)) and LAST_CHANGE.get(id(a), 0) > stamp] or None
        if pb[0] is runtime._partial_back and len(pb) > 4 and others and since is not None:
            # (a partial's own arguments, and its function's cells, holding arrays of the caller's the call changed:
            # `functools.partial(put, [W])(a)`, 0 for 3, pkI W4; as for a closure's, see below)
            for o in _captured_holders(pb[4]):
                if (found := _held_changed(o, others, since)) is not None:
                    kept = (kept or []) + [(_CAPTURED, *found)]
        # (an array of the caller's the call changed, the method's own object: `getattr(a, "fill")(t)`; its
        # cotangent is the rule's `dself`, which it hands back for the method, then its object)
        own = _self_of(pb)
        changed = [j for j, o in enumerate(others or ()) if o is own]
        # (not where other variables view it: their cotangents stay refused, `runtime._held_for`)
        own = changed[0] if own is not None and (type(own) is _NDARRAY or type(own) is _Dual) and changed and len(
            views(own, *others, same=True) or ()) == 1 else None
        if boxed is None and kept is None and own is None:
            return None
        return ((False,) * len(args), [], (None,) * len(args), (len(args) if npos is None else npos, kwnames),
                kept, boxed, stamp, own)
    arrays = tuple(mutable(a) for a in args)
    info, npre = pb[1], pb[3]
    if (info.varargs >= 0 or info.varkw >= 0) and since is not None:
        _variadic_changed(pb, args, arrays, len(args) if npos is None else npos, kwnames, since)
    held = tuple(a if type(a) in _MUTABLE_CONTAINERS or isinstance(a, _MUTABLE_CONTAINERS) else None for a in args)
    # (the method's object, and each argument that is an object, dict or list: arrays they hold, changed by
    # the call, may be the caller's too: `step(s, dt)` doing `s.x += dt * s.x` on the caller's x)
    kept = None
    if type(holder) is super:  # (`super().setup()`: the object is super's, whose box its fields' changes
        holder = holder.__self__  # take; a box of the proxy's gave self's cotangent twice: petbox-dca, 2 for 1)
    if others:
        for i, o in ((-1, holder), *enumerate(args)):
            if o is not None and not mutable(o) and (found := _held_changed(o, others, since)) is not None:
                kept = (kept or []) + [(i, *found)]
        if since is not None and len(pb) > 6 and pb[6] is not None:
            # and the lists, dicts and objects a closure captured: arrays they hold, changed by the call, may be
            # the caller's (`L = [W]; def w(v): L[0][1] = v`: W's cotangent was left in the caller, 0 for 3, pkI W4)
            for o in _captured_holders(pb[6]):
                if all(o is not a for a in args) and o is not holder and (
                        found := _held_changed(o, others, since)) is not None:
                    kept = (kept or []) + [(_CAPTURED, *found)]
    stamp = -1 if since is None else since
    boxed = _changed_containers(others, stamp) if others else None
    cells = _cells_changed(pb, args, others, since) if others and since is not None else None
    unhanded = (_unhanded_changed(args, others, since, {j for j, _ in cells or ()})
                if others and since is not None and kept is None else None)
    if (not any(arrays) and all(a is None for a in held) and kept is None and boxed is None and unhanded is None
            and cells is None):
        return None
    shared = [(i, views(a, *others, same=True) if arrays[i] or since is None or _reach_changed(a, since)
               else _container_views(a, others, True, holders=False)) for i, a in enumerate(args)
              if (arrays[i] and (since is None or LAST_CHANGE.get(id(bottom(a)), 0) > since)
                  or held[i] is not None) and others]
    return (arrays, [(i, found) for i, found in shared if found], held, (len(args) if npos is None else npos, kwnames),
            kept, boxed, stamp, None, unhanded, cells)


def _cells_changed(pb, args, others, since):
    """[(position among others, cell name)] of the caller's arrays the call changed in place that the callee,
    a function (not a method), holds in a cell of its own, not handed: a sibling closure of one factory
    writing the array both capture (`def put(p): st[0] = p * p` beside `def f(p): put(p); return st[0]`).
    The caller's cotangent for it goes in as the callee's cell's (`call_viewed`), and the cell's before the
    call comes back to the caller's variable; left in the caller, the write's derivative was lost (0 for 2.8)."""
    fn = pb[6]
    if pb[3] or type(fn) is not types.FunctionType or not fn.__closure__:
        return None
    out = None
    for name, c in zip(fn.__code__.co_freevars, fn.__closure__):
        try:
            v = c.cell_contents
        except ValueError:
            continue
        if type(v) is not _NDARRAY or LAST_CHANGE.get(id(bottom(v)), 0) <= since or any(a is v for a in args):
            continue
        for j, o in enumerate(others):
            if o is v:
                out = (out or []) + [(j, name)]
    return out


_CAPTURED = -2  # (`kept`'s position of a holder the callee captured, not handed)


def _captured_holders(fn, depth: int = 0) -> list:
    """The lists, dicts, tuples and objects fn's closure holds (also through the functions and partials it holds)."""
    out = []
    if isinstance(fn, functools.partial):
        out += [a for a in (*fn.args, *fn.keywords.values()) if type(a) in _MUTABLE_CONTAINERS or type(a) is tuple
                or isinstance(a, _MUTABLE_CONTAINERS)]
        fn = fn.func
    for v in _cell_values(fn):
        if type(v) in _MUTABLE_CONTAINERS or type(v) is tuple or isinstance(v, _MUTABLE_CONTAINERS) or (
                has_fields(v) and not callable(v) and not isinstance(v, _NOT_HOLDERS)):
            out.append(v)
        elif depth < 2 and callable(v):
            out += _captured_holders(v, depth + 1)
    return out


def _cell_values(fn):
    """The values fn's closure holds (a bound method's function's), its empty cells left out."""
    fn = getattr(fn, "__func__", fn)
    for c in getattr(fn, "__closure__", None) or ():
        try:
            yield c.cell_contents
        except ValueError:  # (an empty cell)
            continue


def _unhanded_changed(args, others, since, routed=frozenset()):
    """The positions among others of arrays of the caller's the call changed in place without being handed
    them, nor anything sharing their memory (a buffer the callee keeps as a default argument or a class
    attribute and returned before: `r = put(a)` then `put(b)` writing r's memory again), or None. The change
    is in the callee's records, but no cotangent of the caller's reaches it: one the caller holds for such an
    array when the call is undone is refused (`call_viewed`; gen19 W8: the first values' derivative, not the
    second's). None held (a temporary the code no longer reads, `r = put(a).copy()`'s) needs none."""
    out = None
    for j, o in enumerate(others):
        if type(o) is _Dual:  # (forward over reverse: a dual array's value)
            o = primal(o)
        if j in routed or type(o) is not _NDARRAY or LAST_CHANGE.get(id(bottom(o)), 0) <= since:
            continue
        if any(isinstance(a, np.ndarray) and np.may_share_memory(a, o) for a in args) or any(
                type(a) is _Dual and isinstance(primal(a), np.ndarray) and np.may_share_memory(primal(a), o)
                for a in args):
            continue
        if any(type(a) in _MUTABLE_CONTAINERS or isinstance(a, _MUTABLE_CONTAINERS) or has_fields(a) for a in args):
            continue  # (handed inside a list, dict or object: `_held_changed`'s and the boxes' to find)
        out = (out or []) + [j]
    return out


def _unhanded_refused(w, douts) -> None:
    if any(douts[j] is not None for j in w[8]):
        raise runtime.UnsupportedFunction(
            "reverse mode cannot differentiate a call that changes in place an array the caller holds without "
            "handing it over (a buffer the callee keeps as a default argument, a class attribute or module "
            "state, returned by an earlier call), read after the call",
            fix="copy what the earlier call returned (`r = put(v).copy()`), or pass the buffer as an argument")


def _variadic_changed(pb, args, arrays, npos, kwnames, since) -> None:
    """An array the call changed in place that the callee took into its `*args` or `**kwargs` (`def step(s,
    *arrs): for v in arrs: v *= s`): refused. Its parameter is the tuple or dict Python made, which has no
    entry copy, so the caller's cotangent for it after the call cannot be handed to the change (gen19 W9a:
    the writes' derivative was lost)."""
    info, npre = pb[1], pb[3]
    spread = []
    for i, a in enumerate(args):
        if i < npos:
            spread.append(npre + i >= info.argcount)
        else:
            name = kwnames[i - npos]
            spread.append(name not in info.names or info.names.index(name) in (info.varargs, info.varkw))
    if not all(spread[npos:]):
        # (a keyword argument of a parameter of its own, `f(xp.maximum, d, 0, out=d)`, sklearn's: the change may
        # be that argument's, handed through it; the arguments seen here after the call need not be its values)
        return
    for i, a in enumerate(args):
        if arrays[i] and spread[i] and LAST_CHANGE.get(id(bottom(a)), 0) > since:
            raise runtime.UnsupportedFunction(
                f"reverse mode cannot differentiate {pb[6].__qualname__} changing in place an array it took "
                "into its `*args` or `**kwargs`: the caller's cotangent for it after the call cannot reach the "
                "change", where=runtime._user_line(),
                fix="give the function a parameter for the array, or return new arrays instead of changing them")


def _self_of(pb):
    """The object whose C method an in-place rule's pullback is for (a bound method's), or None."""
    if pb[0] is runtime._inplace_back:
        return pb[2]
    if pb[0] is runtime._mutating_back and pb[5]:
        return pb[3][0]
    return None


def _changed_containers(others, since):
    """The caller's variables (positions among `others`, with their values) that are, or whose objects hold
    in a field (two levels down), a list or dict the call changed in place: a callee reaching it another way
    (`Recorder(hist).add(v)` appending to `self.history`, a list in module state two objects share) undoes
    the change on that list's box, where the caller's cotangent for it must be then (it was left in the
    caller's variable: 0 for 3, silently). None when there are none."""
    if CONTAINER_CHANGE[0] <= since:
        return None  # (no list or dict changed since)
    out = None
    for j, o in enumerate(others):
        if type(o) in _PLAIN:
            continue
        if type(o) in _MUTABLE_CONTAINERS or isinstance(o, _MUTABLE_CONTAINERS):
            hit = LAST_CHANGE.get(id(o), 0) > since
        else:
            hit = not isinstance(o, _NOT_HOLDERS) and has_fields(o) and any(_changed_fields(o, since, 0))
        if hit:
            out = (out or []) + [(j, o)]
    return out


def _changed_fields(o, since, depth):
    """(field, value, is a container) for the fields of object o that are lists or dicts changed since
    `since` (containers), or objects holding such (one level further down)."""
    for k, v in fields_of(o).items():
        if type(v) in _PLAIN:
            continue
        if type(v) in _MUTABLE_CONTAINERS or isinstance(v, _MUTABLE_CONTAINERS):
            if LAST_CHANGE.get(id(v), 0) > since:
                yield k, v, True
        elif depth < 1 and not isinstance(v, _NOT_HOLDERS) and has_fields(v) and any(_changed_fields(v, since, 1)):
            yield k, v, False


def _into_boxes(S, o, d, since, depth=0):
    """o's cotangent d moved into o's box, and the cotangents its fields hold for lists and dicts changed
    since `since` into theirs (the box itself stands in the field: the callee's adjoints of the changes
    take from it in place, and the caller's later reads see what they left)."""
    box = S.box(o, d)
    if type(o) in _MUTABLE_CONTAINERS or isinstance(o, _MUTABLE_CONTAINERS):
        return box
    for k, v, container in list(_changed_fields(o, since, depth)):
        box[k] = S.box(v, box.get(k)) if container else _into_boxes(S, v, box.get(k), since, depth + 1)
    return box


def _held_changed(holder, others, since):
    """For a method call `obj.m(...)`: the arrays obj's fields hold that the call changed in place and that
    other variables share memory with (`Box(a).add(v)` doing `self.a += v`: the caller's `a`), as (obj,
    [(field, views' entries)]); None when there are none. Their cotangents move into obj's box before the
    method's pullback, where its adjoint of the change finds them (the caller's was left behind: lost)."""
    if type(holder) in _PLAIN or isinstance(holder, _NOT_HOLDERS) or not (
            has_fields(holder) or type(holder) in _MUTABLE_CONTAINERS or isinstance(holder, _MUTABLE_CONTAINERS)
            or type(holder) is tuple):  # (`step((W, b), ...)` changing the arrays a tuple holds: gen19 W9a)
        return None
    if since is not None and MEMORY_CHANGE[0] <= since:
        return None  # (no array changed since: the search of all the object holds, a unit registry, finds none)
    entries = []
    _changed_held(holder, others, since, entries, 0, set(), (id(holder),))
    return (holder, entries) if entries else None


def _direct(e, chain=()):
    """A `views` entry, an object's holding the array kept where its own field or item is the array (`a` of
    `c = copy.copy(a)`), or where it holds it further down through objects none of which is on `chain`, the way
    down from the method's object: one holding it through the method's object (`vs` of `for v in vs:
    v.bump(o)`), whose cotangent the method is given, would take it twice (2x); another object holding it in a
    list of its own (`f1.mats` beside `f0.mats`, epidemmo's factors) holds the cotangent an earlier pullback
    parked there (dropped: 0, pkI W5)."""
    if e[1] is not _HELD:
        return e
    holder, keys = e[2]
    keys = [k for k in keys if type(k) is not _Path or not _through(holder, k, chain)]
    return (e[0], _HELD, (holder, keys)) if keys else None


def _through(holder, path, chain) -> bool:
    """Whether the way down `path` from holder passes an object whose id is in chain (or cannot be walked)."""
    n = holder
    try:
        for k in path[:-1]:
            n = _entry(n, k)
            if id(n) in chain:
                return True
    except (KeyError, IndexError, TypeError, AttributeError):
        return True
    return not chain


def _changed_held(n, others, since, entries, depth, seen, chain):
    """Into `entries`, (n, field or key, views' entries) for each array n holds that the call changed and
    `others` share, and so on down the objects, lists and dicts n holds (`self.inner.v -= o`, a level down:
    the caller's array lost its change's derivative)."""
    seen.add(id(n))
    for k, v in _entries(n):
        tv = type(v)
        if mutable(v):
            if since is None or LAST_CHANGE.get(id(bottom(v)), 0) > since:
                # (and objects holding it, `a` of `c = copy.copy(a); c.add(x)`: not the method's own object
                # under another name, `_od_in_self`, whose cotangent is the method's dself already, nor one
                # on the way down to the array, whose box is the one it goes into)
                found = [_direct(e, chain) for e in (views(v, *others, same=True) or ())
                         if (e[1] is not _HELD and e[1] is not _HELD_VIEW) or id(e[2][0]) not in chain]
                found = [e for e in found if e is not None]
                if found:
                    entries.append((n, k, found))
        elif (depth < _NESTED and tv not in _PLAIN and id(v) not in seen
              and (tv in _MUTABLE_CONTAINERS or isinstance(v, _MUTABLE_CONTAINERS) or isinstance(v, tuple)
                   or has_fields(v) and not isinstance(v, _NOT_HOLDERS))):
            _changed_held(v, others, since, entries, depth + 1, seen, chain + (id(v),))


def call_merge(w, dargs, douts, S):
    """Before the pullback of such a call: the views' cotangents for memory an argument shares move into
    the argument's, and a list or dict argument's cotangent into its box (where the callee's adjoints of
    its changes find it: `lst.append(x)` in the callee, `ps` the caller's); returns the arguments' and
    views' cotangents and those handed to the callee (its array arguments')."""
    arrays, shared, held = w[:3]
    dargs = list(dargs)
    for i, found in shared:
        dargs[i], douts = views_merge(found, dargs[i], douts, S)
    for i, obj in enumerate(held):
        if obj is not None:
            dargs[i] = S.box(obj, dargs[i])
    return tuple(dargs), douts, tuple(g if is_array else None for g, is_array in zip(dargs, arrays))


def call_viewed(w, pb, g, dself, dargs, douts, S):
    """The pullback of such a call (`w` not None: its callee is a Python function, or a C rule `call_views`
    found changing the caller's objects; then its `w` has an eighth entry): `call_merge`, then the
    pullback with the arguments' cotangents handed to it (with their layout: positions, then keyword
    names); returns the arguments' cotangents (those the callee took as its parameters' whole cotangents
    now None: they come back in its result), the views' and the pullback's result."""
    if len(w) > 8 and w[8] is not None:
        _unhanded_refused(w, douts)
    cells = w[9] if len(w) > 9 else None
    if cells is not None and dself is None:  # (the caller's cotangents of arrays the callee's cells hold)
        douts = list(douts)
        dself = Tangent({name: douts[j] for j, name in cells})
        for j, _ in cells:
            douts[j] = None
        douts = tuple(douts)
    elif cells is not None:
        cells = None
    dargs, douts, handed = call_merge(w, dargs, douts, S)
    if len(w) > 7 and w[7] is not None and dself is None:  # (see call_views: the C method's own array)
        dself, douts = douts[w[7]], (*douts[:w[7]], None, *douts[w[7] + 1:])
    if w[5] is not None:
        douts = list(douts)
        for j, o in w[5]:
            douts[j] = _into_boxes(S, o, douts[j], w[6])
        douts = tuple(douts)
    for i, holder, entries in w[4] or ():  # (arrays the method's object or an argument holds, changed by the
        if i == _CAPTURED:                  # call: their views' cotangents in its box)
            S.box(holder)  # (a closure's cell: its box is where the callee's adjoint reads it)
        elif i < 0:
            dself = S.box(holder, dself)
        else:
            dargs = (*dargs[:i], S.box(holder, dargs[i]), *dargs[i + 1:])
        douts = _held_into_boxes(S, entries, douts)
    S.dargs_in = (pb, handed, w[3])
    if len(w) > 7 and pb[0] in runtime.HELD_BACKS:  # (a C rule's: the caller's cotangents of its arguments,
        S.dins = dargs                               # as the adjoint hands them when there is no `w`)
    try:
        r = pb[0](pb, g, dself, S)
    finally:
        S.dargs_in = None
    took, S.took = S.took, 0
    if took:
        dargs = tuple(None if took >> i & 1 else c for i, c in enumerate(dargs))
    if cells is not None and type(r[0]) is Tangent:  # (the cells' cotangents before the call: the caller's again)
        own = Tangent(r[0])
        douts = list(douts)
        for j, name in cells:
            douts[j] = acc(douts[j], own.pop(name, None))
        r = (own if runtime._any_given(own) else None, *r[1:])
        douts = tuple(douts)
    return dargs, douts, r


class KwTape(list):
    """The tape of a function with a `**kwargs` parameter: the dict Python made for that parameter rides
    on it (`kw`), so the pullback reads what reached that dict's box (items read through its views)."""
    __slots__ = ("kw",)

    def __init__(self, kw):
        super().__init__()
        self.kw = kw


def match_guard(subject, what="a `match` on"):  # what: "a `match` on", "a set of"
    """Before a `match` on a value (or a set display of values) the analysis could not prove constant:
    refused if it may carry a derivative (pattern bindings and set members would carry it unseen). A set of
    objects held by their identity (`containers.constant_member`) is not: they carry their own boxes."""
    if what == "a set of" and isinstance(subject, (set, frozenset)) and all(_constant_member(m) for m in subject):
        return
    if runtime._any_differentiable((subject,), _NOKW):
        raise runtime.UnsupportedFunction(
            f"reverse mode cannot transform {what} differentiated values", where=runtime._user_line(),
            fix="give the function a custom adjoint (`@contexts.custom_adjoint`), or rewrite that part "
                "(`if` tests for a match, a list for a set)")


def _holds_numbers(v, depth: int) -> bool:
    """v is or holds (in its fields and containers, a few levels deep) a number or array of numbers: what a
    context manager built from differentiated values keeps (contextlib's generator-made ones: their
    arguments; sklearn's `config_context(...)` holds flags and its generator)."""
    if isinstance(v, (float, complex, np.floating, np.complexfloating)) or type(v) is _Dual:
        return True
    if isinstance(v, np.ndarray):
        return v.dtype.kind in "fcO"
    if depth >= 3 or isinstance(v, (str, bytes, int, type, types.FunctionType, types.GeneratorType,
                                    types.ModuleType, types.MethodType)) or v is None:
        return False
    if isinstance(v, (list, tuple, set, frozenset)):
        return any(_holds_numbers(e, depth + 1) for e in v)
    if isinstance(v, dict):
        return any(_holds_numbers(e, depth + 1) for e in v.values())
    return has_fields(v) and any(_holds_numbers(e, depth + 1) for e in fields_of(v).values())


def not_swallowed() -> None:
    """At the start of each `except` handler of a twin: a refusal being handled is raised again
    (`overdub.errors.not_swallowed`), and so is an error that left a call whose recorded work it lost
    (`runtime._note_lost`): the derivative of what the call stored before raising is not recorded."""
    frame = sys._getframe(1)
    _not_swallowed(frame)
    if (lost := lost_work(frame)) is not None:
        e = sys.exc_info()[1]
        raise runtime.UnsupportedFunction(
            f"reverse mode cannot follow the derivative of what {lost} stored before it raised "
            f"{type(e).__name__}, caught here: the recording of its work ends with the raise",
            where=f"{frame.f_code.co_filename}:{frame.f_lineno}",
            fix="return a value instead of raising it (or store after the test that raises), or use forward mode "
                "(jacfwd, derivative)") from e


def refused_exit(m) -> None:
    """`__od_refused_exit__` at the start of the handler of a `with m:` run as its calls (`codegen.entered`): a
    refusal going through is no exception of the block's, whose `__exit__` might swallow it; m is left as the
    block's end leaves it (`m.__exit__(None, None, None)`), natively, before the refusal goes on (it did not:
    a `redirect_stdout` stayed redirected after reverse mode refused inside it, rayoptics, sweep U)."""
    if refused(sys.exc_info()[1]):
        m.__exit__(None, None, None)


class _Watched(Unswallowing):
    """`with m:` in reverse mode's twins (`__od_watched__`): m's own `__enter__` and `__exit__` (a refusal is not
    its to swallow); where `__exit__` swallows an exception that left a call whose recorded work it lost (a
    method that stored, then raised, inside `contextlib.suppress`: the store's derivative was lost, 1.8 for
    2.8), refused as a handler catching it is (`not_swallowed`)."""
    __slots__ = ()

    def exit(self, et, ev, tb):
        if ev is not None and _carries_values(ev):
            # (its Python `__exit__` is handed an exception holding a value: what it reads of it, `self.val =
            # e.args[0]`, carried no derivative, 0 for 5, gen21 W5)
            caught(ev)
        swallowed = self.m.__exit__(et, ev, tb)
        if swallowed and ev is not None and (lost := own_dict(ev) or {}).get("__od_lost__") is not None:
            raise runtime.UnsupportedFunction(
                f"reverse mode cannot follow the derivative of what {lost['__od_lost__']} stored before it raised "
                f"{type(ev).__name__}, swallowed by a `with {type(self.m).__name__}(...)`: the recording of its "
                "work ends with the raise", where=runtime._user_line(),
                fix="return a value instead of raising it (or store after the test that raises), or use forward "
                    "mode (jacfwd, derivative)") from ev
        return swallowed


class _EnteredAs(_Watched):
    """`with m as v` on a manager that may hold a derivative (`__od_entered_as__`): the statement runs its
    `__enter__` natively, so v carries no derivative of what it was computed from. Refused where m, or what
    its `__enter__` gives, holds a number (`_holds_numbers`): what is left is a manager of settings, pools or
    files (scipy's `MapWrapper(map)`, whose `__enter__` gives itself)."""
    __slots__ = ()

    def __enter__(self):
        m = self.m
        if type(m) is WatchedManager:  # (what it yields is checked as it is entered: `ad.managers`)
            return m.__enter__()
        held = _holds_numbers(m, 0)
        if not held:
            v = m.__enter__()
            if _holds_numbers(v, 0):
                m.__exit__(None, None, None)  # (entered: left again before the refusal)
                held = True
        if held:
            raise runtime.UnsupportedFunction(
                f"reverse mode cannot differentiate `with ... as` on a {type(m).__name__} holding a number: the "
                "statement runs its `__enter__` natively, and the value it gives carries no derivative",
                where=runtime._user_line(),
                fix="call `__enter__`/`__exit__` explicitly (`v = m.__enter__()` ... `m.__exit__(None, None, "
                    "None)`), which reverse mode differentiates, or compute the value outside the `with`; forward "
                    "mode (`contexts.derivative`, `jvp`) follows the `with` as it is")
        return v


def entered_as(m):
    """`__od_entered_as__`: m, checked when entered (`_EnteredAs`)."""
    return _EnteredAs(m)


def watched(m):
    """`__od_watched__`: m, or its `_Watched` where its class's `__exit__` is Python code (which may swallow)."""
    return _Watched(m) if type(getattr(type(m), "__exit__", None)) is types.FunctionType else m


def managed(m) -> None:
    """Before `with m:` of a manager that may hold a derivative: refused where its class's `__enter__` or
    `__exit__` is Python code, which the `with` statement runs natively (what it stores, a setting in a
    class attribute or a module's dict read in the body, carried no derivative: 2.25 for 6.75)."""
    cls = type(m)
    if cls is WatchedManager:  # (a generator manager of harmless code, watched as it runs: `ad.managers`)
        return
    if (type(getattr(cls, "__enter__", None)) is types.FunctionType
            or type(getattr(cls, "__exit__", None)) is types.FunctionType) and _holds_numbers(m, 0):
        raise runtime.UnsupportedFunction(
            f"reverse mode cannot differentiate `with` on a {cls.__name__} holding a differentiated value: the "
            "statement runs its `__enter__` and `__exit__` natively", where=runtime._user_line(),
            fix="call them explicitly (`m.__enter__()` ... `m.__exit__(None, None, None)`), which reverse mode "
                "differentiates; forward mode (`contexts.derivative`, `jvp`) follows the `with` as it is")


def _carries_values(e) -> bool:
    """Exception e, or one it was raised from or while handling (its `__cause__`, `__context__`), holds a
    value that may carry a derivative."""
    for _ in range(8):
        if e is None:
            return False
        if runtime._may_differ((e.args, getattr(e, "__dict__", None)), 0):
            return True
        e = e.__cause__ or e.__context__
    return False


def caught(e=None):
    """At the start of an `except ... as e` handler that reads e (or one that asks `sys.exc_info()`: e None,
    the exception being handled): reverse mode follows no derivative from a raise to its handler (`raise
    ValueError(x)` ... `except ValueError as e: y = e.args[0]`, a generator's `StopIteration(value)`), so an
    exception holding a value that may carry one is refused, and one raised from such an exception (its
    `__cause__`, `__context__`: `r.__cause__.args[0]` gave 0 for 2, gen21 W5); one holding text and
    integers (nearly all) passes."""
    if e is None:
        e = sys.exc_info()[1]
    if _carries_values(e):
        raise runtime.UnsupportedFunction(
            f"reverse mode cannot follow a derivative through the {type(e).__name__} caught here: it holds a "
            f"value that may carry one ({e!r:.80})", where=runtime._user_line(),
            fix="return the value instead of raising it, or give the function a custom adjoint "
                "(`@contexts.custom_adjoint`); forward mode (`contexts.derivative`, `jvp`) follows it")


def _by_identity(key) -> bool:
    """A key hashed and compared by identity alone (an object of a class with neither `__eq__` nor
    `__hash__` of its own, or a tuple of those and constants: chaospy's `cache[idx, self]`): what it holds
    is not its value as a key."""
    if type(key) is tuple:
        return all(_by_identity(k) or not runtime._may_differ(k, 0) for k in key)
    cls = type(key)
    return cls.__flags__ & HEAPTYPE and _identity_methods(cls) \
        and not isinstance(key, (numbers.Number, np.ndarray, list, dict, tuple, set))


def _key_parts(key, parts):
    """The items of tuple key at positions `parts` (those the analysis could not prove constant: codegen's
    `key_check`), or key itself."""
    if parts is None or type(key) is not tuple or len(key) <= max(parts):
        return key
    return tuple(key[i] for i in parts)


def key_guard(obj, key, parts=None):
    """Before a dict is keyed by a value the analysis could not prove constant (`{x: v}`, `d[x] = v`): keys
    carry no cotangent back, so one that may carry a derivative is refused (read back as a number by
    `list(d)`, `d.items()`, it would be a constant). `parts`: the positions of a tuple key's items that may."""
    if isinstance(obj, dict) and runtime._may_differ(_key_parts(key, parts), 0) and not _by_identity(key):
        raise runtime.UnsupportedFunction(
            "reverse mode cannot key a dict by a differentiated value: the keys carry no derivative back",
            where=runtime._user_line(),
            fix="key the dict by something that does not depend on the inputs (an index, a name) and keep "
                "the value among the dict's values")


def inert_read(v, attr: str) -> None:
    """`t = x.dtype` of a differentiated x, taken for a constant (`activity.INERT_ATTRIBUTES`): refused where
    what was read may carry a derivative (an object's own attribute of that name holding a number or an array;
    a dtype of any library's, pandas' `StringDtype`, holds none)."""
    if isinstance(v, (numbers.Number, np.ndarray, np.generic, list, tuple)) and runtime._may_differ(v, 0):
        raise runtime.UnsupportedFunction(
            f"reverse mode takes `.{attr}` for a description of a value, not a value, and this one holds a "
            f"{type(v).__name__}", where=runtime._user_line(),
            fix=f"name the attribute otherwise than `{attr}`, or give the function a custom adjoint "
                "(`@contexts.custom_adjoint`)")


def state_box(S, name: str, d, scope: dict):
    """A module list's or dict's cotangent left at the end of an adjoint (`codegen`'s `module_containers`): moved
    into the box of the object the module's global `name` holds."""
    if d is None or type(v := scope.get(name)) not in (list, dict):
        return d
    S.box(v, d)
    return None


def number_item(v) -> None:
    """An item drawn from a parameter the twin took for a list or tuple of numbers (codegen's `_number_draws`,
    checked where the call bound it): a list changed since holds something else, refused."""
    if type(v) not in runtime.NUMBERS:
        raise runtime.UnsupportedFunction(
            f"reverse mode took the items of this loop for numbers, as the list held when the function was called, "
            f"and drew a {type(v).__name__}: the list was changed while the function ran",
            where=runtime._user_line(),
            fix="pass the function a list it does not change, or give it a custom adjoint (`@contexts.custom_adjoint`)")


def key_lookup(obj, key, parts=None):
    """Before `d[k]`, `d.get(k)`, `d.pop(k)`, `d.setdefault(k)` with k differentiated: a hit is refused
    (`containers.refuse_differentiated_key`: the entry's value was not computed from this key). `parts`: the
    positions of a tuple key's items that may carry a derivative (`key_guard`)."""
    differs = runtime._may_differ(_key_parts(key, parts), 0) and not _by_identity(key)  # (an object by its identity)
    if differs and subscripts_a_class(obj):
        raise class_subscript_refused(obj)
    if isinstance(obj, (dict, types.MappingProxyType)) and (differs or remembered_text((key,))):
        refuse_differentiated_key(obj, key)  # (a differentiated value's text too: a memo keyed by f"{t:.10g}")
    if differs and type(obj).__flags__ & HEAPTYPE and type(getter := getattr(type(obj), "__getitem__", None)) is types.FunctionType \
            and not is_engine_class(type(obj)) and not isinstance(obj, ArrayLeaf):
        # (forward mode's duals under hessian: the engine's own; a JAX array's indexing: its library's)
        # (a class's own `__getitem__` runs natively: one storing the differentiated key loses its derivative)
        refuse_storing_method(getter, "[]", type(obj))


def live_loop(kind, fns, *objs) -> bool:
    """Reverse mode's `__od_live__`: as every mode's (`lowered.runtime.live`), and refused where the loop
    as written would iterate a changeable container the body changes (a deque, a list or dict subclass of
    its own iteration, an array subclass): reverse mode draws such a loop's items before its body runs."""
    if _live(kind, fns, *objs):
        return True
    if kind.startswith("?"):  # (no change seen: the loop as written, as before)
        return False
    items_only = kind.startswith("!")  # (a change seen only through the loop's items, `kernel(x, bw=bw)` of the
    # target `bw`: an item of a 1-d array is a number, which nothing changes in place; KDEpy's NaiveKDE was refused)
    for o in objs:  # (not a dict's or set's keys, drawn live: biopython's `for aa in d: d[aa] = ...` is right)
        if items_only and type(o) is np.ndarray and o.ndim == 1:
            continue
        if isinstance(o, (list, collections.deque)) or isinstance(o, np.ndarray) and type(o) is not _Dual \
                or isinstance(o, dict) and kind != "seq":
            raise runtime.UnsupportedFunction(
                f"reverse mode cannot differentiate a loop over a {type(o).__name__} that its body changes: it "
                "draws the loop's items before the body runs", where=runtime._user_line(),
                fix="loop by index (`for i in range(len(xs))`), or over a list or array")
    return False


_LIST_ITER = type(iter([]))
_TUPLE_ITER = type(iter(()))


def enumerate_at(it):
    """The loop `for v in it` as (position, item) pairs: positions in it's sequence, so a loop over a
    partly consumed list iterator (`next(it)` first) puts each item's cotangent at its own place. Each
    position is read at its draw: the body may draw from it too (a nested `for w in it: ... break`, a
    `next(it)`), past the items the loop sees (the outer loop's items counted one by one: 63 for 64)."""
    if type(it) is _LIST_ITER or type(it) in runtime.POSITIONED:
        r = it.__reduce__()
        if len(r) == 3:
            return _positions(it)
    return enumerate(it)


def enumerate_views(it, src=None):
    """`enumerate(it)` for a loop whose body changes memory in place, over `iter(src)`. Where src is an
    object whose `__iter__` gave a list's or tuple's iterator (a generator method, drawn eagerly), an item
    that is or holds a view of an array is refused: its cotangent waits in that iterator, which no change
    sees, until the loop is undone, after the changes of earlier passes that shared its memory (`for w in
    Blocks(a): w[1] += w[0]`, whose `__iter__` yields `self.a[i:i + 2]`: 0 for 1, gen19 W7)."""
    if (type(it) is _LIST_ITER or type(it) is _TUPLE_ITER) and type(src) is not list and type(src) is not tuple:
        r = it.__reduce__()
        if len(r) == 3 and type(r[1][0]) in (list, tuple):  # (not a subclass's own indexing: importlib's
            for v in r[1][0][r[2]:]:                          # EntryPoints, whose [i:] is a KeyError)
                _view_refused(v, it)
    return enumerate(it)


def _view_refused(v, it):
    for u in (v if type(v) is tuple else (v,)):
        if type(u) is _Dual:  # (forward over reverse: its value's)
            u = primal(u)
        if isinstance(u, np.ndarray) and u.base is not None:
            raise runtime.UnsupportedFunction(
                "reverse mode cannot differentiate a loop that changes memory in place over views of an "
                f"array drawn from an iterator ({type(it).__name__}: a generator's, map's or itertools' items; "
                "their cotangents reach the array only after the loop is undone, too late for the changes "
                "of earlier passes)", fix="loop over a list of the views instead: `for w in list(...)`")


def _positions(it):
    reduce, draw = it.__reduce__, it.__next__
    while True:
        r = reduce()
        try:
            v = draw()
        except StopIteration:
            return
        yield r[2], v


def _dropped(ga, g, a, b):
    """The inlined array product's cotangent ga (`codegen`'s fast path) with 0 where the result a * b is
    not finite and g is 0 (`generic.dropped_nan_zero`); the product made again only then."""
    if type(ga) is _NDARRAY and ga.dtype is _F8_DTYPE and (ones := _ONES.get(ga.shape)) is not None and _isfinite(
            ga.dot(ones)):
        return ga  # (`finite_f8`'s first case, inline: this runs per inlined product)
    if type(ga) is _NDARRAY and (generic.finite_f8(ga) if ga.dtype is _F8_DTYPE else np.isfinite(ga.sum())):
        return ga
    return dropped_nan_zero(ga, g, lambda: a * b)


_ONES = generic._ONES  # (`generic.sum_f8`'s vectors of ones, by shape)


_F8_DTYPE = np.dtype(np.float64)
_isfinite = math.isfinite


HELPER_IMPLS = {
    "__od_call__": runtime.call, "__od_hot_float__": runtime.hot_float_call, "__od_acc__": acc, "__od_binop_adj__": binop_adj,
    "__od_getattr_adj__": getattr_adj, "__od_getitem_adj__": getitem_adj,
    "__od_getitem_index_adj__": getitem_index_adj, "__od_display_adj__": display_adj,
    "__od_cell_cot__": cell_cot, "__od_setattr__": setattr_,
    "__od_setattr_adj__": setattr_adj, "__od_setitem__": setitem, "__od_setitem_adj__": setitem_adj,
    "__od_delitem__": delitem, "__od_delitem_adj__": delitem_adj,
    "__od_delattr__": delattr_, "__od_delattr_adj__": delattr_adj, "__od_global_store__": global_store, "__od_global_read__": global_read, "__od_state_call__": state_call,
    "__od_enumerate__": enumerate, "__od_enumerate_views__": enumerate_views, "__od_enumerate_at__": enumerate_at, "__od_slice_cot__": slice_cot,
    "__od_iop__": iop,
    "__od_iop_adj__": iop_adj, "__od_iop_views__": iop_views, "__od_ndarray__": np.ndarray,
    "__od_f8__": np.dtype(np.float64),
    "__od_views__": views, "__od_bound__": bound, "__od_plain_cells__": plain_cells, "__od_views_merge__": views_merge,
    "__od_changes__": CHANGES, "__od_call_views__": call_views, "__od_spread_changed__": spread_changed, "__od_call_merge__": call_merge,
    "__od_call_viewed__": call_viewed, "__od_kw_tape__": KwTape, "__od_kw_spread__": kw_spread,
    "__od_match_guard__": match_guard, "__od_dict_parts__": dict_parts, "__od_caught__": caught,
    "__od_not_swallowed__": not_swallowed, "__od_managed__": managed, "__od_watched__": watched, "__od_entered_as__": entered_as,
    "__od_key_guard__": key_guard, "__od_key_lookup__": key_lookup, "__od_number_item__": number_item, "__od_state_box__": state_box, "__od_inert_read__": inert_read, "__od_dropped_op__": dropped_op, "__od_converted_store__": converted_store,
    "__od_plain_values__": frozenset({float, int, complex, bool, np.float64, np.ndarray, np.complex128}),
    "__od_primal__": asked_primal, "__od_instance_of__": instance_of, "__od_rounded__": rounded, "__od_getattr__": getattr_, "__od_module__": _MODULE, "__od_setattr_views__": setattr_views,
    "__od_setattr_merge__": setattr_merge, **LOWERING_HELPERS, "__od_iter_guard__": iter_guard, "__od_lazy_stamp__": lazy_stamp, "__od_lazy_guard__": lazy_guard,
    "__od_live__": live_loop,
    "__od_duration__": _duration, "__od_loop_item_adj__": loop_item_adj, "__od_loop_box__": loop_box, "__od_dropped__": _dropped, "__od_binop__": observe.plain_binop, "__od_unary_adj__": unary_adj, "__od_float64__": np.float64, "__od_object__": np.dtype(object),
    "__od_native_items__": frozenset({list, tuple, dict, np.ndarray, str}), "__od_subscript__": subscript,
    "__od_subscript_adj__": subscript_adj, "__od_type__": type,
    "__od_held_backs__": runtime.HELD_BACKS, "__od_viewed__": Viewed, "__od_bare__": Bare,
    "__od_guard_cells__": runtime.guard_cells, "__od_closure_arrays__": runtime.closure_arrays,
    "__od_refused_exit__": refused_exit,
    "__od_closure_made__": runtime.closure_made, "__od_unguard__": runtime.unguard, "__od_held__": held,
    "__od_one_backs__": runtime.ONE_BACKS, "__od_pull_one__": runtime.pull_one,
    "__od_float_back__": runtime._float_back, "__od_zero_division__": ZeroDivisionError,
}
assert set(HELPER_IMPLS) == set(HELPERS)
HELPER_CELLS = {k: types.CellType(v) for k, v in HELPER_IMPLS.items()}
# the helpers of observed twins (contexts.ad.observe): the same, but for the three that report
OBSERVED_CELLS = {**HELPER_CELLS, "__od_call__": types.CellType(observe.observed_call),
                  "__od_hot_float__": types.CellType(lambda f, x: None),  # (every call `observed_call`'s)
                  "__od_binop__": types.CellType(observe.observed_binop),
                  "__od_binop_adj__": types.CellType(observe.observed_binop_adj)}