"""The sparsity specs the domain files of contexts/rules declare beside each primitive's derivatives, and
the sparsity package's code rules, cannot drift apart from the reverse rules: every primitive with a
reverse rule has a sparsity spec or rule, falls in a class the sparsity context handles generically, or
is listed below with the reason it has none."""

import cmath
import inspect
import math
import operator
import types

import numpy as np
import pytest

import contexts.sparsity.rules  # noqa: F401  (registers the code rules)
from contexts.rules import registry
from contexts.rules.math import register_elementwise
from contexts.rules.sparsity_specs import LINEAR, NONLINEAR, Custom
from contexts.sparsity import hessian_sparsity, jacobian_sparsity

_C_METHODS = (types.WrapperDescriptorType, types.MethodDescriptorType, types.BuiltinMethodType)


def _generic(key, rule) -> str | None:
    """Why the sparsity context needs no spec for this primitive, or None."""
    if isinstance(key, tuple) or (type(key) in _C_METHODS and not isinstance(getattr(key, "__self__", None),
                                                                             types.ModuleType)):
        return "a method of a C type: a tracer has its own methods (and is no float, list, ndarray)"
    if isinstance(key, np.ufunc):
        return "a ufunc: elementwise in every argument unless a spec says fewer (ops.apply_ufunc)"
    if rule.kind == "nondiff":
        return "no derivative: no dependencies (ops.derive)"
    if inspect.isfunction(getattr(key, "_implementation", key)):
        return "Python code: the sparsity context runs it on tracers"
    if getattr(operator, getattr(key, "__name__", ""), None) is key:
        return "an operator: tracers overload them"
    return None


# primitives with a reverse rule and deliberately no sparsity spec or rule: why
WITHOUT = {
    sorted: "compares its items: runs on the tracers (comparisons need values: local mode)",
    divmod: "the tracer's own __divmod__ answers",
    list: "a container: tracers pass through as values",
    set: "its members are keys (a dict's, names): reverse mode refuses differentiated ones",
    frozenset: "its members are keys (a dict's, names): reverse mode refuses differentiated ones",
    tuple: "a container: tracers pass through as values",
    iter: "iteration: tracers pass through as values",
}
# numpy's scalar types (np.float64(t)) and array converter: the kind's fallback (linear: the argument's
# dependencies); scipy.linalg's LAPACK kernels: reached inside scipy's Python, refused (NoSparsityRule)
_WITHOUT_BY_MODULE = ("numpy", "numpy._core._multiarray_umath", "scipy.linalg._batched_linalg")


def _deliberately_without(key) -> bool:
    if key in WITHOUT:
        return True
    if isinstance(key, type) and issubclass(key, np.generic):
        return True
    if getattr(key, "__module__", None) in _WITHOUT_BY_MODULE and not callable(getattr(key, "_implementation",
                                                                                    None)):
        return True
    return type(key).__name__ == "fortran"


def _reverse_rules():
    return [(key, rule) for key, rule in registry.rules.items() if rule.adjoint or rule.rrule]


def test_every_reverse_rule_has_sparsity():
    missing = [key for key, rule in _reverse_rules()
               if rule.srule is None and rule.sparsity is None and _generic(key, rule) is None
               and not _deliberately_without(key)]
    assert not missing, (f"primitives with a reverse rule and no sparsity spec: {missing}; declare one beside "
                         "the derivative (`registry.sparsity(spec, fn)`, contexts/rules/sparsity_specs.py) or "
                         "list it in WITHOUT with the reason")


def test_allow_list_is_current():
    """An entry of WITHOUT that got a spec, or lost its reverse rule, is removed from the list."""
    stale = [fn for fn in WITHOUT
             if registry.get(fn) is None or registry.get(fn).sparsity is not None
             or registry.get(fn).srule is not None]
    assert not stale


def test_custom_specs_have_their_code():
    """A domain file's `Custom(...)` names code the sparsity package registers, and every code rule the
    package registers is declared `Custom` beside its primitive's other rules."""
    no_code = [key for key, rule in registry.rules.items()
               if isinstance(rule.sparsity, Custom) and rule.srule is None]
    assert not no_code
    undeclared = [key for key, rule in registry.rules.items()
                  if rule.srule is not None and not isinstance(rule.sparsity, Custom)
                  and getattr(rule.srule, "__module__", "").startswith("contexts.sparsity")]
    assert not undeclared


@pytest.mark.parametrize("spec, pairs", [(NONLINEAR, 1), (LINEAR, 0)])
def test_a_declared_spec_decides(spec, pairs):
    """One word beside the derivative is the whole sparsity rule of a new elementwise function."""
    def softplus(x):  # a fresh function per case: the registry is shared
        return np.log1p(np.exp(x))

    register_elementwise(softplus, (lambda y, x: 1 / (1 + np.exp(-x)),), "softplus")
    registry.sparsity(spec, softplus)
    x = np.array([0.5, -1.0, 2.0])
    assert (jacobian_sparsity(lambda v: softplus(v) * 2.0, x).toarray() == np.eye(3, dtype=bool)).all()
    assert hessian_sparsity(lambda v: np.sum(softplus(v)), x).nnz == 3 * pairs


def test_a_spec_must_be_one_of_the_vocabulary():
    with pytest.raises(TypeError, match="sparsity_specs"):
        registry.sparsity("linear", np.add)
    assert registry.get(np.add).sparsity == LINEAR


def test_docstring_examples():
    import doctest

    import contexts.rules.sparsity_specs

    result = doctest.testmod(contexts.rules.sparsity_specs)
    assert result.failed == 0 and result.attempted > 0


@pytest.mark.parametrize("mode", ["global", "local"])
def test_functions_returning_pairs(mode):
    """frexp, modf, polar: each part of the pair elementwise in the argument (an integer part: none)."""
    from contexts import hessian_sparsity, jacobian_sparsity

    def f(x):
        return np.array([math.frexp(x[0])[0], math.frexp(x[1])[1] * 1.0 + x[2],
                         math.modf(x[0])[0] * x[1], math.modf(x[1])[1], cmath.polar(x[2])[0]])

    J = jacobian_sparsity(f, np.array([1.5, 2.5, 0.5]), mode=mode).toarray().astype(int)
    np.testing.assert_array_equal(J, [[1, 0, 0], [0, 0, 1], [1, 1, 0], [0, 0, 0], [0, 0, 1]])
    H = hessian_sparsity(lambda x: math.modf(x[0])[0] * x[1] + cmath.polar(x[2])[0] ** 2, np.ones(3) * 0.5,
                         mode=mode).toarray().astype(int)
    np.testing.assert_array_equal(H, [[0, 1, 0], [1, 0, 0], [0, 0, 1]])
