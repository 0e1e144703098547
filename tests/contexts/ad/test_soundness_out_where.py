"""`r = ufunc(..., where=mask, out=a)`: where the mask is False, a keeps its old values, so their cotangent
is a's before the call, also when the result is bound to a's own name (`s = np.divide(1, s, where=m,
out=s)`, as np.linalg.pinv does). Checked against central finite differences."""

import numpy as np
import pytest

from contexts.ad import gradient
from tests import fd

X = np.array([0.7, -1.3, 0.4, 1.9])


def rebound(x):
    s = x * 1.0
    s = np.divide(1.0, s, where=np.abs(x) > 0.5, out=s)
    return (s ** 2 * x).sum()


def other_name(x):
    s = x * 1.0
    r = np.divide(1.0, s, where=np.abs(x) > 0.5, out=s)
    return (r ** 2 * x).sum() + (s * x).sum()


def not_bound(x):
    s = x * 1.0
    np.multiply(s, x, where=x > 0, out=s)
    return (s ** 3).sum()


@pytest.mark.parametrize("f", [rebound, other_name, not_bound])
def test_out_where_gradient(f):
    want = fd.gradient(f, X, h=1e-6, order=2)[0]
    np.testing.assert_allclose(gradient(f, X.copy())[0], want, rtol=1e-6, atol=1e-8)


def out_then_rebound(x):
    t = x.copy()
    np.clip(t, -1.0, 1.0, out=t)  # its result unused, and t rebound below: no cotangent reaches the call
    t = x * 2.0
    return np.sum(t * t * x)


def test_out_call_whose_result_gets_no_cotangent():
    want = fd.gradient(out_then_rebound, X, h=1e-6, order=2)[0]
    np.testing.assert_allclose(gradient(out_then_rebound, X.copy())[0], want, rtol=1e-6, atol=1e-8)
