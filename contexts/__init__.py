"""The contexts built on the overdub core: reverse mode (`ad`), forward mode (`forward`), sparsity
detection (`sparsity`) and debugging (`debug`), sharing one rule registry (`rules`) and one lowered form
(`lowered`); `compose` combines the modes (`hessian`, `hvp`). Layers, each importing only those before it:
core, rules, lowered, forward, ad, compositions (this package, `compose`).

>>> from contexts import ADContext, gradient
>>> with ADContext():
...     gradient(lambda x, y: x * y, 2.0, 3.0)
(3.0, 2.0)
"""

from importlib import import_module

from .ad import (ADContext, NoRuleError, NonScalarError, Tangent, UnsupportedFunction, gradient, jacobian,
                 pullback, pullback_full, show_adjoint, value_and_gradient, vjp)
from .ad.api import BY_FORWARD as _BY_FORWARD, MEAN_OF_SIDES as _MEAN_OF_SIDES, NAN_BY_FORWARD as _NAN_BY_FORWARD
from .forward.api import AFTER_REFUSAL as _AFTER_REFUSAL, NAN_BY_REVERSE as _NAN_BY_REVERSE
from . import by_reverse as _by_reverse  # noqa: F401  (fills forward mode's BY_REVERSE: torch code, and `_after_refusal`)
from .ad.custom import adjoint, checkpoint, custom_adjoint, hook, nestlevel, stop_gradient
from .rules import MissingRule, check_rule, numerical_gradient, registry
from .lowered.runtime import CHECK_SPECIAL as _CHECK_SPECIAL, EagerIterationError, SpecialPoint
from overdub import opaque  # the opt-out: functions or modules run as primitives (a rule, or refused by name)

_LAZY = {
    "forward": ["ForwardContext", "Dual", "derivative", "jvp", "jacfwd", "forwarddiff"],
    "compose": ["hessian", "hvp"],
    "sparsity": ["SparsityContext", "jacobian_sparsity", "hessian_sparsity", "sparse_jacobian",
                 "color_columns", "plot_sparsity"],
    "debug": ["TraceContext", "breakpoint_on", "NaNContext", "NaNError", "CountContext"],
}
_WHERE = {name: mod for mod, names in _LAZY.items() for name in names}

__all__ = ["ADContext", "gradient", "pullback", "pullback_full", "value_and_gradient", "jacobian", "vjp",
           "Tangent", "show_adjoint", "NoRuleError", "NonScalarError", "UnsupportedFunction", "EagerIterationError", "SpecialPoint", "custom_adjoint", "adjoint", "hook",
           "checkpoint", "nestlevel", "stop_gradient", "opaque", "registry", "MissingRule", "check_rule", "numerical_gradient",
           *_WHERE]


def _check_special(f, args, kwargs, hits):
    """Reverse mode's equality tests found equal, checked by forward mode (`compose.check_special`: above
    both modes, loaded on first use)."""
    from .compose import check_special
    return check_special(f, args, kwargs, hits)


_CHECK_SPECIAL.append(_check_special)


def _nan_by_forward(f, args, positions, grads):
    """Reverse mode's NaN entries where f's value is finite, from forward mode (`compose.nan_by_forward`)."""
    from .compose import nan_by_forward
    return nan_by_forward(f, args, positions, grads)


_NAN_BY_FORWARD.append(_nan_by_forward)


def _mean_of_sides(run, args, f=None):
    """Reverse mode's answer at a step's jump or kink judged continuous (`compose.mean_of_sides`)."""
    from .compose import mean_of_sides
    return mean_of_sides(run, args, f)


_MEAN_OF_SIDES.append(_mean_of_sides)


def _by_forward(f, args, wrt, refusal):
    """Reverse mode's gradient by forward mode where reverse mode refused for a limit of its own
    (`compose.by_forward`)."""
    from .compose import by_forward
    return by_forward(f, args, wrt, refusal)


_BY_FORWARD.append(_by_forward)


def _after_refusal(run, refusal):
    """Forward mode's derivative by reverse mode where forward mode refused for a limit of its own
    (`compose.after_refusal`)."""
    from .compose import after_refusal
    return after_refusal(run, refusal, "reverse")


_AFTER_REFUSAL.append(_after_refusal)


def _nan_by_reverse(name, f, args, kwargs, out):
    """Forward mode's NaN entries where f's value is finite, from reverse mode (`compose.nan_by_reverse`)."""
    from .compose import nan_by_reverse
    return nan_by_reverse(name, f, args, kwargs, out)


_NAN_BY_REVERSE.append(_nan_by_reverse)


def __getattr__(name):
    """Forward mode, sparsity and debugging load on first use."""
    mod = _WHERE.get(name)
    if mod is None:
        raise AttributeError(f"module 'contexts' has no attribute {name!r}")
    value = getattr(import_module(f".{mod}", __name__), name)
    globals()[name] = value
    return value
