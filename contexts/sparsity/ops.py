"""Tracer operations built from the three moves, and the numpy protocol entry points.

`apply_ufunc` / `apply_array_function` are what `Tracer.__array_ufunc__` / `__array_function__` call: they
look the function up in the shared registry (its `srule` or declared spec, `interpret.sparsity_rule`),
fall back to the function's Python implementation (run under the active sparsity context), then to what
the rule's `kind` implies.
"""

from __future__ import annotations

import functools
import inspect
import math
import types
from typing import Any, Callable

import numpy as np
import scipy.sparse as sp

from contexts.rules.registry import registry
from contexts.rules.sparsity_specs import LINEAR, NONDIFF, NONLINEAR

from .pattern import Pattern
from .moves import Elementwise, _H, _known_primals, _ncols, as_tracer, elementwise, reduce, restructure
from .tracer import NoSparsityRule, Tracer, _index_map, _shape, user_site

__all__ = ["apply_ufunc", "apply_array_function", "matmul", "cumulative", "dense", "derive",
           "has_tracer", "probe_shape", "out_as_keyword", "write_out"]


def has_tracer(args, kwargs=None) -> bool:
    """Whether a tracer occurs in args/kwargs (looking one level into lists and tuples)."""
    for a in (*args, *(kwargs or {}).values()):
        if isinstance(a, Tracer):
            return True
        if isinstance(a, (list, tuple)) and any(isinstance(b, Tracer) or
                                                (isinstance(b, (list, tuple)) and has_tracer(b))
                                                for b in a):
            return True
    return False


def _substitute(x: Any, fill: Callable) -> Any:
    if isinstance(x, Tracer):
        return x.primal if x.primal is not None else fill(x.shape)
    if isinstance(x, (list, tuple)):
        return type(x)(_substitute(v, fill) for v in x)
    return x


def _probe_fill(shape: tuple) -> np.ndarray:
    """A stand-in value for a tracer whose value is unknown: ones, and for matrices ones plus a large
    diagonal (nonsingular, symmetric positive definite: what inv, solve, cholesky, eigh need)."""
    value = np.ones(shape)
    if len(shape) >= 2:
        value = value + np.eye(shape[-2], shape[-1]) * max(shape[-2:])
    return value


def probe_value(fn: Callable, args: tuple, kwargs: dict) -> Any:
    """fn's result on the known primals (stand-ins where they are unknown), for its shape(s)."""
    sub = _substitute(args, _probe_fill)
    return fn(*sub, **{k: _substitute(v, _probe_fill) for k, v in kwargs.items()})


def probe_shape(fn: Callable, args: tuple, kwargs: dict) -> tuple:
    """Shape of fn's result, from a run on the known primals (stand-ins where they are unknown)."""
    return np.shape(probe_value(fn, args, kwargs))


def _tracers_in(x: Any) -> list[Tracer]:
    if isinstance(x, Tracer):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _tracers_in(v)]
    if isinstance(x, dict):
        return [t for v in x.values() for t in _tracers_in(v)]
    return []


def dense(fn: Callable, args: tuple, kwargs: dict, linear: bool = False):
    """Conservative: every output element depends on every input element of every traced argument.
    A function with several outputs (a tuple: np.linalg.svd, eigh, multi-output gufuncs) gets a tuple
    (of the same type) of such tracers.

    Declare it for a C function the detector does not know: `registry.sparsity(DENSE, my_c_fn)` (the
    spec of contexts/rules/sparsity_specs.py that calls this).
    """
    tracers = _tracers_in((args, kwargs))
    primals = _substitute(args, lambda s: None)
    known = all(t.primal is not None for t in tracers)
    y = fn(*primals, **{k: _substitute(v, lambda s: None) for k, v in kwargs.items()}) if known \
        else probe_value(fn, args, kwargs)
    n = _ncols(tracers)
    order = max((t.order for t in tracers), default=0)
    P = H = None
    if n is not None:
        P = Pattern.vstack([t.P for t in tracers if t.P is not None]).any_rows()
        if order == 2:
            H = Pattern.vstack([_H(t, n) for t in tracers]).any_rows()
            if not linear:
                H = H.union(P.cross(P))

    def one(value):
        shape = np.shape(value)
        if P is None:
            return Tracer(shape, None, None, value if known else None, order)
        zeros = np.zeros(math.prod(shape), np.int64)
        return Tracer(shape, P.gather(zeros), None if H is None else H.gather(zeros),
                      value if known else None, order)

    if isinstance(y, tuple):
        items = [one(v) for v in y]
        return type(y)(*items) if hasattr(y, "_fields") else tuple(items)
    return one(y)


def derive(rule, fn: Callable, args: tuple, kwargs: dict):
    """The pattern that a rule's `kind` implies, or NotImplemented when the kind says nothing."""
    kind = getattr(rule, "kind", None)
    if kind == "elementwise":
        partials = rule.meta.get("partials")
        first = None if partials is None else tuple(p is not None for p in partials)
        return elementwise(fn, Elementwise(first=first), args, kwargs)
    if kind == "nondiff":
        primals = _known_primals(args)
        if primals is not None:
            return fn(*primals, **kwargs)
        return Tracer(probe_shape(fn, args, kwargs), None, None, None, 0)
    if kind == "along-axis" and "axis" in kwargs:
        primals = _known_primals(args)
        return along_axis(args[0], kwargs["axis"], False, None if primals is None else fn(*primals, **kwargs))
    if kind in ("linear", "reduction", "bilinear", "multilinear", "along-axis"):
        return dense(fn, args, kwargs, linear=(kind == "linear"))
    return NotImplemented


def _active_context():
    try:
        import overdub
        from .context import SparsityContext
    except ImportError:  # the core is not importable: run implementations directly
        return None
    ctx = overdub.current()
    return ctx if isinstance(ctx, SparsityContext) else None


def _no_rule(fn: Callable, e: Exception | None = None) -> NoSparsityRule:
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", repr(fn))
    module = getattr(fn, "__module__", None) or ""
    return NoSparsityRule(
        f"no sparsity rule for {module + '.' if module else ''}{name}, reached with traced inputs"
        + (f" ({type(e).__name__}: {e})" if e is not None else ""),
        where=user_site(3),
        fix=f"declare one beside its other rules: `registry.sparsity(spec, {name})` with a spec of "
            "contexts/rules/sparsity_specs.py (`DENSE` is conservative), or code on tracers with "
            f"`@registry.srule({name})`")


# -- numpy protocols ------------------------------------------------------------------------------------

_LINEAR_REDUCE = {np.add: True, np.subtract: True, np.multiply: "prod", np.maximum: "max", np.minimum: "min",
                  np.fmax: "max", np.fmin: "min"}


_OVERWRITING_GUFUNCS = ("qr_r_raw",)  # numpy.linalg kernels that write their result into their input too


# the ufuncs of two outputs: how each depends on the inputs (a ufunc not listed: conservatively, each
# elementwise in every input)
_OUTPUT_SPECS = {np.modf: (LINEAR, NONDIFF), np.frexp: (NONLINEAR, NONDIFF), np.divmod: (NONDIFF, LINEAR)}


def _output(ufunc, k: int, *args, **kwargs):
    return ufunc(*args, **kwargs)[k]


def _outputs(ufunc, inputs: tuple, kwargs: dict) -> tuple:
    """A ufunc of several outputs (modf, frexp, divmod): a tuple of tracers, one per output."""
    specs = _OUTPUT_SPECS.get(ufunc, (Elementwise(),) * ufunc.nout)
    return tuple(elementwise(functools.partial(_output, ufunc, k), spec, inputs, kwargs)
                 for k, spec in enumerate(specs))


def _reduce_kwargs(kwargs: dict) -> tuple[Any, dict]:
    """`ufunc.reduce`'s where= (its value: None when unknown) and the rest its primal needs (initial,
    dtype): a primal computed without them would be another number, and a branch on it wrong."""
    rest = {k: v for k, v in kwargs.items() if k in ("dtype", "initial")}
    where = kwargs.get("where", True)
    if isinstance(where, Tracer):
        where = where.primal
    if where is not None and where is not True:
        rest["where"] = where
    return where, rest


def apply_ufunc(ufunc, method: str, inputs: tuple, kwargs: dict):
    out = kwargs.pop("out", None)
    if out is Ellipsis or (isinstance(out, tuple) and len(out) == 1 and out[0] is Ellipsis):
        out = None  # numpy 2: out=... asks for an array result
    where = True if out is None or method != "__call__" else kwargs.pop("where", True)
    if method == "__call__":
        srule = _interpret.sparsity_rule(registry.get(ufunc), ufunc)
        if ufunc is np.matmul:
            result = matmul(*inputs)
        elif ufunc.signature is not None and srule is None:
            result = dense(ufunc, inputs, kwargs)  # a gufunc (linalg kernels): not elementwise
            if ufunc.__name__.startswith(_OVERWRITING_GUFUNCS) and isinstance(inputs[0], Tracer):
                # it also overwrites its first input (np.linalg.qr's Householder factorisation in place)
                inputs[0][...] = dense(np.positive, (inputs[0],), {})
        elif srule is not None:
            result = srule(*inputs, **kwargs)
        elif ufunc.nout > 1:
            result = _outputs(ufunc, inputs, kwargs)
        else:  # any ufunc is elementwise: conservative in every argument
            result = elementwise(ufunc, Elementwise(), inputs, kwargs)
    elif method == "reduce":
        axis = kwargs.get("axis", 0)
        keepdims = kwargs.get("keepdims", False)
        mask, rest = _reduce_kwargs(kwargs)
        result = reduce(inputs[0], axis, keepdims, _LINEAR_REDUCE.get(ufunc, False),
                        None if mask is None else
                        lambda p, axis, keepdims: ufunc.reduce(p, axis=axis, keepdims=keepdims, **rest),
                        where=mask)
    elif method == "accumulate":
        result = cumulative(inputs[0], kwargs.get("axis", 0), ufunc in (np.add, np.subtract),
                            lambda p, axis: ufunc.accumulate(p, axis=axis))
    elif method == "outer":
        a, b = inputs
        a2 = _reshape(a, _shape(a) + (1,) * len(_shape(b)))
        result = apply_ufunc(ufunc, "__call__", (a2, b), kwargs)
    else:
        raise _no_rule(getattr(ufunc, method))
    if out is not None:
        return write_out(ufunc, result, out, where, user_site(3))
    return result


def write_out(fn: Callable, result: Any, out: Any, where: Any, site: str):
    """`fn(..., out=o)` computed as `result` without it: result written into o where `where=` allows, o
    returned, as numpy does. Several outputs (`np.divmod(a, b, out=(q, r))`) each into its own array (a
    None among them: that output returned as computed). A plain array cannot take a traced value
    (refused); a constant one it takes."""
    outs = out if isinstance(out, tuple) else (out,)
    results = result if len(outs) > 1 else (result,)
    for target, value in zip(outs, results):
        if target is not None:
            _write_one(fn, target, value, where, site)
    if len(outs) > 1:
        return tuple(r if o is None else o for o, r in zip(outs, results))
    return result if outs[0] is None else outs[0]


class PlainArrayWrite(NoSparsityRule):
    """Traced values written into a plain array (`out=`, an in-place operator): refused, never derived
    without the write (the array kept its values: their dependencies dropped out of the pattern)."""


def _write_one(fn: Callable, target: Any, value: Any, where: Any, site: str) -> None:
    if isinstance(target, Tracer):
        target[...] = value if where is True else where_(where, value, target)
        return
    if isinstance(value, Tracer):
        if not (value.is_constant and value.primal is not None):
            name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", repr(fn))
            raise PlainArrayWrite(f"{name}(..., out=<ndarray>) writes traced values into a plain array",
                                 where=site, fix="allocate the output with np.zeros/np.empty inside the traced "
                                                 "function (they give tracers), or drop out=")
        value = value.primal
    if where is True:
        target[...] = value
    else:
        np.copyto(target, value, where=as_tracer(where)._concrete("out= with where="))


# positional parameter names of numpy's functions, by function (for an `out` given by position)
_POSITIONAL: dict = {}


def _positional_names(fn: Callable) -> list:
    try:
        return _POSITIONAL[fn]
    except KeyError:
        names = _POSITIONAL[fn] = _signature_names(fn)
        return names
    except TypeError:  # (an unhashable callable)
        return _signature_names(fn)


def _signature_names(fn: Callable) -> list:
    for target in (getattr(fn, "_implementation", None), fn):  # (a C implementation: the dispatcher's)
        try:
            params = inspect.signature(target).parameters.values()
        except (TypeError, ValueError):
            continue
        return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return []


def split_out(fn: Callable, kwargs: dict) -> tuple[dict, Any, Any]:
    """(kwargs without out=, the out, the mask of the write): a ufunc's where= masks the write into out,
    any other function's (np.sum's) is its own argument."""
    mask = isinstance(fn, np.ufunc) or isinstance(getattr(fn, "__self__", None), np.ufunc)
    rest = {k: v for k, v in kwargs.items() if k != "out" and not (mask and k == "where")}
    return rest, kwargs["out"], kwargs.get("where", True) if mask else True


def by_name(fn: Callable, args: tuple, start: int) -> dict:
    """Positional arguments `args` of fn, from parameter `start` on, by their names (refused where its
    signature does not name them: a C function's)."""
    names = _positional_names(fn)[start:]
    if len(args) > len(names):
        name = getattr(fn, "__name__", repr(fn))
        raise NoSparsityRule(f"{name}() given {len(args)} more positional arguments than its signature names "
                             f"({names})", where=user_site(4), fix=f"pass {name}'s arguments by keyword")
    return dict(zip(names, args))


def out_as_keyword(fn: Callable, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """An output array given by position (`np.add(a, b, o)`, `np.divmod(a, b, q, r)`, `np.sum(a, 0, None,
    o)`) moved to `out=`, as numpy's protocols do, so that every rule sees one form (a rule taking it for
    an input would drop the write). Arguments after it are passed by name."""
    if "out" in kwargs:
        return args, kwargs
    if isinstance(fn, np.ufunc):
        if len(args) > fn.nin:
            return args[:fn.nin], {**kwargs, "out": tuple(args[fn.nin:])}
        return args, kwargs
    if len(args) < 2 or not hasattr(fn, "_implementation"):  # (numpy's functions only)
        return args, kwargs
    names = _positional_names(fn)
    pos = names.index("out") if "out" in names else -1
    if not 0 <= pos < len(args):
        return args, kwargs
    return args[:pos], {**kwargs, **dict(zip(names[pos:], args[pos:]))}


def apply_array_function(func, args: tuple, kwargs: dict):
    rule = registry.get(func)
    srule = _interpret.sparsity_rule(rule, func)
    if srule is not None:
        args, kwargs = out_as_keyword(func, args, kwargs)
        if kwargs.get("out") is not None:
            rest, out, where = split_out(func, kwargs)
            return write_out(func, srule(*args, **rest), out, where, user_site(3))
        return srule(*args, **kwargs)
    impl = getattr(func, "_implementation", None)
    if isinstance(impl, types.FunctionType):
        ctx = _active_context()
        return ctx.recurse(impl, *args, **kwargs) if ctx is not None else impl(*args, **kwargs)
    if rule is not None:
        result = derive(rule, func, args, kwargs)
        if result is not NotImplemented:
            return result
    raise _no_rule(func)


# -- composite operations ---------------------------------------------------------------------------------


def _reshape(x, shape):
    return x.reshape(shape) if isinstance(x, Tracer) else np.reshape(x, shape)


def matmul(a, b):
    """a @ b as the broadcast product summed over the contracted axis (structural zeros of constant
    operands are honoured by `multiply`)."""
    a, b = (v.toarray() if sp.issparse(v) else v for v in (a, b))  # (a constant scipy.sparse operand)
    sa, sb = _shape(a), _shape(b)
    if not sa or not sb:
        return np.multiply(a, b)
    a2 = _reshape(a, (1,) + sa) if len(sa) == 1 else a
    b2 = _reshape(b, sb + (1,)) if len(sb) == 1 else b
    sa2, sb2 = _shape(a2), _shape(b2)
    prod = np.multiply(_reshape(a2, sa2 + (1,)), _reshape(b2, sb2[:-2] + (1,) + sb2[-2:]))
    out = reduce(prod, -2, False, True, np.sum)
    if len(sa) == 1:
        out = out.squeeze(-2)
    if len(sb) == 1:
        out = out.squeeze(-1)
    primals = _known_primals((a, b))
    out.primal = None if primals is None else np.matmul(*primals)
    return out


def cumulative(t, axis, linear: bool, primal_fn: Callable = None) -> Tracer:
    """Running reductions (cumsum, cumprod): element k along axis depends on elements 0..k."""
    t = as_tracer(t)
    if axis is None or t.ndim == 0:  # numpy: a scalar's running sum has shape (1,)
        t, axis = t.reshape(-1).copy(), 0
    axis = axis % t.ndim
    moved = np.moveaxis(_index_map(t.shape), axis, -1)
    m = moved.shape[-1]
    k = np.arange(m)
    lower_out, lower_src = np.nonzero(k[:, None] >= k[None, :])          # (out position, src position)
    lead = moved.reshape(-1, m)
    out_rows = lead[:, lower_out].ravel()
    src_rows = lead[:, lower_src].ravel()
    y = None
    if t.primal is not None:
        y = primal_fn(t.primal, axis=axis) if primal_fn else np.cumsum(t.primal, axis=axis)
    if t.P is None:
        return Tracer(t.shape, None, None, y, t.order)
    P = t.P.combine(out_rows, src_rows, t.size)
    H = None
    if t.order == 2:
        H = _H(t, t.P.ncols).combine(out_rows, src_rows, t.size)
        if not linear:
            H = H.union(P.cross(P))
    return Tracer(t.shape, P, H, y, t.order)


def take_along(t, indices, axis) -> Tracer:
    return restructure([t], lambda i: np.take_along_axis(i, indices, axis))


def along_axis(t, axis, linear, primal: Any = None) -> Tracer:
    """Every element depends on every element of its line along axis (sort, softmax, ...)."""
    t = as_tracer(t)  # axis None: every element depends on every element (same shape)
    r = reduce(t, axis, True, linear, lambda p, axis, keepdims: np.sum(p, axis, keepdims=keepdims))
    out = restructure([r], lambda i: np.broadcast_to(i, t.shape))
    out.primal = primal
    return out


def concatenate(arrays, axis=0, **kw) -> Tracer:
    arrays = list(arrays)
    if axis is None:
        arrays, axis = [np.ravel(a) if not isinstance(a, Tracer) else a.ravel() for a in arrays], 0
    return restructure(arrays, lambda *xs: np.concatenate(xs, axis=axis))


def stack(arrays, axis=0, **kw) -> Tracer:
    return restructure(list(arrays), lambda *xs: np.stack(xs, axis=axis))


def array(obj, dtype=None, *, copy=True, ndmin=0, **kw):
    """np.array / np.asarray of tracers, or of nested lists holding tracers. (`copy` may be numpy's
    `_CopyMode`, as array-api-compat passes it: `IF_NEEDED` is asarray's; its truth value raises.)
    ndmin: ones prepended to the shape (np.block's `array(a, ndmin=n, copy=None)`)."""
    order = kw.get("order")
    if isinstance(obj, Tracer) and order not in (None, "K", "A") and not (copy is True or (
            getattr(np, "_CopyMode", None) is not None and copy is np._CopyMode.ALWAYS)) and (
            dtype is None or np.dtype(dtype) == obj.dtype):
        # (`np.array(a, order="F", copy=None)`, numpy's `require`: a view where numpy's is one, as it decides for
        # the index map; taken for one always, a write into numpy's copy reached a: sp42 W8b)
        result = obj._view_by(lambda i: np.array(i, order=order, copy=None))
    else:
        result = _array(obj, dtype, copy)
    missing = ndmin - len(_shape(result))
    if missing > 0:
        return _reshape(result, (1,) * missing + _shape(result))
    return result


def _array(obj, dtype, copy):
    mode = getattr(np, "_CopyMode", None)
    if mode is not None and isinstance(copy, mode):
        copy = copy is mode.ALWAYS
    if isinstance(obj, Tracer):
        if dtype is not None and obj.primal is not None and np.asarray(obj.primal).dtype != np.dtype(dtype):
            return obj.astype(dtype)  # (np.vectorize's object outputs made float: `asanyarray(outputs, "d")`)
        return obj.copy() if copy else obj
    if isinstance(obj, (list, tuple)) and has_tracer((obj,)):
        return stack([array(o, copy=False) for o in obj])
    return np.array(obj, dtype=dtype) if copy else np.asarray(obj, dtype=dtype)


def _select_where(primals, constant, shape):
    cond = primals[0]
    if cond is None:
        return None
    cond = np.broadcast_to(np.asarray(cond, bool), shape)
    return [None, cond, ~cond]


WHERE = Elementwise(first=(False, True, True), second="none", select=_select_where)


def where(cond, x=None, y=None):
    """np.where(cond, x, y); np.where(cond) alone is np.nonzero (needs the values)."""
    if x is None and y is None:
        return np.nonzero(as_tracer(cond)._concrete("np.where(condition)"))
    return elementwise(np.where, WHERE, (cond, x, y))


where_ = where  # (for the functions here whose `where` is an argument)


def select(condlist, choicelist, default=0):
    """np.select as the np.where's it amounts to, the first true condition's choice winning (numpy's own code
    asks `cond.dtype == bool` of traced conditions, which a tracer does not answer so)."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    out = default
    for cond, choice in zip(reversed(condlist), reversed(choicelist)):
        out = where(cond, choice, out)
    return out


def _select_clip(primals, constant, shape):
    a, lo, hi = primals
    if a is None:
        return None
    low = np.zeros(shape, bool) if lo is None else np.broadcast_to(a < lo, shape)
    high = np.zeros(shape, bool) if hi is None else np.broadcast_to(a > hi, shape)
    return [~(low | high), low, high]


CLIP = Elementwise(second="none", select=_select_clip)


def clip(a, a_min=None, a_max=None, **kw):
    lo = -np.inf if a_min is None else a_min
    hi = np.inf if a_max is None else a_max
    return elementwise(np.clip, CLIP, (a, lo, hi))


def diff(a, n=1, axis=-1, prepend=None, append=None, **kw):
    a = as_tracer(a)
    axis = axis % a.ndim
    if prepend is not None or append is not None:  # numpy concatenates them first (a scalar as one slice)
        parts = []
        for extra in (prepend, a, append):
            if extra is None:
                continue
            if extra is not a and np.ndim(extra) == 0:
                extra = np.broadcast_to(extra, a.shape[:axis] + (1,) + a.shape[axis + 1:])
            parts.append(extra)
        a = concatenate(parts, axis=axis)
    for _ in range(n):
        hi = tuple(slice(1, None) if d == axis else slice(None) for d in range(a.ndim))
        lo = tuple(slice(None, -1) if d == axis else slice(None) for d in range(a.ndim))
        a = a[hi] - a[lo]
    return a


def pad(a, pad_width, mode="constant", **kw):
    if mode not in ("constant", "edge", "reflect", "symmetric", "wrap", "empty"):
        return dense(np.pad, (a, pad_width), {"mode": mode, **kw}, linear=True)
    if mode in ("constant", "empty"):
        return restructure([a], lambda i: np.pad(i, pad_width, constant_values=-1),
                           lambda p: np.pad(p, pad_width, mode, **kw))
    if kw.get("reflect_type") == "odd":
        # 2 * edge - mirror image, which numpy computes axis by axis (a later axis reflects values an earlier
        # one built from several entries) and, for a pad wider than the array, again from what it padded: each
        # padded axis's lines taken whole (a superset; the mirror and the edge alone missed entries, gen24 W8)
        t = as_tracer(a)
        widths = np.broadcast_to(np.asarray(pad_width, dtype=np.intp), (t.ndim, 2))  # (numpy's reading of it)
        out = t
        for axis in range(t.ndim):
            if widths[axis].any():
                one = [(0, 0)] * t.ndim
                one[axis] = tuple(int(w) for w in widths[axis])
                edged = pad(out, one, "edge")
                padded = np.ones(edged.shape, dtype=bool)  # (the interior keeps its own elements)
                padded[tuple(slice(b, n - e) for (b, e), n in zip(one, edged.shape))] = False
                out = where(padded, along_axis(edged, axis, True), edged)
        primals = _known_primals((a,))
        out.primal = None if primals is None else np.pad(primals[0], pad_width, mode, **kw)
        return out
    return restructure([a], lambda i: np.pad(i, pad_width, mode, **kw))


def _like(fill):
    def like(a, dtype=None, *args, shape=None, **kw):
        shape = _shape(a) if shape is None else shape
        value = fill(shape, *args)
        return Tracer(np.shape(value), None, None, value.astype(dtype) if dtype else value, 0)
    return like


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kw):
    """np.full_like: a constant array, or where fill_value is traced, its value broadcast (a copy)."""
    shape = _shape(a) if shape is None else shape
    if isinstance(fill_value, Tracer):
        return restructure([fill_value], lambda i: np.array(np.broadcast_to(i, shape)))
    return _like(np.full)(a, dtype, fill_value, shape=shape)


from . import interpret as _interpret  # noqa: E402  (it applies specs with these operations: imported last)
