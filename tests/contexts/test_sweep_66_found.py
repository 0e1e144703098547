"""Found by session 66's sweep of packages nobody here had tried (kinetics, geomag), each reduced to plain
Python and checked against closed forms."""

import sys

import numpy as np
import pytest

from contexts import derivative, gradient, jacfwd
from overdub.errors import OverdubError
from tests.modules import imported


# -- kinetics' `Model(list)`: an array a field of a list subclass holds, changed in place ----------------------

class _Model(list):
    def deriv(self, y):
        self.buf = np.zeros(len(y))
        out = self.buf
        for rate in self:
            out += rate(y)
        return out


def _loss(y, w):
    return _Model([lambda v: v * 2.0, lambda v: v ** 2]).deriv(y) @ w


@pytest.mark.parametrize("n", [3, 100])
def test_an_array_a_list_subclass_field_holds_changed_in_place(n):
    """Reverse mode crashed (TypeError comparing the field's name with its list box's length); now refused
    (a few inputs: forward mode answers)."""
    y, w = np.linspace(0.5, 2.0, n), np.linspace(1.0, -1.0, n)
    want = (2.0 + 2.0 * y) * w
    try:
        g = gradient(lambda v: _loss(v, w), y)[0]
    except OverdubError as e:
        assert n > 64 and "list or tuple subclass" in str(e)
    else:
        assert np.allclose(g, want, rtol=1e-12, atol=0)
    assert np.allclose(jacfwd(lambda v: _loss(v, w), y), want, rtol=1e-12, atol=0)


# -- kinetics' rate laws: names put into `locals()`, then `eval(text, locals())` -------------------------------

def _rate(a, kf):
    for name, v in (("A", a), ("KF", kf)):
        locals().update({name: v})
    return eval("KF * A ** 2", locals(), globals())


@pytest.mark.skipif(sys.version_info >= (3, 13), reason="Python 3.13's locals() is a snapshot: plain Python fails too")
def test_names_put_into_locals_and_evaluated():
    """Forward mode ran the function with a copy of the frame's `locals()` (its own names hidden): the names
    put into it were lost, NameError; the copy is the frame's dict now, as plain Python's."""
    assert _rate(1.3, 2.0) == pytest.approx(3.38)
    assert derivative(lambda a: _rate(a, 2.0), 1.3) == pytest.approx(2 * 2.0 * 1.3)
    assert gradient(lambda a: _rate(a, 2.0), 1.3)[0] == pytest.approx(2 * 2.0 * 1.3)


# -- geomag: a method defining a class in its body --------------------------------------------------------------

SOURCE = """
import math

class GeoMag:
    def GeoMag(self, x):
        class RetObj:
            pass
        r = RetObj()
        r.v = math.sqrt(x) * x
        return r.v
"""


@pytest.fixture(scope="module")
def geomag_like(tmp_path_factory):
    with imported(tmp_path_factory.mktemp("geomag_like"), {"geomag_s66": SOURCE}) as (module,):
        yield module


def test_a_method_defining_a_class_in_its_body(geomag_like):
    """Refused in both modes as "its source is not available": the class body's code holds its qualname,
    `GeoMag.GeoMag.<locals>.RetObj` where it runs, `GeoMag.<locals>.RetObj` compiled alone for the twin."""
    f = lambda x: geomag_like.GeoMag().GeoMag(x)  # noqa: E731
    want = 1.5 * np.sqrt(3.0)
    assert gradient(f, 3.0)[0] == pytest.approx(want, rel=1e-12)
    assert derivative(f, 3.0) == pytest.approx(want, rel=1e-12)


# -- scikit-dsp-comm: np.apply_along_axis of a 1-d array in forward mode ----------------------------------------

_W = np.arange(9.0)


@pytest.mark.parametrize("f", [
    lambda v: np.sum(np.apply_along_axis(np.sum, 0, v * v)),
    lambda v: np.sum(np.apply_along_axis(lambda u: u * u, 0, v) * _W[:3]),
    lambda v: np.sum(np.apply_along_axis(lambda u: np.outer(u, u), 0, v) * _W.reshape(3, 3)),
], ids=["to a number", "to a vector", "to a matrix"])
def test_apply_along_axis_of_a_vector(f):
    """Forward mode refused a 1-d array by name (its slices loop had none to loop over): the one slice is the
    array itself."""
    x = np.array([0.3, -1.2, 0.8])
    want = np.array([(f(x + 1e-6 * e) - f(x - 1e-6 * e)) / 2e-6 for e in np.eye(3)])
    assert np.allclose(jacfwd(f, x), want, rtol=1e-6, atol=1e-8)
    assert np.allclose(gradient(f, x)[0], want, rtol=1e-6, atol=1e-8)


_X = np.array([0.3, -1.2, 0.8, 2.0, 0.5, -0.7, 1.1, 0.4])


def _time_delay(d):
    n = int(np.fix(d))
    mu = 1 - (d - np.fix(d))
    s = mu * _X[n] + (1 - mu) * _X[n + 1]
    return float(s + 0.0 * np.sum(np.apply_along_axis(np.sum, 0, _X * d)))


def test_a_stair_checked_by_forward_mode_beside_apply_along_axis():
    """Reverse mode checks `int(np.fix(d))` (flat at 2.3) by forward mode, which refused the function's
    apply_along_axis: the check failed and reverse mode refused at an ordinary point."""
    want = _X[3] - _X[2]
    assert gradient(_time_delay, 2.3)[0] == pytest.approx(want, rel=1e-12)
    assert derivative(_time_delay, 2.3) == pytest.approx(want, rel=1e-12)
