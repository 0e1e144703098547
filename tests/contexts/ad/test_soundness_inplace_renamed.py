"""In-place primitives reached other than by their own name: the cotangents the caller holds for the arrays
they change are handed to the primitive's own pullback whatever the call looks like (`cp = np.copyto`
gave the gradient of the array before the copy), and where they cannot be (arguments spread with `*`, an
output passed through `**kwargs`, a `functools.partial` around the primitive, views of the arrays under a
renamed primitive, an array's bound method called through a variable while other variables view the array)
the call is refused, never differentiated as if nothing was written."""

import functools

import numpy as np
import pytest

from contexts import gradient
from contexts.ad import UnsupportedFunction

from tests.fd import gradient as fd_gradient

_copy = np.copyto
_add_at = np.add.at


def renamed_copy(x):
    a = x * 2.0
    _copy(a, x * 3.0)
    return np.sum(a * a)


def renamed_ufunc_at(x):
    a = x * 2.0
    _add_at(a, [1], x[0] * x[1])
    return np.sum(a * a)


def renamed_method(x):
    a = x * 2.0
    put = a.put
    put([0], x[1] ** 2)
    return np.sum(a * a * x)


def by_name_with_a_view(x):
    a = x * 2.0
    v = a[:1]
    np.copyto(a, x * 3.0)
    return np.sum(v * v) + np.sum(a)


def renamed_method_with_a_view(x):
    a = x * 2.0
    v = a[:2]
    put = a.put
    put([0], x[1] ** 2)
    return np.sum(a * a * x) + np.sum(v * x[:2])


# (renamed_method: refused until session 34, when the caller's cotangent of a bound method's own array is
# handed to the rule as its object's; with other variables viewing the array it still is)
@pytest.mark.parametrize("f", [renamed_copy, renamed_ufunc_at, by_name_with_a_view, renamed_method])
def test_right_against_finite_differences(f):
    x = np.array([1.0, 2.0, 0.5])
    np.testing.assert_allclose(gradient(f, x.copy())[0], fd_gradient(f, x.copy())[0], rtol=1e-7)


def spread(x):
    a = x * 2.0
    pair = (a, x * 3.0)
    np.copyto(*pair)
    return np.sum(a * a)


def through_kwargs(x):
    a = x * 2.0
    opts = {"out": a}
    np.multiply(x, 3.0, **opts)
    return np.sum(a * a)


def through_partial(x):
    a = x * 2.0
    put = functools.partial(np.copyto, a)
    put(x * 3.0)
    return np.sum(a * a)


def renamed_with_a_view(x):
    a = x * 2.0
    v = a[:1]
    _copy(a, x * 3.0)
    return np.sum(v * v) + np.sum(a)


@pytest.mark.parametrize("f", [spread, through_kwargs, through_partial, renamed_with_a_view,
                               renamed_method_with_a_view])
@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_refused_where_the_cotangents_cannot_be_handed(f):
    with pytest.raises(UnsupportedFunction, match="in-place") as e:
        gradient(f, np.array([1.0, 2.0, 0.5]))
    assert "test_soundness_inplace_renamed.py" in str(e.value)
