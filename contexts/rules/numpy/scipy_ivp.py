"""`scipy.integrate.solve_ivp`'s Runge-Kutta methods (RK23, RK45, DOP853): the step sizes the solver picks
are constants of the derivative.

solve_ivp is Python, differentiated as code; what is registered here is its step-size control. Its error
estimate (`RungeKutta._estimate_error_norm`, DOP853's own) and its first step (`select_initial_step`)
are non-differentiable: the steps are chosen on the values, and the derivative is that of the Runge-Kutta
scheme on those steps — the discretised solution's sensitivity, which approximates the ODE's to the
call's tolerances (discretise-then-differentiate with the adaptivity held fixed, as peers' direct
differentiation through a solver does).

Differentiated through, the control made the derivative that of where each step happened to end: with a
right-hand side switching in t (`r if t <= t_off else 0`, an `np.interp` of a schedule), a step
boundary moving across the switch carried a jump, and the gradient was off by 1-4% (an infusion model:
0.8548 for 0.8555), and by much more for the weights of an interpolated schedule; the times of the steps
had derivatives of their own (`sol.t[6]`: -9.8e-5 for 0). With a smooth right-hand side the two agree to the
tolerances. The branch on the error (`if error_norm < 1`), met on a differentiated value, was refused.

BDF (its Newton iteration, `scipy_optimize.ITERATIONS`), Radau (LAPACK's complex LU) and LSODA (Fortran) are refused
by name elsewhere; `events=` are located by
brentq, whose rule differentiates the event's time.
"""

from __future__ import annotations

from scipy.integrate._ivp import common, rk

from ..registry import registry
from ._util import is_dual

__all__: list[str] = []


def _on_values(fn):
    """fn's result as a plain value: the right-hand side it calls (`select_initial_step` evaluates it once)
    closes over differentiated values, whose duals would carry the step's derivative back in."""
    def chosen(*args, **kwargs):
        y = fn(*args, **kwargs)
        while is_dual(y):
            y = y.primal
        return y
    chosen.__name__ = fn.__name__
    return chosen


for _fn in (common.select_initial_step,
            *{cls._estimate_error_norm for cls in (rk.RungeKutta, rk.RK23, rk.RK45, rk.DOP853)}):
    registry.nondifferentiable(_fn)
    _chosen = _on_values(_fn)
    registry.set(_fn, impl=_chosen, frule=lambda tangents, *args, _chosen=_chosen, **kwargs: (_chosen(*args, **kwargs), None))
