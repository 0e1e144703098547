"""Branch cuts of the complex functions: where a complex argument lies exactly on its function's cut (the
principal logarithm's negative real axis: `np.log`, `np.sqrt`, `np.angle`, `cmath.phase`, `z ** 0.5`), the
value jumps across it (by 2 pi i, by the sign of a root) and the rules' derivative is one side's: silently
finite where central differences see the jump (scikit-rf's `complex_2_degree(-0.7 + 0j)` gave -81.9 degrees
per unit of the imaginary part, sweep L). As `atan2`'s cut (`lowered.runtime.STAIRS`, kind "cut"):

- forward mode (a dual's frule, the tangent twin's) refuses where the tangent moves such an entry across the
  cut (`StairJump`), which the entry point judges from the two sides: where what follows is continuous through
  the cut (`abs(np.sqrt(z))`, `np.cos(np.angle(z))`) the sides' mean stands;
- reverse mode's adjoint notes an entry on the cut for forward mode to tell (`SPECIAL_HITS`), refused where
  nothing checks.

The checks themselves are the lowered layer's (`lowered.cuts`: its refusals and notes), which wraps each rule
of `CUTS` once, when it is loaded; this module says where the cuts are.

A real argument has no cut (numpy's real functions give NaN off their domain); an entry moving along the cut
(the real part of `np.log(-0.7 + 0j)`) stays on one side; the branch points themselves (0 for the
logarithm) are the rules' singular partials, not jumps.
"""

from __future__ import annotations

import cmath
import operator

import numpy as np

from .registry import registry

__all__ = ["CUTS", "POWERS", "on_cut", "crossing", "cut_text", "CUT_FIX"]


def _real_axis(below=None, beyond=None):
    """Cuts on the real axis: entries with imaginary part 0 and real part below `below` or beyond |beyond|;
    crossed by an imaginary tangent."""
    def on(z):
        re, im = z.real, z.imag
        where = im == 0
        if below is not None:
            return where & (re < below)
        return where & (np.abs(re) > beyond)
    return on, "imag"


def _imaginary_axis(beyond):
    """Cuts on the imaginary axis beyond |beyond| (arctan's, arcsinh's); crossed by a real tangent."""
    def on(z):
        return (z.real == 0) & (np.abs(z.imag) > beyond)
    return on, "real"


_LOG = _real_axis(below=0.0)
CUTS = {np.log: _LOG, np.log10: _LOG, np.log2: _LOG, np.sqrt: _LOG, np.angle: _LOG, np.log1p: _real_axis(below=-1.0),
        np.arcsin: _real_axis(beyond=1.0), np.arccos: _real_axis(beyond=1.0), np.arctanh: _real_axis(beyond=1.0),
        np.arccosh: _real_axis(below=1.0), np.arctan: _imaginary_axis(1.0), np.arcsinh: _imaginary_axis(1.0),
        cmath.log: _LOG, cmath.log10: _LOG, cmath.sqrt: _LOG, cmath.phase: _LOG,
        cmath.asin: _real_axis(beyond=1.0), cmath.acos: _real_axis(beyond=1.0), cmath.atanh: _real_axis(beyond=1.0),
        cmath.acosh: _real_axis(below=1.0), cmath.atan: _imaginary_axis(1.0), cmath.asinh: _imaginary_axis(1.0)}
"""function -> (the test of an array of its complex argument's entries on its cut, the part of a tangent that
crosses it). The power functions (`np.power`, `operator.pow`: a base on the logarithm's cut, to an exponent
that is not an integer) are `_power_cut`'s."""

POWERS = (np.power, np.float_power, operator.pow)


def _values(x):
    while type(x).__name__ == "Dual":
        x = x.primal
    return x


def on_cut(fn, args) -> np.ndarray | None:
    """The entries of fn's complex argument (a boolean array of its shape, broadcast with the exponent's for a
    power) exactly on fn's cut, or None where none is (or the argument is real)."""
    if not args:
        return None
    z = _values(args[0])
    if not (isinstance(z, (complex, np.complexfloating)) or isinstance(z, np.ndarray) and z.dtype.kind == "c"):
        return None
    z = np.asarray(z)
    if fn in POWERS:
        if len(args) < 2:
            return None
        p = np.asarray(_values(args[1]))
        if p.dtype.kind in "biu":
            return None
        with np.errstate(invalid="ignore"):
            integral = (p.imag == 0) & (p.real == np.floor(p.real)) if p.dtype.kind == "c" else p == np.floor(p)
            hit = (z.imag == 0) & (z.real < 0) & ~integral
    else:
        with np.errstate(invalid="ignore"):
            hit = CUTS[fn][0](z)
    return hit if np.any(hit) else None


def crossing(fn, hit, tangent) -> bool:
    """The tangent moves an entry of `hit` across fn's cut."""
    t = _values(tangent)
    if t is None or type(t) is int and t == 0:
        return False
    part = "imag" if fn in POWERS else CUTS[fn][1]
    try:
        t = np.asarray(t)
        moving = getattr(t, part) != 0
        if moving.shape != hit.shape and moving.ndim > hit.ndim:  # (a chunk's directions, leading)
            moving = np.any(moving.reshape((moving.shape[0], *hit.shape)), axis=0)
        return bool(np.any(hit & moving))
    except (TypeError, ValueError):
        return True  # (a tangent of another kind: taken for moving)


def cut_text(fn, hit, args) -> str:
    name = getattr(fn, "__name__", "pow")
    z = np.ravel(np.asarray(_values(args[0]))[hit] if np.ndim(_values(args[0])) else _values(args[0]))[:3]
    return (f"{name} of a differentiated complex value exactly on its branch cut ({z!s:.60}): its value jumps "
            "across the cut, and the derivative of one side would come out")


CUT_FIX = ("differentiate at a point off the cut (a nonzero imaginary part), or compute the branch you mean "
        "(`np.arctan2(y, x)` with the cut where you want it)")
