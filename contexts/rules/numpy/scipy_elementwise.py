"""scipy.optimize.elementwise's `find_root` and `find_minimum` (scipy >= 1.15; pvlib's single-diode model
finds its maximum power point with `find_minimum`), by the implicit function theorem, elementwise, the
function differentiated by overdub itself:

    root:     f(x*(θ), θ) = 0    ⇒  dx*/dθ = −(∂f/∂θ) / (∂f/∂x)
    minimum:  ∂f/∂x(x*(θ), θ) = 0 ⇒  dx*/dθ = −(∂²f/∂x∂θ) / (∂²f/∂x²),   d f(x*, θ)/dθ = ∂f/∂θ

θ is whatever f depends on: its `args=(...)` and what its closure holds. Each element is its own problem
(scipy requires f to be elementwise), so every ∂/∂x is the derivative along all ones. The iteration that
found x* is not differentiated: its bracketing steps, driven by comparisons, make x* a mix of bracket ends
whose derivative is not the solution's (differentiated as code, `find_minimum`'s x had gradient 0 and its
f_x a wrong number, silently). The initial bracket has no derivative (the solution does not move with it).

Refused, never a number: the result's `bracket` and `f_bracket` (a bracket's ends have no derivative), an
element that did not converge, a root where ∂f/∂x is 0 or not finite, a minimum where ∂²f/∂x² is. The
machinery every elementwise method shares (`scipy._lib._elementwise_iterative_method`, also behind
`bracket_root`, `bracket_minimum`, `scipy.integrate.tanhsinh`, `nsum`, `scipy.differentiate`) is opaque:
reached with a differentiated value without one of these rules, it is refused by name.

Rules sit below the modes: reverse mode hands `solution_adjoint` its `pullback_full` and `derivative`,
forward mode hands `solution_duals` its helpers (`contexts.ad.callbacks`, `contexts.forward.callbacks`).
"""

from __future__ import annotations

import inspect

import numpy as np

from overdub import opaque

from ..cotangents import Refused, acc
from ..registry import NoClosedForm, NoDerivative
from .scipy_optimize import any_cotangent

__all__ = ["SOLVERS", "solution_adjoint", "solution_duals"]

try:
    from scipy.optimize import elementwise as _elementwise
except ImportError:  # scipy < 1.15
    _elementwise = None

# fn -> what x* is: "root" (f(x*) = 0) or "minimum" (a local minimum of f)
SOLVERS = {} if _elementwise is None else {_elementwise.find_root: "root", _elementwise.find_minimum: "minimum"}

# every elementwise method's loop: a primitive (refused by name when reached with a differentiated value)
opaque("scipy._lib._elementwise_iterative_method")

_BRACKET = ("bracket", "f_bracket")


def _bracket_refused(fn) -> NoClosedForm:
    return NoClosedForm(f"scipy.optimize.elementwise.{fn.__name__}", "the bracket it returns (bracket, f_bracket)",
                        fix="differentiate the solution (`res.x`, `res.f_x`), not the bracket the search ended with")


def _not_converged(fn) -> NoDerivative:
    return NoDerivative(f"scipy.optimize.elementwise.{fn.__name__} did not converge for some elements (res.success "
                        "is False there): their x is no solution, so it has no derivative",
                        fix="raise maxiter or loosen the tolerances, or keep those elements' inputs constant")


def _singular(fn, kind, slope) -> NoDerivative:
    what = "∂f/∂x" if kind == "root" else "∂²f/∂x²"
    return NoDerivative(f"scipy.optimize.elementwise.{fn.__name__}'s solution has no derivative where {what} is "
                        f"{slope!r} (not a simple {kind})", fix="differentiate where the solution is isolated")


def _options(sig, pos, kw):
    bound = sig.bind(*pos, **kw)
    bound.apply_defaults()
    args = bound.arguments["args"]
    return bound.arguments, (args if isinstance(args, tuple) else (args,)), isinstance(args, tuple)


def _checked_slope(fn, kind, slope, where):
    """slope (∂f/∂x or ∂²f/∂x², elementwise) as an array, refused where it is needed (`where`) and 0 or not
    finite."""
    s = np.asarray(slope, dtype=float)
    bad = where & ((s == 0) | ~np.isfinite(s))
    if np.any(bad):
        raise _singular(fn, kind, s[bad].flat[0] if s.ndim else float(s))
    return s


def _as_primal(x, like):
    """x shaped as the solver's own x (a number where it gave a number)."""
    return x if np.ndim(like) else x.reshape(()).item() if isinstance(x, np.ndarray) else x


def solution_adjoint(pullback_full, derivative, fn, kind):
    """fn's adjoint on reverse mode's `pullback_full` (and forward mode's `derivative` for ∂f/∂x, which
    reverse mode then differentiates, for a minimum)."""
    sig = inspect.signature(fn)
    names = tuple(sig.parameters)

    def adjoint(dout, out, *pos, **kw):
        opts, args, packed = _options(sig, pos, kw)
        f = opts["f"]
        cots = dict(dout) if dout is not None else {}
        for k in _BRACKET:
            if any_cotangent(cots.get(k)):
                raise _bracket_refused(fn).error()
        dx, dfx = cots.get("x"), cots.get("f_x")
        if kind == "root":
            dfx = None  # f(x*(θ), θ) = 0 for every θ: its derivative is 0
        x = np.asarray(out.x, dtype=float)
        need = np.zeros(x.shape, bool)
        for d in (dx, dfx):
            if any_cotangent(d):
                need |= np.broadcast_to(np.asarray(d) != 0, x.shape)
        if not need.any():
            return (None,) * len(pos) + ({},)
        if np.any(need & ~np.asarray(out.success, dtype=bool)):
            raise _not_converged(fn)
        ones = np.ones_like(x)
        xs = _as_primal(x, out.x)
        d_f, d_args = None, None
        if dfx is not None and any_cotangent(dfx):  # the minimum's value: ∂f/∂θ at x* (x* itself is stationary)
            _, back = pullback_full(f, xs, *args)
            d_f, d_all = back(np.broadcast_to(np.asarray(dfx, dtype=float), x.shape) if np.ndim(xs) else dfx)
            d_args = tuple(d_all[1:])
        if dx is not None and any_cotangent(dx):
            if kind == "root":
                g = f
            else:
                def g(t, *a):  # ∂f/∂x, elementwise: along all ones
                    return derivative(lambda e: f(t + e, *a), 0.0)
            _, back = pullback_full(g, xs, *args)
            _, (slope, *_) = back(ones if np.ndim(xs) else 1.0)
            dxa = np.broadcast_to(np.asarray(dx, dtype=float), x.shape)
            s = _checked_slope(fn, kind, slope, dxa != 0)
            w = np.where(dxa != 0, -dxa / np.where(s == 0, 1.0, s), 0.0)
            _, back = pullback_full(g, xs, *args)
            g_f, g_all = back(w if np.ndim(xs) else float(w))
            if kind == "minimum":  # g's closure holds f: f's own cotangent is the one of that cell
                g_f = getattr(g_f, "f", None) if g_f is not None else None
            d_f = acc(d_f, g_f)
            g_args = tuple(g_all[1:])
            d_args = g_args if d_args is None else tuple(acc(a, b) for a, b in zip(d_args, g_args))
        cot = dict.fromkeys(names)
        cot["f"] = d_f
        if d_args is not None and any(d is not None for d in d_args):
            cot["args"] = d_args if packed else d_args[0]
        grads = tuple(cot[name] for name in names[:len(pos)])
        named = {k: cot[k] for k in kw if cot.get(k) is not None}
        return grads + (named,)
    adjoint.__name__ = adjoint.__qualname__ = f"{fn.__name__}_adjoint"
    return adjoint


def solution_duals(fw, fn, kind):
    """fn's form on duals, on forward mode's helpers `fw` (`run_inside`, `dual_free`, `primal`, `is_dual`,
    `along`: the derivative of a function along all ones at a plain point, perturbations of its inputs
    kept; `make`: a dual like another with a new primal and tangent). x* is fn's on the primal function;
    its tangent is −(tangent of F(x*, θ)) / (∂F/∂x), F = f for a root and ∂f/∂x for a minimum; a minimum's
    f_x has f(x*, θ)'s tangent."""
    sig = inspect.signature(fn)

    def solve(*pos, **kw):
        opts, args, _ = _options(sig, pos, kw)
        f = opts["f"]
        if fw.dual_free((f, args)):
            return fn(*(fw.primal(p) for p in pos), **{k: fw.primal(v) for k, v in kw.items()})

        def plain_f(t, *a):  # what the solver calls: the compressed plain args it passes, f's closure plain
            return fw.primal(fw.run_inside(f, (t, *a), {}))
        plain = {k: fw.primal(v) for k, v in opts.items() if k not in ("f", "init", "args")}
        res = fn(plain_f, fw.primal(opts["init"]), args=tuple(fw.primal(a) for a in args), **plain)
        if not np.all(res.success):
            raise _not_converged(fn)
        x = res.x

        def F(t):  # f, or ∂f/∂x, at t with θ perturbed
            if kind == "root":
                return fw.run_inside(f, (t, *args), {})
            return fw.along(lambda s: fw.run_inside(f, (s, *args), {}), t)
        y = F(x)
        if not fw.is_dual(y):
            if fw.dual_free(y):  # F(x*, θ) does not depend on the inputs: nor does x*
                return res
            raise NoDerivative(f"scipy.optimize.elementwise.{fn.__name__}: f returned a {type(y).__name__} holding "
                               "perturbed values, not numbers", fix="return a float array from f")
        s = _checked_slope(fn, kind, fw.primal(fw.along(F, x)), np.ones(np.shape(x), bool))
        tangent = -np.asarray(y.tangent, dtype=float) / s
        tangent = tangent.item() if tangent.ndim == 0 else tangent
        out = type(res)(res)
        out["x"] = fw.make(y, x, tangent)
        if kind == "minimum":
            value = fw.run_inside(f, (x, *args), {})
            out["f_x"] = fw.make(value, res.f_x, value.tangent) if fw.is_dual(value) else res.f_x
        refused = Refused(_bracket_refused(fn))
        for k in _BRACKET:
            out[k] = tuple(fw.make(y, v, refused) for v in res[k])
        return out
    solve.__name__ = solve.__qualname__ = f"{fn.__name__}_duals"
    return solve
