"""The rules every context shares, one module per domain; importing this package registers them all.

>>> import math
>>> from contexts.rules import registry
>>> registry.get(math.sin).kind
'elementwise'
"""

from . import builtins as _builtins  # noqa: F401  (imports register rules)
from . import cmath as _cmath  # noqa: F401
from . import containers as _containers  # noqa: F401
from . import decimals as _decimals  # noqa: F401
from . import forwarders as _forwarders  # noqa: F401  (functions made by exec that hand their parameters on)
from . import introspection as _introspection  # noqa: F401
from . import math as _math  # noqa: F401
from . import operator as _operator  # noqa: F401
from . import statistics_forms as _statistics_forms  # noqa: F401
from . import uncertainties as _uncertainties  # noqa: F401
from . import leaves as _leaves
from .check import check_rule, numerical_gradient
from .registry import MissingRule, Registry, Rule, registry

try:  # the numpy rules land separately; the scalar rules work without them
    from . import numpy as _numpy  # noqa: F401
except ImportError:  # pragma: no cover
    _numpy = None

_leaves.load_domains()  # Decimal now; mpmath's and sympy's rules as soon as the packages are imported

__all__ = ["registry", "Registry", "Rule", "MissingRule", "check_rule", "numerical_gradient"]
