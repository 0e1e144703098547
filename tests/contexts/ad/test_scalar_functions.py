"""Every differentiable function of math/cmath and the builtins, reached through user code."""

import cmath
import math

import pytest

from contexts import gradient

from tests.fd import assert_grad_fd

UNARY = ["sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "atanh", "exp",
         "expm1", "log", "log1p", "log2", "log10", "sqrt", "erf", "erfc", "gamma", "lgamma", "fabs",
         "degrees", "radians"]


@pytest.mark.parametrize("name", UNARY)
def test_math_unary(name):
    fn = getattr(math, name)
    assert_grad_fd(lambda x: fn(x) * x, 0.4)


@pytest.mark.parametrize("name", [n for n in ["exp2", "cbrt"] if hasattr(math, n)])
def test_math_new_in_311(name):
    fn = getattr(math, name)
    assert_grad_fd(lambda x: fn(x) + x, 0.6)


def test_math_multi_argument():
    assert_grad_fd(lambda x, b: math.log(x, b), 3.0, 2.5)
    assert_grad_fd(lambda y, x: math.atan2(y, x), 0.3, -0.8)
    assert_grad_fd(lambda a, b, c: math.hypot(a, b, c), 1.0, 2.0, 0.5)
    assert_grad_fd(lambda x, y: math.pow(x, y), 1.7, 2.3)
    assert_grad_fd(lambda a, b: math.fsum([a, a * b, b]), 1.5, 0.2)
    assert_grad_fd(lambda a, b: math.prod([a, b, 3.0]), 1.5, 0.2)
    assert_grad_fd(lambda a, b: math.copysign(a, b) + math.fmod(a * 7.0, b), 1.3, 0.4)
    assert_grad_fd(lambda a: math.ldexp(a, 3), 1.3)


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
                                  "cosh", "tanh", "asinh", "acosh", "atanh", "log10"])
def test_cmath_holomorphic(name):
    fn = getattr(cmath, name)
    assert_grad_fd(lambda z: abs(fn(z)) ** 2, 0.3 + 0.4j)


def test_cmath_non_holomorphic():
    assert_grad_fd(lambda z: cmath.phase(z) + abs(z), 0.3 + 0.4j)
    assert_grad_fd(lambda r, p: cmath.rect(r, p).real * 2 + cmath.rect(r, p).imag, 1.2, 0.4)
    assert_grad_fd(lambda z: cmath.polar(z)[0] * cmath.polar(z)[1], 0.3 + 0.4j)


def test_builtins():
    assert_grad_fd(lambda a, b: abs(a - b) + max(a, b) * min(a, b, 3.0), 1.3, 0.4)
    assert_grad_fd(lambda a, b: max([a, b, 0.1]) + min((a, b)) + sum([a, b], 2.0), 1.3, 0.4)
    assert_grad_fd(lambda a, b: pow(a, b) + pow(a, 2), 1.3, 0.4)
    assert_grad_fd(lambda a: float(a) * 2 + complex(a, 1.0).real, 1.3)
    assert_grad_fd(lambda a: max([a, a * a, 0.5], key=lambda v: -v) + divmod(a * 10, 3.0)[1], 1.3)


def test_rounding_has_zero_gradient():
    f = lambda x: round(x) + math.floor(x) + math.ceil(x) + math.trunc(x) + int(x) + x
    assert gradient(f, 2.3) == (1.0,)


def test_comparisons_are_not_differentiated():
    assert gradient(lambda x: (x > 1.0) + (x == x) * 2.0 + x, 2.0) == (1.0,)
