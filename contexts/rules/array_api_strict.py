"""array_api_strict's `Array`: the array API's reference array, a container of one numpy array.

array_api_strict (the array API standard's strict reference implementation, which libraries written against
the standard test with) is Python on numpy: an `Array` holds an ndarray in its `_array` slot, and its
operators, methods and namespace functions (`xp.sin`, `xp.sum`, `xp.matmul`, `xp.where`, ...) compute on that
array with numpy's functions, which have rules. Both modes differentiate through that Python, as through
xarray's; what is registered here is the boundary:

- the gradient with respect to an `Array` is an `Array` (its device kept), holding the gradient with
  respect to its values;
- an `Array` returned is its values: `gradient` of a 0-d one seeds its number, `pullback`'s `back(dy)`
  takes an `Array` or an ndarray of its values' cotangents, and forward mode's derivative of one is an
  `Array`;
- forward mode seeds an `Array` input's values (an `Array` holding a dual array), not the object;
- its operators run as code under forward mode (`Array * t` of a dual number t: natively, its check of the
  operand's type refused the dual).

Loaded when array_api_strict is first imported (`leaves.DOMAINS`).
"""

from __future__ import annotations

import numpy as np

from .cotangents import Tangent
from .leaves import register_container
from .registry import registry

__all__: list[str] = []


def _made(like, values):
    """An Array of `like`'s dtype and device holding `values` (an ndarray, or forward mode's dual array):
    its slots set as `Array._new` sets them, without `_new`'s check of the values' dtype, which a dual's
    is not."""
    out = object.__new__(type(like))
    out._array, out._dtype, out._device = values, like._dtype, like._device
    return out


def array_cotangent(d, x, finalize):
    """An Array like x holding the cotangent of x's values (`d` the cotangent of its fields, or of its
    values given whole)."""
    g = d.get("_array") if isinstance(d, dict) else d
    if isinstance(g, type(x)):
        g = g._array
    return _made(x, finalize(g, x._array))


def array_values(x):
    """x's values (its ndarray, or forward mode's dual array): what is seeded, and what an output holds."""
    return x._array


def array_seed(y, dy):
    """Reverse mode's cotangent of an output Array (its fields') from dy: a number, an ndarray or an Array
    of its values' cotangents."""
    if isinstance(dy, type(y)):
        dy = dy._array
    data = y._array
    dtype = data.dtype if data.dtype.kind in "fc" else float
    return Tangent(_array=np.array(np.broadcast_to(np.asarray(dy, dtype=dtype), data.shape)))


def _register() -> None:
    import array_api_strict

    array = type(array_api_strict.asarray(0.0))
    # its namespace, asked of it (array-api-compat's `array_namespace(x)`): a module, no derivative (its code
    # sets the package's flags in module globals, which reverse mode refuses to follow)
    registry.nondifferentiable(array.__array_namespace__)
    register_container(array, cotangent=array_cotangent, values=array_values, rebuild=_made, held=array_values,
                       seed=array_seed, native_operators=False)


_register()
