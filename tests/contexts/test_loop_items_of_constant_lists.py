"""A list of constant numbers handed to a method of a differentiated object, and looped over there
(`get_spectral_moments(p, moments=[0, i, 2 * i])`, then `for i in moments: cache[(start, stop, i)] = ...`).

Reverse mode took the loop variable for differentiated: the call has active inputs, so the list, written as
a display in the call, counted as active from its making on (the call might store into it), and each item
drawn from it then keyed the cache, refused ("cannot key a dict by a differentiated value"). Every
FLife estimator in session 70's sweep S was refused so.

Now a display handed straight to a call enters it constant when its items are (`codegen.entering_active`),
and a parameter read only as loops' iterables is taken for a list of numbers (`codegen._number_draws`,
checked where the call binds it: `runtime._numbers_bound`), whose items no call can change in place.
Each mode's own answer against central differences; the refusals that must stay, stay."""

import numpy as np
import pytest

import contexts
from contexts import gradient
from overdub.errors import OverdubError

from tests import fd

F = np.linspace(0.0, 4.0, 9)


class Spectrum:
    """FLife's SpectralData, reduced: moments cached by (start, stop, order) while coefficients are made."""

    def __init__(self, psd):
        self.psd = psd
        self._cache = {}
        self.alpha = self.bandwidth(i=0.75)
        self.m = self.moments(2, moments=[0, 2, 4])

    def _moment(self, band, i):
        return np.trapezoid(F[: len(band)] ** i * band, F[: len(band)])

    def moments(self, stop, moments=(0, 1, 2)):
        start = int(np.argmax(self.psd > 0))  # (an index computed from the inputs)
        band = self.psd[start:stop + 7]
        out = []
        for i in moments:
            key = (start, stop, i)
            if key not in self._cache:
                self._cache[key] = self._moment(band, i)
            out.append(self._cache[key])
        return np.array(out)

    def bandwidth(self, i=2):
        m = self.moments(2, moments=[0, i, 2 * i])
        return m[1] / np.sqrt(m[0] * m[2])


def alpha(a):
    return Spectrum(a * np.exp(-F) + np.exp(-(F - 2.0) ** 2)).alpha


def moments_sum(a):
    s = Spectrum(a * np.exp(-F) + np.exp(-(F - 2.0) ** 2))
    return float(np.sum(s.m)) + s.alpha


def orders_as_tuple(a):
    s = Spectrum(a * np.exp(-F) + 1e-3)
    return float(np.sum(s.moments(1, moments=(0.5, 1.5))))


@pytest.mark.one_mode
@pytest.mark.parametrize("f", [alpha, moments_sum, orders_as_tuple])
def test_each_mode_against_central_differences(f):
    expected = fd.derivative(f, 2.0)
    assert np.isfinite(expected) and abs(expected) > 1e-6
    np.testing.assert_allclose(gradient(f, 2.0)[0], expected, rtol=1e-6)
    np.testing.assert_allclose(contexts.derivative(f, 2.0), expected, rtol=1e-6)


class Scaled:
    def __init__(self, w):
        self.w = w

    def total(self, orders):
        t = 0.0
        for i in orders:
            t = t + self.w * i
        return t


@pytest.mark.one_mode
def test_differentiated_items_still_flow():
    """The same loop given a list of differentiated values: the items' derivatives are taken (the general twin)."""
    def f(a):
        return Scaled(a).total([a, 2.0 * a, 3.0])

    np.testing.assert_allclose(gradient(f, 1.5)[0], fd.derivative(f, 1.5), rtol=1e-7)
    np.testing.assert_allclose(gradient(f, 1.5)[0], 2 * 1.5 + 2 * 2.0 * 1.5 + 3.0, rtol=1e-12)


@pytest.mark.one_mode
def test_list_of_arrays_takes_the_general_twin():
    """A constant list of arrays binds no numbers: the twin that does not take them for numbers runs."""
    def numbers_first(a):
        return Scaled(a).total([1.0, 2.0])

    def arrays(a):
        return float(np.sum(Scaled(a).total([np.ones(2), np.arange(2.0)])))

    for f in (numbers_first, arrays):
        np.testing.assert_allclose(gradient(f, 1.5)[0], fd.derivative(f, 1.5), rtol=1e-7)


@pytest.mark.one_mode
def test_differentiated_key_still_refused():
    """A differentiated value keying the cache is refused as before."""
    class Keyed:
        def __init__(self, w):
            self.w = w
            self.cache = {}

        def store(self, orders):
            for i in orders:
                self.cache[i * self.w] = i
            return sum(self.cache) * self.w

    with pytest.raises(OverdubError, match="key a dict by a differentiated value"):
        gradient(lambda a: Keyed(a).store([1.0, 2.0]), 1.5)
