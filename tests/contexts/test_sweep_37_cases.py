"""Cases of session 37: crashes, false refusals and silent wrong derivatives met on code nobody here wrote
(package sweeps, generated programs), each checked against finite differences in every mode."""

import numpy as np
import pytest

from contexts import derivative, gradient, hessian, jacfwd, jvp
from overdub.errors import OverdubError
from tests import fd
from tests.modes import MODES, assert_right_or_refused, assert_scalar_modes


# -- an ndarray subclass with operators of its own, in forward mode (gen13 W3) -----------------------------------
# The tangent twin and the duals take an array's operators for numpy's: `w + x` of a Vec whose `__add__` adds a
# square had the tangent of a plain sum (5 for 8.2), and `np.multiply(v, x)` on duals ran Vec's own `__mul__`
# (which doubles: 8 for 8.2, the value changed too). Forward mode now refuses such a class; reverse mode runs its
# code (right) or refuses.

class _Vec(np.ndarray):
    def __mul__(self, other):
        return np.multiply(np.asarray(self), other) * 2.0

    def __add__(self, other):
        return np.add(np.asarray(self), np.asarray(other) ** 2)


def _vec_sum_viewed(x):
    a = (np.array([1.0, 2.0]) * x).view(_Vec)
    return (a + x).sum()


def _vec_scaled(x):
    a = (np.array([1.0, 2.0]) * x).view(_Vec)
    return np.sum(a * 3.0)


def _vec_by_ufunc(x):
    w = np.multiply(np.array([1.0, 2.0]).view(_Vec), x)
    return (w + x).sum()


def _vec_constant_operand(x):
    v = np.array([1.0, 2.0]).view(_Vec)
    return (v * x).sum() + (v + x).sum()


@pytest.mark.parametrize("f", [_vec_sum_viewed, _vec_scaled, _vec_by_ufunc, _vec_constant_operand])
@pytest.mark.parametrize("mode", MODES)
def test_ndarray_subclass_own_operators(f, mode):
    assert_right_or_refused(mode, f, 1.3)


@pytest.mark.one_mode  # (with both modes, reverse mode answers after forward mode's refusal: below)
@pytest.mark.parametrize("f", [_vec_sum_viewed, _vec_scaled, _vec_by_ufunc])
def test_ndarray_subclass_own_operators_refused_in_forward_mode(f):
    with pytest.raises(OverdubError):
        derivative(f, 1.3)
    with pytest.raises(OverdubError):
        jacfwd(lambda v: f(v[0] + v[1]), np.array([0.6, 0.7]))


def test_ndarray_subclass_own_operators_forward_answered_by_reverse():
    np.testing.assert_allclose(derivative(_vec_scaled, 1.3), fd.derivative(_vec_scaled, 1.3), rtol=1e-7)
    for f in (_vec_sum_viewed, _vec_by_ufunc):  # (reverse mode refuses these too: `__add__` stores into objects)
        with pytest.raises(OverdubError):
            derivative(f, 1.3)


def test_ndarray_subclass_own_operators_right_in_reverse_mode():
    np.testing.assert_allclose(gradient(_vec_scaled, 1.3)[0], fd.derivative(_vec_scaled, 1.3), rtol=1e-8)
    # a constant Vec times x: its own `__mul__` runs on the differentiated number, in both modes
    np.testing.assert_allclose(derivative(_vec_constant_operand, 1.3), fd.derivative(_vec_constant_operand, 1.3),
                               rtol=1e-8)


# -- `.base` of a perturbed array (gen13 W1) --------------------------------------------------------------------
# A dual answered `a.base` with a value never None: `if a.base is None` took the other branch (6 for 3, hessian 72
# for 18). Now None where the value owns its memory; `b.base is a` (a dual is not its value's owner) is refused.

def _owns_memory(x):
    a = np.array([1.0, 2.0]) * x
    return a.sum() if a.base is None else 2 * a.sum()


def _copy_owns_memory(x):
    a = np.array([1.0, 2.0]) * x
    c = a.copy()
    return a.sum() if c.base is None else 3 * a.sum()


def _getattr_base(x):
    a = np.array([1.0, 2.0]) * x
    return a.sum() if getattr(a, "base", None) is None else 4 * a.sum()


def _view_not_none(x):
    a = np.array([1.0, 2.0]) * x
    b = a[::2]
    return b.sum() * a.sum() if b.base is not None else a.sum()


@pytest.mark.parametrize("f", [_owns_memory, _copy_owns_memory, _getattr_base, _view_not_none])
def test_base_none_as_numpy_answers(f):
    assert_scalar_modes(f, 1.3)


class _Holder:
    def __init__(self, a):
        self.a = a

    def total(self):
        b = self.a.T
        return self.a.sum() if b.base is self.a else 7 * self.a.sum()


def _base_identity(x):
    a = np.array([1.0, 2.0]) * x
    b = a[::2]
    return a.sum() if b.base is a else 5 * a.sum()


@pytest.mark.parametrize("f", [_base_identity, lambda x: _Holder(np.array([1.0, 2.0]) * x).total()])
def test_base_identity_refused_in_forward_mode(f):
    np.testing.assert_allclose(gradient(f, 1.3)[0], fd.derivative(f, 1.3), rtol=1e-8)
    with pytest.raises(OverdubError, match="base"):
        derivative(f, 1.3)
    with pytest.raises(OverdubError, match="base"):
        hessian(lambda s: f(s) ** 2, 1.3)


# -- np.nditer over negative strides; an index it tracks (gen13 W5, C4) ---------------------------------------
# np.nditer draws a view with negative strides in memory order (it flips them); the adjoint laid its positions
# out with positive ones and put each item's cotangent at the mirrored element (85 for 198).

_W = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])


def _weighted_draws(view):
    def f(x):
        a = view(_W * x ** np.arange(1, 7))
        s = 0.0
        for i, v in enumerate(np.nditer(a)):
            s = s + (i + 1) * v * v
        return s
    return f


_VIEWS = {
    "reversed": lambda a: a[::-1],
    "every other reversed": lambda a: a[::-2],
    "rows reversed": lambda a: a.reshape(2, 3)[::-1],
    "columns reversed": lambda a: a.reshape(2, 3)[:, ::-1],
    "transposed reversed": lambda a: a.reshape(2, 3).T[::-1],
    "fortran columns reversed": lambda a: np.asfortranarray(a.reshape(2, 3))[:, ::-2],
}


@pytest.mark.parametrize("view", list(_VIEWS.values()), ids=list(_VIEWS))
def test_nditer_over_negative_strides(view):
    f = _weighted_draws(view)
    np.testing.assert_allclose(gradient(f, 1.1)[0], fd.derivative(f, 1.1), rtol=1e-7)


def _multi_index(x):
    a = (_W[:4] * x).reshape(2, 2)
    s = 0.0
    it = np.nditer(a, flags=["multi_index"])
    for v in it:
        i, j = it.multi_index
        s = s + (i + 2 * j + 1) * v * v
    return s


def test_nditer_tracking_an_index():
    # (the iterator was drawn whole at the loop: `it.multi_index` was read past its end, a ValueError; refused
    # until session 70, now numpy's iterator of one array is Python code, `rules.numpy.indexing.NdIter`)
    want = fd.derivative(_multi_index, 1.3)
    np.testing.assert_allclose(gradient(_multi_index, 1.3)[0], want, rtol=1e-8)
    np.testing.assert_allclose(derivative(_multi_index, 1.3), want, rtol=1e-8)


# -- ravel(order='K') and order 'A' in forward mode (gen13 W6 forward half, C5) ------------------------------
# The tangent, C-ordered, was read in its own memory order where the value is Fortran-ordered (197.6 for 187.6);
# on duals `ravel(order='K')` crashed (np.reshape takes no 'K').

def _fortran_ravel(order, method):
    def f(x):
        a = np.asfortranarray((_W * x ** np.arange(1, 7)).reshape(2, 3))
        if method == "ravel":
            r = a.ravel(order=order)
        elif method == "np.ravel":
            r = np.ravel(a, order=order)
        else:
            r = a.flatten(order=order)
        return (r * np.arange(1, 7)).sum()
    return f


@pytest.mark.parametrize("order", ["A", "K"])
@pytest.mark.parametrize("method", ["ravel", "np.ravel", "flatten"])
def test_ravel_in_memory_order_forward(order, method):
    f = _fortran_ravel(order, method)
    want = fd.derivative(f, 1.3)
    np.testing.assert_allclose(derivative(f, 1.3), want, rtol=1e-8)
    np.testing.assert_allclose(jvp(f, (1.3,), (1.0,))[1], want, rtol=1e-8)
    np.testing.assert_allclose(gradient(f, 1.3)[0], want, rtol=1e-8)


@pytest.mark.parametrize("view", [lambda a: np.asfortranarray(a), lambda a: a.T, lambda a: a[:, ::-1],
                                  lambda a: a[:, ::2], lambda a: np.asfortranarray(a)[::-1]])
@pytest.mark.parametrize("order", ["A", "K"])
def test_ravel_in_memory_order_on_duals(view, order):
    from contexts.forward import Dual, Tag
    arr = view(np.arange(12.0).reshape(3, 4) ** 1.5)
    d = Dual(arr, arr * 10 + 1, Tag())
    for r in (np.ravel(d, order=order), d.ravel(order=order), d.flatten(order=order)):
        np.testing.assert_array_equal(r.primal, arr.ravel(order=order))
        # (the tangent, an array of its own layout, read in the value's order: element by element arr's * 10 + 1)
        np.testing.assert_array_equal(r.tangent, arr.ravel(order=order) * 10 + 1)


def _fortran_ravel_columns(v):
    a = np.asfortranarray(np.outer(v, [1.0, 2.0, 3.0]))[:, ::-1]
    return a.ravel(order="K") ** 2


def test_jacfwd_of_ravel_in_memory_order():
    v = np.array([0.5, 1.5])
    np.testing.assert_allclose(jacfwd(_fortran_ravel_columns, v), fd.jacobian(_fortran_ravel_columns, v),
                               rtol=1e-6, atol=1e-9)


# -- a field of a structured array stored in forward mode (gen13 C1): a crash, now refused as in reverse ----------

def _records(x):
    s = np.zeros(3, dtype=[("p", float), ("q", float)])
    s["p"] = _W[:3] * x
    s["q"] = _W[1:4] * x * x
    return (s["p"] * s["q"]).sum()


@pytest.mark.parametrize("mode", MODES)
def test_structured_field_store_refused(mode):
    assert assert_right_or_refused(mode, _records, 1.3)


# -- np.asarray of an ndarray subclass with its own __array_ufunc__, in reverse mode (gen13 C3) -----------------
# The builder was taken for a dispatch to the class's protocol and came back to itself (RecursionError).

class _Unwrapping(np.ndarray):
    def __array_ufunc__(self, ufunc, method, *inputs, **kw):
        inputs = tuple(i.view(np.ndarray) if isinstance(i, _Unwrapping) else i for i in inputs)
        out = getattr(ufunc, method)(*inputs, **kw)
        return out.view(_Unwrapping) if isinstance(out, np.ndarray) else out


def _unwrapped(x):
    a = (np.array([1.0, 2.0]) * x).view(_Unwrapping)
    return np.asarray(np.tanh(a) + a).sum()


def test_asarray_of_subclass_with_own_array_ufunc():
    # (no RecursionError; since session 43 an operator on a subclass whose `__array_ufunc__` is its own code is
    # refused in reverse mode, as that code may compute anything: pkJ W6 doubled every result)
    assert_right_or_refused("gradient", _unwrapped, 0.7)
    assert_right_or_refused("forward", _unwrapped, 0.7)


# -- scipy.special.ellipj: Jacobi's elliptic functions had no rule (refused; pkZ) -------------------------------
# In u: (cn dn, -sn dn, -m sn cn, dn); in m through the amplitude's derivative at fixed u, with its limit at m = 0.

@pytest.mark.parametrize("u, m", [(0.7, 0.3), (2.5, 0.9), (-1.4, 0.05)])
def test_ellipj_rule(u, m):
    import scipy.special as sc
    fd.check_rule(sc.ellipj, np.array([u, u / 2]), np.array([m, m / 3]), diff=(0, 1))


def _jacobi(u, m):
    import scipy.special as sc
    sn, cn, dn, ph = sc.ellipj(u, m)
    return sn * 2 + cn * dn + ph ** 2


@pytest.mark.parametrize("mode", MODES)
def test_ellipj_in_both_arguments(mode):
    assert not assert_right_or_refused(mode, _jacobi, 0.7, 0.3)


def test_ellipj_at_m_zero():
    # the amplitude's derivative in m at m = 0 is its limit, -(u - sin u cos u) / 4; one-sided differences there
    import scipy.special as sc
    u, h = -0.4, 1e-7
    want = [(a - b) / h for a, b in zip(sc.ellipj(u, h), sc.ellipj(u, 0.0))]
    got = [gradient(lambda m, k=k: sc.ellipj(u, m)[k], 0.0)[0] for k in range(4)]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


# -- an infinite exponent: a perpetuity's discount `(1 + r) ** -inf` (pkY's perpetuity, left from session 36) ----
# Its derivative in the base is 0 where the power is 0, never -inf * 0 = NaN: forward mode's np.power and Python
# pow on duals, and the hessian's derivative of reverse mode's partial on a dual, gave NaN.

def _perpetuity(r, n=float("inf")):
    return 100.0 / r * (1 - (1 + r) ** -n)


def _perpetuity_np(r):
    return float(100.0 / r * (1 - np.power(1 + r, -np.inf)))


def _perpetuities(r):
    return (100.0 / r * (1 - np.power(1 + r, np.array([-np.inf, -30.0])))).sum()


@pytest.mark.parametrize("f", [_perpetuity, _perpetuity_np, _perpetuities])
def test_infinite_exponent(f):
    assert_scalar_modes(f, 0.05, hrtol=1e-6)


# -- an infinite or NaN constant beside duals (gen14): its zero tangent was `inf * 0`, NaN ----------------------
# `np.where(mask, np.inf, x)` on duals (forward mode past its tangent twin) gave the constant's entries a NaN
# tangent, and np.min / np.nanmax of it a NaN derivative.

def _dual_path(x):
    np.apply_along_axis(lambda r: r @ r, 0, x.reshape(2, 2))  # (forward mode's duals, past its twin)


def _min_beside_inf(x):
    _dual_path(x)
    return np.min(np.where(np.arange(4) == 0, np.inf, x) * 2.0)


def _nanmax_beside_nan(x):
    _dual_path(x)
    return np.nanmax(np.where(np.arange(4) == 0, np.nan, x))


def _max_beside_minus_inf(x):
    _dual_path(x)
    return np.max(np.where(x > 0.6, x, -np.inf))


@pytest.mark.parametrize("f", [_min_beside_inf, _nanmax_beside_nan, _max_beside_minus_inf])
def test_infinite_constant_beside_duals(f):
    x = np.array([0.478, 0.9318, 0.6647, 0.9977])
    direction = np.array([1.0, 0.5, 2.0, 1.5])
    want = fd.directional(f, (x,), (direction,))
    np.testing.assert_allclose(jvp(f, (x,), (direction,))[1], want, rtol=1e-6)
    np.testing.assert_allclose(derivative(lambda t: f(x + t * direction), 0.0), want, rtol=1e-6)


# -- ufunc.at for ufuncs other than add and subtract, and np.add.reduceat (gen14: refused in both modes) ---------
# numpy's writes one after another (repeated positions see each other's results): replayed a round of distinct
# positions at a time, each write by the ufunc's own rule.

_AT = np.array([0, 2, 2, 1, 0, 2])


def _multiply_at(x):
    a = np.cos(x).copy()
    np.multiply.at(a, _AT, x + 0.5)
    return (a * np.arange(1, 7)).sum()


def _maximum_at(x):
    a = x * 1.0
    np.maximum.at(a, _AT, np.sin(x) * 2)
    return (a ** 2 * np.arange(1, 7)).sum()


def _divide_at(x):
    a = x ** 2
    np.divide.at(a, [0, 1, 1], 1.5 + x[:3])
    return a.sum()


def _negative_at(x):
    a = x * 1.0
    np.negative.at(a, [1, 1, 3])
    return (a * np.arange(6)).sum()


def _multiply_at_2d(x):
    a = np.ones((2, 2)) * x[0]
    np.multiply.at(a, (np.array([0, 0, 1]), np.array([1, 1, 0])), x[1:4])
    return a.sum() + a[0, 1] ** 2


def _multiply_at_into_constant(x):
    a = np.ones(6)
    np.multiply.at(a, _AT, x)
    return (a * np.arange(1, 7)).sum()


def _reduceat_runs(x):
    return (np.add.reduceat(x ** 2, [0, 2, 2, 5, 1]) * np.arange(1, 6)).sum()


def _reduceat_axes(x):
    m = x.reshape(3, 2)
    return (np.add.reduceat(np.sin(m), [0, 2], axis=0) ** 2).sum() + np.add.reduceat(m, [1, 0], axis=1).prod()


@pytest.mark.parametrize("f", [_multiply_at, _maximum_at, _divide_at, _negative_at, _multiply_at_2d,
                               _multiply_at_into_constant, _reduceat_runs, _reduceat_axes])
@pytest.mark.parametrize("mode", ["reverse", "forward", "jvp"])
def test_ufunc_at_and_reduceat(f, mode):
    from tests.modes import assert_array_gradient
    assert_array_gradient(mode, f, np.array([0.4, 0.9, 1.3, 0.7, 1.1, 0.6]))


# -- a set of classes (trueskill's `set(map(type, values))`, left from session 36): constants, not refused ------

def _kinds_of(x):
    vals = [x, 2.0 * x, 3.0]
    kinds = set(map(type, vals))
    return sum(vals) * len(kinds) if float in kinds else 0.0


class _Holds:
    pass


def _class_holding_a_number(x):
    _Holds.v = x * 2.0
    s = {_Holds}
    return next(iter(s)).v * x


def test_set_of_classes():
    assert_scalar_modes(_kinds_of, 1.3, second=False)
    assert_right_or_refused("reverse", _class_holding_a_number, 1.3)


# -- false refusals of pkB's packages: int keys given a cotangent, a counter numbering objects, is_integer --------

def _int_keys(x):
    table = {1: x, 2: x * x}
    return sum(table[k] * k for k in table)


def _int_keys_loop(x):
    table = {1: np.array([x, 2 * x]), 2: np.array([x * x, 1.0])}
    t = 0.0
    for k in table:
        t = t + np.sum(table[k]) * k
    return t


_NUMBERING = __import__("itertools").count(1)


class _Numbered:
    def __init__(self, e):
        self.e = e
        self.k = next(_NUMBERING)


def _numbered(x):
    return _Numbered(x).e * 2 + (3.0 * x).is_integer()


@pytest.mark.parametrize("f", [_int_keys, _int_keys_loop, _numbered])
def test_constants_beside_differentiated_values(f):
    assert_scalar_modes(f, 1.3, second=False)


def _float_keys(x):
    table = {x: 1.0, 2.0: x}
    return sum(table[k] * k for k in table)


def _counted_from(x):
    c = __import__("itertools").count(x, 0.5)
    next(c)
    return next(c) * 2


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
@pytest.mark.parametrize("f", [_float_keys, _counted_from])
def test_differentiated_keys_and_counters_still_refused_in_reverse(f):
    with pytest.raises(OverdubError):
        gradient(f, 1.3)
    assert_right_or_refused("forward", f, 1.3)


def _whole(x):
    return x * 2 if (x * 1.0).is_integer() else x * 3


@pytest.mark.parametrize("mode", MODES)
def test_is_integer_of_a_moving_whole_number_refused(mode):
    # (a test of equality: right off whole numbers, refused at one where the value moves, as `x == 2.0` is)
    from tests.modes import gradient_in
    np.testing.assert_allclose(gradient_in(mode, _whole, 1.3)[0], 3.0)
    with pytest.raises(OverdubError):
        gradient_in(mode, _whole, 2.0)


# -- a store into a copy of a constant array beside a loop over that array (pkA, audiodspy's envelope) ---------
# `y = np.copy(x)` then `y[n] = level` in `for n, s in enumerate(x)`: activity took y for a view of x, so the
# loop ran over an "active" sequence, forward mode's twin gave up and the duals refused the store into a
# plain array. A fresh array's stores reach nothing else.

_SAMPLES = np.array([0.5, -1.0, 2.0, 0.1])


def _envelope(r):
    y = np.copy(_SAMPLES)
    level = 0
    for n, s in enumerate(_SAMPLES):
        level += r * (np.abs(s) - level)
        y[n] = level
    return float(np.sum(y))


def _envelope_zeros(r):
    x = _SAMPLES * 1.0
    y = np.zeros_like(x)
    level = 0.0
    for n, s in enumerate(x):
        level = level + r * (s - level)
        y[n] = level
    return float(np.sum(y * x))


@pytest.mark.parametrize("f", [_envelope, _envelope_zeros])
def test_store_into_a_fresh_copy_in_a_loop_over_the_original(f):
    # (the hessian of the first is refused: forward over reverse stores a dual into the plain copy)
    assert_scalar_modes(f, 0.3, second=f is _envelope_zeros)


# -- a fine rounding by keyword or by method (pkA, elote's `np.round(r, decimals=13)` after a solve) -----------
# Refused by position (`np.round(x, 13)`); by keyword, np.around, round(x, ndigits=13), `a.round(13)` and
# `np.float64(x).round(13)` gave 0 silently in every mode (finite differences: 3).

_FINE_ROUNDINGS = {
    "np.round decimals=": lambda m: float(np.round(3.0 * m, decimals=13)),
    "np.around decimals=": lambda m: float(np.around(3.0 * m, decimals=13)),
    "round ndigits=": lambda m: round(3.0 * m, ndigits=13),
    "ndarray.round": lambda m: float(np.array([3.0 * m]).round(13)[0]),
    "ndarray.round decimals=": lambda m: float(np.array([3.0 * m]).round(decimals=13)[0]),
    "float64.round": lambda m: float(np.float64(3.0 * m).round(13)),
}


def _massey(m):
    M = np.array([[2.0, -1.0, -1.0], [-1.0, 2.0, -1.0], [1.0, 1.0, 1.0]])
    p = np.zeros(3)
    p[0] = m + 3.0
    p[1] = 7.0 - m
    r = np.round(np.linalg.solve(M, p), decimals=13)
    return float(r[0]) - 2 * float(r[2])


@pytest.mark.parametrize("f", [*_FINE_ROUNDINGS.values(), _massey], ids=[*_FINE_ROUNDINGS, "massey"])
@pytest.mark.parametrize("mode", ["gradient", "derivative", "hessian"])
def test_fine_rounding_by_keyword_or_method_refused(f, mode):
    import contexts
    with pytest.raises(OverdubError, match="rounds it by steps"):
        getattr(contexts, mode)(f, 7.0)


# -- a singular slope times a zero tangent (gen14 W3, gen15 W4): NaN, never 0 ---------------------------------------
# sqrt or arccos at a constant entry of an array holding x (numpy's own np.kaiser), a distance matrix's diagonal
# (`sum(d ** 2) ** 0.5` at d = 0): a zero tangent times an infinite slope. Taking such a term as 0 is right where
# the entry is a constant but wrong where it moves to a higher order (`np.cbrt(x ** 3)` at 0 has derivative 1:
# the rule that made it 0 gave jvp and derivative 0 there, and session 37 had spread it to jacfwd and the
# gradient): a zero tangent is no proof of a constant, so the term stays NaN (honest, visible), in every mode.

def _switched_off_noise(x):
    theta = np.array([x[0], x[1], 0.0])
    return theta[0] * theta[1] + np.sqrt(theta[2]) * theta[0]


def _kaiser(x):
    return np.sum(np.kaiser(6, x[0]) * np.arange(1, 7)) + x[1]


def _self_distances(x):
    from scipy.spatial import distance_matrix
    P = np.array([[x[0], 1.0], [2.0, x[1]], [0.5, 0.5]])
    return distance_matrix(P, P).sum()


def _cube_root_of_cube(x):
    return np.sum(np.cbrt(x ** 3) * np.array([1.0, 2.0]))


def _right_or_not_finite(got, want):
    got = np.asarray(got, dtype=float)
    assert not np.all(np.isfinite(got)) or np.allclose(got, want, rtol=1e-6, atol=1e-9), (got, want)


@pytest.mark.parametrize("f", [_switched_off_noise, _kaiser, _self_distances, _cube_root_of_cube])
def test_singular_slope_times_a_zero_tangent_is_never_zero(f):
    x = {_kaiser: np.array([2.5, 0.3]), _cube_root_of_cube: np.array([0.0, 0.7])}.get(f, np.array([0.3, 1.7]))
    want = fd.gradient(f, x)[0] if f is not _cube_root_of_cube else np.array([1.0, 2.0])
    direction = np.array([1.0, -0.4])
    for got in (jacfwd(f, x), gradient(f, x)[0]):
        _right_or_not_finite(got, want)
    _right_or_not_finite(jvp(f, (x,), (direction,))[1], want @ direction)
    _right_or_not_finite(derivative(lambda t: f(x + t * direction), 0.0), want @ direction)


# -- an unknown cotangent through float() of a 0-d array (gen15 W1) -----------------------------------------------
# A C function without a rule (or a partial without a closed form) sends back `Refused`; float()'s adjoint of a 0-d
# array filled an array with it by np.full, whose copyto kept the array's uninitialised memory: a number (the
# function's value, another argument's partial) came back where reverse mode refuses the same call on x itself.

def _no_rule_through_float(x):
    import scipy.special as sc
    return sc.zetac(float(np.asarray(x))) * 0.4


def _no_closed_form_through_float(v):
    import scipy.special as sc
    return sc.struve(float(np.asarray(v)), 1.5)  # (struve's order has no derivative the rules know)


def _spline_value_as_shape(x):
    import scipy.interpolate as si
    import scipy.stats as st
    spl = si.CubicSpline([0.0, 1.0, 2.0, 3.0], np.array([1.0, 2.0, 2.5, 4.0]) * x)
    return st.ncx2.sf(2.0, float(spl(1.5)), 1.4)  # (ncx2's df has no derivative the rules know)


@pytest.mark.parametrize("f", [_no_rule_through_float, _no_closed_form_through_float, _spline_value_as_shape])
def test_unknown_cotangent_through_float_of_0d_array_refused(f):
    with pytest.raises(OverdubError):
        gradient(f, 1.7)


# -- the same object given twice to a function without source (gen15 W2; scipy.stats' exec-made _parse_args) ------
# Its cotangents are routed back by identity: each place the object was given took the whole, counted twice
# (`stats.logistic.cdf(0.8, loc=x, scale=x)`: twice its derivative, the hessian too).

_NS: dict = {}
exec("def _parse(loc=0, scale=1):\n    return (), loc, scale\n", _NS)


def _parsed_twice(x):
    args, loc, scale = _NS["_parse"](x, x)
    return loc + 2.0 * scale * loc


def _logistic_loc_scale(x):
    import scipy.stats as st
    return st.logistic.cdf(0.8, loc=x, scale=x)


def _frozen_var(x):
    import scipy.stats as st
    return st.logistic(loc=x, scale=x).var() + st.norm.logpdf(0.8, loc=x, scale=x)


@pytest.mark.parametrize("f", [_parsed_twice, _logistic_loc_scale, _frozen_var])
def test_same_object_twice_through_a_function_without_source(f):
    assert_scalar_modes(f, 1.1)


# -- the hessian of PPoly.integrate in its coefficients (gen15 W3) ----------------------------------------------
# Forward over forward ran the kernel's frule as code, whose call into the plain output array dropped the outer
# derivative's tangent: 0 for 2 (the auto hessian falls back to it: forward over reverse is refused there).

def _ppoly_integral(x):
    import scipy.interpolate as si
    return float(si.PPoly(np.array([[1.0], [x * x]]), np.array([0.0, 1.0])).integrate(0.0, 1.0))


def _pchip_integral(x):
    import scipy.interpolate as si
    t = np.linspace(0.0, 2.0, 5)
    return float(si.PchipInterpolator(t, np.sin(t * x) + x * t).integrate(0.2, 1.7))


@pytest.mark.parametrize("f", [_ppoly_integral, _pchip_integral])
def test_hessian_of_ppoly_integrate(f):
    want = fd.derivative(lambda s: derivative(f, s), 0.9, h=1e-4)
    np.testing.assert_allclose(hessian(f, 0.9), want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(hessian(f, 0.9, inner="forward"), want, rtol=1e-5, atol=1e-7)


# -- scipy.linalg.det (gen15: its Cython kernel find_det_from_lu had no rule; refused in both modes) -------------

_A0 = np.array([[2.0, 0.3, 0.1], [0.4, 1.5, -0.2], [0.1, 0.2, 1.1]])


def _scipy_det(x):
    import scipy.linalg as sl
    return sl.det(_A0 * x[0] + np.diag(x))


@pytest.mark.parametrize("mode", ["reverse", "forward", "jvp"])
def test_scipy_linalg_det(mode):
    from tests.modes import assert_array_gradient
    assert_array_gradient(mode, _scipy_det, np.array([1.1, 0.7, 0.9]))


def test_scipy_linalg_det_hessian():
    x = np.array([1.1, 0.7, 0.9])
    np.testing.assert_allclose(hessian(_scipy_det, x), fd.hessian(_scipy_det, x), rtol=1e-5, atol=1e-6)


# -- regular expressions (pkB: pyequion's formula parsing, ChemCompute's reactions) -------------------------------
# Text in, text out: primitives in every mode (reverse mode refused `Match.groups` "with differentiable inputs",
# and differentiated the stdlib's regex compiler: an IndexError in its adjoint). A differentiated number's text
# cut out by a match and parsed back is still refused where float() parses it.

def _formula_count(x):
    import re
    feed = {"NaCl": x, "CaCl2": 10.0}
    tags = list(feed.keys())
    element, digits = re.match(r"([A-Za-z]+)([0-9]+)", tags[1]).groups()
    return x * int(digits) + feed["NaCl"] * len(element)


def _number_text_cut_out(x):
    import re
    text = f"value={x:.9f} units"
    return float(re.search(r"value=([0-9.]+)", text).group(1)) * 2.0


def test_regular_expressions_are_primitives():
    assert_scalar_modes(_formula_count, 1.5, second=False)
    for mode in MODES:
        with pytest.raises(OverdubError, match="text"):
            from tests.modes import gradient_in
            gradient_in(mode, _number_text_cut_out, 1.5)
