"""`np.roots` and `np.linalg.eigvals` (contexts/rules/numpy/roots.py), and |z| of complex values in forward
mode, against central differences. numpy-financial's `irr` and statsmodels' `arma_acf` take polynomial roots;
a repeated root or eigenvalue has no derivative and is refused. `np.abs` of a complex dual array under
jacfwd gave a complex "Jacobian" (t * sign(z), numpy's sign of z being z / |z|): silently wrong."""

import numpy as np
import pytest

from contexts import derivative, gradient, jacfwd, jacobian
from contexts.rules.numpy._util import UnsupportedCase
from tests import fd

A0 = np.array([[2.0, 1.0, 0.3], [0.5, -1.0, 0.2], [0.1, 0.4, 0.7]])


def _eig_real(a):
    return np.sort(np.linalg.eigvals(a.reshape(3, 3)).real)


def _eig_complex(a):
    w = np.linalg.eigvals(np.array([[a[0], -a[1]], [a[1] + 0.3, a[0]]]))
    return np.concatenate([np.abs(w), w.imag])


def _roots_real(p):
    return np.sort(np.roots(p).real)


def _roots_complex(p):
    r = np.roots(p)
    return np.concatenate([np.abs(r), np.sort(r.imag)])


def _irr_like(v):
    """numpy-financial's irr: the real root of the cash-flow polynomial, as a rate."""
    r = np.roots(v[::-1])
    r = r[(r.imag == 0) & (r.real > 0)].real
    return float(1.0 / r[0] - 1.0)


CASES = [(_eig_real, A0.ravel()), (_eig_complex, np.array([0.5, 1.2])),
         (_roots_real, np.array([1.0, -6.0, 11.0, -6.2])), (_roots_complex, np.array([1.0, 0.5, 2.0])),
         (_roots_real, np.array([2.0, 0.0, -3.0, 1.0, 0.0]))]  # (a trailing zero: a root at 0)


@pytest.mark.parametrize("i", range(len(CASES)))
@pytest.mark.parametrize("mode", ["jacfwd", "jacobian"])
def test_jacobian(i, mode):
    f, x = CASES[i]
    got = (jacfwd if mode == "jacfwd" else jacobian)(f, x.copy())
    np.testing.assert_allclose(got, fd.jacobian(f, x.copy()), rtol=1e-6, atol=1e-8)


def test_irr_like_both_modes():
    v = np.array([-100.0, 39.0, 59.0, 55.0, 20.0])
    want = fd.gradient(_irr_like, v)[0]
    np.testing.assert_allclose(gradient(_irr_like, v)[0], want, rtol=1e-6)
    np.testing.assert_allclose(jacfwd(lambda u: np.array([_irr_like(u)]), v)[0], want, rtol=1e-6)


def test_scalar_coefficient():
    f = lambda c: float(np.roots([1.0, -3.0, c]).max())  # noqa: E731  (3 + sqrt(9 - 4c)) / 2
    assert derivative(f, 2.0) == pytest.approx(-1.0, rel=1e-9)
    assert gradient(f, 2.0)[0] == pytest.approx(-1.0, rel=1e-9)


@pytest.mark.parametrize("mode", ["jacfwd", "jacobian"])
@pytest.mark.parametrize("f, x", [(_roots_real, np.array([1.0, -2.0, 1.0])),
                                  (_eig_real, np.eye(3).ravel())], ids=["root", "eigenvalue"])
def test_repeated_is_refused(mode, f, x):
    with pytest.raises(UnsupportedCase, match="repeated"):
        (jacfwd if mode == "jacfwd" else jacobian)(f, x)


def test_abs_of_complex_under_jacfwd():
    f = lambda a: np.abs(np.array([a[0] + 1j * a[1], a[1] + 0.5j, (a[0] - 1j) * a[1]]))  # noqa: E731
    x = np.array([0.5, 1.2])
    np.testing.assert_allclose(jacfwd(f, x), fd.jacobian(f, x), rtol=1e-7, atol=1e-10)
    g = lambda t: abs(complex(t, 2.0) * t)  # noqa: E731
    assert derivative(g, 0.7) == pytest.approx(fd.derivative(g, 0.7), rel=1e-7)


def _largest_real_root_of_a_list(t):
    """chemicals' `Z_from_virial_density_form`: the polynomial built as a list of numbers, some of them
    differentiated, then `np.roots(arr)` (forward mode refused it: no rule for a list holding duals)."""
    arr = [1.0] * 4
    arr[-1] = -t[0]
    arr[1] = t[1]
    return max(r.real for r in np.roots(arr) if abs(r.imag) < 1e-12)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_roots_of_a_list_holding_differentiated_numbers(mode):
    x = np.array([0.7, -0.3])
    got = gradient(_largest_real_root_of_a_list, x)[0] if mode == "reverse" else jacfwd(_largest_real_root_of_a_list, x)
    np.testing.assert_allclose(got, fd.gradient(_largest_real_root_of_a_list, x)[0], rtol=1e-6)
