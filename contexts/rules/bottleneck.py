"""bottleneck's C functions (NaN-aware reductions, moving windows, forward fill: pandas and empyrical compute
through them) given as what they compute: numpy code every engine differentiates as the code it is
(`Rule.stand_in`). Without this every call with a differentiated array was refused as a C function.

- reductions (`nansum`, `nanmean`, `nanstd`/`nanvar` with ddof, `nanmin`, `nanmax`, `median`, `nanmedian`,
  `ss`): numpy's functions, their result as bottleneck gives it (a Python number for a whole reduction, an int32
  array's sum kept int32); `nanmedian` along an axis by sorting (numpy's takes masked arrays there);
- moving windows (`move_sum`, `move_mean`, `move_std`, `move_var`, `move_min`, `move_max`, `move_median`): each
  entry's window of the array padded before its start with window - 1 NaNs (`sliding_window_view`), NaNs
  skipped and counted, NaN where fewer than min_count are not NaN. As bottleneck's running loops compute it: a
  variance over count - ddof unguarded, and NaN once an infinity has left a sum's window (a mean's; a
  variance's until its window empties), the limitation bottleneck documents. Each window is computed afresh:
  where bottleneck's running sums keep a rounding residue (a window left with one entry: a std of 1e-8 for 0,
  and inf for NaN with ddof=1) the values differ by it;
- `push`: forward fill by indexing with the position of the last non-NaN entry, at most n back;
- `partition`: the entries in bottleneck's own arrangement, taken by `bottleneck.argpartition`'s indices;
- `replace`: the entries equal to old set in place by indexing (`a[mask] = new`), a change the engines follow
  (forward mode refuses to write a dual into an array it cannot give tangents, a module's global one, as it
  refuses `np.copyto` there).

Integers, ranks and flags (`argpartition`, `rankdata`, `nanrankdata`, `nanargmin`, `nanargmax`, `anynan`,
`allnan`, `move_argmin`, `move_argmax`, `move_rank`) carry no derivative.

bottleneck's C loops take float64, float32, int64 and int32 arrays of native byte order; it hands every other
array to `bottleneck.slow`'s numpy code, and so do the stand-ins. Checked against bottleneck and central
differences in tests/contexts/test_bottleneck.py. Loaded when bottleneck is first imported (`leaves.DOMAINS`).
"""

from __future__ import annotations

import re
import warnings

import bottleneck
import bottleneck.slow
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .generic import is_dual
from .registry import registry

__all__ = ["nansum", "nanmean", "nanstd", "nanvar", "nanmin", "nanmax", "median", "nanmedian", "ss",
           "move_sum", "move_mean", "move_std", "move_var", "move_min", "move_max", "move_median", "push",
           "partition", "replace"]

# the dtypes of bottleneck's C loops (of native byte order: a swapped one goes to `bottleneck.slow` too)
_NATIVE = frozenset(np.dtype(t) for t in (np.float64, np.float32, np.int64, np.int32))
# bottleneck 1.6.1 copies the entries for move_mean's window of one (its running sum went NaN after an
# infinity before)
_MEAN_OF_ONE_COPIES = tuple(int(p) for p in re.findall(r"\d+", bottleneck.__version__)[:3]) >= (1, 6, 1)


def _is_integer(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


# -- reductions ---------------------------------------------------------------------------------------------

def _reduce(fn, a, axis, **kwargs):
    """fn(a, axis=axis), numpy's reduction, as bottleneck's C loop returns it: a Python number where it is one
    number, an int32 array's sum kept int32; quiet where numpy warns of an all-NaN or empty slice."""
    if axis is not None and not _is_integer(axis):
        raise TypeError("`axis` must be an integer or None")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        y = fn(a, axis=axis, **kwargs)
    if np.ndim(y) == 0:
        return float(y) if np.result_type(y).kind == "f" else int(y)
    if a.dtype == np.int32 and y.dtype == np.int64:
        return y.astype(np.int32)
    return y


def _sum_of_squares(a, axis=None):
    return np.sum(a * a, axis=axis)


def _reduction(name: str, fn, what: str):
    """The stand-in of bottleneck's reduction `name(a, axis=None)`: fn, numpy's, as `_reduce` returns it; an
    array of a dtype bottleneck's C loops do not take goes to `bottleneck.slow`, as bottleneck hands it."""
    slow = getattr(bottleneck.slow, name)

    def stand_in(a, axis=None):
        a = np.asarray(a)
        if a.dtype not in _NATIVE:
            return slow(a, axis=axis)
        return _reduce(fn, a, axis)
    stand_in.__name__ = stand_in.__qualname__ = name
    stand_in.__doc__ = f"`bottleneck.{name}`: {what}."
    return stand_in


def _reduction_ddof(name: str, fn, what: str):
    """`_reduction` of `name(a, axis=None, ddof=0)` (its ddof an integer, as bottleneck requires)."""
    slow = getattr(bottleneck.slow, name)

    def stand_in(a, axis=None, ddof=0):
        a = np.asarray(a)
        if a.dtype not in _NATIVE:
            return slow(a, axis=axis, ddof=ddof)
        if not _is_integer(ddof):
            raise TypeError("`ddof` must be an integer")
        return _reduce(fn, a, axis, ddof=ddof)
    stand_in.__name__ = stand_in.__qualname__ = name
    stand_in.__doc__ = f"`bottleneck.{name}`: {what}."
    return stand_in


nansum = _reduction("nansum", np.nansum, "np.nansum")
nanmean = _reduction("nanmean", np.nanmean, "np.nanmean")
nanstd = _reduction_ddof("nanstd", np.nanstd, "np.nanstd (NaN where ddof leaves no degree of freedom, as both give)")
nanvar = _reduction_ddof("nanvar", np.nanvar, "np.nanvar")
nanmin = _reduction("nanmin", np.nanmin, "np.nanmin (NaN for an all-NaN slice, an error for an empty one)")
nanmax = _reduction("nanmax", np.nanmax, "np.nanmax")


median = _reduction("median", np.median, "np.median (NaN for a slice holding one)")


def nanmedian(a, axis=None):
    """`bottleneck.nanmedian`: np.nanmedian of the whole array; along an axis by sorting, as move_median (numpy's
    own takes masked arrays there, which neither mode differentiates)."""
    a = np.asarray(a)
    if a.dtype not in _NATIVE:
        return bottleneck.slow.nanmedian(a, axis=axis)
    if axis is None or not _is_integer(axis) or a.size == 0:
        return _reduce(np.nanmedian, a, axis)
    return _reduce(_nanmedian_along, a, axis)


def _nanmedian_along(a, axis):
    line = np.moveaxis(a, axis, -1)
    count = np.sum(~np.isnan(line), axis=-1)
    return np.where(count > 0, _middle(np.sort(line, axis=-1), count), np.nan)


def _middle(ordered, count):
    """The median of the first `count` entries of each line of `ordered`, sorted along its last axis (NaNs sort
    last): the middle one, or the mean of the middle two for an even count."""
    low = np.take_along_axis(ordered, np.maximum(count - 1, 0)[..., None] // 2, axis=-1)[..., 0]
    high = np.take_along_axis(ordered, count[..., None] // 2, axis=-1)[..., 0]
    return (low + high) / 2


ss = _reduction("ss", _sum_of_squares, "the sum of the squares (NaNs kept), np.sum(a * a)")


# -- moving windows -----------------------------------------------------------------------------------------

def _windows(a, window, min_count, axis):
    """(the windows of `window` entries ending at each entry of a along axis, the line padded before its start
    with NaNs: shape (..., n, window); which of their entries are not NaN; how many; where that is at least
    min_count). bottleneck's checks of the arguments, with its messages."""
    if not _is_integer(window):
        raise TypeError("`window` must be an integer")
    if min_count is None:
        min_count = window
    elif not _is_integer(min_count):
        raise TypeError("`min_count` must be an integer or None")
    elif min_count > window:
        raise ValueError(f"min_count ({min_count}) cannot be greater than window ({window})")
    elif min_count <= 0:
        raise ValueError("`min_count` must be greater than zero.")
    if a.ndim == 0:
        raise ValueError("moving window functions require ndim > 0")
    if not _is_integer(axis):
        raise TypeError("`axis` must be an integer")
    if not -a.ndim <= axis < a.ndim:
        raise ValueError(f"axis(={axis}) out of bounds")
    n = a.shape[axis]
    if not 1 <= window <= n:
        raise ValueError(f"Moving window (={window}) must between 1 and {n}, inclusive")
    line = np.moveaxis(a, axis, -1)
    if line.dtype.kind != "f":  # (int64 and int32: bottleneck computes in float64)
        line = line.astype(np.float64)
    before = np.full(line.shape[:-1] + (window - 1,), np.nan, dtype=line.dtype)
    windows = sliding_window_view(np.concatenate([before, line], axis=-1), window, axis=-1)
    taken = ~np.isnan(windows)
    count = np.sum(taken, axis=-1)
    return windows, taken, count, count >= min_count


def _placed(y, enough, axis):
    """y (positions last) where enough entries were taken, else NaN, moved back to axis."""
    return np.moveaxis(np.where(enough, y, np.nan), -1, axis)


def _total(windows, taken):
    with np.errstate(invalid="ignore"):  # (inf - inf: NaN, quietly, as bottleneck's)
        return np.sum(np.where(taken, windows, 0), axis=-1)


def _mean(windows, taken, count):
    return _total(windows, taken) / np.maximum(count, 1).astype(windows.dtype)


def _infinity_gone(windows, window):
    """Where an infinity has left the window: bottleneck's running sum, inf - inf, is NaN from then on."""
    infinite = np.isinf(windows[..., -1])  # (the entry each position brings in)
    seen = np.cumsum(infinite, axis=-1)
    return np.concatenate([np.zeros_like(seen[..., :window]), seen[..., :-window]], axis=-1) > 0


def _variance_spoilt(windows, count, window):
    """Where bottleneck's running mean and sum of squared deviations are NaN: from an infinity's entry until
    the window empties again after it has left (the loop's only reset: count falling to 0 past the first
    window)."""
    at = np.arange(count.shape[-1])
    entered = np.maximum.accumulate(np.where(np.isinf(windows[..., -1]), at, -1), axis=-1)
    before = np.concatenate([np.ones_like(count[..., :1]), count[..., :-1]], axis=-1)
    reset = (count == 0) & (before > 0) & (at >= window)
    last_reset = np.maximum.accumulate(np.where(reset, at, -1), axis=-1)
    return entered > last_reset


def _undivided(squares):
    """A sum of squares over a zero denominator, as C divides: 0/0 is NaN, s/0 is inf (a constant)."""
    return np.where(squares == 0, np.nan, np.inf).astype(squares.dtype)


def _variance(windows, taken, count, window, ddof):
    """bottleneck's variance of each window: the sum of squared deviations over count - ddof, unguarded
    (0/0 is NaN, s/0 is inf, a negative denominator a negative variance)."""
    finite = taken & np.isfinite(windows)  # (a window holding an infinity is NaN, `_variance_spoilt`: its
    # arithmetic kept finite, so that no NaN reaches a derivative through it)
    deviations = np.where(finite, windows - _mean(windows, finite, count)[..., None], 0)
    squares = np.sum(deviations * deviations, axis=-1)
    denominator = (count - ddof).astype(windows.dtype)
    regular = denominator != 0
    variance = np.where(regular, squares / np.where(regular, denominator, 1), _undivided(squares))
    return np.where(_variance_spoilt(windows, count, window), np.nan, variance)


def move_sum(a, window, min_count=None, axis=-1):
    """`bottleneck.move_sum`: the sum of each window's non-NaN entries."""
    a = np.asarray(a)
    if a.dtype not in _NATIVE:
        return bottleneck.slow.move_sum(a, window, min_count, axis=axis)
    windows, taken, count, enough = _windows(a, window, min_count, axis)
    y = np.where(_infinity_gone(windows, window), np.nan, _total(windows, taken))
    return _placed(y, enough, axis)


def move_mean(a, window, min_count=None, axis=-1):
    """`bottleneck.move_mean`: the mean of each window's non-NaN entries."""
    a = np.asarray(a)
    if a.dtype not in _NATIVE:
        return bottleneck.slow.move_mean(a, window, min_count, axis=axis)
    windows, taken, count, enough = _windows(a, window, min_count, axis)
    y = _mean(windows, taken, count)
    if window > 1 or not _MEAN_OF_ONE_COPIES:
        y = np.where(_infinity_gone(windows, window), np.nan, y)
    return _placed(y, enough, axis)


def _moving_variance(name, a, window, min_count, axis, ddof):
    """(the variance of each window, where enough entries are not NaN, and that mask) for move_var and move_std;
    (bottleneck.slow's answer, None) for an array of a dtype bottleneck's C loops do not take."""
    a = np.asarray(a)
    if a.dtype not in _NATIVE:
        return getattr(bottleneck.slow, name)(a, window, min_count, axis=axis, ddof=ddof), None
    if not _is_integer(ddof):
        raise TypeError("`ddof` must be an integer")
    windows, taken, count, enough = _windows(a, window, min_count, axis)
    return _variance(windows, taken, count, window, ddof), enough


def move_var(a, window, min_count=None, axis=-1, ddof=0):
    """`bottleneck.move_var`: the variance of each window's non-NaN entries, over count - ddof."""
    variance, enough = _moving_variance("move_var", a, window, min_count, axis, ddof)
    return variance if enough is None else _placed(variance, enough, axis)


def move_std(a, window, min_count=None, axis=-1, ddof=0):
    """`bottleneck.move_std`: the square root of move_var's variance. Where that is 0 (one entry, or equal
    ones) the derivative taken is 0, as np.std's rule takes it: the variance's own derivative is 0 there."""
    variance, enough = _moving_variance("move_std", a, window, min_count, axis, ddof)
    if enough is None:
        return variance
    positive = variance > 0
    y = np.where(positive, np.sqrt(np.where(positive, variance, 1)), np.where(variance < 0, np.nan, variance))
    return _placed(y, enough, axis)


def move_min(a, window, min_count=None, axis=-1):
    """`bottleneck.move_min`: the least non-NaN entry of each window."""
    a = np.asarray(a)
    if a.dtype not in _NATIVE:
        return bottleneck.slow.move_min(a, window, min_count, axis=axis)
    windows, taken, count, enough = _windows(a, window, min_count, axis)
    return _placed(np.min(np.where(taken, windows, np.inf), axis=-1), enough, axis)


def move_max(a, window, min_count=None, axis=-1):
    """`bottleneck.move_max`: the greatest non-NaN entry of each window."""
    a = np.asarray(a)
    if a.dtype not in _NATIVE:
        return bottleneck.slow.move_max(a, window, min_count, axis=axis)
    windows, taken, count, enough = _windows(a, window, min_count, axis)
    return _placed(np.max(np.where(taken, windows, -np.inf), axis=-1), enough, axis)


def move_median(a, window, min_count=None, axis=-1):
    """`bottleneck.move_median`: the median of each window's non-NaN entries (sorted first: NaNs sort last),
    the mean of the middle two for an even count."""
    a = np.asarray(a)
    if a.dtype not in _NATIVE:
        return bottleneck.slow.move_median(a, window, min_count, axis=axis)
    windows, taken, count, enough = _windows(a, window, min_count, axis)
    return _placed(_middle(np.sort(windows, axis=-1), count), enough, axis)


# -- forward fill and partition ---------------------------------------------------------------------------

def push(a, n=None, axis=-1):
    """`bottleneck.push`: each NaN replaced by the last non-NaN entry before it along axis, if that is at most
    n entries back (n None: any), by indexing."""
    a = np.asarray(a)
    if a.dtype not in _NATIVE:
        return bottleneck.slow.push(a, n, axis=axis)
    if n is not None and not _is_integer(n):
        raise TypeError("`n` must be an integer")
    if n is not None and n < 0:
        raise ValueError("`n` must be nonnegative")
    if axis is None:
        raise ValueError("`axis` cannot be None")
    if not _is_integer(axis):
        raise TypeError("`axis` must be an integer")
    if not -a.ndim <= axis < a.ndim:
        raise ValueError(f"axis(={axis}) out of bounds")
    if a.dtype.kind != "f":  # (integers hold no NaN: a copy, as bottleneck's)
        return a.copy()
    line = np.moveaxis(a, axis, -1)
    at = np.arange(line.shape[-1])
    last = np.maximum.accumulate(np.where(np.isnan(line), -1, at), axis=-1)  # (-1: none yet)
    filled = (last >= 0) if n is None else (last >= 0) & (at - last <= n)
    y = np.where(filled, np.take_along_axis(line, np.maximum(last, 0), axis=-1), line)
    return np.moveaxis(y, -1, axis)


def partition(a, kth, axis=-1):
    """`bottleneck.partition`: a's entries in the order bottleneck's selection leaves them, taken by the indices
    of `bottleneck.argpartition` (the same selection on the same values: the same arrangement)."""
    a = np.asarray(a)
    if a.dtype not in _NATIVE:
        return bottleneck.slow.partition(a, kth, axis)
    order = bottleneck.argpartition(a, kth, axis)
    if axis is None:
        return np.ravel(a)[order]
    return np.take_along_axis(a, order, axis=axis)


def _is_number(x) -> bool:
    """x is what C reads as a double (`PyFloat_AsDouble`): a float, an integer, a 0-d array, a dual."""
    return hasattr(type(x), "__float__") or hasattr(type(x), "__index__")


def replace(a, old, new):
    """`bottleneck.replace`: the entries of a equal to old (NaN: a's NaNs) set to new in place, by `a[mask] = new`,
    a change in place the engines follow; returns a, as bottleneck's C loop does (its `bottleneck.slow` code,
    for other dtypes, None)."""
    if not (isinstance(a, np.ndarray) or is_dual(a)):
        raise TypeError("works in place so input must be an array, not (e.g.) a list")
    if not _is_number(old):
        raise TypeError("`old` must be a number")
    if not _is_number(new):
        raise TypeError("`new` must be a number")
    old = float(old)  # (as C reads it, a double: numpy compares a Python float in a's dtype, as C casts it)
    native = a.dtype in _NATIVE
    if a.dtype.kind not in "fc":  # (integers: no NaN to replace, and old and new must be integers)
        if np.isnan(old):
            return a if native else None
        if int(old) != old:
            raise ValueError("Cannot safely cast `old` to int")
        if int(new) != new:
            raise ValueError("Cannot safely cast `new` to int")
    if np.isnan(old):
        a[np.isnan(a)] = new
    else:
        a[a == old] = new
    return a if native else None


_STAND_INS = {bottleneck.nansum: nansum, bottleneck.nanmean: nanmean, bottleneck.nanstd: nanstd,
              bottleneck.nanvar: nanvar, bottleneck.nanmin: nanmin, bottleneck.nanmax: nanmax,
              bottleneck.median: median, bottleneck.nanmedian: nanmedian, bottleneck.ss: ss,
              bottleneck.move_sum: move_sum, bottleneck.move_mean: move_mean, bottleneck.move_std: move_std,
              bottleneck.move_var: move_var, bottleneck.move_min: move_min, bottleneck.move_max: move_max,
              bottleneck.move_median: move_median, bottleneck.push: push, bottleneck.partition: partition,
              bottleneck.replace: replace}
for _fn, _stand_in in _STAND_INS.items():
    registry.set(_fn, stand_in=_stand_in)

registry.nondifferentiable(bottleneck.argpartition, bottleneck.rankdata, bottleneck.nanrankdata,
                           bottleneck.nanargmin, bottleneck.nanargmax, bottleneck.anynan, bottleneck.allnan,
                           bottleneck.move_argmin, bottleneck.move_argmax, bottleneck.move_rank)
