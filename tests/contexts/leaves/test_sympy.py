"""sympy expressions are numbers to every engine (contexts.rules.leaves): numeric code never written for
sympy, run on symbols, has the symbolic derivative `sympy.diff` gives of its result; what cannot be
differentiated so (a method reading the expression's inside) is refused, never a Tangent of its fields."""

import pytest

sp = pytest.importorskip("sympy")

from contexts import derivative, gradient, hessian, jacfwd, pullback  # noqa: E402
from contexts.rules.registry import NoRuleError  # noqa: E402
from overdub.errors import OverdubError  # noqa: E402

x, y = sp.symbols("x y")


def horner(coefficients, t):
    r = 0
    for c in coefficients:
        r = r * t + c
    return r


def rational(t):
    return t ** 3 / (1 + t * t) - 2 * t


def special(t):
    return sp.sqrt(t) * sp.exp(-t) + sp.log(t ** 2 + 1) * sp.sin(t) / sp.cosh(t)


class Spring:
    def __init__(self, k):
        self.k = k

    def energy(self, t):
        return self.k * t ** 2 / 2 + sp.atan(t)


def through_object(t):
    return Spring(3 * t).energy(t)


def clamp_free_loop(t):
    total = t
    for _ in range(3):
        total = total * total / (1 + total)
    return total


CASES = {"horner": lambda t: horner([1, -2, 3, 5], t), "rational": rational, "special": special,
         "object": through_object, "loop": clamp_free_loop}


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_derivative_of_numeric_code_equals_sympy_diff(name, mode):
    f = CASES[name]
    got = gradient(f, x)[0] if mode == "reverse" else derivative(f, x)
    assert sp.simplify(got - sp.diff(f(x), x)) == 0


def test_two_symbols_and_pullback():
    f = lambda a, b: a * b ** 2 + sp.sin(a * b)  # noqa: E731
    ga, gb = gradient(f, x, y)
    assert sp.simplify(ga - sp.diff(f(x, y), x)) == 0 and sp.simplify(gb - sp.diff(f(x, y), y)) == 0
    value, back = pullback(lambda a: [a * a, sp.cos(a)], x)
    assert value == [x * x, sp.cos(x)]
    assert sp.simplify(back([2, 3])[0] - (4 * x - 3 * sp.sin(x))) == 0


def test_value_keeping_methods_pass_the_cotangent():
    assert sp.expand(gradient(lambda a: ((a + 1) ** 3).expand(), x)[0] - 3 * (x + 1) ** 2) == 0


def test_an_applied_undefined_function():
    g = sp.Function("g")
    got = gradient(lambda a: g(a ** 2), x)[0]
    assert sp.simplify(got.doit() - sp.diff(g(x ** 2), x).doit()) == 0


def test_exact_numbers_of_sympy_stay_exact():
    assert gradient(lambda a: 3 * a * a, sp.Rational(1, 3))[0] == 2
    assert gradient(lambda a: sp.sin(a) * 2, 0.5)[0] == pytest.approx(2 * float(sp.cos(0.5)))


def test_methods_reading_the_inside_are_refused_not_differentiated():
    with pytest.raises(NoRuleError, match="subs"):
        gradient(lambda a: (a ** 2).subs(y, 2), x)
    with pytest.raises(OverdubError, match=r"\.args"):
        gradient(lambda a: (a ** 2 + a).args[0], x)


def test_the_structural_tangent_never_comes_back():
    """The bug this fixes: a Symbol was taken as an object of fields, its gradient a Tangent of them."""
    for got in (gradient(lambda a: a * a, x)[0], pullback(lambda a: a * a, x)[1](1)[0]):
        assert got == 2 * x


def test_forward_mode_seeds_with_sympys_one():
    """Forward mode seeded a Symbol with the float 1.0: the derivative came out with float coefficients
    (`3.0*x**2 + 1.0*cos(x)`); now its own 1, as in reverse mode: exact coefficients."""
    f = CASES["special"]
    got = derivative(f, x)
    assert not got.atoms(sp.Float)
    assert sp.expand(got - sp.diff(f(x), x)) == 0
    assert derivative(lambda t: t ** 3 + sp.sin(t), x) == 3 * x ** 2 + sp.cos(x)


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("inner", ["reverse", "forward"])
def test_hessian_equals_sympys_second_derivative(name, inner):
    # (forward over reverse runs sympy's rules on duals over expressions: the partials' own derivatives
    # were dropped, `x * sin(x)` had the Hessian cos(x))
    f = CASES[name]
    got = hessian(f, x, inner=inner)
    assert sp.simplify(got - sp.diff(f(x), x, 2)) == 0
    assert not got.atoms(sp.Float)  # (exact: seeded with sympy's one, not 1.0)


def test_hessian_and_jacobian_in_two_symbols():
    f = lambda v: sp.exp(v[0]) * v[1] ** 2 + sp.sin(v[0] * v[1])  # noqa: E731
    expr = f([x, y])
    h = hessian(f, [x, y])
    for i, a in enumerate((x, y)):
        for j, b in enumerate((x, y)):
            assert sp.simplify(h[i, j] - sp.diff(expr, a, b)) == 0
    jac = jacfwd(lambda v: [sp.sin(v[0]) * v[1], v[0] / v[1]], [x, y])
    assert jac.shape == (2, 2)
    assert sp.simplify(jac[0, 0] - y * sp.cos(x)) == 0 and sp.simplify(jac[1, 1] + x / y ** 2) == 0
