"""numpy.polynomial's Python code (Clenshaw recursions, in-place coefficient arithmetic, classes) under
reverse mode, against central finite differences."""

import numpy as np
import pytest
from numpy.polynomial import chebyshev as C
from numpy.polynomial import hermite as H
from numpy.polynomial import legendre as L
from numpy.polynomial import polynomial as P

from tests.fd import assert_grad_fd

COEF = np.array([0.5, -1.2, 0.8, 0.3])
X = np.linspace(-0.9, 0.9, 5)

CASES = {
    "polyval in c": (lambda c: np.sum(P.polyval(X, c) ** 2), COEF),
    "polyval in x": (lambda x: np.sum(P.polyval(x, COEF) ** 2), X),
    "chebval": (lambda c: np.sum(C.chebval(X, c) ** 2), COEF),
    "legval": (lambda c: np.sum(L.legval(X, c) ** 2), COEF),
    "hermval": (lambda c: np.sum(H.hermval(X, c) ** 2), COEF),
    "polyder": (lambda c: np.sum(P.polyder(c, 2) ** 2), COEF),
    "polyint": (lambda c: np.sum(P.polyint(c) ** 2), COEF),
    "polymul": (lambda c: np.sum(P.polymul(c, c[::-1]) ** 2), COEF),
    "chebfit": (lambda y: np.sum(C.chebfit(X, y, 2) ** 2), np.sin(np.arange(5.0))),
    "Polynomial class": (lambda c: P.Polynomial(c)(0.3) ** 2, COEF),
    "polyval2d": (lambda c: np.sum(P.polyval2d(X, X, np.outer(c, c))), COEF),
}


@pytest.mark.parametrize("name", list(CASES))
def test_numpy_polynomial(name):
    f, x = CASES[name]
    assert_grad_fd(f, x)
