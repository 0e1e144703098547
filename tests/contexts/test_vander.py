"""np.vander as numpy code (`rules.numpy.stand_ins.vander`, session 69: forward mode refused it, numpy writing x
into an `np.empty` array; xraydb's fits met it): numpy's own values bit for bit, and both modes against central
differences."""

import numpy as np
import pytest

from contexts import gradient, jacfwd
from contexts.rules.numpy.stand_ins import vander
from tests import fd

pytestmark = pytest.mark.one_mode


@pytest.mark.parametrize("x", [np.array([0.3, -1.7, 2.5, 0.0]), np.array([3, -2, 5]), np.array([1.5, 2.5], np.float32),
                               np.array([1 + 2j, 0.5j]), np.array([], float), [1.0, 2.0]])
@pytest.mark.parametrize("N", [None, 0, 1, 5])
@pytest.mark.parametrize("increasing", [False, True])
def test_numpy_s_values(x, N, increasing):
    want, got = np.vander(x, N, increasing), vander(x, N, increasing)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("increasing", [False, True])
def test_derivatives(mode, increasing):
    def f(x):
        return float(np.sum(np.vander(x * 2, 4, increasing) @ np.array([0.5, -1.0, 2.0, 3.0]) ** 2))
    x = np.array([1.3, 0.4, -2.0])
    got = gradient(f, x.copy())[0] if mode == "reverse" else jacfwd(f, x.copy())
    np.testing.assert_allclose(got, fd.gradient(f, x)[0], rtol=1e-6)
