"""Shape rules against central finite differences: one spec line per case."""

import numpy as np
import pytest

import contexts.rules.numpy.shapes  # noqa: F401  (registers the rules)
from contexts.rules.numpy._util import UnsupportedCase
from contexts.rules.registry import NoDerivative, registry

from tests.fd import check_rule

_rng = np.random.default_rng(4)


def R(*shape):
    return _rng.standard_normal(shape)


def M(name):
    return (np.ndarray, name)


# (key, args, kwargs); the first argument is the differentiable one
SPECS = [
    (np.reshape, (R(2, 3), (3, 2)), {}),
    (np.reshape, (R(2, 3), -1), {}),
    (np.reshape, (R(2, 3), (3, -1)), {"order": "F"}),
    (M("reshape"), (R(2, 3), 3, 2), {}),
    (M("reshape"), (R(2, 3), (6,)), {}),
    (M("reshape"), (R(2, 3), -1), {"order": "F"}),
    (np.ravel, (R(2, 3),), {}),
    (np.ravel, (R(2, 3), "F"), {}),
    (M("ravel"), (R(2, 3),), {}),
    (M("flatten"), (R(2, 3),), {}),
    (M("flatten"), (R(2, 3), "F"), {}),
    (np.transpose, (R(2, 3, 4),), {}),
    (np.transpose, (R(2, 3, 4), (1, 2, 0)), {}),
    (np.transpose, (R(2, 3, 4),), {"axes": (2, 0, -2)}),
    (M("transpose"), (R(2, 3, 4),), {}),
    (M("transpose"), (R(2, 3, 4), 1, 2, 0), {}),
    (M("transpose"), (R(2, 3, 4), (2, 0, 1)), {}),
    (np.matrix_transpose, (R(2, 3, 4),), {}),
    (np.swapaxes, (R(2, 3, 4), 0, 2), {}),
    (M("swapaxes"), (R(2, 3, 4), -1, 1), {}),
    (np.moveaxis, (R(2, 3, 4), 0, -1), {}),
    (np.moveaxis, (R(2, 3, 4), (0, 1), (2, 0)), {}),
    (np.squeeze, (R(2, 1, 3, 1),), {}),
    (np.squeeze, (R(2, 1, 3, 1),), {"axis": 1}),
    (M("squeeze"), (R(1, 3),), {}),
    (np.expand_dims, (R(2, 3), 1), {}),
    (np.expand_dims, (R(2, 3),), {"axis": (0, -1)}),
    (np.atleast_2d, (R(3),), {}),
    (np.broadcast_to, (R(3, 1), (2, 3, 4)), {}),
    (np.flip, (R(2, 3),), {}),
    (np.flip, (R(2, 3), 1), {}),
    (np.flip, (R(2, 3, 4),), {"axis": (0, 2)}),
    (np.fliplr, (R(2, 3),), {}),
    (np.flipud, (R(2, 3),), {}),
    (np.roll, (R(2, 3), 2), {}),
    (np.roll, (R(2, 3), -1, 1), {}),
    (np.roll, (R(2, 3, 4), (1, 2)), {"axis": (0, 2)}),
    (np.tile, (R(2, 3), 2), {}),
    (np.tile, (R(2, 3), (2, 1, 3)), {}),
    (np.tile, (R(3), (2, 2)), {}),
    (np.repeat, (R(2, 3), 2), {}),
    (np.repeat, (R(2, 3), 2, 1), {}),
    (np.repeat, (R(2, 3), [1, 0, 3]), {"axis": 1}),
    (np.repeat, (R(2, 3), [2, 1]), {"axis": 0}),
    (M("repeat"), (R(2, 3), 3), {}),
    (np.pad, (R(2, 3), 1), {}),
    (np.pad, (R(2, 3), ((1, 2), (0, 3))), {}),
    (np.pad, (R(2, 3), (1, 2)), {"constant_values": 3.0}),
    (np.pad, (R(3, 4), 2), {"mode": "edge"}),
    (np.pad, (R(3, 4), 2, "reflect"), {}),
    (np.pad, (R(3, 4), ((1, 2), (3, 1))), {"mode": "symmetric"}),
    (np.pad, (R(3, 4), 5), {"mode": "wrap"}),
    (np.sort, (R(3, 4),), {}),
    (np.sort, (R(3, 4), 0), {}),
    (np.sort, (R(3, 4),), {"axis": None}),
    (np.copy, (R(2, 3),), {}),
    (M("copy"), (R(2, 3),), {}),
    (np.asarray, (R(2, 3),), {}),
]

LIST_SPECS = [
    (np.concatenate, ([R(2, 3), R(1, 3)],), {}),
    (np.concatenate, ([R(2, 3), R(2, 1)], 1), {}),
    (np.concatenate, ([R(2, 3), R(4)],), {"axis": None}),
    (np.stack, ([R(2, 3), R(2, 3)],), {}),
    (np.stack, ([R(2, 3), R(2, 3)],), {"axis": -1}),
    (np.hstack, ([R(2), R(3)],), {}),
    (np.hstack, ([R(2, 1), R(2, 3)],), {}),
    (np.hstack, ([1.0, R(2)],), {}),
    (np.vstack, ([R(3), R(2, 3)],), {}),
    (np.split, (R(6, 2), 3), {}),
    (np.split, (R(2, 6), [1, 4]), {"axis": 1}),
    (np.array_split, (R(7), 3), {}),
    (np.array, ([1.0, 2.0, 3.0],), {}),
    (np.array, ([[1.0, 2.0], [3.0, 4.0]],), {}),
    (np.asarray, ([R(2), R(2)],), {}),
    (np.array, ((0.5, R(1)[0]),), {}),
]


def _id(spec):
    key, args, kwargs = spec
    name = key[1] if isinstance(key, tuple) else key.__name__
    first = f"list{len(args[0])}" if isinstance(args[0], (list, tuple)) else "x".join(map(str, args[0].shape))
    return f"{name}-{first}-{','.join(map(str, args[1:]))}-{','.join(map(str, kwargs))}"


@pytest.mark.parametrize("spec", SPECS + LIST_SPECS, ids=[_id(s) for s in SPECS + LIST_SPECS])
def test_rule_matches_finite_differences(spec):
    key, args, kwargs = spec
    check_rule(key, *args, **kwargs)


def test_astype_casts_the_cotangent_back():
    x = R(2, 3)
    rule = registry.get(x.astype)
    (dx,) = rule.adjoint(np.ones((2, 3), np.float32), x.astype(np.float32), x)
    assert dx.dtype == np.float64
    assert rule.adjoint(np.ones(3), np.arange(3.0), np.arange(3)) == (None,)
    check_rule(M("astype"), x, np.float32, h=1e-3, rtol=1e-3, atol=1e-3)


def test_list_argument_gets_a_list_of_cotangents():
    a, b = R(2, 3), R(1, 3)
    (cts,) = registry.get(np.concatenate).adjoint(np.ones((3, 3)), np.concatenate([a, b]), [a, b])
    assert isinstance(cts, list) and [c.shape for c in cts] == [(2, 3), (1, 3)]
    (cts,) = registry.get(np.array).adjoint(np.array([1.0, 2.0]), np.array([0.5, 0.25]), [0.5, 0.25])
    assert cts == [1.0, 2.0] and all(type(c) is float for c in cts)


def test_split_with_unused_pieces():
    x = R(6)
    y = np.split(x, 3)
    (dx, _) = registry.get(np.split).adjoint([None, np.ones(2), None], y, x, 3)
    np.testing.assert_array_equal(dx, [0, 0, 1, 1, 0, 0])


def test_sort_with_ties_read_alike_sends_each_cotangent_to_one_element():
    x = np.array([2.0, 1.0, 2.0, 0.0])
    (dx,) = registry.get(np.sort).adjoint(np.array([1.0, 2.0, 3.0, 3.0]), np.sort(x), x)
    np.testing.assert_array_equal(dx, [3.0, 2.0, 3.0, 1.0])


def test_sort_with_ties_read_apart_is_refused_where_nothing_checks_it():
    # (the tied 2.0s go to places read with weights 3 and 4: no derivative, unless the two are copies of
    # one value, which only a recording's check by forward mode could tell: `rules.ties`)
    x = np.array([2.0, 1.0, 2.0, 0.0])
    (dx,) = registry.get(np.sort).adjoint(np.array([1.0, 2.0, 3.0, 4.0]), np.sort(x), x)
    with pytest.raises(NoDerivative, match="np.sort at a tie"):
        np.asarray(dx)


def test_pad_mode_without_rule_says_so():
    x = R(3)
    with pytest.raises(UnsupportedCase, match="linear_ramp"):
        registry.get(np.pad).adjoint(np.ones(5), np.pad(x, 1, mode="linear_ramp"), x, 1, mode="linear_ramp")


def test_nondifferentiable_functions_are_marked():
    for fn in (np.shape, np.argsort, np.nonzero, np.zeros_like, np.searchsorted):
        assert registry.get(fn).nondifferentiable
