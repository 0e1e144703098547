"""A loop's float-fused binary operator (`codegen._carried_floats`): a record after one of the same block whose
fused case ran tests only its operands' types, the cotangents being floats as that case left them. Every
gradient here is compared, bit for bit, with a hand-written adjoint doing the same float operations in the same
order, across the transitions that must test everything again: a first record, a record after another block's,
a record after one whose operands were no floats (an int, a numpy float64), and a cotangent that is no float."""

from __future__ import annotations

import ast

import numpy as np

from contexts import gradient, show_adjoint


def loop_pow(x, n):
    r = 1.0
    while n > 0:
        n -= 1
        r = r * x
    return r


def hand_loop_pow(x, n, r0=1.0):
    """The adjoint of `loop_pow` started at r0: the primal values on a stack, then the reverse loop."""
    stack, r = [], r0
    while n > 0:
        n -= 1
        stack.append(r)
        r = r * x
    dr, dx = 1.0, None
    while stack:
        s = stack.pop()
        dx = s * dr if dx is None else dx + s * dr
        dr = dr * x
    return dx


def test_a_float_loop_is_its_hand_written_adjoint():
    for x, n in ((1.01, 100), (0.5, 1), (-1.3, 7), (2.0, 2)):
        assert gradient(loop_pow, x, n)[0] == hand_loop_pow(x, n)


def int_start(x, n):
    r = 1  # (the first product's operand an int: that record's fused case does not run)
    while n > 0:
        n -= 1
        r = r * x
    return r


def test_a_record_with_an_int_operand_after_fused_ones():
    for x, n in ((1.01, 50), (3.0, 3), (-0.7, 2)):
        assert gradient(int_start, x, n)[0] == hand_loop_pow(x, n, r0=1)


def switch_kind(x, n):
    r = 1.0
    i = 0
    while i < n:
        i += 1
        if i == 4:
            r = np.float64(r)  # (from here the operands are float64: the general adjoint, then floats again)
        if i == 7:
            r = float(r)
        r = r * x
    return r


def test_operands_changing_kind_inside_the_loop():
    x, n = 1.1, 12
    got = gradient(switch_kind, x, n)[0]
    assert abs(got - n * x ** (n - 1)) < 1e-12 * abs(got)


def two_blocks(x, y, n):
    r = 1.0
    while n > 0:
        n -= 1
        if n % 3 == 0:
            r = r * y  # (another block between records of the first: everything tested again)
        else:
            r = r * x
    return r


def hand_two_blocks(x, y, n):
    stack, r = [], 1.0
    while n > 0:
        n -= 1
        stack.append((r, n % 3 == 0))
        r = r * y if n % 3 == 0 else r * x
    dr, dx, dy = 1.0, None, None
    while stack:
        s, by_y = stack.pop()
        if by_y:
            dy = s * dr if dy is None else dy + s * dr
            dr = dr * y
        else:
            dx = s * dr if dx is None else dx + s * dr
            dr = dr * x
    return dx, dy


def test_records_of_two_blocks_interleaved():
    for n in (1, 2, 3, 4, 10, 31):
        got = gradient(two_blocks, 1.05, 0.95, n)
        dx, dy = hand_two_blocks(1.05, 0.95, n)
        assert got[0] == (0.0 if dx is None else dx) and got[1] == (0.0 if dy is None else dy), n


def half_used(x, n):
    r = 1.0
    s = 0.0
    while n > 0:
        n -= 1
        r = r * x
        if n == 2:
            s = r  # (r's cotangent, None until the records before this one: the fused case tests it)
    return s


def test_a_cotangent_that_is_none_for_the_later_records():
    x, n = 1.3, 6
    # s = x**(n-2) = x**4: its derivative 4 x**3, by the records of the first 4 products
    got = gradient(half_used, x, n)[0]
    assert abs(got - 4 * x ** 3) < 1e-12


def test_the_folded_adjoint_shows_no_flag():
    assert "_od_ran" in show_adjoint(loop_pow, raw=True)  # (the loop's block is one these tests reach)
    text = show_adjoint(loop_pow)
    assert "_od_" not in text and "fused" not in text


def _fused_test(f) -> tuple[str, str]:
    """(the part of f's loop's fused test that a run of its records carries, the part tested in every record)."""
    line = next(t for t in show_adjoint(f, raw=True).splitlines() if "_od_ran ==" in t and t.strip().startswith("if"))
    test = ast.parse(line.strip()[3:-1], mode="eval").body
    if isinstance(test.op, ast.Or):  # (every operand carried: no part tested in every record)
        return ast.unparse(test), ""
    carried, *each = test.values
    return ast.unparse(carried), " ".join(ast.unparse(e) for e in each)


def test_a_parameter_never_rebound_is_tested_once_per_run_of_records():
    carried, each = _fused_test(loop_pow)
    assert "__od_type__(x)" in carried and "__od_type__(x)" not in each


def rebinds_x(x, n):
    r = 1.0
    while n > 0:
        n -= 1
        r = r * x
        if n == 2:
            x = 2  # (an int from here: the records after hold another object, tested again)
    return r


def test_a_rebound_parameter_is_tested_in_every_record():
    carried, each = _fused_test(rebinds_x)
    assert "__od_type__(x)" in each
    for x in (1.1, -0.6):
        assert abs(gradient(rebinds_x, x, 5)[0] - 12 * x * x) < 1e-12  # (r = x**3 * 2 * 2)


def rebinds_x_inside(x, n):
    def to_int():
        nonlocal x
        x = 2
    r = 1.0
    while n > 0:
        n -= 1
        r = r * x
        if n == 2:
            to_int()  # (rebound by a nested function: as above)
    return r


def test_a_parameter_rebound_by_a_nested_function_is_tested_in_every_record():
    for x in (1.1, -0.6):
        assert abs(gradient(rebinds_x_inside, x, 5)[0] - 12 * x * x) < 1e-12


def test_an_operand_float_where_the_tested_parameters_are_is_carried_too():
    # (r of `r = r * x`, bound only from 1.0 and products of floats: a float in every record where x is one,
    # `activity.float_typed`; x is tested by the run's first record, so r's test joins the carried part)
    carried, each = _fused_test(loop_pow)
    assert "__od_type__(r" not in each and "__od_type__(_od_s" in carried
    # (r also from y, which this block does not test: r tested in every record)
    carried, each = _fused_test(two_blocks)
    assert "__od_type__(_od_s" in each


def test_operands_of_other_kinds_take_the_general_case():
    from fractions import Fraction
    assert gradient(loop_pow, Fraction(3, 2), 4)[0] == 4 * Fraction(3, 2) ** 3
    assert gradient(loop_pow, np.float64(1.5), 4)[0] == 4 * 1.5 ** 3
    assert gradient(loop_pow, 2, 3)[0] == 12
