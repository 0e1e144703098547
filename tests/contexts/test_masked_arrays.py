"""numpy.ma's masked arrays meeting differentiated values. A masked array's reductions and operators skip its
masked entries; numpy's rules (and forward mode's duals) see plain arrays. Both modes returned silently wrong
derivatives when a constant masked array with masked entries met a differentiated array (`np.sum(v - obs)`:
3.16 for 1.76 in both modes; `np.std(v * obs)`: 0.73 and -0.136 for 0.135): refused then, differentiated as
numpy.ma's own code now (`contexts.rules.numpy.masked`; tests/contexts/test_masked_code.py), refused where a C
function meets one. Masked arrays without masked entries, and code that drops the masked entries itself, are
differentiated."""

import math
import warnings

import numpy as np
import pytest

from contexts import derivative, gradient
from overdub.errors import OverdubError
from tests import fd

OBS = np.ma.masked_array([0.5, 0.1, 0.3], mask=[0, 1, 0])
UNMASKED = np.ma.masked_array([0.5, 0.1, 0.3])


def _v(t):
    return np.array([t, t * t, math.sin(t)])


def _sum_sub(t):
    return np.sum(_v(t) - OBS)


def _sum_rsub(t):
    return np.sum(OBS - _v(t))


def _sum_mul(t):
    return np.sum(OBS * _v(t))


def _mean_add(t):
    return np.mean(_v(t) + OBS)


def _std(t):
    return np.std(_v(t) * OBS)


def _exp(t):
    return np.sum(np.exp(_v(t) - OBS))


def _float_of_sum(t):
    return float(np.sum(OBS * _v(t)))


def _method_sum(t):
    return (_v(t) - OBS).sum()


def _row_of_observations(t):  # (pykalman: one row of a masked observation matrix, its mask tested)
    obs = np.ma.masked_array([[1.0, 2.0], [0.5, 0.1]], mask=[[0, 0], [0, 1]])
    m = np.array([t, t * t])
    r = obs[1] - m
    return np.sum(r * r)


WRONG_BEFORE = [_sum_sub, _sum_rsub, _sum_mul, _mean_add, _std, _exp, _float_of_sum, _method_sum,
                _row_of_observations]


def _right_or_refused(mode, f, x):
    want = fd.derivative(f, x)
    try:
        got = gradient(f, x)[0] if mode == "reverse" else derivative(f, x)
    except OverdubError as e:
        assert "mask" in str(e), e  # (the refusal says why, and how to drop the mask)
        assert "filled" in str(e) or "np.where" in str(e), e
        return False
    assert abs(float(got) - want) <= 1e-6 * max(1.0, abs(want)), (mode, f.__name__, got, want)
    return True


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("f", WRONG_BEFORE, ids=lambda f: f.__name__)
def test_a_masked_constant_meeting_a_derivative_is_right_or_refused(f, mode):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _right_or_refused(mode, f, 0.7)


def _unmasked_sum(t):
    return np.sum(_v(t) - UNMASKED) + np.sum(_v(t) * UNMASKED)


def _dropped_by_hand(t):
    return np.sum(np.where(OBS.mask, 0.0, _v(t) * OBS.data))


def _filled_observations(t):
    return np.sum((_v(t) - OBS.filled(0.0)) ** 2)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("f", [_unmasked_sum, _dropped_by_hand, _filled_observations], ids=lambda f: f.__name__)
def test_masked_arrays_without_masked_entries_and_masks_applied_by_hand(f, mode):
    assert _right_or_refused(mode, f, 0.7)


def _sorted_masked(t):
    return np.sum(np.ma.sort(np.ma.masked_array(_v(t), mask=[0, 1, 0])) * np.arange(3.0))


def test_the_refusal_names_the_line_and_the_fix():
    """A numpy function of C given a masked array with masked entries (np.take_along_axis under np.ma.sort)
    is still refused, in both modes, naming the mask and how to drop it."""
    with pytest.raises(OverdubError, match="mask") as e:
        gradient(_sorted_masked, 0.7)
    assert "filled" in str(e.value) or "compressed" in str(e.value) or "np.where" in str(e.value)
    with pytest.raises(OverdubError, match="mask"):
        derivative(_sorted_masked, 0.7)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_a_masked_constant_minus_a_derivative_is_right_now(mode):
    """`np.sum(v - obs)` (3.16 for 1.76 before it was refused): numpy.ma's own code differentiated."""
    assert _right_or_refused(mode, _sum_sub, 0.7)
    assert _right_or_refused(mode, _std, 0.7)


def _masked_first(t):
    return np.sum(UNMASKED * _v(t))


def _masked_first_sub(t):
    return np.sum((UNMASKED - _v(t)) ** 2)


def _masked_first_div(t):
    return np.sum(UNMASKED / _v(t))


@pytest.mark.parametrize("f", [_masked_first, _masked_first_sub], ids=lambda f: f.__name__)
def test_a_masked_arrays_own_operator_on_a_dual(f):
    """numpy.ma's `obs * x`, `obs - x` take x's values (a masked array holds no tangent): with no masked entry,
    forward mode gives them the data (`+`, `-`, `*` mask nothing: pykalman's `observation - predicted`);
    reverse mode differentiates them."""
    want = fd.derivative(f, 0.7)
    assert abs(derivative(f, 0.7) - want) < 1e-6
    assert abs(gradient(f, 0.7)[0] - want) < 1e-6


@pytest.mark.one_mode
def test_a_masked_arrays_own_division_of_a_dual_is_refused_in_forward_mode():
    """numpy.ma's `obs / x` masks where x is 0 (numpy's gives inf): forward mode keeps refusing it on duals,
    naming the order that works."""
    with pytest.raises(OverdubError, match="masked array's operator") as e:
        derivative(_masked_first_div, 0.7)
    assert "x * obs" in str(e.value)
