"""pint's quantities (scalars and arrays) in every mode, against central differences on the magnitudes."""

import warnings

import numpy as np
import pytest

pint = pytest.importorskip("pint")

from contexts import NonScalarError, derivative, gradient, hessian, jacfwd, jacobian, jvp, pullback, vjp  # noqa: E402
from tests import fd  # noqa: E402

ureg = pint.UnitRegistry()
X = np.array([0.7, 1.2, -0.4])


def by_unit(x):  # the example: a plain array given units by a multiplication
    q = x * ureg.meter
    return float(np.sum(q * q).magnitude)


def by_constructor(x):
    q = ureg.Quantity(x, "m")
    return (np.sin(q / ureg.km) * q).to("cm").magnitude.sum()


def by_division(x):
    v = x * ureg.m / ureg.second
    d = (v * (2.0 * ureg.second)).to("mm")
    return float(np.sqrt(np.mean(d.magnitude ** 2)) + np.exp(x[0] * ureg.dimensionless).magnitude)


def vector(x):
    q = ureg.Quantity(x, "km")
    return (q ** 2 / ureg.m).to("m").magnitude


FUNCTIONS = [by_unit, by_constructor, by_division]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_gradient_of_array_given_units(f):
    (g,) = gradient(f, X)
    assert type(g) is np.ndarray
    np.testing.assert_allclose(g, fd.gradient(f, X)[0], rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_forward_of_array_given_units(f):
    expected = fd.gradient(f, X)[0]
    np.testing.assert_allclose(jacfwd(f, X), expected, rtol=1e-6, atol=1e-8)
    t = np.array([0.3, -1.0, 2.0])
    _, dy = jvp(f, (X,), (t,))
    assert dy == pytest.approx(float(expected @ t), rel=1e-6)


def test_hessian_of_array_given_units():
    np.testing.assert_allclose(hessian(by_constructor, X), fd.hessian(by_constructor, X, matrix=True),
                               rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_jacobian_of_quantity_valued_function(mode):
    J = jacobian(vector, X, mode=mode)
    np.testing.assert_allclose(J, fd.jacobian(vector, X, matrix=True), rtol=1e-6)


def test_scalars_every_mode():
    def f(x):
        return ((x * ureg.meter) ** 2 / ureg.cm ** 2).to("").magnitude * np.cos(x)

    expected = fd.derivative(f, 0.7)
    assert gradient(f, 0.7)[0] == pytest.approx(expected, rel=1e-6)
    assert derivative(f, 0.7) == pytest.approx(expected, rel=1e-6)
    assert hessian(f, 0.7) == pytest.approx(fd.hessian(f, 0.7), rel=1e-4)


def test_gradient_wrt_a_quantity_is_the_magnitudes():
    """With respect to a Quantity input, the gradient is its magnitude's (a cotangent of its field)."""
    q = ureg.Quantity(X, "m")

    def f(q):
        return float(np.sum((q * q).to("cm ** 2")).magnitude)

    (g,) = gradient(f, q)
    grad = getattr(g, "_magnitude", g)
    np.testing.assert_allclose(np.asarray(grad, dtype=float), fd.gradient(lambda m: f(ureg.Quantity(m, "m")), X)[0],
                               rtol=1e-6)


# -- Quantities returned: before, `gradient` seeded a returned Quantity with the number 1, which its
# fields' cotangent dropped (silently zero for an array magnitude; a crash for a float one)

def energy(x):
    v = x * ureg.m / ureg.s
    return (0.5 * (2.0 * ureg.kg) * v ** 2).sum()


def test_gradient_of_a_returned_quantity_has_its_units():
    (g,) = gradient(energy, X)
    assert isinstance(g, ureg.Quantity) and g.units == ureg.kg * ureg.m ** 2 / ureg.s ** 2
    np.testing.assert_allclose(g.magnitude, fd.gradient(lambda x: energy(x).magnitude, X)[0], rtol=1e-6)
    assert derivative(lambda t: energy(X * t), 1.0).units == g.units  # forward mode agrees


def test_gradient_with_respect_to_a_quantity_of_a_quantity():
    """d(3 q²)/dq for q in metres is 6 q in metres, as forward mode says."""
    q = ureg.Quantity(np.array([1.0, 2.0]), "m")

    def f(q):
        return (3.0 * q * q).sum()

    (g,) = gradient(f, q)
    assert g.units == ureg.m
    np.testing.assert_allclose(g.magnitude, [6.0, 12.0], rtol=1e-12)
    jf = jacfwd(f, q)
    assert jf.units == ureg.m
    np.testing.assert_allclose(jf.magnitude, [6.0, 12.0], rtol=1e-12)
    (gs,) = gradient(lambda q: 3.0 * q * q, ureg.Quantity(2.0, "m"))
    assert gs.units == ureg.m and gs.magnitude == pytest.approx(12.0)


def test_pullback_of_a_quantity_output():
    y, back = pullback(lambda x: np.sin(x) * ureg.N, X)
    (g,) = back(np.array([1.0, 2.0, 3.0]))
    assert g.units == ureg.N
    np.testing.assert_allclose(g.magnitude, np.cos(X) * [1.0, 2.0, 3.0], rtol=1e-12)
    (g,) = back(ureg.Quantity(np.array([1000.0, 0.0, 0.0]), "mN"))  # a Quantity cotangent: in y's units
    np.testing.assert_allclose(g.magnitude, np.cos(X) * [1.0, 0.0, 0.0], rtol=1e-12)


def test_gradient_of_a_quantity_of_many_values_refused():
    with pytest.raises(NonScalarError, match="Quantity"):
        gradient(lambda x: x * ureg.m, X)


def test_hessian_of_a_returned_quantity():
    H = hessian(lambda x: (x * ureg.m * x).sum() + x[0] * x[1] * ureg.m, X)
    np.testing.assert_allclose(getattr(H, "magnitude", H), 2 * np.eye(3) + np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]]),
                               rtol=1e-12)


@pytest.mark.parametrize("shape", ["list", "tuple", "dict"])
def test_vjp_of_quantities_in_a_list_tuple_or_dict(shape):
    # (each Quantity's float cotangent was taken as a number's and lost: 0 / metre, silently)
    q = ureg.Quantity(1.37, "m")
    pack = {"list": lambda a, b: [a, b], "tuple": lambda a, b: (a, b), "dict": lambda a, b: {"a": a, "b": b}}[shape]
    f = lambda x: pack(x * x, 3.0 * x * x)  # noqa: E731
    (g,) = vjp(f, (q,), pack(1.0, -3.0))[1]
    expected = fd.derivative(lambda m: (m * m - 3.0 * 3.0 * m * m), 1.37)
    assert g.units == ureg.m and g.magnitude == pytest.approx(expected, rel=1e-6)


def test_vjp_of_quantities_of_different_units_refused():
    q = ureg.Quantity(1.37, "m")
    with pytest.raises(NonScalarError, match="different units"):
        vjp(lambda x: [x * x, x], (q,), [1.0, 1.0])
    (g,) = vjp(lambda x: [x * x, x], (q,), [1.0, 0.0])[1]  # (a zero cotangent: that output left out)
    assert g.units == ureg.m and g.magnitude == pytest.approx(2 * 1.37)


def test_reverse_jacobian_of_quantities():
    q = ureg.Quantity(1.37, "m")
    j = jacobian(lambda x: [x * x, 3.0 * x * x], q)
    assert j.units == ureg.m
    np.testing.assert_allclose(j.magnitude, [fd.derivative(lambda m: m * m, 1.37),
                                             fd.derivative(lambda m: 3 * m * m, 1.37)], rtol=1e-6)
    qa = ureg.Quantity(np.array([1.0, 2.0]), "m")
    ja = jacobian(lambda x: 2.0 * x * x, qa)
    assert ja.units == ureg.m
    np.testing.assert_allclose(ja.magnitude, fd.jacobian(lambda m: 2.0 * m * m, np.array([1.0, 2.0])), rtol=1e-6)


def horner_in_joules(x):
    acc = ureg.Quantity(2.0, "J/m**2")
    acc = acc * x + ureg.Quantity(4.0, "J/m")
    return acc * x + ureg.Quantity(-5.0, "J")


def test_forward_modes_with_constants_in_units():
    # (x was seeded as a dual of the Quantity, whose units pint's arithmetic then dropped: a tangent in
    # J/m**2 added to one in J/m, DimensionalityError; jacfwd's result had the units 1/m)
    q = ureg.Quantity(1.37, "m")
    expected = fd.derivative(lambda m: 2.0 * m * m + 4.0 * m - 5.0, 1.37)
    for got in (derivative(horner_in_joules, q), jacfwd(horner_in_joules, q),
                gradient(horner_in_joules, q)[0], jacobian(horner_in_joules, q)):
        assert got.units == ureg.J / ureg.m and got.magnitude == pytest.approx(expected, rel=1e-6)
    y, dy = jvp(horner_in_joules, (q,), (ureg.Quantity(10.0, "cm"),))
    assert dy.units == ureg.J and dy.magnitude == pytest.approx(0.1 * expected, rel=1e-6)
    h = hessian(lambda x: x * x + 3 * ureg.Quantity(1.0, "m") * x, q)
    assert h.dimensionless and h.magnitude == pytest.approx(2.0)
    qa = ureg.Quantity(np.array([1.0, 2.0]), "m")
    j = jacfwd(lambda x: 2.0 * x * x, qa)
    assert j.units == ureg.m
    np.testing.assert_allclose(j.magnitude, fd.jacobian(lambda m: 2.0 * m * m, np.array([1.0, 2.0])), rtol=1e-6)


def test_vjp_of_a_list_of_quantities_with_an_array_of_cotangents():
    # (an ndarray cotangent for a list output was not taken apart per Quantity: 0 / metre, silently)
    q = ureg.Quantity(1.37, "m")
    (g,) = vjp(lambda x: [x * x, 3.0 * x * x], (q,), np.array([1.0, -3.0]))[1]
    assert g.units == ureg.m and g.magnitude == pytest.approx(2 * 1.37 - 3 * 6 * 1.37, rel=1e-12)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_a_conversion_read_after_an_operator_filled_its_cache(mode):
    """`90 deg - (x rad).to('deg')`: pint's `-` (run natively in reverse mode's forward pass) fills the
    Quantity's `_dimensionality` cache, a unit container, read later by recorded code: refused as a lost lazy
    cache (metpy's wind_direction, heat_index; sweep H); units carry no derivative (a constant type)."""
    def f(x):
        return float((90.0 * ureg.deg - (x * ureg.rad).to("deg")).m) + float(((x * ureg.km) / (2.0 * ureg.hour)).to("m/s").m)
    got = gradient(f, 1.7) if mode == "reverse" else derivative(f, 1.7)
    assert float(np.ravel(got)[0]) == pytest.approx(fd.gradient(f, 1.7)[0], rel=1e-8)
