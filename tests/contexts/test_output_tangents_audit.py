"""Outputs of functions with several outputs (a tuple's entries) whose tangent or cotangent was None (a zero)
or NaN while the output moves with a differentiated input: the class of ?gbsv's LU factors (commit 1f76b44).
Each test compares forward and reverse mode with central differences, or asserts the refusal, and failed
before its fix (said per test)."""

import numpy as np
import pytest
from scipy.linalg import lapack

from contexts import derivative, gradient, jacfwd
from contexts.rules.registry import NoDerivative
from tests import fd


# -- float.__divmod__, float.__rdivmod__: the remainder ---------------------------------------------------------

@pytest.mark.parametrize("f", [
    lambda x: x.__divmod__(1.1)[1],
    lambda x: float.__divmod__(x, 1.1)[1],
    lambda x: x.__rdivmod__(2.5)[1],
    lambda x: (3.0).__divmod__(x)[1],
    lambda x: x.__divmod__(0.7)[1] * x.__divmod__(0.7)[0],
], ids=["divmod", "unbound", "rdivmod", "divisor", "both"])
@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_float_divmod_slot_remainder(f, mode):
    # (failed before: the slots were registered as steps, their remainder's derivative 0 in both modes)
    x = 2.0
    got = derivative(f, x) if mode == "forward" else gradient(f, x)[0]
    assert got == pytest.approx(fd.derivative(f, x), rel=1e-6)
