"""Forward mode when only some inputs are perturbed (`derivative` along one argument): arrays that carry
no tangent still change in place through their aliases (`t2 = t1; t2 += x1`), a tangent that arithmetic
turned into a scalar zero (`0 * 0.346` is 0.0) still stands for zeros, and the tangent of a sum or
difference of a perturbed scalar and a constant array has the array's shape. Found by the fuzzer
(numpy suite, seed 500); each against central differences."""

from __future__ import annotations

import numpy as np
import pytest

from contexts import derivative, jacfwd, jvp

from tests import fd

_rng = np.random.default_rng(500)
X0, X1 = _rng.random((3, 4)) + 0.3, _rng.random((3, 4)) + 0.3
D0 = _rng.random((3, 4)) - 0.5


def alias_in_place(x0, x1):
    t1 = x1 * 1.0
    t2 = t1
    t2 += x1          # t1 changes too: x1 carries no tangent here
    return np.sum(t1) * np.sum(x0) + np.sum(t1 * t1 * x0)


def dict_of_mixed(x0, x1):
    d = {"w": x1 * 2.0, "v": x0}
    d["w"] = d["w"] * 0.346   # the constant item's tangent: 0 * 0.346
    v = d["w"] + d["v"]
    return np.sum((d["w"].T * 0.893).T + v + (v.T @ np.ones(3))[None, :] * 0.1)


def scalar_plus_array(x0, x1):
    v = x1 + np.sum(x0[[1, 2, 0]]) * 0.3      # a perturbed scalar over a constant array
    w = x1 - np.median(x0)
    t = x1.copy()
    t[0] += v[0] * 0.798
    return np.sum(t * w) + np.einsum("ij,ij->", v, w) + np.sum(v @ w.T)


def bool_weights(x0, x1):
    v = np.log(1.0 + x1 * x1)
    s = v + np.sum(v * (x1 > 0.7))           # np.sum of a constant: an np.int64 or float zero tangent
    return np.sum(np.outer(x0[0], x0[0]) @ (s[0] + x0[0]))


@pytest.mark.parametrize("f", [alias_in_place, dict_of_mixed, scalar_plus_array, bool_weights])
def test_derivative_along_one_argument(f):
    g = lambda s: f(X0 + s * D0, X1)  # noqa: E731
    want = fd.derivative(g, 0.0)
    np.testing.assert_allclose(derivative(g, 0.0), want, rtol=1e-6)
    np.testing.assert_allclose(jvp(f, (X0, X1), (D0, np.zeros_like(X1)))[1], want, rtol=1e-6)
    np.testing.assert_allclose(jacfwd(lambda a: f(a, X1), X0).ravel() @ D0.ravel(), want, rtol=1e-6)


def _constant_slice(x):
    v = np.tile(x[:1], 3) + np.repeat(x[::3], 3)[:3]   # three equal entries, whatever x is
    def g(t):
        return t * 0.606 + np.tanh(t)
    w = g(v) + sum(g(t) for t in [v])
    return np.std(w) * 0.614 + 0.3 * np.sum(np.sin(w))


def test_std_of_a_slice_constant_up_to_rounding():
    # the fuzzer's program (numpy seed 700 #6732): std(w) is 0 for every x, but its entries differ in the
    # last bit at this point; its derivative is 0, not 1 / (2 * rounding noise) times the noise
    x = np.array([0.6908693359930483, 0.85732458464749, 0.30125891243551445])
    v = 2 * x[0]
    w = 2 * (v * 0.606 + np.tanh(v))
    want = np.array([0.3 * 3 * np.cos(w) * 2 * 2 * (0.606 + 1 - np.tanh(v) ** 2), 0.0, 0.0])
    from contexts import gradient
    np.testing.assert_allclose(gradient(_constant_slice, x)[0], want, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(jacfwd(_constant_slice, x), want, rtol=1e-9, atol=1e-12)
