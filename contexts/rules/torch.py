"""PyTorch tensors as leaves (`contexts.rules.leaves.ArrayLeaf`): values, never code.

A tensor computes in torch's compiled kernels, which Python cannot follow, so torch's modules are opaque
(`overdub.opaque("torch")`): a torch function or tensor method reached with a differentiated tensor takes a
rule of this module or is refused by name. The rules are numpy's, borrowed through an explicit map below
(`MAP`): each entry names the torch function (and the tensor methods of the same meaning), the numpy
function whose rule differentiates it, and how torch's arguments become numpy's (`dim=` -> `axis=`,
`keepdim=` -> `keepdims=`, `torch.std`'s `correction=1` default -> `ddof=1`). A keyword an entry does not
translate is refused, never ignored; a torch function or tensor method not in the map is refused.

- the primal is torch's own call (`torch.sin(t)` stays a tensor);
- numpy's rules compute on the tensors' values (`t.numpy()`: a view of a CPU tensor's memory), and reverse
  mode keeps a tensor's cotangents as ndarrays (numpy cannot mix with tensors: `ndarray * tensor` is a
  TypeError); the gradient with respect to a tensor is made a tensor of its dtype at the end
  (`leaves.in_kind`, by `register_array(asarray=)`).

The engines meet tensors through `leaves.register_array(dtype=, host=)`: numpy's dtype of a tensor's values
(what they read as `dtype.kind`) and its values (`hosted`), on which reverse mode computes operators,
indexing and every rule's adjoint. Forward mode's duals and sparsity's tracers cannot stand for a tensor
(they would answer for it with numpy's methods): forward mode's entry points take torch code's derivatives
by reverse mode (`contexts.by_reverse`), second order and sparsity refuse tensors by name.

Refused by name: tensors with `requires_grad=True` (torch's own autograd would be a second derivative
engine on the same values), tensors off the CPU, complex and bfloat16 tensors, in-place methods (`add_`),
item and augmented assignment (`t[i] = v`, `t += x`), `.data`, `out=`, and torch.autograd / torch.func /
torch.compile / torch.jit.

Loaded when `torch` is first imported, once its package has run (`leaves.DOMAINS`): `import contexts` does
not import torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import scipy.special
import torch
import torch.nn.functional as F

from overdub import opaque

from .leaves import hosted_refused, register_array, register_constant
from .numpy._util import unsupported
from .registry import registry

__all__ = ["MAP"]

_TENSOR = torch.Tensor
_NP_DTYPES = {torch.float64: np.float64, torch.float32: np.float32, torch.float16: np.float16}
_REFUSED_DTYPES = (torch.complex64, torch.complex128, torch.bfloat16, getattr(torch, "complex32", None))


# -- tensors and their values ----------------------------------------------------------------------------

def _checked(t: torch.Tensor) -> torch.Tensor:
    """t, refused by name where its values are not a plain CPU array numpy's rules may compute with."""
    if t.requires_grad:
        raise unsupported("torch", "a tensor with requires_grad=True (torch's autograd would differentiate "
                          "the same values a second time)", "pass `t.detach()`, or build it without requires_grad")
    if t.device.type != "cpu":
        raise unsupported("torch", f"a tensor on the device {t.device} (only CPU tensors are differentiated)",
                          "move it to the CPU first: `t.cpu()`")
    if t.dtype in _REFUSED_DTYPES:
        raise unsupported("torch", f"a tensor of dtype {t.dtype}", "use float32 or float64 tensors")
    if t.layout is not torch.strided:
        raise unsupported("torch", f"a tensor of layout {t.layout}", "use dense tensors (`t.to_dense()`)")
    return t


def _host(v):
    """v with its tensors as ndarrays (numpy's view of each CPU tensor's memory), as numpy's rules take
    them; lists and tuples of them too (`torch.cat([x, y])`); a `torch.Size` as a tuple."""
    if isinstance(v, _TENSOR):
        return _checked(v).resolve_neg().resolve_conj().numpy()
    if type(v) is list or type(v) is tuple or isinstance(v, torch.Size):
        return (list if type(v) is list else tuple)(_host(e) for e in v)
    return v


def _as_torch(g, like):
    """g (an ndarray or number numpy's rules computed) as a tensor of `like`'s dtype where both are
    floating; a fresh copy (numpy's results may be read-only broadcast views)."""
    a = np.array(g)
    if like.dtype.is_floating_point and a.dtype.kind == "f":
        return torch.tensor(a.astype(_NP_DTYPES.get(like.dtype, a.dtype), copy=False))
    return torch.tensor(a)


def _np_dtype_of(t):
    """numpy's dtype of a tensor's values (what the engines read as `dtype.kind`)."""
    d = _NP_DTYPES.get(t.dtype)
    if d is None:
        if t.dtype in _REFUSED_DTYPES:
            _checked(t)
        return np.dtype(str(t.dtype).removeprefix("torch."))
    return np.dtype(d)


register_array(_TENSOR, asarray=_as_torch, dtype=_np_dtype_of, host=lambda t: _host(t))
for _cls in (torch.dtype, torch.device, torch.layout, torch.memory_format, torch.Generator):
    register_constant(_cls)
opaque("torch")  # its Python code is never recursed into: a function without a rule is refused by name


def _kept(g, like):
    """g (a cotangent or tangent numpy's rule computed) as a tensor where `like` (the value it is for) is
    one; lists and tuples item by item (`torch.cat`'s tensors); otherwise as it is."""
    if g is None:
        return g
    if isinstance(like, _TENSOR):
        if isinstance(g, _TENSOR):
            return g
        if isinstance(g, (np.ndarray, np.generic, float, int)):
            return _as_torch(g, like)
        return g  # (a refusal's marker, a forward dual: the engines' own)
    if type(like) in (list, tuple) and type(g) in (list, tuple) and len(g) == len(like):
        return type(g)(_kept(gi, li) for gi, li in zip(g, like))
    return g


def _differentiable(v) -> bool:
    return isinstance(v, _TENSOR) and v.dtype.is_floating_point or isinstance(v, (float, np.floating)) or (
        isinstance(v, np.ndarray) and v.dtype.kind in "fc")


# -- translating torch's arguments into numpy's ----------------------------------------------------------

@dataclass(frozen=True)
class Call:
    """numpy's call for a torch call: `args` (by position; `sources[i]` says which torch argument each is:
    ("arg", i), ("kw", name) or None for a constant the translation added) and `kwargs` (never
    differentiated: axes, flags)."""

    args: tuple
    kwargs: dict
    sources: tuple


_NO = object()  # (a torch parameter not given)


@dataclass(frozen=True)
class Params:
    """How a torch function takes its arguments: `names` in order (the first `arrays` go to numpy by
    position: the values), `keywords` torch -> numpy keyword (or a function of the value giving numpy's
    keywords), `defaults` the torch parameters accepted only at their default (a different value is a
    function numpy's rule does not differentiate), `fixed(given) -> dict` numpy keywords always passed."""

    names: tuple
    arrays: int = 1
    keywords: dict = field(default_factory=dict)
    defaults: dict = field(default_factory=dict)
    fixed: Callable | None = None
    check: Callable | None = None  # check(given) raises a refusal for cases the rule does not cover
    prefix: tuple = ()  # constants numpy's call takes before the values (`softplus`: logaddexp(0.0, x))
    suffix: tuple = ()  # constants numpy's call takes after them (`relu`: maximum(x, 0.0))
    varargs: bool = False  # every positional argument after the first name is a value (`einsum(eq, *ops)`)


def _bind(name: str, p: Params, args: tuple, kwargs: dict) -> dict:
    if "out" in kwargs:
        if kwargs["out"] is not None:
            raise unsupported(name, "out= (a result written into a given tensor)", "use the returned tensor")
        kwargs = {k: v for k, v in kwargs.items() if k != "out"}
    accepted = set(p.names) | set(p.keywords) | set(p.defaults)
    if len(args) > len(p.names):
        raise unsupported(name, f"{len(args)} arguments by position", "pass the options by keyword")
    given = dict(zip(p.names, args))
    for k, v in kwargs.items():
        if k not in accepted:
            raise unsupported(name, f"the keyword {k}= (not in overdub's map of torch onto numpy's rules)",
                              "leave it at its default, or compute this step with numpy")
        if k in given:
            raise TypeError(f"{name} got multiple values for argument {k!r}")
        given[k] = v
    return given


def translate(name: str, p: Params, args: tuple, kwargs: dict) -> Call:
    if p.varargs:
        if kwargs:
            raise unsupported(name, f"the keywords {sorted(kwargs)}", "pass the operands by position")
        if len(args) == 2 and type(args[1]) in (list, tuple):
            raise unsupported(name, "the operands as one list", "pass them by position: einsum(eq, a, b)")
        return Call(tuple(args), {}, tuple(("arg", i) for i in range(len(args))))
    given = _bind(name, p, args, kwargs)
    if p.check is not None:
        p.check(given)
    values, sources = [], []
    for c in p.prefix:
        values.append(c)
        sources.append(None)
    for i, n in enumerate(p.names[:p.arrays]):
        if n in given:
            values.append(given[n])
            sources.append(("arg", p.names.index(n)) if p.names.index(n) < len(args) else ("kw", n))
        else:  # (an optional value left out: numpy's None at its position, `clip(x, None, hi)`)
            values.append(p.defaults.get(n))
            sources.append(None)
    for c in p.suffix:
        values.append(c)
        sources.append(None)
    np_kwargs = {}
    for n, v in given.items():
        if n in p.names[:p.arrays]:
            continue
        if _differentiable(v) and not isinstance(v, (float, np.floating)):
            raise unsupported(name, f"a differentiated array as {n}=", "pass it as a constant")
        if n in p.keywords:
            to = p.keywords[n]
            if callable(to):
                np_kwargs.update(to(v))
            elif to is not None:
                np_kwargs[to] = v
        elif n in p.defaults:
            d = p.defaults[n]
            if not (v is d or _same(v, d)):
                raise unsupported(name, f"{n}={v!r} (only its default {d!r} is mapped onto numpy's rule)",
                                  "leave it at its default, or compute this step with numpy")
        else:
            raise unsupported(name, f"the argument {n}= (not mapped onto numpy's rule)",
                              "leave it out, or compute this step with numpy")
    if p.fixed is not None:
        np_kwargs.update(p.fixed(given))
    return Call(tuple(values), np_kwargs, tuple(sources))


def _same(v, d) -> bool:
    try:
        return bool(v == d)
    except Exception:
        return False


def _dims(v):
    """torch's `dim` (an int, a list or tuple of ints, None) as numpy's `axis`."""
    if isinstance(v, (list, tuple, torch.Size)):
        return tuple(int(e) for e in v)
    return None if v is None else int(v)


def _no_dtype(v):
    if v is not None:
        raise unsupported("torch", f"dtype={v} (a cast inside the call)", "cast before: `t.to(dtype)`")
    return {}


# torch's parameter lists, shared by many entries
UNARY = Params(("input",))
BINARY = Params(("input", "other"), arrays=2)
REDUCE = Params(("input", "dim", "keepdim"), keywords={"dim": lambda v: {"axis": _dims(v)},
                                                       "keepdim": lambda v: {"keepdims": bool(v)},
                                                       "dtype": _no_dtype})
FULL = Params(("input",), keywords={"dtype": _no_dtype})  # (a reduction of all elements: max, min)


def _std_ddof(given) -> dict:
    """torch.std/var's Bessel correction as numpy's ddof: `correction=` (default 1), or the older
    `unbiased=` (default True): torch.std(x) is numpy's np.std(x, ddof=1)."""
    if "correction" in given and "unbiased" in given:
        raise unsupported("torch.std", "both correction= and unbiased=", "pass one")
    c = given.get("correction", _NO)
    if c is _NO or c is None:
        c = 1 if given.get("unbiased", True) else 0
    return {"ddof": c}


def _std_params(given):
    if isinstance(given.get("dim"), bool):  # (`torch.std(x, False)`: the old unbiased by position)
        given["unbiased"] = given.pop("dim")


STD = Params(("input", "dim", "unbiased", "keepdim"),
             keywords={"dim": lambda v: {"axis": _dims(v)}, "keepdim": lambda v: {"keepdims": bool(v)},
                       "unbiased": lambda v: {}, "correction": lambda v: {}},
             fixed=_std_ddof, check=_std_params)


def _softmax_dim(name):
    def check(given):
        if given.get("dim") is None:
            raise unsupported(name, "an implicit dim (torch's deprecated choice by the number of dimensions)",
                              "pass dim= explicitly")
        if given.get("dtype") is not None:
            _no_dtype(given["dtype"])
    return check


def _softmax_params(name, names=("input", "dim")):
    return Params(names, keywords={"dim": lambda v: {"axis": int(v)}, "dtype": _no_dtype},
                  defaults={"_stacklevel": 3}, check=_softmax_dim(name))


def _clamp_check(given):
    if given.get("min") is None and given.get("max") is None:
        raise unsupported("torch.clamp", "neither min nor max", "pass one")


CLAMP = Params(("input", "min", "max"), arrays=3, defaults={"min": None, "max": None}, check=_clamp_check)


def _amax_dim(v):
    return {"axis": None if v == () or v == [] else _dims(v)}


AMAX = Params(("input", "dim", "keepdim"), keywords={"dim": _amax_dim, "keepdim": lambda v: {"keepdims": bool(v)}})


def _max_check(name):
    def check(given):
        if "dim" in given or "other" in given:
            raise unsupported(name, "a dim or a second tensor (torch then returns (values, indices), or the "
                              "elementwise extreme)", f"use torch.a{name.split('.')[-1]}(x, dim) or "
                              f"torch.{'maximum' if 'max' in name else 'minimum'}(x, y)")
    return check


def _max_params(name):
    return Params(("input", "dim", "keepdim"), check=_max_check(name))


def _solve_check(given):
    A, B = given.get("A"), given.get("B")
    if getattr(A, "ndim", 2) > 2 and getattr(B, "ndim", 0) == A.ndim - 1:
        raise unsupported("torch.linalg.solve", "a batch of vectors B (torch reads B of one dimension fewer than "
                          "A as vectors, numpy as matrices)", "pass B.unsqueeze(-1) and squeeze the result")


SOLVE = Params(("A", "B"), arrays=2, defaults={"left": True}, check=_solve_check)
NORM = Params(("A", "ord", "dim", "keepdim"), keywords={"ord": "ord", "dim": lambda v: {"axis": _dims(v)},
                                                         "keepdim": lambda v: {"keepdims": bool(v)}, "dtype": _no_dtype})
VNORM = Params(("x", "ord", "dim", "keepdim"), keywords={"ord": "ord", "dim": lambda v: {"axis": _dims(v)},
                                                          "keepdim": lambda v: {"keepdims": bool(v)}, "dtype": _no_dtype},
               check=lambda given: _vnorm_check(given))


def _vnorm_check(given):
    if given.get("dim") is None and getattr(given.get("x"), "ndim", 1) > 1:
        raise unsupported("torch.linalg.vector_norm", "a tensor of several dimensions with dim=None (torch "
                          "takes the norm of all elements)", "pass x.flatten()")


def _shape_arg(v):
    return tuple(int(e) for e in v) if isinstance(v, (list, tuple, torch.Size)) else (int(v),)


RESHAPE = Params(("input", "shape"), keywords={"shape": lambda v: {"shape": _shape_arg(v)}})
PERMUTE = Params(("input", "dims"), keywords={"dims": lambda v: {"axes": _shape_arg(v)}})
TRANSPOSE = Params(("input", "dim0", "dim1"), keywords={"dim0": lambda v: {"axis1": int(v)},
                                                        "dim1": lambda v: {"axis2": int(v)}})
SQUEEZE = Params(("input", "dim"), keywords={"dim": lambda v: {"axis": _dims(v)}})
UNSQUEEZE = Params(("input", "dim"), keywords={"dim": lambda v: {"axis": int(v)}})
CAT = Params(("tensors", "dim"), keywords={"dim": lambda v: {"axis": int(v)}})
CUMSUM = Params(("input", "dim"), keywords={"dim": lambda v: {"axis": int(v)}, "dtype": _no_dtype},
                check=lambda given: None if "dim" in given else _required("torch.cumsum", "dim"))
FLIP = Params(("input", "dims"), keywords={"dims": lambda v: {"axis": _shape_arg(v)}})
ROLL = Params(("input", "shifts", "dims"), keywords={"shifts": lambda v: {"shift": v if isinstance(v, int) else _shape_arg(v)},
                                                     "dims": lambda v: {"axis": None if v is None else (
                                                         v if isinstance(v, int) else _shape_arg(v))}})
TRIL = Params(("input", "diagonal"), keywords={"diagonal": lambda v: {"k": int(v)}})
TRACE = Params(("input",))
EXPAND = Params(("input", "size"), keywords={"size": lambda v: {"shape": _shape_arg(v)}})
WHERE = Params(("condition", "input", "other"), arrays=3,
               check=lambda given: None if "input" in given else _required("torch.where", "input and other"))
MAXIMUM = BINARY
POW = Params(("input", "exponent"), arrays=2)
EINSUM = Params(("equation",), varargs=True)


def _required(name, what):
    raise unsupported(name, f"a call without {what} (torch's other form)", f"pass {what}")


def _add_check(name):
    def check(given):
        if given.get("alpha", 1) != 1:
            raise unsupported(name, f"alpha={given['alpha']!r}", "multiply the other operand: `x + a * y`")
        if given.get("rounding_mode") is not None:
            raise unsupported(name, f"rounding_mode={given['rounding_mode']!r}", "use torch.floor of the quotient")
    return check


def _binary(name):
    return Params(("input", "other"), arrays=2, defaults={"alpha": 1, "rounding_mode": None}, check=_add_check(name))


RELU = Params(("input", "inplace"), defaults={"inplace": False}, suffix=(0.0,))
# (torch's softplus is x itself past the threshold: log1p(exp(-20)) < 2.1e-9 from numpy's logaddexp, and
# its derivative 1 from expit(20): the same below float32's and FD's resolution, beta=1 only)
SOFTPLUS = Params(("input", "beta", "threshold"), defaults={"beta": 1, "threshold": 20}, prefix=(0.0,))
ASTENSOR = Params(("data", "dtype", "device"), keywords={"dtype": lambda v: {} if v is None else {"dtype": _np_dtype(v)}},
                  defaults={"device": None, "requires_grad": False})


def _np_dtype(d):
    if d not in _NP_DTYPES:
        raise unsupported("torch", f"dtype={d} (only floating casts of differentiated values are mapped)",
                          "cast to torch.float32 or torch.float64")
    return _NP_DTYPES[d]


# Forward mode refuses tensors (`leaves.hosted_refused`): its duals of a tensor would answer for it with
# numpy's methods (`x.transpose(0, 1)` is no transpose in numpy). The frules below are kept for the day a
# dual of torch's own meaning exists; until then none is registered, and a torch function given a perturbed
# value is refused by name (NoForwardRule).
_FORWARD = False

# -- the rules: numpy's, on the tensors' values ----------------------------------------------------------

def _placed(gs, c: Call, args: tuple, kwargs: dict):
    """numpy's cotangents `gs` (per numpy argument) at the torch arguments they belong to: ndarrays, as
    reverse mode keeps a tensor's cotangents (numpy's operators cannot mix with tensors); the gradient is
    made a tensor at the end (`leaves.in_kind`)."""
    out, by_kw = [None] * len(args), {}
    if gs is None:
        return tuple(out) + ((by_kw,) if kwargs else ())
    for src, g, a in zip(c.sources, gs, c.args):
        if src is None or g is None:
            continue
        if src[0] == "arg":
            out[src[1]] = g
        else:
            by_kw[src[1]] = g
    return tuple(out) + ((by_kw,) if kwargs else ())


def _borrow(key, fn, theirs, p: Params, name: str, prepare: Callable | None = None) -> None:
    """Give torch's `fn` (registered under `key`: the function, or (torch.Tensor, name) for a method)
    numpy's rule of `theirs`, its arguments translated by `p`."""
    rule = registry.get(theirs)
    if rule is None or (rule.adjoint is None and rule.rrule is None):
        raise RuntimeError(f"no numpy rule for {theirs} to borrow for {name}")  # (a map entry gone stale)

    def on(args, kwargs):
        if prepare is not None:
            args = prepare(args)
        return args, translate(name, p, args, kwargs)

    if rule.kind == "nondiff":
        registry.nondifferentiable(key)
        return

    def torch_adjoint(dy, y, *args, **kwargs):
        args, c = on(args, kwargs)
        hosted = tuple(_host(a) for a in c.args)
        if rule.adjoint is not None:
            gs = rule.adjoint(_host(dy), _host(y), *hosted, **c.kwargs)
        else:
            _, back = rule.rrule(*hosted, **c.kwargs)
            gs = back(_host(dy))
        return _placed(gs, c, args, kwargs)

    torch_adjoint.__name__ = torch_adjoint.__qualname__ = f"{name}_adjoint"
    registry.adjoint(key, kind=rule.kind)(torch_adjoint)

    if rule.frule is not None and _FORWARD:
        def torch_frule(tangents, *args, **kwargs):
            call_args = args
            args, c = on(args, kwargs)
            ts = tuple(_host(tangents[s[1]]) if s is not None and s[0] == "arg" and s[1] < len(tangents) else None
                       for s in c.sources)
            _, t = rule.frule(ts, *(_host(a) for a in c.args), **c.kwargs)
            y = fn(*call_args, **kwargs)
            return y, _kept(t, y)

        torch_frule.__name__ = torch_frule.__qualname__ = f"{name}_frule"
        registry.frule(key)(torch_frule)

    registry.srule(key)(_no_tracers(name))
    if p.arrays > 1 and not p.varargs:
        registry.rules[key].positional = p.names[:p.arrays]


def _no_tracers(name: str):
    """Sparsity detection refuses torch (`leaves.hosted_refused`): a tensor made of tracers would be a tracer,
    answering for the tensor with numpy's methods (`t.transpose(0, 1)` is no transpose in numpy)."""
    def torch_on_tracers(*args, **kwargs):
        raise hosted_refused(name, "sparsity detection")
    torch_on_tracers.__name__ = f"{name.replace('.', '_')}_on_tracers"
    return torch_on_tracers


def _packed(args):
    """`t.view(2, 3)` as `t.view((2, 3))`: a method's sizes given one by one, as one tuple."""
    if len(args) > 2 or len(args) == 2 and isinstance(args[1], int):
        return (args[0], tuple(args[1:]))
    return args


def _flatten_params():
    def shape(given):
        x = given["input"]
        nd = x.ndim
        s, e = given.get("start_dim", 0) % max(nd, 1), given.get("end_dim", -1) % max(nd, 1)
        sh = tuple(x.shape)
        return {"shape": sh[:s] + (int(np.prod(sh[s:e + 1], dtype=int)),) + sh[e + 1:] if nd else (1,)}
    return Params(("input", "start_dim", "end_dim"), keywords={"start_dim": lambda v: {}, "end_dim": lambda v: {}},
                  fixed=shape)


def _expand_params():
    def shape(given):
        x, size = given["input"], _shape_arg(given["size"])
        lead = len(size) - x.ndim
        return {"shape": tuple(x.shape[i - lead] if s == -1 else s for i, s in enumerate(size))}
    return Params(("input", "size"), keywords={"size": lambda v: {}}, fixed=shape)


def _t_params():
    def check(given):
        if given["input"].ndim > 2:
            raise unsupported("Tensor.t", "a tensor of more than 2 dimensions", "use transpose(dim0, dim1)")
    return Params(("input",), check=check)


def _to_params():
    def check(given):
        for k, v in given.items():
            if k != "input" and not (isinstance(v, torch.dtype) or v == "cpu" or v == torch.device("cpu")
                                     or k == "copy" and v is False or k == "non_blocking"):
                raise unsupported("Tensor.to", f"the argument {k}={v!r}", "pass a dtype, or use .cpu()")
    def dtype(given):
        d = next((v for v in given.values() if isinstance(v, torch.dtype)), None)
        return {} if d is None else {"dtype": _np_dtype(d)}
    return Params(("input", "dtype", "non_blocking", "copy"),
                  keywords={"dtype": lambda v: {}, "non_blocking": lambda v: {}, "copy": lambda v: {},
                            "device": lambda v: {}}, fixed=dtype, check=check)


def _cast(d):
    return Params(("input",), fixed=lambda given: {"dtype": d})


def _diag_params():
    return Params(("input", "diagonal"), keywords={"diagonal": lambda v: {"k": int(v)}})


# torch name(s), tensor method name(s), numpy's function whose rule is borrowed, how the arguments translate
MAP: list[tuple[tuple, tuple, Callable, Params]] = []


def _entry(fns, methods, theirs, p, prepare=None):
    MAP.append((tuple(f for f in fns if f is not None), tuple(methods), theirs, p, prepare))


_UNARY = {"sin": np.sin, "cos": np.cos, "tan": np.tan, "exp": np.exp, "log": np.log, "log1p": np.log1p,
          "expm1": np.expm1, "sqrt": np.sqrt, "tanh": np.tanh, "sinh": np.sinh, "cosh": np.cosh,
          "arcsin": np.arcsin, "asin": np.arcsin, "arccos": np.arccos, "acos": np.arccos, "arctan": np.arctan,
          "atan": np.arctan, "arcsinh": np.arcsinh, "asinh": np.arcsinh, "arctanh": np.arctanh,
          "atanh": np.arctanh, "abs": np.abs, "absolute": np.abs, "neg": np.negative, "negative": np.negative,
          "square": np.square, "reciprocal": np.reciprocal, "log2": np.log2, "log10": np.log10,
          "exp2": np.exp2, "sign": np.sign, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
          "sigmoid": scipy.special.expit, "erf": scipy.special.erf, "erfc": scipy.special.erfc,
          "positive": np.positive, "isnan": np.isnan, "isfinite": np.isfinite, "isinf": np.isinf}
for _name, _theirs in _UNARY.items():
    _entry((getattr(torch, _name, None), getattr(torch.special, _name, None) if _name in ("erf", "erfc") else None,
            getattr(F, _name, None) if _name in ("sigmoid", "tanh") else None),
           (_name,) if hasattr(_TENSOR, _name) else (), _theirs, UNARY)

_BINARY = {"add": np.add, "sub": np.subtract, "subtract": np.subtract, "mul": np.multiply,
           "multiply": np.multiply, "div": np.true_divide, "divide": np.true_divide,
           "true_divide": np.true_divide, "maximum": np.maximum, "minimum": np.minimum, "atan2": np.arctan2,
           "arctan2": np.arctan2, "hypot": np.hypot, "logaddexp": np.logaddexp, "matmul": np.matmul,
           "mm": np.matmul, "bmm": np.matmul, "mv": np.matmul, "dot": np.dot, "inner": np.inner,
           "outer": np.outer, "ger": np.outer}
for _name, _theirs in _BINARY.items():
    _entry((getattr(torch, _name, None),), (_name,) if hasattr(_TENSOR, _name) else (), _theirs, _binary(f"torch.{_name}"))
_entry((torch.pow,), ("pow",), np.power, POW)
_entry((torch.where,), ("where",), np.where, WHERE)  # (t.where(cond, other): its own order, below)
_entry((torch.clamp, torch.clip), ("clamp", "clip"), np.clip, CLAMP)

for _name, _theirs in {"sum": np.sum, "mean": np.mean, "prod": np.prod, "nansum": np.nansum,
                       "nanmean": np.nanmean}.items():
    _entry((getattr(torch, _name),), (_name,), _theirs, REDUCE)
_entry((torch.std,), ("std",), np.std, STD)
_entry((torch.var,), ("var",), np.var, STD)
_entry((torch.amax,), ("amax",), np.max, AMAX)
_entry((torch.amin,), ("amin",), np.min, AMAX)
_entry((torch.max,), ("max",), np.max, _max_params("torch.max"))
_entry((torch.min,), ("min",), np.min, _max_params("torch.min"))
_entry((torch.logsumexp,), ("logsumexp",), scipy.special.logsumexp,
       Params(("input", "dim", "keepdim"), keywords={"dim": lambda v: {"axis": _dims(v)},
                                                      "keepdim": lambda v: {"keepdims": bool(v)}}))
_entry((torch.cumsum,), ("cumsum",), np.cumsum, CUMSUM)
_entry((torch.cumprod,), ("cumprod",), np.cumprod, CUMSUM)
_entry((torch.trace,), ("trace",), np.trace,
       Params(("input",), check=lambda g: None if g["input"].ndim == 2 else _required("torch.trace", "a matrix")))
_entry((torch.diag,), ("diag",), np.diag, _diag_params())
_entry((torch.linalg.norm,), (), np.linalg.norm, NORM)
_entry((torch.linalg.vector_norm,), (), np.linalg.norm, VNORM)
_entry((torch.linalg.solve,), (), np.linalg.solve, SOLVE)
_entry((torch.linalg.inv, torch.inverse), ("inverse",), np.linalg.inv, Params(("A",)))
_entry((torch.linalg.det, torch.det), ("det",), np.linalg.det, Params(("A",)))
_entry((torch.linalg.cholesky,), (), np.linalg.cholesky, Params(("A",), defaults={"upper": False}))

_entry((torch.reshape,), ("reshape", "view"), np.reshape, RESHAPE, _packed)
_entry((torch.permute,), ("permute",), np.transpose, PERMUTE, _packed)
_entry((torch.transpose, torch.swapaxes, torch.swapdims), ("transpose", "swapaxes", "swapdims"), np.swapaxes,
       TRANSPOSE)
_entry((torch.t,), ("t",), np.transpose, _t_params())
_entry((torch.squeeze,), ("squeeze",), np.squeeze, SQUEEZE)
_entry((torch.unsqueeze,), ("unsqueeze",), np.expand_dims, UNSQUEEZE)
_entry((torch.flatten,), ("flatten",), np.reshape, _flatten_params())
_entry((torch.cat, torch.concat, torch.concatenate), (), np.concatenate, CAT)
_entry((torch.stack,), (), np.stack, CAT)
_entry((), ("expand",), np.broadcast_to, _expand_params(), _packed)
_entry((torch.broadcast_to,), (), np.broadcast_to, EXPAND)
_entry((torch.flip,), ("flip",), np.flip, FLIP, _packed)
_entry((torch.roll,), ("roll",), np.roll, ROLL)
_entry((torch.tril,), ("tril",), np.tril, TRIL)
_entry((torch.triu,), ("triu",), np.triu, TRIL)
_entry((torch.einsum,), (), np.einsum, EINSUM)

_entry((F.softmax, torch.softmax, torch.special.softmax), ("softmax",), scipy.special.softmax,
       _softmax_params("softmax", ("input", "dim", "_stacklevel", "dtype")))
_entry((F.log_softmax, torch.log_softmax, torch.special.log_softmax), ("log_softmax",), scipy.special.log_softmax,
       _softmax_params("log_softmax", ("input", "dim", "_stacklevel", "dtype")))
_entry((F.relu, torch.relu), ("relu",), np.maximum, RELU)
_entry((F.softplus,), (), np.logaddexp, SOFTPLUS)

_entry((torch.as_tensor, torch.tensor, torch.from_numpy), (), np.asarray, ASTENSOR)
_entry((), ("numpy", "contiguous", "cpu", "resolve_neg", "resolve_conj"), np.asarray,
       Params(("input", "force"), defaults={"force": False, "memory_format": torch.contiguous_format}))
_entry((torch.clone,), ("clone",), np.copy, Params(("input",), defaults={"memory_format": torch.preserve_format}))
_entry((), ("to",), np.asarray, _to_params())
_entry((), ("double",), np.asarray, _cast(np.float64))
_entry((), ("float",), np.asarray, _cast(np.float32))

# no derivative whatever the arguments: comparisons, shapes, constants made like a tensor, indices
# (not torch.full, full_like, new_full, arange, linspace, new_tensor, Tensor.type: their values may be
# differentiated ones; nor round: `round(x, decimals=12)` is no staircase of step 1; they are refused)
NONDIFF_FUNCTIONS = (torch.zeros, torch.ones, torch.empty, torch.eye, torch.rand, torch.randn, torch.randint,
                     torch.manual_seed, torch.get_default_dtype, torch.is_grad_enabled,
                     torch.zeros_like, torch.ones_like, torch.empty_like, torch.rand_like,
                     torch.randn_like, torch.argmax, torch.argmin, torch.argsort, torch.eq, torch.ne, torch.lt,
                     torch.le, torch.gt, torch.ge, torch.isclose, torch.allclose, torch.equal, torch.numel,
                     torch.is_tensor, torch.is_floating_point, torch.sign, torch.signbit,
                     torch.floor, torch.ceil, torch.trunc, torch.isnan, torch.isinf, torch.isfinite,
                     torch.count_nonzero, torch.nonzero, torch.any, torch.all)
NONDIFF_METHODS = ("size", "dim", "ndimension", "numel", "nelement", "is_floating_point", "is_complex",
                   "argmax", "argmin", "argsort", "eq", "ne", "lt", "le", "gt", "ge", "isclose", "allclose",
                   "equal", "sign", "signbit", "floor", "ceil", "trunc", "isnan", "isinf", "isfinite",
                   "count_nonzero", "nonzero", "any", "all", "new_zeros", "new_ones", "new_empty",
                   "element_size", "stride", "storage_offset", "is_contiguous", "data_ptr", "get_device",
                   "__len__", "__bool__", "__index__", "__int__", "__hash__", "__contains__")


_entry((), ("item",), (np.ndarray, "item"), Params(("input",)))
_entry((), ("tolist",), (np.ndarray, "tolist"), Params(("input",)))
_entry((torch.ravel,), ("ravel",), np.ravel, Params(("input",)))


def _refused(key, why: str, fix: str):
    name = f"torch.{key.__name__}" if not isinstance(key, tuple) else f"Tensor.{key[1]}"

    def refuse_rrule(*args, **kwargs):
        raise unsupported(name, why, fix)

    def refuse_frule(tangents, *args, **kwargs):
        raise unsupported(name, why, fix)

    refuse_rrule.__name__ = refuse_frule.__name__ = f"{name.replace('.', '_')}_refused"
    registry.rrule(key)(refuse_rrule)
    registry.frule(key)(refuse_frule)
    registry.srule(key)(refuse_rrule)


def _refuse_the_rest() -> None:
    """Every public method of a tensor without a rule above is refused by name when it meets a
    differentiated tensor: never numpy's ndarray method of the same name (`t.repeat(2)` tiles where
    `a.repeat(2)` repeats each element), never a silent zero."""
    for m in dir(_TENSOR):
        if (m.startswith("__") and m not in ("__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__",
                                             "__ipow__", "__imatmul__")) or m.startswith("_") \
                and not m.startswith("__"):
            continue
        if registry.get((_TENSOR, m)) is not None or not callable(getattr(_TENSOR, m, None)):
            continue
        if m.endswith("_") or m in ("__setitem__",) or m.startswith("__i"):
            _refused((_TENSOR, m), "a tensor changed in place", "compute a new tensor (`x = x + y`, torch.where)")
        elif m in ("detach", "detach_", "requires_grad_", "backward", "register_hook", "retain_grad"):
            _refused((_TENSOR, m), "torch's autograd (its derivatives, and cutting them)",
                     "differentiate with overdub alone; wrap a constant in `contexts.stop_gradient`")
        else:
            _refused((_TENSOR, m), "a tensor method outside overdub's map of torch onto numpy's rules "
                     "(contexts.rules.torch.MAP)", "write the step with mapped functions, or on numpy arrays "
                     "(`t.numpy()`)")


def _register() -> None:
    for fns, methods, theirs, p, prepare in MAP:
        for fn in fns:
            _borrow(fn, fn, theirs, p, f"torch.{getattr(fn, '__name__', 'function')}")
        for m in methods:
            _borrow((_TENSOR, m), getattr(_TENSOR, m), theirs, p, f"Tensor.{m}", prepare)
    registry.nondifferentiable(*NONDIFF_FUNCTIONS)
    for m in NONDIFF_METHODS:
        if hasattr(_TENSOR, m):
            registry.nondifferentiable((_TENSOR, m))
    _refuse_the_rest()


_register()
