"""pint's quantities: containers of a magnitude, differentiated through pint's own Python code.

A `pint.Quantity` is an object whose one differentiable field is its magnitude (a float, an ndarray, a
dual number in forward mode); its arithmetic, its numpy functions (`__array_ufunc__`,
`__array_function__`) and its conversions are pint's code computing on the magnitudes, differentiated as
any Python code is. What is not differentiable is pint's bookkeeping of units: parsing a unit's name,
a unit's dimensionality, its root units and the factor between two units carry no derivative (they are
functions of units, never of magnitudes), so they are registered here as non-differentiable primitives
(never recursed into: their parsers run Python's `tokenize`, whose endless iterators reverse mode refuses).

Gradients: with respect to a plain number or array that the function gives units, the gradient is a plain
number or array; with respect to a Quantity input, the gradient is the gradient with respect to its
magnitude (the cotangent of its `_magnitude`: in units of the output per unit of the input's magnitude).

Loaded when pint is first imported (`leaves.DOMAINS`).
"""

from __future__ import annotations

from pint.facets.plain.registry import PlainRegistry

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


def _forward() -> None:
    """Forward mode: `dual * ureg.m` is the Quantity of the dual (`contexts.forward.dual.UNIT_TYPES`)."""
    import pint

    from .leaves import UNIT_TYPES

    def quantity(magnitude, unit):
        return unit._REGISTRY.Quantity(magnitude, unit)

    UNIT_TYPES.append((pint.Unit, quantity))


_forward()
