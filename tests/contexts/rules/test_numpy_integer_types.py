"""numpy's signed integer types called on differentiated values (`np.int_(t / period)`, pylightcurve's orbit
reduced to one period, sweep S: both modes refused numpy's C constructor): truncation, as `astype` computes it
(`rules.numpy.stand_ins.integer_of`), its derivative 0 between the integers, each mode's own answer against
central differences; exactly on an integer, the jump is refused, or judged continuous from the two sides where
the function does not jump (a reduction by whole periods of a periodic function)."""

import numpy as np
import pytest

from contexts import derivative, gradient
from overdub.errors import OverdubError

from tests import fd

T = np.linspace(-0.1, 5.1, 7)


def orbit_phase(period):
    m = (T - np.int_(T / period) * period) * 2.0 * np.pi / period
    return np.sum(np.sin(m))


def scalar_parts(x):
    return float(np.int64(x * 3.0)) * x + np.int32(7.9) * x + np.int16(-2.5) * x * x


def parsed_constant(x):
    return np.int64("12") * x


@pytest.mark.one_mode
@pytest.mark.parametrize("api", [gradient, derivative])
@pytest.mark.parametrize("f, x", [(orbit_phase, 2.2), (orbit_phase, 2.5), (scalar_parts, 1.1), (parsed_constant, 0.5)])
def test_between_the_integers(api, f, x):
    got = api(f, x)
    got = got[0] if isinstance(got, tuple) else got
    np.testing.assert_allclose(float(got), fd.derivative(f, x), rtol=1e-6)
    assert f(x) == pytest.approx(float(np.asarray(f(x))))  # (the primal's types unchanged by the stand-in)


@pytest.mark.one_mode
@pytest.mark.parametrize("api", [gradient, derivative])
def test_exactly_on_a_jump(api):
    with pytest.raises(OverdubError):
        api(scalar_parts, 1.0)  # (np.int64(3.0): the step's jump, where the value changes by 1)


def test_results_keep_numpys_types():
    from contexts.rules.numpy.stand_ins import integer_of
    for kind, x in ((np.int64, 2.7), (np.int32, -2.7), (np.int_, np.array([1.5, -0.5])), (np.int16, 3)):
        got, want = integer_of(kind)(x), kind(x)
        assert type(got) is type(want) and np.array_equal(got, want)
        if isinstance(want, np.ndarray):
            assert got.dtype == want.dtype
