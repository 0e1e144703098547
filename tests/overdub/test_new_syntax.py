"""Newer syntax under every context: PEP 695 generics (3.12+), PEP 696 defaults (3.13+), `except*`.

Each function is run plainly, under a do-nothing context, and differentiated in reverse and forward mode;
derivatives are checked against closed forms.
"""

import importlib
import sys

import pytest

import numpy as np

import overdub
from contexts import UnsupportedFunction, gradient, hessian, jacobian_sparsity
from contexts.debug import CountContext, TraceContext
from contexts.forward import derivative
from tests import fd

X = 0.7

needs_312 = pytest.mark.skipif(sys.version_info < (3, 12), reason="PEP 695 syntax is 3.12+")
needs_313 = pytest.mark.skipif(sys.version_info < (3, 13), reason="PEP 696 syntax is 3.13+")


def _mod(name):
    return importlib.import_module(f"tests.overdub.{name}")


def _check(f, value, slope):
    assert f(X) == pytest.approx(value)
    assert overdub.Context().run(f, X) == pytest.approx(value)
    assert gradient(f, X)[0] == pytest.approx(slope)
    assert derivative(f, X) == pytest.approx(slope)
    assert hessian(f, X) == pytest.approx(fd.derivative(lambda s: derivative(f, s), X), rel=1e-5, abs=1e-7)
    # the other contexts: sparsity detection (x's slope is nonzero here) and the debugging contexts
    assert jacobian_sparsity(lambda v: f(v[0]), np.array([X])).toarray().tolist() == [[True]]
    counts = CountContext()
    assert counts.run(f, X) == pytest.approx(value)
    assert counts.total() > 0
    assert TraceContext().run(f, X) == pytest.approx(value)


@needs_312
@pytest.mark.parametrize("name, value, slope", [
    ("square", X * X, 2 * X),
    ("calls_generic", X * X + 3 * X, 2 * X + 3),
    ("reads_type_param", 2 * X, 2.0),
    ("uses_box", 3 * X, 3.0),
])
def test_pep695_generics(name, value, slope):
    _check(getattr(_mod("_pep695_mod"), name), value, slope)


@needs_312
def test_pep695_type_alias_in_annotation():
    f = lambda x: _mod("_pep695_mod").cubic_pair(x)[0]  # noqa: E731
    _check(f, X ** 3, 3 * X * X)


@needs_313
def test_pep696_type_parameter_default():
    _check(_mod("_pep696_mod").tripled, 3 * X + X * X, 3 + 2 * X)


def _except_star(x):
    try:
        raise ExceptionGroup("g", [ValueError(x)])
    except* ValueError as eg:
        y = eg.exceptions[0].args[0]
    return y * y * x


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_except_star():
    """The core and forward mode run `except*`; reverse mode refuses it by name and line (never a wrong
    number)."""
    assert overdub.Context().run(_except_star, X) == pytest.approx(X ** 3)
    assert derivative(_except_star, X) == pytest.approx(3 * X * X)
    with pytest.raises(UnsupportedFunction, match="TryStar"):
        gradient(_except_star, X)
