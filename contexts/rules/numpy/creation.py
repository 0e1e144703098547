"""Array creation: constants with respect to their arguments (sizes, seeds, dtypes), except `np.arange`'s
values, `start + i * step`, which are differentiable in start and step (its stop only sets the count).

Random draws with parameters (`np.random.normal(loc, scale)`, `np.random.uniform(low, high)`) have no
rule: with differentiated parameters they are refused (a sample's derivative in its parameters is a
choice — pathwise, score function — that the code does not say); with constant ones they are constants.
"""

import gc

import numpy as np

from overdub.errors import OverdubError

from ..cotangents import Refused
from ..registry import _POSITIONAL_NAMES as POSITIONAL_NAMES, NoRuleError, registry
from ..sparsity_specs import CONSTRUCTOR, INDICES, Custom
from ..ties import plain as plain_value, step_jump
from ._util import is_dual, match_primal

registry.nondifferentiable(
    np.zeros, np.ones, np.empty, np.eye, np.identity, np.tri, np.indices,
    np.random.default_rng, np.random.seed, np.random.rand, np.random.randn, np.random.random,
    np.isclose, np.allclose, np.array_equal, np.argmax, np.argmin,
    np.count_nonzero, np.digitize, np.iscomplexobj, np.isrealobj,
    np.result_type, np.can_cast, np.promote_types, np.ndim, np.size, np.broadcast_shapes,
    np.isscalar, np.iterable, np.shape, np.dtype,
)

# -- np.broadcast(*arrays): its shape, not its items ---------------------------------------------------
# Its items are the arrays' values, drawn in C: of differentiated arrays they would carry no derivative
# (astroML's GaussianMixture1D iterated one: 0 for the means' derivative). Its shape is answered; drawing
# items is refused, naming np.broadcast_arrays, whose arrays the rules differentiate.

class BroadcastShape:
    """np.broadcast of differentiated values: its shape (`shape`, `nd`, `ndim`, `size`, `numiter`), no items."""

    def __init__(self, b):
        self.shape, self.nd, self.ndim, self.size, self.numiter = b.shape, b.nd, b.ndim, b.size, b.numiter

    def _refused(self, *_):
        raise OverdubError("the items of np.broadcast of differentiated values are drawn in C, without their "
                           "derivatives", fix="iterate over `zip(*(a.flat for a in np.broadcast_arrays(...)))`")

    __iter__ = __next__ = _refused
    iters = index = property(_refused)


def _differentiated(v) -> bool:
    return isinstance(v, (float, complex, np.floating, np.complexfloating)) or (
        isinstance(v, np.ndarray) and v.dtype.kind in "fc") or not isinstance(v, (int, bool, np.integer, np.ndarray))


@registry.rrule(np.broadcast)
def broadcast_rrule(*args):
    b = np.broadcast(*args)
    y = BroadcastShape(b) if any(_differentiated(a) for a in args) else b
    return y, lambda dy: (None,) * len(args)


@registry.frule(np.broadcast)
def broadcast_frule(tangents, *args):
    b = np.broadcast(*args)
    perturbed = any(t is not None and not (type(t) is int and t == 0) for t in tangents)
    return (BroadcastShape(b) if perturbed else b), None


@registry.srule(np.broadcast)
def broadcast_srule(*args):
    """On tracers: the shape (np.cross asks `np.broadcast(a[..., 0], b[..., 0]).shape`), not the items."""
    return BroadcastShape(np.broadcast(*[np.empty(np.shape(a), dtype=np.int8) for a in args]))


# sparsity (contexts/rules/sparsity_specs.py): arrays made inside the function are tracers, so that they
# can take traced values
registry.sparsity(CONSTRUCTOR, np.zeros, np.ones, np.empty, np.full)
registry.sparsity(Custom("ops.py: a constant tracer of the argument's shape"), np.zeros_like, np.ones_like,
                  np.empty_like, np.full_like)
registry.sparsity(INDICES, np.digitize)


# -- np.arange([start,] stop[, step]): start + i * step -------------------------------------------------

def _arange_parts(args, kwargs):
    """(start, step, the positions of start and step among args or None) of np.arange's arguments. A start
    or step given by keyword has no position its tangent or cotangent could take: refused unless an integer
    (bond-pricing's `np.arange(start=s, step=1/f, stop=e)`: a crash before)."""
    kw = dict(kwargs)
    for name in ("start", "step"):
        if name in kw and not isinstance(kw[name], (int, np.integer)):
            raise NoRuleError(f"np.arange with its {name} given by keyword (a {type(kw[name]).__name__})",
                              fix="give start, stop and step by position: `np.arange(start, stop, step)`")
    if len(args) == 0:
        return kw.get("start", 0), kw.get("step", 1), (None, None)
    if len(args) == 1:
        if "stop" in kw:  # (`np.arange(a, stop=b)`: a is the start)
            return args[0], kw.get("step", 1), (0, None)
        return kw.get("start", 0), kw.get("step", 1), (None, None)  # (a stop alone: 0, 1, 2, ...)
    if len(args) == 2:
        return args[0], kw.get("step", 1), (0, None)
    return args[0], args[2], (0, 2)


def _length_jump(args, kwargs, tangents=None) -> None:
    """np.arange's length steps where `(stop - start) / step` is a whole number >= 0 (`np.arange(1, n)` at n =
    37.0 has 36 entries, just above 37: nolds' `expected_rs(n)` sums a term `sqrt((n - 37) / 37)` that appears
    there, whose derivative is infinite; both modes gave the left side's slope, silently). Refused there where
    start, stop or step moves (forward mode: `tangents` by position), noted for forward mode to tell (reverse
    mode), as `np.floor`'s jumps are (`ties.step_jump`)."""
    if len(args) + len(kwargs) == 0:
        return
    kw = dict(kwargs)
    if len(args) == 1 and "stop" not in kw:
        spots = {"stop": 0}
    else:
        spots = {"start": 0, "stop": 1, "step": 2}
    values = {"start": 0, "stop": None, "step": 1}
    rates = {"start": 0.0, "stop": 0.0, "step": 0.0}
    for name in values:
        i = spots.get(name)
        if i is not None and i < len(args):
            values[name] = args[i]
            t = tangents[i] if tangents is not None and i < len(tangents) else None
            rates[name] = 0.0 if t is None else t
        elif name in kw:
            values[name] = kw[name]
    start, stop, step = (plain_value(values[k]) for k in ("start", "stop", "step"))
    if stop is None or not all(isinstance(v, (int, float, np.integer, np.floating)) for v in (start, stop, step)) \
            or not step or all(isinstance(v, (int, np.integer)) for v in (start, stop, step)):  # (ints: no derivative)
        return
    q = (stop - start) / step
    if q < 0 or q != np.floor(q):
        return
    if tangents is None:
        step_jump("np.arange's length", q)
        return
    try:
        ts, te, th = (np.asarray(plain_value(rates[k]), dtype=float) for k in ("start", "stop", "step"))
    except (TypeError, ValueError):
        step_jump("np.arange's length", q)
        return
    step_jump("np.arange's length", q, (te - ts) / step - q * th / step)


# (np.arange has no signature to read: `np.arange(start=s, stop=e, step=h)` is run as `np.arange(s, e, h)` by the
# engines' `by_position`, whose cotangents go back by name; seirsplus' `np.arange(start=self.t, ..., step=dt)`)
POSITIONAL_NAMES[np.arange] = ("start", "stop", "step")


@registry.rrule(np.arange)
def arange_rrule(*args, **kwargs):
    """d(start + i * step): ones for start, i for step; the stop sets how many (a step: no derivative)."""
    y = np.arange(*args, **kwargs)
    start, step, (i_start, i_step) = _arange_parts(args, kwargs)
    # (its length's jump: noted by reverse mode's runtime where its call's arguments are differentiated, which
    # a rule cannot tell from a constant `np.arange(6.0)`)

    def arange_pullback(dy):
        out = [None] * len(args)
        if dy is None or y.dtype.kind not in "fc" or not y.size:
            return tuple(out)
        if type(dy) is Refused:  # (unknown: of a float start or step; an integer one takes none)
            for i, v in ((i_start, start), (i_step, step)):
                if i is not None and not isinstance(v, (int, np.integer)):
                    out[i] = dy
            return tuple(out)
        dy = dy if is_dual(dy) else np.asarray(dy)  # (under an outer forward pass: a dual, gen23 C5)
        if i_start is not None:
            out[i_start] = match_primal(dy.sum(), start)
        if i_step is not None:
            out[i_step] = match_primal((dy * np.arange(y.size)).sum(), step)
        return tuple(out)
    return y, arange_pullback


@registry.frule(np.arange)
def arange_frule(tangents, *args, **kwargs):
    y = np.arange(*args, **kwargs)
    _length_jump(args, kwargs, tangents)
    if y.dtype.kind not in "fc":
        return y, None
    _, _, (i_start, i_step) = _arange_parts(args, kwargs)
    t_start = tangents[i_start] if i_start is not None and i_start < len(tangents) else None
    t_step = tangents[i_step] if i_step is not None and i_step < len(tangents) else None
    dy = np.zeros(y.shape, dtype=y.dtype)
    if t_start is not None:
        dy = dy + t_start
    if t_step is not None:
        dy = dy + np.arange(y.size) * t_step
    return y, dy


# -- np.frompyfunc(f, nin, nout): a ufunc calling f from C, where no engine follows it -----------------------
# Made in differentiated code, it is made as `np.vectorize(f)` of object outputs (what frompyfunc's ufunc
# computes, element by element), which every engine differentiates through f.

class PythonUfunc(np.vectorize):
    """The ufunc `np.frompyfunc(func, nin, nout)` makes, as the engines run it: `np.vectorize(func)` of
    object outputs, with the ufunc's `reduce` and `accumulate` as numpy's object loops (func left to right)."""

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=np._NoValue, where=True):
        if out is not None or keepdims or where is not True or type(axis) is tuple:
            raise NoRuleError("reduce with out=, keepdims, where= or several axes of a ufunc made by np.frompyfunc",
                              fix="reduce one axis at a time")
        from .objects import reduce
        return reduce(self.pyfunc, a, axis, initial, rows=self)

    def accumulate(self, a, axis=0, dtype=None, out=None):
        if out is not None:
            raise NoRuleError("accumulate with out= of a ufunc made by np.frompyfunc", fix="assign its result")
        a = np.moveaxis(np.asarray(a), axis, 0)
        op = self.pyfunc if np.ndim(a) == 1 else self
        acc = a[0]
        items = [acc]
        for i in range(1, np.shape(a)[0]):
            acc = op(acc, a[i])
            items.append(acc)
        res = np.empty(np.shape(a), dtype=object)
        for i in range(len(items)):
            res[i] = items[i]
        return np.moveaxis(res, 0, axis)


def python_ufunc_method(fn):
    """`f.reduce` / `f.accumulate` of a ufunc np.frompyfunc made (before the differentiated code ran) as
    `PythonUfunc`'s method, else None."""
    ufunc = getattr(fn, "__self__", None)
    if type(ufunc) is not np.ufunc or getattr(fn, "__name__", None) not in ("reduce", "accumulate"):
        return None
    made = _made_by_frompyfunc(ufunc)
    return None if made is None else getattr(PythonUfunc(made[1][0], otypes=["O"] * ufunc.nout), fn.__name__)


def frompyfunc(func, /, nin, nout, *, identity=None):
    """`np.frompyfunc` as the vectorized function it stands for (`Rule.stand_in`)."""
    if not callable(func):
        raise TypeError("function must be callable")
    return PythonUfunc(func, otypes=["O"] * nout)


def called_vectorized(func, nout, /, *args, **kw):
    """A call of `np.frompyfunc(func, nin, nout)`'s ufunc, as the vectorized call it makes. Its keywords are
    the ufunc's options, not func's: `out=...` (np.vectorize's own call) asks for the results returned."""
    if kw.get("out", None) in (None, ...):
        kw.pop("out", None)
    if kw:
        raise NoRuleError(f"the options {sorted(kw)} of a ufunc made by np.frompyfunc",
                          fix="call it without them, or use np.vectorize")
    return np.vectorize(func, otypes=["O"] * nout)(*args)


def _made_by_frompyfunc(fn):
    """(called_vectorized, (func, nout)) for a ufunc `np.frompyfunc` made (one made before the
    differentiated code ran: its Python function is what the ufunc object holds, the one callable among
    its references), else None."""
    if not fn.__name__.endswith(" (vectorized)"):  # (asked for ufuncs only)
        return None
    held = [r for r in gc.get_referents(fn) if callable(r)]
    return (called_vectorized, (held[0], fn.nout)) if len(held) == 1 else None


registry.set(np.frompyfunc, stand_in=frompyfunc)
registry.made_stand_ins[np.ufunc] = _made_by_frompyfunc


# -- np.full(shape, v), np.full_like(a, v): differentiable in the fill value v ------------------------------
# (numpy writes v into an empty array with copyto: a differentiated v was refused in forward mode, as a dual
# stored into a plain array; scipy.stats.pearsonr fills so)

def _fill_args(fn, args, kwargs):
    """(fill value, dtype) of an np.full / np.full_like call."""
    fill = args[1] if len(args) > 1 else kwargs.get("fill_value")
    dtype = args[2] if len(args) > 2 else kwargs.get("dtype")
    return fill, dtype


def _fills_inexact(fill, dtype) -> bool:
    from .ufuncs import inexact
    return inexact(fill) and (dtype is None or np.dtype(dtype).kind in "fc")


def _full_adjoint(fn):
    def adjoint(dy, y, *args, **kwargs):
        from ..generic import unbroadcast
        fill, dtype = _fill_args(fn, args, kwargs)
        out = [None] * len(args)
        if dy is None or not _fills_inexact(fill, dtype):
            return tuple(out) + (({"fill_value": None},) if "fill_value" in kwargs else ())
        g = match_primal(unbroadcast(dy, np.asarray(fill)) if np.ndim(fill) else np.sum(dy), fill)
        if len(args) > 1:
            out[1] = g
            return tuple(out)
        return tuple(out) + ({"fill_value": g},)
    adjoint.__name__ = f"{fn.__name__}_adjoint"
    return adjoint


def _full_frule(fn):
    def frule(tangents, *args, **kwargs):
        fill, dtype = _fill_args(fn, args, kwargs)
        y = _full_impl(fn)(*args, **kwargs)
        t = tangents[1] if len(tangents) > 1 else None
        if t is None or not _fills_inexact(fill, dtype):
            return y, None
        return y, np.broadcast_to(np.asarray(t, dtype=y.dtype), y.shape).copy()
    frule.__name__ = f"{fn.__name__}_frule"
    return frule


def _full_impl(fn):
    """fn itself, or, for a fill value numpy cannot write into a plain array (forward mode's dual, under a
    second derivative), the filled array as zeros plus the value (of its shape and float dtype)."""
    def impl(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TypeError:
            fill, dtype = _fill_args(fn, args, kwargs)
            like = args[0] if args else kwargs.get("a", kwargs.get("shape"))
            shape = np.shape(like) if fn is np.full_like else like
            zeros = np.zeros(shape, dtype=dtype if dtype is not None else (
                like.dtype if fn is np.full_like and np.asarray(like).dtype.kind in "fc" else float))
            return zeros + fill
    return impl


for _fn in (np.full, np.full_like):
    registry.adjoint(_fn)(_full_adjoint(_fn))
    registry.frule(_fn)(_full_frule(_fn))
    registry.set(_fn, impl=_full_impl(_fn))


# -- np.linspace, np.geomspace: their endpoints' tangents in closed form ----------------------------------
# (numpy's code multiplies into an array it made with `out=`, where forward mode's duals cannot go: gen7's
# `np.sin(np.linspace(0.0, t, 5))` was refused in forward mode; reverse mode follows numpy's code)

def _spacing(tangents, args, kwargs):
    """(start, stop, their tangents, zeros where none, the other options by name but the dtype: the tangents'
    is the values' float one) of an np.linspace / np.geomspace call; None where neither end has a tangent."""
    names = ("start", "stop", "num", "endpoint", "retstep", "dtype", "axis")
    options = dict(zip(names, args))
    options.update(kwargs)
    start, stop = options.pop("start"), options.pop("stop")
    options.pop("dtype", None)
    ts = tangents[0] if len(tangents) > 0 else None
    te = tangents[1] if len(tangents) > 1 else None
    if ts is None and te is None:
        return None
    zero = lambda t, v: np.zeros_like(np.asarray(v, dtype=float)) if t is None else t  # noqa: E731
    return start, stop, zero(ts, start), zero(te, stop), options


@registry.frule(np.linspace)
def linspace_frule(tangents, *args, **kwargs):
    """linspace is linear in (start, stop): the tangent is the linspace of their tangents."""
    y = np.linspace(*args, **kwargs)
    spacing = _spacing(tangents, args, kwargs)
    if spacing is None:
        return y, None
    _, _, ts, te, options = spacing
    return y, np.linspace(ts, te, **options)


@registry.frule(np.geomspace)
def geomspace_frule(tangents, *args, **kwargs):
    """y_k = start (stop / start) ** f_k, f_k = k / (num - 1) (k / num without the endpoint): its tangent is
    y_k ((1 - f_k) dstart / start + f_k dstop / stop)."""
    y = np.geomspace(*args, **kwargs)
    spacing = _spacing(tangents, args, kwargs)
    if spacing is None:
        return y, None
    start, stop, ts, te, options = spacing
    options.pop("retstep", None)
    rs = np.asarray(ts, dtype=float) / np.asarray(start, dtype=float)
    re = np.asarray(te, dtype=float) / np.asarray(stop, dtype=float)
    f = np.linspace(np.zeros_like(rs + re), np.ones_like(rs + re), **options)
    along = lambda r: np.linspace(r + 0.0 * re, r + 0.0 * rs, **options)  # noqa: E731  (r repeated along the axis)
    return y, y * ((1.0 - f) * along(rs) + f * along(re))
