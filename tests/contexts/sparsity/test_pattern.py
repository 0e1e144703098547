"""The three pattern moves against dense boolean reference computations."""

from __future__ import annotations

import numpy as np
import pytest

from contexts.sparsity.pattern import Pattern


def _random(rng, nrows, ncols, density=0.3):
    dense = rng.random((nrows, ncols)) < density
    rows, cols = np.nonzero(dense)
    return Pattern.from_pairs(rows, cols, nrows, ncols), dense


@pytest.mark.parametrize("seed", range(5))
def test_gather_combine_union_cross(seed):
    rng = np.random.default_rng(seed)
    P, D = _random(rng, 6, 5)
    Q, E = _random(rng, 6, 5)
    rows = rng.integers(-1, 6, 9)
    expected = np.where(rows[:, None] >= 0, D[np.maximum(rows, 0)], False)
    np.testing.assert_array_equal(P.gather(rows).to_csr().toarray(), expected)
    out, src = rng.integers(0, 4, 10), rng.integers(0, 6, 10)
    combined = np.zeros((4, 5), bool)
    for o, s in zip(out, src):
        combined[o] |= D[s]
    np.testing.assert_array_equal(P.combine(out, src, 4).to_csr().toarray(), combined)
    np.testing.assert_array_equal(P.union(Q).to_csr().toarray(), D | E)
    pairs = P.cross(Q).to_csr().toarray()
    for r in range(6):
        want = np.zeros((5, 5), bool)
        want[np.ix_(D[r], E[r])] = True
        want = np.triu(want | want.T)
        np.testing.assert_array_equal(pairs[r].reshape(5, 5), want)


def test_vstack_and_identity():
    P = Pattern.vstack([Pattern.identity(3), Pattern.empty(2, 3)])
    np.testing.assert_array_equal(P.to_csr().toarray(), np.vstack([np.eye(3), np.zeros((2, 3))]) > 0)
