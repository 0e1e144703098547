"""`.item()` of a dual standing for a Python number (whose own type has no `.item()`) is refused. It gave the
dual again, so a C function converting its argument by asking `.item()` until it has a number looped until
its stack overflowed: casadi's `interpolant`, called by aerosandbox's `Atmosphere`, crashed the process with a
segmentation fault in both modes (reverse mode retries a refusal by forward mode; sweep U). An array's and a
numpy scalar's `.item()` still give the entry's dual."""

import numpy as np
import pytest

from contexts import derivative, jacfwd
from contexts.forward.dual import Dual, DualConversionError, Tag


def _converted_as_c_does(v):
    for _ in range(100):  # (a converter: `.item()` until it holds a number)
        if not hasattr(v, "item"):
            return v
        v = v.item()
    raise AssertionError("looped")


def test_a_converter_asking_item_is_refused():
    d = Dual(np.float64(2.0), np.float64(1.0), Tag())
    with pytest.raises(DualConversionError, match="`.item\\(\\)` of a perturbed number"):
        _converted_as_c_does(d)


def test_items_of_arrays_and_numpy_scalars_keep_their_derivative():
    f = lambda x: np.array([x, 3.0 * x]).item(1) * np.float64(x).item()
    assert derivative(f, 1.5) == pytest.approx(6.0 * 1.5)
    np.testing.assert_allclose(jacfwd(lambda a: a.item(0) * a.item(1), np.array([2.0, 5.0])), [5.0, 2.0])
