"""Cases found by sweeps of generated programs and PyPI packages (POT, numpy_financial, sklearn), each
checked in every mode against central differences."""

import numpy as np
import pytest

from contexts import gradient, hessian, jacfwd
from tests import fd

X = np.array([-0.82, -1.23, 0.67, 0.4])


@pytest.mark.parametrize("f", [
    lambda x: x.clip(min=-0.101).sum() + (x.clip(max=0.5) ** 2).sum(),
    lambda x: np.clip(x, min=-0.9, max=0.5).sum(),
    lambda x: x[:3].clip(min=x[3] ** 2 - 1.0).sum(),  # (a differentiated bound by keyword)
    lambda x: np.clip(x[:3], a_min=None, a_max=x[3]).sum() * x[0],
], ids=["method min/max", "function min/max", "active min", "active a_max"])
def test_clip_bounds_by_keyword(f):
    # (forward mode called np.clip(a, None, None, min=...): ValueError; reverse mode refused a keyword
    # bound: its rule gave no cotangent by keyword)
    expected = fd.gradient(f, X)[0]
    np.testing.assert_allclose(gradient(f, X)[0], expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(jacfwd(f, X), expected, rtol=1e-6, atol=1e-9)


def test_hessian_through_a_constant_zero_power():
    # (POT's mm_unbalanced at reg=0: `0 ** 0.0`, a constant, and forward over reverse computed its
    # partial in the base, 0 ** -1.0: ZeroDivisionError)
    def f(m):
        c, r = 0, 0 / 1.4
        return np.sum((c ** r) * np.exp(-m) * m)
    m = np.array([0.3, 0.7])
    np.testing.assert_allclose(hessian(f, m), fd.hessian(f, m, matrix=True), rtol=1e-4, atol=1e-6)
