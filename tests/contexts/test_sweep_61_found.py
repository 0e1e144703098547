"""Silent wrong derivatives left from session 60, each now refused or checked against central differences:

- a tolerance branch at a singular point whose value only steers, written with scalar math:
  `if math.sqrt(x*x + y*y) < 1e-6: return <constant>` at exactly the origin gave the constant branch's
  derivative in both modes (the same test of `np.linalg.norm` or `math.hypot` is judged from the two sides and
  refused). Forward mode took sqrt of a computed zero rate at 0 for no change (`_singular`'s 0, right where
  the argument does not move); reverse mode compared a value of exactly 0 with a bound of 1e-6 unnoted
  (`_within_flip` noted bounds up to 1e-8 only);
- a remainder or a floor quotient of a moving divisor exactly where the dividend is a multiple of it (`9 % b`
  at b = 4.5, `divmod(9.0, b)`): one side's derivative, where the value jumps by b;
- `x.__mod__(y)`, `x.__divmod__(y)`, `float.__mod__(x, y)` called by name at an exact multiple: the operator's
  jump went unseen (the operators refuse it).
"""

import math

import numpy as np
import pytest

from contexts import derivative, gradient, jacfwd
from overdub.errors import OverdubError
from tests import fd

ORIGIN = np.zeros(2)


def _rotation_like(r, x):
    return x[0] * math.sin(r) / r  # (smooth through r = 0, where it is x[0]: slope 1 along x[0])


def sqrt_tolerance(x):
    r = math.sqrt(x[0] * x[0] + x[1] * x[1])
    if r < 1e-6:
        return 0.0 * x[0]
    return _rotation_like(r, x)


def sqrt_tolerance_reversed(x):
    r = math.sqrt(x[0] * x[0] + x[1] * x[1])
    if 1e-6 > r:
        return 0.0 * x[0]
    return _rotation_like(r, x)


def power_tolerance(x):
    r = (x[0] * x[0] + x[1] * x[1]) ** 0.5
    if r < 1e-6:
        return 0.0 * x[0]
    return _rotation_like(r, x)


def acos_tolerance(x):
    angle = math.acos(math.cos(x[0]) * math.cos(x[1]))  # (|x| to second order: acos at 1, argument's rate 0)
    if angle < 1e-6:
        return 0.0 * x[0]
    return x[0] * math.sin(angle) / angle


@pytest.mark.parametrize("f", [sqrt_tolerance, sqrt_tolerance_reversed, power_tolerance, acos_tolerance],
                         ids=lambda f: f.__name__)
def test_a_tolerance_branch_at_a_singular_point_is_refused(f):
    # (central differences 1e-5 away see the smooth branch's slope, 1 along x[0]: the constant branch's 0 is
    # what the program's values do not show)
    assert fd.gradient(f, ORIGIN)[0][0] == pytest.approx(1.0, abs=1e-6)
    with pytest.raises(OverdubError):
        gradient(f, ORIGIN)
    with pytest.raises(OverdubError):
        jacfwd(f, ORIGIN)


@pytest.mark.parametrize("f, want", [
    (lambda x: math.sqrt(x[0] ** 4 + x[1] ** 4), [0.0, 0.0]),  # (r**2 near 0: a derivative of 0)
    (lambda x: math.sqrt(x[0] * x[0] + x[1] * x[1]) + x[0], [1.0, 0.0]),  # (a cone's tip: its sides' mean, 0, as
    (lambda x: np.linalg.norm(x) + x[0], [1.0, 0.0]),                     # np.linalg.norm's)
    (lambda x: math.sqrt(x[1] - x[1]) + 2.0 * x[1], [0.0, 2.0]),  # (an argument that does not move)
], ids=["fourth_powers", "cone_tip", "norm_tip", "still_argument"])
def test_sqrt_at_a_zero_rate_is_judged_from_its_sides(f, want):
    for got in (gradient(f, ORIGIN)[0], jacfwd(f, ORIGIN)):
        np.testing.assert_allclose(got, want, atol=1e-9)


@pytest.mark.parametrize("f", [lambda x: math.acos(1.0 + 0.0 * x[0]) + x[0] * x[1],
                               lambda x: math.sqrt(x[0] - x[0]) + x[0] * x[1]], ids=["acos", "sqrt"])
def test_a_function_held_at_its_singular_point_has_no_nan(f):
    # (its argument does not move: a rate of 0 times an infinite slope is no change; NaN came out of both modes
    # for acos, whose float rule's partial divides by 0 in numpy's arithmetic)
    x = np.array([0.3, 0.5])
    want = fd.gradient(f, x)[0]
    np.testing.assert_allclose(gradient(f, x)[0], want, rtol=1e-7)
    np.testing.assert_allclose(jacfwd(f, x), want, rtol=1e-7)


def test_sqrt_off_its_singular_point_is_unchanged():
    x = np.array([0.3, -0.4])
    want = fd.gradient(sqrt_tolerance, x)[0]
    np.testing.assert_allclose(gradient(sqrt_tolerance, x)[0], want, rtol=1e-7)
    np.testing.assert_allclose(jacfwd(sqrt_tolerance, x), want, rtol=1e-7)


# -- a moving divisor at a jump ------------------------------------------------------------------------

def remainder_by_moving(a):
    return 9.0 % (2.0 * a)


def divmod_by_moving(a):
    return divmod(9.0, 2.0 * a)[1]


def quotient_by_moving(a):
    return (9.0 // (2.0 * a)) * a


def integer_by_moving(a):
    return 9 % (2.0 * a)


def numpy_remainder_by_moving(a):
    return float(np.mod(9.0, 2.0 * a))


def reflected_by_name(a):
    return (2.0 * a).__rmod__(9.0)


MOVING_DIVISOR = [remainder_by_moving, divmod_by_moving, quotient_by_moving, integer_by_moving,
                  numpy_remainder_by_moving, reflected_by_name]


@pytest.mark.parametrize("f", MOVING_DIVISOR, ids=lambda f: f.__name__)
def test_a_moving_divisor_at_a_jump_is_refused(f):
    left, at, right = f(4.5 - 1e-7), f(4.5), f(4.5 + 1e-7)
    assert abs(right - left) > 1.0  # (the case: the value jumps at 4.5)
    with pytest.raises(OverdubError):
        gradient(f, 4.5)
    with pytest.raises(OverdubError):
        derivative(f, 4.5)


@pytest.mark.parametrize("f", MOVING_DIVISOR, ids=lambda f: f.__name__)
def test_a_moving_divisor_off_its_jumps_keeps_its_derivative(f):
    want = fd.derivative(f, 4.3)
    assert gradient(f, 4.3)[0] == pytest.approx(want, rel=1e-6, abs=1e-9)
    assert derivative(f, 4.3) == pytest.approx(want, rel=1e-6, abs=1e-9)


# -- the operator's slots called by name -----------------------------------------------------------------

@pytest.mark.parametrize("f", [lambda a: a.__mod__(2.0), lambda a: a.__divmod__(2.0)[1],
                               lambda a: float.__mod__(a, 2.0), lambda a: a.__floordiv__(2.0) * a,
                               lambda a: np.float64(a).__mod__(2.0) * 1.0],
                         ids=["mod", "divmod", "unbound_mod", "floordiv", "float64_mod"])
def test_a_remainder_by_name_at_a_multiple_is_refused(f):
    assert abs(f(4.0 + 1e-9) - f(4.0 - 1e-9)) > 1.0  # (the case: a jump at 4)
    for mode in (gradient, derivative):
        with pytest.raises(OverdubError):
            mode(f, 4.0)
    want = fd.derivative(f, 4.3)
    assert gradient(f, 4.3)[0] == pytest.approx(want, rel=1e-6)
    assert derivative(f, 4.3) == pytest.approx(want, rel=1e-6)


# -- a reduction of a named tuple -------------------------------------------------------------------------
# `np.prod(np.linalg.slogdet(a))`: the cotangent of the SlogdetResult was rebuilt by its class from one
# generator (a TypeError out of reverse mode: a named tuple takes its fields one by one).

def test_a_reduction_of_a_named_tuple_of_arrays():
    a = np.array([[2.0, 0.3, 0.1], [0.2, 1.5, 0.4], [0.1, 0.2, 1.2]])

    def f(m):
        return np.prod(np.linalg.slogdet(m))
    want = fd.gradient(f, a)[0]
    np.testing.assert_allclose(gradient(f, a)[0], want, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(jacfwd(f, a), want, rtol=1e-7, atol=1e-10)


# -- a derivative of 0 judged from the two sides ----------------------------------------------------------
# HydroErr's Nash-Sutcliffe efficiency and Willmott's index at sim == obs (session 60's sweep): `abs(s - o) ** 2`
# at its kink beside `abs(o - mean(o))` at its own made forward mode judge the point from its two sides, whose
# mean gradient (0 up to 1e-16) was compared with the point's own 0 relative to the mean itself: refused, where
# the functions are smooth with gradient 0 (reverse mode gave it).

def nash_sutcliffe(x):
    s, o = x[:3], x[3:]
    a = np.abs(s - o) ** 2
    b = np.abs(o - np.mean(o)) ** 2
    return 1 - np.sum(a) / np.sum(b)


def willmott_d(x):
    s, o = x[:3], x[3:]
    a = (o - s) ** 2
    b = np.abs(s - np.mean(o))
    c = np.abs(o - np.mean(o))
    return 1 - np.sum(a) / np.sum((b + c) ** 2)


@pytest.mark.parametrize("f", [nash_sutcliffe, willmott_d], ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [[1.0, 2.0, 3.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.3, 1.5, 2.0, 3.0]],
                         ids=["equal", "one_equal"])
def test_a_smooth_function_through_two_kinks_at_their_ties(f, x):
    x = np.array(x)
    want = fd.gradient(f, x)[0]
    np.testing.assert_allclose(gradient(f, x)[0], want, atol=1e-8)
    np.testing.assert_allclose(jacfwd(f, x), want, atol=1e-8)


# -- columns written into an `.astype(float)` copy, beside a joint that does not rotate -------------------------
# modern_robotics' JacobianSpace (session 60's sweep): `Js = np.array(S).copy().astype(float)`, then `Js[:, i] =
# ...` of differentiated columns. Forward mode's twin took the astype's array for one some object may hold and
# gave the function to the duals, which cannot write into a plain array: refused. Reverse mode, which notes a
# norm at a zero vector (a prismatic joint's rotation axis, 0 whatever its angle) for forward mode to tell, was
# refused with it.

_SCREWS = np.array([[0.0, 0, 1, 4, 0, 0], [0, 0, 0, 0, 1, 0], [0, 0, -1, -6, 0, -0.1]]).T


def _rotation(w):
    angle = np.linalg.norm(w)
    if angle < 1e-6:  # (modern_robotics' NearZero)
        return np.eye(3)
    k = w / angle
    K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def space_jacobian_like(theta):
    js = np.array(_SCREWS).copy().astype(float)
    r = np.eye(3)
    for i in range(1, len(theta)):
        r = r @ _rotation(_SCREWS[:3, i - 1] * theta[i - 1])
        js[:3, i] = r @ _SCREWS[:3, i]
        js[3:, i] = r @ _SCREWS[3:, i]
    return float(np.sum(js * np.arange(18.0).reshape(6, 3) / 10))


@pytest.mark.parametrize("theta", [[np.pi / 2, 3.0, np.pi], [0.3, -0.7, 1.1]], ids=["generic", "other"])
def test_columns_written_into_an_astype_copy(theta):
    theta = np.array(theta)
    want = fd.gradient(space_jacobian_like, theta)[0]
    assert np.abs(want).max() > 0.1
    np.testing.assert_allclose(gradient(space_jacobian_like, theta)[0], want, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(jacfwd(space_jacobian_like, theta), want, rtol=1e-7, atol=1e-9)


# -- a Kalman filter's observations as a numpy.ma masked array (pykalman) ---------------------------------------
# pykalman keeps its observations as a masked array (`np.ma.atleast_2d(obs)`) and computes `observation -
# predicted` by numpy.ma's operator, which asked the dual for a plain array: forward mode refused it, and reverse
# mode refused numpy.ma's code (`.__dict__` of a MaskedArray). With no masked entry, `+`, `-` and `*` are the
# data's: both modes answer (reverse mode by forward mode's answer after its own refusal).

_OBSERVED = np.array([[0.3, 1.1], [0.9, 0.7], [1.4, 1.9], [2.2, 1.5]])


class _SmallKalman:  # (pykalman's filter and log likelihood, reduced)
    def __init__(self, transition, noise, observation_noise):
        self.transition = np.array([[1.0, transition], [0.0, 1.0]])
        self.noise = noise * np.eye(2)
        self.observation_noise = observation_noise * np.eye(2)
        self.observation_matrix = np.array([[1.0, 0.0], [0.3, 1.0]])

    def loglikelihood(self, observations):
        z = np.ma.atleast_2d(observations)
        mean, cov, total = np.array([0.0, 0.5]), np.eye(2), 0.0
        for t in range(z.shape[0]):
            if t:
                mean = self.transition @ mean
                cov = self.transition @ cov @ self.transition.T + self.noise
            observation = z[t]
            if not np.any(np.ma.getmask(observation)):
                h = self.observation_matrix
                predicted = h @ mean
                s = h @ cov @ h.T + self.observation_noise
                residual = observation - predicted
                total = total - 0.5 * (np.log(np.linalg.det(2 * np.pi * s)) + residual @ np.linalg.solve(s, residual))
                gain = cov @ h.T @ np.linalg.inv(s)
                mean = mean + gain @ residual
                cov = cov - gain @ h @ cov
        return float(total)


def small_kalman_loglikelihood(x):
    return _SmallKalman(x[0], x[1], x[2]).loglikelihood(_OBSERVED)


def test_masked_observations_of_a_kalman_filter():
    x = np.array([0.9, 0.1, 0.5])
    want = fd.gradient(small_kalman_loglikelihood, x)[0]
    np.testing.assert_allclose(gradient(small_kalman_loglikelihood, x)[0], want, rtol=1e-6)
    np.testing.assert_allclose(jacfwd(small_kalman_loglikelihood, x), want, rtol=1e-6)


# -- an ndarray method whose numpy function takes its arguments in another order (session 61's sweep) -------------
# Forward mode ran `x.compress(c)` on duals as `np.compress(x, c)`: the condition came out as the value and the
# derivative was 0 (found through pint, whose Quantity.compress calls its magnitude's method).

@pytest.mark.parametrize("f", [lambda x: float(np.dot(x.compress([True, False, True, True]), [1.0, 2.0, 3.0])),
                               lambda x: float(np.sum(x.reshape(2, 2).compress([False, True], axis=0) ** 2))],
                         ids=["flat", "axis"])
def test_the_compress_method_in_forward_mode(f):
    x = np.array([0.02, 0.015, 0.01, 0.005])
    want = fd.gradient(f, x)[0]
    np.testing.assert_allclose(jacfwd(f, x), want, rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(gradient(f, x)[0], want, rtol=1e-7, atol=1e-12)


# -- arrays compared equal where forward mode finds them moving apart (session 61's sweep) ---------------------------
# np.gradient(y, x) of differentiated coordinates at exactly uniform spacing: numpy's `(dx == dx[0]).all()` takes
# the uniform formula, which reads dx[0] alone; reverse mode gave that branch's derivative ([228, -228, 0, 0] for
# [20, 28, 112, -160]): arrays compared equal were noted for forward mode, whose refusal let reverse mode's answer
# stand. Refused now in both modes; off the tie both are right.

_W = np.array([1.0, 2.0, 3.0, 4.0])


def weighted_numpy_gradient(x):
    return float(np.sum(np.gradient(_W ** 2, x) * np.array([1.0, 2.0, 3.0, 4.0])))


def test_numpy_gradient_at_uniform_coordinates_is_refused():
    x = np.array([2.0, 1.5, 1.0, 0.5])
    assert np.abs(fd.gradient(weighted_numpy_gradient, x)[0] - [20.0, 28.0, 112.0, -160.0]).max() < 1e-5
    with pytest.raises(OverdubError):
        gradient(weighted_numpy_gradient, x)
    with pytest.raises(OverdubError):
        jacfwd(weighted_numpy_gradient, x)
    y = np.array([2.0, 1.5, 1.1, 0.5])
    want = fd.gradient(weighted_numpy_gradient, y)[0]
    np.testing.assert_allclose(gradient(weighted_numpy_gradient, y)[0], want, rtol=1e-7)
    np.testing.assert_allclose(jacfwd(weighted_numpy_gradient, y), want, rtol=1e-7)


# -- numpy's Python functions given a pint Quantity (session 61's sweep, through metpy) ----------------------------
# Reverse mode ran numpy's Python implementation of np.trapezoid / np.cross / np.average on the Quantities,
# skipping numpy's hand-over to pint's `__array_function__`: the units were stripped, and a dimensionless result
# in Pa/hPa came out 100 times too large (pint's DimensionalityError elsewhere, metpy's precipitable_water).

_P = np.array([1000.0, 900.0, 800.0, 700.0])
_QUANTITY_CASES = {
    "trapezoid": lambda q, x: float(np.trapezoid(q(x, "1/hPa"), q(_P * 100.0, "Pa"))),
    "cross": lambda q, x: float(np.sum(np.cross(q(x[:3], "Pa"), q(np.array([1.0, 2.0, 3.0]), "1/hPa")))),
    "average": lambda q, x: float(np.average(q(x, "Pa"), weights=np.array([1.0, 2, 3, 4])) / q(1.0, "hPa")),
}


@pytest.mark.parametrize("case", list(_QUANTITY_CASES))
def test_numpy_functions_of_quantities_keep_their_units(case):
    pint = pytest.importorskip("pint")
    quantity = pint.UnitRegistry().Quantity

    def f(x):
        return _QUANTITY_CASES[case](quantity, x)
    x = np.array([0.02, 0.015, 0.01, 0.005])
    want = fd.gradient(f, x)[0]
    np.testing.assert_allclose(gradient(f, x)[0], want, rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(jacfwd(f, x), want, rtol=1e-7, atol=1e-12)


# -- a library that rejects forward mode's dual number by its type (session 61's sweep: autograd in lifelines) -----
# lifelines' hazard is `autograd.elementwise_grad(cumulative_hazard, argnum=1)`; autograd's `new_box` met forward
# mode's dual and raised "Can't differentiate w.r.t. type <class '...Dual'>": forward mode let the library's
# TypeError out as if the program had failed. A refusal of forward mode's own now (after which reverse mode is
# asked; here it refuses too, the function keyed by a differentiated value inside autograd).

def _cumulative_hazard(params, t):  # (lifelines' WeibullFitter)
    scale, shape = params
    return (t / scale) ** shape


def weibull_hazard_total(x):
    from autograd import elementwise_grad
    hazard = elementwise_grad(_cumulative_hazard, argnum=1)
    return float(np.sum(hazard(x[:2], np.array([0.5, 1.5, 4.0]) * x[2]) * np.array([1.0, 2.0, 3.0])))


def test_a_library_rejecting_the_dual_is_a_refusal():
    pytest.importorskip("autograd")
    x = np.array([2.0, 1.5, 1.0])
    with pytest.raises(OverdubError, match="rejected"):
        jacfwd(weibull_hazard_total, x)
