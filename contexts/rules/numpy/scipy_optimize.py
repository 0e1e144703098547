"""Reverse rules for scipy.optimize's bracketing scalar root finders (`brentq`, `brenth`, `ridder`,
`bisect`, `toms748`), by the implicit function theorem, the function differentiated by overdub itself:

    f(x*(θ), θ) = 0   ⇒   dx*/dθ = −(∂f/∂θ) / (∂f/∂x)   at the root

where θ is whatever f depends on: its `args=(...)` and the values its closure (or bound object, or
partial) holds. The rule differentiates the root itself, not the iteration that found it (a bisection's
result is a fixed mix of its bracket's ends: differentiated as code it is wrong, and refused). The
bracket's ends have no derivative: the root does not move with them.

Refused, never a number: a root where ∂f/∂x is zero or not finite (not a simple root: no derivative),
a cotangent for `full_output`'s RootResults. Forward mode refuses these functions by name (their C
kernels have no forward rule), and so does forward over reverse (`hessian`).

Rules sit below the modes: reverse mode hands `root_adjoint` its `pullback_full` and registers the result
(`contexts.ad.callbacks`).
"""

from __future__ import annotations

import inspect

import numpy as np
from scipy import optimize

from ..registry import NoDerivative, NoRuleError

__all__ = ["ROOT_FINDERS", "root_adjoint", "root_plain"]

ROOT_FINDERS = (optimize.brentq, optimize.brenth, optimize.ridder, optimize.bisect, optimize.toms748)



def _not_simple(fn, slope) -> NoDerivative:
    return NoDerivative(f"scipy.optimize.{fn.__name__}'s root has no derivative: ∂f/∂x there is {slope!r} (not a "
                        "simple root)", fix="differentiate where the root is simple, or keep f's inputs constant")


def _results(fn) -> NoDerivative:
    return NoDerivative(f"scipy.optimize.{fn.__name__}(..., full_output=True): its RootResults (iterations, "
                        "convergence) have no derivative", fix="differentiate the root only (the first output)")


def _options(sig: inspect.Signature, pos: tuple, kw: dict) -> dict:
    bound = sig.bind(*pos, **kw)
    bound.apply_defaults()
    return bound.arguments


def _real_number(v) -> bool:
    return isinstance(v, (float, int, np.floating, np.integer)) and not isinstance(v, bool)


def root_adjoint(pullback_full, fn):
    """fn's adjoint on reverse mode's `pullback_full`: the cotangents of f (its closure's, a Tangent) and
    of `args` are those of f(x*, *args) weighted by −dy/(∂f/∂x)(x*)."""
    sig = inspect.signature(fn)
    names = tuple(sig.parameters)

    def root_adjoint(dout, out, *pos, **kw):
        opts = _options(sig, pos, kw)
        f, args = opts["f"], opts["args"]
        packed = isinstance(args, tuple)
        args = args if packed else (args,)
        if opts.get("full_output"):
            root, dy = out[0], (dout[0] if dout is not None else None)
            if dout is not None and len(dout) > 1 and dout[1] is not None:
                raise _results(fn)
        else:
            root, dy = out, dout
        cot = dict.fromkeys(names)
        if dy is not None and not (_real_number(dy) and dy == 0):
            _, back = pullback_full(f, root, *args)
            _, (slope, *_) = back(1.0)
            if not _real_number(slope) or slope == 0 or not np.isfinite(slope):
                raise _not_simple(fn, slope)
            _, back = pullback_full(f, root, *args)
            dfn, dargs = back(-dy / slope)
            cot["f"] = dfn
            dargs = tuple(dargs[1:])
            if any(d is not None for d in dargs):
                cot["args"] = dargs if packed else dargs[0]
        grads = tuple(cot[name] for name in names[:len(pos)])
        named = {k: cot[k] for k in kw if cot.get(k) is not None}
        return grads + (named,) if named else grads
    return root_adjoint


def root_plain(fn):
    """fn as reverse mode runs it (`Rule.impl`): natively, on plain values. A function whose closure or
    args hold forward mode's duals (forward over reverse: `hessian`) reaches fn's C kernel with them, which
    fails in its own words: refused by name instead."""
    def run(*pos, **kw):
        try:
            return fn(*pos, **kw)
        except (TypeError, ValueError, RuntimeError) as e:
            if "Dual" not in repr(e) and "dual" not in str(e) and "real number" not in str(e):
                raise
            raise NoRuleError(f"no rule for scipy.optimize.{fn.__name__} on forward mode's dual numbers (a second "
                              "derivative through a root finder)",
                              fix="differentiate once, or give the solve a custom adjoint "
                                  "(`@contexts.custom_adjoint`)") from e
    run.__name__ = run.__qualname__ = f"{fn.__name__}_plain"
    return run


def _register_sparsity() -> None:
    from ..registry import registry
    from ..sparsity_specs import DENSE
    registry.sparsity(DENSE, *ROOT_FINDERS)  # (conservative: the root depends on all of f's inputs)


_register_sparsity()
