"""pandas' bookkeeping met by code that computes with numpy (pvlib, xarray): Cython tests of values and the
references pandas keeps between arrays sharing memory, none of which carries a derivative. Registered as
non-differentiable primitives (reverse mode refused them as C functions without rules: `is_list_like` in
every pvlib function taking a Series or a float alike).

Loaded when pandas is first imported (`leaves.DOMAINS`); xarray's domain builds on it.
"""

from __future__ import annotations

from pandas._libs import internals as _pd_internals
from pandas._libs import lib as _pd_lib

import numpy as np

from .leaves import register_constant
from .registry import registry

__all__: list[str] = []

registry.nondifferentiable(_pd_internals.BlockValuesRefs.add_index_reference)
register_constant(_pd_internals.BlockValuesRefs)  # (weak references to the arrays sharing memory)

# pandas' tests of values (in Cython): booleans, carrying no derivative
registry.nondifferentiable(*(fn for name in (
    "is_list_like", "is_scalar", "is_iterator", "is_integer", "is_float", "is_bool", "is_complex", "is_hashable",
    "is_array", "is_np_dtype", "infer_dtype", "is_bool_list", "is_range_indexer",
    "is_sequence_range", "dtypes_all_equal") if (fn := getattr(_pd_lib, name, None)) is not None))


def item_from_zerodim(val):
    """pandas' `lib.item_from_zerodim` as the Python it is: a 0-d array's item, anything else itself (it was
    registered with the tests of values, as non-differentiable: `s * 2 + s * 3` kept 2 of 5)."""
    if isinstance(val, np.ndarray) and val.ndim == 0:
        return val[()]
    return val


registry.set(_pd_lib.item_from_zerodim, stand_in=item_from_zerodim)


def _register_lookups() -> None:
    """Looking labels up in an index (`.sel`, `.loc`, `reindex`) gives positions: integers, slices and masks,
    piecewise constant in the labels (pandas' index engines, in Cython). Registered with pandas, not only with
    xarray: ppigrf's `g.reindex(g.index.union(date))` of its coefficient table was refused in reverse mode."""
    from pandas._libs import index as engines

    for name in ("IndexEngine", "MaskedIndexEngine", "ExtensionEngine", "BaseMultiIndexCodesEngine"):
        cls = getattr(engines, name, None)
        for method in ("get_loc", "get_indexer", "get_indexer_non_unique", "__contains__"):
            fn = getattr(cls, method, None)
            if fn is not None and not isinstance(fn, type(object.__init__)):
                registry.nondifferentiable(fn)


_register_lookups()
