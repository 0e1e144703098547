"""numpy primitives that overwrite an array argument: `copyto`, `place`, `putmask`, `ndarray.put` (so
`np.put`), `ndarray.fill`, `ndarray.sort`, `ndarray.partition`.

Their rules use the registry's `inplace` form: the forward keeps the values it overwrites, and the reverse
pass (reading the cotangent the caller holds for the array with `S.held(i)`) gives the overwriting values
their cotangent, zeroes the array's where it was overwritten (as a delta to add), and restores the old
values for earlier adjoints (the redo puts the new ones back after the pass).
"""

import operator

import numpy as np

from ..leaves import as_array  # np.asarray, but a dask array is left as it is
from ..generic import unbroadcast
from ..cotangents import Overwritten, Refused
from ..registry import registry
from ..ties import TiedApart, even_ends, note_tie, parting, plain
from overdub.errors import OverdubError
from ._util import is_dual, unsupported, zeros


class ReadOnlyTarget(OverdubError, ValueError):
    """`np.add.at` into an array numpy made read-only (`a.diagonal()`): numpy's `ufunc.at` writes into it
    regardless, through to the array it views, where the engines' views of it (a dual's, a tracer's, a
    recorded copy) do not follow."""


def refuse_read_only_at(ufunc, target) -> None:
    """Refuse `ufunc.at(target, ...)` when target (an array, a dual's value, a tracer) is read-only."""
    flags = getattr(target, "flags", None)
    if getattr(flags, "writeable", True) is False or getattr(target, "_readonly", False) is True:
        raise ReadOnlyTarget(f"np.{ufunc.__name__}.at into a read-only array (numpy writes into a read-only "
                             "view such as `a.diagonal()` regardless, and through it into its base)",
                             fix="update the base array at the positions: `np.add.at(A, np.diag_indices(n), v)`, "
                                 "or make the view writable (`np.einsum('ii->i', A)`)")


class OverlappingWrite(OverdubError, ValueError):
    """A numpy function writing into an array it reads as it goes (np.place's values, np.concatenate's
    `out=` overlapping a piece): numpy's result depends on the order of its writes, which the engines'
    copies of the inputs do not reproduce."""


# numpy functions copying their inputs into `out=` piece by piece, unbuffered: an `out` overlapping an input
# reads what was already written (`np.concatenate((a[1:], a[:1]), out=a)`: [x1, x2, x3, x1], gen19 W10)
_UNBUFFERED_OUT = frozenset({np.concatenate, np.stack})


def _value(v):
    while is_dual(v):
        v = v.primal
    return v


def refuse_overlapping_out(fn, args, kwargs) -> None:
    """Refuse np.concatenate/np.stack writing into an `out=` that shares memory with one of its pieces."""
    if fn not in _UNBUFFERED_OUT or kwargs.get("out") is None or not args:
        return
    out = _value(kwargs["out"])
    pieces = args[0] if isinstance(args[0], (list, tuple)) else (args[0],)
    for p in pieces:
        p = _value(p)
        if isinstance(out, np.ndarray) and isinstance(p, np.ndarray) and np.may_share_memory(out, p):
            raise OverlappingWrite(f"np.{fn.__name__} into an out= array that overlaps one of its inputs (numpy "
                                   "copies the pieces one after another, reading what it wrote)",
                                   fix="concatenate into a new array, or copy the overlapping piece first")


def refuse_overlapping_place(arr, vals) -> None:
    """Refuse `np.place(arr, mask, vals)` where vals shares memory with arr: numpy reads vals as it writes
    (`np.place(a, m, a)` repeats a's first values), which the engines' copies of vals do not (gen19 W1: the
    derivative and, in forward mode, the value changed)."""
    arr, vals = _value(arr), _value(vals)
    if isinstance(arr, np.ndarray) and isinstance(vals, np.ndarray) and np.may_share_memory(arr, vals):
        raise OverlappingWrite("np.place with values that share memory with the array it writes (numpy reads "
                             "them as it writes, one after another)", fix="pass a copy: `np.place(a, m, v.copy())`")


def at_rounds(shape: tuple, idx, v=None):
    """`ufunc.at(x, idx, v)` on an x of `shape` as numpy runs it, one element after another: (the flat
    positions written, in order; v's value for each, broadcast, or None; the rounds: position numbers k
    split so that within a round no position repeats and every earlier write to a position is in an earlier
    round). A round's updates can then be computed at once, the rounds in order as numpy's."""
    where = np.arange(int(np.prod(shape)), dtype=np.intp).reshape(shape)[np.asarray(idx) if type(idx) is list
                                                                        else idx]
    positions = np.ravel(where)
    values = None if v is None else np.ravel(np.broadcast_to(v, np.shape(where)))
    order = np.argsort(positions, kind="stable")
    ranked = positions[order]
    starts = np.r_[0, np.flatnonzero(ranked[1:] != ranked[:-1]) + 1] if ranked.size else np.zeros(0, np.intp)
    occurrence = np.empty(positions.size, dtype=np.intp)
    occurrence[order] = np.arange(positions.size) - np.repeat(starts, np.diff(np.r_[starts, positions.size]))
    rounds = [np.flatnonzero(occurrence == r) for r in range(int(occurrence.max()) + 1 if occurrence.size else 0)]
    return positions, values, rounds


def _inplace(*fns):
    def register(impl):
        for fn in fns:
            registry.set(fn, inplace=impl)
        return impl
    return register


def _restore(S, arr, old):
    new = arr.copy()
    write_into(arr, Ellipsis, old)
    S.redo(write_into, arr, Ellipsis, new)


def write_into(arr, idx, value) -> None:
    """`arr[idx] = value`, undoing (or redoing) a store in reverse mode's pass: into an array made read-only after
    the store (`a.setflags(write=False)`: PyTCI's curves, cached by lru_cache) with its flag set for the write and
    back after (the undo crashed: "assignment destination is read-only"). One whose flag cannot be set (a view
    of a read-only base) is refused."""
    if not isinstance(arr, np.ndarray) or arr.flags.writeable:  # (a dask array, a dual: no flags)
        arr[idx] = value
        return
    try:
        arr.setflags(write=True)
    except ValueError:
        raise unsupported("a store into an array", "one made read-only after the store, as a view of a read-only "
                          "array (its flag cannot be set back for the reverse pass)",
                          "make the array read-only after it is differentiated, or copy it first") from None
    try:
        arr[idx] = value
    finally:
        arr.setflags(write=False)


def _arr(d):
    """as_array(d); a dual d as it is (forward over reverse runs these rules on duals)."""
    return d if is_dual(d) else as_array(d)


def _cycled_cotangent(picked, positions, values):
    """The cotangent of `values` when position k of the written array received values[k % len(values)]."""
    size, shape = np.size(values), np.shape(values)
    dv = zeros((size,), np.result_type(picked, float), picked)
    if size:
        np.add.at(dv, positions % size, picked)
    if isinstance(values, np.ndarray) or is_dual(values):
        return dv.reshape(shape)
    return dv.item() if len(shape) == 0 else list(dv)


@_inplace(np.copyto)
def copyto_inplace(dst, src, *rest, **kwargs):
    casting = kwargs.get("casting", rest[0] if rest else "same_kind")
    where = kwargs.get("where", rest[1] if len(rest) > 1 else True)
    nones = (None,) * len(rest)  # (casting and where given by position: no cotangent; gen19 C1: IndexError)
    old = dst.copy()
    np.copyto(dst, src, casting=casting, where=where)

    def copyto_back(S, dy, dself):
        _restore(S, dst, old)
        d = S.held(0)
        if d is None:
            return dself, (None, None) + nones
        written = np.broadcast_to(as_array(where, dtype=bool), dst.shape)
        dsrc = np.where(written, d, 0.0)
        array = isinstance(src, np.ndarray) or np.ndim(src) and type(src).__name__ == "Dual"  # (forward over reverse)
        if array:
            dsrc = unbroadcast(dsrc, src)
        elif np.ndim(src):  # (a list of values: one cotangent each, as a list; gen18 C3: TypeError)
            dsrc = unbroadcast(dsrc, np.zeros(np.shape(src)))
            dsrc = dsrc.tolist() if type(dsrc) is np.ndarray else list(dsrc)
        else:
            dsrc = np.sum(dsrc)  # (not `.sum()`: a refused cotangent stays one, gen24 C3: AttributeError)
        return dself, (Overwritten(written), dsrc) + nones
    return None, copyto_back


@_inplace(np.place)
def place_inplace(arr, mask, vals):
    refuse_overlapping_place(arr, vals)
    old = arr.copy()
    np.place(arr, mask, vals)

    def place_back(S, dy, dself):
        _restore(S, arr, old)
        d = S.held(0)
        if d is None:
            return dself, (None, None, None)
        m = as_array(mask, dtype=bool)
        picked = _arr(d)[m]
        return dself, (Overwritten(m), None, _cycled_cotangent(picked, np.arange(picked.size), vals))
    return None, place_back


@_inplace(np.putmask)
def putmask_inplace(a, mask, values):
    old = a.copy()
    np.putmask(a, mask, values)

    def putmask_back(S, dy, dself):
        _restore(S, a, old)
        d = S.held(0)
        if d is None:
            return dself, (None, None, None)
        m = np.broadcast_to(as_array(mask, dtype=bool), a.shape)
        flat = np.flatnonzero(m)
        return dself, (Overwritten(m), None, _cycled_cotangent(_arr(d).reshape(-1)[flat], flat, values))
    return None, putmask_back


def _put_positions(n: int, ind, mode: str) -> np.ndarray:
    """The flat positions put writes in an array of n elements: indices wrapped, clipped or made
    non-negative as `mode` says."""
    idx = as_array(ind).reshape(-1)
    if mode == "wrap":
        return idx % n
    if mode == "clip":
        return np.clip(idx, 0, n - 1)
    return np.where(idx < 0, idx + n, idx)


def _put_split(a, ind, v, mode, d):
    """For `a.put(ind, v, mode)` and a cotangent d of a after it: (d with the written positions zeroed,
    v's cotangent). Flat positions are wrapped or clipped by mode, v repeats as needed, and where a position
    is written twice the last write wins."""
    pos = _put_positions(a.size, ind, mode)
    last = np.zeros(pos.size, dtype=bool)
    _, first_from_end = np.unique(pos[::-1], return_index=True)
    last[pos.size - 1 - first_from_end] = True
    d = d.copy() if is_dual(d) else np.array(d, dtype=np.result_type(d, float), copy=True, order="C")  # (C:
    # the flat writes below go through reshape(-1), a copy of an F-ordered cotangent, where they were lost)
    picked = np.where(last, d.reshape(-1)[pos], 0.0)
    d.reshape(-1)[pos] = 0.0
    return d, _cycled_cotangent(picked, np.arange(pos.size), v)


@_inplace((np.ndarray, "put"))
def put_method_inplace(self, ind, v, *rest, **kw):
    """`a.put(ind, v, mode)`: the object's cotangent comes and goes as dself."""
    old = self.copy()
    self.put(ind, v, *rest, **kw)

    def put_back(S, dy, dself):
        _restore(S, self, old)
        if dself is None:
            return None, (None, None) + (None,) * len(rest)
        d, dv = _put_split(self, ind, v, rest[0] if rest else kw.get("mode", "raise"), dself)
        return d, (None, dv) + (None,) * len(rest)
    return None, put_back


@_inplace(np.put)
def put_inplace(a, ind, v, mode="raise"):
    """`np.put(a, ind, v, mode)`: a rule of its own, as numpy's put calls the method through a variable."""
    old = a.copy()
    np.put(a, ind, v, mode=mode)

    def put_back(S, dy, dself):
        _restore(S, a, old)
        d = S.held(0)
        if d is None:
            return dself, (None, None, None)
        written = np.zeros(a.size, dtype=bool)
        written[_put_positions(a.size, ind, mode)] = True
        _, dv = _put_split(a, ind, v, mode, d)
        return dself, (Overwritten(written.reshape(a.shape)), None, dv)
    return None, put_back


@_inplace((np.ndarray, "fill"))
def fill_inplace(self, value):
    old = self.copy()
    self.fill(value)

    def fill_back(S, dy, dself):
        _restore(S, self, old)
        if dself is None:
            return None, (None,)
        total = np.sum(dself)
        return np.zeros_like(dself), (total.item() if isinstance(value, float) else total,)
    return None, fill_back


@_inplace((np.ndarray, "sort"))
def sort_inplace(self, axis=-1, kind=None, order=None):
    """`a.sort()`: each element's cotangent follows it to its sorted position (ties keep a stable order,
    one subgradient among equals)."""
    if order is not None:
        self.sort(axis=axis, kind=kind, order=order)  # structured arrays carry no derivative
        return None, lambda S, dy, dself: (dself, ())
    old = self.copy()
    perm = np.argsort(self, axis=axis, kind="stable")
    self.sort(axis=axis, kind=kind)

    def sort_back(S, dy, dself):
        _restore(S, self, old)
        if dself is None:
            return None, ()
        if type(dself) is not Refused and parting(np.take_along_axis(plain(old), perm, axis=axis), plain(dself),
                                                  axis) and not note_tie("ndarray.sort", None):
            return Refused(TiedApart("ndarray.sort")), ()  # tied entries read with different weights (`ties`)
        if type(dself).__name__ == "Dual":  # forward over reverse: gathered by the inverse permutation
            return np.take_along_axis(np.broadcast_to(dself, self.shape), np.argsort(perm, axis=axis),
                                      axis=axis), ()
        if type(dself) is Refused:  # no known derivative downstream: passed on (gen24 C1)
            return dself, ()
        d = np.broadcast_to(as_array(dself), self.shape)
        before = np.empty(self.shape, dtype=d.dtype)
        np.put_along_axis(before, perm, d, axis=axis)
        return before, ()
    return None, sort_back


@_inplace((np.ndarray, "partition"))
def partition_inplace(self, kth, axis=-1, kind="introselect", order=None):
    """`a.partition(kth)` (np.partition, np.median, np.percentile): each element's cotangent follows it to
    where the partition put it. The permutation is read off numpy's own result (its sorted order matched
    with the input's, so equal values pair up in a stable order: one subgradient among equals)."""
    if order is not None:
        self.partition(kth, axis=axis, kind=kind, order=order)  # structured arrays carry no derivative
        return None, lambda S, dy, dself: (dself, (None,))
    old = self.copy()
    self.partition(kth, axis=axis, kind=kind)
    source = np.empty(self.shape, dtype=np.intp)  # source[..., p, ...]: where the value now at p was
    np.put_along_axis(source, np.argsort(self, axis=axis, kind="stable"),
                      np.argsort(old, axis=axis, kind="stable"), axis=axis)

    def partition_back(S, dy, dself):
        _restore(S, self, old)
        if dself is None:
            return None, (None,)
        if type(dself) is not Refused and type(dself).__name__ != "Dual":
            # tied entries read with different weights (`ties`); a tie at an end asked for split as np.max's
            new = np.take_along_axis(plain(old), source, axis=axis)
            dself, inner = even_ends(new, np.broadcast_to(as_array(dself), self.shape), axis, kth)
            order = np.argsort(new, axis=axis, kind="stable")
            if parting(np.take_along_axis(new, order, axis=axis), np.take_along_axis(dself, order, axis=axis), axis,
                       inner) and not note_tie("ndarray.partition", None):
                return Refused(TiedApart("ndarray.partition")), (None,)
        if type(dself).__name__ == "Dual":  # forward over reverse: gathered by the inverse permutation
            return np.take_along_axis(np.broadcast_to(dself, self.shape), np.argsort(source, axis=axis),
                                      axis=axis), (None,)
        if type(dself) is Refused:  # no known derivative downstream: passed on (np.result_type cannot read it,
            return dself, (None,)   # gen24 C1)
        before = np.empty(self.shape, dtype=np.result_type(dself, self))
        np.put_along_axis(before, source, np.broadcast_to(as_array(dself), self.shape), axis=axis)
        return before, (None,)
    return None, partition_back


@_inplace(np.fill_diagonal)
def fill_diagonal_inplace(a, val, wrap=False):
    """np.fill_diagonal(a, val): the diagonal's old values get no cotangent; `val` (cycled along the
    diagonal, as numpy does) gets the diagonal's."""
    old = a.copy()
    written = np.zeros(a.shape, dtype=bool)
    np.fill_diagonal(written, True, wrap=wrap)
    np.fill_diagonal(a, val, wrap=wrap)

    def fill_diagonal_back(S, dy, dself):
        _restore(S, a, old)
        d = S.held(0)
        if d is None:
            return dself, (None, None)
        d = np.broadcast_to(_arr(d), a.shape)
        picked = d.reshape(-1)[np.flatnonzero(written)]  # in the order numpy writes them
        return dself, (Overwritten(written), _cycled_cotangent(picked, np.arange(picked.size), val))
    return None, fill_diagonal_back


# -- the same primitives as one store `target[index] = values`, for engines whose values are their own
#    array types (forward mode's duals, sparsity tracers): each engine then does the store itself

def _cycled(values, count: int):
    """values (an array-like of any engine's type) flattened and repeated to count items, as numpy's
    put/place/fill_diagonal repeat a short `values`."""
    return _cycled_at(values, np.arange(count))


def _flat_positions(shape, positions):
    return np.unravel_index(as_array(positions, dtype=np.int64), shape)


def as_store(fn, args: tuple, kwargs: dict):
    """(target, index, values) such that `target[index] = values` does what fn(*args, **kwargs) does, for
    np.copyto, np.place, np.putmask, np.put and np.fill_diagonal; None for anything else."""
    def bind(names, defaults):
        got = dict(zip(names, args), **kwargs)
        return [got.get(n, defaults.get(n)) for n in names]
    if fn is np.copyto:
        dst, src, _, where = bind(("dst", "src", "casting", "where"), {"where": True})
        if where is True:
            return dst, Ellipsis, src
        return dst, Ellipsis, np.where(where, src, dst)
    if fn is np.place:
        arr, mask, vals = bind(("arr", "mask", "vals"), {})
        refuse_overlapping_place(arr, vals)
        m = as_array(mask, dtype=bool)
        return arr, m, _cycled(vals, int(m.sum()))
    if fn is np.putmask:
        a, mask, values = bind(("a", "mask", "values"), {})
        m = np.broadcast_to(as_array(mask, dtype=bool), a.shape)
        flat = np.flatnonzero(m)
        return a, m, _cycled_at(values, flat)
    if fn is np.put:
        a, ind, v, mode = bind(("a", "ind", "v", "mode"), {"mode": "raise"})
        pos = _put_positions(int(np.prod(a.shape)), ind, mode)
        return a, _flat_positions(a.shape, pos), _cycled(v, pos.size)
    if fn is np.fill_diagonal:
        a, val, wrap = bind(("a", "val", "wrap"), {"wrap": False})
        marks = np.zeros(a.shape, dtype=bool)
        np.fill_diagonal(marks, True, wrap=wrap)
        pos = np.flatnonzero(marks)
        return a, _flat_positions(a.shape, pos), _cycled(val, pos.size)
    return None


def _cycled_at(values, flat_positions):
    """values repeated by flat position (putmask: position p of the array takes values[p % len(values)])."""
    if isinstance(values, (list, tuple)) and any(type(v) is not np.ndarray and not isinstance(v, np.generic)
                                                 and hasattr(v, "__array_function__") for v in values):
        values = np.stack(values)  # (a list holding an engine's values, `a.put(i, [d, 3.0])`: stacked by its type)
    n = max(1, int(np.prod(values.shape if hasattr(values, "shape") else np.shape(values))))
    flat = values.reshape(-1) if hasattr(values, "reshape") else as_array(values).reshape(-1)
    return flat[as_array(flat_positions) % n]
