"""Reverse-mode AD: Zygote's design on plain Python values.

How the pieces fit (each module's docstring states its invariant):

- `codegen`    from the lowered form (`contexts.lowered`: lowering and activity, shared with forward mode)
               to the recording forward twin (one tape record per executed active block) and the adjoint
               (each block's adjoint generated once, replayed backwards over the tape; box rules).
- `runtime`    Zygote's J (`call`): rules, recursion into twins, constructors, partials, opaque functions.
- `helpers`    what generated code calls (structured cotangents, mutation undone and redone).
- `primitives` rules the engine provides itself (unpacking, iteration, getattr, ufunc.at).
- `structs`    the reverse pass's `Session` (one cotangent box per object), zeros, final cotangent shapes.
- `api`, `custom`, `nested`, `show`   the public functions, custom adjoints, higher order, printing.

>>> from contexts.ad import gradient
>>> gradient(lambda x, n: x ** n, 2.0, 3)
(12.0, 5.545177444479562)
"""

from .api import (ADContext, NonScalarError, Tangent, gradient, jacobian, pullback, pullback_full,
                  value_and_gradient, vjp)
from ..rules.registry import NoRuleError
from .runtime import UnsupportedFunction
from .show import show_adjoint

__all__ = ["ADContext", "gradient", "pullback", "pullback_full", "value_and_gradient", "jacobian", "vjp",
           "Tangent", "NoRuleError", "NonScalarError", "UnsupportedFunction", "show_adjoint"]

from . import nested as _nested  # noqa: E402,F401  (registers the rule for gradient itself)
from . import callbacks as _callbacks  # noqa: E402,F401  (registers the rule for scipy.integrate.quad)
