"""A dual's tangent laid out in memory as its value is: where numpy makes a view of the value (an F-ordered
array's reshape or ravel in F order), the tangent must be a view too, or a write through it changes the
value and not its derivative (session 51's known silent wrong: jacfwd gave 80 and 8 where the derivative
is 0 and 808)."""

from __future__ import annotations

import numpy as np
import pytest

from contexts import jacfwd, jvp
from contexts.forward.dual import Dual, Tag
from overdub.errors import OverdubError

X = np.asfortranarray(np.arange(1.0, 7.0).reshape(2, 3))


def _write_through_an_f_view(x):
    y = x * 1.0  # (F-ordered like x)
    v = y.reshape(6, order="F")  # a view of y's values
    v[0] = 10.0 * v[1]  # y[0, 0] = 10 * y[1, 0]
    return float(np.sum(y * y))


def _closed_form(x):
    """d/dx of sum(y * y) with y = x but y[0, 0] = 10 x[1, 0]."""
    g = 2.0 * np.array(x)
    g[0, 0] = 0.0
    g[1, 0] = 2.0 * x[1, 0] + 200.0 * x[1, 0]
    return g


def test_jacfwd_of_an_f_ordered_input_written_through_a_view():
    np.testing.assert_allclose(np.asarray(jacfwd(_write_through_an_f_view, X)), _closed_form(X))


@pytest.mark.parametrize("order", ["C", "F"])
def test_jvp_of_an_f_ordered_input_written_through_a_view(order):
    want = _closed_form(X)
    for k in range(6):
        d = np.zeros((2, 3), order=order)
        d.flat[k] = 1.0
        assert jvp(_write_through_an_f_view, (X,), (d,))[1] == pytest.approx(float(np.sum(want * d)))


def test_a_write_through_a_view_whose_tangent_is_a_copy_is_refused():
    # (a value laid out unlike its tangent, as an operation mixing layouts may leave one: its F-order reshape
    # is a view of the value and a copy of the tangent)
    a = Dual(np.asfortranarray(np.ones((2, 3))), np.ones((2, 3)), Tag())
    v = a.reshape(6, order="F")
    with pytest.raises(OverdubError, match="cannot write into this array"):
        v[0] = 2.0
    with pytest.raises(OverdubError, match="cannot write into this array"):
        v += 1.0
    assert float(np.sum(v.tangent)) == 6.0  # (reading it is fine)
