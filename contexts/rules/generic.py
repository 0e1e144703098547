"""Type-generic arithmetic for rules and engines: exact types stay exact, arrays stay arrays.

`None` stands for a zero cotangent/tangent everywhere (the structural zero): `add(None, x) is x`.
Math functions dispatch on the type of their argument: `math` for floats/ints/Fractions, `cmath` for
complex, `numpy` for arrays and numpy scalars, `uncertainties.umath` for ufloats.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["add", "mul", "conj", "zeros_like", "unbroadcast", "is_zero"]


def add(a, b):
    """a + b where None is zero (gradient accumulation)."""
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def mul(a, b):
    if a is None or b is None:
        return None
    return a * b


def conj(x):
    """Complex conjugate; the identity (type kept) for real numbers and real arrays."""
    if isinstance(x, complex):
        return x.conjugate()
    if isinstance(x, (np.ndarray, np.generic)):
        return np.conj(x) if np.iscomplexobj(x) else x
    return x


def zeros_like(x):
    if isinstance(x, (np.ndarray, np.generic)):
        return np.zeros_like(x)
    if isinstance(x, numbers.Number):
        return type(x)(0) if not isinstance(x, bool) else 0
    return 0 * x


def is_zero(x) -> bool:
    return x is None


def unbroadcast(g, like):
    """Sum g down to the shape of `like` (undo numpy broadcasting); scalars `like` get a scalar back."""
    if g is None:
        return None
    if isinstance(like, np.ndarray):
        g = np.asarray(g)
        if g.shape == like.shape:
            return g
        extra = g.ndim - like.ndim
        if extra > 0:
            g = g.sum(axis=tuple(range(extra)))
        axes = tuple(i for i, n in enumerate(like.shape) if n == 1 and g.shape[i] != 1)
        if axes:
            g = g.sum(axis=axes, keepdims=True)
        return g.reshape(like.shape)
    if isinstance(g, np.ndarray) and not isinstance(like, (np.ndarray, np.generic)):
        total = g.sum()
        return total.item() if isinstance(like, (float, int, complex)) and total.ndim == 0 else total
    return g
