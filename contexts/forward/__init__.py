"""Forward-mode AD on the overdub core: Duals handle operators and numpy, the context handles calls.

>>> from contexts.forward import derivative
>>> derivative(lambda x: x * derivative(lambda y: x + y, 1.0), 1.0)   # no perturbation confusion
1.0
"""

from .api import DEFAULT_CHUNK, derivative, hessian, hvp, jacfwd, jacobian, jvp
from .arrays import NoForwardRule
from .context import ForwardContext, pushforward
from .dual import Dual, DualConversionError, Tag
from .mixed import forwarddiff

__all__ = ["derivative", "jvp", "jacfwd", "jacobian", "hessian", "hvp", "forwarddiff",
           "ForwardContext", "pushforward", "Dual", "Tag", "NoForwardRule", "DualConversionError", "DEFAULT_CHUNK"]
