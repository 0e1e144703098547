"""Counting and set functions whose results hold differentiable values: `np.bincount` with `weights=` (the
weights' sums per bin), `np.unique` (its values are elements of the input). Declared constants before,
with the counts and indices they also give: `np.histogram(x, weights=w)` (which sums its weights by
bincount) and `np.unique(x)` came out 0, silently. The integer results (counts, indices) stay constants.
"""

import numpy as np

from ..leaves import as_array
from ..registry import registry
from ..sparsity_specs import DENSE
from ..ties import TieError, TiedApart, _differ, note_tie, plain
from ._util import unsupported, zeros


def _bincount_args(rest, kw):
    names = ("weights", "minlength")
    given = dict(zip(names, rest), **kw)
    return given.get("weights"), given.get("minlength", 0)


@registry.adjoint(np.bincount, kind="linear")
def bincount_adjoint(dy, y, x, *rest, **kw):
    """y[k] = sum of weights[i] with x[i] == k: each weight's cotangent is its bin's, dy[x]."""
    weights, _ = _bincount_args(rest, kw)
    dw = None
    if weights is not None and dy is not None:
        dw = as_array(dy)[as_array(x)]
        dw = dw.reshape(np.shape(weights)) if isinstance(weights, np.ndarray) else list(dw)
    pos = {0: dw} if rest else {}
    out = (None, *(pos.get(i) for i in range(len(rest))))
    return out + ({k: (dw if k == "weights" else None) for k in kw},) if kw else out


@registry.frule(np.bincount, kind="linear")
def bincount_frule(tangents, x, weights=None, minlength=0):
    y = np.bincount(x, weights=weights, minlength=minlength)
    tw = tangents[1] if len(tangents) > 1 else None
    if weights is None or tw is None:
        return y, None
    return y, np.bincount(x, weights=as_array(tw), minlength=len(y))


def _unique_options(rest, kw):
    names = ("return_index", "return_inverse", "return_counts", "axis")
    given = dict(zip(names, rest), **kw)
    return given


def _first_indices(ar, axis=None):
    """Each unique value's first position in the flattened array (what return_index gives); along an axis,
    each unique slice's (unique rows: `np.unique(points, axis=0)`)."""
    return np.unique(ar, return_index=True, axis=axis)[1]


def _along(axis, ndim: int, idx) -> tuple:
    """The index taking positions idx along axis."""
    at = [slice(None)] * ndim
    at[axis] = idx
    return tuple(at)


def _copies(a, axis=None):
    """(first, inverse) of np.unique(a, axis=axis) when a holds copies of a value (a slice along the axis),
    else None."""
    _, first, inverse = np.unique(a, return_index=True, return_inverse=True, axis=axis)
    return None if len(first) == (a.size if axis is None else a.shape[axis]) else (first, np.ravel(inverse))


def _copies_part(a, t, axis=None) -> bool:
    """Whether copies of a unique value (slice) have tangents that differ: they part, and the number of
    unique values jumps there (no derivative)."""
    found = _copies(a, axis)
    if found is None:
        return False
    first, inverse = found
    tt = as_array(plain(t))
    lead = tt.ndim - a.ndim  # (a chunk of directions first)
    if axis is None:
        flat = tt.reshape(tt.shape[:lead] + (-1,))
        return bool(np.any(_differ(flat, flat[..., first[inverse]])))
    return bool(np.any(_differ(tt, np.take(tt, first[inverse], axis=int(axis) % a.ndim + lead))))


def _unique_tie(where: TiedApart) -> TieError:
    return TieError(
        "np.unique at a tie: copies of one value that part (their derivatives differ) would add a unique value "
        "on any step, so its result jumps there and has no derivative", where=where.where,
        fix="evaluate at a point without equal entries, or, if the copies are one quantity, keep one copy of it")


def _checked(given):
    """The options the rules cover where a derivative flows."""
    if given.get("equal_nan") is False:
        raise unsupported("np.unique", "equal_nan=False", "leave equal_nan at its default")


@registry.adjoint(np.unique)
def unique_adjoint(dy, y, ar, *rest, **kw):
    """The unique values are the input's elements at their first positions: the cotangent of each goes
    there (the other copies of a repeated value are held still, as a sort's ties are); the indices and
    counts it may also return are constants."""
    given = _unique_options(rest, kw)
    g = dy[0] if isinstance(y, tuple) else dy
    da = None
    if g is not None:
        _checked(given)
        a, axis = as_array(ar), given.get("axis")
        if _copies(plain(a), axis) is not None and not note_tie("np.unique", None):
            raise _unique_tie(TiedApart("np.unique"))  # (forward mode tells whether the copies part)
        if axis is None:
            flat = zeros(a.size, np.result_type(a, float), g)
            flat[_first_indices(a)] = as_array(g)
            full = flat.reshape(a.shape)
        else:  # (each unique slice's cotangent to its first slice along the axis)
            axis = int(axis) % a.ndim
            full = zeros(a.shape, np.result_type(a, float), g)
            full[_along(axis, a.ndim, _first_indices(a, axis))] = as_array(g)
        da = full if isinstance(ar, np.ndarray) else list(full)
    out = (da, *(None,) * len(rest))
    return out + ({k: None for k in kw},) if kw else out


@registry.frule(np.unique)
def unique_frule(tangents, ar, *rest, **kw):
    given = _unique_options(rest, kw)
    y = np.unique(ar, *rest, **kw)
    t = tangents[0] if tangents else None
    if t is None:
        return y, None
    _checked(given)
    axis = given.get("axis")
    if _copies_part(as_array(ar), t, axis):
        raise _unique_tie(TiedApart("np.unique"))
    if axis is None:
        dvalues = as_array(t).ravel()[_first_indices(as_array(ar))]
    else:
        a = as_array(ar)
        dvalues = as_array(t)[_along(int(axis) % a.ndim, a.ndim, _first_indices(a, axis))]
    if isinstance(y, tuple):
        return y, (dvalues, *(None,) * (len(y) - 1))
    return y, dvalues


# (forward mode: `np.bincount(x, weights=w)` with a dual `w` moves it to its position for the frule)
registry.set(np.bincount, positional=("x", "weights"))
registry.sparsity(DENSE, np.bincount, np.unique)  # conservative: which bin or position is not worked out
