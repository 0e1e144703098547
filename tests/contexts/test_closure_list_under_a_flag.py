"""A closure passed on that appends to a list it captures, where the list is made only under a flag
(irt-parameter-estimation's `mle_zlc`: `if return_history: zlc_hist = []`, then `def JL(params): ...
if return_history: zlc_hist.append(...)`, handed to scipy.optimize.root). Reverse mode refused every such
function when transforming it: the appended values' cotangents could not reach the closure's adjoint. The
list is checked where the closure is made instead: unbound there and not bound again afterwards, the
closure cannot change it (its method call would raise); bound, still refused. Answers against central
differences, reverse mode alone."""

import numpy as np
import pytest

from contexts import gradient
from contexts.ad.runtime import UnsupportedFunction
from tests import fd


def _apply(fn, v):
    return fn(v) + fn(2.0 * v)


def with_history(x, keep=False):
    if keep:
        hist = []

    def step(v):
        y = v * x + np.sin(v)
        if keep:
            hist.append(y)
        return y

    total = _apply(step, x)
    return total + (len(hist) if keep else 0.0)


def bound_after(x):
    def step(v):
        hist.append(v * x)
        return v * x

    hist = []
    return _apply(step, x) + hist[0]


@pytest.mark.one_mode  # (reverse mode's own answer, tests/conftest.py)
def test_a_list_never_bound_is_no_change():
    f = lambda x: with_history(x)
    np.testing.assert_allclose(gradient(f, 1.3)[0], fd.gradient(f, 1.3)[0], rtol=1e-8)


@pytest.mark.one_mode
def test_a_list_bound_when_the_closure_is_made_is_refused():
    with pytest.raises(UnsupportedFunction, match="changing `hist` in place by a method call"):
        gradient(lambda x: with_history(x, keep=True), 1.3)


@pytest.mark.one_mode
def test_a_list_bound_after_the_closure_is_made_is_refused():
    with pytest.raises(UnsupportedFunction, match="changing `hist` in place by a method call"):
        gradient(bound_after, 1.3)


def test_irt_parameter_estimation():
    zlc_mle = pytest.importorskip("irt_parameter_estimation.zlc_mle")
    theta = np.linspace(-2.0, 2.0, 9)
    trials = np.full(9, 50.0)
    r0 = np.array([5.0, 8.0, 12.0, 18.0, 25.0, 32.0, 38.0, 42.0, 45.0])

    def f(r):
        zeta, lam, c, chi2, ok = zlc_mle.mle_zlc(2, theta, r, trials, 0.0, 1.0, 0.0, verbose=False)
        return zeta + 2.0 * lam

    np.testing.assert_allclose(gradient(f, r0)[0], fd.gradient(f, r0, h=1e-4, order=2)[0], rtol=1e-5, atol=1e-8)
