"""scipy.integrate.solve_ivp differentiated through scipy's own Python code (the explicit Runge-Kutta
solvers), in reverse and forward mode, with respect to y0, parameters passed through `args=` and
parameters the right-hand side closes over. Every derivative against central finite differences of the
solution at tight solver tolerances, or the closed form of a linear ODE. The step sizes the solver picks
are data-dependent branches: they are constants of the derivative (the derivative of the computed
solution on its own grid), which agrees with the derivative of the exact solution to the tolerance."""

import numpy as np
import pytest

from contexts import derivative, gradient, jacfwd, jacobian
from overdub.errors import OverdubError

from tests import fd

scipy_integrate = pytest.importorskip("scipy.integrate")
solve_ivp = scipy_integrate.solve_ivp

TIGHT = {"rtol": 1e-10, "atol": 1e-12}
METHODS = ["RK45", "RK23", "DOP853"]
MODES = {"reverse": lambda f, x: gradient(f, x)[0], "forward": derivative}
Y0 = np.array([1.0, 0.5])


def lotka_volterra(t, y, a, b):
    return np.array([a * y[0] - b * y[0] * y[1], b * y[0] * y[1] - y[1]])


def through_args(method):
    def f(a):
        sol = solve_ivp(lotka_volterra, (0, 2), Y0, method=method, args=(a, 0.8), **TIGHT)
        return sol.y[0, -1] + 2 * sol.y[1, -1]
    return f


def through_closure(method):
    def f(a):
        sol = solve_ivp(lambda t, y: lotka_volterra(t, y, a, 0.8), (0, 2), Y0, method=method, **TIGHT)
        return sol.y[0, -1] + 2 * sol.y[1, -1]
    return f


def through_y0(method):
    def f(y00):
        sol = solve_ivp(lotka_volterra, (0, 2), np.array([y00, 0.5]), method=method, args=(1.1, 0.8), **TIGHT)
        return sol.y[0, -1] + 2 * sol.y[1, -1]
    return f


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("make", [through_args, through_closure, through_y0], ids=lambda m: m.__name__)
def test_against_finite_differences(make, method, mode):
    f = make(method)
    x = 1.1 if make is not through_y0 else 1.0
    want = fd.gradient(f, x)[0]  # (five-point stencil: accurate to ~1e-9 at these tolerances)
    assert abs(want) > 1.0  # (the derivative through args= was once a silent zero)
    assert MODES[mode](f, x) == pytest.approx(want, rel=1e-7, abs=1e-9)


def decay(k):
    sol = solve_ivp(lambda t, y, k: -k * y, (0, 1), np.array([1.0]), args=(k,), **TIGHT)
    return sol.y[0, -1]


def decay_from(y0):
    sol = solve_ivp(lambda t, y: -0.7 * y, (0, 1), np.array([y0]), **TIGHT)
    return sol.y[0, -1]


@pytest.mark.parametrize("mode", MODES)
def test_linear_ode_against_its_closed_form(mode):
    assert MODES[mode](decay, 0.7) == pytest.approx(-np.exp(-0.7), rel=1e-8)  # d/dk exp(-k)
    assert MODES[mode](decay_from, 2.0) == pytest.approx(np.exp(-0.7), rel=1e-8)


def on_a_fixed_grid(a):
    # tolerances so loose that every step is max_step: the solver's arithmetic alone, differentiated
    sol = solve_ivp(lotka_volterra, (0, 2), Y0, args=(a, 0.8), first_step=0.1, max_step=0.1, rtol=1e3, atol=1e3)
    return np.sum(sol.y[:, -1] ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_derivative_of_the_discrete_solution(mode):
    assert MODES[mode](on_a_fixed_grid, 1.1) == pytest.approx(fd.gradient(on_a_fixed_grid, 1.1)[0], rel=1e-9)


TE = np.linspace(0, 2, 5)


def at_given_times(a):
    sol = solve_ivp(lotka_volterra, (0, 2), Y0, args=(a, 0.8), t_eval=TE, **TIGHT)
    return np.sum(sol.y ** 2)


def dense(a):
    sol = solve_ivp(lotka_volterra, (0, 2), Y0, args=(a, 0.8), dense_output=True, **TIGHT)
    return np.sum(sol.sol(1.3)) + sol.sol(np.array([0.5, 1.7]))[1].sum()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [at_given_times, dense], ids=lambda f: f.__name__)
def test_t_eval_and_dense_output(f, mode):
    assert MODES[mode](f, 1.1) == pytest.approx(fd.gradient(f, 1.1)[0], rel=1e-7, abs=1e-9)


def final_state(y0):
    return solve_ivp(lotka_volterra, (0, 2), y0, args=(1.1, 0.8), **TIGHT).y[:, -1]


@pytest.mark.parametrize("jac", [jacobian, jacfwd], ids=["reverse", "forward"])
def test_jacobian_with_respect_to_the_initial_state(jac):
    np.testing.assert_allclose(jac(final_state, Y0), fd.jacobian(final_state, Y0), rtol=1e-6, atol=1e-8)


def implicit(method):
    def f(a):
        sol = solve_ivp(lambda t, y: -a * y, (0, 1), np.array([1.0]), method=method)
        return sol.y[0, -1]
    return f


def with_event(a):
    def hit(t, y, a):
        return y[0] - 0.5
    return solve_ivp(lambda t, y, a: -a * y, (0, 2), np.array([1.0]), args=(a,), events=hit).y[0, -1]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [implicit("BDF"), implicit("Radau"), implicit("LSODA"), with_event],
                         ids=["BDF", "Radau", "LSODA", "events"])
def test_refused_where_not_covered(f, mode):
    """The implicit solvers (LU factorisations in LAPACK, LSODA in Fortran) are refused by name and line,
    never differentiated as constants."""
    if f is with_event:
        pytest.skip("both modes differentiate event location (test_event_location)")
    with pytest.raises(OverdubError, match=r"(?s)\.py:\d+"):
        MODES[mode](f, 0.7)


def _event_time(a):
    def hit(t, y, a):
        return y[0] - 0.5
    sol = solve_ivp(lambda t, y, a: -a * y, (0, 2), np.array([1.0]), args=(a,), events=hit, rtol=1e-10,
                    atol=1e-12)
    return sol.t_events[0][0]


def _terminal(a):
    def hit(t, y, a):
        return y[0] - 0.5
    hit.terminal = True
    sol = solve_ivp(lambda t, y, a: -a * y, (0, 2), np.array([1.0]), args=(a,), events=hit, rtol=1e-10,
                    atol=1e-12)
    return sol.t[-1] + sol.y[0, -1]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [with_event, _event_time, _terminal], ids=["past", "time", "terminal"])
def test_event_location(f, mode):
    """Events are located by scipy.optimize.brentq, which both modes differentiate by the implicit
    function theorem: the event time ln 2 / a has the derivative -ln 2 / a**2."""
    g = MODES[mode](f, 0.7)
    if f is with_event:  # (scipy's default tolerances, rtol 1e-3: the steps are constants of the derivative,
        # which is the solution's, y(2) = exp(-2a), to those tolerances; the code's own moves with its steps)
        np.testing.assert_allclose(g, -2 * np.exp(-1.4), rtol=1e-3)
        return
    np.testing.assert_allclose(g, fd.gradient(f, 0.7)[0], rtol=1e-6)
    if f is _event_time:
        assert g == pytest.approx(-np.log(2) / 0.7 ** 2, rel=1e-6)
