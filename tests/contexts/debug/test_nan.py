import math
import warnings

import numpy as np
import pytest

from contexts.debug import NaNContext, NaNError
from overdub.errors import OverdubError

from . import _subjects as s


@pytest.fixture(autouse=True)
def quiet_numpy():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def test_float_overflow_is_caught_at_its_line():
    assert math.isnan(s.overflow(1.0))  # without the context the NaN just flows out
    with pytest.raises(NaNError) as info:
        NaNContext().run(s.overflow, 1.0)
    e = info.value
    assert isinstance(e, OverdubError)
    assert e.site.lineno == s.line_of(s.overflow) and e.site.filename == s.__file__
    assert e.site.kind == "binop" and e.site.op == "*"
    assert e.args_ == (1e300, 1e300) and e.result == math.inf
    text = str(e)
    assert "produced Inf" in text and "1e+300, 1e+300" in text
    assert f"{s.__file__}:{s.line_of(s.overflow)}" in text
    assert "possible fix" in text


def test_an_error_caught_by_user_code_is_still_reported():
    ctx = NaNContext()
    with pytest.raises(NaNError) as info:
        ctx.run(s.swallows, 1.0)
    assert info.value is ctx.error and info.value.site.lineno == s.line_of(s.overflow)
    assert NaNContext().run(s.swallows, 1e-300) == s.overflow(1e-300)


def test_numpy_scalar_call():
    with pytest.raises(NaNError) as info:
        NaNContext().run(s.log_ratio, 0.0, 2.0)
    e = info.value
    assert e.site.lineno == s.line_of(s.log_ratio) and e.site.kind == "call"
    assert e.fn is np.log and e.result == -np.inf
    assert "0.0" in str(e)


def test_numpy_array_nan():
    with pytest.raises(NaNError) as info:
        NaNContext().run(s.sqrt_all, [4.0, -1.0, 9.0])
    e = info.value
    assert e.site.lineno == s.line_of(s.sqrt_all) and e.fn is np.sqrt
    assert "produced NaN" in str(e)
    assert np.isnan(e.result[1])


def test_in_place_operations_are_judged_on_their_inputs_before():
    with pytest.raises(NaNError) as info:
        NaNContext().run(s.scale_in_place, np.array([1.0, 2.0]))
    assert info.value.site.lineno == s.line_of(s.scale_in_place) and info.value.site.kind == "augop"
    with pytest.raises(NaNError) as info:
        NaNContext().run(s.exp_in_place, np.array([1.0, 1000.0]))
    assert info.value.site.lineno == s.line_of(s.exp_in_place) and info.value.fn is np.exp


def test_finite_runs_return_the_same_result():
    assert NaNContext().run(s.sqrt_all, [4.0, 9.0]).tolist() == [2.0, 3.0]
    assert NaNContext().run(s.overflow, 1e-300) == s.overflow(1e-300)
    assert NaNContext().run(s.norm2, [3.0, 4.0]) == 5.0


def test_nan_inputs_are_not_blamed():
    assert math.isnan(NaNContext().run(s.already_nan, math.nan))
    assert NaNContext().run(s.already_nan, np.array([np.inf])).tolist() == [np.inf]


def test_constants_and_comparisons_are_not_blamed():
    assert math.isnan(NaNContext().run(s.deliberate_nan, -1.0))
    assert NaNContext().run(s.compares_to_inf, 3.0) is True


def test_complex_results():
    def f(z):
        return z * 1e300 * 1e300

    with pytest.raises(NaNError, match="produced"):
        NaNContext().run(f, complex(1.0, 1.0))


def test_inside_nested_calls_the_innermost_operation_is_blamed():
    def outer(xs):
        return s.sqrt_all(xs).sum()

    with pytest.raises(NaNError) as info:
        NaNContext().run(outer, [1.0, -4.0])
    assert info.value.site.function == "sqrt_all"


def test_stdlib_code_is_blamed_at_its_own_line():
    import colorsys
    import inspect

    def f(r, g, b):
        return colorsys.rgb_to_hsv(r, g, b)

    with pytest.raises(NaNError) as info:
        NaNContext().run(f, 1e308, -1e308, 0.0)
    site = info.value.site
    lines, start = inspect.getsourcelines(colorsys.rgb_to_hsv)
    assert site.filename == colorsys.__file__ and site.function == "rgb_to_hsv"
    assert "maxc-minc" in lines[site.lineno - start] and site.op == "-"


def test_numpy_python_code_is_blamed_inside_numpy():
    # np.kaiser is plain Python; i0 of a large beta overflows, then inf / inf is NaN.
    assert np.isnan(np.kaiser(4, 1000.0)).any()
    with pytest.raises(NaNError) as info:
        NaNContext().run(np.kaiser, 4, 1000.0)
    site = info.value.site
    assert "numpy" in site.filename and site.filename != __file__
    assert "produced Inf" in str(info.value)  # the overflow, not the later NaN
