"""Elementwise numpy rules against central finite differences: one spec line per case, plus closed forms
for ties, masks, dtypes and the coverage of every numpy ufunc."""

import math

import numpy as np
import pytest

import contexts.rules.numpy  # noqa: F401  (registers every numpy rule)
from contexts.rules.registry import registry

from tests.fd import check_rule

_rng = np.random.default_rng(20261122)


def R(*shape, lo=-1.0, hi=1.0):
    """Random reals in [lo, hi] (away from the kinks at 0 for the caller to pick)."""
    return _rng.uniform(lo, hi, shape)


def P(*shape):
    """Random positives in [0.2, 0.9] (inside every domain: log, sqrt, arcsin, arctanh, ...)."""
    return R(*shape, lo=0.2, hi=0.9)


def C(*shape):
    return _rng.uniform(0.2, 0.9, shape) + 1j * _rng.uniform(-0.9, 0.9, shape)


UNARY_POSITIVE = [np.negative, np.positive, np.reciprocal, np.square, np.sqrt, np.cbrt, np.absolute,
                  np.fabs, np.exp, np.exp2, np.expm1, np.log, np.log2, np.log10, np.log1p, np.sin,
                  np.cos, np.tan, np.arcsin, np.arccos, np.arctan, np.sinh, np.cosh, np.tanh,
                  np.arcsinh, np.arctanh, np.deg2rad, np.rad2deg, np.degrees, np.radians, np.conjugate,
                  np.sinc, np.real, np.modf, np.frexp]
UNARY_COMPLEX = [np.negative, np.reciprocal, np.square, np.sqrt, np.exp, np.expm1, np.log, np.log2,
                 np.log10, np.log1p, np.sin, np.cos, np.tan, np.arcsin, np.arccos, np.arctan, np.sinh,
                 np.cosh, np.tanh, np.arcsinh, np.arccosh, np.arctanh, np.conjugate, np.absolute,
                 np.real, np.imag, np.angle, np.power]
BINARY = [np.add, np.subtract, np.multiply, np.divide, np.power, np.float_power, np.arctan2, np.hypot,
          np.logaddexp, np.logaddexp2, np.maximum, np.minimum, np.fmax, np.fmin, np.fmod, np.remainder,
          np.divmod]
SHAPE_PAIRS = [((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3)), ((2, 3), ())]

# (key, args, kwargs, indices of differentiable arguments)
SPECS = [
    *[(f, (P(2, 3),), {}, (0,)) for f in UNARY_POSITIVE],
    *[(f, (P(),), {}, (0,)) for f in UNARY_POSITIVE],                        # 0-d arrays
    *[(f, (0.37,), {}, (0,)) for f in (np.sin, np.exp, np.sqrt, np.log, np.tanh, np.absolute)],
    (np.arccosh, (1.5 + P(4),), {}, (0,)),
    *[(f, (-P(4),), {}, (0,)) for f in (np.absolute, np.fabs, np.cbrt, np.sinc, np.negative)],
    *[(f, (C(3),), {}, (0,)) for f in UNARY_COMPLEX if f is not np.power],
    (np.angle, (C(3), True), {}, (0,)),
    (np.angle, (C(3),), {"deg": True}, (0,)),
    (np.power, (C(3), C(3)), {}, (0, 1)),
    *[(f, (P(*sa), P(*sb) + 0.05), {}, (0, 1)) for f in BINARY for sa, sb in SHAPE_PAIRS],
    *[(f, (P(3), 0.43), {}, (0, 1)) for f in BINARY],                          # Python float argument
    *[(f, (0.61, P(2, 2)), {}, (0, 1)) for f in BINARY],
    *[(f, (C(2, 3), C(3)), {}, (0, 1)) for f in (np.add, np.subtract, np.multiply, np.divide)],
    (np.multiply, (P(3), C(3)), {}, (0, 1)),                                   # real times complex
    (np.power, (P(3), 3), {}, (0,)),
    (np.power, (R(3), 2), {}, (0,)),
    (np.power, (R(3), 0), {}, (0,)),
    (np.power, (P(2, 3), np.array([1, 2, 3])), {}, (0,)),
    (np.arctan2, (R(3), -P(3)), {}, (0, 1)),
    (np.copysign, (P(3), R(3)), {}, (0,)),
    (np.copysign, (-P(3), R(3)), {}, (0,)),
    (np.ldexp, (P(2, 3), np.array([1, -2, 3])), {}, (0,)),
    (np.clip, (R(2, 3), -0.3, 0.4), {}, (0, 1, 2)),
    (np.clip, (R(2, 3), R(3) * 0.5 - 0.4, R(2, 1) * 0.2 + 0.5), {}, (0, 1, 2)),
    (np.clip, (R(2, 3), None, 0.2), {}, (0, 2)),
    (np.clip, (R(2, 3),), {"a_min": -0.2, "a_max": 0.3}, (0,)),
    (np.clip, (R(2, 3),), {"min": -0.2}, (0,)),
    ((np.ndarray, "clip"), (R(2, 3), -0.3, 0.4), {}, (0, 1, 2)),
    ((np.ndarray, "clip"), (R(2, 3),), {"max": 0.1}, (0,)),
    ((np.ndarray, "conj"), (C(3),), {}, (0,)),
    (np.where, (R(2, 3) > 0, R(2, 3), R(3)), {}, (1, 2)),
    (np.nan_to_num, (np.array([0.3, np.nan, np.inf, -0.2]),), {}, (0,)),
    (np.where, (R(3) > 0, 0.5, R(2, 3)), {}, (1, 2)),
    (np.where, (R(2, 3) > 0, C(3), C(2, 3)), {}, (1, 2)),
]


def _id(spec):
    key, args, kwargs, _ = spec
    name = key[1] if isinstance(key, tuple) else getattr(key, "__name__", str(key))
    shapes = ",".join(type(a).__name__ if not isinstance(a, np.ndarray)
                      else f"{a.dtype.kind}{a.shape}" for a in args)
    return f"{name}({shapes}{',' if kwargs else ''}{','.join(kwargs)})"


@pytest.mark.parametrize("spec", SPECS, ids=[_id(s) for s in SPECS])
def test_rule_matches_finite_differences(spec):
    key, args, kwargs, diff = spec
    check_rule(key, *args, diff=diff, **kwargs)


def _adjoint(key, dy, *args, **kwargs):
    y = key(*args, **kwargs)
    return registry.get(key).adjoint(dy, y, *args, **kwargs)


def test_maximum_minimum_ties_split_the_cotangent_evenly():
    a, b = np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0, 4.0])
    for f, expect_a, expect_b in ((np.maximum, [0.5, 1, 0], [0.5, 0, 1]),
                                  (np.minimum, [0.5, 0, 1], [0.5, 1, 0]),
                                  (np.fmax, [0.5, 1, 0], [0.5, 0, 1])):
        ga, gb = _adjoint(f, np.ones(3), a, b)
        np.testing.assert_array_equal(ga, expect_a)
        np.testing.assert_array_equal(gb, expect_b)
    x = np.array([0.3, -2.0])
    np.testing.assert_array_equal(sum(_adjoint(np.maximum, np.ones(2), x, x)), [1.0, 1.0])


def test_fmax_routes_past_nan():
    ga, gb = _adjoint(np.fmax, np.ones(2), np.array([np.nan, 1.0]), np.array([2.0, np.nan]))
    np.testing.assert_array_equal(ga, [0.0, 1.0])
    np.testing.assert_array_equal(gb, [1.0, 0.0])


def test_power_at_zero_is_finite():
    (g, gp) = _adjoint(np.power, 1.0, np.zeros(2), np.array([0.0, 2.0]))
    np.testing.assert_array_equal(g, [0.0, 0.0])
    np.testing.assert_array_equal(gp, [0.0, 0.0])


def test_zero_gradient_at_kinks_of_abs_sinc_hypot():
    np.testing.assert_array_equal(_adjoint(np.absolute, np.ones(1), np.zeros(1))[0], [0.0])
    np.testing.assert_array_equal(_adjoint(np.sinc, np.ones(1), np.zeros(1))[0], [0.0])
    np.testing.assert_array_equal(_adjoint(np.hypot, 1.0, 0.0, 0.0), (0.0, 0.0))


@pytest.mark.parametrize("key", [np.sin, np.exp, np.sqrt, np.tanh, np.multiply, np.maximum, np.divide,
                                 np.power, np.absolute, np.clip, np.where, np.logaddexp, np.square])
def test_float32_stays_float32(key):
    x = P(2, 3).astype(np.float32)
    args = {np.clip: (x, np.float32(0.3), np.float32(0.6)), np.where: (x > 0.5, x, x[0])}.get(
        key, (x,) * key.nin if isinstance(key, np.ufunc) else (x,))
    rule = registry.get(key)
    y = key(*args)
    for ct, a in zip(rule.adjoint(np.ones_like(y), y, *args), args):
        if ct is not None:
            assert ct.dtype == np.float32 and ct.shape == np.shape(a)
    tangents = tuple(np.ones_like(a) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else None
                     for a in args)
    _, dy = rule.frule(tangents, *args)
    assert dy.dtype == np.float32


def test_integer_arguments_get_no_cotangent():
    x = P(3)
    assert _adjoint(np.power, np.ones(3), x, 2)[1] is None
    assert _adjoint(np.multiply, np.ones(3), x, np.arange(3))[1] is None
    assert _adjoint(np.sin, np.ones(3), np.arange(3)) == (None,)


def test_python_float_gets_python_float():
    g = _adjoint(np.multiply, np.ones((2, 3)), 2.5, P(2, 3))[0]
    assert type(g) is float


def test_where_keyword_masks_the_cotangent():
    x, mask = P(4), np.array([True, False, True, False])
    out = np.zeros(4)
    (g,) = _adjoint(np.sin, np.ones(4), x, where=mask, out=out)
    np.testing.assert_allclose(g, np.where(mask, np.cos(x), 0.0))


def test_complex_abs_follows_zygote_convention():
    z = 3.0 + 4.0j
    (g,) = _adjoint(np.absolute, 1.0, z)
    assert g == pytest.approx(0.6 + 0.8j)       # d|z|/dx + i d|z|/dy
    (g,) = _adjoint(np.imag, np.ones(1), np.array([z]))
    np.testing.assert_allclose(g, [1j])


def test_nondifferentiable_ufuncs_are_marked():
    for f in (np.floor, np.round, np.isnan, np.greater, np.rint, (np.ndarray, "round")):
        rule = registry.rules[f] if isinstance(f, tuple) else registry.get(f)
        assert rule.nondifferentiable
        assert rule.adjoint(1.0, 1.0, 0.3) == (None,)
    # np.sign: piecewise constant for reals, z/|z| (smooth) for complex (tests/contexts/test_complex_paths.py)
    assert registry.get(np.sign).adjoint(1.0, 1.0, 0.3) == (None,)


def test_every_numpy_ufunc_has_a_rule_or_is_marked():
    missing = sorted(name for name, f in vars(np).items()
                     if isinstance(f, np.ufunc) and registry.get(f) is None)
    assert not missing, f"numpy ufuncs with neither a rule nor a nondifferentiable mark: {missing}"


def test_elementwise_partials_are_exposed_for_other_contexts():
    rule = registry.get(np.sin)
    assert rule.kind == "elementwise"
    assert rule.meta["partials"][0](None, 0.0) == pytest.approx(math.cos(0.0))


# -- property: forward and reverse agree under broadcasting (<adj(dy), t> == <dy, frule(t)>) ---------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(BINARY[:-1] + [np.copysign, np.where]), hnp.mutually_broadcastable_shapes(
    num_shapes=2, max_dims=3, max_side=3), st.integers(0, 2**32 - 1))
def test_forward_and_reverse_agree_under_broadcasting(key, shapes, seed):
    rng = np.random.default_rng(seed)
    a, b = (rng.uniform(0.3, 0.9, s) for s in shapes.input_shapes)
    args = (a > 0.6, a, b) if key is np.where else (a, b)
    rule = registry.get(key)
    y = key(*args)
    dy = rng.standard_normal(np.shape(y))
    ts = tuple(None if np.asarray(v).dtype == bool else rng.standard_normal(np.shape(v)) for v in args)
    cts = rule.adjoint(dy, y, *args)
    _, jt = rule.frule(ts, *args)
    lhs = sum(np.sum(c * t) for c, t in zip(cts, ts) if c is not None and t is not None)
    np.testing.assert_allclose(lhs, np.sum(dy * jt), rtol=1e-9, atol=1e-12)
    for c, v in zip(cts, args):
        assert c is None or np.shape(c) == np.shape(v)


HOT = sorted((k for k, r in registry.rules.items() if isinstance(k, np.ufunc) and r.hot is not None),
             key=lambda u: u.__name__)


def test_every_unary_elementwise_ufunc_has_the_fast_cotangent():
    # made from the partial, not declared apart: each real unary ufunc with partials gets one
    assert {np.sin, np.cos, np.exp, np.log, np.log1p, np.sqrt, np.tanh, np.arctan, np.tan} <= set(HOT)


@pytest.mark.parametrize("ufunc", HOT, ids=lambda u: u.__name__)
def test_fast_cotangent_is_dy_times_the_central_difference(ufunc):
    # the cotangent reverse mode takes for a float64 array and a cotangent of its shape, against
    # finite differences of the ufunc itself; the inputs are left as they were
    x = np.linspace(0.25, 0.85, 7) if ufunc is not np.arccosh else np.linspace(1.25, 1.85, 7)
    dy = _rng.normal(size=x.shape)
    x0, dy0 = x.copy(), dy.copy()
    h = 1e-6
    want = dy * (ufunc(x + h) - ufunc(x - h)) / (2 * h)
    got = registry.rules[ufunc].hot(dy, ufunc(x), x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(dy, dy0)
