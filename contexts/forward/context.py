"""The forward-mode context: operators are the Duals' business; calls are ours.

For a call whose positional arguments hold Duals: the registry's frule if there is one (math.sin, C
functions), else recursion into pure-Python code (Duals flow through control flow, closures, objects),
else the function itself (builtins such as `max` or `sorted` work on Duals through their operators),
and if that tries to turn a Dual into a float, a `NoForwardRule` error naming the function and the site.
"""

from __future__ import annotations

import dataclasses
import collections.abc
import functools
import inspect
import numbers
import itertools
import operator
import os
import struct
import collections
import types

import numpy as np

import overdub
from overdub.errors import OverdubError
from overdub.passes import bound_self, marked_opaque, method_function

from ..lowered.bisection import bisects, refuse_bisection, steps_on_free
from ..rules.builtins import _check_int as int_jump
from ..lowered.runtime import (STAIRS, TEXT_IDS, printed, text_join, DerivedText, TEXT_TYPES, TEXTS_MADE, text_compared, texts_through, dataclass_init, dataclass_init_as, dataclass_init_is_code,
                               generated_init_owner, is_stair as _stairs, parsed_astype, remembered_text,
                               stair_jump_guard, divisor_jump, staircase_text as fine_staircase, staircased, text_call, text_of)
from ..rules.watch import JUMP_WATCH, watch_call
from ..rules.builtins import py_reduce
from ..rules.containers import SEQUENCE_FORMS, class_subscript_refused, holds, subscripts_a_class
from ..rules.numpy.reductions import UFUNC_METHOD_OUT
from ..rules.numpy.inplace import refuse_overlapping_out
from ..rules.numpy.stand_ins import store_part
from ..rules.numpy.creation import python_ufunc_method
from ..rules.numpy.stand_ins import vectorized
from ..rules.frames import is_engine, note_transformed
from ..rules.leaves import ARRAY_TYPES, ArrayLeaf, holds_array_leaf, runs_natively, taken_per_element

from ..rules.registry import array_objects, by_position, key_of, objects_of_classes, registry, through_array
from ..rules.numpy._util import masked_entries
from .arrays import (OWN_FUNCTIONS, keyword_duals_by_position, JOINS, CHECKED_TESTS, checked_test, NoForwardRule, apply_frule, apply_writing_frule, build_array, checked_equality, EQUALS,
                     has_dual, no_rule,
                     out_position, to_array, write_out)
from .observe import DerivativeOp, Observed, observer
from .observe import _check as _checking
from .dual import (LENT, OPERATOR_CODES, Dual, DualAttributeError, DualConversionError, _conversion_site, as_python_number, numpy_scalar_dual,
                   primal, primal_tree, split, top_tag, zero_tangent)
from .holds import dual_free
from .tangent_runtime import LOOKUPS, MAPPINGS, key_lookup, uncached

_GETITEM = operator.getitem
_SETITEM, _DELITEM = operator.setitem, operator.delitem
_OBJECT_SETATTR = object.__setattr__
_SLOT_METHOD = type(object().__setattr__)  # (a bound slot, `obj.__setattr__` of a class that keeps object's)
_BUILTIN_METHOD = types.BuiltinMethodType

__all__ = ["ForwardContext", "ObservedForwardContext", "forward_context", "run_inside", "pushforward"]

_ARRAY_BUILDERS = {np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray, np.asarray_chkfinite}
# looked up by identity: a callable object may be unhashable (a class defining __eq__ only, as
# scikit-learn's kernels do), and `fn in a_set` would raise TypeError
_ARRAY_BUILDER_IDS = frozenset(map(id, _ARRAY_BUILDERS))
_RULES_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # contexts/
# arrays the function makes itself, to be filled later (`K = np.empty((s, n)); K[0] = f`): a float array
# is made as a dual of zero tangent, so the values stored into it keep their derivatives
# (not in numpy's own Python code: np.identity fills its np.zeros through `.flat`, which a dual lacks; nor
# in the rules, which make their dual arrays themselves)
_FRESH_IDS = frozenset(map(id, (np.empty, np.zeros, np.ones, np.full, np.empty_like, np.zeros_like, np.ones_like,
                                 np.full_like, np.eye, np.identity, np.tri,  # (`T = np.eye(4); T[:3, :3] = R`)
                                 np.repeat, np.tile)))  # (finoptions' trinomial tree: `V = np.repeat(0.0, 2 * n + 1)`,
# then `V[i] = max(a, b)` of differentiated values: refused as a store into a plain array)
_NOT_FRESH = (os.path.dirname(np.__file__) + os.sep, _RULES_DIR + os.sep)
_ATLEAST_IDS = frozenset(map(id, (np.atleast_1d, np.atleast_2d, np.atleast_3d)))  # (lists taken as arrays)
_DISPATCHER = type(np.sum)
_POLY1D_FUNCTIONS = np.polymul._implementation.__module__  # (numpy.lib._polynomial_impl)
_NUMPY_DISPATCHED = (np.ufunc, _DISPATCHER)  # these reach Dual.__array_ufunc__/__array_function__


_ENTRY_MODULES = ("contexts.forward", "contexts.ad", "contexts.sparsity", "contexts.debug", "overdub")


_MOD = operator.mod


def _values_of(v):
    """v with its duals as their values (a tuple's or a dict's too), for text."""
    while type(v) is Dual:
        v = v.primal
    if type(v) is tuple:
        return tuple(_values_of(e) for e in v)
    if type(v) is dict:
        return {k: _values_of(e) for k, e in v.items()}
    return v


_FULL_LIKE = np.full_like

_C_BOUND = type("".join)  # (a C method bound to its object)
TEXT_JOINERS = (str, DerivedText)


def _native(fn) -> bool:
    """fn handles Duals by itself: numpy's protocols, the operator module, a Dual's own methods, the
    entry points of the contexts (they run their own context; rules in contexts.rules are recursed)."""
    module = getattr(fn, "__module__", None) or ""
    return (isinstance(fn, _NUMPY_DISPATCHED) or module == "_operator"
            or module.startswith(_ENTRY_MODULES) or type(bound_self(fn)) is Dual
            and not (type(fn) is types.MethodType and type(fn.__func__) is types.FunctionType
                     and not _engine_code(fn.__func__)))  # (a float subclass's method, bound to its dual)


def _convert(kind, x, tangent: bool = False):
    """float(x) / complex(x) keeping the perturbation: the primal is converted, the tangent too (a chunk of
    directions' tangents, an array, at any depth: forward over forward's tangent is a dual of them).
    float() of a dual of Python floats is that dual, as float() of a float is the float (`float(u) is u`
    took the other branch under duals: jacfwd 3 for 2)."""
    if kind is float and not tangent and _of_floats(x):
        return x
    if type(x) is not Dual:
        if tangent and type(x) is np.ndarray and x.ndim:
            return x.astype(np.result_type(x.dtype, 1.0 if kind is float else 1j), copy=False)
        return kind(x)
    t = x.tangent
    if isinstance(t, (numbers.Number, np.generic)) and type(t) is not Dual:
        t = kind(t)
    elif type(t) is Dual:
        t = _convert(kind, t, True)
    return Dual(_convert(kind, x.primal, tangent), t, x.tag)


def _of_floats(x) -> bool:
    """x is a Dual whose primals and tangents, at every depth, are Python floats or float64 arrays (what
    `_convert(float, x)` would rebuild unchanged)."""
    if type(x) is not Dual:
        return False
    for part in (x.primal, x.tangent):
        if not (type(part) is float or type(part) is Dual and _of_floats(part)
                or part is x.tangent and type(part) is np.ndarray and part.dtype == np.float64):
            return False
    return True


class ForwardContext(overdub.Context):
    """Runs functions on Duals, handling the calls that cannot know about them.

    >>> import math
    >>> from contexts.forward import ForwardContext, Dual, Tag
    >>> t = Tag()
    >>> y = ForwardContext().run(lambda x: math.sin(x) * x, Dual(0.0, 1.0, t))
    >>> (y.primal, y.tangent)
    (0.0, 0.0)
    """

    # getattr: a property with a pure-Python getter runs under the context (`kf.log_likelihood`, scipy's
    # `Covariance.log_pdet`), as a call would; any other attribute is read as Python reads it
    # setattr: an attribute stored on a number object (a float subclass's instance, a dual here) goes to its
    # value; a descriptor's Python `__set__` and a property's setter run under the context
    # getitem: a dict looked up by a perturbed key (a hit is refused: `key_lookup`); anything else as Python
    # binop, augop, unaryop, compare, iter, truth, with: an object's own special methods in Python run under
    # the context (`operator_for`), not natively on duals, where `isinstance(self.v, float)` would answer for
    # the dual
    # setitem, delitem: a class's own Python `__setitem__`/`__delitem__` runs under the context (trimesh's
    # `DataStore.__setitem__` asked `isinstance(data, np.ndarray)` of the dual natively: another branch)
    intercepts = frozenset({"call", "getattr", "setattr", "getitem", "setitem", "delitem", "binop", "augop",
                            "unaryop", "compare", "iter", "truth", "with"})
    read_attribute = "attribute"
    operate = "operator_for"
    tag = None  # the derivative call's tag: arrays made by np.empty/zeros/ones/full carry it (see _fresh)
    outer: tuple = ()  # the tags of outer derivative calls its inputs carry (nested duals): those arrays' too

    def attribute(self, obj, name, *default):
        """`obj.name` in the code run: a property's pure-Python getter runs under the context. (A type
        that is not a heap type, a module's or numpy's, holds no such property: read at once.)"""
        kind = type(obj)
        if kind is Dual:
            if _number_object(obj):  # `lat.toRadians()`, `lat.name` of a float subclass's value
                return _number_attribute(self, obj, name, default)
            if name == "__class__":
                # the value's class, as `type(x)` answers (`activity.ask_primals`): cvxpy's
                # `constant.__class__ in INTERFACES` took a perturbed array for an unknown type, and
                # functools.singledispatch (`dispatch(args[0].__class__)`) ran its fallback for a float
                return type(primal(obj))
        if kind.__flags__ & _HEAPTYPE:
            found = _class_getter(obj, name)
            if found is not None and not _engine_code(found[0]):
                try:
                    return self.recurse(*found)
                except AttributeError:  # (a getter raising it, pint's `q.shape` of a float: `getattr(q, "shape",
                    fallback = getattr(kind, "__getattr__", None)  # False)`): `__getattr__`, then the default
                    try:
                        if type(fallback) is types.FunctionType and not _engine_code(fallback):
                            return self.recurse(fallback, obj, name)
                        raise
                    except AttributeError:
                        if default:
                            return default[0]
                        raise
            fallback = getattr(kind, "__getattr__", None)
            if type(fallback) is types.FunctionType and not _engine_code(fallback):
                # a class's `__getattr__`, which Python calls when the lookup fails: under the context too
                try:
                    return kind.__getattribute__(obj, name)
                except AttributeError:
                    try:
                        return self.recurse(fallback, obj, name)
                    except AttributeError:
                        if default:
                            return default[0]
                        raise
        return getattr(obj, name, *default)

    def operator_for(self, fn):
        """What an operator site (`a * b`, `a += b`, `-a`, `a < b`, `x in a`, `for v in a`) calls with its
        operands: fn itself, unless an operand's class has special methods of its own in Python for it:
        those run as code under the context (Python's dispatch written out: `overdub.ops.dispatch`).
        Natively they would run on duals, where `isinstance(self.v, float)` answers for the dual and the
        code takes another branch than it does on the value (`U(x) ** 2` gave 0)."""
        route = overdub.ops.own_methods_route(fn, self.recurse, runs_natively, functools.partial(
            _array_with_object, convert=functools.partial(self.recurse, through_array(np.asarray, True))))
        if fn in _MASK_FREE:
            return _mask_free(route)
        if fn is operator.eq or fn is operator.ne:
            return _texts_checked(route, "==" if fn is operator.eq else "!=")
        if fn is not _MOD:
            return route

        def mod(a, b):
            if isinstance(a, str) and has_dual(b):
                # `"%.3e" % x`: a log line's text, of the values (str's formatting asked float() of the dual:
                # refused, gen21 R1); remembered, as `format(x, ...)`'s, so that parsing it back is refused
                return text_of(a % _values_of(b), 0.5)
            try:
                return route(a, b)
            except TypeError as e:  # (`"%f" % obj` by its class's `__float__`, run natively on the duals it holds)
                if (refusal := converted_in_c(e, operator.mod, None)) is not None:
                    raise refusal from e
                raise
        return mod

    def store_attribute(self, obj, name, value):
        """`obj.name = value` in the code run: on a float subclass's value (a dual), stored on the value
        object itself (its name, its units: what the class keeps beside the number); a descriptor's
        Python `__set__` or a property's Python setter runs under the context."""
        kind = type(obj)
        if kind is Dual:
            if _number_object(obj):
                return setattr(_number_value(obj), name, value)
            if name in ("real", "imag") and isinstance(primal(obj), np.ndarray):
                return self.recurse(store_part, obj, name, value)  # (`z.real = v`: the array's store)
            try:
                return setattr(obj, name, value)  # (`x.shape = ...`)
            except AttributeError:  # (a subclass's field: np.ma's `_sharedmask`)
                raise DualAttributeError(
                    f"forward mode cannot store .{name} on a perturbed {type(obj.primal).__name__}: a dual "
                    f"holds a value and its tangent, not the fields of a subclass (a masked array's)",
                    where=_conversion_site(), fix="compute with plain arrays (`np.where` for a mask), or give the "
                    "function a forward rule (`contexts.rules.registry.frule(fn)`)") from None
        if kind.__flags__ & _HEAPTYPE and type(name) is str:
            own = kind.__setattr__
            if type(own) is types.FunctionType and not _engine_code(own):
                # a class's own `__setattr__` (which Python calls for every store), under the context
                self.recurse(own, obj, name, value)
                return None
            found = _class_setter(obj, name)
            if found is not None and not _engine_code(found[0]):
                self.recurse(*found, value)
                return None
        try:
            return setattr(obj, name, value)
        except TypeError as e:  # (a C extension's field refusing a dual: pybind11's, scipy's HiGHS `col_cost_`)
            if not has_dual(value):
                raise
            raise DualConversionError(
                f"forward mode cannot store a perturbed value into .{name} of a {kind.__name__} (a field of "
                f"compiled code, which takes plain numbers: {e})", where=_conversion_site(),
                fix="keep that value out of the differentiated computation, or give the function that fills it a "
                    "forward rule (`contexts.rules.registry.frule(fn)`)") from e

    def _drawn(self, x) -> list:
        """The items of x, a generator or an object whose class iterates in Python, drawn with that code under
        the context (its `__iter__`, or the sequence protocol over its `__getitem__`): called from C, it met
        the duals natively (`float()` of one, refused)."""
        if type(x) is not types.GeneratorType:  # (the core's `iter` runs a class's `__getitem__` alone too)
            x = self.operator_for(iter)(x)
        return list(x)

    def overdub(self, site, fn, /, *args, **kwargs):
        if TEXTS_MADE and type(fn) is _C_BOUND and len(args) == 1 and not kwargs and fn.__name__ == "join" \
                and type(fn.__self__) in TEXT_JOINERS:
            # `"".join(c for c in t if ...)` of a differentiated number's text: the text joined is one of it
            # (`runtime.DerivedText`; a generator's pieces are gone once str.join drew them)
            return text_join(fn.__self__, args[0])
        if (fn is _OBJECT_SETATTR or type(fn) is _SLOT_METHOD and fn.__name__ == "__setattr__"
                and getattr(fn, "__objclass__", None) is object) and not kwargs:
            # object's own store (`self.__setattr__(k, v)` in scikit-rf's Network, `object.__setattr__(self, k, v)`
            # in a class's own `__setattr__`): a property's Python setter or a descriptor's `__set__` under the context
            obj, (name, value) = (args[0], args[1:]) if fn is _OBJECT_SETATTR else (fn.__self__, args)
            found = _class_setter(obj, name) if type(obj).__flags__ & _HEAPTYPE and type(name) is str else None
            if found is not None and not _engine_code(found[0]):
                self.recurse(*found, value)
                return None
            return fn(*args)
        if fn is _SETITEM or fn is _DELITEM:  # `obj[i] = v`, `del obj[i]`: a class's own method under the context
            method = getattr(type(args[0]), "__setitem__" if fn is _SETITEM else "__delitem__", None)
            if type(method) is types.FunctionType and not _engine_code(method):
                self.recurse(method, *args)
                return None
            if fn is _SETITEM and len(args) == 3 and array_objects(args[2:]) and (
                    isinstance(args[0], np.ndarray) or type(args[0]) is Dual or type(method) is property):
                # `base[:] = cell` of an object numpy converts by its class's `__array__` (ase's Cell): converted
                # as code first (natively, its `__array__` met the duals it holds: refused)
                args = (args[0], args[1], self.recurse(through_array(np.asarray, True), args[2]))
            if type(method) is property and type(method.fget) is types.FunctionType \
                    and not _engine_code(method.fget):
                # a property giving the operator (ase's `arraylike`: `np.asarray(self).__setitem__`): its code under
                # the context, which converts the object as code too
                self.recurse(self.recurse(method.fget, args[0]), *args[1:])
                return None
            if fn is _SETITEM and len(args) == 3 and type(args[1]) is slice and isinstance(args[0], list) \
                    and _iterates_in_python(args[2]):
                return fn(args[0], args[1], self._drawn(args[2]))  # (`l[i:j] = seq`: drawn as code)
            return fn(*args)
        if fn is _GETITEM:  # `obj[i]`, as Python does it; a dict's hit by a perturbed key is refused
            obj, key = args
            if subscripts_a_class(obj) and has_dual(key):
                raise class_subscript_refused(obj)  # (`G[x]`, every mode's refusal)
            if isinstance(obj, MAPPINGS) and (has_dual(key) or isinstance(key, str) and remembered_text((key,))):
                key_lookup(obj, key)  # (a differentiated value's text too: a memo keyed by f"{t:.10g}")
            getitem = getattr(type(obj), "__getitem__", None)
            if type(getitem) is types.FunctionType and not _engine_code(getitem):
                # a class's own Python `__getitem__` runs under the context (`np.r_[frow, eye]` on duals)
                return self.recurse(getitem, obj, key)
            return obj[key]
        if fn is len and len(args) == 1 and not kwargs:
            # a class's own Python `__len__` runs under the context: natively, `isinstance(self.value,
            # np.ndarray)` there saw the dual (physipy's Quantity took its scalar branch: a length of 1 for 3)
            method = getattr(type(args[0]), "__len__", None)
            if type(method) is types.FunctionType and not _engine_code(method):
                n = self.recurse(method, args[0])
                if not isinstance(n, int):  # (as Python's `len`: anything with `__index__`, a numpy integer too,
                    try:                    # lifelines' `_BTree.__len__` returning `self._counts[0]`)
                        n = operator.index(primal(n) if type(n) is Dual else n)
                    except TypeError:
                        raise TypeError(f"'{type(n).__name__}' object cannot be interpreted as an integer") from None
                if n < 0:
                    raise ValueError("__len__() should return >= 0")
                return int(n)
            return len(args[0])
        if (type(fn) is _BUILTIN_METHOD and fn.__name__ in LOOKUPS and args and isinstance(fn.__self__, MAPPINGS)
                and (has_dual(args[0]) or isinstance(args[0], str) and remembered_text(args[:1]))):  # `memo.get(x)`
            key_lookup(fn.__self__, args[0])
        if args and type(args[0]) is Dual and _stairs(fn) and np.any(primal(args[0].tangent)):
            stair_jump_guard(fn, args, kwargs, args[0].tangent)  # (`v % 1.3` at 2.6: exactly on a jump)
        if len(args) > 1 and type(args[1]) is Dual and _stairs(fn):  # (`divmod(9.0, b)` at b = 4.5: the jump
            divisor_jump(fn, primal(args[0]), args[1].primal, args[1].tangent)  # its divisor moves across)
        if args and type(args[0]) is Dual and _stairs(fn) and np.any(primal(args[0].tangent)) \
                and fine_staircase(fn, args, kwargs) is not None:
            # (`round(t, 10)`: a step far finer than t, marked: refused where used beyond a test; a remainder,
            # an array's: refused)
            if fn is int:
                int_jump(primal(args[0]), known=True)
            if STAIRS[fn] in ("digits", "unit"):  # (an array's: marked too, `StaircasedArray`)
                return staircased(fn, args, fn(primal(args[0]), *args[1:], **kwargs), kwargs)
            staircased(fn, args, None, kwargs)
        if (type(fn) is np.ufunc or type(fn) is _BUILTIN_METHOD) and fn in EQUALS and len(args) == 2 \
                and not is_engine(site.filename):
            checked_equality(fn, args)  # `np.equal(x, 0)` in the code run: as `x == 0`
        if type(fn) is types.MethodType and fn.__func__ is _DUAL_FLOAT and not args and not kwargs:
            fn, args = float, (fn.__self__,)  # `v.__float__()` called as a method: float(v), by its rule
        if fn is getattr and 2 <= len(args) <= 3 and not kwargs:  # `getattr(kf, "log_likelihood")`
            return self.attribute(*args)
        if fn is hasattr and len(args) == 2 and type(args[0]) is Dual and not kwargs and not is_engine(site.filename):
            # `hasattr(v, "shape")` in the user's code: False where its value has no such attribute (a float's
            # dual has a shape, a dtype and a length of its own: the code took an array's branch); where the
            # value has it, the dual's own answer (False for the inside of a number, `.numerator`: mpmath's
            # operators rely on it to hand a foreign operand to its own arithmetic)
            value = args[0]
            while type(value) is Dual:
                value = value.primal
            if not hasattr(value, args[1]):
                return False
            return hasattr(args[0], args[1])
        if fn is setattr and len(args) == 3 and not kwargs:
            return self.store_attribute(*args)
        if fn is _FLOAT_NEW and args and isinstance(args[0], type) and has_dual(args[1:]):
            return float_object(args[0], *args[1:], **kwargs)  # `float.__new__(Lat, x)` in Lat's __new__
        try:
            if id(fn) in TEXT_IDS:  # str/repr/format of a dual (its text remembered), a parse of such text
                y = text_call(fn, args, kwargs, has_dual(args), primal)
                if y is not None:
                    return y
            elif type(fn) is _BUILTIN_METHOD:  # (`texts.astype(float)`: parsed)
                parsed_astype(fn, args)
            if fn is _CLASS_MATCH:
                if not _holds_dual(args[0]):
                    return args[0]
                raise NoForwardRule("a `match` with class patterns on a perturbed value (Python's isinstance "
                                    "would answer for the dual, not its value)", where=str(site),
                                    fix="test the value with `if isinstance(...)` / `if` chains, or match on a "
                                        "value that is not differentiated")
            if (fn is map or fn is filter) and len(args) >= 2 and args[0] is not None and not kwargs:
                return _called_from_c(self, site, fn, args)
            if fn is functools.reduce and len(args) >= 2 and not kwargs and objects_of_classes(args[1:], True):
                return self.recurse(py_reduce, *args)  # (`reduce(operator.add, objs)`: their `__add__` as code)
            if type(fn) is operator.attrgetter and len(args) == 1 and not kwargs:
                # `attrgetter("k", "a.b")(obj)`: each attribute read as the code's `obj.k` is (a property's getter
                # under the context: natively it ran on the duals outside, refused)
                got = []
                for name in fn.__reduce__()[1]:
                    v = args[0]
                    for part in name.split("."):
                        v = self.attribute(v, part)
                    got.append(v)
                return got[0] if len(got) == 1 else tuple(got)
            if type(fn) is operator.methodcaller and len(args) == 1 and not kwargs:
                # `methodcaller(name, *a, **kw)(obj)` is `obj.name(*a, **kw)`, run as that call: natively
                # its arguments' duals reached a float's own method (`(0.7).__mul__(dual)`: NotImplemented)
                name, margs, mkw = _method_call(fn)
                return self.overdub(site, self.attribute(args[0], name), *margs, **mkw)
            if type(fn) is types.BuiltinMethodType and type(fn.__self__) in (list, tuple) and (
                    fn.__name__ in SEQUENCE_FORMS) and not kwargs and objects_of_classes((fn.__self__,), True):
                # `[o].count(t)`: the items' own `__eq__` handed the dual (the C loop handed its primal)
                return self.recurse(SEQUENCE_FORMS[fn.__name__], fn.__self__, *args)
            form = _python_form(fn, args)
            if form is not None:  # an object's special methods are its class's own code: run them
                return self.recurse(form, *args, **kwargs)
            if type(fn) is types.FunctionType or type(fn) is type and not site.filename.startswith(_RULES_DIR):
                # (a class's form on duals, numpy's `_array_converter`: not inside the rules, whose own
                # calls are the C ones, as reverse mode's rules run them on an outer derivative's duals)
                rule = registry.rules.get(fn)
                if rule is not None and rule.duals is not None:  # (its callback's closure may hold duals)
                    return rule.duals(*args, **kwargs)
            if kwargs and not type(fn) is types.FunctionType:
                args, kwargs = _by_position(fn, args, kwargs)
            if kwargs and "out" in kwargs:
                refuse_overlapping_out(fn, args, kwargs)  # (np.concatenate into an overlapping out=: unbuffered)
            if kwargs and type(fn) is types.FunctionType and (kw_tag := top_tag(kwargs.values())) is not None \
                    and (rule := registry.rules.get(fn)) is not None and rule.frule is not None \
                    and (moved := keyword_duals_by_position(fn, args, kwargs, kw_tag)) is not None:
                # (a Python function with a forward rule given its duals by keyword, `np.full(shape,
                # fill_value=v)`: the rule's, its positions by the signature; found by the positional
                # arguments only, numpy's own code ran and refused the dual)
                args, kwargs = moved
            if type(fn) in registry.made_stand_ins and type(fn) is not np.ufunc and (
                    has_dual(args) or has_dual(list(kwargs.values()))) and (
                    stand := registry.stand_in_of(fn)) is not None:  # (numba's: `rules.numba`; a @guvectorize's
                return self.recurse(stand[0], *stand[1], *args, **kwargs)  # `__call__` is Python: asked first)
            if type(fn) is types.MethodType and fn.__name__ == "__init__" and (
                    owner := generated_init_owner(fn.__func__, fn.__self__)) is not None:
                return self.recurse(dataclass_init_as, owner, fn.__self__, *args, **kwargs)  # (see primitive)
            tag = top_tag(args) if args else None
            if tag is None and (fn is max or fn is min) and len(args) == 1 and not kwargs and type(args[0]) in (
                    list, tuple) and not site.filename.startswith(_RULES_DIR):
                tag = top_tag(args[0])  # (`max([x, -1.0])`: the rule's, whose ties are judged; run natively, the
                # duals' own comparisons refused a tie the lowered form's run answered)
            if tag is not None and JUMP_WATCH.get() is not None:  # (a rule sampling the function: quad's)
                watch_call(fn, args, kwargs, site, str(site))
            if tag is not None and ARRAY_TYPES and _meets_array_leaf(fn, args, kwargs):
                raise _array_leaf_refused(fn, site)
            if tag is None:
                if type(fn) is np.ufunc and (stand := registry.stand_in_of(fn)) is not None:
                    return _frompyfunc_call(self, stand, args, kwargs)  # (np.frompyfunc's: its closure's duals)
                if id(fn) in _ARRAY_BUILDER_IDS and args and has_dual(args[0]):
                    return build_array(args, kwargs, fn)
                if fn is np.fromiter and args:  # (the items drawn here: numpy's C loop cannot store duals)
                    return _fromiter(*args, **kwargs)
                if id(fn) in _ATLEAST_IDS and has_dual(args):  # `np.atleast_2d([h(s) for s in sigmas])`
                    args = tuple(to_array(a) if type(a) in (list, tuple) and has_dual(a) else a for a in args)
                if type(fn) is _DISPATCHER and fn in OWN_FUNCTIONS and has_dual(args):
                    if fn in JOINS:
                        return OWN_FUNCTIONS[fn](*args, **kwargs)
                    if type(args[0]) in (list, tuple) and has_dual(args[0]):
                        # (`np.diag([q, 0.1 * q])`: numpy's dispatch does not look into the list; an `out=`
                        # written after, as numpy's dispatch does: `np.cumsum([x, y], out=a)`, gen18 C5)
                        if kwargs.get("out") is not None:
                            return write_out(fn, OWN_FUNCTIONS[fn](to_array(args[0]), *args[1:], **{
                                k: v for k, v in kwargs.items() if k != "out"}), kwargs["out"])
                        return OWN_FUNCTIONS[fn](to_array(args[0]), *args[1:], **kwargs)
                if type(fn) is _DISPATCHER and kwargs and fn in OWN_FUNCTIONS and has_dual(list(kwargs.values())):
                    # (`np.select(..., default=d)`: not dispatched on; `np.cumsum(a=v)`: its rule's by position)
                    moved = by_position(fn, args, kwargs)
                    return OWN_FUNCTIONS[fn](*moved[0], **moved[1]) if moved else OWN_FUNCTIONS[fn](*args, **kwargs)
                if type(fn) is _DISPATCHER and fn not in OWN_FUNCTIONS and registry.get(fn) is None and any(
                        type(a) in (list, tuple) and has_dual(a) for a in args) and type(
                        impl := getattr(fn, "_implementation", None)) is types.FunctionType:
                    # (numpy's Python function given a list holding duals, which its dispatch does not look into:
                    # its code, whose conversions build the dual array; `np.trim_zeros([1.0, p, q], "f")` in
                    # harold's Transfer, refused before, sweep U)
                    return self.recurse(impl, *args, **kwargs)
                if id(fn) in _FRESH_IDS and self.tag is not None and (not site.filename.startswith(_NOT_FRESH)
                                                                      or site.filename in registry.code_files):
                    return _fresh(fn(*args, **kwargs), self.tag, self.outer)
                if isinstance(fn, type) and fn.__flags__ & _HEAPTYPE and remembered_text((*args, *kwargs.values())):
                    y = _construct(self, fn, args, kwargs)  # (its code may parse the text back: geopy's Point)
                    if y is not _UNKNOWN:
                        return y
                if isinstance(fn, np.vectorize):  # (its function may read perturbed values it holds)
                    return _vectorized(self, fn, args, kwargs)
                if (type(fn) is types.FunctionType or type(fn) is types.MethodType) \
                        and (stand := registry.stand_in_of(fn)) is not None \
                        and not site.filename.startswith(_RULES_DIR):  # (a stand-in's own call: the C one)
                    # (Python code only: a C function's stand-in, `all`'s, is what the duals' own methods do
                    # natively, truth tests checked there)
                    # the primitive as Python code (`Rule.stand_in`), its duals inside a list
                    # (`statistics.mean([x, 2 * x])`: its own code converts them to exact ratios, refused)
                    return self.recurse(stand[0], *stand[1], *args, **kwargs)
                if type(fn) is types.FunctionType and fn.__code__.co_filename.startswith(_RULES_DIR) \
                        and _nondifferentiable(fn):
                    # a rule's own helper declared without derivative (a k-d tree's search on values): run on the
                    # values, as its rule says (recursed, its compiled call met the stand-in it serves, endlessly)
                    return fn(*primal_tree(args), **{k: primal_tree(v) for k, v in kwargs.items()})
                if type(fn) is types.FunctionType and fn.__code__.co_filename.startswith(_RULES_DIR) \
                        and (rule := registry.rules.get(fn)) is not None and rule.frule is not None:
                    # a rule's own primitive with a rule of its own, given duals inside a list (a stand-in's
                    # fallback to numpy's iterator of several operands, `indexing.numpy_nditer`): by its rule
                    # (recursed, its C call met the stand-in again, endlessly)
                    return self._primitive(site, fn, args, kwargs)
                if overdub.is_recursable(fn) and not _native(fn):
                    if (step := bisects(method_function(fn))) is not None and not (
                            dual_free(args) and dual_free(kwargs) and dual_free(fn)) \
                            and not steps_on_free(fn, step, args, kwargs, dual_free):
                        raise refuse_bisection(method_function(fn), step)  # (a callback's closure)
                    return self.recurse(fn, *args, **kwargs)
                builder = id(fn) in _ARRAY_BUILDER_IDS
                if (builder or isinstance(fn, _NUMPY_DISPATCHED)) and array_objects(args, builder):
                    impl = getattr(fn, "_implementation", None)
                    if type(impl) is types.FunctionType and impl.__module__ == _POLY1D_FUNCTIONS:
                        # numpy's poly1d functions take a poly1d as it is (np.polymul, np.polyval return a
                        # poly1d for one: converted first, they returned an array, a wrong value)
                        return self.recurse(impl, *args, **kwargs)
                    # numpy converts a poly1d by its class's `__array__`: that code runs here, on its duals
                    # (`np.asarray(point)` calls geometer's `__array__`, returning the dual it holds: numpy's
                    # own call refused it, "object __array__ method not producing an array")
                    return self.recurse(through_array(fn, builder), *args, **kwargs)
                if isinstance(fn, type) and (has_dual(args) or any(has_dual(v) for v in kwargs.values())):
                    y = _construct(self, fn, args, kwargs)  # duals in a list, or by keyword
                    if y is not _UNKNOWN:
                        return y
                if fn is iter and len(args) == 1 and not kwargs and _iterates_in_python(args[0]):
                    # `iter(obj)`: its class's `__iter__` as code (an iterator's returning itself: `next(iter(it))`
                    # took the whole of it, and the next `next(it, 0.0)` found it spent)
                    return self.operator_for(iter)(args[0])
                if id(fn) in _LAZY_IDS and any(_iterates_in_python(a) for a in args):
                    if fn is not reversed:
                        # `zip(seq, ys)`, `enumerate(seq)`, `itertools.chain(seq, ...)` of a class iterating in
                        # Python: each such argument as the context's iterator over it (drawn from C, it met the
                        # duals natively)
                        args = tuple(self.operator_for(iter)(a) if _iterates_in_python(a) else a for a in args)
                    elif len(args) == 1 and not kwargs and getattr(type(args[0]), "__reversed__", None) is None:
                        return reversed(self._drawn(args[0]))  # (the sequence protocol's items, backwards)
                in_python = bool(args) and _iterates_in_python(args[0])  # (asked once: every C call passes here)
                if in_python and _draws(fn, args[0]):
                    # `l.extend(seq)`, `d.update(pairs)`, `L(seq)` of a class iterating in Python: the context's
                    # iterator over it, drawn as C draws (one item at a time: an `__iter__` reading the list sees
                    # it grow), its class's code under the context (natively, it met the duals: refused)
                    args = (self.operator_for(iter)(args[0]),) + args[1:]
                elif args and (in_python or type(args[0]) is types.GeneratorType) and _consumes(fn) \
                        and fn not in _LAZY and not (len(args) > 1 and (fn is max or fn is min)) \
                        and not _array_protocol(fn, args[0]):
                    # `math.fsum(u * k for k in ks)`, `math.fsum(seq)` of a class iterating in Python (its
                    # items computed on duals): all of it, in order, its class's `__iter__` (or `__getitem__`)
                    # run as code (drawn natively, it met the duals: refused)
                    args = (self._drawn(args[0]),) + args[1:]
                    form = _python_form(fn, args)
                    if form is not None:  # (`sum(V(x) * k for k in ks)`: the items' own `__add__`, as code)
                        return self.recurse(form, *args, **kwargs)
                if (stand := registry.stand_in_of(fn)) is not None and type(fn) is not np.ufunc \
                        and getattr(fn, "__module__", None) != "builtins" and (
                        has_dual(args) or has_dual(list(kwargs.values()))):  # (not `all`'s: the duals' own
                    # truth tests are checked natively, `all([x, 1.0])` at x = 0 refused)
                    # the primitive as Python code (`Rule.stand_in`), its duals inside a list (scipy's
                    # `_ndim_coords_from_arrays([[t, 0.4 * t]])`: the C function met them natively)
                    return self.recurse(stand[0], *stand[1], *args, **kwargs)
                if kwargs and not isinstance(fn, type) and type(fn) is not types.FunctionType and not _numpy_callable(fn) \
                        and type(getattr(fn, "__self__", None)) is not Dual:  # (a dual's own method: `x.clip(out=b)`)
                    # (a work array `np.empty(...)` made here, a zero-tangent dual, by keyword to compiled code whose
                    # signature `_by_position` cannot read: scipy's Cython `_draw(..., sample=s)`, TypeError)
                    args, kwargs = _constants_as_plain(args, kwargs)
                return self._primitive(site, fn, args, kwargs)
            if type(fn) is types.BuiltinMethodType and (method := python_ufunc_method(fn)) is not None:
                return self.recurse(method, *args, **kwargs)  # (`np.frompyfunc(f, 2, 1).reduce(a)`)
            if (stand := registry.stand_in_of(fn)) is not None:  # the primitive as Python code (`Rule.stand_in`)
                if type(fn) is np.ufunc:
                    return _frompyfunc_call(self, stand, args, kwargs)
                return self.recurse(stand[0], *stand[1], *args, **kwargs)
            if fn is _FULL_LIKE and args and type(args[0]) is not Dual:
                # (numpy dispatches np.full_like on its prototype only: a dual fill value beside a plain one,
                # array-api-extra's `full_like(cond, fill_value=p)` under scipy.stats, reached numpy's copyto)
                return OWN_FUNCTIONS[fn](*args, **kwargs)
            if _native(fn):
                if type(fn) is types.FunctionType and _nondifferentiable(fn):
                    # `stop_gradient(a)` (the contexts' own Python functions): of the values, no tangent
                    return fn(*primal_tree(args), **{k: primal_tree(v) for k, v in kwargs.items()})
                return self._primitive(site, fn, args, kwargs)
            if fn is print and (has_dual(args) or has_dual(list(kwargs.values()))):
                # the values printed, not their duals, and their texts remembered (`print(*x, file=buffer)` read
                # back and parsed is refused there), as reverse mode's code prints them (`lowered.runtime.printed`)
                return printed(primal_tree, *args, **kwargs)
            if fn is type and len(args) == 1 and not kwargs and not site.filename.startswith(_RULES_DIR):
                # a perturbed value's type is its primal's in the user's code, as the other modes see it
                # (`type(a) is float`); the rules, run here on duals (forward over reverse), see the dual
                return type(primal(args[0]))
            fn = uncached(fn)  # a cache would serve the value of the primal, unperturbed
            if isinstance(fn, np.vectorize):
                return _vectorized(self, fn, args, kwargs)
            if args and type(args[0]) not in _NOT_ITERATORS and isinstance(args[0], _ITERATOR) and fn not in _LAZY \
                    and _consumes(fn) and not (len(args) > 1 and (fn is max or fn is min)):
                # `sum((v * v for v in xs), 3.0 * x)`: a dual beside an iterator of duals, which the rule cannot
                # look into (its items' tangents were dropped: 3.0 for 4.4); drawn here, all of it, in order
                args = (list(args[0]),) + args[1:]
                form = _python_form(fn, args)
                if form is not None:
                    return self.recurse(form, *args, **kwargs)
            y = _known(fn, args, kwargs, tag, self._run_rule)
            if y is not _UNKNOWN:
                return y
            if overdub.is_recursable(fn):
                if (step := bisects(method_function(fn))) is not None \
                        and not steps_on_free(fn, step, args, kwargs, dual_free):
                    raise refuse_bisection(method_function(fn), step)
                return self.recurse(fn, *args, **kwargs)
            if isinstance(fn, type):
                y = _construct(self, fn, args, kwargs)
                if y is not _UNKNOWN:
                    return y
            if marked_opaque(fn):  # the user's opt-out: a rule (found above), or refused by name
                raise no_rule(fn, where=str(site))
            if not isinstance(fn, type) and _takes_callback(args, kwargs) and has_dual(args):
                # a compiled function calling Python back (scipy's LSODA): it would be handed duals it cannot
                # take, and an error raised inside its C code left it broken (a later call crashed the process)
                raise no_rule(fn, where=str(site))
            if not _numpy_callable(fn) and not _container_method(fn) and id(fn) not in _LAZY_IDS and fn is not iter:
                # (not `enumerate(a)`, `zip(a, b)`, `iter(a)`: their items are views of the dual's, drawn later, and
                # see what the code writes into it meanwhile; of its plain values they missed it, 0 for 9: dcor)
                given = args, kwargs
                args, kwargs = _constants_as_plain(args, kwargs)
                # (perturbed only where a dual is left: a C class given the plain arrays of fresh zero-tangent
                # duals, pandas' `NumpyBlock(values)` of a table of constants built under the context, holds
                # nothing perturbed; refused as one, chemics' table lookups beside a perturbed object failed)
                y = self._primitive(site, fn, args, kwargs,
                                    perturbed=has_dual(args) or has_dual(list(kwargs.values())))
                if args is not given[0] or kwargs is not given[1]:
                    _lent(given, (args, kwargs), y)
                return y
            return self._primitive(site, fn, args, kwargs, perturbed=True)
        except Exception as e:  # (free when nothing is raised) a library function's error says it was transformed
            if not e.__dict__.get("_overdub_noted") and overdub.is_recursable(fn):
                note_transformed(e, fn, "forward mode")
            raise

    def primitive(self, fn, /, *args, **kwargs):
        """A function the context does not recurse into, entered by `run` (the tangent twins' calls)."""
        if type(fn) in registry.made_stand_ins and type(fn) is not np.ufunc and (
                has_dual(args) or has_dual(list(kwargs.values()))) \
                and (stand := registry.stand_in_of(fn)) is not None:  # (numba's, the one differentiated itself)
            return self.recurse(stand[0], *stand[1], *args, **kwargs)
        if marked_opaque(fn) and (has_dual(args) or has_dual(list(kwargs.values()))):
            raise no_rule(fn)
        if isinstance(fn, type) and (issubclass(fn, float) or fn.__flags__ & _HEAPTYPE) and (
                has_dual(args) or has_dual(list(kwargs.values()))):
            # `Angle(x)`, a float subclass; a class of its own, its code recursed as inside a call (a dataclass's
            # `__post_init__` asking `math.isfinite(self.spot)`: bsm-pricer's, run natively it was refused)
            y = _construct(self, fn, args, kwargs)
            if y is not _UNKNOWN:
                return y
        if type(fn) is types.MethodType and (owner := generated_init_owner(fn.__func__, fn.__self__)):
            # `super().__init__(tdb=tdb)` reaching a dataclass's generated `__init__` (no source) runs as code:
            # natively its `__post_init__` met the duals untransformed (pythermalcomfort's input checks: refused)
            return self.recurse(dataclass_init_as, owner, fn.__self__, *args, **kwargs)
        if (type(fn) is types.FunctionType or isinstance(fn, type)) and (
                has_dual(args) or has_dual(list(kwargs.values()))):
            _sourceless_questions(fn, None)
        try:
            return fn(*args, **kwargs)
        except IndexError as e:  # f2py refusing a dual (BLAS's dscal: "... can't be converted to double")
            if "be converted to" not in str(e) or not (has_dual(args) or has_dual(list(kwargs.values()))):
                raise
            raise no_rule(fn) from e

    def element(self, fn, *args):
        """fn on one element's duals (np.vectorize's pyfunc): by its rule where it has one (unumpy's
        functions vectorize umath's, whose code reads the number's inside), else recursed into."""
        tag = top_tag(args)
        if tag is not None:
            y = _known(fn, args, {}, tag, self._run_rule)
            if y is not _UNKNOWN:
                return y
        return self.recurse(fn, *args)

    def _primitive(self, site, fn, args, kwargs, perturbed=False):
        if (type(fn) is types.FunctionType or isinstance(fn, type)) and (
                _holds_dual(args) or _holds_dual(tuple(kwargs.values()))):
            _sourceless_questions(fn, str(site))
        if type(fn).__name__ == "fortran" and (_holds_dual(args) or _holds_dual(tuple(kwargs.values()))):
            # an f2py wrapper (LAPACK, BLAS, MINPACK) without a rule, given duals: refused before the call, whose
            # failing conversion of a dual drops a reference to a dtype (scipy's: numpy's refcount error after a
            # dozen refusals, gen17 C2). The arguments, not `perturbed`: a fresh array's zero tangent was made
            # plain before, and is no dual given
            raise no_rule(fn, where=str(site))
        try:
            y = fn(*args, **kwargs)
            if TEXTS_MADE:  # (a digest of a differentiated number's text is remembered as the text is)
                texts_through(fn, args, kwargs, y)
            if perturbed and _opaque(y):
                # a C class or function without a rule took duals into an object of its own, whose values it
                # keeps where forward mode cannot see them (pandas' `NumpyBlock(values)`: the Series made of
                # it held the values without their tangents, and jacfwd gave 0)
                raise no_rule(fn, where=str(site))
            return y
        except NoForwardRule as e:
            if e.where is not None:
                raise
            raise NoForwardRule(e.what, where=str(site), fix=e.fix) from e
        except DualConversionError as e:
            if (getattr(fn, "__module__", None) or "").startswith(_ENTRY_MODULES):
                raise  # another engine met a Dual deep inside: its own message says where
            # duals inside a list or tuple argument (`math.fsum([u, v])`): the rule takes the sequence
            # apart. Only after the C function refused them: max, min, sorted return the duals themselves
            # (numpy's functions take duals by their protocols, but not inside a list: `np.interp(0.3, [0, 1],
            # [1.0, x])` by its rule)
            inner = None if _native(fn) and not isinstance(fn, _NUMPY_DISPATCHED) else _sequence_tag(args)
            y = _UNKNOWN if inner is None else _known(uncached(fn), args, kwargs, inner, self._run_rule)
            if y is _UNKNOWN and _array_like_first(fn) and type(args[0]) in (list, tuple) and has_dual(args[0]):
                # `np.ravel((x, y, z))` of duals: numpy takes the list as an array, as np.asarray makes it
                return self.overdub(site, fn, to_array(args[0]), *args[1:], **kwargs)
            if y is _UNKNOWN and _nondifferentiable(fn):
                # a question about a list of duals (`np.ndim([a, x, b])` in np.r_): asked of their values
                return fn(*primal_tree(args), **{k: primal_tree(v) for k, v in kwargs.items()})
            if y is _UNKNOWN:
                raise no_rule(fn, where=str(site)) from e
            return y
        except (TypeError, RuntimeError, ValueError, struct.error) as e:
            if (refusal := converted_in_c(e, fn, site)) is not None:
                raise refusal from e
            if isinstance(e, OverdubError) or not (perturbed or _holds_dual(args)
                                                    or _holds_dual(tuple(kwargs.values()))):  # (`timedelta(days=d)`)
                raise  # (another engine's refusal, `hessian`'s inner gradient's: its own message, not "no rule")
            if (getattr(fn, "__module__", None) or "").startswith(_ENTRY_MODULES):
                # an engine's entry run on duals (`hessian`'s inner gradient) failed: said so, with the failure
                raise OverdubError(
                    f"{getattr(fn, '__qualname__', fn)} failed on forward mode's dual numbers (a derivative "
                    f"inside a derivative): {type(e).__name__}: {e}", where=str(site),
                    fix="take the outer derivative by finite differences of this one, or differentiate the "
                        "inner function in forward mode (`contexts.jacfwd` of `contexts.jacfwd`)") from e
            # a class or C function without a rule refused the duals in its own words (mpmath's
            # `mpf(x)`: "cannot create mpf from Dual(...)"; scipy's `_brentq`: "Unable to parse arguments"):
            # the refusal says which, and where. Where the call fails on the plain values too (inspect's
            # `_is_type` asking `type.__dict__["__mro__"].__get__(x)` of a number), that failure is the
            # value's own: raised as it is, for the code catching it to take its other way as it would
            # (a refusal is not the code's to catch: `overdub.errors.not_swallowed`)
            plain = _plain_failure(fn, args, kwargs) if type(fn) in _PROBES or fn is iter or (
                isinstance(e, np.linalg.LinAlgError)) else None
            if plain is not None:
                # (a singular matrix's LinAlgError is the values' own: nashpy's support enumeration catches it
                # to try the next support; taken for a refusal, every such call was refused)
                raise plain from None
            raise no_rule(fn, where=str(site)) from e
        except Exception as e:
            # an error class of the library's own from a C function given duals, or a callback holding
            # them (MINPACK's `minpack.error: Result from function call is not a proper array of floats`
            # under scipy.optimize.fsolve): refused by name too. Python's own errors pass (StopIteration,
            # KeyError, ZeroDivisionError: the program's control flow)
            converting = type(e) is IndexError and "be converted to" in str(e)  # (f2py refusing a dual: BLAS's
            if ((isinstance(e, OverdubError) or type(e).__module__ == "builtins" and not converting  # dscal)
                 or overdub.is_recursable(fn))
                    or not (perturbed or _holds_dual(args) or not all(map(dual_free, args)))):
                raise
            raise no_rule(fn, where=str(site)) from e

    def _run_rule(self, frule, tangents, values, kwargs):
        """A rule reached with Duals of an outer derivative call runs under this context, so the math
        functions inside the rule are differentiated too (forward over forward)."""
        if any(has_dual(v) for v in values) and overdub.is_recursable(frule):  # (a list of duals too)
            return self.recurse(frule, tangents, *values, **kwargs)
        return frule(tangents, *values, **kwargs)


# the names numpy's functions give a first parameter that is one array_like (`np.ravel(a)`), not a
# sequence of arrays (`np.stack(arrays)`, `np.block(arrays)`, `np.meshgrid(*xi)`)
_ARRAY_LIKE_NAMES = frozenset({"a", "arr", "ary", "array", "x", "m", "p"})  # ("p": np.roots, np.polyval)


def _array_like_first(fn) -> bool:
    """fn is a numpy function whose first parameter is one array_like, which numpy converts by np.asarray."""
    if type(fn) is not _DISPATCHER or not (getattr(fn, "__module__", "") or "").startswith("numpy"):
        return False
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return False
    return bool(params) and params[0] in _ARRAY_LIKE_NAMES


class ObservedForwardContext(Observed, ForwardContext):
    """ForwardContext reporting each operation of the user's code to an observer (`contexts.ad.observe`):
    the primal operands and incoming tangents of the innermost derivative call perturbing them."""

    # (the operators an object's own methods may take)
    intercepts = Observed.intercepts | {"compare", "iter", "truth", "with"}

    def recurses(self, fn, args, kwargs) -> bool:
        if not overdub.is_recursable(fn) or _native(fn):
            return False
        rule = registry.get(fn)
        return rule is None or rule.frule is None or top_tag(args) is None

    def operation(self, site, fn, args, kwargs, recursed):
        tag = top_tag(args) if args else None
        if tag is None:
            return DerivativeOp(site, fn, args, kwargs, recursed=recursed, tangents=(None,) * len(args),
                                split=_unperturbed)
        parts = [split(a, tag) for a in args]
        return DerivativeOp(site, fn, tuple(p for p, _ in parts), kwargs, recursed=recursed,
                            tangents=tuple(t for _, t in parts), split=lambda y: split(y, tag))


def _unperturbed(y):
    return y, None


def forward_context() -> ForwardContext:
    """A ForwardContext, observed when a debugging context or a rule check is active (a few ns); in an
    `ADContext(check=True)` block each forward rule is checked the first time it is used (`check.py`)."""
    obs = observer()
    if obs is None:
        return ForwardContext()
    check = _checking.get()
    if check is not None:  # ADContext(check=True): forward rules are checked too
        from .check import TangentCheck
        obs = TangentCheck(check, obs)
    return ObservedForwardContext(obs)


# forms that make reverse mode record a store or read as a field; duals need no help with them
_RECORDING_ONLY = (object.__setattr__, object.__getattribute__)


def _meets_array_leaf(fn, args, kwargs) -> bool:
    """A call perturbed by duals that would run a dask array's own Python code: a method of one, or a
    function of dask's taking one (numpy's functions on it go to their rules, as on an ndarray)."""
    if isinstance(bound_self(fn), ArrayLeaf):
        return True
    module = getattr(fn, "__module__", None) or ""
    return (module.startswith("dask") and (holds_array_leaf(args) or holds_array_leaf(kwargs.values()))
            and registry.get(fn) is None)  # (`da.exp`, `da.dot`: numpy's rules, `rules.dask`)


def _array_leaf_refused(fn, site) -> NoForwardRule:
    """Forward mode's refusal of dask arrays: its duals hold numpy arrays, and a dask array's own code
    (its operators, `unify_chunks`) would take the dual apart; never a derivative half computed."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    return NoForwardRule(
        f"forward mode does not differentiate through dask arrays ({name} reached with a perturbed value and "
        f"a dask array)", where=str(site),
        fix="use reverse mode (`contexts.gradient`, `vjp`, `jacobian`), which keeps dask arrays lazy; or "
            "compute the dask arrays first (`x.compute()`)")


def _method_call(caller: operator.methodcaller) -> tuple:
    """(name, positional arguments, keyword arguments) of a methodcaller, read from its `__reduce__`
    (`(methodcaller, (name, *args))`, or with keywords `(partial(methodcaller, name, **kw), args)`)."""
    maker, items = caller.__reduce__()
    if maker is operator.methodcaller:
        return items[0], items[1:], {}
    return maker.args[0], items, dict(maker.keywords)


def _python_form(fn, args):
    """`Rule.python` of fn when an argument is an object of a class of its own (`float(obj)` runs
    `obj.__float__`, `sum(objs)` their `__add__`), else None."""
    if not args or not objects_of_classes(args, True) or fn in _RECORDING_ONLY or (
            _native(fn) and getattr(fn, "__module__", None) != "_operator"):  # (`operator.add(u, v)`: their code)
        return None  # (the common case: plain arguments)
    rule = registry.get(fn)
    if rule is None or rule.python is None:
        return None
    return rule.python if objects_of_classes(args, rule.kind == "reduction") else None


_HEAPTYPE = overdub.ops.HEAPTYPE  # (a class made by a class statement)


_NOT_FOUND = object()
_FLOAT_NEW = float.__new__

# what a float subclass must leave to float for its value to be a dual: its arithmetic, comparisons and
# conversions (a dual computes them as float does, on the value; a class of its own would compute others)
_FLOAT_BEHAVIOUR = tuple(name for name in dir(float) if name.startswith("__") and name not in {
    "__new__", "__init__", "__repr__", "__str__", "__format__", "__doc__", "__getattribute__", "__setattr__",
    "__delattr__", "__dir__", "__reduce__", "__reduce_ex__", "__sizeof__", "__init_subclass__",
    "__subclasshook__", "__class__", "__getnewargs__", "__getformat__", "__module__", "__dict__", "__weakref__"})


def _plain_arithmetic(cls) -> bool:
    """cls (a float subclass) computes as float does: none of float's numeric special methods of its own."""
    return all(getattr(cls, name, None) is getattr(float, name) for name in _FLOAT_BEHAVIOUR)


def float_object(cls, x=0.0, **kwargs):
    """`float.__new__(cls, x)` for a perturbed x: a dual whose value is the cls object of x's value (pygeodesy's
    `Lat`, `Degrees`, `Meter`), its tangent x's (as for `float(x)`). Its arithmetic is float's, which the
    dual computes; its methods, properties and attributes are the value object's, run on the dual
    (`attribute`, `store_attribute`). Refused: a class with arithmetic of its own (the dual would compute
    float's instead)."""
    if kwargs or not (isinstance(cls, type) and issubclass(cls, float)):
        return float.__new__(cls, x, **kwargs)  # (float's own error)
    if not _plain_arithmetic(cls):
        own = [n for n in _FLOAT_BEHAVIOUR if getattr(cls, n, None) is not getattr(float, n)]
        raise NoForwardRule(f"a perturbed value made into {cls.__module__}.{cls.__qualname__}, a float subclass "
                            f"with arithmetic of its own ({', '.join(own[:4])}): forward mode would compute "
                            "float's", fix="differentiate in reverse mode, or give the function computing with "
                                           "it a forward rule (`contexts.rules.registry.frule(fn)`)")
    y = _convert(float, x)
    if type(y) is not Dual:
        return float.__new__(cls, y)
    return _with_value(y, float.__new__(cls, primal(y)))


def _with_value(d, value):
    """Dual d (perhaps nested) with its innermost primal replaced by value."""
    if type(d) is not Dual:
        return value
    return Dual(_with_value(d.primal, value), d.tangent, d.tag)


def _number_value(d):
    return primal(d)


def _number_object(d) -> bool:
    """d is a dual whose value is a float subclass's object (made by `float_object`)."""
    v = primal(d)
    return type(v) is not float and isinstance(v, float) and type(v).__flags__ & _HEAPTYPE


# the callables asked again on plain values when they refuse duals: slots of types, which hold no state
# (a C encoder called again found its own marker of the failed first call: "Circular reference detected")
_PROBES = (types.MethodWrapperType, types.WrapperDescriptorType)  # (and `iter(x)`: "is it an array?",
# colossus' isArray: a number's TypeError, as the plain call raises it)


def _plain_failure(fn, args, kwargs) -> BaseException | None:
    """The exception fn raises on the values of its dual arguments (the primals), or None where it succeeds
    there."""
    try:
        fn(*primal_tree(args), **{k: primal_tree(v) for k, v in kwargs.items()})
    except Exception as e:  # noqa: BLE001 - any failure of the plain call is the answer
        return e
    return None


_DUAL_FIELDS = frozenset(Dual.__slots__)


def _number_attribute(ctx, d, name, default):
    """`d.name` for a dual whose value is a float subclass's object: the class's Python methods bound to the
    dual, its properties and Python descriptors run on the dual; what float itself has (`real`,
    `is_integer`), the dual's own; anything else (the object's fields, class constants) the value's."""
    if name in _DUAL_FIELDS:  # (the dual's own: a derivative of a derivative reads its inner one's value)
        return getattr(d, name)
    value = _number_value(d)
    if type(name) is str:
        fields = getattr(value, "__dict__", None) or ()  # (a class of `__slots__` alone has none: its slots are
        for klass in type(value).__mro__:                # member descriptors, read from the value below)
            if klass is float or klass is object:
                break
            attr = klass.__dict__.get(name, _NOT_FOUND)
            if attr is _NOT_FOUND:
                continue
            if type(attr) is types.FunctionType and name not in fields:
                return types.MethodType(attr, d)
            found = _class_getter(value, name)
            if found is not None and not _engine_code(found[0]):
                found = (found[0], found[1], d) + found[3:] if len(found) == 4 else (found[0], d)
                return ctx.recurse(*found)
            break
        else:
            return getattr(d, name, *default)
        if name in fields or not hasattr(float, name):
            return getattr(value, name, *default)
    return getattr(d, name, *default)


def _class_entry(obj, name):
    """obj's class's attribute `name` as stored (a descriptor itself), from the first class of its MRO
    that has one, or _NOT_FOUND."""
    for klass in type(obj).__mro__:
        attr = klass.__dict__.get(name, _NOT_FOUND)
        if attr is not _NOT_FOUND:
            return attr
    return _NOT_FOUND


def _python_code(fn) -> bool:
    """fn is a Python function, or a method bound to one (pygeodesy's caching `Property_RO`)."""
    return type(fn) is types.FunctionType or (type(fn) is types.MethodType
                                             and type(fn.__func__) is types.FunctionType)


def _class_setter(obj, name):
    """(fn, *args) the Python code `obj.name = value` runs (value added), from obj's class, or None."""
    attr = _class_entry(obj, name)
    if attr is _NOT_FOUND:
        return None
    put = getattr(type(attr), "__set__", None)
    if type(put) is types.FunctionType:
        return put, attr, obj
    if isinstance(attr, property) and _python_code(attr.fset):
        return attr.fset, obj
    return None


def _class_getter(obj, name):
    """(fn, *args): the Python code `getattr(obj, name)` runs, from obj's class, or None (a field, a method,
    a C descriptor: read as Python reads it). A property's getter (a function, or a method bound to the
    property: pygeodesy's caching `Property_RO`); a descriptor whose class defines `__get__` in Python
    (unless it defines no `__set__`/`__delete__` and obj's own `__dict__` holds the name, which then wins)."""
    if type(name) is not str:
        return None
    attr = _class_entry(obj, name)
    if attr is _NOT_FOUND:
        return None
    kind = type(attr)
    if kind is types.FunctionType:
        return None
    get = getattr(kind, "__get__", None)
    if type(get) is types.FunctionType:
        if not (hasattr(kind, "__set__") or hasattr(kind, "__delete__")) and name in getattr(obj, "__dict__", ()):
            return None
        return get, attr, obj, type(obj)
    if isinstance(attr, property) and _python_code(attr.fget):  # (property's own __get__: its getter)
        return attr.fget, obj
    return None


# C types that hold the objects they are given as they are (iterators, containers, wrappers): duals in them
# stay duals
_HOLDING_MODULES = frozenset({"builtins", "itertools", "functools", "collections", "_collections", "operator",
                              "types", "_functools", "weakref", "_weakref", "copy", "contextlib", "re", "enum"})


def _opaque(y) -> bool:
    """y is an object of a C type (not a number, array or container of them, not one holding what it was
    given) with no dual anywhere forward mode can see: made from duals, its values lost their tangents."""
    if y is None or isinstance(y, (numbers.Number, np.ndarray, np.generic, str, bytes, list, tuple, dict, set,
                                   frozenset, type, Dual)):
        return False
    # (a C class, or a Python class on a C base keeping fields of its own: pandas' NumpyBlock on libinternals')
    return any(not base.__flags__ & _HEAPTYPE and base is not object
               and (getattr(base, "__module__", None) or "builtins").split(".")[0] not in _HOLDING_MODULES
               and not (getattr(base, "__module__", None) or "").startswith(("numpy", "_operator"))
               for base in type(y).__mro__) and dual_free(y)


def _engine_code(fn) -> bool:
    """fn is the engine's own (a Dual's properties): it handles duals itself, never run under a context."""
    return (getattr(fn, "__module__", None) or "").startswith(_ENTRY_MODULES)


def _by_position(fn, args, kwargs):
    """(args, kwargs) with a dual given by keyword for one of the leading parameters a rule names
    (`Rule.positional`: `dsyevr(a=a1, lower=1)`) moved to its position, where the frule takes its tangent."""
    if not any(type(v) is Dual for v in kwargs.values()) and not (
            type(fn) is types.BuiltinFunctionType and any(type(a) is Dual for a in args)):  # (`pow(t, exp=3)`)
        return args, kwargs
    try:
        rule = registry.get(fn)
    except TypeError:  # an unhashable callable
        return args, kwargs
    names = rule.positional if rule is not None else ()
    if not names or len(args) >= len(names) or not all(n in kwargs for n in names[len(args):]):
        if (type(fn) is _DISPATCHER and fn not in OWN_FUNCTIONS
                or type(fn) is types.BuiltinFunctionType and (rule is not None or id(fn) in _ARRAY_BUILDER_IDS)):
            # by its signature (`np.percentile(a=v)`, `np.asarray(a=v)`: pyextremes')
            moved = by_position(fn, args, kwargs)
            if moved is not None:
                return moved[0], moved[1]
        return args, kwargs
    rest = dict(kwargs)
    return args + tuple(rest.pop(n) for n in names[len(args):]), rest


_DUAL_FLOAT = Dual.__float__


def _fresh(y, tag, outer: tuple = ()):
    """A float or complex array made by the function under tag, as a dual of zero tangent (else y); under
    the tags of outer derivative calls too (`outer`, the inputs' other tags), nested: a value of them stored
    into it, or through a view of it, then needs no new dual around the array, which the views would not
    share (`v = Z[:]; v[0] = x`: the second derivative was 0)."""
    if type(y) is not np.ndarray or y.dtype.kind not in "fc":
        return y
    tags = sorted({*outer, tag}, key=lambda t: t.order)
    v = y
    for i, t in enumerate(tags):
        z = zero_tangent(y, t)
        if type(z) is np.ndarray and y.ndim > 1 and y.flags.f_contiguous and not y.flags.c_contiguous:
            # (laid out as the value is, each direction's: where the value's layout makes a view, the tangent's
            # does too; a C-ordered tangent's `out.T.reshape(-1)` was a copy, and scipy's csc `toarray()`
            # writing through it gave 0)
            z = np.zeros(z.shape[::-1], dtype=z.dtype).T
        for lower in tags[:i]:  # (its tangent is perturbed by the lower tags as its value is)
            z = Dual(z, zero_tangent(z, lower), lower)
        v = Dual(v, z, t)
    return v


def _numpy_callable(fn) -> bool:
    """fn is numpy's (`np.add.at`, an array's method): it hands duals to their own protocols."""
    owner = bound_self(fn)
    return (getattr(fn, "__module__", None) or "").startswith("numpy") or isinstance(owner, (np.ufunc, np.ndarray))


def _container_method(fn) -> bool:
    """fn is a method of a list, dict, set or deque: it may keep what it is given (`O.append(b)`), which must
    stay the dual (its value alone, stored, missed the tangent b got later through `b[0] = y`: 0 for 1.4)."""
    return type(fn) is types.BuiltinMethodType and isinstance(fn.__self__, (list, dict, set, collections.deque))


# what a function run as it is (no source: `exec`'s, a code generator's) may ask of a dual or hand to code run as it
# is too, answered as of the dual, not of its value (`isinstance(a, float)` False: another branch, pkI W2)
# (not numpy's or math's functions: a dual takes those by its protocols or refuses them loudly, as `float()` of one)
_QUESTIONS = frozenset({"isinstance", "issubclass", "type", "hasattr", "callable", "super"})


def _sourceless_questions(fn, where) -> None:
    """Refuse running the Python function fn without its source (a twin cannot be made) on duals where its code
    asks a question of a value or calls code that would run untransformed (`super().__init__`); for a class, its
    `__init__` and `__new__` (prettyclass's generated `__init__`)."""
    if isinstance(fn, type):
        for part in (fn.__dict__.get("__init__"), fn.__dict__.get("__new__")):
            if type(part) is types.FunctionType:
                _sourceless_questions(part, where)
        return
    if not overdub.without_source(fn):
        return
    asked = [n for n in fn.__code__.co_names if n in _QUESTIONS]
    if asked:
        raise NoForwardRule(
            f"forward mode cannot follow {fn.__qualname__}, a function without source (made by `exec` or a code "
            f"generator), given dual numbers: it asks `{asked[0]}` of its values, which a dual answers "
            "otherwise than its value would", where=where or _conversion_site(),
            fix="give it a rule (`contexts.rules.registry.frule`), or define it in a file")


def _constants_as_plain(args, kwargs):
    """A C function without a rule gets the plain array of a dual whose tangent is all zeros (a work
    array np.zeros made, see _fresh): the call is then the plain one (its results carry no derivative
    when no other argument does); duals with a tangent are still refused by the call."""
    def plain(v):
        if (type(v) is Dual and type(v.primal) is np.ndarray and type(v.tangent) is np.ndarray
                and not v.tangent.any()):
            return v.primal
        if type(v) is Dual and type(v.primal) is Dual and _all_zero_dual(v.tangent):  # (nested: every call's)
            inner = plain(v.primal)
            return inner if type(inner) is np.ndarray else v
        return v
    return tuple(map(plain, args)), {k: plain(v) for k, v in kwargs.items()}


def _lent(given, plain, y) -> None:
    """After a C function got the plain values of fresh zero-tangent duals (`_constants_as_plain`): where its
    result y may hold them (an object, an iterator, a view), each such dual's tangent is marked lent, so that a
    perturbed write into the array afterwards is refused (`dual.lent_write`)."""
    (args, kwargs), (pargs, pkwargs) = given, plain
    handed = [p for a, p in zip((*args, *kwargs.values()), (*pargs, *pkwargs.values())) if a is not p]
    if handed and _may_keep(y, handed, 0):
        for a in (*args, *kwargs.values()):
            if type(a) is Dual and not any(a is p for p in (*pargs, *pkwargs.values())):
                t = a.tangent
                while type(t) is np.ndarray and t.base is not None:
                    t = t.base
                if type(t) is np.ndarray:
                    LENT[id(t)] = t


def _may_keep(y, handed: list, depth: int) -> bool:
    """y (a C function's result) may hold one of the arrays handed to it, or a view of one."""
    if y is None or isinstance(y, (numbers.Number, str, bytes, np.generic, type)):
        return False
    if type(y) is np.ndarray:
        return any(np.may_share_memory(y, h) for h in handed if isinstance(h, np.ndarray))
    if type(y) in (list, tuple) and depth < 3:
        return any(_may_keep(v, handed, depth + 1) for v in y)
    return True


def _all_zero_dual(t) -> bool:
    """t is zeros at every level of its nesting (a fresh array's tangent under nested derivative calls)."""
    while type(t) is Dual:
        if not _all_zero_dual(t.tangent):
            return False
        t = t.primal
    return type(t) is np.ndarray and not t.any()


def run_inside(fn, args, kwargs):
    """Run the pure-Python fn under the active forward context (or a fresh one)."""
    ctx = overdub.current()
    if isinstance(ctx, ForwardContext):
        return ctx.recurse(fn, *args, **kwargs)
    return forward_context().run(fn, *args, **kwargs)


def pushforward(fn, /, *args, **kwargs):
    """fn(*args, **kwargs) where args may hold Duals, without an active ForwardContext: the registry's
    frule, else fn itself. For other engines that meet Duals in a primitive call (forward over reverse).

    >>> import math
    >>> from contexts.forward import Dual, Tag, pushforward
    >>> y = pushforward(math.sin, Dual(0.0, 2.0, Tag()))
    >>> (y.primal, y.tangent)
    (0.0, 2.0)
    """
    tag = top_tag(tuple(args) + tuple(kwargs.values())) if args or kwargs else None
    if tag is None and id(fn) in _ARRAY_BUILDER_IDS and args and has_dual(args[0]):
        return build_array(args, kwargs, fn)  # an array built from a list of duals
    if tag is None and type(fn) is _DISPATCHER and fn in JOINS and has_dual(args):
        return OWN_FUNCTIONS[fn](*args, **kwargs)  # (`np.concatenate(([0.0], [k, 2 * k]))` under hessian)
    if type(fn) is types.FunctionType:
        rule = registry.rules.get(fn)
        if rule is not None and rule.duals is not None:
            return ForwardContext().run(rule.duals, *args, **kwargs)
    if tag is None or _native(fn):
        return fn(*args, **kwargs)
    fn = uncached(fn)
    if isinstance(fn, np.vectorize):
        ctx = forward_context()
        with ctx:
            return _vectorized(ctx, fn, args, kwargs)
    y = _known(fn, args, kwargs, tag, _run_rule_plain)
    if y is not _UNKNOWN:
        return y
    return forward_context().run(fn, *args, **kwargs) if overdub.is_recursable(fn) else fn(*args, **kwargs)


_UNKNOWN = object()
_CLASS_MATCH = overdub.ops.class_match


def _called_from_c(ctx, site, fn, args):
    """`map(f, xs)` / `filter(f, xs)`, lazy as Python's, with each call of f made as the user's code makes
    it (through the context): called from C, f would meet duals unintercepted (`map(np.asarray, (r, p))`
    converting a dual to a plain array, `map(math.sin, xs)`)."""
    f = args[0]
    # (an iterable whose class iterates in Python: the context's iterator over it, not C's, which met the duals)
    args = (f, *(ctx.operator_for(iter)(a) if _iterates_in_python(a) else a for a in args[1:]))
    if fn is map:
        return (ctx.overdub(site, f, *items) for items in zip(*args[1:]))
    if len(args) != 2:
        raise TypeError(f"filter expected 2 arguments, got {len(args)}")
    return (x for x in args[1] if ctx.overdub(site, f, x))


def _construct(ctx, cls, args, kwargs):
    """`cls(*args, **kwargs)` as `type.__call__` runs it, its Python `__new__` and `__init__` recursed as
    the user's code is (run natively they met duals uncaught: geopy's `Point(lat, lon)` takes them apart
    with `itertools.islice`, math functions, `np.array` of a list), for a class of the default metaclass;
    _UNKNOWN where that is not the case (a C `__new__`: an ndarray or dict subclass runs as before)."""
    if type(cls).__call__ is not type.__call__ or marked_opaque(cls):
        return _UNKNOWN
    new, init = cls.__new__, cls.__init__
    own_new = type(new) is types.FunctionType and overdub.is_recursable(new)
    own_init = type(init) is types.FunctionType and overdub.is_recursable(init)
    if new is object.__new__ and not own_init and dataclasses.is_dataclass(cls) and dataclass_init_is_code(
            cls, overdub.is_recursable):
        # the generated __init__ (no source) as code, its `__post_init__` recursed (pycoare's np.asarray), its
        # stores through the class's own `__setattr__` (astral's Observer: `float(value)` of a dual, refused)
        obj = object.__new__(cls)
        ctx.recurse(dataclass_init, obj, *args, **kwargs)
        return obj
    if own_new:
        obj = ctx.recurse(new, cls, *args, **kwargs)
    elif new is object.__new__ and own_init:
        obj = object.__new__(cls)
    elif new is _FLOAT_NEW and issubclass(cls, float) and len(args) <= 1 and (own_init or init is object.__init__
                                                                              and not kwargs):
        obj = float_object(cls, *args[:1])  # `class Angle(float)`: float.__new__(Angle, x), then its __init__
    else:
        return _UNKNOWN
    number = type(obj) is Dual and isinstance(_number_value(obj), cls)  # a float subclass's, as a dual
    if number or isinstance(obj, cls):
        init = type(_number_value(obj) if number else obj).__init__
        if type(init) is types.FunctionType and overdub.is_recursable(init):
            ctx.recurse(init, obj, *args, **kwargs)
        elif init is not object.__init__:
            init(obj, *args, **kwargs)
    return obj


def _takes_callback(args, kwargs) -> bool:
    """A Python function among the arguments (a callback a compiled function would call)."""
    return any(type(a) in (types.FunctionType, types.MethodType) for a in (*args, *kwargs.values()))



def _nondifferentiable(fn) -> bool:
    try:
        rule = registry.get(fn)
    except TypeError:  # (an unhashable callable)
        return False
    return rule is not None and rule.kind == "nondiff"


def _iterates_in_python(x) -> bool:
    """x's class iterates in Python: by its own `__iter__`, or by `__getitem__` alone (the sequence protocol)."""
    cls = type(x)
    if cls in _PLAIN_ITERABLES:
        return False
    it = getattr(cls, "__iter__", None)
    return type(it) is types.FunctionType or it is None and type(getattr(cls, "__getitem__", None)) is types.FunctionType


_PLAIN_ITERABLES = frozenset({list, tuple, dict, set, frozenset, str, bytes, range, np.ndarray, Dual})


def converted_in_c(e: Exception, fn, site) -> NoForwardRule | None:
    """The refusal for e where compiled code converted an object by its class's `__float__` (`__index__`,
    ...), which returned the dual it computed (numpy's `np.array([[obj]], float)`, `arr.astype(float)` of
    objects, `"%f" % obj`): Python's TypeError reached the user, or a library's `except TypeError` took its
    other way. None for any other error."""
    if type(e) is not TypeError or " returned non-" not in str(e) or "(type Dual)" not in str(e):
        return None
    return NoForwardRule(
        f"{getattr(fn, '__qualname__', None) or fn!r} converted an object to a number by its class's own method "
        f"inside compiled code ({str(e).split(' returned')[0]}), where forward mode's dual number cannot pass",
        where=None if site is None else str(site),
        fix="convert the objects first with `float(obj)` (differentiated), or compute with their fields")


def _fromiter(iterable, dtype=float, count=-1, *, like=None):
    """np.fromiter where the items may be duals: drawn in Python, then numpy's array of them (as
    `np.array(items, dtype)`, a dual array where some are duals)."""
    items = list(itertools.islice(iterable, count)) if count >= 0 else list(iterable)
    if count > 0 and len(items) < count:
        raise ValueError(f"iterator too short: Expected {count} but iterator had only {len(items)} items.")
    if has_dual(items):
        return build_array((items,), {"dtype": dtype}, np.array)
    try:
        return np.array(items, dtype=dtype)
    except TypeError as e:  # (an item's class's `__float__` run by numpy on the duals it holds)
        if (refusal := converted_in_c(e, np.fromiter, None)) is not None:
            raise refusal from e
        raise


def _array_protocol(fn, x) -> bool:
    """A numpy function given an object numpy takes as an array by its own protocols (a DataArray's
    `__array_ufunc__` and methods: `np.prod(da)` is `da.prod()`), not by iterating it."""
    cls = type(x)
    return _numpy_callable(fn) and any(hasattr(cls, n) for n in ("__array_ufunc__", "__array_function__", "__array__"))


_LAZY = frozenset({iter, enumerate, zip, map, filter, reversed})
# the lazy builtins but iter, and itertools' iterators (by identity: one set lookup per C call)
_LAZY_IDS = frozenset(map(id, (enumerate, zip, map, filter, reversed,
                               *(v for v in vars(itertools).values() if isinstance(v, type)))))
_ITERATOR = collections.abc.Iterator
_NOT_ITERATORS = frozenset({Dual, float, int, np.ndarray, np.float64, list, tuple, dict, str})  # (the per-call
# test's common arguments, told without the ABC's isinstance)  # (they draw items one at a time)


_DRAWING_METHODS = frozenset({"extend", "extendleft", "update", "__iadd__", "__init__"})
_DRAWING_TYPES = (list, dict, collections.deque)


def _draws(fn, first) -> bool:
    """fn, a C callable, draws the items of its first argument: a list, dict or deque (or its subclass without a
    Python `__init__`) made from it, or its `extend`/`update`; not a dict's from a mapping (`keys()` read)."""
    if isinstance(fn, type):
        drawing = issubclass(fn, _DRAWING_TYPES) and type(fn.__init__) is not types.FunctionType
        kind = fn
    else:
        owner = getattr(fn, "__self__", None)
        drawing = isinstance(owner, _DRAWING_TYPES) and getattr(fn, "__name__", None) in _DRAWING_METHODS
        kind = type(owner)
    return drawing and not (issubclass(kind, dict) and hasattr(first, "keys"))


def _consumes(fn) -> bool:
    """fn reads the whole of its first argument, an iterable (math.fsum, math.prod, sum, min, sorted)."""
    rule = registry.get(fn)
    return rule is not None and (rule.kind == "reduction" or rule.iterates)


def _holds_dual(x) -> bool:
    """x is a dual or holds one in a list, tuple, dict or an object's fields (a match subject's parts)."""
    return holds(x, _is_dual)


def _is_dual(v) -> bool:
    return type(v) is Dual


def _sequence_tag(args):
    """The top tag of the duals held by list or tuple arguments (one level down), or None."""
    return top_tag([x for a in args if type(a) in (list, tuple) for x in a])


def _frompyfunc_call(ctx, stand, args, kwargs):
    """A call of `np.frompyfunc(func, nin, nout)`'s ufunc (stand: its stand-in, `(called_vectorized, (func,
    nout))`): the vectorized call it makes, func on each element's duals (numpy's own vectorize makes such a
    ufunc and calls it: recursing into that would come back here)."""
    return ctx.recurse(stand[0], *stand[1], *args, **kwargs)


def _vectorized(ctx, vec, args, kwargs):
    """`vec(*args, **kwargs)` for an `np.vectorize` object on duals: numpy's loop as the Python code it is
    (`rules.numpy.stand_ins.vectorized`), the function run on each element's duals (numpy's own loop turns
    its inputs into object arrays, which duals refuse). Object outputs (`otypes="O"`, np.frompyfunc's) are
    stacked in the results' own dtype: a tangent has no place in an object array."""
    whole = vec.otypes is not None and len(vec.otypes) == 1 and np.dtype(vec.otypes[0]).kind == "O" \
        and vec.signature is None  # (one object output: a tuple the function returns is held whole)
    if vec.otypes and "O" in vec.otypes:
        vec = np.vectorize(vec.pyfunc, excluded=vec.excluded, signature=vec.signature, cache=True)
    out = ctx.recurse(vectorized, vec, *args, **kwargs)
    if whole and type(out) is tuple:  # (numpy's object array of the tuples, `fcn(f).tolist()` in itur's P.838:
        shape = np.shape(primal(out[0]))  # an AttributeError on the tuple of outputs before)
        held = np.empty(shape, dtype=object)
        for idx in np.ndindex(shape):
            held[idx] = tuple(r[idx] for r in out)
        return held
    return out


def _known(fn, args, kwargs, tag, run_rule):
    """fn on Duals when forward mode knows it without running its code (conversions, array builders,
    an frule), else _UNKNOWN."""
    if (fn is float or fn is complex) and len(args) == 1 and not kwargs:
        return _convert(fn, args[0])
    if fn is complex:  # complex(real, imag): real + imag * 1j, each part's tangent (the second was dropped)
        real, imag = (list(args) + [kwargs.get("real", 0), kwargs.get("imag", 0)][len(args):])[:2]
        return _convert(complex, real) + imag * 1j
    if id(fn) in _ARRAY_BUILDER_IDS:
        return build_array(args, kwargs, fn)
    if type(fn) is types.MethodDescriptorType and args and isinstance(primal(args[0]), fn.__objclass__):
        # `np.ndarray.sum(a)`, `copy.copy(a)` calling `type(a).__copy__(a)`: the C method unbound, its
        # object first; its rule is keyed (type, name), as reverse mode finds it
        rule = registry.get((fn.__objclass__, fn.__name__))
        if rule is not None and rule.frule is not None:
            return apply_frule(rule, fn, args, kwargs, tag, call=run_rule)
    rule = registry.get(fn)
    if rule is None and type(fn) is types.MethodType and type(fn.__func__) is types.FunctionType \
            and (rule := registry.rules.get(fn.__func__)) is not None:
        # a rule on a Python method (solve_ivp's `self._estimate_error_norm(K, h, scale)`): its object first
        fn, args = fn.__func__, (fn.__self__, *args)
    if type(fn) is _DISPATCHER and fn in CHECKED_TESTS:  # (`np.array_equal(z, self._last_z)`, `np.any(d)`)
        checked_test(fn, args, kwargs)
    if rule is not None and rule.frule is not None:
        key = key_of(fn)
        if isinstance(key, tuple):
            args = (fn.__self__, *args)  # a C type's bound method (list.index, ufunc.accumulate): the object first
        if len(args) > 2 and "out" not in kwargs and not isinstance(fn, np.ufunc):
            # `np.clip(K, 0, 1, K)`, `a.sum(0, None, o)`: the output given by position, written as out=
            named = getattr(np, key[1], None) if isinstance(key, tuple) and key[0] is np.ndarray else fn
            pos = out_position(named) if type(named) is _DISPATCHER else -1
            if isinstance(key, tuple) and key[0] is np.ufunc:  # `np.add.accumulate(a, 0, None, a)` (gen19 W4)
                pos = UFUNC_METHOD_OUT.get(key[1], -2) + 1     # (the ufunc first)
            if len(args) > pos + 1 >= 1 and args[pos] is not None:  # (options after it: not moved, refused)
                raise NoForwardRule(f"{getattr(fn, '__qualname__', fn)} with its output and later options "
                                    "passed by position", fix="pass them by keyword (`out=o`)")
            if len(args) > pos >= 0 and args[pos] is not None:
                kwargs = {**kwargs, "out": args[pos]}
                args = args[:pos] + args[pos + 1:]
        if rule.writes is not None and rule.inplace is not None:  # a C kernel writing into an argument
            return apply_writing_frule(rule, fn, args, kwargs, tag, call=run_rule)
        if kwargs.get("out") is not None and not isinstance(fn, np.ufunc):  # (ufuncs write out= themselves)
            rest = {k: v for k, v in kwargs.items() if k != "out"}
            return write_out(fn, apply_frule(rule, fn, args, rest, tag, call=run_rule), kwargs["out"])
        return apply_frule(rule, fn, args, kwargs, tag, call=run_rule)
    return _UNKNOWN


def _run_rule_plain(frule, tangents, values, kwargs):
    """A rule on Duals of an outer tag runs under a fresh forward context (see ForwardContext._run_rule)."""
    if any(has_dual(v) for v in values) and overdub.is_recursable(frule):
        return forward_context().run(frule, tangents, *values, **kwargs)
    return frule(tangents, *values, **kwargs)



_MASK_FREE = frozenset({operator.add, operator.sub, operator.mul})
_MASKED = np.ma.MaskedArray


def _mask_free(route):
    """route (an operator site's `+`, `-`, `*`) given a numpy.ma masked array with no masked entry beside a dual
    (pykalman's `observation - predicted`) as its data: those operators mask nothing, and a dual cannot enter
    the masked array's own (its `getdata` asks the dual for a plain array: refused). The result is the duals'
    plain array, where the program's is a masked array of no masked entry."""
    def operate(a, b):
        if type(a) is _MASKED and type(b) is Dual and not masked_entries(a):
            a = a.data
        elif type(b) is _MASKED and type(a) is Dual and not masked_entries(b):
            b = b.data
        return route(a, b)
    return operate


def _texts_checked(route, op: str):
    """`a == b` (or `!=`) with a check of two equal texts, one a differentiated value's (`text_compared`: a cache
    keyed by `repr(k)` taken for current, 0 silently). Its frame is passed over as the core's dispatch is
    (`dual.OPERATOR_CODES`: a dual's `__eq__` finds the user's test past it)."""
    def compare(a, b):
        if TEXTS_MADE and type(a) in TEXT_TYPES and (type(b) is type(a) or type(b) in TEXT_TYPES):
            text_compared(a, b, op)
        return route(a, b)
    return compare


OPERATOR_CODES.add(_texts_checked(None, "==").__code__)


def _array_with_object(fn, a, b, convert=None):
    """A perturbed array on the left of an operator with an object of a class of its own (`x - V(c)`): numpy
    makes an object array of the object's method applied to each element, where the duals' operator would
    hand the whole array to it once (a different value, silently: jacfwd 2x): refused. A numpy scalar there
    (`np.float64(s) + V(c)`): numpy hands the object's reflected method a Python number (`s.item()`), where
    `type(o) is float` or `hasattr(o, "shape")` may choose the branch: so does the dual it gets."""
    if type(a) is not Dual or not taken_per_element(b, Dual):
        return None
    if convert is not None and array_objects((b,)):
        # an object numpy converts by its class's `__array__` (ase's Cell: `x @ cell`): numpy takes it as that
        # array, converted here as code (its class's operator, given by a property, would convert it too)
        return a, convert(b)
    if numpy_scalar_dual(a):
        return as_python_number(a), b
    if isinstance(a.primal, np.ndarray) and a.primal.ndim:
        raise NoForwardRule(f"an array perturbed by forward mode combined by `{fn.__name__}` with a "
                            f"{type(b).__name__}, an object of a class of its own (numpy applies its method to "
                            "each element: an object array)",
                            fix="apply the operator to each element yourself, or to plain values")
