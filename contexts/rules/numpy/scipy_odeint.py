"""`scipy.integrate.odeint` (LSODA, Fortran) in forward mode, by the sensitivity equations solved beside
the state: for y' = f(y, t, θ) the tangent s = ẏ obeys

    s' = ∂f/∂y · s + ∂f/∂θ · θ̇,   s(t0) = ẏ0,

whose right side is the tangent of f at (y + εs, θ + εθ̇): f run by forward mode on duals, the state's
tangent its own. odeint integrates state and tangents together (one augmented system, the call's own
tolerances), so the derivative is that of the solution of the ODE to those tolerances; the value is the
plain call's own. θ is whatever f
depends on: `args=(...)`, what its closure holds, and y0.

Refused, never a number: perturbed time points, `full_output`'s diagnostics, duals of more than one
derivative call.

Reverse mode (`odeint_adjoint(pullback_at)`, registered by `contexts.ad.callbacks`): the continuous
adjoint. Between consecutive output times, from the last back to the first, odeint integrates backward

    λ' = -λ·∂f/∂y,   μ' = -λ·∂f/∂θ,

adding each output time's cotangent to λ as it is passed; λ(t0) is y0's cotangent, μ(t0) that of θ (f's
closure cells, bound object or partial: a `Tangent`; and `args`), flattened to one vector as quad's
integrals are (`scipy_integrate._flatten`, `_Layout`). The vector-Jacobian products are f's own pullback
(`pullback_at`: Dfun, if given, steers the primal only; its Jacobian is not the one of f's parameters).
The state y(s) the adjoint needs is not integrated backward (unstable on dissipative and stiff problems)
but read off a dense forward trajectory: odeint at a grid holding the output times, at a hundredth of the
call's tolerances (its atol lowered to rtol times each component's size), interpolated by cubic Hermite
polynomials with the slopes f(y, s); the grid is bisected where the interpolant at the midpoints misses
odeint's own values by more than a tenth of those tolerances (`_Trajectory`: odeint's own noise, well
below that, does not drive the bisection; a noisy y makes the backward solve's steps collapse). Both solves run at the call's tolerances (the defaults' 1.49e-8 if not given), so the
derivative is that of the ODE's solution to those tolerances. The time points' cotangents are exact:
f(y_k, t_k)·ȳ_k at t_k, k ≥ 1, and -λ(t0⁺)·f(y0, t0) at t0.

Refused (`NoDerivative`) in reverse mode: a cotangent on `full_output`'s info dict, duals in the call
(`hessian`: forward over reverse, whose outer tangents the adjoint would drop; forward mode refuses duals
of two derivative calls too), a trajectory that odeint or the grid's refinement cannot resolve to the
tolerances (an error, never a loose number).

Rules sit below the modes: forward mode hands `odeint_duals` its helpers (`contexts.forward.callbacks`).
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
from scipy import integrate

from ..registry import NoDerivative

__all__ = ["odeint_adjoint", "odeint_duals"]


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
        from ..watch import JumpWatch
        from .scipy_integrate import _watched
        watch = JumpWatch()  # (the branches on perturbed values f meets, by time: `moving`)

        def moving():
            for key, line, lo, hi in watch.switches():
                if watch.moves(key, lo, hi):  # (a jump of f, or a kink, at a time that moves: its saltation
                    raise NoDerivative(       # term is in no sensitivity equation)
                        f"scipy.integrate.odeint: the right side's branch at {line} (a comparison, a step or a "
                        f"kink) on perturbed values switches between t = {lo:.17g} and {hi:.17g}, at a time "
                        "that moves with them: the jump of the sensitivities there (the saltation) is in no "
                        "sensitivity equation", fix="write f without the branch (a smooth switch: 0.5 * (1 + "
                        "tanh(k * (y - a)))), or split the integration at a switching time that does not move")
        tag = fw.tag_of((y0, args, rhs(y0p.reshape(shape), t[0], *args)))
        if tag is None:  # f and y0 hold duals that do not reach the right side's values: the solution is
            # constant, unless a branch on them switches (`1.0 if y < a else 0.5`)
            out = _solved(fn, lambda y, s: fw.primal(_watched(watch, s, lambda u: rhs(y.reshape(shape), u, *args)))
                          .ravel(), y0p.ravel(), t, {k: fw.primal(v) for k, v in opts.items()})
            moving()
            return out.reshape((len(t),) + shape)
        k = tag.chunk
        lead = () if k is None else (k,)
        _, t0 = fw.split(fw.run_inside(_as_array, (_same, y0), {}), tag)  # (a list of duals: one dual array)
        s0 = np.zeros(lead + shape) if t0 is None else np.asarray(t0, dtype=float).reshape(lead + shape)

        def augmented(z, time):
            y = z[:n].reshape(shape)
            s = z[n:].reshape(lead + shape)
            out = _watched(watch, time, lambda u: rhs(fw.dual(y, s, tag), u, *args))
            value, tangent = fw.split(out, tag)
            value = np.asarray(fw.primal(value), dtype=float)
            if not fw.dual_free(value) or (tangent is not None and not fw.dual_free(tangent)):
                raise NoDerivative("scipy.integrate.odeint on duals of more than one derivative call",
                                   fix="differentiate once, or give the call a custom adjoint")
            tangent = np.zeros(lead + shape) if tangent is None else np.asarray(tangent, dtype=float)
            return np.concatenate([value.ravel(), np.broadcast_to(tangent, lead + shape).ravel()])
        z0 = np.concatenate([y0p.ravel(), np.asarray(s0, dtype=float).ravel()])
        z = _solved(fn, augmented, z0, t, {key: fw.primal(v) for key, v in opts.items()})  # (a failed solve:
        # refused; its values were what odeint reached, a silently wrong tangent)
        moving()
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


# -- reverse mode: the continuous adjoint ---------------------------------------------------------------

_DEFAULT_TOL = 1.49012e-8  # (odeint's rtol and atol when not given)
_MAX_POINTS = 200_000  # (the dense trajectory's grid: beyond it, refused as unresolved)


def _refused(what: str, fix: str) -> NoDerivative:
    return NoDerivative(f"scipy.integrate.odeint in reverse mode: {what}", fix=fix)


def _solved(fn, rhs, z0, times, opts: dict) -> np.ndarray:
    """odeint(rhs, z0, times, **opts), refused unless odeint reports success (it returns what it reached
    otherwise)."""
    opts = {k: v for k, v in opts.items() if k not in ("full_output", "printmessg")}
    with warnings.catch_warnings():  # (its failure is refused below, not warned of)
        warnings.simplefilter("ignore", integrate.ODEintWarning)
        z, info = fn(rhs, z0, times, full_output=True, printmessg=False, **opts)
    if info.get("message") != "Integration successful.":
        raise NoDerivative(f"scipy.integrate.odeint: odeint failed in the derivative's solve "
                           f"({info.get('message')!r}); what it reached is no derivative",
                           fix="raise mxstep, or loosen rtol/atol if they ask for more than doubles hold, or "
                               "tighten atol (a component far below it is known only roughly, and so is the "
                               "adjoint's Jacobian); or use the other mode (gradient, jacfwd)")
    return z


class _Trajectory:
    """The forward solution y(s) at any s between the first and the last output time: odeint's values at a
    grid holding the output times (at a hundredth of the call's tolerances), cubic Hermite polynomials
    between them with the slopes f(y, s). The grid starts at 4 points per output interval and is bisected
    where the interpolant misses odeint's value at a midpoint by more than a tenth of the call's
    tolerances."""

    def __init__(self, fn, rhs, y0, t, opts: dict, rtol, atol):
        grid = np.concatenate([np.linspace(a, b, 5)[:-1] for a, b in zip(t[:-1], t[1:])] + [t[-1:]])
        # a component far below atol (Robertson's y2 ~ 1e-6 under atol 1e-8) would be known to atol only,
        # and the adjoint's coefficients (∂f/∂y, 3e7·y2 there) only as well: atol is lowered to rtol times
        # each component's largest size
        rtol = np.broadcast_to(rtol, y0.shape)
        size = np.max(np.abs(_solved(fn, rhs, y0, grid, dict(opts, rtol=rtol, atol=atol))), axis=0)
        atol = np.where(size > 0, np.minimum(atol, rtol * size), atol)
        tight = dict(opts, rtol=np.maximum(rtol / 100.0, np.minimum(rtol, 1e-13)), atol=atol / 100.0)
        for _ in range(60):
            mids = 0.5 * (grid[:-1] + grid[1:])
            fine = np.empty(2 * grid.size - 1)
            fine[0::2], fine[1::2] = grid, mids
            ys = _solved(fn, rhs, y0, fine, tight)
            fs = np.array([rhs(y, s) for y, s in zip(ys, fine)])
            h = (grid[1:] - grid[:-1])[:, None]
            guess = (0.5 * (ys[0:-2:2] + ys[2::2]) + 0.125 * h * (fs[0:-2:2] - fs[2::2]))  # (Hermite at u = 1/2)
            scale = atol + rtol * np.abs(ys[1::2])
            miss = np.max(np.abs(guess - ys[1::2]) / scale, axis=1)
            bad = miss > 0.1
            if not bad.any():
                self.grid, self.ys, self.fs = fine, ys, fs
                break
            grid = np.insert(grid, np.flatnonzero(bad) + 1, mids[bad])
            if grid.size > _MAX_POINTS:
                raise _refused("the forward trajectory was not resolved to the call's tolerances on "
                               f"{_MAX_POINTS} points", "loosen rtol/atol, or use forward mode (jacfwd)")
        else:
            raise _refused("the forward trajectory was not resolved to the call's tolerances",
                           "loosen rtol/atol, or use forward mode (jacfwd)")
        if self.grid[-1] < self.grid[0]:  # (decreasing output times: the grid ascending)
            self.grid, self.ys, self.fs = self.grid[::-1], self.ys[::-1], self.fs[::-1]

    def __call__(self, s: float) -> np.ndarray:
        g = self.grid
        j = int(np.clip(np.searchsorted(g, s, side="right") - 1, 0, g.size - 2))
        h = g[j + 1] - g[j]
        if h == 0.0:
            return self.ys[j].copy()
        u = (s - g[j]) / h
        u2, u3 = u * u, u * u * u
        return ((2 * u3 - 3 * u2 + 1) * self.ys[j] + (u3 - 2 * u2 + u) * h * self.fs[j]
                + (3 * u2 - 2 * u3) * self.ys[j + 1] + (u3 - u2) * h * self.fs[j + 1])


def _swapped(func, tfirst: bool):
    """f as a function of (t, y, *args) returning a flat float array: `pullback_at` holds the first argument
    constant. Its closure holds f alone (its cotangent's one cell, "func")."""
    if tfirst:
        def rhs(t, y, *args):
            return np.asarray(func(t, y, *args), dtype=float).ravel()
    else:
        def rhs(t, y, *args):
            return np.asarray(func(y, t, *args), dtype=float).ravel()
    return rhs


def _shaped_like(v, flat: np.ndarray):
    """The flat cotangent vector in the structure of v (y0 or t: a number, an array, a list or tuple)."""
    if isinstance(v, np.ndarray):
        return flat.reshape(v.shape).astype(float)
    if isinstance(v, (list, tuple)):
        items, i = [], 0
        for x in v:
            k = int(np.size(x))
            items.append(_shaped_like(x, flat[i:i + k]) if isinstance(x, (np.ndarray, list, tuple))
                         else float(flat[i]))
            i += k
        return type(v)(items)
    return float(flat[0])


class _Grew(Exception):
    """The cotangents of f's parameters met a leaf the layout had not: the backward pass again."""


def odeint_adjoint(pullback_at, fn=integrate.odeint):
    """odeint's adjoint, on reverse mode's `pullback_at` (`pullback_full` with its first argument, the time,
    held constant), which `contexts.ad.callbacks` hands it: the continuous adjoint (the module's docstring)."""
    from ..watch import JumpWatch
    from .scipy_integrate import _Layout, _flatten, _is_zero, _tags, _watched

    sig = inspect.signature(fn)
    names = tuple(sig.parameters)

    def odeint_adjoint(dout, out, *pos, **kw):
        bound = sig.bind(*pos, **kw)
        bound.apply_defaults()
        opts = dict(bound.arguments)
        func, y0, t, args = opts.pop("func"), opts.pop("y0"), opts.pop("t"), opts.pop("args")
        args = args if isinstance(args, tuple) else (args,)
        tfirst, full = opts.pop("tfirst"), opts.pop("full_output")
        dy = dout
        if full:
            dy, dinfo = (dout[0], dout[1]) if isinstance(dout, (tuple, list)) else (dout, None)
            if dinfo is not None and not _is_zero(dinfo):
                raise NoDerivative("scipy.integrate.odeint(..., full_output=True): its info dict's "
                                   "diagnostics have no derivative", fix="differentiate the solution only "
                                   "(`odeint(...)[0]`)")
        if _tags((dy, y0, args, t), set()):
            raise _refused("duals in the call (forward over reverse: `hessian`); the adjoint would drop "
                           "their tangents", "take second derivatives by finite differences of `gradient`, "
                           "or use solve_ivp (Python code, differentiated in every mode)")
        cot = dict.fromkeys(names)
        if dy is None or _is_zero(dy):
            return _answer(cot, names, pos, kw)
        t = np.asarray(t, dtype=float)
        y0v = np.asarray(y0, dtype=float).ravel()
        n, m = y0v.size, t.size
        dy = np.asarray(dy, dtype=float).reshape(m, n)
        last = max(k for k in range(m) if np.any(dy[k]))  # (the solution past it is not needed)
        if last == 0:  # (y0's own row only)
            cot["y0"] = _shaped_like(bound.arguments["y0"], dy[0])
            cot["t"] = _shaped_like(bound.arguments["t"], np.zeros(m))
            return _answer(cot, names, pos, kw)
        rtol = np.asarray(_DEFAULT_TOL if opts["rtol"] is None else opts["rtol"], dtype=float)
        atol = np.asarray(_DEFAULT_TOL if opts["atol"] is None else opts["atol"], dtype=float)
        g = _swapped(func, tfirst)

        def plain(y, s):
            return g(s, y, *args)
        try:
            probe = plain(y0v.copy(), t[0])
        except Exception as e:  # (f's closure holding duals: numpy refuses to make them floats)
            if type(e).__name__ != "DualConversionError":
                raise
            probe = None
        if probe is None or _tags(probe, set()):
            raise _refused("duals in the right side's values (forward over reverse: `hessian`); the adjoint "
                           "would drop their tangents", "take second derivatives by finite differences of "
                           "`gradient`, or use solve_ivp (Python code, differentiated in every mode)")
        forward = {k: opts[k] for k in ("Dfun", "col_deriv", "ml", "mu", "tcrit", "h0", "hmax", "hmin", "ixpr",
                                        "mxstep", "mxhnil", "mxordn", "mxords")}
        path = _Trajectory(fn, plain, y0v, t[:last + 1], forward, rtol, atol)
        ys = np.array([path(s) for s in t[:last + 1]])
        fs = np.array([plain(y, s) for y, s in zip(ys, t[:last + 1])])

        layout = _Layout()
        watch = JumpWatch()  # (the branches on differentiated values f meets, by time: `_switching`)

        def pullback(s):
            return _watched(watch, s, lambda u: pullback_at(g, u, path(u), *args))[1]

        def vjp(s, lam):
            back = pullback(s)
            dg, da = back(lam)
            dfunc = dg.get("func") if dg is not None else None
            leaves: dict = {}
            _flatten((dfunc, tuple(da[2:])), (), leaves)
            if any(k[0] == "t" for p in leaves for k in p):
                raise _refused("duals in the cotangents of f's parameters (forward over reverse: `hessian`)",
                               "take second derivatives by finite differences of `gradient`")
            layout.take(leaves)
            if layout.grew:
                raise _Grew
            dyv = np.zeros(n) if da[1] is None else np.asarray(da[1], dtype=float).ravel()
            return dyv, layout.vector(leaves)

        def backward():
            layout.grew = False
            p = layout.size()

            def rhs(z, s):
                dyv, dth = vjp(s, z[:n])
                return -np.concatenate([dyv, dth])

            def jac(z, s):
                back = pullback(s)
                out = np.zeros((n + p, n + p))
                for i in range(n):
                    e = np.zeros(n)
                    e[i] = 1.0
                    dg, da = back(e)
                    dfunc = dg.get("func") if dg is not None else None
                    leaves: dict = {}
                    _flatten((dfunc, tuple(da[2:])), (), leaves)
                    layout.take(leaves)
                    if layout.grew:
                        raise _Grew
                    out[:n, i] = 0.0 if da[1] is None else -np.asarray(da[1], dtype=float).ravel()
                    out[n:, i] = -layout.vector(leaves)
                return out
            back_opts = {"rtol": float(np.min(rtol)), "atol": float(np.min(atol)),
                         "mxstep": max(int(opts["mxstep"] or 0), 5000), "Dfun": jac}
            mu, dts = np.zeros(p), np.zeros(m)
            lam = dy[last].copy()
            for k in range(last, 0, -1):
                dts[k] = dy[k] @ fs[k]
                if t[k] != t[k - 1] and np.any(lam):
                    z = _solved(fn, rhs, np.concatenate([lam, mu]), np.array([t[k], t[k - 1]]), back_opts)[-1]
                    lam, mu = z[:n], z[n:]
                if k == 1:
                    dts[0] = -(lam @ fs[0])
                lam = lam + dy[k - 1]
            return lam, mu, dts

        try:
            vjp(t[-1], np.ones(n))  # (the layout of f's parameters' cotangents)
        except _Grew:
            pass
        for _ in range(4):
            try:
                lam, mu, dts = backward()
                break
            except _Grew:
                continue
        else:
            raise _refused("the cotangents of f's parameters change structure along the solution",
                           "pass the differentiated values as `args`")
        switch = next(iter(watch.switches()), None)
        if switch is not None:
            raise _refused(
                f"the right side's branch at {switch[1]} (a comparison, a step or a kink: floor, sign, abs, max) "
                "on the state or the differentiated values switches between t = "
                f"{switch[2]:.17g} and {switch[3]:.17g}: a jump of f there moves with them, and its term (a "
                "jump of the sensitivities, the saltation) is in no adjoint of f's derivative",
                "write f without the branch (a smooth switch: 0.5 * (1 + tanh(k * (y - a)))), or split the "
                "integration at a switching time that does not move with the differentiated values")
        params = layout.value(mu) if layout.leaves else None
        dfunc, dargs = params if params is not None else (None, None)
        cot["func"] = dfunc
        cot["args"] = dargs if dargs is not None else None
        cot["y0"] = _shaped_like(bound.arguments["y0"], lam)
        cot["t"] = _shaped_like(bound.arguments["t"], dts)
        return _answer(cot, names, pos, kw)
    return odeint_adjoint


def _answer(cot: dict, names: tuple, pos: tuple, kw: dict):
    """The cotangents by position, and a dict of those given by keyword (None for Dfun, the tolerances and
    the other options: the solution of the ODE does not depend on them)."""
    grads = tuple(cot[name] for name in names[:len(pos)])
    return grads + ({k: cot.get(k) for k in kw},) if kw else grads
