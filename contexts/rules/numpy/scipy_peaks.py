"""scipy.signal's peak kernels (`_peak_finding_utils`, in Cython: under `find_peaks`, `peak_prominences` and
`peak_widths`). Without these a width or prominence of a differentiated signal was refused as a C function.

`_local_maxima_1d` (the peaks and their plateaus' edges) and `_select_by_peak_distance` (a mask) give integers
and flags only: no derivative. `_peak_prominences` and `_peak_widths` are given as the numpy code they compute
(`Rule.stand_in`), each of scipy's loops a search of the samples beside the peak, so the indices they give
(bases, crossings) are scipy's and the floats scipy's bit for bit: a prominence is the peak's value less the
higher of the two minima of its window (`x[peak] - max(x[left_base], x[right_base])`); a width is the distance
between the two crossings of the line at `x[peak] - rel_height * prominence`, each interpolated linearly
between the samples about it. Every engine differentiates them as that code, and judges their comparisons of
the data as its own: at a plateau, two equal minima or a crossing exactly on a sample the engines give the
mean of the two sides' slopes (`np.min`'s and `max`'s convention at a tie), or refuse; never one side's.

Checked against scipy's kernels and against central differences in tests/contexts/rules/test_peak_widths.py.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.signal import _peak_finding_utils as _kernels
from scipy.signal._peak_finding_utils import PeakPropertyWarning

from ..registry import registry

__all__ = ["peak_prominences", "peak_widths"]


def _first(stops) -> int:
    """The index of the first True of a bool array; its length where none is."""
    return int(np.argmax(stops)) if np.any(stops) else len(stops)


def _spread(value, side):
    """value as an array of side's shape: compared so, a tie of an entry with it is judged by every engine (jacfwd
    left a number's tangents against an array's unchecked: one side's slope at a plateau)."""
    return np.broadcast_to(value, np.shape(side))


def _base(x, peak, top, stop, step):
    """(the lowest of x from peak towards stop (inclusive) before x rises above top, or top; its index, the one
    nearest the peak where the lowest ties, or peak): the loop scipy runs for each base."""
    side = x[peak + 1:stop + 1] if step > 0 else x[stop:peak][::-1]  # (nearest the peak first)
    side = side[:_first(~(side <= _spread(top, side)))]  # (scipy's loop stops at a sample above top, or NaN)
    if not len(side):
        return top, peak
    lowest = np.min(side)
    if not lowest < top:  # (scipy keeps x[peak] where nothing is lower)
        return top, peak
    return lowest, peak + step * (int(np.argmin(side)) + 1)


def peak_prominences(x, peaks, wlen):
    """`_peak_finding_utils._peak_prominences`: (the prominences, left bases, right bases) of the peaks, each
    searched in the window of wlen samples about the peak (the whole signal where wlen < 2)."""
    n = np.shape(x)[0]
    prominences, left_bases, right_bases = [], [], []
    for peak in peaks:
        if not 0 <= peak <= n - 1:
            raise ValueError(f"peak {peak} is not a valid index for `x`")
        i_min, i_max = (max(peak - wlen // 2, 0), min(peak + wlen // 2, n - 1)) if 2 <= wlen else (0, n - 1)
        top = x[peak]
        left_min, left_base = _base(x, peak, top, i_min, -1)
        right_min, right_base = _base(x, peak, top, i_max, 1)
        prominences.append(top - max(left_min, right_min))
        left_bases.append(left_base)
        right_bases.append(right_base)
    prominences = np.array(prominences, dtype=np.float64)
    if np.count_nonzero(prominences) < len(prominences):  # (a count: no comparison of the data to judge)
        warnings.warn("some peaks have a prominence of 0", PeakPropertyWarning, stacklevel=2)
    return prominences, np.array(left_bases, dtype=np.intp), np.array(right_bases, dtype=np.intp)


def _crossing(x, peak, height, stop, step):
    """Where the line at height crosses x between peak and stop, interpolated between the samples about it: the
    loop scipy runs for each side of a width."""
    side = x[peak:stop:step]  # (from the peak towards stop, stop left out)
    i = peak + step * _first(~(_spread(height, side) < side))  # (the first sample not above height, or stop)
    place = float(i)
    if x[i] < height and x[i - step] != x[i]:
        place -= step * (height - x[i]) / (x[i - step] - x[i])
    return place


def peak_widths(x, peaks, rel_height, prominences, left_bases, right_bases):
    """`_peak_finding_utils._peak_widths`: (the widths, the heights they were measured at, the left and right
    crossings) of the peaks at rel_height of their prominences, between their bases."""
    if rel_height < 0:
        raise ValueError('`rel_height` must be greater or equal to 0.0')
    if not np.shape(peaks)[0] == np.shape(prominences)[0] == np.shape(left_bases)[0] == np.shape(right_bases)[0]:
        raise ValueError("arrays in `prominence_data` must have the same shape as `peaks`")
    n = np.shape(x)[0]
    widths, heights, left_ips, right_ips = [], [], [], []
    for p, peak in enumerate(peaks):
        i_min, i_max = left_bases[p], right_bases[p]
        if not 0 <= i_min <= peak <= i_max < n:
            raise ValueError(f"prominence data is invalid for peak {peak}")
        height = x[peak] - prominences[p] * rel_height
        left_ip = _crossing(x, peak, height, i_min, -1)
        right_ip = _crossing(x, peak, height, i_max, 1)
        widths.append(right_ip - left_ip)
        heights.append(height)
        left_ips.append(left_ip)
        right_ips.append(right_ip)
    widths = np.array(widths, dtype=np.float64)
    if np.count_nonzero(widths) < len(widths):
        warnings.warn("some peaks have a width of 0", PeakPropertyWarning, stacklevel=2)
    return widths, *(np.array(v, dtype=np.float64) for v in (heights, left_ips, right_ips))


registry.nondifferentiable(_kernels._local_maxima_1d, _kernels._select_by_peak_distance)
registry.set(_kernels._peak_prominences, stand_in=peak_prominences)
registry.set(_kernels._peak_widths, stand_in=peak_widths)
