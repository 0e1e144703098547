"""numpy functions written as the numpy code they compute (`Rule.stand_in`), for every engine: C functions
without rules of their own (`np.vdot`), and Python functions whose code ends in a C method without one
(`np.compress` calls `ndarray.compress`, `np.diagflat` writes through `.flat`). Each is checked against
numpy's own result and against finite differences in tests/contexts/test_sweep_32_cases.py."""

from __future__ import annotations

import numpy as np

from ..registry import registry

__all__ = ["vdot", "compress", "compress_method", "diagflat"]


def vdot(a, b, /):
    """np.vdot: the dot product of the arrays flattened, the first conjugated."""
    return np.dot(np.ravel(np.conj(a)), np.ravel(b))


def compress(condition, a, axis=None, out=None):
    """np.compress: the slices of a along axis where condition is true (condition carries no derivative)."""
    if out is not None:
        return np.compress(condition, a, axis, out)  # (into `out`: numpy's own, refused where it is refused)
    chosen = np.nonzero(np.asarray(condition, dtype=bool))[0]
    if axis is None:
        a, axis = np.ravel(a), 0
    if chosen.size and chosen[-1] >= np.shape(a)[axis]:
        return np.compress(condition, a, axis)  # (numpy's error for a condition longer than the axis)
    return np.take(a, chosen, axis=axis)


def compress_method(a, condition, axis=None, out=None):
    """`a.compress(condition, axis)`: np.compress's."""
    return compress(condition, a, axis, out)


def diagflat(v, k=0):
    """np.diagflat: a 2-D array with v flattened on its k-th diagonal."""
    return np.diag(np.ravel(v), k)


registry.set(np.vdot, stand_in=vdot)
registry.set(np.compress, stand_in=compress)
registry.set((np.ndarray, "compress"), stand_in=compress_method)
registry.set(np.diagflat, stand_in=diagflat)
