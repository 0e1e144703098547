"""Rule defects the gen24 sweep found (session 44), each against central differences or a closed form.

W9 reverse np.matmul(axes=) took the gradient of a @ b; W2 eigh/pinvh's hessian at a repeated eigenvalue
was NaN (now refused where reverse mode refuses, and answered by forward over forward where that can);
W6 det's hessian at a singular matrix had arbitrary numbers; W7 cumprod's hessian with an exact zero
dropped d2/dx_zero dx_j; W5 nanstd over a slice with one distinct valid value was NaN; W3 struve /
modstruve at x < 0 for an integer order were NaN; W10 boxcox & co. in lambda at or near 0 (hessian 0 at
0, cancellation near it); C1 sort/partition crashed on a Refused cotangent; C2 interp(period=) with a
list x crashed."""

import warnings

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.special as sp

from contexts import gradient
from contexts.compose import hessian
from contexts.forward import derivative, jacfwd
from contexts.rules.registry import NoDerivative
from overdub.errors import OverdubError
from tests import fd


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def close(got, want, rtol=1e-5):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert not np.any(np.isnan(got)), got
    assert np.max(np.abs(got - want)) <= rtol * max(1.0, np.max(np.abs(want))), (got, want)


# -- W9: np.matmul(axes=) in reverse mode ------------------------------------------------------------------

_W = np.array([[1.0, 2.0], [3.0, 4.0]])


def _matmul_axes(x):
    a = x[:4].reshape(2, 2)
    b = np.cos(x[4:]).reshape(2, 2)
    return np.sum(np.matmul(a, b, axes=[(1, 0), (1, 0), (1, 0)]) * _W)  # = b @ a


def _matmul_axes_stacked(x):
    a = x[:12].reshape(3, 2, 2)  # core axes 0 and 2
    b = np.sin(x[12:20]).reshape(2, 4)
    return np.sum(np.matmul(a, b, axes=[(0, 2), (0, 1), (1, 2)]) ** 2)


def _matmul_axes_vector(x):
    return np.sum(np.matmul(np.cos(x[6:9]), x[:6].reshape(3, 2), axes=[(0,), (0, 1), (0,)]) ** 3)


@pytest.mark.parametrize("f, n", [(_matmul_axes, 8), (_matmul_axes_stacked, 20), (_matmul_axes_vector, 9)])
def test_matmul_axes_reverse_and_hessian(f, n):
    x = np.random.default_rng(3).standard_normal(n)
    close(gradient(f, x)[0], fd.gradient(f, x)[0])
    close(hessian(f, x), fd.hessian(f, x), rtol=1e-5)


# -- W2: eigh / pinvh hessian at a repeated eigenvalue -------------------------------------------------------

_W4 = np.arange(1.0, 17.0).reshape(4, 4)


def _eigh_inverse(x):  # V diag(1/w) V^T = inv(M): smooth; eigenvalue 5 repeated (constant)
    m = np.diag(np.concatenate([2.0 + x ** 2, [5.0, 5.0]]))
    w, v = np.linalg.eigh(m)
    return np.sum((v / w) @ v.T * _W4)


def _pinvh(x):
    return np.sum(sla.pinvh(np.diag(np.concatenate([2.0 + x ** 2, [5.0, 5.0]]))) * _W4)


def _scipy_eigh_inverse(x):
    w, v = sla.eigh(np.diag(np.concatenate([2.0 + x ** 2, [5.0, 5.0]])))
    return np.sum((v / w) @ v.T * _W4)


@pytest.mark.parametrize("f", [_eigh_inverse, _pinvh, _scipy_eigh_inverse])
def test_eigh_hessian_at_repeated_eigenvalue_is_no_nan(f):
    x = np.array([0.3, -0.7])
    close(hessian(f, x), fd.hessian(f, x), rtol=1e-5)


def test_eigh_hessian_where_the_cluster_splits_is_refused():
    def f(x):  # the eigenvectors of diag(5, 5) turned by the off-diagonal x0: no derivative at x0 = 0
        m = np.array([[5.0, 0.0], [0.0, 5.0]]) + x[0] * np.array([[0.0, 1.0], [1.0, 0.0]]) + x[1] * np.eye(2)
        w, v = np.linalg.eigh(m)
        return np.sum(v[:, 0] * np.array([1.0, 2.0])) * w[0]
    with pytest.raises(OverdubError):
        hessian(f, np.array([0.0, 0.3]))


# -- W6: det's hessian at a singular matrix ------------------------------------------------------------------

def test_det_hessian_at_singular_2x2():
    exact = np.zeros((4, 4))  # d2 (a d - b c): 1 at (a, d), -1 at (b, c)
    exact[0, 3] = exact[3, 0] = 1.0
    exact[1, 2] = exact[2, 1] = -1.0
    x = np.array([1.0, 2.0, 2.0, 4.0])
    close(hessian(lambda v: np.linalg.det(v.reshape(2, 2)), x), exact)
    close(hessian(lambda v: sla.det(v.reshape(2, 2)), x), exact)


@pytest.mark.parametrize("build", [
    lambda x: np.outer(x, x) + np.diag(x * np.array([0.0, 0.0, 1.0])),  # rank 2: det is 0 for every x
    lambda x: np.outer(x, x) + np.diag([0.0, 0.0, 1.0]) * x[0],  # (forward over forward: np.diag of a list)
    lambda x: np.outer(x, x) + np.outer(x[::-1], np.ones(3)),
])
def test_det_hessian_rank_deficient_3x3(build):
    def f(x):
        return np.linalg.det(build(x))
    x = np.array([0.4, -1.1, 0.8])
    close(hessian(f, x), fd.hessian(f, x), rtol=1e-5)


# -- W7: cumprod's hessian with an exact zero ------------------------------------------------------------------

_C = np.array([1.0, 2.0, 3.0, -1.5, 0.7])


@pytest.mark.parametrize("f", [
    lambda x: np.sum(np.cumprod(x) * _C),
    lambda x: np.sum(np.multiply.accumulate(x) * _C),
    lambda x: np.sum(np.nancumprod(x) * _C),
    lambda x: np.sum(np.cumulative_prod(x, include_initial=True)[1:] * _C),
    lambda x: np.sum(np.cumprod(x[:4].reshape(2, 2), axis=0) * _C[:4].reshape(2, 2)),
    lambda x: np.sum(np.cumprod(x[[0, 1, 4, 3]].reshape(2, 2), axis=1) ** 2),
])
@pytest.mark.parametrize("x", [[0.5, 0.0, 2.0, 1.2, 1.3], [0.5, 0.0, 2.0, 0.0, 1.3]])
def test_cumprod_hessian_with_zero(f, x):
    x = np.array(x)
    close(hessian(f, x), fd.hessian(f, x), rtol=1e-5)


def test_cumprod_hessian_repro_is_symmetric():
    x = np.array([0.5, 0.0, 2.0])
    h = hessian(lambda v: np.sum(np.cumprod(v) * np.array([1.0, 2.0, 3.0])), x)
    close(h, [[0.0, 8.0, 0.0], [8.0, 0.0, 1.5], [0.0, 1.5, 0.0]])


# -- W5: nanstd over a slice whose valid entries are constant ------------------------------------------------

def _nanstd(x):
    t = x.reshape(2, 2).copy()
    t[0, 0] = np.nan  # row 0: one valid entry, its std 0 whatever x[1] is
    return np.sum(np.nanstd(t, axis=1) * np.array([1.0, 2.0]))


def _std_where(x):
    t = np.concatenate([[np.nan], x[1:], [1.0, 1.0]]).reshape(2, 3)
    return np.sum(np.std(t, axis=1, where=~np.isnan(t)) * np.array([1.0, 2.0]))


def _nanvar(x):
    t = x.reshape(2, 2).copy()
    t[0, 0] = np.nan
    return np.sum(np.nanvar(t, axis=1) * np.array([1.0, 2.0]))


@pytest.mark.parametrize("f", [_nanstd, _std_where, _nanvar])
def test_nanstd_constant_valid_slice(f):
    x = np.array([0.3, -0.8, 1.1, 0.5])
    want = fd.gradient(f, x)[0]
    close(gradient(f, x)[0], want)
    close(jacfwd(f, x), want)
    close(hessian(f, x), fd.hessian(f, x), rtol=1e-5)


# -- W3: struve / modstruve at x < 0, integer order --------------------------------------------------------

@pytest.mark.parametrize("fn", [sp.struve, sp.modstruve])
@pytest.mark.parametrize("v", [1, 2, 3])
@pytest.mark.parametrize("x0", [-0.7, -2.3])
def test_struve_negative_x_integer_order(fn, v, x0):
    def f(x):
        return fn(v, x)
    want = fd.derivative(f, x0)
    close(gradient(f, x0)[0], want)
    close(derivative(f, x0), want)
    close(hessian(lambda x: fn(v, x[0]) * x[0], np.array([x0])),
          fd.hessian(lambda x: fn(v, x[0]) * x[0], np.array([x0])), rtol=1e-5)


# -- W10: Box-Cox in lambda at and near 0 ---------------------------------------------------------------------

@pytest.mark.parametrize("lam", [0.0, 1e-9, 1e-12, -0.03, 0.12])
def test_boxcox_lambda_second_derivative(lam):
    x = np.array([1.5, lam])
    f = lambda v: sp.boxcox(v[0], v[1])
    h = hessian(f, x)
    if abs(lam) < 1e-6:  # d2/dl2 (x^l - 1) / l at 0: log(x)^3 / 3; d/dl: log(x)^2 / 2
        assert abs(h[1, 1] - np.log(1.5) ** 3 / 3) < 1e-8
        assert abs(gradient(f, x)[0][1] - np.log(1.5) ** 2 / 2) < 1e-10
    close(h, fd.hessian(f, x), rtol=1e-5)
    close(gradient(f, x)[0], fd.gradient(f, x)[0])


@pytest.mark.parametrize("fn", [sp.boxcox1p, sp.inv_boxcox, sp.inv_boxcox1p])
@pytest.mark.parametrize("lam", [0.0, 1e-9, 0.06, 0.5])
def test_boxcox_family_lambda_hessian(fn, lam):
    x = np.array([0.7, lam])
    f = lambda v: fn(v[0], v[1])
    close(hessian(f, x), fd.hessian(f, x), rtol=1e-5)
    close(gradient(f, x)[0], fd.gradient(f, x)[0])


def test_inv_boxcox_lambda_closed_form_at_zero():
    y = 1.5  # x = exp(log1p(l y) / l): d2x/dl2 at 0 = e^y (y^4 / 4 + 2 y^3 / 3)
    h = hessian(lambda v: sp.inv_boxcox(y, v[0]), np.array([0.0]))
    assert abs(h[0, 0] - np.exp(y) * (y ** 4 / 4 + 2 * y ** 3 / 3)) < 1e-8


# -- C1: sort / partition with a Refused cotangent -----------------------------------------------------------

def _sorted_copy(v):
    w = v.copy()
    w.sort()
    return w


def _partitioned_copy(v):
    w = v.copy()
    w.partition(1)
    return w


@pytest.mark.parametrize("op", [np.sort, lambda v: np.sort(v, axis=None), lambda v: np.partition(v, 1),
                                _sorted_copy, _partitioned_copy])
def test_sort_passes_refused_cotangent(op):
    x = np.array([0.3, -0.8, 1.1, 0.5])
    with pytest.raises(NoDerivative, match="struve"):  # (struve has no derivative in its order v)
        gradient(lambda v: np.sum(sp.struve(0.5 + op(v) ** 2, 1.2)), x)


# -- C2: interp(period=) with x a list --------------------------------------------------------------------

def test_interp_period_list_x():
    def f(fp):
        return np.sum(np.interp([0.2, 2.9, -0.4], [0.0, 1.0, 2.0, 2.5], fp, period=3.0) ** 2)
    fp = np.array([0.3, -0.7, 1.7, 1.2])
    close(gradient(f, fp)[0], fd.gradient(f, fp)[0])


def test_interp_period_list_of_differentiated_x():
    def f(x, fp):
        return np.sum(np.interp([x[0], 2.9 * x[1], -0.4], [0.0, 1.0, 2.0, 2.5], fp, period=3.0) ** 2)
    x, fp = np.array([0.2, 1.0]), np.array([0.3, -0.7, 1.7, 1.2])
    for got, want in zip(gradient(f, x, fp), fd.gradient(f, x, fp)):
        close(got, want)
