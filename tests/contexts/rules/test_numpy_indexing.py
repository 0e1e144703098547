"""Indexing rules and `setitem_adjoint` against finite differences and closed forms."""

import numpy as np
import pytest

from contexts.rules.numpy.indexing import is_basic_index, setitem_adjoint
from contexts.rules.registry import registry

from tests.fd import check_rule

_rng = np.random.default_rng(5)


def R(*shape):
    return _rng.standard_normal(shape)


GETITEM = (np.ndarray, "__getitem__")
X = R(4, 5, 6)

INDICES = [
    1, -1, slice(1, 3), slice(None, None, -1), slice(4, 0, -2), (Ellipsis, 2), (None, 1, Ellipsis),
    (1, 2, 3), np.array([0, 0, 2]), [3, 1, 3, 3], (np.array([0, 1, 1]), slice(None), np.array([2, 2, 2])),
    X > 0, (X[:, :, 0] > 0,), (slice(None), [1, 1], None), (np.array([[0, 0], [1, 3]]),),
    (Ellipsis, [5, 0, 5]), (0, Ellipsis, None, -1), (np.array([0, 0]), 1, np.array([2, 2])),
    (slice(None, None, -1), X[0] > 0),
]


@pytest.mark.parametrize("idx", INDICES, ids=[f"idx{i}" for i in range(len(INDICES))])
def test_getitem_matches_finite_differences(idx):
    check_rule(GETITEM, X, idx)


@pytest.mark.parametrize("x, idx", [
    (R(5), np.array([1, 1, 4, -1])),
    (R(5) + 1j * R(5), np.array([1, 1, 4])),
    (R(5).astype(np.float32), [0, 0, 3]),
])
def test_getitem_on_vectors(x, idx):
    tol = {"h": 1e-2, "rtol": 1e-3, "atol": 1e-3} if x.dtype == np.float32 else {}
    check_rule(GETITEM, x, idx, **tol)


def test_getitem_repeated_indices_accumulate():
    x = np.arange(4.0)
    (dx, _) = registry.get(x.__getitem__).adjoint(np.array([1.0, 2.0, 3.0]), x[[2, 2, 0]], x, [2, 2, 0])
    np.testing.assert_array_equal(dx, [3.0, 0.0, 3.0, 0.0])


def test_getitem_zero_dimensional_result():
    y = X[1, 2, 3]
    assert isinstance(y, np.float64)
    (dx, _) = registry.get(X.__getitem__).adjoint(1.5, y, X, (1, 2, 3))
    assert dx[1, 2, 3] == 1.5 and dx.sum() == 1.5 and dx.shape == X.shape


def test_getitem_of_integer_array_is_not_differentiable():
    x = np.arange(4)
    assert registry.get(x.__getitem__).adjoint(np.ones(2), x[:2], x, slice(0, 2)) == (None, None)


@pytest.mark.parametrize("key, args, kwargs", [
    (np.take, (R(5), [1, 1, 3]), {}),
    (np.take, (R(3, 4), [1, 1, 3]), {"axis": 1}),
    ((np.ndarray, "take"), (R(3, 4), [[0, 2], [1, 1]], 0), {}),
    (np.take_along_axis, (R(3, 4), np.argsort(R(3, 4), axis=1)), {"axis": 1}),
    (np.take_along_axis, (R(3, 4), np.array([[0], [2], [1]]), 1), {}),
    (np.take_along_axis, (R(3, 4), np.array([[0], [2], [2], [1], [0]])), {"axis": 0}),
    (np.take_along_axis, (R(1, 4), np.array([[0], [2], [3]])), {"axis": 1}),
    (np.tril, (R(4, 4),), {}),
    (np.triu, (R(3, 4), 1), {}),
])
def test_take_and_masks_match_finite_differences(key, args, kwargs):
    check_rule(key, *args, **kwargs)


def test_basic_index_detection():
    assert is_basic_index((1, slice(None), None, Ellipsis))
    assert not is_basic_index([0, 1]) and not is_basic_index((0, np.array([1]))) and not is_basic_index(True)


def _assigned(x, idx, v):
    out = x.copy()
    out[idx] = v
    return out


@pytest.mark.parametrize("shape, idx, v", [
    ((4, 5), (slice(1, 3), 2), 1.0),
    ((4, 5), 2, R(5)),
    ((4, 5), 2, R(1)),
    ((4, 5), (slice(None), [1, 1, 3]), R(4, 3)),
    ((4, 5), (slice(None, None, -1), slice(0, 5, 2)), R(4, 3)),
    ((6,), np.array([0, 2, 0]), R(3)),
    ((4, 5), R(4, 5) > 0, 2.5),
])
def test_setitem_adjoint_is_the_transpose_of_assignment(shape, idx, v):
    """<dx_before, dx0> + <dv, dv0> == <dx, d(assign)(dx0, dv0)>, the assignment being linear in (x, v)."""
    x, dx = R(*shape), R(*shape)
    dx_saved = dx.copy()
    dx_before, dv = setitem_adjoint(dx, x[idx], idx, v)
    dx0 = R(*shape)
    dv0 = R(*np.shape(v)) if np.ndim(v) else float(R(1)[0])
    lhs = np.sum(dx_before * dx0) + np.sum(np.asarray(dv) * dv0)
    rhs = np.sum(dx * _assigned(dx0, idx, dv0))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-12)
    assert np.shape(dv) == np.shape(v)
    assert type(dv) is type(v)
    np.testing.assert_array_equal(dx, dx_saved)  # dx itself is left alone


def test_setitem_adjoint_inplace_reuses_the_buffer():
    dx = np.ones(4)
    dx_before, dv = setitem_adjoint(dx, None, slice(1, 3), np.zeros(2), inplace=True)
    assert dx_before is dx and dx.tolist() == [1.0, 0.0, 0.0, 1.0] and dv.tolist() == [1.0, 1.0]
