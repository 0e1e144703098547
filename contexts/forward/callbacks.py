"""Forms on duals of higher-order primitives: C code calling a Python function it is given, whose closure
may hold duals where no frule sees them (`scipy.integrate.quad(lambda t: np.exp(-a * t), 0, 1)`).

The rules themselves live with their domain (`contexts.rules.numpy.scipy_integrate`); they need forward
mode to run the callback on duals, and rules sit below the modes, so forward mode hands them its own
functions and registers the result (`Rule.duals`, which the context calls in place of the primitive).
"""

from __future__ import annotations

import contextlib
import types

import numpy as np

import overdub
from ..lowered.runtime import JUMP_FUNCTIONS, jump_guard, jump_operands
from ..rules.registry import registry
from .context import ForwardContext, run_inside
from .dual import Dual, Tag, primal, primal_tree, split
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

def _jump_frule(fn, kind: str, name: str):
    """A step's tangent (none), refused where a moving value sits exactly on one of its jumps
    (`lowered.runtime.jump_guard`)."""
    def jump_frule(tangents, *args, **kwargs):
        x, t = jump_operands(fn, args, tangents)  # (a search's: its grid and values together)
        if x is not None and t is not None:
            jump_guard(kind, name, x, t)
        return fn(*args, **kwargs), None
    jump_frule.__name__ = jump_frule.__qualname__ = f"{name.replace('.', '_')}_frule"
    return jump_frule


for _fn, (_kind, _name) in JUMP_FUNCTIONS.items():
    registry.set(_fn, frule=_jump_frule(_fn, _kind, _name))


def _searchsorted_method_frule(tangents, grid, v, *args, **kwargs):
    """`grid.searchsorted(v)`: np.searchsorted's, the method's object the grid (numpy's histogram of weights
    looks its sorted samples up so: one bin's side came out at a sample on an edge)."""
    x, t = jump_operands(np.searchsorted, (grid, v), tangents[:2])
    if t is not None:
        jump_guard("search", "ndarray.searchsorted", x, t)
    return grid.searchsorted(v, *args, **kwargs), None


registry.set((np.ndarray, "searchsorted"), frule=_searchsorted_method_frule)

try:
    from ..rules.numpy import scipy_optimize as _optimize
except ImportError as e:  # scipy is optional
    if not (e.name or "").startswith("scipy"):
        raise
    _optimize = None


@contextlib.contextmanager
def _inner(tag):
    """The active forward context's arrays made by g (`np.zeros`, to be filled: `ForwardContext._fresh`)
    carry tag, the inner derivative call's, while g runs: a value of it stored into them keeps it (scipy.stats'
    cdf fills `np.zeros` by `place`, under the slope of its generic ppf's root)."""
    ctx = overdub.current()
    if not isinstance(ctx, ForwardContext):
        yield
        return
    held, outer = ctx.tag, ctx.outer
    ctx.tag, ctx.outer = tag, outer + ((held,) if held is not None else ())
    try:
        yield
    finally:
        ctx.tag, ctx.outer = held, outer


def _slope_at(g, x):
    """dg/dx at the plain x (a number, or a 1-d array: the Jacobian, outputs by rows), g's other inputs'
    perturbations dropped: forward mode on a fresh derivative call, the outermost, its plain part."""
    if np.ndim(x) == 0:
        tag = Tag()
        with _inner(tag):
            _, t = split(g(Dual(x, 1.0, tag)), tag)
        return 0.0 if t is None else _plain(t)
    x = np.asarray(x, dtype=float)
    tag = Tag(chunk=x.size)
    with _inner(tag):
        _, t = split(g(Dual(x, np.eye(x.size).reshape((x.size,) + x.shape), tag)), tag)
    if t is None:
        return np.zeros((x.size, x.size))
    return np.asarray(_plain(t), dtype=float).reshape(x.size, -1).T


def _plain(v):
    """v with every perturbation stripped (a dual, or a list/tuple of them)."""
    return primal_tree(v) if isinstance(v, (list, tuple)) else primal(v)


def _is_dual(v) -> bool:
    return type(v) is Dual


def _along(g, x):
    """The derivative of g along all ones at the plain x (each element of an elementwise g on its own), by a
    fresh derivative call: perturbations g's other inputs carry stay in it."""
    tag = Tag()
    with _inner(tag):
        _, t = split(g(Dual(x, np.ones_like(x) if np.ndim(x) else 1.0, tag)), tag)
    return 0.0 if t is None else t


def _gradient_at(h, n):
    """The gradient of scalar h(s) at s = 0 (s of n entries) by a fresh derivative call, all directions at
    once: perturbations h's other inputs carry stay in it."""
    tag = Tag(chunk=n)
    with _inner(tag):
        _, t = split(h(Dual(np.zeros(n), np.eye(n), tag)), tag)
    return np.zeros(n) if t is None else t


def _make(like, value, tangent):
    """A dual of like's derivative call with the given primal and tangent."""
    return Dual(value, tangent, like.tag)


def _tag_of(tree):
    """The innermost derivative call perturbing anything in tree (tuples, lists, dicts, object arrays)."""
    best = None

    def walk(v, depth):
        nonlocal best
        if type(v) is Dual:
            if best is None or v.tag.order > best.order:
                best = v.tag
        elif depth < 6 and isinstance(v, (list, tuple)):
            for x in v:
                walk(x, depth + 1)
        elif depth < 6 and isinstance(v, dict):
            for x in v.values():
                walk(x, depth + 1)
        elif isinstance(v, np.ndarray) and v.dtype == object:
            for x in v.flat:
                walk(x, depth + 1)
    walk(tree, 0)
    return best


from ..rules import implicit as _implicit
registry.get(_implicit.bracket_value).impl = primal_tree  # (reverse mode's values on duals: hessian's)
registry.duals(_implicit.root_of)(_implicit.root_duals(types.SimpleNamespace(
    run_inside=run_inside, dual_free=dual_free, primal=_plain, is_dual=_is_dual, slope_at=_slope_at)))

if _optimize is not None:
    _FW = types.SimpleNamespace(run_inside=run_inside, dual_free=dual_free, primal=_plain, is_dual=_is_dual,
                                slope_at=_slope_at)
    for _fn in _optimize.ROOT_FINDERS:
        registry.duals(_fn)(_optimize.root_duals(_FW, _fn))
    registry.duals(_optimize.optimize.fsolve)(_optimize.fsolve_duals(_FW))
    from ..rules.numpy import scipy_root as _root
    registry.duals(_root.optimize.root)(_root.optimize_root_duals(_FW))
    from ..rules.numpy import scipy_leastsq as _leastsq
    _FW.gradient_at = _gradient_at
    registry.duals(_leastsq.optimize.leastsq)(_leastsq.leastsq_duals(_FW))
    registry.duals(_leastsq.optimize.least_squares)(_leastsq.least_squares_duals(_FW))
    for _fn, _name in _optimize.SEARCHES.items():
        registry.duals(_fn)(_optimize.search_duals(_FW, _fn, _name))
    for _fn, _name in _optimize.ITERATIONS.items():
        registry.duals(_fn)(_optimize.search_duals(_FW, _fn, _name, _optimize.iteration_refused))
    from ..rules.numpy import scipy_elementwise as _elementwise
    _FW.along, _FW.make = _along, _make
    for _fn, _kind in _elementwise.SOLVERS.items():
        registry.duals(_fn)(_elementwise.solution_duals(_FW, _fn, _kind))
    from ..rules.numpy import scipy_odeint as _odeint
    _FW.tag_of, _FW.split, _FW.dual = _tag_of, split, Dual
    registry.duals(_odeint.integrate.odeint)(_odeint.odeint_duals(_FW))

# (a callable that stores what it is given, on an object, into a list or a dict: the rules evaluate it at points
# of their own after the solver's, so what it leaves differs from a plain run's, value and derivative alike;
# refused, as reverse mode refuses it, `rules.callback_state`)
from ..rules.callback_state import callback_primitives as _callback_primitives  # noqa: E402
from ..rules.callback_state import stores_checked as _stores_checked  # noqa: E402
for _fn in _callback_primitives():
    _rule = registry.get(_fn)
    if _rule.duals is not None:
        _rule.duals = _stores_checked(_rule.duals, getattr(_fn, "__name__", "the solver"))
