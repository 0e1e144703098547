"""Forms on duals of higher-order primitives: C code calling a Python function it is given, whose closure
may hold duals where no frule sees them (`scipy.integrate.quad(lambda t: np.exp(-a * t), 0, 1)`).

The rules themselves live with their domain (`contexts.rules.numpy.scipy_integrate`); they need forward
mode to run the callback on duals, and rules sit below the modes, so forward mode hands them its own
functions and registers the result (`Rule.duals`, which the context calls in place of the primitive).
"""

from __future__ import annotations

from ..rules.registry import registry
from .context import run_inside
from .holds import dual_free

__all__: list[str] = []

try:
    from ..rules.numpy import scipy_integrate as _integrate
except ImportError as e:  # scipy is optional
    if not (e.name or "").startswith("scipy"):
        raise
    _integrate = None

if _integrate is not None:
    for _fn in (_integrate.quad, _integrate.quad_vec):
        registry.duals(_fn)(_integrate.quad_duals(run_inside, dual_free, _fn))
