"""scipy.stats' argument parsers, made by `exec` from a template each distribution keeps, transformed by reverse
mode from that text (session 67, sweep O: pyesg's `self.dW.rvs(...)` on a process object holding its
parameters was refused, "no source for _parse_args_rvs"). Against central differences; draws seeded."""

import numpy as np
import pytest
from scipy import stats

from contexts import gradient
from tests import fd

pytestmark = pytest.mark.one_mode


class Process:
    def __init__(self, mu, sigma, dist=stats.norm):
        self.mu, self.sigma, self.dW = mu, sigma, dist

    def path(self, n):
        z = self.dW.rvs(size=(n,), random_state=np.random.RandomState(3))
        return np.cumsum(self.mu + self.sigma * z)


def drift_and_scale(p):
    return float(Process(p[0], p[1]).path(6) @ np.linspace(0.5, 1.5, 6))


def located_draws(p):  # (loc and scale by keyword, through the parser: `loc + scale * draws`)
    proc = Process(p[0], p[1], dist=stats.expon)
    z = proc.dW.rvs(loc=p[0], scale=p[1], size=5, random_state=np.random.RandomState(7))
    return float(np.sum(z * z))


@pytest.mark.parametrize("f", [drift_and_scale, located_draws])
def test_draws_through_a_distribution_held_beside_parameters(f):
    p = np.array([0.3, 1.2])
    want = fd.gradient(f, p)[0]
    assert np.abs(want).max() > 0.5
    np.testing.assert_allclose(gradient(f, p)[0], want, rtol=1e-6)
