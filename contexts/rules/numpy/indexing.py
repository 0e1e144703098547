"""Indexing rules: `x[idx]` for every index numpy accepts, `take`, `take_along_axis`, `tril`/`triu`,
and `setitem_adjoint`, the reverse of an in-place `x[idx] = v` that the reverse engine calls.

Basic indices (ints, slices with any step, Ellipsis, None) select each element at most once, so the
cotangent is written with a plain assignment; advanced indices (integer arrays, lists, boolean masks,
tuples mixing them) may repeat elements and accumulate with `np.add.at` (fast since numpy 1.25; a
full-shape boolean mask writes through `flatnonzero`, four times faster than a masked assignment).

>>> import numpy as np
>>> from contexts.rules.registry import registry
>>> x = np.arange(4.0)
>>> registry.get(x.__getitem__).adjoint(np.ones(3), x[[0, 0, 2]], x, [0, 0, 2])[0]
array([2., 0., 1., 0.])
"""

from __future__ import annotations

from typing import Any

import operator

import numpy as np

from ..cotangents import Refused
from ..leaves import ArrayLeaf, as_array, computed_by_numpy  # np.asarray, but a dask array is left as it is
from ..registry import registry
from ..sparsity_specs import STRUCTURAL, Custom
from ._util import match_primal, may_carry, register_linear, unsupported, zeros

__all__ = ["is_basic_index", "getitem_cotangent", "setitem_adjoint", "last_write_mask"]


def is_basic_index(idx: Any) -> bool:
    """Whether idx selects each element at most once by numpy's basic indexing (no arrays/lists/bools)."""
    parts = idx if isinstance(idx, tuple) else (idx,)
    return all(p is None or p is Ellipsis or isinstance(p, slice)
               or (isinstance(p, (int, np.integer)) and not isinstance(p, (bool, np.bool_)))
               for p in parts)


def _is_mask(idx: Any) -> bool:
    """A single boolean mask: selects each element at most once."""
    return isinstance(idx, np.ndarray) and idx.dtype == bool


def getitem_cotangent(dy: Any, shape: tuple, dtype: Any, idx: Any) -> np.ndarray:
    """Zeros of `shape` with dy added at idx; repeated advanced indices accumulate."""
    if isinstance(idx, list):
        idx = _index_array(idx)
    elif type(idx) is tuple and any(isinstance(p, list) for p in idx):
        idx = tuple(_index_array(p) if isinstance(p, list) else p for p in idx)
    dx = zeros(shape, np.result_type(dtype, as_array(dy).dtype), dy)
    if is_basic_index(idx):
        dx[idx] = dy
    elif _is_mask(idx) and idx.shape == tuple(shape):
        dx.reshape(-1)[np.flatnonzero(idx)] = dy  # 4x faster than dx[mask] = dy
    elif _is_mask(idx):
        dx[idx] = dy
    else:
        np.add.at(dx, idx, dy)
    return dx


def _index_array(p: list):
    """A list index as the array numpy takes it for: an empty one selects nothing, by integers (`a[[]]`, made of
    `sorted_idx[:0]`: quantecon's state space; as floats, np.add.at refused it, IndexError)."""
    a = as_array(p)
    return a.astype(np.intp) if a.size == 0 else a


_FLOAT_COTANGENTS = (float, np.float64, np.float32)


def getitem_adjoint(dy, y, x, idx):
    """Cotangent of x[idx]: dy scattered back into zeros shaped like x. A `Refused` dy (no known derivative)
    is x's: it raises where used, and is dropped where x is not differentiated."""
    if type(dy) is Refused:
        return dy, None
    if (type(x) is np.ndarray and x.dtype.kind == "f" and (type(idx) is int or type(idx) is slice)
            and (type(dy) in _FLOAT_COTANGENTS or type(dy) is np.ndarray and dy.dtype.kind == "f")):
        dx = np.zeros(x.shape, x.dtype)  # the hot case: a real array read at an int or a slice
        dx[idx] = dy
        return dx, None
    x_ = as_array(x)
    if x_.dtype.names is not None:  # (a field read, `s["a"]`: taken for an integer array's, 0, silently)
        raise unsupported("x[idx]", "a structured array (a dtype with fields, records) of differentiated values",
                          "keep the fields as separate arrays (or a dict of arrays)")
    if x_.dtype.kind not in "fcO":  # integer and bool arrays carry no derivative; object arrays may
        return None, None
    if type(x) is np.matrix and isinstance(dy, (np.ndarray, np.generic)):
        # (a matrix's rows and columns keep two axes: the same entries as the plain view's, in its shape)
        dy = np.asarray(dy).reshape(np.shape(x_[idx]))
    if isinstance(x_, ArrayLeaf) or isinstance(dy, ArrayLeaf):
        if not (computed_by_numpy(x_) or computed_by_numpy(dy)):
            return match_primal(_leaf_getitem_cotangent(dy, x_, idx), x), None
        x_, dy = np.asarray(x_), np.asarray(dy)  # (a JAX array's: numpy's, every index; `in_kind` after)
    return match_primal(getitem_cotangent(dy, x_.shape, x_.dtype, idx), x), None


def _leaf_getitem_cotangent(dy, x, idx):
    """`getitem_cotangent` where x or dy is a dask array: zeros of x's type and shape (lazy) with dy
    written at a basic index (one that reads each element once, so writing is adding); an advanced index,
    which may read an element twice, is refused rather than computed."""
    if not is_basic_index(idx):
        raise unsupported("x[idx] on a dask array", "an advanced (integer array or mask) index",
                          "index with ints and slices, or compute the array first (`x.compute()`)")
    if type(idx) is not tuple:
        idx = (idx,)
    if any(i is None for i in idx):  # `x[:, None]`: dy without the new axes, written at the rest
        if any(i is Ellipsis for i in idx):
            raise unsupported("x[idx] on a dask array", "an index with both `None` and `...`",
                              "reshape instead (`x.reshape(...)`), or compute the array first")
        kept, axis = [], 0
        for i in idx:
            if i is None:
                pass
            elif isinstance(i, slice):
                kept.append(axis)
            axis += 0 if isinstance(i, (int, np.integer)) and not isinstance(i, bool) else 1
        dy = np.reshape(dy, tuple(np.shape(dy)[a] for a in kept) + tuple(np.shape(dy)[axis:]))
        idx = tuple(i for i in idx if i is not None)
    like = x if isinstance(x, ArrayLeaf) else dy
    dx = np.zeros_like(like, shape=x.shape, dtype=np.result_type(x.dtype, getattr(dy, "dtype", type(dy))))
    dx[idx] = dy
    return dx


def getitem_frule(tangents, x, idx):
    t = tangents[0] if tangents else None
    return x[idx], (None if t is None else as_array(t)[idx])


registry.adjoint((np.ndarray, "__getitem__"), kind="linear")(getitem_adjoint)
registry.frule((np.ndarray, "__getitem__"), kind="linear")(getitem_frule)


def setitem_adjoint(dx: np.ndarray, x_old_part: Any, idx: Any, v: Any, inplace: bool = False):
    """Reverse of the in-place assignment `x[idx] = v` on an array.

    Given `dx`, the cotangent of x *after* the assignment, returns `(dx_before, dv)`:
    `dx_before` is the cotangent of x before it (dx with zeros at idx: the old values there were
    overwritten and do not reach the output), `dv` the cotangent of v (dx[idx] summed down to v's shape
    and type: a Python float for a float v). With an advanced index that repeats an element the last
    write wins, so only the last occurrence passes dx to v. `x_old_part` (the overwritten values, which
    the engine restores) is not needed for the cotangents; it is accepted so the engine can pass what it
    recorded. `dx` is copied unless `inplace=True`.

    >>> import numpy as np
    >>> dx_before, dv = setitem_adjoint(np.array([1.0, 2.0, 3.0]), None, slice(0, 2), 5.0)
    >>> dx_before, dv
    (array([0., 0., 3.]), 3.0)
    """
    if dx is None:
        return None, None
    dx = as_array(dx)
    if isinstance(idx, list):
        idx = as_array(idx)
    part = dx[idx]
    if not (is_basic_index(idx) or _is_mask(idx)):
        part = part * last_write_mask(dx.shape, idx)
    elif inplace:
        part = part.copy()  # a view of dx, about to be zeroed
    dv = match_primal(part, v) if may_carry(v) else None
    dx_before = dx if inplace else dx.copy()
    dx_before[idx] = 0
    return dx_before, dv


def last_write_mask(shape, idx):
    """1 where an element of x[idx] is the last write to its position, 0 where a later one overwrites it."""
    ids = np.full(shape, -1, dtype=np.intp)
    target = ids[idx]
    order = np.arange(target.size, dtype=np.intp).reshape(target.shape)
    ids[idx] = order
    return (ids[idx] == order).astype(np.int8)




# -- take, take_along_axis, tril/triu ---------------------------------------------------------------

def take_transpose(dy, y, a, indices, *rest, **kwargs):
    """Cotangent of take(a, indices, axis): dy added at the taken positions."""
    axis = kwargs.get("axis", rest[0] if rest else None)
    mode = kwargs.get("mode", rest[2] if len(rest) > 2 else "raise")
    a_ = as_array(a)
    n = a_.size if axis is None else a_.shape[axis % a_.ndim]
    indices = as_array(indices)
    if indices.dtype == object:  # (objects numpy takes by their `__index__`: an object array of them failed in
        indices = np.array([operator.index(i) for i in indices.flat], dtype=np.intp).reshape(indices.shape)
        # the scatter, an IndexError, fuzz F's C1)
    if mode == "clip":  # (the positions numpy read: indices clipped, or wrapped, into range)
        indices = np.clip(indices, 0, n - 1)
    elif mode == "wrap":
        indices = indices % n
    if axis is None:
        return getitem_cotangent(dy, (a_.size,), a_.dtype, indices).reshape(a_.shape)
    axis %= a_.ndim
    index = (slice(None),) * axis + (indices,)
    return getitem_cotangent(dy, a_.shape, a_.dtype, index)


def take_along_axis_transpose(dy, y, arr, indices, *rest, **kwargs):
    """Cotangent of take_along_axis: dy accumulated back along the axis."""
    axis = kwargs.get("axis", rest[0] if rest else -1)
    arr_ = as_array(arr)
    if axis is None:
        return take_along_axis_transpose(dy, y, arr_.ravel(), indices, 0).reshape(arr_.shape)
    axis %= arr_.ndim
    full = np.broadcast_shapes(arr_.shape[:axis] + (1,) + arr_.shape[axis + 1:], np.shape(indices))
    index = tuple(as_array(indices) if i == axis else
                  np.arange(n).reshape((-1,) + (1,) * (len(full) - i - 1)) for i, n in enumerate(full))
    index = tuple(ix if i == axis or arr_.shape[i] != 1 else np.zeros_like(ix)
                  for i, ix in enumerate(index))
    return getitem_cotangent(dy, arr_.shape, arr_.dtype, index)


def tril_transpose(dy, y, m, *rest, **kwargs):
    return np.tril(dy, *rest, **kwargs)


def triu_transpose(dy, y, m, *rest, **kwargs):
    return np.triu(dy, *rest, **kwargs)


def _take_method(x, *args, **kwargs):
    """as_array(x).take(...), applied to tangents."""
    return as_array(x).take(*args, **kwargs)


def delete_transpose(dy, y, arr, obj, axis=None):
    """np.delete's adjoint: dy back at the positions kept (along axis; of the flat array for axis None)."""
    arr_ = as_array(arr)
    if axis is None:
        kept = np.delete(np.arange(arr_.size), obj)
        out = np.zeros(arr_.size, dtype=np.result_type(arr_.dtype, np.asarray(dy).dtype))
        out[kept] = np.ravel(dy)
        return out.reshape(arr_.shape)
    axis %= arr_.ndim
    kept = np.delete(np.arange(arr_.shape[axis]), obj)
    out = np.zeros(arr_.shape, dtype=np.result_type(arr_.dtype, np.asarray(dy).dtype))
    out[(slice(None),) * axis + (kept,)] = dy
    return out


# (numpy 2's np.delete fills an np.empty it makes in its own code: forward mode's duals could not pass)
register_linear([np.delete], np.delete, delete_transpose, "delete")
register_linear([np.take], np.take, take_transpose, "take")
register_linear([(np.ndarray, "take")], _take_method, take_transpose, "ndarray_take")
register_linear([np.take_along_axis], np.take_along_axis, take_along_axis_transpose, "take_along_axis")
register_linear([np.tril], np.tril, tril_transpose, "tril")
register_linear([np.triu], np.triu, triu_transpose, "triu")
registry.sparsity(Custom("rules.py: traced indices are conservative along axis"), np.take, np.take_along_axis)
registry.sparsity(STRUCTURAL, np.delete)
registry.sparsity(Custom("rules.py: the triangle kept, the rest no dependency"), np.tril, np.triu)


# -- np.nditer: iterating an array item by item ------------------------------------------------

def _draw_order(op: np.ndarray, rest: tuple, kwargs: dict) -> list:
    """The positions (flat, C order) of op's elements in each item np.nditer(op, *rest, **kwargs) draws:
    the same iteration over an array of positions laid out in memory as op is, strides and their signs
    alike (order='K' follows memory: over `a[::-1]` it draws a's first element first; `np.empty_like`'s
    positive strides drew them the other way, 85 for 198, gen13 W5)."""
    return [np.array(item, copy=True) for item in np.nditer(_laid_out_as(op), *rest, **kwargs)]


def _laid_out_as(op: np.ndarray) -> np.ndarray:
    """op's flat C-order positions in an array of op's shape whose strides are op's (in units of its items)."""
    size = op.dtype.itemsize
    if op.size == 0 or any(s % size for s in op.strides):  # (a field of a packed record: not whole items)
        raise unsupported("np.nditer", "an array whose strides are not whole elements (a record's field)",
                          "iterate a copy (`np.nditer(a.copy())`)")
    steps = [s // size for s in op.strides]
    low = sum((n - 1) * k for n, k in zip(op.shape, steps) if k < 0)
    high = sum((n - 1) * k for n, k in zip(op.shape, steps) if k > 0)
    buffer = np.zeros(high - low + 1, dtype=np.intp)
    positions = np.lib.stride_tricks.as_strided(buffer[-low:], op.shape, [k * buffer.itemsize for k in steps])
    positions[...] = np.arange(op.size).reshape(op.shape)
    return positions


# flags the stand-in follows: what it tracks (indices), and what changes nothing the items are (their copy
# through a buffer holds the same values; zero sizes and references are numpy's checks, made by numpy's own call)
_NDITER_FLAGS = frozenset({"multi_index", "c_index", "f_index", "buffered", "refs_ok", "zerosize_ok", "grow_inner",
                           "delay_bufalloc", "copy_if_overlap", "common_dtype"})
_NDITER_OP_FLAGS = frozenset({"readonly", "readwrite", "writeonly", "no_broadcast", "contig", "aligned", "nbo",
                              "copy", "updateifcopy", "overlap_assume_elementwise"})


class NdIter:
    """np.nditer of one array as the Python it amounts to (`Rule.stand_in`, both modes): its items are 0-d
    views of the operand's elements, drawn in numpy's order (`_draw_order`: order='K' follows memory), so a
    read is an element read and `item[...] = v` of a written operand is a store into the array, which the
    engines follow. numpy's C iterator was refused where drawn by `next(it)` or written (pyorb's
    `mean_to_eccentric`: `Ec = next(Eit); Ec[...] = E_calc`), and in forward mode at all.

    Several operands (broadcasting, an allocated output), `external_loop` (items are runs of elements) and
    casts to another type are numpy's own iterator, refused as before where a derivative reaches them."""

    def __init__(self, op, draws, flags, op_flags):
        self.operands = (op,)
        self._op = op
        self._draws = draws
        self._flags = flags
        self._op_flags = op_flags
        self._writes = any("write" in f for f in op_flags)
        self._f_positions = None
        self._k = 0
        self._started = False

    @property
    def itersize(self) -> int:
        return len(self._draws)

    @property
    def ndim(self) -> int:
        return self._op.ndim

    @property
    def shape(self) -> tuple:
        return self._op.shape

    @property
    def finished(self) -> bool:
        return self._k >= len(self._draws)

    @property
    def iterindex(self) -> int:
        return self._k

    @property
    def multi_index(self) -> tuple:
        if "multi_index" not in self._flags:
            raise ValueError("Iterator is not tracking a multi-index")
        return self._current()

    @property
    def index(self) -> int:
        if "c_index" in self._flags:
            return int(np.ravel_multi_index(self._current(), self._op.shape)) if self._op.ndim else 0
        if "f_index" in self._flags:
            return int(np.ravel_multi_index(self._current(), self._op.shape, order="F")) if self._op.ndim else 0
        raise ValueError("Iterator does not have an index")

    @property
    def value(self):
        return self._item(self._current())

    def __getitem__(self, i):
        if i not in (0, -1):
            raise IndexError("Iterator operand index out of bounds")
        return self.value

    def __len__(self) -> int:
        return len(self._draws)

    def _current(self) -> tuple:
        if self._k >= len(self._draws):
            raise ValueError("Iterator is past the end")
        return self._draws[self._k]

    def _item(self, where: tuple):
        item = self._op[(*where, Ellipsis)]  # (a new 0-d view: `item[...] = v` stores into the operand)
        if not self._writes:  # (numpy's read-only item; a dual's flags are its value's: its store then refused
            item.flags.writeable = False  # too, where it wrote into the operand)
        return item

    def __iter__(self):
        return self

    def __next__(self):
        if self._started:
            self._k += 1
        self._started = True
        if self._k >= len(self._draws):
            raise StopIteration
        return self._item(self._draws[self._k])

    def iternext(self) -> bool:
        self._k += 1
        self._started = True
        return self._k < len(self._draws)

    def reset(self) -> None:
        self._k = 0
        self._started = False

    def copy(self):
        other = NdIter(self._op, self._draws, self._flags, self._op_flags)
        other._k, other._started = self._k, self._started
        return other

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None

    def close(self) -> None:
        return None


def nditer(op, flags=None, op_flags=None, op_dtypes=None, order="K", casting="safe", op_axes=None, itershape=None,
           buffersize=0):
    """`np.nditer(...)`: `NdIter` for one array, its values' own type and axes; numpy's iterator (checked by
    `numpy_nditer`) otherwise."""
    single = op if isinstance(op, np.ndarray) else op[0] if isinstance(op, (list, tuple)) and len(op) == 1 \
        and isinstance(op[0], np.ndarray) else None
    lone = lambda v: v[0] if isinstance(v, (list, tuple)) and len(v) == 1 and isinstance(v[0], (list, tuple)) else v
    own_flags = tuple(flags or ())
    own_op_flags = tuple(lone(op_flags) or ("readonly",))
    dtypes = lone(op_dtypes) if isinstance(op_dtypes, (list, tuple)) else op_dtypes
    if (single is not None and single.dtype.kind in "fc" and set(own_flags) <= _NDITER_FLAGS
            and all(isinstance(f, str) for f in own_op_flags) and set(own_op_flags) <= _NDITER_OP_FLAGS
            and (dtypes is None or np.dtype(dtypes) == single.dtype) and op_axes is None and itershape is None
            and order in ("K", "C", "F", "A")):
        draws = nditer_plan(single, flags, op_flags, op_dtypes, order, casting, buffersize)
        return NdIter(single, draws, own_flags, own_op_flags)
    return numpy_nditer(op, flags, op_flags, op_dtypes, order, casting, op_axes, itershape, buffersize)


def nditer_plan(op, flags, op_flags, op_dtypes, order, casting, buffersize) -> list:
    """The index of op's element in each item np.nditer(op, ...) draws, and numpy's errors for the arguments
    (a read-only array written, an unknown flag): numpy's own iterator over an array of op's positions laid
    out as op is (a primitive without derivative, `registry.nondifferentiable` below: given plain arrays only,
    it never meets the stand-in)."""
    while type(op).__name__ == "Dual":  # (reverse mode's rule under an outer forward pass: its values)
        op = op.primal
    positions = _laid_out_as(op)
    if not op.flags.writeable:
        positions.flags.writeable = False
    np.nditer(positions, flags, op_flags, None, order, "unsafe", None, None, buffersize)
    np.nditer(np.empty(0, op.dtype), ["zerosize_ok"], None, op_dtypes, "K", casting)  # (the cast asked for)
    return [tuple(int(i) for i in np.unravel_index(int(p), op.shape)) for p in np.nditer(positions, order=order)]


registry.nondifferentiable(nditer_plan)

_INDEX_FLAGS = ("multi_index", "c_index", "f_index")


def numpy_nditer(*args, **kwargs):
    """numpy's own iterator where the stand-in does not apply (several operands, `external_loop`): a primitive
    of reverse mode (`nditer_adjoint`; forward mode has no rule for it, and refuses). Its iterator is drawn whole
    at the loop, so an index it tracks (`it.multi_index` read in the loop) would be read past the end: refused
    here."""
    flags = kwargs.get("flags", args[1] if len(args) > 1 else None) or ()
    if any(f in _INDEX_FLAGS for f in flags):
        raise unsupported("np.nditer", "an iterator tracking an index (flags multi_index, c_index, f_index)",
                          "loop over np.ndindex(a.shape) and read a[idx]")
    return np.nditer(*args, **kwargs)


def nditer_adjoint(dy, y, op, *rest, **kwargs):
    """np.nditer(op): the cotangent of each item drawn (the iterator's cotangent holds them by draw) added
    at the elements it was read from. One float or complex array read; several operands, written operands
    and object arrays (the items are references) are refused when a cotangent reaches them."""
    nothing = (None,) * (1 + len(rest))
    if dy is None or all(g is None for g in dy):
        return nothing
    op_flags = kwargs.get("op_flags", rest[1] if len(rest) > 1 else None)
    writes = "write" in repr(op_flags)
    if not isinstance(op, np.ndarray) or op.dtype.kind not in "fc" or writes:
        raise unsupported("np.nditer", "several operands, a written operand or an array of objects",
                          "iterate a float array itself (`for v in x.flat`, `for v in x.ravel()`)")
    flat = np.zeros(op.size, dtype=np.result_type(op.dtype, float))
    for positions, g in zip(_draw_order(op, rest, kwargs), dy):
        if g is not None:
            np.add.at(flat, positions, g)
    return (match_primal(flat.reshape(op.shape), op), *(None,) * len(rest))


def nditer_frule(tangents, *args, **kwargs):
    """Forward mode: numpy's iterator (several operands, `external_loop`) given duals would hold their values
    only; refused."""
    raise unsupported("np.nditer", "several operands, `external_loop` or a cast, in forward mode",
                      "iterate each array by itself (`for a, b in zip(x.flat, y.flat)`)")


registry.adjoint(numpy_nditer)(nditer_adjoint)
registry.frule(numpy_nditer)(nditer_frule)
registry.set(np.nditer, stand_in=nditer)


# np.apply_along_axis: Python code in numpy (differentiated through it in the AD modes); on tracers its C
# result converter fails, so the sparsity package applies the function per slice itself
registry.sparsity(Custom("rules.py: the function applied to each 1-d slice in Python"), np.apply_along_axis)
