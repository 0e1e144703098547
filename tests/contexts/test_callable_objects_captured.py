"""An object of fields that is also callable (an interpolant), captured by a closure handed to a rule (brentq's
event function) and kept in a list as well, read from there after.

Reverse mode counted the object's direct part twice: the rule's cotangent for the closure's cell was left
with the closure (a callable object was taken for a function), so it reached the object both through the
cell and through the list's box. solve_ivp's dense output evaluated at an event's time (`sol.sol(sol.t[-1])`
after a terminal event, `sol.sol(sol.t_events[0][0])`) gave -20.2 for -10.8, silently (session 71's sweep T,
py-ballisticcalc's last trajectory row 2x). Now such an object's part goes into its box at the call
(`runtime._boxed_cells`), as a list's or a plain object's did.

Also: forward mode's fsolve of a residual returning a number for one unknown (`eps - g(x[0])`) gave its root a
tangent of no axis, and `fsolve(...)[0]` raised IndexError (eeslib's `hx`)."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import brentq, fsolve

import contexts
from contexts import gradient

from tests import fd

P = np.array([0.3, 1.0])


class Quadratic:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __call__(self, t):
        return self.a * t * t + self.b * t


def _crossing(q):
    return brentq(lambda t: q(t) - 10.0, 0.0, 100.0, xtol=1e-14)


def evaluated_from_a_list(p):
    q = Quadratic(p[0], p[1])
    kept = [q]
    return kept[-1](_crossing(q))  # 10 for every p


def field_from_a_list(p):
    q = Quadratic(p[0], p[1])
    kept = [q]
    return kept[0].a + _crossing(q)


def from_a_dict_elsewhere(p):
    q = Quadratic(p[0], p[1])
    kept = {"q": q}
    return kept["q"](3.0) + _crossing(q)


@pytest.mark.one_mode
@pytest.mark.parametrize("f", [evaluated_from_a_list, field_from_a_list, from_a_dict_elsewhere],
                         ids=lambda f: f.__name__)
def test_each_mode_against_central_differences(f):
    expected = fd.gradient(f, P)[0]
    np.testing.assert_allclose(gradient(f, P)[0], expected, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(contexts.jacfwd(f, P), expected, rtol=1e-7, atol=1e-9)


def _flight(p, terminal=True):
    def rhs(t, s):
        return [s[1], -p[0] * s[1] - 9.8]

    def hit(t, s):  # the height reaching 10
        return s[0] - 10.0
    hit.terminal = terminal
    return solve_ivp(rhs, (0, 50 if terminal else 2), [0.0, 30.0 * p[1]], dense_output=True, rtol=1e-8, atol=1e-8, events=[hit])


def at_the_terminal_event(p):
    sol = _flight(p)
    return sol.sol(sol.t[-1])


def at_an_event_on_the_way(p):
    sol = _flight(p, terminal=False)
    return sol.sol(sol.t_events[0][0])


def along_to_the_event(p):
    sol = _flight(p)
    return sol.sol(np.linspace(0.0, sol.t[-1], 4))[0]


@pytest.mark.one_mode
@pytest.mark.parametrize("f", [at_the_terminal_event, at_an_event_on_the_way, along_to_the_event],
                         ids=lambda f: f.__name__)
def test_dense_output_at_an_event(f):
    expected = fd.jacobian(f, P)
    assert np.abs(expected).max() > 0.1
    np.testing.assert_allclose(contexts.jacobian(f, P, mode="reverse"), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(contexts.jacfwd(f, P), expected, rtol=1e-5, atol=1e-6)


def test_the_event_state_is_constant_in_height():
    """The height at the event is 10 for every p: its derivatives are 0 (closed form)."""
    J = np.asarray(contexts.jacobian(at_the_terminal_event, P, mode="reverse"))
    np.testing.assert_allclose(J[0], 0.0, atol=1e-8)


def _residual(x, eps, cr):
    return eps - (1 - np.exp(-cr * x[0])) / cr  # a number, for one unknown


def effectiveness_root(eps):
    return fsolve(_residual, [1.0], args=(eps, 0.7))[0]


@pytest.mark.one_mode
def test_fsolve_of_a_number_residual():
    """x = -log(1 - cr eps) / cr, so dx/deps = 1 / (1 - cr eps)."""
    want = 1.0 / (1.0 - 0.7 * 0.6)
    assert contexts.derivative(effectiveness_root, 0.6) == pytest.approx(want, rel=1e-8)
    assert gradient(effectiveness_root, 0.6)[0] == pytest.approx(want, rel=1e-8)
