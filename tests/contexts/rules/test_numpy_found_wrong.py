"""numpy functions that gave wrong derivatives silently (0, or a transposed gradient) or crashed the engine,
each now right against central differences or refused with an OverdubError, in every mode:

- `np.bincount(x, weights=w)`, `np.histogram(x, weights=w)`, `np.unique(x)` were declared constants (their
  counts and indices are; their sums of weights and unique values are not): 0;
- `np.matrix` (its `*` a matrix product: the rules' elementwise arithmetic on matrix cotangents
  transposed the gradient);
- structured arrays (fields, records): 0 in both modes;
- `np.lib.stride_tricks.sliding_window_view` / `as_strided`: a crash of the reverse pass (restoring the
  view's `flags.writeable`), forward mode refused; `np.meshgrid` in forward mode: a crash (`.shape = ...`
  on a dual)."""

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided, sliding_window_view

from contexts import gradient, hessian, jacfwd
from overdub.errors import OverdubError
from tests import fd

X = np.array([0.7, -1.3, 0.5, 2.1, 0.3, -0.8])
BINS = np.array([0, 1, 1, 0, 2, 2])


def bincount_by_position(v):
    return np.bincount(BINS, v * v) @ np.array([1.0, 2.0, 3.0])


def bincount_by_keyword(v):
    return np.bincount(BINS, weights=v * v, minlength=4)[2] * v[0]


def histogram_weights(v):
    counts, _ = np.histogram(v, bins=[-2.0, 0.0, 1.0, 3.0], weights=v * v)
    return counts @ np.array([1.0, 2.0, 3.0])


def histogram_uniform_weights(v):
    return np.histogram(v, bins=2, weights=np.exp(v))[0][1]


def histogram_edges(v):
    return np.histogram(v, bins=3)[1].sum() * v[1]


def unique_values(v):
    return (np.unique(v) * np.arange(6)).sum()


def unique_of_repeats(v):
    return (np.unique(np.concatenate([v, v[:2]])) ** 2).sum()


def unique_with_everything(v):
    vals, idx, inv, cnt = np.unique(v, return_index=True, return_inverse=True, return_counts=True)
    return (vals * cnt).sum() + (vals[inv] * v).sum()


def sliding(v):
    return sliding_window_view(v, 2).prod(axis=1).sum()


def sliding_2d(v):
    return sliding_window_view(v.reshape(2, 3), (2, 2)).prod(axis=(2, 3)).sum()


def sliding_transposed_axis(v):
    return sliding_window_view(v.reshape(2, 3).T, 2, axis=0).prod(axis=-1).sum()


def strided(v):
    return (as_strided(v, shape=(3, 2), strides=(2 * v.itemsize, v.itemsize)) ** 3).sum()


def meshgrids(v):
    a, b = np.meshgrid(v[:2], v[2:4], indexing="ij")
    c, d = np.meshgrid(v, v[1:3])
    return (a * b).sum() + (c * d * d).sum()


RIGHT = [bincount_by_position, bincount_by_keyword, histogram_weights, histogram_uniform_weights, histogram_edges,
         unique_values, unique_of_repeats, unique_with_everything, sliding, sliding_2d, sliding_transposed_axis,
         strided, meshgrids]
# (forward mode refuses np.histogram by name: numpy's _array_converter has no forward rule)
FORWARD_MAY_REFUSE = {histogram_weights, histogram_uniform_weights, histogram_edges}


@pytest.mark.parametrize("f", RIGHT, ids=lambda f: f.__name__)
def test_reverse_right(f):
    np.testing.assert_allclose(gradient(f, X)[0], fd.gradient(f, X)[0], rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", RIGHT, ids=lambda f: f.__name__)
def test_forward_right(f):
    try:
        got = jacfwd(f, X)
    except OverdubError:
        assert f in FORWARD_MAY_REFUSE
        return
    np.testing.assert_allclose(got, fd.gradient(f, X)[0], rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [sliding, bincount_by_position, unique_values], ids=lambda f: f.__name__)
def test_hessian(f):
    np.testing.assert_allclose(hessian(f, X), fd.hessian(f, X), rtol=1e-4, atol=1e-5)


def as_matrix_product(v):
    m = np.asmatrix(v[:4].reshape(2, 2))
    return float((m * m).sum())


def matrix_power(v):
    return float((np.matrix(v[:4].reshape(2, 2)) ** 2).sum())


def fields_from_pairs(v):
    s = np.array(list(zip(v[:3], v[3:])), dtype=[("a", float), ("b", float)])
    return (s["a"] * s["b"]).sum()


def fields_assigned(v):
    s = np.zeros(3, dtype=[("a", float), ("b", float)])
    s["a"] = v[:3]
    s["b"] = v[3:]
    return (s["a"] * s["b"]).sum()


def records(v):
    s = np.rec.fromarrays([v[:3], v[3:]], names="a,b")
    return (s["a"] * s["b"]).sum()


def outside_the_elements(v):
    return as_strided(v, shape=(2,), strides=(v.itemsize // 2,)).sum()


@pytest.mark.parametrize("mode", [gradient, jacfwd], ids=["reverse", "forward"])
@pytest.mark.parametrize("f", [fields_from_pairs, fields_assigned, records, outside_the_elements],
                         ids=lambda f: f.__name__)
def test_refused(f, mode):
    with pytest.raises(OverdubError):
        mode(f, X)


@pytest.mark.parametrize("mode", [gradient, jacfwd], ids=["reverse", "forward"])
@pytest.mark.parametrize("f", [as_matrix_product, matrix_power], ids=lambda f: f.__name__)
def test_matrix_products(f, mode):
    # (refused before np.matrix's products were differentiated as products, `rules.numpy.matrix`: the rules'
    # elementwise cotangents gave the elementwise square's 2x; forward mode's jacfwd answers by reverse mode)
    got = mode(f, X)
    np.testing.assert_allclose(got[0] if mode is gradient else got, fd.gradient(f, X)[0], rtol=1e-7, atol=1e-9)
