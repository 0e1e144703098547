"""Work an entry point does once, not once per output: forward mode's check of the equality tests and
kinks a reverse pass meets runs once per pullback (a Jacobian's rows each ran it: skfuzzy's gbellmf, whose
|x - c| meets its kink at a grid point, 11 forward passes for 11 rows). A Jacobian of fewer plain
floats to more is forward mode's, one pass per 16 inputs, where reverse mode runs one pass per output.
Counted, not timed; the Jacobians are checked against central differences."""

import numpy as np
import pytest

import contexts
import contexts.compose as compose
from contexts import jacobian
import contexts.forward
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
    J = jacobian(bell, p, mode="reverse")
    assert counted, "the kink at the grid point is checked"
    assert len(counted) == 1, f"forward mode's check ran {len(counted)} times for one Jacobian"
    np.testing.assert_allclose(J, fd_jacobian(bell, p), rtol=1e-6, atol=1e-9)


def test_jacobian_off_the_kink_checks_nothing(counted):
    p = np.array([2.0, 3.0, 5.3])
    np.testing.assert_allclose(jacobian(bell, p, mode="reverse"), fd_jacobian(bell, p), rtol=1e-6, atol=1e-9)
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


@pytest.fixture
def forward_calls(monkeypatch):
    calls = []
    real = contexts.forward.jacfwd

    def spy(f, x, **kwargs):
        calls.append(np.shape(x))
        return real(f, x, **kwargs)
    monkeypatch.setattr(contexts.forward, "jacfwd", spy)
    return calls


def rotation(angles):  # (transforms3d's euler2mat: 3 angles to 9 entries)
    a, b, c = angles
    rx = np.array([[1.0, 0.0, 0.0], [0.0, np.cos(a), -np.sin(a)], [0.0, np.sin(a), np.cos(a)]])
    ry = np.array([[np.cos(b), 0.0, np.sin(b)], [0.0, 1.0, 0.0], [-np.sin(b), 0.0, np.cos(b)]])
    rz = np.array([[np.cos(c), -np.sin(c), 0.0], [np.sin(c), np.cos(c), 0.0], [0.0, 0.0, 1.0]])
    return rz @ ry @ rx


@pytest.mark.parametrize("f, x", [(bell, np.array([2.0, 3.0, 5.0])), (rotation, np.array([0.3, -0.2, 1.1]))])
def test_few_inputs_to_many_outputs_by_forward_mode(forward_calls, f, x):
    J = jacobian(f, x)
    assert forward_calls == [x.shape]
    assert J.shape == np.shape(f(x)) + x.shape
    np.testing.assert_allclose(J, fd_jacobian(f, x), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(jacobian(f, x, mode="reverse"), J, rtol=1e-12, atol=1e-15)


def test_several_arguments_by_forward_mode(forward_calls):
    def f(p, s):
        return bell(p) * s
    p, s = np.array([2.0, 3.0, 5.3]), 1.5
    Jp, Js = jacobian(f, p, s)
    assert forward_calls == [p.shape, ()]
    np.testing.assert_allclose(Jp, fd_jacobian(lambda q: f(q, s), p), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(Js, fd_jacobian(lambda t: f(p, t), s), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("f, x", [
    (lambda x: np.sum(x ** 2) * np.ones(2), np.arange(1.0, 5.0)),  # (more inputs than outputs)
    (lambda x: np.outer(x, x), [1.0, 2.0]),  # (a list: not a plain float array)
    (lambda x: np.array([x, 2 * x, 3 * x]), 2),  # (an integer, whose derivative reverse mode judges)
])
def test_reverse_mode_where_forward_mode_is_not_cheaper_or_not_plain(forward_calls, f, x):
    J = jacobian(f, x)
    assert forward_calls == []
    want = fd_jacobian(f, np.asarray(x, dtype=float))
    np.testing.assert_allclose(np.reshape(np.asarray(J, dtype=float), want.shape), want, rtol=1e-6, atol=1e-9)


def test_forward_refusal_falls_back_to_reverse_rows(monkeypatch):
    def refusing(f, x, **kwargs):
        raise contexts.NoRuleError("forward mode refuses (a test's)")
    monkeypatch.setattr(contexts.forward, "jacfwd", refusing)
    x = np.array([0.3, -0.2, 1.1])
    np.testing.assert_allclose(jacobian(rotation, x), fd_jacobian(rotation, x), rtol=1e-6, atol=1e-9)
