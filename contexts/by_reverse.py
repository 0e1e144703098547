"""Forward mode's entry points on torch code: the same derivatives, computed by reverse mode (a composition of
the two modes: it fills forward mode's hook `forward.api.BY_REVERSE` when the package loads forward mode).

Forward mode's duals cannot hold a torch tensor (they would answer for it with numpy's methods:
`leaves.hosted_refused`), so `derivative`, `jvp` and `jacfwd` (and `jacobian(..., mode="forward")`) of code
computing with tensors take the Jacobian by reverse mode (`contexts.ad.api.jacobian`, one pullback per
output element) and contract it with the tangents: the derivative forward mode would give, not a forward
pass. f is run again from its start (a function of its arguments, as every entry point assumes). Second
derivatives (`hessian`, `hvp`) are not taken this way: they stay refused.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from overdub.errors import OverdubError

from .rules.leaves import holds_array_leaf, holds_hosted, hosted, in_kind

__all__ = ["BY_REVERSE", "second_order"]

_INNER: set = set()


def second_order(f) -> bool:
    """f is `hessian`'s or `hvp`'s inner gradient (contexts.compose): its Jacobian by reverse mode would be
    reverse over reverse, which torch code does not take (refused)."""
    if not _INNER:
        from .compose import _inner_gradient
        _INNER.update(_inner_gradient(abs, inner).__code__ for inner in ("forward", "reverse"))
    return getattr(f, "__code__", None) in _INNER


def _as_kind(d, y):
    """d, a derivative of the output y, in y's kind: a tensor's a tensor, a float's a float."""
    if isinstance(y, float) and np.ndim(d) == 0:
        return float(d)
    return in_kind(d, y)


def _derivative(f: Callable, x: Any) -> Any:
    from .ad.api import jacobian
    return _as_kind(jacobian(f, x, mode="reverse"), f(x))


def _value_and_jacfwd(f: Callable, x: Any, chunk: int | None = None) -> tuple[Any, Any]:
    from .ad.api import jacobian
    return f(x), jacobian(f, x, mode="reverse")


def _jvp(f: Callable, primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    from .ad.api import jacobian
    active = [i for i, t in enumerate(tangents) if t is not None]
    y = f(*primals)
    if holds_array_leaf((y,)) and not holds_hosted((y,)):  # (a dask array: its Jacobian would compute it)
        raise OverdubError("a jvp by reverse mode would compute a lazy output (its Jacobian, one pullback per "
                           f"element of a {type(y).__name__})", fix="use forward mode on lazy arrays")
    if not active:
        return y, _as_kind(np.zeros(np.shape(hosted(y))), y)

    def of_active(*values):
        args = list(primals)
        for i, v in zip(active, values):
            args[i] = v
        return f(*args)

    blocks = jacobian(of_active, *(primals[i] for i in active), mode="reverse")
    blocks = blocks if len(active) > 1 else (blocks,)
    dy = 0.0
    for i, J in zip(active, blocks):
        t = np.asarray(hosted(tangents[i]), dtype=float)
        dy = dy + np.tensordot(np.asarray(hosted(J)), t, axes=t.ndim)
    return y, _as_kind(dy, y)


BY_REVERSE = {"derivative": _derivative, "jvp": _jvp, "_value_and_jacfwd": _value_and_jacfwd}
"""forward mode's entry point (by its function's name) -> the same derivative by reverse mode."""


from .forward import api as _forward_api  # noqa: E402  (the hook forward mode asks; the layers below know no mode above)

_forward_api.BY_REVERSE.update(BY_REVERSE)
_forward_api.SECOND_ORDER[0] = second_order
