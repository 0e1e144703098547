"""Real functions through complex intermediates (a complex constant times a real x): the Hessian (forward
over reverse) and forward mode's np.real / np.imag of a chunked tangent, against central differences.
They were silently wrong: the adjoints on duals neither conjugated a complex operand nor took the real
part of a real operand's cotangent (hessian of (c x).real ** 2 gave 2 + 1j for 2), and forward mode's
np.real of a complex tangent chunk came back as a complex view of the whole tangent."""

import numpy as np
import pytest

from contexts import hessian, jacfwd
from tests import fd

C = 1 + 0.5j
X = np.array([0.3, -1.2])

LOSSES = {
    "abs2": lambda x: np.sum(np.abs(x * C) ** 2),
    "abs2 of a slice": lambda x: np.sum(np.abs(x[:1] * C) ** 2),
    "imag2": lambda x: np.sum((x * C).imag ** 2),
    "real times x": lambda x: np.sum((x * C).real * x),
    "np.multiply": lambda x: np.sum(np.real(np.multiply(x, C)) * x),
    "constant first": lambda x: np.sum((C * x).imag * x),
    "complex array": lambda x: np.sum((x * np.array([C, 2 - 1j])).real ** 3),
    "quotient": lambda x: np.sum(np.real(x / C) ** 2 + np.imag(C / (x + 3.0)) ** 2),
    "scalars": lambda x: (x[0] * C).real ** 2 + (C * x[1]).imag * x[0],
    "fft after a complex scale": lambda x: np.sum(np.fft.hfft(x * (1 + 0.5j)) ** 2),
}


@pytest.mark.parametrize("name", LOSSES)
def test_hessian(name):
    f = LOSSES[name]
    got = hessian(f, X)
    assert not np.iscomplexobj(got)
    np.testing.assert_allclose(got, fd.hessian(f, X), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("part", [np.real, np.imag])
def test_forward_real_and_imag_parts(part):
    def f(x):
        return part(x * C * C)
    got = jacfwd(f, np.array([0.3]))
    assert not np.iscomplexobj(got)
    np.testing.assert_allclose(got, fd.jacobian(f, np.array([0.3])), rtol=1e-7)
