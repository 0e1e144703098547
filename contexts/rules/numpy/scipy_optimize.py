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

fsolve (and scipy.optimize.root, `scipy_root`) solve a system F(x, θ) = 0: their shared core is
`implicit_dual` (forward mode) and `implicit_cotangents` (reverse mode), J ẋ = −F_θ θ̇ at the solution.

Rules sit below the modes: reverse mode hands `root_adjoint` its `pullback_full` and registers the result
(`contexts.ad.callbacks`).
"""

from __future__ import annotations

import inspect

import numpy as np
from scipy import optimize

from ..cotangents import Refused
from ..registry import NoClosedForm, NoDerivative, NoRuleError

__all__ = ["ROOT_FINDERS", "SEARCHES", "ITERATIONS", "iteration_refused", "root_adjoint", "root_plain", "root_duals", "fsolve_duals",
           "fsolve_adjoint", "implicit_dual", "implicit_cotangents",
           "search_adjoint", "search_duals", "any_cotangent"]

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


def _packed(args) -> tuple[tuple, bool]:
    """A solver's `args` as a tuple, and whether it was given as one (its cotangent takes the same form)."""
    return (args, True) if isinstance(args, tuple) else ((args,), False)


def _solution(opts, out, dout, refused):
    """(the solution, its cotangent) of a solver's output: with full_output the first of a tuple, a cotangent
    for the rest (its diagnostics) raising `refused()`."""
    if not opts.get("full_output"):
        return out, dout
    if dout is not None and any(any_cotangent(d) for d in dout[1:]):
        raise refused()
    return out[0], (dout[0] if dout is not None else None)


def _by_position(names, cot, pos, kw) -> tuple:
    """An adjoint's cotangents: one per positional argument, then a dict of the keyword arguments' (if any)."""
    grads = tuple(cot[name] for name in names[:len(pos)])
    named = {k: cot[k] for k in kw if cot.get(k) is not None}
    return grads + (named,) if named else grads


def root_adjoint(pullback_full, fn):
    """fn's adjoint on reverse mode's `pullback_full`: the cotangents of f (its closure's, a Tangent) and
    of `args` are those of f(x*, *args) weighted by −dy/(∂f/∂x)(x*)."""
    sig = inspect.signature(fn)
    names = tuple(sig.parameters)

    def root_adjoint(dout, out, *pos, **kw):
        opts = _options(sig, pos, kw)
        f, (args, packed) = opts["f"], _packed(opts["args"])
        root, dy = _solution(opts, out, dout, lambda: _results(fn))
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
        return _by_position(names, cot, pos, kw)
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


# -- searches by comparisons only: refused in both modes -------------------------------------------------

# scipy's optimisers that move their points by comparing the objective's values, never by its slope: the
# result's derivative, differentiated as code, is 0 (Nelder-Mead's and differential evolution's x under
# forward mode were a silent 0; the true derivative of the optimum is not)
SEARCHES = {fn: name for fn, name in (
    (getattr(getattr(optimize, "_optimize", None), "_minimize_neldermead", None), "Nelder-Mead simplex"),
    (getattr(optimize, "differential_evolution", None), "differential evolution"),
    (getattr(optimize, "dual_annealing", None), "dual annealing"),
) if fn is not None}


def _search_refused(name) -> NoDerivative:
    return NoDerivative(f"scipy.optimize's {name} moves its points by comparing the objective's values only: "
                        "differentiated as code its result's derivative is 0, which the optimum's is not, and "
                        "overdub has no rule for it",
                        fix="differentiate a gradient-based method (method='BFGS', whose iterations are "
                            "differentiated), `scipy.optimize.elementwise.find_minimum` for one variable, or "
                            "give the call a custom adjoint (`@contexts.custom_adjoint`)")


def any_cotangent(v) -> bool:
    """v (a cotangent: a number, an array, a tuple/list/mapping of them) is not all zero; a `Refused` one
    counts (using it is refused)."""
    if v is None:
        return False
    if isinstance(v, Refused):
        return True
    if isinstance(v, (tuple, list)):
        return any(any_cotangent(x) for x in v)
    if hasattr(v, "keys") and hasattr(v, "__getitem__"):
        return any(any_cotangent(v[k]) for k in v.keys())
    try:
        return bool(np.any(np.asarray(v) != 0))
    except (TypeError, ValueError):
        return True


def iteration_refused(name) -> NoDerivative:
    """`name` is a key of `_WHY`: what the iteration is, and what to use instead."""
    what, fix = _WHY[name]
    return NoDerivative(f"{name} {what}: differentiated as code, its derivative is off by about its tolerance, "
                        "and overdub has no rule for it", fix=fix)


_BDF = "scipy.integrate.solve_ivp(method='BDF')"
_BOUNDED = "scipy.optimize.minimize_scalar(method='bounded') (fminbound)"
_WHY = {
    _BDF: ("stops its Newton iteration at the solver's tolerance, on a Jacobian frozen from earlier steps (at "
           "rtol=1e-3: 4.5e-4 of the derivative)",
           "use an explicit method (method='RK45', 'DOP853'), whose steps are differentiated exactly, or give the "
           "solve a custom adjoint (`@contexts.custom_adjoint`)"),
    _BOUNDED: ("stops its golden-section and parabolic steps at xatol, so the minimiser it returns moves in steps, "
               "not with the inputs (an inversion minimising |M(a) - r| had its derivative 8e-4 off)",
               "find the minimiser as a root of the objective's derivative with scipy.optimize.brentq (whose rule "
               "differentiates the root itself), or a root of g for |g|; or give the call a custom adjoint"),
}

# iterations refused by name: their result run natively, its derivative refused (see `iteration_refused`)
ITERATIONS = {}
try:
    from scipy.integrate._ivp import bdf as _bdf
    ITERATIONS[_bdf.solve_bdf_system] = _BDF
except (ImportError, AttributeError):  # pragma: no cover - another scipy's layout
    pass
if (_bounded := getattr(getattr(optimize, "_optimize", None), "_minimize_scalar_bounded", None)) is not None:
    ITERATIONS[_bounded] = _BOUNDED


def search_adjoint(name, refused=None):
    """Reverse mode: the search runs natively; any cotangent reaching its result is refused."""
    refused = refused or _search_refused

    def adjoint(dy, y, *args, **kwargs):
        if any_cotangent(dy):
            raise refused(name)
        return (None,) * len(args) + ({},)
    return adjoint


def search_duals(fw, fn, name, refused=None):
    """Forward mode: the search on plain values where nothing it is given is perturbed; else refused."""
    refused = refused or _search_refused

    def run(*args, **kwargs):
        if not fw.dual_free((args, kwargs)):
            raise refused(name)
        return fn(*args, **kwargs)
    run.__name__ = run.__qualname__ = f"{getattr(fn, '__name__', 'search')}_duals"
    return run


def _register_sparsity() -> None:
    from ..registry import registry
    from ..sparsity_specs import DENSE
    registry.sparsity(DENSE, *ROOT_FINDERS)  # (conservative: the root depends on all of f's inputs)


_register_sparsity()


# -- forward mode: the root finders on duals, by the implicit function theorem ------------------------------

def _second_order(fn) -> NoDerivative:
    return NoDerivative(f"scipy.optimize.{fn.__name__} on duals of more than one derivative call (a second "
                        "derivative through a root finder)",
                        fix="differentiate once, or give the solve a custom adjoint (`@contexts.custom_adjoint`)")


def _one_level(y, fw) -> bool:
    """y is a dual of one derivative call, its primal and tangent plain (no nested duals)."""
    return fw.is_dual(y) and fw.dual_free(y.primal) and fw.dual_free(y.tangent)


def _scalar(v):
    """A number of size 1 (a 0-d array, np.float64) as a float; anything else as it is."""
    return float(np.asarray(v).reshape(())) if np.size(v) == 1 else v


def as_array(func, x, *args):
    """F(x, *args) as an array (fsolve's F may return a list of numbers): run by forward mode on duals."""
    return np.asarray(func(x, *args))


def root_duals(fw, fn):
    """fn's form on duals, on forward mode's helpers `fw` (`run_inside`, `dual_free`, `primal`, `is_dual`,
    `slope_at`): fn(f, a, b, args=...) where f's closure or args hold duals. The root x* is fn's on the
    primal function; its tangent is −(∂f/∂θ·θ̇)/(∂f/∂x), the first the tangent of f(x*, θ) (x* plain), the
    second f's derivative in x at x*, both by forward mode on f itself. The bracket's ends, xtol and rtol
    have no derivative (the root does not move with them)."""
    sig = inspect.signature(fn)

    def roots(*pos, **kw):
        opts = _options(sig, pos, kw)
        f, args = opts["f"], opts["args"]
        args = args if isinstance(args, tuple) else (args,)
        if fw.dual_free((f, args)):
            return fn(*(fw.primal(p) for p in pos), **{k: fw.primal(v) for k, v in kw.items()})

        def g(t):
            return fw.run_inside(f, (t, *args), {})
        plain = {k: fw.primal(v) for k, v in opts.items() if k not in ("f", "args")}
        result = fn(lambda t: fw.primal(g(t)), **plain)
        root = result[0] if opts.get("full_output") else result
        y = g(root)
        if not fw.is_dual(y):
            if fw.dual_free(y):  # f(x*, θ) does not depend on the inputs: nor does the root
                return result
            raise NoDerivative(
                f"scipy.optimize.{fn.__name__}: f returned a {type(y).__name__} holding perturbed values, not a "
                "number", fix="return a number from f")
        if not _one_level(y, fw) or np.size(y.primal) != 1:
            raise _second_order(fn) if np.size(y.primal) == 1 else NoDerivative(
                f"scipy.optimize.{fn.__name__}: f returned an array of {np.size(y.primal)} values, not a number",
                fix="return a number from f")
        slope = _scalar(fw.slope_at(g, root))
        if not _real_number(slope) or slope == 0 or not np.isfinite(slope):
            raise _not_simple(fn, slope)
        t = np.asarray(y.tangent, dtype=float)
        tangent = -(float(t) if t.ndim == 0 else t.reshape(t.shape[:1])) / slope
        x = type(y)(root, tangent, y.tag)
        if opts.get("full_output"):
            result[1].root = x  # (RootResults: its root is the same value)
            return x, result[1]
        return x
    roots.__name__ = roots.__qualname__ = f"{fn.__name__}_duals"
    return roots


# -- the implicit function theorem for a system F(x, θ) = 0: fsolve's and root's shared core ----------------

def _twice(name) -> NoDerivative:
    return NoDerivative(f"{name} on duals of more than one derivative call (a second derivative through a root "
                        "finder)", fix="differentiate once, or give the solve a custom adjoint "
                                        "(`@contexts.custom_adjoint`)")


def _isolated(name, J):
    """J (∂F/∂x at the solution, square) when it is finite and well conditioned; else refused."""
    if not np.all(np.isfinite(J)) or np.linalg.cond(J) > 1e14:
        raise NoDerivative(f"{name}'s solution has no derivative: F's Jacobian there is singular",
                           fix="differentiate where the solution is isolated")
    return J


def _square(name, J, size):
    if J.shape != (size, size):
        raise NoDerivative(f"{name}: F's Jacobian at the solution is {J.shape}, not square ({size} unknowns)",
                           fix="give F as many outputs as unknowns")
    return J


def _at_root(name, J, value, x, why=None):
    """x is a root of F (F(x) = `value`, ∂F/∂x = J): its Newton step J⁻¹F(x) within 1e-6 of x's size (at least
    1); else refused, `why` (the solver's own word, when it reports no success) in the message."""
    step = np.max(np.abs(np.linalg.solve(J, np.asarray(value, dtype=float).reshape(-1))), initial=0.0)
    if not step <= 1e-6 * max(1.0, np.max(np.abs(x), initial=0.0)):
        said = f" (the solver reports no success: {' '.join(str(why).split())})" if why else ""
        raise NoDerivative(f"{name}'s x is not a root of F{said}: F there is up to "
                           f"{np.max(np.abs(value), initial=0.0):.3g}, a Newton step of {step:.3g} from a root, so "
                           "the implicit function's derivative does not hold at it",
                           fix="tighten the solve (tol=..., more iterations, another method or x0) until res.success "
                               "and F(res.x) ≈ 0, or keep F's inputs constant")


def _strict_minimum(name, H):
    """H (the objective's Hessian at the minimiser, symmetric) is positive definite; else refused: a saddle or a
    flat valley is no isolated minimum, and the minimiser has no derivative there."""
    low = np.linalg.eigvalsh((H + H.T) / 2)[0]
    if not low > 0:
        raise NoDerivative(f"{name}'s x is not a strict minimum: the objective's Hessian there has an eigenvalue "
                           f"{low:.3g} <= 0 (a saddle, or a valley of minimisers), so the minimiser has no derivative",
                           fix="differentiate where the fit's parameters are determined by the data (fewer "
                               "parameters, or more data), or keep the fit's inputs constant")


def implicit_dual(fw, name, g, root, why=False, minimum=False):
    """(x*'s dual, F(x*, θ) on duals) by the implicit function theorem, on forward mode's helpers `fw`: g(x) is
    F(x, θ) with θ perturbed, x* (`root`, plain) a solution; ẋ solves J ẋ = −F_θ·θ̇, J = ∂F/∂x at x* (forward
    mode on g, all directions at once), F_θ·θ̇ the tangent of g(x*). None where g(x*) is not perturbed (nor is
    x*). Refused: a singular or non-square J, a second derivative; with `why` (not False: the solver's
    message where it reports no success, else None) an x* that is not a root of F. `minimum`: F is an
    objective's gradient (J its Hessian), x* its minimiser: refused too where J is not positive definite."""
    y = g(root)
    if not fw.is_dual(y):
        if fw.dual_free(y):
            return None
        raise NoDerivative(f"{name}: F returned perturbed values numpy keeps as objects",
                           fix="return a float array (or a list of numbers) from F")
    if not _one_level(y, fw):
        raise _twice(name)
    size = np.size(root)
    J = _square(name, np.atleast_2d(np.asarray(fw.slope_at(g, root), dtype=float)), size)
    _isolated(name, J)
    if why is not False:
        _at_root(name, J, fw.primal(y), root, why)
    if minimum:
        _strict_minimum(name, J)
    dF = np.asarray(y.tangent, dtype=float)  # (n,) or, with k directions, (k, n)
    dx = -np.linalg.solve(J, dF.reshape(-1, size).T).T
    # (the root's shape after the directions' axes: F may return a number for one unknown, `eps - g(x[0])`,
    # whose tangent then had no axis for the root's, and `fsolve(...)[0]` indexed a number)
    dx = dx.reshape(dF.shape[:dF.ndim - np.ndim(fw.primal(y))] + np.shape(root))
    return type(y)(root, dx, y.tag), y


def implicit_cotangents(pullback_full, name, F, func, root, args, dy, why=False) -> tuple:
    """(func's cotangent, args' cotangents) for x̄ = dy at the solution x* (`root`) of F(func, x, *args) = 0,
    on reverse mode's `pullback_full`: θ̄ = −(∂F/∂θ)ᵀλ with Jᵀλ = x̄, J = ∂F/∂x at x* (its rows by one pullback
    each), the first by the pullback of F at x* with cotangent −λ. Refused: a singular or non-square J, a
    second derivative (duals in θ), and with `why` (as `implicit_dual`'s) an x* that is not a root of F."""
    try:  # (x* or x̄ on duals, forward over reverse: a TypeError, refused as a second derivative)
        x = np.asarray(root, dtype=float)
        bar = np.asarray(dy, dtype=float).reshape(-1)
        rows = []
        for i in range(x.size):
            value, back = pullback_full(F, func, x, *args)
            if np.size(value) != x.size:
                raise NoDerivative(f"{name}: F has {np.size(value)} values at the solution, not {x.size} (one per "
                                   "unknown)", fix="give F as many outputs as unknowns")
            seed = np.zeros(np.shape(value))
            seed.flat[i] = 1.0
            _, (_, dx, *_) = back(seed)
            rows.append(np.zeros(x.size) if dx is None else np.asarray(dx, dtype=float).reshape(-1))
        J = np.array(rows).reshape(x.size, x.size)
        value = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as e:
        if isinstance(e, NoDerivative):
            raise
        raise _twice(name) from e
    _isolated(name, J)
    if why is not False:
        _at_root(name, J, value, x, why)
    lam = np.linalg.solve(J.T, bar)
    value, back = pullback_full(F, func, x, *args)
    _, (dfunc, _, *dargs) = back(-lam.reshape(np.shape(value)))
    return dfunc, tuple(dargs)


_FSOLVE_INFO = NoClosedForm("scipy.optimize.fsolve", "full_output's infodict (fvec, fjac, r, qtf: the solver's last "
                            "state)", fix="differentiate the solution only (fsolve's first output)")


def fsolve_duals(fw, fn=optimize.fsolve):
    """fsolve's form on duals (see `root_duals`): x* solves F(x, θ) = 0 on the primal function; its tangent
    solves J ẋ = −F_θ·θ̇, J = ∂F/∂x at x* (forward mode on F, all directions at once), F_θ·θ̇ the tangent of
    F(x*, θ). x0, fprime and the tolerances have no derivative. Refused: a singular J (no derivative),
    F of another shape than x, full_output's infodict (its arrays carry a refusal, never a zero)."""
    sig = inspect.signature(fn)

    def solve(*pos, **kw):
        opts = _options(sig, pos, kw)
        func, args = opts["func"], opts["args"]
        args = args if isinstance(args, tuple) else (args,)
        if fw.dual_free((func, args, opts["fprime"])):
            return fn(*(fw.primal(p) for p in pos), **{k: fw.primal(v) for k, v in kw.items()})

        def g(x):
            return fw.run_inside(as_array, (func, x, *args), {})
        plain = {k: fw.primal(v) for k, v in opts.items() if k not in ("func", "args", "fprime")}
        fprime = opts["fprime"]
        if fprime is not None:
            plain["fprime"] = lambda x: fw.primal(fw.run_inside(fprime, (x, *args), {}))
        result = fn(lambda x: np.asarray(fw.primal(g(x))), **plain)
        root = result[0] if opts["full_output"] else result
        solved = implicit_dual(fw, "scipy.optimize.fsolve", g, root)
        if solved is None:
            return result
        x, y = solved
        if opts["full_output"]:
            info = {k: (type(y)(v, Refused(_FSOLVE_INFO), y.tag) if k != "nfev" and np.asarray(v).dtype.kind in "fc"
                        else v) for k, v in result[1].items()}
            return (x, info) + tuple(result[2:])
        return x
    solve.__name__ = solve.__qualname__ = "fsolve_duals"
    return solve


def fsolve_adjoint(pullback_full, fn=optimize.fsolve):
    """fsolve's adjoint on reverse mode's `pullback_full` (see `root_adjoint`): x* solves F(x, θ) = 0, so
    θ̄ = −(∂F/∂θ)ᵀ λ with Jᵀ λ = x̄, J = ∂F/∂x at x* (its rows by one pullback each), the first by the pullback of
    F at x* with cotangent −λ: the cotangents of F's closure (a Tangent) and of `args`. x0, fprime and the
    tolerances have none. Refused: a singular J, F of another shape than x, a cotangent for full_output's
    infodict, a second derivative (duals in θ: forward mode's form answers `hessian` by forward over forward)."""
    sig = inspect.signature(fn)
    names = tuple(sig.parameters)

    def fsolve_adjoint(dout, out, *pos, **kw):
        opts = _options(sig, pos, kw)
        func, (args, packed) = opts["func"], _packed(opts["args"])
        root, dy = _solution(opts, out, dout, _FSOLVE_INFO.error)
        cot = dict.fromkeys(names)
        if any_cotangent(dy):
            cot["func"], dargs = implicit_cotangents(pullback_full, "scipy.optimize.fsolve", as_array, func, root,
                                                     args, dy)
            if any(d is not None for d in dargs):
                cot["args"] = tuple(dargs) if packed else dargs[0]
        return _by_position(names, cot, pos, kw)
    return fsolve_adjoint
