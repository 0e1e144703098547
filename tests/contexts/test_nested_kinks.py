"""Kinks inside kinks, met exactly at their ties (session 59).

Each kink's rule takes, at its tie, the mean of its two slopes (abs at 0: 0; `np.maximum` at a tie: half each).
That is the derivative of a function with one kink, or with kinks side by side, as central differences give it;
it is not a chain rule for a kink inside another's result: `abs(np.minimum(w, 0))` at 0 has slopes -1 and 0
(central differences -0.5) where the two conventions multiplied gave 0, and `abs(w - max(w, 0)) - max(w, 0)`,
which is -w, gave -0.5. scoringrules' `crps_uniform` with the observation at the lower bound was -0.5 for -1.

Forward mode counts the kinks a run meets moving at their ties and judges a second from the two sides of the
point; reverse mode notes each for forward mode to tell (a zero cotangent, abs's at 0, skips the rules below
it, so reverse mode cannot count them itself). Checked against central differences, on fixed cases and on
generated nests of abs, max, min, clip, fabs and hypot.
"""

import importlib.util
import math
import random

import numpy as np
import pytest

from contexts import ADContext, derivative, gradient, hessian, jacfwd
from overdub.errors import OverdubError


def _central(f, x, h=1e-6):
    return (float(f(x + h)) - float(f(x - h))) / (2 * h)


def _crps_uniform(x):  # (scoringrules' closed form, without its mass terms)
    obs, lo, hi = x[0], x[1], x[2]
    w = (obs - lo) / (hi - lo)
    F = np.minimum(np.maximum(w, 0.0), 1.0)
    return (hi - lo) * (np.abs(w - F) + F ** 2 - F + 1.0 / 3.0)


NESTED = {
    "abs of np.minimum": lambda w: np.abs(np.minimum(w, 0.0)),
    "abs of min": lambda w: abs(min(w, 0.0)),
    "-w through two kinks": lambda w: np.abs(w - np.maximum(w, 0.0)) - np.maximum(w, 0.0),
    "-w through builtin kinks": lambda w: abs(w - max(w, 0.0)) - max(w, 0.0),
    "clip inside abs": lambda w: abs(np.clip(w, 0.0, 1.0) - w),
    "max of max": lambda w: max(max(w, 0.0), 0.0),
    "math.fabs of min": lambda w: math.fabs(min(w, 0.0)),
    "math.hypot of min": lambda w: math.hypot(min(w, 0.0), 0.0),
    "np.hypot of np.minimum": lambda w: np.hypot(np.minimum(w, 0.0), 0.0),
    "abs of np.max of a tie": lambda w: abs(np.max(np.array([w, 0.0]))),
    "max of abs and w": lambda w: max(abs(w), w),
    "np.max of abs and w": lambda w: np.max(np.array([abs(w), w])),
    "array entries": lambda w: np.sum(np.abs(np.minimum(np.array([w, w + 1.0]), 0.0))),
}


@pytest.mark.parametrize("name", sorted(NESTED))
def test_a_kink_inside_a_kink_is_the_mean_of_the_two_sides(name):
    f = NESTED[name]
    want = _central(f, 0.0)
    assert abs(float(gradient(f, 0.0)[0]) - want) < 1e-6
    assert abs(float(derivative(f, 0.0)) - want) < 1e-6
    assert abs(float(jacfwd(lambda v: f(v[0]), np.array([0.0]))[0]) - want) < 1e-6


def test_crps_uniform_at_its_lower_bound():
    x = np.array([0.0, 0.0, 1.0])
    want = np.array([(float(_crps_uniform(x + 1e-6 * e)) - float(_crps_uniform(x - 1e-6 * e))) / 2e-6
                     for e in np.eye(3)])
    assert abs(want[0] + 1.0) < 1e-5  # (differentiable there: -1 on both sides)
    np.testing.assert_allclose(gradient(_crps_uniform, x)[0], want, atol=1e-6)
    np.testing.assert_allclose(jacfwd(_crps_uniform, x), want, atol=1e-6)
    with ADContext():
        np.testing.assert_allclose(gradient(_crps_uniform, x)[0], want, atol=1e-6)


def test_kinks_side_by_side_keep_their_conventions():
    # (independent kinks: each rule's mean of its slopes is the derivative's, judged or not)
    f = lambda t: max(t, -1.0) * 2.0 + min(t, -1.0, 3.0) + max([t, -1.0, -1.5])  # noqa: E731
    assert abs(float(gradient(f, -1.0)[0]) - 2.0) < 1e-6
    assert abs(float(derivative(f, -1.0)) - 2.0) < 1e-6
    assert abs(float(gradient(lambda v: abs(v[0]) + abs(v[1]), np.zeros(2))[0][1])) < 1e-9


def test_a_hessian_smooth_through_two_ties():
    f = lambda t: (max(t, 3.0) + min(t, 3.0)) * t  # noqa: E731  ((t + 3) t)
    assert float(hessian(f, 3.0, inner="reverse")) == pytest.approx(2.0, abs=1e-6)


def test_no_derivative_is_refused_not_answered():
    # clip(1 + w - |v|, 0, 1) at 0: its partials from the sides are 0.5 and 0, but along (1, 1) the mean of
    # the two slopes is 1 -- no derivative; refused, where two random directions once met the same pieces
    def f(x):
        return np.clip((x[0] + 1.0) - np.abs(x[1]), 0.0, 1.0)
    for run in (lambda: gradient(f, np.zeros(2))[0], lambda: jacfwd(f, np.zeros(2))):
        try:
            got = np.asarray(run(), dtype=float)
        except OverdubError:
            continue
        np.testing.assert_allclose(got, [0.5, 0.0], atol=1e-6)


# -- generated nests ---------------------------------------------------------------------------------------

_ONE = ["abs({})", "np.abs({})", "max({}, 0.0)", "min({}, 0.0)", "np.maximum({}, 0.0)", "np.minimum({}, 0.0)",
        "np.clip({}, 0.0, 1.0)", "math.fabs({})", "(2.0 * {})", "(-{})", "np.sin({})", "({} ** 2)"]
_TWO = ["({} + {})", "({} - {})", "max({}, {})", "np.minimum({}, {})", "np.hypot({}, {})"]


def _nest(rng, depth, leaves):
    if depth == 0 or rng.random() < 0.15:
        return rng.choice(leaves)
    if rng.random() < 0.7:
        return rng.choice(_ONE).format(_nest(rng, depth - 1, leaves))
    return rng.choice(_TWO).format(_nest(rng, depth - 1, leaves), _nest(rng, depth - 1, leaves))


def _module(tmp_path, name, body):
    path = tmp_path / f"{name}.py"
    path.write_text(f"import math\nimport numpy as np\n\n\ndef f(x):\n{body}\n")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


@pytest.mark.parametrize("seed", [1, 2])
def test_generated_nests_of_one_input(tmp_path, seed):
    rng = random.Random(seed)
    wrong = []
    for k in range(40):
        src = _nest(rng, 4, ["x"])
        f = _module(tmp_path, f"one_{seed}_{k}", f"    return {src}")
        want = _central(f, 0.0)
        for mode, run in (("gradient", lambda: gradient(f, 0.0)[0]), ("derivative", lambda: derivative(f, 0.0))):
            got = float(np.asarray(run()))  # (one input: its two sides always give the mean)
            if abs(got - want) > 1e-5 * (1 + abs(want)):
                wrong.append((mode, src, got, want))
    assert not wrong


@pytest.mark.parametrize("seed", [3])
def test_generated_nests_of_two_inputs_are_right_or_refused(tmp_path, seed):
    rng = random.Random(seed)
    wrong = []
    for k in range(30):
        src = _nest(rng, 4, ["w", "v", "(w - v)", "(w + 1.0)"])
        f = _module(tmp_path, f"two_{seed}_{k}", f"    w, v = x[0], x[1]\n    return {src}")
        x = np.zeros(2)
        want = np.array([(float(f(x + 1e-6 * e)) - float(f(x - 1e-6 * e))) / 2e-6 for e in np.eye(2)])
        for mode, run in (("gradient", lambda: gradient(f, x)[0]), ("jacfwd", lambda: jacfwd(f, x))):
            try:
                got = np.asarray(run(), dtype=float)
            except OverdubError:
                continue  # (no derivative there: the sides' means differ along two directions)
            if not np.allclose(got, want, rtol=1e-5, atol=1e-5):
                wrong.append((mode, src, got, want))
    assert not wrong
