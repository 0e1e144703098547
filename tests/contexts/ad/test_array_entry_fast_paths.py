"""The array fast paths of issue 18 (`ufuncs._hot`, `binop_adj`'s plain-array branches, `_gradients_of`'s
finished arrays) give what the general steps give: NaN entries, integers, broadcasting and float32 take those."""

import numpy as np
import pytest

from contexts.ad import gradient


def test_a_nan_an_elementwise_pullback_made_is_dropped_where_the_program_dropped_it():
    with np.errstate(invalid="ignore"):
        (g,) = gradient(lambda x: np.sum(np.where(x > 0, np.sqrt(x), 0.0)), np.array([-1.0, 4.0]))
    assert g.tolist() == [0.0, 0.25]


def test_an_infinite_gradient_entry_is_kept():
    with np.errstate(divide="ignore"):
        (g,) = gradient(lambda x: np.sum(np.sqrt(x)), np.array([0.0, 4.0]))
    assert g.tolist() == [np.inf, 0.25]


def test_arrays_floats_and_an_integer_together():
    x = np.array([1.0, 2.0, 3.0])
    gx, gs, gn = gradient(lambda x, s, n: np.sum(x * s) * n, x, 2.0, 3)
    assert gx.tolist() == [6.0, 6.0, 6.0] and gs == 18.0 and type(gs) is float
    assert gn == 12.0  # (the integer's derivative, at its float)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_an_array_minus_a_reduction_and_a_scalar_over_an_array(dtype):
    x = np.array([0.5, -1.0, 2.0], dtype)
    (g,) = gradient(lambda x: np.sum(x - np.max(x)) + np.sum(1 / (1 + x * x)), x)
    expected = 1.0 - np.array([0.0, 0.0, 3.0]) - 2 * x / (1 + x * x) ** 2
    assert g.dtype == dtype and np.allclose(g, expected, rtol=1e-6)


def test_broadcast_operands_have_their_cotangents_summed_down():
    a, b = np.ones((3, 1)), np.arange(4.0)
    ga, gb = gradient(lambda a, b: np.sum(a - b) + np.sum(b + a), a, b)
    assert ga.shape == (3, 1) and ga.ravel().tolist() == [8.0] * 3 and gb.tolist() == [0.0] * 4


def test_matrix_products_of_both_kinds():
    W, x = np.arange(6.0).reshape(2, 3), np.array([1.0, -1.0, 2.0])
    gW, gx = gradient(lambda W, x: np.sum(W @ x) + np.sum(x @ W.T), W, x)
    assert gW.tolist() == [[2.0, -2.0, 4.0]] * 2 and gx.tolist() == [6.0, 10.0, 14.0]
