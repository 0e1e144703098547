"""A DataFrame's own arithmetic on differentiated values (session 73, PyPortfolioOpt's risk models on a price
frame): pandas wraps each result by pinning its labels, `out.columns = self.columns`, through the Cython
`AxisProperty` descriptor; reverse mode refused that store as a data descriptor's with a differentiated value.
Labels of strings, integers or dates carry no derivative (`leaves.carries_none`): stored as they are now.

Forward mode's duals do not go into pandas' blocks (`sanitize_array` converts them): `jvp` of such code is
reverse mode's Jacobian times the tangents, as `derivative` and `jacfwd` already were after a forward refusal.

Every derivative is compared with central differences (`tests/fd.py`).
"""

from __future__ import annotations

import numpy as np
import pytest

from contexts import gradient, jacfwd, jvp
from tests.fd import gradient as fd_gradient
from tests.fd import jacobian as fd_jacobian

pd = pytest.importorskip("pandas")

P = np.array([100.0, 101.0, 99.5, 102.0, 103.5, 101.0, 100.0, 104.0, 102.5, 99.0])


def returns_cov(p):
    df = pd.DataFrame(p.reshape(5, 2), columns=["A", "B"])
    rets = df.pct_change().dropna(how="all")
    return np.asarray(rets.cov()).ravel()


def frame_arith(p):
    df = pd.DataFrame(p.reshape(5, 2), columns=["A", "B"], index=pd.date_range("2024-01-01", periods=5))
    out = (df * 2 - df / 3) * df + 1.5
    return np.asarray(out).ravel()


def frame_ratio(p):
    df = pd.DataFrame(p.reshape(5, 2), columns=["A", "B"])
    return np.asarray(df.iloc[1:] / df.iloc[0] - 1).ravel()


CASES = [returns_cov, frame_arith, frame_ratio]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_reverse_right(f):
    got = gradient(lambda p: f(p) @ np.linspace(1.0, 2.0, f(P).size), P)[0]
    want = fd_gradient(lambda p: f(p) @ np.linspace(1.0, 2.0, f(P).size), P)[0]
    assert np.allclose(got, want, rtol=1e-6, atol=1e-9), (got, want)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_jvp_right(f):
    t = np.linspace(-1.0, 1.0, P.size)
    y, dy = jvp(f, (P,), (t,))
    want = fd_jacobian(f, P) @ t
    assert np.allclose(y, f(P), rtol=1e-12)
    assert np.allclose(dy, want, rtol=1e-6, atol=1e-9), (dy, want)


def test_jacfwd_right():
    assert np.allclose(jacfwd(returns_cov, P), fd_jacobian(returns_cov, P), rtol=1e-6, atol=1e-9)


def test_jvp_with_a_constant_argument():
    def f(p, scale):
        return np.asarray(pd.DataFrame(p.reshape(5, 2), columns=["A", "B"]).pct_change().sum()) * scale

    t = np.cos(np.arange(P.size))
    y, dy = jvp(f, (P, 3.0), (t, None))
    assert np.allclose(dy, fd_jacobian(lambda p: f(p, 3.0), P) @ t, rtol=1e-6, atol=1e-9)


def test_float_labels_still_refused_as_stores():
    """Labels of floats may carry a derivative: their store through the descriptor is refused, not dropped."""
    from overdub.errors import OverdubError

    def f(x):
        df = pd.DataFrame({"a": [1.0, 2.0]})
        df.index = pd.Index([x, x + 1.0])
        return float(df.index[0]) * 2.0 + df["a"].sum()

    try:
        g = gradient(f, 0.5)
    except OverdubError:
        return
    assert np.isclose(g[0] if isinstance(g, tuple) else g, 2.0), g


# -- rows and columns sliced: `BlockManager.get_slice` in Cython, its stand-in --------------------------------

def rows_sliced(p):
    df = pd.DataFrame(p.reshape(5, 2), columns=["A", "B"])
    return np.asarray(df.iloc[1:4]).ravel() @ np.arange(1.0, 7.0) + np.asarray(df[::2]).sum()


def columns_sliced(p):
    df = pd.DataFrame(p.reshape(5, 2), columns=["A", "B"])
    df["C"] = df["A"] * df["B"]
    return np.asarray(df.iloc[:, 1:]).ravel() @ np.linspace(0.5, 1.5, 10)


def filled(p):
    df = pd.DataFrame(p.reshape(5, 2), columns=["A", "B"])
    holes = df.mask(df > 101.5)  # (NaN where above)
    return np.asarray(holes.ffill().fillna(0.0)).sum() + np.asarray(holes.bfill(limit=1).fillna(1.0)).sum() * 2


def masked(p):
    df = pd.DataFrame(p.reshape(5, 2), columns=["A", "B"])
    return np.asarray(df.mask(df.ffill().isnull(), 0) * df).sum()


@pytest.mark.parametrize("f", [rows_sliced, columns_sliced, filled, masked], ids=lambda f: f.__name__)
def test_slices_and_fills_right(f):
    got = gradient(f, P)[0]
    want = fd_gradient(f, P)[0]
    assert np.allclose(got, want, rtol=1e-6, atol=1e-9), (got, want)


def test_rows_sliced_not_zero():
    """`df.iloc[1:]` ran natively (the manager's blocks are Cython fields): its gradient was silently 0."""
    g = gradient(lambda p: np.asarray(pd.DataFrame(p.reshape(5, 2)).iloc[1:]).sum(), P)[0]
    assert np.array_equal(g, np.r_[0.0, 0.0, np.ones(8)])


def test_manager_slice_stand_in_is_pandas_own():
    from contexts.rules.pandas import manager_get_slice
    df = pd.DataFrame({"a": np.arange(6.0), "b": np.arange(6), "c": np.arange(6.0) * 2, "d": list("uvwxyz")})
    for axis in (0, 1):
        for sl in (slice(1, None), slice(0, 2), slice(None, None, 2), slice(3, 1)):
            a, b = df._mgr.get_slice(sl, axis=axis), manager_get_slice(df._mgr, sl, axis=axis)
            pd.testing.assert_frame_equal(pd.DataFrame._from_mgr(a, axes=a.axes), pd.DataFrame._from_mgr(b, axes=b.axes))


def test_fill_stand_ins_are_pandas_own():
    """pandas' pad/backfill loops (1-d and 2-d) against the stand-ins on random masks and limits: values and masks."""
    from pandas._libs import algos

    from contexts.rules.pandas_kernels import backfill_inplace, pad_inplace
    rng = np.random.default_rng(0)
    for trial in range(600):
        shape = (int(rng.integers(1, 4)), int(rng.integers(0, 9))) if trial % 2 else (int(rng.integers(0, 9)),)
        v = rng.normal(size=shape)
        m = (rng.random(shape) < 0.5).astype(np.uint8)
        limit = [None, 1, 2, 3][trial % 4]
        for name, mine in (("pad", pad_inplace), ("backfill", backfill_inplace)):
            native = getattr(algos, name + ("_2d" if len(shape) == 2 else "") + "_inplace")
            a, am = v.copy(), m.copy()
            native(a, am, limit=limit)
            b, bm = v.copy(), m.copy()
            mine(b, bm, limit=limit)
            assert np.array_equal(a, b, equal_nan=True) and np.array_equal(am, bm), (name, v, m, limit)


# -- pandas' own arrays on an ndarray: the Cython base's methods and `.T` --------------------------------------

def test_backed_array_methods_right():
    from pandas.core.arrays.numpy_ import NumpyExtensionArray as Backed

    w = np.arange(1.0, 7.0)
    uses = [lambda a: a.T, lambda a: a.ravel(), lambda a: a.copy(), lambda a: a.reshape(3, 2),
            lambda a: a.swapaxes(0, 1), lambda a: a[1], lambda a: a.transpose()]
    x = np.arange(6.0).reshape(2, 3) + 1.0
    for use in uses:
        def f(x, use=use):
            out = np.asarray(use(Backed(x * x)))
            return out.ravel() @ w[:out.size]
        got = gradient(f, x)[0]
        want = fd_gradient(f, x)[0]
        assert np.allclose(got, want, rtol=1e-6, atol=1e-9), (got, want)


def test_unregistered_computed_c_property_refused(monkeypatch):
    """A property computed by compiled code (a new object at each read) of an object holding differentiated
    values, without registered code: refused (natively its cotangent went to a field nothing read: 0)."""
    from pandas._libs.arrays import NDArrayBacked
    from pandas.core.arrays.numpy_ import NumpyExtensionArray as Backed

    from contexts.rules import leaves
    from overdub.errors import OverdubError

    monkeypatch.delitem(leaves.C_PROPERTIES, vars(NDArrayBacked)["T"])
    with pytest.raises(OverdubError, match="computed by compiled code"):
        gradient(lambda x: np.asarray(Backed(x * 2.0).T).sum(), np.ones((2, 3)))


# -- fills (docs/pandas.md's hazard 4: `ffill` through NumpyExtensionArray was silently 0 when first tried; the
# causes, Cython fields unseen by activity and `.T` computed in C, are closed above) ----------------------------

_HOLES = np.array([0, 0, 0, 1, 1, 0, 0, 1, 1, 0], bool)
_W = np.linspace(1.0, 2.0, 10)


def _holed(p):
    return np.where(_HOLES, np.nan, p)


FILLS = {
    "series_ffill": lambda p: np.nansum(np.asarray(pd.Series(_holed(p)).ffill()) * _W),
    "series_bfill": lambda p: np.nansum(np.asarray(pd.Series(_holed(p)).bfill()) * _W),
    "series_ffill_limit": lambda p: np.nansum(np.asarray(pd.Series(_holed(p)).ffill(limit=1)) * _W),
    "frame_ffill": lambda p: np.nansum(np.asarray(pd.DataFrame(_holed(p).reshape(5, 2)).ffill()).ravel() * _W),
    "frame_bfill_columns": lambda p: np.nansum(
        np.asarray(pd.DataFrame(_holed(p).reshape(5, 2)).bfill(axis=1)).ravel() * _W),
    "series_interpolate": lambda p: np.nansum(np.asarray(pd.Series(_holed(p)).interpolate()) * _W),
    "frame_interpolate": lambda p: np.nansum(np.asarray(pd.DataFrame(_holed(p).reshape(5, 2)).interpolate()).ravel() * _W),
    "fillna_by_series": lambda p: np.nansum(np.asarray(pd.Series(_holed(p)).fillna(pd.Series(p * 2))) * _W),
}


@pytest.mark.parametrize("name", sorted(FILLS))
def test_fills_right(name):
    f = FILLS[name]
    got = gradient(f, P)[0]
    want = fd_gradient(f, P)[0]
    assert np.allclose(got, want, rtol=1e-6, atol=1e-9), (got, want)
    assert np.count_nonzero(got) >= 5  # (the gradient of the values kept and filled: never the zero of hazard 4)
