"""Leaving numpy: `x.item()`, `x.tolist()`; methods of numpy scalars use the ndarray rules. Casts: numpy's
inexact scalar types called as functions (`np.float64(x)`, `x.dtype.type(v)`) and `ndarray.__array_wrap__`."""

import decimal
import numbers

import numpy as np

from ..leaves import as_array  # np.asarray, but a dask array is left as it is
from ..registry import registry
from ._util import match_primal


@registry.adjoint((np.ndarray, "item"), (np.generic, "item"))
def item_adjoint(dy, y, self, *index):
    if not (type(dy) in (float, int, complex) or isinstance(dy, (np.generic, numbers.Rational, decimal.Decimal))):
        # (a dual number, forward over reverse; a ufloat: a one-hot array times dy, of dy's own kind)
        onehot = item_adjoint(1.0, y, self, *index)[0]
        return (onehot * dy,) + (None,) * len(index)
    out = np.zeros(np.shape(self), dtype=np.result_type(getattr(self, "dtype", float), type(dy)))
    if len(index) == 1 and isinstance(index[0], tuple):  # `a.item((1, 2))`: the multi-index as one tuple
        index = index[0]
        out[index] = dy
        return (out if isinstance(self, np.ndarray) else out[()], None)
    if index:
        out[np.unravel_index(index[0], out.shape) if len(index) == 1 else index] = dy
    else:
        out[...] = dy
    return (out if isinstance(self, np.ndarray) else out[()],) + (None,) * len(index)


@registry.adjoint((np.ndarray, "tolist"))
def tolist_adjoint(dy, y, self):
    def fill(g, like):
        if isinstance(like, list):
            return [fill(gi, li) for gi, li in zip(g if g is not None else [None] * len(like), like)]
        return 0.0 if g is None else g
    return (as_array(fill(dy, y), dtype=self.dtype if self.dtype.kind in "fc" else float),)


def scalar_method_rule(scalar_type, name):
    """The rule for a method of a numpy scalar: the ndarray method's rule (scalars act as 0-d arrays)."""
    return registry.rules.get((np.ndarray, name))


# -- numpy scalar types called as functions (np.float64(x), x.dtype.type(v)) and __array_wrap__ ----------

_INEXACT_SCALARS = (np.float16, np.float32, np.float64, np.longdouble, np.complex64, np.complex128,
                    np.clongdouble)


def scalar_type_adjoint(dy, y, x=0.0, *rest, **kwargs):
    """np.float64(x) and friends: a cast, so x's cotangent is dy brought back to x's type and shape (an
    array argument gives an array: np.float64(array) casts elementwise)."""
    if dy is None or isinstance(x, (str, bytes)) or not _carries_derivative(x):
        return (None,) * (1 + len(rest))
    return (match_primal(dy, x),) + (None,) * len(rest)


def _carries_derivative(x) -> bool:
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype.kind in "fcO"
    if isinstance(x, (list, tuple)):
        return any(_carries_derivative(e) for e in x)
    return isinstance(x, (float, complex)) or not isinstance(x, (int, bool, type(None)))


def _scalar_type_frule(scalar_type):
    def frule(tangents, x=0.0, *rest, **kwargs):
        y = scalar_type(x, *rest, **kwargs)
        t = tangents[0] if tangents else None
        if t is None or not np.issubdtype(np.result_type(y), np.inexact):
            return y, None
        return y, scalar_type(t)
    frule.__name__ = frule.__qualname__ = f"{scalar_type.__name__}_frule"
    return frule


for _type in _INEXACT_SCALARS:
    registry.adjoint(_type, kind="linear")(scalar_type_adjoint)
    registry.frule(_type, kind="linear")(_scalar_type_frule(_type))


@registry.adjoint((np.ndarray, "__array_wrap__"), kind="linear")
def array_wrap_adjoint(dy, y, self, array, *rest, **kwargs):
    """self.__array_wrap__(array): array viewed as self's type; self only lends its type."""
    return (None, match_primal(dy, array) if _carries_derivative(array) else None) + (None,) * len(rest)


@registry.frule((np.ndarray, "__array_wrap__"), kind="linear")
def array_wrap_frule(tangents, self, array, *rest, **kwargs):
    t = tangents[1] if len(tangents) > 1 else None
    return self.__array_wrap__(array, *rest, **kwargs), t


# -- numpy's _array_converter: inputs in, as arrays out, results wrapped back (np.linspace, np.delete, ...) --

from numpy._core._multiarray_umath import _array_converter  # noqa: E402


@registry.rrule(_array_converter, kind="linear")
def array_converter_rrule(*args):
    """The converter holds its inputs; its cotangent (from `as_arrays`) is one cotangent per input."""
    conv = _array_converter(*args)

    def array_converter_pullback(dconv):
        d = tuple(dconv) if isinstance(dconv, (tuple, list)) else (None,) * len(args)
        return tuple(None if g is None or not _carries_derivative(a) else match_primal(g, a)
                     for g, a in zip(d, args))
    return conv, array_converter_pullback


@registry.adjoint((_array_converter, "as_arrays"), kind="linear")
def as_arrays_adjoint(dy, y, conv, **kwargs):
    """The arrays' cotangents become the converter's (one per input)."""
    return (tuple(dy) if dy is not None else None,)


@registry.adjoint((_array_converter, "wrap"), kind="linear")
def wrap_adjoint(dy, y, conv, arr, *rest, **kwargs):
    """`conv.wrap(arr)`: arr as the inputs' type (a scalar for scalar inputs): its cotangent passes."""
    return (None, None if dy is None else match_primal(dy, arr)) + (None,) * len(rest)


@registry.frule((_array_converter, "wrap"), kind="linear")
def wrap_frule(tangents, conv, arr, *rest, **kwargs):
    t = tangents[1] if len(tangents) > 1 else None
    return conv.wrap(arr, *rest, **kwargs), t


registry.nondifferentiable((_array_converter, "result_type"))


class KeptConverter:
    """`_array_converter(*values)` where some values are kept as they are (`kept`: a forward-mode dual, a
    sparsity tracer), which the C converter would turn into plain arrays (numpy 2's np.delete, np.insert,
    np.linspace, np.ediff1d convert their inputs with it). The same API on the values: the kept ones stay
    themselves, the others become arrays as numpy's would. `value_of` gives what a kept value's dtype is
    read from; `ndim` a result's number of axes."""

    @staticmethod
    def kept(v) -> bool:
        return False

    @staticmethod
    def value_of(v):
        return v

    @staticmethod
    def ndim(arr) -> int:
        return np.ndim(arr)

    def __init__(self, *args):
        self._args = tuple(a if self.kept(a) or isinstance(a, (int, float, complex)) else np.asarray(a)
                           for a in args)
        self._python = tuple(isinstance(a, (int, float, complex)) and not isinstance(a, bool) for a in args)
        self.scalar_input = tuple(not self.kept(a) and not isinstance(a, np.ndarray) and np.ndim(a) == 0
                                  for a in args)

    def __len__(self):
        return len(self._args)

    def __getitem__(self, i):
        return self._args[i]

    def as_arrays(self, subok=True, pyscalars="convert_if_no_array"):
        keep = pyscalars == "preserve" or pyscalars == "convert_if_no_array" and not all(self._python)
        return tuple(a if self.kept(a) or (keep and p) else np.asarray(a) for a, p in zip(self._args, self._python))

    def wrap(self, arr, /, to_scalar=None):
        if to_scalar is None:
            to_scalar = all(self.scalar_input)
        return arr[()] if to_scalar and self.ndim(arr) == 0 else arr

    def result_type(self, extra_dtype=None, ensure_inexact=False):
        values = [self.value_of(a) if self.kept(a) else a for a in self._args]
        dtype = np.result_type(*values, *(() if extra_dtype is None else (extra_dtype,)))
        if ensure_inexact and dtype.kind not in "fc":  # (numpy 2.4's: np.linspace's)
            dtype = np.result_type(dtype, np.float64)
        return dtype


class DualsConverter(KeptConverter):
    """The converter in forward mode, where an argument is a dual: duals stay duals."""

    @staticmethod
    def kept(v) -> bool:
        return _is_dual(v)

    @staticmethod
    def value_of(v):
        return v.primal


def _is_dual(a) -> bool:
    return type(a).__name__ == "Dual" and type(a).__module__.startswith("contexts.forward")


registry.set(_array_converter, duals=DualsConverter)

# `x.__array_namespace__()` is the module numpy: xarray, array-api-compat and scipy ask it of arrays
registry.nondifferentiable((np.ndarray, "__array_namespace__"))
# (ndarray's own `__array_finalize__` does nothing; a subclass's calls it by `super()`, astropy's Quantity on every
# view: its value None, no derivative in it; the subclass's own code, what it stores, is run as code)
registry.nondifferentiable((np.ndarray, "__array_finalize__"))
# (its methods have the C converter's rules: reverse mode running on duals — hessian — meets it)
registry.adjoint(DualsConverter.as_arrays, kind="linear")(as_arrays_adjoint)
registry.adjoint(DualsConverter.wrap, kind="linear")(wrap_adjoint)
registry.frule(DualsConverter.wrap, kind="linear")(wrap_frule)
registry.nondifferentiable(DualsConverter.result_type)
