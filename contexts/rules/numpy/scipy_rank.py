"""scipy.ndimage's 1-D rank filter kernel (`_rank_filter_1d.rank_filter`, under `median_filter`,
`rank_filter`, `percentile_filter` of 1-D arrays and `scipy.signal.medfilt`) written as the numpy code it
computes (`Rule.stand_in`): each output is the element of the given rank in its window of the padded input,
so every engine differentiates it as a sort (the derivative goes to the element chosen). Checked against
scipy's kernel for every mode, origin and rank, and against finite differences, in
tests/contexts/test_scipy_rank_filter.py. A window longer than the array is refused (scipy's kernel reads
past its buffers there); the N-d kernel has no rule (refused by name, as before).
"""

from __future__ import annotations

import numpy as np

from ..registry import registry
from ._util import unsupported

__all__ = ["rank_filter"]

# scipy's mode codes (`_ni_support._extend_mode_to_code(mode, is_filter=True)`) as numpy's pad modes
_PAD = {0: "edge", 1: "wrap", 2: "symmetric", 3: "reflect", 4: "constant"}


def rank_filter(x, rank, win_len, x_out, mode, cval, origin, /):
    """x_out[i] = the rank-th smallest of x's window of win_len elements about i + origin (padded by mode)."""
    n = np.shape(x)[0]
    if win_len > n or mode not in _PAD:
        raise unsupported("scipy.ndimage's 1-D rank filter", f"a window of {win_len} over {n} elements"
                          if win_len > n else f"the mode code {mode}", "use a window no longer than the array")
    before = win_len // 2 + origin  # (the window's elements before its centre)
    after = win_len - 1 - before
    lo, hi = max(before, 0), max(after, 0)
    if mode == 4:  # (cval, computed by scipy from x's dtype, is no keyword of np.pad here: pad's rule takes none)
        padded = np.concatenate([np.full(lo, cval, dtype=np.result_type(x)), x, np.full(hi, cval, dtype=np.result_type(x))])
    else:
        padded = np.pad(x, (lo, hi), mode=_PAD[mode])
    start = lo - before
    windows = np.lib.stride_tricks.sliding_window_view(padded, win_len)[start:start + n]
    x_out[...] = np.sort(windows, axis=-1)[:, rank]


try:
    from scipy.ndimage import _rank_filter_1d
except ImportError:  # (scipy before its 1-D kernel)
    _rank_filter_1d = None
if _rank_filter_1d is not None and hasattr(_rank_filter_1d, "rank_filter"):
    registry.set(_rank_filter_1d.rank_filter, stand_in=rank_filter)
