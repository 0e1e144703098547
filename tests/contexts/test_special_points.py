"""Equality tests of differentiated values, every mode.

Code singles out special points by equality (`if x == 0:`, `np.where(c == 0, ...)`, `x in (0.0, 1.0)`),
and takes there a special case whose derivative need not be the function's: scipy.stats' log-densities
of genextreme, genpareto and skewnorm differentiated in their shape at 0 came out 0 (the special case is
a formula without the shape), silently — an optimiser started at the natural first guess, 0, never moves.
Now a differentiated value found equal to a value that carries no derivative is refused (`SpecialPoint`,
naming the line); off such points, and for tests between two differentiated values (`x != x`, a NaN
test) or of integers, nothing changes. Checked against central differences."""

import math
import warnings

import numpy as np
import pytest

from contexts import SpecialPoint, derivative, gradient, hessian, jacfwd, jvp
from overdub.errors import OverdubError
from tests import fd

MODES = {
    "gradient": lambda f, x: gradient(f, x)[0],
    "jacfwd": jacfwd,
    "hessian": lambda f, x: hessian(f, x)[-1],  # (its last row: the shape's)
}

st = pytest.importorskip("scipy.stats")


def _logpdf(name):
    def f(t):
        return getattr(st, name).logpdf(t[0], t[1])
    return f


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("name", ["genextreme", "genpareto", "skewnorm"])
def test_a_shape_at_its_special_value_is_refused_or_right(name, mode):
    if mode != "hessian":  # (the special case at 0 is continuous through it: judged from the two sides, the sides'
        t = np.array([0.4, 0.0])  # derivative; genextreme's and genpareto's `c < 0` ties there too, since session 59)
        np.testing.assert_allclose(MODES[mode](_logpdf(name), t), fd.gradient(_logpdf(name), t)[0], rtol=1e-6)
        return
    with pytest.raises(OverdubError) as e:
        MODES[mode](_logpdf(name), np.array([0.4, 0.0]))
    # (hessian: forward over reverse may be refused first for another reason, forward over forward then
    # says SpecialPoint in the error's note)
    assert isinstance(e.value, SpecialPoint) or "SpecialPoint" in "".join(getattr(e.value, "__notes__", []))


@pytest.mark.parametrize("mode", ["gradient", "jacfwd"])
@pytest.mark.parametrize("name", ["genextreme", "genpareto", "skewnorm"])
def test_off_the_special_value_right(name, mode):
    t = np.array([0.4, 0.05])
    np.testing.assert_allclose(MODES[mode](_logpdf(name), t), fd.gradient(_logpdf(name), t)[0], rtol=1e-6)


def sinc(x):
    if x == 0:
        return 1.0
    return math.sin(x) / x


def masked(a):
    return np.where(a == 0, 1.0, a * a).sum()


def listed(x):
    return x * 3.0 if x in (0.5, 1.0) else x


SCALAR_MODES = {"gradient": lambda f, x: gradient(f, x)[0], "derivative": derivative, "hessian": hessian}


@pytest.mark.parametrize("mode", sorted(SCALAR_MODES))
@pytest.mark.parametrize("f, x", [(listed, 0.5)], ids=["x in (...)"])
def test_refused_at_the_point_naming_the_line(f, x, mode):
    with pytest.raises(SpecialPoint) as e:
        SCALAR_MODES[mode](f, x)
    assert "test_special_points.py" in str(e.value)


@pytest.mark.parametrize("mode", sorted(SCALAR_MODES))
def test_a_special_case_continuous_through_its_point_is_right_or_refused(mode):
    # sinc's `if x == 0: return 1.0`: the limit of sin(x)/x, judged from the two sides (sinc'(0) = 0, sinc''(0)
    # = -1/3); the second derivative's sides at 1e-8 are rounding noise: refused, naming the line
    if mode == "hessian":
        with pytest.raises(SpecialPoint) as e:
            SCALAR_MODES[mode](sinc, 0.0)
        assert "test_special_points.py" in str(e.value)
        return
    assert float(SCALAR_MODES[mode](sinc, 0.0)) == 0.0


@pytest.mark.parametrize("mode", sorted(SCALAR_MODES))
@pytest.mark.parametrize("f, x", [(sinc, 0.7), (listed, 0.6)], ids=["if x == 0", "x in (...)"])
def test_right_off_the_point(f, x, mode):
    expected = fd.hessian(f, x) if mode == "hessian" else fd.derivative(f, x)
    assert float(SCALAR_MODES[mode](f, x)) == pytest.approx(expected, rel=1e-5, abs=1e-7)


@pytest.mark.parametrize("mode", ["gradient", "jacfwd"])
def test_arrays_elementwise(mode):
    with pytest.raises(SpecialPoint):
        MODES[mode](masked, np.array([0.0, 1.0]))
    x = np.array([0.5, 1.0])
    np.testing.assert_allclose(MODES[mode](masked, x), 2 * x)


def nan_test(x):
    if x != x:  # (two differentiated operands: not a special point)
        return 0.0
    return x * x


def counted(x, n):
    return x * (n == 2) + x * x * (n != 3)


@pytest.mark.parametrize("mode", sorted(SCALAR_MODES))
def test_nan_tests_and_integers_pass(mode):
    assert float(SCALAR_MODES[mode](nan_test, 1.5)) == pytest.approx(3.0 if mode != "hessian" else 2.0)
    assert float(SCALAR_MODES[mode](lambda x: counted(x, 2), 1.5)) == pytest.approx(
        4.0 if mode != "hessian" else 2.0)


# -- singular points of the math functions' float fast paths (before: ZeroDivisionError from the rule) --

@pytest.mark.parametrize("mode", sorted(SCALAR_MODES)[:2])
def test_sqrt_at_zero_is_numpys_inf_not_a_crash(mode):
    assert SCALAR_MODES[mode](lambda x: math.sqrt(x), 0.0) == math.inf
    assert SCALAR_MODES[mode](lambda x: math.cbrt(x) + x, 0.0) == math.inf


def test_a_constant_through_a_singular_point_moves_nothing_in_forward_mode():
    assert derivative(lambda x: math.sqrt(x * 0.0) + x, 0.5) == 1.0
    assert derivative(lambda x: math.acos(x * 0.0 + 1.0) + 2 * x, 0.5) == 2.0


# -- equality tests called as functions: np.equal, np.not_equal, operator.eq, operator.ne ----------------

def by_np_equal(a):
    return np.where(np.equal(a, 0.0), 1.0, a * a).sum() + np.not_equal(a, 1.0).sum() * a[0]


def by_operator_eq(x):
    import operator
    return x * 3.0 if operator.eq(x, 0.5) else x


@pytest.mark.parametrize("mode", ["gradient", "jacfwd"])
def test_np_equal_as_eq(mode):
    with pytest.raises(SpecialPoint):
        MODES[mode](by_np_equal, np.array([0.0, 2.0]))
    x = np.array([0.5, 2.0])
    np.testing.assert_allclose(MODES[mode](by_np_equal, x), fd.gradient(by_np_equal, x)[0], rtol=1e-6)


@pytest.mark.parametrize("mode", sorted(SCALAR_MODES))
def test_operator_eq_as_eq(mode):
    with pytest.raises(OverdubError):
        SCALAR_MODES[mode](by_operator_eq, 0.5)
    assert float(SCALAR_MODES[mode](by_operator_eq, 0.6)) == pytest.approx(1.0 if mode != "hessian" else 0.0)


# -- ties of orderings: a branch boundary -----------------------------------------------------------------
# fluids' `K_run_diverging_Crane` at equal flows (q = Q_run / (Q_run + Q_branch) = 0.5 exactly) takes the
# `q <= 0.5` branch, whose derivative (0.18) is one side's; central differences give 0.10. Refused now,
# in every mode, where the compared value moves; a value that does not move passes.

def crane(a, b):
    q = a / (a + b)
    if q <= 0.5:
        m = 2.0 * (2.0 * q - 1.0)
    else:
        m = 0.3 * (2.0 * q - 1.0)
    return m * q * q


def kink(x):
    return -x if x < 0.0 else 2.0 * x


def still(x):
    t = x - x + 0.5  # (active by the analysis; its derivative is 0)
    return x * x if t >= 0.5 else x


def relu_sum(a):
    return np.where(a > 0.0, a, 0.0).sum() + np.less(a, 1.0).sum() * a[-1]


def by_operator_le(x):
    import operator
    return x * 3.0 if operator.le(x, 0.5) else x


PAIR_MODES = {"gradient": lambda f, x, y: gradient(f, x, y)[0],
              "derivative": lambda f, x, y: derivative(lambda t: f(t, y), x),
              "jvp": lambda f, x, y: jvp(f, (x, y), (1.0, 0.0))[1]}


@pytest.mark.parametrize("mode", sorted(PAIR_MODES))
def test_a_tie_at_a_branch_boundary_is_the_mean_of_its_sides(mode):
    # (refused until session 59; the two branches meet at q = 0.5, a kink: judged from the two sides, the mean
    # of the two slopes, as central differences give it)
    at_tie = (crane(1.37 + 1e-6, 1.37) - crane(1.37 - 1e-6, 1.37)) / 2e-6
    assert PAIR_MODES[mode](crane, 1.37, 1.37) == pytest.approx(at_tie, rel=1e-5)
    expected = fd.derivative(lambda t: crane(t, 1.37), 1.3)
    assert PAIR_MODES[mode](crane, 1.3, 1.37) == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("mode", sorted(SCALAR_MODES))
@pytest.mark.parametrize("f", [kink, by_operator_le], ids=["x < 0", "operator.le"])
def test_orderings_refused_at_a_tie_right_off_it(f, mode):
    tie = 0.0 if f is kink else 0.5
    if f is kink and mode != "hessian":  # (a kink: the mean of its two slopes, judged from its sides)
        assert float(SCALAR_MODES[mode](f, tie)) == pytest.approx(0.5, rel=1e-6)
    else:  # (a jump; a kink's second derivative)
        with pytest.raises(OverdubError):
            SCALAR_MODES[mode](f, tie)
    for x in (tie - 0.3, tie + 0.2):
        expected = fd.hessian(f, x) if mode == "hessian" else fd.derivative(f, x)
        assert float(SCALAR_MODES[mode](f, x)) == pytest.approx(expected, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("mode", sorted(SCALAR_MODES))
def test_a_tie_of_a_value_that_does_not_move_passes(mode):
    expected = fd.hessian(still, 1.5) if mode == "hessian" else fd.derivative(still, 1.5)
    assert float(SCALAR_MODES[mode](still, 1.5)) == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("mode", ["gradient", "jacfwd"])
def test_array_ties_elementwise(mode):
    # (a kink at a[0] = 0: the mean of its slopes, judged from its sides; np.less's count jumps at a[-1] = 1)
    np.testing.assert_allclose(MODES[mode](relu_sum, np.array([0.0, 2.0])), [0.5, 2.0], rtol=1e-6)
    with pytest.raises(SpecialPoint):
        MODES[mode](relu_sum, np.array([0.5, 1.0]))
    x = np.array([-0.5, 0.3, 2.0])
    np.testing.assert_allclose(MODES[mode](relu_sum, x), fd.gradient(relu_sum, x)[0], rtol=1e-6)


def test_a_dual_compared_in_code_run_on_duals():
    """Forward mode runs code without source on duals: a dual's own ordering checks its ties."""
    namespace = {}
    exec("def ordered(x):\n    return x * x if x <= 0.25 else x\n", namespace)  # (no source to transform)
    with pytest.raises(SpecialPoint):
        derivative(namespace["ordered"], 0.25)
    assert derivative(namespace["ordered"], 0.2) == pytest.approx(0.4)
    assert derivative(namespace["ordered"], 0.3) == pytest.approx(1.0)


def masked_by_out(a):
    m = np.empty(a.shape, dtype=bool)
    np.greater_equal(a, 0.5, out=m)  # (pvlib's `iam.ashrae` builds its mask so: refused in forward mode)
    return np.sum(np.where(m, a * a, a))


@pytest.mark.parametrize("mode", ["gradient", "jacfwd"])
def test_a_comparison_written_into_a_plain_mask(mode):
    x = np.array([0.2, 0.7, 1.0])
    np.testing.assert_allclose(MODES[mode](masked_by_out, x), fd.gradient(masked_by_out, x)[0], rtol=1e-6)
    with pytest.raises(SpecialPoint):
        MODES[mode](masked_by_out, np.array([0.5, 1.0]))
