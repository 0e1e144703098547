"""xarray's DataArrays and Datasets: containers of numpy arrays, differentiated through xarray's own Python.

xarray is pure Python on top of numpy: a DataArray holds a `Variable` whose `_data` is the ndarray; its
arithmetic, reductions, indexing and `xr.dot`/`xr.where` are xarray's code computing on those arrays (by
numpy's functions, which have rules), differentiated as any Python code is. Its objects keep their fields
in `__slots__`, stored by `object.__setattr__` (recorded as the stores of fields: `rules.builtins`).

What carries no derivative is the bookkeeping of labels: coordinates become pandas indexes, whose Python
and Cython internals are registered here as non-differentiable primitives (never recursed into).

Gradients: with respect to a DataArray input, the gradient is a DataArray of the same dims, coords and
name holding the gradient of its values (`contexts.ad.api`).

Loaded when xarray is first imported (`leaves.DOMAINS`).
"""

from __future__ import annotations

from pandas._libs import internals as _pd_internals

import pandas as pd

from .containers import SHARED_SAFELY
from .leaves import register_constant, register_labels
from .registry import registry

__all__: list[str] = []

registry.nondifferentiable(_pd_internals.BlockValuesRefs.add_index_reference)
register_constant(_pd_internals.BlockValuesRefs)  # (weak references to the arrays sharing memory)


def _register_predicates() -> None:
    """pandas' tests of values (in Cython): booleans, carrying no derivative."""
    from pandas._libs import lib

    for name in ("is_list_like", "is_scalar", "is_iterator", "is_integer", "is_float", "is_bool", "is_complex",
                 "is_hashable", "is_array", "item_from_zerodim", "is_np_dtype", "infer_dtype",
                 "is_bool_list", "is_range_indexer", "is_sequence_range", "dtypes_all_equal"):
        fn = getattr(lib, name, None)
        if fn is not None:
            registry.nondifferentiable(fn)


_register_predicates()
register_labels(pd.Index)


def _register_indexes() -> None:
    """xarray's indexes are never changed in place (xarray builds new ones): shared safely under every key
    of `dict.fromkeys` (`Coordinates._construct_direct`, alignment)."""
    from xarray.core.indexes import Index

    SHARED_SAFELY.append(Index)


_register_indexes()


def _register_lookups() -> None:
    """Looking labels up in an index (`.sel`) gives positions: integers, slices and masks, piecewise
    constant in the labels (pandas' index engines, in Cython)."""
    from pandas._libs import index as engines

    for name in ("IndexEngine", "MaskedIndexEngine", "ExtensionEngine", "BaseMultiIndexCodesEngine"):
        cls = getattr(engines, name, None)
        for method in ("get_loc", "get_indexer", "get_indexer_non_unique", "__contains__"):
            fn = getattr(cls, method, None)
            if fn is not None and not isinstance(fn, type(object.__init__)):
                registry.nondifferentiable(fn)


_register_lookups()
