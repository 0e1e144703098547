"""scipy.optimize.root, every method ('hybr', 'lm', 'broyden1', 'broyden2', 'anderson', 'linearmixing',
'diagbroyden', 'excitingmixing', 'krylov', 'df-sane'), by the implicit function theorem, F differentiated by
overdub itself (fsolve's core, `scipy_optimize.implicit_dual` / `implicit_cotangents`):

    F(x*(θ), θ) = 0   ⇒   J dx* = −F_θ dθ,   J = ∂F/∂x at x*

θ is whatever F depends on: its `args=(...)` and what its closure holds. The iteration that found x* is not
differentiated (MINPACK's `_hybrd`/`_lmdif` are C; the quasi-Newton methods, differentiated as code, are off
by about their tolerance), so every method has the same derivative at its x. `jac=True` (F returns (F, J)) and
a callable `jac` only steer the solve: J is F's own, by the engine. x0, the tolerances and the options have no
derivative (the root does not move with them).

The result's other fields: `fun` is F(x*(θ), θ), 0 for every θ: its derivative is 0 (a cotangent for it is
dropped, forward mode leaves it plain); the solver's state (`fjac`, `r`, `qtf`, `cov_x`) has none the rules
know, refused on use; counts and flags (`nfev`, `status`, `success`) are integers. Refused, never a number: an
x that is not a root of F (its Newton step more than 1e-6 of its size: a failed solve, or 'lm' stopped at a
least-squares minimum), a singular J, F of another size than x, a second derivative (`hessian`).

Rules sit below the modes: reverse mode hands `optimize_root_adjoint` its `pullback_full`, forward mode hands
`optimize_root_duals` its helpers (`contexts.ad.callbacks`, `contexts.forward.callbacks`).
"""

from __future__ import annotations

import inspect

import numpy as np
from scipy import optimize

from ..cotangents import Refused
from ..registry import NoClosedForm
from .scipy_optimize import _by_position, _options, _packed, any_cotangent, as_array, implicit_cotangents, implicit_dual

__all__ = ["optimize_root_adjoint", "optimize_root_duals", "first_array"]

_DROPPED = ("x", "fun")  # (x: the solution's derivative; fun: F at the root, whose derivative is 0)


def _state(key) -> NoClosedForm:
    return NoClosedForm("scipy.optimize.root", f"res.{key} (its result's field: the solver's last state)",
                        fix="differentiate the solution (`res.x`; `res.fun` is F at it, its derivative 0), not the "
                            "solver's state")


def _name(opts) -> str:
    return f"scipy.optimize.root(method={opts['method']!r})"


def _jac_in_fun(opts) -> bool:
    """fun returns (F, J) (`jac=True`): scipy reads it so for 'hybr' and 'lm' only."""
    jac = opts["jac"]
    return not callable(jac) and bool(jac) and str(opts["method"]).lower() in ("hybr", "lm")


def first_array(fun, x, *args):
    """F(x, *args) as an array, of a fun returning (F, J) (`jac=True`)."""
    return np.asarray(fun(x, *args)[0])


def _residual(opts):
    return first_array if _jac_in_fun(opts) else as_array


def _why(res):
    """The solver's message where it reports no success, else None (`implicit_dual`'s `why`)."""
    return None if res.get("success", True) else res.get("message", "no success")


def optimize_root_duals(fw, fn=optimize.root):
    """root's form on duals, on forward mode's helpers `fw` (`run_inside`, `dual_free`, `primal`, `is_dual`,
    `slope_at`): the solve runs on the primal F (args plain, θ's perturbations dropped), x gets its tangent by
    `implicit_dual`; `fun` stays plain (its derivative is 0), the solver's state carries a refusal."""
    sig = inspect.signature(fn)

    def solve(*pos, **kw):
        opts = _options(sig, pos, kw)
        fun, jac, (args, _) = opts["fun"], opts["jac"], _packed(opts["args"])
        if fw.dual_free((fun, args, jac)):
            return fn(*(fw.primal(p) for p in pos), **{k: fw.primal(v) for k, v in kw.items()})
        residual = _residual(opts)

        def g(x):
            return fw.run_inside(residual, (fun, x, *args), {})

        def plain_fun(x):
            return fw.primal(fw.run_inside(fun, (x, *args), {}))
        plain = {k: fw.primal(v) for k, v in opts.items() if k not in ("fun", "args", "jac")}
        if callable(jac):
            plain["jac"] = lambda x: fw.primal(fw.run_inside(jac, (x, *args), {}))
        else:
            plain["jac"] = jac
        res = fn(plain_fun, **plain)
        solved = implicit_dual(fw, _name(opts), g, res.x, why=_why(res))
        if solved is None:
            return res
        x, y = solved
        out = type(res)(res)
        out["x"] = x
        for k, v in res.items():
            if k not in _DROPPED and isinstance(v, np.ndarray) and v.dtype.kind in "fc":
                out[k] = type(y)(v, Refused(_state(k)), y.tag)
        return out
    solve.__name__ = solve.__qualname__ = "root_duals"
    return solve


def optimize_root_adjoint(pullback_full, fn=optimize.root):
    """root's adjoint on reverse mode's `pullback_full`: the result's cotangent is a mapping by field (a
    `MapBox`); `x`'s gives the cotangents of fun's closure (a Tangent) and of `args` by `implicit_cotangents`,
    `fun`'s is dropped (F at the root: derivative 0), the solver's state's refused, the integers' ignored."""
    sig = inspect.signature(fn)
    names = tuple(sig.parameters)

    def root_adjoint(dout, out, *pos, **kw):
        opts = _options(sig, pos, kw)
        fun, (args, packed) = opts["fun"], _packed(opts["args"])
        cots = dict(dout) if dout is not None else {}
        for k, d in cots.items():
            v = out.get(k)
            if k not in _DROPPED and isinstance(v, np.ndarray) and v.dtype.kind in "fc" and any_cotangent(d):
                raise _state(k).error()
        cot = dict.fromkeys(names)
        if any_cotangent(cots.get("x")):
            cot["fun"], dargs = implicit_cotangents(pullback_full, _name(opts), _residual(opts), fun, out.x, args,
                                                    cots["x"], why=_why(out))
            if any(d is not None for d in dargs):
                cot["args"] = tuple(dargs) if packed else dargs[0]
        grads = _by_position(names, cot, pos, {})
        return grads + ({k: cot[k] for k in kw if cot.get(k) is not None},)  # (jac=, callback=: none)
    return root_adjoint
