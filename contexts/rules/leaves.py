"""Number types of other packages as leaves: values the engines compute with, never code they recurse into.

A number type registered here (Decimal; mpmath's `mpf`/`mpc`; sympy's expressions) is a number to every
context, as floats are:

- its operators go to the operator rules, its functions to the rules of its domain, and its methods are
  primitives too: one without a rule is refused (`NoRuleError`), never differentiated through the type's
  own Python code (whose inside — mpmath's mantissa integers, sympy's argument tuples — carries no
  derivative, so a derivative computed from it would be silently wrong);
- `contexts.rules.generic`'s math functions use the type's own (`generic.sin(mpf)` is `mpmath.sin`,
  keeping its precision; `generic.exp(Symbol)` is `sympy.exp`), so every rule written with them keeps
  the kind of its arguments;
- a gradient is seeded with the type's own one, and a zero is the type's own zero.

Registering a type of your own takes a few lines:

>>> from contexts.rules.leaves import register_scalar, kind_of
>>> class Mod7(int):
...     pass
>>> register_scalar(Mod7, name="mod7", one=lambda x: Mod7(1))
>>> kind_of(Mod7(3)).name, kind_of(Mod7(3)).one(Mod7(3))
('mod7', 1)

A package's domain is loaded when the package is first imported (`DOMAINS`), so `import contexts` does
not import sympy: `contexts.rules.sympy` registers sympy's types the moment the user's code imports it.
"""

from __future__ import annotations

import abc
import importlib
import numbers
import types
import importlib.abc
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as _np

from overdub.errors import OverdubError as _OverdubError

_NDARRAY = _np.ndarray

__all__ = ["Scalar", "Kind", "register_scalar", "kind_of", "plain_like", "DOMAINS", "load_domains", "ArrayLeaf",
           "register_array", "np_dtype", "as_float", "hosted", "holds_hosted", "hosted_refused", "HostedRefused", "is_array_leaf", "as_array", "Labels", "register_labels", "register_constant", "carries_none", "register_held_values", "HELD_VALUES", "Container",
           "register_container", "container_of", "value_class", "taken_per_element", "runs_natively", "register_c_property",
           "C_PROPERTIES", "leaf_cells"]


class Scalar(abc.ABC):
    """The virtual base class of every registered number type: `isinstance(x, Scalar)` is the engines'
    test (an ABC, so registering a type later is seen by tuples of types built earlier)."""


@dataclass(frozen=True)
class Kind:
    """What the engines need of a registered number type."""

    name: str
    one: Callable[[Any], Any]  # x -> the one of x's kind (a gradient's seed)
    zero: Callable[[Any], Any]  # x -> the zero of x's kind
    math: dict = field(default_factory=dict)  # generic name ("sin", "log", ...) -> the type's function
    complex: bool = False  # a complex type (`gradient` refuses its values as outputs, as Python's complex)


_KINDS: dict[type, Kind] = {}
_BY_TYPE: dict[type, Kind | None] = {}  # exact type -> its kind (subclasses of a registered type)


def register_scalar(cls: type, *, name: str, one: Callable | None = None, zero: Callable | None = None,
                    math: dict | None = None, complex: bool = False) -> None:
    """Register `cls` (and its subclasses) as a number type: see the module's docstring.

    `one(x)`/`zero(x)` give the one and zero of x's kind (default `type(x)(1)`/`type(x)(0)`); `math` maps
    the names of `contexts.rules.generic`'s functions ("sin", "exp", "log", "sqrt", ...) to the type's own.
    Its methods are refused unless their functions have rules (`registry.adjoint(MyNumber.method)`)."""
    if not isinstance(cls, type):
        raise TypeError(f"register_scalar takes a class, not {cls!r}")
    Scalar.register(cls)
    _KINDS[cls] = Kind(name, one or (lambda x: type(x)(1)), zero or (lambda x: type(x)(0)),
                       dict(math or {}), complex)
    _BY_TYPE.clear()


def kind_of(x) -> Kind | None:
    """The registered kind of x's type (or of its nearest registered base), or None."""
    t = type(x)
    try:
        return _BY_TYPE[t]
    except KeyError:
        pass
    kind = next((k for cls, k in reversed(_KINDS.items()) if issubclass(t, cls)), None)
    _BY_TYPE[t] = kind
    return kind


def plain_like(g, like):
    """g, a number of a registered kind, as a Python number of `like`'s type (float or complex) where it is
    a number: the derivative of a float given to mpmath or sympy is a float. A symbolic g stays as it is."""
    try:
        if type(like) is complex:
            return complex(g)
        return float(g.real if kind_of(g).complex else g)
    except (TypeError, ValueError):  # (a sympy expression with free symbols)
        return g


# -- array types of other packages ------------------------------------------------------------------------

class ArrayLeaf(abc.ABC):
    """The virtual base class of every registered array type other than numpy's (dask's `Array`): values
    the engines compute with, as ndarrays, never code they recurse into. Their operators go to the operator
    rules, numpy's functions on them to numpy's rules (the types implement `__array_ufunc__` and
    `__array_function__`, so numpy hands the call to them and it stays theirs: lazy for dask), and their
    methods to the rules of the ndarray methods of the same names. The rules never convert them
    (`as_array`): a dask array is never computed nor pulled to the client by a derivative.

    Registering a type takes one line, `register_array(MyArray)`; the type must implement numpy's
    protocols (`__array_ufunc__`, `__array_function__`) and have `shape`, `ndim` and `dtype`."""


ARRAY_TYPES: list[type] = []  # the registered array types (empty: no engine needs to look for them)


# array type -> `asarray(g, like)`, for types numpy's rules do not keep (a dict of its own: named `_KINDS` as the
# number types' above, it took their place, so that `kind_of(jax_array)` was the asarray function and
# `computed_by_numpy(Decimal(1))` was True)
_ARRAY_KINDS: dict[type, Callable] = {}


_HOSTS: dict[type, Callable] = {}  # array type -> `host(x)`, x's values as an ndarray, for types numpy cannot mix with
HOSTED: tuple = ()  # (those types, for isinstance: empty while none is registered)
_DTYPES: dict[type, Callable] = {}  # array type -> `dtype(x)`, numpy's dtype of x's, for types whose dtype is not numpy's


def register_array(cls: type, *, asarray: Callable | None = None, dtype: Callable | None = None,
                   host: Callable | None = None) -> None:
    """Register `cls` (and its subclasses) as an array type: see `ArrayLeaf`. `asarray(g, like)` makes a
    derivative g that numpy's rules computed as an ndarray into an array of `like`'s type: for a type that
    numpy's functions do not hand back to (JAX's: `np.cos(x)` of one is an ndarray), so that a derivative
    with respect to one, or of one, is of its kind (`in_kind`). `dtype(x)` gives numpy's dtype of x's values,
    for a type whose `dtype` is its own (torch's `torch.float64`): what the engines read (`np_dtype`).
    `host(x)` gives x's values as an ndarray, for a type whose arrays numpy's operators cannot take
    (`ndarray * tensor` is a TypeError): reverse mode computes their operators' cotangents on those values
    (`hosted`), and their cotangents stay ndarrays until `in_kind` makes the gradient of their kind."""
    if not isinstance(cls, type):
        raise TypeError(f"register_array takes a class, not {cls!r}")
    ArrayLeaf.register(cls)
    ARRAY_TYPES.append(cls)
    if asarray is not None:
        _ARRAY_KINDS[cls] = asarray
    if dtype is not None:
        _DTYPES[cls] = dtype
    if host is not None:
        global HOSTED
        _HOSTS[cls] = host
        HOSTED = tuple(_HOSTS)


def holds_hosted(values, depth: int = 2) -> bool:
    """Some value (or a list, tuple or dict's item, `depth` levels down) is an array of a type registered
    with `host` (a torch tensor); False at once while none is registered."""
    if not HOSTED:
        return False
    for v in values:
        if isinstance(v, HOSTED):
            return True
        if depth and (type(v) in (list, tuple) and holds_hosted(v, depth - 1)
                      or type(v) is dict and holds_hosted(v.values(), depth - 1)):
            return True
    return False


class HostedRefused(_OverdubError):
    """`hosted_refused`'s error: forward mode's entry points take it as their cue to compute the same
    derivative by reverse mode (`contexts.by_reverse`)."""


def hosted_refused(what: str, mode: str = "forward mode"):
    """Forward mode's (and sparsity's) refusal of arrays registered with `host` (torch tensors): their duals
    and tracers would hold the array and answer for it with numpy's methods (`x.transpose(0, 1)`,
    `x.std()` mean other things on a tensor), so no derivative is computed."""
    return HostedRefused(
        f"{mode} does not differentiate torch tensors ({what}): its {'duals' if mode == 'forward mode' else 'tracers'} "
        "would answer for the tensor with numpy's methods, whose meaning differs from torch's",
        fix="use reverse mode (`contexts.gradient`, `vjp`, `pullback`, `jacobian(f, x)`), which differentiates "
            "torch code; or compute on numpy arrays")


def hosted(v):
    """v as numpy's rules and operators take it: an array of a type registered with `host` as its values
    (an ndarray); lists and tuples of them item by item; anything else as it is."""
    if HOSTED and isinstance(v, HOSTED):
        for cls, host in _HOSTS.items():
            if isinstance(v, cls):
                return host(v)
    if (type(v) is list or type(v) is tuple) and HOSTED and any(isinstance(e, HOSTED) for e in v):
        return type(v)(hosted(e) for e in v)
    return v


def np_dtype(a):
    """a's dtype as numpy's (`a.dtype`): for an array of a registered type whose dtype is its own (a torch
    tensor's `torch.float32`), numpy's of its values (float32), as the engines read it (`.kind`, casts)."""
    d = a.dtype
    if _DTYPES and not isinstance(d, _np.dtype):
        for cls, conv in _DTYPES.items():
            if isinstance(a, cls):
                return conv(a)
    return d


def computed_by_numpy(x) -> bool:
    """x is an array of a registered type whose derivatives numpy's rules compute as ndarrays from its
    values (JAX's, registered with `asarray`), not in its own type (dask's, lazily)."""
    return bool(_ARRAY_KINDS) and isinstance(x, tuple(_ARRAY_KINDS))


def in_kind(g, like):
    """g, a derivative for `like`, as an array of `like`'s registered type where that type asked for it
    (`register_array(cls, asarray=...)`: JAX's); otherwise g as it is."""
    if not _ARRAY_KINDS or g is None or not isinstance(like, ArrayLeaf) or type(g) is type(like):
        return g
    for cls, asarray in _ARRAY_KINDS.items():
        if isinstance(like, cls):
            if isinstance(g, cls) or not isinstance(g, (_np.ndarray, _np.generic, int, float, complex)):
                return g
            return asarray(g, like)
    return g


def holds_array_leaf(values) -> bool:
    """Some value (or a list or tuple's item) is an array of a registered type; False at once while none
    is registered (dask not imported)."""
    if not ARRAY_TYPES:
        return False
    for v in values:
        if isinstance(v, ArrayLeaf) or type(v) in (list, tuple) and holds_array_leaf(v):
            return True
    return False


def is_array_leaf(x) -> bool:
    """x is an array of a registered foreign type (not a numpy array)."""
    return isinstance(x, ArrayLeaf)


def as_array(x, dtype=None):
    """`np.asarray(x, dtype)` that leaves an array of a registered type (a dask array) as it is (cast to
    `dtype` by its own `astype`, lazily): the rules' conversion of their arguments. A numpy array and a
    number take numpy's path first."""
    if type(x) is _NDARRAY and (dtype is None or x.dtype == dtype):
        return x
    if HOSTED and isinstance(x, HOSTED):  # (a torch tensor: its values, as numpy computes with them)
        return _np.asarray(hosted(x), dtype=dtype)
    if isinstance(x, ArrayLeaf):
        return x if dtype is None or x.dtype == dtype else x.astype(dtype)
    return _np.asarray(x, dtype=dtype)


def as_float(a):
    """An integer array as a float64 array of its type (`a.astype(float)`; a torch tensor, which has no
    `astype`, through its registered `asarray`)."""
    if hasattr(a, "astype"):
        return a.astype(float)
    return in_kind(_np.asarray(a, dtype=float), a)


class Labels(abc.ABC):
    """The virtual base class of registered types of labels (pandas' `Index`, which xarray's coordinates
    become): values with a `dtype` that carry a derivative only where it is inexact (an index of integers,
    strings or dates carries none), never looked into by the engines' tests of activity (their insides,
    C bookkeeping, would count as unknown). Registering a type: `register_labels(MyIndex)`."""


LABEL_TYPES: list[type] = []  # the registered label types (empty: no engine needs to look for them)


_EXACT_LABELS: list[Callable[[Any], bool]] = []  # tests of labels whose dtype carries no derivative


def register_labels(cls: type, exact: Callable[[Any], bool] | None = None) -> None:
    """Register `cls` (and its subclasses) as a type of labels: see `Labels`. `exact(labels)` tells labels
    of a dtype that carries no derivative beyond numpy's integers, strings and dates (pandas' strings)."""
    if not isinstance(cls, type):
        raise TypeError(f"register_labels takes a class, not {cls!r}")
    Labels.register(cls)
    LABEL_TYPES.append(cls)
    if exact is not None:
        _EXACT_LABELS.append(exact)


CONSTANT_TYPES: list[type] = []
"""Types of other packages' objects that never carry a derivative (pandas' reference trackers, C objects of
bookkeeping): `register_constant(cls)`."""


def register_constant(cls: type) -> None:
    """Register `cls` as a type whose objects carry no derivative (the engines' tests of activity and
    copies take them as constants)."""
    if not isinstance(cls, type):
        raise TypeError(f"register_constant takes a class, not {cls!r}")
    LABEL_TYPES.append(cls)  # (looked for with the labels)
    CONSTANT_TYPES.append(cls)


# class -> `values(obj)`: the values an object of the class holds (`register_held_values`)
HELD_VALUES: dict[type, Callable] = {}


def register_held_values(cls: type, values: Callable) -> None:
    """Register `cls` (exactly) as a C class whose objects carry a derivative only through the values
    `values(obj)` gives (an XML element: its texts, tails and attributes, and its children's): reverse mode
    takes an object of it for a constant where none of them may carry one, as it takes a tuple of texts (a
    C class it does not know may carry one anywhere: its methods reached with one are refused)."""
    HELD_VALUES[cls] = values


GETTER_DESCRIPTORS: dict[type, Callable[[Any], Any]] = {}
"""Classes of C descriptors whose `__get__` runs a Python function of the object (pandas' `cache_readonly`, a
Cython class): `getter(descriptor)` gives that function. Reverse mode runs it as code at every read (natively
its result's cotangent went to a field nothing reads back: every gradient 0), never reading or filling the
descriptor's cache; `cache_field` names the field the cache is kept in, which a re-run object may lack."""

CACHE_FIELDS: set[str] = set()


def register_getter_descriptor(cls: type, getter: Callable[[Any], Any], cache_field: str | None = None) -> None:
    """Register `cls`, a C class of descriptors running a Python getter: see `GETTER_DESCRIPTORS`."""
    if not isinstance(cls, type):
        raise TypeError(f"register_getter_descriptor takes a class, not {cls!r}")
    GETTER_DESCRIPTORS[cls] = getter
    if cache_field is not None:
        CACHE_FIELDS.add(cache_field)

C_PROPERTIES: dict = {}
"""Computed properties of compiled classes (getset descriptors whose getter makes a new object from the fields,
pandas' `NDArrayBacked.T`) -> the Python function computing the same from the object: reverse mode runs it as
code at every read. An unregistered one giving a new object that may carry a derivative at each read is
refused (natively its cotangent went to a field nothing reads back: 0)."""


def register_c_property(descriptor, getter: Callable[[Any], Any]) -> None:
    """Register `getter(obj)` as the code of `descriptor` (a getset descriptor of a compiled class): see
    `C_PROPERTIES`."""
    if type(descriptor) is not types.GetSetDescriptorType or type(getter) is not types.FunctionType:
        raise TypeError("register_c_property takes a getset descriptor and a Python function")
    C_PROPERTIES[descriptor] = getter


CODE_INDEXED: list[type] = []
"""Value classes (`value_class`) whose `obj[k]` is their own Python `__getitem__`, run as code in reverse mode's
forward sweep (pandas' Series and DataFrame: natively it stored into objects unrecorded, and was refused)."""


def register_code_indexed(cls: type) -> None:
    """Register `cls` (and its subclasses): see `CODE_INDEXED`."""
    if not isinstance(cls, type):
        raise TypeError(f"register_code_indexed takes a class, not {cls!r}")
    CODE_INDEXED.append(cls)

CHANGE_STAMP: list = [None]
"""Reverse mode's stamps of in-place changes, filled when it loads (`contexts.ad.structs`): `stamp()` the latest
change's, `stamp(a)` that of the last in-place change of array a's memory (0 if none). A rule making a container
of an array (a pandas block) compares them to refuse a write into it after it was made (see `pandas.py`)."""

FLOAT_HOLDERS: dict[type, Callable[[Any], bool]] = {}
"""Value classes holding arrays of numbers (pandas' Series and DataFrame) with `holds(obj)`: whether obj holds
floats or complex numbers, which an equality or ordering (`s >= 0.3`) can single out at a tie: reverse mode
checks them there as an array's (a tie of `(s >= 0.3) * s` went unchecked: 1 where there is no derivative)."""


def register_float_holder(cls: type, holds: Callable[[Any], bool]) -> None:
    """Register `cls` (and its subclasses): see `FLOAT_HOLDERS`."""
    if not isinstance(cls, type):
        raise TypeError(f"register_float_holder takes a class, not {cls!r}")
    FLOAT_HOLDERS[cls] = holds

def carries_none(x) -> bool:
    """x is an object of a registered constant type, or labels of a registered type whose dtype carries no
    derivative (integers, strings, dates); False at once while none is registered (xarray not imported)."""
    if not LABEL_TYPES:
        return False
    if CONSTANT_TYPES and isinstance(x, tuple(CONSTANT_TYPES)):
        return True
    if not isinstance(x, Labels) or getattr(x, "dtype", None) is None:
        return False
    return getattr(x.dtype, "kind", "O") in "biuUSmM" or any(exact(x) for exact in _EXACT_LABELS)


@dataclass(frozen=True)
class Container:
    """What the engines need of a registered container of arrays with labels (xarray's DataArray) or
    with units (pint's Quantity): the gradient with respect to one is of its own kind, its labels kept.

    - `cotangent(d, x, finalize)`: from reverse mode's cotangent of x (a dict of its fields' cotangents, or
      None), the gradient as a container like x: its values' cotangents, each shaped like its array by
      `finalize(g, array)` (zeros where none came);
    - `values(x)`/`rebuild(x, v)`: x's differentiated values, a numpy array, and x with values v in their
      place (forward mode seeds the values: `jacfwd(f, x)`; where `values` is None, forward mode seeds x
      as any object, its fields);
    - `held(y)`: the values an output y holds, whatever they are (forward mode's duals too);
    - `seed(y, dy)`: reverse mode's cotangent of an output y (the dict of its fields' cotangents) from dy,
      a cotangent of its values: `gradient` seeds a container holding one number with `seed(y, 1.0)`, and
      `pullback`'s `back(dy)` takes dy so. Without it, a container output is refused: its fields'
      cotangents are not a number, and seeding one would silently give zero;
    - `of_output(g, y)`: the gradient g of an output y of this kind, as its kind says (pint: g times y's
      units);
    - `per_input(dy, x)`: forward mode's derivative with respect to x from dy, the output's tangent where
      x's `held` values are seeded with ones (pint: dy per x's unit). With it, forward mode seeds x's
      values inside x (a Quantity of dual magnitudes, whose arithmetic keeps units), not x as an object;
      then `tangent_values(t, x)` gives the values seeded for a tangent t of x (`jvp`: a Quantity t's
      magnitude in x's units, a plain t as it is);
    - `native_operators`: its operators run natively under forward mode's and sparsity's contexts, as numpy's
      protocols hand their duals and tracers to its code (xarray's, pint's); False where its operators
      check their operands' types (array_api_strict's `Array * x` takes arrays and Python numbers only):
      they run as code under the context, which answers `isinstance(x, float)` for the dual's value."""

    cotangent: Callable[[Any, Any], Any]
    values: Callable[[Any], Any] | None = None
    rebuild: Callable[[Any, Any], Any] | None = None
    held: Callable[[Any], Any] | None = None
    seed: Callable[[Any, Any], Any] | None = None
    of_output: Callable[[Any, Any], Any] | None = None
    per_input: Callable[[Any, Any], Any] | None = None
    tangent_values: Callable[[Any, Any], Any] | None = None
    native_operators: bool = True


CONTAINERS: dict[type, Container] = {}


def register_container(cls: type, *, cotangent: Callable, values: Callable | None = None,
                       rebuild: Callable | None = None, held: Callable | None = None,
                       seed: Callable | None = None, of_output: Callable | None = None,
                       per_input: Callable | None = None, tangent_values: Callable | None = None,
                       native_operators: bool = True) -> None:
    """Register `cls` (and its subclasses) as a container of arrays with labels: see `Container`."""
    if not isinstance(cls, type):
        raise TypeError(f"register_container takes a class, not {cls!r}")
    CONTAINERS[cls] = Container(cotangent, values, rebuild, held, seed, of_output, per_input, tangent_values,
                                native_operators)
    if not native_operators and cls not in OPAQUE_CONTAINERS:
        OPAQUE_CONTAINERS.append(cls)


OPAQUE_CONTAINERS: list[type] = []
"""The registered containers whose operators are code (`native_operators=False`): numpy's functions and their
rules do not compute with them (array_api_strict's `Array`); forward mode and sparsity run their operators under
the context (`runs_natively`), reverse mode runs a numpy or scipy Python function with a rule given one as its
code."""


def container_of(x) -> Container | None:
    """The registered container kind of x's type (or of its nearest registered base), or None."""
    if not CONTAINERS:
        return None
    return next((c for cls, c in CONTAINERS.items() if isinstance(x, cls)), None)


UNIT_TYPES: list = []
"""[(class, quantity)]: classes of units (pint's `Unit` and its subclasses) with `quantity(magnitude, unit)`;
forward mode's `dual * unit` and `dual / unit` make the quantity of the dual with it (contexts.rules.pint)."""


# -- domains loaded with their package -----------------------------------------------------------------

DOMAINS = {"mpmath": "contexts.rules.mpmath", "sympy": "contexts.rules.sympy", "dask.array": "contexts.rules.dask",
           "pint": "contexts.rules.pint", "xarray": "contexts.rules.xarray", "pandas": "contexts.rules.pandas",
           "numexpr": "contexts.rules.numexpr", "jax": "contexts.rules.jax", "torch": "contexts.rules.torch",
           "array_api_strict": "contexts.rules.array_api_strict", "scipy.stats": "contexts.rules.scipy_stats",
           "numba": "contexts.rules.numba", "bottleneck": "contexts.rules.bottleneck", "KDEpy": "contexts.rules.kdepy",
           "transformations": "contexts.rules.transformations", "networkx": "contexts.rules.networkx",
           "xml.etree.ElementTree": "contexts.rules.xml_trees", "pyproj": "contexts.rules.pyproj"}
"""package -> the rules module that registers its types and functions, imported with the package."""

_loaded: set[str] = set()


def load_domains() -> None:
    """Import the domain of every package of `DOMAINS` already imported (and watch for the others)."""
    for package, module in DOMAINS.items():
        if package in sys.modules and package not in _loaded and _complete(sys.modules[package]):
            _loaded.add(package)
            importlib.import_module(module)
    if not any(type(f) is _DomainFinder for f in sys.meta_path) and _loaded != DOMAINS.keys():
        sys.meta_path.insert(0, _DomainFinder())


def _complete(module) -> bool:
    spec = getattr(module, "__spec__", None)
    return not getattr(spec, "_initializing", False)


class _DomainFinder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: when a package of `DOMAINS` is imported, wraps its loader so that the
    domain's rules are registered once the package has run."""

    def find_spec(self, name, path, target=None):
        if name not in DOMAINS or name in _loaded:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module):
            run(module)
            if name not in _loaded:
                _loaded.add(name)
                importlib.import_module(DOMAINS[name])

        try:
            loader.exec_module = exec_module  # an instance attribute: the finder's own loader only
        except AttributeError:  # pragma: no cover - a loader with slots: load the domain later
            return spec
        return spec


# -- the standard library's own --------------------------------------------------------------------------

def _register_decimal() -> None:
    import decimal

    def sign(x):
        return decimal.Decimal((x > 0) - (x < 0))

    register_scalar(decimal.Decimal, name="decimal", math={
        "exp": decimal.Decimal.exp, "log": decimal.Decimal.ln, "sqrt": decimal.Decimal.sqrt,
        "log10": decimal.Decimal.log10, "sign": sign, "fabs": abs})


_register_decimal()


# -- classes whose objects are values, not code ------------------------------------------------------------

def value_class(kind: type) -> bool:
    """Objects of `kind` are values the engines compute with by the objects' own operators, run natively as
    Python dispatches them (each side's special methods answering NotImplemented for what they do not
    know, the duals' and tracers' taking over): numbers (`numbers.Number`: Fraction, Decimal), registered
    scalars, arrays, containers and labels, numpy's own classes (np.matrix, masked arrays, poly1d) and
    objects taking numpy's functions by its protocols written in Python (pandas', pint's, xarray's,
    astropy's). A class of the user's or of a library other than these (a vector class with `__add__`) is
    code: a context whose values stand in for others runs its special methods under itself; so are
    numpy.polynomial's series (`Polynomial * Polynomial` natively met its duals in `np.array`, refused, and
    its `except Exception: return NotImplemented` made that a TypeError)."""
    found = _VALUE_CLASSES.get(kind)
    if found is None:
        found = _VALUE_CLASSES[kind] = bool(
            issubclass(kind, (numbers.Number, Scalar, ArrayLeaf, Labels))
            or any(issubclass(kind, cls) for cls in (*CONTAINERS, *CONSTANT_TYPES))
            or (kind.__module__ or "").split(".")[0] == "numpy" and not kind.__module__.startswith("numpy.polynomial")
            or type(getattr(kind, "__array_ufunc__", None)) is types.FunctionType
            or type(getattr(kind, "__array_function__", None)) is types.FunctionType)
        if len(_VALUE_CLASSES) > 4096:  # (bounded: classes made at run time)
            _VALUE_CLASSES.clear()
    return found


_VALUE_CLASSES: dict = {}


def taken_per_element(obj, *stand_ins) -> bool:
    """An ndarray on the left of an operator takes obj as an element of an object array, applying obj's
    reflected method to each element: obj is no array (nor one of the engine's `stand_ins`) and defers to
    numpy neither by `__array_ufunc__` nor by a higher `__array_priority__` (scipy's sparse matrices)."""
    return (not isinstance(obj, (_np.ndarray, *stand_ins)) and not hasattr(type(obj), "__array_ufunc__")
            and getattr(type(obj), "__array_priority__", 0.0) <= 0.0)


def runs_natively(cls) -> bool:
    """Objects of cls run their operators natively under a context whose values stand in for others (forward
    mode's, sparsity's `operator_for`): the engine's own classes, and values (`value_class`)."""
    from .frames import is_engine_class
    return is_engine_class(cls) or value_class(cls) and not (
        OPAQUE_CONTAINERS and issubclass(cls, tuple(OPAQUE_CONTAINERS)))


def leaf_cells(closure: tuple) -> bool:
    """Every cell holds a value that cannot hold a function (a module, a number, a string, a float array, a
    builtin): a twin an engine keeps with these cells cannot keep fn alive through them. A cell holding fn
    (a nested function calling itself), or a list, object or function that may reach it, would: fn would
    never die, and the twin never be dropped (the memory of issue 17's exec'd functions)."""
    for c in closure:
        try:
            v = c.cell_contents
        except ValueError:  # (an empty cell: a name the enclosing function assigns later)
            return False
        t = type(v)
        if t not in _LEAF_CELL_TYPES and not (t is _np.ndarray and v.dtype.kind in "biufc"):
            return False
    return True


_LEAF_CELL_TYPES = frozenset({types.ModuleType, float, int, bool, complex, str, bytes, type(None), _np.float64,
                              _np.float32, _np.int64, _np.bool_, types.BuiltinMethodType, _np.ufunc})
