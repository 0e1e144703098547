"""`jacobian`'s default mode takes forward mode's Jacobian first for up to three plain float inputs (one
forward pass), where reverse mode's recording, made to count the outputs first, cost as much as forward
mode's whole answer (statsmodels' `arma_acf` of 2 coefficients: 531 ms, 148 ms by forward mode). Each answer
against central differences; forward mode's refusal and outputs of other kinds are reverse mode's."""

import numpy as np
import pytest

import contexts
from contexts import jacobian
from contexts.ad import api
from tests.fd import jacobian as fd_jacobian


@pytest.fixture
def reverse_recordings(monkeypatch):
    calls = []
    original = api._jacobian

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)
    monkeypatch.setattr(api, "_jacobian", counted)
    return calls


def acf(c):  # (an ARMA(1, 1)'s autocorrelations, as statsmodels' arma_acf computes them)
    phi, theta = c
    r1 = (1 + phi * theta) * (phi + theta) / (1 + 2 * phi * theta + theta ** 2)
    return np.array([1.0] + [r1 * phi ** k for k in range(5)])


@pytest.mark.parametrize("f, x", [(acf, np.array([0.5, 0.3])),
                                  (lambda t: np.array([np.cos(t), np.sin(t), t * t]), 0.7),
                                  (lambda x: np.sum(x ** 3), np.array([0.2, 1.3, -0.4]))])
def test_few_plain_inputs_take_no_reverse_recording(reverse_recordings, f, x):
    J = jacobian(f, x)
    assert reverse_recordings == []
    np.testing.assert_allclose(np.asarray(J), fd_jacobian(f, x), rtol=1e-6, atol=1e-9)


def test_four_inputs_are_recorded_first(reverse_recordings):
    x = np.array([0.2, 1.3, -0.4, 0.9])
    np.testing.assert_allclose(jacobian(lambda v: np.sum(v ** 2) * np.ones(2), x),
                               fd_jacobian(lambda v: np.sum(v ** 2) * np.ones(2), x), rtol=1e-6, atol=1e-9)
    assert reverse_recordings == [1]


def test_forward_refusal_gives_reverse_rows(monkeypatch, reverse_recordings):
    def refusing(f, x, **kwargs):
        raise contexts.NoRuleError("forward mode refuses (a test's)")
    monkeypatch.setattr(contexts.forward, "jacfwd", refusing)
    x = np.array([0.5, 0.3])
    np.testing.assert_allclose(jacobian(acf, x), fd_jacobian(acf, x), rtol=1e-6, atol=1e-9)
    assert reverse_recordings == [1]


def test_a_dict_output_is_answered_as_reverse_mode_gives_it():
    def f(x):
        return {"a": x * 2.0, "b": np.array([x[0] * x[1]])}
    x = np.array([0.5, 0.3])
    J = jacobian(f, x)
    assert set(J) == {"a", "b"}
    np.testing.assert_allclose(J["a"], 2.0 * np.eye(2))
    np.testing.assert_allclose(J["b"], [[0.3, 0.5]])
