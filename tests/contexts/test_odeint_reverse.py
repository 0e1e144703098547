"""scipy.integrate.odeint in reverse mode (the continuous adjoint, `scipy_odeint.odeint_adjoint`): `gradient`
and, for comparison, `jacfwd` (the sensitivity equations) against central finite differences, at tolerances
tight enough for the differences to be accurate; what is refused."""

import functools

import numpy as np
import pytest

from contexts import gradient, hessian
from contexts.forward import jacfwd
from contexts.rules.registry import NoDerivative
from tests.fd import gradient as fd_gradient

integrate = pytest.importorskip("scipy.integrate")
odeint = integrate.odeint

TIGHT = dict(rtol=1e-11, atol=1e-12)
T = np.linspace(0.0, 2.0, 6)


def decay_args(p):  # rate in args, a number as y0
    return odeint(lambda y, t, a: -a * y, p[1], [0.0, 0.5, 1.0], args=(p[0],), **TIGHT)[-1, 0]


def logistic_closure(p):  # growth rate and capacity in the closure
    r, k = p[0], p[1]

    def f(y, t):
        return r * y * (1.0 - y / k)
    return np.sum(odeint(f, 0.1, T, **TIGHT) ** 2)


def lotka_volterra(p):  # 2 states, 4 parameters in args, y0 from p too
    def f(z, t, a, b, c, d):
        x, y = z
        return [a * x - b * x * y, c * x * y - d * y]
    z = odeint(f, [p[4], 1.0], np.linspace(0.0, 3.0, 7), args=(p[0], p[1], p[2], p[3]), **TIGHT)
    return np.sum(z[:, 0] * z[:, 1]) + z[-1, 0]


def damped_oscillator(p):  # stiffness, damping and the initial value
    k, c, y0 = p[0], p[1], p[2]
    z = odeint(lambda y, t: np.array([y[1], -k * y[0] - c * y[1]]), np.array([y0, 0.0]), T, **TIGHT)
    return z[-1, 0] + 0.5 * z[3, 1]


def robertson(p):  # stiff: the rate constants scaled by p, on a short span
    k1, k2, k3 = 0.04 * p[0], 3e7 * p[1], 1e4 * p[2]

    def f(y, t):
        return [-k1 * y[0] + k3 * y[1] * y[2], k1 * y[0] - k3 * y[1] * y[2] - k2 * y[1] ** 2, k2 * y[1] ** 2]
    z = odeint(f, [1.0, 0.0, 0.0], [0.0, 0.1, 1.0, 10.0], rtol=1e-12, atol=1e-16)
    return z[-1, 0] + 1e4 * z[-1, 1] + z[1, 2]


def van_der_pol(p):  # stiff: mu = 100, a short span
    mu = 100.0 * p[0]
    z = odeint(lambda y, t: [y[1], mu * (1.0 - y[0] ** 2) * y[1] - y[0]], [p[1], 0.0], [0.0, 0.5, 1.0],
               rtol=1e-10, atol=1e-12)
    return z[-1, 0] + 0.01 * z[-1, 1]


DATA_T = np.linspace(0.0, 4.0, 21)
DATA = 2.0 / (1.0 + np.exp(-1.3 * DATA_T)) + 0.01 * np.sin(7 * DATA_T)


def fit_loss(p):  # a loss over every output time (parameter fitting)
    y = odeint(lambda y, t, r, k: r * y * (1.0 - y / k), 1.0, DATA_T, args=(p[0], p[1]), **TIGHT)[:, 0]
    return np.sum((y - DATA) ** 2)


def y0_list(p):
    z = odeint(lambda y, t: [-0.5 * y[0] + y[1], -y[1] * y[0]], [p[0], p[1]], T, **TIGHT)
    return np.sum(z[-1] ** 2)


def tfirst(p):
    z = odeint(lambda t, y, a: -a * y * (1.0 + t), [p[1], 2.0 * p[1]], [0.0, 1.0, 1.5], args=(p[0],),
               tfirst=True, **TIGHT)
    return z[-1, 0] + z[1, 1]


class Model:
    def __init__(self, p):
        self.rates = p[:2]
        self.drive = p[2]

    def rhs(self, y, t):
        return -self.rates * y + self.drive * np.sin(t)


def bound_method(p):
    return np.sum(odeint(Model(p).rhs, [1.0, 2.0], T, **TIGHT)[-1])


W = np.array([[-1.0, 0.5], [0.2, -0.8]])  # a global constant array the right side reads


def global_array(p):
    z = odeint(lambda y, t: W @ y + p[:2] * np.cos(t), [p[2], 0.0], T, **TIGHT)
    return z[-1, 0] - z[2, 1]


def _decay_partial(a, y, t, b):
    return -a * y + b


def partial_func(p):  # the parameter held by a functools.partial
    return odeint(functools.partial(_decay_partial, p[0]), [1.0], T, args=(p[1],), **TIGHT)[-1, 0]


def time_points(p):  # differentiated t (dY_k/dt_k = f(Y_k, t_k)), a time-dependent right side
    ts = np.array([p[0], 1.0, p[1]])
    z = odeint(lambda y, t: -y * (1.0 + t), 2.0, ts, **TIGHT)
    return z[-1, 0] + z[1, 0]


def decreasing_times(p):
    return odeint(lambda y, t: -p[0] * y * (1.0 + 0.1 * y), 1.0, [2.0, 1.0, 0.0], **TIGHT)[-1, 0]


def with_dfun(p):  # Dfun steers the primal only
    a = p[0]
    return odeint(lambda y, t: [-a * y[0] ** 3], [1.0], T, Dfun=lambda y, t: [[-3 * a * y[0] ** 2]],
                  **TIGHT)[-1, 0]


def dissipative(p):  # y integrated backward would grow as exp(50·5): the adjoint reads the forward solution
    z = odeint(lambda y, t: -p[0] * y + np.sin(p[1] * t), [1.0], [0.0, 2.5, 5.0], **TIGHT)
    return z[-1, 0] + z[1, 0]


CASES = {
    "dissipative": (dissipative, [50.0, 3.0]),
    "decay_args": (decay_args, [1.3, 0.8]),
    "logistic_closure": (logistic_closure, [1.5, 2.0]),
    "lotka_volterra": (lotka_volterra, [1.1, 0.4, 0.1, 0.4, 10.0 / 9.0]),
    "damped_oscillator": (damped_oscillator, [2.0, 0.3, 0.7]),
    "robertson": (robertson, [1.0, 1.0, 1.0]),
    "van_der_pol": (van_der_pol, [1.0, 2.0]),
    "fit_loss": (fit_loss, [1.1, 2.2]),
    "y0_list": (y0_list, [1.0, 0.5]),
    "tfirst": (tfirst, [0.8, 1.2]),
    "bound_method": (bound_method, [0.5, 1.5, 0.3]),
    "global_array": (global_array, [0.4, -0.3, 1.0]),
    "partial_func": (partial_func, [0.7, 0.2]),
    "time_points": (time_points, [0.2, 1.7]),
    "decreasing_times": (decreasing_times, [0.6]),
    "with_dfun": (with_dfun, [0.9]),
}


def _rel(got, want):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    return float(np.max(np.abs(got - want)) / np.max(np.abs(want)))


@pytest.mark.parametrize("name", list(CASES))
def test_gradient_against_fd(name):
    f, p = CASES[name]
    p = np.array(p)
    want = fd_gradient(f, p)[0]
    assert _rel(gradient(f, p)[0], want) < 1e-6


@pytest.mark.parametrize("name", [n for n in CASES if n != "time_points"])
def test_jacfwd_against_fd(name):
    f, p = CASES[name]
    p = np.array(p)
    assert _rel(jacfwd(f, p), fd_gradient(f, p)[0]) < 1e-6


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_jacfwd_refuses_time_points():  # (forward mode refuses perturbed times; reverse mode has their rule)
    with pytest.raises(NoDerivative, match="time points"):
        jacfwd(time_points, np.array([0.2, 1.7]))


def test_scalar_arguments_and_default_tolerances():
    def f(a, y0):
        return odeint(lambda y, t: -a * y, y0, [0.0, 1.0])[-1, 0]
    ga, gy = gradient(f, 1.3, 2.0)
    assert ga == pytest.approx(-2.0 * np.exp(-1.3), rel=1e-6)
    assert gy == pytest.approx(np.exp(-1.3), rel=1e-6)


def test_list_y0_cotangent_is_a_list_and_args_by_keyword():
    def f(y0, a):
        return odeint(lambda y, t, a: [-a * y[0], -y[1]], y0, [0.0, 1.0], args=(a,), **TIGHT)[-1].sum()
    gy, ga = gradient(f, [1.0, 2.0], 0.5)
    np.testing.assert_allclose(np.asarray(gy, dtype=float), [np.exp(-0.5), np.exp(-1.0)], rtol=1e-8)
    assert ga == pytest.approx(-np.exp(-0.5), rel=1e-8)


def test_full_output_solution_differentiated():
    def f(a):
        z, info = odeint(lambda y, t: -a * y, 1.0, [0.0, 1.0], full_output=True, **TIGHT)
        return z[-1, 0]
    assert gradient(f, 1.3)[0] == pytest.approx(-np.exp(-1.3), rel=1e-8)


def test_full_output_info_cotangent_refused():
    def f(a):
        z, info = odeint(lambda y, t: -a * y, 1.0, [0.0, 1.0], full_output=True, **TIGHT)
        return z[-1, 0] + info["hu"][-1]
    with pytest.raises(NoDerivative, match="info"):
        gradient(f, 1.3)


def test_hessian_refused():
    with pytest.raises(NoDerivative):
        hessian(lambda a: odeint(lambda y, t: -a * y * y, 1.0, [0.0, 1.0], **TIGHT)[-1, 0], 1.3)


def test_stiff_long_span_default_tolerances_against_jacfwd():
    # Robertson to t = 1e4 at odeint's default tolerances (too loose for central differences): the adjoint
    # against the sensitivity equations at tight tolerances; y2 ~ 1e-6 sits far below the default atol
    def f(s, **tol):
        k1, k2, k3 = 0.04 * s[0], 3e7 * s[1], 1e4 * s[2]
        return odeint(lambda y, t: [-k1 * y[0] + k3 * y[1] * y[2], k1 * y[0] - k3 * y[1] * y[2] - k2 * y[1] ** 2,
                                    k2 * y[1] ** 2], [1.0, 0.0, 0.0], [0.0, 1.0, 100.0, 1e4], **tol)[-1, 0]
    s = np.ones(3)
    want = jacfwd(lambda s: f(s, rtol=1e-10, atol=1e-14, mxstep=50000), s)
    assert _rel(gradient(f, s)[0], want) < 1e-5
    with pytest.raises(NoDerivative, match="failed"):  # (forward mode returned what a failed solve reached)
        jacfwd(lambda s: f(s, rtol=1e-11, atol=1e-16), s)


def _switching(y0, a=1.0):  # f jumps where y crosses a: the sensitivities jump there (the saltation)
    return odeint(lambda y, t: 1.0 if y[0] < a else 0.5, y0, [0.0, 3.0])[-1, 0]


def test_moving_jump_refused_in_reverse_mode():
    with pytest.raises(NoDerivative, match="branch"):
        gradient(_switching, 0.2)  # (central differences: 0.5; the adjoint of f's derivative: 1.0)
    with pytest.raises(NoDerivative, match="branch"):
        gradient(lambda a: _switching(0.2, a), 1.0)


def test_moving_jump_refused_in_forward_mode():
    with pytest.raises(NoDerivative):
        jacfwd(lambda y0: _switching(y0[0]), np.array([0.2]))


def test_branch_that_never_switches():
    def f(a):  # y decays towards a from above, never crossing it: |y - a| is smooth along the solution
        return odeint(lambda y, t: -np.abs(y - a), 1.0, [0.0, 2.0], **TIGHT)[-1, 0]
    assert gradient(f, 0.5)[0] == pytest.approx(fd_gradient(f, 0.5)[0], rel=1e-6)
