"""One base error for a missing rule in every mode: `except contexts.MissingRule` catches reverse mode's,
forward mode's and sparsity's alike, each naming the function."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from overdub.errors import OverdubError

from contexts import MissingRule, gradient, jvp
from contexts.sparsity import jacobian_sparsity


def _opaque(x):
    return np.array(struct.unpack("2d", struct.pack("2d", *x))) * x  # bytes in between: no rule in any mode


def _packed(x):
    return np.array(struct.unpack("2d", struct.pack("2d", *x)))  # bytes in between: no sparsity rule


@pytest.mark.parametrize("mode", ["gradient", "jvp", "sparsity"])
def test_every_mode_raises_the_one_base(mode):
    x = np.array([1.0, 2.0])
    run = {"gradient": lambda: gradient(lambda v: _opaque(v).sum(), x),
           "jvp": lambda: jvp(lambda v: _opaque(v).sum(), (x,), (x,)),
           "sparsity": lambda: jacobian_sparsity(_packed, x)}[mode]
    with pytest.raises(MissingRule) as info:
        run()
    assert isinstance(info.value, OverdubError) and "rule" in str(info.value)
