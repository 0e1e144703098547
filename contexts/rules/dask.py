"""dask's arrays as leaves (`contexts.rules.leaves.ArrayLeaf`): values, never code.

A dask array's operators, numpy's functions on it and its methods are the primitives numpy's rules
differentiate (dask implements numpy's `__array_ufunc__` and `__array_function__`, so `np.sin(x)` on a
dask array is dask's, lazily), and the rules keep their arrays as they are (`leaves.as_array`). A gradient
over dask arrays is a dask array: nothing is computed until the user computes it, on the client or on a
`dask.distributed` cluster.

Loaded when `dask.array` is first imported (`leaves.DOMAINS`): `import contexts` does not import dask.
"""

from __future__ import annotations

import dask.array as da

from .leaves import register_array

__all__: list[str] = []

register_array(da.Array)
