"""Cases a helper's sweep of ten PyPI packages new to the project found (session 50), each reduced to the
package's pattern and checked against central differences or for a clear refusal."""

from __future__ import annotations

import numpy as np
import pytest

from contexts import derivative, gradient, jacfwd
from overdub.errors import OverdubError
from tests.fd import derivative as fd_derivative

D = np.array([1.5, 2.0, 4.0, 7.5])


class Dist:
    """powerlaw's distributions: `global class_instance; class_instance = self` inside a loop over the user's
    constraints, which is mostly empty. Reverse mode refused the whole method when it was built."""

    def __init__(self, a, constraints=()):
        self.a = a
        self.init_constraints(constraints)

    def init_constraints(self, constraints):
        out = []
        for fn in constraints:
            global class_instance
            class_instance = self
            out.append(lambda p: fn(class_instance))
        self.constraints = out

    def logpdf(self, x):
        return np.log(self.a - 1) - self.a * np.log(x)


def _loglikelihood(a, constraints=()):
    return float(np.sum(Dist(a, constraints).logpdf(D)))


def test_a_global_store_never_run_is_no_refusal():
    expected = fd_derivative(_loglikelihood, 2.5)
    assert gradient(_loglikelihood, 2.5)[0] == pytest.approx(expected, rel=1e-6)
    assert derivative(_loglikelihood, 2.5) == pytest.approx(expected, rel=1e-6)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_a_global_store_that_runs_is_refused_where_it_runs():
    with pytest.raises(OverdubError, match="module global class_instance"):
        gradient(lambda a: _loglikelihood(a, (lambda d: d.a,)), 2.5)


def test_mpmath_function_without_a_rule_refused_in_forward_mode():
    """powerlaw's truncated power law: `mpmath.gammainc` of differentiated floats. Forward mode passed on
    mpmath's own ValueError (its conversion found no `_mpf_` on a dual); refused now, naming the read."""
    mpmath = pytest.importorskip("mpmath")

    def g(a):
        return float(mpmath.gammainc(a, 0.05))
    with pytest.raises(OverdubError, match="_mpf_"):
        derivative(g, -1.2)
    with pytest.raises(OverdubError):
        jacfwd(lambda p: float(mpmath.gammainc(1 - p[0], p[1] * 1.0)), np.array([2.2, 0.05]))
    with pytest.raises(OverdubError):
        gradient(g, -1.2)


def test_numpy_sort_descending():
    """numpy 2.5's `np.sort(x, descending=True)`: the sort rule took the ascending permutation, silently
    (found through JAX's `jnp.sort(x, descending=True)`, whose signature numpy 2.5's now shares)."""
    import inspect
    if "descending" not in inspect.signature(np.sort).parameters:
        pytest.skip("numpy before 2.5 has no descending sort")
    from tests.fd import gradient as fd_gradient
    x = np.array([0.3, 2.0, 1.0, 5.0, -1.0, 0.7])
    f = lambda v: (np.sort(v, descending=True) * np.arange(6.0)).sum()  # noqa: E731
    g = lambda v: (np.sort(v.reshape(3, 2), axis=0, descending=True) * np.arange(6.0).reshape(3, 2)).sum()  # noqa: E731
    for fn in (f, g):
        expected = fd_gradient(fn, x)[0]
        np.testing.assert_allclose(gradient(fn, x)[0], expected, rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(jacfwd(fn, x), expected, rtol=1e-7, atol=1e-9)
