"""A module compiled with `from __future__ import annotations` (annotations stay strings)."""
from __future__ import annotations


def annotated(x: UndefinedType, *, k: "int" = 2) -> list[Undefined]:  # noqa: F821
    return [abs(x), k, annotated.__annotations__["x"]]
