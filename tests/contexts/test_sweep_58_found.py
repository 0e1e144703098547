"""What session 58 found, each checked against closed forms (each failed before).

- Python's exact sums of partials (Shewchuk's msum, the `math.fsum` recipe; pygeodesy's `Fsum`) keep a
  partial only where the two-sum residual `lo` is not 0: `if lo:`. At a point where a residual is exactly
  0 with a rate of exactly 0 the test is a special case (`SpecialCase`), judged from the two sides; but
  beside the point the residuals' rates are rounding noise, and the sides' runs refused that: 135 of 300
  points of a polynomial summed by msum were refused in both modes (pygeodesy's `fpolynomial` on 3.13).
  Where the sides cannot be differentiated, the special case's own derivative now stands if it is the
  central difference of f's plain values (which refuse nothing) along the differentiated direction and a
  random second one, with f smooth there (the difference at 2H agrees) and its value the sides' mean;
  else the refusal stays (a special case whose own formula misses a term).
- `math.fma(x, y, -(x * y))` (TwoProduct, 3.13) is the product's rounding error: a constant, not a value
  whose chain-rule rate cancels to 0.0.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from contexts import SpecialPoint, derivative, gradient, jacfwd, jvp


def _msum(xs):
    partials = []
    for x in xs:
        i = 0
        for y in partials:
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo:
                partials[i] = lo
                i += 1
            x = hi
        partials[i:] = [x]
    return sum(partials, 0.0)


def _polynomial(x):
    return _msum([x, 3.0 * x * x, -0.5 * x ** 3, 1.0, 0.1 * x])


def _slope(x):
    return 1.1 + 6.0 * x - 1.5 * x * x


POINTS = np.linspace(0.1, 3.0, 40)


@pytest.mark.parametrize("mode", [derivative, gradient], ids=["forward", "reverse"])
def test_exact_sum_of_partials_at_zero_residuals(mode):
    wrong = [(x, d) for x in map(float, POINTS)
             if abs(d := np.ravel(mode(_polynomial, x))[0] - _slope(x)) > 1e-9 * abs(_slope(x))]
    assert not wrong


def test_exact_sum_of_partials_jacobian():
    def f(v):
        return np.array([_msum([v[0], 3.0 * v[0] * v[1], -0.5 * v[1] ** 3, 1.0]), v[0] * v[1]])

    v = np.array([0.11939799331103679, 0.7])
    expected = np.array([[1.0 + 3.0 * v[1], 3.0 * v[0] - 1.5 * v[1] ** 2], [v[1], v[0]]])
    np.testing.assert_allclose(jacfwd(f, v), expected, rtol=1e-12)


@pytest.mark.parametrize("mode", [derivative, gradient], ids=["forward", "reverse"])
def test_special_case_missing_a_term_stays_refused_where_the_sides_refuse(mode):
    x0 = 0.11939799331103679  # (a point whose sides' residuals are rounding noise: the sides refuse)

    def g(x):
        n = (x - x0) * (x - x0)
        if n == 0:  # (the special case misses the 3 (x - x0) the formula has: its derivative 3 less)
            return _polynomial(x)
        return _polynomial(x) + 3.0 * (x - x0)

    with pytest.raises(SpecialPoint, match="not its plain values' central difference"):
        mode(g, x0)


@pytest.mark.skipif(not hasattr(math, "fma"), reason="math.fma: Python 3.13")
def test_product_error_is_a_constant():
    calls = []

    def f(x):
        calls.append(x)
        p = x * 2.0
        e = math.fma(x, 2.0, -p)  # (0 for every x: a product by 2 is exact)
        return p + e if e else p * x

    _, t = jvp(f, (0.7,), (1.0,))
    assert t == pytest.approx(2.8, rel=1e-15)
    assert len(calls) == 1  # (no special case to judge from the sides: 8 runs before)
    assert gradient(lambda x: math.fma(x, 3.0, 1.0) * x, 0.7)[0] == pytest.approx(3.0 * 1.4 + 1.0, rel=1e-15)


# -- ndarray subclasses that only re-wrap their values (scikit-spatial's Vector, Points: 18 cases per mode
# refused in session 57's sweep) --

class _Checked(np.ndarray):
    """scikit-spatial's pattern: `__new__` checks and views, `__array_wrap__` re-wraps by the class."""

    def __new__(cls, array):
        if np.size(array) == 0:
            raise ValueError("empty")
        if not np.isfinite(array).all():
            raise ValueError("not finite")
        obj = np.asarray(array).view(cls)
        return obj

    def __array_wrap__(self, array, context=None, return_scalar=False):
        if return_scalar:
            return array[()]
        try:
            return type(self)(array)
        except Exception:
            return array


class _Row(_Checked):
    def __new__(cls, array_like):
        array = np.array(array_like)
        if array.ndim != 1:
            raise ValueError("1-D")
        return super().__new__(cls, array_like)

    def __array_finalize__(self, _):
        self.dimension = self.size

    def unit(self):
        return self / np.linalg.norm(self)

    @property
    def length(self):
        return np.linalg.norm(self)


class _Clipped(_Checked):
    """A constructor that changes the values: not a re-wrap."""

    def __new__(cls, array):
        return np.clip(np.asarray(array), -1.0, 1.0).view(cls)


def _distance_to_line(x):
    point, direction = _Row(x[:3]), _Row(x[3:])
    to = _Row([1.0, 2.0, 0.5]) - point
    along = to.dot(direction.unit())
    return float(np.sqrt(to.length ** 2 - along ** 2) + point.dimension)


def _distance_closed_form(x):
    p, d = x[:3], x[3:]
    to = np.array([1.0, 2.0, 0.5]) - p
    u = d / np.linalg.norm(d)
    r = to - (to @ u) * u  # (the gradient of |r| in p is -r/|r| projected; in d by the chain rule below)
    dist = np.linalg.norm(r)
    gp = -(r - (r @ u) * u) / dist
    n = np.linalg.norm(d)
    gd = -(to @ u) * (to - (to @ u) * u) / (n * dist)
    return np.concatenate([gp, gd])


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_rewrapping_subclass_differentiated_in_both_modes(mode):
    x = np.array([0.6456, 1.122, 0.6304, -1.003, 1.205, 0.7464])
    got = gradient(_distance_to_line, x)[0] if mode == "reverse" else jacfwd(_distance_to_line, x)
    np.testing.assert_allclose(got, _distance_closed_form(x), rtol=1e-10, atol=1e-12)


def test_subclass_whose_constructor_changes_values_stays_refused():
    from contexts.rules.registry import changes_values
    assert not changes_values(_Row)
    assert changes_values(_Clipped)

    def f(x):
        return float(np.sum(_Clipped(x) * 2.0))

    from overdub.errors import OverdubError
    with pytest.raises(OverdubError):
        gradient(f, np.array([0.5, 2.0]))
    with pytest.raises(OverdubError):
        jacfwd(f, np.array([0.5, 2.0]))


# -- np.unique along an axis (scikit-spatial's collinearity checks count unique rows), and at ties --

def test_unique_rows_in_both_modes():
    def g(x):
        a = np.stack([x, x ** 2], axis=1)
        u, c = np.unique(a, axis=0, return_counts=True)
        return float(np.sum(u[:, 0] * u[:, 1] * c) + len(u))

    y = np.array([0.3, -0.2, 0.7])
    expected = 3 * y ** 2  # (sum of x**3 over distinct rows)
    np.testing.assert_allclose(gradient(g, y)[0], expected, rtol=1e-12)
    np.testing.assert_allclose(jacfwd(g, y), expected, rtol=1e-12)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_unique_at_a_tie_that_parts_is_refused(mode):
    from contexts.rules.ties import TieError

    def f(x):  # (x0 == x1: any step parting them adds a unique value: the sum jumps by x0**2)
        return float(np.sum(np.unique(x) ** 2))

    with pytest.raises(TieError, match="np.unique at a tie"):
        (gradient if mode == "reverse" else jacfwd)(f, np.array([1.0, 1.0, 2.0]))

    def g(x):  # (copies of one quantity move together: the sum is smooth, 2 x0 + 2 x1 ... of distinct values)
        return float(np.sum(np.unique(np.array([x[0], x[0], x[1]])) ** 2))

    got = gradient(g, np.array([1.0, 2.0]))[0] if mode == "reverse" else jacfwd(g, np.array([1.0, 2.0]))
    np.testing.assert_allclose(got, [2.0, 4.0], rtol=1e-14)


# -- np.linalg.svd with full_matrices=True of a non-square matrix: reverse mode where the completing vectors
# are not read (scikit-spatial's plane fit reads U of a 3 x N matrix, complete) --

_M = np.array([[1.0, 0.2, 0.3, -0.4], [0.1, 2.0, 0.5, 0.3], [0.2, -0.1, 0.7, 1.1]])


def _plane_normal_weight(x):
    u, s, _ = np.linalg.svd(_M + x.reshape(3, 4) * 0.3)
    return float(np.sum(u[:, 2] ** 2 * np.array([1.0, 2.0, 3.0])) + s[0])


def _completion_read(x):
    u, s, vh = np.linalg.svd((_M + x.reshape(3, 4) * 0.3).T)
    return float(np.sum(u[:, 3] ** 3))


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_full_svd_of_a_wide_matrix_reverse():
    from tests import fd
    x = np.linspace(-0.3, 0.4, 12)
    np.testing.assert_allclose(gradient(_plane_normal_weight, x)[0], fd.gradient(_plane_normal_weight, x)[0],
                               rtol=1e-6, atol=1e-8)
    from contexts.rules.numpy._util import UnsupportedCase
    with pytest.raises(UnsupportedCase, match="completing singular vectors"):
        gradient(_completion_read, x)
    with pytest.raises(UnsupportedCase, match="full_matrices=True"):
        jacfwd(_plane_normal_weight, x)


# -- an array's elementwise special case reached by entries whose rate is an exact 0 (session 57's known
# silent wrong: a vectorised axis-angle rotation at a zero row gave 0 in both modes) --

_T = np.array([1.0, 2.0, 0.5])
_W = np.array([0.3, -0.2, 0.7])


def _rotate_rows(V, by_norm):
    n = np.linalg.norm(V, axis=1) if by_norm else np.sqrt(np.einsum("ij,ij->i", V, V))
    safe = np.where(n == 0, 1.0, n)
    k = V / safe[:, None]
    c, s = np.cos(n)[:, None], np.sin(n)[:, None]
    r = _T * c + np.cross(k, _T) * s + k * (k @ _T)[:, None] * (1 - c)
    return np.where((n == 0)[:, None], _T, r)


@pytest.mark.parametrize("by_norm", [True, False], ids=["norm", "einsum"])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_vectorised_rotation_at_a_zero_row(mode, by_norm):
    from tests import fd

    def f(w):
        r = _rotate_rows(w.reshape(2, 3), by_norm)
        return float(r[0] @ _W + np.sum(r[1]))

    x = np.array([0.0, 0.0, 0.0, 0.2, -0.1, 0.4])
    got = gradient(f, x)[0] if mode == "reverse" else jacfwd(f, x)
    np.testing.assert_allclose(got[:3], np.cross(_T, _W), rtol=1e-6)  # (d/dv (t + v x t) . w = t x w)
    np.testing.assert_allclose(got[3:], fd.gradient(f, x)[0][3:], rtol=1e-6)


class _Plain(np.ndarray):
    def __new__(cls, a):
        return np.asarray(a).view(cls)

    def plain_norm(self):
        return float(np.sqrt(np.sum(self.view(np.ndarray) ** 2)))

    def scaled(self, k):
        return _Plain(np.asarray(self) * k)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_subclass_methods_and_plain_views(mode):
    def f(x):
        v = _Plain(x)
        return v.scaled(2.0).plain_norm() + float(np.sum(v[1:] ** 3))

    x = np.array([0.3, 0.5, -0.7])
    expected = 2 * x / np.linalg.norm(x) + np.r_[0.0, 3 * x[1:] ** 2]
    got = gradient(f, x)[0] if mode == "reverse" else jacfwd(f, x)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


# -- a helper's sweep of 13 new packages at special points (session 58): tolerance shortcuts taken at an
# exactly special input, and a norm's cone tip, were silently wrong in both modes --

_W4 = np.array([0.7, -1.3, 0.4, 0.9])


def _normalised(q):  # (pyquaternion's `normalised`: `is_unit` skips the division on a shell 1e-14 thin)
    if abs(1.0 - q @ q) < 1e-14:
        return _W4 @ q
    return _W4 @ (q / np.sqrt(q @ q))


def _log_vector(v):  # (pytransform3d's, rowan's: below eps, a constant)
    n = np.sqrt(v @ v) if v @ v > 0 else 0.0
    if n < np.finfo(float).eps:
        return 0.0
    return _W4[1:] @ (v / n * np.arctan2(n, 1.0))


def _sinc_by_norm(x):  # (a composite smooth through the norm's cone tip: sinc(|x|) x0)
    n = np.linalg.norm(x)
    return np.sin(n) * x[0] / np.maximum(n, np.finfo(float).tiny)


def _sinc_rows(x):
    X = x.reshape(2, 3)
    n = np.linalg.norm(X, axis=-1)
    return np.sum(np.sin(n) * X[:, 0] / np.maximum(n, np.finfo(float).tiny))


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("f, x, expected", [
    (_normalised, np.full(4, 0.5), _W4 - (_W4 @ np.full(4, 0.5)) * np.full(4, 0.5)),
    (_log_vector, np.zeros(3), _W4[1:]),
    (_sinc_by_norm, np.zeros(3), np.array([1.0, 0.0, 0.0])),
    (_sinc_rows, np.array([0.3, -0.2, 0.5, 0.0, 0.0, 0.0]), None),
], ids=["unit-shell", "below-eps", "norm-tip", "norm-tip-row"])
def test_tolerance_shortcuts_and_cone_tips(mode, f, x, expected):
    from tests import fd
    if expected is None:
        expected = fd.gradient(f, x)[0]
        assert abs(expected[3] - 1.0) < 1e-6  # (the zero row's sinc: 1 in its first entry)
    got = gradient(f, x)[0] if mode == "reverse" else jacfwd(f, x)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-9)


def _slerp_weight(q1):  # (trimesh's quaternion_slerp: the shortcut holds for |q1 - q0| below ~3e-8)
    q0 = np.full(4, 0.5)
    q1 = q1 / np.linalg.norm(q1)
    d = q0 @ q1
    if abs(abs(d) - 1.0) < 4 * np.finfo(float).eps:
        return _W4 @ q0
    angle = np.arccos(d)
    return _W4 @ ((np.sin(0.7 * angle) * q0 + np.sin(0.3 * angle) * q1) / np.sin(angle))


def _rows_isclose(x):  # (rowan's exp: rows whose vector part's norm is within 1e-8 of 0 take 0)
    V = x.reshape(2, 3)
    n = np.linalg.norm(V, axis=-1)
    zero = np.isclose(n, 0)
    out = np.zeros_like(V)
    out[~zero] = V[~zero] / n[~zero, None] * np.sin(n[~zero, None])
    return float(np.sum(out * _W4[1:]))


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("f, x", [(_slerp_weight, np.full(4, 0.5)),
                                  (_rows_isclose, np.array([0.3, -0.2, 0.5, 0.0, 0.0, 0.0]))],
                         ids=["slerp", "isclose-rows"])
def test_shortcuts_wider_than_the_sides_refused(mode, f, x):
    # (central differences 1e-5 away see the formula; the sides 1e-8 away sat inside the shortcut: 0 came out)
    with pytest.raises(SpecialPoint):
        gradient(f, x) if mode == "reverse" else jacfwd(f, x)


def _hue_at_a_tie(x):  # (skimage's rgb2hsv: the channel formulas chosen by `arr[..., k] == arr.max(-1)`)
    arr = np.array([x[0], x[1], 0.2]).reshape(1, 3)
    v = arr.max(-1)
    d = np.ptp(arr, axis=-1)
    out = np.empty(1)
    idx = arr[:, 0] == v
    out[idx] = (arr[idx, 1] - arr[idx, 2]) / d[idx]
    idx = arr[:, 1] == v
    out[idx] = 2.0 + (arr[idx, 2] - arr[idx, 0]) / d[idx]
    return out[0]


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_formula_chosen_at_a_tie_of_arrays(mode):
    # (reverse mode took max's even split inside the green formula, valid on one side: half the slope)
    x = np.array([0.6, 0.6])
    got = gradient(_hue_at_a_tie, x)[0] if mode == "reverse" else jacfwd(_hue_at_a_tie, x)
    np.testing.assert_allclose(got, [-2.5, 2.5], rtol=1e-6)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_tolerance_shortcut_met_late_in_a_loop(mode):
    # (the test's earlier visit moved, off its bound: a loop over data, not an iteration converging onto it)
    def normalised(q):
        if abs(1.0 - q @ q) < 1e-14:
            return q
        return q / np.sqrt(q @ q)

    def f(x):
        return float(sum(_W4 @ normalised(q) for q in (x[:4], x[4:])))

    p, q = np.array([0.3, 0.1, 0.2, 0.4]), np.full(4, 0.5)
    x = np.r_[p, q]
    want = np.r_[(_W4 - (_W4 @ p) / (p @ p) * p) / np.linalg.norm(p), _W4 - (_W4 @ q) * q]
    got = gradient(f, x)[0] if mode == "reverse" else jacfwd(f, x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
