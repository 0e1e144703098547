"""np.arange's length steps where `(stop - start) / step` is a whole number: `np.arange(1, n)` has 36 entries at
n = 37.0 and 37 just above it. nolds' `expected_rs(n)` (the Anis-Lloyd-Peters correction, a sum of
`sqrt((n - i) / i)` over `np.arange(1, n)`) gains a term there whose derivative is infinite; both modes gave the
left side's slope silently (sweep U). Now a moving start, stop or step exactly on such a point is judged from
the two sides, as `np.floor`'s jumps are: refused where they disagree, answered where the function is smooth
through it. Answers against central differences."""

import numpy as np
import pytest

from contexts import derivative, gradient, jvp
from contexts.lowered.runtime import StairJump
from tests import fd


def anis_lloyd(n):
    i = np.arange(1, n)
    return np.sum(np.sqrt((n - i) / i))


def squares_below(n):
    i = np.arange(0.0, n)
    return np.sum((n - i) ** 2)  # (the term entering at an integer n is 0 with slope 0: smooth there)


def by_step(h):
    t = np.arange(0.0, 1.0, h)
    return np.sum(np.sqrt(1.0 - t)) * h


def _all_modes(f, x):
    return (gradient(f, x)[0], derivative(f, x), jvp(f, (x,), (1.0,))[1])


@pytest.mark.parametrize("f, x", [(anis_lloyd, 37.0), (by_step, 0.25)], ids=["stop", "step"])
@pytest.mark.parametrize("mode", [0, 1, 2], ids=["gradient", "derivative", "jvp"])
def test_on_a_length_jump_is_refused(f, x, mode):
    with pytest.raises(StairJump, match="np.arange's length"):
        [lambda: gradient(f, x), lambda: derivative(f, x), lambda: jvp(f, (x,), (1.0,))][mode]()


@pytest.mark.parametrize("f, x", [(anis_lloyd, 37.5), (by_step, 0.3), (squares_below, 5.0), (squares_below, 5.5)],
                         ids=["stop off a jump", "step off a jump", "smooth through a jump", "smooth, off"])
def test_right_elsewhere_and_where_smooth(f, x):
    want = fd.derivative(f, x)
    for got in _all_modes(f, x):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_integer_arguments_are_untouched():
    f = lambda x: np.sum(np.arange(3, 10) * x)
    assert gradient(f, 2.0)[0] == pytest.approx(42.0)
    assert derivative(f, 2.0) == pytest.approx(42.0)
