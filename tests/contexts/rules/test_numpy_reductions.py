"""Reduction, scan, norm and scipy.special rules against central finite differences (one spec line per
case, every axis/keepdims form), plus closed forms for zeros in prod, ties in max/min and dtypes."""

import numpy as np
import pytest

import contexts.rules.numpy  # noqa: F401  (registers every numpy rule)
from contexts.rules.registry import registry

from tests.fd import check_rule

sc = pytest.importorskip("scipy.special")

_rng = np.random.default_rng(20261123)


def R(*shape):
    return _rng.standard_normal(shape)


def C(*shape):
    return _rng.standard_normal(shape) + 1j * _rng.standard_normal(shape)


def U(*shape):
    return _rng.uniform(0.2, 0.8, shape)


def with_zeros(x, *where):
    x = x.copy()
    for idx in where:
        x[idx] = 0.0
    return x


def with_nans(x, *where):
    x = x.copy()
    for idx in where:
        x[idx] = np.nan
    return x


def M(name):
    return (np.ndarray, name)


AXES = [{}, {"axis": 0}, {"axis": 1}, {"axis": -1}, {"axis": (0, 2)}, {"axis": (2, 0, 1)},
        {"axis": None, "keepdims": True}, {"axis": 1, "keepdims": True}, {"axis": (0, 2), "keepdims": True}]
REDUCTIONS = [np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.var, np.std, np.nansum,
              np.nanmean, np.nanmax, np.nanmin, M("sum"), M("mean"), M("prod"), M("max"), M("min"),
              M("var"), M("std")]
X3 = R(2, 3, 4)
Z1 = with_zeros(U(3, 4), (1, 2))                          # one zero
Z2 = with_zeros(U(3, 4), (1, 2), (1, 0), (2, 3))          # two zeros in a row, one elsewhere
VEC, MAT = R(5), R(3, 4)

# (key, args, kwargs, indices of differentiable arguments)
SPECS = [
    *[(f, (X3,), kw, (0,)) for f in REDUCTIONS for kw in AXES],
    *[(f, (X3, 1), {}, (0,)) for f in (np.sum, M("sum"), np.mean, np.max, M("min"), np.var)],  # positional
    (np.sum, (X3, (0, 1), None, None, True), {}, (0,)),
    *[(f, (U(2, 3),), {}, (0,)) for f in (np.sum, np.prod, np.max)],
    *[(f, (np.array(0.7),), {}, (0,)) for f in (np.sum, np.mean, np.prod, np.max, np.cumsum)],
    *[(f, (R(4),), kw, (0,)) for f in (np.var, np.std, M("var"))
      for kw in ({"ddof": 1}, {"correction": 2}, {"axis": 0, "ddof": 1, "keepdims": True})
      if not (isinstance(f, tuple) and "correction" in kw)],                 # x.var() has no correction=
    (np.var, (X3, 1, None, None, 1), {}, (0,)),
    (np.std, (X3,), {"axis": (0, 1), "ddof": 1}, (0,)),
    (np.sum, (X3,), {"axis": 1, "where": X3 > 0}, (0,)),
    (np.mean, (X3,), {"axis": 1, "where": X3 > -0.5}, (0,)),
    (np.max, (X3,), {"axis": 1, "initial": -10.0}, (0,)),
    (np.sum, (X3,), {"initial": 2.0}, (0,)),
    *[(f, (Z,), kw, (0,)) for f in (np.prod, M("prod")) for Z in (Z1, Z2)
      for kw in ({}, {"axis": 0}, {"axis": 1}, {"axis": -1, "keepdims": True})],
    *[(f, (X3,), kw, (0,)) for f in (np.cumsum, np.cumprod, M("cumsum"), M("cumprod"))
      for kw in ({}, {"axis": 0}, {"axis": 1}, {"axis": -1})],
    *[(f, (Z,), kw, (0,)) for f in (np.cumprod, M("cumprod")) for Z in (Z1, Z2)
      for kw in ({}, {"axis": 0}, {"axis": 1})],
    (np.cumsum, (X3, 2), {}, (0,)),
    (np.nansum, (with_zeros(X3, (0, 1, 1)) + np.where(X3 > 1.2, np.nan, 0),), {"axis": 1}, (0,)),
    (np.nanmean, (X3 + np.where(X3 > 1.0, np.nan, 0),), {"axis": 2}, (0,)),
    *[(f, (with_nans(X3, (0, 1, 1), (1, 2, 3)),), kw, (0,)) for f in (np.nanvar, np.nanstd)
      for kw in ({}, {"axis": 1, "ddof": 1}, {"axis": (0, 2), "keepdims": True})],
    (np.ptp, (X3,), {"axis": 1}, (0,)),
    (np.ptp, (X3,), {}, (0,)),
    # complex inputs (Zygote's convention; var/std of complex are real)
    *[(f, (C(3, 4),), kw, (0,)) for f in (np.sum, np.mean, np.prod, np.var, np.std, np.cumsum,
                                           np.cumprod) for kw in ({}, {"axis": 0})],
    (np.prod, (with_zeros(C(3, 4), (1, 1)),), {"axis": 1}, (0,)),
    # np.linalg.norm: vector orders
    *[(np.linalg.norm, (VEC, o), {}, (0,)) for o in (None, 2, 1, np.inf, -np.inf, 3, 0.5, -1.5)],
    *[(np.linalg.norm, (X3,), {"ord": o, "axis": ax, "keepdims": kd}, (0,))
      for o in (None, 2, 1, np.inf, 3) for ax in (0, -1, (1,)) for kd in (False, True)],
    (np.linalg.norm, (X3,), {}, (0,)),
    (np.linalg.norm, (X3,), {"keepdims": True}, (0,)),
    (np.linalg.norm, (C(4),), {}, (0,)),
    (np.linalg.norm, (C(4), 1), {}, (0,)),
    (np.linalg.norm, (C(4), 3), {}, (0,)),
    # matrix orders
    *[(np.linalg.norm, (MAT, o), {}, (0,)) for o in ("fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf)],
    *[(np.linalg.norm, (X3, o, ax), {}, (0,))
      for o in ("fro", "nuc", 2, 1, np.inf) for ax in ((0, 1), (2, 0), (-1, -2))],
    (np.linalg.norm, (X3,), {"ord": "fro", "axis": (0, 2), "keepdims": True}, (0,)),
    (np.linalg.norm, (X3,), {"ord": 2, "axis": (1, 2), "keepdims": True}, (0,)),
    *[(np.linalg.norm, (C(3, 4), o), {}, (0,)) for o in ("fro", "nuc", 2, 1, np.inf)],
    # scipy.special
    *[(sc.logsumexp, (X3,), kw, (0,)) for kw in AXES],
    *[(sc.logsumexp, (X3,), dict(kw, b=U(2, 3, 4)), (0,)) for kw in AXES[:5]],
    (sc.logsumexp, (X3, 1, U(3, 1)), {}, (0, 2)),
    (sc.logsumexp, (X3, None, U(2, 3, 4) - 0.5), {"return_sign": True}, (0, 2)),
    (sc.logsumexp, (X3, (0, 1), U(2, 3, 4)), {"keepdims": True}, (0, 2)),
    *[(f, (X3,), kw, (0,)) for f in (sc.softmax, sc.log_softmax) for kw in ({}, {"axis": 1}, {"axis": -1})],
    *[(f, (R(2, 3),), {}, (0,)) for f in (sc.expit, sc.log_expit, sc.erf, sc.erfc, sc.ndtr, sc.log_ndtr)],
    *[(f, (U(2, 3),), {}, (0,)) for f in (sc.logit, sc.erfinv, sc.erfcinv, sc.gamma, sc.gammaln,
                                          sc.digamma)],
    (sc.xlogy, (R(2, 3), U(3)), {}, (0, 1)),
    (sc.xlog1py, (R(2, 3), U(2, 1)), {}, (0, 1)),
]


def _id(spec):
    key, args, kwargs, _ = spec
    name = f"x.{key[1]}" if isinstance(key, tuple) else getattr(key, "__name__", str(key))
    parts = [f"{a.dtype.kind}{a.shape}" if isinstance(a, np.ndarray) else repr(a) for a in args]
    parts += [f"{k}={'mask' if isinstance(v, np.ndarray) else v}" for k, v in kwargs.items()]
    return f"{name}({','.join(parts)})"


@pytest.mark.parametrize("spec", SPECS, ids=[_id(s) for s in SPECS])
def test_rule_matches_finite_differences(spec):
    key, args, kwargs, diff = spec
    check_rule(key, *args, diff=diff, **kwargs)


def _adjoint(key, dy, *args, **kwargs):
    y = key(*args, **kwargs)
    return registry.get(key).adjoint(dy, y, *args, **kwargs)[0]


def test_prod_with_zeros_closed_form():
    np.testing.assert_array_equal(_adjoint(np.prod, 1.0, np.array([2.0, 0.0, 3.0])), [0.0, 6.0, 0.0])
    np.testing.assert_array_equal(_adjoint(np.prod, 1.0, np.array([2.0, 0.0, 0.0])), [0.0, 0.0, 0.0])
    x = np.array([[0.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(_adjoint(np.prod, np.ones(2), x, axis=1), [[2.0, 0.0], [4.0, 3.0]])


def test_cumprod_with_zero_closed_form():
    # y = (2, 0, 0): dy_0/dx = (1, 0, 0), dy_1/dx = (0, 2, 0), dy_2/dx = (0, 2*3, 0)
    g = _adjoint(np.cumprod, np.ones(3), np.array([2.0, 0.0, 3.0]))
    np.testing.assert_array_equal(g, [1.0, 8.0, 0.0])


def test_max_min_ties_split_evenly():
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    np.testing.assert_allclose(_adjoint(np.max, np.ones(2), x, axis=1), [[0, .5, .5], [1 / 3] * 3])
    np.testing.assert_allclose(_adjoint(np.min, 1.0, x), [[1, 0, 0], [0, 0, 0]])
    np.testing.assert_allclose(_adjoint(np.linalg.norm, 1.0, np.array([-2.0, 2.0, 1.0]), np.inf),
                               [-0.5, 0.5, 0.0])


def test_std_of_constant_is_zero_not_nan():
    np.testing.assert_array_equal(_adjoint(np.std, 1.0, np.full(3, 2.0)), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(_adjoint(np.linalg.norm, 1.0, np.zeros(3)), [0.0, 0.0, 0.0])


def test_max_of_nan_routes_to_the_nan():
    np.testing.assert_array_equal(_adjoint(np.max, 1.0, np.array([1.0, np.nan, 2.0])), [0.0, 1.0, 0.0])


@pytest.mark.parametrize("key", [np.sum, np.mean, np.prod, np.max, np.var, np.std, np.cumsum, np.cumprod,
                                 np.linalg.norm, M("sum"), sc.logsumexp, sc.softmax])
def test_float32_stays_float32(key):
    x = _rng.uniform(0.5, 1.5, (3, 4)).astype(np.float32)
    rule = registry.rules[key] if isinstance(key, tuple) else registry.get(key)
    y = getattr(x, key[1])() if isinstance(key, tuple) else key(x)
    (g,) = rule.adjoint(np.ones_like(y), y, x)
    assert g.dtype == np.float32 and g.shape == x.shape
    _, t = rule.frule((np.ones_like(x),), x)
    assert np.asarray(t).dtype == np.float32


def test_cotangent_is_writable_and_fresh():
    x = R(3, 4)
    g = _adjoint(np.sum, 1.0, x)
    g += 1.0                                     # an engine may accumulate in place
    np.testing.assert_array_equal(g, np.full((3, 4), 2.0))


def test_axis_given_positionally_gets_none():
    x = R(3, 4)
    cts = registry.get(np.sum).adjoint(np.ones(4), np.sum(x, 0), x, 0)
    assert cts[1] is None and cts[0].shape == x.shape


def test_nondifferentiable_reductions_are_marked():
    for f in (np.argmax, np.argmin, np.all, np.any, np.count_nonzero):
        assert registry.get(f).nondifferentiable
    assert registry.rules[M("argmax")].nondifferentiable


# -- properties: pullbacks are linear, forward and reverse agree (<dy, J t> both ways) ----------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@st.composite
def _reduction_calls(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    ndim = len(shape)
    axis = draw(st.one_of(st.none(), st.integers(-ndim, ndim - 1),
                          st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True)
                          .map(tuple)))
    key = draw(st.sampled_from([np.sum, np.mean, np.prod, np.max, np.var, np.std, M("sum"), M("min"),
                                np.linalg.norm, sc.logsumexp]))
    kwargs = {"axis": axis, "keepdims": draw(st.booleans())}
    if key is np.linalg.norm and not (axis is None or isinstance(axis, int) or len(axis) <= 2):
        kwargs["axis"] = axis[:2]
    seed = draw(st.integers(0, 2**32 - 1))
    return key, shape, kwargs, seed


@settings(max_examples=150, deadline=None)
@given(_reduction_calls())
def test_reverse_is_linear_and_agrees_with_forward(call):
    key, shape, kwargs, seed = call
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
    rule = registry.rules[key] if isinstance(key, tuple) else registry.get(key)
    y = getattr(x, key[1])(**kwargs) if isinstance(key, tuple) else key(x, **kwargs)
    dy1, dy2 = rng.standard_normal(np.shape(y)), rng.standard_normal(np.shape(y))
    (g1,), (g2,) = rule.adjoint(dy1, y, x, **kwargs), rule.adjoint(dy2, y, x, **kwargs)
    (g12,) = rule.adjoint(2.0 * dy1 - dy2, y, x, **kwargs)
    np.testing.assert_allclose(g12, 2.0 * g1 - g2, rtol=1e-9, atol=1e-12)
    t = rng.standard_normal(shape)
    _, jt = rule.frule((t,), x, **kwargs)
    np.testing.assert_allclose(np.sum(g1 * t), np.sum(dy1 * jt), rtol=1e-9, atol=1e-12)
