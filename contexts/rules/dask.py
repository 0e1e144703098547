"""dask's arrays as leaves (`contexts.rules.leaves.ArrayLeaf`): values, never code.

A dask array's operators, numpy's functions on it and its methods are the primitives numpy's rules
differentiate (dask implements numpy's `__array_ufunc__` and `__array_function__`, so `np.sin(x)` on a
dask array is dask's, lazily), and the rules keep their arrays as they are (`leaves.as_array`). dask's own
functions that mirror numpy's (`da.exp`, `da.sum`, `da.dot`, ...) get the rules of numpy's functions of
the same name; any other of dask's functions reached with a differentiated value (`da.map_blocks`,
`da.linalg.qr`, ...) is refused by name, never differentiated through dask's Python code (dask's modules
are opaque, `overdub.opaque("dask")`). A gradient over dask arrays is a dask array: nothing is computed
until the user computes it, on the client or on a `dask.distributed` cluster.

Loaded when `dask.array` is first imported (`leaves.DOMAINS`): `import contexts` does not import dask.
"""

from __future__ import annotations

import dask.array as da
import numpy as np

from overdub import opaque

from .leaves import register_array
from .registry import registry

__all__: list[str] = []

register_array(da.Array)
opaque("dask")  # its Python code is never recursed into: a function without a rule is refused by name


def _mirror_numpy() -> None:
    """dask.array's functions named as numpy's get numpy's rules (their arguments' meaning is numpy's);
    rules that change arrays in place or iterate are numpy's alone."""
    for name in dir(da):
        ours, theirs = getattr(da, name, None), getattr(np, name, None)
        if not callable(ours) or theirs is None or isinstance(ours, type) or name.startswith("_"):
            continue
        rule = registry.get(theirs)
        if rule is None or rule.mutating or rule.inplace is not None or rule.iterates or registry.get(ours):
            continue
        if rule.kind == "nondiff":
            registry.nondifferentiable(ours)
            continue
        if rule.adjoint is not None:
            registry.adjoint(ours, kind=rule.kind)(rule.adjoint)
        if rule.frule is not None:
            registry.frule(ours, kind=rule.kind)(rule.frule)
        registry.srule(ours)(_on_tracers(theirs))  # sparsity: numpy's function on the tracers


def _on_tracers(theirs):
    def by_numpy(*args, **kwargs):
        return theirs(*args, **kwargs)
    by_numpy.__name__ = f"{getattr(theirs, '__name__', 'fn')}_by_numpy"
    return by_numpy


_mirror_numpy()


# questions other libraries ask of any value (xarray: is it a dask collection?), answered with a flag
import dask.base as _dask_base  # noqa: E402

registry.nondifferentiable(_dask_base.is_dask_collection)
