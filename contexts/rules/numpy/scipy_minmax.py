"""scipy.ndimage's 1-D minimum/maximum filter kernel (`_nd_image.min_or_max_filter1d`, under
`maximum_filter1d`, `minimum_filter1d` and `maximum_filter`/`minimum_filter` with a `size` or a full box
footprint, which scipy runs as one 1-D pass per axis) written as the numpy code it computes
(`Rule.stand_in`): each output is the largest (smallest) entry of its window of the padded line, so every
engine differentiates it as `np.max` (`np.min`): the derivative goes to the entry chosen, split evenly where
entries tie, as `np.max`'s does. Checked against scipy's kernel for every mode, origin and axis, and against
finite differences, in tests/contexts/test_scipy_minmax_filter.py. A window longer than the line is refused
(its padding is not checked against scipy's there); the N-d kernel with another footprint has no rule.
"""

from __future__ import annotations

import numpy as np

from ..registry import registry
from ._util import unsupported

__all__ = ["min_or_max_filter1d"]

# scipy's mode codes (`_ni_support._extend_mode_to_code(mode)`) as numpy's pad modes
_PAD = {0: "edge", 1: "wrap", 2: "symmetric", 3: "reflect", 4: "constant", 5: "wrap", 6: "constant"}


def min_or_max_filter1d(x, size, axis, x_out, mode, cval, origin, minimum, /):
    """x_out = the minimum (minimum=1) or maximum of each window of `size` entries of x along axis, the
    window about i + origin, the line padded by mode."""
    n = np.shape(x)[axis]
    if size > n or mode not in _PAD:
        raise unsupported("scipy.ndimage's 1-D minimum/maximum filter",
                          f"a window of {size} over {n} entries" if size > n else f"the mode code {mode}",
                          "use a window no longer than the array along the axis")
    before = size // 2 + origin  # (the window's entries before its centre: 0 to size - 1, as scipy checks)
    after = size - 1 - before
    line = np.moveaxis(x, axis, -1)
    if _PAD[mode] == "constant":  # (np.pad's rule takes no constant_values: the ends built as arrays)
        ends = [np.full(np.shape(line)[:-1] + (k,), cval, dtype=np.result_type(x)) for k in (before, after)]
        padded = np.concatenate([ends[0], line, ends[1]], axis=-1)
    else:
        padded = np.pad(line, [(0, 0)] * (np.ndim(line) - 1) + [(before, after)], mode=_PAD[mode])
    windows = np.lib.stride_tricks.sliding_window_view(padded, size, axis=-1)
    picked = np.min(windows, axis=-1) if minimum else np.max(windows, axis=-1)
    x_out[...] = np.moveaxis(picked, -1, axis)


try:
    from scipy.ndimage import _nd_image
except ImportError:  # pragma: no cover
    _nd_image = None
if _nd_image is not None and hasattr(_nd_image, "min_or_max_filter1d"):
    registry.set(_nd_image.min_or_max_filter1d, stand_in=min_or_max_filter1d)
