"""Sparsity detection on the numpy idioms the fuzzer's `idiom` templates met crashing (2026-11-28): a
pattern that covers every dependency (checked against perturbations), or a clear refusal (an
OverdubError) — never a raw TypeError/AttributeError/ValueError from numpy or scipy."""

import numpy as np
import pytest
import scipy.integrate
import scipy.special

from contexts import jacobian_sparsity
from overdub.errors import OverdubError

X = np.linspace(0.3, 1.4, 12)
PLAIN = np.array([1.03, 1.25, 0.39, 0.62, 1.07, 0.5, 0.8, 1.1, 0.2, 0.9, 1.3, 0.7])


def _dependencies(f, x):
    """Which outputs move when each input moves (a structural truth by perturbation)."""
    base = np.ravel(f(x))
    out = np.zeros((base.size, x.size), dtype=bool)
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = 1e-3 * (1 + j)
        out[:, j] = np.ravel(f(x + e)) != base
    return out


EXACT = {
    "apply_along_axis rows": lambda x: np.apply_along_axis(lambda v: v * v.sum(), 1, x.reshape(3, 4)).ravel(),
    "apply_along_axis columns": lambda x: np.apply_along_axis(lambda v: v * v[0], 0, x.reshape(3, 4)).ravel(),
    "apply_along_axis to scalars": lambda x: np.apply_along_axis(lambda v: v.sum(), 1, x.reshape(3, 4)),
}


@pytest.mark.parametrize("name", list(EXACT))
def test_exact(name):
    f = EXACT[name]
    pattern = np.asarray(jacobian_sparsity(f, X).toarray(), dtype=bool)
    np.testing.assert_array_equal(pattern, _dependencies(f, X))


RIGHT_OR_REFUSED = {
    "cumulative_trapezoid": lambda x: scipy.integrate.cumulative_trapezoid(x, initial=0.0),
    "cumulative_trapezoid of a product": lambda x: scipy.integrate.cumulative_trapezoid(x * x, initial=0.0),
    "percentile of a plain array": lambda x: np.percentile(PLAIN, 30.0) * x,
    "logsumexp": lambda x: scipy.special.logsumexp(x) * x,
    # (np.vectorize's object outputs, cast by `asanyarray(outputs, dtype="d")`: the tracer kept them as
    # objects, and the next ufunc met floats without a `hypot` method: AttributeError, 2026-11-29)
    "vectorize then a ufunc": lambda x: np.hypot(x, np.vectorize(lambda p, q: p * q if p > 0.5 else q - p)(
        x, x[::-1]) * 0.5),
}


@pytest.mark.parametrize("mode", ["global", "local"])
@pytest.mark.parametrize("name", list(RIGHT_OR_REFUSED))
def test_covers_or_refuses(name, mode):
    f = RIGHT_OR_REFUSED[name]
    try:
        p = jacobian_sparsity(f, X, mode=mode)
    except OverdubError:
        return
    pattern = np.asarray(p.toarray(), dtype=bool)
    assert not np.any(_dependencies(f, X) & ~pattern)
