"""scipy.special.lambertw (a Python function around a ufunc): W'(z) = W / (z (1 + W)), against central
differences, in the rule and through the engines (fluids' Colebrook friction factor computes with it)."""

import numpy as np
import pytest

sc = pytest.importorskip("scipy.special")

from contexts import derivative, gradient, hessian  # noqa: E402
from tests import fd  # noqa: E402
from tests.fd import check_rule  # noqa: E402


@pytest.mark.parametrize("z", [0.7, 0.0, np.array([0.3, 2.0, 5.0])])
def test_rule(z):
    check_rule(sc.lambertw, z, diff=(0,))


def _f(x):
    return sc.lambertw(x * x + 0.5).real * x


@pytest.mark.parametrize("mode", ["reverse", "forward", "hessian"])
def test_through_the_engines(mode):
    got = {"reverse": lambda: gradient(_f, 0.7)[0], "forward": lambda: derivative(_f, 0.7),
           "hessian": lambda: hessian(_f, 0.7)}[mode]()
    want = (fd.derivative(_f, 0.7) if mode != "hessian"
            else fd.derivative(lambda t: fd.derivative(_f, t, h=1e-4), 0.7, h=1e-4))
    assert np.real(got) == pytest.approx(want, rel=1e-5 if mode == "hessian" else 1e-7)
