"""pandas' Cython kernels met by a Series or DataFrame computing on differentiated values, in reverse mode.

Each primal is pandas' own (the kernel called as it is); the adjoint is numpy, in O(n):

- `ops_dispatch.maybe_dispatch_ufunc_to_dunder_op` (numpy's ufuncs on a Series): a stand-in, the Python it is;
- `algos.ensure_float64` and `algos.diff_2d`: stand-ins, the numpy they compute (differentiated as code);
- `algos.take_*` (index alignment, `reindex`, `shift` by positions): a stand-in, `out[...] = values[indexer]`
  with the fill value where the indexer is -1;
- `window.aggregations.roll_sum`, `roll_mean`, `roll_var`: linear in the values of each window (the variance
  quadratic), their cotangents spread over the windows by difference arrays; the NaN output of a window with
  fewer than `min_periods` values takes none: pandas fills it with a constant;
- `window.aggregations.roll_max`, `roll_min`: each output's cotangent to its window's extreme; a tie (two equal
  values extreme in one window) refused;
- `window.aggregations.ewm`: linear in the values, `y[i] = a[i] y[i-1] + b[i] x[i]`, with a and b replayed from
  pandas' loop on the NaN pattern (adjust, ignore_na, min_periods); the replay is checked against pandas' own
  result and refused where it differs (times given as deltas are refused).

The other kernels (`roll_apply`, `roll_median_c`, `roll_quantile`, `rank_1d`, group-bys, ...) have no rule: a
differentiated array reaching one is refused by name (`NoRuleError`), never given a wrong derivative.

Loaded with `contexts.rules.pandas`.
"""

from __future__ import annotations

import numpy as np
from pandas._libs import algos as _algos
from pandas._libs.window import aggregations as _agg

from .registry import NoRuleError, registry
from .sparsity_specs import DENSE

__all__ = ["maybe_dispatch_ufunc_to_dunder_op", "ensure_float64", "diff_2d", "pad_inplace", "backfill_inplace", "take_1d", "take_2d_axis0", "take_2d_axis1"]


# -- stand-ins: the numpy the kernel computes ------------------------------------------------------------

def ensure_float64(arr):
    """`algos.ensure_float64`: a float64 array itself, another array converted (a copy), else `np.asarray`."""
    if isinstance(arr, np.ndarray):
        if arr.dtype == np.float64:
            return arr
        return arr.astype(np.float64)
    return np.asarray(arr, dtype=np.float64)


def diff_2d(arr, out, periods, axis, datetimelike=False):
    """`algos.diff_2d` of a float array: `out` along `axis` is arr minus arr `periods` back, the first (last,
    for a negative period) rows left as they were (pandas fills them with NaN before)."""
    if datetimelike or arr.dtype.kind != "f":
        raise NoRuleError("pandas' diff_2d of an array that is not of floats has no reverse rule")
    n = arr.shape[axis]
    if periods >= 0:
        dst, src = slice(periods, n), slice(0, max(n - periods, 0))
    else:
        dst, src = slice(0, max(n + periods, 0)), slice(-periods, n)
    ix_dst = (slice(None),) * axis + (dst,)
    ix_src = (slice(None),) * axis + (src,)
    out[ix_dst] = arr[ix_dst] - arr[ix_src]


def take_1d(values, indexer, out, fill_value=np.nan, allow_fill=True):
    """`algos.take_1d_<in>_<out>`: out[i] = values[indexer[i]], the fill value where indexer[i] is -1 (without
    allow_fill, an indexer of -1 is undefined in pandas: it holds none)."""
    if not allow_fill:
        out[...] = values[indexer]
        return
    missing = indexer == -1
    safe = np.where(missing, 0, indexer) if len(values) else np.zeros_like(indexer)
    if len(values):
        out[...] = values[safe]
    if missing.any():
        out[missing] = fill_value


def take_2d_axis0(values, indexer, out, fill_value=np.nan, allow_fill=True):
    """`algos.take_2d_axis0_<in>_<out>`: rows of values by indexer, the fill value where it is -1."""
    if not allow_fill:
        out[...] = values[indexer, :]
        return
    missing = indexer == -1
    if values.shape[0]:
        out[...] = values[np.where(missing, 0, indexer), :]
    if missing.any():
        out[missing, :] = fill_value


def take_2d_axis1(values, indexer, out, fill_value=np.nan, allow_fill=True):
    """`algos.take_2d_axis1_<in>_<out>`: columns of values by indexer, the fill value where it is -1."""
    if not allow_fill:
        out[...] = values[:, indexer]
        return
    missing = indexer == -1
    if values.shape[1]:
        out[...] = values[:, np.where(missing, 0, indexer)]
    if missing.any():
        out[:, missing] = fill_value


def _filled_from(mask, limit, backward: bool, one_d: bool = False):
    """(where a fill writes, the position along the last axis each reads): the nearest unmasked entry before
    (after, `backward`) a masked one, within `limit` steps. As pandas' loop: the first (last) entry, masked or
    not, is where a fill starts, and is itself never filled; the 1-d loops count a masked first (last) entry as
    one of the limit's steps."""
    n = mask.shape[-1]
    if limit is not None and (not isinstance(limit, (int, np.integer)) or limit < 1):
        raise ValueError("Limit must be greater than 0")
    pos = np.arange(n)
    masked = mask.astype(bool)
    if backward:
        src = np.minimum.accumulate(np.where(masked, n - 1, pos)[..., ::-1], axis=-1)[..., ::-1]
        steps = src - pos
    else:
        src = np.maximum.accumulate(np.where(masked, 0, pos), axis=-1)
        steps = pos - src
    if one_d:
        steps = steps + np.take_along_axis(masked, src, axis=-1)
    fill = masked & (pos != src) & (steps <= (n if limit is None else limit))
    return fill, src


def _fill_inplace(backward: bool):
    def fill_inplace(values, mask, limit=None):
        """`algos.pad_inplace`/`pad_2d_inplace`/`backfill_inplace`/`backfill_2d_inplace` (`ffill`, `bfill`,
        `mask`'s and `where`'s fills): each masked entry takes the nearest unmasked one before (after, for a
        backfill) along the last axis, within `limit` steps (see `_filled_from`), its mask as pandas' loops leave it. In place
        into values and mask, as pandas' loop (checked against it on random masks: tests/contexts/
        test_pandas_frame_arithmetic.py)."""
        if values.shape[-1] == 0:
            return
        fill, src = _filled_from(np.asarray(mask), limit, backward, one_d=values.ndim == 1)
        if not fill.any():
            return
        taken = np.take_along_axis(values, src, axis=-1)
        values[fill] = taken[fill]
        # (pandas' 2-d loops unmask what they fill; its 1-d loops give it the mask of the entry it was filled from)
        mask[fill] = 0 if values.ndim == 2 else np.take_along_axis(np.asarray(mask), src, axis=-1)[fill]
    return fill_inplace


pad_inplace = _fill_inplace(backward=False)
backfill_inplace = _fill_inplace(backward=True)


_DISPATCHED = frozenset({"add", "sub", "mul", "pow", "mod", "floordiv", "truediv", "divmod", "eq", "ne", "lt", "gt",
                         "le", "ge", "remainder", "matmul", "or", "xor", "and", "neg", "pos", "abs"})
_UNARY = frozenset({"neg", "pos", "abs"})
_ALIASES = {"subtract": "sub", "multiply": "mul", "floor_divide": "floordiv", "true_divide": "truediv",
            "power": "pow", "remainder": "mod", "divide": "truediv", "equal": "eq", "not_equal": "ne", "less": "lt",
            "less_equal": "le", "greater": "gt", "greater_equal": "ge", "bitwise_or": "or", "bitwise_and": "and",
            "bitwise_xor": "xor", "negative": "neg", "absolute": "abs", "positive": "pos"}
_REVERSED = {"lt": "__gt__", "le": "__ge__", "gt": "__lt__", "ge": "__le__", "eq": "__eq__", "ne": "__ne__"}


def _not_implemented(*args, **kwargs):
    return NotImplemented


def maybe_dispatch_ufunc_to_dunder_op(self, ufunc, method, *inputs, **kwargs):
    """`ops_dispatch.maybe_dispatch_ufunc_to_dunder_op`: numpy's arithmetic ufunc on a Series (`np.add(s, 1)`) as
    the Series' own operator method (`s.__add__(1)`), NotImplemented for any other (`np.log(s)`: pandas then
    applies it to the values)."""
    op_name = _ALIASES.get(ufunc.__name__, ufunc.__name__)
    if kwargs or ufunc.nin > 2:
        return NotImplemented
    if method == "__call__" and op_name in _DISPATCHED:
        if inputs[0] is self:
            meth = getattr(self, f"__{op_name}__", _not_implemented)
            if op_name in _UNARY:
                return meth()
            return meth(inputs[1])
        if inputs[1] is self:
            meth = getattr(self, _REVERSED.get(op_name, f"__r{op_name}__"), _not_implemented)
            return meth(inputs[0])
    return NotImplemented


def _register_stand_ins() -> None:
    from pandas._libs import ops_dispatch

    registry.set(ops_dispatch.maybe_dispatch_ufunc_to_dunder_op, stand_in=maybe_dispatch_ufunc_to_dunder_op)
    registry.set(_algos.ensure_float64, stand_in=ensure_float64)
    registry.set(_algos.diff_2d, stand_in=diff_2d)
    for name, fill in (("pad_inplace", pad_inplace), ("pad_2d_inplace", pad_inplace),
                       ("backfill_inplace", backfill_inplace), ("backfill_2d_inplace", backfill_inplace)):
        if hasattr(_algos, name):
            registry.set(getattr(_algos, name), stand_in=fill)
    for name in dir(_algos):
        if name.startswith("take_1d_") and "float" in name.split("_")[-1] and "float" in name.split("_")[-2]:
            registry.set(getattr(_algos, name), stand_in=take_1d)
        elif name.startswith("take_2d_axis0_") and name.endswith("float64_float64"):
            registry.set(getattr(_algos, name), stand_in=take_2d_axis0)
        elif name.startswith("take_2d_axis1_") and name.endswith("float64_float64"):
            registry.set(getattr(_algos, name), stand_in=take_2d_axis1)


_register_stand_ins()


# -- moving windows ----------------------------------------------------------------------------------------

def _windows(values, start, end):
    """Per window: the count of its values that are not NaN, and the mask of those values."""
    observed = ~np.isnan(values)
    c = np.concatenate(([0], np.cumsum(observed)))
    start, end = np.asarray(start, dtype=np.intp), np.asarray(end, dtype=np.intp)
    return c[end] - c[start], observed, start, end


def _spread(weights, start, end, n):
    """s[j] = sum of weights[i] over the windows i holding j (a difference array, summed)."""
    d = np.zeros(n + 1)
    np.add.at(d, start, weights)
    np.add.at(d, end, -weights)
    return np.cumsum(d)[:n]


def _taken(dy, y, counts, minp):
    """The cotangents of the outputs pandas computed from their windows (enough values); an output of a window
    with fewer, pandas' constant NaN, takes none."""
    return np.where(counts >= max(minp, 1), dy, 0.0)


def _check_windows(start, end, n) -> None:
    if len(start) != n or len(end) != n:
        raise NoRuleError("pandas' moving window of another length than its values (a step) has no reverse rule")


@registry.adjoint(_agg.roll_sum)
def roll_sum_adjoint(dy, y, values, start, end, minp):
    counts, observed, start, end = _windows(values, start, end)
    _check_windows(start, end, len(values))
    g = _taken(dy, y, counts, minp)
    return (np.where(observed, _spread(g, start, end, len(values)), 0.0), None, None, None)


@registry.adjoint(_agg.roll_mean)
def roll_mean_adjoint(dy, y, values, start, end, minp):
    counts, observed, start, end = _windows(values, start, end)
    _check_windows(start, end, len(values))
    g = _taken(dy, y, counts, minp)
    w = np.divide(g, counts, out=np.zeros(len(g)), where=counts > 0)
    return (np.where(observed, _spread(w, start, end, len(values)), 0.0), None, None, None)


@registry.adjoint(_agg.roll_var)
def roll_var_adjoint(dy, y, values, start, end, minp, ddof=1):
    """d var_i / d x_j = 2 (x_j - m_i) / (n_i - ddof) for x_j in window i (a window of one value: 0)."""
    counts, observed, start, end = _windows(values, start, end)
    _check_windows(start, end, len(values))
    x = np.where(observed, values, 0.0)
    c = np.concatenate(([0.0], np.cumsum(x)))
    means = np.divide(c[end] - c[start], counts, out=np.zeros(len(counts)), where=counts > 0)
    g = _taken(dy, y, counts, minp)
    g = np.where(counts - ddof > 0, g, 0.0)
    w = np.divide(2.0 * g, counts - ddof, out=np.zeros(len(g)), where=counts - ddof > 0)
    n = len(values)
    a = _spread(w, start, end, n)
    b = _spread(w * means, start, end, n)
    return (np.where(observed, a * x - b, 0.0), None, None, None, None)


def _extreme_adjoint(pick, name):
    """The adjoint of `roll_max` / `roll_min`: each output's cotangent to the one value of its window that is the
    extreme (NaN values skipped); a window whose extreme is tied (two equal values) refused: there the branches
    meet and no derivative is the function's; one whose extreme is not pandas' output, refused."""
    def adjoint(dy, y, values, start, end, minp):
        counts, observed, start, end = _windows(values, start, end)
        g = _taken(dy, y, counts, minp)
        out = np.zeros(len(values))
        for i in np.flatnonzero(g):
            window = values[start[i]:end[i]]
            best = pick(window)
            hits = np.flatnonzero(window == best)
            if best != y[i]:
                raise NoRuleError(f"pandas' {name}: its extreme could not be found again for the reverse rule")
            if len(hits) != 1:
                raise NoRuleError(f"reverse mode does not differentiate pandas' {name} at a tie (two equal values "
                                  "extreme in one window): there the branches meet", fix="differentiate at a point "
                                  "off the tie")
            out[start[i] + hits[0]] += g[i]
        return (out, None, None, None)
    return adjoint


registry.adjoint(_agg.roll_max)(_extreme_adjoint(np.nanmax, "roll_max"))
registry.adjoint(_agg.roll_min)(_extreme_adjoint(np.nanmin, "roll_min"))


# -- exponentially weighted windows ------------------------------------------------------------------------

def _ewm_coefficients(vals, minp, com, adjust, ignore_na, normalize):
    """(a, b, da, db, shown) of pandas' `ewm` loop over one window: weighted[i] = a[i] weighted[i-1] + b[i] vals[i],
    da and db their derivatives with respect to com, and whether output i is shown (enough observations) —
    replayed on the NaN pattern, as pandas' loop runs."""
    n = len(vals)
    a, b, da, db = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
    shown = np.zeros(n, dtype=bool)
    alpha = 1.0 / (1.0 + com)
    dalpha = -alpha * alpha
    factor, dfactor = 1.0 - alpha, -dalpha
    new_wt, dnew = (1.0, 0.0) if adjust else (alpha, dalpha)
    observed = vals == vals
    started = bool(observed[0])  # weighted is not NaN
    b[0] = 1.0
    nobs = int(observed[0])
    shown[0] = nobs >= minp
    old_wt, dold = 1.0, 0.0
    for i in range(1, n):
        obs = bool(observed[i])
        nobs += obs
        if started:
            a[i] = 1.0
            if obs or not ignore_na:
                if normalize:
                    old_wt, dold = old_wt * factor, dold * factor + old_wt * dfactor
                else:
                    a[i], da[i] = factor, dfactor
            if obs:
                if normalize:
                    total = old_wt + new_wt
                    a[i], b[i] = old_wt / total, new_wt / total
                    da[i] = (dold * new_wt - old_wt * dnew) / (total * total)
                    db[i] = -da[i]
                    old_wt, dold = (old_wt + new_wt, dold + dnew) if adjust else (1.0, 0.0)
                else:
                    b[i] = 1.0
        elif obs:
            b[i] = 1.0
            started = True
        shown[i] = nobs >= minp
    return a, b, da, db, shown


def _ewm_replay(vals, a, b, da, db):
    """The loop's values and their derivatives with respect to com."""
    w, dw = np.empty(len(vals)), np.empty(len(vals))
    prev = dprev = 0.0
    for i in range(len(vals)):
        cur = vals[i] if b[i] != 0.0 else 0.0
        prev, dprev = a[i] * prev + b[i] * cur, da[i] * prev + a[i] * dprev + db[i] * cur
        w[i], dw[i] = prev, dprev
    return w, dw


_EWM_NAMES = ("vals", "start", "end", "minp", "com", "adjust", "ignore_na", "deltas", "normalize")


@registry.adjoint(_agg.ewm)
def ewm_adjoint(dy, y, *args, **kw):
    """Cotangents of the values and of com (pandas passes com by keyword; its derivative is a sum over the
    loop's derivatives with respect to it), by position or keyword as they were passed."""
    given = dict(zip(_EWM_NAMES, args), **kw)
    out, dcom = _ewm_back(dy, y, **given)
    got = {"vals": out, "com": dcom}
    grads = tuple(got.get(name) for name in _EWM_NAMES[:len(args)])
    return grads + ({k: got.get(k) for k in kw},) if kw else grads


def _ewm_back(dy, y, vals, start, end, minp, com, adjust, ignore_na, deltas=None, normalize=True):
    if deltas is not None:
        raise NoRuleError("pandas' ewm with times (deltas) has no reverse rule")
    vals = np.asarray(vals)
    out = np.zeros(len(vals))
    dcom = 0.0
    dy = np.asarray(dy, dtype=float)
    for s, e in zip(np.asarray(start), np.asarray(end)):
        sub = vals[s:e]
        if not len(sub):
            continue
        a, b, da, db, shown = _ewm_coefficients(sub, minp, com, adjust, ignore_na, normalize)
        replay, dreplay = _ewm_replay(sub, a, b, da, db)
        primal = np.asarray(y[s:e])
        used = shown & (np.cumsum(sub == sub) > 0) & ~np.isnan(primal)
        if not np.allclose(replay[used], primal[used], rtol=1e-9, atol=1e-12):
            raise NoRuleError("pandas' ewm: its weights could not be replayed for the reverse rule")
        g = np.where(used, dy[s:e], 0.0)
        dcom += float(np.sum(g * np.where(used, dreplay, 0.0)))
        carry = 0.0
        for i in range(len(sub) - 1, -1, -1):
            t = g[i] + carry
            if sub[i] == sub[i]:
                out[s + i] += b[i] * t
            carry = a[i] * t
    return out, dcom


for _fn in (_agg.roll_sum, _agg.roll_mean, _agg.roll_var, _agg.roll_max, _agg.roll_min, _agg.ewm):
    registry.sparsity(DENSE, _fn)
del _fn
