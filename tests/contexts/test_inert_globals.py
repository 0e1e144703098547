"""A module global that cannot carry a derivative (a mode string, a flag, a counter), rebound by `global`,
does not make what reads it differentiated. colour's conversions all read its domain-range scale string:
every value they touched counted as differentiated, so `encode(0.0031308)` at its own threshold was a
branch-boundary tie to check by forward mode on every call (twice the gradient's cost), and refused where
forward mode could not run (a dict argument). Gradients checked against central differences."""

import numpy as np

from contexts import gradient
from contexts.lowered.activity import _reads_state
from tests import fd
from tests.contexts import _mode_string_lib as lib


def test_a_mode_string_is_no_state():
    assert not _reads_state(lib.to_domain)


def test_a_constant_at_its_threshold_passes_with_any_argument():
    v = np.array([0.4, 0.6, 0.02])
    got = gradient(lambda p: lib.decode(p["v"]).sum(), {"v": v})[0]["v"]
    np.testing.assert_allclose(got, fd.gradient(lambda t: lib.decode(t).sum(), v)[0], rtol=1e-6)
