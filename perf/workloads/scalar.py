"""Scalar workloads: pure interpreter overhead, nothing for BLAS to hide it behind."""

from __future__ import annotations

import math

from perf.workloads import Workload

X0 = 0.7  # sincos input
LOOP_BASE = 1.01  # loop input: x**100 stays near 2.7, its derivative near 270


def make_sincos(xp):
    """sin(x) + cos(x) of a float, in namespace `xp`."""

    def sincos(x):
        return xp.sin(x) + xp.cos(x)

    return sincos


def sincos_gradient(x):
    """Hand-written: d/dx (sin x + cos x)."""
    return (math.cos(x) - math.sin(x),)


def sincos_workload() -> Workload:
    """Table 4's `sincos`."""
    return Workload(
        name="sincos",
        description="`sin(x) + cos(x)` of a float",
        make=make_sincos,
        params=(X0,),
        data={},
        hand_gradient=sincos_gradient,
        closed_form=sincos_gradient,
        scalar=True,
    )


def make_loop(xp, n):
    """x**n by a while loop of `r = r * x`, as Zygote's `pow` benchmark."""

    def loop(x):
        r = 1.0
        k = n
        while k > 0:
            r = r * x
            k -= 1
        return r

    return loop


def make_loop_gradient(n):
    """Hand-written adjoint of `make_loop`: the primal values r_k on a stack, then the reverse loop."""

    def loop_gradient(x):
        stack = []
        r = 1.0
        k = n
        while k > 0:
            stack.append(r)
            r = r * x
            k -= 1
        dr, dx = 1.0, 0.0
        while stack:
            dx += dr * stack.pop()
            dr = dr * x
        return (dx,)

    return loop_gradient


def loop_workload(n: int = 100) -> Workload:
    """Table 4's `loop`: x**n by repeated multiplication."""
    return Workload(
        name="loop",
        description=f"`x**{n}` by a while loop of `r = r * x` (the hand-written gradient is the loop's "
                    "adjoint: primal values on a stack, then the reverse loop)",
        make=make_loop,
        params=(LOOP_BASE,),
        data={"n": n},
        hand_gradient=make_loop_gradient(n),
        closed_form=lambda x: (n * x ** (n - 1),),
        sizes={"n": n},
        scalar=True,
    )


def make_loop_arg(xp):
    """x**n by a while loop, n an argument written without any annotation, as a user writes it."""

    def loop_pow(x, n):
        r = 1.0
        while n > 0:
            n -= 1
            r = r * x
        return r

    return loop_pow


def loop_pow_gradient(x, n):
    """Hand-written adjoint of `make_loop_arg`: the primal values on a stack, then the reverse loop."""
    stack = []
    r = 1.0
    while n > 0:
        n -= 1
        stack.append(r)
        r = r * x
    dr, dx = 1.0, 0.0
    while stack:
        dx += dr * stack.pop()
        dr = dr * x
    return (dx,)


def loop_arg_workload(n: int = 100) -> Workload:
    """`loop` with the count passed as a trailing argument: `gradient(loop_pow, x, n)`."""
    return Workload(
        name="loop_arg",
        description=f"`loop_pow(x, n)`: `r = 1.0; while n > 0: n -= 1; r = r * x`, n = {n} passed as an "
                    "argument (not differentiated; overdub is called as `gradient(loop_pow, x, n)`)",
        make=make_loop_arg,
        params=(LOOP_BASE,),
        data={},
        hand_gradient=loop_pow_gradient,
        closed_form=lambda x, n: (n * x ** (n - 1),),
        sizes={"n": n},
        scalar=True,
        constants=(n,),
    )
