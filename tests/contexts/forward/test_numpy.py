"""numpy on Duals (one direction and chunks): every Jacobian against central finite differences."""

import cmath
import math

import numpy as np
import pytest

from contexts.forward import derivative, jacfwd

from tests import fd

CASES = {
    "max": lambda x: np.max(x * x[::-1]),
    "prod": lambda x: np.prod(x),
    "solve": lambda x: np.linalg.solve(np.outer(x, x) + np.eye(4), x),
    "sort": lambda x: np.sort(x) * np.arange(4),
    "var": lambda x: np.var(x),
    "std_method": lambda x: x.std(),
    "maximum": lambda x: np.maximum(x, 0.4),
    "abs": lambda x: np.abs(x),
    "where": lambda x: np.where(x > 1, x ** 2, -x),
    "clip": lambda x: np.clip(x, 0, 1.6),
    "matmul": lambda x: x.reshape(2, 2) @ x.reshape(2, 2).T,
    "einsum": lambda x: np.einsum("i,i->", x, x),
    "mean_axis": lambda x: x.reshape(2, 2).mean(axis=0),
    "sum_axis_keepdims": lambda x: np.sum(x.reshape(2, 2) ** 2, axis=1, keepdims=True),
    "logsumexp": lambda x: np.log(np.sum(np.exp(x - np.max(x)))) + np.max(x),
    "builtin_max_min": lambda x: max(x[0], x[1]) * min(x[2], x[3]),
    "sum_generator": lambda x: sum(v * v for v in x),
    "math_hypot": lambda x: math.hypot(x[0], x[1]),
    "item": lambda x: x[1].item() * 2,
    "tolist": lambda x: np.array(x.tolist()) * 2,
    "dot": lambda x: x.dot(x),
    "det": lambda x: np.linalg.det(x.reshape(2, 2)),
    "frobenius": lambda x: np.linalg.norm(x.reshape(2, 2)),
    "cumprod": lambda x: np.cumprod(x),
    "transpose": lambda x: x.reshape(2, 2).T.ravel(),
    "float_call": lambda x: float(x[0]) * x,
    "stack_scalars": lambda x: np.stack([x[0] * x[1], x[2], 3.0]),
    "broadcast_scalar_dual": lambda x: x[0] * np.arange(3.0) + x[1],
    "mixed_ndim": lambda x: x.reshape(2, 2) * x[:2] + x[3],
    "fancy_index": lambda x: x[[0, 2, 2]] * x[np.array([True, False, True, False])].sum(),
    "ufunc_rule": lambda x: np.tanh(x) + np.arctan2(x, 1.5) + np.log1p(x ** 2),
}
X = np.array([0.5, 1.5, -0.3, 2.0])


@pytest.mark.parametrize("chunk", [None, 1, 3])
@pytest.mark.parametrize("name", sorted(CASES))
def test_numpy_jacobian(name, chunk):
    f = CASES[name]
    np.testing.assert_allclose(jacfwd(f, X, chunk=chunk), fd.jacobian(f, X), rtol=1e-5, atol=1e-6)


def test_math_inside_forward_over_forward():
    g = lambda x: derivative(lambda y: math.sin(x * y) + math.exp(y) * x, 1.0)
    assert derivative(g, 0.5) == pytest.approx(fd.derivative(g, 0.5), rel=1e-6)


def test_complex_holomorphic():
    z = 1 + 2j
    assert derivative(lambda z: z ** 2 + cmath.sin(z), z) == pytest.approx(2 * z + cmath.cos(z))


# -- in-place changes: tangents share memory exactly where values do -----------------------------------

def _view_changed(x):
    y = x * 1.0
    v = y[1:3]
    v *= 3.0          # changes y too
    return y ** 2


def _base_changed_view_read(x):
    y = x * 1.0
    v = y[1:3]
    y *= 2.0          # v sees it
    return v * v


def _rows_changed_in_a_loop(x):
    A = np.outer(x, np.ones(3))
    for i in range(len(x)):
        row = A[i]
        row *= x[i]
    return A ** 2


def _overlapping_views(x):
    y = x * 1.0
    a = y[0:3]
    b = y[1:4]
    a *= a
    return b * b + np.sum(y)


def _scale(row, s):
    row *= s


def _view_changed_by_a_callee(x):
    y = x * 1.0
    _scale(y[1:3], x[0])
    return y * y


def _stored_into_a_copy(x):
    y = x + 1.0       # its tangent is not x's: storing into y leaves x's alone
    y[0] = 5.0
    return x * 2.0 + y


def _iadd_after_a_constant_shift(x):
    y = x + 1.0
    y += x * x
    return np.concatenate([x, y])


@pytest.mark.parametrize("f", [_view_changed, _base_changed_view_read, _rows_changed_in_a_loop,
                               _overlapping_views, _view_changed_by_a_callee, _stored_into_a_copy,
                               _iadd_after_a_constant_shift], ids=lambda f: f.__name__.strip("_"))
def test_in_place_changes_through_views_and_copies(f):
    x = np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(jacfwd(f, x), fd.jacobian(f, x), rtol=1e-6, atol=1e-8)


def _sorted_in_place(x):
    y = x * np.array([3.0, 1.1, 2.0, 0.5])
    y.sort()
    return y * np.arange(4.0)


def _filled_view(x):
    y = x * 2.0
    v = y[::2]
    v.fill(x[1])
    return y ** 2


@pytest.mark.parametrize("chunk", [None, 2])
@pytest.mark.parametrize("f", [_sorted_in_place, _filled_view], ids=lambda f: f.__name__.strip("_"))
def test_c_methods_changing_an_array_in_place(f, chunk):
    x = np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(jacfwd(f, x, chunk=chunk), fd.jacobian(f, x), rtol=1e-6, atol=1e-8)


# -- whole programs that change arrays in place (duals, or the tangent twin column by column) ----------

from ..ad.test_in_place_programs import (convolution_by_slices, euler_into_preallocated_rows,  # noqa: E402
                                         gram_schmidt, leapfrog, normalize_columns, welford_variance)

_PROGRAMS = [(convolution_by_slices, (3, 3)), (euler_into_preallocated_rows, (2,)), (gram_schmidt, (4, 3)),
             (normalize_columns, (5, 3)), (welford_variance, (6, 3))]


@pytest.mark.parametrize("f, shape", _PROGRAMS, ids=lambda v: getattr(v, "__name__", ""))
def test_in_place_programs_by_jacfwd(f, shape):
    x = np.random.default_rng(1).standard_normal(shape) * 0.5 + (1.0 if f is euler_into_preallocated_rows else 0)
    np.testing.assert_allclose(jacfwd(f, x), fd.jacobian(f, x), rtol=1e-5, atol=1e-7)


def test_in_place_program_by_derivative():
    assert derivative(leapfrog, 1.3) == pytest.approx(fd.derivative(leapfrog, 1.3), rel=1e-6)


def test_storing_into_a_plain_array_by_the_tangent_twin():
    def f(x):
        y = np.zeros(4)
        y[2] = x[0] * x[1]
        v = y[:2]
        v[:] = x[:2] * 2.0       # a view of y: y sees it, and so does y's tangent
        return y ** 2
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(jacfwd(f, x), fd.jacobian(f, x), rtol=1e-6, atol=1e-8)


def _ufunc_out_into_a_view(x):
    y = x * 1.0
    v = y[1:3]
    np.multiply(v, x[0], out=v)
    return y ** 2


def _ufunc_out_with_where(x):
    y = x * 2.0
    np.subtract(x, 1.0, out=y, where=np.array([True, False, True, False]))
    return y * np.array([1.0, 10.0, 100.0, 1000.0])


def _add_at_into_a_view(x):
    y = x * 1.0
    v = y[1:]
    np.add.at(v, [0, 0, 2], x[:3] * x[1])
    return y ** 2


def _copyto_a_view(x):
    y = x * 2.0
    v = y[2:]
    np.copyto(v, x[:2] ** 2)
    return y ** 3


@pytest.mark.parametrize("chunk", [None, 2])
@pytest.mark.parametrize("f", [_ufunc_out_into_a_view, _ufunc_out_with_where, _add_at_into_a_view,
                               _copyto_a_view], ids=lambda f: f.__name__.strip("_"))
def test_numpy_writing_into_dual_arrays(f, chunk):
    x = np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(jacfwd(f, x, chunk=chunk), fd.jacobian(f, x), rtol=1e-6, atol=1e-8)


# -- arrays changed in place by the functions they are passed to ----------------------------------------
# `jvp` and `derivative` try the tangent twin first: a callee's in-place change must reach the caller's
# value (Python's `x op= y`) and its tangent (handed back by the callee's twin), including arrays the
# caller only made (`out = np.empty_like(x); fill(x, out)`, an ODE right-hand side writing `dydt`).

from ..ad import test_numpy as _reverse_cases  # noqa: E402

_CALLEE_CASES = [getattr(_reverse_cases, n) for n in (
    "callee_scales_argument", "callee_sets_an_element", "callee_changes_a_view",
    "callee_changes_through_a_callee", "callee_normalizes_rows", "argument_read_after_a_change",
    "callee_fills_a_view_of_a_constant", "callee_fills_rows_of_a_constant", "callee_fills_a_transposed_column",
    "callee_fills_a_reshaped_row", "callee_fills_through_a_callee", "callee_changes_an_argument_another_views",
    "callee_gets_one_array_twice", "callee_sets_what_another_argument_reads")]


def _square_into(x, out):
    out[:] = x * x


def _output_argument(x):
    out = np.empty_like(x)
    _square_into(x, out)
    return np.sum(out * np.arange(1.0, x.size + 1))


def _oscillator(t, y, dydt):
    dydt[0] = y[1]
    dydt[1] = -y[0] * (1.0 + t)


def _ode_right_hand_side(x):
    d = np.zeros(2)
    _oscillator(0.5, x[:2], d)
    return np.sum(d * d) + x[2] * d[1]


def _halve(s):
    s *= 0.5       # a number: rebound here, the caller's is unchanged
    return s


def _number_argument_not_changed(x):
    s = x[0] * 3.0
    h = _halve(s)
    return np.sum(x) * s + h


def _rebinds_then_stores(y):
    y = y * 2.0    # a new array: storing into it leaves the caller's alone
    y[0] = 7.0
    return y


def _argument_rebound_by_the_callee(x):
    y = x * 1.0
    z = _rebinds_then_stores(y)
    return np.sum(y * y) + np.sum(z * x)


_FORWARD_CASES = _CALLEE_CASES + [_output_argument, _ode_right_hand_side, _number_argument_not_changed,
                                  _argument_rebound_by_the_callee]


@pytest.mark.parametrize("f", _FORWARD_CASES, ids=lambda f: f.__name__.strip("_"))
def test_arrays_changed_by_callees_by_jvp_and_jacfwd(f):
    _check_by_jvp_and_jacfwd(f)


def _check_by_jvp_and_jacfwd(f):
    """jvp's value and tangent, and jacfwd (also in chunks of 2 directions), against finite differences."""
    from contexts.forward import jvp
    x = np.array([1.0, 2.0, 3.0, 4.0])
    v = np.array([0.3, -0.5, 0.7, 1.1])
    want = fd.jacobian(f, x)
    y, t = jvp(f, (x,), (v,))
    np.testing.assert_allclose(y, f(x), rtol=1e-12)
    np.testing.assert_allclose(t, want @ v, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacfwd(f, x), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacfwd(f, x, chunk=2), want, rtol=1e-6, atol=1e-8)


def test_scaling_by_a_callee_by_derivative():
    def f(s):
        y = np.array([1.0, 2.0]) * s
        _scale(y, s)       # y = s^2 [1, 2]
        return np.sum(y)   # 3 s^2
    assert derivative(f, 1.5) == pytest.approx(9.0)


# -- numpy writing perturbed values into plain arrays the function made -----------------------------------

def _out_into_a_plain_array(x):
    out = np.zeros(4)
    np.multiply(x, 3.0, out=out)
    return out * x


def _out_where_into_a_plain_array(x):
    out = np.full(4, 2.0)
    np.multiply(x, x, out=out, where=np.array([True, False, True, False]))
    return out * x


def _out_into_a_view_of_a_plain_array(x):
    out = np.zeros(5)
    np.sin(x[:3], out=out[1:4])
    return out ** 2


def _out_is_the_input(x):
    y = x * 2.0
    np.exp(y, out=y)
    return y + x


def _out_where_into_a_perturbed_array(x):
    y = x + 1.0          # y's tangent starts as x's: changing y's must leave x's alone
    np.multiply(y, x, out=y, where=x > 2.5)
    return np.concatenate([y * y, x])


def _add_at_into_a_plain_array(x):
    acc = np.zeros(3)
    np.add.at(acc, np.array([0, 2, 0, 1]), x)
    return acc ** 2


def _subtract_at_into_a_plain_array(x):
    acc = np.ones(3)
    np.subtract.at(acc, np.array([1, 1, 2, 0]), x * x)
    return acc * x[:3]


def _copyto_a_plain_array(x):
    out = np.zeros(4)
    np.copyto(out, x * x)
    return out * out


@pytest.mark.parametrize("f", [_out_into_a_plain_array, _out_where_into_a_plain_array,
                               _out_into_a_view_of_a_plain_array, _out_is_the_input,
                               _out_where_into_a_perturbed_array, _add_at_into_a_plain_array,
                               _subtract_at_into_a_plain_array, _copyto_a_plain_array],
                         ids=lambda f: f.__name__.strip("_"))
def test_numpy_writing_into_plain_arrays_by_jvp_and_jacfwd(f):
    _check_by_jvp_and_jacfwd(f)


def _cumsum_into_out(x):
    out = np.empty(4)
    np.cumsum(x * x, out=out)
    return out * x


def _cumsum_into_a_dual_out(x):
    out = x * 1.0
    np.cumsum(x[::-1], out=out)
    return out * out


def _rows_changed_by_iteration(x):
    A = np.outer(x, x[:2]) + 1.0
    for row in A:
        row *= 2.0
    return A


def _transposed_view_stored_into(x):
    A = np.zeros((2, 3))
    A.T[0] = x[:2]
    A.T[2] = x[1:3] * 3
    return A


def _ravel_view_stored_into(x):
    A = np.outer(x, x) * 1.0
    r = A.ravel()  # a view of contiguous A
    r[::5] = 0.0
    return A


def _arrays_in_a_list_stored_into(x):
    L = [np.zeros(2), np.zeros(2)]
    L[0][1] = x[0] ** 2
    L[1][:] = x[1:3]
    row = L[1]
    row *= x[3]
    return np.concatenate([L[0], L[1] ** 3])


def _arrays_in_a_tuple_stored_into(x):
    T = (np.ones(2), np.zeros(3))
    T[1][::2] = x[:2] * x[3]
    return T[1] * x[:3] + np.sum(T[0])


@pytest.mark.parametrize("f", [_cumsum_into_out, _cumsum_into_a_dual_out, _rows_changed_by_iteration,
                               _transposed_view_stored_into, _ravel_view_stored_into,
                               _arrays_in_a_list_stored_into, _arrays_in_a_tuple_stored_into],
                         ids=lambda f: f.__name__.strip("_"))
def test_numpy_functions_writing_out_and_views_by_jvp_and_jacfwd(f):
    _check_by_jvp_and_jacfwd(f)


def _arrays_in_a_dict_stored_into(x):
    d = {"a": np.ones(3), "b": np.zeros(2), "c": x[3]}
    d["a"][::2] = x[:2] * x[2]
    d["b"][1] = d["c"] ** 2
    return np.concatenate([d["a"] ** 2, d["b"]]) * d["c"]


def test_arrays_in_a_dict_stored_into_by_jvp_and_jacfwd():
    _check_by_jvp_and_jacfwd(_arrays_in_a_dict_stored_into)


def _dot_into_out(x):
    A = np.arange(8.0).reshape(2, 4) / 7.0
    out = np.zeros(2)
    np.dot(A, x * x, out=out)
    return out * x[0]


def _einsum_into_out(x):
    out = np.zeros(())
    np.einsum("i,i->", x, x, out=out)
    return out * x


def _put_into_a_plain_array(x):
    a = np.zeros(5)
    np.put(a, [0, 2, 7, 2], x[:2] * x[2], mode="wrap")
    return a * x[0]


def _put_method_into_a_dual_array(x):
    a = x * 1.0
    a.put([1, 3, 1], x[[2, 0, 3]] ** 2)
    return a * a


@pytest.mark.parametrize("f", [_dot_into_out, _einsum_into_out, _put_into_a_plain_array,
                               _put_method_into_a_dual_array], ids=lambda f: f.__name__.strip("_"))
def test_more_numpy_writes_by_jvp_and_jacfwd(f):
    _check_by_jvp_and_jacfwd(f)


def _place_into_a_plain_array(x):
    a = np.ones(4)
    np.place(a, np.array([True, False, True, True]), x[1:3] ** 2)   # 3 places, 2 values: repeated
    return a * x[0]


def _putmask_into_a_dual_array(x):
    a = x.copy()
    np.putmask(a, np.array([True, False, True, False]), x[::-1] * 2.0)
    return a * a


def _fill_diagonal_of_a_plain_matrix(x):
    A = np.zeros((3, 3))
    np.fill_diagonal(A, x[:2] ** 2)      # 3 diagonal entries, 2 values: repeated
    return (A @ x[:3]).ravel()


def _copyto_with_where(x):
    a = np.ones(4)
    np.copyto(a, x * x, where=np.array([True, False, True, True]))
    return a * x


@pytest.mark.parametrize("f", [_place_into_a_plain_array, _putmask_into_a_dual_array,
                               _fill_diagonal_of_a_plain_matrix, _copyto_with_where],
                         ids=lambda f: f.__name__.strip("_"))
def test_numpy_stores_by_jvp_and_jacfwd(f):
    _check_by_jvp_and_jacfwd(f)


_M34 = np.array([[1.0, 2.0, 0.5, -1.0], [0.3, -0.7, 1.1, 2.0], [1.5, 0.2, -0.4, 0.9]])


@pytest.mark.parametrize("f", [
    lambda x: np.add.accumulate(x * x),
    lambda x: np.multiply.accumulate(x + 2.0),
    lambda x: np.maximum.accumulate(x * np.array([1.0, -2.0, 3.0, 0.5])),
    lambda x: np.linalg.pinv(_M34 * x).ravel(),                     # numpy's wrappers: __array_wrap__
    lambda x: np.linalg.lstsq(_M34.T * x[:, None], x ** 2, rcond=None)[0],
    lambda x: np.polyfit(np.arange(4.0), x ** 2, 2),
], ids=["add_accumulate", "multiply_accumulate", "maximum_accumulate", "pinv", "lstsq", "polyfit"])
def test_ufunc_methods_and_wrapped_linear_algebra_by_jvp_and_jacfwd(f):
    from contexts.forward import jvp
    x = np.array([1.3, -0.7, 2.1, 0.4])
    v = np.array([0.3, -0.5, 0.7, 1.1])
    want = fd.jacobian(f, x)
    np.testing.assert_allclose(jvp(f, (x,), (v,))[1], want @ v, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(jacfwd(f, x), want, rtol=1e-5, atol=1e-7)


# -- callees with *args and keyword-only parameters: tangents follow positions --------------------------

def _weighted_squares(*arrays, scale):
    total = 0.0
    for a in arrays:
        total = total + np.sum(a * a)
    return scale * total


def _first_times_rest(a, *rest):
    return a * rest[0] + rest[1]


def _through_star_args(x):
    return _weighted_squares(x, x[:2] * 3.0, scale=2.0) + _first_times_rest(x[0], x[1], x[2] ** 2)


def test_callees_with_star_args_by_jvp_and_jacfwd():
    _check_by_jvp_and_jacfwd(_through_star_args)


def test_rosen_by_jvp_matches_rosen_der():
    import scipy.optimize
    from contexts.forward import jvp
    x = np.array([1.3, -0.7, 2.1, 0.4])
    v = np.array([0.3, -0.5, 0.7, 1.1])
    y, t = jvp(scipy.optimize.rosen, (x,), (v,))   # scipy's array-API code: *args, keyword-only xp
    assert y == pytest.approx(scipy.optimize.rosen(x))
    assert t == pytest.approx(scipy.optimize.rosen_der(x) @ v, rel=1e-12)


@pytest.mark.parametrize("f", [
    lambda x: np.median(x * np.array([1.0, -2.0, 3.0, 0.5])),
    lambda x: np.percentile(x ** 3, [25.0, 60.0]),
    lambda x: np.quantile(np.outer(x, x[:3]) + x[:3], 0.4, axis=0),
    lambda x: np.partition(x * np.array([3.0, -1.0, 2.0, 0.1]), 2),
], ids=["median", "percentile", "quantile_axis", "partition"])
def test_order_statistics_by_jvp_and_jacfwd(f):
    """numpy's median/percentile/quantile partition a copy in place: each tangent moves with its value."""
    _check_by_jvp_and_jacfwd(f)


def _scaled(a, *, scale=None, offset=None):
    if scale is None:          # a keyword-only parameter bound, to a perturbed value, in one branch only
        scale = np.sum(a) / a.size
    return a * scale + (0.0 if offset is None else offset)


def _through_keyword_only_defaults(x):
    return _scaled(x) + _scaled(x[::-1], scale=3.0) * x[0]


def test_callees_with_keyword_only_defaults_by_jvp_and_jacfwd():
    _check_by_jvp_and_jacfwd(_through_keyword_only_defaults)


# -- np.select: numpy fills a plain array by np.copyto, which takes no tangent ------------------------------

def _select_pieces(x):
    return np.select([x < 0.5, x > 1.5], [x * x, np.sin(x)], default=x * 3.0)


def _select_scalar_true(x):
    # colorspacious' CIECAM02: `np.select([h < h_i[0], True], [h + 360, h])`
    return np.select([x < 0.8, True], [x + 360.0, x * x])


def _select_plain_choice(x):
    return np.select([x > 1.0], [np.array([2.0])], default=np.exp(x))


@pytest.mark.parametrize("f", [_select_pieces, _select_scalar_true], ids=["pieces", "scalar True"])
def test_select_matches_finite_differences(f):
    from contexts import jvp
    x = np.array([0.2, 0.7, 1.2, 1.9])
    np.testing.assert_allclose(jacfwd(f, x), fd.jacobian(f, x), rtol=1e-6, atol=1e-8)
    t = np.linspace(0.3, 1.1, x.size)
    value, dy = jvp(f, (x,), (t,))
    np.testing.assert_array_equal(value, f(x))
    np.testing.assert_allclose(dy, fd.directional(f, (x,), (t,)), rtol=1e-6, atol=1e-8)


def test_select_with_only_the_default_perturbed():
    # numpy dispatches np.select on its conditions and choices only: forward mode takes a dual default itself
    from contexts import jvp
    x = np.array([0.2, 0.7, 1.2, 1.9])
    np.testing.assert_allclose(jacfwd(_select_plain_choice, x), fd.jacobian(_select_plain_choice, x),
                               rtol=1e-6, atol=1e-8)
    _, dy = jvp(_select_plain_choice, (x,), (np.ones(4),))
    np.testing.assert_allclose(dy, fd.directional(_select_plain_choice, (x,), (np.ones(4),)), rtol=1e-6, atol=1e-8)
