"""Found in session 64 (KDEpy's 2-d binning, and probing what reverse mode's eager generators read): checked
against central differences or closed forms."""

import random

import numpy as np
import pytest

from contexts import derivative, gradient, pullback
from tests.fd import gradient as fd_gradient


def columns_unique_squares(x):
    # (KDEpy's linbin_Ndim: `grid_num = (g[:, i] for i in range(d))`, then numpy's functions called in a
    # generator over it -- numpy's module changes in no place: not refused as a generator read while it changes)
    counts = (x[:, i] for i in range(x.shape[1]))
    counts = np.array(list(len(np.unique(c)) for c in counts))
    return np.sum(x ** 2) * np.sum(counts)


def test_a_loop_calling_numpy_over_a_generator():
    x = np.array([[1.0, 2.0], [3.0, 4.5]])
    want = fd_gradient(columns_unique_squares, x)[0]
    np.testing.assert_allclose(gradient(columns_unique_squares, x)[0], want, rtol=1e-8)
    y, back = pullback(columns_unique_squares, x)  # (reverse mode's own: `gradient` had forward mode's answer)
    np.testing.assert_allclose(back(1.0)[0], want, rtol=1e-8)


# A generator expression drawing from a random state the loop over it draws from or seeds too: Python draws
# the items one at a time between the loop's draws; reverse mode's generators run eagerly, all items first
# (silently other numbers: 3.14 for 5.01). Each is x times a sum of draws, whose derivative is the sum: f at 1.

def numpy_seeded(x):
    t = 0.0
    for v in (np.random.normal() * x for _ in range(3)):
        np.random.seed(1)
        t = t + v
    return t


def python_seeded(x):
    gen = (random.random() * x for _ in range(3))
    t = 0.0
    for v in gen:
        random.seed(1)
        t = t + v
    return t


def numpy_interleaved(x):
    t = 0.0
    for v in (np.random.normal() * x for _ in range(3)):
        t = t + v * np.random.normal()
    return t


def generator_interleaved(x):
    rng = np.random.default_rng(0)
    t = 0.0
    for v in (rng.normal() * x for _ in range(3)):
        t = t + v * rng.normal()
    return t


def _seeded(f):
    if f is python_seeded:
        random.seed(0)
    else:
        np.random.seed(0)


@pytest.mark.parametrize("f", [numpy_seeded, python_seeded, numpy_interleaved, generator_interleaved])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_generator_drawing_from_the_loops_random_state(f, mode):
    _seeded(f)
    want = f(1.0)
    _seeded(f)
    got = gradient(f, 1.0)[0] if mode == "reverse" else derivative(f, 1.0)
    assert got == pytest.approx(want, rel=1e-12)


# Complex functions exactly on their branch cut (sweep L: scikit-rf's `complex_2_degree(-0.7 + 0j)`, an
# S-parameter's phase on the negative real axis): the value jumps across the cut, and one side's slope came
# out silently in both modes (np.angle: -1.43 per unit of the imaginary part; central differences: 3e6).

import cmath  # noqa: E402

from contexts import SpecialPoint  # noqa: E402

ACROSS = {  # y, the imaginary part, moves across the cut at y = 0
    "np.angle": lambda y: np.angle(-0.7 + 1j * y),
    "cmath.phase": lambda y: cmath.phase(complex(-0.7, y)),
    "np.log.imag": lambda y: np.log(-0.7 + 1j * y).imag,
    "np.log10.imag": lambda y: np.log10(-0.7 + 1j * y).imag,
    "np.sqrt.imag": lambda y: np.sqrt(-0.7 + 1j * y).imag,
    "cmath.sqrt.imag": lambda y: cmath.sqrt(complex(-0.7, y)).imag,
    "pow.imag": lambda y: ((-0.7 + 1j * y) ** 0.5).imag,
    "np.power.imag": lambda y: np.power(np.array([-0.7 + 1j * y, 2.0 + 0j]), 0.5).imag.sum(),
    "np.arcsin.imag": lambda y: np.arcsin(1.5 + 1j * y).imag,
    "np.arctan.real": lambda y: np.arctan(y + 2j).real,
    "array np.angle": lambda y: np.sum(np.angle(np.array([-0.7, 0.3, -2.0]) + 1j * y)),
}


@pytest.mark.parametrize("f", ACROSS.values(), ids=ACROSS.keys())
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_across_a_branch_cut_refused(f, mode):
    h = 1e-7
    assert abs(f(h) - f(-h)) > 1e-3  # (the jump)
    with pytest.raises(SpecialPoint, match="branch cut"):
        gradient(f, 0.0) if mode == "reverse" else derivative(f, 0.0)


CONTINUOUS = {  # through the cut, or moving along it, or off it: a derivative, the sides' mean where taken
    "abs(np.sqrt)": lambda y: abs(np.sqrt(-0.7 + 1j * y)),
    "cos(np.angle)": lambda y: np.cos(np.angle(-0.7 + 1j * y)) * (1 + y),
    "exp(log)": lambda y: np.exp(np.log(-0.7 + 1j * y)).imag,
    "along the cut": lambda x: np.log(x + 0j).imag + np.log(-x + 0j).real,
    "off the cut": lambda y: np.angle(-0.7 + 1j * (y + 1e-3)),
    "real log": lambda x: np.log(x) + np.sqrt(x),
    "integer power": lambda y: ((-0.7 + 1j * y) ** 3).imag,
}


@pytest.mark.parametrize("f, x", [(f, -0.7 if k == "along the cut" else 0.5 if k == "real log" else 0.0)
                                  for k, f in CONTINUOUS.items()], ids=CONTINUOUS.keys())
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_through_or_along_a_cut(f, x, mode):
    want = fd_gradient(f, x, h=1e-6, order=2)[0]
    got = gradient(f, x)[0] if mode == "reverse" else derivative(f, x)
    assert np.real(got) == pytest.approx(want, rel=1e-6, abs=1e-8)


# 0 * inf in both modes where the function is smooth (sweep L: boule's cartesian_to_geodetic on the equatorial
# plane, z = 0, where D = sqrt(... z**2) enters through cbrt(q + D) + cbrt(q - D), even in D: every entry NaN;
# np.sum(np.sqrt(z ** 2) ** 2) at z = [0, 0.3]: [nan, 0.6]): the NaN entries are the mean of the gradients at
# the two sides of the point, where the sides' values are finite and agree along two directions.

from contexts import jacfwd  # noqa: E402


def root_of_square(z):
    return np.sum(np.sqrt(z ** 2) ** 2)


def even_in_a_root(p):
    q, z = p[0], p[1]
    D = np.sqrt(q * z ** 2)
    return np.cbrt(q + D) + np.cbrt(q - D) + q * z


@pytest.mark.parametrize("f, x", [(root_of_square, np.array([0.0, 0.3])), (even_in_a_root, np.array([2.0, 0.0]))],
                         ids=["root of a square", "even in a root"])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_zero_times_infinity_in_both_modes(f, x, mode):
    with np.errstate(all="ignore"):
        got = gradient(f, x)[0] if mode == "reverse" else jacfwd(f, x)
    np.testing.assert_allclose(got, fd_gradient(f, x, h=1e-4)[0], rtol=1e-6, atol=1e-9)


def test_zero_times_infinity_at_the_edge_of_the_domain_stays_nan():
    # (left of 0, sqrt's value is NaN: no side to take a mean with)
    with np.errstate(all="ignore"):
        g = gradient(lambda x: np.sum(np.sqrt(x) * 0.0) + x[1], np.array([0.0, 2.0]))[0]
    assert np.isnan(g[0]) and g[1] == 1.0


def test_a_value_near_its_bound_is_not_said_equal_to_it():
    # (pykrige's `sigma > eps` at sigma = 0 with a rate of 0 was refused as "a differentiated value equal to
    # 1e-10": the bound, not the value)
    def f(x):
        s = abs(x - 1.0)
        return x * 2 if s > 1e-10 else x
    with pytest.raises(SpecialPoint) as info:
        derivative(f, 1.0)
    assert "within a step" in str(info.value) and "equal to 1e-10" not in str(info.value)


# np.linalg.lstsq of complex matrices (sweep L: pydmd's and scikit-rf's fits; refused before): the pseudo-
# inverse's derivative with conjugate transposes, the residuals' and singular values' real derivatives.

_M, _N, _K = 6, 3, 2
_LW = np.random.default_rng(2).normal(size=(2, _N, _K))


def _complex_system(p):
    A = (p[:_M * _N] + 1j * p[_M * _N:2 * _M * _N]).reshape(_M, _N)
    b = (p[2 * _M * _N:2 * _M * _N + _M * _K] + 1j * p[2 * _M * _N + _M * _K:]).reshape(_M, _K)
    return A, b


def lstsq_solution(p):
    x = np.linalg.lstsq(*_complex_system(p), rcond=None)[0]
    return np.sum(_LW[0] * x.real + _LW[1] * x.imag)


def lstsq_everything(p):
    x, res, rank, s = np.linalg.lstsq(*_complex_system(p), rcond=None)
    return np.sum(_LW[0] * np.abs(x) ** 2) + np.sum(res * [0.3, 0.7]) + np.sum(s * [1.0, -0.5, 0.2])


def lstsq_real_right_side(p):
    A, _ = _complex_system(p)
    return np.sum(np.abs(np.linalg.lstsq(A, np.arange(1.0, 7.0), rcond=None)[0]))


@pytest.mark.parametrize("f", [lstsq_solution, lstsq_everything, lstsq_real_right_side], ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_complex_least_squares(f, mode):
    p = np.random.default_rng(3).normal(size=2 * _M * _N + 2 * _M * _K)
    got = gradient(f, p)[0] if mode == "reverse" else jacfwd(f, p)
    np.testing.assert_allclose(got, fd_gradient(f, p)[0], rtol=1e-6, atol=1e-9)


# object.__getattribute__ past a class's own __getattribute__ (PyDMD's PrePostProcessingDMD, which hands
# unknown names to the DMD it wraps): the class's methods, properties and values, as object's lookup finds
# them (refused in reverse mode before: `gradient` answered by forward mode, `pullback` refused).

class _Inner:
    def __init__(self, s):
        self.s = s

    def value(self, x):
        return self.s * x ** 2


class _Wrap:
    offset = 0.25

    def __init__(self, inner, k):
        self._inner = inner
        self.k = k

    def __getattribute__(self, name):
        try:
            return object.__getattribute__(self, name)
        except AttributeError:
            pass
        return object.__getattribute__(object.__getattribute__(self, "_inner"), name)

    def scaled(self, x):
        return self.k * self.value(x) + self.offset

    @property
    def twice(self):
        return 2 * self.k


def wrapped(p):
    w = _Wrap(_Inner(p[0]), p[1])
    return w.scaled(p[2]) + w.twice * w.s


def test_object_getattribute_past_the_class_own():
    p = np.array([1.5, 0.7, 2.0])
    want = fd_gradient(wrapped, p)[0]
    y, back = pullback(wrapped, p)  # (reverse mode's own)
    np.testing.assert_allclose(back(1.0)[0], want, rtol=1e-8)
    np.testing.assert_allclose(jacfwd(wrapped, p), want, rtol=1e-8)


# A dict whose instance dict is itself (`self.__dict__ = self`: statsmodels' and sklearn's Bunch): its
# attributes are its items, one entry for both (refused in reverse mode: statsmodels' RLM results).

class _Bunch(dict):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.__dict__ = self


def bunch_fields(p):
    b = _Bunch(a=p[0] * 2, c=p[1])
    b.d = b.a * p[2]  # (an attribute stored and read)
    b["e"] = b["c"] ** 2  # (an item stored and read)
    return b.d + b.e + b["a"] * b.c + sum(v for v in b.values())


def test_a_bunch():
    p = np.array([1.5, 0.7, 2.0])
    want = fd_gradient(bunch_fields, p)[0]
    np.testing.assert_allclose(pullback(bunch_fields, p)[1](1.0)[0], want, rtol=1e-8)
    np.testing.assert_allclose(jacfwd(bunch_fields, p), want, rtol=1e-8)


# A cotangent of exactly 0 reaching a partial that is infinite there (`math.cbrt(x) ** 3` at 0: the power's
# cotangent 3 cbrt(0)**2 is 0, cbrt's slope infinite): 0 was taken for no change, and 0 came out for the slope
# 1 in both modes, silently. Now NaN there, answered from the two sides of the point where they are in the
# domain, NaN where not (`math.sqrt(x) ** 2` at 0: no derivative left of 0).

import math  # noqa: E402


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_zero_cotangent_at_an_infinite_slope(mode):
    d = (lambda f, x: gradient(f, x)[0]) if mode == "reverse" else derivative
    assert d(lambda x: math.cbrt(x) ** 3, 0.0) == pytest.approx(1.0, rel=1e-9)
    assert d(lambda x: math.cbrt(x) ** 3 + x * x, 0.0) == pytest.approx(1.0, rel=1e-9)
    with np.errstate(all="ignore"):
        assert math.isnan(d(lambda x: math.sqrt(x) ** 2, 0.0))
    assert d(lambda x: math.sin(x) * math.sqrt(x * x + 1.0), 0.0) == pytest.approx(1.0)  # (no zero: unchanged)


def test_nan_at_the_sides_too_stays_nan_once():
    # (moving x alone leaves z at 0: the sides' own answers are NaN too; taking sides of sides recursed,
    # exponentially, before an answer inside another's was left as it is)
    x, z = np.array([1.0, 2.0]), np.zeros(2)
    with np.errstate(all="ignore"):
        d = jacfwd(lambda a: np.sum(np.sqrt(a * z ** 2) ** 2) + np.sum(a), x)
    assert np.isnan(d).all() or np.allclose(d, 1.0)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(jacfwd(lambda b: np.sum(np.sqrt(x * b ** 2) ** 2) + np.sum(x), z), [0.0, 0.0])
