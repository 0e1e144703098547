"""Shared checks for the reverse-mode tests: every gradient is compared with finite differences."""

import numpy as np

from contexts.ad import gradient
from contexts.rules.check import numerical_gradient


def assert_grad_fd(f, *args, rtol=1e-5, atol=1e-7):
    """gradient(f, *args) equals central finite differences for every float/array argument."""
    got = gradient(f, *args)
    want = numerical_gradient(f, *args)
    assert len(got) == len(args)
    for g, w, a in zip(got, want, args):
        if w is None:
            continue
        np.testing.assert_allclose(np.asarray(g, dtype=complex), np.asarray(w, dtype=complex), rtol=rtol, atol=atol)
    return got
