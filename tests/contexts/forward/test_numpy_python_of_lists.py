"""numpy's Python functions given a list holding duals (numpy's dispatch does not look into a list): forward
mode runs their code, whose conversions build the dual array, where no rule answers. `np.trim_zeros([1.0, p,
q], "f")` (harold's Transfer validation) was refused (NoForwardRule; sweep U). Against central differences."""

import numpy as np
import pytest

from contexts import gradient, jacfwd, jvp
from tests import fd


def trimmed(p):
    return np.sum(np.asarray(np.trim_zeros([0.0, 1.0, p[0], p[1], 0.0], "fb"), dtype=float) ** 2)


def unwrapped(p):
    return np.sum(np.unwrap([0.1, p[0], p[1] + 6.0]) * np.array([1.0, 2.0, 3.0]))


P = np.array([3.0, 2.0])


@pytest.mark.parametrize("f", [trimmed, unwrapped], ids=lambda f: f.__name__)
def test_right_in_both_modes(f):
    want = fd.gradient(f, P)[0]
    np.testing.assert_allclose(jacfwd(f, P), want, rtol=1e-7)
    np.testing.assert_allclose(jvp(f, (P,), (np.array([1.0, -2.0]),))[1], want @ [1.0, -2.0], rtol=1e-7)
    np.testing.assert_allclose(gradient(f, P)[0], want, rtol=1e-7)
