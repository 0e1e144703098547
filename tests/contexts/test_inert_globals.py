"""A module global that cannot carry a derivative (a mode string, a flag, a counter), rebound by `global`,
does not make what reads it differentiated. colour's conversions all read its domain-range scale string:
every value they touched counted as differentiated, so `encode(0.0031308)` at its own threshold was a
branch-boundary tie to check by forward mode on every call (twice the gradient's cost), and refused where
forward mode could not run (a dict argument). Gradients checked against central differences."""

import numpy as np
import pytest

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


class Table:
    """A module-level table of matrices looked up by name through Python code (colour's CanonicalMapping)."""
    lookups = 0

    def __init__(self, data):
        self._data = data

    def __getitem__(self, name):
        Table.lookups += 1
        return self._data[str(name).upper()]


TRANSFORMS = Table({"CAT02": np.array([[0.7328, 0.4296, -0.1624], [-0.7036, 1.6975, 0.0061],
                                       [0.0030, 0.0136, 0.9834]])})


def adapt(xyz, options):
    m = TRANSFORMS[options["transform"]]  # (an index the analysis counts as differentiated: read from options)
    return np.sum((m @ xyz) ** 2) * options["scale"]


def test_a_constant_table_looked_up_by_name_is_not_run_again_backwards():
    xyz = np.array([0.3, 0.4, 0.2])
    Table.lookups = 0
    options = {"transform": "cat02", "scale": 1.5}  # (a dict holding a number: differentiated as a whole)
    got, dopt = gradient(adapt, xyz, options)
    assert Table.lookups == 1  # (the forward pass's own; the reverse pass needs no cotangent of it)
    np.testing.assert_allclose(got, fd.gradient(lambda t: adapt(t, options), xyz)[0], rtol=1e-6)
    assert dopt["scale"] == pytest.approx(adapt(xyz, options) / 1.5)
