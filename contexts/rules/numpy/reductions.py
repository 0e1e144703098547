"""Rules for numpy reductions and scans: `sum`, `mean`, `prod`, `max`/`min` (and `amax`, `amin`,
`nanmax`, `nanmin`, `ptp`), `var`/`std` (and `nanvar`/`nanstd`), `cumsum`/`cumprod`, `nansum`/`nanmean`,
`np.linalg.norm`, `ufunc.accumulate` (add, subtract, multiply, maximum, minimum), and the ndarray methods
`x.sum()`, `x.mean()`, `x.prod()`, `x.max()`, `x.min()`, `x.var()`, `x.std()`, `x.cumsum()`,
`x.cumprod()` (numpy 2 has no `x.ptp()`; `np.ptp` is covered).

Every axis form is accepted (None, int, negative, tuple; positional or keyword), with `keepdims`, `ddof`
(or `correction`), `where=` masks, and `initial=`. Ties of max/min (and of the inf-norms) split the
cotangent evenly between the tied entries. `prod` is exact with zeros in the input: one zero gets the
product of the others, several zeros give zero, without dividing by zero.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..leaves import ArrayLeaf, as_array  # np.asarray, but a dask array is left as it is
from ..generic import conj

from ..registry import HOT_REDUCE_OPTIONS, NoClosedForm, registry
from ..cotangents import Refused
from ..ties import MOVING_TIE, TiedApart, at_tip, cone_tip, kink_tie, note_kink, note_tie, plain
from ..sparsity_specs import INDICES, Cumulative, Custom, Reduction
from ._util import bind as _bind, is_dual, normalize_axis, unsupported, zeros
from .ufuncs import inexact, match_primal

__all__ = ["reduction_rule"]

_NoValue = np._NoValue


def _given(v: Any, default: Any) -> Any:
    """v unless it is numpy's "argument not given" marker."""
    return default if v is _NoValue else v


def _axes(axis: Any, ndim: int) -> tuple:
    """The reduced axes as a sorted tuple of non-negative ints (all axes for None)."""
    if axis is None:
        return tuple(range(ndim))
    axis = normalize_axis(axis, ndim)
    return tuple(sorted(axis)) if isinstance(axis, tuple) else (axis,)


def _expand(g: Any, ndim: int, axis: Any, keepdims: Any) -> Any:
    """A reduction's output-shaped g with the reduced axes back as length-1 axes (broadcasts against x)."""
    if axis is None or ndim == 0 or _given(keepdims, False):
        return g  # a full reduction's output is a scalar (or all-ones shape): it broadcasts as it is
    return np.expand_dims(g, _axes(axis, ndim))


_F8 = np.dtype(np.float64)
_f8 = np.float64
_ndarray = np.ndarray


def _spread(g: Any, x: np.ndarray) -> np.ndarray:
    """g broadcast to a fresh writable array of x's shape, in the cotangent dtype of x."""
    if (type(g) is float or type(g) is _f8) and x.dtype.kind == "f":
        out = np.empty(x.shape, x.dtype)  # the hot case: a real scalar filling a real array
        out.fill(g)
        return out
    if is_dual(g) or is_dual(x):  # forward over reverse: a dual array of x's shape
        return np.broadcast_to(g, x.shape).copy() if is_dual(g) else np.zeros_like(x) + g
    if x.dtype.kind != "c" and (isinstance(g, complex) or getattr(getattr(g, "dtype", None), "kind", "f") == "c"):
        g = g.real
    if isinstance(x, ArrayLeaf):  # a dask array's: dask's own zeros, lazily
        return np.zeros_like(x, dtype=x.dtype if x.dtype.kind in "fc" else _F8) + g
    if isinstance(g, ArrayLeaf):
        return np.broadcast_to(g, x.shape).astype(x.dtype if x.dtype.kind in "fc" else _F8)
    out = np.empty(x.shape, dtype=x.dtype if x.dtype.kind in "fcO" else _F8)  # object arrays: ufloats...
    out[...] = g
    return out


def _where(where: Any) -> dict:
    """`where=` for a reduction, left out when it masks nothing (dask's reductions take none)."""
    where = _given(where, True)
    return {} if where is True else {"where": where}


def _mask(g: Any, where: Any) -> Any:
    """g with zeros where a `where=` mask is False."""
    return g if _given(where, True) is True else np.where(where, g, 0)


def _count(x: np.ndarray, axis: Any, where: Any) -> Any:
    """How many entries each output of a reduction over `axis` averages (respecting a where= mask)."""
    where = _given(where, True)
    if where is not True:
        return np.sum(np.broadcast_to(where, x.shape), axis=axis, keepdims=True)
    return int(np.prod([x.shape[i] for i in _axes(axis, x.ndim)], dtype=np.int64))


def _real_option(v) -> bool:
    return type(v) is float or isinstance(v, np.floating)


def reduction_rule(fn: Any, params: tuple, grad: Callable, jvp: Callable, *keys: Any,
                   kind: str = "reduction") -> None:
    """Register fn (and method keys) from `grad(dy, y, x, **p)` (the cotangent of x) and
    `jvp(t, y, x, **p)` (the tangent of y), where p binds `params`, the names of fn's arguments after x,
    from positional and keyword arguments. Other positional arguments get a None cotangent. Example:

    >>> import numpy as np
    >>> from contexts.rules.registry import registry
    >>> float(registry.get(np.sum).adjoint(2.0, 6.0, np.ones(3))[0][1])
    2.0
    """
    label = getattr(fn, "__name__", "fn")

    def adjoint(dy, y, x, *rest, **kwargs):
        if not rest and type(x) is _ndarray and x.dtype.kind == "f" and dy is not None and not (
                kwargs and any(map(_real_option, kwargs.values()))):
            return (match_primal(grad(dy, y, x, **kwargs), x),)  # the hot case: a real array, options by name
        if dy is None or not inexact(x):
            return (None,) * (1 + len(rest))
        p = dict(zip(params, rest), **kwargs)
        out = (match_primal(grad(dy, y, as_array(x), **p), x),) + tuple(
            _option_cotangent(v, params[i] if i < len(params) else f"argument {i + 2}") for i, v in enumerate(rest))
        if kwargs and any(map(_real_option, kwargs.values())):
            out += ({k: _option_cotangent(v, k) for k, v in kwargs.items()},)
        return out

    def _option_cotangent(v, name):
        """An option's: None, or, for a float the result varies with (the order of `np.linalg.norm(x, p)`:
        0 came out, silently), refused where it is differentiated."""
        return NoClosedForm(f"{label}", name).cotangent() if _real_option(v) else None

    def frule(tangents, x, *rest, **kwargs):
        y = fn(x, *rest, **kwargs)
        if len(tangents) > 1:  # (a float option perturbed: refused, as in reverse mode)
            for i, t_option in enumerate(tangents[1:]):
                if t_option is not None and np.any(t_option != 0):
                    raise NoClosedForm(f"{label}", params[i] if i < len(params) else f"argument {i + 2}").error()
        t = tangents[0] if tangents else None
        if t is None:
            return y, None
        p = dict(zip(params, rest), **kwargs)
        return y, jvp(t, y, as_array(x), **p)

    adjoint.__name__ = adjoint.__qualname__ = f"{label}_adjoint"
    frule.__name__ = frule.__qualname__ = f"{label}_frule"
    for key in (fn,) + keys:
        registry.adjoint(key, kind=kind)(adjoint)
        registry.frule(key, kind=kind)(frule)


_SUM = ("axis", "dtype", "out", "keepdims", "initial", "where")
_MEAN = ("axis", "dtype", "out", "keepdims")
_MAX = ("axis", "out", "keepdims", "initial", "where")
_VAR = ("axis", "dtype", "out", "ddof", "keepdims")
_SCAN = ("axis", "dtype", "out")


def _method(name: str) -> tuple:
    return (np.ndarray, name)


# -- sum, mean: linear ------------------------------------------------------------------------------------

def _sum_grad(dy, y, x, axis=None, keepdims=False, where=True, **_):
    return _mask(_spread(_expand(dy, x.ndim, axis, keepdims), x), where)


def _sum_jvp(t, y, x, axis=None, keepdims=False, where=True, **_):
    return np.sum(t, axis=axis, keepdims=_given(keepdims, False), **_where(where))


def _mean_grad(dy, y, x, axis=None, keepdims=False, where=True, **_):
    return _sum_grad(dy, y, x, axis, keepdims, where) / _count(x, axis, where)


def _mean_jvp(t, y, x, axis=None, keepdims=False, where=True, **_):
    return np.mean(t, axis=axis, keepdims=_given(keepdims, False), **_where(where))


reduction_rule(np.sum, _SUM, _sum_grad, _sum_jvp, _method("sum"), kind="linear")
reduction_rule(np.mean, _MEAN, _mean_grad, _mean_jvp, _method("mean"), kind="linear")


def _nan_free(x):
    return ~np.isnan(x) if x.dtype.kind in "fc" else True


def _nansum_grad(dy, y, x, axis=None, keepdims=False, where=True, **_):
    return _mask(_sum_grad(dy, y, x, axis, keepdims), np.logical_and(_nan_free(x), _given(where, True)))


def _nansum_jvp(t, y, x, axis=None, keepdims=False, where=True, **_):
    return _sum_jvp(np.where(_nan_free(x), t, 0), y, x, axis, keepdims, where)


def _nanmean_grad(dy, y, x, axis=None, keepdims=False, where=True, **_):
    keep = np.logical_and(_nan_free(x), _given(where, True))
    return _mask(_sum_grad(dy, y, x, axis, keepdims), keep) / np.maximum(_count(x, axis, keep), 1)


def _nanmean_jvp(t, y, x, axis=None, keepdims=False, where=True, **_):
    keep = np.logical_and(_nan_free(x), _given(where, True))
    total = np.sum(np.where(keep, t, 0), axis=axis, keepdims=True)
    return _reduced(total / np.maximum(_count(x, axis, keep), 1), x.ndim, axis, keepdims)


def _reduced(g, ndim, axis, keepdims):
    """A keepdims-shaped reduction result squeezed as the caller asked."""
    if _given(keepdims, False):
        return g
    return np.squeeze(g, axis=_axes(axis, ndim)) if ndim else g


reduction_rule(np.nansum, _SUM, _nansum_grad, _nansum_jvp)
reduction_rule(np.nanmean, _MEAN, _nanmean_grad, _nanmean_jvp)

# -- prod: exact with zeros -----------------------------------------------------------------------------


def _exclusive_products(x: np.ndarray, axes: tuple) -> np.ndarray:
    """For each entry, the product of the other entries of its reduced slice (no division; zeros exact)."""
    k = len(axes)
    moved = np.moveaxis(x, axes, tuple(range(x.ndim - k, x.ndim)))
    flat = moved.reshape(moved.shape[:x.ndim - k] + (-1,))
    ones = np.ones(flat.shape[:-1] + (1,), dtype=flat.dtype)
    left = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    right = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return np.moveaxis((left * right).reshape(moved.shape), tuple(range(x.ndim - k, x.ndim)), axes)


def _prod_partials(y, x, axis, keepdims):
    """d prod / d x_i = prod of the other entries of x_i's slice, shape of x."""
    if x.ndim == 0:
        return np.ones_like(x)
    if not isinstance(x, ArrayLeaf) and np.all(x != 0):  # (a dask array's: no branch on its values)
        return _expand(y, x.ndim, axis, keepdims) / x
    return _exclusive_products(x, _axes(axis, x.ndim))


def _prod_grad(dy, y, x, axis=None, keepdims=False, where=True, **_):
    if _given(where, True) is not True:
        x = np.where(where, x, 1)
    g = _expand(dy, x.ndim, axis, keepdims) * conj(_prod_partials(y, x, axis, keepdims))
    return _mask(g, where)


def _prod_jvp(t, y, x, axis=None, keepdims=False, where=True, **_):
    if _given(where, True) is not True:
        x, t = np.where(where, x, 1), np.where(where, t, 0)
    return np.sum(t * _prod_partials(y, x, axis, keepdims), axis=axis, keepdims=_given(keepdims, False))


reduction_rule(np.prod, _SUM, _prod_grad, _prod_jvp, _method("prod"))

# -- max, min: ties split evenly --------------------------------------------------------------------------


def _extremum_weights(y, x, axis, keepdims, plain=True):
    """1/k on each of the k entries of a slice equal to its extremum y (NaN counts as equal to NaN).

    `plain` (no `initial=`, no `where=`): every slice then holds its extremum, so as many hits as
    outputs and no NaN means no ties, and the boolean hits are the weights (the common, fast case)."""
    ye = _expand(y, x.ndim, axis, keepdims)
    hit = x == ye
    if isinstance(x, ArrayLeaf) or isinstance(y, ArrayLeaf):  # a dask array: no branch on its values
        if x.dtype.kind in "fc":
            hit = hit | np.isnan(x) & np.isnan(ye)
        w = hit / np.maximum(np.sum(hit, axis=axis, keepdims=True), 1)
        return w.astype(x.dtype) if x.dtype.kind == "f" else w
    if type(y) is _f8:
        has_nan = y != y  # a full reduction's scalar: no ufunc call
    else:
        has_nan = x.dtype.kind in "fc" and bool(np.isnan(y).any())
    if plain and not has_nan and np.count_nonzero(hit) == (y.size if type(y) is _ndarray else 1):
        return hit
    if has_nan:
        hit |= np.isnan(x) & np.isnan(ye)
    count = np.sum(hit, axis=axis, keepdims=True)
    w = hit / np.maximum(count, 1)
    return w.astype(x.dtype, copy=False) if x.dtype.kind == "f" else w


def _extremum_grad(dy, y, x, axis=None, keepdims=False, where=True, initial=_NoValue, **_):
    plain = initial is _NoValue and _given(where, True) is True
    if plain and type(y) is _f8 and y == y and (type(dy) is float or type(dy) is _f8) and x.dtype.kind == "f":
        hit = x == y  # the hot case, a real array's extremum: dy shared by its k occurrences
        out = np.zeros(x.shape, x.dtype)
        k = int(np.count_nonzero(hit))
        if k > 1:  # (a tie: a kink, `ties.note_kink`)
            note_kink("np.max or np.min")
        out[hit] = dy / k
        return out
    w = _extremum_weights(y, x, axis, keepdims, plain)
    if _split(w, x):
        note_kink("np.max or np.min")
    return _mask(_expand(dy, x.ndim, axis, keepdims) * w, where)


def _split(w, x) -> bool:
    """Whether extremum weights w (`_extremum_weights`) split a slice's among tied entries (a kink)."""
    if isinstance(x, ArrayLeaf) or isinstance(w, ArrayLeaf):  # (a dask array's: never computed here)
        return False
    w = np.asarray(w)
    return w.dtype.kind == "f" and bool(np.any((w > 0) & (w < 1)))


def _extremum_jvp(t, y, x, axis=None, keepdims=False, where=True, initial=_NoValue, **_):
    simple = initial is _NoValue and _given(where, True) is True
    w = _mask(_extremum_weights(y, x, axis, keepdims, simple), where)
    if _split(w, x):  # (a tie of entries: a kink where their tangents part -- `ties.kink_tie`)
        tied = (w > 0) & (w < 1)
        try:  # (each tied entry's tangent against the mean of its slice's: a constant slice's do not part)
            tp = np.asarray(plain(t), dtype=float)
            apart = np.where(tied, tp - np.sum(tp * w, axis=axis, keepdims=True), 0.0)
        except (TypeError, ValueError):
            apart = np.where(tied, 1.0, 0.0)
        kink_tie("np.max or np.min", np.where(tied, 0.0, 1.0), 0.0, apart, None)
    return np.sum(t * w, axis=axis, keepdims=_given(keepdims, False))


for _fn, _name in ((np.max, "max"), (np.min, "min"), (np.amax, None), (np.amin, None),
                   (np.nanmax, None), (np.nanmin, None)):
    reduction_rule(_fn, _MAX, _extremum_grad, _extremum_jvp, *((_method(_name),) if _name else ()))


_PLAIN_OPTIONS = HOT_REDUCE_OPTIONS  # the options a reduction is done directly (and pulled back hot) with


def _direct(fn: Callable, ufunc: np.ufunc) -> Callable:
    """fn (np.sum, np.max, ...) on a plain ndarray as the `ufunc.reduce` call numpy's wrapper makes, without
    the wrapper (a microsecond on small arrays); any other argument goes to fn itself."""
    reduce = ufunc.reduce

    def impl(a, *rest, **kwargs):
        if type(a) is _ndarray and not rest and (not kwargs or kwargs.keys() <= _PLAIN_OPTIONS):
            return reduce(a, kwargs.get("axis"), None, None, keepdims=kwargs.get("keepdims", False))
        return fn(a, *rest, **kwargs)

    impl.__name__ = impl.__qualname__ = f"{fn.__name__}_direct"
    return impl


for _fn, _ufunc in ((np.sum, np.add), (np.prod, np.multiply), (np.max, np.maximum), (np.amax, np.maximum),
                    (np.min, np.minimum), (np.amin, np.minimum)):
    registry.set(_fn, impl=_direct(_fn, _ufunc))


# -- the hot cases of sum and max/min: a float64 array, at most `axis` (None or an int) and `keepdims` ----

_F8D = np.dtype(np.float64)
try:  # (what `np.count_nonzero(a)` calls, without its dispatch: a microsecond per max's pullback)
    from numpy._core.multiarray import count_nonzero as _count_nonzero
except ImportError:  # (numpy 1.x)
    _count_nonzero = np.count_nonzero


def _kept(g: np.ndarray, x: np.ndarray, axis: Any) -> Any:
    """g (reduced over the int `axis` without keepdims) with that axis back as length 1; None otherwise."""
    if type(axis) is not int or not -x.ndim <= axis < x.ndim:
        return None
    shape = list(x.shape)
    shape[axis] = 1
    return g.reshape(shape)


def _sum_hot(dy, y, x, axis=None, keepdims=False):
    """sum's cotangent: dy spread over x's shape (None: not the hot case)."""
    t = type(dy)
    if t is float or t is _f8:
        out = np.empty(x.shape, _F8D)
        out.fill(dy)
        return out
    if t is not _ndarray or dy.dtype is not _F8D:
        return None
    if axis is not None and not keepdims:
        dy = _kept(dy, x, axis)
        if dy is None:
            return None
    out = np.empty(x.shape, _F8D)
    out[...] = dy
    return out


def _extremum_hot(dy, y, x, axis=None, keepdims=False):
    """max's (min's) cotangent: dy shared by each slice's k equal extrema (None: not the hot case, or a
    NaN extremum, which the general rule handles)."""
    if axis is None and not keepdims:
        if type(y) is _f8 and y == y and (type(dy) is float or type(dy) is _f8):
            hit = x == y
            out = np.zeros(x.shape, _F8D)
            k = int(_count_nonzero(hit))
            if k > 1:  # (a tie: a kink, `ties.note_kink`)
                note_kink("np.max or np.min")
            out[hit] = dy / k
            return out
        return None
    if type(dy) is not _ndarray or dy.dtype is not _F8D or type(y) is not _ndarray:
        return None
    if not keepdims:
        y, dy = _kept(y, x, axis), _kept(dy, x, axis)
        if y is None:
            return None
    total = np.add.reduce(y, None)
    if total != total:
        return None  # NaN among the extrema (or inf - inf)
    hit = x == y
    if _count_nonzero(hit) == y.size:
        return hit * dy  # one extremum per slice: no ties
    note_kink("np.max or np.min")
    return hit * (dy / np.add.reduce(hit, axis, None, None, True))


for _fn in (np.sum, np.max, np.amax, np.min, np.amin):
    registry.set(_fn, hot_reduce=_sum_hot if _fn is np.sum else _extremum_hot)


def _ptp_grad(dy, y, x, axis=None, keepdims=False, **_):
    hi, lo = np.max(x, axis=axis, keepdims=True), np.min(x, axis=axis, keepdims=True)
    w = _extremum_weights(hi, x, axis, True, False) - _extremum_weights(lo, x, axis, True, False)
    return _expand(dy, x.ndim, axis, keepdims) * w


def _ptp_jvp(t, y, x, axis=None, keepdims=False, **_):
    return np.sum(t * _ptp_grad(1.0, y, x, axis, True), axis=axis, keepdims=_given(keepdims, False))


reduction_rule(np.ptp, ("axis", "out", "keepdims"), _ptp_grad, _ptp_jvp)

# -- var, std ----------------------------------------------------------------------------------------


def _centered(x, axis, where, mean):
    """x minus its mean over axis (kept dims), the mean given by the caller if it passed one."""
    m = _given(mean, None)
    if m is None:
        w = _given(where, True)
        # (no `where=` when there is no mask: dask's mean takes none)
        m = np.mean(x, axis=axis, keepdims=True) if w is True else np.mean(x, axis=axis, keepdims=True, where=w)
    return x - m


def _dof(x, axis, where, ddof, correction):
    return _count(x, axis, where) - _given(correction, _given(ddof, 0))


def _var_grad(dy, y, x, axis=None, ddof=0, keepdims=False, where=True, mean=_NoValue,
              correction=_NoValue, **_):
    scale = 2 / _dof(x, axis, where, ddof, correction)
    return _mask(_expand(dy, x.ndim, axis, keepdims) * scale * _centered(x, axis, where, mean), where)


def _var_jvp(t, y, x, axis=None, ddof=0, keepdims=False, where=True, mean=_NoValue,
             correction=_NoValue, **_):
    c = _mask(np.real(conj(_centered(x, axis, where, mean)) * t), where)
    total = np.sum(c, axis=axis, keepdims=True) * (2 / _dof(x, axis, where, ddof, correction))
    return _reduced(total, x.ndim, axis, keepdims)


def _half_over(y, x, axis=None, keepdims=False, where=True, **_):
    """1 / (2 std), 0 where the slice is constant (the subgradient there). Constant up to rounding
    counts: entries computed alike may differ in their last bit, and 1 / std of that noise times the
    centred noise is a number of order one with no meaning (std at the scale of eps * max|x|). The scale
    is that of the entries taken (`where=`, nanstd's non-NaN ones): a NaN left out made it NaN (gen24 W5)."""
    w = _given(where, True)
    ax_ = np.abs(x) if w is True else np.where(w, np.abs(x), 0)
    scale = np.max(ax_, axis=axis, keepdims=True) if np.ndim(x) else ax_
    scale = _reduced(scale, np.ndim(x), axis, keepdims) if np.ndim(x) else scale
    flat = np.abs(y) <= 64 * np.finfo(float).eps * scale
    return np.where(flat, 0, 0.5 / np.where(flat, 1, y))


def _std_grad(dy, y, x, **p):
    return _var_grad(dy * _half_over(y, x, **p), y, x, **p)


def _std_jvp(t, y, x, **p):
    return _var_jvp(t, y, x, **p) * _half_over(y, x, **p)


reduction_rule(np.var, _VAR, _var_grad, _var_jvp, _method("var"))
reduction_rule(np.std, _VAR, _std_grad, _std_jvp, _method("std"))


def _skip_nan(moment: Callable) -> Callable:
    """The nan-variant of a var/std rule: NaNs join the entries a `where=` mask leaves out."""
    def nan_moment(d, y, x, where=True, **p):
        return moment(d, y, x, where=np.logical_and(_nan_free(x), _given(where, True)), **p)
    nan_moment.__name__ = f"nan{moment.__name__.lstrip('_')}"
    return nan_moment


reduction_rule(np.nanvar, _VAR, _skip_nan(_var_grad), _skip_nan(_var_jvp))
reduction_rule(np.nanstd, _VAR, _skip_nan(_std_grad), _skip_nan(_std_jvp))

# -- cumsum, cumprod ----------------------------------------------------------------------------------


def _scan_axis(x, axis):
    """(x as scanned, axis): numpy scans a flattened x when axis is None."""
    return (x.reshape(-1), 0) if axis is None else (x, normalize_axis(axis, x.ndim))


def _reverse_cumsum(g, axis):
    return np.flip(np.cumsum(np.flip(g, axis), axis=axis), axis)


def _cumsum_grad(dy, y, x, axis=None, **_):
    _, ax = _scan_axis(x, axis)
    return _reverse_cumsum(as_array(dy), ax).reshape(x.shape)


def _cumsum_jvp(t, y, x, axis=None, **_):
    return np.cumsum(t, axis=axis)


reduction_rule(np.cumsum, _SCAN, _cumsum_grad, _cumsum_jvp, _method("cumsum"), kind="linear")


def _first_zero(xs, ax):
    """Masks along ax of the entries before a slice's first zero, and of that first zero itself."""
    is_zero = xs == 0
    has = is_zero.any(axis=ax, keepdims=True)
    z = np.where(has, np.argmax(is_zero, axis=ax, keepdims=True), xs.shape[ax])
    pos = np.arange(xs.shape[ax]).reshape((-1,) + (1,) * (xs.ndim - 1 - ax))
    return pos < z, pos == z


def _cumprod_grad(dy, y, x, axis=None, **_):
    xs, ax = _scan_axis(x, axis)
    ys, dys = conj(y), as_array(dy).reshape(xs.shape)
    if np.all(xs != 0):
        g = _reverse_cumsum(dys * ys, ax) / conj(xs)
    else:  # before the first zero the no-zero formula holds; at it, the product of the others; after it, 0
           # (0 with x_z's tangent on duals)
        before, at = _first_zero(xs, ax)
        y_skip = conj(np.cumprod(np.where(at, 1, xs), axis=ax))
        g = np.where(before, _reverse_cumsum(dys * ys, ax) / conj(np.where(before, xs, 1)),
                     np.where(at, _reverse_cumsum(dys * y_skip, ax), _after_zero(dys, xs, ax, before, at)))
    return g.reshape(x.shape)


def _after_zero(dys, xs, ax, before, at):
    """The cotangent of the entries after a slice's first zero x_z: 0, but on duals (forward over reverse)
    x_z times the cotangent with x_z taken as 1 (the products of the other factors), so that it carries
    x_z's tangent: the constant 0 dropped d2/dx_z dx_j (gen24 W7). Later zeros by the same rule, in turn."""
    after = ~(before | at)
    if not (np.any(after) and any(is_dual(v) for v in (dys, xs))):
        return 0
    x1 = np.where(at, 1, xs)
    x_z = np.sum(np.where(at, xs, 0), axis=ax, keepdims=True)  # 0, with its tangent
    return conj(x_z) * _cumprod_grad(dys, np.cumprod(x1, axis=ax), x1, ax)


def _cumprod_jvp(t, y, x, axis=None, **_):
    xs, ax = _scan_axis(x, axis)
    ts = as_array(t).reshape(xs.shape)
    if np.all(xs != 0):
        return y * np.cumsum(ts / xs, axis=ax)
    before, at = _first_zero(xs, ax)
    y_skip = np.cumprod(np.where(at, 1, xs), axis=ax)
    t_at = np.sum(np.where(at, ts, 0), axis=ax, keepdims=True)
    reached = np.cumsum(at, axis=ax) > 0
    return np.where(before, y * np.cumsum(np.where(before, ts / np.where(before, xs, 1), 0), axis=ax),
                    np.where(reached, t_at * y_skip, 0))


reduction_rule(np.cumprod, _SCAN, _cumprod_grad, _cumprod_jvp, _method("cumprod"))

# -- ufunc.accumulate: the scans as ufunc methods (np.multiply.accumulate in np.vander, ...) -------------


def _extremum_sources(y, xs, ax):
    """For maximum/minimum.accumulate, the index along ax of the entry that set each running extremum
    (the latest entry equal to it: a tie takes the later one, a subgradient)."""
    pos = np.arange(xs.shape[ax]).reshape((-1,) + (1,) * (xs.ndim - 1 - ax))
    return np.maximum.accumulate(np.where(xs == y, pos, 0), axis=ax)


def _running_ties(y, xs, ax):
    """Where a running extremum's new entry equals the extremum before it (maximum.accumulate of [1, 1 + a]
    at a = 0): (those entries, the extremum before them), along ax; None where there are none. There the scan
    has a kink, as np.maximum(1, 1 + a) has: the entry's side or the earlier one's, whose slopes differ."""
    n = xs.shape[ax]
    if n < 2:
        return None
    later = np.take(xs, np.arange(1, n), axis=ax)
    before = np.take(y, np.arange(n - 1), axis=ax)
    with np.errstate(invalid="ignore"):
        tied = later == before
    return (later, before, tied) if np.any(tied) else None


def _tied_tangents(t, y, xs, ax, ties):
    """The tangents of a tie's two sides (`_running_ties`): the new entry's, and the earlier extremum's (its
    source's)."""
    n = xs.shape[ax]
    t_src = np.take_along_axis(t, _extremum_sources(y, xs, ax), ax)
    return np.take(t, np.arange(1, n), axis=ax), np.take(t_src, np.arange(n - 1), axis=ax)


def _running_extremum_grad(dy, y, xs, ax):
    """Each output's cotangent added to the entry that set its running extremum."""
    index = list(np.indices(xs.shape, sparse=True))
    index[ax] = _extremum_sources(y, xs, ax)
    g = zeros(xs.shape, np.result_type(dy, xs), dy)
    np.add.at(g, tuple(index), dy)
    return g


def _scan_grad(ufunc, dy, y, x, axis):
    """Cotangent of ufunc.accumulate(x, axis) for add, subtract, multiply, maximum and minimum."""
    xs, ax = as_array(x), normalize_axis(axis, np.ndim(x))
    dy = as_array(dy)
    if ufunc is np.add:
        return _reverse_cumsum(dy, ax)
    if ufunc is np.subtract:  # y_i = x_0 - x_1 - ... - x_i
        g = -_reverse_cumsum(dy, ax)
        first = (slice(None),) * ax + (0,)
        g[first] = -g[first]
        return g
    if ufunc is np.multiply:
        return _cumprod_grad(dy, y, xs, ax)
    if ufunc in (np.maximum, np.minimum, np.fmax, np.fmin):
        if _running_ties(plain(y), plain(xs), ax) is not None and not note_tie(f"np.{ufunc.__name__}.accumulate", None):
            # (a kink: reverse mode has forward mode judge it from the two sides, refused where nothing checks)
            return Refused(TiedApart(f"np.{ufunc.__name__}.accumulate"))
        return _running_extremum_grad(dy, y, xs, ax)
    raise unsupported(f"np.{ufunc.__name__}.accumulate", "this ufunc", "write the scan with np.cumsum/np.cumprod")


def _accumulate_args(args, kwargs):
    """The axis of ufunc.accumulate(array, axis=0, dtype=None, out=None)."""
    (axis,) = _bind(args, kwargs, ("axis",), (0,))
    return axis


@registry.adjoint((np.ufunc, "accumulate"), kind="linear")
def accumulate_adjoint(dy, y, ufunc, x, *rest, **kwargs):
    """Pullback of ufunc.accumulate(x, axis, dtype, out) (add, subtract, multiply, maximum, minimum)."""
    nones = (None,) * len(rest)
    if dy is None or not inexact(x):
        return (None, None) + nones
    axis = _accumulate_args(rest, kwargs)
    g = _scan_grad(ufunc, dy, y, x, axis)
    return (None, g if type(g) is Refused else match_primal(g, x)) + nones


@registry.frule((np.ufunc, "accumulate"), kind="linear")
def accumulate_frule(tangents, ufunc, x, *rest, **kwargs):
    y = ufunc.accumulate(x, *rest, **kwargs)
    t = tangents[1] if len(tangents) > 1 else None
    if t is None:
        return y, None
    axis = normalize_axis(_accumulate_args(rest, kwargs), np.ndim(x))
    t = as_array(t)
    if ufunc in (np.add, np.subtract):
        return y, ufunc.accumulate(t, axis)
    if ufunc is np.multiply:
        return y, _cumprod_jvp(t, y, as_array(x), axis)
    if ufunc in (np.maximum, np.minimum, np.fmax, np.fmin):
        xs = as_array(x)
        ties = _running_ties(y, xs, axis)
        if ties is not None and MOVING_TIE:  # (a kink where the two sides' tangents part: `moving_tie` has the
            later, before, tied = ties    # entry point judge it from the two sides, a mean of the slopes)
            t_later, t_before = _tied_tangents(t, y, xs, axis, ties)
            MOVING_TIE[0](np.where(tied, later, np.nan), np.where(tied, before, np.nan), t_later, t_before)
        return y, np.take_along_axis(t, _extremum_sources(y, xs, axis), axis)
    raise unsupported(f"np.{ufunc.__name__}.accumulate", "this ufunc", "write the scan with np.cumsum/np.cumprod")


# -- np.add.reduceat: sums over runs of an axis -----------------------------------------------------------

def _reduceat_runs(indices, n: int) -> list:
    """The (start, stop) of each run `np.add.reduceat(x, indices)` sums along an axis of n: indices[i] up to
    the next index, or the single element indices[i] where the next is not past it (numpy's rule)."""
    idx = [int(i) + n if int(i) < 0 else int(i) for i in np.ravel(indices)]
    runs = []
    for i, start in enumerate(idx):
        stop = idx[i + 1] if i + 1 < len(idx) else n
        runs.append((start, stop if stop > start else start + 1))
    return runs


def _reduceat_options(ufunc, rest: tuple, kwargs: dict):
    p = dict(zip(("indices", "axis", "dtype", "out"), rest), **kwargs)
    if ufunc is not np.add or p.get("out") is not None:
        raise unsupported(f"np.{ufunc.__name__}.reduceat", "a ufunc other than add, or out=",
                          "sum the runs with np.add.reduceat, or reduce each slice")
    return p["indices"], p.get("axis", 0)


@registry.adjoint((np.ufunc, "reduceat"), kind="linear")
def reduceat_adjoint(dy, y, ufunc, x, *rest, **kwargs):
    """Cotangent of np.add.reduceat(x, indices, axis): each run's elements get the run's cotangent."""
    nones = (None,) * len(rest)
    indices, axis = _reduceat_options(ufunc, rest, kwargs)
    if dy is None or not inexact(x):
        return (None, None) + nones
    x = as_array(x)
    axis = normalize_axis(axis, x.ndim)
    dy = np.moveaxis(as_array(dy), axis, 0)
    g = np.zeros((x.shape[axis],) + dy.shape[1:], np.result_type(dy, x, float))
    for i, (start, stop) in enumerate(_reduceat_runs(indices, x.shape[axis])):
        g[start:stop] += dy[i]
    return (None, match_primal(np.moveaxis(g, 0, axis), x)) + nones


@registry.frule((np.ufunc, "reduceat"), kind="linear")
def reduceat_frule(tangents, ufunc, x, *rest, **kwargs):
    _reduceat_options(ufunc, rest, kwargs)
    y = ufunc.reduceat(x, *rest, **kwargs)
    t = tangents[1] if len(tangents) > 1 else None
    return y, (None if t is None else ufunc.reduceat(as_array(t), *rest, **kwargs))


# -- ufunc.reduce and ufunc.outer: the reductions' and the ufuncs' own rules ------------------------------

REDUCERS = {np.add: np.sum, np.multiply: np.prod, np.maximum: np.max, np.minimum: np.min}
"""ufunc -> the reduction `ufunc.reduce` is (its default axis is 0, the reduction's None)."""

_REDUCE = ("axis", "dtype", "out", "keepdims", "initial", "where")
# where a ufunc method takes its output by position: `np.add.reduce(a, axis, dtype, out)`,
# `accumulate(a, axis, dtype, out)`, `reduceat(a, indices, axis, dtype, out)`
UFUNC_METHOD_OUT = {"reduce": 3, "accumulate": 3, "reduceat": 4}


def reduce_options(ufunc, rest: tuple, kwargs: dict) -> tuple:
    """(the reduction, its options) of `ufunc.reduce(x, *rest, **kwargs)`, axis 0 by default; refused for
    other ufuncs, `out=`, `initial=` and `where=`."""
    p = dict(zip(_REDUCE, rest), **kwargs)
    p.setdefault("axis", 0)
    fn = REDUCERS.get(ufunc)
    if (fn is None or p.get("out") is not None or p.get("initial", _NoValue) is not _NoValue
            or p.get("where", True) is not True):
        raise unsupported(f"np.{ufunc.__name__}.reduce", "this ufunc or these options (out=, initial=, where=)",
                          "use np.sum, np.prod, np.max or np.min")
    p.pop("out", None)
    p.pop("where", None)
    p.pop("initial", None)
    return fn, p


# (associative: numpy's reduce groups the items as it likes, `np.arctan2.reduce` is no left fold; an
# associative ufunc's value, and so its derivative, is the fold's whatever the grouping)
_ASSOCIATIVE = frozenset({np.logaddexp, np.logaddexp2, np.hypot})


def _fold_partials(ufunc, rest: tuple, kwargs: dict):
    """For `ufunc.reduce` of another binary ufunc with partials (`np.logaddexp.reduce`, `np.hypot.reduce`):
    (its partials, the axis, keepdims), the reduction a left fold y_k = f(y_{k-1}, x_k); None where the
    options are others (out=, initial=, where=, several axes)."""
    p = dict(zip(_REDUCE, rest), **kwargs)
    rule = registry.rules.get(ufunc) if ufunc in _ASSOCIATIVE else None
    partials = rule.meta.get("partials") if rule is not None else None
    axis = p.get("axis", 0)
    if (partials is None or None in partials or p.get("out") is not None or p.get("where", True) is not True
            or p.get("initial", _NoValue) is not _NoValue or isinstance(axis, tuple)):
        return None
    return partials, axis, bool(p.get("keepdims", False))


def _fold(ufunc, x, axis, keepdims):
    """(the prefixes y_0..y_n of the fold along axis, moved to the front, x so moved, a function putting a
    result of the fold's shape back as reduce gives it)."""
    x = as_array(x) if not is_dual(x) else x
    if axis is None:
        shape = (1,) * np.ndim(x) if keepdims else ()
        x, axis = np.reshape(x, -1), 0
    else:
        axis = normalize_axis(axis, np.ndim(x))
        shape = None
    xs = np.moveaxis(x, axis, 0)
    ys = [xs[0]]  # (the prefixes by the ufunc itself: on forward mode's duals too, under a hessian)
    for k in range(1, len(xs)):
        ys.append(ufunc(ys[-1], xs[k]))

    def put(r):
        if shape is not None:
            return np.reshape(r, shape) if keepdims else r
        return np.expand_dims(r, axis) if keepdims else r
    return ys, xs, put, axis


def _fold_adjoint(ufunc, dy, x, folded):
    partials, axis, keepdims = folded
    pa, pb = partials
    ys, xs, _, ax = _fold(ufunc, x, axis, keepdims)
    g = dy
    if keepdims:
        g = np.squeeze(g, axis=ax) if axis is not None else np.reshape(g, ())
    gx = [None] * len(xs)
    for k in range(len(xs) - 1, 0, -1):
        gx[k] = g * pb(ys[k], ys[k - 1], xs[k])
        g = g * pa(ys[k], ys[k - 1], xs[k])
    gx[0] = g
    gx = np.stack([np.broadcast_to(v, np.shape(xs[0])) if not is_dual(v) else v for v in gx])
    gx = np.moveaxis(gx, 0, ax) if axis is not None else gx
    return np.reshape(gx, np.shape(x))


def _fold_tangent(ufunc, t, x, folded):
    partials, axis, keepdims = folded
    pa, pb = partials
    ys, xs, put, ax = _fold(ufunc, x, axis, keepdims)
    ts = np.moveaxis(np.reshape(t, np.shape(x)), ax, 0) if axis is not None else np.reshape(t, -1)
    acc = ts[0]
    for k in range(1, len(xs)):
        acc = pa(ys[k], ys[k - 1], xs[k]) * acc + pb(ys[k], ys[k - 1], xs[k]) * ts[k]
    return put(acc)


@registry.adjoint((np.ufunc, "reduce"))
def reduce_adjoint(dy, y, ufunc, x, *rest, **kwargs):
    """`ufunc.reduce(x, axis=0, ...)`: np.sum's, np.prod's, np.max's or np.min's pullback; another binary
    ufunc's by its partials along the fold (`np.logaddexp.reduce`)."""
    nones = (None,) * len(rest)
    if dy is None or not inexact(x):
        return (None, None) + nones
    if ufunc not in REDUCERS and (folded := _fold_partials(ufunc, rest, kwargs)) is not None:
        return (None, match_primal(_fold_adjoint(ufunc, dy, x, folded), x)) + nones
    fn, p = reduce_options(ufunc, rest, kwargs)
    return (None, registry.get(fn).adjoint(dy, y, x, **p)[0]) + nones


@registry.frule((np.ufunc, "reduce"))
def reduce_frule(tangents, ufunc, x, *rest, **kwargs):
    y = ufunc.reduce(x, *rest, **kwargs)
    t = tangents[1] if len(tangents) > 1 else None
    if t is None:
        return y, None
    if ufunc not in REDUCERS and (folded := _fold_partials(ufunc, rest, kwargs)) is not None:
        return y, _fold_tangent(ufunc, t, x, folded)
    fn, p = reduce_options(ufunc, rest, kwargs)
    return y, registry.get(fn).frule((t,), x, **p)[1]


def outer_left(a, b):
    """a with b's dimensions appended as ones: `ufunc.outer(a, b)` is `ufunc(outer_left(a, b), b)`."""
    return np.reshape(a, np.shape(a) + (1,) * np.ndim(b))


def _outer_rule(ufunc, kwargs):
    rule = registry.get(ufunc)
    if rule is None or rule.adjoint is None or kwargs:
        raise unsupported(f"np.{ufunc.__name__}.outer", "this ufunc or keyword arguments",
                          f"write np.{ufunc.__name__}(a[:, None], b)")
    return rule


@registry.adjoint((np.ufunc, "outer"))
def outer_adjoint(dy, y, ufunc, a, b, **kwargs):
    """`ufunc.outer(a, b)`: the ufunc's own pullback on `a` reshaped (`outer_left`) and b."""
    if dy is None:
        return (None, None, None)
    rule = _outer_rule(ufunc, kwargs)
    da, db = rule.adjoint(dy, y, outer_left(a, b), b)[:2]
    return (None, None if da is None else match_primal(np.reshape(da, np.shape(a)), a), db)


@registry.frule((np.ufunc, "outer"))
def outer_frule(tangents, ufunc, a, b, **kwargs):
    rule = _outer_rule(ufunc, kwargs)
    ta = tangents[1] if len(tangents) > 1 else None
    tb = tangents[2] if len(tangents) > 2 else None
    left = outer_left(a, b)
    y, dy = rule.frule((None if ta is None else np.reshape(ta, np.shape(left)), tb), left, b)
    return y, dy


# -- not differentiable ----------------------------------------------------------------------------------

registry.nondifferentiable(
    np.argmax, np.argmin, np.nanargmax, np.nanargmin, np.all, np.any, np.count_nonzero,
    _method("argmax"), _method("argmin"), _method("all"), _method("any"),
)

# -- np.linalg.norm --------------------------------------------------------------------------------------


def _phase(x):
    """d|x|/dx in Zygote's convention: sign(x) for real x, x/|x| for complex (0 at 0)."""
    if np.iscomplexobj(x):
        r = np.abs(x)
        return x / np.where(r == 0, 1, r)
    return np.sign(x)


def _split_ties(v, axis, pick):
    """Weights 1/k on the k entries of v equal to pick(v) along axis (kept dims)."""
    hit = v == pick(v, axis=axis, keepdims=True)
    return hit / np.sum(hit, axis=axis, keepdims=True)


def _norm_axes(x, ord, axis):
    """(reduced axes, is_matrix_norm) of np.linalg.norm(x, ord, axis)."""
    if axis is None:
        if ord is None or x.ndim == 1:
            return tuple(range(x.ndim)), False
        return (0, 1), True
    axes = normalize_axis(axis if isinstance(axis, (tuple, list)) else (axis,), x.ndim)
    return tuple(axes), len(axes) == 2


def _vector_norm_gradient(x, ye, ord, axes):
    """d ||x||_ord / dx along the reduced axes, ye the norm broadcastable against x."""
    if type(x).__name__ == "Dual" and np.any(ye == 0):  # (the zero vector under an outer derivative)
        at_tip(x)
    safe = np.where(ye == 0, 1, ye)
    if ord is None or ord == 2:
        return np.where(ye == 0, 0, x / safe)
    if ord == 0:
        return np.zeros(x.shape, dtype=np.result_type(ye))
    if ord == 1:
        return _phase(x)
    if ord in (np.inf, -np.inf):
        a = np.abs(x)
        hit = a == ye
        return _phase(x) * (hit / np.maximum(np.sum(hit, axis=axes, keepdims=True), 1))
    a = np.abs(x)
    return np.where(ye == 0, 0, _phase(x) * (a / safe) ** (ord - 1))


def _matrix_norm_gradient(xm, ord):
    """d ||X||_ord / dX for matrices in the last two axes of xm (stacked)."""
    if ord in (None, "fro"):
        y = np.sqrt(np.sum(np.abs(xm) ** 2, axis=(-2, -1), keepdims=True))
        return np.where(y == 0, 0, xm / np.where(y == 0, 1, y))
    if ord in ("nuc", 2, -2):
        u, _, vh = np.linalg.svd(xm, full_matrices=False)
        if ord == "nuc":
            return u @ vh
        k = 0 if ord == 2 else -1
        return u[..., :, k, None] * vh[..., k, None, :]
    if ord in (1, -1):  # extreme column sum
        pick = np.max if ord == 1 else np.min
        return _phase(xm) * _split_ties(np.sum(np.abs(xm), axis=-2), -1, pick)[..., None, :]
    if ord in (np.inf, -np.inf):  # extreme row sum
        pick = np.max if ord == np.inf else np.min
        return _phase(xm) * _split_ties(np.sum(np.abs(xm), axis=-1), -1, pick)[..., :, None]
    raise ValueError(f"invalid norm order {ord!r} for matrices")


def _norm_gradient(y, x, ord, axis, keepdims):
    """(G, reduced axes): G = d norm / dx, the shape of x, for a unit cotangent."""
    axes, matrix = _norm_axes(x, ord, axis)
    if matrix:
        xm = np.moveaxis(x, axes, (-2, -1))
        return np.moveaxis(_matrix_norm_gradient(xm, ord), (-2, -1), axes), axes
    ye = y if keepdims else np.expand_dims(y, axes)
    return _vector_norm_gradient(x, ye, ord, axes), axes


def _zero_slices(y, x, ord, axis, keepdims):
    """Where a vector norm's reduced slices of x are all zero (a cone's tip), broadcast against x; None for a
    matrix norm or where none is."""
    axes, matrix = _norm_axes(x, ord, axis)
    if matrix or isinstance(x, ArrayLeaf) or isinstance(y, ArrayLeaf):  # (a dask array: never computed here)
        return None
    ye = plain(y) if keepdims else np.expand_dims(plain(y), axes)
    at = np.asarray(ye) == 0
    return np.broadcast_to(at, np.shape(x)) if at.any() else None


def _norm_grad(dy, y, x, ord=None, axis=None, keepdims=False):
    g, axes = _norm_gradient(y, x, ord, axis, keepdims)
    if type(x).__name__ != "Dual" and _zero_slices(y, x, ord, axis, keepdims) is not None:
        note_tie("np.linalg.norm at a zero vector", None)  # (forward mode tells: `cone_tip`; a cotangent of 0
        # reaching it too: `sin(n) v / max(n, tiny)`'s, whose derivative in v is not)
    return (dy if keepdims else np.expand_dims(dy, axes)) * g


def _norm_jvp(t, y, x, ord=None, axis=None, keepdims=False):
    g, axes = _norm_gradient(y, x, ord, axis, keepdims)
    if (at := _zero_slices(y, x, ord, axis, keepdims)) is not None:
        cone_tip("np.linalg.norm", at, t)
    return np.sum(np.real(conj(g) * t), axis=axes, keepdims=keepdims)


reduction_rule(np.linalg.norm, ("ord", "axis", "keepdims"), _norm_grad, _norm_jvp)


def _norm_recorded(x, ord=None, axis=None, keepdims=False):
    """np.linalg.norm as reverse mode records it: at a zero vector, noted for forward mode to tell whether x
    moves off it (a cone's tip) even where the norm's value only steers, `if norm(w) < 1e-6: return I`
    (modern_robotics' MatrixExp3 at 0: its adjoint, never reached by a cotangent, noted nothing, and the
    branch's constant came out as the derivative: 0 where the rotation's is not)."""
    y = np.linalg.norm(x, ord, axis, keepdims)
    if type(x) is _ndarray and x.dtype.kind in "fc" and _zero_slices(y, x, ord, axis, keepdims) is not None:
        note_tie("np.linalg.norm at a zero vector", None)
    return y


registry.set(np.linalg.norm, impl=_norm_recorded)


# -- sparsity (contexts/rules/sparsity_specs.py) ------------------------------------------------------

registry.sparsity(Reduction(linear=True), np.sum, np.mean, np.nansum, np.nanmean)
registry.sparsity(Reduction(linear="prod"), np.prod, np.nanprod)
registry.sparsity(Reduction(linear="max"), np.max, np.amax, np.nanmax)
registry.sparsity(Reduction(linear="min"), np.min, np.amin, np.nanmin)
registry.sparsity(Reduction(linear=False), np.std, np.var, np.nanstd, np.nanvar)
registry.sparsity(Cumulative(linear=True), np.cumsum, np.nancumsum)
registry.sparsity(Cumulative(linear=False), np.cumprod, np.nancumprod)
registry.sparsity(INDICES, np.argmax, np.argmin, np.nanargmax, np.nanargmin)
# (no reverse rules: reverse mode runs numpy's Python for them) conservative along the axis, as the
# elements picked depend on the values; several q give a leading axis
registry.sparsity(Custom("rules.py: order statistics"), np.median, np.percentile, np.quantile, np.nanmedian,
                  np.nanpercentile, np.nanquantile)
registry.sparsity(Custom("rules.py: matrix norms dense, the inf-norm picks by |x|"), np.linalg.norm)
