"""Values reaching a function by keyword, found wrong on lmfit and statsmodels (each against central
differences in every mode):

- `g(x, **dict(a=p[0], b=p[1]))` (lmfit's Model calls its lineshapes so): the dict constructor's reverse
  rule dropped the cotangent a callee handed back for it as a plain dict (only a read of its items'
  boxes reached the values): gradient and Hessian 0;
- numpy functions given their array by keyword (`np.percentile(a=v, q=30)`, statsmodels' `qn_scale`): the
  rules take their arrays by position, so the gradient was 0 (percentile, convolve) or the rule crashed
  (cumsum, mean, take, clip, diff; forward: sort, dot, outer, norm). They are now run by position.
"""

import numpy as np
import pytest

from contexts import gradient, hessian, jacfwd, jvp
from tests import fd

P = np.array([1.5, 0.5, -0.7])
V = np.array([0.3, -1.2, 2.2, 0.9, -0.4, 1.6])
W = np.linspace(0.5, 1.5, 6)


def _right_in_both_modes(f, x):
    """gradient and jacfwd of f at x equal central differences; returns those."""
    want = fd.gradient(f, x)[0]
    np.testing.assert_allclose(gradient(f, x)[0], want, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(jacfwd(f, x), want, rtol=1e-7, atol=1e-9)
    return want


def _line(x, a=1.0, b=0.0, c=0.0):
    return a * x + b * b * np.sin(c + x)


KWARGS_CASES = {
    "dict(a=, b=)": lambda p: _line(2.0, **dict(a=p[0], b=p[1], c=p[2])),
    "dict(zip(names, p))": lambda p: _line(2.0, **dict(zip(("a", "b", "c"), p))),
    "dict({...})": lambda p: _line(2.0, **dict({"a": p[0], "b": p[1]}, c=p[2])),
    "literal": lambda p: _line(2.0, **{"a": p[0], "b": p[1], "c": p[2]}),
    "lineshape": lambda p: np.sum(np.exp(-(np.linspace(-1, 1, 5) - dict(zip(("c",), p[2:]))["c"]) ** 2) * p[0]),
}


@pytest.mark.parametrize("case", list(KWARGS_CASES))
def test_values_through_a_built_dict_of_keywords(case):
    f = KWARGS_CASES[case]
    _right_in_both_modes(f, P)
    np.testing.assert_allclose(hessian(f, P), fd.hessian(f, P), rtol=1e-5, atol=1e-5)


NUMPY_CASES = {
    "percentile": lambda v: np.percentile(a=v, q=30),
    "convolve": lambda v: np.sum(np.convolve(a=v, v=W) ** 2),
    "cumsum": lambda v: np.sum(W * np.cumsum(a=v) ** 2),
    "mean": lambda v: np.mean(a=v ** 2),
    "var": lambda v: np.var(a=v),
    "take": lambda v: np.sum(np.take(a=v, indices=[1, 2]) ** 2),
    "clip": lambda v: np.sum(W * np.clip(a=v, a_min=-1.0, a_max=2.0) ** 2),
    "diff": lambda v: np.sum(W[:-1] * np.diff(a=v) ** 2),
    "sort": lambda v: np.sum(W * np.sort(a=v)),
    "dot": lambda v: np.dot(a=v, b=W) ** 2,
    "outer": lambda v: np.sum(np.outer(a=v, b=W) ** 2),
    "norm": lambda v: np.linalg.norm(x=v),
    "quantile": lambda v: np.quantile(a=v * 2.0, q=0.3),
    "average": lambda v: np.average(a=v, weights=v * v),
}


@pytest.mark.parametrize("case", list(NUMPY_CASES))
def test_numpy_arrays_by_keyword(case):
    f = NUMPY_CASES[case]
    want = _right_in_both_modes(f, V)
    d = np.linspace(0.5, 1.5, V.size)  # (jvp: the tangent twin, and numpy's __array_function__ on one dual)
    assert jvp(f, (V,), (d,))[1] == pytest.approx(np.sum(want * d), rel=1e-7, abs=1e-9)


def test_qn_scale():
    robust = pytest.importorskip("statsmodels.robust.scale")
    x = np.array([0.3, -1.2, 2.2, 0.9, -0.4, 1.6, -2.7, 0.05, 1.1, -0.8])
    try:
        g = gradient(robust.qn_scale, x)[0]
    except Exception as e:  # refused by name (its kernel `_qn` has no rule) is fine; a zero is not
        from overdub.errors import OverdubError
        assert isinstance(e, OverdubError)
        return
    np.testing.assert_allclose(g, fd.gradient(robust.qn_scale, x)[0], rtol=1e-6, atol=1e-9)
