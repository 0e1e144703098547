"""`scipy.integrate.odeint` (LSODA, Fortran) in forward mode, by the sensitivity equations solved beside
the state: for y' = f(y, t, θ) the tangent s = ẏ obeys

    s' = ∂f/∂y · s + ∂f/∂θ · θ̇,   s(t0) = ẏ0,

whose right side is the tangent of f at (y + εs, θ + εθ̇): f run by forward mode on duals, the state's
tangent its own. odeint integrates state and tangents together (one augmented system, the call's own
tolerances), so the derivative is that of the solution of the ODE to those tolerances; the value is the
plain call's own. θ is whatever f
depends on: `args=(...)`, what its closure holds, and y0.

Refused, never a number: perturbed time points, `full_output`'s diagnostics, duals of more than one
derivative call. Reverse mode has no rule (odeint is refused by name there; `scipy.integrate.solve_ivp`
with its Python methods is differentiated in both).

Rules sit below the modes: forward mode hands `odeint_duals` its helpers (`contexts.forward.callbacks`).
"""

from __future__ import annotations

import inspect

import numpy as np
from scipy import integrate

from ..registry import NoDerivative

__all__ = ["odeint_duals"]


def _as_array(func, *args):
    """func(*args) as an array (an RHS may return a list of numbers): run by forward mode on duals."""
    return np.asarray(func(*args))


def _same(v):
    return v


def odeint_duals(fw, fn=integrate.odeint):
    """odeint's form on duals, on forward mode's helpers `fw` (`run_inside`, `dual_free`, `primal`,
    `tag_of`: the derivative call perturbing a value, `dual`: a dual of a tag, `split`: a value's primal and
    tangent for a tag)."""
    sig = inspect.signature(fn)

    def solve(*pos, **kw):
        bound = sig.bind(*pos, **kw)
        bound.apply_defaults()
        given = dict(bound.arguments)
        opts = dict(given)
        func, y0, t = opts.pop("func"), opts.pop("y0"), opts.pop("t")
        args = opts.pop("args")
        args = args if isinstance(args, tuple) else (args,)
        tfirst = opts.pop("tfirst")
        if not fw.dual_free(t):  # (checked first: a solution at moving times moves too)
            raise NoDerivative("scipy.integrate.odeint at perturbed time points", fix="keep t constant")
        if fw.dual_free((func, y0, args)):
            return fn(*(fw.primal(p) for p in pos), **{k: fw.primal(v) for k, v in kw.items()})
        if opts.pop("full_output"):
            raise NoDerivative("scipy.integrate.odeint(..., full_output=True) of perturbed values: its "
                               "diagnostics have no derivative", fix="leave full_output out")
        opts.pop("Dfun")  # (the Jacobian of the state alone: not the augmented system's)
        opts.pop("col_deriv")
        t = np.asarray(t, dtype=float)
        y0p = np.asarray(fw.primal(y0), dtype=float).ravel()  # (odeint's state is a vector; y0 a number too)
        shape, n = y0p.shape, y0p.size

        def rhs(state, time, *a):
            return fw.run_inside(_as_array, (func, time, state, *a) if tfirst else (func, state, time, *a), {})
        tag = fw.tag_of((y0, args, rhs(y0p.reshape(shape), t[0], *args)))
        if tag is None:  # f and y0 hold duals that do not reach the right side: the solution is constant
            return fn(lambda y, s: fw.primal(rhs(y.reshape(shape), s, *args)).ravel(), y0p.ravel(), t,
                      **{k: fw.primal(v) for k, v in opts.items()}).reshape((len(t),) + shape)
        k = tag.chunk
        lead = () if k is None else (k,)
        _, t0 = fw.split(fw.run_inside(_as_array, (_same, y0), {}), tag)  # (a list of duals: one dual array)
        s0 = np.zeros(lead + shape) if t0 is None else np.asarray(t0, dtype=float).reshape(lead + shape)

        def augmented(z, time):
            y = z[:n].reshape(shape)
            s = z[n:].reshape(lead + shape)
            out = rhs(fw.dual(y, s, tag), time, *args)
            value, tangent = fw.split(out, tag)
            value = np.asarray(fw.primal(value), dtype=float)
            if not fw.dual_free(value) or (tangent is not None and not fw.dual_free(tangent)):
                raise NoDerivative("scipy.integrate.odeint on duals of more than one derivative call",
                                   fix="differentiate once, or give the call a custom adjoint")
            tangent = np.zeros(lead + shape) if tangent is None else np.asarray(tangent, dtype=float)
            return np.concatenate([value.ravel(), np.broadcast_to(tangent, lead + shape).ravel()])
        z0 = np.concatenate([y0p.ravel(), np.asarray(s0, dtype=float).ravel()])
        z = fn(augmented, z0, t, **{key: fw.primal(v) for key, v in opts.items()})
        m = len(t)
        # the value: the plain call's own (the augmented system's error control steps otherwise, which moves
        # the state within the tolerances); the tangent: the sensitivities solved beside the state
        plain = {key: fw.primal(v) for key, v in given.items()}
        plain["func"] = lambda *xs: np.asarray(fw.primal(fw.run_inside(_as_array, (func, *xs), {})), dtype=float)
        value = fn(**plain)
        tangent = z[:, n:].reshape((m,) + lead + shape)
        if k is not None:  # (a chunked tangent leads with its directions)
            tangent = np.moveaxis(tangent, 1, 0)
        return fw.dual(value, tangent, tag)
    solve.__name__ = solve.__qualname__ = "odeint_duals"
    return solve
