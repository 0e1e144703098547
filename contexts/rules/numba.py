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

Not covered, refused by name as before: `@guvectorize` (it writes into output arrays), CUDA and parallel
targets' objects, `@cfunc` (a C callback), and ufunc methods (`.reduce`, `.accumulate`, `.at`) of a
`@vectorize`. Loaded when numba is first imported (`leaves.DOMAINS`).
"""

from __future__ import annotations

import numpy as np
from numba.core.registry import CPUDispatcher
from numba.np.ufunc.dufunc import DUFunc
from numba.np.ufunc.gufunc import GUFunc

import overdub

from .registry import NoRuleError, registry

__all__ = ["vectorized_kernel"]


def vectorized_kernel(kernel, *args, **kwargs):
    """A `@numba.vectorize` ufunc's call as Python: its scalar kernel over the broadcast arguments."""
    if kwargs:
        raise NoRuleError(f"the options {sorted(kwargs)} of the numba ufunc {kernel.__name__}",
                          fix="call it without them (assign its result instead of out=)")
    y = np.vectorize(kernel)(*args)
    return y[()] if np.ndim(y) == 0 else y


def _dispatcher(fn):
    py = getattr(fn, "py_func", None)
    return None if py is None else (py, ())


def _dufunc(fn):
    py = getattr(getattr(fn, "_dispatcher", None), "py_func", None)
    return None if py is None else (vectorized_kernel, (py,))


registry.made_stand_ins[CPUDispatcher] = _dispatcher
registry.made_stand_ins[DUFunc] = _dufunc
# a `@guvectorize`'s Python `__call__` leads to a ufunc numba built, named as numpy's: refused at the call, by
# numba's name (`registry.library_hint`), where it is given differentiated values
overdub.opaque(GUFunc.__call__)
