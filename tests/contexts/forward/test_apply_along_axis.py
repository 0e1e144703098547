"""np.apply_along_axis in every mode, against central differences. numpy 2 converts its argument in C
(`_array_converter`), which forward mode's dual arrays cannot enter: forward mode, and hessian, refused it
(4% of the fuzzer's numpy programs); now the slices go through the function under forward mode and the
results are stacked where numpy puts them."""

import math

import numpy as np
import pytest

from contexts import hessian, jvp
from tests import fd
from tests.modes import ARRAY_MODES, assert_array_gradient

X = np.array([0.3, -0.7, 1.2, 0.5, 0.9, -0.2])

FUNCTIONS = {
    "rows to numbers": lambda a: np.apply_along_axis(lambda r: r @ r, 1, a.reshape(2, 3)).sum(),
    "columns to columns": lambda a: (np.apply_along_axis(lambda c: c * c.sum(), 0, a.reshape(2, 3))
                                     * np.arange(6.0).reshape(2, 3)).sum(),
    "math on items": lambda a: np.apply_along_axis(lambda r: math.sin(r[0]) * r[1], 1, a.reshape(3, 2)) @ [1.0, 2.0, 3.0],
    "rows to pairs": lambda a: (np.apply_along_axis(lambda r: np.array([r.sum(), r.prod()]), 1, a.reshape(3, 2))
                                * [[1.0, 2.0]]).sum(),
    "3-d, middle axis": lambda a: np.apply_along_axis(np.cumsum, 1, a.reshape(1, 3, 2)).sum() ** 2,
    "extra arguments": lambda a: np.apply_along_axis(lambda r, k: (r ** k).sum(), -1, a.reshape(2, 3), 3).sum(),
}

@pytest.mark.parametrize("mode", ARRAY_MODES)
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_right(name, mode):
    assert_array_gradient(mode, FUNCTIONS[name], X)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_hessian(name):
    f = FUNCTIONS[name]
    np.testing.assert_allclose(hessian(f, X), fd.hessian(f, X, matrix=True), rtol=1e-4, atol=1e-5)


def test_the_value_is_numpys():
    f = FUNCTIONS["rows to pairs"]
    y, _ = jvp(f, (X,), (np.ones(6),))
    assert y == pytest.approx(f(X), rel=1e-12)
