"""ADContext(rules={fn: rrule}): reverse-mode rules given for one block, in every path reverse mode
calls fn by (twins, callbacks of primitives, bound methods, the entry itself), and nowhere else."""

import math
import threading

import numpy as np
import pytest

from contexts import ADContext, derivative, gradient, hessian
from contexts.ad import runtime


def straight_through_floor(x):
    return math.floor(x), lambda dy: (dy,)


def cube(x):
    return x ** 3


def cube_rule(x):  # a correct rule with a different formula: hessians must differentiate it
    return cube(x), lambda dy: (dy * 3.0 * x * x,)


def scaled_cube_rule(x):
    return cube(x), lambda dy: (dy * 100.0,)


def test_straight_through_estimator_inside_the_block_only():
    f = lambda x: math.floor(x) * x  # noqa: E731
    with ADContext(rules={math.floor: straight_through_floor}):
        assert gradient(f, 2.5) == (2.5 + 2.0,)  # d/dx floor(x) * x with floor' taken as 1
        assert gradient(lambda xs: sum(map(math.floor, xs)) * 1.0, [1.5, 2.5]) == ([1.0, 1.0],)
    assert gradient(f, 2.5) == (2.0,)
    assert runtime._overriding == 0


def test_python_function_entry_callee_and_method():
    with ADContext(rules={cube: scaled_cube_rule}):
        assert gradient(cube, 2.0) == (100.0,)  # the entry itself
        assert gradient(lambda x: cube(x) + x, 2.0) == (101.0,)
        assert gradient(lambda x: np.sum(np.array([cube(x), x])), 2.0) == (101.0,)

    class Box:
        def area(self, x):
            return x * x

    def area_rule(self, x):
        return self.area(x), lambda dy: (None, dy * 7.0)

    box = Box()
    with ADContext(rules={Box.area: area_rule}):
        assert gradient(lambda x: box.area(x), 3.0) == (7.0,)
    assert gradient(lambda x: box.area(x), 3.0) == (6.0,)


def test_forward_mode_keeps_the_registered_rule_and_hessian_differentiates_the_given_one():
    with ADContext(rules={cube: cube_rule}):
        assert derivative(cube, 2.0) == pytest.approx(12.0)
        h = hessian(lambda v: cube(v[0]) * v[1], np.array([2.0, 0.5]))
    # d2/dv2 of v0^3 v1: [[6 v0 v1, 3 v0^2], [3 v0^2, 0]]
    np.testing.assert_allclose(h, [[6.0, 12.0], [12.0, 0.0]], rtol=1e-12)


def test_nested_blocks_add_to_the_outer_rules():
    with ADContext(rules={math.floor: straight_through_floor}):
        with ADContext(rules={cube: scaled_cube_rule}):
            assert gradient(lambda x: math.floor(x) + cube(x), 2.5) == (101.0,)
        assert gradient(lambda x: math.floor(x) + cube(x), 2.5) == (1.0 + 3 * 2.5 ** 2,)


def test_other_threads_keep_their_rules():
    seen, inside, done = [], threading.Event(), threading.Event()

    def other():
        inside.wait()
        seen.append(gradient(cube, 2.0))
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with ADContext(rules={cube: scaled_cube_rule}):
        inside.set()
        done.wait(30)
        assert gradient(cube, 2.0) == (100.0,)
    t.join()
    assert seen == [(12.0,)]


def test_an_error_in_the_block_leaves_nothing_behind():
    with pytest.raises(ZeroDivisionError):
        with ADContext(rules={cube: scaled_cube_rule}):
            gradient(lambda x: cube(x) / 0.0, 1.0)
    assert runtime._overriding == 0 and runtime._overrides.get() is None
    assert gradient(cube, 2.0) == (12.0,)


@pytest.mark.parametrize("rules", [[(cube, cube_rule)], {1: cube_rule}, {cube: "rule"}])
def test_bad_rules_are_refused_when_made(rules):
    with pytest.raises(TypeError, match="ADContext"):
        ADContext(rules=rules)


def test_check_mode_checks_the_given_rules():
    from contexts.ad.check import RuleCheckError
    with pytest.raises(RuleCheckError, match="cube"):
        with ADContext(rules={cube: scaled_cube_rule}, check=True):
            gradient(lambda x: cube(x) + x, 2.0)
    with ADContext(rules={cube: cube_rule}, check=True):
        assert gradient(lambda x: cube(x) + x, 2.0) == pytest.approx((13.0,))
