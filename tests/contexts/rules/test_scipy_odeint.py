"""scipy.integrate.odeint in forward mode by the sensitivity equations (it was refused: LSODA is Fortran),
against closed forms and central differences; reverse mode's adjoint is tested in tests/contexts/test_odeint_reverse.py."""

import numpy as np
import pytest

from contexts import derivative, gradient
from contexts.forward import jacfwd
from contexts.rules.registry import NoDerivative

integrate = pytest.importorskip("scipy.integrate")
odeint = integrate.odeint

T = np.linspace(0.0, 2.0, 6)


def decay(a):  # y' = -a y, y(0) = 1: y(1) = exp(-a)
    return odeint(lambda y, t: -a * y, 1.0, [0.0, 1.0])[-1, 0]


def decay_tfirst(a):
    return odeint(lambda t, y, a: -a * y * (1 + t), 2.0, [0.0, 1.0], args=(a,), tfirst=True)[-1, 0]


def oscillator(p):  # y'' = -k y from (y0, 0): y0 cos(sqrt(k) t)
    k, y0 = p
    return odeint(lambda y, t, k: [y[1], -k * y[0]], [y0, 0.0], T, args=(k,), rtol=1e-11, atol=1e-12)[:, 0]


def test_decay_closed_form():
    assert derivative(decay, 1.3) == pytest.approx(-np.exp(-1.3), rel=1e-6)


def test_time_dependent_rhs_closed_form():
    # y = 2 exp(-a (t + t²/2)): at t = 1, dy/da = -1.5 y
    assert derivative(decay_tfirst, 0.8) == pytest.approx(-1.5 * 2 * np.exp(-0.8 * 1.5), rel=1e-6)


def test_oscillator_parameters_and_initial_value():
    p = np.array([2.0, 0.7])
    k, y0 = p
    w = np.sqrt(k)
    want = np.stack([-y0 * T * np.sin(w * T) / (2 * w), np.cos(w * T)], axis=1)
    np.testing.assert_allclose(jacfwd(oscillator, p), want, rtol=1e-6, atol=1e-8)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_perturbed_time_points_refused():
    with pytest.raises(NoDerivative, match="time points"):
        derivative(lambda s: odeint(lambda y, t: -y, 1.0, [0.0, s])[-1, 0], 1.0)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_full_output_refused():
    with pytest.raises(NoDerivative, match="full_output"):
        derivative(lambda a: odeint(lambda y, t: -a * y, 1.0, [0.0, 1.0], full_output=True)[0][-1, 0], 1.0)


def test_reverse_mode_closed_form():  # (the continuous adjoint: tests/contexts/test_odeint_reverse.py)
    assert gradient(decay, 1.3)[0] == pytest.approx(-np.exp(-1.3), rel=1e-6)
