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


def _as_scalar(value):
    """aquasol's `format_output_type`: a 0-d array's `.item()`, asked once by Python code."""
    if len(value.shape) == 0:
        return value.item()
    return value


def test_python_code_asking_item_once_gets_the_number():
    d = Dual(2.0, 1.0, Tag())
    v = _as_scalar(d)  # (a number's dual standing for a 0-d array: the number, as numpy gives)
    assert type(v) is Dual and v.primal == 2.0 and v.tangent == 1.0
    assert _as_scalar(d).primal == 2.0  # (asked again of the same dual: a new number each time)
    f = lambda a: _as_scalar(np.asarray(a[0] * a[1])) * a[0]  # noqa: E731
    np.testing.assert_allclose(jacfwd(f, np.array([2.0, 5.0])), [2 * 2.0 * 5.0, 2.0 ** 2])
