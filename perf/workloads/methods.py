"""The ways of computing each workload: primal, hand-written gradient, the floor of operation-by-operation
reverse mode (where written out), overdub and the peers.

`check(method, workload)` builds a method, runs it once and compares its gradient with the hand-written
one; only a method whose status is "ok" is timed. A peer that is not installed is "missing", one that
raises is "failed: <reason>", one whose gradient differs is "mismatch: <detail>", a method that does not
apply to the workload (`overdub.wrt` where there are no constants) "n/a"; none of these crash.

>>> from perf.workloads import make_workloads
>>> check("hand", make_workloads(quick=True)[3]).status
'ok'
"""

from __future__ import annotations

import os
import types
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

__all__ = ["METHODS", "PEERS", "Prepared", "Checked", "Unavailable", "NotApplicable", "prepare", "check"]

PEERS = ("autograd", "torch", "jax", "jax.jit")
METHODS = ("primal", "hand", "floor", "overdub", "overdub.wrt") + PEERS


class Unavailable(Exception):
    """The package a method needs is not installed (reported as "missing")."""


class NotApplicable(Exception):
    """The method has nothing to measure on this workload (reported as "n/a", not shown in the tables)."""


@dataclass
class Prepared:
    """A method ready to time: `call()` is one evaluation; `gradient()` its result as numpy (None: primal)."""

    call: Callable[[], Any]
    gradient: Callable[[], tuple] | None


@dataclass
class Checked:
    """Outcome of building and checking one method on one workload."""

    status: str  # "ok", "missing", "n/a", "failed: <reason>" or "mismatch: <detail>"
    prepared: Prepared | None = None
    detail: str = ""


def prepare(method: str, workload) -> Prepared:
    """Build `method` for `workload`; raises `Unavailable` if its package is not installed."""
    try:
        builder = _BUILDERS[method]
    except KeyError:
        raise ValueError(f"unknown method {method!r}; known: {', '.join(METHODS)}") from None
    return builder(workload)


def check(method: str, workload, rtol: float = 1e-6) -> Checked:
    """Build `method`, run it once and compare its gradient with the hand-written gradient."""
    try:
        prepared = prepare(method, workload)
        result = prepared.call() if prepared.gradient is None else prepared.gradient()
    except Unavailable as e:
        return Checked("missing", detail=str(e))
    except NotApplicable as e:
        return Checked("n/a", detail=str(e))
    except Exception as e:  # a peer or the engine under test failing is a result, not a crash
        return Checked(f"failed: {_one_line(e)}")
    if prepared.gradient is None:
        return Checked("ok", prepared)
    problem = _compare(result, workload.hand_gradient(*workload.args), rtol)
    return Checked(f"mismatch: {problem}") if problem else Checked("ok", prepared)


def _one_line(e: BaseException, limit: int = 120) -> str:
    """`Type: message`, first line only, at most `limit` characters."""
    text = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}".rstrip(": ")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _compare(got: Any, want: tuple, rtol: float) -> str:
    """'' if `got` matches `want` gradient by gradient, else what differs."""
    if not isinstance(got, (tuple, list)) or len(got) != len(want):
        return f"expected {len(want)} gradients, got {type(got).__name__}"
    for i, (g, w) in enumerate(zip(got, want)):
        if g is None:
            return f"gradient {i} is None"
        try:
            g = np.asarray(g, dtype=float)
        except (TypeError, ValueError):
            return f"gradient {i} is a {type(g).__name__}, not numeric"
        w = np.asarray(w, dtype=float)
        if g.shape != w.shape:
            return f"gradient {i} has shape {g.shape}, expected {w.shape}"
        atol = 1e-9 * max(1.0, float(np.max(np.abs(w))))
        if not np.allclose(g, w, rtol=rtol, atol=atol):
            return f"gradient {i}: max abs error {float(np.max(np.abs(g - w))):.3g}"
    return ""


def _argnums(workload) -> tuple[int, ...]:
    """The positions of the differentiated arguments: the params, in front of the constants."""
    return tuple(range(len(workload.params)))


def _constants(workload, convert: Callable[[Any], Any]) -> tuple:
    """The workload's constants with its arrays converted by `convert` (for torch and jax)."""
    return tuple(convert(c) if isinstance(c, np.ndarray) else c for c in workload.constants)


# -- the methods ---------------------------------------------------------------------------------

def _primal(workload) -> Prepared:
    f, args = workload.primal(), workload.args
    return Prepared(lambda: f(*args), None)


def _hand(workload) -> Prepared:
    g, args = workload.hand_gradient, workload.args
    call = lambda: g(*args)  # noqa: E731
    return Prepared(call, call)


def _floor(workload) -> Prepared:
    g, args = workload.floor_gradient, workload.args
    if g is None:
        raise Unavailable("no operation-by-operation adjoint is written out for this workload")
    call = lambda: g(*args)  # noqa: E731
    return Prepared(call, call)


def _overdub(workload, wrt: bool = False) -> Prepared:
    """`gradient(f, *params, *constants)` exactly as a user writes it, the params' gradients taken from
    the front of the result; with `wrt`, `gradient(f, *params, *constants, wrt=...)` naming the params."""
    try:
        from contexts.ad import gradient
    except ImportError as e:
        raise Unavailable(f"contexts.ad.gradient: {e}") from e
    f, args, k = workload.primal(), workload.args, len(workload.params)
    if not wrt:
        call = lambda: gradient(f, *args)  # noqa: E731
        return Prepared(call, lambda: call()[:k])
    if not workload.constants:
        raise NotApplicable("no constant arguments: the same call as `overdub`")
    chosen = 0 if k == 1 else tuple(range(k))  # as a user writes it: wrt=0 for one parameter
    call = lambda: gradient(f, *args, wrt=chosen)  # noqa: E731
    return Prepared(call, call)


def _autograd(workload) -> Prepared:
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError as e:
        raise Unavailable(str(e)) from e
    g, args = autograd.grad(workload.primal(anp), argnum=_argnums(workload)), workload.args
    call = lambda: g(*args)  # noqa: E731
    return Prepared(call, call)


def _torch(workload) -> Prepared:
    try:
        import torch
    except ImportError as e:
        raise Unavailable(str(e)) from e
    torch.set_num_threads(1)
    tp = types.SimpleNamespace(sin=torch.sin, cos=torch.cos, exp=torch.exp, log=torch.log,
                               tanh=torch.tanh, sum=torch.sum, max=torch.amax, maximum=torch.clamp_min)
    data = {k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v for k, v in workload.data.items()}
    f = workload.make(tp, **data)
    params = tuple(torch.tensor(p, dtype=torch.float64, requires_grad=True) for p in workload.params)
    constants = _constants(workload, torch.from_numpy)  # no requires_grad: not differentiated

    def call():
        return torch.autograd.grad(f(*params, *constants), params)

    return Prepared(call, lambda: tuple(g.numpy() for g in call()))


def _jax(workload, jit: bool = False) -> Prepared:
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as e:
        raise Unavailable(str(e)) from e
    jax.config.update("jax_enable_x64", True)
    data = {k: jnp.asarray(v) if isinstance(v, np.ndarray) else v for k, v in workload.data.items()}
    g = jax.grad(workload.make(jnp, **data), argnums=_argnums(workload))
    k = len(workload.params)
    if jit:  # the constants are static: a loop count must be a Python int to steer the traced loop
        g = jax.jit(g, static_argnums=tuple(range(k, k + len(workload.constants))))
    args = tuple(jnp.asarray(p) for p in workload.params) + _constants(workload, jnp.asarray)

    def call():
        return jax.block_until_ready(g(*args))

    call()  # trace and compile before anything is timed
    return Prepared(call, lambda: tuple(np.asarray(x) for x in call()))


_BUILDERS: dict[str, Callable[[Any], Prepared]] = {
    "primal": _primal,
    "hand": _hand,
    "floor": _floor,
    "overdub": _overdub,
    "overdub.wrt": lambda workload: _overdub(workload, wrt=True),
    "autograd": _autograd,
    "torch": _torch,
    "jax": _jax,
    "jax.jit": lambda workload: _jax(workload, jit=True),
}
