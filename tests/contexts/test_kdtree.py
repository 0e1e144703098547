"""scipy.spatial's k-d trees built from differentiated points (`contexts.rules.numpy.scipy_kdtree`), in each
mode on its own (no other mode answering after a refusal), against central differences.

Every engine refused `cKDTree(points)` ("no rule for the C function"): ase builds one in every neighbour list,
so every energy of an `Atoms` with a calculator was refused. The search is on values; `query`'s distances are
computed again from the points and the queries. A tie at the edge of the nearest k, the compiled copies of
the points (`sparse_distance_matrix`, `tree.tree`), weighted counts and periodic boxes are refused.
"""

import numpy as np
import pytest
from scipy.spatial import KDTree, cKDTree

from contexts import gradient, jacfwd
from overdub.errors import OverdubError
from tests import fd

pytestmark = pytest.mark.one_mode

P = np.array([[0.0, 0.1], [1.0, 0.3], [0.2, 1.1], [1.3, 1.2], [0.7, 0.6]])
Q = np.array([[0.1, 0.25], [0.9, 0.8], [0.35, 0.7]])
W = np.array([[1.0, 2.0], [3.0, 4.0], [0.5, -1.0]])
X = np.array([0.3, 0.45])


def both_modes(f, x, rel=1e-6):
    want = fd.gradient(f, x)[0]
    assert np.abs(want).max() > 0.1  # (the case has a derivative to lose)
    np.testing.assert_allclose(gradient(f, x)[0], want, rtol=rel, atol=1e-7)
    np.testing.assert_allclose(jacfwd(f, x), want, rtol=rel, atol=1e-7)


@pytest.mark.parametrize("Tree", [cKDTree, KDTree])
def test_query_distances_in_the_points(Tree):
    def f(points):
        d, i = Tree(points).query(Q, k=2)
        return float(np.sum(d ** 2 * W) + np.sum(d))
    both_modes(f, P.copy())


@pytest.mark.parametrize("Tree", [cKDTree, KDTree])
def test_query_distances_in_the_query(Tree):
    def f(x):
        d, i = Tree(P).query(x, k=3)
        return float(d @ np.array([1.0, -2.0, 0.5]))
    both_modes(f, X.copy())


def test_one_nearest_of_one_point_is_a_float_and_an_int_as_scipy_gives():
    def f(x):
        d, i = cKDTree(P).query(x)
        assert type(d) is float and type(i) is int
        return d * 3.0
    both_modes(f, X.copy())


@pytest.mark.parametrize("p", [1, 3.0, np.inf])
def test_minkowski_norms(p):
    def f(x):
        d, i = cKDTree(P).query(x, k=[1, 2], p=p)
        return float(d @ np.array([1.0, 2.0]))
    both_modes(f, np.array([0.31, 0.52]))


def test_a_tree_of_constants_built_outside():
    tree = cKDTree(P)

    def f(x):
        d, i = tree.query(x[None, :], k=2)
        return float(d[0, 0] + 2 * d[0, 1])
    both_modes(f, X.copy())


def test_distance_upper_bound_leaves_misses_infinite():
    def f(points):
        d, i = cKDTree(points).query(Q, k=3, distance_upper_bound=0.8)
        assert np.isinf(d).any() and (i == len(points)).any()
        return float(np.where(np.isfinite(d), d, 0.0).sum())
    both_modes(f, P.copy())


def test_neighbours_by_radius_then_distances_by_numpy():
    def f(points):
        found = KDTree(points).query_ball_point(Q, 0.7)
        pairs = cKDTree(points).query_pairs(0.9)
        near = sum(np.linalg.norm(points[j] - q) for q, js in zip(Q, found) for j in js)
        return float(near + sum(np.sum((points[i] - points[j]) ** 2) for i, j in sorted(pairs)))
    both_modes(f, P.copy())


def test_data_and_bounds_are_the_points():
    def f(points):
        t = cKDTree(points)
        return float(np.sum(t.data ** 2) + np.sum(t.maxes * 2.0 - t.mins))
    both_modes(f, P.copy())


def test_counts_carry_no_derivative():
    def f(points):
        return float(cKDTree(points).count_neighbors(cKDTree(Q), 0.9)) * float(points[0, 1] ** 2)
    both_modes(f, P + 0.3)


def nearest_at_a_tie(points):
    return float(cKDTree(points).query(np.array([0.5, 0.3]))[0])


def nearest_of_query_at_a_tie(x):
    return float(cKDTree(P).query(x, k=[1, 3], p=1)[0] @ np.array([1.0, 2.0]))


def distance_matrix(points):
    return float(cKDTree(Q).sparse_distance_matrix(cKDTree(points), 2.0).toarray().sum())


def weighted_counts(points):
    return float(cKDTree(points).count_neighbors(cKDTree(Q), 0.9, weights=(np.ones(len(points)), None)))


def periodic(points):
    return float(cKDTree(points, boxsize=3.0).query(Q)[0].sum())


def nodes(points):
    return float(KDTree(points).tree.children)


@pytest.mark.parametrize("f, x", [
    (nearest_at_a_tie, np.array([[0.0, 0.3], [1.0, 0.3], [3.0, 3.0]])),  # (two nearest at 0.5)
    (nearest_of_query_at_a_tie, np.array([0.3, 0.4])),  # (2nd and 3rd nearest at 0.8 in the 1-norm)
    (distance_matrix, P.copy()), (weighted_counts, P.copy()), (periodic, P + 0.5), (nodes, P.copy())])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_refused(f, x, mode):
    with pytest.raises(OverdubError):
        gradient(f, x) if mode == "reverse" else jacfwd(f, x)


def test_ties_and_compiled_distances_do_have_derivatives_to_lose():
    # (the refusals above are not of constant functions: central differences move)
    assert abs(fd.gradient(distance_matrix, P.copy())[0]).max() > 0.1
    assert abs(fd.gradient(nearest_at_a_tie, np.array([[0.0, 0.3], [1.0, 0.3], [3.0, 3.0]]))[0]).max() > 0.1
