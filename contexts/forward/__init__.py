"""Forward-mode AD on the overdub core: Duals handle operators and numpy, the context handles calls.

>>> from contexts.forward import derivative
>>> derivative(lambda x: x * derivative(lambda y: x + y, 1.0), 1.0)   # no perturbation confusion
1.0

It imports nothing of reverse mode: `hessian` and `hvp` (forward over reverse) live in `contexts.compose`.
"""

from .api import DEFAULT_CHUNK, derivative, jacfwd, jvp
from .arrays import NoForwardRule
from .context import ForwardContext, pushforward
from .dual import Dual, DualConversionError, DualInsideError, Tag
from ..lowered.bisection import BisectionRefused
from .mixed import forwarddiff
from . import callbacks as _callbacks  # noqa: E402,F401  (registers forms on duals: scipy.integrate.quad)

__all__ = ["derivative", "jvp", "jacfwd", "forwarddiff",
           "ForwardContext", "pushforward", "Dual", "Tag", "NoForwardRule", "DualConversionError", "DualInsideError", "BisectionRefused",
           "DEFAULT_CHUNK"]
