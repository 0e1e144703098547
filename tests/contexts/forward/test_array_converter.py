"""numpy 2 converts the inputs of np.delete (and other Python functions) with the C `_array_converter`,
which forward mode's duals cannot pass: they were refused ("no forward rule for _array_converter"). Forward
mode gives it a form on duals (`conversion.DualsConverter`); reverse mode's rules, run on duals under
hessian, keep the C converter. Each against central differences."""

import numpy as np
import pytest

from contexts import gradient, hessian, jacfwd, jvp
from tests import fd

X = np.array([0.3, -1.2, 0.8, 1.9, -0.4, 0.6])


def _deleted(v):
    return np.sum(np.delete(v, [1, 3]) ** 3) + np.delete(v.reshape(2, 3), 0, axis=1).sum() * v[0]


def _deleted_by_mask(v):
    w = np.delete(v * v, np.array([True, False, False, True, False, False]))
    return np.sum(np.sin(w)) + w[0] * v[5]


@pytest.mark.parametrize("f", [_deleted, _deleted_by_mask])
def test_delete_in_every_mode(f):
    want = fd.gradient(f, X)[0]
    np.testing.assert_allclose(jacfwd(f, X), want, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(gradient(f, X)[0], want, rtol=1e-7, atol=1e-9)
    d = np.linspace(0.5, 1.5, X.size)
    assert jvp(f, (X,), (d,))[1] == pytest.approx(np.sum(want * d), rel=1e-7)
    np.testing.assert_allclose(hessian(f, X), fd.hessian(f, X), rtol=1e-5, atol=1e-5)
