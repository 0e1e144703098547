"""scipy.spatial's k-d trees (`cKDTree`, and `KDTree`, its Python subclass) built from points that carry
derivatives, for every engine (`Rule.stand_in`).

A tree answers two kinds of question. Which points (`query_ball_point`, `query_ball_tree`, `query_pairs`, the
indices `query` returns): integers, piecewise constant in the points, found by the compiled search on the
points' values. And how far (`query`'s distances): a function of the points and the queries, which the
compiled search computes where no engine sees it. So the search runs on values (`_search`, nondifferentiable)
and the distances are computed again as numpy code from the points the tree was built from and the
queries: `|p[i] - x|` in the Minkowski p-norm, differentiable in both.

The tree keeps those points as a field (`_od_points`), stored by the stand-ins of its construction as code
the engines record: a `cKDTree(data)` made under a context is a `DifferentiatedTree` (a `cKDTree` subclass
holding fields), a `KDTree`'s own `__init__` (its `super().__init__(data)`) stores it on the KDTree itself.
A tree built elsewhere (before the context, or natively) holds constants: its points are its `data`.

At a tie the nearest points are not a function of the input: `query` measures one candidate more than it
returns and takes the k smallest by `np.sort`, whose rules refuse a tie whose entries part (the k-th and
(k+1)-th nearest exchanging places) rather than give one side's derivative (`rules.ties`).

Refused (UnsupportedCase): a periodic box (`boxsize`), whose distances wrap around; `tree.data` of a tree
of differentiated points read under a context (the compiled tree's copy carries no derivative: the array it
was built from does). Methods that return distances or sums over the points (`sparse_distance_matrix`,
`count_neighbors` with weights) stay compiled functions without rules: refused where they meet derivatives.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import _ckdtree
from scipy.spatial import KDTree as _KDTree

from ..registry import registry
from ._util import unsupported

__all__ = ["DifferentiatedTree", "DifferentiatedKDTree", "kd_tree", "kd_tree_python", "kd_query"]

_CKDTree = _ckdtree.cKDTree
_C_QUERY = _CKDTree.query  # (the compiled method itself, called on values by `_search`)


class DifferentiatedTree(_CKDTree):
    """A `cKDTree` made under a context: the same compiled tree, with a `__dict__` holding the points it was
    built from (`_od_points`), which may carry derivatives: its `data` is those points (the compiled copy
    carries none)."""

    @property
    def data(self):
        return np.asarray(self._od_points, dtype=float)

    @property
    def maxes(self):
        return np.amax(np.asarray(self._od_points, dtype=float), axis=0)

    @property
    def mins(self):
        return np.amin(np.asarray(self._od_points, dtype=float), axis=0)

    @property
    def tree(self):
        raise _values_refused("its nodes (`tree.tree`: split values and bounding boxes, copies of the points')")


class DifferentiatedKDTree(_KDTree, DifferentiatedTree):
    """scipy's `KDTree` made under a context (its Python methods over the compiled tree's), its `data` the
    points it was built from."""

    tree = DifferentiatedTree.tree


def _values_refused(what: str):
    return unsupported("cKDTree", f"{what} of a k-d tree built under a context: the compiled tree's copies of "
                       "the points carry no derivative",
                       fix="compute what you need from the points themselves (the tree's indices are right)")


def _build(cls, data, leafsize, compact_nodes, copy_data, balanced_tree, boxsize):
    """The compiled tree of the points' values (which points are near: no derivative)."""
    return cls(data, leafsize, compact_nodes, copy_data, balanced_tree, boxsize)


def _search(tree, x, k, eps, p, distance_upper_bound, workers):
    """The compiled search on values: (distances, indices) of the k nearest (as scipy gives them)."""
    return _C_QUERY(tree, x, k, eps, p, distance_upper_bound, workers)


def _constant_points(tree):
    """The points of a tree not built under a context (a tree made there is a `DifferentiatedTree`): constants,
    whatever an activity analysis guesses of the tree."""
    return tree.data


registry.nondifferentiable(_build, _search, _constant_points)


def _refuse_box(boxsize) -> None:
    if boxsize is not None:
        raise unsupported("cKDTree", "with a periodic box (boxsize=), whose distances wrap around",
                          fix="compute the periodic distances with numpy (np.remainder of the differences)")


def kd_tree(data, leafsize=16, compact_nodes=True, copy_data=False, balanced_tree=True, boxsize=None):
    """`cKDTree(data, ...)` under a context: the compiled tree of the values, keeping the points themselves."""
    _refuse_box(boxsize)
    tree = _build(DifferentiatedTree, data, leafsize, compact_nodes, copy_data, balanced_tree, boxsize)
    tree._od_points = data
    return tree


def kd_tree_python(data, leafsize=10, compact_nodes=True, copy_data=False, balanced_tree=True, boxsize=None):
    """`KDTree(data, ...)` (scipy's Python subclass) under a context: its tree of the values, keeping the points
    (as a field of its own: a KDTree has a `__dict__`)."""
    _refuse_box(boxsize)
    tree = _build(DifferentiatedKDTree, data, leafsize, compact_nodes, copy_data, balanced_tree, boxsize)
    tree._od_points = data
    return tree


def kd_query(tree, x, k=1, eps=0.0, p=2.0, distance_upper_bound=np.inf, workers=1):
    """`tree.query(x, k, ...)`: (distances, indices) of the k nearest points, the distances computed from the
    points and x as code."""
    points = getattr(tree, "_od_points", None)
    if points is None:  # (a tree of constants, built outside the context or natively: its compiled copy; the
        points = _constant_points(tree)  # queries' derivatives still count)
    ks = list(range(1, k + 1)) if np.ndim(k) == 0 else list(k)  # (an int: the k nearest; a list: those)
    more = list(range(1, max(ks) + 2))  # (one candidate more: a tie at the edge of the k is seen)
    d, i = _search(tree, x, more, eps, p, distance_upper_bound, workers)
    n = tree.n
    found = i < n
    near = np.asarray(points, dtype=float)[np.where(found, i, 0)]  # (..., k + 1, m)
    x = np.asarray(x, dtype=float)
    diff = near - x[..., None, :]
    if p == np.inf:
        dist = np.max(np.abs(diff), axis=-1)
    elif p == 1:
        dist = np.sum(np.abs(diff), axis=-1)
    elif p == 2:
        dist = np.sqrt(np.sum(diff * diff, axis=-1))
    else:
        dist = np.sum(np.abs(diff) ** p, axis=-1) ** (1.0 / p)
    dist = np.sort(np.where(found, dist, np.inf), axis=-1)
    picked = np.asarray(ks) - 1
    d = dist[..., picked]
    i = i[..., picked]
    if np.ndim(k) == 0 and k == 1:  # (scipy's shapes: no axis of neighbours for k=1, a float for one point)
        d, i = d[..., 0], i[..., 0]
        if np.ndim(d) == 0:
            return float(d), int(i)
    return d, i


registry.set(_CKDTree, stand_in=kd_tree)
registry.set(_KDTree, stand_in=kd_tree_python)
registry.set(_C_QUERY, stand_in=kd_query)  # (a Cython method: bound, its function found by the engines)


def _compiled(method, tree, *args, **kwargs):
    return method(tree, *args, **kwargs)


registry.nondifferentiable(_compiled)


def _which(method):
    """A stand-in for the compiled `method` answering which points are within a distance (indices, piecewise
    constant in the points): the compiled method on the values."""
    def which(tree, *args, **kwargs):
        return _compiled(method, tree, *args, **kwargs)
    which.__name__ = which.__qualname__ = f"cKDTree.{method.__name__}"
    registry.set(method, stand_in=which)


for _method in (_CKDTree.query_ball_point, _CKDTree.query_ball_tree, _CKDTree.query_pairs):
    _which(_method)


def sparse_distance_matrix(tree, other, max_distance, p=2.0, output_type="dok_matrix"):
    """The compiled distances between two trees' points: refused where either was built under a context (its
    points may carry derivatives the compiled copies lack); two trees of constants, on their values."""
    if isinstance(tree, DifferentiatedTree) or isinstance(other, DifferentiatedTree):
        raise _values_refused("`sparse_distance_matrix` (distances computed from the compiled copies)")
    return _compiled(_CKDTree.sparse_distance_matrix, tree, other, max_distance, p, output_type)


def count_neighbors(tree, other, r, p=2.0, weights=None, cumulative=True):
    """Counts of pairs within r: piecewise constant in the points; with weights, sums of the weights (linear in
    them, which the compiled code hides): refused."""
    if weights is not None:
        raise unsupported("cKDTree.count_neighbors", "weights (sums of the weights over the pairs, computed in "
                          "compiled code)", fix="count with `query_ball_tree` and sum the weights with numpy")
    return _compiled(_CKDTree.count_neighbors, tree, other, r, p, weights, cumulative)


registry.set(_CKDTree.sparse_distance_matrix, stand_in=sparse_distance_matrix)
registry.set(_CKDTree.count_neighbors, stand_in=count_neighbors)
