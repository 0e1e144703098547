"""User-facing custom adjoints: `custom_adjoint`, `hook`, `checkpoint`, `stop_gradient`, `nestlevel`.

Every one of them is a rule in the shared registry, so it overrides recursion into the function it names
and takes effect at once, even for functions differentiated before.
"""

from __future__ import annotations

from typing import Any, Callable

import wrapt

from ..rules.registry import registry
from ..rules.ties import SPECIAL_HITS

__all__ = ["custom_adjoint", "adjoint", "hook", "checkpoint", "stop_gradient", "nestlevel"]

def nestlevel() -> int:
    """How many reverse-mode passes are recording around the caller (0 outside any `gradient`).

    >>> from contexts import gradient
    >>> seen = []
    >>> _ = gradient(lambda x: seen.append(nestlevel()) or x * 2.0, 1.0)
    >>> seen
    [1]
    """
    state = SPECIAL_HITS.get()  # (a recording's state: `api._recording`)
    return 0 if state is None else state.level


def custom_adjoint(fn: Callable) -> Callable[[Callable], Callable]:
    """Give any function — yours or a third party's, registered from outside without editing it — a
    custom adjoint: the decorated function is its rrule, returning `(y, pullback)` with `pullback(dy)`
    one cotangent per argument. The rule overrides recursion into fn.

    >>> import math
    >>> def softplus(x): return math.log1p(math.exp(x))
    >>> @custom_adjoint(softplus)
    ... def softplus_rrule(x):
    ...     y = softplus(x)
    ...     return y, lambda dy: (dy / (1.0 + math.exp(-x)),)
    >>> from contexts import gradient
    >>> round(gradient(softplus, 0.0)[0], 6)
    0.5
    """
    if not callable(fn):
        raise TypeError(f"custom_adjoint(fn) takes the function to give a rule, got {fn!r}")

    def register(rrule: Callable) -> Callable:
        registry.rrule(fn)(rrule)
        return rrule
    return register


def adjoint(fn: Callable) -> Callable:
    """Zygote's `@adjoint` on your own function: its body returns `(y, pullback)`; called normally the
    decorated function returns y, and reverse mode uses the pullback. Signature, docstring and
    introspection are kept (the wrapper is built with wrapt).

    >>> @adjoint
    ... def clip_gradient(x):
    ...     "Identity whose gradient is clipped to [-1, 1]."
    ...     return x, lambda dy: (max(-1.0, min(1.0, dy)),)
    >>> from contexts import gradient
    >>> clip_gradient(3.0), gradient(lambda x: clip_gradient(x) * 10.0, 3.0), clip_gradient.__doc__[:8]
    (3.0, (1.0,), 'Identity')
    """
    @wrapt.decorator
    def primal_only(wrapped, instance, args, kwargs):
        return wrapped(*args, **kwargs)[0]

    wrapper = primal_only(fn)
    registry.rrule(wrapper)(fn)
    return wrapper


def hook(fn: Callable, x: Any) -> Any:
    """The identity on x whose pullback applies fn to x's gradient (Zygote's `hook`).

    >>> from contexts import gradient
    >>> gradient(lambda x: hook(lambda g: 2.0 * g, x * x), 3.0)
    (12.0,)
    """
    return x


def _hook_rrule(fn, x):
    def hook_pullback(dy):
        return None, fn(dy)
    return x, hook_pullback


registry.rrule(hook)(_hook_rrule)


def stop_gradient(x: Any) -> Any:
    """The identity on x with a zero gradient.

    >>> from contexts import gradient
    >>> gradient(lambda x: x * stop_gradient(x), 3.0)
    (3.0,)

    Of every order, as JAX's: a forward-mode perturbation of x is dropped too (a Hessian by forward over
    reverse differentiated through it, 3.2 for 1.6 against forward over forward, gen23 W2).
    """
    from ..forward.dual import Dual
    while type(x) is Dual:
        x = x.primal
    return x


registry.nondifferentiable(stop_gradient)


def checkpoint(f: Callable, *args: Any) -> Any:
    """f(*args), storing only the inputs during the forward pass: the reverse pass re-runs f to record its
    tape (memory for time, Zygote's `checkpointed`).

    >>> from contexts import gradient
    >>> gradient(lambda x: checkpoint(lambda v: v ** 3, x), 2.0)
    (12.0,)
    """
    return f(*args)


def _checkpoint_rrule(f, *args):
    from .codegen import EVERY_ARGUMENT
    from .runtime import call
    y = f(*args)

    def checkpoint_pullback(dy):
        from .structs import Session
        _, pb = call(EVERY_ARGUMENT, f, *args)
        if pb is None:
            return (None,) * (len(args) + 1)
        S = Session()
        try:
            dfn, dargs, _ = pb[0](pb, dy, None, S)
        finally:
            S.finish()
        return (dfn, *dargs)
    return y, checkpoint_pullback


registry.rrule(checkpoint)(_checkpoint_rrule)
