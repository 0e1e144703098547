"""Rules for numpy's 1-D correlation kernels, the C functions under `np.correlate` (`correlate2`) and
`np.convolve` (`correlate`, handed the reversed kernel), every mode ('valid', 'same', 'full' or 0, 1, 2).

Both are bilinear. Each is the full correlation z = convolve(p, conj?(q)[::-1]) cut to the mode's
window: `correlate2(a, v)` conjugates v and, when v is the longer, centres 'same' one place later;
`correlate(a, v)` conjugates nothing and works on the longer argument first. The pullback pads dy back
to the full length and correlates it with the other argument ('valid' mode), as in autograd.

>>> import numpy as np
>>> from contexts import gradient
>>> gradient(lambda x: np.sum(np.convolve(x, [1.0, 2.0])), np.ones(3))[0]
array([3., 3., 3.])
"""

from __future__ import annotations

import numpy as np

from numpy._core import multiarray

from ..leaves import as_array  # np.asarray, but a dask array is left as it is
from ..registry import registry
from ..sparsity_specs import DENSE
from ._util import match_primal, unsupported, zeros

__all__ = ["correlate_adjoint", "correlate2_adjoint"]

_MODES = {0: 0, 1: 1, 2: 2, "v": 0, "s": 1, "f": 2}


def _mode(mode) -> int:
    """0 (valid), 1 (same) or 2 (full) from numpy's spellings of a correlation mode."""
    key = mode[:1].lower() if isinstance(mode, str) else mode
    if key not in _MODES:
        raise unsupported("np.correlate", f"mode={mode!r}", "use 'valid', 'same' or 'full'")
    return _MODES[key]


def _window(n_p, n_q, mode, later) -> int:
    """Where the mode's output starts in the full correlation of lengths n_p and n_q."""
    n = min(n_p, n_q)
    if mode == 0:
        return n - 1
    if mode == 1:
        return n // 2 if later else (n - 1) // 2
    return 0


def _full_cotangent(dy, n_full, start):
    """dy placed at its window in zeros of the full correlation's length."""
    dy = as_array(dy)
    full = zeros((n_full,), np.result_type(dy, float), dy)  # (a dual array for a dual dy)
    full[start:start + dy.size] = dy
    return full


def _pullback(dz, p, q, conj_q):
    """Cotangents of p and q for the full correlation z = convolve(p, Q[::-1]), Q = conj(q) or q."""
    dp = multiarray.correlate2(dz, np.conj(q)[::-1] if conj_q else q[::-1], 0)
    dq = multiarray.correlate2(dz, p, 0)[::-1]
    return dp, (np.conj(dq) if conj_q else dq)


def _operands(a, v):
    a_, v_ = as_array(a), as_array(v)
    if a_.ndim != 1 or v_.ndim != 1:
        raise unsupported("np.correlate", "arguments that are not 1-D", "pass 1-D arrays")
    return a_, v_


def correlate2_adjoint(dy, y, a, v, mode=0, **kwargs):
    """Pullback of correlate2(a, v, mode) (np.correlate): z[k] = sum_n a[n + k] conj(v[n])."""
    if dy is None:
        return None, None, None
    a_, v_ = _operands(a, v)
    start = _window(a_.size, v_.size, _mode(mode), later=v_.size > a_.size)
    dz = _full_cotangent(dy, a_.size + v_.size - 1, start)
    da, dv = _pullback(dz, a_, v_, conj_q=True)
    return match_primal(da, a), match_primal(dv, v), None


def correlate_adjoint(dy, y, a, v, mode=0, **kwargs):
    """Pullback of numpy's older correlate(a, v, mode) (np.convolve with v reversed): no conjugate, the
    longer argument first."""
    if dy is None:
        return None, None, None
    a_, v_ = _operands(a, v)
    swap = v_.size > a_.size
    p, q = (v_, a_) if swap else (a_, v_)
    dz = _full_cotangent(dy, a_.size + v_.size - 1, _window(p.size, q.size, _mode(mode), later=False))
    dp, dq = _pullback(dz, p, q, conj_q=False)
    da, dv = (dq, dp) if swap else (dp, dq)
    return match_primal(da, a), match_primal(dv, v), None


def _bilinear_frule(fn):
    """frule of a map bilinear in its first two arguments (conjugate-linear in the second for
    correlate2, whose tangent along dv is then exactly correlate2(a, dv))."""
    def frule(tangents, a, v, *rest, **kwargs):
        y = fn(a, v, *rest, **kwargs)
        kwargs = {k: val for k, val in kwargs.items() if k != "out"} if "out" in kwargs else kwargs
        ta, tv = (tuple(tangents) + (None, None))[:2]
        dy = None
        if ta is not None:
            dy = fn(as_array(ta), v, *rest, **kwargs)
        if tv is not None:
            term = fn(a, as_array(tv), *rest, **kwargs)
            dy = term if dy is None else dy + term
        return y, dy
    frule.__name__ = frule.__qualname__ = f"{fn.__name__}_frule"
    return frule


registry.adjoint(multiarray.correlate2, kind="bilinear")(correlate2_adjoint)
registry.frule(multiarray.correlate2, kind="bilinear")(_bilinear_frule(multiarray.correlate2))
registry.adjoint(multiarray.correlate, kind="bilinear")(correlate_adjoint)
registry.frule(multiarray.correlate, kind="bilinear")(_bilinear_frule(multiarray.correlate))
# sparsity: conservative (the band of a convolution is not worked out)
registry.sparsity(DENSE, np.convolve, np.correlate, multiarray.correlate2, multiarray.correlate)
