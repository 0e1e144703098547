"""xarray's DataArrays and Datasets: containers of numpy arrays, differentiated through xarray's own Python.

xarray is pure Python on top of numpy: a DataArray holds a `Variable` whose `_data` is the ndarray; its
arithmetic, reductions, indexing and `xr.dot`/`xr.where` are xarray's code computing on those arrays (by
numpy's functions, which have rules), differentiated as any Python code is. Its objects keep their fields
in `__slots__`, stored by `object.__setattr__` (recorded as the stores of fields: `rules.builtins`).

What carries no derivative is the bookkeeping of labels: coordinates become pandas indexes, whose Python
and Cython internals are registered here as non-differentiable primitives (never recursed into).

Gradients: with respect to a DataArray input, the gradient is a DataArray of the same dims, coords, name
and attributes holding the gradient with respect to its values (coordinates are labels, held fixed); with
respect to a Dataset, a Dataset of the gradients of its data variables (reverse mode). `jacfwd(f, da)`
seeds the DataArray's values and gives a DataArray too, for a scalar f (`leaves.register_container`).
A DataArray returned is its values: `gradient` of a 0-d one seeds its number, `pullback`'s `back(dy)` takes
an array or a DataArray of its values' cotangents, and forward mode's derivative of one is a DataArray.

Loaded when xarray is first imported (`leaves.DOMAINS`).
"""

from __future__ import annotations

import numpy as np

from overdub.errors import OverdubError

from . import pandas as _pandas_rules  # noqa: F401  (pandas' own bookkeeping, registered there)
from .containers import SHARED_SAFELY
from .cotangents import Tangent
from .leaves import register_container
from .registry import registry

__all__: list[str] = []


# (pandas' indexes are registered as labels by the pandas domain)


def _register_indexes() -> None:
    """xarray's indexes are never changed in place (xarray builds new ones): shared safely under every key
    of `dict.fromkeys` (`Coordinates._construct_direct`, alignment)."""
    from xarray.core.indexes import Index

    SHARED_SAFELY.append(Index)


_register_indexes()


# (looking labels up in an index, `.sel`: pandas' index engines, registered by the pandas domain)


# -- gradients of DataArrays and Datasets -----------------------------------------------------------------

class UnsupportedContainer(OverdubError):
    """The gradient with respect to an xarray object whose values are not a numpy array in memory."""


def _numpy_values(variable, what: str):
    data = variable._data
    if type(data) is not np.ndarray or data.dtype.kind not in "fc":
        raise UnsupportedContainer(
            f"the gradient with respect to {what} whose values are a {type(data).__name__} "
            f"({getattr(data, 'dtype', '?')}), not a numpy array of floats",
            fix="pass it with its values loaded as floats (`da.astype(float).load()`), or differentiate with "
                "respect to `da.values` and build the DataArray inside the function")
    return data


def _field(d, name):
    return d.get(name) if isinstance(d, dict) else None


def _values_cotangent(g, data, finalize, what: str):
    if isinstance(g, dict):  # (the values' cotangent is not an array's: it went somewhere else)
        raise UnsupportedContainer(f"reverse mode could not bring the gradient with respect to {what} back to "
                                   "its values", fix="differentiate with respect to `da.values` and build the "
                                                     "DataArray inside the function")
    return finalize(g, data)


def dataarray_cotangent(d, x, finalize):
    """A DataArray of x's dims, coords, name and attributes holding the cotangent of x's values."""
    what = f"a DataArray {x.name!r}" if x.name is not None else "a DataArray"
    data = _numpy_values(x.variable, what)
    if isinstance(d, np.ndarray):  # (its values' cotangent, given whole)
        g = d
    else:
        g = _field(_field(d, "_variable"), "_data")
    return x.copy(data=_values_cotangent(g, data, finalize, what))


def dataset_cotangent(d, x, finalize):
    """A Dataset of x's variables holding the cotangents of its data variables' values (coordinates kept)."""
    variables = _field(d, "_variables")
    out = {}
    for name in x.data_vars:
        what = f"the variable {name!r} of a Dataset"
        data = _numpy_values(x.variables[name], what)
        out[name] = _values_cotangent(_field(_field(variables, name), "_data"), data, finalize, what)
    return x.copy(data=out)


def dataarray_values(x):
    return _numpy_values(x.variable, "a DataArray")


def dataarray_rebuild(x, values):
    """x with `values` (an array, or forward mode's dual) in place of its own."""
    return x.copy(data=values)


def dataarray_held(y):
    """The values an output DataArray holds (forward mode's dual too)."""
    return y.variable._data


def dataarray_seed(y, dy):
    """Reverse mode's cotangent of an output DataArray (its fields') from dy, the cotangent of its values: a
    number, an array or a DataArray (its values, in y's dims)."""
    data = y.variable._data
    if isinstance(dy, type(y)):
        dy = dy.transpose(*y.dims).variable._data
    dtype = data.dtype if getattr(data, "dtype", None) is not None and data.dtype.kind in "fc" else float
    g = np.array(np.broadcast_to(np.asarray(dy, dtype=dtype), np.shape(data)))
    return Tangent(_variable=Tangent(_data=g))


def _register_containers() -> None:
    import xarray

    register_container(xarray.DataArray, cotangent=dataarray_cotangent, values=dataarray_values,
                       rebuild=dataarray_rebuild, held=dataarray_held, seed=dataarray_seed)
    register_container(xarray.Dataset, cotangent=dataset_cotangent)


_register_containers()
