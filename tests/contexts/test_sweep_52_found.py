"""Sweep G's (session 52) false refusals, each reduced to its pattern and checked against central differences."""

from __future__ import annotations

import numpy as np
import pytest

from contexts import ADContext, gradient, jvp
from tests.fd import gradient as fd_gradient


def _validator(x):
    """pymcdm's matrix validator: `np.all(dominant == alt)` with `dominant` a list of an array's column maxima
    (duals in forward mode) and `alt` a row (a dual array): numpy asked each dual for a plain array."""
    m = np.array([[x[0], 2.0], [3.0, x[1]]])
    best = [np.max(m, axis=0)[i] for i in range(2)]
    dominant = np.where([np.all(best == row) for row in m])[0]
    ordered = [bool(np.all(best >= row)) for row in m]
    return float(np.sum(m ** 2)) + 0.0 * len(dominant) + 0.0 * sum(ordered)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_a_list_of_duals_compared_with_a_dual_row(mode):
    x = np.array([1.3, 4.0])
    if mode == "reverse":
        with ADContext():
            got = gradient(_validator, x)[0]
    else:
        got = np.array([jvp(_validator, (x,), (e,))[1] for e in np.eye(2)])
    np.testing.assert_allclose(got, fd_gradient(_validator, x)[0], rtol=1e-7)
