"""scipy's optimisers that move by comparisons of the objective only (Nelder-Mead, differential evolution,
dual annealing): differentiated as code their optimum's derivative is 0 (forward mode gave 0 for the
Nelder-Mead x whose central difference is 2); refused by name in both modes. Run with constant inputs,
they are plain functions."""

import numpy as np
import pytest

from contexts import derivative, gradient
from contexts.rules.registry import NoDerivative

optimize = pytest.importorskip("scipy.optimize")


def objective(x, a):
    return (x[0] - a) ** 2 + (x[1] - 2 * a) ** 2


SEARCHES = {
    "fmin": lambda a: optimize.fmin(objective, np.zeros(2), args=(a,), disp=0)[1],
    "minimize-nelder-mead": lambda a: optimize.minimize(objective, np.zeros(2), args=(a,),
                                                        method="Nelder-Mead").x[1],
    "minimize-nelder-mead-closure": lambda a: optimize.minimize(lambda x: objective(x, a), np.zeros(2),
                                                                method="Nelder-Mead").fun,
    "differential-evolution": lambda a: optimize.differential_evolution(
        objective, [(-5, 5), (-5, 5)], args=(a,), seed=1, maxiter=20, polish=False).x[1],
}


@pytest.mark.parametrize("mode", [gradient, derivative], ids=["reverse", "forward"])
@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_search_by_comparisons_is_refused(mode, name):
    with pytest.raises(NoDerivative, match="comparing the objective's values"):
        mode(SEARCHES[name], 1.2)


@pytest.mark.parametrize("mode", [gradient, derivative], ids=["reverse", "forward"])
def test_search_on_constants_runs(mode):
    def scaled(b):
        x = optimize.fmin(objective, np.zeros(2), args=(1.5,), disp=0, xtol=1e-10, ftol=1e-12)
        return b * x[1]
    got = mode(scaled, 2.0)
    got = got[0] if isinstance(got, tuple) else got
    assert got == pytest.approx(3.0, rel=1e-6)  # x[1] = 2 * 1.5
