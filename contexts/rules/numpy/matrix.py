"""numpy.matrix in reverse mode: numpy's rules run on the matrices' plain views.

np.matrix is a Python subclass of ndarray whose `*` is a matrix product, `**` a matrix power and whose
reductions and indexing keep two axes. Its methods are Python code the engines differentiate as any code;
what they call (np.dot, `ndarray.sum(..., keepdims=True)`, `ndarray.transpose`, np.linalg.inv, the
`ndarray.__new__` view, `__array__`) computes the same entries on a matrix as on its plain view, in the same
order: only the result's class (and its 2-d shape, set by `__array_finalize__`) differs. Those primitives
(`MATRIX_SAFE`, and every ufunc) are pulled back by their plain rules on the plain views, the cotangent
reshaped to the plain result's shape; any other primitive met with a matrix is refused (a numpy function of
Python that computes with `*` on its argument, np.polyval, would be a matrix polynomial). The operators of a
matrix operand: `*` and `**` by their matrix meaning (`matrix_binop_adjoint`), the others elementwise.
Invariant: no rule's adjoint ever sees a matrix; every cotangent is a plain array of its primal's shape.
"""

from __future__ import annotations

import operator

import numpy as np

from ..registry import registry
from ._util import matrix_refused, unsupported

__all__ = ["matrix_pullback", "matrix_binop_adjoint", "MATRIX_SAFE"]

_MATRIX = np.matrix


def _plain(v):
    """A matrix's plain ndarray view (the same memory); anything else as it is."""
    return v.view(np.ndarray) if type(v) is _MATRIX else v


_METHODS = ("transpose", "sum", "mean", "prod", "std", "var", "max", "min", "__getitem__", "reshape", "ravel",
            "flatten", "squeeze", "copy", "astype", "view", "__array__", "__array_wrap__", "conjugate", "conj",
            "dot", "__neg__", "__pos__", "tolist", "item", "all", "any", "argmax", "argmin")
# numpy functions of Python that convert their argument first (np.asarray) or hand it to its method: on a
# matrix they compute what they compute on its plain view (the result wrapped back)
_FUNCTIONS = (np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.dot, np.matmul, np.linalg.inv,
              np.linalg.solve, np.linalg.det, np.linalg.slogdet, np.sum, np.mean, np.transpose, np.reshape,
              np.ravel, np.trace, np.diagonal, np.linalg.norm, np.inner, np.outer, np.copy, np.concatenate)
MATRIX_SAFE = frozenset(id(f) for f in _FUNCTIONS) | frozenset(id(getattr(np.ndarray, m)) for m in _METHODS)


def _safe(f) -> bool:
    if isinstance(f, np.ufunc):
        return True
    own = getattr(f, "__self__", None)
    if own is not None and isinstance(own, np.ndarray):  # a bound C method of the matrix: ndarray's
        f = getattr(np.ndarray, f.__name__, None)
    return id(f) in MATRIX_SAFE


def _unbound(f, is_method):
    return getattr(np.ndarray, f.__name__) if is_method else f


def matrix_pullback(f, adjoint, y, full, kw, is_method):
    """(adjoint, plain y, plain arguments) for a primitive f met with a matrix among its value y and its
    arguments `full` (self first for a method): f's plain rule on the plain views, the cotangent reshaped to
    the plain result; refused for a primitive not known to compute the same entries on a matrix."""
    if not _safe(f) or kw.get("out") is not None:
        raise matrix_refused()
    plain = tuple(_plain(a) for a in full)
    plain_kw = {k: _plain(v) for k, v in kw.items()}
    yp = _plain(_unbound(f, is_method)(*plain, **plain_kw))  # (`.view(np.matrix)`: its plain view)
    if np.size(yp) != np.size(y):
        raise matrix_refused()
    shape = np.shape(yp)

    def matrix_adjoint(dy, y_, *args, **kwargs):
        if isinstance(dy, np.ndarray) or isinstance(dy, np.generic):
            dy = np.asarray(dy).reshape(shape)
        return adjoint(dy, yp, *args, **kwargs)
    return matrix_adjoint, yp, plain


def _as_matrix(v):
    """matrix.__mul__'s view of its other operand: a row for a vector (np.asmatrix)."""
    return np.asarray(np.asmatrix(v)) if isinstance(v, (np.ndarray, list, tuple)) else v


def _fit(g, v):
    if g is None or v is None:
        return None
    if isinstance(v, np.ndarray) or isinstance(v, (list, tuple)):
        return np.asarray(g).reshape(np.shape(v))
    g = g if np.ndim(g) == 0 else np.sum(g)
    return type(v)(g) if type(v) in (float, complex) else g  # (a Python number's cotangent: one of its type)


def _mul_adjoint(g, a, b, need):
    """`a * b` where a matrix makes it np.dot(A, B) (a scalar operand: a scaling)."""
    A = _as_matrix(a) if type(a) is not _MATRIX else _plain(a)
    B = _as_matrix(b) if type(b) is not _MATRIX else _plain(b)
    if np.ndim(A) == 0 or np.ndim(B) == 0:
        ga = (g * np.conj(B) if np.ndim(B) == 0 else np.sum(g * np.conj(B))) if need & 1 else None
        gb = (np.conj(A) * g if np.ndim(A) == 0 else np.sum(np.conj(A) * g)) if need & 2 else None
    else:
        ga = g @ np.conj(B).T if need & 1 else None
        gb = np.conj(A).T @ g if need & 2 else None
    return _fit(ga, a), _fit(gb, b)


def _pow_adjoint(g, a, n):
    """`A ** n` = np.linalg.matrix_power(A, n) for an integer n: d(A^n) = sum_k A^k dA A^(n-1-k)."""
    if type(a) is not _MATRIX or not isinstance(n, (int, np.integer)):
        raise matrix_refused()
    A = _plain(a)
    if n < 0:
        B = np.linalg.inv(A)
        gB = _pow_adjoint(g, B.view(_MATRIX), -n)
        return -(B.T @ gB @ B.T)
    if n == 0:
        return np.zeros_like(A)
    powers = [np.eye(A.shape[0], dtype=A.dtype)]
    for _ in range(n - 1):
        powers.append(powers[-1] @ A)
    ga = np.zeros_like(A, dtype=np.result_type(A, g))
    for k in range(n):
        ga = ga + powers[k].T @ g @ powers[n - 1 - k].T
    return ga


_OPERANDS = (np.ndarray, np.generic, int, float, complex)


def matrix_binop_adjoint(opname, g, y, a, b, need=3):
    """The cotangents of a and b for `a <op> b` where one is a np.matrix: `*` a matrix product, `**` a matrix
    power (integer exponents), `+ - /` and the others the elementwise operators' rules on plain views."""
    for v in (a, b, g):  # (a scipy.sparse operand, an object: its own operators, not these formulas)
        if not isinstance(v, _OPERANDS) or isinstance(v, np.ndarray) and v.dtype.kind not in "biufc":
            raise matrix_refused()
    g = np.asarray(g) if isinstance(g, np.ndarray) else g
    if opname in ("mul", "imul"):
        return _mul_adjoint(g, a, b, need)
    if opname in ("pow", "ipow"):
        if need & 2:
            raise unsupported("np.matrix", "a matrix power `A ** n` differentiated in its exponent",
                              "keep the exponent a constant integer")
        return _pow_adjoint(g, a, b), None
    if opname in ("add", "sub", "truediv", "matmul", "iadd", "isub", "itruediv", "imatmul"):
        op = getattr(operator, opname.lstrip("i") if opname.startswith("i") and opname != "imatmul" else opname)
        if opname == "imatmul":
            op = operator.matmul
        rule = registry.get(op)
        A, B = _plain(a), _plain(b)
        yp = op(A, B)
        ga, gb = rule.adjoint(np.asarray(g).reshape(np.shape(yp)) if np.ndim(g) else g, yp, A, B)
        return (ga if need & 1 else None), (gb if need & 2 else None)
    raise matrix_refused()


def _ndarray_array(x, dtype=None, copy=None):
    return np.ndarray.__array__(x, dtype) if copy is None else np.ndarray.__array__(x, dtype, copy=copy)


def _array_transpose(dy, y, x, *rest, **kwargs):
    """`x.__array__()`: x's entries as a plain array (a matrix's `.A`)."""
    return (np.asarray(dy).reshape(np.shape(x)), *(None,) * len(rest))


def _array_frule(tangents, x, *rest, **kwargs):
    t = tangents[0] if tangents else None
    return np.ndarray.__array__(x, *rest, **kwargs), t


registry.adjoint((np.ndarray, "__array__"), kind="linear")(_array_transpose)
registry.frule((np.ndarray, "__array__"), kind="linear")(_array_frule)


def _array_wrap_transpose(dy, y, x, arr, *rest, **kwargs):
    """`x.__array_wrap__(arr)`: arr viewed as x's class (np.linalg's results for a matrix): arr's entries."""
    return (None, np.asarray(dy).reshape(np.shape(arr)), *(None,) * len(rest))


registry.adjoint((np.ndarray, "__array_wrap__"), kind="linear")(_array_wrap_transpose)
