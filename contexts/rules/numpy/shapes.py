"""Shape rules: reshaping, transposing, joining, splitting, tiling, flipping, padding, sorting,
array construction, dtype casts and copies.

All of these are linear in the array argument, so each rule is its transpose map (`register_linear`),
under the numpy function and, where one exists, the ndarray method key `(np.ndarray, name)`.
`x.T` is an attribute, not a call: engines that see it route it to `(np.ndarray, 'transpose')`.
Functions taking a list of arrays (`concatenate`, `stack`, `np.array([...])`) return a list of
cotangents for that argument.

>>> import numpy as np
>>> from contexts.rules.registry import registry
>>> x = np.arange(6.0)
>>> registry.get(np.reshape).adjoint(np.ones((2, 3)), x.reshape(2, 3), x, (2, 3))[0]
array([1., 1., 1., 1., 1., 1.])
"""

from __future__ import annotations

import types

import numpy as np

from ..leaves import ArrayLeaf, as_array  # np.asarray, but a dask array is left as it is
from ..cotangents import Refused
from ..registry import changes_values, registry
from ..ties import TiedApart, note_tie, parting, plain
from ..sparsity_specs import DENSE, INDICES, STRUCTURAL, Custom
from ._util import bind as _bind, is_dual, match_primal, may_carry, register_linear, sum_to_shape, unsupported, zeros, finalize_refused

__all__ = ["split_cotangent", "sort_permutation"]




def _method(name):
    """fn(x, *args) = as_array(x).<name>(*args): applies an ndarray method to a tangent."""
    def call(x, *args, **kwargs):
        return getattr(as_array(x), name)(*args, **kwargs)
    call.__name__ = call.__qualname__ = f"ndarray_{name}"
    return call


def _both(name, fn, transpose, method=None):
    """Register a linear rule under np.<name> (fn) and the ndarray method `method` (default: name)."""
    register_linear([fn], fn, transpose, name)
    if method is not False:
        method = method or name
        register_linear([(np.ndarray, method)], _method(method), transpose, f"ndarray_{method}")


# -- reshaping: the cotangent is dy reshaped back ----------------------------------------------------

def _reshape(g, shape, order):
    """np.reshape(g, shape, order=order); C order without naming it (dask's reshape takes no `order`)."""
    return np.reshape(g, shape) if order == "C" else np.reshape(g, shape, order=order)


def reading_order(a, rest, kwargs, position):
    """The order a reshape-like call read a's elements in ('F', 'C', or 'K': memory order, not one of them):
    'A' and 'K' by a's layout (numpy reads a Fortran-ordered array, a transposed matrix, in memory order:
    taken for C order, the cotangent came back permuted, gen13 W6)."""
    order = kwargs.get("order", rest[position] if len(rest) > position and isinstance(rest[position], str)
                       else "C")
    if order not in ("A", "K"):
        return "F" if order == "F" else "C"
    flags = getattr(a, "flags", None)
    if flags is None or getattr(flags, "c_contiguous", True):
        return "C"
    if flags.f_contiguous:
        return "F"
    return "C" if order == "A" else "K"


def memory_order(a) -> np.ndarray:
    """The flat C-order positions of a's elements in the order `a.ravel(order='K')` reads them: the same
    read of an index array laid out as a is (`np.empty_like` keeps a's layout, as ravel does: it does not
    flip negative strides, unlike np.nditer)."""
    where = np.empty_like(a, dtype=np.intp)
    where[...] = np.arange(np.size(a)).reshape(np.shape(a))
    return where.ravel(order="K")


def _memory_order_back(dy, a):
    """Cotangent of `a.ravel(order='K')` of a non-contiguous a: dy put back where each element was read."""
    g = zeros((np.size(a),), np.result_type(dy, np.float64), dy)
    g[memory_order(a)] = dy
    return g.reshape(np.shape(a))


def reshape_transpose(dy, y, a, *rest, **kwargs):
    """Cotangent of reshape/ravel/flatten/squeeze/expand_dims: dy in a's shape (same memory order)."""
    order = reading_order(a, rest, kwargs, len(rest) - 1 if rest else 0)
    return _memory_order_back(dy, a) if order == "K" else _reshape(dy, np.shape(a), order)


def ravel_transpose(dy, y, a, *rest, **kwargs):
    order = reading_order(a, rest, kwargs, 0)
    return _memory_order_back(dy, a) if order == "K" else _reshape(dy, np.shape(a), order)


def _plain_reshape(dy, y, a, *rest, **kwargs):
    return np.reshape(dy, np.shape(a))


_both("reshape", np.reshape, reshape_transpose)
_both("ravel", np.ravel, ravel_transpose)
register_linear([(np.ndarray, "flatten")], _method("flatten"), ravel_transpose, "ndarray_flatten")


def _ordered_frule(fn, last: bool):
    """The frule of a reshape-like fn reading its array in an order 'A' or 'K' resolved by the value's
    layout: the tangent, laid out otherwise (a C-ordered tangent of a Fortran-ordered value), is read in
    that resolved order, never its own (`np.asfortranarray(a).ravel(order='K')`: the tangent came out in C
    order, 197.6 for 187.6, gen13 W6). last: the order is the last positional argument (reshape's), else
    the first."""
    def frule(tangents, x, *rest, **kwargs):
        y = fn(x, *rest, **kwargs)
        t = tangents[0] if tangents else None
        if t is None:
            return y, None
        position = (len(rest) - 1 if rest else 0) if last else 0
        order = reading_order(x, rest, kwargs, position)
        if order == "K":
            return y, np.reshape(np.reshape(t, -1)[memory_order(x)], np.shape(y))
        if len(rest) > position and isinstance(rest[position], str):
            rest = (*rest[:position], order, *rest[position + 1:])
        elif "order" in kwargs:
            kwargs = dict(kwargs, order=order)
        return y, fn(t, *rest, **kwargs)
    frule.__name__ = frule.__qualname__ = f"{getattr(fn, '__name__', 'reshape')}_ordered_frule"
    return frule


for _key, _fn, _last in ((np.reshape, np.reshape, True), ((np.ndarray, "reshape"), _method("reshape"), True),
                         (np.ravel, np.ravel, False), ((np.ndarray, "ravel"), _method("ravel"), False),
                         ((np.ndarray, "flatten"), _method("flatten"), False)):
    registry.frule(_key, kind="linear")(_ordered_frule(_fn, _last))
_both("squeeze", np.squeeze, _plain_reshape)
_both("expand_dims", np.expand_dims, _plain_reshape, method=False)
for _fn in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
    _both(_fn.__name__, _fn, _plain_reshape, method=False)


def broadcast_to_transpose(dy, y, a, *rest, **kwargs):
    """Cotangent of broadcast_to: dy summed over the broadcast axes."""
    return sum_to_shape(dy, np.shape(a))


_both("broadcast_to", np.broadcast_to, broadcast_to_transpose, method=False)


# -- transposing ---------------------------------------------------------------------------------

def transpose_transpose(dy, y, a, *rest, **kwargs):
    """Cotangent of transpose(a, axes): dy transposed by the inverse permutation."""
    axes = kwargs.get("axes", rest[0] if len(rest) == 1 else rest if rest else None)
    if axes is None:
        return np.transpose(dy)
    if isinstance(axes, (int, np.integer)):  # (`x.transpose(0)` of a 1-d x: scipy.signal's czt)
        axes = (axes,)
    return np.transpose(dy, np.argsort([ax % np.ndim(a) for ax in axes]))


def matrix_transpose_transpose(dy, y, a):
    return np.matrix_transpose(dy)


def swapaxes_transpose(dy, y, a, axis1, axis2):
    return np.swapaxes(dy, axis1, axis2)


def moveaxis_transpose(dy, y, a, source, destination):
    return np.moveaxis(dy, destination, source)


_both("transpose", np.transpose, transpose_transpose)
_both("matrix_transpose", np.matrix_transpose, matrix_transpose_transpose, method=False)
_both("swapaxes", np.swapaxes, swapaxes_transpose)
_both("moveaxis", np.moveaxis, moveaxis_transpose, method=False)


# -- flipping, rolling, tiling, repeating ------------------------------------------------------------

def flip_transpose(dy, y, m, *rest, **kwargs):
    (axis,) = _bind(rest, kwargs, ("axis",), (None,))
    return np.flip(dy, axis)


def fliplr_transpose(dy, y, m):
    return np.fliplr(dy)


def flipud_transpose(dy, y, m):
    return np.flipud(dy)


def roll_transpose(dy, y, a, shift, *rest, **kwargs):
    (axis,) = _bind(rest, kwargs, ("axis",), (None,))
    return np.roll(dy, np.negative(shift), axis)


def tile_transpose(dy, y, a, reps):
    """Cotangent of tile: dy viewed as (rep, size) pairs per axis, summed over the reps."""
    shape = np.shape(a)
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    d = max(len(shape), len(reps))
    full_shape = (1,) * (d - len(shape)) + tuple(shape)
    full_reps = (1,) * (d - len(reps)) + reps
    paired = [n for pair in zip(full_reps, full_shape) for n in pair]
    summed = np.reshape(dy, paired).sum(axis=tuple(range(0, 2 * d, 2)))
    return summed.reshape(shape)


def repeat_transpose(dy, y, a, repeats, *rest, **kwargs):
    """Cotangent of repeat: sums of the consecutive copies of each element (reduceat)."""
    (axis,) = _bind(rest, kwargs, ("axis",), (None,))
    a_ = as_array(a)
    dy = as_array(dy)
    if axis is None:
        return repeat_transpose(dy, y, a_.ravel(), repeats, 0).reshape(a_.shape)
    axis %= a_.ndim
    n = a_.shape[axis]
    if np.ndim(repeats) == 0 or np.size(repeats) == 1:
        r = int(np.ravel(repeats)[0])
        return dy.reshape(dy.shape[:axis] + (n, r) + dy.shape[axis + 1:]).sum(axis=axis + 1)
    repeats = as_array(repeats)
    starts = np.concatenate(([0], np.cumsum(repeats)[:-1]))
    nonzero = repeats > 0
    out = zeros(a_.shape, np.result_type(dy, a_), dy)
    if nonzero.any():
        sums = np.add.reduceat(dy, starts[nonzero], axis=axis)
        index = [slice(None)] * a_.ndim
        index[axis] = nonzero
        out[tuple(index)] = sums
    return out


_both("flip", np.flip, flip_transpose, method=False)
register_linear([np.fliplr], np.fliplr, fliplr_transpose, "fliplr")
register_linear([np.flipud], np.flipud, flipud_transpose, "flipud")
_both("roll", np.roll, roll_transpose, method=False)
_both("tile", np.tile, tile_transpose, method=False)
_both("repeat", np.repeat, repeat_transpose)


# -- padding -------------------------------------------------------------------------------------

_COPY_MODES = ("edge", "reflect", "symmetric", "wrap")


def pad_transpose(dy, y, array, pad_width, *rest, **kwargs):
    """Cotangent of pad: the inner slice for constant mode; for modes that copy elements (edge,
    reflect, symmetric, wrap) every copy's cotangent summed back onto its source (bincount)."""
    (mode,) = _bind(rest, kwargs, ("mode",), ("constant",))
    shape = np.shape(array)
    widths = np.broadcast_to(as_array(pad_width, dtype=int), (len(shape), 2))
    dy = as_array(dy)
    if mode == "constant" or mode == "empty":
        return dy[tuple(slice(lo, lo + n) for (lo, _), n in zip(widths, shape))]
    if mode not in _COPY_MODES or kwargs.get("reflect_type", "even") != "even":
        raise unsupported("np.pad", f"mode={mode!r}", f"use one of 'constant', {', '.join(_COPY_MODES)}")
    size = int(np.prod(shape))
    source = np.pad(np.arange(size).reshape(shape), pad_width, mode=mode).ravel()

    def scatter(w):
        return np.bincount(source, weights=w.ravel(), minlength=size).reshape(shape)
    if np.iscomplexobj(dy):
        return scatter(dy.real) + 1j * scatter(dy.imag)
    return scatter(dy)


def _pad_tangent(t, pad_width, *rest, **kwargs):
    """pad applied to a tangent: constant padding contributes zero, a linear ramp runs to 0 (its
    end_values are constants); the copying modes and `mean` are linear. maximum, minimum and median copy
    the tangent at the element they pick, not the statistic of the tangents: refused."""
    (mode,) = _bind(rest, kwargs, ("mode",), ("constant",))
    if mode in ("maximum", "minimum", "median") or callable(mode):
        raise unsupported("np.pad", f"mode={mode!r} in forward mode",
                          "pad with mode='edge', 'reflect', 'symmetric', 'wrap', 'mean' or a constant")
    kwargs = {k: v for k, v in kwargs.items() if k not in ("constant_values", "end_values")}
    return np.pad(t, pad_width, *rest, **kwargs)


def pad_frule(tangents, array, pad_width, *rest, **kwargs):
    t = tangents[0] if tangents else None
    return np.pad(array, pad_width, *rest, **kwargs), (None if t is None else _pad_tangent(t, pad_width, *rest, **kwargs))


def pad_adjoint(dy, y, array, pad_width, *rest, **kwargs):
    return (match_primal(pad_transpose(dy, y, array, pad_width, *rest, **kwargs), array), None) + (None,) * len(rest)


registry.adjoint(np.pad, kind="linear")(pad_adjoint)
registry.frule(np.pad, kind="linear")(pad_frule)


# -- joining and splitting (list cotangents) -------------------------------------------------------

def split_cotangent(dy, parts, axis):
    """dy cut along `axis` into pieces the sizes of `parts`, each reshaped to its part. A `Refused`
    cotangent (no known derivative) is every piece's: it raises where one of them is used, and is
    dropped with the parts that are not differentiated (the knots np.r_ builds from constant sites)."""
    if type(dy) is Refused:
        return [dy] * len(parts)
    sizes = [np.shape(p)[axis] if np.ndim(p) else 1 for p in parts]
    dy = as_array(dy)
    if isinstance(dy, ArrayLeaf):  # a dask array: cut by slices (dask has no np.split)
        ends = np.cumsum(sizes).tolist()
        lead = (slice(None),) * (axis % dy.ndim)
        pieces = [dy[lead + (slice(e - n, e),)] for n, e in zip(sizes, ends)]
    else:
        pieces = np.split(dy, np.cumsum(sizes)[:-1], axis=axis)
    return [match_primal(piece.reshape(np.shape(p)), p) for piece, p in zip(pieces, parts)]


def concatenate_adjoint(dy, y, arrays, *rest, **kwargs):
    (axis,) = _bind(rest, kwargs, ("axis",), (0,))
    if axis is None:
        flat = [np.ravel(a) for a in arrays]
        return ([match_primal(c.reshape(np.shape(a)), a)
                 for c, a in zip(split_cotangent(np.ravel(dy), flat, 0), arrays)], *(None,) * len(rest))
    return (split_cotangent(dy, arrays, axis), *(None,) * len(rest))


def stack_adjoint(dy, y, arrays, *rest, **kwargs):
    (axis,) = _bind(rest, kwargs, ("axis",), (0,))
    moved = np.moveaxis(as_array(dy), axis, 0)
    return ([match_primal(moved[i], a) for i, a in enumerate(arrays)], *(None,) * len(rest))


def hstack_adjoint(dy, y, tup, *rest, **kwargs):
    parts = [np.atleast_1d(a) for a in tup]
    axis = 0 if parts and parts[0].ndim == 1 else 1
    return ([match_primal(c.reshape(np.shape(a)), a) for c, a in zip(split_cotangent(dy, parts, axis), tup)],
            *(None,) * len(rest))


def vstack_adjoint(dy, y, tup, *rest, **kwargs):
    parts = [np.atleast_2d(a) for a in tup]
    return ([match_primal(c.reshape(np.shape(a)), a) for c, a in zip(split_cotangent(dy, parts, 0), tup)],
            *(None,) * len(rest))


def _list_frule(fn):
    """frule of a function linear in a list argument: fn of the tangents (None -> zeros)."""
    def frule(tangents, arrays, *rest, **kwargs):
        y = fn(arrays, *rest, **kwargs)
        ts = tangents[0] if tangents else None
        if ts is None or all(t is None for t in ts):
            return y, None
        ts = [np.zeros_like(as_array(a), dtype=np.result_type(a, float)) if t is None else t
              for t, a in zip(ts, arrays)]
        return y, fn(ts, *rest, **kwargs)
    frule.__name__ = frule.__qualname__ = f"{fn.__name__}_frule"
    return frule


# np.concatenate's C implementation (the dispatcher's `__wrapped__`), which numpy's own np.block calls
_CONCATENATE_C = getattr(np.concatenate, "__wrapped__", np.concatenate)

for _fn, _adj in [(np.concatenate, concatenate_adjoint), (_CONCATENATE_C, concatenate_adjoint),
                  (np.stack, stack_adjoint), (np.hstack, hstack_adjoint), (np.vstack, vstack_adjoint)]:
    registry.adjoint(_fn, kind="linear")(_adj)
    registry.frule(_fn, kind="linear")(_list_frule(_fn))


def split_adjoint(dy, y, ary, *rest, **kwargs):
    """Cotangent of split/array_split: the pieces' cotangents (None -> zeros) joined back."""
    (axis,) = _bind(rest[1:], kwargs, ("axis",), (0,))
    pieces = [np.zeros_like(p) if d is None else as_array(d) for d, p in zip(dy, y)]
    return (match_primal(np.concatenate(pieces, axis=axis), ary), *(None,) * len(rest))


def _split_frule(fn):
    def frule(tangents, ary, *rest, **kwargs):
        t = tangents[0] if tangents else None
        return fn(ary, *rest, **kwargs), (None if t is None else fn(t, *rest, **kwargs))
    frule.__name__ = frule.__qualname__ = f"{fn.__name__}_frule"
    return frule


for _fn in (np.split, np.array_split):
    registry.adjoint(_fn, kind="linear")(split_adjoint)
    registry.frule(_fn, kind="linear")(_split_frule(_fn))


# -- sorting -------------------------------------------------------------------------------------

def sort_permutation(a, axis, descending=False):
    """The stable permutation np.sort applies along axis (None: of the flattened array); reversed for
    numpy 2.5's `descending=True` (the same values in that order: which of equal values goes where is no
    derivative's business)."""
    perm = np.argsort(a, axis=axis, kind="stable")
    return np.flip(perm, axis=-1 if axis is None else axis) if descending else perm


def sort_adjoint(dy, y, a, *rest, **kwargs):
    """Cotangent of sort: dy scattered back through the sorting permutation."""
    (axis,) = _bind(rest, kwargs, ("axis",), (-1,))
    a_ = as_array(a)
    flat = a_.ravel() if axis is None else a_
    ax = 0 if axis is None else axis
    perm = sort_permutation(flat, ax, bool(kwargs.get("descending", False)))
    if type(dy).__name__ == "Dual":  # forward over reverse: gathered by the inverse permutation
        da = np.take_along_axis(np.broadcast_to(dy, flat.shape), np.argsort(perm, axis=ax), axis=ax)
        return (match_primal(da.reshape(a_.shape), a), *(None,) * len(rest))
    if type(dy) is Refused:  # no known derivative downstream: passed on (np.result_type cannot read it, gen24 C1)
        return (dy, *(None,) * len(rest))
    if parting(plain(y), plain(dy), ax) and not note_tie("np.sort", None):
        return (Refused(TiedApart("np.sort")), *(None,) * len(rest))  # (tied entries read apart: `ties`)
    da = np.empty(flat.shape, dtype=np.result_type(dy, a_))
    np.put_along_axis(da, perm, as_array(dy), ax)
    return (match_primal(da.reshape(a_.shape), a), *(None,) * len(rest))


def sort_frule(tangents, a, *rest, **kwargs):
    (axis,) = _bind(rest, kwargs, ("axis",), (-1,))
    y = np.sort(a, *rest, **kwargs)
    t = tangents[0] if tangents else None
    if t is None:
        return y, None
    down = bool(kwargs.get("descending", False))
    if axis is None:
        ty = as_array(t).ravel()[sort_permutation(np.ravel(a), 0, down)]
    else:
        ty = np.take_along_axis(as_array(t), sort_permutation(a, axis, down), axis)
    if parting(y, ty, 0 if axis is None else axis):  # tied entries moving apart: no derivative (`ties`)
        raise TiedApart("np.sort").error()
    return y, ty


registry.adjoint(np.sort, kind="linear")(sort_adjoint)
registry.frule(np.sort, kind="linear")(sort_frule)


# -- construction, casts, copies ---------------------------------------------------------------------

def _nested_cotangent(dy, obj):
    """The cotangent of the object np.array was built from: lists mirror lists, arrays get arrays."""
    if isinstance(obj, (list, tuple)):
        return [_nested_cotangent(dy[i], item) for i, item in enumerate(obj)]
    return match_primal(dy, obj)


def _nested_tangent(t, obj):
    """A list of tangents (None = zero) as one array."""
    if t is None:
        return np.zeros(np.shape(obj), dtype=np.result_type(as_array(obj), float))
    if isinstance(obj, (list, tuple)):
        return np.array([_nested_tangent(ti, oi) for ti, oi in zip(t, obj)])
    return as_array(t)


def _not_structured(y, fn_name):
    """A structured array (fields: `dtype=[('a', float), ...]`, records) holds its values by field, which
    the rules' cotangents (plain arrays) do not: refused (its fields' reads gave 0, silently)."""
    if getattr(getattr(y, "dtype", None), "names", None) is not None:
        raise unsupported(fn_name, "a structured array (a dtype with fields, records) of differentiated values",
                          "keep the fields as separate arrays (or a dict of arrays)")


def array_adjoint(dy, y, obj, *rest, **kwargs):
    """Cotangent of np.array/as_array(obj): a list for a list of scalars or arrays; a `Refused` one (no
    derivative known) passes through as it is, still refusing wherever it is used."""
    _not_structured(y, "np.array")
    if type(dy) is Refused:
        return (dy if may_carry(obj) else None, *(None,) * len(rest))
    dy = as_array(dy)
    if kwargs.get("ndmin") and isinstance(obj, (list, tuple)) and dy.ndim > len(natural := np.shape(obj)):
        dy = dy.reshape(dy.shape[dy.ndim - len(natural):])  # (ndmin's leading axes: np.c_[M, [a, b, c]])
    if isinstance(obj, (list, tuple)):
        return (_nested_cotangent(dy, obj), *(None,) * len(rest))
    if kwargs.get("ndmin") and may_carry(obj) and dy.ndim > np.ndim(obj):
        dy = dy.reshape(np.shape(obj))
    return (match_primal(dy, obj) if may_carry(obj) else None, *(None,) * len(rest))


def _array_frule(fn):
    def frule(tangents, obj, *rest, **kwargs):
        t = tangents[0] if tangents else None
        y = fn(obj, *rest, **kwargs)
        if t is None:
            return y, None
        _not_structured(y, f"np.{fn.__name__}")
        if isinstance(y, np.ndarray) and y.dtype == object and any(
                isinstance(e, (list, tuple, dict)) for e in y.flat):
            # (an object array holding the lists it was given: a change through it is one of them, which a
            # tangent array cannot follow; gen20 W9 crashed the twin, and gave 0 before)
            raise unsupported(f"np.{fn.__name__}", "an object array holding lists or dicts of differentiated "
                              "values in forward mode", "keep the containers in a list")
        dtype = kwargs.get("dtype", rest[0] if rest else None)
        dy = _nested_tangent(t, obj)
        if np.ndim(dy) < np.ndim(y) and np.size(dy) == np.size(y):  # (ndmin's leading axes)
            dy = np.reshape(dy, np.shape(y))
        if dtype is None and isinstance(y, np.ndarray) and y.dtype.kind in "fc" and isinstance(dy, np.ndarray) \
                and dy.dtype.kind in "biu":  # (constants' zero tangents, ints: a value stored later, cut to 0)
            dtype = y.dtype
        return y, (dy if dtype is None else dy.astype(dtype))
    frule.__name__ = frule.__qualname__ = f"{fn.__name__}_frule"
    return frule


_SEQUENCE_METHODS = ("__iter__", "__getitem__", "__len__", "__array__")


def _checked_builder(fn):
    """fn as reverse mode runs it on differentiated values (`Rule.impl`): a structured result is refused
    at once (its adjoint is never asked when its fields' reads pass no cotangent back)."""
    def built(*args, **kwargs):
        if args and type(args[0]) not in (list, tuple) and isinstance(args[0], (list, tuple)) and any(
                isinstance(getattr(type(args[0]), m, None), types.FunctionType) for m in _SEQUENCE_METHODS):
            # (a list subclass whose own `__iter__` scales its items: numpy reads them through it, the adjoint
            # gave the underlying items' derivative, 1 for 2, pkJ W3)
            raise unsupported(f"np.{fn.__name__}", f"a {type(args[0]).__name__} (a list or tuple subclass with "
                              "its own item access) of differentiated values", "make a plain list or array of its values first")
        y = fn(*args, **kwargs)
        _not_structured(y, f"np.{fn.__name__}")
        return y
    built.__name__ = built.__qualname__ = f"{fn.__name__}_checked"
    return built


for _fn in (np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray):
    registry.adjoint(_fn, kind="linear")(array_adjoint)
    registry.frule(_fn, kind="linear")(_array_frule(_fn))
    registry.set(_fn, impl=_checked_builder(_fn))


def astype_adjoint(dy, y, x, *rest, **kwargs):
    """Cotangent of x.astype(dtype): dy cast back to x's dtype; none for an integer x or result. A `Refused`
    one passes through as it is (as np.asarray's)."""
    if not (may_carry(x) and may_carry(y)):
        return (None, *(None,) * len(rest))
    if type(dy) is Refused:
        return (dy, *(None,) * len(rest))
    return (match_primal(as_array(dy), x), *(None,) * len(rest))


def text_cast_refused(x, y) -> None:
    """`x.astype(str)` of a differentiated array: its values made into text, which carries no derivative (parsed
    back, `.astype(float)`, both modes gave 0): refused where it is made."""
    if getattr(getattr(y, "dtype", None), "kind", "") in "US" and getattr(getattr(x, "dtype", None), "kind", "") in "fc":
        raise unsupported("ndarray.astype", "a differentiated array's values made into text (a str or bytes dtype)",
                          "keep the numbers as numbers; format them (`str(v)`, f-strings) where text is only shown")


def astype_frule(tangents, x, *rest, **kwargs):
    y = x.astype(*rest, **kwargs)
    t = tangents[0] if tangents else None
    if t is not None:
        text_cast_refused(x, y)
    if t is None or not may_carry(y):
        return y, None
    return y, as_array(t).astype(y.dtype)


registry.adjoint((np.ndarray, "astype"), kind="linear")(astype_adjoint)
registry.frule((np.ndarray, "astype"), kind="linear")(astype_frule)


def _identity_transpose(dy, y, a, *rest, **kwargs):
    return as_array(dy)


_both("copy", np.copy, _identity_transpose)


def _same_dtype_view(x, y):
    """A view reinterpreting the bytes in another dtype (`x.view(np.int64)`) has no derivative: refused. So
    is a view as np.matrix: its `*` and `**` are matrix products and powers, and the rules' arithmetic on
    the cotangents, matrices too, would take them for elementwise ones (a transposed gradient, silently)."""
    if np.dtype(getattr(y, "dtype", None)) != np.dtype(getattr(x, "dtype", None)):
        raise unsupported("ndarray.view", "a view in another dtype (the bytes reinterpreted)",
                          "convert the values instead: x.astype(dtype)")
    if isinstance(y, np.matrix):
        raise unsupported("ndarray.view", "a numpy.matrix (np.asmatrix, np.matrix: its * is a matrix product)",
                          "use plain arrays and the @ operator (np.asarray(m), a @ b)")
    if type(y) is not np.ndarray and isinstance(y, np.ndarray) and changes_values(type(y)):
        raise finalize_refused(type(y))  # (its `__array_finalize__` ran on the view: `np.clip(self, ..., out=...)`)


def view_adjoint(dy, y, x, *rest, **kwargs):
    """Cotangent of x.view(), x.view(np.ndarray), x.view(Subclass) (the same values, another class): dy as
    a plain array (also for an ndarray subclass's own view, astropy's `q.view(np.ndarray)`)."""
    _same_dtype_view(x, y)
    if type(dy) is Refused:
        return (dy, *(None,) * len(rest))
    if not isinstance(dy, (np.ndarray, np.generic, float, complex, int)):
        # (the view's class holds more than its values: np.ma.MaskedArray's cotangent is its fields')
        raise unsupported("ndarray.view", f"a view as {type(y).__module__}.{type(y).__name__} (its cotangent "
                          f"is a {type(dy).__name__}, not an array)",
                          "differentiate the plain values (x.data, np.asarray(x)) instead of the object")
    return (match_primal(as_array(dy), as_array(x)), *(None,) * len(rest))


def view_frule(tangents, x, *rest, **kwargs):
    y = x.view(*rest, **kwargs)
    t = tangents[0] if tangents else None
    if t is None:
        return y, None
    _same_dtype_view(x, y)
    return y, t


registry.adjoint((np.ndarray, "view"), kind="linear")(view_adjoint)
registry.frule((np.ndarray, "view"), kind="linear")(view_frule)




def _copy_with_memo(x, memo=None):
    return np.array(x, copy=True)


# `copy.copy(a)` / `copy.deepcopy(a)` call `type(a).__copy__(a)`, `__deepcopy__(a, memo)`: in forward mode
# `type(a)` of a dual array is ndarray in library code as in the user's, so these meet duals
register_linear([(np.ndarray, "__copy__")], _copy_with_memo, _identity_transpose, "ndarray___copy__")
register_linear([(np.ndarray, "__deepcopy__")], _copy_with_memo, _identity_transpose, "ndarray___deepcopy__")


registry.nondifferentiable(
    np.shape, np.ndim, np.size, np.zeros_like, np.ones_like, np.empty_like, np.argsort, np.nonzero,
    np.flatnonzero, np.argwhere, np.searchsorted, np.indices, (np.ndarray, "argsort"),
    (np.ndarray, "nonzero"), (np.ndarray, "searchsorted"), (np.ndarray, "argpartition"), np.argpartition,
    np.lexsort, (np.ndarray, "setflags"))  # (setflags: `x.setflags(write=False)`, scipy.signal's periodogram)


# -- broadcast_arrays ----------------------------------------------------------------------------

@registry.adjoint(np.broadcast_arrays)
def broadcast_arrays_adjoint(dy, y, *args, subok=False):
    """Each output is its input broadcast: its cotangent summed back to the input's shape."""
    from ..generic import unbroadcast
    gs = list(dy) if dy is not None else [None] * len(args)
    # (an array argument by its shape: a dual array, forward over reverse, was summed to a number)
    return tuple(None if g is None else (unbroadcast(g, a) if np.ndim(a) else np.sum(g))
                 for g, a in zip(gs, args))


@registry.frule(np.broadcast_arrays)
def broadcast_arrays_frule(tangents, *args, subok=False):
    ys = np.broadcast_arrays(*args, subok=subok)
    shape = ys[0].shape if ys else ()
    return ys, tuple(None if t is None else np.broadcast_to(t, shape) for t in tangents)


def _many_arrays(fn):
    """atleast_Nd(a, b, ...) returns one array per argument: each cotangent reshaped to its argument."""
    rule = registry.get(fn)
    one_adjoint, one_frule = rule.adjoint, rule.frule

    def adjoint(dy, y, *args):
        if len(args) == 1:
            return one_adjoint(dy, y, *args)
        gs = list(dy) if dy is not None else [None] * len(args)
        return tuple(None if g is None else (np.reshape(g, np.shape(a)) if isinstance(a, np.ndarray)
                                             else as_array(g).reshape(np.shape(a))[()])
                     for g, a in zip(gs, args))

    def frule(tangents, *args):
        if len(args) == 1:
            return one_frule(tangents, *args)
        ys = fn(*args)
        return ys, tuple(None if t is None else np.reshape(t, np.shape(y)) for t, y in zip(tangents, ys))

    adjoint.__name__ = f"{fn.__name__}_adjoint"
    frule.__name__ = f"{fn.__name__}_frule"
    rule.adjoint, rule.frule = adjoint, frule


for _fn in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
    _many_arrays(_fn)


# -- sparsity (contexts/rules/sparsity_specs.py) ------------------------------------------------------
# the shape functions move elements: applied to an array of element indices they say where each goes

registry.sparsity(STRUCTURAL, np.reshape, np.ravel, np.squeeze, np.expand_dims, np.broadcast_to,
                  np.transpose, np.matrix_transpose, np.swapaxes, np.moveaxis, np.flip, np.fliplr, np.flipud,
                  np.roll, np.rot90, np.tile, np.repeat, np.copy, np.ascontiguousarray, np.asfortranarray,
                  np.atleast_1d, np.atleast_2d, np.atleast_3d)
registry.sparsity(Custom("rules.py/ops.py: several arrays joined"), np.concatenate, _CONCATENATE_C, np.stack, np.hstack,
                  np.vstack, np.column_stack, np.append, *([np.row_stack] if hasattr(np, "row_stack") else []))
registry.sparsity(Custom("ops.py: constant padding takes no dependency"), np.pad)
registry.sparsity(Custom("ops.py: arrays of tracers stacked"), np.array, np.asarray, np.asanyarray)
registry.sparsity(Custom("rules.py: one tracer per argument"), np.broadcast_arrays)
registry.sparsity(Custom("rules.py: the permutation at the point, or the whole line along axis"), np.sort,
                  np.partition)
registry.sparsity(Custom("ops.py: differences along axis, prepend/append joined first"), np.diff)
registry.sparsity(INDICES, np.argsort, np.argpartition, np.searchsorted, np.lexsort)
registry.sparsity(Custom("rules.py: shapes and types of tracers"), np.shape, np.ndim, np.size, np.result_type,
                  np.iscomplexobj, np.isrealobj, np.isscalar)


# -- strided views ---------------------------------------------------------------------------------

from numpy.lib import stride_tricks as _stride_tricks  # noqa: E402


def plain(x):
    """The value behind a dual (nested ones too): its memory layout is the one a view is taken of."""
    while is_dual(x):
        x = x.primal
    return x


def _strided_indices(x: np.ndarray, shape, strides) -> np.ndarray:
    """For `as_strided(x, shape, strides)`: the flat (C-order) index into x of each of its elements, found
    by byte offset from x's first element. A view reaching memory that is not one of x's elements (a gap
    between them, beyond its end) is refused: its values are no function of x's."""
    shape = x.shape if shape is None else tuple(shape)
    strides = x.strides if strides is None else tuple(strides)
    xoff = np.zeros(x.shape, dtype=np.int64)
    for k, (n, s) in enumerate(zip(x.shape, x.strides)):
        xoff += (np.arange(n, dtype=np.int64) * s).reshape((n,) + (1,) * (x.ndim - k - 1))
    yoff = np.zeros(shape, dtype=np.int64)
    for k, (n, s) in enumerate(zip(shape, strides)):
        yoff += (np.arange(n, dtype=np.int64) * s).reshape((n,) + (1,) * (len(shape) - k - 1))
    flat = xoff.ravel()
    order = np.argsort(flat, kind="stable")
    pos = np.clip(np.searchsorted(flat[order], yoff.ravel()), 0, max(flat.size - 1, 0))
    if flat.size == 0 or not np.array_equal(flat[order][pos], yoff.ravel()):
        raise unsupported("np.lib.stride_tricks.as_strided", "a view reaching memory outside the array's elements",
                          "index the array instead (x[idx]), or use sliding_window_view")
    return order[pos].reshape(shape)


def _strided_options(rest, kwargs):
    return _bind(rest, kwargs, ("shape", "strides", "subok", "writeable"), (None, None, False, True))


def as_strided_adjoint(dy, y, x, *rest, **kwargs):
    """as_strided is a gather of x's elements (overlapping windows repeat them): each element's cotangent
    is the sum of its copies'."""
    shape, strides, _, _ = _strided_options(rest, kwargs)
    xa = as_array(plain(x))  # (the layout is the value's: a dual's under forward over reverse)
    idx = _strided_indices(xa, shape, strides)
    dx = zeros(xa.size, np.result_type(xa, float), dy)
    np.add.at(dx, idx.ravel(), np.broadcast_to(as_array(dy), idx.shape).ravel())
    out = (match_primal(dx.reshape(xa.shape), x), *(None,) * len(rest))
    return out + ({k: None for k in kwargs},) if kwargs else out


def as_strided_frule(tangents, x, *rest, **kwargs):
    y = _stride_tricks.as_strided(x, *rest, **kwargs)
    t = tangents[0] if tangents else None
    if t is None:
        return y, None
    shape, strides, _, _ = _strided_options(rest, kwargs)
    xa = as_array(plain(x))
    idx = _strided_indices(xa, shape, strides)
    if type(t) is np.ndarray and t.shape == xa.shape and t.strides == xa.strides and t.dtype == xa.dtype:
        # a view of the tangent as y is of x: a later change of x in place (`np.tanh(a, out=a)`) is seen
        # through y's tangent as through its value
        return y, _stride_tricks.as_strided(t, idx.shape, strides if strides is not None else xa.strides,
                                            writeable=y.flags.writeable)
    tt = np.broadcast_to(as_array(t), np.shape(t)[:max(np.ndim(t) - xa.ndim, 0)] + xa.shape)
    lead = tt.shape[:tt.ndim - xa.ndim]  # (jacfwd's batch of tangents)
    return y, tt.reshape(lead + (-1,))[..., idx]


registry.adjoint(_stride_tricks.as_strided, kind="linear")(as_strided_adjoint)
registry.frule(_stride_tricks.as_strided, kind="linear")(as_strided_frule)


def _window_options(rest, kwargs):
    return _bind(rest, kwargs, ("window_shape", "axis"), (None, None))


def sliding_window_view_adjoint(dy, y, x, *rest, **kwargs):
    """`sliding_window_view` is as_strided's gather of overlapping windows (its rule, on the view's own
    shape and strides)."""
    window_shape, axis = _window_options(rest, kwargs)
    xa = as_array(plain(x))
    view = _stride_tricks.sliding_window_view(xa, window_shape, axis)
    return as_strided_adjoint(dy, view, x, view.shape, view.strides) + (None,) * (len(rest) - 2) + (
        ({k: None for k in kwargs},) if kwargs else ())


def sliding_window_view_frule(tangents, x, *rest, **kwargs):
    window_shape, axis = _window_options(rest, kwargs)
    xa = as_array(plain(x))
    t = tangents[0] if tangents else None
    lead = np.ndim(t) - xa.ndim
    if type(t) is np.ndarray and lead >= 0 and t.shape[lead:] == xa.shape and window_shape is not None:
        # the windows of the tangent (jacfwd's batch axes first): a view of it, as y is of x, so that a later
        # change of x in place (`np.tanh(a[:], out=a[:])`) is seen through y's tangent as through its value
        axes = range(xa.ndim) if axis is None else (axis,) if np.ndim(axis) == 0 else axis
        axes = tuple(int(a) % max(xa.ndim, 1) + lead for a in axes)
        y = _stride_tricks.sliding_window_view(x, *rest, **kwargs)
        return y, _stride_tricks.sliding_window_view(t, window_shape, axis=axes,
                                                     writeable=kwargs.get("writeable", False))
    view = _stride_tricks.sliding_window_view(xa, window_shape, axis)
    _, dy = as_strided_frule(tangents[:1], xa, view.shape, view.strides)
    return _stride_tricks.sliding_window_view(x, *rest, **kwargs), dy


registry.adjoint(_stride_tricks.sliding_window_view, kind="linear")(sliding_window_view_adjoint)
registry.frule(_stride_tricks.sliding_window_view, kind="linear")(sliding_window_view_frule)
registry.sparsity(DENSE, _stride_tricks.as_strided, _stride_tricks.sliding_window_view)  # (conservative)
