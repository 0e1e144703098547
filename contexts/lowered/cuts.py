"""The complex functions' branch cuts (`rules.cuts` says where they are) checked in every mode: the adjoint
and frule of each function with a cut are wrapped once, when this layer is loaded (a function's jumps already
judged from the two sides, `runtime.STAIRS_JUDGED`, are not checked again); the operators' own power paths
(reverse mode's `binop_adj`, forward mode's `d_pow` and tangent twin) call `power_on_cut`.

- forward mode (a dual's frule, the tangent twin's): refused where the tangent moves an entry across the cut
  (`StairJump`), which the entry point judges from the two sides;
- reverse mode (the adjoint): an entry on the cut noted for forward mode to tell (`SPECIAL_HITS`), refused where
  nothing checks.
"""

from __future__ import annotations

import operator

import numpy as np

from ..rules.cuts import CUT_FIX, CUTS, POWERS, _values, crossing, cut_text, on_cut as _on_cut
from ..rules.registry import registry
from ..rules.ties import SPECIAL_HITS
from .runtime import STAIRS_JUDGED, SpecialPoint, _stair_jump, _where

__all__ = ["power_on_cut", "wrap_rules"]


def on_cut(fn, args):
    """`rules.cuts.on_cut`, none where the function's jumps were judged from the two sides (it runs again)."""
    hit = _on_cut(fn, args)
    return None if hit is None or STAIRS_JUDGED.get() else hit


def _refused(fn, hit, args):
    return _stair_jump()(cut_text(fn, hit, args), where=_where(), fix=CUT_FIX)


def _noted(fn, hit, args):
    """Reverse mode: an entry on the cut noted for forward mode to tell whether it crosses (refused where
    nothing checks: outside an entry point's recording)."""
    hits = SPECIAL_HITS.get()
    if hits is None:
        raise SpecialPoint(cut_text(fn, hit, args), where=_where(), fix=CUT_FIX)
    hits.append((_where(), _values(args[0]), "=="))


def _cut_adjoint(fn, adjoint):
    def adjoint_off_the_cut(dy, y, *args, **kwargs):
        hit = on_cut(fn, args)
        if hit is not None:
            if type(args[0]).__name__ == "Dual" and crossing(fn, hit, args[0].tangent):
                raise _refused(fn, hit, args)  # (under `hessian`: the outer tangent moves it)
            _noted(fn, hit, args)
        return adjoint(dy, y, *args, **kwargs)
    adjoint_off_the_cut.__name__ = adjoint_off_the_cut.__qualname__ = getattr(adjoint, "__name__", "adjoint")
    adjoint_off_the_cut.__wrapped__ = adjoint
    return adjoint_off_the_cut


def _cut_frule(fn, frule):
    def frule_off_the_cut(tangents, *args, **kwargs):
        hit = on_cut(fn, args)
        if hit is not None and tangents and (crossing(fn, hit, tangents[0]) or fn in POWERS and len(tangents) > 1
                                             and _values(tangents[1]) is not None and np.any(_values(tangents[1]))):
            raise _refused(fn, hit, args)
        return frule(tangents, *args, **kwargs)
    frule_off_the_cut.__name__ = frule_off_the_cut.__qualname__ = getattr(frule, "__name__", "frule")
    frule_off_the_cut.__wrapped__ = frule
    return frule_off_the_cut


def power_on_cut(a, b, ta=None, tb=None) -> None:
    """`a ** b` of a complex base exactly on the logarithm's cut to an exponent that is not an integer (the
    operators' own paths, which do not run the rules: reverse mode's `binop_adj`, forward mode's `d_pow`):
    given tangents (forward mode), refused where they move it across; else noted (reverse mode)."""
    hit = on_cut(operator.pow, (a, b))
    if hit is None:
        return
    if ta is None and tb is None:
        _noted(operator.pow, hit, (a, b))
    elif crossing(operator.pow, hit, ta) or tb is not None and np.any(_values(tb)):
        raise _refused(operator.pow, hit, (a, b))


def wrap_rules() -> None:
    """Wrap the adjoint and frule of each function with a cut (once)."""
    for fn in (*CUTS, *POWERS):
        rule = registry.get(fn)
        if rule is None or getattr(rule.adjoint, "__wrapped__", None) is not None:
            continue
        # (set past `Rule.__setattr__`, which drops the float fast cases: they are of real floats, unchanged)
        if rule.adjoint is not None:
            object.__setattr__(rule, "adjoint", _cut_adjoint(fn, rule.adjoint))
        if rule.frule is not None:
            object.__setattr__(rule, "frule", _cut_frule(fn, rule.frule))
        object.__setattr__(rule, "plan", None)
