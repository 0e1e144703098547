"""`x = f(x)` in the tangent twin: a callee that may change its argument in place hands the argument's
tangent back, and the caller wrote it to the name, which by then held f's result. einops' `tensor =
_reduce_axes(tensor, ...)` so returned the unreduced tangent of the transposed input: jvp silently wrong
(shape (3, 2) for a result of shape (3,)). Against central differences."""

import numpy as np
import pytest

from contexts import derivative, jacfwd, jvp
from tests import fd


class _Backend:
    def reduce(self, x, operation, axes):
        return getattr(x, operation)(axis=axes)

    def transpose(self, x, axes):
        return x.transpose(axes)


def _reduce_axes(tensor, reduction_type, reduced_axes, backend):
    if callable(reduction_type):  # the twin cannot know that this callable leaves tensor alone
        return reduction_type(tensor, tuple(reduced_axes))
    return backend.reduce(tensor, reduction_type, tuple(reduced_axes))


def _apply(backend, tensor, reduction_type, axes):
    tensor = backend.transpose(tensor, [1, 0])
    tensor = _reduce_axes(tensor, reduction_type, [1], backend)  # the name rebound to the result
    return tensor


def _scale_in_place(x, k):
    x *= k  # changes its argument: the caller's other names see it
    return x.sum()


def _alias(a):
    t = a * 1.0
    u = t
    t = _scale_in_place(t, 3.0)  # t rebound; u is the array changed in place
    return u * t


X = np.array([0.3, 0.5, 0.7, 1.1, 1.3, 0.2])
T = np.linspace(0.3, 1.1, 6)
FUNCTIONS = {
    "positional": lambda a: _apply(_Backend(), a.reshape(2, 3), "sum", ()),
    "callable": lambda a: _apply(_Backend(), a.reshape(2, 3), np.sum, ()),
    "alias": _alias,
}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_rebound_name_keeps_the_results_tangent(name):
    f = FUNCTIONS[name]
    y, dy = jvp(f, (X.copy(),), (T.copy(),))
    np.testing.assert_allclose(dy, fd.directional(f, (X.copy(),), (T.copy(),)), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(jacfwd(f, X.copy()), fd.jacobian(f, X.copy()), rtol=1e-7, atol=1e-9)


def test_scalar():
    g = lambda s: float(_apply(_Backend(), np.array([[s, 2.0 * s], [s * s, 1.0]]), "sum", ()).sum() * s)  # noqa: E731
    assert derivative(g, 0.7) == pytest.approx(fd.derivative(g, 0.7), rel=1e-7)
