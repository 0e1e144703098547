"""Forward mode against the primal, reverse mode, hand-written derivatives and JAX (`run(runner)`).

Benchmarks (names as reported, seconds per call):
- `loop/primal`, `loop/derivative`: x**n by a while loop, n = 100, and its forward derivative
  (aim: at most 5x the primal).
- `jac3x1000/forward`, `jac3x1000/reverse`, `jac3x1000/autograd`: the Jacobian of an R^3 -> R^1000
  function by `jacfwd` (one chunk of 3 directions) and by reverse mode (`contexts.ad`, one pullback per
  output row; autograd's reverse-mode `jacobian`). Aim: forward at least 10x faster.
- `hess100/forward`, `hess100/hand`, `hess100/jax`, `hess100/jax.jit`: the Hessian of
  `scipy.optimize.rosen` at n = 100 by `hessian` (forward over forward), by scipy's hand-written
  `rosen_hess`, by `jax.hessian` (dispatched op by op) and jitted.

Run alone: `python perf/bench_forward.py` (pyperf), or `python perf/bench_forward.py --quick` (prints
medians measured in this process, no pyperf).
"""

from __future__ import annotations

import sys
import time

import numpy as np

N_LOOP = 100
N_OUT = 1000
N_HESS = 100


def loop(x, n=N_LOOP):
    r = 1.0
    k = n
    while k > 0:
        r = r * x
        k -= 1
    return r


_T = np.linspace(0.0, 1.0, N_OUT)


def curve(p):
    """R^3 -> R^1000: a damped oscillation sampled at 1000 points."""
    return p[0] * np.exp(-p[1] * _T) * np.cos(p[2] * _T)


def _reverse_jacobians() -> dict:
    """Reverse-mode Jacobians of `curve` (one pullback per output row), by engine; an engine that is
    missing or fails on `curve` is left out."""
    out = {}
    try:
        from contexts.compose import jacobian
        reverse = lambda p: jacobian(curve, p, mode="reverse")  # noqa: E731
        reverse(np.array([1.0, 0.5, 3.0]))
        out["jac3x1000/reverse"] = reverse
    except Exception as e:  # the reverse engine is another helper's, still being written
        print(f"bench_forward: contexts.ad reverse Jacobian unavailable ({type(e).__name__}: {e})"[:200],
              file=sys.stderr)
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError:
        return out

    def curve_autograd(p):
        return p[0] * anp.exp(-p[1] * _T) * anp.cos(p[2] * _T)
    out["jac3x1000/autograd"] = autograd.jacobian(curve_autograd)
    return out


def _jax_hessians():
    """(jax.hessian of rosen, jitted) or (None, None) without jax."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None, None
    jax.config.update("jax_enable_x64", True)

    def rosen_jax(x):
        return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2.0) ** 2.0 + (1 - x[:-1]) ** 2.0)
    hess = jax.hessian(rosen_jax)
    jitted = jax.jit(hess)
    return (lambda x: hess(x).block_until_ready()), (lambda x: jitted(x).block_until_ready())


def cases():
    """(name, function, argument) for every benchmark, each checked once before timing."""
    from scipy.optimize import rosen, rosen_hess

    from contexts.compose import hessian
    from contexts.forward import derivative, jacfwd

    x_loop = 1.001
    p = np.array([1.0, 0.5, 3.0])
    x_hess = np.linspace(-1.0, 1.5, N_HESS)
    out = [
        ("loop/primal", loop, x_loop),
        ("loop/derivative", lambda x: derivative(loop, x), x_loop),
        ("jac3x1000/forward", lambda q: jacfwd(curve, q), p),
        ("hess100/forward", lambda x: hessian(rosen, x), x_hess),
        ("hess100/hand", rosen_hess, x_hess),
    ]
    out += [(name, fn, p) for name, fn in _reverse_jacobians().items()]
    jax_hess, jax_jit = _jax_hessians()
    if jax_hess is not None:
        out += [("hess100/jax", jax_hess, x_hess), ("hess100/jax.jit", jax_jit, x_hess)]
    _check(dict((name, fn(arg)) for name, fn, arg in out), p, x_hess, x_loop)
    return out


def _check(results, p, x_hess, x_loop):
    from scipy.optimize import rosen_hess
    assert abs(results["loop/derivative"] - N_LOOP * x_loop ** (N_LOOP - 1)) < 1e-9 * N_LOOP
    jac = results["jac3x1000/forward"]
    assert jac.shape == (N_OUT, 3)
    for name in ("jac3x1000/reverse", "jac3x1000/autograd"):
        if name in results:
            np.testing.assert_allclose(results[name], jac, rtol=1e-10, atol=1e-12)
    for name in ("hess100/forward", "hess100/jax", "hess100/jax.jit"):
        if name in results:
            np.testing.assert_allclose(np.asarray(results[name]), rosen_hess(x_hess), rtol=1e-9, atol=1e-9)


def run(runner) -> None:
    """Register every benchmark with a pyperf-like runner (`bench_func(name, fn, *args)`)."""
    for name, fn, arg in cases():
        runner.bench_func(name, fn, arg)


def _quick() -> None:
    for name, fn, arg in cases():
        fn(arg)
        times = []
        for _ in range(5):
            n, t0 = 0, time.perf_counter()
            while time.perf_counter() - t0 < 0.1:
                fn(arg)
                n += 1
            times.append((time.perf_counter() - t0) / n)
        times.sort()
        print(f"{name:22s} {times[2] * 1e6:12.1f} us")


if __name__ == "__main__":
    if "--quick" in sys.argv:
        _quick()
    else:
        import pyperf
        run(pyperf.Runner())
