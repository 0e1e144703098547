"""Which arguments of a call may carry a derivative as it begins (reverse mode, `codegen._entering`).

The activity analysis is blind to order: a variable that a later call with differentiated inputs may store
into counts as differentiated from its making on. Handed to an earlier call, such a constant was taken for
differentiated there, and that callee's tests of it refused (a source location array of zeros compared `> 0`
in geoana's property setter; EoN's degree dict looked up by key). The function's statements are now walked in
order, and each call is told what may be differentiated as it begins. These tests check both sides: the
refusals gone (each fails on the old code), and every variable changed mid-function still carrying its
derivative into the calls after the change (each mode's own answer against central differences)."""

import numpy as np
import pytest

from contexts import gradient

from tests import fd

X = np.array([0.3, 1.2, -0.7])


class Located:
    """geoana's PointCurrentHalfSpace, reduced: a property setter refusing a location above the surface."""

    def __init__(self, location):
        self.location = location

    @property
    def location(self):
        return self._location

    @location.setter
    def location(self, vec):
        if np.any(vec[..., -1] > 0):
            raise ValueError("above the surface")
        self._location = vec

    def potential(self, xyz):
        return 1.0 / np.linalg.norm(xyz - self._location, axis=-1)


def origin():
    return np.zeros(3)


def after_a_conversion(x):
    xyz = np.atleast_2d(x)
    return Located(origin()).potential(xyz)[0]


def made_first(x):
    loc = origin()
    return Located(loc).potential(x[None, :])[0]


def after_a_loop_and_a_branch(x):
    for _ in range(2):
        x = x * 2.0
    if x[0] > 0:
        x = x + 1.0
    loc = origin()
    return Located(loc).potential(x)


@pytest.mark.one_mode
@pytest.mark.parametrize("f", [after_a_conversion, made_first, after_a_loop_and_a_branch])
def test_a_constant_enters_constant(f):
    np.testing.assert_allclose(gradient(f, X)[0], fd.gradient(f, X)[0], rtol=1e-7)


# -- variables changed mid-function: differentiated in the calls after the change ---------------------------

def total(v):
    return float(np.sum(v))


def fill(buf, v):
    buf[:] = v


def scale(buf, c):
    return buf * c


def filled_after_a_read(x):
    buf = np.zeros(3)
    a = total(buf)
    fill(buf, x)
    return a + total(buf) * x[0]


def rebound_in_a_loop(x):
    buf = np.zeros(3)
    acc = 0.0
    for i in range(3):
        acc = acc + total(buf) * x[i]
        buf = buf + x
    return acc


def filled_in_a_loop(x):
    buf = np.zeros(3)
    acc = 0.0
    for i in range(3):
        acc = acc + total(buf)
        fill(buf, x * i)
    return acc


def rebound_in_a_branch(x):
    b = np.ones(3)
    if x[0] > 0:
        b = x * 2
    return total(b) * 3


def rebound_before_continue(x):
    b = np.ones(3)
    c = b
    for i in range(3):
        if i == 1:
            c = x
            continue
        b = c
    return total(b)


def rebound_before_break(x):
    c = np.ones(3)
    i = 0
    while i < 3:
        i += 1
        if i == 2:
            c = x * 2
            break
    return total(c)


def stored_into_a_dict(x):
    m = {"a": np.ones(3)}
    a = total(m["a"])
    m["a"] = x
    return a + total(m["a"])


def appended(x):
    lst = [np.ones(3)]
    a = total(lst[0])
    lst.append(x)
    return a + total(lst[-1]) + total(lst[0])


def changed_in_place_through_an_alias(x):
    b = np.ones(3)
    v = b
    v *= x
    return total(b)


def added_in_place_through_an_alias(x):
    b = np.ones(3)
    v = b
    v += x
    return total(b)


def written_through_a_view(x):
    b = np.ones(3)
    v = b[:2]
    v[0] = x[1]
    return total(b) * x[0]


def copied_into(x):
    b = np.zeros(3)
    r = scale(b, 2.0)
    np.copyto(b, x)
    return total(r) + total(b) + total(scale(b, x[0]))


@pytest.mark.one_mode
@pytest.mark.parametrize("f", [filled_after_a_read, rebound_in_a_loop, filled_in_a_loop, rebound_in_a_branch,
                               rebound_before_continue, rebound_before_break, stored_into_a_dict, appended,
                               changed_in_place_through_an_alias, added_in_place_through_an_alias,
                               written_through_a_view, copied_into], ids=lambda f: f.__name__)
def test_changed_mid_function_carries_its_derivative(f):
    expected = fd.gradient(f, X)[0]
    assert np.any(np.abs(expected) > 0.1)
    np.testing.assert_allclose(gradient(f, X)[0], expected, rtol=1e-7, atol=1e-12)


@pytest.mark.one_mode
def test_scipy_decimate():
    """scipy's `decimate` makes its filter `np.asarray(sos, dtype=x.dtype)` and hands it to `sosfiltfilt` beside
    x: taken for differentiated (x's dtype read as a value; the filter as an argument of a call with x), its
    `_validate_sos` `== 1` and `lfilter_zi`'s `!= 1.0` were refused (mosqito's third-octave bank)."""
    from scipy.signal import decimate
    t = np.arange(240) / 48000.0
    tone = np.sin(2 * np.pi * 1000.0 * t)

    def f(a):
        return float(np.sum(decimate(a * tone + 0.1 * a * a, 3) ** 2))
    expected = fd.derivative(f, 0.5)
    assert gradient(f, 0.5)[0] == pytest.approx(expected, rel=1e-6)
    import contexts
    assert contexts.derivative(f, 0.5) == pytest.approx(expected, rel=1e-6)
