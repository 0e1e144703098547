"""Sweep 23's silent wrong sparsity patterns: each pattern must hold every nonzero of the central-difference
Jacobian (Hessian) at the point, sparse Jacobians must equal it, or the detector must refuse clearly."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

from contexts.sparsity import TracedBranchError, hessian_sparsity, jacobian_sparsity, sparse_jacobian

from tests import fd

from ._pattern import nonzero

MODES = ("global", "local")
X = np.array([0.5, 1.4, 0.9, 0.7, 1.1, 0.6])
XF = np.array([0.53, 1.37, 0.91, 0.74, 1.12, 0.63])  # away from the jumps of floor, modf, masks, ties


def assert_covers(f, x, mode, values=True):
    """Every entry finite differences see at x is in the pattern; sparse_jacobian equals them (values=False:
    forward mode refuses f, the pattern alone)."""
    P = jacobian_sparsity(f, x, mode=mode).toarray()
    J = fd.jacobian(f, x, matrix=True)
    assert P.shape == J.shape
    missed = np.argwhere(nonzero(J) & ~P)
    assert not len(missed), f"missed Jacobian entries {missed.tolist()}"
    if values:
        np.testing.assert_allclose(sparse_jacobian(f, x, P).toarray(), J, atol=1e-6)


def assert_covers_hessian(f, x, mode):
    P = hessian_sparsity(f, x, mode=mode).toarray()
    missed = np.argwhere(nonzero(fd.hessian(f, x, matrix=True), tol=1e-4) & ~P)
    assert not len(missed), f"missed Hessian entries {missed.tolist()}"


# -- 1. writes through views that numpy's functions return ----------------------------------------------

VIEWS = {
    "np.reshape": lambda z: np.reshape(z, (2, 3)),
    "np.ravel": lambda z: np.ravel(z),
    "np.transpose": lambda z: np.transpose(z.reshape(2, 3)),
    "np.swapaxes": lambda z: np.swapaxes(z.reshape(2, 3), 0, 1),
    "np.moveaxis": lambda z: np.moveaxis(z.reshape(2, 3), 0, 1),
    "np.split": lambda z: np.split(z, 2)[0],
    "np.array_split": lambda z: np.array_split(z, 2)[1],
    "np.hsplit": lambda z: np.hsplit(z, 3)[1],
    "np.atleast_1d": np.atleast_1d,
    "np.atleast_2d": np.atleast_2d,
    "np.atleast_3d": np.atleast_3d,
    "np.expand_dims": lambda z: np.expand_dims(z, 0),
    "np.squeeze": lambda z: np.squeeze(z[None]),
    "np.flip": np.flip,
    "np.fliplr": lambda z: np.fliplr(z.reshape(2, 3)),
    "np.rot90": lambda z: np.rot90(z.reshape(2, 3)),
    "np.real": np.real,
    ".real": lambda z: z.real,
    "np.matrix_transpose": lambda z: np.matrix_transpose(z.reshape(2, 3)),
    ".mT": lambda z: z.reshape(2, 3).mT,
    ".view()": lambda z: z.view(),
    "np.unstack": lambda z: np.unstack(z.reshape(2, 3))[0],
    "sliding_window_view": lambda z: sliding_window_view(z, 2, writeable=True)[::2],
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(VIEWS))
def test_write_through_view_function(name, mode):
    def f(x):
        z = x * 1.0
        v = VIEWS[name](z)
        v *= x[0]  # into z
        return z
    assert_covers(f, X, mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["np.reshape", "np.split", "np.transpose", "np.flip", "np.atleast_2d"])
def test_read_through_view_function_after_base_write(name, mode):
    def f(x):
        z = x * 1.0
        v = VIEWS[name](z)
        z[1:4] = x[5] * x[:3]
        return np.ravel(v) * 1.0
    assert_covers(f, X, mode)


@pytest.mark.parametrize("mode", MODES)
def test_ode_right_hand_side_split_views(mode):
    def rhs(y):
        dydt = np.zeros_like(y)
        du, dv = np.split(dydt, 2)
        u, v = y[:3], y[3:]
        du[:] = 1 + u * u * v - 4 * u
        dv[:] = 3 * u - u * u * v
        return dydt
    assert_covers(rhs, X, mode)


def test_atleast_1d_of_several_arrays():
    assert_covers(lambda x: np.atleast_1d(x[0], x[1:])[1] * x[0], X, "local")
    assert_covers(lambda x: np.concatenate(np.atleast_2d(x[0], x[1:]), axis=1).ravel(), X, "global")


# -- 2. imaginary parts ---------------------------------------------------------------------------------

IMAG = {
    "exp(1j x).imag": lambda x: np.exp(1j * x).imag,
    "np.imag(z)": lambda x: np.imag(x[:3] + 1j * x[3:]),
    "imag(conj(z) (a - 2j))": lambda x: np.imag(np.conj(x[:3] + 1j * x[3:]) * (x[:3] - 2j)),
    "imag(x 1j)": lambda x: np.imag(x * 1j),
    "z.imag * a": lambda x: (x[:3] + 1j * x[3:]).imag * x[:3],
    "write z.real": lambda x: _write_real(x),
    "complex(a, b).imag": lambda x: np.array([complex(x[0], x[1]).imag * x[2], complex(x[3]).real]),
}


def _write_real(x):
    z = x[:3] + 1j * x[3:]
    z.real[:] = x[0]  # the imaginary part keeps x[3:]
    return np.imag(z) + np.real(z)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(IMAG))
def test_imaginary_part(name, mode):
    assert_covers(IMAG[name], X, mode)


@pytest.mark.parametrize("mode", MODES)
def test_imaginary_part_hessian(mode):
    assert_covers_hessian(lambda x: np.sum(np.imag((x[:3] + 1j * x[3:]) ** 2)), X, mode)


# -- 3, 4. ufuncs of two outputs; outputs written into out= -------------------------------------------

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [lambda x: np.modf(x * 2)[0], lambda x: np.frexp(x)[0],
                               lambda x: np.divmod(x, 0.7)[1], lambda x: (lambda d, i: d * i)(*np.modf(2 * x))],
                         ids=["modf", "frexp", "divmod", "modf-unpacked"])
def test_two_output_ufuncs(f, mode):
    assert_covers(f, XF, mode)


@pytest.mark.parametrize("mode", MODES)
def test_two_output_ufunc_hessian(mode):
    assert_covers_hessian(lambda x: np.sum(np.modf(x * x[::-1])[0]), XF, mode)


def _divmod_out_tuple(x):
    q, r = np.empty(6), np.empty(6)
    np.divmod(x * 2, 0.7, out=(q, r))
    return r * r


def _divmod_out_positional(x):
    q, r = np.empty(6), np.empty(6)
    np.divmod(x * 2, 0.7, q, r)
    return r * r


def _modf_out_positional(x):
    a, b = np.empty(6), np.empty(6)
    np.modf(x * 2, a, b)
    return a * a


def _positional_out(ufunc, nin):
    def f(x):
        o = np.empty(6)
        ufunc(*((x,) if nin == 1 else (x, x[::-1] * 0.9)), o)
        return o * o
    return f


def _sum_positional_out(x):
    o = np.zeros(3)
    np.sum(x.reshape(2, 3) * x[0], 0, None, o)
    return o


def _where_out(x):
    o = x * 2.0
    np.multiply(x, x[0], out=o, where=x > 0.8)  # o keeps 2x where the mask is off
    return o


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [_divmod_out_tuple, _divmod_out_positional, _modf_out_positional,
                               _positional_out(np.add, 2), _positional_out(np.multiply, 2),
                               _positional_out(np.negative, 1), _positional_out(np.sin, 1),
                               _sum_positional_out, _where_out],
                         ids=["divmod-out-tuple", "divmod-positional", "modf-positional", "add", "multiply",
                              "negative", "sin", "sum-positional", "where-out"])
def test_out_arrays(f, mode):
    # (forward mode refuses a two-output ufunc's out=: the pattern alone there)
    assert_covers(f, XF, mode, values=f not in (_divmod_out_tuple, _divmod_out_positional, _modf_out_positional))


# -- 5. np.unique ----------------------------------------------------------------------------------------

def test_unique_global_refuses():
    with pytest.raises(TracedBranchError, match="unique"):
        jacobian_sparsity(lambda x: np.unique(x ** 2), X)


def test_unique_local():
    assert_covers(lambda x: np.unique(x ** 2), X, "local")


# -- 6. local mode: max/min with where= and NaN, sum with where=, min/max with key= ---------------------

@pytest.mark.parametrize("f", [lambda x: np.max(x, where=x < 1.0, initial=-1.0),
                               lambda x: np.nanmin(np.where(x > 0.6, x, np.nan)),
                               lambda x: np.nanmax(np.where(x < 1.0, x, np.nan)),
                               lambda x: np.fmax.reduce(np.where(x < 1.0, x, np.nan)),
                               lambda x: np.maximum.reduce(x, where=x < 1.0, initial=-1.0),
                               lambda x: x.min(where=x > 0.6, initial=5.0),
                               lambda x: np.max(x, where=x > 5.0, initial=3.0) * x[0]],
                         ids=["max-where", "nanmin", "nanmax", "fmax.reduce", "maximum.reduce-where",
                              "method-min-where", "initial-only"])
def test_local_max_min_selection(f, request):
    # (forward mode refuses ufunc.reduce with where=/initial=: the pattern alone there)
    assert_covers(lambda x: np.atleast_1d(f(x)), XF, "local", values=".reduce" not in request.node.name)


@pytest.mark.parametrize("reduction", [lambda x, m: np.sum(x, where=m), lambda x, m: x.sum(where=m),
                                       lambda x, m: np.add.reduce(x, where=m), lambda x, m: np.mean(x, where=m),
                                       lambda x, m: np.prod(x, where=m)],
                         ids=["np.sum", "method", "add.reduce", "np.mean", "np.prod"])
def test_local_branch_on_masked_reduction(reduction, request):
    def f(x):
        s = reduction(x, x > 1.0)  # only 1.4 and 1.1
        return x[0] * x if s > 1.3 else x[1] * x
    assert_covers(f, X, "local", values="add.reduce" not in request.node.name)


@pytest.mark.parametrize("fold", [min, max])
def test_local_min_max_with_key(fold):
    def f(x):
        return np.array([fold(x, key=lambda v: abs(v - 1.0)) * x[0], fold(x[0], x[3], key=lambda v: -v)])
    assert_covers(f, XF, "local")


def test_global_min_with_key_refuses():
    with pytest.raises(TracedBranchError):
        jacobian_sparsity(lambda x: np.array([min(x, key=lambda v: abs(v - 1.0))]), X)


# -- 7. in-place operators ----------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", ["@=", "%=", "//="])
def test_inplace_operators(op, mode):
    def f(x):
        z = x[:4].reshape(2, 2) * 1.0
        if op == "@=":
            z @= np.array([[1.0, 2.0], [3.0, 4.0]]) * x[4]
        elif op == "%=":
            z %= x[5]
        else:
            z //= 0.3
            z += x[:4].reshape(2, 2)
        return z
    assert_covers(f, XF, mode)


# -- 8. sparse_jacobian of a function writing into its argument ------------------------------------------

def test_sparse_jacobian_of_mutating_function():
    def f(x):
        x[1:] = x[1:] * x[:-1]  # the caller's array, changed
        return x * 1.0
    x = X.copy()
    J = fd.jacobian(lambda v: f(v.copy()), x, matrix=True)
    np.testing.assert_allclose(sparse_jacobian(f, x).toarray(), J, atol=1e-6)


# -- crashes that became patterns (or clear refusals) ------------------------------------------------------

_MASK = np.array([True, False, True, True, False, True])
# name: (f, mode, whether forward mode takes f: sparse_jacobian checked too)
FORMER_CRASHES = {
    "np.atleast_1d(a, b)": (lambda x: np.atleast_1d(x[0], x[1:])[1], "local", True),
    "np.pad reflect odd": (lambda x: np.pad(x ** 2, 2, mode="reflect", reflect_type="odd"), "global", True),
    "np.matmul axes=": (lambda x: np.matmul(x.reshape(2, 3), x.reshape(2, 3).T,
                                            axes=[(0, 1), (0, 1), (0, 1)]).ravel(), "global", True),
    "np.cumulative_sum": (lambda x: np.cumulative_sum(x, include_initial=True), "global", True),
    "np.full_like(x, traced)": (lambda x: np.full_like(x, x[0] ** 2) * x, "global", False),
    "np.full_like(x, 3.0)": (lambda x: np.full_like(x, 3.0) * x, "global", True),
    "np.compress": (lambda x: np.compress(_MASK, x) ** 3, "global", False),
    "np.compress (local)": (lambda x: np.compress(x > 0.8, x), "local", False),
    "x.item(k)": (lambda x: x.item(1) * x, "global", True),
    "x.item(i, j)": (lambda x: x.reshape(2, 3).item(1, 2) * x, "local", True),
    "np.take mode=wrap": (lambda x: np.take(x ** 2, [7, -8, 1], mode="wrap"), "global", True),
    "np.take mode=clip": (lambda x: np.take(x ** 2, [9, -1, 1], mode="clip"), "local", True),
    "np.lexsort": (lambda x: x[np.lexsort((x, x ** 2))] ** 3, "local", True),
    "np.block": (lambda x: np.block([[x[:2], x[2:4] ** 2], [np.ones(2), x[:2]]]).ravel(), "global", True),
    "np.std(v, mean=m)": (lambda x: np.atleast_1d(np.std(x ** 2, mean=np.mean(x ** 2, keepdims=True))),
                          "local", False),
    "np.std(v, mean=m) global": (lambda x: np.atleast_1d(np.std(x ** 2, mean=np.mean(x ** 2, keepdims=True))),
                                 "global", False),
    "np.insert": (lambda x: np.insert(x, 2, x[5] * x[4]), "global", False),
    "np.ediff1d": (lambda x: np.ediff1d(x, to_begin=x[0]), "local", True),
    "np.linspace (local)": (lambda x: np.linspace(x[0], x[1], 4), "local", False),
    "np.piecewise (local)": (lambda x: np.piecewise(x, [x < 0.9, x >= 0.9], [lambda t: t ** 2, lambda t: 3 * t]),
                             "local", False),
    "flags['W']": (lambda x: x * 2 if x.flags["W"] else x, "global", True),
}


@pytest.mark.parametrize("name", sorted(FORMER_CRASHES))
def test_former_crash(name):
    f, mode, values = FORMER_CRASHES[name]
    assert_covers(f, X, mode, values=values)


def test_vector_times_scipy_sparse_matrix():
    import scipy.sparse as sps
    A = sps.random(6, 6, density=0.3, random_state=1, format="csc")
    P = jacobian_sparsity(lambda x: x @ A, X).toarray()
    assert not (nonzero(fd.jacobian(lambda x: x @ A, X, matrix=True)) & ~P).any()


def test_sparse_jacobian_of_dict_output():
    def f(x):
        return {"a": x[:2] ** 2, "b": x[2:] * x[0]}
    J = fd.jacobian(lambda x: np.concatenate([f(x)["a"], f(x)["b"]]), X, matrix=True)
    np.testing.assert_allclose(sparse_jacobian(f, X).toarray(), J, atol=1e-6)
