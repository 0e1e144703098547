"""numpy's arithmetic on object arrays of the user's objects, as the Python it runs.

On an object array numpy computes with each element's own operators (`np.sum(a)` is `a[0] + a[1] + ...`
by the class's `__add__`; `np.sin(a)` calls each element's `.sin()`). The rules of the registry assume
numbers, whose arithmetic is the arithmetic of their derivatives: for a class of the user's it need not be
(a `__add__` that multiplies: reverse mode gave 4 for 6). So where an object array holds objects of a class
that is code (not a number, `leaves.value_class`), reverse mode runs the forms below, numpy's own loops
written in Python and differentiated through the elements' methods; the arithmetic without such a form is
refused (`object_form`). Forward mode needs none of this: numpy calls the methods on objects holding duals.
"""

from __future__ import annotations

import operator

import numpy as np

from ..registry import NoRuleError, _plain
from .stand_ins import vectorized

__all__ = ["holds_objects", "computes_in_python", "object_form"]

_NO = np._NoValue


def _larger(a, b):
    """numpy's maximum of two objects (`npy_ObjectMax`): the first where `a >= b`, else the second."""
    return a if a >= b else b


def _smaller(a, b):
    """numpy's minimum of two objects (`npy_ObjectMin`): the first where `a <= b`, else the second."""
    return a if a <= b else b


# a ufunc's operator on objects (numpy's object loops call these); the rest call the element's method of
# the ufunc's name (`np.sin(a)`: `a[i].sin()`)
_OPERATORS = {
    np.add: operator.add, np.subtract: operator.sub, np.multiply: operator.mul, np.true_divide: operator.truediv,
    np.floor_divide: operator.floordiv, np.remainder: operator.mod, np.power: operator.pow,
    np.negative: operator.neg, np.positive: operator.pos, np.absolute: operator.abs, np.matmul: operator.matmul,
    np.less: operator.lt, np.less_equal: operator.le, np.greater: operator.gt, np.greater_equal: operator.ge,
    np.equal: operator.eq, np.not_equal: operator.ne, np.maximum: _larger, np.minimum: _smaller,
}


_UFUNCS = {op: u for u, op in _OPERATORS.items()}


def holds_objects(args, kw) -> bool:
    """An argument is an object array holding an object that is no number to the rules (`registry._plain`:
    Fractions, Decimals, ufloats, registered scalars are; a class's own, or a float subclass with operators
    of its own, is not)."""
    for a in (*args, *kw.values()):
        if type(a) is np.ndarray and a.dtype == object and a.size:
            seen = {}
            for e in a.flat:
                if type(e) not in seen:
                    seen[type(e)] = None
                    if computes_in_python(e):
                        return True
    return False


def computes_in_python(e) -> bool:
    """e is no number to the rules: its operators are its class's code (`holds_objects`)."""
    return not _plain(e)


def ufunc_call(ufunc, *args, **kw):
    """`ufunc(*args)` on object arrays: the element's operator (or method) on each element, as numpy."""
    if kw:
        raise NoRuleError(f"np.{ufunc.__name__} with options {sorted(kw)} on an object array of objects "
                          "that compute in Python", fix="call it without them, or loop over the elements")
    op = _OPERATORS.get(ufunc) or operator.methodcaller(ufunc.__name__)
    return vectorized(np.vectorize(op, otypes=["O"] * ufunc.nout), *args)


def reduce(op, a, axis=0, initial=_NO, rows=None):
    """numpy's object reduction of `a` along `axis` (all of it for None): `op` left to right, from
    `initial` where given (rows: op on whole rows, elementwise, for more than one dimension; by default the
    ufunc of the operator, `ufunc_call`)."""
    a = np.asarray(a)
    if axis is None:
        a, axis = np.reshape(a, -1), 0
    a = np.moveaxis(a, axis, 0)
    if np.ndim(a) > 1:
        op = rows if rows is not None else _UFUNCS.get(op, op)
    n = np.shape(a)[0]
    if n == 0 and initial is _NO:
        raise ValueError("zero-size array to reduction operation which has no identity")
    acc = a[0] if initial is _NO else op(initial, a[0])
    for i in range(1, n):
        acc = op(acc, a[i])
    return acc


def ufunc_reduce(ufunc, a, axis=0, dtype=None, out=None, keepdims=False, initial=_NO, where=True):
    """`ufunc.reduce(a, axis)` on an object array."""
    if out is not None or keepdims or where is not True or type(axis) is tuple:
        raise NoRuleError(f"np.{ufunc.__name__}.reduce with out=, keepdims, where= or several axes on an object "
                          "array of objects that compute in Python", fix="reduce one axis at a time")
    return reduce(_OPERATORS.get(ufunc) or ufunc, a, axis, initial)


def sum_(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NO, where=True):
    """np.sum / ndarray.sum of an object array: numpy's add.reduce."""
    return ufunc_reduce(np.add, a, axis, dtype, out, keepdims, initial, where)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NO, where=True):
    """np.prod / ndarray.prod of an object array: numpy's multiply.reduce."""
    return ufunc_reduce(np.multiply, a, axis, dtype, out, keepdims, initial, where)


def max_(a, axis=None, out=None, keepdims=False, initial=_NO, where=True):
    """np.max / ndarray.max of an object array: numpy's maximum.reduce, the object itself (its cotangent
    flows to the element chosen)."""
    return ufunc_reduce(np.maximum, a, axis, None, out, keepdims, initial, where)


def min_(a, axis=None, out=None, keepdims=False, initial=_NO, where=True):
    """np.min / ndarray.min of an object array: numpy's minimum.reduce."""
    return ufunc_reduce(np.minimum, a, axis, None, out, keepdims, initial, where)


def tolist(a):
    """ndarray.tolist of an object array: nested lists of the objects themselves (a 0-d array: its object)."""
    if np.ndim(a) == 0:
        return a[()]
    if np.ndim(a) == 1:
        return [a[i] for i in range(len(a))]
    return [tolist(a[i]) for i in range(len(a))]


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """np.mean / ndarray.mean of an object array: the sum divided by the count, as numpy divides."""
    total = sum_(a, axis, dtype, out, keepdims, where=where)
    count = np.size(a) if axis is None else np.shape(a)[axis]
    return total / count


def dot(a, b, out=None):
    """np.dot of object arrays (1-D and 2-D): numpy's object dot, the first product then each next added."""
    if out is not None or np.ndim(a) > 2 or np.ndim(b) > 2:
        raise NoRuleError("np.dot with out= or of arrays of more than 2 dimensions on an object array of "
                          "objects that compute in Python", fix="loop over the elements")
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return ufunc_call(np.multiply, a, b)
    if np.ndim(a) == 1 and np.ndim(b) == 1:
        return _dot1(a, b)
    if np.ndim(a) == 1:
        return np.array([_dot1(a, b[:, j]) for j in range(np.shape(b)[1])], dtype=object)
    if np.ndim(b) == 1:
        return np.array([_dot1(a[i], b) for i in range(np.shape(a)[0])], dtype=object)
    out = np.empty((np.shape(a)[0], np.shape(b)[1]), dtype=object)
    for i in range(np.shape(a)[0]):
        for j in range(np.shape(b)[1]):
            out[i, j] = _dot1(a[i], b[:, j])
    return out


def _dot1(a, b):
    if len(a) != len(b):
        raise ValueError(f"shapes ({len(a)},) and ({len(b)},) not aligned")
    acc = a[0] * b[0]
    for i in range(1, len(a)):
        acc = acc + a[i] * b[i]
    return acc


def matmul(a, b):
    """`a @ b` of 1-D and 2-D object arrays: numpy's object matmul, each sum starting from the integer 0."""
    if np.ndim(a) == 0 or np.ndim(b) == 0 or np.ndim(a) > 2 or np.ndim(b) > 2:
        raise NoRuleError("np.matmul of scalars or of arrays of more than 2 dimensions on an object array of "
                          "objects that compute in Python", fix="loop over the elements")
    a2 = a if np.ndim(a) == 2 else np.reshape(a, (1, -1))
    b2 = b if np.ndim(b) == 2 else np.reshape(b, (-1, 1))
    if np.shape(a2)[1] != np.shape(b2)[0]:
        raise ValueError(f"matmul: mismatch in its core dimension ({np.shape(a2)[1]} vs {np.shape(b2)[0]})")
    out = np.empty((np.shape(a2)[0], np.shape(b2)[1]), dtype=object)
    for i in range(np.shape(a2)[0]):
        for j in range(np.shape(b2)[1]):
            acc = 0
            for k in range(np.shape(a2)[1]):
                acc = acc + a2[i, k] * b2[k, j]
            out[i, j] = acc
    if np.ndim(a) == 1 and np.ndim(b) == 1:
        return out[0, 0]
    if np.ndim(a) == 1:
        return out[0]
    if np.ndim(b) == 1:
        return out[:, 0]
    return out


# numpy functions (and ndarray methods by name) with a form; the arithmetic without one, refused
_FORMS = {np.sum: sum_, np.prod: prod, np.mean: mean, np.dot: dot, np.matmul: matmul, np.max: max_, np.amax: max_,
          np.min: min_, np.amin: min_}
_METHODS = {"sum": sum_, "prod": prod, "mean": mean, "dot": dot, "max": max_, "min": min_, "tolist": tolist}
_ARITHMETIC = frozenset({
    "sum", "prod", "mean", "average", "var", "std", "cumsum", "cumprod", "nansum", "nanprod", "nanmean",
    "nanvar", "nanstd", "nancumsum", "nancumprod", "dot", "vdot", "inner", "outer", "matmul", "tensordot",
    "einsum", "kron", "trace", "cross", "convolve", "correlate", "polyval", "interp", "diff", "ediff1d",
    "gradient", "trapezoid", "trapz", "linspace", "cov", "corrcoef", "clip", "round", "around", "sinc",
    "median", "percentile", "quantile", "nanmedian", "nanpercentile", "nanquantile", "ptp", "conjugate", "real",
    "imag", "angle", "abs", "fabs", "sqrt", "exp", "log", "sin", "cos", "tan", "square", "reciprocal",
    "logaddexp", "hypot", "arctan2", "maximum", "minimum", "fmax", "fmin", "heaviside", "copysign", "sign",
    "solve", "inv", "det", "norm", "eig", "eigh", "svd", "qr", "cholesky", "lstsq", "pinv", "matrix_power",
    "slogdet", "eigvals", "eigvalsh", "multi_dot", "tensorinv", "tensorsolve", "vecdot", "matvec", "vecmat",
})


def object_form(f, args, kw):
    """(form, pre) to run instead of numpy's f on object arrays of the user's objects, as Python (pre: the
    arguments before f's own, for a ufunc or a bound method); None where f does no arithmetic on them
    (indexing, reshaping, joining, comparing by sorting); refused (NoRuleError) for arithmetic without a
    form."""
    if f is np.matmul:  # (a ufunc of core dimensions: not elementwise)
        return matmul, ()
    if type(f) is np.ufunc:
        if f.__name__.endswith(" (vectorized)"):
            return None  # (np.frompyfunc's: its own function on the elements, already Python)
        return ufunc_call, (f,)
    if type(f) is not np.ufunc and type(f).__hash__ is not None and f in _UFUNCS:  # (`operator.add(a, b)`)
        return ufunc_call, (_UFUNCS[f],)
    self = getattr(f, "__self__", None)
    name = getattr(f, "__name__", "")
    if type(self) is np.ufunc:
        if name == "reduce":
            return ufunc_reduce, (self,)
        raise _refused(f"np.{self.__name__}.{name}")
    if isinstance(self, np.ndarray):
        if name in _METHODS:
            return _METHODS[name], (self,)
        if name in _ARITHMETIC:
            raise _refused(f"ndarray.{name}")
        return None
    try:
        form = _FORMS.get(f)
    except TypeError:
        form = None
    if form is not None:
        return form, ()
    if name in _ARITHMETIC and (getattr(f, "__module__", None) or "").startswith(("numpy", "scipy")):
        raise _refused(f"{f.__module__}.{name}")
    return None


def _refused(what: str) -> NoRuleError:
    return NoRuleError(
        f"{what} on an object array holding objects of a class that computes in Python: numpy runs the "
        "objects' own operators, which reverse mode differentiates only in ufuncs, sum, prod, mean, max, min, "
        "dot and matmul", fix="loop over the elements in Python (`sum(a[i] * w[i] for i in ...)`), or use forward mode")
