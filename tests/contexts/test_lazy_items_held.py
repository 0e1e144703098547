"""A lazy iterator that holds only an item of a list or dict, or a slice of one (`zip(names, widths(d["p"]))`,
`zip(p[1:])`), is unaffected when the container changes afterwards: an item is its own object, a list's slice a
copy made where the iterator is. Reverse mode's guard (`__od_lazy_guard__`) counted the container as held and
refused scipy's `find_peaks(x, width=w)`, whose `properties.update(zip(names, _peak_widths(...,
properties["prominences"], ...)))` changes the dict the zip's callee was handed an item of (session 71's note).
An array's slice is a view, whose container's changes it sees: still refused. Each case against central
differences."""

import numpy as np
import pytest

from contexts import gradient
from contexts.lowered.runtime import EagerIterationError
from tests import fd
from tests.modes import assert_refused_in_reverse, assert_scalar_modes


def _spread(a, b):
    return a * b, a + b, a - b


def update_from_items(x):
    d = {"a": x * x, "b": 3.0 * x}
    d.update(zip(["p", "q", "r"], _spread(d["a"], d["b"])))
    return d["p"] + 2.0 * d["q"] + d["r"] * d["a"]


def list_slice_then_grown(x):
    p = [x, 2.0 * x, 5.0]
    it = zip(p[1:], p[:2])
    p.append(x ** 3)
    total = sum(a * b for a, b in it)
    return total + p[-1]


def dict_item_then_rebound(x):
    d = {"w": [x, x * x]}
    it = zip(d["w"], [1.0, 2.0])
    d["w"] = [0.0, 0.0]
    return sum(a * b for a, b in it)


@pytest.mark.parametrize("f", [update_from_items, list_slice_then_grown, dict_item_then_rebound],
                         ids=lambda f: f.__name__)
def test_right(f):
    assert_scalar_modes(f, 1.3, second=False)


def array_view_changed_by_the_callee(x):
    a = np.array([x, 2.0 * x, x * x])
    return _draws_after(zip(a[1:]), a)


def _draws_after(it, a):
    a *= 2.0
    return sum(v[0] for v in it)


def array_view_then_changed(x):
    a = np.array([x, 2.0 * x, x * x])
    it = zip(a[1:])
    _triple(a)
    return sum(v[0] for v in it)


def _triple(a):
    a *= 3.0


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
@pytest.mark.parametrize("f", [array_view_changed_by_the_callee, array_view_then_changed], ids=lambda f: f.__name__)
def test_a_view_of_a_changed_array_is_refused(f):
    assert_refused_in_reverse(f, 1.3, EagerIterationError, match="is used after a ndarray it draws from changed")


def test_find_peaks_with_widths():
    signal = pytest.importorskip("scipy.signal")
    t = np.linspace(0.0, 6.0, 80)
    x0 = np.sin(3.0 * t) + 0.3 * np.cos(7.0 * t)

    def f(x):
        _, props = signal.find_peaks(x, width=1)
        return props["widths"].sum() + props["width_heights"].sum()

    g = np.asarray(gradient(f, x0)[0])
    np.testing.assert_allclose(g, fd.gradient(f, x0, h=1e-6, order=2)[0], rtol=1e-6, atol=1e-6)
    assert np.abs(g).max() > 1.0
