"""Idioms of optimisation benchmark suites (optproblems' WFG, deap's DTLZ, opfunu, CEC) that gave silently
wrong derivatives, each against central differences in every mode it reaches:

- `y = f(y)` where f builds and returns a new list (WFG's `y = self.transition1(y)`): reverse mode gave
  twice the gradient (4x through two transitions) — the arguments a Python callee may change in place were
  read after the call, when the name already held the result;
- `out.extend(generator)` (DTLZ's objectives): an iterator has no length afterwards, so reverse mode took
  none of the items' cotangents (0, silently) and left the list's cotangent misaligned;
- `for v in x` over an array under `hessian` (forward over reverse; sphere, Rastrigin, CEC's loops): the
  rows' cotangents were dropped (an all-zero Hessian);
- builtin `max`/`min`/`sorted`/`sum` of an array in reverse mode: its cotangent came back as a list with
  Nones, which became NaN (`max(x)` gave [1, nan, nan]) or crashed when added to an array's.
"""

from __future__ import annotations

import numpy as np
import pytest

from contexts import derivative, gradient, hessian, jacfwd
from tests import fd


# -- a name rebound to a callee's result, the callee given the old value ------------------------------

def _square_first(y):
    t = []
    t.append(y[0] * y[0])
    return t


def _scaled_copy(y, k):
    out = []
    for v in y:
        out.append(v * k)
    return out


def _fill_and_return(y):
    y[0] = y[0] * 3.0  # changes its argument in place, and returns it
    return y


def _rebound_list(x):
    y = [x]
    y = _square_first(y)
    return y[0]


def _rebound_twice(x):  # WFG: one transition after another, each on the last one's output
    y = [x, 2.0 * x]
    y = _scaled_copy(y, 1.5)
    y = _scaled_copy(y, x)
    return y[0] + y[1] * y[1]


def _rebound_changed_in_place(x):
    y = [x, x * x]
    z = y
    y = _fill_and_return(y)
    return y[0] * z[1] + y[1]


def _rebound_array(x):
    a = np.array([x, 2.0 * x])
    b = a
    a = _fill_and_return(a)
    return float(a[0] * b[1] + np.sum(a))


class _Transitions:
    def shift(self, y):
        return [v - 0.35 for v in y]

    def bias(self, y, w):
        t = []
        for v in y:
            t.append(v ** 2 * w)
        return t

    def __call__(self, x):
        y = list(x)
        y = self.shift(y)
        y = self.bias(y, 1.3)
        return y[0] + 2.0 * y[1]


@pytest.mark.parametrize("f", [_rebound_list, _rebound_twice, _rebound_changed_in_place, _rebound_array])
def test_rebound_to_result_scalar(f):
    want = fd.gradient(f, 0.7)[0]
    assert gradient(f, 0.7)[0] == pytest.approx(want, rel=1e-7)
    assert derivative(f, 0.7) == pytest.approx(want, rel=1e-7)


def test_rebound_to_result_method_chain():
    f, x = _Transitions(), np.array([0.7, 1.9])
    want = fd.gradient(f, x)[0]
    np.testing.assert_allclose(gradient(f, x)[0], want, rtol=1e-7)
    np.testing.assert_allclose(jacfwd(f, x), want, rtol=1e-7)
    np.testing.assert_allclose(hessian(f, x), fd.hessian(f, x), rtol=1e-5, atol=1e-6)


# -- list.extend of an iterator -------------------------------------------------------------------

def _extend_generator(x):
    out = [x]
    out.extend(x * k for k in (1.0, 2.0))
    out.append(x * x)
    return out[0] * 3.0 + out[2] + out[3]


def _extend_map(x):
    out = []
    out.extend(map(lambda t: t * t, [x, 2.0 * x]))
    return out[0] + out[1] * x


def _extend_iter_then_sized(x):
    out = []
    out.extend(iter([x, x * x]))
    out.extend(np.array([x, x * 2.0]))
    out.extend((x, x * 3.0))
    out.extend([])
    return out[0] * out[1] + out[3] * out[5]


def _dtlz_objectives(x):  # deap's dtlz1 shape: objectives extended from a generator, then summed
    g = sum((xi - 0.5) ** 2 for xi in x[2:])
    f = [0.5 * np.prod(x[:2]) * (1 + g)]
    f.extend(0.5 * np.prod(x[:m]) * (1 - x[m]) * (1 + g) for m in range(1, 0, -1))
    f.extend([0.5 * (1 - x[0]) * (1 + g)])
    return f[0] + 2.0 * f[1] + 3.0 * f[2]


@pytest.mark.parametrize("f", [_extend_generator, _extend_map, _extend_iter_then_sized])
def test_extend_by_an_iterator(f):
    want = fd.gradient(f, 0.7)[0]
    assert gradient(f, 0.7)[0] == pytest.approx(want, rel=1e-7)
    assert derivative(f, 0.7) == pytest.approx(want, rel=1e-7)


def test_extend_by_a_generator_dtlz():
    x = np.array([0.3, 0.6, 0.45, 0.8])
    want = fd.gradient(_dtlz_objectives, x)[0]
    np.testing.assert_allclose(gradient(_dtlz_objectives, x)[0], want, rtol=1e-7)
    np.testing.assert_allclose(jacfwd(_dtlz_objectives, x), want, rtol=1e-7)


# -- iterating an array under hessian (forward over reverse) -----------------------------------------

def _loop_sphere(x):
    s = 0.0
    for v in x:
        s = s + v * v * x[0]
    return s


def _generator_sum(x):
    return sum(v ** 3 for v in x)


def _unpacked(x):
    a, b, c = x
    return a * a * b + np.sin(c) * a


def _comprehension_row(x):
    return [v * v for v in x][1] * x[0]


def _rastrigin_loop(x):
    ret = 0.0
    for v in x:
        ret += v ** 2 - 10.0 * np.cos(2.0 * np.pi * v) + 10.0
    return ret


@pytest.mark.parametrize("f", [_loop_sphere, _generator_sum, _unpacked, _comprehension_row, _rastrigin_loop])
def test_hessian_of_iteration_over_an_array(f):
    x = np.array([0.3, 0.8, 0.6])
    np.testing.assert_allclose(hessian(f, x), fd.hessian(f, x), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(jacfwd(lambda t: gradient(f, t)[0], x), fd.hessian(f, x), rtol=1e-5, atol=1e-5)


def test_iterating_a_deque_is_followed_not_zero():
    # (a C deque's items were lost to reverse mode, 0; it was refused, and a deque made in differentiated code is
    # now a Python stand-in over a list that reverse mode follows: `replacements.Deque`)
    import collections

    def f(t):
        d = collections.deque([t, 2.0 * t])
        s = 0.0
        for v in d:
            s += v * v
        return s
    assert abs(gradient(f, 0.7)[0] - fd.derivative(f, 0.7)) < 1e-6


# -- builtins iterating an array ------------------------------------------------------------------

@pytest.mark.parametrize("f", [
    lambda x: max(x),
    lambda x: min(x) * 2.0,
    lambda x: max(x * 1.0) + x.sum(),
    lambda x: max(x ** 2),
    lambda x: sorted(x)[-1] * sorted(x)[0],
    lambda x: sum(x) * x[1],
    lambda x: max(x, key=abs),
    lambda x: sum(np.sin(x)) + min(np.cos(x)),
], ids=["max", "min", "max_plus_sum", "max_square", "sorted", "sum", "max_key", "sum_min_mixed"])
def test_builtins_over_an_array(f):
    x = np.array([0.3, -2.0, 0.1, 1.2])
    want = fd.gradient(f, x)[0]
    got = gradient(f, x)[0]
    assert isinstance(got, np.ndarray) and got.shape == x.shape
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(jacfwd(f, x), want, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(hessian(f, x), fd.hessian(f, x), rtol=1e-5, atol=1e-5)


# -- crashes met on the way (opfunu's `rounder`, pyswarms' `d = x.shape[1]` under hessian) -------------

@pytest.mark.parametrize("f", [
    lambda x: np.sum(np.modf(2.0 * x)[0] * x),
    lambda x: np.sum(np.frexp(x)[0] * x),
    lambda x: np.sum(np.divmod(x, 0.9)[1] * x),
], ids=["modf", "frexp", "divmod"])
def test_two_output_ufuncs_in_forward_mode(f):
    x = np.array([0.3, -2.2, 0.7])
    want = fd.gradient(f, x)[0]
    np.testing.assert_allclose(jacfwd(f, x), want, rtol=1e-7)
    np.testing.assert_allclose(gradient(f, x)[0], want, rtol=1e-7)


def _modf_unpacked(x):
    dec, inter = np.modf(2.0 * x)
    return np.sum(dec * x + inter)


def test_two_output_ufunc_unpacked_in_forward_mode():
    x = np.array([0.3, -2.2, 0.7])
    np.testing.assert_allclose(jacfwd(_modf_unpacked, x), fd.gradient(_modf_unpacked, x)[0], rtol=1e-7)


@pytest.mark.parametrize("f", [
    lambda t: np.sum(t.reshape(3, 2).shape[1] * t.reshape(3, 2) ** 2),
    lambda t: np.sum(t.reshape(3, 2).T[0] ** 3),
    lambda t: np.sum(t.reshape(3, 2).real ** 3) * t.size,
    lambda t: np.sum(np.sin(t.reshape(3, 2).mT) * t.reshape(3, 2).mT),
], ids=["shape", "T", "real_size", "mT"])
def test_hessian_reads_array_attributes(f):
    x = np.array([0.3, -1.2, 2.1, 0.7, -0.4, 1.5])
    np.testing.assert_allclose(hessian(f, x), fd.hessian(f, x), rtol=1e-5, atol=1e-5)


# -- 0 * inf on the way back, where forward mode leaves the singular entry out (opfunu's Cola) -----------

def _cola_distances(x):
    p = np.atleast_2d(x)
    return np.sum(np.tril(np.sqrt((p - p.T) ** 2), -1))


def _masked_root(x, w):
    d = np.abs(x[:, None] - x[None, :])
    return np.sum(w * np.triu(np.sqrt(d), 1))


def test_a_singular_partial_left_out_of_the_output():
    # sqrt at 0 on the diagonal has an infinite slope; the triangle leaves the diagonal out, so its exact
    # zero cotangent met inf on the way back (NaN everywhere); forward mode gives the gradient
    x = np.array([0.3, 1.1, -0.5])
    with np.errstate(all="ignore"):
        (g,) = gradient(_cola_distances, x)
    np.testing.assert_allclose(g, fd.gradient(_cola_distances, x)[0], rtol=1e-7, atol=1e-9)
    with np.errstate(all="ignore"):
        gx, gw = gradient(_masked_root, x, 2.0)
        (only_x,) = gradient(_masked_root, x, 2.0, wrt=0)
    np.testing.assert_allclose(gx, fd.gradient(lambda v: _masked_root(v, 2.0), x)[0], rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(only_x, gx, rtol=1e-12)
    assert gw == pytest.approx(fd.gradient(lambda w: _masked_root(x, w), 2.0)[0], rel=1e-7)


@pytest.mark.parametrize("f", [lambda t: np.sqrt(t * t), lambda t: np.sqrt(t * t * np.exp(3 * t)),
                               lambda t: np.sqrt(t ** 2) + t, lambda t: np.sqrt(np.where(t > 0, t * t, 4 * t * t))],
                         ids=["abs", "abs_times_exp", "one_sided", "two_slopes"])
def test_a_nan_on_the_way_back_takes_forward_modes_judged_answer(f):
    """|t| written as sqrt(t * t) at 0: reverse mode's 0 * inf is NaN; forward mode, asked for it
    (`nan_by_forward`), judges the kink from its two sides: their slopes' mean, as abs's rule gives at 0 —
    never a zero made up (the sides' mean is checked here, one-sided slopes of the function itself)."""
    h = 1e-7
    with np.errstate(all="ignore"):
        (g,) = gradient(f, 0.0)
        sides = ((f(h) - f(0.0)) / h + (f(0.0) - f(-h)) / h) / 2
    assert g == pytest.approx(sides, abs=1e-6)


# -- forward mode: a callee changing in place an array passed through `*spread` ------------------------

def _scale_first(a, k):
    a[0] = a[0] * k
    return (a * 1.0, k)


def _spread_tuple(x):
    arr = np.array([x, 2.0 * x])
    pack = (arr, 3.0)
    keep = arr
    out = _scale_first(*pack)
    return float(keep[0] * out[0][1] + keep[1])


def _spread_display(x):
    arr = np.array([x, 2.0 * x])
    _scale_first(*[arr, 3.0])
    return float(arr[0] * arr[1] + arr[1])


@pytest.mark.parametrize("f", [_spread_tuple, _spread_display])
def test_forward_change_through_a_spread(f):
    # the tangent twin followed only arguments passed by position before the spread: the change of one
    # passed through it was lost (the old tangent kept, 7.6 for 10.4), and left for the next call to read
    want = fd.gradient(f, 0.7)[0]
    assert derivative(f, 0.7) == pytest.approx(want, rel=1e-7)
    assert jacfwd(lambda v: f(v[0]), np.array([0.7]))[0] == pytest.approx(want, rel=1e-7)


# -- a method decorated by a `*args, **kwargs` wrapper, called more than once (galpy's potentials) -------

def _forwarding(method):
    def wrapper(*args, **kwargs):
        return method(*args, **kwargs)
    return wrapper


class _Decorated:
    def __init__(self, w):
        self.w = w

    @_forwarding
    def sq(self, r):
        return self.w * r * r

    @_forwarding
    def bump(self, r):
        self.w = self.w * 1.5 + r
        return self.w


def _called_twice(obj, r):
    return obj.sq(r) + obj.sq(r) * obj.w


def _decorated_program(v):
    p = _Decorated(v[0])
    return _called_twice(p, v[1]) + p.bump(v[1]) * p.sq(v[1]) + p.sq(v[0])


def test_a_decorated_method_called_again():
    # self reaches the wrapper inside its `*args`: reverse mode handed self's cotangent in as that of the
    # whole tuple, so each call counted the later calls' cotangent of r again (3x for 2x, 6x for 3x)
    f3 = lambda r: _called_twice(_Decorated(1.0), r) + _Decorated(1.0).sq(r)  # noqa: E731
    assert gradient(f3, 0.8)[0] == pytest.approx(fd.gradient(f3, 0.8)[0], rel=1e-7)
    v = np.array([0.7, 0.8])
    want = fd.gradient(_decorated_program, v)[0]
    np.testing.assert_allclose(gradient(_decorated_program, v)[0], want, rtol=1e-7)
    np.testing.assert_allclose(jacfwd(_decorated_program, v), want, rtol=1e-7)
    np.testing.assert_allclose(hessian(_decorated_program, v), fd.hessian(_decorated_program, v), rtol=1e-5,
                               atol=1e-5)
    (dp,) = gradient(lambda p: _called_twice(p, 0.8), _Decorated(0.7))
    assert dp.w == pytest.approx(fd.gradient(lambda w: _called_twice(_Decorated(w), 0.8), 0.7)[0], rel=1e-7)


# -- hessian of a recursion filling an array through a `*args` wrapper (arch's `jit` without numba) ------

def _jit(func):
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)
    return wrapper


@_jit
def _recursion(p, out):
    prev = 1.0
    for i in range(out.shape[0]):
        out[i] = p[0] + p[1] * prev
        prev = out[i]
    return out


def _filled_through_wrapper(p):
    s = np.zeros(3)
    _recursion(p, s)
    return np.sum(np.log(s))


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_hessian_of_a_change_through_a_spread():
    # reverse mode refused the change (its cotangent cannot reach the spread); a call of a bare forwarding
    # wrapper is now its target's (`runtime._forwarded`, tests/contexts/test_forwarding_wrappers.py). Under
    # hessian the array is a dual, whose change was stamped on its value while the check looked at the dual:
    # an all-zero Hessian
    p = np.array([0.3, 0.6])
    np.testing.assert_allclose(gradient(_filled_through_wrapper, p)[0], fd.gradient(_filled_through_wrapper, p)[0],
                               rtol=1e-7)
    np.testing.assert_allclose(jacfwd(_filled_through_wrapper, p), fd.gradient(_filled_through_wrapper, p)[0],
                               rtol=1e-7)
    np.testing.assert_allclose(hessian(_filled_through_wrapper, p), fd.hessian(_filled_through_wrapper, p),
                               rtol=1e-5, atol=1e-5)


# -- NaN kept out of a dual cotangent (nansum's Hessian), `.flat` unpacked (scipy's linregress) --------

def _nansum_of_cubes(x):
    return np.nansum(x[0] ** 3 * np.array([1.0, np.nan, 2.0])) + np.nansum(x ** 2 * np.array([np.inf, 1.0]) * [0.0, 1.0])


def test_hessian_of_nansum():
    x = np.array([0.7, 0.4])
    with np.errstate(all="ignore"):
        h = hessian(_nansum_of_cubes, x)
    np.testing.assert_allclose(h, [[18 * 0.7, 0.0], [0.0, 2.0]], rtol=1e-9, atol=1e-12)


def _flat_unpacked(y):
    a, b, c, d = (y * 2.0).flat
    return b * c + d


def _covariance_entry(y):
    x = np.arange(5.0)
    ssxm, ssxym, _, ssym = np.cov(x, y, bias=1).flat
    return ssxym / np.sqrt(ssxm * ssym)


def test_unpacking_flat():
    y = np.array([0.1, 0.5, 0.4, 0.9])
    np.testing.assert_allclose(gradient(_flat_unpacked, y)[0], fd.gradient(_flat_unpacked, y)[0], rtol=1e-7, atol=1e-9)
    y = np.array([0.1, 0.5, 0.4, 0.9, 1.3])
    np.testing.assert_allclose(gradient(_covariance_entry, y)[0], fd.gradient(_covariance_entry, y)[0],
                               rtol=1e-6, atol=1e-9)


def test_linregress_rvalue():
    from scipy import stats

    x = np.arange(5.0)

    def r2(y):
        return stats.linregress(x, y)[2] ** 2
    y = np.array([0.1, 0.5, 0.4, 0.9, 1.3])
    np.testing.assert_allclose(gradient(r2, y)[0], fd.gradient(r2, y)[0], rtol=1e-6, atol=1e-9)


# -- found on statsmodels and scipy.stats: np.isscalar of a dual under hessian; np.vectorize's tuples ----

def _norm_like(z):  # statsmodels' robust norms: `if np.isscalar(z): v = v[0]`
    v = z ** 3 * 0.5
    if np.isscalar(z):
        v = v[0]
    return np.sum(v)


def test_isscalar_under_hessian():
    # a dual array is a numbers.Number: np.isscalar said True inside reverse mode run on duals
    z = np.array([-1.1, -0.37, 0.29, 0.83, 1.7])
    np.testing.assert_allclose(hessian(_norm_like, z), np.diag(3.0 * z), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(gradient(_norm_like, z)[0], 1.5 * z ** 2, rtol=1e-12)


_PAIRS = np.vectorize(lambda a, b: (a * b, a + b * b))


def _vectorized_pairs(v):
    prod, total = _PAIRS(v[:2], v[2:])
    return np.sum(prod * total) + np.sum(np.sin(total))


def test_vectorize_with_several_outputs():
    x = np.array([1.5, 2.0, 0.5, 3.0])
    want = fd.gradient(_vectorized_pairs, x)[0]
    np.testing.assert_allclose(gradient(_vectorized_pairs, x)[0], want, rtol=1e-7)
    np.testing.assert_allclose(jacfwd(_vectorized_pairs, x), want, rtol=1e-7)


def test_truncnorm_moments():
    stats = pytest.importorskip("scipy.stats")
    f = lambda v: stats.truncnorm.mean(v[0], v[1]) + stats.truncnorm.var(v[0], v[1])  # noqa: E731
    x = np.array([-1.1, 2.7])
    np.testing.assert_allclose(gradient(f, x)[0], fd.gradient(f, x)[0], rtol=1e-6, atol=1e-9)
