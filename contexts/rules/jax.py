"""JAX's arrays as leaves (`contexts.rules.leaves.ArrayLeaf`): values, never code.

A JAX array computes in compiled code that Python cannot follow, and JAX's Python (`jax.numpy`, the
array's methods) ends in that code, so JAX's modules are opaque (`overdub.opaque("jax")`): a JAX function
reached with a differentiated value takes a rule or is refused by name, never differentiated through
JAX's own code. The rules are numpy's: `jax.numpy`'s functions and the array's methods named as numpy's
get the rules of numpy's functions and ndarray methods of the same names (their arguments mean what
numpy's mean), with two changes:

- the primal is JAX's own call (`jnp.sin(x)` stays a JAX array, also under forward mode, whose numpy
  rule computes `np.sin` of the values as well);
- every cotangent and tangent given for a JAX array, or computed for one, is a JAX array
  (`jnp.asarray`): a gradient with respect to a JAX array is a JAX array of its dtype.

numpy's rules compute on a JAX array's values, converted by numpy (`np.asarray`: a view of the buffer on
the CPU). On an accelerator that conversion copies to the host; a derivative is then right but slow.

Code written against the array API (`xp = array_namespace(x)`, array-api-compat's) gets `jax.numpy` for a
JAX array, whose functions these are. Double precision needs JAX's flag (`jax_enable_x64`); in single
precision, derivatives are float32 as the values are.

Loaded when `jax` is first imported, once its package has run (`leaves.DOMAINS`): `import contexts` does not
import JAX.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from overdub import opaque

from .leaves import register_array
from .numpy._util import unsupported
from .registry import Rule, registry

__all__: list[str] = []

_ARRAY = jax.Array

def _as_jax(g, like):
    return jnp.asarray(g, dtype=like.dtype if like.dtype.kind in "fc" and np.result_type(g).kind in "fc" else None)


register_array(_ARRAY, asarray=_as_jax)
opaque("jax")  # its Python code is never recursed into: a function without a rule is refused by name


def _kept(g, like):
    """g (a cotangent or tangent numpy's rule computed) as a JAX array where `like` (the value it is
    for) is one; otherwise as it is."""
    if g is None or not isinstance(like, _ARRAY) or isinstance(g, _ARRAY):
        return g
    if isinstance(g, (np.ndarray, np.generic, float, int, complex)):
        return _as_jax(g, like)
    return g  # (a refusal's marker, a forward dual: the engines' own)


# -- which of JAX's functions take numpy's rules -----------------------------------------------------------

def _signature(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


_ANY = object()  # numpy's `<no value>`: the keyword is not passed on, whatever JAX's default is

# keywords that choose how, not what: JAX's defaults may differ without changing the values
_HOW = frozenset({"stable", "kind", "optimize", "precision", "casting", "subok", "signature", "out",
                  "preferred_element_type", "out_sharding"})

_ALIASES = {"min": "a_min", "max": "a_max"}  # (jnp.clip's names for numpy's positions)

# (function, keyword) whose JAX default None means numpy's default, as JAX documents it
_NONE_IS_NUMPYS = frozenset({("arange", "step")})


def _default(p):
    d = p.default
    return None if d is p.empty else _ANY if d is np._NoValue else d


@dataclass(frozen=True)
class _Terms:
    """What numpy's rule can take of a call of JAX's function: the leading positional arguments whose
    meaning is numpy's at the same position, and the keywords numpy's function names (None: any)."""

    positional: int
    keywords: frozenset | None

    def check(self, name: str, args: tuple, kwargs: dict) -> None:
        if len(args) > self.positional:
            raise unsupported(name, f"{len(args)} arguments by position (JAX's meaning of the ones after "
                              f"the first {self.positional} is not numpy's)", "pass them by keyword")
        if self.keywords is not None:
            for k in kwargs:
                if k not in self.keywords:
                    raise unsupported(name, f"the keyword {k}= (JAX's own, which numpy's rule does not take)",
                                      "leave it at its default, or compute this step on numpy arrays")


_EVERY = _Terms(1 << 30, None)


def _terms(ours, theirs) -> _Terms | None:
    """The terms on which JAX's function may take numpy's rule: None where the two do not take their
    arguments alike (a keyword both name with different defaults: `jax.nn.softmax`'s axis=-1 is not
    scipy's axis=None, and numpy's rule would differentiate another function). A ufunc, or a numpy function
    without a signature, takes any call numpy's rule takes."""
    if isinstance(theirs, np.ufunc):  # (JAX's ufuncs take the arrays as numpy's do; `where` is all by default)
        return _Terms(theirs.nin, frozenset())
    mine, yours = _signature(ours), _signature(theirs)
    if yours is None:
        return _EVERY
    if mine is None:
        return None
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    mine_pos = [p.name for p in mine.parameters.values() if p.kind in positional]
    yours_pos = [p.name for p in yours.parameters.values() if p.kind in positional]
    same = 1  # (the first is the array, named as each library likes)
    while same < min(len(mine_pos), len(yours_pos)) and \
            _ALIASES.get(mine_pos[same], mine_pos[same]) == yours_pos[same]:
        same += 1
    if all(any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in sig.parameters.values())
           for sig in (mine, yours)):
        same = 1 << 30  # (`einsum(subscripts, *operands)`)
    for name, p in yours.parameters.items():
        q = mine.parameters.get(name)
        if q is None or name in _HOW or _default(p) is _ANY or (
                _default(q) is None and (getattr(ours, "__name__", ""), name) in _NONE_IS_NUMPYS):
            continue
        try:
            if not (_default(p) is _default(q) or bool(_default(p) == _default(q))):
                return None
        except Exception:  # (an array default, a comparison that raises: not provably the same)
            return None
    var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in yours.parameters.values())
    return _Terms(same, None if var_kw else frozenset(yours.parameters) - {"out"})


def _host(v):
    """v with its JAX arrays as ndarrays (numpy's view of each buffer on the CPU), as numpy's rules take
    them; lists and tuples of them too (`jnp.concatenate([x, y])`)."""
    if isinstance(v, _ARRAY):
        return np.asarray(v)
    if type(v) is list or type(v) is tuple:
        return type(v)(_host(e) for e in v)
    return v


def _kind_adjoint(adjoint, terms: _Terms, name: str):
    def adjoint_in_kind(dy, y, *args, **kwargs):
        terms.check(name, args, kwargs)
        gs = adjoint(_host(dy), _host(y), *map(_host, args), **{k: _host(v) for k, v in kwargs.items()})
        if gs is None:
            return gs
        return tuple(_kept(g, a) for g, a in zip(gs, args)) + tuple(gs[len(args):])

    adjoint_in_kind.__name__ = adjoint_in_kind.__qualname__ = getattr(adjoint, "__name__", "adjoint")
    return adjoint_in_kind


def _kind_rrule(rrule, ours, terms: _Terms, name: str):
    """numpy's `rrule` (the primal and its pullback at once) for JAX's function: the primal JAX's own."""
    def rrule_in_kind(*args, **kwargs):
        terms.check(name, args, kwargs)
        _, back = rrule(*map(_host, args), **{k: _host(v) for k, v in kwargs.items()})
        y = ours(*args, **kwargs)

        def pullback_in_kind(dy):
            gs = back(_host(dy))
            return gs if gs is None else tuple(_kept(g, a) for g, a in zip(gs, args)) + tuple(gs[len(args):])
        return y, pullback_in_kind

    rrule_in_kind.__name__ = rrule_in_kind.__qualname__ = getattr(rrule, "__name__", "rrule")
    return rrule_in_kind


def _kind_frule(frule, ours, terms: _Terms, name: str):
    def frule_in_kind(tangents, *args, **kwargs):
        terms.check(name, args, kwargs)
        _, t = frule(_host(tuple(tangents)), *map(_host, args), **{k: _host(v) for k, v in kwargs.items()})
        y = ours(*args, **kwargs)
        if isinstance(y, tuple) and isinstance(t, tuple):
            return y, tuple(_kept(ti, yi) for ti, yi in zip(t, y))
        return y, _kept(t, y)

    frule_in_kind.__name__ = frule_in_kind.__qualname__ = getattr(frule, "__name__", "frule")
    return frule_in_kind


def _mirror(ours, rule: Rule | None, theirs=None) -> bool:
    """Give `ours` (JAX's function) numpy's `rule` (of `theirs`, the function or method of the same name
    and meaning), its values kept JAX's; False where numpy's rule does not carry over (in place, iterating,
    stand-ins, arguments taken otherwise)."""
    if rule is None or rule.mutating or rule.inplace is not None or rule.iterates or rule.stand_in is not None:
        return False
    if registry.get(ours) is not None:
        return True
    if rule.kind == "nondiff":  # (no derivative whatever the arguments mean: `jnp.arange(1.0, 5.0)`, `argmax`)
        registry.nondifferentiable(ours)
        return True
    terms = _EVERY if theirs is None else _terms(ours, theirs)
    if terms is None:
        return False
    if rule.adjoint is None and rule.rrule is None and rule.frule is None:
        return False
    name = f"jax's {getattr(ours, '__name__', 'function')}"
    if rule.adjoint is not None:
        registry.adjoint(ours, kind=rule.kind)(_kind_adjoint(rule.adjoint, terms, name))
    elif rule.rrule is not None:
        registry.rrule(ours, kind=rule.kind)(_kind_rrule(rule.rrule, ours, terms, name))
    if rule.frule is not None:
        registry.frule(ours, kind=rule.kind)(_kind_frule(rule.frule, ours, terms, name))
    if theirs is not None:
        registry.srule(ours)(_on_tracers(theirs, terms, name))  # sparsity: numpy's function on the tracers
    return True


def _on_tracers(theirs, terms: _Terms, name: str):
    def by_numpy(*args, **kwargs):
        terms.check(name, args, kwargs)
        return theirs(*args, **kwargs)
    by_numpy.__name__ = f"{getattr(theirs, '__name__', 'fn')}_by_numpy"
    return by_numpy


def _mirror_module(mine, yours) -> None:
    for name in dir(mine):
        ours, theirs = getattr(mine, name, None), getattr(yours, name, None)
        if name.startswith("_") or not callable(ours) or theirs is None or isinstance(ours, type):
            continue
        _mirror(ours, registry.get(theirs), theirs)


def _mirror_numpy() -> None:
    """jax.numpy's functions named as numpy's (and its linalg and fft as numpy's, jax.scipy.special as
    scipy.special), and the array's methods named as ndarray's, get numpy's rules."""
    import jax.scipy.special
    import scipy.special

    from . import numpy as _numpy_rules  # noqa: F401  (scipy.special's rules registered)

    _mirror_module(jnp, np)
    _mirror_module(jnp.linalg, np.linalg)
    _mirror_module(jnp.fft, np.fft)
    _mirror_module(jax.scipy.special, scipy.special)
    for name in ("logsumexp", "softmax", "log_softmax"):  # jax.nn's, where its defaults are scipy's
        _mirror(getattr(jax.nn, name), registry.get(getattr(scipy.special, name)), getattr(scipy.special, name))
    _mirror(jax.nn.sigmoid, registry.get(scipy.special.expit), scipy.special.expit)
    impl = type(jnp.zeros(0))  # (ArrayImpl: the concrete class, whose methods these are)
    for name in dir(impl):  # the array's methods: Python functions of JAX's (`x.sum` is `_sum`)
        fn = getattr(impl, name, None)
        if name.startswith("__") or not callable(fn) or isinstance(fn, type):
            continue
        _mirror(fn, registry.rules.get((np.ndarray, name)))


_mirror_numpy()
