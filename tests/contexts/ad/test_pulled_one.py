"""The adjoint's one-argument call sites take a built-in pullback's first case inline (`codegen._Gen.pulled_one`,
`runtime.pull_one`): the same gradients, bit for bit and of the same types, as the general statements, which
a call through a list (`fns[0](x)`, never such a site) takes."""

import math

import numpy as np
import pytest

from contexts.ad import gradient

FNS = {"sqrt": [math.sqrt], "sin": [math.sin], "log": [math.log], "exp": [np.exp], "sum": [np.sum],
       "max": [np.max], "nplog": [np.log]}


def _same(a, b):
    assert type(a) is type(b)
    if isinstance(a, tuple):
        assert len(a) == len(b)
        for u, v in zip(a, b):
            _same(u, v)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b)
    else:
        assert a == b


def _both(f, g, *args):
    """f's gradient and g's (the general path), or the same refusal."""
    try:
        want = gradient(g, *args)
    except Exception as e:
        with pytest.raises(type(e)):
            gradient(f, *args)
        return
    for _ in range(2):  # (the first call builds; the second takes the entry's fast path)
        _same(gradient(f, *args), want)


@pytest.mark.parametrize("x", [4.0, 0.0, 1e-300, float("inf")])
def test_math_sqrt_at_its_singular_point(x):
    _both(lambda v: math.sqrt(v) + v, lambda v: FNS["sqrt"][0](v) + v, x)


@pytest.mark.parametrize("x", [0.3, 0.0, float("nan")])
def test_zero_and_nan_cotangents(x):
    _both(lambda v: 0.0 * math.sin(v) + v, lambda v: 0.0 * FNS["sin"][0](v) + v, x)
    _both(lambda v: math.log(v) * math.sin(v), lambda v: FNS["log"][0](v) * FNS["sin"][0](v), x)


def _namespace_sincos(xp):
    def f(v):
        return xp.sin(v) * xp.cos(v)
    return f


class _Holder:
    def __init__(self):
        self.fn = math.sin
        self.k = 2.0


def test_module_held_in_a_variable_and_an_object_holding_a_math_function():
    _both(_namespace_sincos(math), lambda v: FNS["sin"][0](v) * math.cos(v), 0.7)
    h = _Holder()
    _both(lambda v: h.fn(v) * h.k, lambda v: FNS["sin"][0](v) * h.k, 0.7)


@pytest.mark.parametrize("x", [np.array([0.5, 3.0, 3.0, -1.0]), np.array([0.5, np.nan, 2.0]),
                               np.array([1e300, 2.0]), np.arange(6.0).reshape(2, 3)])
def test_array_pullbacks(x):
    def f(v):
        m = np.max(v)
        return m + np.log(np.sum(np.exp(v - m)))

    def g(v):
        m = FNS["max"][0](v)
        return m + FNS["nplog"][0](FNS["sum"][0](FNS["exp"][0](v - m)))
    _both(f, g, x)
