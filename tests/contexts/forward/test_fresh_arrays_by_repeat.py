"""An array made by `np.repeat` or `np.tile` of constants in the code run, then filled with differentiated values
(finoptions' trinomial tree: `OptionValue = np.repeat(0.0, 2 * n + 1)`, then `OptionValue[i] = np.maximum(a,
b)`), is a dual of zero tangent where forward mode makes it, as `np.zeros`' is: the store was refused
("a perturbed value was stored into a plain float array", sweep U). Against central differences."""

import numpy as np
import pytest

from contexts import derivative, gradient, jacfwd, jvp
from tests import fd


class _Tree:
    """finoptions' `TrinomialTreeOption._calc_price`, reduced: the values filled, then stepped back by a method."""

    def __init__(self, s, n=4):
        self.s, self.n = s, n

    def _step(self, i, values, p):
        return (p * values[i + 2] + (1.0 - 2.0 * p) * values[i + 1] + p * values[i]) * 0.99

    def price(self):
        n = self.n
        values = np.repeat(0.0, 2 * n + 1)
        for i in np.arange(0, 2 * n + 1):
            values[i] = np.maximum(0, self.s * 1.1 ** (i - n) - 2.0)
        for j in np.arange(0, n)[::-1]:
            for i in np.arange(0, j * 2 + 1):
                values[i] = self._step(i, values, 0.25)
        w = np.tile(np.array([0.0, 1.0]), 2)
        w[1] = self.s * self.s
        return values[0] + w.sum()


def tree(s):
    return _Tree(s).price()


@pytest.mark.one_mode  # (forward mode's own answer, tests/conftest.py)
def test_filled_after_repeat_and_tile():
    want = fd.derivative(tree, 2.0)
    assert jvp(tree, (2.0,), (1.0,))[1] == pytest.approx(want, rel=1e-7)
    assert derivative(tree, 2.0) == pytest.approx(want, rel=1e-7)
    assert gradient(tree, 2.0)[0] == pytest.approx(want, rel=1e-7)
    np.testing.assert_allclose(jacfwd(lambda x: tree(x[0]), np.array([2.0])), [want], rtol=1e-7)  # (on duals)
