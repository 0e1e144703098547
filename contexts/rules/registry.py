"""The one rule registry: each primitive's reverse, forward and sparsity rules side by side.

Conventions (every context relies on them):

- Keys: a function, builtin or ufunc is its own key; a method of a C type (`list.append`,
  `np.ndarray.sum` reached as a bound method) is keyed by `(type, name)`. `key_of` computes it.
- Reverse, static form (preferred, no closure per call): `adjoint(dy, y, *args, **kwargs)` returns a tuple
  with one cotangent per positional argument (`None` = zero / not differentiable). Keyword arguments are
  not differentiated, unless the tuple carries one more, trailing, element: a dict of keyword cotangents
  (`{"b": db}`). The engine stores `y`, `args` and `kwargs` and calls it in the reverse pass.
- Reverse, closure form (ChainRules' rrule): `rrule(*args, **kwargs) -> (y, pullback)`, with
  `pullback(dy) -> tuple` as above. Use it when the pullback needs intermediates of the primal.
  Name the pullback `<fn>_pullback`.
- Forward: `frule(tangents, *args, **kwargs) -> (y, dy)` with one tangent per positional argument
  (`None` = zero). Tangents may carry a leading "chunk" of directions only where a rule says so.
- Forward, higher-order primitives (a Python callback whose closure may hold duals): `duals(*args,
  **kwargs)`, the primitive's own form on duals, called by forward mode in place of the primitive.
- Sparsity: a spec (`contexts.rules.sparsity_specs`: `LINEAR`, `Reduction(...)`, `STRUCTURAL`, ...), data
  declared beside the primitive's other rules with `registry.sparsity(spec, *fns)` and interpreted by
  `contexts.sparsity`; or, where the rule is code on tracers, an `srule(*args, **kwargs)` registered by the
  sparsity package (the domain file then declares `Custom(...)`, naming where the code is). Without
  either, the sparsity context derives what it can from `kind`.
- Complex numbers follow Zygote's convention: for y = f(z) holomorphic, the pullback is dy * conj(f'(z));
  the gradient of a real loss l at z = x + iy is dl/dx + i dl/dy.
- Rules use generic arithmetic (`contexts.rules.generic`) so Fractions stay exact and ufloats keep their
  uncertainty; a rule never converts its inputs to float.

Registration after a function was already differentiated takes effect at once: engines look rules up
when a call executes, never bake them into generated code.
"""

from __future__ import annotations

import ast
import numbers
import operator
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from overdub.errors import OverdubError
from overdub.ops import HEAPTYPE
from overdub.passes import add_source_finder as _add_source_finder

from .leaves import ArrayLeaf, Scalar, value_class
from .sparsity_specs import Custom, SparsitySpec

__all__ = ["Registry", "Rule", "registry", "key_of", "call_key", "MissingRule", "NoRuleError", "NoDerivative",
           "NoClosedForm", "objects_of_classes", "PLAIN_OPERANDS", "number_with_own_methods", "dispatches_on_numbers",
           "own_number_operands"]


class MissingRule(OverdubError):
    """A primitive was reached with values its transformation must follow, and the registry has no rule of
    that transformation for it. One base for every mode, so that `except MissingRule` catches reverse
    mode's `NoRuleError`, forward mode's `NoForwardRule` and sparsity's `NoSparsityRule` alike."""


class NoRuleError(MissingRule):
    """Reverse mode: a C function was reached with differentiable inputs and has no rule."""


class NoDerivative(MissingRule):
    """A primitive was differentiated in an argument its rules know no derivative in (no closed form:
    hyp2f1's parameters a, b, c; a spline's knots). Every mode refuses it; none returns a zero."""


class NoClosedForm:
    """The partial derivative of an argument that has none the rules can compute, given in place of a
    partial (`ufunc_rule(sc.hyp2f1, NoClosedForm("scipy.special.hyp2f1", "a"), ..., dz)`).

    Forward mode calls it with the argument's tangent, and it raises `NoDerivative`. Reverse mode cannot
    tell at the call whether the argument is differentiated (a constant in a variable looks the same), so
    the adjoint returns `cotangent()`: a value that is dropped where the argument is not differentiated and
    raises `NoDerivative` on any use (`cotangents.Refused`, ChainRules' `@not_implemented`). For sparsity
    the argument counts as a dependency (the derivative exists, only its value is unknown here)."""

    __slots__ = ("function", "argument", "position", "fix", "where")

    def __init__(self, function: str, argument: str, position: int | None = None, fix: str | None = None) -> None:
        self.function, self.argument, self.position = function, argument, position
        self.where = None
        self.fix = fix or f"keep {argument} constant (it is then not differentiated; `gradient(f, x, a, wrt=0)` " \
                          f"leaves an argument of yours out), or differentiate {function} in {argument} with " \
                          f"contexts.rules.check.numerical_gradient"

    def error(self) -> NoDerivative:
        return NoDerivative(f"{self.function} has no derivative in its argument {self.argument} that the rules "
                            f"know (no closed form): it cannot be differentiated in {self.argument}", fix=self.fix,
                            where=self.where)

    def __call__(self, y, *args):
        """Refuses, unless the argument (at `position`) is an integer: it has no tangent space, as for
        every rule (the derivative of hyp2f1 in an integer a is not asked for)."""
        if self.position is not None and self.position < len(args) and _integral(args[self.position]):
            return 0
        raise self.error()

    def refuses(self, tangent, value) -> bool:
        """Forward mode: whether this tangent of the argument asks for the derivative. Not for an integer
        argument, nor for a plain tangent that is zero everywhere (its term is zero whatever the
        derivative); a dual tangent (a derivative of a derivative) always does."""
        if tangent is None or _integral(value):
            return False
        if type(tangent) is float or type(tangent) is np.ndarray and tangent.dtype.kind in "fc":
            return bool(np.any(tangent != 0))
        return True

    def cotangent(self):
        """Refused, naming the user's line the call is on (the adjoint's frame, the first outside the engine:
        the refusal is raised later, where the cotangent reaches a differentiated input)."""
        from .cotangents import Refused
        from .frames import outside_engine
        placed = NoClosedForm(self.function, self.argument, self.position, self.fix)
        frame = outside_engine(sys._getframe(1))
        if frame is not None:
            placed.where = f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_qualname}"
        return Refused(placed)

    def __repr__(self) -> str:
        return f"NoClosedForm({self.function!r}, {self.argument!r})"


_BUILTIN_METHOD = types.BuiltinMethodType  # also the type of bound methods of C types
# the bound methods of C types defined by `METH_METHOD` (a class made by `PyType_FromSpec`: `re.Pattern`'s,
# `array.array`'s; `xml.etree`'s Element's since Python 3.12), a subclass of the above, `builtin_method`
C_METHOD = type(__import__("array").array("d").extend)


def library_hint(fn: Any) -> str:
    """For a refusal's message: why a function of a known compiled library has no rule and what to do ('' for
    others): pandas' blocks (a Series built from differentiated values) and numba's compiled functions, whose
    names alone (`NumpyBlock`, `_DUFunc.__call__`) left users guessing (sweep H)."""
    owner = getattr(fn, "__self__", None)
    modules = [getattr(fn, "__module__", None) or "", type(fn).__module__ or ""]
    if owner is not None:
        modules.append(type(owner).__module__ or "")
    if any(m.startswith("pandas") for m in modules):
        return ("; pandas computes this in a compiled kernel of its own, which reverse mode differentiates only "
                "where it has a rule (arithmetic, reductions, shift, diff, cumulative sums, rolling sum/mean/var/std/"
                "max/min, ewm mean): compute on numpy arrays (`s.to_numpy()`) and build the pandas object from the "
                "result")
    if any(m.startswith("numba") for m in modules):
        return ("; a numba-compiled function runs machine code: an @njit or @vectorize one is differentiated as "
                "its Python code, a @guvectorize or @cfunc one is not: call its Python function (`f.py_func`) "
                "or give it a rule")
    return ""


def qualified_name(fn: Any) -> str:
    """`module.name` of a callable for messages; a ufunc by where it is found (scipy.special's ufuncs say
    `numpy` as their module: `scipy.special.ellipj` was named `numpy.ellipj`)."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    module = getattr(fn, "__module__", None) or type(fn).__module__
    if isinstance(fn, np.ufunc) and getattr(np, fn.__name__, None) is not fn:
        for where in ("scipy.special",):
            found = sys.modules.get(where)
            if found is not None and getattr(found, fn.__name__, None) is fn:
                return f"{where}.{fn.__name__}"
        # (a library's own ufunc, gsw's TEOS-10 `rho`: the shortest module name holding it, public first; said
        # `numpy.rho` before. Asked for messages only: a walk of the loaded modules)
        holders = []
        for where, found in list(sys.modules.items()):
            try:
                if vars(found).get(fn.__name__) is fn:
                    holders.append(where)
            except TypeError:  # (no __dict__)
                continue
        if holders:
            where = min(holders, key=lambda w: ("._" in w or w.startswith("_"), w.count("."), len(w)))
            return f"{where}.{fn.__name__}"
    return f"{module}.{name}"


def key_of(fn: Any) -> Any:
    """The registry key of a callable: itself, or `(type, name)` for a bound method of a C type."""
    if type(fn) is _BUILTIN_METHOD or type(fn) is C_METHOD:
        owner = fn.__self__
        if owner is not None and not isinstance(owner, types.ModuleType):
            return (type(owner), fn.__name__)
    elif type(fn) is types.MethodWrapperType:  # e.g. (1.0).__add__
        return (type(fn.__self__), fn.__name__)
    return fn


# the keyword options with which a reduction may take its `hot_reduce` case
HOT_REDUCE_OPTIONS = frozenset({"axis", "keepdims"})


@dataclass(slots=True)  # slots: the engines read a rule's fields on every call
class Rule:
    """Everything known about one primitive."""

    fn: Any
    adjoint: Callable | None = None
    rrule: Callable | None = None
    frule: Callable | None = None
    srule: Callable | None = None  # sparsity as code on tracers; wins over `sparsity`
    sparsity: SparsitySpec | None = None  # sparsity as data: a spec of `contexts.rules.sparsity_specs`
    kind: str | None = None
    meta: dict = field(default_factory=dict)
    # the adjoint takes (S, dself, dy, y, *args): it undoes an in-place change (S: `cotangents.UndoSession`)
    mutating: bool = False
    # for a mutating rule: `saves(*args, **kw)` runs before the primitive and keeps what the adjoint needs
    # to undo the change exactly (`ufunc.at`'s old elements: subtracting again rounds); its adjoint then
    # gets `(y, saved)` for y
    saves: Callable | None = None
    # for primitives that overwrite an array argument in place: `inplace(*args, **kw) -> (y, back)` runs
    # the primitive keeping what it overwrote; `back(S, dy, dself) -> (dself, cotangent deltas per
    # argument)` reads the cotangents the caller holds for the arguments with `S.held(i)`
    inplace: Callable | None = None
    # the position of the argument an in-place primitive overwrites, for one not known by name (a C kernel
    # writing into an output array it is given: `_ppoly.evaluate(c, x, xp, dx, extrapolate, out)`):
    # reverse mode's generated code then moves the cotangents of variables viewing it as for `np.copyto`
    writes: int | None = None
    # the names of the leading positional parameters, for a C function its callers pass them to by keyword
    # (f2py's LAPACK wrappers, `drv(a=a1, lower=...)` in scipy.linalg.eigh): forward mode moves those given
    # by keyword to their positions, so that the frule gets their tangents
    positional: tuple = ()
    iterates: bool = False  # the primitive iterates its first argument (a Python __iter__ is differentiated)
    # a faster implementation with fn's results, for engines that run the primitive themselves (numpy's
    # reductions skip their Python wrapper on plain arrays)
    impl: Callable | None = None
    # `hot(dy, y, x)`: the cotangent of a one-argument primitive's float64 array x, for a cotangent dy of x's
    # shape and dtype (the common case), which engines may call instead of `adjoint`; registering another
    # adjoint drops it
    hot: Callable | None = None
    # `hot_reduce(dy, y, x, axis=None, keepdims=False)`: the same for a reduction of a float64 array x with
    # at most those options (HOT_REDUCE_OPTIONS), or None where dy is not the usual case (the engine then
    # calls `adjoint`)
    hot_reduce: Callable | None = None
    # `hot_one(dy, y, a, b, i)`: the cotangent of argument i alone of a two-argument primitive, when the
    # other is not differentiated (ReLU's `np.maximum(x, 0.0)`, `np.power(x, 3.0)`), args[i] a float64
    # array and dy a float64 cotangent of its shape; the other argument's partial is then never computed
    hot_one: Callable | None = None
    # `hot_float(y, x)`: the partial dy/dx of a one-argument primitive at a float x whose value y is a float
    # (math's functions, `register_elementwise`): engines may pull back a nonzero float cotangent dy as
    # `dy * hot_float(y, x)` instead of calling `adjoint`, which they call where it raises ZeroDivisionError
    # (a singular point). Setting `adjoint` or `frule` in any way drops it (`__setattr__`): a stale partial
    # beside a new rule would be a wrong derivative
    hot_float: Callable | None = None
    # the primitive as Python code (`operator.mul` is `a * b`, `builtins.abs` is `type(x).__abs__(x)`): what
    # engines differentiate instead of the numeric rules when an operand is an object of a class whose
    # special methods are its own (they may mean anything, not arithmetic)
    python: Callable | None = None
    # the primitive written as Python code doing the same work (a C function permuting by a seeded stream,
    # `bisect.insort`'s ordered insert): every engine differentiates that code in fn's place, always. For a
    # Cython class's method (registered on the class's function) it takes the object first.
    stand_in: Callable | None = None
    # a higher-order primitive (one calling a Python function it is given, `scipy.integrate.quad`) as a
    # function taking and returning duals itself: forward mode calls it in place of fn, since the duals
    # that perturb the call may sit where no frule sees them (in the callback's closure)
    duals: Callable | None = None
    # a transformation's own compiled form of the fields above, made on first use by the one that uses it
    # (reverse mode's call plan); setting any field drops it, so a rule changed later is never run stale
    plan: Any = field(default=None, repr=False, compare=False)

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name != "plan":
            object.__setattr__(self, "plan", None)
            if name == "adjoint" or name == "frule":  # (forward mode's tangent twin multiplies by it too)
                object.__setattr__(self, "hot_float", None)

    @property
    def nondifferentiable(self) -> bool:
        return self.kind == "nondiff"


_HOT_FIELDS = frozenset({"hot", "hot_reduce", "hot_one", "hot_float"})  # an adjoint's fast cases (Rule)


class Registry:
    """Rules keyed by primitive. One instance, `registry`, is shared by every context."""

    def __init__(self) -> None:
        self.rules: dict[Any, Rule] = {}
        self.version = 0  # bumped on every registration, for anyone who caches lookups
        self.families: list[tuple[Callable, Callable]] = []  # (test, make): see `family`
        # the code of nondifferentiable generator functions: the generators they make carry no derivative
        self.constant_generators: set[types.CodeType] = set()
        # type -> `made(fn) -> (stand-in, arguments first) or None` for callables of that type made at run time
        # that stand for Python code (a ufunc of `np.frompyfunc`): asked by `stand_in_of`
        self.made_stand_ins: dict[type, Callable] = {}
        # the files of rules modules whose stand-ins are code run as the user's, arrays they make fresh ones
        # (`rules.numba`'s kernels filling outputs made by np.empty): forward mode's duals can be stored there
        self.code_files: set[str] = set()
        self.stand_in_ids: set[int] = set()  # (the callables with a `Rule.stand_in`, by identity: `stand_in_of`)
        self.stand_in_methods: set[str] = set()  # (the names of C types' methods with one, keyed (type, name))
        # `find(fn, owner) -> ast.FunctionDef | None`: the text a library made a function from by `exec` (no file
        # holds it), for a function met without source, with the object it was called on (`generated_source`)
        self.source_finders: list[Callable] = []
        # the names of the primitives declaring the positional argument they write (`Rule.writes`) -> its
        # position: the activity analysis reads a call by name, before any callee is resolved
        self.written_by_name: dict[str, int] = {}

    # -- lookup --------------------------------------------------------------------------------
    def get(self, fn: Any) -> Rule | None:
        try:
            rule = self.rules.get(key_of(fn))
        except TypeError:  # unhashable callable
            return None
        if rule is None and self.families and isinstance(fn, type):
            return self._of_family(fn)
        return rule

    def family(self, test: Callable[[type], bool], make: Callable[[type], Rule]) -> None:
        """Rules for a family of classes too many (or made at run time) to list: the first time a class
        `cls` with `test(cls)` true is looked up, `make(cls)` gives its rule, which is kept (sympy's
        expression classes: `sin`, `Pow`, a `Function('f')`, each differentiated symbolically)."""
        self.families.append((test, make))
        self.version += 1

    def _of_family(self, cls: type) -> Rule | None:
        for test, make in self.families:
            if test(cls):
                rule = self.rules[cls] = make(cls)
                return rule
        return None

    def stand_in_of(self, fn: Any) -> tuple[Callable, tuple] | None:
        """(fn's stand-in (`Rule.stand_in`), the arguments to put first: a bound method's object), or None. Asked
        on the engines' per-call paths: a callable with none is told apart by one set lookup."""
        bound = type(fn) is types.MethodType  # (a Cython method: its class's function, bound)
        target = fn.__func__ if bound else fn
        if id(target) not in self.stand_in_ids:
            if (type(fn) is _BUILTIN_METHOD or type(fn) is C_METHOD) and fn.__name__ in self.stand_in_methods:
                owner = fn.__self__
                rule = self.rules.get((type(owner), fn.__name__))
                if rule is not None and rule.stand_in is not None:
                    return rule.stand_in, (owner,)
            made = self.made_stand_ins.get(type(fn))
            return None if made is None else made(fn)
        rule = self.rules.get(target)
        if rule is None or rule.stand_in is None:
            return None
        return rule.stand_in, ((fn.__self__,) if bound else ())

    @staticmethod
    def definition_in(text, code):
        """The `def` of code (by its name and first line) among text's top-level statements, or None where text is
        not a str or holds none: a source finder's answer from the text a library made a function of."""
        if type(text) is not str:
            return None
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef) and node.name == code.co_name and node.lineno == code.co_firstlineno:
                return node
        return None

    def generated_source(self, fn: Any, owner: Any):
        """The definition a registered finder gives for fn, a function made by `exec` (called on owner), or
        None: scipy.stats' argument parsers, made from a template each distribution keeps."""
        for find in self.source_finders:
            tree = find(fn, owner)
            if tree is not None:
                return tree
        return None

    def __contains__(self, fn: Any) -> bool:
        return self.get(fn) is not None

    def _rule(self, key: Any) -> Rule:
        rule = self.rules.get(key)
        if rule is None:
            rule = self.rules[key] = Rule(fn=key)
        self.version += 1
        return rule

    # -- registration decorators --------------------------------------------------------------
    def _setter(self, attr: str, fns: tuple, kind: str | None) -> Callable:
        def register(impl: Callable) -> Callable:
            for fn in fns:
                rule = self._rule(fn if isinstance(fn, tuple) else key_of(fn))
                setattr(rule, attr, impl)
                if attr == "adjoint":
                    for name in _HOT_FIELDS:  # they were the old adjoint's fast cases
                        setattr(rule, name, None)
                if kind is not None:
                    rule.kind = kind
            return impl
        return register

    def adjoint(self, *fns: Any, kind: str | None = None) -> Callable:
        """Register `adj(dy, y, *args, **kwargs) -> cotangents` for each of fns."""
        return self._setter("adjoint", fns, kind)

    def rrule(self, *fns: Any, kind: str | None = None) -> Callable:
        """Register `rrule(*args, **kwargs) -> (y, pullback)` for each of fns."""
        return self._setter("rrule", fns, kind)

    def frule(self, *fns: Any, kind: str | None = None) -> Callable:
        """Register `frule(tangents, *args, **kwargs) -> (y, dy)` for each of fns."""
        return self._setter("frule", fns, kind)

    def duals(self, *fns: Any) -> Callable:
        """Register `impl(*args, **kwargs)`, fn on duals (see `Rule.duals`), for each of fns."""
        return self._setter("duals", fns, None)

    def srule(self, *fns: Any, kind: str | None = None) -> Callable:
        """Register a sparsity rule, code on tracers, for each of fns (it wins over a declared spec)."""
        return self._setter("srule", fns, kind)

    def sparsity(self, spec: SparsitySpec, *fns: Any) -> None:
        """Declare what sparsity detection does with fns: a spec of `contexts.rules.sparsity_specs`
        (`registry.sparsity(LINEAR, np.add)`). A spec other than `Custom` drops an `srule` registered
        before, so that the last declaration takes effect."""
        if not isinstance(spec, SparsitySpec):
            raise TypeError("a sparsity spec is one of contexts.rules.sparsity_specs (LINEAR, "
                            f"Reduction(...), STRUCTURAL, DENSE, ...), not {spec!r}")
        for fn in fns:
            rule = self._rule(fn if isinstance(fn, tuple) else key_of(fn))
            rule.sparsity = spec
            if not isinstance(spec, Custom):
                rule.srule = None

    def set(self, *fns: Any, **fields: Any) -> None:
        """Set fields of the rules of fns, made if missing: the engine-facing ones of `Rule` (`mutating`,
        `inplace`, `iterates`, `impl`, `hot`, `hot_reduce`, ...), so that no module reaches into
        `rules` to change one. `registry.set(list.append, mutating=True)`."""
        unknown = fields.keys() - Rule.__dataclass_fields__.keys()
        if unknown:
            raise TypeError(f"a Rule has no field {', '.join(sorted(unknown))}")
        for fn in fns:
            rule = self._rule(fn if isinstance(fn, tuple) else key_of(fn))
            if "adjoint" in fields:  # the old adjoint's fast cases go with it, unless given anew
                for name in _HOT_FIELDS - fields.keys():
                    setattr(rule, name, None)
            for name, value in fields.items():
                setattr(rule, name, value)
            if fields.get("writes") is not None and isinstance(getattr(fn, "__name__", None), str):
                self.written_by_name[fn.__name__] = fields["writes"]
            if "stand_in" in fields and not isinstance(fn, tuple):  # (kept alive by its rule, keyed by it)
                (self.stand_in_ids.add if fields["stand_in"] is not None else self.stand_in_ids.discard)(id(key_of(fn)))
            elif "stand_in" in fields and fields["stand_in"] is not None:  # (a C type's method: by its name)
                self.stand_in_methods.add(fn[1])

    def set_kind(self, kind: str, *fns: Any, **meta: Any) -> None:
        for fn in fns:
            rule = self._rule(fn if isinstance(fn, tuple) else key_of(fn))
            rule.kind = kind
            rule.meta.update(meta)

    # -- helpers for the common shapes ----------------------------------------------------------
    def nondifferentiable(self, *fns: Any) -> None:
        """fns have zero derivative everywhere they are defined (floor, sign, comparisons, len, ...)."""
        for fn in fns:
            rule = self._rule(fn if isinstance(fn, tuple) else key_of(fn))
            rule.kind = "nondiff"
            rule.adjoint = _nondiff_adjoint
            rule.frule = _nondiff_frule(fn)
            if type(fn) is types.FunctionType and fn.__code__.co_flags & _GENERATOR:
                self.constant_generators.add(fn.__code__)

    def elementwise(self, fn: Any, *partials: Callable, name: str | None = None) -> None:
        """fn(x1, ..., xn) acts elementwise; `partials[i](y, *args)` is dy/dx_i at the primal point
        (written with `contexts.rules.generic` so it works for every numeric type).

        Builds the adjoint (dy * conj(partial), broadcasting undone by `unbroadcast`) and the frule.
        """
        from . import generic  # late: generic imports numpy lazily

        label = name or getattr(fn, "__name__", "fn")

        if len(partials) == 1:
            (p1,) = partials

            def adjoint(dy, y, *args, **kwargs):
                a = args[0]
                if type(dy) is float and type(a) is float:  # the scalar hot path
                    return (dy * p1(y, a),)
                return (generic.unbroadcast(generic.mul(dy, generic.conj(p1(y, *args))), a),)
        else:
            def adjoint(dy, y, *args, **kwargs):
                return tuple(
                    None if p is None else generic.unbroadcast(generic.mul(dy, generic.conj(p(y, *args))), a)
                    for p, a in zip(partials, args))

        def frule(tangents, *args, **kwargs):
            y = call_key(fn, args, kwargs)
            dy = None
            for p, a, t in zip(partials, args, tangents):
                if t is None or p is None:
                    continue
                term = generic.mul(t, p(y, *args))
                dy = term if dy is None else dy + term
            return y, (generic.zeros_like(y) if dy is None else dy)

        adjoint.__name__ = adjoint.__qualname__ = f"{label}_adjoint"
        frule.__name__ = frule.__qualname__ = f"{label}_frule"
        rule = self._rule(key_of(fn))
        rule.adjoint, rule.frule, rule.kind = adjoint, frule, "elementwise"
        rule.meta["partials"] = partials

    def linear(self, fn: Any, transpose: Callable, name: str | None = None) -> None:
        """fn is linear in its first argument; `transpose(dy, y, *args, **kwargs)` is its adjoint map.
        The frule applies fn itself to the tangent."""
        label = name or getattr(fn, "__name__", "fn")

        def adjoint(dy, y, *args, **kwargs):
            return (transpose(dy, y, *args, **kwargs),) + (None,) * (len(args) - 1)

        def frule(tangents, *args, **kwargs):
            y = call_key(fn, args, kwargs)
            t = tangents[0] if tangents else None
            return y, (None if t is None else call_key(fn, (t,) + tuple(args[1:]), kwargs))

        adjoint.__name__ = adjoint.__qualname__ = f"{label}_adjoint"
        frule.__name__ = frule.__qualname__ = f"{label}_frule"
        rule = self._rule(key_of(fn))
        rule.adjoint, rule.frule, rule.kind = adjoint, frule, "linear"


def _integral(v) -> bool:
    """v is an integer or boolean (a Python one, or a numpy scalar or array of such a dtype)."""
    if isinstance(v, (np.ndarray, np.generic)):
        return v.dtype.kind in "biu"
    return isinstance(v, int)


_GENERATOR = 0x20  # (inspect.CO_GENERATOR)


def _nondiff_adjoint(dy, y, *args, **kwargs):
    return (None,) * len(args)


def call_key(key: Any, args: tuple, kwargs: dict) -> Any:
    """Call the primitive a key stands for; a `(type, name)` key takes the object as first argument."""
    if isinstance(key, tuple):
        return getattr(args[0], key[1])(*args[1:], **kwargs)
    return key(*args, **kwargs)


def _nondiff_frule(fn):
    def nondiff_frule(tangents, *args, **kwargs):
        return call_key(fn, args, kwargs), None
    return nondiff_frule


registry = Registry()
# (the core asks the finders wherever it meets a function without source, for every context alike)
_add_source_finder(registry.generated_source)


# values every rule takes as they are: numbers (ufloats and the number types of `contexts.rules.leaves`
# too), arrays, strings (engines share this notion)
PLAIN_OPERANDS = (numbers.Number, np.ndarray, np.generic, str, bytes, type(None), Scalar, ArrayLeaf)

_POSITIONAL_NAMES: dict = {}  # names given by a function's rules where its signature cannot be read (np.arange)


def by_position(f, args: tuple, kw: dict, through: tuple = ()):
    """(args, kw, the names moved) with the keyword arguments that name f's leading positional parameters,
    after those given by position, moved to their positions (`np.percentile(a=v, q=30)` is
    `np.percentile(v, 30)`, the form the rules take: by name, a rule's adjoint gave none or crashed);
    None when none moves. The parameters are f's signature's (numpy's functions have one).

    `through`: names that must reach their positions (forward mode's duals given by keyword, whose tangents
    the rules take by position: `logsumexp(a, b=w)`); the parameters before the last of them are filled
    with the keywords given or their defaults. None where one cannot be (a name not among the positional
    parameters after args, one between without a default)."""
    known = _POSITIONAL.get(f)
    if known is None:
        import inspect

        try:
            found = inspect.signature(f).parameters.values()
        except (TypeError, ValueError):  # (a C function without a signature)
            found = ()
        found = [p for p in found if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        known = (tuple(p.name for p in found), {p.name: p.default for p in found if p.default is not p.empty})
        if len(_POSITIONAL) < 4096:
            _POSITIONAL[f] = known
    names, defaults = _POSITIONAL_NAMES.get(f) or known[0], known[1]  # (np.arange's names: its rules')
    if through:
        later = names[len(args):]
        if any(k not in later for k in through):
            return None
        last = max(later.index(k) for k in through)
        rest, out = dict(kw), list(args)
        for name in later[:last + 1]:
            if name in rest:
                out.append(rest.pop(name))
            elif name in defaults:
                out.append(defaults[name])
            else:
                return None
        return tuple(out), rest, later[:last + 1]
    moved = []
    for name in names[len(args):]:
        if name not in kw:
            break
        moved.append(name)
    if not moved:
        return None
    rest = dict(kw)
    return args + tuple(rest.pop(n) for n in moved), rest, tuple(moved)


_POSITIONAL: dict = {}  # a function -> (names, {name: default}) of its positional-or-keyword parameters


try:  # ufloats are numbers to every rule
    from uncertainties.core import AffineScalarFunc as _UFloat
    PLAIN_OPERANDS += (_UFloat,)
except ImportError:  # pragma: no cover
    pass


def _plain(v) -> bool:
    try:
        return (isinstance(v, PLAIN_OPERANDS) and not _array_with_protocol(v)
                and not (isinstance(v, np.ndarray) and number_with_own_methods(v))  # (a subclass's own operators)
                or type(v).__name__ == "Dual")  # (a dual's operators are the derivative's)
    except AttributeError:  # (CPython 3.11's `code.co_positions()` iterator has no `__class__` for an abc's
        return False        # isinstance: inspect's `getframeinfo` islices it, pythermalcomfort's validation)


_BUILTIN_NUMBERS = (float, int, complex)
# the special methods through which an operator or a math function reaches a number's own code
_NUMBER_METHODS = frozenset(
    f"__{name}__" for name in (
        "add radd sub rsub mul rmul truediv rtruediv floordiv rfloordiv mod rmod divmod rdivmod pow rpow neg "
        "pos abs invert float int complex index round trunc floor ceil lt le gt ge eq ne and rand or ror xor "
        "rxor lshift rlshift rshift rrshift matmul rmatmul").split())
_OWN_METHODS: dict = {}  # class -> whether a class of its MRO above the builtin defines one in Python


# primitives that call their operands' special methods (operator.add, abs, pow: declared by their domain
# files with `dispatches_on_numbers`), unlike math's functions, which read a float subclass's value as is
NUMBER_DISPATCH: set = set()


def dispatches_on_numbers(*fns) -> None:
    """fns call the special methods of their operands, also of numbers (a float subclass's own `__add__`)."""
    NUMBER_DISPATCH.update(key_of(fn) for fn in fns)


def own_number_operands(fn, args) -> bool:
    """fn calls its operands' special methods and one is a number whose class defines its own: engines then
    run `Rule.python`, that code, instead of the numeric rule."""
    return fn in NUMBER_DISPATCH and any(number_with_own_methods(a) for a in args)


def number_with_own_methods(v) -> bool:
    """v is of a subclass of float, int or complex (pygeodesy's `Lat(float)`) that defines one of the
    special methods operators call in Python code: its operators are its class's, not the number's."""
    cls = type(v)
    if cls in _BUILTIN_NUMBERS or cls is bool or cls is np.ndarray:
        return False
    known = _OWN_METHODS.get(cls)
    if known is None:
        if isinstance(v, _BUILTIN_NUMBERS):
            bases = _BUILTIN_NUMBERS + (bool, object)
        elif (isinstance(v, np.ndarray) and not cls.__module__.startswith("numpy")
              and type(getattr(cls, "__array_ufunc__", None)) is not types.FunctionType):
            # an ndarray subclass's own operators too (pyrr's Matrix44 `*`, a matrix product; `|` a dot
            # product): numpy's derivative of `*` was taken for them (numpy's own subclasses, np.matrix and
            # np.ma, are refused where met; one intercepting numpy by its own `__array_ufunc__`, an astropy
            # Quantity, is differentiated through that, `_array_with_protocol`)
            bases = (np.ndarray, object)
        else:
            return False
        known = any(name in _NUMBER_METHODS and callable(attr) and not isinstance(attr, _C_CALLABLES)
                    for k in cls.__mro__ if k not in bases for name, attr in vars(k).items())
        _OWN_METHODS[cls] = known
    return known


_C_CALLABLES = (types.BuiltinFunctionType, types.WrapperDescriptorType, types.MethodDescriptorType,
                types.MethodWrapperType)


def _array_with_protocol(v) -> bool:
    """v is of an ndarray subclass that intercepts numpy by Python code (an astropy Quantity: its
    `__array_ufunc__` converts units, its `__float__` too): its special methods are its class's own code."""
    cls = type(v)
    return (cls is not np.ndarray and isinstance(v, np.ndarray)
            and type(getattr(cls, "__array_ufunc__", None)) is types.FunctionType)


def objects_of_classes(args: tuple, reduction: bool = False) -> bool:
    """Whether an argument is an object of a class of its own (not a number, array, string, container or
    forward-mode dual), whose special methods the primitive would call: engines then run `Rule.python`.
    For a reduction, the items of a list or tuple first argument count; an iterator's are not looked at
    (drawing them would consume it: the engine looks again once it has drawn them)."""
    for i, a in enumerate(args):
        if i == 0 and reduction and type(a) is np.ndarray and a.dtype == object and a.size:
            # (`sum(a)` of an object array: the items' own `__add__`, as for a list; taken for numbers, the
            # gradient of a `__add__` that multiplies came out 4 for 7.8)
            if not all(_plain(v) for v in {type(v): v for v in a.flat}.values()):
                return True
        if _plain(a):
            continue
        if type(a) in (list, tuple):
            if i == 0 and reduction and not all(_plain(v) for v in a):
                return True
            continue
        if i == 0 and reduction and hasattr(type(a), "__next__"):  # (the class: an object may be half made)
            continue
        return True
    return False


def _python_array(a, builder: bool = False) -> bool:
    """a is an object whose class converts it to an array by Python code (`np.poly1d.__array__`), and which
    numpy takes by that conversion (no `__array_ufunc__` or `__array_function__` of its own, which numpy
    would call instead; builder: the function is `np.asarray`, `np.array` and kin, which dispatch by neither
    and call `__array__` whatever else the class defines), and which is not being converted right now (an
    `__array__` calling numpy on its own object)."""
    cls = type(a)
    return (type(getattr(cls, "__array__", None)) is types.FunctionType and not isinstance(a, np.ndarray)
            and (builder or (getattr(cls, "__array_ufunc__", None) is None
                             and getattr(cls, "__array_function__", None) is None))
            and id(a) not in _converting)


_converting: set = set()  # ids of the objects whose __array__ runs (as code) now

# numpy's builders, which take an object by its `__array__` and dispatch by no protocol
_BUILDER_IDS = frozenset(map(id, (np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray)))


def _protocol_object(a) -> bool:
    """a is an object of a foreign class that takes numpy's functions on it by numpy's protocols written in
    Python (`__array_function__`, `__array_ufunc__`: pint's Quantity, xarray's DataArray), neither an
    ndarray nor a registered array leaf (dask's, whose functions numpy's rules differentiate) nor a dual."""
    if _plain(a) or type(a) in (list, tuple, dict):
        return False
    cls = type(a)
    return (type(getattr(cls, "__array_function__", None)) is types.FunctionType
            or type(getattr(cls, "__array_ufunc__", None)) is types.FunctionType)


def protocol_objects(args: tuple, fn=None) -> bool:
    """Whether an argument (or an item of a list or tuple argument) is an object numpy would hand the call
    to by its class's Python `__array_function__`/`__array_ufunc__` (see `through_protocol`). For fn one of
    numpy's builders (`np.asarray`), an ndarray subclass's is not: they take its memory as a plain array,
    dispatching by nothing (taken for a dispatch, the call came back here endlessly, gen13 C3)."""
    builder = fn is not None and id(fn) in _BUILDER_IDS
    for a in args:
        if type(a) in (list, tuple):
            if any(_protocol_object(v) for v in a):
                return True
        elif _protocol_object(a) and not (builder and isinstance(a, np.ndarray)):
            return True
    return False


def through_protocol(fn, method: str = "__call__"):
    """fn (a numpy function or ufunc) as Python code doing numpy's dispatch: the class's own
    `__array_ufunc__`/`__array_function__` is called, as numpy calls it, and the engines differentiate
    that code (pint's, computing numpy's functions on the magnitudes, where numpy's rules apply). numpy's
    rules taken on such objects would treat them as arrays, and their cotangents would not be the
    objects' own. `method`: a ufunc's method (`np.add.reduce(q)`: "reduce"), handed on as numpy does."""
    ufunc = isinstance(fn, np.ufunc)
    if id(fn) in _BUILDER_IDS:  # (`np.asarray(obj)` calls `__array__`, never `__array_function__`)
        return through_array(fn, builder=True)

    def dispatched(*args, **kwargs):
        if ufunc and kwargs.get("out") is not None and type(kwargs["out"]) is not tuple:
            kwargs = {**kwargs, "out": (kwargs["out"],)}  # (numpy hands `__array_ufunc__` out= as a tuple)
        found = []
        for a in args:
            for v in (a if type(a) in (list, tuple) else (a,)):
                if _protocol_object(v) and type(v) not in [type(w) for w in found]:
                    found.append(v)
        kinds = tuple(type(v) for v in found)
        for v in found:
            if ufunc:
                own = getattr(type(v), "__array_ufunc__", None)
                y = NotImplemented if own is None else own(v, fn, method, *args, **kwargs)
            else:
                own = getattr(type(v), "__array_function__", None)
                y = NotImplemented if own is None else own(v, fn, kinds, args, kwargs)
            if y is not NotImplemented:
                return y
        if not ufunc:  # numpy converts an object without an `__array_function__` by its `__array__` (xarray's)
            converted = []
            for a in args:
                converted.append(_by_its_array(a))
            if all(c is a for c, a in zip(converted, args)):  # (nothing to convert by: it would come back here)
                raise NoRuleError(
                    f"numpy's {getattr(fn, '__name__', fn)} of a {' and a '.join(k.__name__ for k in kinds)}, which "
                    f"takes numpy's ufuncs by its own `__array_ufunc__` but has neither `__array_function__` nor "
                    f"`__array__`: numpy would hold it in an object array, which carries no derivative",
                    fix="pass its values as an array, or give the function a rule (`contexts.custom_adjoint`)")
            return fn(*converted, **kwargs)
        return getattr(fn, method)(*args, **kwargs)
    dispatched.__name__ = f"{getattr(fn, '__name__', 'fn')}_by_its_protocol"
    return dispatched


def _by_its_array(a):
    """a (or a list or tuple's items) converted by its class's Python `__array__`, where a takes numpy's
    ufuncs by its own `__array_ufunc__` but has no `__array_function__` (numpy's other functions convert
    it): run as code the engines differentiate, never handed back to numpy's function as it is (which
    would dispatch to `through_protocol` again, endlessly)."""
    if type(a) in (list, tuple):
        items = []
        for v in a:
            items.append(_by_its_array(v))
        return items if type(a) is list else tuple(items)
    cls = type(a)
    if (_protocol_object(a) and getattr(cls, "__array_function__", None) is None
            and type(getattr(cls, "__array__", None)) is types.FunctionType):
        return cls.__array__(a)
    return a


def _as_array(a, builder: bool = False):
    if not _python_array(a, builder):
        return a
    _converting.add(id(a))
    try:
        return type(a).__array__(a)
    finally:
        _converting.discard(id(a))


def own_method_form(f, args):
    """numpy's Python implementation of f (a function of fromnumeric that hands a non-array to its own method
    of f's name, `np.sum(obj)` calling `obj.sum(...)`) where its array argument is such an object: of a class
    of Python code (not a plain array, numpy's own subclass, a registered leaf or value), with a Python method
    of that name; else None. Asked on every numpy function's call: the function's facts are cached."""
    known = _FROMNUMERIC.get(f)
    if known is None:
        impl = getattr(f, "_implementation", None)
        known = _FROMNUMERIC[f] = (None, 0, "")
        if type(impl) is types.FunctionType and impl.__code__.co_filename.endswith("fromnumeric.py"):
            names = impl.__code__.co_varnames[:impl.__code__.co_argcount]
            known = _FROMNUMERIC[f] = (impl, names.index("a") if "a" in names else 0,
                                       {"around": "round", "amax": "max", "amin": "min"}.get(f.__name__, f.__name__))
    impl, at, name = known
    if impl is None or len(args) <= at:
        return None
    kind = type(args[at])  # (the array argument: `np.compress(condition, a)`'s second)
    if kind is np.ndarray or not kind.__flags__ & _HEAPTYPE:
        return None
    if issubclass(kind, np.ndarray):  # (a subclass of the user's, `class Doubled(np.ndarray)` with its own `sum`:
        if kind.__module__.split(".")[0] == "numpy" and not issubclass(kind, np.ma.MaskedArray):
            return None  # (numpy's `_wrapreduction` calls it; not numpy's own, but numpy.ma's: `rules.numpy.masked`)
    elif value_class(kind):
        return None
    return impl if type(getattr(kind, name, None)) is types.FunctionType else None


_HEAPTYPE = HEAPTYPE  # (a class of Python code)
_FROMNUMERIC: dict = {}  # numpy function -> (its fromnumeric implementation or None, its array's position, name)


OPERATOR_DUNDERS = frozenset(f"__{p}{n}__" for n in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod",
                                                     "pow", "and", "or", "xor", "lshift", "rshift")
                             for p in ("", "r", "i")) | {"__neg__", "__pos__", "__abs__"}
_ARRAY_DUNDERS = OPERATOR_DUNDERS | {"__getitem__", "__setitem__", "__iter__", "__array_ufunc__",
                                     "__array_function__"}
_OWN_OPERATORS: dict = {}  # class -> whether it has operators of its own (Python code)


def own_operators(cls, bases: tuple = (list, tuple, object)) -> bool:
    """Whether cls (a subclass of a C type in `bases`: a list's, an ndarray's) defines operators of its own in
    Python: an `__add__` that need not add (trueskill's `Matrix(list).__rmul__`), an ndarray subclass's
    `__mul__` that doubles. For an ndarray subclass (bases holding np.ndarray) also indexing, iteration and
    numpy's protocols, and an `__array_finalize__` or `__array_wrap__` that may change the values
    (`changes_values`): a rule's tangent or cotangent formula is the C type's, not that code's. Cached."""
    own = _OWN_OPERATORS.get(cls)
    if own is None:
        array = issubclass(cls, np.ndarray)
        names = _ARRAY_DUNDERS if array else OPERATOR_DUNDERS
        own = _OWN_OPERATORS[cls] = any(not names.isdisjoint(vars(k)) for k in cls.__mro__
                                        if k not in bases and k.__module__.split(".")[0] != "numpy") or (
            array and changes_values(cls))
    return own


def changes_values(cls) -> bool:
    """Whether an ndarray subclass's own `__array_finalize__` or `__array_wrap__` (Python, numpy calls it on
    every view, slice and ufunc result) may change the array's values, not only set attributes: a store into
    self (`self[...] = `, `self *= 2`), a call handed self or given `out=` (`np.clip(self, -1, 1,
    out=self.view(np.ndarray))`), a method of self or of a view of it; a wrap returning anything but the
    array it is given (viewed) or `super()`'s. The rules would differentiate the plain operation (3.0 for 0.0
    through a clipping `__array_finalize__`, both modes). The common kind, `self.info = getattr(obj, 'info',
    None)`, changes nothing. Read from the source (none: taken as changing); cached per class."""
    known = _CHANGES_VALUES.get(cls)
    if known is None:
        # (a class intercepting numpy by its own `__array_ufunc__`, an astropy Quantity, takes no ufunc's result
        # through `__array_wrap__`: that code runs as code, in both modes)
        hooks = ("__array_finalize__",) if type(getattr(cls, "__array_ufunc__", None)) is types.FunctionType else (
            "__array_finalize__", "__array_wrap__")
        known = _CHANGES_VALUES[cls] = any(
            _hook_changes(cls, k.__dict__[name], name) for k in cls.__mro__ if k.__module__.split(".")[0] != "numpy"
            for name in hooks if name in k.__dict__)
    return known


_CHANGES_VALUES: dict = {}
_READING_CALLS = frozenset({"getattr", "hasattr", "isinstance", "issubclass", "type", "super", "id", "len", "repr", "all", "any", "bool",
                            "str", "dict", "list", "tuple", "copy", "deepcopy"})


def _hook_changes(cls, fn, name: str, depth: int = 0) -> bool:
    import ast
    fdef = function_tree(fn)
    if fdef is None or not fdef.args.args:
        return True
    me = fdef.args.args[0].arg
    given = fdef.args.args[1].arg if len(fdef.args.args) > 1 else None
    kept = _METADATA | {t.attr for t in ast.walk(fdef) if isinstance(t, ast.Attribute) and isinstance(t.ctx, ast.Store)}
    for node in ast.walk(fdef):
        if isinstance(node, ast.AugAssign):
            return True  # (`self *= 2`, and any in-place operator: conservative)
        if isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)) and \
                isinstance(node, ast.Subscript):
            return True
        if isinstance(node, ast.Call):
            f = node.func
            if any(k.arg == "out" for k in node.keywords):
                return True
            callee = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if callee == "__array_wrap__" or callee == "__array_finalize__":
                continue  # (super()'s or ndarray's: the values handed on)
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == me and depth < 2 \
                    and type(method := getattr(cls, callee, None)) is types.FunctionType:
                if _hook_changes(cls, method, "", depth + 1):  # (a method of its class's own: astropy's
                    return True                                # `self._set_unit(unit)`, read in turn)
                continue
            if isinstance(f, ast.Attribute) and _mentions(f.value, {me}) and callee not in ("view", "copy"):
                return True  # (a method of self or of a view of it: `self.fill(0)`, `self.view(np.ndarray).sort()`)
            if callee not in _READING_CALLS and any(_hands_self(a, me, kept) for a in [*node.args, *(k.value for k in node.keywords)]):
                return True  # (self handed to a function: `np.copyto(self, ...)`; not its dtype, or an attribute
                # the class keeps itself, astropy's `StructuredUnit(unit, self.dtype)`)
        if name == "__array_wrap__" and isinstance(node, ast.Return) and node.value is not None:
            v = node.value
            if isinstance(v, ast.Subscript) and isinstance(v.slice, ast.Tuple) and not v.slice.elts:
                v = v.value  # (`arr[()]`: the scalar of a 0-d result)
            while isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "view":
                v = v.func.value
            fine = isinstance(v, ast.Name) and v.id in (given, me) or isinstance(v, ast.Call) and isinstance(
                v.func, ast.Attribute) and v.func.attr == "__array_wrap__" or _own_class_of(v, me, given) and _rewraps(cls)
            if not fine:
                return True
    return False


_METADATA = frozenset({"dtype", "shape", "ndim", "size", "itemsize", "__class__"})


def _own_class_of(v, me: str, given) -> bool:
    """v is `type(self)(array)` or `self.__class__(array)`, the array the wrap is given (scikit-spatial's)."""
    import ast
    if not (isinstance(v, ast.Call) and len(v.args) == 1 and not v.keywords and isinstance(v.args[0], ast.Name)
            and v.args[0].id == given):
        return False
    f = v.func
    return isinstance(f, ast.Call) and isinstance(f.func, ast.Name) and f.func.id == "type" and len(f.args) == 1 \
        and isinstance(f.args[0], ast.Name) and f.args[0].id == me or isinstance(f, ast.Attribute) \
        and f.attr == "__class__" and isinstance(f.value, ast.Name) and f.value.id == me


def _rewraps(cls, start: int = 0) -> bool:
    """Whether calling the ndarray subclass cls on an array only re-wraps its values: no `__init__` of its own,
    and its `__new__` (Python, from the class at `start` of its MRO on) checks the array (`if ...: raise`)
    and returns `np.asarray(a).view(cls)` (or `np.array`, `np.asanyarray`, a itself, `super().__new__(cls,
    a)` read in turn), setting attributes only: scikit-spatial's `Vector`, whose `__array_wrap__` returns
    `type(self)(array)`. ndarray's own `__new__` takes a shape: not a re-wrap. Cached."""
    key = (cls, start)
    known = _REWRAPS.get(key)
    if known is None:
        known = _REWRAPS[key] = _new_rewraps(cls, start)
    return known


_REWRAPS: dict = {}
_CHECKING_CALLS = frozenset({"size", "ndim", "shape", "isfinite", "isnan", "isinf", "all", "any", "iscomplexobj",
                             "isrealobj", "issubdtype", "len", "isinstance", "issubclass", "type"})


def _new_rewraps(cls, start: int) -> bool:
    import ast
    mro = cls.__mro__
    if start == 0 and any("__init__" in vars(k) for k in mro if k is not object and k.__module__.split(".")[0] != "numpy"):
        return False
    at = next((i for i in range(start, len(mro)) if "__new__" in vars(mro[i])), None)
    if at is None or mro[at] is object or mro[at].__module__.split(".")[0] == "numpy":
        return False
    new = vars(mro[at])["__new__"]
    fdef = function_tree(new.__func__ if isinstance(new, staticmethod) else new)
    if fdef is None or len(fdef.args.args) < 2 or fdef.args.vararg or fdef.args.kwarg:
        return False
    me, arrays = fdef.args.args[0].arg, {fdef.args.args[1].arg}

    def alias(e) -> bool:  # (the values of the given array: itself, a conversion of it, a view of it as cls)
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "view" and not e.keywords \
                and all(isinstance(a, ast.Name) and a.id == me for a in e.args):
            e = e.func.value
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in (
                "asarray", "array", "asanyarray") and isinstance(e.func.value, ast.Name) and len(e.args) == 1 \
                and not e.keywords:
            e = e.args[0]
        return isinstance(e, ast.Name) and e.id in arrays

    def checks(e) -> bool:  # (reads only: `np.size(a) == 0`, `not np.isfinite(a).all()`)
        for n in ast.walk(e):
            if isinstance(n, ast.NamedExpr):
                return False
            if isinstance(n, ast.Call):
                name = n.func.id if isinstance(n.func, ast.Name) else n.func.attr if isinstance(
                    n.func, ast.Attribute) else None
                if name not in _CHECKING_CALLS or any(k.arg == "out" for k in n.keywords):
                    return False
        return True

    body = fdef.body[1:] if fdef.body and isinstance(fdef.body[0], ast.Expr) and isinstance(
        getattr(fdef.body[0], "value", None), ast.Constant) else fdef.body
    for stmt in body:
        if isinstance(stmt, ast.If) and checks(stmt.test) and not stmt.orelse \
                and all(isinstance(b, ast.Raise) for b in stmt.body):
            continue
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and alias(stmt.value):
            arrays.add(stmt.targets[0].id)
            continue
        if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                                                and t.value.id in arrays for t in stmt.targets) and checks(stmt.value):
            continue  # (an attribute set on the view: metadata)
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            v = stmt.value
            if alias(v):
                return True
            return isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "__new__" \
                and isinstance(v.func.value, ast.Call) and isinstance(v.func.value.func, ast.Name) \
                and v.func.value.func.id == "super" and not v.func.value.args and len(v.args) == 2 \
                and not v.keywords and isinstance(v.args[0], ast.Name) and v.args[0].id == me and alias(v.args[1]) \
                and _rewraps(cls, at + 1)
        return False
    return False


def _hands_self(e, me: str, kept: set) -> bool:
    """e mentions the array `me` other than by an attribute in kept (its dtype, one the hook stores itself)."""
    import ast
    inner = {id(n.value) for n in ast.walk(e) if isinstance(n, ast.Attribute) and n.attr in kept}
    return any(isinstance(n, ast.Name) and n.id == me and id(n) not in inner for n in ast.walk(e))


def function_tree(fn):
    """fn's definition as a tree (`overdub.passes.get_source`, decorators stripped), or None: not a Python
    function, or no source."""
    import ast
    if type(fn) is not types.FunctionType:
        return None
    try:
        from overdub.passes import get_source
        tree = get_source(fn.__code__, fn.__globals__).tree
    except Exception:  # (no source: nothing known)
        return None
    return tree if isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _mentions(e, names: set) -> bool:
    import ast
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(e))


def through_array(fn, builder: bool = False):
    """fn as Python code for arguments that numpy converts by their class's `__array__` (a poly1d): the
    conversions run first, as code the engines differentiate, then fn on arrays; the rules' cotangents for
    those arguments would be arrays, not cotangents of the objects (builder: see `_python_array`)."""
    def converted_first(*args, **kwargs):
        converted = [_as_array(a, builder) for a in args]
        for a, c in zip(args, converted):
            if c is a and _python_array(a, builder) or c is not a and type(c) is type(a) or all(
                    map(operator.is_, args, converted)):
                # (no conversion made, or `__array__` gave an object of its class back: fn would meet the same
                # arguments again, endlessly, a RecursionError: numpoly's polynomials in a list `np.array` takes)
                raise NoRuleError(f"{getattr(fn, '__name__', fn)} of a {type(a).__qualname__} holding objects numpy "
                                  "converts by their class's `__array__`, which gives no plain array here: nothing "
                                  "numpy's rules can differentiate",
                                  fix="give the function a rule (`contexts.custom_adjoint`), or differentiate with "
                                      "forward mode (`contexts.jacfwd`)")
        return fn(*converted, **kwargs)
    return converted_first


def array_objects(args: tuple, builder: bool = False) -> bool:
    """Whether an argument is an object whose class converts it to an array by Python code."""
    return any(_python_array(a, builder) for a in args if not _plain(a) and type(a) not in (list, tuple, dict))
