"""What sparsity detection does with a primitive, declared as data beside its reverse and forward rules.

A domain file says, next to a primitive's derivative, which kind of dependency structure it has
(`registry.sparsity(LINEAR, np.add)`); `contexts.sparsity` interprets the spec with its tracer moves
(`contexts/sparsity/interpret.py`). The rules layer cannot import the sparsity package (it sits above),
so the vocabulary lives here and holds no tracer code:

- `Elementwise(first, second, select)`: broadcasting, each output element from the same element of each
  argument; `NONLINEAR`, `LINEAR` (no second derivative), `NONDIFF` (no derivative) name the common ones;
- `Reduction(linear)`: each output element depends on the group reduced into it along the `axis` argument;
- `Cumulative(linear)`: a running reduction along the `axis` argument (element k from elements 0..k);
- `STRUCTURAL`: the function only moves elements of its first argument (reshape, transpose, flip, ...);
- `DENSE`: conservative, every output element depends on every input element;
- `CONCRETE`: piecewise constant, its value is needed (global mode refuses) and its derivative is zero;
- `INDICES`: integer results computed from values (argsort): no dependencies, of unknown value in global mode;
- `CONSTRUCTOR`: builds an array from no traced value (np.zeros): the result is a tracer, so it can take
  traced values later;
- `Custom(where)`: the rule is code on tracers, in `contexts/sparsity/<file>`; the spec says so in one line.

>>> import math
>>> from contexts.rules import registry
>>> registry.get(math.fabs).sparsity
Elementwise(first=(True,), second='none', select=None)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Union

__all__ = ["Elementwise", "Reduction", "Cumulative", "Structural", "Dense", "Concrete", "Indices",
           "Constructor", "Custom", "SparsitySpec", "NONLINEAR", "LINEAR", "NONDIFF", "STRUCTURAL", "DENSE",
           "CONCRETE", "INDICES", "CONSTRUCTOR", "elementwise_spec"]


@dataclass(frozen=True)
class Elementwise:
    """How an elementwise function's outputs depend on its arguments.

    first: per argument, whether its first partial can be nonzero (None = every argument);
    second: 'all' (every pair of active arguments), 'none', or a frozenset of index pairs (i, j), i <= j;
    select: optional `select(primals, constant, shape) -> per-argument boolean masks or None` that drops
            dependencies known to be zero at this point (`constant[i]`: argument i depends on no input;
            a primal is None where unknown), e.g. the branch `maximum` took in local mode.
    """

    first: tuple | None = None
    second: Any = "all"
    select: Callable | None = None

    def active(self, i: int) -> bool:
        return self.first is None or (i < len(self.first) and self.first[i])

    def pairs(self, active: list[int]):
        if self.second == "none":
            return []
        if self.second == "all":
            return [(a, b) for k, a in enumerate(active) for b in active[k:]]
        return [(a, b) for a, b in self.second if a in active and b in active]


@dataclass(frozen=True)
class Reduction:
    """Each output element depends on the group of elements reduced into it along `axis` (first argument
    `a`, keyword `keepdims`). linear: True (sum, mean), False (second derivatives between all members of
    a group), "prod" (between distinct members), "max"/"min" (first order only; in local mode only the
    selected element counts)."""

    linear: Any = True


@dataclass(frozen=True)
class Cumulative:
    """A running reduction of the first argument along `axis` (cumsum, cumprod): element k depends on
    elements 0..k. linear: False adds second derivatives between them."""

    linear: bool = True


@dataclass(frozen=True)
class Structural:
    """fn(a, *args, **kwargs) only moves elements of a: applied to an array of element indices, it says
    where each element goes."""


@dataclass(frozen=True)
class Dense:
    """Every output element (of every output) depends on every element of every traced argument;
    `linear` drops the second-order pairs between them."""

    linear: bool = False


@dataclass(frozen=True)
class Concrete:
    """A piecewise-constant function of a traced value (floor, int): its value is needed, its derivative
    is zero."""


@dataclass(frozen=True)
class Indices:
    """Integer results computed from traced values (argsort, argmax): no dependencies; in global mode of
    unknown value (indexing with them is conservative)."""


@dataclass(frozen=True)
class Constructor:
    """Builds an array from no traced value (np.zeros): applied even when no argument is traced, so that
    the array is a tracer and can receive traced values."""


@dataclass(frozen=True)
class Custom:
    """The rule is code on tracers, registered with `registry.srule` by the sparsity package: `where`
    names its file under `contexts/sparsity/` and what it does that a spec cannot say
    (`Custom("rules.py: a tracer, or an iterable of values")`)."""

    where: str = "rules.py"


SparsitySpec = Union[Elementwise, Reduction, Cumulative, Structural, Dense, Concrete, Indices, Constructor,
                     Custom]

NONLINEAR = Elementwise()
LINEAR = Elementwise(second="none")  # also the piecewise linear ones (abs, fmod): second derivative zero a.e.
NONDIFF = Elementwise(first=())
STRUCTURAL = Structural()
DENSE = Dense()
CONCRETE = Concrete()
INDICES = Indices()
CONSTRUCTOR = Constructor()


def elementwise_spec(partials: tuple, linear: bool = False) -> Elementwise:
    """The spec of an elementwise function from its partial derivatives (None: not differentiable in
    that argument); `linear`: no second derivative."""
    return Elementwise(first=tuple(p is not None for p in partials), second="none" if linear else "all")
