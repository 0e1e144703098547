"""Central finite differences: the one oracle the tests compare derivatives against (tested in tests/test_fd.py).

    from tests.fd import gradient, derivative, directional, jacobian, hessian, assert_grad_fd, check_rule

gradient(f, *args, h=1e-3, order=4)   gradient of a real scalar f, one entry per argument (floats, complex,
                                       arrays, lists/tuples of them; None for ints and bools)
derivative(f, x, h=1e-6)               (f(x + h) - f(x - h)) / 2h, elementwise for array outputs
directional(f, args, tangents, h=1e-6) d/dt f(*(args + t tangents)) at 0, on structured args and outputs
jacobian(f, x, h=1e-6, matrix=False)   shape(f(x)) + shape(x); matrix=True: (outputs, inputs), sequences joined
hessian(f, x, h=1e-4, matrix=False)    of a scalar f by second-order central differences of f itself
assert_grad_fd(f, *args, rtol, atol)   contexts.gradient(f, *args) equals gradient(f, *args); returns it
check_rule(key, *args, diff=(0,), ...) a registered rule's adjoint and frule against directional()

`gradient` is the library's shipped finite differences (`contexts.rules.check.numerical_gradient`, plain
numpy: the one implementation, tested here against closed forms in tests/test_fd.py); only the last two
touch the engine and the rule registry (imported when called); the rest is plain numpy. Step sizes are
the ones the tests' tolerances were set for: do not change a default.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

__all__ = ["gradient", "derivative", "directional", "jacobian", "hessian", "assert_grad_fd", "check_rule"]


# -- gradients of real scalar functions --------------------------------------------------------

def gradient(f: Callable, *args, h: float = 1e-3, order: int = 4) -> tuple:
    """Central-difference gradient of a real scalar f at args, one entry per argument: the shipped
    `contexts.rules.check.numerical_gradient` (plain numpy, no engine), unrounded.

    Floats (and Fractions, perturbed as floats) give floats, complex numbers a complex gradient
    dl/dRe + i dl/dIm, inexact arrays arrays of their shape, lists/tuples lists; ints, bools and other
    values None. order=4: the five-point stencil with step h (default 1e-3, accurate to ~1e-10 on smooth
    functions); order=2: (f(x + h) - f(x - h)) / 2h, for tests written against that formula and its step.
    """
    from contexts.rules.check import numerical_gradient
    return numerical_gradient(f, *args, eps=h, order=order, exact_digits=True)


# -- derivatives of vector functions -----------------------------------------------------------

def in_mode(f: Callable, x: float, mode: str) -> tuple:
    """(the engines' derivative of a scalar function f at x, central differences' value) for `mode`:
    "gradient" (reverse), "derivative" (forward) or "hessian" (forward over reverse, f's second
    derivative against differences of differences)."""
    from contexts import derivative as forward, gradient, hessian  # (the oracle itself needs no engine)
    if mode == "gradient":
        return gradient(f, x)[0], derivative(f, x)
    if mode == "hessian":
        return hessian(f, x), derivative(lambda s: derivative(f, s, h=1e-4), x, h=1e-4)
    return forward(f, x), derivative(f, x)


def derivative(f: Callable, x, h: float = 1e-6):
    """(f(x + h) - f(x - h)) / 2h, elementwise for array outputs (x is usually a float)."""
    return (np.asarray(f(x + h)) - np.asarray(f(x - h))) / (2 * h)


def _values(y) -> np.ndarray:
    """f's output as a float array; a ragged list/tuple of outputs is raveled and joined."""
    if isinstance(y, (list, tuple)):
        try:
            return np.asarray(y, dtype=float)
        except ValueError:
            parts = [np.ravel(_values(v)) for v in y]
            return np.concatenate(parts) if parts else np.zeros(0)
    return np.asarray(y, dtype=float)


def jacobian(f: Callable, x, h: float = 1e-6, matrix: bool = False) -> np.ndarray:
    """The Jacobian of f at x by central differences, one column (f(x + h e_j) - f(x - h e_j)) / 2h per entry.

    Shape shape(f(x)) + shape(x); with matrix=True, (number of outputs, number of inputs), outputs raveled.
    A list/tuple output that is not one regular array counts as its raveled parts joined.
    """
    x = np.asarray(x, dtype=float)
    y = _values(f(x))
    jac = np.zeros(y.shape + (x.size,))
    for j in range(x.size):
        e = np.zeros(x.size)
        e[j] = h
        e = e.reshape(x.shape)
        jac[..., j] = (_values(f(x + e)) - _values(f(x - e))) / (2 * h)
    return jac.reshape(y.size, x.size) if matrix else jac.reshape(y.shape + x.shape)


def hessian(f: Callable, x, h: float = 1e-4, matrix: bool = False) -> np.ndarray:
    """The Hessian of a scalar f at x by second-order central differences of f itself:

    H[i, j] = (f(x + h e_i + h e_j) - f(x + h e_i - h e_j) - f(x - h e_i + h e_j) + f(x - h e_i - h e_j)) / 4h^2.
    Shape shape(x) + shape(x); with matrix=True, (n, n). f is called with arrays of x's shape.
    """
    x = np.asarray(x, dtype=float)
    n = x.size

    def value(z):
        return np.asarray(f(z), dtype=float).reshape(())
    hess = np.zeros((n, n))
    eye = np.eye(n) * h
    for i in range(n):
        for j in range(i, n):
            ei, ej = eye[i].reshape(x.shape), eye[j].reshape(x.shape)
            hess[i, j] = hess[j, i] = (value(x + ei + ej) - value(x + ei - ej) - value(x - ei + ej)
                                       + value(x - ei - ej)) / (4 * h * h)
    return hess if matrix else hess.reshape(x.shape + x.shape)


# -- structured values (rules take and return tuples of arrays) --------------------------------

def flatten(x) -> list:
    """Leaves of a nested tuple/list structure, in order."""
    if isinstance(x, (list, tuple)):
        return [leaf for item in x for leaf in flatten(item)]
    return [x]


def random_like(x, rng):
    """A random value with x's structure, shape and (inexact) dtype; complex where x is complex."""
    if isinstance(x, (list, tuple)):
        return [random_like(item, rng) for item in x]
    a = np.asarray(x)
    r = rng.standard_normal(a.shape)
    if np.iscomplexobj(a):
        r = r + 1j * rng.standard_normal(a.shape)
    if isinstance(x, (float, int)) and not isinstance(x, bool):
        return float(r)
    if isinstance(x, complex):
        return complex(r)
    dtype = a.dtype if np.issubdtype(a.dtype, np.inexact) else np.float64
    return np.asarray(r, dtype=dtype)


def inner(a, b) -> float:
    """Real inner product Re sum(conj(a) * b) of two matching structures; None counts as zero."""
    total = 0.0
    for u, v in zip(flatten(a), flatten(b)):
        if u is None or v is None:
            continue
        u, v = np.asarray(u), np.asarray(v)
        assert u.shape == v.shape, f"shape mismatch {u.shape} vs {v.shape}"
        total += float(np.real(np.sum(np.conj(u) * v)))
    return total


def _axpy(x, t, h):
    """x + h*t on matching structures (t None: x unchanged)."""
    if t is None:
        return x
    if isinstance(x, (list, tuple)):
        return type(x)(_axpy(a, b, h) for a, b in zip(x, t))
    return x + h * t


def _numeric(y):
    """y as a structure of float/complex arrays (lists for tuples; integer and bool leaves None)."""
    if isinstance(y, (list, tuple)):
        return [_numeric(item) for item in y]
    a = np.asarray(y)
    return a.astype(np.complex128 if np.iscomplexobj(a) else np.float64) \
        if np.issubdtype(a.dtype, np.inexact) else None


def _difference(fp, fm, h):
    if isinstance(fp, list):
        return [_difference(a, b, h) for a, b in zip(fp, fm)]
    return None if fp is None else (fp - fm) / (2 * h)


def directional(f: Callable, args, tangents, h: float = 1e-6):
    """(f(*(args + h t)) - f(*(args - h t))) / 2h: the directional derivative J t, structured like f's output.

    tangents has one entry per argument (None: not moved), each structured like its argument. The result
    mirrors f's output with lists for tuples; its integer and bool leaves are None.
    """
    def shifted(sign):
        return _numeric(f(*(_axpy(a, t, sign * h) for a, t in zip(args, tangents, strict=True))))
    return _difference(shifted(+1), shifted(-1), h)


# -- checks against the library ----------------------------------------------------------------

def assert_grad_fd(f: Callable, *args, rtol: float = 1e-5, atol: float = 1e-7) -> tuple:
    """Reverse mode's gradient(f, *args) equals gradient() above for every float/complex/array argument."""
    from contexts.ad import gradient as reverse_gradient
    got = reverse_gradient(f, *args)
    want = gradient(f, *args)
    assert len(got) == len(args)
    for g, w in zip(got, want):
        if w is None:
            continue
        np.testing.assert_allclose(np.asarray(g, dtype=complex), np.asarray(w, dtype=complex), rtol=rtol, atol=atol)
    return got


def check_rule(key, *args, diff=(0,), seed=0, h=1e-6, rtol=1e-5, atol=1e-7, reverse=True,
               forward=True, dy=None, **kwargs):
    """Assert the registered adjoint (or rrule) and frule of `key` agree with central differences at args.

    For random directions dx of the arguments numbered in `diff` and a random cotangent dy (or the one given):
      reverse:  sum_i <adj_i(dy), dx_i>  ==  <dy, J dx>   and each cotangent has its argument's structure,
                shape and dtype
      forward:  the frule's primal is the function's, its tangent == J dx
    with J dx = directional(...) and real inner products (Zygote's complex convention). Stricter than the
    shipped `contexts.rules.check.check_rule` on arrays: the arguments to move are chosen, cotangent dtypes
    and shapes are checked, and keys may be `(type, name)` method keys.
    """
    from contexts.rules.registry import call_key, registry
    rng = np.random.default_rng(seed)
    rule = registry.rules.get(key)
    assert rule is not None, f"no rule registered for {key!r}"
    y = call_key(key, args, kwargs)
    dxs = [random_like(args[i], rng) for i in diff]
    tangents = [None] * len(args)
    for i, dx in zip(diff, dxs):
        tangents[i] = dx
    jdx = directional(lambda *a: call_key(key, a, kwargs), args, tangents, h)
    if reverse:
        assert rule.adjoint is not None or rule.rrule is not None, f"no reverse rule for {key!r}"
        if dy is None:
            dy = random_like(_numeric(y) if not isinstance(y, (list, tuple)) else y, rng)
        if rule.adjoint is not None:
            cts = rule.adjoint(dy, y, *args, **kwargs)
        else:
            _, pullback = rule.rrule(*args, **kwargs)
            cts = pullback(dy)
        if kwargs and len(cts) == len(args) + 1 and isinstance(cts[-1], dict):
            cts = cts[:-1]  # keyword cotangents (checked through the engine, e.g. logsumexp's b=)
        assert len(cts) == len(args), f"{len(cts)} cotangents for {len(args)} arguments"
        for i in diff:
            _check_structure(cts[i], args[i])
        lhs = sum(inner(cts[i], dx) for i, dx in zip(diff, dxs))
        rhs = inner(dy, jdx)
        np.testing.assert_allclose(lhs, rhs, rtol=rtol, atol=atol, err_msg=f"adjoint of {key!r}")
    if forward:
        assert rule.frule is not None, f"no frule for {key!r}"
        y2, dy_fwd = rule.frule(tuple(tangents), *args, **kwargs)
        for a, b in zip(flatten(_numeric(y2)), flatten(_numeric(y))):
            if b is not None:
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        for t, ref in zip(flatten(dy_fwd), flatten(jdx)):
            if ref is None:
                continue
            t = np.zeros_like(ref) if t is None else np.asarray(t)
            assert t.shape == ref.shape, f"tangent shape {t.shape} vs {ref.shape} for {key!r}"
            np.testing.assert_allclose(t, ref, rtol=rtol, atol=max(atol, 1e-6), err_msg=f"frule of {key!r}")


def _check_structure(ct, x):
    """A cotangent has its primal's structure, shape and dtype."""
    if ct is None:
        return
    if isinstance(x, (list, tuple)):
        assert isinstance(ct, (list, tuple)) and len(ct) == len(x), f"list cotangent expected for {x!r}"
        for c, xi in zip(ct, x):
            _check_structure(c, xi)
        return
    if isinstance(x, np.ndarray):
        assert isinstance(ct, np.ndarray), f"array cotangent expected, got {type(ct).__name__}"
        assert ct.shape == x.shape, f"cotangent shape {ct.shape} != primal shape {x.shape}"
        if np.issubdtype(x.dtype, np.inexact):
            assert ct.dtype == x.dtype, f"cotangent dtype {ct.dtype} != primal dtype {x.dtype}"
    elif isinstance(x, (float, int)):
        assert np.ndim(ct) == 0, f"scalar cotangent expected, got shape {np.shape(ct)}"
