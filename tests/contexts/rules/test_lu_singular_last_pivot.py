"""scipy.linalg.lu_factor of a singular matrix whose last pivot is exactly 0 (a Markov generator's, choix's
`statdist`): L and U still move smoothly with A, and both modes differentiate them without U^-1 (both raised
numpy's LinAlgError from inside their rules before session 70), against central differences; the adjoint is
the tangent map's transpose."""

import numpy as np
import pytest
import scipy.linalg as spl

from contexts import jacfwd, jacobian
from contexts.rules.numpy.scipy_linalg import _lu_adjoint_last_zero, _lu_tangent_last_zero

from tests import fd


def statdist(x):  # choix.utils.statdist's steps, on a 3-state generator
    a = np.array([[0, x[0], 0.3], [0.2, 0, x[1]], [x[2], 0.4, 0]])
    gen = a - np.diag(a.sum(axis=1))
    lu, piv = spl.lu_factor(gen.T, check_finite=False)
    res = spl.solve_triangular(lu[:-1, :-1], -lu[:-1, -1], check_finite=False)
    res = np.append(res, 1.0)
    return (3 / res.sum()) * res


@pytest.mark.one_mode
@pytest.mark.parametrize("api", [jacobian, jacfwd])
def test_stationary_distribution(api):
    x = np.array([0.5, 0.9, 0.6])
    x_gen = np.array([[0, 0.5, 0.3], [0.2, 0, 0.9], [0.6, 0.4, 0]])
    assert spl.lu_factor((x_gen - np.diag(x_gen.sum(axis=1))).T)[0][-1, -1] == 0  # (the case meant)
    np.testing.assert_allclose(api(statdist, x), fd.jacobian(statdist, x), rtol=1e-6, atol=1e-9)


def test_the_adjoint_is_the_tangent_maps_transpose():
    rng = np.random.default_rng(7)
    n = 5
    low = np.tril(rng.normal(size=(n, n)), -1) + np.eye(n)
    up = np.triu(rng.normal(size=(n, n)))
    up[-1, -1] = 0.0
    for _ in range(3):
        da, g = rng.normal(size=(n, n)), rng.normal(size=(n, n))
        np.testing.assert_allclose(np.sum(_lu_tangent_last_zero(low, up, da) * g),
                                   np.sum(da * _lu_adjoint_last_zero(low, up, g)), rtol=1e-10)


def generator_lu(x):
    a = np.array([[0, x[0], 0.3], [0.2, 0, x[1]], [x[2], 0.4, 0]])
    gen = a - np.diag(a.sum(axis=1))
    return spl.lu_factor(gen.T, check_finite=False)[0].ravel()


@pytest.mark.one_mode
@pytest.mark.parametrize("api", [jacobian, jacfwd])
def test_the_whole_factor(api):
    # (U's last entry stays 0 along the generators, whose rows sum to 0: its derivative is 0 too)
    x = np.array([0.5, 0.9, 0.6])
    np.testing.assert_allclose(api(generator_lu, x), fd.jacobian(generator_lu, x), rtol=1e-6, atol=1e-8)
