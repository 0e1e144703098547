"""Rules for `decimal.Decimal`'s methods (a Decimal is a registered number, `contexts.rules.leaves`):
`x.sqrt()`, `x.exp()`, `x.ln()`, `x.log10()` differentiated in the Decimal's own arithmetic (its context's
precision), so code written with them keeps its kind in every mode.

>>> from decimal import Decimal
>>> from contexts import gradient
>>> gradient(lambda x: x.sqrt() * x.ln(), Decimal(4))[0]
Decimal('0.5965735902799726547086160607')
"""

from __future__ import annotations

from decimal import Decimal

from .registry import registry
from .sparsity_specs import NONLINEAR

__all__: list[str] = []


def _partials(name, y, x):
    if name == "sqrt":
        return 1 / (2 * y)
    if name == "exp":
        return y
    if name == "ln":
        return 1 / x
    return 1 / (x * Decimal(10).ln())  # log10


def _register(name):
    def adjoint(dy, y, x, *rest, **kwargs):
        return (None if dy is None else dy * _partials(name, y, x),) + (None,) * len(rest)

    def frule(tangents, x, *rest, **kwargs):
        y = getattr(Decimal, name)(x, *rest, **kwargs)
        t = tangents[0] if tangents else None
        return y, (None if t is None else t * _partials(name, y, x))

    adjoint.__name__ = adjoint.__qualname__ = f"Decimal_{name}_adjoint"
    frule.__name__ = frule.__qualname__ = f"Decimal_{name}_frule"
    registry.adjoint((Decimal, name), kind="elementwise")(adjoint)
    registry.frule((Decimal, name))(frule)
    registry.sparsity(NONLINEAR, (Decimal, name))


for _name in ("sqrt", "exp", "ln", "log10"):
    _register(_name)


def decimal_is_zero(v):
    """`Decimal.is_zero` as the test it is (`Rule.stand_in`): an equality with 0, checked as the engines check one
    (sigfig's `_num_parse` of a differentiated number's text, rounding hillfit's fitted values for display)."""
    return v == 0


registry.set((Decimal, "is_zero"), stand_in=decimal_is_zero)
# a finite Decimal stays finite, and a NaN or infinity stays one, when it moves: tests with no derivative
registry.nondifferentiable(*((Decimal, name) for name in ("is_nan", "is_qnan", "is_snan", "is_infinite", "is_finite")))
