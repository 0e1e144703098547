"""scipy.integrate.quad differentiated by the Leibniz rule (contexts/rules/numpy/scipy_integrate.py), in
both modes, against central finite differences and closed forms."""

import math

import numpy as np
import pytest

pytest.importorskip("scipy")
from scipy import integrate  # noqa: E402
from scipy.integrate import quad  # noqa: E402

from contexts import derivative, gradient, hessian, jacfwd, jvp, pullback  # noqa: E402
from contexts.rules.registry import NoDerivative  # noqa: E402
from tests import fd  # noqa: E402


def by_reverse(f, x):
    return gradient(f, x)[0]


def by_forward(f, x):
    return derivative(f, x) if np.ndim(x) == 0 else jacfwd(f, x)


MODES = [pytest.param(by_reverse, id="reverse"), pytest.param(by_forward, id="forward")]


def closure(a):
    return quad(lambda t: np.exp(-a * t * t), 0, 1)[0]


def through_args(a):
    return quad(lambda t, s: math.exp(-s * t * t), 0, 1, args=(a,))[0]


def through_positional_args(a):
    return quad(lambda t, s, c: c * math.exp(-s * t * t), 0, 1, (a, 2.0))[0]


def moving_limits(a):
    return quad(lambda t: math.sin(a * t), a, a * a + 1.0)[0]


def infinite(a):
    return quad(lambda t: math.exp(-a * t * t), -np.inf, np.inf)[0]


def half_infinite(a):
    return quad(lambda t: math.exp(-a * t), 0.0, np.inf)[0]


def reversed_limits(a):
    return quad(lambda t: t * math.cos(a * t), 2.0, 0.5)[0]


def nested(a):
    """quad inside a larger function, its value used twice, the closure over a derived value."""
    s = a * a
    v = quad(lambda t: np.log1p(s * t) * t, 0.0, 2.0, epsabs=1e-12, epsrel=1e-12)[0]
    return v * np.sin(a) + v ** 2


def with_points(a):
    return quad(lambda t: abs(t - 0.3) * a ** 2, 0.0, 1.0, points=[0.3])[0]


def full_output(a):
    value, err, info = quad(lambda t: np.cos(a * t), 0, 1, full_output=1)
    return value * info["neval"] / info["neval"]


def normaliser(mu, sigma):
    """A Gaussian-like density's log normaliser, by quad."""
    z = quad(lambda t: np.exp(-0.5 * ((t - mu) / sigma) ** 2 - 0.1 * t ** 4), -np.inf, np.inf)[0]
    return np.log(z)


def complex_valued(a):
    z = quad(lambda t: np.exp(1j * a * t) * t, 0.0, a, complex_func=True)[0]
    return (z * z.conjugate()).real + z.imag


def through_a_list(a):
    p = [a, 2.0 * a]
    return quad(lambda t: p[0] * t + p[1] * t * t, 0, 1)[0]


class Decay:
    def __init__(self, w):
        self.w = w

    def at(self, t):
        return math.exp(-self.w * t)


def bound_method(a):
    return quad(Decay(a).at, 0, 1)[0]


CASES = [closure, through_args, through_positional_args, moving_limits, infinite, half_infinite, reversed_limits,
         nested, with_points, full_output, complex_valued, through_a_list, bound_method]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_quad_against_finite_differences(mode, f):
    x = 0.7
    assert mode(f, x) == pytest.approx(fd.derivative(f, x, h=1e-5), rel=1e-5, abs=1e-7)


@pytest.mark.parametrize("mode", MODES)
def test_closed_form(mode):
    # d/da ∫_0^1 exp(-a t²) dt = -∫_0^1 t² exp(-a t²) dt; ∫_R exp(-a t²) = sqrt(pi/a)
    expected = -quad(lambda t: t * t * math.exp(-1.3 * t * t), 0, 1, epsabs=1e-13)[0]
    assert mode(closure, 1.3) == pytest.approx(expected, rel=1e-8)
    assert mode(infinite, 1.3) == pytest.approx(-0.5 * math.sqrt(math.pi) * 1.3 ** -1.5, rel=1e-7)
    # limits moving: d/da ∫_a^{a²+1} sin(a t) dt = ∫ t cos(a t) dt + 2a sin(a(a²+1)) - sin(a²)
    a = 0.7
    inner = quad(lambda t: t * math.cos(a * t), a, a * a + 1)[0]
    assert mode(moving_limits, a) == pytest.approx(inner + 2 * a * math.sin(a * (a * a + 1)) - math.sin(a * a),
                                                   rel=1e-8)


def test_gradient_of_two_parameters_and_array_closure():
    g = gradient(normaliser, 0.4, 1.3)
    assert g == pytest.approx(fd.gradient(normaliser, 0.4, 1.3), rel=1e-5)

    def poly(c):
        return quad(lambda t: np.polyval(c, t) ** 2, -1.0, 1.0)[0]
    c = np.array([0.5, -1.0, 2.0])
    assert gradient(poly, c)[0] == pytest.approx(fd.gradient(poly, c)[0], rel=1e-6)
    assert jacfwd(poly, c) == pytest.approx(fd.gradient(poly, c)[0], rel=1e-6)


def test_jvp_and_pullback():
    def two(a, b):
        return quad(lambda t, s: np.exp(-a * t) * s, 0.0, b, args=(b,))[0]
    y, dy = jvp(two, (0.5, 1.5), (1.0, -2.0))
    assert y == pytest.approx(two(0.5, 1.5))
    assert dy == pytest.approx(fd.directional(two, (0.5, 1.5), (1.0, -2.0)), rel=1e-6)
    y, back = pullback(two, 0.5, 1.5)
    assert back(2.0) == pytest.approx(tuple(2.0 * g for g in fd.gradient(two, 0.5, 1.5)), rel=1e-6)


@pytest.mark.parametrize("inner", ["reverse", "forward"])
def test_hessian(inner):
    def f(x):
        return quad(lambda t: np.exp(-x[0] * t * t) * x[1], 0.0, x[1])[0]
    x = np.array([0.8, 1.2])
    assert hessian(f, x, inner=inner) == pytest.approx(fd.hessian(f, x), rel=1e-4, abs=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_multiple_integrals(mode):
    def double(a):
        return integrate.dblquad(lambda y, x: np.exp(-a * x * y), 0.0, 1.0, 0.0, lambda x: x)[0]

    def by_nquad(a):
        return integrate.nquad(lambda x, y: np.cos(a * x + y), [[0.0, 1.0], [0.0, a]])[0]
    for f in (double, by_nquad):
        assert mode(f, 0.6) == pytest.approx(fd.derivative(f, 0.6, h=1e-5), rel=1e-5)


@pytest.mark.parametrize("mode", MODES)
def test_pure_python_quadratures(mode):
    def fixed(a):
        return integrate.fixed_quad(lambda t: np.exp(-a * t * t), 0.0, 1.0, n=8)[0]

    def simpson(a):
        t = np.linspace(0.0, 1.0, 11)
        return integrate.simpson(np.exp(-a * t * t), x=t)

    def trapezoid(a):
        t = np.linspace(0.0, 1.0, 11) * a
        return integrate.trapezoid(np.exp(-a * t * t), x=t)
    for f in (fixed, simpson, trapezoid):
        assert mode(f, 0.6) == pytest.approx(fd.derivative(f, 0.6), rel=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_weights(mode):
    def weighted(a):
        return quad(lambda t: np.exp(-a * t), 0.0, 2.0, weight="cos", wvar=3.0)[0]

    def fourier(a):
        return quad(lambda t: np.exp(-a * t), 0.0, np.inf, weight="sin", wvar=2.0)[0]
    for f in (weighted, fourier):
        assert mode(f, 0.6) == pytest.approx(fd.derivative(f, 0.6, h=1e-5), rel=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_refusals(mode):
    def error_estimate(a):
        return quad(lambda t: np.exp(-a * t * t), 0, 1)[1]

    def moving_weighted(a):
        return quad(lambda t: t, 0.0, a, weight="cos", wvar=3.0)[0]

    def weight_parameter(a):
        return quad(lambda t: t, 0.0, 1.0, weight="cos", wvar=a)[0]

    def diagnostics(a):
        value, err, info = quad(lambda t: np.exp(-a * t), 0, 1, full_output=1)
        return value + info["rlist"][0]
    for f in (error_estimate, moving_weighted, weight_parameter, diagnostics):
        with pytest.raises(NoDerivative):
            mode(f, 0.6)


@pytest.mark.parametrize("mode", MODES)
def test_error_estimate_read_but_not_differentiated(mode):
    def f(a):
        value, err = quad(lambda t: np.exp(-a * t * t), 0, 1)
        return value * 2.0 if err < 1e-3 else 0.0
    assert mode(f, 0.6) == pytest.approx(fd.derivative(f, 0.6), rel=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_constant_integrand_and_constant_weighted_call(mode):
    def f(a):
        c = quad(lambda t: t * t, 0.0, 1.0, weight="cos", wvar=2.0)[0]
        return a * c + quad(np.sin, 0.0, 1.0)[0] * a
    c = quad(lambda t: t * t, 0.0, 1.0, weight="cos", wvar=2.0)[0] + quad(np.sin, 0.0, 1.0)[0]
    assert mode(f, 0.6) == pytest.approx(c, rel=1e-10)


@pytest.mark.parametrize("mode", MODES)
def test_singular_end(mode):
    def constant_end(a):  # the integrand is infinite at the fixed end 0: not differentiated there
        return quad(lambda t: a / math.sqrt(t), 0.0, 1.0)[0]

    def moving_end(a):
        return quad(lambda t: 1.0 / math.sqrt(t), 0.0, a)[0]

    def moving_singular_end(a):
        return quad(lambda t: 1.0 / math.sqrt(t), a - 0.7, 1.0)[0]
    assert mode(constant_end, 0.7) == pytest.approx(2.0, rel=1e-8)
    assert mode(moving_end, 0.7) == pytest.approx(1.0 / math.sqrt(0.7), rel=1e-8)
    with pytest.raises(NoDerivative):
        mode(moving_singular_end, 0.7)


@pytest.mark.parametrize("mode", MODES)
def test_quad_vec(mode):
    def vector(a):
        v = integrate.quad_vec(lambda t: np.array([np.exp(-a * t), t * a, np.sin(a * t)]), 0.0, a)[0]
        return v @ np.array([1.0, 2.0, -1.0])

    def with_args(a):
        return integrate.quad_vec(lambda t, s: np.exp(-s * t * t), -np.inf, np.inf, args=(a,))[0]
    for f in (vector, with_args):
        assert mode(f, 0.7) == pytest.approx(fd.derivative(f, 0.7, h=1e-5), rel=1e-6)


# -- jumps that move with the differentiated values (refused), and those that do not (right) ---------------

def step_moving(a):  # d/da = exp(a), all of it the jump's term
    return quad(lambda t: (1.0 if t < a else 0.0) * np.exp(t), 0, 1)[0]


def step_moving_where(a):
    return quad(lambda t: np.where(t < a, np.exp(t), 0.0), 0, 1)[0]


def step_moving_both_active(a):  # (an ordering of two differentiated values: `t * a < a * a`)
    return quad(lambda t: np.exp(t) if t * a < a * a else 0.0, 0, 1)[0]


def support_edge(loc):  # uniform's density jumps at loc and loc + 1, both inside [0, 3]
    from scipy import stats
    return stats.uniform(loc=loc, scale=1.0).expect(lambda x: x, lb=0.0, ub=3.0)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [step_moving, step_moving_where, step_moving_both_active, support_edge])
def test_a_jump_that_moves_is_refused(mode, f):
    # (the integral of the integrand's derivative misses the jump's term: these were 0 in both modes)
    assert abs(fd.derivative(f, 0.3, h=1e-3)) > 0.5
    with pytest.raises(NoDerivative, match="jump"):
        mode(f, 0.3)


def fixed_jump_closure(a, c=0.5):  # the boundary c is a constant of the closure
    return quad(lambda t: a * t if t < c else 0.0, 0, 1)[0]


def fixed_jump_off_the_probe(a):  # (the integrand at quad's first sample, 0.5, does not depend on a)
    return quad(lambda t: a * t if t < 0.3 else 0.0, 0, 1)[0]


def moving_kink(a):  # continuous in t: the first derivative needs no jump term
    return quad(lambda t: t - a if t > a else 0.0, 0, 1)[0]


def moving_kink_abs(a):
    return quad(lambda t: (t - a) if t > a else (a - t), 0, 1)[0]


def support_inside(loc):  # the limits inside the support: no jump between them
    from scipy import stats
    return stats.norm(loc=loc, scale=1.0).expect(lambda x: x * x, lb=-1.0, ub=3.0)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, exact", [
    (fixed_jump_off_the_probe, 0.045), (moving_kink, -0.7), (moving_kink_abs, 2 * 0.3 - 1), (support_inside, None),
])
def test_a_jump_that_stays_put_and_a_moving_kink(mode, f, exact):
    # (fixed_jump_off_the_probe was 0 in reverse mode: its first sample found no derivative to integrate)
    got = mode(f, 0.3)  # (quad resolves a kink to ~1e-4 of the derivative by differences: the closed form decides)
    np.testing.assert_allclose(got, fd.derivative(f, 0.3, h=1e-4), rtol=1e-3, atol=1e-8)
    if exact is not None:
        np.testing.assert_allclose(got, exact, rtol=1e-7)


def test_a_constant_boundary_in_the_closure():
    # forward mode tells c (a plain number) from a; reverse mode cannot (every cell of the integrand may
    # be differentiated): it is right where quad's nodes keep off c, refused where the watch sees c move
    np.testing.assert_allclose(by_forward(fixed_jump_closure, 0.3), 0.125, rtol=1e-9)
    try:
        got = by_reverse(fixed_jump_closure, 0.3)
    except NoDerivative as e:
        assert "forward mode" in str(e)
    else:
        np.testing.assert_allclose(got, 0.125, rtol=1e-9)


@pytest.mark.parametrize("inner", ["reverse", "forward"])
def test_second_derivative_across_a_moving_kink_is_refused(inner):
    # ∫|t - a| dt: its first derivative's integrand jumps at t = a, so the second derivative has a term
    # (2) the integral of the second derivative (0) misses
    np.testing.assert_allclose(derivative(moving_kink_abs, 0.3), -0.4, rtol=1e-7)
    with pytest.raises(NoDerivative, match="jump"):
        hessian(moving_kink_abs, 0.3, inner=inner)


def heaviside_moving(a):
    return quad(lambda t: np.heaviside(t - a, 0.5) * np.cos(t), 0, 1.5)[0]


def sign_moving(a):
    return quad(lambda t: np.sign(t - a) * np.cos(t), 0, 1.5)[0]


def floor_moving(a):
    return quad(lambda t: np.floor(t - a + 1.0) * np.cos(t), 0, 1.5)[0]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [heaviside_moving, sign_moving, floor_moving])
def test_a_step_made_by_a_c_function_that_moves_is_refused(mode, f):
    # (reverse mode gave 0: the step's term is no derivative of np.heaviside's)
    assert abs(fd.derivative(f, 0.3, h=1e-3)) > 0.3
    with pytest.raises(NoDerivative, match="jump"):
        mode(f, 0.3)


def relu_builtin(a):  # (1 - a)^2 / 2: f' = a - 1, f'' = 1
    return quad(lambda t: max(t - a, 0.0), 0, 1)[0]


def relu_numpy(a):
    return quad(lambda t: np.maximum(t - a, 0.0), 0, 1)[0]


def abs_numpy(a):  # (a^2 + (1 - a)^2) / 2: f' = 2a - 1, f'' = 2
    return quad(lambda t: np.abs(t - a), 0, 1)[0]


@pytest.mark.parametrize("f, first", [(relu_builtin, 0.3 - 1), (relu_numpy, 0.3 - 1), (abs_numpy, 2 * 0.3 - 1)])
def test_a_kink_made_by_a_c_function(f, first):
    # the first derivative is right; the second meets the kink's jump of the derivative, which the integral
    # of the second derivative (0) misses: refused (it was 0)
    assert by_reverse(f, 0.3) == pytest.approx(first, rel=1e-7)
    assert by_forward(f, 0.3) == pytest.approx(first, rel=1e-7)
    for inner in ("reverse", "forward"):
        with pytest.raises(NoDerivative, match="jump"):
            hessian(f, 0.3, inner=inner)


def open_at_the_upper_limit(b):  # the support ends at the moving limit: d/db = exp(b⁻)
    return quad(lambda x: np.exp(x) if x < b else 0.0, 0.3, b)[0]


def closed_at_the_upper_limit(b):
    return quad(lambda x: np.exp(x) if x <= b else 0.0, 0.3, b)[0]


def open_at_the_lower_limit(a):  # d/da = -exp(a⁺)
    return quad(lambda x: np.exp(x) if x > a else 0.0, a, 1.5)[0]


def pareto_support(loc):  # (l + 1) - l >= 1 fails by rounding at some loc: the density there was 0
    from scipy import stats
    return stats.pareto(3.0, loc=loc).expect(lambda x: x)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, x, exact", [
    (open_at_the_upper_limit, 1.5, math.exp(1.5)), (closed_at_the_upper_limit, 1.5, math.exp(1.5)),
    (open_at_the_lower_limit, 0.3, -math.exp(0.3)), (pareto_support, 0.4, None),
])
def test_a_moving_limit_takes_the_integrand_from_inside(mode, f, x, exact):
    # (the integrand at the limit itself is outside its support: the limit's term was 0 — in forward mode
    # after a tie there was run a hair outside)
    got = mode(f, x)
    np.testing.assert_allclose(got, fd.derivative(f, x, h=1e-5), rtol=1e-5)
    if exact is not None:
        np.testing.assert_allclose(got, exact, rtol=1e-8)


def jump_through_args(a):  # ∫_0^a a t dt = a³/2: reverse mode gave the interior's a²/2 only
    return quad(lambda t, a: a * t if t < a else 0.0, 0, 1, args=(a,))[0]


class _Stepped:
    def __init__(self, a):
        self.a = a

    def h(self, t):
        return self.a * t if t < self.a else 0.0

    def __call__(self, t):
        return self.h(t)


def jump_in_a_bound_method(a):
    return quad(_Stepped(a).h, 0, 1)[0]


def jump_in_a_callable_object(a):
    return quad(_Stepped(a), 0, 1)[0]


def jump_in_a_partial(a):
    import functools
    return quad(functools.partial(lambda a, t: a * t if t < a else 0.0, a), 0, 1)[0]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [jump_through_args, jump_in_a_bound_method, jump_in_a_callable_object,
                               jump_in_a_partial])
def test_a_moving_jump_reached_every_way(mode, f):
    # (reverse mode: through args= the tie at t == a fell on the wrong side of the bisection's bracket;
    # a bound method's or an object's refused cotangent was dropped, 0; a partial's crashed)
    assert fd.derivative(f, 0.37, h=1e-4) == pytest.approx(1.5 * 0.37 ** 2, rel=1e-4)  # (d/da a³/2)
    with pytest.raises(NoDerivative, match="jump"):
        mode(f, 0.37)


def fixed_sign_scaled(a):  # the sign's boundary t = 0.5 does not move with a
    return quad(lambda t: np.sign(a * (t - 0.5)) * t, 0, 1)[0]


def fixed_ratio_test(a):
    return quad(lambda t: a * t if (t - 0.5) / a > 0 else t * t, 0, 1)[0]


def exponential_scale(s):  # expon's support edge at loc = 0.3 stays put as the scale moves
    from scipy import stats
    return stats.expon.expect(None, loc=0.3, scale=s, lb=-0.2, ub=3.0)


@pytest.mark.parametrize("f, x, exact", [
    (fixed_sign_scaled, 0.7, 0.0), (fixed_ratio_test, 0.7, 0.375), (exponential_scale, 1.3, None),
])
def test_forward_mode_tells_a_jump_that_stays_put(f, x, exact):
    # (the compared value depends on the parameter, but the boundary does not move: its speed, the
    # compared difference's tangent over its slope in t, is 0; reverse mode cannot tell, and refuses)
    got = by_forward(f, x)
    if exact is None:  # (scipy's expect is off by its quadrature across the jump: the integral split there)
        exact = by_forward(lambda s: quad(lambda t: t * np.exp(-(t - 0.3) / s) / s, 0.3, 3.0,
                                          epsabs=1e-13, epsrel=1e-13)[0], x)
        np.testing.assert_allclose(exact, fd.derivative(
            lambda s: quad(lambda t: t * np.exp(-(t - 0.3) / s) / s, 0.3, 3.0, epsabs=1e-13, epsrel=1e-13)[0],
            x, h=1e-4), rtol=1e-6)
    np.testing.assert_allclose(got, exact, rtol=1e-7, atol=1e-12)


def min_kink(a):  # ∫ min(t, a) t dt: f' = (1 - a²) / 2, f'' = -a
    return quad(lambda t: min(t, a) * t, 0, 1)[0]


def test_second_derivative_across_a_builtin_min():
    assert by_reverse(min_kink, 0.37) == pytest.approx((1 - 0.37 ** 2) / 2, rel=1e-7)
    assert by_forward(min_kink, 0.37) == pytest.approx((1 - 0.37 ** 2) / 2, rel=1e-7)
    for inner in ("reverse", "forward"):
        with pytest.raises(NoDerivative, match="jump"):
            hessian(min_kink, 0.37, inner=inner)


def tight_kink(a):  # continuous, at tight tolerances quad's nodes crowd the kink
    return quad(lambda t: max(1 - (t - a) ** 2, 0.0) * t, -2, 2, epsabs=1e-12, epsrel=1e-12)[0]


@pytest.mark.parametrize("mode", MODES)
def test_a_kink_at_tight_tolerances(mode):
    assert mode(tight_kink, 0.3) == pytest.approx(4 / 3, rel=1e-9)
