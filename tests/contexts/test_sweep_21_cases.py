"""Cases found by sweeps of generated programs and PyPI packages (POT, numpy_financial, sklearn), each
checked in every mode against central differences."""

import numpy as np
import pytest

from contexts import gradient, hessian, jacfwd
from tests import fd

X = np.array([-0.82, -1.23, 0.67, 0.4])


@pytest.mark.parametrize("f", [
    lambda x: x.clip(min=-0.101).sum() + (x.clip(max=0.5) ** 2).sum(),
    lambda x: np.clip(x, min=-0.9, max=0.5).sum(),
    lambda x: x[:3].clip(min=x[3] ** 2 - 1.0).sum(),  # (a differentiated bound by keyword)
    lambda x: np.clip(x[:3], a_min=None, a_max=x[3]).sum() * x[0],
], ids=["method min/max", "function min/max", "active min", "active a_max"])
def test_clip_bounds_by_keyword(f):
    # (forward mode called np.clip(a, None, None, min=...): ValueError; reverse mode refused a keyword
    # bound: its rule gave no cotangent by keyword)
    expected = fd.gradient(f, X)[0]
    np.testing.assert_allclose(gradient(f, X)[0], expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(jacfwd(f, X), expected, rtol=1e-6, atol=1e-9)


def test_hessian_through_a_constant_zero_power():
    # (POT's mm_unbalanced at reg=0: `0 ** 0.0`, a constant, and forward over reverse computed its
    # partial in the base, 0 ** -1.0: ZeroDivisionError)
    def f(m):
        c, r = 0, 0 / 1.4
        return np.sum((c ** r) * np.exp(-m) * m)
    m = np.array([0.3, 0.7])
    np.testing.assert_allclose(hessian(f, m), fd.hessian(f, m, matrix=True), rtol=1e-4, atol=1e-6)


def _every_mode(f, x):
    expected = fd.gradient(f, x)[0]
    np.testing.assert_allclose(gradient(f, x)[0], expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(jacfwd(f, x), expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(hessian(f, x), fd.hessian(f, x, matrix=True), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(hessian(f, x, inner="forward"), fd.hessian(f, x, matrix=True), rtol=1e-4, atol=1e-5)


V = np.array([1.11, 3.63, -1.92, 0.05, 0.45, 1.02, 0.3, 1.0, -0.5])


@pytest.mark.parametrize("f", [
    lambda v: np.sum(np.interp(v[:3], v[3:6], v[6:], period=1.3) ** 3),
    lambda v: np.sum(np.interp(v[:3], [0.0, 0.5, 1.0], [0.3, 1.0, -0.5], period=-1.3) ** 3),
    lambda v: np.interp([v[0], 0.7], [0.0, 1.0], [v[1], 2.0]).sum() ** 2,
    lambda v: np.interp(v[0] / 4, [0.0, 1.0], [v[1], 2.0]) ** 2,
], ids=["period in everything", "negative period", "a list x", "a scalar x"])
def test_interp(f):
    # (forward mode ignored period=: 0 outside the samples' range; reverse mode raised NotImplementedError,
    # so the default hessian fell back to forward: all zeros. A list of duals gave NaN tangents.)
    _every_mode(f, V)


@pytest.mark.parametrize("f", [
    lambda x: np.sum(np.diff(x, prepend=0.5) ** 3),
    lambda x: np.sum(np.diff(x, append=np.array([2.0, 1.0])) ** 3),
    lambda x: np.sum(np.diff(x, n=2, prepend=0.3, append=x[0]) ** 3),
    lambda x: np.sum(np.diff(np.outer(x, x), axis=0, prepend=1.5) ** 2),
], ids=["prepend", "append", "n=2, a differentiated append", "2-d, axis 0"])
def test_diff_with_values_joined(f):
    # (forward mode took np.diff as linear: the constant prepend entered the tangent)
    _every_mode(f, np.array([0.37, 1.21, -0.64]))


@pytest.mark.parametrize("mode", ["clip", "wrap"])
def test_take_out_of_range_by_mode(mode):
    # (reverse mode scattered the cotangent at the indices as given: IndexError)
    f = lambda x: (np.take(x, [0, 5, -7, 2], mode=mode) ** 3).sum() + (x.take([4, 1], mode=mode) ** 2).sum()  # noqa: E731
    _every_mode(f, np.array([0.3, -1.2, 0.8]))


def test_jacfwd_of_a_dict_or_a_list_of_arrays():
    # (a dict crashed with KeyError, a list mixing a number and an array with ValueError)
    from contexts import jacfwd
    f = lambda d: d["a"] ** 2 * np.sum(np.sin(d["b"]))  # noqa: E731
    p = {"a": 1.5, "b": np.array([1.0, 2.0])}
    j = jacfwd(f, p)
    g = gradient(f, p)[0]
    assert set(j) == {"a", "b"} and j["a"] == pytest.approx(2 * 1.5 * np.sum(np.sin([1.0, 2.0])))
    np.testing.assert_allclose(j["b"], g["b"], rtol=1e-12)
    np.testing.assert_allclose(j["b"], fd.gradient(lambda b: f({"a": 1.5, "b": b}), p["b"])[0], rtol=1e-6)
    jl = jacfwd(lambda t: np.array([t[0] * t[1][0], t[1][1] ** 2]), [1.5, np.array([1.0, 2.0])])
    assert jl[0].shape == (2,) and jl[1].shape == (2, 2)
    np.testing.assert_allclose(jl[0], [1.0, 0.0])
    np.testing.assert_allclose(jl[1], [[1.5, 0.0], [0.0, 4.0]])


def test_a_special_point_check_perturbs_the_items_of_a_list_argument():
    # (sklearn's Matern compares its constant nu == 2.5: with x passed as [X, length_scale] the check could
    # not perturb a list and refused (SpecialPoint); its items are perturbed now, and nu does not move)
    class Kernel:
        def __init__(self, scale, nu):
            self.scale, self.nu = scale, nu

        def __call__(self, x):
            if self.nu == 2.5:
                return np.exp(-np.sum(x * x) / self.scale)
            return np.sum(x)

    f = lambda d: Kernel(d[1], nu=2.5)(d[0]) + Kernel(d[1], 2.5).scale  # noqa: E731
    x, s = np.array([0.3, -0.2]), 0.9
    g = gradient(f, [x, s])[0]
    np.testing.assert_allclose(g[0], fd.gradient(lambda v: f([v, s]), x)[0], rtol=1e-6)
    assert g[1] == pytest.approx(fd.derivative(lambda t: f([x, t]), s), rel=1e-6)
    with pytest.raises(Exception, match="compared equal"):  # (where the compared value is the list's item)
        gradient(lambda d: np.sum(d[0]) if d[1] == 2.5 else 0.0, [x, 2.5])


@pytest.mark.parametrize("f", [
    lambda x: np.fromiter((np.sin(v) * v for v in x), float).sum(),
    lambda x: (np.fromiter(iter(x ** 2), dtype=np.float64, count=2) ** 2).sum(),
    lambda x: np.fromiter(map(np.exp, x), float) @ x,
], ids=["generator", "count", "map"])
def test_fromiter(f):
    # (reverse mode had no rule for np.fromiter; forward mode's duals could not enter numpy's C loop)
    _every_mode(f, np.array([0.3, -1.2, 0.8]))


def _squares_in_place(x):
    x *= x  # (changes the caller's array, as a plain call does)
    return x.sum() + x[0] * x[1]


def _squares_through_star(x):
    def core(v):
        v *= v
        return v.sum() + v[0] * v[1]
    return core(*[x])


@pytest.mark.parametrize("f", [_squares_in_place, _squares_through_star], ids=["in place", "through *args"])
def test_a_function_changing_its_argument_in_place(f):
    # (a second pass — the next chunk of jacfwd's directions, hessian's forward-over-forward after a
    # refused forward-over-reverse — ran on the values the first had squared: silently wrong; jvp and hvp
    # changed the caller's direction array)
    from contexts import hvp, jvp
    x0 = np.array([0.5, -1.2, 0.8])
    expected = 2 * x0 + np.array([2 * x0[0] * x0[1] ** 2, 2 * x0[1] * x0[0] ** 2, 0.0])
    hess = np.diag([2.0, 2.0, 2.0]) + np.array([[2 * x0[1] ** 2, 4 * x0[0] * x0[1], 0],
                                                [4 * x0[0] * x0[1], 2 * x0[0] ** 2, 0], [0, 0, 0]])
    for chunk in (None, 1, 2):
        np.testing.assert_allclose(jacfwd(f, x0.copy(), chunk=chunk), expected, rtol=1e-12)
    from overdub.errors import OverdubError
    d = np.array([1.0, 0.5, -1.0])
    keep = d.copy()
    assert jvp(f, (x0.copy(),), (d,))[1] == pytest.approx(expected @ d, rel=1e-12)
    try:
        np.testing.assert_allclose(hessian(f, x0.copy()), hess, rtol=1e-12)
        np.testing.assert_allclose(hvp(f, x0.copy(), d), hess @ d, rtol=1e-12)
    except OverdubError:  # (through *args, a change in place of a nested dual is refused in both ways)
        assert f is _squares_through_star
    np.testing.assert_array_equal(d, keep)


@pytest.mark.parametrize("f", [
    lambda a: (lambda s: s[0])(_add_lists(a)),
    lambda a: (a[:1] + [a[1]])[0] * a[2] + np.sum(np.ones(2) * [a[0], a[2]]),
], ids=["s += [x] twice", "array + [x]"])
def test_a_list_of_differentiated_numbers_as_an_operand(f):
    # (forward mode lost the second `s += [a[1]]`'s tangent: jacfwd [1, 0, 0] for [1, 1, 0]; reverse mode
    # crashed merging the list's cotangent)
    x = np.array([0.3, 1.2, -0.7])
    expected = fd.gradient(f, x)[0]
    np.testing.assert_allclose(gradient(f, x)[0], expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(jacfwd(f, x), expected, rtol=1e-6, atol=1e-9)


def _add_lists(a):
    s = np.zeros(1)
    s += [a[0]]
    s += [a[1] * a[2]]
    return s


@pytest.mark.parametrize("new", [lambda a: a + 0.0, lambda a: 0.0 + a, lambda a: a - 0.0, lambda a: np.add(a, 0),
                                 lambda a: a ** 1], ids=["a + 0.0", "0.0 + a", "a - 0.0", "np.add(a, 0)", "a ** 1"])
def test_a_new_array_shares_no_second_order_tangent(new):
    # (forward over forward: `a + 0.0` passed a's tangent on unchanged, itself a dual whose arrays were
    # a's: a change in place of the new array changed a's Hessian: 2x with `b *= 2`)
    def f(x):
        a = x ** 3
        b = new(a)
        b *= 2.0
        b[0] = 5.0
        return np.sum(a) + np.sum(b)
    x = np.array([0.7, -1.3, 0.4])
    np.testing.assert_allclose(hessian(f, x, inner="forward"), fd.hessian(f, x, matrix=True), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(hessian(f, x), fd.hessian(f, x, matrix=True), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("view", [lambda b: np.split(b, 4)[1], lambda b: np.einsum("ii->i", b)],
                         ids=["split piece", "einsum diagonal"])
def test_writes_through_views_at_second_order(view):
    # (forward over forward: the views' second-order tangents were copies, the writes through them lost)
    def f(x):
        b = np.outer(x, x) if view(np.eye(4)).ndim == 1 else np.outer(x, x)
        v = view(b)
        v *= 1.5
        return np.sum(b * b)
    x = np.array([0.7, -1.3, 0.4, 0.9])
    expected = fd.hessian(f, x, matrix=True)
    np.testing.assert_allclose(hessian(f, x, inner="forward"), expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(hessian(f, x), expected, rtol=1e-4, atol=1e-4)


def test_a_dict_updated_then_popped():
    # (scipy.stats' _axis_nan_policy wrapper: `kwds.update(...)` then `kwds.pop("axis", 0)`; the update's
    # undo deleted a key the pop's had not put back: KeyError; stats.describe's gradient crashed)
    import scipy.stats as st

    def f(x):
        k = {"b": x[1]}
        k.update({"a": x[0] * 2, "b": x[1] ** 2})
        v = k.pop("a", 0.0)
        return v * k.pop("b") + x[0]
    _every_mode(f, np.array([0.3, 1.2]))
    g = lambda x: st.describe(x).variance + st.skew(x, 0) + st.kurtosis(x, 0)  # noqa: E731
    x = np.array([0.3, 1.2, -0.5, 2.0])
    np.testing.assert_allclose(gradient(g, x)[0], fd.gradient(g, x)[0], rtol=1e-6)


@pytest.mark.parametrize("convert", [float, complex], ids=["float", "complex"])
def test_a_number_converted_in_forward_over_forward(convert):
    # (forward over forward: float() of a dual whose tangent is a dual of a chunk of directions converted
    # the chunk itself: TypeError)
    f = lambda x: convert(np.sum(x * x * x)).real  # noqa: E731
    x = np.array([0.5, -1.2])
    np.testing.assert_allclose(hessian(f, x, inner="forward"), np.diag(6 * x), rtol=1e-12)


def test_asarray_of_a_dual_array_is_the_array_itself():
    # (forward over forward: np.asarray(b) made a new dual over b's arrays; a later write replacing a part of
    # b was not seen through it: a Hessian entry 0 for 5.4)
    def f(x):
        b = x.copy()
        v = np.asarray(b)
        b[1] = x[3] ** 3
        return np.sum(v)
    x = np.array([0.7, -1.1, 0.4, 0.9])
    for inner in ("auto", "forward"):
        np.testing.assert_allclose(hessian(f, x, inner=inner), np.diag([0, 0, 0, 6 * x[3]]), atol=1e-12)


def _through_einsum_diagonal(x):
    b = x.reshape(2, 2).copy()
    np.einsum("ii->i", b)[...] = np.diagonal(x.reshape(2, 2)) ** 3
    return np.sum(b ** 2)


def _through_a_sliding_window(x):
    b = x.copy()
    v = np.lib.stride_tricks.sliding_window_view(b, 2)
    b[1] = x[3] ** 3
    return np.sum(v ** 2)


def _through_broadcast_to(x):
    b = x * 1.0
    v = np.broadcast_to(b, (2, 4))
    b[0] = x[1] ** 2
    b += x * x
    return np.sum(v * v)


def _through_a_split_piece(x):
    b = x.copy()
    v = np.split(b, [1])[1]
    v[0] = x[2] ** 3
    return np.sum(b * b)


@pytest.mark.parametrize("f", [_through_einsum_diagonal, _through_a_sliding_window, _through_broadcast_to,
                               _through_a_split_piece])
@pytest.mark.parametrize("inner", ["auto", "forward"])
def test_a_value_written_through_a_view_keeps_its_second_derivative(f, inner):
    # (a dual of an outer derivative's dual was seeded with a plain tangent, which a written value, a dual of
    # both, replaced by a new one: views taken before kept the old, and the Hessian lost 2 c c'')
    x = np.array([0.93, -0.34, 0.71, -1.01])
    np.testing.assert_allclose(hessian(f, x, inner=inner), fd.hessian(f, x, matrix=True), rtol=1e-4, atol=1e-5)


def test_hvp_by_forward_over_forward_through_a_written_view():
    from contexts import hvp
    x = np.array([0.93, -0.34, 0.71, -1.01])
    v = np.array([0.5, -1.0, 2.0, 0.25])
    expected = fd.hessian(_through_einsum_diagonal, x, matrix=True) @ v
    np.testing.assert_allclose(hvp(_through_einsum_diagonal, x, v, inner="forward"), expected, rtol=1e-4, atol=1e-5)
