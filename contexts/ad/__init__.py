"""Reverse-mode AD (Zygote's design on plain Python values): see `contexts.ad.api`."""

from .api import (ADContext, NonScalarError, Tangent, gradient, jacobian, pullback, pullback_full,
                  value_and_gradient, vjp)
from .runtime import NoRuleError, UnsupportedFunction
from .show import show_adjoint

__all__ = ["ADContext", "gradient", "pullback", "pullback_full", "value_and_gradient", "jacobian", "vjp",
           "Tangent", "NoRuleError", "NonScalarError", "UnsupportedFunction", "show_adjoint"]

from . import nested as _nested  # noqa: E402,F401  (registers the rule for gradient itself)
