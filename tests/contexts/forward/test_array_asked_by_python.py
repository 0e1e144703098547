"""Python code's own `a.__array__()` (and `getattr(a, "__array__")()`) of a perturbed array gives the dual
array, as numpy gives an ndarray itself: statsmodels' models take their data so (`ModelData._convert_endog_exog`),
and forward mode refused every statsmodels fit of differentiated data. numpy's own conversions ask from C and
stay refused. Jacobians against closed forms and central differences."""

import numpy as np
import pytest

from contexts import jacfwd
from contexts.forward.dual import Dual, DualConversionError, Tag
from tests import fd


def _as_given(a):
    return a.__array__()


def _by_name(a):
    return getattr(a, "__array__")()


@pytest.mark.parametrize("take", [_as_given, _by_name], ids=["method", "getattr"])
def test_python_code_asking_array_keeps_the_derivative(take):
    f = lambda x: np.sin(take(x * 2.0)) * x  # noqa: E731
    x = np.array([0.3, 1.1, -0.4])
    np.testing.assert_allclose(jacfwd(f, x), fd.jacobian(f, x), rtol=1e-7, atol=1e-9)


def test_numpys_conversion_is_still_refused():
    d = Dual(np.array([1.0, 2.0]), np.array([1.0, 0.0]), Tag())
    with pytest.raises(DualConversionError):
        np.asarray(d, dtype=float) + 0  # (C asks `__array__`)


@pytest.mark.one_mode
def test_statsmodels_ols_in_forward_mode():
    sm = pytest.importorskip("statsmodels.api")
    X = sm.add_constant(np.linspace(0.0, 1.0, 8))
    y = np.sin(np.arange(8.0))
    J = jacfwd(lambda v: sm.OLS(v, X).fit().params, y)
    np.testing.assert_allclose(J, np.linalg.solve(X.T @ X, X.T), rtol=1e-10, atol=1e-12)
