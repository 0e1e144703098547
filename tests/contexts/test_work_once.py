"""Work an entry point does once, not once per output: forward mode's check of the equality tests and
kinks a reverse pass meets runs once per pullback (a Jacobian's rows each ran it: skfuzzy's gbellmf, whose
|x - c| meets its kink at a grid point, 11 forward passes for 11 rows). Counted, not timed; the Jacobians
are checked against central differences."""

import numpy as np
import pytest

import contexts
import contexts.compose as compose
from contexts import jacobian, vjp
from tests.fd import jacobian as fd_jacobian

GRID = np.linspace(0.0, 10.0, 11)


def bell(p):  # (skfuzzy.gbellmf's formula: |x - c| at the grid point x = c = 5 is abs's kink)
    a, b, c = p[0], p[1], p[2]
    return 1.0 / (1.0 + np.abs((GRID - c) / a) ** (2 * b))


@pytest.fixture
def counted(monkeypatch):
    calls = []
    real = compose.check_special

    def spy(*args, **kwargs):
        calls.append(args[3])
        return real(*args, **kwargs)
    monkeypatch.setattr(compose, "check_special", spy)
    return calls


def test_jacobian_checks_a_kink_once(counted):
    p = np.array([2.0, 3.0, 5.0])
    J = jacobian(bell, p)
    assert counted, "the kink at the grid point is checked"
    assert len(counted) == 1, f"forward mode's check ran {len(counted)} times for one Jacobian"
    np.testing.assert_allclose(J, fd_jacobian(bell, p), rtol=1e-6, atol=1e-9)


def test_jacobian_off_the_kink_checks_nothing(counted):
    p = np.array([2.0, 3.0, 5.3])
    np.testing.assert_allclose(jacobian(bell, p), fd_jacobian(bell, p), rtol=1e-6, atol=1e-9)
    assert not counted


def test_pullback_checks_a_tie_once(counted):
    # np.maximum's tie at x[1] = 1, met by the reverse pass, is checked at the first cotangent (a zero one
    # for its row) and not again; the row's answer is the two sides' mean
    def f(x):
        return np.stack([np.abs(x[0]) * 0.0 + x[1], np.maximum(x[1], 1.0) * x[0]])
    x = np.array([0.5, 1.0])
    y, back = contexts.pullback(f, x)
    np.testing.assert_allclose(back(np.array([1.0, 0.0]))[0], [0.0, 1.0])
    assert len(counted) == 1
    second = back(np.array([0.0, 1.0]))[0]
    assert len(counted) == 1
    np.testing.assert_allclose(back(np.array([0.0, 1.0]))[0], second)
    assert len(counted) == 1
    h = 1e-6  # (the mean of the two one-sided slopes of max(x1, 1) x0 in x1 at the tie: (0 + x0) / 2)
    sides = [(f(x + [0, s * h])[1] - f(x)[1]) / (s * h) for s in (1, -1)]
    np.testing.assert_allclose(second, [1.0, np.mean(sides)], rtol=1e-6)
