"""The sparsity context: calls that cannot know about tracers (math.sin, C functions, constructors) get
their sparsity rule; pure-Python callees are recursed into; operators are left to the tracers."""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from typing import Any

import numpy as np
from numpy._core._multiarray_umath import _array_converter

import overdub
from overdub.passes import bound_self, method_function
from overdub.errors import OverdubError

from contexts.forward.observe import Observed, observer
from contexts.rules.numpy.conversion import KeptConverter
from contexts.rules.numpy.inplace import OverlappingWrite, as_store
from contexts.rules.numpy.stand_ins import vectorized
from contexts.rules.registry import registry

from ..lowered.bisection import bisects, held_in_callables, refuse_bisection, steps_on_free
from ..lowered.runtime import TEXT_IDS, text_call
from ..rules.containers import holds
from ..rules.leaves import runs_natively, taken_per_element
from . import rules
from .interpret import always, sparsity_rule
from .ops import PlainArrayWrite, derive, has_tracer, out_as_keyword, split_out, write_out
from .tracer import NoSparsityRule, TracedBranchError, Tracer, _shape

__all__ = ["SparsityContext", "sparsity_context"]

_OWN = ("contexts.sparsity",)


def _own(fn: Any) -> bool:
    """fn belongs to the tracer machinery (a Tracer method, a rule): call it, never patch it."""
    module = getattr(fn, "__module__", None) or ""
    return module.startswith(_OWN) or isinstance(bound_self(fn), Tracer)


_CLASS_MATCH = overdub.ops.class_match
_STORES = frozenset({np.copyto, np.place, np.putmask, np.put, np.fill_diagonal})
_STORE_IDS = frozenset(map(id, _STORES))  # by identity: a callable object may be unhashable (__eq__ only)


class _TracersConverter(KeptConverter):
    """numpy's `_array_converter(*values)` where a value is a tracer, which the C converter would make a
    plain array: tracers stay tracers (`rules.numpy.conversion.KeptConverter`)."""

    @staticmethod
    def kept(v) -> bool:
        return isinstance(v, Tracer)

    @staticmethod
    def value_of(v):
        return v.dtype

    @staticmethod
    def ndim(arr) -> int:
        return len(_shape(arr))


# what a 0-d value may be when its primal is unknown: a numpy scalar or a 0-d array, real or complex
_SCALAR_STAND_INS = (np.float64(0.0), np.array(0.0), np.complex128(0.0), np.array(0j))


def _library_dirs() -> tuple:
    """numpy's and scipy's directories (scipy's without importing it)."""
    dirs = [os.path.dirname(np.__file__)]
    spec = importlib.util.find_spec("scipy")
    dirs += list(spec.submodule_search_locations or ()) if spec is not None else []
    return tuple(d + os.sep for d in dirs)


_ARRAY_LIBRARIES = _library_dirs()
# (Python's own library too: `copy` asks `type(x)` of a tracer it copies, as of the object it is, the tracer)
_STDLIB = os.path.dirname(os.__file__) + os.sep


def _asks_as_library(filename: str) -> bool:
    """Code that takes a tracer for what it is: numpy's, scipy's, and Python's own library (not the packages
    installed beside it)."""
    return filename.startswith(_ARRAY_LIBRARIES) or filename.startswith(_STDLIB) and "site-packages" not in filename


def _type(site, t: Tracer) -> type:
    """type(t) asked by the user's code (not numpy's or scipy's, which take the tracer for what it is): the type
    of the value t stands for, as `_isinstance` answers (`type(s) is float` of `s = float(x.sum())` was False, the
    other branch taken: missed nonzeros, sp42 W10). An array's is ndarray; a number's that of its primal, when
    known; else refused: global mode does not know a Python float from a numpy scalar or a 0-d array."""
    if t.shape:
        return np.ndarray
    if t.primal is not None:
        return type(t.primal)
    raise TracedBranchError(
        "type(value) of a number that depends on the inputs: global sparsity detection does not know whether it "
        "is a Python float, a numpy scalar or a 0-d array", where=str(site),
        fix="use mode='local' (the value's type at one point decides it), or isinstance")


def _hasattr(site, t: Tracer, name) -> bool:
    """hasattr(t, name) asked by the user's code, as the value t stands for answers it: an array's as an ndarray's,
    a number's as its primal's where known, else as all its possible types agree (`hasattr(s, 'shape')` of a float
    was a tracer's True: the other branch, missed nonzeros, sp42 W10), else refused."""
    if t.shape:
        return hasattr(np.empty((0,) * len(t.shape)), name)
    if t.primal is not None:
        return hasattr(t.primal, name)
    answers = {hasattr(v, name) for v in (*_SCALAR_STAND_INS, 0.0, 0j)}  # (`float(t)`'s too: a Python float)
    if len(answers) == 1:
        return answers.pop()
    raise TracedBranchError(
        f"hasattr(value, {name!r}) of a number that depends on the inputs: global sparsity detection does not know "
        "whether it is a Python float, a numpy scalar or a 0-d array", where=str(site),
        fix="use mode='local' (the value's type at one point decides it)")


def _isinstance(site, t: Tracer, cls) -> bool:
    """isinstance(t, cls) as the value t stands for would answer it. Questions about arrays
    (`isinstance(a, np.ndarray)`) asked by numpy's and scipy's own code keep the tracer's answer, False:
    a tracer goes through their generic path (`np.asarray(a)`); asked by other code of a traced array, the
    array's answer, True (`return self.v * o if isinstance(self.v, np.ndarray) else 0.0 * o` took the other
    branch: an empty pattern). Questions about numbers (`isinstance(v, float)`) get the answer of the
    value: of its primal when known, else the one all its possible types agree on, else a refusal, never a
    guess."""
    if isinstance(np.empty(0), cls):
        if t.shape and not site.filename.startswith(_ARRAY_LIBRARIES) and not (t.is_constant and t.primal is not None):
            return True
        # (a constant whose value is known is that value: numpy's `isinstance(condlist[0], ndarray)`)
        return isinstance(t.primal if t.is_constant and t.primal is not None else t, cls)
    if t.shape:
        return False  # an array is none of the number types
    if t.primal is not None:
        return isinstance(t.primal, cls)
    answers = {isinstance(v, cls) for v in _SCALAR_STAND_INS}
    if len(answers) == 1:
        return answers.pop()
    raise TracedBranchError(
        f"isinstance(value, {getattr(cls, '__name__', cls)}) of a value that depends on the inputs: global "
        "sparsity detection does not know whether it is a numpy scalar or a 0-d array, real or complex",
        where=str(site),
        fix="use mode='local' (the value's type at one point decides it)")


def _isscalar(site, t: Tracer) -> bool:
    """np.isscalar(t) as the value t stands for would answer it (pvlib's `np.isscalar(x)` branches): an array
    is not a scalar; a 0-d value is what its primal is, when known (a numpy scalar: yes; a 0-d array: no),
    else refused, never a guess."""
    if t.shape:
        return False
    if t.primal is not None:
        return bool(np.isscalar(t.primal))
    raise TracedBranchError(
        "np.isscalar(value) of a value that depends on the inputs: global sparsity detection does not know "
        "whether it is a numpy scalar or a 0-d array", where=str(site),
        fix="use mode='local' (the value's type at one point decides it)")


# the stores whose positions come from an argument (mask or indices), and their parameter names
_STORE_TARGET = {np.place: "arr", np.putmask: "a", np.put: "a", np.copyto: "dst", np.fill_diagonal: "a"}
_STORE_WHERE = {np.place: "mask", np.putmask: "mask", np.put: "ind"}
_STORE_VALUES = {np.place: "vals", np.putmask: "values", np.put: "v"}


def _value(a):
    return a.primal if isinstance(a, Tracer) else a


def _holds_tracer(x) -> bool:
    """x is a tracer or holds one in a list, tuple, dict or an object's fields."""
    return holds(x, _is_tracer)


def _is_tracer(v) -> bool:
    return isinstance(v, Tracer)


class SparsityContext(overdub.Context):
    """Runs a function on sparsity tracers; usually reached through `jacobian_sparsity`.

    >>> import math, numpy as np
    >>> from contexts.sparsity import jacobian_sparsity
    >>> jacobian_sparsity(lambda x: [math.sin(x[0]), x[1] * x[2]], np.ones(3)).toarray().astype(int)
    array([[1, 0, 0],
           [0, 1, 1]])
    """

    # operators, tests, iteration and `with`: an object's own special methods in Python run under the
    # context (`operator_for`), not natively on tracers, where `isinstance(self.v, np.ndarray)` would answer
    # for the tracer and the code take another branch than on the values (an empty pattern)
    intercepts = frozenset({"call", "binop", "augop", "unaryop", "compare", "iter", "truth", "with"})
    operate = "operator_for"

    def operator_for(self, fn):
        """What an operator site calls with its operands (`overdub.ops.own_methods_route`)."""
        return overdub.ops.own_methods_route(fn, self.recurse, runs_natively, _array_with_object)

    def primitive(self, fn, /, *args, **kwargs):
        """A callable without a twin: numba's compiled functions as their Python (`rules.numba`; the one
        differentiated itself, `jacobian_sparsity(njit_f, x)`), anything else called."""
        if type(fn) in registry.made_stand_ins and type(fn) is not np.ufunc and has_tracer(args, kwargs) \
                and (stand := registry.stand_in_of(fn)) is not None:
            return self.recurse(stand[0], *stand[1], *args, **kwargs)
        return fn(*args, **kwargs)

    def overdub(self, site, fn, /, *args, **kwargs):
        if _own(fn):
            return fn(*args, **kwargs)
        if id(fn) in TEXT_IDS:  # str/repr/format of a tracer (its text remembered), a parse of such text
            y = text_call(fn, args, kwargs, has_tracer(args, kwargs), lambda v: v)
            if y is not None:
                return y
        if fn is map and len(args) > 1 and not kwargs and not overdub.is_recursable(args[0]) and has_tracer(args[1:]):
            # `map(np.asarray, (x, loc, scale))` (scipy.stats' distributions): the function called from C on each
            # item was a tracer's conversion to a plain array, refused; each call goes through the context
            f = args[0]
            return map(lambda *items: self.overdub(site, f, *items), *args[1:])
        if fn is _CLASS_MATCH and has_tracer(args, kwargs):
            raise TracedBranchError("a `match` with class patterns on a value that depends on the inputs "
                                    "(Python's isinstance would answer for the tracer)", where=str(site),
                                    fix="test the value with `if isinstance(...)` chains instead")
        if fn is _array_converter and has_tracer(args, kwargs):
            return _TracersConverter(*args)
        if fn is isinstance and len(args) == 2 and type(args[0]) is Tracer and not kwargs:
            return _isinstance(site, *args)
        if fn is type and len(args) == 1 and type(args[0]) is Tracer and not kwargs \
                and not _asks_as_library(site.filename):
            return _type(site, args[0])
        if fn is hasattr and len(args) == 2 and type(args[0]) is Tracer and not kwargs and type(args[1]) is str \
                and not args[1].startswith("_") and not _asks_as_library(site.filename):
            # (not a protocol's name: `copy` asks `hasattr(y, '__setstate__')` of a tracer it is making)
            return _hasattr(site, *args)
        if fn is np.isscalar and len(args) == 1 and type(args[0]) is Tracer and not kwargs \
                and not site.filename.startswith(_ARRAY_LIBRARIES):  # (numpy's own code: the tracer's answer)
            return _isscalar(site, args[0])
        if isinstance(bound_self(fn), np.ufunc) and fn.__name__ == "at" and not kwargs:
            return rules.ufunc_at(fn.__self__, *args)
        if id(fn) in _STORE_IDS:  # np.copyto, np.place, np.putmask, np.put, np.fill_diagonal: one store
            if not any(isinstance(a, Tracer) and not (a.is_constant and a.primal is not None)
                       for a in (*args, *kwargs.values())):
                # constants only (np.zeros inside numpy's own code): numpy's store on the values
                return fn(*(_value(a) for a in args), **{k: _value(v) for k, v in kwargs.items()})
            where = args[1] if len(args) > 1 else kwargs.get(_STORE_WHERE.get(fn, ""))
            target = args[0] if args else kwargs.get(_STORE_TARGET.get(fn, ""))
            if (fn in _STORE_WHERE and isinstance(where, Tracer) and where.primal is None
                    and isinstance(target, Tracer)):
                # global mode, positions depending on the inputs: each element may take any value
                values = args[2] if len(args) > 2 else kwargs.get(_STORE_VALUES[fn])
                target.store_anywhere(values)
                return None
            if fn is np.place:
                _refuse_overlapping_place(args, kwargs)
            target, index, values = as_store(fn, args, kwargs)
            if isinstance(target, Tracer):
                target[index] = values
                return None
            if has_tracer((values,), {}):
                raise NoSparsityRule(f"np.{fn.__name__} writes traced values into a plain array",
                                     where=str(site), fix="allocate it with np.zeros/np.empty inside the traced "
                                                          "function (they give tracers)")
        if kwargs.get("out", None) is Ellipsis:  # numpy 2: out=... asks for an array, not a scalar
            kwargs = {k: v for k, v in kwargs.items() if k != "out"}
        rule = registry.get(fn)
        traced = has_tracer(args, kwargs)
        srule = sparsity_rule(rule, fn)
        if srule is not None and (traced or always(rule)):
            args, kwargs = out_as_keyword(fn, args, kwargs)
            if kwargs.get("out") is not None:
                rest, out, where = split_out(fn, kwargs)
                return write_out(fn, srule(*args, **rest), out, where, str(site))
            return srule(*args, **kwargs)
        if traced and (rule is not None and rule.stand_in is not None and srule is None
                       or rule is None and type(fn) in registry.made_stand_ins and type(fn) is not np.ufunc) \
                and (stand := registry.stand_in_of(fn)) is not None:  # (the second: numba's, `rules.numba`)
            # the primitive as Python code (`Rule.stand_in`: scipy.sparse's `csr_matvec` under `A @ x`), traced
            # as code: a C function of another extension is never given tracers (`_traced_primitive`). (Not the
            # stand-ins made per ufunc of `np.frompyfunc`: elementwise by their kind, and calling themselves)
            return self.recurse(stand[0], *stand[1], *args, **kwargs)
        if traced and isinstance(fn, np.vectorize):  # numpy's loop as Python (`stand_ins.vectorized`): the
            return self.recurse(vectorized, fn, *args, **kwargs)  # function traced per element (was refused)
        if overdub.is_recursable(fn):
            if (step := bisects(method_function(fn))) is not None and (
                    traced or held_in_callables((fn, *args, *kwargs.values()), _is_tracer)) \
                    and not steps_on_free(fn, step, args, kwargs, lambda v: not held_in_callables((v,), _is_tracer)):
                raise refuse_bisection(method_function(fn), step, "sparsity detection")
            return self.recurse(fn, *args, **kwargs)
        if not traced:
            try:
                return fn(*args, **kwargs)
            except (TypeError, ValueError) as e:  # a tracer deeper inside (`json.dumps({"a": t})`)
                # (or numpy's own code on plain values given a numpy scalar for `out=` where it made a 0-d
                # array: np.percentile's `_lerp` on a plain array inside traced code; not yet understood,
                # refused rather than a raw TypeError)
                if isinstance(e, OverdubError) or not (_holds_tracer(args) or isinstance(
                        kwargs.get("out"), np.generic)):
                    raise
                raise NoSparsityRule(f"no sparsity rule for {getattr(fn, '__qualname__', fn)}, reached with "
                                     f"traced values inside its arguments ({type(e).__name__}: {e})",
                                     where=str(site), fix="register a sparsity rule, or pass plain values") from e
        return self._traced_primitive(site, rule, fn, args, kwargs)

    def _traced_primitive(self, site, rule, fn, args, kwargs):
        """A C function reached with tracers and no srule: numpy protocols, then the rule's kind. A C function
        of another extension (scipy's `lsoda`) is not given tracers at all: it knows no numpy protocol, and a
        tracer's refusal raised inside it (`__array__`) left scipy's LSODA wrapper's objects broken, the
        interpreter crashing later in a garbage collection (sp43 C1)."""
        try:
            if _foreign_c(fn):
                raise TypeError(f"a C function of {fn.__module__ or 'an extension'}, not given tracers")
            return fn(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - any failure of a C function on tracers means "no rule"
            if isinstance(e, PlainArrayWrite) or isinstance(e, OverdubError) and kwargs.get("out") is not None:
                raise  # (a write into a plain array refused, `out=` or `operator.iadd(c, t)`: derived without it,
                # the array kept its values, silently)
            if rule is not None:
                result = derive(rule, fn, args, kwargs)
                if result is not NotImplemented:
                    return result
            if isinstance(e, OverdubError):
                raise
            name = getattr(fn, "__qualname__", None) or repr(fn)
            raise NoSparsityRule(
                f"no sparsity rule for {name}, reached with traced inputs ({type(e).__name__}: {e})",
                where=str(site),
                fix=f"declare one: `registry.sparsity(spec, {name})` with a spec of "
                    "contexts/rules/sparsity_specs.py (`DENSE` is conservative), or code on tracers with "
                    f"`registry.srule({name})`") from e


# the modules whose C functions take tracers through Python's and numpy's protocols (`len`, `math.sin`,
# `heapq.heapify`'s comparisons, ufuncs): Python's own and numpy's
_PROTOCOL_MODULES = frozenset(sys.stdlib_module_names) | {"numpy"}


def _foreign_c(fn) -> bool:
    """fn is a C function (not a method of an object, not a ufunc) of another extension than Python's and
    numpy's (scipy's `lsoda`, `_odepack`'s functions)."""
    if type(fn) is not types.BuiltinFunctionType:
        return False
    owner = fn.__self__
    if owner is not None and not isinstance(owner, types.ModuleType):  # (a C method bound to its object)
        return False
    module = fn.__module__ or (owner.__name__ if owner is not None else "")
    return bool(module) and module.split(".")[0] not in _PROTOCOL_MODULES


class ObservedSparsityContext(Observed, SparsityContext):
    """SparsityContext reporting each operation of the user's code to an observer (`contexts.ad.observe`);
    the values are tracers (their dependencies, and in local mode their primal)."""

    intercepts = Observed.intercepts | {"compare", "iter", "truth", "with"}  # (an object's own methods)

    def recurses(self, fn, args, kwargs) -> bool:
        return (not _own(fn) and overdub.is_recursable(fn) and id(fn) not in _STORE_IDS
                and sparsity_rule(registry.get(fn), fn) is None)


def sparsity_context() -> SparsityContext:
    """A SparsityContext, observed when a debugging context is active."""
    obs = observer()
    return SparsityContext() if obs is None else ObservedSparsityContext(obs)



def _array_with_object(fn, a, b) -> None:
    """A traced array on the left of an operator with an object of a class of its own (`x - V(c)`): numpy makes
    an object array of the object's method applied to each element; the tracer's operator would not: refused
    (not an object numpy leaves the operator to: `__array_ufunc__`, a higher `__array_priority__`)."""
    if type(a) is Tracer and a.shape and taken_per_element(b, Tracer):
        raise NoSparsityRule(f"a traced array combined by `{fn.__name__}` with a {type(b).__name__}, an object "
                             "of a class of its own (numpy applies its method to each element)",
                             fix="apply the operator to each element yourself, or to plain values")


def _root(t):
    return t._view[0] if isinstance(t, Tracer) and t._view is not None else t


def _refuse_overlapping_place(args: tuple, kwargs: dict) -> None:
    """`np.place(a, m, v)` of values v that are a, or a view of what a views: numpy reads them as it writes
    (`np.place(a, m, a)` repeats a's first values), a copy of them does not (sp42 W2: missed nonzeros; forward
    mode refuses it so too, `refuse_overlapping_place`)."""
    got = dict(zip(("arr", "mask", "vals"), args), **kwargs)
    arr, vals = got.get("arr"), got.get("vals")
    if isinstance(arr, Tracer) and isinstance(vals, Tracer) and _root(arr) is _root(vals):
        raise OverlappingWrite("np.place with values that share memory with the array it writes (numpy reads "
                               "them as it writes, one after another)", fix="pass a copy: `np.place(a, m, v.copy())`")
