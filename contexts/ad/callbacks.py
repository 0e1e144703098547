"""Reverse rules of higher-order primitives, which differentiate the Python function they are given by
reverse mode itself (`scipy.integrate.quad`: the integral of the integrand's pullback).

The rules live with their domain (`contexts.rules.numpy.scipy_integrate`); rules sit below the modes, so
reverse mode hands them `pullback_full` (quad and odeint `pullback_at`: t held constant) and registers the result. Their primal, where the callback's
closure holds forward mode's duals (forward over reverse, `hessian`), is the primitive's form on duals.
"""

from __future__ import annotations

import types

import numpy as np

from ..forward import callbacks as _forward  # noqa: F401  (the forms on duals, registered first)
from ..rules.registry import registry
from .api import pullback_at, pullback_full
from .runtime import CALLBACK_ADJOINTS

__all__: list[str] = []

if _forward._integrate is not None:
    for _fn in (_forward._integrate.quad, _forward._integrate.quad_vec):
        registry.adjoint(_fn)(_forward._integrate.quad_adjoint(pullback_at, _fn))
        registry.get(_fn).impl = registry.get(_fn).duals

def _gradient_hessian(f, x):
    """(∇f, ∇²f) of a plain scalar f at x, by forward mode over forward mode (as `compose.hessian`'s
    inner="forward")."""
    from ..forward import jacfwd

    def gradient(z):
        return jacfwd(f, z)
    gradient.derivative_of = f  # (a stair jump's sides judge f too: `forward.api._past_stair_jump`)
    return np.asarray(jacfwd(f, x), dtype=float), np.asarray(jacfwd(gradient, x), dtype=float)


try:
    from ..rules.numpy import scipy_optimize as _optimize
except ImportError:  # (scipy is optional)
    _optimize = None
if _optimize is not None:
    from ..rules.numpy import scipy_odeint as _odeint
    registry.adjoint(_odeint.integrate.odeint)(_odeint.odeint_adjoint(pullback_at))
    registry.get(_odeint.integrate.odeint).impl = registry.get(_odeint.integrate.odeint).duals
    for _fn in _optimize.ROOT_FINDERS:
        registry.adjoint(_fn)(_optimize.root_adjoint(pullback_full, _fn))
        registry.get(_fn).impl = _optimize.root_plain(_fn)
    registry.adjoint(_optimize.optimize.fsolve)(_optimize.fsolve_adjoint(pullback_full))
    registry.get(_optimize.optimize.fsolve).impl = _optimize.root_plain(_optimize.optimize.fsolve)
    from ..rules.numpy import scipy_root as _root
    registry.adjoint(_root.optimize.root)(_root.optimize_root_adjoint(pullback_full))
    registry.get(_root.optimize.root).impl = registry.get(_root.optimize.root).duals  # (duals in F: hessian's)
    from ..forward import derivative as _derivative
    from ..rules.numpy import scipy_leastsq as _leastsq
    _RV = types.SimpleNamespace(pullback_full=pullback_full, derivative=_derivative,
                                gradient_hessian=_gradient_hessian)
    for _fn, _adjoint in ((_leastsq.optimize.leastsq, _leastsq.leastsq_adjoint),
                          (_leastsq.optimize.least_squares, _leastsq.least_squares_adjoint)):
        registry.adjoint(_fn)(_adjoint(_RV, _fn))
        registry.get(_fn).impl = registry.get(_fn).duals  # (duals in r: hessian's)
    for _fn, _name in _optimize.SEARCHES.items():
        registry.adjoint(_fn)(_optimize.search_adjoint(_name))
    for _fn, _name in _optimize.ITERATIONS.items():
        registry.adjoint(_fn)(_optimize.search_adjoint(_name, _optimize.iteration_refused))
    from ..rules.numpy import scipy_elementwise as _elementwise
    for _fn, _kind in _elementwise.SOLVERS.items():
        registry.adjoint(_fn)(_elementwise.solution_adjoint(pullback_full, _derivative, _fn, _kind))
        registry.get(_fn).impl = _optimize.root_plain(_fn)  # (duals in f's closure: refused by name)

from ..forward.dual import primal_tree as _primal_tree
from ..rules import implicit as _implicit
registry.adjoint(_implicit.root_of)(_implicit.root_adjoint(pullback_full, _primal_tree))
registry.get(_implicit.root_of).impl = registry.get(_implicit.root_of).duals  # (duals in args: hessian's)

# (what their callables store while the primitive calls them natively carries no derivative: refused,
# `rules.callback_state`)
from ..rules.callback_state import callback_primitives as _callback_primitives  # noqa: E402
from ..rules.callback_state import stores_checked as _stores_checked  # noqa: E402
for _fn in _callback_primitives():
    _rule = registry.get(_fn)
    if _rule.impl is not None:  # (a field the callable rebinds: its later read refused, `getattr_`; not the solve)
        _rule.impl = _stores_checked(getattr(_rule.impl, "__wrapped__", _rule.impl), getattr(_fn, "__name__", "the solver"),
                                     fields_noted=True)

# (their cotangents for a closure's captured lists, dicts and objects go into those objects' boxes at the call,
# `runtime._boxed_cells`: handed back where the closure was made, they missed a change made since, gen23 W4)
CALLBACK_ADJOINTS.update(
    registry.get(_fn).adjoint for _fn in (
        *((_forward._integrate.quad, _forward._integrate.quad_vec) if _forward._integrate is not None else ()),
        *((*_optimize.ROOT_FINDERS, _optimize.optimize.fsolve, _root.optimize.root, _odeint.integrate.odeint,
           _leastsq.optimize.leastsq, _leastsq.optimize.least_squares,
           *_optimize.SEARCHES, *_optimize.ITERATIONS,
           *_elementwise.SOLVERS)
          if _optimize is not None else ()))
    if registry.get(_fn) is not None and registry.get(_fn).adjoint is not None)
