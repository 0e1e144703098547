"""A C function of a library given duals, or a callback holding them, that fails in the library's own
error class (MINPACK's `minpack.error` under scipy.optimize.fsolve and curve_fit): a clear refusal naming
the function, never the library's raw error."""

import numpy as np
import pytest

so = pytest.importorskip("scipy.optimize")

from contexts import derivative, gradient, jacfwd  # noqa: E402
from overdub.errors import OverdubError  # noqa: E402


def by_fsolve(v):
    return so.fsolve(lambda t: t ** 3 - v[1], 1.0)[0]


def by_curve_fit(v):
    return so.curve_fit(lambda t, a: a * t, [1.0, 2.0, 3.0], v)[0][0]


@pytest.mark.parametrize("f", [by_fsolve, by_curve_fit], ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", [jacfwd, gradient], ids=["forward", "reverse"])
def test_refused_by_name(f, mode):
    if f is by_fsolve:
        pytest.skip("both modes differentiate fsolve (implicit function theorem): test_fsolve_in_both_modes")
    if f is by_curve_fit:
        pytest.skip("both modes differentiate curve_fit (at its optimum): test_curve_fit_in_both_modes")
    with pytest.raises(OverdubError, match="_minpack|minpack|scipy.optimize"):
        mode(f, np.array([0.7, 1.3, 0.4]))


def test_fsolve_in_both_modes():
    """The root of t**3 - c moves as c**(1/3): d/dc = 1 / (3 c**(2/3)) (tests/contexts/forward/test_roots.py;
    reverse mode since session 45: tests/contexts/rules/test_scipy_roots.py)."""
    x = np.array([0.7, 1.3, 0.4])
    want = np.array([0.0, 1 / (3 * 1.3 ** (2 / 3)), 0.0])
    np.testing.assert_allclose(jacfwd(by_fsolve, x), want, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(gradient(by_fsolve, x)[0], want, rtol=1e-5, atol=1e-8)


def test_curve_fit_in_both_modes():
    """a·t fitted to v: a = t·v / t·t, da/dv = t / t·t (tests/contexts/rules/test_scipy_leastsq.py)."""
    x, t = np.array([0.7, 1.3, 0.4]), np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(jacfwd(by_curve_fit, x), t / (t @ t), rtol=1e-8)
    np.testing.assert_allclose(gradient(by_curve_fit, x)[0], t / (t @ t), rtol=1e-8)


def test_python_errors_still_pass():
    """The program's own control flow through errors Python raises (StopIteration, KeyError) is kept."""
    def f(x):
        it = iter([x, 2 * x])
        total = 0.0
        while True:
            try:
                total += next(it)
            except StopIteration:
                break
        try:
            total += {"a": x}["b"]
        except KeyError:
            total *= x
        return total
    assert derivative(f, 0.5) == pytest.approx(6 * 0.5)
