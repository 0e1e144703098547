"""pint's quantities: containers of a magnitude, differentiated through pint's own Python code.

A `pint.Quantity` is an object whose one differentiable field is its magnitude (a float, an ndarray, a
dual number in forward mode); its arithmetic, its numpy functions (`__array_ufunc__`,
`__array_function__`) and its conversions are pint's code computing on the magnitudes, differentiated as
any Python code is. What is not differentiable is pint's bookkeeping of units: parsing a unit's name,
a unit's dimensionality, its root units and the factor between two units carry no derivative (they are
functions of units, never of magnitudes), so they are registered here as non-differentiable primitives
(never recursed into: their parsers run Python's `tokenize`, whose endless iterators reverse mode refuses).

Gradients carry units as `derivative` does: in the output's units per unit of the input. With respect to
a plain number or array the function gives units, of a plain output, the gradient is a plain number or
array; with respect to a Quantity input it is a Quantity of the gradient with respect to its magnitude,
per its unit; of an output Quantity (a number's: `gradient` seeds its magnitude), times the output's unit.
`pullback`'s `back(dy)` takes dy as the cotangent of the output's magnitude (a Quantity dy in its units).

Loaded when pint is first imported (`leaves.DOMAINS`).
"""

from __future__ import annotations

import numbers

import numpy as np
from pint.facets.plain.registry import PlainRegistry

from .leaves import register_constant, register_container
from .registry import registry

__all__: list[str] = []

_UNIT_BOOKKEEPING = ("parse_units", "parse_units_as_container", "_parse_units_as_container", "parse_unit_name",
                     "parse_expression", "parse_pattern", "get_name", "get_symbol", "_get_symbol",
                     "get_dimensionality", "_get_dimensionality", "get_root_units", "_get_root_units",
                     "_get_conversion_factor", "get_base_units", "get_compatible_units", "is_compatible_with")


def _register() -> None:
    seen = set()
    for cls in PlainRegistry.__mro__:
        for name in _UNIT_BOOKKEEPING:
            fn = cls.__dict__.get(name)
            if fn is not None and callable(fn) and id(fn) not in seen:
                seen.add(id(fn))
                registry.nondifferentiable(fn)
    import pint

    for cls in pint.UnitRegistry.__mro__:  # (the registry's facets override some of them)
        for name in _UNIT_BOOKKEEPING:
            fn = cls.__dict__.get(name)
            if fn is not None and callable(fn) and id(fn) not in seen:
                seen.add(id(fn))
                registry.nondifferentiable(fn)


_register()


def _units_are_constants() -> None:
    """A unit container (a Quantity's `_units`, its cached `_dimensionality`) holds units' names and
    exponents: bookkeeping, never a magnitude's derivative. Registered as a constant type, so that a cache of
    it filled by an operator's unrecorded run (`q1 - q2.to('deg')` reading `dimensionality`) is no lost
    derivative (reverse mode refused metpy's `wind_direction`, `heat_index`: sweep H)."""
    from pint.util import UnitsContainer
    register_constant(UnitsContainer)


_units_are_constants()


def _forward() -> None:
    """Forward mode: `dual * ureg.m` is the Quantity of the dual (`contexts.forward.dual.UNIT_TYPES`)."""
    import pint

    from .leaves import UNIT_TYPES

    def quantity(magnitude, unit):
        return unit._REGISTRY.Quantity(magnitude, unit)

    UNIT_TYPES.append((pint.Unit, quantity))


_forward()


# -- gradients with respect to and of Quantities (reverse mode) ----------------------------------------------

def _magnitude_of(d):
    return d.get("_magnitude") if isinstance(d, dict) else d if isinstance(d, (float, np.ndarray)) else None


def quantity_cotangent(d, x, finalize):
    """The gradient with respect to a Quantity input: its magnitude's, per unit of x (times the output's
    units where the output is a Quantity: `quantity_of_output`)."""
    return x._REGISTRY.Quantity(finalize(_magnitude_of(d), x._magnitude), x.units ** -1)


def quantity_held(y):
    return y._magnitude


def quantity_rebuild(y, magnitude):
    return y._REGISTRY.Quantity(magnitude, y.units)


def quantity_seed(y, dy):
    """Reverse mode's cotangent of an output Quantity from dy, its magnitude's (a Quantity dy in y's units)."""
    if isinstance(dy, type(y)):
        dy = dy.m_as(y.units)
    return {"_magnitude": dy}


def quantity_of_output(g, y):
    """A gradient of an output Quantity y: in y's units per unit of the input (`derivative`'s units)."""
    if g is None:
        return None
    if isinstance(g, (list, tuple)):
        return type(g)(quantity_of_output(v, y) for v in g) if type(g) in (list, tuple) else g
    if isinstance(g, dict):
        return type(g)({k: quantity_of_output(v, y) for k, v in g.items()})
    if isinstance(g, y._REGISTRY.Quantity):
        return g * y.units
    if isinstance(g, (numbers.Number, np.ndarray)):
        return y._REGISTRY.Quantity(g, y.units)
    return g


def quantity_per_input(dy, x):
    """Forward mode's derivative with respect to a Quantity x from dy, the output's tangent where x's
    magnitude is seeded with ones: dy per x's unit."""
    if dy is None:
        return None
    if type(dy) in (list, tuple):
        return type(dy)(quantity_per_input(v, x) for v in dy)
    if type(dy) is dict:
        return {k: quantity_per_input(v, x) for k, v in dy.items()}
    if isinstance(dy, x._REGISTRY.Quantity):
        return dy / x.units
    return x._REGISTRY.Quantity(dy, x.units ** -1)


def quantity_tangent_values(t, x):
    """The magnitude seeded for a tangent t of a Quantity x: a Quantity t's in x's units."""
    return t.m_as(x.units) if isinstance(t, x._REGISTRY.Quantity) else t


def _containers() -> None:
    import pint

    register_container(pint.Quantity, cotangent=quantity_cotangent, held=quantity_held, rebuild=quantity_rebuild,
                       seed=quantity_seed, of_output=quantity_of_output, per_input=quantity_per_input,
                       tangent_values=quantity_tangent_values)


_containers()
