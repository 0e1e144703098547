"""A differentiated float's truth is a test of its being zero: `if x:`, `x or c`, `a if x else b`,
`bool(x)`, `not d.any()`, `np.count_nonzero(d)`, `all([x, y])`. At zero the code takes its special case,
whose derivative (often of a constant: 0) need not be the function's — `sin(x) if x else 0.0` has
derivative 1 at 0, and every mode returned 0 silently. Each was refused (`SpecialPoint`) at the point where
the value is zero and moves; since session 57 the special case is judged from the two sides of the point
(`SpecialCase`): right where the function is continuous through it, refused where its value there is not the
sides' limit. Right against central differences elsewhere, in every mode.
"""

import math

import numpy as np
import pytest

from contexts import derivative, gradient, hessian, jacfwd, jvp
from contexts.lowered.runtime import SpecialPoint
from tests import fd

C = np.array([0.5, -0.25, 1.5])


def _if_truth(x):
    if x[0]:
        return math.sin(x[0]) + x[1] ** 2
    return x[1] ** 2


def _if_not(x):
    t = x[0] * x[1]
    if not t:
        return 0.0 * x[1]
    return math.sinh(t)


def _or_default(x):
    y = x[0] or 0.0  # (at 0: the default, a constant)
    return y * 3.0 + x[1]


def _conditional(x):
    return math.sin(x[0]) if x[0] else 0.0 * x[0]


def _bool_call(x):
    return math.expm1(x[0]) if bool(x[0]) else 0.0 * x[0]


def _all_items(x):
    return math.sin(x[0]) if all([x[0], 1.0]) else 0.0 * x[0]


def _not_any(x):
    d = x - C
    if not d.any():
        return 0.0 * x[0]
    return np.sum(np.sin(d))


def _not_np_any(x):
    d = x - C
    if not np.any(d):
        return 0.0 * x[0]
    return np.sum(np.sin(d))


def _count_nonzero(x):
    d = x - C
    if np.count_nonzero(d) < d.size:  # (any zero item: the special case)
        return 0.0 * x[0]
    return np.sum(np.sin(d))


def _while_truth(x):
    r = x[0]
    total = 0.0
    while r:  # (a loop test: `r != 0`)
        total = total + math.sin(r)
        r = 0.0
    return total + x[1]


SCALAR_AT_ZERO = [_if_truth, _if_not, _or_default, _conditional, _bool_call, _all_items, _while_truth]
AT_ZERO = np.array([0.0, 0.7, 0.2])
ARRAY_CASES = [_not_any, _not_np_any, _count_nonzero]


def _modes(f, x):
    return (lambda: gradient(f, x.copy()), lambda: jacfwd(f, x.copy()),
            lambda: jvp(f, (x.copy(),), (np.ones(x.size),)), lambda: hessian(f, x.copy()))


@pytest.mark.parametrize("f", SCALAR_AT_ZERO + ARRAY_CASES, ids=lambda f: f.__name__)
def test_zero_is_right_or_refused_in_every_mode(f):
    # (session 57: a special case at an equality is judged from the two sides of the point; these are
    # continuous through 0, so the sides' derivative, central differences', comes out; an ordering's
    # (`np.count_nonzero(d) < d.size`) is refused as before; a Hessian's sides at 1e-8 may be noise: refused)
    x = C.copy() if f in ARRAY_CASES else AT_ZERO
    want = fd.gradient(f, x)[0]
    if f is _count_nonzero:
        for run in _modes(f, x):
            with pytest.raises(SpecialPoint):
                run()
        return
    answered = 0
    for got, expected, tol in ((lambda: gradient(f, x.copy())[0], want, 1e-6),
                               (lambda: jacfwd(f, x.copy()), want, 1e-6),
                               (lambda: jvp(f, (x.copy(),), (np.ones(x.size),))[1], np.sum(want), 1e-6),
                               (lambda: hessian(f, x.copy()), fd.hessian(f, x), 1e-4)):
        try:
            value = got()
        except SpecialPoint:  # (`all([x, 1.0])` in reverse mode: refused, as before)
            continue
        np.testing.assert_allclose(value, expected, rtol=tol, atol=10 * tol)
        answered += 1
    assert answered >= 1  # (forward mode at least: its sides judge every one of these)


def _jumping(x):
    return (math.cos(x[0]) if x[0] else 0.0) + x[1] ** 2  # (at 0: 0, beside values tending to 1)


def test_a_special_value_off_the_limit_is_refused_in_every_mode():
    for run in _modes(_jumping, AT_ZERO):
        with pytest.raises(SpecialPoint, match="not the limit|jumps|disagree"):
            run()


@pytest.mark.parametrize("f", SCALAR_AT_ZERO + ARRAY_CASES, ids=lambda f: f.__name__)
def test_off_zero_right_in_every_mode(f):
    x = (C + np.array([0.05, 0.1, -0.07])) if f in ARRAY_CASES else AT_ZERO + np.array([0.3, 0.0, 0.0])
    want = fd.gradient(f, x)[0]
    np.testing.assert_allclose(gradient(f, x.copy())[0], want, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(jacfwd(f, x.copy()), want, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(hessian(f, x.copy()), fd.hessian(f, x), rtol=1e-4, atol=1e-6)


def test_scalar_truth_by_derivative():
    f = lambda t: math.sin(t) if t else 0.0  # noqa: E731
    assert derivative(f, 0.0) == pytest.approx(1.0, rel=1e-6)  # (judged from the two sides: continuous)
    assert gradient(f, 0.0)[0] == pytest.approx(1.0, rel=1e-6)
    with pytest.raises(SpecialPoint):
        derivative(lambda t: math.cos(t) if t else 0.0, 0.0)
    assert derivative(f, 0.4) == pytest.approx(math.cos(0.4), rel=1e-12)
    assert gradient(f, 0.4)[0] == pytest.approx(math.cos(0.4), rel=1e-12)


def test_a_zero_that_does_not_move_passes():
    # the tested value is zero but constant in the inputs: no special point of the derivative
    def f(x):
        z = x[0] * 0.0
        return math.sin(x[1]) if z else math.cos(x[1])
    x = np.array([0.3, 0.8])
    np.testing.assert_allclose(gradient(f, x)[0], [0.0, -math.sin(0.8)], rtol=1e-12)
    np.testing.assert_allclose(jacfwd(f, x), [0.0, -math.sin(0.8)], rtol=1e-12)


def test_any_with_some_items_zero_is_no_special_point():
    # `d.any()` holds on a neighbourhood while one item is nonzero: not refused
    def f(x):
        d = x - C
        return np.sum(np.sin(d)) if d.any() else 0.0 * x[0]
    x = C + np.array([0.0, 0.2, 0.0])
    want = np.cos(x - C)
    np.testing.assert_allclose(gradient(f, x)[0], want, rtol=1e-12)
    np.testing.assert_allclose(jacfwd(f, x), want, rtol=1e-12)
