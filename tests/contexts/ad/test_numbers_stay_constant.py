"""Parameters bound to numbers stay constant when handed to a call with differentiated inputs (reverse mode's
activity analysis, `codegen.generate`'s `quiet` parameters).

A call with differentiated inputs may store them into its other arguments (`helper(lst, x)`), so the
analysis took those arguments for differentiated after the call, and the values computed from them too. A
number cannot be changed in place: where a call binds numbers to such parameters, they stay constant.
python_speech_features' `fbank(signal, samplerate, winlen, ...)` handed `winlen * samplerate` on, taken for
differentiated, to `decimal.Decimal(...)` (a C function without a rule): every MFCC was refused. The twin that
takes them for numbers is checked at each call; a call binding a list or an array there takes the general twin.
"""

import decimal

import numpy as np
import pytest

from contexts import gradient
from tests import fd

pytestmark = pytest.mark.one_mode  # (reverse mode's own answer: no forward mode after a refusal)


def round_half_up(number):
    return int(decimal.Decimal(number).quantize(decimal.Decimal("1"), rounding=decimal.ROUND_HALF_UP))


def frames(sig, frame_len, frame_step):
    n = round_half_up(frame_len)
    step = round_half_up(frame_step)
    starts = range(0, len(sig) - n + 1, step)
    return np.stack([sig[s:s + n] for s in starts])


def features(sig, rate=100, winlen=0.04, winstep=0.02, window=np.hanning):
    framed = frames(sig, winlen * rate, winstep * rate)
    return np.log(np.sum((framed * window(framed.shape[1])) ** 2, axis=1))


def energy(sig):
    return float(features(sig, 100, 0.04, 0.02) @ np.linspace(-1.0, 1.0, 9))


def energy_by_keyword(sig):
    return float(features(sig, rate=100, winlen=0.04) @ np.linspace(-1.0, 1.0, 9))


SIG = np.sin(np.linspace(0.0, 6.0, 20)) + 0.1 * np.cos(np.arange(20.0) ** 1.3)


@pytest.mark.parametrize("f", [energy, energy_by_keyword])
def test_numbers_handed_beside_a_differentiated_array_stay_constant(f):
    np.testing.assert_allclose(gradient(f, SIG)[0], fd.gradient(f, SIG)[0], rtol=1e-6, atol=1e-9)


def append_scaled(out, x, c):
    out.append(x * c)


def through_a_list(x, out, c=2.0):
    append_scaled(out, x, c)
    return out[0] * out[-1]


def caller_with_a_list(x):
    return through_a_list(x, [1.5], 3.0)


def caller_with_a_number_then(x):
    return through_a_list(x, [1.5], 3.0) + through_a_list(x, [0.5])


def test_a_list_in_that_place_still_receives_the_derivative():
    # (the same function twinned for numbers first, `c`, then called with a list where a number may be: the
    # list, changed by the call, carries the derivative)
    for f in (caller_with_a_list, caller_with_a_number_then):
        assert gradient(f, 0.7)[0] == pytest.approx(fd.derivative(f, 0.7), rel=1e-7)
        assert gradient(f, 0.7)[0] != 0.0


def store_into(box, x):
    box[0] = x * x


def maybe_a_box(x, holder):
    store_into(holder, x)
    return holder[0] + 1.0


def test_an_array_bound_where_a_number_was_bound_before():
    f_number = lambda x: maybe_a_box(x, np.zeros(1))  # noqa: E731  (an array: changed in place)
    assert gradient(f_number, 1.3)[0] == pytest.approx(2.6, rel=1e-12)
