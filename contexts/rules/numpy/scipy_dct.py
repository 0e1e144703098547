"""Rules for scipy's real-to-real transforms: the discrete cosine and sine transforms of `scipy.fft` and
`scipy.fftpack` (dct, idct, dst, idst; types 1 to 4, every `norm=`, `n=` padding or cropping, `axis=`).

Each is a real linear map along one axis: its tangent is the same transform of the tangent (same type, n,
norm), and its cotangent the transposed map. With norm="ortho" and no padding or cropping the map is
orthogonal (checked for each function and type when this module loads): the transpose is the inverse
transform, one call. Otherwise the transpose is read from the map's matrix along the axis, made by the
transform of the identity (one call, n x n entries; refused beyond `MATRIX_LIMIT` entries per side, naming
norm="ortho"). python_speech_features' mfcc takes `dct(..., type=2, norm="ortho")` of log filterbank energies.

Sparsity: DENSE along the axis (an over-approximation along the others).
"""

from __future__ import annotations

import numpy as np

from ..registry import registry
from ..sparsity_specs import DENSE
from ._util import is_dual, match_primal, unsupported

__all__: list[str] = []

MATRIX_LIMIT = 2048
"""The longest axis whose transpose is taken from the map's matrix (norm other than "ortho", or n= given)."""

_INVERSE = {"dct": "idct", "idct": "dct", "dst": "idst", "idst": "dst"}


def _options(args, kwargs):
    """(type, n, axis, norm, orthogonalize) of a call, positional or by keyword, as the function reads them."""
    names = ("type", "n", "axis", "norm", "overwrite_x", "workers", "orthogonalize")
    given = dict(zip(names, args))
    given.update(kwargs)
    return (int(given.get("type", 2)), given.get("n"), int(given.get("axis", -1)), given.get("norm"),
            given.get("orthogonalize"))


def _call(fn, v, kind, n, axis, norm, orth, scipy_fft):
    kw = dict(type=kind, n=n, axis=axis, norm=norm)
    if scipy_fft and orth is not None:
        kw["orthogonalize"] = orth
    return fn(v, **kw)


def _make(module, name, scipy_fft, orthogonal_types):
    fn = getattr(module, name)
    inverse = getattr(module, _INVERSE[name])

    def adjoint(dy, y, x, *args, **kwargs):
        rest = (None,) * len(args)
        if dy is None:
            return (None,) + rest
        kind, n, axis, norm, orth = _options(args, kwargs)
        g = np.asarray(dy)
        if np.iscomplexobj(x) or np.iscomplexobj(g):
            raise unsupported(f"scipy {name}", "a complex array", "transform the real and imaginary parts apart")
        size = np.shape(x)[axis]
        if norm == "ortho" and (n is None or n == size) and orth in (None, True) and kind in orthogonal_types:
            dx = _call(inverse, g, kind, None, axis, "ortho", orth, scipy_fft)
        else:
            out = np.shape(g)[axis]
            if max(size, out) > MATRIX_LIMIT:
                raise unsupported(f"scipy {name}", f"norm={norm!r} or n= on an axis of {max(size, out)} entries "
                                  "(its transpose is taken from the map's matrix)", 'use norm="ortho"')
            M = _call(fn, np.eye(size), kind, n, -1, norm, orth, scipy_fft)  # (row j: the map of e_j)
            dx = np.moveaxis(np.moveaxis(g, axis, -1) @ M.T, -1, axis)
        return (match_primal(dx, x),) + rest

    def frule(tangents, x, *args, **kwargs):
        y = fn(x, *args, **kwargs)
        dx = tangents[0] if tangents else None
        if dx is None:
            return y, None
        kind, n, axis, norm, orth = _options(args, kwargs)
        return y, _call(fn, dx if is_dual(dx) else np.asarray(dx), kind, n, axis, norm, orth, scipy_fft)

    adjoint.__name__ = adjoint.__qualname__ = f"{name}_adjoint"
    frule.__name__ = frule.__qualname__ = f"{name}_frule"
    registry.adjoint(fn, kind="linear")(adjoint)
    registry.frule(fn, kind="linear")(frule)
    registry.sparsity(DENSE, fn)


def _orthogonal_types(module, name, scipy_fft) -> frozenset:
    """The types whose norm="ortho" map is orthogonal here (the transpose is the inverse): checked on 6 points."""
    fn, out = getattr(module, name), set()
    for kind in (1, 2, 3, 4):
        try:
            M = _call(fn, np.eye(6), kind, None, -1, "ortho", None, scipy_fft)
        except Exception:  # (a type this scipy lacks)
            continue
        if np.allclose(M @ M.T, np.eye(6), atol=1e-12):
            out.add(kind)
    return frozenset(out)


try:  # scipy is optional
    import scipy.fft as _scipy_fft
    import scipy.fftpack as _fftpack
except ImportError:  # pragma: no cover
    _scipy_fft = _fftpack = None
if _scipy_fft is not None:
    for _module, _scipy in ((_scipy_fft, True), (_fftpack, False)):
        for _name in ("dct", "idct", "dst", "idst"):
            _make(_module, _name, _scipy, _orthogonal_types(_module, _name, _scipy))
