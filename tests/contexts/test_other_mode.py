"""One mode answers where the other refused for a limit of its own (`contexts.compose.after_refusal`,
`by_forward`): reverse mode cannot tell whether a number it formats into text carries a derivative (its
activity is static; forward mode's duals know), forward mode cannot take every eigenvector tangent of a
matrix with repeated eigenvalues (reverse mode needs only those the output uses). Each answer is checked
against central differences or a closed form, and each test also checks that without the other mode the
refusal stands (so the other mode is what answered). Where both refuse, the refusal says so."""

import numpy as np
import pytest

import contexts.ad.api as ad_api
import contexts.forward.api as fwd_api
from contexts import ADContext, gradient, hessian, jacfwd, jvp, derivative, value_and_gradient
from contexts.lowered.runtime import TextRoundTrip
from contexts.rules.registry import NoDerivative
from tests import fd


class Curve:
    """A curve holding control points and their count, as geomdl's BSpline.Curve does."""

    def __init__(self):
        self._points = []
        self._sizes = [0]

    @property
    def size(self):
        n = 1
        for s in self._sizes:
            n *= s
        return n

    def set_points(self, points):
        self._points = points
        self._sizes = [len(points)]

    @property
    def knots(self):
        return self._knots

    @knots.setter
    def knots(self, kv):
        self._knots = normalize(kv)


def uniform_knots(degree, count):
    """geomdl's knotvector.generate: a clamped uniform knot vector for `count` control points."""
    inner = count - degree - 1
    return [0.0] * (degree + 1) + [float(i) / (inner + 1) for i in range(1, inner + 1)] + [1.0] * (degree + 1)


def normalize(kv, decimals=18):
    """geomdl's knotvector.normalize: each knot formatted to text and parsed back."""
    first, last = float(kv[0]), float(kv[-1])
    return [float(("{:." + str(decimals) + "f}").format((float(k) - first) / (last - first))) for k in kv]


def spline_like(x):
    c = Curve()
    c.set_points([[0.0, 0.0], [1.0, x[0]], [2.0, x[1]], [3.0, 1.0], [4.0, 0.0], [5.0, 1.0]])
    c.knots = uniform_knots(3, c.size)  # (a count read from an object holding x: reverse mode takes it as active)
    return x[0] * x[1] * c.knots[4] + np.sin(x[0]) * c.knots[5]


X = np.array([0.7, -1.3])


def test_a_count_read_from_an_object_formatted_into_text_is_answered_by_forward_mode(monkeypatch):
    (g,) = gradient(spline_like, X)
    np.testing.assert_allclose(g, fd.gradient(spline_like, X)[0], rtol=1e-7, atol=1e-9)
    y, (g2,) = value_and_gradient(spline_like, X)
    assert y == spline_like(X)
    np.testing.assert_allclose(g2, g, rtol=1e-12)
    with ADContext():  # (the README's way: the modes' own context lets the other mode answer)
        np.testing.assert_allclose(gradient(spline_like, X)[0], g, rtol=1e-12)
    monkeypatch.setattr(ad_api, "BY_FORWARD", [])
    with pytest.raises(TextRoundTrip):  # (reverse mode alone refuses)
        gradient(spline_like, X)


def test_wrt_and_float_arguments_by_forward_mode():
    def f(a, b, n):
        return spline_like(np.array([a, b])) * n
    g = gradient(f, 0.7, -1.3, 2.0, wrt=(1, 0))
    assert isinstance(g[0], float) and isinstance(g[1], float)
    np.testing.assert_allclose(g, [fd.derivative(lambda b: f(0.7, b, 2.0), -1.3),
                                   fd.derivative(lambda a: f(a, -1.3, 2.0), 0.7)], rtol=1e-7)


def mat2quat(M):
    """transforms3d's mat2quat (Bar-Itzhack): the eigenvector of the largest eigenvalue of a symmetric K."""
    Qxx, Qyx, Qzx, Qxy, Qyy, Qzy, Qxz, Qyz, Qzz = M.flat
    K = np.array([
        [Qxx - Qyy - Qzz, 0, 0, 0],
        [Qyx + Qxy, Qyy - Qxx - Qzz, 0, 0],
        [Qzx + Qxz, Qzy + Qyz, Qzz - Qxx - Qyy, 0],
        [Qyz - Qzy, Qzx - Qxz, Qxy - Qyx, Qxx + Qyy + Qzz]]) / 3.0
    vals, vecs = np.linalg.eigh(K)
    q = vecs[[3, 0, 1, 2], np.argmax(vals)]
    if q[0] < 0:
        q *= -1
    return q


def rotz(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


W = np.array([1.0, 2.0, 3.0, 4.0])


def quat_dot(x):
    return mat2quat(rotz(x[0])) @ W


@pytest.mark.parametrize("t", [0.5, -1.1])
def test_repeated_eigenvalues_forward_mode_refuses_are_answered_by_reverse_mode(t, monkeypatch):
    # q = (cos t/2, 0, 0, sin t/2): K's three smaller eigenvalues are equal, the largest is simple
    exact = -0.5 * np.sin(t / 2) * W[0] + 0.5 * np.cos(t / 2) * W[3]
    x = np.array([t])
    np.testing.assert_allclose(jacfwd(quat_dot, x), [exact], rtol=1e-9)
    np.testing.assert_allclose(derivative(lambda s: quat_dot(np.array([s])), t), exact, rtol=1e-9)
    np.testing.assert_allclose(jvp(quat_dot, (x,), (np.array([2.0]),))[1], 2.0 * exact, rtol=1e-9)
    monkeypatch.setattr(fwd_api, "AFTER_REFUSAL", [])
    with pytest.raises(NoDerivative):  # (forward mode alone refuses)
        jacfwd(quat_dot, x)


def round_trip(x):
    return float(str(x[0] * 2.0)) * x[1]


def test_where_both_modes_refuse_the_refusal_says_so():
    with pytest.raises(TextRoundTrip) as e:
        gradient(round_trip, X)
    assert any("forward mode, tried as well, refused too" in n for n in e.value.__notes__)
    with pytest.raises(TextRoundTrip) as e:
        jacfwd(round_trip, X)
    assert any("reverse mode, tried as well, refused too" in n for n in e.value.__notes__)


def test_many_inputs_are_not_taken_by_forward_mode():
    """Forward mode's gradient costs a pass per 16 inputs: past 64 numbers reverse mode's refusal stands."""
    def f(x):
        return spline_like(x[:2]) + x[2:].sum()
    x = np.concatenate([X, np.ones(70)])
    with pytest.raises(TextRoundTrip) as e:
        gradient(f, x)
    assert not getattr(e.value, "__notes__", None)
    np.testing.assert_allclose(gradient(f, x[:20])[0], fd.gradient(f, x[:20])[0], rtol=1e-6, atol=1e-8)


def test_second_derivatives_of_it():
    """hessian takes it too (the knots are constants: [[-sin(x0) k5, k4], [k4, 0]])."""
    knots = normalize(uniform_knots(3, 6))
    exact = [[-np.sin(X[0]) * knots[5], knots[4]], [knots[4], 0.0]]
    np.testing.assert_allclose(hessian(spline_like, X), exact, rtol=1e-12, atol=1e-15)


class Counted:
    def __init__(self, x):
        self.x = x
        self.n = 3  # (an int attribute of an object holding a differentiated value)


def _third(n):
    return float("{:.3f}".format(1.0 / n))


def test_an_int_passed_on_carries_no_derivative_in_reverse_mode(monkeypatch):
    """Reverse mode alone (no forward mode to ask): an int argument is a constant of the callee, whatever
    the activity analysis could prove of it; its text parsed back is no round trip of a derivative."""
    monkeypatch.setattr(ad_api, "BY_FORWARD", [])

    def f(x):
        return x * _third(Counted(x).n) + x * x

    assert gradient(f, 2.0) == (0.333 + 4.0,)



def test_forward_modes_nan_of_a_zero_tangent_times_an_infinite_partial_is_filled_by_reverse_mode(monkeypatch):
    """Along x1, x0 does not move, and x0 ** 0.5's infinite partial at 0 times its tangent 0 is NaN in
    forward mode; the partial in x1 is sqrt(x0) = 0 (reverse mode: no such product). thermofeel's mean radiant
    temperature at cossza = 1 (arcsin's partial at 1) is the same."""
    x = np.array([0.0, 2.0])
    with np.errstate(all="ignore"):
        j = jacfwd(lambda v: v[1] * v[0] ** 0.5, x)
        assert np.isinf(j[0]) and j[1] == 0.0
        k = jacfwd(lambda v: np.cos(np.arcsin(v[0])) * v[1] + v[1] ** 2, np.array([1.0, 2.0]))
        assert k[0] == -np.inf and k[1] == pytest.approx(4.0, rel=1e-12)  # (one-sided: -inf; 0 + 2 * 2)
        cone = jacfwd(lambda v: np.sqrt(v[0] ** 2 + v[1] ** 2), np.array([0.0, 0.0]))
        # (a cone's tip, NaN in both modes: the mean of the two sides' answers, as np.linalg.norm's and
        # np.hypot's at 0 are; a jump or a side outside the domain would leave the NaN)
        np.testing.assert_array_equal(cone, jacfwd(np.linalg.norm, np.array([0.0, 0.0])))
        assert np.isnan(jacfwd(lambda v: np.sqrt(v[0]) * 0.0 + v[1], np.array([0.0, 2.0]))[0])
        monkeypatch.setattr(fwd_api, "NAN_BY_REVERSE", [])
        assert np.isnan(jacfwd(lambda v: v[1] * v[0] ** 0.5, x)[1])  # (forward mode alone)
