"""`gradient(f, *args, wrt=...)`: gradients of the chosen arguments only, the others held constant and not
differentiated; each checked against central differences of f in that argument alone."""

import math

import numpy as np
import pytest

import contexts
from contexts import gradient, value_and_gradient
from overdub.errors import OverdubError

from tests.contexts.lowered.test_steering import loop_pow
from tests.fd import gradient as fd_gradient


def _partial(f, args, i):
    """Central differences of f in argument i alone."""
    return fd_gradient(lambda v: f(*args[:i], v, *args[i + 1:]), args[i])[0]


@pytest.mark.parametrize("n", [0, 1, 7, 30])
def test_counter_argument_left_out(n):
    (gx,) = gradient(loop_pow, 1.03, n, wrt=0)
    assert gx == pytest.approx(n * 1.03 ** max(n - 1, 0) if n else 0.0, rel=1e-12)
    assert gx == pytest.approx(_partial(loop_pow, (1.03, n), 0), rel=1e-6, abs=1e-12)


def _mixed(x, w, scale, data):
    total = 0.0
    for row in data:
        total = total + scale * math.tanh(row[0] * x + row[1]) * w
    return total + x * w ** 2


ARGS = (0.7, -1.3, 2.5, [(0.5, 0.1), (1.5, -0.2), (-0.3, 0.4)])


@pytest.mark.parametrize("wrt", [0, 1, 2, (0, 1), (2, 0), -3, (1, -4)])
def test_chosen_arguments_in_their_order(wrt):
    got = gradient(_mixed, *ARGS, wrt=wrt)
    order = (wrt,) if isinstance(wrt, int) else wrt
    assert len(got) == len(order)
    for g, i in zip(got, order):
        assert g == pytest.approx(_partial(_mixed, ARGS, i % 4), rel=1e-8)


def test_value_and_gradient_and_arrays():
    w = np.linspace(-1.0, 1.0, 5)
    X = np.arange(15.0).reshape(3, 5) / 10

    def loss(w, X, reg):
        return np.sum(np.tanh(X @ w) ** 2) + reg * np.dot(w, w)

    y, (gw, greg) = value_and_gradient(loss, w, X, 0.3, wrt=(0, 2))
    assert y == pytest.approx(loss(w, X, 0.3))
    np.testing.assert_allclose(gw, _partial(loss, (w, X, 0.3), 0), rtol=1e-7)
    assert greg == pytest.approx(np.dot(w, w))


def test_a_list_left_out_holding_values_is_held_constant():
    # the list holds x's float itself: the partial derivative in the first argument holds it fixed
    x = 1.7
    f = lambda x, items: x * items[0] + items[1] ** 2 * x  # noqa: E731
    (g,) = gradient(f, x, [x, 2.0], wrt=0)
    assert g == pytest.approx(_partial(f, (x, [x, 2.0]), 0), rel=1e-9)


def test_left_out_arguments_are_not_differentiated():
    # an opaque function without a rule is refused when reached with a differentiated value: with the
    # argument left out of `wrt` it is a constant, and the call goes through
    @contexts.opaque
    def steps(n):
        return float(round(n))

    def f(x, n):
        return x ** steps(n)

    with pytest.raises(OverdubError):
        gradient(f, 1.5, 3.0)
    (g,) = gradient(f, 1.5, 3.0, wrt=0)
    assert g == pytest.approx(3 * 1.5 ** 2)


def _overwrite(a, b):
    b[0] = 0.0
    return np.sum(a * a)


def test_an_array_left_out_sharing_memory_is_refused():
    x = np.arange(1.0, 4.0)
    with pytest.raises(OverdubError, match="shares memory with argument 0"):
        gradient(_overwrite, x, x[:2], wrt=0)
    assert np.array_equal(x, [1.0, 2.0, 3.0])  # refused before running

    class Holder:
        pass
    h = Holder()
    h.arr = x
    with pytest.raises(OverdubError, match="holds argument 0"):
        gradient(lambda a, h: np.sum(a * h.arr), x, h, wrt=0)
    with pytest.raises(OverdubError, match="holds argument 0"):
        gradient(lambda a, d: np.sum(a * d["k"]), x, {"k": x[1:]}, wrt=0)
    # copies are independent: the partial derivative
    (g,) = gradient(_overwrite, x.copy(), x[:2].copy(), wrt=0)
    np.testing.assert_allclose(g, 2 * x)


@pytest.mark.parametrize("wrt", [(0, 0), 2, -3, (), "x", 1.0, True, [0, None]])
def test_bad_wrt_is_refused(wrt):
    with pytest.raises(OverdubError, match="wrt"):
        gradient(lambda x, y: x * y, 2.0, 3.0, wrt=wrt)


def _inner(x, y):
    return math.sin(x * y) + x ** 3 * y


@pytest.mark.parametrize("wrt", [0, 1, (1, 0)])
def test_gradient_with_wrt_differentiated_again(wrt):
    # the outer reverse pass goes through the inner `gradient(..., wrt=)` (forward over reverse)
    def outer(x, y):
        g = gradient(_inner, x, y, wrt=wrt)
        v, gv = value_and_gradient(_inner, x, y, wrt=wrt)
        return sum(gi * (k + 1) for k, gi in enumerate(g)) + v * gv[0]

    args = (0.6, -1.1)
    got = gradient(outer, *args)
    for i in range(2):
        assert got[i] == pytest.approx(_partial(outer, args, i), rel=1e-6)


def test_forward_mode_through_gradient_with_wrt():
    # the argument left out carries forward mode's perturbation: it is followed, not taken for a constant
    from contexts import derivative
    from tests.fd import derivative as fd_derivative
    chosen = lambda x: gradient(_inner, x, -1.1, wrt=0)[0]  # noqa: E731
    left_out = lambda y: gradient(_inner, 0.6, y, wrt=0)[0]  # noqa: E731
    for f, p in ((chosen, 0.6), (left_out, -1.1)):
        assert derivative(f, p) == pytest.approx(fd_derivative(f, p), rel=1e-7)


def test_a_refused_derivative_is_an_error_unless_left_out():
    # hyp2f1 has no known derivative in its parameter a: asked for, it is an error (never an object or a
    # zero); left out of `wrt`, the derivative in z is the closed form a*b/c * 2F1(a+1, b+1; c+1; z)
    sc = pytest.importorskip("scipy.special")
    from contexts.rules.registry import NoDerivative
    f = lambda z, a: sc.hyp2f1(a, 1.5, 2.5, z)  # noqa: E731
    with pytest.raises(NoDerivative, match="wrt"):
        gradient(f, 0.3, 0.5)
    with pytest.raises(NoDerivative):
        gradient(lambda a: sc.hyp2f1(a, 1.5, 2.5, 0.3), 0.5)
    (gz,) = gradient(f, 0.3, 0.5, wrt=0)
    assert gz == pytest.approx(0.5 * 1.5 / 2.5 * sc.hyp2f1(1.5, 2.5, 3.5, 0.3), rel=1e-12)
    assert gz == pytest.approx(_partial(f, (0.3, 0.5), 0), rel=1e-8)
