"""The runnable examples of contexts.compose (the modes composed: hessian, hvp, jacobian by either mode);
its derivatives are tested against finite differences in tests/contexts/forward."""

import doctest

import contexts.compose


def test_docstring_examples():
    result = doctest.testmod(contexts.compose, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


# -- inner="auto" (the default): forward-over-reverse, and forward-over-forward where that is refused ------

import struct

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from contexts import hessian, hvp  # noqa: E402
from overdub.errors import OverdubError  # noqa: E402
from tests import fd  # noqa: E402

X = np.array([0.3, 1.1, -0.4])


def running_max(x):
    """Forward-over-reverse refuses `np.maximum.accumulate` on dual arrays; forward mode has its rule."""
    return (np.maximum.accumulate(x * x) * x).sum() + np.sin(x).prod()


def test_auto_falls_back_where_forward_over_reverse_is_refused():
    with pytest.raises(OverdubError, match="accumulate"):
        hessian(running_max, X, inner="reverse")
    expected = fd.hessian(running_max, X, matrix=True)
    np.testing.assert_allclose(hessian(running_max, X), expected, rtol=1e-5, atol=1e-6)
    v = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(hvp(running_max, X, v), expected @ v, rtol=1e-5, atol=1e-6)


def test_auto_raises_forward_over_reverses_error_where_both_are_refused():
    def f(x):
        return struct.unpack("d", struct.pack("d", x * x))[0]  # (bytes in between: no rule in any mode)

    with pytest.raises(OverdubError) as e:
        hessian(f, X)
    assert any("forward over forward was tried too" in n for n in getattr(e.value, "__notes__", []))


def test_unknown_inner_mode():
    with pytest.raises(OverdubError, match="inner"):
        hessian(running_max, X, inner="sideways")
