"""scipy.signal's find_peaks, peak_prominences and peak_widths of a differentiated signal (a Gaussian's FWHM as
a function of its sigma: gaussbean's find_FWHM), through the kernels' stand-ins (`rules.numpy.scipy_peaks`).
Refused in both modes before: no rule for `_peak_finding_utils._local_maxima_1d`. The stand-ins give scipy's
kernels' outputs bit for bit (plateaus, peaks at the edges, windows, every index taken as a peak); each mode's
own derivative agrees with central differences; at a plateau, tied minima or a crossing exactly on a sample
each mode answers the mean of the two sides' slopes (the derivative where they agree) or refuses, never one
side's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from contexts import derivative, gradient, jacfwd, jacobian
from overdub.errors import OverdubError
from tests import fd

signal = pytest.importorskip("scipy.signal")
kernels = pytest.importorskip("scipy.signal._peak_finding_utils")
stand = pytest.importorskip("contexts.rules.numpy.scipy_peaks")

rng = np.random.default_rng(3)
T = np.arange(40.0)

SIGNALS = {
    "noise": rng.standard_normal(30),
    "plateaus": np.array([0, 1, 1, 1, 0, 2, 2, 0, 3, 3, 3, 3, 1, 1, 2, 0.5, 0.5, 4, 4]),
    "integers": rng.integers(0, 4, 40).astype(float),  # (ties everywhere: equal minima, crossings on samples)
    "edges": np.array([5, 1, 2, 0, 3, 3, 1, 6]),  # (the largest values at both ends)
    "gaussian": 100 * np.exp(-(T - 18.3) ** 2 / (2 * 4.1 ** 2)),
    "symmetric": np.exp(-(T - 19.5) ** 2 / 18),  # (both bases equally low)
    "nan": np.array([0, 2, 1, np.nan, 1, 3, 0, 1, 0.5]),
}


def _outputs(fn, *args):
    """(fn's outputs, the messages of the warnings it gave)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(*args)
    return out, [str(w.message) for w in caught]


def _assert_same(got, want):
    (got, got_warnings), (want, want_warnings) = got, want
    assert len(got) == len(want) and got_warnings == want_warnings
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w, strict=True)


@pytest.mark.parametrize("wlen", [-1, 2, 3, 4, 7, 20])
@pytest.mark.parametrize("name", sorted(SIGNALS))
def test_stand_ins_give_scipys_values(name, wlen):
    x = np.ascontiguousarray(SIGNALS[name], dtype=np.float64)
    for peaks in (kernels._local_maxima_1d(x)[0], np.arange(len(x), dtype=np.intp)):
        want = _outputs(kernels._peak_prominences, x, peaks, wlen)
        _assert_same(_outputs(stand.peak_prominences, x, peaks, wlen), want)
        prominence_data = want[0]
        for rel_height in (0.0, 0.3, 0.5, 1.0, 2.0):
            _assert_same(_outputs(stand.peak_widths, x, peaks, rel_height, *prominence_data),
                         _outputs(kernels._peak_widths, x, peaks, rel_height, *prominence_data))


def test_stand_ins_refuse_what_scipy_refuses():
    x = SIGNALS["plateaus"]
    with pytest.raises(ValueError, match="not a valid index"):
        stand.peak_prominences(x, np.array([3, len(x)], dtype=np.intp), -1)
    peaks = np.array([5], dtype=np.intp)
    with pytest.raises(ValueError, match="invalid for peak 5"):
        stand.peak_widths(x, peaks, 0.5, np.array([1.0]), np.array([6], dtype=np.intp), np.array([7], dtype=np.intp))
    with pytest.raises(ValueError, match="greater or equal"):
        stand.peak_widths(x, peaks, -0.5, *kernels._peak_prominences(x, peaks, -1))


# -- derivatives against central differences, each mode's own --------------------------------------------

def fwhm(sigma):
    y = 100 * np.exp(-(T - 18.3) ** 2 / (2 * sigma ** 2))
    peaks, _ = signal.find_peaks(y)
    return signal.peak_widths(y, peaks, rel_height=0.5)[0][0]


def two_peaks(p):
    """(prominences, widths, width heights) of two Gaussians on a slope; the second measured in a window."""
    y = (p[0] * np.exp(-(T - p[1]) ** 2 / (2 * p[2] ** 2)) + p[3] * np.exp(-(T - p[4]) ** 2 / (2 * p[5] ** 2))
         + 0.01 * T)
    peaks, _ = signal.find_peaks(y)
    prominences = signal.peak_prominences(y, peaks)[0]
    windowed = signal.peak_prominences(y, peaks, wlen=9)
    widths, heights = signal.peak_widths(y, peaks, rel_height=0.4, prominence_data=windowed)[:2]
    return np.concatenate([prominences, windowed[0], widths, heights])


P_TWO = np.array([3.0, 11.2, 2.3, 2.0, 27.6, 3.1])


def lorentzian_sum(p):
    return sum(a / (1 + ((T - c) / g) ** 2) for a, c, g in p.reshape(3, 3))


def lorentzians(p):
    """find_peaks' prominences of a sum of three Lorentzians, and the widths, heights and crossings measured
    from them."""
    y = lorentzian_sum(p)
    peaks, props = signal.find_peaks(y, prominence=0.1, distance=3)
    prominence_data = (props["prominences"], props["left_bases"], props["right_bases"])
    return np.concatenate([props["prominences"], *signal.peak_widths(y, peaks, 0.6, prominence_data)])


P_LORENTZ = np.array([2.0, 8.4, 1.7, 1.2, 19.3, 2.6, 3.1, 31.1, 1.2])


@pytest.mark.one_mode
@pytest.mark.parametrize("sigma", [2.5, 4.1, 6.2])
@pytest.mark.parametrize("mode", ["gradient", "derivative"])
def test_fwhm_of_a_gaussian(mode, sigma):
    got = gradient(fwhm, sigma)[0] if mode == "gradient" else derivative(fwhm, sigma)
    np.testing.assert_allclose(got, fd.derivative(fwhm, sigma), rtol=1e-6)


@pytest.mark.one_mode
@pytest.mark.parametrize("api", [jacobian, jacfwd])
@pytest.mark.parametrize("f, p", [(two_peaks, P_TWO), (lorentzians, P_LORENTZ)], ids=["two_peaks", "lorentzians"])
def test_peak_properties(f, p, api):
    assert len(f(p)) == (8 if f is two_peaks else 15)  # (the peaks meant: two, three)
    np.testing.assert_allclose(api(f, p), fd.jacobian(f, p), rtol=1e-6, atol=1e-8)


def find_peaks_widths(p):
    """find_peaks' own widths (`width=`), heights and crossings."""
    _, props = signal.find_peaks(lorentzian_sum(p), width=1, rel_height=0.6)
    return np.concatenate([props[k] for k in ("widths", "width_heights", "left_ips", "right_ips")])


@pytest.mark.one_mode
def test_find_peaks_own_widths_forward():
    np.testing.assert_allclose(jacfwd(find_peaks_widths, P_LORENTZ), fd.jacobian(find_peaks_widths, P_LORENTZ),
                               rtol=1e-6, atol=1e-8)


def test_find_peaks_own_widths_reverse():
    # (reverse mode's own pass refuses find_peaks' `properties.update(zip(names, _peak_widths(..., properties[...])))`
    # as a lazy iterator drawing from a dict changed after it: a false alarm of the lowering's check, the zip
    # holds no view of the dict; forward mode answers after the refusal)
    def f(p):
        return np.sum(find_peaks_widths(p) * np.arange(12.0))

    np.testing.assert_allclose(gradient(f, P_LORENTZ)[0], fd.gradient(f, P_LORENTZ)[0], rtol=1e-6, atol=1e-8)


def widths_of_the_signal(x):
    peaks, _ = signal.find_peaks(x)
    widths, heights = signal.peak_widths(x, peaks, rel_height=0.7)[:2]
    return np.sum(widths * np.arange(1, len(peaks) + 1)) + np.sum(heights ** 2)


@pytest.mark.one_mode
@pytest.mark.parametrize("api", [gradient, jacfwd])
def test_in_the_samples_themselves(api):
    x = np.sin(T / 3) + 0.3 * np.cos(T / 1.7)
    np.testing.assert_allclose(np.ravel(api(widths_of_the_signal, x)), fd.gradient(widths_of_the_signal, x)[0],
                               rtol=1e-6, atol=1e-8)


# -- ties: the derivative where the sides agree, their mean at a kink, or a refusal; never one side's ----------

def _sides_mean(f, s, h=1e-7):
    """The mean of f's one-sided differences at s: its derivative where they agree, at a kink the engines'
    convention (`np.maximum`'s, `abs`'s)."""
    return ((f(s) - f(s - h)) / h + (f(s + h) - f(s)) / h) / 2


def _along(x0, v, measure):
    return lambda s: measure(x0 + s * v)


def _prominence(x):
    peaks, _ = signal.find_peaks(x)
    return signal.peak_prominences(x, peaks)[0][0]


def _width(x):
    peaks, _ = signal.find_peaks(x)
    return signal.peak_widths(x, peaks, rel_height=0.5)[0][0]


PLATEAU = np.array([0.0, 1.0, 3.0, 3.0, 1.5, 0.2])  # (the peak: index 2, the midpoint of the plateau)
TIED_BASES = np.array([0.5, 1.0, 3.0, 1.0, 0.5])  # (both minima 0.5)
ON_A_SAMPLE = np.array([0.0, 1.0, 2.0, 1.0, 0.5, 0.0])  # (half height 1.0, on samples 1 and 3)

TIES = {  # (the point, a direction, the measure, whether the sides' slopes part there)
    "plateau_apart": (PLATEAU, np.array([0, 0, 0, 1.0, 0, 0]), _prominence, True),
    "plateau_together": (PLATEAU, np.array([0, 0, 1.0, 1.0, 0, 0]), _prominence, False),
    "tied_bases_apart": (TIED_BASES, np.array([1.0, 0, 0, 0, 0]), _prominence, True),
    "tied_bases_together": (TIED_BASES, np.array([1.0, 0, 0.5, 0, 1.0]), _prominence, False),
    "on_a_sample_apart": (ON_A_SAMPLE, np.array([0, 0, 0, 0.5, 0, 0]), _width, True),
    "on_a_sample_together": (ON_A_SAMPLE, ON_A_SAMPLE, _width, False),  # (scaled: the width stays)
}


@pytest.mark.one_mode
@pytest.mark.parametrize("api", [gradient, derivative])
@pytest.mark.parametrize("name", sorted(TIES))
def test_at_a_tie_right_or_refused(name, api):
    x0, v, measure, parting = TIES[name]
    f = _along(x0, v, measure)
    h = 1e-7
    assert parting == (abs((f(0) - f(-h)) - (f(h) - f(0))) > 1e-3 * h)  # (the case meant)
    try:
        got = api(f, 0.0)
    except OverdubError:
        return
    np.testing.assert_allclose(np.ravel(got)[0], _sides_mean(f, 0.0, h), rtol=1e-5, atol=1e-7)


@pytest.mark.one_mode
@pytest.mark.parametrize("api", [gradient, jacfwd])
@pytest.mark.parametrize("x0, measure", [(PLATEAU, _prominence), (TIED_BASES, _prominence), (ON_A_SAMPLE, _width)],
                         ids=["plateau", "tied_bases", "on_a_sample"])
def test_at_a_tie_every_direction(x0, measure, api):
    # (jacfwd takes a chunk of directions at once: a tie of the peak with a plateau's sample gave one side's slope)
    try:
        got = np.ravel(api(measure, x0))
    except OverdubError:
        return
    want = [_sides_mean(_along(x0, e, measure), 0.0) for e in np.eye(len(x0))]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
