"""Whether a value holds duals: `dual_free(v)`, certainly none (walked through containers, objects' fields,
closures and partials), and `splittable(y)`, all of them where they can be taken apart into primal and
tangent (plain lists, tuples and dicts).

The tangent twin's runtime asks both of what a call run on duals left behind (its result, the arguments it
was given without tangents): a dual anywhere else makes the caller's derivative run on duals from the start.
The API asks `dual_free` of a result.
"""

from __future__ import annotations

import collections
import functools
import types

import numpy as np

from ..rules.cotangents import fields_of
from .dual import Dual

__all__ = ["dual_free", "splittable"]

_LEAVES = (int, float, complex, bool, str, bytes, bytearray, memoryview, type(None), np.generic,
           types.ModuleType, type, types.BuiltinFunctionType, np.dtype, range, slice, type(Ellipsis),
           type(NotImplemented))
# where the C objects of the standard library that hold Python values but show none of them live
_OPAQUE_MODULES = frozenset({"builtins", "itertools", "_collections", "_operator", "operator", "_functools"})


def dual_free(v, seen=None, budget=None) -> bool:
    """v certainly holds no dual: walked through containers, objects' fields, closures and partials;
    iterators, generators and the like of the standard library (which may hold anything) are not."""
    if type(v) is float:  # the common answer
        return True
    if type(v) is Dual:
        return False
    if isinstance(v, _LEAVES):
        return True
    if seen is None:
        seen, budget = set(), [100000]
    if id(v) in seen:
        return True
    seen.add(id(v))
    budget[0] -= 1
    if budget[0] < 0:
        return False  # too big to tell
    if type(v) is np.ndarray:
        return v.dtype != object or all(dual_free(e, seen, budget) for e in v.flat)
    parts: list = []
    if isinstance(v, (list, tuple, set, frozenset, collections.deque)):
        parts.extend(v)
    elif isinstance(v, dict):  # (its items as stored: a subclass's own `values()` may read a field not made yet,
        parts += [*dict.values(v), *dict.keys(v)]  # dok_matrix's `_dict` in `__init__`; its fields are read below)
    elif type(v) is types.FunctionType:  # its cells and defaults (not its attributes)
        parts += [*(v.__closure__ or ()), *(v.__defaults__ or ()), *(v.__kwdefaults__ or {}).values()]
        return all(dual_free(p, seen, budget) for p in parts)
    elif type(v) is types.CellType:
        try:
            parts.append(v.cell_contents)
        except ValueError:  # (an empty cell)
            return True
    elif type(v) is types.MethodType:
        parts += [v.__self__, v.__func__]
    elif isinstance(v, functools.partial):
        parts += [v.func, *v.args, *v.keywords.values()]
    elif isinstance(v, BaseException):
        parts.extend(v.args)
    elif (type(v).__module__ in _OPAQUE_MODULES and type(v) is not object) or isinstance(
            v, (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)):
        return False  # an iterator, a generator, map(...), itemgetter(...): may hold anything
    try:
        parts.extend(fields_of(v).values())
    except Exception:  # an object whose fields cannot be read plainly: it may hold anything
        return False
    return all(dual_free(p, seen, budget) for p in parts)


def splittable(y) -> bool:
    """Output y's duals can all be taken apart into primal and tangent (`api._primal_out`): they sit in
    plain lists, tuples and dicts, nowhere else."""
    if type(y) is Dual:
        return True
    if type(y) is list or type(y) is tuple:
        return all(splittable(e) for e in y)
    if type(y) is dict:
        return all(splittable(e) for e in y.values()) and all(dual_free(k) for k in y)
    return dual_free(y)
