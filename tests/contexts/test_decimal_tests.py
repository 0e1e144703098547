"""`Decimal.is_zero` of a differentiated Decimal in reverse mode: the equality with 0 it is, checked as the
engines check one (sigfig's `_num_parse`, rounding hillfit's fitted values, asked it of a Decimal taken for
differentiated, and was refused by name): off zero the gradient in the Decimal's own arithmetic, at zero a
special point. Forward mode refuses the attribute loudly."""

from decimal import Decimal

import pytest

from contexts import SpecialPoint, derivative, gradient


def f(x):
    return x * (Decimal(2) if (x - Decimal(1)).is_zero() else Decimal(3))


@pytest.mark.one_mode
def test_off_zero_the_branch_taken():
    assert gradient(f, Decimal("0.5")) == (Decimal(3),)


@pytest.mark.one_mode
def test_at_zero_a_special_point():
    with pytest.raises(SpecialPoint):
        gradient(f, Decimal(1))


@pytest.mark.one_mode
def test_forward_mode_refuses_loudly():
    with pytest.raises(Exception, match="is_zero"):
        derivative(f, Decimal("0.5"))
