"""numpy's random generators on differentiated items: a seeded permutation, shuffle or choice of an array is
the array taken at the indices the same draws give (numpy's own code takes them so, `a.take(idx)`; checked
draw for draw against `Generator.permutation(n)` and `choice(n)`), written as that Python code
(`Rule.stand_in`) for every engine: the items keep their derivatives, the generator its stream."""

from __future__ import annotations

import numpy as np

from ..registry import registry

__all__ = ["permutation", "shuffle", "choice", "draw"]


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


registry.nondifferentiable(draw)
# (Cython methods: keyed by the class's function, bound to the generator when called)
registry.set(np.random.Generator.permutation, stand_in=permutation)
registry.set(np.random.Generator.shuffle, stand_in=shuffle)
registry.set(np.random.Generator.choice, stand_in=choice)
registry.set(np.random.RandomState.permutation, stand_in=legacy_permutation)
