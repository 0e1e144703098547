"""Tiny finite-difference checker for numpy rules (used until `contexts.rules.check` exists).

`check_rule(key, *args, diff=..., **kwargs)` checks, for random directions dx and a random cotangent dy:
  reverse:  sum_i <adj_i(dy), dx_i>  ==  <dy, J dx>      (J dx by central differences)
  forward:  frule(dx) tangent        ==  J dx
Inner products are real: <a, b> = Re sum(conj(a) * b), matching Zygote's complex convention.
Structures (tuples/lists of arrays, namedtuples, Python scalars) are flattened leaf by leaf.
"""

from __future__ import annotations

import numpy as np

from contexts.rules.registry import call_key, registry

__all__ = ["check_rule", "fd_jvp", "flatten", "random_like", "inner"]


def flatten(x):
    """Leaves of a nested tuple/list structure, in order."""
    if isinstance(x, (list, tuple)):
        return [leaf for item in x for leaf in flatten(item)]
    return [x]


def random_like(x, rng):
    """A random value with x's structure, shape and (inexact) dtype."""
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


def _axpy(x, t, h):
    """x + h*t on matching structures."""
    if isinstance(x, (list, tuple)):
        return type(x)(_axpy(a, b, h) for a, b in zip(x, t))
    return x + h * t


def inner(a, b) -> float:
    """Real inner product of two matching structures; None counts as zero."""
    total = 0.0
    for u, v in zip(flatten(a), flatten(b)):
        if u is None or v is None:
            continue
        u, v = np.asarray(u), np.asarray(v)
        assert u.shape == v.shape, f"shape mismatch {u.shape} vs {v.shape}"
        total += float(np.real(np.sum(np.conj(u) * v)))
    return total


def _numeric(y):
    """y as a structure of float/complex arrays (ints/bools kept out of the comparison as None)."""
    if isinstance(y, (list, tuple)):
        return [_numeric(item) for item in y]
    a = np.asarray(y)
    return a.astype(np.complex128 if np.iscomplexobj(a) else np.float64) \
        if np.issubdtype(a.dtype, np.inexact) else None


def _diff(fp, fm, h):
    if isinstance(fp, list):
        return [_diff(a, b, h) for a, b in zip(fp, fm)]
    return None if fp is None else (fp - fm) / (2 * h)


def fd_jvp(key, args, kwargs, diff, dxs, h):
    """Central-difference J dx of call_key(key, args, kwargs) along dxs (one per index in diff)."""
    def shifted(sign):
        a = list(args)
        for i, dx in zip(diff, dxs):
            a[i] = _axpy(args[i], dx, sign * h)
        return _numeric(call_key(key, tuple(a), kwargs))
    return _diff(shifted(+1), shifted(-1), h)


def check_rule(key, *args, diff=(0,), seed=0, h=1e-6, rtol=1e-5, atol=1e-7, reverse=True,
               forward=True, dy=None, **kwargs):
    """Assert the registered adjoint and frule of `key` agree with central differences at args."""
    rng = np.random.default_rng(seed)
    rule = registry.rules.get(key)
    assert rule is not None, f"no rule registered for {key!r}"
    y = call_key(key, args, kwargs)
    dxs = [random_like(args[i], rng) for i in diff]
    jdx = fd_jvp(key, args, kwargs, diff, dxs, h)
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
        tangents = [None] * len(args)
        for i, dx in zip(diff, dxs):
            tangents[i] = dx
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
        assert np.ndim(ct) == 0, f"scalar cotangent expected for a scalar, got shape {np.shape(ct)}"
