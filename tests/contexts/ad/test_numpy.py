"""Gradients through ordinary numpy code, each checked against central finite differences.

The functions below are written the way a user writes numpy (no wrapper module, no AD-specific calls);
`gradient` must agree with `tests.fd.gradient` (4th-order central differences, arrays elementwise).
In-place mutation inside the differentiated code (`x[i] = v`, `x += y`, `out=`, `np.add.at`) is checked
the same way: the engine must reverse each mutation so earlier pullbacks see the values they captured.
"""

import numpy as np
import pytest

from contexts import Tangent, gradient, value_and_gradient
from contexts.ad import NoRuleError

from tests import fd
from tests.fd import assert_grad_fd

rng = np.random.default_rng(4)
A = rng.normal(size=(3, 4))
B = rng.normal(size=(4, 2))
V3 = rng.normal(size=3)
V4 = rng.normal(size=4)
POS = rng.uniform(0.5, 2.0, size=(3, 4))
T = rng.normal(size=(2, 3, 4))


# --- elementwise ufuncs and broadcasting -----------------------------------------------------------

def smooth_mix(x, y):
    return np.sum(np.sin(x) * y + np.exp(y) / (1.0 + x ** 2) - np.tanh(x - y) * np.log1p(x * x))


def broadcast_column(x, c):
    return np.sum(np.hypot(x, c[:, None]) + np.arctan2(x, 1.0 + c[:, None] ** 2))


def scalar_and_array(s, x):
    return np.sum(np.maximum(x, 0.1) * s + np.sqrt(np.abs(x) + s) - np.logaddexp(x, s))


def rowwise_softmax_entropy(x):
    z = x - np.max(x, axis=1, keepdims=True)
    p = np.exp(z) / np.sum(np.exp(z), axis=1, keepdims=True)
    return -np.sum(p * np.log(p))


@pytest.mark.parametrize("f, args", [
    (smooth_mix, (A, V4)),
    (broadcast_column, (A, V3)),
    (scalar_and_array, (0.7, A)),
    (rowwise_softmax_entropy, (A,)),
    (lambda x: np.sum(np.where(x > 0, x ** 3, -x) * np.clip(x, -0.5, 0.5)), (A,)),
    (lambda x: np.sum(np.cbrt(x) + np.expm1(x) + np.reciprocal(x) + np.arcsinh(x) * np.cosh(x)), (POS,)),
], ids=["ufuncs_mixed", "broadcast_column", "python_scalar_with_array", "softmax_entropy", "where_clip",
        "exp_log_family"])
def test_elementwise_with_broadcasting(f, args):
    assert_grad_fd(f, *args)


# --- reductions -------------------------------------------------------------------------------------

@pytest.mark.parametrize("f", [
    lambda x: np.sum(np.sum(x, axis=0) ** 2),
    lambda x: np.sum(np.mean(x, axis=1, keepdims=True) * x),
    lambda x: np.sum(np.prod(x, axis=(0, 2)) ** 2),
    lambda x: np.sum(np.var(x, axis=-1, ddof=1)) + np.sum(np.std(x, axis=(0, 1), keepdims=True) * x),
    lambda x: np.sum(np.max(x, axis=1) ** 2) + np.sum(np.min(x, axis=2, keepdims=True) * x),
    lambda x: np.sum(np.cumsum(x, axis=1) * np.cumprod(x, axis=2)),
    lambda x: x.mean() * x.sum(axis=(1, 2)).prod(),
], ids=["sum_axis0", "mean_keepdims", "prod_axis_tuple", "var_std_ddof", "max_min", "cumsum_cumprod",
        "methods"])
def test_reductions_axis_keepdims(f):
    assert_grad_fd(f, T)


# --- linear algebra ---------------------------------------------------------------------------------

@pytest.mark.parametrize("f, args", [
    (lambda a, b: np.sum(np.tanh(a @ b)), (A, B)),
    (lambda a, v: np.sum((a @ v) ** 2), (A, V4)),
    (lambda v, a: np.sum(np.sin(v @ a)), (V3, A)),
    (lambda v, w: v @ w, (V4, V4 + 1.0)),
    (lambda a, b: np.sum(np.dot(a, b) ** 2) + np.dot(a[0], b[:, 1]), (A, B)),
    (lambda t, b: np.sum(np.matmul(t, b) ** 2), (T, B)),
    (lambda a, b: np.einsum("ij,jk->", a, b) + np.sum(np.einsum("ij,jk->ik", a, b) ** 2), (A, B)),
    (lambda t, a: np.sum(np.einsum("bij,ij->b", t, a) ** 3) + np.einsum("ii", a[:, :3]), (T, A)),
], ids=["matmul_2d", "matmul_matvec", "matmul_vecmat", "matmul_inner", "dot", "matmul_batched", "einsum",
        "einsum_batch_trace"])
def test_linear_algebra(f, args):
    assert_grad_fd(f, *args)


# --- shapes -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("f", [
    lambda x: np.sum(np.reshape(x, (4, 3)) * np.arange(12).reshape(4, 3)),
    lambda x: np.sum(np.transpose(x) @ x) + np.sum(np.ravel(x) ** 3),
    lambda x: np.sum(np.concatenate([x, x ** 2], axis=1) * np.arange(8)),
    lambda x: np.sum(np.stack([x, np.sin(x)], axis=-1)[..., 1] * x),
    lambda x: np.sum(np.expand_dims(x, 0).squeeze() * np.flip(x, axis=1)),
    lambda x: np.sum(np.roll(x, 1, axis=0) * x) + np.sum(np.tile(x, (2, 1))[4:] ** 2),
    lambda x: np.sum(np.pad(x, 1) ** 2 * 0.5) + np.sum(np.sort(x, axis=1) * np.arange(4)),
], ids=["reshape", "transpose_ravel", "concatenate", "stack", "expand_squeeze_flip", "roll_tile", "pad_sort"])
def test_shapes(f):
    assert_grad_fd(f, A)


# --- indexing ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("f", [
    lambda x: np.sum(x[1, :3] * x[:, 2]) + x[2, 3] * x[0, 0],
    lambda x: np.sum(x[::-1, ::-2] ** 2 * np.arange(6).reshape(3, 2)),
    lambda x: np.sum(x[..., 1:3] * x[None, 0, ..., None, 0]),
    lambda x: np.sum(x[[0, 0, 2, 0], :] ** 2),
    lambda x: np.sum(x[[0, 2, 2], [1, 1, 3]] ** 3),
    lambda x: np.sum(x[x > 0] ** 3) + np.sum(x[:, np.array([True, False, True, True])]),
    lambda x: x[-1, -1] * x[-2][-3],
], ids=["basic", "negative_steps", "ellipsis_and_none", "integer_array_repeats", "paired_integer_arrays",
        "boolean_masks", "negative_indices"])
def test_indexing(f):
    assert_grad_fd(f, A)


def test_repeated_integer_indices_accumulate_exactly():
    (g,) = gradient(lambda x: np.sum(x[[1, 1, 1, 0]]), np.zeros(3))
    np.testing.assert_array_equal(g, [1.0, 3.0, 0.0])


def test_array_of_python_scalars():
    def f(a, b):
        v = np.array([a, b, a * b])
        return np.sum(v ** 2 * np.array([1.0, 3.0, 0.5]))
    ga, gb = assert_grad_fd(f, 1.5, -0.7)
    assert ga == pytest.approx(2 * 1.5 + 0.5 * 2 * 1.5 * 0.49)


def test_nested_lists_to_array():
    assert_grad_fd(lambda a, b: np.sum(np.array([[a, 2.0], [b, a]]) @ np.array([a, b])), 0.3, 1.7)


# --- ndarray methods --------------------------------------------------------------------------------

@pytest.mark.parametrize("f", [
    lambda x: x.sum() * x.max(),
    lambda x: np.sum(x.dot(x.T)),
    lambda x: x.reshape(2, 6)[1].sum() + x.reshape(-1)[0] ** 2,
    lambda x: np.sum(x.astype(np.float64) ** 2) + np.sum(x.astype(np.float32)).item() * 0.0,
    lambda x: (x.copy() * x).sum(),
    lambda x: np.sum(x.T[1] * x.T[2]) + x.ravel().prod(),
    lambda x: x.mean(axis=0).std() + x.cumsum(axis=1).sum() + x.clip(-0.5, 0.5).sum(),
    lambda x: x.transpose(1, 0).flatten().dot(np.arange(12)) + x.squeeze().trace(),
], ids=["sum_max", "dot", "reshape", "astype", "copy", "T_ravel_prod", "mean_std_cumsum_clip",
        "transpose_flatten_trace"])
def test_ndarray_methods(f):
    assert_grad_fd(f, A)


# --- 0-d arrays, numpy scalars, dtypes -------------------------------------------------------------

def test_zero_dimensional_array():
    x = np.array(0.3)
    (g,) = assert_grad_fd(lambda a: np.sin(a) * a + np.sum(a ** 3), x)
    assert isinstance(g, np.ndarray) and g.shape == ()


def test_numpy_scalar_input():
    (g,) = gradient(lambda a: np.sin(a) * a, np.float64(0.3))
    assert g == pytest.approx(np.cos(0.3) * 0.3 + np.sin(0.3))


def test_numpy_scalars_from_indexing_mix_with_python_floats():
    assert_grad_fd(lambda x: float(x[0]) * x[1] + 2.0 * x[2] ** 2 - np.float64(3.0) * x[0], V3)


@pytest.mark.parametrize("f, args", [
    (lambda s, x: np.sum(s * x), (np.float64(2.0), V3)),
    (lambda t, x: np.sum(t[0] * x + x * t[1]), (V4, V3)),
    (lambda t, x: np.sum(t[0] + x), (V4, V3)),
], ids=["scalar_times_array", "indexed_element_times_array", "indexed_element_plus_array"])
def test_numpy_scalar_operand_with_array(f, args):
    got = assert_grad_fd(f, *args)
    assert np.shape(got[0]) == np.shape(args[0])


def test_method_of_numpy_scalar():
    assert_grad_fd(lambda a: (a * a).sum() + a[0].max() * a[1], np.array([2.0, 3.0]))


def test_method_on_zero_dimensional_result():
    assert_grad_fd(lambda a: (a * a).sum(), np.array(2.0))


def test_item_and_tolist():
    assert_grad_fd(lambda a: a[0].item() * a[1] + a.tolist()[2] * a[2], V3)


def test_float_constants_into_array_constructors():
    assert_grad_fd(lambda x: np.sum(x * np.arange(3.0) + x * np.linspace(0.0, 1.0, 3)), V3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_preserved(dtype):
    x = A.astype(dtype)
    (g,) = gradient(lambda a: np.sum(np.tanh(a) @ a.T), x)
    assert g.dtype == dtype
    want = fd.gradient(lambda a: np.sum(np.tanh(a) @ a.T), A)[0]
    np.testing.assert_allclose(g, want, rtol=1e-3 if dtype == np.float32 else 1e-6, atol=1e-4)


def test_float32_scalar_stays_float32():
    (g,) = gradient(lambda a: a * a * 3.0, np.float32(2.0))
    assert isinstance(g, np.float32) and g == 12.0


def test_complex_arrays_follow_zygote_convention():
    z = rng.normal(size=3) + 1j * rng.normal(size=3)
    w = rng.normal(size=3) + 1j * rng.normal(size=3)
    assert_grad_fd(lambda a: np.sum(np.abs(a * a + 1j) ** 2), z)
    assert_grad_fd(lambda a, b: np.real(np.sum(a * np.conj(b))) + np.sum(np.abs(np.exp(a)) ** 2), z, w)
    assert_grad_fd(lambda a: np.sum((a @ a.conj()).real) + np.imag(np.sum(a ** 2)), z)


def test_complex_closed_form():
    z = np.array([1 + 2j, 3 - 1j])
    (g,) = gradient(lambda a: np.sum(np.abs(a) ** 2), z)
    np.testing.assert_allclose(g, 2 * z)  # d|z|^2 = 2x + 2iy


def test_structured_gradient_of_object_holding_arrays():
    class Affine:
        def __init__(self):
            self.W, self.b, self.name = A.copy(), V3.copy(), "affine"

    def loss(m, x):
        return np.sum((m.W @ x + m.b) ** 2)

    model, x = Affine(), V4
    (g, gx) = gradient(loss, model, x)
    r = A @ x + V3
    assert isinstance(g, Tangent) and g.name is None
    np.testing.assert_allclose(g.W, 2 * np.outer(r, x))
    np.testing.assert_allclose(g.b, 2 * r)
    np.testing.assert_allclose(gx, 2 * A.T @ r)


# --- in-place mutation inside differentiated code ---------------------------------------------------

def set_element_from_input(x):
    y = x.copy()
    y[1] = x[0] * 3.0
    y[-1] = np.sin(y[1])
    return np.sum(y * y * x)


def set_mask_to_constant(x):
    y = x * 2.0
    y[y > 0] = 1.0
    return np.sum(y * x)


def set_mask_from_array(x):
    y = x.copy()
    y[x > 0] = np.exp(x[x > 0])
    return np.sum(y ** 2)


def set_element_into_zeros(x):
    y = np.zeros(4)
    y[2] = x[0] * x[1]
    y[0] = x[2]
    return np.sum(np.cumsum(y) ** 2)


def iadd_array(x, c):
    y = x * 1.0
    y += c
    return np.sum(y ** 2)


def iadd_then_use_input(x):
    s = x.copy()
    total = np.sum(s ** 2)
    s += 1.0
    return total + np.sum(s ** 3)


def imul_array(x, c):
    y = x * 2.0
    y *= c
    return np.sum(y ** 2)


def imul_by_own_input(x):
    y = x * 2.0
    y *= x
    return np.sum(y)


@pytest.mark.parametrize("f, args", [
    (set_element_from_input, (V4,)),
    (set_mask_to_constant, (V4,)),
    (set_mask_from_array, (V4,)),
    (set_element_into_zeros, (V3,)),
    (iadd_array, (A, V4)),
    (iadd_then_use_input, (V4,)),
    (imul_array, (A, V4)),
    (imul_by_own_input, (V4,)),
], ids=["x[i]=v", "x[mask]=const", "x[mask]=array", "zeros[i]=v", "x+=y", "mutate_after_use", "x*=y", "x*=x_input"])
def test_in_place_mutation(f, args):
    assert_grad_fd(f, *args)


def test_input_array_is_not_mutated_by_differentiation():
    x = V4.copy()
    gradient(set_element_from_input, x)
    np.testing.assert_array_equal(x, V4)


def set_slice_from_array(x):
    y = x.copy()
    y[0:2] = x[1:3] * 2.0
    return np.sum(y ** 2)


def set_row_from_array(m):
    y = m.copy()
    y[1] = m[0] * 3.0
    return np.sum(y * y)


def add_at_repeated(x):
    acc = np.zeros(3)
    np.add.at(acc, [0, 0, 2], x[:3] * x[1])
    return np.sum(acc ** 2)


def ufunc_out_fresh(x, c):
    y = np.empty_like(x)
    np.multiply(x, c, out=y)
    return np.sum(y ** 2)


def ufunc_out_aliased(x):
    y = np.sin(x)
    np.sin(y, out=y)
    return np.sum(y)


@pytest.mark.parametrize("f, args", [
    (set_slice_from_array, (V4,)), (set_row_from_array, (A,)), (add_at_repeated, (V4,)),
    (ufunc_out_fresh, (A, V4)), (ufunc_out_aliased, (V4,)),
], ids=["x[a:b]=array", "x[i]=row", "np.add.at", "out=fresh", "out=aliased"])
def test_in_place_mutation_through_calls(f, args):
    assert_grad_fd(f, *args)


def test_mutation_closed_form():
    def f(x):
        y = x.copy()
        y[0] = x[1] ** 2   # overwrites x[0]'s contribution
        return np.sum(y)
    value, (g,) = value_and_gradient(f, np.array([5.0, 3.0]))
    assert value == 12.0
    np.testing.assert_array_equal(g, [0.0, 7.0])


def test_aliases_of_an_array_mutated_in_place():
    def f(x, v):
        z = x * 1.0
        alias = z          # the same array: it sees every change below
        z += v
        z *= 2.0
        w = z
        w[0] = v[1] * 3.0
        return np.sum(alias * z) + np.sum(w)

    def g(s):              # floats are values, not arrays: rebinding does not touch the alias
        t = s
        s += 1.0
        return t * s
    assert_grad_fd(f, np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0]))
    assert_grad_fd(g, 2.0)


# -- in-place changes seen through views: every variable sharing the memory sees them -------------------

def view_changed(x):
    y = x * 1.0
    v = y[1:3]
    v *= 3.0          # changes y too
    return np.sum(y ** 2)


def view_assigned_into_zeros(x):
    y = np.zeros(4)   # a constant, until a view of it receives x
    v = y[:2]
    v[:] = x[:2] * 2.0
    return np.sum(y * y)


def base_changed_view_read(x):
    y = x * 1.0
    v = y[1:3]
    y *= 2.0          # v sees it
    return np.sum(v * v)


def transpose_view_changed(x):
    A = np.outer(x, x)
    t = A.T
    t[0] *= x[1]
    return np.sum(A * A)


def rows_changed_in_a_loop(x):
    A = np.outer(x, np.ones(3))
    for i in range(len(x)):
        row = A[i]
        row *= x[i]
    return np.sum(A ** 2)


def overlapping_views(x):
    y = x * 1.0
    a = y[0:3]
    b = y[1:4]
    a *= a            # b shares two of a's elements
    return np.sum(b * b) + np.sum(y)


def reshaped_view_changed(x):
    y = x * 1.0
    m = y.reshape(2, 2)
    m[0, :] += m[1, :]
    return np.sum(y ** 3)


def add_at_into_view(x):
    y = x * 1.0
    v = y[1:]
    np.add.at(v, [0, 0, 2], x[:3] * x[1])
    return np.sum(y ** 2)


def out_into_view(x):
    y = x * 1.0
    v = y[1:3]
    np.multiply(v, x[0], out=v)
    return np.sum(y ** 2)


def fill_view(x):
    y = x * 2.0
    v = y[::2]
    v.fill(x[1])
    return np.sum(y ** 2)


def copyto_view(x):
    y = x * 2.0
    v = y[2:]
    np.copyto(v, x[:2] ** 2)
    return np.sum(y ** 3)


@pytest.mark.parametrize("f", [view_changed, view_assigned_into_zeros, base_changed_view_read,
                               transpose_view_changed, rows_changed_in_a_loop, overlapping_views,
                               reshaped_view_changed, add_at_into_view, out_into_view, fill_view, copyto_view],
                         ids=lambda f: f.__name__)
def test_in_place_change_through_a_view(f):
    assert_grad_fd(f, np.array([1.0, 2.0, 3.0, 4.0]))


def test_view_closed_form():
    def f(x):
        y = x.copy()
        v = y[:1]
        v *= x[1]     # y[0] = x0 * x1
        return y[0] + y[1]
    np.testing.assert_allclose(gradient(f, np.array([3.0, 5.0]))[0], [5.0, 4.0])


def test_views_leave_their_arrays_as_the_function_left_them():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    seen = {}

    def f(x):
        y = x * 1.0
        v = y[1:3]
        v *= 3.0
        seen["y"] = y
        return np.sum(y ** 2)
    gradient(f, x)
    np.testing.assert_array_equal(seen["y"], [1.0, 6.0, 9.0, 4.0])
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0, 4.0])


# -- arrays changed in place by the functions they are passed to --------------------------------------

def _scale_(y, s):
    y *= s


def _set_first_(y, v):
    y[0] = v


def _scale_twice_(y, s):   # changes its argument through another function
    _scale_(y, s)
    _scale_(y, s)


def _normalize_rows_(A):
    for i in range(A.shape[0]):
        row = A[i]
        row /= np.sum(row ** 2) ** 0.5


def callee_scales_argument(x):
    y = x * 1.0
    _scale_(y, x[0])
    return np.sum(y * y)


def callee_sets_an_element(x):
    y = x * 1.0
    _set_first_(y, x[1] ** 2)
    return np.sum(y ** 3)


def callee_changes_a_view(x):
    y = x * 1.0
    _scale_(y[1:3], x[0])
    return np.sum(y * y)


def callee_changes_through_a_callee(x):
    y = x + 0.5
    _scale_twice_(y, x[3])
    return np.sum(y ** 2)


def callee_normalizes_rows(x):
    A = np.outer(x, x[:3]) + 1.0
    _normalize_rows_(A)
    return np.sum(A * np.arange(12.0).reshape(4, 3))


def argument_read_after_a_change(x):
    y = x * 2.0
    before = np.sum(y)      # read before the callee changes y
    _scale_(y, x[2])
    return before * np.sum(y)


def _fill_(v, x):
    v[:] = x[:2] * 3.0


def _row_step_(row, x, k):
    row[:] = np.sin(x * k)


def _fill_tail_(v, x):  # fills a view of its argument through another function
    _fill_(v[1:], x)


def callee_fills_a_view_of_a_constant(x):
    z = np.zeros(4)           # constant until the callee fills part of it
    _fill_(z[1:3], x)
    return np.sum(z * z)


def callee_fills_rows_of_a_constant(x):
    Z = np.zeros((3, x.size))
    for k in range(3):
        _row_step_(Z[k], x, k + 1.0)
    return np.sum(Z ** 2 * np.arange(1.0, x.size + 1))


def callee_fills_a_transposed_column(x):
    Z = np.zeros((2, 2))
    _fill_(Z.T[0], x)         # Z[:, 0]
    return np.sum(Z * Z * np.array([[1.0, 2.0], [3.0, 4.0]]))


def callee_fills_a_reshaped_row(x):
    z = np.zeros(4)
    _fill_(z.reshape(2, 2)[1], x)
    return np.sum(np.cumsum(z) ** 2)


def callee_fills_through_a_callee(x):
    z = np.ones(5)
    _fill_tail_(z[1:4], x)
    return np.sum(z ** 3)


def _double_first_read_second(a, b):
    a *= 2.0
    return np.sum(b * b)


def _read_second_set_first(a, b):
    before = np.sum(b ** 3)
    a[1:] = a[:-1] * 3.0
    return before + np.sum(b)


def callee_changes_an_argument_another_views(x):
    y = x * 1.0
    return _double_first_read_second(y, y[1:])     # one array, two names in the callee


def callee_gets_one_array_twice(x):
    y = x + 1.0
    return _double_first_read_second(y, y)


def callee_sets_what_another_argument_reads(x):
    y = x * 2.0
    return _read_second_set_first(y, y[::2]) + np.sum(y * x)


def closure_fills_a_captured_array(x):
    out = np.zeros(3)

    def put(i, v):
        out[i] = v
    for i in range(3):
        put(i, x[i] * x[(i + 1) % 3])
    return np.sum(out ** 2)


def closure_accumulates_into_a_captured_array(x):
    out = np.zeros(2)

    def add(i, v):
        out[i] += v * v
    for k in range(4):
        add(k % 2, x[k])
    return np.sum(out ** 2)


def closure_fills_rows_of_a_captured_matrix(x):
    out = np.zeros((2, 4))

    def fill_row(r, v):
        out[r] = v
    fill_row(0, x * 2.0)
    fill_row(1, x ** 2)
    return np.sum(out * out)


@pytest.mark.parametrize("f", [callee_scales_argument, callee_sets_an_element, callee_changes_a_view,
                               callee_changes_through_a_callee, callee_normalizes_rows,
                               argument_read_after_a_change, callee_fills_a_view_of_a_constant,
                               callee_fills_rows_of_a_constant, callee_fills_a_transposed_column,
                               callee_fills_a_reshaped_row, callee_fills_through_a_callee,
                               callee_changes_an_argument_another_views, callee_gets_one_array_twice,
                               callee_sets_what_another_argument_reads, closure_fills_a_captured_array,
                               closure_accumulates_into_a_captured_array,
                               closure_fills_rows_of_a_captured_matrix],
                         ids=lambda f: f.__name__)
def test_arrays_changed_in_place_by_callees(f):
    assert_grad_fd(f, np.array([1.0, 2.0, 3.0, 4.0]))


def test_callee_change_closed_form():
    def f(x):
        y = x.copy()
        _scale_(y, x[0])           # y = x0 * x
        return y[1]                # x0 * x1
    np.testing.assert_allclose(gradient(f, np.array([3.0, 5.0]))[0], [5.0, 3.0])


# -- arrays held by containers and objects, changed in place -------------------------------------------

class _Buffer:
    def __init__(self, a):
        self.a = a


def array_in_a_dict_changed(x):
    y = x * 1.0
    d = {"a": y}
    y *= 2.0                 # d["a"] is y
    return np.sum(d["a"] ** 2)


def array_in_a_list_changed_by_item(x):
    y = x * 1.0
    lst = [y, x]
    lst[0] *= x              # Python: lst[0].__imul__(x), in place: y changes
    return np.sum(y ** 2)


def array_field_changed_through_a_name(x):
    b = _Buffer(x * 1.0)
    a = b.a
    a *= 3.0
    return np.sum(b.a ** 2)


def field_changed_in_place(x):
    b = _Buffer(x * 2.0)
    keep = b.a
    b.a += x                 # keep is b.a: it sees the change
    return np.sum(keep * x)


def repeated_index_iadd(x):
    y = x * 1.0
    y[[0, 0, 2]] += x[:3]    # numpy: the last write to y[0] wins
    return np.sum(y ** 2)


def sorted_in_place(x):
    y = x * np.array([3.0, 1.1, 2.0, 0.5])
    y.sort()
    return np.sum(y * np.arange(4.0))


@pytest.mark.parametrize("f", [array_in_a_dict_changed, array_in_a_list_changed_by_item,
                               array_field_changed_through_a_name, field_changed_in_place,
                               repeated_index_iadd, sorted_in_place], ids=lambda f: f.__name__)
def test_arrays_held_and_changed_in_place(f):
    assert_grad_fd(f, np.array([1.0, 2.0, 3.0, 4.0]))


def test_a_c_method_of_a_differentiated_array_without_a_rule_is_an_error():
    def f(x):
        y = x * 1.0
        y.byteswap(inplace=True)  # no rule: refusing beats a silently wrong gradient
        return np.sum(y * np.arange(4.0))
    with pytest.raises(NoRuleError, match="byteswap"):
        gradient(f, np.array([4.0, 1.0, 3.0, 2.0]))


def test_a_scalar_operand_keeps_its_type_against_a_float32_array():
    def f(x, s):
        return np.sum(x * s)
    x = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    gx, gs = gradient(f, x, np.float64(2.0))
    assert gx.dtype == np.float32 and type(gs) is np.float64
    np.testing.assert_allclose(gs, 6.0)
    gx, gs = gradient(f, x, 2.0)
    assert type(gs) is float and gs == pytest.approx(6.0)


# -- element reads in loops: cotangents accumulate in place, in linear time -------------------------------

def _reads_through_an_alias(x):
    y = x
    s = 0.0
    for i in range(len(x)):
        s = s + x[i] * y[i] + y[i]
    return s


def _reads_of_a_shifted_copy(x):
    z = x + 0.0          # z's cotangent flows to x unchanged: they must not share an accumulator
    s = 0.0
    for i in range(len(x)):
        s = s + z[i] * x[i] ** 2
    return s + np.sum(z * z)


def _reads_of_a_rebound_array(x):
    s = 0.0
    for _ in range(3):
        x = x * 1.5
        for i in range(len(x)):
            s = s + x[i] ** 2
    return s


def _reads_mixed_with_whole_uses(x):
    w = x * 2.0
    s = np.sum(w) + w[0] * w[1]
    for i in range(len(w)):
        s = s + w[i]
    return s + np.sum(w ** 2)


def _reads_through_a_list_and_a_view(x):
    lst = [x * 1.0, x]
    a = x[:2]
    s = 0.0
    for i in range(len(x)):
        s = s + lst[0][i] * lst[1][i]
    for i in range(2):
        s = s + a[i] * x[i]
    return s


@pytest.mark.parametrize("f", [_reads_through_an_alias, _reads_of_a_shifted_copy, _reads_of_a_rebound_array,
                               _reads_mixed_with_whole_uses, _reads_through_a_list_and_a_view],
                         ids=lambda f: f.__name__.strip("_"))
def test_element_reads_in_loops(f):
    assert_grad_fd(f, np.array([0.3, 1.2, -0.7, 2.0]))


def test_element_reads_of_a_long_array_closed_form():
    def f(x):
        s = 0.0
        for i in range(len(x)):
            s = s + x[i] * x[i]
        return s
    x = np.linspace(-1.0, 1.0, 5000)
    np.testing.assert_allclose(gradient(f, x)[0], 2 * x)


# -- flat iterators, matrix transposes, fill_diagonal, unknown array attributes ----------------------------

def _flat_reads(x):
    y = x * 2.0
    return y.flat[1] * y.flat[2] + np.sum(y.flat[::2])


def _matrix_transpose(x):
    A = np.outer(x[:2], x[1:])
    return np.sum(A.mT * np.arange(6.0).reshape(3, 2))


def _fill_diagonal(x):
    A = np.outer(x, x)
    np.fill_diagonal(A, x)
    return np.sum(A ** 2)


def _fill_diagonal_cycled(x):
    A = np.outer(x, x[:3])
    np.fill_diagonal(A, x[:2] * 3.0, wrap=True)
    return np.sum(A ** 2)


@pytest.mark.parametrize("f", [_flat_reads, _matrix_transpose, _fill_diagonal, _fill_diagonal_cycled],
                         ids=lambda f: f.__name__.strip("_"))
def test_array_attributes_and_fill_diagonal(f):
    assert_grad_fd(f, np.array([0.3, 1.2, -0.7, 2.0]))


def _flat_one(x):
    y = x * 1.0
    y.flat[1] = x[0] ** 2
    return np.sum(y ** 2)


def _flat_matrix(x):  # (a 2-d array, a slice, a mask, an array of positions, `+=`, then read back)
    m = np.outer(x, x[:2])
    m.flat[::3] = np.sin(x[:2])
    m.flat[m.ravel() > 0.5] = 0.25 * x[1]
    m.flat[np.array([1, 4])] += x[2] * x[:2]
    m.flat[5] *= 3.0
    return np.sum(m ** 2) + m[1, 0] * x[0]


def _flat_transposed(x):  # (a view in Fortran order: `.flat` walks its C order, not its memory's)
    m = np.outer(x, np.array([1.0, 2.0])).T
    m.flat[1] = x[1] ** 3
    return np.sum(m * np.arange(6.0).reshape(2, 3))


def _flat_loop(q):  # (roboticstoolbox's trapezoidal: every item of a fresh array through `.flat`)
    t = np.linspace(0.0, 1.0, 5)
    p = np.zeros(t.shape)
    for k, tk in enumerate(t.flat):
        p.flat[k] = 0.2 + (q[0] - 0.2) * tk * tk + q[1] * tk
    return np.sum(p ** 2)


@pytest.mark.parametrize("f", [_flat_one, _flat_matrix, _flat_transposed, _flat_loop])
@pytest.mark.parametrize("mode", ["reverse", "forward", "hessian"])
def test_writes_through_flat(f, mode):
    from contexts import hessian, jacfwd
    x = np.array([0.7, 1.3, -0.4])[:2 if f is _flat_loop or f is _flat_one else 3]
    if mode == "reverse":
        np.testing.assert_allclose(gradient(f, x)[0], fd.gradient(f, x)[0], rtol=1e-6, atol=1e-9)
    elif mode == "forward":
        np.testing.assert_allclose(jacfwd(f, x), fd.gradient(f, x)[0], rtol=1e-6, atol=1e-9)
    else:
        np.testing.assert_allclose(hessian(f, x), fd.hessian(f, x), rtol=1e-4, atol=1e-6)


def test_a_store_through_an_objects_own_flat():
    class Grid:
        def __init__(self):
            self.flat = [0.0, 0.0]

    def f(x):
        g = Grid()
        g.flat[1] = x[0] ** 2
        return g.flat[1] * 2.0
    # (a list named flat: stored into as a list, not through an array's positions)
    np.testing.assert_allclose(gradient(f, np.array([1.5, 2.0]))[0], [6.0, 0.0])
    from contexts import jacfwd
    np.testing.assert_allclose(jacfwd(f, np.array([1.5, 2.0])), [6.0, 0.0])


def test_an_array_attribute_without_a_derivative_rule_is_refused():
    from contexts.ad.runtime import UnsupportedFunction

    def f(x):
        return np.sum(x.base * 1.0)   # .base: where the memory came from, not a value to differentiate
    with pytest.raises(UnsupportedFunction, match=r"\.base"):
        gradient(f, np.arange(4.0)[1:])


def test_in_place_callees_differentiate_correctly_from_several_threads():
    from concurrent.futures import ThreadPoolExecutor
    xs = [np.array([1.0, 2.0, 3.0, 4.0]) * (1 + k / 10) for k in range(8)]
    want = [fd.gradient(callee_changes_a_view, x)[0] for x in xs]

    def run(k):
        return [gradient(callee_changes_a_view, xs[k])[0] for _ in range(20)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(run, range(8)))
    for got, w in zip(results, want):
        for g in got:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-7)


# --- the engine's fast paths take only their exact case ------------------------------------------------
# Same-shape float64 operands of `+ - *` and one-argument ufuncs on float64 arrays skip the general rules;
# every neighbouring case (broadcasting, complex, float32, ints, 0-d) must still reach them.

C34 = A + 1j * rng.normal(size=(3, 4))


@pytest.mark.parametrize("f, args", [
    (lambda x, y: np.sum((x + y) * (x - y) * x), (A, POS)),                    # same shapes: the fast path
    (lambda x, y: np.sum(x * y - y), (A, V4)),                                 # y broadcast: summed down
    (lambda x: np.sum(np.real(x * C34)), (A,)),                                # complex constant operand
    (lambda x: np.sum(x * A.astype(np.float32)), (A,)),                        # float32 constant operand
    (lambda x: np.sum(x * np.arange(12).reshape(3, 4)), (A,)),                 # int constant operand
    (lambda x: np.sum(np.exp(x) * 3 - np.tanh(x) + 2.0 * np.log(x)), (POS,)),  # hot one-argument rules
    (lambda x: float(np.exp(x[0, 0]) * np.log(x[1, 1])), (POS,)),              # numpy scalars
    (lambda x: np.sum(np.exp(x).astype(np.float32) * x), (A,)),                # float32 cotangent of exp
], ids=["same-shape", "broadcast", "complex", "float32", "int", "hot-ufuncs", "scalars", "f32-cotangent"])
def test_fast_paths_agree_with_finite_differences(f, args):
    got = assert_grad_fd(f, *args, rtol=1e-4, atol=1e-3 if "float32" in f.__code__.co_names else 1e-7)
    for g, a in zip(got, args):
        assert g.shape == a.shape and g.dtype == a.dtype


def test_a_registered_adjoint_replaces_the_hot_case():
    from contexts.rules.registry import registry
    rule = registry.rules[np.exp]
    adjoint, hot = rule.adjoint, rule.hot
    try:
        registry.adjoint(np.exp)(lambda dy, y, x: (dy * 2.0,))  # deliberately not exp's derivative
        assert rule.hot is None
        g, = gradient(lambda x: np.sum(np.exp(x)), V3)
        np.testing.assert_allclose(g, np.full(3, 2.0))
    finally:
        rule.adjoint, rule.hot = adjoint, hot
    g, = gradient(lambda x: np.sum(np.exp(x)), V3)
    np.testing.assert_allclose(g, np.exp(V3))


@pytest.mark.parametrize("reduce", [np.sum, np.max, np.min, np.amax])
@pytest.mark.parametrize("axis, keepdims", [(None, False), (None, True), (0, False), (1, True), (-1, False),
                                            ((0, 1), False), (0, True)])
def test_reductions_with_plain_options_agree_with_finite_differences(reduce, axis, keepdims):
    w = rng.normal(size=np.shape(reduce(T, axis=axis, keepdims=keepdims)))
    assert_grad_fd(lambda x: np.sum(reduce(x, axis=axis, keepdims=keepdims) * w), T)


@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, True), (1, False)])
def test_tied_maxima_share_the_cotangent_evenly(axis, keepdims):
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    g, = gradient(lambda x: np.sum(np.max(x, axis=axis, keepdims=keepdims)), x)
    hit = x == np.max(x, axis=axis, keepdims=True)
    np.testing.assert_allclose(g, hit / hit.sum(axis=axis, keepdims=True))


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_a_nan_maximum_takes_the_whole_cotangent(axis):
    x = np.array([[1.0, np.nan], [4.0, 2.0]])
    g, = gradient(lambda x: np.sum(np.max(x, axis=axis)), x)  # np.max propagates the NaN
    want = {None: [[0, 1], [0, 0]], 0: [[0, 1], [1, 0]], 1: [[0, 1], [1, 0]]}[axis]
    np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_np_put_and_ndarray_put(mode):
    ind = [0, 2, -1, 2] if mode == "raise" else [0, 2, 7, 2]   # 7 is wrapped or clipped

    def by_function(x):
        a = np.zeros(5)
        np.put(a, ind, x[:2] * x[2], mode=mode)                  # x[:2] repeats: 4 positions
        return np.sum(a * np.arange(1.0, 6.0) * x[0])

    def by_method(x):
        a = x * 1.0
        a.put([1, 3, 1], x[[2, 0, 3]] ** 2, mode=mode)   # position 1 twice: the last write wins
        return np.sum(a * a)
    x = np.array([1.3, -0.7, 2.1, 0.4])
    assert_grad_fd(by_function, x)
    assert_grad_fd(by_method, x)


@pytest.mark.parametrize("f", [np.maximum, np.minimum, np.fmax, np.fmin])
def test_relu_like_extrema_against_finite_differences(f):
    # an array against a threshold that is itself differentiated (a scalar: its cotangent sums over the
    # elements that took it), away from ties where the derivative jumps
    a = rng.normal(size=(6, 5))
    a[np.abs(a - 0.1) < 0.05] += 0.2
    w = rng.normal(size=a.shape)
    assert_grad_fd(lambda a, t: np.sum(f(a, t) * w), a, 0.1)
    assert_grad_fd(lambda a, t: np.sum(f(t, a) * w), a, 0.1)
    (g32,) = gradient(lambda a: np.sum(f(a, np.float32(0.0))), a.astype(np.float32))
    assert g32.dtype == np.float32
    np.testing.assert_array_equal(g32, (f(a, 0.0) == a).astype(np.float32))
