"""numpy's random generators on differentiated items: a seeded permutation, shuffle or choice of an array is
the array taken at the indices the same draws give (numpy's own code takes them so, `a.take(idx)`; checked
draw for draw against `Generator.permutation(n)` and `choice(n)`), written as that Python code
(`Rule.stand_in`) for every engine: the items keep their derivatives, the generator its stream.

The location-scale draws are written as numpy's C code computes them from the standard draw: `normal(loc,
scale)` is `loc + scale * standard_normal()`, `uniform(low, high)` is `low + (high - low) * random()` and
`exponential(scale)` is `scale * standard_exponential()` — the same numbers bit for bit (tested against numpy's), so a seeded draw is a
differentiable function of its parameters (the pathwise derivative: `np.random.normal(0, np.sqrt(dt))` of a
simulated path, qfin's GeometricBrownianMotion). (Not `lognormal`: numpy's C `exp` and `np.exp` differ in
the last bit.)"""

from __future__ import annotations

import numpy as np

from ..registry import registry

__all__ = ["permutation", "shuffle", "choice", "draw", "normal", "uniform", "exponential"]


def _length(x, axis):
    if axis == 0 and isinstance(x, (list, tuple)):
        return len(x)
    return x.shape[axis] if hasattr(x, "shape") else np.shape(x)[axis]


def draw(rng, name, *args, **kw):
    """`rng.<name>(*args)` on what carries no derivative (a count, probabilities): the indices."""
    return getattr(rng, name)(*args, **kw)


def permutation(rng, x, axis=0):
    if isinstance(x, (int, np.integer)):
        return draw(rng, "permutation", x)
    return np.take(x, draw(rng, "permutation", _length(x, axis)), axis=axis)


def shuffle(rng, x, axis=0):
    order = draw(rng, "permutation", _length(x, axis))
    if isinstance(x, list):
        x[:] = [x[i] for i in order]
    else:
        x[...] = np.take(x, order, axis=axis)


# `Generator.choice` as a C callable of no rule: given probabilities that carry a derivative it is refused as
# any such function is (a sample's derivative in its probabilities is a choice the code does not make)
_WEIGHTED = np.random.Generator.choice.__call__


def choice(rng, a, size=None, replace=True, p=None, axis=0, shuffle=True):
    n = a if isinstance(a, (int, np.integer)) else _length(a, axis)
    order = draw(rng, "choice", n, size, replace, None, 0, shuffle) if p is None else _WEIGHTED(
        rng, n, size, replace, p, 0, shuffle)
    return order if n is a else np.take(a, order, axis=axis)


def legacy_permutation(rng, x):
    if isinstance(x, (int, np.integer)):
        return draw(rng, "permutation", x)
    return np.take(x, draw(rng, "permutation", _length(x, 0)), axis=0)


def _shape(size, *params):
    """The draws' shape: size, else the parameters' broadcast shape (None for one draw, as numpy gives a
    number then)."""
    if size is not None:
        return size
    shape = np.broadcast_shapes(*(np.shape(p) for p in params))
    return shape or None


def normal(rng, loc=0.0, scale=1.0, size=None):
    return loc + scale * draw(rng, "standard_normal", _shape(size, loc, scale))


def uniform(rng, low=0.0, high=1.0, size=None):
    unit = "random_sample" if isinstance(rng, np.random.RandomState) else "random"
    return low + (high - low) * draw(rng, unit, _shape(size, low, high))


def exponential(rng, scale=1.0, size=None):
    return scale * draw(rng, "standard_exponential", _shape(size, scale))


registry.nondifferentiable(draw)
# (Cython methods: keyed by the class's function, bound to the generator when called)
registry.set(np.random.Generator.permutation, stand_in=permutation)
registry.set(np.random.Generator.shuffle, stand_in=shuffle)
registry.set(np.random.Generator.choice, stand_in=choice)
registry.set(np.random.RandomState.permutation, stand_in=legacy_permutation)
for _kind in (np.random.Generator, np.random.RandomState):
    for _draw in (normal, uniform, exponential):
        registry.set(getattr(_kind, _draw.__name__), stand_in=_draw)
