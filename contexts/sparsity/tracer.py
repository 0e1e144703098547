"""Sparsity tracers: array-shaped values that carry which inputs each element depends on.

A `Tracer` has a shape, a first-order `Pattern` (one row per element, C order, columns = inputs), for
Hessians a second-order `Pattern` (columns = input pairs `i * n + j`, i <= j), and optionally its primal
value. Local mode gives inputs their primal, global mode does not; values built from constants alone keep
their primal in both modes, so only branches on input-dependent values fail in global mode.

Every operation is one of the three moves in `moves.py` (elementwise, restructure, reduce).
"""

from __future__ import annotations

import math
import os
import sys
import types
from typing import Any

import numpy as np

import overdub.ops

from overdub.errors import OverdubError

from ..lowered.runtime import text

from contexts.rules.leaves import runs_natively
from contexts.rules.registry import MissingRule

from .pattern import Pattern

__all__ = ["Tracer", "IndexTracer", "TracedBranchError", "TracedHashError", "NoSparsityRule", "NoSparsityMethod", "is_tracer",
           "user_site"]


class TracedBranchError(OverdubError):
    """A value that depends on the inputs was needed as a concrete Python value in global mode."""


class TracedHashError(OverdubError, TypeError):
    """A traced value was hashed (a dict key, a set member). Still a TypeError, as hashing an array is."""

    swallowable = True  # (a probe's answer: code may take its fallback, `overdub.errors.not_swallowed`)


class NoSparsityRule(MissingRule):
    """A primitive was reached with tracers and has no sparsity rule."""


_FLOAT_INSIDES = frozenset({"as_integer_ratio", "hex", "is_integer", "fromhex"})


class NoSparsityMethod(NoSparsityRule, AttributeError):
    """An ndarray method or attribute tracers do not have. Also an AttributeError, so that library code
    probing for it (`getattr(a, "argsort", None)`, `hasattr`) takes its fallback as for any object."""

    swallowable = True  # (a probe's answer: code may take its fallback, `overdub.errors.not_swallowed`)


_NDARRAY_NAMES = frozenset(name for name in dir(np.ndarray) if not name.startswith("__"))


_HERE = os.path.dirname(os.path.abspath(__file__))
_CORE = os.path.join(os.path.dirname(os.path.dirname(_HERE)), "overdub")


def user_site(depth: int = 2) -> str:
    """file:line in function of the innermost frame outside overdub and this package."""
    frame = sys._getframe(depth)
    while frame is not None:
        fname = os.path.abspath(frame.f_code.co_filename)
        if not (fname.startswith(_HERE) or fname.startswith(_CORE)):
            return f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_qualname}"
        frame = frame.f_back
    return "<unknown>"


def _index_map(shape: tuple) -> np.ndarray:
    return np.arange(math.prod(shape), dtype=np.int64).reshape(shape)


def _is_basic(key: Any) -> bool:
    """numpy's basic indexing (ints, slices, Ellipsis, None): the result is a view."""
    parts = key if isinstance(key, tuple) else (key,)
    return all(p is None or p is Ellipsis or isinstance(p, slice)
               or (isinstance(p, (int, np.integer)) and not isinstance(p, (bool, np.bool_))) for p in parts)


def _same(a: Any) -> Any:
    return a


def is_tracer(x: Any) -> bool:
    return isinstance(x, Tracer)


def _shape(x: Any) -> tuple:
    return x.shape if isinstance(x, Tracer) else np.shape(x)


def _primal(x: Any) -> Any:
    return x.primal if isinstance(x, Tracer) else x


class _Flags:
    """What library code asks of `a.flags` (tracers are written through setitem, never aliased), by
    name or by numpy's letters (`a.flags["W"]`)."""
    writeable = c_contiguous = owndata = aligned = forc = behaved = carray = True
    f_contiguous = fnc = farray = writebackifcopy = False
    _LETTERS = {"w": "writeable", "c": "c_contiguous", "f": "f_contiguous", "o": "owndata", "a": "aligned",
                "x": "writebackifcopy", "b": "behaved", "ca": "carray", "fa": "farray"}

    def __getitem__(self, key):
        key = key.lower()
        return getattr(self, self._LETTERS.get(key, key))


_FLAGS = _Flags()


def _opts_out(o) -> bool:
    """A tracer's operator leaves `t op o` to o's own methods (NotImplemented): where o's class opts out of
    numpy's ufuncs (`__array_ufunc__ = None`: `x < obj` is `obj.__gt__(x)`, as for an ndarray), and where it
    has arithmetic of its own in Python, which Python runs for a number (`s - V(c)` is `V.__rsub__(s)`; taken
    for a constant, what V holds dropped out of the pattern)."""
    kind = type(o)
    if kind in _NUMBERS or kind is Tracer:
        return False
    ufunc = getattr(kind, "__array_ufunc__", 0)
    if ufunc is None:
        return True
    return (ufunc == 0 and kind.__flags__ & _HEAPTYPE and getattr(kind, "__array_priority__", 0.0) <= 0.0
            and not runs_natively(kind)  # (scipy's sparse matrices, numpy-aware by priority: the rules')
            and any(type(getattr(kind, name, None)) is types.FunctionType for name in _ARITHMETIC))


def _declined(o):
    """A tracer's reflected operator reached for o of a class with its own arithmetic: o's method declined the
    tracer (`isinstance(o, float)`), where it would take the number: refused, never taken for a constant."""
    if getattr(type(o), "__array_ufunc__", 0) is None:
        return NotImplemented  # (numpy's opt-out: Python's own TypeError follows, as for an ndarray)
    raise NoSparsityRule(f"{type(o).__name__}'s own operator declined a sparsity tracer (it returned "
                         "NotImplemented), where it may take the number the tracer stands for",
                         fix="let the method take any number (`isinstance(o, numbers.Number)`)")


_NUMBERS = frozenset({float, int, bool, complex, np.float64, np.float32, np.ndarray, np.bool_, np.int64})
_HEAPTYPE = overdub.ops.HEAPTYPE  # (a class made by a class statement)
_ARITHMETIC = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
               "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__lt__", "__gt__", "__le__", "__ge__", "__eq__")


class Tracer:
    """An array (or scalar, shape ()) whose elements know the inputs they depend on.

    >>> import numpy as np
    >>> from contexts.sparsity import jacobian_sparsity
    >>> jacobian_sparsity(lambda x: x[1:] * x[:-1], np.ones(3)).toarray().astype(int)
    array([[1, 1, 0],
           [0, 1, 1]])
    """

    # a view (`z[1:3]`, `Z[k]`: numpy's basic indexing) has no state of its own: `_view` is (base, rows,
    # ops, partial), its elements' rows in the base tracer, which its reads and writes go through, so
    # that a function filling a view (`fill(z[1:3], x)`) fills z; ops turn the base's primal into the
    # view's; partial: the view holds part of each element (`z.real`, `z.imag` of a complex z), so a
    # write adds to the element's dependencies instead of replacing them
    __slots__ = ("_shape", "_P", "_H", "_primal", "_order", "_view", "_seen", "_readonly", "_overlaps")
    __array_priority__ = 1000
    def __hash__(self):
        """Never a dict key or set member: equal values would hash alike while their dependences differ,
        and what a lookup finds depends on the values (an ndarray is not hashable either)."""
        raise TracedHashError(
            "a value that depends on the inputs is used as a dict key or set member", where=user_site(),
            fix="key the dict by something that does not depend on the inputs (an index, a name)")

    def __init__(self, shape: tuple, P: Pattern | None, H: Pattern | None = None, primal: Any = None,
                 order: int = 0):
        self._shape = tuple(shape)
        self._P, self._H, self._primal, self._order = P, H, primal, order
        self._view = None
        self._seen = (None, None, None, None)  # a view's last (root P, its rows, root H, its rows)
        self._readonly = False  # a view numpy makes read-only (`a.diagonal()`), and views of it
        self._overlaps = None  # a view's: whether it shows an element of its base at several places (asked once)

    def _view_by(self, op, partial: bool = False, index_op=None, writeable: bool = False) -> "Tracer":
        """op(self) (a numpy operation: basic indexing, transpose, reshape, ...) as a view tracer where
        numpy's op would return a view, else as a copy. The view's elements are rows `rows` of the root
        tracer (op applied to the index map: numpy decides view or copy there just as for values), its
        primal the root's primal with the ops applied in turn (a numpy view of it). partial: op takes
        part of each element (np.real, np.imag); index_op: what op does to the index map, when not op
        (np.imag of integers is a new array of zeros, not the elements' imaginary parts). A view numpy
        makes read-only (np.broadcast_to, np.diagonal) refuses writes as numpy's does, unless `writeable`
        (np.broadcast_arrays' views: numpy warns, and writes): code catching numpy's ValueError to write
        into a copy instead had its write go into the base (a missed nonzero, sp43 W1)."""
        if self._view is None:
            root, rows, ops, was_partial = self, _index_map(self.shape), (), False
        else:
            root, rows, ops, was_partial = self._view
        new = (index_op or op)(rows)
        if not (isinstance(new, np.ndarray) and np.may_share_memory(new, rows)):
            return _moves.restructure([self], op)
        t = Tracer(new.shape, None)
        t._view = (root, new, ops + (op,), was_partial or partial)
        t._readonly = self._readonly or (not writeable and not new.flags.writeable and rows.flags.writeable)
        return t

    # state: a view's is its base's, read and written at its rows
    def _view_pattern(self, slot: str, k: int) -> Pattern | None:
        """The pattern `slot` ("_P" or "_H") of a view: its rows of the root's, gathered once per root
        pattern (patterns are never changed in place: a new root pattern is a change); `k` is the slot's
        place in the `_seen` cache."""
        base, rows, _, _ = self._view
        root = getattr(base, slot)
        if root is None:
            return None
        seen = self._seen
        if seen[k] is not root:
            seen = list(seen)
            seen[k], seen[k + 1] = root, root.gather(rows.reshape(-1))
            self._seen = seen = tuple(seen)
        return seen[k + 1]

    def _write_view_pattern(self, slot: str, own: Pattern | None) -> None:
        """A view's rows of the root's pattern `slot` replaced by `own` (None: no dependencies); a partial
        view's rows gain own (the rest of each element keeps its dependencies)."""
        base, rows, _, partial = self._view
        if partial and own is not None:
            old = self._view_pattern(slot, 0 if slot == "_P" else 2)
            own = own if old is None else old.union(own)
        elif partial:
            return
        root = getattr(base, slot)
        if own is None and root is None:
            return
        ncols = (own if own is not None else root).ncols
        gather = np.arange(base.size, dtype=np.int64)
        gather[rows.reshape(-1)] = base.size + np.arange(rows.size, dtype=np.int64)
        own = own if own is not None else Pattern.empty(rows.size, ncols)
        root = root if root is not None else Pattern.empty(base.size, ncols)
        if not base.shape:
            # a view of a shape-() tracer: numpy's would be a view of a 0-d array but a copy of a numpy
            # scalar (what reductions and indexing give), which tracers do not tell apart: both kept
            setattr(base, slot, root.union(own))
            return
        setattr(base, slot, Pattern.vstack([root, own]).gather(gather))

    @property
    def P(self) -> Pattern | None:
        return self._P if self._view is None else self._view_pattern("_P", 0)

    @P.setter
    def P(self, P) -> None:
        if self._view is None:
            self._P = P
        else:
            self._write_view_pattern("_P", P)

    @property
    def H(self) -> Pattern | None:
        return self._H if self._view is None else self._view_pattern("_H", 2)

    @H.setter
    def H(self, H) -> None:
        if self._view is None:
            self._H = H
        else:
            self._write_view_pattern("_H", H)

    @property
    def primal(self) -> Any:
        if self._view is None:
            return self._primal
        base, _, ops, _ = self._view
        p = base._primal
        if p is None:
            return None
        p = np.asarray(p)
        for op in ops:  # a numpy view of the root's primal
            p = op(p)
        return p

    @primal.setter
    def primal(self, primal) -> None:
        if self._view is None:
            self._primal = primal
            return
        base, rows, ops, partial = self._view
        if primal is None or not base.shape:  # (a shape-() base: written or not, see above)
            base._primal = None
        elif base._primal is not None:
            new = np.array(base._primal, copy=True, order="C")  # (reshape(-1) a view: the write lands)
            if partial:  # a part of each element (np.real, np.imag): written through numpy's own views
                view = new
                for op in ops:
                    view = op(view)
                view[...] = primal
            else:
                new.reshape(-1)[rows.reshape(-1)] = np.broadcast_to(primal, rows.shape).reshape(-1)
            base._primal = new

    @property
    def order(self) -> int:
        return self._order if self._view is None else self._view[0]._order

    @order.setter
    def order(self, order: int) -> None:
        if self._view is None:
            self._order = order
        else:
            self._view[0]._order = order

    @property
    def shape(self) -> tuple:
        return self._shape

    @shape.setter
    def shape(self, shape) -> None:
        """`a.shape = ...` reshapes in place, as for ndarray (rows stay in C order)."""
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if self._view is not None:  # a view reshaped: the same rows of its base, in the new shape
            base, rows, ops, partial = self._view
            rows = rows.reshape(shape)
            self._view = (base, rows, ops + (lambda a, shape=rows.shape: a.reshape(shape),), partial)
            self._shape = rows.shape
            return
        self._shape = np.empty(self._shape, dtype=np.bool_).reshape(shape).shape
        if self.primal is not None:
            self.primal = np.reshape(self.primal, self._shape)

    # -- array attributes --------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def dtype(self):
        return np.result_type(self.primal) if self.primal is not None else np.dtype(np.float64)

    @property
    def device(self) -> str:  # (an ndarray's, numpy 2's: array-API code asks it, scipy's Rotation twins)
        return "cpu"

    @property
    def itemsize(self) -> int:  # (`as_strided(a, strides=(2 * a.itemsize,))`)
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.dtype.itemsize * self.size

    @property
    def is_constant(self) -> bool:
        return self.P is None or self.P.nnz == 0

    def __format__(self, spec: str) -> str:
        """An f-string's field of a traced value: its value's text if known (its repr else), remembered
        (parsing it back is refused: lowered.runtime.parsed)."""
        if self.primal is not None and spec:
            try:
                return text(format(self.primal, spec))
            except (TypeError, ValueError):
                pass
        return text(repr(self))

    def __repr__(self) -> str:
        deps = 0 if self.P is None else self.P.nnz
        value = "" if self.primal is None else f", primal={self.primal!r}"
        return f"Tracer(shape={self.shape}, dependencies={deps}{value})"

    def __getattr__(self, name: str):
        # a constant (no dependencies, primal known) lends the rest of ndarray's API from its primal,
        # so library code that builds arrays with np.zeros and fills them (`.flat`, `.fill`) still runs
        if name.startswith("__") or self.primal is None or not self.is_constant:
            if name in _NDARRAY_NAMES:
                raise NoSparsityMethod(
                    f"sparsity tracers have no ndarray attribute {name!r} (no sparsity rule for it)",
                    where=user_site(2),
                    fix=f"call the numpy function (np.{name}(a, ...)) if it has a rule, or register one")
            if name in _FLOAT_INSIDES:  # (not an AttributeError: statistics' `except AttributeError` would
                raise NoSparsityRule(  # turn it into its own TypeError)
                    f"a traced value's float internals (.{name}()): no sparsity rule follows a number taken "
                    "apart", where=user_site(2), fix="keep the value a number, or treat the function as a primitive")
            raise AttributeError(f"sparsity tracers have no attribute {name!r}")
        return getattr(self.primal, name)

    @property
    def flags(self):
        if self.primal is not None and self.is_constant and isinstance(self.primal, np.ndarray):
            return self.primal.flags
        if self.shape:
            # the layout numpy's array would have, as its index map has it (a view's rows: `a.T` is F-contiguous,
            # owns no data; numpy's `require(a.T, requirements="C")` copies by asking, and a view taken for it lost a
            # write, sp42 W8b)
            return (self._view[1] if self._view is not None else _index_map(self.shape)).flags
        return _FLAGS

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d tracer")
        return (self[i] for i in range(self.shape[0]))

    # -- concrete values: allowed only when known --------------------------------------------------
    def _concrete(self, what: str):
        if self.primal is None:
            raise TracedBranchError(
                f"{what} of a value that depends on the inputs: global sparsity detection has no "
                "primal values to decide it",
                where=user_site(3),
                fix="use mode='local' (the pattern at one point, following the branches taken there), "
                    "or write the branch with np.where so both sides are traced")
        return self.primal

    def __bool__(self) -> bool:
        return bool(self._concrete("a branch (bool)"))

    def __index__(self) -> int:
        return int(np.asarray(self._concrete("an integer index")).item())

    def __int__(self) -> int:
        return int(self._concrete("int()"))

    def __float__(self) -> float:
        if not self.is_constant:
            raise NoSparsityRule(
                "a function converted a value that depends on the inputs to float, which would drop its "
                "dependencies (a C function without a sparsity rule?)",
                where=user_site(2),
                fix="declare the sparsity of the function called on this line: "
                    "`registry.sparsity(spec, fn)` (contexts/rules/sparsity_specs.py; `DENSE` is "
                    "conservative), or code on tracers with `registry.srule(fn)`")
        return float(self._concrete("float()"))

    def __complex__(self) -> complex:
        return complex(self.__float__())

    def __array__(self, dtype=None, copy=None):
        if self.is_constant and self.primal is not None:
            return np.asarray(self.primal, dtype=dtype)
        raise NoSparsityRule(
            "a sparsity tracer was converted to a plain numpy array, which would drop its dependencies",
            where=user_site(2),
            fix="the numpy or C function doing it needs a sparsity spec: `registry.sparsity(spec, fn)` "
                "(contexts/rules/sparsity_specs.py), or code on tracers with `registry.srule(fn)`")

    def __array_wrap__(self, array, context=None, return_scalar=False):
        return array

    def item(self, *args):
        """`a.item()` of one element: a Python float, which holds no dependencies (refused for a traced
        one); `a.item(k)`, `a.item(i, j)`: the element as a 0-d tracer, which keeps them."""
        if args:
            key = args[0] if len(args) == 1 else args
            return self.reshape(-1)[key] if len(args) == 1 and not isinstance(key, tuple) else self[tuple(key)]
        return self.__float__() if self.size == 1 else self._concrete("item()")

    def tolist(self):
        return [t.tolist() for t in self] if self.ndim else self

    # -- numpy protocols -----------------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from .ops import apply_ufunc
        return apply_ufunc(ufunc, method, inputs, kwargs)

    def __array_namespace__(self, api_version=None):
        """numpy's namespace: array-API code (scipy's `array_namespace(x)`) then calls numpy's functions,
        which reach the rules by numpy's protocols (it raised "Tracer is not a supported array type")."""
        return np

    def __array_function__(self, func, types, args, kwargs):
        from .ops import apply_array_function
        return apply_array_function(func, args, kwargs)

    # -- operators -----------------------------------------------------------------------------------
    def __add__(self, o): return NotImplemented if _opts_out(o) else np.add(self, o)
    def __radd__(self, o): return _declined(o) if _opts_out(o) else np.add(o, self)
    def __sub__(self, o): return NotImplemented if _opts_out(o) else np.subtract(self, o)
    def __rsub__(self, o): return _declined(o) if _opts_out(o) else np.subtract(o, self)
    def __mul__(self, o): return NotImplemented if _opts_out(o) else np.multiply(self, o)
    def __rmul__(self, o): return _declined(o) if _opts_out(o) else np.multiply(o, self)
    def __truediv__(self, o): return NotImplemented if _opts_out(o) else np.true_divide(self, o)
    def __rtruediv__(self, o): return _declined(o) if _opts_out(o) else np.true_divide(o, self)
    def __floordiv__(self, o): return NotImplemented if _opts_out(o) else np.floor_divide(self, o)
    def __rfloordiv__(self, o): return _declined(o) if _opts_out(o) else np.floor_divide(o, self)
    def __mod__(self, o): return NotImplemented if _opts_out(o) else np.remainder(self, o)
    def __rmod__(self, o): return _declined(o) if _opts_out(o) else np.remainder(o, self)
    def __pow__(self, o): return NotImplemented if _opts_out(o) else np.power(self, o)
    def __rpow__(self, o): return _declined(o) if _opts_out(o) else np.power(o, self)
    def __matmul__(self, o): return NotImplemented if _opts_out(o) else np.matmul(self, o)
    def __rmatmul__(self, o): return _declined(o) if _opts_out(o) else np.matmul(o, self)
    def __neg__(self): return np.negative(self)
    def __pos__(self): return self.copy()  # (numpy's `+a` is a new array: a write into it reached a, sp42 W8)
    def __abs__(self): return np.absolute(self)
    def __lt__(self, o): return NotImplemented if _opts_out(o) else np.less(self, o)
    def __le__(self, o): return NotImplemented if _opts_out(o) else np.less_equal(self, o)
    def __gt__(self, o): return NotImplemented if _opts_out(o) else np.greater(self, o)
    def __ge__(self, o): return NotImplemented if _opts_out(o) else np.greater_equal(self, o)
    def __eq__(self, o): return NotImplemented if _opts_out(o) else np.equal(self, o)
    def __ne__(self, o): return NotImplemented if _opts_out(o) else np.not_equal(self, o)
    def __round__(self, ndigits=None): return np.round(self, ndigits or 0)
    def __divmod__(self, o): return NotImplemented if _opts_out(o) else np.floor_divide(self, o), np.remainder(self, o)

    def __invert__(self): return np.invert(self)
    def __and__(self, o): return NotImplemented if _opts_out(o) else np.bitwise_and(self, o)
    def __rand__(self, o): return _declined(o) if _opts_out(o) else np.bitwise_and(o, self)
    def __or__(self, o): return NotImplemented if _opts_out(o) else np.bitwise_or(self, o)
    def __ror__(self, o): return _declined(o) if _opts_out(o) else np.bitwise_or(o, self)
    def __xor__(self, o): return NotImplemented if _opts_out(o) else np.bitwise_xor(self, o)
    def __rxor__(self, o): return _declined(o) if _opts_out(o) else np.bitwise_xor(o, self)

    # in place, as ndarray: every name bound to this tracer sees the update
    def _inplace(self, ufunc, o):
        result = ufunc(self, o)
        if not self.shape and self._view is None:
            # a scalar (what indexing and reductions give, numpy scalars in numpy) is immutable:
            # `s *= e` rebinds s, whatever shape the result has, and leaves other names of s alone
            return result
        self[...] = result
        return self

    def __iadd__(self, o): return self._inplace(np.add, o)
    def __isub__(self, o): return self._inplace(np.subtract, o)
    def __imul__(self, o): return self._inplace(np.multiply, o)
    def __itruediv__(self, o): return self._inplace(np.true_divide, o)
    def __ipow__(self, o): return self._inplace(np.power, o)
    def __imod__(self, o): return self._inplace(np.remainder, o)
    def __ifloordiv__(self, o): return self._inplace(np.floor_divide, o)
    def __imatmul__(self, o): return self._inplace(np.matmul, o)

    # -- indexing ------------------------------------------------------------------------------------
    def __getitem__(self, key):
        if _unknown_index(key):  # global mode, indices computed from the inputs (x[np.argsort(x)])
            shape = np.asarray(_index_map(self.shape)[_probe_key(key)]).shape
            return _moves.spread([self], shape)
        key = _concrete_key(key)
        if type(key) is int and len(self._shape) == 1 and self.order < 2:  # the scalar-loop fast path
            n = self._shape[0]
            if not -n <= key < n:
                raise IndexError(f"index {key} is out of bounds for axis 0 with size {n}")
            primal = None if self.primal is None else self.primal[key]
            if self.P is None:
                return Tracer((), None, None, primal, self.order)
            row = key % n
            lo, hi = self.P.indptr[row], self.P.indptr[row + 1]
            P = Pattern(np.array([0, hi - lo]), self.P.indices[lo:hi], self.P.ncols)
            return Tracer((), P, None, primal, self.order)
        if _is_basic(key):
            return self._view_by(lambda a: a[key])  # numpy's basic indexing gives a view
        return _moves.restructure([self], lambda i: i[key])

    def _writable(self) -> None:
        if self._readonly:
            raise ValueError("assignment destination is read-only")  # (numpy's words)

    def __setitem__(self, key, value) -> None:
        self._writable()
        if _unknown_index(key):
            # the elements written are unknown: each may keep its value or take any of value's
            np.asarray(_index_map(self.shape)[_probe_key(key)])  # numpy's checks of the key
            self.store_anywhere(value)
            return
        key = _concrete_key(key)
        if self._view is not None and not self._view[3] and self._shows_elements_twice():
            # a view showing one element of its base at several places (`sliding_window_view`, `as_strided`): the
            # store is one into the base's elements (written as the view's, the other places of an element kept
            # their old dependencies, and one of them won: missed nonzeros, sp42 W6)
            base, rows = self._view[0], self._view[1]
            at = np.asarray(rows[key]).reshape(-1)
            spread = value if not _shape(value) and not isinstance(value, Tracer) else np.broadcast_to(value, _shape(rows[key]))
            base[np.unravel_index(at, base.shape)] = np.reshape(spread, -1) if _shape(spread) else spread
            return
        targets = np.asarray(_index_map(self.shape)[key])
        rows = np.arange(self.size, dtype=np.int64)
        vshape = _shape(value)
        if isinstance(value, Tracer) and value.P is not None:
            src = np.broadcast_to(_index_map(vshape), targets.shape).ravel() + self.size
            rows[targets.ravel()] = src
            n = value.P.ncols
            self.P = Pattern.vstack([_moves._P(self, n), value.P]).gather(rows)
            self.order = max(self.order, value.order)
            if self.order == 2:
                self.H = Pattern.vstack([_moves._H(self, n), _moves._H(value, n)]).gather(rows)
        elif self.P is not None:
            rows[targets.ravel()] = -1
            self.P = self.P.gather(rows)
            self.H = None if self.H is None else self.H.gather(rows)
        vprimal = _primal(value)
        if self.primal is not None and vprimal is not None:
            primal = np.array(self.primal, copy=True)
            primal[key] = vprimal
            self.primal = primal
        else:
            self.primal = None

    def _shows_elements_twice(self) -> bool:
        if self._overlaps is None:
            flat = self._view[1].reshape(-1)
            self._overlaps = bool(np.unique(flat).size < flat.size)
        return self._overlaps

    def store_anywhere(self, value) -> None:
        """A store of value at positions that are not known (global mode: `t[np.argsort(x)] = v`,
        `np.place(t, x > 0, v)`): each element keeps its dependencies and gains all of value's."""
        self._writable()
        if isinstance(value, Tracer) and value.P is not None:
            spread = _moves.spread([value], self.shape)
            n = value.P.ncols
            self.P = _moves._P(self, n).union(spread.P)
            self.order = max(self.order, value.order)
            if self.order == 2:
                self.H = _moves._H(self, n).union(_moves._H(spread, n))
        self.primal = None

    def put(self, ind, v, mode="raise") -> None:
        """`a.put(ind, v, mode)`: the store it amounts to (flat positions, v repeated as needed)."""
        if isinstance(ind, Tracer) and ind.primal is None:
            self.store_anywhere(v)
            return
        from contexts.rules.numpy.inplace import as_store
        _, index, values = as_store(np.put, (self, ind, v, mode), {})
        self[index] = values

    # -- methods (as ndarray) -------------------------------------------------------------------------
    def reshape(self, *shape, order="C"):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return self._view_by(lambda i: i.reshape(shape, order=order))  # a view where numpy's is

    def ravel(self, order="C"):
        return self._view_by(lambda i: i.ravel(order))

    def flatten(self, order="C"):
        return _moves.restructure([self], lambda i: i.flatten(order))  # always a copy

    def transpose(self, *axes):
        axes = axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes
        return self._view_by(lambda i: i.transpose(*axes))

    @property
    def T(self):
        return self.transpose()

    @property
    def real(self):
        return self._view_by(np.real, partial=True)

    @real.setter
    def real(self, value):
        # `z.real = v`, `z.real *= c`: a write through the real part's view, as numpy's (an AttributeError
        # before, sp43 C3)
        self.real[...] = value

    @property
    def imag(self):
        """The imaginary part: a view with the value's dependencies (tracers do not keep the parts'
        apart: for a real value a superset), a constant zero where the value is known to be real."""
        if self.primal is not None and not np.iscomplexobj(self.primal):
            return Tracer(self._shape, None, None, np.imag(self.primal), self.order)
        return self._view_by(np.imag, partial=True, index_op=_same)

    @imag.setter
    def imag(self, value):
        if self.primal is not None and not np.iscomplexobj(self.primal):  # (numpy's words for a real array's)
            raise TypeError("array does not have imaginary part to set")
        self.imag[...] = value

    @property
    def mT(self):
        return self._view_by(lambda i: np.matrix_transpose(i))

    def view(self, dtype=None, type=None):
        """`a.view()`: a view of the same elements; a view as another dtype reinterprets bytes (refused)."""
        if type is not None or (dtype is not None and np.dtype(dtype) != self.dtype):
            raise NoSparsityMethod(f"a view of a traced value as {dtype or type} reinterprets its bytes",
                                   where=user_site(2), fix="convert with .astype(...) instead")
        return self._view_by(lambda i: i.view())

    def squeeze(self, axis=None):
        return self._view_by(lambda i: i.squeeze(axis))

    def swapaxes(self, a, b):
        return self._view_by(lambda i: i.swapaxes(a, b))

    def diagonal(self, offset=0, axis1=0, axis2=1):
        # numpy's is a read-only view: it follows a later change of its base, and refuses writes
        t = self._view_by(lambda i: i.diagonal(offset, axis1, axis2))
        t._readonly = t._readonly or t._view is not None
        return t

    def repeat(self, repeats, axis=None):
        return _moves.restructure([self], lambda i: i.repeat(repeats, axis))

    def take(self, indices, axis=None, out=None, mode="raise"):
        if out is not None:
            raise NoSparsityMethod("a.take(..., out=...) of a traced value", where=user_site(2),
                                   fix="assign the result: out[...] = a.take(indices, axis)")
        if _unknown_index(indices):
            return _moves.spread([self], np.take(_index_map(self.shape), _probe_key(indices), axis,
                                                 mode=mode).shape)
        return _moves.restructure([self], lambda i: i.take(_concrete_key(indices), axis, mode=mode))

    def compress(self, condition, axis=None, out=None):
        if out is not None:
            raise NoSparsityMethod("a.compress(..., out=...) of a traced value", where=user_site(2),
                                   fix="assign the result: out[...] = a.compress(condition, axis)")
        return _moves.restructure([self], lambda i: i.compress(_concrete_key(condition), axis))

    def copy(self, order="C"):
        return Tracer(self.shape, self.P, self.H, None if self.primal is None else np.copy(self.primal),
                      self.order)

    def astype(self, dtype, **kwargs):
        if kwargs.get("copy", True) is False and np.dtype(dtype) == self.dtype:
            return self  # (numpy's: the array itself, a write through it is one into self; sp42 W5)
        primal = None if self.primal is None else np.asarray(self.primal).astype(dtype, **kwargs)
        if np.issubdtype(np.dtype(dtype), np.integer) or np.dtype(dtype) == bool:
            return Tracer(self.shape, None, None, primal, 0)
        return Tracer(self.shape, self.P, self.H, primal, self.order)

    def conj(self):
        # (a real array's is itself, as numpy's; a complex one's a new array of the conjugates: itself, its
        # imaginary parts kept their sign and a write into it reached the original, sp42 W7)
        # (global mode does not know a traced value's dtype: a new array, as for a complex one)
        return self if self.primal is not None and self.dtype.kind != "c" else np.conjugate(self)

    conjugate = conj

    # the reductions are numpy's functions (their rules take dtype, out, initial, where as numpy does)
    def sum(self, *args, **kw): return np.sum(self, *args, **kw)
    def mean(self, *args, **kw): return np.mean(self, *args, **kw)
    def prod(self, *args, **kw): return np.prod(self, *args, **kw)
    def max(self, *args, **kw): return np.max(self, *args, **kw)
    def min(self, *args, **kw): return np.min(self, *args, **kw)
    def std(self, *args, **kw): return np.std(self, *args, **kw)
    def var(self, *args, **kw): return np.var(self, *args, **kw)

    def any(self, axis=None, out=None, keepdims=False, **kw):
        return _moves._nondiff_reduce(self, axis, keepdims, np.any)

    def all(self, axis=None, out=None, keepdims=False, **kw):
        return _moves._nondiff_reduce(self, axis, keepdims, np.all)

    def argmax(self, axis=None, **kw):
        return np.argmax(self, axis=axis, **kw)

    def argmin(self, axis=None, **kw):
        return np.argmin(self, axis=axis, **kw)

    def argsort(self, axis=-1, kind=None, order=None, **kw):
        return np.argsort(self, axis=axis, kind=kind)

    def argpartition(self, kth, axis=-1, kind="introselect", order=None):
        return np.argpartition(self, kth, axis=axis)

    # in place, as ndarray
    def sort(self, axis=-1, kind=None, order=None, **kw) -> None:
        self[...] = np.sort(self, axis=axis, kind=kind)

    def partition(self, kth, axis=-1, kind="introselect", order=None) -> None:
        self[...] = np.partition(self, kth, axis=axis)

    def fill(self, value) -> None:
        self[...] = value

    # (an `out=` written, as ndarray's methods write it: dropped, `a.cumsum(out=a)` missed its nonzeros, sp42 W1)
    def cumsum(self, axis=None, dtype=None, out=None):
        from .ops import cumulative
        return _written(np.cumsum, cumulative(self, axis, True, np.cumsum), out)

    def cumprod(self, axis=None, dtype=None, out=None):
        from .ops import cumulative
        return _written(np.cumprod, cumulative(self, axis, False, np.cumprod), out)

    def dot(self, other, out=None):
        return _written(np.dot, np.dot(self, other), out)

    def clip(self, a_min=None, a_max=None, out=None, **kw):
        return _written(np.clip, np.clip(self, a_min, a_max), out)

    def round(self, decimals=0, out=None):
        return _written(np.round, _moves.elementwise(np.round, _moves.NONDIFF, (self,), {"decimals": decimals}), out)

    def nonzero(self):
        return np.nonzero(self._concrete("nonzero()"))


def _written(fn, result, out):
    """A method's result written into its `out=` (a tracer, or a plain array where the result is a constant's)."""
    if out is None:
        return result
    from .ops import _write_one
    target = out[0] if isinstance(out, tuple) else out
    _write_one(fn, target, result, True, user_site(3))
    return target


class IndexTracer(Tracer):
    """Integer indices computed from traced values in global mode (np.argsort(x), np.argmax(x)): no
    dependencies, values unknown. Indexing with them is conservative: an element picked may be any
    element of the array indexed; anything needing their values raises `TracedBranchError`."""

    __slots__ = ()

    @property
    def dtype(self):
        return np.dtype(np.intp)


def _unknown_index(key) -> bool:
    if isinstance(key, IndexTracer):
        return key.primal is None
    if isinstance(key, (tuple, list)):
        return any(_unknown_index(k) for k in key)
    return False


def _probe_key(key):
    """key with every unknown index replaced by zeros of its shape (for the shape of the result)."""
    if isinstance(key, IndexTracer) and key.primal is None:
        return np.zeros(key.shape, np.intp)
    if isinstance(key, tuple):
        return tuple(_probe_key(k) for k in key)
    if isinstance(key, list) and _unknown_index(key):
        return [_probe_key(k) for k in key]
    return _concrete_key(key)


def _concrete_key(key):
    """An index with every tracer in it replaced by its (known) primal."""
    if isinstance(key, Tracer):
        return key._concrete("indexing with a value")
    if isinstance(key, tuple):
        return tuple(_concrete_key(k) for k in key)
    if isinstance(key, list) and any(isinstance(k, Tracer) for k in key):
        return [_concrete_key(k) for k in key]
    return key


from . import moves as _moves  # noqa: E402  (moves builds Tracers: imported last to break the cycle)
