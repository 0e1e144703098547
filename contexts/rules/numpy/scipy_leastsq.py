"""scipy.optimize's least-squares fits, `leastsq` (MINPACK's `_lmdif`/`_lmder`; `curve_fit`'s default method
'lm' calls it) and `least_squares` (`curve_fit` with bounds, or method 'trf'/'dogbox'), differentiated at
their optimum by the implicit function theorem, the residual function r differentiated by overdub itself:

    p* minimises S(p, θ) = ½‖r(p, θ)‖²   ⇒   g(p*, θ) = ∇ₚS = J_rᵀ r = 0   ⇒   H dp* = −(∂g/∂θ) dθ,
    H = ∂g/∂p = J_rᵀ J_r + Σᵢ rᵢ ∇²rᵢ

θ is whatever r depends on: its `args=(...)` (and `kwargs=` of least_squares) and the values its closure or
bound object holds (curve_fit's xdata, ydata and sigma sit in the closure it builds around the model). H is
exact, second-order terms included: g is the gradient of S by forward mode on r, H its Jacobian by forward
mode again (reverse mode: θ's cotangents by one pullback of λ·g, Hλ = p̄). The Gauss-Newton JᵀJ alone would
be wrong wherever the residuals are not zero, which is every fit of noisy data. The iteration that found p*
is not differentiated (MINPACK is C; least_squares' trust-region steps, differentiated as code, stop at the
solver's tolerance: curve_fit with bounds had its derivative 1e-3 off, silently), so every method has the same
derivative at its x. x0, a Jacobian given to steer the solve (`Dfun`, `jac`), the tolerances, scalings and
bounds that are not active have no derivative: the optimum does not move with them.

The outputs that are functions of (p*, θ) get their exact derivative: leastsq's `infodict['fvec']` and
least_squares' `fun` (r at the optimum), `cost` (S there) and `jac` (trf, dogbox and lm evaluate it at the
returned x: a callable jac's value there, differentiated as code; an approximated one's derivative is J_r's
own, which it approximates), so curve_fit's `pcov` with bounds (method 'trf'), from the SVD of res.jac, is
differentiated. The solver's state has no derivative the rules know and is refused on use: leastsq's `cov_x`
(from MINPACK's factorisation of its Jacobian at the iterate before the last step: not the returned x's;
curve_fit's `pcov` for method 'lm' is it scaled), `fjac`, `qtf`, least_squares' `grad` and `optimality`. A
sparse res.jac (jac_sparsity, tr_solver='lsmr') cannot carry a derivative: such a fit is refused whole.
Integers and messages are what they are.

The derivative is taken at the optimum itself: Newton's steps on g with the exact H from the fit's x
(`polished`), since a fit stopped by ftol on noisy data can sit a Newton step of 5e-6 away, whose derivative
is as far off. The value returned stays the fit's x.

Refused, never a number: a p that is not near a stationary point of S (its Newton step −H⁻¹g more than 1e-3
of a parameter, or more than 1e-6 where the solver reports no success: a capped or failed fit), Newton's steps
that do not settle, a singular H (parameters the data do not determine) or one that is not positive definite
(a saddle, not a minimum), least_squares with a bound active at the solution or a robust `loss` (the
conditions differ: not implemented), a sparse res.jac, a second derivative.

Rules sit below the modes: reverse mode hands `leastsq_adjoint`/`least_squares_adjoint` its hooks
(`pullback_full`, forward mode's `derivative`, a gradient and Hessian by forward mode), forward mode hands
`leastsq_duals`/`least_squares_duals` its helpers (`contexts.ad.callbacks`, `contexts.forward.callbacks`).
"""

from __future__ import annotations

import inspect

import numpy as np
from scipy import optimize

from ..cotangents import Refused, acc
from ..registry import NoClosedForm, NoDerivative
from .scipy_optimize import (_isolated, _one_level, _options, _packed, _strict_minimum, _twice, any_cotangent,
                             as_array, implicit_dual)

__all__ = ["leastsq_duals", "leastsq_adjoint", "least_squares_duals", "least_squares_adjoint", "with_kwargs",
           "flat_residual", "half_cost"]

_SUCCESS = (1, 2, 3, 4)  # leastsq's ier when MINPACK reports convergence
_FAILURES = {0: "improper input", 5: "the number of calls reached maxfev", 6: "ftol too small",
             7: "xtol too small", 8: "gtol too small"}


def _leastsq_why(out, full):
    """leastsq's word where MINPACK reports no success (its message with full_output), else None."""
    ier = out[-1]
    if ier in _SUCCESS:
        return None
    return out[-2] if full else f"ier={ier}, {_FAILURES.get(ier, 'unknown')}"


def with_kwargs(fun, x, kwargs, *args):
    """least_squares' residual: fun(x, *args, **kwargs) as an array (its kwargs one more argument)."""
    return np.asarray(fun(x, *args, **kwargs))


def flat_residual(residual, func, x, *args):
    """r(x, θ) as the solvers hold it, one vector."""
    return np.ravel(residual(func, x, *args))


def half_cost(residual, func, x, *args):
    """S = ½‖r(x, θ)‖²."""
    r = residual(func, x, *args)
    return 0.5 * np.sum(r * r)


def _half_square(r):
    return 0.5 * np.dot(r, r)


def _shifted_cost(residual, func, x, s, *args):
    return half_cost(residual, func, x + s, *args)


def _shifted_residual(residual, func, x, s, *args):
    return flat_residual(residual, func, x + s, *args)


def _jacobian_dense(name, jac):
    """least_squares' res.jac, when it is a dense array (its derivative is then given); a sparse matrix or a
    LinearOperator (`jac_sparsity`, tr_solver='lsmr') would carry none: refused."""
    if not isinstance(jac, np.ndarray):
        raise NoDerivative(f"{name}: its res.jac is a {type(jac).__name__}, which cannot carry a derivative, so the "
                           "fit is not differentiated", fix="use a dense Jacobian (no jac_sparsity, tr_solver='exact')")


def _state(function, key) -> NoClosedForm:
    return NoClosedForm(function, f"{key} (the solver's last state)",
                        fix="differentiate the fit's parameters (and the residuals or cost at them), not the "
                            "solver's state; curve_fit's pcov is leastsq's cov_x scaled, refused with it")


def _robust(name, loss) -> NoDerivative:
    return NoDerivative(f"{name} with loss={loss!r}: overdub differentiates the optimum of ½‖r‖² only (loss='linear')",
                        fix="use loss='linear', or give the call a custom adjoint (`@contexts.custom_adjoint`)")


def _active(name) -> NoDerivative:
    return NoDerivative(f"{name}: a bound is active at the solution (res.active_mask, or the optimum of ½‖r‖² lies "
                        "beyond a bound the fit stopped at), where the optimum is no "
                        "stationary point of ½‖r‖² and moves by other conditions than the implicit function "
                        "theorem overdub applies", fix="widen the bounds, or keep the fit's inputs constant")


# -- the optimum itself -------------------------------------------------------------------------------------

def _far(name, step, why) -> NoDerivative:
    said = f" (the solver reports no success: {' '.join(str(why).split())})" if why else ""
    return NoDerivative(f"{name}'s x is not a minimum of ½‖r‖²{said}: a Newton step of {np.max(np.abs(step)):.3g} "
                        f"from a stationary point, more than {'1e-6' if why else '1e-3'} of its parameters, so the "
                        "implicit function's derivative does not hold at it",
                        fix="tighten the fit (ftol, xtol, more evaluations, another x0) until it converges, or keep "
                            "its inputs constant")


def _unsettled(name, step) -> NoDerivative:
    return NoDerivative(f"{name}: Newton's iteration on ∇½‖r‖² from the fit's x does not settle (its last step "
                        f"{np.max(np.abs(step)):.3g}): the optimum is not determined to the precision its derivative "
                        "needs (an ill-conditioned fit)", fix="fit fewer parameters, or keep the fit's inputs constant")


def polished(name, gradient_hessian, x, why, inside=None):
    """The stationary point of S = ½‖r‖² the fit's x approximates (θ fixed), by Newton's steps on g = ∇S with the
    exact Hessian H (`gradient_hessian(p)` = (g, H), plain): the derivative is the optimum's, not that of a point
    the solver's tolerance left up to sqrt(ftol) away (curve_fit's defaults stop 5e-6 off on noisy data, where
    the derivative came out 8e-6 off). Refused: a first step of more than 1e-3 of a parameter (not near a
    minimum), or of more than 1e-6 where the solver reports no success (`why`: a capped or failed fit), an
    iteration that does not settle to 1e-8, a singular or not positive definite H at the optimum, and an
    optimum `inside` refuses (least_squares': one not strictly within its bounds). Each parameter's scale is its
    size, at least 1e-2 of the largest's (a Gaussian's center at 0 of symmetric data, its fit stopped 7e-6 off
    and its width 1.2, was refused at 1e-6 of the largest)."""
    x = np.array(x, dtype=float).reshape(-1)
    scale = np.maximum(np.abs(x), 1e-2 * np.max(np.abs(x), initial=0.0))  # (a center at 0 of symmetric data)
    step = None
    for i in range(6):
        g, H = gradient_hessian(x)
        H = np.asarray(H, dtype=float).reshape(x.size, x.size)
        _isolated(name, H)
        step = np.linalg.solve(H, np.asarray(g, dtype=float).reshape(-1))
        if i == 0 and not np.all(np.abs(step) <= (1e-6 if why else 1e-3) * scale):
            raise _far(name, step, why)
        x = x - step
        if np.all(np.abs(step) <= 1e-13 * scale):
            break
    if not np.all(np.abs(step) <= 1e-8 * scale):
        raise _unsettled(name, step)
    _strict_minimum(name, H)
    if inside is not None:
        inside(x)
    return x


# -- forward mode ------------------------------------------------------------------------------------------

def _minimum_dual(fw, name, residual, func, args, x, why, inside=None):
    """(p*'s dual, ∇S at p* on duals) or None (nothing r depends on is perturbed): `implicit_dual` on g = ∇ₚS, by
    forward mode on S (`fw.gradient_at`, perturbations of θ kept), H by forward mode on g, at the optimum
    `polished` from the fit's x; the dual's value is the fit's x."""
    n = np.size(x)

    def g(p):
        return fw.gradient_at(lambda s: fw.run_inside(_shifted_cost, (residual, func, p, s, *args), {}), n)
    first = g(np.asarray(x, dtype=float))
    if not fw.is_dual(first):  # (None where nothing r depends on is perturbed; refused where it is, unseen)
        return implicit_dual(fw, name, lambda p: first, x)
    if not _one_level(first, fw):
        raise _twice(name)

    def gradient_hessian(p):
        return fw.primal(g(p)), fw.slope_at(g, p)
    optimum = polished(name, gradient_hessian, x, why, inside)
    solved = implicit_dual(fw, name, g, optimum, minimum=True)
    if solved is None:
        return None
    dual, y = solved
    return type(dual)(np.array(x, dtype=float).reshape(np.shape(optimum)), dual.tangent, dual.tag), y


def _refused(fw, y, value, why):
    """value (a float array of the solver's state) carrying a refusal as y's tangent; others as they are."""
    if isinstance(value, np.ndarray) and value.dtype.kind in "fc":
        return type(y)(value, Refused(why), y.tag)
    return value


def _plain_call(fw, fn, args, kwargs=None):
    """fn as the solver calls it: on plain values, the perturbations of its closure and args dropped."""
    def plain(x, *more):
        return fw.primal(fw.run_inside(fn, (x, *more, *args), kwargs or {}))
    return plain


def leastsq_duals(fw, fn=optimize.leastsq):
    """leastsq's form on duals, on forward mode's helpers `fw` (`run_inside`, `dual_free`, `primal`, `is_dual`,
    `slope_at`, `gradient_at`): the fit runs on the primal r, p* gets its tangent by `_minimum_dual`;
    `infodict['fvec']` is r at p*'s dual, cov_x, fjac and qtf carry a refusal."""
    sig = inspect.signature(fn)
    name = "scipy.optimize.leastsq"

    def fit(*pos, **kw):
        opts = _options(sig, pos, kw)
        func, Dfun, (args, _) = opts["func"], opts["Dfun"], _packed(opts["args"])
        if fw.dual_free((func, args, Dfun)):
            return fn(*(fw.primal(p) for p in pos), **{k: fw.primal(v) for k, v in kw.items()})
        plain = {k: fw.primal(v) for k, v in opts.items() if k not in ("func", "args", "Dfun")}
        if Dfun is not None:
            plain["Dfun"] = _plain_call(fw, Dfun, args)
        out = fn(_plain_call(fw, func, args), **plain)
        full, ier = bool(opts["full_output"]), out[-1]
        why = _leastsq_why(out, full)
        solved = _minimum_dual(fw, name, as_array, func, args, out[0], why)
        if solved is None:
            return out
        x, y = solved
        # (r at x's dual, called last: a residual keeping what it is given, as lmfit's, holds the solution, not a
        # point of the Hessian's nested derivative calls)
        fvec = fw.run_inside(flat_residual, (as_array, func, x, *args), {})
        if not full:
            return x, ier
        cov_x, info = out[1], dict(out[2])
        info["fvec"] = fvec
        for k in ("fjac", "qtf"):
            info[k] = _refused(fw, y, info.get(k), _state(name, f"infodict['{k}']"))
        return (x, _refused(fw, y, cov_x, _state(name, "cov_x")), info) + tuple(out[3:])
    fit.__name__ = fit.__qualname__ = "leastsq_duals"
    return fit


def _jacobian_called(jac, x, kwargs, *args):
    """least_squares' callable jac at x, as an array."""
    return np.asarray(jac(x, *args, **kwargs))


def _inside(name, bounds, n):
    """A check that an optimum lies strictly within least_squares' bounds (a `Bounds` or (lb, ub)): trf keeps its
    x strictly feasible and flags a bound active within xtol only, so a constrained optimum on a bound came back
    2e-8 inside it, unflagged, and Newton's steps went on across it to the unconstrained optimum, whose
    derivative is not the constrained one's."""
    lb, ub = (bounds.lb, bounds.ub) if isinstance(bounds, optimize.Bounds) else bounds
    lb = np.broadcast_to(np.asarray(lb, dtype=float), (n,))
    ub = np.broadcast_to(np.asarray(ub, dtype=float), (n,))

    def inside(p):
        if not (np.all(lb < p) and np.all(p < ub)):
            raise _active(name)
    return inside


def _least_squares_checked(name, opts, res):
    if opts["loss"] != "linear":
        raise _robust(name, opts["loss"])
    if np.any(np.asarray(res.active_mask) != 0):
        raise _active(name)


def least_squares_duals(fw, fn=optimize.least_squares):
    """least_squares' form on duals (see `leastsq_duals`): x gets its tangent by `_minimum_dual`, `fun` and
    `cost` are r and S at x's dual, jac, grad and optimality carry a refusal."""
    sig = inspect.signature(fn)
    name = "scipy.optimize.least_squares"

    def fit(*pos, **kw):
        opts = _options(sig, pos, kw)
        fun, jac, (args, _) = opts["fun"], opts["jac"], _packed(opts["args"])
        kwargs = opts["kwargs"] or {}
        if fw.dual_free((fun, args, kwargs, jac)):
            return fn(*(fw.primal(p) for p in pos), **{k: fw.primal(v) for k, v in kw.items()})
        plain = {k: fw.primal(v) for k, v in opts.items() if k not in ("fun", "args", "kwargs", "jac")}
        plain["jac"] = _plain_call(fw, jac, args, kwargs) if callable(jac) else jac
        res = fn(_plain_call(fw, fun, args, kwargs), **plain)
        _least_squares_checked(name, opts, res)
        _jacobian_dense(name, res.jac)
        theta = (kwargs, *args)
        solved = _minimum_dual(fw, name, with_kwargs, fun, theta, res.x, None if res.status > 0 else res.message,
                               _inside(name, fw.primal(opts["bounds"]), np.size(res.x)))
        if solved is None:
            return res
        x, y = solved
        out = type(res)(res)
        out["x"] = x
        if callable(jac):  # (res.jac is jac at x: its own derivative)
            out["jac"] = fw.run_inside(_jacobian_called, (jac, x, *theta), {})
        else:  # (res.jac approximates J_r at x: its derivative is J_r's)
            out["jac"] = fw.run_inside(np.transpose, (fw.gradient_at(
                lambda s: fw.run_inside(_shifted_residual, (with_kwargs, fun, x, s, *theta), {}), np.size(x)),), {})
        out["fun"] = fw.run_inside(flat_residual, (with_kwargs, fun, x, *theta), {})  # (last: as leastsq's fvec)
        out["cost"] = fw.run_inside(_half_square, (out["fun"],), {})
        for k in ("grad", "optimality"):
            out[k] = _refused(fw, y, np.asarray(res[k]) if k == "optimality" else res[k], _state(name, f"res.{k}"))
        return out
    fit.__name__ = fit.__qualname__ = "least_squares_duals"
    return fit


# -- reverse mode ------------------------------------------------------------------------------------------

def _along(derivative, residual):
    """λ·g(func, x, λ, *args) = d/de S(x + eλ), by one forward-mode derivative (reverse mode differentiates it
    for θ's cotangents: (∂g/∂θ)ᵀλ)."""
    def cost_along(func, x, lam, *args):
        def cost(e):
            return half_cost(residual, func, x + e * lam, *args)
        return derivative(cost, 0.0)
    return cost_along


def _residual_jacobian(derivative, residual):
    """J_r(func, x, *args) (outputs by rows), one forward-mode derivative per entry of x."""
    def residual_jacobian(func, x, *args):
        unit = np.eye(np.size(x))

        def along(k):
            def shifted(e):
                return flat_residual(residual, func, x + e * unit[k], *args)
            return derivative(shifted, 0.0)
        return np.stack([along(k) for k in range(np.size(x))], axis=1)
    return residual_jacobian


def _minimum_cotangents(rv, name, residual, func, x, args, dx, outputs, why, inside=None):
    """(func's cotangent, args' cotangents, the cotangents of `outputs`' functions) for p̄ = dx and the
    cotangents of outputs that are functions of (p*, θ): `outputs` holds (F, fn, cotangent) for the value
    F(fn, p*, *args) (the residuals, the Jacobian), on reverse mode's hooks `rv` (`pullback_full`, forward mode's
    `derivative`, and `gradient_hessian(f, x)`: a plain function's gradient and Hessian by forward mode). Each
    output's cotangent reaches θ directly and p* through F's pullback at (p*, θ); p̄ in all reaches θ as
    −(∂g/∂θ)ᵀλ, Hλ = p̄ at the `polished` optimum: the pullback of λ·g (`_along`) with cotangent −1."""
    x = np.asarray(x, dtype=float)
    d_args = (None,) * len(args)
    d_fns = []
    bar = np.zeros(x.shape) if dx is None else np.asarray(dx, dtype=float).reshape(x.shape)
    for F, fn, cot in outputs:
        if not any_cotangent(cot):
            d_fns.append(None)
            continue
        _, back = rv.pullback_full(F, fn, x, *args)
        _, (d_fn, px, *more) = back(np.asarray(cot, dtype=float))
        d_fns.append(d_fn)
        d_args = tuple(acc(a, b) for a, b in zip(d_args, more))
        bar = bar + (0.0 if px is None else np.asarray(px, dtype=float).reshape(x.shape))
    d_func = None
    if np.any(bar != 0):
        def cost(p):
            return half_cost(residual, func, p, *args)
        try:
            optimum = polished(name, lambda p: rv.gradient_hessian(cost, p), x, why, inside)
            H = rv.gradient_hessian(cost, optimum)[1]
        except (TypeError, ValueError) as e:  # (duals in θ, forward over reverse: a second derivative)
            if isinstance(e, NoDerivative):
                raise
            raise _twice(name) from e
        lam = np.linalg.solve(np.asarray(H, dtype=float).reshape(x.size, x.size), bar.reshape(-1))
        _, back = rv.pullback_full(_along(rv.derivative, residual), func, optimum.reshape(x.shape),
                                   lam.reshape(x.shape), *args)
        _, (d_func, _, _, *i_args) = back(-1.0)
        d_args = tuple(acc(a, b) for a, b in zip(d_args, i_args))
    return d_func, d_args, d_fns


def _flat_residual_of(func, x, *args):
    return flat_residual(as_array, func, x, *args)


def _flat_residual_of_kw(fun, x, kwargs, *args):
    return flat_residual(with_kwargs, fun, x, kwargs, *args)


def _mapping_item(d, key):
    return d.get(key) if d is not None and hasattr(d, "get") else None


def leastsq_adjoint(rv, fn=optimize.leastsq):
    """leastsq's adjoint on reverse mode's hooks `rv` (see `_minimum_cotangents`): the
    cotangents of func's closure (a Tangent) and of `args`, from those of x and of infodict['fvec']; any for
    cov_x or the solver's state refused."""
    sig = inspect.signature(fn)
    names = tuple(sig.parameters)
    name = "scipy.optimize.leastsq"

    def leastsq_adjoint(dout, out, *pos, **kw):
        opts = _options(sig, pos, kw)
        func, (args, packed) = opts["func"], _packed(opts["args"])
        dout = dout if dout is not None else (None,) * len(out)
        dx, dr = dout[0], None
        if opts["full_output"]:
            if any_cotangent(dout[1]):
                raise _state(name, "cov_x").error()
            info = dout[2]
            for k in ("fjac", "qtf"):
                if any_cotangent(_mapping_item(info, k)):
                    raise _state(name, f"infodict['{k}']").error()
            dr = _mapping_item(info, "fvec")
        cot = dict.fromkeys(names)
        if any_cotangent(dx) or any_cotangent(dr):
            why = _leastsq_why(out, opts["full_output"])
            outputs = [(_flat_residual_of, func, dr)]
            d_func, dargs, (d_r,) = _minimum_cotangents(rv, name, as_array, func, out[0], args, dx, outputs, why)
            cot["func"] = acc(d_func, d_r)
            if any(d is not None for d in dargs):
                cot["args"] = tuple(dargs) if packed else dargs[0]
        grads = tuple(cot[k] for k in names[:len(pos)])
        return grads + ({k: cot[k] for k in kw if cot.get(k) is not None},)
    return leastsq_adjoint


def least_squares_adjoint(rv, fn=optimize.least_squares):
    """least_squares' adjoint (see `leastsq_adjoint`): the result's cotangent is a mapping by field; x's, fun's
    and cost's reach fun's closure, `args` and `kwargs`; the solver's state's are refused."""
    sig = inspect.signature(fn)
    names = tuple(sig.parameters)
    name = "scipy.optimize.least_squares"

    def least_squares_adjoint(dout, out, *pos, **kw):
        opts = _options(sig, pos, kw)
        fun, (args, packed) = opts["fun"], _packed(opts["args"])
        kwargs = opts["kwargs"] or {}
        cots = dict(dout) if dout is not None else {}
        for k in ("grad", "optimality"):
            if any_cotangent(cots.get(k)):
                raise _state(name, f"res.{k}").error()
        dx, dr, dc, dj = cots.get("x"), cots.get("fun"), cots.get("cost"), cots.get("jac")
        cot = dict.fromkeys(names)
        if any(any_cotangent(d) for d in (dx, dr, dc, dj)):
            _least_squares_checked(name, opts, out)
            _jacobian_dense(name, out.jac)
            if any_cotangent(dc):  # (∂S/∂r = r: the cost's cotangent as the residuals')
                r = np.ravel(np.asarray(out.fun, dtype=float))
                dr = float(dc) * r + (0.0 if dr is None else np.asarray(dr, dtype=float))
            jac = opts["jac"]
            outputs = [(_flat_residual_of_kw, fun, dr),
                       (_jacobian_called, jac, dj) if callable(jac) else
                       (_residual_jacobian(rv.derivative, with_kwargs), fun, dj)]
            why = None if out.status > 0 else out.message
            d_fun, (dkw, *dargs), (d_r, d_j) = _minimum_cotangents(rv, name, with_kwargs, fun, out.x,
                                                                   (kwargs, *args), dx, outputs, why,
                                                                   _inside(name, opts["bounds"], np.size(out.x)))
            if callable(jac):
                cot["fun"], cot["jac"] = acc(d_fun, d_r), d_j
            else:
                cot["fun"] = acc(acc(d_fun, d_r), d_j)
            if any(d is not None for d in dargs):
                cot["args"] = tuple(dargs) if packed else dargs[0]
            if any_cotangent(dkw):
                cot["kwargs"] = dkw
        grads = tuple(cot[k] for k in names[:len(pos)])
        return grads + ({k: cot[k] for k in kw if cot.get(k) is not None},)
    return least_squares_adjoint
