"""Numbers keep their kind through every mode: a list of Fractions through jacfwd and hessian (exact
closed forms), float32 through hessian; a number type registered by the user is a leaf; the domains of
sympy and mpmath load when those packages are imported, not with contexts."""

import subprocess
import sys
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from contexts import gradient, hessian, jacfwd, jacobian, jvp
from contexts.rules.leaves import Scalar, kind_of, register_scalar


def test_fraction_list_through_jacfwd_and_hessian_exactly():
    x = [Fraction(1, 3), Fraction(2)]
    f = lambda v: v[0] * v[0] * v[1] + v[1] / v[0]  # noqa: E731
    h = hessian(f, x)
    a, b = x
    want = [[2 * b + 2 * b / a ** 3, 2 * a - 1 / a ** 2], [2 * a - 1 / a ** 2, 0]]
    assert h.dtype == object and all(type(h[i, j]) in (Fraction, int) for i in range(2) for j in range(2))
    assert h.tolist() == want
    j = jacfwd(lambda v: [v[0] * v[1], v[0] / v[1]], x)
    assert j.tolist() == [[b, a], [1 / b, -a / b ** 2]]


def test_decimal_list_through_jacfwd():
    x = [Decimal("1.5"), Decimal("0.25")]
    j = jacfwd(lambda v: v[0] * v[0] * v[1], x)
    assert j.tolist() == [2 * x[0] * x[1], x[0] * x[0]] and all(type(e) is Decimal for e in j)


def test_float32_through_hessian():
    x = np.array([1.0, 2.0], np.float32)
    h = hessian(lambda v: (v * v * v).sum() + v[0] * v[1], x)
    assert h.dtype == np.float32
    np.testing.assert_allclose(h, [[6.0, 1.0], [1.0, 12.0]], rtol=1e-6)


def test_float32_through_jvp_and_a_reverse_jacobian_of_a_list():
    # (the tangent was made float64 by jvp's seed, a list output's cotangents by jacobian's)
    x = np.array([1.5, 0.5, 2.0], np.float32)
    y, dy = jvp(lambda v: (v * v).sum(), (x,), (np.ones(3, np.float32),))
    assert np.asarray(dy).dtype == np.float32 and float(dy) == pytest.approx(8.0, rel=1e-6)
    j = jacobian(lambda s: [s * s, s * s * s + 1], np.float32(1.5))
    assert j.dtype == np.float32
    np.testing.assert_allclose(j, [3.0, 6.75], rtol=1e-6)


class Q:
    """A user's number type whose arithmetic is Python code (unregistered, reverse mode would differentiate
    its methods and return a Tangent of its field)."""

    __slots__ = ("v",)

    def __init__(self, v):
        self.v = float(v)

    def __mul__(self, other):
        return Q(self.v * (other.v if isinstance(other, Q) else other))

    __rmul__ = __mul__

    def __add__(self, other):
        return Q(self.v + (other.v if isinstance(other, Q) else other))

    __radd__ = __add__

    def __eq__(self, other):
        return isinstance(other, Q) and self.v == other.v

    __hash__ = None


def test_a_registered_type_is_a_leaf_with_its_own_one():
    register_scalar(Q, name="q", one=lambda v: Q(1.0), zero=lambda v: Q(0.0))
    assert isinstance(Q(2.0), Scalar) and kind_of(Q(2.0)).name == "q"
    got = gradient(lambda v: v * v * 3 + v, Q(2.0))[0]  # d/dv (3 v^2 + v) = 6 v + 1
    assert got == Q(13.0)


def test_register_scalar_takes_a_class():
    with pytest.raises(TypeError, match="class"):
        register_scalar(Q(1.0), name="bad")


@pytest.mark.parametrize("package, probe", [("mpmath", "mpmath.exp"), ("sympy", "sympy.Expr.expand")])
def test_domain_loads_with_its_package_not_before(package, probe):
    code = (f"import sys, contexts; from contexts.rules import registry; assert '{package}' not in sys.modules; "
            f"import {package}; import {probe.split('.')[0]}; assert registry.get({probe}) is not None; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "ok", out.stderr[-2000:]


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_decimal_methods_in_decimal_arithmetic(mode):
    from contexts import derivative
    f = lambda v: v.sqrt() * v.ln() + v.exp() / v.log10()  # noqa: E731
    x = Decimal(4)
    got = gradient(f, x)[0] if mode == "reverse" else derivative(f, x)
    ln10 = Decimal(10).ln()
    want = (x.ln() / (2 * x.sqrt()) + x.sqrt() / x
            + x.exp() / x.log10() - x.exp() / (x.log10() ** 2 * x * ln10))
    assert type(got) is Decimal and abs(got - want) < Decimal("1e-24")
