"""Cases found by the sweeps of session 24 and left from session 23 (a flat iterator or an ndarray subclass's
view read after its array changed, durations scaled by a differentiated number, an object's `.size` in
forward mode's tangent twin, a closure a context's run made and passed to `gradient`), each checked against
central differences or a closed form."""

import datetime

import numpy as np
import pytest

from contexts import derivative, gradient, jacfwd, jacobian, jvp
from overdub.errors import OverdubError
from tests import fd

X = np.array([0.61, -0.37, 0.83, 0.24])


# -- a flat iterator taken before its array changed in place, read after (reverse mode read the old values)

def flat_then_scaled(x):
    A = np.outer(x, x)
    it = A.flat
    A *= 2.0
    return np.array([it[0], it[5]])


def flat_then_row_written(x):
    A = np.outer(x, x)
    it = A.flat
    A[1, 1] = 5 * x[2]
    return it[4:7]


def flat_of_transpose(x):
    A = np.outer(x, x)
    it = A.T.flat
    A[0, 1] = x[3] ** 3
    return np.array([it[1], it[4], it[0]])


def flat_of_a_strided_view(x):
    A = np.outer(x, x)
    it = A[1:, ::2].flat
    A *= x[0]
    return np.array([it[0], it[3]])


def flat_then_view_changed(x):
    A = np.outer(x, x)
    it = A.flat
    v = A[1]
    v += x
    return np.array([it[5], it[0]])


def flat_iterated_after(x):
    A = np.outer(x, x)
    it = A.flat
    A[2] = 1.0
    return np.array([s for s in it][:12:3])


def flat_read_before_and_after(x):
    A = np.outer(x, x)
    it = A.flat
    r = it[3] * 1.0
    A[0, 3] = x[1]
    return np.array([r, it[3]])


@pytest.mark.parametrize("f", [flat_then_scaled, flat_then_row_written, flat_of_transpose, flat_of_a_strided_view,
                               flat_then_view_changed, flat_iterated_after, flat_read_before_and_after])
def test_flat_iterator_read_after_its_array_changed(f):
    np.testing.assert_allclose(jacobian(f, X), fd.jacobian(f, X), rtol=1e-6, atol=1e-8)


# -- an ndarray subclass's view read after its base changed (forward mode's twin read the old tangent)

class Sub(np.ndarray):
    pass


def subclass_view_then_base_written(x):
    r = x * x
    v = r.view(Sub)
    r[2] = x[2]
    return np.asarray(v).sum()


def subclass_base_then_view_of_view(x):
    r = (x * x).view(Sub)
    v = r[1:]
    r[2] = x[2] ** 3
    return float(np.asarray(v).sum())


def test_subclass_view_read_after_its_base_changed():
    f = subclass_view_then_base_written
    expected = fd.jacobian(f, X)
    np.testing.assert_allclose(jacfwd(f, X), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gradient(f, X)[0], expected, rtol=1e-6, atol=1e-8)
    e = np.eye(4)[2]
    assert jvp(f, (X,), (e,))[1] == pytest.approx(expected @ e, rel=1e-6)


def test_subclass_view_of_a_view_read_after_its_base_changed():
    f = subclass_base_then_view_of_view
    expected = fd.jacobian(f, X)
    np.testing.assert_allclose(gradient(f, X)[0], expected, rtol=1e-6, atol=1e-8)
    try:  # (forward mode's duals have no `.view`: refused, never the old tangent)
        got = jacfwd(f, X)
    except OverdubError:
        return
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


# -- a duration scaled by a differentiated number: rounded (to microseconds, or to whole units of a
#    np.timedelta64), no derivative: refused in every mode, where forward mode gave the unrounded value and
#    reverse mode 0

HOUR = datetime.timedelta(hours=1)


def hours_total(a):
    return (a * HOUR).total_seconds()


def hours_divided(a):
    return (HOUR * a) / datetime.timedelta(seconds=1)


def numpy_hours(a):
    return float((np.timedelta64(1, "h") * a) / np.timedelta64(1, "s"))


def numpy_duration_array(a):
    t = np.array([1, 2, 3], dtype="m8[s]")
    return float((t * a / np.timedelta64(1, "s")).sum())


def duration_divided_by(a):
    return (HOUR / a).total_seconds()


@pytest.mark.parametrize("f", [hours_total, hours_divided, numpy_hours, numpy_duration_array, duration_divided_by])
@pytest.mark.parametrize("mode", [gradient, derivative])
def test_a_duration_scaled_by_a_differentiated_number_is_refused(f, mode):
    with pytest.raises(OverdubError, match="duration"):
        mode(f, 0.613)


def constant_durations(a):
    d = HOUR * 2.5
    return a * (d / HOUR)


def whole_hours(a):
    n = 3
    return (n * HOUR).total_seconds() * a


def numpy_constant_hours(a):
    ts = np.arange(4) * np.timedelta64(1, "h")
    return a * float((ts / np.timedelta64(1, "h")).sum())


@pytest.mark.parametrize("f, slope", [(constant_durations, 2.5), (whole_hours, 10800.0), (numpy_constant_hours, 6.0)])
@pytest.mark.parametrize("mode", [gradient, derivative])
def test_constant_durations_stay_differentiable(f, slope, mode):
    assert fd.derivative(f, 0.613) == pytest.approx(slope, rel=1e-6)
    assert float(np.ravel(mode(f, 0.613))[0]) == pytest.approx(slope, rel=1e-12)


# -- forward mode's tangent twin and an object a differentiated number made, `a * obj`: its `.size` may be a
#    property of its own (the twin took it for an array's, constant: 0)

class Scaled:
    def __init__(self, k):
        self.k = k

    def __mul__(self, s):
        return Scaled(self.k * s)

    __rmul__ = __mul__

    @property
    def size(self):
        return self.k ** 2

    @property
    def shape(self):
        return (self.k ** 3,)


def size_of_scaled(a):
    return (a * Scaled(1.0)).size


def shape_of_scaled(a):
    return (a * Scaled(2.0)).shape[0]


@pytest.mark.parametrize("f, slope", [(size_of_scaled, lambda a: 2 * a), (shape_of_scaled, lambda a: 24 * a * a)])
def test_size_property_of_an_object_a_number_made(f, slope):
    a = 0.61
    assert derivative(f, a) == pytest.approx(slope(a), rel=1e-9)
    assert gradient(f, a)[0] == pytest.approx(slope(a), rel=1e-9)


# -- a closure defined in a function forward mode runs, handed to `gradient` (refused as "the file changed
#    since it was imported": the context's twin had made the closure's code)

def _scaled_square(s, t):
    return s * t * t


def gradient_of_an_inner_closure(s):
    def inner(t):
        return _scaled_square(s, t)
    return gradient(inner, 1.3)[0] * s


def test_gradient_of_a_closure_made_under_forward_mode():
    s = 0.7
    assert gradient_of_an_inner_closure(s) == pytest.approx(2 * s * s * 1.3, rel=1e-12)
    assert derivative(gradient_of_an_inner_closure, s) == pytest.approx(4 * s * 1.3, rel=1e-9)
