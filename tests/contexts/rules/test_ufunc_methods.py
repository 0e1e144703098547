"""`ufunc.reduce` and `ufunc.outer` in every mode, against central differences.

`np.add.reduce(a)` reduces along axis 0 (np.sum's default is None): forward mode's dual arrays took it for
np.sum with numpy's arguments, so a 2-d dual was summed whole (value and tangent wrong, silently: 12.0 for
4.2 below), and `np.add.accumulate` flattened it (np.cumsum's). Now `add`, `multiply`, `maximum` and `minimum`'s reduce are np.sum's, np.prod's, np.max's and
np.min's rules with axis 0 by default, and any differentiable ufunc's `outer(a, b)` is the ufunc's own rule
on `a` reshaped; both had no reverse rule (refused)."""

import numpy as np
import pytest

from contexts import hessian, jvp
from contexts.rules.numpy._util import UnsupportedCase
from overdub.errors import OverdubError
from tests import fd
from tests.modes import ARRAY_MODES, assert_array_gradient

X = np.array([0.3, -0.7, 1.2, 0.5, 0.9, -0.2])
W = np.array([1.0, 2.0, 3.0])

FUNCTIONS = {
    "add.reduce (axis 0)": lambda a: (np.add.reduce(a.reshape(2, 3)) * W).sum(),
    "add.reduce axis=1": lambda a: np.add.reduce(a.reshape(2, 3), axis=1) @ [1.0, -2.0],
    "add.reduce axis=None": lambda a: np.add.reduce(a.reshape(2, 3), axis=None) ** 2,
    "multiply.reduce": lambda a: np.multiply.reduce(a.reshape(2, 3)) @ W,
    "maximum.reduce": lambda a: np.maximum.reduce(a.reshape(3, 2), axis=1) @ W,
    "minimum.reduce keepdims": lambda a: (np.minimum.reduce(a.reshape(2, 3), axis=1, keepdims=True) * [[1.0], [2.0]]).sum(),
    "multiply.outer": lambda a: (np.multiply.outer(a[:2], a[2:5]) * np.arange(6.0).reshape(2, 3)).sum(),
    "subtract.outer": lambda a: (np.subtract.outer(a[:3], a[3:]) ** 2).sum(),
    "hypot.outer": lambda a: np.hypot.outer(a[:2], a[2:4]).sum(),
    "power.outer": lambda a: np.power.outer(np.abs(a[:2]) + 0.5, a[2:4]).sum(),
    "add.accumulate (axis 0)": lambda a: (np.add.accumulate(a.reshape(2, 3)) ** 2 * W).sum(),
    "multiply.accumulate axis=1": lambda a: (np.multiply.accumulate(a.reshape(2, 3), axis=1) * W).sum(),
}

@pytest.mark.parametrize("mode", ARRAY_MODES)
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_right(name, mode):
    assert_array_gradient(mode, FUNCTIONS[name], X)


@pytest.mark.parametrize("name", ["add.reduce (axis 0)", "multiply.reduce", "multiply.outer", "subtract.outer"])
def test_hessian(name):
    f = FUNCTIONS[name]
    np.testing.assert_allclose(hessian(f, X), fd.hessian(f, X, matrix=True), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["add.reduce (axis 0)", "add.accumulate (axis 0)"])
def test_the_value_is_the_ufuncs(name):
    """On dual arrays (forward over reverse, and forward mode's dual path): accumulate flattened them
    too (np.cumsum's axis is None)."""
    from contexts.forward.dual import Dual, Tag
    a = X.reshape(2, 3)
    method = np.add.reduce if "reduce" in name else np.add.accumulate
    d = method(Dual(a, np.ones_like(a), Tag()))
    np.testing.assert_allclose(d.primal, method(a), rtol=1e-12)
    np.testing.assert_allclose(d.tangent, method(np.ones_like(a)), rtol=1e-12)
    f = FUNCTIONS[name]
    y, _ = jvp(f, (X,), (np.ones_like(X),))
    assert y == pytest.approx(f(X), rel=1e-12)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_other_reductions_refused(mode):
    # (np.hypot.reduce is differentiated since session 32, by the fold of its partials; np.arctan2's reduce
    # is no left fold of it)
    with pytest.raises((UnsupportedCase, OverdubError)):
        assert_array_gradient(mode, lambda a: np.arctan2.reduce(a), X)
    with pytest.raises((UnsupportedCase, OverdubError)):
        assert_array_gradient(mode, lambda a: np.add.reduce(a, initial=1.0), X)
