"""The test suites' one way to ask a mode for a scalar function's gradient and accept a refusal:

    from tests.modes import gradient_in, assert_right_or_refused

`gradient_in(mode, f, *args)`: reverse mode's `gradient`, or forward mode's `derivative` along each
argument in turn (scalar arguments). `assert_right_or_refused(mode, f, *args)`: the gradient equals
central differences (tests/fd.py), or the mode refused with an OverdubError; returns whether it refused.
`assert_array_gradient(mode, f, x)`: a scalar function of one array, by `gradient` ("reverse"), `jacfwd`
("forward") or `jvp` along a direction ("jvp"), against central differences. `assert_scalar_modes(f, x)`: a
scalar function of a float by `gradient`, `derivative` and (optionally) `hessian`, against central
differences (the second derivative against differences of forward mode's first).
"""

from __future__ import annotations

import numpy as np

__all__ = ["MODES", "ARRAY_MODES", "gradient_in", "assert_right_or_refused", "assert_array_gradient",
           "assert_scalar_modes"]

MODES = ("reverse", "forward")


def gradient_in(mode: str, f, *args) -> tuple:
    from contexts import derivative, gradient
    if mode == "reverse":
        return gradient(f, *args)
    return tuple(derivative(lambda t, i=i: f(*[a + t if j == i else a for j, a in enumerate(args)]), 0.0)
                 for i in range(len(args)))


def assert_right_or_refused(mode: str, f, *args, rtol: float = 1e-6, atol: float = 1e-9) -> bool:
    from overdub.errors import OverdubError

    from tests import fd
    try:
        got = gradient_in(mode, f, *args)
    except OverdubError:
        return True
    np.testing.assert_allclose(np.array(got, dtype=float), np.array(fd.gradient(f, *args), dtype=float),
                               rtol=rtol, atol=atol)
    return False


ARRAY_MODES = ("reverse", "forward", "jvp")


def assert_array_gradient(mode: str, f, x, rtol: float = 1e-6, atol: float = 1e-8) -> None:
    from contexts import gradient, jacfwd, jvp

    from tests import fd
    want = fd.gradient(f, x)[0]
    if mode == "jvp":
        direction = np.linspace(0.5, 1.5, np.size(x)).reshape(np.shape(x))
        got, want = jvp(f, (x,), (direction,))[1], np.sum(want * direction)
    else:
        got = gradient(f, x)[0] if mode == "reverse" else jacfwd(f, x)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def assert_scalar_modes(f, x: float, rtol: float = 1e-6, second: bool = True, hrtol: float = 1e-5,
                        hatol: float = 1e-6) -> None:
    from contexts import ADContext, derivative, gradient, hessian

    from tests import fd
    want = fd.derivative(f, x)
    with ADContext():
        assert abs(gradient(f, x)[0] - want) <= rtol * abs(want) + 1e-12, (gradient(f, x)[0], want)
    assert abs(derivative(f, x) - want) <= rtol * abs(want) + 1e-12, (derivative(f, x), want)
    if second:
        h = float(hessian(f, x))
        wanted = fd.derivative(lambda u: derivative(f, u), x)
        assert abs(h - wanted) <= hrtol * abs(wanted) + hatol, (h, wanted)


def assert_refused_in_reverse(f, x: float, error=None, match: str | None = None, rtol: float = 1e-6) -> None:
    """Forward mode's derivative of scalar f at x matches finite differences, and reverse mode's gradient
    is refused (`error`, an OverdubError by default, its message matching `match`): the refusal that stands
    where reverse mode would otherwise be silently wrong."""
    import pytest

    from contexts import ADContext, derivative, gradient
    from overdub.errors import OverdubError

    from tests import fd
    want = fd.derivative(f, x)
    assert abs(derivative(f, x) - want) <= rtol * abs(want) + 1e-12, (derivative(f, x), want)
    with ADContext(), pytest.raises(error or OverdubError, match=match):
        gradient(f, x)
