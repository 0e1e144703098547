"""A loop over `range(T)` whose first pass differs (`if t == 0:`), found in pykalman's unscented filter: where
the counter was handed to a call with a differentiated value (`_last_dims(f, t)`), it counted as differentiated,
and the two `if t == 0:` blocks, each giving two variables read in the loop, were taken for a bisection and
refused in reverse mode. The lowered form loops over a temporary (`_od_t6 = range(T)`, `for t in _od_t6`) which
hid that t is a counter. Checked against finite differences in both modes."""

import numpy as np

from contexts import gradient
from contexts.forward import derivative
from tests import fd


def _moments(points):
    return points.mean()


def _points(m):
    return np.array([m - 1.0, m, m + 1.0])


def _predict(state, q):
    return state, _moments(state * 0.9) + q


def _weight(q, t):
    return 0.1 + 0.01 * q * t


def filter_like(q, Z):
    T = Z.shape[0]
    out = np.zeros(T)
    for t in range(T):
        if t == 0:
            mu = q
        else:
            mu = out[t - 1]
        state = _points(mu)
        if t == 0:
            pred = state
            moments = _moments(pred)
        else:
            _, moments = _predict(state, q)
            pred = _points(moments)
        out[t] = moments + _weight(q, t) * (Z[t] - pred[1])
    return out.sum()


Z = np.array([0.1, 0.4, 0.35, 0.8])


def test_a_first_pass_test_of_a_counter_is_no_bisection():
    want = fd.derivative(lambda q: filter_like(q, Z), 0.3)
    np.testing.assert_allclose(gradient(filter_like, 0.3, Z)[0], want, rtol=1e-7)
    np.testing.assert_allclose(derivative(lambda q: filter_like(q, Z), 0.3), want, rtol=1e-7)
