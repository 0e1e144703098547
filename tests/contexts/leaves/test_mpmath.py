"""mpmath numbers are numbers to every engine, and mpmath's functions have rules whose derivatives are
computed in mpmath: a gradient at 50 digits is right to 50 digits (closed forms, compared at 1e-45)."""

import pytest

mpmath = pytest.importorskip("mpmath")

from contexts import derivative, gradient, hessian  # noqa: E402

TOL = mpmath.mpf("1e-45")


@pytest.fixture(autouse=True)
def fifty_digits():
    with mpmath.workdps(50):
        yield


def f(t):
    return mpmath.exp(t) * mpmath.sin(t) + mpmath.erf(t) * mpmath.log(1 + t * t)


def df(t):
    return (mpmath.exp(t) * (mpmath.sin(t) + mpmath.cos(t))
            + 2 / mpmath.sqrt(mpmath.pi) * mpmath.exp(-t * t) * mpmath.log(1 + t * t)
            + mpmath.erf(t) * 2 * t / (1 + t * t))


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_precision_is_kept(mode):
    t = mpmath.mpf("0.7")
    got = gradient(f, t)[0] if mode == "reverse" else derivative(f, t)
    assert isinstance(got, mpmath.mpf)
    assert abs(got - df(t)) < TOL


@pytest.mark.parametrize("name, closed", [
    ("gamma", lambda t: mpmath.gamma(t) * mpmath.digamma(t)),
    ("loggamma", mpmath.digamma),
    ("sqrt", lambda t: 1 / (2 * mpmath.sqrt(t))),
    ("atan", lambda t: 1 / (1 + t * t)),
    ("tanh", lambda t: 1 - mpmath.tanh(t) ** 2),
    ("log10", lambda t: 1 / (t * mpmath.ln(10))),
    ("erfc", lambda t: -2 / mpmath.sqrt(mpmath.pi) * mpmath.exp(-t * t)),
    ("cot", lambda t: -1 / mpmath.sin(t) ** 2),
])
def test_each_function(name, closed):
    fn = getattr(mpmath, name)
    t = mpmath.mpf("1.3")
    assert abs(gradient(fn, t)[0] - closed(t)) < TOL
    assert abs(derivative(fn, t) - closed(t)) < TOL


def test_two_arguments_and_hessian():
    a, b = mpmath.mpf("1.5"), mpmath.mpf("0.25")
    ga, gb = gradient(lambda u, v: mpmath.power(u, v) + mpmath.atan2(v, u), a, b)
    assert abs(ga - (b * a ** (b - 1) - b / (a * a + b * b))) < TOL
    assert abs(gb - (a ** b * mpmath.log(a) + a / (a * a + b * b))) < TOL
    h = hessian(lambda u: mpmath.exp(u) * u, a)
    assert abs(h - mpmath.exp(a) * (a + 2)) < TOL


def test_float_converted_to_mpmath_keeps_the_float_kind():
    got = gradient(lambda t: mpmath.exp(mpmath.mpf(t)), 0.5)[0]
    assert type(got) is float and got == pytest.approx(float(mpmath.exp(0.5)), rel=1e-15)


def test_complex_output_refused_as_for_complex():
    from contexts.ad.api import NonScalarError
    with pytest.raises(NonScalarError):
        gradient(lambda t: mpmath.exp(t), mpmath.mpc(1, 1))


@pytest.mark.parametrize("fn, second", [
    (lambda u: mpmath.sin(u) * u, lambda u: 2 * mpmath.cos(u) - u * mpmath.sin(u)),
    (lambda u: mpmath.exp(u) * mpmath.gamma(u),
     lambda u: mpmath.exp(u) * mpmath.gamma(u) * ((1 + mpmath.digamma(u)) ** 2 + mpmath.psi(1, u))),
    (lambda u: mpmath.loggamma(u) * mpmath.atan(u), lambda u: mpmath.psi(1, u) * mpmath.atan(u)
     + 2 * mpmath.digamma(u) / (1 + u * u) - 2 * u * mpmath.loggamma(u) / (1 + u * u) ** 2)],
    ids=["x sin x", "exp gamma", "loggamma atan"])
@pytest.mark.parametrize("inner", ["reverse", "forward"])
def test_hessian_keeps_every_digit(fn, second, inner):
    # (a dual over an mpf took numpy's cos, which has no loop for it, and digamma's float series: 1e-13)
    with mpmath.workdps(50):
        a = mpmath.mpf("1.5")
        h = hessian(fn, a, inner=inner)
        assert isinstance(h, mpmath.mpf)
        assert abs(h - second(a)) < mpmath.mpf(10) ** -45
