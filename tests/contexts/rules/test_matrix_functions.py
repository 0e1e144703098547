"""scipy.linalg.sqrtm and logm in both modes, by the block-triangular identity for Frechet derivatives,
against central differences and a closed form (they were refused: no rule for their C kernels)."""

import numpy as np
import pytest

from contexts import gradient
from contexts.forward import jacfwd
from contexts.rules.registry import NoDerivative
from tests import fd

sl = pytest.importorskip("scipy.linalg")

A0 = np.array([[2.0, 0.4, 0.1], [0.3, 3.0, 0.2], [0.1, 0.5, 2.5]])
W = np.arange(9.0).reshape(3, 3) / 10


@pytest.mark.parametrize("name", ["sqrtm", "logm"])
def test_matrix_function_against_central_differences(name):
    fn = getattr(sl, name)

    def loss(a):
        return (np.real(fn(a)) * W).sum()
    want = fd.gradient(loss, A0)[0]
    np.testing.assert_allclose(gradient(loss, A0)[0], want, rtol=1e-7, atol=1e-9)
    J = jacfwd(lambda a: np.real(fn(a)), A0)
    np.testing.assert_allclose(np.einsum("ijkl,ij->kl", J, W), want, rtol=1e-7, atol=1e-9)


def test_sqrtm_of_a_scaled_matrix_closed_form():
    # sqrtm(s B) = sqrt(s) sqrtm(B): d/ds trace = trace(sqrtm(B)) / (2 sqrt(s))
    B = A0 @ A0.T
    s = 1.7
    want = np.trace(sl.sqrtm(B)).real / (2 * np.sqrt(s))
    assert gradient(lambda t: np.trace(np.real(sl.sqrtm(t * B))), s)[0] == pytest.approx(want, rel=1e-8)


def test_error_estimate_refused():
    try:
        sl.logm(A0, disp=False)
    except TypeError:
        pytest.skip("this scipy has no disp argument")
    with pytest.raises(NoDerivative, match="disp=False"):
        gradient(lambda a: np.real(sl.logm(a, disp=False)[0]).sum(), A0)
