"""A `with` block left by a refusal leaves its manager as the block's end would (`__exit__(None, None, None)`),
in every mode. Reverse mode runs a `with` on a manager that may carry a derivative as its calls (`__enter__`,
the body in a `try`, `__exit__`): its handler raised the refusal again before `__exit__` ran, so a
`contextlib.redirect_stdout` around a refused model build stayed redirected for the rest of the process
(rayoptics, sweep U: every later print vanished)."""

import contextlib
import io
import sys

import numpy as np
import pytest

from contexts import derivative, gradient
from contexts.ad.runtime import UnsupportedFunction

LOG = []


class Guard:
    def __init__(self, scale=1.0):
        self.scale = scale

    def __enter__(self):
        LOG.append("enter")
        return self

    def __exit__(self, *exc):
        LOG.append("exit")
        return False


def _refused(v):
    raise UnsupportedFunction("refused for the test")


def plain_manager(x):
    with Guard():
        y = _refused(x * 2.0)
    return y


def holding_the_value(x):
    with Guard(x) as g:
        y = _refused(g.scale * x)
    return y


def redirected(x):
    with contextlib.redirect_stdout(io.StringIO()):
        print("inside")
        y = _refused(np.sin(x))
    return y


@pytest.mark.one_mode  # (each mode's own refusal: tests/conftest.py)
@pytest.mark.parametrize("f", [plain_manager, holding_the_value], ids=lambda f: f.__name__)
@pytest.mark.parametrize("run", [gradient, derivative], ids=["reverse", "forward"])
def test_the_manager_is_left(f, run):
    LOG.clear()
    with pytest.raises(UnsupportedFunction, match="refused for the test"):
        run(f, 1.5)
    assert LOG == ["enter", "exit"]


@pytest.mark.one_mode
@pytest.mark.parametrize("run", [gradient, derivative], ids=["reverse", "forward"])
def test_stdout_is_restored(run):
    before = sys.stdout
    with pytest.raises(UnsupportedFunction):
        run(redirected, 0.3)
    assert sys.stdout is before
