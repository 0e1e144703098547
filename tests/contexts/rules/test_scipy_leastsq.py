"""scipy.optimize's least-squares fits in reverse and forward mode, by the implicit function theorem at the
optimum (contexts/rules/numpy/scipy_leastsq.py): `leastsq`, `curve_fit` (method 'lm', and 'trf'/'dogbox' and
bounds through `least_squares`), `least_squares`. Derivatives with respect to ydata, xdata, sigma, `args` and
values a residual's closure holds, against central differences of the whole fit re-run at perturbed data
(MINPACK with the exact Jacobian, ftol=xtol=1e-14: its optimum is the same for every method while no bound is
active) and a closed form (a linear model's normal equations). A fit of noisy data has non-zero residuals:
there the Gauss-Newton JᵀJ in place of the Hessian is wrong, and these tests tell it apart. Refused, never a
number: a capped fit, a singular or indefinite Hessian, an active bound, a robust loss, the solver's state.
Each test runs one mode alone (`one_mode`: no other mode answering)."""

import warnings

import numpy as np
import pytest

so = pytest.importorskip("scipy.optimize")

from contexts import gradient, hessian, jacfwd, jacobian, jvp  # noqa: E402
from overdub.errors import OverdubError  # noqa: E402
from tests import fd  # noqa: E402

pytestmark = [pytest.mark.one_mode, pytest.mark.filterwarnings("ignore::RuntimeWarning"),
              pytest.mark.filterwarnings("ignore::scipy.optimize.OptimizeWarning")]

TIGHT = dict(ftol=1e-14, xtol=1e-14)
X = np.linspace(-3.0, 3.0, 25)
P0 = np.array([1.0, 0.0, 1.0])
Y = 1.0 * np.exp(-((X - 0.3) / 1.2) ** 2) + 0.05 * np.random.default_rng(0).standard_normal(X.size)
BOUNDS = ([0.0, -1.0, 0.1], [2.0, 1.0, 3.0])  # (inactive at the optimum: 0.936, 0.319, 1.256)


def gaussian(x, a, c, w):
    """PeakUtils' model (`peakutils.peak.gaussian`)."""
    return a * np.exp(-((x - c) / w) ** 2)


def gaussian_jac(x, a, c, w):
    e = np.exp(-((x - c) / w) ** 2)
    return np.stack([e, a * e * 2 * (x - c) / w ** 2, a * e * 2 * (x - c) ** 2 / w ** 3], axis=1)


def newton_polished(p, x, y, w=1.0):
    """p moved onto the optimum by plain numpy Newton steps on the analytic gradient Jᵀ W r (W = w²), its
    Jacobian by central differences (they set the rate, not the fixed point): MINPACK's tight fit alone stops
    1e-9 away, which the differences of the whole fit turn into 1e-5 of a derivative."""
    def g(q):
        return (w[:, None] * gaussian_jac(x, *q) if np.ndim(w) else gaussian_jac(x, *q)).T @ \
            (w * (gaussian(x, *q) - y))
    for _ in range(4):
        H = np.array([(g(p + 1e-6 * e) - g(p - 1e-6 * e)) / 2e-6 for e in np.eye(p.size)]).T
        p = p - np.linalg.solve((H + H.T) / 2, g(p))
    return p


def tight_popt(y, x=X, sigma=None, p0=P0):
    """The oracle's fit: MINPACK on the exact Jacobian, tight, then Newton's steps to the optimum."""
    p = so.curve_fit(gaussian, x, y, p0, jac=gaussian_jac, sigma=sigma, **TIGHT)[0]
    return newton_polished(p, x, y, 1.0 if sigma is None else 1.0 / np.asarray(sigma))


def fd_jacobian(f, v):
    """(outputs, inputs) by the five-point differences of each output."""
    return np.array([fd.gradient(lambda u, i=i: f(u)[i], v)[0] for i in range(np.size(f(v)))])


def d_reverse(f, v):
    return gradient(f, v)[0]


def d_forward(f, v):
    return jacfwd(f, v)


MODES = {"reverse": d_reverse, "forward": d_forward}
JACOBIANS = {"reverse": lambda f, v: jacobian(f, v, mode="reverse"), "forward": jacfwd}


def assert_close(got, want, rtol=1e-7):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert np.max(np.abs(got - want)) <= rtol * np.max(np.abs(want)), (got, want)


# -- curve_fit and leastsq at a non-zero-residual optimum ------------------------------------------------------

def center(y):
    """The PeakUtils repro: `gaussian_fit(x, y, center_only=True)`."""
    return so.curve_fit(gaussian, X, y, P0)[0][1]


@pytest.mark.parametrize("mode", MODES)
def test_peakutils_center_wrt_y(mode):
    want = fd.gradient(lambda y: tight_popt(y)[1], Y)[0]
    assert_close(MODES[mode](center, Y), want)


def test_gauss_newton_would_fail_here():
    """The residuals are not zero: dp/dy = H⁻¹Jᵀ differs from (JᵀJ)⁻¹Jᵀ by 1e-3 of its size, 10⁴ times the
    tests' tolerance, so a rule using JᵀJ alone fails `test_peakutils_center_wrt_y`."""
    p = tight_popt(Y)
    J = gaussian_jac(X, *p)
    gauss_newton = np.linalg.solve(J.T @ J, J.T)[1]
    want = fd.gradient(lambda y: tight_popt(y)[1], Y)[0]
    assert np.max(np.abs(gauss_newton - want)) > 1e-4 * np.max(np.abs(want))
    assert np.max(np.abs(gaussian(X, *p) - Y)) > 0.05


@pytest.mark.parametrize("mode", MODES)
def test_noisy_fit_at_default_tolerances(mode):
    """curve_fit's defaults stop this fit 5e-6 from its optimum (a Newton step of that size): the rule's Newton
    steps on the exact ∇½‖r‖² find the optimum itself, whose derivative it gives (it was refused, and at a
    smaller scale of the same fit 8e-6 off)."""
    noisy = gaussian(X, 1.0, 0.3, 1.2) + 0.2 * np.random.default_rng(0).standard_normal(X.size)
    start = np.array([1.0, -1.0, 2.0])

    def f(y):
        return so.curve_fit(gaussian, X, y, start)[0][2]
    assert np.abs(f(noisy) - tight_popt(noisy, p0=start)[2]) > 1e-6
    assert_close(MODES[mode](f, noisy), fd.gradient(lambda y: tight_popt(y, p0=start)[2], noisy)[0])


@pytest.mark.parametrize("mode", MODES)
def test_center_at_zero(mode):
    """Symmetric data: the center's optimum is 0, the fit stops 7e-6 off it (its width 1.2): a parameter's scale
    is at least 1e-2 of the largest's (at 1e-6 of it the fit was refused)."""
    noise = 0.05 * np.random.default_rng(0).standard_normal(X.size)
    y = gaussian(X, 1.0, 0.0, 1.2) + (noise + noise[::-1]) / 2
    start = np.array([1.0, -0.5, 2.0])
    assert abs(tight_popt(y, p0=start)[1]) < 1e-12 < 1e-6 < abs(so.curve_fit(gaussian, X, y, start)[0][1])
    want = fd.gradient(lambda v: tight_popt(v, p0=start)[1], y)[0]
    assert_close(MODES[mode](lambda v: so.curve_fit(gaussian, X, v, start)[0][1], y), want)


@pytest.mark.parametrize("mode", JACOBIANS)
def test_popt_jacobian_wrt_y(mode):
    want = fd_jacobian(tight_popt, Y)
    assert_close(JACOBIANS[mode](lambda y: so.curve_fit(gaussian, X, y, P0)[0], Y), want)


@pytest.mark.parametrize("mode", MODES)
def test_popt_wrt_xdata(mode):
    def f(x, **kw):
        p = so.curve_fit(gaussian, x, Y, P0, **kw)[0]
        return p[1] + 2.0 * p[2]
    want = fd.gradient(lambda x: (lambda p: p[1] + 2.0 * p[2])(tight_popt(Y, x=x)), X)[0]
    assert_close(MODES[mode](f, X), want)


@pytest.mark.parametrize("mode", MODES)
def test_popt_wrt_sigma(mode):
    sigma0 = 0.05 + 0.02 * np.abs(X)

    def f(s, **kw):
        return so.curve_fit(gaussian, X, Y, P0, sigma=s, **kw)[0][2]
    want = fd.gradient(lambda s: tight_popt(Y, sigma=s)[2], sigma0)[0]
    assert_close(MODES[mode](f, sigma0), want, rtol=1e-6)


def decay_fit(theta, tol=None):
    """leastsq on a residual holding θ[0] (a rate) in its closure and θ[1] (an offset) in args."""
    k = theta[0]
    t = np.linspace(0.0, 4.0, 15)
    data = 2.0 * np.exp(-0.7 * t) + 0.3 + 0.05 * np.cos(5 * t)

    def residual(p, offset):
        return p[0] * np.exp(-k * p[1] * t) + offset - data
    return so.leastsq(residual, [1.0, 1.0], args=(theta[1],), **(tol or {}))[0]


@pytest.mark.parametrize("mode", JACOBIANS)
def test_leastsq_closure_and_args(mode):
    theta = np.array([0.9, 0.25])
    want = fd_jacobian(lambda v: decay_fit(v, TIGHT), theta)
    assert_close(JACOBIANS[mode](decay_fit, theta), want, rtol=1e-5)  # (the oracle: MINPACK's tight fit alone)


def test_leastsq_jvp():
    theta, v = np.array([0.9, 0.25]), np.array([0.3, -1.0])
    want = fd_jacobian(lambda u: decay_fit(u, TIGHT), theta) @ v
    _, tangent = jvp(decay_fit, (theta,), (v,))
    assert_close(tangent, want, rtol=1e-5)


# -- a linear model: the normal equations ------------------------------------------------------------------

def line(x, a, b, c):
    return a + b * x + c * x ** 2


@pytest.mark.parametrize("mode", JACOBIANS)
def test_linear_model_normal_equations(mode):
    A = np.stack([np.ones_like(X), X, X ** 2], axis=1)
    want = np.linalg.solve(A.T @ A, A.T)  # p = (AᵀA)⁻¹Aᵀy
    assert_close(JACOBIANS[mode](lambda y: so.curve_fit(line, X, y, P0)[0], Y), want, rtol=1e-8)


T7 = np.linspace(0.1, 1.0, 7)
Y7 = np.array([0.3, 0.1, 0.5, 0.2, 0.9, 0.4, 1.1])


def curved(p, y):
    return p * T7 - y + 0.1 * p ** 2 * T7 ** 2


@pytest.mark.parametrize("mode", MODES)
def test_one_parameter_closed_form(mode):
    """r = p t - y + 0.1 p² t²: g = Σ rᵢ r'ᵢ = 0, dp/dyⱼ = r'ⱼ / Σ (r'ᵢ² + rᵢ r''ᵢ), r' = t + 0.2 p t², r'' = 0.2 t²;
    p by brentq on g (a root finder, not the fit). Gauss-Newton (no Σ rᵢ r''ᵢ) is 3e-4 off."""
    p = so.brentq(lambda q: np.sum(curved(q, Y7) * (T7 + 0.2 * q * T7 ** 2)), -5, 5, xtol=1e-15)
    slope = T7 + 0.2 * p * T7 ** 2
    want = slope / np.sum(slope ** 2 + curved(p, Y7) * 0.2 * T7 ** 2)
    assert np.max(np.abs(slope / np.sum(slope ** 2) - want)) > 1e-4
    assert_close(MODES[mode](lambda y: so.leastsq(curved, [1.0], args=(y,))[0][0], Y7), want, rtol=1e-12)


# -- least_squares: curve_fit with bounds, 'trf' and 'dogbox' ----------------------------------------------

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kw", [dict(bounds=BOUNDS), dict(method="trf"), dict(method="dogbox"),
                                dict(bounds=BOUNDS, method="dogbox")], ids=["bounds", "trf", "dogbox", "dogbox-bounds"])
def test_curve_fit_through_least_squares(mode, kw):
    """The trust-region iterations differentiated as code stopped at their tolerance: 1e-3 off, silently."""
    want = fd.gradient(lambda y: tight_popt(y)[1], Y)[0]
    assert_close(MODES[mode](lambda y: so.curve_fit(gaussian, X, y, P0, **kw)[0][1], Y), want)


W_STAR = tight_popt(Y)[2]  # (the unconstrained optimum's width, 1.2562021)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("above", [1e-4, 1e-8, 0.0])
def test_bound_reached_but_not_flagged_refused(mode, above):
    """A lower bound at or just above the unconstrained optimum: trf stops 2e-8 inside it with res.active_mask 0,
    and Newton's steps from there cross it. The unconstrained derivative of the amplitude is 60% off the
    constrained one (the width held at its bound): refused, never given."""
    lb = W_STAR + above

    def f(y):
        return so.curve_fit(gaussian, X, y, [1.0, 0.0, lb + 0.1], bounds=([0, -1, lb], [2, 1, 3]))[0][0]
    with pytest.raises(OverdubError, match="bound is active"):
        MODES[mode](f, Y)


@pytest.mark.parametrize("mode", MODES)
def test_bound_just_below_the_optimum(mode):
    """1e-6 below: the optimum is inside, its derivative the unconstrained one."""
    lb = W_STAR - 1e-6

    def f(y):
        return so.curve_fit(gaussian, X, y, [1.0, 0.0, lb + 0.1], bounds=([0, -1, lb], [2, 1, 3]))[0][0]
    assert_close(MODES[mode](f, Y), fd.gradient(lambda y: tight_popt(y)[0], Y)[0])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("how", ["args", "kwargs", "closure"])
def test_least_squares_args_kwargs_closure(mode, how):
    """p x ≈ c eˣ: p = c (x·eˣ)/(x·x), dp/dc = (x·eˣ)/(x·x), c reaching r three ways."""
    def f(c):
        if how == "args":
            return so.least_squares(lambda p, k: p * X - k * np.exp(X), 1.0, args=(c,)).x[0]
        if how == "kwargs":
            return so.least_squares(lambda p, k=1.0: p * X - k * np.exp(X), 1.0, kwargs={"k": c}).x[0]
        return so.least_squares(lambda p: p * X - c * np.exp(X), 1.0).x[0]
    assert MODES[mode](f, 2.0) == pytest.approx((X @ np.exp(X)) / (X @ X), rel=1e-10)


def pcov_of(y):
    """curve_fit's pcov, computed apart: s²(JᵀJ)⁻¹ at the oracle's optimum, J exact."""
    p = tight_popt(y)
    J = gaussian_jac(X, *p)
    r = gaussian(X, *p) - y
    return np.linalg.inv(J.T @ J) * (r @ r) / (X.size - 3)


@pytest.mark.parametrize("mode", MODES)
def test_trf_pcov(mode):
    """With least_squares the covariance is the SVD's of res.jac: differentiated."""
    def f(y):
        return np.sqrt(so.curve_fit(gaussian, X, y, P0, method="trf", jac=gaussian_jac)[1][1, 1])
    want = fd.gradient(lambda y: np.sqrt(pcov_of(y)[1, 1]), Y)[0]
    assert_close(MODES[mode](f, Y), want, rtol=1e-4)


@pytest.mark.parametrize("mode", MODES)
def test_residuals_and_cost_at_the_optimum(mode):
    def leastsq_fvec(y, **kw):
        out = so.leastsq(lambda p: gaussian(X, *p) - y, P0, full_output=True, **kw)
        return out[2]["fvec"] @ np.cos(X)

    def least_squares_cost(y):
        return so.least_squares(lambda p: gaussian(X, *p) - y, P0).cost

    def oracle_fvec(y):
        return (gaussian(X, *tight_popt(y)) - y) @ np.cos(X)

    def oracle_cost(y):
        r = gaussian(X, *tight_popt(y)) - y
        return 0.5 * r @ r
    assert_close(MODES[mode](leastsq_fvec, Y), fd.gradient(oracle_fvec, Y)[0], rtol=1e-6)
    assert_close(MODES[mode](least_squares_cost, Y), fd.gradient(oracle_cost, Y)[0], rtol=1e-6)


# -- refused -------------------------------------------------------------------------------------------------

def capped(y):
    return so.leastsq(lambda p: gaussian(X, *p) - y, P0, maxfev=5)[0][1]


def nearly_capped(y):
    """Stopped by maxfev 1.5e-4 from the optimum (ier 5): near enough for Newton's steps, but the solver says it
    failed."""
    return so.leastsq(lambda p: gaussian(X, *p) - y, P0, maxfev=10)[0][1]


def singular(y):
    """a·b·x: only the product is determined."""
    return so.leastsq(lambda p: p[0] * p[1] * X - y, [1.0, 1.0])[0][0]


def saddle(t):
    """½(p² − t)² at p = 0, where MINPACK stops (the gradient is 0): a maximum along p, Hessian −2t."""
    return so.leastsq(lambda p: np.array([p[0] * p[0] - t, 0.0 * p[0]]), [0.0],
                      Dfun=lambda p: np.array([[2 * p[0]], [0.0]]))[0][0]


def bound_active(y):
    return so.curve_fit(gaussian, X, y, [1.0, 0.0, 1.35], bounds=([0.0, -1.0, 1.3], [2.0, 1.0, 3.0]))[0][1]


def lm_pcov(y):
    return so.curve_fit(gaussian, X, y, P0)[1][1, 1]


def robust(y):
    return so.least_squares(lambda p: gaussian(X, *p) - y, P0, loss="soft_l1").x[1]


def least_squares_grad(y):
    return so.least_squares(lambda p: gaussian(X, *p) - y, P0).grad[1]


def leastsq_fjac(y):
    return so.leastsq(lambda p: gaussian(X, *p) - y, P0, full_output=True)[2]["fjac"][0, 0]


def sparse_jacobian(y):
    return so.least_squares(lambda p: gaussian(X, *p) - y, P0, jac_sparsity=np.ones((X.size, 3))).x[1]


REFUSED = {"capped": (capped, Y, "not a minimum"), "nearly_capped": (nearly_capped, Y, "no success.*maxfev"),
           "singular": (singular, Y, "not a minimum|singular"),
           "saddle": (saddle, 1.0, "not a strict minimum"), "bound": (bound_active, Y, "bound is active"),
           "cov_x": (lm_pcov, Y, "cov_x|special|SpecialPoint|value equal to"), "loss": (robust, Y, "loss='soft_l1'"),
           "grad": (least_squares_grad, Y, "res.grad"), "fjac": (leastsq_fjac, Y, "fjac"),
           "sparse": (sparse_jacobian, Y, "csr|sparse")}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", REFUSED)
def test_refused(mode, case):
    f, v, match = REFUSED[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(OverdubError, match=match):
            MODES[mode](f, v)


def test_capped_fit_runs_unchanged():
    """The refusal is the derivative's: the fit itself, run plainly, is scipy's (a warning, its last point)."""
    with pytest.warns(RuntimeWarning):
        p = so.leastsq(lambda p: gaussian(X, *p) - Y, P0, maxfev=5)[0]
    assert np.max(np.abs(p - tight_popt(Y))) > 1e-4


def test_second_derivative_refused():
    with pytest.raises(OverdubError):
        hessian(lambda t: decay_fit(np.array([t[0], 0.25]))[0], np.array([0.9]))


@pytest.mark.parametrize("mode", MODES)
def test_peakutils_gaussian_fit(mode):
    """PeakUtils itself (its own model, exp(-(x - c)² / (2w² + eps)), and initial guess from the data)."""
    peakutils = pytest.importorskip("peakutils")
    eps = np.finfo(float).eps

    def jac(x, a, c, w):
        d = 2 * w ** 2 + eps
        e = np.exp(-(x - c) ** 2 / d)
        return np.stack([e, a * e * 2 * (x - c) / d, a * e * (x - c) ** 2 * 4 * w / d ** 2], axis=1)

    def oracle(y):
        p0 = [np.max(y), X[0], (X[1] - X[0]) * 5]  # (gaussian_fit's own)
        p = so.curve_fit(peakutils.peak.gaussian, X, y, p0, jac=jac, **TIGHT)[0]

        def g(q):
            return jac(X, *q).T @ (peakutils.peak.gaussian(X, *q) - y)
        for _ in range(4):  # (Newton's steps to the optimum, as `newton_polished`)
            H = np.array([(g(p + 1e-6 * e) - g(p - 1e-6 * e)) / 2e-6 for e in np.eye(3)]).T
            p = p - np.linalg.solve((H + H.T) / 2, g(p))
        return p[1]
    got = MODES[mode](lambda y: peakutils.peak.gaussian_fit(X, y, center_only=True), Y)
    assert_close(got, fd.gradient(oracle, Y)[0])  # (5e-13 measured)
