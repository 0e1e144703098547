"""`ADContext(check=True)`: a wrong rule is found at the line that used it, against central differences;
right rules pass; the option holds for its block, thread and nesting only."""

from __future__ import annotations

import inspect
import math
import threading

import numpy as np
import pytest

from contexts import adjoint, custom_adjoint, gradient
from contexts.ad import ADContext
from contexts.ad.check import RuleCheckError
from tests.fd import gradient as fd_gradient


def softplus(x):
    return np.log1p(np.exp(x))


def softplus_wrong(x):
    return np.log1p(np.exp(x))


@custom_adjoint(softplus)
def softplus_rrule(x):
    return softplus(x), lambda dy: (dy / (1.0 + np.exp(-x)),)


@custom_adjoint(softplus_wrong)
def softplus_wrong_rrule(x):
    return softplus_wrong(x), lambda dy: (dy / (1.0 + np.exp(x)),)   # the sign of x is wrong


@adjoint
def doubled_wrong(x):
    return 2.0 * x, lambda dy: (dy,)                                  # should be 2 dy


def uses_wrong(x):
    hidden = softplus_wrong(x * 2.0)    # LINE
    return np.sum(hidden) + math.fsum([1.0])


def uses_right(x):
    return np.sum(softplus(x) * np.sin(x))


X = np.array([0.3, -1.2, 2.0])


def _line(fn, mark="LINE"):
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, text in enumerate(lines) if mark in text)


def test_a_wrong_custom_adjoint_is_caught_at_the_line_that_used_it():
    with pytest.raises(RuleCheckError) as info:
        with ADContext(check=True):
            gradient(uses_wrong, X)
    e = info.value
    assert f"{__file__}:{_line(uses_wrong)}" in e.where
    assert "softplus_wrong_rrule" in e.what and "finite differences" in e.what


def test_a_wrong_adjoint_decorator_is_caught_with_both_values():
    with pytest.raises(RuleCheckError, match=r"the rule gives 1, finite differences 2 "):
        with ADContext(check=True):
            gradient(lambda x: doubled_wrong(x) * 1.0, 0.5)


def test_right_rules_pass_and_the_gradient_is_unchanged():
    with ADContext(check=True):
        got = gradient(uses_right, X)[0]
    np.testing.assert_allclose(got, fd_gradient(uses_right, X)[0], rtol=1e-6)


def test_the_option_is_scoped_to_the_block():
    gradient(uses_wrong, X)  # outside: not checked (the wrong rule's gradient comes back)
    with ADContext(check=True):
        with ADContext(check=False):
            gradient(uses_wrong, X)
        with pytest.raises(RuleCheckError):
            gradient(uses_wrong, X)
    gradient(uses_wrong, X)


def test_the_option_is_per_thread():
    outcome = []

    def other():
        try:
            gradient(uses_wrong, X)
            outcome.append("unchecked")
        except RuleCheckError:
            outcome.append("checked")

    with ADContext(check=True):
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert outcome == ["unchecked"]


def test_kinks_are_not_reported():
    with ADContext(check=True):
        assert gradient(lambda x: abs(x) + max(x, 0.0), 0.0) is not None
