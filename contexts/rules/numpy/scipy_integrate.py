"""Rules for `scipy.integrate.quad` (and `quad_vec`), by the Leibniz rule, the integrand differentiated
by overdub itself:

    d/dθ ∫_{a(θ)}^{b(θ)} f(t, θ) dt = ∫_a^b ∂f/∂θ(t, θ) dt + f(b, θ)·b' − f(a, θ)·a'

where θ are whatever f depends on: its `args=(...)` and the values its closure (or bound object, or
partial) holds. The rule differentiates the mathematical integral, not quadpack's approximation of it:
the derivative is itself an integral, computed to the call's own `epsabs`/`epsrel`.

Rules sit below the modes, so the two that need a mode are made from its functions and registered by it
(`contexts.ad.callbacks`, `contexts.forward.callbacks`):

- Reverse mode (`quad_adjoint(pullback_full)`): the pullback integrates, over t, the cotangent-weighted
  gradient of `f(t, *args)` with respect to f's closure and args (one reverse pass of f per quadrature
  node, all the gradient's entries as one vector integral with `quad_vec`; with `weight=`, one `quad` per
  entry with the same weight), plus the boundary terms at finite limits.
- Forward mode (`quad_duals(run_inside, dual_free)`, quad's form on duals, which forward mode calls in
  place of quad whenever its arguments may hold duals, closures included): the integrand is run on duals
  and its primal and tangent parts integrated; a perturbed limit adds its boundary term. Duals of several
  derivative calls (forward over forward, forward over reverse: `hessian`) are taken apart and integrated
  alike.

Refused, never a number: the derivative of the error estimate (quad's second output) and of the float
diagnostics of `full_output`'s infodict (a cotangent for them raises `NoDerivative`; in forward mode their
tangent is a `Refused` that raises on any use), limits that move when `weight=` is given, a moving limit
where the integrand is not finite, and `wvar` (the weight's parameters). Integrals over infinite limits
need the integrand's derivative to be integrable too (as they must for the derivative to exist).

`dblquad`, `tplquad` and `nquad` call quad on integrands that call quad: they are differentiated through
these rules. `quad_vec` has the same rules (array-valued integrands; its `full_output` info is refused on
perturbed values in forward mode). `fixed_quad`, `simpson` and `trapezoid` are numpy code, differentiated
as code.

An integrand with a jump whose position depends on θ (`1.0 if t < a else 0.0`, a distribution's support
edge inside [a, b]) is refused (`_moving_jump`): the integral of its derivative misses the jump's term
(split the integral at the jump, `quad(f, 0, a) + quad(f, a, 1)`: the limits' terms then carry it). The
integrand's value at a moving limit is its limit from inside the interval (`_inside`).
"""

from __future__ import annotations

import functools
import inspect
import numbers
import types

import numpy as np
from scipy.integrate import quad, quad_vec

import overdub
from overdub.errors import OverdubError

from ..cotangents import Refused, Tangent
from ..registry import NoClosedForm
from ..watch import JUMP_WATCH, JumpWatch
from ._util import unsupported

__all__ = ["quad_adjoint", "quad_duals"]

def _spec(fn) -> tuple:
    """(the integrand's parameter name, the names that may be given by position, the defaults)."""
    params = inspect.signature(fn).parameters
    names = tuple(k for k, p in params.items() if p.kind is p.POSITIONAL_OR_KEYWORD)
    defaults = {k: p.default for k, p in params.items() if p.default is not inspect.Parameter.empty}
    return names[0], names, {"weight": None, "wvar": None, **defaults}


_SPECS = {quad: _spec(quad), quad_vec: _spec(quad_vec)}  # quad(func, a, b, args, ...); quad_vec(f, a, b, ...)

_ABSERR = NoClosedForm("scipy.integrate.quad", "abserr (its second output, the error estimate)",
                       fix="differentiate the integral only (`quad(...)[0]`); the error estimate has no "
                           "derivative here")
_INFO = NoClosedForm("scipy.integrate.quad", "infodict (the diagnostics of full_output)",
                     fix="differentiate the integral only (`quad(...)[0]`)")
_WVAR = NoClosedForm("scipy.integrate.quad", "wvar (the weight's parameters)",
                     fix="write the weight into the integrand and drop weight= (cos(w*t)*f(t))")
_WLIMIT = NoClosedForm("scipy.integrate.quad", "a or b (the limits, with weight= given)",
                       fix="keep the limits constant, or write the weight into the integrand and drop weight=")
_EDGE = NoClosedForm("scipy.integrate.quad", "a or b (a limit where the integrand is not finite)",
                     fix="keep that limit constant (the integrand is singular there)")


def _options(fn, pos: tuple, kw: dict) -> dict:
    """fn's arguments by name, defaults filled in; the integrand also as "func"."""
    fname, names, defaults = _SPECS[fn]
    if len(pos) > len(names):
        raise TypeError(f"{fn.__name__}() takes at most {len(names)} positional arguments ({len(pos)} given)")
    opts = dict(defaults)
    opts.update(zip(names, pos))
    opts.update(kw)
    opts["func"] = opts[fname]
    if not isinstance(opts["args"], tuple):
        opts["args"] = (opts["args"],)  # (quad's own convenience)
    return opts


# -- a compiled integrand ------------------------------------------------------------------------------
# quad also takes a `scipy.LowLevelCallable` (scipy.stats' geninvgauss integrates its pdf so): C code, not
# run on duals, constant in every value differentiated but the limits, whose terms need its values there.
# It is called through ctypes at those points, by the four signatures quad accepts.

_SIGNATURES = {"double (double)": 0, "double (double, void *)": 1, "double (int, double *)": 2,
               "double (int, double *, void *)": 3,
               "double (int, double)": 2}  # (quadpack's legacy ctypes signature: `argtypes = (c_int, c_double)` on a
# function of (n, double *), as numba's cfunc users write it for quad)


def _capsule(capsule) -> tuple:
    """(the function's address, its user data's) that scipy's capsule of a LowLevelCallable holds."""
    import ctypes
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype, api.PyCapsule_GetName.argtypes = ctypes.c_char_p, [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = api.PyCapsule_GetContext.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_GetContext.argtypes = [ctypes.py_object]
    return api.PyCapsule_GetPointer(capsule, api.PyCapsule_GetName(capsule)), api.PyCapsule_GetContext(capsule)


def _is_compiled(func) -> bool:
    """func is C code quad calls by address: a LowLevelCallable, or a ctypes function (quad makes one of it:
    numba's `@cfunc(...).ctypes`, pyRVT's peak factors; called with forward mode's duals it raised ctypes'
    ArgumentError, a crash)."""
    import ctypes

    from scipy import LowLevelCallable
    return isinstance(func, (LowLevelCallable, ctypes._CFuncPtr))


def _low_level(func):
    """A ctypes integrand as the LowLevelCallable quad makes of it; a LowLevelCallable as it is."""
    import ctypes

    from scipy import LowLevelCallable
    if not isinstance(func, ctypes._CFuncPtr):
        return func
    try:
        return LowLevelCallable(func)
    except (TypeError, ValueError) as e:
        raise unsupported("scipy.integrate.quad", f"a ctypes integrand scipy cannot call ({e})",
                          "integrate a Python function instead") from None


@overdub.opaque  # (C data: run as it is, never under a context)
def _compiled(func, args: tuple):
    """The LowLevelCallable func as a Python function of t (quad's args given to it as numbers)."""
    import ctypes
    from scipy._lib import _ccallback_c
    capsule = tuple.__getitem__(func, 0)  # (what quad itself reads: scipy's capsule of the function)
    signature = _ccallback_c.get_capsule_signature(capsule)
    kind = _SIGNATURES.get(signature)
    if kind is None:
        raise unsupported("scipy.integrate.quad", f"a LowLevelCallable of signature {signature!r} with "
                          "perturbed limits", "keep the limits constant")
    address, data = _capsule(capsule)
    data = ctypes.c_void_p(data)
    double, vector = ctypes.c_double, ctypes.POINTER(ctypes.c_double)
    head = [[double], [double, ctypes.c_void_p], [ctypes.c_int, vector], [ctypes.c_int, vector, ctypes.c_void_p]]
    c = ctypes.CFUNCTYPE(double, *head[kind])(address)
    return functools.partial(_call_compiled, c, kind, data, [float(_primal_tree(v)) for v in args])


@overdub.opaque
def _call_compiled(c, kind: int, data, rest: list, t, *_):
    import ctypes
    t = float(_primal_tree(t))
    if kind < 2:
        return c(t, data) if kind else c(t)
    xx = (ctypes.c_double * (1 + len(rest)))(t, *rest)
    return c(1 + len(rest), xx, data) if kind == 3 else c(1 + len(rest), xx)


_COMPILED_ARGS = NoClosedForm("scipy.integrate.quad", "args (given to a compiled integrand, a LowLevelCallable: "
                              "C code, not differentiated)",
                              fix="integrate a Python function of them instead")


def _check(opts: dict) -> None:
    if opts["weight"] is not None and opts["weight"] not in ("cos", "sin", "alg", "alg-loga", "alg-logb",
                                                             "alg-log", "cauchy"):
        raise unsupported("scipy.integrate.quad", f"weight={opts['weight']!r}", "use one of quad's weights")


# -- integrating structured values -------------------------------------------------------------------
# A value is flattened to its numeric leaves, each named by its path: containers (a closure's Tangent, a
# dict, a tuple or list) by key, a dual's tangent by ("t", tag) (its primal at the dual's own path, so a
# dual and a plain number met at the same place agree). The leaves are integrated as one real vector.

def _is_dual(v) -> bool:
    t = type(v)
    return t.__name__ == "Dual" and t.__module__ == "contexts.forward.dual"


def _primal_tree(v):
    """v's innermost primal (v itself when it is no dual)."""
    while _is_dual(v):
        v = v.primal
    return v


def _flatten(v, path: tuple, out: dict, inside: frozenset = frozenset()) -> None:
    t = type(v)
    if v is None:
        return
    if isinstance(v, (dict, tuple, list)):
        if id(v) in inside:  # (an object holding a closure over itself: actuarialmath's Makeham, RecursionError)
            raise unsupported("scipy.integrate.quad", "an integrand whose derivative holds itself (an object "
                              "holding a closure over the object)", "pass the differentiated values to the "
                              "integrand as `args`, or use forward mode (jacfwd, derivative)")
        inside = inside | {id(v)}
    if _is_dual(v):
        _flatten(v.primal, path, out, inside)
        _flatten(v.tangent, path + (("t", v.tag, t),), out, inside)
    elif isinstance(v, dict):  # (a closure's Tangent, a dict's MapBox too)
        for k, x in v.items():
            _flatten(x, path + (("d", t, k),), out, inside)
    elif isinstance(v, (tuple, list)):
        for i, x in enumerate(v):
            _flatten(x, path + (("s", t, len(v), i),), out, inside)
    elif t is Refused:
        v.refuse()
    elif isinstance(v, (numbers.Number, np.ndarray, np.generic)) and not isinstance(v, bool):
        a = np.asarray(v)
        if a.dtype.kind not in "biufc":
            raise unsupported("scipy.integrate.quad", f"an integrand or derivative of dtype {a.dtype}",
                              "return numbers or float arrays from the integrand")
        out[path] = (a, isinstance(v, np.ndarray))
    else:
        raise unsupported("scipy.integrate.quad", f"an integrand whose derivative holds a {t.__name__}",
                          "make the integrand depend on numbers or arrays held in its closure or args")


class _Layout:
    """Where each leaf sits in the real vector: path -> (shape, complex, array)."""

    def __init__(self):
        self.leaves: dict = {}
        self.grew = False

    def take(self, leaves: dict) -> None:
        for path, (a, is_array) in leaves.items():
            old = self.leaves.get(path)
            new = (a.shape, a.dtype.kind == "c", is_array)
            if old is None:
                self.leaves[path], self.grew = new, True
                continue
            shape = np.broadcast_shapes(old[0], a.shape)
            merged = (shape, old[1] or new[1], old[2] or is_array)
            if merged != old:
                self.leaves[path], self.grew = merged, True

    def size(self) -> int:
        return sum(int(np.prod(s)) * (2 if c else 1) for s, c, _ in self.leaves.values())

    def vector(self, leaves: dict) -> np.ndarray:
        parts = []
        for path, (shape, cplx, _) in self.leaves.items():
            a = leaves.get(path)
            a = np.zeros(shape) if a is None else np.broadcast_to(a[0], shape)
            parts.append(np.real(a).ravel().astype(float))
            if cplx:
                parts.append(np.imag(a).ravel().astype(float))
        return np.concatenate(parts) if parts else np.zeros(0)

    def value(self, vec: np.ndarray):
        items, i = [], 0
        for path, (shape, cplx, is_array) in self.leaves.items():
            n = int(np.prod(shape))
            a = vec[i:i + n].reshape(shape)
            i += n
            if cplx:
                a = a + 1j * vec[i:i + n].reshape(shape)
                i += n
            items.append((path, a if is_array else a[()].item()))
        return _build(items)


def _build(items: list):
    """The value the (path, leaf) items flattened from (None for no items)."""
    if not items:
        return None
    plain = [(p, v) for p, v in items if not p or p[0][0] != "t"]
    tangents: dict = {}
    for p, v in items:
        if p and p[0][0] == "t":
            tangents.setdefault(p[0][1:], []).append((p[1:], v))
    if any(not p for p, _ in plain):
        if len(plain) > 1:
            raise unsupported("scipy.integrate.quad", "an integrand whose values change structure with t",
                              "return values of one structure at every t")
        v = plain[0][1]
    else:
        v = _container(plain)
    for tag, dual in sorted(tangents, key=lambda g: g[0].order):
        v = dual(0.0 if v is None else v, _build(tangents[tag, dual]), tag)
    return v


def _container(items: list):
    if not items:
        return None
    kind = items[0][0][0][0]
    groups: dict = {}
    for p, v in items:
        groups.setdefault(p[0], []).append((p[1:], v))
    if kind == "d":
        typ = items[0][0][0][1]
        return typ({k[2]: _build(g) for k, g in groups.items()})
    _, typ, n, _ = next(iter(groups))
    seq = [None] * n
    for k, g in groups.items():
        seq[k[3]] = _build(g)
    return typ(*seq) if hasattr(typ, "_fields") else typ(seq)


def _integrate(g, a, b, opts: dict, probe):
    """∫_a^b g(t) dt for g returning a structure of numbers, arrays and duals (`probe`: g at one point,
    its structure's first sample), to the call's tolerances. None when g has no numeric leaves."""
    layout = _Layout()
    first: dict = {}
    _flatten(probe, (), first)
    layout.take(first)
    for _ in range(4):  # a leaf seen first during the integration: again with it
        layout.grew = False
        found = bool(layout.leaves)  # (none at the probe: a pass over the nodes to find them, `a * t if t < c
                                     # else 0.0` sampled past c; returning None there was a zero gradient)

        def h(t):
            leaves: dict = {}
            _flatten(g(t), (), leaves)
            layout.take(leaves)
            return layout.vector(leaves) if found and not layout.grew else np.zeros(size)
        size = layout.size() if found else 1
        if opts["weight"] is None:
            vec = quad_vec(h, a, b, epsabs=opts["epsabs"], epsrel=opts["epsrel"], points=opts["points"])[0]
            if found and not layout.grew and not np.all(np.isfinite(vec)):
                vec = _by_entries(h, a, b, size, opts)  # (an integrable singularity at a limit)
        else:
            vec = _weighted(h, a, b, size, opts)
        if not found and not layout.leaves:
            return None
        if found and not layout.grew:
            return layout.value(np.asarray(vec, dtype=float))
    raise unsupported("scipy.integrate.quad", "an integrand whose values change structure with t",
                      "return values of one structure at every t")


def _weighted(h, a, b, size: int, opts: dict) -> np.ndarray:
    """One quad per entry of h's vector, with the call's weight (h memoised: the entries share nodes)."""
    seen: dict = {}

    def entry(t, i):
        if t not in seen:
            seen[t] = h(t)
        return seen[t][i]
    keep = {k: opts[k] for k in ("epsabs", "epsrel", "limit", "points", "weight", "wvar", "wopts", "maxp1",
                                 "limlst")}
    return np.array([quad(entry, a, b, args=(i,), **keep)[0] for i in range(size)])


_DIVERGES = NoClosedForm("scipy.integrate.quad", "the integrand's values (the integral of their derivative "
                         "does not converge: a singularity at a limit or inside)",
                         fix="split the integral at the singularity and keep the part near it constant, or "
                             "change variables to remove it (t = a + u**2 for 1/sqrt(t - a))")


def _by_entries(h, a, b, size: int, opts: dict) -> np.ndarray:
    """quad_vec's integral again by QUADPACK's quad, entry by entry: quad_vec's nodes reach a limit whose
    integrand is infinite as its intervals shrink (`1/sqrt(t - a)` at a: inf), QUADPACK's extrapolation
    converges. An entry QUADPACK reports not converged (a derivative that is not integrable, where the
    Leibniz rule fails) is refused, never returned."""
    seen: dict = {}

    def entry(t, i):
        if t not in seen:
            seen[t] = h(t)
        return seen[t][i]
    out = np.empty(size)
    with np.errstate(all="ignore"):
        for i in range(size):
            r = quad(entry, a, b, args=(i,), epsabs=opts["epsabs"], epsrel=opts["epsrel"], limit=200,
                     points=opts["points"], full_output=1)
            if len(r) > 3 or not np.isfinite(r[0]):
                raise _DIVERGES.error()
            out[i] = r[0]
    return out


def _inner_point(a, b) -> float:
    """A point inside [a, b] (which may be infinite) where the integrand can be sampled."""
    lo, hi = (a, b) if a <= b else (b, a)
    if np.isfinite(lo) and np.isfinite(hi):
        return lo + 0.5 * (hi - lo)
    if np.isfinite(lo):
        return lo + 1.0
    if np.isfinite(hi):
        return hi - 1.0
    return 0.0


def _all_finite(v) -> bool:
    leaves: dict = {}
    _flatten(v, (), leaves)
    return all(np.all(np.isfinite(a)) for a, _ in leaves.values())


def _at_the_limit(g, x) -> bool:
    """Is the integrand g infinite at the limit x itself? A tie there of a branch (`t < a` at a limit a,
    under a derivative of a derivative: SpecialPoint) says nothing of it: no."""
    try:
        return _any_infinite(g(x))
    except OverdubError as e:
        if type(e).__name__ != "SpecialPoint":
            raise
        return False


def _any_infinite(v) -> bool:
    """Is the integrand infinite at a limit (a singular end, 1/sqrt(t) at 0)? A NaN there (0·∞ of a
    density outside its support) is no verdict: its value from inside the interval decides."""
    leaves: dict = {}
    _flatten(v, (), leaves)
    return any(np.any(np.isinf(a)) for a, _ in leaves.values())


def _is_zero(v) -> bool:
    leaves: dict = {}
    try:
        _flatten(v, (), leaves)
    except Exception:
        return False
    return all(not np.any(a) for a, _ in leaves.values())


# -- reverse mode -----------------------------------------------------------------------------------

def quad_adjoint(pullback_at, fn=quad):
    """quad's adjoint, on reverse mode's `pullback_at` (`pullback_full` with t held constant, which
    `contexts.ad` hands it: rules sit below the modes). The cotangents of the integrand (its closure's, a
    Tangent) and of `args` are the integral of the integrand's pullback over t; of the limits, the
    boundary terms. A jump of the integrand that may move with them (`_moving_jump`) makes them `Refused`
    (they are wrong by the jump's term; a limit's are not)."""
    fname, names, _ = _SPECS[fn]

    def quad_adjoint(dout, out, *pos, **kw):
        opts = _options(fn, pos, kw)
        _check(opts)
        func, a, b, args = opts["func"], opts["a"], opts["b"], opts["args"]
        dy, rest = (dout[0], dout[1:]) if isinstance(dout, (tuple, list)) else (dout, ())
        if rest and rest[0] is not None and not _is_zero(rest[0]):
            raise _ABSERR.error()
        if any(r is not None and not _is_zero(r) for r in rest[1:]):
            raise _INFO.error()
        cot = dict.fromkeys(names + ("args", "wvar"))
        compiled = _compiled(_low_level(func), args) if _is_compiled(func) else None
        if compiled is not None and dy is not None and not _is_zero(dy):
            cot["a"], cot["b"] = _edges(compiled, a, b, args, dy, opts)
            cot["args"] = _refused_of(args, _COMPILED_ARGS) if args else None
        elif dy is not None and not _is_zero(dy):
            watch = JumpWatch()

            def cell_and_arg_cotangents(t):
                _, back = _watched(watch, t, lambda u: pullback_at(func, u, *args))
                dfn, dargs = back(dy)
                return dfn, tuple(dargs[1:])
            whole = _integral(cell_and_arg_cotangents, a, b, opts)
            cot[fname], cot["args"] = whole if whole is not None else (None, None)
            def value_at(t):
                return _watched(watch, t, lambda u: pullback_at(func, u, *args))[0]
            _sampled(watch, value_at, a, b)
            jump = _moving_jump(watch, value_at, lambda depth, top: True, a, b)
            if jump is not None:  # (the integral of the derivative may be None: `1.0 if t < a else 0.0`)
                cot[fname], cot["args"] = _refused_of(func, jump), _refused_of(args, jump)
            cot["a"], cot["b"] = _edges(func, a, b, args, dy, opts)
            if opts["weight"] is not None and opts["wvar"] is not None:
                cot["wvar"] = _WVAR.cotangent()
        grads = tuple(cot[name] for name in names[:len(pos)])
        named = {k: cot[k] for k in kw if cot.get(k) is not None}
        return grads + (named,) if named else grads
    return quad_adjoint


def _inside(x, other):
    """x moved a hair (2⁻³⁶ of the interval) towards the other limit: the integrand's value at a limit is
    its limit from inside the interval, which a test at the limit itself need not give (`exp(t) if t < b
    else 0.0` is 0 at b; `(l + 1) - l >= 1` fails at some l by rounding), as the integral's derivative
    takes it."""
    xv, ov = float(_primal_tree(x)), float(_primal_tree(other))
    step = (abs(ov - xv) if np.isfinite(ov) else max(abs(xv), 1.0)) * 2.0 ** -36
    return x + step if ov > xv else x - step


def _edges(func, a, b, args, dy, opts) -> tuple:
    """The cotangents of the limits: −dy·f(a⁺), dy·f(b⁻) (none at an infinite limit; refused where f is
    not finite at the limit itself)."""
    def term(x, sign):
        if not np.isfinite(_primal_tree(x)):
            return None
        if opts["weight"] is not None:
            return _WLIMIT.cotangent()
        try:  # (a singular end, 1/sqrt(t) at 0, is refused only if that limit is differentiated)
            with np.errstate(all="ignore"):
                if _any_infinite(func(x, *args)):
                    return _EDGE.cotangent()
                fx = func(_inside(x, b if sign < 0 else a), *args)
        except (ArithmeticError, ValueError):
            return _EDGE.cotangent()
        if not _all_finite(fx):
            return _EDGE.cotangent()
        cplx = np.iscomplexobj(_primal_tree(fx)) or np.iscomplexobj(_primal_tree(dy))
        term = sign * dy * (np.conj(fx) if cplx else fx)  # (a real limit: the real part, Zygote's convention)
        if np.ndim(_primal_tree(term)):
            term = np.sum(term)  # quad_vec: the limit moves every entry
        return np.real(term) if cplx else term
    return term(a, -1.0), term(b, 1.0)


# -- forward mode: quad on duals ------------------------------------------------------------------------

def quad_duals(run_inside, dual_free, fn=quad):
    """quad's form on duals, on forward mode's `run_inside(fn, args, kwargs)` (fn run on duals) and
    `dual_free(v)`, which `contexts.forward` hands it: quad(*pos, **kw) where the integrand, its closure,
    args or the limits may hold duals is the integral of the integrand's duals (their primal and tangent
    parts), the primal by quad itself."""
    fname, names, _ = _SPECS[fn]

    def quad_duals(*pos, **kw):
        opts = _options(fn, pos, kw)
        func, a, b, args = opts["func"], opts["a"], opts["b"], opts["args"]
        if dual_free((func, a, b, args, opts["wvar"])):
            return fn(*pos, **kw)
        _check(opts)
        if opts.get("points") is not None:  # (break points steer the nodes, not the value: `points=[s]`)
            opts["points"] = [_primal_tree(p) for p in opts["points"]]
        if fn is quad_vec and opts["full_output"]:
            raise unsupported("scipy.integrate.quad_vec", "full_output=True on perturbed values (its info's "
                              "arrays would have no derivative)", "drop full_output")
        if opts["weight"] is not None and not dual_free(opts["wvar"]):
            raise _WVAR.error()

        watch = JumpWatch()
        compiled = None
        if _is_compiled(func):
            if not dual_free(args):
                raise _COMPILED_ARGS.error()
            compiled = _compiled(_low_level(func), args)

        def g(t):
            if compiled is not None:
                return compiled(t)
            return _watched(watch, t, lambda u: run_inside(func, (u, *args), {}))
        plain = {**{k: opts[k] for k in names}, fname: lambda t: _primal_tree(g(t)), "a": _primal_tree(a),
                 "b": _primal_tree(b)}
        plain.pop("args", None)
        result = fn(**plain)
        y = _with_primal(_integral(g, a, b, opts), result[0])
        _sampled(watch, g, a, b)
        order = len(_tags(y, set()))  # (the derivative calls': a leaf as deep in tangents as that is no term)
        jump = _moving_jump(watch, g, lambda depth, top: depth < max(top, order, 1), a, b, by_tangents=True)
        if jump is not None:
            raise jump.error()
        if not _is_dual(y):
            return (y,) + tuple(result[1:])
        tag, dual = y.tag, type(y)
        err = dual(result[1], Refused(_ABSERR), tag)
        if len(result) > 2 and isinstance(result[2], dict):  # its float diagnostics refuse a derivative too
            info = {k: dual(v, Refused(_INFO), tag) if np.asarray(v).dtype.kind in "fc" else v
                    for k, v in result[2].items()}
            return (y, err, info) + tuple(result[3:])
        return (y, err) + tuple(result[2:])
    return quad_duals


# -- jumps that move with the differentiated values ---------------------------------------------------
# The Leibniz rule holds for an integrand continuous in t, or whose jumps stay put; a jump at a point that
# moves with θ (`1.0 if t < a else 0.0`, a distribution's support edge at `loc` inside [a, b]) adds
# (f(t*⁻) − f(t*⁺))·dt*/dθ, which the integral of ∂f/∂θ misses. Such a jump is a branch on a value that
# depends on θ and on t: every comparison of a differentiated value (the modes' equality guards) is noted
# at each node (`lowered.runtime.JumpWatch`), and an outcome that changes between two nodes is bisected to
# its boundary, where the integrand's values on either side are compared. A jump there is refused (forward
# mode) or makes the cotangents of the integrand's closure and args `Refused` (reverse mode, whose
# activity cannot tell which of them the boundary moves with). Steps and kinks of C functions (floor,
# sign, heaviside, mod, abs, max, maximum, clip: `rules.watch.PIECEWISE`) are noted as their branch taken.
# A kink (`max(t - a, 0)`) is continuous: the first derivative is right; its second differentiates a jump
# of the first, checked too. Not seen: `%` and `//` as operators on numbers in reverse mode (their
# functions, np.mod and np.floor_divide, are), and a step inside a C function of no rule.

_SWITCHES = 16  # boundaries bisected at most (beyond: refused, as unverified)


class _MovingJump:
    """Why a derivative of quad is refused: a jump of the integrand at a boundary that moves."""

    function = "scipy.integrate.quad"

    def __init__(self, line: str, t: float, unverified: bool = False):
        self.line, self.t, self.unverified = line, t, unverified
        self.argument = "the integrand's closure and args (a jump that moves with them)"

    def error(self):
        from ..registry import NoDerivative
        what = ("more branches switching between quad's nodes than can be checked"
                if self.unverified else f"a jump at t = {self.t:.17g}")
        return NoDerivative(
            f"scipy.integrate.quad's integrand has {what}, made by the branch at {self.line} (a comparison, a "
            "step or a kink: floor, sign, abs, max), which depends on t and on the values differentiated: the "
            "jump moves with them, and its term (the jump times its speed) is not in the integral of the "
            "integrand's derivative (a kink's jump is its derivative's, which a second derivative meets)",
            fix="split the integral at the jump, `quad(f, a, c) + quad(f, c, b)` with c the boundary (its "
                "limit terms then carry the jump); or, if the boundary does not move with the values you "
                "differentiate, use forward mode (`derivative`, `jacfwd`), which tells the values apart")


def _watched(watch, t, run):
    """run(t) (the integrand at t) with its orderings noted by watch. A node where a compared value ties
    with one it moves against (`SpecialPoint`: t == a where the branch at a is met) is run a hair (2⁻⁴⁰
    relative) further instead: a point of measure zero in the integral, where the branch taken is no
    derivative's business (the boundary itself is `_moving_jump`'s); a tie of values that do not depend on
    t (`a == 0`) stays a tie there, and refused."""
    token = JUMP_WATCH.set(watch)
    outer = watch.t
    try:
        watch.t = float(_primal_tree(t))
        try:
            return run(t)
        except OverdubError as e:
            if type(e).__name__ != "SpecialPoint":
                raise
            moved = watch.t + max(abs(watch.t), 1.0) * 2.0 ** -40
            watch.t, watch.tied = moved, True
            return run(_primal_tree(t) * 0.0 + moved if not _is_dual(t) else t + (moved - watch.t))
    finally:
        watch.t = outer
        JUMP_WATCH.reset(token)


def _sampled(watch, value_at, a, b) -> None:
    """The integrand run at 31 more points of [a, b] when it compared differentiated values but few nodes
    were seen (its derivative's integral had nothing to integrate: `1.0 if t < a else 0.0`)."""
    if not watch.sites or len({t for entry in watch.sites.values() for t in entry[1]}) > 30:
        return
    a, b = float(_primal_tree(a)), float(_primal_tree(b))
    lo, hi = min(a, b), max(a, b)
    u = np.linspace(0.0, 1.0, 33)[1:-1]
    if np.isfinite(lo) and np.isfinite(hi):
        points = lo + (hi - lo) * u
    elif np.isfinite(lo):
        points = lo + u / (1.0 - u)
    elif np.isfinite(hi):
        points = hi - u / (1.0 - u)
    else:
        points = np.tan(np.pi * (u - 0.5))
    for t in points:
        value_at(float(t))


def _moving_jump(watch, value_at, kept, a, b, by_tangents=False):
    """A `_MovingJump` where an ordering the watch saw switch between two nodes bounds a jump of the
    integrand inside (a, b) (value_at(t): its value, run watched; `kept(depth, top)`: which of its leaves
    must be continuous, by how many tangents deep they sit of the deepest's), or None. A jump at a limit
    itself is the limit's term's business (the integrand from inside: `_inside`)."""
    ends = [e for e in (float(_primal_tree(a)), float(_primal_tree(b))) if np.isfinite(e)]
    near = (abs(ends[1] - ends[0]) if len(ends) == 2 else 1.0) * 2.0 ** -30
    switches = watch.switches()
    if not switches:
        return None
    if len(switches) > _SWITCHES:
        return _MovingJump(switches[0][1], switches[0][2], unverified=True)
    for key, line, lo, hi in switches:
        seen = watch.sites[key][1]
        first = seen[lo]
        for _ in range(64):  # to neighbouring floats
            mid = lo + 0.5 * (hi - lo)
            if mid <= lo or mid >= hi:
                break
            seen.pop(mid, None)
            watch.tied = False
            value_at(mid)  # (its branch noted in seen)
            if watch.tied:  # (mid is the boundary itself: its neighbours are either side)
                lo, hi = float(np.nextafter(mid, -np.inf)), float(np.nextafter(mid, np.inf))
                break
            if seen.get(mid) == first:
                lo = mid
            else:
                hi = mid
        if any(abs(lo - e) <= near or abs(hi - e) <= near for e in ends):
            continue  # (the boundary is a limit)
        # either side a few floats out (the bracket's ends may be the tie itself, on one side or the other as
        # the comparison is written), and 10⁻⁷ out (a continuous integrand's gap shrinks with the bracket)
        step = 4 * max(np.spacing(abs(lo)), np.spacing(abs(hi)))
        v_lo, v_hi = value_at(lo - step), value_at(hi + step)
        if by_tangents and not watch.moves(key, lo - step, hi + step):
            continue  # (forward mode: the compared values do not move there, a jump that stays put)
        wide = max(abs(lo), 1.0) * 1e-7
        u_lo, u_hi = value_at(lo - wide), value_at(hi + wide)
        if _jumps((v_lo, v_hi), (u_lo, u_hi), kept):
            return _MovingJump(line, lo)
    return None


def _jumps(near: tuple, far: tuple, kept) -> bool:
    """Is the gap between two values of the integrand either side of a boundary, a few floats apart
    (near), more than rounding and more than a thousandth of how much it changes over 10⁻⁷ on either side
    (near to far), in some leaf `kept` names? A continuous integrand's gap is its change over those few
    floats (10⁻⁹ of that); a jump's stays what it is, however close."""
    leaves = []
    for v in near + far:
        out: dict = {}
        try:
            _flatten(v, (), out)
        except Exception:
            return True
        leaves.append(out)
    paths = {p: None for out in leaves for p in out}  # (a leaf missing on one side is a zero there)
    depth = {p: sum(1 for k in p if k[0] == "t") for p in paths}
    top = max(depth.values(), default=0)
    for p in paths:
        if not kept(depth[p], top):
            continue
        a, b, c, d = (np.asarray(out[p][0] if p in out else 0.0, dtype=complex) for out in leaves)
        try:
            a, b, c, d = np.broadcast_arrays(a, b, c, d)
        except ValueError:
            return True
        with np.errstate(all="ignore"):  # (a = near below, b = near above, c = far below, d = far above)
            gap, spread = np.abs(a - b), np.abs(c - a) + np.abs(d - b)
            size = np.maximum(np.maximum(np.abs(a), np.abs(b)), np.maximum(np.abs(c), np.abs(d)))
            jumped = (gap > 1e-3 * spread) & (gap > 1e-12 * size)
            jumped |= np.isnan(gap) & ~(np.isnan(a) & np.isnan(b))
        if np.any(jumped):
            return True
    return False


def _tags(v, found: set) -> set:
    """The tags of the duals in v."""
    if _is_dual(v):
        found.add(v.tag)
        _tags(v.primal, found)
        _tags(v.tangent, found)
    elif isinstance(v, dict):
        for x in v.values():
            _tags(x, found)
    elif isinstance(v, (tuple, list)):
        for x in v:
            _tags(x, found)
    return found


def _refused_of(v, why, depth=0, seen=None):
    """A `Refused` cotangent for v (the integrand, its cells' values) in the structure reverse mode gives
    its cotangents: a closure's cells, an object's fields, a partial's parts, a dict's or a sequence's items,
    a `Refused` at each number or array (a whole Refused where a Tangent or a dict is expected was dropped:
    a bound method's, a callable object's, a dict cell's gradient 0). None for what carries no derivative."""
    seen = set() if seen is None else seen
    if v is None or isinstance(v, (str, bytes, bool, type, types.ModuleType)) or id(v) in seen or depth > 6:
        return None
    if isinstance(v, (numbers.Number, np.ndarray, np.generic)) or _is_dual(v):
        return Refused(why)
    seen.add(id(v))
    deeper = depth + 1
    if isinstance(v, functools.partial):
        return Tangent(func=_refused_of(v.func, why, deeper, seen), args=_refused_of(v.args, why, deeper, seen),
                       keywords=_refused_of(dict(v.keywords), why, deeper, seen))
    if isinstance(v, types.MethodType):
        return _refused_of(v.__self__, why, deeper, seen)
    if isinstance(v, types.FunctionType):
        cells = dict(zip(v.__code__.co_freevars, v.__closure__ or ()))
        out = {}
        for n, c in cells.items():
            try:
                out[n] = _refused_of(c.cell_contents, why, deeper, seen)
            except ValueError:  # (an empty cell)
                out[n] = None
        return Tangent(out)
    if isinstance(v, dict):
        return type(v)({k: _refused_of(x, why, deeper, seen) for k, x in v.items()}) if type(v) is dict else {
            k: _refused_of(x, why, deeper, seen) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        items = [_refused_of(x, why, deeper, seen) for x in v]
        return type(v)(*items) if hasattr(v, "_fields") else type(v)(items)
    fields = getattr(v, "__dict__", None)
    if isinstance(fields, dict):
        return Tangent({k: _refused_of(x, why, deeper, seen) for k, x in fields.items()})
    return Refused(why)


def _integral(g, a, b, opts):
    """∫_a^b g for limits that may be duals: the integral between their primals plus the boundary terms
    (g(b)·ḃ − g(a)·ȧ, the innermost derivative call's first)."""
    if _is_dual(b) or _is_dual(a):
        if opts["weight"] is not None:
            raise _WLIMIT.error()
        lim = b if _is_dual(b) and (not _is_dual(a) or b.tag.order >= a.tag.order) else a
        sign = 1.0 if lim is b else -1.0
        inner = _integral(g, a if lim is b else a.primal, b.primal if lim is b else b, opts)
        if not np.isfinite(_primal_tree(lim)):  # (an infinite limit has no term, as in reverse mode: the
            return inner                         # integrand vanishes there for the integral to exist)
        other = a if lim is b else b
        try:
            with np.errstate(all="ignore"):
                if _at_the_limit(g, lim.primal):
                    raise _EDGE.error()
                edge = g(_inside(lim.primal, other))  # (its limit from inside the interval)
        except (ArithmeticError, ValueError) as e:
            raise _EDGE.error() from e
        if not _all_finite(edge):
            raise _EDGE.error()
        return _combine(inner, edge, sign * type(lim)(0.0, lim.tangent, lim.tag))
    a, b = _primal_tree(a), _primal_tree(b)
    return _integrate(g, a, b, opts, g(_inner_point(a, b)))


def _combine(base, edge, coef):
    """base + edge·coef, entry by entry of two values of one structure (None: zero)."""
    if edge is None:
        return base
    if isinstance(edge, dict):
        base = base or type(edge)()
        keys = list(base) + [k for k in edge if k not in base]
        return type(base)({k: _combine(base.get(k), edge.get(k), coef) for k in keys})
    if isinstance(edge, (tuple, list)):
        base = base if base is not None else [None] * len(edge)
        items = [_combine(x, e, coef) for x, e in zip(base, edge)]
        return type(edge)(*items) if hasattr(edge, "_fields") else type(edge)(items)
    return edge * coef if base is None else base + edge * coef


def _with_primal(y, value):
    """y with its innermost primal replaced by value (quad's own result)."""
    if _is_dual(y):
        return type(y)(_with_primal(y.primal, value), y.tangent, y.tag)
    return value
