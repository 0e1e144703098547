"""Generated code that calls builtins by name found them shadowed by the user's own parameters:
`inspect._signature_from_function(cls, func, ..., globals=None, locals=None)`, reached by
`inspect.signature` in scikit-learn's parameter validation, crashed with "'NoneType' object is not
callable" where the twin called `locals()` after a call that changed an array. The twins now call the
builtin under a name of their own. Every mode against central differences."""

from __future__ import annotations

import numpy as np
import pytest

from contexts import gradient, hessian, jacfwd
from tests import fd


def _scale_in_place(a, k):
    a[0] = a[0] * k
    return a


def shadowing(x, locals=None, globals=None, vars=None):
    a = np.array([x[0], x[1] * x[0]])
    b = a[1:]  # a view of a: its derivative follows the in-place change
    _scale_in_place(a, x[1])
    a *= x[0]
    return np.sum(a * a) + np.sum(b) + (0.0 if locals is None else 1.0)


X = np.array([0.7, 1.3])


@pytest.mark.parametrize("mode", ["gradient", "jacfwd", "hessian"])
def test_parameters_named_like_builtins(mode):
    if mode == "gradient":
        np.testing.assert_allclose(gradient(shadowing, X)[0], fd.gradient(shadowing, X)[0], rtol=1e-7)
    elif mode == "jacfwd":
        np.testing.assert_allclose(jacfwd(shadowing, X), fd.jacobian(shadowing, X), rtol=1e-6)
    else:
        np.testing.assert_allclose(hessian(shadowing, X), fd.hessian(shadowing, X), rtol=1e-4, atol=1e-5)
