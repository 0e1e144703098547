"""`ADContext(check=True)` checks forward rules too: a wrong frule used by `derivative`, `jvp` or `jacfwd`
inside the block is found at the line that used it, against central differences; right rules pass."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from contexts import derivative, jacfwd, jvp
from contexts.ad import ADContext
from contexts.ad.check import RuleCheckError
from contexts.rules.registry import registry


def cube_wrong(x):
    return x ** 3


def cube_right(x):
    return x ** 3


@registry.frule(cube_wrong)
def cube_wrong_frule(tangents, x):
    return x ** 3, 2.0 * x ** 2 * tangents[0]       # should be 3 x**2


@registry.frule(cube_right)
def cube_right_frule(tangents, x):
    return x ** 3, 3.0 * x ** 2 * tangents[0]


def uses_wrong(x):
    return np.sin(x) + cube_wrong(x * 2.0)          # LINE


def uses_right(x):
    return np.sin(x) * cube_right(x) + x / 3.0


RUNS = {"derivative": lambda f: derivative(f, 0.7), "jvp": lambda f: jvp(f, (0.7,), (1.5,))[1],
        "jacfwd": lambda f: jacfwd(f, np.array([0.7]))}  # (one direction per pass: jacfwd of one input)


@pytest.mark.parametrize("entry", sorted(RUNS))
def test_a_wrong_forward_rule_is_caught_at_the_line_that_used_it(entry):
    RUNS[entry](uses_wrong)   # silently wrong outside a checked block
    with pytest.raises(RuleCheckError) as info:
        with ADContext(check=True):
            RUNS[entry](uses_wrong)
    lines, start = inspect.getsourcelines(uses_wrong)
    line = start + next(i for i, text in enumerate(lines) if "LINE" in text)
    assert f"{__file__}:{line}" in str(info.value) and "cube_wrong_frule" in str(info.value)


@pytest.mark.parametrize("entry", sorted(RUNS))
def test_right_forward_rules_pass_and_change_nothing(entry):
    with ADContext(check=True):
        got = RUNS[entry](uses_right)
    x, t = 0.7, (1.5 if entry == "jvp" else 1.0)
    want = (np.cos(x) * x ** 3 + np.sin(x) * 3 * x ** 2 + 1 / 3) * t
    np.testing.assert_allclose(np.ravel(got), [want], rtol=1e-12)
