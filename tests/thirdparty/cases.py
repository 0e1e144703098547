"""The functions of the third-party suite: real functions of packages from PyPI, called unchanged.

Each `Case` names its package (the import name `pytest.importorskip` takes), a label, and `build()`, which
imports the package and returns `(f, x)`: `f` takes one float or float array `x` and returns a float or a
float array. The test (`test_thirdparty.py`) and the table (`perf/thirdparty.py`) both run `check()`:
reverse mode is `contexts.value_and_gradient` (scalar output) or `contexts.vjp` and `contexts.jacobian`
(array output); forward mode is `contexts.jvp` and `contexts.derivative` (float x) or `contexts.jacfwd`
(array x). Both are compared with the central differences of `tests/fd.py`, and the primal under the
engine with the plain call.

`reverse` / `forward` say what each mode does today: None when it is right, else `Refused(error type,
class of failure)` — the test is then an xfail that must raise that error (strict: a fix turns it into
a failure, to be moved to right).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from tests import fd


@dataclass(frozen=True)
class Refused:
    error: type | tuple
    reason: str


@dataclass
class Case:
    package: str                       # import name, for pytest.importorskip
    name: str                          # label in the table
    build: Callable[[], tuple[Callable, Any]]
    reverse: Refused | None = None
    forward: Refused | None = None
    rtol: float = 1e-5
    atol: float = 1e-7
    dist: str = field(default="")      # the PyPI name when it differs from the import name
    # the finite differences' function, where f's own is a staircase (a solver's loose tolerance): the same
    # quantity computed to full precision, built as build() is
    reference: Callable[[], Callable] | None = None

    @property
    def id(self) -> str:
        return f"{self.package}:{self.name}"


CASES: list[Case] = []


def case(package, name, reverse=None, forward=None, **kw):
    """Decorator: register build() as a case."""
    def register(build):
        CASES.append(Case(package, name, build, reverse, forward, **kw))
        return build
    return register


def R(error: str, reason: str) -> Refused:
    """Refused with the error type of that name: the engine's, or a builtin one (a crash inside the
    library, noted as such in the reason); `A|B`: either (a library's versions meeting the refusal at
    different places: pandas 2's C blocks, pandas 3's numpy conversion)."""
    if "|" in error:
        return Refused(tuple(R(e, reason).error for e in error.split("|")), reason)
    import builtins

    import contexts
    from contexts import forward
    from contexts.forward import dual
    from contexts.rules import builtins as rules_builtins
    from overdub import errors
    for module in (contexts, forward, dual, rules_builtins, errors, builtins):
        if hasattr(module, error):
            return Refused(getattr(module, error), reason)
    raise LookupError(error)


# -- checking -----------------------------------------------------------------------------------

def _leaks(value) -> bool:
    """Whether an engine object (a Dual, an object array) is in a result that should be numbers."""
    if isinstance(value, (list, tuple)):
        return any(_leaks(v) for v in value)
    if isinstance(value, np.ndarray):
        return value.dtype == object
    return not isinstance(value, (float, int, np.floating, np.integer, complex, np.complexfloating))


def _close(got, want, case: Case, what: str):
    if _leaks(got):
        raise AssertionError(f"{case.id} {what}: not plain numbers: {type(got).__name__} {got!r}")
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert got.shape == want.shape, f"{case.id} {what}: shape {got.shape} != {want.shape}"
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol * scale, err_msg=f"{case.id} {what}")


def _primal(got, plain, case: Case, mode: str):
    if _leaks(got):
        raise AssertionError(f"{case.id} {mode} primal: not plain numbers: {got!r}")
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(plain, dtype=float), rtol=1e-12,
                               atol=1e-300, err_msg=f"{case.id} {mode} primal")


def check_reverse(case: Case, f, x):
    from contexts import jacobian, value_and_gradient, vjp
    plain = f(x)
    ref = case.reference() if case.reference is not None else f
    if np.ndim(plain) == 0:
        value, (g,) = value_and_gradient(f, x)
        _primal(value, plain, case, "reverse")
        _close(g, fd.gradient(ref, x)[0], case, "gradient")
    else:
        ct = np.linspace(0.5, 1.5, np.size(plain)).reshape(np.shape(plain))
        value, _ = vjp(f, (x,), ct)
        _primal(value, plain, case, "reverse")
        # (reverse mode's rows: `jacobian`'s default answers by forward mode where fewer inputs map to more)
        _close(jacobian(f, x, mode="reverse"), fd.jacobian(ref, x, matrix=True), case, "jacobian")


def check_forward(case: Case, f, x):
    from contexts import derivative, jacfwd, jvp
    plain = f(x)
    ref = case.reference() if case.reference is not None else f
    t = 1.0 if np.ndim(x) == 0 else np.linspace(0.3, 1.1, np.size(x)).reshape(np.shape(x))
    value, dy = jvp(f, (x,), (t,))
    _primal(value, plain, case, "forward")
    _close(dy, fd.directional(ref, (x,), (t,)), case, "jvp")
    if np.ndim(x) == 0:
        _close(derivative(f, x), fd.derivative(ref, x), case, "derivative")
    else:
        _close(jacfwd(f, x), fd.jacobian(ref, x), case, "jacfwd")


CHECKS = {"reverse": check_reverse, "forward": check_forward}


def expected(case: Case, mode: str) -> Refused | None:
    return case.reverse if mode == "reverse" else case.forward


def _imp(name):
    return importlib.import_module(name)


# ===============================================================================================
# scipy.integrate: ODE solvers, parameters through args=, quadrature
# ===============================================================================================

def _lotka(t, y, a, b):
    return [a * y[0] - b * y[0] * y[1], b * y[0] * y[1] - y[1]]


def _solve(method, p, y0=(1.0, 0.5)):
    integrate = _imp("scipy.integrate")
    sol = integrate.solve_ivp(_lotka, (0.0, 1.0), list(y0), method=method, args=(p[0], p[1]),
                              rtol=1e-10, atol=1e-12)
    return sol.y[:, -1]


@case("scipy", "integrate.solve_ivp RK45, args=")
def _():
    return (lambda p: _solve("RK45", p)), np.array([1.1, 0.4])


@case("scipy", "integrate.solve_ivp RK23, y0")
def _():
    integrate = _imp("scipy.integrate")

    def f(y0):
        sol = integrate.solve_ivp(lambda t, y: -0.5 * y + np.sin(y), (0.0, 1.0), y0, method="RK23",
                                  rtol=1e-10, atol=1e-12)
        return sol.y[:, -1]
    return f, np.array([0.3, 0.8])


@case("scipy", "integrate.solve_ivp DOP853, args=")
def _():
    return (lambda p: _solve("DOP853", p)), np.array([0.9, 0.6])


@case("scipy", "integrate.quad")
def _():
    integrate = _imp("scipy.integrate")
    return (lambda a: integrate.quad(lambda t: np.exp(-a * t * t), 0.0, 1.0)[0]), 0.7


@case("scipy", "integrate.quad (args=, moving and infinite limits)")
def _():
    integrate = _imp("scipy.integrate")

    def f(p):
        tail = integrate.quad(lambda t, s: np.exp(-s * t) * np.cos(t), p[1], np.inf, args=(p[0],))[0]
        return tail + integrate.quad(lambda t, s: np.log1p(s * t * t), 0.0, p[0] * p[1], args=(p[1],))[0]
    return f, np.array([0.8, 1.3])


@case("scipy", "integrate.dblquad")
def _():
    integrate = _imp("scipy.integrate")
    return (lambda a: integrate.dblquad(lambda y, x: np.exp(-a * x * y), 0.0, 1.0, 0.0, lambda x: a * x)[0]), 0.6


@case("scipy", "integrate.simpson")
def _():
    integrate = _imp("scipy.integrate")
    t = np.linspace(0.0, 1.0, 9)
    return (lambda y: integrate.simpson(y ** 2, x=t)), np.linspace(0.2, 1.0, 9)


@case("scipy", "integrate.odeint (args=, y0)", rtol=1e-5)
def _():
    integrate = _imp("scipy.integrate")
    t = np.linspace(0.0, 2.0, 5)
    return (lambda p: integrate.odeint(lambda y, s, k: [y[1], -k * y[0] - 0.1 * y[1]], [p[1], 0.0], t,
                                       args=(p[0],), rtol=1e-11, atol=1e-12)[:, 0]), np.array([2.0, 0.7])


@case("scipy", "integrate.cumulative_trapezoid")
def _():
    integrate = _imp("scipy.integrate")
    t = np.linspace(0.0, 1.0, 9)
    return (lambda y: integrate.cumulative_trapezoid(np.sin(y), t)), np.linspace(0.2, 1.0, 9)


@case("scipy", "optimize.elementwise.find_root (args=)")
def _():
    elementwise = _imp("scipy.optimize.elementwise")
    return (lambda a: elementwise.find_root(lambda x, a: x ** 3 + x - a, (-5.0, 5.0), args=(a,)).x), \
        np.array([0.3, 1.7, 4.0])


@case("scipy", "optimize.elementwise.find_minimum (value)")
def _():
    # (the value only: a minimum's x is found to about √eps, too coarse for central differences of it; its
    # derivative is checked against a closed form in tests/contexts/rules/test_scipy_elementwise.py)
    elementwise = _imp("scipy.optimize.elementwise")
    return (lambda a: elementwise.find_minimum(lambda x, a: np.cosh(x - a) + 0.3 * x ** 2, (-4.0, 0.0, 4.0),
                                               args=(a,)).f_x), np.array([0.4, 1.1])


@case("scipy", "linalg.sqrtm and logm")
def _():
    linalg = _imp("scipy.linalg")
    return (lambda v: np.real(linalg.sqrtm(v.reshape(3, 3)) + linalg.logm(v.reshape(3, 3))).ravel()), \
        np.array([2.0, 0.4, 0.1, 0.3, 3.0, 0.2, 0.1, 0.5, 2.5])


@case("numpy", "percentile and quantile")
def _():
    return (lambda x: np.concatenate([np.percentile(x ** 3, [10, 37, 90]), [np.quantile(np.sin(x), 0.6)]])), \
        np.random.default_rng(0).normal(size=12)


# ===============================================================================================
# scipy.interpolate
# ===============================================================================================

_KNOTS = np.linspace(0.0, 2.0, 7)
_AT = np.array([0.15, 0.7, 1.33, 1.9])


@case("scipy", "interpolate.CubicSpline (data)")
def _():
    interpolate = _imp("scipy.interpolate")
    return (lambda y: interpolate.CubicSpline(_KNOTS, y)(_AT)), np.sin(_KNOTS) + 1.5


@case("scipy", "interpolate.CubicSpline (points, first derivative)")
def _():
    interpolate = _imp("scipy.interpolate")
    spline = interpolate.CubicSpline(_KNOTS, np.sin(_KNOTS), bc_type="natural")
    return (lambda t: spline(t, 1)), _AT


@case("scipy", "interpolate.CubicSpline.integrate (data)")
def _():
    interpolate = _imp("scipy.interpolate")
    return (lambda y: interpolate.CubicSpline(_KNOTS, y).integrate(0.3, 1.7)), np.cos(_KNOTS)


@case("scipy", "interpolate.Akima1DInterpolator (data)")
def _():
    interpolate = _imp("scipy.interpolate")
    return (lambda y: interpolate.Akima1DInterpolator(_KNOTS, y)(_AT)), np.sin(2 * _KNOTS)


@case("scipy", "interpolate.interp1d linear (data)")
def _():
    interpolate = _imp("scipy.interpolate")
    return (lambda y: interpolate.interp1d(_KNOTS, y)(_AT)), np.cos(_KNOTS)


@case("scipy", "interpolate.PchipInterpolator (data)")
def _():
    interpolate = _imp("scipy.interpolate")
    return (lambda y: interpolate.PchipInterpolator(_KNOTS, y)(_AT)), np.exp(_KNOTS / 2)


@case("scipy", "interpolate.make_interp_spline (data)")
def _():
    interpolate = _imp("scipy.interpolate")
    return (lambda y: interpolate.make_interp_spline(_KNOTS, y)(_AT)), np.cos(_KNOTS)


@case("scipy", "interpolate.BarycentricInterpolator (point)")
def _():
    interpolate = _imp("scipy.interpolate")
    p = interpolate.BarycentricInterpolator(_KNOTS, np.sin(_KNOTS))
    return (lambda t: p(t)), 0.83


@case("scipy", "interpolate.lagrange (data)")
def _():
    interpolate = _imp("scipy.interpolate")
    k = _KNOTS[:4]
    return (lambda y: interpolate.lagrange(k, y)(0.77)), np.array([1.0, 0.5, -0.3, 0.2])


# ===============================================================================================
# scipy.stats: distributions' logpdf/cdf, frozen distributions
# ===============================================================================================

@case("scipy", "stats.norm.logpdf (loc, scale)")
def _():
    stats = _imp("scipy.stats")
    data = np.array([0.3, -1.2, 2.0])
    return (lambda p: np.sum(stats.norm.logpdf(data, loc=p[0], scale=p[1]))), np.array([0.2, 1.4])


@case("scipy", "stats.norm(...).cdf frozen")
def _():
    stats = _imp("scipy.stats")
    return (lambda p: stats.norm(p[0], p[1]).cdf(0.4)), np.array([0.1, 0.8])


@case("scipy", "stats.t.logpdf (x)")
def _():
    stats = _imp("scipy.stats")
    return (lambda x: np.sum(stats.t.logpdf(x, 4.5))), np.array([0.3, -0.9, 1.7])


@case("scipy", "stats.gamma.logpdf (x, a)")
def _():
    stats = _imp("scipy.stats")
    return (lambda p: stats.gamma.logpdf(p[0], p[1])), np.array([1.3, 2.2])


@case("scipy", "stats.multivariate_normal.logpdf")
def _():
    stats = _imp("scipy.stats")
    cov = np.array([[1.0, 0.3], [0.3, 0.8]])
    return (lambda m: stats.multivariate_normal.logpdf(np.array([0.2, -0.4]), mean=m, cov=cov)), \
        np.array([0.1, 0.3])


# ===============================================================================================
# scipy.special: the functions the registry has rules for
# ===============================================================================================

@case("scipy", "special.gammaln + digamma")
def _():
    special = _imp("scipy.special")
    return (lambda x: np.sum(special.gammaln(x) * special.digamma(x))), np.array([0.7, 1.9, 3.2])


@case("scipy", "special.logsumexp (b=)")
def _():
    special = _imp("scipy.special")
    return (lambda x: special.logsumexp(x, b=np.array([0.5, 1.0, 2.0]))), np.array([0.1, -0.4, 0.9])


@case("scipy", "special.erf / ndtr / expit")
def _():
    special = _imp("scipy.special")
    return (lambda x: special.erf(x) * special.ndtr(2 * x) + special.expit(x) ** 2), 0.35


@case("scipy", "special.softmax, xlogy")
def _():
    special = _imp("scipy.special")
    return (lambda x: np.sum(special.xlogy(x, special.softmax(x) + 1.0))), np.array([0.3, 1.1, -0.6])


@case("scipy", "ndimage.gaussian_filter (2-D image)")
def _():
    ndimage = _imp("scipy.ndimage")
    w = np.cos(np.arange(20.0)).reshape(4, 5)
    return (lambda a: np.sum(ndimage.gaussian_filter(a.reshape(4, 5), 1.2) ** 2 * w)), \
        np.linspace(0.1, 2.0, 20) ** 1.5


@case("scipy", "ndimage.correlate (n-D weights)")
def _():
    ndimage = _imp("scipy.ndimage")
    w = np.cos(np.arange(20.0)).reshape(4, 5)
    k = np.array([[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.5, 0.0, 0.5]])
    return (lambda a: np.sum(ndimage.correlate(a.reshape(4, 5), k, mode="mirror") ** 2 * w)), \
        np.linspace(0.1, 2.0, 20) ** 1.5


@case("scipy", "signal.sosfiltfilt (Butterworth)")
def _():
    signal = _imp("scipy.signal")
    sos = signal.butter(4, 0.2, output="sos")
    w = np.cos(np.arange(30.0) * 0.7)
    return (lambda x: np.sum(signal.sosfiltfilt(sos, x) * w)), np.sin(np.arange(30.0) * 0.3)


@case("scipy", "signal.resample_poly")
def _():
    signal = _imp("scipy.signal")
    w = np.cos(np.arange(45.0) * 0.7)
    return (lambda x: np.sum(signal.resample_poly(x, 3, 2) * w)), np.sin(np.arange(30.0) * 0.3)


@case("scipy", "ndimage.sobel + uniform_filter")
def _():
    ndimage = _imp("scipy.ndimage")
    return (lambda a: np.sum(ndimage.sobel(ndimage.uniform_filter(a.reshape(4, 5), 3), axis=0) ** 2)), \
        np.sin(np.arange(20.0)) + 1.0


@case("scipy", "interpolate.RectBivariateSpline (points)")
def _():
    interpolate = _imp("scipy.interpolate")
    xs, ys = np.linspace(0.0, 3.0, 7), np.linspace(-1.0, 2.0, 6)
    spline = interpolate.RectBivariateSpline(xs, ys, np.sin(xs)[:, None] * np.cos(ys)[None, :])
    return (lambda p: spline(p[0], p[1], grid=False)), np.array([1.3, 0.4])


@case("scipy", "linalg.pinv")
def _():
    linalg = _imp("scipy.linalg")
    return (lambda a: np.sum(linalg.pinv(a.reshape(3, 2)) * np.arange(6.0).reshape(2, 3))), \
        np.array([1.0, 0.3, -0.4, 2.0, 0.7, 0.5])


# ===============================================================================================
# filterpy: Kalman filters (objects holding state, updated in place)
# ===============================================================================================

def _kalman(kalman, dt=0.1):
    kf = kalman.KalmanFilter(dim_x=2, dim_z=1)
    kf.F = np.array([[1.0, dt], [0.0, 1.0]])
    kf.H = np.array([[1.0, 0.0]])
    kf.P = np.eye(2) * 0.5
    kf.R = np.array([[0.2]])
    kf.Q = np.eye(2) * 0.01
    return kf


@case("filterpy", "KalmanFilter predict/update (measurements)")
def _():
    kalman = _imp("filterpy.kalman")

    def f(zs):
        kf = _kalman(kalman)
        kf.x = np.array([0.0, 1.0])
        for z in zs:
            kf.predict()
            kf.update(z)
        return kf.x
    return f, np.array([0.11, 0.19, 0.32])


@case("filterpy", "KalmanFilter log_likelihood (initial state)")
def _():
    kalman = _imp("filterpy.kalman")

    def f(x0):
        kf = _kalman(kalman)
        kf.x = x0
        total = 0.0
        for z in (0.12, 0.2, 0.29):
            kf.predict()
            kf.update(z)
            total = total + kf.log_likelihood
        return total
    return f, np.array([0.05, 0.9])


@case("filterpy", "kalman.predict/update functions")
def _():
    kalman = _imp("filterpy.kalman")
    F = np.array([[1.0, 0.1], [0.0, 1.0]])
    H = np.array([[1.0, 0.0]])

    def f(x0):
        x, P = kalman.predict(x0, np.eye(2), F, np.eye(2) * 0.01)
        x, P = kalman.update(x, P, np.array([0.3]), np.array([[0.2]]), H)
        return x
    return f, np.array([0.2, 0.7])


@case("filterpy", "UnscentedKalmanFilter predict/update")
def _():
    kalman = _imp("filterpy.kalman")

    def f(zs):
        points = kalman.MerweScaledSigmaPoints(2, alpha=0.3, beta=2.0, kappa=1.0)
        ukf = kalman.UnscentedKalmanFilter(dim_x=2, dim_z=1, dt=0.1, points=points,
                                           fx=lambda x, dt: np.array([x[0] + dt * np.sin(x[1]), x[1]]),
                                           hx=lambda x: x[:1])
        ukf.x = np.array([0.0, 1.0])
        ukf.R *= 0.2
        ukf.Q *= 0.01
        for z in zs:
            ukf.predict()
            ukf.update(np.array([z]))
        return ukf.x
    return f, np.array([0.1, 0.18])


@case("filterpy", "stats.logpdf / mahalanobis")
def _():
    stats = _imp("filterpy.stats")
    cov = np.array([[1.0, 0.2], [0.2, 0.5]])
    return (lambda x: stats.logpdf(x, np.array([0.1, 0.2]), cov) + stats.mahalanobis(x, np.zeros(2), cov)), \
        np.array([0.4, -0.3])


# ===============================================================================================
# scikit-learn: kernels
# ===============================================================================================

_XK = np.array([[0.1, 0.5], [1.2, -0.3], [0.7, 0.9]])


@case("sklearn", "metrics.pairwise.rbf_kernel", dist="scikit-learn")
def _():
    pairwise = _imp("sklearn.metrics.pairwise")
    return (lambda x: pairwise.rbf_kernel(x.reshape(1, 2), _XK, gamma=0.7).ravel()), np.array([0.3, 0.2])


@case("sklearn", "metrics.pairwise.polynomial_kernel", dist="scikit-learn")
def _():
    pairwise = _imp("sklearn.metrics.pairwise")
    return (lambda x: pairwise.polynomial_kernel(x.reshape(1, 2), _XK, degree=3, coef0=1.0).ravel()), \
        np.array([0.3, 0.2])


@case("sklearn", "metrics.pairwise.laplacian_kernel", dist="scikit-learn")
def _():
    pairwise = _imp("sklearn.metrics.pairwise")
    return (lambda x: pairwise.laplacian_kernel(x.reshape(1, 2), _XK, gamma=0.5).ravel()), np.array([0.3, 0.2])


@case("sklearn", "gaussian_process.kernels.Matern", dist="scikit-learn")
def _():
    kernels = _imp("sklearn.gaussian_process.kernels")
    k = kernels.Matern(length_scale=0.8, nu=2.5)
    return (lambda x: k(x.reshape(1, 2), _XK).ravel()), np.array([0.3, 0.2])


@case("sklearn", "gaussian_process.kernels.RBF + WhiteKernel diag", dist="scikit-learn")
def _():
    kernels = _imp("sklearn.gaussian_process.kernels")
    k = kernels.RBF(length_scale=1.3) + kernels.WhiteKernel(0.1)
    return (lambda x: np.sum(k(x.reshape(3, 2)))), _XK.ravel().copy()


# pyproj: geodesics on the ellipsoid (PROJ's C in Cython; geographiclib's Python in its place: `rules.pyproj`)
@case("pyproj", "Geod.inv azimuths and distance")
def _():
    g = _imp("pyproj").Geod(ellps="WGS84")
    return (lambda x: np.array(g.inv(x[0], x[1], x[2], x[3]))), np.array([10.0, 40.0, 12.0, 44.0])


@case("pyproj", "Geod.fwd of arrays (distance scale)")
def _():
    g = _imp("pyproj").Geod(ellps="WGS84")
    return (lambda x: np.concatenate(g.fwd(np.array([10.0, 11.0]), np.array([40.0, 41.0]), np.array([30.0, 75.0]),
                                           np.array([1e5, 3e5]) * x[0]))), np.array([1.3])


# scikit-learn: estimators fitted to differentiated data (each fit runs inside a `@contextmanager` of
# callbacks, given the estimator and its float settings: `contexts.ad.managers`)
_XF = np.array([[0.2, 1.0], [1.1, -0.4], [0.5, 0.3], [-0.7, 0.8], [1.6, 0.1], [0.3, -1.2]])
_YF = np.array([0.4, -0.2, 1.3, 0.7, -0.9, 0.25])


@case("sklearn", "linear_model.Ridge(alpha=0.5).fit coef_ (y)", dist="scikit-learn")
def _():
    linear_model = _imp("sklearn.linear_model")
    return (lambda y: linear_model.Ridge(alpha=0.5).fit(_XF, y).coef_), _YF.copy()


@case("sklearn", "linear_model.LinearRegression.fit predict (y)", dist="scikit-learn")
def _():
    linear_model = _imp("sklearn.linear_model")
    return (lambda y: linear_model.LinearRegression().fit(_XF, y).predict(_XF[:3])), _YF.copy()


@case("sklearn", "preprocessing.StandardScaler.fit transform (X)", dist="scikit-learn")
def _():
    preprocessing = _imp("sklearn.preprocessing")
    return (lambda x: preprocessing.StandardScaler().fit(x.reshape(6, 2)).transform(x.reshape(6, 2)[:2]).ravel()), \
        _XF.ravel().copy()


# ===============================================================================================
# astropy: cosmology, models, coordinates' functions
# ===============================================================================================

@case("astropy", "cosmology FlatLambdaCDM.comoving_distance",
      forward=R('OverdubError', 'a Quantity (an ndarray subclass with operators of its own) holding a dual: its '
                                'operators are its own code, which the duals would take for numpy\'s; refused (its '
                                '.value read off the dual gave 0 before session 36)'))
def _():
    cosmology = _imp("astropy.cosmology")
    cosmo = cosmology.FlatLambdaCDM(H0=70.0, Om0=0.3)
    return (lambda z: cosmo.comoving_distance(z).value), 0.5


@case("astropy", "cosmology FlatLambdaCDM.efunc")
def _():
    cosmology = _imp("astropy.cosmology")
    cosmo = cosmology.FlatLambdaCDM(H0=70.0, Om0=0.3)
    return (lambda z: cosmo.efunc(z)), 0.8


@case("astropy", "modeling Gaussian1D.evaluate")
def _():
    models = _imp("astropy.modeling.models")
    t = np.array([0.1, 0.5, 1.4])
    return (lambda p: models.Gaussian1D.evaluate(t, p[0], p[1], p[2])), np.array([1.5, 0.4, 0.7])


@case("astropy", "coordinates angular_separation")
def _():
    coordinates = _imp("astropy.coordinates")
    return (lambda p: coordinates.angular_separation(p[0], p[1], 0.4, 0.2)), np.array([0.9, -0.3])


@case("astropy", "stats biweight_location")
def _():
    stats = _imp("astropy.stats")
    return (lambda x: stats.biweight_location(x)), np.array([0.3, 1.1, 0.8, 2.0, 0.45])


# ===============================================================================================
# colour-science
# ===============================================================================================

@case("colour", "XYZ_to_Lab", dist="colour-science")
def _():
    colour = _imp("colour")
    return (lambda xyz: colour.XYZ_to_Lab(xyz)), np.array([0.2, 0.3, 0.25])


@case("colour", "delta_E CIE 2000", dist="colour-science")
def _():
    colour = _imp("colour")
    return (lambda lab: colour.delta_E(lab, np.array([52.0, 10.0, -8.0]), method="CIE 2000")), \
        np.array([50.0, 12.0, -5.0])


@case("colour", "sRGB_to_XYZ", dist="colour-science")
def _():
    colour = _imp("colour")
    return (lambda rgb: colour.sRGB_to_XYZ(rgb)), np.array([0.4, 0.6, 0.2])


@case("colour", "xy_to_CCT McCamy", dist="colour-science")
def _():
    colour = _imp("colour")
    return (lambda xy: colour.xy_to_CCT(xy, method="McCamy 1992")), np.array([0.31, 0.33])


# ===============================================================================================
# sympy: generated code (lambdify to numpy)
# ===============================================================================================

@case("sympy", "lambdify scalar expression")
def _():
    sympy = _imp("sympy")
    a, b = sympy.symbols("a b")
    g = sympy.lambdify((a, b), sympy.exp(-a * b) * sympy.sin(a) + sympy.sqrt(1 + b ** 2), "numpy")
    return (lambda p: g(p[0], p[1])), np.array([0.6, 1.3])


@case("sympy", "lambdify matrix (Jacobian of a map)")
def _():
    sympy = _imp("sympy")
    a, b = sympy.symbols("a b")
    m = sympy.Matrix([a ** 2 * b, sympy.cos(a) + b]).jacobian([a, b])
    g = sympy.lambdify((a, b), m, "numpy")
    return (lambda p: g(p[0], p[1]).ravel()), np.array([0.6, 1.3])


@case("sympy", "lambdify special functions (gamma, erf)")
def _():
    sympy = _imp("sympy")
    a = sympy.symbols("a")
    g = sympy.lambdify(a, sympy.loggamma(a) + sympy.erf(a / 2), ["scipy", "numpy"])
    return (lambda x: g(x)), 1.7


@case("sympy", "lambdify Piecewise / Max")
def _():
    sympy = _imp("sympy")
    a = sympy.symbols("a")
    g = sympy.lambdify(a, sympy.Piecewise((a ** 2, a < 1), (2 * a - 1, True)) + sympy.Max(a, 0.5), "numpy")
    return (lambda x: np.sum(g(x))), np.array([0.3, 1.7])


# ===============================================================================================
# pandas
# ===============================================================================================

@case("pandas", "Series arithmetic + sum",
      forward=R('NoForwardRule|DualConversionError', 'pandas Series of differentiated arrays'))
def _():
    pd = _imp("pandas")
    return (lambda x: float((pd.Series(x) * 2.0 + 1.0).sum())), np.array([0.3, 0.8, 1.1])


@case("pandas", "DataFrame column ops to_numpy",
      forward=R('NoForwardRule|DualConversionError', 'pandas DataFrame of differentiated arrays'))
def _():
    pd = _imp("pandas")

    def f(x):
        df = pd.DataFrame({"a": x, "b": x ** 2})
        return (df["a"] * df["b"]).to_numpy()
    return f, np.array([0.3, 0.8, 1.1])


@case("pandas", "Series.rolling mean",
      forward=R('NoForwardRule|DualConversionError', 'pandas Series of differentiated arrays'))
def _():
    pd = _imp("pandas")
    return (lambda x: pd.Series(x).rolling(2).mean().to_numpy()[1:]), np.array([0.3, 0.8, 1.1, 0.4])


@case("pandas", "Series.ewm mean",
      forward=R('NoForwardRule|DualConversionError', 'pandas Series of differentiated arrays'))
def _():
    pd = _imp("pandas")
    return (lambda x: pd.Series(x).ewm(alpha=0.4).mean().to_numpy()), np.array([0.3, 0.8, 1.1])


# ===============================================================================================
# lmfit: line shapes
# ===============================================================================================

_T = np.array([-0.5, 0.2, 0.9])


@case("lmfit", "lineshapes.gaussian")
def _():
    ls = _imp("lmfit.lineshapes")
    return (lambda p: ls.gaussian(_T, p[0], p[1], p[2])), np.array([1.2, 0.1, 0.6])


@case("lmfit", "lineshapes.gaussian (**dict of parameters, as lmfit's Model calls it)")
def _():
    ls = _imp("lmfit.lineshapes")
    return (lambda p: np.sum(ls.gaussian(_T, **dict(zip(("amplitude", "center", "sigma"), p))))), \
        np.array([1.2, 0.1, 0.6])


@case("lmfit", "lineshapes.lorentzian")
def _():
    ls = _imp("lmfit.lineshapes")
    return (lambda p: ls.lorentzian(_T, p[0], p[1], p[2])), np.array([1.2, 0.1, 0.6])


@case("lmfit", "lineshapes.pvoigt")
def _():
    ls = _imp("lmfit.lineshapes")
    return (lambda p: ls.pvoigt(_T, p[0], p[1], p[2], p[3])), np.array([1.2, 0.1, 0.6, 0.3])


@case("lmfit", "lineshapes.skewed_gaussian")
def _():
    ls = _imp("lmfit.lineshapes")
    return (lambda p: ls.skewed_gaussian(_T, p[0], p[1], p[2], p[3])), np.array([1.2, 0.1, 0.6, 0.5])


@case("lmfit", "lineshapes.step erf")
def _():
    ls = _imp("lmfit.lineshapes")
    return (lambda p: ls.step(_T, p[0], p[1], p[2], form="erf")), np.array([1.2, 0.1, 0.6])


# ===============================================================================================
# fluids: chemical-engineering correlations in pure-Python floats
# ===============================================================================================

def _cubic_residual(m, k, c):
    return m ** 3 + k * m - c


@case("fluids", "numerics.bisect (scipy's bisect ported: one end moved by a halved width)")
def _():
    numerics = _imp("fluids.numerics")
    return (lambda p: numerics.bisect(_cubic_residual, 0.0, 4.0, args=(p[0], p[1]))), np.array([1.3, 2.0])


@case("fluids", "core.Reynolds")
def _():
    fluids = _imp("fluids")
    return (lambda p: fluids.Reynolds(V=p[0], D=p[1], rho=1000.0, mu=1e-3)), np.array([2.5, 0.1])


@case("fluids", "friction.Colebrook")
def _():
    fluids = _imp("fluids")
    return (lambda re: fluids.friction.Colebrook(re, 1e-4)), 1.0e5


@case("fluids", "friction.Clamond")
def _():
    fluids = _imp("fluids")
    return (lambda re: fluids.friction.Clamond(re, 1e-4)), 1.0e5


@case("fluids", "drag.drag_sphere (Re)")
def _():
    fluids = _imp("fluids")
    return (lambda re: fluids.drag.drag_sphere(re)), 120.0


@case("fluids", "core.Prandtl / Nusselt")
def _():
    fluids = _imp("fluids")
    return (lambda p: fluids.core.Prandtl(Cp=p[0], k=p[1], mu=1e-3) * fluids.core.Nusselt(h=p[1], L=0.2, k=0.6)), \
        np.array([4180.0, 0.6])


@case("fluids", "fittings.bend_rounded (Miller's tables)")
def _():
    fluids = _imp("fluids")
    return (lambda p: fluids.fittings.bend_rounded(Di=p[0], angle=p[1], fd=0.018, rc=0.3, Re=1e5,
                                                      method="Miller")), np.array([0.1, 60.0])


# ===============================================================================================
# geographiclib: geodesics on the ellipsoid (pure Python floats)
# ===============================================================================================

@case("geographiclib", "Geodesic.Inverse s12")
def _():
    geodesic = _imp("geographiclib.geodesic")
    g = geodesic.Geodesic.WGS84
    return (lambda p: g.Inverse(p[0], p[1], -33.9, 151.2)["s12"] / 1e6), np.array([40.6, -73.8])


@case("geographiclib", "Geodesic.Direct lat2/lon2")
def _():
    geodesic = _imp("geographiclib.geodesic")
    g = geodesic.Geodesic.WGS84

    def f(p):
        r = g.Direct(40.6, -73.8, p[0], p[1])
        return np.array([r["lat2"], r["lon2"]])
    return f, np.array([51.0, 5.0e6])


@case("geographiclib", "Geodesic.Inverse azi1")
def _():
    geodesic = _imp("geographiclib.geodesic")
    g = geodesic.Geodesic.WGS84
    return (lambda lat: g.Inverse(lat, 10.0, 48.0, 20.0)["azi1"]), 41.0


@case("geographiclib", "Geodesic.Inverse area S12")
def _():
    geodesic = _imp("geographiclib.geodesic")
    g = geodesic.Geodesic.WGS84
    return (lambda lat: g.Inverse(lat, 10.0, 48.0, 20.0, geodesic.Geodesic.AREA)["S12"] / 1e12), 41.0


# ===============================================================================================
# transforms3d: rotations
# ===============================================================================================

@case("transforms3d", "euler.euler2mat")
def _():
    t3 = _imp("transforms3d")
    return (lambda a: t3.euler.euler2mat(a[0], a[1], a[2]).ravel()), np.array([0.3, -0.4, 1.1])


@case("transforms3d", "quaternions.quat2mat")
def _():
    t3 = _imp("transforms3d")
    return (lambda q: t3.quaternions.quat2mat(q).ravel()), np.array([0.9, 0.1, -0.3, 0.2])


@case("transforms3d", "euler.mat2euler")
def _():
    t3 = _imp("transforms3d")
    return (lambda a: np.array(t3.euler.mat2euler(t3.euler.euler2mat(a[0], a[1], a[2]), "szyx"))), \
        np.array([0.3, -0.4, 1.1])


@case("transforms3d", "axangles.axangle2mat")
def _():
    t3 = _imp("transforms3d")
    return (lambda p: t3.axangles.axangle2mat(p[:3], p[3]).ravel()), np.array([0.2, 0.5, 0.8, 0.7])


@case("transforms3d", "quaternions.qmult + qinverse")
def _():
    t3 = _imp("transforms3d")
    return (lambda q: t3.quaternions.qmult(q, t3.quaternions.qinverse(q[::-1]))), np.array([0.9, 0.1, -0.3, 0.2])


# ===============================================================================================
# properscoring: forecast scores
# ===============================================================================================

@case("properscoring", "crps_gaussian (mu, sig)")
def _():
    ps = _imp("properscoring")
    return (lambda p: ps.crps_gaussian(0.4, p[0], p[1])), np.array([0.1, 0.7])


@case("properscoring", "crps_ensemble (members)")
def _():
    ps = _imp("properscoring")
    return (lambda e: ps.crps_ensemble(0.4, e)), np.array([0.1, 0.7, -0.2, 0.55])


@case("properscoring", "crps_ensemble weighted")
def _():
    ps = _imp("properscoring")
    return (lambda w: ps.crps_ensemble(0.4, np.array([0.1, 0.7, -0.2]), weights=w)), np.array([0.3, 0.5, 0.2])


@case("properscoring", "crps_quadrature (mu)",
      reverse=R('UnsupportedFunction', 'a class made in a function, its method reading a differentiated '
                                       'variable (_discover_bounds: DistFromCDF.cdf)'),
      forward=R('OverdubError', 'np.vectorize of a Python function (on 3.13 brentq inside it meets a dual first: '
                                'DualConversionError)'))
def _():
    ps = _imp("properscoring")
    stats = _imp("scipy.stats")
    return (lambda mu: ps.crps_quadrature(0.4, stats.norm(mu, 1.0))), 0.1


# ===============================================================================================
# mpmath: arbitrary precision in pure Python
# ===============================================================================================

@case("mpmath", "mpmath.sin / exp on floats")
def _():
    mpmath = _imp("mpmath")
    return (lambda x: float(mpmath.sin(x) * mpmath.exp(x))), 0.7


@case("mpmath", "mpmath.quad",
      reverse=R('OverdubError', "mpmath's numbers read inside (fdot: hasattr, or mpf._mpf_, of a differentiated mpf)"),
      forward=R('DualInsideError', "a number's inside read (mpf._mpf_ of a dual)"))
def _():
    mpmath = _imp("mpmath")
    return (lambda a: float(mpmath.quad(lambda t: mpmath.exp(-a * t), [0, 1]))), 0.7


@case("mpmath", "mpmath.besselj")
def _():
    mpmath = _imp("mpmath")
    return (lambda x: float(mpmath.besselj(1, x))), 0.7


@case("mpmath", "mpmath.findroot")
def _():
    mpmath = _imp("mpmath")
    return (lambda a: float(mpmath.findroot(lambda t: t ** 3 - a, 1.0))), 2.0


# ===============================================================================================
# pint: physical quantities (objects with their own __new__ and arithmetic in pure Python)
# ===============================================================================================

_UREG = []


def _ureg():
    if not _UREG:
        _UREG.append(_imp("pint").UnitRegistry())
    return _UREG[0]


@case("pint", "kinetic energy in units, to joules")
def _():
    ureg = _ureg()

    def energy(v):
        m = 2.0 * ureg.kg
        speed = v * ureg.meter / ureg.second
        return (0.5 * m * speed ** 2).to(ureg.joule).magnitude
    return energy, 3.0


@case("pint", "drag force, converted units (km/h, g/cm^3)")
def _():
    ureg = _ureg()

    def drag(v):
        speed = (v * ureg.kilometer / ureg.hour).to(ureg.meter / ureg.second)
        rho = 0.0012 * ureg.gram / ureg.centimeter ** 3
        area = 0.5 * ureg.meter ** 2
        return (0.5 * rho * speed ** 2 * area * 0.3).to(ureg.newton).magnitude
    return drag, 90.0


@case("pint", "a unit parsed from text (ureg('m/s'))")
def _():
    ureg = _ureg()
    return (lambda v: (0.5 * 2.0 * ureg.kg * (v * ureg("m/s")) ** 2).m_as("J")), 3.0


# ===============================================================================================
# numpy-financial: time value of money (`map(np.asarray, ...)` over the arguments)
# ===============================================================================================

_FLOWS = [-100.0, 39.0, 59.0, 55.0, 20.0]


@case("numpy_financial", "npv", dist="numpy-financial")
def _():
    npf = _imp("numpy_financial")
    return (lambda r: npf.npv(r, _FLOWS)), 0.08


@case("numpy_financial", "pmt (rate)", dist="numpy-financial")
def _():
    npf = _imp("numpy_financial")
    return (lambda r: npf.pmt(r / 12, 360, 200000.0)), 0.075


@case("numpy_financial", "fv (rate, payment)", dist="numpy-financial")
def _():
    npf = _imp("numpy_financial")
    return (lambda p: npf.fv(p[0], 10, -p[1], -100.0)), np.array([0.05, 120.0])


@case("numpy_financial", "rate (Newton iterations)", dist="numpy-financial")
def _():
    npf = _imp("numpy_financial")
    return (lambda pv: npf.rate(10, 0.0, -pv, 1000.0)), 300.0


@case("numpy_financial", "nper (rate in percent)", dist="numpy-financial")
def _():
    npf = _imp("numpy_financial")
    return (lambda r: npf.nper(r / 100.0, -150.0, 8000.0)), 1.0


# ===============================================================================================
# seawater: the EOS-80 equation of state (`list(map(np.asanyarray, (s, t, p)))`)
# ===============================================================================================

_STP = np.array([35.0, 10.0, 1000.0])  # salinity, temperature (deg C), pressure (dbar)


@case("seawater", "dens (s, t, p)")
def _():
    sw = _imp("seawater")
    return (lambda v: sw.dens(v[0], v[1], v[2])), _STP.copy()


@case("seawater", "ptmp potential temperature (s, t, p)")
def _():
    sw = _imp("seawater")
    return (lambda v: sw.ptmp(v[0], v[1], v[2])), _STP.copy()


@case("seawater", "svel sound speed (s, t, p)")
def _():
    sw = _imp("seawater")
    return (lambda v: sw.svel(v[0], v[1], v[2])), _STP.copy()


@case("seawater", "pres from depth (array)")
def _():
    sw = _imp("seawater")
    return (lambda d: sw.pres(d, 30.0)), np.array([100.0, 1000.0, 3000.0])


# ===============================================================================================
# pymap3d: geodesy (coordinates in km: the finite differences' step is absolute)
# ===============================================================================================

@case("pymap3d", "geodetic2ecef")
def _():
    pymap3d = _imp("pymap3d")
    return (lambda v: np.array(pymap3d.geodetic2ecef(v[0], v[1], v[2] * 1e3)) / 1e3), np.array([42.0, -82.0, 0.2])


@case("pymap3d", "ecef2geodetic")
def _():
    pymap3d = _imp("pymap3d")
    return (lambda v: np.array(pymap3d.ecef2geodetic(*(v * 1e3)))), np.array([660.0, -4700.0, 4300.0])


@case("pymap3d", "geodetic2aer")
def _():
    pymap3d = _imp("pymap3d")
    return ((lambda v: np.array(pymap3d.geodetic2aer(v[0], v[1], v[2] * 1e3, 42.0, -82.0, 0.0)) / [1, 1, 1e3]),
            np.array([42.1, -81.9, 1.0]))


@case("pymap3d", "vincenty.vdist")
def _():
    vincenty = _imp("pymap3d.vincenty")
    return (lambda v: vincenty.vdist(v[0], v[1], v[2], v[3])[0] / 1e3), np.array([10.0, 20.0, 30.0, 40.0])


# ===============================================================================================
# einops, rowan: tensor rearrangement by pattern, quaternions on arrays
# ===============================================================================================

_SIX = np.array([0.3, 0.5, 0.7, 1.1, 1.3, 0.2])


@case("einops", "rearrange + reduce (sum)")
def _():
    einops = _imp("einops")
    return (lambda a: einops.reduce(einops.rearrange(a, "(h w) -> h w", h=2) ** 2, "h w -> w", "sum")), _SIX.copy()


@case("einops", "reduce (max) over a rearranged axis")
def _():
    einops = _imp("einops")
    return (lambda a: einops.reduce(einops.rearrange(a, "(h w) -> w h", w=3), "w h -> h", "max")), _SIX.copy()


@case("einops", "repeat + einsum")
def _():
    einops = _imp("einops")
    w = np.linspace(0.5, 1.5, 12).reshape(2, 6)
    return (lambda a: einops.einsum(einops.repeat(a, "n -> k n", k=2), w, "k n, k n -> k")), _SIX.copy()


_Q = np.array([0.9, 0.1, 0.3, 0.2])


@case("rowan", "rotate (normalized)")
def _():
    rowan = _imp("rowan")
    return (lambda q: rowan.rotate(rowan.normalize(q), np.array([0.3, 0.5, 0.8]))), _Q.copy()


@case("rowan", "to_euler")
def _():
    rowan = _imp("rowan")
    return (lambda q: rowan.to_euler(rowan.normalize(q))), _Q.copy()


@case("rowan", "geometry.sym_distance")
def _():
    rowan = _imp("rowan")
    return (lambda q: rowan.geometry.sym_distance(rowan.normalize(q), np.array([1.0, 0.0, 0.0, 0.0]))), _Q.copy()


@case("rowan", "multiply by the conjugate")
def _():
    rowan = _imp("rowan")
    return (lambda q: rowan.multiply(q, rowan.conjugate(q * q))), _Q.copy()


# ===============================================================================================
# pvlib: solar irradiance, cell temperature, IV curves (numpy on floats and arrays)
# ===============================================================================================

@case("pvlib", "irradiance.aoi (tilt, azimuth, zenith, azimuth)")
def _():
    irradiance = _imp("pvlib.irradiance")
    return (lambda a: irradiance.aoi(a[0], a[1], a[2], a[3])), np.array([30.0, 180.0, 40.0, 160.0])


@case("pvlib", "temperature.sapm_cell")
def _():
    temperature = _imp("pvlib.temperature")
    return (lambda v: temperature.sapm_cell(v[0], v[1], v[2], -3.56, -0.075, 3.0)), np.array([800.0, 25.0, 2.0])


@case("pvlib", "temperature.faiman (arrays)")
def _():
    temperature = _imp("pvlib.temperature")
    return (lambda poa: temperature.faiman(poa, np.array([20.0, 25.0, 30.0]), 2.0)), np.array([300.0, 600.0, 900.0])


@case("pvlib", "atmosphere.get_relative_airmass kastenyoung1989")
def _():
    atmosphere = _imp("pvlib.atmosphere")
    return (lambda z: atmosphere.get_relative_airmass(z)), 60.0


@case("pvlib", "iam.physical (array)")
def _():
    iam = _imp("pvlib.iam")
    return (lambda aoi: iam.physical(aoi)), np.array([10.0, 40.0, 70.0])


@case("pvlib", "pvsystem.calcparams_desoto")
def _():
    pvsystem = _imp("pvlib.pvsystem")

    def f(v):
        il, io, rs, rsh, nnsvth = pvsystem.calcparams_desoto(v[0], v[1], alpha_sc=0.004, a_ref=1.6, I_L_ref=6.0,
                                                             I_o_ref=1e-10, R_sh_ref=300.0, R_s=0.5)
        return np.array([il, io * 1e9, rsh, nnsvth])
    return f, np.array([800.0, 45.0])


@case("pvlib", "singlediode.bishop88 (diode voltage, photocurrent)")
def _():
    singlediode = _imp("pvlib.singlediode")
    return (lambda v: np.array(singlediode.bishop88(v[0], v[1], 1e-10, 0.5, 300.0, 1.6))), np.array([20.0, 6.0])


@case("pvlib", "pvsystem.singlediode p_mp (photocurrent, lambertw)")
def _():
    # (the maximum power point by scipy.optimize.elementwise.find_minimum: its value by the envelope theorem;
    # was NaN — 0 * inf in the adjoint of the np.exp overflow pvlib masks out — and, beyond that, wrong: the
    # minimisation's bracketing steps differentiated as code)
    pvsystem = _imp("pvlib.pvsystem")
    return (lambda il: pvsystem.singlediode(il, 1e-10, 0.5, 300.0, 1.6)["p_mp"]), 6.0


@case("pvlib", "pvsystem.singlediode v_mp (photocurrent, lambertw)",
      reverse=R('UnsupportedFunction', "the minimum's x needs reverse over forward mode through pvlib's "
                                       "in-place array stores"),
      rtol=1e-4)  # (a minimum's x is found to about √eps: its central differences are good to ~1e-5)
def _():
    pvsystem = _imp("pvlib.pvsystem")
    return (lambda il: pvsystem.singlediode(il, 1e-10, 0.5, 300.0, 1.6)["v_mp"]), 6.0


@case("pvlib", "irradiance.get_total_irradiance poa_global")
def _():
    irradiance = _imp("pvlib.irradiance")
    return (lambda v: irradiance.get_total_irradiance(30.0, 180.0, v[0], 160.0, v[1], v[2], v[3])["poa_global"]), \
        np.array([40.0, 700.0, 600.0, 100.0])


@case("pvlib", "irradiance.perez (sky diffuse)")
def _():
    irradiance = _imp("pvlib.irradiance")
    return (lambda v: irradiance.perez(30.0, 180.0, v[0], v[1], 1361.0, v[2], 160.0, 2.0)), \
        np.array([100.0, 700.0, 40.0])


@case("pvlib", "irradiance.erbs dni/dhi")
def _():
    irradiance = _imp("pvlib.irradiance")

    def f(v):
        out = irradiance.erbs(v[0], v[1], 150)
        return np.array([out["dni"], out["dhi"]], dtype=float)
    return f, np.array([600.0, 40.0])



@case("pvlib", "spa.solar_position_numpy zenith/azimuth (lat, lon)")
def _():
    spa = _imp("pvlib.spa")

    def f(p):
        out = spa.solar_position_numpy(np.array([1.6e9]), p[0], p[1], 1600.0, 1013.0, 15.0, 67.0, 0.5667, 0)
        return np.array([out[1][0], out[4][0]])  # zenith, azimuth
    return f, np.array([40.0, -105.0])


@case("pvlib", "tracking.singleaxis tracker_theta (arrays)")
def _():
    tracking = _imp("pvlib.tracking")
    return (lambda z: tracking.singleaxis(z, np.array([160.0, 200.0]), 0.0, 180.0, 60.0, True, 0.4)["tracker_theta"]), \
        np.array([40.0, 50.0])


@case("pvlib", "shading.masking_angle")
def _():
    shading = _imp("pvlib.shading")
    return (lambda p: shading.masking_angle(p[0], p[1], 0.5)), np.array([30.0, 1.5])


@case("pvlib", "temperature.noct_sam")
def _():
    temperature = _imp("pvlib.temperature")
    return (lambda v: temperature.noct_sam(v[0], v[1], v[2], 45.0, 0.2)), np.array([800.0, 25.0, 2.0])


@case("pvlib", "irradiance.klucher")
def _():
    irradiance = _imp("pvlib.irradiance")
    return (lambda v: irradiance.klucher(30.0, 180.0, v[0], v[1], v[2], 160.0)), np.array([100.0, 700.0, 40.0])


@case("pvlib", "irradiance.get_extra_radiation (day of year)")
def _():
    irradiance = _imp("pvlib.irradiance")
    return (lambda doy: irradiance.get_extra_radiation(doy)), 150.0

# ===============================================================================================
# chemicals: thermodynamic correlations in pure-Python floats (and a Rachford-Rice solver)
# ===============================================================================================

@case("chemicals", "vapor_pressure.Antoine")
def _():
    c = _imp("chemicals")
    return (lambda t: c.Antoine(t, 8.0, 1200.0, -50.0)), 340.0


@case("chemicals", "vapor_pressure.Wagner_original")
def _():
    c = _imp("chemicals")
    return (lambda t: c.vapor_pressure.Wagner_original(t, 513.92, 6137000.0, -8.51838, 0.34163, -5.73683,
                                                       8.32581)), 300.0


@case("chemicals", "heat_capacity.Lastovka_Shaw")
def _():
    c = _imp("chemicals")
    return (lambda v: c.Lastovka_Shaw(v[0], v[1])), np.array([1000.0, 0.1333])


@case("chemicals", "volume.COSTALD")
def _():
    c = _imp("chemicals")
    return (lambda v: 1e5 * c.COSTALD(v[0], 647.14, 55.95e-6, v[1])), np.array([298.0, 0.3449])


@case("chemicals", "volume.Rackett")
def _():
    c = _imp("chemicals")
    return (lambda t: 1e5 * c.Rackett(t, 369.83, 4248000.0, 0.2763)), 272.0


@case("chemicals", "viscosity.Lucas")
def _():
    c = _imp("chemicals")
    return (lambda v: 1e3 * c.Lucas(v[0], v[1], 572.2, 34.7e5, 0.236, 0, 0.00068)), np.array([300.0, 500e5])


@case("chemicals", "virial.BVirial_Pitzer_Curl")
def _():
    c = _imp("chemicals")
    return (lambda t: 1e4 * c.BVirial_Pitzer_Curl(t, 425.2, 38e5, 0.193)), 510.0


@case("chemicals", "rachford_rice.Rachford_Rice_solution (Ks)", rtol=1e-4)  # (FD through a Newton tolerance;
# fluids' secant stops where the residual is exactly 0.0, `if q1 == 0.0: return p1`, its tangent there
# rounding's residue: differentiated, to 1e-8 of the implicit function's derivative)
def _():
    c = _imp("chemicals")

    def f(ks):
        vf, xs, ys = c.Rachford_Rice_solution([0.5, 0.3, 0.2], list(ks))
        return np.array([vf] + list(xs))
    return f, np.array([1.685, 0.742, 0.532])


@case("chemicals", "iapws.iapws97_rho (T, P)")
def _():
    c = _imp("chemicals")
    return (lambda v: c.iapws.iapws97_rho(v[0], v[1] * 1e6)), np.array([330.0, 0.8])


@case("chemicals", "iapws.iapws95_rho (T, P)", rtol=1e-4)  # (FD through a Newton tolerance)
def _():
    c = _imp("chemicals")
    return (lambda v: c.iapws.iapws95_rho(v[0], v[1] * 1e6)), np.array([330.0, 0.8])  # (P in MPa: FD's step)



@case("chemicals", "flash_basic.flash_wilson vapour fraction (T, P)", rtol=1e-4)  # (FD through a Newton tolerance)
def _():
    c = _imp("chemicals")
    return (lambda v: c.flash_basic.flash_wilson(zs=[0.4, 0.6], Tcs=[369.83, 425.12], Pcs=[4248000.0, 3796000.0],
                                                 omegas=[0.152, 0.193], T=v[0], P=v[1] * 1e6)[2]), \
        np.array([330.0, 1.0])


@case("chemicals", "viscosity.Brokaw (mixture, lists)")
def _():
    c = _imp("chemicals")
    return (lambda v: 1e6 * c.viscosity.Brokaw(v[0], [v[1], 1.0 - v[1]], [1.34e-5, 9.5029e-6], [64.06, 46.07],
                                               [0.42, 0.19], [347, 432])), np.array([308.2, 0.05])


@case("chemicals", "utils.ws_to_zs (mass to mole fractions)")
def _():
    c = _imp("chemicals")
    return (lambda w: np.array(c.utils.ws_to_zs(list(w), [10.0, 20.0, 30.0]))), np.array([0.5, 0.3, 0.2])


@case("chemicals", "volume.Yen_Woods_saturation")
def _():
    c = _imp("chemicals")
    return (lambda t: 1e5 * c.volume.Yen_Woods_saturation(t, 647.14, 55.45e-6, 0.245)), 300.0

# ===============================================================================================
# ht: heat-transfer correlations (pure-Python floats, branches on subtype strings)
# ===============================================================================================

@case("ht", "conv_internal.Nu_conv_internal (Re, Pr)")
def _():
    ht = _imp("ht")
    return (lambda v: ht.conv_internal.Nu_conv_internal(v[0], v[1])), np.array([1e5, 0.7])


@case("ht", "conv_internal.turbulent_Gnielinski")
def _():
    ht = _imp("ht")
    return (lambda v: ht.conv_internal.turbulent_Gnielinski(v[0], v[1], 0.0185)), np.array([1e5, 0.7])


@case("ht", "conv_external.Nu_cylinder_Churchill_Bernstein")
def _():
    ht = _imp("ht")
    return (lambda v: ht.conv_external.Nu_cylinder_Churchill_Bernstein(v[0], v[1])), np.array([6071.0, 0.7])


@case("ht", "hx.effectiveness_from_NTU counterflow")
def _():
    ht = _imp("ht")
    return (lambda v: ht.hx.effectiveness_from_NTU(v[0], v[1], "counterflow")), np.array([2.0, 0.7])


@case("ht", "hx.effectiveness_from_NTU S&T (2 shells)")
def _():
    ht = _imp("ht")
    return (lambda v: ht.hx.effectiveness_from_NTU(v[0], v[1], "S&T", n_shell_tube=2)), np.array([2.0, 0.7])


@case("ht", "hx.NTU_from_effectiveness crossflow (solver)")
def _():
    ht = _imp("ht")
    return (lambda v: ht.hx.NTU_from_effectiveness(v[0], v[1], "crossflow")), np.array([0.7, 0.7])


@case("ht", "hx.F_LMTD_Fakheri")
def _():
    ht = _imp("ht")
    return (lambda v: ht.hx.F_LMTD_Fakheri(Thi=v[0], Tho=60.0, Tci=20.0, Tco=v[1], shells=1)), np.array([100.0, 40.0])


@case("ht", "radiation.blackbody_spectral_radiance")
def _():
    ht = _imp("ht")
    return (lambda t: ht.radiation.blackbody_spectral_radiance(t, 4e-6) / 1e9), 800.0


@case("ht", "conv_free_immersed.Nu_vertical_plate_Churchill")
def _():
    ht = _imp("ht")
    return (lambda v: ht.conv_free_immersed.Nu_vertical_plate_Churchill(v[0], v[1] * 1e9)), np.array([0.69, 2.63])


@case("ht", "boiling_nucleic.Rohsenow (Te)")
def _():
    ht = _imp("ht")
    return (lambda te: ht.boiling_nucleic.Rohsenow(rhol=957.854, rhog=0.595593, mul=2.79e-4, kl=0.680, Cpl=4217.0,
                                                   Hvap=2.257e6, sigma=0.0589, Te=te, Csf=0.011, n=1.26)), 4.9



@case("ht", "hx.P_NTU_method outlet temperature (dict, branches)")
def _():
    ht = _imp("ht")
    return (lambda v: ht.hx.P_NTU_method(m1=v[0], m2=1.45, Cp1=1860.0, Cp2=1900.0, subtype="E", T2i=15.0,
                                         T1i=v[1], UA=5400.0, Ntp=1)["T1o"]), np.array([5.2, 130.0])


@case("ht", "conv_internal.Nu_conv_internal laminar, developing (Re, x)")
def _():
    ht = _imp("ht")
    return (lambda v: ht.conv_internal.Nu_conv_internal(v[0], 0.7, Di=0.05, x=v[1])), np.array([1500.0, 1.0])


@case("ht", "radiation.q_rad")
def _():
    ht = _imp("ht")
    return (lambda v: ht.radiation.q_rad(v[0], v[1], 300.0)), np.array([0.85, 400.0])

# ===============================================================================================
# colorspacious: colour-space conversions (a graph of conversions, CIECAM02 objects)
# ===============================================================================================

@case("colorspacious", "cspace_convert sRGB1 -> CIELab")
def _():
    cs = _imp("colorspacious")
    return (lambda rgb: cs.cspace_convert(rgb, "sRGB1", "CIELab")), np.array([0.3, 0.5, 0.7])


@case("colorspacious", "cspace_convert sRGB1 -> CAM02-UCS")
def _():
    cs = _imp("colorspacious")
    return (lambda rgb: cs.cspace_convert(rgb, "sRGB1", "CAM02-UCS")), np.array([0.3, 0.5, 0.7])


@case("colorspacious", "deltaE (CAM02-UCS)")
def _():
    cs = _imp("colorspacious")
    return (lambda rgb: cs.deltaE(rgb, [0.35, 0.45, 0.7])), np.array([0.3, 0.5, 0.7])


@case("colorspacious", "cspace_convert sRGB1+CVD deuteranomaly")
def _():
    cs = _imp("colorspacious")
    cvd = {"name": "sRGB1+CVD", "cvd_type": "deuteranomaly", "severity": 50}
    return (lambda rgb: cs.cspace_convert(rgb, cvd, "sRGB1")), np.array([0.3, 0.5, 0.7])


@case("colorspacious", "cspace_convert JCh -> sRGB1")
def _():
    cs = _imp("colorspacious")
    return (lambda jch: cs.cspace_convert(jch, "JCh", "sRGB1")), np.array([50.0, 20.0, 30.0])


@case("colorspacious", "cspace_convert sRGB1 -> CIELCh")
def _():
    cs = _imp("colorspacious")
    return (lambda rgb: cs.cspace_convert(rgb, "sRGB1", "CIELCh")), np.array([0.3, 0.5, 0.7])


# ===============================================================================================
# scikit-fuzzy: membership functions, defuzzification, fuzzy c-means
# ===============================================================================================

_FUZZ_X = np.linspace(0.0, 10.0, 11)


@case("skfuzzy", "membership.gaussmf (mean, sigma)", dist="scikit-fuzzy")
def _():
    fuzz = _imp("skfuzzy")
    return (lambda p: fuzz.gaussmf(_FUZZ_X, p[0], p[1])), np.array([5.0, 2.0])


@case("skfuzzy", "membership.trimf (abc)", dist="scikit-fuzzy")
def _():
    fuzz = _imp("skfuzzy")
    return (lambda abc: fuzz.trimf(_FUZZ_X + 0.5, abc)), np.array([2.0, 5.0, 8.0])


@case("skfuzzy", "membership.gbellmf", dist="scikit-fuzzy")
def _():
    fuzz = _imp("skfuzzy")
    return (lambda p: fuzz.gbellmf(_FUZZ_X, p[0], p[1], p[2])), np.array([2.0, 3.0, 5.0])


@case("skfuzzy", "membership.pimf", dist="scikit-fuzzy")
def _():
    fuzz = _imp("skfuzzy")
    return (lambda p: fuzz.pimf(_FUZZ_X + 0.5, p[0], p[1], p[2], p[3])), np.array([1.0, 3.0, 6.0, 9.25])


@case("skfuzzy", "defuzz centroid", dist="scikit-fuzzy")
def _():
    fuzz = _imp("skfuzzy")
    return (lambda m: fuzz.defuzz(_FUZZ_X, fuzz.gaussmf(_FUZZ_X, m, 2.0), "centroid")), 4.3


@case("skfuzzy", "defuzz bisector", dist="scikit-fuzzy")
def _():
    fuzz = _imp("skfuzzy")
    return (lambda m: fuzz.defuzz(_FUZZ_X, fuzz.gaussmf(_FUZZ_X, m, 2.0), "bisector")), 4.3


@case("skfuzzy", "interp_membership", dist="scikit-fuzzy")
def _():
    fuzz = _imp("skfuzzy")
    return (lambda v: fuzz.interp_membership(_FUZZ_X, fuzz.trimf(_FUZZ_X, [2.0, 5.0, 8.0]), v)), 4.3


@case("skfuzzy", "cluster.cmeans objective (data)", dist="scikit-fuzzy")
def _():
    fuzz = _imp("skfuzzy")
    base = np.random.default_rng(0).normal(size=(2, 12))

    def f(shift):
        data = base + np.array([[shift], [0.0]])
        cntr, u, u0, d, jm, p, fpc = fuzz.cluster.cmeans(data, 2, 2.0, error=1e-12, maxiter=200, seed=1)
        return jm[-1]
    return f, 0.4


# ===============================================================================================
# KDEpy: kernel density estimation (FFTKDE bins the data on its grid in Cython: `contexts.rules.kdepy`)
# ===============================================================================================

_KDE_DATA = np.random.default_rng(3).normal(size=25)
_KDE_GRID = np.linspace(-6.0, 6.0, 48)  # (no data point within 2e-3 of a grid point: the differences' steps
_KDE_W = np.random.default_rng(4).random(48)  # stay on one piece of the piecewise linear binning)


@case("KDEpy", "FFTKDE density (data)")
def _():
    kde = _imp("KDEpy")
    return (lambda d: np.sum(_KDE_W * kde.FFTKDE(bw=0.6).fit(d).evaluate(_KDE_GRID))), _KDE_DATA.copy()


@case("KDEpy", "FFTKDE density (weights)")
def _():
    kde = _imp("KDEpy")
    return (lambda w: np.sum(_KDE_W * kde.FFTKDE(bw=0.6).fit(_KDE_DATA, weights=w).evaluate(_KDE_GRID))), \
        np.linspace(0.5, 1.5, 25)


@case("KDEpy", "NaiveKDE density (data)")
def _():
    kde = _imp("KDEpy")
    return (lambda d: np.sum(_KDE_W * kde.NaiveKDE(kernel="epa", bw=0.8).fit(d).evaluate(_KDE_GRID))), \
        _KDE_DATA[:10].copy()


@case("KDEpy", "TreeKDE density (data)")
def _():
    kde = _imp("KDEpy")
    return (lambda d: np.sum(_KDE_W * kde.TreeKDE(bw=0.6).fit(d).evaluate(_KDE_GRID))), _KDE_DATA[:10].copy()


# ===============================================================================================
# pykalman: Kalman filter and smoother; missing observations as numpy.ma masked entries
# ===============================================================================================

_KF_OBS = np.array([0.3, 1.1, 0.4, 1.9, 2.2, 1.7])
_KF_W = np.linspace(-1.0, 1.0, 6)


def _kf(q, r=0.3):
    pk = _imp("pykalman")
    return pk.KalmanFilter(transition_matrices=[[1.0]], observation_matrices=[[1.0]], transition_covariance=[[q]],
                           observation_covariance=[[r]], initial_state_mean=[0.0], initial_state_covariance=[[1.0]])


@case("pykalman", "KalmanFilter.loglikelihood (noise variances)")
def _():
    return (lambda v: float(_kf(v[0], v[1]).loglikelihood(_KF_OBS))), np.array([0.5, 0.3])


_KF_MASKED_DUALS = R("DualAttributeError", "pykalman wraps the observations in np.ma.asarray: a dual holds no "
                     "masked array's fields (jvp; jacfwd answers by reverse mode)")


@case("pykalman", "KalmanFilter.filter (observations)", forward=_KF_MASKED_DUALS)
def _():
    return (lambda obs: float(_kf(0.5).filter(obs)[0][:, 0] @ _KF_W)), _KF_OBS.copy()


@case("pykalman", "KalmanFilter.smooth (observations, two missing)", forward=_KF_MASKED_DUALS)
def _():
    mask = np.array([0, 1, 0, 0, 1, 0], bool)
    return (lambda obs: float(_kf(0.5).smooth(np.ma.array(obs, mask=mask))[0][:, 0] @ _KF_W)), _KF_OBS.copy()


@case("pykalman", "KalmanFilter.filter (noise variance, one missing)")
def _():
    obs = np.ma.array(_KF_OBS, mask=[0, 0, 1, 0, 0, 0])
    return (lambda q: float(_kf(q).filter(obs)[1][:, 0, 0] @ _KF_W)), 0.5


# ===============================================================================================
# transformations: homogeneous transforms and quaternions (C functions: `contexts.rules.transformations`)
# ===============================================================================================

_TR_W = np.random.default_rng(5).normal(size=(4, 4))


@case("transformations", "quaternion_matrix")
def _():
    tr = _imp("transformations")
    return (lambda q: np.sum(_TR_W * tr.quaternion_matrix(q))), np.array([0.4, -0.3, 0.8, 0.2])


@case("transformations", "euler_matrix -> quaternion_from_matrix",
      forward=R("MissingRule", "np.linalg.eigh of the quaternion's 4x4 matrix, whose other three eigenvalues repeat: "
                                "forward mode's rule refuses (reverse mode's pullback reads only the largest one's vector)"))
def _():
    tr = _imp("transformations")
    return (lambda a: np.sum(tr.quaternion_from_matrix(tr.euler_matrix(a[0], a[1], a[2], "rzyx")) * _TR_W[0])), \
        np.array([0.3, -0.4, 1.2])


# ===============================================================================================
# pygeodesy: geodesy in pure Python (LatLon objects, error-free summation Fsum, iterative Vincenty)
# ===============================================================================================

@case("pygeodesy", "ellipsoidalVincenty.LatLon.distanceTo (km)",
      reverse=R('EagerIterationError', 'Fsum._facc_dot: a generator expression yielding one Fsum reset per item (reverse mode runs generators eagerly; differentiated as written it gave fpolynomial\'s derivative 2x)'))
def _():
    vincenty = _imp("pygeodesy.ellipsoidalVincenty")
    return (lambda p: vincenty.LatLon(p[0], p[1]).distanceTo(vincenty.LatLon(48.85, 2.35)) / 1e3), \
        np.array([52.2, 0.12])


@case("pygeodesy", "ellipsoidalVincenty.LatLon.initialBearingTo",
      reverse=R('EagerIterationError', 'Fsum._facc_dot: a generator expression yielding one Fsum reset per item (reverse mode runs generators eagerly; differentiated as written it gave fpolynomial\'s derivative 2x)'))
def _():
    vincenty = _imp("pygeodesy.ellipsoidalVincenty")
    return (lambda p: vincenty.LatLon(52.2, 0.12).initialBearingTo(vincenty.LatLon(p[0], p[1]))), \
        np.array([48.85, 2.35])


@case("pygeodesy", "sphericalTrigonometry.LatLon.distanceTo (km)",
      reverse=R('UnsupportedFunction', 'the __dict__ of a PhiLam2Tuple (a tuple subclass, not weakly referenceable) its name setter writes'))
def _():
    trig = _imp("pygeodesy.sphericalTrigonometry")
    return (lambda p: trig.LatLon(p[0], p[1]).distanceTo(trig.LatLon(48.85, 2.35)) / 1e3), np.array([52.2, 0.12])


@case("pygeodesy", "formy.haversine / vincentys / equirectangular")
def _():
    pg = _imp("pygeodesy")
    return (lambda p: np.array([pg.haversine(p[0], p[1], 48.85, 2.35), pg.vincentys(p[0], p[1], 48.85, 2.35),
                                pg.equirectangular(p[0], p[1], 48.85, 2.35)]) / 1e3), np.array([52.2, 0.12])


@case("pygeodesy", "utm.toUtm8 easting/northing (km)",
      reverse=R('EagerIterationError', 'Fsum._facc_dot: a generator expression yielding one Fsum reset per item (reverse mode runs generators eagerly; differentiated as written it gave fpolynomial\'s derivative 2x)'))
def _():
    pg = _imp("pygeodesy")

    def f(p):
        u = pg.toUtm8(p[0], p[1])
        return np.array([u.easting, u.northing]) / 1e3
    return f, np.array([52.2, 0.12])


@case("pygeodesy", "ecef.EcefKarney.forward (km)",
      reverse=R('UnsupportedFunction', 'the __dict__ of a Ecef9Tuple (a tuple subclass, not weakly referenceable) its name setter writes'))
def _():
    pg = _imp("pygeodesy")
    ecef = _imp("pygeodesy.ecef")
    e = ecef.EcefKarney(pg.Datums.WGS84)

    def f(p):
        r = e.forward(p[0], p[1], p[2] * 1e3)
        return np.array([r.x, r.y, r.z]) / 1e3
    return f, np.array([52.2, 0.12, 0.1])


@case("pygeodesy", "fmath.fpolynomial (Fsum)",
      reverse=R('EagerIterationError', 'Fsum._facc_dot: a generator expression yielding one Fsum reset per item (reverse mode runs generators eagerly; differentiated as written it gave fpolynomial\'s derivative 2x)'))
def _():
    pg = _imp("pygeodesy")
    return (lambda x: pg.fpolynomial(x, 1.0, 2.0, 3.0, -0.5)), 0.7


@case("pygeodesy", "fsums.Fsum of terms")
def _():
    fsums = _imp("pygeodesy.fsums")
    return (lambda v: fsums.Fsum(*(v * v)).fsum()), np.array([1.0, 2.5, 3.0, 1e-3])


@case("pygeodesy", "Ellipsoid.Rgeocentric (km)",
      reverse=R('NoRuleError', 'a cotangent into the Ellipsoids registry (a dict subclass\'s C __getitem__)'))
def _():
    pg = _imp("pygeodesy")
    return (lambda lat: pg.Ellipsoids.WGS84.Rgeocentric(lat) / 1e3), 45.0


# ===============================================================================================
# statsmodels: robust norms and scales, time-series filters (numpy pieces)
# ===============================================================================================

_SM_X = np.array([-2.5, -0.7, 0.3, 1.2, 3.1])


@case("statsmodels", "robust.norms.HuberT.rho (array)")
def _():
    norms = _imp("statsmodels.robust.norms")
    return (lambda z: norms.HuberT(1.345).rho(z)), _SM_X.copy()


@case("statsmodels", "robust.norms.TukeyBiweight.weights")
def _():
    norms = _imp("statsmodels.robust.norms")
    return (lambda z: norms.TukeyBiweight().weights(z)), _SM_X.copy()


@case("statsmodels", "robust.norms.Hampel.psi")
def _():
    norms = _imp("statsmodels.robust.norms")
    return (lambda z: norms.Hampel().psi(z)), _SM_X.copy()


@case("statsmodels", "robust.scale.mad")
def _():
    scale = _imp("statsmodels.robust.scale")
    return (lambda z: scale.mad(z)), _SM_X.copy()


@case("statsmodels", "robust.scale.huber (joint location and scale)")
def _():
    scale = _imp("statsmodels.robust.scale")
    return (lambda z: np.array(scale.huber(z), dtype=float)), np.array([0.3, 1.2, -0.7, 2.2, 0.1, -1.5, 0.9])


_SM_Y = np.sin(np.linspace(0.0, 6.0, 16)) + np.linspace(0.0, 1.0, 16)


@case("statsmodels", "tsa.filters.hpfilter trend",
      reverse=R('OverdubError', 'runs _spbase.__add__ natively'),
      forward=R('OverdubError', 'np.add(..., out=) into an array without a tangent'))
def _():
    hp = _imp("statsmodels.tsa.filters.hp_filter")
    return (lambda y: hp.hpfilter(y, 100)[1]), _SM_Y.copy()


@case("statsmodels", "tsa.filters.bkfilter")
def _():
    bk = _imp("statsmodels.tsa.filters.bk_filter")
    return (lambda y: bk.bkfilter(y, 6, 32, 3)), _SM_Y.copy()


@case("statsmodels", "tsa.arima_process.arma_acf (coefficients)")
def _():
    ap = _imp("statsmodels.tsa.arima_process")
    return (lambda c: ap.arma_acf(np.array([1.0, -c[0]]), np.array([1.0, c[1]]), 5)), np.array([0.5, 0.3])


@case("statsmodels", "tsa.stattools.acf")
def _():
    st = _imp("statsmodels.tsa.stattools")
    return (lambda y: st.acf(y, nlags=3)), _SM_Y.copy()


@case("statsmodels", "stats.weightstats.DescrStatsW std")
def _():
    ws = _imp("statsmodels.stats.weightstats")
    return (lambda y: ws.DescrStatsW(y, weights=[1.0, 2.0, 3.0, 2.0, 1.0]).std), _SM_Y[:5].copy()



def _sm_design():
    rng = np.random.default_rng(0)
    X = np.column_stack([np.ones(20), rng.normal(size=(20, 2))])
    return X, X @ np.array([1.0, 2.0, -1.0]) + rng.normal(size=20) * 0.3


@case("statsmodels", "regression.OLS fit params (y)")
def _():
    sm = _imp("statsmodels.api")
    X, y = _sm_design()
    return (lambda yy: sm.OLS(yy, X).fit().params), y


@case("statsmodels", "robust.RLM HuberT fit params (IRLS, y)", rtol=1e-4)
def _():
    sm = _imp("statsmodels.api")
    X, y = _sm_design()
    return (lambda yy: sm.RLM(yy, X, M=sm.robust.norms.HuberT()).fit().params), y


@case("statsmodels", "tsa.filters.cffilter cycle")
def _():
    cf = _imp("statsmodels.tsa.filters.cf_filter")
    return (lambda y: cf.cffilter(y)[0]), _SM_Y.copy()


@case("statsmodels", "tsa.arima_process.arma2ma (coefficients)")
def _():
    ap = _imp("statsmodels.tsa.arima_process")
    return (lambda c: ap.arma2ma(np.array([1.0, -c[0]]), np.array([1.0, c[1]]), 5)), np.array([0.5, 0.3])

# ===============================================================================================
# psypy: psychrometric states by bisections on a module-level tolerance (5e-4 K), signs compared as booleans
# ===============================================================================================

def _psypy_tightly(f):
    """f with psypy's bisections run to 1e-12 K (its tolerance, 5e-4 K, makes each state a staircase)."""
    def tight(p):
        si = _imp("psypy.psySI")
        held = si.TOL
        si.TOL = 1e-12
        try:
            return f(p)
        finally:
            si.TOL = held
    return tight


def _psypy_state(first, second):
    def state(p):
        return np.array(_imp("psypy.psySI").state(first, p[0], second, p[1], 101325.0), dtype=float)
    state.__name__ = f"state_{first}_{second}"
    return state


for _first, _second, _x, _rtol in (("DBT", "RH", (300.0, 0.5), 1e-5), ("WBT", "W", (290.0, 0.01), 1e-4),
                                   ("V", "RH", (0.87, 0.5), 1e-4), ("H", "RH", (60.0, 0.5), 1e-3)):
    # (the states computed from a root found to 5e-4 K carry its error: up to 1.6e-4 of the wet bulb's
    # derivative where a second bisection starts from the first's dry bulb)
    case("psypy", f"psySI.state({_first}, {_second}) (bisections, signs compared)", rtol=_rtol, dist="psypy",
         reference=lambda f=_psypy_state(_first, _second): _psypy_tightly(f))(
        lambda f=_psypy_state(_first, _second), x=np.array(_x): (f, x))


# ===============================================================================================
# psychrolib: psychrometrics, a module-level unit system, Newton and bisection loops on floats
# ===============================================================================================

def _psy():
    psy = _imp("psychrolib")
    psy.SetUnitSystem(psy.SI)
    return psy


@case("psychrolib", "GetSatVapPres (T)")
def _():
    psy = _psy()
    return (lambda t: psy.GetSatVapPres(t)), 23.5


@case("psychrolib", "GetHumRatioFromRelHum + GetMoistAirDensity")
def _():
    psy = _psy()

    def f(p):
        w = psy.GetHumRatioFromRelHum(p[0], p[1], 101325.0)
        return psy.GetMoistAirDensity(p[0], w, 101325.0)
    return f, np.array([24.0, 0.55])


@case("psychrolib", "GetTDewPointFromRelHum (Newton loop)")
def _():
    psy = _psy()
    return (lambda p: psy.GetTDewPointFromRelHum(p[0], p[1])), np.array([26.0, 0.6])


def _tightly(f):
    """f with psychrolib's solvers run to full precision (its tolerance, 0.001 degrees, makes the wet-bulb
    temperature a staircase: differences of it are not the root's derivative). The differences' reference:
    the root found to 1e-12 by bisection in a bracket psychrolib's own code narrows."""
    def tight(p):
        psy = _imp("psychrolib")
        held = psy.PSYCHROLIB_TOLERANCE
        # (with numba installed psychrolib's functions are @vectorize ones, the tolerance compiled in: their
        # Python functions, which read it, for the reference)
        compiled = {name: getattr(psy, name) for name, _ in getattr(psy, "func_list", ())}
        for name, py in getattr(psy, "func_list", ()):
            setattr(psy, name, py)
        psy.PSYCHROLIB_TOLERANCE = 1e-12
        try:
            return f(p)
        finally:
            psy.PSYCHROLIB_TOLERANCE = held
            for name, fn in compiled.items():
                setattr(psy, name, fn)
    return tight


def _wet_bulb(p):
    return _imp("psychrolib").GetTWetBulbFromRelHum(p[0], p[1], 101325.0)  # (SI: build() set it)


@case("psychrolib", "GetTWetBulbFromRelHum (bisection loop)", reference=lambda: _tightly(_wet_bulb))
def _():
    _psy()
    return _wet_bulb, np.array([26.0, 0.6])


def _psychrometrics(p):
    out = _imp("psychrolib").CalcPsychrometricsFromRelHum(p[0], p[1], 101325.0)
    return np.array([out[0], out[1], out[2], out[4], out[5], out[6]])


@case("psychrolib", "CalcPsychrometricsFromRelHum (tuple, the wet bulb's root)",
      reference=lambda: _tightly(_psychrometrics))
def _():
    _psy()
    return _psychrometrics, np.array([21.0, 0.45])


# ===============================================================================================
# iapws: steam tables, region functions returning dicts, classes computing properties in __init__
# ===============================================================================================

@case("iapws", "iapws97._Region1 (dict: h, s, cp)")
def _():
    r97 = _imp("iapws.iapws97")

    def f(p):
        d = r97._Region1(p[0], p[1])
        return np.array([d["h"], d["s"], d["cp"]])
    return f, np.array([350.0, 3.0])


@case("iapws", "iapws97._TSat_P / _PSat_T")
def _():
    r97 = _imp("iapws.iapws97")
    return (lambda p: r97._TSat_P(p) + 100.0 * r97._PSat_T(0.9 * r97._TSat_P(p))), 1.5


@case("iapws", "IAPWS97(T=, P=).cp (class)")
def _():
    iapws = _imp("iapws")
    return (lambda p: iapws.IAPWS97(T=p[0], P=p[1]).cp), np.array([500.0, 1.0])


@case("iapws", "_iapws._Viscosity / _ThCond (rho, T)")
def _():
    ia = _imp("iapws._iapws")
    return (lambda p: ia._Viscosity(p[0], p[1]) * 1e3 + ia._ThCond(p[0], p[1])), np.array([990.0, 320.0])


@case("iapws", "_iapws._Tension (T)")
def _():
    ia = _imp("iapws._iapws")
    return (lambda t: ia._Tension(t)), 330.0


@case("iapws", "IAPWS95(T=, rho=).P (Helmholtz class, fsolve inside)", rtol=1e-4)
def _():
    iapws = _imp("iapws")
    return (lambda p: iapws.IAPWS95(T=p[0], rho=p[1]).P), np.array([400.0, 900.0])


# ===============================================================================================
# haversine: great-circle distances, enums for units, tuples of points, numpy vector forms
# ===============================================================================================

@case("haversine", "haversine (km)")
def _():
    hv = _imp("haversine")
    return (lambda p: hv.haversine((p[0], p[1]), (p[2], p[3]))), np.array([45.7597, 4.8422, 48.8567, 2.3508])


@case("haversine", "haversine (Unit.MILES)")
def _():
    hv = _imp("haversine")
    return (lambda p: hv.haversine((p[0], p[1]), (p[2], p[3]), unit=hv.Unit.MILES)), np.array([40.7, -74.0, 51.5, -0.12])


@case("haversine", "haversine_vector (arrays)")
def _():
    hv = _imp("haversine")

    def f(p):
        pts = p.reshape(2, 2, 2)
        return hv.haversine_vector(pts[0], pts[1])
    return f, np.array([45.7597, 4.8422, 40.7, -74.0, 48.8567, 2.3508, 51.5, -0.12])


@case("haversine", "inverse_haversine (point, distance)")
def _():
    hv = _imp("haversine")
    return (lambda p: np.array(hv.inverse_haversine((p[0], p[1]), p[2], hv.Direction.NORTHEAST))), np.array([36.1, -115.2, 120.0])


# ===============================================================================================
# mibian: option pricing classes (float() of the inputs, scipy.stats.norm.cdf, attribute tables)
# ===============================================================================================

@case("mibian", "BS(...).callPrice (spot, volatility)")
def _():
    mibian = _imp("mibian")
    return (lambda p: mibian.BS([p[0], 105.0, 1.5, 30], volatility=p[1]).callPrice), np.array([100.0, 22.0])


@case("mibian", "BS(...).putDelta / vega")
def _():
    mibian = _imp("mibian")

    def f(p):
        bs = mibian.BS([p[0], p[1], 2.0, 60], volatility=25.0)
        return np.array([bs.putDelta, bs.vega, bs.gamma])
    return f, np.array([98.0, 100.0])


@case("mibian", "GK(...).callPrice (Garman-Kohlhagen)")
def _():
    mibian = _imp("mibian")
    return (lambda p: mibian.GK([p[0], 1.2, 1.0, 0.5, 90], volatility=p[1]).callPrice), np.array([1.25, 12.0])


@case("mibian", "Me(...).callPrice (Merton, dividend)")
def _():
    mibian = _imp("mibian")
    return (lambda p: mibian.Me([p[0], 50.0, 1.0, p[1], 45], volatility=30.0).callPrice), np.array([52.0, 2.0])


# ===============================================================================================
# control (python-control): transfer functions and state space, frequency and time responses
# ===============================================================================================

@case("control", "tf evalfr |G(2j)| (denominator)")
def _():
    ct = _imp("control")
    return (lambda p: abs(ct.evalfr(ct.tf([1.0], [1.0, p[0], p[1]]), 2j))), np.array([0.7, 3.0])


@case("control", "ss dcgain (A, B entries)")
def _():
    ct = _imp("control")

    def f(p):
        A = np.array([[-p[0], 1.0], [0.0, -p[1]]])
        return float(np.squeeze(ct.dcgain(ct.ss(A, [[0.0], [1.0]], [[1.0, 0.0]], [[0.0]]))))
    return f, np.array([1.5, 2.0])


@case("control", "frequency_response magnitude (tf)",
      forward=R('OverdubError', 'a view as NamedSignal, an ndarray subclass with indexing of its own (its __getitem__): a dual indexes as numpy does, not as its code'))
def _():
    ct = _imp("control")

    def f(p):
        resp = ct.frequency_response(ct.tf([p[0]], [1.0, p[1], 1.0]), np.array([0.5, 1.0, 2.0]))
        return np.asarray(resp.magnitude).ravel()
    return f, np.array([2.0, 0.4])


@case("control", "step_response outputs (ss)",
      forward=R('OverdubError', 'a view as NamedSignal, an ndarray subclass with indexing of its own (its __getitem__): a dual indexes as numpy does, not as its code'))
def _():
    ct = _imp("control")

    def f(p):
        A = np.array([[0.0, 1.0], [-p[0], -p[1]]])
        sys = ct.ss(A, [[0.0], [1.0]], [[1.0, 0.0]], [[0.0]])
        return ct.step_response(sys, np.linspace(0.0, 2.0, 5)).outputs
    return f, np.array([4.0, 1.2])


@case("control", "poles of feedback (tf)")
def _():
    ct = _imp("control")

    def f(k):  # (k an array of one: tf() refuses the 0-d arrays finite differences would pass)
        return np.sort(np.real(ct.poles(ct.feedback(ct.tf([k[0]], [1.0, 3.0, 0.0]), 1))))
    return f, np.array([1.5])


# ===============================================================================================
# nvector: geodesy on n-vectors (numpy arrays, ellipsoid constants, rotation matrices)
# ===============================================================================================

@case("nvector", "lat_lon2n_E (radians)")
def _():
    nv = _imp("nvector")
    return (lambda p: nv.lat_lon2n_E(p[0], p[1]).ravel()), np.array([0.7, 0.3])


@case("nvector", "great_circle_distance")
def _():
    nv = _imp("nvector")
    return (lambda p: float(np.squeeze(nv.great_circle_distance(nv.lat_lon2n_E(p[0], p[1]),
                                                                 nv.lat_lon2n_E(p[2], p[3]))))), np.array([0.7, 0.3, 0.9, -0.2])


@case("nvector", "n_EB_E2p_EB_E (ellipsoid, depth)")
def _():
    nv = _imp("nvector")
    return (lambda p: nv.n_EB_E2p_EB_E(nv.lat_lon2n_E(p[0], p[1]), depth=p[2]).ravel() / 1e6), np.array([0.5, 1.1, -300.0])


@case("nvector", "n_E2lat_lon round trip of p_EB_E2n_EB_E")
def _():
    nv = _imp("nvector")

    def f(q):  # (q in 1000 km: steps of metres would leave finite differences to round-off)
        n_EB_E, depth = nv.p_EB_E2n_EB_E(1e6 * q.reshape(3, 1))
        lat, lon = nv.n_E2lat_lon(n_EB_E)
        return np.concatenate([np.ravel(lat), np.ravel(lon), np.ravel(depth) / 1e3])
    return f, np.array([4.0, 1.5, 4.6])


@case("nvector", "n_EA_E_and_n_EB_E2azimuth")
def _():
    nv = _imp("nvector")
    return (lambda p: float(np.squeeze(nv.n_EA_E_and_n_EB_E2azimuth(nv.lat_lon2n_E(p[0], p[1]),
                                                                      nv.lat_lon2n_E(p[2], p[3]))))), np.array([0.7, 0.3, 0.9, -0.2])


# ===============================================================================================
# utm: WGS84 <-> UTM conversions in pure Python (floats, or numpy arrays of points)
# ===============================================================================================

@case("utm", "from_latlon easting/northing (km)")
def _():
    utm = _imp("utm")
    return (lambda p: np.array(utm.from_latlon(p[0], p[1])[:2]) / 1e3), np.array([51.2, 7.5])


@case("utm", "to_latlon (km)")
def _():
    utm = _imp("utm")
    return (lambda q: np.array(utm.to_latlon(q[0] * 1e3, q[1] * 1e3, 32, "U"))), np.array([395.2, 5673.1])


@case("utm", "from_latlon (arrays of points, zone forced)")
def _():
    utm = _imp("utm")
    return (lambda p: np.concatenate(utm.from_latlon(p[:2], p[2:], 32, "U")[:2]) / 1e3), \
        np.array([51.2, 51.3, 7.5, 7.7])


@case("utm", "to_latlon (southern, strict=False)")
def _():
    utm = _imp("utm")
    return (lambda q: np.array(utm.to_latlon(q[0] * 1e3, q[1] * 1e3, 33, northern=False, strict=False))), \
        np.array([500.3, 6100.0])


# ===============================================================================================
# meteocalc: meteorological formulas, a temperature class converting units in properties
# ===============================================================================================

@case("meteocalc", "dew_point")
def _():
    mc = _imp("meteocalc")
    return (lambda p: float(mc.dew_point(p[0], p[1]))), np.array([22.0, 60.0])


@case("meteocalc", "heat_index (Temp in F)")
def _():
    mc = _imp("meteocalc")
    return (lambda p: float(mc.heat_index(mc.Temp(p[0], "f"), p[1]).f)), np.array([92.0, 55.0])


@case("meteocalc", "wind_chill")
def _():
    mc = _imp("meteocalc")
    return (lambda p: float(mc.wind_chill(p[0], p[1]))), np.array([-5.0, 20.0])


@case("meteocalc", "feels_like (cold, wind)")
def _():
    mc = _imp("meteocalc")
    return (lambda p: float(mc.feels_like(mc.Temp(p[0], "c"), 40.0, p[1]).c)), np.array([2.0, 15.0])


@case("meteocalc", "Temp unit conversions (.k, .f)")
def _():
    mc = _imp("meteocalc")
    return (lambda t: mc.Temp(t, "c").k * 2.0 + mc.Temp(t, "c").f), 12.5


# ===============================================================================================
# lmoments3: L-moments and distribution fits by them (numpy, scipy.special, dicts of parameters)
# ===============================================================================================

_LM_DATA = np.array([2.1, 3.5, 1.2, 4.8, 2.9, 3.3, 5.6, 0.9, 2.2, 3.9])


@case("lmoments3", "lmom_ratios")
def _():
    lm = _imp("lmoments3")
    return (lambda d: np.array(lm.lmom_ratios(d, nmom=4))), _LM_DATA.copy()


@case("lmoments3", "distr.gev.lmom_fit")
def _():
    distr = _imp("lmoments3.distr")
    return (lambda d: np.array(list(distr.gev.lmom_fit(d).values()))), _LM_DATA.copy()


@case("lmoments3", "distr.gam.lmom_fit")
def _():
    distr = _imp("lmoments3.distr")
    return (lambda d: np.array(list(distr.gam.lmom_fit(d).values()))), _LM_DATA.copy()


@case("lmoments3", "distr.nor.lmom_fit")
def _():
    distr = _imp("lmoments3.distr")
    return (lambda d: np.array(list(distr.nor.lmom_fit(d).values()))), _LM_DATA.copy()


@case("lmoments3", "distr.gpa.lmom_fit")
def _():
    distr = _imp("lmoments3.distr")
    return (lambda d: np.array(list(distr.gpa.lmom_fit(d).values()))), _LM_DATA.copy()


# ===============================================================================================
# pyorbital: solar astronomy (a datetime turned into numpy datetime64 days, angles in numpy)
# ===============================================================================================

def _pyorbital_time():
    import datetime
    return datetime.datetime(2024, 6, 1, 10, 30)


@case("pyorbital", "astronomy.sun_zenith_angle")
def _():
    astro, t = _imp("pyorbital.astronomy"), _pyorbital_time()
    return (lambda p: astro.sun_zenith_angle(t, p[0], p[1])), np.array([10.5, 48.2])


@case("pyorbital", "astronomy.get_alt_az")
def _():
    astro, t = _imp("pyorbital.astronomy"), _pyorbital_time()
    return (lambda p: np.array(astro.get_alt_az(t, p[0], p[1]))), np.array([10.5, 48.2])


@case("pyorbital", "astronomy.observer_position (tuples, np.ravel)")
def _():
    astro, t = _imp("pyorbital.astronomy"), _pyorbital_time()
    return (lambda p: np.concatenate([np.ravel(v) for v in astro.observer_position(t, p[0], p[1], p[2])])), \
        np.array([10.5, 48.2, 0.3])


@case("pyorbital", "astronomy.sun_azimuth_angle (arrays)")
def _():
    astro, t = _imp("pyorbital.astronomy"), _pyorbital_time()
    return (lambda p: astro.sun_azimuth_angle(t, p[:2], p[2:])), np.array([10.5, 11.0, 48.2, 47.0])


# ===============================================================================================
# channelflowlib: open-channel hydraulics, each unknown found by a stepping search (`while q_trial < q:
# d += 0.00001`), its grid 1e-5 to 1e-4: differenced against the same formulas solved by brentq to 1e-15
# ===============================================================================================

def _brentq(g, lo, hi):
    from scipy.optimize import brentq
    return brentq(g, lo, hi, xtol=1e-15, rtol=1e-15)


def _manning(a, p, n, s):
    """(velocity, flow) of a section of area a and wetted perimeter p (Manning's formula, as the package)."""
    v = (1 / n) * s ** 0.5 * (a / p) ** (2 / 3)
    return v, a * v


def _channel(cls, unknown, setters, out):
    def f(p):
        c = getattr(_imp("channelflowlib.openchannellib"), cls)(unknown=unknown, unit="metric")
        for name, value in zip(setters, p):
            getattr(c, f"set_{name}")(value)
        c.analyze()
        return np.array([getattr(c, o) for o in out])
    return f


def _rectangular_depth(p):
    q, n, s, b = p
    d = _brentq(lambda d: _manning(d * b, b + 2 * d, n, s)[1] - q, 1e-9, 100.0)
    return np.array([d, _manning(d * b, b + 2 * d, n, s)[0]])


@case("channelflowlib", "Rectangular.analyze water depth (stepping search)", dist="channelflowlib", rtol=1e-4,
      reference=lambda: _rectangular_depth)
def _():
    return _channel("Rectangular", "water_depth", ("discharge", "roughness", "channel_slope", "channel_base"),
                    ("water_depth", "velocity")), np.array([0.5, 0.013, 0.001, 2.0])


def _rectangular_base(p):
    q, n, s, d = p
    b = _brentq(lambda b: _manning(b * d, b + 2 * d, n, s)[1] - q, 1e-9, 100.0)
    return np.array([b, _manning(b * d, b + 2 * d, n, s)[0]])


@case("channelflowlib", "Rectangular.analyze channel base (the step under a guard)", dist="channelflowlib",
      rtol=1e-4, reference=lambda: _rectangular_base)
def _():
    return _channel("Rectangular", "channel_base", ("discharge", "roughness", "channel_slope", "water_depth"),
                    ("channel_base", "velocity")), np.array([0.8, 0.013, 0.001, 0.4])


def _trapezoidal_depth(p):
    q, n, s, b, z = p

    def section(d):
        return (b + d * z) * d, 2 * d * (z ** 2 + 1) ** 0.5 + b
    d = _brentq(lambda d: _manning(*section(d), n, s)[1] - q, 1e-9, 100.0)
    return np.array([d, _manning(*section(d), n, s)[0]])


@case("channelflowlib", "Trapezoidal.analyze water depth (stepping search)", dist="channelflowlib", rtol=1e-3,
      reference=lambda: _trapezoidal_depth)
def _():
    return _channel("Trapezoidal", "water_depth",
                    ("discharge", "roughness", "channel_slope", "channel_base", "sideslope"),
                    ("water_depth", "velocity")), np.array([0.5, 0.013, 0.001, 2.0, 1.5])


def _critical_trapezoidal(p):
    q, b, z = p
    g = _imp("channelflowlib.critical_flow").GRAVITY_G
    return _brentq(lambda d: ((b + z * d) * d) ** 3 / (b + 2 * z * d) - q ** 2 / g, 1e-9, 100.0)


@case("channelflowlib", "critical_flow.solve_critical_flow_trapezoidal (dict)", dist="channelflowlib", rtol=1e-4,
      reference=lambda: _critical_trapezoidal)
def _():
    cf = _imp("channelflowlib.critical_flow")
    return (lambda p: cf.solve_critical_flow_trapezoidal(p[0], 0.5, p[1], p[2], 0.013, 1.2, 0.4)["critical_depth"]), \
        np.array([0.5, 2.0, 1.5])


# ===============================================================================================
# ambiance: the ICAO standard atmosphere on arrays, each height's layer found by masks counted into an index
# ===============================================================================================

def _atmosphere(*props):
    def f(h):
        atm = _imp("ambiance").Atmosphere(h)
        return np.concatenate([np.ravel(getattr(atm, p)) for p in props])
    return f


@case("ambiance", "Atmosphere(h): temperature, pressure, density (layers by masks)")
def _():
    return _atmosphere("temperature", "pressure", "density"), np.array([500.0, 12000.0, 30000.0, 52000.0])


@case("ambiance", "Atmosphere(h): speed of sound, viscosity, gravity")
def _():
    return _atmosphere("speed_of_sound", "dynamic_viscosity", "grav_accel"), np.array([3000.0, 25000.0])


@case("ambiance", "Atmosphere.from_pressure (the height inverted)")
def _():
    return (lambda p: float(_imp("ambiance").Atmosphere.from_pressure(p).h[0])), 50000.0


@case("ambiance", "Atmosphere.from_density (the height inverted)")
def _():
    return (lambda d: float(_imp("ambiance").Atmosphere.from_density(d).h[0])), 0.5


# ===============================================================================================
# pyromat: thermodynamic properties, ideal gases by polynomials and their inversions by Newton's method; water's
# inversions by a hybrid Newton-bisection on masks (refused: elementwise brackets)
# ===============================================================================================

def _pyromat(name):
    return _imp("pyromat").get(name)


@case("pyromat", "ig.N2 h(T), s(T, p) (arrays)", dist="PYroMat")
def _():
    return (lambda p: np.concatenate([_pyromat("ig.N2").h(T=p[:2]), _pyromat("ig.N2").s(T=p[:2], p=p[2])])), \
        np.array([400.0, 650.0, 2.0])


@case("pyromat", "ig.N2 T_h (Newton's inversion)", dist="PYroMat")
def _():
    return (lambda h: float(_pyromat("ig.N2").T_h(h=h)[0])), 120.0


@case("pyromat", "ig.N2 T_s(s, p) (Newton's inversion)", dist="PYroMat")
def _():
    return (lambda p: float(_pyromat("ig.N2").T_s(s=p[0], p=p[1])[0])), np.array([7.0, 1.5])


@case("pyromat", "mp.H2O Ts(p) (saturation)", dist="PYroMat")
def _():
    return (lambda p: float(_pyromat("mp.H2O").Ts(p=p)[0])), 5.0


@case("pyromat", "mp.H2O h(T, p) (hybrid Newton-bisection on masks)", dist="PYroMat",
      reverse=R("UnsupportedFunction", "an elementwise bracket (masks) narrowed by Newton steps and bisection"),
      forward=R("BisectionRefused", "an elementwise bracket (masks) narrowed by Newton steps and bisection"))
def _():
    return (lambda T: float(_pyromat("mp.H2O").h(T=T, p=10.0)[0])), 500.0


# ===============================================================================================
# pythermalcomfort: comfort models computed by numba (@vectorize, @njit), their inputs checked by dataclasses
# whose subclasses call the generated `__init__` by super() (differentiated as the Python they come from)
# ===============================================================================================

def _comfort():
    return _imp("pythermalcomfort.models")


@case("pythermalcomfort", "pmv_ppd_iso (a numba @vectorize)")
def _():
    return (lambda t: _comfort().pmv_ppd_iso(tdb=t, tr=25.0, vr=0.1, rh=50.0, met=1.2, clo=0.5,
                                             round_output=False).pmv), 25.3


@case("pythermalcomfort", "heat_index_rothfusz (tdb, rh)")
def _():
    return (lambda p: _comfort().heat_index_rothfusz(tdb=p[0], rh=p[1], round_output=False).hi), \
        np.array([31.3, 62.0])


@case("pythermalcomfort", "set_tmp (a numba @njit two-node model)")
def _():
    return (lambda t: _comfort().set_tmp(tdb=t, tr=25.0, v=0.1, rh=50.0, met=1.2, clo=0.5,
                                         round_output=False).set), 25.3


@case("pythermalcomfort", "utci (tdb, tr, v)")
def _():
    return (lambda p: _comfort().utci(tdb=p[0], tr=p[1], v=p[2], rh=50.0, round_output=False).utci), \
        np.array([28.3, 31.0, 1.2])


@case("pythermalcomfort", "humidex and thi (input classes by super().__init__)")
def _():
    def f(p):
        m = _comfort()
        return m.humidex(tdb=p[0], rh=p[1], round_output=False).humidex * m.thi(tdb=p[0], rh=p[1],
                                                                               round_output=False).thi
    return f, np.array([29.5, 55.0])


# ===============================================================================================
# quantecon: economics solvers compiled by numba (@njit objectives and solvers taking them with `args=`),
# state-space moments, Riccati equations
# ===============================================================================================

def _qe():
    return _imp("quantecon")


def _njit_objective():
    numba = _imp("numba")

    @numba.njit
    def objective(x, c):
        return -(x - c) ** 2 + 0.1 * np.sin(x)
    return objective


@case("quantecon", "optimize.brent_max (value; objective's parameter by args=)")
def _():
    objective = _njit_objective()
    return (lambda c: _qe().optimize.brent_max(objective, -5.0, 5.0, args=(c,))[1]), 0.7


@case("quantecon", "LinearStateSpace.stationary_distributions")
def _():
    def f(p):
        A = np.array([[0.9, 0.1], [0.0, 0.8]])
        ss = _qe().LinearStateSpace(A, np.eye(2) * p[0], np.eye(2), np.eye(2) * p[1])
        return ss.stationary_distributions()[1].ravel()
    return f, np.array([0.4, 0.2])


@case("quantecon", "solve_discrete_riccati (cond by the 1-norm)")
def _():
    def f(p):
        A = np.array([[0.9, p[1]], [0.0, 0.8]])
        return _qe().solve_discrete_riccati(A, np.eye(2), np.eye(2), np.eye(2) * p[0]).ravel()
    return f, np.array([0.5, 0.1])


@case("quantecon", "markov.tauchen (transition matrix)")
def _():
    return (lambda p: _qe().markov.tauchen(5, p[0], p[1]).P[1]), np.array([0.6, 0.1])


# ===============================================================================================
# ase: atoms and their calculators (a k-d tree in every neighbour list, cells converted by `__array__`)
# ===============================================================================================

_ASE_POS = np.array([[0.0, 0.05, 0.02], [2.1, 0.3, 0.1], [0.4, 2.2, -0.2], [1.3, 1.2, 2.1]])


def _ase_energy(symbols, calculator):
    def f(positions):
        atoms = _imp("ase").Atoms(symbols, positions=positions)
        atoms.calc = calculator()
        return float(atoms.get_potential_energy())
    return f


@case("ase", "LennardJones energy (positions)")
def _():
    lj = _imp("ase.calculators.lj")
    return _ase_energy("Ar4", lambda: lj.LennardJones(sigma=2.0, epsilon=0.01, rc=6.0)), _ASE_POS.copy()


@case("ase", "EMT energy (positions)")
def _():
    emt = _imp("ase.calculators.emt")
    return _ase_energy("Cu4", emt.EMT), _ASE_POS * 1.2


@case("ase", "Atoms angle, dihedral and distance")
def _():
    ase = _imp("ase")

    def f(positions):
        atoms = ase.Atoms("H4", positions=positions)
        return atoms.get_angle(0, 1, 2) + 0.1 * atoms.get_dihedral(0, 1, 2, 3) + atoms.get_distance(0, 3)
    return f, _ASE_POS.copy()


@case("ase", "Atoms volume of a cell by its parameters")
def _():
    ase = _imp("ase")
    cellpar_to_cell = _imp("ase.geometry").cellpar_to_cell

    def f(par):
        atoms = ase.Atoms("H", positions=[[0.0, 0.0, 0.0]], cell=cellpar_to_cell(par), pbc=True)
        return float(atoms.get_volume())
    return f, np.array([3.0, 3.5, 4.0, 80.0, 95.0, 100.0])


# -- networkx: graph algorithms on differentiated edge weights (its `argmap` wrappers compiled from text:
# `contexts/rules/networkx.py`); away from ties between paths, lengths are sums of the weights on the way ----
_NX_EDGES = [(0, 1), (1, 2), (0, 2), (2, 3), (1, 3), (3, 4), (2, 4)]
_NX_WEIGHTS = np.array([1.0, 2.0, 3.5, 1.5, 4.0, 2.0, 3.0])


def _nx_graph(nx, w, kind="Graph", attribute="weight"):
    G = getattr(nx, kind)()
    for (a, b), x in zip(_NX_EDGES, w):
        G.add_edge(a, b, **{attribute: x})
    return G


@case("networkx", "shortest_path_length (Dijkstra) and Bellman-Ford")
def _():
    nx = _imp("networkx")

    def f(w):
        G = _nx_graph(nx, w)
        return float(nx.shortest_path_length(G, 0, 4, weight="weight")
                     + 0.5 * nx.bellman_ford_path_length(G, 0, 3, weight="weight"))
    return f, _NX_WEIGHTS.copy()


@case("networkx", "all_pairs_dijkstra_path_length")
def _():
    nx = _imp("networkx")

    def f(w):
        lengths = nx.all_pairs_dijkstra_path_length(_nx_graph(nx, w), weight="weight")
        return float(sum(sum(d.values()) for _, d in lengths))
    return f, _NX_WEIGHTS.copy()


@case("networkx", "minimum_spanning_tree weight")
def _():
    nx = _imp("networkx")

    def f(w):
        return float(nx.minimum_spanning_tree(_nx_graph(nx, w), weight="weight").size(weight="weight"))
    return f, _NX_WEIGHTS.copy()


@case("networkx", "pagerank")
def _():
    nx = _imp("networkx")

    def f(w):
        return float(nx.pagerank(_nx_graph(nx, w), weight="weight")[4])
    return f, _NX_WEIGHTS.copy()


@case("networkx", "maximum_flow_value")
def _():
    nx = _imp("networkx")

    def f(w):
        return float(nx.maximum_flow_value(_nx_graph(nx, w, "DiGraph", "capacity"), 0, 4))
    return f, _NX_WEIGHTS.copy()


@case("networkx", "floyd_warshall_numpy and average_clustering")
def _():
    nx = _imp("networkx")

    def f(w):
        G = _nx_graph(nx, w)
        return float(nx.floyd_warshall_numpy(G, weight="weight").sum() + nx.average_clustering(G, weight="weight"))
    return f, _NX_WEIGHTS.copy()


@case("networkx", "laplacian_matrix's algebraic connectivity (scipy.sparse D - A)")
def _():
    nx = _imp("networkx")

    def f(w):
        L = nx.laplacian_matrix(_nx_graph(nx, w), weight="weight").toarray()
        return float(np.linalg.eigvalsh(L)[1])
    return f, _NX_WEIGHTS.copy()


# ===============================================================================================
# FLife: vibration fatigue by spectral methods (a moment cache keyed by (start, stop, order), the orders a
# list of constants handed to a method of a differentiated object: `codegen._number_draws`)

def _flife_spectrum(FLife, x):
    f = np.linspace(0.0, 200.0, 201)
    psd = x[0] * np.exp(-((f - 50.0) / 10.0) ** 2) + x[1] * np.exp(-((f - 120.0) / 15.0) ** 2) + 1e-6
    return FLife.SpectralData(input={"PSD": psd, "f": f})


@case("FLife", "SpectralData moments m0..m4")
def _():
    FLife = _imp("FLife")
    return (lambda x: np.asarray(_flife_spectrum(FLife, x).moments, dtype=float)), np.array([25.0, 10.0])


@case("FLife", "Dirlik.get_life", rtol=1e-4)
def _():
    FLife = _imp("FLife")
    return (lambda x: FLife.Dirlik(_flife_spectrum(FLife, x)).get_life(C=1.8e22, k=6)), np.array([25.0, 10.0])


@case("FLife", "TovoBenasciutti.get_life", rtol=1e-4)
def _():
    FLife = _imp("FLife")
    return (lambda x: FLife.TovoBenasciutti(_flife_spectrum(FLife, x)).get_life(C=1.8e22, k=6)), np.array([25.0, 10.0])


@case("FLife", "SpectralData bandwidth estimators alpha1, alpha2")
def _():
    FLife = _imp("FLife")

    def f(x):
        sd = _flife_spectrum(FLife, x)
        return np.array([sd.alpha1, sd.alpha2], dtype=float)
    return f, np.array([25.0, 10.0])


# ===============================================================================================
# geoana: analytic geophysics (a source location made inside f, checked `> 0` by a property setter)

@case("geoana", "PointCurrentHalfSpace.potential, location made in f")
def _():
    static = _imp("geoana.em.static")
    return (lambda x: static.PointCurrentHalfSpace(100.0, current=1.0, location=np.zeros(3)).potential(x[None, :])[0]), \
        np.array([10.0, 5.0, -2.0])


@case("geoana", "PointCurrentHalfSpace.electric_field")
def _():
    static = _imp("geoana.em.static")
    return (lambda x: static.PointCurrentHalfSpace(100.0, current=1.0, location=np.zeros(3)).electric_field(
        x[None, :])[0]), np.array([10.0, 5.0, -2.0])


@case("geoana", "MagneticDipoleWholeSpace.magnetic_flux_density")
def _():
    static = _imp("geoana.em.static")
    return (lambda x: static.MagneticDipoleWholeSpace(location=np.array([0.0, 0.0, -1.0]), moment=2.0).magnetic_flux_density(
        x[None, :])[0]), np.array([1.0, 0.5, 0.3])


@case("geoana", "PointMass gravitational_potential")
def _():
    gravity = _imp("geoana.gravity")
    return (lambda x: float(gravity.PointMass(mass=1.5e10, location=np.zeros(3)).gravitational_potential(x[None, :])[0])), \
        np.array([10.0, 5.0, -2.0])


# ===============================================================================================
# EoN: epidemics on networks (a degree distribution looked up by key in a captured dict)

@case("EoN", "get_PGF of a captured degree distribution")
def _():
    analytic = _imp("EoN")
    pk = {1: 0.2, 2: 0.3, 3: 0.5}
    return (lambda x: float(analytic.get_PGF(pk)(x))), 0.7


@case("EoN", "get_PGFPrime")
def _():
    EoN = _imp("EoN")
    pk = {0: 0.1, 2: 0.4, 5: 0.5}
    return (lambda x: float(EoN.get_PGFPrime(pk)(x))), 0.6


@case("EoN", "estimate_R0 of the karate club graph")
def _():
    EoN, nx = _imp("EoN"), _imp("networkx")
    G = nx.karate_club_graph()
    return (lambda tau: float(EoN.estimate_R0(G, tau=tau, gamma=1.0))), 0.3
