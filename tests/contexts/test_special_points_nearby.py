"""A value reverse mode found equal to a constant (`x == 1`, a tie of an ordering) where forward mode cannot
run to tell whether it moves (pandas frames hold no duals): reverse mode records the function again at two
points next to this one (`contexts.compose.still_equal_nearby`). A value that stays equal there is constant
around the point, and the gradient stands; one that moves off it is refused, as before. Found in
linearmodels' `has_constant(x)`, `np.all(x == 1, axis=0)` of the regressors, one column a constant 1, under
every estimator (sweep V)."""

import numpy as np
import pandas as pd
import pytest

from contexts import gradient, jacobian, jvp
from contexts.lowered.runtime import SpecialPoint
from tests.fd import gradient as fd_gradient, jacobian as fd_jacobian

RNG = np.random.default_rng(7)
N = 12
X1 = RNG.normal(size=N)


def ols(y):
    """Least squares on a frame with a column of ones, found by the column's test `x == 1`."""
    frame = pd.DataFrame({"const": 1.0, "x1": X1, "y": y})
    x = frame[["const", "x1"]].to_numpy()
    if not np.any(np.all(x == 1, axis=0)):
        x = np.column_stack([np.ones(N), x])
    yv = frame["y"].to_numpy()
    return np.linalg.solve(x.T @ x, x.T @ yv)


def test_a_constant_column_compared_equal_stays_answered():
    y = 1.0 + 0.5 * X1 + RNG.normal(size=N)
    x = np.column_stack([np.ones(N), X1])
    want = np.linalg.solve(x.T @ x, x.T)  # (the closed form: d beta / d y)
    got = jacobian(ols, y, mode="reverse")
    np.testing.assert_allclose(got, want, atol=1e-12)
    np.testing.assert_allclose(got, fd_jacobian(ols, y), atol=1e-7)


def test_a_scalar_sum_through_the_check_matches_differences():
    y = 1.0 + 0.5 * X1 + RNG.normal(size=N)
    f = lambda v: float(np.sum(ols(v) ** 2))  # noqa: E731
    np.testing.assert_allclose(gradient(f, y)[0], fd_gradient(f, y)[0], atol=1e-8)


def special_first(y):
    """A special case at y[0] == 1, whose formula does not depend on y[0]: the derivative there is the
    other branch's limit, not the special case's 0."""
    v = pd.Series(y).to_numpy()
    if v[0] == 1.0:
        return float(np.sum(v[1:]))
    return float(np.sum(v[1:]) + (v[0] ** 2 - 1.0) / (v[0] - 1.0))


@pytest.mark.one_mode  # (the other mode's answer after a refusal would hide the check's)
def test_a_moving_value_at_the_special_value_is_refused():
    with pytest.raises(SpecialPoint, match="could not be checked"):
        gradient(special_first, np.array([1.0, 2.0, 3.0]))


def test_off_the_special_value_the_gradient_is_right():
    y = np.array([1.5, 2.0, 3.0])
    np.testing.assert_allclose(gradient(special_first, y)[0], fd_gradient(special_first, y)[0], atol=1e-8)


def count_of_ones(y):
    """A constant 1 beside a moving entry equal to 1 at the point: the test stays met nearby (the constant's
    entry) though one of its entries moves off it: as many entries must stay equal."""
    v = np.concatenate([[1.0], pd.Series(y).to_numpy()])
    ones = int(np.sum(v == 1.0))
    return float(np.sum(v) * ones)


@pytest.mark.one_mode  # (the other mode's answer after a refusal would hide the check's)
def test_an_entry_moving_off_beside_a_constant_one_is_refused():
    with pytest.raises(SpecialPoint):
        gradient(count_of_ones, np.array([1.0, 2.0]))


def tied(y):
    """An ordering tied at the point: `v[0] <= 2` with v[0] == 2 moving: a kink."""
    v = pd.Series(y).to_numpy()
    return float(v[0] ** 2 if v[0] <= 2.0 else 4.0 * v[0] - 4.0 + (v[0] - 2.0) ** 3)


@pytest.mark.one_mode  # (the other mode's answer after a refusal would hide the check's)
def test_a_moving_tie_of_an_ordering_is_refused():
    with pytest.raises(SpecialPoint):
        gradient(tied, np.array([2.0, 1.0]))


def constant_tie(y):
    """The same ordering of a constant entry of a frame: stays tied nearby, answered."""
    frame = pd.DataFrame({"c": [2.0, 2.0], "y": y})
    c = frame["c"].to_numpy()
    scale = 3.0 if c[0] <= 2.0 else 5.0
    return float(scale * np.sum(frame["y"].to_numpy() ** 2))


def test_a_constant_tie_of_an_ordering_stays_answered():
    y = np.array([0.5, -1.5])
    np.testing.assert_allclose(gradient(constant_tie, y)[0], fd_gradient(constant_tie, y)[0], atol=1e-8)


def test_jvp_is_reverse_modes_answer_through_the_check():
    y = 1.0 + 0.5 * X1
    d = RNG.normal(size=N)
    x = np.column_stack([np.ones(N), X1])
    _, rate = jvp(ols, (y,), (d,))
    np.testing.assert_allclose(rate, np.linalg.solve(x.T @ x, x.T @ d), atol=1e-12)
