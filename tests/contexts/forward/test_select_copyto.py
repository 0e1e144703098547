"""Forward mode through np.select (numpy fills a plain array it makes with np.copyto, which cannot take a
tangent: it was refused) and np.copyto into arrays that carry a tangent. Against central differences:
`jvp`, `derivative`, `jacfwd` (chunked tangents) and nested forward. A copy of perturbed values into an
array that truly has no tangent (a module-level array) is refused, naming the line."""

from __future__ import annotations

import numpy as np
import pytest

from contexts import derivative, jacfwd, jvp
from overdub.errors import OverdubError
from tests import fd

X = np.array([0.3, 1.7, -0.4, 2.5])


def piecewise(x):  # sympy's lambdify of Piecewise((x**2, x < 1), (2*x - 1, True))
    return np.select([np.less(x, 1), True], [x ** 2, 2 * x - 1], default=np.nan)


def overlapping(x):  # the first true condition wins; a scalar and a list among the choices
    return np.select([x > 2, x > 0, x > -1], [np.sin(x), 3.0, [x[0], x[1], x[2] * x[3], x[3]]], default=x * x)


def default_only_perturbed(x):
    return np.select([x > 100.0], [1.0], default=np.exp(x))


def scalar_choices(x):  # delta_E CIE 2000 selects hue differences from scalars and arrays
    h = x * 90.0
    return np.select([np.abs(h) <= 180, h > 180, h < -180], [h, h - 360, h + 360])


def copy_into_fresh(x):
    out = np.zeros(4)
    np.copyto(out, np.cos(x), where=x > 0)
    return out * x


CASES = [piecewise, overlapping, default_only_perturbed, scalar_choices, copy_into_fresh]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_jvp_and_jacfwd(f):
    t = np.array([0.3, -0.5, 0.7, 1.1])
    np.testing.assert_allclose(jvp(f, (X,), (t,))[1], fd.directional(f, (X,), (t,)), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacfwd(f, X), fd.jacobian(f, X), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_derivative_and_nested(f):
    g = lambda s: np.sum(f(X * s))  # noqa: E731
    np.testing.assert_allclose(derivative(g, 1.1), fd.derivative(g, 1.1), rtol=1e-6)
    if f is copy_into_fresh:
        return  # (nested: the array np.zeros makes carries the inner call's tangent only; refused, see below)
    np.testing.assert_allclose(derivative(lambda s: derivative(g, s), 1.1),
                               fd.derivative(lambda s: fd.derivative(g, s, h=1e-4), 1.1, h=1e-4),
                               rtol=1e-4, atol=1e-4)


def test_nested_copy_into_an_inner_array():
    # (the array np.zeros makes carries the outer derivative call's tag too: refused before, as the copy
    # of an outer call's value into an inner call's array)
    g = lambda s: np.sum(copy_into_fresh(X * s))  # noqa: E731
    h = 1e-4
    expected = (g(1.1 + h) - 2 * g(1.1) + g(1.1 - h)) / h ** 2
    assert derivative(lambda s: derivative(g, s), 1.1) == pytest.approx(expected, rel=1e-6)


_KEPT = np.zeros(4)


def copy_into_module_array(x):
    np.copyto(_KEPT, x)
    return _KEPT * 2.0


@pytest.mark.one_mode
def test_copy_into_an_array_without_a_tangent_is_refused_at_its_line():
    with pytest.raises(OverdubError, match=r"without a tangent[\s\S]*test_select_copyto.py"):
        jvp(copy_into_module_array, (X,), (np.ones(4),))


def test_copy_into_an_array_without_a_tangent_answered_by_reverse_mode():
    t = np.array([1.0, -2.0, 0.5, 3.0])
    y, dy = jvp(copy_into_module_array, (X,), (t,))
    assert np.allclose(dy, fd.jacobian(copy_into_module_array, X) @ t, rtol=1e-7)
