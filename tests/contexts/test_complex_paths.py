"""Complex intermediates of real functions, checked against central differences in every mode:

- `complex(a, b)` with a perturbed part under forward mode's conversion path (forward over reverse:
  `hessian`): the second argument was dropped (`complex(x, 2.0)` became x + 0j, the hessian of
  `abs(complex(x, 2.0))` was 0);
- `abs` of a complex forward-mode dual in a reverse rule (forward over reverse): its sign z/|z| went to
  numpy's sign, whose tangent was zero; a complex dual cotangent of a real argument kept its imaginary
  part (the hessian of a real function came back complex);
- `np.sign` of complex arrays is numpy's z/|z| (numpy 2), smooth away from 0: it was listed as
  piecewise constant (derivative 0 in every mode)."""

import numpy as np
import pytest

from contexts import gradient, jacobian, jacobian_sparsity, hessian_sparsity
from tests import fd

X = 0.7


def abs_of_complex(x):
    return abs(complex(x, 2.0))


def imag_part(x):
    return complex(2.0, x).imag * x


def both_parts(x):
    return abs(complex(x, x * x))


SCALARS = [abs_of_complex, imag_part, both_parts]


@pytest.mark.parametrize("f", SCALARS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["gradient", "derivative", "hessian"])
def test_scalar_complex_paths(f, mode):
    got, want = fd.in_mode(f, X, mode)
    assert np.isrealobj(got)  # a real function's derivatives are real (the hessian came back complex)
    assert float(got) == pytest.approx(want, rel=1e-5, abs=1e-7)


def sign_of_complex(v):
    return np.sign(v * (1.0 + 2.0j) + 0.5j).real * v[::-1]


V = np.array([0.7, -0.3, 1.2])


def test_sign_of_complex_arrays_reverse_and_forward():
    want = fd.jacobian(sign_of_complex, V)
    np.testing.assert_allclose(jacobian(sign_of_complex, V), want, rtol=1e-5, atol=1e-8)
    from contexts import jacfwd
    np.testing.assert_allclose(jacfwd(sign_of_complex, V), want, rtol=1e-5, atol=1e-8)


def test_sign_of_real_arrays_is_still_piecewise_constant():
    g, = gradient(lambda v: (np.sign(v) * v).sum(), V)
    np.testing.assert_allclose(g, np.sign(V))


def test_sparsity_keeps_the_complex_dependences():
    """The tracers do not know a value is complex: |z| and z/|z| keep first and second order."""
    assert jacobian_sparsity(sign_of_complex, V).toarray().any(axis=1).all()
    h = hessian_sparsity(lambda v: np.abs(v + 2.0j).sum(), V).toarray()
    assert np.diag(h).all()
