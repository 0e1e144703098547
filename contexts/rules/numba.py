"""numba's compiled functions, differentiated as the Python functions they were compiled from.

`@numba.njit` (`@jit`) keeps the Python function as the dispatcher's `py_func`, `@numba.vectorize` its scalar
kernel as `_dispatcher.py_func`: every engine runs that code where the compiled function is given
differentiated values (`registry.made_stand_ins`), as numba itself runs it with `NUMBA_DISABLE_JIT=1` —
numba's semantics on floats are Python's and numpy's. A vectorized kernel is applied elementwise as
`np.vectorize` applies it, its result a scalar for scalar arguments as the ufunc's is. Called without
differentiated values the machine code runs, as fast as before.

pythermalcomfort's comfort models (`_pmv_ppd_optimized`, a `@vectorize`; `_gagge_two_nodes_optimized`, an
`@njit`), orbit-predictor's anomaly conversions and much simulation code compute so; before, reverse mode
refused them as C functions and forward mode's duals crashed numba's type inference (`TypingError`).

A `@guvectorize` kernel writes its results into output arrays: it runs once per element of the loop
dimensions, given its core slices of the broadcast inputs and fresh outputs it fills (`gufunc_kernel`;
properscoring's `crps_ensemble` computes so where numba is installed).

Where the Python is not what was compiled it is refused, by numba's name and the function's: code reaching a
function numba gives an implementation of its own by `@overload` (its Python body is a stub, or another
implementation: interpolation.py's `interp(*args)` calls `_interp(*args): pass`; run as Python, the primal came
out None), looked for through the globals, closures and numba functions the code names (`_python_ok`).
Not covered either: CUDA and parallel targets' objects, output arrays passed in and options (`out=`,
`axis=`), and ufunc methods (`.reduce`, `.accumulate`, `.at`). Loaded when numba is first imported
(`leaves.DOMAINS`).
"""

from __future__ import annotations

import builtins
import itertools
import types

import numpy as np
from numba.core.registry import CPUDispatcher
from numba.np.ufunc.dufunc import DUFunc
from numba.np.numpy_support import as_dtype
from numba.np.ufunc.gufunc import GUFunc

from .registry import NoRuleError, registry

__all__ = ["vectorized_kernel", "gufunc_kernel"]


_SCALARS = (float, int, np.generic)  # (numbers, Python's and numpy's scalars; bool is an int)


def vectorized_kernel(kernel, *args, **kwargs):
    """A `@numba.vectorize` ufunc's call as Python: its scalar kernel over the broadcast arguments."""
    if kwargs:
        raise NoRuleError(f"the options {sorted(kwargs)} of the numba ufunc {kernel.__name__}",
                          fix="call it without them (assign its result instead of out=)")
    for a in args:
        if not isinstance(a, _SCALARS):
            break
    else:  # numbers alone (kernels calling kernels, psychrolib's): the kernel once, its value as the ufunc's scalar
        return np.asarray(kernel(*args))[()]
    # (`cache=True`: the kernel runs once per element, as numba's loop runs it; np.vectorize's own probe of the
    # first element's types ran it twice there, and kernels calling kernels, psychrolib's, 2 ** depth times:
    # 4 s for one gradient of its wet-bulb temperature)
    y = np.vectorize(kernel, cache=True)(*args)
    return y[()] if np.ndim(y) == 0 else y


def gufunc_kernel(kernel, ins, outs, inputs_as_arrays, dtypes, *args, **kwargs):
    """A `@guvectorize` ufunc's call as Python: for each index of the loop dimensions (the inputs' broadcast
    shape without their core dimensions, `ins`: one tuple of names per input), the kernel given the inputs'
    core slices (a scalar core as a 1-element array where the kernel's type says an array) and fresh output
    arrays of the core shapes (`outs`, of `dtypes`) it fills; the results stacked, as numba's loop lays them."""
    if kwargs or len(args) != len(ins):
        raise NoRuleError(f"the numba generalized ufunc {kernel.__name__} given its output arrays or options",
                          fix="call it with its inputs only and assign the results")
    args = [np.asarray(a) for a in args]
    sizes = {}
    loops = []
    for a, core in zip(args, ins):
        if np.ndim(a) < len(core):
            raise ValueError(f"{kernel.__name__}: an input has fewer dimensions than its core {core}")
        lead = np.ndim(a) - len(core)
        loops.append(np.shape(a)[:lead])
        for name, n in zip(core, np.shape(a)[lead:]):
            if sizes.setdefault(name, n) != n:
                raise ValueError(f"{kernel.__name__}: core dimension {name} is {sizes[name]} and {n}")
    loop = np.broadcast_shapes(*loops)
    wide = [np.broadcast_to(a, loop + np.shape(a)[len(np.shape(a)) - len(core):]) for a, core in zip(args, ins)]
    made = [[] for _ in outs]
    for index in itertools.product(*map(range, loop)):  # (np.ndindex is an np.nditer with multi_index in numpy
        # 2.3, which reverse mode does not differentiate: properscoring's crps_ensemble refused there)
        parts = [np.reshape(w[index], (1,)) if not core and array else w[index]
                 for w, core, array in zip(wide, ins, inputs_as_arrays)]
        results = [np.empty(tuple(sizes[n] for n in core) or (1,), dtype=dt) for core, dt in zip(outs, dtypes)]
        _filled(kernel, (*parts, *results))
        for kept, r, core in zip(made, results, outs):
            kept.append(r if core else r[0])
    stacked = []
    for kept, core in zip(made, outs):
        y = np.reshape(np.array(kept), loop + tuple(sizes[n] for n in core))
        stacked.append(y[()] if np.ndim(y) == 0 else y)
    return stacked[0] if len(stacked) == 1 else tuple(stacked)


def _filled(kernel, a):
    """kernel(*a), its arguments by position (reverse mode follows the outputs the kernel fills only when they
    are passed so, not through a `*spread`)."""
    n = len(a)
    if n == 2:
        kernel(a[0], a[1])
    elif n == 3:
        kernel(a[0], a[1], a[2])
    elif n == 4:
        kernel(a[0], a[1], a[2], a[3])
    elif n == 5:
        kernel(a[0], a[1], a[2], a[3], a[4])
    elif n == 6:
        kernel(a[0], a[1], a[2], a[3], a[4], a[5])
    elif n == 7:
        kernel(a[0], a[1], a[2], a[3], a[4], a[5], a[6])
    elif n == 8:
        kernel(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7])
    else:
        raise NoRuleError(f"the numba generalized ufunc {kernel.__name__} of {n} arguments (8 at most)",
                          fix="give it a rule (`contexts.custom_adjoint`)")


def _dynamic_refused(fn, *args, **kwargs):
    raise NoRuleError(f"the numba generalized ufunc {fn.__name__} made without type signatures (a dynamic "
                      "@guvectorize), given differentiated values",
                      fix="give @guvectorize its signatures (`[\"void(float64[:], float64[:])\"]`), or a rule")


def _gufunc(fn):
    builder = getattr(fn, "gufunc_builder", None)
    py = getattr(builder, "py_func", None)
    sigs = getattr(builder, "_sigs", None)
    if py is None:
        return None
    if not sigs:  # (a dynamic one, compiled by the types it is first called with: refused by numba's name)
        return _dynamic_refused, (fn,)
    types_ = sigs[0].args
    ins, outs = [tuple(c) for c in builder.sin], [tuple(c) for c in builder.sout]
    arrays = tuple(hasattr(t, "ndim") for t in types_[:len(ins)])
    dtypes = tuple(as_dtype(getattr(t, "dtype", t)) for t in types_[len(ins):])
    return _checked(fn, (gufunc_kernel, (py, ins, outs, arrays, dtypes)))


def _overloaded() -> dict:
    """id -> the Python functions numba gives an implementation of their own by `@overload` (numba's own and
    the libraries' registered so far, not numpy's and the standard library's, whose Python is what numba
    imitates: asked again when the registry grew)."""
    from numba.core.typing.templates import builtin_registry
    entries = builtin_registry.globals
    if _OVERLOADED[0] != len(entries):
        _OVERLOADED[1] = {id(f): f for f, _ in entries if type(f) is types.FunctionType
                          and (f.__module__ or "").split(".")[0] not in _GENUINE}
        _OVERLOADED[0] = len(entries)
    return _OVERLOADED[1]


_OVERLOADED: list = [-1, {}]
# packages whose Python functions numba's overloads imitate (np.full's numba implementation is numpy's function's):
# their Python is the genuine one
_GENUINE = frozenset({"numpy", "scipy", "math", "cmath", "operator", "builtins", "random", "functools", "itertools",
                      "heapq", "bisect", "collections", "numbers", "string", "array"})
_CHECKED: dict = {}  # code -> the overloaded function its Python reaches (None: none)


def _stub_reached(py, depth: int = 0):
    """The function numba implements by `@overload` that py's code reaches (through the globals and closure
    cells it names, the attributes of the modules it names, the numba and Python functions among them, to a
    depth of 6), or None: where there is none, the Python computes what the machine code does."""
    code = py.__code__
    if code in _CHECKED:
        return _CHECKED[code]
    _CHECKED[code] = None  # (a recursion reaching itself)
    over = _overloaded()
    names = set()
    todo = [code]
    while todo:
        c = todo.pop()
        names.update(c.co_names)
        todo.extend(k for k in c.co_consts if type(k) is types.CodeType)
    values = [py.__globals__.get(n, getattr(builtins, n, None)) for n in names]
    values += [cell.cell_contents for cell in (py.__closure__ or ()) if _full(cell)]
    found = None
    for v in values:
        if type(v) is types.ModuleType:
            hits = [getattr(v, n, None) for n in names]
            found = next((h for h in hits if id(h) in over and over[id(h)] is h), None)
        elif id(v) in over and over[id(v)] is v:
            found = v
        elif depth < 6 and isinstance(v, (CPUDispatcher, DUFunc, GUFunc)):
            inner = _python_of(v)
            found = None if inner is None else _stub_reached(inner, depth + 1)
        elif depth < 6 and type(v) is types.FunctionType and v.__module__ == py.__module__:
            found = _stub_reached(v, depth + 1)
        if found is not None:
            break
    _CHECKED[code] = found
    return found


def _full(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _python_of(fn):
    if isinstance(fn, CPUDispatcher):
        return getattr(fn, "py_func", None)
    if isinstance(fn, DUFunc):
        return getattr(getattr(fn, "_dispatcher", None), "py_func", None)
    return getattr(getattr(fn, "gufunc_builder", None), "py_func", None)


def _not_python(fn, stub, *args, **kwargs):
    raise NoRuleError(
        f"the numba function {getattr(fn, '__name__', fn)!s} reaches {stub.__qualname__}, which numba implements by "
        "@overload: its Python is not what the machine code runs, and is not differentiated",
        fix="give the numba function a rule (`contexts.custom_adjoint`), or differentiate its pure Python "
            "implementation")


def _checked(fn, stand):
    """stand, the stand-in of numba's fn, where fn's Python is what was compiled; else its refusal."""
    py = _python_of(fn)
    stub = None if py is None else _stub_reached(py)
    return stand if stub is None else (_not_python, (fn, stub))


def _dispatcher(fn):
    py = _python_of(fn)
    return None if py is None else _checked(fn, (py, ()))


def _dufunc(fn):
    py = _python_of(fn)
    return None if py is None else _checked(fn, (vectorized_kernel, (py,)))


registry.code_files.add(__file__)  # (the outputs made here are fresh arrays, as in the user's code)
registry.made_stand_ins[CPUDispatcher] = _dispatcher
registry.made_stand_ins[DUFunc] = _dufunc
registry.made_stand_ins[GUFunc] = _gufunc
