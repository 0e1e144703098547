"""numpy functions written as the numpy code they compute (`Rule.stand_in`), for every engine: C functions
without rules of their own (`np.vdot`), and Python functions whose code ends in a C method without one
(`np.compress` calls `ndarray.compress`, `np.diagflat` writes through `.flat`). Each is checked against
numpy's own result and against finite differences in tests/contexts/test_sweep_32_cases.py."""

from __future__ import annotations

import numpy as np

from ..registry import registry

__all__ = ["vdot", "compress", "compress_method", "diagflat", "store_part", "vectorized", "vectorize_plan", "vander"]


def vdot(a, b, /):
    """np.vdot: the dot product of the arrays flattened, the first conjugated."""
    return np.dot(np.ravel(np.conj(a)), np.ravel(b))


def compress(condition, a, axis=None, out=None):
    """np.compress: the slices of a along axis where condition is true (condition carries no derivative)."""
    if out is not None:  # (written into `out` as a store is, which the engines follow or refuse; numpy's own
        out[...] = compress(condition, a, axis)  # call here was this stand-in again: a RecursionError, gen19 C2)
        return out
    chosen = np.nonzero(np.asarray(condition, dtype=bool))[0]
    if axis is None:
        a, axis = np.ravel(a), 0
    if chosen.size and chosen[-1] >= np.shape(a)[axis]:
        return np.compress(condition, a, axis)  # (numpy's error for a condition longer than the axis)
    return np.take(a, chosen, axis=axis)


def compress_method(a, condition, axis=None, out=None):
    """`a.compress(condition, axis)`: np.compress's."""
    return compress(condition, a, axis, out)


def store_part(z, part, v):
    """`z.real = v`, `z.imag = v` of an array: the store of the whole array it is (the engines follow a
    store; numpy writes the part in C: matpopmod's `vals.real = np.where(...)`)."""
    if np.iscomplexobj(z):
        z[...] = _with_part(z, part, v)  # (the parts read apart: a view of z held here would see the store)
    elif part == "real":
        z[...] = np.real(v)
    else:
        raise TypeError("array does not have imaginary part to set")


def _with_part(z, part, v):
    """The complex array z with its real or imaginary part replaced by v's real values (a new array)."""
    return np.real(v) + 1j * z.imag if part == "real" else z.real + 1j * np.real(v)


def diagflat(v, k=0):
    """np.diagflat: a 2-D array with v flattened on its k-th diagonal."""
    return np.diag(np.ravel(v), k)


# -- np.vectorize(f)(...): numpy calls f from C (through `np.frompyfunc`), where no engine follows it ----------
# Its call written as the Python loop it is, for every engine: f called on each element (each core sub-array,
# given a signature) of the vectorized arguments, the `excluded` ones and those given by keyword (vectorized
# too, unless excluded) passed as numpy passes them, the results stacked with numpy's dtype.

def vectorize_plan(vec, args, kwargs):
    """How `vec(*args, **kwargs)` calls its function, from the arguments' shapes alone: (positions,
    names, loop shape, core shapes of the vectorized arguments, output core dimensions or None). The
    vectorized arguments are `args[i]` for i in positions, then `kwargs[n]` for n in names."""
    excluded = vec.excluded
    positions = tuple(i for i in range(len(args)) if i not in excluded)
    names = tuple(n for n in kwargs if n not in excluded)
    shapes = [np.shape(args[i]) for i in positions] + [np.shape(kwargs[n]) for n in names]
    if vec.signature is None:
        return positions, names, np.broadcast_shapes(*shapes), [()] * len(shapes), None
    core_in, core_out = vec._in_and_out_core_dims
    if len(shapes) != len(core_in):
        raise TypeError(f"wrong number of positional arguments: expected {len(core_in)!r}, got {len(shapes)!r}")
    sizes, loops, cores = {}, [], []
    for shape, dims in zip(shapes, core_in):
        if len(shape) < len(dims):
            raise ValueError(f"input with shape {shape!r} does not have enough dimensions for all core "
                             f"dimensions {dims!r} of signature {vec.signature!r}")
        split = len(shape) - len(dims)
        for dim, size in zip(dims, shape[split:]):
            if sizes.setdefault(dim, size) != size:
                raise ValueError(f"inconsistent size for core dimension {dim!r}: {size} vs {sizes[dim]}")
        loops.append(shape[:split])
        cores.append(shape[split:])
    return positions, names, np.broadcast_shapes(*loops), cores, core_out


def vectorized(vec, /, *args, **kwargs):
    """`vec(*args, **kwargs)` for an `np.vectorize` object vec, as numpy computes it."""
    positions, names, loop, cores, core_out = vectorize_plan(vec, args, kwargs)
    vargs = [args[i] for i in positions] + [kwargs[n] for n in names]
    if not vargs:
        return vec.pyfunc(*args, **kwargs)
    n = 1
    for k in loop:
        n = n * k
    flats = []
    for v, core in zip(vargs, cores):
        a = np.asanyarray(v)
        if core_out is None and a.dtype == object and a.ndim == 0 and not isinstance(v, (list, tuple)):
            # one object numpy wraps in a 0-d array (a function, the user's object) is handed to each call
            # as it is: the cotangent of what a closure captured comes back to it (through the object array
            # it was lost: properscoring's `crps_quadrature(x, cdf)`, 0.0 for 0.7)
            flats.append(None)
        else:
            flats.append(np.reshape(np.broadcast_to(a, loop + core), (n,) + core))
    if n == 0:
        if not vec.otypes:
            raise ValueError("cannot call `vectorize` on size 0 inputs unless `otypes` is set")
        if core_out is not None and any(len(dims) for dims in core_out):
            return np.vectorize.__call__(vec, *args, **kwargs)  # (numpy's own: empty, nothing to differentiate)
        empty = tuple(np.zeros(loop, dtype=t) for t in vec.otypes)
        return empty[0] if len(empty) == 1 else empty
    where = {i: k for k, i in enumerate(positions)}
    at = {name: len(positions) + k for k, name in enumerate(names)}
    outs = []
    for j in range(n):
        picked = [v if f is None else f[j] for v, f in zip(vargs, flats)]
        call_args = [picked[where[i]] if i in where else a for i, a in enumerate(args)]
        call_kw = {k: picked[at[k]] if k in at else v for k, v in kwargs.items()}
        if j == 0 and core_out is None and not vec.otypes and not vec.cache:
            vec.pyfunc(*call_args, **call_kw)  # numpy calls f on the first elements once more, for the types
        outs.append(vec.pyfunc(*call_args, **call_kw))
    if vec.otypes:  # (numpy's count of outputs is that of `otypes` where given: `otypes=[np.ndarray]` of a pyfunc
        count = len(vec.otypes)  # returning a tuple holds each tuple whole, itur's P.838 coefficients: a crash
        several = count > 1      # in both modes before)
    else:
        several = isinstance(outs[0], tuple)  # (as numpy asks; `type` of a traced number is no question)
        count = len(outs[0]) if several else 1
    if core_out is not None and count != len(core_out):
        raise ValueError(f"wrong number of outputs from pyfunc: expected {len(core_out)!r}, got {count!r}")
    results = []
    for k in range(count):
        items = [o[k] for o in outs] if several else outs
        first = np.asanyarray(items[0])
        dtype = vec.otypes[k] if vec.otypes else (first.dtype if core_out is not None else first.dtype.char)
        core = np.shape(items[0]) if core_out is not None else ()
        if core_out is None and np.dtype(dtype).kind == "O":  # (each item one object, as numpy's object loop
            held = np.empty(len(items), dtype=object)           # stores it: a tuple is not spread into a row)
            for i, v in enumerate(items):
                held[i] = v
            results.append(held.reshape(loop))
            continue
        results.append(np.reshape(np.array(items, dtype=dtype), loop + core))
    return tuple(results) if several else results[0]


def vander(x, N=None, increasing=False):
    """np.vander: the columns 1, x, x * x, (x * x) * x, ... (numpy's `multiply.accumulate`, product by product,
    the same values), highest power first unless increasing. numpy writes x into an `np.empty` array and
    multiplies in place there, where forward mode's duals cannot go (refused: xraydb's absorption fits)."""
    x = np.asarray(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = len(x) if N is None else N
    dtype = np.promote_types(x.dtype, int)
    if n <= 0:
        return np.empty((len(x), max(n, 0)), dtype=dtype)
    x = x.astype(dtype, copy=False)  # (numpy multiplies in the result's type: float32 values as float64)
    columns = [np.ones_like(x)]
    power = x
    for _ in range(1, n):
        columns.append(power)
        power = power * x
    v = np.stack(columns, axis=1)
    return v if increasing else v[:, ::-1]


def integer_of(kind):
    """`np.int64(x)` (and numpy's other signed integer types) of a number or an array: truncation toward 0, as
    `x.astype(np.int64)` computes it, whose jumps at the integers the engines check (numpy's constructor was a
    C class without a rule: pylightcurve's orbits, `np.int_((t - t0) / period) * period`, refused in both
    modes). Text (parsed), a base, is numpy's own constructor's."""
    def integer(x=0, *rest):
        if rest or isinstance(x, (str, bytes)) or x is None:
            return _construct(kind, x, *rest)
        return np.asarray(x).astype(kind)[()]
    integer.__name__ = integer.__qualname__ = f"{kind.__name__}_of"
    return integer


def _construct(kind, *args):
    return kind(*args)


registry.nondifferentiable(_construct)
for _kind in (np.int8, np.int16, np.int32, np.int64, np.intc, np.int_, np.longlong):
    registry.set(_kind, stand_in=integer_of(_kind))
del _kind

registry.nondifferentiable(vectorize_plan)
registry.set(np.vander, stand_in=vander)
registry.set(np.vdot, stand_in=vdot)
registry.set(np.compress, stand_in=compress)
registry.set((np.ndarray, "compress"), stand_in=compress_method)
registry.set(np.diagflat, stand_in=diagflat)
