"""np.arange's values, start + i * step, are differentiable in start and step: it was registered as
non-differentiable, and every mode gave 0, silently (14.4 below). Random draws with differentiated
parameters (`np.random.normal(loc, scale)`) were non-differentiable too (0); they are refused now, as
the derivative of a sample in its parameters is a choice the code does not make. Against central
differences, at points where the count of arange's values does not change."""

import numpy as np
import pytest

from contexts import derivative, gradient, hessian, jacfwd
from tests import fd

X = np.array([0.3, 0.65])

FUNCTIONS = {
    "start": lambda x: (np.arange(x[0], x[0] + 3.5) ** 2).sum() * x[1],
    "start, step": lambda x: (np.arange(x[0], 3.6, x[1]) ** 2).sum(),
    "stop alone": lambda x: np.arange(x[0] * 10.0 + 0.05).sum() * x[1],  # (0, 1, 2: the stop sets the count only)
}


@pytest.mark.parametrize("mode", ["gradient", "jacfwd"])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_right(name, mode):
    f = FUNCTIONS[name]
    got = gradient(f, X)[0] if mode == "gradient" else jacfwd(f, X)
    np.testing.assert_allclose(got, fd.gradient(f, X)[0], rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", ["start", "start, step"])
def test_hessian(name):
    f = FUNCTIONS[name]
    np.testing.assert_allclose(hessian(f, X), fd.hessian(f, X, matrix=True), rtol=1e-4, atol=1e-5)


def test_a_differentiated_step_by_name():
    # (refused until session 32; now taken by position, as numpy's C functions with rules are)
    f = lambda s: (np.arange(0.3, 3.6, step=s) ** 2).sum()  # noqa: E731
    assert gradient(f, 0.65)[0] == pytest.approx(fd.derivative(f, 0.65), rel=1e-6)
    assert derivative(f, 0.65) == pytest.approx(fd.derivative(f, 0.65), rel=1e-6)


def test_scalar_derivative():
    f = lambda s: (np.arange(0.3, 3.6, s) ** 2).sum()  # noqa: E731
    assert derivative(f, 0.65) == pytest.approx(fd.derivative(f, 0.65), rel=1e-6)
    assert gradient(f, 0.65)[0] == pytest.approx(fd.derivative(f, 0.65), rel=1e-6)


@pytest.mark.parametrize("draw", [lambda m: np.random.normal(m, 1.0), lambda m: np.random.uniform(m, m + 1.0)],
                         ids=["normal", "uniform"])
@pytest.mark.parametrize("mode", ["gradient", "derivative"])
def test_random_draws_with_differentiated_parameters(draw, mode):
    # (refused until session 34; now the pathwise derivative, a draw being loc + scale * standard_normal()
    # and low + (high - low) * random() as numpy computes it: d/dm is 1 for both)
    g = (gradient if mode == "gradient" else derivative)(draw, 0.3)
    assert (g[0] if mode == "gradient" else g) == pytest.approx(1.0, rel=1e-12)


def test_random_draws_with_constant_parameters_are_constants():
    np.random.seed(3)
    z = np.random.normal(0.0, 1.0)
    np.random.seed(3)
    assert gradient(lambda m: np.random.normal(0.0, 1.0) * m, 0.3)[0] == pytest.approx(z)


def test_nextafter_is_the_identity_in_x():
    """np.nextafter was non-differentiable (0); math.nextafter had the identity's rule: both now."""
    f = lambda x: (np.nextafter(x * x, np.inf) * 2.0).sum()  # noqa: E731
    np.testing.assert_allclose(gradient(f, X)[0], 4 * X, rtol=1e-12)
    np.testing.assert_allclose(jacfwd(f, X), 4 * X, rtol=1e-12)
    np.testing.assert_allclose(hessian(f, X), 4 * np.eye(2), rtol=1e-12)
