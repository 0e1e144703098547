"""Cases of session 38: crashes, false refusals and silent wrong derivatives met on code nobody here wrote
(package sweeps, generated programs), each checked against finite differences or closed forms in every mode."""

import numpy as np
import pytest
from scipy import optimize

from contexts import derivative, gradient
from overdub.errors import OverdubError

# -- `with m(...) as v` on a manager holding no number (scipy's least_squares, curve_fit with bounds) ------------
# scipy's `_workers_wrapper` runs every least_squares in `with MapWrapper(map) as mf:`; reverse mode refused the
# `with ... as` on a manager it could not prove constant. Now checked when entered: refused only where the manager
# or what its `__enter__` gives holds a number.

_T = np.linspace(0.0, 1.0, 8)


def _fit(a, method, tol=1e-15):
    y = a * np.exp(-_T) + 0.1 * np.sin(7.0 * _T)
    res = optimize.least_squares(lambda p: p[0] * np.exp(-p[1] * _T) - y, [1.0, 1.0], method=method,
                                 xtol=tol, ftol=tol, gtol=tol)
    return res.x


def _fit_by_implicit_function(a):
    """dp/da of the least-squares fit by the implicit function theorem: (J'J + sum r H) dp = J' dy/da."""
    p = _fit(a, "trf")
    y = a * np.exp(-_T) + 0.1 * np.sin(7.0 * _T)
    e = np.exp(-p[1] * _T)
    r = p[0] * e - y
    jac = np.stack([e, -p[0] * _T * e], axis=1)
    second = np.array([[0.0, np.sum(r * -_T * e)], [np.sum(r * -_T * e), np.sum(r * p[0] * _T ** 2 * e)]])
    return np.linalg.solve(jac.T @ jac + second, jac.T @ np.exp(-_T))


@pytest.mark.parametrize("method", ["trf", "dogbox"])
@pytest.mark.parametrize("k", [0, 1])
def test_least_squares_under_map_wrapper(method, k):
    want = _fit_by_implicit_function(2.0)[k]
    np.testing.assert_allclose(gradient(lambda a: _fit(a, method, 1e-10)[k], 2.0)[0], want, rtol=1e-5)
    np.testing.assert_allclose(derivative(lambda a: _fit(a, method, 1e-10)[k], 2.0), want, rtol=1e-5)


_SETTING = {}


class _Reader:
    """A manager holding nothing whose `__enter__` gives a number read from elsewhere."""

    def __enter__(self):
        return _SETTING["v"] * 2.0

    def __exit__(self, *exc):
        return False


class _Holder:
    def __init__(self, v):
        self.v = v

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _reads_setting(x):
    _SETTING["v"] = x
    with _Reader() as y:
        return y * x


def _holds(x):
    with _Holder(x) as h:
        return h.v * x


@pytest.mark.parametrize("f", [_reads_setting, _holds])
def test_with_as_holding_a_number_refused_in_reverse_mode(f):
    with pytest.raises(OverdubError):
        gradient(f, 1.5)
    np.testing.assert_allclose(derivative(f, 1.5), 6.0 if f is _reads_setting else 3.0)
