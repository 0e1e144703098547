"""Mixed mode (the Zygote paper's `forwarddiff`): inside reverse-mode code, compute a function and its
Jacobian by forward mode, and let the reverse pass apply the transposed Jacobian.

Invariant: `forwarddiff(f, x)` returns exactly `f(x)`; only its registered rrule differs from
recursion, so reverse mode never records f's inside (cheap for few inputs and many intermediates). A
closure (or a bound method, a partial) may carry differentiated values of its own: for it the rule is
reverse mode's own pass (`contexts.ad.nested.forwarddiff_rrule`), which gives their cotangents too.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..rules.registry import registry
from .api import _value_and_jacfwd

__all__ = ["forwarddiff"]


def forwarddiff(f: Callable, x: Any, chunk: int | None = None) -> Any:
    """f(x); under reverse mode its pullback uses a Jacobian computed by forward mode.

    >>> import numpy as np
    >>> forwarddiff(lambda x: np.sin(x) * 2.0, np.array([0.0]))
    array([0.])
    """
    return f(x)


def _transpose_apply(jac: Any, dy: Any, x: Any) -> Any:
    """J^H dy, shaped like x (a Python scalar for a scalar x)."""
    dy = np.asarray(dy)
    jac = np.asarray(jac)
    if np.iscomplexobj(jac):
        jac = np.conj(jac)
    dx = np.tensordot(dy, jac, axes=dy.ndim)
    if np.ndim(x) == 0 and not isinstance(x, np.ndarray):
        return dx.item() if isinstance(dx, np.ndarray) else dx
    return dx


@registry.rrule(forwarddiff)
def forwarddiff_rrule(f: Callable, x: Any, chunk: int | None = None):
    """(f(x), pullback) with the Jacobian of f at x computed by forward mode, chunk directions a pass."""
    y, jac = _value_and_jacfwd(f, x, chunk)

    def forwarddiff_pullback(dy):
        if dy is None:
            return (None, None)
        return (None, _transpose_apply(jac, dy, x))
    return y, forwarddiff_pullback
