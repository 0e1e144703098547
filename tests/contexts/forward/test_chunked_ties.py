"""A number tied with an element of an array, both differentiated, under `jacfwd`'s chunk of directions.

The number's tangents are (k,), the array's (k, n): numpy aligns trailing axes, so the two did not subtract and
the tie went unchecked, one side's slope answered silently (`sum(where(arr > m, arr - m, 0))` at a tie: [-1, 0, 1]
for the sides' mean [-1.5, 0.5, 1]; a helper's peak-width stand-ins at a plateau, session 71), or, with k equal
to n, subtracted direction against element. Now each is padded to the other's axes (`dual._chunks_aligned`)."""

import numpy as np
import pytest

import contexts
from overdub.errors import OverdubError


def hinge_sum(x):
    m = x[0] * 1.0  # a number
    arr = x[1:] * 1.0  # an array, its first element tied with m
    return np.where(arr > m, arr - m, 0.0).sum()


def hinge_sum_square(x):  # (k directions, an array of k elements)
    m = x[0] * 1.0
    return np.where(x > m + 0.0, x - m, 0.0).sum() + np.where(x[::-1] > m, 1.0, 0.0).sum() * 0.0


def step_weighted(x):  # (a jump at the tie: no derivative)
    m = x[0]
    arr = x[1:]
    return float(np.sum((arr >= m) * arr))


def _sides_mean(f, x, h=1e-7):
    out = []
    for e in np.eye(x.size):
        out.append(((f(x + h * e) - f(x)) / h + (f(x) - f(x - h * e)) / h) / 2)
    return np.array(out)


@pytest.mark.one_mode
@pytest.mark.parametrize("f, x", [(hinge_sum, np.array([1.0, 1.0, 2.0])),
                                  (hinge_sum_square, np.array([1.0, 3.0, 1.0]))], ids=["n_k", "k_k"])
def test_a_kink_is_the_mean_of_its_sides(f, x):
    np.testing.assert_allclose(contexts.jacfwd(f, x), _sides_mean(f, x), atol=1e-6)


@pytest.mark.one_mode
def test_a_jump_at_the_tie_is_refused():
    with pytest.raises(OverdubError):
        contexts.jacfwd(step_weighted, np.array([1.0, 1.0, 2.0]))
