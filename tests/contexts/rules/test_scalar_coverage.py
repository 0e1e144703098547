"""Every function of math, cmath, operator and uncertainties.umath has a rule or an explicit mark."""

import cmath
import math
import operator

import pytest
from uncertainties import umath

import contexts.rules  # noqa: F401
from contexts.rules import operator as operator_rules
from contexts.rules.registry import registry


def _functions(module):
    return [name for name in dir(module) if not name.startswith("_") and callable(getattr(module, name))]


def _has_derivative(rule):
    return rule is not None and (rule.adjoint is not None or rule.rrule is not None)


def _covered(module, name, not_numeric=frozenset()):
    rule = registry.get(getattr(module, name))
    if name in not_numeric:
        return True
    if rule is None:
        return False
    return rule.nondifferentiable or (_has_derivative(rule) and rule.frule is not None)


@pytest.mark.parametrize("module, not_numeric", [
    (math, frozenset()), (cmath, frozenset()), (umath, frozenset()), (operator, operator_rules.NOT_NUMERIC)],
    ids=["math", "cmath", "umath", "operator"])
def test_every_function_has_a_rule_or_a_mark(module, not_numeric):
    missing = [name for name in _functions(module) if not _covered(module, name, not_numeric)]
    assert not missing, f"{module.__name__} functions with neither a rule nor a mark: {missing}"


def test_marks_are_not_silently_differentiable():
    for name in ("floor", "ceil", "isnan", "factorial", "comb", "gcd"):
        assert registry.get(getattr(math, name)).nondifferentiable
    assert registry.get(math.sin).kind == "elementwise" and not registry.get(math.sin).nondifferentiable


def test_not_numeric_names_exist():
    assert all(hasattr(operator, name) for name in operator_rules.NOT_NUMERIC)


def test_coverage_check_can_fail():
    import types
    fake = types.SimpleNamespace(sin=math.sin, mystery=lambda x: x)
    assert _covered(fake, "sin") and not _covered(fake, "mystery")
